//! Outputs of `evalsim analyze` and `evalsim fit`: tidy CSV tables, JSON, Markdown, figures and
//! the text printed on stdout, all from a finished [`Analysis`] or [`FitResult`]. Nothing here
//! computes a statistic; percentages are the same numbers times 100.
//!
//! One file per job: `tables` (CSV), `figures`, `markdown` (`report.md`) and `text`
//! (stdout); this module keeps the shared number formats and names and assembles the output files.
//! May depend on [`crate::analyze`]'s result types and the other `report` modules, never on
//! `sim` or `exact`.
use crate::analyze::interval::{IntervalBasis, IntervalMethod};
use crate::analyze::{Analysis, CurvePoint, FitResult, MajRule, ModelAnalysis};
use crate::report::plot::{self, Figure};
use crate::report::tables::num;
use crate::report::{json, Artifact, ReportError};

mod compare_figure;
mod figures;
pub mod leaderboard;
mod markdown;
mod tables;
mod text;

pub use compare_figure::comparison_figure;
pub use figures::{curves_figure, fit_curves_figure, fit_figure, solve_rates_figure};
pub use markdown::analysis_markdown;
pub use tables::{
    comparison_csv, fit_counts_csv, fit_csv, model_csv, COMPARISON_COLUMNS, MODEL_COLUMNS,
};
pub use text::{analysis_text, harness_text};

/// The name of a maj@k rule as the command line spells it.
pub fn rule_name(rule: MajRule) -> &'static str {
    match rule {
        MajRule::Random => "random",
        MajRule::Strict => "strict",
        MajRule::Absolute => "absolute",
        MajRule::First => "first",
    }
}

/// A file-name-safe version of a model name (`openai/gpt-4o` -> `openai_gpt-4o`).
pub fn file_safe(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '+') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let s = s.trim_matches('.').to_string();
    if s.is_empty() {
        "model".to_string()
    } else {
        s
    }
}

/// Per-model table file names, made unique.
fn model_files(a: &Analysis) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for m in &a.models {
        let base = format!("model-{}", file_safe(&m.summary.model));
        let mut name = base.clone();
        let mut i = 2;
        while names.contains(&name) {
            name = format!("{base}-{i}");
            i += 1;
        }
        names.push(name);
    }
    names
}

fn opt(x: Option<f64>) -> String {
    x.map(num).unwrap_or_default()
}

// Scores, SEs and interval ends to one decimal, keeping the digits rounding would hide
// ("0.040", not "0.0"; "99.96", not "100.0"): see `crate::report::keep_digits`.
fn pts(x: f64) -> String {
    crate::report::keep_digits(100.0 * x, 1)
}

fn signed_pts(x: f64) -> String {
    format!("{:+.1}", 100.0 * x)
}

fn opt_pts(x: Option<f64>) -> String {
    x.map_or("-".to_string(), pts)
}

fn ci_pct(ci: Option<[f64; 2]>) -> String {
    ci.map_or("-".to_string(), |[lo, hi]| {
        format!("{}–{}", pts(lo), pts(hi))
    })
}

/// The mark on an interval that is the exact bound (every problem scores the same), not the
/// Wilson interval: its end at 0% or 100% is where the data put it, and the notes say why.
pub const EXACT_BOUND_MARK: &str = "†";

/// Whether an interval of this basis is the exact bound (every problem scores the same).
fn exact_bound(basis: Option<IntervalBasis>) -> bool {
    basis.is_some_and(|b| b != IntervalBasis::Spread)
}

/// [`ci_pct`] with [`EXACT_BOUND_MARK`] when the interval is the exact bound.
fn ci_cell(ci: Option<[f64; 2]>, basis: Option<IntervalBasis>) -> String {
    let mark = if ci.is_some() && exact_bound(basis) {
        EXACT_BOUND_MARK
    } else {
        ""
    };
    format!("{}{mark}", ci_pct(ci))
}

/// What the numbers of an interval use, in words: every interval label says it (the construction,
/// the SE its effective sample size comes from, and the quantile).
pub fn interval_label(method: IntervalMethod, clusters: Option<usize>) -> String {
    match (method, clusters) {
        (IntervalMethod::PairedScore, None) => {
            "Tango-type score interval (variance re-estimated at each hypothesised difference), normal quantile".to_string()
        }
        (IntervalMethod::PairedScore, Some(c)) => format!(
            "Tango-type score interval at the effective sample size of the bias-reduced clustered paired variance (CR2, {c} clusters), t quantile with Bell-McCaffrey degrees of freedom (at most {})",
            c - 1
        ),
        (_, Some(c)) => format!(
            "Wilson score interval, effective sample size from the bias-reduced clustered variance (CR2, {c} clusters), t quantile with Bell-McCaffrey degrees of freedom (at most {})",
            c - 1
        ),
        (_, None) => "Wilson score interval, effective sample size from the question SE, t quantile with adaptive degrees of freedom (N-1 for scores inside [0, 1], normal for 0/1 scores)".to_string(),
    }
}

/// The short name of an interval's construction as written in CSV files.
pub fn method_name(method: IntervalMethod, clusters: Option<usize>) -> &'static str {
    match (method, clusters.is_some()) {
        (IntervalMethod::PairedScore, false) => "paired-score",
        (IntervalMethod::PairedScore, true) => "paired-score-clustered",
        (_, false) => "wilson",
        (_, true) => "wilson-clustered",
    }
}

/// The name of an interval basis as written in CSV files.
pub fn basis_name(basis: IntervalBasis) -> &'static str {
    match basis {
        IntervalBasis::Spread => "spread",
        IntervalBasis::AllMax => "all-max",
        IntervalBasis::AllMin => "all-min",
        IntervalBasis::AllEqual => "all-equal",
    }
}

/// The curves of one model with their metric names and vote rules.
fn curves(m: &ModelAnalysis) -> Vec<(&'static str, &'static str, &[CurvePoint])> {
    let s = &m.summary;
    let mut out: Vec<(&'static str, &'static str, &[CurvePoint])> = vec![
        ("pass@k", "", s.pass_at_k.as_slice()),
        ("pass^k", "", s.pass_hat_k.as_slice()),
    ];
    if let Some(c) = &s.maj_at_k {
        out.push(("maj@k", rule_name(s.maj_rule), c.as_slice()));
    }
    if let Some(c) = &s.maj_first {
        out.push(("maj@k-first", "first", c.as_slice()));
    }
    if let Some(p) = &s.mean_score {
        out.push(("mean_score", "", std::slice::from_ref(p)));
    }
    out
}

/// The inputs in a title: the one input, or the first and how many more.
fn input_names_short(a: &Analysis) -> String {
    match a.sources.as_slice() {
        [] => String::new(),
        [one] => one.source.clone(),
        [first, rest @ ..] => format!("{} and {} more", first.source, rest.len()),
    }
}

fn input_names(a: &Analysis) -> String {
    a.sources
        .iter()
        .map(|s| s.source.as_str())
        .collect::<Vec<_>>()
        .join(" vs ")
}

fn figure_artifacts(
    stem: &str,
    fig: &Figure,
    raster: plot::Raster,
    out: &mut Vec<Artifact>,
    files: &mut Vec<String>,
) -> Result<(), ReportError> {
    let (png, svg) = plot::render_both(fig, raster)?;
    out.extend(Artifact::figure(stem, png, svg));
    files.push(format!("{stem}.png"));
    Ok(())
}

/// Every output file of `analyze`: per-model CSVs, `comparison.csv` or the leaderboard's
/// `leaderboard.csv` and `pairs.csv`, `summary.json`, figures and `report.md`.
///
/// # Errors
/// [`ReportError`] when a figure or JSON document cannot be produced.
pub fn analysis_artifacts(
    a: &Analysis,
    figures: Option<plot::Raster>,
) -> Result<Vec<Artifact>, ReportError> {
    let mut out = Vec::new();
    let names = model_files(a);
    for (m, name) in a.models.iter().zip(&names) {
        out.push(Artifact {
            file: format!("{name}.csv"),
            bytes: model_csv(a, m).into_bytes(),
        });
    }
    if let Some(c) = comparison_csv(a) {
        out.push(Artifact {
            file: "comparison.csv".into(),
            bytes: c.into_bytes(),
        });
    }
    out.push(Artifact {
        file: "summary.json".into(),
        bytes: json("summary.json", a)?,
    });
    let mut figure_files = Vec::new();
    if let Some(b) = &a.leaderboard {
        leaderboard::leaderboard_artifacts(a, b, figures, &mut out, &mut figure_files)?;
    }
    if let Some(raster) = figures.filter(|_| leaderboard::per_model_figures(a)) {
        let figures = [
            Some(("curves", curves_figure(a))),
            Some(("solve-rates", solve_rates_figure(a))),
            comparison_figure(a).map(|f| ("comparison", f)),
        ];
        for (stem, fig) in figures.into_iter().flatten() {
            figure_artifacts(stem, &fig, raster, &mut out, &mut figure_files)?;
        }
    }
    out.push(Artifact {
        file: "report.md".into(),
        bytes: analysis_markdown(a, &names, &figure_files).into_bytes(),
    });
    Ok(out)
}

/// Every output file of `fit`: `scenario.toml`, `fit.csv`, `fit-counts.csv`, `fit.json`, the
/// count figure and the curves figure.
///
/// # Errors
/// [`ReportError`] when a figure or the JSON cannot be produced.
pub fn fit_artifacts(
    fit: &FitResult,
    seed: u64,
    figures: Option<plot::Raster>,
) -> Result<Vec<Artifact>, ReportError> {
    let mut out = vec![
        Artifact {
            file: "scenario.toml".into(),
            bytes: fit.scenario_toml.clone().into_bytes(),
        },
        Artifact {
            file: "fit.csv".into(),
            bytes: fit_csv(fit, seed).into_bytes(),
        },
        Artifact {
            file: "fit-counts.csv".into(),
            bytes: fit_counts_csv(fit).into_bytes(),
        },
        Artifact {
            file: "fit.json".into(),
            bytes: json("fit.json", fit)?,
        },
    ];
    if let Some(raster) = figures {
        let mut files = Vec::new();
        figure_artifacts(
            "fit-counts",
            &fit_figure(fit, seed),
            raster,
            &mut out,
            &mut files,
        )?;
        figure_artifacts(
            "fit-curves",
            &fit_curves_figure(fit, seed),
            raster,
            &mut out,
            &mut files,
        )?;
    }
    Ok(out)
}

/// What `fit` prints on stderr: each parameter with its interval or its refusal, the
/// correlations, and how the refused parameters were handled.
pub fn fit_text(fit: &FitResult) -> String {
    let mut out = format!(
        "fit of {} model{} on {} problems from {} (ln L = {:.3})\n",
        fit.models.len(),
        if fit.models.len() == 1 { "" } else { "s" },
        fit.problems,
        fit.source,
        fit.log_likelihood
    );
    for q in &fit.parameters {
        out += &format!("  {}: {}\n", q.label, q.describe());
    }
    for m in &fit.models {
        if let Some(a) = &m.attractor {
            out += &format!(
                "  attractor share of `{}`: {:.3}{}\n",
                m.name,
                a.share,
                a.se.map_or(String::new(), |se| format!(" +/- {se:.3} SE"))
            );
        }
    }
    for c in &fit.correlations {
        out += &format!(
            "  correlation of `{}` and `{}` per-problem logits: {:.3}{}\n",
            c.a,
            c.b,
            c.value,
            c.se.map_or(String::new(), |se| format!(" +/- {se:.3} SE"))
        );
    }
    for g in &fit.goodness {
        out += &format!("  goodness of fit of `{}`: {}\n", g.model, g.describe());
    }
    out += &fit_warnings(fit);
    out
}

/// One `warning:` line per refused parameter (printed even with --quiet).
pub fn fit_warnings(fit: &FitResult) -> String {
    let mut out = String::new();
    for q in &fit.parameters {
        if let crate::analyze::Status::Refused {
            fallback,
            diagnosis,
        } = &q.status
        {
            out += &format!(
                "warning: {diagnosis}. REFUSED: {} is not estimated; the scenario holds it at the fallback {fallback} (commented there)\n",
                q.label
            );
        }
    }
    for w in &fit.warnings {
        out += &format!("warning: {w}\n");
    }
    out
}
