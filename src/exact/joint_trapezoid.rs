//! The pooled-count likelihood of the joint model (`exact::joint_likelihood`) by trapezoid
//! rules placed where each integrand lives: ln L, its gradient and its Hessian.
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
//! the peak width 1 / sqrt(-g''(mode)) over `WIDTH_DIVISOR` (a normal peak's trapezoid error
//! is then 2 e^{-2 pi^2 6.25}). Both choices are checked against a brute-force integral at the
//! extremes by the tests.
//!
//! # Sharing across problems
//!
//! The inner integral F_m(c, eta) = ln E_e[Bin(c | n, expit(eta + tau_m e))] depends on the
//! problem only through (c, n) and the outer node. The outer grid is one grid x_k = k h for
//! every problem (h the smallest step any problem needs), so eta_{m,k} = mu + shift_m + sigma x_k
//! is the same for all problems and each (model, count, k) inner integral is computed once, in
//! a table shared by the rows. On all-or-none data of 800 problems two models have 22 distinct
//! counts, so the cost is that of 22 one-dimensional tables, not 800 double integrals. Each
//! table entry is a pure function of its key, so the values, and the sums taken in grid order
//! per row, have the same bits for any thread count.

use std::collections::HashMap;
use std::sync::Mutex;

use rayon::prelude::*;

use super::joint_likelihood::{
    expit_from, ln_kernel_q, logit_approx, newton_centre, Count, Inner, JointData, JointParams,
    Order,
};

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
    // all right (or all wrong) and the kernel 1 to double precision from 9.5 SDs below (above)
    // on: the integral is 1 within 1e-17 and its derivatives 0
    let all_right = c.correct == c.samples;
    if all_right || c.correct == 0 {
        let far = if all_right {
            eta - FLAT_REACH * tau
        } else {
            eta + FLAT_REACH * tau
        };
        if kernel(far).0 > -FLAT_KERNEL {
            return Inner {
                value: ln_choose,
                ..Inner::default()
            };
        }
    }
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
    let (e0, curvature) = newton_centre(
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

/// The inner integrals of one evaluation, computed on demand and shared by the rows: one
/// table per (model, distinct count), keyed by the outer grid index.
struct Tables<'a> {
    data: &'a JointData,
    params: &'a JointParams,
    order: Order,
    step: f64,
    /// First table of each model (tables of model m are `first[m] + distinct index`).
    first: Vec<usize>,
    tables: Vec<Mutex<HashMap<i64, Inner>>>,
}

impl Tables<'_> {
    fn get(&self, m: usize, d: usize, k: i64) -> Inner {
        let slot = &self.tables[self.first[m] + d];
        if let Some(v) = slot.lock().ok().and_then(|t| t.get(&k).copied()) {
            return v;
        }
        let x = k as f64 * self.step;
        let eta = self.params.mu + self.params.sigma * x + self.params.shift[m];
        let v = inner_integral(
            self.data.distinct[m][d],
            self.data.ln_choose[m][d],
            eta,
            self.params.tau[m],
            self.order,
        );
        if let Ok(mut t) = slot.lock() {
            t.insert(k, v);
        }
        v
    }
}

/// g(x) = sum_m F_m - x^2/2 of one row, evaluated directly (not on the grid).
fn row_value(data: &JointData, pattern: &[Option<usize>], p: &JointParams, x: f64) -> f64 {
    let mut g = -0.5 * x * x;
    for (m, d) in pattern.iter().enumerate() {
        if let Some(d) = *d {
            let eta = p.mu + p.sigma * x + p.shift[m];
            g += inner_integral(
                data.distinct[m][d],
                data.ln_choose[m][d],
                eta,
                p.tau[m],
                Order::Value,
            )
            .value;
        }
    }
    g
}

/// Mode of one row's outer log-integrand and 1 / sqrt(-g'') there (damped Newton from the
/// normal approximation of each count, widened by tau_m^2).
fn row_mode(data: &JointData, pattern: &[Option<usize>], p: &JointParams) -> (f64, f64) {
    let (mut num, mut precision) = (0.0, 1.0);
    for (m, d) in pattern.iter().enumerate() {
        if let Some(d) = d {
            let (centre, w) = logit_approx(data.distinct[m][*d]);
            let tau = p.tau[m];
            let w = w / (1.0 + tau * tau * w);
            num += p.sigma * w * (centre - p.mu - p.shift[m]);
            precision += p.sigma * p.sigma * w;
        }
    }
    let slopes = |x: f64| -> (f64, f64) {
        let (mut d1, mut d2) = (-x, 1.0);
        for (m, d) in pattern.iter().enumerate() {
            if let Some(d) = *d {
                let eta = p.mu + p.sigma * x + p.shift[m];
                let inner = inner_integral(
                    data.distinct[m][d],
                    data.ln_choose[m][d],
                    eta,
                    p.tau[m],
                    Order::Hessian,
                );
                d1 += p.sigma * inner.d_eta;
                d2 -= p.sigma * p.sigma * inner.d_eta2;
            }
        }
        (d1, d2.max(1.0))
    };
    let (x0, curvature) = newton_centre(
        &|x| row_value(data, pattern, p, x),
        &slopes,
        num / precision,
    );
    (x0, curvature.sqrt().recip())
}

/// Per-row ln L_i (times nothing), and with `order` Gradient or Hessian the row's gradient
/// (layout mu, sigma, shift_0.., tau_0..) and Hessian (row-major, P = 2 + 2M), for every
/// (pattern, multiplicity) given; the rows' results in the order given.
pub(crate) fn rows_log_likelihood(
    data: &JointData,
    patterns: &[(Vec<Option<usize>>, f64)],
    params: &JointParams,
    order: Order,
) -> Vec<(f64, Vec<f64>, Vec<f64>)> {
    let models = data.models();
    // each row's mode and width, then one outer step for all
    let modes: Vec<(f64, f64)> = patterns
        .par_iter()
        .with_min_len(8)
        .map(|(pattern, _)| row_mode(data, pattern, params))
        .collect();
    let narrowest = modes.iter().map(|m| m.1).fold(1.0f64, f64::min);
    let step = trapezoid_step(params.sigma, narrowest);
    let mut first = Vec::with_capacity(models);
    let mut count = 0;
    for m in 0..models {
        first.push(count);
        count += data.distinct[m].len();
    }
    let tables = Tables {
        data,
        params,
        order,
        step,
        first,
        tables: (0..count).map(|_| Mutex::new(HashMap::new())).collect(),
    };
    let p = 2 + 2 * models;
    patterns
        .par_iter()
        .zip(&modes)
        .with_min_len(4)
        .map(|((pattern, _), &(x0, _))| {
            let node = |k: i64| -> (f64, Vec<Inner>) {
                let x = k as f64 * step;
                let mut g = -0.5 * x * x;
                let mut inners = Vec::with_capacity(models);
                for (m, d) in pattern.iter().enumerate() {
                    let inner = match d {
                        Some(d) => {
                            let v = tables.get(m, *d, k);
                            g += v.value;
                            v
                        }
                        None => Inner::default(),
                    };
                    inners.push(inner);
                }
                (g, inners)
            };
            let k0 = (x0 / step).round() as i64;
            let mut right = Vec::new();
            let mut left = Vec::new();
            let mut peak = f64::NEG_INFINITY;
            for (dir, out) in [(1i64, &mut right), (-1, &mut left)] {
                let mut k = if dir > 0 { k0 } else { k0 - 1 };
                while (k - k0).abs() < MAX_NODES {
                    let (g, inners) = node(k);
                    if !g.is_finite() || g < peak - DROP {
                        break;
                    }
                    peak = peak.max(g);
                    out.push((k, g, inners));
                    k += dir;
                }
            }
            left.reverse();
            left.extend(right);
            let nodes = left;
            if !peak.is_finite() {
                return (f64::NEG_INFINITY, vec![0.0; p], vec![0.0; p * p]);
            }
            let weights: Vec<f64> = nodes.iter().map(|n| (n.1 - peak).exp()).collect();
            let total: f64 = weights.iter().sum();
            let value = step.ln() + LN_NORMAL + peak + total.ln();
            if order == Order::Value {
                return (value, Vec::new(), Vec::new());
            }
            let mut grad = vec![0.0; p];
            let mut hess = vec![0.0; if order == Order::Hessian { p * p } else { 0 }];
            let mut node_grad = vec![0.0; p];
            for ((k, _, inners), w) in nodes.iter().zip(&weights) {
                let w = w / total;
                let x = *k as f64 * step;
                node_grad.iter_mut().for_each(|v| *v = 0.0);
                for (m, entry) in pattern.iter().enumerate() {
                    if entry.is_none() {
                        continue;
                    }
                    let s = &inners[m];
                    node_grad[0] += s.d_eta;
                    node_grad[1] += x * s.d_eta;
                    node_grad[2 + m] += s.d_eta;
                    node_grad[2 + models + m] += s.d_tau;
                    if order == Order::Hessian {
                        // eta_m is linear in mu, sigma, shift_m with coefficients 1, x, 1
                        let lin = [(0, 1.0), (1, x), (2 + m, 1.0)];
                        let t = 2 + models + m;
                        for &(i, ci) in &lin {
                            for &(j, cj) in &lin {
                                hess[i * p + j] += w * s.d_eta2 * ci * cj;
                            }
                            hess[i * p + t] += w * s.d_eta_tau * ci;
                            hess[t * p + i] += w * s.d_eta_tau * ci;
                        }
                        hess[t * p + t] += w * s.d_tau2;
                    }
                }
                for (g, n) in grad.iter_mut().zip(&node_grad) {
                    *g += w * n;
                }
                if order == Order::Hessian {
                    for i in 0..p {
                        for j in 0..p {
                            hess[i * p + j] += w * node_grad[i] * node_grad[j];
                        }
                    }
                }
            }
            if order == Order::Hessian {
                for i in 0..p {
                    for j in 0..p {
                        hess[i * p + j] -= grad[i] * grad[j];
                    }
                }
            }
            (value, grad, hess)
        })
        .collect()
}

#[cfg(test)]
mod tests;
