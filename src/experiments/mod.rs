//! Experiments: each pairs exact values with simulated ones into one serialisable result, and
//! every simulated number becomes a [`Check`] with its Monte Carlo standard error and z-score.
//! No file I/O here: [`crate::report`] turns results into files.
pub mod budget;
pub mod coverage;
pub mod noise;
pub mod plan;
pub mod sweep;
pub mod votes;

use serde::Serialize;

use crate::scenario::{ExperimentSpec, Scenario};
use crate::sim::stream::name_id;

/// A check fails when |z| = |sim - exact| / se exceeds this bound. Under a correct model each
/// check fails with probability about 7e-6 (two-sided normal tail at 4.5), so a scenario with a
/// few hundred checks fails spuriously about once in 500 seeds.
pub const Z_BOUND: f64 = 4.5;

/// The two-sided normal tail beyond [`Z_BOUND`], 2 (1 - Phi(4.5)): the false-failure rate every
/// check is held to.
pub const CHECK_TAIL: f64 = 6.795_346_249_5e-6;

/// The largest |sim - exact| that Bernstein's inequality allows, with probability at least
/// 1 - [`CHECK_TAIL`], for a sum of independent terms each within `step` of its mean and with
/// standard deviation `se` in all: P(|S - E S| >= t) <= 2 exp(-t^2 / (2 (se^2 + step t / 3))),
/// solved for t. It needs no normal approximation, so it holds for counts of rare events, where a
/// single event can be many standard errors away; when `step` is small against `se` it is
/// sqrt(2 ln(2 / CHECK_TAIL)) se = 5.02 se.
pub fn bernstein_allowance(se: f64, step: f64) -> f64 {
    let l = (2.0 / CHECK_TAIL).ln();
    let a = l * step / 3.0;
    a + (a * a + 2.0 * l * se * se).sqrt()
}

/// Where an experiment reports progress: called with the number of draws just done.
pub type Progress<'a> = &'a (dyn Fn(u64) + Sync);

/// A number as the tables write it: the shortest text that reads back to the same f64, with
/// `inf`, `-inf` and `nan` spelled out. Experiments that keep rows as text (`sweep`) and every
/// report table use this one function.
pub fn num(x: f64) -> String {
    if x == 0.0 {
        // Both zeros: `-0` in a table reads as a sign that means nothing.
        "0".into()
    } else if x.is_finite() {
        format!("{x}")
    } else if x.is_nan() {
        "nan".into()
    } else if x > 0.0 {
        "inf".into()
    } else {
        "-inf".into()
    }
}

/// One simulated number next to its exact value.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    /// The closed-form value.
    pub exact: f64,
    /// The Monte Carlo estimate.
    pub sim: f64,
    /// Monte Carlo standard error of `sim`, computed from the exact per-problem probabilities.
    pub se: f64,
    /// (sim - exact) / se; 0 when both agree exactly with se = 0, infinite when they do not.
    pub z: f64,
    /// Lower end of the 95% interval sim - 1.96 se.
    pub ci_low: f64,
    /// Upper end of the 95% interval sim + 1.96 se.
    pub ci_high: f64,
    /// For a simulated number that is a scaled count of independent trials, the weight of one
    /// trial (1 / (trials in all) for a share); 0 otherwise. Lets the check use Bernstein's
    /// bound where the normal approximation behind z fails ([`Check::passed`]).
    #[serde(skip)]
    pub step: f64,
}

impl Estimate {
    /// Pairs a simulated value with its exact value and standard error.
    pub fn new(exact: f64, sim: f64, se: f64) -> Estimate {
        let diff = sim - exact;
        let z = if se > 0.0 {
            diff / se
        } else if diff.abs() <= 1e-12 {
            0.0
        } else {
            f64::INFINITY.copysign(diff)
        };
        Estimate {
            exact,
            sim,
            se,
            z,
            ci_low: sim - 1.96 * se,
            ci_high: sim + 1.96 * se,
            step: 0.0,
        }
    }

    /// Marks the simulated number as a count of independent trials scaled by `step` (a share of
    /// `1 / step` trials in all, or a mean of per-problem shares with `1 / step` trials in all).
    pub fn counting(mut self, step: f64) -> Estimate {
        self.step = step;
        self
    }
}

/// One row of `checks.csv`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    /// Experiment name.
    pub experiment: String,
    /// What is compared, e.g. `maj@k`.
    pub quantity: String,
    /// The cell, e.g. `model=long k=16`.
    pub cell: String,
    /// Exact, simulated, standard error and z.
    #[serde(flatten)]
    pub estimate: Estimate,
}

impl Check {
    /// A check of `estimate` for `quantity` in `cell` of `experiment`.
    pub fn new(experiment: &str, quantity: &str, cell: &str, estimate: Estimate) -> Check {
        Check {
            experiment: experiment.into(),
            quantity: quantity.into(),
            cell: cell.into(),
            estimate,
        }
    }

    /// True when |z| is within [`Z_BOUND`] or, for a count of independent trials
    /// ([`Estimate::counting`]), when |sim - exact| is within [`bernstein_allowance`]. Both hold
    /// a correct simulation to a false-failure rate of about [`CHECK_TAIL`]; the second also
    /// where the normal approximation fails: a share of 1 - 5.5e-7 estimated from 160,000 votes
    /// sees two misses 0.4% of the time, at z = -6.5.
    pub fn passed(&self) -> bool {
        let e = &self.estimate;
        e.z.abs() <= Z_BOUND
            || (e.step > 0.0
                && e.se > 0.0
                && (e.sim - e.exact).abs() <= bernstein_allowance(e.se, e.step))
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
    Cost(budget::CostTable),
    /// How many problems and samples tell two models apart.
    Plan(plan::PlanResult),
}

impl ExperimentResult {
    /// The experiment's name.
    pub fn name(&self) -> &str {
        match self {
            ExperimentResult::Curves(r) | ExperimentResult::AttractorSweep(r) => &r.experiment,
            ExperimentResult::SeedVariance(r) => &r.experiment,
            ExperimentResult::VoteSpread(r) => &r.experiment,
            ExperimentResult::HeadToHead(r) => &r.experiment,
            ExperimentResult::Budget(r) => &r.experiment,
            ExperimentResult::Cost(r) => &r.experiment,
            ExperimentResult::Plan(r) => &r.experiment,
        }
    }

    /// Every simulated number with its exact value.
    pub fn checks(&self) -> Vec<Check> {
        match self {
            ExperimentResult::Curves(r) | ExperimentResult::AttractorSweep(r) => r.checks(),
            ExperimentResult::SeedVariance(r) => r.checks(),
            ExperimentResult::VoteSpread(r) => r.checks(),
            ExperimentResult::HeadToHead(r) => r.checks(),
            ExperimentResult::Budget(r) => r.checks(),
            ExperimentResult::Cost(r) => r.checks(),
            ExperimentResult::Plan(r) => r.checks(),
        }
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

/// Runs every experiment of the scenario (a seed override goes into `scenario.seed` first).
///
/// # Errors
/// The first experiment that cannot run.
pub fn run_all(scenario: &Scenario, progress: Progress) -> Result<RunOutput, RunError> {
    let results = (0..scenario.experiments.len())
        .map(|i| run(scenario, i, progress))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(RunOutput {
        scenario: scenario.name.clone(),
        title: scenario.title.clone(),
        source: scenario.source.clone(),
        seed: scenario.seed,
        version: env!("CARGO_PKG_VERSION"),
        z_bound: Z_BOUND,
        results,
    })
}

/// An error while running an experiment.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The experiment kind is parsed but cannot run yet.
    #[error("experiment `{0}`: kind `{1}` is not available in this build")]
    Unsupported(String, &'static str),
}

/// Total draws an experiment will make (for progress bars).
pub fn planned_draws(scenario: &Scenario, index: usize) -> u64 {
    let exp = &scenario.experiments[index];
    let n = scenario.benchmark.problems as u64;
    match &exp.spec {
        ExperimentSpec::Curves {
            models, k, votes, ..
        } => models.len() as u64 * k.len() as u64 * n * votes,
        ExperimentSpec::AttractorSweep {
            attractors,
            k,
            votes,
            ..
        } => attractors.len() as u64 * k.len() as u64 * n * votes,
        ExperimentSpec::SeedVariance { n, reruns, .. } => n.len() as u64 * reruns,
        ExperimentSpec::VoteSpread { k, reruns, .. } => k.len() as u64 * reruns,
        ExperimentSpec::HeadToHead { n, reruns, .. } => n.len() as u64 * reruns,
        ExperimentSpec::Budget { models, traces, .. } => models.len() as u64 * n * traces,
        ExperimentSpec::Cost {
            models,
            k,
            votes,
            traces,
            ..
        } => {
            let voting = k.iter().filter(|&&k| k > 1).count() as u64;
            models.len() as u64 * n * (traces + voting * votes)
        }
        ExperimentSpec::Plan { plan, .. } => plan.planned_reruns(),
    }
}

/// Runs experiment `index` of `scenario` with the scenario's seed.
///
/// # Errors
/// [`RunError::Unsupported`] for a kind this build cannot run.
pub fn run(
    scenario: &Scenario,
    index: usize,
    progress: Progress,
) -> Result<ExperimentResult, RunError> {
    let exp = &scenario.experiments[index];
    let key = name_id(&exp.name);
    match &exp.spec {
        ExperimentSpec::Curves {
            models,
            k,
            votes,
            vote_rule,
        } => Ok(ExperimentResult::Curves(votes::curves(
            scenario, &exp.name, key, models, k, *votes, *vote_rule, progress,
        ))),
        ExperimentSpec::AttractorSweep {
            model,
            attractors,
            k,
            votes,
            vote_rule,
        } => Ok(ExperimentResult::AttractorSweep(votes::attractor_sweep(
            scenario, &exp.name, key, *model, attractors, k, *votes, *vote_rule, progress,
        ))),
        ExperimentSpec::SeedVariance { model, n, reruns } => Ok(ExperimentResult::SeedVariance(
            noise::seed_variance(scenario, &exp.name, key, *model, n, *reruns, progress),
        )),
        ExperimentSpec::VoteSpread {
            model,
            k,
            reruns,
            vote_rule,
        } => Ok(ExperimentResult::VoteSpread(noise::vote_spread(
            scenario, &exp.name, key, *model, k, *reruns, *vote_rule, progress,
        ))),
        ExperimentSpec::HeadToHead { a, b, n, reruns } => Ok(ExperimentResult::HeadToHead(
            noise::head_to_head(scenario, &exp.name, key, *a, *b, n, *reruns, progress),
        )),
        ExperimentSpec::Budget {
            models,
            budgets,
            traces,
        } => Ok(ExperimentResult::Budget(budget::budget(
            scenario, &exp.name, key, models, budgets, *traces, progress,
        ))),
        ExperimentSpec::Cost {
            models,
            k,
            cap,
            price_per_mtok,
            votes,
            traces,
            vote_rule,
        } => Ok(ExperimentResult::Cost(budget::cost(
            scenario,
            &exp.name,
            key,
            models,
            k,
            *cap,
            *price_per_mtok,
            *votes,
            *traces,
            *vote_rule,
            progress,
        ))),
        ExperimentSpec::Plan { plan: p, .. } => {
            // The scenario's seed (after any --seed override) drives the plan's streams.
            let mut p = (**p).clone();
            p.spec.seed = scenario.seed;
            Ok(ExperimentResult::Plan(plan::run_plan(
                &p, &exp.name, progress,
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use statrs::distribution::{ContinuousCDF, Normal};

    #[test]
    fn check_tail_is_the_normal_tail_at_the_z_bound() {
        let tail = 2.0 * Normal::standard().sf(Z_BOUND);
        assert!((CHECK_TAIL / tail - 1.0).abs() < 1e-6, "{tail}");
    }

    #[test]
    fn bernstein_allowance_tends_to_a_normal_like_bound_and_grows_with_the_step() {
        let l = (2.0 / CHECK_TAIL).ln();
        assert!((bernstein_allowance(1.0, 0.0) - (2.0 * l).sqrt()).abs() < 1e-12);
        assert!(bernstein_allowance(1.0, 1e-9) > bernstein_allowance(1.0, 0.0));
        // Solves the bound: 2 exp(-t^2 / (2 (se^2 + step t / 3))) = CHECK_TAIL.
        let (se, step) = (1.9e-6, 1.0 / 160_000.0);
        let t = bernstein_allowance(se, step);
        let bound = 2.0 * (-t * t / (2.0 * (se * se + step * t / 3.0))).exp();
        assert!((bound / CHECK_TAIL - 1.0).abs() < 1e-9, "{bound}");
    }

    #[test]
    fn a_rare_count_passes_by_bernstein_and_a_real_excess_still_fails() {
        // pass@32 of 1 - 5.48e-7 from 160,000 votes (40 problems x 4,000): 0.088 misses expected.
        let votes: f64 = 160_000.0;
        let exact: f64 = 1.0 - 5.48e-7;
        let se = (exact * (1.0 - exact) / votes).sqrt();
        let check = |misses: f64| {
            let e = Estimate::new(exact, 1.0 - misses / votes, se);
            (
                Check::new("x", "pass@k", "c", e).passed(),
                Check::new("x", "pass@k", "c", e.counting(1.0 / votes)).passed(),
            )
        };
        // Two misses (a 0.4% event): |z| = 6.5 fails the z bound alone, passes as a count.
        assert_eq!(check(2.0), (false, true));
        // Fifteen misses (P < 1e-20 when 0.088 are expected) fail either way.
        assert_eq!(check(15.0), (false, false));
        // Within the z bound nothing changes.
        assert_eq!(check(0.0), (true, true));
    }
}
