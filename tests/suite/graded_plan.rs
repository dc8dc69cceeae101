//! A plan and a contamination experiment whose model carries unparsed answers and a noisy
//! grader (and, for maj@k, two attractors and split), end to end from a scenario: every
//! simulated number within the check bound, the plan's text saying its numbers are graded with
//! the true gap beside them, and results independent of the thread count.
use evalsim::experiments::{run_all, ExperimentResult};
use evalsim::scenario::Scenario;

const GRADED: &str = r#"
seed = 9
[benchmark]
problems = 12
mu = 0.0
sigma = 1.5
contaminated = 0.3
contaminated_models = ["mem"]

[[model]]
name = "judge"
shift = 0.2
attractor = [0.4, 0.3]
unparsed = 0.05
split = 0.1
[model.grader]
fpr = 0.1
fnr = 0.05

[[model]]
name = "mem"
shift = 0.0
attractor = 0.5
memorized_rate = 0.98
unparsed = 0.1
[model.grader]
fpr = 0.2
fnr = 0.1

[[experiment]]
kind = "plan"
name = "pass1"
model = "judge"
gap_logits = [0.3]
problems = [20, 60]
samples = [1, 4]
reruns = 3000
check_population = "all"

[[experiment]]
kind = "plan"
name = "vote"
model = "judge"
metric = "maj"
k = [3, 7]
gap_logits = [0.3]
problems = [20]
reruns = 3000
check_population = "all"

[[experiment]]
kind = "contamination"
model = "mem"
n = [2]
fresh = [10, 40]
shares = [0.3, 0.6]
max_fresh = 200
reruns = 2000
"#;

fn graded() -> Scenario {
    Scenario::from_toml(GRADED, "graded", "graded.toml").unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn graded_plan_and_contamination_checks_pass() {
    let out = run_all(&graded(), &|_| {});
    let checks = out.checks();
    assert!(checks.len() > 60, "{} checks", checks.len());
    let failed: Vec<_> = checks.iter().filter(|c| !c.passed()).collect();
    assert!(failed.is_empty(), "{failed:?}");
    for (i, maj) in [(0, false), (1, true)] {
        let ExperimentResult::Plan(p) = &out.results[i] else {
            panic!("plan result")
        };
        // Every cell carries its true gap; for pass@1 the graded one is the true one times
        // b = (1 - u)(1 - fpr - fnr) < 1.
        for c in &p.cells {
            let t = c.true_gap.expect("graded");
            assert!(c.gap > 0.0 && (maj || c.gap < t), "{c:?}");
        }
        let text = evalsim::report::planning::paragraph(p);
        assert!(text.starts_with("Every number below is graded"), "{text}");
        assert!(text.contains("true +"), "{text}");
        assert_eq!(text.contains("attractor shares [0.4, 0.3]"), maj, "{text}");
    }
    // Graded, the contamination gap is c b (r - E[p]) with b = (1 - u)(1 - fpr - fnr).
    let ExperimentResult::Contamination(c) = &out.results[2] else {
        panic!("contamination result")
    };
    assert!(c
        .rows
        .iter()
        .all(|r| r.share > 0.0 || r.power.exact <= 0.05));
}

#[test]
fn graded_plan_and_contamination_do_not_depend_on_thread_count() {
    // The vote plan at one k (its exact part is most of the cost) keeps the test short.
    let one_k = GRADED.replace("k = [3, 7]", "k = [3]");
    assert_ne!(one_k, GRADED);
    let s = Scenario::from_toml(&one_k, "graded", "graded.toml").unwrap_or_else(|e| panic!("{e}"));
    let run = |threads| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("pool");
        pool.install(|| serde_json::to_string(&run_all(&s, &|_| {})).expect("json"))
    };
    assert_eq!(run(1), run(3));
}
