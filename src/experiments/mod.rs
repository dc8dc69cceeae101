//! Experiments: each pairs exact values with simulated ones into one serialisable result, and
//! every simulated number becomes a [`Check`] with its Monte Carlo standard error and z-score.
//! No file I/O here: [`crate::report`] turns results into files.
//!
//! Why it exists: one place that runs a resolved experiment spec and returns its typed result;
//! it computes no closed form (that is `exact`) and constructs no generator (that is `sim`).
//! The pass rule of every check lives in [`check`].
//!
//! May depend on: `scenario` (the resolved specs), `model`, `exact` and `sim`; `coverage` also
//! on `analyze`, whose intervals it scores.
pub mod budget;
pub mod check;
pub mod confidence;
pub mod contamination;
pub mod cost;
pub mod head_to_head;
pub mod judge;
pub mod noise;
pub mod plan;
pub mod points;
pub mod sweep;
pub mod votes;

use serde::Serialize;

pub use check::{bernstein_allowance, Check, Estimate, CHECK_TAIL, ROUNDING_ULPS, Z_BOUND};

use crate::scenario::{ExperimentSpec, PlanExperimentSpec, Scenario};
use crate::sim::stream::name_id;

/// Where an experiment reports progress: called with the number of draws just done.
pub type Progress<'a> = &'a (dyn Fn(u64) + Sync);

/// A number as the tables write it: the shortest text that reads back to the same f64, with
/// `inf` and `-inf` spelled out and an empty cell where there is no number (NaN: a standard error
/// that does not exist, say), so a spreadsheet or pandas reads it as missing. Experiments that
/// keep rows as text (`sweep`) and every report table use this one function.
pub fn num(x: f64) -> String {
    if x == 0.0 {
        // Both zeros: `-0` in a table reads as a sign that means nothing.
        "0".into()
    } else if x.is_finite() {
        format!("{x}")
    } else if x.is_nan() {
        String::new()
    } else if x > 0.0 {
        "inf".into()
    } else {
        "-inf".into()
    }
}

/// The result of one experiment.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum ExperimentResult {
    /// pass@k, pass^k and maj@k against k.
    Curves(votes::VoteCurves),
    /// maj@k for several attractor shares.
    AttractorSweep(votes::VoteCurves),
    /// Seed variance of the pass@1 score.
    SeedVariance(noise::SeedVariance),
    /// Seed SD of maj@k against averaged pass@1.
    VoteSpread(noise::VoteSpread),
    /// How often the better model loses a rerun.
    HeadToHead(noise::HeadToHead),
    /// Accuracy, truncation and tokens against a token budget.
    Budget(budget::BudgetCurves),
    /// Tokens per correct answer of (model, k) strategies.
    Cost(cost::CostTable),
    /// How many problems and samples tell two models apart.
    Plan(Box<plan::PlanResult>),
    /// Public-minus-fresh gap of a contaminated model and the fresh set that detects it.
    Contamination(contamination::ContaminationResult),
    /// What each judging protocol reports against the true win probability.
    Judge(Box<judge::JudgeResult>),
    /// Confidence-filtered maj@k against the kept share.
    Confidence(confidence::ConfidenceCurves),
}

/// What every experiment kind's result gives, whatever its kind: its name and its checks.
pub trait KindResult {
    /// The experiment's name.
    fn name(&self) -> &str;

    /// Every simulated number with its exact value.
    fn checks(&self) -> Vec<Check>;
}

impl ExperimentResult {
    /// The result as its kind's [`KindResult`]: the one match from a result to its kind here.
    pub fn kind(&self) -> &dyn KindResult {
        match self {
            ExperimentResult::Curves(r) | ExperimentResult::AttractorSweep(r) => r,
            ExperimentResult::SeedVariance(r) => r,
            ExperimentResult::VoteSpread(r) => r,
            ExperimentResult::HeadToHead(r) => r,
            ExperimentResult::Budget(r) => r,
            ExperimentResult::Cost(r) => r,
            ExperimentResult::Plan(r) => r.as_ref(),
            ExperimentResult::Contamination(r) => r,
            ExperimentResult::Judge(r) => r.as_ref(),
            ExperimentResult::Confidence(r) => r,
        }
    }

    /// The experiment's name.
    pub fn name(&self) -> &str {
        self.kind().name()
    }

    /// Every simulated number with its exact value.
    pub fn checks(&self) -> Vec<Check> {
        self.kind().checks()
    }
}

/// Everything one run of a scenario produced: the contract between computing and every output.
#[derive(Debug, Clone, Serialize)]
pub struct RunOutput {
    /// Scenario name.
    pub scenario: String,
    /// Scenario title.
    pub title: String,
    /// Where the scenario came from.
    pub source: String,
    /// The master seed used.
    pub seed: u64,
    /// evalsim version.
    pub version: &'static str,
    /// The |z| bound of the checks.
    pub z_bound: f64,
    /// One result per experiment, in scenario order.
    pub results: Vec<ExperimentResult>,
}

impl RunOutput {
    /// Every check of every experiment.
    pub fn checks(&self) -> Vec<Check> {
        self.results
            .iter()
            .flat_map(ExperimentResult::checks)
            .collect()
    }
}

/// Runs every experiment of the scenario (a seed override goes into `scenario.seed` first),
/// reporting progress in the weighted units of [`planned_draws`].
pub fn run_all(scenario: &Scenario, progress: Progress) -> RunOutput {
    run_prepared(scenario, prepare(scenario), progress)
}

/// The exact part of every `plan` experiment of a scenario (None for the other kinds), computed
/// before any simulation: the part of a run that reports no progress and does not shrink with
/// the simulation sizes. [`run_prepared`] then runs everything else under the progress bar.
pub struct Prepared(Vec<Option<(plan::PlanResult, plan::ExactTables)>>);

/// See [`Prepared`].
pub fn prepare(scenario: &Scenario) -> Prepared {
    Prepared(
        scenario
            .experiments
            .iter()
            .map(|exp| match &exp.spec {
                ExperimentSpec::Plan(PlanExperimentSpec { plan: p, .. }) => {
                    Some(plan::exact_plan(p, &exp.name))
                }
                _ => None,
            })
            .collect(),
    )
}

/// [`run_all`] from the exact parts of [`prepare`]: the same output bit for bit.
pub fn run_prepared(scenario: &Scenario, prepared: Prepared, progress: Progress) -> RunOutput {
    let results = prepared
        .0
        .into_iter()
        .enumerate()
        .map(|(i, exact)| {
            let weight = draw_cost_ns(&scenario.experiments[i].spec);
            let weighted = |n: u64| progress(n.saturating_mul(weight));
            match (exact, &scenario.experiments[i].spec) {
                (
                    Some((mut result, tables)),
                    ExperimentSpec::Plan(PlanExperimentSpec { plan: p, .. }),
                ) => {
                    plan::simulate_plan(p, &mut result, tables, &weighted);
                    ExperimentResult::Plan(Box::new(result))
                }
                _ => run(scenario, i, &weighted),
            }
        })
        .collect();
    RunOutput {
        scenario: scenario.name.clone(),
        title: scenario.title.clone(),
        source: scenario.source.clone(),
        seed: scenario.seed,
        version: env!("CARGO_PKG_VERSION"),
        z_bound: Z_BOUND,
        results,
    }
}

/// How one experiment kind runs: implemented by the kind's resolved spec
/// ([`crate::scenario::spec`]) in the kind's module here.
pub trait KindRun {
    /// Measured time of one progress draw of the kind on one thread, in nanoseconds
    /// (docs/performance.md, "Progress weights"): a vote of `curves`, a rerun of
    /// `seed-variance`, ... Draws of different kinds cost very different times; weighting by
    /// these keeps the progress bar's estimate steady across phases.
    fn draw_cost_ns(&self) -> u64;

    /// Progress units before weighting, when they are not the `ticks` of
    /// [`ExperimentSpec::work`] (None: they are).
    fn planned_draws(&self, _scenario: &Scenario) -> Option<u64> {
        None
    }

    /// Runs the experiment `name` of `scenario` (`key`: its name's stream id), reporting its
    /// draws to `progress`. It cannot fail: every bound is checked when the scenario resolves.
    fn run(
        &self,
        scenario: &Scenario,
        name: &str,
        key: u64,
        progress: Progress,
    ) -> ExperimentResult;
}

/// The spec as its kind's [`KindRun`]: the one match from a spec to its kind here.
pub fn kind_run(spec: &ExperimentSpec) -> &dyn KindRun {
    crate::each_spec!(spec, s => s as &dyn KindRun)
}

/// See [`KindRun::draw_cost_ns`].
pub fn draw_cost_ns(spec: &ExperimentSpec) -> u64 {
    kind_run(spec).draw_cost_ns()
}

/// Progress units of an experiment: its draws (see [`planned_draws_unweighted`]) times their
/// measured cost ([`draw_cost_ns`]), the units [`run_all`] reports progress in.
pub fn planned_draws(scenario: &Scenario, index: usize) -> u64 {
    planned_draws_unweighted(scenario, index)
        .saturating_mul(draw_cost_ns(&scenario.experiments[index].spec))
}

/// Progress units experiment `index` reports before weighting: the `ticks` of
/// [`ExperimentSpec::work`], the same count the scenario's limits bound.
pub fn planned_draws_unweighted(scenario: &Scenario, index: usize) -> u64 {
    let spec = &scenario.experiments[index].spec;
    kind_run(spec)
        .planned_draws(scenario)
        .unwrap_or_else(|| spec.work(scenario.benchmark.problems).ticks)
}

/// Runs experiment `index` of `scenario` with the scenario's seed. It cannot fail: every bound
/// is checked when the scenario resolves.
pub fn run(scenario: &Scenario, index: usize, progress: Progress) -> ExperimentResult {
    let exp = &scenario.experiments[index];
    kind_run(&exp.spec).run(scenario, &exp.name, name_id(&exp.name), progress)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::spec::{AttractorSweepSpec, ContaminationSpec, CurvesSpec};
    use std::sync::atomic::{AtomicU64, Ordering};

    /// The progress units experiment `index` reports when it runs.
    fn reported(scenario: &Scenario, index: usize) -> u64 {
        let total = AtomicU64::new(0);
        run(scenario, index, &|n| {
            total.fetch_add(n, Ordering::Relaxed);
        });
        total.into_inner()
    }

    #[test]
    fn curves_with_a_verifier_or_grader_reported_no_progress_for_their_selections() {
        let mut s = Scenario::load("verifier").unwrap();
        for e in &mut s.experiments {
            match &mut e.spec {
                ExperimentSpec::Curves(CurvesSpec { votes, .. })
                | ExperimentSpec::AttractorSweep(AttractorSweepSpec { votes, .. }) => {
                    *votes = 50;
                }
                _ => {}
            }
        }
        for i in 0..s.experiments.len() {
            assert_eq!(
                reported(&s, i),
                planned_draws_unweighted(&s, i),
                "experiment {i}"
            );
        }
    }

    #[test]
    fn contamination_cells_reported_the_same_units_whatever_their_fresh_size() {
        let mut s = Scenario::load("contamination").unwrap();
        let i = s
            .experiments
            .iter()
            .position(|e| matches!(e.spec, ExperimentSpec::Contamination(_)))
            .unwrap();
        if let ExperimentSpec::Contamination(ContaminationSpec { reruns, .. }) =
            &mut s.experiments[i].spec
        {
            *reruns = 20;
        }
        assert_eq!(reported(&s, i), planned_draws_unweighted(&s, i));
    }

    #[test]
    fn a_plans_exact_part_ran_inside_the_progress_bar_and_prepared_runs_are_the_same() {
        let mut s = Scenario::load("concentrated").unwrap();
        s.experiments
            .retain(|e| matches!(e.spec, ExperimentSpec::Plan(_)));
        if let ExperimentSpec::Plan(PlanExperimentSpec { plan: p, .. }) = &mut s.experiments[0].spec
        {
            p.spec.reruns = 50;
            p.population_reruns = 20;
        }
        let whole = serde_json::to_string(&run_all(&s, &|_| {})).unwrap();
        let prepared = prepare(&s);
        let total = AtomicU64::new(0);
        let split = run_prepared(&s, prepared, &|n| {
            total.fetch_add(n, Ordering::Relaxed);
        });
        assert_eq!(whole, serde_json::to_string(&split).unwrap());
        // After `prepare`, the bar counts the simulation only, all of it.
        assert_eq!(total.into_inner(), planned_draws(&s, 0));
    }
}
