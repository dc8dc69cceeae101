//! The commands for a host program (the Python binding in `python/`): each function takes the
//! flags its command takes, parsed by the same definitions (so values are checked and errors
//! worded as on the command line), runs the same read -> compute steps as the command's handler,
//! and returns the files the command would write and the text it would print. Nothing here
//! writes a file or prints; the host writes the files with [`report::write_artifacts`] when
//! asked. Inputs of `analyze` and `fit` may be rows of canonical JSONL held in memory in place
//! of files.
use std::path::PathBuf;

use clap::Parser;

use super::analyze::{self, AnalyzeArgs};
use super::fit::{self, FitArgs};
use super::plan::{self, PlanArgs};
use super::run::{self, RunArgs};
use super::{bad_input, internal, stop_if_interrupted, Failure, EXIT_CHECK_FAILED, EXIT_OK};
use crate::analyze::{Dataset, Format};
use crate::experiments::KindResult;
use crate::report::{self, Artifact};
use crate::scenario::Scenario;

/// What a command produced.
#[derive(Debug)]
pub struct Output {
    /// The files the command writes into its output folder (figures only unless
    /// `--no-figures`).
    pub files: Vec<Artifact>,
    /// What the command prints: the summary of `analyze`, the parameters of `fit`, the
    /// paragraph of `plan`, the headline of `run`.
    pub text: String,
    /// The warnings it prints on stderr, without the `warning: ` prefix.
    pub warnings: Vec<String>,
    /// Its exit code: 0, or 1 when a simulated number disagrees with its exact value.
    pub code: u8,
}

/// A command's failure: the message the command prints after `error: ` and its exit code
/// (2 bad input, 3 internal, 130 interrupted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// The message, with its causes (`{:#}`), as the command prints it.
    pub message: String,
    /// The exit code the command would return.
    pub code: u8,
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl From<Failure> for Error {
    fn from(f: Failure) -> Error {
        Error {
            message: format!("{:#}", f.error),
            code: f.code,
        }
    }
}

type Result<T> = std::result::Result<T, Error>;

/// One input of `analyze` or `fit`: a file (any format the command reads), or rows of canonical
/// JSONL named `name` in messages (`name:LINE: ...`) and naming the model of rows without one.
#[derive(Debug, Clone)]
pub enum Input {
    /// A path, read as the command reads it.
    File(PathBuf),
    /// Canonical JSONL rows held in memory.
    Rows { name: String, jsonl: Vec<u8> },
}

impl Input {
    fn name(&self) -> String {
        match self {
            Input::File(p) => p.display().to_string(),
            Input::Rows { name, .. } => name.clone(),
        }
    }
}

/// Parses `flags` (the command line after the command's name) with the command's definitions.
fn parse<T: clap::Args>(command: &str, flags: &[String]) -> Result<T> {
    #[derive(Parser)]
    #[command(name = "evalsim", no_binary_name = true)]
    struct Flags<A: clap::Args> {
        #[command(flatten)]
        args: A,
    }
    match Flags::<T>::try_parse_from(flags) {
        Ok(f) => Ok(f.args),
        Err(e) => {
            let text = e.to_string();
            // clap's own message, without its `error: ` and its usage and help lines.
            let first = text.split("\n\n").next().unwrap_or(&text).trim();
            let first = first.strip_prefix("error: ").unwrap_or(first);
            Err(Error {
                message: format!("{command}: {first}"),
                code: super::EXIT_BAD_INPUT,
            })
        }
    }
}

/// The flags followed by the inputs' names as the command's FILE arguments.
fn with_files(flags: &[String], inputs: &[Input]) -> Vec<String> {
    let mut all = flags.to_vec();
    all.push("--".to_string());
    all.extend(inputs.iter().map(Input::name));
    all
}

/// Reads every input as the command reads its files (rows as canonical JSONL).
fn read_all(inputs: &[Input], flags: &analyze::InputArgs) -> Result<Vec<(Dataset, Format)>> {
    let mut out = Vec::with_capacity(inputs.len());
    for input in inputs {
        out.push(match input {
            Input::File(path) => analyze::read_input_quiet(path, flags)?,
            Input::Rows { name, jsonl } => {
                let options = analyze::read_options(flags, name.clone());
                let mut reader = std::io::Cursor::new(jsonl.as_slice());
                let dataset =
                    crate::analyze::read_samples(Format::Jsonl, &mut reader, name, &options)
                        .map_err(bad_input)?;
                (dataset, Format::Jsonl)
            }
        });
    }
    Ok(out)
}

fn warnings_of(inputs: &[(Dataset, Format)]) -> Vec<String> {
    inputs
        .iter()
        .flat_map(|(d, _)| d.harness.warnings.iter().cloned())
        .collect()
}

/// `evalsim analyze FLAGS FILE...` with `inputs` as its files.
///
/// # Errors
/// Every error the command reports, with its message and exit code.
pub fn analyze(flags: &[String], inputs: &[Input]) -> Result<Output> {
    let a: AnalyzeArgs = parse("analyze", &with_files(flags, inputs))?;
    analyze::check_cap(&a)?;
    let read = read_all(inputs, &a.input)?;
    let mut warnings = warnings_of(&read);
    let analysis = analyze::estimate(&a, read)?;
    warnings.extend(
        analysis
            .sources
            .iter()
            .flat_map(|s| s.mismatches.iter().cloned()),
    );
    let files = report::analyze::analysis_artifacts(&analysis, a.common.figures(a.no_figures))
        .map_err(internal)?;
    Ok(Output {
        files,
        text: report::analyze::analysis_text(&analysis),
        warnings,
        code: EXIT_OK,
    })
}

/// `evalsim fit FLAGS FILE...` with `inputs` as its files.
///
/// # Errors
/// Every error the command reports, with its message and exit code.
pub fn fit(flags: &[String], inputs: &[Input]) -> Result<Output> {
    let a: FitArgs = parse("fit", &with_files(flags, inputs))?;
    let read = read_all(inputs, &a.input)?;
    let mut warnings = warnings_of(&read);
    let fit = fit::estimate(&a, read.into_iter().map(|(d, _)| d).collect())?;
    let seed = a.common.seed.unwrap_or(1);
    warnings.extend(
        report::analyze::fit_warnings(&fit)
            .lines()
            .map(|l| l.strip_prefix("warning: ").unwrap_or(l).to_string()),
    );
    let files = report::analyze::fit_artifacts(&fit, seed, a.common.figures(a.no_figures))
        .map_err(internal)?;
    Ok(Output {
        files,
        text: report::analyze::fit_text(&fit),
        warnings,
        code: EXIT_OK,
    })
}

/// `evalsim plan FLAGS`.
///
/// # Errors
/// Every error the command reports, and an interruption ([`crate::interrupt`]).
pub fn plan(flags: &[String]) -> Result<Output> {
    let a: PlanArgs = parse("plan", flags)?;
    let (result, _) = plan::compute(&a)?;
    stop_if_interrupted("while planning")?;
    let files = report::planning::render_plan(&result, None, a.common.figures(a.no_figures))
        .map_err(internal)?;
    let failed = result.checks().iter().any(|c| !c.passed());
    Ok(Output {
        files,
        text: report::planning::paragraph(&result),
        warnings: Vec::new(),
        code: if failed { EXIT_CHECK_FAILED } else { EXIT_OK },
    })
}

/// `evalsim run SCENARIO FLAGS` where `scenario` is a name or a path, or, when `is_text`, the
/// TOML text of a scenario (named `scenario` and `<text>` in messages).
///
/// # Errors
/// Every error the command reports, and an interruption ([`crate::interrupt`]).
pub fn run(scenario: &str, is_text: bool, flags: &[String]) -> Result<Output> {
    let mut all = flags.to_vec();
    all.extend(["--".to_string(), scenario.to_string()]);
    let a: RunArgs = parse("run", &all)?;
    let c = &a.common;
    let loaded = if is_text {
        Scenario::from_toml_seeded(scenario, "scenario", "<text>", c.seed)
    } else {
        Scenario::load_seeded(scenario, c.seed)
    };
    let scenario = run::runnable(loaded.map_err(bad_input)?)?;
    let output = run::simulate(&scenario, c.threads, true)?;
    let files = report::render(
        &output,
        report::Options {
            figures: a.common.figures(a.no_figures),
        },
    )
    .map_err(internal)?;
    let failed = output.checks().iter().any(|c| !c.passed());
    Ok(Output {
        files,
        text: report::summary::headline_text(&report::summary::summary(&output)),
        warnings: Vec::new(),
        code: if failed { EXIT_CHECK_FAILED } else { EXIT_OK },
    })
}

/// Writes `files` into `dir` as the commands write their output folder (all or nothing).
///
/// # Errors
/// The folder cannot be created, locked or written (exit code 2).
pub fn write(dir: &std::path::Path, files: &[Artifact]) -> Result<Vec<PathBuf>> {
    report::write_artifacts(dir, files).map_err(|e| Error::from(super::write_failure(e)))
}
