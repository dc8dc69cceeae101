//! Input-format detection for `--format auto`: by file extension, then by the first line.
//!
//! The rule (also in README.md):
//!
//! 1. `.csv` is canonical CSV and `.json` is an inspect_ai log (one JSON document);
//! 2. otherwise the first non-blank line decides. A JSON object with `doc_id` and `resps` (or
//!    `filtered_resps`) is an lm-eval `--log_samples` file; with `task_id` and `passed` a
//!    human-eval results file; with `problem_id` canonical JSONL; with `eval`, `samples` or
//!    `status` (a log written on one line) an inspect_ai log. A line that is just `{` starts a
//!    pretty-printed JSON document: inspect_ai. A line naming a `problem_id` column among commas
//!    is a CSV header;
//! 3. anything else is read as canonical JSONL, whose reader then names the line and field that
//!    do not fit. Only the first 64 KiB are looked at, so a long line is judged by the field
//!    names it starts with.
//!
//! A UTF-8 byte order mark at the start of the file is ignored (here and by the readers).
use serde_json::Value;

use super::read::Format;

/// How many bytes of the file detection looks at.
pub const DETECT_BYTES: usize = 64 * 1024;

impl Format {
    /// The name used by `--format`.
    pub fn name(self) -> &'static str {
        match self {
            Format::Jsonl => "jsonl",
            Format::Csv => "csv",
            Format::HumanEval => "human-eval",
            Format::LmEval => "lm-eval",
            Format::Inspect => "inspect",
        }
    }
}

/// [`detect_format`] on raw bytes: a zip archive (an inspect_ai `.eval` log, by its `.eval`
/// extension or the zip magic `PK\x03\x04`) is an inspect_ai log; other bytes are read as text
/// (invalid UTF-8 replaced, which the reader then reports with its line).
pub fn detect_format_bytes(file_name: &str, head: &[u8]) -> Format {
    if file_name.to_ascii_lowercase().ends_with(".eval") || head.starts_with(b"PK\x03\x04") {
        return Format::Inspect;
    }
    detect_format(file_name, &String::from_utf8_lossy(head))
}

/// Detects the format of `file_name` from its extension and `head`, the file's first bytes
/// (up to [`DETECT_BYTES`]; a cut in the middle of a line is fine). Cost: O(len(head)).
pub fn detect_format(file_name: &str, head: &str) -> Format {
    let head = head.strip_prefix('\u{feff}').unwrap_or(head);
    let lower = file_name.to_ascii_lowercase();
    if lower.ends_with(".csv") {
        return Format::Csv;
    }
    if lower.ends_with(".json") {
        return Format::Inspect;
    }
    let Some(line) = head.lines().map(str::trim).find(|l| !l.is_empty()) else {
        return Format::Jsonl;
    };
    if line == "{" {
        return Format::Inspect;
    }
    if line.starts_with('{') {
        let has: Box<dyn Fn(&str) -> bool> = match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(map)) => Box::new(move |k: &str| map.contains_key(k)),
            // A cut or malformed line: look for the quoted key names.
            _ => {
                let text = line.to_string();
                Box::new(move |k: &str| text.contains(&format!("\"{k}\"")))
            }
        };
        return if has("doc_id") && (has("resps") || has("filtered_resps")) {
            Format::LmEval
        } else if has("task_id") && (has("passed") || has("completion")) {
            Format::HumanEval
        } else if has("problem_id") {
            Format::Jsonl
        } else if has("eval") || has("samples") || has("status") {
            Format::Inspect
        } else {
            Format::Jsonl
        };
    }
    if line.contains(',') && line.split(',').any(|f| f.trim() == "problem_id") {
        return Format::Csv;
    }
    Format::Jsonl
}

/// The formats evalsim reads, with the keys that tell them apart, for messages about a file that
/// is none of them.
pub const ACCEPTED_FORMATS: &str = "canonical rows (JSONL or CSV with `problem_id` and \
    `correct`, or `answer` + `reference`), an lm-eval `--log_samples` file (`doc_id`, `resps`) or \
    output folder, a human-eval results file (`task_id`, `passed`), an inspect_ai log (`.eval`, or \
    `.json` with `eval` and `samples`)";

/// What a JSON object with top-level keys `keys` looks like, said for a user whose file was read
/// in another format: which format it resembles and what to do, or that it resembles none (with
/// the keys it has).
pub fn resemblance(keys: &[String]) -> String {
    let has = |k: &str| keys.iter().any(|x| x == k);
    if has("problem_id") {
        "canonical rows: give the file the `.jsonl` extension or pass --format jsonl".to_string()
    } else if has("doc_id") && (has("resps") || has("filtered_resps")) {
        "an lm-eval `--log_samples` file: pass --format lm-eval".to_string()
    } else if has("results") && (has("config") || has("configs") || has("versions")) {
        "lm-eval's `results_*.json`, which holds aggregates only: pass the \
         `samples_<task>_*.jsonl` beside it, or the folder holding both"
            .to_string()
    } else if has("task_id") && (has("passed") || has("completion")) {
        "a human-eval file: pass --format human-eval".to_string()
    } else if has("id") && (has("scores") || has("input") || has("messages") || has("target")) {
        "one inspect_ai sample (an entry of an `.eval` archive), not a log: pass the `.eval` or \
         `.json` log it came from"
            .to_string()
    } else if has("eval") || has("samples") {
        "an inspect_ai log: pass --format inspect".to_string()
    } else if keys.is_empty() {
        "none of them (no keys)".to_string()
    } else {
        let shown: Vec<String> = keys.iter().take(8).map(|k| format!("`{k}`")).collect();
        format!(
            "none of them: its keys are {}{}",
            shown.join(", "),
            if keys.len() > 8 { ", ..." } else { "" }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detection_rule() {
        assert_eq!(detect_format("x.CSV", "{}"), Format::Csv);
        assert_eq!(detect_format("log.json", ""), Format::Inspect);
        assert_eq!(
            detect_format("s.jsonl", "\n{\"doc_id\": 0, \"resps\": [[\"a\"]]}\n"),
            Format::LmEval
        );
        assert_eq!(
            detect_format(
                "r.jsonl",
                "{\"task_id\": \"HumanEval/0\", \"passed\": true}"
            ),
            Format::HumanEval
        );
        assert_eq!(
            detect_format("r.jsonl", "{\"problem_id\": 1, \"correct\": tru}"),
            Format::Jsonl
        );
        assert_eq!(
            detect_format("r.txt", "{\n  \"version\": 2"),
            Format::Inspect
        );
        assert_eq!(
            detect_format("r.txt", "{\"version\": 2, \"eval\": {\"model\": \"m\""),
            Format::Inspect
        );
        assert_eq!(detect_format("r", "problem_id,correct\n"), Format::Csv);
        assert_eq!(detect_format("r.jsonl", ""), Format::Jsonl);
        assert_eq!(detect_format("r.jsonl", "hello"), Format::Jsonl);
    }
}
