//! The text `analyze` prints on stdout: the per-model summary, the harness cross-check and the
//! comparison, with notes on one-sided intervals. Formats finished results only; depends on
//! [`crate::analyze`]'s result types.
use super::{
    ci_cell, ci_pct, curves, interval_label, opt_pts, pct, pts, rule_name, signed_pts,
    EXACT_BOUND_MARK,
};
use crate::analyze::interval::{IntervalBasis, IntervalMethod};
use crate::analyze::summary::BINARY_ONLY;
use crate::analyze::{Analysis, Comparison, CurvePoint, ModelAnalysis};

/// One line per curve whose intervals rest on an exact bound at some k (every problem solved,
/// none, or every problem the same score), so the reader knows why such an interval ends at 0% or
/// 100% or is one-sided; tables mark those intervals with [`EXACT_BOUND_MARK`].
pub(super) fn boundary_notes(m: &ModelAnalysis) -> String {
    let n = m.summary.problems;
    let mut t = String::new();
    for (metric, _, points) in curves(m) {
        for (basis, what) in [
            (IntervalBasis::AllMax, "every problem scores 1"),
            (IntervalBasis::AllMin, "every problem scores 0"),
            (IntervalBasis::AllEqual, "every problem has the same score"),
        ] {
            let ks: Vec<String> = points
                .iter()
                .filter(|p| p.ci_basis == Some(basis))
                .map(|p| p.k.to_string())
                .collect();
            if ks.is_empty() {
                continue;
            }
            let units = match points.first().and_then(|p| p.ci_clusters) {
                Some(c) => format!("{c} clusters"),
                None => format!("{n} problems"),
            };
            t += &if n == 1 {
                format!(
                    "  note: {EXACT_BOUND_MARK} {metric} at k = {}: one problem; the 95% interval is the bound after one problem, [s - 0.95 s, s + 0.95 (1 - s)] for its score s, which holds the mean of any population of scores in [0, 1] with probability 95% (Markov's inequality) and says little more\n",
                    ks.join(", ")
                )
            } else {
                format!(
                    "  note: {EXACT_BOUND_MARK} {metric} at k = {}: {what}; the 95% interval is the exact bound after {units} without an exception (1 - 0.05^(1/N), about 3/N: the rule of three), not a point\n",
                    ks.join(", ")
                )
            };
        }
    }
    t
}

/// A note when every paired difference is the same (e.g. all 0).
pub(super) fn diff_note(name: &str, d: &crate::analyze::DiffEstimate, problems: usize) -> String {
    if d.ci_basis == IntervalBasis::Spread {
        return String::new();
    }
    let units = d
        .ci_clusters
        .map_or(format!("{problems} problems"), |c| format!("{c} clusters"));
    format!(
        "  note: {EXACT_BOUND_MARK} {name}: every problem has the same difference; the 95% interval is the exact bound on how often a problem could differ after {units} (1 - 0.05^(1/N), about 3/N), not a point\n"
    )
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
        pct(s.pass_at_1),
        opt_pts(p1.question_se),
        opt_pts(p1.sampling_se),
        p1.clustered_se
            .map_or(String::new(), |c| format!(", clustered SE {} pts", pts(c))),
        ci_cell(p1.ci95, p1.ci_basis),
        match p1.ci_clusters {
            Some(c) => format!(
                " from the clustered SE over {c} clusters with t({}); from the question SE {}",
                c - 1,
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
            pct(a.unparsed_share),
            a.unparsed,
            s.samples,
            a.merged,
            pct(a.merged_share),
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
                    format!(", {} of samples at or above the cap {cap}", pct(r)),
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
            t += &boundary_notes(m);
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
        t += &boundary_notes(m);
    }
    t += &harness_lines(a, false);
    if let Some(c) = &a.comparison {
        t += &format!(
            "comparison `{}` - `{}` on {} common problems:\n",
            c.model_b, c.model_a, c.common_problems
        );
        let mut rows = vec![("pass@1".to_string(), &c.pass_at_1)];
        if let Some(d) = &c.maj_at_k {
            rows.push((format!("maj@{} ({rule})", d.k), d));
        }
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
            t += &diff_note(name, d, c.common_problems);
        }
        for (name, d) in &rows {
            t += &format!(
                "  95% CI of the {name} difference: {}\n",
                interval_label(d.ci_method, d.ci_clusters)
            );
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
            "; clustered paired SE {} over {c} clusters, which the 95% CI uses{}",
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

/// A p-value with its significant digits: three decimals down to 0.001, then two significant
/// digits ("0.00021", not "0.000").
pub(super) fn p_value(p: f64) -> String {
    if p >= 0.001 || p <= 0.0 || !p.is_finite() {
        format!("{p:.3}")
    } else {
        let digits = (1 - p.log10().floor() as i32).clamp(2, 17) as usize;
        format!("{p:.digits$}")
    }
}

/// The reversal probability with the number of simulated reruns and the seed, or why there is
/// none (no observed difference, or `--reruns 0`).
pub(super) fn reversal_text(c: &Comparison, decimals: usize) -> String {
    if c.reruns == 0 {
        return "- (not simulated: --reruns 0)".to_string();
    }
    // Zero reruns reversed: "0", not "0.000" read as a rounded value; a small nonzero share
    // keeps two significant digits.
    let p = c
        .reversal_probability
        .map_or("- (no difference)".to_string(), |r| {
            if r == 0.0 {
                "0 (no rerun reversed it)".to_string()
            } else if r < 10f64.powi(-(decimals as i32)) {
                p_value(r)
            } else {
                format!("{r:.decimals$}")
            }
        });
    format!("{p} ({} simulated reruns, seed {})", c.reruns, c.seed)
}
