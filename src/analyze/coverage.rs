//! Coverage of `analyze`'s 95% intervals: data sets drawn from the workbench's own model
//! ([`crate::sim::evals`]), the population value of every metric by quadrature
//! ([`crate::exact::plan::PopulationNodes`]), and the share of data sets whose interval holds it.
//!
//! One replicate draws N problems from the logit-normal population and n answers per problem for
//! two models (B is A shifted by `gap` logits, on the same problems), runs the summary and the
//! paired comparison exactly as `evalsim analyze` does, and records for pass@1, pass@k, pass^k,
//! maj@k (at the given k) and the paired differences of pass@1 and maj@k whether each interval
//! covers the population value. Alternative constructions ([`IntervalMethod`]) are scored on the
//! same per-problem values, so the comparison between them is paired.
//!
//! It lives in `analyze` because it scores `analyze`'s own estimators and intervals; it depends
//! on `model`, `exact` (the population truth) and `sim` (the data sets, drawn on keyed streams;
//! no generator is built here).
use rayon::prelude::*;
use serde::Serialize;

use crate::analyze::interval::{mean_interval, IntervalMethod};
use crate::analyze::{
    compare_models, maj_at_k_exact, pass_at_k_curve, pass_hat_k_curve, summarize_model,
    ComparisonOptions, ModelSamples, ProblemSamples, SummaryOptions,
};
use crate::exact::plan::PopulationNodes;
use crate::model::VoteRule;
use crate::sim::evals::{EvalSampler, ProblemTally};

/// Stream tag of the coverage replicates.
const COVERAGE_STREAM: u64 = 0xC0FE;

/// What to simulate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CoverageSpec {
    /// Logit mean of the population of problems.
    pub mu: f64,
    /// Logit SD of the population.
    pub sigma: f64,
    /// Attractor share of wrong answers.
    pub attractor: f64,
    /// Logit shift of model B over model A.
    pub gap: f64,
    /// Problems N per data set.
    pub problems: usize,
    /// Samples n per problem.
    pub samples: usize,
    /// k of pass@k, pass^k and maj@k (at most `samples`).
    pub k: usize,
    /// Data sets simulated.
    pub replicates: usize,
    /// Bootstrap resamples of the summary (0: no percentile-bootstrap rows).
    pub bootstrap: usize,
    /// Seed.
    pub seed: u64,
}

/// Coverage of one interval construction for one metric.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CoverageRow {
    /// `pass@1`, `pass@k`, `pass^k`, `maj@k`, `diff pass@1` or `diff maj@k`.
    pub metric: &'static str,
    /// The construction: `reported` (what `analyze` prints), `bootstrap`, or a method name.
    pub method: String,
    /// The population value (exact).
    pub truth: f64,
    /// Data sets whose interval holds the truth.
    pub covered: usize,
    /// Data sets simulated.
    pub replicates: usize,
    /// covered / replicates.
    pub coverage: f64,
    /// Binomial SE of the coverage at 95%: sqrt(0.95 * 0.05 / replicates).
    pub binomial_se: f64,
    /// Mean interval width.
    pub mean_width: f64,
}

/// Result of [`interval_coverage`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CoverageResult {
    /// The simulation.
    pub spec: CoverageSpec,
    /// One row per (metric, method).
    pub rows: Vec<CoverageRow>,
}

/// The metrics in row order.
pub const METRICS: [&str; 6] = [
    "pass@1",
    "pass@k",
    "pass^k",
    "maj@k",
    "diff pass@1",
    "diff maj@k",
];

/// Population values of [`METRICS`] by quadrature over the logit-normal. Cost: 4 tabulations of
/// 40,002 nodes (maj@k: O(k^2) each).
pub fn population_truth(spec: &CoverageSpec) -> [f64; 6] {
    let k = spec.k as u32;
    let (mu, sigma, gap, a) = (spec.mu, spec.sigma, spec.gap, spec.attractor);
    let p1 = PopulationNodes::new(mu, sigma, gap, |p| p).moments();
    let pk =
        PopulationNodes::new(mu, sigma, gap, |p| crate::exact::pass::pass_at_k(p, k)).moments();
    let hk =
        PopulationNodes::new(mu, sigma, gap, |p| crate::exact::pass::pass_hat_k(p, k)).moments();
    let mk = PopulationNodes::new(mu, sigma, gap, |p| {
        crate::exact::maj::maj_at_k(p, a, k, VoteRule::Random)
    })
    .moments();
    [
        p1.mean_a,
        pk.mean_a,
        hk.mean_a,
        mk.mean_a,
        p1.mean_b - p1.mean_a,
        mk.mean_b - mk.mean_a,
    ]
}

fn model(name: &str, tallies: &[ProblemTally]) -> ModelSamples {
    ModelSamples {
        name: name.to_string(),
        problems: tallies
            .iter()
            .enumerate()
            .map(|(i, t)| {
                ProblemSamples::from_groups(&format!("q{i}"), t.correct, &t.wrong_groups())
            })
            .collect(),
        has_answers: true,
        has_tokens: false,
    }
}

/// Per-problem values of the four metrics at k for one model.
fn per_problem(tallies: &[ProblemTally], n: usize, k: usize) -> [Vec<f64>; 4] {
    let mut out: [Vec<f64>; 4] = Default::default();
    for t in tallies {
        out[0].push(t.correct as f64 / n as f64);
        out[1].push(pass_at_k_curve(n, t.correct, k).map_or(f64::NAN, |c| c[k - 1]));
        out[2].push(pass_hat_k_curve(n, t.correct, k).map_or(f64::NAN, |c| c[k - 1]));
        out[3].push(
            maj_at_k_exact(t.correct, &t.wrong_groups(), k, VoteRule::Random)
                .map_or(f64::NAN, |c| c[k - 1]),
        );
    }
    out
}

/// One replicate: for each metric, the (low, high) of the reported interval, of the bootstrap
/// (single-model metrics only) and of each method.
type Intervals = Vec<Vec<Option<[f64; 2]>>>;

fn replicate(spec: &CoverageSpec, methods: &[IntervalMethod], r: usize) -> Intervals {
    let sampler = EvalSampler {
        mu: spec.mu,
        sigma: spec.sigma,
        attractor: spec.attractor,
        samples: spec.samples,
        shifts: vec![0.0, spec.gap],
    };
    let draws = sampler.sample_keyed(
        spec.problems,
        spec.seed,
        &[
            COVERAGE_STREAM,
            spec.problems as u64,
            spec.samples as u64,
            r as u64,
        ],
    );
    let (a, b) = (model("a", &draws[0]), model("b", &draws[1]));
    let k = spec.k;
    let options = SummaryOptions {
        ks: Some(vec![1, k]),
        bootstrap: spec.bootstrap,
        seed: spec.seed ^ r as u64,
        ..SummaryOptions::default()
    };
    let mut out: Intervals = vec![Vec::new(); METRICS.len()];
    let summary = summarize_model(&a, &options).ok();
    let at = |curve: Option<&Vec<crate::analyze::CurvePoint>>, kk: usize| {
        curve.and_then(|c| c.iter().find(|p| p.k == kk)).cloned()
    };
    let points = [
        at(summary.as_ref().map(|s| &s.pass_at_k), 1),
        at(summary.as_ref().map(|s| &s.pass_at_k), k),
        at(summary.as_ref().map(|s| &s.pass_hat_k), k),
        at(summary.as_ref().and_then(|s| s.maj_at_k.as_ref()), k),
    ];
    for (m, p) in points.iter().enumerate() {
        out[m].push(p.as_ref().and_then(|p| p.ci95));
        out[m].push(p.as_ref().and_then(|p| p.bootstrap_ci));
    }
    let cmp = compare_models(
        &a,
        &b,
        &ComparisonOptions {
            maj_k: Some(k),
            reruns: 0,
            ..ComparisonOptions::default()
        },
    )
    .ok();
    out[4].push(cmp.as_ref().map(|c| c.pass_at_1.ci95));
    out[5].push(
        cmp.as_ref()
            .and_then(|c| c.maj_at_k.as_ref().map(|d| d.ci95)),
    );
    out[4].push(None);
    out[5].push(None);
    let va = per_problem(&draws[0], spec.samples, k);
    let vb = per_problem(&draws[1], spec.samples, k);
    let diff = |j: usize| -> Vec<f64> { vb[j].iter().zip(&va[j]).map(|(b, a)| b - a).collect() };
    let values = [
        va[0].clone(),
        va[1].clone(),
        va[2].clone(),
        va[3].clone(),
        diff(0),
        diff(3),
    ];
    for (m, v) in values.iter().enumerate() {
        let range = if m >= 4 { (-1.0, 1.0) } else { (0.0, 1.0) };
        for &method in methods {
            out[m].push(mean_interval(v, range, method).map(|i| [i.low, i.high]));
        }
    }
    out
}

/// Simulates `spec.replicates` data sets and scores the reported interval, the percentile
/// bootstrap (when `spec.bootstrap > 0`) and each of `methods`. Replicates run in parallel, each
/// on its own stream keyed by (seed, N, n, replicate), so the result is the same for any thread
/// count.
///
/// Cost: O(replicates N n k^2) for the maj@k DP plus O(replicates bootstrap N) for the bootstrap.
pub fn interval_coverage(spec: &CoverageSpec, methods: &[IntervalMethod]) -> CoverageResult {
    let truth = population_truth(spec);
    let all: Vec<Intervals> = (0..spec.replicates)
        .into_par_iter()
        .map(|r| replicate(spec, methods, r))
        .collect();
    let mut labels = vec!["reported".to_string(), "bootstrap".to_string()];
    labels.extend(methods.iter().map(|m| format!("{m:?}").to_lowercase()));
    let mut rows = Vec::new();
    for (m, metric) in METRICS.iter().enumerate() {
        for (j, label) in labels.iter().enumerate() {
            if j == 1 && (spec.bootstrap == 0 || m >= 4) {
                continue;
            }
            let (mut covered, mut width, mut count) = (0usize, 0.0, 0usize);
            for rep in &all {
                if let Some([lo, hi]) = rep[m][j] {
                    count += 1;
                    width += hi - lo;
                    covered += usize::from(lo <= truth[m] && truth[m] <= hi);
                }
            }
            let replicates = spec.replicates;
            rows.push(CoverageRow {
                metric,
                method: label.clone(),
                truth: truth[m],
                covered,
                replicates,
                coverage: covered as f64 / replicates.max(1) as f64,
                binomial_se: (LEVEL_COVERAGE * (1.0 - LEVEL_COVERAGE) / replicates.max(1) as f64)
                    .sqrt(),
                mean_width: width / count.max(1) as f64,
            });
        }
    }
    CoverageResult {
        spec: spec.clone(),
        rows,
    }
}

/// The nominal coverage.
const LEVEL_COVERAGE: f64 = crate::analyze::interval::LEVEL;
