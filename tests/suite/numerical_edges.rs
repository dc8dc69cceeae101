//! Numerical edges: p in {0, 1}, attractor in {0, 1}, k = 1, N = 1, n = 1, explicit rates,
//! maj@k exact at k = 4,096, the pass@k estimator at n = 100,000, and se = 0 checks.
use evalsim::analyze::estimators::{pass_at_k as pass_at_k_hat, pass_at_k_curve};
use evalsim::exact::maj::{maj_at_k, maj_at_k_all};
use evalsim::exact::noise::seed_sd;
use evalsim::exact::pass::{pass_at_k, pass_hat_k};
use evalsim::experiments::{run_all, Estimate, Z_BOUND};
use evalsim::model::VoteRule;
use evalsim::scenario::Scenario;
use evalsim::sim::votes::{simulate, VoteCell};

const RULES: [VoteRule; 3] = [VoteRule::Random, VoteRule::Strict, VoteRule::Absolute];

fn scenario(bench: &str, models: &str, k: &str) -> Scenario {
    let src = format!(
        "seed = 5\n[benchmark]\n{bench}\n{models}\n[[experiment]]\nkind = \"curves\"\nk = {k}\nvotes = 2000\n"
    );
    Scenario::from_toml(&src, "edge", "edge.toml").unwrap_or_else(|e| panic!("{e}\n{src}"))
}

fn model(name: &str, extra: &str, attractor: f64) -> String {
    format!("[[model]]\nname = \"{name}\"\n{extra}\nattractor = {attractor}\n")
}

#[test]
fn rates_of_0_and_1_are_exact_with_se_0_and_z_0() {
    // Every problem certain: the simulation cannot differ from the exact value.
    let models = model("zero_one_a0", "", 0.0) + &model("zero_one_a1", "", 1.0);
    let s = scenario("rates = [0.0, 1.0, 1.0, 0.0]", &models, "[1, 2, 3, 64]");
    let out = run_all(&s, &|_| {});
    let checks = out.checks();
    assert!(!checks.is_empty());
    for c in checks {
        assert_eq!(c.estimate.se, 0.0, "{c:?}");
        assert_eq!(c.estimate.z, 0.0, "{c:?}");
        assert_eq!(c.estimate.sim, c.estimate.exact, "{c:?}");
        assert_eq!(c.estimate.exact, 0.5, "{c:?}");
    }
    // Per problem, through the sampler itself.
    for rule in RULES {
        for k in [1u32, 2, 7, 64] {
            let cell = VoteCell {
                k,
                p: vec![0.0, 1.0],
                alpha: vec![0.5, 0.5],
                rule,
                modes: None,
            };
            let c = simulate(3, &[1], &[cell], 5000, &|_| {});
            assert_eq!(
                (c[0][0].wins, c[0][0].any_correct, c[0][0].all_correct),
                (0, 0, 0)
            );
            assert_eq!(
                (c[0][1].wins, c[0][1].any_correct, c[0][1].all_correct),
                (5000, 5000, 5000)
            );
        }
    }
    let e = Estimate::new(1.0, 1.0, 0.0);
    assert_eq!((e.z, e.ci_low, e.ci_high), (0.0, 1.0, 1.0));
    assert!(Estimate::new(1.0, 0.9, 0.0).z.is_infinite());
}

#[test]
fn explicit_rates_and_attractor_0_and_1_agree_with_simulation() {
    let models = model("base", "", 0.0)
        + &model("sticky", "", 1.0)
        + &model("own", "rates = [0.0, 0.05, 0.3, 0.5, 0.7, 1.0]", 0.5);
    let s = scenario(
        "rates = [0.0, 0.1, 0.33, 0.5, 0.9, 1.0]",
        &models,
        "[1, 2, 3, 4, 15, 16, 128]",
    );
    let out = run_all(&s, &|_| {});
    for c in out.checks() {
        assert!(c.estimate.z.abs() <= Z_BOUND, "{c:?}");
        assert!((0.0..=1.0).contains(&c.estimate.exact) && (0.0..=1.0).contains(&c.estimate.sim));
    }
}

#[test]
fn attractor_0_and_1_limits() {
    // a = 1: every wrong answer is the same, so the correct answer needs p > 1/2 in the limit.
    assert!(maj_at_k(0.6, 1.0, 1001, VoteRule::Random) > 0.99);
    assert!(maj_at_k(0.4, 1.0, 1001, VoteRule::Random) < 0.01);
    // a = 0: wrong answers never repeat, so any p > 0 wins as k grows.
    assert!(maj_at_k(0.05, 0.0, 1000, VoteRule::Random) > 0.99);
    for rule in RULES {
        for a in [0.0, 1.0] {
            for p in [0.0, 0.3, 1.0] {
                let m = maj_at_k(p, a, 9, rule);
                assert!((0.0..=1.0).contains(&m) && m <= pass_at_k(p, 9) + 1e-12);
            }
            assert_eq!(maj_at_k(0.0, a, 9, rule), 0.0);
            assert!((maj_at_k(1.0, a, 9, rule) - 1.0).abs() < 1e-12);
        }
    }
}

#[test]
fn k_1_is_pass_at_1_for_every_rule() {
    for rule in RULES {
        for p in [0.0, 0.01, 0.5, 0.99, 1.0] {
            for a in [0.0, 0.5, 1.0] {
                assert!(
                    (maj_at_k(p, a, 1, rule) - p).abs() < 1e-14,
                    "{rule:?} p={p} a={a}"
                );
            }
            assert!((pass_at_k(p, 1) - p).abs() < 1e-15);
            assert!((pass_hat_k(p, 1) - p).abs() < 1e-15);
        }
    }
}

#[test]
fn one_problem_benchmark_runs() {
    let s = scenario(
        "problems = 1\nmu = 0.4\nsigma = 1.0",
        &model("m", "shift = 0.0", 0.5),
        "[1, 2, 5]",
    );
    assert_eq!(s.benchmark.rates().len(), 1);
    // One problem: the only quantile is the median, expit(mu).
    let p = s.benchmark.rates()[0];
    assert!((p - 1.0 / (1.0 + (-0.4f64).exp())).abs() < 1e-12);
    let out = run_all(&s, &|_| {});
    assert!(out.checks().iter().all(|c| c.passed()));
}

#[test]
fn one_sample_per_problem_seed_sd() {
    let rates = [0.1, 0.5, 0.9];
    let sd = seed_sd(&rates, 1);
    let want = (0.09f64 + 0.25 + 0.09).sqrt() / 3.0;
    assert!((sd - want).abs() < 1e-15);
    assert_eq!(seed_sd(&[0.0, 1.0], 1), 0.0);
}

#[test]
fn maj_at_k_exact_at_k_4096() {
    let k = 4096;
    for rule in RULES {
        for a in [0.0, 0.25, 0.5, 1.0] {
            let rates = [0.0, 1e-6, 0.01, 0.2, 0.3, 0.5, 0.7, 0.99, 1.0];
            let all = maj_at_k_all(&rates, a, k, rule);
            for (&p, &m) in rates.iter().zip(&all) {
                assert!(
                    m.is_finite() && (0.0..=1.0).contains(&m),
                    "{rule:?} a={a} p={p}: {m}"
                );
                assert!(m <= pass_at_k(p, k) + 1e-9);
                assert!((m - maj_at_k(p, a, k, rule)).abs() < 1e-9);
            }
        }
        // Far from the threshold a / (1 + a) = 1/3 the vote is decided.
        assert!(maj_at_k(0.45, 0.5, k, rule) > 1.0 - 1e-9 || rule == VoteRule::Absolute);
        assert!(maj_at_k(0.2, 0.5, k, rule) < 1e-9);
    }
    // The absolute rule needs more than half: p = 0.6 wins, p = 0.45 loses.
    assert!(maj_at_k(0.6, 0.5, k, VoteRule::Absolute) > 1.0 - 1e-9);
    assert!(maj_at_k(0.45, 0.5, k, VoteRule::Absolute) < 1e-9);
}

#[test]
fn pass_at_k_estimator_at_n_100000_does_not_overflow() {
    let n = 100_000;
    for (c, k) in [
        (1, 1),
        (1, 50_000),
        (500, 1000),
        (50_000, 2),
        (99_999, 100_000),
        (0, 100_000),
    ] {
        let v = pass_at_k_hat(n, c, k).expect("valid");
        assert!(
            v.is_finite() && (0.0..=1.0).contains(&v),
            "c={c} k={k}: {v}"
        );
    }
    assert!((pass_at_k_hat(n, 1, 50_000).expect("valid") - 0.5).abs() < 1e-12);
    assert_eq!(pass_at_k_hat(n, 0, 100_000).expect("valid"), 0.0);
    assert_eq!(pass_at_k_hat(n, 1, 100_000).expect("valid"), 1.0);
    let curve = pass_at_k_curve(n, 700, 100_000).expect("valid");
    for k in [1usize, 10, 1000, 99_300, 99_301, 100_000] {
        let direct = pass_at_k_hat(n, 700, k).expect("valid");
        assert!((curve[k - 1] - direct).abs() < 1e-9, "k={k}");
    }
    assert!(
        pass_at_k_hat(n, 3, n + 1).is_err(),
        "k > n is an error, never a silent 1"
    );
}

#[test]
fn normal_cdf_matches_high_precision_references() {
    // 60-digit mpmath values (tests/fixtures/numerics/make_normal_cdf.py) over [-38.5, 9]: both
    // tails to 1e-15 relative wherever the reference is at least 1e-300, 1e-300 absolute below.
    let table = include_str!("../fixtures/numerics/normal_cdf.csv");
    let mut worst: f64 = 0.0;
    let mut rows = 0;
    for line in table.lines().skip(1) {
        let v: Vec<f64> = line
            .split(',')
            .map(|t| t.parse().expect("number"))
            .collect();
        let (x, want_cdf, want_sf) = (v[0], v[1], v[2]);
        let (got_cdf, got_sf) = evalsim::exact::normal::cdf_and_sf(x);
        for (got, want) in [(got_cdf, want_cdf), (got_sf, want_sf)] {
            if want >= 1e-300 {
                worst = worst.max(((got - want) / want).abs());
            } else {
                assert!((got - want).abs() <= 1e-300, "x = {x}: {got:e} vs {want:e}");
            }
        }
        rows += 1;
    }
    assert!(rows > 1900, "{rows} rows");
    eprintln!("normal cdf/sf: {rows} points, max relative error {worst:e}");
    assert!(worst < 1e-15, "max relative error {worst:e}");
}

#[test]
fn maj_seed_sd_keeps_its_digits_when_maj_is_within_1e_16_of_1() {
    // N = 1, p = 0.8977, a = 0.40754, strict, k = 75: the chance of losing the vote is
    // 4.0650333180601280e-28 (mpmath, 60 digits); 1 - maj@k read 1.1e-16 and the SD 1.05e-8.
    use evalsim::exact::maj::maj_at_k_all_with_loss;
    use evalsim::exact::noise::vote_seed_sd;
    let pairs = maj_at_k_all_with_loss(&[0.8977], 0.40754, 75, VoteRule::Strict);
    let (m, loss) = pairs[0];
    let want = 4.065_033_318_060_128e-28;
    assert!(((loss - want) / want).abs() < 1e-12, "loss {loss:e}");
    assert_eq!(m, 1.0);
    let sd = vote_seed_sd(&[m], &[loss]);
    let want_sd = 2.016_192_778_000_191_1e-14;
    assert!(((sd - want_sd) / want_sd).abs() < 1e-12, "sd {sd:e}");
}

#[test]
fn pass_at_k_and_its_complement_keep_their_digits_at_the_edges() {
    use evalsim::exact::pass::{pass_at_k_complement, pass_hat_k_complement};
    // mpmath references for the exact f64 inputs.
    let close = |got: f64, want: f64| ((got - want) / want).abs() < 1e-13;
    assert!(close(pass_at_k(1e-9, 1024), 1.023_999_476_224_178_5e-6));
    assert!(close(
        pass_at_k_complement(0.5, 1024),
        5.562_684_646_268e-309
    ));
    assert!(close(
        pass_hat_k_complement(0.999, 1024),
        0.641_028_521_810_289_9
    ));
    assert!(close(
        pass_hat_k_complement(0.999, 3),
        0.002_997_001_000_000_002_7
    ));
    assert_eq!(pass_at_k_complement(1.0, 3), 0.0);
    assert_eq!(pass_at_k(0.0, 3), 0.0);
    assert_eq!(pass_at_k(1.0, 3), 1.0);
}

/// A cost experiment on one model whose traces (median `median`, log-SD `sigma`) meet `cap`.
fn cost_scenario(
    rates: &str,
    median: f64,
    sigma: f64,
    cap: &str,
    k: &str,
    traces: u64,
) -> Scenario {
    let src = format!(
        "seed = 3\n[benchmark]\nrates = {rates}\n[[model]]\nname = \"m\"\nattractor = 0.5\n\
         [model.tokens]\nmedian_tokens = {median}\nhard_growth = 0.0\nwrong_factor = 1.0\nsigma = {sigma}\n\
         [[experiment]]\nkind = \"cost\"\nmodels = [\"m\"]\nk = {k}\n{cap}\nvotes = 200\ntraces = {traces}\n"
    );
    Scenario::from_toml(&src, "cost-edge", "cost-edge.toml")
        .unwrap_or_else(|e| panic!("{e}\n{src}"))
}

fn assert_all_pass_and_ratios_untested(s: &Scenario) {
    let out = run_all(s, &|_| {});
    let checks = out.checks();
    assert!(!checks.is_empty());
    for c in &checks {
        assert!(c.passed(), "{c:?}");
        if c.quantity == "tokens_per_correct" {
            assert!(c.estimate.rule().starts_with("untested"), "{c:?}");
        }
    }
}

#[test]
fn cost_tokens_per_correct_passes_when_exact_accuracy_underflows_to_zero() {
    // A 570-token cap on traces with a median of 13,918 and log-SD 0.062: no trace finishes,
    // exact and simulated tokens per correct are both inf (se NaN, z -inf and a failure before).
    let s = cost_scenario("[0.6, 0.9]", 13_918.0, 0.062, "cap = 570", "[1, 8]", 4000);
    assert_all_pass_and_ratios_untested(&s);
}

#[test]
fn cost_tokens_per_correct_passes_when_a_rare_accuracy_sees_no_correct_answer() {
    // Exact accuracy about 1.3e-6 over 16,000 traces: 0.02 correct answers expected, the
    // simulation sees none and its ratio is inf; the count is checked, the ratio reported.
    let s = cost_scenario(
        "[0.5, 0.5, 0.5, 0.5]",
        1000.0,
        0.5,
        "cap = 102.3",
        "[1]",
        4000,
    );
    let out = run_all(&s, &|_| {});
    let acc = out
        .checks()
        .into_iter()
        .find(|c| c.quantity == "accuracy")
        .expect("an accuracy check");
    assert!(
        acc.estimate.exact > 1e-7 && acc.estimate.exact < 1e-5,
        "{acc:?}"
    );
    assert_all_pass_and_ratios_untested(&s);
}

#[test]
fn token_products_that_overflow_or_underflow_are_refused_at_load() {
    // Issue 20 item 3: these panicked in exact/budget.rs or gave NaN exact values and exit 1.
    let tokens = |median: &str, growth: &str, wrong: &str, sigma: &str| {
        format!(
            "[benchmark]\nrates = [0.5]\n[[model]]\nname = \"m\"\nattractor = 0.5\n[model.tokens]\nmedian_tokens = {median}\n\
             hard_growth = {growth}\nwrong_factor = {wrong}\nsigma = {sigma}\n\
             [[experiment]]\nkind = \"budget\"\nmodels = [\"m\"]\nbudgets = [100.0, 1000.0]\n"
        )
    };
    for (src, says) in [
        (tokens("1e308", "1.0", "1.5", "0.5"), "would overflow"),
        (tokens("1000.0", "1e308", "1.5", "0.5"), "would overflow"),
        (tokens("1000.0", "1.0", "1.5", "38.0"), "would overflow"),
        (tokens("1e-300", "1.0", "1e-300", "0.5"), "would underflow"),
    ] {
        let e = Scenario::from_toml(&src, "t", "t.toml").expect_err("refused");
        let msg = e.to_string();
        assert!(
            msg.contains("model[1].tokens") && msg.contains(says),
            "{msg}"
        );
        assert!(msg.contains("t.toml:"), "{msg}");
    }
}

#[test]
fn budgets_inf_is_refused_with_a_pointer_to_the_uncapped_cost_row() {
    let src = "[benchmark]\nrates = [0.5]\n[[model]]\nname = \"m\"\nattractor = 0.5\n[model.tokens]\nmedian_tokens = 1000.0\n\
               hard_growth = 1.0\nwrong_factor = 1.5\nsigma = 0.5\n\
               [[experiment]]\nkind = \"budget\"\nmodels = [\"m\"]\nbudgets = [100.0, inf]\n";
    let msg = Scenario::from_toml(src, "t", "t.toml")
        .expect_err("refused")
        .to_string();
    assert!(
        msg.contains("budgets") && msg.contains("`cost` experiment without `cap`"),
        "{msg}"
    );
}

#[test]
fn exact_count_distribution_beyond_its_memory_limit_is_refused_at_load() {
    // N = 100,000 and n = 256 took 4.1 GB and 44 s; n = 1,000 aborted above 6 GB.
    for kind in ["seed-variance", "head-to-head"] {
        let src = format!(
            "[benchmark]\nproblems = 100000\nmu = 0.2\nsigma = 2.2\n[[model]]\nname = \"a\"\nattractor = 0.5\n[[model]]\nname = \"b\"\nshift = 0.2\nattractor = 0.5\n\
             [[experiment]]\nkind = \"{kind}\"\nmodel = \"a\"\na = \"a\"\nb = \"b\"\nn = [1, 256]\nreruns = 10\n"
        );
        let src = if kind == "seed-variance" {
            src.replace("a = \"a\"\nb = \"b\"\n", "")
        } else {
            src.replace("model = \"a\"\n", "")
        };
        let msg = Scenario::from_toml(&src, "t", "t.toml")
            .expect_err("refused")
            .to_string();
        assert!(
            msg.contains("256 x 100000 = 25600000 entries: at most 8388608"),
            "{msg}"
        );
    }
}
