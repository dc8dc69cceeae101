//! Outputs of `evalsim analyze` and `evalsim fit`: tidy CSV tables, JSON, Markdown, figures and
//! the text printed on stdout, all from a finished [`Analysis`] or [`FitResult`]. Nothing here
//! computes a statistic; percentages are the same numbers times 100.
use plotters::prelude::SeriesLabelPosition;

use super::plot::{self, Band, Bars, Figure, Line, Markers, Panel, Scale};
use super::tables::{num, Csv};
use super::{json, Artifact, ReportError};
use crate::analyze::interval::IntervalBasis;
use crate::analyze::summary::BINARY_ONLY;
use crate::analyze::{Analysis, Comparison, CurvePoint, FitResult, MajRule, ModelAnalysis};

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

fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

fn pts(x: f64) -> String {
    format!("{:.1}", 100.0 * x)
}

fn signed_pts(x: f64) -> String {
    format!("{:+.1}", 100.0 * x)
}

fn opt_pts(x: Option<f64>) -> String {
    x.map_or("-".to_string(), pts)
}

fn ci_pct(ci: Option<[f64; 2]>) -> String {
    ci.map_or("-".to_string(), |[lo, hi]| {
        format!("{:.1}–{:.1}", 100.0 * lo, 100.0 * hi)
    })
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

/// One line per curve point whose interval rests on an exact bound (every problem solved, or
/// none), so the reader knows why it is one-sided.
fn boundary_notes(m: &ModelAnalysis) -> String {
    let n = m.summary.problems;
    let mut t = String::new();
    for (metric, _, points) in curves(m) {
        for (basis, what) in [
            (IntervalBasis::AllMax, "every problem scores 1"),
            (IntervalBasis::AllMin, "every problem scores 0"),
        ] {
            let ks: Vec<String> = points
                .iter()
                .filter(|p| p.ci_basis == Some(basis))
                .map(|p| p.k.to_string())
                .collect();
            if !ks.is_empty() {
                t += &format!(
                    "  note: {metric} at k = {}: {what}; the 95% interval is the exact bound after {n} problems without an exception (1 - 0.05^(1/N), about 3/N: the rule of three), not a point\n",
                    ks.join(", ")
                );
            }
        }
    }
    t
}

/// A note when every paired difference is the same (e.g. all 0).
fn diff_note(name: &str, d: &crate::analyze::DiffEstimate, problems: usize) -> String {
    if d.ci_basis == IntervalBasis::Spread {
        return String::new();
    }
    format!(
        "  note: {name}: every problem has the same difference; the 95% interval is the exact bound on how often a problem could differ after {problems} problems (1 - 0.05^(1/N), about 3/N), not a point\n"
    )
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

/// Columns of the per-model CSV.
pub const MODEL_COLUMNS: [&str; 16] = [
    "source",
    "model",
    "seed",
    "metric",
    "vote_rule",
    "k",
    "estimate",
    "question_se",
    "sampling_se",
    "clustered_se",
    "ci_low",
    "ci_high",
    "plug_in",
    "ci_basis",
    "bootstrap_low",
    "bootstrap_high",
];

/// The tidy table of one model: one row per (metric, k).
pub fn model_csv(a: &Analysis, m: &ModelAnalysis) -> String {
    let mut csv = Csv::new(&MODEL_COLUMNS);
    for (metric, rule, points) in curves(m) {
        for p in points {
            let [lo, hi] = p.ci95.map_or([None, None], |[l, h]| [Some(l), Some(h)]);
            let [blo, bhi] = p
                .bootstrap_ci
                .map_or([None, None], |[l, h]| [Some(l), Some(h)]);
            csv.row([
                m.source.clone(),
                m.summary.model.clone(),
                a.seed.to_string(),
                metric.to_string(),
                rule.to_string(),
                p.k.to_string(),
                num(p.estimate),
                opt(p.question_se),
                opt(p.sampling_se),
                opt(p.clustered_se),
                opt(lo),
                opt(hi),
                opt(p.plug_in),
                p.ci_basis
                    .map_or(String::new(), |b| basis_name(b).to_string()),
                opt(blo),
                opt(bhi),
            ]);
        }
    }
    csv.finish()
}

/// Columns of `comparison.csv`.
pub const COMPARISON_COLUMNS: [&str; 22] = [
    "source_a",
    "model_a",
    "source_b",
    "model_b",
    "seed",
    "metric",
    "vote_rule",
    "k",
    "a",
    "b",
    "difference",
    "se",
    "question_se",
    "sampling_se",
    "ci_low",
    "ci_high",
    "common_problems",
    "sign_test_b_better",
    "sign_test_a_better",
    "sign_test_p",
    "reversal_probability",
    "ci_basis",
];

/// `comparison.csv`: pass@1 and maj@k differences B - A; `None` without a comparison.
pub fn comparison_csv(a: &Analysis) -> Option<String> {
    let c = a.comparison.as_ref()?;
    let source_of = |name: &str| {
        a.models
            .iter()
            .find(|m| m.summary.model == name)
            .map(|m| m.source.clone())
            .unwrap_or_default()
    };
    let mut csv = Csv::new(&COMPARISON_COLUMNS);
    let rule = rule_name(a.options.summary.maj_rule);
    let mut rows = vec![("pass@1", "", &c.pass_at_1)];
    if let Some(d) = &c.maj_at_k {
        rows.push(("maj@k", rule, d));
    }
    for (metric, rule, d) in rows {
        csv.row([
            source_of(&c.model_a),
            c.model_a.clone(),
            source_of(&c.model_b),
            c.model_b.clone(),
            a.seed.to_string(),
            metric.to_string(),
            rule.to_string(),
            d.k.to_string(),
            num(d.a),
            num(d.b),
            num(d.difference),
            num(d.se),
            num(d.question_se),
            opt(d.sampling_se),
            num(d.ci95[0]),
            num(d.ci95[1]),
            c.common_problems.to_string(),
            c.sign_test.b_better.to_string(),
            c.sign_test.a_better.to_string(),
            num(c.sign_test.p_value),
            opt(c.reversal_probability),
            basis_name(d.ci_basis).to_string(),
        ]);
    }
    Some(csv.finish())
}

fn input_names(a: &Analysis) -> String {
    a.sources
        .iter()
        .map(|s| s.source.as_str())
        .collect::<Vec<_>>()
        .join(" vs ")
}

fn k_ticks(kmin: f64, kmax: f64) -> Vec<f64> {
    let mut ticks = Vec::new();
    let mut t = 1.0;
    while t <= kmax * 1.01 {
        if t >= kmin * 0.99 {
            ticks.push(t);
        }
        t *= 2.0;
    }
    // The largest k is always labelled (n = 3 has k = 3, not a power of two).
    if ticks.last().is_none_or(|&t| t < kmax * 0.99) {
        ticks.push(kmax);
    }
    ticks
}

/// pass@k, pass^k and maj@k against k, one panel per model, with 95% interval bands.
pub fn curves_figure(a: &Analysis) -> Figure {
    let panels: Vec<Panel> = a
        .models
        .iter()
        .map(|m| {
            let s = &m.summary;
            let mut p = Panel::new(
                format!(
                    "{}: {} problems, n = {}{}, {} {}",
                    s.model,
                    s.problems,
                    s.n_min,
                    if s.n_max > s.n_min {
                        format!("–{}", s.n_max)
                    } else {
                        String::new()
                    },
                    if s.mean_score.is_some() {
                        "mean score"
                    } else {
                        "pass@1"
                    },
                    pct(s.pass_at_1)
                ),
                "k (samples per problem, log2 scale)",
                "benchmark score (%)",
            );
            p.x_scale = Scale::Log2;
            let kmin = s.pass_at_k.first().map_or(1.0, |q| q.k as f64);
            let kmax = s.pass_at_k.last().map_or(1.0, |q| q.k as f64);
            p.x_range = (kmin / 1.25, kmax * 1.25);
            p.x_ticks = Some(k_ticks(kmin, kmax));
            p.y_range = (0.0, 100.0);
            // Partial credit leaves pass@k and pass^k empty: no legend entry for them.
            for (metric, rule, points) in curves(m).into_iter().filter(|c| !c.2.is_empty()) {
                let (color, label) = match metric {
                    "pass@k" => (0, "pass@k (unbiased)".to_string()),
                    "pass^k" => (1, "pass^k".to_string()),
                    "maj@k" => (2, format!("maj@k ({rule} ties, exact over subsets)")),
                    "mean_score" => (0, "mean score (partial credit)".to_string()),
                    _ => (3, "maj@k of the first k answers".to_string()),
                };
                let line: Vec<(f64, f64)> = points
                    .iter()
                    .map(|q| (q.k as f64, 100.0 * q.estimate))
                    .collect();
                let band: Vec<(f64, f64, f64)> = points
                    .iter()
                    .filter_map(|q| q.ci95.map(|[lo, hi]| (q.k as f64, 100.0 * lo, 100.0 * hi)))
                    .collect();
                if metric != "maj@k-first" && band.len() == points.len() && points.len() > 1 {
                    p.bands.push(Band {
                        label: None,
                        color,
                        points: band,
                    });
                } else if !band.is_empty() && metric != "maj@k-first" {
                    p.markers.push(Markers {
                        label: None,
                        color,
                        points: band
                            .iter()
                            .zip(&line)
                            .map(|(&(x, lo, hi), &(_, y))| (x, y, lo, hi))
                            .collect(),
                    });
                }
                if points.len() == 1 {
                    p.markers.push(Markers {
                        label: Some(label.clone()),
                        color,
                        points: line.iter().map(|&(x, y)| (x, y, y, y)).collect(),
                    });
                } else {
                    p.lines.push(Line {
                        label: Some(label),
                        color,
                        dashed: metric == "maj@k-first",
                        points: line,
                    });
                }
            }
            let plug: Vec<(f64, f64)> = s
                .pass_at_k
                .iter()
                .filter_map(|q| q.plug_in.map(|v| (q.k as f64, 100.0 * v)))
                .collect();
            if plug.len() > 1 {
                p.lines.push(Line {
                    label: Some("plug-in 1-(1-c/n)^k (biased low)".to_string()),
                    color: 7,
                    dashed: true,
                    points: plug,
                });
            }
            p.legend = least_crowded(&p);
            p
        })
        .collect();
    let columns = panels.len().clamp(1, 2);
    let rows = panels.len().div_ceil(columns).max(1) as u32;
    Figure {
        title: format!(
            "pass@k and maj@k against k · {} · bands: 95% interval (Wilson, effective size, t quantile) · seed {}",
            input_names(a),
            a.seed
        ),
        panels,
        columns,
        size: (if columns > 1 { 1600 } else { 1000 }, 80 + 600 * rows),
    }
}

/// The legend corner (or side) of a panel that covers the fewest drawn points: lines and band
/// edges are sampled along their length in axis coordinates. Layout only.
fn least_crowded(p: &Panel) -> SeriesLabelPosition {
    let ax = |v: f64, scale: Scale, (lo, hi): (f64, f64)| {
        let t = |x: f64| match scale {
            Scale::Linear => x,
            Scale::Log2 => x.max(1e-300).log2(),
            Scale::Log10 => x.max(1e-300).log10(),
        };
        (t(v) - t(lo)) / (t(hi) - t(lo))
    };
    let mut curves: Vec<(f64, Vec<(f64, f64)>)> = Vec::new();
    for l in &p.lines {
        curves.push((1.0, l.points.clone()));
    }
    for b in &p.bands {
        curves.push((0.5, b.points.iter().map(|&(x, lo, _)| (x, lo)).collect()));
        curves.push((0.5, b.points.iter().map(|&(x, _, hi)| (x, hi)).collect()));
    }
    let mut samples: Vec<(f64, f64, f64)> = Vec::new();
    for (w, pts) in &curves {
        let norm: Vec<(f64, f64)> = pts
            .iter()
            .map(|&(x, y)| (ax(x, p.x_scale, p.x_range), ax(y, p.y_scale, p.y_range)))
            .collect();
        for pair in norm.windows(2) {
            for i in 0..20 {
                let t = f64::from(i) / 20.0;
                samples.push((
                    *w,
                    pair[0].0 + t * (pair[1].0 - pair[0].0),
                    pair[0].1 + t * (pair[1].1 - pair[0].1),
                ));
            }
        }
    }
    let candidates = [
        (SeriesLabelPosition::LowerRight, (0.55, 1.0), (0.0, 0.3)),
        (SeriesLabelPosition::UpperLeft, (0.0, 0.45), (0.7, 1.0)),
        (SeriesLabelPosition::LowerLeft, (0.0, 0.45), (0.0, 0.3)),
        (SeriesLabelPosition::UpperRight, (0.55, 1.0), (0.7, 1.0)),
        (SeriesLabelPosition::MiddleRight, (0.55, 1.0), (0.35, 0.65)),
        (SeriesLabelPosition::MiddleLeft, (0.0, 0.45), (0.35, 0.65)),
    ];
    let mut best = (f64::INFINITY, SeriesLabelPosition::LowerRight);
    for (pos, (x0, x1), (y0, y1)) in candidates {
        let hits: f64 = samples
            .iter()
            .filter(|&&(_, x, y)| x >= x0 && x <= x1 && y >= y0 && y <= y1)
            .map(|s| s.0)
            .sum();
        if hits < best.0 {
            best = (hits, pos);
        }
    }
    best.1
}

/// Histogram of per-problem solve rates, one panel per model.
pub fn solve_rates_figure(a: &Analysis) -> Figure {
    let panels: Vec<Panel> = a
        .models
        .iter()
        .map(|m| {
            let h = &m.solve_rates;
            let mut p = Panel::new(
                format!(
                    "{}: {} problems; never solved {}, always solved {}",
                    m.summary.model, m.summary.problems, h.never_solved, h.always_solved
                ),
                "per-problem solve rate c/n",
                "problems",
            );
            let top = h.bins.iter().map(|b| b.problems).max().unwrap_or(1).max(1) as f64;
            let lo = h.bins.first().map_or(0.0, |b| b.low.min(0.0));
            let hi = h.bins.last().map_or(1.0, |b| b.high.max(1.0));
            p.x_range = (lo, hi);
            p.y_range = (0.0, top * 1.12);
            p.x_ticks = Some((0..=10).map(|i| f64::from(i) / 10.0).collect());
            p.y_integer = true;
            // One bin per count c (every problem has the same n): ticks at c/n, labelled so.
            let n = h.bins.len().saturating_sub(1);
            let one_per_count = (1..=20).contains(&n)
                && h.bins
                    .iter()
                    .enumerate()
                    .all(|(c, b)| (0.5 * (b.low + b.high) - c as f64 / n as f64).abs() < 1e-9);
            if one_per_count {
                let step = n.div_ceil(10);
                let cs: Vec<usize> = (0..=n).step_by(step).collect();
                p.x_ticks = Some(cs.iter().map(|&c| c as f64 / n as f64).collect());
                p.x_tick_labels = Some(cs.iter().map(|c| format!("{c}/{n}")).collect());
            }
            p.bars.push(Bars {
                label: None,
                color: 0,
                bars: h
                    .bins
                    .iter()
                    .map(|b| (b.low, b.high, b.problems as f64))
                    .collect(),
            });
            p
        })
        .collect();
    let columns = panels.len().clamp(1, 2);
    let rows = panels.len().div_ceil(columns).max(1) as u32;
    Figure {
        title: format!(
            "per-problem solve rates · {} · seed {}",
            input_names(a),
            a.seed
        ),
        panels,
        columns,
        size: (if columns > 1 { 1600 } else { 1000 }, 80 + 520 * rows),
    }
}

fn figure_artifacts(
    stem: &str,
    fig: &Figure,
    out: &mut Vec<Artifact>,
    files: &mut Vec<String>,
) -> Result<(), ReportError> {
    out.push(Artifact {
        file: format!("{stem}.png"),
        bytes: plot::render_png(fig)?,
    });
    out.push(Artifact {
        file: format!("{stem}.svg"),
        bytes: plot::render_svg(fig)?.into_bytes(),
    });
    files.push(format!("{stem}.png"));
    Ok(())
}

/// Every output file of `analyze`: per-model CSVs, `comparison.csv`, `summary.json`, figures and
/// `report.md`.
///
/// # Errors
/// [`ReportError`] when a figure or JSON document cannot be produced.
pub fn analysis_artifacts(a: &Analysis, figures: bool) -> Result<Vec<Artifact>, ReportError> {
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
    if figures {
        figure_artifacts("curves", &curves_figure(a), &mut out, &mut figure_files)?;
        figure_artifacts(
            "solve-rates",
            &solve_rates_figure(a),
            &mut out,
            &mut figure_files,
        )?;
    }
    out.push(Artifact {
        file: "report.md".into(),
        bytes: analysis_markdown(a, &names, &figure_files).into_bytes(),
    });
    Ok(out)
}

/// The k values shown in text: all when there are at most 8, else powers of two and the last.
fn shown(points: &[CurvePoint]) -> Vec<&CurvePoint> {
    if points.len() <= 8 {
        return points.iter().collect();
    }
    let last = points.len() - 1;
    points
        .iter()
        .enumerate()
        .filter(|(i, p)| p.k.is_power_of_two() || *i == last)
        .map(|(_, p)| p)
        .collect()
}

fn at_k(points: Option<&Vec<CurvePoint>>, k: usize) -> Option<&CurvePoint> {
    points.and_then(|c| c.iter().find(|p| p.k == k))
}

fn model_header(m: &ModelAnalysis) -> String {
    let s = &m.summary;
    let mut t = format!(
        "model `{}` ({}): {} problems, {} samples, n per problem {}..{}\n",
        s.model, m.source, s.problems, s.samples, s.n_min, s.n_max
    );
    let (label, p1) = match (&s.mean_score, s.pass_at_k.first()) {
        (Some(p), _) => ("mean score (partial credit)", p),
        (None, Some(p)) => ("pass@1 (avg@n)", p),
        (None, None) => return t,
    };
    t += &format!(
        "  {label} {}: question SE {} pts, sampling SE {} pts{}, 95% CI {} (bootstrap {})\n",
        pct(s.pass_at_1),
        opt_pts(p1.question_se),
        opt_pts(p1.sampling_se),
        p1.clustered_se
            .map_or(String::new(), |c| format!(", clustered SE {} pts", pts(c))),
        ci_pct(p1.ci95),
        ci_pct(p1.bootstrap_ci)
    );
    if s.mean_score.is_some() {
        t += &format!("  not available: {BINARY_ONLY}\n");
    }
    if let Some(tok) = &s.tokens {
        t += &format!(
            "  tokens: {:.0} per sample, {} per correct answer{}\n",
            tok.mean_tokens_per_sample,
            tok.tokens_per_correct
                .map_or("-".to_string(), |v| format!("{v:.0}")),
            match (tok.cap_tokens, tok.truncation_rate) {
                (Some(cap), Some(r)) =>
                    format!(", {} of samples at or above the cap {cap}", pct(r)),
                _ => String::new(),
            }
        );
    }
    t
}

/// The concise summary printed on stdout.
/// What each harness log said beside its samples, next to evalsim's values: the harness's own
/// aggregate (the cross-check), the log's epoch reducers, skipped samples, token totals and
/// warnings. Empty when no input carries any.
pub fn harness_text(a: &Analysis) -> String {
    let mut t = String::new();
    for s in &a.sources {
        let h = &s.harness;
        let pass1 = |model: &str| {
            a.models
                .iter()
                .find(|m| m.summary.model == model)
                .map(|m| m.summary.pass_at_1)
        };
        let partial = |model: &str| {
            a.models
                .iter()
                .any(|m| m.summary.model == model && m.summary.mean_score.is_some())
        };
        for agg in &h.aggregates {
            let ours = pass1(&agg.model);
            t += &format!(
                "harness check `{}`: {} = {:.6}{} against evalsim {} {}: {}\n",
                agg.model,
                agg.field,
                agg.value,
                agg.stderr
                    .map_or(String::new(), |e| format!(" (stderr {e:.6})")),
                if partial(&agg.model) {
                    "mean score"
                } else {
                    "pass@1"
                },
                ours.map_or("-".to_string(), |v| format!("{v:.6}")),
                match ours {
                    Some(v)
                        if (v - agg.value).abs() <= crate::analyze::analysis::HARNESS_AGREEMENT =>
                        "agree",
                    Some(_) => "DIFFER",
                    None => "no such model",
                }
            );
        }
        for (model, reducer, value) in &h.reductions {
            t += &format!(
                "log's epoch reducer `{reducer}` for `{model}`: mean over problems {value:.6}\n"
            );
        }
        for (model, tok) in &h.tokens {
            t += &format!(
                "tokens of `{model}` over every model call (model_usage): input {}, output {}, reasoning {}\n",
                tok.input, tok.output, tok.reasoning
            );
        }
        if h.skipped > 0 {
            t += &format!(
                "{}: {} sample(s) skipped (errored or unscored in the log)\n",
                s.source, h.skipped
            );
        }
        for w in h.warnings.iter().chain(&s.mismatches) {
            t += &format!("warning: {w}\n");
        }
    }
    t
}

pub fn analysis_text(a: &Analysis) -> String {
    let mut t = String::new();
    let rule = rule_name(a.options.summary.maj_rule);
    for m in &a.models {
        let s = &m.summary;
        t += &model_header(m);
        if s.mean_score.is_some() {
            // Partial credit: the header holds the mean score; there are no curves.
            t += &boundary_notes(m);
            continue;
        }
        let maj_label = if s.maj_at_k.is_some() {
            format!("maj@k {rule}")
        } else {
            "maj@k".to_string()
        };
        let mut rows: Vec<[String; 6]> = vec![[
            "k".into(),
            "pass@k [95% CI]".into(),
            "plug-in".into(),
            "pass^k".into(),
            maj_label,
            "maj@k first".into(),
        ]];
        for p in shown(&s.pass_at_k) {
            let hat = at_k(Some(&s.pass_hat_k), p.k);
            let maj = at_k(s.maj_at_k.as_ref(), p.k);
            let first = at_k(s.maj_first.as_ref(), p.k);
            rows.push([
                p.k.to_string(),
                format!("{} [{}]", pts(p.estimate), ci_pct(p.ci95)),
                opt_pts(p.plug_in),
                hat.map_or("-".to_string(), |q| pts(q.estimate)),
                maj.map_or("-".to_string(), |q| pts(q.estimate)),
                first.map_or("-".to_string(), |q| pts(q.estimate)),
            ]);
        }
        // Columns as wide as their widest cell ("100.0 [100.0-100.0]" included).
        let w: Vec<usize> = (0..6)
            .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
            .collect();
        for r in &rows {
            let mut line = String::from(" ");
            for (c, cell) in r.iter().enumerate() {
                line += &format!(" {cell:>width$}", width = w[c]);
            }
            t += &line;
            t.push('\n');
        }
        t += &boundary_notes(m);
    }
    t += &harness_text(a);
    if let Some(c) = &a.comparison {
        t += &format!(
            "comparison `{}` - `{}` on {} common problems:\n",
            c.model_b, c.model_a, c.common_problems
        );
        let mut rows = vec![("pass@1".to_string(), &c.pass_at_1)];
        if let Some(d) = &c.maj_at_k {
            rows.push((format!("maj@{} ({rule})", d.k), d));
        }
        for (name, d) in rows {
            t += &format!(
                "  {name}: {} pts, 95% CI [{}, {}]; paired SE {} (question part {}, sampling part {}, in quadrature)\n",
                signed_pts(d.difference),
                signed_pts(d.ci95[0]),
                signed_pts(d.ci95[1]),
                pts(d.se),
                pts(d.question_se),
                opt_pts(d.sampling_se),
            );
            t += &diff_note(&name, d, c.common_problems);
        }
        t += &format!(
            "  sign test: `{}` better on {}, `{}` on {}, {} ties, p = {}; a fresh rerun reverses the order with probability {}\n",
            c.model_b,
            c.sign_test.b_better,
            c.model_a,
            c.sign_test.a_better,
            c.sign_test.ties,
            p_value(c.sign_test.p_value),
            reversal_text(c, 3)
        );
    }
    t += &format!(
        "pts = percentage points; 95% CI = Wilson interval with effective sample size and t(N-1) quantile; seed {}, {} bootstrap resamples\n",
        a.seed, a.options.summary.bootstrap
    );
    t
}

/// A p-value with its significant digits: three decimals down to 0.001, then two significant
/// digits ("0.00021", not "0.000").
fn p_value(p: f64) -> String {
    if p >= 0.001 || p <= 0.0 || !p.is_finite() {
        format!("{p:.3}")
    } else {
        let digits = (1 - p.log10().floor() as i32).clamp(2, 17) as usize;
        format!("{p:.digits$}")
    }
}

/// The reversal probability with the number of simulated reruns and the seed, or why there is
/// none (no observed difference, or `--reruns 0`).
fn reversal_text(c: &Comparison, decimals: usize) -> String {
    if c.reruns == 0 {
        return "- (not simulated: --reruns 0)".to_string();
    }
    let p = c
        .reversal_probability
        .map_or("- (no difference)".to_string(), |r| {
            format!("{r:.decimals$}")
        });
    format!("{p} ({} simulated reruns, seed {})", c.reruns, c.seed)
}

fn md_curve_table(m: &ModelAnalysis, rule: &str) -> String {
    let s = &m.summary;
    if let Some(p) = &s.mean_score {
        return format!(
            "| metric | estimate | question SE | sampling SE | clustered SE | 95% CI | bootstrap 95% CI |\n|---|---:|---:|---:|---:|---:|---:|\n| mean score (partial credit) | {} | {} | {} | {} | {} | {} |\n\nNot available: {BINARY_ONLY}.\n\n",
            pts(p.estimate),
            opt_pts(p.question_se),
            opt_pts(p.sampling_se),
            opt_pts(p.clustered_se),
            ci_pct(p.ci95),
            ci_pct(p.bootstrap_ci),
        );
    }
    let mut md = format!(
        "| k | pass@k | question SE | sampling SE | clustered SE | 95% CI | plug-in | pass^k | maj@k ({rule}) | maj@k 95% CI | maj@k first |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    );
    for p in shown(&s.pass_at_k) {
        let maj = at_k(s.maj_at_k.as_ref(), p.k);
        md += &format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            p.k,
            pts(p.estimate),
            opt_pts(p.question_se),
            opt_pts(p.sampling_se),
            opt_pts(p.clustered_se),
            ci_pct(p.ci95),
            opt_pts(p.plug_in),
            at_k(Some(&s.pass_hat_k), p.k).map_or("-".to_string(), |q| pts(q.estimate)),
            maj.map_or("-".to_string(), |q| pts(q.estimate)),
            maj.map_or("-".to_string(), |q| ci_pct(q.ci95)),
            at_k(s.maj_first.as_ref(), p.k).map_or("-".to_string(), |q| pts(q.estimate)),
        );
    }
    md + "\n"
}

/// `report.md`: inputs, per-model tables, the comparison and the figures.
pub fn analysis_markdown(a: &Analysis, model_files: &[String], figures: &[String]) -> String {
    let rule = rule_name(a.options.summary.maj_rule);
    let mut md = format!(
        "# evalsim analyze: {}\n\nevalsim {}, seed {}, {} bootstrap resamples over problems. Numbers are percentages of the benchmark (mean over problems); SEs in percentage points. 95% CIs: Wilson score interval with effective sample size m(1-m)/SE^2 and a t(N-1) quantile, within [0, 100]; the exact bound when every problem scores the same.\n\n",
        input_names(a),
        a.version,
        a.seed,
        a.options.summary.bootstrap
    );
    md += "| input | format | models |\n|---|---|---|\n";
    for s in &a.sources {
        md += &format!(
            "| `{}` | {} | {} |\n",
            s.source,
            s.format.name(),
            s.models
                .iter()
                .map(|m| format!("`{m}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    md += "\n";
    let harness = harness_text(a);
    if !harness.is_empty() {
        md += &format!("## The harness's own numbers\n\n```\n{harness}```\n\n");
    }
    for f in figures {
        md += &format!("![{f}]({f})\n\n");
    }
    for (m, file) in a.models.iter().zip(model_files) {
        md += &format!("## {}\n\n", m.summary.model);
        md += &format!("```\n{}{}```\n\n", model_header(m), boundary_notes(m));
        md += &md_curve_table(m, rule);
        md += &format!("Every k: `{file}.csv`.\n\n");
    }
    if let Some(c) = &a.comparison {
        md += &format!(
            "## Comparison: `{}` - `{}`\n\n{} common problems ({} only in `{}`, {} only in `{}`).\n\n",
            c.model_b, c.model_a, c.common_problems, c.only_a, c.model_a, c.only_b, c.model_b
        );
        md += "| metric | A | B | B - A | paired SE | question part | sampling part | 95% CI |\n|---|---:|---:|---:|---:|---:|---:|---:|\n";
        let mut notes = String::new();
        let mut rows = vec![("pass@1".to_string(), &c.pass_at_1)];
        if let Some(d) = &c.maj_at_k {
            rows.push((format!("maj@{} ({rule})", d.k), d));
        }
        for (name, d) in rows {
            md += &format!(
                "| {name} | {} | {} | {} | {} | {} | {} | [{}, {}] |\n",
                pts(d.a),
                pts(d.b),
                signed_pts(d.difference),
                pts(d.se),
                pts(d.question_se),
                opt_pts(d.sampling_se),
                signed_pts(d.ci95[0]),
                signed_pts(d.ci95[1])
            );
            notes += &diff_note(&name, d, c.common_problems);
        }
        for note in notes.lines() {
            md += &format!("\n{}\n", note.trim().trim_start_matches("note: "));
        }
        md += &format!(
            "\nSign test over problems whose pass@1 differs: B better on {}, A better on {}, {} ties, two-sided p = {:.4}. Probability that a fresh rerun at the same n reverses the order: {}. Table: `comparison.csv`.\n\n",
            c.sign_test.b_better,
            c.sign_test.a_better,
            c.sign_test.ties,
            p_value(c.sign_test.p_value),
            reversal_text(c, 4),
        );
    }
    md
}

/// Observed against fitted distribution of per-problem correct counts.
pub fn fit_figure(fit: &FitResult, source: &str, seed: u64) -> Figure {
    let h = &fit.counts;
    let n = h.n as f64;
    let top = h
        .observed
        .iter()
        .map(|&o| o as f64)
        .chain(h.fitted.iter().copied())
        .fold(1.0, f64::max);
    let mut p = Panel::new(
        format!(
            "{} problems with n = {}; logit-normal mu = {:.3}, sigma = {:.3}",
            h.observed.iter().sum::<usize>(),
            h.n,
            fit.logit_normal.mu,
            fit.logit_normal.sigma
        ),
        "correct answers c out of n",
        "problems",
    );
    p.x_range = (-0.5, n + 0.5);
    p.y_range = (0.0, top * 1.15);
    let step = (h.n / 16).max(1);
    p.x_ticks = Some((0..=h.n).step_by(step).map(|c| c as f64).collect());
    p.bars.push(Bars {
        label: Some("observed".to_string()),
        color: 0,
        bars: h
            .observed
            .iter()
            .enumerate()
            .map(|(c, &o)| (c as f64 - 0.4, c as f64 + 0.4, o as f64))
            .collect(),
    });
    let fitted: Vec<(f64, f64)> = h
        .fitted
        .iter()
        .enumerate()
        .map(|(c, &f)| (c as f64, f))
        .collect();
    p.lines.push(Line {
        label: Some("fitted (expected problems)".to_string()),
        color: 1,
        dashed: false,
        points: fitted.clone(),
    });
    p.markers.push(Markers {
        label: None,
        color: 1,
        points: fitted.iter().map(|&(x, y)| (x, y, y, y)).collect(),
    });
    p.legend = SeriesLabelPosition::UpperMiddle;
    Figure {
        title: format!(
            "fit of `{}`: observed vs fitted correct counts · {source} · seed {seed}",
            fit.model
        ),
        panels: vec![p],
        columns: 1,
        size: (1000, 640),
    }
}

/// `fit.csv`: one row per fitted parameter.
pub fn fit_csv(fit: &FitResult, source: &str, seed: u64) -> String {
    let mut csv = Csv::new(&["source", "model", "seed", "parameter", "estimate", "se"]);
    let mut row = |name: &str, v: f64, se: Option<f64>| {
        csv.row([
            source.to_string(),
            fit.model.clone(),
            seed.to_string(),
            name.to_string(),
            num(v),
            opt(se),
        ]);
    };
    let ln = &fit.logit_normal;
    row("problems", fit.problems as f64, None);
    row("mu", ln.mu, ln.mu_se);
    row("sigma", ln.sigma, ln.sigma_se);
    row("log_likelihood", ln.log_likelihood, None);
    if let Some(at) = &fit.attractor {
        row("attractor", at.share, at.se);
        row("attractor_naive", at.naive_share, None);
        row("wrong_answers", at.wrong_answers as f64, None);
    }
    if let Some(t) = &fit.traces {
        row("median_tokens", t.median_tokens, None);
        row("hard_growth", t.hard_growth, None);
        row("wrong_factor", t.wrong_factor, None);
        row("trace_sigma", t.sigma, None);
    }
    csv.finish()
}

/// `fit-counts.csv`: observed and fitted problems per correct count.
pub fn fit_counts_csv(fit: &FitResult) -> String {
    let mut csv = Csv::new(&["n", "c", "observed", "fitted"]);
    for (c, (o, f)) in fit
        .counts
        .observed
        .iter()
        .zip(&fit.counts.fitted)
        .enumerate()
    {
        csv.row([
            fit.counts.n.to_string(),
            c.to_string(),
            o.to_string(),
            num(*f),
        ]);
    }
    csv.finish()
}

/// Every output file of `fit`: `scenario.toml`, `fit.csv`, `fit-counts.csv`, `fit.json` and the
/// count figure.
///
/// # Errors
/// [`ReportError`] when the figure or JSON cannot be produced.
pub fn fit_artifacts(
    fit: &FitResult,
    source: &str,
    seed: u64,
    figures: bool,
) -> Result<Vec<Artifact>, ReportError> {
    let mut out = vec![
        Artifact {
            file: "scenario.toml".into(),
            bytes: fit.scenario_toml.clone().into_bytes(),
        },
        Artifact {
            file: "fit.csv".into(),
            bytes: fit_csv(fit, source, seed).into_bytes(),
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
    if figures {
        let mut files = Vec::new();
        figure_artifacts(
            "fit-counts",
            &fit_figure(fit, source, seed),
            &mut out,
            &mut files,
        )?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn analyze_with_n_3_labels_k_3() {
        assert_eq!(super::k_ticks(1.0, 3.0), vec![1.0, 2.0, 3.0]);
        assert_eq!(super::k_ticks(1.0, 64.0).last(), Some(&64.0));
        assert_eq!(super::k_ticks(1.0, 64.0).len(), 7);
    }
}
