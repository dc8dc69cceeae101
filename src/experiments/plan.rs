//! `plan`: how many problems N and samples per problem n tell two models apart.
//!
//! For every cell (N, n, gap) and three designs (fixed benchmark; population paired; population
//! unpaired) it reports the SE of the score difference, the 95% CI half-width, the power of a
//! paired 5% test, and the probability that the better model B loses (or ties) a rerun: exact by
//! convolution on the fixed benchmark where N n <= [`EXACT_MAX_SAMPLES`], a normal approximation
//! otherwise and for the population designs.
//!
//! The score is a [`Metric`]: pass@1 averaged over n samples per problem, or maj@k (one majority
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
use rand::RngCore;
use rand_distr::{Binomial, Distribution, StandardNormal};
use rayon::prelude::*;
use serde::Serialize;

use super::noise::sd_standard_error;
use super::{Check, Estimate, Progress};
use crate::exact::maj::{ln_factorials, maj_at_k_all, maj_at_k_pq};
use crate::exact::noise::{diff_normal_approx, head_to_head, seed_sd};
use crate::exact::plan::{detect_power, normal_loss_tie, sum_moments, PopulationNodes, Z_95};
use crate::model::{expit, quantile_rates, shift_rate, VoteRule};
use crate::sim::counts::{pair_tallies, CountSampler, PairSampler, PairTally as Tally};
use crate::sim::stream::{name_id, stream, Rng};
use crate::sim::votes::{self, AttractorTables, VoteSampler};
use crate::sim::{batches, run_merged};

/// Largest N t (count trials per model per rerun: N n for pass@1, N for maj@k) for which the
/// exact convolution is used; the normal approximation (with continuity correction) beyond.
pub const EXACT_MAX_SAMPLES: u64 = 64_000;

/// Largest number of alias-table entries (N (n + 1) or N (k + 1)) a fixed-design simulated cell
/// may build per model (about 200 MB); larger cells draw each count with BTPE instead.
const TABLE_ENTRIES: u64 = 1 << 24;

/// The study design a cell describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Design {
    /// The same N problems at quantile placement for both models, independent seeds.
    Fixed,
    /// Problems drawn from the population; both models on the same draws.
    PopulationPaired,
    /// Problems drawn from the population; each model on its own draws.
    PopulationUnpaired,
}

impl Design {
    /// All designs, in report order.
    pub const ALL: [Design; 3] = [
        Design::Fixed,
        Design::PopulationPaired,
        Design::PopulationUnpaired,
    ];

    /// The name used in tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Design::Fixed => "fixed",
            Design::PopulationPaired => "population-paired",
            Design::PopulationUnpaired => "population-unpaired",
        }
    }
}

/// The score being planned for.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    /// pass@1 averaged over the n samples of each problem.
    Pass1,
    /// maj@k: the share of problems whose majority vote of k samples is correct (one vote per
    /// problem per rerun); the grid's `samples` are the k values.
    Maj {
        /// Share of wrong answers on the repeated attractor (both models).
        attractor: f64,
        /// How ties at the top are scored.
        rule: VoteRule,
    },
}

impl Metric {
    /// The name used in tables: `pass@1` or `maj@k`.
    pub fn label(self) -> &'static str {
        match self {
            Metric::Pass1 => "pass@1",
            Metric::Maj { .. } => "maj@k",
        }
    }

    /// Trials t per problem per rerun for `samples` (n or k): n for pass@1, 1 vote for maj@k.
    pub fn trials(self, samples: u32) -> u32 {
        match self {
            Metric::Pass1 => samples,
            Metric::Maj { .. } => 1,
        }
    }

    /// The per-problem success probability f of a solve rate p.
    pub fn score(self, p: f64, samples: u32) -> f64 {
        match self {
            Metric::Pass1 => p,
            Metric::Maj { attractor, rule } => maj_at_k_pq(p, attractor * (1.0 - p), samples, rule),
        }
    }

    /// f of every rate (maj@k shares its conditional win table across problems).
    fn scores(self, rates: &[f64], samples: u32) -> Vec<f64> {
        match self {
            Metric::Pass1 => rates.to_vec(),
            Metric::Maj { attractor, rule } => maj_at_k_all(rates, attractor, samples, rule),
        }
    }

    /// Extra stream-key words (none for pass@1, so its fixed-design streams are unchanged).
    fn key(self) -> Vec<u64> {
        match self {
            Metric::Pass1 => Vec::new(),
            Metric::Maj { attractor, rule } => {
                vec![name_id("maj"), attractor.to_bits(), name_id(rule.as_str())]
            }
        }
    }
}

/// Which (gap, N, n) cells of a design to simulate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum CheckCells {
    /// Every cell.
    All,
    /// No cell.
    None,
    /// This many cells spread evenly over the grid (always the first and the last).
    Count(usize),
}

/// The inputs of a plan.
#[derive(Debug, Clone, Serialize)]
pub struct PlanSpec {
    /// Logit mean of model A's problem population (B's is mu + gap).
    pub mu: f64,
    /// Logit SD of the problem population.
    pub sigma: f64,
    /// Logit shifts of B over A.
    pub gaps: Vec<f64>,
    /// Candidate N.
    pub problems: Vec<usize>,
    /// Candidate n (pass@1: samples per problem) or k (maj@k: samples per vote).
    pub samples: Vec<u32>,
    /// Largest acceptable P(B <= A).
    pub target_loss_or_tie: f64,
    /// Largest acceptable 95% CI half-width of the difference (a fraction: 0.02 = 2 points).
    pub target_halfwidth: f64,
    /// Simulated paired reruns per checked cell and design.
    pub reruns: u64,
    /// Which cells to simulate in the fixed design.
    pub check_cells: CheckCells,
    /// Master seed of the simulation.
    pub seed: u64,
}

/// A full plan: the grid and targets of a [`PlanSpec`], the score, and which cells to simulate
/// in the population designs. It dereferences to its [`PlanSpec`], so `plan.mu` reads the grid.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    /// The population, grid, targets and fixed-design checks.
    #[serde(flatten)]
    pub spec: PlanSpec,
    /// The score.
    pub metric: Metric,
    /// Which cells to simulate in each population design (problems redrawn every rerun, about
    /// ten times the cost of a fixed-design rerun).
    pub check_population: CheckCells,
}

impl std::ops::Deref for Plan {
    type Target = PlanSpec;

    fn deref(&self) -> &PlanSpec {
        &self.spec
    }
}

impl PlanSpec {
    /// The plan of pass@1 averaged over n samples, with no population-design simulation.
    pub fn pass1(self) -> Plan {
        Plan {
            spec: self,
            metric: Metric::Pass1,
            check_population: CheckCells::None,
        }
    }
}

impl Plan {
    /// The (gap, N, n) cells the simulation checks in `design`, in grid order.
    pub fn checked_cells(&self, design: Design) -> Vec<(f64, usize, u32)> {
        if self.reruns == 0 {
            return Vec::new();
        }
        let mut grid = Vec::new();
        for &gap in &self.gaps {
            for &big_n in &self.problems {
                for &n in &self.samples {
                    grid.push((gap, big_n, n));
                }
            }
        }
        let which = match design {
            Design::Fixed => self.check_cells,
            _ => self.check_population,
        };
        checked(grid.len(), which)
            .into_iter()
            .map(|i| grid[i])
            .collect()
    }

    /// Paired reruns the simulation will run (checked cells x reruns over the designs), for
    /// progress.
    pub fn planned_reruns(&self) -> u64 {
        Design::ALL
            .iter()
            .map(|&d| self.checked_cells(d).len() as u64 * self.reruns)
            .sum()
    }

    /// Per-problem draws the simulation will make: one count or vote per problem per model per
    /// rerun, over every checked cell and design. Bounded by the caller (the scenario loader and
    /// the CLI refuse more than [`crate::scenario::MAX_TOTAL_VOTES`]).
    pub fn simulated_draws(&self) -> u64 {
        let per_rerun: u64 = Design::ALL
            .iter()
            .flat_map(|&d| self.checked_cells(d))
            .map(|(_, big_n, _)| 2 * big_n as u64)
            .sum();
        per_rerun.saturating_mul(self.reruns)
    }
}

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
    /// True gap E[score_B - score_A] under the design (a fraction).
    pub gap: f64,
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
    /// Per-problem draws (counts or votes) the simulation made.
    pub draws: u64,
}

impl PlanResult {
    /// Checks of simulated against exact values: mean and SD of the difference in every
    /// simulated cell, loss and loss-or-tie where they are exact.
    pub fn checks(&self) -> Vec<Check> {
        let mut out = Vec::new();
        for c in &self.cells {
            let Some(s) = c.sim else { continue };
            let cell = format!(
                "design={} metric={} N={} {}={} gap_logits={}",
                c.design.as_str(),
                self.spec.metric.label(),
                c.problems,
                if matches!(self.spec.metric, Metric::Pass1) {
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

/// Population tables per (gap, samples): one per gap for pass@1 (f = p does not depend on n),
/// one per (gap, k) for maj@k. Indexed `[gap][samples index or 0]`.
fn population_tables(spec: &Plan) -> Vec<Vec<PopulationNodes>> {
    spec.gaps
        .iter()
        .map(|&gap| match spec.metric {
            Metric::Pass1 => vec![PopulationNodes::new(spec.mu, spec.sigma, gap, |p| p)],
            Metric::Maj { .. } => spec
                .samples
                .iter()
                .map(|&k| {
                    PopulationNodes::new(spec.mu, spec.sigma, gap, |p| spec.metric.score(p, k))
                })
                .collect(),
        })
        .collect()
}

fn table<'a>(
    spec: &Plan,
    tables: &'a [Vec<PopulationNodes>],
    gap: f64,
    samples: u32,
) -> &'a PopulationNodes {
    let gi = spec.gaps.iter().position(|&g| g == gap).unwrap_or(0);
    let si = match spec.metric {
        Metric::Pass1 => 0,
        Metric::Maj { .. } => spec.samples.iter().position(|&s| s == samples).unwrap_or(0),
    };
    &tables[gi][si]
}

/// Per-problem scores f of A and B on the fixed benchmark of N problems.
fn fixed_scores(spec: &Plan, big_n: usize, samples: u32, gap: f64) -> (Vec<f64>, Vec<f64>) {
    let ra = quantile_rates(spec.mu, spec.sigma, big_n);
    let rb: Vec<f64> = ra.iter().map(|&p| shift_rate(p, gap)).collect();
    (
        spec.metric.scores(&ra, samples),
        spec.metric.scores(&rb, samples),
    )
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
    keys.par_iter()
        .map(|&(design, gap, big_n, n)| {
            let t = spec.metric.trials(n);
            let (diff, se, loss, tie, method) = match design {
                Design::Fixed => {
                    let (fa, fb) = fixed_scores(spec, big_n, n, gap);
                    let diff = (fb.iter().sum::<f64>() - fa.iter().sum::<f64>()) / big_n as f64;
                    let se = seed_sd(&fa, t).hypot(seed_sd(&fb, t));
                    let (h, method) = if big_n as u64 * u64::from(t) <= EXACT_MAX_SAMPLES {
                        (head_to_head(&fa, &fb, t), "exact")
                    } else {
                        (diff_normal_approx(&fa, &fb, t), "normal")
                    };
                    (diff, se, h.loss, h.tie, method)
                }
                Design::PopulationPaired | Design::PopulationUnpaired => {
                    let m = table(spec, tables, gap, n).moments();
                    let se = if design == Design::PopulationPaired {
                        m.paired_se(t, big_n)
                    } else {
                        m.unpaired_se(t, big_n)
                    };
                    let diff = m.mean_b - m.mean_a;
                    let counts = f64::from(t) * big_n as f64;
                    let (loss, tie) = normal_loss_tie(diff * counts, se * counts);
                    (diff, se, loss, tie, "normal")
                }
            };
            PlanCell {
                design,
                problems: big_n,
                samples: n,
                gap_logits: gap,
                gap: diff,
                se,
                halfwidth: Z_95 * se,
                power: detect_power(diff, se),
                loss,
                tie,
                loss_or_tie: loss + tie,
                method,
                sim: None,
            }
        })
        .collect()
}

/// Indices (into the grid of `count` cells) to simulate.
fn checked(count: usize, which: CheckCells) -> Vec<usize> {
    match which {
        CheckCells::All => (0..count).collect(),
        CheckCells::None => Vec::new(),
        CheckCells::Count(k) if k >= count => (0..count).collect(),
        CheckCells::Count(0) => Vec::new(),
        CheckCells::Count(1) => vec![0],
        CheckCells::Count(k) => {
            let mut v: Vec<usize> = (0..k)
                .map(|j| ((j * (count - 1)) as f64 / (k - 1) as f64).round() as usize)
                .collect();
            v.dedup();
            v
        }
    }
}

/// 2^53 as f64: a 53-bit uniform below p 2^53 is a success with probability p.
const TWO_53: f64 = 9_007_199_254_740_992.0;

/// Largest t for which [`binomial`] counts t Bernoulli trials one by one.
const BERNOULLI_MAX_T: u32 = 16;
/// Largest t for which [`binomial`] inverts the CDF (the first pmf term, max(p, q)^t >= 2^-256,
/// cannot underflow).
const INVERSION_MAX_T: u32 = 256;

/// One draw of Bin(t, p) for a p that changes every draw (no per-p setup): t 53-bit uniforms,
/// each a success below p, for t <= 16; sequential inversion of the CDF from the nearer end
/// (expected min(p, q) t + 1 steps) for t <= 256; rand_distr's BTPE beyond.
#[inline]
fn binomial<R: RngCore>(t: u32, p: f64, rng: &mut R) -> u32 {
    if t <= BERNOULLI_MAX_T {
        let threshold = (p * TWO_53) as u64;
        (0..t)
            .map(|_| u32::from((rng.next_u64() >> 11) < threshold))
            .sum()
    } else if t <= INVERSION_MAX_T {
        let (flip, r) = if p > 0.5 { (true, 1.0 - p) } else { (false, p) };
        let q = 1.0 - r;
        let u = (rng.next_u64() >> 11) as f64 / TWO_53;
        let ratio = r / q;
        let mut pmf = q.powi(t as i32);
        let mut cdf = pmf;
        let mut j = 0u32;
        while u >= cdf && j < t {
            pmf *= f64::from(t - j) / f64::from(j + 1) * ratio;
            j += 1;
            cdf += pmf;
        }
        if flip {
            t - j
        } else {
            j
        }
    } else {
        Binomial::new(u64::from(t), p).map_or(0, |b| b.sample(rng) as u32)
    }
}

/// A majority vote of k samples scored answer by answer, for a correct count drawn by the
/// caller: [`AttractorTables::correct_wins`], the route of [`crate::sim::votes::VoteSampler`].
#[derive(Debug, Clone)]
struct LiteralVoter {
    k: u32,
    rule: VoteRule,
    /// Bin(m, a) for m = 0..=k.
    others: AttractorTables,
}

impl LiteralVoter {
    /// Time and memory: O(k^2).
    fn new(k: u32, attractor: f64, rule: VoteRule) -> LiteralVoter {
        LiteralVoter {
            k,
            rule,
            others: AttractorTables::new(k, attractor, &ln_factorials(k)),
        }
    }

    /// Whether the correct answer wins, given c correct answers among the k.
    #[inline]
    fn wins<R: RngCore>(&self, c: u32, rng: &mut R) -> bool {
        self.others.correct_wins(self.k, c, self.rule, rng)
    }

    /// One vote on a problem with solve rate p.
    #[inline]
    fn vote<R: RngCore>(&self, p: f64, rng: &mut R) -> u64 {
        let c = binomial(self.k, p, rng);
        u64::from(self.wins(c, rng))
    }
}

/// The stream key of a cell: (seed, "plan", metric, design, N, n, gap); batches and models are
/// appended.
fn stream_prefix(spec: &Plan, design: Design, (gap, big_n, n): (f64, usize, u32)) -> Vec<u64> {
    let mut prefix = vec![name_id("plan")];
    prefix.extend(spec.metric.key());
    if design != Design::Fixed {
        prefix.push(name_id(design.as_str()));
    }
    prefix.extend([big_n as u64, u64::from(n), gap.to_bits()]);
    prefix
}

/// Runs `reruns` paired reruns of one cell in batches of 4,096, each batch with a stream per
/// model keyed by ([`stream_prefix`], batch, model). `draw` returns one rerun's totals
/// (T_A, T_B) from the two streams.
fn run_cell(
    spec: &Plan,
    design: Design,
    cell: (f64, usize, u32),
    progress: Progress,
    draw: impl Fn(&mut Rng, &mut Rng) -> (u64, u64) + Sync,
) -> Tally {
    let prefix = stream_prefix(spec, design, cell);
    let tasks: Vec<(u64, u64)> = batches(spec.reruns).collect();
    run_merged(
        &tasks,
        Tally::default(),
        |&(batch, count)| {
            let mut key = prefix.clone();
            key.extend([batch, 0]);
            let mut rng_a = stream(spec.seed, &key);
            let last = key.len() - 1;
            key[last] = 1;
            let mut rng_b = stream(spec.seed, &key);
            let mut t = Tally::default();
            for _ in 0..count {
                let (ta, tb) = draw(&mut rng_a, &mut rng_b);
                t.add(ta, tb);
            }
            progress(count);
            t
        },
        Tally::merge,
    )
}

/// Count samplers of models A and B for a fixed-design pass@1 cell: alias tables, or BTPE draws
/// when the tables would exceed [`TABLE_ENTRIES`].
fn fixed_samplers(spec: &Plan, (gap, big_n, n): (f64, usize, u32)) -> PairSampler {
    let ra = quantile_rates(spec.mu, spec.sigma, big_n);
    let rb: Vec<f64> = ra.iter().map(|&p| shift_rate(p, gap)).collect();
    let big = big_n as u64 * (u64::from(n) + 1) > TABLE_ENTRIES;
    if big && n > 1 {
        let btpe = |r: &[f64]| {
            CountSampler::Btpe(
                r.iter()
                    .filter_map(|&p| Binomial::new(u64::from(n), p).ok())
                    .collect(),
            )
        };
        PairSampler::Separate(btpe(&ra), btpe(&rb))
    } else {
        PairSampler::new(n, &ra, &rb, spec.reruns)
    }
}

/// Table entries of a fixed-design pass@1 cell's two samplers (for the memory budget).
fn fixed_entries((_, big_n, n): (f64, usize, u32)) -> u64 {
    2 * (big_n as u64 * (u64::from(n) + 1)).min(TABLE_ENTRIES)
}

/// Simulates every chosen (design, cell). Fixed-design pass@1 cells run together, as one parallel
/// job of (cell, batch) tasks ([`pair_tallies`]) in groups whose tables fit in [`TABLE_ENTRIES`]
/// x 2, so the threads stay busy to the end; the other cells run one after another, each in
/// parallel over its batches. Stops early (with zero tallies) once an interruption is requested.
fn simulate_chosen(
    spec: &Plan,
    chosen: &[(Design, (f64, usize, u32))],
    progress: Progress,
) -> Vec<Tally> {
    let mut out = vec![Tally::default(); chosen.len()];
    let together = |d: Design| d == Design::Fixed && spec.metric == Metric::Pass1;
    let fixed: Vec<usize> = (0..chosen.len())
        .filter(|&i| together(chosen[i].0))
        .collect();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut entries = u64::MAX;
    for &i in &fixed {
        let e = fixed_entries(chosen[i].1);
        if entries.saturating_add(e) > 2 * TABLE_ENTRIES {
            groups.push(Vec::new());
            entries = 0;
        }
        entries += e;
        if let Some(g) = groups.last_mut() {
            g.push(i);
        }
    }
    for group in groups {
        if crate::interrupt::requested() {
            return out;
        }
        let samplers: Vec<PairSampler> = group
            .par_iter()
            .map(|&i| fixed_samplers(spec, chosen[i].1))
            .collect();
        let keys: Vec<Vec<u64>> = group
            .iter()
            .map(|&i| stream_prefix(spec, Design::Fixed, chosen[i].1))
            .collect();
        let cells: Vec<(&[u64], &PairSampler)> =
            keys.iter().map(|k| k.as_slice()).zip(&samplers).collect();
        for (&i, t) in group
            .iter()
            .zip(pair_tallies(spec.seed, &cells, spec.reruns, progress))
        {
            out[i] = t;
        }
    }
    for (i, &(design, cell)) in chosen.iter().enumerate() {
        if together(design) {
            continue;
        }
        if crate::interrupt::requested() {
            break;
        }
        out[i] = simulate_cell(spec, design, cell, progress);
    }
    out
}

/// Simulates one cell in one design.
fn simulate_cell(
    spec: &Plan,
    design: Design,
    cell: (f64, usize, u32),
    progress: Progress,
) -> Tally {
    let (gap, big_n, n) = cell;
    let (mu, sigma) = (spec.mu, spec.sigma);
    let big = big_n as u64 * (u64::from(n) + 1) > TABLE_ENTRIES;
    match (design, spec.metric) {
        (Design::Fixed, Metric::Pass1) => {
            let sampler = fixed_samplers(spec, cell);
            let key = stream_prefix(spec, design, cell);
            pair_tallies(spec.seed, &[(&key, &sampler)], spec.reruns, progress)[0]
        }
        (Design::Fixed, Metric::Maj { attractor, rule }) => {
            let ra = quantile_rates(mu, sigma, big_n);
            let rb: Vec<f64> = ra.iter().map(|&p| shift_rate(p, gap)).collect();
            if big {
                let voter = LiteralVoter::new(n, attractor, rule);
                let bins = |r: &[f64]| -> Vec<Binomial> {
                    r.iter()
                        .filter_map(|&p| Binomial::new(u64::from(n), p).ok())
                        .collect()
                };
                let (ba, bb) = (bins(&ra), bins(&rb));
                let total = |bs: &[Binomial], rng: &mut Rng| -> u64 {
                    bs.iter()
                        .map(|b| u64::from(voter.wins(b.sample(rng) as u32, rng)))
                        .sum()
                };
                run_cell(spec, design, cell, progress, |a, b| {
                    (total(&ba, a), total(&bb, b))
                })
            } else {
                let lnf = ln_factorials(n);
                let tables = AttractorTables::new(n, attractor, &lnf);
                let samplers = |r: &[f64]| votes::samplers(n, r, &tables, rule, &lnf, spec.reruns);
                let (sa, sb) = (samplers(&ra), samplers(&rb));
                let total = |ss: &[VoteSampler], rng: &mut Rng| -> u64 {
                    ss.iter().map(|s| u64::from(s.sample(rng).win)).sum()
                };
                run_cell(spec, design, cell, progress, |a, b| {
                    (total(&sa, a), total(&sb, b))
                })
            }
        }
        (_, metric) => {
            // Problems redrawn every rerun: one z per problem for both models when paired, one
            // each otherwise; then the problem's score (its count, or its vote) drawn literally.
            let voter = match metric {
                Metric::Maj { attractor, rule } => Some(LiteralVoter::new(n, attractor, rule)),
                Metric::Pass1 => None,
            };
            let score = |p: f64, rng: &mut Rng| match &voter {
                Some(v) => v.vote(p, rng),
                None => u64::from(binomial(n, p, rng)),
            };
            let paired = design == Design::PopulationPaired;
            run_cell(spec, design, cell, progress, |a, b| {
                (0..big_n).fold((0, 0), |(x, y), _| {
                    let za: f64 = StandardNormal.sample(a);
                    let zb: f64 = if paired { za } else { StandardNormal.sample(b) };
                    let (pa, pb) = (expit(mu + sigma * za), expit(mu + gap + sigma * zb));
                    (x + score(pa, a), y + score(pb, b))
                })
            })
        }
    }
}

/// Simulates paired fixed-design pass@1 reruns of `cells` (N, n, gap), all cells as one parallel
/// job, with the streams [`run_plan`] uses.
/// Returns (per cell: (loss, tie) counts), per-problem draws.
pub fn simulate(
    spec: &PlanSpec,
    cells: &[(usize, u32, f64)],
    progress: Progress,
) -> (Vec<(u64, u64)>, u64) {
    let plan = spec.clone().pass1();
    let chosen: Vec<(Design, (f64, usize, u32))> = cells
        .iter()
        .map(|&(big_n, n, gap)| (Design::Fixed, (gap, big_n, n)))
        .collect();
    let counts = simulate_chosen(&plan, &chosen, progress)
        .into_iter()
        .map(|t| (t.loss, t.tie))
        .collect();
    let draws = cells
        .iter()
        .map(|&(big_n, _, _)| 2 * big_n as u64 * spec.reruns)
        .sum();
    (counts, draws)
}

/// Variance and fourth central moment of the count difference D = T_B - T_A of one cell.
fn exact_count_moments(spec: &Plan, tables: &[Vec<PopulationNodes>], c: &PlanCell) -> (f64, f64) {
    let t = spec.metric.trials(c.samples);
    match c.design {
        Design::Fixed => {
            // Independent Bin(t, f_i) terms: cumulants add (the sign of B - A does not change
            // even cumulants): kappa2 = sum t f q, kappa4 = sum t f q (1 - 6 f q).
            let (fa, fb) = fixed_scores(spec, c.problems, c.samples, c.gap_logits);
            let tf = f64::from(t);
            let (mut k2, mut k4) = (0.0, 0.0);
            for f in fa.iter().chain(&fb) {
                let pq = f * (1.0 - f);
                k2 += tf * pq;
                k4 += tf * pq * (1.0 - 6.0 * pq);
            }
            (k2, k4 + 3.0 * k2 * k2)
        }
        design => {
            let nodes = table(spec, tables, c.gap_logits, c.samples);
            let (v1, m41) = nodes.count_diff_moments(t, design == Design::PopulationPaired);
            sum_moments(v1, m41, c.problems)
        }
    }
}

/// Runs the plan: exact cells, the simulated checks, and the answers. `experiment` names the
/// output files (`plan` from the command line); the random streams do not depend on it, so a
/// scenario's plan and `evalsim plan` with the same inputs and seed give the same numbers.
pub fn run_plan(spec: &Plan, experiment: &str, progress: Progress) -> PlanResult {
    let tables = population_tables(spec);
    let chosen: Vec<(Design, (f64, usize, u32))> = Design::ALL
        .iter()
        .flat_map(|&d| spec.checked_cells(d).into_iter().map(move |c| (d, c)))
        .collect();
    // The simulation needs no exact value, so both run at once on the same threads.
    let (mut cells, tallies) = rayon::join(
        || exact_cells_with(spec, &tables),
        || simulate_chosen(spec, &chosen, progress),
    );
    let mut draws = 0u64;
    let r = spec.reruns as f64;
    for (&(design, (gap, big_n, n)), tally) in chosen.iter().zip(tallies) {
        let Some(c) = cells.iter_mut().find(|c| {
            c.design == design && c.gap_logits == gap && c.problems == big_n && c.samples == n
        }) else {
            continue;
        };
        draws += 2 * big_n as u64 * spec.reruns;
        let scale = f64::from(spec.metric.trials(n)) * big_n as f64;
        let (var_d, mu4_d) = exact_count_moments(spec, &tables, c);
        let est = |p: f64, hits: u64| {
            Estimate::new(p, hits as f64 / r, (p * (1.0 - p) / r).sqrt()).counting(1.0 / r)
        };
        let rr = spec.reruns as i128;
        let sim_var = if spec.reruns > 1 {
            (rr * tally.sum_sq - tally.sum * tally.sum) as f64 / (r * (r - 1.0))
        } else {
            0.0
        };
        c.sim = Some(SimCheck {
            reruns: spec.reruns,
            loss: est(c.loss, tally.loss),
            loss_or_tie: est(c.loss_or_tie, tally.loss + tally.tie),
            gap: Estimate::new(c.gap, tally.sum as f64 / r / scale, c.se / r.sqrt()),
            sd: Estimate::new(
                c.se,
                sim_var.max(0.0).sqrt() / scale,
                sd_standard_error(var_d, mu4_d, spec.reruns) / scale,
            ),
        });
    }
    let answers = answers(spec, &cells);
    PlanResult {
        experiment: experiment.to_string(),
        spec: spec.clone(),
        cells,
        answers,
        draws,
    }
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
    use crate::experiments::Z_BOUND;

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
        }
    }

    fn spec(reruns: u64) -> Plan {
        Plan {
            check_population: CheckCells::All,
            ..base(reruns).pass1()
        }
    }

    #[test]
    fn fixed_cells_match_head_to_head_and_simulation() {
        let r = run_plan(&spec(40_000), "plan", &|_| {});
        assert_eq!(r.cells.len(), 3 * 4);
        let ra = quantile_rates(0.2, 2.2, 30);
        let rb: Vec<f64> = ra.iter().map(|&p| shift_rate(p, 0.21)).collect();
        let h = head_to_head(&ra, &rb, 1);
        let c = &r.cells[0];
        assert_eq!((c.problems, c.samples), (30, 1));
        assert_eq!(c.loss_or_tie, h.loss + h.tie);
        let checks = r.checks();
        // Fixed: loss, loss-or-tie, mean and SD in 4 cells; population: mean and SD in 2 x 4.
        assert_eq!(checks.len(), 4 * 4 + 2 * 4 * 2);
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
            metric: Metric::Maj {
                attractor: 0.5,
                rule: VoteRule::Random,
            },
            check_population: CheckCells::All,
        }
    }

    fn maj_spec(reruns: u64) -> Plan {
        maj_grid(reruns, vec![20, 200], vec![3, 16])
    }

    #[test]
    fn population_and_maj_simulations_agree_with_exact_moments() {
        let r = run_plan(&maj_spec(30_000), "plan", &|_| {});
        let checks = r.checks();
        assert_eq!(checks.len(), 4 * 4 + 2 * 4 * 2);
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
        let r = run_plan(&s, "plan", &|_| {});
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
            pool.install(|| serde_json::to_string(&run_plan(&s, "plan", &|_| {})).expect("json"))
        };
        assert_eq!(run(1), run(3));
    }

    #[test]
    fn pairing_lowers_the_se_and_fixed_is_lowest() {
        let r = run_plan(&spec(0), "plan", &|_| {});
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
        let a = run_plan(&one, "plan", &|_| {});
        let b = run_plan(&spec(20_000), "plan", &|_| {});
        let pick = |r: &PlanResult| {
            r.cells
                .iter()
                .find(|c| c.design == Design::Fixed && c.problems == 100 && c.samples == 4)
                .and_then(|c| c.sim)
        };
        assert_eq!(pick(&a), pick(&b));
    }
}
