//! Errors from loading a scenario: every one names the file, the line and column, the key, and
//! what would be valid.
use std::ops::Range;

use super::keys::{self, Table};

/// A scenario that cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScenarioError {
    /// A value, key or syntax problem at a place in the file.
    #[error("{file}:{line}:{column}: {key}: {message}")]
    Invalid {
        /// The file (or embedded scenario name) the text came from.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// Dotted key path, e.g. `benchmark.sigma` or `experiment[2].votes`.
        key: String,
        /// What is wrong and what would be valid.
        message: String,
    },
    /// A scenario name that is neither a file nor a named scenario.
    #[error("unknown scenario `{name}`: not a file, and not a named scenario (available: {available}); give a name or a path to a .toml file")]
    UnknownName {
        /// What the user asked for.
        name: String,
        /// Comma-separated names that exist.
        available: String,
    },
    /// The file could not be read.
    #[error("cannot read scenario file {path}: {reason}")]
    Read {
        /// The path.
        path: String,
        /// The operating system's reason.
        reason: String,
    },
}

/// Converts byte offsets of a source text into 1-based line and column numbers.
#[derive(Debug, Clone)]
pub struct Locator<'a> {
    file: &'a str,
    src: &'a str,
}

impl<'a> Locator<'a> {
    /// A locator over `src`, reporting errors in `file`.
    pub fn new(file: &'a str, src: &'a str) -> Self {
        Locator { file, src }
    }

    /// 1-based (line, column) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.src.len());
        let before = &self.src[..offset];
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        (line, col)
    }

    /// Where the `index`-th element of the TOML array at `list` starts (the array's own span
    /// when the text there is not an array or has fewer elements), so that an error about one
    /// entry points at that entry. Elements are split at top-level commas; comments and quoted
    /// strings are skipped.
    pub fn element(&self, list: Range<usize>, index: usize) -> Range<usize> {
        let Some(text) = self.src.get(list.clone()).filter(|t| t.starts_with('[')) else {
            return list;
        };
        let bytes = text.as_bytes();
        let (mut i, mut depth, mut current) = (1, 0usize, 0usize);
        let mut start: Option<usize> = None;
        while i < bytes.len() {
            let c = bytes[i];
            match c {
                b'#' => {
                    while i < bytes.len() && bytes[i] != b'\n' {
                        i += 1;
                    }
                    continue;
                }
                b'"' | b'\'' => {
                    start.get_or_insert(i);
                    i += 1;
                    while i < bytes.len() && bytes[i] != c {
                        i += if bytes[i] == b'\\' && c == b'"' { 2 } else { 1 };
                    }
                }
                b'[' | b'{' => {
                    start.get_or_insert(i);
                    depth += 1;
                }
                b']' | b'}' if depth == 0 => break,
                b']' | b'}' => depth -= 1,
                b',' if depth == 0 => {
                    if current == index {
                        break;
                    }
                    current += 1;
                    start = None;
                }
                c if c.is_ascii_whitespace() => {}
                _ => {
                    start.get_or_insert(i);
                }
            }
            i += 1;
        }
        match start {
            Some(s) if current == index => list.start + s..list.start + s + 1,
            _ => list,
        }
    }

    /// An error at `span` for `key`.
    pub fn error(
        &self,
        span: Range<usize>,
        key: impl Into<String>,
        message: impl Into<String>,
    ) -> ScenarioError {
        let (line, column) = self.line_col(span.start);
        ScenarioError::Invalid {
            file: self.file.to_string(),
            line,
            column,
            key: key.into(),
            message: message.into(),
        }
    }

    /// The dotted key at a byte offset: the table header above it plus the key on its line
    /// (used for TOML's own syntax and type errors, which carry a span but no key path).
    pub fn key_at(&self, offset: usize) -> String {
        let offset = offset.min(self.src.len());
        let line_start = self.src[..offset].rfind('\n').map_or(0, |i| i + 1);
        let line_end = self.src[offset..]
            .find('\n')
            .map_or(self.src.len(), |i| offset + i);
        let line = &self.src[line_start..line_end];
        // A table header itself, e.g. `[model]` where `[[model]]` was meant.
        let header = line.trim();
        if let Some(name) = header.strip_prefix('[') {
            let name = name.trim_start_matches('[');
            let name = name.split(']').next().unwrap_or(name).trim();
            if !name.is_empty() {
                return name.to_string();
            }
        }
        let mut table = String::new();
        let mut counts: std::collections::HashMap<String, usize> = Default::default();
        for l in self.src[..line_start].lines() {
            let t = l.trim();
            if let Some(name) = t.strip_prefix("[[").and_then(|r| r.split("]]").next()) {
                let name = name.trim().to_string();
                let c = counts.entry(name.clone()).or_insert(0);
                *c += 1;
                table = format!("{name}[{}]", *c);
            } else if let Some(name) = t.strip_prefix('[').and_then(|r| r.split(']').next()) {
                let name = name.trim();
                // A sub-table of the last array entry, e.g. [model.tokens].
                table = match name.rsplit_once('.') {
                    Some((parent, child)) if counts.contains_key(parent) => {
                        format!("{parent}[{}].{child}", counts[parent])
                    }
                    _ => name.to_string(),
                };
            }
        }
        let key = line
            .split_once('=')
            .map(|(k, _)| k.trim().trim_matches('"').to_string())
            .filter(|k| !k.is_empty() && !k.starts_with('['))
            .unwrap_or_default();
        match (table.is_empty(), key.is_empty()) {
            (true, true) => "(top level)".to_string(),
            (true, false) => key,
            (false, true) => table,
            (false, false) => format!("{table}.{key}"),
        }
    }

    /// Converts TOML's own error (syntax, type, unknown key) into a located error.
    pub fn toml_error(&self, err: &toml::de::Error) -> ScenarioError {
        let span = err.span().unwrap_or(0..0);
        // For an unknown field, the span is the key itself.
        let key = self.key_at(span.start);
        let mut message = plain_message(err.message().trim(), &key, self.value_missing(span.start));
        if let Some(unknown) = unknown_key_message(err.message(), &key) {
            message = unknown;
        }
        if message.contains("invalid type: table") && self.date_at(span.start) {
            message = format!(
                "{}: TOML reads an unquoted date or time as a date, which no scenario key takes (write a number, or quote it if text was meant)",
                message.replace("invalid type: table", "invalid type: date/time")
            );
        }
        self.error(span, key, message)
    }

    /// True when the text at `offset` is a TOML date or time (`1979-05-27`, `07:32:00`).
    fn date_at(&self, offset: usize) -> bool {
        let text = self.src.get(offset.min(self.src.len())..).unwrap_or("");
        let b: Vec<u8> = text.bytes().take(10).collect();
        let d = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
        let date =
            (0..4).all(d) && b.get(4) == Some(&b'-') && d(5) && d(6) && b.get(7) == Some(&b'-');
        let time = d(0) && d(1) && b.get(2) == Some(&b':') && d(3) && d(4);
        date || time
    }

    /// True when the line at `offset` is `key =` with nothing after the `=`.
    fn value_missing(&self, offset: usize) -> bool {
        let offset = offset.min(self.src.len());
        let start = self.src[..offset].rfind('\n').map_or(0, |i| i + 1);
        let end = self.src[offset..]
            .find('\n')
            .map_or(self.src.len(), |i| offset + i);
        let line = self.src[start..end].split('#').next().unwrap_or("");
        line.split_once('=')
            .is_some_and(|(k, v)| !k.trim().is_empty() && v.trim().is_empty())
    }
}

/// The message for a key no table takes, from the key table: the table, the nearest key, and
/// every valid key of that table. `None` when serde's message is not about an unknown field.
fn unknown_key_message(msg: &str, key: &str) -> Option<String> {
    let rest = msg.trim().strip_prefix("unknown field `")?;
    let unknown = rest.split('`').next()?;
    let table = Table::of_path(key)?;
    let mut valid: Vec<String> = keys::of_table(table)
        .map(|k| format!("`{}`", k.name))
        .collect();
    if table == Table::Model {
        valid
            .extend(["tokens", "verifier", "grader", "confidence"].map(|b| format!("[model.{b}]")));
    }
    let mut out = format!("unknown key `{unknown}` in {}", table.header());
    if let Some(near) = keys::nearest(table, unknown) {
        out.push_str(&format!(" (did you mean `{near}`?)"));
    }
    out.push_str(&format!(
        "; valid keys: {} (every key: docs/keys.md)",
        valid.join(", ")
    ));
    Some(out)
}

/// Rewrites serde's and TOML's wording for people who write scenario files: Rust type names
/// become TOML's (a whole number, a number, a table, an array), and a few syntax errors say
/// what to write.
fn plain_message(msg: &str, key: &str, value_missing: bool) -> String {
    if value_missing {
        return format!(
            "missing value after `=` (write a value, e.g. `{} = 1`, or remove the line)",
            key.rsplit('.').next().unwrap_or(key)
        );
    }
    let mut m = msg
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
        .replace("expected u64", "expected a whole number >= 0")
        .replace("expected f64", "expected a number")
        .replace("expected a sequence", "expected an array")
        .replace("invalid type: map", "invalid type: table")
        .replace("invalid type: sequence", "invalid type: array");
    for raw in [
        "RawScenario",
        "RawBenchmark",
        "RawModel",
        "RawTokens",
        "RawExperiment",
    ] {
        m = m.replace(&format!("expected struct {raw}"), "expected a table");
    }
    if m.contains("wanted string or table") {
        m = m.replace("wanted string or table", "expected a quoted string");
        let field = key.rsplit('.').next().unwrap_or(key);
        let options = Table::of_path(key)
            .and_then(|t| keys::find(t, field, None))
            .map(|k| k.valid)
            .filter(|v| v.starts_with('"'));
        if let Some(options) = options {
            m.push_str(&format!(", one of: {options}"));
        }
    }
    if m.contains("recursion limit exceeded") {
        m.push_str(": arrays or tables nested too deeply (no scenario key takes more than an array of numbers or strings, e.g. `k = [1, 2, 4]`)");
    }
    if m.contains("number too large to fit in target type") {
        m.push_str(" (whole numbers in TOML go up to 9223372036854775807; see the Limits in the README for each key)");
    }
    if m.contains("invalid basic string") || m.contains("invalid literal string") {
        m.push_str(" (a string is missing its closing quote, or holds a bad escape)");
    }
    if m.contains("invalid table header") {
        m.push_str(" (a table header looks like [benchmark], [[model]] or [[experiment]])");
    }
    if (key == "model" || key == "experiment") && m.contains("expected an array") {
        m.push_str(&format!(
            " (write [[{key}]], with double brackets, for each {key})"
        ));
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_finds_each_entry_of_an_array() {
        let src = "k = [1, \"a,]b\", # one, two ]\n  [3, 4], 5_000 ]\nx = 1";
        let loc = Locator::new("f.toml", src);
        let list = 4..src.find(" ]\nx").map_or(src.len(), |i| i + 2);
        let at = |i: usize| {
            let r = loc.element(list.clone(), i);
            &src[r.start..]
        };
        assert!(at(0).starts_with("1,"));
        assert!(at(1).starts_with("\"a,]b\""));
        assert!(at(2).starts_with("[3, 4]"));
        assert!(at(3).starts_with("5_000"));
        assert_eq!(loc.line_col(loc.element(list.clone(), 3).start), (2, 11));
        // Past the end, or not an array: the whole value.
        assert_eq!(loc.element(list.clone(), 4), list);
        assert_eq!(loc.element(0..1, 0), 0..1);
    }
}
