//! The command line: clap's argument types and one handler per command, each a short pipeline
//! read -> resolve -> run -> report -> write. This is the top layer: it may use every other
//! module and is the only one besides `report` that touches the file system; it computes
//! nothing itself. This file holds the command list, the flags every command takes, exit codes
//! and the helpers the handlers share (progress bar, worker pool, printable text).
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::interrupt;
use crate::report;

mod analyze;
pub mod embed;
mod fit;
mod init;
mod list;
mod merge;
mod plan;
mod run;
mod sweep;

pub use init::template;
pub use sweep::shard_from_env;

/// Exit code for a run that finished with every check passing.
pub const EXIT_OK: u8 = 0;
/// Exit code when a simulated number disagrees with its exact value (|z| above the bound).
pub const EXIT_CHECK_FAILED: u8 = 1;
/// Exit code for bad input: a scenario, flag or output folder that cannot be used.
pub const EXIT_BAD_INPUT: u8 = 2;
/// Exit code for an internal failure (a figure that cannot be drawn).
pub const EXIT_INTERNAL: u8 = 3;
/// `--threads` goes up to this many threads per core (or [`MIN_MAX_THREADS`], if larger): more
/// only cost time (on 2 cores, 256 threads run `check note` in 0.24 s, 1,024 in 18 s), never
/// change a result.
pub const MAX_THREADS_PER_CORE: usize = 4;
/// `--threads` may always go up to this many.
pub const MIN_MAX_THREADS: usize = 256;

/// The largest `--threads` on this machine: 256, or 4 per core if that is more.
pub fn max_threads() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    MIN_MAX_THREADS.max(MAX_THREADS_PER_CORE.saturating_mul(cores))
}

fn parse_threads(s: &str) -> Result<u16, String> {
    let max = max_threads();
    match s.parse::<usize>() {
        Ok(n) if (1..=max).contains(&n) => u16::try_from(n).map_err(|e| e.to_string()),
        _ => Err(format!(
            "must be a whole number from 1 to {max} (256, or 4 per core if that is more; more threads only cost time)"
        )),
    }
}
/// Exit code after Ctrl-C (SIGINT): 128 + 2, as a shell reports it.
pub const EXIT_SIGINT: u8 = 130;
/// Exit code after SIGTERM: 128 + 15.
pub const EXIT_SIGTERM: u8 = 143;

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
    #[command(mut_arg("out", |a| a.help("Output folder [default: out/<scenario>/]")))]
    Run(run::RunArgs),
    /// Run a scenario's simulations and fail (exit 1) if any simulated number disagrees with
    /// its exact value by more than the z bound.
    #[command(
        mut_arg("out", |a| a.help("Write checks.csv (and nothing else) into DIR [default: write no file]")),
        mut_arg("no_figures", |a| a.help("No effect: check draws no figures (it writes only checks.csv, and only with --out)")),
    )]
    Check(run::RunArgs),
    /// List the named scenarios and the .toml files in ./scenarios.
    List(list::ListArgs),
    /// Print a commented template scenario on stdout: every key with its default, one
    /// experiment of each kind (`evalsim init mine > mine.toml`).
    Init(init::InitArgs),
    /// Analyse real per-sample eval results: unbiased pass@k, pass^k, exact maj@k, standard
    /// errors, bootstrap CIs, figures and (with --compare) a paired comparison.
    #[command(
        mut_arg("out", |a| a.help("Output folder [default: out/analyze-<file name>/, or out/analyze-<file 1>-vs-<file 2>/ with --compare]")),
        mut_arg("seed", |a| a.help("Seed of the bootstrap resamples and of the --compare rerun simulation [default: 1]")),
    )]
    Analyze(analyze::AnalyzeArgs),
    /// Fit a scenario to real per-sample results and print its TOML on stdout.
    #[command(
        mut_arg("out", |a| a.help("Output folder for the fit's figure and tables [default: out/fit-<file name>/]")),
        mut_arg("seed", |a| a.help("Seed written into the fitted scenario's `seed` [default: 1]")),
    )]
    Fit(fit::FitArgs),
    /// Run a scenario in every cell of a parameter grid (--set PATH=VALUES); optionally one shard.
    #[command(mut_arg("out", |a| a.help("Output folder [default: out/<scenario>-sweep/]")))]
    Sweep(sweep::SweepArgs),
    /// How many problems N and samples per problem n tell two models apart.
    #[command(
        mut_arg("out", |a| a.help("Output folder [default: out/plan/]")),
        mut_arg("seed", |a| a.help("Seed of the simulated reruns [default: 1, as for a scenario without `seed`]")),
    )]
    Plan(plan::PlanArgs),
    /// Join the shard-I-of-N.json files of a sharded sweep into the tables and figures of a whole one.
    #[command(
        mut_arg("out", |a| a.help("Output folder [default: DIR, the shards' folder]")),
        mut_arg("seed", |a| a.help("No effect: the shards carry their sweep's seed")),
    )]
    Merge(merge::MergeArgs),
}

/// Flags every command takes.
#[derive(Debug, Args)]
pub(super) struct CommonArgs {
    /// Output folder (each command's help gives its default)
    #[arg(long, value_name = "DIR", global = true)]
    pub(super) out: Option<PathBuf>,
    /// Master seed, overriding the scenario's `seed`
    #[arg(long, value_name = "N", global = true)]
    pub(super) seed: Option<u64>,
    /// Worker threads, at most 256 or 4 per core [default: one per core]; results do not depend on it
    #[arg(long, value_name = "N", value_parser = parse_threads, global = true)]
    pub(super) threads: Option<u16>,
    /// No progress bar and no summary on stdout (errors still go to stderr)
    #[arg(long, short, global = true)]
    pub(super) quiet: bool,
    /// Resolution of the PNG figures in dots per inch (96: one pixel per SVG unit; 192 or 300
    /// for print) [default: 96]
    #[arg(long, value_name = "DPI", value_parser = clap::value_parser!(u16).range(24..=600), global = true)]
    pub(super) dpi: Option<u16>,
}

impl CommonArgs {
    /// The figures to draw: none with `--no-figures`, else PNGs at the `--dpi` raster.
    pub(super) fn figures(&self, no_figures: bool) -> Option<report::plot::Raster> {
        (!no_figures).then(|| report::plot::Raster::at_dpi(self.dpi))
    }
}

/// An error with the exit code it maps to.
#[derive(Debug)]
pub(super) struct Failure {
    pub(super) code: u8,
    pub(super) error: anyhow::Error,
}

pub(super) fn bad_input(e: impl Into<anyhow::Error>) -> Failure {
    Failure {
        code: EXIT_BAD_INPUT,
        error: e.into(),
    }
}

/// A failure to write outputs: bad input (exit 2), or the interruption's exit code.
pub(super) fn write_failure(e: report::ReportError) -> Failure {
    match (&e, interrupt::exit_code()) {
        (report::ReportError::Interrupted { .. }, Some(code)) => Failure {
            code,
            error: anyhow::Error::new(e)
                .context(format!("interrupted by {}", interrupt::signal_name())),
        },
        _ => bad_input(e),
    }
}

/// Parses the command line, runs, prints errors with their causes and returns the exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Err(e) = interrupt::survive_file_size_limit() {
        tell(&format!("error: cannot install the SIGXFSZ handler: {e}\n"));
        return ExitCode::from(EXIT_INTERNAL);
    }
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(f) => {
            tell(&format!("error: {:#}\n", f.error));
            ExitCode::from(f.code)
        }
    }
}

pub use crate::text::printable;

/// Writes `text` to standard output, made [`printable`] (a model name read from a file cannot
/// move the cursor or retitle the terminal). A reader that went away (`evalsim run note | head`)
/// is not an error: the rest is dropped quietly. Any other failure, a full disk behind a
/// redirect say, is an error naming standard output, not a panic.
pub(super) fn say(text: &str) -> Result<(), Failure> {
    use std::io::Write;
    if STDOUT_CLOSED.load(std::sync::atomic::Ordering::Relaxed) {
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    match out
        .write_all(printable(text).as_bytes())
        .and_then(|()| out.flush())
    {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            STDOUT_CLOSED.store(true, std::sync::atomic::Ordering::Relaxed);
            Ok(())
        }
        Err(e) => Err(bad_input(
            anyhow::Error::new(e).context("cannot write to standard output"),
        )),
    }
}

/// Set once standard output's reader has gone away.
static STDOUT_CLOSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Writes `text` to standard error, made [`printable`]; a failure to write there is dropped
/// (there is nowhere left to report it).
pub(super) fn tell(text: &str) {
    use std::io::Write;
    let _ = std::io::stderr()
        .lock()
        .write_all(printable(text).as_bytes());
}

/// Prints `warning: <w>` on its own line on standard error.
pub(super) fn warn(w: &str) {
    tell(&format!("warning: {w}\n"));
}

/// The default output folder's name for a scenario called `stem` (a file stem, so anything):
/// letters, digits and `_ - . +` kept, anything else `_`, no leading dot (so `...toml` cannot
/// write into `out/..`), at most 100 characters, `scenario` when nothing is left.
pub fn folder_name(stem: &str) -> String {
    let kept: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_-.+".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let name: String = kept.trim_start_matches('.').chars().take(100).collect();
    if name.is_empty() {
        "scenario".to_string()
    } else {
        name
    }
}

/// Routes SIGINT and SIGTERM to the interruption flag ([`interrupt::install`]), for a command
/// that stops at [`stop_if_interrupted`] and writes through [`write_failure`].
pub(super) fn install_interrupt() -> Result<(), Failure> {
    interrupt::install()
        .context("cannot install the SIGINT/SIGTERM handler")
        .map_err(internal)
}

/// Fails with the interruption's exit code (130 SIGINT, 143 SIGTERM) once a signal arrived.
pub(super) fn stop_if_interrupted(stage: &str) -> Result<(), Failure> {
    match interrupt::exit_code() {
        Some(code) => Err(Failure {
            code,
            error: anyhow::anyhow!(
                "interrupted by {} {stage}; every file in the output folder is complete or absent",
                interrupt::signal_name()
            ),
        }),
        None => Ok(()),
    }
}

fn run(cli: Cli) -> Result<u8, Failure> {
    match cli.command {
        Command::List(a) => list::list(&a),
        Command::Init(a) => init::init(&a),
        Command::Run(a) => run::run_scenario(&a, false),
        Command::Check(a) => run::run_scenario(&a, true),
        Command::Analyze(a) => analyze::analyze_command(&a),
        Command::Fit(a) => fit::fit_command(&a),
        Command::Sweep(a) => sweep::sweep(&a),
        Command::Plan(a) => plan::plan(&a),
        Command::Merge(a) => merge::merge(&a),
    }
}

pub(super) fn progress_bar(total: u64, quiet: bool) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() || total == 0 {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("{spinner} {msg} [{bar:30}] {percent}% ({left} left)")
    {
        pb.set_style(style.progress_chars("=> ").with_key("left", time_left));
    }
    pb
}

/// Seconds left at the mean speed so far: elapsed x (total - done) / done (None before any
/// unit is done).
fn seconds_left(elapsed: f64, done: u64, total: u64) -> Option<f64> {
    (done > 0).then(|| elapsed * total.saturating_sub(done) as f64 / done as f64)
}

/// The time left at the bar's mean speed so far: elapsed x (total - done) / done. The units are
/// weighted by their measured cost (docs/performance.md, "Progress weights"), so the mean speed
/// holds from start to end; indicatif's own estimate follows the recent speed with a lag, which
/// overshot many times over after a pause in the ticks.
fn time_left(state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write) {
    let done = state.pos();
    let Some(secs) = seconds_left(
        state.elapsed().as_secs_f64(),
        done,
        state.len().unwrap_or(0),
    ) else {
        let _ = w.write_str("?");
        return;
    };
    let _ = if secs < 10.0 {
        write!(w, "{secs:.1}s")
    } else if secs < 60.0 {
        write!(w, "{secs:.0}s")
    } else {
        write!(w, "{}m{:02}s", (secs / 60.0) as u64, secs as u64 % 60)
    };
}

pub(super) fn internal(e: impl Into<anyhow::Error>) -> Failure {
    Failure {
        code: EXIT_INTERNAL,
        error: e.into(),
    }
}

pub(super) fn worker_pool(threads: Option<u16>) -> Result<rayon::ThreadPool, Failure> {
    let mut b = rayon::ThreadPoolBuilder::new();
    if let Some(t) = threads {
        b = b.num_threads(usize::from(t));
    }
    b.build()
        .context("cannot start worker threads")
        .map_err(internal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_left_followed_the_recent_speed_and_overshot_many_times_after_a_pause() {
        // The time left is elapsed x units left / units done: at a steady cost per unit it is
        // exact, and a pause before the bar counted no units (the plans' exact parts now run
        // before it) cannot inflate it as a lagging recent-speed estimate did (27 s shown with
        // 3.3 s to go).
        assert_eq!(seconds_left(1.0, 25, 100), Some(3.0));
        assert_eq!(seconds_left(5.0, 100, 100), Some(0.0));
        assert_eq!(seconds_left(0.5, 0, 100), None);
    }
}
