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
//! features a model uses. The one combination that is not computed (per-run noise with anything
//! but the one-attractor, fully parsed, perfectly graded model without a verifier) is named by
//! [`OutcomeModel::unsupported`], which the scenario layer calls to refuse it; what keeps one
//! metric from a model (n@k, the confidence-filtered vote) by [`OutcomeModel::refuses`].
//!
//! May depend on: `model` and the closed forms of this module's siblings.
use rayon::prelude::*;
use serde::Serialize;

use super::confidence::{threshold_maj, top_count, top_share_maj, Filter};
use super::grader::SampleGrading;
use super::maj::{attractor_threshold, maj_at_k_all_with_loss, maj_ceiling};
use super::modes::{
    graded_rate, maj_at_k_modes, maj_ceiling_modes, winning_threshold, AnswerShares, Extraction,
};
use super::pass::{mean, pass_at_k, pass_at_k_complement, pass_hat_k, pass_hat_k_complement};
use super::run_corr;
use super::submit::{submit_at_k, submit_best};
use super::verifier::{best_ceiling, best_pairs, selectable_rate};
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

    /// The model feature that cannot be combined with per-run noise, if this model combines
    /// them: per-run noise is integrated for the canonical model without a verifier and with a
    /// perfect grader. The one place such a model is refused.
    pub fn unsupported(&self) -> Option<&'static str> {
        if self.run_sd == 0.0 {
            None
        } else if self.attractors.len() > 1 {
            Some("a list of attractor shares")
        } else if self.extraction.unparsed != 0.0 {
            Some("unparsed")
        } else if self.extraction.split != 0.0 {
            Some("split")
        } else if self.verifier.is_some() {
            Some("[model.verifier]")
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
    /// own terms. Time: O(N) for pass@k and pass^k, O(k^2 + N k) for maj@k of the canonical model
    /// (see [`crate::exact::modes`] and [`crate::exact::run_corr`] otherwise), best@k as
    /// [`best_pairs`].
    ///
    /// # Panics
    ///
    /// If k = 0, for best@k of a model without a verifier, for a combination
    /// [`OutcomeModel::unsupported`] names, or for a metric [`OutcomeModel::refuses`].
    pub fn value(&self, rates: &[f64], metric: Metric, k: u32) -> Vec<(f64, f64)> {
        assert!(self.unsupported().is_none(), "unsupported outcome model");
        let omega = self.run_sd;
        match metric {
            Metric::PassAtK | Metric::PassHatK if omega > 0.0 => rates
                .iter()
                .map(|&p| match metric {
                    Metric::PassAtK => run_corr::pass_at_k_run(p, omega, k),
                    _ => run_corr::pass_hat_k_run(p, omega, k),
                })
                .collect(),
            Metric::PassAtK => self
                .parsed_rates(rates)
                .map(|r| (pass_at_k(r, k), pass_at_k_complement(r, k)))
                .collect(),
            Metric::PassHatK => self
                .parsed_rates(rates)
                .map(|r| (pass_hat_k(r, k), pass_hat_k_complement(r, k)))
                .collect(),
            Metric::MajAtK if omega > 0.0 => rates
                .iter()
                .map(|&p| run_corr::maj_at_k_run(p, self.attractor(), omega, k, self.rule))
                .collect(),
            // One attractor, all parsed: the conditional win table is shared by every problem.
            Metric::MajAtK if self.is_canonical() => {
                maj_at_k_all_with_loss(rates, self.attractor(), k, self.rule)
            }
            Metric::MajAtK => rates
                .iter()
                .map(|&p| maj_at_k_modes(p, &self.attractors, self.extraction, k, self.rule))
                .collect(),
            Metric::BestAtK => {
                let verifier = self.verifier.as_ref().expect("best@k needs a verifier");
                best_pairs(&self.selectable(rates), verifier, k)
            }
            Metric::SubmitAtK(n) => self.submitted(rates, k, n, None),
            Metric::VerifiedAtK(n) => self.verified(rates, k, n, None),
            Metric::FilteredMajAtK(f) => self.filtered(rates, f, k),
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

    /// n@k by the verifier of every problem ([`submit_best`]) on the selectable rates, in
    /// parallel over problems.
    fn verified(&self, rates: &[f64], k: u32, n: u32, grader: Option<Grader>) -> Vec<(f64, f64)> {
        let verifier = self
            .verifier
            .as_ref()
            .expect("n@k by verifier needs a verifier");
        self.selectable(rates)
            .par_iter()
            .map(|&p| submit_best(p, verifier, k, n, grader))
            .collect()
    }

    /// n@k of every problem by enumeration ([`submit_at_k`]), in parallel over problems.
    fn submitted(&self, rates: &[f64], k: u32, n: u32, grader: Option<Grader>) -> Vec<(f64, f64)> {
        assert!(
            self.refuses(Metric::SubmitAtK(n)).is_none(),
            "unsupported n@k"
        );
        rates
            .par_iter()
            .map(|&p| submit_at_k(&self.shares(p), k, n, grader))
            .collect()
    }

    /// The per-sample answer shares on a problem with rate p.
    pub fn shares(&self, p: f64) -> AnswerShares {
        AnswerShares::new(p, &self.attractors, self.extraction)
    }

    /// The model feature that keeps `metric` from being computed for this model, if any: n@k
    /// is enumerated for at most one repeated wrong answer and independent samples; a
    /// confidence-filtered vote needs a confidence and is computed for the canonical model
    /// (one attractor share, every answer parsed in one form, independent samples, a perfect
    /// grader).
    pub fn refuses(&self, metric: Metric) -> Option<&'static str> {
        let filtered = matches!(metric, Metric::FilteredMajAtK(_));
        match metric {
            Metric::SubmitAtK(_) | Metric::FilteredMajAtK(_) if self.attractors.len() > 1 => {
                Some("a list of attractor shares")
            }
            Metric::SubmitAtK(_) | Metric::FilteredMajAtK(_) if self.run_sd > 0.0 => Some("run_sd"),
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
        let Some(g) = self.grader else {
            return self.value(rates, metric, k);
        };
        let grading = SampleGrading {
            unparsed: self.extraction.unparsed,
            grader: Some(g),
        };
        let sample = |p: f64| grading.rate(p, 1.0 - p);
        match metric {
            Metric::PassAtK => rates
                .iter()
                .map(|&p| {
                    let (r, not_r) = sample(p);
                    // (1 - r)^k from 1 - r itself when r is near 1.
                    let miss = if not_r < 0.5 {
                        not_r.powf(f64::from(k))
                    } else {
                        pass_at_k_complement(r, k)
                    };
                    (pass_at_k(r, k), miss)
                })
                .collect(),
            Metric::PassHatK => rates
                .iter()
                .map(|&p| {
                    let (r, _) = sample(p);
                    (pass_hat_k(r, k), pass_hat_k_complement(r, k))
                })
                .collect(),
            Metric::SubmitAtK(n) => self.submitted(rates, k, n, Some(g)),
            Metric::VerifiedAtK(n) => self.verified(rates, k, n, Some(g)),
            // Refused with a grader: this panics as `value` documents.
            Metric::FilteredMajAtK(_) => self.value(rates, metric, k),
            Metric::MajAtK | Metric::BestAtK => self
                .value(rates, metric, k)
                .into_iter()
                .map(|m| g.selected(m))
                .collect(),
        }
    }

    /// The benchmark's mean per-sample rate before grading: (1 - u) p averaged over problems,
    /// or under per-run noise the mean of each problem's rate over runs. Time: O(N).
    pub fn pass_at_1(&self, rates: &[f64]) -> f64 {
        if self.run_sd > 0.0 {
            let means: Vec<f64> = rates
                .iter()
                .map(|&p| run_corr::run_moments(p, self.run_sd).mean)
                .collect();
            mean(&means)
        } else {
            mean(&self.parsed_rates(rates).collect::<Vec<f64>>())
        }
    }

    /// The rate above which maj@k tends to 1 as k grows, below which to 0.
    pub fn threshold(&self) -> f64 {
        if self.is_canonical() {
            attractor_threshold(self.attractor())
        } else {
            winning_threshold(&self.attractors, self.extraction.split)
        }
    }

    /// The large-k limit of the benchmark's maj@k (under per-run noise the mean chance that a
    /// run's rate lies above the threshold). Time: O(N m), O(N G) with G quadrature nodes under
    /// per-run noise.
    pub fn ceiling(&self, rates: &[f64]) -> f64 {
        if self.run_sd > 0.0 {
            run_corr::maj_ceiling_run(rates, self.attractor(), self.run_sd)
        } else if self.is_canonical() {
            maj_ceiling(rates, self.attractor())
        } else {
            maj_ceiling_modes(rates, &self.attractors, self.extraction, VoteRule::Random)
        }
    }

    /// The large-k limit of the benchmark's best@k as graded, when there is a verifier.
    pub fn best_ceiling(&self, rates: &[f64]) -> Option<f64> {
        let v = self.verifier.as_ref()?;
        Some(best_ceiling(&self.selectable(rates), v, self.grader))
    }

    /// The per-sample rate the verifier selects from: (1 - u) p ([`selectable_rate`]).
    fn selectable(&self, rates: &[f64]) -> Vec<f64> {
        rates
            .iter()
            .map(|&p| selectable_rate(p, self.extraction.unparsed))
            .collect()
    }

    /// The per-sample rate behind pass@k and pass^k: (1 - u) p ([`graded_rate`]).
    fn parsed_rates<'a>(&'a self, rates: &'a [f64]) -> impl Iterator<Item = f64> + 'a {
        rates.iter().map(|&p| graded_rate(p, self.extraction))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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

    #[test]
    fn every_combination_with_run_sd_but_the_canonical_model_is_unsupported() {
        let noisy = OutcomeModel {
            run_sd: 0.5,
            ..canonical()
        };
        assert_eq!(noisy.unsupported(), None);
        let verifier = Verifier::Threshold(ThresholdVerifier {
            tpr: 0.9,
            fpr: 0.1,
            fallback: Fallback::Random,
        });
        let cases = [
            OutcomeModel {
                attractors: vec![0.2, 0.1],
                ..noisy.clone()
            },
            OutcomeModel {
                extraction: Extraction {
                    unparsed: 0.1,
                    split: 0.0,
                },
                ..noisy.clone()
            },
            OutcomeModel {
                extraction: Extraction {
                    unparsed: 0.0,
                    split: 0.2,
                },
                ..noisy.clone()
            },
            OutcomeModel {
                verifier: Some(verifier),
                ..noisy.clone()
            },
            OutcomeModel {
                grader: Some(Grader { fpr: 0.1, fnr: 0.0 }),
                ..noisy.clone()
            },
        ];
        for c in &cases {
            assert!(c.unsupported().is_some(), "{c:?}");
            let independent = OutcomeModel {
                run_sd: 0.0,
                ..c.clone()
            };
            assert_eq!(independent.unsupported(), None);
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
