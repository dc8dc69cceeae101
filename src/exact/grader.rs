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
use crate::exact::rounded_probability as unit;

pub use crate::model::Grader;

impl Grader {
    /// (p~, 1 - p~): the graded per-sample rate and its complement, each from its own terms.
    pub fn graded_rate(&self, p: f64) -> (f64, f64) {
        let q = 1.0 - p;
        (
            unit(p * (1.0 - self.fnr) + q * self.fpr),
            unit(p * self.fnr + q * (1.0 - self.fpr)),
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
            unit(m * (1.0 - self.fnr) + not_m * self.fpr),
            unit(m * self.fnr + not_m * (1.0 - self.fpr)),
        )
    }
}

/// How one sample's true outcome becomes the outcome a per-sample metric counts: its answer is
/// extracted (`unparsed` share u fails, and a sample with no answer is never graded correct),
/// then graded by a noisy grader when there is one. The graded rate is affine in the true rate:
/// p~ = (1 - u) (p (1 - fnr) + (1 - p) fpr), so means, variances and SDs over problems map
/// through [`SampleGrading::affine`] exactly.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SampleGrading {
    /// Share u of samples with no extractable answer.
    pub unparsed: f64,
    /// The grader, `None` for a perfect one.
    pub grader: Option<Grader>,
}

impl SampleGrading {
    /// The grading of a model's samples (its `unparsed` share and `[model.grader]`).
    pub fn of(model: &crate::model::Model) -> Self {
        SampleGrading {
            unparsed: model.unparsed,
            grader: model.grader,
        }
    }

    /// True when every answer is parsed and graded perfectly (the canonical model, or a
    /// `[model.grader]` with both rates 0): callers then keep their own code path, bit for bit.
    pub fn is_identity(&self) -> bool {
        self.unparsed == 0.0 && self.grader.is_none_or(|g| g.fpr == 0.0 && g.fnr == 0.0)
    }

    /// (p~, 1 - p~) from the true (p, 1 - p), each summed from its own terms:
    /// p~ = (1 - u) (p (1 - fnr) + q fpr), 1 - p~ = u + (1 - u) (p fnr + q (1 - fpr)).
    /// The identity returns (p, q) itself. Time: O(1).
    pub fn rate(&self, p: f64, q: f64) -> (f64, f64) {
        let (g, not_g) = match self.grader {
            Some(gr) => (
                unit(p * (1.0 - gr.fnr) + q * gr.fpr),
                unit(p * gr.fnr + q * (1.0 - gr.fpr)),
            ),
            None => (p, q),
        };
        if self.unparsed == 0.0 {
            (g, not_g)
        } else {
            let u = self.unparsed;
            ((1.0 - u) * g, unit(u + (1.0 - u) * not_g))
        }
    }

    /// (a, b, c) with p~ = a + b p and 1 - p~ = c + b (1 - p): a = (1 - u) fpr,
    /// b = (1 - u)(1 - fpr - fnr) (negative for a grader worse than chance), c = u + (1 - u) fnr.
    /// Time: O(1).
    pub fn affine(&self) -> (f64, f64, f64) {
        let (fpr, fnr) = self.grader.map_or((0.0, 0.0), |g| (g.fpr, g.fnr));
        let kept = 1.0 - self.unparsed;
        (
            kept * fpr,
            kept * (1.0 - fpr - fnr),
            self.unparsed + kept * fnr,
        )
    }

    /// E[p~ (1 - p~)] over problems from the true moments E\[p\], E\[1 - p\] and E[p (1 - p)]:
    /// a c + a b E[1 - p] + c b E\[p\] + b^2 E[p (1 - p)] (no difference of near-equal terms when
    /// a, c >= 0). Time: O(1).
    pub fn mean_pq(&self, mean_p: f64, mean_q: f64, mean_pq: f64) -> f64 {
        let (a, b, c) = self.affine();
        a * c + a * b * mean_q + c * b * mean_p + b * b * mean_pq
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grader_with_fpr_1_graded_a_rate_of_1_0000000000000002() {
        // Callers pass a rate and its complement computed separately (expit(x), expit(-x), or a
        // vote's m and 1 - m from the complement side); with fpr = 1 the graded rate is their sum,
        // which can round to 1 + 2^-52.
        use crate::model::expit;
        let all = Grader { fpr: 1.0, fnr: 0.0 };
        let none = Grader { fpr: 0.0, fnr: 1.0 };
        let mut above = 0;
        for i in 0..=40_000 {
            let x = f64::from(i) / 1000.0 - 20.0;
            let (p, q) = (expit(x), expit(-x));
            above += usize::from(p + q > 1.0);
            for g in [all, none] {
                let (m, n) = g.selected((p, q));
                assert!(
                    (0.0..=1.0).contains(&m) && (0.0..=1.0).contains(&n),
                    "{x}: {m} {n}"
                );
                let grading = SampleGrading {
                    unparsed: 0.1,
                    grader: Some(g),
                };
                let (r, s) = grading.rate(p, q);
                assert!(
                    (0.0..=1.0).contains(&r) && (0.0..=1.0).contains(&s),
                    "{x}: {r} {s}"
                );
                let (r, s) = g.graded_rate(p);
                assert!(
                    (0.0..=1.0).contains(&r) && (0.0..=1.0).contains(&s),
                    "{x}: {r} {s}"
                );
            }
        }
        assert!(
            above > 0,
            "no pair tried summed above 1, so the test shows nothing"
        );
    }

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

    #[test]
    fn sample_grading_matches_enumeration_of_parse_and_grade() {
        // Each sample: unparsed (never graded correct), or parsed and correct / wrong, then graded.
        let g = SampleGrading {
            unparsed: 0.2,
            grader: Some(Grader {
                fpr: 0.1,
                fnr: 0.25,
            }),
        };
        for &p in &[0.0, 0.35, 0.9, 1.0] {
            let q = 1.0 - p;
            let outcomes = [
                (g.unparsed, false),
                ((1.0 - g.unparsed) * p * 0.75, true),
                ((1.0 - g.unparsed) * p * 0.25, false),
                ((1.0 - g.unparsed) * q * 0.1, true),
                ((1.0 - g.unparsed) * q * 0.9, false),
            ];
            let graded: f64 = outcomes.iter().filter(|o| o.1).map(|o| o.0).sum();
            let (r, not_r) = g.rate(p, q);
            let (a, b, c) = g.affine();
            assert!((r - graded).abs() < 1e-15 && (r + not_r - 1.0).abs() < 1e-15);
            assert!((a + b * p - r).abs() < 1e-15 && (c + b * q - not_r).abs() < 1e-15);
        }
        // E[p~ q~] over a two-point population against the direct mean.
        let pop = [0.3, 0.8];
        let direct: f64 = pop
            .iter()
            .map(|&p| {
                let (r, nr) = g.rate(p, 1.0 - p);
                r * nr
            })
            .sum::<f64>()
            / 2.0;
        let (mp, mq) = (0.55, 0.45);
        let mpq = (0.3 * 0.7 + 0.8 * 0.2) / 2.0;
        assert!((g.mean_pq(mp, mq, mpq) - direct).abs() < 1e-15);
        let id = SampleGrading::default();
        assert!(id.is_identity() && id.rate(0.3, 0.7) == (0.3, 0.7));
    }
}
