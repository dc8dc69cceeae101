//! A contaminated model (one in `benchmark.contaminated_models`, with its `memorized_rate`) in
//! every experiment that scores benchmark problems: on the fixed benchmark it solves the
//! M = round(c N) memorised problems at its `memorized_rate`; on a benchmark redrawn every rerun
//! each drawn problem is memorised with probability c. Exact values and z-checks as for every
//! other model. (A judge refuses one: `tests/bad_scenarios/91-contaminated-model-in-judge`.)
use evalsim::exact::outcome::Metric;
use evalsim::experiments::ExperimentResult;
use evalsim::scenario::Scenario;

use super::common::{failures, on_threads, run};

const EVERY_KIND: &str = r#"
title = "contaminated everywhere"
seed = 11

[benchmark]
problems = 40
mu = 0.0
sigma = 1.8
contaminated = 0.25
contaminated_models = ["mem", "memdev"]

[[model]]
name = "plain"
shift = 0.0
attractor = 0.5

[[model]]
name = "mem"
shift = 0.0
attractor = 0.5
memorized_rate = 0.98
[model.tokens]
median_tokens = 3000
sigma = 0.5
hard_growth = 1.0
wrong_factor = 1.5

[[model]]
name = "memdev"
shift = -0.3
shift_sd = 0.8
attractor = 0.6
memorized_rate = 0.9
unparsed = 0.05

[[experiment]]
kind = "curves"
models = ["plain", "mem", "memdev"]
k = [1, 4, 16]
votes = 3000

[[experiment]]
kind = "seed-variance"
model = "memdev"
n = [1, 8]
reruns = 4000

[[experiment]]
kind = "seed-variance"
name = "seed-variance-mem"
model = "mem"
n = [1, 8]
reruns = 4000

[[experiment]]
kind = "head-to-head"
a = "plain"
b = "mem"
n = [2, 8]
reruns = 4000

[[experiment]]
kind = "vote-spread"
model = "mem"
k = [8]
reruns = 2000

[[experiment]]
kind = "attractor-sweep"
model = "memdev"
k = [4]
attractor = [0.2, 0.8]
votes = 2000

[[experiment]]
kind = "budget"
models = ["mem"]
budgets = [1000, 4000, 16000]
traces = 1000
"#;

fn scenario(src: &str) -> Scenario {
    Scenario::from_toml(src, "contaminated", "contaminated.toml").unwrap_or_else(|e| panic!("{e}"))
}

fn random_placement() -> String {
    EVERY_KIND.replace("sigma = 1.8\n", "sigma = 1.8\nplacement = \"random\"\n")
}

/// Every kind but `contamination` refused a contaminated model; now each runs it, and its
/// pass@1 is the plain model's with the memorised problems' rates replaced by r: the exact
/// value moves by sum over memorised problems of (r - p_i) / N, and round(0.25 * 40) = 10
/// problems are memorised.
#[test]
fn curves_and_every_other_kind_refused_a_contaminated_model() {
    let s = scenario(EVERY_KIND);
    let memorised = s.benchmark.memorised();
    assert_eq!(memorised.iter().filter(|&&m| m).count(), 10);
    let out = run(&s);
    let checks = out.checks();
    assert!(checks.len() > 50, "{} checks", checks.len());
    let failed = failures(&checks);
    assert!(failed.is_empty(), "{failed:?}");
    let ExperimentResult::Curves(c) = &out.results[0] else {
        panic!("curves first")
    };
    let pass1 = |series: usize| {
        c.points
            .iter()
            .find(|p| p.series == series && p.k == 1 && p.metric == Metric::PassAtK)
            .map(|p| p.estimate.exact)
            .expect("pass@1")
    };
    let bench = s.benchmark.rates();
    let lift: f64 = bench
        .iter()
        .zip(&memorised)
        .filter(|(_, &m)| m)
        .map(|(p, _)| 0.98 - p)
        .sum::<f64>()
        / 40.0;
    let want = pass1(0) + lift;
    assert!((pass1(1) - want).abs() <= 1e-15, "{} {want}", pass1(1));
}

/// The memorised problems are the same for every contaminated model and every seed, spread
/// over the difficulty range rather than bunched at one end.
#[test]
fn memorised_problems_do_not_depend_on_the_seed_or_the_model() {
    let a = scenario(EVERY_KIND);
    let b = scenario(&EVERY_KIND.replace("seed = 11", "seed = 12"));
    assert_eq!(a.benchmark.memorised(), b.benchmark.memorised());
    let m = a.benchmark.memorised();
    let (mem, memdev) = (
        a.models[1].rates_on(&a.benchmark),
        a.models[2].rates_on(&a.benchmark),
    );
    for i in 0..40 {
        assert_eq!(m[i], mem[i] == 0.98, "problem {i}");
        assert_eq!(m[i], memdev[i] == 0.9, "problem {i}");
    }
    // Quantile placement runs from the hardest problem to the easiest: both halves hold some.
    assert!(m[..20].contains(&true) && m[20..].contains(&true), "{m:?}");
}

/// Redrawn problems: each drawn problem is memorised with probability c; the exact mean, SD and
/// question-sampling SE of the mixture population pass their checks over several seeds.
#[test]
fn a_contaminated_model_on_a_redrawn_benchmark_passes_its_checks() {
    let src = random_placement();
    for seed in [1u64, 2, 3] {
        let s = scenario(&src.replace("seed = 11", &format!("seed = {seed}")));
        let out = run(&s);
        let checks = out.checks();
        let failed = failures(&checks);
        assert!(failed.is_empty(), "seed {seed}: {failed:?}");
        let ExperimentResult::SeedVariance(v) = &out.results[2] else {
            panic!("seed-variance of mem")
        };
        assert_eq!(v.placement, evalsim::model::Placement::Random);
    }
}

#[test]
fn contaminated_models_do_not_depend_on_thread_count() {
    for src in [EVERY_KIND.to_string(), random_placement()] {
        let s = scenario(&src);
        let json = |t| on_threads(t, || serde_json::to_string(&run(&s)).expect("json"));
        assert_eq!(json(1), json(4));
    }
}

/// The `public-board` head-to-head's figure called the memoriser "the better model": its lead
/// is the leak. A contaminated B is now named the leader ahead by memorised problems.
#[test]
fn a_contaminated_leader_was_called_the_better_model() {
    let dir = tempfile::tempdir().expect("temp dir");
    super::common::succeeds(
        super::common::evalsim()
            .args(["run", "contamination", "--quiet", "--out"])
            .arg(dir.path()),
    );
    let svg = super::common::read(&dir.path().join("public-board.svg"));
    assert!(svg.contains("ahead by memorised problems"), "legend");
    assert!(!svg.contains("the better model"), "legend");
    let json = super::common::read(&dir.path().join("results.json"));
    assert!(json.contains("\"b_memorises\": true"));
}
