//! Closed forms: pure functions of rates and parameters, no I/O and no randomness.

pub mod budget;
pub mod maj;
pub mod noise;
pub mod normal;
pub mod pass;
pub mod plan;
pub mod total;
