//! Property test over whole scenarios: random valid parameters written as TOML text, loaded,
//! run with small vote counts, and checked for invariants: every probability in [0, 1],
//! maj@k <= pass@k, and every simulated number within a Bernstein bound of its exact value.
use evalsim::experiments::votes::Metric;
use evalsim::experiments::{run_all, ExperimentResult};
use evalsim::scenario::Scenario;
use proptest::prelude::*;

#[derive(Debug, Clone)]
struct Params {
    bench: String,
    problems: usize,
    models: Vec<(f64, f64, &'static str)>,
    ks: Vec<u32>,
    votes: u64,
    sweep: Vec<f64>,
}

fn params() -> impl Strategy<Value = Params> {
    let logit_normal = (1usize..25, -3.0f64..3.0, 0.05f64..3.0, prop::bool::ANY).prop_map(
        |(n, mu, sigma, random)| {
            let placement = if random { "random" } else { "quantiles" };
            (
                format!("problems = {n}\nmu = {mu}\nsigma = {sigma}\nplacement = \"{placement}\""),
                n,
            )
        },
    );
    let rate = prop_oneof![Just(0.0f64), Just(1.0f64), 0.0f64..=1.0];
    let explicit = prop::collection::vec(rate, 1..12).prop_map(|r| {
        let list: Vec<String> = r.iter().map(|x| format!("{x:?}")).collect();
        (format!("rates = [{}]", list.join(", ")), r.len())
    });
    let rule = prop_oneof![Just("random"), Just("strict"), Just("absolute")];
    let model = (-2.0f64..2.0, 0.0f64..=1.0, rule);
    let ks =
        prop::collection::btree_set(1u32..40, 1..5).prop_map(|s| s.into_iter().collect::<Vec<_>>());
    (
        prop_oneof![logit_normal, explicit],
        prop::collection::vec(model, 1..3),
        ks,
        100u64..600,
        prop::collection::btree_set(0u32..=20, 1..4),
    )
        .prop_map(|((bench, problems), models, ks, votes, sweep)| Params {
            bench,
            problems,
            models,
            ks,
            votes,
            sweep: sweep.into_iter().map(|a| f64::from(a) / 20.0).collect(),
        })
}

fn toml(p: &Params) -> String {
    let mut s = format!("seed = 9\n[benchmark]\n{}\n", p.bench);
    for (i, (shift, a, rule)) in p.models.iter().enumerate() {
        s += &format!("[[model]]\nname = \"m{i}\"\nshift = {shift}\nattractor = {a}\nvote_rule = \"{rule}\"\n");
    }
    let ks: Vec<String> = p.ks.iter().map(u32::to_string).collect();
    let sweep: Vec<String> = p.sweep.iter().map(|a| format!("{a:?}")).collect();
    s += &format!(
        "[[experiment]]\nkind = \"curves\"\nk = [{}]\nvotes = {}\n",
        ks.join(", "),
        p.votes
    );
    s += &format!(
        "[[experiment]]\nkind = \"attractor-sweep\"\nmodel = \"m0\"\nattractor = [{}]\nk = [{}]\nvotes = {}\n",
        sweep.join(", "),
        ks.join(", "),
        p.votes
    );
    s
}

/// Largest deviation of a count of independent Bernoulli trials from its mean, given the
/// count's variance, that Bernstein's inequality allows with probability 1 - 1e-6:
/// P(|S - E S| >= t) <= 2 exp(-t^2 / (2 (var + t / 3))). Unlike the normal z bound it holds when
/// the variance is tiny: with 100 votes on near-certain problems the count's SD can be 0.1, and
/// a single rare vote is then 10 standard errors away. Under |z| <= 4.5, 2 to 3% of these random
/// scenarios failed for any given seed, with the old vote streams and the new alike (22 and 29
/// of 24 cases x 40 seeds), so this test with 24 cases failed about half of all stream changes.
fn bernstein_bound(variance: f64) -> f64 {
    let l = (2.0 / 1e-6f64).ln();
    l / 3.0 + (l * l / 9.0 + 2.0 * l * variance).sqrt()
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 24,
        rng_seed: proptest::test_runner::RngSeed::Fixed(20240601),
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_valid_scenarios_load_run_and_hold_invariants(p in params()) {
        let src = toml(&p);
        let s = Scenario::from_toml(&src, "prop", "prop.toml").map_err(|e| TestCaseError::fail(format!("{e}\n{src}")))?;
        prop_assert_eq!(s.benchmark.problems, p.problems);
        let out = run_all(&s, &|_| {});
        // Every check is a mean over the problems of a share of `votes` independent votes, so
        // it is a count of Bernoulli trials divided by votes x problems.
        let scale = p.votes as f64 * p.problems as f64;
        for c in out.checks() {
            let e = c.estimate;
            prop_assert!((0.0..=1.0).contains(&e.exact), "{:?}", c);
            prop_assert!((0.0..=1.0).contains(&e.sim), "{:?}", c);
            prop_assert!(e.se >= 0.0 && e.se.is_finite(), "{:?}", c);
            if e.se == 0.0 {
                // A certain outcome (rate 0 or 1): any deviation is a defect.
                prop_assert_eq!(e.sim, e.exact, "{:?}\n{}", c, src);
            }
            let deviation = (e.sim - e.exact).abs() * scale;
            prop_assert!(deviation <= bernstein_bound((e.se * scale).powi(2)), "{:?}\n{}", c, src);
        }
        for r in &out.results {
            let (ExperimentResult::Curves(v) | ExperimentResult::AttractorSweep(v)) = r else {
                continue;
            };
            for maj in v.points.iter().filter(|q| q.metric == Metric::MajAtK) {
                let pass = v.points.iter().find(|q| q.series == maj.series && q.k == maj.k && q.metric == Metric::PassAtK);
                let pass = pass.ok_or_else(|| TestCaseError::fail("pass@k point missing"))?;
                prop_assert!(maj.estimate.exact <= pass.estimate.exact + 1e-12);
                // Per vote, a win needs a correct sample: the simulated counts nest too.
                prop_assert!(maj.estimate.sim <= pass.estimate.sim);
            }
        }
    }
}
