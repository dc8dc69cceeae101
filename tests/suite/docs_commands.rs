//! Every command line the README and docs/ show is one the argument parser accepts: no flag or
//! subcommand in the documentation that the binary does not know. Only parsing is checked (files
//! named in the examples need not exist); errors other than an unknown argument or subcommand, such
//! as a missing required value in a shortened example, are accepted.

use clap::error::ErrorKind;
use clap::Parser;
use evalsim::cli::Cli;
use std::path::{Path, PathBuf};

/// The documentation files a user reads: README.md and every page under docs/.
fn documentation_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/ exists")
        .map(|e| e.expect("readable docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// Splits a shell-like command into words: whitespace separates, single and double quotes group.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut in_word = false;
    for c in line.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => word.push(c),
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                in_word = true;
            }
            None if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            None => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// The evalsim invocations in one line of documentation, as argument vectors starting at
/// `evalsim`. A line holds one when it starts (after a shell prompt) with `evalsim ` or
/// `cargo run --release -- `; pipes, redirections, `&&` and comments end an invocation, and a
/// second invocation after `&&` or `|` is read as well.
fn invocations(line: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let line = line.split(" #").next().unwrap_or("");
    for part in line.split("&&").flat_map(|p| p.split('|')) {
        let part = part.trim().trim_start_matches("$ ");
        let rest = if let Some(r) = part.strip_prefix("cargo run --release -- ") {
            r
        } else if let Some(r) = part.strip_prefix("evalsim ") {
            r
        } else if let Some(r) = part.strip_prefix("./target/release/evalsim ") {
            r
        } else {
            continue;
        };
        let rest = rest.split(['>', '<']).next().unwrap_or("");
        let mut words = vec!["evalsim".to_string()];
        // A synopsis such as `evalsim merge DIR [--out OUT]` or `fit FILE [FILE...]` shows its
        // optional parts in brackets: read them as given.
        words.extend(shell_words(rest).into_iter().filter_map(|w| {
            let w = w.trim_start_matches('[').trim_end_matches(']');
            let w = w.trim_end_matches("...");
            (!w.is_empty()).then(|| w.to_string())
        }));
        out.push(words);
    }
    out
}

/// Every documented invocation: those on the lines of code blocks, and inline code spans
/// that start with `evalsim ` (prose such as "evalsim computes" is not code).
fn documented_invocations() -> Vec<(String, usize, Vec<String>)> {
    let mut found = Vec::new();
    for file in documentation_files() {
        let text = std::fs::read_to_string(&file).expect("readable documentation");
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let mut fenced = false;
        let mut continued = String::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
                continue;
            }
            let mut candidates: Vec<String> = Vec::new();
            // Fenced blocks and indented (four-space) code blocks hold shell lines.
            if fenced || line.starts_with("    ") {
                // A shell line ending in a backslash continues on the next line.
                if let Some(head) = line.trim_end().strip_suffix('\\') {
                    continued.push_str(head);
                    continue;
                }
                candidates.push(std::mem::take(&mut continued) + line);
            } else {
                candidates.extend(
                    line.split('`')
                        .skip(1)
                        .step_by(2)
                        .filter(|s| {
                            s.starts_with("evalsim ") || s.starts_with("cargo run --release -- ")
                        })
                        .map(str::to_string),
                );
            }
            for c in candidates {
                for words in invocations(&c) {
                    found.push((name.clone(), i + 1, words));
                }
            }
        }
    }
    found
}

/// The parser rejects these words as not part of evalsim's command line.
fn is_unknown(kind: ErrorKind) -> bool {
    matches!(
        kind,
        ErrorKind::UnknownArgument | ErrorKind::InvalidSubcommand
    )
}

#[test]
fn every_documented_command_line_parses() {
    let found = documented_invocations();
    // The README alone shows run, check, init, list, analyze, fit, plan and sweep examples.
    assert!(
        found.len() >= 30,
        "only {} documented invocations found: is the extraction broken?",
        found.len()
    );
    let bad: Vec<String> = found
        .iter()
        .filter_map(|(file, line, words)| match Cli::try_parse_from(words) {
            Err(e) if is_unknown(e.kind()) => Some(format!(
                "{file}:{line}: `{}`: {}",
                words.join(" "),
                e.to_string().lines().next().unwrap_or("")
            )),
            _ => None,
        })
        .collect();
    assert!(
        bad.is_empty(),
        "documented commands the parser rejects:\n{}",
        bad.join("\n")
    );
}

#[test]
fn a_made_up_flag_in_the_docs_would_be_caught() {
    let words = &invocations("evalsim run note --no-such-flag 3")[0];
    let e = Cli::try_parse_from(words).expect_err("an unknown flag is rejected");
    assert!(is_unknown(e.kind()), "{:?}", e.kind());
    let words = &invocations("cargo run --release -- frobnicate note")[0];
    let e = Cli::try_parse_from(words).expect_err("an unknown subcommand is rejected");
    assert!(is_unknown(e.kind()), "{:?}", e.kind());
    assert_eq!(
        invocations("evalsim merge DIR [--out OUT]"),
        vec![vec!["evalsim", "merge", "DIR", "--out", "OUT"]]
    );
    assert_eq!(
        invocations("evalsim fit a.jsonl > s.toml && evalsim run s.toml # then look"),
        vec![
            vec!["evalsim", "fit", "a.jsonl"],
            vec!["evalsim", "run", "s.toml"]
        ]
    );
}
