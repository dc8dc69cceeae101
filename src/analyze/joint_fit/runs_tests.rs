//! The joint fit on data with runs: Newton with the analytic Hessian of the per-run likelihood.

use super::*;
use crate::exact::joint_likelihood::Count;
use rand::{Rng, SeedableRng};
use rand_distr::{Binomial, Distribution, StandardNormal};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Per-run counts from the joint model with per-run noise omega (`runs` runs of `samples`).
fn simulate_runs(
    seed: u64,
    problems: usize,
    (runs, samples): (usize, u64),
    (mu, sigma): (f64, f64),
    shift: &[f64],
    tau: &[f64],
    omega: &[f64],
) -> JointData {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let rows = (0..problems)
        .map(|_| {
            let z: f64 = mu + sigma * rng.sample::<f64, _>(StandardNormal);
            (0..shift.len())
                .map(|m| {
                    let e: f64 = rng.sample(StandardNormal);
                    let logit = z + shift[m] + tau[m] * e;
                    let list = (0..runs)
                        .map(|_| {
                            let eta: f64 = rng.sample(StandardNormal);
                            let p = 1.0 / (1.0 + (-(logit + omega[m] * eta)).exp());
                            let c = Binomial::new(samples, p).unwrap().sample(&mut rng);
                            Count::new(c as usize, samples as usize)
                        })
                        .collect();
                    Some(list)
                })
                .collect()
        })
        .collect();
    JointData::with_runs(shift.len(), rows).unwrap()
}

/// With runs the fit ran BFGS on a Gauss–Hermite likelihood and stopped with a gradient of
/// 1e-5 (and a warning) after hundreds of evaluations; it now takes Newton steps with the
/// analytic Hessian and ends below 1e-6, at the optimum a second optimiser (BFGS from
/// another start) finds, in a few dozen evaluations before the intervals.
#[test]
fn fit_with_runs_stopped_with_a_gradient_of_1e_5_after_hundreds_of_evaluations() {
    for seed in [7, 8] {
        let data = simulate_runs(
            seed,
            60,
            (3, 6),
            (0.3, 1.2),
            &[0.0, -0.5],
            &[0.3, 0.4],
            &[0.7, 0.7],
        );
        let options = JointFitOptions {
            prior_mode: PriorMode::Never,
            ..JointFitOptions::default()
        };
        let fit = fit_joint(&data, &options);
        println!(
            "seed {seed}: gradient {:.1e}, {} evaluations, omega {:?}",
            fit.gradient, fit.evaluations, fit.omega
        );
        assert!(
            fit.gradient < GRADIENT_TOLERANCE,
            "gradient {}",
            fit.gradient
        );
        assert!(fit.evaluations < 400, "{} evaluations", fit.evaluations);
        // a second optimiser: BFGS from a start away from the estimate
        let problem = Problem {
            data: &data,
            quad: JointQuadrature::default(),
            prior: None,
            layout: fit.estimates.iter().map(|e| e.parameter).collect(),
            fixed: Vec::new(),
            evaluations: std::cell::Cell::new(0),
            profile_capped: std::cell::Cell::new(false),
            progress: &|_| {},
        };
        let start: Vec<f64> = fit
            .estimates
            .iter()
            .map(|e| match e.parameter {
                Parameter::Mu | Parameter::Shift(_) => e.value + 0.3,
                _ => 0.5 + 1.5 * e.value,
            })
            .collect();
        let (other, value) = problem.minimise(&start, None, 2000, usize::MAX);
        let other = problem.to_natural(&other);
        let best = -fit.log_likelihood;
        println!("BFGS: {value:.10} vs Newton {best:.10}");
        assert!(value >= best - 1e-8, "BFGS found {value}, Newton {best}");
        assert!(value - best < 1e-6, "BFGS {value} vs Newton {best}");
        for (e, o) in fit.estimates.iter().zip(&other) {
            if let Some(se) = e.se {
                assert!(
                    (e.value - o).abs() < 0.01 * se,
                    "{}: {} vs {o} (SE {se})",
                    e.parameter,
                    e.value
                );
            }
        }
    }
}
