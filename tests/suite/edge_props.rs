//! Property test at the edges (issue: degenerate checks): random scenarios with tiny caps, huge
//! k, attractor shares 0 and 1, rates 0 and 1, loaded and run; a correct simulation passes
//! every check under the one pass rule, and a deliberately biased one (a model shifted by a
//! logit after the fact) fails every check whose exact value the bias moves well beyond both
//! allowances.
use evalsim::experiments::{bernstein_allowance, run_all, Check, Estimate, Z_BOUND};
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
    )
        .prop_map(
            |(rates, shift, attractor, rule, ks, median, sigma, cap)| Params {
                rates,
                shift,
                attractor,
                rule,
                ks,
                median,
                sigma,
                cap: cap.map(|c| c * median),
            },
        )
}

fn toml(p: &Params, shift: f64) -> String {
    let rates: Vec<String> = p.rates.iter().map(|x| format!("{x:?}")).collect();
    let ks: Vec<String> = p.ks.iter().map(u32::to_string).collect();
    let cap = p.cap.map_or(String::new(), |c| format!("cap = {c:?}\n"));
    format!(
        "seed = 13\n[benchmark]\nrates = [{}]\n[[model]]\nname = \"m\"\nshift = {shift:?}\nattractor = {:?}\n\
         vote_rule = \"{}\"\n[model.tokens]\nmedian_tokens = {:?}\nhard_growth = 1.0\nwrong_factor = 1.5\n\
         sigma = {:?}\n[[experiment]]\nkind = \"curves\"\nk = [{ks}]\nvotes = 300\n\
         [[experiment]]\nkind = \"cost\"\nmodels = [\"m\"]\nk = [{ks}]\n{cap}votes = 300\ntraces = 300\n",
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
    Ok(run_all(&s, &|_| {})
        .map_err(|e| TestCaseError::fail(e.to_string()))?
        .checks())
}

/// The largest |sim - exact| the pass rule allows.
fn allowance(e: &Estimate) -> f64 {
    let z = Z_BOUND * e.se;
    if e.step > 0.0 {
        z.max(bernstein_allowance(e.se, e.step))
    } else {
        z
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 24,
        rng_seed: proptest::test_runner::RngSeed::Fixed(13),
        ..ProptestConfig::default()
    })]

    #[test]
    fn extreme_scenarios_pass_a_correct_simulation_and_fail_a_biased_one(p in params()) {
        let src = toml(&p, p.shift);
        let fair = checks(&src)?;
        for c in &fair {
            prop_assert!(c.passed(), "{:?}\n{}", c, src);
        }
        // The same simulation of a model shifted by one logit, judged against the exact values
        // of the unshifted one.
        let biased = checks(&toml(&p, p.shift + 1.0))?;
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
