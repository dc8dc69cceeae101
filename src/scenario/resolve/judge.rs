//! A `judge` experiment: two models, a judge's biases, and the questions compared.
use super::experiment::ExpCtx;
use super::*;
use crate::scenario::keys::{MAX_COMPARISONS, MAX_JUDGE_LOGIT};
use crate::scenario::spec::JudgeSpec;
use crate::scenario::spec::JUDGE_DRAWS_PER_QUESTION;

impl ExpCtx<'_> {
    pub(super) fn judge(&self) -> Res<ExperimentSpec> {
        let (ai, bi) =
            self.model_pair(("model", "model"), "a judge compares two different models")?;
        let (ma, mb) = (&self.models[ai], &self.models[bi]);
        let gap = match self.opt(&self.e.gap, "gap")? {
            Some(g) => g,
            None => match (&ma.source, &mb.source) {
                (RateSource::Shift(sa), RateSource::Shift(sb)) => {
                    let g = sb - sa;
                    if !range::domain(self.line("gap")).admits_real(g) {
                        return Err(self.r.err(self.span.clone(), &self.key("gap"), format!("the models' shifts differ by {g} logits (`{}` minus `{}`), the default gap: at most {MAX_JUDGE_LOGIT} in absolute value; give `gap`", mb.name, ma.name)));
                    }
                    g
                }
                _ => {
                    let m = if matches!(ma.source, RateSource::Rates(_)) {
                        ma
                    } else {
                        mb
                    };
                    return Err(self.r.err(self.span.clone(), &self.key("gap"), format!("missing key `gap`: model `{}` lists its own `rates`, so the quality difference cannot default to the models' shift difference; give gap (logits)", m.name)));
                }
            },
        };
        let spread = match self.opt(&self.e.spread, "spread")? {
            Some(s) => s,
            None => {
                let s = ma.shift_sd.hypot(mb.shift_sd);
                if !range::domain(self.line("spread")).admits_real(s) {
                    return Err(self.r.err(self.span.clone(), &self.key("spread"), format!("the models' shift_sd give a spread sqrt({}^2 + {}^2) = {s} logits, the default: at most {MAX_JUDGE_LOGIT}; give `spread`", ma.shift_sd, mb.shift_sd)));
                }
                s
            }
        };
        let position_bias = self.value_or(&self.e.position_bias, "position_bias", 0.0)?;
        let verbosity = self.value_or(&self.e.verbosity, "verbosity", 0.0)?;
        let self_preference = self.value_or(&self.e.self_preference, "self_preference", 0.0)?;
        if verbosity != 0.0 {
            if let Some(m) = [ma, mb].into_iter().find(|m| m.tokens.is_none()) {
                let at = self
                    .e
                    .verbosity
                    .as_ref()
                    .map_or(self.span.clone(), Spanned::span);
                return Err(self.r.err(at, &self.key("verbosity"), format!("verbosity = {verbosity} compares the two answers' lengths, but model `{}` has no [model.tokens] block (median_tokens and sigma give its answer lengths); add the block to `{}` or set verbosity = 0", m.name, m.name)));
            }
        }
        let judge_family = match &self.e.judge_family {
            None => None,
            Some(f) => {
                let i = self.model_ref(f, "judge_family")?;
                if i != ai && i != bi {
                    return Err(self.r.err(f.span(), &self.key("judge_family"), format!("`{}` is neither a (`{}`) nor b (`{}`): self-preference favours the judge's own family, so name model a or b, or leave judge_family out for a judge of neither family", f.get_ref(), ma.name, mb.name)));
                }
                Some(i)
            }
        };
        if self_preference != 0.0 && judge_family.is_none() {
            let at = self
                .e
                .self_preference
                .as_ref()
                .map_or(self.span.clone(), Spanned::span);
            return Err(self.r.err(at, &self.key("self_preference"), format!("self_preference = {self_preference} favours the judge's own family, but judge_family is not given: name model a or b in judge_family, or set self_preference = 0")));
        }
        let comparisons = match self.opt(&self.e.comparisons, "comparisons")? {
            Some(c) => c,
            None if self.bench.problems as u64 <= MAX_COMPARISONS => self.bench.problems as u64,
            None => return Err(self.r.err(self.span.clone(), &self.key("comparisons"), format!("the benchmark's {} problems, the default number of comparisons, exceed {MAX_COMPARISONS} (the exact distribution of the reported count is built in O(N^2)); give `comparisons`", self.bench.problems))),
        };
        let reruns = self.value_or(&self.e.reruns, "reruns", 4000)?;
        let draws = reruns
            .saturating_mul(comparisons)
            .saturating_mul(JUDGE_DRAWS_PER_QUESTION);
        if draws > MAX_TOTAL_VOTES {
            let at = self
                .e
                .reruns
                .as_ref()
                .map_or(self.span.clone(), Spanned::span);
            return Err(self.r.err(at, &self.key("reruns"), format!("{reruns} reruns x {comparisons} comparisons x {JUDGE_DRAWS_PER_QUESTION} draws per question = {draws} simulated draws: at most {MAX_TOTAL_VOTES} per experiment; lower `reruns` or `comparisons`")));
        }
        Ok(ExperimentSpec::Judge(JudgeSpec {
            a: ai,
            b: bi,
            judge_family,
            gap,
            spread,
            position_bias,
            verbosity,
            self_preference,
            comparisons: comparisons as u32,
            reruns,
        }))
    }
}
