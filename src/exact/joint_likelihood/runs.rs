//! The likelihood of the joint model (`exact::joint_likelihood`): ln L, its gradient and its
//! Hessian by trapezoid rules on one lattice per model. It is the only one: data with a `run`
//! column give each entry its runs, and pooled counts are one run per entry with no run noise.
//!
//! # The integrals
//!
//! Problem i contributes
//!
//! L_i = E_x[ prod_m E_e[ prod_r J(c_r, mu + shift_m + sigma x + tau_m e, omega_m) ] ],
//! J(c, u, omega) = E_eta[ C(n, c) expit(u + omega eta)^c expit(-(u + omega eta))^(n - c) ],
//!
//! x, e and eta standard normal. J is the inner integral of one count with omega as its spread
//! ([`inner_integral`], a trapezoid rule placed where its integrand lives). The middle
//! integral over e and the outer one over x are trapezoid sums on fixed grids x_k = k h_x and
//! e_j = j h_e, each walked outwards from an analytic guess at its mode until the log-integrand
//! has dropped [`DROP`] below the highest value seen (each log-integrand is concave, Prekopa, so
//! the rest of the tail is bounded; a guess off the mode only costs nodes).
//!
//! # One lattice for every run integral
//!
//! For model m, h_e is chosen so that sigma h_x = L_m delta_m and tau_m h_e = M_m delta_m for
//! whole numbers L_m, M_m: then every logit a run integral is asked for,
//! u = mu + shift_m + sigma x_k + tau_m e_j, is mu + shift_m + delta_m (L_m k + M_m j), a point
//! of one lattice. So J is computed once per (model, distinct run count, lattice point) and
//! shared by every run, entry, problem and outer node that needs it; each middle integral once
//! per (model, distinct list of run counts, k) and shared by the problems with that list. J's
//! own nodes lie on the same lattice when omega_m times its step can be a whole number of
//! lattice steps ([`lattice_integral`]: each run count's kernel once per lattice point, a node a
//! product of two table entries), and a middle node is e^S (cached per lattice point) times the
//! normal density, in log space only when the peak is below `PRODUCT_FLOOR`. On 2 models x 60 problems x
//! 3 runs of 6 samples there are 7 distinct run counts per model. Every table entry is a pure
//! function of its key and every sum is taken in grid order, so the result has the same bits
//! for any thread count.
//!
//! # No run noise: pooled counts
//!
//! With omega_m = 0, J is the binomial itself and the runs of an entry multiply to one
//! binomial kernel in their total count c = sum_r c_r of n = sum_r n_r, times
//! prod_r C(n_r, c_r). Where the layout has no omega ([`JointLayout`]: data without runs,
//! every entry one run) no run integral and no sum S is taken: an entry's middle integral is
//! the inner integral of its total in tau ([`EntryTotal`]: [`lattice_integral`] with the
//! total's kernel on the model's lattice, [`inner_integral`] where that cannot be), and an
//! all-right (all-wrong) count whose kernel is 1 to double precision over the whole normal
//! takes no node at all. The derivatives in omega are then not formed.
//!
//! # The steps
//!
//! Each step is [`trapezoid_step`] for the variable's scale in the logit and a lower bound on
//! its integrand's peak width. The bound comes from the curvature: -d2/du2 ln J is at most
//! n/4 (a binomial's information) and at most 1/omega^2 (J is a log-concave kernel smoothed
//! by a normal of variance omega^2; the curvature of the smoothed log is 1/omega^2 minus a
//! variance over omega^4), so the middle log-integrand has curvature at most
//! 1 + tau^2 sum_r min(n_r/4, 1/omega^2), and each model's middle integral has -d2/d eta2 at
//! most min(that sum, 1/tau^2), and the outer one 1 + sigma^2 times their sum over models. The
//! widths from these bounds are never wider than the true ones, so the rule's error stays at the
//! inner rule's (checked against a dense brute-force integral at the extremes by the tests).
//!
//! # Derivatives
//!
//! Those of the integrals, computed at the nodes of the value: with
//! S(u) = sum_r ln J(c_r, u, omega) and its derivatives S_u, S_w (in omega), S_uu, S_uw, S_ww,
//! the middle integral G(eta, tau, omega) = ln E_e[exp S(eta + tau e)] has, with E the rule's
//! normalised average, A = S_u and C = S_w,
//! G_eta = E[A], G_tau = E[e A], G_omega = E[C],
//! G_eta,eta = E[S_uu + A^2] - E[A]^2, G_eta,tau = E[e (S_uu + A^2)] - E[A] E[e A],
//! G_tau,tau = E[e^2 (S_uu + A^2)] - E[e A]^2, G_eta,omega = E[S_uw + A C] - E[A] E[C],
//! G_tau,omega = E[e (S_uw + A C)] - E[e A] E[C], G_omega,omega = E[S_ww + C^2] - E[C]^2;
//! the outer rule combines them (`moments`), without the omega rows and columns when the
//! layout has none.

use std::collections::HashMap;
use std::sync::Mutex;

use rayon::prelude::*;

use super::moments::{at_absolute_spreads, LazyTable, NodeMoments, RowTerms};
use super::trapezoid::{
    inner_integral, lattice_integral, trapezoid_step, CountKernel, LogitLattice, NormalRule,
    BOUND_DIVISOR, DENSE_REACH, DROP, LN_NORMAL, MAX_NODES, PRODUCT_FLOOR,
};
use super::{ln_binomial, logit_approx, Count, Inner, JointLayout, JointParams, Order};

/// The run counts of per-run data, indexed for the likelihood: per model the distinct run
/// counts, the distinct lists of run counts of an entry, and the distinct rows.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RunIndex {
    /// Per model: distinct run counts with ln C(n, c).
    counts: Vec<Vec<(Count, f64)>>,
    /// Per model: distinct entries, each a list of (index into `counts`, multiplicity).
    entries: Vec<Vec<Vec<(usize, f64)>>>,
    /// Distinct rows: an entry index per model (`None`: the model missed the problem) and the
    /// number of problems with that row.
    rows: Vec<(Vec<Option<usize>>, f64)>,
    /// The distinct row of each problem.
    row_of: Vec<usize>,
}

impl RunIndex {
    /// Indexes per-run counts (validated by the caller): `entry(i, m)` is model m's list of run
    /// counts on problem i (`None`: the model missed it); pooled counts are one run per entry.
    pub(crate) fn new<'a>(
        models: usize,
        problems: usize,
        entry: impl Fn(usize, usize) -> Option<&'a [Count]>,
    ) -> Self {
        let mut counts: Vec<Vec<Count>> = vec![Vec::new(); models];
        for i in 0..problems {
            for (m, list) in counts.iter_mut().enumerate() {
                list.extend(entry(i, m).into_iter().flatten().copied());
            }
        }
        for c in &mut counts {
            c.sort_unstable();
            c.dedup();
        }
        let mut entry_ids: Vec<HashMap<Vec<(usize, usize)>, usize>> = vec![HashMap::new(); models];
        let mut entries: Vec<Vec<Vec<(usize, f64)>>> = vec![Vec::new(); models];
        let mut row_ids: HashMap<Vec<Option<usize>>, usize> = HashMap::new();
        let mut rows: Vec<(Vec<Option<usize>>, f64)> = Vec::new();
        let mut row_of = Vec::with_capacity(problems);
        for i in 0..problems {
            let key: Vec<Option<usize>> = (0..models)
                .map(|m| {
                    entry(i, m).map(|list| {
                        let mut grouped: Vec<(usize, usize)> = Vec::new();
                        let mut idx: Vec<usize> = list
                            .iter()
                            .map(|c| counts[m].binary_search(c).unwrap_or(0))
                            .collect();
                        idx.sort_unstable();
                        for i in idx {
                            match grouped.last_mut() {
                                Some((j, k)) if *j == i => *k += 1,
                                _ => grouped.push((i, 1)),
                            }
                        }
                        let next = entries[m].len();
                        let id = *entry_ids[m].entry(grouped.clone()).or_insert(next);
                        if id == next {
                            entries[m].push(grouped.iter().map(|&(i, k)| (i, k as f64)).collect());
                        }
                        id
                    })
                })
                .collect();
            let next = rows.len();
            let id = *row_ids.entry(key.clone()).or_insert(next);
            if id == next {
                rows.push((key, 0.0));
            }
            rows[id].1 += 1.0;
            row_of.push(id);
        }
        RunIndex {
            counts: counts
                .into_iter()
                .map(|d| {
                    d.into_iter()
                        .map(|c| (c, ln_binomial(c.samples, c.correct)))
                        .collect()
                })
                .collect(),
            entries,
            rows,
            row_of,
        }
    }

    /// The number of problems with each distinct row, in the order of [`runs_log_likelihood`].
    pub(crate) fn multiplicities(&self) -> impl Iterator<Item = f64> + '_ {
        self.rows.iter().map(|r| r.1)
    }

    /// The distinct row of each problem.
    pub(crate) fn row_of(&self) -> &[usize] {
        &self.row_of
    }

    /// The same index with every problem its own row (no grouping of identical rows).
    #[cfg(test)]
    pub(crate) fn ungrouped(&self) -> RunIndex {
        RunIndex {
            rows: self
                .row_of
                .iter()
                .map(|&r| (self.rows[r].0.clone(), 1.0))
                .collect(),
            row_of: (0..self.row_of.len()).collect(),
            ..self.clone()
        }
    }
}

/// One model's middle integral G and its derivatives in eta, tau and omega (module doc).
#[derive(Debug, Clone, Copy, Default)]
struct Middle {
    value: f64,
    d_eta: f64,
    d_tau: f64,
    d_omega: f64,
    /// eta-eta, eta-tau, tau-tau, eta-omega, tau-omega, omega-omega.
    second: [f64; 6],
}

/// A model's lattice: u = base + delta (L k + M j), with `per_outer` = L, the middle rule's
/// `per_inner` = M and step `h_e`; points with |L k + M j| < `reach` are held in tables.
struct Lattice {
    base: f64,
    delta: f64,
    per_outer: i64,
    h_e: f64,
    reach: i64,
    /// The points' logits, with ln p, ln(1 - p) and p.
    logits: LogitLattice,
    /// The rule of the run integrals in eta on the lattice (`None`: omega = 0, or a step below
    /// one lattice step, when each run integral is its own walk).
    run_rule: Option<NormalRule>,
    /// The middle rule: its node j at lattice offset M j, and e^{-e_j^2/2}.
    middle_rule: NormalRule,
}

impl Lattice {
    /// Model m's lattice for outer step `h_x`, given the largest curvature bound of its
    /// entries' S (`bound`, module doc) and its largest run's samples `n_max`.
    fn new(params: &JointParams, m: usize, h_x: f64, bound: f64, n_max: usize) -> Self {
        let tau = params.tau[m];
        let base = params.mu + params.shift[m];
        let outer = params.sigma * h_x;
        let (delta, per_outer, per_inner, h_e) = if tau == 0.0 {
            let per_outer = i64::from(outer > 0.0);
            (if outer > 0.0 { outer } else { 1.0 }, per_outer, 1, 1.0)
        } else {
            let wanted = step(tau, (1.0 + tau * tau * bound).sqrt().recip());
            if outer >= tau * wanted {
                let ratio = (outer / (tau * wanted)).ceil().max(1.0);
                // (a tau so small that L passes 2^40 only loses the sharing)
                let per_outer = ratio.min(1.1e12) as i64;
                let delta = outer / per_outer as f64;
                (delta, per_outer, 1, delta / tau)
            } else if outer > 0.0 {
                // a middle step of several lattice steps
                let per_inner = ((tau * wanted / outer).floor() as i64).max(1);
                (outer, 1, per_inner, per_inner as f64 * outer / tau)
            } else {
                (tau * wanted, 0, 1, wanted)
            }
        };
        let reach = dense_reach(
            per_outer,
            h_x,
            per_inner,
            if tau == 0.0 { 0.0 } else { h_e },
        );
        let omega = params.omega.get(m).copied().unwrap_or(0.0);
        Lattice {
            base,
            delta,
            per_outer,
            h_e,
            reach,
            logits: LogitLattice::new(base, delta, reach),
            run_rule: (omega > 0.0)
                .then(|| NormalRule::on_lattice(omega, n_max, delta))
                .flatten(),
            middle_rule: NormalRule::new(per_inner, h_e),
        }
    }
}

/// Lattice points per side kept dense: those of |x| and |e| up to 14 (where the normal
/// density is below e^-98), at most [`DENSE_REACH`].
fn dense_reach(per_outer: i64, h_x: f64, per_inner: i64, h_e: f64) -> i64 {
    let steps = |h: f64| {
        if h > 0.0 {
            (14.0 / h).ceil().min(1e9) as i64
        } else {
            0
        }
    };
    per_outer
        .saturating_mul(steps(h_x))
        .saturating_add(per_inner.saturating_mul(steps(h_e)))
        .clamp(1, DENSE_REACH)
}

/// The run integrals of one (model, run count), by lattice point: dense near the centre.
struct RunTable {
    /// The run count's kernel on the lattice (with a `run_rule`).
    kernel: Option<CountKernel>,
    dense: LazyTable<Inner>,
    far: Mutex<HashMap<i64, Inner>>,
}

/// Without run noise (omega = 0) the runs of an entry multiply to one binomial kernel in
/// their total count, prod_r C(n_r, c_r) p^c (1 - p)^(n - c), so the entry's middle integral
/// is the inner integral of that total ([`lattice_integral`], [`inner_integral`]) and no run
/// integral is taken: pooled counts are this case with one run per entry.
struct EntryTotal {
    count: Count,
    /// sum_r ln C(n_r, c_r).
    ln_choose: f64,
    /// The total's kernel on the model's lattice (when tau > 0).
    kernel: Option<CountKernel>,
}

impl EntryTotal {
    fn new(index: &RunIndex, m: usize, list: &[(usize, f64)], lattice: &Lattice, tau: f64) -> Self {
        let (mut correct, mut samples, mut ln_choose) = (0, 0, 0.0);
        for &(c, mult) in list {
            let (count, ln_c) = index.counts[m][c];
            let times = mult as usize;
            correct += times * count.correct;
            samples += times * count.samples;
            ln_choose += mult * ln_c;
        }
        let count = Count::new(correct, samples);
        EntryTotal {
            count,
            ln_choose,
            kernel: (tau > 0.0).then(|| CountKernel::new(count, &lattice.logits)),
        }
    }
}

/// Everything one evaluation computes on demand and shares.
struct Tables<'a> {
    index: &'a RunIndex,
    params: &'a JointParams,
    order: Order,
    h_x: f64,
    lattices: Vec<Lattice>,
    runs: Vec<Vec<RunTable>>,
    /// S of each (model, entry) by lattice point (value, A, C, S_uu, S_uw, S_ww, e^S), dense
    /// within the lattice's reach.
    sums: Vec<Vec<LazyTable<[f64; 7]>>>,
    /// Each (model, entry)'s middle integral by outer index k, dense for |k| < `outer_reach`.
    middles: Vec<Vec<LazyTable<Middle>>>,
    /// Without run noise in the layout: each (model, entry)'s total count ([`EntryTotal`]).
    totals: Option<Vec<Vec<EntryTotal>>>,
}

impl Tables<'_> {
    fn omega(&self, m: usize) -> f64 {
        self.params.omega.get(m).copied().unwrap_or(0.0)
    }

    /// J of model m's run count `c` at lattice point `i`.
    fn run(&self, m: usize, c: usize, i: i64) -> Inner {
        let table = &self.runs[m][c];
        let compute = || {
            let (count, ln_choose) = self.index.counts[m][c];
            let l = &self.lattices[m];
            let omega = self.omega(m);
            let on_lattice = match (&l.run_rule, &table.kernel) {
                (Some(rule), Some(kernel)) => {
                    lattice_integral(kernel, ln_choose, &l.logits, rule, i, omega, self.order)
                }
                _ => None,
            };
            on_lattice.unwrap_or_else(|| {
                inner_integral(count, ln_choose, l.logits.logit(i), omega, self.order)
            })
        };
        if table.dense.holds(i) {
            return table.dense.get(i, compute);
        }
        if let Some(v) = table.far.lock().ok().and_then(|t| t.get(&i).copied()) {
            return v;
        }
        let v = compute();
        if let Ok(mut t) = table.far.lock() {
            t.insert(i, v);
        }
        v
    }

    /// S(u) of entry `e` of model m at lattice point `i`: value, A, C, S_uu, S_uw, S_ww.
    fn entry_sum(&self, m: usize, e: usize, i: i64) -> [f64; 7] {
        self.sums[m][e].get(i, || self.compute_entry_sum(m, e, i))
    }

    fn compute_entry_sum(&self, m: usize, e: usize, i: i64) -> [f64; 7] {
        let mut s = [0.0; 7];
        for &(c, mult) in &self.index.entries[m][e] {
            let j = self.run(m, c, i);
            s[0] += mult * j.value;
            s[1] += mult * j.d_eta;
            s[2] += mult * j.d_tau;
            s[3] += mult * j.d_eta2;
            s[4] += mult * j.d_eta_tau;
            s[5] += mult * j.d_tau2;
        }
        s[6] = s[0].exp();
        s
    }

    fn middle(&self, m: usize, e: usize, k: i64) -> Middle {
        self.middles[m][e].get(k, || self.compute_middle(m, e, k))
    }

    fn compute_middle(&self, m: usize, e: usize, k: i64) -> Middle {
        if let Some(totals) = &self.totals {
            return self.total_middle(m, &totals[m][e], k);
        }
        let l = &self.lattices[m];
        let centre = l.per_outer * k;
        let tau = self.params.tau[m];
        if tau == 0.0 {
            let s = self.entry_sum(m, e, centre);
            return Middle {
                value: s[0],
                d_eta: s[1],
                d_tau: 0.0,
                d_omega: s[2],
                second: [s[3], 0.0, s[3] + s[1] * s[1], s[4], 0.0, s[5]],
            };
        }
        // analytic guess at the mode: each run's normal approximation, widened by omega^2
        let omega = self.omega(m);
        let (mut num, mut prec) = (0.0, 0.0);
        for &(c, mult) in &self.index.entries[m][e] {
            let (centre, w) = logit_approx(self.index.counts[m][c].0);
            let w = mult * w / (1.0 + omega * omega * w);
            num += w * centre;
            prec += w;
        }
        let eta = l.base + l.delta * centre as f64;
        let guess = if prec > 0.0 {
            tau * prec * (num / prec - eta) / (1.0 + tau * tau * prec)
        } else {
            0.0
        };
        let j0 = (guess / l.h_e).round() as i64;
        // one pass: the nodes summed as products e^S e^{-e^2/2} of the tables while the peak
        // stays above PRODUCT_FLOOR; else again, relative to the highest value so far,
        // rescaled when it rises (right of the guess outwards, then left)
        let walk = |product: bool| -> ([f64; 10], f64) {
            let mut sums = [0.0f64; 10];
            let mut peak = f64::NEG_INFINITY;
            for dir in [1i64, -1] {
                let mut j = if dir > 0 { j0 } else { j0 - 1 };
                while (j - j0).abs() < MAX_NODES {
                    let s = self.entry_sum(m, e, centre + l.middle_rule.per_inner * j);
                    let ej = j as f64 * l.h_e;
                    let v = s[0] - 0.5 * ej * ej;
                    if !v.is_finite() || v < peak - DROP {
                        break;
                    }
                    let w = if product {
                        peak = peak.max(v);
                        s[6] * l.middle_rule.gauss(j)
                    } else {
                        if v > peak {
                            let scale = (peak - v).exp();
                            sums.iter_mut().for_each(|x| *x *= scale);
                            peak = v;
                        }
                        (v - peak).exp()
                    };
                    sums[0] += w;
                    if self.order >= Order::Gradient {
                        let (a, c) = (s[1], s[2]);
                        sums[1] += w * a;
                        sums[2] += w * a * ej;
                        sums[3] += w * c;
                        if self.order == Order::Hessian {
                            let t1 = s[3] + a * a;
                            let t2 = s[4] + a * c;
                            sums[4] += w * t1;
                            sums[5] += w * t1 * ej;
                            sums[6] += w * t1 * ej * ej;
                            sums[7] += w * t2;
                            sums[8] += w * t2 * ej;
                            sums[9] += w * (s[5] + c * c);
                        }
                    }
                    j += dir;
                }
            }
            (sums, peak)
        };
        let (mut sums, mut peak) = walk(true);
        let mut offset = 0.0;
        if !(peak >= PRODUCT_FLOOR && sums[0] > 0.0 && sums[0].is_finite()) {
            (sums, peak) = walk(false);
            offset = peak;
        }
        if !peak.is_finite() {
            return Middle {
                value: f64::NEG_INFINITY,
                ..Middle::default()
            };
        }
        let total = sums[0];
        let (a, b, c) = (sums[1] / total, sums[2] / total, sums[3] / total);
        Middle {
            value: l.h_e.ln() + LN_NORMAL + offset + total.ln(),
            d_eta: a,
            d_tau: b,
            d_omega: c,
            second: [
                sums[4] / total - a * a,
                sums[5] / total - a * b,
                sums[6] / total - b * b,
                sums[7] / total - a * c,
                sums[8] / total - b * c,
                sums[9] / total - c * c,
            ],
        }
    }
}

impl Tables<'_> {
    /// The middle integral of an entry without run noise at outer index k: the inner integral
    /// of its total count ([`EntryTotal`]), on the lattice when it can be.
    fn total_middle(&self, m: usize, total: &EntryTotal, k: i64) -> Middle {
        let l = &self.lattices[m];
        let at = l.per_outer * k;
        let tau = self.params.tau[m];
        let on_lattice = total.kernel.as_ref().and_then(|kernel| {
            lattice_integral(
                kernel,
                total.ln_choose,
                &l.logits,
                &l.middle_rule,
                at,
                tau,
                self.order,
            )
        });
        let inner = on_lattice.unwrap_or_else(|| {
            inner_integral(
                total.count,
                total.ln_choose,
                l.logits.logit(at),
                tau,
                self.order,
            )
        });
        Middle {
            value: inner.value,
            d_eta: inner.d_eta,
            d_tau: inner.d_tau,
            d_omega: 0.0,
            second: [inner.d_eta2, inner.d_eta_tau, inner.d_tau2, 0.0, 0.0, 0.0],
        }
    }
}

/// The middle and outer steps: [`trapezoid_step`]'s strip bound, and the width bound over
/// [`BOUND_DIVISOR`] (a normal peak's trapezoid error is then 2 e^{-2 pi^2 1.5^2} = 1.0e-19
/// relative; the bound is below the true width, so the error is smaller still).
fn step(scale: f64, width: f64) -> f64 {
    trapezoid_step(scale, f64::INFINITY).min(width / BOUND_DIVISOR)
}

/// Upper bound on -d2/du2 ln J of a run of n samples at noise omega (module doc).
fn run_curvature(n: usize, omega: f64) -> f64 {
    let binomial = 0.25 * n as f64;
    if omega > 0.0 {
        binomial.min(1.0 / (omega * omega))
    } else {
        binomial
    }
}

/// Per distinct row ([`RunIndex`] order): ln L_i, and with `order` Gradient or Hessian its
/// gradient in `layout` (omega's entries only when the layout has run noise; without, omega
/// is 0) and Hessian (row-major P x P).
pub(crate) fn runs_log_likelihood(
    index: &RunIndex,
    params: &JointParams,
    layout: JointLayout,
    order: Order,
) -> Vec<RowTerms> {
    // ln L is even in each spread: evaluate at |spread| and turn the derivatives' signs back
    let models = index.counts.len();
    let params = JointParams {
        omega: if layout.has_run_noise() {
            (0..models)
                .map(|m| params.omega.get(m).copied().unwrap_or(0.0))
                .collect()
        } else {
            Vec::new()
        },
        ..params.clone()
    };
    at_absolute_spreads(&params, |p| runs_at_absolute(index, p, layout, order))
}

/// [`runs_log_likelihood`] at spreads that are all at least 0.
fn runs_at_absolute(
    index: &RunIndex,
    params: &JointParams,
    layout: JointLayout,
    order: Order,
) -> Vec<RowTerms> {
    let models = index.counts.len();
    let omega = |m: usize| params.omega.get(m).copied().unwrap_or(0.0);
    // curvature bounds: of each entry's S, and of each row's outer log-integrand
    let entry_bound: Vec<Vec<f64>> = (0..models)
        .map(|m| {
            index.entries[m]
                .iter()
                .map(|list| {
                    list.iter()
                        .map(|&(c, mult)| {
                            mult * run_curvature(index.counts[m][c].0.samples, omega(m))
                        })
                        .sum()
                })
                .collect()
        })
        .collect();
    let outer_precision = index
        .rows
        .iter()
        .map(|(row, _)| {
            let mut total = 0.0;
            for (m, e) in row.iter().enumerate() {
                if let Some(e) = *e {
                    let tau = params.tau[m];
                    let b = entry_bound[m][e];
                    total += if tau > 0.0 {
                        b.min(1.0 / (tau * tau))
                    } else {
                        b
                    };
                }
            }
            1.0 + params.sigma * params.sigma * total
        })
        .fold(1.0f64, f64::max);
    let h_x = step(params.sigma, outer_precision.sqrt().recip());
    let outer_reach = dense_reach(1, h_x, 1, 0.0);
    let lattices: Vec<Lattice> = (0..models)
        .map(|m| {
            let bound = entry_bound[m].iter().copied().fold(0.0f64, f64::max);
            let n_max = index.counts[m].iter().map(|c| c.0.samples).max();
            Lattice::new(params, m, h_x, bound, n_max.unwrap_or(1))
        })
        .collect();
    // without run noise no run integral or entry sum is taken (each entry is its total)
    let run_noise = layout.has_run_noise();
    let reach = |l: &Lattice| if run_noise { l.reach } else { 0 };
    let totals = (!run_noise).then(|| {
        (0..models)
            .map(|m| {
                let tau = params.tau[m];
                let entries = index.entries[m].iter();
                entries
                    .map(|list| EntryTotal::new(index, m, list, &lattices[m], tau))
                    .collect()
            })
            .collect()
    });
    let tables = Tables {
        index,
        params,
        order,
        h_x,
        totals,
        runs: index
            .counts
            .iter()
            .zip(&lattices)
            .map(|(d, l)| {
                d.iter()
                    .map(|&(c, _)| RunTable {
                        kernel: l.run_rule.as_ref().map(|_| CountKernel::new(c, &l.logits)),
                        dense: LazyTable::new(reach(l)),
                        far: Mutex::new(HashMap::new()),
                    })
                    .collect()
            })
            .collect(),
        sums: index
            .entries
            .iter()
            .zip(&lattices)
            .map(|(d, l)| d.iter().map(|_| LazyTable::new(reach(l))).collect())
            .collect(),
        middles: index
            .entries
            .iter()
            .map(|d| d.iter().map(|_| LazyTable::new(outer_reach)).collect())
            .collect(),
        lattices,
    };
    index
        .rows
        .par_iter()
        .with_min_len(4)
        .map(|(row, _)| row_log_likelihood(&tables, row, layout))
        .collect()
}

/// ln L_i of one distinct row, with its gradient and Hessian as the tables' order asks.
fn row_log_likelihood(tables: &Tables<'_>, row: &[Option<usize>], layout: JointLayout) -> RowTerms {
    let p = layout.len();
    let (params, index, order, h_x) = (tables.params, tables.index, tables.order, tables.h_x);
    let models = row.len();
    // analytic guess at the mode: each run's normal approximation, widened by omega^2 and tau^2
    let (mut num, mut precision) = (0.0, 1.0);
    for (m, e) in row.iter().enumerate() {
        if let Some(e) = *e {
            let omega = tables.omega(m);
            let (mut cn, mut cw) = (0.0, 0.0);
            for &(c, mult) in &index.entries[m][e] {
                let (centre, w) = logit_approx(index.counts[m][c].0);
                let w = mult * w / (1.0 + omega * omega * w);
                cn += w * centre;
                cw += w;
            }
            let tau = params.tau[m];
            let w = cw / (1.0 + tau * tau * cw);
            num += params.sigma * w * (cn / cw - params.mu - params.shift[m]);
            precision += params.sigma * params.sigma * w;
        }
    }
    let k0 = (num / precision / h_x).round() as i64;
    // per node (x, g), and (unless only the value is asked) every model's middle integral,
    // `models` per node in `terms`
    let keep = order != Order::Value;
    let mut nodes: Vec<(f64, f64)> = Vec::new();
    let mut terms: Vec<Middle> = Vec::new();
    let mut peak = f64::NEG_INFINITY;
    let mut right = 0;
    for dir in [1i64, -1] {
        let mut k = if dir > 0 { k0 } else { k0 - 1 };
        while (k - k0).abs() < MAX_NODES {
            let x = k as f64 * h_x;
            let mut g = -0.5 * x * x;
            let start = terms.len();
            for (m, e) in row.iter().enumerate() {
                let t = match e {
                    Some(e) => tables.middle(m, *e, k),
                    None => Middle::default(),
                };
                g += t.value;
                if keep {
                    terms.push(t);
                }
            }
            if !g.is_finite() || g < peak - DROP {
                terms.truncate(start);
                break;
            }
            peak = peak.max(g);
            nodes.push((x, g));
            k += dir;
        }
        if dir > 0 {
            right = nodes.len();
        }
    }
    if !peak.is_finite() {
        return (f64::NEG_INFINITY, vec![0.0; p], vec![0.0; p * p]);
    }
    // ascending x: the left side reversed, then the right side
    let ordered: Vec<usize> = (right..nodes.len()).rev().chain(0..right).collect();
    let weights: Vec<f64> = ordered.iter().map(|&n| (nodes[n].1 - peak).exp()).collect();
    let total: f64 = weights.iter().sum();
    let value = h_x.ln() + LN_NORMAL + peak + total.ln();
    if order == Order::Value {
        return (value, Vec::new(), Vec::new());
    }
    let mut moments = NodeMoments::new(p, order == Order::Hessian);
    for (&n, w) in ordered.iter().zip(&weights) {
        let (w, x) = (w / total, nodes[n].0);
        let terms = &terms[n * models..(n + 1) * models];
        moments.start();
        for (m, entry) in row.iter().enumerate() {
            if entry.is_none() {
                continue;
            }
            let s = &terms[m];
            let [ee, et, tt, eo, to, oo] = s.second;
            match layout.omega(m) {
                Some(omega) => moments.add_model(
                    w,
                    x,
                    layout.shift(m),
                    &[layout.tau(m), omega],
                    &[s.d_eta, s.d_tau, s.d_omega],
                    &[ee, et, eo, et, tt, to, eo, to, oo],
                ),
                None => moments.add_model(
                    w,
                    x,
                    layout.shift(m),
                    &[layout.tau(m)],
                    &[s.d_eta, s.d_tau],
                    &[ee, et, et, tt],
                ),
            }
        }
        moments.end(w);
    }
    let (grad, hess) = moments.finish();
    (value, grad, hess)
}

#[cfg(test)]
mod tests;
