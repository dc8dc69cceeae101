//! Simulated majority votes: O(1) draws per vote whatever k is.
//!
//! C ~ Bin(k, p) and A ~ Bin(k - C, alpha) are drawn from alias tables (one u64 each),
//! S = k - C - A, and the vote is then scored literally: M = max(C, A, [S > 0]), T answers tied
//! at M, ties broken uniformly. This is deliberately a different route from the exact sum in
//! [`crate::exact::maj`], so that the two check each other.
use std::collections::HashMap;

use rand::RngCore;
use rayon::prelude::*;

use super::alias::AliasTable;
use super::counts::Histogram;
use super::{batches_of, run_merged, stream::stream, BATCH};
use crate::exact::maj::{binomial_pmf_with, ln_factorials};
use crate::model::VoteRule;

/// Alias tables of Bin(m, alpha) for m = 0..=k.
#[derive(Debug, Clone)]
pub struct AttractorTables {
    tables: Vec<AliasTable>,
}

impl AttractorTables {
    /// Builds the k + 1 tables. Time and memory: O(k^2).
    pub fn new(k: u32, alpha: f64, lnf: &[f64]) -> AttractorTables {
        AttractorTables {
            tables: (0..=k)
                .map(|m| AliasTable::new(&binomial_pmf_with(m, alpha, lnf)))
                .collect(),
        }
    }
}

impl AttractorTables {
    /// Scores one vote of k samples (k at most the k these tables were built for) of which c are
    /// correct: draws A ~ Bin(k - c, alpha) (one u64) when it can matter, leaves S = k - c - A
    /// one-off answers, and returns whether the correct answer wins under `rule` (a uniform
    /// tie-break costs one more u64, only when there is a tie).
    #[inline(always)]
    pub fn correct_wins<R: RngCore + ?Sized>(
        &self,
        k: u32,
        c: u32,
        rule: VoteRule,
        rng: &mut R,
    ) -> bool {
        // With no correct answer, or a strict majority of them, A cannot change the outcome
        // under any rule, so it is not drawn.
        if c == 0 || 2 * c > k {
            return c > 0;
        }
        let m = k - c;
        let a = self.tables[m as usize].sample(rng);
        let s = m - a;
        let top = c.max(a).max(u32::from(s > 0));
        let tied = || 1 + u32::from(a == top) + if top == 1 { s } else { 0 };
        match rule {
            VoteRule::Absolute => false,
            _ if c != top => false,
            VoteRule::Strict => tied() == 1,
            VoteRule::Random => {
                let t = tied();
                t == 1 || ((u128::from(rng.next_u64()) * u128::from(t)) >> 64) == 0
            }
        }
    }
}

/// Draws votes of k samples for one problem.
#[derive(Debug, Clone)]
pub struct VoteSampler<'a> {
    k: u32,
    correct: AliasTable,
    attractor: &'a AttractorTables,
    rule: VoteRule,
}

/// What one vote produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Vote {
    /// Number of correct answers among the k samples.
    pub correct: u32,
    /// Whether the correct answer won the vote.
    pub win: bool,
}

impl<'a> VoteSampler<'a> {
    /// A sampler for a problem with correct rate `p` whose other answers follow `attractor`.
    pub fn new(
        k: u32,
        p: f64,
        attractor: &'a AttractorTables,
        rule: VoteRule,
        lnf: &[f64],
    ) -> Self {
        VoteSampler {
            k,
            correct: AliasTable::new(&binomial_pmf_with(k, p, lnf)),
            attractor,
            rule,
        }
    }

    /// One vote: one u64 for C, one for A when it can matter, and one more only to break a tie.
    #[inline(always)]
    pub fn sample<R: RngCore + ?Sized>(&self, rng: &mut R) -> Vote {
        let c = self.correct.sample(rng);
        Vote {
            correct: c,
            win: self.attractor.correct_wins(self.k, c, self.rule, rng),
        }
    }
}

/// Counts from many votes of one problem.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VoteCounts {
    /// Votes drawn.
    pub votes: u64,
    /// Votes the correct answer won (maj@k).
    pub wins: u64,
    /// Votes with at least one correct sample (pass@k).
    pub any_correct: u64,
    /// Votes with every sample correct (pass^k).
    pub all_correct: u64,
}

impl VoteCounts {
    fn add(&mut self, o: VoteCounts) {
        self.votes += o.votes;
        self.wins += o.wins;
        self.any_correct += o.any_correct;
        self.all_correct += o.all_correct;
    }
}

/// One cell of a vote experiment: k samples per vote on every problem, with per-problem correct
/// rate p_i and attractor probability alpha_i = q_i / (1 - p_i) among the non-correct samples.
#[derive(Debug, Clone)]
pub struct VoteCell {
    /// Samples per vote.
    pub k: u32,
    /// Correct rate per problem.
    pub p: Vec<f64>,
    /// Attractor share among the non-correct samples, per problem.
    pub alpha: Vec<f64>,
    /// How ties are scored.
    pub rule: VoteRule,
}

/// Simulates `votes` votes per problem in every cell; the batch of problem i in cell c uses the
/// stream (seed, key..., c, i, batch). Returns counts per cell per problem, identical for any
/// thread count (counts are integer sums, so the order batches finish in cannot matter).
/// `progress` is called with votes done.
///
/// Cells run one after another, each in parallel over problems and batches, so memory is
/// O(k^2) for one cell's tables plus O(cells x problems) counts, whatever `votes` is. Once an
/// interruption is [`requested`](crate::interrupt::requested), remaining batches are skipped
/// (their counts stay zero) so the caller can stop quickly; such counts must be discarded.
pub fn simulate(
    seed: u64,
    key: &[u64],
    cells: &[VoteCell],
    votes: u64,
    progress: &(dyn Fn(u64) + Sync),
) -> Vec<Vec<VoteCounts>> {
    let kmax = cells.iter().map(|c| c.k).max().unwrap_or(1);
    let lnf = ln_factorials(kmax);
    let n_batches = votes.div_ceil(BATCH);
    cells
        .iter()
        .enumerate()
        .map(|(ci, cell)| {
            // Attractor tables shared by the problems with the same alpha: O(k^2) each.
            let mut index: HashMap<u64, usize> = HashMap::new();
            let mut list = Vec::new();
            let which: Vec<usize> = cell
                .alpha
                .iter()
                .map(|a| {
                    *index.entry(a.to_bits()).or_insert_with(|| {
                        list.push(AttractorTables::new(cell.k, *a, &lnf));
                        list.len() - 1
                    })
                })
                .collect();
            (0..cell.p.len())
                .into_par_iter()
                .map(|i| {
                    let sampler =
                        VoteSampler::new(cell.k, cell.p[i], &list[which[i]], cell.rule, &lnf);
                    (0..n_batches)
                        .into_par_iter()
                        .map(|b| {
                            if crate::interrupt::requested() {
                                return VoteCounts::default();
                            }
                            let n = BATCH.min(votes - b * BATCH);
                            let mut path = key.to_vec();
                            path.extend([ci as u64, i as u64, b]);
                            let mut rng = stream(seed, &path);
                            let mut out = VoteCounts {
                                votes: n,
                                ..Default::default()
                            };
                            for _ in 0..n {
                                let v = sampler.sample(&mut rng);
                                out.wins += u64::from(v.win);
                                out.any_correct += u64::from(v.correct > 0);
                                out.all_correct += u64::from(v.correct == cell.k);
                            }
                            progress(n);
                            out
                        })
                        .reduce(VoteCounts::default, |mut a, b| {
                            a.add(b);
                            a
                        })
                })
                .collect()
        })
        .collect()
}

/// Reruns per parallel task of [`vote_total_histograms`] (a rerun is one vote per problem).
const RERUN_BATCH: u64 = 256;

/// Per cell (one sampler per problem), histograms of the wins and of the correct samples of
/// `reruns` reruns, each rerun one vote on every problem. Every (cell, batch of 256 reruns) is
/// one parallel task with the stream (seed, cell key, batch), so the result does not depend on
/// the thread count or on the other cells.
pub fn vote_total_histograms(
    seed: u64,
    cells: &[(&[u64], &[VoteSampler])],
    reruns: u64,
    progress: &(dyn Fn(u64) + Sync),
) -> Vec<(Histogram, Histogram)> {
    let tasks: Vec<(usize, u64, u64)> = (0..cells.len())
        .flat_map(|ci| batches_of(reruns, RERUN_BATCH).map(move |(b, c)| (ci, b, c)))
        .collect();
    let empty = (Histogram::default(), Histogram::default());
    run_merged(
        &tasks,
        vec![empty.clone(); cells.len()],
        |&(ci, batch, count)| {
            let (key, samplers) = cells[ci];
            let mut path = key.to_vec();
            path.push(batch);
            let mut rng = stream(seed, &path);
            let (mut hw, mut hc) = (Histogram::default(), Histogram::default());
            for _ in 0..count {
                let (mut w, mut c) = (0u64, 0u64);
                for s in samplers {
                    let v = s.sample(&mut rng);
                    w += u64::from(v.win);
                    c += u64::from(v.correct);
                }
                hw.add(w);
                hc.add(c);
            }
            progress(count);
            let mut out = vec![empty.clone(); cells.len()];
            out[ci] = (hw, hc);
            out
        },
        |a, b| {
            a.into_iter()
                .zip(b)
                .map(|(x, y)| (x.0.merge(y.0), x.1.merge(y.1)))
                .collect()
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::maj::maj_at_k;

    #[test]
    fn one_problem_vote_rate_matches_exact_within_mc_error() {
        for rule in [VoteRule::Random, VoteRule::Strict, VoteRule::Absolute] {
            for (k, p, a) in [
                (1u32, 0.4, 0.5),
                (2, 0.4, 0.5),
                (5, 0.3, 0.8),
                (16, 0.35, 0.5),
                (64, 0.3, 0.5),
            ] {
                let cell = VoteCell {
                    k,
                    p: vec![p],
                    alpha: vec![a],
                    rule,
                };
                let votes = 200_000;
                let c = simulate(11, &[k as u64], &[cell], votes, &|_| {})[0][0];
                let exact = maj_at_k(p, a, k, rule);
                let se = (exact * (1.0 - exact) / votes as f64).sqrt();
                let sim = c.wins as f64 / votes as f64;
                assert!(
                    ((sim - exact) / se).abs() < 4.5,
                    "{rule:?} k={k}: sim {sim} exact {exact}"
                );
            }
        }
    }
}
