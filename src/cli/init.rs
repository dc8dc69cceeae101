//! `evalsim init`: prints the commented template scenario.
use clap::Args;

use super::{Failure, EXIT_OK};
use crate::scenario::keys::{self, Table};
use crate::scenario::ExperimentKind;

/// Flags of `evalsim init`.
#[derive(Debug, Args)]
pub(super) struct InitArgs {
    /// The scenario's title [default: my-scenario]
    pub(super) name: Option<String>,
}

/// The template `evalsim init` prints; `@TITLE@` is replaced by the quoted title.
const TEMPLATE: &str = include_str!("template.toml");

/// The template scenario titled `name`, as `evalsim init NAME` prints it: every line ending in
/// `#=` gets its key's comment from the key table.
pub fn template(name: &str) -> String {
    comment_keys(TEMPLATE).replace(
        "@TITLE@",
        &toml::Value::String(name.to_string()).to_string(),
    )
}

/// Column where key comments start.
const COMMENT_COLUMN: usize = 27;

/// Replaces each `#=` at the end of a `key = value` line (commented or not) with the key's
/// comment from [`keys::KEYS`], found by the table the line is in and, in an experiment, its
/// kind.
fn comment_keys(template: &str) -> String {
    let mut table = Table::Top;
    let mut kind: Option<ExperimentKind> = None;
    let mut out = String::with_capacity(template.len() * 2);
    for line in template.lines() {
        let body = line.trim_start_matches('#').trim();
        if body.starts_with('[') {
            let header = body.split(']').next().unwrap_or("").trim_matches('[');
            table = match header.trim() {
                "benchmark" => Table::Benchmark,
                "model" => Table::Model,
                "model.tokens" => Table::Tokens,
                "model.verifier" => Table::Verifier,
                "model.grader" => Table::Grader,
                "model.confidence" => Table::Confidence,
                "experiment" => Table::Experiment,
                _ => table,
            };
            if table == Table::Experiment {
                kind = None;
            }
        }
        if let (Table::Experiment, Some(v)) = (table, body.strip_prefix("kind = ")) {
            let name = v.split('#').next().unwrap_or("").trim().trim_matches('"');
            kind = ExperimentKind::ALL.into_iter().find(|k| k.as_str() == name);
        }
        let Some(code) = line.strip_suffix("#=") else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        let code = code.trim_end();
        let name = body.split('=').next().unwrap_or("").trim();
        match keys::find(table, name, kind) {
            Some(key) => out.push_str(&format!(
                "{code:<width$} # {}\n",
                key.comment(),
                width = COMMENT_COLUMN - 1
            )),
            None => {
                out.push_str(code);
                out.push('\n');
            }
        }
    }
    out
}

/// Prints the template titled by the flag (or `my-scenario`).
pub(super) fn init(a: &InitArgs) -> Result<u8, Failure> {
    super::say(&template(a.name.as_deref().unwrap_or("my-scenario")))?;
    Ok(EXIT_OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_marked_template_line_finds_its_key_in_the_table() {
        // A `#=` left in the output is a key the table does not know in that table or kind.
        let text = template("t");
        assert!(!text.contains("#="), "{text}");
        let marked = TEMPLATE.lines().filter(|l| l.ends_with("#=")).count();
        let commented = text.lines().filter(|l| l.contains(" # ")).count();
        assert!(commented >= marked, "{commented} < {marked}");
    }

    #[test]
    fn the_template_shows_every_key_of_the_benchmark_and_model_tables() {
        let text = template("t");
        for table in [
            Table::Benchmark,
            Table::Model,
            Table::Tokens,
            Table::Verifier,
            Table::Grader,
            Table::Confidence,
        ] {
            for key in keys::of_table(table) {
                let shown = text.lines().any(|l| {
                    l.trim_start_matches('#')
                        .trim_start()
                        .starts_with(&format!("{} =", key.name))
                });
                assert!(
                    shown,
                    "{} of {} is not in the template",
                    key.name,
                    table.header()
                );
            }
        }
    }
}
