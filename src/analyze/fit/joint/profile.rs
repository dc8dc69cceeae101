//! Profile-likelihood intervals of the joint fit (see the parent module and docs/fit.md,
//! "Intervals"): each end found directly ([`end`]: Newton steps that move the profiled
//! parameter and the others together), or where that gives up by a bracketed Illinois search on
//! the signed root of the likelihood ratio, each point a warm-started optimisation over the
//! other parameters, within a budget.
use super::{Problem, PROFILE_DROP, Z_95};

mod end;

/// A profile end further than this from the estimate is reported unbounded.
const PROFILE_REACH: f64 = 60.0;
/// Most objective evaluations one side of a profile interval may spend (bracket and regula
/// falsi together); past it the end is reported as the last bracket (wider than the exact end)
/// or open, and the interval is marked [`super::IntervalKind::ProfileCapped`].
const PROFILE_BUDGET: usize = 200;
/// Evaluations one profile point may always spend, even when the side's budget is nearly gone.
const PROFILE_POINT_MIN_EVALUATIONS: usize = 40;
/// Most BFGS iterations of one profile point.
const PROFILE_BFGS_ITERATIONS: usize = 100;

/// Profile-likelihood 95% interval of parameter i (module doc): on each side, the end where
/// r(v) = sqrt(2 (l_hat - max_rest l(v, rest))) reaches 1.96, first by [`end::direct_end`]
/// from the Wald end (when it is inside the side's limit). Where that gives up: r is close to linear in v
/// (|v - v_hat| / SE for a quadratic log-likelihood), so the end is bracketed by extrapolating
/// r linearly from the Wald guess and then found by Illinois regula falsi to |r - 1.96| < 1e-4;
/// each profile point is a Newton run (BFGS where Newton does not apply) warm-started from the
/// previous point's other parameters moved along `slope` (d rest / d v at the estimate,
/// Cov[rest, i] / Var[i]; zeros when there is no covariance), which leaves it a second-order
/// error from the point's optimum.
pub(super) fn profile_interval(
    problem: &Problem<'_>,
    best_internal: &[f64],
    natural: &[f64],
    i: usize,
    opt_value: f64,
    se: Option<f64>,
    slope: &[f64],
) -> (Option<f64>, Option<f64>, bool) {
    let value = natural[i];
    let target = (2.0 * PROFILE_DROP).sqrt();
    let first = Z_95 * se.unwrap_or(0.5).clamp(0.05, 5.0);
    let capped = std::cell::Cell::new(false);
    problem.profile_capped.set(false);
    let side = |dir: f64, limit: Option<f64>| -> Option<f64> {
        if limit == Some(value) {
            // an estimate at its bound (a spread at 0): that end is the bound, whose profile
            // drop is 0 (no optimisation needed to know it)
            return limit;
        }
        let direct = end::Side {
            natural,
            i,
            opt_value,
            slope,
            target,
            dir,
            limit,
        };
        let wald = value + dir * first;
        match limit.filter(|l| dir * (wald - l) >= 0.0) {
            // the Wald end is past the limit: the limit is the end when an upper bound on its
            // profile is within the drop
            Some(l) => {
                if end::within_drop_at(problem, &direct, l) {
                    return Some(l);
                }
            }
            None => {
                if let Some(end) = end::direct_end(problem, &direct, wald) {
                    return Some(end);
                }
            }
        }
        let mut warm = best_internal.to_vec();
        let mut warm_at = value;
        let start = problem.evaluations.get();
        let spent = || problem.evaluations.get() - start >= PROFILE_BUDGET;
        let mut r = |v: f64| -> f64 {
            let left = PROFILE_BUDGET.saturating_sub(problem.evaluations.get() - start);
            for (j, x) in warm.iter_mut().enumerate() {
                let moved = *x + (v - warm_at) * slope[j];
                // a spread is not moved through its bound 0
                if j != i && moved.is_finite() && (!problem.is_spread(j) || moved > 0.0) {
                    *x = moved;
                }
            }
            warm_at = v;
            let (x, obj) = problem
                .minimise_newton_at(&warm, Some((i, v)))
                .unwrap_or_else(|| {
                    problem.minimise(
                        &warm,
                        Some((i, v)),
                        PROFILE_BFGS_ITERATIONS,
                        left.max(PROFILE_POINT_MIN_EVALUATIONS),
                    )
                });
            warm = x;
            (2.0 * (obj - opt_value).max(0.0)).sqrt()
        };
        let (mut lo, mut r_lo) = (value, 0.0);
        let mut distance = first;
        let (mut hi, r_hi);
        loop {
            let mut v = value + dir * distance;
            let mut at_limit = false;
            if let Some(l) = limit {
                if dir * (v - l) >= 0.0 {
                    v = l;
                    at_limit = true;
                }
            }
            let rv = r(v);
            if rv > target {
                hi = v;
                r_hi = rv;
                break;
            }
            if at_limit {
                return Some(v);
            }
            if distance > PROFILE_REACH {
                return None;
            }
            if spent() {
                // not bracketed within the budget: the end is open, said so
                capped.set(true);
                return None;
            }
            lo = v;
            r_lo = rv;
            // r grows about linearly: aim just past the end, at least 1.2 and at most 4 times out
            let aim = if rv > 0.05 {
                distance * 1.1 * target / rv
            } else {
                4.0 * distance
            };
            distance = aim.clamp(1.2 * distance, 4.0 * distance);
        }
        // Illinois regula falsi on r(v) - target, bracket [lo (inside), hi (outside)]
        let (mut f_lo, mut f_hi) = (r_lo - target, r_hi - target);
        let mut last_side = 0;
        for _ in 0..40 {
            if (hi - lo).abs() <= 1e-6 * (1.0 + lo.abs()) {
                break;
            }
            if spent() {
                // bracketed: the outer end is past the exact one (a wider interval), said so
                capped.set(true);
                return Some(hi);
            }
            let v = lo + f_lo / (f_lo - f_hi) * (hi - lo);
            let fv = r(v) - target;
            if fv.abs() < 1e-4 {
                return Some(v);
            }
            if fv > 0.0 {
                hi = v;
                f_hi = fv;
                if last_side == 1 {
                    f_lo *= 0.5;
                }
                last_side = 1;
            } else {
                lo = v;
                f_lo = fv;
                if last_side == -1 {
                    f_hi *= 0.5;
                }
                last_side = -1;
            }
        }
        Some(0.5 * (lo + hi))
    };
    let limit = problem.is_spread(i).then_some(0.0);
    let (lo, hi) = (side(-1.0, limit), side(1.0, None));
    (lo, hi, capped.get() || problem.profile_capped.get())
}

#[cfg(test)]
mod tests;
