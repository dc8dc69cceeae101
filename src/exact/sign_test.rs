//! The exact two-sided sign test of "B wins half of the questions" and the number of questions
//! it needs for 80% power.
//!
//! Each question scores 0, 1/2 or 1 for B (a loss, a split of two judgments, a win) with
//! probabilities (P_0, P_h, P_1). The test drops the split questions (ties) and tests the wins W
//! among the M = N - ties decided questions against Bin(M, 1/2), two-sided at level 5% with 2.5%
//! in each tail: it rejects when W >= u(M) or W <= M - u(M), with u(M) the smallest count whose
//! upper tail under Bin(M, 1/2) is at most 2.5% (no randomisation, so its size is at most 5%).
//! Given N questions, M ~ Bin(N, P_0 + P_1) and, given M, W ~ Bin(M, pi) with
//! pi = P_1 / (P_0 + P_1), so its power is
//!
//! ```text
//! power(N) = sum_M P(M) [P(W >= u(M) | M) + P(W <= M - u(M) | M)]
//! ```
//!
//! (for a single judgment per question P_h = 0 and M = N: the exact binomial test).
//!
//! **The sample size** is the smallest N with power(N) >= 80%. The power of a non-randomised
//! test is a saw-tooth in N (it drops where u(M) steps up), so the smallest N is found by a
//! search that cannot skip it: the randomised test of size exactly 2.5% on each side is the
//! uniformly most powerful one-sided test, so its upper-side power R(M) is non-decreasing in M
//! and its lower-side rejection rate L(M) at pi > 1/2 is non-increasing in M (Lehmann, Testing
//! Statistical Hypotheses, Thm 3.4.1), and power(N) <= E R(M) + E L(M) with each expectation
//! monotone in N (M grows stochastically with N). Bisection on that bound brackets the smallest
//! N from below, and a scan of the exact power from there finds it (the scan is a few multiples
//! of sqrt(N) long). Sizes above [`MAX_QUESTIONS`] are reported as beyond it.
//!
//! **Accuracy.** Each binomial pmf is walked from its mode by the ratio of neighbouring terms
//! (about 2 ulps a step, as in [`super::maj::binomial_pmf`]) and kept while its terms exceed
//! 1e-17 of the mode's; the dropped mass is below 1e-15 of the total, so every tail, the power
//! and its complement (the non-rejection probability, summed over its own terms) are accurate to
//! about 1e-13 absolute.
//!
//! Depends on nothing else of evalsim; [`super::judge`] supplies the score laws.
use std::collections::HashMap;

use serde::Serialize;

use crate::numerics::root::first_true;

/// The level of each tail of the two-sided 5% test.
pub const TAIL: f64 = 0.025;
/// The power the sample size is for.
pub const TARGET_POWER: f64 = 0.8;
/// The largest number of questions the search considers.
pub const MAX_QUESTIONS: u64 = 200_000;
/// Terms of a binomial pmf below this share of its mode's term are dropped.
const CUT: f64 = 1e-17;

/// The questions a sign test needs for 80% power.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum SampleSize {
    /// The smallest N whose power reaches 80%, with its power and the complement (the chance
    /// the test misses the difference at that N), each summed from its own terms.
    Questions {
        /// N.
        questions: u64,
        /// power(N) >= 0.8.
        power: f64,
        /// 1 - power(N).
        miss: f64,
    },
    /// Power stays below 80% for every N up to `limit`.
    Beyond {
        /// [`MAX_QUESTIONS`].
        limit: u64,
    },
    /// B wins exactly as often as it loses: no N detects a difference.
    Never,
}

impl SampleSize {
    /// The number of questions, when one was found.
    pub fn questions(&self) -> Option<u64> {
        match self {
            SampleSize::Questions { questions, .. } => Some(*questions),
            _ => None,
        }
    }
}

/// The two-sided test's critical count for M decided questions: reject when W >= `upper` or
/// W <= M - `upper`; `gamma` is the randomisation weight at `upper` - 1 that would make the
/// upper tail exactly 2.5% (used only for the bound of the search).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Critical {
    /// u(M): the smallest count with P(W >= u | Bin(M, 1/2)) <= 2.5%.
    pub upper: usize,
    /// (2.5% - P(W >= u)) / P(W = u - 1) under Bin(M, 1/2), in [0, 1).
    pub gamma: f64,
}

/// The pmf of Bin(n, p) over `start`.. (terms below [`CUT`] of the mode's dropped), p given
/// with its complement q computed by the caller.
struct Window {
    start: usize,
    pmf: Vec<f64>,
}

impl Window {
    fn new(n: usize, p: f64, q: f64) -> Window {
        if q <= 0.0 {
            return Window {
                start: n,
                pmf: vec![1.0],
            };
        }
        if p <= 0.0 {
            return Window {
                start: 0,
                pmf: vec![1.0],
            };
        }
        let odds = p / q;
        let mode = (((n as f64 + 1.0) * p).floor() as usize).min(n);
        let mut up = vec![1.0];
        let mut v = 1.0;
        for j in mode..n {
            v *= (n - j) as f64 / (j + 1) as f64 * odds;
            if v < CUT {
                break;
            }
            up.push(v);
        }
        let mut down = Vec::new();
        v = 1.0;
        for j in (1..=mode).rev() {
            v *= j as f64 / (n - j + 1) as f64 / odds;
            if v < CUT {
                break;
            }
            down.push(v);
        }
        let start = mode - down.len();
        down.reverse();
        down.extend(up);
        let mut pmf = down;
        // Smallest terms first: the two ends, then inward.
        let total = small_first_sum(&pmf);
        pmf.iter_mut().for_each(|x| *x /= total);
        Window { start, pmf }
    }

    /// P(W = j).
    fn at(&self, j: isize) -> f64 {
        usize::try_from(j)
            .ok()
            .and_then(|j| j.checked_sub(self.start))
            .and_then(|i| self.pmf.get(i))
            .copied()
            .unwrap_or(0.0)
    }

    /// Sum of P(W = j) for lo <= j <= hi, summed from both ends inward.
    fn range(&self, lo: isize, hi: isize) -> f64 {
        let first = self.start as isize;
        let last = first + self.pmf.len() as isize - 1;
        let (lo, hi) = (lo.max(first), hi.min(last));
        if lo > hi {
            return 0.0;
        }
        small_first_sum(&self.pmf[(lo - first) as usize..=(hi - first) as usize])
    }
}

/// The sum of a unimodal run of non-negative terms, its two ends first (the small terms added
/// before the large ones).
fn small_first_sum(x: &[f64]) -> f64 {
    let peak = x
        .iter()
        .enumerate()
        .fold((0, f64::MIN), |b, (i, &v)| if v > b.1 { (i, v) } else { b })
        .0;
    let left: f64 = x[..peak].iter().sum();
    let right: f64 = x[peak..].iter().rev().sum();
    left + right
}

/// The critical count of the test with `m` decided questions. Time: O(sqrt(m)).
pub fn critical(m: usize) -> Critical {
    let null = Window::new(m, 0.5, 0.5);
    let top = (null.start + null.pmf.len()) as isize - 1;
    let mut tail = 0.0;
    let mut j = top;
    loop {
        let p = null.at(j);
        if tail + p > TAIL {
            return Critical {
                upper: (j + 1) as usize,
                gamma: (TAIL - tail) / p,
            };
        }
        tail += p;
        j -= 1;
    }
}

/// The exact test's rejection probability at M decided questions, its complement, and the
/// randomised bound's two sides.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Decided {
    reject: f64,
    accept: f64,
    bound_upper: f64,
    bound_lower: f64,
}

/// The power search for one score law.
struct Search {
    /// P(decided) = P_0 + P_1 and P(tie) = P_h.
    decided: f64,
    tie: f64,
    /// P(B wins | decided) >= 1/2 and its complement (the law oriented so B is ahead).
    ahead: f64,
    behind: f64,
    cache: HashMap<usize, Decided>,
}

impl Search {
    /// The search for the score law (P_0, P_h, P_1), oriented so that the side ahead wins with
    /// probability >= 1/2 among decided questions (the test is symmetric).
    fn new(lose: f64, split: f64, win: f64) -> Search {
        let decided = win + lose;
        let (ahead, behind) = if win >= lose {
            (win / decided, lose / decided)
        } else {
            (lose / decided, win / decided)
        };
        Search {
            decided,
            tie: split,
            ahead,
            behind,
            cache: HashMap::new(),
        }
    }

    fn decided_power(&mut self, m: usize) -> Decided {
        if let Some(d) = self.cache.get(&m) {
            return *d;
        }
        let c = critical(m);
        let w = Window::new(m, self.ahead, self.behind);
        let (u, lo) = (c.upper as isize, m as isize - c.upper as isize);
        let d = Decided {
            reject: w.range(u, m as isize) + w.range(0, lo),
            accept: w.range(lo + 1, u - 1),
            bound_upper: w.range(u, m as isize) + c.gamma * w.at(u - 1),
            bound_lower: w.range(0, lo) + c.gamma * w.at(lo + 1),
        };
        self.cache.insert(m, d);
        d
    }

    /// sum_M P(M | N) f(decided power at M).
    fn mix(&mut self, n: usize, f: impl Fn(&Decided) -> f64) -> f64 {
        if self.tie == 0.0 {
            return f(&self.decided_power(n));
        }
        let w = Window::new(n, self.decided, self.tie);
        let start = w.start;
        let terms: Vec<f64> = (0..w.pmf.len())
            .map(|i| w.pmf[i] * f(&self.decided_power(start + i)))
            .collect();
        small_first_sum(&terms)
    }

    /// The smallest N in [lo, hi] with g(N) >= target, g non-decreasing; None when g(hi) is
    /// below it. Galloping from `lo` (1, 2, 4, ... questions beyond it), then bisection: the
    /// costliest evaluation is at most twice the answer.
    fn first_reaching(
        &mut self,
        (lo, hi): (usize, usize),
        target: f64,
        g: impl Fn(&mut Search, usize) -> f64,
    ) -> Option<usize> {
        let (mut below, mut step) = (lo, 1);
        if g(self, lo) >= target {
            return Some(lo);
        }
        let above = loop {
            let n = (lo + step).min(hi);
            if g(self, n) >= target {
                break n;
            }
            if n == hi {
                return None;
            }
            below = n;
            step *= 2;
        };
        let above = first_true(below as i64, above as i64, |n| {
            g(self, n as usize) >= target
        });
        Some(above as usize)
    }
}

/// The questions the exact two-sided 5% sign test needs to reject "B wins half" with 80%
/// power, for one question's score law (P_0, P_h, P_1), each probability computed by the caller
/// from its own terms. Time: O(N) binomial terms for a single judgment, O(N) to O(N^1.5) with
/// ties (each decided count's power is computed once).
pub fn questions_for_power(lose: f64, split: f64, win: f64) -> SampleSize {
    if win == lose {
        return SampleSize::Never;
    }
    let mut s = Search::new(lose, split, win);
    let limit = MAX_QUESTIONS as usize;
    let beyond = SampleSize::Beyond {
        limit: MAX_QUESTIONS,
    };
    let upper = |s: &mut Search, n: usize| s.mix(n, |d| d.bound_upper);
    // The lower side's rejection rate is at most 2.5%, then at most its value at the first
    // bracket (non-increasing in N).
    let Some(first) = s.first_reaching((1, limit), TARGET_POWER - TAIL, upper) else {
        return beyond;
    };
    let lower = s.mix(first, |d| d.bound_lower);
    let Some(start) = s.first_reaching((first, limit), TARGET_POWER - lower, upper) else {
        return beyond;
    };
    for n in start..=limit {
        let power = s.mix(n, |d| d.reject);
        if power >= TARGET_POWER {
            return SampleSize::Questions {
                questions: n as u64,
                power,
                miss: s.mix(n, |d| d.accept),
            };
        }
    }
    beyond
}

/// The power of the test with N questions and its complement: (power, miss). Time: as one step
/// of [`questions_for_power`].
pub fn power(lose: f64, split: f64, win: f64, questions: usize) -> (f64, f64) {
    let mut s = Search::new(lose, split, win);
    (
        s.mix(questions, |d| d.reject),
        s.mix(questions, |d| d.accept),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::maj::binomial_pmf_pq;

    /// The test's power by full pmfs: every M, every W.
    fn brute(lose: f64, split: f64, win: f64, n: usize) -> (f64, f64) {
        let decided = win + lose;
        let m_law = binomial_pmf_pq(n as u32, decided, split);
        let (mut reject, mut accept) = (0.0, 0.0);
        for (m, &pm) in m_law.iter().enumerate() {
            let w_law = binomial_pmf_pq(m as u32, win / decided, lose / decided);
            let null = binomial_pmf_pq(m as u32, 0.5, 0.5);
            // u: smallest count with null upper tail <= 2.5%, summed from the top.
            let (mut u, mut tail) = (m + 1, 0.0);
            while u > 0 && tail + null[u - 1] <= TAIL {
                tail += null[u - 1];
                u -= 1;
            }
            for (w, &pw) in w_law.iter().enumerate() {
                if w >= u || w + u <= m {
                    reject += pm * pw;
                } else {
                    accept += pm * pw;
                }
            }
        }
        (reject, accept)
    }

    fn close(a: f64, b: f64, tol: f64, what: &str) {
        assert!((a - b).abs() <= tol, "{what}: {a} against {b}");
    }

    #[test]
    fn critical_counts_leave_at_most_two_and_a_half_percent_in_each_tail() {
        for m in [0usize, 1, 5, 6, 7, 20, 101, 1000, 50_000] {
            let c = critical(m);
            let null = Window::new(m, 0.5, 0.5);
            let tail = null.range(c.upper as isize, m as isize);
            let wider = null.range(c.upper as isize - 1, m as isize);
            assert!(tail <= TAIL && wider > TAIL, "m = {m}: {tail} {wider}");
            assert!((0.0..1.0).contains(&c.gamma));
        }
        // Below six questions no count is extreme enough: the test never rejects.
        assert_eq!(critical(5).upper, 6);
        assert_eq!(critical(6).upper, 6);
    }

    #[test]
    fn power_matches_full_binomial_sums_with_and_without_ties() {
        for &(lose, split, win) in &[
            (0.4, 0.0, 0.6),
            (0.7, 0.0, 0.3),
            (0.2, 0.45, 0.35),
            (0.05, 0.9, 0.05),
        ] {
            for n in [1usize, 6, 17, 80, 333] {
                let (p, a) = power(lose, split, win, n);
                let (bp, ba) = brute(lose, split, win, n);
                close(p, bp, 1e-12, "power");
                close(a, ba, 1e-12, "miss");
                close(p + a, 1.0, 1e-13, "sum");
            }
        }
    }

    #[test]
    fn the_sample_size_is_the_first_n_whose_power_reaches_eighty_percent() {
        for &(lose, split, win) in &[(0.42, 0.0, 0.58), (0.3, 0.45, 0.25), (0.2, 0.0, 0.8)] {
            let SampleSize::Questions {
                questions,
                power: p,
                miss,
            } = questions_for_power(lose, split, win)
            else {
                panic!("a difference")
            };
            let n = questions as usize;
            let (bp, ba) = brute(lose, split, win, n);
            close(p, bp, 1e-12, "power at N");
            close(miss, ba, 1e-12, "miss at N");
            assert!(p >= TARGET_POWER);
            for m in 1..n {
                assert!(
                    power(lose, split, win, m).0 < TARGET_POWER,
                    "power at {m} < {n} already reaches 80%"
                );
            }
        }
    }

    #[test]
    fn large_sample_sizes_agree_with_the_normal_approximation() {
        // B ahead by 1 point: the Wald size ((z_.975 + z_.8) sd / effect)^2 = 19,620 is within
        // a few questions of the exact one (the continuity and discreteness corrections are
        // O(sqrt N) questions at most).
        let (win, lose) = (0.51, 0.49);
        let n = questions_for_power(lose, 0.0, win).questions().unwrap() as f64;
        let wald = ((1.959_963_984_540_054 + 0.841_621_233_572_914_3) * 0.5 / 0.01f64).powi(2);
        assert!((n - wald).abs() < 2.0 * wald.sqrt(), "{n} against {wald}");
    }

    #[test]
    fn equal_wins_and_losses_are_never_detected_and_tiny_differences_are_beyond_the_limit() {
        assert_eq!(questions_for_power(0.3, 0.4, 0.3), SampleSize::Never);
        assert_eq!(
            questions_for_power(0.4999, 0.0, 0.5001),
            SampleSize::Beyond {
                limit: MAX_QUESTIONS
            }
        );
    }

    #[test]
    fn a_law_and_its_mirror_need_the_same_questions() {
        assert_eq!(
            questions_for_power(0.3, 0.2, 0.5),
            questions_for_power(0.5, 0.2, 0.3)
        );
    }
}
