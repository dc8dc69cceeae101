//! Planning formulas: how far apart two models' benchmark scores are, how noisy their difference
//! is under three designs, and the power of a test to see the gap.
//!
//! Model A has rates p_A = expit(mu + sigma z), model B p_B = expit(mu + gap + sigma z) for the same
//! problem z. A score is mean_i c_i / n over N problems with n samples each (pass@1 averaged over n).
//!
//! - Fixed benchmark (quantile placement, independent seeds): Var(score_B - score_A) =
//!   seed_sd(p_A)^2 + seed_sd(p_B)^2 (see [`crate::exact::noise::seed_sd`]).
//! - Population, paired (both models on the same N drawn problems): per problem the score
//!   difference has variance (E[p_A q_A] + E[p_B q_B]) / n + Var(p_B - p_A), so
//!   Var = (E[p_A q_A] + E[p_B q_B]) / (n N) + Var(p_B - p_A) / N.
//! - Population, unpaired (each model on its own N drawn problems):
//!   Var = (E[p_A q_A] + E[p_B q_B]) / (n N) + (Var p_A + Var p_B) / N.
//!
//! The population moments are integrals over z ~ N(0, 1), computed by composite Simpson
//! ([`CompositeSimpson::PLAN`]: fixed nodes, so an expensive score is tabulated once).
//!
//! Why here: the planner's closed forms, apart from the plan's spec and runner. Depends on
//! `model` and the rest of `exact` only.

use crate::exact::normal;
use crate::exact::quadrature::{CompositeSimpson, NormalQuadrature};
use serde::Serialize;

use crate::model::expit;

/// Two-sided 5% normal quantile used for CI half-widths and power.
pub const Z_95: f64 = 1.959_963_984_540_054;

/// Population moments of a pair of models on problems drawn from the logit-normal.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PairMoments {
    /// E\[p_A\].
    pub mean_a: f64,
    /// E\[p_B\].
    pub mean_b: f64,
    /// E[p_A (1 - p_A)].
    pub mean_pq_a: f64,
    /// E[p_B (1 - p_B)].
    pub mean_pq_b: f64,
    /// Var(p_A).
    pub var_a: f64,
    /// Var(p_B).
    pub var_b: f64,
    /// Var(p_B - p_A) for the same problem.
    pub var_diff: f64,
}

/// E[f(Z)] for Z ~ N(0, 1) by the planner's composite Simpson rule. Time: O(20,000)
/// evaluations.
fn normal_expectation(f: impl Fn(f64) -> f64) -> f64 {
    CompositeSimpson::PLAN.expect(f)
}

/// Population moments of A = expit(mu + sigma z) and B = expit(mu + gap + sigma z). Central
/// moments are integrated around the means (no cancellation). Time: O(1) (~10^5 expit calls).
///
/// # Panics
/// If `mu`, `gap` are not finite or `sigma` is negative or not finite.
pub fn population_pair_moments(mu: f64, sigma: f64, gap: f64) -> PairMoments {
    assert!(
        mu.is_finite() && gap.is_finite(),
        "mu and gap must be finite"
    );
    assert!(sigma.is_finite() && sigma >= 0.0, "sigma must be >= 0");
    let pa = |z: f64| expit(mu + sigma * z);
    let pb = |z: f64| expit(mu + gap + sigma * z);
    let mean_a = normal_expectation(pa);
    let mean_b = normal_expectation(pb);
    let mean_diff = mean_b - mean_a;
    PairMoments {
        mean_a,
        mean_b,
        mean_pq_a: normal_expectation(|z| pa(z) * (1.0 - pa(z))),
        mean_pq_b: normal_expectation(|z| pb(z) * (1.0 - pb(z))),
        var_a: normal_expectation(|z| (pa(z) - mean_a).powi(2)),
        var_b: normal_expectation(|z| (pb(z) - mean_b).powi(2)),
        var_diff: normal_expectation(|z| (pb(z) - pa(z) - mean_diff).powi(2)),
    }
}

impl PairMoments {
    /// SD of score_B - score_A when both models run on the same N drawn problems.
    pub fn paired_se(&self, n: u32, problems: usize) -> f64 {
        let (n, big_n) = (f64::from(n), problems as f64);
        ((self.mean_pq_a + self.mean_pq_b) / (n * big_n) + self.var_diff / big_n).sqrt()
    }

    /// SD of score_B - score_A when each model runs on its own N drawn problems.
    pub fn unpaired_se(&self, n: u32, problems: usize) -> f64 {
        let (n, big_n) = (f64::from(n), problems as f64);
        ((self.mean_pq_a + self.mean_pq_b) / (n * big_n) + (self.var_a + self.var_b) / big_n).sqrt()
    }
}

/// A per-problem score tabulated on the Simpson nodes of z ~ N(0, 1) for both models:
/// f_A(z) = f(expit(mu + sigma z)) and f_B(z) = f(expit(mu + gap + sigma z)), where f maps a
/// solve rate to the problem's success probability in one rerun (p itself for pass@1, maj@k(p)
/// for a majority vote). Every population moment is then a weighted sum over the nodes, so an
/// expensive f is evaluated once per node.
#[derive(Debug, Clone)]
pub struct PopulationNodes {
    /// Simpson weight times the normal density at each node (they sum to 1 within 1e-15).
    weights: Vec<f64>,
    /// f_A at each node.
    fa: Vec<f64>,
    /// f_B at each node.
    fb: Vec<f64>,
}

impl PopulationNodes {
    /// Tabulates f for both models on the same 20,001 nodes [`population_pair_moments`] uses.
    /// Time: 40,002 evaluations of f (in parallel).
    ///
    /// # Panics
    /// If `mu`, `gap` are not finite or `sigma` is negative or not finite.
    pub fn new(mu: f64, sigma: f64, gap: f64, f: impl Fn(f64) -> f64 + Sync) -> PopulationNodes {
        assert!(
            mu.is_finite() && gap.is_finite(),
            "mu and gap must be finite"
        );
        assert!(sigma.is_finite() && sigma >= 0.0, "sigma must be >= 0");
        let rule = CompositeSimpson::PLAN;
        let weights = rule.weights();
        let fa = rule.tabulate(|z| f(expit(mu + sigma * z)));
        let fb = rule.tabulate(|z| f(expit(mu + gap + sigma * z)));
        PopulationNodes { weights, fa, fb }
    }

    /// E[g(f_A, f_B)] over the population.
    fn expect(&self, g: impl Fn(f64, f64) -> f64) -> f64 {
        self.weights
            .iter()
            .zip(self.fa.iter().zip(&self.fb))
            .map(|(w, (&a, &b))| w * g(a, b))
            .sum()
    }

    /// The population moments of f_A and f_B (central moments integrated around the means).
    pub fn moments(&self) -> PairMoments {
        let mean_a = self.expect(|a, _| a);
        let mean_b = self.expect(|_, b| b);
        let mean_diff = mean_b - mean_a;
        PairMoments {
            mean_a,
            mean_b,
            mean_pq_a: self.expect(|a, _| a * (1.0 - a)),
            mean_pq_b: self.expect(|_, b| b * (1.0 - b)),
            var_a: self.expect(|a, _| (a - mean_a).powi(2)),
            var_b: self.expect(|_, b| (b - mean_b).powi(2)),
            var_diff: self.expect(|a, b| (b - a - mean_diff).powi(2)),
        }
    }

    /// Variance and fourth central moment of one problem's count difference d = c_B - c_A,
    /// where given the problem c ~ Bin(`trials`, f) independently for each model (`trials` = n
    /// for pass@1 over n samples, 1 for one majority vote). Paired: both counts on the same
    /// problem z; unpaired: each on its own draw.
    ///
    /// Given z, Bin(t, f) has cumulants k2 = t f q, k3 = t f q (1 - 2f), k4 = t f q (1 - 6 f q)
    /// (q = 1 - f), and the conditional central moments about the overall mean follow from
    /// c4 = k4 + 3 k2^2 and the shift delta = E\[d | z\] - E\[d\]:
    /// E[(d - E d)^4 | z] = c4 + 4 k3 delta + 6 k2 delta^2 + delta^4. Unpaired, d is a difference
    /// of independent counts: m4 = m4_A + 6 var_A var_B + m4_B. Time: O(nodes).
    pub fn count_diff_moments(&self, trials: u32, paired: bool) -> (f64, f64) {
        let t = f64::from(trials);
        let cum = |f: f64| {
            let pq = f * (1.0 - f);
            (t * pq, t * pq * (1.0 - 2.0 * f), t * pq * (1.0 - 6.0 * pq))
        };
        let mean_a = t * self.expect(|a, _| a);
        let mean_b = t * self.expect(|_, b| b);
        if paired {
            let mean = mean_b - mean_a;
            let var = self.expect(|a, b| {
                let delta = t * (b - a) - mean;
                cum(a).0 + cum(b).0 + delta * delta
            });
            let m4 = self.expect(|a, b| {
                let ((k2a, k3a, k4a), (k2b, k3b, k4b)) = (cum(a), cum(b));
                let (k2, k3, k4) = (k2a + k2b, k3b - k3a, k4a + k4b);
                let delta = t * (b - a) - mean;
                k4 + 3.0 * k2 * k2 + 4.0 * k3 * delta + 6.0 * k2 * delta * delta + delta.powi(4)
            });
            (var, m4)
        } else {
            let one = |pick: &dyn Fn(f64, f64) -> f64, mean: f64| {
                let var = self.expect(|a, b| {
                    let f = pick(a, b);
                    cum(f).0 + (t * f - mean).powi(2)
                });
                let m4 = self.expect(|a, b| {
                    let f = pick(a, b);
                    let (k2, k3, k4) = cum(f);
                    let delta = t * f - mean;
                    k4 + 3.0 * k2 * k2 + 4.0 * k3 * delta + 6.0 * k2 * delta * delta + delta.powi(4)
                });
                (var, m4)
            };
            let (va, m4a) = one(&|a, _| a, mean_a);
            let (vb, m4b) = one(&|_, b| b, mean_b);
            (va + vb, m4a + 6.0 * va * vb + m4b)
        }
    }
}

/// Variance and fourth central moment of a sum of `problems` independent copies of a variable
/// with variance `var` and fourth central moment `m4`: N var and N m4 + 3 N (N - 1) var^2.
pub fn sum_moments(var: f64, m4: f64, problems: usize) -> (f64, f64) {
    let n = problems as f64;
    (n * var, n * m4 + 3.0 * n * (n - 1.0) * var * var)
}

/// The logit shift whose population pass@1 gap E\[p_B\] - E\[p_A\] equals `points` / 100, by
/// bisection on [-40, 40] logits.
///
/// # Errors
/// When the gap cannot be reached (|points| >= the room left above or below E\[p_A\]).
pub fn gap_logits_for_points(mu: f64, sigma: f64, points: f64) -> Result<f64, String> {
    let base = normal_expectation(|z| expit(mu + sigma * z));
    let target = points / 100.0;
    let gap_at = |s: f64| normal_expectation(|z| expit(mu + s + sigma * z)) - base;
    let (mut lo, mut hi) = (-40.0, 40.0);
    if !(gap_at(lo) < target && target < gap_at(hi)) {
        return Err(format!(
            "a gap of {points} points is out of reach: pass@1 of A is {:.1}%, so the gap must lie between {:.1} and {:.1} points",
            100.0 * base,
            -100.0 * base,
            100.0 * (1.0 - base)
        ));
    }
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if gap_at(mid) < target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(0.5 * (lo + hi))
}

/// Power of a two-sided 5% z-test of a true difference `gap` with standard error `se`:
/// Phi(gap / se - 1.96) + Phi(-gap / se - 1.96). A zero SE gives 1 for a nonzero gap.
pub fn detect_power(gap: f64, se: f64) -> f64 {
    if se <= 0.0 {
        return if gap != 0.0 { 1.0 } else { 0.05 };
    }
    normal::cdf(gap / se - Z_95) + normal::cdf(-gap / se - Z_95)
}

/// Normal approximation of (P(B < A), P(B = A)) for a count difference D = C_B - C_A with mean
/// `mean` and SD `sd` (in counts), with continuity correction: loss = Phi((-1/2 - mean) / sd),
/// loss or tie = Phi((1/2 - mean) / sd).
pub fn normal_loss_tie(mean: f64, sd: f64) -> (f64, f64) {
    if sd <= 0.0 {
        return (
            f64::from(u8::from(mean < 0.0)),
            f64::from(u8::from(mean == 0.0)),
        );
    }
    let loss = normal::cdf((-0.5 - mean) / sd);
    let loss_or_tie = normal::cdf((0.5 - mean) / sd);
    (loss, (loss_or_tie - loss).max(0.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::maj::binomial_pmf;
    use crate::exact::noise::random_placement_moments;

    #[test]
    fn moments_match_the_adaptive_integrator() {
        let m = population_pair_moments(0.2, 2.2, 0.21);
        let (ea, pqa, va) = random_placement_moments(0.2, 2.2);
        let (eb, pqb, vb) = random_placement_moments(0.41, 2.2);
        for (x, y) in [
            (m.mean_a, ea),
            (m.mean_pq_a, pqa),
            (m.var_a, va),
            (m.mean_b, eb),
            (m.mean_pq_b, pqb),
            (m.var_b, vb),
        ] {
            assert!((x - y).abs() < 1e-11, "{x} vs {y}");
        }
        // Same problems: the difference varies far less than either rate.
        assert!(m.var_diff < 0.01 * m.var_a);
        // A zero gap makes the paired difference pure seed noise.
        let z = population_pair_moments(0.2, 2.2, 0.0);
        assert!(z.var_diff < 1e-20);
    }

    /// Variance and fourth central moment of one problem's count difference by enumerating the
    /// pmf of (c_A, c_B) at every node and integrating the pmf itself.
    fn brute_diff_moments(nodes: &PopulationNodes, t: u32, paired: bool) -> (f64, f64) {
        let bin = |f: f64, c: u32| binomial_pmf(t, f)[c as usize];
        let w = &nodes.weights;
        // pmf of d = c_B - c_A over -t..=t.
        let mut pmf = vec![0.0; 2 * t as usize + 1];
        if paired {
            for (j, wj) in w.iter().enumerate() {
                for ca in 0..=t {
                    for cb in 0..=t {
                        pmf[(cb + t - ca) as usize] +=
                            wj * bin(nodes.fa[j], ca) * bin(nodes.fb[j], cb);
                    }
                }
            }
        } else {
            let marginal = |f: &[f64]| -> Vec<f64> {
                (0..=t)
                    .map(|c| (0..w.len()).map(|j| w[j] * bin(f[j], c)).sum())
                    .collect()
            };
            let (pa, pb) = (marginal(&nodes.fa), marginal(&nodes.fb));
            for ca in 0..=t {
                for cb in 0..=t {
                    pmf[(cb + t - ca) as usize] += pa[ca as usize] * pb[cb as usize];
                }
            }
        }
        let d = |i: usize| i as f64 - f64::from(t);
        let mean: f64 = pmf.iter().enumerate().map(|(i, p)| p * d(i)).sum();
        let m = |k: i32| -> f64 {
            pmf.iter()
                .enumerate()
                .map(|(i, p)| p * (d(i) - mean).powi(k))
                .sum()
        };
        (m(2), m(4))
    }

    #[test]
    fn count_difference_moments_equal_the_enumerated_pmf() {
        let nodes = PopulationNodes::new(0.2, 2.2, 0.4, |p| p);
        for paired in [true, false] {
            for t in [1, 3] {
                let (v, m4) = nodes.count_diff_moments(t, paired);
                let (bv, bm4) = brute_diff_moments(&nodes, t, paired);
                assert!((v - bv).abs() < 1e-10 * bv, "{t} {paired}: {v} vs {bv}");
                assert!(
                    (m4 - bm4).abs() < 1e-10 * bm4,
                    "{t} {paired}: {m4} vs {bm4}"
                );
            }
        }
        // The variance is the per-problem SE formula: t (E[pq_A] + E[pq_B]) + t^2 Var(p_B - p_A).
        let m = nodes.moments();
        let (v, _) = nodes.count_diff_moments(4, true);
        assert!((v - (4.0 * (m.mean_pq_a + m.mean_pq_b) + 16.0 * m.var_diff)).abs() < 1e-12);
        // Tabulated moments equal the closure-integrated ones.
        let direct = population_pair_moments(0.2, 2.2, 0.4);
        assert!(
            (m.var_diff - direct.var_diff).abs() < 1e-14
                && (m.mean_b - direct.mean_b).abs() < 1e-14
        );
    }

    #[test]
    fn points_round_trip_to_logits() {
        let s = gap_logits_for_points(0.2, 2.2, 3.0).expect("reachable");
        let m = population_pair_moments(0.2, 2.2, s);
        assert!((m.mean_b - m.mean_a - 0.03).abs() < 1e-10);
        assert!(gap_logits_for_points(0.2, 2.2, 60.0).is_err());
    }

    #[test]
    fn power_is_five_percent_at_zero_and_rises() {
        assert!((detect_power(0.0, 1.0) - 0.05).abs() < 1e-9);
        assert!((detect_power(Z_95, 1.0) - 0.5).abs() < 1e-3);
        assert!(detect_power(4.0, 1.0) > 0.97);
    }
}
