//! Planning formulas: how far apart two models' benchmark scores are, how noisy their difference
//! is under three designs, and the power of a test to see the gap.
//!
//! Model A has rates p_A = expit(mu + sigma z), model B p_B = expit(mu + gap + sigma z + tau e)
//! for the same problem z, where e ~ N(0, 1) is B's per-problem disagreement (tau = `shift_sd`,
//! 0 by default: B is A shifted by the gap). On a fixed benchmark e is fixed exactly
//! ([`disagreement_offsets`]); in the population designs every moment is integrated over (z, e)
//! ([`PopulationNodes::with_shift_sd`]). A score is mean_i c_i / n over N problems with n samples each (pass@1 averaged over n).
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
//! Also here: every plan cell's exact values from primitive inputs ([`fixed_cell`],
//! [`population_cell`]), the count-difference moments of the SD check, and the root-finding of the
//! minimum detectable gap ([`smallest_gap_with_power`]); `experiments::plan` only builds the grid
//! and pairs these with the simulation.
//!
//! Why here: the planner's closed forms, apart from the plan's spec and runner. Depends on
//! `model` and the rest of `exact` only.

use crate::exact::grader::{Grader, SampleGrading};
use crate::exact::modes::{maj_at_k_table, Extraction};
use crate::exact::noise::{diff_normal_approx, head_to_head, seed_sd};
use crate::exact::normal;
use crate::exact::quadrature::{CompositeSimpson, NormalQuadrature};
use crate::model::VoteRule;
use crate::numerics::root::{bisect, Side, Stop};
use serde::Serialize;

use crate::model::expit;

use crate::exact::normal::Z_95;

#[cfg(test)]
mod brute;
mod residual;
mod root;
use residual::ATOMS;
pub use residual::{residual_step, RESIDUAL_TAIL};
pub use root::smallest_gap_with_power;

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
/// f_A(z) = f(expit(mu + sigma z)) and f_B(z, e) = f(expit(mu + gap + sigma z + tau e)), where f
/// maps a solve rate to the problem's success probability in one rerun (p itself for pass@1,
/// maj@k(p) for a majority vote) and e ~ N(0, 1) is B's own per-problem disagreement, independent
/// of z. Every population moment is then a weighted sum over the nodes, so an expensive f is
/// evaluated once per node.
///
/// With tau = 0 ([`PopulationNodes::new`]) B has one node per z node on the 20,001 nodes of
/// [`CompositeSimpson::PLAN`]. With tau > 0 ([`PopulationNodes::with_shift_sd`]) the rule is
/// composite Simpson in z on [`TAU_Z_INTERVALS`] intervals, and at each z node B's law over e
/// is carried by three atoms that reproduce the moments 0 to 4 of f_B over e, computed by a
/// trapezoid rule in e on one logit lattice (`exact::plan::residual`, [`residual_step`]).
/// Every moment taken here is a polynomial of degree at most 4 in f_B, which the atoms
/// integrate exactly.
#[derive(Debug, Clone)]
pub struct PopulationNodes {
    /// Simpson weight times the normal density at each z node (they sum to 1 within 1e-15).
    weights: Vec<f64>,
    /// f_A at each z node.
    fa: Vec<f64>,
    /// Weights of B's atoms at each z node, atoms fastest; empty when tau = 0 (one B value per
    /// z node).
    inner: Vec<f64>,
    /// f_B at each z node (tau = 0), or B's atoms at each z node, atoms fastest (tau > 0).
    fb: Vec<f64>,
}

/// Composite Simpson intervals over |z| <= 12 of the population rule when tau > 0 (step 0.006).
/// The Gaussian-weighted integrand of a logistic in z is analytic in a strip of half-width
/// pi / sigma, where Simpson (a combination of two trapezoid rules) converges geometrically,
/// like exp(-pi^2 / (sigma h)): far below 1e-15 for sigma <= 50 at h = 0.006, so the finer
/// [`CompositeSimpson::PLAN`] grid would only multiply the cost of the (z, e) product rule.
pub const TAU_Z_INTERVALS: usize = 4_000;

/// Largest residual SD r of B given A (logits) the plan accepts (r = tau for B's own
/// disagreement; [`conditional_b`] when A deviates too). The rule in e has no node cap, but
/// its lattice grows with r (about 2 x 8.6 r / (b1 0.006) points beside A's 4,001) and it is
/// verified against brute-force integration up to r = 3 (tests).
pub const MAX_PLAN_SHIFT_SD: f64 = 3.0;

/// B's logit given A's, when A's logit on a problem is mu + sigma z + tau_a e_A and B's
/// mu + gap + sigma z + tau_b e_B (z, e_A, e_B independent standard normals). The two are
/// jointly normal: A's logit has SD S_A = sqrt(sigma^2 + tau_a^2), so A's logit is mu + S_A x
/// with x standard normal, and given x, B's logit is normal with mean mu + gap +
/// (sigma^2 / S_A^2) S_A x and variance sigma^2 + tau_b^2 - sigma^4 / S_A^2. Returns (S_A,
/// c, r): c = sigma^2 / S_A (the slope times S_A) and r = sqrt(tau_b^2 + sigma^2 tau_a^2 /
/// S_A^2) (the same variance, written without cancellation). With tau_a = 0: (sigma, sigma,
/// tau_b) exactly; with sigma = tau_a = 0: (0, 0, tau_b). Time: O(1).
pub fn conditional_b(sigma: f64, tau_a: f64, tau_b: f64) -> (f64, f64, f64) {
    if tau_a == 0.0 {
        return (sigma, sigma, tau_b);
    }
    let s_a = sigma.hypot(tau_a);
    let c = sigma * (sigma / s_a);
    let r = tau_b.hypot(sigma * tau_a / s_a);
    (s_a, c, r)
}

/// The largest tau a model A may carry in a plan (B with the same tau) for the residual SD r of
/// [`conditional_b`] to stay within [`MAX_PLAN_SHIFT_SD`]: the root u = tau^2 of u (2 sigma^2 + u) =
/// M^2 (sigma^2 + u), u = (M^2 - 2 sigma^2 + sqrt((2 sigma^2 - M^2)^2 + 4 M^2 sigma^2)) / 2.
/// M / sqrt 2 (about 2.12) for large sigma, M at sigma = 0. Time: O(1).
pub fn max_model_shift_sd(sigma: f64) -> f64 {
    let (m2, s2) = (MAX_PLAN_SHIFT_SD * MAX_PLAN_SHIFT_SD, sigma * sigma);
    let b = 2.0 * s2 - m2;
    (0.5 * (-b + (b * b + 4.0 * m2 * s2).sqrt())).sqrt()
}

impl PopulationNodes {
    /// Tabulates f for both models on the same 20,001 nodes [`population_pair_moments`] uses.
    /// Time: 40,002 evaluations of f (in parallel).
    ///
    /// # Panics
    /// If `mu`, `gap` are not finite or `sigma` is negative or not finite.
    pub fn new(mu: f64, sigma: f64, gap: f64, f: impl Fn(f64) -> f64 + Sync) -> PopulationNodes {
        PopulationNodes::with_deviations(mu, sigma, gap, (0.0, 0.0), 1, f)
    }

    /// The tables when B also carries a per-problem disagreement tau e (e ~ N(0, 1) independent
    /// of z): B's logit on a problem is A's + gap + tau e. f is the success probability of an
    /// event decided by `samples` independent samples, each correct with probability p (1 for
    /// pass@1, k for maj@k): the step of the rule in e depends on it ([`residual_step`]). With
    /// `tau` = 0 this is [`PopulationNodes::new`], bit for bit. Time: 4,001 evaluations of f for
    /// A and one per point of B's logit lattice (`exact::plan::residual`; about 8,000 at
    /// sigma = 2.2, tau = 3), in parallel.
    ///
    /// # Panics
    /// If `mu`, `gap` are not finite, `sigma` is negative or not finite, or `tau` is not in
    /// [0, [`MAX_PLAN_SHIFT_SD`]].
    pub fn with_shift_sd(
        mu: f64,
        sigma: f64,
        gap: f64,
        tau: f64,
        samples: u32,
        f: impl Fn(f64) -> f64 + Sync,
    ) -> PopulationNodes {
        PopulationNodes::with_deviations(mu, sigma, gap, (0.0, tau), samples, f)
    }

    /// The tables when both models carry their own per-problem deviation: A's logit on a
    /// problem is mu + sigma z + tau_a e_A and B's mu + gap + sigma z + tau_b e_B, with z, e_A,
    /// e_B independent standard normals. Integrated in A's own standardised logit x (A's logit
    /// is mu + S_A x) and B's residual e given A ([`conditional_b`]): B's logit is mu + gap +
    /// c x + r e, with e ~ N(0, 1) independent of x. With `tau_a` = 0 (c = sigma, r = tau_b)
    /// this is [`PopulationNodes::with_shift_sd`]`(mu, sigma, gap, tau_b, samples, f)`, bit for
    /// bit. `samples` as there. Time: as there, with r for tau.
    ///
    /// # Panics
    /// If `mu`, `gap` are not finite, `sigma` is negative or not finite, `tau_a` or `tau_b` is
    /// negative or not finite, or the residual SD r exceeds [`MAX_PLAN_SHIFT_SD`].
    pub fn with_deviations(
        mu: f64,
        sigma: f64,
        gap: f64,
        taus: (f64, f64),
        samples: u32,
        f: impl Fn(f64) -> f64 + Sync,
    ) -> PopulationNodes {
        PopulationNodes::with_deviations_given_a(mu, sigma, gap, taus, samples, None, f)
    }

    /// A's column of [`PopulationNodes::with_deviations`] (f at A's nodes, the same for every
    /// gap): computed once, it serves every gap of a root-finding through
    /// [`PopulationNodes::with_deviations_given_a`]. Time: 20,001 (4,001 with a deviation)
    /// evaluations of f.
    pub fn a_column(
        mu: f64,
        sigma: f64,
        (tau_a, tau_b): (f64, f64),
        f: impl Fn(f64) -> f64 + Sync,
    ) -> Vec<f64> {
        let rule = if tau_a == 0.0 && tau_b == 0.0 {
            CompositeSimpson::PLAN
        } else {
            CompositeSimpson::new(TAU_Z_INTERVALS)
        };
        let a1 = conditional_b(sigma, tau_a, tau_b).0;
        rule.tabulate(|z| f(expit(mu + a1 * z)))
    }

    /// [`PopulationNodes::with_deviations`], bit for bit, with A's column `fa` when already
    /// computed by [`PopulationNodes::a_column`] with the same mu, sigma, deviations and f.
    ///
    /// # Panics
    /// As [`PopulationNodes::with_deviations`], or if `fa` has the wrong length.
    pub fn with_deviations_given_a(
        mu: f64,
        sigma: f64,
        gap: f64,
        (tau_a, tau_b): (f64, f64),
        samples: u32,
        fa: Option<Vec<f64>>,
        f: impl Fn(f64) -> f64 + Sync,
    ) -> PopulationNodes {
        assert!(
            mu.is_finite() && gap.is_finite(),
            "mu and gap must be finite"
        );
        assert!(sigma.is_finite() && sigma >= 0.0, "sigma must be >= 0");
        let (_, b1, r) = conditional_b(sigma, tau_a, tau_b);
        assert!(
            (0.0..=MAX_PLAN_SHIFT_SD).contains(&r),
            "the residual SD {r} of B given A must lie in [0, {MAX_PLAN_SHIFT_SD}]"
        );
        let fa = fa.unwrap_or_else(|| PopulationNodes::a_column(mu, sigma, (tau_a, tau_b), &f));
        let b0 = mu + gap;
        if tau_a == 0.0 && tau_b == 0.0 {
            let rule = CompositeSimpson::PLAN;
            assert_eq!(fa.len(), rule.len(), "A's column has the wrong length");
            return PopulationNodes {
                weights: rule.weights(),
                fa,
                inner: Vec::new(),
                fb: rule.tabulate(|z| f(expit(b0 + sigma * z))),
            };
        }
        // B's law over e at each of A's Simpson nodes, as three atoms (module `residual`).
        let rule = CompositeSimpson::new(TAU_Z_INTERVALS);
        assert_eq!(fa.len(), rule.len(), "A's column has the wrong length");
        let (fb, inner) = residual::residual_atoms(rule, (b0, b1, r), samples, f);
        PopulationNodes {
            weights: rule.weights(),
            fa,
            inner,
            fb,
        }
    }

    /// E[g(f_A, f_B)] over the population (over z, and over e when tau > 0, where g must be a
    /// polynomial of degree at most 4 in f_B: B's atoms integrate exactly those).
    fn expect(&self, g: impl Fn(f64, f64) -> f64) -> f64 {
        if self.inner.is_empty() {
            return self
                .weights
                .iter()
                .zip(self.fa.iter().zip(&self.fb))
                .map(|(w, (&a, &b))| w * g(a, b))
                .sum();
        }
        let inner = self.inner.chunks_exact(ATOMS);
        self.weights
            .iter()
            .zip(self.fa.iter().zip(self.fb.chunks_exact(ATOMS).zip(inner)))
            .map(|(w, (&a, (bs, vs)))| {
                let s: f64 = vs.iter().zip(bs).map(|(v, &b)| v * g(a, b)).sum();
                w * s
            })
            .sum()
    }

    /// E[g_k(f_A, f_B)] for K functions at once, in one pass over the nodes. Every sum is taken
    /// in the order [`Self::expect`] takes it (within a z node over e, then over z), so each
    /// result has the bits of K separate calls.
    fn expect_all<const K: usize>(&self, g: impl Fn(f64, f64) -> [f64; K]) -> [f64; K] {
        let mut acc = [0.0f64; K];
        if self.inner.is_empty() {
            for (w, (&a, &b)) in self.weights.iter().zip(self.fa.iter().zip(&self.fb)) {
                for (s, v) in acc.iter_mut().zip(g(a, b)) {
                    *s += w * v;
                }
            }
            return acc;
        }
        let inner = self.inner.chunks_exact(ATOMS);
        for (w, (&a, (bs, vs))) in self
            .weights
            .iter()
            .zip(self.fa.iter().zip(self.fb.chunks_exact(ATOMS).zip(inner)))
        {
            let mut row = [0.0f64; K];
            for (v, &b) in vs.iter().zip(bs) {
                for (s, x) in row.iter_mut().zip(g(a, b)) {
                    *s += v * x;
                }
            }
            for (s, x) in acc.iter_mut().zip(row) {
                *s += w * x;
            }
        }
        acc
    }

    /// The population moments of f_A and f_B (central moments integrated around the means).
    /// Two passes over the nodes (the means, then the five moments about them).
    ///
    /// The values are taken about the first node's (a0, b0) before averaging, so a population
    /// whose every node has the same value (a grader with fpr = 1 grades everything correct) has
    /// variances of exactly 0, not the square of the weights' rounding.
    pub fn moments(&self) -> PairMoments {
        let (a0, b0) = (self.fa[0], self.fb[0]);
        let [da, db] = self.expect_all(|a, b| [a - a0, b - b0]);
        let (mean_a, mean_b) = (a0 + da, b0 + db);
        let [mean_pq_a, mean_pq_b, var_a, var_b, var_diff] = self.expect_all(|a, b| {
            let (x, y) = (a - a0 - da, b - b0 - db);
            [
                a * (1.0 - a),
                b * (1.0 - b),
                x * x,
                y * y,
                (y - x) * (y - x),
            ]
        });
        PairMoments {
            mean_a,
            mean_b,
            mean_pq_a,
            mean_pq_b,
            var_a,
            var_b,
            var_diff,
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
/// bisection on [-40, 40] logits, when A and B carry their own per-problem deviations with SDs
/// `tau_a` and `tau_b` (0 for a constant shift). A's logit mu + sigma z + tau_a e is
/// logit-normal(mu, sqrt(sigma^2 + tau_a^2)) on its own and B's logit-normal(mu + gap,
/// sqrt(sigma^2 + tau_b^2)), so each expectation is one integral over a single normal.
///
/// # Errors
/// When the gap cannot be reached (|points| >= the room left above or below E\[p_A\]).
pub fn gap_logits_for_points(
    mu: f64,
    sigma: f64,
    (tau_a, tau_b): (f64, f64),
    points: f64,
) -> Result<f64, String> {
    // hypot(sigma, 0) is sigma exactly, so a constant shift needs no branch.
    let sigma_a = sigma.hypot(tau_a);
    let base = normal_expectation(|z| expit(mu + sigma_a * z));
    let target = points / 100.0;
    let sigma_b = sigma.hypot(tau_b);
    let gap_at = |s: f64| normal_expectation(|z| expit(mu + s + sigma_b * z)) - base;
    let (lo, hi) = (-40.0, 40.0);
    if !(gap_at(lo) < target && target < gap_at(hi)) {
        return Err(format!(
            "a gap of {points} points is out of reach: pass@1 of A is {:.1}%, so the gap must lie between {:.1} and {:.1} points",
            100.0 * base,
            -100.0 * base,
            100.0 * (1.0 - base)
        ));
    }
    Ok(bisect(lo, hi, Stop::Halvings(100), |g| {
        if gap_at(g) < target {
            Side::A
        } else {
            Side::B
        }
    }))
}

/// The per-problem success probability of one pass@1 sample as the harness grades it, for a true
/// solve rate `p`: the sample's answer is extracted (a share `unparsed` has none and is never
/// graded correct), then graded with the grader's error rates:
/// p~ = (1 - u) (p (1 - fnr) + (1 - p) fpr) ([`SampleGrading::rate`]). Time: O(1).
pub fn graded_pass1(p: f64, unparsed: f64, grader: Option<Grader>) -> f64 {
    SampleGrading { unparsed, grader }.rate(p, 1.0 - p).0
}

/// The probability that one majority vote of k samples is graded correct, for a true solve rate
/// `p`: maj@k of the answer distribution with `attractors`, `extraction` (unparsed, split), read
/// from this thread's conditional tables of that answer law
/// ([`crate::exact::modes::maj_at_k_table`]: built once, then O(k) per rate, which is what a
/// population of tens of thousands of rates needs), and with a grader the pick graded once:
/// m (1 - fnr) + (1 - m) fpr, with m and 1 - m each from their own terms
/// ([`Grader::selected`]).
pub fn graded_vote(
    p: f64,
    attractors: &[f64],
    extraction: Extraction,
    grader: Option<Grader>,
    k: u32,
    rule: VoteRule,
) -> f64 {
    let m = maj_at_k_table(p, attractors, extraction, k, rule);
    match grader {
        Some(g) => g.selected(m).0,
        None => m.0,
    }
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

/// The exact values of one plan cell: the gap of the score, the SD of score_B - score_A over
/// reruns, its 95% half-width, the power of a two-sided 5% test, and the probabilities that B
/// loses or ties a rerun.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CellValues {
    /// E[score_B - score_A] (a fraction).
    pub gap: f64,
    /// SD of score_B - score_A over reruns (a fraction).
    pub se: f64,
    /// 1.96 se.
    pub halfwidth: f64,
    /// [`detect_power`]`(gap, se)`.
    pub power: f64,
    /// P(score_B < score_A).
    pub loss: f64,
    /// P(score_B = score_A).
    pub tie: f64,
    /// Whether loss and tie are the exact convolution (else the normal approximation).
    pub exact_loss: bool,
}

impl CellValues {
    fn new(gap: f64, se: f64, loss: f64, tie: f64, exact_loss: bool) -> CellValues {
        CellValues {
            gap,
            se,
            halfwidth: Z_95 * se,
            power: detect_power(gap, se),
            loss,
            tie,
            exact_loss,
        }
    }
}

/// Gap and SD of score_B - score_A on a fixed benchmark: per-problem success probabilities `fa`,
/// `fb` of one rerun's counts Bin(`trials`, f) (t = n for pass@1, 1 for a majority vote), the
/// two models' seeds independent. Time: O(N).
pub fn fixed_gap_se(fa: &[f64], fb: &[f64], trials: u32) -> (f64, f64) {
    let big_n = fa.len() as f64;
    let diff = (fb.iter().sum::<f64>() - fa.iter().sum::<f64>()) / big_n;
    (diff, seed_sd(fa, trials).hypot(seed_sd(fb, trials)))
}

/// Every exact value of a fixed-benchmark cell: [`fixed_gap_se`], and loss and tie by
/// convolution ([`head_to_head`]) when N t <= `exact_max` (else the normal approximation with
/// continuity correction, [`diff_normal_approx`]). Time: O(t N log(t N) log N) by convolution,
/// O(N) otherwise.
pub fn fixed_cell(fa: &[f64], fb: &[f64], trials: u32, exact_max: u64) -> CellValues {
    let (diff, se) = fixed_gap_se(fa, fb, trials);
    let exact = fa.len() as u64 * u64::from(trials) <= exact_max;
    let h = if exact {
        head_to_head(fa, fb, trials)
    } else {
        diff_normal_approx(fa, fb, trials)
    };
    CellValues::new(diff, se, h.loss, h.tie, exact)
}

/// Gap and SD of score_B - score_A over `problems` problems drawn from the population, paired
/// (both models on the same draws) or not. Time: O(1).
pub fn population_gap_se(
    m: &PairMoments,
    trials: u32,
    problems: usize,
    paired: bool,
) -> (f64, f64) {
    let se = if paired {
        m.paired_se(trials, problems)
    } else {
        m.unpaired_se(trials, problems)
    };
    (m.mean_b - m.mean_a, se)
}

/// Every exact value of a population cell ([`population_gap_se`]; loss and tie by
/// [`normal_loss_tie`] of the count difference). Time: O(1).
pub fn population_cell(m: &PairMoments, trials: u32, problems: usize, paired: bool) -> CellValues {
    let (diff, se) = population_gap_se(m, trials, problems, paired);
    let counts = f64::from(trials) * problems as f64;
    let (loss, tie) = normal_loss_tie(diff * counts, se * counts);
    CellValues::new(diff, se, loss, tie, false)
}

/// Variance and fourth central moment of a fixed-benchmark rerun's count difference
/// T_B - T_A: independent Bin(t, f_i) terms, whose cumulants add (the sign of B - A does not
/// change even cumulants): kappa2 = sum t f q, kappa4 = sum t f q (1 - 6 f q). Time: O(N).
pub fn fixed_count_moments(fa: &[f64], fb: &[f64], trials: u32) -> (f64, f64) {
    let tf = f64::from(trials);
    let (mut k2, mut k4) = (0.0, 0.0);
    for f in fa.iter().chain(fb) {
        let pq = f * (1.0 - f);
        k2 += tf * pq;
        k4 += tf * pq * (1.0 - 6.0 * pq);
    }
    (k2, k4 + 3.0 * k2 * k2)
}

/// The stride of the fixed benchmark's disagreement offsets: the integer nearest N (sqrt 5 - 1)
/// / 2 that is coprime to N (a golden-ratio lattice, so the offsets' order is far from the
/// difficulty order). Time: O(log N) per candidate.
fn golden_stride(problems: usize) -> usize {
    fn gcd(a: usize, b: usize) -> usize {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    let target = (problems as f64 * (5f64.sqrt() - 1.0) / 2.0).round() as usize;
    (0..=problems)
        .flat_map(|d| [target + d, target.saturating_sub(d)])
        .find(|&g| g >= 1 && gcd(g, problems) == 1)
        .unwrap_or(1)
}

/// The standard normal quantile Phi^-1(u) (statrs, as [`crate::model::quantile_rates`]).
fn std_quantile(u: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, Normal};
    Normal::standard().inverse_cdf(u)
}

/// The fixed benchmark's per-problem disagreement offsets e_1..e_N of model B (a deterministic,
/// exact choice: no seed): the N normal quantiles Phi^-1((j + 1/2) / N), the same values as
/// the difficulties' quantile placement, assigned to problem i (in the order of
/// [`crate::model::quantile_rates`], hardest first) as j = (i g) mod N with g the golden-ratio
/// stride. So e has mean 0 and the quantile-placed SD of a standard normal,
/// and is nearly uncorrelated with the difficulty (exactly uncorrelated only in the population
/// design, which integrates over e). Time: O(N).
pub fn disagreement_offsets(problems: usize) -> Vec<f64> {
    let g = golden_stride(problems);
    (0..problems)
        .map(|i| std_quantile(((i * g % problems) as f64 + 0.5) / problems as f64))
        .collect()
}

/// A's and B's per-problem rates on a fixed benchmark of N problems: A at quantile placement
/// of logit-normal(mu, sigma); B's logit = A's + `gap` + `tau` e_i with e from
/// [`disagreement_offsets`]. With `tau` = 0, B is A shifted by `gap` (bit for bit the rates
/// before tau existed). Time: O(N).
pub fn fixed_pair_rates(
    mu: f64,
    sigma: f64,
    gap: f64,
    tau: f64,
    problems: usize,
) -> (Vec<f64>, Vec<f64>) {
    let ra = crate::model::quantile_rates(mu, sigma, problems);
    let rb = if tau == 0.0 {
        ra.iter()
            .map(|&p| crate::model::shift_rate(p, gap))
            .collect()
    } else {
        ra.iter()
            .zip(disagreement_offsets(problems))
            .map(|(&p, e)| crate::model::shift_rate(p, gap + tau * e))
            .collect()
    };
    (ra, rb)
}

/// A's and B's per-problem rates on a fixed benchmark of N problems when A also carries its own
/// deviation: A's logit is that of the quantile-placed logit-normal(mu, sigma) plus `tau_a`
/// e_A,i, with e_A from [`crate::model::problem_deviations`]`(name_a, N)` (the offsets every
/// other experiment gives this model on a fixed benchmark); B's is the quantile-placed logit +
/// `gap` + `tau_b` e_B,i with e_B from [`disagreement_offsets`] (the plan's own offsets for B).
/// With `tau_a` = 0 it is [`fixed_pair_rates`]`(mu, sigma, gap, tau_b, N)`, bit for bit.
/// Time: O(N log N).
pub fn fixed_pair_rates_with(
    mu: f64,
    sigma: f64,
    gap: f64,
    (tau_a, tau_b): (f64, f64),
    name_a: &str,
    problems: usize,
) -> (Vec<f64>, Vec<f64>) {
    let (base, rb) = fixed_pair_rates(mu, sigma, gap, tau_b, problems);
    if tau_a == 0.0 {
        return (base, rb);
    }
    let ra = base
        .iter()
        .zip(crate::model::problem_deviations(name_a, problems))
        .map(|(&p, e)| crate::model::shift_rate(p, tau_a * e))
        .collect();
    (ra, rb)
}

/// Correlation of A's and B's per-problem logits in the population when each carries its own
/// deviation: sigma^2 / sqrt((sigma^2 + tau_a^2)(sigma^2 + tau_b^2)); with `tau_a` = 0,
/// [`population_logit_correlation`]`(sigma, tau_b)` bit for bit. NaN when either logit has no
/// variance. Time: O(1).
pub fn pair_logit_correlation(sigma: f64, (tau_a, tau_b): (f64, f64)) -> f64 {
    if tau_a == 0.0 {
        return population_logit_correlation(sigma, tau_b);
    }
    crate::exact::shift::logit_correlation(sigma, tau_a, tau_b).unwrap_or(f64::NAN)
}

/// Sample correlation of A's and B's logits over the fixed benchmark of
/// [`fixed_pair_rates_with`] (quantile-placed z, A's offsets from its name, B's from
/// [`disagreement_offsets`]); with `tau_a` = 0, [`fixed_logit_correlation`]`(sigma, tau_b, N)`
/// bit for bit. Time: O(N log N).
pub fn fixed_pair_logit_correlation(
    sigma: f64,
    (tau_a, tau_b): (f64, f64),
    name_a: &str,
    problems: usize,
) -> f64 {
    if tau_a == 0.0 {
        return fixed_logit_correlation(sigma, tau_b, problems);
    }
    let z: Vec<f64> = (1..=problems)
        .map(|i| std_quantile((i as f64 - 0.5) / problems as f64))
        .collect();
    let ea = crate::model::problem_deviations(name_a, problems);
    let eb = disagreement_offsets(problems);
    let x: Vec<f64> = z
        .iter()
        .zip(&ea)
        .map(|(z, e)| sigma * z + tau_a * e)
        .collect();
    let y: Vec<f64> = z
        .iter()
        .zip(&eb)
        .map(|(z, e)| sigma * z + tau_b * e)
        .collect();
    pearson(&x, &y)
}

/// The Pearson correlation of two equally long samples (NaN when one does not vary).
fn pearson(x: &[f64], y: &[f64]) -> f64 {
    let n = x.len() as f64;
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx) * (a - mx);
        syy += (b - my) * (b - my);
    }
    sxy / (sxx * syy).sqrt()
}

/// Correlation of A's and B's per-problem logits in the population: sigma / sqrt(sigma^2 +
/// tau^2) (1 when tau = 0). Time: O(1).
pub fn population_logit_correlation(sigma: f64, tau: f64) -> f64 {
    if tau == 0.0 {
        1.0
    } else {
        sigma / sigma.hypot(tau)
    }
}

/// Sample correlation of A's and B's logits over the fixed benchmark's N problems (quantile-
/// placed z, offsets e of [`disagreement_offsets`]); 1 when tau = 0 or sigma = 0 and tau = 0,
/// NaN when a logit does not vary. Time: O(N).
pub fn fixed_logit_correlation(sigma: f64, tau: f64, problems: usize) -> f64 {
    if tau == 0.0 {
        return 1.0;
    }
    let z: Vec<f64> = (1..=problems)
        .map(|i| std_quantile((i as f64 - 0.5) / problems as f64))
        .collect();
    let e = disagreement_offsets(problems);
    let x: Vec<f64> = z.iter().map(|z| sigma * z).collect();
    let y: Vec<f64> = x.iter().zip(&e).map(|(x, e)| x + tau * e).collect();
    let n = problems as f64;
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(&y) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx) * (a - mx);
        syy += (b - my) * (b - my);
    }
    sxy / (sxx * syy).sqrt()
}

#[cfg(test)]
mod tests {
    use super::brute::{assert_moments_close, nested, structural_moments};
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
        let s = gap_logits_for_points(0.2, 2.2, (0.0, 0.0), 3.0).expect("reachable");
        let m = population_pair_moments(0.2, 2.2, s);
        assert!((m.mean_b - m.mean_a - 0.03).abs() < 1e-10);
        assert!(gap_logits_for_points(0.2, 2.2, (0.0, 0.0), 60.0).is_err());
    }

    #[test]
    fn gauss_legendre_panels_integrate_normal_moments() {
        // E[Z^4] = 3 and E[exp(Z)] = e^(1/2), each to 1e-14.
        let four = nested(|z, e| z.powi(4) + e * e - 1.0);
        assert!((four - 3.0).abs() < 1e-14, "{four}");
        let mgf = nested(|z, _| z.exp());
        assert!((mgf - 0.5f64.exp()).abs() < 1e-14, "{mgf}");
    }

    #[test]
    fn shift_sd_population_moments_equal_nested_brute_force() {
        let (mu, sigma, gap) = (0.2, 2.2, 0.3);
        for tau in [0.5, 1.5, MAX_PLAN_SHIFT_SD] {
            let m = PopulationNodes::with_shift_sd(mu, sigma, gap, tau, 1, |p| p).moments();
            let pa = |z: f64| expit(mu + sigma * z);
            let pb = |z: f64, e: f64| expit(mu + gap + sigma * z + tau * e);
            let mean_a = nested(|z, _| pa(z));
            let mean_b = nested(pb);
            let md = mean_b - mean_a;
            let brute = [
                (m.mean_a, mean_a),
                (m.mean_b, mean_b),
                (m.mean_pq_b, nested(|z, e| pb(z, e) * (1.0 - pb(z, e)))),
                (m.var_b, nested(|z, e| (pb(z, e) - mean_b).powi(2))),
                (m.var_diff, nested(|z, e| (pb(z, e) - pa(z) - md).powi(2))),
            ];
            for (x, y) in brute {
                assert!((x - y).abs() < 1e-12, "tau {tau}: {x} vs {y}");
            }
            // B alone is logit-normal(mu + gap, sqrt(sigma^2 + tau^2)).
            let one = population_pair_moments(mu, sigma.hypot(tau), gap);
            assert!((m.mean_b - one.mean_b).abs() < 1e-12);
            assert!((m.var_b - one.var_b).abs() < 1e-12);
        }
    }

    #[test]
    fn shift_sd_maj_moments_equal_nested_brute_force() {
        use crate::exact::maj::maj_at_k_pq;
        use crate::model::VoteRule;
        let f = |p: f64| maj_at_k_pq(p, 0.5 * (1.0 - p), 9, VoteRule::Random);
        let (mu, sigma, gap, tau) = (0.2, 2.2, 0.21, 1.0);
        let nodes = PopulationNodes::with_shift_sd(mu, sigma, gap, tau, 9, f);
        let m = nodes.moments();
        let fa = |z: f64| f(expit(mu + sigma * z));
        let fb = |z: f64, e: f64| f(expit(mu + gap + sigma * z + tau * e));
        let md = nested(fb) - nested(|z, _| fa(z));
        let vd = nested(|z, e| (fb(z, e) - fa(z) - md).powi(2));
        assert!((m.mean_b - m.mean_a - md).abs() < 1e-12, "{md}");
        assert!((m.var_diff - vd).abs() < 1e-12, "{} vs {vd}", m.var_diff);
        // The paired count-difference variance is the SE formula over (z, e) too.
        let (v, _) = nodes.count_diff_moments(1, true);
        assert!((v - (m.mean_pq_a + m.mean_pq_b + m.var_diff)).abs() < 1e-12);
    }

    #[test]
    fn a_tiny_shift_sd_continues_the_tau_zero_moments() {
        // The (z, e) product rule and the 20,001-node rule agree as tau -> 0.
        let a = PopulationNodes::new(0.2, 2.2, 0.21, |p| p).moments();
        let b = PopulationNodes::with_shift_sd(0.2, 2.2, 0.21, 1e-7, 1, |p| p).moments();
        for (x, y) in [
            (a.mean_b, b.mean_b),
            (a.var_diff, b.var_diff),
            (a.var_b, b.var_b),
            (a.mean_pq_b, b.mean_pq_b),
        ] {
            assert!((x - y).abs() < 1e-12, "{x} vs {y}");
        }
    }

    #[test]
    fn fixed_shift_sd_cells_equal_enumeration() {
        // N = 2 problems, n = 2 samples: every (c_A1, c_A2, c_B1, c_B2) enumerated, B's rates
        // written out from the convention (quantile z, lattice offsets e).
        let (mu, sigma, gap, tau) = (0.2, 2.2, 0.21, 1.2);
        let (ra, rb) = fixed_pair_rates(mu, sigma, gap, tau, 2);
        let e = disagreement_offsets(2);
        let z = [std_quantile(0.25), std_quantile(0.75)];
        for i in 0..2 {
            assert!((ra[i] - expit(mu + sigma * z[i])).abs() < 1e-15);
            assert!((rb[i] - expit(mu + sigma * z[i] + gap + tau * e[i])).abs() < 1e-15);
        }
        let c = fixed_cell(&ra, &rb, 2, u64::MAX);
        let bin = |p: f64, k: usize| binomial_pmf(2, p)[k];
        let (mut loss, mut tie, mut mean, mut sq) = (0.0, 0.0, 0.0, 0.0);
        for code in 0..81usize {
            let k = [code % 3, code / 3 % 3, code / 9 % 3, code / 27];
            let pr = bin(ra[0], k[0]) * bin(ra[1], k[1]) * bin(rb[0], k[2]) * bin(rb[1], k[3]);
            let d = (k[2] + k[3]) as f64 - (k[0] + k[1]) as f64;
            mean += pr * d / 4.0;
            sq += pr * (d / 4.0).powi(2);
            if d < 0.0 {
                loss += pr;
            } else if d == 0.0 {
                tie += pr;
            }
        }
        assert!(c.exact_loss);
        assert!((c.loss - loss).abs() < 1e-14 && (c.tie - tie).abs() < 1e-14);
        assert!((c.gap - mean).abs() < 1e-14);
        assert!((c.se - (sq - mean * mean).sqrt()).abs() < 1e-13);
        let (v, _) = fixed_count_moments(&ra, &rb, 2);
        assert!((v - 16.0 * (sq - mean * mean)).abs() < 1e-12);
    }

    #[test]
    fn disagreement_offsets_are_the_quantiles_in_lattice_order() {
        for n in [1, 2, 7, 30, 100] {
            let mut e = disagreement_offsets(n);
            let sum: f64 = e.iter().sum();
            assert!(sum.abs() < 1e-9, "{n}: {sum}");
            e.sort_by(f64::total_cmp);
            for (j, x) in e.iter().enumerate() {
                assert_eq!(*x, std_quantile((j as f64 + 0.5) / n as f64));
            }
        }
        // Far from the difficulty order: the logit correlation at tau = sigma is near 1/sqrt 2.
        let r = fixed_logit_correlation(2.2, 2.2, 30);
        assert!((r - std::f64::consts::FRAC_1_SQRT_2).abs() < 0.1, "{r}");
        assert_eq!(population_logit_correlation(2.2, 0.0), 1.0);
    }

    #[test]
    fn both_models_deviations_match_the_structural_brute_force() {
        use crate::exact::maj::maj_at_k_pq;
        use crate::model::VoteRule;
        let (mu, sigma, gap) = (0.2, 2.2, 0.3);
        for taus in [(1.0, 1.0), (0.7, 1.5), (1.5, 0.0), (2.0, 2.0)] {
            let got = PopulationNodes::with_deviations(mu, sigma, gap, taus, 1, |p| p).moments();
            let want = structural_moments(mu, sigma, gap, taus, |p| p);
            assert_moments_close(&got, &want, 1e-12, &format!("pass@1 {taus:?}"));
        }
        // maj@5 and maj@9: an expensive f, tabulated once per lattice point, whose k-th powers
        // of the logistic shorten the step in e (`residual_step`).
        for k in [5, 9] {
            let f = |p: f64| maj_at_k_pq(p, 0.5 * (1.0 - p), k, VoteRule::Random);
            for taus in [(1.0, 1.0), (2.0, 2.0)] {
                let got = PopulationNodes::with_deviations(mu, sigma, gap, taus, k, f).moments();
                let want = structural_moments(mu, sigma, gap, taus, f);
                assert_moments_close(&got, &want, 1e-12, &format!("maj@{k} {taus:?}"));
            }
        }
    }

    #[test]
    fn one_pass_moments_have_the_bits_of_separate_sums() {
        for nodes in [
            PopulationNodes::new(0.2, 2.2, 0.21, |p| p),
            PopulationNodes::with_shift_sd(0.2, 2.2, 0.21, 1.0, 1, |p| p),
            PopulationNodes::with_deviations(0.2, 2.2, 0.21, (1.0, 1.0), 1, |p| p),
        ] {
            let m = nodes.moments();
            let (a0, b0) = (nodes.fa[0], nodes.fb[0]);
            let (da, db) = (nodes.expect(|a, _| a - a0), nodes.expect(|_, b| b - b0));
            assert_eq!((m.mean_a, m.mean_b), (a0 + da, b0 + db));
            assert_eq!(m.mean_pq_b, nodes.expect(|_, b| b * (1.0 - b)));
            assert_eq!(m.var_a, nodes.expect(|a, _| (a - a0 - da).powi(2)));
            let d = |a: f64, b: f64| (b - b0 - db) - (a - a0 - da);
            assert_eq!(m.var_diff, nodes.expect(|a, b| d(a, b) * d(a, b)));
            // Within rounding of the plain central moments.
            let ma = nodes.expect(|a, _| a);
            let plain = nodes.expect(|a, _| (a - ma).powi(2));
            assert!(
                (m.var_a - plain).abs() <= 1e-14 * plain,
                "{} {plain}",
                m.var_a
            );
        }
    }

    #[test]
    fn a_grader_with_fpr_1_gave_a_plan_sd_of_rounding() {
        // Every answer graded correct: every node's value is 1, so the SDs are exactly 0 (the
        // check compared a simulated 0 against an exact 1.2e-15 with an SE of 6e-18).
        for nodes in [
            PopulationNodes::new(0.2, 2.2, 0.21, |_| 1.0),
            PopulationNodes::with_deviations(0.2, 2.2, 0.21, (1.0, 1.0), 1, |_| 1.0),
        ] {
            let m = nodes.moments();
            assert_eq!((m.var_a, m.var_b, m.var_diff), (0.0, 0.0, 0.0));
            assert_eq!((m.mean_a, m.mean_b, m.mean_pq_a), (1.0, 1.0, 0.0));
        }
    }

    #[test]
    fn a_reference_without_deviation_is_the_plan_block_rule_bit_for_bit() {
        let a = PopulationNodes::with_shift_sd(0.2, 2.2, 0.21, 1.0, 1, |p| p).moments();
        let b = PopulationNodes::with_deviations(0.2, 2.2, 0.21, (0.0, 1.0), 1, |p| p).moments();
        assert_eq!(a, b);
        let a = PopulationNodes::new(0.2, 2.2, 0.21, |p| p).moments();
        let b = PopulationNodes::with_deviations(0.2, 2.2, 0.21, (0.0, 0.0), 1, |p| p).moments();
        assert_eq!(a, b);
        assert_eq!(conditional_b(2.2, 0.0, 1.0), (2.2, 2.2, 1.0));
        assert_eq!(
            fixed_pair_rates_with(0.2, 2.2, 0.21, (0.0, 1.0), "m", 30),
            fixed_pair_rates(0.2, 2.2, 0.21, 1.0, 30)
        );
        assert_eq!(
            pair_logit_correlation(2.2, (0.0, 1.0)),
            population_logit_correlation(2.2, 1.0)
        );
    }

    #[test]
    fn the_conditional_law_of_b_given_a_has_the_joint_normal_moments() {
        // Cov(a, b) = sigma^2 and Var(b) = sigma^2 + tau_b^2: slope c S_A / S_A^2 and
        // c^2 + r^2.
        for (sigma, ta, tb) in [(2.2, 1.0, 1.0), (0.5, 2.0, 0.3), (3.0, 0.4, 2.5)] {
            let (s_a, c, r) = conditional_b(sigma, ta, tb);
            assert!((s_a * s_a - (sigma * sigma + ta * ta)).abs() < 1e-13);
            assert!((c * s_a - sigma * sigma).abs() < 1e-13);
            assert!((c * c + r * r - (sigma * sigma + tb * tb)).abs() < 1e-13);
        }
        // The largest model shift_sd puts r at the quadrature's limit.
        for sigma in [0.5, 2.0, 2.2, 10.0] {
            let t = max_model_shift_sd(sigma);
            let r = conditional_b(sigma, t, t).2;
            assert!((r - MAX_PLAN_SHIFT_SD).abs() < 1e-12, "{sigma}: {t} {r}");
        }
    }

    #[test]
    fn the_fixed_reference_takes_the_offsets_of_every_other_experiment() {
        use crate::model::{problem_deviations, quantile_rates, shift_rate};
        let (mu, sigma, gap, tau) = (0.2, 2.2, 0.21, 0.8);
        let (ra, rb) = fixed_pair_rates_with(mu, sigma, gap, (tau, tau), "long", 30);
        let base = quantile_rates(mu, sigma, 30);
        let ea = problem_deviations("long", 30);
        let eb = disagreement_offsets(30);
        for i in 0..30 {
            assert_eq!(ra[i], shift_rate(base[i], tau * ea[i]));
            assert_eq!(rb[i], shift_rate(base[i], gap + tau * eb[i]));
        }
        // The realised correlation is near the population's sigma^2 / (sigma^2 + tau^2).
        let pop = pair_logit_correlation(sigma, (tau, tau));
        assert!((pop - 4.84 / (4.84 + 0.64)).abs() < 1e-15);
        let fixed = fixed_pair_logit_correlation(sigma, (tau, tau), "long", 300);
        assert!((fixed - pop).abs() < 0.05, "{fixed} vs {pop}");
    }

    #[test]
    fn points_convert_on_both_models_own_populations() {
        let (mu, sigma, taus) = (0.2, 2.2, (1.0, 1.0));
        let g = gap_logits_for_points(mu, sigma, taus, 3.0).expect("reachable");
        let m = PopulationNodes::with_deviations(mu, sigma, g, taus, 1, |p| p).moments();
        assert!(
            (m.mean_b - m.mean_a - 0.03).abs() < 1e-10,
            "{}",
            m.mean_b - m.mean_a
        );
    }

    /// maj@k of one problem by enumerating all 6^k label sequences (main form, alternate form,
    /// attractor 1, attractor 2, one-off, unparsed) and scoring each vote literally, then the
    /// pick graded once.
    fn brute_graded_vote(
        p: f64,
        a: [f64; 2],
        (u, s): (f64, f64),
        grader: Grader,
        k: u32,
        rule: VoteRule,
    ) -> f64 {
        let kept = 1.0 - u;
        let probs = [
            kept * p * (1.0 - s),
            kept * p * s,
            kept * a[0] * (1.0 - p),
            kept * a[1] * (1.0 - p),
            kept * (1.0 - a[0] - a[1]) * (1.0 - p),
            u,
        ];
        let mut m = 0.0;
        for code in 0..6u32.pow(k) {
            let (mut counts, mut singles, mut pr, mut x) = ([0u32; 4], 0u32, 1.0, code);
            for _ in 0..k {
                let label = (x % 6) as usize;
                x /= 6;
                pr *= probs[label];
                if label < 4 {
                    counts[label] += 1;
                } else {
                    singles += 1;
                }
            }
            let top = counts
                .iter()
                .copied()
                .max()
                .unwrap_or(0)
                .max(u32::from(singles > 0));
            let good = counts[..2].iter().filter(|&&c| c == top).count() as f64;
            let bad = counts[2..].iter().filter(|&&c| c == top).count() as f64
                + if top == 1 { f64::from(singles) } else { 0.0 };
            let win = match rule {
                VoteRule::Random => good / (good + bad),
                VoteRule::Strict => f64::from(u8::from(good == 1.0 && bad == 0.0)),
                VoteRule::Absolute => f64::from(u8::from(2 * counts[0] > k || 2 * counts[1] > k)),
            };
            m += pr * win;
        }
        m * (1.0 - grader.fnr) + (1.0 - m) * grader.fpr
    }

    #[test]
    fn graded_votes_equal_enumeration_of_labelled_samples() {
        let grader = Grader {
            fpr: 0.1,
            fnr: 0.05,
        };
        for rule in [VoteRule::Random, VoteRule::Strict, VoteRule::Absolute] {
            for k in 1..=4 {
                for p in [0.05, 0.4, 0.9] {
                    let want = brute_graded_vote(p, [0.4, 0.3], (0.1, 0.2), grader, k, rule);
                    let ex = Extraction {
                        unparsed: 0.1,
                        split: 0.2,
                    };
                    let got = graded_vote(p, &[0.4, 0.3], ex, Some(grader), k, rule);
                    assert!(
                        (got - want).abs() <= 1e-12 * want,
                        "{rule:?} k {k} p {p}: {got} vs {want}"
                    );
                }
            }
        }
        // Without a grader and with perfect extraction the vote is maj@k itself.
        let plain = graded_vote(
            0.4,
            &[0.5],
            Extraction::default(),
            None,
            5,
            VoteRule::Random,
        );
        let maj = crate::exact::maj::maj_at_k(0.4, 0.5, 5, VoteRule::Random);
        assert!((plain - maj).abs() <= 1e-14 * maj);
    }

    #[test]
    fn graded_pass1_population_moments_are_the_affine_map_of_the_true_ones() {
        // p~ = a + b p: means map affinely, variances scale by b^2, E[p~ q~] by
        // SampleGrading::mean_pq; each tabulated moment of the graded nodes agrees to 1e-12.
        let grader = Some(Grader {
            fpr: 0.08,
            fnr: 0.15,
        });
        let g = SampleGrading {
            unparsed: 0.07,
            grader,
        };
        let (a, b, _) = g.affine();
        for taus in [(0.0, 0.0), (0.0, 1.0), (0.8, 0.8)] {
            let t = PopulationNodes::with_deviations(0.2, 2.2, 0.3, taus, 1, |p| p).moments();
            let gr = PopulationNodes::with_deviations(0.2, 2.2, 0.3, taus, 1, |p| {
                graded_pass1(p, 0.07, grader)
            })
            .moments();
            let pq = |mean: f64, mean_pq: f64| g.mean_pq(mean, 1.0 - mean, mean_pq);
            for (x, y) in [
                (gr.mean_a, a + b * t.mean_a),
                (gr.mean_b, a + b * t.mean_b),
                (gr.var_a, b * b * t.var_a),
                (gr.var_b, b * b * t.var_b),
                (gr.var_diff, b * b * t.var_diff),
                (gr.mean_pq_a, pq(t.mean_a, t.mean_pq_a)),
                (gr.mean_pq_b, pq(t.mean_b, t.mean_pq_b)),
            ] {
                assert!((x - y).abs() <= 1e-12 * y.abs(), "{taus:?}: {x} vs {y}");
            }
        }
    }

    #[test]
    fn the_smallest_gap_is_the_root_of_the_exact_power() {
        let power = |g: f64| detect_power(g, 0.01);
        let g = smallest_gap_with_power(0.8, power).expect("reachable");
        assert!(power(g) >= 0.8);
        let below = g * (1.0 - 8.0 * f64::EPSILON);
        assert!(power(below) < 0.8, "{g}");
        // About 2.80 SEs.
        assert!((g / 0.01 - 2.8016).abs() < 1e-3, "{g}");
        assert!(smallest_gap_with_power(0.8, |_| 0.05).is_none());
    }

    #[test]
    fn power_is_five_percent_at_zero_and_rises() {
        assert!((detect_power(0.0, 1.0) - 0.05).abs() < 1e-9);
        assert!((detect_power(Z_95, 1.0) - 0.5).abs() < 1e-3);
        assert!(detect_power(4.0, 1.0) > 0.97);
    }
}
