//! The pooled-count likelihood as it was computed before pooled counts went through the runs
//! likelihood (`runs`) as one run per entry with no run noise: an independent implementation
//! (inner integrals by count and outer node, mode-placed walks off the lattice) kept to check
//! the one likelihood against on data sets too large for the brute force.

use std::collections::HashMap;
use std::sync::Mutex;

use rayon::prelude::*;

use super::moments::{at_absolute_spreads, LazyTable, NodeMoments, RowTerms};
use super::trapezoid::{
    inner_integral, inner_step, lattice_integral, sds_in_steps, trapezoid_step, CountKernel,
    LogitLattice, NormalRule, BOUND_DIVISOR, DENSE_REACH, DROP, LN_NORMAL, MAX_NODES,
};
use super::{ln_binomial, logit_approx, Count, Inner, JointData, JointParams, Order};

/// Pooled counts indexed as the old path indexed them: distinct counts per model with
/// ln C(n, c), and distinct rows as indices into them with multiplicities.
struct Pooled {
    models: usize,
    distinct: Vec<Vec<Count>>,
    ln_choose: Vec<Vec<f64>>,
    patterns: Vec<(Vec<Option<usize>>, f64)>,
}

impl Pooled {
    fn new(data: &JointData) -> Self {
        let models = data.models();
        let mut distinct: Vec<Vec<Count>> = vec![Vec::new(); models];
        for row in data.rows() {
            for (m, entry) in row.iter().enumerate() {
                distinct[m].extend(entry);
            }
        }
        for d in &mut distinct {
            d.sort_unstable();
            d.dedup();
        }
        let ln_choose = distinct
            .iter()
            .map(|d| {
                d.iter()
                    .map(|c| ln_binomial(c.samples, c.correct))
                    .collect()
            })
            .collect();
        let mut map: std::collections::BTreeMap<Vec<Option<usize>>, f64> = Default::default();
        for row in data.rows() {
            *map.entry(Self::pattern(&distinct, row)).or_default() += 1.0;
        }
        Pooled {
            models,
            distinct,
            ln_choose,
            patterns: map.into_iter().collect(),
        }
    }

    fn pattern(distinct: &[Vec<Count>], row: &[Option<Count>]) -> Vec<Option<usize>> {
        row.iter()
            .enumerate()
            .map(|(m, e)| e.map(|c| distinct[m].binary_search(&c).unwrap_or(0)))
            .collect()
    }

    fn models(&self) -> usize {
        self.models
    }
}

/// ln L, its gradient and Hessian (row-major; layout mu, sigma, shift_0.., tau_0..) of pooled
/// data by the old path: distinct rows times their multiplicities.
pub(crate) fn pooled_totals(
    data: &JointData,
    params: &JointParams,
    order: Order,
) -> (f64, Vec<f64>, Vec<f64>) {
    let pooled = Pooled::new(data);
    let terms = rows_log_likelihood(&pooled, &pooled.patterns, params, order);
    sum_terms(&terms, pooled.patterns.iter().map(|p| p.1))
}

fn sum_terms(terms: &[RowTerms], mult: impl Iterator<Item = f64>) -> (f64, Vec<f64>, Vec<f64>) {
    let (p, hp) = terms.first().map_or((0, 0), |t| (t.1.len(), t.2.len()));
    let (mut v, mut g, mut h) = (0.0, vec![0.0; p], vec![0.0; hp]);
    for ((tv, tg, th), k) in terms.iter().zip(mult) {
        v += k * tv;
        g.iter_mut().zip(tg).for_each(|(a, b)| *a += k * b);
        h.iter_mut().zip(th).for_each(|(a, b)| *a += k * b);
    }
    (v, g, h)
}

/// Largest number of lattice points per outer step for which a model's inner integrals are
/// taken on its lattice; beyond (a shift_sd far below sigma times the outer step), each inner
/// integral is its own trapezoid walk ([`inner_integral`]).
const MAX_PER_OUTER: i64 = 16;

/// Upper bound on -d2/d eta2 of a count's inner log-integral: a binomial's information n/4,
/// and 1/tau^2 (a log-concave kernel smoothed by a normal of variance tau^2).
fn inner_curvature(n: usize, tau: f64) -> f64 {
    let binomial = 0.25 * n as f64;
    if tau > 0.0 {
        binomial.min(1.0 / (tau * tau))
    } else {
        binomial
    }
}

/// One model's lattice on the pooled path: outer node k (x_k = k h_x) and inner node j meet
/// at point per_outer k + per_inner j, so that each count's kernel is computed once per
/// lattice point and shared by every outer node.
struct Lattice {
    logits: LogitLattice,
    per_outer: i64,
    rule: NormalRule,
}

impl Lattice {
    /// The lattice of a model with logit base `base`, disagreement `tau` > 0 and largest
    /// count size `n_max`, for outer steps of `outer` = sigma h_x in the logit (module doc);
    /// `None` when it would need more than [`MAX_PER_OUTER`] points per outer step.
    fn new(base: f64, tau: f64, n_max: usize, outer: f64, h_x: f64) -> Option<Lattice> {
        let inner = tau * inner_step(tau, n_max);
        let (per_outer, per_inner, delta) = if outer <= 0.0 {
            (0, 1, inner)
        } else if outer >= inner {
            let ratio = (outer / inner).ceil();
            if ratio > MAX_PER_OUTER as f64 {
                return None;
            }
            (ratio as i64, 1, outer / ratio)
        } else {
            (1, ((inner / outer).floor() as i64).max(1), outer)
        };
        let rule = NormalRule::new(per_inner, per_inner as f64 * delta / tau);
        let reach = per_outer
            .saturating_mul(sds_in_steps(h_x))
            .saturating_add(per_inner.saturating_mul(sds_in_steps(rule.h)))
            .clamp(1, DENSE_REACH);
        Some(Lattice {
            logits: LogitLattice::new(base, delta, reach),
            per_outer,
            rule,
        })
    }
}

/// Everything one evaluation of the pooled likelihood computes on demand and shares: per
/// model its lattice, per (model, distinct count) the log kernel, the kernel and p by
/// lattice point, and the inner integrals by outer index k.
struct Tables<'a> {
    data: &'a Pooled,
    params: &'a JointParams,
    order: Order,
    step: f64,
    /// First table of each model (tables of model m are `first[m] + distinct index`).
    first: Vec<usize>,
    lattices: Vec<Option<Lattice>>,
    kernels: Vec<Option<CountKernel>>,
    inners: Vec<LazyTable<Inner>>,
    far: Vec<Mutex<HashMap<i64, Inner>>>,
}

impl Tables<'_> {
    fn get(&self, m: usize, d: usize, k: i64) -> Inner {
        let slot = self.first[m] + d;
        if self.inners[slot].holds(k) {
            return self.inners[slot].get(k, || self.compute(m, d, k));
        }
        if let Some(v) = self.far[slot].lock().ok().and_then(|t| t.get(&k).copied()) {
            return v;
        }
        let v = self.compute(m, d, k);
        if let Ok(mut t) = self.far[slot].lock() {
            t.insert(k, v);
        }
        v
    }

    fn compute(&self, m: usize, d: usize, k: i64) -> Inner {
        let x = k as f64 * self.step;
        let eta = self.params.mu + self.params.sigma * x + self.params.shift[m];
        let (c, ln_choose, tau) = (
            self.data.distinct[m][d],
            self.data.ln_choose[m][d],
            self.params.tau[m],
        );
        let on_lattice = match (&self.lattices[m], &self.kernels[self.first[m] + d]) {
            (Some(l), Some(kernel)) => lattice_integral(
                kernel,
                ln_choose,
                &l.logits,
                &l.rule,
                l.per_outer * k,
                tau,
                self.order,
            ),
            _ => None,
        };
        on_lattice.unwrap_or_else(|| inner_integral(c, ln_choose, eta, tau, self.order))
    }
}

/// Per-row ln L_i, and with `order` Gradient or Hessian the row's gradient
/// (layout mu, sigma, shift_0.., tau_0..) and Hessian (row-major, P = 2 + 2M), for every
/// (pattern, multiplicity) given; the rows' results in the order given.
fn rows_log_likelihood(
    data: &Pooled,
    patterns: &[(Vec<Option<usize>>, f64)],
    params: &JointParams,
    order: Order,
) -> Vec<RowTerms> {
    at_absolute_spreads(params, |p| rows_at_absolute(data, patterns, p, order))
}

/// [`rows_log_likelihood`] at spreads that are all at least 0.
fn rows_at_absolute(
    data: &Pooled,
    patterns: &[(Vec<Option<usize>>, f64)],
    params: &JointParams,
    order: Order,
) -> Vec<RowTerms> {
    let models = data.models();
    // the outer step: the strip bound, and the narrowest row's width bound (each count's
    // inner log-integral curves by at most inner_curvature in eta)
    let curvature: Vec<Vec<f64>> = (0..models)
        .map(|m| {
            data.distinct[m]
                .iter()
                .map(|c| inner_curvature(c.samples, params.tau[m]))
                .collect()
        })
        .collect();
    let precision = patterns
        .iter()
        .map(|(pattern, _)| {
            let sum: f64 = pattern
                .iter()
                .enumerate()
                .filter_map(|(m, d)| d.map(|d| curvature[m][d]))
                .sum();
            1.0 + params.sigma * params.sigma * sum
        })
        .fold(1.0f64, f64::max);
    let step =
        trapezoid_step(params.sigma, f64::INFINITY).min(precision.sqrt().recip() / BOUND_DIVISOR);
    let mut first = Vec::with_capacity(models);
    let mut count = 0;
    for m in 0..models {
        first.push(count);
        count += data.distinct[m].len();
    }
    let lattices: Vec<Option<Lattice>> = (0..models)
        .map(|m| {
            let tau = params.tau[m];
            let n_max = data.distinct[m].iter().map(|c| c.samples).max()?;
            if tau > 0.0 {
                let base = params.mu + params.shift[m];
                Lattice::new(base, tau, n_max, params.sigma * step, step)
            } else {
                None
            }
        })
        .collect();
    let kernels = (0..models)
        .flat_map(|m| {
            let lattice = lattices[m].as_ref();
            data.distinct[m]
                .iter()
                .map(move |&c| lattice.map(|l| CountKernel::new(c, &l.logits)))
        })
        .collect();
    let outer_reach = (sds_in_steps(step) + 1).min(DENSE_REACH);
    let tables = Tables {
        data,
        params,
        order,
        step,
        first,
        lattices,
        kernels,
        inners: (0..count).map(|_| LazyTable::new(outer_reach)).collect(),
        far: (0..count).map(|_| Mutex::new(HashMap::new())).collect(),
    };
    let p = 2 + 2 * models;
    patterns
        .par_iter()
        .with_min_len(4)
        .map(|(pattern, _)| row_log_likelihood(&tables, pattern, p))
        .collect()
}

/// ln L_i of one distinct row, with its gradient and Hessian as the tables' order asks: the
/// outer rule walked out from an analytic guess at the mode (each count's normal
/// approximation, widened by tau_m^2).
fn row_log_likelihood(tables: &Tables<'_>, pattern: &[Option<usize>], p: usize) -> RowTerms {
    let (params, data, step, order) = (tables.params, tables.data, tables.step, tables.order);
    let models = pattern.len();
    let (mut num, mut precision) = (0.0, 1.0);
    for (m, d) in pattern.iter().enumerate() {
        if let Some(d) = d {
            let (centre, w) = logit_approx(data.distinct[m][*d]);
            let tau = params.tau[m];
            let w = w / (1.0 + tau * tau * w);
            num += params.sigma * w * (centre - params.mu - params.shift[m]);
            precision += params.sigma * params.sigma * w;
        }
    }
    let k0 = (num / precision / step).round() as i64;
    // per node: k, g, and the present models' inner integrals in `inners`
    let mut nodes: Vec<(i64, f64)> = Vec::new();
    let mut inners: Vec<Inner> = Vec::new();
    let mut peak = f64::NEG_INFINITY;
    let mut right = 0;
    for dir in [1i64, -1] {
        let mut k = if dir > 0 { k0 } else { k0 - 1 };
        while (k - k0).abs() < MAX_NODES {
            let x = k as f64 * step;
            let mut g = -0.5 * x * x;
            for (m, d) in pattern.iter().enumerate() {
                if let Some(d) = d {
                    let v = tables.get(m, *d, k);
                    g += v.value;
                    inners.push(v);
                }
            }
            if !g.is_finite() || g < peak - DROP {
                let present = pattern.iter().flatten().count();
                inners.truncate(inners.len() - present);
                break;
            }
            peak = peak.max(g);
            nodes.push((k, g));
            k += dir;
        }
        if dir > 0 {
            right = nodes.len();
        }
    }
    if !peak.is_finite() {
        return (f64::NEG_INFINITY, vec![0.0; p], vec![0.0; p * p]);
    }
    let present = pattern.iter().flatten().count();
    // ascending k: the left side reversed, then the right side
    let ordered: Vec<usize> = (right..nodes.len()).rev().chain(0..right).collect();
    let weights: Vec<f64> = ordered.iter().map(|&n| (nodes[n].1 - peak).exp()).collect();
    let total: f64 = weights.iter().sum();
    let value = step.ln() + LN_NORMAL + peak + total.ln();
    if order == Order::Value {
        return (value, Vec::new(), Vec::new());
    }
    let mut moments = NodeMoments::new(p, order == Order::Hessian);
    for (&n, w) in ordered.iter().zip(&weights) {
        let w = w / total;
        let x = nodes[n].0 as f64 * step;
        moments.start();
        let terms = &inners[n * present..(n + 1) * present];
        let mut t = terms.iter();
        for (m, d) in pattern.iter().enumerate() {
            if d.is_none() {
                continue;
            }
            let s = t.next().copied().unwrap_or_default();
            moments.add_model(
                w,
                x,
                2 + m,
                &[2 + models + m],
                &[s.d_eta, s.d_tau],
                &[s.d_eta2, s.d_eta_tau, s.d_eta_tau, s.d_tau2],
            );
        }
        moments.end(w);
    }
    let (grad, hess) = moments.finish();
    (value, grad, hess)
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_distr::{Binomial, Distribution, StandardNormal};
    use rand_xoshiro::Xoshiro256PlusPlus;

    use super::*;
    use crate::exact::joint_likelihood::totals;

    /// Counts drawn from the joint model: `samples` per entry, each entry missing with
    /// probability `missing` (the first model never misses).
    fn simulate(
        seed: u64,
        problems: usize,
        samples: u64,
        (sigma, shift, tau): (f64, &[f64], &[f64]),
        missing: f64,
    ) -> JointData {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let rows = (0..problems)
            .map(|_| {
                let z: f64 = sigma * rng.sample::<f64, _>(StandardNormal);
                (0..shift.len())
                    .map(|m| {
                        let e: f64 = rng.sample(StandardNormal);
                        let p = 1.0 / (1.0 + (-(z + shift[m] + tau[m] * e)).exp());
                        let c = Binomial::new(samples, p).unwrap().sample(&mut rng);
                        let gone = m > 0 && rng.random::<f64>() < missing;
                        (!gone).then_some(Count::new(c as usize, samples as usize))
                    })
                    .collect()
            })
            .collect();
        JointData::new(shift.len(), rows).unwrap()
    }

    /// The HumanEval fixture of the fit tests (164 problems x 10 samples, one model).
    fn humaneval() -> JointData {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/fit/humaneval_164.jsonl"
        );
        let text = std::fs::read_to_string(path).unwrap();
        let mut counts: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
        for line in text.lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let entry = counts.entry(v["task_id"].as_str().unwrap().to_string());
            let c = entry.or_default();
            c.0 += usize::from(v["passed"].as_bool().unwrap());
            c.1 += 1;
        }
        let rows = counts
            .values()
            .map(|&(c, n)| vec![Some(Count::new(c, n))])
            .collect();
        JointData::new(1, rows).unwrap()
    }

    /// Largest |a - b| over max(|b|, the largest |b|), the relative difference of a vector.
    fn worst(a: &[f64], b: &[f64]) -> f64 {
        assert_eq!(a.len(), b.len());
        let scale = b.iter().fold(0.0f64, |s, x| s.max(x.abs()));
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs() / y.abs().max(scale).max(f64::MIN_POSITIVE))
            .fold(0.0, f64::max)
    }

    fn params(mu: f64, sigma: f64, shift: &[f64], tau: &[f64]) -> JointParams {
        JointParams {
            mu,
            sigma,
            shift: shift.to_vec(),
            tau: tau.to_vec(),
            omega: Vec::new(),
        }
    }

    /// Pooled counts go through the runs likelihood as one run per entry with no run noise:
    /// its ln L, gradient and Hessian are the separate pooled-count likelihood's to 1e-9
    /// relative on the fit's test data (the HumanEval fixture, a code benchmark at sigma 12,
    /// 50 models with missing entries, counts of 64 samples), at the truth, away from it and
    /// with a shift_sd at 0.
    #[test]
    fn pooled_counts_as_one_run_per_entry_give_the_pooled_likelihood() {
        let shifts: Vec<f64> = (0..50).map(|m| -2.0 + 4.0 * m as f64 / 49.0).collect();
        let taus: Vec<f64> = (0..50).map(|m| 0.3 + 0.5 * (m % 7) as f64 / 6.0).collect();
        let mut zero_tau = taus.clone();
        zero_tau[3] = 0.0;
        let cases: Vec<(&str, JointData, Vec<JointParams>)> = vec![
            (
                "HumanEval 164 x 10",
                humaneval(),
                vec![
                    params(1.1, 2.0, &[0.0], &[0.0]),
                    params(0.5, 4.0, &[0.0], &[1.5]),
                ],
            ),
            (
                "code benchmark 800 x 2 x 10",
                simulate(36, 800, 10, (12.0, &[0.0, 0.8], &[4.0, 2.5]), 0.0),
                vec![
                    params(0.0, 12.0, &[0.0, 0.8], &[4.0, 2.5]),
                    params(1.0, 14.0, &[0.0, 0.5], &[7.0, 0.0]),
                ],
            ),
            (
                "50 models x 200 x 10, missing entries",
                simulate(3, 200, 10, (1.5, &shifts, &taus), 0.1),
                vec![
                    params(-0.2, 1.5, &shifts, &taus),
                    params(0.3, 1.1, &shifts, &zero_tau),
                ],
            ),
            (
                "3 models x 300 x 64",
                simulate(5, 300, 64, (1.5, &[0.0, -0.4, 0.3], &[0.5, 0.8, 0.6]), 0.05),
                vec![
                    params(0.2, 1.5, &[0.0, -0.4, 0.3], &[0.5, 0.8, 0.6]),
                    params(-0.5, 3.0, &[0.0, 0.4, -0.3], &[0.0, 2.0, 0.1]),
                ],
            ),
        ];
        for (name, data, points) in &cases {
            for p in points {
                let (v, g, h) = totals(data, p, Order::Hessian);
                let (rv, rg, rh) = pooled_totals(data, p, Order::Hessian);
                let (dv, dg, dh) = (worst(&[v], &[rv]), worst(&g, &rg), worst(&h, &rh));
                println!(
                    "{name}, sigma {}: ln L {v:.12} vs {rv:.12}; relative differences ln L {dv:.1e}, gradient {dg:.1e}, Hessian {dh:.1e}",
                    p.sigma
                );
                assert!(
                    dv < 1e-9 && dg < 1e-9 && dh < 1e-9,
                    "{name}: {dv} {dg} {dh}"
                );
            }
        }
    }
}
