//! Per-problem tallies built from a stream of samples.
//!
//! Readers turn each input line into [`Sample`]s and push them into a [`DatasetBuilder`], which
//! keeps, per model and problem, only what the estimators need: n, c, answer-group sizes (with the
//! distinct normalised answers stored once), the group id of each sample in file order (for the
//! `first` rule; 4 bytes a sample) and the output-token count of each sample when present
//! (8 bytes a sample, for trace-length fitting and truncation rates). Raw answer strings and the
//! rest of each line are dropped as soon as the line is parsed. The text kept (distinct
//! normalised answers and problem ids) is bounded by [`MAX_KEPT_BYTES`] per input.
use std::borrow::Cow;
use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::normalize::{normalize_into, Normalization};
use super::{AnalyzeError, Result};

/// One sampled answer, as read from any input format.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Sample {
    /// Problem identifier.
    pub problem_id: String,
    /// Model name; `None` falls back to the dataset's default model name.
    pub model: Option<String>,
    /// Whether the answer is right, when the harness graded it.
    pub correct: Option<bool>,
    /// The final answer: `None` when the input has no answer field at all, `Some(None)` when the
    /// field is present but null (a missing answer).
    pub answer: Option<Option<String>>,
    /// The reference answer, used when `correct` is absent.
    pub reference: Option<String>,
    /// Output tokens of the trace.
    pub output_tokens: Option<f64>,
    /// Cluster (e.g. a shared passage or source) for clustered standard errors.
    pub cluster: Option<String>,
    /// Run (one rerun of the benchmark) the sample belongs to, when the input names runs.
    pub run: Option<String>,
}

impl Sample {
    /// The same sample, borrowed.
    pub fn as_ref(&self) -> SampleRef<'_> {
        SampleRef {
            problem_id: Cow::Borrowed(&self.problem_id),
            model: self.model.as_deref().map(Cow::Borrowed),
            correct: self.correct,
            answer: self
                .answer
                .as_ref()
                .map(|a| a.as_deref().map(Cow::Borrowed)),
            reference: self.reference.as_deref().map(Cow::Borrowed),
            output_tokens: self.output_tokens,
            cluster: self.cluster.as_deref().map(Cow::Borrowed),
            run: self.run.as_deref().map(Cow::Borrowed),
        }
    }
}

/// A [`Sample`] whose strings are borrowed from the input line where possible, so that reading a
/// row allocates nothing for problems, models and answers already seen.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SampleRef<'a> {
    /// Problem identifier.
    pub problem_id: Cow<'a, str>,
    /// Model name; `None` falls back to the dataset's default model name.
    pub model: Option<Cow<'a, str>>,
    /// Whether the answer is right, when the harness graded it.
    pub correct: Option<bool>,
    /// The final answer (`Some(None)`: present but null).
    pub answer: Option<Option<Cow<'a, str>>>,
    /// The reference answer, used when `correct` is absent.
    pub reference: Option<Cow<'a, str>>,
    /// Output tokens of the trace.
    pub output_tokens: Option<f64>,
    /// Cluster label.
    pub cluster: Option<Cow<'a, str>>,
    /// Run label.
    pub run: Option<Cow<'a, str>>,
}

impl SampleRef<'_> {
    /// The owned sample.
    pub fn into_owned(self) -> Sample {
        Sample {
            problem_id: self.problem_id.into_owned(),
            model: self.model.map(Cow::into_owned),
            correct: self.correct,
            answer: self.answer.map(|a| a.map(Cow::into_owned)),
            reference: self.reference.map(Cow::into_owned),
            output_tokens: self.output_tokens,
            cluster: self.cluster.map(Cow::into_owned),
            run: self.run.map(Cow::into_owned),
        }
    }
}

/// All samples of one problem for one model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProblemSamples {
    /// Problem identifier.
    pub id: String,
    /// Cluster label, when the input has one (the first seen for the problem).
    pub cluster: Option<String>,
    /// Number of samples n.
    pub n: usize,
    /// Number of correct samples c.
    pub correct: usize,
    /// Sizes of the wrong-answer groups (each missing answer is its own group of size 1).
    /// Meaningful only when [`ModelSamples::has_answers`] is true.
    pub wrong_groups: Vec<usize>,
    /// The answer groups of the vote, in first-seen order: the samples of one normalised answer
    /// (right or wrong) form one group; each missing answer (and each sample without an answer
    /// field) is a group of its own. `right` counts the group's samples the harness graded right
    /// (0 < right < size when it graded the same answer both ways). Meaningful only when
    /// [`ModelSamples::has_answers`] is true.
    #[serde(default)]
    pub votes: Vec<VoteGroup>,
    /// Each sample in file order: the index of its group in `votes`, with [`RIGHT_BIT`] set when
    /// the sample was graded right (4 bytes a sample; see [`ProblemSamples::vote_ids`] and
    /// [`ProblemSamples::correct_flags`]).
    pub sequence: Vec<u32>,
    /// Output tokens of each sample in file order (`None` where the input had none).
    pub tokens: Vec<Option<f64>>,
    /// Each sample's score in [0, 1] in file order, kept only for a model with a partial-credit
    /// (non-binary) score; empty otherwise (binary scores are the correct flags).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scores: Vec<f64>,
    /// Samples whose answer field was present but held no extractable answer (absent, null,
    /// empty or blank): graded as the harness graded them, each its own answer in a vote.
    #[serde(default, skip_serializing_if = "crate::model::is_zero")]
    pub unparsed: usize,
    /// Samples whose written answer differs from the first written form of the same normalised
    /// answer in this problem ("0.5" after "1/2", "1,000" after "1000"): the votes the
    /// normaliser merged into an answer written differently. 0 without normalisation.
    #[serde(default, skip_serializing_if = "crate::model::is_zero")]
    pub merged: usize,
    /// Per-run counts, in first-seen run order, when the input names runs (a `run` field);
    /// empty otherwise. Their n and c sum to the problem's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<RunCount>,
    /// Each normalised answer seen (correct or wrong) and where its samples went.
    #[serde(skip)]
    keys: HashMap<String, AnswerSlot>,
}

/// Where the samples of one normalised answer of a problem went.
#[derive(Debug, Clone, Copy, PartialEq)]
struct AnswerSlot {
    /// Index in [`ProblemSamples::votes`].
    vote: u32,
    /// 1 + index in [`ProblemSamples::wrong_groups`] (0 while no sample of it was wrong).
    wrong: u32,
    /// A hash of its first written form (with normalisation), for
    /// [`ProblemSamples::merged`].
    form: Option<u64>,
}

/// One answer of a vote: how many samples gave it and how many of them the harness graded right.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct VoteGroup {
    /// Samples that gave this answer.
    pub size: u32,
    /// Of them, the samples graded right.
    pub right: u32,
}

impl VoteGroup {
    /// True when the harness graded this answer right in some samples and wrong in others.
    pub fn ambiguous(&self) -> bool {
        self.right > 0 && self.right < self.size
    }
}

/// The bit of a [`ProblemSamples::sequence`] entry that marks a sample graded right.
pub const RIGHT_BIT: u32 = 1 << 31;

/// The samples of one problem in one run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunCount {
    /// Run label as read.
    pub run: String,
    /// Samples n in this run.
    pub n: usize,
    /// Correct samples c in this run.
    pub correct: usize,
}

/// A hash of a written answer (SipHash with fixed keys: the same in every run).
fn written_hash(raw: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    raw.hash(&mut h);
    h.finish()
}

impl ProblemSamples {
    fn new(id: String) -> Self {
        ProblemSamples {
            id,
            cluster: None,
            n: 0,
            correct: 0,
            wrong_groups: Vec::new(),
            votes: Vec::new(),
            sequence: Vec::new(),
            tokens: Vec::new(),
            scores: Vec::new(),
            unparsed: 0,
            merged: 0,
            runs: Vec::new(),
            keys: HashMap::new(),
        }
    }

    /// Build a problem directly from counts (for tests and simulations): `correct` right answers
    /// and wrong groups of the given sizes (zeros dropped), in that order.
    pub fn from_groups(id: &str, correct: usize, wrong_groups: &[usize]) -> Self {
        let mut p = ProblemSamples::new(id.to_string());
        p.correct = correct;
        p.wrong_groups = wrong_groups.iter().copied().filter(|&g| g > 0).collect();
        p.n = correct + p.wrong_groups.iter().sum::<usize>();
        let count = |x: usize| u32::try_from(x).unwrap_or(u32::MAX);
        if correct > 0 {
            p.votes.push(VoteGroup {
                size: count(correct),
                right: count(correct),
            });
            p.sequence.extend(std::iter::repeat_n(RIGHT_BIT, correct));
        }
        for &g in &p.wrong_groups {
            let id = count(p.votes.len()).min(RIGHT_BIT - 1);
            p.votes.push(VoteGroup {
                size: count(g),
                right: 0,
            });
            p.sequence.extend(std::iter::repeat_n(id, g));
        }
        p.tokens = vec![None; p.n];
        p
    }

    /// The mean score over the samples and the variance of that mean (sample variance / n;
    /// `None` for n < 2): from the partial-credit scores when kept, else from the correct flags.
    pub fn score_mean_and_variance(&self) -> (f64, Option<f64>) {
        if self.scores.is_empty() {
            let n = self.n as f64;
            let m = self.correct as f64 / n;
            let w = (self.n - self.correct) as f64 / n;
            // Sample variance of 0/1 values: n m (1 - m) / (n - 1).
            let var = (self.n >= 2).then(|| m * w / (n - 1.0));
            return (m, var);
        }
        let n = self.scores.len() as f64;
        let m = self.scores.iter().sum::<f64>() / n;
        let var = (self.scores.len() >= 2)
            .then(|| self.scores.iter().map(|x| (x - m).powi(2)).sum::<f64>() / ((n - 1.0) * n));
        (m, var)
    }

    /// Per-sample correctness in file order.
    pub fn correct_flags(&self) -> impl Iterator<Item = bool> + '_ {
        self.sequence.iter().map(|&g| g & RIGHT_BIT != 0)
    }

    /// Per-sample vote group (index in `votes`) in file order.
    pub fn vote_ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.sequence.iter().map(|&g| g & !RIGHT_BIT)
    }

    /// Answers (vote groups) of this problem the harness graded both right and wrong.
    pub fn ambiguous_answers(&self) -> usize {
        self.votes.iter().filter(|g| g.ambiguous()).count()
    }

    /// Add one sample: `key` is `None` for a sample without an answer field, `Some(None)` for a
    /// missing answer (counted in `unparsed`) and `Some(Some(k))` for the normalised answer `k`,
    /// which groups the sample with the other samples of `k` in the vote (right or wrong) and,
    /// when it is wrong, with the other wrong samples of `k`. `form` is the hash of the written
    /// answer when normalisation is on: the sample counts towards `merged` when the problem saw
    /// `k` before written otherwise.
    fn push(
        &mut self,
        correct: bool,
        key: Option<Option<&str>>,
        form: Option<u64>,
        tokens: Option<f64>,
    ) {
        self.n += 1;
        self.tokens.push(tokens);
        if key == Some(None) {
            self.unparsed += 1;
        }
        let next_vote = u32::try_from(self.votes.len())
            .unwrap_or(u32::MAX)
            .min(RIGHT_BIT - 1);
        let (vote, wrong) = match key {
            Some(Some(v)) => match self.keys.get_mut(v) {
                Some(slot) => {
                    if !correct && slot.wrong == 0 {
                        self.wrong_groups.push(0);
                        slot.wrong = u32::try_from(self.wrong_groups.len()).unwrap_or(u32::MAX);
                    }
                    if form.is_some() && slot.form != form {
                        self.merged += 1;
                    }
                    (slot.vote, slot.wrong)
                }
                None => {
                    self.votes.push(VoteGroup { size: 0, right: 0 });
                    let wrong = if correct {
                        0
                    } else {
                        self.wrong_groups.push(0);
                        u32::try_from(self.wrong_groups.len()).unwrap_or(u32::MAX)
                    };
                    let slot = AnswerSlot {
                        vote: next_vote,
                        wrong,
                        form,
                    };
                    self.keys.insert(v.to_string(), slot);
                    (next_vote, wrong)
                }
            },
            // Missing answers (and samples without any answer field) never group.
            _ => {
                self.votes.push(VoteGroup { size: 0, right: 0 });
                let wrong = if correct {
                    0
                } else {
                    self.wrong_groups.push(0);
                    u32::try_from(self.wrong_groups.len()).unwrap_or(u32::MAX)
                };
                (next_vote, wrong)
            }
        };
        let group = &mut self.votes[vote as usize];
        group.size += 1;
        if correct {
            self.correct += 1;
            group.right += 1;
            self.sequence.push(vote | RIGHT_BIT);
        } else {
            self.wrong_groups[wrong as usize - 1] += 1;
            self.sequence.push(vote);
        }
    }
}

/// All problems of one model, in first-seen order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelSamples {
    /// Model name.
    pub name: String,
    /// Problems in first-seen order.
    pub problems: Vec<ProblemSamples>,
    /// True when the input carried final answers (so maj@k and the attractor share can be
    /// computed); false for pass/fail-only inputs such as human-eval.
    pub has_answers: bool,
    /// True when every sample carried an output-token count.
    pub has_tokens: bool,
}

#[cfg(test)]
impl ModelSamples {
    /// A test model with answers and no tokens: problem `p{i}` has counts[i] = (correct, n),
    /// its wrong answers all in one group.
    pub(crate) fn from_counts(name: &str, counts: &[(usize, usize)]) -> ModelSamples {
        ModelSamples {
            name: name.to_string(),
            problems: counts
                .iter()
                .enumerate()
                .map(|(i, &(c, n))| ProblemSamples::from_groups(&format!("p{i}"), c, &[n - c]))
                .collect(),
            has_answers: true,
            has_tokens: false,
        }
    }
}

impl ModelSamples {
    /// True when some sample carried a partial-credit (non-binary) score: only the mean score is
    /// defined then, not pass@k, pass^k or maj@k.
    pub fn partial_credit(&self) -> bool {
        self.problems.iter().any(|p| !p.scores.is_empty())
    }
}

/// The harness's own aggregate for the score evalsim read (the cross-check against misreads).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HarnessAggregate {
    /// The model it belongs to.
    pub model: String,
    /// Where it was read, e.g. `results.scores[match].metrics.accuracy`.
    pub field: String,
    /// The value the harness wrote (a mean over problems of the per-sample score, so it equals
    /// evalsim's pass@1 = mean c_i / n_i when both read the same samples).
    pub value: f64,
    /// The harness's standard error beside it, when it wrote one.
    pub stderr: Option<f64>,
}

/// Token totals of a model over every sample and every model call (inspect_ai `model_usage`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct TokenTotals {
    /// Input (prompt) tokens.
    pub input: f64,
    /// Output tokens (as the provider counts them: reasoning included where it is).
    pub output: f64,
    /// Reasoning tokens, reported separately by the provider.
    pub reasoning: f64,
}

/// What the harness itself said about the file, beside the samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct HarnessInfo {
    /// The harness's score evalsim read: lm-eval `metric,filter`, the inspect_ai scorer.
    pub score_read: Option<String>,
    /// The harness's aggregates for the score read (none when the file carries none).
    pub aggregates: Vec<HarnessAggregate>,
    /// The log's own epoch-reduced score per model (inspect_ai `reductions`): the mean over
    /// problems of the reducer's value, and the reducer's name.
    pub reductions: Vec<(String, String, f64)>,
    /// Samples skipped because the harness recorded an error for them or no score.
    pub skipped: usize,
    /// Token totals per model, when the harness logged them.
    pub tokens: Vec<(String, TokenTotals)>,
    /// Warnings (a cancelled log, skipped samples, a differing aggregate), also printed on stderr.
    pub warnings: Vec<String>,
}

/// Samples grouped by model and problem.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dataset {
    /// Source name used in messages (usually the file name).
    pub source: String,
    /// Models in first-seen order.
    pub models: Vec<ModelSamples>,
    /// What the harness said beside the samples.
    #[serde(default)]
    pub harness: HarnessInfo,
}

impl Dataset {
    /// The model called `name`.
    ///
    /// # Errors
    /// [`AnalyzeError::UnknownModel`] listing the models present.
    pub fn model(&self, name: &str) -> Result<&ModelSamples> {
        self.models
            .iter()
            .find(|m| m.name == name)
            .ok_or_else(|| AnalyzeError::UnknownModel {
                model: name.to_string(),
                available: self.model_names(),
            })
    }

    fn model_names(&self) -> String {
        self.models
            .iter()
            .map(|m| format!("`{}`", m.name))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A hasher that passes a `u64` through: the keys of [`ProblemIndex`] are already hashes.
#[derive(Default)]
struct PassThrough(u64);

impl std::hash::Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

/// The problems of a model by id, without a copy of each id: a map from the id's hash (SipHash
/// with this index's random keys) to the problem, and the ids whose hash another id already
/// holds (astronomically rare, but never confused) in a map of their own.
struct ProblemIndex<S = std::hash::RandomState> {
    ids: S,
    by_hash: HashMap<u64, u32, std::hash::BuildHasherDefault<PassThrough>>,
    collided: HashMap<String, u32>,
}

impl<S: std::hash::BuildHasher> ProblemIndex<S> {
    fn with_hasher(ids: S) -> Self {
        ProblemIndex {
            ids,
            by_hash: HashMap::default(),
            collided: HashMap::new(),
        }
    }

    /// The problem called `id`, or `None` after registering `id` as problem `next`.
    fn find_or_insert(
        &mut self,
        id: &str,
        problems: &[ProblemSamples],
        next: usize,
    ) -> Option<usize> {
        let next = u32::try_from(next).unwrap_or(u32::MAX);
        match self.by_hash.entry(self.ids.hash_one(id)) {
            std::collections::hash_map::Entry::Occupied(e) => {
                let i = *e.get() as usize;
                if problems[i].id == id {
                    return Some(i);
                }
                match self.collided.get(id) {
                    Some(&i) => Some(i as usize),
                    None => {
                        self.collided.insert(id.to_string(), next);
                        None
                    }
                }
            }
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(next);
                None
            }
        }
    }
}

struct ModelBuilder {
    name: String,
    problems: Vec<ProblemSamples>,
    index: ProblemIndex,
    /// The problem of the previous sample (rows usually come problem by problem).
    last_problem: usize,
    any_answer: bool,
    all_tokens: bool,
    /// Some sample carried a partial-credit score.
    partial: bool,
    /// Whether the model's samples name a run (set by its first sample; every later sample
    /// must agree).
    runs: Option<bool>,
}

/// Largest `output_tokens` of one sample (10^15): far beyond any trace, and small enough that
/// the sums of a file's token counts (2^53 samples at most in practice) stay finite.
pub const MAX_OUTPUT_TOKENS: f64 = 1e15;

/// Most bytes of text (distinct normalised answers, counted once for the vote groups and once
/// for the written forms, and problem ids, counted twice) one input may keep in memory: 256 MiB.
pub const MAX_KEPT_BYTES: usize = 256 << 20;

/// Accumulates [`Sample`]s into a [`Dataset`] line by line.
pub struct DatasetBuilder {
    /// Bytes of text kept so far, and the bound on them ([`MAX_KEPT_BYTES`]).
    kept: usize,
    kept_limit: usize,
    source: String,
    default_model: String,
    normalization: Normalization,
    models: Vec<ModelBuilder>,
    model_index: HashMap<String, usize>,
    /// The model of the previous sample.
    last_model: usize,
    /// Reused buffers for the normalised answer and reference.
    key: String,
    reference_key: String,
    /// Harness metadata collected by the reader.
    pub harness: HarnessInfo,
}

impl DatasetBuilder {
    /// A builder for `source`; samples without a model go to `default_model`.
    pub fn new(source: &str, default_model: &str, normalization: Normalization) -> Self {
        DatasetBuilder {
            kept: 0,
            kept_limit: MAX_KEPT_BYTES,
            source: source.to_string(),
            default_model: default_model.to_string(),
            normalization,
            models: Vec::new(),
            model_index: HashMap::new(),
            last_model: 0,
            key: String::new(),
            reference_key: String::new(),
            harness: HarnessInfo::default(),
        }
    }

    /// Name the source of the samples pushed next (a reader of several files names each).
    pub fn set_source(&mut self, source: &str) {
        self.source = source.to_string();
    }

    /// Source name, for messages.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Add one sample read from `line` (1-based, for messages).
    ///
    /// Correctness is the `correct` flag when present, else whether the normalised answer equals
    /// the normalised reference (a missing answer is wrong).
    ///
    /// # Errors
    /// Neither `correct` nor `answer` + `reference` present; a negative or non-finite token count.
    pub fn push(&mut self, line: usize, sample: Sample) -> Result<()> {
        self.push_ref(line, sample.as_ref())
    }

    /// [`DatasetBuilder::push`] for a borrowed sample: allocates only for a model, problem or
    /// wrong answer not seen before.
    ///
    /// # Errors
    /// As [`DatasetBuilder::push`].
    pub fn push_ref(&mut self, line: usize, sample: SampleRef<'_>) -> Result<()> {
        self.push_inner(line, sample, None)
    }

    /// Add one sample whose harness score is the number `score` (inspect_ai's value-to-float
    /// reading, an lm-eval per-row metric). A score of exactly 0 or 1 is an ordinary wrong or right
    /// sample; any other value in (0, 1) is partial credit, which makes the model's mean score its
    /// only metric (pass@k, pass^k and maj@k need binary scores). `field` names the score in
    /// messages.
    ///
    /// # Errors
    /// A score outside [0, 1] or not finite; as [`DatasetBuilder::push`].
    pub fn push_scored(
        &mut self,
        line: usize,
        mut sample: Sample,
        score: f64,
        field: &str,
    ) -> Result<()> {
        if !(0.0..=1.0).contains(&score) {
            return Err(AnalyzeError::BadField {
                source_name: self.source.clone(),
                line,
                field: field.to_string(),
                value: score.to_string(),
                expected: "a score in [0, 1] (1 correct, 0 wrong, between them partial credit)"
                    .to_string(),
            });
        }
        sample.correct = Some(score == 1.0);
        let partial = (score != 0.0 && score != 1.0).then_some(score);
        self.push_inner(line, sample.as_ref(), partial)
    }

    /// Whether the sample is right: its own `correct`, else its normalised answer against the
    /// normalised reference (a missing answer is wrong). An error names the missing field.
    fn grade(
        &mut self,
        line: usize,
        sample: &SampleRef<'_>,
        answer: Option<Option<&str>>,
        has_key: bool,
    ) -> Result<bool> {
        Ok(match (sample.correct, answer, &sample.reference) {
            (Some(c), _, _) => c,
            (None, Some(_), Some(r)) => {
                let r_is_value =
                    normalize_into(Some(r), self.normalization, &mut self.reference_key);
                // A missing answer is wrong, even against a missing reference.
                has_key && r_is_value && self.key == self.reference_key
            }
            (None, _, _) => {
                let field = if answer.is_some() {
                    "reference"
                } else {
                    "correct"
                };
                return Err(AnalyzeError::MissingField {
                    source_name: self.source.clone(),
                    line,
                    field: field.to_string(),
                    expected: "`correct` (true/false or 0/1), or both `answer` and `reference`"
                        .to_string(),
                });
            }
        })
    }

    /// The index of the model `named` (the default model when the row names none), added on
    /// its first row; remembered as the last model (rows of one model usually come together).
    fn model_slot(&mut self, named: Option<&str>) -> usize {
        let model_name: &str = named.unwrap_or(&self.default_model);
        let mi = match self.models.get(self.last_model) {
            Some(m) if m.name == model_name => self.last_model,
            _ => match self.model_index.get(model_name) {
                Some(&i) => i,
                None => {
                    self.models.push(ModelBuilder {
                        name: model_name.to_string(),
                        problems: Vec::new(),
                        index: ProblemIndex::with_hasher(std::hash::RandomState::new()),
                        last_problem: 0,
                        any_answer: false,
                        all_tokens: true,
                        partial: false,
                        runs: None,
                    });
                    self.model_index
                        .insert(model_name.to_string(), self.models.len() - 1);
                    self.models.len() - 1
                }
            },
        };
        self.last_model = mi;
        mi
    }

    fn push_inner(
        &mut self,
        line: usize,
        sample: SampleRef<'_>,
        partial: Option<f64>,
    ) -> Result<()> {
        let answer: Option<Option<&str>> = sample.answer.as_ref().map(|a| a.as_deref());
        // The normalised answer is needed to grade by reference and to group wrong answers; a
        // sample graded correct never needs it.
        // Every present answer is normalised, correct or not: a missing one counts as unparsed,
        // and the written forms of a normalised answer count the merges.
        let has_key = match answer {
            Some(a) => normalize_into(a, self.normalization, &mut self.key),
            None => false,
        };
        let correct = self.grade(line, &sample, answer, has_key)?;
        if let Some(t) = sample.output_tokens {
            if !t.is_finite() || !(0.0..=MAX_OUTPUT_TOKENS).contains(&t) {
                return Err(AnalyzeError::BadField {
                    source_name: self.source.clone(),
                    line,
                    field: "output_tokens".to_string(),
                    value: t.to_string(),
                    expected: format!("a number of tokens from 0 to {MAX_OUTPUT_TOKENS:e} (a larger count makes the token sums overflow)"),
                });
            }
        }
        let mi = self.model_slot(sample.model.as_deref());
        let model = &mut self.models[mi];
        if partial.is_some() && !model.partial {
            // The first partial-credit sample: keep every score of the model from now on.
            model.partial = true;
            for p in &mut model.problems {
                p.scores = p.correct_flags().map(|c| f64::from(u8::from(c))).collect();
            }
        }
        model.any_answer |= answer.is_some();
        model.all_tokens &= sample.output_tokens.is_some();
        let id: &str = &sample.problem_id;
        let pi = match model.problems.get(model.last_problem) {
            Some(p) if p.id == id => model.last_problem,
            _ => match model
                .index
                .find_or_insert(id, &model.problems, model.problems.len())
            {
                Some(i) => i,
                None => {
                    self.kept += 2 * id.len();
                    model.problems.push(ProblemSamples::new(id.to_string()));
                    model.problems.len() - 1
                }
            },
        };
        model.last_problem = pi;
        note_run(&self.source, line, model, sample.run.as_deref())?;
        let problem = &mut model.problems[pi];
        if let Some(run) = sample.run.as_deref() {
            let r = match problem.runs.iter().position(|r| r.run == run) {
                Some(r) => r,
                None => {
                    problem.runs.push(RunCount {
                        run: run.to_string(),
                        n: 0,
                        correct: 0,
                    });
                    problem.runs.len() - 1
                }
            };
            problem.runs[r].n += 1;
            problem.runs[r].correct += usize::from(correct);
        }
        if problem.cluster.is_none() {
            problem.cluster = sample.cluster.map(Cow::into_owned);
        }
        let standard = self.normalization == Normalization::Standard;
        if has_key && !problem.keys.contains_key(self.key.as_str()) {
            // Counted once for the vote group and, with normalisation, once for the written
            // form.
            self.kept += self.key.len() * (1 + usize::from(standard));
        }
        if self.kept > self.kept_limit {
            return Err(AnalyzeError::Input {
                source_name: format!("{}:{line}", self.source),
                message: format!(
                    "the distinct answers and problem ids read so far exceed {} MiB, the bound \
                     on the text analyze keeps for one input (each distinct normalised answer of \
                     a problem is kept for maj@k); answers this long are not final answers: put \
                     only the extracted final answer in `answer`, or leave `answer` out (no \
                     maj@k then)",
                    self.kept_limit >> 20
                ),
            });
        }
        let key = answer.map(|_| has_key.then_some(self.key.as_str()));
        let form = match (key, answer) {
            (Some(Some(_)), Some(Some(raw))) if standard => Some(written_hash(raw)),
            _ => None,
        };
        problem.push(correct, key, form, sample.output_tokens);
        if model.partial {
            problem
                .scores
                .push(partial.unwrap_or(f64::from(u8::from(correct))));
        }
        Ok(())
    }

    /// Register a problem that has no samples, so that `finish` reports it (used by readers that
    /// see a problem row with zero repeats).
    ///
    /// # Errors
    /// Always [`AnalyzeError::ZeroSamples`].
    pub fn zero_samples(&self, line: usize, problem: &str) -> Result<()> {
        Err(AnalyzeError::ZeroSamples {
            source_name: self.source.clone(),
            line,
            problem: problem.to_string(),
        })
    }

    /// The finished dataset.
    ///
    /// # Errors
    /// [`AnalyzeError::Empty`] when no sample was pushed.
    pub fn finish(self) -> Result<Dataset> {
        if self.models.is_empty() {
            return Err(AnalyzeError::Empty {
                source_name: self.source,
            });
        }
        let models = self
            .models
            .into_iter()
            .map(|m| ModelSamples {
                name: m.name,
                has_answers: m.any_answer,
                has_tokens: m.all_tokens,
                problems: m.problems,
            })
            .collect();
        Ok(Dataset {
            source: self.source,
            models,
            harness: self.harness,
        })
    }
}

/// Records whether `model`'s rows name runs (its first row decides) and refuses a row that
/// breaks the rule: every row of a model names a run, or none does.
fn note_run(source: &str, line: usize, model: &mut ModelBuilder, run: Option<&str>) -> Result<()> {
    let has_run = run.is_some();
    match model.runs {
            None => {
                model.runs = Some(has_run);
                Ok(())
            }
            Some(true) if !has_run => {
                Err(AnalyzeError::MissingField {
                    source_name: source.to_string(),
                    line,
                    field: "run".to_string(),
                    expected: format!(
                        "a run id (string or integer) on every row of model `{}`: earlier rows of it name a run",
                        model.name
                    ),
                })
            }
            Some(false) if has_run => {
                Err(AnalyzeError::BadField {
                    source_name: source.to_string(),
                    line,
                    field: "run".to_string(),
                    value: run.unwrap_or_default().to_string(),
                    expected: format!(
                        "no run: earlier rows of model `{}` name none (give every row of a model a run, or none)",
                        model.name
                    ),
                })
            }
            _ => Ok(()),
        }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(problem: &str, correct: Option<bool>, answer: Option<Option<&str>>) -> Sample {
        Sample {
            problem_id: problem.to_string(),
            correct,
            answer: answer.map(|a| a.map(str::to_string)),
            reference: Some("0.5".to_string()),
            ..Sample::default()
        }
    }

    /// Every present but empty answer is unparsed, whether the harness graded it right or wrong;
    /// a sample without an answer field is not. Merges count written forms per problem, among
    /// correct and wrong answers alike, and never across problems.
    #[test]
    fn unparsed_and_merged_counts() {
        let mut b = DatasetBuilder::new("t", "m", Normalization::Standard);
        let rows = [
            sample("p", Some(true), Some(Some("1/2"))),
            sample("p", None, Some(Some("0.50"))), // graded against 0.5: right, merged
            sample("p", Some(true), Some(None)),   // right by the harness, no answer
            sample("p", None, Some(Some("   "))),  // blank: unparsed, wrong
            sample("p", Some(false), Some(Some("7"))),
            sample("p", Some(false), Some(Some("7.0"))), // merged
            sample("p", Some(false), Some(Some("7"))),   // the first form again
            sample("q", Some(false), Some(Some("7.0"))), // another problem: first form there
            sample("q", Some(false), None),              // no answer field
        ];
        for (i, s) in rows.into_iter().enumerate() {
            b.push(i + 1, s).expect("push");
        }
        let d = b.finish().expect("finish");
        let p = &d.models[0].problems;
        assert_eq!((p[0].unparsed, p[0].merged), (2, 2));
        assert_eq!((p[1].unparsed, p[1].merged), (0, 0));
        assert_eq!(p[0].correct, 3);
        // The merged wrong answers still vote together: one group of 3 for "7".
        assert!(p[0].wrong_groups.contains(&3), "{:?}", p[0].wrong_groups);

        let mut off = DatasetBuilder::new("t", "m", Normalization::Off);
        off.push(1, sample("p", Some(false), Some(Some("7"))))
            .expect("push");
        off.push(2, sample("p", Some(false), Some(Some("7.0"))))
            .expect("push");
        off.push(3, sample("p", Some(false), Some(Some(""))))
            .expect("push");
        let d = off.finish().expect("finish");
        let p = &d.models[0].problems[0];
        assert_eq!((p.unparsed, p.merged), (1, 0));
    }

    /// The index keeps only hashes of the ids: ids whose hashes collide (here all of them) are
    /// still told apart, and a repeated id finds its problem.
    #[test]
    fn problems_whose_ids_share_a_hash_stay_apart() {
        #[derive(Default)]
        struct Same;
        impl std::hash::Hasher for Same {
            fn finish(&self) -> u64 {
                7
            }
            fn write(&mut self, _: &[u8]) {}
        }
        let mut index = ProblemIndex::with_hasher(std::hash::BuildHasherDefault::<Same>::default());
        let mut problems: Vec<ProblemSamples> = Vec::new();
        let mut found = Vec::new();
        for id in ["a", "b", "a", "c", "b", "c", "d"] {
            match index.find_or_insert(id, &problems, problems.len()) {
                Some(i) => found.push((id, problems[i].id.clone())),
                None => problems.push(ProblemSamples::new(id.to_string())),
            }
        }
        let ids: Vec<&str> = problems.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(ids, ["a", "b", "c", "d"]);
        assert!(found.iter().all(|(id, got)| id == got) && found.len() == 3);
    }

    #[test]
    fn many_long_answers_grew_memory_without_bound() {
        let mut b = DatasetBuilder::new("long.jsonl", "m", Normalization::Standard);
        b.kept_limit = 10_000;
        let mut line = 0;
        let err = loop {
            line += 1;
            assert!(line < 100, "never refused");
            let answer = format!("{line}{}", "x".repeat(1000));
            if let Err(e) = b.push(line, sample("p", Some(false), Some(Some(&answer)))) {
                break e.to_string();
            }
        };
        // Each distinct wrong answer is kept twice (vote group and written form): refused on
        // the fifth 1 KB answer, naming the file, the line and the bound.
        assert_eq!(line, 5, "{err}");
        assert!(
            err.contains("long.jsonl:5") && err.contains("final answer"),
            "{err}"
        );
        // Repeating an answer already kept costs nothing.
        let mut b = DatasetBuilder::new("same.jsonl", "m", Normalization::Standard);
        b.kept_limit = 10_000;
        let answer = "x".repeat(1000);
        for line in 1..1000 {
            b.push(line, sample("p", Some(false), Some(Some(&answer))))
                .expect("one answer kept once");
        }
    }
}
