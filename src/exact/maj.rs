//! Exact majority vote (maj@k, cons@k) under the attractor model.
//!
//! Per sample the answer is correct with probability p, the repeated attractor with q, and a
//! one-off wrong answer (never repeated) with r = 1 - p - q. Given C = c correct answers the
//! attractor count is A ~ Bin(k - c, alpha) with alpha = q / (1 - p), and whether the correct
//! answer wins depends only on (c, A). So maj@k = sum_c P(C = c) W(c), where the conditional win
//! probability W(c) is read off the pmf of Bin(k - c, alpha). Those pmfs are the rows of a
//! Pascal-style recurrence in k - c, which is stable (every step is a convex combination) and
//! shared by every problem with the same alpha: O(k^2) once per (k, alpha), then O(k) per problem.
//!
//! Why here: the exact maj@k the vote simulator in `sim::votes` is checked against, and the
//! binomial pmfs every other exact module and the samplers' tables use. Depends on `model` only.

use crate::model::VoteRule;

/// Entries below this are dropped from the rolling binomial rows. Every W(c) and its complement
/// is a sum of row entries, multiplied by a probability <= 1, so dropping them changes maj@k and
/// 1 - maj@k by at most k^2 * 1e-300 in absolute terms: both keep their relative accuracy down
/// to 1e-300 (a loss probability of 4e-28 is computed, not lost), while the rows still shrink
/// to about 75 standard deviations of Bin(k, a).
pub(crate) const TINY: f64 = 1e-300;

/// ln(j!) for j = 0..=n. Time: O(n).
pub fn ln_factorials(n: u32) -> Vec<f64> {
    let mut out = Vec::with_capacity(n as usize + 1);
    let mut acc = 0.0f64;
    out.push(0.0);
    for j in 1..=n {
        acc += (j as f64).ln();
        out.push(acc);
    }
    out
}

/// The pmf of Bin(n, p) over 0..=n, computed in log space from a shared table and renormalised
/// (no underflow to garbage; p in {0, 1} exact): the samplers' tables in `sim/` are built from
/// it. Each entry is accurate to about n ulps of ln(n!) (5e-12 relative at n = 1,024), ample for
/// drawing (alias thresholds keep 51 bits) but not for exact values: those use [`binomial_pmf`].
/// `lnf` must hold ln(j!) for j up to at least n. Time: O(n).
pub fn binomial_pmf_with(n: u32, p: f64, lnf: &[f64]) -> Vec<f64> {
    let n_us = n as usize;
    if p <= 0.0 {
        let mut v = vec![0.0; n_us + 1];
        v[0] = 1.0;
        return v;
    }
    if p >= 1.0 {
        let mut v = vec![0.0; n_us + 1];
        v[n_us] = 1.0;
        return v;
    }
    let (lp, lq) = (p.ln(), (-p).ln_1p());
    let mut pmf: Vec<f64> = (0..=n_us)
        .map(|j| {
            (lnf[n_us] - lnf[j] - lnf[n_us - j] + j as f64 * lp + (n_us - j) as f64 * lq).exp()
        })
        .collect();
    let total: f64 = pmf.iter().sum();
    pmf.iter_mut().for_each(|x| *x /= total);
    pmf
}

/// The pmf of Bin(n, p) over 0..=n, every entry to about 1e-13 relative (or below 1e-300 in
/// absolute terms) for n up to 1,024; p in {0, 1} exact.
///
/// From the mode m = floor((n + 1) p), set to 1, the ratio P(j + 1) / P(j) = (n - j) / (j + 1)
/// p / (1 - p) walks up and down (each step adds about two rounding errors, so entry j is off by
/// at most 2 |j - m| ulps), and the sum of the positive entries normalises. Entries far below
/// the mode underflow to 0 where their true value is below 1e-308. Summing ln(j!) instead, as
/// earlier versions did, lost 5e-12 relative at n = 1,024. Time: O(n).
pub fn binomial_pmf(n: u32, p: f64) -> Vec<f64> {
    let mut v = Vec::new();
    binomial_pmf_into(n, p, &mut v);
    v
}

/// [`binomial_pmf`] written into `v` (resized to n + 1 entries), bit for bit: for loops that
/// need one pmf after another without allocating each. Time: O(n).
pub fn binomial_pmf_into(n: u32, p: f64, v: &mut Vec<f64>) {
    binomial_pmf_pq_into(n, p, 1.0 - p, v);
}

/// The pmf of Bin(n, p) given p and its complement q = 1 - p computed by the caller from their
/// own terms: [`binomial_pmf`] with the odds p / q, so a p within 1e-10 of 1 keeps the relative
/// accuracy of q. With q = 1 - p it is [`binomial_pmf`] bit for bit. Time: O(n).
pub fn binomial_pmf_pq(n: u32, p: f64, q: f64) -> Vec<f64> {
    let mut v = Vec::new();
    binomial_pmf_pq_into(n, p, q, &mut v);
    v
}

/// [`binomial_pmf_pq`] written into `v` (resized to n + 1 entries). Time: O(n).
pub fn binomial_pmf_pq_into(n: u32, p: f64, q: f64, v: &mut Vec<f64>) {
    let n_us = n as usize;
    v.clear();
    v.resize(n_us + 1, 0.0);
    if p <= 0.0 {
        v[0] = 1.0;
        return;
    }
    if q <= 0.0 {
        v[n_us] = 1.0;
        return;
    }
    let odds = p / q;
    let mode = (((n as f64 + 1.0) * p).floor() as usize).min(n_us);
    v[mode] = 1.0;
    for j in mode..n_us {
        v[j + 1] = v[j] * ((n_us - j) as f64 / (j + 1) as f64) * odds;
        if v[j + 1] == 0.0 {
            break;
        }
    }
    for j in (1..=mode).rev() {
        v[j - 1] = v[j] * (j as f64 / (n_us - j + 1) as f64) / odds;
        if v[j - 1] == 0.0 {
            break;
        }
    }
    let total: f64 = v.iter().sum();
    v.iter_mut().for_each(|x| *x /= total);
}

/// W(c) for c = 0..=k: the probability that the correct answer wins a vote of k samples given
/// that exactly c of them are correct; see [`conditional_win_loss`]. Time: O(k^2) at most.
pub fn conditional_win(k: u32, alpha: f64, rule: VoteRule) -> Vec<f64> {
    conditional_win_loss(k, alpha, rule).0
}

/// (W(c), 1 - W(c)) for c = 0..=k: the probability that the correct answer wins a vote of k
/// samples given that exactly c of them are correct, when each of the other k - c samples is
/// the attractor with probability `alpha` (and a one-off otherwise), and the probability that
/// it does not, each summed from its own binomial terms (never 1 minus a number near 1).
///
/// - `Random`: W(0) = 0; W(1) = [P(A = 0) + P(A = 1)] / k (the correct answer then ties with the
///   k - 1 other singleton answers); W(c) = P(A < c) + P(A = c) / 2 for c >= 2.
/// - `Strict`: ties lose: W(1) = 1 only when k = 1; W(c) = P(A < c) for c >= 2.
/// - `Absolute`: W(c) = 1 when 2c > k, else 0.
///
/// Time: O(k^2) at most: only the entries of each binomial row above 1e-300 are kept.
pub fn conditional_win_loss(k: u32, alpha: f64, rule: VoteRule) -> (Vec<f64>, Vec<f64>) {
    let k_us = k as usize;
    let mut w = vec![0.0; k_us + 1];
    let mut l = vec![0.0; k_us + 1];
    if rule == VoteRule::Absolute {
        for c in 0..=k_us {
            let win = 2 * c > k_us;
            w[c] = if win { 1.0 } else { 0.0 };
            l[c] = if win { 0.0 } else { 1.0 };
        }
        return (w, l);
    }
    let alpha = alpha.clamp(0.0, 1.0);
    let beta = 1.0 - alpha;
    // row[j] = P(Bin(n, alpha) = j), kept nonzero only on lo..=hi.
    let mut row = vec![0.0; k_us + 2];
    let mut next = vec![0.0; k_us + 2];
    row[0] = 1.0;
    let (mut lo, mut hi) = (0usize, 0usize);
    for n in 0..=k_us {
        let c = k_us - n;
        // P(A < c), P(A = c) and P(A > c) from the row's own entries.
        let split = c.clamp(lo, hi + 1);
        let below: f64 = row[lo..split].iter().sum();
        let at = row[c];
        let above: f64 = row[(c + 1).clamp(lo, hi + 1)..=hi].iter().sum();
        (w[c], l[c]) = match (c, rule) {
            (0, _) => (0.0, 1.0),
            (1, VoteRule::Strict) => {
                if k == 1 {
                    (1.0, 0.0)
                } else {
                    (0.0, 1.0)
                }
            }
            (1, _) => {
                // n = k - 1 >= 0 others; the correct answer ties with every singleton.
                let tie = row[0] + if hi >= 1 { row[1] } else { 0.0 };
                let kf = k as f64;
                (tie / kf, (kf - tie) / kf)
            }
            (_, VoteRule::Strict) => (below, at + above),
            (_, _) => (below + 0.5 * at, above + 0.5 * at),
        };
        if n == k_us {
            break;
        }
        // Row n + 1 from row n on lo..=hi+1; `next` is all zeros on entry.
        next[lo] = beta * row[lo];
        let (up, down) = (&row[lo + 1..=hi + 1], &row[lo..=hi]);
        for ((d, &x), &y) in next[lo + 1..=hi + 1].iter_mut().zip(up).zip(down) {
            *d = beta * x + alpha * y;
        }
        std::mem::swap(&mut row, &mut next);
        // `next` now holds row n, nonzero only on lo..=hi: clear it for the next step.
        next[lo..=hi].fill(0.0);
        hi += 1;
        while lo < hi && row[lo] < TINY {
            row[lo] = 0.0;
            lo += 1;
        }
        while hi > lo && row[hi] < TINY {
            row[hi] = 0.0;
            hi -= 1;
        }
    }
    (w, l)
}

/// maj@k of every problem whose per-sample outcome is (p_i, q_i = a (1 - p_i)): the attractor
/// share `a` is the same for all, so W(c) is computed once. Time: O(k^2 + N k).
pub fn maj_at_k_all(rates: &[f64], attractor: f64, k: u32, rule: VoteRule) -> Vec<f64> {
    let w = conditional_win(k, attractor, rule);
    rates
        .iter()
        .map(|&p| win_given_counts(&binomial_pmf(k, p), &w))
        .collect()
}

/// (maj@k, 1 - maj@k) of every problem, as [`maj_at_k_all`], each summed from its own terms:
/// the complement keeps its relative accuracy when maj@k is within 1e-16 of 1 (it is the
/// probability of losing the vote, e.g. 4e-28). Time: O(k^2 + N k).
pub fn maj_at_k_all_with_loss(
    rates: &[f64],
    attractor: f64,
    k: u32,
    rule: VoteRule,
) -> Vec<(f64, f64)> {
    let (w, l) = conditional_win_loss(k, attractor, rule);
    rates
        .iter()
        .map(|&p| win_loss_pq(k, p, 1.0 - p, &w, &l))
        .collect()
}

/// (maj@k, 1 - maj@k) of one problem from its rate p and q = 1 - p computed from their own
/// terms, given the conditional win and loss tables of [`conditional_win_loss`]: the pmf of the
/// correct count ([`binomial_pmf_pq`]) against each table. With q = 1 - p it is the entry of
/// [`maj_at_k_all_with_loss`] bit for bit. Time: O(k).
pub fn win_loss_pq(k: u32, p: f64, q: f64, w: &[f64], l: &[f64]) -> (f64, f64) {
    let pmf = binomial_pmf_pq(k, p, q);
    (win_given_counts(&pmf, w), win_given_counts(&pmf, l))
}

/// maj@k of one problem with per-sample probabilities p (correct) and q (attractor); the rest
/// are one-offs: [`maj_at_k`] with the attractor share q / (1 - p). Time: O(k^2).
///
/// Given q = a (1 - p) this is not bit for bit [`maj_at_k`]`(p, a)` (nor [`maj_at_k_all`]):
/// the share is recovered as fl(fl(a (1 - p)) / (1 - p)), which is a within 2 ulps (two
/// roundings of relative size <= 2^-53 each), and maj@k moves with the share by at most
/// k |d alpha| (each of the k samples that is not correct changes side with probability
/// d alpha), so the two differ by at most about 4.4e-16 k a, plus the rounding of the sums
/// (test `maj_at_k_pq_differs_from_maj_at_k_all_within_the_documented_bound`). Callers that
/// have a share call [`maj_at_k`]; this form is for (p, q) pairs that come from elsewhere.
pub fn maj_at_k_pq(p: f64, q: f64, k: u32, rule: VoteRule) -> f64 {
    let alpha = if p >= 1.0 {
        0.0
    } else {
        (q / (1.0 - p)).clamp(0.0, 1.0)
    };
    maj_at_k(p, alpha, k, rule)
}

/// maj@k of one problem with correct rate p and attractor share a: one problem of
/// [`maj_at_k_all`], bit for bit (the same W(c) and pmf). Time: O(k^2).
pub fn maj_at_k(p: f64, attractor: f64, k: u32, rule: VoteRule) -> f64 {
    maj_at_k_with_loss(p, attractor, k, rule).0
}

/// (maj@k, 1 - maj@k) of one problem with correct rate `rate` and attractor share `attractor`:
/// one problem of [`maj_at_k_all_with_loss`], bit for bit. The conditional tables of the last
/// (k, share, rule) are kept per thread and the pmf is written into a per-thread buffer, so a
/// population table of 20,001 rates with one share computes W(c) once and allocates nothing
/// per rate. Time: O(k^2) for a new (k, share, rule), else O(k).
pub fn maj_at_k_with_loss(rate: f64, attractor: f64, k: u32, rule: VoteRule) -> (f64, f64) {
    thread_local! {
        static LAST: std::cell::RefCell<WinTableCache> =
            std::cell::RefCell::new(WinTableCache::default());
    }
    LAST.with(|cell| match cell.try_borrow_mut() {
        Ok(mut c) => c.maj(rate, attractor, k, rule),
        // Not reachable (nothing here calls back into it); a fresh cache is still correct.
        Err(_) => WinTableCache::default().maj(rate, attractor, k, rule),
    })
}

/// The conditional win and loss tables of one (k, share, rule) and a pmf buffer.
#[derive(Debug, Default)]
struct WinTableCache {
    key: Option<(u32, u64, VoteRule)>,
    win: Vec<f64>,
    loss: Vec<f64>,
    pmf: Vec<f64>,
}

impl WinTableCache {
    fn maj(&mut self, rate: f64, attractor: f64, k: u32, rule: VoteRule) -> (f64, f64) {
        let key = (k, attractor.to_bits(), rule);
        if self.key != Some(key) {
            (self.win, self.loss) = conditional_win_loss(k, attractor, rule);
            self.key = Some(key);
        }
        binomial_pmf_into(k, rate, &mut self.pmf);
        (
            win_given_counts(&self.pmf, &self.win),
            win_given_counts(&self.pmf, &self.loss),
        )
    }
}

/// sum_c P(C = c) W(c), clamped to [0, 1]: maj@k from the pmf of the correct count and the
/// conditional win probabilities of [`conditional_win`]. Time: O(k).
pub fn win_given_counts(pmf_c: &[f64], w: &[f64]) -> f64 {
    pmf_c
        .iter()
        .zip(w)
        .map(|(pc, wc)| pc * wc)
        .sum::<f64>()
        .clamp(0.0, 1.0)
}

/// The rate above which maj@k -> 1 as k grows: p > a (1 - p), i.e. p > a / (1 + a).
pub fn attractor_threshold(attractor: f64) -> f64 {
    attractor / (1.0 + attractor)
}

/// The large-k limit of benchmark maj@k: the share of problems with p above
/// [`attractor_threshold`] (problems exactly at the threshold count as neither). Time: O(N).
pub fn maj_ceiling(rates: &[f64], attractor: f64) -> f64 {
    let t = attractor_threshold(attractor);
    rates.iter().filter(|&&p| p > t).count() as f64 / rates.len() as f64
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn cached_win_tables_give_the_bits_of_maj_at_k_all_with_loss() {
        let rates = [0.0, 1e-9, 0.2, 0.5, 0.77, 1.0 - 1e-12, 1.0];
        for rule in [VoteRule::Random, VoteRule::Strict, VoteRule::Absolute] {
            // Shares and sizes alternate so the per-thread table changes between calls.
            for (a, k) in [(0.5, 9), (0.3, 9), (0.5, 64), (0.5, 9), (1.0, 1)] {
                let all = maj_at_k_all_with_loss(&rates, a, k, rule);
                for (&p, &(w, l)) in rates.iter().zip(&all) {
                    let (cw, cl) = maj_at_k_with_loss(p, a, k, rule);
                    assert_eq!((cw.to_bits(), cl.to_bits()), (w.to_bits(), l.to_bits()));
                    assert_eq!(maj_at_k(p, a, k, rule).to_bits(), w.to_bits());
                }
            }
        }
    }
    use crate::exact::pass::pass_at_k;

    /// The spec's literal formula: enumerate (C, A), M = max(C, A, [S > 0]), T tied answers.
    pub(crate) fn brute_force(p: f64, a: f64, k: u32, rule: VoteRule) -> f64 {
        let pc = binomial_pmf(k, p);
        let mut total = 0.0;
        for c in 0..=k {
            let pa = binomial_pmf(k - c, a);
            for av in 0..=(k - c) {
                let s = k - c - av;
                let m = c.max(av).max(u32::from(s > 0));
                let t = u32::from(c == m) + u32::from(av == m) + if m == 1 { s } else { 0 };
                let win = match rule {
                    VoteRule::Random => {
                        if c == m && c >= 1 {
                            1.0 / t as f64
                        } else {
                            0.0
                        }
                    }
                    VoteRule::Strict => f64::from(u8::from(c == m && c >= 1 && t == 1)),
                    VoteRule::Absolute => f64::from(u8::from(2 * c > k)),
                };
                total += pc[c as usize] * pa[av as usize] * win;
            }
        }
        total
    }

    #[test]
    fn matches_brute_force_small_k() {
        for rule in [VoteRule::Random, VoteRule::Strict, VoteRule::Absolute] {
            for k in [1, 2, 3, 4, 5, 8, 13, 16, 31, 64] {
                for &p in &[0.0, 0.01, 0.2, 1.0 / 3.0, 0.5, 0.77, 1.0] {
                    for &a in &[0.0, 0.25, 0.5, 0.9, 1.0] {
                        let e = maj_at_k(p, a, k, rule);
                        let b = brute_force(p, a, k, rule);
                        assert!(
                            (e - b).abs() < 1e-12,
                            "{rule:?} k={k} p={p} a={a}: {e} vs {b}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn maj2_and_maj1_equal_pass1() {
        for &p in &[0.0, 0.011, 0.3, 0.529, 0.993, 1.0] {
            for &a in &[0.0, 0.5, 1.0] {
                assert!((maj_at_k(p, a, 1, VoteRule::Random) - p).abs() < 1e-14);
                assert!((maj_at_k(p, a, 2, VoteRule::Random) - p).abs() < 1e-14);
            }
        }
    }

    #[test]
    fn stable_at_large_k() {
        // Far from the threshold a/(1+a) = 1/3 the vote is decided; near it, the brute force in
        // log space agrees.
        for k in [1024u32, 4096] {
            assert!(maj_at_k(0.6, 0.5, k, VoteRule::Random) > 1.0 - 1e-12);
            assert!(maj_at_k(0.2, 0.5, k, VoteRule::Random) < 1e-12);
            let m = maj_at_k(1.0 / 3.0 + 0.01, 0.5, k, VoteRule::Random);
            assert!(m.is_finite() && (0.0..=1.0).contains(&m));
        }
        for &p in &[0.3, 0.34, 0.36] {
            let e = maj_at_k(p, 0.5, 1024, VoteRule::Random);
            let b = brute_force(p, 0.5, 1024, VoteRule::Random);
            assert!((e - b).abs() < 1e-10, "p={p}: {e} vs {b}");
        }
    }

    #[test]
    fn maj_never_exceeds_pass() {
        for k in 1..40 {
            for &p in &[0.05, 0.3, 0.6, 0.95] {
                for &a in &[0.0, 0.5, 1.0] {
                    assert!(maj_at_k(p, a, k, VoteRule::Random) <= pass_at_k(p, k) + 1e-12);
                }
            }
        }
    }

    #[test]
    fn maj_at_k_and_maj_at_k_all_agree_bit_for_bit() {
        for rule in [VoteRule::Random, VoteRule::Strict, VoteRule::Absolute] {
            for k in [1, 2, 3, 5, 8, 17, 64, 257] {
                for i in 0..=40 {
                    let p = f64::from(i) / 40.0 * 0.999 + 0.0003;
                    for a in [0.0, 0.1, 1.0 / 3.0, 0.7, 1.0] {
                        let one = maj_at_k(p, a, k, rule);
                        let all = maj_at_k_all(&[p, 0.5], a, k, rule)[0];
                        assert_eq!(one.to_bits(), all.to_bits(), "p {p} a {a} k {k} {rule:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn maj_at_k_pq_differs_from_maj_at_k_all_within_the_documented_bound() {
        // q = a (1 - p) recovers the share a to within 2 ulps; maj@k then moves by at most k
        // times that, plus the rounding of the O(k) sums.
        let mut differ = 0;
        for rule in [VoteRule::Random, VoteRule::Strict] {
            for k in [3, 8, 17, 64, 257] {
                for i in 0..=40 {
                    let p = f64::from(i) / 40.0 * 0.999 + 0.0003;
                    for a in [0.1, 1.0 / 3.0, 0.7, 0.93] {
                        let pq = maj_at_k_pq(p, a * (1.0 - p), k, rule);
                        let all = maj_at_k_all(&[p], a, k, rule)[0];
                        let bound = f64::from(k) * 4.0 * f64::EPSILON * a + 32.0 * f64::EPSILON;
                        assert!(
                            (pq - all).abs() <= bound,
                            "p {p} a {a} k {k}: {pq} vs {all}"
                        );
                        differ += usize::from(pq != all);
                    }
                }
            }
        }
        // The difference is real (else the documentation above would be wrong).
        assert!(differ > 0);
    }
}
