//! Per-run correlation (`run_sd`, omega >= 0): exact per-problem metrics when the samples of one
//! run share a logit offset.
//!
//! In each run (one rerun of the benchmark, or one batch of k samples for a vote) problem i's
//! logit gets an extra eta ~ N(0, omega^2), shared by every sample of that run and problem and
//! redrawn between runs: given eta the samples are independent with rate
//! p(eta) = expit(logit(p) + eta). Every metric of one run is then an expectation over eta,
//! E[f(p(eta))] = E[f(expit(logit p + omega Z))], Z ~ N(0, 1), computed here by fixed
//! Gauss–Hermite quadrature where it is accurate (omega <= [`GAUSS_HERMITE_MAX_OMEGA`], degree
//! k <= [`GAUSS_HERMITE_MAX_K`]) and by globally adaptive Gauss–Kronrod
//! ([`AdaptiveKronrod::RUN_NOISE`]) elsewhere.
//!
//! Every function takes the rate p of the problem (the median of p(eta) over runs, not its mean)
//! and, for omega = 0, returns the existing closed form bit for bit (it is called, not
//! re-derived). Rates of exactly 0 or 1 stay where they are, as for a model shift.
//!
//! Each value comes with its complement, integrated from its own terms (E[(1 - p(eta))^k] for
//! 1 - pass@k, from the logit through a softplus, never 1 - p), so a complement of 1e-30 keeps its
//! relative accuracy.
//!
//! # Quadrature error
//!
//! The adaptive rule stops when its Kronrod-minus-Gauss differences, summed over all panels,
//! are within 1e-13 of a coarse estimate of the whole integral (per entry, plus 1e-300), or at
//! 4,096 panels; no panel has to meet a tolerance of its own, so tiny or noisy panels (binomial
//! pmfs carry a few ulps of rounding) no longer make it subdivide without end, as the first,
//! per-panel relative version did on the count pmf and maj@k integrands (regression test
//! `run_sd_quadrature_terminates_on_count_pmf`: at most 110 panels on every problem of
//! benchmarks of 30 and 500 problems, n up to 64, omega up to 3).
//!
//! Verified errors (relative, against composite Simpson; values below 1e-280 excepted, which
//! underflow): pass@k, pass^k and their complements within [`ERROR_BOUND`] = 1e-12 for omega up
//! to [`MAX_OMEGA`] = 3, k up to 1,024 and p from 1e-6 to 1 - 1e-6, by the rule each uses
//! (`quadrature_error_map_against_wide_brute_force`, `quadrature_matches_brute_force_integration_on_hard_cases`);
//! maj@k and its loss on the cases of `maj_quadrature_matches_brute_force_integration` (k up
//! to 64, omega up to 3); count pmf entries of `mixture_count_pmf_matches_brute_force_integration`
//! and the regression test (n up to 64). Gauss–Hermite with 192 nodes is off by up to 1e-4
//! outside its region (`gauss_hermite_was_not_accurate_enough`), and its generator fails above
//! 192 nodes, so it cannot be refined there.

use std::sync::OnceLock;

use crate::exact::quadrature::{gauss_hermite_normal, AdaptiveKronrod, NormalQuadrature};
use crate::exact::{maj, noise, pass};
use crate::model::{expit, logit, VoteRule};

/// The largest omega accepted (the scenario validator names it); the quadrature holds its
/// bound up to here (tested at omega = 3 with k up to 1,024).
pub const MAX_OMEGA: f64 = 3.0;

/// The relative error bound of the expectations of this module, for omega up to [`MAX_OMEGA`]
/// and k up to 1,024 (n up to 64 for count pmfs and maj@k, the sizes tested): 1e-12, checked
/// against brute-force Simpson (see the module documentation for the cases).
pub const ERROR_BOUND: f64 = 1e-12;

/// ln(1 + e^x) without overflow or cancellation: -ln(1 - expit(x)).
#[cfg(test)]
fn softplus(x: f64) -> f64 {
    x.max(0.0) + (-x.abs()).exp().ln_1p()
}

fn check(p: f64, omega: f64) {
    assert!((0.0..=1.0).contains(&p), "rate {p} is not a probability");
    assert!(
        omega.is_finite() && (0.0..=MAX_OMEGA).contains(&omega),
        "run_sd {omega} must be in [0, {MAX_OMEGA}]"
    );
}

/// True when p(eta) does not depend on eta: omega = 0 or p in {0, 1}.
fn degenerate(p: f64, omega: f64) -> bool {
    omega == 0.0 || p <= 0.0 || p >= 1.0
}

/// Largest omega at which the fixed 192-node Gauss–Hermite rule is used (with k <=
/// [`GAUSS_HERMITE_MAX_K`]): there it was measured within 1e-13 of brute force, the brute
/// force's own accuracy (test `explore_quadrature_errors`); above, or at larger k, it is off by
/// up to 1e-4 and the adaptive rule is used.
pub const GAUSS_HERMITE_MAX_OMEGA: f64 = 2.0;
/// Largest k (degree in p of pass@k / pass^k, 2 for the run moments) of the Gauss–Hermite rule.
pub const GAUSS_HERMITE_MAX_K: u32 = 4;
/// Nodes of that rule (the generator's largest correct count).
pub const GAUSS_HERMITE_NODES: usize = 192;

fn gauss_hermite() -> &'static [(f64, f64)] {
    static NODES: OnceLock<Vec<(f64, f64)>> = OnceLock::new();
    NODES.get_or_init(|| {
        gauss_hermite_normal(GAUSS_HERMITE_NODES)
            .into_iter()
            .filter(|&(_, w)| w > 0.0)
            .collect()
    })
}

/// E[f(x)] over x = logit(p) + omega Z: f receives the logit of p(eta) and must be >= 0; `k` is
/// its degree in p. Fixed Gauss–Hermite (192 evaluations) for omega <=
/// [`GAUSS_HERMITE_MAX_OMEGA`] and k <= [`GAUSS_HERMITE_MAX_K`], else the adaptive rule
/// (76 x 15 evaluations and a few more panels where f turns sharply). Used by the run moments.
fn expect_logit(p: f64, omega: f64, k: u32, f: impl Fn(f64) -> f64) -> f64 {
    let x0 = logit(p);
    if omega <= GAUSS_HERMITE_MAX_OMEGA && k <= GAUSS_HERMITE_MAX_K {
        gauss_hermite()
            .iter()
            .map(|&(z, w)| w * f(x0 + omega * z))
            .sum()
    } else {
        AdaptiveKronrod::RUN_NOISE.expect(|z| f(x0 + omega * z))
    }
}

/// The per-run noise layer of every per-problem metric: E[f(p(eta), 1 - p(eta))] of a pair
/// (value, complement), each entry integrated from its own terms. f is the noise-free
/// (value, complement) of the metric at a rate and its complement, both >= 0; it receives
/// p(eta) = expit(x) and 1 - p(eta) = expit(-x), each from the logit x (never 1 - p), so a
/// complement of 1e-30 keeps its relative accuracy. `degree` is the metric's degree in p (k for
/// every metric of k samples): fixed Gauss–Hermite (192 evaluations of f) for omega <=
/// [`GAUSS_HERMITE_MAX_OMEGA`] and degree <= [`GAUSS_HERMITE_MAX_K`], else the adaptive rule on
/// both entries at once (76 x 15 evaluations and a few more panels where f turns sharply).
/// Degenerate cases (omega = 0, p in {0, 1}) return f(p, 1 - p) itself, bit for bit. The pair
/// returned sums to 1 (see `complementary`).
///
/// # Panics
/// If p is not in [0, 1] or omega not in [0, [`MAX_OMEGA`]].
pub fn expect_pair(
    p: f64,
    omega: f64,
    degree: u32,
    f: impl Fn(f64, f64) -> (f64, f64),
) -> (f64, f64) {
    check(p, omega);
    if degenerate(p, omega) {
        return f(p, 1.0 - p);
    }
    let x0 = logit(p);
    let at = |z: f64| {
        let x = x0 + omega * z;
        f(expit(x), expit(-x))
    };
    let (value, complement) = if omega <= GAUSS_HERMITE_MAX_OMEGA && degree <= GAUSS_HERMITE_MAX_K {
        gauss_hermite().iter().fold((0.0, 0.0), |(v, c), &(z, w)| {
            let (a, b) = at(z);
            (v + w * a, c + w * b)
        })
    } else {
        let both = AdaptiveKronrod::RUN_NOISE.expect_many(2, |z, out| {
            let (a, b) = at(z);
            out[0] = a;
            out[1] = b;
        });
        (both[0], both[1])
    };
    complementary(value, complement)
}

/// (pass@k, 1 - pass@k) of one problem under per-run noise omega: E[1 - (1 - p(eta))^k] and
/// E[(1 - p(eta))^k], each integrated from its own terms ([`expect_pair`] of
/// [`pass::pass_at_k_pq`]). omega = 0 gives ([`pass::pass_at_k`],
/// [`pass::pass_at_k_complement`]) exactly. Time: O(quadrature nodes).
///
/// # Panics
/// If p is not in [0, 1] or omega not in [0, [`MAX_OMEGA`]].
pub fn pass_at_k_run(p: f64, omega: f64, k: u32) -> (f64, f64) {
    expect_pair(p, omega, k, |p, q| pass::pass_at_k_pq(p, q, k))
}

/// (pass^k, 1 - pass^k) of one problem under per-run noise omega: E[p(eta)^k] and
/// E[1 - p(eta)^k] ([`expect_pair`] of [`pass::pass_hat_k_pq`]). omega = 0 gives
/// ([`pass::pass_hat_k`], [`pass::pass_hat_k_complement`]) exactly. Time: O(quadrature nodes).
///
/// # Panics
/// As [`pass_at_k_run`].
pub fn pass_hat_k_run(p: f64, omega: f64, k: u32) -> (f64, f64) {
    expect_pair(p, omega, k, |p, q| pass::pass_hat_k_pq(p, q, k))
}

/// A probability and its complement, both integrated directly: the smaller is kept as
/// integrated (it carries the relative accuracy) and the larger is taken as 1 minus it, so the
/// pair sums to 1 and neither leaves [0, 1] by the quadrature's rounding (a rule whose weights
/// sum to 1 + 2e-16 would otherwise put a near-certain value at 1.0000000000000002).
fn complementary(value: f64, complement: f64) -> (f64, f64) {
    if value <= complement {
        (value, 1.0 - value)
    } else {
        (1.0 - complement, complement)
    }
}

/// (maj@k, 1 - maj@k) of one problem under per-run noise omega, the k samples of the vote
/// sharing one eta: E\[maj@k(p(eta))\] with the one-attractor vote of `crate::exact::maj`
/// (attractor share `attractor`, so alpha = a for every eta and the conditional win table is
/// built once). omega = 0 gives [`maj::maj_at_k_all_with_loss`] of the one problem exactly.
/// Time: O(k^2 + nodes k).
///
/// # Panics
/// As [`pass_at_k_run`].
pub fn maj_at_k_run(p: f64, attractor: f64, omega: f64, k: u32, rule: VoteRule) -> (f64, f64) {
    let (w, l) = maj::conditional_win_loss(k, attractor, rule);
    expect_pair(p, omega, k, |p, q| maj::win_loss_pq(k, p, q, &w, &l))
}

/// The large-k limit of maj@k under per-run noise for a vote whose limit is a step at the rate
/// t (1 above it, 0 below; [`crate::exact::outcome::OutcomeModel::threshold`]): the mean over
/// problems of P(p(eta) > t) = Phi((logit p - logit t) / omega), the chance that a run's rate
/// lies above t (rates 0 and 1 fixed). omega = 0 gives the share of problems above t
/// ([`maj::maj_ceiling`] for t = a / (1 + a)). Time: O(N).
///
/// # Panics
/// If `rates` is empty, or as [`pass_at_k_run`].
pub fn maj_ceiling_run(rates: &[f64], t: f64, omega: f64) -> f64 {
    assert!(!rates.is_empty(), "a benchmark needs at least one problem");
    let above: f64 = rates
        .iter()
        .map(|&p| {
            check(p, omega);
            if p <= 0.0 {
                0.0
            } else if omega == 0.0 || p >= 1.0 || t <= 0.0 || t >= 1.0 {
                f64::from(u8::from(p > t))
            } else {
                crate::exact::normal::cdf((logit(p) - logit(t)) / omega)
            }
        })
        .sum();
    above / rates.len() as f64
}

/// Moments of one problem's rate over runs, p(eta) = expit(logit p + eta).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunMoments {
    /// E[p(eta)]: the long-run pass@1 (not p itself unless omega = 0 or p = 1/2).
    pub mean: f64,
    /// E[p(eta) (1 - p(eta))]: the within-run Bernoulli variance.
    pub mean_pq: f64,
    /// Var_eta(p(eta)): the between-run variance of the rate, integrated as E[(p - mean)^2].
    pub var: f64,
}

/// [`RunMoments`] of one problem. omega = 0 gives (p, p (1 - p), 0). Time: O(quadrature nodes).
///
/// # Panics
/// As [`pass_at_k_run`].
pub fn run_moments(p: f64, omega: f64) -> RunMoments {
    check(p, omega);
    if degenerate(p, omega) {
        return RunMoments {
            mean: p,
            mean_pq: p * (1.0 - p),
            var: 0.0,
        };
    }
    // The smaller of E[p(eta)] and E[1 - p(eta)] is integrated, the other is 1 minus it: a
    // rate near 1 then never integrates to just above 1.
    let mean = if p <= 0.5 {
        expect_logit(p, omega, 1, crate::model::expit)
    } else {
        1.0 - expect_logit(p, omega, 1, |x| crate::model::expit(-x))
    };
    let mean_pq = expect_logit(p, omega, 2, |x| {
        crate::model::expit(x) * crate::model::expit(-x)
    });
    let var = expect_logit(p, omega, 2, |x| (crate::model::expit(x) - mean).powi(2));
    RunMoments { mean, mean_pq, var }
}

/// Variance of one problem's score c / n in one run (n samples sharing eta), over reruns:
///
/// Var(c / n) = E[Var(c / n | eta)] + Var(E[c / n | eta]) = E[p (1 - p)] / n + Var(p)
///            = E\[p\] (1 - E\[p\]) / n + Var(p) (1 - 1 / n),
///
/// the two forms being equal since E\[p (1 - p)\] = E\[p\](1 - E\[p\]) - Var(p). The first is used
/// (both terms positive). Time: O(1).
pub fn score_variance(m: &RunMoments, n: u32) -> f64 {
    m.mean_pq / f64::from(n) + m.var
}

/// Seed SD of the benchmark score mean_i c_i / n under per-run noise omega (the problems' etas
/// independent): sqrt(sum_i [E p_i (1 - p_i) / n + Var p_i]) / N. omega = 0 gives
/// [`noise::seed_sd`] exactly. As n grows it falls to [`seed_sd_floor`], not to 0: more samples
/// per run cannot remove the run's shared offset, more runs can. Time: O(N nodes).
///
/// # Panics
/// If `rates` is empty, n is 0, or as [`pass_at_k_run`].
pub fn seed_sd_run(rates: &[f64], omega: f64, n: u32) -> f64 {
    if omega == 0.0 {
        return noise::seed_sd(rates, n);
    }
    assert!(!rates.is_empty(), "a benchmark needs at least one problem");
    assert!(n >= 1, "samples per problem must be at least 1");
    let total: f64 = rates
        .iter()
        .map(|&p| score_variance(&run_moments(p, omega), n))
        .sum();
    total.sqrt() / rates.len() as f64
}

/// The limit of [`seed_sd_run`] as n grows: sqrt(sum_i Var p_i) / N. Time: O(N nodes).
///
/// # Panics
/// As [`seed_sd_run`].
pub fn seed_sd_floor(rates: &[f64], omega: f64) -> f64 {
    assert!(!rates.is_empty(), "a benchmark needs at least one problem");
    let total: f64 = rates.iter().map(|&p| run_moments(p, omega).var).sum();
    total.sqrt() / rates.len() as f64
}

/// The pmf over 0..=n of one problem's count of correct samples in one run of n samples sharing
/// eta: E[Bin(n, p(eta))(j)] (a logit-normal binomial mixture). The exact head-to-head under
/// per-run noise is the comparison of two benchmark counts, each the convolution over problems
/// of these pmfs (the problems' etas are independent), exactly as [`noise::head_to_head`]
/// convolves binomials. omega = 0 gives [`crate::exact::maj::binomial_pmf`]. Time: O(nodes n).
///
/// # Panics
/// As [`pass_at_k_run`], or n = 0.
pub fn count_pmf_run(p: f64, omega: f64, n: u32) -> Vec<f64> {
    check(p, omega);
    if degenerate(p, omega) {
        return crate::exact::maj::binomial_pmf(n, p);
    }
    mixture_count_pmf(logit(p), omega, n)
}

/// The pmf over 0..=n of E[Bin(n, expit(center + spread Z))], Z ~ N(0, 1), on the logit scale
/// directly (also the count pmf of a problem drawn from the logit-normal population
/// (mu = center, sigma = spread)). Relative error per entry within [`ERROR_BOUND`] (checked
/// against Simpson in the tests). Time: O(nodes n).
///
/// # Panics
/// If `center` is not finite, `spread` not in [0, [`MAX_OMEGA`]] or n = 0.
pub fn mixture_count_pmf(center: f64, spread: f64, n: u32) -> Vec<f64> {
    assert!(center.is_finite(), "logit {center} must be finite");
    check(0.5, spread);
    assert!(n >= 1, "samples per problem must be at least 1");
    AdaptiveKronrod::RUN_NOISE.expect_many(n as usize + 1, |z, out| {
        out.copy_from_slice(&maj::binomial_pmf(
            n,
            crate::model::expit(center + spread * z),
        ));
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Regression: a fitted scenario (rates up to 0.99, `run_sd` 0.51) crashed `run` with "rate
    /// 1.0000000000000002 is not a probability": maj@k of a near-certain problem integrated to
    /// just above 1. Every run-noise probability and its complement must stay in [0, 1].
    #[test]
    fn run_sd_probability_near_one_never_integrates_above_one() {
        let rates: Vec<f64> = (1..=60)
            .map(|i| crate::model::expit(-3.0 + 9.0 * f64::from(i) / 60.0))
            .chain((1..=12).map(|j| 1.0 - 10f64.powi(-j)))
            .collect();
        for &p in &rates {
            for omega in [0.5126, 2.0] {
                for k in [1, 8, 64] {
                    let rules = [VoteRule::Random, VoteRule::Strict, VoteRule::Absolute];
                    let mut pairs = vec![pass_at_k_run(p, omega, k), pass_hat_k_run(p, omega, k)];
                    for a in [0.0, 0.5] {
                        pairs.extend(rules.map(|r| maj_at_k_run(p, a, omega, k, r)));
                    }
                    for (v, c) in pairs {
                        assert!(
                            (0.0..=1.0).contains(&v) && (0.0..=1.0).contains(&c),
                            "p {p} omega {omega} k {k}: ({v}, {c})"
                        );
                    }
                }
                let mean = run_moments(p, omega).mean;
                assert!(
                    (0.0..=1.0).contains(&mean),
                    "p {p} omega {omega}: mean {mean}"
                );
            }
        }
    }

    /// E[f(Z)] by composite Simpson on |z| <= 14 with 2^18 panels: an independent reference.
    pub(crate) fn brute_force(f: impl Fn(f64) -> f64) -> f64 {
        let m = 1usize << 18;
        let (lo, hi) = (-14.0f64, 14.0f64);
        let h = (hi - lo) / m as f64;
        let g = |z: f64| f(z) * (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt();
        let mut s = g(lo) + g(hi);
        for j in 1..m {
            let z = lo + j as f64 * h;
            s += if j % 2 == 1 { 4.0 } else { 2.0 } * g(z);
        }
        s * h / 3.0
    }

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / b.abs().max(1e-300)
    }

    const HARD: [(f64, f64, u32); 8] = [
        (1e-6, 3.0, 1024),
        (1e-3, 3.0, 1024),
        (0.5, 3.0, 1024),
        (1.0 - 1e-6, 3.0, 1024),
        (0.999, 3.0, 1024),
        (0.02, 1.0, 64),
        (0.9, 0.3, 16),
        (1e-6, 3.0, 1),
    ];

    #[test]
    fn omega_zero_reproduces_existing_values_bit_for_bit() {
        for &p in &[0.0, 1e-9, 0.013, 0.5, 0.993, 1.0] {
            for &k in &[1u32, 2, 16, 64, 1024] {
                assert_eq!(
                    pass_at_k_run(p, 0.0, k),
                    (pass::pass_at_k(p, k), pass::pass_at_k_complement(p, k))
                );
                assert_eq!(
                    pass_hat_k_run(p, 0.0, k),
                    (pass::pass_hat_k(p, k), pass::pass_hat_k_complement(p, k))
                );
            }
            for &k in &[1u32, 2, 16, 64] {
                let m = maj_at_k_run(p, 0.5, 0.0, k, VoteRule::Random);
                assert_eq!(m.0, maj::maj_at_k_all(&[p], 0.5, k, VoteRule::Random)[0]);
                assert_eq!(
                    m,
                    maj::maj_at_k_all_with_loss(&[p], 0.5, k, VoteRule::Random)[0]
                );
            }
        }
        let rates = crate::exact::noise::tests::note_rates();
        for n in [1u32, 4, 16, 64] {
            assert_eq!(seed_sd_run(&rates, 0.0, n), noise::seed_sd(&rates, n));
        }
        assert_eq!(
            count_pmf_run(0.3, 0.0, 7),
            crate::exact::maj::binomial_pmf(7, 0.3)
        );
    }

    #[test]
    fn quadrature_matches_brute_force_integration_on_hard_cases() {
        for &(p, omega, k) in &HARD {
            let x0 = logit(p);
            let kf = f64::from(k);
            let (v, c) = pass_at_k_run(p, omega, k);
            let bv = brute_force(|z| -(-kf * softplus(x0 + omega * z)).exp_m1());
            let bc = brute_force(|z| (-kf * softplus(x0 + omega * z)).exp());
            let tol = ERROR_BOUND;
            assert!(rel(v, bv) < tol, "pass@k {p} {omega} {k}: {v} vs {bv}");
            assert!(rel(c, bc) < tol, "1-pass@k {p} {omega} {k}: {c} vs {bc}");
            let (v, c) = pass_hat_k_run(p, omega, k);
            let bv = brute_force(|z| (-kf * softplus(-x0 - omega * z)).exp());
            let bc = brute_force(|z| -(-kf * softplus(-x0 - omega * z)).exp_m1());
            assert!(rel(v, bv) < tol, "pass^k {p} {omega} {k}: {v} vs {bv}");
            assert!(rel(c, bc) < tol, "1-pass^k {p} {omega} {k}: {c} vs {bc}");
        }
    }

    #[test]
    fn maj_quadrature_matches_brute_force_integration() {
        // k <= 4 at omega <= 2: the Gauss–Hermite rule of [`expect_pair`].
        for &(p, omega, k) in &[
            (0.3, 2.0, 3u32),
            (0.9, 1.0, 4),
            (0.02, 0.5, 2),
            (0.3, 2.0, 16u32),
            (0.7, 1.0, 16),
            (0.999, 2.0, 16),
            (0.02, 3.0, 64),
            (0.5, 3.0, 64),
        ] {
            let (w, l) = maj::conditional_win_loss(k, 0.5, VoteRule::Random);
            let x0 = logit(p);
            let on = |z: f64, t: &[f64]| {
                let pmf = maj::binomial_pmf(k, crate::model::expit(x0 + omega * z));
                maj::win_given_counts(&pmf, t)
            };
            // A coarser brute force (maj@k costs O(k) per point): Simpson on 2^15 panels.
            let m = 1usize << 15;
            let h = 28.0 / m as f64;
            let simpson = |t: &[f64]| {
                let g =
                    |z: f64| on(z, t) * (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt();
                let mut s = g(-14.0) + g(14.0);
                for j in 1..m {
                    s += if j % 2 == 1 { 4.0 } else { 2.0 } * g(-14.0 + j as f64 * h);
                }
                s * h / 3.0
            };
            let (v, c) = maj_at_k_run(p, 0.5, omega, k, VoteRule::Random);
            let (bv, bc) = (simpson(&w), simpson(&l));
            assert!(rel(v, bv) < ERROR_BOUND, "maj {p} {omega} {k}: {v} vs {bv}");
            assert!(
                rel(c, bc) < ERROR_BOUND,
                "1-maj {p} {omega} {k}: {c} vs {bc}"
            );
            assert!((v + c - 1.0).abs() < 1e-13);
        }
    }

    #[test]
    fn values_and_complements_add_to_one() {
        for &(p, omega, k) in &HARD {
            let (v, c) = pass_at_k_run(p, omega, k);
            assert!((v + c - 1.0).abs() < 1e-14, "{p} {omega} {k}");
            let (v, c) = pass_hat_k_run(p, omega, k);
            assert!((v + c - 1.0).abs() < 1e-14, "{p} {omega} {k}");
        }
    }

    #[test]
    fn run_noise_flattens_pass_at_k_and_keeps_the_median() {
        // Shared eta: pass@k grows more slowly than 1 - (1 - p)^k at the same p.
        let (flat, _) = pass_at_k_run(0.2, 1.5, 64);
        assert!(flat < pass::pass_at_k(0.2, 64));
        // p = 1/2 is the symmetric point: E[p(eta)] = 1/2 for every omega.
        assert!((run_moments(0.5, 2.0).mean - 0.5).abs() < 1e-15);
    }

    #[test]
    fn score_variance_forms_agree_and_floor_is_the_limit() {
        let m = run_moments(0.2, 1.2);
        for n in [1u32, 4, 100] {
            let nf = f64::from(n);
            let other = m.mean * (1.0 - m.mean) / nf + m.var * (1.0 - 1.0 / nf);
            assert!(rel(score_variance(&m, n), other) < 1e-12);
        }
        // n = 1: one Bernoulli(E p) sample.
        assert!(rel(score_variance(&m, 1), m.mean * (1.0 - m.mean)) < 1e-12);
        let rates = crate::exact::noise::tests::note_rates();
        let floor = seed_sd_floor(&rates, 0.8);
        let big = seed_sd_run(&rates, 0.8, 1 << 30);
        assert!(rel(big, floor) < 1e-6);
        assert!(seed_sd_run(&rates, 0.8, 64) > floor);
        assert!(seed_sd_run(&rates, 0.8, 64) > noise::seed_sd(&rates, 64));
    }

    #[test]
    fn count_pmf_run_sums_to_one_and_has_the_run_moments() {
        let (p, omega, n) = (0.3, 1.3, 20u32);
        let pmf = count_pmf_run(p, omega, n);
        let total: f64 = pmf.iter().sum();
        assert!((total - 1.0).abs() < 1e-13);
        let mean: f64 = pmf.iter().enumerate().map(|(j, q)| j as f64 * q).sum();
        let var: f64 = pmf
            .iter()
            .enumerate()
            .map(|(j, q)| (j as f64 - mean).powi(2) * q)
            .sum();
        let m = run_moments(p, omega);
        let nf = f64::from(n);
        assert!(rel(mean, nf * m.mean) < 1e-12);
        assert!(rel(var / (nf * nf), score_variance(&m, n)) < 1e-11);
    }

    #[test]
    fn mixture_count_pmf_matches_brute_force_integration() {
        for &(center, spread, n) in &[
            (0.2, 2.2, 64u32),
            (-3.0, 3.0, 8),
            (1.0, 0.5, 10),
            (0.0, 3.0, 64),
        ] {
            let pmf = mixture_count_pmf(center, spread, n);
            // Simpson on 2^16 panels over |z| <= 14, all entries at once.
            let m = 1usize << 16;
            let h = 28.0 / m as f64;
            let mut reference = vec![0.0; n as usize + 1];
            for j in 0..=m {
                let z = -14.0 + j as f64 * h;
                let w = if j == 0 || j == m {
                    1.0
                } else if j % 2 == 1 {
                    4.0
                } else {
                    2.0
                } * h
                    / 3.0
                    * (-0.5 * z * z).exp()
                    / (2.0 * std::f64::consts::PI).sqrt();
                let b = maj::binomial_pmf(n, crate::model::expit(center + spread * z));
                for (r, q) in reference.iter_mut().zip(&b) {
                    *r += w * q;
                }
            }
            for (j, (a, b)) in pmf.iter().zip(&reference).enumerate() {
                assert!(
                    rel(*a, *b) < ERROR_BOUND,
                    "{center} {spread} {n} entry {j}: {a} vs {b}"
                );
            }
        }
    }

    /// Regression: the 192-node Gauss–Hermite rule these functions used first missed 1e-12 by
    /// far on the hard cases (2e-4 at omega = 3, k = 1,024); the adaptive rule meets it there.
    #[test]
    fn gauss_hermite_was_not_accurate_enough() {
        let gh = crate::exact::quadrature::GaussHermite::new(192);
        let (p, omega, k) = (0.5, 3.0, 1024u32);
        let (x0, kf) = (logit(p), f64::from(k));
        let f = |z: f64| (-kf * softplus(x0 + omega * z)).exp();
        let reference = brute_force(f);
        let old = gh.expect(f);
        assert!(rel(old, reference) > 1e-6, "{old} vs {reference}");
        assert!(rel(pass_at_k_run(p, omega, k).1, reference) < ERROR_BOUND);
    }

    /// Regression (issue 18): the first adaptive rule halved panels until each met 1e-12
    /// relative on its own, and on the count pmf and maj@k integrands (tiny tail entries,
    /// binomial rounding noise) it never stopped. The global rule must stop well below its panel
    /// cap on every problem of realistic benchmarks (N = 30 and 500 quantile problems of
    /// logit-normal(0.2, 2.2), n and k up to 64, omega up to [`MAX_OMEGA`]) and give values that
    /// pass exact identities; a sample of problems is checked against brute force.
    #[test]
    fn run_sd_quadrature_terminates_on_count_pmf() {
        use crate::exact::quadrature::AdaptiveKronrod;
        use crate::model::expit;
        let normal = statrs::distribution::Normal::standard();
        use statrs::distribution::ContinuousCDF;
        let start = std::time::Instant::now();
        let mut most = 0;
        for problems in [30usize, 500] {
            let rates: Vec<f64> = (0..problems)
                .map(|i| expit(0.2 + 2.2 * normal.inverse_cdf((i as f64 + 0.5) / problems as f64)))
                .collect();
            for omega in [0.5, 1.0, MAX_OMEGA] {
                for n in [4u32, 16, 64] {
                    for (i, &p) in rates.iter().enumerate() {
                        let x0 = logit(p);
                        let (pmf, report) = AdaptiveKronrod::RUN_NOISE.expect_many_report(
                            n as usize + 1,
                            |z, out| {
                                out.copy_from_slice(&maj::binomial_pmf(n, expit(x0 + omega * z)))
                            },
                        );
                        assert!(report.converged, "p {p} omega {omega} n {n}: {report:?}");
                        most = most.max(report.panels);
                        assert_eq!(pmf, count_pmf_run(p, omega, n));
                        let total: f64 = pmf.iter().sum();
                        assert!(
                            (total - 1.0).abs() < 1e-13,
                            "p {p} omega {omega} n {n}: {total}"
                        );
                        let mean: f64 = pmf.iter().enumerate().map(|(j, q)| j as f64 * q).sum();
                        let m = run_moments(p, omega).mean * f64::from(n);
                        assert!(rel(mean, m) < 1e-12, "p {p} omega {omega} n {n}");
                        if problems == 30 && i % 10 == 3 && n == 64 {
                            // Simpson on 2^16 panels over |z| <= 14, every entry at once.
                            let m = 1usize << 16;
                            let h = 28.0 / m as f64;
                            let mut reference = vec![0.0; n as usize + 1];
                            for step in 0..=m {
                                let z = -14.0 + step as f64 * h;
                                let w = if step == 0 || step == m {
                                    1.0
                                } else if step % 2 == 1 {
                                    4.0
                                } else {
                                    2.0
                                } * h
                                    / 3.0
                                    * (-0.5 * z * z).exp()
                                    / (2.0 * std::f64::consts::PI).sqrt();
                                let b = maj::binomial_pmf(n, expit(x0 + omega * z));
                                for (r, q) in reference.iter_mut().zip(&b) {
                                    *r += w * q;
                                }
                            }
                            for j in [0usize, 1, 32, 63, 64] {
                                let b = reference[j];
                                assert!(
                                    b < 1e-280 || rel(pmf[j], b) < ERROR_BOUND,
                                    "p {p} omega {omega} entry {j}: {} vs {b}",
                                    pmf[j]
                                );
                            }
                        }
                        // maj@k at k = n: the other integrand that did not stop.
                        if i % 7 == 0 {
                            let (v, c) = maj_at_k_run(p, 0.5, omega, n, VoteRule::Random);
                            assert!((v + c - 1.0).abs() < 1e-13 && v > 0.0 && c > 0.0);
                        }
                    }
                }
            }
        }
        assert!(
            most < AdaptiveKronrod::RUN_NOISE.max_panels / 4,
            "{most} panels"
        );
        println!(
            "count pmf, N = 30 and 500: at most {most} panels, {:?}",
            start.elapsed()
        );
    }

    /// E[f(Z)] by composite Simpson on 2^19 panels over |z| <= 38 (where the normal density
    /// ends), for integrands whose mass sits far out (pass^k of a small p at large k peaks near
    /// z = 12 at omega = 1.5, beyond the range of [`brute_force`]).
    fn brute_force_wide(f: impl Fn(f64) -> f64) -> f64 {
        let m = 1usize << 19;
        let (lo, hi) = (-38.0f64, 38.0f64);
        let h = (hi - lo) / m as f64;
        let g = |z: f64| f(z) * (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt();
        let mut s = g(lo) + g(hi);
        for j in 1..m {
            s += if j % 2 == 1 { 4.0 } else { 2.0 } * g(lo + j as f64 * h);
        }
        s * h / 3.0
    }

    /// The error map behind the choice of rule (docs/model-extensions-correlation.md): pass@k,
    /// pass^k and their complements by the 192-node Gauss–Hermite rule and by the adaptive rule
    /// against [`brute_force_wide`], p from 1e-6 to 1 - 1e-6. The adaptive rule is within
    /// [`ERROR_BOUND`] everywhere (values below 1e-280 excepted: they underflow), Gauss–Hermite
    /// within it where [`expect_logit`] uses it and far outside it at omega = 3, k = 64. Printed
    /// with `--nocapture`.
    #[test]
    fn quadrature_error_map_against_wide_brute_force() {
        let gh = crate::exact::quadrature::GaussHermite::new(GAUSS_HERMITE_NODES);
        let mut gh_outside = 0.0f64;
        for omega in [0.5, GAUSS_HERMITE_MAX_OMEGA, MAX_OMEGA] {
            for k in [1u32, GAUSS_HERMITE_MAX_K, 64, 1024] {
                let (mut worst_gh, mut worst_ad) = (0.0f64, 0.0f64);
                for p in [1e-6, 0.02, 0.5, 0.999, 1.0 - 1e-6] {
                    let (x0, kf) = (logit(p), f64::from(k));
                    let fs: [&dyn Fn(f64) -> f64; 4] = [
                        &|z: f64| (-kf * softplus(x0 + omega * z)).exp(),
                        &|z: f64| -(-kf * softplus(x0 + omega * z)).exp_m1(),
                        &|z: f64| (-kf * softplus(-x0 - omega * z)).exp(),
                        &|z: f64| -(-kf * softplus(-x0 - omega * z)).exp_m1(),
                    ];
                    for f in fs {
                        let b = brute_force_wide(f);
                        if b < 1e-280 {
                            continue;
                        }
                        worst_gh = worst_gh.max(rel(gh.expect(f), b));
                        worst_ad = worst_ad.max(rel(AdaptiveKronrod::RUN_NOISE.expect(f), b));
                    }
                }
                println!(
                    "omega {omega} k {k}: Gauss-Hermite {worst_gh:.1e}, adaptive {worst_ad:.1e}"
                );
                assert!(
                    worst_ad < ERROR_BOUND,
                    "adaptive, omega {omega} k {k}: {worst_ad}"
                );
                if omega <= GAUSS_HERMITE_MAX_OMEGA && k <= GAUSS_HERMITE_MAX_K {
                    assert!(
                        worst_gh < ERROR_BOUND,
                        "Gauss-Hermite, omega {omega} k {k}: {worst_gh}"
                    );
                } else {
                    gh_outside = gh_outside.max(worst_gh);
                }
            }
        }
        assert!(gh_outside > 1e-6, "{gh_outside}");
    }
}
