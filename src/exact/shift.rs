//! Per-problem disagreement (`shift_sd`): expectations over a model's own deviation.
//!
//! A model with `shift_sd` tau has logit logit(q) + tau e on a problem where its constant-shift
//! rate is q, with e ~ N(0, 1) fresh for every new problem. On the fixed benchmark e is fixed
//! ([`crate::model::problem_deviations`]) and every fixed-design formula takes the realised
//! rates; the population quantities here integrate over e instead, per problem, by
//! [`AdaptiveSimpson`] (absolute error target 1e-13 per expectation, panels over |e| <= 12 with
//! a break where the logistic turns, e = -logit(q) / tau; the cut tails weigh 4e-33).
//!
//! May depend on: `model` and [`crate::exact::noise`], [`crate::exact::quadrature`].
use crate::exact::noise::question_se;
use crate::exact::quadrature::{AdaptiveSimpson, NormalQuadrature};
use crate::model::{expit, logit};

/// E_e, over e ~ N(0, 1), of one problem's rate p(e) = expit(logit(q) + tau e).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DeviationMoments {
    /// E\[p\], the mean rate.
    pub mean: f64,
    /// Var(p) = E[(p - E p)^2], integrated as that square (no cancellation).
    pub var: f64,
    /// E[p (1 - p)], integrated as expit(x) expit(-x) (no cancellation).
    pub mean_pq: f64,
}

/// The moments of one problem's rate over the model's deviation: q is the constant-shift rate,
/// tau >= 0. A rate of 0 or 1 (no finite logit) and tau = 0 give (q, 0, q (1 - q)) exactly.
///
/// Accuracy: each expectation within about 1e-13 absolute (adaptive Simpson's target).
/// Time: O(1) (a few thousand evaluations of expit).
///
/// # Panics
/// If q is not in [0, 1] or tau is negative or not finite.
pub fn deviation_moments(q: f64, tau: f64) -> DeviationMoments {
    assert!((0.0..=1.0).contains(&q), "rate {q} is not a probability");
    assert!(
        tau.is_finite() && tau >= 0.0,
        "shift_sd {tau} must be finite and >= 0"
    );
    if tau == 0.0 || q <= 0.0 || q >= 1.0 {
        return DeviationMoments {
            mean: q,
            var: 0.0,
            mean_pq: q * (1.0 - q),
        };
    }
    let x = logit(q);
    let rule = AdaptiveSimpson::with_break(-x / tau);
    let mean = rule.expect(|e| expit(x + tau * e));
    let mean_pq = rule.expect(|e| expit(x + tau * e) * expit(-x - tau * e));
    let var = rule.expect(|e| {
        let d = expit(x + tau * e) - mean;
        d * d
    });
    DeviationMoments { mean, var, mean_pq }
}

/// Question-sampling SE of a model with per-problem disagreement, from the N constant-shift
/// rates q_i at hand: sqrt((s^2(m) + mean_i v_i) / N), where m_i and v_i are the mean and
/// variance of problem i's rate over e ([`deviation_moments`]) and s^2 is the sample variance
/// with ddof = 1 (0 for one problem, as [`question_se`]).
///
/// Over problems drawn from a population, Var(p) = Var(E[p | z]) + E[Var(p | z)]; the sample
/// variance of the m_i and the mean of the v_i are unbiased for the two parts, so the square of
/// this SE is unbiased for Var(p) / N. Every tau_i = 0 (one per problem; 0 where a rate does
/// not deviate) is [`question_se`] of the rates, bit for bit.
///
/// Time: O(N) expectations.
///
/// # Panics
/// As [`question_se`] and [`deviation_moments`].
pub fn question_se_with_deviation(rates: &[f64], taus: &[f64]) -> f64 {
    assert_eq!(rates.len(), taus.len(), "one deviation SD per problem");
    if taus.iter().all(|&tau| tau == 0.0) {
        return question_se(rates);
    }
    let moments: Vec<DeviationMoments> = rates
        .iter()
        .zip(taus)
        .map(|(&q, &tau)| deviation_moments(q, tau))
        .collect();
    question_se_of(&moments)
}

/// sqrt((s^2(m) + mean v) / N) of precomputed moments.
pub(crate) fn question_se_of(moments: &[DeviationMoments]) -> f64 {
    let problems = moments.len() as f64;
    let means: Vec<f64> = moments.iter().map(|m| m.mean).collect();
    let between = question_se(&means).powi(2);
    let within = moments.iter().map(|m| m.var).sum::<f64>() / problems / problems;
    (between + within).sqrt()
}

/// The implied correlation of two models' per-problem logits over the population of problems:
/// sigma^2 / sqrt((sigma^2 + tau_a^2)(sigma^2 + tau_b^2)), with sigma the benchmark's logit SD
/// (the constant shifts do not enter). `None` when either model's logit variance is 0.
/// Time: O(1).
pub fn logit_correlation(sigma: f64, tau_a: f64, tau_b: f64) -> Option<f64> {
    let s2 = sigma * sigma;
    let denom = ((s2 + tau_a * tau_a) * (s2 + tau_b * tau_b)).sqrt();
    (denom > 0.0).then(|| s2 / denom)
}

/// The realised (Pearson) correlation of two models' per-problem logits on the fixed
/// benchmark, over the problems where both rates are strictly between 0 and 1 (an exact 0 or 1
/// has no finite logit). `None` with fewer than two such problems or no spread. Time: O(N).
pub fn realised_logit_correlation(rates_a: &[f64], rates_b: &[f64]) -> Option<f64> {
    let pairs: Vec<(f64, f64)> = rates_a
        .iter()
        .zip(rates_b)
        .filter(|(a, b)| (0.0 < **a && **a < 1.0) && (0.0 < **b && **b < 1.0))
        .map(|(&a, &b)| (logit(a), logit(b)))
        .collect();
    pearson(&pairs)
}

fn pearson(pairs: &[(f64, f64)]) -> Option<f64> {
    if pairs.len() < 2 {
        return None;
    }
    let k = pairs.len() as f64;
    let (ma, mb) = (
        pairs.iter().map(|p| p.0).sum::<f64>() / k,
        pairs.iter().map(|p| p.1).sum::<f64>() / k,
    );
    let (mut saa, mut sbb, mut sab) = (0.0, 0.0, 0.0);
    for &(a, b) in pairs {
        saa += (a - ma) * (a - ma);
        sbb += (b - mb) * (b - mb);
        sab += (a - ma) * (b - mb);
    }
    (saa > 0.0 && sbb > 0.0).then(|| sab / (saa * sbb).sqrt())
}

/// SD across the N problems (ddof = 1; 0 for one problem) of the per-problem difference of
/// rates p_B,i - p_A,i: how much the paired difference varies from problem to problem.
/// Time: O(N).
pub fn per_problem_difference_sd(rates_a: &[f64], rates_b: &[f64]) -> f64 {
    let d: Vec<f64> = rates_a.iter().zip(rates_b).map(|(a, b)| b - a).collect();
    if d.len() < 2 {
        return 0.0;
    }
    let k = d.len() as f64;
    let m = d.iter().sum::<f64>() / k;
    (d.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (k - 1.0)).sqrt()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// E[f(e)] over e ~ N(0, 1) by a plain trapezoid on 400,001 points over |e| <= 12: the
    /// brute force the adaptive rule is tested against.
    pub(crate) fn trapezoid(f: impl Fn(f64) -> f64) -> f64 {
        let steps = 400_000;
        let h = 24.0 / steps as f64;
        let norm = 1.0 / (2.0 * std::f64::consts::PI).sqrt();
        (0..=steps)
            .map(|j| {
                let e = -12.0 + j as f64 * h;
                let w = if j == 0 || j == steps { 0.5 } else { 1.0 };
                w * f(e) * (-0.5 * e * e).exp() * norm
            })
            .sum::<f64>()
            * h
    }

    #[test]
    fn deviation_moments_match_brute_force_integration() {
        for (q, tau) in [
            (0.5, 1.0),
            (0.03, 2.5),
            (0.999, 0.3),
            (0.2, 10.0),
            (0.7, 0.01),
        ] {
            let m = deviation_moments(q, tau);
            let x = logit(q);
            let p = |e: f64| expit(x + tau * e);
            let mean = trapezoid(p);
            let second = trapezoid(|e| p(e) * p(e));
            let pq = trapezoid(|e| p(e) * expit(-x - tau * e));
            assert!(
                (m.mean - mean).abs() < 1e-11,
                "{q} {tau}: {} {mean}",
                m.mean
            );
            assert!((m.mean_pq - pq).abs() < 1e-11, "{q} {tau}");
            assert!(
                (m.var - (second - mean * mean)).abs() < 1e-11,
                "{q} {tau}: {} {}",
                m.var,
                second - mean * mean
            );
        }
    }

    #[test]
    fn logit_correlation_matches_its_formula() {
        assert_eq!(logit_correlation(2.0, 0.0, 0.0), Some(1.0));
        let c = logit_correlation(2.0, 1.0, 2.0).unwrap();
        assert!((c - 4.0 / (5.0f64 * 8.0).sqrt()).abs() < 1e-15);
        assert_eq!(logit_correlation(0.0, 0.0, 0.0), None);
        // A model with no logit variance correlates with nothing; no shared part means 0.
        assert_eq!(logit_correlation(0.0, 1.0, 0.0), None);
        assert_eq!(logit_correlation(0.0, 1.0, 2.0), Some(0.0));
    }

    #[test]
    fn realised_correlation_and_difference_sd_by_hand() {
        // Logits (-1, 0, 1) against (-2, 0, 2): perfectly correlated; against (1, 0, -1): -1.
        let a: Vec<f64> = [-1.0, 0.0, 1.0].iter().map(|&x| expit(x)).collect();
        let b: Vec<f64> = [-2.0, 0.0, 2.0].iter().map(|&x| expit(x)).collect();
        let c: Vec<f64> = [1.0, 0.0, -1.0].iter().map(|&x| expit(x)).collect();
        assert!((realised_logit_correlation(&a, &b).unwrap() - 1.0).abs() < 1e-12);
        assert!((realised_logit_correlation(&a, &c).unwrap() + 1.0).abs() < 1e-12);
        // Problems with a rate of 0 or 1 are left out; one problem left is no correlation.
        assert_eq!(realised_logit_correlation(&[0.0, 0.5], &[0.3, 0.5]), None);
        // Differences (0.1, 0.3): mean 0.2, sample SD sqrt(0.02).
        let sd = per_problem_difference_sd(&[0.2, 0.4], &[0.3, 0.7]);
        assert!((sd - 0.02f64.sqrt()).abs() < 1e-15, "{sd}");
        assert_eq!(per_problem_difference_sd(&[0.2], &[0.9]), 0.0);
    }

    #[test]
    fn tau_zero_and_certain_problems_have_no_spread() {
        let m = deviation_moments(0.3, 0.0);
        assert_eq!((m.mean, m.var), (0.3, 0.0));
        assert_eq!(deviation_moments(1.0, 2.0).var, 0.0);
        let rates = [0.1, 0.5, 0.8];
        assert_eq!(
            question_se_with_deviation(&rates, &vec![0.0; rates.len()]),
            question_se(&rates)
        );
        // Two problems of equal rate differ only through e: the SE is sqrt(Var_e(p) / 2).
        let v = deviation_moments(0.5, 1.0).var;
        let se = question_se_with_deviation(&[0.5, 0.5], &[1.0, 1.0]);
        assert!(
            (se - (v / 2.0).sqrt()).abs() < 1e-15 && v > 0.01,
            "{se} {v}"
        );
    }
}
