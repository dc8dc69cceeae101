//! Expectations over a standard normal Z: the one place evalsim integrates against the normal
//! density φ. Every population quantity of the logit-normal (E[f(expit(mu + sigma Z))]) and the
//! likelihood of a logit-normal fit goes through one of the three rules here.
//!
//! Depends on nothing of evalsim (rayon tabulates nodes in parallel): pure functions, no I/O,
//! no randomness.
//!
//! # The rules and why each call site uses its own
//!
//! | rule | nodes | error | used by |
//! |------|-------|-------|---------|
//! | [`CompositeSimpson`] | 20,001 fixed over \|z\| <= 12 | O(h^4) with h = 0.0012: below 1e-12 absolute for expit(mu + sigma z) with sigma up to ~100; the cut tails weigh 2 Φ(-12) ~ 4e-33 | [`crate::exact::plan`] |
//! | [`AdaptiveSimpson`] | adaptive, half-unit panels + a break | 1e-13 absolute target over \|z\| <= 12 (Richardson-corrected panels, depth cap 30) | [`crate::exact::noise::random_placement_moments`] |
//! | [`GaussHermite`] | m (48 by default) | exact for polynomials of degree 2m - 1; smooth integrands converge geometrically, steep ones (large sigma) need more nodes | `analyze::fit`; with 192 nodes, [`crate::exact::run_corr`] at omega <= 2, k <= 4 |
//! | [`AdaptiveKronrod`] | 7/15-point panels, globally adaptive over \|z\| <= 38 | summed Kronrod-minus-Gauss differences within 1e-13 of the whole (absolute), at most 4,096 panels | [`crate::exact::run_corr`] elsewhere, contamination count pmfs, [`crate::exact::judge`] (at 1e-14) |
//!
//! - The planner tabulates an expensive per-problem score (maj@k of a rate costs O(k^2)) once per
//!   node and takes many moments as weighted sums over the same nodes
//!   ([`crate::exact::plan::PopulationNodes`]), so it needs one fixed node set with explicit
//!   weights: composite Simpson, fine enough that no feature of expit is stepped over.
//! - Random placement's three moments are single expectations of a cheap integrand that can
//!   turn steeply at z = -mu / sigma; the adaptive rule spends evaluations only there.
//! - The fit evaluates a log-likelihood thousands of times inside Nelder–Mead and needs the
//!   weights in log space (log-sum-exp over nodes): a few dozen Gauss–Hermite nodes do it.
//!
//! Each rule keeps its own arithmetic order (how the density and weights are multiplied), so
//! every existing output is bit-identical to the code that preceded this module.

use rayon::prelude::*;

/// Integration range for z ~ N(0, 1) of the Simpson rules: the mass beyond |z| = 12 is ~4e-33.
pub const Z_RANGE: f64 = 12.0;

/// A rule for E[f(Z)], Z ~ N(0, 1).
pub trait NormalQuadrature {
    /// E[f(Z)] for Z ~ N(0, 1) by this rule.
    fn expect(&self, f: impl Fn(f64) -> f64) -> f64;
}

/// Composite Simpson on a fixed grid of `intervals` (even) steps over |z| <= [`Z_RANGE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompositeSimpson {
    intervals: usize,
}

impl CompositeSimpson {
    /// The planner's rule: 20,000 intervals, step 0.0012.
    pub const PLAN: CompositeSimpson = CompositeSimpson { intervals: 20_000 };

    /// A rule with `intervals` steps.
    ///
    /// # Panics
    /// If `intervals` is odd or zero.
    pub fn new(intervals: usize) -> CompositeSimpson {
        assert!(
            intervals > 0 && intervals.is_multiple_of(2),
            "Simpson needs an even number of intervals"
        );
        CompositeSimpson { intervals }
    }

    /// Number of nodes (intervals + 1).
    pub fn len(&self) -> usize {
        self.intervals + 1
    }

    /// Always false: a rule has at least three nodes.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The step between nodes, 24 / intervals.
    pub fn step(&self) -> f64 {
        2.0 * Z_RANGE / self.intervals as f64
    }

    /// The j-th node, -12 + j h.
    pub fn node(&self, j: usize) -> f64 {
        -Z_RANGE + j as f64 * self.step()
    }

    /// Every node's Simpson weight times the normal density there (they sum to 1 within 1e-15),
    /// for expectations taken as weighted sums over values tabulated at [`Self::node`].
    /// Time: O(nodes).
    pub fn weights(&self) -> Vec<f64> {
        let h = self.step();
        let norm = 1.0 / (2.0 * std::f64::consts::PI).sqrt();
        (0..=self.intervals)
            .map(|j| {
                let w = if j == 0 || j == self.intervals {
                    1.0
                } else if j % 2 == 1 {
                    4.0
                } else {
                    2.0
                };
                let z = self.node(j);
                w * h / 3.0 * (-0.5 * z * z).exp() * norm
            })
            .collect()
    }

    /// f at every node, evaluated in parallel. Time: O(nodes) evaluations of f.
    pub fn tabulate(&self, f: impl Fn(f64) -> f64 + Sync) -> Vec<f64> {
        (0..=self.intervals)
            .into_par_iter()
            .map(|j| f(self.node(j)))
            .collect()
    }
}

impl NormalQuadrature for CompositeSimpson {
    /// Time: O(intervals) evaluations of f.
    fn expect(&self, f: impl Fn(f64) -> f64) -> f64 {
        let h = self.step();
        let norm = 1.0 / (2.0 * std::f64::consts::PI).sqrt();
        let g = |z: f64| f(z) * (-0.5 * z * z).exp() * norm;
        let mut acc = g(-Z_RANGE) + g(Z_RANGE);
        for j in 1..self.intervals {
            let w = if j % 2 == 1 { 4.0 } else { 2.0 };
            acc += w * g(-Z_RANGE + j as f64 * h);
        }
        acc * h / 3.0
    }
}

/// Adaptive Simpson over |z| <= [`Z_RANGE`] on half-unit starting panels, with an optional extra
/// panel break where the integrand turns (so a steep logistic is not stepped over).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdaptiveSimpson {
    /// An extra panel edge (ignored outside the range).
    pub break_at: Option<f64>,
}

/// Width of the starting panels of the adaptive rule.
const PANEL_WIDTH: f64 = 0.5;
/// Absolute error target for one expectation.
const EXPECTATION_TOLERANCE: f64 = 1e-13;
/// Recursion cap of adaptive Simpson (2^-30 of a panel is far below any feature of expit).
const MAX_SIMPSON_DEPTH: u32 = 30;

impl AdaptiveSimpson {
    /// The rule with an extra panel break at `turn`.
    pub fn with_break(turn: f64) -> AdaptiveSimpson {
        AdaptiveSimpson {
            break_at: Some(turn),
        }
    }
}

impl NormalQuadrature for AdaptiveSimpson {
    /// Time: a few hundred evaluations of f per unit of z where f is smooth, more where it turns.
    fn expect(&self, f: impl Fn(f64) -> f64) -> f64 {
        let density = |z: f64| (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt();
        let integrand = |z: f64| f(z) * density(z);
        let panels = (2.0 * Z_RANGE / PANEL_WIDTH).round() as usize;
        let mut edges: Vec<f64> = (0..=panels)
            .map(|j| -Z_RANGE + j as f64 * PANEL_WIDTH)
            .collect();
        if let Some(turn) = self.break_at.filter(|t| t.abs() < Z_RANGE) {
            edges.push(turn);
            edges.sort_by(f64::total_cmp);
        }
        let tolerance = EXPECTATION_TOLERANCE / edges.len() as f64;
        edges
            .windows(2)
            .filter(|edge| edge[1] > edge[0])
            .map(|edge| adaptive_simpson(&integrand, edge[0], edge[1], tolerance))
            .sum()
    }
}

/// One Simpson panel: its ends, the integrand at ends and midpoint, and the Simpson estimate.
struct SimpsonPanel {
    lo: f64,
    hi: f64,
    f_lo: f64,
    f_mid: f64,
    f_hi: f64,
    estimate: f64,
}

impl SimpsonPanel {
    fn new(f: &impl Fn(f64) -> f64, lo: f64, hi: f64, f_lo: f64, f_hi: f64) -> Self {
        let f_mid = f(0.5 * (lo + hi));
        let estimate = (hi - lo) / 6.0 * (f_lo + 4.0 * f_mid + f_hi);
        Self {
            lo,
            hi,
            f_lo,
            f_mid,
            f_hi,
            estimate,
        }
    }
}

fn adaptive_simpson(f: &impl Fn(f64) -> f64, lo: f64, hi: f64, tolerance: f64) -> f64 {
    let whole = SimpsonPanel::new(f, lo, hi, f(lo), f(hi));
    refine_simpson(f, &whole, tolerance, MAX_SIMPSON_DEPTH)
}

/// Splits a panel in two until the halves agree with the whole (Richardson-corrected result).
fn refine_simpson(
    f: &impl Fn(f64) -> f64,
    panel: &SimpsonPanel,
    tolerance: f64,
    depth: u32,
) -> f64 {
    let mid = 0.5 * (panel.lo + panel.hi);
    let left = SimpsonPanel::new(f, panel.lo, mid, panel.f_lo, panel.f_mid);
    let right = SimpsonPanel::new(f, mid, panel.hi, panel.f_mid, panel.f_hi);
    let change = left.estimate + right.estimate - panel.estimate;
    if depth == 0 || change.abs() <= 15.0 * tolerance {
        return left.estimate + right.estimate + change / 15.0;
    }
    refine_simpson(f, &left, 0.5 * tolerance, depth - 1)
        + refine_simpson(f, &right, 0.5 * tolerance, depth - 1)
}

/// Gauss–Hermite rule for the standard normal: E[f(Z)] ≈ Σ w_j f(z_j).
#[derive(Debug, Clone, PartialEq)]
pub struct GaussHermite {
    nodes: Vec<(f64, f64)>,
}

impl GaussHermite {
    /// The rule with `m` nodes. Time: O(m^2).
    pub fn new(m: usize) -> GaussHermite {
        GaussHermite {
            nodes: gauss_hermite_normal(m),
        }
    }

    /// The (node, weight) pairs.
    pub fn nodes(&self) -> &[(f64, f64)] {
        &self.nodes
    }
}

impl NormalQuadrature for GaussHermite {
    /// Time: O(m) evaluations of f.
    fn expect(&self, f: impl Fn(f64) -> f64) -> f64 {
        self.nodes.iter().map(|&(z, w)| w * f(z)).sum()
    }
}

/// Most nodes [`gauss_hermite_normal`] gives correctly: above about 196 the unscaled Hermite
/// recurrence leaves f64 range at the outer nodes and every weight collapses (measured: at 200
/// nodes the weights sum to 1e-160). Checked for every m up to this bound by a unit test.
pub const MAX_GAUSS_HERMITE_NODES: usize = 192;

/// Gauss–Hermite nodes and weights for ∫ f(z) φ(z) dz ≈ Σ w_j f(z_j) (standard normal φ).
/// Newton iteration on the orthonormal Hermite recurrence (Numerical Recipes `gauher`).
/// Cost: O(m^2).
///
/// # Panics
/// If `m` exceeds [`MAX_GAUSS_HERMITE_NODES`] (callers validate user-chosen counts against it;
/// a wrong rule must never be returned silently).
pub fn gauss_hermite_normal(m: usize) -> Vec<(f64, f64)> {
    assert!(
        m <= MAX_GAUSS_HERMITE_NODES,
        "gauss_hermite_normal: {m} nodes is above the {MAX_GAUSS_HERMITE_NODES} it computes correctly"
    );
    let pim4 = std::f64::consts::PI.powf(-0.25);
    let mut x = vec![0.0; m];
    let mut w = vec![0.0; m];
    let half = m.div_ceil(2);
    let mut z = 0.0f64;
    for i in 0..half {
        z = match i {
            0 => (2.0 * m as f64 + 1.0).sqrt() - 1.85575 * (2.0 * m as f64 + 1.0).powf(-1.0 / 6.0),
            1 => z - 1.14 * (m as f64).powf(0.426) / z,
            2 => 1.86 * z - 0.86 * x[0],
            3 => 1.91 * z - 0.91 * x[1],
            _ => 2.0 * z - x[i - 2],
        };
        let mut pp = 0.0;
        for _ in 0..100 {
            let (mut p1, mut p2) = (pim4, 0.0);
            for j in 0..m {
                let p3 = p2;
                p2 = p1;
                p1 = z * (2.0 / (j + 1) as f64).sqrt() * p2
                    - (j as f64 / (j + 1) as f64).sqrt() * p3;
            }
            pp = (2.0 * m as f64).sqrt() * p2;
            let z1 = z;
            z = z1 - p1 / pp;
            if (z - z1).abs() <= 1e-14 {
                break;
            }
        }
        x[i] = z;
        x[m - 1 - i] = -z;
        w[i] = 2.0 / (pp * pp);
        w[m - 1 - i] = w[i];
    }
    let s = std::f64::consts::PI.sqrt();
    x.iter()
        .zip(&w)
        .map(|(&xi, &wi)| (xi * std::f64::consts::SQRT_2, wi / s))
        .collect()
}

/// Half-width of the range of [`AdaptiveKronrod`]: the normal density underflows to 0 a little
/// beyond |z| = 38.5, so nothing representable lies outside.
pub const KRONROD_RANGE: f64 = 38.0;
/// Absolute floor of [`AdaptiveKronrod`]'s tolerance: an expectation that underflows (p^64 of a
/// tiny rate, a binomial entry far from its mode) carries only a few bits, and no relative
/// tolerance can be met on it; below about 1e-287 the rule's accuracy is absolute.
pub const KRONROD_FLOOR: f64 = 1e-300;

/// Kronrod nodes on [-1, 1] (the non-negative half, 0 last) of the 15-point rule.
const KRONROD_NODES: [f64; 8] = [
    0.991_455_371_120_812_6,
    0.949_107_912_342_758_5,
    0.864_864_423_359_769_1,
    0.741_531_185_599_394_4,
    0.586_087_235_467_691_1,
    0.405_845_151_377_397_2,
    0.207_784_955_007_898_5,
    0.0,
];
/// Weights of the 15-point Kronrod rule, matching [`KRONROD_NODES`].
const KRONROD_WEIGHTS: [f64; 8] = [
    0.022_935_322_010_529_225,
    0.063_092_092_629_978_55,
    0.104_790_010_322_250_18,
    0.140_653_259_715_525_92,
    0.169_004_726_639_267_9,
    0.190_350_578_064_785_4,
    0.204_432_940_075_298_9,
    0.209_482_141_084_727_83,
];
/// Weights of the embedded 7-point Gauss rule, on the odd Kronrod nodes (1, 3, 5, 7).
const GAUSS_WEIGHTS: [f64; 4] = [
    0.129_484_966_168_869_7,
    0.279_705_391_489_276_7,
    0.381_830_050_505_118_9,
    0.417_959_183_673_469_4,
];

/// Globally adaptive Gauss–Kronrod (7/15-point) for E[f(Z)] of a **non-negative**, possibly
/// vector-valued f.
///
/// It starts from unit panels over |z| <= [`KRONROD_RANGE`]; their Kronrod sums are a coarse
/// estimate W_j of each entry's whole integral, and the tolerance of entry j is the ABSOLUTE
/// `relative` x W_j + [`KRONROD_FLOOR`], fixed from then on. The panel whose Kronrod-minus-Gauss
/// difference is the largest share of its entries' tolerances is halved, again and again, until
/// the differences summed over all panels are within the tolerance for every entry, or the rule
/// holds `max_panels` panels. No panel ever has to meet a tolerance of its own: a panel whose
/// value is tiny or carries the rounding noise of a binomial pmf (entries accurate to a few
/// ulps) is left alone once it is negligible against the whole, which is what makes the rule
/// stop (a per-panel relative test chased that noise without end). Every value is reproducible:
/// the panels are split in a fixed order and summed from left to right.
///
/// The summed difference overstates the Kronrod error by orders of magnitude on smooth panels;
/// the errors actually achieved are measured against brute-force integration in the tests of
/// [`crate::exact::run_corr`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdaptiveKronrod {
    /// Target of the summed Kronrod-minus-Gauss differences, relative to the coarse estimate of
    /// each entry's whole integral.
    pub relative: f64,
    /// Hard cap on the number of panels (each 15 evaluations of f).
    pub max_panels: usize,
}

/// What [`AdaptiveKronrod::expect_many_report`] did: its work and whether it met the tolerance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KronrodReport {
    /// Panels at the end.
    pub panels: usize,
    /// The summed differences met the tolerance of every entry (false: stopped at the cap).
    pub converged: bool,
}

/// One panel of [`AdaptiveKronrod`]: its interval, Kronrod estimates, differences and priority.
struct Panel {
    lo: f64,
    hi: f64,
    kronrod: Vec<f64>,
    diff: Vec<f64>,
    /// max_j diff_j / tol_j: the panel halved next is the one with the largest.
    worst: f64,
}

impl AdaptiveKronrod {
    /// The rule of the per-run noise expectations ([`crate::exact::run_corr`]): summed
    /// differences within 1e-13 of the whole, at most 4,096 panels (61,440 evaluations).
    pub const RUN_NOISE: AdaptiveKronrod = AdaptiveKronrod {
        relative: 1e-13,
        max_panels: 4096,
    };

    /// E[f(Z)] for a vector-valued f of `dim` entries, each >= 0: f(z, out) writes f(z) into
    /// `out`. Time: 15 evaluations of f per panel; 76 panels, and a few more per sharp feature.
    pub fn expect_many(&self, dim: usize, f: impl Fn(f64, &mut [f64])) -> Vec<f64> {
        self.expect_many_report(dim, f).0
    }

    /// [`AdaptiveKronrod::expect_many`] with how much work it took and whether it converged.
    pub fn expect_many_report(
        &self,
        dim: usize,
        f: impl Fn(f64, &mut [f64]),
    ) -> (Vec<f64>, KronrodReport) {
        let mut value = vec![0.0; dim];
        let start = (2.0 * KRONROD_RANGE) as usize;
        let mut panels: Vec<Panel> = (0..start)
            .map(|j| {
                let lo = -KRONROD_RANGE + j as f64;
                let (kronrod, diff) = kronrod_panel(&f, lo, lo + 1.0, &mut value);
                Panel {
                    lo,
                    hi: lo + 1.0,
                    kronrod,
                    diff,
                    worst: 0.0,
                }
            })
            .collect();
        let mut whole = vec![0.0; dim];
        let mut error = vec![0.0; dim];
        for p in &panels {
            add(&mut whole, &p.kronrod);
            add(&mut error, &p.diff);
        }
        let tol: Vec<f64> = whole
            .iter()
            .map(|w| self.relative * w.abs() + KRONROD_FLOOR)
            .collect();
        let worst = |diff: &[f64]| {
            diff.iter()
                .zip(&tol)
                .map(|(d, t)| d / t)
                .fold(0.0f64, f64::max)
        };
        for p in &mut panels {
            p.worst = worst(&p.diff);
        }
        let done = |error: &[f64]| error.iter().zip(&tol).all(|(e, t)| e <= t);
        while !done(&error) && panels.len() < self.max_panels {
            // The worst panel (first of equals: deterministic).
            let (i, _) =
                panels
                    .iter()
                    .enumerate()
                    .fold((0, f64::NEG_INFINITY), |(bi, bw), (i, p)| {
                        if p.worst > bw {
                            (i, p.worst)
                        } else {
                            (bi, bw)
                        }
                    });
            let old = panels.swap_remove(i);
            let mid = 0.5 * (old.lo + old.hi);
            error.iter_mut().zip(&old.diff).for_each(|(e, d)| *e -= d);
            for (lo, hi) in [(old.lo, mid), (mid, old.hi)] {
                let (kronrod, diff) = kronrod_panel(&f, lo, hi, &mut value);
                add(&mut error, &diff);
                let w = worst(&diff);
                panels.push(Panel {
                    lo,
                    hi,
                    kronrod,
                    diff,
                    worst: w,
                });
            }
            // The running sum drifts by rounding: recount it before trusting it.
            if done(&error) {
                error.iter_mut().for_each(|e| *e = 0.0);
                for p in &panels {
                    add(&mut error, &p.diff);
                }
            }
        }
        let converged = done(&error);
        panels.sort_by(|a, b| a.lo.total_cmp(&b.lo));
        let mut total = vec![0.0; dim];
        for p in &panels {
            add(&mut total, &p.kronrod);
        }
        (
            total,
            KronrodReport {
                panels: panels.len(),
                converged,
            },
        )
    }
}

/// `into[j] += from[j]` for every entry.
fn add(into: &mut [f64], from: &[f64]) {
    into.iter_mut().zip(from).for_each(|(t, x)| *t += x);
}

impl NormalQuadrature for AdaptiveKronrod {
    /// Time: as [`AdaptiveKronrod::expect_many`] with one entry.
    fn expect(&self, f: impl Fn(f64) -> f64) -> f64 {
        self.expect_many(1, |z, out| out[0] = f(z))[0]
    }
}

/// The 15-point Kronrod estimates of ∫ f(z) φ(z) dz over [lo, hi] and their absolute
/// differences from the embedded 7-point Gauss estimates; `value` is scratch of f's size.
fn kronrod_panel(
    f: &impl Fn(f64, &mut [f64]),
    lo: f64,
    hi: f64,
    value: &mut [f64],
) -> (Vec<f64>, Vec<f64>) {
    let half = 0.5 * (hi - lo);
    let centre = 0.5 * (hi + lo);
    let norm = 1.0 / (2.0 * std::f64::consts::PI).sqrt();
    let mut kronrod = vec![0.0; value.len()];
    let mut gauss = vec![0.0; value.len()];
    for (i, (&x, &wk)) in KRONROD_NODES.iter().zip(&KRONROD_WEIGHTS).enumerate() {
        let signs: &[f64] = if x == 0.0 { &[1.0] } else { &[-1.0, 1.0] };
        for &sign in signs {
            let z = centre + sign * half * x;
            let density = (-0.5 * z * z).exp() * norm * half;
            f(z, value);
            for (j, &v) in value.iter().enumerate() {
                kronrod[j] += wk * density * v;
                if i % 2 == 1 {
                    gauss[j] += GAUSS_WEIGHTS[i / 2] * density * v;
                }
            }
        }
    }
    for (g, k) in gauss.iter_mut().zip(&kronrod) {
        *g = (k - *g).abs();
    }
    (kronrod, gauss)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression: integrands that fall into the subnormal range (p^64 of a tiny rate) made the
    /// relative test fail on every panel there, halving each to the depth cap; with the floor
    /// the rule stops. Counted by evaluations.
    #[test]
    fn kronrod_stops_on_integrands_that_underflow() {
        let calls = std::cell::Cell::new(0u64);
        let got = AdaptiveKronrod::RUN_NOISE.expect(|z| {
            calls.set(calls.get() + 1);
            // pass^64 of expit(-12 + 2 z): subnormal for z below about -2.
            (-64.0 * (1.0 + (12.0 - 2.0 * z).exp()).ln()).exp()
        });
        assert!(got > 0.0 && got < 1e-10, "{got}");
        assert!(calls.get() < 200_000, "{} evaluations", calls.get());
    }

    #[test]
    fn kronrod_weights_integrate_polynomials_and_normal_moments() {
        // Both rules integrate 1 over [-1, 1] to 2; the 15-point Kronrod rule is exact to degree
        // 3 x 7 + 1 = 22 (not 29: that is the 15-point Gauss rule), so x^22 is, x^24 is not.
        let sum_k: f64 = KRONROD_WEIGHTS[..7].iter().sum::<f64>() * 2.0 + KRONROD_WEIGHTS[7];
        let sum_g: f64 = GAUSS_WEIGHTS[..3].iter().sum::<f64>() * 2.0 + GAUSS_WEIGHTS[3];
        assert!((sum_k - 2.0).abs() < 1e-15 && (sum_g - 2.0).abs() < 1e-15);
        let even = |d: i32| -> f64 {
            KRONROD_NODES
                .iter()
                .zip(&KRONROD_WEIGHTS)
                .map(|(&x, &w)| if x == 0.0 { 0.0 } else { 2.0 * w * x.powi(d) })
                .sum()
        };
        assert!((even(22) - 2.0 / 23.0).abs() < 1e-15);
        assert!((even(24) - 2.0 / 25.0).abs() > 1e-12);
        let rule = AdaptiveKronrod::RUN_NOISE;
        for (k, want) in [(0, 1.0), (2, 1.0), (4, 3.0), (6, 15.0), (8, 105.0)] {
            let got = rule.expect(|z| z.powi(k));
            assert!((got - want).abs() < 1e-13 * want, "E[Z^{k}] = {got}");
        }
        // Mass far out in the tail, found without being told where: E[e^(t Z)] = e^(t^2 / 2),
        // the integrand a normal density centred at z = t.
        for t in [-15.0f64, 9.5, 17.0] {
            let got = rule.expect(|z| (t * z).exp());
            assert!(
                (got / (0.5 * t * t).exp() - 1.0).abs() < 1e-12,
                "t {t}: {got}"
            );
        }
    }

    #[test]
    fn gauss_hermite_above_192_nodes_is_refused_not_wrong() {
        // Every node count up to the bound integrates 1, z^2 and z^4 of the normal to 1e-12.
        for m in 3..=MAX_GAUSS_HERMITE_NODES {
            let n = gauss_hermite_normal(m);
            let moment = |p: i32| n.iter().map(|&(z, w)| w * z.powi(p)).sum::<f64>();
            assert!(
                (moment(0) - 1.0).abs() < 1e-12,
                "m = {m}: weights sum to {}",
                moment(0)
            );
            assert!((moment(2) - 1.0).abs() < 1e-12, "m = {m}");
            assert!((moment(4) - 3.0).abs() < 1e-12, "m = {m}");
        }
        // Above it, a panic (validated before reaching here), never the collapsed weights.
        assert!(std::panic::catch_unwind(|| gauss_hermite_normal(200)).is_err());
    }

    /// E[Z^k] of the standard normal: 0 for odd k, (k - 1)!! for even k.
    fn normal_moment(k: i32) -> f64 {
        if k % 2 == 1 {
            0.0
        } else {
            (1..k).step_by(2).map(f64::from).product()
        }
    }

    #[test]
    fn gauss_hermite_moments() {
        let nodes = gauss_hermite_normal(48);
        let moment = |k: i32| nodes.iter().map(|(z, w)| w * z.powi(k)).sum::<f64>();
        assert!((moment(0) - 1.0).abs() < 1e-12);
        assert!(moment(1).abs() < 1e-12);
        assert!((moment(2) - 1.0).abs() < 1e-12);
        assert!((moment(4) - 3.0).abs() < 1e-10);
    }

    #[test]
    fn every_rule_integrates_normal_moments() {
        type Rule<'a> = &'a dyn Fn(&dyn Fn(f64) -> f64) -> f64;
        let rules: [(&str, f64, Rule); 3] = [
            ("composite", 1e-12, &|f| CompositeSimpson::PLAN.expect(f)),
            ("adaptive", 1e-12, &|f| {
                AdaptiveSimpson::with_break(0.3).expect(f)
            }),
            ("hermite", 1e-9, &|f| GaussHermite::new(48).expect(f)),
        ];
        for (name, tol, rule) in rules {
            for k in 0..=6 {
                let got = rule(&|z: f64| z.powi(k));
                let want = normal_moment(k);
                assert!(
                    (got - want).abs() <= tol * want.max(1.0),
                    "{name}: E[Z^{k}] = {got}, want {want}"
                );
            }
        }
    }

    #[test]
    fn composite_weights_reproduce_its_expectation() {
        let rule = CompositeSimpson::new(2_000);
        let f = |z: f64| crate::model::expit(0.4 + 2.0 * z);
        let tabulated: f64 = rule
            .weights()
            .iter()
            .zip(rule.tabulate(f))
            .map(|(w, v)| w * v)
            .sum();
        assert!((tabulated - rule.expect(f)).abs() < 1e-14);
        assert_eq!(rule.len(), 2_001);
    }

    #[test]
    fn the_simpson_rules_agree_on_a_logistic_mean() {
        let (mu, sigma) = (-0.7, 1.8);
        let f = |z: f64| crate::model::expit(mu + sigma * z);
        let composite = CompositeSimpson::PLAN.expect(f);
        let adaptive = AdaptiveSimpson::with_break(-mu / sigma).expect(f);
        assert!(
            (composite - adaptive).abs() < 1e-12,
            "{composite} {adaptive}"
        );
    }
}
