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
    let out = run_all(&s, &|_| {}).expect("runs");
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
    let out = run_all(&s, &|_| {}).expect("runs");
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
    let out = run_all(&s, &|_| {}).expect("runs");
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
