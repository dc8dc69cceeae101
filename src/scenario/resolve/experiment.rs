//! Experiments: `[[experiment]]` resolved kind by kind, the keys every kind shares, and the
//! refusal of a model key a kind does not honour.
use super::*;
use crate::exact::outcome::{Metric, OutcomeModel};
use crate::scenario::keys::at_least;
use crate::scenario::spec::{
    AttractorSweepSpec, BudgetSpec, ContaminationSpec, CostSpec, CurvesSpec, HeadToHeadSpec,
    PlanExperimentSpec, SeedVarianceSpec, VoteSpreadSpec,
};

impl Resolver<'_> {
    /// Refuses a model that sets a key this experiment does not honour (the key table's kinds
    /// of each model key: `run_sd`, `shift_sd`, and `memorized_rate` for a contaminated model). The
    /// error points at the experiment's reference to the model (`refs`, the spans of `model`,
    /// `models`, `a` and `b`) and names the kinds that honour the key.
    pub(super) fn supported(
        &self,
        spec: &ExperimentSpec,
        (models, bench): (&[Model], &Benchmark),
        span: Range<usize>,
        refs: &[(&'static str, Range<usize>)],
        idx: usize,
    ) -> Res<()> {
        let kind = spec.kind();
        let name = kind.as_str();
        for (j, i) in spec.models().into_iter().enumerate() {
            let m = &models[i];
            // A pair's second model is `b`: point at the key that names this model.
            let names: &[&str] = match j {
                0 => &["model", "models", "a"],
                1 => &["models", "b"],
                _ => &["models"],
            };
            let (key, at) = refs
                .iter()
                .find(|(k, _)| names.contains(k))
                .map_or((format!("experiment[{idx}]"), span.clone()), |(k, s)| {
                    (format!("experiment[{idx}].{k}"), s.clone())
                });
            let honoured_by = |entry: &keys::Key| {
                let by: Vec<&str> = entry.kinds.iter().map(|k| k.as_str()).collect();
                match by.split_last() {
                    Some((last, [])) => last.to_string(),
                    Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
                    None => String::new(),
                }
            };
            // Memorised problems: the key table's kinds of `memorized_rate`.
            let memorised = keys::find(Table::Model, "memorized_rate", None)
                .filter(|_| bench.contaminated_models.contains(&i));
            if let Some(entry) = memorised.filter(|e| !e.for_kind(kind)) {
                return Err(self.err(at, &key, format!("model `{}` is in benchmark.contaminated_models, and a {name} experiment does not model memorised problems (a plan sizes benchmarks drawn afresh, a judge compares answers to open-ended questions; memorised problems are modelled by {}); use a model without contamination here", m.name, honoured_by(entry))));
            }
            for (k, value) in [("run_sd", m.run_sd), ("shift_sd", m.shift_sd)] {
                let Some(entry) = keys::find(Table::Model, k, None) else {
                    continue;
                };
                if value > 0.0 && !entry.for_kind(kind) {
                    let by = honoured_by(entry);
                    return Err(self.err(at, &key, format!("model `{}` has {k} = {value}, which a {name} experiment does not honour ({k} is honoured by {by}); use a model with {k} = 0 here", m.name)));
                }
            }
            // Per-run noise on a benchmark redrawn every rerun: the seed variance of a shifted
            // model is integrated for fixed problems only.
            let redrawn = bench.placement() == Some(Placement::Random)
                && matches!(m.source, RateSource::Shift(_));
            let rerun = OutcomeModel::of(m, m.vote_rule).rerun_unsupported();
            if let (Some(what), ExperimentKind::SeedVariance | ExperimentKind::HeadToHead) =
                (rerun, kind)
            {
                return Err(self.err(at, &key, format!("model `{}` has run_sd = {} and {what}: a {name} experiment integrates per-run noise for every answer parsed and a perfect grader; use a model with run_sd = 0 here or drop {what}", m.name, m.run_sd)));
            }
            if m.run_sd > 0.0 && kind == ExperimentKind::SeedVariance && redrawn {
                return Err(self.err(at, &key, format!("model `{}` has run_sd = {}: seed-variance models per-run noise on fixed problems, not with placement = \"random\"; use a model with run_sd = 0 here or placement = \"quantiles\"", m.name, m.run_sd)));
            }
        }
        Ok(())
    }

    pub(super) fn experiment(
        &self,
        e: RawExperiment,
        span: Range<usize>,
        idx: usize,
        models: &[Model],
        bench: &Benchmark,
        seed: u64,
    ) -> Res<Experiment> {
        let problems = bench.problems;
        let key = |k: &str| format!("experiment[{idx}].{k}");
        let kinds = ExperimentKind::ALL.map(ExperimentKind::as_str).join(", ");
        let kind = e.kind.as_ref().ok_or_else(|| {
            self.err(
                span.clone(),
                &key("kind"),
                format!("missing key `kind` (one of: {kinds})"),
            )
        })?;
        let kind = *kind.get_ref();
        let takes = keys::names_of_kind(kind);
        for (k, s) in keys::present(&e) {
            if !takes.contains(&k) {
                return Err(self.err(
                    s,
                    &key(k),
                    format!(
                        "`{k}` does not apply to a `{}` experiment (it takes: {})",
                        kind.as_str(),
                        takes.join(", ")
                    ),
                ));
            }
        }
        let name = match &e.name {
            Some(n) => {
                let ok = !n.get_ref().is_empty()
                    && n.get_ref()
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "_-".contains(c));
                if !ok {
                    return Err(self.err(n.span(), &key("name"), format!("`{}` is not a valid experiment name: use letters, digits, _ and - (it names output files)", n.get_ref())));
                }
                let chars = n.get_ref().chars().count();
                if chars > MAX_EXPERIMENT_NAME {
                    return Err(self.err(n.span(), &key("name"), format!("{chars} characters: an experiment name has at most {MAX_EXPERIMENT_NAME} (it names output files)")));
                }
                n.get_ref().clone()
            }
            None => kind.as_str().to_string(),
        };
        let refs = keys::present(&e);
        let c = ExpCtx {
            r: self,
            e: &e,
            kind,
            span: span.clone(),
            idx,
            models,
            bench,
            seed,
        };
        let spec = match kind {
            ExperimentKind::Curves => c.curves()?,
            ExperimentKind::AttractorSweep => c.attractor_sweep()?,
            ExperimentKind::SeedVariance => c.seed_variance()?,
            ExperimentKind::VoteSpread => c.vote_spread()?,
            ExperimentKind::HeadToHead => c.head_to_head()?,
            ExperimentKind::Budget => c.budget()?,
            ExperimentKind::Cost => c.cost()?,
            ExperimentKind::Plan => c.plan_spec()?,
            ExperimentKind::Contamination => c.contamination()?,
            ExperimentKind::Judge => c.judge()?,
            ExperimentKind::Confidence => c.confidence()?,
        };
        self.supported(&spec, (models, bench), span.clone(), &refs, idx)?;
        // Bound the simulated draws (votes, reruns or traces times the problems they cover), which
        // bounds the run time; memory is streamed. The same count drives the progress bar.
        let p = problems as u64;
        let total = spec.work(problems).draws;
        let too_many = total > MAX_TOTAL_VOTES;
        match &spec {
            ExperimentSpec::Curves(CurvesSpec {
                models, k, votes, ..
            }) => self.vote_grid(
                &e,
                span.clone(),
                idx,
                (models.len(), k.len(), *votes),
                problems,
            )?,
            ExperimentSpec::AttractorSweep(AttractorSweepSpec {
                attractors,
                k,
                votes,
                ..
            }) => self.vote_grid(
                &e,
                span.clone(),
                idx,
                (attractors.len(), k.len(), *votes),
                problems,
            )?,
            ExperimentSpec::Plan(PlanExperimentSpec { plan, .. }) if too_many => {
                let at = e.reruns.as_ref().map_or(span, |v| v.span());
                return Err(self.err(at, &key("reruns"), format!("the checked cells (check_cells, and check_population in both population designs) x 2 models x their problems x {} reruns ({} in the population designs) = {total} simulated draws: at most {MAX_TOTAL_VOTES} per experiment; lower `reruns`, `population_reruns`, `check_cells` or `check_population`", plan.reruns, plan.population_reruns)));
            }
            ExperimentSpec::Plan(_) => {}
            _ if too_many => {
                let (what, at) = match &spec {
                    ExperimentSpec::Budget(_) => ("traces", e.traces.as_ref().map(|v| v.span())),
                    ExperimentSpec::Cost(_) => ("votes", e.votes.as_ref().map(|v| v.span())),
                    _ => ("reruns", e.reruns.as_ref().map(|v| v.span())),
                };
                let at = at.unwrap_or(span);
                return Err(self.err(at, &key(what), format!("this experiment would simulate {total} draws ({problems} problems x its cells x `{what}`): at most {MAX_TOTAL_VOTES} per experiment; lower `{what}`")));
            }
            _ => {}
        }
        // The exact count distributions of the noise experiments live over 0..=n N.
        let count_n = match &spec {
            ExperimentSpec::SeedVariance(SeedVarianceSpec { n, .. })
            | ExperimentSpec::HeadToHead(HeadToHeadSpec { n, .. }) => n.iter().copied().max(),
            _ => None,
        };
        if let Some(n) = count_n {
            let support = u64::from(n) * p;
            if support > MAX_COUNT_SUPPORT {
                let at = e.n.as_ref().map_or(span, |v| v.span());
                return Err(self.err(at, &key("n"), format!("the exact distribution of the total correct count has n x N = {n} x {problems} = {support} entries: at most {MAX_COUNT_SUPPORT} (about 2 GB while it is built); lower the largest n or use fewer problems")));
            }
        }
        Ok(Experiment { name, spec })
    }

    /// Bounds a vote grid (`curves`, `attractor-sweep`): its (cell, problem) pairs by
    /// [`MAX_GRID`], its votes by [`MAX_TOTAL_VOTES`].
    pub(super) fn vote_grid(
        &self,
        e: &RawExperiment,
        span: Range<usize>,
        idx: usize,
        (series, ks, votes): (usize, usize, u64),
        problems: usize,
    ) -> Res<()> {
        let key = |k: &str| format!("experiment[{idx}].{k}");
        let cells = (series as u64) * (ks as u64) * (problems as u64);
        let total = cells.saturating_mul(votes);
        if cells > MAX_GRID {
            return Err(self.err(span, &key("k"), format!("{series} series x {ks} k values x {problems} problems = {cells} (cell, problem) pairs: at most {MAX_GRID} per experiment; list fewer k values or models, or use fewer problems")));
        }
        if total > MAX_TOTAL_VOTES {
            let at = e.votes.as_ref().map_or(span, |v| v.span());
            return Err(self.err(at, &key("votes"), format!("{series} series x {ks} k values x {problems} problems x {votes} votes = {total} simulated votes: at most {MAX_TOTAL_VOTES} per experiment; lower `votes`")));
        }
        Ok(())
    }

    pub(super) fn need_tokens(
        &self,
        ms: &[usize],
        models: &[Model],
        span: Range<usize>,
        key: &str,
    ) -> Res<()> {
        match ms.iter().find(|&&i| models[i].tokens.is_none()) {
            Some(&i) => Err(self.err(span, key, format!("model `{}` has no [model.tokens] block (median_tokens, hard_growth, wrong_factor, sigma), which this experiment needs", models[i].name))),
            None => Ok(()),
        }
    }
}

/// One `[[experiment]]` being resolved: its raw values, where it is in the file, and what it
/// may refer to. Each kind has its own function below; the helpers read the keys every kind
/// shares (model references, lists of whole numbers, draw counts).
pub(super) struct ExpCtx<'a> {
    pub(super) r: &'a Resolver<'a>,
    pub(super) e: &'a RawExperiment,
    pub(super) kind: ExperimentKind,
    pub(super) span: Range<usize>,
    pub(super) idx: usize,
    pub(super) models: &'a [Model],
    pub(super) bench: &'a Benchmark,
    pub(super) seed: u64,
}

impl ExpCtx<'_> {
    pub(super) fn key(&self, k: &str) -> String {
        format!("experiment[{}].{k}", self.idx)
    }

    pub(super) fn vote_rule(&self) -> Option<VoteRule> {
        self.e.vote_rule.as_ref().map(|v| *v.get_ref())
    }

    pub(super) fn model_ref(&self, v: &Spanned<String>, k: &str) -> Res<usize> {
        self.models
            .iter()
            .position(|m| &m.name == v.get_ref())
            .ok_or_else(|| {
                let names: Vec<&str> = self.models.iter().map(|m| m.name.as_str()).collect();
                self.r.err(
                    v.span(),
                    &self.key(k),
                    format!(
                        "no model named `{}` (models: {})",
                        v.get_ref(),
                        names.join(", ")
                    ),
                )
            })
    }
    pub(super) fn one_model(&self, k: &str) -> Res<usize> {
        let v = self.e.model.as_ref().ok_or_else(|| {
            self.r.err(
                self.span.clone(),
                &self.key(k),
                format!("missing key `{k}` (the name of a model)"),
            )
        })?;
        self.model_ref(v, k)
    }
    pub(super) fn model_list(&self) -> Res<Vec<usize>> {
        match &self.e.models {
            None => Ok((0..self.models.len()).collect()),
            Some(list) => {
                if list.get_ref().is_empty() {
                    return Err(self.r.err(
                        list.span(),
                        &self.key("models"),
                        "the list is empty: name at least one model, or leave `models` out for all",
                    ));
                }
                let mut out = Vec::new();
                for name in list.get_ref() {
                    let s = Spanned::new(list.span(), name.clone());
                    let i = self.model_ref(&s, "models")?;
                    if out.contains(&i) {
                        return Err(self.r.err(
                            list.span(),
                            &self.key("models"),
                            format!("model `{name}` is listed twice"),
                        ));
                    }
                    out.push(i);
                }
                Ok(out)
            }
        }
    }
    /// Bounds sample-by-sample simulation: `passes` (each an O(k) draw per vote or rerun, see
    /// [`literal_passes`]) x (sum of k) x `count` x problems simulated samples, by
    /// [`MAX_TOTAL_VOTES`], with the error at `count`'s key.
    pub(super) fn literal_samples(
        &self,
        passes: u64,
        ks: &[u32],
        (what, count): (&str, u64),
    ) -> Res<()> {
        let ksum: u64 = ks.iter().map(|&x| u64::from(x)).sum();
        let draws = passes
            .saturating_mul(ksum)
            .saturating_mul(count)
            .saturating_mul(self.bench.problems as u64);
        if draws > MAX_TOTAL_VOTES {
            let v = if what == "votes" {
                &self.e.votes
            } else {
                &self.e.reruns
            };
            let at = v.as_ref().map_or(self.span.clone(), |v| v.span());
            return Err(self.r.err(at, &self.key(what), format!("{passes} sample-by-sample pass(es) (per series: 1 for several attractor shares, unparsed or split, 1 for a verifier, 2 for a grader) x (sum of k = {ksum}) x {count} {what} x {} problems = {draws} simulated samples (drawn one by one): at most {MAX_TOTAL_VOTES} per experiment; lower `{what}` or the largest k", self.bench.problems)));
        }
        Ok(())
    }

    pub(super) fn curves(&self) -> Res<ExperimentSpec> {
        let models = self.model_list()?;
        let k = self.ints(&self.e.k, "k", Some(&DEFAULT_K))?;
        let votes = self.value_or(&self.e.votes, "votes", 4000)?;
        let submissions = self.submissions(&models, &k)?;
        // Answer modes, verifiers and graders are simulated sample by sample: O(k) draws per
        // vote and pass (a grader two: the graded samples and the graded vote); n@k one more.
        let passes = models
            .iter()
            .map(|&m| literal_passes(&self.models[m]) + u64::from(!submissions.is_empty()))
            .sum();
        self.literal_samples(passes, &k, ("votes", votes))?;
        Ok(ExperimentSpec::Curves(CurvesSpec {
            models,
            k,
            submissions,
            votes,
            vote_rule: self.vote_rule(),
        }))
    }

    /// The n of n@k, refused for a model whose outcome model cannot enumerate it and bounded by
    /// the enumeration's work: sum over k of the compositions of k samples ((k + 1)(k + 2) / 2,
    /// or (k + 1)(k + 2)(k + 3) / 6 with a `split` share) x problems x n values, at most
    /// [`MAX_SUBMIT_TERMS`].
    fn submissions(&self, models: &[usize], ks: &[u32]) -> Res<Vec<u32>> {
        let list = self.ints(&self.e.submissions, "submissions", Some(&[]))?;
        let Some(v) = &self.e.submissions else {
            return Ok(list);
        };
        for &m in models {
            let model = &self.models[m];
            let outcome = OutcomeModel::of(model, model.vote_rule);
            if let Some(what) = outcome.refuses(Metric::SubmitAtK(1)) {
                return Err(self.r.err(v.span(), &self.key("submissions"), format!("model `{}` has {what}: n@k is enumerated for one attractor share (a number); list only such models in this curves experiment, or drop `submissions`", model.name)));
            }
            let per_problem: u64 = ks
                .iter()
                .map(|&k| {
                    let k = u64::from(k);
                    if model.split > 0.0 {
                        (k + 1) * (k + 2) * (k + 3) / 6
                    } else {
                        (k + 1) * (k + 2) / 2
                    }
                })
                .sum();
            let terms = per_problem
                .saturating_mul(self.bench.problems as u64)
                .saturating_mul(list.len() as u64);
            if terms > MAX_SUBMIT_TERMS {
                return Err(self.r.err(v.span(), &self.key("submissions"), format!("n@k of model `{}` enumerates {terms} compositions of k samples (sum over k of {}, x {} problems x {} n values): at most {MAX_SUBMIT_TERMS}; lower the largest k{} or list fewer n", model.name, if model.split > 0.0 { "(k+1)(k+2)(k+3)/6 with split" } else { "(k+1)(k+2)/2" }, self.bench.problems, list.len(), if model.split > 0.0 { " (split makes it cubic in k)" } else { "" })));
            }
        }
        Ok(list)
    }

    pub(super) fn attractor_sweep(&self) -> Res<ExperimentSpec> {
        let model = self.one_model("model")?;
        let m = &self.models[model];
        if let Some(g) = &self.e.grader_fpr {
            return self.grader_fpr_sweep(model, g);
        }
        let (list, axis) = match (&self.e.attractor, &self.e.split) {
            (Some(_), Some(s)) => {
                return Err(self.r.err(s.span(), &self.key("split"), "give either `attractor` (attractor shares or factors) or `split` (split shares) to sweep, not both"));
            }
            (None, None) => {
                return Err(self.r.err(
                    self.span.clone(),
                    &self.key("attractor"),
                    "missing key `attractor` (a list of shares in [0, 1]) or `split` (a list of split shares in [0, 1))",
                ))
            }
            (None, Some(s)) => {
                for (k, v) in [
                    ("vary", self.e.vary.as_ref().map(|x| x.span())),
                    ("share", self.e.share.as_ref().map(|x| x.span())),
                ] {
                    if let Some(at) = v {
                        return Err(self.r.err(at, &self.key(k), format!("`{k}` applies to an `attractor` list, not to a `split` sweep")));
                    }
                }
                self.check_list(s, "split")?;
                (s.get_ref().clone(), SweepAxis::Split)
            }
            (Some(a), None) => {
                let list = a.get_ref();
                let vary = self.e.vary.as_ref().map_or(SweepVary::Share, |v| *v.get_ref());
                let axis = match vary {
                    SweepVary::Share => {
                        let len = m.attractors.len();
                        let j = match &self.e.share {
                            None => 0,
                            Some(j) if (1..=len.max(1) as u64).contains(j.get_ref()) => {
                                *j.get_ref() as usize - 1
                            }
                            Some(j) => {
                                return Err(self.r.err(j.span(), &self.key("share"), format!("model `{}` has {len} attractor share(s): `share` must be between 1 and {}, got {}", m.name, len.max(1), j.get_ref())));
                            }
                        };
                        SweepAxis::Share(j)
                    }
                    SweepVary::Scale => {
                        if let Some(j) = &self.e.share {
                            return Err(self.r.err(j.span(), &self.key("share"), "`share` picks the one share to sweep: it does not apply with vary = \"scale\", which scales every share"));
                        }
                        SweepAxis::Scale
                    }
                };
                // Shares by the key table; factors (vary = "scale") of any size >= 0, the list's
                // shape still the table's.
                let mut d = range::domain(self.line("attractor"));
                if axis == SweepAxis::Scale {
                    d.bounds = at_least(0.0).bounds;
                }
                self.r.list(list, a.span(), &d, &self.key("attractor"))?;
                for (i, &x) in list.iter().enumerate() {
                    let at = self.r.entry(a, i);
                    let (v, _) = axis.apply(&m.attractors, m.split, x);
                    let total: f64 = v.iter().sum();
                    if total > 1.0 + SHARE_SUM_SLACK {
                        return Err(self.r.err(at, &self.key("attractor"), format!("{x} makes model `{}`'s attractor shares sum to {total}: at most 1 (they split the wrong answers)", m.name)));
                    }
                }
                (list.clone(), axis)
            }
        };
        let k = self.ints(&self.e.k, "k", Some(&DEFAULT_K))?;
        let votes = self.value_or(&self.e.votes, "votes", 4000)?;
        // Series with answer modes or a grader are simulated sample by sample (O(k) per vote).
        let passes = list
            .iter()
            .map(|&x| {
                let (v, split) = axis.apply(&m.attractors, m.split, x);
                let modes = v.len() > 1 || split != 0.0 || m.unparsed != 0.0;
                u64::from(modes) + 2 * u64::from(m.grader.is_some())
            })
            .sum();
        self.literal_samples(passes, &k, ("votes", votes))?;
        Ok(ExperimentSpec::AttractorSweep(AttractorSweepSpec {
            model,
            attractors: list,
            axis,
            k,
            votes,
            vote_rule: self.vote_rule(),
        }))
    }

    /// `attractor-sweep` with `grader_fpr = [...]`: the model's grader false-positive rate at
    /// each value (its `fnr` kept, 0 without a `[model.grader]`). The model must have one
    /// attractor share and every answer parsed (graded votes are those of one repeated wrong
    /// answer), and no other swept key may be given.
    pub(super) fn grader_fpr_sweep(
        &self,
        model: usize,
        g: &Spanned<Vec<f64>>,
    ) -> Res<ExperimentSpec> {
        for (k, v) in [
            ("attractor", self.e.attractor.as_ref().map(|x| x.span())),
            ("split", self.e.split.as_ref().map(|x| x.span())),
            ("vary", self.e.vary.as_ref().map(|x| x.span())),
            ("share", self.e.share.as_ref().map(|x| x.span())),
        ] {
            if let Some(at) = v {
                return Err(self.r.err(at, &self.key(k), format!("give `grader_fpr` (false-positive rates of the grader) alone: `{k}` cannot be swept or set beside it")));
            }
        }
        self.check_list(g, "grader_fpr")?;
        let k = self.ints(&self.e.k, "k", Some(&DEFAULT_K))?;
        let votes = self.value_or(&self.e.votes, "votes", 4000)?;
        // Graded votes are simulated sample by sample: O(k) draws per vote and pass (the graded
        // samples and the graded vote), for every rate.
        self.literal_samples(2 * g.get_ref().len() as u64, &k, ("votes", votes))?;
        Ok(ExperimentSpec::AttractorSweep(AttractorSweepSpec {
            model,
            attractors: g.get_ref().clone(),
            axis: SweepAxis::GraderFpr,
            k,
            votes,
            vote_rule: self.vote_rule(),
        }))
    }

    pub(super) fn seed_variance(&self) -> Res<ExperimentSpec> {
        let model = self.one_model("model")?;
        Ok(ExperimentSpec::SeedVariance(SeedVarianceSpec {
            model,
            n: self.ints(&self.e.n, "n", Some(&[1, 4, 16, 64]))?,
            reruns: self.value_or(&self.e.reruns, "reruns", 20_000)?,
        }))
    }

    pub(super) fn vote_spread(&self) -> Res<ExperimentSpec> {
        let model = self.one_model("model")?;
        let k = self.ints(&self.e.k, "k", Some(&[16]))?;
        let reruns = self.value_or(&self.e.reruns, "reruns", 2000)?;
        // Answer modes or a grader: every vote drawn sample by sample (O(k) per vote, and the
        // graded samples another O(k)), one vote per problem per rerun.
        let m = &self.models[model];
        let passes = if m.grader.is_some() {
            2
        } else {
            u64::from(m.answer_modes_key().is_some())
        };
        self.literal_samples(passes, &k, ("reruns", reruns))?;
        Ok(ExperimentSpec::VoteSpread(VoteSpreadSpec {
            model,
            k,
            reruns,
            vote_rule: self.vote_rule(),
        }))
    }

    /// The two models of a pairwise experiment, `a` (described as `roles.0`) and `b`
    /// (`roles.1`): both required, both listed models, and different (`needs` says why).
    pub(super) fn model_pair(&self, roles: (&str, &str), needs: &str) -> Res<(usize, usize)> {
        let get = |k: &str, role: &str| {
            let v = if k == "a" { &self.e.a } else { &self.e.b };
            v.as_ref().ok_or_else(|| {
                self.r.err(
                    self.span.clone(),
                    &self.key(k),
                    format!("missing key `{k}` (the name of the {role})"),
                )
            })
        };
        let (a, b) = (get("a", roles.0)?, get("b", roles.1)?);
        let (ai, bi) = (self.model_ref(a, "a")?, self.model_ref(b, "b")?);
        if ai == bi {
            return Err(self.r.err(
                b.span(),
                &self.key("b"),
                format!("`a` and `b` are both `{}`: {needs}", b.get_ref()),
            ));
        }
        Ok((ai, bi))
    }

    pub(super) fn head_to_head(&self) -> Res<ExperimentSpec> {
        let (ai, bi) = self.model_pair(
            ("baseline model", "challenger model"),
            "a head-to-head needs two different models",
        )?;
        Ok(ExperimentSpec::HeadToHead(HeadToHeadSpec {
            a: ai,
            b: bi,
            n: self.ints(&self.e.n, "n", Some(&[1, 4, 16, 64]))?,
            reruns: self.value_or(&self.e.reruns, "reruns", 20_000)?,
        }))
    }

    pub(super) fn contamination(&self) -> Res<ExperimentSpec> {
        let model = self.one_model("model")?;
        let m = &self.models[model];
        let at = self
            .e
            .model
            .as_ref()
            .map_or(self.span.clone(), Spanned::span);
        if !self.bench.contaminated_models.contains(&model) {
            return Err(self.r.err(at, &self.key("model"), format!("model `{}` is not in benchmark.contaminated_models: a contamination experiment needs a contaminated model (with its memorized_rate)", m.name)));
        }
        let Difficulty::LogitNormal { sigma, .. } = self.bench.difficulty else {
            return Err(self.r.err(at, &self.key("model"), "a contamination experiment draws public and fresh problems from the benchmark's population: give the benchmark mu and sigma, not `rates`"));
        };
        if !matches!(m.source, RateSource::Shift(_)) {
            return Err(self.r.err(at, &self.key("model"), format!("model `{}` lists its own `rates`: a contamination experiment needs a population, so give it a `shift`", m.name)));
        }
        let spread = sigma.hypot(m.shift_sd);
        if spread > MAX_OMEGA {
            let what = if m.shift_sd > 0.0 {
                format!("benchmark.sigma = {sigma} with model `{}`'s shift_sd = {} (its rates spread with SD sqrt(sigma^2 + shift_sd^2) = {spread})", m.name, m.shift_sd)
            } else {
                format!("benchmark.sigma = {sigma}")
            };
            return Err(self.r.err(at, &self.key("model"), format!("{what}: the exact count pmfs of a contamination experiment are integrated for a spread up to {MAX_OMEGA}")));
        }
        let n = self.ints(&self.e.n, "n", Some(&[1]))?;
        if n.len() != 1 {
            let s = self.e.n.as_ref().map_or(self.span.clone(), Spanned::span);
            return Err(self.r.err(
                s,
                &self.key("n"),
                format!("list one value (samples per problem), got {}", n.len()),
            ));
        }
        let n = n[0];
        let fresh = self.ints(&self.e.fresh, "fresh", Some(&[25, 50, 100, 200, 400]))?;
        let shares = self.list_or(&self.e.shares, "shares", Some(&[self.bench.contaminated]))?;
        let alpha = self.value_or(&self.e.alpha, "alpha", 0.05)?;
        let target_power = self.value_or(&self.e.target_power, "target_power", 0.8)?;
        let max_fresh = self.value_or(&self.e.max_fresh, "max_fresh", 2000)? as u32;
        let largest = fresh.last().copied().unwrap_or(1).max(max_fresh);
        let support = u64::from(n) * (self.bench.problems as u64 + u64::from(largest));
        if support > MAX_CONTAMINATION_SUPPORT {
            let s = self.e.n.as_ref().map_or(self.span.clone(), Spanned::span);
            return Err(self.r.err(s, &self.key("n"), format!("n x (public problems + largest fresh set) = {n} x ({} + {largest}) = {support}: at most {MAX_CONTAMINATION_SUPPORT} (the exact gap convolves count pmfs directly, O((n N)^2)); lower n, max_fresh or the fresh sizes, or use fewer problems", self.bench.problems)));
        }
        Ok(ExperimentSpec::Contamination(ContaminationSpec {
            model,
            n,
            fresh,
            shares,
            alpha,
            target_power,
            max_fresh,
            reruns: self.value_or(&self.e.reruns, "reruns", 4000)?,
        }))
    }

    pub(super) fn budget(&self) -> Res<ExperimentSpec> {
        let ms = self.model_list()?;
        self.r
            .need_tokens(&ms, self.models, self.span.clone(), &self.key("models"))?;
        // An uncapped budget is refused with a pointer to where uncapped rows are.
        if let Some((i, b)) = self.e.budgets.as_ref().and_then(|b| {
            let i = b.get_ref().iter().position(|&x| x == f64::INFINITY)?;
            Some((i, b))
        }) {
            return Err(self.r.err(self.r.entry(b, i), &self.key("budgets"), format!("inf is not a valid budget here: every budget must be {}; for the uncapped accuracy and cost use a `cost` experiment without `cap`, whose rows are uncapped", range::domain(self.line("budgets")).phrase())));
        }
        Ok(ExperimentSpec::Budget(BudgetSpec {
            models: ms,
            budgets: self.list_or(&self.e.budgets, "budgets", None)?,
            traces: self.value_or(&self.e.traces, "traces", 4000)?,
        }))
    }

    pub(super) fn cost(&self) -> Res<ExperimentSpec> {
        let ms = self.model_list()?;
        self.r
            .need_tokens(&ms, self.models, self.span.clone(), &self.key("models"))?;
        let cap = self.opt(&self.e.cap, "cap")?;
        let price = self.opt(&self.e.price_per_mtok, "price_per_mtok")?;
        let k = self.ints(&self.e.k, "k", Some(&[1, 8, 32]))?;
        let votes = self.value_or(&self.e.votes, "votes", 4000)?;
        // Votes with answer modes and best-of-k picks are drawn sample by sample (O(k) each) at
        // every k > 1 (a graded pick adds one draw per vote, counted by the plain limit).
        let passes = ms
            .iter()
            .map(|&m| {
                let m = &self.models[m];
                u64::from(m.answer_modes_key().is_some()) + u64::from(m.verifier.is_some())
            })
            .sum();
        let voting: Vec<u32> = k.iter().copied().filter(|&x| x > 1).collect();
        self.literal_samples(passes, &voting, ("votes", votes))?;
        Ok(ExperimentSpec::Cost(CostSpec {
            models: ms,
            k,
            cap,
            price_per_mtok: price,
            votes,
            traces: self.value_or(&self.e.traces, "traces", 4000)?,
            vote_rule: self.vote_rule(),
        }))
    }
}

/// The O(k) sample-by-sample passes one `curves` vote of `m` costs: 1 with several attractor
/// shares, `unparsed` or `split` (the vote drawn answer by answer), 1 for a verifier (its k
/// samples), 2 for a grader (the graded samples and the graded vote). 0 for the canonical model,
/// whose votes cost O(1).
/// Most compositions the exact n@k of one model in one curves experiment may enumerate (about
/// 10 s on one core).
pub(crate) const MAX_SUBMIT_TERMS: u64 = 500_000_000;

fn literal_passes(m: &Model) -> u64 {
    u64::from(m.answer_modes_key().is_some())
        + u64::from(m.verifier.is_some())
        + 2 * u64::from(m.grader.is_some())
}
