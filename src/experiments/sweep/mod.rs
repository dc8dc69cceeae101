//! `sweep`: a scenario's experiments run in every cell of a parameter grid.
//!
//! Each cell is the scenario's raw form ([`crate::scenario::raw::RawScenario`], parsed once)
//! with the cell's values set on their typed fields, resolved by the one validator (so every
//! cell is validated like a file), and seeded with
//! stream_id(seed, [hash of "path=value;..."]): a cell's numbers depend only on the master seed
//! and its own parameters, not on which other cells run, the thread count or the shard.
//!
//! Depends on `scenario` (each cell is a scenario) and `sim::stream` (cell seeds).
use serde::{Deserialize, Serialize};

use super::check::Untested;
use super::{num, run_all, Check, Estimate, Progress};
use crate::scenario::grid::{self, Axis, GridError, SetArg, Value, MAX_CELLS};
use crate::scenario::resolve::parse;
use crate::scenario::DEFAULT_SEED;
use crate::scenario::{Scenario, ScenarioError, ScenarioSource};
use crate::sim::stream::{name_id, stream_id};

pub mod shard_check;

/// What identifies a sweep: shards of one sweep must agree on all of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Scenario name.
    pub scenario: String,
    /// FNV-1a hash of the scenario's TOML text, hex.
    pub scenario_hash: String,
    /// Master seed.
    pub seed: u64,
    /// Swept paths and their values (shortest round-trip text, so they survive JSON exactly).
    pub grid: Vec<(String, Vec<String>)>,
    /// Number of cells.
    pub cells: usize,
    /// evalsim version.
    pub version: String,
}

/// One check row of a cell, every number as shortest round-trip text (`inf` and `nan` spelled
/// out), so that JSON round trips are exact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredCheck {
    /// Experiment name.
    pub experiment: String,
    /// Quantity.
    pub quantity: String,
    /// The experiment's own cell description.
    pub cell: String,
    /// Exact, sim, se, z.
    pub values: [String; 4],
    /// The weight of one trial for a count of independent trials, else `0` ([`Estimate::step`]):
    /// the pass rule needs it.
    #[serde(default = "zero_text")]
    pub step: String,
    /// Why the number is not tested, if it is not ([`Untested::as_str`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub untested: Option<String>,
}

fn zero_text() -> String {
    "0".into()
}

/// The results of one grid cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepCell {
    /// Index in the grid (the last `--set` varies fastest).
    pub index: usize,
    /// The cell's values, one per axis, as text.
    pub values: Vec<String>,
    /// The cell's seed.
    pub seed: u64,
    /// Every check of every experiment of the cell.
    pub checks: Vec<StoredCheck>,
}

/// A whole sweep, or one shard of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepOutput {
    /// What the sweep is.
    pub manifest: Manifest,
    /// `[index, count]` for a shard; absent for a whole sweep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<[usize; 2]>,
    /// The cells, by index.
    pub cells: Vec<SweepCell>,
}

/// A sweep that cannot run.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// A bad `--set`.
    #[error(transparent)]
    Grid(#[from] GridError),
    /// The scenario text does not parse.
    #[error("{0}")]
    Parse(String),
    /// A cell's scenario does not validate.
    #[error("cell {index} ({assignments}): {source}")]
    Cell {
        /// The cell's index.
        index: usize,
        /// `path=value, ...`.
        assignments: String,
        /// Why.
        source: ScenarioError,
    },
    /// Too many cells.
    #[error("the grid has {0} cells; at most {MAX_CELLS} are allowed")]
    TooBig(usize),
}

/// A prepared sweep: the grid and every cell's validated scenario.
#[derive(Debug)]
pub struct Sweep {
    /// The manifest.
    pub manifest: Manifest,
    /// The axes.
    pub axes: Vec<Axis>,
    /// Per cell: its values and its scenario (seeded for the cell).
    pub cells: Vec<(Vec<Value>, Scenario)>,
}

/// FNV-1a of a text, as 16 hex digits.
pub fn text_hash(text: &str) -> String {
    format!("{:016x}", name_id(text))
}

/// Builds every cell's scenario. The scenario is parsed once into its raw form; each cell is a
/// clone with the cell's values set on their typed fields ([`grid::set`]), resolved by the one
/// validator. The master seed is `seed` when given, else the scenario's.
///
/// # Errors
/// [`SweepError`] naming the path or cell that is invalid; nothing has run yet.
pub fn prepare(
    src: &ScenarioSource,
    sets: &[SetArg],
    seed: Option<u64>,
) -> Result<Sweep, SweepError> {
    let base_raw = parse(&src.text, &src.file).map_err(|e| SweepError::Parse(e.to_string()))?;
    let mut axes: Vec<Axis> = Vec::new();
    for set in sets {
        if axes.iter().any(|a| a.path == set.path) {
            return Err(GridError::Syntax {
                arg: set.arg.clone(),
                reason: "the same path is set twice; give all its values in one --set".into(),
            }
            .into());
        }
        axes.push(set.values_for(&base_raw)?);
    }
    let total = axes.iter().map(|a| a.values.len()).product::<usize>();
    if total > MAX_CELLS {
        return Err(SweepError::TooBig(total));
    }
    // The scenario as written must be valid too.
    let base = Scenario::from_raw(base_raw.clone(), &src.text, &src.name, &src.file)
        .map_err(|e| SweepError::Parse(e.to_string()))?;
    let master = seed.unwrap_or(base.seed);
    let seed_swept = axes.iter().any(|a| a.path == "seed");
    let mut cells = Vec::with_capacity(total);
    for index in 0..total {
        let mut rest = index;
        let mut values = vec![Value::Whole(0); axes.len()];
        for (ai, a) in axes.iter().enumerate().rev() {
            values[ai] = a.values[rest % a.values.len()];
            rest /= a.values.len();
        }
        let assignments = assignments(&axes, &values);
        let mut raw = base_raw.clone();
        for (a, &v) in axes.iter().zip(&values) {
            grid::set(&mut raw, &a.path, v)?;
        }
        // A swept `seed` moves the cell's base seed (else `--seed`, else the file's); the cell
        // hash mixes in every assignment. Set before resolving, so every spec holds it.
        let written = raw.seed.as_ref().map_or(DEFAULT_SEED, |s| *s.get_ref());
        let cell_base = if seed_swept {
            written
        } else {
            seed.unwrap_or(written)
        };
        let cell_seed = stream_id(cell_base, &[name_id(&assignments)]);
        raw.seed = Some(toml::Spanned::new(0..0, cell_seed));
        // Errors point at the key in the scenario's own file (a set key keeps its span).
        let s = Scenario::from_raw(raw, &src.text, &src.name, &src.file).map_err(|source| {
            SweepError::Cell {
                index,
                assignments: assignments.clone(),
                source,
            }
        })?;
        cells.push((values, s));
    }
    let manifest = Manifest {
        scenario: src.name.clone(),
        scenario_hash: text_hash(&src.text),
        seed: master,
        grid: axes
            .iter()
            .map(|a| {
                (
                    a.path.clone(),
                    a.values.iter().map(Value::to_string).collect(),
                )
            })
            .collect(),
        cells: total,
        version: env!("CARGO_PKG_VERSION").into(),
    };
    Ok(Sweep {
        manifest,
        axes,
        cells,
    })
}

/// `path=value, path=value` of a cell.
pub fn assignments(axes: &[Axis], values: &[Value]) -> String {
    axes.iter()
        .zip(values)
        .map(|(a, v)| format!("{}={v}", a.path))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Runs the cells whose index is in `indices`, in index order. Once an interruption is
/// [`requested`](crate::interrupt::requested) the remaining cells are skipped (and the cells
/// returned are incomplete): the caller must then discard the result.
///
/// # Errors
/// The first experiment that cannot run.
pub fn run_cells(
    sweep: &Sweep,
    indices: &[usize],
    progress: Progress,
) -> Result<Vec<SweepCell>, SweepError> {
    let mut out = Vec::with_capacity(indices.len());
    for &index in indices {
        if crate::interrupt::requested() {
            break;
        }
        let (values, scenario) = &sweep.cells[index];
        let run = run_all(scenario, progress);
        out.push(SweepCell {
            index,
            values: values.iter().map(Value::to_string).collect(),
            seed: scenario.seed,
            checks: run.checks().iter().map(store).collect(),
        });
    }
    Ok(out)
}

/// Most votes, reruns or traces per experiment in the probe run of [`quantity_names`].
const PROBE_DRAWS: u64 = 16;

/// The `(experiment, quantity)` pairs of the checks cell `index` reports, from a probe run of
/// that cell with at most `PROBE_DRAWS` (16) votes, reruns or traces per experiment: which checks
/// exist depends on the experiments, models and grids of the scenario, not on how many draws
/// it makes. This is how `sweep --plot` is checked before the grid is computed.
///
/// # Errors
/// The first experiment that cannot run.
pub fn quantity_names(sweep: &Sweep, index: usize) -> Result<Vec<(String, String)>, SweepError> {
    let mut scenario = sweep.cells[index].1.clone();
    for exp in &mut scenario.experiments {
        exp.spec.as_kind_mut().cap_draws(PROBE_DRAWS);
    }
    let mut names: Vec<(String, String)> = Vec::new();
    for c in run_all(&scenario, &|_| {}).checks() {
        let pair = (c.experiment, c.quantity);
        if !names.contains(&pair) {
            names.push(pair);
        }
    }
    Ok(names)
}

fn store(c: &Check) -> StoredCheck {
    let e = c.estimate;
    StoredCheck {
        experiment: c.experiment.clone(),
        quantity: c.quantity.clone(),
        cell: c.cell.clone(),
        values: [num(e.exact), num(e.sim), num(e.se), num(e.z)],
        step: num(e.step),
        untested: e.untested.map(|u| u.as_str().to_string()),
    }
}

impl StoredCheck {
    /// The estimate back, with everything its pass rule needs: exact, sim and se (z is derived
    /// from them again, never read from the file), the trial weight and any reason it is
    /// untested; unparsable text reads as NaN (and so fails).
    pub fn estimate(&self) -> Estimate {
        let v: Vec<f64> = self
            .values
            .iter()
            .map(|s| s.parse().unwrap_or(f64::NAN))
            .collect();
        let mut e = Estimate::new(v[0], v[1], v[2]);
        e.step = self.step.parse().unwrap_or(f64::NAN);
        e.untested = self.untested.as_deref().and_then(Untested::parse);
        if self.untested.is_some() && e.untested.is_none() {
            // A reason this build does not know: judge the number rather than skip it.
            e.step = f64::NAN;
        }
        e
    }

    /// [`Estimate::passed`]: the same rule as `run`.
    pub fn passed(&self) -> bool {
        self.estimate().passed()
    }
}

/// Checks the shards of one sweep, (file name, JSON text) in name order as read from the folder
/// `dir`, and joins them into the whole sweep. Each shard must be a shard of the sweep its
/// manifest describes ([`shard_check`]: grid, cell indexes, values, seeds and every check's
/// numbers and z); their manifests must agree (scenario, its hash, seed, grid, shard count,
/// version); every shard must appear once, every cell once and in its own shard, and every cell
/// must hold the checks of every experiment.
///
/// # Errors
/// A message naming the file, line and column, key and what would be valid, or the missing,
/// duplicate or mismatched shard or cell.
pub fn merge_shards(files: &[(String, String)], dir: &str) -> Result<SweepOutput, String> {
    use shard_check::{check_cell, check_index, check_manifest, Seg, ShardText};
    if files.is_empty() {
        return Err(format!("no shard-I-of-N.json files in {dir}"));
    }
    let mut shards = Vec::new();
    for (f, text) in files {
        let s: SweepOutput =
            serde_json::from_str(text).map_err(|e| format!("{f}: not a shard file: {e}"))?;
        let ft = ShardText { file: f, text };
        let (i, n) = check_manifest(ft, &s)?;
        for (ci, c) in s.cells.iter().enumerate() {
            check_index(ft, &s.manifest, ci, c)?;
        }
        shards.push((ft, i, n, s));
    }
    let (f0, _, n, first) = &shards[0];
    let n = *n;
    for (f, _, m, s) in &shards[1..] {
        let differ = shard_differences(&first.manifest, n, &s.manifest, *m);
        if !differ.is_empty() {
            return Err(format!(
                "{} and {} are from different sweeps: {}; merge shards of one sweep only",
                f0.file,
                f.file,
                differ.join("; ")
            ));
        }
    }
    let mut seen: Vec<Option<&str>> = vec![None; n];
    for (f, i, _, _) in &shards {
        if let Some(other) = seen[*i] {
            return Err(format!(
                "shard {i} of {n} appears twice ({other} and {}); keep one of them",
                f.file
            ));
        }
        seen[*i] = Some(f.file);
    }
    let missing: Vec<String> = (0..n)
        .filter(|&i| seen[i].is_none())
        .map(|i| i.to_string())
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "missing shard(s) {} of {n} in {dir}: run them with --shard I/{n}",
            missing.join(", ")
        ));
    }
    let manifest = first.manifest.clone();
    check_cell_owners(&shards, &manifest, dir)?;
    for (f, _, _, s) in &shards {
        for (ci, c) in s.cells.iter().enumerate() {
            check_cell(*f, &s.manifest, ci, c)?;
        }
    }
    // Every cell holds the checks of every experiment, unless it sets that experiment's draws
    // to 0 (a plan with no reruns simulates nothing, so it has nothing to check).
    let mut experiments: Vec<&str> = Vec::new();
    for (_, _, _, s) in &shards {
        for c in s.cells.iter().flat_map(|c| &c.checks) {
            if !experiments.contains(&c.experiment.as_str()) {
                experiments.push(&c.experiment);
            }
        }
    }
    for (f, _, _, s) in &shards {
        for (ci, c) in s.cells.iter().enumerate() {
            let absent = experiments.iter().find(|e| {
                !c.checks.iter().any(|k| k.experiment == **e)
                    && !draws_set_to_zero(&manifest, &c.values, e)
            });
            if let Some(e) = absent {
                let all: Vec<String> = experiments.iter().map(|e| format!("`{e}`")).collect();
                return Err(f.at(
                    &[Seg::Key("cells"), Seg::Index(ci), Seg::Key("checks")],
                    &format!(
                        "cell {} holds no checks of experiment `{e}`; every cell of the sweep holds the checks of every experiment ({}): the file is incomplete, run its shard again",
                        c.index,
                        all.join(", ")
                    ),
                ));
            }
        }
    }
    let mut cells: Vec<_> = shards
        .into_iter()
        .flat_map(|(_, _, _, s)| s.cells)
        .collect();
    cells.sort_by_key(|c| c.index);
    Ok(SweepOutput {
        manifest,
        shard: None,
        cells,
    })
}

/// True when the cell's values set a draw count (`votes`, `reruns`, `traces`) of experiment
/// `name` to 0.
fn draws_set_to_zero(m: &Manifest, values: &[String], name: &str) -> bool {
    m.grid.iter().zip(values).any(|((path, _), v)| {
        let draws = path
            .strip_prefix("experiment.")
            .and_then(|p| p.strip_prefix(name))
            .is_some_and(|k| [".votes", ".reruns", ".traces"].contains(&k));
        draws && v.parse::<f64>().is_ok_and(|x| x == 0.0)
    })
}

type Shard<'a> = (shard_check::ShardText<'a>, usize, usize, SweepOutput);

/// Every cell of the grid in exactly one shard, its own (index % N == I).
fn check_cell_owners(shards: &[Shard], manifest: &Manifest, dir: &str) -> Result<(), String> {
    use shard_check::Seg::{Index as I, Key as K};
    let mut owner: Vec<Option<(usize, usize)>> = vec![None; manifest.cells];
    for (si, (f, _, n, s)) in shards.iter().enumerate() {
        for (ci, c) in s.cells.iter().enumerate() {
            if let Some((sj, cj)) = owner[c.index] {
                return Err(format!(
                    "cell index {} appears twice, at {} and at {}; each cell of the grid is in one shard once (cell {} belongs to shard {} of {n}, shard-{}-of-{n}.json)",
                    c.index,
                    shards[sj].0.position(&[K("cells"), I(cj), K("index")]),
                    f.position(&[K("cells"), I(ci), K("index")]),
                    c.index,
                    c.index % n,
                    c.index % n
                ));
            }
            owner[c.index] = Some((si, ci));
        }
    }
    for (f, i, n, s) in shards {
        for (ci, c) in s.cells.iter().enumerate() {
            if c.index % n != *i {
                return Err(f.at(
                    &[K("cells"), I(ci), K("index")],
                    &format!(
                        "cell {} belongs to shard {} of {n}, not to this shard {i}; shard {i} holds the cells whose index % {n} == {i}",
                        c.index,
                        c.index % n
                    ),
                ));
            }
        }
    }
    let missing: Vec<usize> = (0..manifest.cells)
        .filter(|&i| owner[i].is_none())
        .collect();
    if let Some(&first) = missing.first() {
        let n = shards[0].2;
        let shown: Vec<String> = missing.iter().take(10).map(usize::to_string).collect();
        return Err(format!(
            "{} of the grid's {} cells are in no shard of {dir} (cell{} {}{}): cell {first} belongs in shard-{}-of-{n}.json; run that shard again with --shard {}/{n}",
            missing.len(),
            manifest.cells,
            if missing.len() == 1 { "" } else { "s" },
            shown.join(", "),
            if missing.len() > 10 { ", ..." } else { "" },
            first % n,
            first % n
        ));
    }
    Ok(())
}

/// What differs between two shards' sweeps, one phrase per field (`seed 1 vs 2`); empty when
/// they are shards of one sweep.
fn shard_differences(a: &Manifest, a_count: usize, b: &Manifest, b_count: usize) -> Vec<String> {
    let grid = |m: &Manifest| {
        m.grid
            .iter()
            .map(|(path, values)| format!("{path}={}", values.join(",")))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut out = Vec::new();
    if a.scenario != b.scenario {
        out.push(format!("scenario `{}` vs `{}`", a.scenario, b.scenario));
    }
    if a.scenario_hash != b.scenario_hash {
        out.push(format!(
            "scenario hash {} vs {} (the scenario files differ)",
            a.scenario_hash, b.scenario_hash
        ));
    }
    if a.seed != b.seed {
        out.push(format!("seed {} vs {}", a.seed, b.seed));
    }
    if a.grid != b.grid || a.cells != b.cells {
        out.push(format!(
            "grid {} ({} cells) vs {} ({} cells)",
            grid(a),
            a.cells,
            grid(b),
            b.cells
        ));
    }
    if a_count != b_count {
        out.push(format!("shard count {a_count} vs {b_count}"));
    }
    if a.version != b.version {
        out.push(format!("evalsim version {} vs {}", a.version, b.version));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{read_source, ExperimentSpec, PlanExperimentSpec};

    fn set(arg: &str) -> SetArg {
        grid::parse_set(arg).expect("a valid --set")
    }

    #[test]
    fn cells_are_seeded_by_their_parameters_only() {
        let src = read_source("note").expect("note");
        let a = prepare(&src, &[set("model.long.attractor=0,0.5")], None).expect("grid");
        let b = prepare(&src, &[set("model.long.attractor=0.5,0.9,0")], None).expect("grid");
        assert_eq!(a.cells[1].1.seed, b.cells[0].1.seed);
        assert_eq!(a.cells[0].1.seed, b.cells[2].1.seed);
        assert_ne!(a.cells[0].1.seed, a.cells[1].1.seed);
    }

    #[test]
    fn a_sweep_cells_plan_runs_on_the_cells_seed() {
        // The plan's seed is set when the scenario resolves; a cell's seed must reach it.
        let text = "seed = 3\n[benchmark]\nproblems = 10\nmu = 0.1\nsigma = 1.5\n[[model]]\nname = \"a\"\nshift = 0.0\nattractor = 0.5\n[[experiment]]\nkind = \"plan\"\ngap_logits = [0.3]\nproblems = [20]\nsamples = [1]\nreruns = 10\n";
        let src = ScenarioSource {
            text: text.into(),
            name: "p".into(),
            file: "p.toml".into(),
        };
        let sweep = prepare(&src, &[set("model.a.shift=0,0.1")], Some(9)).expect("grid");
        for (_, s) in &sweep.cells {
            let ExperimentSpec::Plan(PlanExperimentSpec { plan, .. }) = &s.experiments[0].spec
            else {
                panic!("a plan");
            };
            assert_eq!(plan.seed, s.seed);
        }
        assert_ne!(sweep.cells[0].1.seed, sweep.cells[1].1.seed);
    }

    #[test]
    fn sweep_cell_with_a_rare_count_check_passes_exactly_when_run_passes_it() {
        // pass@32 of 1 - 5.48e-7 from 160,000 votes: two misses are |z| = 6.5, within
        // Bernstein's bound for a count; the sweep used to judge |z| alone and fail it.
        let votes: f64 = 160_000.0;
        let exact: f64 = 1.0 - 5.48e-7;
        let se = (exact * (1.0 - exact) / votes).sqrt();
        let mut estimates: Vec<Estimate> = (0..20)
            .map(|misses| {
                Estimate::new(exact, 1.0 - misses as f64 / votes, se).counting(1.0 / votes)
            })
            .collect();
        estimates.push(Estimate::new(f64::INFINITY, f64::INFINITY, f64::NAN));
        estimates.push(Estimate::new(3.0, f64::INFINITY, 0.1).untested(Untested::RatioOfRareCount));
        estimates.push(Estimate::new(0.5, f64::NAN, 0.1));
        estimates.push(Estimate::new(0.5, 0.9, 0.1));
        for e in estimates {
            let check = Check::new("x", "pass@k", "c", e);
            let stored = store(&check);
            let json = serde_json::to_string(&stored).expect("serialises");
            let back: StoredCheck = serde_json::from_str(&json).expect("reads back");
            assert_eq!(back.passed(), check.passed(), "{check:?}");
            assert_eq!(back.estimate().rule(), e.rule());
        }
        let two = Estimate::new(exact, 1.0 - 2.0 / votes, se).counting(1.0 / votes);
        assert!(two.z.abs() > 4.5 && store(&Check::new("x", "q", "c", two)).passed());

        // End to end: a cell whose rare-count checks run and sweep judge alike.
        let text = "seed = 9\n[benchmark]\nrates = [0.9999, 0.97, 0.5]\n[[model]]\nname = \"m\"\n\
                    attractor = 0.5\n[[experiment]]\nkind = \"curves\"\nk = [1, 8, 64]\nvotes = 3000\n";
        let src = ScenarioSource {
            name: "rare".into(),
            file: "rare.toml".into(),
            text: text.into(),
        };
        let sweep = prepare(&src, &[set("model.m.attractor=0.5,0.9")], None).expect("grid");
        let cells = run_cells(&sweep, &[0, 1], &|_| {}).expect("runs");
        for (cell, (_, scenario)) in cells.iter().zip(&sweep.cells) {
            let run = run_all(scenario, &|_| {});
            let checks = run.checks();
            assert_eq!(cell.checks.len(), checks.len());
            assert!(checks.iter().any(|c| c.estimate.step > 0.0));
            for (stored, check) in cell.checks.iter().zip(&checks) {
                assert_eq!(stored.passed(), check.passed(), "{check:?}");
                assert_eq!(stored.estimate(), check.estimate);
            }
        }
    }

    #[test]
    fn invalid_cells_name_the_cell() {
        let src = read_source("note").expect("note");
        let e = prepare(&src, &[set("model.long.attractor=0.5,1.5")], None)
            .expect_err("1.5 is not a share");
        let msg = e.to_string();
        assert!(msg.contains("cell 1 (model.long.attractor=1.5)"), "{msg}");
        assert!(msg.contains("attractor"), "{msg}");
    }
}
