//! Statistics from real eval samples: the computational core of `evalsim analyze` and `evalsim fit`.
//!
//! Why this module exists: the rest of the workbench simulates *known* rates. Real evals give n
//! sampled answers per problem, and the honest numbers to report from them — unbiased pass@k and
//! pass^k, maj@k as an exact expectation over subsets rather than one arbitrary vote, standard
//! errors that separate "which questions" from "which samples", and a paired comparison of two
//! models — are easy to get subtly wrong. `fit` closes the loop: it turns the observed counts into
//! a scenario the simulator can rerun.
//!
//! Data flows one way:
//!
//! ```text
//! read (BufRead, one line at a time) -> Dataset (per-problem tallies)
//!   -> estimators (pure, per problem) -> summary / compare / fit (typed, serde results)
//! ```
//!
//! Nothing here writes files, prints or plots; the `report` and `cli` layers do that from the
//! serialisable result structs. Nothing here constructs a random generator: the bootstrap's
//! resampling loop is [`crate::sim::bootstrap`] and compare's reruns are [`crate::sim::reruns`],
//! both seeded from the options' explicit seed; analyze keeps the estimators and the intervals
//! computed from their draws. Synthetic eval rows for tests are [`crate::sim::synth`].
use serde::{Deserialize, Serialize};

use crate::model::VoteRule;

pub mod analysis;
pub mod cluster;
pub mod compare;
pub mod data;
pub mod detect;
pub mod estimators;
pub mod fit;
pub mod interval;
pub mod leaderboard;
pub mod normalize;
pub mod read;
pub mod summary;

pub use analysis::{
    analyze, solve_rate_histogram, Analysis, AnalysisOptions, ModelAnalysis, RateBin,
    SolveRateHistogram, SourceInfo,
};
pub use compare::{
    compare_models, sign_test_p_value, Comparison, ComparisonOptions, DiffEstimate, SignTest,
};
pub use data::{
    Dataset, DatasetBuilder, HarnessAggregate, HarnessInfo, ModelSamples, ProblemSamples, Sample,
    TokenTotals, VoteGroup,
};
pub use detect::{detect_format, detect_format_bytes, DETECT_BYTES};
pub use estimators::{
    maj_at_k_exact, maj_at_k_first, maj_at_k_votes, pass_at_k, pass_at_k_curve, pass_at_k_plugin,
    pass_hat_k, pass_hat_k_curve,
};
pub use fit::{
    combine_models, fit_attractor, fit_models, fit_traces, gauss_hermite_normal, AttractorFit,
    CorrelationFit, CountHistogram, CurveFit, FitOptions, FitResult, ModelFit, ParameterFit,
    Status, TraceFit, FALLBACK_SIGMA,
};
pub use leaderboard::{leaderboard, Entry, Leaderboard, Pair, Resolution};
pub use normalize::{normalize_answer, AnswerKey, Normalization};
pub use read::{read_samples, Format, ReadOptions};
pub use summary::{
    answer_counts, summarize_model, token_summary, AnswerCounts, CurvePoint, ModelSummary,
    SummaryOptions, TokenSummary,
};

/// How maj@k is scored for analysis of real samples.
///
/// The first three are expectations over all size-k subsets of a problem's n answers (exact, see
/// [`estimators::maj_at_k_votes`]), and the tie rule of the first-k vote shown beside them;
/// `First` reports only the first-k vote (one vote over the first k answers in file order, what a
/// harness that stops after k samples would report), its ties broken at random.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum MajRule {
    /// Ties at the top split evenly (the correct answer gets 1/T of a win among T tied answers).
    #[default]
    Random,
    /// A tie at the top is not a win.
    Strict,
    /// The correct answer needs more than k/2 of the k votes.
    Absolute,
    /// Only the vote of the first k answers in file order, a tie broken by a seeded draw.
    First,
}

impl MajRule {
    /// The tie rule of the vote: `First` breaks ties at random.
    pub fn vote_rule(self) -> VoteRule {
        match self {
            MajRule::Strict => VoteRule::Strict,
            MajRule::Absolute => VoteRule::Absolute,
            MajRule::Random | MajRule::First => VoteRule::Random,
        }
    }
}

impl From<VoteRule> for MajRule {
    fn from(rule: VoteRule) -> Self {
        match rule {
            VoteRule::Random => MajRule::Random,
            VoteRule::Strict => MajRule::Strict,
            VoteRule::Absolute => MajRule::Absolute,
        }
    }
}

/// Everything that can go wrong reading or analysing samples. Messages name the source, the line
/// (1-based) or problem, the field, and say what would be valid.
#[derive(Debug, thiserror::Error)]
pub enum AnalyzeError {
    /// The underlying reader failed.
    #[error("{source_name}: read error after line {line}: {error}")]
    Io {
        source_name: String,
        line: usize,
        #[source]
        error: std::io::Error,
    },
    /// A line is longer than the readers accept.
    #[error("{source_name}:{line}: line longer than {limit} bytes (no newline within it); expected one sample per line: is this the right file and format?")]
    LineTooLong {
        source_name: String,
        line: usize,
        limit: usize,
    },
    /// A line is not UTF-8.
    #[error("{source_name}:{line}: invalid UTF-8 at byte {column} of the line; expected UTF-8 text (JSONL or CSV)")]
    Utf8 {
        source_name: String,
        line: usize,
        column: usize,
    },
    /// A line (or the document) is not valid JSON.
    #[error("{source_name}:{line}: malformed JSON: {message}")]
    Json {
        source_name: String,
        line: usize,
        message: String,
    },
    /// A CSV line cannot be split into fields.
    #[error("{source_name}:{line}: malformed CSV: {message}")]
    Csv {
        source_name: String,
        line: usize,
        message: String,
    },
    /// A required field or column is absent.
    #[error("{source_name}:{line}: missing field `{field}`; expected {expected}")]
    MissingField {
        source_name: String,
        line: usize,
        field: String,
        expected: String,
    },
    /// A field is present but its value has the wrong type or range.
    #[error(
        "{source_name}:{line}: field `{field}` has invalid value {value}; expected {expected}"
    )]
    BadField {
        source_name: String,
        line: usize,
        field: String,
        value: String,
        expected: String,
    },
    /// The input held no samples at all.
    #[error("{source_name}: no samples found; expected at least one row with `problem_id` and `correct` (or `answer` + `reference`)")]
    Empty { source_name: String },
    /// A problem has no samples (e.g. an lm-eval row with empty `resps`).
    #[error(
        "{source_name}:{line}: problem `{problem}` has zero samples; every problem needs n >= 1"
    )]
    ZeroSamples {
        source_name: String,
        line: usize,
        problem: String,
    },
    /// The lm-eval filter named by the user does not occur in the log.
    #[error("{source_name}: no rows with filter `{filter}` (chosen with --filter); filters present: {available}: pass one of them with --filter")]
    UnknownFilter {
        source_name: String,
        filter: String,
        available: String,
    },
    /// k is larger than the number of samples of some problem.
    #[error("k = {k} exceeds the smallest n = {smallest_n} (problem `{problem}` of model `{model}`); choose k <= {smallest_n}")]
    KTooLarge {
        k: usize,
        smallest_n: usize,
        problem: String,
        model: String,
    },
    /// An lm-eval log holds several filters and none was chosen.
    #[error("{source_name}: several filters present ({available}); choose one by name")]
    AmbiguousFilter {
        source_name: String,
        available: String,
    },
    /// k is larger than n for a single problem.
    #[error("k = {k} exceeds n = {n} samples; choose 1 <= k <= {n}")]
    KExceedsN { k: usize, n: usize },
    /// The correct count exceeds the sample count.
    #[error("c = {c} correct out of n = {n} samples is impossible; expected c <= n")]
    CountExceedsN { c: usize, n: usize },
    /// k must be at least 1.
    #[error("k = 0 is not a valid sample count; choose k >= 1")]
    KZero,
    /// An exact computation would overflow f64.
    #[error("exact maj@k over subsets overflows f64 for problem `{problem}` (n = {n}, k = {k}); choose k <= {k_limit}")]
    MajOverflow {
        problem: String,
        n: usize,
        k: usize,
        k_limit: usize,
    },
    /// A model named by the caller is not in the data.
    #[error("model `{model}` not found; models present: {available}")]
    UnknownModel { model: String, available: String },
    /// A statistic needs more problems than there are.
    #[error("{what} needs at least {needed} problems, found {found}")]
    TooFewProblems {
        what: String,
        needed: usize,
        found: usize,
    },
    /// An option is out of range.
    #[error("option `{option}` = {value} is invalid; expected {expected}")]
    BadOption {
        option: String,
        value: String,
        expected: String,
    },
    /// An archive entry that cannot be read as it stands (damaged, duplicated, too large).
    #[error("{source_name}: entry `{entry}`: {message}")]
    Archive {
        source_name: String,
        entry: String,
        message: String,
    },
    /// An input that is not what its reader reads, said in full (what it is, what would do).
    #[error("{source_name}: {message}")]
    Input {
        source_name: String,
        message: String,
    },
}

/// Result alias for this module.
pub type Result<T> = std::result::Result<T, AnalyzeError>;
