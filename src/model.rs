//! Model parameters: immutable structs, no randomness and no I/O.
use serde::{Deserialize, Serialize};

/// How a majority vote over k sampled answers is scored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum VoteRule {
    /// Uniform over the answers tied at the top (equals "first answer seen" and "partial credit"
    /// under exchangeable samples).
    #[default]
    Random,
    /// A tie at the top is not a win.
    Strict,
    /// The correct answer needs more than half of the k votes.
    Absolute,
}
