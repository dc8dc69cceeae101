//! Code the suite's calibration and coverage tests share: samplers whose truth is known and the
//! loops that measure coverage. It lives here, not in the library, because only tests use it.
pub mod cluster_coverage;
pub mod coverage;
pub mod evals;
pub mod leaderboard_coverage;
pub mod leaderboard_sampler;
pub mod tally_pmf;
