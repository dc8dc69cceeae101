//! The CSV tables of `analyze` and `fit`: one tidy row per (metric, k) per model, the paired
//! comparison, the fitted parameters and the observed against fitted counts. Formats finished
//! results only; depends on [`crate::analyze`]'s result types and [`crate::report::tables`].
use super::{basis_name, curves, method_name, opt, rule_name};
use crate::analyze::fit::joint::Parameter;
use crate::analyze::interval::IntervalMethod;
use crate::analyze::{Analysis, FitResult, ModelAnalysis};
use crate::report::tables::{num, Csv};

/// Columns of the per-model CSV.
pub const MODEL_COLUMNS: [&str; 20] = [
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
    "ci_method",
    "ci_clusters",
    "unclustered_ci_low",
    "unclustered_ci_high",
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
                p.ci95
                    .map_or("", |_| method_name(IntervalMethod::Wilson, p.ci_clusters))
                    .to_string(),
                p.ci_clusters.map_or(String::new(), |c| c.to_string()),
                opt(p.unclustered_ci95.map(|c| c[0])),
                opt(p.unclustered_ci95.map(|c| c[1])),
            ]);
        }
    }
    // What extraction and normalisation did: shares of all samples, k and the errors blank.
    if let Some(ans) = &m.summary.answers {
        for (metric, share) in [
            ("unparsed_share", ans.unparsed_share),
            ("merged_share", ans.merged_share),
        ] {
            let mut row = vec![String::new(); MODEL_COLUMNS.len()];
            row[0] = m.source.clone();
            row[1] = m.summary.model.clone();
            row[2] = a.seed.to_string();
            row[3] = metric.to_string();
            row[6] = num(share);
            csv.row(row);
        }
    }
    csv.finish()
}

/// Columns of `comparison.csv`.
pub const COMPARISON_COLUMNS: [&str; 27] = [
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
    "clustered_se",
    "ci_method",
    "ci_clusters",
    "unclustered_ci_low",
    "unclustered_ci_high",
];

/// `comparison.csv`: the paired differences B - A, one row per metric and k (pass@1, pass@k at
/// each k >= 2, maj@k at each k), each with its own sign test; `None` without a comparison.
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
    // Each row carries its own metric's sign test; the rerun reversal probability is of the
    // pass@1 order, so only the pass@1 row has it.
    for (metric, d) in super::compare_figure::comparison_rows(c) {
        let reversal = if metric == "pass@1" {
            c.reversal_probability
        } else {
            None
        };
        let rule = if metric == "maj@k" { rule } else { "" };
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
            d.sign_test.b_better.to_string(),
            d.sign_test.a_better.to_string(),
            num(d.sign_test.p_value),
            opt(reversal),
            basis_name(d.ci_basis).to_string(),
            opt(d.clustered_se),
            method_name(d.ci_method, d.ci_clusters).to_string(),
            d.ci_clusters.map_or(String::new(), |c| c.to_string()),
            opt(d.unclustered_ci95.map(|c| c[0])),
            opt(d.unclustered_ci95.map(|c| c[1])),
        ]);
    }
    Some(csv.finish())
}

/// `fit.csv`: one row per fitted parameter (rate parameters with their 95% interval and
/// whether they were estimated or refused; then each model's attractor and trace parameters).
pub fn fit_csv(fit: &FitResult, seed: u64) -> String {
    let mut csv = Csv::new(&[
        "source",
        "model",
        "seed",
        "parameter",
        "estimate",
        "se",
        "lower95",
        "upper95",
        "status",
    ]);
    for q in &fit.parameters {
        let model = match q.parameter {
            Parameter::Shift(m) | Parameter::Tau(m) | Parameter::Omega(m) => {
                fit.models[m].name.clone()
            }
            _ => String::new(),
        };
        let name = match q.parameter {
            Parameter::Mu => "mu",
            Parameter::Sigma => "sigma",
            Parameter::Shift(_) => "shift",
            Parameter::Tau(_) => "shift_sd",
            Parameter::Omega(_) => "run_sd",
        };
        csv.row([
            fit.source.clone(),
            model,
            seed.to_string(),
            name.to_string(),
            num(q.value),
            opt(q.se),
            opt(q.lower),
            opt(q.upper),
            if q.estimated() {
                "estimated"
            } else {
                "refused (fallback)"
            }
            .to_string(),
        ]);
    }
    for m in &fit.models {
        let mut row = |name: &str, v: f64, se: Option<f64>| {
            csv.row([
                fit.source.clone(),
                m.name.clone(),
                seed.to_string(),
                name.to_string(),
                num(v),
                opt(se),
                String::new(),
                String::new(),
                "estimated".to_string(),
            ]);
        };
        row("problems", m.problems as f64, None);
        if let Some(at) = &m.attractor {
            row("attractor", at.share, at.se);
            row("attractor_naive", at.naive_share, None);
            row("wrong_answers", at.wrong_answers as f64, None);
        }
        if let Some(t) = &m.traces {
            row("median_tokens", t.median_tokens, None);
            row("hard_growth", t.hard_growth, None);
            row("wrong_factor", t.wrong_factor, None);
            row("trace_sigma", t.sigma, None);
        }
    }
    csv.finish()
}

/// `fit-counts.csv`: observed and fitted problems per correct count, per model.
pub fn fit_counts_csv(fit: &FitResult) -> String {
    let mut csv = Csv::new(&["model", "n", "c", "observed", "fitted"]);
    for m in &fit.models {
        for (c, (o, f)) in m.counts.observed.iter().zip(&m.counts.fitted).enumerate() {
            csv.row([
                m.name.clone(),
                m.counts.n.to_string(),
                c.to_string(),
                o.to_string(),
                num(*f),
            ]);
        }
    }
    csv.finish()
}
