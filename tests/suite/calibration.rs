//! Calibration of the checks: over every shipped scenario, the share of checks with |z| > 2 must
//! be consistent with the normal tail P(|Z| > 2) = 4.55% (an exact two-sided binomial test at
//! level 0.001). Checks of one run share votes across k and metrics, so they are positively
//! correlated and the test is somewhat anti-conservative; the share is printed.
//!
//! The suite runs 3 seeds (about 2,000 checks, a minute of CPU); the full 20 seeds (about
//! 14,000 checks, six minutes of CPU) are an ignored test:
//! `cargo test --release --test suite calibration_over_20_seeds -- --ignored --nocapture`.
use evalsim::experiments::run_all;
use evalsim::scenario::Scenario;
use statrs::distribution::{Binomial, ContinuousCDF, DiscreteCDF, Normal};

fn shipped() -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("scenarios/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| p.display().to_string())
        .collect();
    v.sort();
    v
}

/// Exact two-sided binomial p-value: twice the smaller tail, capped at 1.
fn binomial_two_sided(x: u64, n: u64, p: f64) -> f64 {
    let b = Binomial::new(p, n).expect("binomial");
    let lower = b.cdf(x);
    let upper = if x == 0 { 1.0 } else { 1.0 - b.cdf(x - 1) };
    (2.0 * lower.min(upper)).min(1.0)
}

#[test]
fn share_of_large_z_is_consistent_with_the_normal_tail() {
    calibrate(3, 1000);
}

#[test]
#[ignore = "six minutes of CPU: the 20-seed calibration (module doc)"]
fn calibration_over_20_seeds() {
    calibrate(20, 10_000);
}

/// Runs every shipped scenario at seeds 1..=`seeds` and tests the share of |z| > 2 (module
/// doc); at least `least` checks must have been gathered.
fn calibrate(seeds: u64, least: u64) {
    let tail = 2.0 * (1.0 - Normal::standard().cdf(2.0));
    let (mut total, mut large) = (0u64, 0u64);
    let mut per_scenario = Vec::new();
    for path in shipped() {
        let base = Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
        let (mut t, mut l) = (0u64, 0u64);
        for seed in 1..=seeds {
            let mut s = base.clone();
            s.seed = seed;
            let out = run_all(&s, &|_| {});
            for c in out.checks().iter().filter(|c| c.estimate.se > 0.0) {
                t += 1;
                l += u64::from(c.estimate.z.abs() > 2.0);
            }
        }
        per_scenario.push(format!(
            "{path}: {l} of {t} = {:.2}%",
            100.0 * l as f64 / t as f64
        ));
        total += t;
        large += l;
    }
    let p_value = binomial_two_sided(large, total, tail);
    eprintln!(
        "calibration over {seeds} seeds: {large} of {total} checks with |z| > 2 = {:.2}% (normal tail {:.2}%), two-sided binomial p = {p_value:.3}\n  {}",
        100.0 * large as f64 / total as f64,
        100.0 * tail,
        per_scenario.join("\n  ")
    );
    assert!(total >= least, "only {total} checks");
    assert!(
        p_value > 0.001,
        "share of |z| > 2 is {large}/{total}: inconsistent with {tail}"
    );
}

#[test]
fn binomial_test_sanity() {
    assert!(binomial_two_sided(50, 1000, 0.05) > 0.9);
    assert!(binomial_two_sided(100, 1000, 0.05) < 1e-6);
    assert!(binomial_two_sided(10, 1000, 0.05) < 1e-6);
}
