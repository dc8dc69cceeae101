//! n@k by answer clusters: k samples are grouped by answer, the n largest groups are submitted
//! (ties at the cut broken uniformly at random), and the problem counts as solved when a
//! submitted answer is correct (AlphaCode's n@k with the majority-style choice rule).
//!
//! With n = 1 this is maj@k under the `random` vote rule; once n reaches the number of distinct
//! answers it is pass@k of the parsed rate. Each sample is the correct answer in its main form
//! (share c0) or alternate form (c1, a distinct answer that is also correct), the one repeated
//! wrong answer (a), or a one-off (o: a wrong answer that never repeats, or no answer at all).
//! Given the counts (C0, C1, A, U) the clusters are C0, C1, A (those above 0) and U singletons;
//! walking the sizes from the largest down, every cluster of a size fits while slots remain,
//! and at the size where they run out, r slots are filled by r of its c correct and w wrong
//! clusters chosen uniformly (hypergeometric).
//!
//! A grader marks each submitted answer: correct with 1 - fnr when it is correct, with fpr when
//! it is not. The graded miss of one composition is E[fnr^j (1 - fpr)^(s - j)] over the j
//! correct of the s submitted answers; the true miss is its fnr = fpr = 0 case (no correct
//! answer submitted). n@k and its complement are each summed over compositions from their own
//! non-negative terms. Time: O(k^2) without the alternate form, O(k^3 / 6) with it, per problem.
use super::maj::{binomial_pmf, ln_factorials};
use super::modes::AnswerShares;
use super::normal::cdf_and_sf;
use super::verifier::relative_expectation;
use crate::model::{Fallback, Grader, ThresholdVerifier, Verifier};

/// (n@k, 1 - n@k) of one problem with per-sample answer shares `shares` (at most one repeated
/// wrong answer), as `grader` marks the submitted answers (`None`: the true value).
///
/// # Panics
///
/// If k or n is 0, or `shares` has more than one repeated wrong answer.
pub fn submit_at_k(shares: &AnswerShares, k: u32, n: u32, grader: Option<Grader>) -> (f64, f64) {
    assert!(k >= 1 && n >= 1, "n@k needs k >= 1 and n >= 1");
    assert!(
        shares.attractors.len() <= 1,
        "n@k by clusters is enumerated for at most one repeated wrong answer"
    );
    let (fpr, fnr) = grader.map_or((0.0, 0.0), |g| (g.fpr, g.fnr));
    let lnf = ln_factorials(k);
    let ln = |x: f64| if x > 0.0 { x.ln() } else { f64::NEG_INFINITY };
    let a_share = shares.attractors.first().copied().unwrap_or(0.0);
    let (l0, l1, la, lo) = (
        ln(shares.correct),
        ln(shares.alternate),
        ln(a_share),
        ln(shares.one_off),
    );
    // ln of share^count, 0 for a count of 0 whatever the share.
    let pow = |l: f64, c: u32| if c == 0 { 0.0 } else { f64::from(c) * l };
    let c1_max = if shares.alternate > 0.0 { k } else { 0 };
    let (mut hit, mut miss) = (0.0, 0.0);
    for c0 in 0..=k {
        for c1 in 0..=c1_max.min(k - c0) {
            for a in 0..=(k - c0 - c1) {
                let u = k - c0 - c1 - a;
                let lp = lnf[k as usize]
                    - lnf[c0 as usize]
                    - lnf[c1 as usize]
                    - lnf[a as usize]
                    - lnf[u as usize]
                    + pow(l0, c0)
                    + pow(l1, c1)
                    + pow(la, a)
                    + pow(lo, u);
                if lp == f64::NEG_INFINITY {
                    continue;
                }
                let p = lp.exp();
                let (h, m) = cut([c0, c1], a, u, n, fpr, fnr);
                hit += p * h;
                miss += p * m;
            }
        }
    }
    (hit.clamp(0.0, 1.0), miss.clamp(0.0, 1.0))
}

/// (P(a submitted answer is marked correct), P(none is)) for one composition: correct clusters of
/// sizes `correct` (0 = absent), one wrong cluster of size `a` (0 = absent) and `u` singletons,
/// n slots. Both are computed from their own terms.
fn cut(correct: [u32; 2], a: u32, u: u32, n: u32, fpr: f64, fnr: f64) -> (f64, f64) {
    // Distinct sizes, largest first, with their correct and wrong cluster counts.
    let mut sizes: Vec<u32> = correct
        .iter()
        .copied()
        .chain([a])
        .filter(|&s| s > 0)
        .collect();
    if u > 0 {
        sizes.push(1);
    }
    sizes.sort_unstable_by(|x, y| y.cmp(x));
    sizes.dedup();
    let (mut slots, mut good, mut bad) = (n, 0u32, 0u32);
    for s in sizes {
        let c = correct.iter().filter(|&&x| x == s).count() as u32;
        let w = u32::from(a == s) + if s == 1 { u } else { 0 };
        if c + w <= slots {
            slots -= c + w;
            good += c;
            bad += w;
            continue;
        }
        // r of the c + w clusters of this size, chosen uniformly: j correct ones with
        // hypergeometric probability C(c, j) C(w, r - j) / C(c + w, r).
        let r = slots;
        let (mut hit, mut miss) = (0.0, 0.0);
        for j in r.saturating_sub(w)..=c.min(r) {
            let prob = choose(c, j) * choose(w, r - j) / choose(c + w, r);
            let (h, m) = marked(good + j, bad + r - j, fpr, fnr);
            hit += prob * h;
            miss += prob * m;
        }
        return (hit, miss);
    }
    marked(good, bad, fpr, fnr)
}

/// (P(some submitted answer is marked correct), P(none is)) for `good` correct and `bad` wrong
/// submitted answers: 1 - fnr^good (1 - fpr)^bad as -expm1 of its logarithm, and the product
/// itself (0^0 = 1).
fn marked(good: u32, bad: u32, fpr: f64, fnr: f64) -> (f64, f64) {
    let ln_wrong = if good > 0 {
        f64::from(good) * fnr.ln()
    } else {
        0.0
    } + if bad > 0 {
        f64::from(bad) * (-fpr).ln_1p()
    } else {
        0.0
    };
    (-ln_wrong.exp_m1(), ln_wrong.exp())
}

/// The binomial coefficient C(n, k) as a float (exact below 2^53).
fn choose(n: u32, k: u32) -> f64 {
    if k > n {
        return 0.0;
    }
    let k = k.min(n - k);
    (0..k).fold(1.0, |acc, i| acc * f64::from(n - i) / f64::from(i + 1))
}

/// (n@k, 1 - n@k) when a verifier chooses the n submissions: the n samples it ranks first, of a
/// problem whose samples are correct with rate `p` (the selectable rate: an unparsed sample is a
/// wrong one), each submission marked by `grader` (`None`: the true value). With n = 1 this is
/// best@k; with n >= k every sample is submitted (pass@k). Time: O(k) for a threshold verifier,
/// four adaptive quadratures for a score verifier.
///
/// # Panics
///
/// If k or n is 0.
pub fn submit_best(
    p: f64,
    verifier: &Verifier,
    k: u32,
    n: u32,
    grader: Option<Grader>,
) -> (f64, f64) {
    assert!(k >= 1 && n >= 1, "n@k needs k >= 1 and n >= 1");
    let n = n.min(k);
    // a: chance a correct submission is marked wrong; b: a wrong one.
    let (a, b) = grader.map_or((0.0, 1.0), |g| (g.fnr, 1.0 - g.fpr));
    match *verifier {
        Verifier::Threshold(v) => threshold_picks(p, &v, k, n, (a, b)),
        Verifier::Score { separation } => score_picks(p, separation, k, n, (a, b)),
    }
}

/// A threshold verifier: the n submissions are drawn uniformly from the accepted samples; when
/// fewer than n are accepted, all of them, and under `Random` the rest uniformly from the
/// rejected. Given the accepted count A ~ Bin(k, alpha + beta), an accepted submission is
/// correct with alpha / (alpha + beta) and a rejected one with p (1 - tpr) / gamma, each
/// independently (the samples are exchangeable), so the miss is
/// sum_A P(A) e_acc^min(A, n) e_rej^r(A), with e the chance one submission is marked wrong and
/// r(A) = n - A fallback picks when A < n.
fn threshold_picks(
    p: f64,
    v: &ThresholdVerifier,
    k: u32,
    n: u32,
    (a, b): (f64, f64),
) -> (f64, f64) {
    let (alpha, beta, gamma) = v.shares(p);
    let q = 1.0 - p;
    let accepted = alpha + beta;
    let ln_acc = if accepted > 0.0 {
        ((alpha * a + beta * b) / accepted).ln()
    } else {
        0.0
    };
    let ln_rej = if gamma > 0.0 {
        ((p * (1.0 - v.tpr) * a + q * (1.0 - v.fpr) * b) / gamma).ln()
    } else {
        0.0
    };
    let pmf = binomial_pmf(k, accepted);
    let (mut hit, mut miss) = (0.0, 0.0);
    for (count, &pa) in pmf.iter().enumerate() {
        if pa == 0.0 {
            continue;
        }
        let count = count as u32;
        let from_accepted = count.min(n);
        let from_rejected = match v.fallback {
            Fallback::Random => n - from_accepted,
            Fallback::Abstain => 0,
        };
        let mut ln_wrong = 0.0;
        if from_accepted > 0 {
            ln_wrong += f64::from(from_accepted) * ln_acc;
        }
        if from_rejected > 0 {
            ln_wrong += f64::from(from_rejected) * ln_rej;
        }
        hit += pa * -ln_wrong.exp_m1();
        miss += pa * ln_wrong.exp();
    }
    (hit.clamp(0.0, 1.0), miss.clamp(0.0, 1.0))
}

/// A score verifier: the n highest of k scores, N(d, 1) for a correct sample and N(0, 1) for a
/// wrong one. With F the distribution function of one score and S = 1 - F, the n-th highest
/// score has density k C(k - 1, n - 1) f(t) S(t)^(n - 1) F(t)^(k - n); given it, the other n - 1
/// submissions are independent draws above t. With g and G the density and upper tail weighted
/// by the chance of being marked wrong (a for correct, b for wrong samples),
///
///   miss = k C(k - 1, n - 1) integral F^(k - n) g G^(n - 1) dt,
///   n@k  = k C(k - 1, n - 1) integral F^(k - n) [(f - g) S^(n - 1)
///                                   + g (S - G) sum_j S^(n - 2 - j) G^j] dt,
///
/// both integrands sums of non-negative terms (f - g and S - G written out), each integral split
/// into its N(d, 1) and N(0, 1) parts and integrated on its own to 1e-13 relative.
fn score_picks(p: f64, d: f64, k: u32, n: u32, (a, b): (f64, f64)) -> (f64, f64) {
    let q = 1.0 - p;
    if p <= 0.0 && b == 1.0 {
        return (0.0, 1.0);
    }
    let lnf = ln_factorials(k);
    // ln(k C(k - 1, n - 1)).
    let ln_k =
        f64::from(k).ln() + lnf[k as usize - 1] - lnf[n as usize - 1] - lnf[(k - n) as usize];
    let (kn, n1) = (f64::from(k - n), f64::from(n - 1));
    // Per t: (ln F, S, G, D = S - G) with F from whichever of F and S is smaller.
    let parts = move |t: f64| {
        let (lo_c, up_c) = cdf_and_sf(t - d);
        let (lo_w, up_w) = cdf_and_sf(t);
        let upper = p * up_c + q * up_w;
        let ln_f = if upper < 0.5 {
            (-upper).ln_1p()
        } else {
            (p * lo_c + q * lo_w).ln()
        };
        let g_tail = p * a * up_c + q * b * up_w;
        let d_tail = p * (1.0 - a) * up_c + q * (1.0 - b) * up_w;
        (ln_f, upper, g_tail, d_tail)
    };
    // exp(ln_k + (k - n) ln F + m ln x), 0 when x^m vanishes.
    let weight = move |ln_f: f64, x: f64, m: f64| {
        if m > 0.0 && x <= 0.0 {
            0.0
        } else {
            let lx = if m > 0.0 { m * x.ln() } else { 0.0 };
            (ln_k + kn * ln_f + lx).exp()
        }
    };
    // miss: the density part g = p a phi(t - d) + q b phi(t).
    let miss_at = move |t: f64| {
        let (ln_f, _, g_tail, _) = parts(t);
        weight(ln_f, g_tail, n1)
    };
    // n@k: (f - g) S^(n - 1) + g D sum_j S^(n - 2 - j) G^j, per unit density.
    let hit_at = move |t: f64, marked_wrong: f64| {
        let (ln_f, s, g_tail, d_tail) = parts(t);
        let first = (1.0 - marked_wrong) * weight(ln_f, s, n1);
        let second = if n >= 2 && marked_wrong > 0.0 && d_tail > 0.0 {
            // S^(n - 2) sum_j (G / S)^j.
            let r = if s > 0.0 { g_tail / s } else { 0.0 };
            let mut sum = 0.0;
            let mut term = 1.0;
            for _ in 0..(n - 1) {
                sum += term;
                term *= r;
            }
            marked_wrong * d_tail * sum * weight(ln_f, s, f64::from(n - 2))
        } else {
            0.0
        };
        first + second
    };
    let miss =
        p * a * relative_expectation(|z| miss_at(z + d)) + q * b * relative_expectation(miss_at);
    let hit =
        p * relative_expectation(|z| hit_at(z + d, a)) + q * relative_expectation(|z| hit_at(z, b));
    (hit.clamp(0.0, 1.0), miss.clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::modes::{maj_at_k_modes, Extraction};
    use crate::exact::pass::{pass_at_k, pass_at_k_complement};
    use crate::model::VoteRule;

    /// n@k by listing every sequence of k sample types and every order of the clusters (a
    /// uniformly random order, then a stable sort by size, is the random tie-break).
    fn brute_force(shares: &AnswerShares, k: u32, n: u32, fpr: f64, fnr: f64) -> f64 {
        let probs = [
            shares.correct,
            shares.alternate,
            shares.attractors.first().copied().unwrap_or(0.0),
            shares.one_off,
        ];
        let mut total = 0.0;
        for code in 0..4u32.pow(k) {
            let mut p = 1.0;
            let mut counts = [0u32; 4];
            let mut x = code;
            for _ in 0..k {
                p *= probs[(x % 4) as usize];
                counts[(x % 4) as usize] += 1;
                x /= 4;
            }
            if p == 0.0 {
                continue;
            }
            // (size, correct) of each cluster.
            let mut clusters: Vec<(u32, bool)> = Vec::new();
            for (t, &c) in counts.iter().enumerate().take(3) {
                if c > 0 {
                    clusters.push((c, t < 2));
                }
            }
            clusters.extend((0..counts[3]).map(|_| (1, false)));
            let orders = permutations(clusters.len());
            let mut credit = 0.0;
            for order in &orders {
                let mut sorted: Vec<(u32, bool)> = order.iter().map(|&i| clusters[i]).collect();
                sorted.sort_by_key(|c| std::cmp::Reverse(c.0));
                let chosen = &sorted[..(n as usize).min(sorted.len())];
                let good = chosen.iter().filter(|c| c.1).count() as i32;
                let bad = chosen.len() as i32 - good;
                credit += 1.0 - fnr.powi(good) * (1.0 - fpr).powi(bad);
            }
            total += p * credit / orders.len() as f64;
        }
        total
    }

    fn permutations(m: usize) -> Vec<Vec<usize>> {
        if m == 0 {
            return vec![Vec::new()];
        }
        let mut out = Vec::new();
        for rest in permutations(m - 1) {
            for pos in 0..=rest.len() {
                let mut v = rest.clone();
                v.insert(pos, m - 1);
                out.push(v);
            }
        }
        out
    }

    #[test]
    fn n_at_k_matches_enumeration_of_every_sample_sequence_and_tie_order() {
        let cases = [
            AnswerShares::new(0.3, &[0.4], Extraction::default()),
            AnswerShares::new(
                0.45,
                &[0.5],
                Extraction {
                    unparsed: 0.1,
                    split: 0.3,
                },
            ),
            AnswerShares::new(0.2, &[], Extraction::default()),
            AnswerShares::new(0.6, &[1.0], Extraction::default()),
        ];
        for shares in &cases {
            for k in 1..=5 {
                for n in 1..=4 {
                    for (fpr, fnr) in [(0.0, 0.0), (0.1, 0.2)] {
                        let grader = (fpr > 0.0).then_some(Grader { fpr, fnr });
                        let (v, c) = submit_at_k(shares, k, n, grader);
                        let want = brute_force(shares, k, n, fpr, fnr);
                        assert!(
                            (v - want).abs() < 1e-14,
                            "{shares:?} k={k} n={n}: {v} {want}"
                        );
                        assert!((v + c - 1.0).abs() < 1e-14);
                    }
                }
            }
        }
    }

    #[test]
    fn one_submission_is_maj_at_k_and_enough_submissions_are_pass_at_k() {
        for (p, a, ext) in [
            (0.3, 0.4, Extraction::default()),
            (
                0.55,
                0.7,
                Extraction {
                    unparsed: 0.05,
                    split: 0.25,
                },
            ),
            (0.02, 0.9, Extraction::default()),
        ] {
            let shares = AnswerShares::new(p, &[a], ext);
            for k in [1, 2, 7, 16, 33] {
                let (v, c) = submit_at_k(&shares, k, 1, None);
                let (m, ml) = maj_at_k_modes(p, &[a], ext, k, VoteRule::Random);
                assert!(
                    (v - m).abs() <= 1e-12 * m.max(1e-300) + 1e-15,
                    "k={k}: {v} {m}"
                );
                assert!((c - ml).abs() <= 1e-12 * ml, "k={k}: {c} {ml}");
                let r = (1.0 - ext.unparsed) * p;
                let (v, c) = submit_at_k(&shares, k, k, None);
                assert!((v - pass_at_k(r, k)).abs() <= 1e-12 * v);
                let miss = pass_at_k_complement(r, k);
                assert!((c - miss).abs() <= 1e-12 * miss, "k={k}: {c} {miss}");
            }
        }
    }

    #[test]
    fn n_at_k_rises_with_n_from_maj_at_k_to_pass_at_k() {
        let shares = AnswerShares::new(0.25, &[0.6], Extraction::default());
        let values: Vec<f64> = (1..=8)
            .map(|n| submit_at_k(&shares, 8, n, None).0)
            .collect();
        assert!(
            values.windows(2).all(|w| w[1] >= w[0] - 1e-15),
            "{values:?}"
        );
        assert!(values[0] < values[7] - 0.1);
    }

    /// The threshold verifier's n picks by listing every sequence of sample states (accepted or
    /// rejected, correct or wrong) and every equally likely choice of submissions.
    fn threshold_brute(p: f64, v: &ThresholdVerifier, k: u32, n: u32, fpr: f64, fnr: f64) -> f64 {
        let probs = [
            p * v.tpr,
            (1.0 - p) * v.fpr,
            p * (1.0 - v.tpr),
            (1.0 - p) * (1.0 - v.fpr),
        ];
        let mut miss = 0.0;
        for code in 0..4u32.pow(k) {
            let mut states = Vec::new();
            let mut prob = 1.0;
            let mut x = code;
            for _ in 0..k {
                states.push(x % 4);
                prob *= probs[(x % 4) as usize];
                x /= 4;
            }
            if prob == 0.0 {
                continue;
            }
            let accepted: Vec<u32> = states.iter().copied().filter(|&s| s < 2).collect();
            let rejected: Vec<u32> = states.iter().copied().filter(|&s| s >= 2).collect();
            // Average over every subset of the right size of each group.
            let subsets = |group: &[u32], size: usize| -> f64 {
                let m = group.len();
                let (mut total, mut count) = (0.0, 0.0);
                for mask in 0u32..(1 << m) {
                    if mask.count_ones() as usize != size {
                        continue;
                    }
                    let mut wrong = 1.0;
                    for (i, &s) in group.iter().enumerate() {
                        if mask >> i & 1 == 1 {
                            wrong *= if s % 2 == 0 { fnr } else { 1.0 - fpr };
                        }
                    }
                    total += wrong;
                    count += 1.0;
                }
                total / count
            };
            let take = accepted.len().min(n as usize);
            let rest = match v.fallback {
                Fallback::Random => (n as usize).min(k as usize) - take,
                Fallback::Abstain => 0,
            };
            miss += prob * subsets(&accepted, take) * subsets(&rejected, rest);
        }
        1.0 - miss
    }

    #[test]
    fn threshold_picks_match_enumeration_of_every_sequence_and_choice() {
        for fallback in [Fallback::Random, Fallback::Abstain] {
            let v = ThresholdVerifier {
                tpr: 0.8,
                fpr: 0.15,
                fallback,
            };
            for p in [0.0, 0.2, 0.7, 1.0] {
                for k in 1..=5 {
                    for n in 1..=5 {
                        for (fpr, fnr) in [(0.0, 0.0), (0.1, 0.25)] {
                            let grader = (fpr > 0.0).then_some(Grader { fpr, fnr });
                            let (h, m) = submit_best(p, &Verifier::Threshold(v), k, n, grader);
                            let want = threshold_brute(p, &v, k, n, fpr, fnr);
                            assert!((h - want).abs() < 1e-14, "p={p} k={k} n={n}: {h} {want}");
                            assert!((h + m - 1.0).abs() < 1e-14);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn one_verifier_pick_is_best_at_k_and_k_picks_are_pass_at_k() {
        use crate::exact::verifier::{best_at_k_score, best_at_k_threshold};
        let t = ThresholdVerifier {
            tpr: 0.9,
            fpr: 0.2,
            fallback: Fallback::Random,
        };
        for p in [0.01, 0.3, 0.8] {
            for k in [1, 3, 10, 40] {
                let (h, m) = submit_best(p, &Verifier::Threshold(t), k, 1, None);
                let (w, l) = best_at_k_threshold(p, &t, k);
                assert!((h - w).abs() <= 1e-13 * w && (m - l).abs() <= 1e-13 * l.max(1e-300));
                let (h, m) = submit_best(p, &Verifier::Score { separation: 1.5 }, k, 1, None);
                let (w, l) = best_at_k_score(p, 1.5, k);
                assert!((h - w).abs() <= 1e-11 * w, "p={p} k={k}: {h} {w}");
                assert!((m - l).abs() <= 1e-11 * l, "p={p} k={k}: {m} {l}");
                for v in [Verifier::Threshold(t), Verifier::Score { separation: 1.5 }] {
                    let (h, m) = submit_best(p, &v, k, k, None);
                    assert!((h - pass_at_k(p, k)).abs() <= 1e-11 * h, "{v:?} k={k}");
                    let miss = pass_at_k_complement(p, k);
                    assert!((m - miss).abs() <= 1e-11 * miss, "{v:?} k={k}: {m} {miss}");
                }
            }
        }
    }

    /// The score verifier's true miss by conditioning on the highest correct score instead of
    /// the n-th highest score: sum over c correct of P(c) times the chance that at least n wrong
    /// scores lie above the best correct one, by a dense trapezoid rule.
    fn score_brute(p: f64, d: f64, k: u32, n: u32) -> f64 {
        use crate::exact::maj::binomial_pmf;
        use crate::exact::normal::cdf_and_sf;
        let pmf = binomial_pmf(k, p);
        let mut miss = pmf[0];
        let (lo, hi, steps) = (-12.0, 12.0 + d, 200_000);
        let h = (hi - lo) / f64::from(steps);
        for c in 1..=k {
            let w = k - c;
            let mut total = 0.0;
            for i in 0..=steps {
                let x = lo + h * f64::from(i);
                let density = c as f64 * (-0.5 * (x - d) * (x - d)).exp()
                    / (2.0 * std::f64::consts::PI).sqrt()
                    * cdf_and_sf(x - d).0.powi(c as i32 - 1);
                let above = cdf_and_sf(x).1;
                let at_least: f64 = binomial_pmf(w, above).iter().skip(n as usize).sum();
                let weight = if i == 0 || i == steps { 0.5 } else { 1.0 };
                total += weight * density * at_least;
            }
            miss += pmf[c as usize] * total * h;
        }
        1.0 - miss
    }

    #[test]
    fn score_picks_match_conditioning_on_the_best_correct_score() {
        for (p, d) in [(0.3, 1.5), (0.05, 2.5), (0.7, 0.5)] {
            for (k, n) in [(3, 2), (6, 2), (6, 4), (9, 3)] {
                let (h, m) = submit_best(p, &Verifier::Score { separation: d }, k, n, None);
                let want = score_brute(p, d, k, n);
                assert!(
                    (h - want).abs() < 1e-9,
                    "p={p} d={d} k={k} n={n}: {h} {want}"
                );
                assert!((h + m - 1.0).abs() < 1e-12);
            }
        }
    }
}
