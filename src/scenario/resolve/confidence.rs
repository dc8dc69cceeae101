//! A `confidence` experiment: confidence-filtered maj@k of each model against the kept share.
use super::experiment::ExpCtx;
use super::*;
use crate::exact::confidence::{Filter, MAX_TOP_SHARE_K};
use crate::exact::outcome::{Metric as OutcomeMetric, OutcomeModel};

/// Largest |threshold| of the threshold filter, in SDs of a one-off wrong answer's confidence
/// (the confidence means are within [`MAX_SEPARATION`] of 0).
pub const MAX_THRESHOLD: f64 = 10.0;

impl ExpCtx<'_> {
    /// A list of numbers of key `k`: 1 to [`MAX_LIST`] entries, each passing `ok`, strictly
    /// increasing; `default` when the key is absent.
    fn real_list(
        &self,
        v: &Option<Spanned<Vec<f64>>>,
        k: &str,
        default: &[f64],
        ok: impl Fn(f64) -> bool,
        why: impl Fn(f64) -> String,
    ) -> Res<Vec<f64>> {
        let Some(v) = v else {
            return Ok(default.to_vec());
        };
        self.list_len(v, k, 1, "values")?;
        self.every(v, k, ok, why)?;
        self.strictly_increasing(v, k, "values")?;
        Ok(v.get_ref().clone())
    }

    pub(super) fn confidence(&self) -> Res<ExperimentSpec> {
        let models = self.model_list()?;
        let at = self
            .e
            .models
            .as_ref()
            .map_or(self.span.clone(), Spanned::span);
        for &i in &models {
            let m = &self.models[i];
            let outcome = OutcomeModel::of(m, m.vote_rule);
            if let Some(what) =
                outcome.refuses(OutcomeMetric::FilteredMajAtK(Filter::TopShare(1.0)))
            {
                let msg = if m.confidence.is_none() {
                    format!("model `{}` has no [model.confidence] block (separation, attractor), which a confidence experiment needs; add one or leave the model out of `models`", m.name)
                } else {
                    format!("model `{}` has {what}: the confidence-filtered vote is computed for one attractor share (a number), every answer parsed in one form (unparsed = split = 0), independent samples (run_sd = 0) and a perfect grader; list only such models in `models`", m.name)
                };
                return Err(self.r.err(at, &self.key("models"), msg));
            }
        }
        let k = self.ints(&self.e.k, "k", u64::from(MAX_TOP_SHARE_K), Some(&[16]))?;
        let shares = self.real_list(
            &self.e.shares,
            "shares",
            &[0.125, 0.25, 0.5, 0.75, 1.0],
            |x| x > 0.0 && x <= 1.0,
            |x| format!("{x} is out of range: every kept share must be in (0, 1] (the top share of the k samples that votes)"),
        )?;
        let thresholds = self.real_list(
            &self.e.thresholds,
            "thresholds",
            &[0.0, 0.5, 1.0, 1.5, 2.0],
            |x| x.is_finite() && x.abs() <= MAX_THRESHOLD,
            |x| format!("{x} is out of range: every threshold must be a number of SDs in [-{MAX_THRESHOLD}, {MAX_THRESHOLD}] (samples with a confidence above it vote)"),
        )?;
        let votes = self.count(&self.e.votes, "votes", 4000)?;
        // Every vote draws its k samples one by one, each with its confidence.
        let ksum: u64 = k.iter().map(|&x| u64::from(x)).sum();
        let problems = self.bench.problems as u64;
        let draws = (models.len() as u64)
            .saturating_mul(ksum)
            .saturating_mul(votes)
            .saturating_mul(problems);
        if draws > MAX_TOTAL_VOTES {
            let at = self
                .e
                .votes
                .as_ref()
                .map_or(self.span.clone(), Spanned::span);
            return Err(self.r.err(at, &self.key("votes"), format!("{} model(s) x (sum of k = {ksum}) x {votes} votes x {problems} problems = {draws} simulated samples (each drawn with its confidence): at most {MAX_TOTAL_VOTES} per experiment; lower `votes` or the largest k", models.len())));
        }
        Ok(ExperimentSpec::Confidence {
            models,
            k,
            shares,
            thresholds,
            votes,
            vote_rule: self.vote_rule(),
        })
    }
}
