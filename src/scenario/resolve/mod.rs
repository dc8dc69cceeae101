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
    ExperimentKind, RawBenchmark, RawConfidence, RawExperiment, RawGrader, RawModel, RawScenario,
    RawTokens, RawVerifier, SweepVary,
};
use super::spec::{
    CheckCells, Experiment, ExperimentSpec, ModelShiftSd, Plan, PlanAnswers, PlanMetric, PlanSpec,
    Scenario, SweepAxis, DEFAULT_POPULATION_RERUNS,
};
use super::{
    DEFAULT_K, MAX_COUNT_SUPPORT, MAX_EXPERIMENT_NAME, MAX_GRID, MAX_TOKEN_SCALE, MAX_TOTAL_VOTES,
    RUN_FILES,
};
/// Largest k of a plan's maj@k when the model has several attractor shares or `split`: the
/// plan reads maj@k from conditional vote tables built once per answer law
/// ([`crate::exact::modes::ModesTable`]), whose build grows as m k^3 (about 1.4 s of CPU for a
/// whole two-attractor plan at k = 256, 24 s at k = 1,024).
pub const MAX_PLAN_MODES_K: u64 = 256;

/// Largest n x (public + fresh problems) of a contamination experiment.
const MAX_CONTAMINATION_SUPPORT: u64 = 40_000;
use crate::exact::plan::MAX_PLAN_SHIFT_SD;
use crate::exact::run_corr::MAX_OMEGA;
use crate::model::{
    Benchmark, Confidence, Difficulty, Fallback, Grader, Model, Placement, RateSource,
    ThresholdVerifier, TraceLengths, Verifier, VerifierKind, VoteRule,
};
use range::line;

pub use super::keys::MAX_SEPARATION;

/// The seed of a scenario that names none.
pub const DEFAULT_SEED: u64 = 1;

pub use super::keys::MAX_ATTRACTORS;

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

mod confidence;
mod experiment;
mod judge;
mod model;
mod plan;
mod range;
#[cfg(test)]
mod range_tests;

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
            self.rates(&rates, rs.clone(), Table::Benchmark, "benchmark.rates")?;
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
        let missing = |k: &str, what: &str| {
            let valid = line(Table::Benchmark, k, None).valid();
            let msg = format!(
                "missing key `{k}` ({what}, {valid}){}",
                if k == "problems" {
                    ", or give an explicit `rates` list"
                } else {
                    ""
                }
            );
            self.err(span.clone(), &format!("benchmark.{k}"), msg)
        };
        let problems = b
            .problems
            .ok_or_else(|| missing("problems", "the number of problems"))?;
        let n = self.value(
            &problems,
            line(Table::Benchmark, "problems", None),
            "benchmark.problems",
        )?;
        let mu =
            b.mu.ok_or_else(|| missing("mu", "mean of the logit-normal spread"))?;
        self.value(&mu, line(Table::Benchmark, "mu", None), "benchmark.mu")?;
        let sigma = b
            .sigma
            .ok_or_else(|| missing("sigma", "SD of the logit-normal spread"))?;
        self.value(
            &sigma,
            line(Table::Benchmark, "sigma", None),
            "benchmark.sigma",
        )?;
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

    /// A list of rates (`benchmark.rates`, or a model's own `rates` when `table` is
    /// [`Table::Model`]): its length and every rate, by the key table.
    fn rates(&self, rates: &[f64], span: Range<usize>, table: Table, key: &str) -> Res<()> {
        self.list(rates, span, &range::domain(line(table, "rates", None)), key)
    }
}

#[cfg(test)]
mod plan_block_tests {
    use super::*;
    use crate::scenario::spec::PlanExperimentSpec;

    const HEAD: &str = "seed = 4\n[benchmark]\nproblems = 10\nmu = 0.5\nsigma = 2.0\n[[model]]\nname = \"a\"\nshift = 0.0\nattractor = 0.5\n[[model]]\nname = \"b\"\nshift = -0.25\nattractor = 0.3\nvote_rule = \"absolute\"\n[[experiment]]\nkind = \"plan\"\n";

    fn load(body: &str) -> Result<Scenario, ScenarioError> {
        Scenario::from_toml(&format!("{HEAD}{body}"), "t", "t.toml")
    }

    #[test]
    fn population_reruns_default_to_the_smaller_of_reruns_and_3000_and_can_be_set() {
        let reruns_of = |extra: &str| {
            let s = load(&format!("gap_logits = [0.2]\n{extra}")).expect("valid");
            let ExperimentSpec::Plan(PlanExperimentSpec { plan, .. }) = &s.experiments[0].spec
            else {
                panic!("not a plan");
            };
            (plan.reruns, plan.population_reruns)
        };
        assert_eq!(reruns_of(""), (20_000, 3_000));
        assert_eq!(reruns_of("reruns = 1000\n"), (1_000, 1_000));
        assert_eq!(reruns_of("reruns = 0\n"), (0, 0));
        assert_eq!(reruns_of("population_reruns = 20000\n"), (20_000, 20_000));
        let err = load("gap_logits = [0.2]\npopulation_reruns = 100000000000\n").unwrap_err();
        assert!(err.to_string().contains("population_reruns"), "{err}");
    }

    #[test]
    fn a_plan_block_resolves_with_defaults_and_model_a() {
        let s =
            load("model = \"b\"\nmetric = \"maj\"\ngap_points = [3]\nk = [1, 9]\n").expect("valid");
        let ExperimentSpec::Plan(PlanExperimentSpec { model, plan }) = &s.experiments[0].spec
        else {
            panic!("not a plan");
        };
        assert_eq!(*model, 1);
        // A's population is the benchmark shifted by A's shift; maj@k takes A's share and rule.
        assert_eq!(plan.mu, 0.25);
        assert_eq!(
            plan.metric,
            PlanMetric::Maj {
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
        assert_eq!(plan.population_reruns, DEFAULT_POPULATION_RERUNS);
        // 3 points of pass@1 converted to logits on A's population.
        let m = crate::exact::plan::population_pair_moments(0.25, 2.0, plan.gaps[0]);
        assert!((m.mean_b - m.mean_a - 0.03).abs() < 1e-9);
    }

    #[test]
    fn a_plan_honours_its_models_own_shift_sd() {
        let head = HEAD.replace("shift = 0.0\n", "shift = 0.0\nshift_sd = 0.8\n");
        let s = Scenario::from_toml(&format!("{head}gap_points = [3]\n"), "t", "t.toml")
            .expect("valid");
        let ExperimentSpec::Plan(PlanExperimentSpec { plan, .. }) = &s.experiments[0].spec else {
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
            1,
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
                ExperimentSpec::Plan(PlanExperimentSpec { plan, .. }) => *plan,
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
        let ExperimentSpec::Plan(PlanExperimentSpec { plan, .. }) = &s.experiments[0].spec else {
            panic!("not a plan");
        };
        assert_eq!((plan.shift_sd, plan.target_power), (1.0, Some(0.9)));
        // 3 points of population pass@1 with B's disagreement in B's population.
        let m = crate::exact::plan::PopulationNodes::with_shift_sd(
            0.5,
            2.0,
            plan.gaps[0],
            1.0,
            1,
            |p| p,
        )
        .moments();
        assert!((m.mean_b - m.mean_a - 0.03).abs() < 1e-9);
        // Without the keys: no disagreement, no extra power.
        let s = load("gap_logits = [0.2]\n").expect("valid");
        let ExperimentSpec::Plan(PlanExperimentSpec { plan, .. }) = &s.experiments[0].spec else {
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
                "t.toml:18:20: experiment[1].target_halfwidth: must be a fraction in (0, 1) (the plan's target half-width",
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
                "t.toml:18:12: experiment[1].shift_sd: must be a number of logits in [0, 3]",
            ),
            (
                "gap_logits = [0.2]\nshift_sd = -0.5\n",
                "experiment[1].shift_sd: must be a number of logits in [0, 3]",
            ),
            (
                "gap_logits = [0.2]\ntarget_power = 0.01\n",
                "t.toml:18:16: experiment[1].target_power: must be a probability in (0.05, 1)",
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
