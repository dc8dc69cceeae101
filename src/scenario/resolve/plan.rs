//! A `plan` experiment in a scenario file: model A, B's deviation, the grid and targets.
use super::experiment::ExpCtx;
use super::*;
use crate::scenario::spec::PlanExperimentSpec;
use crate::scenario::MAX_K;

impl ExpCtx<'_> {
    pub(super) fn plan_spec(&self) -> Res<ExperimentSpec> {
        let model = match &self.e.model {
            Some(v) => self.model_ref(v, "model")?,
            None => 0,
        };
        let plan = self.plan(&self.models[model])?;
        Ok(ExperimentSpec::Plan(PlanExperimentSpec {
            model,
            plan: Box::new(plan),
        }))
    }

    /// Model A's own `shift_sd` in a plan: none at 0; else B is a model of the same kind (its
    /// own deviation with the same SD) unless the block's `shift_sd` gives B's, `tau_b`. The
    /// residual SD of B's logit given A's ([`crate::exact::plan::conditional_b`]) must stay
    /// within the plan's quadrature, [`MAX_PLAN_SHIFT_SD`] (a located error at the experiment's
    /// `model` otherwise).
    pub(super) fn plan_model_shift_sd(
        &self,
        model: &Model,
        bench: &Benchmark,
        block: Option<(f64, Range<usize>)>,
    ) -> Res<Option<ModelShiftSd>> {
        let tau_b = block.as_ref().map(|b| b.0);
        if model.shift_sd == 0.0 {
            return Ok(None);
        }
        let Difficulty::LogitNormal { sigma, .. } = bench.difficulty else {
            return Ok(None);
        };
        let tau = model.shift_sd;
        let b = tau_b.unwrap_or(tau);
        let r = crate::exact::plan::conditional_b(sigma, tau, b).2;
        if r > MAX_PLAN_SHIFT_SD {
            let at = self
                .e
                .model
                .as_ref()
                .map_or(self.span.clone(), |m| m.span());
            let most = crate::exact::plan::max_model_shift_sd(sigma);
            if let Some((b, at)) = block {
                return Err(self.r.err(at, &self.key("shift_sd"), format!("B's shift_sd = {b} beside model `{}`'s own shift_sd = {tau}: B's logit given A's then varies with SD sqrt(tau_B^2 + sigma^2 tau^2 / (sigma^2 + tau^2)) = {r:.3} logits, above the plan's limit of {MAX_PLAN_SHIFT_SD}; lower either", model.name)));
            }
            let message = format!("model `{}` has shift_sd = {tau}: in a plan B's logit given A's then varies with SD sqrt(tau^2 + sigma^2 tau^2 / (sigma^2 + tau^2)) = {r:.3} logits, above the plan's limit of {MAX_PLAN_SHIFT_SD}; at sigma = {sigma} a model A's shift_sd may be at most {most:.3}", model.name, most = (most * 1000.0).floor() / 1000.0);
            return Err(self.r.err(at, &self.key("model"), message));
        }
        Ok(Some(ModelShiftSd {
            model: model.name.clone(),
            tau,
            tau_b,
        }))
    }

    /// The plan of a `plan` experiment: model A is `model` (default: the first model), on the
    /// benchmark's logit-normal population shifted by A's own shift; B is A + each gap.
    pub(super) fn plan(&self, model: &Model) -> Res<Plan> {
        let (e, span, bench, seed) = (self.e, self.span.clone(), self.bench, self.seed);
        use crate::scenario::raw::{RawCheckCells, RawMetric};
        let key = |k: &str| self.key(k);
        let Difficulty::LogitNormal { mu, sigma, .. } = bench.difficulty else {
            return Err(self.r.err(span, &key("kind"), "a `plan` needs the benchmark's logit-normal population (mu, sigma), not an explicit `rates` list: problems are drawn from it"));
        };
        let RateSource::Shift(shift) = model.source else {
            let at = e.model.as_ref().map_or(span.clone(), |m| m.span());
            return Err(self.r.err(at, &key("model"), format!("model `{}` lists explicit rates; a `plan` needs a model given by a `shift` (model A is the population shifted by it)", model.name)));
        };
        let block_shift_sd = self
            .opt(&e.shift_sd, "shift_sd")?
            .zip(e.shift_sd.as_ref().map(Spanned::span));
        let model_shift_sd = self.plan_model_shift_sd(model, bench, block_shift_sd.clone())?;
        // The block's shift_sd is B's own deviation SD: beside a model A's own it lives in
        // `model_shift_sd`; without one it is B's disagreement with A.
        let shift_sd = match model_shift_sd {
            Some(_) => 0.0,
            None => block_shift_sd.map_or(0.0, |b| b.0),
        };
        let mu = mu + shift;
        let metric_raw = e.metric.as_ref().map_or(RawMetric::Pass1, |m| *m.get_ref());
        let metric = match metric_raw {
            RawMetric::Pass1 => {
                for (k, v) in [
                    ("k", e.k.as_ref().map(|x| x.span())),
                    ("vote_rule", e.vote_rule.as_ref().map(|x| x.span())),
                ] {
                    if let Some(at) = v {
                        return Err(self.r.err(at, &key(k), format!("`{k}` applies only with metric = \"maj\" (with metric = \"pass1\" the grid's second axis is `samples`)")));
                    }
                }
                PlanMetric::Pass1
            }
            RawMetric::Maj => {
                if let Some(s) = &e.samples {
                    return Err(self.r.err(s.span(), &key("samples"), "with metric = \"maj\" the grid's second axis is `k`, the samples per vote (one vote per problem per rerun): give `k` instead of `samples`"));
                }
                PlanMetric::Maj {
                    attractor: model.attractor,
                    rule: e
                        .vote_rule
                        .as_ref()
                        .map_or(model.vote_rule, |v| *v.get_ref()),
                }
            }
        };
        let target_power = self.opt(&e.target_power, "target_power")?;
        let gaps = self.plan_gaps(mu, sigma, model_shift_sd.as_ref(), shift_sd)?;
        let problems = self.ints(&e.problems, "problems", Some(&[30, 100, 300, 1000]))?;
        // With several attractors or split a plan's maj@k is read from conditional vote tables
        // whose build grows as m k^3, so k is capped lower than elsewhere.
        let modes = model.attractors.len() > 1 || model.split != 0.0;
        let max_k = if modes { MAX_PLAN_MODES_K } else { MAX_K };
        let samples = match metric {
            PlanMetric::Pass1 => self.ints(&e.samples, "samples", Some(&[1, 4, 16, 64]))?,
            PlanMetric::Maj { .. } => {
                let ks = self.ints(&e.k, "k", None)?;
                if let (Some(i), Some(v)) =
                    (ks.iter().position(|&k| u64::from(k) > max_k), e.k.as_ref())
                {
                    return Err(self.r.err(self.r.entry(v, i), &key("k"), format!("{} is out of range: model `{}` sets {} and a plan's maj@k then builds conditional vote tables whose cost grows as k^3, so k may be at most {MAX_PLAN_MODES_K}; use smaller k, or a model with one attractor share and no split", ks[i], model.name, if model.split != 0.0 { "`split`" } else { "several attractor shares" })));
                }
                ks
            }
        };
        let cells =
            |v: &Option<Spanned<RawCheckCells>>, k: &str, default: CheckCells| -> Res<CheckCells> {
                match v.as_ref().map(|x| (x.get_ref(), x.span())) {
                    None => Ok(default),
                    Some((RawCheckCells::Count(n), _)) => Ok(CheckCells::Count(*n as usize)),
                    Some((RawCheckCells::Word(w), _)) if w == "all" => Ok(CheckCells::All),
                    Some((RawCheckCells::Word(w), _)) if w == "none" => Ok(CheckCells::None),
                    Some((RawCheckCells::Word(w), at)) => Err(self.r.err(
                        at,
                        &key(k),
                        format!("`{w}`: expected \"all\", \"none\" or a number of cells"),
                    )),
                }
            };
        let reruns = self.value_or(&e.reruns, "reruns", 20_000)?;
        let population_reruns = self.opt(&e.population_reruns, "population_reruns")?;
        let population_reruns = population_reruns.unwrap_or(reruns.min(DEFAULT_POPULATION_RERUNS));
        Ok(Plan {
            spec: PlanSpec {
                mu,
                sigma,
                gaps,
                shift_sd,
                target_power,
                model_shift_sd,
                problems: problems.iter().map(|&n| n as usize).collect(),
                samples,
                target_loss_or_tie: self.value_or(
                    &e.target_loss_or_tie,
                    "target_loss_or_tie",
                    0.05,
                )?,
                target_halfwidth: self.value_or(&e.target_halfwidth, "target_halfwidth", 0.02)?,
                reruns,
                check_cells: cells(&e.check_cells, "check_cells", CheckCells::All)?,
                seed,
            },
            metric,
            check_population: cells(
                &e.check_population,
                "check_population",
                CheckCells::Count(4),
            )?,
            population_reruns,
            answers: PlanAnswers::of(model),
        })
    }

    /// The gaps B - A of a plan in logits, from `gap_logits` or from `gap_points` (converted on
    /// A's population `mu`, `sigma` with A's and B's deviations), each within `gap_logits`'s
    /// range.
    fn plan_gaps(
        &self,
        mu: f64,
        sigma: f64,
        model_shift_sd: Option<&ModelShiftSd>,
        shift_sd: f64,
    ) -> Res<Vec<f64>> {
        let (e, span) = (self.e, self.span.clone());
        let key = |k: &str| self.key(k);
        match (&e.gap_logits, &e.gap_points) {
            (Some(_), Some(p)) => Err(self.r.err(
                p.span(),
                &key("gap_points"),
                "give either `gap_logits` or `gap_points`, not both",
            )),
            (None, None) => Err(self.r.err(span, &key("gap_logits"), "missing key `gap_logits` (B's advantage over A in logits, a list such as [0.21]) or `gap_points` (in points of population pass@1)")),
            (Some(g), None) | (None, Some(g)) => {
                let k = if e.gap_logits.is_some() {
                    "gap_logits"
                } else {
                    "gap_points"
                };
                self.check_list(g, k)?;
                let list = g.get_ref();
                let logits_line = self.line("gap_logits");
                let mut out = Vec::new();
                for (i, &x) in list.iter().enumerate() {
                    let logits = if k == "gap_logits" {
                        x
                    } else {
                        crate::exact::plan::gap_logits_for_points(
                            mu,
                            sigma,
                            model_shift_sd.map_or((0.0, shift_sd), |m| (m.tau, m.b())),
                            x,
                        )
                        .map_err(|m| self.r.err(self.r.entry(g, i), &key(k), m))?
                    };
                    // Gaps in points: their logits by the table's range of `gap_logits`.
                    let d = range::domain(logits_line);
                    if !d.admits_real(logits) {
                        return Err(self.r.err(
                            self.r.entry(g, i),
                            &key(k),
                            format!(
                                "{x} is out of range: every gap must be a number of logits {}",
                                d.phrase()
                            ),
                        ));
                    }
                    out.push(logits);
                }
                Ok(out)
            }
        }
    }
}
