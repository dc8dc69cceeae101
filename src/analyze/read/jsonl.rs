//! Canonical JSONL: one object per sample with the fields listed in [`super`]. A fast path
//! deserialises the canonical fields straight from the line (borrowing strings); a line it
//! declines goes through the general `serde_json::Value` path, which reports every error.
//!
//! Depends on [`super::fields`], the shared line iterator and [`crate::analyze::data`]'s
//! builder; computes no statistics.
use std::borrow::Cow;
use std::fmt;
use std::io::BufRead;

use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::fields::{parse_object, Ctx};
use super::{for_each_line, FormatReader, ReadOptions};
use crate::analyze::data::{DatasetBuilder, Sample, SampleRef};
use crate::analyze::{AnalyzeError, Result};

/// The canonical JSONL reader.
pub(super) struct CanonicalJsonl;

impl FormatReader for CanonicalJsonl {
    fn read(
        &self,
        input: &mut dyn BufRead,
        builder: &mut DatasetBuilder,
        _options: &ReadOptions,
    ) -> Result<()> {
        read_canonical_jsonl(input, builder)
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
        cluster: match ctx.opt_id(obj, "cluster")? {
            Some(c) => Some(c),
            None => ctx.opt_id(obj, "task")?,
        },
        run: ctx.opt_id(obj, "run")?,
    })
}

/// Canonical JSONL: each line through [`canonical_fast`], and through the general
/// [`canonical_json`] (a `serde_json::Value` per line) only when the fast path declines it, which
/// it does for every line that is malformed or has a field of the wrong type. So every error
/// message comes from `canonical_json`, and a line the fast path accepts gives the sample
/// `canonical_json` would (a test checks both on a corpus of awkward lines).
fn read_canonical_jsonl(reader: &mut dyn BufRead, builder: &mut DatasetBuilder) -> Result<()> {
    let source = builder.source().to_string();
    let mut first = true;
    for_each_line(reader, &source, |line, text| match canonical_fast(text) {
        Some(sample) => {
            first = false;
            builder.push_ref(line, sample)
        }
        None => {
            let obj = parse_object(&source, line, text)?;
            if std::mem::take(&mut first) && !obj.contains_key("problem_id") {
                return Err(not_canonical(&source, line, &obj));
            }
            let sample = canonical_json(&source, line, &obj)?;
            builder.push(line, sample)
        }
    })
}

/// The first row has no `problem_id`: the file is not canonical, so say what is read and which
/// format the row looks like, not only that a canonical field is missing.
fn not_canonical(source: &str, line: usize, obj: &Map<String, Value>) -> AnalyzeError {
    let keys: Vec<String> = obj.keys().cloned().collect();
    AnalyzeError::Input {
        source_name: format!("{source}:{line}"),
        message: format!(
            "read as canonical JSONL, but the row has no `problem_id`; evalsim reads {}. This row \
             looks like {}",
            crate::analyze::detect::ACCEPTED_FORMATS,
            crate::analyze::detect::resemblance(&keys)
        ),
    }
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
const CANONICAL_FIELDS: [&str; 10] = [
    "problem_id",
    "model",
    "correct",
    "answer",
    "reference",
    "sample",
    "output_tokens",
    "cluster",
    "run",
    "task",
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
    let [problem_id, model, correct, answer, reference, sample, output_tokens, cluster, run, task] =
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
        cluster: match opt_id(cluster)? {
            Some(c) => Some(c),
            None => opt_id(task)?,
        },
        run: opt_id(run)?,
    })
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{counts, read_str};
    use super::super::Format;
    use super::*;
    use crate::analyze::data::Dataset;
    use crate::analyze::AnalyzeError;

    #[test]
    fn malformed_json_names_the_line() {
        let text = "{\"problem_id\": \"a\", \"correct\": true}\n\n{\"problem_id\": \"b\", \"correct\": tru}\n";
        let err = read_str(Format::Jsonl, text, &ReadOptions::default()).unwrap_err();
        assert!(matches!(err, AnalyzeError::Json { line: 3, .. }), "{err}");
        assert!(err.to_string().starts_with("test.in:3: malformed JSON"));
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
            (r#"{"problem_id": "r1", "run": 3, "correct": true}"#, true),
            (r#"{"problem_id": "r2", "run": "seed-7", "correct": false, "model": "m"}"#, true),
            (r#"{"problem_id": "r3", "run": 1.5, "correct": true}"#, false),
            (r#"{"problem_id": "r4", "run": [1], "correct": true}"#, false),
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
}
