//! Canonical CSV: a header row naming the canonical columns, then one row per sample (RFC 4180
//! quoting; quoted fields may not span lines).
//!
//! Depends on [`super::fields`], the shared line iterator and [`crate::analyze::data`]'s
//! builder; computes no statistics.
use std::collections::BTreeMap;
use std::io::BufRead;

use serde_json::Value;

use super::fields::Ctx;
use super::{for_each_line, FormatReader, ReadOptions};
use crate::analyze::data::{DatasetBuilder, Sample};
use crate::analyze::{AnalyzeError, Result};

/// The canonical CSV reader.
pub(super) struct CanonicalCsv;

impl FormatReader for CanonicalCsv {
    fn read(
        &self,
        input: &mut dyn BufRead,
        builder: &mut DatasetBuilder,
        _options: &ReadOptions,
    ) -> Result<()> {
        read_csv(input, builder)
    }
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
                cluster: nonempty("cluster").or_else(|| nonempty("task")),
                run: nonempty("run"),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quoting() {
        assert_eq!(
            split_csv(r#"a,"b,c","d ""e""",,"#).unwrap(),
            vec!["a", "b,c", "d \"e\"", "", ""]
        );
        assert!(split_csv("\"open").is_err());
    }
}
