//! B's residual given A in a population plan: the integral over e, on one logit lattice.
//!
//! With a per-problem deviation, B's logit given A's standardised logit x is b0 + b1 x + r e,
//! with e ~ N(0, 1) independent of x ([`super::conditional_b`]). Every moment the plan takes
//! ([`super::PopulationNodes`]: means, variances, the fourth moment of the count difference) is
//! E_x[g(f_A(x), f_B)] with g a polynomial of degree at most 4 in f_B, so at each x node B enters
//! only through the first four moments of f_B = f(expit(b0 + b1 x + r e)) over e: a Gaussian
//! smoothing of f along B's logit. This module computes them and hands them on as three atoms.
//!
//! # The rule in e
//!
//! The trapezoid rule on e_k = k h, |k| <= K, weights proportional to the normal density
//! (normalised to sum to 1, so a constant is integrated exactly). For an integrand analytic in
//! the strip |Im e| < d and at most M in size there, the trapezoid error for a normal weight
//! is at most 2 M e^{d^2 / 2} / (e^{2 pi d / h} - 1) (Trefethen & Weideman 2014, Theorem 5.1;
//! the density grows as e^{d^2 / 2} off the real line). f is the success probability of an
//! event decided by s independent samples, each correct with probability p (s = 1 for pass@1,
//! k for maj@k, graded or not): a sum of products of s per-sample probabilities of the form
//! alpha p + beta (1 - p) with alpha, beta >= 0, so |f| <= (|p| + |1 - p|)^s for complex p. For
//! p = expit(w) with |Im w| = theta < pi, |p| + |1 - p| = (1 + u) / |1 + u e^{i theta}| (u =
//! e^{-Re w}) is largest at u = 1, where it is sec(theta / 2). The moments integrate
//! (f - m)^j for j <= 4, at most 16 sec(r d / 2)^{4 s} in the strip, so the error is below
//! 32 exp(4 s ln sec(r d / 2) + d^2 / 2 - 2 pi d / h), and the step
//! h = max over d < pi / r of 2 pi d / ([`ALIAS_LOG`] + 4 s ln sec(r d / 2) + d^2 / 2)
//! ([`residual_step`]) puts it below 1e-17. The nodes stop at |e| <= [`RESIDUAL_TAIL`], beyond
//! which the normal has mass 8e-18. Typical steps: 0.68 as r -> 0 (27 nodes), 0.33 for
//! pass@1 at r = 1 (55 nodes), 0.028 for maj@64 at r = 3 (625 nodes; before shortening to
//! the lattice below).
//!
//! # One lattice
//!
//! The x nodes are uniform (step h_x, [`CompositeSimpson`]), so b1 x moves in steps b1 h_x. The
//! step in e is shortened until r h_e and b1 h_x are whole multiples of one logit step delta:
//! r h_e = q delta and b1 h_x = m delta with m = 1 (q = floor(r h / (b1 h_x)) >= 1) or q = 1
//! (m = ceil(b1 h_x / (r h))). Then every logit the rule needs is y0 + n delta for a whole n, f
//! is evaluated once per lattice point (about 4,001 m + 2 K q points: 7,900 for maj@64 at
//! sigma = 2.2 and r = 3, where the x and e nodes make 2.6 million pairs), and each x node
//! reads its row of f at stride q. When the rows would not overlap (tiny r beside a large b1,
//! or a tiny b1 beside a large r) the lattice would be longer than the rows themselves, and f
//! is evaluated on the plain product of the x and e nodes with the step h instead. With
//! b1 = 0 every row is the same one row; with r = 0 a row is one node of weight 1.
//!
//! # Three atoms
//!
//! From the row's mean m and central moments mu_2, mu_3, mu_4 (taken about m, scaled by the
//! row's largest |f - m|, no cancellation), three atoms reproduce moments 0 to 4 exactly: one
//! at m, two at m + u and m + v with u + v = mu_3 / mu_2 and u v = (mu_3^2 - mu_4 mu_2) / mu_2^2
//! (negative: mu_4 mu_2 >= mu_3^2 + mu_2^3), weights mu_2 / (u (u - v)), mu_2 / (v (v - u)) and
//! 1 + mu_2 / (u v), all >= 0. E over e of any polynomial of degree <= 4 in f_B is then the
//! three-term weighted sum, which is how [`super::PopulationNodes`] takes its moments.
//!
//! Deterministic: each lattice value is a pure function of its index and each row's sums run
//! in e order, whatever the thread count.

use std::f64::consts::PI;

use rayon::prelude::*;

use crate::exact::quadrature::CompositeSimpson;
use crate::model::expit;

/// Largest |e| of the rule in e: P(|e| > 8.6) = 8e-18.
pub const RESIDUAL_TAIL: f64 = 8.6;

/// ln(32 / 1e-17): the exponent the aliasing bound of the module doc must reach.
const ALIAS_LOG: f64 = 42.6;

/// Atoms per x node of B's conditional law ([`residual_atoms`]).
pub const ATOMS: usize = 3;

/// The largest trapezoid step in e that meets the aliasing bound of the module doc for a
/// residual SD `r` and a score decided by `samples` samples: the maximum over d in
/// (0, min(pi / r, 12)) of 2 pi d / (ALIAS_LOG + 4 s ln sec(r d / 2) + d^2 / 2), by golden
/// section (the ratio of a linear function to a convex one with positive intercept is
/// unimodal). Time: O(1) (100 evaluations).
pub fn residual_step(r: f64, samples: u32) -> f64 {
    let growth = 4.0 * f64::from(samples.max(1));
    let step = |d: f64| {
        let sec = 1.0 / (0.5 * r * d).cos();
        2.0 * PI * d / (ALIAS_LOG + growth * sec.ln() + 0.5 * d * d)
    };
    let (mut lo, mut hi) = (0.0, (PI / r).min(12.0) * (1.0 - 1e-9));
    let shrink = 0.5 * (5f64.sqrt() - 1.0);
    for _ in 0..100 {
        let (a, b) = (hi - shrink * (hi - lo), lo + shrink * (hi - lo));
        if step(a) < step(b) {
            lo = a;
        } else {
            hi = b;
        }
    }
    step(0.5 * (lo + hi))
}

/// Where the rule's logits lie and how an (x node, e node) pair finds its value of f.
#[derive(Debug, Clone, Copy)]
enum Layout {
    /// Value n is f(expit(y0 + n delta)); node (i, k) reads value i row + k col.
    Lattice {
        y0: f64,
        delta: f64,
        row: usize,
        col: usize,
    },
    /// Value i e_nodes + k is f(expit(b0 + b1 x_i + r e_k)) (rows that do not overlap).
    Product,
}

/// The rule in e and the layout of one population table's B values (module doc).
#[derive(Debug, Clone)]
struct Rule {
    /// Step in e.
    h: f64,
    /// e nodes per side: e_k = (k - half) h for k in 0..=2 half.
    half: usize,
    layout: Layout,
    /// Values of f the layout holds.
    len: usize,
}

impl Rule {
    fn new(x_rule: CompositeSimpson, (b1, r): (f64, f64), samples: u32) -> Rule {
        let nx = x_rule.len();
        let hx = x_rule.step();
        let widest = residual_step(r, samples);
        let half_for = |h: f64| (RESIDUAL_TAIL / h).ceil() as usize;
        let product = |h: f64| Rule {
            h,
            half: half_for(h),
            layout: Layout::Product,
            len: nx * (2 * half_for(h) + 1),
        };
        if r == 0.0 {
            // One node of weight 1 per row; the rows are A's nodes on B's logit.
            let (row, delta) = if b1 == 0.0 { (0, 0.0) } else { (1, b1 * hx) };
            return Rule {
                h: widest,
                half: 0,
                layout: Layout::Lattice {
                    y0: -Z_RANGE_B * b1,
                    delta,
                    row,
                    col: 1,
                },
                len: if b1 == 0.0 { 1 } else { nx },
            };
        }
        if b1 == 0.0 {
            let half = half_for(widest);
            return Rule {
                h: widest,
                half,
                layout: Layout::Lattice {
                    y0: -(half as f64) * r * widest,
                    delta: r * widest,
                    row: 0,
                    col: 1,
                },
                len: 2 * half + 1,
            };
        }
        // Lattice units per e step (q) and per x step (m): one of them is 1.
        let ratio = widest * r / (b1 * hx);
        let (row, col, delta) = if ratio >= 1.0 {
            (1.0, ratio.floor(), b1 * hx)
        } else {
            let m = (1.0 / ratio).ceil();
            (m, 1.0, b1 * hx / m)
        };
        let h = col * delta / r;
        let half = RESIDUAL_TAIL / h;
        let lattice_len = (nx - 1) as f64 * row + 2.0 * half.ceil() * col + 1.0;
        if lattice_len > (nx as f64) * (2.0 * half.ceil() + 1.0) {
            return product(widest);
        }
        let half = half.ceil() as usize;
        Rule {
            h,
            half,
            layout: Layout::Lattice {
                y0: -Z_RANGE_B * b1 - (half as f64) * col * delta,
                delta,
                row: row as usize,
                col: col as usize,
            },
            len: lattice_len as usize,
        }
    }

    fn e_nodes(&self) -> usize {
        2 * self.half + 1
    }

    /// The logit of value `n`, less b0.
    fn logit(&self, n: usize, x_rule: CompositeSimpson, (b1, r): (f64, f64)) -> f64 {
        match self.layout {
            Layout::Lattice { y0, delta, .. } => y0 + n as f64 * delta,
            Layout::Product => {
                let (i, k) = (n / self.e_nodes(), n % self.e_nodes());
                b1 * x_rule.node(i) + r * self.e(k)
            }
        }
    }

    fn e(&self, k: usize) -> f64 {
        (k as f64 - self.half as f64) * self.h
    }

    /// Index of the value of (x node i, e node k) and the stride between e nodes.
    fn row_start(&self, i: usize) -> (usize, usize) {
        match self.layout {
            Layout::Lattice { row, col, .. } => (i * row, col),
            Layout::Product => (i * self.e_nodes(), 1),
        }
    }

    /// The normalised trapezoid weights of the e nodes.
    fn weights(&self) -> Vec<f64> {
        let raw: Vec<f64> = (0..self.e_nodes())
            .map(|k| (-0.5 * self.e(k) * self.e(k)).exp())
            .collect();
        let total: f64 = raw.iter().sum();
        raw.iter().map(|w| w / total).collect()
    }
}

/// The x range of [`CompositeSimpson`] (its nodes run from -12): b1 x starts at -12 b1.
const Z_RANGE_B: f64 = crate::exact::quadrature::Z_RANGE;

/// B's conditional law of f_B = f(expit(b0 + b1 x + r e)) over e at every node x of `x_rule`,
/// as [`ATOMS`] atoms per node reproducing its moments 0 to 4 (module doc): (values, weights),
/// each node's atoms consecutive. `samples` is the number of samples that decide f (1 for
/// pass@1, k for maj@k): it sets the step in e. Time: one evaluation of f per lattice point
/// (module doc), in parallel, and O(e nodes) per x node.
pub fn residual_atoms(
    x_rule: CompositeSimpson,
    (b0, b1, r): (f64, f64, f64),
    samples: u32,
    f: impl Fn(f64) -> f64 + Sync,
) -> (Vec<f64>, Vec<f64>) {
    let rule = Rule::new(x_rule, (b1, r), samples);
    let values: Vec<f64> = (0..rule.len)
        .into_par_iter()
        .map(|n| f(expit(b0 + rule.logit(n, x_rule, (b1, r)))))
        .collect();
    let weights = rule.weights();
    let rows: Vec<([f64; ATOMS], [f64; ATOMS])> = (0..x_rule.len())
        .into_par_iter()
        .map(|i| {
            let (start, stride) = rule.row_start(i);
            let row = &values[start..=start + stride * (weights.len() - 1)];
            atoms(row, stride, &weights, rule.half)
        })
        .collect();
    let mut at = Vec::with_capacity(rows.len() * ATOMS);
    let mut wt = Vec::with_capacity(rows.len() * ATOMS);
    for (a, w) in rows {
        at.extend(a);
        wt.extend(w);
    }
    (at, wt)
}

/// Three atoms with the moments 0 to 4 of the values `row` under `weights` (module doc); the
/// centre value (index `centre`) anchors the mean, so a constant row gives one atom of weight 1
/// at that constant, exactly.
fn atoms(
    row: &[f64],
    stride: usize,
    weights: &[f64],
    centre: usize,
) -> ([f64; ATOMS], [f64; ATOMS]) {
    let at = |k: usize| row[k * stride];
    let anchor = at(centre);
    let (mut shift, mut lo, mut hi) = (0.0, anchor, anchor);
    for (k, w) in weights.iter().enumerate() {
        let v = at(k);
        shift += w * (v - anchor);
        lo = lo.min(v);
        hi = hi.max(v);
    }
    let m = anchor + shift;
    let scale = (hi - m).max(m - lo);
    let point = ([m; ATOMS], [1.0, 0.0, 0.0]);
    if scale == 0.0 {
        return point;
    }
    let (mut n2, mut n3, mut n4) = (0.0, 0.0, 0.0);
    let inverse = 1.0 / scale;
    for (k, w) in weights.iter().enumerate() {
        let d = (at(k) - m) * inverse;
        let d2 = d * d;
        n2 += w * d2;
        n3 += w * d2 * d;
        n4 += w * d2 * d2;
    }
    if n2 == 0.0 {
        return point;
    }
    // u + v = s, u v = p <= -n2 (Pearson's inequality; the min only guards rounding).
    let s = n3 / n2;
    let p = (s * s - n4 / n2).min(-n2);
    let root = (s * s - 4.0 * p).sqrt();
    let u = 0.5 * (s + root.copysign(s));
    let v = p / u;
    let (w1, w2) = (n2 / (u * (u - v)), n2 / (v * (v - u)));
    ([m, m + scale * u, m + scale * v], [1.0 - w1 - w2, w1, w2])
}

#[cfg(test)]
mod tests {
    use super::super::brute::{
        assert_moments_close, gauss_hermite_moments, nested, structural_moments,
    };
    use super::super::{PairMoments, PopulationNodes};
    use super::*;
    use crate::exact::maj::maj_at_k_pq;
    use crate::model::VoteRule;

    fn maj(k: u32) -> impl Fn(f64) -> f64 + Sync + Copy {
        move |p| maj_at_k_pq(p, 0.5 * (1.0 - p), k, VoteRule::Random)
    }

    /// sum_k w_k g(v_k) over a row, and over its atoms.
    fn both(row: &[f64], w: &[f64], g: impl Fn(f64) -> f64) -> (f64, f64) {
        let (a, aw) = atoms(row, 1, w, row.len() / 2);
        let direct: f64 = row.iter().zip(w).map(|(&v, w)| w * g(v)).sum();
        let via: f64 = a.iter().zip(aw).map(|(&v, w)| w * g(v)).sum();
        (direct, via)
    }

    #[test]
    fn three_atoms_reproduce_a_rows_moments_zero_to_four() {
        let n = 41;
        let raw: Vec<f64> = (0..n)
            .map(|k| (-0.5 * ((k as f64 - 20.0) * 0.4).powi(2)).exp())
            .collect();
        let total: f64 = raw.iter().sum();
        let w: Vec<f64> = raw.iter().map(|x| x / total).collect();
        let smooth: Vec<f64> = (0..n)
            .map(|k| maj(9)(expit(-1.0 + 0.3 * k as f64 - 6.0)))
            .collect();
        // A step (all mass at two values), a rare tail, and a row that is nearly constant.
        let step: Vec<f64> = (0..n).map(|k| if k < 23 { 0.1 } else { 0.9 }).collect();
        let tail: Vec<f64> = (0..n).map(|k| if k == n - 1 { 1.0 } else { 0.0 }).collect();
        let flat: Vec<f64> = (0..n).map(|k| 0.5 + 1e-9 * (k as f64).sin()).collect();
        for (name, row) in [
            ("smooth", &smooth),
            ("step", &step),
            ("tail", &tail),
            ("flat", &flat),
        ] {
            let m: f64 = row.iter().zip(&w).map(|(v, w)| v * w).sum();
            let scale = row.iter().map(|v| (v - m).abs()).fold(0.0, f64::max);
            for j in 0..=4 {
                // Rounding: of the moments themselves, and of the mean (times j d^(j-1)).
                let (direct, via) = both(row, &w, |v| (v - m).powi(j));
                let tol = 1e-13 * scale.powi(j) + 1e-15 * f64::from(j) * scale.powi(j - 1);
                assert!(
                    (direct - via).abs() <= tol,
                    "{name} j {j}: {direct} vs {via}"
                );
            }
            let (_, aw) = atoms(row, 1, &w, n / 2);
            assert!(aw.iter().all(|&x| x >= -1e-12), "{name}: {aw:?}");
        }
        // A constant row is one atom of weight 1 at the constant, exactly.
        let (a, aw) = atoms(&[0.3; 41], 1, &w, n / 2);
        assert_eq!((a, aw), ([0.3; ATOMS], [1.0, 0.0, 0.0]));
    }

    #[test]
    fn the_step_in_e_leaves_no_aliasing_a_third_of_it_would_find() {
        // E_e[f(expit(y + r e))^j], j <= 4, at the step and at a third of it: the bound of the
        // module doc puts the difference at rounding (a few ulps). At three times the step it
        // is not.
        // Neumaier-compensated sums, so that rounding does not hide an aliasing error.
        fn add((s, c): &mut (f64, f64), x: f64) {
            let t = *s + x;
            *c += if s.abs() >= x.abs() {
                (*s - t) + x
            } else {
                (x - t) + *s
            };
            *s = t;
        }
        let moments = |y: f64, r: f64, h: f64, f: &dyn Fn(f64) -> f64| -> [f64; 4] {
            let half = (RESIDUAL_TAIL / h).ceil() as i64;
            let (mut s, mut total) = ([(0.0, 0.0); 4], (0.0, 0.0));
            for k in -half..=half {
                let e = k as f64 * h;
                let w = (-0.5 * e * e).exp();
                let v = f(expit(y + r * e));
                add(&mut total, w);
                for (j, x) in s.iter_mut().enumerate() {
                    add(x, w * v.powi(j as i32 + 1));
                }
            }
            s.map(|(x, c)| (x + c) / (total.0 + total.1))
        };
        let mut coarse_error = 0.0f64;
        for (r, k) in [(3.0, 64), (3.0, 9), (1.0, 1), (0.01, 1), (0.3, 25)] {
            let f = maj(k);
            let h = residual_step(r, k);
            for y in [-2.0, -0.3, 0.0, 0.7, 3.0] {
                let (at, fine) = (moments(y, r, h, &f), moments(y, r, h / 3.0, &f));
                let coarse = moments(y, r, 3.0 * h, &f);
                for j in 0..4 {
                    let gap = (at[j] - fine[j]).abs();
                    assert!(gap < 1e-15, "r {r} k {k} y {y} j {j}: {at:?} vs {fine:?}");
                    coarse_error = coarse_error.max((coarse[j] - fine[j]).abs());
                }
            }
        }
        assert!(coarse_error > 1e-12, "{coarse_error}");
        // The documented steps.
        assert!((residual_step(0.0, 1) - 0.68).abs() < 0.01);
        assert!((residual_step(1.0, 1) - 0.33).abs() < 0.01);
        assert!((residual_step(3.0, 64) - 0.0276).abs() < 0.0005);
    }

    #[test]
    fn the_lattice_rule_agrees_with_gauss_hermite_where_that_rule_was_accurate() {
        let (mu, sigma, gap) = (0.2, 2.2, 0.3);
        let check = |taus: (f64, f64), k: u32, f: &(dyn Fn(f64) -> f64 + Sync)| {
            let got = PopulationNodes::with_deviations(mu, sigma, gap, taus, k, f).moments();
            let old = gauss_hermite_moments(mu, sigma, gap, taus, f);
            assert_moments_close(&got, &old, 1e-12, &format!("k {k} {taus:?}"));
        };
        for taus in [
            (0.0, 0.5),
            (0.0, 1.5),
            (0.0, 3.0),
            (1.0, 1.0),
            (2.0, 2.0),
            (1.5, 0.0),
        ] {
            check(taus, 1, &|p| p);
        }
        for k in [5, 9] {
            for taus in [(0.0, 1.0), (1.0, 1.0), (2.0, 2.0)] {
                check(taus, k, &maj(k));
            }
        }
    }

    /// The largest relative difference of the seven moments.
    fn worst(got: &PairMoments, want: &PairMoments) -> f64 {
        [
            (got.mean_a, want.mean_a),
            (got.mean_b, want.mean_b),
            (got.mean_pq_a, want.mean_pq_a),
            (got.mean_pq_b, want.mean_pq_b),
            (got.var_a, want.var_a),
            (got.var_b, want.var_b),
            (got.var_diff, want.var_diff),
        ]
        .iter()
        .map(|(x, y)| (x - y).abs() / y.abs())
        .fold(0.0, f64::max)
    }

    #[test]
    fn steep_votes_are_nearer_the_brute_force_than_gauss_hermite_was() {
        // maj@25 and maj@64: Gauss–Hermite's paired variance erred by 1e-10 and more; the
        // lattice rule is within 1e-12 of the structural brute force on every moment.
        let (mu, sigma, gap) = (0.2, 2.2, 0.21);
        for (k, taus) in [(25, (0.0, 1.0)), (25, (2.0, 2.0)), (64, (0.0, 3.0))] {
            let f = maj(k);
            let got = PopulationNodes::with_deviations(mu, sigma, gap, taus, k, f).moments();
            let want = structural_moments(mu, sigma, gap, taus, f);
            let old = gauss_hermite_moments(mu, sigma, gap, taus, f);
            let (new_error, old_error) = (worst(&got, &want), worst(&old, &want));
            assert!(new_error < 1e-12, "maj@{k} {taus:?}: {new_error:e}");
            assert!(old_error > 1e-11, "maj@{k} {taus:?}: {old_error:e}");
        }
    }

    #[test]
    fn degenerate_slopes_and_residuals_equal_the_brute_force() {
        let (mu, gap) = (0.2, 0.3);
        // sigma = 0: every row is the one row of B's logit mu + gap + tau e.
        for (k, tau) in [(1, 1.5), (9, 3.0)] {
            let f = maj(k);
            let m = PopulationNodes::with_shift_sd(mu, 0.0, gap, tau, k, f).moments();
            let mean_b = nested(|_, e| f(expit(mu + gap + tau * e)));
            let var_b = nested(|_, e| (f(expit(mu + gap + tau * e)) - mean_b).powi(2));
            assert!(
                (m.mean_b - mean_b).abs() < 1e-14,
                "{k}: {} {mean_b}",
                m.mean_b
            );
            assert!((m.var_b - var_b).abs() < 1e-14, "{k}: {} {var_b}", m.var_b);
            assert!(
                (m.var_diff - var_b).abs() < 1e-14,
                "{k}: {} {var_b}",
                m.var_diff
            );
        }
        // sigma = 0 and only A deviates: r = 0, B is one value.
        let f = maj(9);
        let got = PopulationNodes::with_deviations(mu, 0.0, gap, (1.0, 0.0), 9, f).moments();
        assert_eq!((got.var_b, got.mean_b), (0.0, f(expit(mu + gap))));
        let want = structural_moments(mu, 0.0, gap, (1.0, 0.0), f);
        assert!((got.var_diff - want.var_diff).abs() < 1e-13 * want.var_diff);
        // A tiny sigma beside a wide residual (rows that do not overlap: the plain product),
        // and a small residual beside a large sigma (a lattice m x finer than A's step).
        for (sigma, taus) in [(1e-4, (0.0, 2.0)), (2.2, (0.0, 0.02)), (8.0, (0.0, 0.05))] {
            let got = PopulationNodes::with_deviations(mu, sigma, gap, taus, 9, f).moments();
            let want = structural_moments(mu, sigma, gap, taus, f);
            assert_moments_close(&got, &want, 1e-12, &format!("sigma {sigma} {taus:?}"));
        }
    }
}
