//! Readers for the canonical sample format and for what harnesses already write: one file per
//! format, each behind the `FormatReader` trait; this module keeps only the dispatch ([`read_samples`])
//! and the shared line iterator. Which format a file is in is decided by [`super::detect`].
//!
//! Readers turn rows into [`super::data`]'s per-problem tallies and nothing else: no estimator,
//! standard error or interval is computed here (those are in [`super::summary`],
//! [`super::compare`] and [`super::interval`]). May depend on `serde`/`serde_json`,
//! [`super::data`], [`super::normalize`] (through the builder) and [`super::AnalyzeError`].
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
use std::io::{BufRead, Read};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::data::{Dataset, DatasetBuilder, Sample};
use super::normalize::Normalization;
use super::{AnalyzeError, Result};

mod csv;
mod fields;
mod human_eval;
mod inspect;
mod jsonl;

pub use inspect::{MAX_ARCHIVE_BYTES, MAX_ENTRY_BYTES, MAX_INFLATED_BYTES};
pub mod lm_eval;

use fields::parse_object;

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
    /// inspect_ai: the key of each sample's `metadata` that names its cluster (clustered SEs and
    /// intervals); every scored sample must carry it.
    #[serde(default)]
    pub cluster_key: Option<String>,
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
            cluster_key: None,
        }
    }
}

/// One input format: reads every sample of an input into a [`DatasetBuilder`], which tallies them
/// per model and problem. Implementations only parse; detection lives in [`super::detect`]
/// (one ordered rule across formats, since several formats are JSON lines told apart by their
/// keys).
pub(crate) trait FormatReader {
    /// Pushes every sample of `input` into `builder`.
    ///
    /// # Errors
    /// Malformed input or a missing or invalid field, naming the line and field.
    fn read(
        &self,
        input: &mut dyn BufRead,
        builder: &mut DatasetBuilder,
        options: &ReadOptions,
    ) -> Result<()>;
}

/// The reader of `format`.
fn reader_for(format: Format) -> &'static dyn FormatReader {
    match format {
        Format::Jsonl => &jsonl::CanonicalJsonl,
        Format::Csv => &csv::CanonicalCsv,
        Format::HumanEval => &human_eval::HumanEval,
        Format::LmEval => &lm_eval::LmEval,
        Format::Inspect => &inspect::Inspect,
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
    reader_for(format).read(reader, &mut builder, options)?;
    builder.finish()
}

/// Longest line the line-oriented readers accept (16 MiB): a real sample row is far shorter, and
/// a bound keeps a file without newlines (or `/dev/zero`) from growing memory without limit.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// Iterate non-blank lines with 1-based numbers; a UTF-8 byte order mark opening the first line
/// is dropped. A line longer than [`MAX_LINE_BYTES`] and a line
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
        // A byte order mark (as spreadsheet programs and some editors write) is not data.
        let text = if line == 1 {
            text.strip_prefix('\u{feff}').unwrap_or(text)
        } else {
            text
        };
        if text.trim().is_empty() {
            continue;
        }
        f(line, text)?;
    }
}

/// [`for_each_line`] over JSON objects, each converted to one sample by `convert`.
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

#[cfg(test)]
mod test_support {
    use super::*;
    use crate::analyze::data::ModelSamples;

    const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/analyze/");

    pub(super) fn fixture(name: &str) -> String {
        std::fs::read_to_string(format!("{FIXTURES}{name}")).unwrap_or_default()
    }

    pub(super) fn read_str(format: Format, text: &str, options: &ReadOptions) -> Result<Dataset> {
        let mut reader = std::io::Cursor::new(text.as_bytes());
        read_samples(format, &mut reader, "test.in", options)
    }

    pub(super) fn counts(m: &ModelSamples) -> Vec<(String, usize, usize, Vec<usize>)> {
        m.problems
            .iter()
            .map(|p| (p.id.clone(), p.n, p.correct, p.wrong_groups.clone()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::{counts, fixture, read_str};
    use super::*;

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

    #[test]
    fn a_byte_order_mark_was_read_as_data() {
        let opts = ReadOptions::default();
        for (format, text) in [
            (Format::Csv, "\u{feff}problem_id,correct\na,1\n"),
            (
                Format::Jsonl,
                "\u{feff}{\"problem_id\": \"a\", \"correct\": true}\n",
            ),
            (
                Format::HumanEval,
                "\u{feff}{\"task_id\": \"a\", \"passed\": true}\n",
            ),
        ] {
            let d = read_str(format, text, &opts).unwrap_or_else(|e| panic!("{format:?}: {e}"));
            assert_eq!(counts(&d.models[0]), vec![("a".to_string(), 1, 1, vec![])]);
            let detected = crate::analyze::detect_format("f", text);
            assert_eq!(detected, format, "{text}");
        }
    }
}
