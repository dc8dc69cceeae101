//! Coverage of `plan`'s 95% half-widths for the population designs: the share of simulated reruns
//! (N problems redrawn from the logit-normal mu = 0.2, sigma = 2.2, n samples per problem and
//! model, model B shifted by `gap` logits) whose pass@1 difference B - A falls within the planned
//! half-width 1.96 SE of the exact population difference (both by quadrature in exact/).
//!
//! The exact share comes from the exact pmf of the total count difference (the per-problem tally
//! pmf by quadrature, convolved over the N problems); it differs from 95% by up to 0.7 points at
//! N = 10 (the normal approximation of a discrete mean).
//!
//! Each check: |simulated - exact| <= 3.5 binomial SEs at the rerun count (12 checks, so under exact
//! 95% coverage a spurious failure has probability about 0.6%). The fast test runs 2,000 reruns
//! per cell; the ignored full table 20,000:
//!
//!     cargo test --release --test suite plan_halfwidths_full -- --ignored --nocapture
use crate::support::evals::EvalSampler;
use crate::support::tally_pmf::{count_difference_pmf, paired_tally_pmf};
use evalsim::exact::normal::Z_95;
use evalsim::exact::plan::population_pair_moments;
use evalsim::sim::stream::stream;

const Z: f64 = 3.5;

fn score(tallies: &[crate::support::evals::ProblemTally], n: usize) -> f64 {
    tallies.iter().map(|t| t.correct as f64).sum::<f64>() / (n * tallies.len()) as f64
}

/// The exact share of reruns within the half-width: the pmf of the total count difference
/// (`exact::tally_pmf::count_difference_pmf`) summed over the differences inside. At N = 10 it
/// is not 95%: the half-width rests on the normal approximation of a discrete mean.
fn exact_coverage(problems: usize, samples: usize, gap: f64, paired: bool) -> f64 {
    let m = population_pair_moments(0.2, 2.2, gap);
    let truth = m.mean_b - m.mean_a;
    let n = u32::try_from(samples).expect("small");
    let half = Z_95
        * if paired {
            m.paired_se(n, problems)
        } else {
            m.unpaired_se(n, problems)
        };
    let pmf = paired_tally_pmf(0.2, 2.2, gap, 0.5, samples);
    let total = (samples * problems) as f64;
    count_difference_pmf(&pmf, samples, problems, paired)
        .iter()
        .enumerate()
        .filter(|&(s, _)| {
            let d = (s as f64 - total) / total;
            (d - truth).abs() <= half
        })
        .map(|(_, p)| p)
        .sum()
}

fn coverage(problems: usize, samples: usize, gap: f64, paired: bool, reruns: usize) -> f64 {
    let m = population_pair_moments(0.2, 2.2, gap);
    let truth = m.mean_b - m.mean_a;
    let n = u32::try_from(samples).expect("small");
    let half = Z_95
        * if paired {
            m.paired_se(n, problems)
        } else {
            m.unpaired_se(n, problems)
        };
    let sampler = |shifts: Vec<f64>| EvalSampler {
        mu: 0.2,
        sigma: 2.2,
        attractor: 0.5,
        samples,
        shifts,
    };
    let inside = (0..reruns)
        .filter(|&r| {
            let mut rng = stream(19, &[0x9A7, problems as u64, u64::from(paired), r as u64]);
            let d = if paired {
                let draws = sampler(vec![0.0, gap]).sample(problems, &mut rng);
                score(&draws[1], samples) - score(&draws[0], samples)
            } else {
                let a = sampler(vec![0.0]).sample(problems, &mut rng);
                let b = sampler(vec![gap]).sample(problems, &mut rng);
                score(&b[0], samples) - score(&a[0], samples)
            };
            (d - truth).abs() <= half
        })
        .count();
    inside as f64 / reruns as f64
}

/// Runs every cell (paired and unpaired, gap 0.21 and 1 logit, N = 10, 30, 100, n = 4) at
/// `reruns` reruns, prints one line per cell (simulated and exact coverage) and returns the
/// cells whose simulated coverage is more than [`Z`] binomial SEs from the exact one.
fn check(reruns: usize) -> Vec<String> {
    let mut failures = Vec::new();
    for paired in [true, false] {
        for gap in [0.21, 1.0] {
            for problems in [10, 30, 100] {
                let c = coverage(problems, 4, gap, paired, reruns);
                let e = exact_coverage(problems, 4, gap, paired);
                let se = (e * (1.0 - e) / reruns as f64).sqrt();
                eprintln!(
                    "paired {paired}, gap {gap}, N = {problems}, n = 4: {:.2}% of {reruns} reruns, exact {:.2}% (binomial SE {:.2}%, z {:.2})",
                    100.0 * c,
                    100.0 * e,
                    100.0 * se,
                    (c - e) / se
                );
                if ((c - e) / se).abs() > Z {
                    failures.push(format!("paired {paired} gap {gap} N {problems}: {c}"));
                }
            }
        }
    }
    failures
}

#[test]
fn plan_halfwidths_cover_95_percent_of_reruns_at_n_10_30_100() {
    let failures = check(2000);
    assert!(failures.is_empty(), "{failures:?}");
}

/// The same cells at 20,000 reruns (binomial SE 0.15 points):
///
///     cargo test --release --test suite plan_halfwidths_full -- --ignored --nocapture
#[test]
#[ignore = "20,000 reruns per cell: cargo test --release --test suite plan_halfwidths_full -- --ignored --nocapture"]
fn plan_halfwidths_full_coverage_table() {
    let failures = check(20_000);
    assert!(failures.is_empty(), "{failures:?}");
}
