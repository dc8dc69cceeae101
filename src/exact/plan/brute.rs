//! Brute-force references for the population tables' tests: nested Gauss–Legendre panels in
//! (z, e), the structural model's moments by a plain trapezoid product, and the Gauss–Hermite
//! product rule the tables used before the lattice rule in e (`residual`), kept as the rule the
//! new one is compared with.

use rayon::prelude::*;

use super::{conditional_b, PairMoments, TAU_Z_INTERVALS};
use crate::exact::quadrature::{gauss_hermite_normal, CompositeSimpson};
use crate::model::expit;

/// E\[g(Z, E)\] for independent standard normals, by a product of composite 16-point
/// Gauss-Legendre rules on 80 panels of width 1/4 over [-10, 10] in each variable: a rule
/// independent of the rules under test. The integrands' nearest
/// singularities (poles of the logistic) lie at least pi / 3 off the real axis, so each
/// panel's error is below 1e-25 relative, and the tails beyond 10 weigh 1e-23.
pub(super) fn nested(g: impl Fn(f64, f64) -> f64) -> f64 {
    let rule = panel_rule();
    rule.iter()
        .map(|&(z, wz)| wz * rule.iter().map(|&(e, we)| we * g(z, e)).sum::<f64>())
        .sum()
}

/// Nodes and normal-density weights of [`nested`]'s rule in one variable.
fn panel_rule() -> Vec<(f64, f64)> {
    let gl = gauss_legendre(16);
    let (lo, width, panels) = (-10.0, 0.25, 80);
    let density = |x: f64| (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt();
    (0..panels)
        .flat_map(|j| {
            let centre = lo + width * (j as f64 + 0.5);
            gl.iter().map(move |&(t, w)| {
                let x = centre + 0.5 * width * t;
                (x, 0.5 * width * w * density(x))
            })
        })
        .collect()
}

/// Gauss-Legendre nodes and weights on [-1, 1]: Newton's method on the Legendre
/// polynomial from the classical cosine guesses.
fn gauss_legendre(m: usize) -> Vec<(f64, f64)> {
    (0..m)
        .map(|i| {
            let mut x = (std::f64::consts::PI * (i as f64 + 0.75) / (m as f64 + 0.5)).cos();
            let mut derivative = 1.0;
            for _ in 0..100 {
                let (mut p0, mut p1) = (1.0, x);
                for k in 2..=m {
                    let k = k as f64;
                    (p0, p1) = (p1, ((2.0 * k - 1.0) * x * p1 - (k - 1.0) * p0) / k);
                }
                derivative = m as f64 * (x * p1 - p0) / (x * x - 1.0);
                let step = p1 / derivative;
                x -= step;
                if step.abs() < 1e-16 {
                    break;
                }
            }
            (x, 2.0 / ((1.0 - x * x) * derivative * derivative))
        })
        .collect()
}

/// The population moments of the structural model (A's logit mu + sigma z + tau_a e_A, B's
/// mu + gap + sigma z + tau_b e_B) by brute force: a composite trapezoid with step 0.02
/// over |z|, |e| <= 12 in (z, e) (1,201 x 1,201 nodes; the Gaussian-weighted logistic is
/// analytic in a strip of half-width pi / 2.2 or more, where the trapezoid rule errs like
/// exp(-2 pi 1.4 / 0.02), far below rounding), using only that A and B are
/// independent given z (no conditional normal, no Gauss–Hermite, no Simpson). Var(p_B -
/// p_A) is integrated as E_z[Var(f_A | z) + Var(f_B | z) + (m_B(z) - m_A(z) - gap)^2], with
/// no cancellation.
pub(super) fn structural_moments(
    mu: f64,
    sigma: f64,
    gap: f64,
    (tau_a, tau_b): (f64, f64),
    f: impl Fn(f64) -> f64 + Sync,
) -> PairMoments {
    let steps = 1_200;
    let h = 24.0 / steps as f64;
    let norm = 1.0 / (2.0 * std::f64::consts::PI).sqrt();
    let w: Vec<f64> = (0..=steps)
        .map(|j| {
            let x = -12.0 + j as f64 * h;
            let end = if j == 0 || j == steps { 0.5 } else { 1.0 };
            end * h * norm * (-0.5 * x * x).exp()
        })
        .collect();
    let node = |j: usize| -12.0 + j as f64 * h;
    // Per z node: the conditional mean, variance and E[f q] of each model given z.
    let given = |lz: f64, tau: f64| -> (f64, f64, f64) {
        let vals: Vec<f64> = (0..=steps).map(|k| f(expit(lz + tau * node(k)))).collect();
        let m: f64 = vals.iter().zip(&w).map(|(v, w)| w * v).sum();
        let v: f64 = vals
            .iter()
            .zip(&w)
            .map(|(x, w)| w * (x - m) * (x - m))
            .sum();
        let pq: f64 = vals.iter().zip(&w).map(|(x, w)| w * x * (1.0 - x)).sum();
        (m, v, pq)
    };
    // Per z node, (mean, variance, E[f q]) given z of A, then of B.
    type Given = (f64, f64, f64);
    let rows: Vec<(Given, Given)> = (0..=steps)
        .into_par_iter()
        .map(|j| {
            let z = node(j);
            (
                given(mu + sigma * z, tau_a),
                given(mu + gap + sigma * z, tau_b),
            )
        })
        .collect();
    let e = |g: &dyn Fn(&(Given, Given)) -> f64| -> f64 {
        rows.iter().zip(&w).map(|(r, w)| w * g(r)).sum()
    };
    let mean_a = e(&|r| r.0 .0);
    let mean_b = e(&|r| r.1 .0);
    let md = mean_b - mean_a;
    PairMoments {
        mean_a,
        mean_b,
        mean_pq_a: e(&|r| r.0 .2),
        mean_pq_b: e(&|r| r.1 .2),
        var_a: e(&|r| r.0 .1 + (r.0 .0 - mean_a).powi(2)),
        var_b: e(&|r| r.1 .1 + (r.1 .0 - mean_b).powi(2)),
        var_diff: e(&|r| r.0 .1 + r.1 .1 + (r.1 .0 - r.0 .0 - md).powi(2)),
    }
}

pub(super) fn assert_moments_close(got: &PairMoments, want: &PairMoments, rel: f64, what: &str) {
    for (name, x, y) in [
        ("mean_a", got.mean_a, want.mean_a),
        ("mean_b", got.mean_b, want.mean_b),
        ("mean_pq_a", got.mean_pq_a, want.mean_pq_a),
        ("mean_pq_b", got.mean_pq_b, want.mean_pq_b),
        ("var_a", got.var_a, want.var_a),
        ("var_b", got.var_b, want.var_b),
        ("var_diff", got.var_diff, want.var_diff),
    ] {
        assert!(
            (x - y).abs() <= rel * y.abs(),
            "{what} {name}: {x} vs {y} (relative {:e})",
            (x - y).abs() / y.abs()
        );
    }
}

/// The population moments by the rule the tables used before the lattice rule in e: composite
/// Simpson on A's 4,001 nodes in x times Gauss–Hermite in e with max(24, ceil(32.8 r^2)) nodes
/// (at most 192), f_B tabulated on every (x, e) pair, the moments taken as `moments` takes them
/// (about the first node's values, two passes, the e sums of each x node first). Accurate to
/// 1e-14 for pass@1, maj@5 and maj@9; the paired variance of steeper votes errs (2e-10 to 2e-9
/// relative at maj@25, r = 1 to 3).
pub(super) fn gauss_hermite_moments(
    mu: f64,
    sigma: f64,
    gap: f64,
    (tau_a, tau_b): (f64, f64),
    f: impl Fn(f64) -> f64 + Sync,
) -> PairMoments {
    let (a1, b1, r) = conditional_b(sigma, tau_a, tau_b);
    let rule = CompositeSimpson::new(TAU_Z_INTERVALS);
    let gh = gauss_hermite_normal(((32.8 * r * r).ceil() as usize).clamp(24, 192));
    let weights = rule.weights();
    let fa = rule.tabulate(|z| f(expit(mu + a1 * z)));
    let fb: Vec<Vec<f64>> = (0..rule.len())
        .into_par_iter()
        .map(|j| {
            let z = rule.node(j);
            gh.iter()
                .map(|&(e, _)| f(expit(mu + gap + b1 * z + r * e)))
                .collect()
        })
        .collect();
    let expect = |g: &dyn Fn(f64, f64) -> f64| -> f64 {
        weights
            .iter()
            .zip(fa.iter().zip(&fb))
            .map(|(w, (&a, bs))| {
                let s: f64 = gh.iter().zip(bs).map(|(&(_, v), &b)| v * g(a, b)).sum();
                w * s
            })
            .sum()
    };
    let (a0, b0) = (fa[0], fb[0][0]);
    let (da, db) = (expect(&|a, _| a - a0), expect(&|_, b| b - b0));
    let d = |a: f64, b: f64| ((a - a0 - da), (b - b0 - db));
    PairMoments {
        mean_a: a0 + da,
        mean_b: b0 + db,
        mean_pq_a: expect(&|a, _| a * (1.0 - a)),
        mean_pq_b: expect(&|_, b| b * (1.0 - b)),
        var_a: expect(&|a, b| d(a, b).0 * d(a, b).0),
        var_b: expect(&|a, b| d(a, b).1 * d(a, b).1),
        var_diff: expect(&|a, b| (d(a, b).1 - d(a, b).0).powi(2)),
    }
}
