//! Scenario files: TOML in, a validated [`Scenario`] out.
//!
//! Loading has two stages (as in ripgrep's low-level and high-level arguments): [`raw`] mirrors
//! the file with serde (types and unknown keys, with TOML's line and column), then `resolve`
//! checks every value and builds the model structs. Every error names the file, the line and
//! column, the key, and what would be valid; nothing is clamped silently.
pub mod error;
pub mod grid;
pub mod raw;

use std::ops::Range;
use std::path::Path;

use serde::Serialize;
use toml::Spanned;

pub use error::{Locator, ScenarioError};
pub use raw::ExperimentKind;

use crate::model::{Benchmark, Difficulty, Model, Placement, RateSource, TraceLengths, VoteRule};
use raw::{RawBenchmark, RawExperiment, RawModel, RawScenario, RawTokens};

/// Largest benchmark a scenario may ask for.
pub const MAX_PROBLEMS: u64 = 100_000;
/// Largest k (samples per vote) a scenario may ask for.
pub const MAX_K: u64 = 1024;
/// Largest number of samples per problem per rerun.
pub const MAX_SAMPLES: u64 = 100_000;
/// Largest number of votes, reruns or traces per cell.
pub const MAX_DRAWS: u64 = 100_000_000;
/// Most entries n N + 1 of an exact count distribution (`seed-variance`, `head-to-head`: the
/// pmf of the benchmark's total correct count over 0..=n N, built by FFT convolution). Peak
/// memory of that convolution is about 230 bytes per entry (970 MB measured at N = 16,384 and
/// n = 256, half the limit; about 2 GB at the limit), so the product n x N of the largest n is
/// checked at load. N = 100,000 with n = 64 stays within it.
pub const MAX_COUNT_SUPPORT: u64 = 1 << 23;

/// Bound on token scales: every median trace length times e^(sigma^2) at most this, every
/// median at least its inverse (see `Resolver::token_range`), so squared lengths stay finite
/// and nonzero in f64.
pub const MAX_TOKEN_SCALE: f64 = 1e150;

/// Longest list (k values, n values, attractor shares, budgets, models) in one experiment.
pub const MAX_LIST: usize = 256;
/// Largest number of simulated votes in one experiment: problems x cells (series x k values) x
/// votes. About an hour on 8 cores; the simulation itself streams, so this bounds time, not memory.
pub const MAX_TOTAL_VOTES: u64 = 100_000_000_000;
/// Largest number of (cell, problem) pairs in one experiment (cells = series x k values): bounds
/// the memory of the per-problem counts and exact values (about 32 bytes each).
pub const MAX_GRID: u64 = 10_000_000;
/// Default k values of a curve: 1, 2, 4, ..., 64.
pub const DEFAULT_K: [u32; 7] = [1, 2, 4, 8, 16, 32, 64];

/// The named scenarios shipped with evalsim (also compiled into the binary).
pub const NAMED: &[(&str, &str)] = &[
    ("note", include_str!("../../scenarios/note.toml")),
    (
        "concentrated",
        include_str!("../../scenarios/concentrated.toml"),
    ),
];

/// Longest experiment name, in characters: it names output files (the longest is
/// `<name>-histograms.png`, plus a temporary suffix while writing), which file systems limit to
/// 255 bytes.
pub const MAX_EXPERIMENT_NAME: usize = 64;
/// The files of the run as a whole; no experiment may take their names.
pub const RUN_FILES: [&str; 4] = ["checks.csv", "results.json", "summary.json", "report.md"];

/// A validated scenario: everything needed to run its experiments.
#[derive(Debug, Clone, Serialize)]
pub struct Scenario {
    /// Short name: the named scenario or the file stem.
    pub name: String,
    /// Where it was read from (a path, or `<embedded NAME>`).
    pub source: String,
    /// Human title for figures and reports.
    pub title: String,
    /// Master seed of every random stream.
    pub seed: u64,
    /// The benchmark.
    pub benchmark: Benchmark,
    /// The models, in file order.
    pub models: Vec<Model>,
    /// The experiments, in file order.
    pub experiments: Vec<Experiment>,
}

/// One experiment of a scenario.
#[derive(Debug, Clone, Serialize)]
pub struct Experiment {
    /// Unique name, used in file names (defaults to the kind, numbered when repeated).
    pub name: String,
    /// What to run.
    pub spec: ExperimentSpec,
}

/// The parameters of an experiment, by kind. Model references are indices into
/// [`Scenario::models`].
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum ExperimentSpec {
    /// pass@k, pass^k and maj@k against k.
    Curves {
        models: Vec<usize>,
        k: Vec<u32>,
        votes: u64,
        vote_rule: Option<VoteRule>,
    },
    /// maj@k for a list of attractor shares.
    AttractorSweep {
        model: usize,
        attractors: Vec<f64>,
        k: Vec<u32>,
        votes: u64,
        vote_rule: Option<VoteRule>,
    },
    /// Seed variance of the pass@1 score.
    SeedVariance {
        model: usize,
        n: Vec<u32>,
        reruns: u64,
    },
    /// Seed SD of maj@k against averaged pass@1.
    VoteSpread {
        model: usize,
        k: Vec<u32>,
        reruns: u64,
        vote_rule: Option<VoteRule>,
    },
    /// Model b against model a on independent seeds.
    HeadToHead {
        a: usize,
        b: usize,
        n: Vec<u32>,
        reruns: u64,
    },
    /// Accuracy against a token budget.
    Budget {
        models: Vec<usize>,
        budgets: Vec<f64>,
        traces: u64,
    },
    /// Cost per correct answer of (model, k) strategies.
    Cost {
        models: Vec<usize>,
        k: Vec<u32>,
        cap: Option<f64>,
        price_per_mtok: Option<f64>,
        votes: u64,
        traces: u64,
        vote_rule: Option<VoteRule>,
    },
    /// How many problems and samples tell model A (`model`) from B = A + gap logits. The plan's
    /// `mu` is the benchmark's mu plus A's shift; its seed is set from the scenario when it runs.
    Plan {
        model: usize,
        plan: Box<crate::experiments::plan::Plan>,
    },
}

impl ExperimentSpec {
    /// The kind of this experiment.
    pub fn kind(&self) -> ExperimentKind {
        match self {
            ExperimentSpec::Curves { .. } => ExperimentKind::Curves,
            ExperimentSpec::AttractorSweep { .. } => ExperimentKind::AttractorSweep,
            ExperimentSpec::SeedVariance { .. } => ExperimentKind::SeedVariance,
            ExperimentSpec::VoteSpread { .. } => ExperimentKind::VoteSpread,
            ExperimentSpec::HeadToHead { .. } => ExperimentKind::HeadToHead,
            ExperimentSpec::Budget { .. } => ExperimentKind::Budget,
            ExperimentSpec::Cost { .. } => ExperimentKind::Cost,
            ExperimentSpec::Plan { .. } => ExperimentKind::Plan,
        }
    }
}

impl Scenario {
    /// Parses and validates a scenario from TOML text. `name` is the scenario's short name and
    /// `file` what error messages call the source.
    ///
    /// # Errors
    /// [`ScenarioError::Invalid`] for a syntax error, a wrong type, an unknown key, a missing
    /// key or a value out of range, located at its line and column.
    pub fn from_toml(src: &str, name: &str, file: &str) -> Result<Scenario, ScenarioError> {
        let loc = Locator::new(file, src);
        let raw: RawScenario = toml::from_str(src).map_err(|e| loc.toml_error(&e))?;
        Resolver { loc: &loc }.scenario(raw, name, file)
    }

    /// Loads a scenario by name or path: an existing file path (or anything ending in `.toml`),
    /// then `scenarios/NAME.toml` under the current directory, then the compiled-in named
    /// scenarios.
    ///
    /// # Errors
    /// [`ScenarioError::Read`] when a file cannot be read, [`ScenarioError::UnknownName`] when
    /// the name matches nothing, and any error of [`Scenario::from_toml`].
    pub fn load(name_or_path: &str) -> Result<Scenario, ScenarioError> {
        let src = read_source(name_or_path)?;
        Scenario::from_toml(&src.text, &src.name, &src.file)
    }

    /// The index of a model by name.
    pub fn model_index(&self, name: &str) -> Option<usize> {
        self.models.iter().position(|m| m.name == name)
    }
}

/// The text of a scenario and what to call it.
#[derive(Debug, Clone)]
pub struct ScenarioSource {
    /// The TOML text.
    pub text: String,
    /// Short name (named scenario or file stem).
    pub name: String,
    /// What error messages call the source (a path or `<embedded NAME>`).
    pub file: String,
}

/// Finds a scenario's text the way [`Scenario::load`] does: an existing file path (or anything
/// ending in `.toml`), then `scenarios/NAME.toml`, then the compiled-in named scenarios.
///
/// # Errors
/// [`ScenarioError::Read`] when a file cannot be read, [`ScenarioError::UnknownName`] when the
/// name matches nothing.
pub fn read_source(name_or_path: &str) -> Result<ScenarioSource, ScenarioError> {
    let path = Path::new(name_or_path);
    let local = Path::new("scenarios").join(format!("{name_or_path}.toml"));
    let file = if path.is_file() || name_or_path.ends_with(".toml") {
        Some(path.to_path_buf())
    } else if !name_or_path.contains(['/', '\\']) && local.is_file() {
        Some(local)
    } else {
        None
    };
    if let Some(file) = file {
        let bytes = std::fs::read(&file).map_err(|e| ScenarioError::Read {
            path: file.display().to_string(),
            reason: e.to_string(),
        })?;
        let text = String::from_utf8(bytes).map_err(|e| {
            let at = e.utf8_error().valid_up_to();
            let bad = e.as_bytes().get(at).copied().unwrap_or(0);
            let lossy = String::from_utf8_lossy(e.as_bytes());
            let display = file.display().to_string();
            let loc = Locator::new(&display, &lossy);
            loc.error(
                at..at,
                loc.key_at(at),
                format!("byte 0x{bad:02X} is not valid UTF-8: scenario files must be UTF-8 text"),
            )
        })?;
        let name = file
            .file_stem()
            .map_or("scenario".into(), |s| s.to_string_lossy().into_owned());
        return Ok(ScenarioSource {
            text,
            name,
            file: file.display().to_string(),
        });
    }
    match NAMED.iter().find(|(n, _)| *n == name_or_path) {
        Some((n, src)) => Ok(ScenarioSource {
            text: (*src).to_string(),
            name: (*n).to_string(),
            file: format!("<embedded {n}>"),
        }),
        None => Err(ScenarioError::UnknownName {
            name: name_or_path.to_string(),
            available: NAMED.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", "),
        }),
    }
}

/// Validates raw values into the resolved scenario.
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
        let bench_raw = raw.benchmark.ok_or_else(|| {
            self.err(
                0..0,
                "benchmark",
                "missing table [benchmark] (problems, mu, sigma, placement or rates)",
            )
        })?;
        let bench_span = bench_raw.span();
        let benchmark = self.benchmark(bench_raw.into_inner(), bench_span)?;
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
        let mut experiments: Vec<Experiment> = Vec::new();
        for (i, e) in raw.experiment.into_iter().enumerate() {
            let span = e.span();
            let name_span = e.get_ref().name.as_ref().map(Spanned::span);
            let exp = self.experiment(e.into_inner(), span.clone(), i + 1, &models, &benchmark)?;
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
            seed: raw.seed.map_or(1, |s| s.into_inner()),
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
        let reserved = "reserved: checks, results, summary and report, for the run's checks.csv, results.json, summary.json and report.md; and every file of another experiment: <name>.csv/.png/.svg, a budget's <name>-crossover.csv and <name>-lengths, a seed-variance's <name>-histograms and <name>-sd, a plan's <name>.txt/.json, <name>-loss and <name>-heatmap";
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
        let sigma = b.sigma.ok_or_else(|| {
            self.err(
                span.clone(),
                "benchmark.sigma",
                "missing key `sigma` (sd of the logit-normal spread, > 0)",
            )
        })?;
        if !(sigma.get_ref().is_finite() && *sigma.get_ref() > 0.0) {
            return Err(self.err(
                sigma.span(),
                "benchmark.sigma",
                format!(
                    "must be a finite number > 0 (the sd of the logit-normal spread), got {}",
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
        let attractor = m.attractor.ok_or_else(|| self.err(span.clone(), &key("attractor"), "missing key `attractor`: the share of wrong answers that land on one repeated answer, in [0, 1]"))?;
        let a = *attractor.get_ref();
        if !(0.0..=1.0).contains(&a) {
            return Err(self.err(
                attractor.span(),
                &key("attractor"),
                format!(
                    "must be in [0, 1] (share of wrong answers on the repeated attractor), got {a}"
                ),
            ));
        }
        let tokens = match m.tokens {
            Some(t) => {
                let ts = t.span();
                Some(self.tokens(t.into_inner(), ts, idx)?)
            }
            None => None,
        };
        Ok(Model {
            name: name.into_inner(),
            source,
            attractor: a,
            vote_rule: m.vote_rule.map_or(VoteRule::Random, |v| v.into_inner()),
            tokens,
        })
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
    ) -> Res<Experiment> {
        let problems = bench.problems;
        let key = |k: &str| format!("experiment[{idx}].{k}");
        let kinds =
            "curves, attractor-sweep, seed-variance, vote-spread, head-to-head, budget, cost, plan";
        let kind = e.kind.as_ref().ok_or_else(|| {
            self.err(
                span.clone(),
                &key("kind"),
                format!("missing key `kind` (one of: {kinds})"),
            )
        })?;
        let kind = *kind.get_ref();
        for (k, s) in e.present() {
            if !kind.keys().contains(&k) {
                return Err(self.err(
                    s,
                    &key(k),
                    format!(
                        "`{k}` does not apply to a `{}` experiment (it takes: {})",
                        kind.as_str(),
                        kind.keys().join(", ")
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
        let model_ref = |v: &Spanned<String>, k: &str| -> Res<usize> {
            models
                .iter()
                .position(|m| &m.name == v.get_ref())
                .ok_or_else(|| {
                    let names: Vec<&str> = models.iter().map(|m| m.name.as_str()).collect();
                    self.err(
                        v.span(),
                        &key(k),
                        format!(
                            "no model named `{}` (models: {})",
                            v.get_ref(),
                            names.join(", ")
                        ),
                    )
                })
        };
        let one_model = |k: &str| -> Res<usize> {
            let v = e.model.as_ref().ok_or_else(|| {
                self.err(
                    span.clone(),
                    &key(k),
                    format!("missing key `{k}` (the name of a model)"),
                )
            })?;
            model_ref(v, k)
        };
        let model_list = || -> Res<Vec<usize>> {
            match &e.models {
                None => Ok((0..models.len()).collect()),
                Some(list) => {
                    if list.get_ref().is_empty() {
                        return Err(self.err(list.span(), &key("models"), "the list is empty: name at least one model, or leave `models` out for all"));
                    }
                    let mut out = Vec::new();
                    for name in list.get_ref() {
                        let s = Spanned::new(list.span(), name.clone());
                        let i = model_ref(&s, "models")?;
                        if out.contains(&i) {
                            return Err(self.err(
                                list.span(),
                                &key("models"),
                                format!("model `{name}` is listed twice"),
                            ));
                        }
                        out.push(i);
                    }
                    Ok(out)
                }
            }
        };
        let ints = |v: &Option<Spanned<Vec<u64>>>,
                    k: &str,
                    max: u64,
                    default: Option<&[u32]>|
         -> Res<Vec<u32>> {
            let Some(v) = v else {
                return default.map(|d| d.to_vec()).ok_or_else(|| {
                    self.err(
                        span.clone(),
                        &key(k),
                        format!("missing key `{k}` (a list of whole numbers from 1 to {max})"),
                    )
                });
            };
            let list = v.get_ref();
            if list.is_empty() || list.len() > MAX_LIST {
                return Err(self.err(
                    v.span(),
                    &key(k),
                    format!("must list 1 to {MAX_LIST} values, got {}", list.len()),
                ));
            }
            if let Some(i) = list.iter().position(|&x| x == 0 || x > max) {
                return Err(self.err(
                    self.entry(v, i),
                    &key(k),
                    format!(
                        "{} is out of range: every value must be between 1 and {max}",
                        list[i]
                    ),
                ));
            }
            if let Some(i) = list.windows(2).position(|w| w[0] >= w[1]) {
                return Err(self.err(
                    self.entry(v, i + 1),
                    &key(k),
                    format!(
                        "values must be strictly increasing: {} follows {}",
                        list[i + 1],
                        list[i]
                    ),
                ));
            }
            Ok(list.iter().map(|&x| x as u32).collect())
        };
        let count = |v: &Option<Spanned<u64>>, k: &str, default: u64| -> Res<u64> {
            match v {
                None => Ok(default),
                Some(v) if *v.get_ref() == 0 || *v.get_ref() > MAX_DRAWS => Err(self.err(
                    v.span(),
                    &key(k),
                    format!("must be between 1 and {MAX_DRAWS}, got {}", v.get_ref()),
                )),
                Some(v) => Ok(*v.get_ref()),
            }
        };
        let vote_rule = e.vote_rule.as_ref().map(|v| *v.get_ref());
        let spec = match kind {
            ExperimentKind::Curves => ExperimentSpec::Curves {
                models: model_list()?,
                k: ints(&e.k, "k", MAX_K, Some(&DEFAULT_K))?,
                votes: count(&e.votes, "votes", 4000)?,
                vote_rule,
            },
            ExperimentKind::AttractorSweep => {
                let a = e.attractor.as_ref().ok_or_else(|| {
                    self.err(
                        span.clone(),
                        &key("attractor"),
                        "missing key `attractor` (a list of shares in [0, 1])",
                    )
                })?;
                let list = a.get_ref();
                if list.is_empty() || list.len() > MAX_LIST {
                    return Err(self.err(
                        a.span(),
                        &key("attractor"),
                        format!("must list 1 to {MAX_LIST} shares, got {}", list.len()),
                    ));
                }
                if let Some(i) = list.iter().position(|x| !(0.0..=1.0).contains(x)) {
                    return Err(self.err(
                        self.entry(a, i),
                        &key("attractor"),
                        format!("{} is out of range: every share must be in [0, 1]", list[i]),
                    ));
                }
                ExperimentSpec::AttractorSweep {
                    model: one_model("model")?,
                    attractors: list.clone(),
                    k: ints(&e.k, "k", MAX_K, Some(&DEFAULT_K))?,
                    votes: count(&e.votes, "votes", 4000)?,
                    vote_rule,
                }
            }
            ExperimentKind::SeedVariance => ExperimentSpec::SeedVariance {
                model: one_model("model")?,
                n: ints(&e.n, "n", MAX_SAMPLES, Some(&[1, 4, 16, 64]))?,
                reruns: count(&e.reruns, "reruns", 20_000)?,
            },
            ExperimentKind::VoteSpread => ExperimentSpec::VoteSpread {
                model: one_model("model")?,
                k: ints(&e.k, "k", MAX_K, Some(&[16]))?,
                reruns: count(&e.reruns, "reruns", 2000)?,
                vote_rule,
            },
            ExperimentKind::HeadToHead => {
                let a = e.a.as_ref().ok_or_else(|| {
                    self.err(
                        span.clone(),
                        &key("a"),
                        "missing key `a` (the name of the baseline model)",
                    )
                })?;
                let b = e.b.as_ref().ok_or_else(|| {
                    self.err(
                        span.clone(),
                        &key("b"),
                        "missing key `b` (the name of the challenger model)",
                    )
                })?;
                let (ai, bi) = (model_ref(a, "a")?, model_ref(b, "b")?);
                if ai == bi {
                    return Err(self.err(
                        b.span(),
                        &key("b"),
                        format!(
                            "`a` and `b` are both `{}`: a head-to-head needs two different models",
                            b.get_ref()
                        ),
                    ));
                }
                ExperimentSpec::HeadToHead {
                    a: ai,
                    b: bi,
                    n: ints(&e.n, "n", MAX_SAMPLES, Some(&[1, 4, 16, 64]))?,
                    reruns: count(&e.reruns, "reruns", 20_000)?,
                }
            }
            ExperimentKind::Budget => {
                let ms = model_list()?;
                self.need_tokens(&ms, models, span.clone(), &key("models"))?;
                let b = e.budgets.as_ref().ok_or_else(|| {
                    self.err(
                        span.clone(),
                        &key("budgets"),
                        "missing key `budgets` (a list of token caps > 0, increasing)",
                    )
                })?;
                let list = b.get_ref();
                if list.len() < 2 || list.len() > MAX_LIST {
                    return Err(self.err(
                        b.span(),
                        &key("budgets"),
                        format!("must list 2 to {MAX_LIST} budgets, got {}", list.len()),
                    ));
                }
                if let Some(i) = list
                    .iter()
                    .position(|x| !(*x > 0.0 && *x <= MAX_TOKEN_SCALE))
                {
                    return Err(self.err(self.entry(b, i), &key("budgets"), if list[i] == f64::INFINITY { format!("inf is not a valid budget here: every budget must be a finite number of tokens > 0 (at most {MAX_TOKEN_SCALE:e}); for the uncapped accuracy and cost use a `cost` experiment without `cap`, whose rows are uncapped") } else { format!("{} is not a valid budget: every budget must be a finite number of tokens > 0 (at most {MAX_TOKEN_SCALE:e})", list[i]) }));
                }
                if let Some(i) = list.windows(2).position(|w| w[0] >= w[1]) {
                    return Err(self.err(
                        self.entry(b, i + 1),
                        &key("budgets"),
                        format!(
                            "budgets must be strictly increasing: {} follows {}",
                            list[i + 1],
                            list[i]
                        ),
                    ));
                }
                ExperimentSpec::Budget {
                    models: ms,
                    budgets: list.clone(),
                    traces: count(&e.traces, "traces", 4000)?,
                }
            }
            ExperimentKind::Cost => {
                let ms = model_list()?;
                self.need_tokens(&ms, models, span.clone(), &key("models"))?;
                let cap = match &e.cap {
                    Some(c) if !(*c.get_ref() > 0.0 && *c.get_ref() <= MAX_TOKEN_SCALE) => {
                        return Err(self.err(c.span(), &key("cap"), format!("must be a number of tokens > 0 and at most {MAX_TOKEN_SCALE:e} (leave `cap` out for unlimited), got {}", c.get_ref())));
                    }
                    c => c.as_ref().map(|c| *c.get_ref()),
                };
                let price = match &e.price_per_mtok {
                    Some(p) if !(p.get_ref().is_finite() && *p.get_ref() >= 0.0) => {
                        return Err(self.err(
                            p.span(),
                            &key("price_per_mtok"),
                            format!(
                                "must be a price >= 0 per million output tokens, got {}",
                                p.get_ref()
                            ),
                        ));
                    }
                    p => p.as_ref().map(|p| *p.get_ref()),
                };
                ExperimentSpec::Cost {
                    models: ms,
                    k: ints(&e.k, "k", MAX_K, Some(&[1, 8, 32]))?,
                    cap,
                    price_per_mtok: price,
                    votes: count(&e.votes, "votes", 4000)?,
                    traces: count(&e.traces, "traces", 4000)?,
                    vote_rule,
                }
            }
            ExperimentKind::Plan => {
                let model = match &e.model {
                    Some(v) => model_ref(v, "model")?,
                    None => 0,
                };
                let plan = self.plan(&e, span.clone(), idx, &models[model], bench, &ints)?;
                let draws = plan.simulated_draws();
                if draws > MAX_TOTAL_VOTES {
                    let at = e.reruns.as_ref().map_or(span, |v| v.span());
                    return Err(self.err(at, &key("reruns"), format!("the checked cells (check_cells, and check_population in both population designs) x 2 models x their problems x {} reruns = {draws} simulated draws: at most {MAX_TOTAL_VOTES} per experiment; lower `reruns`, `check_cells` or `check_population`", plan.reruns)));
                }
                ExperimentSpec::Plan {
                    model,
                    plan: Box::new(plan),
                }
            }
        };
        let grid = match &spec {
            ExperimentSpec::Curves {
                models, k, votes, ..
            } => Some((models.len(), k.len(), *votes)),
            ExperimentSpec::AttractorSweep {
                attractors,
                k,
                votes,
                ..
            } => Some((attractors.len(), k.len(), *votes)),
            _ => None,
        };
        if let Some((series, ks, votes)) = grid {
            let cells = (series as u64) * (ks as u64) * (problems as u64);
            let total = cells.saturating_mul(votes);
            if cells > MAX_GRID {
                return Err(self.err(span, &key("k"), format!("{series} series x {ks} k values x {problems} problems = {cells} (cell, problem) pairs: at most {MAX_GRID} per experiment; list fewer k values or models, or use fewer problems")));
            }
            if total > MAX_TOTAL_VOTES {
                let at = e.votes.as_ref().map_or(span, |v| v.span());
                return Err(self.err(at, &key("votes"), format!("{series} series x {ks} k values x {problems} problems x {votes} votes = {total} simulated votes: at most {MAX_TOTAL_VOTES} per experiment; lower `votes`")));
            }
        }
        // Every other kind: bound the total simulated draws (reruns, votes or traces times the
        // problems they cover), which bounds the run time; memory is streamed.
        let p = problems as u64;
        let work = match &spec {
            ExperimentSpec::SeedVariance { n, reruns, .. } => {
                Some(("reruns", n.len() as u64 * reruns * p))
            }
            ExperimentSpec::VoteSpread { k, reruns, .. } => {
                Some(("reruns", k.len() as u64 * reruns * p))
            }
            ExperimentSpec::HeadToHead { n, reruns, .. } => {
                Some(("reruns", 2 * n.len() as u64 * reruns * p))
            }
            ExperimentSpec::Budget { models, traces, .. } => {
                Some(("traces", models.len() as u64 * traces * p))
            }
            ExperimentSpec::Cost {
                models,
                k,
                votes,
                traces,
                ..
            } => {
                let voting = k.iter().filter(|&&k| k > 1).count() as u64;
                Some(("votes", models.len() as u64 * p * (traces + voting * votes)))
            }
            _ => None,
        };
        if let Some((what, total)) = work {
            if total > MAX_TOTAL_VOTES {
                let at = match what {
                    "reruns" => e.reruns.as_ref().map(|v| v.span()),
                    "traces" => e.traces.as_ref().map(|v| v.span()),
                    _ => e.votes.as_ref().map(|v| v.span()),
                }
                .unwrap_or(span);
                return Err(self.err(at, &key(what), format!("this experiment would simulate {total} draws ({problems} problems x its cells x `{what}`): at most {MAX_TOTAL_VOTES} per experiment; lower `{what}`")));
            }
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

    /// The plan of a `plan` experiment: model A is `model` (default: the first model), on the
    /// benchmark's logit-normal population shifted by A's own shift; B is A + each gap.
    fn plan<F>(
        &self,
        e: &RawExperiment,
        span: Range<usize>,
        idx: usize,
        model: &Model,
        bench: &Benchmark,
        ints: &F,
    ) -> Res<crate::experiments::plan::Plan>
    where
        F: Fn(&Option<Spanned<Vec<u64>>>, &str, u64, Option<&[u32]>) -> Res<Vec<u32>>,
    {
        use crate::experiments::plan::{CheckCells, Metric, Plan, PlanSpec};
        use raw::{RawCheckCells, RawMetric};
        let key = |k: &str| format!("experiment[{idx}].{k}");
        let Difficulty::LogitNormal { mu, sigma, .. } = bench.difficulty else {
            return Err(self.err(span, &key("kind"), "a `plan` needs the benchmark's logit-normal population (mu, sigma), not an explicit `rates` list: problems are drawn from it"));
        };
        let RateSource::Shift(shift) = model.source else {
            let at = e.model.as_ref().map_or(span.clone(), |m| m.span());
            return Err(self.err(at, &key("model"), format!("model `{}` lists explicit rates; a `plan` needs a model given by a `shift` (model A is the population shifted by it)", model.name)));
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
                        return Err(self.err(at, &key(k), format!("`{k}` applies only with metric = \"maj\" (with metric = \"pass1\" the grid's second axis is `samples`)")));
                    }
                }
                Metric::Pass1
            }
            RawMetric::Maj => {
                if let Some(s) = &e.samples {
                    return Err(self.err(s.span(), &key("samples"), "with metric = \"maj\" the grid's second axis is `k`, the samples per vote (one vote per problem per rerun): give `k` instead of `samples`"));
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
        let gaps = match (&e.gap_logits, &e.gap_points) {
            (Some(_), Some(p)) => {
                return Err(self.err(
                    p.span(),
                    &key("gap_points"),
                    "give either `gap_logits` or `gap_points`, not both",
                ));
            }
            (None, None) => {
                return Err(self.err(span, &key("gap_logits"), "missing key `gap_logits` (B's advantage over A in logits, a list such as [0.21]) or `gap_points` (in points of population pass@1)"));
            }
            (Some(g), None) | (None, Some(g)) => {
                let k = if e.gap_logits.is_some() {
                    "gap_logits"
                } else {
                    "gap_points"
                };
                let list = g.get_ref();
                if list.is_empty() || list.len() > 64 {
                    return Err(self.err(
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
                        crate::exact::plan::gap_logits_for_points(mu, sigma, x)
                            .map_err(|m| self.err(self.entry(g, i), &key(k), m))?
                    };
                    if !(logits.is_finite() && logits.abs() <= 40.0) {
                        return Err(self.err(self.entry(g, i), &key(k), format!("{x} is out of range: every gap must be a number of logits between -40 and 40")));
                    }
                    out.push(logits);
                }
                out
            }
        };
        let problems = ints(
            &e.problems,
            "problems",
            MAX_PROBLEMS,
            Some(&[30, 100, 300, 1000]),
        )?;
        let samples = match metric {
            Metric::Pass1 => ints(&e.samples, "samples", 4096, Some(&[1, 4, 16, 64]))?,
            Metric::Maj { .. } => ints(&e.k, "k", MAX_K, None)?,
        };
        let fraction = |v: &Option<Spanned<f64>>, k: &str, default: f64| -> Res<f64> {
            match v {
                None => Ok(default),
                Some(x) if *x.get_ref() > 0.0 && *x.get_ref() < 1.0 => Ok(*x.get_ref()),
                Some(x) => Err(self.err(
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
                    Some((RawCheckCells::Word(w), at)) => Err(self.err(
                        at,
                        &key(k),
                        format!("`{w}`: expected \"all\", \"none\" or a number of cells"),
                    )),
                }
            };
        let reruns = match &e.reruns {
            None => 20_000,
            Some(v) if *v.get_ref() == 0 || *v.get_ref() > MAX_DRAWS => {
                return Err(self.err(v.span(), &key("reruns"), format!("must be between 1 and {MAX_DRAWS}, got {} (use check_cells = \"none\" for no simulation)", v.get_ref())));
            }
            Some(v) => *v.get_ref(),
        };
        Ok(Plan {
            spec: PlanSpec {
                mu,
                sigma,
                gaps,
                problems: problems.iter().map(|&n| n as usize).collect(),
                samples,
                target_loss_or_tie: fraction(&e.target_loss_or_tie, "target_loss_or_tie", 0.05)?,
                target_halfwidth: fraction(&e.target_halfwidth, "target_halfwidth", 0.02)?,
                reruns,
                check_cells: cells(&e.check_cells, "check_cells", CheckCells::All)?,
                seed: 0,
            },
            metric,
            check_population: cells(
                &e.check_population,
                "check_population",
                CheckCells::Count(4),
            )?,
        })
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

#[cfg(test)]
mod plan_block_tests {
    use super::*;
    use crate::experiments::plan::{CheckCells, Metric};

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
