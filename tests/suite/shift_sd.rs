//! Per-problem disagreement between models (`shift_sd`, tau): every experiment's simulation
//! agrees with its exact values under tau > 0, tau = 0 is the constant shift bit for bit, bad
//! values are refused with located errors, and head-to-head reports the correlation and the
//! spread of the per-problem difference.
use evalsim::exact::noise::question_se;
use evalsim::exact::shift::deviation_moments;
use evalsim::experiments::votes::Metric;
use evalsim::experiments::ExperimentResult;
use evalsim::model::{expit, logit, problem_deviations};
use evalsim::scenario::Scenario;

use super::common::{failures, result, run};

/// A scenario with every experiment `run` knows except `plan`, and models with tau > 0.
fn with_disagreement(placement: &str, tau_b: &str) -> String {
    format!(
        r#"seed = 31
[benchmark]
problems = 24
mu = 0.2
sigma = 1.8
placement = "{placement}"

[[model]]
name = "a"
shift = 0.0
shift_sd = 0.8
attractor = 0.5
[model.tokens]
median_tokens = 4000
hard_growth = 1.0
wrong_factor = 1.5
sigma = 0.5

[[model]]
name = "b"
shift = 0.3
shift_sd = {tau_b}
attractor = 0.4
[model.tokens]
median_tokens = 2500
hard_growth = 1.0
wrong_factor = 1.5
sigma = 0.5

[[experiment]]
kind = "curves"
models = ["a", "b"]
k = [1, 4, 16]
votes = 4000

[[experiment]]
kind = "attractor-sweep"
model = "b"
attractor = [0.0, 0.5, 0.9]
k = [1, 8]
votes = 4000

[[experiment]]
kind = "seed-variance"
model = "b"
n = [1, 8]
reruns = 20000

[[experiment]]
kind = "vote-spread"
model = "b"
k = [3, 8]
reruns = 4000

[[experiment]]
kind = "head-to-head"
a = "a"
b = "b"
n = [1, 8]
reruns = 20000

[[experiment]]
kind = "budget"
models = ["a", "b"]
budgets = [1000, 4000, 16000]
traces = 4000

[[experiment]]
kind = "cost"
models = ["a", "b"]
k = [1, 8]
votes = 4000
traces = 4000
"#
    )
}

fn scenario(src: &str) -> Scenario {
    Scenario::from_toml(src, "shift", "shift.toml").expect("valid scenario")
}

#[test]
fn every_experiment_agrees_with_its_exact_values_under_tau() {
    for placement in ["quantiles", "random"] {
        let s = scenario(&with_disagreement(placement, "1.5"));
        let out = run(&s);
        let checks = out.checks();
        assert!(checks.len() >= 70, "{placement}: {} checks", checks.len());
        let bad = failures(&checks);
        assert!(bad.is_empty(), "{placement}: {bad:#?}");
    }
}

/// The fixed benchmark's rates move with tau: the exact pass@1 of `curves` is the mean of
/// expit(logit(p_i) + shift + tau e_i) with the documented e_i.
#[test]
fn fixed_benchmark_rates_carry_the_documented_deviations() {
    let s = scenario(&with_disagreement("quantiles", "1.5"));
    let bench = s.benchmark.rates();
    let e = problem_deviations("b", 24);
    let rates = s.models[1].rates_on(&s.benchmark);
    for (i, ((&p, &r), &e)) in bench.iter().zip(&rates).zip(&e).enumerate() {
        let want = expit(logit(p) + 0.3 + 1.5 * e);
        assert!((r - want).abs() < 1e-12, "problem {i}");
    }
    let out = run(&s);
    let ExperimentResult::Curves(c) = &out.results[0] else {
        panic!("curves first")
    };
    let p1 = c
        .points
        .iter()
        .find(|p| p.series == 1 && p.k == 1 && matches!(p.metric, Metric::PassAtK))
        .expect("pass@1 of b");
    let mean = rates.iter().sum::<f64>() / 24.0;
    assert!((p1.estimate.exact - mean).abs() < 1e-15);
}

/// Explicit `shift_sd = 0` is the file without the key, output for output.
#[test]
fn tau_zero_reproduces_the_constant_shift_bit_for_bit() {
    let with =
        with_disagreement("quantiles", "0.0").replace("shift_sd = 0.8\n", "shift_sd = 0.0\n");
    let without = with
        .lines()
        .filter(|l| !l.starts_with("shift_sd"))
        .collect::<Vec<_>>()
        .join("\n");
    let json = |src: &str| {
        let out = run(&scenario(src));
        serde_json::to_string(&out.results).expect("json")
    };
    let (a, b) = (json(&with), json(&without));
    assert!(a == b, "shift_sd = 0 changed an output");
    assert!(!a.contains("disagreement"));
}

/// Issue 16: with a constant shift the per-problem difference p_B - p_A barely varies; with
/// tau > 0 it does, and the head-to-head says so with the correlation of the logits.
#[test]
fn head_to_head_reports_correlation_and_the_varying_paired_difference() {
    let s = scenario(&with_disagreement("quantiles", "1.5"));
    let out = run(&s);
    let h = result!(out, HeadToHead);
    let d = h.disagreement.as_ref().expect("disagreement reported");
    let sigma2 = 1.8f64 * 1.8;
    let want = sigma2 / ((sigma2 + 0.64) * (sigma2 + 2.25)).sqrt();
    assert!((d.population_correlation.expect("logit-normal") - want).abs() < 1e-15);
    let realised = d.realised_correlation.expect("finite logits");
    assert!(realised > 0.0 && realised < 1.0, "{realised}");
    assert!(
        d.difference_sd > 3.0 * d.difference_sd_constant_shift,
        "{} against {}",
        d.difference_sd,
        d.difference_sd_constant_shift
    );
}

/// The seed-variance question-sampling SE with tau integrates e per problem: brute force by a
/// trapezoid over e on the constant-shift rates.
#[test]
fn seed_variance_question_se_integrates_the_deviation() {
    let s = scenario(&with_disagreement("quantiles", "1.5"));
    let out = run(&s);
    let sv = result!(out, SeedVariance);
    let centres: Vec<f64> = s
        .benchmark
        .rates()
        .iter()
        .map(|&p| expit(logit(p) + 0.3))
        .collect();
    let trapezoid = |f: &dyn Fn(f64) -> f64| {
        let steps = 200_000;
        let h = 24.0 / f64::from(steps);
        (0..=steps)
            .map(|j| {
                let e = -12.0 + f64::from(j) * h;
                let w = if j == 0 || j == steps { 0.5 } else { 1.0 };
                w * f(e) * (-0.5 * e * e).exp() / (2.0 * std::f64::consts::PI).sqrt()
            })
            .sum::<f64>()
            * h
    };
    let (mut means, mut within) = (Vec::new(), 0.0);
    for &q in &centres {
        let p = |e: f64| expit(logit(q) + 1.5 * e);
        let m = trapezoid(&p);
        within += trapezoid(&|e| p(e) * p(e)) - m * m;
        assert!((deviation_moments(q, 1.5).mean - m).abs() < 1e-11);
        means.push(m);
    }
    let n = centres.len() as f64;
    let want = (question_se(&means).powi(2) + within / n / n).sqrt();
    assert!(
        (sv.question_se - want).abs() < 1e-10 * want,
        "{} against {want}",
        sv.question_se
    );
}

fn refused(src: &str, needles: &[&str]) {
    let err = Scenario::from_toml(src, "bad", "bad.toml")
        .expect_err("must be refused")
        .to_string();
    for n in needles {
        assert!(err.contains(n), "`{n}` missing from: {err}");
    }
}

#[test]
fn bad_shift_sd_values_are_refused_with_located_errors() {
    let base = with_disagreement("quantiles", "1.5");
    for (value, line) in [
        ("-0.5", "-0.5"),
        ("nan", "NaN"),
        ("inf", "inf"),
        ("10.5", "10.5"),
    ] {
        let src = base.replace("shift_sd = 1.5", &format!("shift_sd = {value}"));
        refused(
            &src,
            &["bad.toml:22:", "model[2].shift_sd", "[0, 10]", line],
        );
    }
    // A model that lists its own rates has no benchmark logit to deviate from.
    let rates = vec!["0.5"; 24].join(", ");
    let src = base.replace("shift = 0.3\n", &format!("rates = [{rates}]\n"));
    refused(
        &src,
        &[
            "bad.toml:22:",
            "model[2].shift_sd",
            "applies only to a model given by `shift`",
        ],
    );
    // A plan honours the model's own shift_sd, and the block's shift_sd gives B its own; a
    // pair whose residual SD of B given A passes the plan's 3 logits is refused at the block's
    // key, naming both SDs.
    let plan = |tau_b: &str| {
        format!(
            "{base}\n[[experiment]]\nkind = \"plan\"\nmodel = \"a\"\ngap_logits = [0.3]\nproblems = [30]\nsamples = [4]\nreruns = 100\nshift_sd = {tau_b}\n"
        )
    };
    assert!(Scenario::from_toml(&plan("0.5"), "ok", "ok.toml").is_ok());
    refused(
        &plan("3.0"),
        &[
            "bad.toml:82:12: experiment[8].shift_sd",
            "B's shift_sd = 3 beside model `a`'s own shift_sd = 0.8",
        ],
    );
}

/// A contaminated model with its own per-problem deviation: the contamination experiment was
/// refused for any `shift_sd`. Its exact values are those of a model without deviation on a
/// benchmark of spread sqrt(sigma^2 + tau^2) (one model's rates depend on sigma and tau only
/// through it), while its simulation draws z and e separately, so the z-checks test that
/// identity as well as the formulas.
#[test]
fn contamination_refused_a_model_with_shift_sd() {
    let src = |sigma: &str, tau: &str| {
        format!(
            "title = \"c\"\nseed = 7\n[benchmark]\nproblems = 40\nmu = 0.2\nsigma = {sigma}\ncontaminated = 0.3\ncontaminated_models = [\"mem\"]\n\n[[model]]\nname = \"mem\"\nshift = 0.1\nshift_sd = {tau}\nattractor = 0.5\nmemorized_rate = 0.97\n\n[[experiment]]\nkind = \"contamination\"\nmodel = \"mem\"\nfresh = [20, 60]\nshares = [0.3]\nreruns = 3000\n"
        )
    };
    let with = run(&scenario(&src("1.2", "1.6")));
    let checks = with.checks();
    let bad = failures(&checks);
    assert!(checks.len() >= 8, "{} checks", checks.len());
    assert!(bad.is_empty(), "{bad:#?}");
    // sqrt(1.2^2 + 1.6^2) = 2 exactly.
    let same = run(&scenario(&src("2.0", "0.0")));
    let (a, b) = (result!(with, Contamination), result!(same, Contamination));
    assert!((a.fresh_pass_at_1 - b.fresh_pass_at_1).abs() < 1e-15);
    for (x, y) in a.rows.iter().zip(&b.rows) {
        assert!((x.gap.exact - y.gap.exact).abs() < 1e-14, "{x:?} {y:?}");
        assert!((x.false_alarm - y.false_alarm).abs() < 1e-12);
        assert!((x.power.exact - y.power.exact).abs() < 1e-12);
    }
    assert_eq!(
        a.plan.iter().map(|p| p.fresh).collect::<Vec<_>>(),
        b.plan.iter().map(|p| p.fresh).collect::<Vec<_>>()
    );
}
