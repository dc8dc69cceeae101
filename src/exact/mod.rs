//! Closed forms: pure functions of rates and parameters, no I/O and no randomness.

pub mod budget;
pub mod grader;
pub mod maj;
pub mod modes;
pub mod noise;
pub mod normal;
pub mod pass;
pub mod plan;
pub mod verifier;
