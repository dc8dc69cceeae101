//! Property test at the edges (issue: degenerate checks): random scenarios with tiny caps, huge
//! k, attractor shares 0 and 1, rates 0 and 1, loaded and run; a correct simulation passes
//! every check under the one pass rule, and a deliberately biased one (a model shifted by a
//! logit after the fact) fails every check whose exact value the bias moves well beyond both
//! allowances.
use evalsim::experiments::{bernstein_allowance, run_all, Check, Estimate, ROUNDING_ULPS, Z_BOUND};
use evalsim::scenario::Scenario;
use proptest::prelude::*;

#[derive(Debug, Clone)]
struct Params {
    rates: Vec<f64>,
    shift: f64,
    attractor: f64,
    rule: &'static str,
    ks: Vec<u32>,
    median: f64,
    sigma: f64,
    cap: Option<f64>,
    seed: u64,
}

fn params() -> impl Strategy<Value = Params> {
    let rate = prop_oneof![
        Just(0.0f64),
        Just(1.0f64),
        Just(1e-6f64),
        Just(0.999_999f64),
        0.0f64..=1.0
    ];
    let attractor = prop_oneof![Just(0.0f64), Just(1.0f64), 0.0f64..=1.0];
    let rule = prop_oneof![Just("random"), Just("strict"), Just("absolute")];
    let k = prop_oneof![1u32..8, 8u32..100, Just(807u32), Just(1024u32)];
    let ks = prop::collection::btree_set(k, 1..3).prop_map(|s| s.into_iter().collect::<Vec<_>>());
    // Caps from far below the shortest trace (accuracy underflows to 0) to far above.
    let cap = prop_oneof![Just(None), (0.02f64..20.0).prop_map(Some)];
    (
        prop::collection::vec(rate, 1..6),
        -1.0f64..1.0,
        attractor,
        rule,
        ks,
        100.0f64..20_000.0,
        0.05f64..1.5,
        cap,
        0u64..1 << 62,
    )
        .prop_map(
            |(rates, shift, attractor, rule, ks, median, sigma, cap, seed)| Params {
                rates,
                shift,
                attractor,
                rule,
                ks,
                median,
                sigma,
                cap: cap.map(|c| c * median),
                seed,
            },
        )
}

fn toml(p: &Params, shift: f64) -> String {
    let rates: Vec<String> = p.rates.iter().map(|x| format!("{x:?}")).collect();
    let ks: Vec<String> = p.ks.iter().map(u32::to_string).collect();
    let cap = p.cap.map_or(String::new(), |c| format!("cap = {c:?}\n"));
    format!(
        "seed = {}\n[benchmark]\nrates = [{}]\n[[model]]\nname = \"m\"\nshift = {shift:?}\nattractor = {:?}\n\
         vote_rule = \"{}\"\n[model.tokens]\nmedian_tokens = {:?}\nhard_growth = 1.0\nwrong_factor = 1.5\n\
         sigma = {:?}\n[[experiment]]\nkind = \"curves\"\nk = [{ks}]\nvotes = 300\n\
         [[experiment]]\nkind = \"cost\"\nmodels = [\"m\"]\nk = [{ks}]\n{cap}votes = 300\ntraces = 300\n\
         [[experiment]]\nkind = \"vote-spread\"\nmodel = \"m\"\nk = [{ks}]\nreruns = 200\n",
        p.seed,
        rates.join(", "),
        p.attractor,
        p.rule,
        p.median,
        p.sigma,
        ks = ks.join(", "),
    )
}

fn checks(src: &str) -> Result<Vec<Check>, TestCaseError> {
    let s = Scenario::from_toml(src, "edge", "edge.toml")
        .map_err(|e| TestCaseError::fail(format!("{e}\n{src}")))?;
    Ok(run_all(&s, &|_| {}).checks())
}

/// The largest |sim - exact| the pass rule allows: the z bound (or Bernstein's for counts)
/// plus the rounding of the exact value itself.
fn allowance(e: &Estimate) -> f64 {
    let z = Z_BOUND * e.se;
    let stat = if e.step > 0.0 {
        z.max(bernstein_allowance(e.se, e.step))
    } else {
        z
    };
    stat + ROUNDING_ULPS * f64::EPSILON * e.exact.abs().max(e.sim.abs())
}

/// A correct simulation of `src` passes every check, and the simulation of `biased` (the same
/// scenario with the model moved after the fact) fails every check whose exact value the move
/// carries well beyond both allowances.
fn fair_passes_and_biased_fails(src: &str, biased: &str) -> Result<(), TestCaseError> {
    let fair = checks(src)?;
    for c in &fair {
        prop_assert!(c.passed(), "{:?}\n{}", c, src);
    }
    let biased = checks(biased)?;
    prop_assert_eq!(biased.len(), fair.len());
    for (f, b) in fair.iter().zip(&biased) {
        let (ef, eb) = (f.estimate, b.estimate);
        if ef.untested.is_some() || eb.untested.is_some() || !ef.exact.is_finite() {
            continue;
        }
        let moved = (eb.exact - ef.exact).abs();
        if moved > 2.0 * (allowance(&ef) + allowance(&eb)) {
            let mut judged = Estimate::new(ef.exact, eb.sim, ef.se);
            judged.step = ef.step;
            prop_assert!(!judged.passed(), "{:?} vs {:?}\n{}", f, b, src);
        }
    }
    Ok(())
}

/// A budget cell on a large benchmark: N up to 100,000 problems from a logit-normal, a few
/// traces each, budgets from far below the shortest traces to far above the longest (where
/// almost every trace is cut at the budget, or none is).
#[derive(Debug, Clone)]
struct Budget {
    problems: u32,
    mu: f64,
    sigma: f64,
    median: f64,
    log_sd: f64,
    budgets: Vec<f64>,
    traces: u32,
    seed: u64,
}

fn budget_params() -> impl Strategy<Value = Budget> {
    let problems = prop_oneof![1u32..50, 50u32..5_000, Just(100_000u32)];
    // Budgets as multiples of the median: 1/50 to 50.
    let budgets = prop::collection::btree_set(-39i32..=39, 2..5).prop_map(|s| {
        s.into_iter()
            .map(|e| 10f64.powf(f64::from(e) / 23.0))
            .collect()
    });
    (
        problems,
        -4.0f64..4.0,
        0.1f64..3.0,
        100.0f64..20_000.0,
        0.05f64..1.5,
        budgets,
        1u32..12,
        0u64..1 << 62,
    )
        .prop_map(
            |(problems, mu, sigma, median, log_sd, budgets, traces, seed)| {
                let budgets: Vec<f64> = budgets;
                Budget {
                    problems,
                    mu,
                    sigma,
                    median,
                    log_sd,
                    budgets: budgets
                        .iter()
                        .map(|b| (b * median).round().max(1.0))
                        .collect(),
                    traces,
                    seed,
                }
            },
        )
}

fn budget_toml(b: &Budget, shift: f64) -> String {
    let mut budgets: Vec<f64> = b.budgets.clone();
    budgets.dedup();
    if budgets.len() < 2 {
        budgets.push(budgets[0] + 1.0);
    }
    let budgets: Vec<String> = budgets.iter().map(|x| format!("{x:?}")).collect();
    // Traces are capped by the experiment's work limit on large benchmarks.
    let traces = if b.problems >= 100_000 {
        10
    } else {
        b.traces * 100
    };
    format!(
        "seed = {}\n[benchmark]\nproblems = {}\nmu = {:?}\nsigma = {:?}\n[[model]]\nname = \"m\"\n\
         shift = {shift:?}\nattractor = 0.5\n[model.tokens]\nmedian_tokens = {:?}\nhard_growth = 1.0\nwrong_factor = 1.5\n\
         sigma = {:?}\n[[experiment]]\nkind = \"budget\"\nmodels = [\"m\"]\nbudgets = [{}]\ntraces = {traces}\n",
        b.seed,
        b.problems,
        b.mu,
        b.sigma,
        b.median,
        b.log_sd,
        budgets.join(", "),
    )
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 24,
        rng_seed: proptest::test_runner::RngSeed::Fixed(13),
        ..ProptestConfig::default()
    })]

    #[test]
    fn extreme_scenarios_pass_a_correct_simulation_and_fail_a_biased_one(p in params()) {
        fair_passes_and_biased_fails(&toml(&p, p.shift), &toml(&p, p.shift + 1.0))?;
    }

    #[test]
    fn budgets_on_large_benchmarks_pass_a_correct_simulation_and_fail_a_biased_one(
        b in budget_params()
    ) {
        fair_passes_and_biased_fails(&budget_toml(&b, 0.0), &budget_toml(&b, 1.0))?;
    }
}

// The same properties over many more scenarios and seeds (a few minutes on 2 cores):
// `cargo test --release --test suite -- --ignored many_extreme_scenarios`.
proptest! {
    #![proptest_config(ProptestConfig {
        cases: 400,
        rng_seed: proptest::test_runner::RngSeed::Fixed(29),
        ..ProptestConfig::default()
    })]

    #[test]
    #[ignore = "minutes: run with --ignored"]
    fn many_extreme_scenarios_pass_a_correct_simulation_and_fail_a_biased_one(p in params()) {
        fair_passes_and_biased_fails(&toml(&p, p.shift), &toml(&p, p.shift + 1.0))?;
    }

    #[test]
    #[ignore = "minutes: run with --ignored"]
    fn many_extreme_budgets_pass_a_correct_simulation_and_fail_a_biased_one(b in budget_params()) {
        fair_passes_and_biased_fails(&budget_toml(&b, 0.0), &budget_toml(&b, 1.0))?;
    }
}

#[test]
fn a_biased_simulation_of_an_extreme_scenario_fails() {
    // Huge k, attractor 1, a cap and rates 0 and 1 among the others, simulated two logits
    // better than the exact values say: the property above must have something to catch.
    let p = Params {
        rates: vec![0.0, 1.0, 0.3, 0.6, 0.8],
        shift: 0.0,
        attractor: 1.0,
        rule: "random",
        ks: vec![1, 1024],
        median: 1000.0,
        sigma: 0.5,
        cap: Some(3000.0),
        seed: 13,
    };
    let fair = checks(&toml(&p, 0.0)).expect("runs");
    let biased = checks(&toml(&p, 2.0)).expect("runs");
    assert!(fair.iter().all(Check::passed));
    let failed: Vec<&Check> = fair
        .iter()
        .zip(&biased)
        .filter(|(f, b)| {
            let mut e = Estimate::new(f.estimate.exact, b.estimate.sim, f.estimate.se);
            e.step = f.estimate.step;
            e.untested = f.estimate.untested;
            !e.passed()
        })
        .map(|(f, _)| f)
        .collect();
    // Both experiments notice: the votes of `curves` and the traces of `cost`.
    for experiment in ["curves", "cost"] {
        assert!(
            failed.iter().any(|c| c.experiment == experiment),
            "{experiment}: {failed:?}"
        );
    }
}
