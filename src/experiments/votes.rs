//! `curves` and `attractor-sweep`: pass@k, pass^k and maj@k against k, exact and simulated.
//!
//! Depends on `scenario`, `model`, `exact` and `sim`; computes no closed form itself.
use serde::Serialize;

pub(crate) use super::points::{modes_label, short};
pub use super::points::{Metric, Series, VotePoint};
use super::selection::{self, Selector};
use super::{Check, Estimate, Progress};
use crate::exact::maj::{attractor_threshold, maj_at_k_all_with_loss, maj_ceiling};
use crate::exact::modes::{
    graded_rate, maj_at_k_modes, maj_ceiling_modes, winning_threshold, Extraction,
};
use crate::exact::noise::vote_seed_sd;
use crate::exact::pass::{
    bernoulli_mean_se_with, mean, pass_at_k, pass_at_k_complement, pass_hat_k,
    pass_hat_k_complement,
};
use crate::exact::run_corr;
use crate::model::{Grader, Model, Verifier, VoteRule};
use crate::scenario::{Scenario, SweepAxis};
use crate::sim::run_corr::{simulate_problem, RunProblem};
use crate::sim::votes::{simulate, ModeAnswers, VoteCell, VoteCounts};

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
    /// What an `attractor-sweep` varies, when not its model's one attractor share (`None` for
    /// `curves` and for that plain sweep).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub axis: Option<SweepAxis>,
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
                let omega = if s.run_sd > 0.0 {
                    format!(" run_sd={}", s.run_sd)
                } else {
                    String::new()
                };
                let mut cell = format!(
                    "model={} {} rule={} k={}{omega}",
                    s.model,
                    s.modes_label(),
                    s.vote_rule.as_str(),
                    pt.k
                );
                // The swept rate names the cell of a sweep over the grader's false positives.
                if let (Some(SweepAxis::GraderFpr), Some(g)) = (self.axis, s.grader) {
                    cell.push_str(&format!(" fpr={}", short(g.fpr)));
                }
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
    /// Per-run noise omega: 0 uses the independent-sample closed forms and sampler.
    run_sd: f64,
    /// Several attractors or extraction failures: the exact values of [`crate::exact::modes`]
    /// and the literal sampler. `None` for the canonical model (today's code path).
    modes: Option<ModeAnswers>,
    verifier: Option<Verifier>,
    grader: Option<Grader>,
}

impl SeriesSpec {
    /// A model's series with `attractors` (its own, or a swept vector) and its extraction.
    fn of(
        model: &Model,
        rates: Vec<f64>,
        attractors: Vec<f64>,
        split: f64,
        rule: VoteRule,
    ) -> Self {
        let extraction = Extraction {
            unparsed: model.unparsed,
            split,
        };
        let canonical = attractors.len() <= 1 && extraction == Extraction::default();
        SeriesSpec {
            model: model.name.clone(),
            rates,
            attractor: attractors.first().copied().unwrap_or(0.0),
            rule,
            modes: (!canonical).then_some(ModeAnswers {
                attractors,
                extraction,
                per_problem: None,
            }),
            verifier: model.verifier,
            grader: model.grader,
            run_sd: model.run_sd,
        }
    }
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
            SeriesSpec::of(
                model,
                model.rates_on(&bench),
                model.attractors.clone(),
                model.split,
                rule.unwrap_or(model.vote_rule),
            )
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

/// maj@k (and pass@k for comparison) for each swept value, one model: `axis` says whether a
/// value is one attractor share, a factor on the whole vector or the `split` share.
#[allow(clippy::too_many_arguments)]
pub fn attractor_sweep(
    scenario: &Scenario,
    name: &str,
    key: u64,
    model: usize,
    attractors: &[f64],
    axis: SweepAxis,
    ks: &[u32],
    votes: u64,
    rule: Option<VoteRule>,
    progress: Progress,
) -> VoteCurves {
    let m = &scenario.models[model];
    let rates = m.rates_on(&scenario.benchmark.rates());
    let specs: Vec<SeriesSpec> = attractors
        .iter()
        .map(|&x| {
            let (vector, split) = axis.apply(&m.attractors, m.split, x);
            // Swept false-positive rates grade every series (the model's fnr kept); other axes
            // keep the model's own grader.
            let grader = if axis == SweepAxis::GraderFpr {
                Some(Grader {
                    fpr: x,
                    fnr: m.grader.map_or(0.0, |g| g.fnr),
                })
            } else {
                m.grader
            };
            SeriesSpec {
                verifier: None,
                grader,
                run_sd: 0.0,
                ..SeriesSpec::of(m, rates.clone(), vector, split, rule.unwrap_or(m.vote_rule))
            }
        })
        .collect();
    let mut out = build(
        scenario.seed,
        name,
        key,
        &specs,
        ks,
        votes,
        &[Metric::PassAtK, Metric::MajAtK],
        progress,
    );
    out.axis =
        (axis != SweepAxis::Share(0) || specs.iter().any(|s| s.modes.is_some())).then_some(axis);
    out
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
                modes: s.modes.clone(),
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
                let graded: Vec<f64> = match &s.modes {
                    None => s.rates.clone(),
                    Some(md) => s
                        .rates
                        .iter()
                        .map(|&p| graded_rate(p, md.extraction))
                        .collect(),
                };
                let pairs: Vec<(f64, f64)> = match metric {
                    Metric::MajAtK if s.modes.is_some() => {
                        let md = s.modes.as_ref().expect("modes");
                        s.rates
                            .iter()
                            .map(|&p| maj_at_k_modes(p, &md.attractors, md.extraction, k, s.rule))
                            .collect()
                    }
                    Metric::PassAtK => graded
                        .iter()
                        .map(|&p| (pass_at_k(p, k), pass_at_k_complement(p, k)))
                        .collect(),
                    Metric::PassHatK => graded
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
        .map(|s| match &s.modes {
            None if s.run_sd > 0.0 => {
                let means: Vec<f64> = s
                    .rates
                    .iter()
                    .map(|&p| run_corr::run_moments(p, s.run_sd).mean)
                    .collect();
                Series {
                    model: s.model.clone(),
                    attractor: s.attractor,
                    vote_rule: s.rule,
                    pass_at_1: mean(&means),
                    threshold: attractor_threshold(s.attractor),
                    ceiling: run_corr::maj_ceiling_run(&s.rates, s.attractor, s.run_sd),
                    run_sd: s.run_sd,
                    attractors: Vec::new(),
                    unparsed: 0.0,
                    split: 0.0,
                    verifier: None,
                    best_ceiling: None,
                    best_leads: None,
                    grader: None,
                }
            }
            None => Series {
                model: s.model.clone(),
                attractor: s.attractor,
                vote_rule: s.rule,
                pass_at_1: mean(&s.rates),
                threshold: attractor_threshold(s.attractor),
                ceiling: maj_ceiling(&s.rates, s.attractor),
                run_sd: 0.0,
                attractors: Vec::new(),
                unparsed: 0.0,
                split: 0.0,
                verifier: None,
                best_ceiling: None,
                best_leads: None,
                grader: None,
            },
            Some(md) => Series {
                model: s.model.clone(),
                attractor: s.attractor,
                vote_rule: s.rule,
                pass_at_1: s
                    .rates
                    .iter()
                    .map(|&p| graded_rate(p, md.extraction))
                    .sum::<f64>()
                    / s.rates.len() as f64,
                threshold: winning_threshold(&md.attractors, md.extraction.split),
                ceiling: maj_ceiling_modes(
                    &s.rates,
                    &md.attractors,
                    md.extraction,
                    VoteRule::Random,
                ),
                run_sd: 0.0,
                attractors: if md.attractors.len() > 1 {
                    md.attractors.clone()
                } else {
                    Vec::new()
                },
                unparsed: md.extraction.unparsed,
                split: md.extraction.split,
                verifier: None,
                best_ceiling: None,
                best_leads: None,
                grader: None,
            },
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
            modes: s.modes.as_ref(),
        })
        .collect();
    selection::apply(seed, key, &selectors, ks, votes, &mut series, &mut points);
    VoteCurves {
        axis: None,
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
                    Metric::BestAtK => unreachable!("best@k points come from `selection`"),
                })
                .collect();
            let (exact, complement): (Vec<f64>, Vec<f64>) = pairs.into_iter().unzip();
            let total: u64 = tallies
                .iter()
                .map(|t| match metric {
                    Metric::PassAtK => t.any_correct,
                    Metric::PassHatK => t.all_correct,
                    Metric::MajAtK => t.vote_wins,
                    Metric::BestAtK => 0,
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
                truth: None,
            });
        }
    }
    points
}

/// Stream tag of the run-by-run simulation of series with per-run noise.
const RUN_NOISE_STREAM: u64 = 0x0072_756e_7364; // "runsd"
