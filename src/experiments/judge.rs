//! `judge`: a pairwise judge with position, verbosity and self-preference bias. For every
//! protocol (fixed order either way, both orders averaged, random order, length-controlled):
//! the reported win rate of B against the true one, the exact distribution of the reported rate
//! over N comparisons and its 95% range, and the comparisons the exact sign test needs to
//! detect a difference at 80% power (checked by simulated tests); and the decomposition of the
//! fixed-order rate into quality, verbosity, self-preference and position. Each exact value is
//! paired with a simulation.
//!
//! Depends on `scenario`, `model`, `exact` and `sim`; computes no closed form itself (those are
//! in [`crate::exact::judge`]).
use super::{ExperimentResult, KindResult, KindRun};
use crate::scenario::JudgeSpec;
use serde::Serialize;

use super::{Check, Estimate, Progress};
use crate::exact::judge::{
    rate_range, total_pmf, Component, Judge, LogLength, Protocol, RateRange, Score,
};
use crate::exact::sign_test::{questions_for_power, SampleSize};
use crate::scenario::Scenario;
use crate::sim::judge::{simulate_judge, simulate_sign_test, POWER_STREAM};

/// One protocol: what it reports, exactly and simulated.
#[derive(Debug, Clone, Serialize)]
pub struct ProtocolRow {
    /// The protocol.
    pub protocol: Protocol,
    /// Judge calls per question (2 for both orders).
    pub calls_per_question: u32,
    /// The exact law of one question's score.
    pub score: Score,
    /// B's reported win rate (mean score per question), exact and simulated.
    pub win_rate: Estimate,
    /// Reported minus true win rate (exact).
    pub bias: f64,
    /// What the protocol reports when the two models are equal on average (gap = 0, the same
    /// judge and lengths), exact.
    pub null_rate: f64,
    /// The central 95% range of the reported rate over N comparisons (exact), its tails and SD.
    pub range: RateRange,
    /// The exact distribution of the reported rate: P(total = t) for t = 0..=2N half points
    /// (rate t / 2N; a single judgment puts mass on even t only).
    pub distribution: Vec<f64>,
    /// Simulated reruns with each total, t = 0..=2N.
    pub histogram: Vec<u64>,
    /// Share of simulated reruns whose rate is below the range, against its exact value.
    pub below: Estimate,
    /// Share of simulated reruns whose rate is above the range, against its exact value.
    pub above: Estimate,
    /// Both orders: share of questions B wins twice, exact and simulated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wins_both: Option<Estimate>,
    /// Both orders: share of questions B loses twice, exact and simulated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loses_both: Option<Estimate>,
    /// Questions for 80% power of the exact two-sided 5% sign test of a 50% win rate.
    pub comparisons_80: SampleSize,
    /// Judge calls for that power (questions x calls per question).
    pub judge_calls_80: Option<u64>,
    /// Share of simulated sign tests on that many questions that reject, against the exact
    /// power.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub power_80: Option<Estimate>,
}

/// One step of the decomposition of the fixed-order (B first) rate.
#[derive(Debug, Clone, Serialize)]
pub struct ComponentRow {
    /// The step: the judge with the terms up to this one switched on.
    pub step: Component,
    /// Its win rate, exact and simulated.
    pub rate: Estimate,
    /// Exact change from the previous step (from 50% for the quality step).
    pub increment: f64,
    /// Questions for 80% power of this judge's sign test of a 50% win rate (the quality
    /// step's is what an unbiased judge needs to detect the true difference).
    pub comparisons_80: SampleSize,
    /// Share of simulated sign tests on that many questions that reject, against the exact
    /// power.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub power_80: Option<Estimate>,
}

/// Result of `judge`.
#[derive(Debug, Clone, Serialize)]
pub struct JudgeResult {
    /// Experiment name.
    pub experiment: String,
    /// Model A.
    pub a: String,
    /// Model B.
    pub b: String,
    /// The model of the judge's family, if any.
    pub judge_family: Option<String>,
    /// The judge and the models' quality and length laws.
    pub judge: Judge,
    /// Questions per rerun N.
    pub comparisons: u32,
    /// Simulated reruns of N questions.
    pub reruns: u64,
    /// The true win probability of B, E[expit(d)], exact and simulated (the decomposition's
    /// quality step).
    pub true_win: Estimate,
    /// One row per protocol, in [`Protocol::ALL`] order.
    pub protocols: Vec<ProtocolRow>,
    /// The decomposition, in [`Component::ALL`] order.
    pub components: Vec<ComponentRow>,
}

impl KindResult for JudgeResult {
    fn name(&self) -> &str {
        &self.experiment
    }

    /// Checks: every protocol's win rate and the two tails of its 95% range; both orders' shares
    /// of double wins and double losses; every decomposition step; the power of every sign test
    /// at its sample size.
    fn checks(&self) -> Vec<Check> {
        let mut out = Vec::new();
        let cell = |what: &str| format!("a={} b={} {what} N={}", self.a, self.b, self.comparisons);
        for r in &self.protocols {
            let c = cell(r.protocol.as_str());
            out.push(Check::new(&self.experiment, "win rate", &c, r.win_rate));
            out.push(Check::new(
                &self.experiment,
                "P(rate below 95% range)",
                &c,
                r.below,
            ));
            out.push(Check::new(
                &self.experiment,
                "P(rate above 95% range)",
                &c,
                r.above,
            ));
            if let Some(e) = r.wins_both {
                out.push(Check::new(&self.experiment, "P(B wins both orders)", &c, e));
            }
            if let Some(e) = r.loses_both {
                out.push(Check::new(
                    &self.experiment,
                    "P(B loses both orders)",
                    &c,
                    e,
                ));
            }
            if let (Some(e), Some(n)) = (r.power_80, r.comparisons_80.questions()) {
                let c = format!("a={} b={} {} N={n}", self.a, self.b, r.protocol.as_str());
                out.push(Check::new(&self.experiment, "power at N_80", &c, e));
            }
        }
        for r in &self.components {
            let c = cell(r.step.as_str());
            out.push(Check::new(&self.experiment, "decomposition", &c, r.rate));
            if let (Some(e), Some(n)) = (r.power_80, r.comparisons_80.questions()) {
                let c = format!("a={} b={} {} N={n}", self.a, self.b, r.step.as_str());
                out.push(Check::new(&self.experiment, "power at N_80", &c, e));
            }
        }
        out
    }
}

/// A share of `hits` in `trials` as an estimate of `p` (complement `q`, computed directly).
fn share(hits: u64, trials: u64, p: f64, q: f64) -> Estimate {
    let r = trials as f64;
    Estimate::new(p, hits as f64 / r, (p * q / r).sqrt()).counting(1.0 / r)
}

/// The questions a score law's sign test needs for 80% power, and the share of `reruns`
/// simulated tests on that many questions that reject (stream `[key, POWER_STREAM, row]`).
fn sample_size(
    scenario: &Scenario,
    key: u64,
    row: u64,
    s: &Score,
    reruns: u64,
) -> (SampleSize, Option<Estimate>) {
    let size = questions_for_power(s.lose, s.split, s.win);
    let check = match size {
        SampleSize::Questions {
            questions,
            power,
            miss,
        } => {
            let hits = simulate_sign_test(
                scenario.seed,
                &[key, POWER_STREAM, row],
                s,
                questions,
                reruns,
            );
            Some(share(hits, reruns, power, miss))
        }
        _ => None,
    };
    (size, check)
}

/// The judge of experiment fields: its laws of quality and length from the two models.
#[allow(clippy::too_many_arguments)]
pub fn judge_of(
    scenario: &Scenario,
    (a, b): (usize, usize),
    judge_family: Option<usize>,
    (gap, spread): (f64, f64),
    (position_bias, verbosity, self_preference): (f64, f64, f64),
) -> Judge {
    let length = |m: usize| {
        scenario.models[m]
            .tokens
            .as_ref()
            .map_or(LogLength::default(), |t| LogLength {
                mu: t.median_tokens.ln(),
                sigma: t.sigma,
            })
    };
    let family = match judge_family {
        Some(f) if f == b => 1.0,
        Some(f) if f == a => -1.0,
        _ => 0.0,
    };
    Judge {
        gap,
        spread,
        position_bias,
        verbosity,
        self_preference,
        family,
        length_a: length(a),
        length_b: length(b),
    }
}

/// Runs a `judge` experiment on `judge` over `comparisons` questions per rerun.
#[allow(clippy::too_many_arguments)]
pub fn judge(
    scenario: &Scenario,
    name: &str,
    key: u64,
    (a, b): (usize, usize),
    judge_family: Option<usize>,
    judge: Judge,
    comparisons: u32,
    reruns: u64,
    progress: Progress,
) -> JudgeResult {
    let n = comparisons as usize;
    let tally = simulate_judge(scenario.seed, &[key], &judge, n, reruns);
    progress(reruns.saturating_mul(u64::from(comparisons)));
    let questions = tally.questions;
    let true_score = judge.true_win();
    let null = judge.null();
    let protocols = Protocol::ALL
        .iter()
        .enumerate()
        .map(|(i, &protocol)| {
            let s = judge.score(protocol);
            let pmf = total_pmf(&s, n);
            let range = rate_range(&s, &pmf);
            let totals = &tally.totals[i];
            let top = (2 * n) as f64;
            let sum: u64 = totals.iter().enumerate().map(|(t, &c)| t as u64 * c).sum();
            let lo = (range.low * top).round() as usize;
            let hi = (range.high * top).round() as usize;
            let below: u64 = totals[..lo].iter().sum();
            let above: u64 = totals[hi + 1..].iter().sum();
            let [lose, _, win] = tally.scores[i];
            let both = protocol == Protocol::BothOrders;
            let calls = protocol.calls();
            let (n80, power_80) = sample_size(scenario, key, i as u64, &s, reruns);
            ProtocolRow {
                protocol,
                calls_per_question: calls,
                score: s,
                win_rate: Estimate::new(
                    s.mean(),
                    sum as f64 / (2.0 * questions as f64),
                    (s.variance() / questions as f64).sqrt(),
                )
                .counting(1.0 / questions as f64),
                bias: s.mean() - true_score.mean(),
                null_rate: null.score(protocol).mean(),
                range,
                distribution: pmf,
                histogram: totals.clone(),
                below: share(below, reruns, range.below, 1.0 - range.below),
                above: share(above, reruns, range.above, 1.0 - range.above),
                wins_both: both.then(|| share(win, questions, s.win, s.lose + s.split)),
                loses_both: both.then(|| share(lose, questions, s.lose, s.win + s.split)),
                comparisons_80: n80,
                judge_calls_80: n80.questions().map(|q| q * u64::from(calls)),
                power_80,
            }
        })
        .collect();
    let mut previous = 0.5;
    let components = Component::ALL
        .iter()
        .enumerate()
        .map(|(i, &step)| {
            let s = judge.component(step);
            let row = (Protocol::ALL.len() + i) as u64;
            let (comparisons_80, power_80) = sample_size(scenario, key, row, &s, reruns);
            let row = ComponentRow {
                step,
                rate: share(tally.components[i], questions, s.win, s.lose),
                increment: s.win - previous,
                comparisons_80,
                power_80,
            };
            previous = s.win;
            row
        })
        .collect();
    JudgeResult {
        experiment: name.into(),
        a: scenario.models[a].name.clone(),
        b: scenario.models[b].name.clone(),
        judge_family: judge_family.map(|f| scenario.models[f].name.clone()),
        judge,
        comparisons,
        reruns,
        true_win: share(
            tally.components[0],
            questions,
            true_score.win,
            true_score.lose,
        ),
        protocols,
        components,
    }
}

impl KindRun for JudgeSpec {
    fn draw_cost_ns(&self) -> u64 {
        150
    }

    fn run(
        &self,
        scenario: &Scenario,
        name: &str,
        key: u64,
        progress: Progress,
    ) -> ExperimentResult {
        let pair = (self.a, self.b);
        let j = judge_of(
            scenario,
            pair,
            self.judge_family,
            (self.gap, self.spread),
            (self.position_bias, self.verbosity, self.self_preference),
        );
        ExperimentResult::Judge(Box::new(judge(
            scenario,
            name,
            key,
            pair,
            self.judge_family,
            j,
            self.comparisons,
            self.reruns,
            progress,
        )))
    }
}
