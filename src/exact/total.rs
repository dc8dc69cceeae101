//! Total standard error of a benchmark score: seed noise and question sampling together.
//!
//! A benchmark of N problems is itself a sample from a population of problems; one run samples
//! each problem n times. Over both draws the score mean_i c_i / n has variance
//! (Var(p) + E[p (1 - p)] / n) / N. From the N rates at hand, the unbiased estimate of that is
//! the question-sampling SE squared (sample variance with ddof = 1, over N) plus the seed SD
//! squared (mean p (1 - p) / (n N)).
use crate::exact::grader::SampleGrading;
use crate::exact::noise::{question_se, seed_sd};
use crate::exact::shift::{deviation_moments, question_se_of, DeviationMoments};

/// Total SE of the benchmark score, seed and question sampling combined:
/// sqrt(question_se(rates)^2 + seed_sd(rates, n)^2).
///
/// Its square is unbiased for the variance of the score over fresh benchmarks of N problems
/// from the population the rates were drawn from and fresh seeds. Never below either part.
///
/// Time: O(N).
///
/// # Panics
///
/// If `rates` is empty, a rate lies outside [0, 1], or `n` is 0.
pub fn total_se(rates: &[f64], n: u32) -> f64 {
    question_se(rates).hypot(seed_sd(rates, n))
}

/// Total SE of the score of a model with per-problem disagreement tau_i (`shift_sd`; 0 on a
/// problem whose rate does not deviate, such as a memorised one), from its N constant-shift
/// rates q_i: sqrt(Q^2 + mean_i E_e[p_i (1 - p_i)] / (n N)), with Q the
/// question-sampling SE of [`crate::exact::shift::question_se_with_deviation`]. Each new
/// problem brings a fresh deviation e, so both parts integrate over e per problem (adaptive
/// quadrature, about 1e-13 absolute per expectation).
///
/// Its square is unbiased for the score variance over fresh benchmarks (each problem with a
/// fresh e) and fresh seeds. Every tau_i = 0 is [`total_se`] of the rates, bit for bit.
///
/// Time: O(N) expectations.
///
/// # Panics
/// As [`total_se`], if a tau_i is negative or not finite, or if the lengths differ.
pub fn total_se_with_deviation(rates: &[f64], taus: &[f64], n: u32) -> f64 {
    assert_eq!(rates.len(), taus.len(), "one deviation SD per problem");
    if taus.iter().all(|&tau| tau == 0.0) {
        return total_se(rates, n);
    }
    assert!(n > 0, "samples per problem must be at least 1");
    let moments: Vec<DeviationMoments> = rates
        .iter()
        .zip(taus)
        .map(|(&q, &tau)| deviation_moments(q, tau))
        .collect();
    let problems = rates.len() as f64;
    let seed_var =
        moments.iter().map(|m| m.mean_pq).sum::<f64>() / (f64::from(n) * problems * problems);
    (question_se_of(&moments).powi(2) + seed_var).sqrt()
}

/// (total SE, question-sampling SE) of the graded score ([`SampleGrading`]) of a model with
/// per-problem disagreement tau_i, from its constant-shift rates q_i: [`total_se_with_deviation`]
/// and [`crate::exact::shift::question_se_with_deviation`] with each problem's moments mapped
/// through the affine graded rate p~ = a + b p (mean a + b E\[p\], variance b^2 Var(p),
/// E[p~ (1 - p~)] by [`SampleGrading::mean_pq`]). Every tau_i = 0 uses the graded rates
/// themselves.
///
/// Time: O(N) expectations.
///
/// # Panics
/// As [`total_se_with_deviation`].
pub fn graded_total_se_with_deviation(
    rates: &[f64],
    taus: &[f64],
    n: u32,
    grading: &SampleGrading,
) -> (f64, f64) {
    assert_eq!(rates.len(), taus.len(), "one deviation SD per problem");
    if taus.iter().all(|&tau| tau == 0.0) {
        let graded: Vec<f64> = rates.iter().map(|&p| grading.rate(p, 1.0 - p).0).collect();
        return (total_se(&graded, n), question_se(&graded));
    }
    assert!(n > 0, "samples per problem must be at least 1");
    let (a, b, _) = grading.affine();
    let moments: Vec<DeviationMoments> = rates
        .iter()
        .zip(taus)
        .map(|(&q, &tau)| {
            let m = deviation_moments(q, tau);
            DeviationMoments {
                mean: a + b * m.mean,
                var: b * b * m.var,
                mean_pq: grading.mean_pq(m.mean, 1.0 - m.mean, m.mean_pq),
            }
        })
        .collect();
    let problems = rates.len() as f64;
    let seed_var =
        moments.iter().map(|m| m.mean_pq).sum::<f64>() / (f64::from(n) * problems * problems);
    let question = question_se_of(&moments);
    (question.hypot(seed_var.sqrt()), question)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every benchmark of N problems drawn with replacement from a finite population, and every
    /// count outcome: the variance of the score, by enumeration.
    fn brute_force_variance(population: &[f64], problems: usize, n: u32) -> f64 {
        let m = population.len();
        let draws = m.pow(problems as u32);
        let outcomes = (n as usize + 1).pow(problems as u32);
        let (mut s1, mut s2) = (0.0, 0.0);
        for d in 0..draws {
            let rates: Vec<f64> = (0..problems)
                .map(|i| population[(d / m.pow(i as u32)) % m])
                .collect();
            let pd = 1.0 / draws as f64;
            for o in 0..outcomes {
                let mut prob = pd;
                let mut score = 0.0;
                for (i, &p) in rates.iter().enumerate() {
                    let c = ((o / (n as usize + 1).pow(i as u32)) % (n as usize + 1)) as u32;
                    let binom = crate::exact::maj::binomial_pmf(n, p)[c as usize];
                    prob *= binom;
                    score += f64::from(c) / f64::from(n) / problems as f64;
                }
                s1 += prob * score;
                s2 += prob * score * score;
            }
        }
        s2 - s1 * s1
    }

    /// The mean of `f` over every equally likely benchmark of `problems` rates drawn with
    /// replacement from `population` (all m^N ordered draws).
    fn mean_over_benchmarks(population: &[f64], problems: usize, f: impl Fn(&[f64]) -> f64) -> f64 {
        let m = population.len();
        let draws = m.pow(problems as u32);
        (0..draws)
            .map(|d| {
                let rates: Vec<f64> = (0..problems)
                    .map(|i| population[(d / m.pow(i as u32)) % m])
                    .collect();
                f(&rates)
            })
            .sum::<f64>()
            / draws as f64
    }

    #[test]
    fn total_se_squared_is_unbiased_for_the_score_variance_over_benchmarks_and_seeds() {
        let population = [0.05, 0.4, 0.9];
        for (problems, n) in [(2usize, 1u32), (3, 2), (2, 4)] {
            let truth = brute_force_variance(&population, problems, n);
            // The mean of total_se^2 over every equally likely benchmark drawn.
            let mean_sq = mean_over_benchmarks(&population, problems, |r| total_se(r, n).powi(2));
            assert!(
                (mean_sq - truth).abs() <= 1e-12 * truth,
                "N = {problems}, n = {n}: E[total_se^2] = {mean_sq}, brute force {truth}"
            );
        }
    }

    /// With disagreement: benchmarks of N problems drawn with replacement from a finite set of
    /// constant-shift rates, each problem with a fresh e ~ N(0, 1). The score variance is
    /// (Var(p) + E[p (1 - p)] / n) / N over that population, with the e-integrals done by a
    /// plain trapezoid (brute force); E[total_se^2] over every equally likely draw must match.
    #[test]
    fn total_se_with_deviation_squared_is_unbiased_against_brute_force_integration() {
        use crate::exact::shift::tests::trapezoid;
        use crate::model::{expit, logit};
        let population = [0.05, 0.4, 0.9];
        for tau in [0.5, 2.0] {
            let p = |q: f64, e: f64| expit(logit(q) + tau * e);
            let k = population.len() as f64;
            let e1: f64 = population
                .iter()
                .map(|&q| trapezoid(|e| p(q, e)))
                .sum::<f64>()
                / k;
            let e2: f64 = population
                .iter()
                .map(|&q| trapezoid(|e| p(q, e) * p(q, e)))
                .sum::<f64>()
                / k;
            for (problems, n) in [(2usize, 1u32), (3, 2), (2, 4)] {
                let truth = (e2 - e1 * e1 + (e1 - e2) / f64::from(n)) / problems as f64;
                let mean_sq = mean_over_benchmarks(&population, problems, |r| {
                    total_se_with_deviation(r, &vec![tau; r.len()], n).powi(2)
                });
                assert!(
                    (mean_sq - truth).abs() <= 1e-9 * truth,
                    "tau = {tau}, N = {problems}, n = {n}: {mean_sq} against {truth}"
                );
            }
        }
    }

    #[test]
    fn tau_zero_is_total_se_bit_for_bit() {
        let rates = [0.1, 0.35, 0.9, 1.0];
        assert_eq!(
            total_se_with_deviation(&rates, &[0.0; 4], 3),
            total_se(&rates, 3)
        );
    }

    /// Graded rates with disagreement: the same brute force as the ungraded test, on the
    /// graded rate p~ = (1 - u) (p (1 - fnr) + (1 - p) fpr) of each e, integrated directly.
    #[test]
    fn graded_total_se_with_deviation_matches_brute_force_integration() {
        use crate::exact::grader::{Grader, SampleGrading};
        use crate::exact::shift::tests::trapezoid;
        use crate::model::{expit, logit};
        let grading = SampleGrading {
            unparsed: 0.15,
            grader: Some(Grader { fpr: 0.1, fnr: 0.2 }),
        };
        let rates = [0.05, 0.4, 0.9];
        let (n, tau) = (3u32, 1.5);
        let graded =
            |q: f64, e: f64| grading.rate(expit(logit(q) + tau * e), expit(-logit(q) - tau * e));
        let means: Vec<f64> = rates
            .iter()
            .map(|&q| trapezoid(|e| graded(q, e).0))
            .collect();
        let vars: Vec<f64> = rates
            .iter()
            .zip(&means)
            .map(|(&q, &m)| trapezoid(|e| (graded(q, e).0 - m).powi(2)))
            .collect();
        let pqs: Vec<f64> = rates
            .iter()
            .map(|&q| {
                trapezoid(|e| {
                    let (g, ng) = graded(q, e);
                    g * ng
                })
            })
            .collect();
        let k = rates.len() as f64;
        let between = question_se(&means).powi(2);
        let within = vars.iter().sum::<f64>() / k / k;
        let question = (between + within).sqrt();
        let total = (between + within + pqs.iter().sum::<f64>() / (f64::from(n) * k * k)).sqrt();
        let (t, qse) = graded_total_se_with_deviation(&rates, &vec![tau; rates.len()], n, &grading);
        assert!((t - total).abs() < 1e-10 * total, "{t} {total}");
        assert!(
            (qse - question).abs() < 1e-10 * question,
            "{qse} {question}"
        );
        // tau = 0: the graded rates themselves.
        let (t0, q0) = graded_total_se_with_deviation(&rates, &vec![0.0; rates.len()], n, &grading);
        let g: Vec<f64> = rates.iter().map(|&p| grading.rate(p, 1.0 - p).0).collect();
        assert!(t0 == total_se(&g, n) && q0 == question_se(&g));
    }
}
