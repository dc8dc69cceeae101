//! Exact best-of-k selection by a threshold verifier, and its large-k ceiling.
//!
//! Each of k samples is correct with probability p, independently. The verifier accepts a correct
//! sample with probability `tpr` and a wrong one with `fpr`, independently of everything else.
//! The pick is uniform among the accepted samples; when none is accepted the [`Fallback`] decides:
//! `Random` picks uniformly among all k samples, `Abstain` gives no answer (graded wrong).
//!
//! Per sample: accepted and correct alpha = p tpr, accepted and wrong beta = (1 - p) fpr,
//! rejected gamma = p (1 - tpr) + (1 - p) (1 - fpr) (from its own terms, not 1 - alpha - beta).
//! Given that at least one sample is accepted, the samples are exchangeable, so the uniform pick
//! among the accepted is correct with probability alpha / (alpha + beta). Given that none is,
//! every sample is a rejected one, correct with probability p (1 - tpr) / gamma. Hence
//!
//!   best@k = alpha / (alpha + beta) (1 - gamma^k) + \[Random\] gamma^(k - 1) p (1 - tpr),
//!
//! and its complement, summed from its own terms,
//!
//!   1 - best@k = beta / (alpha + beta) (1 - gamma^k) + \[Random\] gamma^(k - 1) (1 - p) (1 - fpr)
//!              + \[Abstain\] gamma^k.
//!
//! 1 - gamma^k is -expm1(k ln gamma) and gamma^k is exp(k ln gamma), so both keep their relative
//! accuracy. As k grows best@k -> alpha / (alpha + beta) ([`threshold_ceiling`]): more samples
//! cannot push the verifier past its own precision. Time: O(1) per problem.
//!
//! # Score verifier
//!
//! A reward score per sample, N(d, 1) for a correct sample and N(0, 1) for a wrong one
//! (d = `separation`); the pick is the argmax. With F(x) = p Phi(x - d) + (1 - p) Phi(x) the
//! distribution function of one sample's score, the argmax is a given sample with score x when
//! the other k - 1 score below x, so
//!
//!   best@k     = k p       integral phi(x - d) F(x)^(k - 1) dx = k p       E\[F(Z + d)^(k - 1)\],
//!   1 - best@k = k (1 - p) integral phi(x) F(x)^(k - 1) dx     = k (1 - p) E\[F(Z)^(k - 1)\],
//!
//! Z ~ N(0, 1). Each is a one-dimensional expectation over the normal, integrated on its own (so
//! a tiny complement keeps its relative accuracy) by [`AdaptiveSimpson`] of
//! [`crate::exact::quadrature`]. F^(k - 1) is exp((k - 1) ln F) with ln F = ln_1p(-(upper tail))
//! from the normal's upper tails, accurate where F is near 1 (where the integrand of a large k
//! lives).
//!
//! **Error.** The adaptive rule works to an absolute 1e-13 over |z| <= 12; the integrand is first
//! divided by a coarse estimate of the integral (composite Simpson, 2,000 steps), so the target
//! is 1e-13 *relative* to the value being computed, win and loss alike. The tails cut beyond
//! |z| = 12 weigh at most k 2 Phi(-12) ~ 4e-30 in absolute terms at k = 1,024 (separation is
//! bounded by 10, so the peak of either integrand stays inside the range). Measured against an
//! independent enumeration with a fine trapezoid rule (test `score_matches_enumeration`), and
//! win + loss = 1 to 1e-12. Time: a few thousand evaluations of F per value (O(1) in k).

use crate::exact::normal::cdf_and_sf;
use crate::exact::pass::mean;
use crate::exact::quadrature::{AdaptiveSimpson, CompositeSimpson, NormalQuadrature};
pub use crate::model::{Fallback, ThresholdVerifier};
use crate::model::{Grader, Verifier};
use rayon::prelude::*;

/// The correct rate a verifier selects from when a share `unparsed` of samples has no
/// extractable answer: (1 - u) p. Whether the pick is correct depends only on each sample's
/// correct/wrong label, so several attractors and `split` (either form is correct) leave it at
/// p, and an unparsed sample is a wrong sample like any other (a threshold verifier accepts it
/// with `fpr`, a score verifier scores it N(0, 1)). best@k under answer extraction is therefore
/// the best@k of this rate; with u = 0 it is p itself, bit for bit. Time: O(1).
pub fn selectable_rate(p: f64, unparsed: f64) -> f64 {
    if unparsed == 0.0 {
        p
    } else {
        (1.0 - unparsed) * p
    }
}

impl ThresholdVerifier {
    /// (alpha, beta, gamma): a sample accepted and correct, accepted and wrong, rejected.
    pub fn shares(&self, p: f64) -> (f64, f64, f64) {
        let q = 1.0 - p;
        (
            p * self.tpr,
            q * self.fpr,
            p * (1.0 - self.tpr) + q * (1.0 - self.fpr),
        )
    }
}

/// (best@k, 1 - best@k) of one problem with solve rate `p`, by the closed form of the module doc.
/// Time: O(1).
///
/// # Panics
///
/// If k = 0.
pub fn best_at_k_threshold(p: f64, v: &ThresholdVerifier, k: u32) -> (f64, f64) {
    assert!(k >= 1, "best-of-k needs at least one sample");
    let (alpha, beta, gamma) = v.shares(p);
    let kf = f64::from(k);
    // gamma^k, 1 - gamma^k and gamma^(k - 1), each directly.
    let (none, some, before) = if gamma <= 0.0 {
        (0.0, 1.0, if k == 1 { 1.0 } else { 0.0 })
    } else {
        let lg = gamma.ln();
        (
            (kf * lg).exp(),
            -(kf * lg).exp_m1(),
            ((kf - 1.0) * lg).exp(),
        )
    };
    let accepted = alpha + beta;
    let (mut win, mut loss) = if accepted > 0.0 {
        (alpha / accepted * some, beta / accepted * some)
    } else {
        (0.0, 0.0)
    };
    match v.fallback {
        Fallback::Random => {
            win += before * p * (1.0 - v.tpr);
            loss += before * (1.0 - p) * (1.0 - v.fpr);
        }
        Fallback::Abstain => loss += none,
    }
    (win.clamp(0.0, 1.0), loss.clamp(0.0, 1.0))
}

/// The large-k limit of best@k of one problem: alpha / (alpha + beta) when the verifier ever
/// accepts anything (alpha + beta > 0); otherwise the fallback forever: p (1 - tpr) / gamma for
/// `Random` (= p), 0 for `Abstain`. Time: O(1).
pub fn threshold_ceiling(p: f64, v: &ThresholdVerifier) -> f64 {
    let (alpha, beta, gamma) = v.shares(p);
    if alpha + beta > 0.0 {
        alpha / (alpha + beta)
    } else {
        match v.fallback {
            Fallback::Random if gamma > 0.0 => p * (1.0 - v.tpr) / gamma,
            _ => 0.0,
        }
    }
}

/// (best@k, 1 - best@k) of one problem with solve rate `p` under a score verifier with mean
/// score gap `separation`, by the two integrals of the module doc. Exact without integration
/// where the answer is elementary: k = 1, p in {0, 1} or separation 0 give (p, 1 - p).
/// Time: a few thousand normal tail evaluations.
///
/// # Panics
///
/// If k = 0.
pub fn best_at_k_score(p: f64, separation: f64, k: u32) -> (f64, f64) {
    assert!(k >= 1, "best-of-k needs at least one sample");
    let q = 1.0 - p;
    if k == 1 || p <= 0.0 || p >= 1.0 || separation == 0.0 {
        return (p, q);
    }
    let d = separation;
    let power = f64::from(k - 1);
    // F(x)^(k - 1), from whichever of F and 1 - F is the smaller.
    let f_pow = move |x: f64| -> f64 {
        let (lo_c, up_c) = cdf_and_sf(x - d);
        let (lo_w, up_w) = cdf_and_sf(x);
        let upper = p * up_c + q * up_w;
        let ln_f = if upper < 0.5 {
            (-upper).ln_1p()
        } else {
            (p * lo_c + q * lo_w).ln()
        };
        (power * ln_f).exp()
    };
    let win = relative_expectation(|z| f_pow(z + d)) * (f64::from(k) * p);
    let loss = relative_expectation(f_pow) * (f64::from(k) * q);
    (win.clamp(0.0, 1.0), loss.clamp(0.0, 1.0))
}

/// E\[f(Z)\] to about 1e-13 of its own size: [`AdaptiveSimpson`] on f divided by a coarse
/// composite-Simpson estimate (0 when that estimate underflows to 0).
pub(crate) fn relative_expectation(f: impl Fn(f64) -> f64) -> f64 {
    let coarse = CompositeSimpson::new(2_000).expect(&f);
    if coarse <= 0.0 || !coarse.is_finite() {
        return coarse.max(0.0);
    }
    AdaptiveSimpson { break_at: None }.expect(|z| f(z) / coarse) * coarse
}

/// The large-k limit of best@k under a score verifier: 1 for a positive separation (the top
/// score is a correct sample's once there are enough of them), 0 for a negative one, p for 0.
pub fn score_ceiling(p: f64, separation: f64) -> f64 {
    if p <= 0.0 || separation < 0.0 {
        0.0
    } else if separation == 0.0 {
        p
    } else {
        1.0
    }
}

/// (best@k, 1 - best@k) of one problem with selectable rate p, exact and true (before
/// grading). Time: O(1) for a threshold verifier, one adaptive quadrature for a score verifier.
pub fn best_pair(p: f64, verifier: &Verifier, k: u32) -> (f64, f64) {
    match *verifier {
        Verifier::Threshold(v) => best_at_k_threshold(p, &v, k),
        Verifier::Score { separation } => best_at_k_score(p, separation, k),
    }
}

/// [`best_pair`] of every problem, in parallel over problems. Time: N times [`best_pair`].
pub fn best_pairs(rates: &[f64], verifier: &Verifier, k: u32) -> Vec<(f64, f64)> {
    rates
        .par_iter()
        .map(|&p| best_pair(p, verifier, k))
        .collect()
}

/// The large-k limit of best@k of one problem with selectable rate p, as graded. Time: O(1).
pub fn best_ceiling_of(p: f64, verifier: &Verifier, grader: Option<Grader>) -> f64 {
    let c = match verifier {
        Verifier::Threshold(v) => threshold_ceiling(p, v),
        Verifier::Score { separation } => score_ceiling(p, *separation),
    };
    grader.map_or(c, |g| g.selected((c, 1.0 - c)).0)
}

/// The large-k limit of best@k on the benchmark (mean over problems), as graded. Time: O(N).
pub fn best_ceiling(rates: &[f64], verifier: &Verifier, grader: Option<Grader>) -> f64 {
    let per: Vec<f64> = rates
        .iter()
        .map(|&p| best_ceiling_of(p, verifier, grader))
        .collect();
    mean(&per)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::pass::pass_at_k;

    /// best@k by enumerating the 4^k outcome sequences (correct/wrong x accepted/rejected).
    fn brute_force(p: f64, v: &ThresholdVerifier, k: u32) -> f64 {
        let probs = [
            p * v.tpr,
            p * (1.0 - v.tpr),
            (1.0 - p) * v.fpr,
            (1.0 - p) * (1.0 - v.fpr),
        ];
        let mut total = 0.0;
        for code in 0..4u32.pow(k) {
            let seq: Vec<u32> = (0..k).map(|i| (code >> (2 * i)) & 3).collect();
            let pr: f64 = seq.iter().map(|&o| probs[o as usize]).product();
            let accepted: Vec<bool> = seq
                .iter()
                .filter(|&&o| o % 2 == 0)
                .map(|&o| o == 0)
                .collect();
            let win = if !accepted.is_empty() {
                accepted.iter().filter(|&&c| c).count() as f64 / accepted.len() as f64
            } else {
                match v.fallback {
                    Fallback::Random => seq.iter().filter(|&&o| o < 2).count() as f64 / k as f64,
                    Fallback::Abstain => 0.0,
                }
            };
            total += pr * win;
        }
        total
    }

    #[test]
    fn threshold_matches_enumeration() {
        for fallback in [Fallback::Random, Fallback::Abstain] {
            for &(tpr, fpr) in &[
                (0.9, 0.2),
                (0.5, 0.5),
                (1.0, 0.0),
                (0.0, 0.0),
                (0.7, 1.0),
                (0.0, 0.3),
            ] {
                let v = ThresholdVerifier { tpr, fpr, fallback };
                for &p in &[0.0, 0.1, 0.5, 0.85, 1.0] {
                    for k in 1..=6 {
                        let (w, l) = best_at_k_threshold(p, &v, k);
                        let b = brute_force(p, &v, k);
                        assert!((w - b).abs() < 1e-14, "{v:?} p={p} k={k}: {w} vs {b}");
                        assert!((w + l - 1.0).abs() < 1e-14, "{v:?} p={p} k={k}: {w} + {l}");
                    }
                }
            }
        }
    }

    /// The per-sample labels of the answer-mode model: (probability, correct, unparsed) of the
    /// correct answer's two forms, two attractors, a one-off and no answer.
    fn mode_labels(p: f64, a: [f64; 2], u: f64, s: f64) -> Vec<(f64, bool)> {
        let parsed = 1.0 - u;
        vec![
            (parsed * p * (1.0 - s), true),
            (parsed * p * s, true),
            (parsed * a[0] * (1.0 - p), false),
            (parsed * a[1] * (1.0 - p), false),
            (parsed * (1.0 - a[0] - a[1]) * (1.0 - p), false),
            (u, false),
        ]
    }

    /// best@k of a threshold verifier over answer modes by enumerating every sequence of k
    /// labels (6^k) and every accept/reject pattern (2^k), the pick uniform among the accepted
    /// (an unparsed sample accepted with fpr like any wrong one), else the fallback.
    fn threshold_modes_brute_force(labels: &[(f64, bool)], v: &ThresholdVerifier, k: u32) -> f64 {
        let n = labels.len() as u32;
        let mut total = 0.0;
        for code in 0..n.pow(k) {
            let seq: Vec<(f64, bool)> = (0..k)
                .map(|i| labels[((code / n.pow(i)) % n) as usize])
                .collect();
            let pr_labels: f64 = seq.iter().map(|x| x.0).product();
            for mask in 0..1u32 << k {
                let accepted: Vec<bool> = (0..k as usize)
                    .filter(|&i| mask >> i & 1 == 1)
                    .map(|i| seq[i].1)
                    .collect();
                let pr_mask: f64 = (0..k as usize)
                    .map(|i| {
                        let rate = if seq[i].1 { v.tpr } else { v.fpr };
                        if mask >> i & 1 == 1 {
                            rate
                        } else {
                            1.0 - rate
                        }
                    })
                    .product();
                let win = if !accepted.is_empty() {
                    accepted.iter().filter(|&&c| c).count() as f64 / accepted.len() as f64
                } else {
                    match v.fallback {
                        Fallback::Random => {
                            seq.iter().filter(|x| x.1).count() as f64 / f64::from(k)
                        }
                        Fallback::Abstain => 0.0,
                    }
                };
                total += pr_labels * pr_mask * win;
            }
        }
        total
    }

    /// Several attractors, unparsed and split under a verifier: best@k is exactly the best@k of
    /// the rate (1 - u) p ([`selectable_rate`]), checked against enumeration of the answers.
    #[test]
    fn verifier_over_answer_modes_matches_enumeration() {
        let cases = [
            (0.4, [0.3, 0.2], 0.0, 0.0),
            (0.4, [0.3, 0.2], 0.2, 0.0),
            (0.55, [0.5, 0.1], 0.0, 0.4),
            (0.3, [0.6, 0.3], 0.15, 0.35),
            (1.0, [0.5, 0.5], 0.3, 0.5),
        ];
        for fallback in [Fallback::Random, Fallback::Abstain] {
            for &(tpr, fpr) in &[(0.85, 0.12), (0.6, 0.4), (1.0, 0.0)] {
                let v = ThresholdVerifier { tpr, fpr, fallback };
                for &(p, a, u, s) in &cases {
                    let labels = mode_labels(p, a, u, s);
                    for k in 1..=4 {
                        let b = threshold_modes_brute_force(&labels, &v, k);
                        let (w, l) = best_at_k_threshold(selectable_rate(p, u), &v, k);
                        assert!(
                            (w - b).abs() < 1e-12 && (w + l - 1.0).abs() < 1e-14,
                            "{v:?} p={p} a={a:?} u={u} s={s} k={k}: {w} vs {b}"
                        );
                    }
                }
            }
        }
        // The score verifier: enumerate the labels, score each sequence by its correct count.
        for &(p, a, u, s) in &cases[..4] {
            let labels = mode_labels(p, a, u, s);
            let n = labels.len() as u32;
            for k in 1..=3u32 {
                let mut b = 0.0;
                for code in 0..n.pow(k) {
                    let seq: Vec<(f64, bool)> = (0..k)
                        .map(|i| labels[((code / n.pow(i)) % n) as usize])
                        .collect();
                    let c = seq.iter().filter(|x| x.1).count() as u32;
                    b += seq.iter().map(|x| x.0).product::<f64>() * correct_on_top(c, k - c, 1.5);
                }
                let (w, _) = best_at_k_score(selectable_rate(p, u), 1.5, k);
                assert!(
                    (w - b).abs() < 1e-9,
                    "score p={p} u={u} s={s} k={k}: {w} vs {b}"
                );
            }
        }
        assert_eq!(selectable_rate(0.37, 0.0), 0.37);
    }

    #[test]
    fn perfect_verifier_gives_pass_at_k_and_k1_gives_p() {
        let v = ThresholdVerifier {
            tpr: 1.0,
            fpr: 0.0,
            fallback: Fallback::Random,
        };
        for &p in &[0.01, 0.3, 0.9] {
            for k in [1u32, 5, 64] {
                let (w, _) = best_at_k_threshold(p, &v, k);
                assert!((w - pass_at_k(p, k)).abs() < 1e-15);
            }
            // k = 1 with a random fallback: the one sample, whatever the verifier says.
            let v1 = ThresholdVerifier {
                tpr: 0.6,
                fpr: 0.3,
                fallback: Fallback::Random,
            };
            assert!((best_at_k_threshold(p, &v1, 1).0 - p).abs() < 1e-15);
        }
    }

    #[test]
    fn ceiling_is_reached_and_complement_is_direct() {
        let v = ThresholdVerifier {
            tpr: 0.8,
            fpr: 0.1,
            fallback: Fallback::Abstain,
        };
        let p = 0.3;
        let c = threshold_ceiling(p, &v);
        assert!((c - 0.24 / (0.24 + 0.07)).abs() < 1e-15);
        let (w, l) = best_at_k_threshold(p, &v, 10_000);
        assert!((w - c).abs() < 1e-15 && (l - (1.0 - c)).abs() < 1e-15);
        // A verifier that never errs: the loss is all-rejected, gamma^k, tiny and exact.
        let perfect = ThresholdVerifier {
            tpr: 1.0,
            fpr: 0.0,
            fallback: Fallback::Abstain,
        };
        let (_, l) = best_at_k_threshold(0.5, &perfect, 100);
        assert!((l / 0.5f64.powi(100) - 1.0).abs() < 1e-13, "{l}");
        let never = ThresholdVerifier {
            tpr: 0.0,
            fpr: 0.0,
            fallback: Fallback::Random,
        };
        assert_eq!(threshold_ceiling(0.4, &never), 0.4);
    }

    /// P(the best of c correct scores beats the best of w wrong ones), by a plain trapezoid
    /// rule in x (step 1e-3 over [-14, 14 + d]): c phi(x - d) Phi(x - d)^(c - 1) Phi(x)^w.
    fn correct_on_top(c: u32, w: u32, d: f64) -> f64 {
        use crate::exact::normal::{cdf, pdf};
        if c == 0 {
            return 0.0;
        }
        if w == 0 {
            return 1.0;
        }
        let (lo, hi, h) = (-14.0, 14.0 + d, 1e-3);
        let n = ((hi - lo) / h) as usize;
        let g = |x: f64| {
            f64::from(c) * pdf(x - d) * cdf(x - d).powi(c as i32 - 1) * cdf(x).powi(w as i32)
        };
        let mut acc = 0.5 * (g(lo) + g(lo + n as f64 * h));
        for j in 1..n {
            acc += g(lo + j as f64 * h);
        }
        acc * h
    }

    /// best@k by enumerating how many of the k samples are correct, each count weighted by its
    /// binomial probability and scored by [`correct_on_top`].
    fn score_brute_force(p: f64, d: f64, k: u32) -> f64 {
        (0..=k)
            .map(|c| {
                let choose = (0..c).fold(1.0, |acc, i| acc * f64::from(k - i) / f64::from(i + 1));
                choose
                    * p.powi(c as i32)
                    * (1.0 - p).powi((k - c) as i32)
                    * correct_on_top(c, k - c, d)
            })
            .sum()
    }

    #[test]
    fn score_matches_enumeration() {
        for &d in &[0.5, 1.5, 3.0, -1.0] {
            for &p in &[0.05, 0.3, 0.8] {
                for k in 1..=5u32 {
                    let (w, l) = best_at_k_score(p, d, k);
                    let b = score_brute_force(p, d, k);
                    assert!((w - b).abs() < 1e-9, "p={p} d={d} k={k}: {w} vs {b}");
                    assert!((w + l - 1.0).abs() < 1e-12, "p={p} d={d} k={k}: {w} + {l}");
                }
            }
        }
    }

    #[test]
    fn score_k2_closed_form_and_edges() {
        use crate::exact::normal::cdf;
        for &(p, d) in &[(0.3, 1.5), (0.6, 0.5), (0.1, 3.0)] {
            let want = p * p + 2.0 * p * (1.0 - p) * cdf(d / 2f64.sqrt());
            let (w, _) = best_at_k_score(p, d, 2);
            assert!((w / want - 1.0).abs() < 1e-12, "{w} {want}");
        }
        assert_eq!(best_at_k_score(0.4, 0.0, 64), (0.4, 0.6));
        assert_eq!(best_at_k_score(0.4, 2.0, 1), (0.4, 0.6));
        // Large k with a good verifier: the loss is tiny and computed, win + loss = 1.
        let (w, l) = best_at_k_score(0.5, 4.0, 1024);
        assert!(
            l > 0.0 && l < 1e-6 && (w + l - 1.0).abs() < 1e-12,
            "{w} {l}"
        );
        // A tiny complement keeps its relative accuracy: p near 1, the loss near (1 - p) times
        // the chance a wrong sample tops the correct ones; check win + loss = 1 and l against
        // the same integral at a doubled p-gap scale (monotone in 1 - p).
        let (_, l1) = best_at_k_score(1.0 - 1e-9, 2.0, 8);
        let (_, l2) = best_at_k_score(1.0 - 2e-9, 2.0, 8);
        assert!((l2 / l1 - 2.0).abs() < 1e-6, "{l1} {l2}");
    }
}
