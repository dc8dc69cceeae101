//! Per-problem estimators from n sampled answers: pass@k, pass^k, maj@k, and the biased plug-in.
//!
//! All functions are pure and deterministic. They take counts (n samples, c correct) or answer
//! group sizes, never raw strings; grouping answers is [`super::normalize`]'s job.
//!
//! Depends on [`crate::model::VoteRule`] only; no randomness, no uncertainty (SEs and intervals
//! are [`super::summary`], [`super::compare`] and [`super::interval`]).
use super::data::VoteGroup;
use super::{AnalyzeError, Result};
use crate::model::VoteRule;

fn check(n: usize, c: usize, k: usize) -> Result<()> {
    if k == 0 {
        return Err(AnalyzeError::KZero);
    }
    if c > n {
        return Err(AnalyzeError::CountExceedsN { c, n });
    }
    if k > n {
        return Err(AnalyzeError::KExceedsN { k, n });
    }
    Ok(())
}

/// Unbiased pass@k of one problem: 1 - C(n - c, k) / C(n, k), evaluated as the product
/// 1 - prod_{j = n - c + 1}^{n} (1 - k / j), which never forms a binomial coefficient and so
/// cannot overflow (n up to 10^5 and beyond). Equal to 1 when n - c < k (Chen et al. 2021).
///
/// Cost: O(c).
///
/// # Errors
/// `k = 0`, `k > n` or `c > n`.
pub fn pass_at_k(n: usize, c: usize, k: usize) -> Result<f64> {
    check(n, c, k)?;
    if n - c < k {
        return Ok(1.0);
    }
    let kf = k as f64;
    let prod: f64 = (n - c + 1..=n).map(|j| 1.0 - kf / j as f64).product();
    Ok(1.0 - prod)
}

/// pass@k of one problem for every k = 1..=k_max (index 0 holds k = 1), using the recurrence
/// C(n-c, k+1)/C(n, k+1) = C(n-c, k)/C(n, k) * (n-c-k)/(n-k). Agrees with [`pass_at_k`].
///
/// Cost: O(k_max).
///
/// # Errors
/// `k_max = 0`, `k_max > n` or `c > n`.
pub fn pass_at_k_curve(n: usize, c: usize, k_max: usize) -> Result<Vec<f64>> {
    check(n, c, k_max)?;
    let mut out = Vec::with_capacity(k_max);
    let mut ratio = 1.0; // C(n-c, k)/C(n, k) at k = 0
    for k in 0..k_max {
        let wrong = (n - c) as f64 - k as f64;
        ratio = if wrong <= 0.0 {
            0.0
        } else {
            ratio * wrong / (n - k) as f64
        };
        out.push(1.0 - ratio);
    }
    Ok(out)
}

/// Unbiased pass^k of one problem (all k right): C(c, k) / C(n, k) = prod_{i<k} (c - i)/(n - i).
///
/// Cost: O(k).
///
/// # Errors
/// `k = 0`, `k > n` or `c > n`.
pub fn pass_hat_k(n: usize, c: usize, k: usize) -> Result<f64> {
    check(n, c, k)?;
    if k > c {
        return Ok(0.0);
    }
    Ok((0..k).map(|i| (c - i) as f64 / (n - i) as f64).product())
}

/// pass^k for every k = 1..=k_max (index 0 holds k = 1). Cost: O(k_max).
///
/// # Errors
/// `k_max = 0`, `k_max > n` or `c > n`.
pub fn pass_hat_k_curve(n: usize, c: usize, k_max: usize) -> Result<Vec<f64>> {
    check(n, c, k_max)?;
    let mut out = Vec::with_capacity(k_max);
    let mut v = 1.0;
    for i in 0..k_max {
        v = if i >= c {
            0.0
        } else {
            v * (c - i) as f64 / (n - i) as f64
        };
        out.push(v);
    }
    Ok(out)
}

/// Plug-in pass@k, 1 - (1 - c/n)^k. Biased low by Jensen's inequality (n = 10, c = 3, k = 5:
/// 0.832 against the unbiased 0.917); reported only to show that bias.
///
/// # Errors
/// `k = 0` or `c > n` (k > n is allowed: the plug-in extrapolates).
pub fn pass_at_k_plugin(n: usize, c: usize, k: usize) -> Result<f64> {
    if k == 0 {
        return Err(AnalyzeError::KZero);
    }
    if c > n || n == 0 {
        return Err(AnalyzeError::CountExceedsN { c, n });
    }
    Ok(1.0 - (1.0 - c as f64 / n as f64).powi(k.min(i32::MAX as usize) as i32))
}

/// C(g, 0..=upto) by the multiplicative recurrence (relative error about upto * 1e-16).
fn binom_row(g: usize, upto: usize) -> Vec<f64> {
    let mut row = vec![0.0; upto + 1];
    row[0] = 1.0;
    for y in 0..upto.min(g) {
        row[y + 1] = row[y] * (g - y) as f64 / (y + 1) as f64;
    }
    row
}

fn ln_binom(n: usize, k: usize) -> f64 {
    statrs::function::factorial::ln_binomial(n as u64, k as u64)
}

/// Largest ln C(n, s) for s <= k, compared against this bound before using plain f64 counts.
const LN_COUNT_LIMIT: f64 = 700.0;

/// Exact maj@k of one problem for every k = 1..=k_max (index 0 holds k = 1): the expectation,
/// over all C(n, k) subsets of size k of the problem's n answers, of the vote's score under
/// `rule`.
///
/// The answers form groups: `correct` answers that are right, and wrong groups of the sizes in
/// `wrong_groups` (each missing answer is its own group of size 1). For each count x of correct
/// answers drawn, a polynomial DP over the wrong groups counts the ways the other k - x draws
/// fall with every group at most x, tracking how many groups tie at exactly x:
///
/// maj@k = sum_x C(c, x) * sum_t W_x(k - x, t) * w(t) / C(n, k),
///
/// with w(t) = 1/(1 + t) for `Random` (ties split evenly) and w(t) = 1[t = 0] for `Strict`.
/// Wrong groups smaller than x can never tie, so together they contribute the single factor
/// C(sum of their sizes, s) (Vandermonde), and only groups of size >= x (at most (n - c)/x of
/// them) enter the DP. One DP per x serves every k at once. `Absolute` (> k/2 votes) is the
/// hypergeometric tail sum_{x > k/2} C(c, x) C(n - c, k - x) / C(n, k).
///
/// Cost: O(sum_x G_x * K^2) with G_x the number of wrong groups of size >= x and K = k_max;
/// at most O(n K^2 log K). Counts are plain f64 (all terms positive, relative error ~1e-14).
///
/// # Errors
/// `k_max = 0`, `k_max > n`, or ln C(n, k) above 700 (f64 overflow; the message gives the
/// largest usable k).
pub fn maj_at_k_exact(
    correct: usize,
    wrong_groups: &[usize],
    k_max: usize,
    rule: VoteRule,
) -> Result<Vec<f64>> {
    let n = correct + wrong_groups.iter().sum::<usize>();
    check(n, correct, k_max)?;
    check_count_limit(n, k_max)?;
    let c = correct;
    let wrong_total = n - c;
    let total_row = binom_row(n, k_max);
    let correct_row = binom_row(c, k_max);
    let mut sums = vec![0.0; k_max + 1];

    if rule == VoteRule::Absolute {
        let wrong_row = binom_row(wrong_total, k_max);
        for (k, sum) in sums.iter_mut().enumerate().skip(1) {
            *sum = (k / 2 + 1..=k.min(c))
                .map(|x| correct_row[x] * wrong_row[k - x])
                .sum();
        }
    } else {
        let strict = rule == VoteRule::Strict;
        // Rows C(g, 0..) of the wrong-group sizes, computed once up to k_max: the recurrence
        // gives the same prefix whatever its length, so a prefix equals the shorter row.
        let mut sizes: Vec<usize> = wrong_groups.to_vec();
        sizes.sort_unstable();
        sizes.dedup();
        let group_rows: Vec<Vec<f64>> = sizes.iter().map(|&g| binom_row(g, k_max)).collect();
        let row_of = |g: usize| match sizes.binary_search(&g) {
            Ok(i) => &group_rows[i],
            Err(_) => &group_rows[0], // unreachable: every size is in `sizes`
        };
        // C(small_total, 0..): small_total only grows with x, so it is recomputed only when it
        // changes (the longest row first, as s_max falls with x).
        let mut small_row: (usize, Vec<f64>) = (usize::MAX, Vec::new());
        let (mut big, mut dp, mut next, mut acc) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        // The first big group's convolution at the last x: ((g, small_total, x), values).
        let mut first: (Option<(usize, usize, usize)>, Vec<f64>) = (None, Vec::new());
        // Groups of size >= x in input order, and the total size of the others: groups drop
        // out of `big` as x grows (O(G) once, not per x).
        big.extend(wrong_groups.iter().copied().filter(|&g| g >= 1));
        let mut small_total: usize = wrong_groups.iter().filter(|&&g| g < 1).sum();
        for x in 1..=c.min(k_max) {
            let s_max = k_max - x;
            let width = s_max + 1;
            big.retain(|&g| {
                if g < x {
                    small_total += g;
                }
                g >= x
            });
            // Ties possible only with Random; at most min(#big, s_max / x) groups can tie.
            let t_cap = if strict { 0 } else { big.len().min(s_max / x) };
            if !strict && x == 1 {
                // Every wrong group is big at x = 1 and can give at most one draw, which ties:
                // t always equals s, so the DP is its diagonal (elementary symmetric sums of
                // the group sizes), O(G K) instead of O(G K^2). Same operations on the nonzero
                // entries, so the same bits.
                let diag = diagonal_ties(&big, t_cap);
                for (s, &ways) in diag.iter().enumerate() {
                    sums[x + s] += correct_row[x] * (ways / (s + 1) as f64);
                }
                continue;
            }
            if small_row.0 != small_total {
                small_row = (small_total, binom_row(small_total, s_max));
            }
            dp.clear();
            dp.resize((t_cap + 1) * width, 0.0);
            dp[..width].copy_from_slice(&small_row.1[..width]);
            next.clear();
            next.resize(dp.len(), 0.0);
            acc.clear();
            acc.resize(width, 0.0);
            for (i, &g) in big.iter().enumerate() {
                let row = &row_of(g)[..=x];
                // After i groups at most i of them tie, so rows t > i are still zero.
                let t_top = t_cap.min(i);
                next[..(t_cap.min(i + 1) + 1) * width]
                    .iter_mut()
                    .for_each(|v| *v = 0.0);
                for t in 0..=t_top {
                    let old = &dp[t * width..(t + 1) * width];
                    // acc[s] = sum_{y <= min(x - 1, s)} row[y] old[s - y], added in order of y
                    // (loops swapped so that the inner one runs over s and vectorises).
                    if i == 0 {
                        // The first big group meets old = C(small_total, .), the same at every
                        // x with the same small_total, and the sum over y is sequential: the
                        // sum at x is the sum at x - 1 plus its term y = x - 1 (same bits).
                        let key = (g, small_total, x);
                        if first.0 == Some((g, small_total, x - 1)) {
                            first.1.truncate(width);
                            let r = row[x - 1];
                            for (a, &o) in first.1.iter_mut().skip(x - 1).zip(old) {
                                *a += r * o;
                            }
                        } else {
                            first.1.clear();
                            first.1.resize(width, 0.0);
                            for (y, &r) in row.iter().enumerate().take(x.min(width)) {
                                for (a, &o) in first.1[y..].iter_mut().zip(old) {
                                    *a += r * o;
                                }
                            }
                        }
                        first.0 = Some(key);
                        acc.copy_from_slice(&first.1);
                    } else {
                        acc.iter_mut().for_each(|v| *v = 0.0);
                        for (y, &r) in row.iter().enumerate().take(x.min(width)) {
                            for (a, &o) in acc[y..].iter_mut().zip(old) {
                                *a += r * o;
                            }
                        }
                    }
                    for (v, &a) in next[t * width..(t + 1) * width].iter_mut().zip(&acc) {
                        *v += a;
                    }
                    if !strict && t < t_cap && x < width {
                        let tie = &mut next[(t + 1) * width + x..(t + 2) * width];
                        for (v, &o) in tie.iter_mut().zip(old) {
                            *v += row[x] * o;
                        }
                    }
                }
                std::mem::swap(&mut dp, &mut next);
            }
            for s in 0..width {
                let ways: f64 = (0..=t_cap)
                    .map(|t| dp[t * width + s] / (t + 1) as f64)
                    .sum();
                sums[x + s] += correct_row[x] * ways;
            }
        }
    }
    Ok((1..=k_max).map(|k| sums[k] / total_row[k]).collect())
}

/// Refuses a k whose subset counts C(n, k) would overflow f64 (ln C(n, k) above
/// [`LN_COUNT_LIMIT`]), naming the largest usable k.
fn check_count_limit(n: usize, k_max: usize) -> Result<()> {
    let ln_peak = ln_binom(n, k_max.min(n / 2));
    if ln_peak > LN_COUNT_LIMIT {
        let k_limit = (1..=k_max)
            .take_while(|&k| ln_binom(n, k.min(n / 2)) <= LN_COUNT_LIMIT)
            .last()
            .unwrap_or(0);
        return Err(AnalyzeError::MajOverflow {
            problem: String::new(),
            n,
            k: k_max,
            k_limit,
        });
    }
    Ok(())
}

/// The diagonal of the x = 1 tie DP: entry s is the number of ways to draw one answer from each
/// of s distinct wrong groups (sizes `groups`), for s up to `t_cap`, by the recurrence
/// e_s <- g e_{s-1} + e_s per group (entries above the groups seen so far stay zero).
fn diagonal_ties(groups: &[usize], t_cap: usize) -> Vec<f64> {
    let mut e = vec![0.0; t_cap + 1];
    e[0] = 1.0;
    for (i, &g) in groups.iter().enumerate() {
        let g = g as f64;
        for s in (1..=t_cap.min(i + 1)).rev() {
            e[s] += g * e[s - 1];
        }
    }
    e
}

/// Exact maj@k of one problem for every k = 1..=k_max from its answer groups: the expectation,
/// over all C(n, k) subsets of size k, of the grade of the answer the vote picks under `rule`.
///
/// Answers vote by group (one normalised answer each, see [`super::data::ProblemSamples::votes`]).
/// The vote is right when the winning answer is graded right; an answer the harness graded
/// right in r of its s samples and wrong in the others (an ambiguous grade) counts r / s: the
/// grade of a random one of its samples, which is also the expected grade of a random one of
/// its samples among those drawn, since they are a uniform draw from the group whatever their
/// count. The events "answer g wins" are disjoint (a tie shared among T answers gives each 1/T
/// under `Random`), so
///
/// maj@k = sum over groups g with r_g > 0 of (r_g / s_g) * maj@k of g against all other groups,
///
/// each term [`maj_at_k_exact`] with g in the role of the correct answer, hence exact. With one
/// answer graded right in every sample (the usual case) this is [`maj_at_k_exact`] itself, to the
/// bit.
///
/// Cost: that of [`maj_at_k_exact`] once per answer graded right at least once.
///
/// # Errors
/// As [`maj_at_k_exact`].
pub fn maj_at_k_votes(groups: &[VoteGroup], k_max: usize, rule: VoteRule) -> Result<Vec<f64>> {
    let sizes: Vec<usize> = groups.iter().map(|g| g.size as usize).collect();
    let mut out: Option<Vec<f64>> = None;
    for (i, g) in groups.iter().enumerate().filter(|(_, g)| g.right > 0) {
        let others: Vec<usize> = sizes
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != i)
            .map(|(_, &s)| s)
            .collect();
        let wins = maj_at_k_exact(g.size as usize, &others, k_max, rule)?;
        let share = if g.right == g.size {
            1.0
        } else {
            f64::from(g.right) / f64::from(g.size)
        };
        match &mut out {
            None => out = Some(wins.into_iter().map(|w| share * w).collect()),
            Some(o) => o.iter_mut().zip(wins).for_each(|(o, w)| *o += share * w),
        }
    }
    match out {
        Some(o) => Ok(o),
        // No answer graded right: 0 at every k (after the same checks).
        None => maj_at_k_exact(0, &sizes, k_max, rule),
    }
}

/// maj@k of one vote over the *first* k answers in file order, for k = 1..=answers.len()
/// (index 0 holds k = 1): one realisation, so each value is 0 or 1. `answers` holds the answer
/// group of each sample in file order (missing answers with unique ids) and `right` whether the
/// harness graded that sample right; the winning answer is graded as its first sample in file
/// order was (the form a vote returns). Ties at the top follow `rule`: `Strict` is no win,
/// `Absolute` needs more than k/2 votes, and `Random` breaks the tie by one draw `uniform()` in
/// [0, 1) (the right answers among the T tied win when the draw falls in their share), made only
/// when the tie decides the grade.
///
/// This is what a harness that stops after k samples reports; its variance is far larger than
/// the subset expectation of [`maj_at_k_votes`], which is why it is shown only for comparison.
///
/// Cost: O(n) with a count-of-counts table.
pub fn maj_at_k_first(
    answers: &[u32],
    right: &[bool],
    rule: VoteRule,
    mut uniform: impl FnMut() -> f64,
) -> Vec<f64> {
    let groups = answers.iter().map(|&g| g as usize + 1).max().unwrap_or(0);
    let mut count = vec![0usize; groups];
    // The grade of each group's first sample, and per count: groups, and right groups, at it.
    let mut first_right = vec![false; groups];
    let mut with_count = vec![0usize; answers.len() + 2];
    let mut right_with_count = vec![0usize; answers.len() + 2];
    let mut top = 0usize;
    let mut out = Vec::with_capacity(answers.len());
    for (k, (&g, &ok)) in answers.iter().zip(right).enumerate() {
        let g = g as usize;
        let old = count[g];
        if old == 0 {
            first_right[g] = ok;
        } else {
            with_count[old] -= 1;
            right_with_count[old] -= usize::from(first_right[g]);
        }
        count[g] = old + 1;
        with_count[old + 1] += 1;
        right_with_count[old + 1] += usize::from(first_right[g]);
        top = top.max(old + 1);
        let (tied, right_tied) = (with_count[top], right_with_count[top]);
        let win = match rule {
            _ if right_tied == 0 => false,
            VoteRule::Absolute => 2 * top > k + 1,
            VoteRule::Strict => tied == 1,
            VoteRule::Random if right_tied == tied => true,
            VoteRule::Random => uniform() * (tied as f64) < right_tied as f64,
        };
        out.push(if win { 1.0 } else { 0.0 });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1e-300) || (a - b).abs() < 1e-15
    }

    #[test]
    fn worked_example_from_the_spec() {
        assert!((pass_at_k(10, 3, 1).unwrap() - 0.300).abs() < 5e-4);
        let p5 = pass_at_k(10, 3, 5).unwrap();
        assert!((p5 - (1.0 - 21.0 / 252.0)).abs() < 1e-12);
        assert!((p5 - 0.917).abs() < 5e-4);
        assert_eq!(pass_at_k(10, 3, 10).unwrap(), 1.0);
        assert!((pass_at_k_plugin(10, 3, 5).unwrap() - 0.832).abs() < 5e-4);
        assert!((pass_at_k_plugin(10, 3, 10).unwrap() - 0.972).abs() < 5e-4);
    }

    #[test]
    fn k_above_n_is_an_error_not_one() {
        assert!(matches!(
            pass_at_k(10, 3, 11),
            Err(AnalyzeError::KExceedsN { k: 11, n: 10 })
        ));
        assert!(pass_hat_k(4, 4, 5).is_err());
        assert!(maj_at_k_exact(2, &[1, 1], 5, VoteRule::Random).is_err());
        assert!(matches!(pass_at_k(10, 3, 0), Err(AnalyzeError::KZero)));
    }

    #[test]
    fn curves_agree_with_product_forms() {
        for &(n, c) in &[(10, 3), (64, 0), (64, 64), (64, 17), (1000, 999)] {
            let pc = pass_at_k_curve(n, c, n).unwrap();
            let hc = pass_hat_k_curve(n, c, n).unwrap();
            for k in 1..=n {
                assert!(close(pc[k - 1], pass_at_k(n, c, k).unwrap(), 1e-12));
                assert!(close(hc[k - 1], pass_hat_k(n, c, k).unwrap(), 1e-12));
            }
        }
        assert!((pass_hat_k(10, 3, 2).unwrap() - 3.0 / 45.0).abs() < 1e-15);
    }

    #[test]
    fn pass_at_k_handles_huge_n() {
        let v = pass_at_k(100_000, 50_000, 2).unwrap();
        let exact = 1.0 - (50_000.0 * 49_999.0) / (100_000.0 * 99_999.0);
        assert!(close(v, exact, 1e-10));
    }

    /// Score of one vote over `labels` (0 = correct, others wrong groups; None = missing).
    fn vote(labels: &[Option<u32>], rule: VoteRule) -> f64 {
        let mut counts = std::collections::HashMap::new();
        let mut missing = 0usize;
        for l in labels {
            match l {
                Some(g) => *counts.entry(*g).or_insert(0usize) += 1,
                None => missing += 1,
            }
        }
        let right = counts.get(&0).copied().unwrap_or(0);
        let top = counts
            .values()
            .copied()
            .max()
            .unwrap_or(0)
            .max(usize::from(missing > 0));
        match rule {
            VoteRule::Absolute => f64::from(u8::from(2 * right > labels.len())),
            _ if right == 0 || right < top => 0.0,
            VoteRule::Strict => {
                let tied = counts.values().filter(|&&v| v == top).count()
                    + if top == 1 { missing } else { 0 };
                f64::from(u8::from(tied == 1))
            }
            VoteRule::Random => {
                let tied = counts.values().filter(|&&v| v == top).count()
                    + if top == 1 { missing } else { 0 };
                1.0 / tied as f64
            }
        }
    }

    fn brute(labels: &[Option<u32>], k: usize, rule: VoteRule) -> f64 {
        let n = labels.len();
        let (mut total, mut count) = (0.0, 0usize);
        for mask in 0u32..(1 << n) {
            if mask.count_ones() as usize != k {
                continue;
            }
            let subset: Vec<_> = (0..n)
                .filter(|i| mask >> i & 1 == 1)
                .map(|i| labels[i])
                .collect();
            total += vote(&subset, rule);
            count += 1;
        }
        total / count as f64
    }

    fn groups_of(labels: &[Option<u32>]) -> (usize, Vec<usize>) {
        let mut counts = std::collections::BTreeMap::new();
        let mut wrong = Vec::new();
        for l in labels {
            match l {
                Some(g) => *counts.entry(*g).or_insert(0usize) += 1,
                None => wrong.push(1),
            }
        }
        let c = counts.remove(&0).unwrap_or(0);
        wrong.extend(counts.values());
        (c, wrong)
    }

    #[test]
    fn exact_maj_matches_brute_force_enumeration() {
        let cases: Vec<Vec<Option<u32>>> = vec![
            // ties between correct and one wrong group
            vec![Some(0), Some(0), Some(1), Some(1), Some(2)],
            // several wrong groups and missing answers
            vec![
                Some(0),
                Some(0),
                Some(0),
                Some(1),
                Some(1),
                Some(1),
                Some(2),
                Some(2),
                None,
                None,
                Some(3),
            ],
            // correct in the minority
            vec![
                Some(0),
                Some(1),
                Some(1),
                Some(1),
                Some(1),
                None,
                Some(2),
                Some(2),
            ],
            // all missing except correct ones
            vec![Some(0), Some(0), None, None, None, None, None],
            // no correct answer at all
            vec![Some(1), Some(1), Some(2), None],
            // all correct
            vec![Some(0); 6],
            // a large wrong group and many one-offs
            vec![
                Some(0),
                Some(0),
                Some(0),
                Some(0),
                Some(1),
                Some(1),
                Some(1),
                Some(1),
                Some(1),
                Some(2),
                Some(3),
                None,
            ],
        ];
        for labels in &cases {
            let (c, wrong) = groups_of(labels);
            let n = labels.len();
            for rule in [VoteRule::Random, VoteRule::Strict, VoteRule::Absolute] {
                let exact = maj_at_k_exact(c, &wrong, n, rule).unwrap();
                for k in 1..=n {
                    let b = brute(labels, k, rule);
                    assert!(
                        (exact[k - 1] - b).abs() < 1e-12,
                        "{labels:?} k={k} {rule:?}: exact {} brute {b}",
                        exact[k - 1]
                    );
                }
            }
        }
    }

    #[test]
    fn maj_invariants() {
        // maj@1 = maj@2 = pass@1 under even tie splitting; maj@k <= pass@k.
        let (c, wrong) = (7usize, vec![5usize, 3, 1, 1, 1]);
        let n = c + wrong.iter().sum::<usize>();
        let m = maj_at_k_exact(c, &wrong, n, VoteRule::Random).unwrap();
        let p1 = c as f64 / n as f64;
        assert!((m[0] - p1).abs() < 1e-14 && (m[1] - p1).abs() < 1e-14);
        let pk = pass_at_k_curve(n, c, n).unwrap();
        for k in 1..=n {
            assert!(m[k - 1] <= pk[k - 1] + 1e-14 && (0.0..=1.0 + 1e-14).contains(&m[k - 1]));
        }
        assert!(
            (m[n - 1] - 1.0).abs() < 1e-12,
            "correct group is the strict plurality"
        );
    }

    #[test]
    fn first_rule_votes_in_file_order() {
        // file order: wrong(1), correct, correct, wrong(1), missing(5), wrong(1)
        let seq = [1, 0, 0, 1, 5, 1];
        let right = [false, true, true, false, false, false];
        // Ties at k = 2 and k = 4: strict is no win, absolute needs > k/2.
        let strict = maj_at_k_first(&seq, &right, VoteRule::Strict, || 0.0);
        assert_eq!(strict, vec![0.0, 0.0, 1.0, 0.0, 0.0, 0.0]);
        let absolute = maj_at_k_first(&seq, &right, VoteRule::Absolute, || 0.0);
        assert_eq!(absolute, vec![0.0, 0.0, 1.0, 0.0, 0.0, 0.0]);
        // Random: the draw decides each tie (1 right answer of 2 tied: wins below 0.5).
        let low = maj_at_k_first(&seq, &right, VoteRule::Random, || 0.25);
        assert_eq!(low, vec![0.0, 1.0, 1.0, 1.0, 1.0, 0.0]);
        let high = maj_at_k_first(&seq, &right, VoteRule::Random, || 0.75);
        assert_eq!(high, vec![0.0, 0.0, 1.0, 0.0, 0.0, 0.0]);
    }

    /// The first-k vote gave 1/T for a tie among T answers (0.5 in the example), a value no
    /// single vote can have, and under `strict` or `absolute` too; it is one vote now.
    #[test]
    fn first_k_vote_split_ties_instead_of_casting_one_vote() {
        let seq = [0, 1];
        let right = [true, false];
        for rule in [VoteRule::Random, VoteRule::Strict, VoteRule::Absolute] {
            let m = maj_at_k_first(&seq, &right, rule, || 0.9);
            assert!(m.iter().all(|&v| v == 0.0 || v == 1.0), "{rule:?}: {m:?}");
        }
        assert_eq!(
            maj_at_k_first(&seq, &right, VoteRule::Strict, || 0.0)[1],
            0.0
        );
        assert_eq!(
            maj_at_k_first(&seq, &right, VoteRule::Random, || 0.0)[1],
            1.0
        );
    }

    /// maj@k merged every right sample into one vote whatever its answer; two written answers
    /// graded right now split the vote (the `split` effect), and an answer graded both ways
    /// counts as the share of its samples graded right. Checked against enumeration.
    #[test]
    fn maj_at_k_merged_every_correct_sample_into_one_vote_group() {
        let g = |size: u32, right: u32| VoteGroup { size, right };
        // "No." x2 and "No" x2 (both right) against "Yes" x3 (wrong).
        let split = [g(2, 2), g(2, 2), g(3, 0)];
        let m = maj_at_k_votes(&split, 7, VoteRule::Strict).unwrap();
        let merged = maj_at_k_exact(4, &[3], 7, VoteRule::Strict).unwrap();
        assert!(m[6] == 0.0 && merged[6] == 1.0, "{m:?} vs {merged:?}");
        // Enumerate: labels per sample, a group's grade its share right.
        let groups = [g(2, 2), g(2, 1), g(3, 0), g(1, 1)];
        let labels: Vec<usize> = groups
            .iter()
            .enumerate()
            .flat_map(|(i, gr)| std::iter::repeat_n(i, gr.size as usize))
            .collect();
        let n = labels.len();
        for rule in [VoteRule::Random, VoteRule::Strict, VoteRule::Absolute] {
            let exact = maj_at_k_votes(&groups, n, rule).unwrap();
            for k in 1..=n {
                let (mut total, mut count) = (0.0, 0usize);
                for mask in 0u32..(1 << n) {
                    if mask.count_ones() as usize != k {
                        continue;
                    }
                    let mut tally = vec![0usize; groups.len()];
                    for (i, &l) in labels.iter().enumerate() {
                        if mask >> i & 1 == 1 {
                            tally[l] += 1;
                        }
                    }
                    let top = tally.iter().copied().max().unwrap_or(0);
                    let tied: Vec<usize> = (0..groups.len()).filter(|&i| tally[i] == top).collect();
                    let grade = |i: usize| f64::from(groups[i].right) / f64::from(groups[i].size);
                    total += match rule {
                        VoteRule::Absolute if 2 * top > k => grade(tied[0]),
                        VoteRule::Absolute => 0.0,
                        VoteRule::Strict if tied.len() == 1 => grade(tied[0]),
                        VoteRule::Strict => 0.0,
                        VoteRule::Random => {
                            tied.iter().map(|&i| grade(i)).sum::<f64>() / tied.len() as f64
                        }
                    };
                    count += 1;
                }
                let brute = total / count as f64;
                assert!(
                    (exact[k - 1] - brute).abs() < 1e-12,
                    "{rule:?} k={k}: {} vs {brute}",
                    exact[k - 1]
                );
            }
        }
        // One answer graded right throughout: the single-group function, to the bit.
        let one = maj_at_k_votes(&[g(3, 3), g(2, 0), g(1, 0)], 6, VoteRule::Random).unwrap();
        assert_eq!(
            one,
            maj_at_k_exact(3, &[2, 1], 6, VoteRule::Random).unwrap()
        );
    }

    /// The tie DP as first written: every (t, s) cell for every group, every row recomputed.
    fn maj_reference(c: usize, wrong_groups: &[usize], k_max: usize, strict: bool) -> Vec<f64> {
        let n = c + wrong_groups.iter().sum::<usize>();
        let total_row = binom_row(n, k_max);
        let correct_row = binom_row(c, k_max);
        let mut sums = vec![0.0; k_max + 1];
        for x in 1..=c.min(k_max) {
            let s_max = k_max - x;
            let width = s_max + 1;
            let small_total: usize = wrong_groups.iter().filter(|&&g| g < x).sum();
            let big: Vec<usize> = wrong_groups.iter().copied().filter(|&g| g >= x).collect();
            let t_cap = if strict { 0 } else { big.len().min(s_max / x) };
            let mut dp = vec![0.0; (t_cap + 1) * width];
            dp[..width].copy_from_slice(&binom_row(small_total, s_max));
            let mut next = vec![0.0; dp.len()];
            for &g in &big {
                let row = binom_row(g, x);
                next.iter_mut().for_each(|v| *v = 0.0);
                for t in 0..=t_cap {
                    let old = &dp[t * width..(t + 1) * width];
                    for s in 0..width {
                        let ys = (x - 1).min(s);
                        let mut acc = 0.0;
                        for y in 0..=ys {
                            acc += row[y] * old[s - y];
                        }
                        next[t * width + s] += acc;
                        if !strict && t < t_cap && s + x < width {
                            next[(t + 1) * width + s + x] += row[x] * old[s];
                        }
                    }
                }
                std::mem::swap(&mut dp, &mut next);
            }
            for s in 0..width {
                let ways: f64 = (0..=t_cap)
                    .map(|t| dp[t * width + s] / (t + 1) as f64)
                    .sum();
                sums[x + s] += correct_row[x] * ways;
            }
        }
        (1..=k_max).map(|k| sums[k] / total_row[k]).collect()
    }

    #[test]
    fn faster_dp_gives_the_same_bits_as_the_reference() {
        use rand::Rng;
        let mut rng = crate::sim::reruns::seeded(5);
        for case in 0..300 {
            let n = rng.random_range(1..=160usize);
            let c = rng.random_range(0..=n);
            // A mix of one-offs, small groups and one large attractor group.
            let mut rest = n - c;
            let mut wrong = Vec::new();
            let attractor = rng.random_range(0..=rest);
            if attractor > 0 {
                wrong.push(attractor);
                rest -= attractor;
            }
            while rest > 0 {
                let g = if rng.random::<f64>() < 0.6 {
                    1
                } else {
                    rng.random_range(1..=rest.min(6))
                };
                wrong.push(g);
                rest -= g;
            }
            let k_max = rng.random_range(1..=n);
            for (rule, strict) in [(VoteRule::Random, false), (VoteRule::Strict, true)] {
                let fast = maj_at_k_exact(c, &wrong, k_max, rule).unwrap();
                let slow = maj_reference(c, &wrong, k_max, strict);
                let same = fast
                    .iter()
                    .zip(&slow)
                    .all(|(a, b)| a.to_bits() == b.to_bits());
                assert!(
                    same,
                    "case {case}: c {c}, groups {wrong:?}, k_max {k_max}, {rule:?}"
                );
            }
        }
    }

    #[test]
    fn exact_maj_is_fast_enough_for_500_by_64() {
        // Not timed (tests never time); exercises the size the issue names: 500 problems x 64
        // samples, every k from 1 to 64, with a realistic spread of answer groups.
        let mut total = 0.0;
        for i in 0..500usize {
            let c = i % 65;
            let mut rest = 64 - c;
            let mut wrong = Vec::new();
            let mut g = (i % 7) + 1;
            while rest > 0 {
                let take = g.min(rest);
                wrong.push(take);
                rest -= take;
                g = if g > 1 { g / 2 } else { 1 };
            }
            let m = maj_at_k_exact(c, &wrong, 64, VoteRule::Random).unwrap();
            total += m[63];
        }
        assert!(total.is_finite());
    }

    #[test]
    fn overflow_is_reported_with_a_usable_limit() {
        match maj_at_k_exact(1500, &[1500], 1500, VoteRule::Random) {
            Err(AnalyzeError::MajOverflow { k_limit, .. }) => {
                assert!(k_limit > 100 && k_limit < 1500);
                assert!(maj_at_k_exact(1500, &[1500], k_limit, VoteRule::Random).is_ok());
            }
            other => panic!("expected overflow error, got {other:?}"),
        }
    }
}
