//! Literal simulation of best-of-k selection and noisy grading for the `curves` experiment.
//!
//! Every vote draws its k samples one by one with the samplers of [`super::modes`]: the verifier's
//! pick ([`ThresholdSampler`], [`ScoreSampler`]), the majority vote ([`ModeVoteSampler`]) and each
//! sample's graded outcome ([`graded_samples`], [`grade`]). Cost: O(k) draws per vote and metric,
//! against O(1) for [`super::votes`]: the price of drawing what the harness sees, sample by
//! sample. Each (cell, problem) pair has its own stream keyed by (key, cell, problem), and the
//! pairs are counted in parallel with integer sums, so the counts are identical for any thread
//! count.
use rayon::prelude::*;

use super::modes::{
    grade, graded_parsed_samples, graded_samples, ModeBestSampler, ModeVoteSampler, ScoreSampler,
    ThresholdSampler,
};
use super::stream::stream;
use super::votes::ModeAnswers;
use crate::exact::modes::Extraction;
use crate::model::{Grader, Verifier, VoteRule};

/// One cell: a model's rates at one k, with its selector and grader.
#[derive(Debug, Clone)]
pub struct SelectionCell {
    /// Per-problem solve rates.
    pub p: Vec<f64>,
    /// Samples per vote.
    pub k: u32,
    /// The model's attractor share (for the graded majority vote).
    pub attractor: f64,
    /// Vote rule of the graded majority vote.
    pub rule: VoteRule,
    /// The best-of-k selector, if any.
    pub verifier: Option<Verifier>,
    /// The grader, if noisy.
    pub grader: Option<Grader>,
    /// Several attractors or answer extraction (the graded vote and the verifier's samples then
    /// draw these answers, and an unparsed sample is never graded correct; per-problem shares
    /// replace the model's when given); `None` for the one-attractor model.
    pub modes: Option<ModeAnswers>,
}

/// Counts of one (cell, problem) pair over its votes. The graded counts are what a harness
/// prints; without a grader they are the true ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SelectionCounts {
    /// Votes with at least one sample graded correct (only drawn with a grader).
    pub any_graded: u64,
    /// Votes with every sample graded correct (only drawn with a grader).
    pub all_graded: u64,
    /// Majority votes whose pick was graded correct (only drawn with a grader).
    pub maj_graded: u64,
    /// Best-of-k picks graded correct (only drawn with a verifier).
    pub best_graded: u64,
    /// Best-of-k picks truly correct (only drawn with a verifier).
    pub best_true: u64,
}

/// Simulates `votes` votes of every (cell, problem) pair. Returns the counts per cell, per
/// problem. Deterministic for any thread count.
pub fn simulate_selection(
    seed: u64,
    key: &[u64],
    cells: &[SelectionCell],
    votes: u64,
) -> Vec<Vec<SelectionCounts>> {
    let pairs: Vec<(usize, usize)> = cells
        .iter()
        .enumerate()
        .flat_map(|(ci, c)| (0..c.p.len()).map(move |pi| (ci, pi)))
        .collect();
    let counts: Vec<SelectionCounts> = pairs
        .par_iter()
        .map(|&(ci, pi)| {
            if crate::interrupt::requested() {
                return SelectionCounts::default();
            }
            let mut path = key.to_vec();
            path.extend([ci as u64, pi as u64]);
            let mut rng = stream(seed, &path);
            one_problem(&cells[ci], pi, votes, &mut rng)
        })
        .collect();
    let mut out = Vec::with_capacity(cells.len());
    let mut it = counts.into_iter();
    for c in cells {
        out.push(it.by_ref().take(c.p.len()).collect());
    }
    out
}

fn one_problem(
    cell: &SelectionCell,
    pi: usize,
    votes: u64,
    rng: &mut super::stream::Rng,
) -> SelectionCounts {
    let (k, p) = (cell.k, cell.p[pi]);
    let mut c = SelectionCounts::default();
    let labels = |rule| match &cell.modes {
        Some(m) => {
            let attractors = m.per_problem.as_ref().map_or(&m.attractors, |v| &v[pi]);
            ModeVoteSampler::new(p, attractors, m.extraction, k, rule)
        }
        None => ModeVoteSampler::new(p, &[cell.attractor], Extraction::default(), k, rule),
    };
    let vote = cell.grader.map(|_| labels(cell.rule));
    // With several attractors or extraction the verifier's samples are drawn as answers too.
    let best = match (&cell.modes, cell.verifier) {
        (Some(_), Some(verifier)) => Some(ModeBestSampler {
            labels: labels(VoteRule::Random),
            verifier,
        }),
        _ => None,
    };
    let unparsed = cell.modes.as_ref().map_or(0.0, |m| m.extraction.unparsed);
    for _ in 0..votes {
        if let (Some(g), Some(vote)) = (&cell.grader, &vote) {
            let graded = if unparsed > 0.0 {
                graded_parsed_samples(p, k, unparsed, g, rng)
            } else {
                graded_samples(p, k, g, rng).0
            };
            c.any_graded += u64::from(graded > 0);
            c.all_graded += u64::from(graded == k);
            let win = vote.sample(rng).win;
            c.maj_graded += u64::from(grade(g, win, rng));
        }
        if let Some(v) = &cell.verifier {
            let correct = match (&best, *v) {
                (Some(b), _) => b.sample(rng),
                (None, Verifier::Threshold(verifier)) => {
                    ThresholdSampler { p, verifier, k }.sample(rng)
                }
                (None, Verifier::Score { separation }) => {
                    ScoreSampler { p, separation, k }.sample(rng)
                }
            };
            c.best_true += u64::from(correct);
            c.best_graded += u64::from(match &cell.grader {
                Some(g) => grade(g, correct, rng),
                None => correct,
            });
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Fallback, ThresholdVerifier};

    fn cells() -> Vec<SelectionCell> {
        vec![SelectionCell {
            p: vec![0.1, 0.5, 0.9],
            k: 8,
            attractor: 0.4,
            rule: VoteRule::Random,
            verifier: Some(Verifier::Threshold(ThresholdVerifier {
                tpr: 0.8,
                fpr: 0.1,
                fallback: Fallback::Random,
            })),
            grader: Some(Grader {
                fpr: 0.05,
                fnr: 0.1,
            }),
            modes: None,
        }]
    }

    /// The same cell with several attractors, unparsed and split: the verifier's samples are
    /// drawn as answers ([`super::super::modes::ModeBestSampler`]), per-problem shares given.
    fn mode_cells() -> Vec<SelectionCell> {
        let mut c = cells();
        c[0].modes = Some(ModeAnswers {
            attractors: vec![0.3, 0.2],
            extraction: Extraction {
                unparsed: 0.1,
                split: 0.3,
            },
            per_problem: Some(vec![vec![0.3, 0.2], vec![0.25, 0.2], vec![0.1, 0.1]]),
        });
        c
    }

    #[test]
    fn mode_selection_counts_do_not_depend_on_thread_count() {
        let run = |threads: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| simulate_selection(9, &[1, 2], &mode_cells(), 500))
        };
        assert_eq!(run(1), run(3));
        assert_ne!(run(1), simulate_selection(9, &[1, 2], &cells(), 500));
    }

    #[test]
    fn selection_counts_do_not_depend_on_thread_count() {
        let run = |threads: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| simulate_selection(9, &[1, 2], &cells(), 500))
        };
        assert_eq!(run(1), run(3));
        assert_ne!(run(1), simulate_selection(10, &[1, 2], &cells(), 500));
    }
}
