//! `curves` and `attractor-sweep`: pass@k, pass^k and maj@k against k, exact and simulated.
//!
//! Depends on `scenario`, `model`, `exact` and `sim`; computes no closed form itself.
use serde::Serialize;

use super::{Check, Estimate, Progress};
use crate::exact::maj::{attractor_threshold, maj_at_k_all_with_loss, maj_ceiling};
use crate::exact::noise::vote_seed_sd;
use crate::exact::pass::{
    bernoulli_mean_se_with, mean, pass_at_k, pass_at_k_complement, pass_hat_k,
    pass_hat_k_complement,
};
use crate::exact::run_corr;
use crate::model::VoteRule;
use crate::scenario::Scenario;
use crate::sim::run_corr::{simulate_problem, RunProblem};
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
}

impl Metric {
    /// The name used in tables and legends.
    pub fn as_str(self) -> &'static str {
        match self {
            Metric::PassAtK => "pass@k",
            Metric::PassHatK => "pass^k",
            Metric::MajAtK => "maj@k",
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
    /// Share of problems above the threshold: the large-k limit of maj@k (under per-run noise,
    /// the mean chance that a run's rate lies above it).
    pub ceiling: f64,
    /// Per-run logit SD omega of the model (0: independent samples).
    #[serde(skip_serializing_if = "is_zero")]
    pub run_sd: f64,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
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
            .map(|pt| {
                let s = &self.series[pt.series];
                let omega = if s.run_sd > 0.0 {
                    format!(" run_sd={}", s.run_sd)
                } else {
                    String::new()
                };
                Check {
                    experiment: self.experiment.clone(),
                    quantity: pt.metric.as_str().to_string(),
                    cell: format!(
                        "model={} a={} rule={} k={}{omega}",
                        s.model,
                        s.attractor,
                        s.vote_rule.as_str(),
                        pt.k
                    ),
                    estimate: pt.estimate,
                }
            })
            .collect()
    }
}

struct SeriesSpec {
    model: String,
    rates: Vec<f64>,
    attractor: f64,
    rule: VoteRule,
    /// Per-run noise omega: 0 uses the independent-sample closed forms and sampler.
    run_sd: f64,
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
                run_sd: model.run_sd,
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
            run_sd: 0.0,
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
    // Series without per-run noise share the vote sampler (their cells in the same order as
    // before run_sd existed); series with it are simulated run by run.
    let cells: Vec<VoteCell> = specs
        .iter()
        .filter(|s| s.run_sd == 0.0)
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
    let mut independent = 0;
    for (si, s) in specs.iter().enumerate() {
        if s.run_sd > 0.0 {
            points.extend(run_noise_points(
                seed, key, si, s, ks, votes, metrics, progress,
            ));
            continue;
        }
        let base = independent;
        independent += 1;
        for (ki, &k) in ks.iter().enumerate() {
            let cell_counts = &counts[base * ks.len() + ki];
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
                };
                let (exact, complement): (Vec<f64>, Vec<f64>) = pairs.into_iter().unzip();
                let hits = |c: &VoteCounts| match metric {
                    Metric::PassAtK => c.any_correct,
                    Metric::PassHatK => c.all_correct,
                    Metric::MajAtK => c.wins,
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
                });
            }
        }
    }
    let series = specs
        .iter()
        .map(|s| {
            let (pass_at_1, ceiling) = if s.run_sd > 0.0 {
                let means: Vec<f64> = s
                    .rates
                    .iter()
                    .map(|&p| run_corr::run_moments(p, s.run_sd).mean)
                    .collect();
                (
                    mean(&means),
                    run_corr::maj_ceiling_run(&s.rates, s.attractor, s.run_sd),
                )
            } else {
                (mean(&s.rates), maj_ceiling(&s.rates, s.attractor))
            };
            Series {
                model: s.model.clone(),
                attractor: s.attractor,
                vote_rule: s.rule,
                pass_at_1,
                threshold: attractor_threshold(s.attractor),
                ceiling,
                run_sd: s.run_sd,
            }
        })
        .collect();
    VoteCurves {
        experiment: name.to_string(),
        votes,
        problems: specs.first().map_or(0, |s| s.rates.len()),
        k: ks.to_vec(),
        series,
        points,
    }
}

/// The points of one series with per-run noise: exact per-problem values from
/// [`run_corr`], simulated run by run ([`simulate_problem`], one eta per run and problem) on
/// streams keyed (key, `RUN_NOISE_STREAM`, series, k, problem).
#[allow(clippy::too_many_arguments)]
fn run_noise_points(
    seed: u64,
    key: u64,
    si: usize,
    s: &SeriesSpec,
    ks: &[u32],
    votes: u64,
    metrics: &[Metric],
    progress: Progress,
) -> Vec<VotePoint> {
    let mut points = Vec::new();
    let draws = votes as f64 * s.rates.len() as f64;
    for &k in ks {
        let tallies: Vec<_> = s
            .rates
            .iter()
            .enumerate()
            .map(|(i, &p)| {
                let problem = RunProblem {
                    p,
                    attractor: s.attractor,
                    omega: s.run_sd,
                    k,
                    rule: s.rule,
                };
                let path = [key, RUN_NOISE_STREAM, si as u64, u64::from(k), i as u64];
                let t = simulate_problem(seed, &path, &problem, votes);
                progress(votes);
                t
            })
            .collect();
        for &metric in metrics {
            let pairs: Vec<(f64, f64)> = s
                .rates
                .iter()
                .map(|&p| match metric {
                    Metric::PassAtK => run_corr::pass_at_k_run(p, s.run_sd, k),
                    Metric::PassHatK => run_corr::pass_hat_k_run(p, s.run_sd, k),
                    Metric::MajAtK => run_corr::maj_at_k_run(p, s.attractor, s.run_sd, k, s.rule),
                })
                .collect();
            let (exact, complement): (Vec<f64>, Vec<f64>) = pairs.into_iter().unzip();
            let total: u64 = tallies
                .iter()
                .map(|t| match metric {
                    Metric::PassAtK => t.any_correct,
                    Metric::PassHatK => t.all_correct,
                    Metric::MajAtK => t.vote_wins,
                })
                .sum();
            points.push(VotePoint {
                series: si,
                k,
                metric,
                estimate: Estimate::new(
                    mean(&exact),
                    total as f64 / draws,
                    bernoulli_mean_se_with(&exact, &complement, votes),
                )
                .counting(1.0 / draws),
                // One run of k samples per problem: each problem's outcome is one
                // Bernoulli(q_i) with q_i already averaged over the run's eta.
                seed_sd: vote_seed_sd(&exact, &complement),
            });
        }
    }
    points
}

/// Stream tag of the run-by-run simulation of series with per-run noise.
const RUN_NOISE_STREAM: u64 = 0x72_75_6e_73_64; // "runsd"
