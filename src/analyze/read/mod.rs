//! Readers for the canonical sample format and for what harnesses already write.
//!
//! Every reader takes `&mut dyn BufRead` plus a source name used in messages, so tests feed
//! strings and the CLI feeds files. Line-oriented formats are read one line at a time; the
//! inspect_ai log (one JSON document) is streamed sample by sample through a serde visitor. Memory
//! is the per-problem tallies of [`super::data`], never the file.
//!
//! Canonical format (JSONL or CSV with a header), one row per sample:
//!
//! | field | type | |
//! |---|---|---|
//! | `problem_id` | string or integer | required |
//! | `correct` | true/false or 0/1 | required unless `answer` and `reference` are both present |
//! | `answer` | string, number or null/empty (missing) | enables maj@k and the attractor fit |
//! | `reference` | string or number | compared with `answer` after normalisation |
//! | `model` | string | default model name otherwise |
//! | `sample` | non-negative integer | informational; file order is the sample order |
//! | `output_tokens` | non-negative number | enables token statistics and the trace fit |
//! | `cluster` | string or integer | enables clustered standard errors |
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::io::{BufRead, Read};

use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::data::{Dataset, DatasetBuilder, Sample, SampleRef};
use super::normalize::Normalization;
use super::{AnalyzeError, Result};

mod inspect;
pub mod lm_eval;
use inspect::read_inspect;
use lm_eval::read_lm_eval;

/// Input formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// Canonical JSONL, one object per sample.
    Jsonl,
    /// Canonical CSV with a header row.
    Csv,
    /// human-eval `*_results.jsonl`: `task_id`, `passed`; samples in file order.
    HumanEval,
    /// lm-evaluation-harness `--log_samples` JSONL: `doc_id`, `target`, `resps`,
    /// `filtered_resps`, `filter`.
    LmEval,
    /// inspect_ai JSON log: `eval.model`, `samples[]` with `id`, `epoch`, `target`, `scores`,
    /// `output.usage.output_tokens`.
    Inspect,
}

/// Reader options.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadOptions {
    /// Answer normalisation (see [`super::normalize`]).
    pub normalization: Normalization,
    /// Model name for rows without one (lm-eval and human-eval logs never name the model).
    pub default_model: String,
    /// lm-eval: the filter whose `filtered_resps` hold the answers (required when the log has
    /// several filters).
    pub filter: Option<String>,
    /// inspect_ai: the scorer to read (required when samples carry several scores).
    pub scorer: Option<String>,
    /// inspect_ai: the key of a dict-valued score.
    pub score_key: Option<String>,
    /// lm-eval: the per-sample metric read for correctness (required when rows log several).
    pub metric: Option<String>,
    /// lm-eval: a cluster label for every row (the subtask, when a group's files are merged);
    /// problem ids are then `<cluster>/<doc_id>`.
    pub cluster: Option<String>,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            normalization: Normalization::Standard,
            default_model: "model".to_string(),
            filter: None,
            scorer: None,
            score_key: None,
            metric: None,
            cluster: None,
        }
    }
}

/// Read all samples of `format` from `reader`.
///
/// # Errors
/// Malformed JSON/CSV (naming the line), missing or invalid fields (naming line and field), an
/// empty input, a problem with zero samples, an unknown or ambiguous lm-eval filter or inspect
/// scorer.
pub fn read_samples(
    format: Format,
    reader: &mut dyn BufRead,
    source: &str,
    options: &ReadOptions,
) -> Result<Dataset> {
    let mut builder = DatasetBuilder::new(source, &options.default_model, options.normalization);
    match format {
        Format::Jsonl => read_canonical_jsonl(reader, &mut builder)?,
        Format::HumanEval => read_jsonl_lines(reader, &mut builder, human_eval_json)?,
        Format::Csv => read_csv(reader, &mut builder)?,
        Format::LmEval => read_lm_eval(
            reader,
            &mut builder,
            options.filter.as_deref(),
            options.metric.as_deref(),
            options.cluster.as_deref(),
        )?,
        Format::Inspect => read_inspect(
            reader,
            &mut builder,
            inspect::ScoreChoice {
                scorer: options.scorer.as_deref(),
                key: options.score_key.as_deref(),
            },
        )?,
    }
    builder.finish()
}

/// Longest line the line-oriented readers accept (16 MiB): a real sample row is far shorter, and
/// a bound keeps a file without newlines (or `/dev/zero`) from growing memory without limit.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// Iterate non-blank lines with 1-based numbers. A line longer than [`MAX_LINE_BYTES`] and a line
/// that is not UTF-8 are errors naming that line; I/O errors name the last good line.
fn for_each_line(
    reader: &mut dyn BufRead,
    source: &str,
    mut f: impl FnMut(usize, &str) -> Result<()>,
) -> Result<()> {
    let mut bytes = Vec::new();
    let mut line = 0usize;
    loop {
        bytes.clear();
        let limit = MAX_LINE_BYTES as u64 + 1;
        let read = (&mut *reader)
            .take(limit)
            .read_until(b'\n', &mut bytes)
            .map_err(|error| AnalyzeError::Io {
                source_name: source.to_string(),
                line,
                error,
            })?;
        if read == 0 {
            return Ok(());
        }
        line += 1;
        if bytes.len() > MAX_LINE_BYTES && bytes.last() != Some(&b'\n') {
            return Err(AnalyzeError::LineTooLong {
                source_name: source.to_string(),
                line,
                limit: MAX_LINE_BYTES,
            });
        }
        let text = std::str::from_utf8(&bytes).map_err(|e| AnalyzeError::Utf8 {
            source_name: source.to_string(),
            line,
            column: e.valid_up_to() + 1,
        })?;
        let text = text.trim_end_matches(['\n', '\r']);
        if text.trim().is_empty() {
            continue;
        }
        f(line, text)?;
    }
}

fn parse_object(source: &str, line: usize, text: &str) -> Result<Map<String, Value>> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(AnalyzeError::Json {
            source_name: source.to_string(),
            line,
            message: format!("expected an object per line, found {}", kind_of(&other)),
        }),
        Err(e) => Err(AnalyzeError::Json {
            source_name: source.to_string(),
            line,
            message: format!("{e} (column {})", e.column()),
        }),
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn read_jsonl_lines(
    reader: &mut dyn BufRead,
    builder: &mut DatasetBuilder,
    convert: fn(&str, usize, &Map<String, Value>) -> Result<Sample>,
) -> Result<()> {
    let source = builder.source().to_string();
    for_each_line(reader, &source, |line, text| {
        let obj = parse_object(&source, line, text)?;
        let sample = convert(&source, line, &obj)?;
        builder.push(line, sample)
    })
}

pub(crate) struct Ctx<'a> {
    source: &'a str,
    line: usize,
}

impl Ctx<'_> {
    fn bad(&self, field: &str, value: &Value, expected: &str) -> AnalyzeError {
        let mut shown = value.to_string();
        if shown.len() > 60 {
            shown = format!("{}...", shown.chars().take(60).collect::<String>());
        }
        AnalyzeError::BadField {
            source_name: self.source.to_string(),
            line: self.line,
            field: field.to_string(),
            value: shown,
            expected: expected.to_string(),
        }
    }

    fn missing(&self, field: &str, expected: &str) -> AnalyzeError {
        AnalyzeError::MissingField {
            source_name: self.source.to_string(),
            line: self.line,
            field: field.to_string(),
            expected: expected.to_string(),
        }
    }

    /// A required identifier: string or integer.
    fn id(&self, obj: &Map<String, Value>, field: &str) -> Result<String> {
        match obj.get(field) {
            None | Some(Value::Null) => Err(self.missing(field, "a string or integer id")),
            Some(v) => self.id_value(field, v),
        }
    }

    fn id_value(&self, field: &str, v: &Value) -> Result<String> {
        match v {
            Value::String(s) => Ok(s.clone()),
            Value::Number(n) if n.is_i64() || n.is_u64() => Ok(n.to_string()),
            other => Err(self.bad(field, other, "a string or integer id")),
        }
    }

    fn opt_id(&self, obj: &Map<String, Value>, field: &str) -> Result<Option<String>> {
        match obj.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => self.id_value(field, v).map(Some),
        }
    }

    fn opt_bool(&self, obj: &Map<String, Value>, field: &str) -> Result<Option<bool>> {
        match obj.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => self.bool_value(field, v).map(Some),
        }
    }

    fn bool_value(&self, field: &str, v: &Value) -> Result<bool> {
        match v {
            Value::Bool(b) => Ok(*b),
            Value::Number(n) if n.as_f64() == Some(1.0) => Ok(true),
            Value::Number(n) if n.as_f64() == Some(0.0) => Ok(false),
            other => Err(self.bad(field, other, "true/false or 0/1")),
        }
    }

    /// A free-text value: string or number (numbers keep their JSON spelling).
    fn text_value(&self, field: &str, v: &Value) -> Result<Option<String>> {
        match v {
            Value::Null => Ok(None),
            Value::String(s) => Ok(Some(s.clone())),
            Value::Number(n) => Ok(Some(n.to_string())),
            Value::Bool(b) => Ok(Some(b.to_string())),
            other => Err(self.bad(field, other, "a string, number or null")),
        }
    }

    fn opt_tokens(&self, obj: &Map<String, Value>, field: &str) -> Result<Option<f64>> {
        match obj.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => match v.as_f64() {
                Some(t) if t >= 0.0 => Ok(Some(t)),
                _ => Err(self.bad(field, v, "a non-negative number of tokens")),
            },
        }
    }
}

fn canonical_json(source: &str, line: usize, obj: &Map<String, Value>) -> Result<Sample> {
    let ctx = Ctx { source, line };
    let answer = match obj.get("answer") {
        None => None,
        Some(v) => Some(ctx.text_value("answer", v)?),
    };
    let reference = match obj.get("reference") {
        None => None,
        Some(v) => ctx.text_value("reference", v)?,
    };
    if let Some(v) = obj.get("sample") {
        if !(v.is_u64() || v.is_null()) {
            return Err(ctx.bad("sample", v, "a non-negative integer sample index"));
        }
    }
    Ok(Sample {
        problem_id: ctx.id(obj, "problem_id")?,
        model: ctx.opt_id(obj, "model")?,
        correct: ctx.opt_bool(obj, "correct")?,
        answer,
        reference,
        output_tokens: ctx.opt_tokens(obj, "output_tokens")?,
        cluster: ctx.opt_id(obj, "cluster")?,
    })
}

/// Canonical JSONL: each line through [`canonical_fast`], and through the general
/// [`canonical_json`] (a `serde_json::Value` per line) only when the fast path declines it, which
/// it does for every line that is malformed or has a field of the wrong type. So every error
/// message comes from `canonical_json`, and a line the fast path accepts gives the sample
/// `canonical_json` would (a test checks both on a corpus of awkward lines).
fn read_canonical_jsonl(reader: &mut dyn BufRead, builder: &mut DatasetBuilder) -> Result<()> {
    let source = builder.source().to_string();
    for_each_line(reader, &source, |line, text| match canonical_fast(text) {
        Some(sample) => builder.push_ref(line, sample),
        None => {
            let obj = parse_object(&source, line, text)?;
            let sample = canonical_json(&source, line, &obj)?;
            builder.push(line, sample)
        }
    })
}

/// A scalar JSON value of a canonical field, borrowed from the line when it has no escapes.
/// Arrays and objects are parsed through (as `Scalar`s, never `IgnoredAny`, so that numbers out
/// of range and bad escapes are rejected exactly as `serde_json::Value` rejects them) and kept
/// only as [`Scalar::Nested`]. Every other key of a row is parsed the same way.
#[derive(Debug)]
enum Scalar<'a> {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    Str(Cow<'a, str>),
    /// An array or object (never valid in a canonical field).
    Nested,
}

impl<'de> Deserialize<'de> for Scalar<'de> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Scalar<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_unit<E>(self) -> std::result::Result<Scalar<'de>, E> {
                Ok(Scalar::Null)
            }
            fn visit_none<E>(self) -> std::result::Result<Scalar<'de>, E> {
                Ok(Scalar::Null)
            }
            fn visit_bool<E>(self, b: bool) -> std::result::Result<Scalar<'de>, E> {
                Ok(Scalar::Bool(b))
            }
            // Numbers are built exactly as `serde_json::Value` builds them.
            fn visit_i64<E>(self, v: i64) -> std::result::Result<Scalar<'de>, E> {
                Ok(Scalar::Number(v.into()))
            }
            fn visit_u64<E>(self, v: u64) -> std::result::Result<Scalar<'de>, E> {
                Ok(Scalar::Number(v.into()))
            }
            fn visit_f64<E>(self, v: f64) -> std::result::Result<Scalar<'de>, E> {
                Ok(serde_json::Number::from_f64(v).map_or(Scalar::Null, Scalar::Number))
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> std::result::Result<Scalar<'de>, E> {
                Ok(Scalar::Str(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> std::result::Result<Scalar<'de>, E> {
                Ok(Scalar::Str(Cow::Owned(v.to_string())))
            }
            fn visit_string<E>(self, v: String) -> std::result::Result<Scalar<'de>, E> {
                Ok(Scalar::Str(Cow::Owned(v)))
            }
            fn visit_seq<A: SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> std::result::Result<Scalar<'de>, A::Error> {
                while seq.next_element::<Scalar<'de>>()?.is_some() {}
                Ok(Scalar::Nested)
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<Scalar<'de>, A::Error> {
                while map.next_entry::<Scalar<'de>, Scalar<'de>>()?.is_some() {}
                Ok(Scalar::Nested)
            }
        }
        d.deserialize_any(V)
    }
}

/// The fields of one canonical row (each `None` when absent), plus whether a known field
/// occurred twice (then the general reader decides: the last occurrence wins there).
#[derive(Debug, Default)]
struct CanonicalRow<'a> {
    fields: [Option<Scalar<'a>>; CANONICAL_FIELDS.len()],
    duplicate: bool,
}

/// The canonical fields, in the index order of [`CanonicalRow::fields`].
const CANONICAL_FIELDS: [&str; 8] = [
    "problem_id",
    "model",
    "correct",
    "answer",
    "reference",
    "sample",
    "output_tokens",
    "cluster",
];

/// A key of a canonical row: the index of a known field, or `None` for any other key.
struct FieldKey(Option<usize>);

impl<'de> Deserialize<'de> for FieldKey {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = FieldKey;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_str<E>(self, v: &str) -> std::result::Result<FieldKey, E> {
                Ok(FieldKey(CANONICAL_FIELDS.iter().position(|&f| f == v)))
            }
        }
        d.deserialize_str(V)
    }
}

impl<'de> Deserialize<'de> for CanonicalRow<'de> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = CanonicalRow<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<CanonicalRow<'de>, A::Error> {
                let mut row = CanonicalRow::default();
                while let Some(FieldKey(key)) = map.next_key()? {
                    match key {
                        Some(i) => {
                            let value: Scalar<'de> = map.next_value()?;
                            row.duplicate |= row.fields[i].replace(value).is_some();
                        }
                        None => {
                            map.next_value::<Scalar<'de>>()?;
                        }
                    }
                }
                Ok(row)
            }
        }
        d.deserialize_map(V)
    }
}

/// The sample of one canonical JSONL line without building a `serde_json::Value`, borrowing
/// strings from the line; `None` when the line is not valid JSON, not an object, repeats a
/// field, or has a field [`canonical_json`] would reject (so that it reports the error).
fn canonical_fast(text: &str) -> Option<SampleRef<'_>> {
    let row: CanonicalRow<'_> = serde_json::from_str(text).ok()?;
    if row.duplicate {
        return None;
    }
    let [problem_id, model, correct, answer, reference, sample, output_tokens, cluster] =
        row.fields;
    // The rules of `Ctx` in `canonical_json`, with `None` for every error.
    fn id(v: Scalar<'_>) -> Option<Cow<'_, str>> {
        match v {
            Scalar::Str(s) => Some(s),
            Scalar::Number(n) if n.is_i64() || n.is_u64() => Some(Cow::Owned(n.to_string())),
            _ => None,
        }
    }
    fn opt_id(v: Option<Scalar<'_>>) -> Option<Option<Cow<'_, str>>> {
        match v {
            None | Some(Scalar::Null) => Some(None),
            Some(v) => id(v).map(Some),
        }
    }
    fn text_of(v: Scalar<'_>) -> Option<Option<Cow<'_, str>>> {
        match v {
            Scalar::Null => Some(None),
            Scalar::Str(s) => Some(Some(s)),
            Scalar::Number(n) => Some(Some(Cow::Owned(n.to_string()))),
            Scalar::Bool(b) => Some(Some(Cow::Owned(b.to_string()))),
            Scalar::Nested => None,
        }
    }
    let answer = match answer {
        None => None,
        Some(v) => Some(text_of(v)?),
    };
    let reference = match reference {
        None => None,
        Some(v) => text_of(v)?,
    };
    match sample {
        None | Some(Scalar::Null) => {}
        Some(Scalar::Number(n)) if n.is_u64() => {}
        Some(_) => return None,
    }
    let correct = match correct {
        None | Some(Scalar::Null) => None,
        Some(Scalar::Bool(b)) => Some(b),
        Some(Scalar::Number(n)) if n.as_f64() == Some(1.0) => Some(true),
        Some(Scalar::Number(n)) if n.as_f64() == Some(0.0) => Some(false),
        Some(_) => return None,
    };
    let output_tokens = match output_tokens {
        None | Some(Scalar::Null) => None,
        Some(Scalar::Number(n)) => match n.as_f64() {
            Some(t) if t >= 0.0 => Some(t),
            _ => return None,
        },
        Some(_) => return None,
    };
    Some(SampleRef {
        problem_id: match problem_id {
            None | Some(Scalar::Null) => return None,
            Some(v) => id(v)?,
        },
        model: opt_id(model)?,
        correct,
        answer,
        reference,
        output_tokens,
        cluster: opt_id(cluster)?,
    })
}

fn human_eval_json(source: &str, line: usize, obj: &Map<String, Value>) -> Result<Sample> {
    let ctx = Ctx { source, line };
    let passed = ctx.opt_bool(obj, "passed")?.ok_or_else(|| {
        if obj.contains_key("completion") {
            ctx.missing(
                "passed",
                "evaluated samples: this is a human-eval samples file not yet evaluated; run \
                 `evaluate_functional_correctness FILE` first and analyse the \
                 `FILE_results.jsonl` it writes",
            )
        } else {
            ctx.missing("passed", "true/false (human-eval `*_results.jsonl`)")
        }
    })?;
    Ok(Sample {
        problem_id: ctx.id(obj, "task_id")?,
        correct: Some(passed),
        ..Sample::default()
    })
}

/// Split one CSV record (RFC 4180 quoting; quoted fields may not span lines).
fn split_csv(text: &str) -> std::result::Result<Vec<String>, String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    let mut at_start = true;
    while let Some(ch) = chars.next() {
        if quoted {
            if ch == '"' {
                if chars.peek() == Some(&'"') {
                    field.push('"');
                    chars.next();
                } else {
                    quoted = false;
                }
            } else {
                field.push(ch);
            }
        } else if ch == '"' && at_start {
            quoted = true;
            at_start = false;
        } else if ch == ',' {
            fields.push(std::mem::take(&mut field));
            at_start = true;
        } else {
            field.push(ch);
            at_start = false;
        }
    }
    if quoted {
        return Err("unterminated quoted field (quoted fields may not span lines)".to_string());
    }
    fields.push(field);
    Ok(fields)
}

fn read_csv(reader: &mut dyn BufRead, builder: &mut DatasetBuilder) -> Result<()> {
    let source = builder.source().to_string();
    let mut header: Option<BTreeMap<String, usize>> = None;
    let mut width = 0usize;
    for_each_line(reader, &source, |line, text| {
        let fields = split_csv(text).map_err(|message| AnalyzeError::Csv {
            source_name: source.clone(),
            line,
            message,
        })?;
        let Some(columns) = &header else {
            let map: BTreeMap<String, usize> = fields
                .iter()
                .enumerate()
                .map(|(i, f)| (f.trim().to_string(), i))
                .collect();
            let ctx = Ctx {
                source: &source,
                line,
            };
            if !map.contains_key("problem_id") {
                return Err(ctx.missing("problem_id", "a header row naming a `problem_id` column"));
            }
            let answers = map.contains_key("answer") && map.contains_key("reference");
            if !map.contains_key("correct") && !answers {
                return Err(ctx.missing(
                    "correct",
                    "a `correct` column, or both `answer` and `reference` columns",
                ));
            }
            width = fields.len();
            header = Some(map);
            return Ok(());
        };
        if fields.len() != width {
            return Err(AnalyzeError::Csv {
                source_name: source.clone(),
                line,
                message: format!("{} fields, but the header has {width}", fields.len()),
            });
        }
        let ctx = Ctx {
            source: &source,
            line,
        };
        let cell = |name: &str| columns.get(name).map(|&i| fields[i].trim());
        let nonempty = |name: &str| cell(name).filter(|s| !s.is_empty()).map(str::to_string);
        let problem_id = nonempty("problem_id")
            .ok_or_else(|| ctx.missing("problem_id", "a non-empty problem id"))?;
        let correct = match nonempty("correct") {
            None => None,
            Some(s) => Some(match s.to_ascii_lowercase().as_str() {
                "true" | "1" => true,
                "false" | "0" => false,
                _ => return Err(ctx.bad("correct", &Value::String(s), "true/false or 0/1")),
            }),
        };
        let output_tokens = match nonempty("output_tokens") {
            None => None,
            Some(s) => match s.parse::<f64>() {
                Ok(t) if t >= 0.0 && t.is_finite() => Some(t),
                _ => {
                    return Err(ctx.bad(
                        "output_tokens",
                        &Value::String(s),
                        "a non-negative number of tokens",
                    ))
                }
            },
        };
        if let Some(s) = nonempty("sample") {
            if s.parse::<u64>().is_err() {
                return Err(ctx.bad("sample", &Value::String(s), "a non-negative integer"));
            }
        }
        builder.push(
            line,
            Sample {
                problem_id,
                model: nonempty("model"),
                correct,
                answer: columns.get("answer").map(|_| nonempty("answer")),
                reference: nonempty("reference"),
                output_tokens,
                cluster: nonempty("cluster"),
            },
        )
    })?;
    if header.is_none() {
        return Err(AnalyzeError::Empty {
            source_name: source,
        });
    }
    Ok(())
}

pub(crate) fn quoted_list(items: &[String]) -> String {
    if items.is_empty() {
        return "none".to_string();
    }
    items
        .iter()
        .map(|s| format!("`{s}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::data::ModelSamples;

    const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/analyze/");

    fn fixture(name: &str) -> String {
        std::fs::read_to_string(format!("{FIXTURES}{name}")).unwrap_or_default()
    }

    fn read_str(format: Format, text: &str, options: &ReadOptions) -> Result<Dataset> {
        let mut reader = std::io::Cursor::new(text.as_bytes());
        read_samples(format, &mut reader, "test.in", options)
    }

    fn counts(m: &ModelSamples) -> Vec<(String, usize, usize, Vec<usize>)> {
        m.problems
            .iter()
            .map(|p| (p.id.clone(), p.n, p.correct, p.wrong_groups.clone()))
            .collect()
    }

    #[test]
    fn canonical_jsonl_and_csv_agree() {
        let opts = ReadOptions::default();
        let j = read_str(Format::Jsonl, &fixture("canonical.jsonl"), &opts).unwrap();
        let c = read_str(Format::Csv, &fixture("canonical.csv"), &opts).unwrap();
        let (mj, mc) = (&j.models[0], &c.models[0]);
        assert_eq!(mj.name, "a");
        let expected = vec![
            ("p1".to_string(), 3, 1, vec![1, 1]),
            ("2".to_string(), 3, 1, vec![2]),
        ];
        assert_eq!(counts(mj), expected);
        assert_eq!(counts(mc), expected);
        assert!(mj.has_answers && mj.has_tokens && mc.has_tokens);
        assert_eq!(mj.problems[0].cluster.as_deref(), Some("algebra"));
        assert_eq!(mj.problems[0].tokens[2], Some(8000.0));
    }

    #[test]
    fn human_eval_results() {
        let d = read_str(
            Format::HumanEval,
            &fixture("humaneval_samples.jsonl_results.jsonl"),
            &ReadOptions::default(),
        )
        .unwrap();
        let m = &d.models[0];
        assert_eq!(
            counts(m),
            vec![
                ("HumanEval/0".to_string(), 3, 2, vec![1]),
                ("HumanEval/1".to_string(), 3, 0, vec![1, 1, 1]),
            ]
        );
        assert!(!m.has_answers && !m.has_tokens);
        assert_eq!(m.problems[0].sequence, vec![0, 1, 0]);
    }

    #[test]
    fn lm_eval_correctness_is_the_logged_metric_not_a_text_match() {
        let text = fixture("lm_eval_samples_gsm8k.jsonl");
        // `extract-all` keeps 4 answers per document but logs one exact_match per document:
        // which answers were right is not in the file, so it is refused, not re-graded.
        let all = ReadOptions {
            filter: Some("extract-all".to_string()),
            ..ReadOptions::default()
        };
        let err = read_str(Format::LmEval, &text, &all)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("test.in:1") && err.contains("one 0/1 per generation"),
            "{err}"
        );
        // `maj@4` keeps one answer per document: one sample each, correct as logged (doc 0's
        // exact_match is 1, doc 1's is 0), whatever its text.
        let reducing = ReadOptions {
            filter: Some("maj@4".to_string()),
            ..ReadOptions::default()
        };
        let d = read_str(Format::LmEval, &text, &reducing).unwrap();
        assert_eq!(
            counts(&d.models[0]),
            vec![
                ("0".to_string(), 1, 1, vec![]),
                ("1".to_string(), 1, 0, vec![1]),
            ]
        );
        assert_eq!(d.harness.score_read.as_deref(), Some("exact_match,maj@4"));
        let flipped = text.replacen("\"exact_match\": 1.0", "\"exact_match\": 0.0", 1);
        let d = read_str(Format::LmEval, &flipped, &reducing).unwrap();
        assert_eq!(
            d.models[0].problems[0].correct, 0,
            "the metric, not the text"
        );
        let unknown = ReadOptions {
            filter: Some("strict-match".to_string()),
            ..ReadOptions::default()
        };
        let err = read_str(Format::LmEval, &text, &unknown)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("strict-match") && err.contains("`maj@4`"),
            "{err}"
        );
        let metric = ReadOptions {
            filter: Some("maj@4".to_string()),
            metric: Some("acc".to_string()),
            ..ReadOptions::default()
        };
        let err = read_str(Format::LmEval, &text, &metric)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("`acc`") && err.contains("`exact_match`"),
            "{err}"
        );
    }

    #[test]
    fn lm_eval_multiple_choice_row_is_one_sample_answered_by_argmax() {
        let row = r#"{"doc_id": 3, "target": "1", "resps": [[["-5.4", "False"]], [["-3.5", "False"]], [["-8.8", "False"]]], "filtered_resps": [["-5.4", "False"], ["-3.5", "False"], ["-8.8", "False"]], "filter": "none", "metrics": ["acc"], "acc": 0.0}"#;
        let d = read_str(Format::LmEval, row, &ReadOptions::default()).unwrap();
        let p = &d.models[0].problems[0];
        assert_eq!((p.n, p.correct), (1, 0), "one sample, wrong as logged");
    }

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

    #[test]
    fn malformed_json_names_the_line() {
        let text = "{\"problem_id\": \"a\", \"correct\": true}\n\n{\"problem_id\": \"b\", \"correct\": tru}\n";
        let err = read_str(Format::Jsonl, text, &ReadOptions::default()).unwrap_err();
        assert!(matches!(err, AnalyzeError::Json { line: 3, .. }), "{err}");
        assert!(err.to_string().starts_with("test.in:3: malformed JSON"));
    }

    #[test]
    fn missing_and_bad_fields_are_named() {
        let err = read_str(
            Format::Jsonl,
            "{\"problem_id\": \"a\"}\n",
            &ReadOptions::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("test.in:1") && err.contains("`correct`"),
            "{err}"
        );
        let err = read_str(
            Format::Jsonl,
            "{\"correct\": true}\n",
            &ReadOptions::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("`problem_id`"), "{err}");
        let err = read_str(
            Format::Jsonl,
            "{\"problem_id\": \"a\", \"correct\": \"yes\"}\n",
            &ReadOptions::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("`correct`") && err.contains("true/false or 0/1"),
            "{err}"
        );
        let err = read_str(Format::Csv, "id,correct\na,1\n", &ReadOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("test.in:1") && err.contains("problem_id"),
            "{err}"
        );
        let err = read_str(
            Format::Csv,
            "problem_id,answer\na,1\n",
            &ReadOptions::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("`correct`") && err.contains("reference"),
            "{err}"
        );
        let err = read_str(
            Format::Csv,
            "problem_id,correct\na,1,2\n",
            &ReadOptions::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("test.in:2") && err.contains("3 fields"),
            "{err}"
        );
    }

    #[test]
    fn empty_inputs_and_zero_samples() {
        for format in [
            Format::Jsonl,
            Format::Csv,
            Format::HumanEval,
            Format::LmEval,
        ] {
            let err = read_str(format, "\n  \n", &ReadOptions::default()).unwrap_err();
            assert!(
                matches!(err, AnalyzeError::Empty { .. }),
                "{format:?}: {err}"
            );
        }
        let err =
            read_str(Format::Csv, "problem_id,correct\n", &ReadOptions::default()).unwrap_err();
        assert!(matches!(err, AnalyzeError::Empty { .. }), "{err}");
        let line = r#"{"doc_id": 7, "target": "1", "resps": [[]], "filtered_resps": [[]], "filter": "x", "metrics": ["exact_match"], "exact_match": 1.0}"#;
        let err = read_str(Format::LmEval, line, &ReadOptions::default()).unwrap_err();
        assert!(
            err.to_string().contains("problem `7` has zero samples"),
            "{err}"
        );
    }

    /// The fast canonical path either declines a line or gives exactly the sample of the
    /// general `serde_json::Value` path; it declines every line the general path rejects.
    #[test]
    fn fast_canonical_path_agrees_with_the_general_one() {
        let slow = |text: &str| -> std::result::Result<Sample, String> {
            let obj = parse_object("s", 1, text).map_err(|e| e.to_string())?;
            canonical_json("s", 1, &obj).map_err(|e| e.to_string())
        };
        // (line, whether the fast path must take it)
        let lines: &[(&str, bool)] = &[
            (r#"{"problem_id": "q1", "model": "m", "sample": 3, "correct": false, "answer": "7", "output_tokens": 6159}"#, true),
            (r#"{"problem_id": 12, "correct": 1, "answer": 2.50, "reference": 7, "cluster": 4}"#, true),
            (r#"{"problem_id": -5, "correct": 0.0, "answer": null, "output_tokens": 1e3, "sample": null}"#, true),
            (r#"{"problem_id": 18446744073709551615, "correct": true, "answer": true, "model": null}"#, true),
            (r#"{"problem_id": "a\u0041\n", "answer": "caf\u00e9 \"x\"", "reference": "Caf\u00c9", "x": {"y": [1, {"z": null}]}}"#, true),
            (r#"{"problem\u005fid": "esc", "correct": true}"#, true),
            ("{\"problem_id\": \"\u{e9}t\u{e9}\", \"correct\": false, \"answer\": \"\u{1F600}\"}", true),
            (r#"  {"problem_id": "pad", "correct": true, "answer": -0}  "#, true),
            (r#"{"problem_id": "a", "correct": true, "correct": false}"#, false),
            (r#"{"problem_id": "a", "correct": true, "correct": "x"}"#, false),
            (r#"{"problem_id": "a", "correct": tru}"#, false),
            (r#"{"problem_id": "a", "correct": true} x"#, false),
            (r#"[1, 2]"#, false),
            (r#""a string""#, false),
            (r#"{"problem_id": "a", "correct": "yes"}"#, false),
            (r#"{"problem_id": "a", "correct": 2}"#, false),
            (r#"{"problem_id": 1.5, "correct": true}"#, false),
            (r#"{"problem_id": null, "correct": true}"#, false),
            (r#"{"correct": true}"#, false),
            (r#"{"problem_id": "a", "correct": true, "answer": [1, 2]}"#, false),
            (r#"{"problem_id": "a", "correct": true, "reference": {"a": 1}}"#, false),
            (r#"{"problem_id": "a", "correct": true, "output_tokens": -3}"#, false),
            (r#"{"problem_id": "a", "correct": true, "output_tokens": "5"}"#, false),
            (r#"{"problem_id": "a", "correct": true, "sample": -1}"#, false),
            (r#"{"problem_id": "a", "correct": true, "sample": 1.5}"#, false),
            (r#"{"problem_id": "a", "correct": true, "model": true}"#, false),
            (r#"{"problem_id": "a", "correct": true, "cluster": [1]}"#, false),
            (r#"{"problem_id": "a", "correct": 1.0, "answer": 1e400}"#, false),
            (r#"{"problem_id": "a", "correct": true, "x": "\ud800"}"#, false),
            (r#"{"problem_id": "a", "correct": true, "x": [{"y": "\ud800"}]}"#, false),
            (r#"{"problem_id": "a", "correct": true, "x": {"\ud800": 1}}"#, false),
            (r#"{"problem_id": "a", "correct": true, "x": [1e400]}"#, false),
            (r#"{"problem_id": "a", "correct": true, "x": -1e400}"#, false),
        ];
        for &(text, fast_takes_it) in lines {
            let fast = canonical_fast(text).map(SampleRef::into_owned);
            assert_eq!(fast.is_some(), fast_takes_it, "{text}");
            match (fast, slow(text)) {
                (Some(f), Ok(s)) => assert_eq!(f, s, "{text}"),
                (Some(f), Err(e)) => panic!("fast path took {text} ({f:?}); general: {e}"),
                (None, _) => {}
            }
        }
        // Problem-major and interleaved rows give the same tallies (the builder caches the
        // last model and problem).
        let rows = [
            r#"{"problem_id": "a", "model": "m", "correct": false, "answer": "x"}"#,
            r#"{"problem_id": "b", "model": "n", "correct": false, "answer": "X "}"#,
            r#"{"problem_id": "a", "model": "m", "correct": false, "answer": " x"}"#,
            r#"{"problem_id": "b", "model": "m", "correct": true, "answer": "y"}"#,
            r#"{"problem_id": "a", "model": "n", "answer": "1/2", "reference": "0.5"}"#,
            r#"{"problem_id": "b", "model": "n", "correct": false, "answer": "x"}"#,
            r#"{"problem_id": "a", "model": "m", "correct": false, "answer": "1,000"}"#,
        ];
        let interleaved = rows.join("\n");
        let mut sorted: Vec<&str> = rows.to_vec();
        sorted.sort_by_key(|r| (r.contains("\"n\""), r.contains("\"b\"")));
        let sorted = sorted.join("\n");
        let opts = ReadOptions::default();
        let a = read_str(Format::Jsonl, &interleaved, &opts).unwrap();
        let b = read_str(Format::Jsonl, &sorted, &opts).unwrap();
        type Tallies = Vec<(String, Vec<(String, usize, usize, Vec<usize>)>)>;
        let tallies = |d: &Dataset| -> Tallies {
            let mut v: Vec<_> = d
                .models
                .iter()
                .map(|m| (m.name.clone(), counts(m)))
                .collect();
            v.iter_mut().for_each(|(_, c)| c.sort());
            v.sort();
            v
        };
        assert_eq!(tallies(&a), tallies(&b));
        assert_eq!(
            tallies(&a),
            vec![
                (
                    "m".to_string(),
                    vec![
                        ("a".to_string(), 3, 0, vec![2, 1]),
                        ("b".to_string(), 1, 1, vec![])
                    ]
                ),
                (
                    "n".to_string(),
                    vec![
                        ("a".to_string(), 1, 1, vec![]),
                        ("b".to_string(), 2, 0, vec![2])
                    ]
                ),
            ]
        );
    }

    #[test]
    fn csv_quoting() {
        assert_eq!(
            split_csv(r#"a,"b,c","d ""e""",,"#).unwrap(),
            vec!["a", "b,c", "d \"e\"", "", ""]
        );
        assert!(split_csv("\"open").is_err());
    }
}
