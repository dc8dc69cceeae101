//! `head-to-head`: how often the better of two models loses a rerun, each model sampled n times
//! per problem on its own seed: the exact odds of [`crate::exact::noise::head_to_head`] against
//! paired simulated reruns.
//!
//! Depends on `scenario`, `model`, `exact` and `sim`; computes no closed form and no Monte Carlo
//! SE itself (those are `sim::se`): it pairs.
use super::noise::{row_checks, run_count_pmf};
use super::{ExperimentResult, KindResult, KindRun};
use crate::scenario::HeadToHeadSpec;
use crate::sim::outcome::RUN_NOISE_STREAM;
use serde::Serialize;

use super::{Check, Estimate, Progress};
use crate::exact::grader::SampleGrading;
use crate::exact::noise::head_to_head as exact_h2h;
use crate::exact::noise::{head_to_head_of, HeadToHeadOdds};
use crate::exact::pass::mean;
use crate::exact::run_corr::run_moments;
use crate::exact::shift::{
    logit_correlation, per_problem_difference_sd, realised_logit_correlation,
};
use crate::model::Difficulty;
use crate::scenario::Scenario;
use crate::sim::counts::{pair_tallies, PairSampler};
use crate::sim::run_corr::simulate_reruns;
use crate::sim::se::proportion_se;

/// One n of a head-to-head experiment.
#[derive(Debug, Clone, Serialize)]
pub struct H2HRow {
    /// Samples per problem per model.
    pub n: u32,
    /// P(score_B < score_A): the better model loses the rerun.
    pub loss: Estimate,
    /// P(score_B = score_A).
    pub tie: Estimate,
    /// P(score_B > score_A).
    pub win: Estimate,
    /// P(score_B <= score_A).
    pub loss_or_tie: Estimate,
}

/// Result of `head-to-head`.
#[derive(Debug, Clone, Serialize)]
pub struct HeadToHead {
    /// Experiment name.
    pub experiment: String,
    /// Baseline model A.
    pub a: String,
    /// Challenger model B.
    pub b: String,
    /// pass@1 of A.
    pub pass_at_1_a: f64,
    /// pass@1 of B.
    pub pass_at_1_b: f64,
    /// With a noisy grader on either model: the true pass@1 of A and B. `pass_at_1_a`/`_b` and
    /// every row are then as graded, each sample's graded outcome being Bernoulli(p~) with
    /// p~ = p (1 - fnr) + (1 - p) fpr (see `exact::grader`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub true_pass_at_1: Option<(f64, f64)>,
    /// Paired reruns per n.
    pub reruns: u64,
    /// One row per n.
    pub rows: Vec<H2HRow>,
    /// How the two models disagree problem by problem: present when either has `shift_sd` > 0
    /// (absent, the result is what it was before `shift_sd` existed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disagreement: Option<Disagreement>,
    /// B is one of the benchmark's contaminated models: part of its lead is memorised problems.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub b_memorises: bool,
}

/// Per-problem disagreement of the two models of a head-to-head.
#[derive(Debug, Clone, Serialize)]
pub struct Disagreement {
    /// `shift_sd` of A.
    pub tau_a: f64,
    /// `shift_sd` of B.
    pub tau_b: f64,
    /// Implied correlation of the two models' logits over the population of problems,
    /// sigma^2 / sqrt((sigma^2 + tau_a^2)(sigma^2 + tau_b^2)) (logit-normal benchmark only).
    pub population_correlation: Option<f64>,
    /// Realised correlation of the two models' logits on this fixed benchmark.
    pub realised_correlation: Option<f64>,
    /// SD across problems of p_B,i - p_A,i on this benchmark.
    pub difference_sd: f64,
    /// The same SD with both models' constant shifts alone (tau = 0): what the difference
    /// would vary by without per-problem disagreement.
    pub difference_sd_constant_shift: f64,
    /// Per problem, in benchmark order: (benchmark rate p_i, p_B,i - p_A,i, the same difference
    /// with the constant shifts alone).
    pub per_problem: Vec<(f64, f64, f64)>,
}

impl KindResult for HeadToHead {
    fn name(&self) -> &str {
        &self.experiment
    }

    /// Checks: loss, tie and loss-or-tie rates per n.
    fn checks(&self) -> Vec<Check> {
        row_checks(&self.experiment, &self.rows, |r| {
            let quantities = [
                ("P(B < A)", r.loss),
                ("P(B = A)", r.tie),
                ("P(B <= A)", r.loss_or_tie),
            ];
            (format!("a={} b={} n={}", self.a, self.b, r.n), quantities)
        })
    }
}

/// Model b against model a on independent seeds, n samples per problem each, on the fixed
/// benchmark's rates: the exact odds of [`crate::exact::noise::head_to_head`] against paired
/// simulated reruns.
#[allow(clippy::too_many_arguments)]
pub fn run_head_to_head(
    scenario: &Scenario,
    name: &str,
    key: u64,
    a: usize,
    b: usize,
    ns: &[u32],
    reruns: u64,
    progress: Progress,
) -> HeadToHead {
    let bench = scenario.benchmark.rates();
    // pass@1 sees the parsed rate (1 - unparsed) p; attractors and split cannot change it.
    let (ma, mb) = (&scenario.models[a], &scenario.models[b]);
    let (ta, tb) = (
        ma.graded(ma.rates_on(&scenario.benchmark)),
        mb.graded(mb.rates_on(&scenario.benchmark)),
    );
    // A noisy grader turns each sample into a Bernoulli of its graded rate, independently (an
    // unparsed sample has no answer and is never graded correct).
    let graded = |m: usize, rates: &[f64]| -> Vec<f64> {
        let model = &scenario.models[m];
        match model.grader {
            Some(_) => {
                let grading = SampleGrading::of(model);
                model
                    .rates_on(&scenario.benchmark)
                    .iter()
                    .map(|&p| grading.rate(p, 1.0 - p).0)
                    .collect()
            }
            None => rates.to_vec(),
        }
    };
    let (ra, rb) = (graded(a, &ta), graded(b, &tb));
    let noisy = scenario.models[a].grader.is_some() || scenario.models[b].grader.is_some();
    let (oa, ob) = (scenario.models[a].run_sd, scenario.models[b].run_sd);
    if oa > 0.0 || ob > 0.0 {
        let mut out = head_to_head_run(
            scenario,
            name,
            key,
            (a, b),
            (&ra, &rb),
            ns,
            reruns,
            progress,
        );
        out.true_pass_at_1 = noisy.then(|| (mean(&ta), mean(&tb)));
        out.disagreement = disagreement(scenario, (a, b), &bench, (&ra, &rb));
        return out;
    }
    let samplers: Vec<PairSampler> = ns
        .iter()
        .map(|&n| PairSampler::new(n, &ra, &rb, reruns))
        .collect();
    let keys: Vec<[u64; 2]> = ns.iter().map(|&n| [key, u64::from(n)]).collect();
    let cells: Vec<(&[u64], &PairSampler)> = keys.iter().map(|k| &k[..]).zip(&samplers).collect();
    let tallies = pair_tallies(scenario.seed, &cells, reruns, progress);
    let rows = ns
        .iter()
        .zip(tallies)
        .map(|(&n, t)| {
            let (loss, tie) = (t.loss, t.tie);
            let exact = exact_h2h(&ra, &rb, n);
            h2h_row(n, &exact, (loss, tie), reruns)
        })
        .collect();
    let disagreement = disagreement(scenario, (a, b), &bench, (&ra, &rb));
    HeadToHead {
        experiment: name.into(),
        a: ma.name.clone(),
        b: mb.name.clone(),
        pass_at_1_a: mean(&ra),
        pass_at_1_b: mean(&rb),
        true_pass_at_1: noisy.then(|| (mean(&ta), mean(&tb))),
        reruns,
        rows,
        disagreement,
        b_memorises: scenario.benchmark.contaminated_models.contains(&b),
    }
}

/// One row of a head-to-head: the exact odds against `loss` and `tie` counted in `reruns` paired
/// reruns, each a proportion with its binomial SE.
fn h2h_row(n: u32, exact: &HeadToHeadOdds, (loss, tie): (u64, u64), reruns: u64) -> H2HRow {
    let r = reruns as f64;
    let est = |p: f64, hits: u64| {
        Estimate::new(p, hits as f64 / r, proportion_se(p, reruns)).counting(1.0 / r)
    };
    H2HRow {
        n,
        loss: est(exact.loss, loss),
        tie: est(exact.tie, tie),
        win: est(exact.win, reruns - loss - tie),
        loss_or_tie: est(exact.loss_or_tie(), loss + tie),
    }
}

/// The per-problem disagreement of a head-to-head when either model has `shift_sd` > 0.
fn disagreement(
    scenario: &Scenario,
    (a, b): (usize, usize),
    bench: &[f64],
    (ra, rb): (&[f64], &[f64]),
) -> Option<Disagreement> {
    let (ma, mb) = (&scenario.models[a], &scenario.models[b]);
    (ma.shift_sd > 0.0 || mb.shift_sd > 0.0).then(|| {
        let sigma = match scenario.benchmark.difficulty {
            Difficulty::LogitNormal { sigma, .. } => Some(sigma),
            Difficulty::Rates { .. } => None,
        };
        let (ca, cb) = (
            ma.constant_shift_rates_on(&scenario.benchmark),
            mb.constant_shift_rates_on(&scenario.benchmark),
        );
        Disagreement {
            tau_a: ma.shift_sd,
            tau_b: mb.shift_sd,
            // Memorised problems leave the logit-normal: no implied population correlation.
            population_correlation: sigma
                .filter(|_| ma.memorized_rate.is_none() && mb.memorized_rate.is_none())
                .and_then(|s| logit_correlation(s, ma.shift_sd, mb.shift_sd)),
            realised_correlation: realised_logit_correlation(ra, rb),
            difference_sd: per_problem_difference_sd(ra, rb),
            difference_sd_constant_shift: per_problem_difference_sd(&ca, &cb),
            per_problem: (0..bench.len())
                .map(|i| (bench[i], rb[i] - ra[i], cb[i] - ca[i]))
                .collect(),
        }
    })
}

/// [`run_head_to_head`] when a model has per-run noise: exact odds from the two count pmfs
/// ([`head_to_head_of`] of [`count_pmf_of`] on [`count_pmf_run`]), simulated reruns drawn
/// literally for each model on its own stream.
#[allow(clippy::too_many_arguments)]
fn head_to_head_run(
    scenario: &Scenario,
    name: &str,
    key: u64,
    (a, b): (usize, usize),
    (ra, rb): (&[f64], &[f64]),
    ns: &[u32],
    reruns: u64,
    progress: Progress,
) -> HeadToHead {
    let (ma, mb) = (&scenario.models[a], &scenario.models[b]);
    let long_run = |rates: &[f64], omega: f64| {
        rates
            .iter()
            .map(|&p| run_moments(p, omega).mean)
            .sum::<f64>()
            / rates.len() as f64
    };
    let rows = ns
        .iter()
        .map(|&n| {
            let path = |side: u64| [key, u64::from(n), RUN_NOISE_STREAM, side];
            let ta = simulate_reruns(scenario.seed, &path(0), ra, ma.run_sd, n, reruns);
            let tb = simulate_reruns(scenario.seed, &path(1), rb, mb.run_sd, n, reruns);
            progress(2 * reruns);
            let loss = ta.iter().zip(&tb).filter(|(x, y)| y < x).count() as u64;
            let tie = ta.iter().zip(&tb).filter(|(x, y)| y == x).count() as u64;
            let exact = head_to_head_of(
                &run_count_pmf(ra, ma.run_sd, n),
                &run_count_pmf(rb, mb.run_sd, n),
            );
            h2h_row(n, &exact, (loss, tie), reruns)
        })
        .collect();
    HeadToHead {
        experiment: name.into(),
        a: ma.name.clone(),
        b: mb.name.clone(),
        pass_at_1_a: long_run(ra, ma.run_sd),
        pass_at_1_b: long_run(rb, mb.run_sd),
        true_pass_at_1: None,
        reruns,
        rows,
        disagreement: None,
        b_memorises: scenario.benchmark.contaminated_models.contains(&b),
    }
}

impl KindRun for HeadToHeadSpec {
    fn draw_cost_ns(&self) -> u64 {
        250
    }

    fn run(
        &self,
        scenario: &Scenario,
        name: &str,
        key: u64,
        progress: Progress,
    ) -> ExperimentResult {
        ExperimentResult::HeadToHead(run_head_to_head(
            scenario,
            name,
            key,
            self.a,
            self.b,
            &self.n,
            self.reruns,
            progress,
        ))
    }
}
