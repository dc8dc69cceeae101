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

/// What a threshold verifier does when it accepts none of the k samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fallback {
    /// A uniform pick among all k samples.
    #[default]
    Random,
    /// No answer: graded wrong.
    Abstain,
}

/// A verifier that accepts a correct sample with probability `tpr` and a wrong one with `fpr`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ThresholdVerifier {
    /// P(accept | correct), in [0, 1].
    pub tpr: f64,
    /// P(accept | wrong), in [0, 1].
    pub fpr: f64,
    /// The pick when nothing is accepted.
    pub fallback: Fallback,
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
}
