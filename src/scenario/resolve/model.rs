//! Models: `[[model]]` with its `[model.tokens]`, `[model.verifier]` and `[model.grader]`,
//! and the benchmark's contamination keys that name models.
use super::*;
use crate::exact::modes::Extraction;
use crate::exact::outcome::OutcomeModel;

impl Resolver<'_> {
    pub(super) fn model(
        &self,
        m: RawModel,
        span: Range<usize>,
        idx: usize,
        bench: &Benchmark,
    ) -> Res<Model> {
        let key = |k: &str| format!("model[{idx}].{k}");
        let name = m
            .name
            .ok_or_else(|| self.err(span.clone(), &key("name"), "missing key `name`"))?;
        let valid = |s: &str| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-.+".contains(c))
        };
        if !valid(name.get_ref()) {
            return Err(self.err(
                name.span(),
                &key("name"),
                format!(
                    "`{}` is not a valid model name: use letters, digits and _ - . +",
                    name.get_ref()
                ),
            ));
        }
        let source = match (m.shift, m.rates) {
            (Some(s), None) => RateSource::Shift(self.finite(&s, &key("shift"))?),
            (None, Some(r)) => {
                let rs = r.span();
                let r = r.into_inner();
                self.rates(&r, rs.clone(), &key("rates"))?;
                if r.len() != bench.problems {
                    return Err(self.err(rs, &key("rates"), format!("lists {} rates but the benchmark has {} problems: give one rate per problem", r.len(), bench.problems)));
                }
                RateSource::Rates(r)
            }
            (None, None) => RateSource::Shift(0.0),
            (Some(s), Some(_)) => {
                return Err(self.err(
                    s.span(),
                    &key("shift"),
                    "give either `shift` (logits) or `rates` (one per problem), not both",
                ))
            }
        };
        let attractor = m.attractor.ok_or_else(|| self.err(span.clone(), &key("attractor"), "missing key `attractor`: the share of wrong answers that land on one repeated answer, in [0, 1] (or a list of up to 8 shares, one per repeated wrong answer, summing to at most 1)"))?;
        let (a, attractors) = self.attractor_shares(&attractor, &key("attractor"))?;
        let unparsed = self.extraction_share(
            &m.unparsed,
            &key("unparsed"),
            "share of samples with no extractable answer",
        )?;
        let split = self.extraction_share(&m.split, &key("split"), "share of correct samples written in a form the normaliser treats as a different answer")?;
        let tokens = match m.tokens {
            Some(t) => {
                let ts = t.span();
                Some(self.tokens(t.into_inner(), ts, idx)?)
            }
            None => None,
        };
        let shift_sd = self.shift_sd(m.shift_sd, &source, &key("shift_sd"))?;
        let run_sd = match &m.run_sd {
            None => 0.0,
            Some(v) => {
                let x = *v.get_ref();
                if !(x.is_finite() && (0.0..=MAX_OMEGA).contains(&x)) {
                    return Err(self.err(v.span(), &key("run_sd"), format!("must be a number in [0, {MAX_OMEGA}] (the logit SD of the offset the samples of one run share; 0 = independent samples), got {x}")));
                }
                x
            }
        };
        let memorized_rate = match &m.memorized_rate {
            None => None,
            Some(v) => {
                let x = *v.get_ref();
                if !(0.0..=1.0).contains(&x) {
                    return Err(self.err(v.span(), &key("memorized_rate"), format!("must be in [0, 1] (the solve rate on memorised problems, e.g. 0.98), got {x}")));
                }
                Some(x)
            }
        };
        let verifier = match m.verifier {
            Some(v) => {
                let vs = v.span();
                Some(self.verifier(v.into_inner(), vs, idx)?)
            }
            None => None,
        };
        let grader = match m.grader {
            Some(g) => Some(self.grader(g.into_inner(), idx)?),
            None => None,
        };
        let confidence = match m.confidence {
            Some(c) => {
                let cs = c.span();
                Some(self.confidence(c.into_inner(), cs, idx)?)
            }
            None => None,
        };
        // The outcome model says which features per-run noise combines with.
        let outcome = OutcomeModel {
            attractors: attractors.clone(),
            extraction: Extraction { unparsed, split },
            run_sd,
            rule: VoteRule::Random,
            grader,
            verifier,
            confidence: None,
        };
        if let (Some(other), Some(v)) = (outcome.unsupported(), m.run_sd.as_ref()) {
            return Err(self.err(
                v.span(),
                &key("run_sd"),
                format!("cannot be combined with {other} in one model yet: per-run noise is integrated for one attractor share, every answer parsed, no verifier and a perfect grader; give this model run_sd = 0 or drop {other}"),
            ));
        }
        Ok(Model {
            name: name.into_inner(),
            source,
            attractor: a,
            vote_rule: m.vote_rule.map_or(VoteRule::Random, |v| v.into_inner()),
            tokens,
            run_sd,
            memorized_rate,
            attractors,
            unparsed,
            split,
            shift_sd,
            verifier,
            grader,
            confidence,
        })
    }

    /// `[model.confidence]`: `separation` (required) and `attractor` (default 0), each a number
    /// of SDs in [-[`MAX_SEPARATION`], [`MAX_SEPARATION`]].
    pub(super) fn confidence(
        &self,
        c: RawConfidence,
        span: Range<usize>,
        idx: usize,
    ) -> Res<Confidence> {
        let key = |k: &str| format!("model[{idx}].confidence.{k}");
        let sd = |v: &Spanned<f64>, k: &str, what: &str| -> Res<f64> {
            let x = *v.get_ref();
            if x.is_finite() && x.abs() <= MAX_SEPARATION {
                Ok(x)
            } else {
                Err(self.err(v.span(), &key(k), format!("must be a number of SDs between -{MAX_SEPARATION} and {MAX_SEPARATION} ({what}), got {x}")))
            }
        };
        let separation = c.separation.as_ref().ok_or_else(|| {
            self.err(span, &key("separation"), "missing key `separation`: the mean confidence of a correct sample, in SDs above a one-off wrong answer's (e.g. 1.5)")
        })?;
        Ok(Confidence {
            separation: sd(
                separation,
                "separation",
                "the mean confidence of a correct sample; a one-off wrong answer's is N(0, 1)",
            )?,
            attractor: match &c.attractor {
                Some(a) => sd(
                    a,
                    "attractor",
                    "the mean confidence of the repeated attractor answer",
                )?,
                None => 0.0,
            },
        })
    }

    /// `benchmark.contaminated` and `benchmark.contaminated_models`, checked against the models
    /// (each listed model needs its `memorized_rate`; a `memorized_rate` needs its model listed).
    pub(super) fn contamination_keys(
        &self,
        bench: &mut Benchmark,
        share: Option<Spanned<f64>>,
        names: Option<Spanned<Vec<String>>>,
        models: &[Model],
        (memorized, model_spans): (&[Option<Range<usize>>], &[Range<usize>]),
    ) -> Res<()> {
        if let Some(c) = &share {
            let x = *c.get_ref();
            if !(x > 0.0 && x <= 1.0) {
                return Err(self.err(c.span(), "benchmark.contaminated", format!("must be in (0, 1] (the share of problems the contaminated models memorised; leave it out for none), got {x}")));
            }
            bench.contaminated = x;
        }
        let mut listed = Vec::new();
        if let Some(list) = &names {
            for name in list.get_ref() {
                let Some(i) = models.iter().position(|m| &m.name == name) else {
                    let all: Vec<&str> = models.iter().map(|m| m.name.as_str()).collect();
                    return Err(self.err(
                        list.span(),
                        "benchmark.contaminated_models",
                        format!("no model named `{name}` (models: {})", all.join(", ")),
                    ));
                };
                if listed.contains(&i) {
                    return Err(self.err(
                        list.span(),
                        "benchmark.contaminated_models",
                        format!("model `{name}` is listed twice"),
                    ));
                }
                if models[i].memorized_rate.is_none() {
                    return Err(self.err(model_spans[i].clone(), &format!("model[{}].memorized_rate", i + 1), format!("model `{name}` is in benchmark.contaminated_models but has no `memorized_rate` (its solve rate on memorised problems, in [0, 1])")));
                }
                listed.push(i);
            }
        }
        match (&share, &names) {
            (Some(c), None) => return Err(self.err(c.span(), "benchmark.contaminated", "a contaminated share needs `contaminated_models`: the names of the models that memorised those problems")),
            (None, Some(list)) => return Err(self.err(list.span(), "benchmark.contaminated_models", "contaminated models need `contaminated` (the share of problems they memorised, in (0, 1])")),
            _ => {}
        }
        if let Some((i, span)) = memorized
            .iter()
            .enumerate()
            .find_map(|(i, s)| s.clone().filter(|_| !listed.contains(&i)).map(|s| (i, s)))
        {
            return Err(self.err(span, &format!("model[{}].memorized_rate", i + 1), format!("model `{}` is not in benchmark.contaminated_models: `memorized_rate` applies only to a contaminated model (list it there, or drop the key)", models[i].name)));
        }
        bench.contaminated_models = listed;
        Ok(())
    }

    /// A probability key of `[model.verifier]` or `[model.grader]`: finite and in [0, 1].
    pub(super) fn probability(&self, v: &Spanned<f64>, key: &str, what: &str) -> Res<f64> {
        let x = *v.get_ref();
        if (0.0..=1.0).contains(&x) {
            Ok(x)
        } else {
            Err(self.err(
                v.span(),
                key,
                format!("must be a probability in [0, 1] ({what}), got {x}"),
            ))
        }
    }

    /// `[model.verifier]`: `kind = "threshold"` takes `tpr`, `fpr` (required) and `fallback`
    /// (default "random"); `kind = "score"` takes `separation` (required).
    pub(super) fn verifier(&self, v: RawVerifier, span: Range<usize>, idx: usize) -> Res<Verifier> {
        let key = |k: &str| format!("model[{idx}].verifier.{k}");
        let kind = v.kind.as_ref().ok_or_else(|| {
            self.err(
                span.clone(),
                &key("kind"),
                "missing key `kind` (one of: threshold, score)",
            )
        })?;
        let kind = *kind.get_ref();
        let takes: &[&str] = match kind {
            VerifierKind::Threshold => &["tpr", "fpr", "fallback"],
            VerifierKind::Score => &["separation"],
        };
        let present = [
            ("tpr", v.tpr.as_ref().map(Spanned::span)),
            ("fpr", v.fpr.as_ref().map(Spanned::span)),
            ("fallback", v.fallback.as_ref().map(Spanned::span)),
            ("separation", v.separation.as_ref().map(Spanned::span)),
        ];
        for (k, at) in present {
            if let Some(at) = at.filter(|_| !takes.contains(&k)) {
                return Err(self.err(
                    at,
                    &key(k),
                    format!(
                        "`{k}` does not apply to a `{}` verifier (it takes: {})",
                        kind.as_str(),
                        takes.join(", ")
                    ),
                ));
            }
        }
        fn need<'a>(
            r: &Resolver,
            x: &'a Option<Spanned<f64>>,
            span: &Range<usize>,
            key: &str,
            k: &str,
            what: &str,
        ) -> Res<&'a Spanned<f64>> {
            x.as_ref()
                .ok_or_else(|| r.err(span.clone(), key, format!("missing key `{k}` ({what})")))
        }
        Ok(match kind {
            VerifierKind::Threshold => {
                let tpr_what = "the probability that the verifier accepts a correct sample";
                let fpr_what = "the probability that the verifier accepts a wrong sample";
                let tpr = need(self, &v.tpr, &span, &key("tpr"), "tpr", tpr_what)?;
                let tpr = self.probability(tpr, &key("tpr"), tpr_what)?;
                let fpr = need(self, &v.fpr, &span, &key("fpr"), "fpr", fpr_what)?;
                let fpr = self.probability(fpr, &key("fpr"), fpr_what)?;
                Verifier::Threshold(ThresholdVerifier {
                    tpr,
                    fpr,
                    fallback: v.fallback.map_or(Fallback::Random, |f| f.into_inner()),
                })
            }
            VerifierKind::Score => {
                let what = "mean reward score of a correct sample minus a wrong one's, in units of the score's SD";
                let d = need(
                    self,
                    &v.separation,
                    &span,
                    &key("separation"),
                    "separation",
                    what,
                )?;
                let x = *d.get_ref();
                if !(x.is_finite() && x.abs() <= MAX_SEPARATION) {
                    return Err(self.err(
                        d.span(),
                        &key("separation"),
                        format!("must be a number between -{MAX_SEPARATION} and {MAX_SEPARATION} ({what}), got {x}"),
                    ));
                }
                Verifier::Score { separation: x }
            }
        })
    }

    /// `[model.grader]`: `fpr` and `fnr`, each a probability, default 0.
    pub(super) fn grader(&self, g: RawGrader, idx: usize) -> Res<Grader> {
        let key = |k: &str| format!("model[{idx}].grader.{k}");
        let rate = |v: &Option<Spanned<f64>>, k: &str, what: &str| -> Res<f64> {
            v.as_ref()
                .map_or(Ok(0.0), |v| self.probability(v, &key(k), what))
        };
        Ok(Grader {
            fpr: rate(
                &g.fpr,
                "fpr",
                "the probability that the grader marks a wrong answer correct",
            )?,
            fnr: rate(
                &g.fnr,
                "fnr",
                "the probability that the grader marks a correct answer wrong",
            )?,
        })
    }

    /// `attractor`: a number in [0, 1] (one repeated wrong answer) or a list of at most
    /// [`MAX_ATTRACTORS`] shares, each >= 0, summing to at most 1. Returns (the first share, or 0
    /// for an empty list; every share).
    pub(super) fn attractor_shares(
        &self,
        v: &Spanned<toml::Value>,
        key: &str,
    ) -> Res<(f64, Vec<f64>)> {
        let number = |x: &toml::Value| match x {
            toml::Value::Float(f) => Some(*f),
            toml::Value::Integer(i) => Some(*i as f64),
            _ => None,
        };
        match v.get_ref() {
            toml::Value::Array(list) => {
                if list.len() > MAX_ATTRACTORS {
                    return Err(self.err(v.span(), key, format!("lists {} shares: at most {MAX_ATTRACTORS} repeated wrong answers", list.len())));
                }
                let mut shares = Vec::with_capacity(list.len());
                for (i, x) in list.iter().enumerate() {
                    let at = self.loc.element(v.span(), i);
                    let Some(a) = number(x) else {
                        return Err(self.err(at, key, format!("entry {} is not a number: every entry is a share of the wrong answers in [0, 1]", i + 1)));
                    };
                    if !(0.0..=1.0).contains(&a) {
                        return Err(self.err(at, key, format!("entry {} is {a}: every share must be in [0, 1]", i + 1)));
                    }
                    shares.push(a);
                }
                let total: f64 = shares.iter().sum();
                if total > 1.0 + SHARE_SUM_SLACK {
                    return Err(self.err(v.span(), key, format!("the shares sum to {total}: they split the wrong answers, so their sum must be at most 1 (the rest are one-off wrong answers)")));
                }
                Ok((shares.first().copied().unwrap_or(0.0), shares))
            }
            x => match number(x) {
                Some(a) if (0.0..=1.0).contains(&a) => Ok((a, vec![a])),
                Some(a) => Err(self.err(
                    v.span(),
                    key,
                    format!(
                        "must be in [0, 1] (share of wrong answers on the repeated attractor), got {a}"
                    ),
                )),
                None => Err(self.err(v.span(), key, format!("must be a share in [0, 1] or a list of at most {MAX_ATTRACTORS} shares, got {}", x.type_str()))),
            },
        }
    }

    /// `unparsed` or `split`: a share in [0, 1) (1 would leave no parsed sample, or no correct
    /// sample in the main form); 0 when absent.
    pub(super) fn extraction_share(
        &self,
        v: &Option<Spanned<f64>>,
        key: &str,
        what: &str,
    ) -> Res<f64> {
        match v {
            None => Ok(0.0),
            Some(x) if (0.0..1.0).contains(x.get_ref()) => Ok(*x.get_ref()),
            Some(x) => Err(self.err(
                x.span(),
                key,
                format!("must be in [0, 1) ({what}), got {}", x.get_ref()),
            )),
        }
    }

    /// `shift_sd` (tau): finite, in [0, MAX_SHIFT_SD], and only with a `shift` (a model that
    /// lists its own `rates` has no benchmark logit to deviate from). Absent means 0.
    pub(super) fn shift_sd(
        &self,
        v: Option<Spanned<f64>>,
        source: &RateSource,
        key: &str,
    ) -> Res<f64> {
        let Some(v) = v else { return Ok(0.0) };
        let tau = *v.get_ref();
        if !(tau.is_finite() && (0.0..=MAX_SHIFT_SD).contains(&tau)) {
            return Err(self.err(
                v.span(),
                key,
                format!("must be a finite number in [0, {MAX_SHIFT_SD}] (the SD of the model's own per-problem logit deviation; 0 = a constant shift), got {tau}"),
            ));
        }
        if matches!(source, RateSource::Rates(_)) {
            return Err(self.err(
                v.span(),
                key,
                "applies only to a model given by `shift`: this model lists its own `rates`, which already fix every problem; drop `shift_sd` or give `shift` instead of `rates`",
            ));
        }
        Ok(tau)
    }

    pub(super) fn tokens(&self, t: RawTokens, span: Range<usize>, idx: usize) -> Res<TraceLengths> {
        let get = |v: Option<Spanned<f64>>, name: &str, what: &str, allow_zero: bool| -> Res<f64> {
            let key = format!("model[{idx}].tokens.{name}");
            let v = v.ok_or_else(|| {
                self.err(span.clone(), &key, format!("missing key `{name}` ({what})"))
            })?;
            let x = *v.get_ref();
            let ok = x.is_finite() && (x > 0.0 || (allow_zero && x == 0.0));
            if ok {
                Ok(x)
            } else {
                let bound = if allow_zero { ">= 0" } else { "> 0" };
                Err(self.err(
                    v.span(),
                    &key,
                    format!("must be a finite number {bound} ({what}), got {x}"),
                ))
            }
        };
        let lengths = TraceLengths {
            median_tokens: get(
                t.median_tokens,
                "median_tokens",
                "median correct-trace length on the easiest problem, tokens",
                false,
            )?,
            hard_growth: get(
                t.hard_growth,
                "hard_growth",
                "growth of the median with difficulty",
                true,
            )?,
            wrong_factor: get(
                t.wrong_factor,
                "wrong_factor",
                "wrong traces are this many times longer",
                false,
            )?,
            sigma: get(
                t.sigma,
                "sigma",
                "log-sd of the lognormal trace length",
                false,
            )?,
        };
        self.token_range(&lengths, span, idx)?;
        Ok(lengths)
    }

    /// Token moments stay within f64: the largest median, L0 (1 + g) max(1, w) at difficulty 1,
    /// times e^(sigma^2) (the root of the second moment E[L^2]) is at most [`MAX_TOKEN_SCALE`],
    /// and the smallest median, L0 min(1, w), at least its inverse, so the exact token means,
    /// their variances and every simulated length are finite and nonzero.
    pub(super) fn token_range(&self, t: &TraceLengths, span: Range<usize>, idx: usize) -> Res<()> {
        let ln_l0 = t.median_tokens.ln();
        let ln_w = t.wrong_factor.ln();
        let ln_top = ln_l0 + t.hard_growth.ln_1p() + ln_w.max(0.0) + t.sigma * t.sigma;
        let ln_bottom = ln_l0 + ln_w.min(0.0);
        let limit = MAX_TOKEN_SCALE.ln();
        let key = format!("model[{idx}].tokens");
        // NaN (never expected from finite inputs) is refused too.
        if ln_top.is_nan() || ln_top > limit {
            return Err(self.err(span, &key, format!("median_tokens x (1 + hard_growth) x max(1, wrong_factor) x e^(sigma^2) = e^{ln_top:.1} is beyond {MAX_TOKEN_SCALE:e} tokens: the second moment of the trace lengths would overflow; lower median_tokens, hard_growth, wrong_factor or sigma")));
        }
        if ln_bottom.is_nan() || ln_bottom < -limit {
            return Err(self.err(span, &key, format!("median_tokens x min(1, wrong_factor) = e^{ln_bottom:.1} is below {:e} tokens: the squared trace lengths would underflow to 0; raise median_tokens or wrong_factor", 1.0 / MAX_TOKEN_SCALE)));
        }
        Ok(())
    }
}
