//! The joint fit's optimisers and matrix helpers: BFGS with an Armijo line search, the
//! Hessian by differences of a gradient, and the inverse of a positive definite matrix.

/// An objective returning its value and gradient.
pub(crate) type ValueAndGradient<'a> = &'a dyn Fn(&[f64]) -> (f64, Vec<f64>);

/// BFGS minimisation with a backtracking (Armijo) line search; deterministic. The first step
/// follows the gradient scaled to move at most 1 in any coordinate, and the inverse Hessian
/// starts at the Shanno–Phua scale. Stops when the predicted decrease g' H g / 2 falls below
/// 1e-12 (1 + |f|), when no step along the search direction lowers f (the objective is
/// resolved to its quadrature noise), or after `max_iterations` iterations or
/// `max_evaluations` evaluations of f (then the returned flag is true: stopped by a cap).
pub(crate) fn bfgs(
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
pub(crate) fn hessian_from_gradient(
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
pub(crate) fn invert_spd(a: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
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
