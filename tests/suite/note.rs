//! The canonical `note` scenario reproduces its published table (docs/model.md, "The canonical scenario note").
use evalsim::exact::maj::{maj_at_k_all, maj_ceiling};
use evalsim::exact::pass::{mean, pass_at_k};
use evalsim::experiments::budget::BudgetMetric;
use evalsim::experiments::votes::Metric;
use evalsim::experiments::{run_all, ExperimentResult, Z_BOUND};
use evalsim::model::VoteRule;
use evalsim::scenario::Scenario;

fn note() -> Scenario {
    Scenario::load("note").expect("the embedded note scenario is valid")
}

fn rates() -> Vec<f64> {
    let s = note();
    s.models[0].rates_on(&s.benchmark)
}

fn pct1(x: f64) -> String {
    format!("{:.1}", 100.0 * x)
}

#[test]
fn exact_rows_of_the_published_table() {
    let p = rates();
    assert_eq!(p.len(), 30);
    assert_eq!(pct1(p[0]), "1.1");
    assert_eq!(pct1(mean(&p)), "52.9");
    let pass64: Vec<f64> = p.iter().map(|&x| pass_at_k(x, 64)).collect();
    assert_eq!(pct1(mean(&pass64)), "97.8");
    assert_eq!(
        pct1(mean(&maj_at_k_all(&p, 0.5, 64, VoteRule::Random))),
        "65.7"
    );
    assert_eq!(
        format!(
            "{:.2}",
            100.0 * mean(&maj_at_k_all(&p, 0.5, 16, VoteRule::Random))
        ),
        "65.69"
    );
    let maj2 = mean(&maj_at_k_all(&p, 0.5, 2, VoteRule::Random));
    assert!(
        (maj2 - mean(&p)).abs() < 1e-14,
        "maj@2 {maj2} must equal pass@1"
    );
    assert_eq!(p.iter().filter(|&&x| x > 1.0 / 3.0).count(), 20);
    assert!((maj_ceiling(&p, 0.5) - 20.0 / 30.0).abs() < 1e-15);
    // maj@k never exceeds the ceiling 66.7%.
    for k in [4, 16, 64, 256, 1024] {
        assert!(mean(&maj_at_k_all(&p, 0.5, k, VoteRule::Random)) < 2.0 / 3.0);
    }
}

#[test]
fn simulated_values_agree_within_monte_carlo_error() {
    let s = note();
    let out = run_all(&s, &|_| {});
    let checks = out.checks();
    assert!(checks.len() >= 100);
    for c in &checks {
        assert!(
            c.passed(),
            "{} {} {}: z = {}",
            c.experiment,
            c.quantity,
            c.cell,
            c.estimate.z
        );
        assert!(c.estimate.se > 0.0 || c.estimate.sim == c.estimate.exact);
    }
    // maj@16 of `long`: exact 65.69%; the simulation lands within Z_BOUND standard errors.
    let ExperimentResult::Curves(curves) = &out.results[0] else {
        panic!("first experiment is curves")
    };
    let pt = curves
        .points
        .iter()
        .find(|p| p.series == 0 && p.k == 16 && p.metric == Metric::MajAtK)
        .expect("maj@16 point");
    assert_eq!(format!("{:.2}", 100.0 * pt.estimate.exact), "65.69");
    assert!(pt.estimate.z.abs() <= Z_BOUND);
    assert!(
        pt.estimate.se > 0.0 && pt.estimate.se < 0.005,
        "4,000 votes per problem give an SE under half a point"
    );
}

#[test]
fn noise_rows_of_the_published_table() {
    let s = note();
    let out = run_all(&s, &|_| {});
    let seed = out
        .results
        .iter()
        .find_map(|r| match r {
            ExperimentResult::SeedVariance(v) => Some(v),
            _ => None,
        })
        .expect("note has seed-variance");
    let sd: Vec<String> = seed.rows.iter().map(|r| pct1(r.sd.exact)).collect();
    assert_eq!(sd, ["6.9", "3.4", "1.7", "0.9"]);
    assert_eq!(
        seed.rows.iter().map(|r| r.n).collect::<Vec<_>>(),
        [1, 4, 16, 64]
    );
    assert_eq!(pct1(seed.question_se), "6.1");
    // 20,000 simulated reruns at n = 1: the published simulation gave 6.93; ours lands within
    // the z bound of the exact 6.89.
    assert!(seed.rows[0].sd.z.abs() <= Z_BOUND);
    for r in &seed.rows {
        // SD falls as 1/sqrt(n).
        assert!((r.sd.exact * f64::from(r.n).sqrt() - seed.rows[0].sd.exact).abs() < 1e-12);
    }
    let h2h = out
        .results
        .iter()
        .find_map(|r| match r {
            ExperimentResult::HeadToHead(v) => Some(v),
            _ => None,
        })
        .expect("note has head-to-head");
    assert_eq!(
        format!("{:+.1}", 100.0 * (h2h.pass_at_1_b - h2h.pass_at_1_a)),
        "+3.0"
    );
    // The better model loses less often as n grows, and the exact rates sum to one.
    for w in h2h.rows.windows(2) {
        assert!(w[1].loss.exact < w[0].loss.exact);
    }
    for r in &h2h.rows {
        assert!((r.loss.exact + r.tie.exact + r.win.exact - 1.0).abs() < 1e-9);
    }
    let spread = out
        .results
        .iter()
        .find_map(|r| match r {
            ExperimentResult::VoteSpread(v) => Some(v),
            _ => None,
        })
        .expect("note has vote-spread");
    let k16 = spread.rows.iter().find(|r| r.k == 16).expect("k = 16");
    // maj@16 is far noisier than pass@1 averaged over the same 16 samples.
    assert!(k16.maj_sd.exact > 2.0 * k16.avg_sd.exact);
}

fn run_named(s: &Scenario, name: &str) -> ExperimentResult {
    let index = s
        .experiments
        .iter()
        .position(|e| e.name == name)
        .expect("experiment in note");
    evalsim::experiments::run(s, index, &|_| {})
}

#[test]
fn budget_crossover_is_single_short_below_long_above() {
    let s = note();
    let ExperimentResult::Budget(b) = run_named(&s, "budget") else {
        panic!("budget result")
    };
    assert_eq!(b.crossovers.len(), 1);
    let pair = &b.crossovers[0];
    assert_eq!(
        (pair.model_a.as_str(), pair.model_b.as_str()),
        ("long", "short")
    );
    assert_eq!(pair.crossings.len(), 1, "exactly one crossover in 1k..128k");
    let x = &pair.crossings[0];
    assert_eq!(x.leader_below, "short");
    assert_eq!(x.leader_above, "long");
    assert!((x.budget_tokens - 17_647.064).abs() < 1e-2);
    assert!(pair.gap_at_min < 0.0 && pair.gap_at_max > 0.0);
    // Acc(B) rises in B for both models and tends to pass@1 (exact).
    for (mi, m) in b.models.iter().enumerate() {
        let acc: Vec<f64> = b
            .budgets
            .iter()
            .map(|&budget| {
                b.point(mi, budget, BudgetMetric::Accuracy)
                    .expect("point")
                    .estimate
                    .exact
            })
            .collect();
        assert!(acc.windows(2).all(|w| w[1] > w[0]), "{}", m.model);
        let last = *acc.last().expect("budgets");
        assert!(last <= m.pass_at_1 && m.pass_at_1 - last < 0.005);
    }
}

#[test]
fn cost_table_is_sorted_with_the_frontier_marked() {
    let s = note();
    let ExperimentResult::Cost(c) = run_named(&s, "cost") else {
        panic!("cost result")
    };
    assert_eq!(c.strategies.len(), 6);
    assert!(c
        .strategies
        .windows(2)
        .all(|w| w[0].tokens_per_correct.exact <= w[1].tokens_per_correct.exact));
    // Uncapped: k = 1 accuracy is pass@1 and k > 1 is maj@k of the published table.
    let find = |m: &str, k: u32| {
        c.strategies
            .iter()
            .find(|s| s.model == m && s.k == k)
            .expect("strategy")
    };
    assert_eq!(pct1(find("long", 1).accuracy.exact), "52.9");
    let maj32 = mean(&maj_at_k_all(&rates(), 0.5, 32, VoteRule::Random));
    assert!((find("long", 32).accuracy.exact - maj32).abs() < 1e-12);
    // short k = 32 costs more than long k = 8 and is less accurate: off the frontier.
    assert!(!find("short", 32).frontier);
    assert!(find("short", 1).frontier && find("long", 32).frontier);
}
