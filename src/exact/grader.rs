//! Exact metrics as a noisy grader reports them.
//!
//! A grader (an LLM judge, a lenient checker) marks a wrong answer correct with probability
//! `fpr` and a correct one wrong with `fnr`, independently per graded answer. Per-sample metrics
//! grade every sample, so they are the metrics of the graded rate
//! p~ = p (1 - fnr) + (1 - p) fpr: graded pass@k = 1 - (1 - p~)^k, graded pass^k = p~^k.
//! Selection metrics (maj@k, best@k) grade the one chosen answer, so a true value m becomes
//! m (1 - fnr) + (1 - m) fpr, and its complement m fnr + (1 - m) (1 - fpr) (both from their own
//! terms, given m and 1 - m). A false-positive rate lifts graded pass@k towards 1 as k grows
//! whatever p is: (1 - p~)^k <= (1 - fpr)^k. Time: O(1) each.

use crate::exact::pass::{pass_at_k, pass_at_k_complement, pass_hat_k, pass_hat_k_complement};

pub use crate::model::Grader;

impl Grader {
    /// (p~, 1 - p~): the graded per-sample rate and its complement, each from its own terms.
    pub fn graded_rate(&self, p: f64) -> (f64, f64) {
        let q = 1.0 - p;
        (
            p * (1.0 - self.fnr) + q * self.fpr,
            p * self.fnr + q * (1.0 - self.fpr),
        )
    }

    /// (graded pass@k, its complement). Time: O(1).
    pub fn pass_at_k(&self, p: f64, k: u32) -> (f64, f64) {
        let (g, not_g) = self.graded_rate(p);
        // (1 - p~)^k from 1 - p~ itself when p~ is near 1.
        let miss = if not_g < 0.5 {
            not_g.powf(f64::from(k))
        } else {
            pass_at_k_complement(g, k)
        };
        (pass_at_k(g, k), miss)
    }

    /// (graded pass^k, its complement). Time: O(1).
    pub fn pass_hat_k(&self, p: f64, k: u32) -> (f64, f64) {
        let (g, _) = self.graded_rate(p);
        (pass_hat_k(g, k), pass_hat_k_complement(g, k))
    }

    /// A selection metric as graded: (m (1 - fnr) + (1 - m) fpr, m fnr + (1 - m) (1 - fpr)) from
    /// the true (m, 1 - m). Time: O(1).
    pub fn selected(&self, (m, not_m): (f64, f64)) -> (f64, f64) {
        (
            m * (1.0 - self.fnr) + not_m * self.fpr,
            m * self.fnr + not_m * (1.0 - self.fpr),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perfect_grader_changes_nothing() {
        let g = Grader::default();
        for &p in &[0.0, 0.2, 0.9, 1.0] {
            assert_eq!(g.graded_rate(p).0, p);
            assert_eq!(g.pass_at_k(p, 8).0, pass_at_k(p, 8));
            assert_eq!(g.selected((p, 1.0 - p)).0, p);
        }
    }

    #[test]
    fn graded_pass_at_k_matches_enumeration() {
        // Each sample: (true correct, graded correct) with four probabilities.
        let g = Grader {
            fpr: 0.15,
            fnr: 0.2,
        };
        for &p in &[0.0, 0.3, 0.8, 1.0] {
            let probs = [
                p * (1.0 - g.fnr),
                p * g.fnr,
                (1.0 - p) * g.fpr,
                (1.0 - p) * (1.0 - g.fpr),
            ];
            for k in 1..=5u32 {
                let (mut any, mut all) = (0.0, 0.0);
                for code in 0..4u32.pow(k) {
                    let seq: Vec<u32> = (0..k).map(|i| (code >> (2 * i)) & 3).collect();
                    let pr: f64 = seq.iter().map(|&o| probs[o as usize]).product();
                    let graded: Vec<bool> = seq.iter().map(|&o| o == 0 || o == 2).collect();
                    any += pr * f64::from(u8::from(graded.iter().any(|&x| x)));
                    all += pr * f64::from(u8::from(graded.iter().all(|&x| x)));
                }
                let (pa, pa_c) = g.pass_at_k(p, k);
                let (ph, ph_c) = g.pass_hat_k(p, k);
                assert!((pa - any).abs() < 1e-14 && (pa + pa_c - 1.0).abs() < 1e-14);
                assert!((ph - all).abs() < 1e-14 && (ph + ph_c - 1.0).abs() < 1e-14);
            }
        }
    }

    #[test]
    fn false_positives_lift_pass_at_k_towards_one() {
        let g = Grader {
            fpr: 0.05,
            fnr: 0.0,
        };
        let (pa, miss) = g.pass_at_k(0.0, 100);
        let direct = (100.0 * 0.95f64.ln()).exp();
        assert!(
            (miss / direct - 1.0).abs() < 1e-13 && pa > 0.99,
            "{miss} {pa}"
        );
        let (sel, not_sel) = g.selected((0.7, 0.3));
        assert!((sel - (0.7 + 0.3 * 0.05)).abs() < 1e-16 && (not_sel - 0.3 * 0.95).abs() < 1e-16);
    }
}
