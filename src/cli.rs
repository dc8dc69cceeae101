//! The command line: parse flags, load the scenario, run, report. Thin by design.
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::experiments::{self, RunOutput, Z_BOUND};
use crate::report::{self, Options};
use crate::scenario::{Scenario, ScenarioError, NAMED};

mod grid;

/// Exit code for a run that finished with every check passing.
pub const EXIT_OK: u8 = 0;
/// Exit code when a simulated number disagrees with its exact value (|z| above the bound).
pub const EXIT_CHECK_FAILED: u8 = 1;
/// Exit code for bad input: a scenario, flag or output folder that cannot be used.
pub const EXIT_BAD_INPUT: u8 = 2;
/// Exit code for an internal failure (a figure that cannot be drawn).
pub const EXIT_INTERNAL: u8 = 3;

/// evalsim: a Monte Carlo workbench for the statistics of evaluating sampled language models.
#[derive(Debug, Parser)]
#[command(name = "evalsim", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a scenario: figures, tables, checks and a report in the output folder.
    Run(RunArgs),
    /// Run a scenario's simulations and fail (exit 1) if any simulated number disagrees with
    /// its exact value by more than the z bound.
    Check(RunArgs),
    /// List the named scenarios.
    List(CommonArgs),
    /// Run a scenario in every cell of a parameter grid (--set PATH=VALUES); optionally one shard.
    Sweep(grid::SweepArgs),
    /// How many problems N and samples per problem n tell two models apart.
    Plan(grid::PlanArgs),
    /// Join the shard-I-of-N.json files of a sharded sweep into the tables and figures of a whole one.
    Merge(grid::MergeArgs),
}

/// Flags every command takes.
#[derive(Debug, Args)]
struct CommonArgs {
    /// Output folder [default: out/<scenario>]
    #[arg(long, value_name = "DIR", global = true)]
    out: Option<PathBuf>,
    /// Master seed, overriding the scenario's `seed`
    #[arg(long, value_name = "N", global = true)]
    seed: Option<u64>,
    /// Worker threads [default: one per core]; results do not depend on it
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..), global = true)]
    threads: Option<u16>,
    /// No progress bar and no summary on stdout (errors still go to stderr)
    #[arg(long, short, global = true)]
    quiet: bool,
}

#[derive(Debug, Args)]
struct RunArgs {
    /// A named scenario (see `evalsim list`) or a path to a scenario .toml file
    scenario: String,
    /// Skip the PNG and SVG figures (tables, checks and report only)
    #[arg(long)]
    no_figures: bool,
    #[command(flatten)]
    common: CommonArgs,
}

/// An error with the exit code it maps to.
#[derive(Debug)]
struct Failure {
    code: u8,
    error: anyhow::Error,
}

fn bad_input(e: impl Into<anyhow::Error>) -> Failure {
    Failure {
        code: EXIT_BAD_INPUT,
        error: e.into(),
    }
}

/// Parses the command line, runs, prints errors with their causes and returns the exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(f) => {
            eprintln!("error: {:#}", f.error);
            ExitCode::from(f.code)
        }
    }
}

fn run(cli: Cli) -> Result<u8, Failure> {
    match cli.command {
        Command::List(c) => list(&c),
        Command::Run(a) => run_scenario(&a, false),
        Command::Check(a) => run_scenario(&a, true),
        Command::Sweep(a) => grid::sweep(&a),
        Command::Plan(a) => grid::plan(&a),
        Command::Merge(a) => grid::merge(&a),
    }
}

fn list(c: &CommonArgs) -> Result<u8, Failure> {
    let mut rows: Vec<(String, String, String)> = Vec::new();
    for (name, _) in NAMED {
        let s = Scenario::load(name).map_err(bad_input)?;
        let from = if PathBuf::from(format!("scenarios/{name}.toml")).is_file() {
            format!("scenarios/{name}.toml")
        } else {
            "built in".into()
        };
        rows.push((name.to_string(), s.title, from));
    }
    if let Ok(dir) = std::fs::read_dir("scenarios") {
        let mut extra: Vec<PathBuf> = dir
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        extra.sort();
        for p in extra {
            let stem = p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            if rows.iter().any(|r| r.0 == stem) {
                continue;
            }
            let title = Scenario::load(&p.display().to_string())
                .map_or_else(|e| format!("(invalid: {e})"), |s| s.title);
            rows.push((stem, title, p.display().to_string()));
        }
    }
    if !c.quiet {
        let w = rows.iter().map(|r| r.0.len()).max().unwrap_or(4);
        for (name, title, from) in rows {
            println!("{name:<w$}  {title}  [{from}]");
        }
    }
    Ok(EXIT_OK)
}

fn progress_bar(total: u64, quiet: bool) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() || total == 0 {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("{spinner} {msg} [{bar:30}] {percent}% ({eta} left)")
    {
        pb.set_style(style.progress_chars("=> "));
    }
    pb
}

fn run_scenario(a: &RunArgs, check_only: bool) -> Result<u8, Failure> {
    let c = &a.common;
    let mut scenario = Scenario::load(&a.scenario).map_err(|e: ScenarioError| bad_input(e))?;
    if let Some(seed) = c.seed {
        scenario.seed = seed;
    }
    let pool = {
        let mut b = rayon::ThreadPoolBuilder::new();
        if let Some(t) = c.threads {
            b = b.num_threads(usize::from(t));
        }
        b.build()
            .context("cannot start worker threads")
            .map_err(|e| Failure {
                code: EXIT_INTERNAL,
                error: e,
            })?
    };
    let total: u64 = (0..scenario.experiments.len())
        .map(|i| experiments::planned_draws(&scenario, i))
        .sum();
    let pb = progress_bar(total, c.quiet);
    pb.set_message(format!("{} (seed {})", scenario.name, scenario.seed));
    let tick = |n: u64| pb.inc(n);
    let output: RunOutput = pool
        .install(|| experiments::run_all(&scenario, &tick))
        .map_err(|e| Failure {
            code: EXIT_BAD_INPUT,
            error: e.into(),
        })?;
    pb.finish_and_clear();
    let checks = output.checks();
    let failed: Vec<_> = checks.iter().filter(|c| !c.passed()).collect();
    let out_dir = c
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("out").join(&scenario.name));
    if check_only {
        if c.out.is_some() {
            let csv = report::Artifact {
                file: "checks.csv".into(),
                bytes: report::tables::checks_csv(&output).into_bytes(),
            };
            report::write_artifacts(&out_dir, &[csv]).map_err(bad_input)?;
        }
    } else {
        let artifacts = report::render(
            &output,
            Options {
                figures: !a.no_figures,
            },
        )
        .map_err(|e| Failure {
            code: EXIT_INTERNAL,
            error: e.into(),
        })?;
        report::write_artifacts(&out_dir, &artifacts).map_err(bad_input)?;
        if !c.quiet {
            println!(
                "{}: wrote {} files to {}",
                scenario.name,
                artifacts.len(),
                out_dir.display()
            );
        }
    }
    if !c.quiet {
        let max_z = checks
            .iter()
            .map(|c| c.estimate.z.abs())
            .fold(0.0, f64::max);
        println!(
            "checks: {} of {} within |z| <= {Z_BOUND} (largest |z| = {max_z:.2}), seed {}",
            checks.len() - failed.len(),
            checks.len(),
            scenario.seed
        );
    }
    for f in &failed {
        eprintln!(
            "check failed: {} {} [{}]: exact {} sim {} se {} z {:.2}",
            f.experiment,
            f.quantity,
            f.cell,
            f.estimate.exact,
            f.estimate.sim,
            f.estimate.se,
            f.estimate.z
        );
    }
    Ok(if failed.is_empty() {
        EXIT_OK
    } else {
        EXIT_CHECK_FAILED
    })
}
