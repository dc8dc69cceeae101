//! Simulated majority votes: O(1) draws per vote whatever k is.
//!
//! A vote of k samples is C correct answers, A copies of the attractor and S = k - C - A one-off
//! answers, with C ~ Bin(k, p) and A ~ Bin(k - C, alpha). It is scored literally
//! (`contenders`): M = max(C, A, \[S > 0\]), T answers tied at M, ties broken uniformly by one
//! more u64 (only when there is a tie, under [`VoteRule::Random`]). This is deliberately a
//! different route from the exact sum in [`crate::exact::maj`], so that the two check each other.
//!
//! (C, A) is drawn one of two ways, with the same distribution:
//!
//! - **Joint** (k up to 73, [`JOINT_MAX_ENTRIES`]): one alias table per problem over the
//!   outcomes (c, a) themselves, with probability P(C = c) P(A = a | k - c), and a single entry
//!   (c, no A) for each c where A cannot change the vote (c = 0 or 2c > k). Every entry's
//!   deterministic score (c, and whether the correct answer surely wins, surely loses or is tied
//!   with T - 1 others) is computed once from the literal scoring, so a vote costs one u64 and one
//!   table lookup. The entries are the (c, a) outcomes of the vote, never merged by whether the
//!   correct answer wins (that would sample the exact W(c) of [`crate::exact::maj`] instead of
//!   checking it). The table has about 3k^2/8 entries and takes about 8 ns per entry to build,
//!   so it is used only where the votes drawn from it pay for it ([`joint_pays`]).
//! - **Two draws** (larger k, too few votes, or [`VoteSampler::two_draws`]): C from an alias
//!   table of Bin(k, p), then A from the shared table of Bin(k - C, alpha) only when it can
//!   matter: one u64 each.
//!
//! Why here: the simulated side of `curves`, `vote-spread` and capped votes in `cost`.
//! Depends on `model`, `exact` (pmfs for the tables), `interrupt` and the rest of `sim`.
use std::collections::HashMap;

use rand::RngCore;
use rayon::prelude::*;

use super::alias::{sample_labelled, AliasTable, LabelledColumn};
use super::counts::Histogram;
use super::modes::{GradedVoteSampler, ModeVoteSampler};
use super::{batches_of, run_merged, stream::stream, BATCH};
use crate::exact::maj::{binomial_pmf_with, ln_factorials};
use crate::exact::modes::Extraction;
use crate::model::VoteRule;

/// Most outcomes (c, a) in the joint table of one [`VoteSampler`]: 2,048, enough for k up to 73
/// (2,036 entries; k = 64 has 1,585, k = 74 would need 2,110). The table (16 bytes per entry)
/// then holds at most 32 KB per problem, which stays in cache while a batch of votes of that
/// problem is drawn, and is built in about the time a few thousand votes take. Keeps k below
/// 2^16 (`Score`).
pub const JOINT_MAX_ENTRIES: usize = 2048;

const _: () = assert!(JOINT_MAX_ENTRIES < 1 << 16);

/// Votes per joint-table entry from which a sampler used on its own, batch after batch of one
/// problem ([`simulate`]), gets a joint table: building one costs about 8 ns per entry and a
/// joint vote saves 2.5 to 5 ns, so it pays from about 2.5 votes per entry (measured on this
/// 2-core machine: at k = 64, 4,000 votes per problem are 6% slower joint, 16,000 are 38%
/// faster).
pub const JOINT_MIN_VOTES_PER_ENTRY: u64 = 4;

/// Votes per joint-table entry from which a set of samplers used together, one vote of each in
/// turn ([`samplers`] for [`vote_total_histograms`]), gets joint tables: they are built before
/// the parallel draws and compete for the cache, so they pay later. At k = 16 (109 entries) with
/// 30 problems, 2,000 reruns were 23% faster joint for rates spread evenly over (0, 1) but 25%
/// slower for the note's rates (mostly near 0 or 1, where two draws need one word), 8,000
/// reruns 46% faster; at k = 32 (409 entries) 8,000 reruns were 15% faster.
pub const JOINT_SET_MIN_VOTES_PER_ENTRY: u64 = 20;

/// Most joint-table entries in one set of samplers ([`samplers`]): 2^19 (8 MB); a larger set
/// gets two-draw samplers (k + 1 entries each), so memory stays O(N k) for many problems and the
/// tables stay in cache (3,000 problems at k = 24, 11 MB, were 53% slower joint).
pub const JOINT_MAX_SET_ENTRIES: usize = 1 << 19;

/// Whether a sampler of k samples per vote that will draw `votes` votes gets a joint table: k is
/// small enough ([`JOINT_MAX_ENTRIES`]) and there are at least `per_entry` votes per entry to pay
/// for building it. Time: O(k).
pub fn joint_pays(k: u32, votes: u64, per_entry: u64) -> bool {
    let entries = joint_entries(k);
    entries <= JOINT_MAX_ENTRIES && votes >= per_entry.saturating_mul(entries as u64)
}

/// Whether the attractor count can change a vote of k samples with c correct answers: not with
/// no correct answer (it loses) nor with a strict majority of them (it wins, under every rule).
#[inline(always)]
fn attractor_matters(k: u32, c: u32) -> bool {
    c > 0 && 2 * c <= k
}

/// The vote rule applied literally to one vote of k samples: c correct answers, a copies of the
/// attractor and s = k - c - a one-off answers (`a` is ignored where it cannot matter,
/// [`attractor_matters`]). M = max(c, a, [s > 0]) and T = [c = M] + [a = M] + (s if M = 1)
/// answers are tied at the top. Returns among how many answers the correct one's win is drawn
/// uniformly: 0 when it loses outright, 1 when it wins outright, T >= 2 when it is tied at the top
/// under [`VoteRule::Random`].
#[inline(always)]
fn contenders(k: u32, c: u32, a: u32, rule: VoteRule) -> u32 {
    if !attractor_matters(k, c) {
        return u32::from(c > 0);
    }
    let s = k - c - a;
    let top = c.max(a).max(u32::from(s > 0));
    let tied = || 1 + u32::from(a == top) + if top == 1 { s } else { 0 };
    match rule {
        // A strict majority was needed, and c <= k / 2 here.
        VoteRule::Absolute => 0,
        _ if c != top => 0,
        VoteRule::Strict => u32::from(tied() == 1),
        VoteRule::Random => tied(),
    }
}

/// Whether the correct answer wins among `contenders` answers ([`contenders`]): a uniform draw
/// from one more u64 only when there is a tie. (The rare tie is tested first and is the only
/// branch: a sure win or loss is a comparison, not a jump the processor would mispredict.)
#[inline(always)]
fn wins_among<R: RngCore + ?Sized>(contenders: u32, rng: &mut R) -> bool {
    if contenders > 1 {
        ((u128::from(rng.next_u64()) * u128::from(contenders)) >> 64) == 0
    } else {
        contenders == 1
    }
}

/// The deterministic part of one joint outcome (c, a) in one word: the correct count c in the
/// low 16 bits, [`contenders`] in the high 16 (both at most k).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Score(u32);

impl Score {
    fn new(correct: u32, contenders: u32) -> Score {
        debug_assert!(correct < 1 << 16 && contenders < 1 << 16);
        Score(correct | contenders << 16)
    }

    #[inline(always)]
    fn correct(self) -> u32 {
        self.0 & 0xFFFF
    }

    #[inline(always)]
    fn contenders(self) -> u32 {
        self.0 >> 16
    }
}

/// The outcomes (c, a) of a vote of k samples in the order of the joint table: c = 0..=k, and
/// for each c either every a in 0..=k - c ([`attractor_matters`]) or a single entry with a = 0.
fn joint_outcomes(k: u32) -> impl Iterator<Item = (u32, u32)> {
    (0..=k).flat_map(move |c| {
        let last = if attractor_matters(k, c) { k - c } else { 0 };
        (0..=last).map(move |a| (c, a))
    })
}

/// Entries of the joint table of (C, A) for k samples: O(k).
pub fn joint_entries(k: u32) -> usize {
    (0..=k)
        .map(|c| {
            if attractor_matters(k, c) {
                (k - c + 1) as usize
            } else {
                1
            }
        })
        .sum()
}

/// The part of the joint table of k samples that does not depend on p: shared by all problems
/// with the same attractor share.
#[derive(Debug, Clone)]
struct JointLayout {
    /// P(A = a | k - c) per entry (1 for an entry without A).
    given_correct: Vec<f64>,
    /// The [`Score`] of every entry under each rule ([`rule_slot`]).
    scores: [Vec<u32>; 3],
}

fn rule_slot(rule: VoteRule) -> usize {
    match rule {
        VoteRule::Random => 0,
        VoteRule::Strict => 1,
        VoteRule::Absolute => 2,
    }
}

/// Alias tables of Bin(m, alpha) for m = 0..=k, and for small k the layout of the joint tables.
#[derive(Debug, Clone)]
pub struct AttractorTables {
    k: u32,
    tables: Vec<AliasTable>,
    joint: Option<JointLayout>,
}

impl AttractorTables {
    /// Builds the k + 1 tables, and the joint layout when k is small enough
    /// ([`JOINT_MAX_ENTRIES`]). Time and memory: O(k^2).
    pub fn new(k: u32, alpha: f64, lnf: &[f64]) -> AttractorTables {
        let pmfs: Vec<Vec<f64>> = (0..=k).map(|m| binomial_pmf_with(m, alpha, lnf)).collect();
        let joint = (joint_entries(k) <= JOINT_MAX_ENTRIES).then(|| {
            let outcomes: Vec<(u32, u32)> = joint_outcomes(k).collect();
            let score = |rule| {
                outcomes
                    .iter()
                    .map(|&(c, a)| Score::new(c, contenders(k, c, a, rule)).0)
                    .collect()
            };
            JointLayout {
                given_correct: outcomes
                    .iter()
                    .map(|&(c, a)| {
                        if attractor_matters(k, c) {
                            pmfs[(k - c) as usize][a as usize]
                        } else {
                            1.0
                        }
                    })
                    .collect(),
                scores: [
                    score(VoteRule::Random),
                    score(VoteRule::Strict),
                    score(VoteRule::Absolute),
                ],
            }
        });
        AttractorTables {
            k,
            tables: pmfs.iter().map(|pmf| AliasTable::new(pmf)).collect(),
            joint,
        }
    }

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
        let a = if attractor_matters(k, c) {
            self.tables[(k - c) as usize].sample(rng)
        } else {
            0
        };
        wins_among(contenders(k, c, a, rule), rng)
    }
}

/// Draws votes of k samples for one problem.
#[derive(Debug, Clone)]
pub struct VoteSampler<'a> {
    k: u32,
    draw: Draw<'a>,
}

/// How a [`VoteSampler`] draws (C, A).
#[derive(Debug, Clone)]
enum Draw<'a> {
    /// One alias table over the joint outcomes (c, a), labelled with their scores.
    Joint(Vec<LabelledColumn>),
    /// C from its own table, then A from the shared tables when it can matter.
    TwoDraws {
        correct: AliasTable,
        attractor: &'a AttractorTables,
        rule: VoteRule,
    },
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
    /// A sampler for a problem with correct rate `p` whose other answers follow `attractor`:
    /// one joint draw per vote when `attractor` was built for this k and k is small enough
    /// ([`JOINT_MAX_ENTRIES`]; time and memory O(k^2), 16 bytes per entry), two draws otherwise
    /// (time and memory O(k)). The joint table pays for itself only over enough votes: callers
    /// that know how many they will draw choose with [`joint_pays`] or [`samplers`].
    pub fn new(
        k: u32,
        p: f64,
        attractor: &'a AttractorTables,
        rule: VoteRule,
        lnf: &[f64],
    ) -> Self {
        let pmf = binomial_pmf_with(k, p, lnf);
        match &attractor.joint {
            Some(layout) if attractor.k == k => {
                let scores = &layout.scores[rule_slot(rule)];
                let probs: Vec<f64> = scores
                    .iter()
                    .zip(&layout.given_correct)
                    .map(|(&s, g)| pmf[Score(s).correct() as usize] * g)
                    .collect();
                VoteSampler {
                    k,
                    draw: Draw::Joint(AliasTable::new(&probs).labelled(scores)),
                }
            }
            _ => Self::from_pmf(k, &pmf, attractor, rule),
        }
    }

    /// A sampler that always draws C and then A (when it can matter) from separate tables:
    /// time and memory O(k).
    pub fn two_draws(
        k: u32,
        p: f64,
        attractor: &'a AttractorTables,
        rule: VoteRule,
        lnf: &[f64],
    ) -> Self {
        Self::from_pmf(k, &binomial_pmf_with(k, p, lnf), attractor, rule)
    }

    fn from_pmf(k: u32, pmf: &[f64], attractor: &'a AttractorTables, rule: VoteRule) -> Self {
        VoteSampler {
            k,
            draw: Draw::TwoDraws {
                correct: AliasTable::new(pmf),
                attractor,
                rule,
            },
        }
    }

    /// Whether this sampler draws (C, A) jointly with one u64.
    pub fn is_joint(&self) -> bool {
        matches!(self.draw, Draw::Joint(_))
    }

    /// One vote: one u64 for (C, A) (joint) or one for C and one for A when it can matter (two
    /// draws), and one more only to break a tie.
    #[inline(always)]
    pub fn sample<R: RngCore + ?Sized>(&self, rng: &mut R) -> Vote {
        match &self.draw {
            Draw::Joint(table) => {
                let s = Score(sample_labelled(table, rng.next_u64()));
                Vote {
                    correct: s.correct(),
                    win: wins_among(s.contenders(), rng),
                }
            }
            Draw::TwoDraws {
                correct,
                attractor,
                rule,
            } => {
                let c = correct.sample(rng);
                Vote {
                    correct: c,
                    win: attractor.correct_wins(self.k, c, *rule, rng),
                }
            }
        }
    }
}

/// One sampler per rate for votes of k samples, for callers that hold them all at once and draw
/// `votes` votes from each: joint samplers ([`VoteSampler::new`]) when that pays
/// ([`JOINT_SET_MIN_VOTES_PER_ENTRY`]) and their tables hold at most [`JOINT_MAX_SET_ENTRIES`]
/// entries in all, two-draw samplers ([`VoteSampler::two_draws`]) otherwise.
pub fn samplers<'a>(
    k: u32,
    rates: &[f64],
    attractor: &'a AttractorTables,
    rule: VoteRule,
    lnf: &[f64],
    votes: u64,
) -> Vec<VoteSampler<'a>> {
    let joint = joint_pays(k, votes, JOINT_SET_MIN_VOTES_PER_ENTRY)
        && rates.len().saturating_mul(joint_entries(k)) <= JOINT_MAX_SET_ENTRIES;
    rates
        .iter()
        .map(|&p| {
            if joint {
                VoteSampler::new(k, p, attractor, rule, lnf)
            } else {
                VoteSampler::two_draws(k, p, attractor, rule, lnf)
            }
        })
        .collect()
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

/// Several attractors and answer extraction for a [`VoteCell`]: its votes are then drawn literally,
/// sample by sample ([`ModeVoteSampler`]), and `alpha` is not used.
#[derive(Debug, Clone, PartialEq)]
pub struct ModeAnswers {
    /// Each repeated wrong answer's share of the wrong mass (at most
    /// [`super::modes::SAMPLER_MAX_ATTRACTORS`]).
    pub attractors: Vec<f64>,
    /// Unparsed and split shares.
    pub extraction: Extraction,
    /// Attractor shares per problem, replacing `attractors` when given (under a token cap each
    /// problem keeps its own share of wrong traces).
    pub per_problem: Option<Vec<Vec<f64>>>,
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
    /// Several attractors or answer extraction, drawn literally instead of `alpha`.
    pub modes: Option<ModeAnswers>,
}

/// Simulates `votes` votes per problem in every cell; the batch of problem i in cell c uses the
/// stream (seed, key..., c, i, batch). Returns counts per cell per problem, identical for any
/// thread count (counts are integer sums, so the order batches finish in cannot matter).
/// `progress` is called with votes done. Each problem's sampler is joint when `votes` pays for its
/// table ([`JOINT_MIN_VOTES_PER_ENTRY`]), two-draw otherwise.
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
    cells
        .iter()
        .enumerate()
        .map(|(ci, cell)| {
            // Attractor tables shared by the problems with the same alpha: O(k^2) each.
            let mut index: HashMap<u64, usize> = HashMap::new();
            let mut list = Vec::new();
            let which: Vec<usize> = if cell.modes.is_some() {
                Vec::new()
            } else {
                cell.alpha
                    .iter()
                    .map(|a| {
                        *index.entry(a.to_bits()).or_insert_with(|| {
                            list.push(AttractorTables::new(cell.k, *a, &lnf));
                            list.len() - 1
                        })
                    })
                    .collect()
            };
            let joint = joint_pays(cell.k, votes, JOINT_MIN_VOTES_PER_ENTRY);
            let path = |i: usize| {
                let mut path = key.to_vec();
                path.extend([ci as u64, i as u64]);
                path
            };
            match &cell.modes {
                None => count_votes(seed, cell, votes, path, progress, |i| {
                    let (k, p, others) = (cell.k, cell.p[i], &list[which[i]]);
                    if joint {
                        VoteSampler::new(k, p, others, cell.rule, &lnf)
                    } else {
                        VoteSampler::two_draws(k, p, others, cell.rule, &lnf)
                    }
                }),
                Some(modes) => count_votes(seed, cell, votes, path, progress, |i| {
                    ModeVoteSampler::new(
                        cell.p[i],
                        modes
                            .per_problem
                            .as_ref()
                            .map_or(&modes.attractors, |v| &v[i]),
                        modes.extraction,
                        cell.k,
                        cell.rule,
                    )
                }),
            }
        })
        .collect()
}

/// One vote of any sampler: [`VoteSampler`] (one attractor) or [`ModeVoteSampler`] (several
/// attractors, answer extraction), so that [`simulate`] has one batch loop for both.
pub trait DrawVote {
    /// Draws one vote of k samples.
    fn draw<R: RngCore + ?Sized>(&self, rng: &mut R) -> Vote;
}

impl DrawVote for VoteSampler<'_> {
    #[inline(always)]
    fn draw<R: RngCore + ?Sized>(&self, rng: &mut R) -> Vote {
        self.sample(rng)
    }
}

impl DrawVote for GradedVoteSampler {
    #[inline(always)]
    fn draw<R: RngCore + ?Sized>(&self, rng: &mut R) -> Vote {
        let v = self.sample(rng);
        Vote {
            correct: v.correct,
            win: v.win,
        }
    }
}

impl DrawVote for ModeVoteSampler {
    #[inline(always)]
    fn draw<R: RngCore + ?Sized>(&self, rng: &mut R) -> Vote {
        let v = self.sample(rng);
        Vote {
            correct: v.correct,
            win: v.win,
        }
    }
}

/// The batch loop of [`simulate`] for one cell: problem i's sampler from `sampler(i)`, its
/// batch b drawn from the stream (seed, path(i)..., b).
fn count_votes<S: DrawVote + Sync>(
    seed: u64,
    cell: &VoteCell,
    votes: u64,
    path: impl Fn(usize) -> Vec<u64> + Sync,
    progress: &(dyn Fn(u64) + Sync),
    sampler: impl Fn(usize) -> S + Sync,
) -> Vec<VoteCounts> {
    let n_batches = votes.div_ceil(BATCH);
    (0..cell.p.len())
        .into_par_iter()
        .map(|i| {
            let sampler = sampler(i);
            (0..n_batches)
                .into_par_iter()
                .map(|b| {
                    if crate::interrupt::requested() {
                        return VoteCounts::default();
                    }
                    let n = BATCH.min(votes - b * BATCH);
                    let mut path = path(i);
                    path.push(b);
                    let mut rng = stream(seed, &path);
                    let mut out = VoteCounts {
                        votes: n,
                        ..Default::default()
                    };
                    let k = cell.k;
                    for _ in 0..n {
                        let v = sampler.draw(&mut rng);
                        out.wins += u64::from(v.win);
                        out.any_correct += u64::from(v.correct > 0);
                        out.all_correct += u64::from(v.correct == k);
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
}

/// Reruns per parallel task of [`vote_total_histograms`] (a rerun is one vote per problem).
const RERUN_BATCH: u64 = 256;

/// Per cell (one sampler per problem), histograms of the wins and of the correct samples of
/// `reruns` reruns, each rerun one vote on every problem. Every (cell, batch of 256 reruns) is
/// one parallel task with the stream (seed, cell key, batch), so the result does not depend on
/// the thread count or on the other cells.
pub fn vote_total_histograms<S: DrawVote + Sync>(
    seed: u64,
    cells: &[(&[u64], &[S])],
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
                    let v = s.draw(&mut rng);
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
    use crate::exact::pass::{pass_at_k, pass_hat_k};

    const RULES: [VoteRule; 3] = [VoteRule::Random, VoteRule::Strict, VoteRule::Absolute];

    /// Asserts |sim - exact| < 4.5 standard errors of a Bernoulli(exact) rate over `votes`
    /// (equality when the exact value is 0 or 1).
    fn assert_rate(what: &str, hits: u64, votes: u64, exact: f64) {
        let sim = hits as f64 / votes as f64;
        let se = (exact * (1.0 - exact) / votes as f64).sqrt();
        if se == 0.0 {
            assert_eq!(sim, exact, "{what}");
        } else {
            let z = (sim - exact) / se;
            assert!(z.abs() < 4.5, "{what}: sim {sim} exact {exact} z {z:.2}");
        }
    }

    /// maj@k, pass@k and pass^k of one problem, simulated by `simulate` (one sampler per
    /// problem, [`VoteSampler::new`]) against the exact values.
    #[test]
    fn one_problem_vote_rate_matches_exact_within_mc_error() {
        for rule in RULES {
            for (k, p, a) in [
                (1u32, 0.4, 0.5),
                (2, 0.4, 0.5),
                (5, 0.3, 0.8),
                (16, 0.35, 0.5),
                (64, 0.3, 0.5),
                // Above the joint limit: two draws.
                (100, 0.35, 0.5),
            ] {
                let cell = VoteCell {
                    k,
                    p: vec![p],
                    alpha: vec![a],
                    rule,
                    modes: None,
                };
                let votes = 200_000;
                let c = simulate(11, &[k as u64], &[cell], votes, &|_| {})[0][0];
                let what = format!("{rule:?} k={k} p={p} a={a}");
                assert_eq!(c.votes, votes);
                assert_rate(&what, c.wins, votes, maj_at_k(p, a, k, rule));
                assert_rate(&what, c.any_correct, votes, pass_at_k(p, k));
                assert_rate(&what, c.all_correct, votes, pass_hat_k(p, k));
            }
        }
    }

    /// Cells with several attractors or extraction failures go through the same batch loop with
    /// the literal sampler of [`crate::sim::modes`], against the exact values of
    /// [`crate::exact::modes`].
    #[test]
    fn mode_cells_match_exact_within_mc_error() {
        use crate::exact::modes::{graded_rate, maj_at_k_modes};
        let votes = 100_000;
        for rule in RULES {
            for (k, p, attractors, u, s) in [
                (5u32, 0.35, vec![0.4, 0.3], 0.0, 0.0),
                (8, 0.5, vec![0.5], 0.1, 0.3),
                (16, 0.3, vec![0.3, 0.3, 0.2], 0.05, 0.2),
                (3, 0.6, vec![], 0.0, 0.5),
            ] {
                let extraction = Extraction {
                    unparsed: u,
                    split: s,
                };
                let cell = VoteCell {
                    k,
                    p: vec![p],
                    alpha: vec![0.0],
                    rule,
                    modes: Some(ModeAnswers {
                        attractors: attractors.clone(),
                        extraction,
                        per_problem: None,
                    }),
                };
                let c = simulate(12, &[u64::from(k)], &[cell], votes, &|_| {})[0][0];
                let what = format!("{rule:?} k={k} p={p} a={attractors:?} u={u} s={s}");
                assert_eq!(c.votes, votes);
                let (win, _) = maj_at_k_modes(p, &attractors, extraction, k, rule);
                assert_rate(&what, c.wins, votes, win);
                let g = graded_rate(p, extraction);
                assert_rate(&what, c.any_correct, votes, pass_at_k(g, k));
                assert_rate(&what, c.all_correct, votes, pass_hat_k(g, k));
            }
        }
    }

    /// Counts of `votes` votes drawn by one sampler from the stream (seed, key).
    fn draw(sampler: &VoteSampler, k: u32, votes: u64, key: &[u64]) -> VoteCounts {
        let mut rng = stream(7, key);
        let mut out = VoteCounts {
            votes,
            ..Default::default()
        };
        for _ in 0..votes {
            let v = sampler.sample(&mut rng);
            out.wins += u64::from(v.win);
            out.any_correct += u64::from(v.correct > 0);
            out.all_correct += u64::from(v.correct == k);
        }
        out
    }

    /// Both routes to (C, A), joint and two draws, against exact maj@k, pass@k and pass^k,
    /// including votes full of ties (alpha = 0.5, small even k, p near the attractor's rate).
    #[test]
    fn joint_and_two_draw_samplers_both_match_exact() {
        let votes = 200_000;
        for (ri, rule) in RULES.into_iter().enumerate() {
            for (case, &(k, p, a)) in [
                (1u32, 0.4, 0.5),
                (2, 0.4, 0.5),
                (2, 0.5, 0.5),
                (4, 0.25, 0.5),
                (4, 0.4, 0.5),
                (6, 0.3, 1.0),
                (8, 0.2, 0.0),
                (16, 0.35, 0.5),
                (33, 0.3, 0.8),
                (64, 1.0 / 3.0, 0.5),
                (73, 0.3, 0.5),
                (12, 0.0, 0.5),
                (12, 1.0, 0.5),
            ]
            .iter()
            .enumerate()
            {
                let lnf = ln_factorials(k);
                let tables = AttractorTables::new(k, a, &lnf);
                let joint = VoteSampler::new(k, p, &tables, rule, &lnf);
                let two = VoteSampler::two_draws(k, p, &tables, rule, &lnf);
                assert!(joint.is_joint() && !two.is_joint());
                for (path, sampler) in [(0u64, &joint), (1, &two)] {
                    let c = draw(sampler, k, votes, &[ri as u64, case as u64, path]);
                    let what = format!("{rule:?} k={k} p={p} a={a} joint={}", path == 0);
                    assert_rate(&what, c.wins, votes, maj_at_k(p, a, k, rule));
                    assert_rate(&what, c.any_correct, votes, pass_at_k(p, k));
                    assert_rate(&what, c.all_correct, votes, pass_hat_k(p, k));
                }
            }
        }
    }

    #[test]
    fn joint_tables_up_to_the_limit_and_two_draws_beyond() {
        assert!(joint_entries(73) <= JOINT_MAX_ENTRIES && joint_entries(74) > JOINT_MAX_ENTRIES);
        for k in [1u32, 2, 3, 16, 74, 200] {
            assert_eq!(joint_entries(k), joint_outcomes(k).count());
        }
        let lnf = ln_factorials(100);
        for (k, joint) in [(1u32, true), (73, true), (74, false), (100, false)] {
            let tables = AttractorTables::new(k, 0.5, &lnf);
            let s = VoteSampler::new(k, 0.4, &tables, VoteRule::Random, &lnf);
            assert_eq!(s.is_joint(), joint, "k={k}");
        }
        // Tables built for a larger k serve a smaller one by two draws.
        let tables = AttractorTables::new(16, 0.5, &lnf);
        assert!(!VoteSampler::new(8, 0.4, &tables, VoteRule::Random, &lnf).is_joint());
        // Joint tables when they pay for themselves.
        assert!(joint_pays(16, 436, 4) && !joint_pays(16, 435, 4));
        assert!(!joint_pays(74, u64::MAX, 4));
        // A set of samplers too large for joint tables, or drawing too few votes, gets two-draw
        // ones.
        let many = JOINT_MAX_SET_ENTRIES / joint_entries(16);
        let enough = 20 * 109;
        let s = samplers(
            16,
            &vec![0.4; many],
            &tables,
            VoteRule::Random,
            &lnf,
            enough,
        );
        assert!(s.iter().all(VoteSampler::is_joint));
        let s = samplers(
            16,
            &vec![0.4; many + 1],
            &tables,
            VoteRule::Random,
            &lnf,
            enough,
        );
        assert!(!s.iter().any(VoteSampler::is_joint));
        let s = samplers(16, &[0.4], &tables, VoteRule::Random, &lnf, enough - 1);
        assert!(!s[0].is_joint());
    }

    /// The winner of one vote counted answer by answer, independently of [`contenders`]: the
    /// answers are the correct one (c copies), the attractor (a copies) and k - c - a distinct
    /// one-offs; returns among how many answers the correct one's win is drawn (0: it loses).
    fn literal_vote(k: u32, c: u32, a: u32, rule: VoteRule) -> u32 {
        let mut count: HashMap<u32, u32> = HashMap::new();
        let answers = (0..c)
            .map(|_| 0)
            .chain((0..a).map(|_| 1))
            .chain((0..k - c - a).map(|i| 2 + i));
        for x in answers {
            *count.entry(x).or_default() += 1;
        }
        let top = count.values().copied().max().unwrap_or(0);
        let tied = count.values().filter(|&&n| n == top).count() as u32;
        let correct_on_top = c > 0 && c == top;
        match rule {
            VoteRule::Random => {
                if correct_on_top {
                    tied
                } else {
                    0
                }
            }
            VoteRule::Strict => u32::from(correct_on_top && tied == 1),
            VoteRule::Absolute => u32::from(2 * c > k),
        }
    }

    #[test]
    fn joint_table_entries_sum_to_one_and_score_votes_literally() {
        let lnf = ln_factorials(40);
        for k in (1u32..=13).chain([16, 40]) {
            for alpha in [0.0, 0.3, 0.5, 1.0] {
                let tables = AttractorTables::new(k, alpha, &lnf);
                let layout = tables.joint.as_ref().expect("joint layout");
                let outcomes: Vec<(u32, u32)> = joint_outcomes(k).collect();
                assert_eq!(outcomes.len(), layout.given_correct.len());
                for p in [0.0, 0.2, 0.5, 0.9, 1.0] {
                    let pmf = binomial_pmf_with(k, p, &lnf);
                    let mut by_c = vec![0.0; k as usize + 1];
                    for (&(c, a), g) in outcomes.iter().zip(&layout.given_correct) {
                        by_c[c as usize] += pmf[c as usize] * g;
                        // Entry by entry: P(A = a | k - c) where A matters, 1 where it does not.
                        let want = if attractor_matters(k, c) {
                            binomial_pmf_with(k - c, alpha, &lnf)[a as usize]
                        } else {
                            1.0
                        };
                        assert!((g - want).abs() < 1e-15, "k={k} alpha={alpha} c={c} a={a}");
                    }
                    for (m, e) in by_c.iter().zip(&pmf) {
                        assert!((m - e).abs() < 1e-14, "k={k} alpha={alpha} p={p}");
                    }
                    let total: f64 = by_c.iter().sum();
                    assert!((total - 1.0).abs() < 1e-12, "k={k}: total {total}");
                }
                for rule in RULES {
                    let scores = &layout.scores[rule_slot(rule)];
                    for (&(c, a), &s) in outcomes.iter().zip(scores) {
                        let s = Score(s);
                        assert_eq!(s.correct(), c);
                        // An entry without A stands for every a: none may change the vote.
                        let every_a = if attractor_matters(k, c) {
                            a..=a
                        } else {
                            0..=k - c
                        };
                        for a in every_a {
                            assert_eq!(
                                s.contenders(),
                                literal_vote(k, c, a, rule),
                                "{rule:?} k={k} c={c} a={a}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// A generator that hands out fixed words and counts them.
    struct Words {
        words: Vec<u64>,
        used: usize,
    }

    impl RngCore for Words {
        fn next_u32(&mut self) -> u32 {
            self.next_u64() as u32
        }
        fn next_u64(&mut self) -> u64 {
            self.used += 1;
            self.words[self.used - 1]
        }
        fn fill_bytes(&mut self, dst: &mut [u8]) {
            dst.fill(0);
        }
    }

    /// `correct_wins` (two draws) and the joint entries agree vote by vote: for the same words,
    /// the A that `correct_wins` draws leads to the entry (c, a) whose score, with the same
    /// tie-break word, decides the vote the same way, using the same number of words.
    #[test]
    fn correct_wins_agrees_with_the_joint_scores() {
        let mut rng = stream(5, &[1]);
        for k in [1u32, 2, 3, 4, 7, 16, 32] {
            let lnf = ln_factorials(k);
            let tables = AttractorTables::new(k, 0.5, &lnf);
            let layout = tables.joint.as_ref().expect("joint layout");
            let index: HashMap<(u32, u32), usize> =
                joint_outcomes(k).enumerate().map(|(i, o)| (o, i)).collect();
            for rule in RULES {
                for c in 0..=k {
                    for _ in 0..200 {
                        let (u, v) = (rng.next_u64(), rng.next_u64());
                        let matters = attractor_matters(k, c);
                        let a = if matters {
                            tables.tables[(k - c) as usize].sample(&mut Words {
                                words: vec![u],
                                used: 0,
                            })
                        } else {
                            0
                        };
                        let t = Score(layout.scores[rule_slot(rule)][index[&(c, a)]]).contenders();
                        let expect =
                            t == 1 || (t > 1 && ((u128::from(v) * u128::from(t)) >> 64) == 0);
                        let mut words = Words {
                            words: if matters { vec![u, v] } else { vec![v] },
                            used: 0,
                        };
                        let got = tables.correct_wins(k, c, rule, &mut words);
                        assert_eq!(got, expect, "{rule:?} k={k} c={c} a={a}");
                        assert_eq!(words.used, usize::from(matters) + usize::from(t > 1));
                    }
                }
            }
        }
    }

    /// A joint vote costs one word, and a second only to break a tie.
    #[test]
    fn joint_vote_uses_one_word_and_one_more_for_a_tie() {
        let lnf = ln_factorials(4);
        let tables = AttractorTables::new(4, 0.5, &lnf);
        let mut rng = stream(6, &[1]);
        for rule in RULES {
            let s = VoteSampler::new(4, 0.4, &tables, rule, &lnf);
            let Draw::Joint(table) = &s.draw else {
                panic!("joint");
            };
            let mut ties = 0;
            for _ in 0..2000 {
                let (u, v) = (rng.next_u64(), rng.next_u64());
                let t = Score(sample_labelled(table, u)).contenders();
                let mut words = Words {
                    words: vec![u, v],
                    used: 0,
                };
                s.sample(&mut words);
                assert_eq!(words.used, 1 + usize::from(t > 1));
                ties += u32::from(t > 1);
            }
            assert_eq!(ties > 0, rule == VoteRule::Random, "{rule:?}");
        }
    }
}
