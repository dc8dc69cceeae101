//! Invariants of the exact formulas over random parameters (seeded by proptest's config).
use evalsim::exact::maj::maj_at_k;
use evalsim::exact::pass::{pass_at_k, pass_hat_k};
use evalsim::model::VoteRule;
use proptest::prelude::*;

fn rule() -> impl Strategy<Value = VoteRule> {
    prop_oneof![
        Just(VoteRule::Random),
        Just(VoteRule::Strict),
        Just(VoteRule::Absolute)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, rng_seed: proptest::test_runner::RngSeed::Fixed(20240601), ..ProptestConfig::default() })]

    #[test]
    fn probabilities_in_unit_interval(p in 0.0f64..=1.0, a in 0.0f64..=1.0, k in 1u32..200, r in rule()) {
        let m = maj_at_k(p, a, k, r);
        prop_assert!((0.0..=1.0).contains(&m));
        prop_assert!((0.0..=1.0).contains(&pass_at_k(p, k)));
        prop_assert!((0.0..=1.0).contains(&pass_hat_k(p, k)));
    }

    #[test]
    fn maj_at_most_pass(p in 0.0f64..=1.0, a in 0.0f64..=1.0, k in 1u32..200, r in rule()) {
        prop_assert!(maj_at_k(p, a, k, r) <= pass_at_k(p, k) + 1e-12);
    }

    #[test]
    fn maj1_and_maj2_equal_pass1(p in 0.0f64..=1.0, a in 0.0f64..=1.0) {
        prop_assert!((maj_at_k(p, a, 1, VoteRule::Random) - p).abs() < 1e-14);
        prop_assert!((maj_at_k(p, a, 2, VoteRule::Random) - p).abs() < 1e-14);
    }

    #[test]
    fn pass_rises_and_pass_hat_falls_in_k(p in 0.0f64..=1.0, k in 1u32..500) {
        prop_assert!(pass_at_k(p, k + 1) >= pass_at_k(p, k));
        prop_assert!(pass_hat_k(p, k + 1) <= pass_hat_k(p, k));
    }

    #[test]
    fn strict_at_most_random(p in 0.0f64..=1.0, a in 0.0f64..=1.0, k in 1u32..100) {
        prop_assert!(maj_at_k(p, a, k, VoteRule::Strict) <= maj_at_k(p, a, k, VoteRule::Random) + 1e-12);
    }
}
