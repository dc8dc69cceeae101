//! `evalsim fit`: a scenario fitted to real samples, printed as TOML.
use std::path::PathBuf;

use clap::Args;

use super::analyze::{input_folder_name, read_input, InputArgs};
use super::{bad_input, internal, worker_pool, CommonArgs, Failure, EXIT_OK};
use crate::report;

#[derive(Debug, Args)]
pub(super) struct FitArgs {
    /// Result file (one row per sample)
    #[arg(value_name = "FILE")]
    pub(super) file: PathBuf,
    /// The model to fit when the file holds several
    #[arg(long, value_name = "NAME")]
    pub(super) model: Option<String>,
    /// Skip the PNG and SVG figure
    #[arg(long)]
    pub(super) no_figures: bool,
    #[command(flatten)]
    pub(super) input: InputArgs,
    #[command(flatten)]
    pub(super) common: CommonArgs,
}

/// Fits a scenario: read -> fit -> print and write.
pub(super) fn fit_command(a: &FitArgs) -> Result<u8, Failure> {
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
