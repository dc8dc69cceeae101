//! The outcome model: what one sample of a model on one problem can be, and the exact value of
//! every per-problem metric of `curves` computed from it, each with its complement.
//!
//! One sample is the correct answer (in its main or alternate written form: `split`), one of the
//! repeated wrong answers (`attractors`, shares of the wrong mass), no answer at all
//! (`unparsed`) or a one-off wrong answer. On top of that: the per-run noise that the samples of
//! one run share (`run_sd`), the verifier that picks one of k samples (best@k), and the grader
//! that marks what the harness prints. An [`OutcomeModel`] holds everything of a model that is
//! the same on every problem; with a problem's solve rate p it is that (model, problem)'s outcome
//! distribution.
//!
//! Why it exists: experiments ask an outcome model for a metric and never branch on which
//! features a model uses. Per-run noise is one layer over everything else: given the run's
//! offset the samples are independent at rate p(eta), so each metric's value is the
//! expectation over eta of its noise-free per-problem value ([`run_corr::expect_pair`]), for
//! every combination of features but a score verifier ([`OutcomeModel::unsupported`], refused
//! for its cost). What keeps one metric from a model (n@k with several
//! attractors, the confidence-filtered vote outside the canonical model) is named by
//! [`OutcomeModel::refuses`]; what keeps a rerun's count distribution under per-run noise from
//! a model (unparsed answers, a grader) by [`OutcomeModel::rerun_unsupported`].
//!
//! May depend on: `model` and the closed forms of this module's siblings.
use rayon::prelude::*;
use serde::Serialize;

use super::confidence::{threshold_maj, top_count, top_share_maj, Filter};
use super::grader::SampleGrading;
use super::maj::{attractor_threshold, conditional_win_loss, maj_ceiling, win_loss_pq};
use super::modes::{
    graded_rate, maj_at_k_modes, maj_ceiling_modes, winning_threshold, AnswerShares, Extraction,
};
use super::pass::{
    mean, pass_at_k, pass_at_k_complement, pass_at_k_pq, pass_hat_k, pass_hat_k_complement,
    pass_hat_k_pq,
};
use super::run_corr;
use super::submit::{submit_at_k, submit_best};
use super::verifier::{best_ceiling_of, best_pair, selectable_rate};
use crate::model::{Confidence, Grader, Model, Verifier, VoteRule};

/// Which metric of k samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Metric {
    /// At least one of k samples right.
    PassAtK,
    /// All k samples right.
    PassHatK,
    /// Majority vote of k samples right.
    MajAtK,
    /// The verifier's pick of k samples right (models with a `[model.verifier]`).
    BestAtK,
    /// n@k: one of the n largest answer clusters of k samples right ([`crate::exact::submit`]).
    SubmitAtK(u32),
    /// n@k by the verifier: one of the n samples it ranks first right (models with a
    /// `[model.verifier]`; n = 1 is best@k).
    VerifiedAtK(u32),
    /// maj@k among the samples a confidence filter keeps (models with a `[model.confidence]`;
    /// [`crate::exact::confidence`]).
    FilteredMajAtK(Filter),
}

impl Metric {
    /// The name used in tables, checks and legends: `pass@k`, `pass^k`, `maj@k`, `best@k`, or
    /// `3@k` for n@k with n = 3.
    pub fn name(self) -> String {
        match self {
            Metric::PassAtK => "pass@k".into(),
            Metric::PassHatK => "pass^k".into(),
            Metric::MajAtK => "maj@k".into(),
            Metric::BestAtK => "best@k".into(),
            Metric::SubmitAtK(n) => format!("{n}@k"),
            Metric::VerifiedAtK(n) => format!("{n}@k by verifier"),
            Metric::FilteredMajAtK(f) => format!("maj@k {}", f.name()),
        }
    }
}

impl Serialize for Metric {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.name())
    }
}

/// Everything of one model's samples that is the same on every problem: with a problem's rate
/// p it is the distribution of one sample's outcome on that problem.
#[derive(Debug, Clone, PartialEq)]
pub struct OutcomeModel {
    /// Each repeated wrong answer's share of the wrong mass (empty: every wrong answer a
    /// one-off).
    pub attractors: Vec<f64>,
    /// Shares with no extractable answer and in the alternate correct form.
    pub extraction: Extraction,
    /// Per-run logit SD omega shared by the samples of one run (0: independent samples).
    pub run_sd: f64,
    /// How a majority vote's ties are scored.
    pub rule: VoteRule,
    /// The noisy grader, `None` for a perfect one.
    pub grader: Option<Grader>,
    /// The best-of-k selector, if any.
    pub verifier: Option<Verifier>,
    /// Each sample's confidence, if the model has one (confidence-filtered votes).
    pub confidence: Option<Confidence>,
}

impl OutcomeModel {
    /// A model's outcome model with its vote rule replaced by `rule`.
    pub fn of(model: &Model, rule: VoteRule) -> Self {
        OutcomeModel {
            attractors: model.attractors.clone(),
            extraction: Extraction {
                unparsed: model.unparsed,
                split: model.split,
            },
            run_sd: model.run_sd,
            rule,
            grader: model.grader,
            verifier: model.verifier,
            confidence: model.confidence,
        }
    }

    /// The first attractor share (0 when there is none): the share of the one-attractor model.
    pub fn attractor(&self) -> f64 {
        self.attractors.first().copied().unwrap_or(0.0)
    }

    /// At most one attractor and every answer parsed in one form: the vote is a function of the
    /// correct and attractor counts alone.
    pub fn is_canonical(&self) -> bool {
        self.attractors.len() <= 1 && self.extraction == Extraction::default()
    }

    /// The model feature that per-run noise is not combined with, if this model combines them:
    /// a score verifier, whose best@k and n@k are each an adaptive integral of their own; under
    /// the run-noise layer the nested integrals took about 700 times the CPU time of the same
    /// curves without noise (167 s against 0.24 s for 20 problems at the default k). The one
    /// place such a model is refused; a threshold verifier combines.
    pub fn unsupported(&self) -> Option<&'static str> {
        let score = matches!(self.verifier, Some(Verifier::Score { .. }));
        (self.run_sd > 0.0 && score).then_some("a score [model.verifier]")
    }

    /// The model feature that the count distribution of one rerun under per-run noise
    /// (`seed-variance`, `head-to-head`) does not combine with, if this model combines them:
    /// those experiments integrate the run's offset for the true rate, with every answer parsed
    /// and a perfect grader. The one place such a model is refused (per-sample metrics of k
    /// samples combine per-run noise with every feature, by [`OutcomeModel::value`]).
    pub fn rerun_unsupported(&self) -> Option<&'static str> {
        if self.run_sd == 0.0 {
            None
        } else if self.extraction.unparsed != 0.0 {
            Some("unparsed")
        } else if self.grader.is_some() {
            Some("[model.grader]")
        } else {
            None
        }
    }

    /// The metrics this model has among `asked`, in that order (best@k and n@k by verifier only
    /// with a verifier), followed by best@k when it has a verifier and best@k was not asked for.
    pub fn metrics(&self, asked: &[Metric]) -> Vec<Metric> {
        let mut out: Vec<Metric> = asked
            .iter()
            .copied()
            .filter(|&m| {
                !matches!(m, Metric::BestAtK | Metric::VerifiedAtK(_)) || self.verifier.is_some()
            })
            .collect();
        if self.verifier.is_some() && !out.contains(&Metric::BestAtK) {
            out.push(Metric::BestAtK);
        }
        out
    }

    /// Each problem's true (value, 1 - value) of `metric` at k, the complement computed from its
    /// own terms: the noise-free value of one problem (`OutcomeModel::kernel`) under the
    /// per-run noise layer ([`run_corr::expect_pair`], the value itself when run_sd = 0). Time:
    /// O(N) for pass@k and pass^k, O(k^2 + N k) for maj@k of the canonical model (see
    /// [`crate::exact::modes`] otherwise), best@k as [`crate::exact::verifier::best_pair`]; times
    /// the quadrature's nodes (192, or 1,140 and more) under per-run noise.
    ///
    /// # Panics
    ///
    /// If k = 0, for best@k of a model without a verifier, for a model
    /// [`OutcomeModel::unsupported`] names, or for a metric [`OutcomeModel::refuses`].
    pub fn value(&self, rates: &[f64], metric: Metric, k: u32) -> Vec<(f64, f64)> {
        assert!(self.unsupported().is_none(), "unsupported outcome model");
        match metric {
            Metric::FilteredMajAtK(f) => self.filtered(rates, f, k),
            _ => self.layer(rates, &*self.kernel(metric, k, None), k),
        }
    }

    /// Every problem's (value, complement) of a per-problem kernel f(p, 1 - p) of degree k in p,
    /// under this model's per-run noise: E[f(p(eta), 1 - p(eta))] ([`run_corr::expect_pair`]),
    /// f(p, 1 - p) itself when run_sd = 0. In parallel over problems.
    fn layer(
        &self,
        rates: &[f64],
        f: &(dyn Fn(f64, f64) -> (f64, f64) + Sync),
        k: u32,
    ) -> Vec<(f64, f64)> {
        rates
            .par_iter()
            .map(|&p| run_corr::expect_pair(p, self.run_sd, k, f))
            .collect()
    }

    /// The noise-free (value, 1 - value) of `metric` at k of one problem as a function of its
    /// rate p and q = 1 - p, given separately (under per-run noise both come from the logit, so
    /// the pass@k and pass^k complements and the canonical vote keep their relative accuracy);
    /// as marked by `grader` when one is given. What every problem shares (the vote's win table)
    /// is computed once, here. With q = 1 - p each is the closed form of its module bit for bit.
    ///
    /// # Panics
    ///
    /// For a filtered vote (computed by [`OutcomeModel::filtered`]), best@k or n@k by verifier
    /// without a verifier.
    fn kernel(&self, metric: Metric, k: u32, grader: Option<Grader>) -> Kernel<'_> {
        if let Some(g) = grader {
            return self.graded_kernel(metric, k, g);
        }
        let u = self.extraction.unparsed;
        let verifier = || *self.verifier.as_ref().expect("best@k needs a verifier");
        match metric {
            Metric::PassAtK | Metric::PassHatK => {
                let pair = if metric == Metric::PassAtK {
                    pass_at_k_pq
                } else {
                    pass_hat_k_pq
                };
                // With unparsed answers a sample is correct with r = (1 - u) p and misses
                // with u + (1 - u) q, summed from its own terms (1 - r would lose q's digits
                // when u is tiny and p near 1).
                let parsed = SampleGrading {
                    unparsed: u,
                    grader: None,
                };
                Box::new(move |p, q| {
                    let (r, not_r) = parsed.rate(p, q);
                    pair(r, not_r, k)
                })
            }
            // One attractor, all parsed: the conditional win table is shared by every problem.
            Metric::MajAtK if self.is_canonical() => {
                let (w, l) = conditional_win_loss(k, self.attractor(), self.rule);
                Box::new(move |p, q| win_loss_pq(k, p, q, &w, &l))
            }
            Metric::MajAtK => Box::new(move |p, _| {
                maj_at_k_modes(p, &self.attractors, self.extraction, k, self.rule)
            }),
            Metric::BestAtK => {
                let v = verifier();
                Box::new(move |p, _| best_pair(selectable_rate(p, u), &v, k))
            }
            Metric::SubmitAtK(n) => {
                assert!(self.refuses(metric).is_none(), "unsupported n@k");
                Box::new(move |p, _| submit_at_k(&self.shares(p), k, n, None))
            }
            Metric::VerifiedAtK(n) => {
                let v = verifier();
                Box::new(move |p, _| submit_best(selectable_rate(p, u), &v, k, n, None))
            }
            Metric::FilteredMajAtK(_) => unreachable!("filtered votes are computed per benchmark"),
        }
    }

    /// [`OutcomeModel::kernel`] as the grader g marks it: per-sample metrics of the graded rate
    /// (an unparsed sample is never graded correct), maj@k and best@k the one answer they pick
    /// graded once, n@k each submission graded.
    fn graded_kernel(&self, metric: Metric, k: u32, g: Grader) -> Kernel<'_> {
        let grading = SampleGrading {
            unparsed: self.extraction.unparsed,
            grader: Some(g),
        };
        let u = self.extraction.unparsed;
        match metric {
            Metric::PassAtK => Box::new(move |p, q| {
                let (r, not_r) = grading.rate(p, q);
                // (1 - r)^k from 1 - r itself when r is near 1.
                let miss = if not_r < 0.5 {
                    not_r.powf(f64::from(k))
                } else {
                    pass_at_k_complement(r, k)
                };
                (pass_at_k(r, k), miss)
            }),
            Metric::PassHatK => Box::new(move |p, q| {
                let (r, _) = grading.rate(p, q);
                (pass_hat_k(r, k), pass_hat_k_complement(r, k))
            }),
            Metric::SubmitAtK(n) => {
                assert!(self.refuses(metric).is_none(), "unsupported n@k");
                Box::new(move |p, _| submit_at_k(&self.shares(p), k, n, Some(g)))
            }
            Metric::VerifiedAtK(n) => {
                let v = *self
                    .verifier
                    .as_ref()
                    .expect("n@k by verifier needs a verifier");
                Box::new(move |p, _| submit_best(selectable_rate(p, u), &v, k, n, Some(g)))
            }
            Metric::MajAtK | Metric::BestAtK => {
                let truth = self.kernel(metric, k, None);
                Box::new(move |p, q| g.selected(truth(p, q)))
            }
            Metric::FilteredMajAtK(_) => unreachable!("filtered votes are computed per benchmark"),
        }
    }

    /// Confidence-filtered maj@k of every problem: the threshold filter's sum over the kept
    /// count ([`threshold_maj`]), the top-share filter's integral ([`top_share_maj`], in
    /// parallel over problems).
    fn filtered(&self, rates: &[f64], filter: Filter, k: u32) -> Vec<(f64, f64)> {
        assert!(
            self.refuses(Metric::FilteredMajAtK(filter)).is_none(),
            "unsupported filtered maj@k"
        );
        let c = self.confidence.expect("checked by refuses");
        let a = self.attractor();
        match filter {
            Filter::Threshold(t) => threshold_maj(rates, a, c, t, k, self.rule),
            Filter::TopShare(s) => {
                let m = top_count(s, k);
                rates
                    .par_iter()
                    .map(|&p| top_share_maj(p, a, c, m, k, self.rule))
                    .collect()
            }
        }
    }

    /// Each problem's (r, 1 - r): the chance that one sample passes the confidence threshold t
    /// ([`crate::exact::confidence::kept_share`]), for a model with a confidence.
    ///
    /// # Panics
    ///
    /// Without a `[model.confidence]`.
    pub fn kept_share(&self, rates: &[f64], t: f64) -> Vec<(f64, f64)> {
        let c = self.confidence.expect("kept share needs a confidence");
        rates
            .iter()
            .map(|&p| super::confidence::kept_share(p, self.attractor(), c, t))
            .collect()
    }

    /// The per-sample answer shares on a problem with rate p.
    pub fn shares(&self, p: f64) -> AnswerShares {
        AnswerShares::new(p, &self.attractors, self.extraction)
    }

    /// The model feature that keeps `metric` from being computed for this model, if any: n@k
    /// is enumerated for at most one repeated wrong answer; a
    /// confidence-filtered vote needs a confidence and is computed for the canonical model
    /// (one attractor share, every answer parsed in one form, independent samples, a perfect
    /// grader).
    pub fn refuses(&self, metric: Metric) -> Option<&'static str> {
        let filtered = matches!(metric, Metric::FilteredMajAtK(_));
        match metric {
            Metric::SubmitAtK(_) | Metric::FilteredMajAtK(_) if self.attractors.len() > 1 => {
                Some("a list of attractor shares")
            }
            Metric::FilteredMajAtK(_) if self.run_sd > 0.0 => Some("run_sd"),
            _ if filtered && self.confidence.is_none() => Some("no [model.confidence]"),
            _ if filtered && self.extraction.unparsed != 0.0 => Some("unparsed"),
            _ if filtered && self.extraction.split != 0.0 => Some("split"),
            _ if filtered && self.grader.is_some() => Some("[model.grader]"),
            _ => None,
        }
    }

    /// Each problem's (value, 1 - value) of `metric` at k as the grader marks it: what a harness
    /// prints. Per-sample metrics are those of the graded rate (an unparsed sample is never
    /// graded correct); maj@k and best@k grade the one answer they pick. Without a grader this
    /// is [`OutcomeModel::value`]. Time: that of [`OutcomeModel::value`].
    ///
    /// # Panics
    ///
    /// As [`OutcomeModel::value`].
    pub fn graded(&self, rates: &[f64], metric: Metric, k: u32) -> Vec<(f64, f64)> {
        match (self.grader, metric) {
            // Refused with a grader: this panics as `value` documents.
            (None, _) | (_, Metric::FilteredMajAtK(_)) => self.value(rates, metric, k),
            (Some(_), _) => self.layer(rates, &*self.kernel(metric, k, self.grader), k),
        }
    }

    /// The benchmark's mean per-sample rate before grading: (1 - u) p averaged over problems,
    /// under per-run noise each problem's mean over runs. Time: O(N), O(N G) with G quadrature
    /// nodes under per-run noise.
    pub fn pass_at_1(&self, rates: &[f64]) -> f64 {
        let u = self.extraction.unparsed;
        let means: Vec<f64> = rates
            .iter()
            .map(|&p| {
                let parsed = |p: f64, q: f64| (graded_rate(p, self.extraction), u + (1.0 - u) * q);
                run_corr::expect_pair(p, self.run_sd, 1, parsed).0
            })
            .collect();
        mean(&means)
    }

    /// The rate above which maj@k tends to 1 as k grows, below which to 0.
    pub fn threshold(&self) -> f64 {
        if self.is_canonical() {
            attractor_threshold(self.attractor())
        } else {
            winning_threshold(&self.attractors, self.extraction.split)
        }
    }

    /// The large-k limit of the benchmark's maj@k: under per-run noise the mean chance that a
    /// run's rate lies above [`OutcomeModel::threshold`] (the limit is a step in the rate, so
    /// its expectation over the run's offset is a normal cdf). Time: O(N m).
    pub fn ceiling(&self, rates: &[f64]) -> f64 {
        if self.run_sd > 0.0 {
            run_corr::maj_ceiling_run(rates, self.threshold(), self.run_sd)
        } else if self.is_canonical() {
            maj_ceiling(rates, self.attractor())
        } else {
            maj_ceiling_modes(rates, &self.attractors, self.extraction, VoteRule::Random)
        }
    }

    /// The large-k limit of the benchmark's best@k as graded, when there is a verifier: the
    /// mean over problems of each one's limit, under per-run noise its expectation over runs.
    pub fn best_ceiling(&self, rates: &[f64]) -> Option<f64> {
        let v = self.verifier.as_ref()?;
        let u = self.extraction.unparsed;
        let per: Vec<f64> = rates
            .iter()
            .map(|&p| {
                let limit = |p: f64, _| {
                    let c = best_ceiling_of(selectable_rate(p, u), v, self.grader);
                    (c, 1.0 - c)
                };
                run_corr::expect_pair(p, self.run_sd, u32::MAX, limit).0
            })
            .collect();
        Some(mean(&per))
    }
}

/// A per-problem kernel of [`OutcomeModel::value`]: (value, 1 - value) from (p, 1 - p).
type Kernel<'a> = Box<dyn Fn(f64, f64) -> (f64, f64) + Sync + 'a>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::maj::maj_at_k_all_with_loss;
    use crate::model::{Fallback, ThresholdVerifier};

    fn canonical() -> OutcomeModel {
        OutcomeModel {
            attractors: vec![0.4],
            extraction: Extraction::default(),
            run_sd: 0.0,
            rule: VoteRule::Random,
            grader: None,
            verifier: None,
            confidence: None,
        }
    }

    /// With unparsed answers the pass@k kernel took the parsed rate's complement as 1 - r, which
    /// under per-run noise (where q comes from the logit, not from 1 - p) threw away q's digits
    /// when u is tiny and p near 1: at u = 1e-300, q = 1e-12 it was off by 9e-5 relative.
    #[test]
    fn a_tiny_unparsed_share_took_the_pass_complement_as_one_minus_the_rate() {
        let mut o = canonical();
        o.extraction.unparsed = 1e-300;
        let q = 1e-12;
        let p = 1.0 - q;
        for metric in [Metric::PassAtK, Metric::PassHatK] {
            let f = o.kernel(metric, 1, None);
            let (value, miss) = f(p, q);
            assert_eq!(value, (1.0 - 1e-300) * p, "{metric:?}");
            assert!(
                (miss - q).abs() <= 1e-12 * q,
                "{metric:?}: {miss:e} is not {q:e}"
            );
        }
    }

    #[test]
    fn the_canonical_model_is_the_closed_forms_bit_for_bit() {
        let rates = [0.0, 0.05, 0.3, 0.5, 0.9, 1.0];
        let o = canonical();
        for k in [1, 2, 5, 16] {
            let pass: Vec<(f64, f64)> = rates
                .iter()
                .map(|&p| (pass_at_k(p, k), pass_at_k_complement(p, k)))
                .collect();
            assert_eq!(o.value(&rates, Metric::PassAtK, k), pass);
            assert_eq!(
                o.value(&rates, Metric::MajAtK, k),
                maj_at_k_all_with_loss(&rates, 0.4, k, VoteRule::Random)
            );
        }
    }

    #[test]
    fn graded_values_match_the_grader_closed_forms() {
        let g = Grader {
            fpr: 0.05,
            fnr: 0.1,
        };
        let o = OutcomeModel {
            grader: Some(g),
            ..canonical()
        };
        let rates = [0.02, 0.5, 0.97];
        for k in [1, 4, 9] {
            let pass: Vec<(f64, f64)> = rates.iter().map(|&p| g.pass_at_k(p, k)).collect();
            assert_eq!(o.graded(&rates, Metric::PassAtK, k), pass);
            let hat: Vec<(f64, f64)> = rates.iter().map(|&p| g.pass_hat_k(p, k)).collect();
            assert_eq!(o.graded(&rates, Metric::PassHatK, k), hat);
            let maj: Vec<(f64, f64)> = maj_at_k_all_with_loss(&rates, 0.4, k, VoteRule::Random)
                .into_iter()
                .map(|m| g.selected(m))
                .collect();
            assert_eq!(o.graded(&rates, Metric::MajAtK, k), maj);
        }
    }

    fn threshold_verifier() -> Verifier {
        Verifier::Threshold(ThresholdVerifier {
            tpr: 0.9,
            fpr: 0.1,
            fallback: Fallback::Random,
        })
    }

    /// Every feature that combines, one at a time and all at once (without run noise).
    fn featured() -> Vec<(&'static str, OutcomeModel)> {
        let grader = Some(Grader {
            fpr: 0.05,
            fnr: 0.1,
        });
        let extraction = Extraction {
            unparsed: 0.1,
            split: 0.2,
        };
        vec![
            ("canonical", canonical()),
            (
                "attractor list",
                OutcomeModel {
                    attractors: vec![0.3, 0.2],
                    ..canonical()
                },
            ),
            (
                "unparsed",
                OutcomeModel {
                    extraction: Extraction {
                        unparsed: 0.15,
                        split: 0.0,
                    },
                    ..canonical()
                },
            ),
            (
                "split",
                OutcomeModel {
                    extraction: Extraction {
                        unparsed: 0.0,
                        split: 0.3,
                    },
                    ..canonical()
                },
            ),
            (
                "threshold verifier",
                OutcomeModel {
                    verifier: Some(threshold_verifier()),
                    ..canonical()
                },
            ),
            (
                "score verifier",
                OutcomeModel {
                    verifier: Some(Verifier::Score { separation: 1.2 }),
                    ..canonical()
                },
            ),
            (
                "grader",
                OutcomeModel {
                    grader,
                    ..canonical()
                },
            ),
            (
                "everything",
                OutcomeModel {
                    attractors: vec![0.3, 0.2],
                    extraction,
                    rule: VoteRule::Strict,
                    grader,
                    verifier: Some(threshold_verifier()),
                    ..canonical()
                },
            ),
        ]
    }

    /// E[f(Z)] of a pair by composite Simpson on |z| <= 13 with 2^10 panels: the reference (for
    /// integrands analytic in z the composite rule is accurate to rounding at this step).
    fn simpson_pair(f: impl Fn(f64) -> (f64, f64)) -> (f64, f64) {
        let m = 1usize << 10;
        let (lo, hi) = (-13.0f64, 13.0f64);
        let h = (hi - lo) / m as f64;
        let (mut v, mut c) = (0.0, 0.0);
        for j in 0..=m {
            let z = lo + j as f64 * h;
            let w = if j == 0 || j == m {
                1.0
            } else if j % 2 == 1 {
                4.0
            } else {
                2.0
            } * (-0.5 * z * z).exp();
            let (a, b) = f(z);
            v += w * a;
            c += w * b;
        }
        let norm = h / 3.0 / (2.0 * std::f64::consts::PI).sqrt();
        (v * norm, c * norm)
    }

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / b.abs().max(1e-300)
    }

    /// Per-run noise is one layer over every feature: each metric's value and complement, true
    /// and graded, are the expectation over the run's offset of the noise-free model's, within
    /// 1e-12 relative of brute-force Simpson, at k where Gauss–Hermite is used (k <= 4,
    /// omega <= 2) and where the adaptive rule is.
    #[test]
    fn run_sd_combines_with_every_feature_as_the_expectation_of_the_noise_free_value() {
        let metrics = [
            Metric::PassAtK,
            Metric::PassHatK,
            Metric::MajAtK,
            Metric::BestAtK,
            Metric::SubmitAtK(2),
            Metric::VerifiedAtK(2),
        ];
        for (name, free) in featured()
            .into_iter()
            .filter(|(n, _)| *n != "score verifier")
        {
            for &(p, omega, k) in &[
                (0.3, 2.0, 3u32),
                (0.8, 1.0, 4),
                (0.05, 1.5, 7),
                (0.6, 3.0, 5),
            ] {
                let noisy = OutcomeModel {
                    run_sd: omega,
                    ..free.clone()
                };
                let x0 = crate::model::logit(p);
                for metric in free.metrics(&metrics) {
                    if free.refuses(metric).is_some() {
                        continue;
                    }
                    // Without a grader the graded value is the true one.
                    for graded in [false, free.grader.is_some()] {
                        let of = |o: &OutcomeModel, rates: &[f64]| {
                            if graded {
                                o.graded(rates, metric, k)
                            } else {
                                o.value(rates, metric, k)
                            }
                        };
                        let (v, c) = of(&noisy, &[p])[0];
                        let (bv, bc) =
                            simpson_pair(|z| of(&free, &[crate::model::expit(x0 + omega * z)])[0]);
                        let what = format!(
                            "{name} {} graded {graded} p {p} omega {omega} k {k}",
                            metric.name()
                        );
                        assert!(rel(v, bv) < 1e-12, "{what}: value {v} vs {bv}");
                        assert!(rel(c, bc) < 1e-12, "{what}: complement {c} vs {bc}");
                    }
                }
            }
        }
    }

    #[test]
    fn run_sd_with_a_score_verifier_is_the_one_unsupported_combination() {
        for (name, free) in featured() {
            let noisy = OutcomeModel {
                run_sd: 0.5,
                ..free.clone()
            };
            assert_eq!(free.unsupported(), None);
            let expected = (name == "score verifier").then_some("a score [model.verifier]");
            assert_eq!(noisy.unsupported(), expected, "{name}");
        }
    }

    #[test]
    fn only_unparsed_and_a_grader_keep_run_sd_from_a_reruns_count_distribution() {
        for (name, free) in featured() {
            let noisy = OutcomeModel {
                run_sd: 0.5,
                ..free.clone()
            };
            assert_eq!(free.rerun_unsupported(), None);
            let expected = if free.extraction.unparsed != 0.0 {
                Some("unparsed")
            } else if free.grader.is_some() {
                Some("[model.grader]")
            } else {
                None
            };
            assert_eq!(noisy.rerun_unsupported(), expected, "{name}");
        }
    }

    /// The limits of maj@k and best@k under per-run noise: the expectation over runs of the
    /// noise-free limit (a step at the threshold for maj@k, Phi in closed form).
    #[test]
    fn run_sd_ceilings_are_the_expectation_of_the_noise_free_ceilings() {
        for (name, free) in featured()
            .into_iter()
            .filter(|(n, _)| *n != "score verifier")
        {
            let noisy = OutcomeModel {
                run_sd: 1.3,
                ..free.clone()
            };
            for p in [0.1, 0.45, 0.9] {
                let x0 = crate::model::logit(p);
                let at = |z: f64| [crate::model::expit(x0 + 1.3 * z)];
                let (bv, _) = simpson_pair(|z| (free.pass_at_1(&at(z)), 0.0));
                assert!(rel(noisy.pass_at_1(&[p]), bv) < 1e-12, "{name} pass@1 {p}");
                if let Some(c) = noisy.best_ceiling(&[p]) {
                    let (bv, _) = simpson_pair(|z| (free.best_ceiling(&at(z)).unwrap(), 0.0));
                    assert!(rel(c, bv) < 1e-9, "{name} best ceiling {p}: {c} vs {bv}");
                }
                // The step's expectation: Simpson of a step converges slowly, so the
                // reference is the share of a fine grid of quantiles above the threshold.
                let m = 200_000;
                let normal = statrs::distribution::Normal::standard();
                use statrs::distribution::ContinuousCDF;
                let above = (0..m)
                    .filter(|&j| {
                        let z = normal.inverse_cdf((j as f64 + 0.5) / m as f64);
                        free.ceiling(&at(z)) > 0.5
                    })
                    .count() as f64
                    / m as f64;
                let c = noisy.ceiling(&[p]);
                assert!(
                    (c - above).abs() < 1e-5,
                    "{name} ceiling {p}: {c} vs {above}"
                );
            }
        }
    }

    #[test]
    fn a_top_share_of_one_is_maj_at_k_bit_for_bit_and_filters_are_refused_outside_the_canonical_model(
    ) {
        let o = OutcomeModel {
            confidence: Some(Confidence {
                separation: 1.0,
                attractor: 2.0,
            }),
            ..canonical()
        };
        let rates = [0.05, 0.5, 0.95];
        let top = Metric::FilteredMajAtK(Filter::TopShare(1.0));
        for k in [1, 7, 16] {
            assert_eq!(o.value(&rates, top, k), o.value(&rates, Metric::MajAtK, k));
        }
        assert_eq!(canonical().refuses(top), Some("no [model.confidence]"));
        let graded = OutcomeModel {
            grader: Some(Grader { fpr: 0.1, fnr: 0.0 }),
            ..o.clone()
        };
        assert_eq!(graded.refuses(top), Some("[model.grader]"));
        let several = OutcomeModel {
            attractors: vec![0.2, 0.1],
            ..o.clone()
        };
        assert_eq!(several.refuses(top), Some("a list of attractor shares"));
        assert_eq!(o.refuses(top), None);
    }

    #[test]
    fn best_at_k_is_listed_once_and_only_with_a_verifier() {
        let asked = [Metric::PassAtK, Metric::MajAtK];
        assert_eq!(canonical().metrics(&asked), asked.to_vec());
        let with = OutcomeModel {
            verifier: Some(Verifier::Score { separation: 1.0 }),
            ..canonical()
        };
        assert_eq!(
            with.metrics(&asked),
            vec![Metric::PassAtK, Metric::MajAtK, Metric::BestAtK]
        );
        assert_eq!(
            with.metrics(&[Metric::BestAtK, Metric::PassAtK]),
            vec![Metric::BestAtK, Metric::PassAtK]
        );
    }
}
