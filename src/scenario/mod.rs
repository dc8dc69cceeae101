//! Scenario files: TOML in, a validated [`Scenario`] out.
//!
//! Loading has two stages (as in ripgrep's low-level and high-level arguments): [`raw`] mirrors
//! the file with serde (types and unknown keys, with TOML's line and column), then [`resolve`]
//! checks every value, sets every default and the seed, and builds [`spec`], the resolved data
//! every later layer reads. [`source`] finds a scenario's text; [`grid`] edits raw scenarios for
//! `evalsim sweep`.
//!
//! This is the first layer: it may depend on [`crate::model`] and on closed forms of
//! [`crate::exact`], never on `sim`, `experiments`, `report`, `analyze` or `cli`.
pub mod error;
pub mod grid;
pub mod keys;
pub mod kinds;
pub mod raw;
pub mod resolve;
pub mod source;
pub mod spec;

pub use error::{Locator, ScenarioError};
pub use raw::ExperimentKind;
pub use resolve::DEFAULT_SEED;
pub use source::{read_source, ScenarioSource, NAMED};
pub use spec::{
    AttractorSweepSpec, BudgetSpec, CheckCells, ConfidenceSpec, ContaminationSpec, CostSpec,
    CurvesSpec, Design, Experiment, ExperimentSpec, HeadToHeadSpec, JudgeSpec, Plan,
    PlanExperimentSpec, PlanMetric, PlanSpec, Scenario, SeedVarianceSpec, SweepAxis,
    VoteSpreadSpec, Work,
};

/// Largest benchmark a scenario may ask for.
pub const MAX_PROBLEMS: u64 = 100_000;
/// Largest k (samples per vote) a scenario may ask for.
pub const MAX_K: u64 = 1024;
/// Largest `shift_sd` (tau, logits). At tau = 10 a model's own deviation alone moves a problem
/// from a 50% rate to below 5e-5 or above 1 - 5e-5 one time in three, and with a benchmark
/// sigma of 2 the implied correlation of two such models' logits is 4/104 = 0.04: they agree on
/// nothing. Larger values describe no real pair of models and only pile rates onto 0 and 1; the
/// quadrature over e (|e| <= 12, docs/model.md) is tested up to this bound.
pub const MAX_SHIFT_SD: f64 = 10.0;
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

/// Largest |mu| and largest sigma of a logit-normal benchmark, in logits (also the bound on a
/// plan's gaps): a problem 40 logits out has a pass rate within 4.3e-18 of 0 or 1, below the
/// resolution of f64 next to 1, so a wider population adds nothing but problems that are always
/// or never solved.
pub const MAX_LOGIT: f64 = 40.0;

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

/// Longest experiment name, in characters: it names output files (the longest is
/// `<name>-histograms.png`, plus a temporary suffix while writing), which file systems limit to
/// 255 bytes.
pub const MAX_EXPERIMENT_NAME: usize = 64;
/// The files of the run as a whole; no experiment may take their names.
pub const RUN_FILES: [&str; 4] = ["checks.csv", "results.json", "summary.json", "report.md"];
