use rayon::prelude::*;

use super::*;
use crate::exact::joint_likelihood::{
    log_likelihood, log_likelihood_with_gradient, log_likelihood_with_hessian,
    problem_log_likelihoods, JointData, JointParams,
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

/// ln L_i and its gradient (mu, sigma, shift_0.., tau_0..) by brute force: a fixed trapezoid of
/// step `h` on [-11, 11] in both standard normal variables, no mode, no adaptation, in log
/// space; the derivatives as posterior averages of the integrand's derivatives on the same grid.
fn brute_force(row: &[Option<(usize, usize)>], p: &JointParams, h: f64) -> (f64, Vec<f64>) {
    let models = row.len();
    let steps = (22.0 / h).round() as i64;
    let grid: Vec<f64> = (0..=steps).map(|j| -11.0 + j as f64 * h).collect();
    let ln_phi = |v: f64| -0.5 * v * v - 0.5 * (2.0 * std::f64::consts::PI).ln();
    // per outer node: sum_m ln I_m + ln phi(x), and per model (d/d eta, d/d tau) of ln I_m
    let mut outer: Vec<(f64, Vec<(f64, f64)>)> = Vec::with_capacity(grid.len());
    for &x in &grid {
        let mut total = ln_phi(x) + h.ln();
        let mut derivs = vec![(0.0, 0.0); models];
        for (m, entry) in row.iter().enumerate() {
            let Some((c, n)) = *entry else { continue };
            let (cf, nf) = (c as f64, n as f64);
            let eta = p.mu + p.sigma * x + p.shift[m];
            let at = |u: f64| cf * ln_expit(u) + (nf - cf) * ln_expit(-u);
            let r = |u: f64| cf - nf / (1.0 + (-u).exp());
            if p.tau[m] == 0.0 {
                total += ln_choose(n, c) + at(eta);
                derivs[m] = (r(eta), 0.0);
                continue;
            }
            let logs: Vec<f64> = grid
                .iter()
                .map(|&e| at(eta + p.tau[m] * e) + ln_phi(e) + h.ln())
                .collect();
            let max = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let (mut s, mut a, mut b) = (0.0, 0.0, 0.0);
            for (&e, l) in grid.iter().zip(&logs) {
                let w = (l - max).exp();
                let rr = r(eta + p.tau[m] * e);
                s += w;
                a += w * rr;
                b += w * rr * e;
            }
            total += ln_choose(n, c) + max + s.ln();
            derivs[m] = (a / s, b / s);
        }
        outer.push((total, derivs));
    }
    let max = outer.iter().map(|o| o.0).fold(f64::NEG_INFINITY, f64::max);
    let mut s = 0.0;
    let mut g = vec![0.0; 2 + 2 * models];
    for (&x, (l, d)) in grid.iter().zip(&outer) {
        let w = (l - max).exp();
        s += w;
        for (m, &(a, b)) in d.iter().enumerate() {
            if row[m].is_none() {
                continue;
            }
            g[0] += w * a;
            g[1] += w * x * a;
            g[2 + m] += w * a;
            g[2 + models + m] += w * b;
        }
    }
    g.iter_mut().for_each(|v| *v /= s);
    (max + s.ln(), g)
}

fn params(mu: f64, sigma: f64, shift: &[f64], tau: &[f64]) -> JointParams {
    JointParams {
        mu,
        sigma,
        shift: shift.to_vec(),
        tau: tau.to_vec(),
        omega: Vec::new(),
    }
}

/// The rows and parameters where the Gauss–Hermite rule failed (all-or-none counts of 10 at
/// sigma 10 to 30 and shift_sd 2 to 20), where it worked (moderate values), and sharp peaks
/// (intermediate counts of 256 and 1,000).
/// A named case: one row of (correct, samples) per model, and the parameters.
type Case = (&'static str, Vec<Option<(usize, usize)>>, JointParams);

fn extreme_cases() -> Vec<Case> {
    let mut out = Vec::new();
    let code = [
        (
            "sigma 14, shift_sd 7 and 2",
            params(-1.0, 14.0, &[0.0, 1.5], &[7.0, 2.0]),
        ),
        (
            "sigma 10, shift_sd 0 and 5",
            params(0.5, 10.0, &[0.0, -2.0], &[0.0, 5.0]),
        ),
        (
            "sigma 14, no shift_sd",
            params(0.0, 14.0, &[0.0, 0.8], &[0.0, 0.0]),
        ),
        (
            "sigma 30, shift_sd 20 (far out)",
            params(2.0, 30.0, &[0.0, -3.0], &[20.0, 20.0]),
        ),
        (
            "sigma 1.5, shift_sd 0.5",
            params(0.3, 1.5, &[0.0, -0.4], &[0.5, 0.5]),
        ),
        (
            "sigma 0, shift_sd 3",
            params(0.3, 0.0, &[0.0, -0.4], &[3.0, 0.0]),
        ),
    ];
    for (name, p) in code {
        for (a, b) in [(10, 10), (0, 0), (10, 0), (0, 10), (9, 10), (1, 0), (5, 6)] {
            out.push((name, vec![Some((a, 10)), Some((b, 10))], p.clone()));
        }
    }
    for (a, sigma, tau) in [
        (256, 3.0, 0.0),
        (128, 3.0, 0.0),
        (255, 6.0, 3.0),
        (0, 6.0, 3.0),
    ] {
        out.push((
            "n = 256",
            vec![Some((a, 256))],
            params(0.0, sigma, &[0.0], &[tau]),
        ));
    }
    for a in [1000, 500, 999] {
        out.push((
            "n = 1000",
            vec![Some((a, 1000))],
            params(0.5, 3.0, &[0.0], &[1.0]),
        ));
    }
    out
}

fn data_of(row: &[Option<(usize, usize)>]) -> JointData {
    JointData::new(
        row.len(),
        vec![row
            .iter()
            .map(|e| e.map(|(c, n)| Count::new(c, n)))
            .collect()],
    )
    .unwrap()
}

/// ln L_i and its gradient against the brute force at the extremes of the fit's range, to
/// 1e-11 (ln L) and 1e-9 (gradient) absolute; the brute force's own error is shown by halving
/// its step.
#[test]
fn likelihood_and_gradient_match_brute_force_where_code_benchmarks_live() {
    let cases = extreme_cases();
    let results: Vec<(f64, f64, f64)> = cases
        .par_iter()
        .map(|(name, row, p)| {
            let data = data_of(row);
            let (want, want_g) = brute_force(row, p, 0.01);
            let (got, g) = log_likelihood_with_gradient(&data, p);
            assert_eq!(got.to_bits(), log_likelihood(&data, p).to_bits());
            let flat: Vec<f64> = [g.mu, g.sigma]
                .into_iter()
                .chain(g.shift.iter().copied())
                .chain(g.tau.iter().copied())
                .collect();
            let grad_err = flat
                .iter()
                .zip(&want_g)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            println!(
                "{name:32} {row:?}: ln L {got:.13} brute force {want:.13}, error {:.1e}, gradient error {grad_err:.1e}",
                (got - want).abs()
            );
            (got - want, grad_err, want)
        })
        .collect();
    let worst = results.iter().map(|r| r.0.abs()).fold(0.0, f64::max);
    let worst_g = results.iter().map(|r| r.1).fold(0.0, f64::max);
    println!("worst |ln L error| {worst:.2e}, worst gradient error {worst_g:.2e}");
    // the brute force's own error: its step halved on the sharpest cases
    for i in [0, 3 * 7, cases.len() - 1] {
        let (_, row, p) = &cases[i];
        let a = brute_force(row, p, 0.01).0;
        let b = brute_force(row, p, 0.005).0;
        println!("brute force, step 0.01 vs 0.005: {:.1e}", (a - b).abs());
        assert!((a - b).abs() < 1e-12, "{a} vs {b}");
    }
    assert!(worst < 1e-11, "{worst}");
    assert!(worst_g < 1e-9, "{worst_g}");
}

/// The analytic Hessian against central differences of the gradient at sigma 14, shift_sd 7.
#[test]
#[allow(clippy::needless_range_loop)]
fn hessian_matches_differences_of_the_gradient_at_large_spreads() {
    let rows = vec![
        vec![Some(Count::new(10, 10)), Some(Count::new(10, 10))],
        vec![Some(Count::new(0, 10)), Some(Count::new(0, 10))],
        vec![Some(Count::new(10, 10)), Some(Count::new(0, 10))],
        vec![Some(Count::new(3, 10)), Some(Count::new(9, 10))],
        vec![None, Some(Count::new(4, 10))],
    ];
    let data = JointData::new(2, rows).unwrap();
    let p = params(-0.7, 13.0, &[0.0, 1.2], &[6.5, 2.5]);
    let (_, _, h) = log_likelihood_with_hessian(&data, &p).unwrap();
    let flat = |q: &JointParams| -> Vec<f64> {
        let g = log_likelihood_with_gradient(&data, q).1;
        [g.mu, g.sigma]
            .into_iter()
            .chain(g.shift)
            .chain(g.tau)
            .collect()
    };
    let bump = |k: usize, d: f64| -> JointParams {
        let mut q = p.clone();
        match k {
            0 => q.mu += d,
            1 => q.sigma += d,
            2 | 3 => q.shift[k - 2] += d,
            _ => q.tau[k - 4] += d,
        }
        q
    };
    let step = 1e-4;
    for j in 0..6 {
        let (up, down) = (flat(&bump(j, step)), flat(&bump(j, -step)));
        for i in 0..6 {
            let fd = (up[i] - down[i]) / (2.0 * step);
            assert!(
                (h[i][j] - fd).abs() < 1e-5 * (1.0 + fd.abs()),
                "H[{i}][{j}]: {} vs {fd}",
                h[i][j]
            );
        }
    }
}

/// Many identical rows share their inner integrals: the total is the per-problem sum, and the
/// same bits on one thread and on several.
#[test]
fn shared_tables_give_the_per_problem_sum_for_any_thread_count() {
    let mut rows = Vec::new();
    for i in 0..200usize {
        let a = if i % 3 == 0 {
            10
        } else if i % 3 == 1 {
            0
        } else {
            i % 11
        };
        let b = if i % 5 == 0 { a } else { 10 - a.min(10) };
        rows.push(vec![Some(Count::new(a, 10)), Some(Count::new(b, 10))]);
    }
    let data = JointData::new(2, rows).unwrap();
    let p = params(0.2, 12.0, &[0.0, -0.5], &[4.0, 3.0]);
    let total = log_likelihood(&data, &p);
    let per: f64 = problem_log_likelihoods(&data, &p).iter().sum();
    assert!((total - per).abs() < 1e-9, "{total} vs {per}");
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(|| log_likelihood_with_gradient(&data, &p));
    let many = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap()
        .install(|| log_likelihood_with_gradient(&data, &p));
    assert_eq!(one.0.to_bits(), many.0.to_bits());
    assert_eq!(one.1, many.1);
}

/// ln L of a whole data set shaped like a code benchmark (800 problems x 2 models, n = 10,
/// sigma 12, shift_sd 4 and 2.5, simulated: most counts 0 or 10) against the brute force summed
/// over its distinct rows, at the truth and at a far point: within 1e-8.
#[test]
fn code_benchmark_log_likelihood_was_off_by_a_whole_unit() {
    use rand::{Rng, SeedableRng};
    use rand_distr::{Binomial, Distribution, StandardNormal};
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(36);
    let mut rows = Vec::new();
    for _ in 0..800 {
        let z: f64 = 12.0 * rng.sample::<f64, _>(StandardNormal);
        let row: Vec<Option<Count>> = [(0.0, 4.0), (0.8, 2.5)]
            .iter()
            .map(|&(s, t)| {
                let e: f64 = rng.sample(StandardNormal);
                let p = 1.0 / (1.0 + (-(z + s + t * e)).exp());
                Some(Count::new(
                    Binomial::new(10, p).unwrap().sample(&mut rng) as usize,
                    10,
                ))
            })
            .collect();
        rows.push(row);
    }
    let mut distinct: std::collections::BTreeMap<Vec<(usize, usize)>, f64> = Default::default();
    for r in &rows {
        let key = r
            .iter()
            .map(|c| c.map_or((0, 0), |c| (c.correct, c.samples)))
            .collect();
        *distinct.entry(key).or_default() += 1.0;
    }
    let data = JointData::new(2, rows).unwrap();
    for p in [
        params(0.0, 12.0, &[0.0, 0.8], &[4.0, 2.5]),
        params(1.0, 14.0, &[0.0, 0.5], &[7.0, 2.0]),
    ] {
        let got = log_likelihood(&data, &p);
        let keys: Vec<(&Vec<(usize, usize)>, &f64)> = distinct.iter().collect();
        let want: f64 = keys
            .par_iter()
            .map(|(k, mult)| {
                let row: Vec<Option<(usize, usize)>> = k.iter().map(|&c| Some(c)).collect();
                *mult * brute_force(&row, &p, 0.02).0
            })
            .collect::<Vec<f64>>()
            .iter()
            .sum();
        println!(
            "800 problems, {} distinct rows, sigma {}: ln L {got:.10}, brute force {want:.10}, error {:.1e}",
            distinct.len(),
            p.sigma,
            (got - want).abs()
        );
        assert!((got - want).abs() < 1e-8, "{got} vs {want}");
    }
}
