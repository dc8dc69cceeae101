//! Per-run correlation (`run_sd`) and contamination end to end: a tiny scenario whose every
//! simulated number is within the check bound, whose results do not depend on the thread count,
//! and whose `run_sd = 0` reproduces a scenario without the key bit for bit.
use evalsim::experiments::ExperimentResult;
use evalsim::scenario::Scenario;

use super::common::{failures, on_threads, run};

const TINY: &str = r#"
seed = 5
[benchmark]
problems = 12
mu = 0.0
sigma = 1.5
contaminated = 0.3
contaminated_models = ["mem"]

[[model]]
name = "plain"
shift = 0.0
attractor = 0.5

[[model]]
name = "noisy"
shift = 0.3
attractor = 0.4
run_sd = 1.5

[[model]]
name = "mem"
shift = 0.0
attractor = 0.5
memorized_rate = 0.98

[[experiment]]
kind = "curves"
models = ["plain", "noisy"]
k = [1, 4, 16]
votes = 3000

[[experiment]]
kind = "seed-variance"
model = "noisy"
n = [1, 8]
reruns = 3000

[[experiment]]
kind = "head-to-head"
a = "plain"
b = "noisy"
n = [2, 8]
reruns = 3000

[[experiment]]
kind = "contamination"
model = "mem"
n = [2]
fresh = [10, 40]
shares = [0.3, 0.6]
max_fresh = 200
reruns = 2000
"#;

fn tiny() -> Scenario {
    Scenario::from_toml(TINY, "tiny", "tiny.toml").unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn run_noise_and_contamination_checks_pass() {
    let out = run(&tiny());
    let checks = out.checks();
    assert!(checks.len() > 40, "{} checks", checks.len());
    let failed = failures(&checks);
    assert!(failed.is_empty(), "{failed:?}");
    // Shared noise flattens pass@16 below the independent value at the same median rates, and
    // the contamination plan finds a fresh set for the larger share.
    let ExperimentResult::Contamination(c) = &out.results[3] else {
        panic!("contamination result")
    };
    assert!(
        c.plan.last().and_then(|p| p.fresh).is_some(),
        "{:?}",
        c.plan
    );
    assert!(c
        .rows
        .iter()
        .all(|r| r.share > 0.0 || r.power.exact <= 0.05));
}

#[test]
fn run_noise_and_contamination_do_not_depend_on_thread_count() {
    let s = tiny();
    let json = |threads| on_threads(threads, || serde_json::to_string(&run(&s)).expect("json"));
    assert_eq!(json(1), json(3));
}

#[test]
fn run_sd_zero_reproduces_the_scenario_without_the_key() {
    let without = "seed = 2\n[benchmark]\nproblems = 10\nmu = 0.2\nsigma = 2.0\n[[model]]\nname = \"m\"\nshift = 0.1\nattractor = 0.5\n[[experiment]]\nkind = \"curves\"\nk = [1, 8]\nvotes = 500\n[[experiment]]\nkind = \"seed-variance\"\nmodel = \"m\"\nn = [1, 4]\nreruns = 500\n";
    let with = without.replace("attractor = 0.5\n", "attractor = 0.5\nrun_sd = 0.0\n");
    let json = |src: &str| {
        let s = Scenario::from_toml(src, "t", "t.toml").expect("valid");
        serde_json::to_string(&run(&s)).expect("json")
    };
    assert_eq!(json(without), json(&with));
}

#[test]
fn new_keys_are_sweepable_and_validated_per_cell() {
    use evalsim::scenario::grid::{numeric_paths, set, Value};
    use evalsim::scenario::resolve::parse;
    let src = evalsim::scenario::NAMED
        .iter()
        .find(|(n, _)| *n == "contamination")
        .expect("built in")
        .1;
    let raw = parse(src, "contamination.toml").expect("parses");
    let paths = numeric_paths(&raw);
    for p in [
        "benchmark.contaminated",
        "model.run-sd-1.run_sd",
        "model.memoriser.memorized_rate",
        "experiment.contamination.alpha",
        "experiment.contamination.max_fresh",
        "experiment.contamination.target_power",
    ] {
        assert!(paths.iter().any(|q| q == p), "{p} not in {paths:?}");
    }
    // A swept value goes through the same validator as the file.
    let cell = |path: &str, v: Value| {
        let mut r = raw.clone();
        set(&mut r, path, v).expect("set");
        Scenario::from_raw(r, src, "contamination", "contamination.toml")
    };
    let s = cell("model.run-sd-1.run_sd", Value::Real(0.5)).expect("valid");
    assert_eq!(s.models[1].run_sd, 0.5);
    let s = cell("benchmark.contaminated", Value::Real(0.4)).expect("valid");
    assert_eq!(s.benchmark.contaminated, 0.4);
    let e = cell("model.run-sd-1.run_sd", Value::Real(3.5)).expect_err("above the maximum");
    assert!(e.to_string().contains("model[2].run_sd"), "{e}");
    let e = cell("model.memoriser.memorized_rate", Value::Real(1.5)).expect_err("not a rate");
    assert!(e.to_string().contains("memorized_rate"), "{e}");
}

/// The scenario with every model feature at once (`tests/fixtures/scenarios/every-feature.toml`).
fn every_feature_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/scenarios/every-feature.toml")
}

#[test]
fn every_feature_scenario_runs_and_passes_every_check() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    super::common::succeeds(
        super::common::evalsim()
            .arg("run")
            .arg(every_feature_path())
            .args(["--threads", "2", "--quiet", "--no-figures", "--out"])
            .arg(&out),
    );
    let checks = std::fs::read_to_string(out.join("checks.csv")).expect("checks.csv");
    // Both curves experiments, every metric of the model (n@k and n@k by verifier on the one
    // with one attractor share), each true and as graded, at every k.
    assert_eq!(checks.lines().count(), 1 + 60, "{checks}");
    assert!(
        checks.lines().skip(1).all(|l| l.contains(",true,")),
        "{checks}"
    );
    let said = super::common::succeeds(
        super::common::evalsim()
            .arg("check")
            .arg(every_feature_path())
            .args(["--threads", "2"]),
    );
    assert!(said.contains("60 of 60 passed"), "{said}");
}

#[test]
fn every_feature_scenario_does_not_depend_on_thread_count() {
    let text = std::fs::read_to_string(every_feature_path()).expect("fixture");
    let s = Scenario::from_toml(&text, "every-feature", "every-feature.toml").expect("valid");
    let json = |threads| on_threads(threads, || serde_json::to_string(&run(&s)).expect("json"));
    assert_eq!(json(1), json(3));
}

/// Formerly refused (`run_sd` with a threshold verifier, `run_sd` with a list of attractor
/// shares; bad scenario 105): both models now run, with exact values and z-checks like every
/// other.
#[test]
fn run_sd_with_a_verifier_or_an_attractor_list_runs_and_passes_its_checks() {
    let base = "seed = 3\n[benchmark]\nproblems = 20\nmu = 0.0\nsigma = 1.5\n[[model]]\nname = \"m\"\nshift = 0.0\nrun_sd = 1.0\n";
    for (feature, expected) in [
        (
            "attractor = 0.5\n[model.verifier]\nkind = \"threshold\"\ntpr = 0.8\nfpr = 0.2\n",
            12,
        ),
        ("attractor = [0.3, 0.2]\n", 9),
    ] {
        let src = format!(
            "{base}{feature}[[experiment]]\nkind = \"curves\"\nk = [1, 4, 16]\nvotes = 3000\n"
        );
        let s = Scenario::from_toml(&src, "t", "t.toml").unwrap_or_else(|e| panic!("{e}"));
        let checks = run(&s).checks();
        assert_eq!(checks.len(), expected, "{feature}");
        let failed = failures(&checks);
        assert!(failed.is_empty(), "{feature}: {failed:?}");
    }
}

/// The heading of a curves panel named the model's answers, ties, run_sd, verifier and grader but
/// not its per-problem deviation or its memorised problems, so the every-feature figure hid two
/// of the features its curves depend on.
#[test]
fn a_curves_heading_left_out_shift_sd_and_memorised_problems() {
    let text = std::fs::read_to_string(every_feature_path()).expect("fixture");
    let s = Scenario::from_toml(&text, "every-feature", "every-feature.toml").expect("valid");
    let out = run(&s);
    let series = serde_json::to_value(&out).expect("json");
    let first = &series["results"][0]["series"][0];
    assert_eq!(first["shift_sd"], 0.6, "{first}");
    assert_eq!(first["memorised"]["share"], 0.25, "{first}");
    assert_eq!(first["memorised"]["rate"], 0.95, "{first}");
    let figures = evalsim::report::render(
        &out,
        evalsim::report::Options {
            figures: Some(evalsim::report::plot::Raster::DEFAULT),
        },
    )
    .expect("renders");
    let svg = figures
        .iter()
        .find(|a| a.file == "one-share.svg")
        .map(|a| String::from_utf8_lossy(&a.bytes).into_owned())
        .expect("one-share.svg");
    assert!(svg.contains("shift_sd 0.6"), "the heading names shift_sd");
    assert!(
        svg.contains("memorised") && svg.contains("share 0.25 at rate 0.95"),
        "the heading names the memorised problems as the scenario gives them"
    );
}
