use rayon::prelude::*;

use crate::exact::joint_likelihood::{
    log_likelihood, log_likelihood_with_gradient, log_likelihood_with_hessian,
    problem_log_likelihoods, Count, JointData, JointParams,
};

/// ln(expit(u)) without cancellation.
fn ln_expit(u: f64) -> f64 {
    if u > 0.0 {
        -(-u).exp().ln_1p()
    } else {
        u - u.exp().ln_1p()
    }
}

/// ln C(n, c) by a plain sum of logs.
fn ln_choose(n: usize, c: usize) -> f64 {
    (0..c).map(|j| ((n - j) as f64 / (j + 1) as f64).ln()).sum()
}

fn ln_phi(v: f64) -> f64 {
    -0.5 * v * v - 0.5 * (2.0 * std::f64::consts::PI).ln()
}

/// ln sum exp, and the normalised weights.
fn posterior(logs: &[f64]) -> (f64, Vec<f64>) {
    let max = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let w: Vec<f64> = logs.iter().map(|l| (l - max).exp()).collect();
    let s: f64 = w.iter().sum();
    (max + s.ln(), w.into_iter().map(|x| x / s).collect())
}

/// ln J(c, u, omega) of one run and its derivatives in u and omega, by a fixed trapezoid of
/// step 0.04 on [-12, 12] in the run's standard normal noise (the derivatives as posterior
/// averages of the kernel's on the same nodes).
fn brute_run(c: Count, u: f64, omega: f64) -> (f64, f64, f64) {
    let (cf, nf) = (c.correct as f64, c.samples as f64);
    let lc = ln_choose(c.samples, c.correct);
    let kernel = |v: f64| cf * ln_expit(v) + (nf - cf) * ln_expit(-v);
    let r = |v: f64| cf - nf / (1.0 + (-v).exp());
    if omega == 0.0 {
        return (lc + kernel(u), r(u), 0.0);
    }
    let h = 0.04;
    let grid: Vec<f64> = (0..=600).map(|j| -12.0 + j as f64 * h).collect();
    let logs: Vec<f64> = grid
        .iter()
        .map(|&t| kernel(u + omega * t) + ln_phi(t) + h.ln())
        .collect();
    let (value, w) = posterior(&logs);
    let (mut a, mut b) = (0.0, 0.0);
    for (&t, w) in grid.iter().zip(&w) {
        let rr = r(u + omega * t);
        a += w * rr;
        b += w * rr * t;
    }
    (lc + value, a, b)
}

/// ln L_i and its gradient (mu, sigma, shift_0.., tau_0.., omega_0..) by brute force, without
/// modes, lattices or adaptation: each model's middle integral written in the logit u,
/// G(eta) = ln int N(u; eta, tau^2) prod_r J_r(u) du, as a fixed trapezoid of step min(0.05, tau / 20) on a
/// u grid covering every eta +/- 12 tau, the outer one a fixed trapezoid on [-12, 12] of step
/// min(0.01, 0.05 / sigma), each run integral [`brute_run`]; the derivatives as posterior
/// averages on the same nodes (d/d eta: (u - eta) / tau^2, d/d tau: ((u - eta)^2 - tau^2) /
/// tau^3).
fn brute_force(row: &[Option<Vec<Count>>], p: &JointParams) -> (f64, Vec<f64>) {
    let models = row.len();
    let hx = (0.05 / p.sigma.max(1e-9)).min(0.01);
    let steps = (24.0 / hx).round() as i64;
    let xs: Vec<f64> = (0..=steps)
        .map(|j| -12.0 + j as f64 * 24.0 / steps as f64)
        .collect();
    let hx = 24.0 / steps as f64;
    // per model and outer node: G, dG/d eta, dG/d tau, dG/d omega
    let mut terms: Vec<Vec<[f64; 4]>> = vec![vec![[0.0; 4]; xs.len()]; models];
    for (m, entry) in row.iter().enumerate() {
        let Some(runs) = entry else { continue };
        let (tau, omega) = (p.tau[m], p.omega[m]);
        let base = p.mu + p.shift[m];
        let mut distinct = runs.clone();
        distinct.sort_unstable();
        distinct.dedup();
        let sum_runs = |u: f64| -> (f64, f64, f64) {
            distinct.iter().fold((0.0, 0.0, 0.0), |acc, &c| {
                let k = runs.iter().filter(|&&r| r == c).count() as f64;
                let (v, a, b) = brute_run(c, u, omega);
                (acc.0 + k * v, acc.1 + k * a, acc.2 + k * b)
            })
        };
        if tau == 0.0 {
            terms[m] = xs
                .par_iter()
                .map(|&x| {
                    let (v, a, b) = sum_runs(base + p.sigma * x);
                    [v, a, 0.0, b]
                })
                .collect();
            continue;
        }
        let du = (tau / 20.0).min(0.05);
        let lo = base - 12.0 * p.sigma - 12.5 * tau;
        let count = ((25.0 * tau + 24.0 * p.sigma) / du).ceil() as usize;
        let us: Vec<f64> = (0..=count).map(|i| lo + i as f64 * du).collect();
        let f: Vec<(f64, f64, f64)> = us.par_iter().map(|&u| sum_runs(u)).collect();
        terms[m] = xs
            .par_iter()
            .map(|&x| {
                let eta = base + p.sigma * x;
                let first = (((eta - 12.0 * tau) - lo) / du).floor().max(0.0) as usize;
                let last = ((((eta + 12.0 * tau) - lo) / du).ceil() as usize).min(count);
                let logs: Vec<f64> = (first..=last)
                    .map(|i| {
                        let z = (us[i] - eta) / tau;
                        f[i].0 + ln_phi(z) - tau.ln() + du.ln()
                    })
                    .collect();
                let (value, w) = posterior(&logs);
                let (mut de, mut dt, mut dw) = (0.0, 0.0, 0.0);
                for (i, w) in (first..=last).zip(&w) {
                    let d = us[i] - eta;
                    de += w * d / (tau * tau);
                    dt += w * (d * d - tau * tau) / (tau * tau * tau);
                    dw += w * f[i].2;
                }
                [value, de, dt, dw]
            })
            .collect();
    }
    let logs: Vec<f64> = (0..xs.len())
        .map(|k| {
            ln_phi(xs[k])
                + hx.ln()
                + (0..models)
                    .filter(|&m| row[m].is_some())
                    .map(|m| terms[m][k][0])
                    .sum::<f64>()
        })
        .collect();
    let (value, w) = posterior(&logs);
    let mut grad = vec![0.0; 2 + 3 * models];
    for (k, w) in w.iter().enumerate() {
        for m in (0..models).filter(|&m| row[m].is_some()) {
            let t = terms[m][k];
            grad[0] += w * t[1];
            grad[1] += w * xs[k] * t[1];
            grad[2 + m] += w * t[1];
            grad[2 + models + m] += w * t[2];
            grad[2 + 2 * models + m] += w * t[3];
        }
    }
    (value, grad)
}

fn params(mu: f64, sigma: f64, shift: &[f64], tau: &[f64], omega: &[f64]) -> JointParams {
    JointParams {
        mu,
        sigma,
        shift: shift.to_vec(),
        tau: tau.to_vec(),
        omega: omega.to_vec(),
    }
}

/// Rows of two models, 3 runs of 6 samples (one entry with runs of 4 and 9, one missing):
/// all wrong, all right, mixed, and mostly all-or-none with one intermediate run.
fn rows() -> Vec<Vec<Option<Vec<Count>>>> {
    let c = Count::new;
    let all = |k: usize| Some(vec![c(k, 6), c(k, 6), c(k, 6)]);
    vec![
        vec![all(0), all(0)],
        vec![all(6), all(6)],
        vec![all(0), all(6)],
        vec![Some(vec![c(6, 6), c(5, 6), c(6, 6)]), all(6)],
        vec![
            Some(vec![c(1, 6), c(3, 6), c(2, 6)]),
            Some(vec![c(0, 4), c(9, 9)]),
        ],
        vec![None, Some(vec![c(0, 6), c(1, 6), c(0, 6)])],
    ]
}

/// ln L_i and its gradient (flat layout) of one row; a row a model missed is evaluated
/// beside a helper row, whose own terms are then taken off.
fn one_row(row: &[Option<Vec<Count>>], p: &JointParams) -> (f64, Vec<f64>) {
    let eval = |rows: Vec<Vec<Option<Vec<Count>>>>| {
        let data = JointData::with_runs(row.len(), rows).unwrap();
        let (v, g) = log_likelihood_with_gradient(&data, p);
        (v, [vec![g.mu, g.sigma], g.shift, g.tau, g.omega].concat())
    };
    if row.iter().all(Option::is_some) {
        return eval(vec![row.to_vec()]);
    }
    let helper = rows()[0].clone();
    let (v, g) = eval(vec![row.to_vec(), helper.clone()]);
    let (hv, hg) = eval(vec![helper]);
    (v - hv, g.iter().zip(&hg).map(|(a, b)| a - b).collect())
}

/// The parameter sets: where code benchmarks with runs live (sigma 14, shift_sd 7 and 2, run_sd
/// 3 and 0.5), the far end (sigma 30, shift_sd 20 and 0, run_sd 10 and 0), moderate values, no
/// shared effect (sigma 0) and a tiny shift_sd.
fn cases() -> Vec<JointParams> {
    vec![
        params(0.5, 14.0, &[0.0, -2.0], &[7.0, 2.0], &[3.0, 0.5]),
        params(-1.0, 30.0, &[0.0, 3.0], &[20.0, 0.0], &[10.0, 0.0]),
        params(0.3, 1.2, &[0.0, -0.4], &[0.5, 0.3], &[0.7, 0.7]),
        params(0.2, 0.0, &[0.0, 0.5], &[3.0, 1.0], &[1.5, 0.2]),
        params(0.2, 6.0, &[0.0, 0.5], &[0.05, 4.0], &[5.0, 2.0]),
    ]
}

/// The per-run ln L_i and its gradient against the brute force above, at the extremes a fit
/// may visit, to 1e-8 absolute (the pooled path's accuracy is about 1e-13; so is this one's).
/// Every case (about a minute; run it with
/// `cargo test --release --lib run_likelihood_and_gradient_match_a_dense_brute_force_at_the_extremes -- --ignored`);
/// the suite runs [`run_likelihood_and_gradient_match_a_dense_brute_force_where_code_benchmarks_live`].
#[test]
#[ignore = "a minute of brute force; the suite runs the code-benchmark cases"]
fn run_likelihood_and_gradient_match_a_dense_brute_force_at_the_extremes() {
    match_brute_force(&cases(), &rows());
}

/// [`run_likelihood_and_gradient_match_a_dense_brute_force_at_the_extremes`] where its brute
/// force is quick: the all-or-none rows at sigma 14 with shift_sd 7 and 2 and run_sd 3 and 0.5
/// (code benchmarks), and every row at moderate spreads and at a shift_sd of 0.05 beside one
/// of 4.
#[test]
fn run_likelihood_and_gradient_match_a_dense_brute_force_where_code_benchmarks_live() {
    let all = cases();
    match_brute_force(&all[..1], &rows()[..4]);
    match_brute_force(&[all[2].clone(), all[4].clone()], &rows());
}

/// Every row given at every parameter set given, against [`brute_force`], to 1e-8.
fn match_brute_force(cases: &[JointParams], rows: &[Vec<Option<Vec<Count>>>]) {
    let (mut worst_value, mut worst_gradient) = (0.0f64, 0.0f64);
    for p in cases {
        let p = p.clone();
        for row in rows {
            let (got, got_g) = one_row(row, &p);
            let (want, wg) = brute_force(row, &p);
            let dg = got_g
                .iter()
                .zip(&wg)
                .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
            println!(
                "sigma {} tau {:?} omega {:?} row {row:?}: ln L_i {got:.14} vs {want:.14} ({:.1e}), gradient off by {dg:.1e}",
                p.sigma,
                p.tau,
                p.omega,
                (got - want).abs()
            );
            assert!(
                (got - want).abs() < 1e-8,
                "{row:?} at {p:?}: {got} vs {want}"
            );
            assert!(dg < 1e-8, "{row:?} at {p:?}: {got_g:?} vs {wg:?}");
            worst_value = worst_value.max((got - want).abs());
            worst_gradient = worst_gradient.max(dg);
        }
    }
    println!("largest error: ln L_i {worst_value:.1e}, gradient {worst_gradient:.1e}");
}

/// The per-run Hessian (omega included) against central differences of the analytic
/// gradient, at moderate and at large spreads, and across tau = 0 and omega = 0 (whose
/// branches the analytic values at 0 must continue).
#[test]
fn run_hessian_matches_differences_of_the_gradient() {
    let rows = rows();
    let data = JointData::with_runs(2, rows).unwrap();
    for p in [&cases()[0], &cases()[1], &cases()[2]] {
        let (value, _, h) = log_likelihood_with_hessian(&data, p).unwrap();
        assert_eq!(value.to_bits(), log_likelihood(&data, p).to_bits());
        let flat = |q: &JointParams| -> Vec<f64> {
            let g = log_likelihood_with_gradient(&data, q).1;
            [vec![g.mu, g.sigma], g.shift, g.tau, g.omega].concat()
        };
        let size = h.len();
        assert_eq!(size, 8);
        #[allow(clippy::needless_range_loop)] // j names a parameter and a column
        for j in 0..size {
            let step = 1e-4;
            let shifted = |d: f64| {
                let mut q = p.clone();
                let v = match j {
                    0 => &mut q.mu,
                    1 => &mut q.sigma,
                    2 | 3 => &mut q.shift[j - 2],
                    4 | 5 => &mut q.tau[j - 4],
                    _ => &mut q.omega[j - 6],
                };
                *v += d;
                flat(&q)
            };
            let (up, down) = (shifted(step), shifted(-step));
            for i in 0..size {
                let diff = (up[i] - down[i]) / (2.0 * step);
                assert!(
                    (h[i][j] - diff).abs() < 1e-5 * (1.0 + h[i][j].abs()),
                    "H[{i}][{j}] = {} vs differences {diff} at {p:?}",
                    h[i][j]
                );
            }
        }
    }
}

/// Shared tables: the total is the per-problem sum with each problem's own evaluation, and
/// the same bits on one thread and on several.
#[test]
fn run_tables_give_the_per_problem_sum_for_any_thread_count() {
    let mut all = rows();
    all.extend(rows());
    let data = JointData::with_runs(2, all.clone()).unwrap();
    let p = &cases()[0];
    let total = log_likelihood(&data, p);
    let single = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(|| log_likelihood(&data, p));
    assert_eq!(total.to_bits(), single.to_bits());
    let per: Vec<f64> = all.iter().map(|r| one_row(r, p).0).collect();
    let by_problem = problem_log_likelihoods(&data, p);
    for (a, b) in per.iter().zip(&by_problem) {
        assert!((a - b).abs() < 1e-11, "{a} vs {b}");
    }
    assert!((total - per.iter().sum::<f64>()).abs() < 1e-11);
}
