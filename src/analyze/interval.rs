//! 95% confidence intervals for a benchmark score: the mean over N problems of bounded
//! per-problem scores (pass@k, pass^k, maj@k in [0, 1]; a paired difference in [-1, 1]).
//!
//! Why not estimate -/+ 1.96 SE (or the percentile bootstrap, which behaves the same): at N = 10
//! to 30 both under-cover, because the SE is itself estimated from N values (a t quantile, not
//! z, is due) and because per-problem scores pile up at 0 and 1, where the sampling distribution
//! of the mean is skewed and its estimated variance shrinks with the distance to the bound.
//!
//! The construction used ([`IntervalMethod::Wilson`], the default): the Wilson score interval
//! with an effective sample size and a t quantile, as proposed for means of bounded scores from
//! clustered samples (Korn and Graubard 1998; Kott and Carr 1997; compared in Dean and Pagano
//! 2015). With the scores mapped to [0, 1], mean m and SE^2 = s^2 / N,
//!
//! - n* = m (1 - m) / SE^2 (the effective number of Bernoulli trials; N - 1 when every score is
//!   0 or 1, more when scores lie inside),
//! - t = the 97.5% quantile of Student's t with N - 1 degrees of freedom,
//! - interval = (m + t^2 / (2 n*) -/+ t sqrt(m (1 - m) / n* + t^2 / (4 n*^2))) / (1 + t^2 / n*).
//!
//! It never leaves the range of the scores. When every problem has the same score c (all solved,
//! none solved, or every difference 0) there is no variance to plug in; the interval is then
//! what the data allow: with P(score != c) <= u = 1 - 0.05^(1/N), the one-sided exact
//! (Clopper-Pearson) 95% bound after N problems without an exception (about 3 / N, the rule of
//! three), the mean lies in [c - u (c - lo), c + u (hi - c)]. For all solved that is
//! [0.05^(1/N), 1]. One score (N = 1) gets the same rule, which there holds any bounded mean
//! with probability 95% (Markov's inequality; see `all_equal_interval`).
//!
//! With clusters the same Wilson interval is built from the bias-reduced clustered variance with
//! Bell-McCaffrey degrees of freedom ([`wilson_with_variance`], called by [`super::cluster`]).
//!
//! The paired difference of maj@k uses [`IntervalMethod::PairedScore`] instead, a Tango-type
//! score interval whose variance is re-estimated under each hypothesised difference (and held
//! at least at the observed variance when the differences lie inside the range)
//! ([`paired_score_from_moments`]): the Wilson interval on [-1, 1] was liberal there when the
//! differences are skewed (89.4% exact coverage at N = 10, gap 1 logit).
//!
//! Measured coverage of every method here, on data drawn from the workbench's own model, is in
//! `docs/intervals.md`; the ignored test `analyze_interval_coverage_full_table` reproduces it.
use serde::{Deserialize, Serialize};
use statrs::distribution::{Beta, ContinuousCDF, StudentsT};

use crate::exact::normal::Z_95;
use crate::numerics::root::{bisect, Side, Stop};

/// Two-sided level of every interval here.
pub const LEVEL: f64 = 0.95;

/// How an interval is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum IntervalMethod {
    /// Wilson score interval with effective sample size m (1 - m) / SE^2 and a t quantile
    /// whose degrees of freedom grow from N - 1 (scores spread inside the range) to infinity
    /// (every score at an end of the range): see [`wilson_degrees_of_freedom`]. The default.
    #[default]
    Wilson,
    /// Tango-type score interval for paired differences in [-1, 1] (see
    /// [`paired_score_from_moments`]); what `analyze --compare` reports for B - A.
    PairedScore,
    /// As [`IntervalMethod::Wilson`] with the t(N - 1) quantile whatever the scores (the default
    /// before the adaptive degrees of freedom; conservative for 0/1 scores at N = 10).
    WilsonT,
    /// As [`IntervalMethod::Wilson`] with the normal quantile 1.96.
    WilsonZ,
    /// Estimate -/+ 1.96 SE (what `analyze` printed before; the percentile bootstrap covers the
    /// same). Not clipped to the range.
    Wald,
    /// Estimate -/+ t(N - 1) SE, clipped to the range.
    WaldT,
    /// Clopper-Pearson with the effective sample size, degrees-of-freedom adjusted (Korn and
    /// Graubard 1998).
    KornGraubard,
}

/// What an interval rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IntervalBasis {
    /// The per-problem scores vary; the interval comes from their mean and SE.
    Spread,
    /// Every problem has the top score (all solved): the lower end is the exact bound
    /// 0.05^(1/N) (rule of three).
    AllMax,
    /// Every problem has the bottom score (none solved): the upper end is 1 - 0.05^(1/N).
    AllMin,
    /// Every problem has the same score strictly inside the range (e.g. every paired difference
    /// 0): the ends are the exact bound on how often a problem could differ.
    AllEqual,
}

/// A 95% interval for the mean of bounded per-problem scores.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MeanInterval {
    /// Lower end.
    pub low: f64,
    /// Upper end.
    pub high: f64,
    /// What it rests on.
    pub basis: IntervalBasis,
}

/// The 97.5% quantile of Student's t with `df` degrees of freedom. Cost: O(1).
pub fn t_quantile(df: usize) -> f64 {
    t_quantile_real(df as f64)
}

/// [`t_quantile`] for real degrees of freedom; the normal quantile for infinite `df`.
/// Cost: O(1).
///
/// Above 10^4 degrees of freedom it uses the Cornish-Fisher expansion
/// z + (z^3 + z) / (4 df) + (5 z^5 + 16 z^3 + 3 z) / (96 df^2), whose next term is below 1e-11
/// there; statrs' inversion does not terminate for very large `df` (issue 19 regression
/// `binary_scores_at_n_10_get_no_t_correction`).
pub fn t_quantile_real(df: f64) -> f64 {
    if df > 1e4 {
        let (z, d) = (Z_95, df);
        let z3 = z * z * z;
        return z
            + (z3 + z) / (4.0 * d)
            + (5.0 * z3 * z * z + 16.0 * z3 + 3.0 * z) / (96.0 * d * d);
    }
    StudentsT::new(0.0, 1.0, df).map_or(Z_95, |t| t.inverse_cdf(0.5 + LEVEL / 2.0))
}

/// Degrees of freedom of the t quantile of [`IntervalMethod::Wilson`] for `n` scores on the
/// unit scale with mean p in (0, 1) and sample variance var (denominator n - 1).
///
/// The variance of scores in [0, 1] with mean p is at most that of 0/1 scores,
/// n p (1 - p) / (n - 1) as a sample variance; the share rho = var (n - 1) / (n p (1 - p)) in
/// (0, 1] says how much of the spread is pinned to the ends. For 0/1 scores (rho = 1) the
/// variance is a function of the mean, the Wilson interval inverts an exact score test and no
/// t correction is due (df infinite: the classic Wilson interval with n* = n - 1); when the
/// scores lie inside the range the variance is estimated freely and the t(n - 1) correction
/// applies in full. In between, df = (n - 1) / (1 - rho), the t correction weighted by the share
/// of the spread that was estimated. Measured coverage in docs/intervals.md.
///
/// `scores` are on the unit scale. The free share 1 - rho equals
/// sum_i v_i (1 - v_i) / (n p (1 - p)) exactly, and is computed that way, so 0/1 scores give
/// exactly 0 (infinite df) with no rounding. Cost: O(n).
pub fn wilson_degrees_of_freedom(scores: &[f64]) -> f64 {
    let n = scores.len() as f64;
    let p = scores.iter().sum::<f64>() / n;
    let inside: f64 = scores.iter().map(|v| v * (1.0 - v)).sum();
    let free = (inside / (n * p * (1.0 - p))).min(1.0);
    if free > 0.0 {
        (n - 1.0) / free
    } else {
        f64::INFINITY
    }
}

/// The one-sided exact 95% upper bound on a probability after `n` trials without the event:
/// 1 - 0.05^(1/n), computed as -expm1(ln 0.05 / n) so small bounds keep their digits.
pub fn none_in_n_bound(n: usize) -> f64 {
    -((1.0 - LEVEL).ln() / n as f64).exp_m1()
}

/// 95% interval for the mean of `values`, each in `[lo, hi]`, by `method`. One value (N = 1) gets
/// the all-equal bound (every problem, the one there is, scores the same; see the module docs).
/// `None` without values. Cost: O(N).
pub fn mean_interval(
    values: &[f64],
    (lo, hi): (f64, f64),
    method: IntervalMethod,
) -> Option<MeanInterval> {
    let n = values.len();
    if n == 0 || hi <= lo {
        return None;
    }
    if n == 1 {
        return Some(all_equal_interval(values[0], 1, (lo, hi)));
    }
    let width = hi - lo;
    let m = values.iter().sum::<f64>() / n as f64;
    let var = values.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (n - 1) as f64;
    let se = (var / n as f64).sqrt();
    let spread = |low: f64, high: f64| MeanInterval {
        low,
        high,
        basis: IntervalBasis::Spread,
    };
    match method {
        IntervalMethod::Wald => return Some(spread(m - Z_95 * se, m + Z_95 * se)),
        IntervalMethod::WaldT => {
            let t = t_quantile(n - 1);
            return Some(spread((m - t * se).max(lo), (m + t * se).min(hi)));
        }
        IntervalMethod::PairedScore if (lo, hi) == (-1.0, 1.0) => {
            let all_equal = values.iter().all(|&v| v == values[0]);
            let var = if all_equal { 0.0 } else { var };
            return paired_score_from_moments(n, m, var, is_three_point(values));
        }
        _ => {}
    }
    let first = values[0];
    if values.iter().all(|&v| v == first) {
        return Some(all_equal_interval(first, n, (lo, hi)));
    }
    // On the unit scale.
    let p = ((m - lo) / width).clamp(0.0, 1.0);
    let v = var / n as f64 / (width * width);
    let n_eff = p * (1.0 - p) / v;
    let t = match method {
        IntervalMethod::WilsonZ => Z_95,
        IntervalMethod::Wilson | IntervalMethod::PairedScore => {
            let unit: Vec<f64> = values
                .iter()
                .map(|v| ((v - lo) / width).clamp(0.0, 1.0))
                .collect();
            t_quantile_real(wilson_degrees_of_freedom(&unit))
        }
        _ => t_quantile(n - 1),
    };
    let (a, b) = match method {
        IntervalMethod::KornGraubard => {
            let n_df = n_eff * (Z_95 / t).powi(2);
            let x = p * n_df;
            let low = Beta::new(x, n_df - x + 1.0).map_or(0.0, |d| d.inverse_cdf(0.025));
            let high = Beta::new(x + 1.0, n_df - x).map_or(1.0, |d| d.inverse_cdf(0.975));
            (low, high)
        }
        _ => wilson_unit(p, v, t),
    };
    Some(spread(
        (lo + width * a.clamp(0.0, 1.0)).max(lo),
        (lo + width * b.clamp(0.0, 1.0)).min(hi),
    ))
}

/// The all-equal interval of `units` independent units (problems, or clusters) that all have
/// the mean score `first`; what [`mean_interval`] gives when every score is equal.
pub fn all_equal_bound(first: f64, units: usize, (lo, hi): (f64, f64)) -> MeanInterval {
    all_equal_interval(first, units, (lo, hi))
}

/// The Wilson interval of [`IntervalMethod::Wilson`] for a mean `mean` in `[lo, hi]` whose
/// variance `var_of_mean` was estimated elsewhere (the clustered SE squared), with the t quantile
/// of `df` degrees of freedom: n* = p (1 - p) / v on the unit scale. `None` when the variance is
/// not positive (the caller gives the all-equal bound). Cost: O(1).
pub fn wilson_with_variance(
    mean: f64,
    var_of_mean: f64,
    df: f64,
    (lo, hi): (f64, f64),
) -> Option<MeanInterval> {
    if var_of_mean <= 0.0 || hi <= lo {
        return None;
    }
    let width = hi - lo;
    let p = ((mean - lo) / width).clamp(0.0, 1.0);
    let v = var_of_mean / (width * width);
    let (a, b) = wilson_unit(p, v, t_quantile_real(df));
    Some(MeanInterval {
        low: (lo + width * a.clamp(0.0, 1.0)).max(lo),
        high: (lo + width * b.clamp(0.0, 1.0)).min(hi),
        basis: IntervalBasis::Spread,
    })
}

/// The interval when all `n` scores equal `first`: the exact bound after `n` problems without an
/// exception ([`none_in_n_bound`]), within `[lo, hi]`. At n = 1 it is
/// [first - 0.95 (first - lo), first + 0.95 (hi - first)], which holds the mean of any
/// distribution on [lo, hi] with probability at least 95% (Markov's inequality on one side:
/// P(X - lo > 20 (mean - lo)) <= 1/20, and only one side can fail).
fn all_equal_interval(first: f64, n: usize, (lo, hi): (f64, f64)) -> MeanInterval {
    let u = none_in_n_bound(n);
    let basis = if first >= hi {
        IntervalBasis::AllMax
    } else if first <= lo {
        IntervalBasis::AllMin
    } else {
        IntervalBasis::AllEqual
    };
    MeanInterval {
        low: (first - u * (first - lo)).max(lo),
        high: (first + u * (hi - first)).min(hi),
        basis,
    }
}

/// The Wilson score interval on the unit scale at mean `p`, variance of the mean `v` and
/// quantile `t`, with n* = p (1 - p) / v. Unclamped.
fn wilson_unit(p: f64, v: f64, t: f64) -> (f64, f64) {
    let n_eff = p * (1.0 - p) / v;
    let t2 = t * t / n_eff;
    let centre = (p + t2 / 2.0) / (1.0 + t2);
    let half = t / (1.0 + t2) * (v + t * t / (4.0 * n_eff * n_eff)).sqrt();
    (centre - half, centre + half)
}

/// The reported interval ([`IntervalMethod::Wilson`]) from sufficient statistics instead of the
/// scores: `n` scores in `[lo, hi]` with mean `mean`, sample variance `var` (denominator n - 1;
/// exactly 0 when every score is equal) and, on the unit scale v = (score - lo) / (hi - lo),
/// `inside` = sum_i v_i (1 - v_i) (0 when every score is at an end of the range). The interval
/// depends on the scores only through these, so the exact coverage can sum over them instead of
/// over every data set (the test suite's `exact_coverage_lattice`). Agrees with
/// [`mean_interval`] up to rounding of the statistics (tested against it by enumeration).
/// `None` with fewer than 2 scores. Cost: O(1).
pub fn wilson_from_moments(
    n: usize,
    mean: f64,
    var: f64,
    inside: f64,
    (lo, hi): (f64, f64),
) -> Option<MeanInterval> {
    if n < 2 || hi <= lo {
        return None;
    }
    if var <= 0.0 {
        return Some(all_equal_interval(mean, n, (lo, hi)));
    }
    let width = hi - lo;
    let p = ((mean - lo) / width).clamp(0.0, 1.0);
    let v = var / n as f64 / (width * width);
    let free = (inside / (n as f64 * p * (1.0 - p))).min(1.0);
    let df = if free > 0.0 {
        (n as f64 - 1.0) / free
    } else {
        f64::INFINITY
    };
    let (a, b) = wilson_unit(p, v, t_quantile_real(df));
    Some(MeanInterval {
        low: (lo + width * a.clamp(0.0, 1.0)).max(lo),
        high: (lo + width * b.clamp(0.0, 1.0)).min(hi),
        basis: IntervalBasis::Spread,
    })
}

/// Tango's restricted variance of one paired difference e in {-1, 0, 1} at mean `delta`, from
/// `b` differences +1 and `c` differences -1 among `n` (Tango 1998): the restricted maximum
/// likelihood estimate of P(e = -1) under E\[e\] = delta is
/// p = (-B + sqrt(B^2 - 4 A C)) / (2 A) with A = 2 n, B = -b - c + (2 n - b + c) delta,
/// C = -c delta (1 - delta), and Var(e) = 2 p + delta - delta^2. Cost: O(1).
pub fn tango_variance(delta: f64, b: f64, c: f64, n: f64) -> f64 {
    let a = 2.0 * n;
    let bb = -b - c + (2.0 * n - b + c) * delta;
    let cc = -c * delta * (1.0 - delta);
    let p01 = (-bb + (bb * bb - 4.0 * a * cc).max(0.0).sqrt()) / (2.0 * a);
    (2.0 * p01 + delta - delta * delta).max(0.0)
}

/// Bisection steps of [`paired_score_from_moments`] (the end points are found to 2^-60 of the
/// distance from the mean to the end of the range).
const SCORE_BISECTIONS: u32 = 60;

/// Whether every paired difference is -1, 0 or +1 (the 0/1 scores of pass@k at k = n, or of
/// pass@1 on one sample): the case where the three-point reading of
/// [`paired_score_from_moments`] is the data themselves and the interval is Tango's. Cost: O(N).
pub fn is_three_point(differences: &[f64]) -> bool {
    differences
        .iter()
        .all(|&d| d == 0.0 || d == 1.0 || d == -1.0)
}

/// The reported interval for a paired difference ([`IntervalMethod::PairedScore`]): a Tango-type
/// score interval for the mean of `n` differences in [-1, 1] with mean `mean` and sample
/// variance `var` (denominator n - 1; 0 when every difference is equal); `three_point` says
/// whether every difference is -1, 0 or +1 ([`is_three_point`]).
///
/// It is the set of Delta with (mean - Delta)^2 <= z^2 V(Delta) / n, where V(Delta) is the
/// variance of one difference under the hypothesis E\[d\] = Delta. The differences are read as
/// h e with e in {-1, 0, 1} (a discordant pair in Tango's sense, of size h), with the counts
/// b = n (q / h^2 + mean / h) / 2 of +h and c = n (q / h^2 - mean / h) / 2 of -h that reproduce
/// the mean and the mean square q = mean^2 + var (n - 1) / n; the restricted variance is
/// R(Delta) = h^2 [`tango_variance`](Delta / h). The size is h = q / |mean|, the largest for which
/// both counts are non-negative, within [sqrt(q), 1]: the most skewed three-point reading of the
/// two moments.
///
/// For 0/1 differences (`three_point`) the reading is the data and V = R: Tango's interval. For
/// differences inside the range (per-problem unbiased pass@k at k < n, maj@k) the reading is a
/// model, and its restricted variance can fall well below the variance of the data on the side
/// towards zero (a reading with no negative difference has R(Delta) -> 0 as Delta -> 0, while
/// the data have negative differences); there V(Delta) = max(R(Delta), R(mean)), where
/// R(mean) = q - mean^2 is the observed variance with denominator n (the unrestricted maximum
/// likelihood value, as in Tango's statistic): the interval contains the Wald interval
/// mean -/+ z sqrt(R(mean) / n) and keeps the score interval's skew where the reading asks for
/// more. When every difference is
/// equal the interval is the exact all-equal bound, as for [`mean_interval`]. `None` with fewer
/// than 2 differences. Cost: O(1) (120 evaluations).
pub fn paired_score_from_moments(
    n: usize,
    mean: f64,
    var: f64,
    three_point: bool,
) -> Option<MeanInterval> {
    if n < 2 {
        return None;
    }
    if var <= 0.0 {
        return Some(all_equal_interval(mean, n, (-1.0, 1.0)));
    }
    paired_score_scaled(n, mean, var, n as f64, Z_95, three_point)
}

/// [`paired_score_from_moments`] at an effective sample size `n_eff` in place of n in the score
/// test (n still gives the moments) and the quantile `t`: the clustered paired interval uses
/// n_eff = N / design effect and the Bell-McCaffrey t (`analyze::cluster`), so the floor
/// var / n_eff of the variance of the mean is the clustered variance. `None` with fewer than 2
/// differences or a zero variance. Cost: O(1) (120 evaluations).
pub fn paired_score_scaled(
    n: usize,
    mean: f64,
    var: f64,
    n_eff: f64,
    t: f64,
    three_point: bool,
) -> Option<MeanInterval> {
    if n < 2 || var <= 0.0 || n_eff <= 0.0 {
        return None;
    }
    let nf = n as f64;
    let q = mean * mean + var * (nf - 1.0) / nf;
    let h = if mean == 0.0 {
        1.0
    } else {
        (q / mean.abs()).min(1.0)
    };
    // q can exceed 1 by rounding when every difference is +-1: keep the bounds ordered.
    let h = h.max(q.sqrt().min(1.0)).min(1.0);
    let b = (nf * (q / (h * h) + mean / h) / 2.0).max(0.0);
    let c = (nf * (q / (h * h) - mean / h) / 2.0).max(0.0);
    // R(mean) = q - mean^2, the observed variance with denominator n.
    let floor = if three_point {
        0.0
    } else {
        var * (nf - 1.0) / nf
    };
    let f = |delta: f64| {
        let v = h * h * tango_variance((delta / h).clamp(-1.0, 1.0), b, c, nf);
        (mean - delta).powi(2) - t * t * v.max(floor) / n_eff
    };
    let end = |side: f64| {
        if f(side) <= 0.0 {
            return side;
        }
        bisect(mean, side, Stop::Halvings(SCORE_BISECTIONS), |x| {
            if f(x) > 0.0 {
                Side::B
            } else {
                Side::A
            }
        })
    };
    Some(MeanInterval {
        low: end(-1.0).max(-1.0),
        high: end(1.0).min(1.0),
        basis: IntervalBasis::Spread,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One problem got no interval at all; it gets the all-equal bound after one problem, which
    /// holds any bounded mean with probability 95% (Markov), checked here on a two-point law.
    #[test]
    fn one_problem_got_no_interval() {
        let i = mean_interval(&[0.5], (0.0, 1.0), IntervalMethod::Wilson).unwrap();
        assert_eq!(i.basis, IntervalBasis::AllEqual);
        assert!((i.low - 0.025).abs() < 1e-15 && (i.high - 0.975).abs() < 1e-15);
        let i = mean_interval(&[1.0], (0.0, 1.0), IntervalMethod::Wilson).unwrap();
        assert_eq!(i.basis, IntervalBasis::AllMax);
        assert!((i.low - 0.05).abs() < 1e-15 && i.high == 1.0);
        // X = 1 with probability q, else 0; the mean q is covered unless X = 1 and q < 0.05, or
        // X = 0 and q > 0.95: coverage at least 95% at every q.
        for q in [0.01, 0.049, 0.05, 0.3, 0.951, 0.99] {
            let covers = |x: f64| {
                let i = mean_interval(&[x], (0.0, 1.0), IntervalMethod::Wilson).unwrap();
                i.low <= q && q <= i.high
            };
            let coverage =
                q * f64::from(u8::from(covers(1.0))) + (1.0 - q) * f64::from(u8::from(covers(0.0)));
            assert!(coverage >= 0.95 - 1e-12, "q {q}: {coverage}");
        }
    }

    #[test]
    fn t_quantiles() {
        assert!((t_quantile(9) - 2.262_157_162_8).abs() < 1e-8);
        assert!((t_quantile(29) - 2.045_229_642_1).abs() < 1e-8);
    }

    #[test]
    fn all_solved_gives_the_exact_bound_not_a_point() {
        let i = mean_interval(&[1.0; 10], (0.0, 1.0), IntervalMethod::Wilson).unwrap();
        assert_eq!(i.basis, IntervalBasis::AllMax);
        assert!((i.low - 0.05f64.powf(0.1)).abs() < 1e-15 && i.high == 1.0);
        let i = mean_interval(&[0.0; 30], (0.0, 1.0), IntervalMethod::Wilson).unwrap();
        assert_eq!((i.low, i.basis), (0.0, IntervalBasis::AllMin));
        assert!((i.high - (1.0 - 0.05f64.powf(1.0 / 30.0))).abs() < 1e-15);
        let i = mean_interval(&[0.0; 10], (-1.0, 1.0), IntervalMethod::Wilson).unwrap();
        assert_eq!(i.basis, IntervalBasis::AllEqual);
        assert!((i.high + i.low).abs() < 1e-15 && (i.high - none_in_n_bound(10)).abs() < 1e-15);
    }

    #[test]
    fn binary_scores_give_the_wilson_interval_with_t() {
        // 7 of 10 solved: s^2 = 0.21 * 10 / 9, n* = 9; Wilson with t(9) and n = 9.
        let mut v = vec![1.0; 7];
        v.extend([0.0; 3]);
        let i = mean_interval(&v, (0.0, 1.0), IntervalMethod::WilsonT).unwrap();
        let (t, n, p) = (t_quantile(9), 9.0, 0.7);
        let c = (p + t * t / (2.0 * n)) / (1.0 + t * t / n);
        let h = t / (1.0 + t * t / n) * (p * (1.0 - p) / n + t * t / (4.0 * n * n)).sqrt();
        assert!((i.low - (c - h)).abs() < 1e-12 && (i.high - (c + h)).abs() < 1e-12);
        assert!(i.low > 0.0 && i.high < 1.0 && i.low < 0.7 && 0.7 < i.high);
    }

    /// Issue 19: with 0/1 scores (pass@k at k = n) the t(N - 1) quantile on top of the Wilson
    /// interval covered 98.9% at N = 10; 0/1 scores now get the plain Wilson interval.
    #[test]
    fn binary_scores_at_n_10_get_no_t_correction() {
        let mut v = vec![1.0; 7];
        v.extend([0.0; 3]);
        let i = mean_interval(&v, (0.0, 1.0), IntervalMethod::Wilson).unwrap();
        let z = mean_interval(&v, (0.0, 1.0), IntervalMethod::WilsonZ).unwrap();
        assert_eq!((i.low, i.high), (z.low, z.high));
        assert!(wilson_degrees_of_freedom(&v).is_infinite());
    }

    #[test]
    fn spread_scores_get_the_full_t_correction() {
        // Scores 0.45 and 0.55 alternating: almost none of the spread is pinned to 0 or 1.
        let v: Vec<f64> = (0..10)
            .map(|i| if i % 2 == 0 { 0.45 } else { 0.55 })
            .collect();
        let df = wilson_degrees_of_freedom(&v);
        assert!(9.0 < df && df < 9.1, "df {df}");
        let i = mean_interval(&v, (0.0, 1.0), IntervalMethod::Wilson).unwrap();
        let t = mean_interval(&v, (0.0, 1.0), IntervalMethod::WilsonT).unwrap();
        assert!((i.high - t.high).abs() < 1e-4 && i.high < t.high);
        // Half the scores at 0.5, half at 0 or 1: half the spread pinned, df doubles.
        let h = [0.5, 0.5, 0.5, 0.5, 0.0, 1.0, 0.0, 1.0];
        assert!((wilson_degrees_of_freedom(&h) - 14.0).abs() < 1e-12);
        // One score barely inside: df finite but huge, and the quantile still returns.
        let mut b = vec![1.0; 5];
        b.extend([0.0, 0.0, 0.0, 0.0, 1e-9]);
        let df = wilson_degrees_of_freedom(&b);
        assert!(df > 1e8 && df.is_finite());
        assert!((t_quantile_real(df) - Z_95).abs() < 1e-7);
    }

    #[test]
    fn sufficient_statistics_give_the_reported_interval() {
        let cases: [(&[f64], (f64, f64)); 5] = [
            (
                &[1.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0],
                (0.0, 1.0),
            ),
            (&[0.25, 1.0, 0.0, 0.5, 1.0, 0.0, 0.25, 1.0], (0.0, 1.0)),
            (
                &[0.0, 0.25, 0.0, -0.5, 1.0, 0.0, 0.0, 0.0, 0.75, 0.0],
                (-1.0, 1.0),
            ),
            (&[0.0; 12], (-1.0, 1.0)),
            (&[1.0; 10], (0.0, 1.0)),
        ];
        for (values, (lo, hi)) in cases {
            let n = values.len() as f64;
            let mean = values.iter().sum::<f64>() / n;
            let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
            let inside: f64 = values
                .iter()
                .map(|v| {
                    let u = (v - lo) / (hi - lo);
                    u * (1.0 - u)
                })
                .sum();
            let direct = mean_interval(values, (lo, hi), IntervalMethod::Wilson).unwrap();
            let moments = wilson_from_moments(values.len(), mean, var, inside, (lo, hi)).unwrap();
            assert_eq!(direct.basis, moments.basis, "{values:?}");
            assert!(
                (direct.low - moments.low).abs() < 1e-12
                    && (direct.high - moments.high).abs() < 1e-12,
                "{values:?}: {direct:?} vs {moments:?}"
            );
        }
        assert!(wilson_from_moments(1, 0.5, 0.0, 0.0, (0.0, 1.0)).is_none());
    }

    #[test]
    fn large_df_expansion_joins_the_exact_quantile() {
        let exact = StudentsT::new(0.0, 1.0, 1e4).unwrap().inverse_cdf(0.975);
        assert!((t_quantile_real(1e4 + 1e-9) - exact).abs() < 1e-10);
    }

    #[test]
    fn never_leaves_the_range() {
        let v = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.2];
        for method in [
            IntervalMethod::Wilson,
            IntervalMethod::WaldT,
            IntervalMethod::KornGraubard,
        ] {
            let i = mean_interval(&v, (0.0, 1.0), method).unwrap();
            assert!(0.0 <= i.low && i.low < 0.92 && 0.92 < i.high && i.high <= 1.0);
        }
        let d = [1.0, 0.0, 0.5, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0];
        let i = mean_interval(&d, (-1.0, 1.0), IntervalMethod::Wilson).unwrap();
        assert!(-1.0 <= i.low && i.low < 0.35 && 0.35 < i.high && i.high <= 1.0);
        assert!(mean_interval(&[], (0.0, 1.0), IntervalMethod::Wilson).is_none());
    }
}
