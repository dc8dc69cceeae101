//! Minimisers and their matrix helpers: BFGS with an Armijo line search, Newton's method with
//! bounds at 0, a golden-section search in one variable, the Hessian by differences of a
//! gradient, and the inverse of a positive definite matrix (damped where it is not).

/// An objective returning its value and gradient.
pub type ValueAndGradient<'a> = &'a dyn Fn(&[f64]) -> (f64, Vec<f64>);

/// BFGS minimisation with a backtracking (Armijo) line search; deterministic. The first step
/// follows the gradient scaled to move at most 1 in any coordinate, and the inverse Hessian
/// starts at the Shanno–Phua scale. Stops when the predicted decrease g' H g / 2 falls below
/// 1e-12 (1 + |f|), when no step along the search direction lowers f (the objective is
/// resolved to its quadrature noise), or after `max_iterations` iterations or
/// `max_evaluations` evaluations of f (then the returned flag is true: stopped by a cap).
pub fn bfgs(
    f: ValueAndGradient<'_>,
    start: &[f64],
    max_iterations: usize,
    max_evaluations: usize,
) -> (Vec<f64>, f64, bool) {
    let calls = std::cell::Cell::new(0usize);
    let f = |x: &[f64]| {
        calls.set(calls.get() + 1);
        f(x)
    };
    let d = start.len();
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    let identity = |scale: f64| -> Vec<Vec<f64>> {
        (0..d)
            .map(|i| (0..d).map(|j| if i == j { scale } else { 0.0 }).collect())
            .collect()
    };
    let mut x = start.to_vec();
    let (mut fx, mut g) = f(&x);
    if !fx.is_finite() {
        return (x, fx, false);
    }
    // true until BFGS stops by itself (converged, or no step lowers f)
    let mut capped = true;
    let mut hinv = identity(1.0);
    let mut scaled = false;
    for _ in 0..max_iterations {
        if calls.get() >= max_evaluations {
            break;
        }
        let mut dir: Vec<f64> = hinv.iter().map(|row| -dot(row, &g)).collect();
        let mut slope = dot(&g, &dir);
        if slope.is_nan() || slope >= 0.0 {
            hinv = identity(1.0);
            scaled = false;
            dir = g.iter().map(|v| -v).collect();
            slope = dot(&g, &dir);
        }
        if -0.5 * slope <= 1e-12 * (1.0 + fx.abs()) {
            capped = false;
            break;
        }
        let longest = dir.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let mut alpha = if !scaled && longest > 1.0 {
            1.0 / longest
        } else if longest > 4.0 {
            4.0 / longest
        } else {
            1.0
        };
        let mut accepted = None;
        for _ in 0..60 {
            let xn: Vec<f64> = x.iter().zip(&dir).map(|(a, b)| a + alpha * b).collect();
            let (fnew, gnew) = f(&xn);
            if fnew.is_finite() && fnew <= fx + 1e-4 * alpha * slope {
                accepted = Some((xn, fnew, gnew));
                break;
            }
            alpha *= 0.5;
        }
        let Some((xn, fnew, gnew)) = accepted else {
            capped = false;
            break;
        };
        let s: Vec<f64> = xn.iter().zip(&x).map(|(a, b)| a - b).collect();
        let y: Vec<f64> = gnew.iter().zip(&g).map(|(a, b)| a - b).collect();
        let sy = dot(&s, &y);
        if sy > 1e-12 * dot(&s, &s).sqrt() * dot(&y, &y).sqrt() {
            if !scaled {
                hinv = identity(sy / dot(&y, &y));
                scaled = true;
            }
            // H <- (I - r s y') H (I - r y s') + r s s', r = 1 / s'y
            let r = 1.0 / sy;
            let hy: Vec<f64> = hinv.iter().map(|row| dot(row, &y)).collect();
            let yhy = dot(&y, &hy);
            for i in 0..d {
                for j in 0..d {
                    hinv[i][j] +=
                        -r * (s[i] * hy[j] + hy[i] * s[j]) + (r * r * yhy + r) * s[i] * s[j];
                }
            }
        }
        x = xn;
        fx = fnew;
        g = gnew;
    }
    (x, fx, capped)
}

/// Symmetric Hessian of f at x by central differences of its gradient (steps h).
pub fn hessian_from_gradient(
    grad: &dyn Fn(&[f64]) -> Vec<f64>,
    x: &[f64],
    h: &[f64],
) -> Vec<Vec<f64>> {
    let d = x.len();
    let columns: Vec<Vec<f64>> = (0..d)
        .map(|j| {
            let mut up = x.to_vec();
            up[j] += h[j];
            let mut down = x.to_vec();
            down[j] -= h[j];
            let (gp, gm) = (grad(&up), grad(&down));
            gp.iter()
                .zip(&gm)
                .map(|(a, b)| (a - b) / (2.0 * h[j]))
                .collect()
        })
        .collect();
    (0..d)
        .map(|i| {
            (0..d)
                .map(|j| 0.5 * (columns[j][i] + columns[i][j]))
                .collect()
        })
        .collect()
}

/// Inverse of a symmetric positive definite matrix by Cholesky; `None` if not positive definite.
#[allow(clippy::needless_range_loop)]
pub fn invert_spd(a: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let d = a.len();
    let mut l = vec![vec![0.0; d]; d];
    for i in 0..d {
        for j in 0..=i {
            let s: f64 = a[i][j] - (0..j).map(|k| l[i][k] * l[j][k]).sum::<f64>();
            if i == j {
                if s.is_nan() || s <= 0.0 || !s.is_finite() {
                    return None;
                }
                l[i][i] = s.sqrt();
            } else {
                l[i][j] = s / l[j][j];
            }
        }
    }
    // inverse of L, then L^-T L^-1
    let mut li = vec![vec![0.0; d]; d];
    for i in 0..d {
        li[i][i] = 1.0 / l[i][i];
        for j in 0..i {
            let s: f64 = (j..i).map(|k| l[i][k] * li[k][j]).sum();
            li[i][j] = -s / l[i][i];
        }
    }
    Some(
        (0..d)
            .map(|i| {
                (0..d)
                    .map(|j| (i.max(j)..d).map(|k| li[k][i] * li[k][j]).sum())
                    .collect()
            })
            .collect(),
    )
}

/// The inverse of a Hessian block `h`, or where it is not positive definite (far from the
/// optimum on a flat surface) that of h + lambda I with the smallest lambda of 1e-6, 1e-5, ...
/// (1 + max |h_ii|) that makes it so (a Levenberg step: a descent direction between Newton's
/// and the gradient's). `None` if none up to 1e6 times that scale does.
pub fn damped_inverse(h: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    if let Some(inverse) = invert_spd(h) {
        return Some(inverse);
    }
    let scale = 1.0
        + h.iter()
            .enumerate()
            .fold(0.0f64, |m, (i, r)| m.max(r[i].abs()));
    (0..13).find_map(|k| {
        let lambda = scale * 10f64.powi(k - 6);
        let mut damped = h.to_vec();
        for (i, row) in damped.iter_mut().enumerate() {
            row[i] += lambda;
        }
        invert_spd(&damped)
    })
}

/// An objective's value, gradient and Hessian at a point.
pub type SecondOrder = (f64, Vec<f64>, Vec<Vec<f64>>);

/// An objective returning its [`SecondOrder`] expansion, or `None` where it is not finite.
pub type ValueGradientHessian<'a> = &'a dyn Fn(&[f64]) -> Option<SecondOrder>;

/// Minimum of `objective` (f) by Newton's method from `start`, coordinates with `bounded[i]` held >= 0
/// (where `f` is even in them, so their derivative at 0 is 0), coordinate `fixed.0` held at
/// `fixed.1` if given. Each step is backtracked until it lowers f by the Armijo fraction 1e-4;
/// where the Hessian block of the free coordinates is not positive definite the step is damped
/// ([`damped_inverse`]). A bounded coordinate at or below `zero_tol` (or stepped through it) is
/// held at 0, the active bound, and released (started at 0.1) once the converged objective
/// curves down in it. Stops when every free gradient component is below 1e-9, when the
/// predicted decrease g' H^-1 g / 2 falls below 1e-20 (1 + |f|), or when no step lowers f (or,
/// once the predicted decrease is below 1e-10, lowers the gradient: f is then at its
/// rounding). `None` for a non-finite value or no convergence in 60 steps. Deterministic.
pub fn newton_minimise(
    objective: ValueGradientHessian<'_>,
    start: &[f64],
    fixed: Option<(usize, f64)>,
    bounded: &[bool],
    zero_tol: f64,
) -> Option<(Vec<f64>, f64)> {
    let held = |i: usize| fixed.is_some_and(|(k, _)| k == i);
    let mut x = start.to_vec();
    if let Some((k, v)) = fixed {
        x[k] = v;
    }
    // a spread at (or stepped through) 0 is held at 0, the active bound: ln L is even in
    // it, so its derivative there is 0; it is released when the objective curves down
    let mut zero: Vec<bool> = (0..x.len())
        .map(|i| bounded[i] && !held(i) && x[i].abs() <= zero_tol)
        .collect();
    for i in 0..x.len() {
        if bounded[i] {
            x[i] = if zero[i] { 0.0 } else { x[i].abs() };
        }
    }
    let mut released = vec![false; x.len()];
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    let (mut f, mut g, mut h) = objective(&x)?;
    for _ in 0..60 {
        let free: Vec<usize> = (0..x.len()).filter(|&i| !held(i) && !zero[i]).collect();
        let gmax = |g: &[f64]| free.iter().fold(0.0f64, |m, &i| m.max(g[i].abs()));
        let sub: Vec<Vec<f64>> = free
            .iter()
            .map(|&i| free.iter().map(|&j| h[i][j]).collect())
            .collect();
        let gf: Vec<f64> = free.iter().map(|&i| g[i]).collect();
        let hinv = damped_inverse(&sub)?;
        let dir: Vec<f64> = hinv.iter().map(|row| -dot(row, &gf)).collect();
        let slope = dot(&gf, &dir);
        if gmax(&g) < 1e-9 || -0.5 * slope <= 1e-20 * (1.0 + f.abs()) {
            let release = (0..x.len()).find(|&i| zero[i] && !released[i] && h[i][i] < 0.0);
            let Some(i) = release else {
                return Some((x, f));
            };
            // the objective falls away from 0 in this spread: start it off the bound
            (zero[i], released[i], x[i]) = (false, true, 0.1);
            (f, g, h) = objective(&x)?;
            continue;
        }
        let tiny = -0.5 * slope <= 1e-10 * (1.0 + f.abs());
        let mut alpha = 1.0;
        let mut accepted = None;
        for _ in 0..30 {
            let mut xn = x.clone();
            let mut projected = false;
            for (&i, d) in free.iter().zip(&dir) {
                xn[i] += alpha * d;
                if bounded[i] && xn[i] <= zero_tol {
                    xn[i] = 0.0;
                    projected = true;
                }
            }
            if let Some((fnew, gnew, hnew)) = objective(&xn) {
                let armijo = fnew <= f + 1e-4 * alpha * slope;
                let rounding = tiny && alpha == 1.0 && gmax(&gnew) < 0.5 * gmax(&g);
                if armijo || rounding || (projected && fnew <= f) {
                    accepted = Some((xn, fnew, gnew, hnew));
                    break;
                }
            }
            alpha *= 0.5;
        }
        let Some((xn, fnew, gnew, hnew)) = accepted else {
            return Some((x, f));
        };
        for &i in &free {
            if bounded[i] && xn[i] == 0.0 {
                zero[i] = true;
            }
        }
        (x, f, g, h) = (xn, fnew, gnew, hnew);
    }
    None
}

/// Damped Newton for the mode of a concave `h` of one variable from `e`, with `slope_curv(e)`
/// giving h'(e) and -h''(e) (at least 1): never accepts a step that lowers h, stops when the step
/// is below 1e-6 of the peak width (callers that place a quadrature rule at the mode need it only
/// roughly: such a shift changes the rule's result far below its own error). Each accepted point's h is kept for the next step's
/// comparison (the same values as evaluating it again). Returns the mode and -h'' there.
pub fn newton_mode(
    h: &dyn Fn(f64) -> f64,
    slope_curv: &dyn Fn(f64) -> (f64, f64),
    mut e: f64,
) -> (f64, f64) {
    let mut curvature = 1.0;
    let mut h_here: Option<f64> = None;
    for _ in 0..60 {
        let (d1, c) = slope_curv(e);
        curvature = c;
        let mut step = d1 / curvature;
        let h0 = h_here.unwrap_or_else(|| h(e));
        h_here = None;
        while step.abs() > 1e-15 {
            let next = h(e + step);
            if next < h0 - 1e-12 * h0.abs().max(1.0) {
                step *= 0.5;
            } else {
                h_here = Some(next);
                break;
            }
        }
        e += step;
        if step.abs() < 1e-6 * curvature.sqrt().recip() {
            break;
        }
    }
    (e, curvature)
}

/// The maximiser of a unimodal `f` on [lo, hi] by golden-section search, to an interval of
/// 1e-12 (at most 200 steps); the midpoint of the last bracket. Deterministic.
pub fn golden_max(f: impl Fn(f64) -> f64, mut lo: f64, mut hi: f64) -> f64 {
    let r = (5f64.sqrt() - 1.0) / 2.0;
    let (mut x1, mut x2) = (hi - r * (hi - lo), lo + r * (hi - lo));
    let (mut f1, mut f2) = (f(x1), f(x2));
    for _ in 0..200 {
        if (hi - lo).abs() < 1e-12 {
            break;
        }
        if f1 < f2 {
            lo = x1;
            x1 = x2;
            f1 = f2;
            x2 = lo + r * (hi - lo);
            f2 = f(x2);
        } else {
            hi = x2;
            x2 = x1;
            f2 = f1;
            x1 = hi - r * (hi - lo);
            f1 = f(x1);
        }
    }
    (lo + hi) / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// f(x, t) = (x - 1)^2 + (t^2 - a)^2 / 4 + x t^2 / 10: even in t, bounded at 0.
    fn even_in_t(a: f64) -> impl Fn(&[f64]) -> Option<SecondOrder> {
        move |v: &[f64]| {
            let (x, t) = (v[0], v[1]);
            let u = t * t - a;
            let f = (x - 1.0).powi(2) + u * u / 4.0 + x * t * t / 10.0;
            let g = vec![2.0 * (x - 1.0) + t * t / 10.0, u * t + x * t / 5.0];
            let h = vec![vec![2.0, t / 5.0], vec![t / 5.0, 3.0 * t * t - a + x / 5.0]];
            Some((f, g, h))
        }
    }

    #[test]
    fn newton_holds_a_bounded_coordinate_at_zero_where_the_objective_rises_from_it() {
        let f = even_in_t(-1.0);
        let (x, v) = newton_minimise(&f, &[3.0, 0.5], None, &[false, true], 1e-4).unwrap();
        // t = 0 then f = (x - 1)^2 + 1/4: minimum at x = 1.
        assert_eq!(x[1], 0.0);
        assert!((x[0] - 1.0).abs() < 1e-12, "{x:?}");
        assert!((v - 0.25).abs() < 1e-15, "{v}");
    }

    #[test]
    fn newton_releases_a_coordinate_held_at_zero_once_the_objective_curves_down_in_it() {
        // a = 2: at t = 0 the curvature in t is -a + x / 5 < 0, so t must leave the bound.
        let f = even_in_t(2.0);
        let (x, _) = newton_minimise(&f, &[1.0, 0.0], None, &[false, true], 1e-4).unwrap();
        let (_, g, h) = f(&x).unwrap();
        assert!(x[1] > 0.5, "{x:?}");
        assert!(g.iter().all(|g| g.abs() < 1e-9), "{g:?}");
        assert!(invert_spd(&h).is_some(), "not a minimum: {h:?}");
    }

    #[test]
    fn newton_with_a_fixed_coordinate_minimises_the_others_only() {
        let f = even_in_t(2.0);
        let (x, _) =
            newton_minimise(&f, &[0.0, 1.0], Some((1, 1.5)), &[false, true], 1e-4).unwrap();
        assert_eq!(x[1], 1.5);
        // d/dx = 2 (x - 1) + t^2 / 10 = 0.
        assert!((x[0] - (1.0 - 1.5 * 1.5 / 20.0)).abs() < 1e-12, "{x:?}");
    }

    #[test]
    fn newton_finds_the_mode_of_a_concave_function_and_its_curvature() {
        let h = |e: f64| -(e - 1.0).cosh();
        let slope_curv = |e: f64| (-(e - 1.0).sinh(), (e - 1.0).cosh());
        let (mode, curvature) = newton_mode(&h, &slope_curv, -3.0);
        assert!((mode - 1.0).abs() < 1e-6, "{mode}");
        assert!((curvature - 1.0).abs() < 1e-9, "{curvature}");
    }

    #[test]
    fn golden_section_finds_the_maximum_of_a_unimodal_function() {
        let x = golden_max(|x| -(x - 0.3f64).powi(2), 0.0, 1.0);
        assert!((x - 0.3).abs() < 1e-9, "{x}");
        // at an end of the interval
        let x = golden_max(|x| x, 0.0, 1.0);
        assert!((x - 1.0).abs() < 1e-9, "{x}");
    }

    #[test]
    fn a_matrix_that_is_not_positive_definite_is_damped_into_one() {
        let h = vec![vec![1.0, 0.0], vec![0.0, -0.5]];
        assert!(invert_spd(&h).is_none());
        let inv = damped_inverse(&h).unwrap();
        // h + lambda I with lambda the first of 1e-6, 1e-5, ... times 2 that exceeds 0.5: 2.
        assert!((inv[0][0] - 1.0 / 3.0).abs() < 1e-15, "{inv:?}");
        assert!((inv[1][1] - 1.0 / 1.5).abs() < 1e-15, "{inv:?}");
    }
}
