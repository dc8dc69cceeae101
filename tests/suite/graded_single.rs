//! `seed-variance` and `budget` honour `unparsed` and `[model.grader]` (#17): every exact value is
//! that of the graded per-sample rate p~ = (1 - u) (p (1 - fnr) + (1 - p) fpr), the simulation
//! parses and grades each draw literally, every check passes, a perfect grader changes nothing
//! bit for bit, and the tables do not depend on the thread count.
use evalsim::exact::budget::accuracy_at_budget;
use evalsim::exact::noise::seed_sd;
use evalsim::experiments::budget::{BudgetCurves, BudgetMetric};
use evalsim::experiments::noise::SeedVariance;
use evalsim::experiments::{run_all, ExperimentResult, RunOutput};
use evalsim::scenario::Scenario;

const HEAD: &str = "title = \"t\"\nseed = 9\n[benchmark]\nproblems = 15\nmu = 0.1\nsigma = 1.3\n";
const TOKENS: &str =
    "[model.tokens]\nmedian_tokens = 1500\nhard_growth = 1.0\nwrong_factor = 1.6\nsigma = 0.5\n";
const SEED: &str =
    "[[experiment]]\nkind = \"seed-variance\"\nmodel = \"m\"\nn = [1, 3, 8]\nreruns = 6000\n";
const BUDGET: &str = "[[experiment]]\nkind = \"budget\"\nmodels = [\"m\", \"n\"]\nbudgets = [800, 2000, 6000, 1e9]\ntraces = 6000\n";

use super::common::result;

fn scenario(text: &str) -> Scenario {
    Scenario::from_toml(text, "t", "t.toml").unwrap_or_else(|e| panic!("{e}"))
}

fn run(text: &str) -> RunOutput {
    run_all(&scenario(text), &|_| {})
}

fn failed(out: &RunOutput) -> Vec<String> {
    out.checks()
        .iter()
        .filter(|c| !c.passed())
        .map(|c| format!("{} {} z={}", c.cell, c.quantity, c.estimate.z))
        .collect()
}

fn seed_result(out: &RunOutput) -> SeedVariance {
    result!(out, SeedVariance)
}

fn budget_result(out: &RunOutput) -> BudgetCurves {
    result!(out, Budget)
}

/// The model keys of each grading case: unparsed alone, a grader alone (fixed and random
/// placement, and with `shift_sd`), and both (an unparsed sample is never graded correct).
const CASES: [&str; 5] = [
    "unparsed = 0.25\n",
    "[model.grader]\nfpr = 0.15\nfnr = 0.1\n",
    "shift_sd = 0.8\nunparsed = 0.1\n",
    "shift_sd = 0.5\n[model.grader]\nfpr = 0.3\n",
    "unparsed = 0.2\n[model.grader]\nfpr = 0.1\nfnr = 0.2\n",
];

#[test]
fn seed_variance_of_graded_samples_is_exact_and_every_check_passes() {
    for (i, keys) in CASES.iter().enumerate() {
        for placement in ["quantiles", "random"] {
            let head = HEAD.replace(
                "sigma = 1.3\n",
                &format!("sigma = 1.3\nplacement = \"{placement}\"\n"),
            );
            let text = format!("{head}[[model]]\nname = \"m\"\nattractor = 0.4\n{keys}{SEED}");
            let out = run(&text);
            assert!(
                failed(&out).is_empty(),
                "case {i} {placement}: {:?}",
                failed(&out)
            );
            if placement == "random" {
                continue;
            }
            // Fixed benchmark: the exact mean and SD are those of the graded rates.
            let s = scenario(&text);
            let m = &s.models[0];
            let graded: Vec<f64> = m
                .rates_on(&s.benchmark)
                .iter()
                .map(|&p| {
                    let parsed = 1.0 - m.unparsed;
                    let g = m
                        .grader
                        .map_or(p, |g| p * (1.0 - g.fnr) + (1.0 - p) * g.fpr);
                    parsed * g
                })
                .collect();
            let mean = graded.iter().sum::<f64>() / graded.len() as f64;
            let r = seed_result(&out);
            for row in &r.rows {
                assert!(
                    (row.mean.exact - mean).abs() < 1e-14,
                    "case {i}: {} {mean}",
                    row.mean.exact
                );
                let sd = seed_sd(&graded, row.n);
                assert!(
                    (row.sd.exact / sd - 1.0).abs() < 1e-12,
                    "case {i}: {} {sd}",
                    row.sd.exact
                );
            }
        }
    }
}

#[test]
fn budget_grades_kept_answers_and_every_check_passes() {
    for (i, keys) in CASES.iter().enumerate() {
        let text = format!("{HEAD}[[model]]\nname = \"m\"\nattractor = 0.4\n{keys}{TOKENS}[[model]]\nname = \"n\"\nshift = 0.4\nattractor = 0.3\n{TOKENS}{BUDGET}");
        let out = run(&text);
        assert!(failed(&out).is_empty(), "case {i}: {:?}", failed(&out));
        let b = budget_result(&out);
        let s = scenario(&text);
        let m = &s.models[0];
        let rates = m.rates_on(&s.benchmark);
        // Without a cap the graded accuracy is graded pass@1.
        let graded: f64 = rates
            .iter()
            .map(|&p| {
                (1.0 - m.unparsed)
                    * m.grader
                        .map_or(p, |g| p * (1.0 - g.fnr) + (1.0 - p) * g.fpr)
            })
            .sum::<f64>()
            / rates.len() as f64;
        assert!((b.models[0].pass_at_1 - graded).abs() < 1e-15);
        let top = b.point(0, 1e9, BudgetMetric::Accuracy).expect("point");
        assert!(
            (top.estimate.exact - graded).abs() < 1e-9,
            "{} {graded}",
            top.estimate.exact
        );
        // Truncation does not depend on grading: the same as the ungraded model's.
        let plain = scenario(&text.replace(
            keys,
            if keys.starts_with("shift_sd") {
                &keys[..keys.find('\n').unwrap() + 1]
            } else {
                ""
            },
        ));
        let pout = run_all(&plain, &|_| {});
        let pb = budget_result(&pout);
        for metric in [BudgetMetric::TruncationRate, BudgetMetric::TokensPerSample] {
            for &budget in &b.budgets {
                assert_eq!(
                    b.point(0, budget, metric).unwrap().estimate.exact,
                    pb.point(0, budget, metric).unwrap().estimate.exact
                );
            }
        }
        // The second model is ungraded: its accuracy is the plain closed form, bit for bit.
        let n_rates = s.models[1].rates_on(&s.benchmark);
        let lengths = s.models[1].tokens.expect("tokens");
        let acc = accuracy_at_budget(&n_rates, &s.benchmark.difficulty(), &lengths, 2000.0);
        assert_eq!(
            b.point(1, 2000.0, BudgetMetric::Accuracy)
                .unwrap()
                .estimate
                .exact,
            acc
        );
    }
}

#[test]
fn a_perfect_grader_leaves_seed_variance_and_budget_bit_for_bit() {
    let plain = format!("{HEAD}[[model]]\nname = \"m\"\nattractor = 0.4\n{TOKENS}[[model]]\nname = \"n\"\nshift = 0.4\nattractor = 0.3\n{TOKENS}{SEED}{BUDGET}");
    let perfect = plain.replacen(
        "attractor = 0.4\n",
        "attractor = 0.4\nunparsed = 0.0\n[model.grader]\nfpr = 0.0\nfnr = 0.0\n",
        1,
    );
    let (a, b) = (run(&plain), run(&perfect));
    let json = |o: &RunOutput| serde_json::to_string(&o.results).expect("json");
    assert_eq!(
        json(&a),
        json(&b).replace(",\"grader\":{\"fpr\":0.0,\"fnr\":0.0}", "")
    );
}

#[test]
fn graded_seed_variance_and_budget_are_identical_for_1_and_3_threads() {
    let text = format!("{HEAD}[[model]]\nname = \"m\"\nattractor = 0.4\nunparsed = 0.2\n{TOKENS}[[model]]\nname = \"n\"\nshift = 0.4\nattractor = 0.3\n{TOKENS}[model.grader]\nfpr = 0.2\n{SEED}{BUDGET}");
    let s = scenario(&text);
    let pool = |t| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build()
            .expect("pool")
    };
    let one = pool(1).install(|| run_all(&s, &|_| {}));
    let three = pool(3).install(|| run_all(&s, &|_| {}));
    let json = |o: &RunOutput| serde_json::to_string(&o.results).expect("json");
    assert_eq!(json(&one), json(&three));
}

fn cost_result(out: &RunOutput) -> evalsim::experiments::cost::CostTable {
    result!(out, Cost)
}

/// `cost` with several attractors, split, unparsed and a grader: every check passes with a cap;
/// without a cap each strategy's exact accuracy is the one `curves` reports (pass@1 for k = 1,
/// graded maj@k for k > 1), and k = 1 under a cap is budget's graded Acc(B).
#[test]
fn cost_honours_answer_modes_and_the_grader_with_the_values_of_curves() {
    for keys in [
        "attractor = [0.35, 0.25]\nsplit = 0.2\n",
        "attractor = 0.4\nunparsed = 0.15\n",
        "attractor = 0.4\n[model.grader]\nfpr = 0.1\nfnr = 0.05\n",
    ] {
        let models = format!("[[model]]\nname = \"m\"\n{keys}{TOKENS}[[model]]\nname = \"n\"\nshift = 0.4\nattractor = 0.3\n{TOKENS}");
        let capped = format!("{HEAD}{models}[[experiment]]\nkind = \"cost\"\nk = [1, 3, 8]\ncap = 2500\nvotes = 4000\ntraces = 6000\n[[experiment]]\nkind = \"budget\"\nmodels = [\"m\"]\nbudgets = [1000, 2500]\ntraces = 1000\n");
        let out = run(&capped);
        assert!(failed(&out).is_empty(), "{keys}: {:?}", failed(&out));
        let c = cost_result(&out);
        let b = budget_result(&out);
        let one = c
            .strategies
            .iter()
            .find(|s| s.model == "m" && s.k == 1)
            .expect("k=1");
        let acc = b.point(0, 2500.0, BudgetMetric::Accuracy).expect("point");
        assert!(
            (one.accuracy.exact - acc.estimate.exact).abs() < 1e-15,
            "{keys}"
        );
        let free = format!("{HEAD}{models}[[experiment]]\nkind = \"cost\"\nk = [1, 3, 8]\nvotes = 500\ntraces = 500\n[[experiment]]\nkind = \"curves\"\nk = [1, 3, 8]\nvotes = 300\n");
        let out = run(&free);
        let c = cost_result(&out);
        let cv = result!(out, Curves);
        for s in c.strategies.iter().filter(|s| s.model == "m") {
            let metric = if s.k == 1 {
                evalsim::experiments::votes::Metric::PassAtK
            } else {
                evalsim::experiments::votes::Metric::MajAtK
            };
            let pt = cv
                .points
                .iter()
                .find(|p| p.series == 0 && p.k == s.k && p.metric == metric)
                .expect("point");
            assert!(
                (s.accuracy.exact - pt.estimate.exact).abs() < 1e-14,
                "{keys} k={}: cost {} curves {}",
                s.k,
                s.accuracy.exact,
                pt.estimate.exact
            );
        }
    }
}

/// `vote-spread` with several attractors, split and unparsed: every check passes, the exact mean
/// of maj@k is the one `curves` reports and the average is that of the graded rate (1 - u) p.
#[test]
fn vote_spread_honours_answer_modes_with_the_values_of_curves() {
    for rule in ["random", "strict", "absolute"] {
        let text = format!("{HEAD}[[model]]\nname = \"m\"\nattractor = [0.3, 0.25]\nunparsed = 0.1\nsplit = 0.15\nvote_rule = \"{rule}\"\n[[experiment]]\nkind = \"vote-spread\"\nmodel = \"m\"\nk = [3, 8]\nreruns = 3000\n[[experiment]]\nkind = \"curves\"\nk = [3, 8]\nvotes = 200\n");
        let out = run(&text);
        assert!(failed(&out).is_empty(), "{rule}: {:?}", failed(&out));
        let spread = result!(out, VoteSpread);
        let cv = result!(out, Curves);
        for row in &spread.rows {
            let maj = cv
                .points
                .iter()
                .find(|p| p.k == row.k && p.metric == evalsim::experiments::votes::Metric::MajAtK)
                .expect("maj");
            assert_eq!(row.maj_mean.exact, maj.estimate.exact, "{rule} k={}", row.k);
            assert!((row.avg_mean.exact - cv.series[0].pass_at_1).abs() < 1e-15);
        }
    }
}

/// A grader on top of several attractors, split and unparsed (#17 item 4): `curves` grades every
/// metric (per-sample metrics at p~ = (1 - u)(p (1 - fnr) + (1 - p) fpr), maj@k on the pick) and
/// keeps the true value beside it; `attractor-sweep` over a share or `split`, and over
/// `grader_fpr`, grade every series; `head-to-head` compares graded pass@1; every check passes.
#[test]
fn a_grader_composes_with_answer_modes_in_curves_sweeps_and_head_to_head() {
    let model = "[[model]]\nname = \"m\"\nattractor = [0.3, 0.2]\nunparsed = 0.1\nsplit = 0.2\n[model.grader]\nfpr = 0.08\nfnr = 0.12\n[[model]]\nname = \"n\"\nshift = 0.3\nattractor = 0.4\n";
    let exps = "[[experiment]]\nkind = \"curves\"\nk = [1, 3, 8]\nvotes = 3000\n[[experiment]]\nkind = \"attractor-sweep\"\nmodel = \"m\"\nattractor = [0.1, 0.4]\nshare = 2\nk = [3, 8]\nvotes = 2000\n[[experiment]]\nname = \"split-sweep\"\nkind = \"attractor-sweep\"\nmodel = \"m\"\nsplit = [0.0, 0.4]\nk = [4]\nvotes = 2000\n[[experiment]]\nname = \"fpr-sweep\"\nkind = \"attractor-sweep\"\nmodel = \"m\"\ngrader_fpr = [0.0, 0.2]\nk = [1, 8]\nvotes = 2000\n[[experiment]]\nkind = \"head-to-head\"\na = \"m\"\nb = \"n\"\nn = [1, 4]\nreruns = 3000\n";
    let text = format!("{HEAD}{model}{exps}");
    let out = run(&text);
    assert!(failed(&out).is_empty(), "{:?}", failed(&out));
    let s = scenario(&text);
    let rates = s.models[0].rates_on(&s.benchmark);
    let graded: f64 = rates
        .iter()
        .map(|&p| 0.9 * (p * 0.88 + (1.0 - p) * 0.08))
        .sum::<f64>()
        / rates.len() as f64;
    let curves = result!(out, Curves);
    let p1 = curves
        .points
        .iter()
        .find(|p| {
            p.series == 0 && p.k == 1 && p.metric == evalsim::experiments::votes::Metric::PassAtK
        })
        .expect("pass@1");
    assert!(
        (p1.estimate.exact - graded).abs() < 1e-14,
        "{} {graded}",
        p1.estimate.exact
    );
    // The true value beside it is pass@1 of the parsed rate (1 - u) p.
    let truth = rates.iter().map(|&p| 0.9 * p).sum::<f64>() / rates.len() as f64;
    assert!((p1.truth.expect("truth").exact - truth).abs() < 1e-14);
    // Every graded sweep series carries the grader and a truth beside each point.
    for r in &out.results {
        if let ExperimentResult::AttractorSweep(v) = r {
            assert!(
                v.series.iter().all(|s| s.grader.is_some()),
                "{}",
                v.experiment
            );
            assert!(
                v.points.iter().all(|p| p.truth.is_some()),
                "{}",
                v.experiment
            );
        }
    }
    let ExperimentResult::HeadToHead(h) = out.results.last().expect("h2h") else {
        panic!("head-to-head last")
    };
    assert!(
        (h.pass_at_1_a - graded).abs() < 1e-14,
        "{} {graded}",
        h.pass_at_1_a
    );
}

/// `vote-spread` with a grader, alone and on top of several shares and unparsed: both scores are
/// graded (maj@k on the pick, the average per parsed sample), the exact means equal `curves`'
/// graded values, and every check passes.
#[test]
fn vote_spread_grades_the_pick_and_every_parsed_sample() {
    for keys in [
        "attractor = 0.4\n[model.grader]\nfpr = 0.12\nfnr = 0.08\n",
        "attractor = [0.3, 0.2]\nunparsed = 0.15\nsplit = 0.1\n[model.grader]\nfpr = 0.05\nfnr = 0.2\n",
    ] {
        let text = format!("{HEAD}[[model]]\nname = \"m\"\n{keys}[[experiment]]\nkind = \"vote-spread\"\nmodel = \"m\"\nk = [3, 8]\nreruns = 3000\n[[experiment]]\nkind = \"curves\"\nk = [1, 3, 8]\nvotes = 200\n");
        let out = run(&text);
        assert!(failed(&out).is_empty(), "{keys}: {:?}", failed(&out));
        let spread = result!(out, VoteSpread);
        assert!(spread.grader.is_some());
        let cv = result!(out, Curves);
        let point = |k: u32, m: evalsim::experiments::votes::Metric| {
            cv.points
                .iter()
                .find(|p| p.k == k && p.metric == m)
                .expect("point")
                .estimate
                .exact
        };
        let pass1 = point(1, evalsim::experiments::votes::Metric::PassAtK);
        for row in &spread.rows {
            let maj = point(row.k, evalsim::experiments::votes::Metric::MajAtK);
            assert!((row.maj_mean.exact - maj).abs() < 1e-15, "{keys} k={}", row.k);
            assert!((row.avg_mean.exact - pass1).abs() < 1e-15, "{keys}");
        }
    }
}
