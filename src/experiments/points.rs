//! The points of `curves` and `attractor-sweep`: which metric, which series (a model at one
//! attractor share) and one exact-and-simulated value. Shared by the vote and selection
//! experiments, so neither imports the other.
use serde::Serialize;

use super::Estimate;
use crate::model::{Grader, Verifier, VoteRule};

pub use crate::exact::outcome::Metric;

/// One series of a vote experiment: a model at one attractor share.
#[derive(Debug, Clone, Serialize)]
pub struct Series {
    /// Model name.
    pub model: String,
    /// Attractor share a.
    pub attractor: f64,
    /// Vote rule of the maj@k points.
    pub vote_rule: VoteRule,
    /// Benchmark pass@1 (mean rate).
    pub pass_at_1: f64,
    /// a / (1 + a): maj@k -> 1 on problems above it, -> 0 below.
    pub threshold: f64,
    /// Share of problems above the threshold: the large-k limit of maj@k (under per-run noise,
    /// the mean chance that a run's rate lies above it).
    pub ceiling: f64,
    /// Per-run logit SD omega of the model (0: independent samples).
    #[serde(skip_serializing_if = "crate::model::is_zero")]
    pub run_sd: f64,
    /// Every attractor share, when there are several (the threshold and ceiling are then those
    /// of [`crate::exact::modes`]: winnable iff p max(s, 1 - s) > a_j (1 - p) for every j).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub attractors: Vec<f64>,
    /// Share of samples with no extractable answer.
    #[serde(skip_serializing_if = "crate::model::is_zero")]
    pub unparsed: f64,
    /// Share of correct samples in the alternate form.
    #[serde(skip_serializing_if = "crate::model::is_zero")]
    pub split: f64,
    /// The best-of-k selector, when the model has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verifier: Option<Verifier>,
    /// The large-k limit of best@k (as graded), when the model has a verifier: for a threshold
    /// verifier the mean of alpha / (alpha + beta).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub best_ceiling: Option<f64>,
    /// The k values at which best@k is above maj@k (exact, as graded), when there is a verifier.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub best_leads: Option<Vec<u32>>,
    /// The grader's error rates, when grading is noisy: every point is then as graded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grader: Option<Grader>,
    /// SD of the model's own per-problem logit deviation (0: none).
    #[serde(skip_serializing_if = "crate::model::is_zero")]
    pub shift_sd: f64,
    /// A contaminated model's memorised problems: their share of the benchmark and the rate it
    /// solves them at.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memorised: Option<Memorised>,
}

/// The memorised problems of a contaminated model: their share and their solve rate.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Memorised {
    pub share: f64,
    pub rate: f64,
}

impl Series {
    /// The series' answer modes for labels: `a=0.5`, or `a=[0.3,0.2] u=0.1 s=0.2` with only the
    /// keys away from their defaults.
    pub fn modes_label(&self) -> String {
        modes_label(self.attractor, &self.attractors, self.unparsed, self.split)
    }
}

/// Answer modes for a label: `a=0.5` for one share (`attractors` empty), or
/// `a=[0.3,0.2] u=0.1 s=0.2` with only the keys away from their defaults.
pub(crate) fn modes_label(attractor: f64, attractors: &[f64], unparsed: f64, split: f64) -> String {
    let mut out = if attractors.is_empty() {
        format!("a={attractor}")
    } else {
        let list: Vec<String> = attractors.iter().map(|&a| short(a)).collect();
        format!("a=[{}]", list.join(","))
    };
    if unparsed != 0.0 {
        out.push_str(&format!(" u={}", short(unparsed)));
    }
    if split != 0.0 {
        out.push_str(&format!(" s={}", short(split)));
    }
    out
}

/// A share for a label: at most 6 decimals, trailing zeros dropped (a scaled 0.4 x 0.75 reads
/// 0.3, not 0.30000000000000004). Tables keep the full value.
pub(crate) fn short(x: f64) -> String {
    let s = format!("{x:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.into()
    }
}

/// One point: a metric of one series at one k.
#[derive(Debug, Clone, Serialize)]
pub struct VotePoint {
    /// Index into [`super::votes::VoteCurves::series`].
    pub series: usize,
    /// Samples per problem.
    pub k: u32,
    /// Which metric.
    pub metric: Metric,
    /// Exact and simulated values (benchmark means, as fractions).
    #[serde(flatten)]
    pub estimate: Estimate,
    /// Exact seed SD of the benchmark score of one run with k samples per problem on the
    /// scenario's N problems (fraction): sqrt(sum_i q_i (1 - q_i)) / N with q_i the metric's
    /// per-problem probability, the run-to-run spread a user sees rerunning with another seed.
    pub seed_sd: f64,
    /// With a noisy grader, the true value (exact and simulated) beside the graded `estimate`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truth: Option<Estimate>,
}
