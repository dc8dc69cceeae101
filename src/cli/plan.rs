//! `evalsim plan`: the flags fill a raw scenario (one model, one `plan` experiment), the
//! scenario resolver validates it as it does a file's plan block, then run -> report -> write.
use crate::scenario::spec::PlanExperimentSpec;
use std::path::PathBuf;

use anyhow::anyhow;
use clap::Args;

use super::{
    bad_input, internal, progress_bar, worker_pool, CommonArgs, Failure, EXIT_CHECK_FAILED, EXIT_OK,
};
use crate::experiments::plan::{exact_plan, simulate_plan, Plan, PlanResult, PlanTiming};
use crate::experiments::{KindResult, Z_BOUND};
use crate::model::VoteRule;
use crate::report;
use crate::scenario::raw::{
    ExperimentKind, RawBenchmark, RawCheckCells, RawExperiment, RawMetric, RawModel, RawScenario,
};
use crate::scenario::{ExperimentSpec, Scenario, ScenarioError};
use toml::Spanned;

/// Flags of `evalsim plan`.
#[derive(Debug, Args)]
pub(super) struct PlanArgs {
    /// Logit mean of the problem population
    #[arg(long, default_value_t = 0.2, allow_negative_numbers = true)]
    pub(super) mu: f64,
    /// Logit SD of the problem population (> 0)
    #[arg(long, default_value_t = 2.2, allow_negative_numbers = true)]
    pub(super) sigma: f64,
    /// B's advantage in logits (a list: 0.05,0.1,0.21,0.4) [default: 0.21]
    #[arg(
        long,
        value_delimiter = ',',
        conflicts_with = "gap_points",
        allow_negative_numbers = true
    )]
    pub(super) gap_logits: Vec<f64>,
    /// B's advantage in points of population pass@1 (a list), converted to logits
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true)]
    pub(super) gap_points: Vec<f64>,
    /// The score: pass1 (pass@1 averaged over the n samples of each problem) or maj (maj@k: one
    /// majority vote of k samples per problem; needs --k and --attractor)
    #[arg(long, default_value = "pass1")]
    pub(super) metric: String,
    /// Candidate numbers of problems N
    #[arg(long, value_delimiter = ',', default_value = "30,100,300,1000")]
    pub(super) problems: Vec<usize>,
    /// Candidate samples per problem n (pass1) [default: 1,4,16,64]
    #[arg(long, value_delimiter = ',')]
    pub(super) samples: Vec<u32>,
    /// Candidate samples per vote k (--metric maj: the grid's second axis, in place of --samples)
    #[arg(long, value_delimiter = ',')]
    pub(super) k: Vec<u32>,
    /// Share of wrong answers on the one repeated attractor answer, in [0, 1] (--metric maj)
    #[arg(long, allow_negative_numbers = true)]
    pub(super) attractor: Option<f64>,
    /// How a vote's ties are scored: random, strict or absolute (--metric maj) [default: random]
    #[arg(long)]
    pub(super) rule: Option<String>,
    /// SD tau of B's per-problem disagreement with A, in logits (0 to 3): B's logit on a problem
    /// is A's + gap + tau e, e standard normal per problem. With --a-shift-sd it is B's own
    /// deviation SD [default: 0, or A's with --a-shift-sd]
    #[arg(long, allow_negative_numbers = true)]
    pub(super) shift_sd: Option<f64>,
    /// SD of model A's own per-problem deviation, in logits: A's logit on a problem is the
    /// population's + tau_A e_A, and B deviates with offsets of its own, of SD --shift-sd
    /// (default: the same tau_A) [default: 0]
    #[arg(long, allow_negative_numbers = true)]
    pub(super) a_shift_sd: Option<f64>,
    /// A power besides 80% for the minimum detectable gap, in (0.05, 1), e.g. 0.9
    #[arg(long, allow_negative_numbers = true)]
    pub(super) target_power: Option<f64>,
    /// Largest acceptable probability that B scores <= A in one rerun
    #[arg(long, default_value_t = 0.05, allow_negative_numbers = true)]
    pub(super) target_loss_or_tie: f64,
    /// Largest acceptable 95% CI half-width of the difference, as a fraction (0.02 = 2 points)
    #[arg(long, default_value_t = 0.02, allow_negative_numbers = true)]
    pub(super) target_halfwidth: f64,
    /// Simulated paired reruns per checked cell (0: no simulation)
    #[arg(long, default_value_t = 20_000)]
    pub(super) simulate_reruns: u64,
    /// (gap, N, n) cells to simulate in the fixed design: all, none, or a number spread over the
    /// grid
    #[arg(long, default_value = "all")]
    pub(super) check_cells: String,
    /// (gap, N, n) cells to simulate in each population design (problems redrawn every rerun):
    /// all, none, or a number spread over the grid
    #[arg(long, default_value = "4")]
    pub(super) check_population: String,
    /// Simulated paired reruns per checked cell of the population designs [default: the
    /// smaller of --simulate-reruns and 3,000]
    #[arg(long)]
    pub(super) population_reruns: Option<u64>,
    /// Skip the PNG and SVG figures
    #[arg(long)]
    pub(super) no_figures: bool,
    #[command(flatten)]
    pub(super) common: CommonArgs,
}

fn bad(msg: String) -> Failure {
    bad_input(anyhow!(msg))
}

/// A value given by a flag: it has no place in a file, so errors name the flag (see
/// [`plan_flag_error`]), not a line.
fn at<T>(x: T) -> Option<Spanned<T>> {
    Some(Spanned::new(0..0, x))
}

/// Each plan flag and the key of the raw scenario it fills (the longest keys first, so that
/// `target_halfwidth` is not read as part of another).
const PLAN_FLAGS: [(&str, &str); 17] = [
    ("population_reruns", "--population-reruns"),
    ("target_loss_or_tie", "--target-loss-or-tie"),
    ("target_power", "--target-power"),
    ("check_population", "--check-population"),
    ("target_halfwidth", "--target-halfwidth"),
    ("check_cells", "--check-cells"),
    ("gap_logits", "--gap-logits"),
    ("gap_points", "--gap-points"),
    ("vote_rule", "--rule"),
    ("shift_sd", "--shift-sd"),
    ("attractor", "--attractor"),
    ("problems", "--problems"),
    ("samples", "--samples"),
    ("reruns", "--simulate-reruns"),
    ("metric", "--metric"),
    ("sigma", "--sigma"),
    ("k", "--k"),
];

impl PlanArgs {
    /// The flags as a raw scenario with one model A (the population itself, shift 0) and one
    /// `plan` experiment, for the resolver that reads scenario files. What is checked here is
    /// only what has no key of its own: the words of `--metric`, `--rule` and `--check-*`, and
    /// that maj@k, which takes the model's attractor share, has `--attractor`.
    fn raw(&self) -> Result<RawScenario, Failure> {
        let metric = match self.metric.as_str() {
            "pass1" => RawMetric::Pass1,
            "maj" => RawMetric::Maj,
            m => return Err(bad(format!(
                "--metric {m}: expected pass1 (pass@1 averaged over n samples) or maj (maj@k, with --k and --attractor)"
            ))),
        };
        let attractor = match (metric, self.attractor) {
            (RawMetric::Maj, None) => {
                return Err(bad("--metric maj needs --attractor A: the share of wrong answers on the one repeated attractor answer, in [0, 1]".into()));
            }
            (RawMetric::Pass1, Some(_)) => {
                return Err(bad("--attractor: only with --metric maj (with --metric pass1 the grid's second axis is --samples)".into()));
            }
            (_, a) => a,
        };
        let rule = match self.rule.as_deref() {
            None => None,
            Some("random") => Some(VoteRule::Random),
            Some("strict") => Some(VoteRule::Strict),
            Some("absolute") => Some(VoteRule::Absolute),
            Some(r) => {
                return Err(bad(format!(
                    "--rule {r}: expected random, strict or absolute"
                )))
            }
        };
        let cells = |flag: &str, v: &str| match v {
            "all" | "none" => Ok(RawCheckCells::Word(v.to_string())),
            s => s.parse().map(RawCheckCells::Count).map_err(|_| {
                bad(format!(
                    "--{flag} {s}: expected all, none or a number of cells"
                ))
            }),
        };
        let list = |v: &[u32]| (!v.is_empty()).then(|| v.iter().map(|&x| u64::from(x)).collect());
        let gap_logits = if self.gap_logits.is_empty() && self.gap_points.is_empty() {
            Some(vec![0.21])
        } else {
            (!self.gap_logits.is_empty()).then(|| self.gap_logits.clone())
        };
        let experiment = RawExperiment {
            kind: at(ExperimentKind::Plan),
            metric: at(metric),
            gap_logits: gap_logits.map(|g| Spanned::new(0..0, g)),
            gap_points: (!self.gap_points.is_empty())
                .then(|| Spanned::new(0..0, self.gap_points.clone())),
            problems: at(self.problems.iter().map(|&x| x as u64).collect()),
            samples: list(&self.samples).map(|v| Spanned::new(0..0, v)),
            k: list(&self.k).map(|v| Spanned::new(0..0, v)),
            vote_rule: rule.map(|r| Spanned::new(0..0, r)),
            target_loss_or_tie: at(self.target_loss_or_tie),
            target_halfwidth: at(self.target_halfwidth),
            reruns: at(self.simulate_reruns),
            check_cells: at(cells("check-cells", &self.check_cells)?),
            check_population: at(cells("check-population", &self.check_population)?),
            population_reruns: self.population_reruns.map(|v| Spanned::new(0..0, v)),
            shift_sd: self.shift_sd.map(|v| Spanned::new(0..0, v)),
            target_power: self.target_power.map(|v| Spanned::new(0..0, v)),
            ..RawExperiment::default()
        };
        Ok(RawScenario {
            title: None,
            seed: self.common.seed.map(|s| Spanned::new(0..0, s)),
            benchmark: at(RawBenchmark {
                problems: at(1),
                mu: at(self.mu),
                sigma: at(self.sigma),
                placement: None,
                rates: None,
                contaminated: None,
                contaminated_models: None,
            }),
            model: vec![Spanned::new(
                0..0,
                RawModel {
                    name: at("A".to_string()),
                    shift: at(0.0),
                    shift_sd: self.a_shift_sd.map(|v| Spanned::new(0..0, v)),
                    rates: None,
                    attractor: at(toml::Value::Float(attractor.unwrap_or(0.0))),
                    vote_rule: None,
                    tokens: None,
                    ..RawModel::default()
                },
            )],
            experiment: vec![Spanned::new(0..0, experiment)],
        })
    }

    /// The plan the flags ask for, resolved as a scenario file's `plan` block is.
    fn spec(&self) -> Result<Plan, Failure> {
        let scenario = Scenario::from_raw(self.raw()?, "", "plan", "the plan flags")
            .map_err(plan_flag_error)?;
        match scenario.experiments.into_iter().next().map(|e| e.spec) {
            Some(ExperimentSpec::Plan(PlanExperimentSpec { plan, .. })) => Ok(*plan),
            _ => Err(internal(anyhow!("the plan flags resolved to no plan"))),
        }
    }
}

/// A resolver error about a key, told in the flag that set it: `--k: ...`, with every key the
/// message names spelled as its flag.
fn plan_flag_error(e: ScenarioError) -> Failure {
    let ScenarioError::Invalid { key, message, .. } = &e else {
        return bad_input(e);
    };
    let leaf = key.rsplit('.').next().unwrap_or(key);
    // Model A's keys come from --a-shift-sd: its own `shift_sd`, and the plan's check of A's
    // and B's SDs together (at the experiment's `model`).
    if key.starts_with("model[") || leaf == "model" {
        let text = message.replace("model `A` has shift_sd", "--a-shift-sd");
        return bad(format!("--a-shift-sd: {text}"));
    }
    let flag = PLAN_FLAGS
        .iter()
        .find(|(k, _)| *k == leaf)
        .map_or(format!("--{}", leaf.replace('_', "-")), |(_, f)| {
            (*f).to_string()
        });
    let mut text = message
        .replace("B's shift_sd", "--shift-sd")
        .replace("model `A`'s own shift_sd", "--a-shift-sd");
    text = text.replace("metric = \"maj\"", "--metric maj");
    text = text.replace("metric = \"pass1\"", "--metric pass1");
    for (k, f) in PLAN_FLAGS {
        text = text.replace(&format!("`{k}`"), &format!("`{f}`"));
    }
    bad(format!("{flag}: {text}"))
}

pub(super) fn plan(a: &PlanArgs) -> Result<u8, Failure> {
    let c = &a.common;
    // The folder is locked first, so the answer shown before the simulation is never followed
    // by a refusal to write it.
    let out = c.out.clone().unwrap_or_else(|| PathBuf::from("out/plan"));
    let out_dir = report::OutputDir::lock(&out).map_err(bad_input)?;
    let show = |r: &PlanResult| {
        if c.quiet {
            Ok(())
        } else {
            super::say(&report::planning::paragraph(r))
        }
    };
    let (result, timing) = compute_showing(a, show)?;
    let artifacts = report::planning::render_plan(&result, None, a.common.figures(a.no_figures))
        .map_err(internal)?;
    out_dir.write(&artifacts).map_err(bad_input)?;
    let checks = result.checks();
    let failed: Vec<_> = checks.iter().filter(|c| !c.passed()).collect();
    if !c.quiet {
        let sim_s = timing.simulated_s.max(1e-9);
        let simulated = if result.draws == 0 {
            "simulated: nothing (no reruns asked for)".to_string()
        } else {
            format!(
                "simulated: {} binomial counts in {:.2} s ({:.2e} counts/s; pass@1 pairs are drawn as one difference per problem)",
                result.draws,
                sim_s,
                result.draws as f64 / sim_s
            )
        };
        super::say(&format!(
            "exact: {} cells in {:.3} s; {simulated}; checks: {} of {} passed (|z| <= {Z_BOUND}, or Bernstein's bound for counts); wrote {} files to {}\n",
            timing.exact_cells,
            timing.exact_s,
            checks.len() - failed.len(),
            checks.len(),
            artifacts.len(),
            crate::text::path_shown(&out)
        ))?;
    }
    for f in &failed {
        super::tell(&format!(
            "check failed: plan {} [{}]: exact {} sim {} se {} z {:.2}\n",
            f.quantity, f.cell, f.estimate.exact, f.estimate.sim, f.estimate.se, f.estimate.z
        ));
    }
    Ok(if failed.is_empty() {
        EXIT_OK
    } else {
        EXIT_CHECK_FAILED
    })
}

/// The plan the flags ask for, computed (and simulated) on the worker pool of `--threads`.
pub(super) fn compute(a: &PlanArgs) -> Result<(PlanResult, PlanTiming), Failure> {
    compute_showing(a, |_| Ok(()))
}

/// [`compute`], handing the exact result (every answer, no simulated check yet) to `show`
/// before the simulation starts under its progress bar.
fn compute_showing(
    a: &PlanArgs,
    show: impl FnOnce(&PlanResult) -> Result<(), Failure>,
) -> Result<(PlanResult, PlanTiming), Failure> {
    let c = &a.common;
    let spec = a.spec()?;
    let pool = worker_pool(c.threads)?;
    let (mut result, exact) = pool.install(|| exact_plan(&spec, "plan"));
    show(&result)?;
    let pb = progress_bar(spec.planned_cost(), c.quiet);
    pb.set_message("plan: simulated checks");
    let tick = |n: u64| pb.inc(n);
    let timing = pool.install(|| simulate_plan(&spec, &mut result, exact, &tick));
    pb.finish_and_clear();
    Ok((result, timing))
}
