//! What `evalsim fit` must tell the user about a fit it made (a barely identified spread with
//! its profile interval and what it means for the plan, an optimiser that stopped short, a plan
//! left out because it would rest on a fallback), the token block's written sigma, and the
//! trace-length fit.

use super::{positive, FitResult, Status, TraceFit};
use crate::analyze::data::ModelSamples;
use crate::analyze::fit::joint::{JointFit, Parameter, GRADIENT_TOLERANCE};
use crate::exact::joint_likelihood::JointData;
use crate::numerics::optimise::golden_max;

/// The `tokens.sigma` written when the fitted one is 0 (a scenario needs sigma > 0).
pub const TOKEN_SIGMA_FLOOR: f64 = 1e-4;

/// `tokens.sigma` as the scenario writes it: the fitted value, or [`TOKEN_SIGMA_FLOOR`] when
/// that is below it (constant token counts give 0, or a rounding residue of 1e-16), which
/// [`token_sigma_note`] then explains.
pub(crate) fn token_sigma(fitted: f64) -> f64 {
    if fitted >= TOKEN_SIGMA_FLOOR {
        positive(fitted)
    } else {
        TOKEN_SIGMA_FLOOR
    }
}

/// The comment beside a token block whose sigma is written as the floor.
pub(crate) fn token_sigma_note(t: &TraceFit) -> Option<String> {
    (t.sigma < TOKEN_SIGMA_FLOOR || t.sigma.is_nan()).then(|| {
        format!(
            "tokens.sigma is fitted at {:.1e} (the traces of each problem and outcome have the same length); written as {TOKEN_SIGMA_FLOOR}, the smallest value a scenario takes (it must be above 0)",
            t.sigma
        )
    })
}

/// Why the fitted scenario gets no `plan` block for models `a` and `b`: the plan compares them
/// with their shift_sd, and one of those was refused (held at the fallback 0, which is not a
/// measurement).
pub(crate) fn plan_blocker(fit: &FitResult, a: usize, b: usize) -> Option<String> {
    if fit.models.len() < 2 {
        return None;
    }
    let refused: Vec<String> = [Parameter::Tau(a), Parameter::Tau(b)]
        .iter()
        .filter_map(|&p| fit.parameter(p))
        .filter(|q| matches!(q.status, Status::Refused { .. }))
        .map(|q| q.label.clone())
        .collect();
    (!refused.is_empty()).then(|| {
        format!(
            "no plan block: the plan rests on the shift_sd of `{}` and `{}`, and {} was not estimated (held at 0, a fallback, not a measurement)",
            fit.models[a].name,
            fit.models[b].name,
            refused.join(" and ")
        )
    })
}

/// Profile intervals of a spread wider than this ratio (upper over lower end) make it barely
/// identified; on mostly all-or-none data (at least half the problems), [`WEAK_RATIO_ALL_OR_NONE`].
const WEAK_RATIO: f64 = 2.0;
/// See [`WEAK_RATIO`].
const WEAK_RATIO_ALL_OR_NONE: f64 = 1.5;

/// A spread whose interval reaches 0 is barely identified when its upper end is beyond this
/// (logits), or [`ZERO_REACH_ALL_OR_NONE`] on mostly all-or-none data.
const ZERO_REACH: f64 = 2.0;
/// See [`ZERO_REACH`].
const ZERO_REACH_ALL_OR_NONE: f64 = 1.0;

/// The warnings of a fit (see [`FitResult::warnings`]).
pub(crate) fn fit_warnings(result: &FitResult, joint: &JointFit, data: &JointData) -> Vec<String> {
    let mut out = Vec::new();
    if joint.gradient > GRADIENT_TOLERANCE {
        out.push(format!(
            "the optimiser stopped with a gradient of {:.1e} (above {GRADIENT_TOLERANCE:.0e}): the estimates may be short of the maximum of the likelihood",
            joint.gradient
        ));
    }
    let (lo, hi) = joint
        .start_values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
    if joint.start_values.len() > 1 && hi - lo > 1e-3 {
        out.push(format!(
            "the likelihood is flat or has more than one maximum: the fit's {} starts ended at ln L from {:.3} to {:.3}; the highest is kept",
            joint.start_values.len(),
            -hi,
            -lo
        ));
    }
    let all_or_none = data
        .rows()
        .iter()
        .filter(|r| r.iter().flatten().all(|c| !c.is_intermediate()))
        .count();
    let mostly = 2 * all_or_none >= data.problems();
    for q in &result.parameters {
        let key = match q.parameter {
            Parameter::Sigma => "sigma",
            Parameter::Tau(_) => "shift_sd",
            _ => continue,
        };
        if q.status != Status::Estimated {
            continue;
        }
        let ratio = if mostly {
            WEAK_RATIO_ALL_OR_NONE
        } else {
            WEAK_RATIO
        };
        // an open end; an upper end past `ratio` times the lower; or, when 0 is inside the
        // interval, an upper end past ZERO_REACH logits (0 and a large spread both fit)
        let barely = match (q.lower, q.upper) {
            (Some(l), Some(u)) if l > 0.0 => u > ratio * l,
            (Some(_), Some(u)) => {
                u > if mostly {
                    ZERO_REACH_ALL_OR_NONE
                } else {
                    ZERO_REACH
                }
            }
            _ => true,
        };
        if !barely {
            continue;
        }
        let end = |v: Option<f64>, open: &str| v.map_or(open.to_string(), |v| format!("{v:.3}"));
        // the reason: all-or-none problems only where they are most of the data
        let why = if mostly {
            format!(
                "{all_or_none} of {} problems are all right or all wrong for every model, so the likelihood is flat in it",
                data.problems()
            )
        } else {
            "the data constrain it only loosely (more problems, or more samples per problem, would narrow it)".to_string()
        };
        out.push(format!(
            "{} is barely identified: {why}: estimate {:.3}, 95% {} interval {} to {} logits. The scenario takes {key} = {:.4} as if it were known, and so does its plan: the problems and samples the plan finds for a gap change with {key}, so run the plan again with {key} at the interval's ends before relying on it",
            q.label,
            q.value,
            q.interval.map_or("profile", |k| match k {
                crate::analyze::fit::joint::IntervalKind::Wald => "Wald",
                crate::analyze::fit::joint::IntervalKind::Profile => "profile",
                crate::analyze::fit::joint::IntervalKind::ProfileCapped => "profile (search capped)",
            }),
            end(q.lower, "no lower end"),
            end(q.upper, "no upper end within 60"),
            q.value
        ));
    }
    for m in result.models.iter().filter(|m| m.attractor.is_none()) {
        out.push(format!(
            "no answers for `{}` in the input: its attractor share, on which maj@k rests, cannot be estimated. The scenario makes no maj@k claim for it: instead of curves at an assumed share it sweeps the share over {:?} (attractor-sweep); attractor 0, the most optimistic share, would send maj@k to 100% on every problem it ever solves",
            m.name,
            super::ATTRACTOR_SWEEP
        ));
    }
    out.extend(
        result
            .goodness
            .iter()
            .filter_map(|g| super::gof::poor_fit_warning(result, g)),
    );
    out
}

/// Trace-length fit (see the module docs); `None` without tokens on every sample or without a
/// problem that has both correct and wrong traces. Cost: O(samples + grid * N).
pub fn fit_traces(model: &ModelSamples) -> Option<TraceFit> {
    if !model.has_tokens {
        return None;
    }
    let mut curve_points = Vec::new(); // (d_i, mean ln L of correct)
    let (mut diff_num, mut diff_den) = (0.0, 0.0);
    let (mut ss, mut dof) = (0.0, 0.0);
    for p in &model.problems {
        let d = 1.0 - p.correct as f64 / p.n as f64;
        let mut right = Vec::new();
        let mut wrong = Vec::new();
        for (t, ok) in p.tokens.iter().zip(p.correct_flags()) {
            let l = t.unwrap_or(1.0).max(1.0).ln();
            if ok {
                right.push(l);
            } else {
                wrong.push(l);
            }
        }
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        for v in [&right, &wrong] {
            if v.len() >= 2 {
                let m = mean(v);
                ss += v.iter().map(|x| (x - m).powi(2)).sum::<f64>();
                dof += (v.len() - 1) as f64;
            }
        }
        if !right.is_empty() {
            curve_points.push((d, mean(&right)));
        }
        if !right.is_empty() && !wrong.is_empty() {
            let (nc, nw) = (right.len() as f64, wrong.len() as f64);
            let h = nc * nw / (nc + nw);
            diff_num += h * (mean(&wrong) - mean(&right));
            diff_den += h;
        }
    }
    if curve_points.is_empty() || diff_den == 0.0 || dof == 0.0 {
        return None;
    }
    let intercept = |g: f64| {
        curve_points
            .iter()
            .map(|&(d, y)| y - (g * d).ln_1p())
            .sum::<f64>()
            / curve_points.len() as f64
    };
    let neg_sse = |g: f64| {
        let a = intercept(g);
        -curve_points
            .iter()
            .map(|&(d, y)| (y - a - (g * d).ln_1p()).powi(2))
            .sum::<f64>()
    };
    // Coarse grid, then golden section around the best grid point (g in [0, 50]).
    let grid: Vec<f64> = (0..=500).map(|i| i as f64 * 0.1).collect();
    let best = grid
        .iter()
        .copied()
        .max_by(|&a, &b| neg_sse(a).total_cmp(&neg_sse(b)))
        .unwrap_or(0.0);
    let g = golden_max(neg_sse, (best - 0.1).max(0.0), best + 0.1);
    Some(TraceFit {
        median_tokens: intercept(g).exp(),
        hard_growth: g,
        wrong_factor: (diff_num / diff_den).exp(),
        sigma: (ss / dof).sqrt(),
    })
}
