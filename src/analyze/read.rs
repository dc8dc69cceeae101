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
use std::cell::Cell;
use std::collections::BTreeMap;
use std::fmt;
use std::io::{BufRead, Read};
use std::rc::Rc;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::data::{Dataset, DatasetBuilder, Sample};
use super::normalize::Normalization;
use super::{AnalyzeError, Result};

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
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            normalization: Normalization::Standard,
            default_model: "model".to_string(),
            filter: None,
            scorer: None,
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
        Format::Jsonl => read_jsonl_lines(reader, &mut builder, canonical_json)?,
        Format::HumanEval => read_jsonl_lines(reader, &mut builder, human_eval_json)?,
        Format::Csv => read_csv(reader, &mut builder)?,
        Format::LmEval => read_lm_eval(reader, &mut builder, options.filter.as_deref())?,
        Format::Inspect => read_inspect(reader, &mut builder, options.scorer.as_deref())?,
    }
    builder.finish()
}

/// Iterate non-blank lines with 1-based numbers; I/O errors name the last good line.
fn for_each_line(
    reader: &mut dyn BufRead,
    source: &str,
    mut f: impl FnMut(usize, &str) -> Result<()>,
) -> Result<()> {
    let mut buf = String::new();
    let mut line = 0usize;
    loop {
        buf.clear();
        let read = reader
            .read_line(&mut buf)
            .map_err(|error| AnalyzeError::Io {
                source_name: source.to_string(),
                line,
                error,
            })?;
        if read == 0 {
            return Ok(());
        }
        line += 1;
        let text = buf.trim_end_matches(['\n', '\r']);
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

struct Ctx<'a> {
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

fn human_eval_json(source: &str, line: usize, obj: &Map<String, Value>) -> Result<Sample> {
    let ctx = Ctx { source, line };
    let passed = ctx
        .opt_bool(obj, "passed")?
        .ok_or_else(|| ctx.missing("passed", "true/false (human-eval `*_results.jsonl`)"))?;
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

/// lm-eval marks an answer its filter could not extract with this string.
const LM_EVAL_INVALID: &str = "[invalid]";

fn flatten_strings(
    ctx: &Ctx<'_>,
    field: &str,
    v: &Value,
    out: &mut Vec<Option<String>>,
) -> Result<()> {
    match v {
        Value::Array(items) => {
            for item in items {
                match item {
                    Value::Array(_) => flatten_strings(ctx, field, item, out)?,
                    other => out.push(ctx.text_value(field, other)?),
                }
            }
            Ok(())
        }
        other => Err(ctx.bad(field, other, "an array of responses")),
    }
}

fn read_lm_eval(
    reader: &mut dyn BufRead,
    builder: &mut DatasetBuilder,
    filter: Option<&str>,
) -> Result<()> {
    let source = builder.source().to_string();
    let mut seen: Vec<String> = Vec::new();
    let mut chosen: Option<String> = filter.map(str::to_string);
    for_each_line(reader, &source, |line, text| {
        let obj = parse_object(&source, line, text)?;
        let ctx = Ctx {
            source: &source,
            line,
        };
        let row_filter = match obj.get("filter") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => return Err(ctx.bad("filter", other, "a filter name (string)")),
            None => "none".to_string(),
        };
        if !seen.contains(&row_filter) {
            seen.push(row_filter.clone());
        }
        let wanted = chosen.get_or_insert_with(|| row_filter.clone());
        if *wanted != row_filter {
            return Ok(());
        }
        let problem_id = ctx.id(&obj, "doc_id")?;
        let target = match obj.get("target") {
            None => return Err(ctx.missing("target", "the reference answer (string or number)")),
            Some(v) => ctx
                .text_value("target", v)?
                .ok_or_else(|| ctx.missing("target", "the reference answer (string or number)"))?,
        };
        let mut resps = Vec::new();
        match obj.get("resps") {
            None => return Err(ctx.missing("resps", "an array with every repeat's response")),
            Some(v) => flatten_strings(&ctx, "resps", v, &mut resps)?,
        }
        let mut answers = Vec::new();
        match obj.get("filtered_resps") {
            None => {
                return Err(ctx.missing("filtered_resps", "an array with every repeat's answer"))
            }
            Some(v) => flatten_strings(&ctx, "filtered_resps", v, &mut answers)?,
        }
        if resps.is_empty() || answers.is_empty() {
            return builder.zero_samples(line, &problem_id);
        }
        if answers.len() != resps.len() {
            return Err(ctx.bad(
                "filtered_resps",
                &Value::String(format!(
                    "{} answers for {} repeats",
                    answers.len(),
                    resps.len()
                )),
                &format!(
                    "one answer per repeat; filter `{row_filter}` reduces the repeats \
                     (e.g. take_first or majority_vote), so choose a filter without that step"
                ),
            ));
        }
        for answer in answers {
            let answer = answer.filter(|a| a.trim() != LM_EVAL_INVALID);
            builder.push(
                line,
                Sample {
                    problem_id: problem_id.clone(),
                    answer: Some(answer),
                    reference: Some(target.clone()),
                    ..Sample::default()
                },
            )?;
        }
        Ok(())
    })?;
    if let Some(wanted) = &chosen {
        if !seen.contains(wanted) {
            return Err(AnalyzeError::UnknownFilter {
                source_name: source,
                filter: wanted.clone(),
                available: quoted_list(&seen),
            });
        }
        if filter.is_none() && seen.len() > 1 {
            return Err(AnalyzeError::AmbiguousFilter {
                source_name: source,
                available: quoted_list(&seen),
            });
        }
    }
    Ok(())
}

fn quoted_list(items: &[String]) -> String {
    if items.is_empty() {
        return "none".to_string();
    }
    items
        .iter()
        .map(|s| format!("`{s}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Counts newlines as serde_json pulls bytes, so errors inside the document can name a line.
struct LineCounter<'a> {
    inner: &'a mut dyn BufRead,
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

#[derive(Deserialize)]
struct InspectUsage {
    output_tokens: Option<f64>,
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
}

struct InspectState<'a> {
    builder: &'a mut DatasetBuilder,
    scorer: Option<&'a str>,
    model: Option<String>,
    newlines: Rc<Cell<usize>>,
    index: usize,
    error: Option<AnalyzeError>,
    samples_seen: bool,
}

impl InspectState<'_> {
    fn line(&self) -> usize {
        self.newlines.get() + 1
    }

    fn add(&mut self, sample: InspectSample) -> Result<()> {
        let source = self.builder.source().to_string();
        let line = self.line();
        let ctx = Ctx {
            source: &source,
            line,
        };
        let i = self.index;
        self.index += 1;
        let problem_id = ctx.id_value(&format!("samples[{i}].id"), &sample.id)?;
        let score = match (sample.scores, sample.score) {
            (Some(mut scores), _) if !scores.is_empty() => match self.scorer {
                Some(name) => scores.remove(name).ok_or_else(|| {
                    let names: Vec<String> = scores.keys().cloned().collect();
                    ctx.missing(
                        &format!("samples[{i}].scores.{name}"),
                        &format!("a scorer present in the log: {}", quoted_list(&names)),
                    )
                })?,
                None if scores.len() == 1 => match scores.pop_first() {
                    Some((_, s)) => s,
                    None => return Err(ctx.missing(&format!("samples[{i}].scores"), "one score")),
                },
                None => {
                    let names: Vec<String> = scores.keys().cloned().collect();
                    return Err(ctx.bad(
                        &format!("samples[{i}].scores"),
                        &Value::String(quoted_list(&names)),
                        "a single scorer, or choose one by name",
                    ));
                }
            },
            (_, Some(score)) => score,
            _ => {
                return Err(ctx.missing(
                    &format!("samples[{i}].scores"),
                    "a map of scorer name to {value, answer}",
                ))
            }
        };
        let field = format!("samples[{i}].scores.value");
        let correct = match &score.value {
            Value::String(s) if s == "C" => true,
            Value::String(s) if s == "I" || s == "N" => false,
            other => ctx.bool_value(&field, other).map_err(|_| {
                ctx.bad(
                    &field,
                    other,
                    "\"C\" (correct), \"I\" (incorrect), \"N\" (no answer), true/false or 0/1",
                )
            })?,
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
        let _ = sample.epoch;
        let output_tokens = sample
            .output
            .and_then(|o| o.usage)
            .and_then(|u| u.output_tokens);
        self.builder.push(
            line,
            Sample {
                problem_id,
                model: self.model.clone(),
                correct: Some(correct),
                answer,
                reference,
                output_tokens,
                cluster: None,
            },
        )
    }
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
            match key.as_str() {
                "eval" => {
                    let eval: InspectEval = map.next_value()?;
                    self.0.model = eval.model;
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

fn read_inspect(
    reader: &mut dyn BufRead,
    builder: &mut DatasetBuilder,
    scorer: Option<&str>,
) -> Result<()> {
    let source = builder.source().to_string();
    let newlines = Rc::new(Cell::new(0));
    let counter = LineCounter {
        inner: reader,
        newlines: Rc::clone(&newlines),
    };
    let mut state = InspectState {
        builder,
        scorer,
        model: None,
        newlines: Rc::clone(&newlines),
        index: 0,
        error: None,
        samples_seen: false,
    };
    let mut de = serde_json::Deserializer::from_reader(counter);
    let outcome = LogVisitor(&mut state)
        .deserialize(&mut de)
        .and_then(|()| de.end());
    if let Some(e) = state.error.take() {
        return Err(e);
    }
    if let Err(e) = outcome {
        return Err(AnalyzeError::Json {
            source_name: source,
            line: e.line(),
            message: format!("{e} (an inspect_ai `.json` log is expected; convert `.eval` logs with `inspect log convert --to json`)"),
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
    Ok(())
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
    fn lm_eval_log_samples_by_filter() {
        let text = fixture("lm_eval_samples_gsm8k.jsonl");
        let opts = ReadOptions {
            filter: Some("extract-all".to_string()),
            ..ReadOptions::default()
        };
        let d = read_str(Format::LmEval, &text, &opts).unwrap();
        // doc 0: 18, 18, [invalid] (missing), 20; doc 1: 3, 4, 3.0 (= 3), 4.
        assert_eq!(
            counts(&d.models[0]),
            vec![
                ("0".to_string(), 4, 2, vec![1, 1]),
                ("1".to_string(), 4, 2, vec![2]),
            ]
        );
        let reducing = ReadOptions {
            filter: Some("maj@4".to_string()),
            ..ReadOptions::default()
        };
        let err = read_str(Format::LmEval, &text, &reducing)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("test.in:2") && err.contains("filtered_resps"),
            "{err}"
        );
        let err = read_str(Format::LmEval, &text, &ReadOptions::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("`extract-all`, `maj@4`"), "{err}");
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
            err.contains("samples[1].scores.value") && err.contains("\"C\""),
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
        let line =
            r#"{"doc_id": 7, "target": "1", "resps": [[]], "filtered_resps": [[]], "filter": "x"}"#;
        let err = read_str(Format::LmEval, line, &ReadOptions::default()).unwrap_err();
        assert!(
            err.to_string().contains("problem `7` has zero samples"),
            "{err}"
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
