//! Simulation of best-of-k selection and noisy grading for the `curves` experiment.
//!
//! Every vote draws its samples as counts per category ([`super::picks`]): the verifier's pick
//! and the samples graded correct from binomial tables, at most four u64 a vote (a score
//! verifier also draws k scores); the graded majority vote from the vote's joint table
//! ([`VoteSampler`]) for one attractor share, its k answers one by one ([`ModeVoteSampler`])
//! for several shares or answer extraction; the pick graded once ([`grade`]). The verifier's,
//! the grader's and the vote's samples are independent draws (each metric is counted on its
//! own). Each (cell, problem) pair has its own stream keyed by (key, cell, problem), and the
//! pairs are counted in parallel with integer sums, so the counts are identical for any thread
//! count.
use rayon::prelude::*;

use super::modes::{grade, ModeVoteSampler};
use super::picks::PickTables;
use super::stream::stream;
use super::votes::{
    joint_pays, AttractorTables, ModeAnswers, VoteSampler, JOINT_MIN_VOTES_PER_ENTRY,
};
use crate::exact::maj::ln_factorials;
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
    /// Per-run logit SD omega: each vote then draws its run's rate p(eta) first and its samples
    /// at that rate ([`super::run_corr::run_rate`]); 0 for independent samples.
    pub run_sd: f64,
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

/// What a cell shares across its problems: the tables of its verifier's and grader's counts,
/// and of its graded majority vote when the model has one attractor share.
struct CellTables {
    lnf: Vec<f64>,
    picks: PickTables,
    attractor: Option<AttractorTables>,
}

impl CellTables {
    fn new(cell: &SelectionCell) -> CellTables {
        let lnf = ln_factorials(cell.k);
        let picks = PickTables::new(cell.k, cell.verifier, cell.grader, &lnf);
        let attractor = (cell.grader.is_some() && cell.modes.is_none())
            .then(|| AttractorTables::new(cell.k, cell.attractor, &lnf));
        CellTables {
            lnf,
            picks,
            attractor,
        }
    }
}

/// Simulates `votes` votes of every (cell, problem) pair. Returns the counts per cell, per
/// problem. Deterministic for any thread count. `progress` is called with (cell, votes) as
/// each pair finishes.
pub fn simulate_selection(
    seed: u64,
    key: &[u64],
    cells: &[SelectionCell],
    votes: u64,
    progress: &(dyn Fn(usize, u64) + Sync),
) -> Vec<Vec<SelectionCounts>> {
    let tables: Vec<CellTables> = cells.par_iter().map(CellTables::new).collect();
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
            let counts = one_problem(&cells[ci], &tables[ci], pi, votes, &mut rng);
            progress(ci, votes);
            counts
        })
        .collect();
    let mut out = Vec::with_capacity(cells.len());
    let mut it = counts.into_iter();
    for c in cells {
        out.push(it.by_ref().take(c.p.len()).collect());
    }
    out
}

/// The graded majority vote of one problem: the joint-table or two-draw sampler of one
/// attractor share, the literal label sampler of several shares or answer extraction.
enum GradedVote<'a> {
    One(VoteSampler<'a>),
    Modes(ModeVoteSampler),
}

impl GradedVote<'_> {
    #[inline]
    fn win(&self, rng: &mut super::stream::Rng) -> bool {
        match self {
            GradedVote::One(v) => v.sample(rng).win,
            GradedVote::Modes(v) => v.sample(rng).win,
        }
    }
}

/// The counts of one (cell, problem) pair: every vote drawn at the problem's rate, or under
/// per-run noise each at its run's rate p(eta) (the samplers rebuilt per vote, two-draw for
/// one attractor share).
fn one_problem(
    cell: &SelectionCell,
    tables: &CellTables,
    pi: usize,
    votes: u64,
    rng: &mut super::stream::Rng,
) -> SelectionCounts {
    let p = cell.p[pi];
    let mut c = SelectionCounts::default();
    if cell.run_sd == 0.0 {
        draw_votes(cell, tables, pi, p, votes, &mut c, rng);
    } else {
        for _ in 0..votes {
            let pr = super::run_corr::run_rate(p, cell.run_sd, rng);
            draw_votes(cell, tables, pi, pr, 1, &mut c, rng);
        }
    }
    c
}

/// Draws `votes` votes of problem `pi` of a cell at rate p into `c`.
fn draw_votes(
    cell: &SelectionCell,
    tables: &CellTables,
    pi: usize,
    p: f64,
    votes: u64,
    c: &mut SelectionCounts,
    rng: &mut super::stream::Rng,
) {
    let k = cell.k;
    let vote = cell.grader.map(|_| match (&cell.modes, &tables.attractor) {
        (Some(m), _) => {
            let attractors = m.per_problem.as_ref().map_or(&m.attractors, |v| &v[pi]);
            GradedVote::Modes(ModeVoteSampler::new(
                p,
                attractors,
                m.extraction,
                k,
                cell.rule,
            ))
        }
        (None, Some(a)) if joint_pays(k, votes, JOINT_MIN_VOTES_PER_ENTRY) => {
            GradedVote::One(VoteSampler::new(k, p, a, cell.rule, &tables.lnf))
        }
        (None, Some(a)) => GradedVote::One(VoteSampler::two_draws(k, p, a, cell.rule, &tables.lnf)),
        (None, None) => unreachable!("a graded cell of one share has its attractor tables"),
    });
    let unparsed = cell.modes.as_ref().map_or(0.0, |m| m.extraction.unparsed);
    let picks = tables.picks.problem(p, unparsed, &tables.lnf);
    for _ in 0..votes {
        if let (Some(g), Some(vote)) = (&cell.grader, &vote) {
            let graded = picks.graded(rng);
            c.any_graded += u64::from(graded > 0);
            c.all_graded += u64::from(graded == k);
            c.maj_graded += u64::from(grade(g, vote.win(rng), rng));
        }
        if cell.verifier.is_some() {
            let correct = picks.best(rng);
            c.best_true += u64::from(correct);
            c.best_graded += u64::from(match &cell.grader {
                Some(g) => grade(g, correct, rng),
                None => correct,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::modes::Extraction;
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
            run_sd: 0.0,
        }]
    }

    /// The same cell with several attractors, unparsed and split: the verifier's picks are drawn
    /// as counts at the parsed rate (1 - u) p (`sim::picks`), per-problem shares given.
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
                .install(|| simulate_selection(9, &[1, 2], &mode_cells(), 500, &|_, _| {}))
        };
        assert_eq!(run(1), run(3));
        assert_ne!(
            run(1),
            simulate_selection(9, &[1, 2], &cells(), 500, &|_, _| {})
        );
    }

    #[test]
    fn selection_counts_do_not_depend_on_thread_count() {
        let run = |threads: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| simulate_selection(9, &[1, 2], &cells(), 500, &|_, _| {}))
        };
        assert_eq!(run(1), run(3));
        assert_ne!(
            run(1),
            simulate_selection(10, &[1, 2], &cells(), 500, &|_, _| {})
        );
    }
}
