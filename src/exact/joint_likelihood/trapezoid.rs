//! The trapezoid rules the joint likelihood (`exact::joint_likelihood`, computed in
//! `exact::joint_likelihood::runs`) is made of: the step rule, the inner integral of one
//! count over a normal spread in its logit (`inner_integral`) and the same integral on a
//! lattice of logits whose kernels are tables (`lattice_integral`).
//!
//! # Why not Gauss–Hermite
//!
//! Code benchmarks give all-or-none counts (c = 0 or c = n for most problems) and fits at
//! sigma 10 to 14 and shift_sd 2 to 7 logits. There an integrand is a normal density cut by a
//! "wall" (expit(sigma x)^n rises from 0 to 1 within about 1 / sigma): neither side looks like
//! a normal, and a Gauss–Hermite rule centred and scaled at the mode (Liu & Pierce) misses
//! mass on the wide side. At sigma 14 it was off by 1e-4 in ln L_i, and by 0.3 to 1.2 in ln L
//! over 800 problems.
//!
//! # The rule
//!
//! Each integral is of e^g over a standard normal variable v, with g concave (a binomial
//! log-likelihood in a logit linear in v, plus -v^2/2; the outer one by Prekopa's theorem). It
//! is the trapezoid sum h sum_j e^{g(v_j)} on a grid of step h, walked outwards from the mode
//! until g has dropped [`DROP`] below its peak (concavity bounds the rest of the tail by
//! e^-34 times the number of nodes). For an integrand analytic in the strip |Im v| < d whose
//! size there is at most C times its size on the real line, the trapezoid error is at most
//! 2 C / (e^{2 pi d / h} - 1) relative (Trefethen & Weideman 2014, Theorem 5.1). The kernel
//! expit(u)^c expit(-u)^(n - c) satisfies |expit(u + iy)| <= expit(u) / cos(y/2), and for
//! |y| <= pi/2 the factor stays moderate where the integrand has its mass, so with the logit
//! u = a + scale v, d = pi / (2 scale) (at most `STRIP_MAX`) and
//! h = 2 pi d / (`ALIAS_LOG` + d^2 / 2) the aliasing error is below about 1e-14 relative; a
//! sharp peak (intermediate counts at large n) also needs h below its width, so h is at most
//! the peak width over a divisor: for `inner_integral`, which walks from the mode found by
//! damped Newton, 1 / sqrt(-g''(mode)) over `WIDTH_DIVISOR` (a normal peak's trapezoid error is
//! then 2 e^{-2 pi^2 6.25}); for the rules of the likelihood, which walk from an analytic
//! guess at the mode (concavity makes a guess off the mode cost only nodes), a lower bound on
//! the width from an upper bound on the curvature (a count's inner log-integral curves by at
//! most min(n/4, 1/tau^2) in its logit) over `BOUND_DIVISOR`. Both choices are checked against
//! a brute-force integral at the extremes by the tests.
//!
//! # Sharing across problems
//!
//! An inner integral F(c, eta) = ln E_v[Bin(c | n, expit(eta + spread v))] depends on the
//! problem only through (c, n) and the logit eta. The likelihood takes its outer nodes on one
//! grid x_k = k h_x for every problem, so the logits a model's inner integrals need are points
//! base + delta i of one lattice per model (`LogitLattice`): ln p and ln(1 - p) are computed
//! once per point, each count's kernel once per (count, point) (`CountKernel`), and a node
//! costs two table reads and a product e^{kernel} e^{-v^2/2} (`lattice_integral`; in log
//! space, by `inner_integral`, when the log-integrand's peak is below `PRODUCT_FLOOR`). On
//! all-or-none data of 800 problems two models have 22 distinct counts, so the cost is that of
//! 22 one-dimensional tables, not 800 double integrals. Each table entry is a pure function of
//! its key, so the values, and the sums taken in grid order per row, have the same bits for
//! any thread count.

use super::moments::LazyTable;
use super::{expit_from, ln_1p_unit, ln_kernel_q, logit_approx, Count, Inner, Order};
use crate::numerics::optimise::newton_mode;

/// A walk stops when the log-integrand is this far below its peak (e^-34 = 1.7e-15 relative, times the nodes past it).
pub const DROP: f64 = 34.0;
/// The exponent the aliasing error must reach: e^-32 = 1.3e-14 relative (the tests find
/// 1e-15 to 7e-13 absolute in ln L_i against a brute-force integral).
const ALIAS_LOG: f64 = 32.0;
/// Largest half-width of the strip of analyticity used (the normal density grows as
/// e^{d^2/2} off the real line).
const STRIP_MAX: f64 = 4.0;
/// The step is at most the peak width over this.
const WIDTH_DIVISOR: f64 = 2.5;
/// A log kernel above -this is 1 to double precision (and the kernel's derivative terms 0).
const FLAT_KERNEL: f64 = 1e-17;
/// Beyond this many SDs the normal density is below e^-45: an all-right kernel that is 1 from
/// here up has the integral 1.
const FLAT_REACH: f64 = 9.5;
/// Most nodes a walk takes on one side (a guard; about 2,000 at a spread of 60 logits).
pub(crate) const MAX_NODES: i64 = 200_000;

/// Step of the trapezoid rule in a standard normal variable v that enters the logit as
/// `scale` v, for a peak of width `width` (module doc).
pub fn trapezoid_step(scale: f64, width: f64) -> f64 {
    let d = if scale > 0.0 {
        (std::f64::consts::FRAC_PI_2 / scale).min(STRIP_MAX)
    } else {
        STRIP_MAX
    };
    let alias = 2.0 * std::f64::consts::PI * d / (ALIAS_LOG + 0.5 * d * d);
    alias.min(width / WIDTH_DIVISOR)
}

/// -ln sqrt(2 pi).
pub(crate) const LN_NORMAL: f64 = -0.918_938_533_204_672_8;

/// All right (or all wrong) and the kernel 1 to double precision from 9.5 SDs of e below
/// (above) on: the inner integral is 1 within 1e-17 and its derivatives 0.
fn flat_integral(c: Count, eta: f64, tau: f64) -> bool {
    let all_right = c.correct == c.samples;
    if !(all_right || c.correct == 0) {
        return false;
    }
    let far = if all_right {
        eta - FLAT_REACH * tau
    } else {
        eta + FLAT_REACH * tau
    };
    ln_kernel_q(c, far, (-far.abs()).exp()) > -FLAT_KERNEL
}

/// ln E_e[C(n, c) expit(eta + tau e)^c expit(-(eta + tau e))^(n - c)], e ~ N(0, 1), and its
/// derivatives in eta and tau (those of the integrals, the rule's weighted averages of the
/// integrand's derivatives: r = c - n p and r e; second: (r^2 - n p (1 - p)) times 1, e, e^2),
/// by the trapezoid rule of the module doc. Exact for tau = 0.
pub(crate) fn inner_integral(c: Count, ln_choose: f64, eta: f64, tau: f64, order: Order) -> Inner {
    let (cc, n) = (c.correct as f64, c.samples as f64);
    // the log kernel at logit u, and with derivatives p
    let kernel = |u: f64| -> (f64, f64) {
        let q = (-u.abs()).exp();
        (ln_kernel_q(c, u, q), expit_from(u, q))
    };
    if tau == 0.0 {
        let (k, p) = kernel(eta);
        let mut out = Inner {
            value: ln_choose + k,
            ..Inner::default()
        };
        if order >= Order::Gradient {
            out.d_eta = cc - n * p;
            if order == Order::Hessian {
                let q = n * p * (1.0 - p);
                out.d_eta2 = -q;
                out.d_tau2 = out.d_eta * out.d_eta - q;
            }
        }
        return out;
    }
    if flat_integral(c, eta, tau) {
        return Inner {
            value: ln_choose,
            ..Inner::default()
        };
    }
    let all_right = c.correct == c.samples;
    // the side on which the kernel rises to 1: there, once it is 1 to double precision, a node
    // needs only the normal density
    let flat_side = if all_right {
        1
    } else if c.correct == 0 {
        -1
    } else {
        0
    };
    let h = |e: f64| kernel(eta + tau * e).0 - 0.5 * e * e;
    let (centre, precision) = logit_approx(c);
    let start = tau * precision * (centre - eta) / (1.0 + tau * tau * precision);
    let (e0, curvature) = newton_mode(
        &h,
        &|e| {
            let p = kernel(eta + tau * e).1;
            (tau * (cc - n * p) - e, tau * tau * n * p * (1.0 - p) + 1.0)
        },
        start,
    );
    let step = trapezoid_step(tau, curvature.sqrt().recip());
    // nodes e0 + j step, walked out from the mode on both sides
    let mut nodes: Vec<(f64, f64, f64)> = Vec::with_capacity(64);
    let mut peak = f64::NEG_INFINITY;
    let mut walk = |dir: i64, nodes: &mut Vec<(f64, f64, f64)>| {
        let mut j: i64 = if dir > 0 { 0 } else { -1 };
        let mut flat = false;
        while j.abs() < MAX_NODES {
            let e = e0 + j as f64 * step;
            let (k, p) = if flat {
                (0.0, if all_right { 1.0 } else { 0.0 })
            } else {
                kernel(eta + tau * e)
            };
            flat = flat || (dir == flat_side && k > -FLAT_KERNEL);
            let v = k - 0.5 * e * e;
            if !v.is_finite() || v < peak - DROP {
                break;
            }
            peak = peak.max(v);
            nodes.push((e, v, p));
            j += dir;
        }
    };
    walk(1, &mut nodes);
    let right = nodes.len();
    walk(-1, &mut nodes);
    if nodes.is_empty() || !peak.is_finite() {
        return Inner {
            value: f64::NEG_INFINITY,
            ..Inner::default()
        };
    }
    // ascending e: the left side reversed, then the right side
    let ordered = nodes[right..].iter().rev().chain(&nodes[..right]);
    let (mut sum, mut a, mut b) = (0.0, 0.0, 0.0);
    let (mut aa, mut ab, mut bb) = (0.0, 0.0, 0.0);
    for &(e, v, p) in ordered {
        let w = (v - peak).exp();
        sum += w;
        if order >= Order::Gradient {
            let r = cc - n * p;
            a += w * r;
            b += w * r * e;
            if order == Order::Hessian {
                let t = r * r - n * p * (1.0 - p);
                aa += w * t;
                ab += w * t * e;
                bb += w * t * e * e;
            }
        }
    }
    let (da, db) = (a / sum, b / sum);
    Inner {
        value: ln_choose + step.ln() + LN_NORMAL + peak + sum.ln(),
        d_eta: da,
        d_tau: db,
        d_eta2: aa / sum - da * da,
        d_eta_tau: ab / sum - da * db,
        d_tau2: bb / sum - db * db,
    }
}

/// An inner integral's nodes are summed as products e^{kernel} e^{-e^2/2} of the lattice's
/// tables while its log-integrand's peak is above this (every factor and product of a node
/// within [`DROP`] of the peak is then a normal double); below, [`inner_integral`] sums it.
pub(crate) const PRODUCT_FLOOR: f64 = -600.0;
/// Most lattice points (and outer nodes) per side held in dense tables; points beyond are
/// computed when asked (or go to a map, in the runs likelihood's lattice).
pub(super) const DENSE_REACH: i64 = 1 << 14;
/// Dense tables cover the standard normal variables up to this many SDs (the normal density is
/// below e^-72 there).
const TABLE_SDS: f64 = 12.0;
/// The width bound of the outer and inner steps over this (a normal peak's trapezoid error is
/// then 2 e^{-2 pi^2 1.5^2} = 1e-19 relative; the bound is below the true width).
pub(super) const BOUND_DIVISOR: f64 = 1.5;

/// Table size for a variable of step `h` up to [`TABLE_SDS`].
pub(super) fn sds_in_steps(h: f64) -> i64 {
    if h > 0.0 {
        (TABLE_SDS / h).ceil().min(1e9) as i64
    } else {
        0
    }
}

/// Logits on a lattice u_i = base + delta i, with ln p, ln(1 - p) and p computed once per
/// point (dense for |i| < reach, computed when asked beyond), shared by every count and node
/// that needs them.
pub(crate) struct LogitLattice {
    base: f64,
    delta: f64,
    reach: i64,
    points: LazyTable<[f64; 3]>,
}

impl LogitLattice {
    pub(crate) fn new(base: f64, delta: f64, reach: i64) -> Self {
        LogitLattice {
            base,
            delta,
            reach,
            points: LazyTable::new(reach),
        }
    }

    /// The logit of point i.
    pub(crate) fn logit(&self, i: i64) -> f64 {
        self.base + self.delta * i as f64
    }

    fn point(&self, i: i64) -> [f64; 3] {
        let compute = || {
            let u = self.logit(i);
            let q = (-u.abs()).exp();
            let t = ln_1p_unit(q);
            [-((-u).max(0.0) + t), -(u.max(0.0) + t), expit_from(u, q)]
        };
        self.points.get(i, compute)
    }
}

/// One count's binomial kernel on a [`LogitLattice`]: its log (without the binomial
/// coefficient), itself and p, by point.
pub(crate) struct CountKernel {
    count: Count,
    values: LazyTable<[f64; 3]>,
}

impl CountKernel {
    pub(crate) fn new(count: Count, lattice: &LogitLattice) -> Self {
        CountKernel {
            count,
            values: LazyTable::new(lattice.reach),
        }
    }

    // inlined into `lattice_integral`'s loop, as the table read it makes (left to the
    // compiler it was a call per node there, and fits a tenth slower)
    #[inline(always)]
    fn at(&self, lattice: &LogitLattice, i: i64) -> [f64; 3] {
        let compute = || {
            let c = self.count;
            let [ln_p, ln_q, p] = lattice.point(i);
            let mut k = 0.0;
            if c.correct > 0 {
                k += c.correct as f64 * ln_p;
            }
            if c.samples > c.correct {
                k += (c.samples - c.correct) as f64 * ln_q;
            }
            [k, k.exp(), p]
        };
        self.values.get(i, compute)
    }
}

/// A trapezoid rule in a standard normal variable v whose spread moves the logit by
/// `per_inner` lattice points per node: node j is v_j = j h at lattice offset per_inner j.
pub(crate) struct NormalRule {
    pub(crate) per_inner: i64,
    pub(crate) h: f64,
    /// e^{-v_j^2/2} for |j| below its length.
    gauss: Vec<f64>,
}

impl NormalRule {
    pub(crate) fn new(per_inner: i64, h: f64) -> Self {
        let gauss = (0..=sds_in_steps(h).min(DENSE_REACH))
            .map(|j| {
                let e = j as f64 * h;
                (-0.5 * e * e).exp()
            })
            .collect();
        NormalRule {
            per_inner,
            h,
            gauss,
        }
    }

    /// The rule for a spread `spread` > 0 on a lattice of step `delta`, for counts of at most
    /// `n_max` samples: the largest node step at most the strip and width bounds that is a whole
    /// number of lattice steps; `None` when even one lattice step is too wide.
    pub(crate) fn on_lattice(spread: f64, n_max: usize, delta: f64) -> Option<Self> {
        let wanted = inner_step(spread, n_max);
        let per_inner = (spread * wanted / delta).floor();
        (1.0..1e9)
            .contains(&per_inner)
            .then(|| NormalRule::new(per_inner as i64, per_inner * delta / spread))
    }

    pub(crate) fn gauss(&self, j: i64) -> f64 {
        match self.gauss.get(j.unsigned_abs() as usize) {
            Some(&g) => g,
            None => {
                let e = j as f64 * self.h;
                (-0.5 * e * e).exp()
            }
        }
    }
}

/// The largest step of an inner rule in e for disagreement `spread` > 0 and counts of at most
/// `n_max` samples: the strip bound, and the width bound over [`BOUND_DIVISOR`].
pub(super) fn inner_step(spread: f64, n_max: usize) -> f64 {
    let width = (1.0 + spread * spread * 0.25 * n_max as f64).sqrt().recip();
    trapezoid_step(spread, f64::INFINITY).min(width / BOUND_DIVISOR)
}

/// [`inner_integral`] of `kernel`'s count at the logit of lattice point `at`, for a positive
/// spread `spread`, by `rule` on the lattice, walked out from the analytic guess at its mode; the nodes
/// summed as products e^{kernel} e^{-v^2/2} of the tables. `None` when the log-integrand's peak
/// is below [`PRODUCT_FLOOR`] or the integral is flat ([`flat_integral`]): the caller then
/// takes [`inner_integral`].
pub(crate) fn lattice_integral(
    kernel: &CountKernel,
    ln_choose: f64,
    lattice: &LogitLattice,
    rule: &NormalRule,
    at: i64,
    spread: f64,
    order: Order,
) -> Option<Inner> {
    let c = kernel.count;
    let eta = lattice.logit(at);
    if flat_integral(c, eta, spread) {
        return None;
    }
    let (cc, n) = (c.correct as f64, c.samples as f64);
    let (centre, precision) = logit_approx(c);
    let guess = spread * precision * (centre - eta) / (1.0 + spread * spread * precision);
    let j0 = (guess / rule.h).round() as i64;
    let mut peak = f64::NEG_INFINITY;
    let mut sums = [0.0f64; 6];
    for dir in [1i64, -1] {
        let mut j = if dir > 0 { j0 } else { j0 - 1 };
        while (j - j0).abs() < MAX_NODES {
            let [ln_k, k, p] = kernel.at(lattice, at + rule.per_inner * j);
            let e = j as f64 * rule.h;
            let v = ln_k - 0.5 * e * e;
            if !v.is_finite() || v < peak - DROP {
                break;
            }
            peak = peak.max(v);
            let w = k * rule.gauss(j);
            sums[0] += w;
            if order >= Order::Gradient {
                let r = cc - n * p;
                sums[1] += w * r;
                sums[2] += w * r * e;
                if order == Order::Hessian {
                    let t = r * r - n * p * (1.0 - p);
                    sums[3] += w * t;
                    sums[4] += w * t * e;
                    sums[5] += w * t * e * e;
                }
            }
            j += dir;
        }
    }
    let total = sums[0];
    if !(peak >= PRODUCT_FLOOR && total > 0.0 && total.is_finite()) {
        return None;
    }
    let (da, db) = (sums[1] / total, sums[2] / total);
    Some(Inner {
        value: ln_choose + rule.h.ln() + LN_NORMAL + total.ln(),
        d_eta: da,
        d_tau: db,
        d_eta2: sums[3] / total - da * da,
        d_eta_tau: sums[4] / total - da * db,
        d_tau2: sums[5] / total - db * db,
    })
}

#[cfg(test)]
mod tests;
