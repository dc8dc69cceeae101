//! Figures whose axis range collapses to a point (every value equal) are drawn in bounded time:
//! issue 20, item 2 (drawing used to loop forever, ignoring the first SIGINT / SIGTERM), and
//! within a memory limit.
use std::time::Duration;

use assert_cmd::Command;

/// Every kind whose figure can collapse, on one benchmark: curves, seed-variance histograms
/// and SD, vote spread, head-to-head, budget and cost.
fn scenario(benchmark: &str, reruns: u32) -> String {
    format!(
        r#"seed = 3
[benchmark]
{benchmark}
[[model]]
name = "a"
attractor = 0.5
[model.tokens]
median_tokens = 1000
hard_growth = 1.0
wrong_factor = 1.5
sigma = 0.5
[[model]]
name = "b"
shift = 0.5
attractor = 0.5
[model.tokens]
median_tokens = 1000
hard_growth = 1.0
wrong_factor = 1.5
sigma = 0.5
[[experiment]]
kind = "curves"
k = [1, 2, 4]
votes = 200
[[experiment]]
kind = "seed-variance"
model = "a"
n = [1, 4]
reruns = {reruns}
[[experiment]]
kind = "vote-spread"
model = "a"
k = [4]
reruns = {reruns}
[[experiment]]
kind = "head-to-head"
a = "a"
b = "b"
n = [1, 4]
reruns = {reruns}
[[experiment]]
kind = "budget"
budgets = [500, 1000, 2000]
traces = 200
[[experiment]]
kind = "cost"
k = [1, 4]
votes = 200
traces = 200
"#
    )
}

/// Address space allowed to the child, in KiB (`ulimit -v`): 2 GiB, far above what these small
/// scenarios need, so a drawing or exact computation that grows without bound aborts the run.
const MEMORY_LIMIT_KIB: u64 = 2 * 1024 * 1024;

/// Runs the scenario with figures under a time limit (the child is killed when it runs over) and
/// a memory limit, and expects every figure written.
fn draws_in_bounded_time(benchmark: &str, reruns: u32) {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("edge.toml");
    std::fs::write(&file, scenario(benchmark, reruns)).expect("write");
    let out = dir.path().join("out");
    let bin = assert_cmd::cargo::cargo_bin("evalsim");
    let result = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v {MEMORY_LIMIT_KIB} && exec \"$0\" \"$@\""
        ))
        .arg(&bin)
        .arg("run")
        .arg(&file)
        .arg("--out")
        .arg(&out)
        .arg("--quiet")
        .arg("--threads")
        .arg("2")
        .timeout(Duration::from_secs(60))
        .output()
        .expect("runs");
    assert!(
        result.status.success(),
        "status {:?}\nstderr: {}",
        result.status,
        String::from_utf8_lossy(&result.stderr)
    );
    for stem in [
        "curves",
        "seed-variance-histograms",
        "seed-variance-sd",
        "vote-spread",
        "head-to-head",
        "budget",
        "budget-lengths",
        "cost",
    ] {
        for ext in ["png", "svg"] {
            let f = out.join(format!("{stem}.{ext}"));
            let len = std::fs::metadata(&f).map_or(0, |m| m.len());
            assert!(len > 1000, "{} missing or empty", f.display());
        }
    }
}

#[test]
fn figures_draw_when_all_rates_are_equal() {
    draws_in_bounded_time("rates = [0.5, 0.5, 0.5, 0.5]", 200);
}

#[test]
fn figures_draw_when_every_rate_is_0_or_1() {
    draws_in_bounded_time("rates = [1.0, 1.0, 1.0]", 200);
}

#[test]
fn figures_draw_with_a_tiny_sigma() {
    draws_in_bounded_time("problems = 10\nmu = 0.0\nsigma = 1e-9", 200);
}

#[test]
fn figures_draw_with_a_large_mu() {
    draws_in_bounded_time("problems = 10\nmu = 40.0\nsigma = 1.0", 200);
}

#[test]
fn figures_draw_with_one_rerun() {
    draws_in_bounded_time("problems = 10\nmu = 0.0\nsigma = 1.0", 1);
}
