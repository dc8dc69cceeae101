//! `evalsim sweep`: the scenario's raw form edited per grid cell, each cell resolved and run
//! (optionally one shard of the cells), then report -> write.
use std::path::{Path, PathBuf};

use anyhow::anyhow;
use clap::Args;

use super::{
    bad_input, install_interrupt, internal, progress_bar, stop_if_interrupted, worker_pool,
    write_failure, CommonArgs, Failure, EXIT_CHECK_FAILED, EXIT_OK,
};
use crate::experiments::sweep::{
    prepare, quantity_names, run_cells, Sweep, SweepError, SweepOutput,
};
use crate::experiments::Z_BOUND;
use crate::report;
use crate::scenario::grid::parse_set;
use crate::scenario::read_source;

fn bad(msg: String) -> Failure {
    bad_input(anyhow!(msg))
}

/// Flags of `evalsim sweep`.
#[derive(Debug, Args)]
pub(super) struct SweepArgs {
    /// A named scenario or a path to a scenario .toml file
    scenario: String,
    /// PATH=VALUES: a numeric field and its values, a list (0,0.5,1) or a range (0:1:0.1); repeat for a grid
    #[arg(long = "set", value_name = "PATH=VALUES", required = true)]
    sets: Vec<String>,
    /// Run only cells with index % N == I and write shard-I-of-N.json (I/N, 0-based), or `auto`
    /// from SLURM_ARRAY_TASK_ID/COUNT, JOB_COMPLETION_INDEX (+ --shard-count) or
    /// AWS_BATCH_JOB_ARRAY_INDEX/SIZE
    #[arg(long, value_name = "I/N|auto")]
    shard: Option<String>,
    /// Number of shards for `--shard auto` under Kubernetes (JOB_COMPLETION_INDEX)
    #[arg(long, value_name = "N")]
    shard_count: Option<usize>,
    /// Skip the PNG and SVG figures
    #[arg(long)]
    no_figures: bool,
    /// Quantities drawn in the figures, comma-separated (e.g. maj@k,seed sd, or
    /// EXPERIMENT:QUANTITY); default: those that change across the grid
    #[arg(long, value_name = "QUANTITY,...")]
    plot: Option<String>,
    #[command(flatten)]
    pub(super) common: CommonArgs,
}

/// Reads the shard from the environment of a batch scheduler.
pub fn shard_from_env(
    get: impl Fn(&str) -> Option<String>,
    shard_count: Option<usize>,
) -> Result<(usize, usize), String> {
    let num = |name: &str| -> Result<Option<usize>, String> {
        match get(name) {
            None => Ok(None),
            Some(v) => v
                .trim()
                .parse()
                .map(Some)
                .map_err(|_| format!("{name}={v} is not a whole number")),
        }
    };
    let (i, n, from) = if let Some(id) = num("SLURM_ARRAY_TASK_ID")? {
        let n = num("SLURM_ARRAY_TASK_COUNT")?
            .ok_or("SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not")?;
        let min = num("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
        (
            id.checked_sub(min)
                .ok_or("SLURM_ARRAY_TASK_ID is below SLURM_ARRAY_TASK_MIN")?,
            n,
            "Slurm",
        )
    } else if let Some(i) = num("JOB_COMPLETION_INDEX")? {
        let n = shard_count.ok_or(
            "JOB_COMPLETION_INDEX is set (a Kubernetes Indexed Job): give the number of shards with --shard-count N (the Job's completions)",
        )?;
        (i, n, "Kubernetes")
    } else if let Some(i) = num("AWS_BATCH_JOB_ARRAY_INDEX")? {
        let n = num("AWS_BATCH_JOB_ARRAY_SIZE")?
            .ok_or("AWS_BATCH_JOB_ARRAY_INDEX is set but AWS_BATCH_JOB_ARRAY_SIZE is not")?;
        (i, n, "AWS Batch")
    } else {
        return Err("--shard auto: no batch-scheduler array index found; set SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT (Slurm), JOB_COMPLETION_INDEX with --shard-count (Kubernetes Indexed Job), or AWS_BATCH_JOB_ARRAY_INDEX and AWS_BATCH_JOB_ARRAY_SIZE (AWS Batch), or give --shard I/N".into());
    };
    if n == 0 || i >= n {
        return Err(format!(
            "{from} shard index {i} is not below the shard count {n}"
        ));
    }
    Ok((i, n))
}

fn parse_shard(s: &str, count: Option<usize>) -> Result<(usize, usize), String> {
    if s == "auto" {
        return shard_from_env(|k| std::env::var(k).ok(), count);
    }
    let bad = || format!("--shard {s}: expected I/N with 0 <= I < N (0-based), or auto");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (usize, usize) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

pub(super) fn sweep(a: &SweepArgs) -> Result<u8, Failure> {
    let c = &a.common;
    install_interrupt()?;
    let shard = a
        .shard
        .as_deref()
        .map(|s| parse_shard(s, a.shard_count))
        .transpose()
        .map_err(bad)?;
    let sets = a
        .sets
        .iter()
        .map(|s| parse_set(s))
        .collect::<Result<Vec<_>, _>>()
        .map_err(bad_input)?;
    let src = read_source(&a.scenario).map_err(bad_input)?;
    // The scenario as written is checked first, so its errors name the lines of its own file.
    crate::scenario::Scenario::from_toml(&src.text, &src.name, &src.file).map_err(bad_input)?;
    let prepared = prepare(&src, &sets, c.seed).map_err(set_failure)?;
    let overridden = prepared
        .cells
        .first()
        .map(|(_, first)| overridden_sets(first, &sets))
        .unwrap_or_default();
    for (_, _, w) in &overridden {
        super::warn(w);
    }
    let indices: Vec<usize> = (0..prepared.cells.len())
        .filter(|i| shard.is_none_or_all(*i))
        .collect();
    if let Some(text) = &a.plot {
        check_plot_first(&prepared, &report::sweep::parse_plot(text))?;
    }
    let total: u64 = indices
        .iter()
        .map(|&i| {
            let s = &prepared.cells[i].1;
            (0..s.experiments.len())
                .map(|e| crate::experiments::planned_draws(s, e))
                .sum::<u64>()
        })
        .sum();
    let pool = worker_pool(c.threads)?;
    let pb = progress_bar(total, c.quiet);
    pb.set_message(format!("{} sweep ({} cells)", src.name, indices.len()));
    let tick = |n: u64| pb.inc(n);
    let cells = pool
        .install(|| run_cells(&prepared, &indices, &tick))
        .map_err(bad_input)?;
    pb.finish_and_clear();
    stop_if_interrupted("while simulating; nothing was written")?;
    let output = SweepOutput {
        manifest: prepared.manifest.clone(),
        shard: shard.map(|(i, n)| [i, n]),
        cells,
    };
    let out = c.out.clone().unwrap_or_else(|| {
        PathBuf::from("out").join(format!("{}-sweep", super::folder_name(&src.name)))
    });
    let artifacts = if shard.is_some() {
        vec![report::sweep::render_shard(&output).map_err(internal)?]
    } else {
        let said: Vec<(String, String)> = overridden.into_iter().map(|(e, f, _)| (e, f)).collect();
        for w in idle_field_warnings(&output, &said) {
            super::warn(&w);
        }
        render(&output, a.common.figures(a.no_figures), a.plot.as_deref())?
    };
    stop_if_interrupted("while rendering; nothing was written")?;
    report::write_artifacts(&out, &artifacts).map_err(write_failure)?;
    finish(&output, &artifacts, &out, c.quiet)
}

/// Swept keys an experiment sets itself (see `ExperimentSpec::sets_model_keys`): said before the
/// grid is computed, since sweeping them cannot change that experiment: (experiment, swept path,
/// warning) for each.
fn overridden_sets(
    s: &crate::scenario::Scenario,
    sets: &[crate::scenario::grid::SetArg],
) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for set in sets {
        let Some(rest) = set.path.strip_prefix("model.") else {
            continue;
        };
        for e in &s.experiments {
            for &mi in &e.spec.models() {
                let name = &s.models[mi].name;
                let Some(key) = rest
                    .strip_prefix(name.as_str())
                    .and_then(|k| k.strip_prefix('.'))
                else {
                    continue;
                };
                if e.spec.sets_model_keys().contains(&key) {
                    out.push((
                        e.name.clone(),
                        set.path.clone(),
                        format!(
                            "--set {}: experiment `{}` sets model `{name}`'s `{key}` itself, so sweeping it does not change that experiment (its figure leaves the field out)",
                            set.path, e.name
                        ),
                    ));
                }
            }
        }
    }
    out
}

/// Per experiment, the swept fields that changed none of its exact values, as warnings; the
/// (experiment, field) pairs in `said` were warned about already.
pub(super) fn idle_field_warnings(output: &SweepOutput, said: &[(String, String)]) -> Vec<String> {
    report::sweep::idle_fields(output)
        .into_iter()
        .filter_map(|(exp, fields)| {
            let fields: Vec<String> = fields
                .into_iter()
                .filter(|f| !said.contains(&(exp.clone(), f.clone())))
                .collect();
            (!fields.is_empty()).then_some((exp, fields))
        })
        .map(|(exp, fields)| {
            let list: Vec<String> = fields.iter().map(|f| format!("`{f}`")).collect();
            format!(
                "experiment `{exp}`: no exact value changes with {}; its figure holds {} at the first value",
                list.join(" or "),
                if fields.len() == 1 { "it" } else { "them" }
            )
        })
        .collect()
}

/// The tables and figures of a whole sweep (or merged shards), with the panels `--plot` names:
/// an unknown name is bad input listing the valid ones.
pub(super) fn render(
    output: &crate::experiments::sweep::SweepOutput,
    figures: Option<report::plot::Raster>,
    plot: Option<&str>,
) -> Result<Vec<report::Artifact>, Failure> {
    let plot = plot.map(report::sweep::parse_plot);
    if let Some(names) = &plot {
        report::sweep::check_plot_names(output, names).map_err(bad)?;
    }
    report::sweep::render_sweep_of(output, figures, plot.as_deref()).map_err(internal)
}

/// `--plot` checked before the grid is computed, against the quantities of a cheap probe run of
/// the first cell ([`quantity_names`]); only when a name is missing there are the other cells
/// probed too, so a quantity that only some cells report is accepted.
fn check_plot_first(prepared: &Sweep, wanted: &[String]) -> Result<(), Failure> {
    let mut pairs: Vec<(String, String)> = Vec::new();
    let mut verdict = Ok(());
    for index in 0..prepared.cells.len() {
        for pair in quantity_names(prepared, index).map_err(set_failure)? {
            if !pairs.contains(&pair) {
                pairs.push(pair);
            }
        }
        let valid =
            report::sweep::plot_names_of(pairs.iter().map(|(e, q)| (e.as_str(), q.as_str())));
        verdict = report::sweep::check_plot_names_in(&valid, wanted);
        if verdict.is_ok() || wanted.is_empty() {
            break;
        }
    }
    verdict.map_err(bad)
}

/// A sweep that cannot be prepared. A cell whose values the scenario rejects points at the
/// `--set` flags that made it (once), not at a line of the cell's generated TOML text.
fn set_failure(e: SweepError) -> Failure {
    use crate::scenario::ScenarioError;
    match e {
        SweepError::Cell {
            index,
            assignments,
            source,
        } => {
            let flags = assignments
                .split(", ")
                .map(|a| format!("--set {a}"))
                .collect::<Vec<_>>();
            let cell = if flags.len() > 1 {
                format!(" (grid cell {index})")
            } else {
                String::new()
            };
            let why = match source {
                ScenarioError::Invalid { key, message, .. } => format!("{key}: {message}"),
                other => other.to_string(),
            };
            bad(format!("{}{cell}: {why}", flags.join(" ")))
        }
        other => bad_input(other),
    }
}

trait ShardFilter {
    fn is_none_or_all(&self, index: usize) -> bool;
}

impl ShardFilter for Option<(usize, usize)> {
    fn is_none_or_all(&self, index: usize) -> bool {
        self.is_none_or(|(i, n)| index % n == i)
    }
}

/// Prints the sweep's summary line; the exit code says whether every check passed.
pub(super) fn finish(
    output: &SweepOutput,
    artifacts: &[report::Artifact],
    out: &Path,
    quiet: bool,
) -> Result<u8, Failure> {
    let checks: Vec<_> = output.cells.iter().flat_map(|c| &c.checks).collect();
    let failed = checks.iter().filter(|c| !c.passed()).count();
    if !quiet {
        super::say(&format!(
            "{}: {} cells, wrote {} files to {}; checks: {} of {} passed (|z| <= {Z_BOUND}, or Bernstein's bound for counts)\n",
            output.manifest.scenario,
            output.cells.len(),
            artifacts.len(),
            crate::text::path_shown(out),
            checks.len() - failed,
            checks.len()
        ))?;
    }
    Ok(if failed == 0 {
        EXIT_OK
    } else {
        EXIT_CHECK_FAILED
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_env_variants() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(a, _)| *a == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(
            shard_from_env(
                env(&[
                    ("SLURM_ARRAY_TASK_ID", "3"),
                    ("SLURM_ARRAY_TASK_COUNT", "4")
                ]),
                None
            ),
            Ok((3, 4))
        );
        assert_eq!(
            shard_from_env(
                env(&[
                    ("SLURM_ARRAY_TASK_ID", "4"),
                    ("SLURM_ARRAY_TASK_COUNT", "4"),
                    ("SLURM_ARRAY_TASK_MIN", "1")
                ]),
                None
            ),
            Ok((3, 4))
        );
        assert_eq!(
            shard_from_env(env(&[("JOB_COMPLETION_INDEX", "1")]), Some(2)),
            Ok((1, 2))
        );
        assert!(shard_from_env(env(&[("JOB_COMPLETION_INDEX", "1")]), None).is_err());
        assert_eq!(
            shard_from_env(
                env(&[
                    ("AWS_BATCH_JOB_ARRAY_INDEX", "0"),
                    ("AWS_BATCH_JOB_ARRAY_SIZE", "5")
                ]),
                None
            ),
            Ok((0, 5))
        );
        assert!(shard_from_env(env(&[]), None).is_err());
        assert!(parse_shard("2/2", None).is_err());
        assert_eq!(parse_shard("1/3", None), Ok((1, 3)));
    }
}
