//! n@k by answer clusters wired end to end: the shipped `submissions` scenario, exact values
//! between maj@k and pass@k, the graded n@k of a model with extraction and a grader, every
//! simulated number within the check rule, and determinism across thread counts.
use evalsim::exact::modes::AnswerShares;
use evalsim::exact::submit::submit_at_k;
use evalsim::experiments::votes::{Metric, VoteCurves};
use evalsim::experiments::{run_all, ExperimentResult, RunOutput};
use evalsim::model::Grader;
use evalsim::scenario::spec::CurvesSpec;
use evalsim::scenario::Scenario;

fn failed(out: &RunOutput) -> Vec<String> {
    out.checks()
        .iter()
        .filter(|c| !c.passed())
        .map(|c| format!("{} {} {:?}", c.quantity, c.cell, c.estimate))
        .collect()
}

fn curves(out: &RunOutput) -> &VoteCurves {
    match &out.results[0] {
        ExperimentResult::Curves(c) => c,
        _ => panic!("curves first"),
    }
}

fn exact(c: &VoteCurves, si: usize, k: u32, metric: Metric) -> f64 {
    c.points
        .iter()
        .find(|p| p.series == si && p.k == k && p.metric == metric)
        .map(|p| p.estimate.exact)
        .unwrap_or_else(|| panic!("no {} at k = {k}", metric.name()))
}

#[test]
fn shipped_submissions_scenario_passes_every_check_and_n_at_k_sits_between_maj_and_pass() {
    let s = Scenario::load("submissions").expect("built-in");
    let out = run_all(&s, &|_| {});
    assert!(failed(&out).is_empty(), "{:?}", failed(&out));
    let c = curves(&out);
    for si in 0..c.series.len() {
        for &k in &c.k {
            let maj = exact(c, si, k, Metric::MajAtK);
            let pass = exact(c, si, k, Metric::PassAtK);
            // 1@k is maj@k under random ties (the recurrence and the enumeration agree).
            let one = exact(c, si, k, Metric::SubmitAtK(1));
            assert!((one - maj).abs() < 1e-12, "k={k}: {one} {maj}");
            let mut last = one;
            for n in [2, 5] {
                let v = exact(c, si, k, Metric::SubmitAtK(n));
                assert!(v >= last - 1e-15 && v <= pass + 1e-15, "k={k} n={n}");
                last = v;
            }
        }
    }
    // The story: the stubborn model's vote stalls, and a second submission recovers it.
    let stubborn = c.series.iter().position(|s| s.model == "stubborn").unwrap();
    let kmax = *c.k.last().unwrap();
    let maj = exact(c, stubborn, kmax, Metric::MajAtK);
    let two = exact(c, stubborn, kmax, Metric::SubmitAtK(2));
    assert!(maj < 0.65 && two > 0.95, "maj {maj}, 2@k {two}");
}

#[test]
fn graded_n_at_k_of_a_model_with_extraction_is_the_enumeration_and_passes_its_checks() {
    let src = r#"
seed = 8
[benchmark]
problems = 10
mu = 0.3
sigma = 1.2
[[model]]
name = "m"
shift = 0.0
attractor = 0.5
unparsed = 0.1
split = 0.25
[model.grader]
fpr = 0.08
fnr = 0.15
[[experiment]]
kind = "curves"
k = [1, 3, 6]
submissions = [2, 4]
votes = 3000
"#;
    let s = Scenario::from_toml(src, "t", "t.toml").expect("valid scenario");
    let out = run_all(&s, &|_| {});
    assert!(failed(&out).is_empty(), "{:?}", failed(&out));
    let c = curves(&out);
    let rates = s.models[0].rates_on(&s.benchmark);
    let ext = evalsim::exact::modes::Extraction {
        unparsed: 0.1,
        split: 0.25,
    };
    let g = Grader {
        fpr: 0.08,
        fnr: 0.15,
    };
    for &k in &c.k {
        for n in [2, 4] {
            let pt = c
                .points
                .iter()
                .find(|p| p.k == k && p.metric == Metric::SubmitAtK(n))
                .expect("point");
            let per = |grader| {
                rates
                    .iter()
                    .map(|&p| submit_at_k(&AnswerShares::new(p, &[0.5], ext), k, n, grader).0)
                    .sum::<f64>()
                    / rates.len() as f64
            };
            assert_eq!(pt.estimate.exact, per(Some(g)), "graded k={k} n={n}");
            let truth = pt.truth.expect("a graded point keeps the true value");
            assert_eq!(truth.exact, per(None), "true k={k} n={n}");
        }
    }
}

#[test]
fn n_at_k_by_verifier_passes_its_checks_and_one_pick_is_best_at_k() {
    let src = r#"
seed = 4
[benchmark]
problems = 12
mu = 0.0
sigma = 1.6
[[model]]
name = "checked"
shift = 0.0
attractor = 0.3
[model.verifier]
kind = "threshold"
tpr = 0.85
fpr = 0.12
fallback = "random"
[[model]]
name = "rewarded"
shift = -0.5
attractor = 0.3
unparsed = 0.05
[model.verifier]
kind = "score"
separation = 1.5
[model.grader]
fpr = 0.05
fnr = 0.05
[[model]]
name = "abstain"
shift = 0.0
attractor = 0.5
[model.verifier]
kind = "threshold"
tpr = 0.6
fpr = 0.3
fallback = "abstain"
[[experiment]]
kind = "curves"
k = [1, 3, 8]
submissions = [1, 2, 4]
votes = 3000
"#;
    let s = Scenario::from_toml(src, "t", "t.toml").expect("valid scenario");
    let out = run_all(&s, &|_| {});
    assert!(failed(&out).is_empty(), "{:?}", failed(&out));
    let c = curves(&out);
    for si in 0..c.series.len() {
        for &k in &c.k {
            let best = exact(c, si, k, Metric::BestAtK);
            let one = exact(c, si, k, Metric::VerifiedAtK(1));
            assert!(
                (one - best).abs() < 1e-11,
                "series {si} k={k}: {one} {best}"
            );
            let two = exact(c, si, k, Metric::VerifiedAtK(2));
            let four = exact(c, si, k, Metric::VerifiedAtK(4));
            assert!(
                one <= two + 1e-15 && two <= four + 1e-15,
                "series {si} k={k}"
            );
        }
    }
}

/// `sweep --set experiment.curves.submissions=2,3,5` gives each cell one n; every cell goes
/// through the file's validator (0 is refused there, naming the key).
#[test]
fn submissions_was_not_sweepable() {
    use evalsim::scenario::grid::{is_whole, numeric_paths, set, Value};
    use evalsim::scenario::resolve::parse;
    use evalsim::scenario::spec::ExperimentSpec;
    let src = evalsim::scenario::NAMED
        .iter()
        .find(|(n, _)| *n == "submissions")
        .expect("built in")
        .1;
    let raw = parse(src, "submissions.toml").expect("parses");
    let path = "experiment.curves.submissions";
    assert!(numeric_paths(&raw).iter().any(|p| p == path));
    assert_eq!(is_whole(&raw, path).ok(), Some(true));
    let cell = |n: u64| {
        let mut r = raw.clone();
        set(&mut r, path, Value::Whole(n)).expect("set");
        Scenario::from_raw(r, src, "submissions", "submissions.toml")
    };
    let s = cell(3).expect("valid");
    let ExperimentSpec::Curves(CurvesSpec { submissions, .. }) = &s.experiments[0].spec else {
        panic!("curves")
    };
    assert_eq!(submissions, &vec![3]);
    let e = cell(0).expect_err("n = 0 submits nothing");
    assert!(e.to_string().contains("submissions"), "{e}");
    // Each cell's n@k is the exact n@k of that n.
    let out = run_all(&cell(5).expect("valid"), &|_| {});
    let c = curves(&out);
    assert!(failed(&out).is_empty(), "{:?}", failed(&out));
    assert!(exact(c, 1, 64, Metric::SubmitAtK(5)) >= exact(c, 1, 64, Metric::MajAtK));
}
