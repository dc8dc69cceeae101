//! `evalsim plan`, `sweep`, `merge` and sharding, from outside.
use std::path::Path;

use evalsim::exact::noise::head_to_head;
use evalsim::model::{quantile_rates, shift_rate};

use assert_cmd::Command;

use super::common::{
    evalsim, files_where, read, refused, refused_saying, succeeds, sweep, tiny, write_file, TINY,
};

/// `evalsim ARGS...`, for the commands given by flags alone (`plan`).
fn command(args: &[&str]) -> Command {
    let mut c = evalsim();
    c.args(args);
    c
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    files_where(dir, |p| {
        !p.file_name()
            .expect("name")
            .to_string_lossy()
            .starts_with("shard-")
    })
}

#[test]
fn sweep_grid_has_a_row_per_cell_and_check() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = tiny(dir.path());
    let out = dir.path().join("out");
    let set = [
        "--set",
        "model.b.shift=0:0.4:0.2",
        "--set",
        "benchmark.sigma=0.5,2",
        "-q",
    ];
    succeeds(&mut sweep(&f, &set, &out));
    let csv = read(&out.join("sweep.csv"));
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("model.b.shift,benchmark.sigma,experiment,quantity,cell,exact,sim,se,z,passed,rule")
    );
    // 3 x 2 cells, each with 2 n x 3 quantities.
    assert_eq!(lines.count(), 6 * 6);
    assert!(csv.contains("\n0.2,2,head-to-head,P(B < A),"));
    for f in [
        "sweep.json",
        "sweep-head-to-head.png",
        "sweep-head-to-head.svg",
    ] {
        assert!(out.join(f).is_file(), "{f}");
    }
    let img = image::open(out.join("sweep-head-to-head.png")).expect("png decodes");
    assert!(img.width() > 500);
}

#[test]
fn sweep_rejects_bad_paths_and_values() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = tiny(dir.path());
    let out = dir.path().join("out");
    for (set, needles) in [
        (
            "model.c.shift=1",
            &[
                "model.c.shift",
                "valid paths",
                "model.a.attractor",
                "experiment.head-to-head.reruns",
            ][..],
        ),
        (
            "model.a.attractor=0.5,1.5",
            &["--set model.a.attractor=1.5: model[1].attractor: must be a share in [0, 1]"],
        ),
        ("benchmark.sigma=1:0:0.1", &["FROM:TO:STEP"]),
    ] {
        refused_saying(&mut sweep(&f, &["--set", set], &out), needles);
    }
    assert!(!out.exists(), "nothing may be written for bad input");
}

#[test]
fn shards_merge_byte_identical_to_an_unsharded_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = tiny(dir.path());
    let whole = dir.path().join("whole");
    let shards = dir.path().join("shards");
    let set = [
        "--set",
        "model.b.shift=0.1,0.3,0.5",
        "--set",
        "benchmark.mu=-1,1",
    ];
    let whole_args = [&set[..], &["-q", "--threads", "2"]].concat();
    succeeds(&mut sweep(&f, &whole_args, &whole));
    for i in 0..3 {
        let shard = format!("{i}/3");
        let args = [&set[..], &["-q", "--threads", "1", "--shard", &shard]].concat();
        succeeds(&mut sweep(&f, &args, &shards));
    }
    assert!(shards.join("shard-2-of-3.json").is_file());
    let merged = dir.path().join("merged");
    succeeds(
        evalsim()
            .arg("merge")
            .arg(&shards)
            .args(["-q", "--out"])
            .arg(&merged),
    );
    let (a, b) = (files(&whole), files(&merged));
    assert!(a.len() >= 4);
    assert_eq!(
        a.iter().map(|x| &x.0).collect::<Vec<_>>(),
        b.iter().map(|x| &x.0).collect::<Vec<_>>()
    );
    for (x, y) in a.iter().zip(&b) {
        assert!(x.1 == y.1, "{} differs", x.0);
    }
    // A missing shard is named.
    std::fs::remove_file(shards.join("shard-1-of-3.json")).expect("rm");
    refused_saying(
        evalsim().arg("merge").arg(&shards),
        &["missing shard(s) 1 of 3"],
    );
}

#[test]
fn bad_set_value_points_at_the_flag_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    let set = ["--set", "model.long.attractor=0.5,1.5"];
    let text = refused(&mut sweep(Path::new("note"), &set, &out));
    assert!(
        text.starts_with("error: --set model.long.attractor=1.5: model["),
        "{text}"
    );
    assert!(
        text.contains("].attractor: must be a share in [0, 1]"),
        "{text}"
    );
    assert_eq!(text.matches("must be").count(), 1, "said twice: {text}");
    assert!(
        !text.contains("cell 1:"),
        "points at a generated file: {text}"
    );
    assert!(!out.exists(), "nothing may be written for bad input");
}

#[test]
fn merging_mismatched_shards_names_what_differs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = tiny(dir.path());
    let shard = |i: usize, n: usize, seed: &str, values: &str, out: &Path| {
        let shard = format!("{i}/{n}");
        let args = ["--set", values, "--seed", seed, "-q", "--shard", &shard];
        succeeds(&mut sweep(&f, &args, out));
    };
    // Only the seed differs: the message names the seed, with both values, and nothing else.
    let seeds = dir.path().join("seeds");
    shard(0, 2, "1", "benchmark.mu=-1,1", &seeds);
    shard(1, 2, "2", "benchmark.mu=-1,1", &seeds);
    let text = refused(evalsim().arg("merge").arg(&seeds));
    assert!(text.contains("seed 1 vs 2"), "{text}");
    for other in ["scenario hash", "grid", "shard count"] {
        assert!(!text.contains(other), "names {other} wrongly: {text}");
    }
    // Only the grid differs.
    let grids = dir.path().join("grids");
    shard(0, 2, "1", "benchmark.mu=-1,1", &grids);
    shard(1, 2, "1", "benchmark.mu=-1,0,1", &grids);
    let text = refused_saying(
        evalsim().arg("merge").arg(&grids),
        &["grid benchmark.mu=-1,1 (2 cells) vs benchmark.mu=-1,0,1 (3 cells)"],
    );
    assert!(!text.contains("seed"), "{text}");
    // Only the shard count differs.
    let counts = dir.path().join("counts");
    shard(0, 2, "1", "benchmark.mu=-1,1", &counts);
    shard(1, 3, "1", "benchmark.mu=-1,1", &counts);
    let text = refused_saying(evalsim().arg("merge").arg(&counts), &["shard count 2 vs 3"]);
    assert!(!text.contains("grid"), "{text}");
}

#[test]
fn shard_auto_reads_the_scheduler_or_fails_clearly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = tiny(dir.path());
    let out = dir.path().join("out");
    refused_saying(
        &mut sweep(&f, &["--set", "benchmark.mu=0,1", "--shard", "auto"], &out),
        &["SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX"],
    );
    // Each scheduler's variables (and, for Kubernetes, the count from the flag) pick the shard.
    // (environment, extra flags, the shard file expected)
    type Case = (
        &'static [(&'static str, &'static str)],
        &'static [&'static str],
        &'static str,
    );
    let cases: [Case; 3] = [
        (
            &[
                ("SLURM_ARRAY_TASK_ID", "1"),
                ("SLURM_ARRAY_TASK_COUNT", "2"),
            ],
            &[],
            "shard-1-of-2.json",
        ),
        (
            &[("JOB_COMPLETION_INDEX", "0")],
            &["--shard-count", "2"],
            "shard-0-of-2.json",
        ),
        (
            &[
                ("AWS_BATCH_JOB_ARRAY_INDEX", "1"),
                ("AWS_BATCH_JOB_ARRAY_SIZE", "3"),
            ],
            &[],
            "shard-1-of-3.json",
        ),
    ];
    for (vars, extra, file) in cases {
        let args = [
            &["--set", "benchmark.mu=0,1", "--shard", "auto"],
            extra,
            &["-q"],
        ]
        .concat();
        let mut cmd = sweep(&f, &args, &out);
        for (k, v) in vars {
            cmd.env(k, v);
        }
        succeeds(&mut cmd);
        assert!(out.join(file).is_file(), "{file}");
    }
}

#[test]
fn plan_reproduces_the_note_and_names_the_smallest_design() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("plan");
    let stdout = succeeds(
        evalsim()
            .args([
                "plan",
                "--mu",
                "0.2",
                "--sigma",
                "2.2",
                "--gap-logits",
                "0.21",
            ])
            .args(["--simulate-reruns", "20000", "--out"])
            .arg(&out),
    );
    assert!(
        stdout.contains("B loses or ties a rerun at most 5% of the time with N = 1,000 problems with n = 1 sample each"),
        "{stdout}"
    );
    // Fixed: loss, loss-or-tie, mean and SD in 16 cells; population: mean and SD in 4 cells of
    // each of the two designs (the default --check-population 4); the same again at the minimum
    // detectable gaps of those (N, n).
    assert!(stdout.contains("checks: 160 of 160"), "{stdout}");
    let csv = read(&out.join("plan.csv"));
    let row = csv
        .lines()
        .find(|l| l.contains(",fixed,30,1,0.21,"))
        .expect("the note's cell");
    let fields: Vec<&str> = row.split(',').collect();
    let loss_or_tie: f64 = fields[17].parse().expect("number");
    let ra = quantile_rates(0.2, 2.2, 30);
    let rb: Vec<f64> = ra.iter().map(|&p| shift_rate(p, 0.21)).collect();
    let h = head_to_head(&ra, &rb, 1);
    assert_eq!(loss_or_tie, h.loss + h.tie);
    // 3 designs x 4 N x 4 n rows plus the header.
    assert_eq!(csv.lines().count(), 1 + 48);
    for f in [
        "plan-loss.png",
        "plan-heatmap.png",
        "plan-heatmap.svg",
        "plan.txt",
        "plan.json",
    ] {
        assert!(out.join(f).is_file(), "{f}");
    }
    let img = image::open(out.join("plan-heatmap.png")).expect("decodes");
    assert_eq!((img.width(), img.height()), (1600, 600));
}

#[test]
fn plan_accepts_points_and_rejects_bad_flags() {
    let dir = tempfile::tempdir().expect("tempdir");
    let quick = [
        "plan",
        "--gap-points",
        "3",
        "--simulate-reruns",
        "0",
        "--no-figures",
        "-q",
    ];
    succeeds(command(&quick).arg("--out").arg(dir.path().join("p")));
    let txt = read(&dir.path().join("p/plan.txt"));
    assert!(txt.contains("+3.0 points of pass@1"), "{txt}");
    let huge = [
        "plan",
        "--problems",
        "100000",
        "--samples",
        "4096",
        "--simulate-reruns",
        "100000000",
    ];
    let maj_samples = [
        "plan",
        "--metric",
        "maj",
        "--samples",
        "4",
        "--attractor",
        "0.5",
    ];
    for (args, needles) in [
        (
            &["plan", "--metric", "maj@16"][..],
            &["expected pass1", "maj"][..],
        ),
        (&["plan", "--metric", "maj", "--k", "1,4"], &["--attractor"]),
        (&maj_samples, &["--samples", "--k"]),
        (&["plan", "--k", "4"], &["only with --metric maj"]),
        (&huge, &["simulated draws: at most 100000000000"]),
        (&["plan", "--gap-points", "80"], &["out of reach"]),
        (&["plan", "--problems", "100,30"], &["strictly increasing"]),
    ] {
        refused_saying(&mut command(args), needles);
    }
}

#[test]
fn plan_maj_metric_writes_k_rows_and_checks_votes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("maj");
    let stdout = succeeds(
        evalsim()
            .args([
                "plan",
                "--metric",
                "maj",
                "--k",
                "1,9",
                "--attractor",
                "0.5",
            ])
            .args([
                "--rule",
                "strict",
                "--problems",
                "30,100",
                "--gap-logits",
                "0.4",
            ])
            .args([
                "--simulate-reruns",
                "8000",
                "--check-population",
                "all",
                "--out",
            ])
            .arg(&out),
    );
    // Fixed: 4 checks in 4 cells; population: 2 checks in 4 cells of each design; the same
    // again at the minimum detectable gaps.
    assert!(stdout.contains("checks: 64 of 64"), "{stdout}");
    assert!(
        stdout.contains("k in [1, 9]") && stdout.contains("+6.2 at k = 9"),
        "{stdout}"
    );
    let csv = read(&out.join("plan.csv"));
    assert_eq!(csv.lines().count(), 1 + 12);
    let row = csv
        .lines()
        .find(|l| l.contains(",fixed,30,1,0.4,"))
        .expect("k = 1 cell");
    assert!(row.contains(",maj@k,0.5,strict,"), "{row}");
    // maj@1 is pass@1: the k = 1 cell equals the exact pass@1 head-to-head.
    let fields: Vec<&str> = row.split(',').collect();
    let loss_or_tie: f64 = fields[17].parse().expect("number");
    let ra = quantile_rates(0.2, 2.2, 30);
    let rb: Vec<f64> = ra.iter().map(|&p| shift_rate(p, 0.4)).collect();
    let h = head_to_head(&ra, &rb, 1);
    assert!((loss_or_tie - (h.loss + h.tie)).abs() < 1e-12);
    // Population rows: simulated loss-or-tie beside the normal approximation, z left empty.
    let pop = csv
        .lines()
        .find(|l| l.contains(",population-paired,100,9,"))
        .expect("population cell");
    let f: Vec<&str> = pop.split(',').collect();
    assert_eq!(f[18], "normal");
    assert!(
        !f[20].is_empty() && f[22].is_empty() && !f[23].is_empty(),
        "{pop}"
    );
    let img = image::open(out.join("plan-loss.png")).expect("decodes");
    assert!(img.width() >= 900);
}

/// A scenario whose plan block asks for what the flags of `plan_block_equals_the_command` ask
/// (neither gives a seed: both take the one default).
const PLAN_SCENARIO: &str = r#"[benchmark]
problems = 10
mu = 0.1
sigma = 1.5
[[model]]
name = "base"
shift = 0.2
attractor = 0.6
vote_rule = "strict"
[[experiment]]
kind = "plan"
name = "size"
model = "base"
metric = "maj"
gap_logits = [0.3]
problems = [20, 60]
k = [1, 7]
reruns = 3000
check_population = "all"
"#;

#[test]
fn plan_block_equals_the_command() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = write_file(dir.path(), "planned.toml", PLAN_SCENARIO);
    let run_out = dir.path().join("run");
    succeeds(
        evalsim()
            .arg("run")
            .arg(&f)
            .args(["-q", "--out"])
            .arg(&run_out),
    );
    let cli_out = dir.path().join("cli");
    // Model A: mu = 0.1 + its shift 0.2; its attractor share and vote rule.
    evalsim()
        .args(["plan", "--mu", "0.30000000000000004", "--sigma", "1.5"])
        .args(["--metric", "maj", "--k", "1,7", "--attractor", "0.6"])
        .args([
            "--rule",
            "strict",
            "--gap-logits",
            "0.3",
            "--problems",
            "20,60",
        ])
        .args(["--simulate-reruns", "3000", "--check-population", "all"])
        .args(["-q", "--out"])
        .arg(&cli_out)
        .assert()
        .success();
    for (a, b) in [("size.csv", "plan.csv"), ("size.txt", "plan.txt")] {
        let x = std::fs::read(run_out.join(a)).expect(a);
        let y = std::fs::read(cli_out.join(b)).expect(b);
        assert!(x == y, "{a} differs from {b}");
    }
    // The figure is the command's, except that its title names the scenario.
    let x = read(&run_out.join("size-heatmap.svg"));
    let y = read(&cli_out.join("plan-heatmap.svg"));
    assert!(
        x.contains(" · scenario planned · "),
        "the title names the scenario"
    );
    assert!(
        x.replace(" · scenario planned", "") == y,
        "size-heatmap.svg differs from plan-heatmap.svg beyond the title"
    );
    for f in [
        "size.json",
        "size-loss.png",
        "size-heatmap.png",
        "report.md",
    ] {
        assert!(run_out.join(f).is_file(), "{f}");
    }
    let checks = std::fs::read_to_string(run_out.join("checks.csv")).expect("checks");
    // Fixed: 4 checks in 4 cells; population: 2 in 4 cells of each of two designs; and the
    // same again at each cell's minimum detectable gap.
    assert_eq!(checks.lines().filter(|l| l.contains(",size,")).count(), 64);
    let md = std::fs::read_to_string(run_out.join("report.md")).expect("report");
    assert!(
        md.contains("## size") && md.contains("![size](size-loss.png)"),
        "{md}"
    );
    // `check` runs the plan's checks too.
    let stdout = succeeds(evalsim().arg("check").arg(&f));
    assert!(stdout.contains("checks: 64 of 64"), "{stdout}");
}

#[test]
fn sweep_seed_above_2_pow_53_is_kept_exactly() {
    // The seed went into the TOML document as an f64: above 9e15 it became a float the
    // scenario refused, and above 2^53 it lost its last bits. It is now set as a u64.
    for seed in ["9007199254740993", "18446744073709551557"] {
        let dir = tempfile::tempdir().expect("tempdir");
        let f = tiny(dir.path());
        let out = dir.path().join("out");
        let args = [
            "--set",
            "model.b.shift=0,0.2",
            "--seed",
            seed,
            "--no-figures",
            "-q",
        ];
        succeeds(&mut sweep(&f, &args, &out));
        let json = std::fs::read_to_string(out.join("sweep.json")).expect("json");
        assert!(
            json.contains(&format!("\"seed\": {seed}")),
            "{seed}: {json}"
        );
    }
}

#[test]
fn plan_bad_mu_error_names_the_flag_with_its_dashes() {
    refused_saying(
        &mut command(&["plan", "--mu", "nan"]),
        &["--mu: must be a number of logits in [-40, 40]"],
    );
}

#[test]
fn sweep_seed_above_2_pow_53_is_exact() {
    // The seed used to pass through f64 in the cell's TOML text: 2^53 + 1 became 2^53 (or was
    // refused above 9e15). Now it is set on the raw scenario as a u64.
    use evalsim::sim::stream::{name_id, stream_id};
    let dir = tempfile::tempdir().expect("tempdir");
    let f = tiny(dir.path());
    let out = dir.path().join("out");
    let big = (1u64 << 53) + 1;
    let seeds = format!("seed={big},{}", u64::MAX);
    succeeds(&mut sweep(&f, &["--set", &seeds, "--quiet"], &out));
    let json: serde_json::Value =
        serde_json::from_str(&super::common::read(&out.join("sweep.json"))).expect("json");
    let values = &json["manifest"]["grid"][0][1];
    assert_eq!(values[0], big.to_string());
    assert_eq!(values[1], u64::MAX.to_string());
    for (i, seed) in [big, u64::MAX].into_iter().enumerate() {
        let cell_seed = stream_id(seed, &[name_id(&format!("seed={seed}"))]);
        assert_eq!(
            json["cells"][i]["seed"].as_u64(),
            Some(cell_seed),
            "cell {i}"
        );
    }
}

#[test]
fn sweep_fractional_or_negative_count_names_the_set_and_what_is_valid() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = tiny(dir.path());
    let out = dir.path().join("out");
    for arg in [
        "experiment.head-to-head.reruns=1000,100.5",
        "experiment.head-to-head.reruns=-3",
    ] {
        refused_saying(
            &mut sweep(&f, &["--set", arg], &out),
            &[
                &format!("--set {arg}: "),
                "is not a whole number from 0 to 18446744073709551615, which experiment.head-to-head.reruns needs",
            ],
        );
    }
    assert!(!out.exists());
}

#[test]
fn plan_mu_1e9_is_rejected_by_the_one_validator() {
    // `plan --mu 1e9` used to run: every problem solved, a plan of ties. The flag and a file's
    // `benchmark.mu` meet the same bound, in the scenario validator.
    let dir = tempfile::tempdir().expect("tempdir");
    let far = write_file(
        dir.path(),
        "far.toml",
        &TINY.replace("mu = 0.0", "mu = 1e9"),
    );
    let far = far.to_str().expect("utf-8 path");
    for (args, needle) in [
        (
            vec!["plan", "--mu", "1e9"],
            "--mu: must be a number of logits in [-40, 40]",
        ),
        (
            vec!["plan", "--sigma", "1e9"],
            "--sigma: must be a number of logits in (0, 40]",
        ),
        (
            vec!["check", far],
            "benchmark.mu: must be a number of logits in [-40, 40]",
        ),
    ] {
        refused_saying(&mut command(&args), &[needle]);
    }
}

/// `--a-shift-sd` gives model A its own per-problem deviation and `--shift-sd` then gives B's:
/// the CSV carries both, every simulated check passes, and an SD pair beyond the plan's limit is
/// refused naming both flags.
#[test]
fn plan_a_shift_sd_and_shift_sd_give_each_model_its_own_deviation() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("p");
    let args = [
        "plan",
        "--a-shift-sd",
        "0.6",
        "--shift-sd",
        "1.4",
        "--problems",
        "30,100",
        "--samples",
        "1,4",
        "--simulate-reruns",
        "4000",
        "--no-figures",
        "-q",
    ];
    succeeds(command(&args).arg("--out").arg(&out));
    let csv = read(&out.join("plan.csv"));
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).expect(name);
    let row: Vec<&str> = lines.next().expect("row").split(',').collect();
    assert_eq!(row[col("model_shift_sd")], "0.6");
    assert_eq!(row[col("b_shift_sd")], "1.4");
    // sigma^2 / sqrt((sigma^2 + tau_A^2)(sigma^2 + tau_B^2)) at sigma = 2.2
    let r: f64 = row[col("logit_correlation")].parse().expect("number");
    assert!((r - 4.84 / (5.2f64 * 6.8).sqrt()).abs() < 1e-12, "{r}");
    let txt = read(&out.join("plan.txt"));
    assert!(
        txt.contains("the plan gives B its own shift_sd 1.4"),
        "{txt}"
    );
    refused_saying(
        &mut command(&["plan", "--a-shift-sd", "2.5", "--shift-sd", "2.9"]),
        &["--a-shift-sd", "--shift-sd", "above the plan's limit"],
    );
}

/// [`TINY`] with an attractor sweep of model `a`, which sets `a`'s attractor itself.
const WITH_ATTRACTOR_SWEEP: &str = r#"
[[experiment]]
kind = "attractor-sweep"
model = "a"
attractor = [0.0, 0.5]
k = [1, 4]
votes = 200
"#;

/// Runs `cmd`, which must succeed, and returns its stderr.
fn stderr_of(cmd: &mut Command) -> String {
    let out = cmd.assert().success();
    String::from_utf8_lossy(&out.get_output().stderr).into_owned()
}

#[test]
fn sweeping_an_attractor_that_attractor_sweep_sets_warns_before_the_grid() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = write_file(
        dir.path(),
        "s.toml",
        &format!("{}{WITH_ATTRACTOR_SWEEP}", super::common::TINY),
    );
    let out = dir.path().join("out");
    let args = ["--set", "model.a.attractor=0.2,0.4", "-q"];
    let err = stderr_of(&mut sweep(&f, &args, &out));
    assert!(
        err.contains("--set model.a.attractor: experiment `attractor-sweep` sets model `a`'s `attractor` itself"),
        "{err}"
    );
    // Said once, not again among the fields that moved nothing.
    assert_eq!(err.matches("`attractor-sweep`").count(), 1, "{err}");
}

#[test]
fn a_swept_field_that_moves_nothing_is_named_after_the_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = tiny(dir.path());
    let out = dir.path().join("out");
    // head-to-head compares pass@1, which the attractor share does not change.
    let args = [
        "--set",
        "model.a.attractor=0.2,0.4",
        "--set",
        "benchmark.sigma=0.5,2",
        "-q",
    ];
    let err = stderr_of(&mut sweep(&f, &args, &out));
    assert!(
        err.contains("experiment `head-to-head`: no exact value changes with `model.a.attractor`"),
        "{err}"
    );
    assert!(!err.contains("benchmark.sigma"), "{err}");
    // A sweep whose fields all move the experiment says nothing.
    let out2 = dir.path().join("out2");
    let quiet = stderr_of(&mut sweep(
        &f,
        &["--set", "benchmark.sigma=0.5,2", "-q"],
        &out2,
    ));
    assert!(!quiet.contains("warning"), "{quiet}");
}

#[test]
fn sweep_figure_puts_each_experiment_on_the_field_that_moves_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = tiny(dir.path());
    let out = dir.path().join("out");
    // The attractor comes first but moves nothing: the x axis must be sigma.
    let args = [
        "--set",
        "model.a.attractor=0.2,0.4",
        "--set",
        "benchmark.sigma=0.5,1,2",
        "-q",
    ];
    succeeds(&mut sweep(&f, &args, &out));
    let svg = read(&out.join("sweep-head-to-head.svg"));
    assert!(
        svg.contains("benchmark.sigma") || svg.contains("sigma"),
        "x axis not sigma"
    );
    assert!(
        !svg.contains("attractor"),
        "the idle field is on the figure"
    );
    // Nothing moves at all: no figure unless asked for.
    let out2 = dir.path().join("out2");
    succeeds(&mut sweep(
        &f,
        &["--set", "model.a.attractor=0.2,0.4", "-q"],
        &out2,
    ));
    assert!(!out2.join("sweep-head-to-head.png").exists());
    assert!(out2.join("sweep.csv").is_file());
}
