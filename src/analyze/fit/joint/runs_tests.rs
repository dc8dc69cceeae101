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
        let problem =
            Problem::unpenalised(&data, fit.estimates.iter().map(|e| e.parameter).collect());
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

/// The two branches of the one likelihood: per-run data written as one run per entry with
/// omega 0 (run integrals J, exact binomials at omega 0, summed per entry) give on an 800 x 2
/// code benchmark the ln L, gradient and Hessian of the same counts pooled (each entry the
/// inner integral of its count, no run noise in the layout) to 1e-9, at the truth and with a
/// shift_sd at 0.
#[test]
fn per_run_path_with_one_run_per_entry_gives_the_pooled_likelihood() {
    use crate::exact::joint_likelihood::{log_likelihood_with_hessian, JointParams};
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(36);
    let (shift, tau) = ([0.0, 0.8], [4.0, 2.5]);
    let rows: Vec<Vec<Option<Count>>> = (0..800)
        .map(|_| {
            let z: f64 = 12.0 * rng.sample::<f64, _>(StandardNormal);
            (0..2)
                .map(|m| {
                    let e: f64 = rng.sample(StandardNormal);
                    let p = 1.0 / (1.0 + (-(z + shift[m] + tau[m] * e)).exp());
                    let c = Binomial::new(10, p).unwrap().sample(&mut rng);
                    Some(Count::new(c as usize, 10))
                })
                .collect()
        })
        .collect();
    let pooled = JointData::new(2, rows.clone()).unwrap();
    let runs = JointData::with_runs(
        2,
        rows.iter()
            .map(|r| r.iter().map(|e| e.map(|c| vec![c])).collect())
            .collect(),
    )
    .unwrap();
    for p in [
        JointParams {
            mu: 0.0,
            sigma: 12.0,
            shift: vec![0.0, 0.8],
            tau: vec![4.0, 2.5],
            omega: Vec::new(),
        },
        JointParams {
            mu: 0.1,
            sigma: 11.8,
            shift: vec![0.0, 0.7],
            tau: vec![4.4, 0.0],
            omega: Vec::new(),
        },
    ] {
        let mut q = p.clone();
        q.omega = vec![0.0, 0.0];
        let a = log_likelihood_with_hessian(&pooled, &p).unwrap();
        let b = log_likelihood_with_hessian(&runs, &q).unwrap();
        println!("pooled {:.12}, per-run {:.12}", a.0, b.0);
        assert!((a.0 - b.0).abs() < 1e-9, "{} vs {}", a.0, b.0);
        let flat = |g: &crate::exact::joint_likelihood::JointGradient| {
            [vec![g.mu, g.sigma], g.shift.clone(), g.tau.clone()].concat()
        };
        for (x, y) in flat(&a.1).iter().zip(&flat(&b.1)) {
            assert!((x - y).abs() < 1e-9, "gradient {x} vs {y}");
        }
        // the per-run Hessian has omega's rows and columns after the pooled layout's 6
        for i in 0..6 {
            for j in 0..6 {
                let (x, y) = (a.2[i][j], b.2[i][j]);
                assert!(
                    (x - y).abs() < 1e-8 * (1.0 + x.abs()),
                    "H[{i}][{j}] {x} vs {y}"
                );
            }
        }
    }
}

/// One likelihood: the fit of pooled counts and the fit of the same counts laid out as one run
/// per entry with run noise held at 0 (as the CLI holds it when runs cannot identify it) free
/// the same parameters and give the same ln L (1e-9 relative) and the same estimates and SEs
/// (within 1e-6 of an SE; the two differ only in the rounding of the integrals).
#[test]
fn pooled_fit_and_runs_fit_of_one_run_per_entry_give_the_same_likelihood_and_estimates() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
    let (shift, tau) = ([0.0, -0.6, 0.4], [0.5, 0.8, 0.3]);
    let rows: Vec<Vec<Option<Count>>> = (0..300)
        .map(|_| {
            let z: f64 = 0.2 + 1.5 * rng.sample::<f64, _>(StandardNormal);
            (0..3)
                .map(|m| {
                    let e: f64 = rng.sample(StandardNormal);
                    let p = 1.0 / (1.0 + (-(z + shift[m] + tau[m] * e)).exp());
                    let c = Binomial::new(8, p).unwrap().sample(&mut rng);
                    Some(Count::new(c as usize, 8))
                })
                .collect()
        })
        .collect();
    let pooled = JointData::new(3, rows.clone()).unwrap();
    let runs = JointData::with_runs(
        3,
        rows.iter()
            .map(|r| r.iter().map(|e| e.map(|c| vec![c])).collect())
            .collect(),
    )
    .unwrap();
    let a = fit_joint(&pooled, &JointFitOptions::default());
    let held = JointFitOptions {
        fixed: (0..3).map(|m| (Parameter::Omega(m), 0.0)).collect(),
        ..JointFitOptions::default()
    };
    let b = fit_joint(&runs, &held);
    println!(
        "ln L pooled {:.12}, one run per entry {:.12}",
        a.log_likelihood, b.log_likelihood
    );
    assert!(
        (a.log_likelihood - b.log_likelihood).abs() < 1e-9 * a.log_likelihood.abs(),
        "{} vs {}",
        a.log_likelihood,
        b.log_likelihood
    );
    let names = |f: &JointFit| f.estimates.iter().map(|e| e.parameter).collect::<Vec<_>>();
    assert_eq!(names(&a), names(&b), "the same free parameters");
    assert_eq!(b.omega, vec![0.0; 3], "no run noise with one run per entry");
    for (x, y) in a.estimates.iter().zip(&b.estimates) {
        let se = x.se.expect("an SE");
        let y_se = y.se.expect("an SE");
        println!(
            "{}: {:.12} vs {:.12} (SE {se:.6} vs {y_se:.6})",
            x.parameter, x.value, y.value
        );
        assert!((x.value - y.value).abs() < 1e-6 * se, "{}", x.parameter);
        assert!((se - y_se).abs() < 1e-6 * se, "{} SE", x.parameter);
    }
}
