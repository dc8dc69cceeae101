//! Typed access to the fields of one input row, shared by every reader: a [`Ctx`] names the
//! file and line, so each missing or malformed field becomes an error naming file, line, field
//! and what would be valid.
//!
//! Depends on `serde_json` and [`crate::analyze::AnalyzeError`] only; no reader logic, no
//! statistics.
use serde_json::{Map, Value};

use crate::analyze::{AnalyzeError, Result};

/// One JSONL line as an object; anything else is an error naming the line.
pub(super) fn parse_object(source: &str, line: usize, text: &str) -> Result<Map<String, Value>> {
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

/// Where a value came from (file and line), for error messages naming both.
pub(crate) struct Ctx<'a> {
    /// The input's name.
    pub(super) source: &'a str,
    /// 1-based line.
    pub(super) line: usize,
}

impl Ctx<'_> {
    pub(super) fn bad(&self, field: &str, value: &Value, expected: &str) -> AnalyzeError {
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

    pub(super) fn missing(&self, field: &str, expected: &str) -> AnalyzeError {
        AnalyzeError::MissingField {
            source_name: self.source.to_string(),
            line: self.line,
            field: field.to_string(),
            expected: expected.to_string(),
        }
    }

    /// A required identifier: string or integer.
    pub(super) fn id(&self, obj: &Map<String, Value>, field: &str) -> Result<String> {
        match obj.get(field) {
            None | Some(Value::Null) => Err(self.missing(field, "a string or integer id")),
            Some(v) => self.id_value(field, v),
        }
    }

    pub(super) fn id_value(&self, field: &str, v: &Value) -> Result<String> {
        match v {
            Value::String(s) => Ok(s.clone()),
            Value::Number(n) if n.is_i64() || n.is_u64() => Ok(n.to_string()),
            other => Err(self.bad(field, other, "a string or integer id")),
        }
    }

    pub(super) fn opt_id(&self, obj: &Map<String, Value>, field: &str) -> Result<Option<String>> {
        match obj.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => self.id_value(field, v).map(Some),
        }
    }

    pub(super) fn opt_bool(&self, obj: &Map<String, Value>, field: &str) -> Result<Option<bool>> {
        match obj.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => self.bool_value(field, v).map(Some),
        }
    }

    pub(super) fn bool_value(&self, field: &str, v: &Value) -> Result<bool> {
        match v {
            Value::Bool(b) => Ok(*b),
            Value::Number(n) if n.as_f64() == Some(1.0) => Ok(true),
            Value::Number(n) if n.as_f64() == Some(0.0) => Ok(false),
            other => Err(self.bad(field, other, "true/false or 0/1")),
        }
    }

    /// A free-text value: string or number (numbers keep their JSON spelling).
    pub(super) fn text_value(&self, field: &str, v: &Value) -> Result<Option<String>> {
        match v {
            Value::Null => Ok(None),
            Value::String(s) => Ok(Some(s.clone())),
            Value::Number(n) => Ok(Some(n.to_string())),
            Value::Bool(b) => Ok(Some(b.to_string())),
            other => Err(self.bad(field, other, "a string, number or null")),
        }
    }

    pub(super) fn opt_tokens(&self, obj: &Map<String, Value>, field: &str) -> Result<Option<f64>> {
        match obj.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => match v.as_f64() {
                Some(t) if t >= 0.0 => Ok(Some(t)),
                _ => Err(self.bad(field, v, "a non-negative number of tokens")),
            },
        }
    }
}

/// `a`, `b` (or `none`) for messages listing valid choices.
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
