//! A profile-interval end found directly (Venzon and Moolgavkar, 1988): one Newton iteration
//! moves the profiled parameter and the others together, so each evaluation of the objective
//! (with its gradient and Hessian) both optimises the other parameters and moves toward the end.
//!
//! At a point theta with gradient g and Hessian H of the objective f (-ln L), i the profiled
//! parameter and r the others (those held at a bound 0 left out), the Newton step of the others
//! for a move d of theta_i is delta_r = a + b d with a = -H_rr^-1 g_r and b = -H_rr^-1 H_ri
//! (b is the tangent of the profile path). Along it the profile value is, to second order,
//! f - g_r' H_rr^-1 g_r / 2 + (g_i + H_ir a) d + ..., so the signed root
//! r = sqrt(2 (f_profile - f_hat)) has the slope (g_i + H_ir a) / r, and the step d is the
//! Newton step of r toward 1.96 (r is close to linear in theta_i; a step that would cross the
//! estimate scales the distance from it by 1.96 / r instead). A spread a step takes to 0 is held
//! there, as in the profile points' Newton runs. Where the predicted decrease is above
//! [`TRUSTED_DECREASE`] the quadratic model is far off, and the others are first optimised at
//! that theta_i by the profile points' Newton run (once). The iteration stops at a point whose
//! profile value is known to within [`END_DECREASE`] (the others' predicted Newton decrease)
//! and whose r is within [`END_TOLERANCE`] of 1.96 (a tenth of the bracketed search's
//! tolerance); it gives up (`None`, and the caller runs the bracketed search instead) when the
//! objective is not finite, r moves away from 1.96 (by more than a factor of 2), a spread held
//! at 0 would be released (the objective curves down from 0 in it), or after
//! [`END_ITERATIONS`] iterations. Each step costs one evaluation, where a bracketed search's
//! every point is a Newton run of two or three: an end takes three to five evaluations.
use super::super::{Problem, SPREAD_ZERO};
use crate::numerics::optimise::damped_inverse;

/// The end's signed root r is within this of 1.96 (the bracketed search's tolerance is 1e-4).
pub(super) const END_TOLERANCE: f64 = 1e-5;
/// The other parameters' predicted Newton decrease of the objective at the end is below this.
const END_DECREASE: f64 = 1e-8;
/// A predicted decrease above this says the point is far from the profile path, where the
/// quadratic model is not to be trusted: the others are then optimised at that theta_i first.
const TRUSTED_DECREASE: f64 = 1.0;
/// Most iterations of one direct search.
const END_ITERATIONS: usize = 12;

/// Where a direct search ends.
pub(super) struct Side<'a> {
    /// The natural parameters at the estimate (a spread at its bound 0 set to 0).
    pub(super) natural: &'a [f64],
    /// The profiled parameter.
    pub(super) i: usize,
    /// The objective at the estimate.
    pub(super) opt_value: f64,
    /// d rest / d theta_i at the estimate (the first point's predictor).
    pub(super) slope: &'a [f64],
    /// The signed root sought (1.96).
    pub(super) target: f64,
    /// +1 for the upper end, -1 for the lower.
    pub(super) dir: f64,
    /// A bound on theta_i on this side (0 for a spread's lower end).
    pub(super) limit: Option<f64>,
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The end of `side` by the direct iteration (module doc) from theta_i = `start` (the others
/// moved along the slope), or `None` when it gives up. When a step would cross the side's
/// limit, the profile at the limit decides as in the bracketed search: the limit is the end
/// when its r is at most the target, else `None`.
pub(super) fn direct_end(problem: &Problem<'_>, side: &Side<'_>, start: f64) -> Option<f64> {
    let (i, value) = (side.i, side.natural[side.i]);
    let n = side.natural.len();
    let mut x = side.natural.to_vec();
    for j in (0..n).filter(|&j| j != i) {
        let moved = x[j] + (start - value) * side.slope[j];
        if moved.is_finite() && (!problem.is_spread(j) || moved > 0.0) {
            x[j] = moved;
        }
    }
    x[i] = start;
    // a spread at its bound 0 stays there (ln L is even in it, so its derivative is 0), and so
    // does one a step takes to 0
    let mut zero: Vec<bool> = (0..n)
        .map(|j| j != i && problem.is_spread(j) && x[j] <= SPREAD_ZERO)
        .collect();
    let mut last_gap = f64::INFINITY;
    let mut reoptimised = false;
    for _ in 0..END_ITERATIONS {
        for j in (0..n).filter(|&j| zero[j]) {
            x[j] = 0.0;
        }
        let free: Vec<usize> = (0..n).filter(|&j| j != i && !zero[j]).collect();
        let (f, g, h) = problem.objective_newton(&x)?;
        let hinv = damped_inverse(
            &free
                .iter()
                .map(|&a| free.iter().map(|&b| h[a][b]).collect())
                .collect::<Vec<Vec<f64>>>(),
        )?;
        let g_r: Vec<f64> = free.iter().map(|&j| g[j]).collect();
        let h_ri: Vec<f64> = free.iter().map(|&j| h[j][i]).collect();
        let a: Vec<f64> = hinv.iter().map(|row| -dot(row, &g_r)).collect();
        let b: Vec<f64> = hinv.iter().map(|row| -dot(row, &h_ri)).collect();
        let decrease = -0.5 * dot(&g_r, &a);
        let drop = f - decrease - side.opt_value;
        if !(drop > 0.0 && decrease <= TRUSTED_DECREASE) {
            // the quadratic model is far off here: optimise the others at this theta_i (once)
            if reoptimised {
                return None;
            }
            reoptimised = true;
            x = problem.minimise_newton_at(&x, Some((i, x[i])))?.0;
            for j in 0..n {
                zero[j] = j != i && problem.is_spread(j) && x[j] <= SPREAD_ZERO;
            }
            continue;
        }
        let r = (2.0 * drop).sqrt();
        let gap = r - side.target;
        if gap.abs() < END_TOLERANCE && decrease < END_DECREASE {
            let release = (0..n).any(|j| zero[j] && h[j][j] < 0.0);
            return (!release).then_some(x[i]);
        }
        // diverging
        if gap.abs() > 2.0 * last_gap.max(END_TOLERANCE) {
            return None;
        }
        last_gap = gap.abs();
        let slope_r = (g[i] + dot(&h_ri, &a)) / r;
        let mut v = x[i] - gap / slope_r;
        let outward = side.dir * slope_r > 0.0;
        if !outward || side.dir * (v - value) <= 0.0 {
            // r is about linear from 0 at the estimate: scale the distance to reach the target
            v = value + (x[i] - value) * side.target / r;
        }
        if let Some(l) = side.limit.filter(|l| side.dir * (v - l) >= 0.0) {
            return at_limit(problem, side, &x, &free, &a, &b, l);
        }
        let step = v - x[i];
        x[i] = v;
        for (k, &j) in free.iter().enumerate() {
            x[j] += a[k] + b[k] * step;
            if problem.is_spread(j) && x[j] <= SPREAD_ZERO {
                zero[j] = true;
            }
        }
    }
    None
}

/// The profile at the side's limit `l` (a Newton run from `x` with the others moved by the
/// step `a + b (l - x_i)`): `l` when its signed root is at most the target, else `None`.
fn at_limit(
    problem: &Problem<'_>,
    side: &Side<'_>,
    x: &[f64],
    free: &[usize],
    a: &[f64],
    b: &[f64],
    l: f64,
) -> Option<f64> {
    let mut warm = x.to_vec();
    let step = l - x[side.i];
    for (k, &j) in free.iter().enumerate() {
        let moved = warm[j] + a[k] + b[k] * step;
        if moved.is_finite() && (!problem.is_spread(j) || moved > 0.0) {
            warm[j] = moved;
        }
    }
    warm[side.i] = l;
    if within_drop(problem, side, &warm) {
        return Some(l);
    }
    let (_, f) = problem.minimise_newton_at(&warm, Some((side.i, l)))?;
    let r = (2.0 * (f - side.opt_value).max(0.0)).sqrt();
    (r <= side.target).then_some(l)
}

/// True when the objective at `x` is within the drop of the estimate's: since the profile at
/// x_i is the minimum over the others, it is then within the drop too, and x_i is inside the
/// interval (one evaluation of the value, where the profile point is a Newton run).
fn within_drop(problem: &Problem<'_>, side: &Side<'_>, x: &[f64]) -> bool {
    let f = problem.objective(x);
    (2.0 * (f - side.opt_value).max(0.0)).sqrt() <= side.target
}

/// [`within_drop`] at theta_i = `l` with the others moved from the estimate along the slope:
/// true says `l` (a limit of the side) is the end.
pub(super) fn within_drop_at(problem: &Problem<'_>, side: &Side<'_>, l: f64) -> bool {
    let (i, value) = (side.i, side.natural[side.i]);
    let mut x = side.natural.to_vec();
    for j in (0..x.len()).filter(|&j| j != i) {
        let moved = x[j] + (l - value) * side.slope[j];
        if moved.is_finite() && (!problem.is_spread(j) || moved > 0.0) {
            x[j] = moved;
        }
    }
    x[i] = l;
    within_drop(problem, side, &x)
}
