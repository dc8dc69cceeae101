//! `evalsim fit`: a scenario fitted jointly to every model of one or more result files,
//! printed as TOML.
use std::path::PathBuf;

use clap::Args;

use super::analyze::{input_folder_name, read_input, InputArgs};
use super::{bad_input, internal, progress_bar, worker_pool, CommonArgs, Failure, EXIT_OK};
use crate::report;

#[derive(Debug, Args)]
pub(super) struct FitArgs {
    /// Result files (one row per sample); models are combined by name across files
    #[arg(value_name = "FILE", required = true, num_args = 1..)]
    pub(super) files: Vec<PathBuf>,
    /// Fit only this model (repeatable; the first named is the reference)
    #[arg(long, value_name = "NAME")]
    pub(super) model: Vec<String>,
    /// Skip the PNG and SVG figures
    #[arg(long)]
    pub(super) no_figures: bool,
    #[command(flatten)]
    pub(super) input: InputArgs,
    #[command(flatten)]
    pub(super) common: CommonArgs,
}

/// Fits a scenario: read -> combine -> fit -> print and write.
pub(super) fn fit_command(a: &FitArgs) -> Result<u8, Failure> {
    let c = &a.common;
    let mut datasets = Vec::new();
    for f in &a.files {
        datasets.push(read_input(f, &a.input)?.0);
    }
    let fit = estimate(a, datasets)?;
    let seed = c.seed.unwrap_or(1);
    let out_dir = c.out.clone().unwrap_or_else(|| {
        PathBuf::from("out").join(format!("fit-{}", input_folder_name(&a.files[0])))
    });
    let artifacts = report::analyze::fit_artifacts(&fit, seed, a.common.figures(a.no_figures))
        .map_err(internal)?;
    report::write_artifacts(&out_dir, &artifacts).map_err(bad_input)?;
    // The scenario goes to stdout even with --quiet: it is the command's output.
    super::say(&fit.scenario_toml)?;
    if c.quiet {
        super::tell(&report::analyze::fit_warnings(&fit));
    } else {
        super::tell(&report::analyze::fit_text(&fit));
        super::tell(&format!(
            "wrote {} files to {}\n",
            artifacts.len(),
            crate::text::path_shown(&out_dir)
        ));
    }
    Ok(EXIT_OK)
}

/// The fit the flags ask for of datasets already read (one per file), on the worker pool of
/// `--threads`: models combined by name across files, the source named by the file names.
pub(super) fn estimate(
    a: &FitArgs,
    datasets: Vec<crate::analyze::Dataset>,
) -> Result<crate::analyze::FitResult, Failure> {
    use crate::analyze::FitOptions;
    let c = &a.common;
    let pool = worker_pool(c.threads)?;
    let models = crate::analyze::combine_models(datasets, &a.model).map_err(bad_input)?;
    let seed = c.seed.unwrap_or(1);
    let source = a
        .files
        .iter()
        .map(|f| {
            f.file_name().map_or_else(
                || crate::text::path_shown(f),
                |s| s.to_string_lossy().into_owned(),
            )
        })
        .collect::<Vec<_>>()
        .join(" + ");
    let refs: Vec<&crate::analyze::ModelSamples> = models.iter().collect();
    // a bar on a terminal, shown once the fit has run for a second: work in evaluations of the
    // likelihood against their predicted total (`FitEta`), so its ETA is that of the fit
    let bar = std::sync::OnceLock::new();
    let eta = crate::analyze::fit::progress::FitEta::new();
    let clock = std::time::Instant::now();
    let observe = |e| {
        let (done, total) = eta.observe(e);
        if clock.elapsed().as_secs_f64() >= 1.0 {
            let pb = bar.get_or_init(|| {
                let pb = progress_bar(1, c.quiet);
                pb.set_message("fit");
                pb
            });
            pb.set_length(total as u64);
            pb.set_position(done as u64);
        }
    };
    let out = pool
        .install(|| {
            crate::analyze::fit::fit_models_observed(
                &refs,
                &source,
                &FitOptions {
                    seed,
                    ..FitOptions::default()
                },
                &observe,
            )
        })
        .map_err(bad_input);
    if let Some(pb) = bar.get() {
        pb.finish_and_clear();
    }
    out
}
