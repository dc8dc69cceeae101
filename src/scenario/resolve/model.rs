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
            (Some(s), None) => RateSource::Shift(self.value(
                &s,
                line(Table::Model, "shift", None),
                &key("shift"),
            )?),
            (None, Some(r)) => {
                let rs = r.span();
                let r = r.into_inner();
                self.rates(&r, rs.clone(), Table::Model, &key("rates"))?;
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
        let attractor = m.attractor.ok_or_else(|| {
            let line = line(Table::Model, "attractor", None);
            let msg = format!(
                "missing key `attractor`: {} ({})",
                line.valid_with_note(),
                line.doc
            );
            self.err(span.clone(), &key("attractor"), msg)
        })?;
        let (a, attractors) = self.attractor_shares(&attractor, &key("attractor"))?;
        let share = |v: &Option<Spanned<f64>>, k: &str| {
            self.model_value(v, (Table::Model, k), &key(k), 0.0)
        };
        let unparsed = share(&m.unparsed, "unparsed")?;
        let split = share(&m.split, "split")?;
        let tokens = match m.tokens {
            Some(t) => {
                let ts = t.span();
                Some(self.tokens(t.into_inner(), ts, idx)?)
            }
            None => None,
        };
        let shift_sd = self.shift_sd(m.shift_sd, &source, &key("shift_sd"))?;
        let run_sd = share(&m.run_sd, "run_sd")?;
        let memorized_rate = m
            .memorized_rate
            .as_ref()
            .map(|v| {
                self.value(
                    v,
                    line(Table::Model, "memorized_rate", None),
                    &key("memorized_rate"),
                )
            })
            .transpose()?;
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
                format!("cannot be combined with {other}: under per-run noise its best@k is an integral inside an integral, hundreds of times slower than without; give this model run_sd = 0, or a verifier of kind = \"threshold\""),
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
    /// of SDs in the key table's range.
    pub(super) fn confidence(
        &self,
        c: RawConfidence,
        span: Range<usize>,
        idx: usize,
    ) -> Res<Confidence> {
        let key = |k: &str| format!("model[{idx}].confidence.{k}");
        let separation = c.separation.as_ref().ok_or_else(|| {
            self.err(span, &key("separation"), "missing key `separation`: the mean confidence of a correct sample, in SDs above a one-off wrong answer's (e.g. 1.5)")
        })?;
        Ok(Confidence {
            separation: self.value(
                separation,
                line(Table::Confidence, "separation", None),
                &key("separation"),
            )?,
            attractor: self.model_value(
                &c.attractor,
                (Table::Confidence, "attractor"),
                &key("attractor"),
                0.0,
            )?,
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
            let line = line(Table::Benchmark, "contaminated", None);
            bench.contaminated = self.value(c, line, "benchmark.contaminated")?;
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
        let need = |k: &str, x: &Option<Spanned<f64>>| -> Res<f64> {
            let line = line(Table::Verifier, k, None);
            let x = x.as_ref().ok_or_else(|| {
                let msg = format!("missing key `{k}` ({}: {})", line.valid(), line.doc);
                self.err(span.clone(), &key(k), msg)
            })?;
            self.value(x, line, &key(k))
        };
        Ok(match kind {
            VerifierKind::Threshold => Verifier::Threshold(ThresholdVerifier {
                tpr: need("tpr", &v.tpr)?,
                fpr: need("fpr", &v.fpr)?,
                fallback: v.fallback.map_or(Fallback::Random, |f| f.into_inner()),
            }),
            VerifierKind::Score => Verifier::Score {
                separation: need("separation", &v.separation)?,
            },
        })
    }

    /// `[model.grader]`: `fpr` and `fnr`, each a probability, default 0.
    pub(super) fn grader(&self, g: RawGrader, idx: usize) -> Res<Grader> {
        let rate = |v: &Option<Spanned<f64>>, k: &str| {
            let path = format!("model[{idx}].grader.{k}");
            self.model_value(v, (Table::Grader, k), &path, 0.0)
        };
        Ok(Grader {
            fpr: rate(&g.fpr, "fpr")?,
            fnr: rate(&g.fnr, "fnr")?,
        })
    }

    /// `attractor`: a share (one repeated wrong answer) or a list of up to [`MAX_ATTRACTORS`]
    /// shares, each in the key table's range, summing to at most 1. Returns (the first share, or 0
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
        let line = line(Table::Model, "attractor", None);
        match v.get_ref() {
            toml::Value::Array(list) => {
                let mut shares = Vec::with_capacity(list.len());
                for (i, x) in list.iter().enumerate() {
                    let Some(a) = number(x) else {
                        let at = self.loc.element(v.span(), i);
                        let bounds = range::domain(line).bounds_text();
                        return Err(self.err(at, key, format!("entry {} is not a number: every entry is a share of the wrong answers in {bounds}", i + 1)));
                    };
                    shares.push(a);
                }
                self.list(&shares, v.span(), &range::domain(line), key)?;
                let total: f64 = shares.iter().sum();
                if total > 1.0 + SHARE_SUM_SLACK {
                    return Err(self.err(v.span(), key, format!("the shares sum to {total}: they split the wrong answers, so their sum must be at most 1 (the rest are one-off wrong answers)")));
                }
                Ok((shares.first().copied().unwrap_or(0.0), shares))
            }
            x => match number(x) {
                Some(a) => {
                    let a = self.value(&Spanned::new(v.span(), a), line, key)?;
                    Ok((a, vec![a]))
                }
                None => Err(self.err(
                    v.span(),
                    key,
                    format!("must be {}, got {}", line.valid(), x.type_str()),
                )),
            },
        }
    }

    /// `shift_sd` (tau): in the key table's range, and only with a `shift` (a model that
    /// lists its own `rates` has no benchmark logit to deviate from). Absent means 0.
    pub(super) fn shift_sd(
        &self,
        v: Option<Spanned<f64>>,
        source: &RateSource,
        key: &str,
    ) -> Res<f64> {
        let Some(v) = v else { return Ok(0.0) };
        let tau = self.value(&v, line(Table::Model, "shift_sd", None), key)?;
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
        let get = |v: Option<Spanned<f64>>, name: &str| -> Res<f64> {
            let key = format!("model[{idx}].tokens.{name}");
            let line = line(Table::Tokens, name, None);
            let v = v.ok_or_else(|| {
                let msg = format!("missing key `{name}` ({}: {})", line.valid(), line.doc);
                self.err(span.clone(), &key, msg)
            })?;
            self.value(&v, line, &key)
        };
        let lengths = TraceLengths {
            median_tokens: get(t.median_tokens, "median_tokens")?,
            hard_growth: get(t.hard_growth, "hard_growth")?,
            wrong_factor: get(t.wrong_factor, "wrong_factor")?,
            sigma: get(t.sigma, "sigma")?,
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
