//! `plan`: how many problems N and samples per problem n tell two models apart.
//!
//! For every cell (N, n, gap) and three designs (fixed benchmark; population paired; population
//! unpaired) it reports the SE of the score difference, the 95% CI half-width, the power of a
//! paired 5% test, and the probability that the better model B loses (or ties) a rerun: exact by
//! convolution on the fixed benchmark where N n <= [`EXACT_MAX_SAMPLES`], a normal approximation
//! otherwise and for the population designs. Fixed-design cells are simulated as a check.
use rayon::prelude::*;
use serde::Serialize;

use super::{Check, Estimate, Progress};
use crate::exact::noise::{diff_normal_approx, head_to_head, seed_sd};
use crate::exact::plan::{detect_power, normal_loss_tie, population_pair_moments, Z_95};
use crate::model::{quantile_rates, shift_rate};
use crate::sim::counts::CountSampler;
use crate::sim::stream::{name_id, stream};
use crate::sim::{batches, run_merged};

/// Largest N n (samples per model per rerun) for which the exact convolution is used; the
/// normal approximation (with continuity correction) beyond.
pub const EXACT_MAX_SAMPLES: u64 = 64_000;

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

/// Which fixed-design cells to simulate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum CheckCells {
    /// Every fixed-design cell.
    All,
    /// No cell.
    None,
    /// This many cells spread evenly over the grid (always the first and the last).
    Count(usize),
}

/// The inputs of a plan.
#[derive(Debug, Clone, Serialize)]
pub struct PlanSpec {
    /// Logit mean of the problem population.
    pub mu: f64,
    /// Logit SD of the problem population.
    pub sigma: f64,
    /// Logit shifts of B over A.
    pub gaps: Vec<f64>,
    /// Candidate N.
    pub problems: Vec<usize>,
    /// Candidate n.
    pub samples: Vec<u32>,
    /// Largest acceptable P(B <= A).
    pub target_loss_or_tie: f64,
    /// Largest acceptable 95% CI half-width of the difference (a fraction: 0.02 = 2 points).
    pub target_halfwidth: f64,
    /// Simulated paired reruns per checked cell.
    pub reruns: u64,
    /// Which cells to simulate.
    pub check_cells: CheckCells,
    /// Master seed of the simulation.
    pub seed: u64,
}

/// A simulated check of one fixed-design cell.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SimCheck {
    /// Paired reruns.
    pub reruns: u64,
    /// P(B < A).
    pub loss: Estimate,
    /// P(B <= A).
    pub loss_or_tie: Estimate,
}

/// One (design, N, n, gap) cell.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanCell {
    /// The design.
    pub design: Design,
    /// N.
    pub problems: usize,
    /// n.
    pub samples: u32,
    /// Logit shift of B over A.
    pub gap_logits: f64,
    /// True pass@1 gap E[score_B - score_A] under the design (a fraction).
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
    /// The inputs.
    pub spec: PlanSpec,
    /// Every cell: designs, then gaps, then N, then n.
    pub cells: Vec<PlanCell>,
    /// Per (gap, design, target) the smallest cell meeting it.
    pub answers: Vec<Answer>,
    /// Binomial draws the simulation made.
    pub draws: u64,
}

impl PlanResult {
    /// Checks of simulated against exact values (cells whose method is `exact` only).
    pub fn checks(&self) -> Vec<Check> {
        let mut out = Vec::new();
        for c in &self.cells {
            let Some(s) = c.sim else { continue };
            if c.method != "exact" {
                continue;
            }
            let cell = format!(
                "N={} n={} gap_logits={}",
                c.problems, c.samples, c.gap_logits
            );
            for (q, e) in [("P(B < A)", s.loss), ("P(B <= A)", s.loss_or_tie)] {
                out.push(Check::new("plan", q, &cell, e));
            }
        }
        out
    }
}

/// Exact values of every cell (no simulation). Fixed-design convolutions run in parallel.
/// Time: dominated by the largest convolution, O(n N log(n N) log N) per fixed cell.
pub fn exact_cells(spec: &PlanSpec) -> Vec<PlanCell> {
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
    let moments: Vec<_> = spec
        .gaps
        .iter()
        .map(|&g| population_pair_moments(spec.mu, spec.sigma, g))
        .collect();
    keys.par_iter()
        .map(|&(design, gap, big_n, n)| {
            let gi = spec.gaps.iter().position(|&g| g == gap).unwrap_or(0);
            let m = moments[gi];
            let (diff, se, loss, tie, method) = match design {
                Design::Fixed => {
                    let ra = quantile_rates(spec.mu, spec.sigma, big_n);
                    let rb: Vec<f64> = ra.iter().map(|&p| shift_rate(p, gap)).collect();
                    let diff = (rb.iter().sum::<f64>() - ra.iter().sum::<f64>()) / big_n as f64;
                    let se = seed_sd(&ra, n).hypot(seed_sd(&rb, n));
                    let (h, method) = if big_n as u64 * u64::from(n) <= EXACT_MAX_SAMPLES {
                        (head_to_head(&ra, &rb, n), "exact")
                    } else {
                        (diff_normal_approx(&ra, &rb, n), "normal")
                    };
                    (diff, se, h.loss, h.tie, method)
                }
                Design::PopulationPaired | Design::PopulationUnpaired => {
                    let se = if design == Design::PopulationPaired {
                        m.paired_se(n, big_n)
                    } else {
                        m.unpaired_se(n, big_n)
                    };
                    let diff = m.mean_b - m.mean_a;
                    let counts = f64::from(n) * big_n as f64;
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

/// Indices (into the fixed-design cells) to simulate.
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

/// Simulates paired reruns of the chosen fixed-design cells: per rerun one total count of A and
/// one of B, each one u64 per problem ([`CountSampler`]). Batches of 4,096 reruns have their own
/// stream per model keyed by (seed, "plan", N, n, gap, batch, model), so a cell's numbers depend on nothing else.
/// Returns (per cell: (loss, tie) counts), draws.
pub fn simulate(
    spec: &PlanSpec,
    cells: &[(usize, u32, f64)],
    progress: Progress,
) -> (Vec<(u64, u64)>, u64) {
    let key = name_id("plan");
    let samplers: Vec<(CountSampler, CountSampler)> = cells
        .par_iter()
        .map(|&(big_n, n, gap)| {
            let ra = quantile_rates(spec.mu, spec.sigma, big_n);
            let rb: Vec<f64> = ra.iter().map(|&p| shift_rate(p, gap)).collect();
            (CountSampler::new(n, &ra), CountSampler::new(n, &rb))
        })
        .collect();
    // Largest cells first, so the last tasks are short and threads finish together.
    let mut tasks: Vec<(usize, u64, u64)> = cells
        .iter()
        .enumerate()
        .flat_map(|(ci, _)| batches(spec.reruns).map(move |(b, c)| (ci, b, c)))
        .collect();
    tasks.sort_by_key(|&(ci, b, _)| (std::cmp::Reverse(cells[ci].0), ci, b));
    let counts = run_merged(
        &tasks,
        vec![(0u64, 0u64); cells.len()],
        |&(ci, batch, count)| {
            let (big_n, n, gap) = cells[ci];
            let (sa, sb) = &samplers[ci];
            let cell = [key, big_n as u64, u64::from(n), gap.to_bits(), batch];
            // Model A and model B each have their own stream (interleaved draws, see total_pair).
            let mut rng_a = stream(spec.seed, &[cell[0], cell[1], cell[2], cell[3], cell[4], 0]);
            let mut rng_b = stream(spec.seed, &[cell[0], cell[1], cell[2], cell[3], cell[4], 1]);
            let (mut loss, mut tie) = (0u64, 0u64);
            for _ in 0..count {
                let (ta, tb) = sa.total_pair(sb, &mut rng_a, &mut rng_b);
                loss += u64::from(tb < ta);
                tie += u64::from(tb == ta);
            }
            progress(count);
            let mut v = vec![(0u64, 0u64); cells.len()];
            v[ci] = (loss, tie);
            v
        },
        |mut x, y| {
            for (a, b) in x.iter_mut().zip(y) {
                a.0 += b.0;
                a.1 += b.1;
            }
            x
        },
    );
    let draws = cells
        .iter()
        .map(|&(big_n, _, _)| 2 * big_n as u64 * spec.reruns)
        .sum();
    (counts, draws)
}

/// Runs the plan: exact cells, the simulated checks, and the answers.
pub fn run_plan(spec: &PlanSpec, progress: Progress) -> PlanResult {
    let mut cells = exact_cells(spec);
    let fixed: Vec<usize> = (0..cells.len())
        .filter(|&i| cells[i].design == Design::Fixed)
        .collect();
    let chosen: Vec<usize> = checked(fixed.len(), spec.check_cells)
        .into_iter()
        .map(|j| fixed[j])
        .collect();
    let sim_cells: Vec<(usize, u32, f64)> = chosen
        .iter()
        .map(|&i| (cells[i].problems, cells[i].samples, cells[i].gap_logits))
        .collect();
    let (counts, draws) = if sim_cells.is_empty() || spec.reruns == 0 {
        (Vec::new(), 0)
    } else {
        simulate(spec, &sim_cells, progress)
    };
    let r = spec.reruns as f64;
    for (&i, &(loss, tie)) in chosen.iter().zip(&counts) {
        let c = &mut cells[i];
        let est = |p: f64, hits: u64| Estimate::new(p, hits as f64 / r, (p * (1.0 - p) / r).sqrt());
        c.sim = Some(SimCheck {
            reruns: spec.reruns,
            loss: est(c.loss, loss),
            loss_or_tie: est(c.loss_or_tie, loss + tie),
        });
    }
    let answers = answers(spec, &cells);
    PlanResult {
        spec: spec.clone(),
        cells,
        answers,
        draws,
    }
}

/// Per gap, design and target: the cell with the fewest samples N n meeting the bound (ties go
/// to the better value).
fn answers(spec: &PlanSpec, cells: &[PlanCell]) -> Vec<Answer> {
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

    fn spec(reruns: u64) -> PlanSpec {
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

    #[test]
    fn fixed_cells_match_head_to_head_and_simulation() {
        let r = run_plan(&spec(40_000), &|_| {});
        assert_eq!(r.cells.len(), 3 * 4);
        let ra = quantile_rates(0.2, 2.2, 30);
        let rb: Vec<f64> = ra.iter().map(|&p| shift_rate(p, 0.21)).collect();
        let h = head_to_head(&ra, &rb, 1);
        let c = &r.cells[0];
        assert_eq!((c.problems, c.samples), (30, 1));
        assert_eq!(c.loss_or_tie, h.loss + h.tie);
        let checks = r.checks();
        assert_eq!(checks.len(), 8);
        for ch in checks {
            assert!(ch.estimate.z.abs() <= Z_BOUND, "{ch:?}");
        }
    }

    #[test]
    fn pairing_lowers_the_se_and_fixed_is_lowest() {
        let r = run_plan(&spec(0), &|_| {});
        for (i, c) in r.cells.iter().enumerate().take(4) {
            let paired = &r.cells[i + 4];
            let unpaired = &r.cells[i + 8];
            assert!(c.se < paired.se && paired.se < unpaired.se);
        }
    }

    #[test]
    fn a_cell_does_not_depend_on_the_others() {
        let one = PlanSpec {
            problems: vec![100],
            samples: vec![4],
            ..spec(20_000)
        };
        let a = run_plan(&one, &|_| {});
        let b = run_plan(&spec(20_000), &|_| {});
        let pick = |r: &PlanResult| {
            r.cells
                .iter()
                .find(|c| c.design == Design::Fixed && c.problems == 100 && c.samples == 4)
                .and_then(|c| c.sim)
        };
        assert_eq!(pick(&a), pick(&b));
    }
}
