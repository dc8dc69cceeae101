//! inspect_ai logs: the `.json` log (one JSON document, streamed sample by sample) and the
//! default `.eval` log (a zip archive, read by [`archive`]: `header.json` with the eval, status
//! and results, `reductions.json`, one `samples/<id>_epoch_<e>.json` per sample, `_journal/`
//! while running).
//!
//! What is read (README "Input formats"): correctness from the chosen scorer's `value` (`C`/`I`/`N`,
//! true/false or 0/1; `--scorer` when several, `--score-key` for a dict-valued score); output
//! tokens from the sample's `model_usage` summed over every model call (`output.usage`, the last
//! call only, when `model_usage` is absent); the model name from `eval.model`; the harness's
//! aggregate from `results.scores`, the epoch reducers' values from `reductions`. Samples with an
//! `error` or without a score are skipped and counted; a log in which every sample was skipped is
//! refused as an unscored log. A log whose `status` is not `success` is read with a warning. A
//! sample id read twice in one epoch, and a top-level key of the `.json` log given twice, are
//! refused (which copy is meant is a guess).
//!
//! Depends on `read::fields`, the shared line iterator and [`crate::analyze::data`]'s builder;
//! computes no statistics (a harness's own aggregate is copied, never recomputed).
use std::cell::Cell;
use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::io::{BufRead, Read};
use std::rc::Rc;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

use super::fields::{quoted_list, Ctx};
use super::{FormatReader, ReadOptions};
use crate::analyze::data::{DatasetBuilder, HarnessAggregate, Sample, TokenTotals};
use crate::analyze::{AnalyzeError, Result};

mod archive;

pub use archive::{MAX_ARCHIVE_BYTES, MAX_ENTRY_BYTES, MAX_INFLATED_BYTES};

/// Which score of an inspect_ai log to read.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct ScoreChoice<'a> {
    /// The scorer (required when samples carry several).
    pub scorer: Option<&'a str>,
    /// The key of a dict-valued score.
    pub key: Option<&'a str>,
    /// The key of each sample's `metadata` that names its cluster.
    pub cluster: Option<&'a str>,
}

/// Counts newlines as serde_json pulls bytes, so errors inside the document can name a line.
struct LineCounter<'a> {
    inner: &'a mut dyn Read,
    newlines: Rc<Cell<usize>>,
}

impl Read for LineCounter<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let count = buf[..n].iter().filter(|&&b| b == b'\n').count();
        self.newlines.set(self.newlines.get() + count);
        Ok(n)
    }
}

#[derive(Deserialize)]
struct InspectEval {
    model: Option<String>,
}

#[derive(Deserialize)]
struct InspectScore {
    value: Value,
    answer: Option<Value>,
}

#[derive(Deserialize, Default)]
struct InspectUsage {
    input_tokens: Option<f64>,
    output_tokens: Option<f64>,
    reasoning_tokens: Option<f64>,
}

#[derive(Deserialize)]
struct InspectOutput {
    usage: Option<InspectUsage>,
}

#[derive(Deserialize)]
struct InspectSample {
    id: Value,
    epoch: Option<u64>,
    target: Option<Value>,
    scores: Option<BTreeMap<String, InspectScore>>,
    score: Option<InspectScore>,
    output: Option<InspectOutput>,
    model_usage: Option<BTreeMap<String, InspectUsage>>,
    error: Option<Value>,
    metadata: Option<Value>,
}

#[derive(Deserialize)]
struct InspectMetric {
    value: Option<f64>,
}

#[derive(Deserialize)]
struct InspectEvalScore {
    name: String,
    scorer: Option<String>,
    #[serde(default)]
    metrics: BTreeMap<String, InspectMetric>,
}

#[derive(Deserialize)]
struct InspectResults {
    #[serde(default)]
    scores: Vec<InspectEvalScore>,
}

#[derive(Deserialize)]
struct InspectReductionSample {
    value: Value,
}

#[derive(Deserialize)]
struct InspectReduction {
    scorer: String,
    reducer: Option<String>,
    #[serde(default)]
    samples: Vec<InspectReductionSample>,
}

struct InspectState<'a> {
    builder: &'a mut DatasetBuilder,
    choice: ScoreChoice<'a>,
    model: Option<String>,
    status: Option<String>,
    results: Option<InspectResults>,
    reductions: Option<Vec<InspectReduction>>,
    /// The scorer read (the one chosen, or the only one).
    scorer_read: Option<String>,
    newlines: Rc<Cell<usize>>,
    /// In an `.eval` archive: the entry being read (named in messages instead of a line).
    entry: Option<String>,
    index: usize,
    error: Option<AnalyzeError>,
    samples_seen: bool,
    skipped: usize,
    /// Of `skipped`: the samples with an `error`.
    errored: usize,
    /// Samples read (scored).
    read: usize,
    /// (id, epoch) of every sample read, to refuse one read twice.
    seen: HashSet<(String, u64)>,
    /// Top-level keys of a `.json` log read so far (the first 64), to refuse one given twice and
    /// to say what a document that is no log looks like.
    keys: Vec<String>,
    tokens: TokenTotals,
    any_usage: bool,
    /// A key only lm-eval's `results_*.json` has was seen.
    lm_eval_results: bool,
}

/// A score value as evalsim reads it: `C` (1), `I`/`N` (0), true/false, 0/1.
fn binary_value(v: &Value) -> Option<bool> {
    match v {
        Value::String(s) if s == "C" => Some(true),
        Value::String(s) if s == "I" || s == "N" => Some(false),
        Value::Bool(b) => Some(*b),
        Value::Number(n) if n.as_f64() == Some(1.0) => Some(true),
        Value::Number(n) if n.as_f64() == Some(0.0) => Some(false),
        _ => None,
    }
}

/// The score as a number, as inspect_ai's `value_to_float` reads it (`P` is 0.5).
fn float_value(v: &Value) -> Option<f64> {
    match v {
        Value::String(s) if s == "C" => Some(1.0),
        Value::String(s) if s == "P" => Some(0.5),
        Value::String(s) if s == "I" || s == "N" => Some(0.0),
        Value::Bool(b) => Some(f64::from(u8::from(*b))),
        Value::Number(n) => n.as_f64(),
        _ => None,
    }
}

impl InspectState<'_> {
    fn line(&self) -> usize {
        self.newlines.get() + 1
    }

    fn source(&self) -> String {
        match &self.entry {
            Some(e) => format!("{} ({e})", self.builder.source()),
            None => self.builder.source().to_string(),
        }
    }

    /// A sample's output tokens: the sum over every model call in `model_usage` (None when a
    /// call does not report them), else the last call's `output.usage`; the input and
    /// reasoning tokens of the calls are added to the log's totals.
    fn output_tokens(
        &mut self,
        model_usage: Option<BTreeMap<String, InspectUsage>>,
        output: Option<InspectOutput>,
    ) -> Option<f64> {
        match model_usage.filter(|u| !u.is_empty()) {
            Some(usage) => {
                let mut out = 0.0;
                let mut all = true;
                for u in usage.values() {
                    self.tokens.input += u.input_tokens.unwrap_or(0.0);
                    self.tokens.reasoning += u.reasoning_tokens.unwrap_or(0.0);
                    match u.output_tokens {
                        Some(t) => out += t,
                        None => all = false,
                    }
                }
                self.any_usage = true;
                all.then_some(out)
            }
            None => output.and_then(|o| o.usage).and_then(|u| u.output_tokens),
        }
    }

    fn add(&mut self, sample: InspectSample) -> Result<()> {
        let source = self.source();
        let line = self.line();
        let ctx = Ctx {
            source: &source,
            line,
        };
        let i = self.index;
        self.index += 1;
        let problem_id = ctx.id_value(&format!("samples[{i}].id"), &sample.id)?;
        // inspect numbers epochs from 1; a log without epochs has one.
        let epoch = sample.epoch.unwrap_or(1);
        if !self.seen.insert((problem_id.clone(), epoch)) {
            return Err(read_twice(&source, line, i, &problem_id, epoch));
        }
        let errored = !matches!(sample.error, None | Some(Value::Null));
        let scores = sample.scores.filter(|s| !s.is_empty());
        if errored || (scores.is_none() && sample.score.is_none()) {
            self.skipped += 1;
            self.errored += usize::from(errored);
            return Ok(());
        }
        let (scorer_name, score) = match (scores, sample.score) {
            (Some(mut scores), _) => match self.choice.scorer {
                Some(name) => match scores.remove(name) {
                    Some(s) => (name.to_string(), s),
                    None => {
                        let names: Vec<String> = scores.keys().cloned().collect();
                        return Err(ctx.missing(
                            &format!("samples[{i}].scores.{name}"),
                            &format!(
                                "a scorer present in the log: {} (choose with --scorer NAME)",
                                quoted_list(&names)
                            ),
                        ));
                    }
                },
                None if scores.len() == 1 => match scores.pop_first() {
                    Some(s) => s,
                    None => return Err(ctx.missing(&format!("samples[{i}].scores"), "one score")),
                },
                None => {
                    let names: Vec<String> = scores.keys().cloned().collect();
                    return Err(ctx.missing(
                        "--scorer",
                        &format!(
                            "one of the scorers of samples[{i}]: {}; choose one with --scorer NAME",
                            quoted_list(&names)
                        ),
                    ));
                }
            },
            (None, Some(score)) => ("score".to_string(), score),
            (None, None) => unreachable_score(),
        };
        if self.scorer_read.is_none() {
            self.scorer_read = Some(scorer_name.clone());
        }
        let mut field = format!("samples[{i}].scores.{scorer_name}.value");
        let value = match (&score.value, self.choice.key) {
            (Value::Object(map), Some(key)) => {
                field = format!("{field}.{key}");
                match map.get(key) {
                    Some(v) => v.clone(),
                    None => {
                        let keys: Vec<String> = map.keys().cloned().collect();
                        return Err(ctx.missing(
                            &field,
                            &format!("a key of the dict-valued score: {}", quoted_list(&keys)),
                        ));
                    }
                }
            }
            (Value::Object(map), None) => {
                let keys: Vec<String> = map.keys().cloned().collect();
                return Err(ctx.missing(
                    "--score-key",
                    &format!(
                        "one key of the dict-valued score {field}: {}; choose one with --score-key KEY",
                        quoted_list(&keys)
                    ),
                ));
            }
            (v, Some(key)) => {
                return Err(ctx.bad(
                    &field,
                    v,
                    &format!(
                         "a dict-valued score for --score-key `{key}`: scorer `{scorer_name}` gives \
                         a single value, so the key cannot apply; drop --score-key (or choose the \
                         scorer with the dict score with --scorer NAME)"
                    ),
                ));
            }
            (v, None) => v.clone(),
        };
        // A binary score is a right or wrong sample; any other number inspect maps to a float
        // (`P` = 0.5, a value in [0, 1]) is partial credit, read as the harness reads it.
        let score_value =
            match binary_value(&value) {
                Some(c) => Err(c),
                None => match float_value(&value) {
                    Some(x) => Ok(x),
                    None => return Err(ctx.bad(
                        &field,
                        &value,
                        "\"C\" (correct), \"I\" (incorrect), \"N\" (no answer), \"P\" (partial, \
                         0.5), true/false or a number in [0, 1]",
                    )),
                },
            };
        let answer = match &score.answer {
            None => None,
            Some(v) => Some(ctx.text_value(&format!("samples[{i}].scores.answer"), v)?),
        };
        let reference = match &sample.target {
            Some(Value::Array(items)) => items.first().and_then(|v| v.as_str()).map(str::to_string),
            Some(Value::String(s)) => Some(s.clone()),
            _ => None,
        };
        // Every model call of the sample: `model_usage` sums them per model; `output.usage` is
        // only the last call.
        let output_tokens = self.output_tokens(sample.model_usage, sample.output);
        if let Some(t) = output_tokens {
            self.tokens.output += t;
        }
        let cluster = cluster_of(&ctx, i, self.choice.cluster, sample.metadata.as_ref())?;
        let sample = Sample {
            problem_id,
            model: self.model.clone(),
            correct: score_value.err(),
            answer,
            reference,
            output_tokens,
            cluster,
            // inspect epochs are not runs: the epochs of a sample are its repeated samples
            run: None,
        };
        self.read += 1;
        match score_value {
            Ok(x) => self.builder.push_scored(line, sample, x, &field),
            Err(_) => self.builder.push(line, sample),
        }
    }

    /// The refusal of a log none of whose samples carries a score.
    fn unscored(&self) -> AnalyzeError {
        let source = self.builder.source().to_string();
        let n = self.index;
        let unscored = self.skipped - self.errored;
        let message = if n == 0 {
            "an inspect_ai log with 0 samples: nothing to analyse (was the eval run with \
             --limit 0, or cancelled before its first sample?)"
                .to_string()
        } else {
            let mut why = Vec::new();
            if self.errored > 0 {
                why.push(format!(
                    "{} ended in an error (the `error` field; e.g. a failed tool call): re-run \
                     them with `inspect eval-retry {source}`",
                    self.errored
                ));
            }
            if unscored > 0 {
                why.push(format!(
                    "{unscored} have no score (the eval ran without a scorer, or with \
                     --no-score): score them with `inspect score {source}`"
                ));
            }
            format!(
                "an inspect_ai log with {n} sample(s), none scored: {}; then analyse the log \
                 again",
                why.join("; ")
            )
        };
        AnalyzeError::Input {
            source_name: source,
            message,
        }
    }

    /// Records the status warning, the skipped count, the token totals, the harness aggregate
    /// and the epoch reducers' values in the builder.
    ///
    /// # Errors
    /// No sample was scored ([`Self::unscored`]).
    fn finish(self) -> Result<()> {
        if self.read == 0 {
            return Err(self.unscored());
        }
        let model = self.model.clone().unwrap_or_else(|| "model".to_string());
        let source = self.builder.source().to_string();
        let h = &mut self.builder.harness;
        if let Some(status) = self.status.as_deref().filter(|s| *s != "success") {
            h.warnings.push(format!(
                "{source}: the log's status is `{status}`, not `success`: it may not hold every \
                 sample; analysed what it holds"
            ));
        }
        if self.skipped > 0 {
            h.skipped += self.skipped;
            h.warnings.push(format!(
                "{source}: {} sample(s) skipped: the harness recorded an error or no score for them",
                self.skipped
            ));
        }
        if self.any_usage {
            h.tokens.push((model.clone(), self.tokens));
        }
        let Some(scorer) = self.scorer_read else {
            return Ok(());
        };
        // The results entry of the score read: `name` is the scorer, or the key of a
        // dict-valued score (whose `scorer` is then the scorer).
        let wanted = self.choice.key.unwrap_or(&scorer);
        if let Some(results) = &self.results {
            let entry = results.scores.iter().find(|s| {
                s.name == wanted
                    && (self.choice.key.is_none() || s.scorer.as_deref() == Some(&scorer))
            });
            if let Some(entry) = entry {
                let metric = ["accuracy", "mean"]
                    .into_iter()
                    .find_map(|m| entry.metrics.get(m).and_then(|x| x.value).map(|v| (m, v)));
                if let Some((metric, value)) = metric {
                    h.aggregates.push(HarnessAggregate {
                        model: model.clone(),
                        field: format!("results.scores[{}].metrics.{metric}", entry.name),
                        value,
                        stderr: entry.metrics.get("stderr").and_then(|x| x.value),
                    });
                }
            }
        }
        if let Some(reductions) = &self.reductions {
            if let Some(r) = reductions.iter().find(|r| r.scorer == scorer) {
                let values: Vec<f64> = r
                    .samples
                    .iter()
                    .filter_map(|s| match (&s.value, self.choice.key) {
                        (Value::Object(m), Some(k)) => m.get(k).and_then(float_value),
                        (v, _) => float_value(v),
                    })
                    .collect();
                if !values.is_empty() && values.len() == r.samples.len() {
                    let mean = values.iter().sum::<f64>() / values.len() as f64;
                    h.reductions.push((
                        model,
                        r.reducer.clone().unwrap_or_else(|| "mean".to_string()),
                        mean,
                    ));
                }
            }
        }
        Ok(())
    }
}

fn unreachable_score() -> (String, InspectScore) {
    // Samples without scores were skipped above.
    (
        String::new(),
        InspectScore {
            value: Value::Null,
            answer: None,
        },
    )
}

struct SamplesSeed<'s, 'a>(&'s mut InspectState<'a>);

impl<'de> DeserializeSeed<'de> for SamplesSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for SamplesSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of samples")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<(), A::Error> {
        while let Some(sample) = seq.next_element::<InspectSample>()? {
            if let Err(e) = self.0.add(sample) {
                self.0.error = Some(e);
                return Err(de::Error::custom("sample rejected"));
            }
        }
        Ok(())
    }
}

struct LogVisitor<'s, 'a>(&'s mut InspectState<'a>);

impl<'de> Visitor<'de> for LogVisitor<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an inspect_ai log object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            let known = ["eval", "status", "results", "reductions", "samples"];
            if self.0.keys.contains(&key) {
                if known.contains(&key.as_str()) {
                    self.0.error = Some(AnalyzeError::BadField {
                        source_name: self.0.source(),
                        line: self.0.line(),
                        field: key.clone(),
                        value: "a second value".to_string(),
                        expected: format!(
                            "one `{key}` in the log (inspect_ai writes each key once): which copy \
                             is meant is a guess; write the log again"
                        ),
                    });
                    return Err(de::Error::custom("duplicate key"));
                }
            } else if self.0.keys.len() < 64 {
                self.0.keys.push(key.clone());
            }
            match key.as_str() {
                "eval" => {
                    let eval: InspectEval = map.next_value()?;
                    self.0.model = eval.model;
                }
                "status" => {
                    self.0.status = map.next_value::<Option<String>>()?;
                }
                "results" => {
                    self.0.results = map.next_value::<Option<InspectResults>>()?;
                }
                "reductions" => {
                    self.0.reductions = map.next_value::<Option<Vec<InspectReduction>>>()?;
                }
                "lm_eval_version" | "group_subtasks" | "configs" => {
                    self.0.lm_eval_results = true;
                    map.next_value::<IgnoredAny>()?;
                }
                "samples" => {
                    self.0.samples_seen = true;
                    map.next_value_seed(SamplesSeed(self.0))?;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for LogVisitor<'_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

fn new_state<'a>(builder: &'a mut DatasetBuilder, choice: ScoreChoice<'a>) -> InspectState<'a> {
    InspectState {
        builder,
        choice,
        model: None,
        status: None,
        results: None,
        reductions: None,
        scorer_read: None,
        newlines: Rc::new(Cell::new(0)),
        entry: None,
        index: 0,
        error: None,
        samples_seen: false,
        skipped: 0,
        errored: 0,
        read: 0,
        seen: HashSet::new(),
        keys: Vec::new(),
        tokens: TokenTotals::default(),
        any_usage: false,
        lm_eval_results: false,
    }
}

/// The inspect_ai log reader (`.json` or `.eval`).
pub(super) struct Inspect;

impl FormatReader for Inspect {
    fn read(
        &self,
        input: &mut dyn BufRead,
        builder: &mut DatasetBuilder,
        options: &ReadOptions,
    ) -> Result<()> {
        read_inspect(
            input,
            builder,
            ScoreChoice {
                scorer: options.scorer.as_deref(),
                key: options.score_key.as_deref(),
                cluster: options.cluster_key.as_deref(),
            },
        )
    }
}

/// Reads an inspect_ai log: a `.eval` archive (recognised by the zip magic) or a `.json` log.
pub(super) fn read_inspect(
    reader: &mut dyn BufRead,
    builder: &mut DatasetBuilder,
    choice: ScoreChoice<'_>,
) -> Result<()> {
    let source = builder.source().to_string();
    let io = |error| AnalyzeError::Io {
        source_name: source.clone(),
        line: 0,
        error,
    };
    let head = reader.fill_buf().map_err(io)?;
    if head.starts_with(b"PK\x03\x04") {
        let mut bytes = Vec::new();
        reader
            .take(MAX_ARCHIVE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(io)?;
        if bytes.len() as u64 > MAX_ARCHIVE_BYTES {
            return Err(AnalyzeError::Input {
                source_name: source,
                message: format!(
                    "an `.eval` archive larger than {} GiB (the bound on one archive, which is \
                     held in memory while read): split the log or analyse fewer samples at a time",
                    MAX_ARCHIVE_BYTES >> 30
                ),
            });
        }
        return archive::read_eval_archive(&bytes, builder, choice, archive::LIMITS);
    }
    // A byte order mark before the document (an editor's), which JSON does not allow.
    if head.starts_with(b"\xEF\xBB\xBF") {
        reader.consume(3);
    }
    let mut state = new_state(builder, choice);
    let counter = LineCounter {
        inner: reader,
        newlines: Rc::clone(&state.newlines),
    };
    let mut de = serde_json::Deserializer::from_reader(counter);
    let outcome = LogVisitor(&mut state)
        .deserialize(&mut de)
        .and_then(|()| de.end());
    if let Some(e) = state.error.take() {
        return Err(e);
    }
    let inspect_keys = ["eval", "samples", "status", "version"];
    let looks_like_log = state
        .keys
        .iter()
        .any(|k| inspect_keys.contains(&k.as_str()));
    if !looks_like_log && !state.lm_eval_results && (outcome.is_err() || !state.samples_seen) {
        let what = match &outcome {
            Err(e) if state.keys.is_empty() => {
                format!("a JSON document that is not an object ({e})")
            }
            Err(e) => format!("JSON that is not one inspect_ai log ({e})"),
            Ok(()) => {
                "a JSON object that is not an inspect_ai log (no `eval`, no `samples`)".to_string()
            }
        };
        return Err(AnalyzeError::Input {
            source_name: source,
            message: format!(
                "read as an inspect_ai log (a `.json` file is one), but it holds {what}; evalsim \
                 reads {}. This file looks like {}",
                crate::analyze::detect::ACCEPTED_FORMATS,
                crate::analyze::detect::resemblance(&state.keys)
            ),
        });
    }
    if let Err(e) = outcome {
        return Err(AnalyzeError::Json {
            source_name: source,
            line: e.line(),
            message: format!(
                "{e} (an inspect_ai `.json` or `.eval` log is expected; a truncated file must be \
                 written again)"
            ),
        });
    }
    if !state.samples_seen && state.lm_eval_results {
        return Err(AnalyzeError::MissingField {
            source_name: source,
            line: 1,
            field: "samples".to_string(),
            expected: "per-sample results: this is lm-eval's `results_*.json` (aggregates only); \
                       pass the `samples_<task>_*.jsonl` beside it, or the folder holding both"
                .to_string(),
        });
    }
    if !state.samples_seen {
        return Err(AnalyzeError::MissingField {
            source_name: source,
            line: 1,
            field: "samples".to_string(),
            expected: "a log written with samples (inspect_ai logs the samples by default)"
                .to_string(),
        });
    }
    state.finish()
}

/// The cluster of sample `i`: its metadata's value at `--cluster`'s key (None without the
/// option). An error lists the keys its metadata has.
fn cluster_of(
    ctx: &Ctx<'_>,
    i: usize,
    cluster_key: Option<&str>,
    metadata: Option<&Value>,
) -> Result<Option<String>> {
    Ok(match cluster_key {
        None => None,
        Some(key) => {
            let field = format!("samples[{i}].metadata.{key}");
            match metadata.and_then(|m| m.get(key)) {
                Some(v) => Some(ctx.id_value(&field, v)?),
                None => {
                    let keys: Vec<String> = match metadata {
                        Some(Value::Object(m)) => m.keys().cloned().collect(),
                        _ => Vec::new(),
                    };
                    return Err(ctx.missing(
                        &field,
                        &if keys.is_empty() {
                            format!(
                                "the cluster key `{key}` named by --cluster in every sample's \
                                 metadata; this sample has no metadata keys"
                            )
                        } else {
                            format!(
                                "the cluster key `{key}` named by --cluster in every sample's \
                                 metadata; this sample's keys: {}",
                                quoted_list(&keys)
                            )
                        },
                    ));
                }
            }
        }
    })
}

/// The refusal of a sample read a second time in the same epoch (an altered or merged log).
fn read_twice(source: &str, line: usize, i: usize, problem_id: &str, epoch: u64) -> AnalyzeError {
    AnalyzeError::BadField {
        source_name: source.to_string(),
        line,
        field: format!("samples[{i}].id"),
        value: format!("`{problem_id}` (epoch {epoch})"),
        expected: format!(
            "each sample once per epoch: sample `{problem_id}` of epoch {epoch} was \
             already read, so the log was altered or merged and which copy counts is a \
             guess; write the log again"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{counts, fixture, read_str};
    use super::super::{Format, ReadOptions};

    #[test]
    fn inspect_log() {
        let d = read_str(
            Format::Inspect,
            &fixture("inspect_log_gsm8k.json"),
            &ReadOptions::default(),
        )
        .unwrap();
        let m = &d.models[0];
        assert_eq!(m.name, "openai/gpt-4o-mini");
        assert_eq!(
            counts(m),
            vec![
                ("1".to_string(), 3, 2, vec![1]),
                ("2".to_string(), 3, 1, vec![2])
            ]
        );
        assert!(m.has_tokens && m.has_answers);
        assert_eq!(
            m.problems[1].tokens,
            vec![Some(280.0), Some(300.0), Some(320.0)]
        );
    }

    #[test]
    fn inspect_errors_name_line_and_field() {
        let text = fixture("inspect_log_gsm8k.json").replacen(
            "\"value\": \"I\"",
            "\"value\": \"maybe\"",
            1,
        );
        let err = read_str(Format::Inspect, &text, &ReadOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("samples[1].scores.") && err.contains(".value") && err.contains("\"C\""),
            "{err}"
        );
        assert!(
            err.contains("test.in:3"),
            "line of the second sample's end: {err}"
        );
        let err = read_str(
            Format::Inspect,
            "{\"eval\": {\"model\": \"m\"}, \"samples\": [",
            &ReadOptions::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("malformed JSON"), "{err}");
    }

    /// inspect sample metadata named with `--cluster` becomes each problem's cluster; a sample
    /// without the key is refused naming the field and the keys it has.
    #[test]
    fn inspect_metadata_names_the_cluster() {
        // Every sample's metadata is `{}` in the fixture: the first four (problem 1's three
        // epochs, problem 2's first) get a subject, the last two another.
        let mut text = fixture("inspect_log_gsm8k.json");
        for subject in ["s1", "s1", "s1", "s1", "s2", "s2"] {
            text = text.replacen(
                "\"metadata\": {}",
                &format!("\"metadata\": {{\"subject\": \"{subject}\"}}"),
                1,
            );
        }
        let options = ReadOptions {
            cluster_key: Some("subject".to_string()),
            ..ReadOptions::default()
        };
        let d = read_str(Format::Inspect, &text, &options).unwrap();
        let clusters: Vec<Option<&str>> = d.models[0]
            .problems
            .iter()
            .map(|p| p.cluster.as_deref())
            .collect();
        assert_eq!(clusters, vec![Some("s1"), Some("s1")]);
        let other = ReadOptions {
            cluster_key: Some("topic".to_string()),
            ..ReadOptions::default()
        };
        let err = read_str(Format::Inspect, &text, &other)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("samples[0].metadata.topic") && err.contains("`subject`"),
            "{err}"
        );
    }
}
