//! The first stage: serde structs that mirror the TOML file one to one. They check types and
//! reject unknown keys (with TOML's own line and column); values are checked in `resolve`.
//! `evalsim plan` fills these same types from its flags and `fit` serialises them; `sweep` clones
//! them per cell and sets the swept fields and the cell's seed on them ([`super::grid`]).
//! Depends on [`crate::model`] (the enums a file names) and [`super::kinds`] only.
use serde::{Deserialize, Serialize};
use toml::Spanned;

pub use super::kinds::ExperimentKind;
use crate::model::{Fallback, Placement, VerifierKind, VoteRule};

/// A whole scenario file.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawScenario {
    pub title: Option<Spanned<String>>,
    pub seed: Option<Spanned<u64>>,
    pub benchmark: Option<Spanned<RawBenchmark>>,
    #[serde(default)]
    pub model: Vec<Spanned<RawModel>>,
    #[serde(default)]
    pub experiment: Vec<Spanned<RawExperiment>>,
}

/// `[benchmark]`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawBenchmark {
    pub problems: Option<Spanned<u64>>,
    pub mu: Option<Spanned<f64>>,
    pub sigma: Option<Spanned<f64>>,
    pub placement: Option<Spanned<Placement>>,
    pub rates: Option<Spanned<Vec<f64>>>,
    /// Share of the problems the `contaminated_models` have memorised (default 0).
    pub contaminated: Option<Spanned<f64>>,
    /// The models that saw the memorised problems (default none).
    pub contaminated_models: Option<Spanned<Vec<String>>>,
}

/// One `[[model]]`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawModel {
    pub name: Option<Spanned<String>>,
    pub shift: Option<Spanned<f64>>,
    pub rates: Option<Spanned<Vec<f64>>>,
    /// A share in [0, 1] or a list of shares (several attractors): checked in `resolve`.
    pub attractor: Option<Spanned<toml::Value>>,
    pub vote_rule: Option<Spanned<VoteRule>>,
    pub tokens: Option<Spanned<RawTokens>>,
    /// Per-run logit SD omega (default 0).
    pub run_sd: Option<Spanned<f64>>,
    /// Solve rate on memorised problems (needed when the model is contaminated).
    pub memorized_rate: Option<Spanned<f64>>,
    pub unparsed: Option<Spanned<f64>>,
    pub split: Option<Spanned<f64>>,
    /// tau: SD of the model's per-problem logit deviation (default 0).
    pub shift_sd: Option<Spanned<f64>>,
    pub verifier: Option<Spanned<RawVerifier>>,
    pub grader: Option<Spanned<RawGrader>>,
    pub confidence: Option<Spanned<RawConfidence>>,
}

/// `[model.verifier]`: the union of both kinds' keys (no internally tagged enum, so TOML errors
/// keep their line and column); `resolve` rejects keys the kind does not take.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawVerifier {
    pub kind: Option<Spanned<VerifierKind>>,
    pub tpr: Option<Spanned<f64>>,
    pub fpr: Option<Spanned<f64>>,
    pub fallback: Option<Spanned<Fallback>>,
    pub separation: Option<Spanned<f64>>,
}

/// `[model.grader]`: a noisy grader's error rates.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawGrader {
    pub fpr: Option<Spanned<f64>>,
    pub fnr: Option<Spanned<f64>>,
}

/// `[model.confidence]`: each sample's confidence for confidence-filtered voting.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawConfidence {
    pub separation: Option<Spanned<f64>>,
    pub attractor: Option<Spanned<f64>>,
}

/// `[model.tokens]`: the trace-length block.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawTokens {
    pub median_tokens: Option<Spanned<f64>>,
    pub hard_growth: Option<Spanned<f64>>,
    pub wrong_factor: Option<Spanned<f64>>,
    pub sigma: Option<Spanned<f64>>,
}

/// What an `attractor-sweep`'s `attractor` list sets on its model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SweepVary {
    /// Each value replaces one share of the model's attractor vector (`share`, from 1).
    #[default]
    Share,
    /// Each value multiplies the whole vector.
    Scale,
}

/// The score a `plan` experiment plans for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RawMetric {
    /// pass@1 averaged over n samples per problem.
    Pass1,
    /// maj@k: one majority vote of k samples per problem.
    Maj,
}

/// `check_cells` / `check_population` of a `plan`: "all", "none" or a number of cells.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(untagged)]
pub enum RawCheckCells {
    /// A number of cells spread over the grid.
    Count(u64),
    /// "all" or "none".
    Word(String),
}

/// One `[[experiment]]`: the union of every kind's keys, so that TOML errors keep their line and
/// column (no internally tagged enums). `resolve` rejects keys the kind does not take.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawExperiment {
    pub kind: Option<Spanned<ExperimentKind>>,
    pub name: Option<Spanned<String>>,
    pub models: Option<Spanned<Vec<String>>>,
    pub model: Option<Spanned<String>>,
    pub k: Option<Spanned<Vec<u64>>>,
    pub submissions: Option<Spanned<Vec<u64>>>,
    pub votes: Option<Spanned<u64>>,
    pub vote_rule: Option<Spanned<VoteRule>>,
    pub attractor: Option<Spanned<Vec<f64>>>,
    pub n: Option<Spanned<Vec<u64>>>,
    pub reruns: Option<Spanned<u64>>,
    pub a: Option<Spanned<String>>,
    pub b: Option<Spanned<String>>,
    pub budgets: Option<Spanned<Vec<f64>>>,
    pub traces: Option<Spanned<u64>>,
    pub cap: Option<Spanned<f64>>,
    pub price_per_mtok: Option<Spanned<f64>>,
    pub metric: Option<Spanned<RawMetric>>,
    pub gap_logits: Option<Spanned<Vec<f64>>>,
    pub gap_points: Option<Spanned<Vec<f64>>>,
    pub problems: Option<Spanned<Vec<u64>>>,
    pub samples: Option<Spanned<Vec<u64>>>,
    pub target_loss_or_tie: Option<Spanned<f64>>,
    pub target_halfwidth: Option<Spanned<f64>>,
    pub check_cells: Option<Spanned<RawCheckCells>>,
    pub check_population: Option<Spanned<RawCheckCells>>,
    pub population_reruns: Option<Spanned<u64>>,
    pub fresh: Option<Spanned<Vec<u64>>>,
    pub shares: Option<Spanned<Vec<f64>>>,
    pub alpha: Option<Spanned<f64>>,
    pub max_fresh: Option<Spanned<u64>>,
    pub vary: Option<Spanned<SweepVary>>,
    pub share: Option<Spanned<u64>>,
    pub split: Option<Spanned<Vec<f64>>>,
    pub grader_fpr: Option<Spanned<Vec<f64>>>,
    pub shift_sd: Option<Spanned<f64>>,
    pub target_power: Option<Spanned<f64>>,
    /// `judge`: the model whose family the judge belongs to (a or b).
    pub judge_family: Option<Spanned<String>>,
    /// `judge`: mean quality difference B - A in logits.
    pub gap: Option<Spanned<f64>>,
    /// `judge`: SD of the quality difference over questions.
    pub spread: Option<Spanned<f64>>,
    /// `judge`: the judge's logit for the answer shown first.
    pub position_bias: Option<Spanned<f64>>,
    /// `judge`: the judge's logit per unit of log-length difference.
    pub verbosity: Option<Spanned<f64>>,
    /// `judge`: the judge's logit for its own family's answer.
    pub self_preference: Option<Spanned<f64>>,
    /// `judge`: questions compared per rerun.
    pub comparisons: Option<Spanned<u64>>,
    /// `confidence`: the confidence thresholds of the threshold filter.
    pub thresholds: Option<Spanned<Vec<f64>>>,
}
