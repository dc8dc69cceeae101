//! `evalsim plan`, `evalsim sweep` and `evalsim merge`.
use std::path::{Path, PathBuf};

use anyhow::anyhow;
use clap::Args;

use super::{
    bad_input, progress_bar, CommonArgs, Failure, EXIT_CHECK_FAILED, EXIT_INTERNAL, EXIT_OK,
};
use crate::exact::plan::gap_logits_for_points;
use crate::experiments::plan::{run_plan, CheckCells, Metric, Plan, PlanSpec};
use crate::experiments::sweep::{merge_shards, prepare, run_cells, SweepError, SweepOutput};
use crate::experiments::Z_BOUND;
use crate::model::VoteRule;
use crate::report;
use crate::scenario::grid::parse_set;
use crate::scenario::read_source;

fn internal(e: impl Into<anyhow::Error>) -> Failure {
    Failure {
        code: EXIT_INTERNAL,
        error: e.into(),
    }
}

fn pool(threads: Option<u16>) -> Result<rayon::ThreadPool, Failure> {
    let mut b = rayon::ThreadPoolBuilder::new();
    if let Some(t) = threads {
        b = b.num_threads(usize::from(t));
    }
    b.build().map_err(internal)
}

/// Flags of `evalsim plan`.
#[derive(Debug, Args)]
pub(super) struct PlanArgs {
    /// Logit mean of the problem population
    #[arg(long, default_value_t = 0.2, allow_negative_numbers = true)]
    mu: f64,
    /// Logit SD of the problem population (> 0)
    #[arg(long, default_value_t = 2.2)]
    sigma: f64,
    /// B's advantage in logits (a list: 0.05,0.1,0.21,0.4) [default: 0.21]
    #[arg(
        long,
        value_delimiter = ',',
        conflicts_with = "gap_points",
        allow_negative_numbers = true
    )]
    gap_logits: Vec<f64>,
    /// B's advantage in points of population pass@1 (a list), converted to logits
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true)]
    gap_points: Vec<f64>,
    /// The score: pass1 (pass@1 averaged over the n samples of each problem) or maj (maj@k: one
    /// majority vote of k samples per problem; needs --k and --attractor)
    #[arg(long, default_value = "pass1")]
    metric: String,
    /// Candidate numbers of problems N
    #[arg(long, value_delimiter = ',', default_value = "30,100,300,1000")]
    problems: Vec<usize>,
    /// Candidate samples per problem n (pass1) [default: 1,4,16,64]
    #[arg(long, value_delimiter = ',')]
    samples: Vec<u32>,
    /// Candidate samples per vote k (--metric maj: the grid's second axis, in place of --samples)
    #[arg(long, value_delimiter = ',')]
    k: Vec<u32>,
    /// Share of wrong answers on the one repeated attractor answer, in [0, 1] (--metric maj)
    #[arg(long)]
    attractor: Option<f64>,
    /// How a vote's ties are scored: random, strict or absolute (--metric maj) [default: random]
    #[arg(long)]
    rule: Option<String>,
    /// Largest acceptable probability that B scores <= A in one rerun
    #[arg(long, default_value_t = 0.05)]
    target_loss_or_tie: f64,
    /// Largest acceptable 95% CI half-width of the difference, as a fraction (0.02 = 2 points)
    #[arg(long, default_value_t = 0.02)]
    target_halfwidth: f64,
    /// Simulated paired reruns per checked cell (0: no simulation)
    #[arg(long, default_value_t = 20_000)]
    simulate_reruns: u64,
    /// (gap, N, n) cells to simulate in the fixed design: all, none, or a number spread over the
    /// grid
    #[arg(long, default_value = "all")]
    check_cells: String,
    /// (gap, N, n) cells to simulate in each population design (problems redrawn every rerun):
    /// all, none, or a number spread over the grid
    #[arg(long, default_value = "4")]
    check_population: String,
    /// Skip the PNG and SVG figures
    #[arg(long)]
    no_figures: bool,
    #[command(flatten)]
    pub(super) common: CommonArgs,
}

fn bad(msg: String) -> Failure {
    bad_input(anyhow!(msg))
}

impl PlanArgs {
    fn spec(&self) -> Result<Plan, Failure> {
        let metric = self.metric()?;
        if !self.mu.is_finite() {
            return Err(bad(format!("--mu {}: must be a finite number", self.mu)));
        }
        if !(self.sigma.is_finite() && self.sigma > 0.0) {
            return Err(bad(format!(
                "--sigma {}: must be a finite number > 0",
                self.sigma
            )));
        }
        let gaps = if !self.gap_points.is_empty() {
            self.gap_points
                .iter()
                .map(|&p| {
                    gap_logits_for_points(self.mu, self.sigma, p)
                        .map_err(|e| bad(format!("--gap-points {p}: {e}")))
                })
                .collect::<Result<Vec<_>, _>>()?
        } else if self.gap_logits.is_empty() {
            vec![0.21]
        } else {
            self.gap_logits.clone()
        };
        if let Some(g) = gaps.iter().find(|g| !g.is_finite() || g.abs() > 40.0) {
            return Err(bad(format!(
                "--gap-logits {g}: must be a number between -40 and 40"
            )));
        }
        let limit = |name: &str, v: &[u64], max: u64| -> Result<(), Failure> {
            if v.is_empty() || v.len() > 64 {
                return Err(bad(format!("--{name}: give 1 to 64 values")));
            }
            if let Some(x) = v.iter().find(|&&x| x == 0 || x > max) {
                return Err(bad(format!(
                    "--{name} {x}: every value must be between 1 and {max}"
                )));
            }
            if v.windows(2).any(|w| w[0] >= w[1]) {
                return Err(bad(format!("--{name}: values must be strictly increasing")));
            }
            Ok(())
        };
        limit(
            "problems",
            &self.problems.iter().map(|&x| x as u64).collect::<Vec<_>>(),
            crate::scenario::MAX_PROBLEMS,
        )?;
        let (axis, samples, max) = match metric {
            Metric::Pass1 => (
                "samples",
                if self.samples.is_empty() {
                    vec![1, 4, 16, 64]
                } else {
                    self.samples.clone()
                },
                4096,
            ),
            Metric::Maj { .. } => ("k", self.k.clone(), crate::scenario::MAX_K),
        };
        limit(
            axis,
            &samples.iter().map(|&x| u64::from(x)).collect::<Vec<_>>(),
            max,
        )?;
        for (name, v) in [
            ("target-loss-or-tie", self.target_loss_or_tie),
            ("target-halfwidth", self.target_halfwidth),
        ] {
            if !(v > 0.0 && v < 1.0) {
                return Err(bad(format!("--{name} {v}: must be a fraction in (0, 1)")));
            }
        }
        if self.simulate_reruns > crate::scenario::MAX_DRAWS {
            return Err(bad(format!(
                "--simulate-reruns {}: at most {}",
                self.simulate_reruns,
                crate::scenario::MAX_DRAWS
            )));
        }
        let cells = |flag: &str, v: &str| -> Result<CheckCells, Failure> {
            match v {
                "all" => Ok(CheckCells::All),
                "none" => Ok(CheckCells::None),
                s => s.parse().map(CheckCells::Count).map_err(|_| {
                    bad(format!(
                        "--{flag} {s}: expected all, none or a number of cells"
                    ))
                }),
            }
        };
        let check_cells = cells("check-cells", &self.check_cells)?;
        let check_population = cells("check-population", &self.check_population)?;
        let spec = PlanSpec {
            mu: self.mu,
            sigma: self.sigma,
            gaps,
            problems: self.problems.clone(),
            samples,
            target_loss_or_tie: self.target_loss_or_tie,
            target_halfwidth: self.target_halfwidth,
            reruns: self.simulate_reruns,
            check_cells,
            seed: self.common.seed.unwrap_or(20_240_601),
        };
        let spec = Plan {
            spec,
            metric,
            check_population,
        };
        let draws = spec.simulated_draws();
        if draws > crate::scenario::MAX_TOTAL_VOTES {
            return Err(bad(format!(
                "--simulate-reruns {}: the checked cells (--check-cells, and --check-population in both population designs) x 2 models x their N problems x {} reruns = {draws} simulated draws: at most {}; lower --simulate-reruns, --check-cells or --check-population",
                self.simulate_reruns,
                self.simulate_reruns,
                crate::scenario::MAX_TOTAL_VOTES
            )));
        }
        Ok(spec)
    }

    fn metric(&self) -> Result<Metric, Failure> {
        match self.metric.as_str() {
            "pass1" => {
                for (flag, given) in [
                    ("--k", !self.k.is_empty()),
                    ("--attractor", self.attractor.is_some()),
                    ("--rule", self.rule.is_some()),
                ] {
                    if given {
                        return Err(bad(format!(
                            "{flag}: only with --metric maj (with --metric pass1 the grid's second axis is --samples)"
                        )));
                    }
                }
                Ok(Metric::Pass1)
            }
            "maj" => {
                if !self.samples.is_empty() {
                    return Err(bad("--samples: with --metric maj the grid's second axis is --k, the samples per vote (one vote per problem per rerun); give --k instead".into()));
                }
                if self.k.is_empty() {
                    return Err(bad(
                        "--metric maj needs --k: the samples per vote to plan for (a list, e.g. 1,4,16,64)".into(),
                    ));
                }
                let attractor = self.attractor.ok_or_else(|| {
                    bad("--metric maj needs --attractor A: the share of wrong answers on the one repeated attractor answer, in [0, 1]".into())
                })?;
                if !(0.0..=1.0).contains(&attractor) {
                    return Err(bad(format!(
                        "--attractor {attractor}: must be a share in [0, 1]"
                    )));
                }
                let rule = match self.rule.as_deref() {
                    None | Some("random") => VoteRule::Random,
                    Some("strict") => VoteRule::Strict,
                    Some("absolute") => VoteRule::Absolute,
                    Some(r) => {
                        return Err(bad(format!(
                            "--rule {r}: expected random, strict or absolute"
                        )))
                    }
                };
                Ok(Metric::Maj { attractor, rule })
            }
            m => Err(bad(format!(
                "--metric {m}: expected pass1 (pass@1 averaged over n samples) or maj (maj@k, with --k and --attractor)"
            ))),
        }
    }
}

pub(super) fn plan(a: &PlanArgs) -> Result<u8, Failure> {
    let c = &a.common;
    let spec = a.spec()?;
    let pool = pool(c.threads)?;
    let pb = progress_bar(spec.planned_reruns(), c.quiet);
    pb.set_message("plan");
    let tick = |n: u64| pb.inc(n);
    let (result, timing) = pool.install(|| run_plan(&spec, "plan", &tick));
    pb.finish_and_clear();
    let artifacts = report::planning::render_plan(&result, !a.no_figures).map_err(internal)?;
    let out = c.out.clone().unwrap_or_else(|| PathBuf::from("out/plan"));
    report::write_artifacts(&out, &artifacts).map_err(bad_input)?;
    let checks = result.checks();
    let failed: Vec<_> = checks.iter().filter(|c| !c.passed()).collect();
    if !c.quiet {
        print!("{}", report::planning::paragraph(&result));
        let sim_s = timing.simulated_s.max(1e-9);
        println!(
            "exact: {} cells in {:.3} s; simulated: {} binomial counts in {:.2} s ({:.2e} counts/s; pass@1 pairs are drawn as one difference per problem); checks: {} of {} passed (|z| <= {Z_BOUND}, or Bernstein's bound for counts); wrote {} files to {}",
            timing.exact_cells,
            timing.exact_s,
            result.draws,
            sim_s,
            result.draws as f64 / sim_s,
            checks.len() - failed.len(),
            checks.len(),
            artifacts.len(),
            out.display()
        );
    }
    for f in &failed {
        eprintln!(
            "check failed: plan {} [{}]: exact {} sim {} se {} z {:.2}",
            f.quantity, f.cell, f.estimate.exact, f.estimate.sim, f.estimate.se, f.estimate.z
        );
    }
    Ok(if failed.is_empty() {
        EXIT_OK
    } else {
        EXIT_CHECK_FAILED
    })
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
    let indices: Vec<usize> = (0..prepared.cells.len())
        .filter(|i| shard.is_none_or_all(*i))
        .collect();
    let total: u64 = indices
        .iter()
        .map(|&i| {
            let s = &prepared.cells[i].1;
            (0..s.experiments.len())
                .map(|e| crate::experiments::planned_draws(s, e))
                .sum::<u64>()
        })
        .sum();
    let pool = pool(c.threads)?;
    let pb = progress_bar(total, c.quiet);
    pb.set_message(format!("{} sweep ({} cells)", src.name, indices.len()));
    let tick = |n: u64| pb.inc(n);
    let cells = pool
        .install(|| run_cells(&prepared, &indices, &tick))
        .map_err(bad_input)?;
    pb.finish_and_clear();
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
        report::sweep::render_sweep(&output, !a.no_figures).map_err(internal)?
    };
    report::write_artifacts(&out, &artifacts).map_err(bad_input)?;
    finish(&output, &artifacts, &out, c.quiet)
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

fn finish(
    output: &SweepOutput,
    artifacts: &[report::Artifact],
    out: &Path,
    quiet: bool,
) -> Result<u8, Failure> {
    let checks: Vec<_> = output.cells.iter().flat_map(|c| &c.checks).collect();
    let failed = checks.iter().filter(|c| !c.passed()).count();
    if !quiet {
        println!(
            "{}: {} cells, wrote {} files to {}; checks: {} of {} passed (|z| <= {Z_BOUND}, or Bernstein's bound for counts)",
            output.manifest.scenario,
            output.cells.len(),
            artifacts.len(),
            out.display(),
            checks.len() - failed,
            checks.len()
        );
    }
    Ok(if failed == 0 {
        EXIT_OK
    } else {
        EXIT_CHECK_FAILED
    })
}

/// Flags of `evalsim merge`.
#[derive(Debug, Args)]
pub(super) struct MergeArgs {
    /// Folder holding the shard-I-of-N.json files of one sweep
    dir: PathBuf,
    /// Skip the PNG and SVG figures
    #[arg(long)]
    no_figures: bool,
    #[command(flatten)]
    pub(super) common: CommonArgs,
}

/// Reads the `shard-*.json` files of `dir`, in name order: (path, text).
fn read_shards(dir: &Path) -> Result<Vec<(String, String)>, String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("shard-") && n.ends_with(".json"))
        })
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| {
            std::fs::read_to_string(f)
                .map(|text| (f.display().to_string(), text))
                .map_err(|e| format!("cannot read {}: {e}", f.display()))
        })
        .collect()
}

pub(super) fn merge(a: &MergeArgs) -> Result<u8, Failure> {
    let shards = read_shards(&a.dir).map_err(bad)?;
    let output = merge_shards(&shards, &a.dir.display().to_string()).map_err(bad)?;
    let out = a.common.out.clone().unwrap_or_else(|| a.dir.clone());
    let artifacts = report::sweep::render_sweep(&output, !a.no_figures).map_err(internal)?;
    report::write_artifacts(&out, &artifacts).map_err(bad_input)?;
    finish(&output, &artifacts, &out, a.common.quiet)
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
