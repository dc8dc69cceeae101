//! The direct profile ends against a brute-force profile, and thread counts.
use super::super::{fit_joint, IntervalKind, JointFitOptions, Problem, PROFILE_DROP};
use super::end::{direct_end, Side, END_TOLERANCE};
use crate::exact::joint_likelihood::{Count, JointData};
use rand::{Rng, SeedableRng};
use rand_distr::{Binomial, Distribution, StandardNormal};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Three models' counts from the joint model, shift_sds small enough that most get a profile
/// interval (an SE above 20% of the estimate, or an estimate at 0).
fn three_models(seed: u64) -> JointData {
    simulate(seed, 100, 16, [0.3, 0.5, 0.2])
}

/// Three models' counts: `problems` problems of `samples` samples, shift_sds `tau`.
fn simulate(seed: u64, problems: usize, samples: u64, tau: [f64; 3]) -> JointData {
    let (mu, sigma, shift) = (0.3, 1.2, [0.0, -0.5, 0.4]);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let rows = (0..problems)
        .map(|_| {
            let z: f64 = mu + sigma * rng.sample::<f64, _>(StandardNormal);
            shift
                .iter()
                .zip(&tau)
                .map(|(s, t)| {
                    let e: f64 = rng.sample(StandardNormal);
                    let p = 1.0 / (1.0 + (-(z + s + t * e)).exp());
                    let c = Binomial::new(samples, p).unwrap().sample(&mut rng);
                    Some(Count::new(c as usize, samples as usize))
                })
                .collect()
        })
        .collect();
    JointData::new(3, rows).unwrap()
}

/// Every profile end the fit reports (other than 0 and open ends) is the direct search's, and
/// a brute-force profile there (the other parameters optimised by a Newton run from the
/// estimate, independently of the direct search) puts its signed root within the direct
/// search's tolerance of 1.96, and the bracketed search's tolerance (1e-4) is not needed.
#[test]
fn direct_profile_ends_agree_with_a_brute_force_profile() {
    let mut checked = 0;
    for seed in [11u64, 12, 13] {
        let data = three_models(seed);
        let fit = fit_joint(&data, &JointFitOptions::default());
        assert!(!fit.regularised, "{:?}", fit.diagnoses);
        let problem =
            Problem::unpenalised(&data, fit.estimates.iter().map(|e| e.parameter).collect());
        let natural: Vec<f64> = fit.estimates.iter().map(|e| e.value).collect();
        let opt_value = problem.objective(&natural);
        let cov = fit.covariance.clone().expect("positive definite");
        let target = (2.0 * PROFILE_DROP).sqrt();
        for (i, e) in fit.estimates.iter().enumerate() {
            if e.interval == IntervalKind::Wald {
                continue;
            }
            assert_eq!(e.interval, IntervalKind::Profile, "{}", e.parameter);
            let slope: Vec<f64> = (0..natural.len())
                .map(|j| {
                    if cov[i][i] > 0.0 {
                        cov[j][i] / cov[i][i]
                    } else {
                        0.0
                    }
                })
                .collect();
            let first = 1.959_963_984_540_054 * e.se.unwrap_or(0.5).clamp(0.05, 5.0);
            for (dir, end) in [(-1.0, e.lower), (1.0, e.upper)] {
                let end = end.expect("bounded");
                if end == 0.0 {
                    continue;
                }
                let side = Side {
                    natural: &natural,
                    i,
                    opt_value,
                    slope: &slope,
                    target,
                    dir,
                    limit: (dir < 0.0).then_some(0.0),
                };
                let direct = direct_end(&problem, &side, e.value + dir * first);
                assert_eq!(direct, Some(end), "{} side {dir}", e.parameter);
                let (_, f) = problem
                    .minimise_newton_at(&natural, Some((i, end)))
                    .expect("a Newton run");
                let r = (2.0 * (f - opt_value)).sqrt();
                println!(
                    "seed {seed} {} end {end:.9}: brute-force r - 1.96 = {:.2e}",
                    e.parameter,
                    r - target
                );
                assert!((r - target).abs() < 2.0 * END_TOLERANCE, "{r}");
                checked += 1;
            }
        }
    }
    assert!(checked >= 6, "only {checked} ends checked");
}

/// The fit, profile intervals included, has the same bits on 1 and 3 threads.
#[test]
fn profile_intervals_have_the_same_bits_on_one_and_three_threads() {
    let data = three_models(12);
    let on = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| fit_joint(&data, &JointFitOptions::default()))
    };
    let (one, three) = (on(1), on(3));
    assert!(one
        .estimates
        .iter()
        .any(|e| e.interval != IntervalKind::Wald));
    assert_eq!(format!("{one:?}"), format!("{three:?}"));
}

/// On the flat surfaces of three models x 30 problems x 8 samples (taus at 0), each profile end
/// the fit reports has a brute-force profile (the lower of a Newton run and BFGS from the
/// estimate) within the tolerance of 1.96.
#[test]
fn profile_ends_on_flat_surfaces_match_a_brute_force_profile() {
    for seed in [1144u64, 1112, 1148] {
        let data = simulate(seed, 30, 8, [0.6, 0.9, 0.6]);
        let fit = fit_joint(&data, &JointFitOptions::default());
        let problem =
            Problem::unpenalised(&data, fit.estimates.iter().map(|e| e.parameter).collect());
        assert!(!fit.regularised);
        let natural: Vec<f64> = fit.estimates.iter().map(|e| e.value).collect();
        let opt_value = problem.objective(&natural);
        let target = (2.0 * PROFILE_DROP).sqrt();
        for (i, e) in fit.estimates.iter().enumerate() {
            if e.interval != IntervalKind::Profile {
                continue;
            }
            for end in [e.lower, e.upper].into_iter().flatten() {
                if end == 0.0 {
                    continue;
                }
                let newton = problem
                    .minimise_newton_at(&natural, Some((i, end)))
                    .map_or(f64::INFINITY, |x| x.1);
                let bfgs = problem
                    .minimise(&natural, Some((i, end)), 2000, usize::MAX)
                    .1;
                let r = (2.0 * (newton.min(bfgs) - opt_value).max(0.0)).sqrt();
                println!(
                    "seed {seed} {} end {end:.6}: r {r:.6} (Newton {newton:.6}, BFGS {bfgs:.6})",
                    e.parameter
                );
                assert!(
                    (r - target).abs() < 1e-4,
                    "seed {seed} {}: r {r}",
                    e.parameter
                );
            }
        }
    }
}
