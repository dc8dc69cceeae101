//! `evalsim run` and `evalsim check`: read -> resolve -> run -> report -> write.
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use super::{
    bad_input, folder_name, printable, progress_bar, say, stop_if_interrupted, tell, write_failure,
    CommonArgs, Failure, EXIT_CHECK_FAILED, EXIT_INTERNAL, EXIT_OK,
};
use crate::experiments::{self, RunOutput, Z_BOUND};
use crate::interrupt;
use crate::report::{self, Options};
use crate::scenario::{Scenario, ScenarioError};

/// Flags of `evalsim run` and `evalsim check`.
#[derive(Debug, Args)]
pub(super) struct RunArgs {
    /// A named scenario (see `evalsim list`) or a path to a scenario .toml file
    pub(super) scenario: String,
    /// Skip the PNG and SVG figures (tables, checks and report only)
    #[arg(long)]
    pub(super) no_figures: bool,
    #[command(flatten)]
    pub(super) common: CommonArgs,
}

/// Runs a scenario; `check_only` writes at most checks.csv.
pub(super) fn run_scenario(a: &RunArgs, check_only: bool) -> Result<u8, Failure> {
    let c = &a.common;
    interrupt::install()
        .context("cannot install the SIGINT/SIGTERM handler")
        .map_err(|e| Failure {
            code: EXIT_INTERNAL,
            error: e,
        })?;
    let scenario = runnable(
        Scenario::load_seeded(&a.scenario, c.seed).map_err(|e: ScenarioError| bad_input(e))?,
    )?;
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
    let output = simulate(&scenario, c.threads, c.quiet)?;
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
                    figures: a.common.figures(a.no_figures),
                },
            )
            .map_err(|e| Failure {
                code: EXIT_INTERNAL,
                error: e.into(),
            })?;
            stop_if_interrupted("while rendering; nothing was written")?;
            out_dir.write(&artifacts).map_err(write_failure)?;
            if !c.quiet {
                say(&report::summary::headline_text(&report::summary::summary(
                    &output,
                )))?;
                say(&format!(
                    "{}: wrote {} files to {}\n",
                    scenario.name,
                    artifacts.len(),
                    crate::text::path_shown(out_dir.path())
                ))?;
            }
        }
    }
    if !c.quiet {
        let max_z = checks
            .iter()
            .map(|c| c.estimate.z.abs())
            .fold(0.0, f64::max);
        say(&format!(
            "checks: {} of {} passed (|z| <= {Z_BOUND}, or Bernstein's bound for counts; largest |z| = {max_z:.2}), seed {}\n",
            checks.len() - failed.len(),
            checks.len(),
            scenario.seed
        ))?;
    }
    for f in &failed {
        tell(&format!(
            "check failed: {} {} [{}]: exact {} sim {} se {} z {:.2}\n",
            f.experiment,
            f.quantity,
            f.cell,
            f.estimate.exact,
            f.estimate.sim,
            f.estimate.se,
            f.estimate.z
        ));
    }
    Ok(if failed.is_empty() {
        EXIT_OK
    } else {
        EXIT_CHECK_FAILED
    })
}

/// The scenario, unless it has no experiment (nothing to run).
pub(super) fn runnable(scenario: Scenario) -> Result<Scenario, Failure> {
    if scenario.experiments.is_empty() {
        return Err(bad_input(anyhow::anyhow!(
            "{}: no [[experiment]] given: nothing to run (add one, e.g. [[experiment]] kind = \"curves\"; kinds: curves, attractor-sweep, seed-variance, vote-spread, head-to-head, budget, cost, plan)",
            scenario.source
        )));
    }
    Ok(scenario)
}

/// Runs every experiment of the scenario on `threads` worker threads (one per core by
/// default), with a progress bar on a terminal unless `quiet`; an interruption is an error.
pub(super) fn simulate(
    scenario: &Scenario,
    threads: Option<u16>,
    quiet: bool,
) -> Result<RunOutput, Failure> {
    let pool = super::worker_pool(threads)?;
    let total: u64 = (0..scenario.experiments.len())
        .map(|i| experiments::planned_draws(scenario, i))
        .sum();
    // The exact parts of plans first (they report no progress), then the bar over the rest, so
    // that its time estimate sees only work it counts.
    let prepared = pool.install(|| experiments::prepare(scenario));
    let pb = progress_bar(total, quiet);
    pb.set_message(printable(&format!(
        "{} (seed {})",
        scenario.name, scenario.seed
    )));
    let tick = |n: u64| pb.inc(n);
    let output: RunOutput = pool.install(|| experiments::run_prepared(scenario, prepared, &tick));
    pb.finish_and_clear();
    stop_if_interrupted("while simulating; nothing was written")?;
    Ok(output)
}
