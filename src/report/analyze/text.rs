//! The text `analyze` prints on stdout: the per-model summary, the harness cross-check and the
//! comparison, with notes on one-sided intervals. Formats finished results only; depends on
//! [`crate::analyze`]'s result types.
use super::{
    ci_cell, ci_pct, curves, interval_label, opt_pts, pts, rule_name, signed_pts, EXACT_BOUND_MARK,
};
use crate::analyze::interval::{IntervalBasis, IntervalMethod};
use crate::analyze::summary::BINARY_ONLY;
use crate::analyze::{Analysis, Comparison, CurvePoint, ModelAnalysis};
use crate::report::format::pct;

/// The one note of a table whose marked intervals ([`EXACT_BOUND_MARK`]) rest on the exact
/// bound, naming the bound it prints: after `units` independent units (problems, or clusters)
/// that all score s, the interval is [s - u (s - lo), s + u (hi - s)] with
/// u = 1 - 0.05^(1/units). `marked` lists what carries the mark ("pass@k at k = 1, 2").
/// Empty when nothing is marked.
pub(super) fn bound_note(marked: &[String], units: usize, unit_word: &str, diff: bool) -> String {
    if marked.is_empty() {
        return String::new();
    }
    let u = crate::analyze::interval::none_in_n_bound(units);
    let one = unit_word.trim_end_matches('s');
    let (x, range, ends) = if diff {
        (
            "difference d",
            "[d - u (1 + d), d + u (1 - d)]",
            "for d = 0 that is [-u, u]",
        )
    } else {
        (
            "score s",
            "[s - u s, s + u (1 - s)]",
            "for s = 1 that is [1 - u, 1], for s = 0 [0, u]",
        )
    };
    let why = if units == 1 {
        format!("with one {one} this holds the mean of any population of scores with probability 95% (Markov's inequality) and says little more")
    } else {
        format!(
            "u is the exact one-sided 95% bound on the share of {unit_word} that could differ, after N = {units} {unit_word} without an exception{}",
            if units >= 10 {
                " (about 3/N, the rule of three)"
            } else {
                ""
            }
        )
    };
    format!(
        "{EXACT_BOUND_MARK} {}. With no spread to build it from, the interval is {range} around the common {x}, with u = 1 - 0.05^(1/N) = {} for N = {units} {unit_word} ({ends}); {why}\n",
        marked.join("; "),
        pct(u, 1),
    )
}

/// What carries the mark in `points` (among `shown_ks`), per kind of exact bound:
/// "metric at k = 1, 2: every problem scores 1".
fn marked_ks(metric: &str, points: &[CurvePoint], shown_ks: &[usize], unit: &str) -> Vec<String> {
    [
        (IntervalBasis::AllMax, format!("every {unit} scores 1")),
        (IntervalBasis::AllMin, format!("every {unit} scores 0")),
        (
            IntervalBasis::AllEqual,
            format!("every {unit} has the same score"),
        ),
    ]
    .into_iter()
    .filter_map(|(basis, what)| {
        let ks: Vec<String> = points
            .iter()
            .filter(|p| shown_ks.contains(&p.k) && p.ci_basis == Some(basis))
            .map(|p| p.k.to_string())
            .collect();
        (!ks.is_empty()).then(|| format!("{metric} at k = {}: {what}", ks.join(", ")))
    })
    .collect()
}

/// The note under a model's table: one line for the marked intervals the table shows (the
/// pass@k column, and the maj@k column when `with_maj`), or for the header's pass@1 interval.
pub(super) fn boundary_notes(m: &ModelAnalysis, with_maj: bool) -> String {
    let s = &m.summary;
    let clusters = s
        .mean_score
        .as_ref()
        .or(s.pass_at_k.first())
        .and_then(|p| p.ci_clusters);
    let unit = if clusters.is_some() {
        "cluster"
    } else {
        "problem"
    };
    let mut marked = Vec::new();
    match &s.mean_score {
        Some(p) => {
            let ks = [p.k];
            for m in marked_ks("mean score", std::slice::from_ref(p), &ks, unit) {
                marked.push(m.replacen(&format!(" at k = {}", p.k), "", 1));
            }
        }
        None => {
            let shown_ks: Vec<usize> = shown(&s.pass_at_k).iter().map(|p| p.k).collect();
            marked.extend(marked_ks("pass@k", &s.pass_at_k, &shown_ks, unit));
            if with_maj {
                if let Some(c) = &s.maj_at_k {
                    marked.extend(marked_ks("maj@k", c, &shown_ks, unit));
                }
            }
        }
    }
    match clusters {
        Some(c) => bound_note(&marked, c, "clusters", false),
        None => bound_note(&marked, s.problems, "problems", false),
    }
}

/// The note under the comparison's table when a difference's interval carries the mark.
pub(super) fn diff_note(
    c: &Comparison,
    rows: &[(String, &crate::analyze::DiffEstimate)],
) -> String {
    let unit = if c.pass_at_1.ci_clusters.is_some() {
        "cluster"
    } else {
        "problem"
    };
    let marked: Vec<String> = rows
        .iter()
        .filter(|(_, d)| d.ci_basis != IntervalBasis::Spread)
        .map(|(name, _)| format!("{name}: every {unit} has the same difference"))
        .collect();
    match c.pass_at_1.ci_clusters {
        Some(k) => bound_note(&marked, k, "clusters", true),
        None => bound_note(&marked, c.common_problems, "problems", true),
    }
}

/// Each line indented by two spaces, as the terminal's notes are.
fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  note: {l}\n")).collect()
}

/// The k values shown in text: all when there are at most 8, else powers of two and the last.
pub(super) fn shown(points: &[CurvePoint]) -> Vec<&CurvePoint> {
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

pub(super) fn at_k(points: Option<&Vec<CurvePoint>>, k: usize) -> Option<&CurvePoint> {
    points.and_then(|c| c.iter().find(|p| p.k == k))
}

pub(super) fn model_header(m: &ModelAnalysis) -> String {
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
        "  {label} {}: question SE {} pts, sampling SE {} pts{}, 95% CI {}{} (bootstrap {})\n",
        pct(s.pass_at_1, 1),
        opt_pts(p1.question_se),
        opt_pts(p1.sampling_se),
        p1.clustered_se
            .map_or(String::new(), |c| format!(", clustered SE {} pts", pts(c))),
        ci_cell(p1.ci95, p1.ci_basis),
        match p1.ci_clusters {
            Some(c) => format!(
                " from the bias-reduced clustered SE over {c} clusters (CR2, Bell-McCaffrey t); from the question SE {}",
                ci_cell(p1.unclustered_ci95, p1.unclustered_ci_basis)
            ),
            None => String::new(),
        },
        ci_pct(p1.bootstrap_ci)
    );
    if s.mean_score.is_some() {
        t += &format!("  not available: {BINARY_ONLY}\n");
    }
    if let Some(a) = &s.answers {
        t += &format!(
            "  answers: {} unparsed ({} of {} samples had no extractable answer); the normaliser merged {} samples ({}) into an answer written differently\n",
            pct(a.unparsed_share, 1),
            a.unparsed,
            s.samples,
            a.merged,
            pct(a.merged_share, 1),
        );
    }
    if let Some(tok) = &s.tokens {
        t += &format!(
            "  tokens: {:.0} per sample, {} per correct answer{}\n",
            tok.mean_tokens_per_sample,
            tok.tokens_per_correct
                .map_or("-".to_string(), |v| format!("{v:.0}")),
            match (tok.cap_tokens, tok.truncation_rate) {
                (Some(cap), Some(r)) =>
                    format!(", {} of samples at or above the cap {cap}", pct(r, 1)),
                _ => String::new(),
            }
        );
    }
    t
}

/// What each harness log said beside its samples, next to evalsim's values: the harness's own
/// aggregate (the cross-check), the log's epoch reducers, skipped samples, token totals and
/// warnings (for report.md). Empty when no input carries any.
pub fn harness_text(a: &Analysis) -> String {
    harness_lines(a, true)
}

/// [`harness_text`]; on the terminal (`with_warnings` false) without the skipped count and the
/// warnings, which `analyze` has already printed once on stderr.
fn harness_lines(a: &Analysis, with_warnings: bool) -> String {
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
        if !with_warnings {
            continue;
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

/// The concise summary printed on stdout.
pub fn analysis_text(a: &Analysis) -> String {
    let mut t = String::new();
    let rule = rule_name(a.options.summary.maj_rule);
    if let Some(b) = &a.leaderboard {
        // Many models: the table and its headline; each model's curves are in report.md.
        t += &super::leaderboard::leaderboard_text(a, b);
        return t + &harness_lines(a, false);
    }
    for m in &a.models {
        let s = &m.summary;
        t += &model_header(m);
        if s.mean_score.is_some() {
            // Partial credit: the header holds the mean score; there are no curves.
            t += &indent(&boundary_notes(m, false));
            continue;
        }
        let maj_label = if s.maj_at_k.is_some() {
            format!("maj@k {rule}")
        } else {
            "maj@k".to_string()
        };
        let ci_name = if s.pass_at_k.first().is_some_and(|p| p.ci_clusters.is_some()) {
            "pass@k [95% CI, clustered]"
        } else {
            "pass@k [95% CI]"
        };
        let mut rows: Vec<[String; 6]> = vec![[
            "k".into(),
            ci_name.into(),
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
                format!("{} [{}]", pts(p.estimate), ci_cell(p.ci95, p.ci_basis)),
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
        t += &indent(&boundary_notes(m, false));
    }
    t += &harness_lines(a, false);
    if let Some(c) = &a.comparison {
        t += &format!(
            "comparison `{}` - `{}` on {} common problems:\n",
            c.model_b, c.model_a, c.common_problems
        );
        let rows: Vec<(String, &crate::analyze::DiffEstimate)> =
            super::compare_figure::headline_rows(c)
                .into_iter()
                .map(|r| (super::compare_figure::row_name(r, rule), r.1))
                .collect();
        for (name, d) in &rows {
            t += &format!(
                "  {name}: {} pts, 95% CI [{}, {}]{}; paired SE {} (question part {}, sampling part {}, in quadrature){}\n",
                signed_pts(d.difference),
                signed_pts(d.ci95[0]),
                signed_pts(d.ci95[1]),
                if d.ci_basis == IntervalBasis::Spread {
                    ""
                } else {
                    EXACT_BOUND_MARK
                },
                pts(d.se),
                pts(d.question_se),
                opt_pts(d.sampling_se),
                clustered_diff(d),
            );
        }
        t += &indent(&diff_note(c, &rows));
        for (name, d) in &rows {
            t += &format!(
                "  95% CI of the {name} difference: {}\n",
                interval_label(d.ci_method, d.ci_clusters)
            );
        }
        for (name, d) in &rows {
            t += &format!("  {}\n", sign_text(c, name, d));
        }
        t += &format!(
            "  probability that a fresh rerun at the same n reverses the pass@1 order: {}\n",
            reversal_text(c)
        );
        let all = super::compare_figure::comparison_rows(c).len();
        if all > rows.len() {
            t += &format!(
                "  every k ({all} rows, each with its interval and sign test): comparison.csv\n"
            );
        }
    }
    t += &format!(
        "pts = percentage points; {}; seed {}, {} bootstrap resamples\n",
        interval_labels(a),
        a.seed,
        a.options.summary.bootstrap
    );
    t
}

/// ", clustered paired SE x pts over C clusters (95% CI from the paired SE [a, b])" when the
/// difference's interval rests on clusters; empty otherwise.
pub(super) fn clustered_diff(d: &crate::analyze::DiffEstimate) -> String {
    match (d.clustered_se, d.ci_clusters) {
        (Some(se), Some(c)) => format!(
            "; clustered paired SE {} (CR1) over {c} clusters, whose bias-reduced form (CR2) the 95% CI uses{}",
            pts(se),
            d.unclustered_ci95.map_or(String::new(), |[lo, hi]| format!(
                " (from the paired SE: [{}, {}])",
                signed_pts(lo),
                signed_pts(hi)
            ))
        ),
        _ => String::new(),
    }
}

/// What the models' 95% CIs use: one label when every model's intervals use the same
/// construction, else one per model.
pub fn interval_labels(a: &Analysis) -> String {
    let labels: Vec<(String, String)> = a
        .models
        .iter()
        .map(|m| {
            let clusters = curves(m)
                .first()
                .and_then(|(_, _, points)| points.first())
                .and_then(|p| p.ci_clusters);
            (
                m.summary.model.clone(),
                interval_label(IntervalMethod::Wilson, clusters),
            )
        })
        .collect();
    match labels.first() {
        Some((_, first)) if labels.iter().all(|(_, l)| l == first) => format!("95% CI = {first}"),
        _ => labels
            .iter()
            .map(|(m, l)| format!("95% CI of `{m}` = {l}"))
            .collect::<Vec<_>>()
            .join("; "),
    }
}

/// A p-value (or a small probability) with two significant digits: "1.0", "0.50", "0.045",
/// "0.0030", "0.00021"; never "0.00". Exactly 0 prints "0". CSV files keep full precision.
pub(super) fn p_value(p: f64) -> String {
    if !p.is_finite() {
        return p.to_string();
    }
    if p <= 0.0 {
        return "0".to_string();
    }
    // Round to two significant digits first, so 0.0996 prints "0.10", not "0.100".
    let rounded: f64 = format!("{p:.1e}").parse().unwrap_or(p);
    let digits = (1 - rounded.log10().floor() as i32).max(1) as usize;
    format!("{rounded:.digits$}")
}

/// The reversal probability with the number of simulated reruns and the seed, or why there is
/// none (no observed difference, 0/1 rates that a rerun would repeat, or `--reruns 0`).
pub(super) fn reversal_text(c: &Comparison) -> String {
    if c.degenerate_reruns {
        return "cannot be estimated from these data: every per-problem rate is 0 or 1 (one sample per problem, or all samples of a problem agree), so reruns drawn at the observed rates would repeat the data exactly; more samples per problem are needed".to_string();
    }
    if c.reruns == 0 {
        return "- (not simulated: --reruns 0)".to_string();
    }
    // Zero reruns reversed: said in words, not "0" read as an impossibility.
    match c.reversal_probability {
        None => "- (no difference)".to_string(),
        Some(0.0) => format!(
            "none of {} simulated reruns reversed it (seed {})",
            c.reruns, c.seed
        ),
        Some(r) => format!(
            "{} ({} simulated reruns, seed {})",
            p_value(r),
            c.reruns,
            c.seed
        ),
    }
}

/// The sign test of one compared metric, in words.
pub(super) fn sign_text(c: &Comparison, name: &str, d: &crate::analyze::DiffEstimate) -> String {
    format!(
        "{name} sign test (problems whose per-problem {name} estimates differ): `{}` better on {}, `{}` on {}, {} ties, two-sided p = {}",
        c.model_b,
        d.sign_test.b_better,
        c.model_a,
        d.sign_test.a_better,
        d.sign_test.ties,
        p_value(d.sign_test.p_value)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// report.md printed "p = 0.00" where the terminal said 0.003 (a string cut to four
    /// characters); every p-value now has two significant digits wherever it is printed.
    #[test]
    fn report_printed_p_as_0_00_where_the_terminal_said_0_003() {
        for (p, want) in [
            (1.0, "1.0"),
            (0.5, "0.50"),
            (0.0996, "0.10"),
            (0.045, "0.045"),
            (0.003, "0.0030"),
            (0.002_929_687_5, "0.0029"),
            (2.1e-4, "0.00021"),
            (0.0, "0"),
        ] {
            assert_eq!(p_value(p), want, "{p}");
        }
    }
}
