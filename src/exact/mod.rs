//! Closed forms: pure functions of rates and parameters, no I/O and no randomness.

pub mod maj;
pub mod pass;
