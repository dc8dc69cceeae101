//! A `confidence` experiment: confidence-filtered maj@k of each model against the kept share.
use super::experiment::ExpCtx;
use super::*;
use crate::exact::confidence::Filter;
use crate::exact::outcome::{Metric as OutcomeMetric, OutcomeModel};
use crate::scenario::spec::ConfidenceSpec;

impl ExpCtx<'_> {
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
        let k = self.ints(&self.e.k, "k", Some(&[16]))?;
        let shares = self.list_or(
            &self.e.shares,
            "shares",
            Some(&[0.125, 0.25, 0.5, 0.75, 1.0]),
        )?;
        let thresholds = self.list_or(
            &self.e.thresholds,
            "thresholds",
            Some(&[0.0, 0.5, 1.0, 1.5, 2.0]),
        )?;
        let votes = self.value_or(&self.e.votes, "votes", 4000)?;
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
        Ok(ExperimentSpec::Confidence(ConfidenceSpec {
            models,
            k,
            shares,
            thresholds,
            votes,
            vote_rule: self.vote_rule(),
        }))
    }
}
