//! `plan`: how many problems N and samples per problem n tell two models apart.
//!
//! For every cell (N, n, gap) and three designs (fixed benchmark; population paired; population
//! unpaired) it reports the SE of the score difference, the 95% CI half-width, the power of a
//! paired 5% test, and the probability that the better model B loses (or ties) a rerun: exact by
//! convolution on the fixed benchmark where N n <= [`EXACT_MAX_SAMPLES`], a normal approximation
//! otherwise and for the population designs.
//!
//! B's logit on a problem is A's + gap + tau e with e ~ N(0, 1) (tau = `shift_sd`, 0 by default;
//! see `exact::plan`). For every (design, N, n) the plan also reports the minimum detectable gap
//! at 80% power (and the user's `target_power`), with the cell there simulated and checked. The
//! exact values come from `exact::plan`; this module builds the grid and pairs them with the
//! simulation.
//!
//! The score is a [`PlanMetric`]: pass@1 averaged over n samples per problem, or maj@k (one majority
//! vote of k samples per problem, so the grid's second axis is k). Either way a problem's
//! contribution to a rerun is a count c ~ Bin(t, f) given its solve rate p, with (t, f) = (n, p)
//! for pass@1 and (1, maj@k(p)) for maj@k, and every exact formula is written in (t, f).
//!
//! Simulated checks (for the cells [`CheckCells`] picks, in every design): paired reruns drawn
//! literally (binomial counts, or majority votes scored answer by answer; population designs redraw
//! the N problems from the logit-normal every rerun). Checked against exact values by z-score:
//! the mean and the SD of the difference in every design (the SD's standard error from the exact
//! fourth moment), and loss and loss-or-tie where they are exact. Where loss and tie come from the
//! normal approximation the simulated rates are reported beside it but not checked: their gap to
//! the approximation measures the approximation, not a bug.
use super::{ExperimentResult, KindResult, KindRun};
use crate::scenario::{PlanExperimentSpec, Scenario};
use std::time::Instant;

use rayon::prelude::*;
use serde::Serialize;

use super::{Check, Estimate, Progress};
use crate::exact::maj::{maj_at_k_all, maj_at_k_pq};
use crate::exact::modes::Extraction;
use crate::exact::noise::sd_standard_error;
use crate::exact::plan::{
    fixed_cell, fixed_count_moments, fixed_pair_logit_correlation, fixed_pair_rates_with,
    graded_pass1, graded_vote, pair_logit_correlation, population_cell, sum_moments,
    PopulationNodes,
};
pub use crate::scenario::spec::{
    CheckCells, Design, ModelShiftSd, Plan, PlanAnswers, PlanMetric, PlanSpec,
};
use crate::sim::counts::PairTally as Tally;
pub use crate::sim::plan::simulate;
use crate::sim::plan::simulate_chosen;

mod detect;
use detect::detectable_exact;
#[cfg(test)]
use detect::power_at;

/// Largest N t (count trials per model per rerun: N n for pass@1, N for maj@k) for which the
/// exact convolution is used; the normal approximation (with continuity correction) beyond.
pub const EXACT_MAX_SAMPLES: u64 = 64_000;

/// The power the minimum detectable gap is computed for (besides the user's `target_power`).
pub const DETECT_POWER: f64 = 0.8;

/// A simulated check of one cell.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SimCheck {
    /// Paired reruns.
    pub reruns: u64,
    /// P(B < A) against the cell's value (exact, or the normal approximation: see `method`).
    pub loss: Estimate,
    /// P(B <= A) against the cell's value.
    pub loss_or_tie: Estimate,
    /// Mean of score_B - score_A against the exact gap.
    pub gap: Estimate,
    /// SD of score_B - score_A against the exact SE (its own SE from the exact fourth moment).
    pub sd: Estimate,
}

/// One (design, N, n, gap) cell.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanCell {
    /// The design.
    pub design: Design,
    /// N.
    pub problems: usize,
    /// n (pass@1) or k (maj@k).
    pub samples: u32,
    /// Logit shift of B over A.
    pub gap_logits: f64,
    /// Gap E[score_B - score_A] under the design (a fraction), as the harness scores it (graded
    /// when the models carry `unparsed`, `split`, several attractors or a grader).
    pub gap: f64,
    /// The true gap (every answer parsed in one form, graded perfectly) when the harness's
    /// differs from it; None (left out of the JSON) for the canonical model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub true_gap: Option<f64>,
    /// SD of score_B - score_A over reruns (a fraction).
    pub se: f64,
    /// 95% CI half-width 1.96 se.
    pub halfwidth: f64,
    /// Power of a two-sided 5% test: Phi(gap/se - 1.96) + Phi(-gap/se - 1.96).
    pub power: f64,
    /// P(score_B < score_A).
    pub loss: f64,
    /// P(score_B = score_A).
    pub tie: f64,
    /// P(score_B <= score_A).
    pub loss_or_tie: f64,
    /// `exact` (convolution) or `normal` (approximation) for loss and tie.
    pub method: &'static str,
    /// SD of model A's score over draws of N problems from the population from question
    /// sampling alone, sqrt(Var f_A / N): what a fixed-benchmark half-width leaves out.
    pub question_se: f64,
    /// The simulated check, when this cell was simulated.
    pub sim: Option<SimCheck>,
}

impl PlanCell {
    /// Whether the simulated loss and loss-or-tie are checked (only against exact values).
    pub fn loss_checked(&self) -> bool {
        self.method == "exact"
    }
}

/// The smallest cell meeting one target.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Answer {
    /// The design.
    pub design: Design,
    /// Logit shift of B over A.
    pub gap_logits: f64,
    /// `loss_or_tie` or `halfwidth`.
    pub target: &'static str,
    /// The bound.
    pub bound: f64,
    /// (N, n, value) of the cell with the fewest samples N n that meets the bound.
    pub best: Option<(usize, u32, f64)>,
}

/// The minimum detectable gap of one (design, N, n): the smallest logit shift of B over A
/// whose power reaches `power`, with the cell's exact values (and its simulated check) there.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Detectable {
    /// The design.
    pub design: Design,
    /// N.
    pub problems: usize,
    /// n (pass@1) or k (maj@k).
    pub samples: u32,
    /// The power aimed at (0.8, or the user's `target_power`).
    pub power: f64,
    /// The cell at the minimum detectable gap (`gap_logits` is the gap); None when even 40
    /// logits fall short.
    pub cell: Option<PlanCell>,
}

/// Result of a plan.
#[derive(Debug, Clone, Serialize)]
pub struct PlanResult {
    /// Experiment name (`plan` from the command line): the stem of the output files.
    pub experiment: String,
    /// The inputs.
    pub spec: Plan,
    /// Every cell: designs, then gaps, then N, then n.
    pub cells: Vec<PlanCell>,
    /// Per (gap, design, target) the smallest cell meeting it.
    pub answers: Vec<Answer>,
    /// Per design, N, n and power (80%, then the user's target): the minimum detectable gap.
    pub detectable: Vec<Detectable>,
    /// Correlation of A's and B's per-problem logits: (fixed benchmark at each N, population).
    pub logit_correlation: (Vec<(usize, f64)>, f64),
    /// Per-problem draws (counts or votes) the simulation made.
    pub draws: u64,
}

impl KindResult for PlanResult {
    fn name(&self) -> &str {
        &self.experiment
    }

    /// Checks of simulated against exact values: mean and SD of the difference in every
    /// simulated cell, loss and loss-or-tie where they are exact.
    fn checks(&self) -> Vec<Check> {
        let mut out = Vec::new();
        let at_detectable = self.detectable.iter().filter_map(|d| {
            d.cell
                .as_ref()
                .map(|c| (c, format!(" (minimum detectable at power {})", d.power)))
        });
        let grid = self.cells.iter().map(|c| (c, String::new()));
        for (c, note) in grid.chain(at_detectable) {
            let Some(s) = c.sim else { continue };
            let cell = format!(
                "design={} metric={} N={} {}={} gap_logits={}{note}",
                c.design.as_str(),
                self.spec.metric.label(),
                c.problems,
                if matches!(self.spec.metric, PlanMetric::Pass1) {
                    "n"
                } else {
                    "k"
                },
                c.samples,
                c.gap_logits
            );
            let mut push =
                |q: &str, e: Estimate| out.push(Check::new(&self.experiment, q, &cell, e));
            if c.loss_checked() {
                push("P(B < A)", s.loss);
                push("P(B <= A)", s.loss_or_tie);
            }
            push("mean of B - A", s.gap);
            push("sd of B - A", s.sd);
        }
        out
    }
}

impl KindRun for PlanExperimentSpec {
    /// Already in nanoseconds ([`crate::scenario::spec::Plan::rerun_cost`]).
    fn draw_cost_ns(&self) -> u64 {
        1
    }

    fn run(
        &self,
        _scenario: &Scenario,
        name: &str,
        _key: u64,
        progress: Progress,
    ) -> ExperimentResult {
        ExperimentResult::Plan(Box::new(run_plan(&self.plan, name, progress).0))
    }
}

/// The per-problem success probability f of a true solve rate p as the plan's harness scores
/// it: pass@1 of the graded rate ([`graded_pass1`]: unparsed answers, a noisy grader), or the
/// vote graded correct ([`graded_vote`]: several attractors, split, unparsed, a grader). The
/// canonical model keeps its original formulas, bit for bit.
fn score(spec: &Plan, p: f64, samples: u32) -> f64 {
    let a = &spec.answers;
    match spec.metric {
        PlanMetric::Pass1 if !a.changes(spec.metric) => p,
        PlanMetric::Pass1 => graded_pass1(p, a.unparsed, a.grader),
        PlanMetric::Maj { attractor, rule } if a.is_canonical() => {
            maj_at_k_pq(p, attractor * (1.0 - p), samples, rule)
        }
        PlanMetric::Maj { rule, .. } => graded_vote(
            p,
            &vote_shares(spec),
            extraction(a),
            a.grader,
            samples,
            rule,
        ),
    }
}

/// The per-problem success probability of a true solve rate p with every answer parsed in one
/// form and graded perfectly (the model's attractors kept): p for pass@1, maj@k of the true
/// votes for maj@k. What the plan shows as the true gap beside the graded one.
fn true_score(spec: &Plan, p: f64, samples: u32) -> f64 {
    match spec.metric {
        PlanMetric::Pass1 => p,
        PlanMetric::Maj { rule, .. } => graded_vote(
            p,
            &vote_shares(spec),
            Extraction::default(),
            None,
            samples,
            rule,
        ),
    }
}

/// The attractor shares of a plan's votes: the model's list, or the metric's one share.
fn vote_shares(spec: &Plan) -> Vec<f64> {
    match spec.metric {
        _ if !spec.answers.attractors.is_empty() => spec.answers.attractors.clone(),
        PlanMetric::Maj { attractor, .. } => vec![attractor],
        PlanMetric::Pass1 => Vec::new(),
    }
}

fn extraction(a: &PlanAnswers) -> Extraction {
    Extraction {
        unparsed: a.unparsed,
        split: a.split,
    }
}

/// f of every rate (maj@k of the canonical model shares its conditional win table across
/// problems).
fn scores(spec: &Plan, rates: &[f64], samples: u32) -> Vec<f64> {
    match spec.metric {
        _ if spec.answers.changes(spec.metric) => {
            rates.iter().map(|&p| score(spec, p, samples)).collect()
        }
        PlanMetric::Pass1 => rates.to_vec(),
        PlanMetric::Maj { attractor, rule } => maj_at_k_all(rates, attractor, samples, rule),
    }
}

/// The true gap (every answer parsed, graded perfectly) of a cell whose harness numbers are
/// graded; None for the canonical model, whose gap is the true one. Fixed: the mean of the true
/// per-problem values over the benchmark; population: over the population table.
fn true_gap(spec: &Plan, design: Design, gap: f64, big_n: usize, n: u32) -> Option<f64> {
    if !spec.answers.changes(spec.metric) {
        return None;
    }
    Some(match design {
        Design::Fixed => {
            let (ra, rb) = fixed_pair_rates_with(
                spec.mu,
                spec.sigma,
                gap,
                spec.deviation_sds(),
                spec.deviation_name(),
                big_n,
            );
            let mean = |r: &[f64]| r.iter().map(|&p| true_score(spec, p, n)).sum::<f64>();
            (mean(&rb) - mean(&ra)) / big_n as f64
        }
        _ => population_true_gap(spec, gap, n),
    })
}

/// The true population gap of (gap, n) (see [`true_gap`]).
fn population_true_gap(spec: &Plan, gap: f64, n: u32) -> f64 {
    let taus = spec.deviation_sds();
    let deciding = deciding_samples(spec, n);
    let m = PopulationNodes::with_deviations(spec.mu, spec.sigma, gap, taus, deciding, |p| {
        true_score(spec, p, n)
    })
    .moments();
    m.mean_b - m.mean_a
}

/// Population tables per (gap, samples): one per gap for pass@1 (f = p does not depend on n),
/// one per (gap, k) for maj@k. Indexed `[gap][samples index or 0]`.
fn population_tables(spec: &Plan) -> Vec<Vec<PopulationNodes>> {
    spec.gaps
        .par_iter()
        .map(|&gap| match spec.metric {
            PlanMetric::Pass1 => vec![population_nodes(spec, gap, 1)],
            PlanMetric::Maj { .. } => spec
                .samples
                .par_iter()
                .map(|&k| population_nodes(spec, gap, k))
                .collect(),
        })
        .collect()
}

/// The population table of one (gap, samples): f = p for pass@1, maj@k(p) for maj@k; over
/// both models' deviations ([`PlanSpec::deviation_sds`]).
fn population_nodes(spec: &Plan, gap: f64, samples: u32) -> PopulationNodes {
    population_nodes_given_a(spec, gap, samples, None)
}

/// [`population_nodes`] with A's column when already computed by [`population_a_column`].
fn population_nodes_given_a(
    spec: &Plan,
    gap: f64,
    samples: u32,
    fa: Option<Vec<f64>>,
) -> PopulationNodes {
    let (mu, sigma, taus) = (spec.mu, spec.sigma, spec.deviation_sds());
    let (f, deciding) = (node_score(spec, samples), deciding_samples(spec, samples));
    PopulationNodes::with_deviations_given_a(mu, sigma, gap, taus, deciding, fa, f)
}

/// How many samples decide one per-problem score of `samples` ([`score`], [`true_score`]): 1
/// for pass@1 (a score per sample), k for a maj@k vote.
fn deciding_samples(spec: &Plan, samples: u32) -> u32 {
    match spec.metric {
        PlanMetric::Pass1 => 1,
        PlanMetric::Maj { .. } => samples,
    }
}

/// A's column of every population table of `samples` (it does not depend on the gap).
fn population_a_column(spec: &Plan, samples: u32) -> Vec<f64> {
    let f = node_score(spec, samples);
    PopulationNodes::a_column(spec.mu, spec.sigma, spec.deviation_sds(), f)
}

/// f of a population node: p itself for the canonical pass@1, else [`score`].
fn node_score(spec: &Plan, samples: u32) -> impl Fn(f64) -> f64 + Sync + '_ {
    let plain = spec.metric == PlanMetric::Pass1 && !spec.answers.changes(spec.metric);
    move |p| if plain { p } else { score(spec, p, samples) }
}

fn table<'a>(
    spec: &Plan,
    tables: &'a [Vec<PopulationNodes>],
    gap: f64,
    samples: u32,
) -> &'a PopulationNodes {
    let gi = spec.gaps.iter().position(|&g| g == gap).unwrap_or(0);
    let si = match spec.metric {
        PlanMetric::Pass1 => 0,
        PlanMetric::Maj { .. } => spec.samples.iter().position(|&s| s == samples).unwrap_or(0),
    };
    &tables[gi][si]
}

/// Per-problem scores f of A and B on the fixed benchmark of N problems (the logits carry the
/// models' fixed offsets, [`crate::exact::plan::fixed_pair_rates_with`]).
fn fixed_scores(spec: &Plan, big_n: usize, samples: u32, gap: f64) -> (Vec<f64>, Vec<f64>) {
    let (ra, rb) = fixed_pair_rates_with(
        spec.mu,
        spec.sigma,
        gap,
        spec.deviation_sds(),
        spec.deviation_name(),
        big_n,
    );
    (scores(spec, &ra, samples), scores(spec, &rb, samples))
}

/// Exact values of every cell (no simulation). Fixed-design convolutions run in parallel.
/// Time: dominated by the largest convolution, O(t N log(t N) log N) per fixed cell, and for
/// maj@k by tabulating maj@k on 20,001 population nodes per (gap, k), O(k) each.
pub fn exact_plan_cells(spec: &Plan) -> Vec<PlanCell> {
    exact_cells_with(spec, &population_tables(spec))
}

/// [`exact_plan_cells`] of a pass@1 [`PlanSpec`].
pub fn exact_cells(spec: &PlanSpec) -> Vec<PlanCell> {
    exact_plan_cells(&spec.clone().pass1())
}

fn exact_cells_with(spec: &Plan, tables: &[Vec<PopulationNodes>]) -> Vec<PlanCell> {
    let mut keys = Vec::new();
    for design in Design::ALL {
        for &gap in &spec.gaps {
            for &big_n in &spec.problems {
                for &n in &spec.samples {
                    keys.push((design, gap, big_n, n));
                }
            }
        }
    }
    // The true population gap of each (gap, n), once (graded plans only).
    let truth: Vec<((f64, u32), f64)> = if spec.answers.changes(spec.metric) {
        let pairs: Vec<(f64, u32)> = spec
            .gaps
            .iter()
            .flat_map(|&g| spec.samples.iter().map(move |&n| (g, n)))
            .collect();
        pairs
            .par_iter()
            .map(|&(g, n)| ((g, n), population_true_gap(spec, g, n)))
            .collect()
    } else {
        Vec::new()
    };
    keys.par_iter()
        .map(|&(design, gap, big_n, n)| {
            let pop_truth = truth
                .iter()
                .find(|(key, _)| *key == (gap, n))
                .map(|&(_, t)| t);
            exact_cell(
                spec,
                (design, gap, big_n, n),
                table(spec, tables, gap, n),
                pop_truth,
            )
        })
        .collect()
}

/// The exact values of one cell (design, gap, N, n); `nodes` is the population table of
/// (gap, n), `pop_truth` the true population gap of (gap, n) when already computed.
fn exact_cell(
    spec: &Plan,
    (design, gap, big_n, n): (Design, f64, usize, u32),
    nodes: &PopulationNodes,
    pop_truth: Option<f64>,
) -> PlanCell {
    let true_gap = match (design, pop_truth) {
        (Design::PopulationPaired | Design::PopulationUnpaired, Some(t)) => Some(t),
        _ => true_gap(spec, design, gap, big_n, n),
    };
    let t = spec.metric.trials(n);
    let m = nodes.moments();
    let v = match design {
        Design::Fixed => {
            let (fa, fb) = fixed_scores(spec, big_n, n, gap);
            fixed_cell(&fa, &fb, t, EXACT_MAX_SAMPLES)
        }
        Design::PopulationPaired | Design::PopulationUnpaired => {
            population_cell(&m, t, big_n, design == Design::PopulationPaired)
        }
    };
    PlanCell {
        design,
        problems: big_n,
        samples: n,
        gap_logits: gap,
        gap: v.gap,
        true_gap,
        se: v.se,
        halfwidth: v.halfwidth,
        power: v.power,
        loss: v.loss,
        tie: v.tie,
        loss_or_tie: crate::exact::rounded_probability(v.loss + v.tie),
        method: if v.exact_loss { "exact" } else { "normal" },
        question_se: (m.var_a / big_n as f64).sqrt(),
        sim: None,
    }
}

/// The powers the minimum detectable gap is computed for: 80%, then the user's target.
fn detect_powers(spec: &Plan) -> Vec<f64> {
    let mut p = vec![DETECT_POWER];
    if let Some(t) = spec.target_power.filter(|&t| t != DETECT_POWER) {
        p.push(t);
    }
    p
}

/// Variance and fourth central moment of the count difference D = T_B - T_A of one cell;
/// `nodes` is the population table of its (gap, n).
fn exact_count_moments(spec: &Plan, nodes: &PopulationNodes, c: &PlanCell) -> (f64, f64) {
    let t = spec.metric.trials(c.samples);
    match c.design {
        Design::Fixed => {
            let (fa, fb) = fixed_scores(spec, c.problems, c.samples, c.gap_logits);
            fixed_count_moments(&fa, &fb, t)
        }
        design => {
            let (v1, m41) = nodes.count_diff_moments(t, design == Design::PopulationPaired);
            sum_moments(v1, m41, c.problems)
        }
    }
}

/// Runs the plan: exact cells, the simulated checks, and the answers, with how long the exact
/// and the simulated parts took. `experiment` names the
/// output files (`plan` from the command line); the random streams do not depend on it, so a
/// scenario's plan and `evalsim plan` with the same inputs and seed give the same numbers.
pub fn run_plan(spec: &Plan, experiment: &str, progress: Progress) -> (PlanResult, PlanTiming) {
    let (mut result, exact) = exact_plan(spec, experiment);
    let timing = simulate_plan(spec, &mut result, exact, progress);
    (result, timing)
}

/// What the simulated checks of a plan need from its exact part besides the result: the
/// population tables of the grid and of each minimum detectable gap, and the time it took.
pub struct ExactTables {
    tables: Vec<Vec<PopulationNodes>>,
    detectable: Vec<Option<PopulationNodes>>,
    exact_s: f64,
}

/// The exact part of [`run_plan`]: every cell, the answers and the minimum detectable gaps,
/// with no simulated check yet (each cell's `sim` is None and `draws` 0), so the answer can be
/// shown before the simulation runs.
pub fn exact_plan(spec: &Plan, experiment: &str) -> (PlanResult, ExactTables) {
    let t0 = Instant::now();
    let tables = population_tables(spec);
    let cells = exact_cells_with(spec, &tables);
    let (detectable, nodes): (Vec<Detectable>, Vec<Option<PopulationNodes>>) =
        detectable_exact(spec).into_iter().unzip();
    let answers = answers(spec, &cells);
    let logit_correlation = (
        spec.problems
            .iter()
            .map(|&big_n| {
                (
                    big_n,
                    fixed_pair_logit_correlation(
                        spec.sigma,
                        spec.deviation_sds(),
                        spec.deviation_name(),
                        big_n,
                    ),
                )
            })
            .collect(),
        pair_logit_correlation(spec.sigma, spec.deviation_sds()),
    );
    let result = PlanResult {
        experiment: experiment.to_string(),
        spec: spec.clone(),
        cells,
        answers,
        detectable,
        logit_correlation,
        draws: 0,
    };
    let exact = ExactTables {
        tables,
        detectable: nodes,
        exact_s: t0.elapsed().as_secs_f64(),
    };
    (result, exact)
}

/// The simulated part of [`run_plan`]: the checked cells of the grid and the checks at the
/// minimum detectable gaps (80% power) of the checked (N, n), as one list of cells, written
/// into `result`'s cells, with the time of both parts. Progress is reported in the units of
/// [`Plan::rerun_cost`].
pub fn simulate_plan(
    spec: &Plan,
    result: &mut PlanResult,
    exact: ExactTables,
    progress: Progress,
) -> PlanTiming {
    let t = Instant::now();
    let mut chosen: Vec<(Design, (f64, usize, u32))> = Design::ALL
        .iter()
        .flat_map(|&d| spec.checked_cells(d).into_iter().map(move |c| (d, c)))
        .collect();
    let grid = chosen.len();
    let wanted: Vec<usize> = (0..result.detectable.len())
        .filter(|&i| {
            let d = &result.detectable[i];
            d.power == DETECT_POWER
                && d.cell.is_some()
                && exact.detectable[i].is_some()
                && spec
                    .detectable_checked(d.design)
                    .contains(&(d.problems, d.samples))
        })
        .collect();
    chosen.extend(wanted.iter().filter_map(|&i| {
        let d = &result.detectable[i];
        d.cell
            .as_ref()
            .map(|c| (d.design, (c.gap_logits, d.problems, d.samples)))
    }));
    let tallies = simulate_chosen(spec, &chosen, progress);
    let mut draws = 0u64;
    for (&(design, (gap, big_n, n)), &tally) in chosen.iter().zip(&tallies).take(grid) {
        let Some(c) = result.cells.iter_mut().find(|c| {
            c.design == design && c.gap_logits == gap && c.problems == big_n && c.samples == n
        }) else {
            continue;
        };
        draws += 2 * big_n as u64 * spec.reruns_of(design);
        let nodes = table(spec, &exact.tables, gap, n);
        c.sim = Some(sim_check(spec, nodes, c, tally));
    }
    for (&i, &tally) in wanted.iter().zip(&tallies[grid..]) {
        let d = &mut result.detectable[i];
        if let (Some(c), Some(nodes)) = (d.cell.as_mut(), exact.detectable[i].as_ref()) {
            draws += 2 * c.problems as u64 * spec.reruns_of(c.design);
            c.sim = Some(sim_check(spec, nodes, c, tally));
        }
    }
    result.draws = draws;
    PlanTiming {
        exact_cells: result.cells.len(),
        exact_s: exact.exact_s,
        simulated_s: t.elapsed().as_secs_f64(),
    }
}

/// The simulated check of one cell from its tally, against the cell's exact values.
fn sim_check(spec: &Plan, nodes: &PopulationNodes, c: &PlanCell, tally: Tally) -> SimCheck {
    let reruns = spec.reruns_of(c.design);
    let r = reruns as f64;
    let scale = f64::from(spec.metric.trials(c.samples)) * c.problems as f64;
    let (var_d, mu4_d) = exact_count_moments(spec, nodes, c);
    let est = |p: f64, hits: u64| {
        Estimate::new(p, hits as f64 / r, (p * (1.0 - p) / r).sqrt()).counting(1.0 / r)
    };
    let rr = reruns as i128;
    let sim_var = if reruns > 1 {
        (rr * tally.sum_sq - tally.sum * tally.sum) as f64 / (r * (r - 1.0))
    } else {
        0.0
    };
    SimCheck {
        reruns,
        loss: est(c.loss, tally.loss),
        loss_or_tie: est(c.loss_or_tie, tally.loss + tally.tie),
        gap: Estimate::new(c.gap, tally.sum as f64 / r / scale, c.se / r.sqrt()),
        sd: Estimate::new(
            c.se,
            sim_var.max(0.0).sqrt() / scale,
            sd_standard_error(var_d, mu4_d, reruns) / scale,
        ),
    }
}

/// How long a plan's two parts took, measured on their own (they run at the same time). Not
/// part of the result: timings differ from run to run, the result does not.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlanTiming {
    /// Cells computed exactly.
    pub exact_cells: usize,
    /// Wall time of the exact cells (population tables included), in seconds.
    pub exact_s: f64,
    /// Wall time of the simulated checks, in seconds.
    pub simulated_s: f64,
}

/// Per gap, design and target: the cell with the fewest samples N n meeting the bound (ties go
/// to the better value).
fn answers(spec: &Plan, cells: &[PlanCell]) -> Vec<Answer> {
    let mut out = Vec::new();
    for &gap in &spec.gaps {
        for design in Design::ALL {
            for (target, bound) in [
                ("loss_or_tie", spec.target_loss_or_tie),
                ("halfwidth", spec.target_halfwidth),
            ] {
                let value = |c: &PlanCell| {
                    if target == "loss_or_tie" {
                        c.loss_or_tie
                    } else {
                        c.halfwidth
                    }
                };
                let best = cells
                    .iter()
                    .filter(|c| c.design == design && c.gap_logits == gap && value(c) <= bound)
                    .min_by(|a, b| {
                        let ka = a.problems as u64 * u64::from(a.samples);
                        let kb = b.problems as u64 * u64::from(b.samples);
                        ka.cmp(&kb).then(value(a).total_cmp(&value(b)))
                    })
                    .map(|c| (c.problems, c.samples, value(c)));
                out.push(Answer {
                    design,
                    gap_logits: gap,
                    target,
                    bound,
                    best,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::noise::head_to_head;
    use crate::experiments::Z_BOUND;
    use crate::model::{quantile_rates, shift_rate, VoteRule};

    fn base(reruns: u64) -> PlanSpec {
        PlanSpec {
            mu: 0.2,
            sigma: 2.2,
            gaps: vec![0.21],
            problems: vec![30, 100],
            samples: vec![1, 4],
            target_loss_or_tie: 0.05,
            target_halfwidth: 0.02,
            reruns,
            check_cells: CheckCells::All,
            seed: 7,
            shift_sd: 0.0,
            target_power: None,
            model_shift_sd: None,
        }
    }

    fn spec(reruns: u64) -> Plan {
        Plan {
            check_population: CheckCells::All,
            population_reruns: reruns,
            ..base(reruns).pass1()
        }
    }

    #[test]
    fn fixed_cells_match_head_to_head_and_simulation() {
        let r = run_plan(&spec(40_000), "plan", &|_| {}).0;
        assert_eq!(r.cells.len(), 3 * 4);
        let ra = quantile_rates(0.2, 2.2, 30);
        let rb: Vec<f64> = ra.iter().map(|&p| shift_rate(p, 0.21)).collect();
        let h = head_to_head(&ra, &rb, 1);
        let c = &r.cells[0];
        assert_eq!((c.problems, c.samples), (30, 1));
        assert_eq!(c.loss_or_tie, h.loss + h.tie);
        let checks = r.checks();
        // Fixed: loss, loss-or-tie, mean and SD in 4 cells; population: mean and SD in 2 x 4.
        // The same checks again at the 80% minimum detectable gaps.
        assert_eq!(checks.len(), 2 * (4 * 4 + 2 * 4 * 2));
        for ch in checks {
            assert!(ch.estimate.z.abs() <= Z_BOUND, "{ch:?}");
        }
        // Population loss and tie are reported beside the normal approximation, never checked.
        let pop = r
            .cells
            .iter()
            .find(|c| c.design == Design::PopulationPaired);
        assert!(pop.is_some_and(|c| c.sim.is_some() && !c.loss_checked()));
    }

    fn maj_grid(reruns: u64, problems: Vec<usize>, samples: Vec<u32>) -> Plan {
        Plan {
            spec: PlanSpec {
                problems,
                samples,
                ..base(reruns)
            },
            metric: PlanMetric::Maj {
                attractor: 0.5,
                rule: VoteRule::Random,
            },
            check_population: CheckCells::All,
            population_reruns: reruns,
            answers: PlanAnswers::default(),
        }
    }

    fn maj_spec(reruns: u64) -> Plan {
        maj_grid(reruns, vec![20, 200], vec![3, 16])
    }

    #[test]
    fn population_and_maj_simulations_agree_with_exact_moments() {
        let r = run_plan(&maj_spec(30_000), "plan", &|_| {}).0;
        let checks = r.checks();
        // The same checks again at the 80% minimum detectable gaps.
        assert_eq!(checks.len(), 2 * (4 * 4 + 2 * 4 * 2));
        for ch in &checks {
            assert!(ch.estimate.z.abs() <= Z_BOUND, "{ch:?}");
        }
        // The SD checks have honest standard errors: a wrong exact SD (here 5% off, far less
        // than the gap between the designs) is caught.
        let c = r
            .cells
            .iter()
            .find(|c| {
                c.design == Design::PopulationUnpaired && c.problems == 200 && c.samples == 16
            })
            .expect("cell");
        let sd = c.sim.expect("simulated").sd;
        assert!(
            ((sd.sim - 1.05 * sd.exact) / sd.se).abs() > Z_BOUND,
            "{sd:?}"
        );
    }

    /// maj@k of one problem by enumerating all 3^k sample sequences (correct, attractor, one
    /// distinct one-off per sample) and scoring each vote with the spec's rule.
    fn brute_maj(p: f64, a: f64, k: u32) -> f64 {
        let (q, r) = (a * (1.0 - p), (1.0 - a) * (1.0 - p));
        let mut total = 0.0;
        for code in 0..3u32.pow(k) {
            let (mut c, mut at, mut s, mut prob, mut x) = (0u32, 0u32, 0u32, 1.0, code);
            for _ in 0..k {
                match x % 3 {
                    0 => (c, prob) = (c + 1, prob * p),
                    1 => (at, prob) = (at + 1, prob * q),
                    _ => (s, prob) = (s + 1, prob * r),
                }
                x /= 3;
            }
            let m = c.max(at).max(u32::from(s > 0));
            let tied = u32::from(c == m) + u32::from(at == m) + if m == 1 { s } else { 0 };
            if c == m && c >= 1 {
                total += prob / f64::from(tied);
            }
        }
        total
    }

    #[test]
    fn maj_fixed_loss_and_tie_equal_brute_force() {
        let s = maj_grid(0, vec![2], vec![3]);
        let r = run_plan(&s, "plan", &|_| {}).0;
        let c = &r.cells[0];
        assert_eq!((c.design, c.method), (Design::Fixed, "exact"));
        let ra = quantile_rates(0.2, 2.2, 2);
        let ma: Vec<f64> = ra.iter().map(|&p| brute_maj(p, 0.5, 3)).collect();
        let mb: Vec<f64> = ra
            .iter()
            .map(|&p| brute_maj(shift_rate(p, 0.21), 0.5, 3))
            .collect();
        // Every pattern of vote wins of A and B on the two problems.
        let (mut loss, mut tie) = (0.0, 0.0);
        for bits in 0..16u32 {
            let w = |i: u32| bits >> i & 1;
            let pr = |m: f64, win: u32| if win == 1 { m } else { 1.0 - m };
            let prob = pr(ma[0], w(0)) * pr(ma[1], w(1)) * pr(mb[0], w(2)) * pr(mb[1], w(3));
            let (ta, tb) = (w(0) + w(1), w(2) + w(3));
            if tb < ta {
                loss += prob;
            } else if tb == ta {
                tie += prob;
            }
        }
        assert!((c.loss - loss).abs() < 1e-12, "{} vs {loss}", c.loss);
        assert!((c.tie - tie).abs() < 1e-12, "{} vs {tie}", c.tie);
        let gap = (mb[0] + mb[1] - ma[0] - ma[1]) / 2.0;
        assert!((c.gap - gap).abs() < 1e-12);
    }

    #[test]
    fn population_results_do_not_depend_on_thread_count() {
        let mut s = maj_spec(9_000);
        s.spec.check_cells = CheckCells::None;
        let run = |threads| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("pool");
            pool.install(|| serde_json::to_string(&run_plan(&s, "plan", &|_| {}).0).expect("json"))
        };
        assert_eq!(run(1), run(3));
    }

    #[test]
    fn progress_counts_the_planned_cost_of_every_design() {
        let s = spec(3_000);
        let done = std::sync::atomic::AtomicU64::new(0);
        let tick = |n: u64| {
            done.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        };
        let r = run_plan(&s, "plan", &tick).0;
        assert!(r.draws > 0);
        let (done, planned) = (done.into_inner(), s.planned_cost());
        // Each group of fixed cells reports batches at its mean cost, rounded down.
        assert!(
            done <= planned && done as f64 >= 0.999 * planned as f64,
            "{done} of {planned}"
        );
    }

    #[test]
    fn shift_sd_cells_and_detectable_gaps_pass_their_checks() {
        let mut s = spec(20_000);
        s.spec.shift_sd = 1.0;
        s.spec.target_power = Some(0.9);
        let r = run_plan(&s, "plan", &|_| {}).0;
        let checks = r.checks();
        // Grid: 4 fixed cells x 4 checks + 2 population designs x 4 cells x 2; the same again at
        // the 80% minimum detectable gaps.
        assert_eq!(checks.len(), 2 * (4 * 4 + 2 * 4 * 2));
        for ch in &checks {
            assert!(ch.estimate.z.abs() <= Z_BOUND, "{ch:?}");
        }
        // Every minimum detectable gap is the root of the exact power: its power reaches the
        // target, a gap a millionth smaller does not.
        assert_eq!(r.detectable.len(), 3 * 4 * 2);
        for d in &r.detectable {
            let c = d.cell.as_ref().expect("reached");
            assert!(c.power >= d.power && c.power < d.power + 1e-9, "{d:?}");
            let below = power_at(
                &s,
                d.design,
                d.problems,
                d.samples,
                c.gap_logits * (1.0 - 1e-6),
            );
            assert!(below < d.power, "{d:?}");
        }
        // Disagreement costs the paired design precision that tau = 0 does not pay.
        let r0 = run_plan(&spec(0), "plan", &|_| {}).0;
        let paired = |r: &PlanResult| {
            r.cells
                .iter()
                .find(|c| {
                    c.design == Design::PopulationPaired && c.problems == 100 && c.samples == 4
                })
                .map(|c| c.se)
                .expect("cell")
        };
        assert!(paired(&r) > 1.1 * paired(&r0));
    }

    #[test]
    fn b_with_its_own_shift_sd_beside_a_models_passes_its_checks_in_every_design() {
        // A deviates with tau_A = 0.6 (its model's shift_sd), B with its own tau_B = 1.4 (the
        // plan block's shift_sd): exact values over B given A, simulation literal.
        let mut s = spec(20_000);
        s.spec.model_shift_sd = Some(ModelShiftSd {
            model: "long".into(),
            tau: 0.6,
            tau_b: Some(1.4),
        });
        assert_eq!(s.deviation_sds(), (0.6, 1.4));
        let r = run_plan(&s, "plan", &|_| {}).0;
        let checks = r.checks();
        assert_eq!(checks.len(), 2 * (4 * 4 + 2 * 4 * 2));
        for ch in &checks {
            assert!(ch.estimate.z.abs() <= Z_BOUND, "{ch:?}");
        }
        // The population correlation is sigma^2 / sqrt((sigma^2 + tau_A^2)(sigma^2 + tau_B^2)).
        let want = 4.84 / ((4.84f64 + 0.36) * (4.84 + 1.96)).sqrt();
        assert!((r.logit_correlation.1 - want).abs() < 1e-15);
        // Swapping the two SDs changes the answer (B's own SD is not A's).
        let mut swapped = s.clone();
        swapped.spec.model_shift_sd = Some(ModelShiftSd {
            model: "long".into(),
            tau: 1.4,
            tau_b: Some(0.6),
        });
        let rs = run_plan(&swapped, "plan", &|_| {}).0;
        assert_ne!(r.cells[0].loss_or_tie, rs.cells[0].loss_or_tie);
    }

    #[test]
    fn a_models_own_shift_sd_passes_its_checks_in_every_design() {
        // A and B each deviate with tau = 1 (the model's shift_sd): the exact values integrate
        // B given A (slope and residual SD), the simulation draws z, e_A and e_B literally.
        let mut s = spec(20_000);
        s.spec.model_shift_sd = Some(ModelShiftSd {
            model: "long".into(),
            tau: 1.0,
            tau_b: None,
        });
        let r = run_plan(&s, "plan", &|_| {}).0;
        let checks = r.checks();
        assert_eq!(checks.len(), 2 * (4 * 4 + 2 * 4 * 2));
        for ch in &checks {
            assert!(ch.estimate.z.abs() <= Z_BOUND, "{ch:?}");
        }
        // The population correlation is sigma^2 / (sigma^2 + tau^2).
        assert!((r.logit_correlation.1 - 4.84 / 5.84).abs() < 1e-15);
        // Each model deviating costs the paired design more than B alone deviating (tau^2 vs
        // 2 tau^2 of difference variance on the logit scale).
        let mut b_only = spec(0);
        b_only.spec.shift_sd = 1.0;
        let rb = run_plan(&b_only, "plan", &|_| {}).0;
        let paired = |r: &PlanResult| {
            r.cells
                .iter()
                .find(|c| {
                    c.design == Design::PopulationPaired && c.problems == 100 && c.samples == 4
                })
                .map(|c| c.se)
                .expect("cell")
        };
        assert!(
            paired(&r) > 1.1 * paired(&rb),
            "{} {}",
            paired(&r),
            paired(&rb)
        );
        // A's fixed rates at N = 30 are the ones every other experiment gives model `long`.
        let (ra, _) = fixed_scores(&s, 30, 1, 0.21);
        let model = crate::model::Model {
            name: "long".into(),
            source: crate::model::RateSource::Shift(0.0),
            attractor: 0.5,
            vote_rule: VoteRule::Random,
            tokens: None,
            run_sd: 0.0,
            memorized_rate: None,
            attractors: vec![0.5],
            unparsed: 0.0,
            split: 0.0,
            shift_sd: 1.0,
            verifier: None,
            grader: None,
            confidence: None,
        };
        let bench = crate::model::Benchmark {
            problems: 30,
            difficulty: crate::model::Difficulty::LogitNormal {
                mu: 0.2,
                sigma: 2.2,
                placement: crate::model::Placement::Quantiles,
            },
            contaminated: 0.0,
            contaminated_models: Vec::new(),
        };
        let want = model.rates_on(&bench);
        for (x, y) in ra.iter().zip(&want) {
            assert!((x - y).abs() < 1e-15, "{x} vs {y}");
        }
    }

    fn judge() -> Option<crate::model::Grader> {
        Some(crate::model::Grader {
            fpr: 0.1,
            fnr: 0.05,
        })
    }

    #[test]
    fn graded_pass1_cells_pass_their_checks_in_every_design() {
        // Unparsed answers and a noisy grader: the exact values integrate the graded rate, the
        // simulation parses, solves and grades every sample stage by stage.
        let mut s = spec(20_000);
        s.answers = PlanAnswers {
            unparsed: 0.05,
            grader: judge(),
            ..PlanAnswers::default()
        };
        let r = run_plan(&s, "plan", &|_| {}).0;
        let checks = r.checks();
        assert_eq!(checks.len(), 2 * (4 * 4 + 2 * 4 * 2));
        for ch in &checks {
            assert!(ch.estimate.z.abs() <= Z_BOUND, "{ch:?}");
        }
        // The graded gap is the true gap times b = (1 - u)(1 - fpr - fnr) (p~ is affine in p).
        let b = 0.95 * (1.0 - 0.1 - 0.05);
        for c in &r.cells {
            let t = c.true_gap.expect("graded");
            assert!((c.gap - b * t).abs() <= 1e-12 * t.abs(), "{c:?}");
        }
        // A wrong exact value (the true gap instead of the graded) is caught by the checks.
        let c = r.cells.iter().find(|c| c.sim.is_some()).expect("sim");
        let g = c.sim.expect("sim").gap;
        assert!(
            ((g.sim - c.true_gap.expect("t")) / g.se).abs() > Z_BOUND,
            "{g:?}"
        );
    }

    #[test]
    fn graded_fixed_pass1_cell_equals_enumeration_of_every_sample_stage() {
        // N = 2 problems, n = 2 samples per model: each sample unparsed, or parsed and correct
        // or wrong, then graded; all 5^8 outcomes enumerated.
        let (u, fpr, fnr) = (0.1, 0.2, 0.15);
        let mut s = maj_grid(0, vec![2], vec![2]);
        s.metric = PlanMetric::Pass1;
        s.answers = PlanAnswers {
            unparsed: u,
            grader: Some(crate::model::Grader { fpr, fnr }),
            ..PlanAnswers::default()
        };
        let r = run_plan(&s, "plan", &|_| {}).0;
        let c = &r.cells[0];
        assert_eq!((c.design, c.method), (Design::Fixed, "exact"));
        let ra = quantile_rates(0.2, 2.2, 2);
        let rates = [
            ra[0],
            ra[1],
            shift_rate(ra[0], 0.21),
            shift_rate(ra[1], 0.21),
        ];
        // (probability, graded correct) of one sample's five outcomes on a problem of rate p.
        let outcomes = |p: f64| {
            [
                (u, 0u32),
                ((1.0 - u) * p * (1.0 - fnr), 1),
                ((1.0 - u) * p * fnr, 0),
                ((1.0 - u) * (1.0 - p) * fpr, 1),
                ((1.0 - u) * (1.0 - p) * (1.0 - fpr), 0),
            ]
        };
        let (mut loss, mut tie, mut mean) = (0.0, 0.0, 0.0);
        for code in 0..5u32.pow(8) {
            let (mut pr, mut x, mut t) = (1.0, code, [0i32; 2]);
            for (i, &p) in rates.iter().enumerate() {
                for _ in 0..2 {
                    let (q, g) = outcomes(p)[(x % 5) as usize];
                    x /= 5;
                    pr *= q;
                    t[i / 2] += g as i32;
                }
            }
            let d = t[1] - t[0];
            mean += pr * f64::from(d) / 4.0;
            if d < 0 {
                loss += pr;
            } else if d == 0 {
                tie += pr;
            }
        }
        assert!(
            (c.loss - loss).abs() <= 1e-12 * loss,
            "{} vs {loss}",
            c.loss
        );
        assert!((c.tie - tie).abs() <= 1e-12 * tie, "{} vs {tie}", c.tie);
        assert!(
            (c.gap - mean).abs() <= 1e-12 * mean.abs(),
            "{} vs {mean}",
            c.gap
        );
    }

    #[test]
    fn graded_maj_cells_with_two_attractors_and_split_pass_their_checks() {
        // Several attractors, split, unparsed and a grader: exact maj@k per problem by the mode
        // recurrence, the pick graded; simulated vote by vote, label by label.
        let mut s = maj_grid(10_000, vec![20], vec![3, 8]);
        s.answers = PlanAnswers {
            attractors: vec![0.4, 0.3],
            unparsed: 0.05,
            split: 0.1,
            grader: judge(),
        };
        let r = run_plan(&s, "plan", &|_| {}).0;
        let checks = r.checks();
        for ch in &checks {
            assert!(ch.estimate.z.abs() <= Z_BOUND, "{ch:?}");
        }
        // Every grid cell (one N, two k: the exact vote tables cost the time, not the
        // reruns) is checked; a minimum detectable gap the graded vote cannot reach within 40
        // logits (its ceiling is 1 - fnr) has no cell and so no check.
        assert!(checks.len() >= 2 * 4 + 2 * 2 * 2, "{}", checks.len());
        assert!(r.cells.iter().all(|c| c.true_gap.is_some()));
    }

    #[test]
    fn a_canonical_plan_reports_no_true_gap() {
        let mut s = spec(0);
        // Several attractors and split do not change pass@1: the plan is the canonical one.
        s.answers.attractors = vec![0.4, 0.3];
        s.answers.split = 0.2;
        let r = run_plan(&s, "plan", &|_| {}).0;
        let canonical = run_plan(&spec(0), "plan", &|_| {}).0;
        assert!(r.cells.iter().all(|c| c.true_gap.is_none()));
        assert_eq!(r.cells, canonical.cells);
    }

    #[test]
    fn pairing_lowers_the_se_and_fixed_is_lowest() {
        let r = run_plan(&spec(0), "plan", &|_| {}).0;
        for (i, c) in r.cells.iter().enumerate().take(4) {
            let paired = &r.cells[i + 4];
            let unpaired = &r.cells[i + 8];
            assert!(c.se < paired.se && paired.se < unpaired.se);
        }
    }

    #[test]
    fn a_cell_does_not_depend_on_the_others() {
        let mut one = spec(20_000);
        one.spec.problems = vec![100];
        one.spec.samples = vec![4];
        let a = run_plan(&one, "plan", &|_| {}).0;
        let b = run_plan(&spec(20_000), "plan", &|_| {}).0;
        let pick = |r: &PlanResult| {
            r.cells
                .iter()
                .find(|c| c.design == Design::Fixed && c.problems == 100 && c.samples == 4)
                .and_then(|c| c.sim)
        };
        assert_eq!(pick(&a), pick(&b));
    }
}
