//! Count-level samplers of best-of-k selection and of noisy grading: the k samples of one vote
//! drawn as counts per category (correct, accepted, graded correct) from binomial alias tables,
//! not one by one.
//!
//! Exact in distribution: the k samples of a vote are independent and each falls in a category
//! with the model's probabilities, so the count of correct samples is Bin(k, p), the accepted
//! among c correct samples Bin(c, tpr), the accepted among the k - c wrong ones Bin(k - c, fpr),
//! and a uniform pick among the accepted is correct with probability (accepted correct) /
//! (accepted); likewise for the grader's kept and flipped samples. Nothing here evaluates a
//! closed form of best@k or of graded pass@k: the counts are scored literally, so the checks
//! still test [`crate::exact::verifier`] and [`crate::exact::grader`]. Cost: at most four u64 a
//! vote for a threshold verifier or a grader (a score verifier also draws the k scores), against
//! O(k) u64 for drawing sample by sample. Tables: Bin(m, x) for m = 0..=k per cell and fixed rate
//! x (O(k^2)), Bin(k, p) per problem (O(k)).
use rand::RngCore;
use rand_distr::{Binomial, Distribution, StandardNormal};

use super::alias::AliasTable;
use super::stream::{index, TWO_53};
use crate::exact::maj::binomial_pmf_with;
use crate::exact::verifier::selectable_rate;
use crate::model::{Fallback, Grader, Verifier};

/// Largest t for which [`binomial`] compares each trial's uniform with p on its own.
const ONE_BY_ONE_MAX_T: u32 = 16;
/// Largest t for which [`binomial`] compares the trials' uniforms bit by bit; BTPE beyond.
const BITWISE_MAX_T: u32 = 256;

/// One draw of Bin(t, p) for a p that changes every draw (no per-p setup): t trials, each a
/// success when its 53-bit uniform U is below p 2^53. For t <= 16 one u64 per trial. For
/// t <= 256 the trials are compared 64 to a word from the most significant bit down: a word gives
/// every undecided trial its next bit of U, the trials whose bit differs from p's are decided
/// (below p where p's bit is 1 and theirs 0), the others stay undecided, and a trial equal to p
/// in all 53 bits is not below it: the same comparison, so exact in distribution at 53 bits, in
/// about log2(min(t, 64)) + 2 words per 64 trials. rand_distr's BTPE beyond t = 256.
#[inline]
pub(crate) fn binomial<R: RngCore>(t: u32, p: f64, rng: &mut R) -> u32 {
    let threshold = (p * TWO_53) as u64;
    if t <= ONE_BY_ONE_MAX_T {
        return (0..t)
            .map(|_| u32::from((rng.next_u64() >> 11) < threshold))
            .sum();
    }
    if t > BITWISE_MAX_T {
        return Binomial::new(u64::from(t), p).map_or(0, |b| b.sample(rng) as u32);
    }
    if threshold >= 1 << 53 {
        return t;
    }
    let mut count = 0u32;
    let mut left = t;
    while left > 0 {
        let lanes = left.min(64);
        left -= lanes;
        let mut undecided = u64::MAX >> (64 - lanes);
        let mut bit = 53u32;
        while undecided != 0 && bit > 0 {
            bit -= 1;
            let w = rng.next_u64();
            // All ones where p's bit is 1: there a 0 bit of U decides a success and a 1 keeps
            // the trial undecided; where p's bit is 0 a 1 decides a failure. No branch on p.
            let ones = 0u64.wrapping_sub((threshold >> bit) & 1);
            count += (undecided & !w & ones).count_ones();
            undecided &= !(w ^ ones);
        }
    }
    count
}

/// Bin(m, x) for every m = 0..=k, one alias table each. Time and memory: O(k^2).
#[derive(Debug, Clone)]
pub struct BinomialRows {
    rows: Vec<AliasTable>,
}

impl BinomialRows {
    /// The rows for m up to k; `lnf` holds ln(j!) for j up to at least k.
    pub fn new(k: u32, x: f64, lnf: &[f64]) -> BinomialRows {
        BinomialRows {
            rows: (0..=k)
                .map(|m| AliasTable::new(&binomial_pmf_with(m, x, lnf)))
                .collect(),
        }
    }

    /// One draw of Bin(m, x) (m at most k). Cost: one u64.
    #[inline]
    pub fn draw<R: RngCore + ?Sized>(&self, m: u32, rng: &mut R) -> u32 {
        self.rows[m as usize].sample(rng)
    }
}

/// The tables a cell (one k, one verifier, one grader) shares across its problems.
#[derive(Debug, Clone)]
pub struct PickTables {
    k: u32,
    verifier: Option<Verifier>,
    /// Bin(c, tpr) and Bin(w, fpr) of a threshold verifier.
    accept: Option<(BinomialRows, BinomialRows)>,
    /// The grader with Bin(c, 1 - fnr) (correct samples graded correct) and Bin(w, fpr) (wrong
    /// samples graded correct).
    grade: Option<(Grader, BinomialRows, BinomialRows)>,
}

impl PickTables {
    /// Tables for votes of k samples; `lnf` holds ln(j!) for j up to at least k. Time and
    /// memory: O(k^2) for each of the verifier and the grader.
    pub fn new(
        k: u32,
        verifier: Option<Verifier>,
        grader: Option<Grader>,
        lnf: &[f64],
    ) -> PickTables {
        let accept = match verifier {
            Some(Verifier::Threshold(v)) => Some((
                BinomialRows::new(k, v.tpr, lnf),
                BinomialRows::new(k, v.fpr, lnf),
            )),
            _ => None,
        };
        let grade = grader.map(|g| {
            (
                g,
                BinomialRows::new(k, 1.0 - g.fnr, lnf),
                BinomialRows::new(k, g.fpr, lnf),
            )
        });
        PickTables {
            k,
            verifier,
            accept,
            grade,
        }
    }

    /// The sampler of one problem with solve rate p, of whose samples a share `unparsed` has
    /// no extractable answer (a wrong sample to the verifier, never graded correct). Time: O(k).
    pub fn problem(&self, p: f64, unparsed: f64, lnf: &[f64]) -> ProblemPicks<'_> {
        let rate = selectable_rate(p, unparsed);
        // A sample that is not correct is parsed and wrong with this probability.
        let wrong_parsed = if unparsed == 0.0 {
            1.0
        } else {
            ((1.0 - unparsed) * (1.0 - p) / (1.0 - rate)).clamp(0.0, 1.0)
        };
        ProblemPicks {
            tables: self,
            correct: AliasTable::new(&binomial_pmf_with(self.k, rate, lnf)),
            wrong_parsed,
        }
    }
}

/// Draws the verifier's pick and the graded count of one problem's votes ([`PickTables::problem`]).
#[derive(Debug, Clone)]
pub struct ProblemPicks<'a> {
    tables: &'a PickTables,
    /// Bin(k, (1 - u) p): the correct samples of a vote.
    correct: AliasTable,
    /// P(parsed | not correct).
    wrong_parsed: f64,
}

impl ProblemPicks<'_> {
    /// Whether the verifier's pick of one selection of k samples is correct (false without a
    /// verifier). Threshold: C correct samples, Bin(C, tpr) of them and Bin(k - C, fpr) of the
    /// wrong ones accepted, a uniform pick among the accepted, else the fallback (a uniform pick
    /// among all k, or none). Score: the best of C scores N(separation, 1) against the best of
    /// k - C scores N(0, 1). Cost: at most four u64 (threshold); one u64 and k normals (score).
    pub fn best<R: RngCore + ?Sized>(&self, rng: &mut R) -> bool {
        let k = self.tables.k;
        let c = self.correct.sample(rng);
        match (self.tables.verifier, &self.tables.accept) {
            (Some(Verifier::Threshold(v)), Some((tpr, fpr))) => {
                let good = tpr.draw(c, rng);
                let accepted = good + fpr.draw(k - c, rng);
                if accepted > 0 {
                    (index(rng, accepted as usize) as u32) < good
                } else {
                    v.fallback == Fallback::Random && (index(rng, k as usize) as u32) < c
                }
            }
            (Some(Verifier::Score { separation }), _) => {
                if c == 0 || c == k {
                    return c == k;
                }
                let best = |m: u32, rng: &mut R| {
                    (0..m)
                        .map(|_| StandardNormal.sample(rng))
                        .fold(f64::NEG_INFINITY, f64::max)
                };
                let right = best(c, rng) + separation;
                right > best(k - c, rng)
            }
            _ => false,
        }
    }

    /// Samples graded correct among the k of one vote (0 without a grader): C correct samples
    /// and W parsed wrong ones (W = k - C when every sample parses), Bin(C, 1 - fnr) + Bin(W,
    /// fpr) graded correct; an unparsed sample never is. Cost: two or three u64 (the parsed
    /// wrong count costs more only with unparsed samples).
    pub fn graded<R: RngCore>(&self, rng: &mut R) -> u32 {
        let Some((_, keep, flip)) = &self.tables.grade else {
            return 0;
        };
        let k = self.tables.k;
        let c = self.correct.sample(rng);
        let w = if self.wrong_parsed >= 1.0 {
            k - c
        } else {
            binomial(k - c, self.wrong_parsed, rng)
        };
        keep.draw(c, rng) + flip.draw(w, rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::grader::Grader;
    use crate::exact::maj::ln_factorials;
    use crate::exact::verifier::{best_at_k_score, best_at_k_threshold};
    use crate::model::ThresholdVerifier;
    use crate::sim::stream::stream;

    /// |z| of `hits` in `draws` against the exact probability `exact`, by its binomial SE.
    fn z(hits: u64, draws: u64, exact: f64) -> f64 {
        let n = draws as f64;
        let se = (exact * (1.0 - exact) / n).sqrt();
        if se == 0.0 {
            assert_eq!(hits as f64, exact * n, "a certain outcome drawn otherwise");
            return 0.0;
        }
        (hits as f64 / n - exact) / se
    }

    /// The bound of every z below: 4.5 over about 60 independent comparisons has a false-alarm
    /// rate near 4e-4 in all; the seeds are fixed.
    const BOUND: f64 = 4.5;

    #[test]
    fn threshold_and_score_picks_match_exact_best_at_k() {
        let draws = 40_000u64;
        let lnf = ln_factorials(64);
        let verifiers = [
            Verifier::Threshold(ThresholdVerifier {
                tpr: 0.85,
                fpr: 0.12,
                fallback: Fallback::Random,
            }),
            Verifier::Threshold(ThresholdVerifier {
                tpr: 0.3,
                fpr: 0.05,
                fallback: Fallback::Abstain,
            }),
            Verifier::Score { separation: 1.5 },
        ];
        for (vi, v) in verifiers.iter().enumerate() {
            for k in [1u32, 2, 5, 16, 64] {
                let tables = PickTables::new(k, Some(*v), None, &lnf);
                for (pi, (p, u)) in [(0.05, 0.0), (0.4, 0.0), (0.9, 0.0), (0.6, 0.2)]
                    .into_iter()
                    .enumerate()
                {
                    let picks = tables.problem(p, u, &lnf);
                    let mut rng = stream(5, &[vi as u64, u64::from(k), pi as u64]);
                    let hits = (0..draws).filter(|_| picks.best(&mut rng)).count() as u64;
                    let rate = selectable_rate(p, u);
                    let exact = match v {
                        Verifier::Threshold(t) => best_at_k_threshold(rate, t, k).0,
                        Verifier::Score { separation } => best_at_k_score(rate, *separation, k).0,
                    };
                    let zz = z(hits, draws, exact);
                    assert!(zz.abs() < BOUND, "{v:?} k {k} p {p} u {u}: z {zz}");
                }
            }
        }
    }

    #[test]
    fn graded_counts_match_exact_graded_pass_and_pass_hat() {
        let draws = 40_000u64;
        let lnf = ln_factorials(32);
        let g = Grader {
            fpr: 0.05,
            fnr: 0.1,
        };
        for k in [1u32, 3, 8, 32] {
            let tables = PickTables::new(k, None, Some(g), &lnf);
            for (pi, (p, u)) in [(0.1, 0.0), (0.7, 0.0), (0.5, 0.15)]
                .into_iter()
                .enumerate()
            {
                let picks = tables.problem(p, u, &lnf);
                let mut rng = stream(6, &[u64::from(k), pi as u64]);
                let (mut any, mut all) = (0u64, 0u64);
                for _ in 0..draws {
                    let graded = picks.graded(&mut rng);
                    any += u64::from(graded > 0);
                    all += u64::from(graded == k);
                }
                // Each sample is graded correct with (1 - u) (p (1 - fnr) + (1 - p) fpr).
                let rate = (1.0 - u) * (p * (1.0 - g.fnr) + (1.0 - p) * g.fpr);
                let exact_any = 1.0 - (1.0 - rate).powi(k as i32);
                let exact_all = rate.powi(k as i32);
                for (what, hits, exact) in [("any", any, exact_any), ("all", all, exact_all)] {
                    let zz = z(hits, draws, exact);
                    assert!(zz.abs() < BOUND, "{what} k {k} p {p} u {u}: z {zz}");
                }
            }
        }
    }

    #[test]
    fn bitwise_binomial_of_rates_zero_and_one_is_certain() {
        let mut rng = stream(8, &[1]);
        for t in [1u32, 17, 64, 65, 256] {
            assert_eq!(binomial(t, 0.0, &mut rng), 0);
            assert_eq!(binomial(t, 1.0, &mut rng), t);
        }
    }

    #[test]
    fn bitwise_binomial_draws_match_the_pmf_in_one_word_several_words_and_btpe() {
        let cases = [
            (1u32, 0.3),
            (5, 0.3),
            (16, 0.9),
            (17, 0.45),
            (40, 0.2),
            (64, 0.5),
            (65, 1e-3),
            (200, 0.7),
            (300, 0.4),
        ];
        for (t, p) in cases {
            let pmf = crate::exact::maj::binomial_pmf(t, p);
            let draws = 50_000u64;
            let mut rng = stream(8, &[u64::from(t)]);
            let mut hist = vec![0u64; t as usize + 1];
            for _ in 0..draws {
                hist[binomial(t, p, &mut rng) as usize] += 1;
            }
            // The count at and below the median, and at the mode.
            let mode = ((f64::from(t) + 1.0) * p).floor() as usize;
            let below: f64 = pmf[..=mode].iter().sum();
            let hits_below: u64 = hist[..=mode].iter().sum();
            for (hits, exact) in [(hits_below, below), (hist[mode], pmf[mode])] {
                let zz = z(hits, draws, exact);
                assert!(zz.abs() < BOUND, "t {t} p {p}: z {zz}");
            }
            // The mean, by the SE of a mean of draws of variance t p (1 - p).
            let tf = f64::from(t);
            let total: u64 = hist.iter().enumerate().map(|(j, &h)| j as u64 * h).sum();
            let se = (tf * p * (1.0 - p) / draws as f64).sqrt();
            let zm = (total as f64 / draws as f64 - tf * p) / se;
            assert!(zm.abs() < BOUND, "t {t} p {p}: mean z {zm}");
        }
    }
}
