//! `evalsim analyze`: read real samples (crate::analyze), estimate, report
//! (crate::report::analyze), write. Also the input flags and reader `fit` shares.
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use super::{bad_input, folder_name, internal, worker_pool, CommonArgs, Failure, EXIT_OK};
use crate::report;

/// Input format for `analyze` and `fit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum FormatArg {
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
pub(super) enum RuleArg {
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

/// Largest `--bootstrap` of `analyze`: the replicate means are kept (8 bytes per replicate and
/// reported point), so 100,000 replicates of a 128-k table take about 400 MB; the percentile
/// bootstrap is shown for comparison only and its Monte Carlo error at 2,000 is already small.
const MAX_BOOTSTRAP: u64 = 100_000;

/// Flags shared by `analyze` and `fit` about how to read the inputs.
#[derive(Debug, Args)]
pub(super) struct InputArgs {
    /// Input format
    #[arg(long, value_enum, default_value = "auto")]
    pub(super) format: FormatArg,
    /// Compare answers as raw strings (no whitespace, case or number normalisation)
    #[arg(long)]
    pub(super) no_normalize: bool,
    /// lm-eval: the filter whose `filtered_resps` hold the answers
    #[arg(long, value_name = "NAME")]
    pub(super) filter: Option<String>,
    /// inspect_ai: the scorer to read when samples carry several
    #[arg(long, value_name = "NAME")]
    pub(super) scorer: Option<String>,
    /// inspect_ai: the key of a dict-valued score
    #[arg(long, value_name = "KEY")]
    pub(super) score_key: Option<String>,
    /// lm-eval: the per-sample metric read for correctness (default: the only 0/1 metric the
    /// rows log; several need a choice)
    #[arg(long, value_name = "NAME")]
    pub(super) metric: Option<String>,
    /// inspect_ai: the key of each sample's `metadata` that names its cluster (clustered SEs
    /// and 95% intervals; canonical files use their `cluster` or `task` column, lm-eval folders
    /// their tasks)
    #[arg(long, value_name = "KEY")]
    pub(super) cluster: Option<String>,
}

#[derive(Debug, Args)]
pub(super) struct AnalyzeArgs {
    /// Result files (one row per sample)
    #[arg(required = true, value_name = "FILE")]
    pub(super) files: Vec<PathBuf>,
    /// k values, comma separated [default: every k up to the smallest n (powers of two above 128)]
    #[arg(long, value_name = "K,...", value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..))]
    pub(super) k: Option<Vec<u32>>,
    /// Paired comparison of two models (two files, or one file holding two models)
    #[arg(long)]
    pub(super) compare: bool,
    /// maj@k tie rule; `first` reports only the vote of the first k answers in file order
    #[arg(long, value_enum, default_value = "random")]
    pub(super) rule: RuleArg,
    /// Token cap for the truncation rate (share of samples with output_tokens >= TOKENS)
    #[arg(long, value_name = "TOKENS", allow_negative_numbers = true)]
    pub(super) cap: Option<f64>,
    /// Bootstrap resamples over problems for the percentile CIs shown for comparison (0 turns
    /// them off; at most 100000)
    #[arg(
        long,
        value_name = "N",
        default_value_t = 2000,
        value_parser = clap::value_parser!(u64).range(0..=MAX_BOOTSTRAP)
    )]
    pub(super) bootstrap: u64,
    /// With --compare: simulated reruns for the probability that a rerun reverses the order
    /// (0 turns it off; at most 100000000)
    #[arg(
        long,
        value_name = "N",
        requires = "compare",
        default_value_t = crate::analyze::ComparisonOptions::default().reruns as u64,
        value_parser = clap::value_parser!(u64).range(0..=MAX_RERUNS)
    )]
    pub(super) reruns: u64,
    /// Skip the PNG and SVG figures
    #[arg(long)]
    pub(super) no_figures: bool,
    #[command(flatten)]
    pub(super) input: InputArgs,
    #[command(flatten)]
    pub(super) common: CommonArgs,
}

/// The name of an input as used in the default output folder: the file name with its extension
/// (so `x.csv` and `x.jsonl` never share a folder), cleaned as [`folder_name`] cleans a scenario
/// stem; `stdin` for `-`.
pub(super) fn input_folder_name(path: &std::path::Path) -> String {
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

/// Reads one result file as [`read_input_quiet`] does and prints its warnings on stderr.
pub(super) fn read_input(
    path: &std::path::Path,
    input: &InputArgs,
) -> Result<(crate::analyze::Dataset, crate::analyze::Format), Failure> {
    let (dataset, format) = read_input_quiet(path, input)?;
    for w in &dataset.harness.warnings {
        super::warn(w);
    }
    Ok((dataset, format))
}

/// The reader options of the input flags; rows without a model name belong to `default_model`.
pub(super) fn read_options(
    input: &InputArgs,
    default_model: String,
) -> crate::analyze::ReadOptions {
    use crate::analyze::{Normalization, ReadOptions};
    ReadOptions {
        normalization: if input.no_normalize {
            Normalization::Off
        } else {
            Normalization::Standard
        },
        default_model,
        filter: input.filter.clone(),
        scorer: input.scorer.clone(),
        score_key: input.score_key.clone(),
        metric: input.metric.clone(),
        cluster: None,
        cluster_key: input.cluster.clone(),
    }
}

/// Reads one result file (`-` is standard input); the format is detected unless given.
/// Detection looks at the first bytes, which are then replayed to the reader, so a pipe loses
/// nothing. Samples without a model name belong to a model named after the file stem. The
/// readers' warnings stay in the dataset (`harness.warnings`).
pub(super) fn read_input_quiet(
    path: &std::path::Path,
    input: &InputArgs,
) -> Result<(crate::analyze::Dataset, crate::analyze::Format), Failure> {
    use crate::analyze::read::lm_eval;
    use crate::analyze::Format;
    use std::io::Read;
    let cluster_refused = || {
        bad_input(anyhow::anyhow!(
            "--cluster {}: names a key of the samples' metadata in an inspect_ai log, and {} is \
             not one; canonical files are clustered by their `cluster` (or `task`) column, an \
             lm-eval output folder by its tasks",
            input.cluster.as_deref().unwrap_or_default(),
            crate::text::path_shown(path)
        ))
    };
    if path.is_dir() {
        if input.cluster.is_some() {
            return Err(cluster_refused());
        }
        let options = crate::analyze::ReadOptions {
            scorer: None,
            score_key: None,
            cluster_key: None,
            ..read_options(input, file_stem(path))
        };
        let dataset = lm_eval::read_output_dir(path, &options).map_err(bad_input)?;
        return Ok((dataset, Format::LmEval));
    }
    let source = if is_stdin(path) {
        "<stdin>".to_string()
    } else {
        crate::text::path_shown(path)
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
    if input.cluster.is_some() && format != Format::Inspect {
        return Err(cluster_refused());
    }
    let mut options = read_options(input, file_stem(path));
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
    Ok((dataset, format))
}

/// Analyses result files: read -> estimate -> report -> write.
pub(super) fn analyze_command(a: &AnalyzeArgs) -> Result<u8, Failure> {
    let c = &a.common;
    check_cap(a)?;
    let mut inputs = Vec::new();
    for f in &a.files {
        inputs.push(read_input(f, &a.input)?);
    }
    let analysis = estimate(a, inputs)?;
    for w in analysis.sources.iter().flat_map(|s| &s.mismatches) {
        super::warn(w);
    }
    for w in analysis.models.iter().flat_map(|m| &m.summary.warnings) {
        super::warn(w);
    }
    for w in analysis.leaderboard.iter().flat_map(|b| &b.warnings) {
        super::warn(w);
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
    let artifacts = report::analyze::analysis_artifacts(&analysis, a.common.figures(a.no_figures))
        .map_err(internal)?;
    report::write_artifacts(&out_dir, &artifacts).map_err(bad_input)?;
    if !c.quiet {
        super::say(&report::analyze::analysis_text(&analysis))?;
        super::say(&format!(
            "wrote {} files to {}\n",
            artifacts.len(),
            crate::text::path_shown(&out_dir)
        ))?;
    }
    Ok(EXIT_OK)
}

/// `--cap` is a finite number of tokens > 0 (checked before any file is read).
pub(super) fn check_cap(a: &AnalyzeArgs) -> Result<(), Failure> {
    match a.cap {
        Some(cap) if !(cap.is_finite() && cap > 0.0) => Err(bad_input(anyhow::anyhow!(
            "--cap: must be a finite number of tokens > 0, got {cap}"
        ))),
        _ => Ok(()),
    }
}

/// The analysis the flags ask for of inputs already read, on the worker pool of `--threads`.
pub(super) fn estimate(
    a: &AnalyzeArgs,
    inputs: Vec<(crate::analyze::Dataset, crate::analyze::Format)>,
) -> Result<crate::analyze::Analysis, Failure> {
    use crate::analyze::{AnalysisOptions, MajRule, SummaryOptions};
    let c = &a.common;
    check_cap(a)?;
    let pool = worker_pool(c.threads)?;
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
            bootstrap: usize::try_from(a.bootstrap)
                .map_err(|e| bad_input(anyhow::anyhow!("--bootstrap: {e}")))?,
            seed: c.seed.unwrap_or(1),
            ..SummaryOptions::default()
        },
        compare: a.compare,
        reruns: usize::try_from(a.reruns)
            .map_err(|e| bad_input(anyhow::anyhow!("--reruns: {e}")))?,
    };
    pool.install(|| crate::analyze::analyze(inputs, &options))
        .map_err(bad_input)
}
