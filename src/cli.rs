//! The command line: parse flags, load the scenario, run, report. Thin by design.
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::experiments::{self, RunOutput, Z_BOUND};
use crate::interrupt;
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
    Run(RunArgs),
    /// Run a scenario's simulations and fail (exit 1) if any simulated number disagrees with
    /// its exact value by more than the z bound.
    #[command(
        mut_arg("out", |a| a.help("Write checks.csv (and nothing else) into DIR [default: write no file]")),
        mut_arg("no_figures", |a| a.help("No effect: check draws no figures (it writes only checks.csv, and only with --out)")),
    )]
    Check(RunArgs),
    /// List the named scenarios and the .toml files in ./scenarios.
    List(ListArgs),
    /// Print a commented template scenario on stdout: every key with its default, one
    /// experiment of each kind (`evalsim init mine > mine.toml`).
    Init(InitArgs),
    /// Analyse real per-sample eval results: unbiased pass@k, pass^k, exact maj@k, standard
    /// errors, bootstrap CIs, figures and (with --compare) a paired comparison.
    #[command(
        mut_arg("out", |a| a.help("Output folder [default: out/analyze-<file name>/, or out/analyze-<file 1>-vs-<file 2>/ with --compare]")),
        mut_arg("seed", |a| a.help("Seed of the bootstrap resamples and of the --compare rerun simulation [default: 1]")),
    )]
    Analyze(AnalyzeArgs),
    /// Fit a scenario to real per-sample results and print its TOML on stdout.
    #[command(
        mut_arg("out", |a| a.help("Output folder for the fit's figure and tables [default: out/fit-<file name>/]")),
        mut_arg("seed", |a| a.help("Seed written into the fitted scenario's `seed` [default: 1]")),
    )]
    Fit(FitArgs),
    /// Run a scenario in every cell of a parameter grid (--set PATH=VALUES); optionally one shard.
    #[command(mut_arg("out", |a| a.help("Output folder [default: out/<scenario>-sweep/]")))]
    Sweep(grid::SweepArgs),
    /// How many problems N and samples per problem n tell two models apart.
    #[command(
        mut_arg("out", |a| a.help("Output folder [default: out/plan/]")),
        mut_arg("seed", |a| a.help("Seed of the simulated reruns [default: 20240601]")),
    )]
    Plan(grid::PlanArgs),
    /// Join the shard-I-of-N.json files of a sharded sweep into the tables and figures of a whole one.
    #[command(
        mut_arg("out", |a| a.help("Output folder [default: DIR, the shards' folder]")),
        mut_arg("seed", |a| a.help("No effect: the shards carry their sweep's seed")),
    )]
    Merge(grid::MergeArgs),
}

/// Flags of `evalsim init`.
#[derive(Debug, Args)]
struct InitArgs {
    /// The scenario's title [default: my-scenario]
    name: Option<String>,
}

/// The template `evalsim init` prints; `@TITLE@` is replaced by the quoted title.
const TEMPLATE: &str = include_str!("cli/template.toml");

/// The template scenario titled `name`, as `evalsim init NAME` prints it.
pub fn template(name: &str) -> String {
    TEMPLATE.replace(
        "@TITLE@",
        &toml::Value::String(name.to_string()).to_string(),
    )
}

/// Flags of `evalsim list`: it runs nothing, so it takes none of the run flags.
#[derive(Debug, Args)]
struct ListArgs {
    /// Print nothing (only check that the named scenarios load)
    #[arg(long, short)]
    quiet: bool,
}

impl Cli {
    /// The `--dpi` flag of whichever command was given.
    fn dpi(&self) -> Option<u16> {
        match &self.command {
            Command::Run(a) | Command::Check(a) => a.common.dpi,
            Command::List(_) | Command::Init(_) => None,
            Command::Analyze(a) => a.common.dpi,
            Command::Fit(a) => a.common.dpi,
            Command::Sweep(a) => a.common.dpi,
            Command::Plan(a) => a.common.dpi,
            Command::Merge(a) => a.common.dpi,
        }
    }
}

/// Flags every command takes.
#[derive(Debug, Args)]
struct CommonArgs {
    /// Output folder (each command's help gives its default)
    #[arg(long, value_name = "DIR", global = true)]
    out: Option<PathBuf>,
    /// Master seed, overriding the scenario's `seed`
    #[arg(long, value_name = "N", global = true)]
    seed: Option<u64>,
    /// Worker threads, at most 256 or 4 per core [default: one per core]; results do not depend on it
    #[arg(long, value_name = "N", value_parser = parse_threads, global = true)]
    threads: Option<u16>,
    /// No progress bar and no summary on stdout (errors still go to stderr)
    #[arg(long, short, global = true)]
    quiet: bool,
    /// Resolution of the PNG figures in dots per inch (96: one pixel per SVG unit; 192 or 300
    /// for print) [default: 96]
    #[arg(long, value_name = "DPI", value_parser = clap::value_parser!(u16).range(24..=600), global = true)]
    dpi: Option<u16>,
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

/// A failure to write outputs: bad input (exit 2), or the interruption's exit code.
fn write_failure(e: report::ReportError) -> Failure {
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
        eprintln!("error: cannot install the SIGXFSZ handler: {e}");
        return ExitCode::from(EXIT_INTERNAL);
    }
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(f) => {
            eprintln!("error: {}", printable(&format!("{:#}", f.error)));
            ExitCode::from(f.code)
        }
    }
}

/// `text` safe to print on a terminal: control characters (NUL, ESC, carriage return, ...) and
/// the invisible direction overrides become `\u{..}` escapes; line breaks stay.
pub fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let invisible = matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
        if (c.is_control() && c != '\n') || invisible {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
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

/// Fails with the interruption's exit code (130 SIGINT, 143 SIGTERM) once a signal arrived.
fn stop_if_interrupted(stage: &str) -> Result<(), Failure> {
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
    if let Some(dpi) = cli.dpi() {
        report::plot::set_png_scale(f32::from(dpi) / 96.0);
    }
    match cli.command {
        Command::List(c) => list(&c),
        Command::Init(a) => {
            print!("{}", template(a.name.as_deref().unwrap_or("my-scenario")));
            Ok(EXIT_OK)
        }
        Command::Run(a) => run_scenario(&a, false),
        Command::Check(a) => run_scenario(&a, true),
        Command::Analyze(a) => analyze_command(&a),
        Command::Fit(a) => fit_command(&a),
        Command::Sweep(a) => grid::sweep(&a),
        Command::Plan(a) => grid::plan(&a),
        Command::Merge(a) => grid::merge(&a),
    }
}

fn list(c: &ListArgs) -> Result<u8, Failure> {
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
            println!("{}", printable(&format!("{name:<w$}  {title}  [{from}]")));
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
    interrupt::install()
        .context("cannot install the SIGINT/SIGTERM handler")
        .map_err(|e| Failure {
            code: EXIT_INTERNAL,
            error: e,
        })?;
    let scenario =
        Scenario::load_seeded(&a.scenario, c.seed).map_err(|e: ScenarioError| bad_input(e))?;
    if scenario.experiments.is_empty() {
        return Err(bad_input(anyhow::anyhow!(
            "{}: no [[experiment]] given: nothing to run (add one, e.g. [[experiment]] kind = \"curves\"; kinds: curves, attractor-sweep, seed-variance, vote-spread, head-to-head, budget, cost, plan)",
            scenario.source
        )));
    }
    // The output folder is locked before the simulation, so a concurrent run into it is refused
    // at once rather than after its work (`check` writes only with --out).
    let out_dir = if check_only && c.out.is_none() {
        None
    } else {
        let dir = c
            .out
            .clone()
            .unwrap_or_else(|| PathBuf::from("out").join(folder_name(&scenario.name)));
        Some(report::OutputDir::lock(&dir).map_err(bad_input)?)
    };
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
    pb.set_message(printable(&format!(
        "{} (seed {})",
        scenario.name, scenario.seed
    )));
    let tick = |n: u64| pb.inc(n);
    let output: RunOutput = pool
        .install(|| experiments::run_all(&scenario, &tick))
        .map_err(|e| Failure {
            code: EXIT_BAD_INPUT,
            error: e.into(),
        })?;
    pb.finish_and_clear();
    stop_if_interrupted("while simulating; nothing was written")?;
    let checks = output.checks();
    let failed: Vec<_> = checks.iter().filter(|c| !c.passed()).collect();
    if let Some(out_dir) = out_dir {
        if check_only {
            let csv = report::Artifact {
                file: "checks.csv".into(),
                bytes: report::tables::checks_csv(&output).into_bytes(),
            };
            out_dir.write(&[csv]).map_err(write_failure)?;
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
            stop_if_interrupted("while rendering; nothing was written")?;
            out_dir.write(&artifacts).map_err(write_failure)?;
            if !c.quiet {
                print!(
                    "{}",
                    report::markdown::headline_text(&report::markdown::summary(&output), 4)
                );
                println!(
                    "{}",
                    printable(&format!(
                        "{}: wrote {} files to {}",
                        scenario.name,
                        artifacts.len(),
                        out_dir.path().display()
                    ))
                );
            }
        }
    }
    if !c.quiet {
        let max_z = checks
            .iter()
            .map(|c| c.estimate.z.abs())
            .fold(0.0, f64::max);
        println!(
            "checks: {} of {} passed (|z| <= {Z_BOUND}, or Bernstein's bound for counts; largest |z| = {max_z:.2}), seed {}",
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

// ---------------------------------------------------------------------------------------------
// `analyze` and `fit`: read real samples (src/analyze), report (src/report/analyze.rs).

/// Input format for `analyze` and `fit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum FormatArg {
    /// By extension and first line (see README)
    Auto,
    /// Canonical JSONL, one object per sample
    Jsonl,
    /// Canonical CSV with a header row
    Csv,
    /// human-eval `*_results.jsonl`
    HumanEval,
    /// lm-evaluation-harness `--log_samples` JSONL
    LmEval,
    /// inspect_ai `.json` log
    Inspect,
}

/// maj@k vote rule for `analyze`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum RuleArg {
    /// Ties at the top split evenly
    Random,
    /// A tie at the top is not a win
    Strict,
    /// The correct answer needs more than k/2 votes
    Absolute,
    /// Only the vote of the first k answers in file order
    First,
}

/// Largest `--reruns` of `analyze` (the scenario files' limit on reruns).
const MAX_RERUNS: u64 = 100_000_000;

/// Flags shared by `analyze` and `fit` about how to read the inputs.
#[derive(Debug, Args)]
struct InputArgs {
    /// Input format
    #[arg(long, value_enum, default_value = "auto")]
    format: FormatArg,
    /// Compare answers as raw strings (no whitespace, case or number normalisation)
    #[arg(long)]
    no_normalize: bool,
    /// lm-eval: the filter whose `filtered_resps` hold the answers
    #[arg(long, value_name = "NAME")]
    filter: Option<String>,
    /// inspect_ai: the scorer to read when samples carry several
    #[arg(long, value_name = "NAME")]
    scorer: Option<String>,
    /// inspect_ai: the key of a dict-valued score
    #[arg(long, value_name = "KEY")]
    score_key: Option<String>,
    /// lm-eval: the per-sample metric read for correctness (default: the only 0/1 metric the
    /// rows log; several need a choice)
    #[arg(long, value_name = "NAME")]
    metric: Option<String>,
}

#[derive(Debug, Args)]
struct AnalyzeArgs {
    /// Result files (one row per sample)
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// k values, comma separated [default: every k up to the smallest n (powers of two above 128)]
    #[arg(long, value_name = "K,...", value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..))]
    k: Option<Vec<u32>>,
    /// Paired comparison of two models (two files, or one file holding two models)
    #[arg(long)]
    compare: bool,
    /// maj@k tie rule; `first` reports only the vote of the first k answers in file order
    #[arg(long, value_enum, default_value = "random")]
    rule: RuleArg,
    /// Token cap for the truncation rate (share of samples with output_tokens >= TOKENS)
    #[arg(long, value_name = "TOKENS")]
    cap: Option<f64>,
    /// Bootstrap resamples over problems for the 95% CIs (0 turns them off)
    #[arg(long, value_name = "N", default_value_t = 2000)]
    bootstrap: usize,
    /// With --compare: simulated reruns for the probability that a rerun reverses the order
    /// (0 turns it off; at most 100000000)
    #[arg(
        long,
        value_name = "N",
        requires = "compare",
        default_value_t = crate::analyze::ComparisonOptions::default().reruns as u64,
        value_parser = clap::value_parser!(u64).range(0..=MAX_RERUNS)
    )]
    reruns: u64,
    /// Skip the PNG and SVG figures
    #[arg(long)]
    no_figures: bool,
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    common: CommonArgs,
}

#[derive(Debug, Args)]
struct FitArgs {
    /// Result file (one row per sample)
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// The model to fit when the file holds several
    #[arg(long, value_name = "NAME")]
    model: Option<String>,
    /// Skip the PNG and SVG figure
    #[arg(long)]
    no_figures: bool,
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    common: CommonArgs,
}

fn internal(e: impl Into<anyhow::Error>) -> Failure {
    Failure {
        code: EXIT_INTERNAL,
        error: e.into(),
    }
}

/// The name of an input as used in the default output folder: the file name with its extension
/// (so `x.csv` and `x.jsonl` never share a folder), cleaned as [`folder_name`] cleans a scenario
/// stem; `stdin` for `-`.
fn input_folder_name(path: &std::path::Path) -> String {
    if is_stdin(path) {
        return "stdin".to_string();
    }
    let name = path
        .file_name()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    folder_name(&name)
}

/// The model name of rows that name none: the file stem (`stdin` for `-`).
fn file_stem(path: &std::path::Path) -> String {
    if is_stdin(path) {
        return "stdin".to_string();
    }
    path.file_stem()
        .map_or_else(|| "input".to_string(), |s| s.to_string_lossy().into_owned())
}

/// `-` is standard input.
fn is_stdin(path: &std::path::Path) -> bool {
    path.as_os_str() == "-"
}

fn worker_pool(threads: Option<u16>) -> Result<rayon::ThreadPool, Failure> {
    let mut b = rayon::ThreadPoolBuilder::new();
    if let Some(t) = threads {
        b = b.num_threads(usize::from(t));
    }
    b.build()
        .context("cannot start worker threads")
        .map_err(internal)
}

/// Reads one result file (`-` is standard input); the format is detected unless given.
/// Detection looks at the first bytes, which are then replayed to the reader, so a pipe loses
/// nothing. Samples without a model name belong to a model named after the file stem.
fn read_input(
    path: &std::path::Path,
    input: &InputArgs,
) -> Result<(crate::analyze::Dataset, crate::analyze::Format), Failure> {
    use crate::analyze::read::lm_eval;
    use crate::analyze::{Format, Normalization, ReadOptions};
    use std::io::Read;
    if path.is_dir() {
        let options = ReadOptions {
            normalization: if input.no_normalize {
                Normalization::Off
            } else {
                Normalization::Standard
            },
            default_model: file_stem(path),
            filter: input.filter.clone(),
            metric: input.metric.clone(),
            ..ReadOptions::default()
        };
        let dataset = lm_eval::read_output_dir(path, &options).map_err(bad_input)?;
        return Ok((dataset, Format::LmEval));
    }
    let source = if is_stdin(path) {
        "<stdin>".to_string()
    } else {
        path.display().to_string()
    };
    let mut raw: Box<dyn Read> = if is_stdin(path) {
        Box::new(std::io::stdin())
    } else {
        Box::new(
            std::fs::File::open(path)
                .with_context(|| format!("cannot read {source}"))
                .map_err(bad_input)?,
        )
    };
    let mut head = Vec::new();
    (&mut raw)
        .take(crate::analyze::DETECT_BYTES as u64)
        .read_to_end(&mut head)
        .with_context(|| format!("cannot read {source}"))
        .map_err(bad_input)?;
    let format = match input.format {
        FormatArg::Jsonl => Format::Jsonl,
        FormatArg::Csv => Format::Csv,
        FormatArg::HumanEval => Format::HumanEval,
        FormatArg::LmEval => Format::LmEval,
        FormatArg::Inspect => Format::Inspect,
        FormatArg::Auto => crate::analyze::detect_format_bytes(&source, &head),
    };
    let mut options = ReadOptions {
        normalization: if input.no_normalize {
            Normalization::Off
        } else {
            Normalization::Standard
        },
        default_model: file_stem(path),
        filter: input.filter.clone(),
        scorer: input.scorer.clone(),
        score_key: input.score_key.clone(),
        metric: input.metric.clone(),
        cluster: None,
    };
    // An lm-eval samples file: the run's results_*.json beside it names the model and holds the
    // harness's aggregate.
    let sibling = (format == Format::LmEval && !is_stdin(path))
        .then(|| lm_eval::sibling_results(path))
        .flatten();
    let results = match &sibling {
        Some((r, _)) => Some(lm_eval::read_results(r).map_err(bad_input)?),
        None => None,
    };
    if let Some(model) = results.as_ref().and_then(|r| r.model.clone()) {
        options.default_model = model;
    }
    let mut reader =
        std::io::BufReader::with_capacity(1 << 20, std::io::Cursor::new(head).chain(raw));
    let mut dataset =
        crate::analyze::read_samples(format, &mut reader, &source, &options).map_err(bad_input)?;
    if let (Some(r), Some((_, task))) = (&results, &sibling) {
        lm_eval::attach_aggregate(r, std::slice::from_ref(task), &mut dataset);
    }
    for w in &dataset.harness.warnings {
        eprintln!("warning: {w}");
    }
    Ok((dataset, format))
}

fn analyze_command(a: &AnalyzeArgs) -> Result<u8, Failure> {
    use crate::analyze::{AnalysisOptions, MajRule, SummaryOptions};
    let c = &a.common;
    if let Some(cap) = a.cap {
        if !(cap.is_finite() && cap > 0.0) {
            return Err(bad_input(anyhow::anyhow!(
                "--cap: must be a finite number of tokens > 0, got {cap}"
            )));
        }
    }
    let pool = worker_pool(c.threads)?;
    let mut inputs = Vec::new();
    for f in &a.files {
        inputs.push(read_input(f, &a.input)?);
    }
    let options = AnalysisOptions {
        summary: SummaryOptions {
            ks: a
                .k
                .as_ref()
                .map(|ks| ks.iter().map(|&k| k as usize).collect()),
            maj_rule: match a.rule {
                RuleArg::Random => MajRule::Random,
                RuleArg::Strict => MajRule::Strict,
                RuleArg::Absolute => MajRule::Absolute,
                RuleArg::First => MajRule::First,
            },
            token_cap: a.cap,
            bootstrap: a.bootstrap,
            seed: c.seed.unwrap_or(1),
            ..SummaryOptions::default()
        },
        compare: a.compare,
        reruns: usize::try_from(a.reruns)
            .map_err(|e| bad_input(anyhow::anyhow!("--reruns: {e}")))?,
    };
    let analysis = pool
        .install(|| crate::analyze::analyze(inputs, &options))
        .map_err(bad_input)?;
    for w in analysis.sources.iter().flat_map(|s| &s.mismatches) {
        eprintln!("warning: {w}");
    }
    let out_dir = c.out.clone().unwrap_or_else(|| {
        let stems: Vec<String> = a.files.iter().map(|f| input_folder_name(f)).collect();
        let name = if a.compare && stems.len() == 2 {
            format!("analyze-{}-vs-{}", stems[0], stems[1])
        } else {
            format!("analyze-{}", stems[0])
        };
        PathBuf::from("out").join(name)
    });
    let artifacts =
        report::analyze::analysis_artifacts(&analysis, !a.no_figures).map_err(internal)?;
    report::write_artifacts(&out_dir, &artifacts).map_err(bad_input)?;
    if !c.quiet {
        print!("{}", report::analyze::analysis_text(&analysis));
        println!("wrote {} files to {}", artifacts.len(), out_dir.display());
    }
    Ok(EXIT_OK)
}

fn fit_command(a: &FitArgs) -> Result<u8, Failure> {
    use crate::analyze::FitOptions;
    let c = &a.common;
    let pool = worker_pool(c.threads)?;
    let (dataset, _) = read_input(&a.file, &a.input)?;
    let model = match &a.model {
        Some(name) => dataset.model(name).map_err(bad_input)?,
        None if dataset.models.len() == 1 => &dataset.models[0],
        None => {
            let names: Vec<String> = dataset
                .models
                .iter()
                .map(|m| format!("`{}`", m.name))
                .collect();
            return Err(bad_input(anyhow::anyhow!(
                "{}: holds {} models ({}); choose one with --model NAME",
                dataset.source,
                names.len(),
                names.join(", ")
            )));
        }
    };
    let seed = c.seed.unwrap_or(1);
    let source = a.file.file_name().map_or_else(
        || dataset.source.clone(),
        |s| s.to_string_lossy().into_owned(),
    );
    let fit = pool
        .install(|| {
            crate::analyze::fit_model(
                model,
                &source,
                &FitOptions {
                    seed,
                    ..FitOptions::default()
                },
            )
        })
        .map_err(bad_input)?;
    let out_dir = c.out.clone().unwrap_or_else(|| {
        PathBuf::from("out").join(format!("fit-{}", input_folder_name(&a.file)))
    });
    let artifacts = report::analyze::fit_artifacts(&fit, &dataset.source, seed, !a.no_figures)
        .map_err(internal)?;
    report::write_artifacts(&out_dir, &artifacts).map_err(bad_input)?;
    // The scenario goes to stdout even with --quiet: it is the command's output.
    print!("{}", fit.scenario_toml);
    if !c.quiet {
        eprintln!(
            "fit `{}`: mu {:.3}, sigma {:.3}{}; wrote {} files to {}",
            fit.model,
            fit.logit_normal.mu,
            fit.logit_normal.sigma,
            fit.attractor.as_ref().map_or(String::new(), |at| format!(
                ", attractor share {:.3}",
                at.share
            )),
            artifacts.len(),
            out_dir.display()
        );
    }
    Ok(EXIT_OK)
}
