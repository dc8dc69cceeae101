//! The one validator: raw values (from a file, from `evalsim plan`'s flags, from a sweep cell)
//! checked and resolved into a [`Scenario`]. Every default and the seed are set here, once.
//! Every error names the file, the line and column, the key, and what would be valid; nothing
//! is clamped silently. Depends on [`super::raw`], [`super::spec`], [`super::error`],
//! [`crate::model`] and one closed form of [`crate::exact::plan`] (points of pass@1 to logits).
use std::ops::Range;

use toml::Spanned;

use super::error::{Locator, ScenarioError};
use super::keys::{self, Table};
use super::raw::{
    ExperimentKind, RawBenchmark, RawExperiment, RawGrader, RawModel, RawScenario, RawTokens,
    RawVerifier, SweepVary,
};
use super::spec::{
    CheckCells, Experiment, ExperimentSpec, Metric, ModelShiftSd, Plan, PlanAnswers, PlanSpec,
    Scenario, SweepAxis,
};
use super::{
    DEFAULT_K, MAX_COUNT_SUPPORT, MAX_DRAWS, MAX_EXPERIMENT_NAME, MAX_GRID, MAX_K, MAX_LIST,
    MAX_LOGIT, MAX_PROBLEMS, MAX_SAMPLES, MAX_SHIFT_SD, MAX_TOKEN_SCALE, MAX_TOTAL_VOTES,
    RUN_FILES,
};
/// Largest k of a plan's maj@k when the model has several attractor shares or `split` (the
/// mode recurrence runs on every population node of every power evaluation).
pub const MAX_PLAN_MODES_K: u64 = 16;

/// Largest n x (public + fresh problems) of a contamination experiment.
const MAX_CONTAMINATION_SUPPORT: u64 = 40_000;
use crate::exact::plan::MAX_PLAN_SHIFT_SD;
use crate::exact::run_corr::MAX_OMEGA;
use crate::model::{
    Benchmark, Difficulty, Fallback, Grader, Model, Placement, RateSource, ThresholdVerifier,
    TraceLengths, Verifier, VerifierKind, VoteRule,
};

/// Largest |separation| of a score verifier: beyond it a correct sample outscores every wrong one
/// (or the reverse) to within the quadrature's error at every k up to [`MAX_K`], and the
/// integration range of `exact::verifier` would have to widen.
pub const MAX_SEPARATION: f64 = 10.0;

/// The seed of a scenario that names none.
pub const DEFAULT_SEED: u64 = 1;

/// Most repeated wrong answers (`attractor` as a list) a model may list.
pub const MAX_ATTRACTORS: usize = 8;

/// How far above 1 a list of attractor shares may sum (decimal shares such as 0.1 + 0.2 + 0.7
/// sum to 1 only to within a few ulps); the one-off share is then 0.
pub const SHARE_SUM_SLACK: f64 = 1e-12;

impl Scenario {
    /// Parses and validates a scenario from TOML text. `name` is the scenario's short name and
    /// `file` what error messages call the source.
    ///
    /// # Errors
    /// [`ScenarioError::Invalid`] for a syntax error, a wrong type, an unknown key, a missing
    /// key or a value out of range, located at its line and column.
    pub fn from_toml(src: &str, name: &str, file: &str) -> Result<Scenario, ScenarioError> {
        Scenario::from_raw(parse(src, file)?, src, name, file)
    }

    /// Validates a raw scenario read from (or edited after reading) `src`: errors are located in
    /// `src`.
    ///
    /// # Errors
    /// As [`Scenario::from_toml`].
    pub fn from_raw(
        raw: RawScenario,
        src: &str,
        name: &str,
        file: &str,
    ) -> Result<Scenario, ScenarioError> {
        let loc = Locator::new(file, src);
        Resolver { loc: &loc }.scenario(raw, name, file)
    }
}

/// The raw stage of [`Scenario::from_toml`]: types and keys checked, values not yet.
///
/// # Errors
/// [`ScenarioError::Invalid`] for a syntax error, a wrong type or an unknown key.
pub fn parse(src: &str, file: &str) -> Result<RawScenario, ScenarioError> {
    let loc = Locator::new(file, src);
    toml::from_str(src).map_err(|e| loc.toml_error(&e))
}

struct Resolver<'a> {
    loc: &'a Locator<'a>,
}

type Res<T> = Result<T, ScenarioError>;

impl Resolver<'_> {
    fn err(&self, span: Range<usize>, key: &str, msg: impl Into<String>) -> ScenarioError {
        self.loc.error(span, key, msg)
    }

    /// The span of entry `index` of a list value (see [`Locator::element`]).
    fn entry<T>(&self, list: &Spanned<Vec<T>>, index: usize) -> Range<usize> {
        self.loc.element(list.span(), index)
    }

    fn scenario(&self, raw: RawScenario, name: &str, file: &str) -> Res<Scenario> {
        let seed = raw.seed.as_ref().map_or(DEFAULT_SEED, |s| *s.get_ref());
        let bench_raw = raw.benchmark.ok_or_else(|| {
            self.err(
                0..0,
                "benchmark",
                "missing table [benchmark] (problems, mu, sigma, placement or rates)",
            )
        })?;
        let bench_span = bench_raw.span();
        let mut bench_inner = bench_raw.into_inner();
        let contaminated = bench_inner.contaminated.take();
        let contaminated_models = bench_inner.contaminated_models.take();
        let mut benchmark = self.benchmark(bench_inner, bench_span)?;
        let memorized_spans: Vec<Option<Range<usize>>> = raw
            .model
            .iter()
            .map(|m| m.get_ref().memorized_rate.as_ref().map(Spanned::span))
            .collect();
        let model_spans: Vec<Range<usize>> = raw.model.iter().map(Spanned::span).collect();
        if raw.model.is_empty() {
            return Err(self.err(0..0, "model", "no [[model]] given: a scenario needs at least one model (name, shift or rates, attractor)"));
        }
        let mut models: Vec<Model> = Vec::new();
        for (i, m) in raw.model.into_iter().enumerate() {
            let span = m.span();
            let model = self.model(m.into_inner(), span.clone(), i + 1, &benchmark)?;
            if models.iter().any(|o| o.name == model.name) {
                return Err(self.err(
                    span,
                    &format!("model[{}].name", i + 1),
                    format!(
                        "duplicate model name `{}`: every model needs its own name",
                        model.name
                    ),
                ));
            }
            models.push(model);
        }
        self.contamination_keys(
            &mut benchmark,
            contaminated,
            contaminated_models,
            &models,
            (&memorized_spans, &model_spans),
        )?;
        let mut experiments: Vec<Experiment> = Vec::new();
        for (i, e) in raw.experiment.into_iter().enumerate() {
            let span = e.span();
            let name_span = e.get_ref().name.as_ref().map(Spanned::span);
            let exp = self.experiment(
                e.into_inner(),
                span.clone(),
                i + 1,
                &models,
                &benchmark,
                seed,
            )?;
            if experiments.iter().any(|o| o.name == exp.name) {
                return Err(self.err(span, &format!("experiment[{}].name", i + 1), format!("duplicate experiment name `{}`: give each experiment of the same kind its own `name`", exp.name)));
            }
            self.output_names(&exp, &experiments, name_span.unwrap_or(span), i + 1)?;
            experiments.push(exp);
        }
        Ok(Scenario {
            name: name.to_string(),
            source: file.to_string(),
            title: raw
                .title
                .map_or_else(|| name.to_string(), |t| t.into_inner()),
            seed,
            benchmark,
            models,
            experiments,
        })
    }

    /// Refuses an experiment whose output files would overwrite the run's own files or those of
    /// an earlier experiment (e.g. a `curves` named `budget-crossover` next to a `budget`).
    fn output_names(
        &self,
        exp: &Experiment,
        earlier: &[Experiment],
        span: Range<usize>,
        idx: usize,
    ) -> Res<()> {
        let reserved = "reserved: checks, results, summary and report, for the run's checks.csv, results.json, summary.json and report.md; and every file of another experiment: <name>.csv/.png/.svg, a budget's <name>-crossover.csv and <name>-lengths, a seed-variance's <name>-histograms and <name>-sd, a plan's <name>.txt/.json, <name>-loss, <name>-detectable and <name>-heatmap";
        let key = format!("experiment[{idx}].name");
        let stem = exp.name.as_str();
        if RUN_FILES.iter().any(|f| f.split('.').next() == Some(stem)) {
            return Err(self.err(
                span,
                &key,
                format!("`{stem}` is reserved for the run's own output files; give the experiment another `name` ({reserved})"),
            ));
        }
        let files = exp.spec.kind().output_files(stem);
        for (j, other) in earlier.iter().enumerate() {
            let theirs = other.spec.kind().output_files(&other.name);
            if let Some(f) = files.iter().find(|f| theirs.contains(f)) {
                return Err(self.err(
                    span,
                    &key,
                    format!(
                        "the output file `{f}` of this {} experiment `{stem}` is also written by experiment[{}] (the {} experiment `{}`); give one of them another `name` ({reserved})",
                        exp.spec.kind().as_str(),
                        j + 1,
                        other.spec.kind().as_str(),
                        other.name
                    ),
                ));
            }
        }
        Ok(())
    }

    fn benchmark(&self, b: RawBenchmark, span: Range<usize>) -> Res<Benchmark> {
        if let Some(rates) = b.rates {
            for (key, v) in [
                ("mu", b.mu.as_ref().map(|x| x.span())),
                ("sigma", b.sigma.as_ref().map(|x| x.span())),
                ("placement", b.placement.as_ref().map(|x| x.span())),
            ] {
                if let Some(s) = v {
                    return Err(self.err(s, &format!("benchmark.{key}"), "give either `rates` or a logit-normal spread (mu, sigma, placement), not both"));
                }
            }
            let rs = rates.span();
            let rates = rates.into_inner();
            self.rates(&rates, rs.clone(), "benchmark.rates")?;
            if let Some(p) = b.problems {
                if p.get_ref() != &(rates.len() as u64) {
                    return Err(self.err(p.span(), "benchmark.problems", format!("problems = {} but `rates` lists {} rates: drop `problems` or make them agree", p.get_ref(), rates.len())));
                }
            }
            return Ok(Benchmark {
                problems: rates.len(),
                difficulty: Difficulty::Rates { rates },
                contaminated: 0.0,
                contaminated_models: Vec::new(),
            });
        }
        let problems = b.problems.ok_or_else(|| self.err(span.clone(), "benchmark.problems", "missing key `problems` (number of problems, 1 to 100000), or give an explicit `rates` list"))?;
        let n = *problems.get_ref();
        if n == 0 || n > MAX_PROBLEMS {
            return Err(self.err(
                problems.span(),
                "benchmark.problems",
                format!("must be between 1 and {MAX_PROBLEMS}, got {n}"),
            ));
        }
        let mu = b.mu.ok_or_else(|| {
            self.err(
                span.clone(),
                "benchmark.mu",
                "missing key `mu` (mean of the logit-normal spread, a finite number)",
            )
        })?;
        self.finite(&mu, "benchmark.mu")?;
        if mu.get_ref().abs() > MAX_LOGIT {
            return Err(self.err(mu.span(), "benchmark.mu", format!("must be a number of logits between -{MAX_LOGIT} and {MAX_LOGIT} (beyond, every problem's pass rate is 0 or 1 to double precision), got {}", mu.get_ref())));
        }
        let sigma = b.sigma.ok_or_else(|| {
            self.err(
                span.clone(),
                "benchmark.sigma",
                "missing key `sigma` (sd of the logit-normal spread, > 0)",
            )
        })?;
        if !(sigma.get_ref().is_finite() && *sigma.get_ref() > 0.0 && *sigma.get_ref() <= MAX_LOGIT)
        {
            return Err(self.err(
                sigma.span(),
                "benchmark.sigma",
                format!(
                    "must be a finite number > 0 and at most {MAX_LOGIT} (the sd of the logit-normal spread, in logits), got {}",
                    sigma.get_ref()
                ),
            ));
        }
        Ok(Benchmark {
            problems: n as usize,
            difficulty: Difficulty::LogitNormal {
                mu: mu.into_inner(),
                sigma: sigma.into_inner(),
                placement: b.placement.map_or(Placement::Quantiles, |p| p.into_inner()),
            },
            contaminated: 0.0,
            contaminated_models: Vec::new(),
        })
    }

    fn finite(&self, v: &Spanned<f64>, key: &str) -> Res<f64> {
        if v.get_ref().is_finite() {
            Ok(*v.get_ref())
        } else {
            Err(self.err(
                v.span(),
                key,
                format!("must be a finite number, got {}", v.get_ref()),
            ))
        }
    }

    fn rates(&self, rates: &[f64], span: Range<usize>, key: &str) -> Res<()> {
        if rates.is_empty() {
            return Err(self.err(
                span,
                key,
                "the list of rates is empty: give one rate in [0, 1] per problem",
            ));
        }
        if rates.len() as u64 > MAX_PROBLEMS {
            return Err(self.err(
                span,
                key,
                format!("{} rates: at most {MAX_PROBLEMS} problems", rates.len()),
            ));
        }
        if let Some((i, r)) = rates
            .iter()
            .enumerate()
            .find(|(_, r)| !(0.0..=1.0).contains(*r))
        {
            return Err(self.err(
                self.loc.element(span, i),
                key,
                format!("rate #{} is {r}: every rate must be in [0, 1]", i + 1),
            ));
        }
        Ok(())
    }

    fn model(&self, m: RawModel, span: Range<usize>, idx: usize, bench: &Benchmark) -> Res<Model> {
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
        // Per-run noise is integrated for the canonical answer model only (one attractor, every
        // answer parsed, no verifier, a perfect grader); on top of a shift_sd it is the noise
        // of each run around the model's own per-problem rate.
        if let Some(v) = m.run_sd.as_ref().filter(|_| run_sd > 0.0) {
            let other = if attractors.len() > 1 {
                Some("a list of attractor shares")
            } else if unparsed != 0.0 {
                Some("unparsed")
            } else if split != 0.0 {
                Some("split")
            } else if m.verifier.is_some() {
                Some("[model.verifier]")
            } else if m.grader.is_some() {
                Some("[model.grader]")
            } else {
                None
            };
            if let Some(other) = other {
                return Err(self.err(
                    v.span(),
                    &key("run_sd"),
                    format!("cannot be combined with {other} in one model yet: per-run noise is integrated for one attractor share, every answer parsed, no verifier and a perfect grader; give this model run_sd = 0 or drop {other}"),
                ));
            }
        }
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
        })
    }

    /// `benchmark.contaminated` and `benchmark.contaminated_models`, checked against the models
    /// (each listed model needs its `memorized_rate`; a `memorized_rate` needs its model listed).
    fn contamination_keys(
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

    /// Refuses a model that sets a key this experiment does not honour (the key table's kinds
    /// of each model key: `run_sd`, `shift_sd`), or whose contamination it does not model. The
    /// error points at the experiment's reference to the model (`refs`, the spans of `model`,
    /// `models`, `a` and `b`) and names the kinds that honour the key.
    fn supported(
        &self,
        spec: &ExperimentSpec,
        (models, bench): (&[Model], &Benchmark),
        span: Range<usize>,
        refs: &[(&'static str, Range<usize>)],
        idx: usize,
    ) -> Res<()> {
        let kind = spec.kind();
        let name = kind.as_str();
        for i in spec.models() {
            let m = &models[i];
            let (key, at) = refs
                .iter()
                .find(|(k, _)| ["model", "models", "a", "b"].contains(k))
                .map_or((format!("experiment[{idx}]"), span.clone()), |(k, s)| {
                    (format!("experiment[{idx}].{k}"), s.clone())
                });
            let contaminated = bench.contaminated_models.contains(&i);
            if contaminated && kind != ExperimentKind::Contamination {
                return Err(self.err(at, &key, format!("model `{}` is in benchmark.contaminated_models: only a `contamination` experiment models its memorised problems; use a model without contamination in this {name} experiment", m.name)));
            }
            for (k, value) in [("run_sd", m.run_sd), ("shift_sd", m.shift_sd)] {
                let Some(entry) = keys::find(Table::Model, k, None) else {
                    continue;
                };
                if value > 0.0 && !entry.for_kind(kind) {
                    let by: Vec<&str> = entry.kinds.iter().map(|k| k.as_str()).collect();
                    let by = match by.split_last() {
                        Some((last, [])) => last.to_string(),
                        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
                        None => String::new(),
                    };
                    return Err(self.err(at, &key, format!("model `{}` has {k} = {value}, which a {name} experiment does not honour ({k} is honoured by {by}); use a model with {k} = 0 here", m.name)));
                }
            }
            // Per-run noise on a benchmark redrawn every rerun: the seed variance of a shifted
            // model is integrated for fixed problems only.
            let redrawn = bench.placement() == Some(Placement::Random)
                && matches!(m.source, RateSource::Shift(_));
            if m.run_sd > 0.0 && kind == ExperimentKind::SeedVariance && redrawn {
                return Err(self.err(at, &key, format!("model `{}` has run_sd = {}: seed-variance models per-run noise on fixed problems, not with placement = \"random\"; use a model with run_sd = 0 here or placement = \"quantiles\"", m.name, m.run_sd)));
            }
        }
        Ok(())
    }

    /// A probability key of `[model.verifier]` or `[model.grader]`: finite and in [0, 1].
    fn probability(&self, v: &Spanned<f64>, key: &str, what: &str) -> Res<f64> {
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
    fn verifier(&self, v: RawVerifier, span: Range<usize>, idx: usize) -> Res<Verifier> {
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
    fn grader(&self, g: RawGrader, idx: usize) -> Res<Grader> {
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
    fn attractor_shares(&self, v: &Spanned<toml::Value>, key: &str) -> Res<(f64, Vec<f64>)> {
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
    fn extraction_share(&self, v: &Option<Spanned<f64>>, key: &str, what: &str) -> Res<f64> {
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
    fn shift_sd(&self, v: Option<Spanned<f64>>, source: &RateSource, key: &str) -> Res<f64> {
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

    fn tokens(&self, t: RawTokens, span: Range<usize>, idx: usize) -> Res<TraceLengths> {
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
    fn token_range(&self, t: &TraceLengths, span: Range<usize>, idx: usize) -> Res<()> {
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

    fn experiment(
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
        let kinds =
            "curves, attractor-sweep, seed-variance, vote-spread, head-to-head, budget, cost, plan, contamination";
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
        };
        self.supported(&spec, (models, bench), span.clone(), &refs, idx)?;
        // Bound the simulated draws (votes, reruns or traces times the problems they cover), which
        // bounds the run time; memory is streamed. The same count drives the progress bar.
        let p = problems as u64;
        let total = spec.work(problems).draws;
        let too_many = total > MAX_TOTAL_VOTES;
        match &spec {
            ExperimentSpec::Curves {
                models, k, votes, ..
            } => self.vote_grid(
                &e,
                span.clone(),
                idx,
                (models.len(), k.len(), *votes),
                problems,
            )?,
            ExperimentSpec::AttractorSweep {
                attractors,
                k,
                votes,
                ..
            } => self.vote_grid(
                &e,
                span.clone(),
                idx,
                (attractors.len(), k.len(), *votes),
                problems,
            )?,
            ExperimentSpec::Plan { plan, .. } if too_many => {
                let at = e.reruns.as_ref().map_or(span, |v| v.span());
                return Err(self.err(at, &key("reruns"), format!("the checked cells (check_cells, and check_population in both population designs) x 2 models x their problems x {} reruns = {total} simulated draws: at most {MAX_TOTAL_VOTES} per experiment; lower `reruns`, `check_cells` or `check_population`", plan.reruns)));
            }
            ExperimentSpec::Plan { .. } => {}
            _ if too_many => {
                let (what, at) = match &spec {
                    ExperimentSpec::Budget { .. } => {
                        ("traces", e.traces.as_ref().map(|v| v.span()))
                    }
                    ExperimentSpec::Cost { .. } => ("votes", e.votes.as_ref().map(|v| v.span())),
                    _ => ("reruns", e.reruns.as_ref().map(|v| v.span())),
                };
                let at = at.unwrap_or(span);
                return Err(self.err(at, &key(what), format!("this experiment would simulate {total} draws ({problems} problems x its cells x `{what}`): at most {MAX_TOTAL_VOTES} per experiment; lower `{what}`")));
            }
            _ => {}
        }
        // The exact count distributions of the noise experiments live over 0..=n N.
        let count_n = match &spec {
            ExperimentSpec::SeedVariance { n, .. } | ExperimentSpec::HeadToHead { n, .. } => {
                n.iter().copied().max()
            }
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
    fn vote_grid(
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

    fn need_tokens(
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
struct ExpCtx<'a> {
    r: &'a Resolver<'a>,
    e: &'a RawExperiment,
    span: Range<usize>,
    idx: usize,
    models: &'a [Model],
    bench: &'a Benchmark,
    seed: u64,
}

impl ExpCtx<'_> {
    fn key(&self, k: &str) -> String {
        format!("experiment[{}].{k}", self.idx)
    }

    fn vote_rule(&self) -> Option<VoteRule> {
        self.e.vote_rule.as_ref().map(|v| *v.get_ref())
    }

    fn model_ref(&self, v: &Spanned<String>, k: &str) -> Res<usize> {
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
    fn one_model(&self, k: &str) -> Res<usize> {
        let v = self.e.model.as_ref().ok_or_else(|| {
            self.r.err(
                self.span.clone(),
                &self.key(k),
                format!("missing key `{k}` (the name of a model)"),
            )
        })?;
        self.model_ref(v, k)
    }
    fn model_list(&self) -> Res<Vec<usize>> {
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
    fn ints(
        &self,
        v: &Option<Spanned<Vec<u64>>>,
        k: &str,
        max: u64,
        default: Option<&[u32]>,
    ) -> Res<Vec<u32>> {
        let Some(v) = v else {
            return default.map(|d| d.to_vec()).ok_or_else(|| {
                self.r.err(
                    self.span.clone(),
                    &self.key(k),
                    format!("missing key `{k}` (a list of whole numbers from 1 to {max})"),
                )
            });
        };
        self.list_len(v, k, 1, "values")?;
        self.every(
            v,
            k,
            |x| x != 0 && x <= max,
            |x| format!("{x} is out of range: every value must be between 1 and {max}"),
        )?;
        self.strictly_increasing(v, k, "values")?;
        Ok(v.get_ref().iter().map(|&x| x as u32).collect())
    }
    fn count(&self, v: &Option<Spanned<u64>>, k: &str, default: u64) -> Res<u64> {
        match v {
            None => Ok(default),
            Some(v) if *v.get_ref() == 0 || *v.get_ref() > MAX_DRAWS => Err(self.r.err(
                v.span(),
                &self.key(k),
                format!("must be between 1 and {MAX_DRAWS}, got {}", v.get_ref()),
            )),
            Some(v) => Ok(*v.get_ref()),
        }
    }

    /// Bounds sample-by-sample simulation: `passes` (each an O(k) draw per vote or rerun, see
    /// [`literal_passes`]) x (sum of k) x `count` x problems simulated samples, by
    /// [`MAX_TOTAL_VOTES`], with the error at `count`'s key.
    fn literal_samples(&self, passes: u64, ks: &[u32], (what, count): (&str, u64)) -> Res<()> {
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

    fn curves(&self) -> Res<ExperimentSpec> {
        let models = self.model_list()?;
        let k = self.ints(&self.e.k, "k", MAX_K, Some(&DEFAULT_K))?;
        let votes = self.count(&self.e.votes, "votes", 4000)?;
        // Answer modes, verifiers and graders are simulated sample by sample: O(k) draws per
        // vote and pass (a grader two: the graded samples and the graded vote).
        let passes = models
            .iter()
            .map(|&m| literal_passes(&self.models[m]))
            .sum();
        self.literal_samples(passes, &k, ("votes", votes))?;
        Ok(ExperimentSpec::Curves {
            models,
            k,
            votes,
            vote_rule: self.vote_rule(),
        })
    }

    fn attractor_sweep(&self) -> Res<ExperimentSpec> {
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
                self.sweep_list(s, "split", "split share")?;
                self.every(
                    s,
                    "split",
                    |x| (0.0..1.0).contains(&x),
                    |x| format!("{x} is out of range: every split share must be in [0, 1)"),
                )?;
                (s.get_ref().clone(), SweepAxis::Split)
            }
            (Some(a), None) => {
                self.sweep_list(a, "attractor", "share")?;
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
                for (i, &x) in list.iter().enumerate() {
                    let at = self.r.entry(a, i);
                    if axis == SweepAxis::Scale {
                        if !(x.is_finite() && x >= 0.0) {
                            return Err(self.r.err(at, &self.key("attractor"), format!("{x} is not a valid factor: with vary = \"scale\" every value is a factor >= 0 on the attractor shares")));
                        }
                    } else if !(0.0..=1.0).contains(&x) {
                        return Err(self.r.err(at, &self.key("attractor"), format!("{x} is out of range: every share must be in [0, 1]")));
                    }
                    let (v, _) = axis.apply(&m.attractors, m.split, x);
                    let total: f64 = v.iter().sum();
                    if total > 1.0 + SHARE_SUM_SLACK {
                        return Err(self.r.err(at, &self.key("attractor"), format!("{x} makes model `{}`'s attractor shares sum to {total}: at most 1 (they split the wrong answers)", m.name)));
                    }
                }
                (list.clone(), axis)
            }
        };
        let k = self.ints(&self.e.k, "k", MAX_K, Some(&DEFAULT_K))?;
        let votes = self.count(&self.e.votes, "votes", 4000)?;
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
        Ok(ExperimentSpec::AttractorSweep {
            model,
            attractors: list,
            axis,
            k,
            votes,
            vote_rule: self.vote_rule(),
        })
    }

    /// `attractor-sweep` with `grader_fpr = [...]`: the model's grader false-positive rate at
    /// each value (its `fnr` kept, 0 without a `[model.grader]`). The model must have one
    /// attractor share and every answer parsed (graded votes are those of one repeated wrong
    /// answer), and no other swept key may be given.
    fn grader_fpr_sweep(&self, model: usize, g: &Spanned<Vec<f64>>) -> Res<ExperimentSpec> {
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
        self.sweep_list(g, "grader_fpr", "false-positive rate")?;
        self.every(
            g,
            "grader_fpr",
            |x| (0.0..=1.0).contains(&x),
            |x| format!("{x} is out of range: every false-positive rate must be a probability in [0, 1]"),
        )?;
        let k = self.ints(&self.e.k, "k", MAX_K, Some(&DEFAULT_K))?;
        let votes = self.count(&self.e.votes, "votes", 4000)?;
        // Graded votes are simulated sample by sample: O(k) draws per vote and pass (the graded
        // samples and the graded vote), for every rate.
        self.literal_samples(2 * g.get_ref().len() as u64, &k, ("votes", votes))?;
        Ok(ExperimentSpec::AttractorSweep {
            model,
            attractors: g.get_ref().clone(),
            axis: SweepAxis::GraderFpr,
            k,
            votes,
            vote_rule: self.vote_rule(),
        })
    }

    /// A sweep's list: 1 to [`MAX_LIST`] values.
    fn sweep_list(&self, v: &Spanned<Vec<f64>>, k: &str, what: &str) -> Res<()> {
        self.list_len(v, k, 1, &format!("{what}s"))
    }

    /// The list `v` of key `k` holds `min_len` to [`MAX_LIST`] entries; `what` names them
    /// (plural) in the error.
    fn list_len<T>(&self, v: &Spanned<Vec<T>>, k: &str, min_len: usize, what: &str) -> Res<()> {
        let n = v.get_ref().len();
        if n < min_len || n > MAX_LIST {
            return Err(self.r.err(
                v.span(),
                &self.key(k),
                format!("must list {min_len} to {MAX_LIST} {what}, got {n}"),
            ));
        }
        Ok(())
    }

    /// Every entry of the list `v` of key `k` passes `ok`; else an error at the first that does
    /// not, saying `why` it is refused.
    fn every<T: Copy>(
        &self,
        v: &Spanned<Vec<T>>,
        k: &str,
        ok: impl Fn(T) -> bool,
        why: impl Fn(T) -> String,
    ) -> Res<()> {
        match v.get_ref().iter().position(|&x| !ok(x)) {
            Some(i) => Err(self
                .r
                .err(self.r.entry(v, i), &self.key(k), why(v.get_ref()[i]))),
            None => Ok(()),
        }
    }

    /// The list `v` of key `k` strictly increases; else an error at the first entry out of
    /// order, its message starting with `what` (the entries' name).
    fn strictly_increasing<T: PartialOrd + std::fmt::Display>(
        &self,
        v: &Spanned<Vec<T>>,
        k: &str,
        what: &str,
    ) -> Res<()> {
        let list = v.get_ref();
        match list.windows(2).position(|w| w[0] >= w[1]) {
            Some(i) => Err(self.r.err(
                self.r.entry(v, i + 1),
                &self.key(k),
                format!(
                    "{what} must be strictly increasing: {} follows {}",
                    list[i + 1],
                    list[i]
                ),
            )),
            None => Ok(()),
        }
    }

    fn seed_variance(&self) -> Res<ExperimentSpec> {
        let model = self.one_model("model")?;
        Ok(ExperimentSpec::SeedVariance {
            model,
            n: self.ints(&self.e.n, "n", MAX_SAMPLES, Some(&[1, 4, 16, 64]))?,
            reruns: self.count(&self.e.reruns, "reruns", 20_000)?,
        })
    }

    fn vote_spread(&self) -> Res<ExperimentSpec> {
        let model = self.one_model("model")?;
        let k = self.ints(&self.e.k, "k", MAX_K, Some(&[16]))?;
        let reruns = self.count(&self.e.reruns, "reruns", 2000)?;
        // Answer modes or a grader: every vote drawn sample by sample (O(k) per vote, and the
        // graded samples another O(k)), one vote per problem per rerun.
        let m = &self.models[model];
        let passes = if m.grader.is_some() {
            2
        } else {
            u64::from(m.answer_modes_key().is_some())
        };
        self.literal_samples(passes, &k, ("reruns", reruns))?;
        Ok(ExperimentSpec::VoteSpread {
            model,
            k,
            reruns,
            vote_rule: self.vote_rule(),
        })
    }

    fn head_to_head(&self) -> Res<ExperimentSpec> {
        let a = self.e.a.as_ref().ok_or_else(|| {
            self.r.err(
                self.span.clone(),
                &self.key("a"),
                "missing key `a` (the name of the baseline model)",
            )
        })?;
        let b = self.e.b.as_ref().ok_or_else(|| {
            self.r.err(
                self.span.clone(),
                &self.key("b"),
                "missing key `b` (the name of the challenger model)",
            )
        })?;
        let (ai, bi) = (self.model_ref(a, "a")?, self.model_ref(b, "b")?);
        if ai == bi {
            return Err(self.r.err(
                b.span(),
                &self.key("b"),
                format!(
                    "`a` and `b` are both `{}`: a head-to-head needs two different models",
                    b.get_ref()
                ),
            ));
        }
        Ok(ExperimentSpec::HeadToHead {
            a: ai,
            b: bi,
            n: self.ints(&self.e.n, "n", MAX_SAMPLES, Some(&[1, 4, 16, 64]))?,
            reruns: self.count(&self.e.reruns, "reruns", 20_000)?,
        })
    }

    fn unit(&self, v: &Option<Spanned<f64>>, k: &str, default: f64, what: &str) -> Res<f64> {
        match v {
            None => Ok(default),
            Some(x) if *x.get_ref() > 0.0 && *x.get_ref() < 1.0 => Ok(*x.get_ref()),
            Some(x) => Err(self.r.err(
                x.span(),
                &self.key(k),
                format!("must be in (0, 1) ({what}), got {}", x.get_ref()),
            )),
        }
    }

    fn contamination(&self) -> Res<ExperimentSpec> {
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
        let n = self.ints(&self.e.n, "n", MAX_SAMPLES, Some(&[1]))?;
        if n.len() != 1 {
            let s = self.e.n.as_ref().map_or(self.span.clone(), Spanned::span);
            return Err(self.r.err(
                s,
                &self.key("n"),
                format!("list one value (samples per problem), got {}", n.len()),
            ));
        }
        let n = n[0];
        let fresh = self.ints(
            &self.e.fresh,
            "fresh",
            MAX_PROBLEMS,
            Some(&[25, 50, 100, 200, 400]),
        )?;
        let shares = match &self.e.shares {
            None => vec![self.bench.contaminated],
            Some(v) => {
                self.list_len(v, "shares", 1, "shares")?;
                self.every(
                    v,
                    "shares",
                    |x| x > 0.0 && x <= 1.0,
                    |x| format!("{x} is out of range: every contaminated share must be in (0, 1]"),
                )?;
                self.strictly_increasing(v, "shares", "values")?;
                v.get_ref().clone()
            }
        };
        let alpha = self.unit(
            &self.e.alpha,
            "alpha",
            0.05,
            "the false-alarm rate of the detection test",
        )?;
        let target_power = self.unit(
            &self.e.target_power,
            "target_power",
            0.8,
            "the power the smallest fresh set must reach",
        )?;
        let max_fresh = match &self.e.max_fresh {
            None => 2000,
            Some(v) if *v.get_ref() >= 1 && *v.get_ref() <= MAX_PROBLEMS => *v.get_ref() as u32,
            Some(v) => return Err(self.r.err(v.span(), &self.key("max_fresh"), format!("must be between 1 and {MAX_PROBLEMS} (the largest fresh set the plan scans), got {}", v.get_ref()))),
        };
        let largest = fresh.last().copied().unwrap_or(1).max(max_fresh);
        let support = u64::from(n) * (self.bench.problems as u64 + u64::from(largest));
        if support > MAX_CONTAMINATION_SUPPORT {
            let s = self.e.n.as_ref().map_or(self.span.clone(), Spanned::span);
            return Err(self.r.err(s, &self.key("n"), format!("n x (public problems + largest fresh set) = {n} x ({} + {largest}) = {support}: at most {MAX_CONTAMINATION_SUPPORT} (the exact gap convolves count pmfs directly, O((n N)^2)); lower n, max_fresh or the fresh sizes, or use fewer problems", self.bench.problems)));
        }
        Ok(ExperimentSpec::Contamination {
            model,
            n,
            fresh,
            shares,
            alpha,
            target_power,
            max_fresh,
            reruns: self.count(&self.e.reruns, "reruns", 4000)?,
        })
    }

    fn budget(&self) -> Res<ExperimentSpec> {
        let ms = self.model_list()?;
        self.r
            .need_tokens(&ms, self.models, self.span.clone(), &self.key("models"))?;
        let b = self.e.budgets.as_ref().ok_or_else(|| {
            self.r.err(
                self.span.clone(),
                &self.key("budgets"),
                "missing key `budgets` (a list of token caps > 0, increasing)",
            )
        })?;
        self.list_len(b, "budgets", 2, "budgets")?;
        self.every(b, "budgets", |x| x > 0.0 && x <= MAX_TOKEN_SCALE, |x| if x == f64::INFINITY { format!("inf is not a valid budget here: every budget must be a finite number of tokens > 0 (at most {MAX_TOKEN_SCALE:e}); for the uncapped accuracy and cost use a `cost` experiment without `cap`, whose rows are uncapped") } else { format!("{x} is not a valid budget: every budget must be a finite number of tokens > 0 (at most {MAX_TOKEN_SCALE:e})") })?;
        self.strictly_increasing(b, "budgets", "budgets")?;
        let list = b.get_ref();
        Ok(ExperimentSpec::Budget {
            models: ms,
            budgets: list.clone(),
            traces: self.count(&self.e.traces, "traces", 4000)?,
        })
    }

    fn cost(&self) -> Res<ExperimentSpec> {
        let ms = self.model_list()?;
        self.r
            .need_tokens(&ms, self.models, self.span.clone(), &self.key("models"))?;
        let cap = match &self.e.cap {
            Some(c) if !(*c.get_ref() > 0.0 && *c.get_ref() <= MAX_TOKEN_SCALE) => {
                return Err(self.r.err(c.span(), &self.key("cap"), format!("must be a number of tokens > 0 and at most {MAX_TOKEN_SCALE:e} (leave `cap` out for unlimited), got {}", c.get_ref())));
            }
            c => c.as_ref().map(|c| *c.get_ref()),
        };
        let price = match &self.e.price_per_mtok {
            Some(p) if !(p.get_ref().is_finite() && *p.get_ref() >= 0.0) => {
                return Err(self.r.err(
                    p.span(),
                    &self.key("price_per_mtok"),
                    format!(
                        "must be a price >= 0 per million output tokens, got {}",
                        p.get_ref()
                    ),
                ));
            }
            p => p.as_ref().map(|p| *p.get_ref()),
        };
        let k = self.ints(&self.e.k, "k", MAX_K, Some(&[1, 8, 32]))?;
        let votes = self.count(&self.e.votes, "votes", 4000)?;
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
        Ok(ExperimentSpec::Cost {
            models: ms,
            k,
            cap,
            price_per_mtok: price,
            votes,
            traces: self.count(&self.e.traces, "traces", 4000)?,
            vote_rule: self.vote_rule(),
        })
    }

    fn plan_spec(&self) -> Res<ExperimentSpec> {
        let model = match &self.e.model {
            Some(v) => self.model_ref(v, "model")?,
            None => 0,
        };
        let plan = self.plan(&self.models[model])?;
        Ok(ExperimentSpec::Plan {
            model,
            plan: Box::new(plan),
        })
    }

    /// Model A's own `shift_sd` in a plan: none at 0; else B is a model of the same kind (its
    /// own deviation with the same SD) unless the block's `shift_sd` gives B's, `tau_b`. The
    /// residual SD of B's logit given A's ([`crate::exact::plan::conditional_b`]) must stay
    /// within the plan's quadrature, [`MAX_PLAN_SHIFT_SD`] (a located error at the experiment's
    /// `model` otherwise).
    fn plan_model_shift_sd(
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
    fn plan(&self, model: &Model) -> Res<Plan> {
        let (e, span, bench, seed) = (self.e, self.span.clone(), self.bench, self.seed);
        use super::raw::{RawCheckCells, RawMetric};
        let key = |k: &str| self.key(k);
        let Difficulty::LogitNormal { mu, sigma, .. } = bench.difficulty else {
            return Err(self.r.err(span, &key("kind"), "a `plan` needs the benchmark's logit-normal population (mu, sigma), not an explicit `rates` list: problems are drawn from it"));
        };
        let RateSource::Shift(shift) = model.source else {
            let at = e.model.as_ref().map_or(span.clone(), |m| m.span());
            return Err(self.r.err(at, &key("model"), format!("model `{}` lists explicit rates; a `plan` needs a model given by a `shift` (model A is the population shifted by it)", model.name)));
        };
        let block_shift_sd = match &e.shift_sd {
            None => None,
            Some(v) if (0.0..=MAX_PLAN_SHIFT_SD).contains(v.get_ref()) => {
                Some((*v.get_ref(), v.span()))
            }
            Some(v) => {
                return Err(self.r.err(
                    v.span(),
                    &key("shift_sd"),
                    format!(
                        "must be a number of logits between 0 (B is A shifted by the gap) and {MAX_PLAN_SHIFT_SD} (the per-problem disagreement SD tau; logit correlation sigma / sqrt(sigma^2 + tau^2)), got {}",
                        v.get_ref()
                    ),
                ));
            }
        };
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
                Metric::Pass1
            }
            RawMetric::Maj => {
                if let Some(s) = &e.samples {
                    return Err(self.r.err(s.span(), &key("samples"), "with metric = \"maj\" the grid's second axis is `k`, the samples per vote (one vote per problem per rerun): give `k` instead of `samples`"));
                }
                Metric::Maj {
                    attractor: model.attractor,
                    rule: e
                        .vote_rule
                        .as_ref()
                        .map_or(model.vote_rule, |v| *v.get_ref()),
                }
            }
        };
        let target_power = match &e.target_power {
            None => None,
            Some(v) if *v.get_ref() > 0.05 && *v.get_ref() < 1.0 => Some(*v.get_ref()),
            Some(v) => {
                return Err(self.r.err(
                    v.span(),
                    &key("target_power"),
                    format!(
                        "must be a power strictly between 0.05 (a 5% test's power at no gap) and 1, e.g. 0.9, got {}",
                        v.get_ref()
                    ),
                ));
            }
        };
        let gaps = match (&e.gap_logits, &e.gap_points) {
            (Some(_), Some(p)) => {
                return Err(self.r.err(
                    p.span(),
                    &key("gap_points"),
                    "give either `gap_logits` or `gap_points`, not both",
                ));
            }
            (None, None) => {
                return Err(self.r.err(span, &key("gap_logits"), "missing key `gap_logits` (B's advantage over A in logits, a list such as [0.21]) or `gap_points` (in points of population pass@1)"));
            }
            (Some(g), None) | (None, Some(g)) => {
                let k = if e.gap_logits.is_some() {
                    "gap_logits"
                } else {
                    "gap_points"
                };
                let list = g.get_ref();
                if list.is_empty() || list.len() > 64 {
                    return Err(self.r.err(
                        g.span(),
                        &key(k),
                        format!("must list 1 to 64 values, got {}", list.len()),
                    ));
                }
                let mut out = Vec::new();
                for (i, &x) in list.iter().enumerate() {
                    let logits = if k == "gap_logits" {
                        x
                    } else {
                        crate::exact::plan::gap_logits_for_points(
                            mu,
                            sigma,
                            model_shift_sd
                                .as_ref()
                                .map_or((0.0, shift_sd), |m| (m.tau, m.b())),
                            x,
                        )
                        .map_err(|m| self.r.err(self.r.entry(g, i), &key(k), m))?
                    };
                    if !(logits.is_finite() && logits.abs() <= MAX_LOGIT) {
                        return Err(self.r.err(self.r.entry(g, i), &key(k), format!("{x} is out of range: every gap must be a number of logits between -{MAX_LOGIT} and {MAX_LOGIT}")));
                    }
                    out.push(logits);
                }
                out
            }
        };
        let problems = self.ints(
            &e.problems,
            "problems",
            MAX_PROBLEMS,
            Some(&[30, 100, 300, 1000]),
        )?;
        // With several attractors or split a plan's maj@k runs the mode recurrence on every
        // population node (tens of thousands per power evaluation of the root-finding), so k is
        // capped; one attractor with unparsed or a grader costs what the canonical vote costs.
        let modes = model.attractors.len() > 1 || model.split != 0.0;
        let max_k = if modes { MAX_PLAN_MODES_K } else { MAX_K };
        let samples = match metric {
            Metric::Pass1 => self.ints(&e.samples, "samples", 4096, Some(&[1, 4, 16, 64]))?,
            Metric::Maj { .. } => {
                let ks = self.ints(&e.k, "k", MAX_K, None)?;
                if let (Some(i), Some(v)) =
                    (ks.iter().position(|&k| u64::from(k) > max_k), e.k.as_ref())
                {
                    return Err(self.r.err(self.r.entry(v, i), &key("k"), format!("{} is out of range: model `{}` sets {} and a plan's maj@k then runs the mode recurrence on every population node, so k may be at most {MAX_PLAN_MODES_K}; use smaller k, or a model with one attractor share and no split", ks[i], model.name, if model.split != 0.0 { "`split`" } else { "several attractor shares" })));
                }
                ks
            }
        };
        let fraction = |v: &Option<Spanned<f64>>, k: &str, default: f64| -> Res<f64> {
            match v {
                None => Ok(default),
                Some(x) if *x.get_ref() > 0.0 && *x.get_ref() < 1.0 => Ok(*x.get_ref()),
                Some(x) => Err(self.r.err(
                    x.span(),
                    &key(k),
                    format!("must be a fraction in (0, 1), got {}", x.get_ref()),
                )),
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
        let reruns = match &e.reruns {
            None => 20_000,
            Some(v) if *v.get_ref() > MAX_DRAWS => {
                return Err(self.r.err(
                    v.span(),
                    &key("reruns"),
                    format!(
                        "must be between 0 (no simulation) and {MAX_DRAWS}, got {}",
                        v.get_ref()
                    ),
                ));
            }
            Some(v) => *v.get_ref(),
        };
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
                target_loss_or_tie: fraction(&e.target_loss_or_tie, "target_loss_or_tie", 0.05)?,
                target_halfwidth: fraction(&e.target_halfwidth, "target_halfwidth", 0.02)?,
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
            answers: PlanAnswers::of(model),
        })
    }
}

/// The O(k) sample-by-sample passes one `curves` vote of `m` costs: 1 with several attractor
/// shares, `unparsed` or `split` (the vote drawn answer by answer), 1 for a verifier (its k
/// samples), 2 for a grader (the graded samples and the graded vote). 0 for the canonical model,
/// whose votes cost O(1).
fn literal_passes(m: &Model) -> u64 {
    u64::from(m.answer_modes_key().is_some())
        + u64::from(m.verifier.is_some())
        + 2 * u64::from(m.grader.is_some())
}

#[cfg(test)]
mod plan_block_tests {
    use super::*;

    const HEAD: &str = "seed = 4\n[benchmark]\nproblems = 10\nmu = 0.5\nsigma = 2.0\n[[model]]\nname = \"a\"\nshift = 0.0\nattractor = 0.5\n[[model]]\nname = \"b\"\nshift = -0.25\nattractor = 0.3\nvote_rule = \"absolute\"\n[[experiment]]\nkind = \"plan\"\n";

    fn load(body: &str) -> Result<Scenario, ScenarioError> {
        Scenario::from_toml(&format!("{HEAD}{body}"), "t", "t.toml")
    }

    #[test]
    fn a_plan_block_resolves_with_defaults_and_model_a() {
        let s =
            load("model = \"b\"\nmetric = \"maj\"\ngap_points = [3]\nk = [1, 9]\n").expect("valid");
        let ExperimentSpec::Plan { model, plan } = &s.experiments[0].spec else {
            panic!("not a plan");
        };
        assert_eq!(*model, 1);
        // A's population is the benchmark shifted by A's shift; maj@k takes A's share and rule.
        assert_eq!(plan.mu, 0.25);
        assert_eq!(
            plan.metric,
            Metric::Maj {
                attractor: 0.3,
                rule: VoteRule::Absolute
            }
        );
        assert_eq!(plan.samples, vec![1, 9]);
        assert_eq!(plan.problems, vec![30, 100, 300, 1000]);
        assert_eq!(
            (plan.check_cells, plan.check_population),
            (CheckCells::All, CheckCells::Count(4))
        );
        assert_eq!(
            (plan.reruns, plan.target_loss_or_tie, plan.target_halfwidth),
            (20_000, 0.05, 0.02)
        );
        // 3 points of pass@1 converted to logits on A's population.
        let m = crate::exact::plan::population_pair_moments(0.25, 2.0, plan.gaps[0]);
        assert!((m.mean_b - m.mean_a - 0.03).abs() < 1e-9);
    }

    #[test]
    fn a_plan_honours_its_models_own_shift_sd() {
        let head = HEAD.replace("shift = 0.0\n", "shift = 0.0\nshift_sd = 0.8\n");
        let s = Scenario::from_toml(&format!("{head}gap_points = [3]\n"), "t", "t.toml")
            .expect("valid");
        let ExperimentSpec::Plan { plan, .. } = &s.experiments[0].spec else {
            panic!("not a plan");
        };
        assert_eq!(plan.shift_sd, 0.0);
        assert_eq!(
            plan.model_shift_sd,
            Some(ModelShiftSd {
                model: "a".into(),
                tau: 0.8,
                tau_b: None,
            })
        );
        assert_eq!(plan.deviation_sds(), (0.8, 0.8));
        // gap_points is converted on both models' own populations.
        let m = crate::exact::plan::PopulationNodes::with_deviations(
            0.5,
            2.0,
            plan.gaps[0],
            (0.8, 0.8),
            |p| p,
        )
        .moments();
        assert!((m.mean_b - m.mean_a - 0.03).abs() < 1e-10);
        // Both at once: the block's shift_sd is B's own deviation SD, A keeps the model's.
        let plan_of = |extra: &str| {
            let s =
                Scenario::from_toml(&format!("{head}gap_logits = [0.2]\n{extra}"), "t", "t.toml")
                    .expect("valid");
            match s.experiments[0].spec.clone() {
                ExperimentSpec::Plan { plan, .. } => *plan,
                _ => panic!("not a plan"),
            }
        };
        let both = plan_of("shift_sd = 1.3\n");
        assert_eq!(both.deviation_sds(), (0.8, 1.3));
        assert_eq!(both.shift_sd, 0.0);
        assert_eq!(
            both.model_shift_sd.as_ref().and_then(|m| m.tau_b),
            Some(1.3)
        );
        // A block shift_sd of 0 gives a B without per-problem deviation.
        assert_eq!(plan_of("shift_sd = 0.0\n").deviation_sds(), (0.8, 0.0));
        // B's residual SD given A beyond the plan's limit is refused at the block's key, naming
        // both SDs.
        let text = Scenario::from_toml(
            &format!("{head}gap_logits = [0.2]\nshift_sd = 3.0\n"),
            "t",
            "t.toml",
        )
        .expect_err("too wide")
        .to_string();
        for want in [
            "t.toml:19:12",
            "experiment[1].shift_sd",
            "B's shift_sd = 3 beside model `a`'s own shift_sd = 0.8",
            "above the plan's limit",
        ] {
            assert!(text.contains(want), "{want}: {text}");
        }
    }

    #[test]
    fn a_plan_block_takes_shift_sd_and_target_power() {
        let s = load("gap_points = [3]\nshift_sd = 1.0\ntarget_power = 0.9\n").expect("valid");
        let ExperimentSpec::Plan { plan, .. } = &s.experiments[0].spec else {
            panic!("not a plan");
        };
        assert_eq!((plan.shift_sd, plan.target_power), (1.0, Some(0.9)));
        // 3 points of population pass@1 with B's disagreement in B's population.
        let m =
            crate::exact::plan::PopulationNodes::with_shift_sd(0.5, 2.0, plan.gaps[0], 1.0, |p| p)
                .moments();
        assert!((m.mean_b - m.mean_a - 0.03).abs() < 1e-9);
        // Without the keys: no disagreement, no extra power.
        let s = load("gap_logits = [0.2]\n").expect("valid");
        let ExperimentSpec::Plan { plan, .. } = &s.experiments[0].spec else {
            panic!("not a plan");
        };
        assert_eq!((plan.shift_sd, plan.target_power), (0.0, None));
    }

    #[test]
    fn plan_block_errors_name_line_column_and_key() {
        let cases = [
            (
                "gap_logits = [0.2]\nk = [4]\n",
                "t.toml:18:5: experiment[1].k: `k` applies only with metric = \"maj\"",
            ),
            (
                "gap_logits = [0.2]\ntarget_halfwidth = 2\n",
                "t.toml:18:20: experiment[1].target_halfwidth: must be a fraction in (0, 1), got 2",
            ),
            (
                "gap_logits = [0.2]\nmetric = \"maj\"\n",
                "experiment[1].k: missing key `k`",
            ),
            (
                "gap_logits = [0.2]\nmetric = \"top\"\n",
                "unknown variant `top`, expected `pass1` or `maj`",
            ),
            (
                "gap_logits = [0.2]\ngap_points = [1]\n",
                "experiment[1].gap_points: give either `gap_logits` or `gap_points`",
            ),
            (
                "gap_logits = [0.2]\nvotes = 10\n",
                "`votes` does not apply to a `plan` experiment",
            ),
            (
                "gap_logits = [0.2]\nproblems = [100, 30]\n",
                "experiment[1].problems: values must be strictly increasing",
            ),
            (
                "gap_logits = [0.2]\nshift_sd = 4\n",
                "t.toml:18:12: experiment[1].shift_sd: must be a number of logits between 0",
            ),
            (
                "gap_logits = [0.2]\nshift_sd = -0.5\n",
                "experiment[1].shift_sd: must be a number of logits between 0",
            ),
            (
                "gap_logits = [0.2]\ntarget_power = 0.01\n",
                "t.toml:18:16: experiment[1].target_power: must be a power strictly between 0.05",
            ),
        ];
        for (body, want) in cases {
            let e = load(body).expect_err(body).to_string();
            assert!(e.contains(want), "{body}: {e}");
        }
        let rates = "seed = 4\n[benchmark]\nrates = [0.1, 0.9]\n[[model]]\nname = \"a\"\nattractor = 0.5\n[[experiment]]\nkind = \"plan\"\ngap_logits = [0.2]\n";
        let e = Scenario::from_toml(rates, "r", "r.toml")
            .expect_err("rates")
            .to_string();
        assert!(e.contains("logit-normal population"), "{e}");
    }
}
