//! `curves` and `attractor-sweep`: pass@k, pass^k and maj@k against k, exact and simulated.
//!
//! Depends on `scenario`, `model`, `exact` and `sim`; computes no closed form itself.
use super::{ExperimentResult, KindResult, KindRun};
use crate::scenario::spec::{AttractorSweepSpec, CurvesSpec};
use serde::Serialize;

pub(crate) use super::points::{modes_label, short};
pub use super::points::{Memorised, Metric, Series, VotePoint};
use super::{Check, Estimate, Progress};
use rayon::prelude::*;

use crate::exact::noise::vote_seed_sd;
use crate::exact::outcome::OutcomeModel;
use crate::exact::pass::{bernoulli_mean_se_with, mean};
use crate::model::{Benchmark, Grader, Model, VoteRule};
use crate::scenario::{Scenario, SweepAxis};
use crate::sim;
use crate::sim::outcome::OutcomeSeries;

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

impl KindResult for VoteCurves {
    fn name(&self) -> &str {
        &self.experiment
    }

    /// Every point as a check.
    fn checks(&self) -> Vec<Check> {
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
                    quantity: format!("{} true", pt.metric.name()),
                    cell: cell.clone(),
                    estimate: truth,
                });
                let quantity = if pt.truth.is_some() {
                    format!("{} graded", pt.metric.name())
                } else {
                    pt.metric.name()
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
    outcome: OutcomeModel,
    shift_sd: f64,
    memorised: Option<Memorised>,
}

impl SeriesSpec {
    /// A model's series with `attractors` (its own, or a swept vector) and its `split` share.
    fn of(
        model: &Model,
        benchmark: &Benchmark,
        rates: Vec<f64>,
        attractors: Vec<f64>,
        split: f64,
        rule: VoteRule,
    ) -> Self {
        let mut outcome = OutcomeModel::of(model, rule);
        outcome.attractors = attractors;
        outcome.extraction.split = split;
        SeriesSpec {
            model: model.name.clone(),
            rates,
            outcome,
            shift_sd: model.shift_sd,
            memorised: model.memorized_rate.map(|rate| Memorised {
                share: benchmark.contaminated,
                rate,
            }),
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
    submissions: &[u32],
    votes: u64,
    rule: Option<VoteRule>,
    progress: Progress,
) -> VoteCurves {
    let specs = curve_specs(scenario, models, rule);
    let metrics: Vec<Metric> = [Metric::PassAtK, Metric::PassHatK, Metric::MajAtK]
        .into_iter()
        .chain(submissions.iter().map(|&n| Metric::SubmitAtK(n)))
        .chain(submissions.iter().map(|&n| Metric::VerifiedAtK(n)))
        .collect();
    build(
        scenario.seed,
        name,
        key,
        &specs,
        ks,
        votes,
        &metrics,
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
    let specs = sweep_specs(scenario, model, attractors, axis, rule);
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
    out.axis = (axis != SweepAxis::Share(0) || specs.iter().any(|s| !s.outcome.is_canonical()))
        .then_some(axis);
    out
}

/// The series of `curves`: each listed model as it is.
fn curve_specs(scenario: &Scenario, models: &[usize], rule: Option<VoteRule>) -> Vec<SeriesSpec> {
    models
        .iter()
        .map(|&m| {
            let model = &scenario.models[m];
            SeriesSpec::of(
                model,
                &scenario.benchmark,
                model.rates_on(&scenario.benchmark),
                model.attractors.clone(),
                model.split,
                rule.unwrap_or(model.vote_rule),
            )
        })
        .collect()
}

/// The series of `attractor-sweep`: the model at each swept value.
fn sweep_specs(
    scenario: &Scenario,
    model: usize,
    attractors: &[f64],
    axis: SweepAxis,
    rule: Option<VoteRule>,
) -> Vec<SeriesSpec> {
    let m = &scenario.models[model];
    let rates = m.rates_on(&scenario.benchmark);
    attractors
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
            let mut spec = SeriesSpec::of(
                m,
                &scenario.benchmark,
                rates.clone(),
                vector,
                split,
                rule.unwrap_or(m.vote_rule),
            );
            spec.outcome.verifier = None;
            spec.outcome.grader = grader;
            spec.outcome.run_sd = 0.0;
            spec
        })
        .collect()
}

/// The progress units of the votes of `specs` at each of `ks`: `votes` per problem, each weighted
/// by [`sim::outcome::vote_weight`] of its series and k, and the exact values' cost.
fn planned_votes(scenario: &Scenario, specs: &[SeriesSpec], ks: &[u32], votes: u64) -> u64 {
    let problems = scenario.benchmark.problems as u64;
    let weights: u64 = specs
        .iter()
        .flat_map(|s| ks.iter().map(|&k| sim::outcome::vote_weight(&s.outcome, k)))
        .sum();
    let exact: u64 = specs.iter().map(|s| exact_weight(&s.outcome)).sum();
    weights
        .saturating_mul(votes)
        .saturating_mul(problems)
        .saturating_add(exact * ks.len() as u64 * problems)
}

/// The exact values' cost of one problem at one k, in the progress units of a vote (10 ns):
/// the score verifier's best@k and per-run noise are integrals (about 1.4 ms and 0.3 ms a
/// problem on one thread); the other metrics are closed forms, next to nothing.
fn exact_weight(outcome: &OutcomeModel) -> u64 {
    let score = matches!(outcome.verifier, Some(crate::model::Verifier::Score { .. }));
    let integrals = if score { 140_000 } else { 0 };
    integrals + if outcome.run_sd != 0.0 { 30_000 } else { 0 }
}

/// Every point of every series: each metric's exact value from the series' outcome model and its
/// simulated value from the outcome sampler, as graded (with the true value beside it when the
/// model has a grader). Points are in (series, k, metric) order, best@k last.
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
    let inputs: Vec<OutcomeSeries> = specs
        .iter()
        .map(|s| OutcomeSeries {
            outcome: &s.outcome,
            rates: &s.rates,
        })
        .collect();
    let submissions: Vec<u32> = metrics
        .iter()
        .filter_map(|m| match m {
            Metric::SubmitAtK(n) => Some(*n),
            _ => None,
        })
        .collect();
    // The exact values, (series, k) in parallel, while the simulation runs.
    let (tallies, exact) = rayon::join(
        || sim::outcome::simulate(seed, key, &inputs, ks, &submissions, &[], votes, progress),
        || exact_values(specs, ks, metrics, progress),
    );
    let mut points = Vec::new();
    for (si, s) in specs.iter().enumerate() {
        let o = &s.outcome;
        let trials = votes as f64 * s.rates.len() as f64;
        for (ki, &k) in ks.iter().enumerate() {
            let tally = &tallies[si][ki];
            let estimate = |pairs: &[(f64, f64)], metric: Metric, graded: bool| {
                let (exact, complement): (Vec<f64>, Vec<f64>) = pairs.iter().copied().unzip();
                let hits: u64 = tally.iter().map(|t| t.hits(metric, graded)).sum();
                (
                    Estimate::new(
                        mean(&exact),
                        hits as f64 / trials,
                        bernoulli_mean_se_with(&exact, &complement, votes),
                    )
                    .counting(1.0 / trials),
                    // Each problem's outcome in one run is one Bernoulli(q_i), for every metric.
                    vote_seed_sd(&exact, &complement),
                )
            };
            for (metric, graded_pairs, true_pairs) in &exact[si * ks.len() + ki] {
                let metric = *metric;
                let graded = o.grader.is_some();
                let (est, seed_sd) = estimate(graded_pairs, metric, graded);
                let truth = true_pairs
                    .as_ref()
                    .map(|pairs| estimate(pairs, metric, false).0);
                points.push(VotePoint {
                    series: si,
                    k,
                    metric,
                    estimate: est,
                    seed_sd,
                    truth,
                });
            }
        }
    }
    let series = specs
        .iter()
        .enumerate()
        .map(|(si, s)| summary(si, s, &points))
        .collect();
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

/// Per problem, a metric's (value, complement) pairs.
type Pairs = Vec<(f64, f64)>;

/// The exact values of every (series, k), in that order, each (series, k) in parallel: per
/// metric, its per-problem pairs as graded, and the true ones beside them when the model has a
/// grader.
fn exact_values(
    specs: &[SeriesSpec],
    ks: &[u32],
    metrics: &[Metric],
    progress: Progress,
) -> Vec<Vec<(Metric, Pairs, Option<Pairs>)>> {
    let cells: Vec<(usize, u32)> = (0..specs.len())
        .flat_map(|si| ks.iter().map(move |&k| (si, k)))
        .collect();
    cells
        .par_iter()
        .map(|&(si, k)| {
            let s = &specs[si];
            let o = &s.outcome;
            let values = o
                .metrics(metrics)
                .into_iter()
                .map(|metric| {
                    let truth = o.grader.map(|_| o.value(&s.rates, metric, k));
                    (metric, o.graded(&s.rates, metric, k), truth)
                })
                .collect();
            progress(s.rates.len() as u64 * exact_weight(o));
            values
        })
        .collect()
}

/// A series' summary from its outcome model; best@k's leads over maj@k read from its points.
fn summary(si: usize, s: &SeriesSpec, points: &[VotePoint]) -> Series {
    let o = &s.outcome;
    let exact = |k: u32, metric: Metric| {
        points
            .iter()
            .find(|q| q.series == si && q.k == k && q.metric == metric)
            .map(|q| q.estimate.exact)
    };
    let leads = o.verifier.map(|_| {
        points
            .iter()
            .filter(|pt| pt.series == si && pt.metric == Metric::BestAtK)
            .filter(|pt| exact(pt.k, Metric::MajAtK).is_some_and(|m| pt.estimate.exact > m))
            .map(|pt| pt.k)
            .collect()
    });
    Series {
        model: s.model.clone(),
        attractor: o.attractor(),
        vote_rule: o.rule,
        pass_at_1: o.pass_at_1(&s.rates),
        threshold: o.threshold(),
        ceiling: o.ceiling(&s.rates),
        run_sd: o.run_sd,
        attractors: if o.attractors.len() > 1 {
            o.attractors.clone()
        } else {
            Vec::new()
        },
        unparsed: o.extraction.unparsed,
        split: o.extraction.split,
        verifier: o.verifier,
        best_ceiling: o.best_ceiling(&s.rates),
        best_leads: leads,
        grader: o.grader,
        shift_sd: s.shift_sd,
        memorised: s.memorised,
    }
}

impl KindRun for CurvesSpec {
    fn draw_cost_ns(&self) -> u64 {
        10
    }

    /// Votes weighted by their series' cost (verifiers, graders, answers drawn one by one),
    /// which the scenario's count of ticks does not know.
    fn planned_draws(&self, scenario: &Scenario) -> Option<u64> {
        let specs = curve_specs(scenario, &self.models, self.vote_rule);
        Some(planned_votes(scenario, &specs, &self.k, self.votes))
    }

    fn run(
        &self,
        scenario: &Scenario,
        name: &str,
        key: u64,
        progress: Progress,
    ) -> ExperimentResult {
        ExperimentResult::Curves(curves(
            scenario,
            name,
            key,
            &self.models,
            &self.k,
            &self.submissions,
            self.votes,
            self.vote_rule,
            progress,
        ))
    }
}

impl KindRun for AttractorSweepSpec {
    fn draw_cost_ns(&self) -> u64 {
        10
    }

    /// As for `curves`: votes weighted by their series' cost.
    fn planned_draws(&self, scenario: &Scenario) -> Option<u64> {
        let specs = sweep_specs(
            scenario,
            self.model,
            &self.attractors,
            self.axis,
            self.vote_rule,
        );
        Some(planned_votes(scenario, &specs, &self.k, self.votes))
    }

    fn run(
        &self,
        scenario: &Scenario,
        name: &str,
        key: u64,
        progress: Progress,
    ) -> ExperimentResult {
        ExperimentResult::AttractorSweep(attractor_sweep(
            scenario,
            name,
            key,
            self.model,
            &self.attractors,
            self.axis,
            &self.k,
            self.votes,
            self.vote_rule,
            progress,
        ))
    }
}
