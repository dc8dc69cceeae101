//! `curves` and `attractor-sweep`: pass@k, pass^k and maj@k against k, exact and simulated.
//!
//! Depends on `scenario`, `model`, `exact` and `sim`; computes no closed form itself.
use serde::Serialize;

use super::selection::{self, Selector};
use super::{Check, Estimate, Progress};
use crate::exact::maj::{attractor_threshold, maj_at_k_all_with_loss, maj_ceiling};
use crate::exact::noise::vote_seed_sd;
use crate::exact::pass::{
    bernoulli_mean_se_with, mean, pass_at_k, pass_at_k_complement, pass_hat_k,
    pass_hat_k_complement,
};
use crate::model::{Grader, Verifier, VoteRule};
use crate::scenario::Scenario;
use crate::sim::votes::{simulate, VoteCell, VoteCounts};

/// Which metric a point is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Metric {
    /// At least one of k samples right.
    #[serde(rename = "pass@k")]
    PassAtK,
    /// All k samples right.
    #[serde(rename = "pass^k")]
    PassHatK,
    /// Majority vote of k samples right.
    #[serde(rename = "maj@k")]
    MajAtK,
    /// The verifier's pick of k samples right (models with a `[model.verifier]`).
    #[serde(rename = "best@k")]
    BestAtK,
}

impl Metric {
    /// The name used in tables and legends.
    pub fn as_str(self) -> &'static str {
        match self {
            Metric::PassAtK => "pass@k",
            Metric::PassHatK => "pass^k",
            Metric::MajAtK => "maj@k",
            Metric::BestAtK => "best@k",
        }
    }
}

/// One series of a vote experiment: a model at one attractor share.
#[derive(Debug, Clone, Serialize)]
pub struct Series {
    /// Model name.
    pub model: String,
    /// Attractor share a.
    pub attractor: f64,
    /// Vote rule of the maj@k points.
    pub vote_rule: VoteRule,
    /// Benchmark pass@1 (mean rate).
    pub pass_at_1: f64,
    /// a / (1 + a): maj@k -> 1 on problems above it, -> 0 below.
    pub threshold: f64,
    /// Share of problems above the threshold: the large-k limit of maj@k.
    pub ceiling: f64,
    /// The best-of-k selector, when the model has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verifier: Option<Verifier>,
    /// The large-k limit of best@k (as graded), when the model has a verifier: for a threshold
    /// verifier the mean of alpha / (alpha + beta).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub best_ceiling: Option<f64>,
    /// The k values at which best@k is above maj@k (exact, as graded), when there is a verifier.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub best_leads: Option<Vec<u32>>,
    /// The grader's error rates, when grading is noisy: every point is then as graded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grader: Option<Grader>,
}

/// One point: a metric of one series at one k.
#[derive(Debug, Clone, Serialize)]
pub struct VotePoint {
    /// Index into [`VoteCurves::series`].
    pub series: usize,
    /// Samples per problem.
    pub k: u32,
    /// Which metric.
    pub metric: Metric,
    /// Exact and simulated values (benchmark means, as fractions).
    #[serde(flatten)]
    pub estimate: Estimate,
    /// Exact seed SD of the benchmark score of one run with k samples per problem on the
    /// scenario's N problems (fraction): sqrt(sum_i q_i (1 - q_i)) / N with q_i the metric's
    /// per-problem probability, the run-to-run spread a user sees rerunning with another seed.
    pub seed_sd: f64,
    /// With a noisy grader, the true value (exact and simulated) beside the graded `estimate`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truth: Option<Estimate>,
}

/// Result of `curves` or `attractor-sweep`.
#[derive(Debug, Clone, Serialize)]
pub struct VoteCurves {
    /// Experiment name.
    pub experiment: String,
    /// Votes simulated per problem per point.
    pub votes: u64,
    /// Number of problems N of the benchmark (the N of each point's `seed_sd`).
    pub problems: usize,
    /// The k values.
    pub k: Vec<u32>,
    /// The series (one per model, or one per attractor share).
    pub series: Vec<Series>,
    /// Every point.
    pub points: Vec<VotePoint>,
}

impl VoteCurves {
    /// Every point as a check.
    pub fn checks(&self) -> Vec<Check> {
        self.points
            .iter()
            .flat_map(|pt| {
                let s = &self.series[pt.series];
                let cell = format!(
                    "model={} a={} rule={} k={}",
                    s.model,
                    s.attractor,
                    s.vote_rule.as_str(),
                    pt.k
                );
                let graded = pt.truth.map(|truth| Check {
                    experiment: self.experiment.clone(),
                    quantity: format!("{} true", pt.metric.as_str()),
                    cell: cell.clone(),
                    estimate: truth,
                });
                let quantity = if pt.truth.is_some() {
                    format!("{} graded", pt.metric.as_str())
                } else {
                    pt.metric.as_str().to_string()
                };
                std::iter::once(Check {
                    experiment: self.experiment.clone(),
                    quantity,
                    cell,
                    estimate: pt.estimate,
                })
                .chain(graded)
            })
            .collect()
    }
}

struct SeriesSpec {
    model: String,
    rates: Vec<f64>,
    attractor: f64,
    rule: VoteRule,
    verifier: Option<Verifier>,
    grader: Option<Grader>,
}

/// pass@k, pass^k and maj@k against k for each listed model.
#[allow(clippy::too_many_arguments)]
pub fn curves(
    scenario: &Scenario,
    name: &str,
    key: u64,
    models: &[usize],
    ks: &[u32],
    votes: u64,
    rule: Option<VoteRule>,
    progress: Progress,
) -> VoteCurves {
    let bench = scenario.benchmark.rates();
    let specs: Vec<SeriesSpec> = models
        .iter()
        .map(|&m| {
            let model = &scenario.models[m];
            SeriesSpec {
                model: model.name.clone(),
                rates: model.rates_on(&bench),
                attractor: model.attractor,
                rule: rule.unwrap_or(model.vote_rule),
                verifier: model.verifier,
                grader: model.grader,
            }
        })
        .collect();
    build(
        scenario.seed,
        name,
        key,
        &specs,
        ks,
        votes,
        &[Metric::PassAtK, Metric::PassHatK, Metric::MajAtK],
        progress,
    )
}

/// maj@k (and pass@k for comparison) for each attractor share, one model.
#[allow(clippy::too_many_arguments)]
pub fn attractor_sweep(
    scenario: &Scenario,
    name: &str,
    key: u64,
    model: usize,
    attractors: &[f64],
    ks: &[u32],
    votes: u64,
    rule: Option<VoteRule>,
    progress: Progress,
) -> VoteCurves {
    let m = &scenario.models[model];
    let rates = m.rates_on(&scenario.benchmark.rates());
    let specs: Vec<SeriesSpec> = attractors
        .iter()
        .map(|&a| SeriesSpec {
            model: m.name.clone(),
            rates: rates.clone(),
            attractor: a,
            rule: rule.unwrap_or(m.vote_rule),
            verifier: None,
            grader: None,
        })
        .collect();
    build(
        scenario.seed,
        name,
        key,
        &specs,
        ks,
        votes,
        &[Metric::PassAtK, Metric::MajAtK],
        progress,
    )
}

#[allow(clippy::too_many_arguments)]
fn build(
    seed: u64,
    name: &str,
    key: u64,
    specs: &[SeriesSpec],
    ks: &[u32],
    votes: u64,
    metrics: &[Metric],
    progress: Progress,
) -> VoteCurves {
    let cells: Vec<VoteCell> = specs
        .iter()
        .flat_map(|s| {
            ks.iter().map(move |&k| VoteCell {
                k,
                p: s.rates.clone(),
                alpha: vec![s.attractor; s.rates.len()],
                rule: s.rule,
            })
        })
        .collect();
    let counts = simulate(seed, &[key], &cells, votes, progress);
    let mut points = Vec::new();
    for (si, s) in specs.iter().enumerate() {
        for (ki, &k) in ks.iter().enumerate() {
            let cell_counts = &counts[si * ks.len() + ki];
            for &metric in metrics {
                // Each per-problem probability with its complement, computed directly.
                let pairs: Vec<(f64, f64)> = match metric {
                    Metric::PassAtK => s
                        .rates
                        .iter()
                        .map(|&p| (pass_at_k(p, k), pass_at_k_complement(p, k)))
                        .collect(),
                    Metric::PassHatK => s
                        .rates
                        .iter()
                        .map(|&p| (pass_hat_k(p, k), pass_hat_k_complement(p, k)))
                        .collect(),
                    Metric::MajAtK => maj_at_k_all_with_loss(&s.rates, s.attractor, k, s.rule),
                    Metric::BestAtK => unreachable!("best@k points come from `selection`"),
                };
                let (exact, complement): (Vec<f64>, Vec<f64>) = pairs.into_iter().unzip();
                let hits = |c: &VoteCounts| match metric {
                    Metric::PassAtK => c.any_correct,
                    Metric::PassHatK => c.all_correct,
                    Metric::MajAtK => c.wins,
                    Metric::BestAtK => 0,
                };
                let total: u64 = cell_counts.iter().map(hits).sum();
                let sim = total as f64 / (votes as f64 * s.rates.len() as f64);
                points.push(VotePoint {
                    series: si,
                    k,
                    metric,
                    estimate: Estimate::new(
                        mean(&exact),
                        sim,
                        bernoulli_mean_se_with(&exact, &complement, votes),
                    )
                    .counting(1.0 / (votes as f64 * s.rates.len() as f64)),
                    // Each problem's outcome in one run is one Bernoulli(q_i), for every metric.
                    seed_sd: vote_seed_sd(&exact, &complement),
                    truth: None,
                });
            }
        }
    }
    let mut series: Vec<Series> = specs
        .iter()
        .map(|s| Series {
            model: s.model.clone(),
            attractor: s.attractor,
            vote_rule: s.rule,
            pass_at_1: mean(&s.rates),
            threshold: attractor_threshold(s.attractor),
            ceiling: maj_ceiling(&s.rates, s.attractor),
            verifier: None,
            best_ceiling: None,
            best_leads: None,
            grader: None,
        })
        .collect();
    let selectors: Vec<Selector> = specs
        .iter()
        .map(|s| Selector {
            rates: &s.rates,
            attractor: s.attractor,
            rule: s.rule,
            verifier: s.verifier,
            grader: s.grader,
        })
        .collect();
    selection::apply(seed, key, &selectors, ks, votes, &mut series, &mut points);
    VoteCurves {
        experiment: name.to_string(),
        votes,
        problems: specs.first().map_or(0, |s| s.rates.len()),
        k: ks.to_vec(),
        series,
        points,
    }
}
