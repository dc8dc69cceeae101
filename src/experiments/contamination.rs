//! `contamination`: the public-minus-fresh gap of a model that memorised a share of the public
//! benchmark, its exact distribution and detection test at given sizes, and the smallest fresh
//! set that detects the contamination, each paired with a literal simulation.
//!
//! Depends on `scenario`, `model`, `exact` and `sim`; computes no closed form itself (those are
//! in [`crate::exact::contamination`]).
use super::{ExperimentResult, KindResult, KindRun};
use crate::scenario::spec::ContaminationSpec;
use rayon::prelude::*;
use serde::Serialize;

use super::{Check, Estimate, Progress};
use crate::exact::contamination::{detection, normal_power, smallest_fresh_set, Contamination};
use crate::exact::grader::SampleGrading;
use crate::exact::noise::random_placement_moments;
use crate::model::{Difficulty, RateSource};
use crate::scenario::Scenario;
use crate::sim::contamination::simulate_gap;

/// One (share, fresh size) cell: the exact gap distribution's summary and test, simulated.
#[derive(Debug, Clone, Serialize)]
pub struct GapRow {
    /// Contaminated share c (0: the null, no contamination).
    pub share: f64,
    /// Fresh problems M.
    pub fresh: usize,
    /// Mean public-minus-fresh gap of pass@1 (fraction), exact c (r - E p), and simulated.
    pub gap: Estimate,
    /// Exact SD of the gap over reruns (fraction).
    pub gap_sd: f64,
    /// Detection threshold on the gap (fraction): contamination is flagged above it.
    pub threshold_gap: f64,
    /// Exact false-alarm rate of the threshold (c = 0), at most alpha.
    pub false_alarm: f64,
    /// P(flag) at this share (the false-alarm rate when c = 0), exact and simulated.
    pub power: Estimate,
    /// Normal approximation of the power (a sanity check, not tested).
    pub normal_power: f64,
}

/// The smallest fresh set that detects one share.
#[derive(Debug, Clone, Serialize)]
pub struct PlanRow {
    /// Contaminated share c.
    pub share: f64,
    /// Exact expected gap at this share (fraction).
    pub expected_gap: f64,
    /// The smallest fresh set M with power >= target, if one up to `max_fresh` reaches it.
    pub fresh: Option<usize>,
    /// Its threshold on the gap (fraction).
    pub threshold_gap: Option<f64>,
    /// Its false-alarm rate, exact and simulated.
    pub false_alarm: Option<Estimate>,
    /// Its power, exact and simulated.
    pub power: Option<Estimate>,
}

/// Result of `contamination`.
#[derive(Debug, Clone, Serialize)]
pub struct ContaminationResult {
    /// Experiment name.
    pub experiment: String,
    /// The contaminated model.
    pub model: String,
    /// Public problems N (the benchmark's).
    pub public_problems: usize,
    /// Samples per problem n.
    pub n: u32,
    /// Solve rate on memorised problems r.
    pub memorized_rate: f64,
    /// Population pass@1 E\[p\] of the model on fresh problems.
    pub fresh_pass_at_1: f64,
    /// False-alarm rate of the test.
    pub alpha: f64,
    /// Power the plan asks for.
    pub target_power: f64,
    /// Largest fresh set the plan scans.
    pub max_fresh: u32,
    /// Reruns per simulated cell.
    pub reruns: u64,
    /// The contaminated shares.
    pub shares: Vec<f64>,
    /// One row per (share, fresh size), the null (share 0) first.
    pub rows: Vec<GapRow>,
    /// One row per share.
    pub plan: Vec<PlanRow>,
}

impl KindResult for ContaminationResult {
    fn name(&self) -> &str {
        &self.experiment
    }

    /// Checks: the mean gap and P(flag) of every cell; the false alarm and power of every
    /// planned fresh set.
    fn checks(&self) -> Vec<Check> {
        let mut out = Vec::new();
        for r in &self.rows {
            let cell = format!("model={} c={} fresh={}", self.model, r.share, r.fresh);
            out.push(Check::new(&self.experiment, "mean gap", &cell, r.gap));
            out.push(Check::new(&self.experiment, "P(flag)", &cell, r.power));
        }
        for r in &self.plan {
            if let (Some(m), Some(fa), Some(pw)) = (r.fresh, r.false_alarm, r.power) {
                let cell = format!("model={} c={} planned fresh={m}", self.model, r.share);
                out.push(Check::new(&self.experiment, "false alarm", &cell, fa));
                out.push(Check::new(&self.experiment, "power", &cell, pw));
            }
        }
        out
    }
}

/// The flag rate of simulated (X, Y) pairs at threshold t on D = X M - Y N, as an estimate of
/// the exact probability `p` (complement `q`).
fn flag_rate(pairs: &[(u64, u64)], big_n: usize, big_m: usize, t: i64, p: f64, q: f64) -> Estimate {
    let r = pairs.len() as f64;
    let flags = pairs
        .iter()
        .filter(|&&(x, y)| x as i64 * big_m as i64 - y as i64 * big_n as i64 > t)
        .count();
    Estimate::new(p, flags as f64 / r, (p * q / r).sqrt()).counting(1.0 / r)
}

/// Stream tags: power-curve cells and planned sets.
const CURVE_STREAM: u64 = 1;
const PLAN_STREAM: u64 = 2;

/// Progress units of one (share, fresh size) cell: its reruns' problems (public and fresh) at
/// [`NS_PER_PROBLEM`], and as much again for its exact detection test.
fn cell_units(big_n: usize, fresh: usize, reruns: u64) -> u64 {
    2 * NS_PER_PROBLEM * reruns * (big_n + fresh) as u64
}

/// Progress units of one share's plan row: the search for the smallest fresh set (its size is
/// not known in advance: counted as a quarter of `max_fresh`) and its two checks at that size.
fn plan_units(big_n: usize, max_fresh: u32, reruns: u64) -> u64 {
    4 * cell_units(big_n, max_fresh as usize / 4, reruns)
}

/// Measured time of one problem of one rerun (a rate, e^x and a count), in nanoseconds.
const NS_PER_PROBLEM: u64 = 30;

/// Runs a `contamination` experiment (the spec's fields, resolved).
#[allow(clippy::too_many_arguments)]
pub fn contamination(
    scenario: &Scenario,
    name: &str,
    key: u64,
    model: usize,
    n: u32,
    fresh: &[u32],
    shares: &[f64],
    (alpha, target_power, max_fresh): (f64, f64, u32),
    reruns: u64,
    progress: Progress,
) -> ContaminationResult {
    let m = &scenario.models[model];
    let Difficulty::LogitNormal { mu, sigma, .. } = scenario.benchmark.difficulty else {
        unreachable!("the validator requires a logit-normal benchmark")
    };
    let shift = match m.source {
        RateSource::Shift(s) => s,
        RateSource::Rates(_) => unreachable!("the validator requires a shifted model"),
    };
    let r = m.memorized_rate.unwrap_or(1.0);
    let at = |c: f64| Contamination {
        mu: mu + shift,
        sigma,
        shift_sd: m.shift_sd,
        n,
        contaminated: c,
        memorized_rate: r,
        grading: SampleGrading::of(m),
    };
    let big_n = scenario.benchmark.problems;
    let simulate = |c: f64, tag: [u64; 3], m_fresh: usize| {
        simulate_gap(
            scenario.seed,
            &[key, tag[0], tag[1], tag[2]],
            &at(c),
            big_n,
            m_fresh,
            reruns,
        )
    };
    // Every (share, fresh size) cell and every share's plan is computed on its own (its own
    // streams), so they run in parallel and are collected in order.
    let cells: Vec<(usize, f64, u32)> = std::iter::once(0.0)
        .chain(shares.iter().copied())
        .enumerate()
        .flat_map(|(si, c)| fresh.iter().map(move |&mf| (si, c, mf)))
        .collect();
    let rows = || -> Vec<GapRow> {
        cells
            .par_iter()
            .map(|&(si, c, mf)| {
                let mf = mf as usize;
                let model = at(c);
                let d = detection(&model, big_n, mf, alpha);
                let pairs = simulate(c, [CURVE_STREAM, si as u64, mf as u64], mf);
                progress(cell_units(big_n, mf, reruns));
                let nf = f64::from(n);
                let gaps: Vec<f64> = pairs
                    .iter()
                    .map(|&(x, y)| x as f64 / (nf * big_n as f64) - y as f64 / (nf * mf as f64))
                    .collect();
                let sim_gap = gaps.iter().sum::<f64>() / gaps.len() as f64;
                let gap_sd = model.gap_sd(big_n, mf);
                let (p, q) = if c == 0.0 {
                    (d.false_alarm, 1.0 - d.false_alarm)
                } else {
                    (d.power, d.miss)
                };
                GapRow {
                    share: c,
                    fresh: mf,
                    gap: Estimate::new(
                        model.expected_gap(),
                        sim_gap,
                        gap_sd / (reruns as f64).sqrt(),
                    ),
                    gap_sd,
                    threshold_gap: d.threshold_gap,
                    false_alarm: d.false_alarm,
                    power: flag_rate(&pairs, big_n, mf, d.threshold, p, q),
                    normal_power: normal_power(&model, big_n, mf, alpha),
                }
            })
            .collect()
    };
    let plan = || -> Vec<PlanRow> {
        shares
            .par_iter()
            .enumerate()
            .map(|(si, &c)| {
                let model = at(c);
                let found =
                    smallest_fresh_set(&model, big_n, alpha, target_power, max_fresh as usize);
                let checked = found.map(|d| {
                    let mf = d.fresh_problems;
                    let null = simulate(0.0, [PLAN_STREAM, 2 * si as u64, mf as u64], mf);
                    let alt = simulate(c, [PLAN_STREAM, 2 * si as u64 + 1, mf as u64], mf);
                    (
                        flag_rate(
                            &null,
                            big_n,
                            mf,
                            d.threshold,
                            d.false_alarm,
                            1.0 - d.false_alarm,
                        ),
                        flag_rate(&alt, big_n, mf, d.threshold, d.power, d.miss),
                    )
                });
                progress(plan_units(big_n, max_fresh, reruns));
                PlanRow {
                    share: c,
                    expected_gap: model.expected_gap(),
                    fresh: found.map(|d| d.fresh_problems),
                    threshold_gap: found.map(|d| d.threshold_gap),
                    false_alarm: checked.map(|c| c.0),
                    power: checked.map(|c| c.1),
                }
            })
            .collect()
    };
    // The cells and the plan rows at the same time (the plan's searches are few and long).
    let (rows, plan) = rayon::join(rows, plan);
    ContaminationResult {
        experiment: name.into(),
        model: m.name.clone(),
        public_problems: big_n,
        n,
        memorized_rate: r,
        fresh_pass_at_1: random_placement_moments(mu + shift, sigma.hypot(m.shift_sd)).0,
        alpha,
        target_power,
        max_fresh,
        reruns,
        shares: shares.to_vec(),
        rows,
        plan,
    }
}

impl KindRun for ContaminationSpec {
    /// Already in nanoseconds ([`KindRun::planned_draws`]).
    fn draw_cost_ns(&self) -> u64 {
        1
    }

    /// Every cell's and every plan row's units, in nanoseconds: cells are weighted by their
    /// problems, which the scenario's count of ticks does not know.
    fn planned_draws(&self, scenario: &Scenario) -> Option<u64> {
        let big_n = scenario.benchmark.problems;
        let cells: u64 = self
            .fresh
            .iter()
            .map(|&m| cell_units(big_n, m as usize, self.reruns))
            .sum::<u64>()
            * (self.shares.len() as u64 + 1);
        Some(cells + self.shares.len() as u64 * plan_units(big_n, self.max_fresh, self.reruns))
    }

    fn run(
        &self,
        scenario: &Scenario,
        name: &str,
        key: u64,
        progress: Progress,
    ) -> ExperimentResult {
        ExperimentResult::Contamination(contamination(
            scenario,
            name,
            key,
            self.model,
            self.n,
            &self.fresh,
            &self.shares,
            (self.alpha, self.target_power, self.max_fresh),
            self.reruns,
            progress,
        ))
    }
}
