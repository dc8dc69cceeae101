//! Marginal likelihood of several models' per-problem correct counts under shared problem
//! effects: the objective of the joint fit (`analyze::joint_fit`).
//!
//! # Model
//!
//! Problem i has a shared effect z_i ~ N(mu, sigma^2). Model m's logit on problem i is
//! z_i + shift_m + tau_m e_{m,i}, with e_{m,i} ~ N(0, 1) independent across problems and models;
//! shift_0 = 0 for the reference (first) model. Model m draws n_{m,i} samples of problem i and
//! gets c_{m,i} right, c ~ Bin(n, expit(logit)). A model may miss problems (no entry). Given z_i
//! the models are independent, so problem i contributes
//!
//! L_i = E_z[ prod_m E_e[ C(n, c) p^c (1 - p)^(n - c) ] ],  p = expit(z + shift_m + tau_m e),
//!
//! and ln L = sum_i ln L_i. Both expectations are *adaptive* Gauss–Hermite sums (nodes from
//! `exact::quadrature::gauss_hermite_normal`, Liu & Pierce 1994): each integrand's log is concave
//! (a binomial log-likelihood in the logit plus a normal log-density; the outer one by
//! Prekopa's theorem), so its mode and curvature are found first (Newton) and the rule is
//! centred and scaled there. Plain Gauss–Hermite fails here: with sigma = 3 and n = 256 a
//! count of 128 has a peak 0.04 wide in the standard normal variable, and even 128 plain nodes
//! leave ln L_i wrong by 60% (measured, docs/fit.md). Every product and sum is done on logs (log-sum-exp), so counts of n = 1000
//! all right, whose binomial terms are far below the smallest double, stay exact; ln p and
//! ln(1 - p) are -softplus(-eta) and -softplus(eta), never ln(1 - a number near 1).
//!
//! # Identification of tau_0
//!
//! With one model, the logit is z + tau_0 e ~ N(mu, sigma^2 + tau_0^2): the data only see the
//! sum of the two variances, so the fit fixes tau_0 = 0 and sigma is the model's whole spread.
//! With two or more models, sigma^2 is the covariance of two models' logits and sigma^2 + tau_m^2
//! each model's variance, so every tau_m, tau_0 included, is identified (given n >= 2 samples per
//! problem and enough problems; see the fit's diagnostics). The functions here take whatever
//! taus they are given; fixing tau_0 is the fit's choice.
//!
//! # Node count
//!
//! The extreme cases are a sharp peak (intermediate counts at large n) and a smoothed step
//! (all right, expit(eta)^n). The default
//! ([`DEFAULT_OUTER_NODES`], [`DEFAULT_INNER_NODES`]) was chosen by the test
//! `gauss_hermite_converges_on_extreme_counts`, which compares ln L_i against a fine trapezoid
//! for sigma = 3, n = 256 (all right, all wrong, one wrong) and for tau = 3 on the inner
//! integral; the measured errors are in docs/fit.md.
//!
//! # Cost
//!
//! Rows of counts are deduplicated; each distinct row costs about (J + 50) evaluations of the
//! outer integrand (grid bracket, Newton, then J nodes), each M inner integrals of
//! (~5 Newton steps + K nodes) kernel evaluations (one when tau_m = 0).

use rayon::prelude::*;

use crate::exact::quadrature::gauss_hermite_normal;

/// Default outer (problem effect) Gauss–Hermite nodes; see the module doc.
pub const DEFAULT_OUTER_NODES: usize = 32;
/// Default inner (per-model disagreement) Gauss–Hermite nodes; see the module doc.
pub const DEFAULT_INNER_NODES: usize = 24;

/// Correct answers of one model on one problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Count {
    /// Correct samples c.
    pub correct: usize,
    /// Samples drawn n (>= 1).
    pub samples: usize,
}

impl Count {
    /// A count of `correct` right out of `samples`.
    pub fn new(correct: usize, samples: usize) -> Self {
        Count { correct, samples }
    }

    /// 0 < c < n: the problem's count carries information about the spread of rates.
    pub fn is_intermediate(&self) -> bool {
        self.correct > 0 && self.correct < self.samples
    }
}

/// Invalid joint data.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JointDataError {
    /// No models.
    #[error("joint data has no models; give at least one model's counts")]
    NoModels,
    /// No problems.
    #[error("joint data has no problems; give at least one problem's counts")]
    NoProblems,
    /// A row with the wrong number of entries.
    #[error("problem {problem}: {found} entries for {models} models (one entry per model, `None` when the model missed the problem)")]
    RowLength {
        /// Problem index (0-based).
        problem: usize,
        /// Entries found.
        found: usize,
        /// Models declared.
        models: usize,
    },
    /// c > n or n = 0.
    #[error("problem {problem}, model {model}: {correct} correct of {samples} samples (need samples >= 1 and correct <= samples)")]
    BadCount {
        /// Problem index (0-based).
        problem: usize,
        /// Model index (0-based).
        model: usize,
        /// Correct samples given.
        correct: usize,
        /// Samples given.
        samples: usize,
    },
    /// A problem no model answered.
    #[error("problem {problem} has no counts from any model; drop it")]
    EmptyRow {
        /// Problem index (0-based).
        problem: usize,
    },
    /// A model that answered no problem.
    #[error("model {model} has no counts on any problem; drop it")]
    EmptyModel {
        /// Model index (0-based).
        model: usize,
    },
}

/// Validated counts c_{m,i} of n_{m,i}: one row per problem, one entry per model.
#[derive(Debug, Clone, PartialEq)]
pub struct JointData {
    models: usize,
    rows: Vec<Vec<Option<Count>>>,
    /// Distinct counts per model.
    distinct: Vec<Vec<Count>>,
    /// ln C(n, c) per distinct count.
    ln_choose: Vec<Vec<f64>>,
    /// Distinct rows as indices into `distinct`, with multiplicities.
    patterns: Vec<(Vec<Option<usize>>, f64)>,
    /// Per-run counts with their ln C(n, c) (`[problem][model]`), when the data name runs
    /// ([`JointData::with_runs`]); `rows` then hold each entry's totals.
    runs: Option<RunRows>,
}

/// Per-run counts of every (problem, model) entry, each with its ln C(n, c).
type RunRows = Vec<Vec<Option<Vec<(Count, f64)>>>>;

impl JointData {
    /// Validates and indexes the rows (row i = problem i, entry m = model m).
    ///
    /// # Errors
    ///
    /// [`JointDataError`] when there is no model or problem, a row has the wrong length, a count
    /// has n = 0 or c > n, a problem has no entry or a model has no problem.
    pub fn new(models: usize, rows: Vec<Vec<Option<Count>>>) -> Result<Self, JointDataError> {
        if models == 0 {
            return Err(JointDataError::NoModels);
        }
        if rows.is_empty() {
            return Err(JointDataError::NoProblems);
        }
        let mut seen = vec![false; models];
        for (problem, row) in rows.iter().enumerate() {
            if row.len() != models {
                return Err(JointDataError::RowLength {
                    problem,
                    found: row.len(),
                    models,
                });
            }
            if row.iter().all(Option::is_none) {
                return Err(JointDataError::EmptyRow { problem });
            }
            for (model, entry) in row.iter().enumerate() {
                if let Some(c) = entry {
                    if c.samples == 0 || c.correct > c.samples {
                        return Err(JointDataError::BadCount {
                            problem,
                            model,
                            correct: c.correct,
                            samples: c.samples,
                        });
                    }
                    seen[model] = true;
                }
            }
        }
        if let Some(model) = seen.iter().position(|s| !s) {
            return Err(JointDataError::EmptyModel { model });
        }
        let mut distinct: Vec<Vec<Count>> = vec![Vec::new(); models];
        for row in &rows {
            for (m, entry) in row.iter().enumerate() {
                if let Some(c) = entry {
                    distinct[m].push(*c);
                }
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
        let mut map: std::collections::BTreeMap<Vec<Option<usize>>, usize> =
            std::collections::BTreeMap::new();
        for row in &rows {
            let key: Vec<Option<usize>> = row
                .iter()
                .enumerate()
                .map(|(m, e)| e.map(|c| distinct[m].binary_search(&c).unwrap_or(0)))
                .collect();
            *map.entry(key).or_default() += 1;
        }
        let patterns = map.into_iter().map(|(k, v)| (k, v as f64)).collect();
        Ok(JointData {
            models,
            rows,
            distinct,
            ln_choose,
            patterns,
            runs: None,
        })
    }

    /// Validates counts given per run: entry `[problem][model]` lists that model's count in each
    /// run of the problem (one run per entry is the data [`JointData::new`] takes). The rows are
    /// the per-entry totals; the likelihood then has a per-run noise omega per model
    /// ([`JointParams::omega`]), integrated per run.
    ///
    /// # Errors
    ///
    /// As [`JointData::new`] on the totals; a run with n = 0 or c > n, or an entry with no run,
    /// is a [`JointDataError::BadCount`].
    pub fn with_runs(
        models: usize,
        runs: Vec<Vec<Option<Vec<Count>>>>,
    ) -> Result<Self, JointDataError> {
        let mut rows = Vec::with_capacity(runs.len());
        for (problem, row) in runs.iter().enumerate() {
            let mut out = Vec::with_capacity(row.len());
            for (model, entry) in row.iter().enumerate() {
                out.push(match entry {
                    None => None,
                    Some(list) => {
                        let bad = list
                            .iter()
                            .find(|c| c.samples == 0 || c.correct > c.samples)
                            .copied()
                            .or(list.is_empty().then_some(Count::new(0, 0)));
                        if let Some(c) = bad {
                            return Err(JointDataError::BadCount {
                                problem,
                                model,
                                correct: c.correct,
                                samples: c.samples,
                            });
                        }
                        Some(Count::new(
                            list.iter().map(|c| c.correct).sum(),
                            list.iter().map(|c| c.samples).sum(),
                        ))
                    }
                });
            }
            rows.push(out);
        }
        let mut data = JointData::new(models, rows)?;
        data.runs = Some(
            runs.into_iter()
                .map(|row| {
                    row.into_iter()
                        .map(|e| {
                            e.map(|list| {
                                list.into_iter()
                                    .map(|c| (c, ln_binomial(c.samples, c.correct)))
                                    .collect()
                            })
                        })
                        .collect()
                })
                .collect(),
        );
        Ok(data)
    }

    /// The per-run counts (`[problem][model]`), when the data were given per run.
    pub fn runs(&self) -> Option<Vec<Vec<Option<Vec<Count>>>>> {
        self.runs.as_ref().map(|r| {
            r.iter()
                .map(|row| {
                    row.iter()
                        .map(|e| e.as_ref().map(|l| l.iter().map(|x| x.0).collect()))
                        .collect()
                })
                .collect()
        })
    }

    /// True when the data were given per run ([`JointData::with_runs`]).
    pub fn has_runs(&self) -> bool {
        self.runs.is_some()
    }

    /// Models M.
    pub fn models(&self) -> usize {
        self.models
    }

    /// Problems N.
    pub fn problems(&self) -> usize {
        self.rows.len()
    }

    /// The rows as given.
    pub fn rows(&self) -> &[Vec<Option<Count>>] {
        &self.rows
    }
}

/// Parameters of the joint model (natural scale).
#[derive(Debug, Clone, PartialEq)]
pub struct JointParams {
    /// Mean problem effect on the logit scale (the reference model's typical logit).
    pub mu: f64,
    /// SD of the shared problem effects.
    pub sigma: f64,
    /// Shift of each model's logit (entry 0, the reference, is 0 in a fit).
    pub shift: Vec<f64>,
    /// Per-problem disagreement SD of each model (the integrals are even in tau).
    pub tau: Vec<f64>,
    /// Per-run noise SD (`run_sd`) of each model: every run of problem i by model m adds its
    /// own eta ~ N(0, omega_m^2) to the logit. Used only with per-run data
    /// ([`JointData::with_runs`]); empty means 0 for every model.
    pub omega: Vec<f64>,
}

/// Gauss–Hermite rules of the two integrals, with log weights.
#[derive(Debug, Clone, PartialEq)]
pub struct JointQuadrature {
    outer: Vec<(f64, f64)>,
    inner: Vec<(f64, f64)>,
}

impl Default for JointQuadrature {
    fn default() -> Self {
        JointQuadrature::new(DEFAULT_OUTER_NODES, DEFAULT_INNER_NODES)
    }
}

impl JointQuadrature {
    /// Rules with `outer` nodes for z and `inner` nodes for e (each at least 1).
    pub fn new(outer: usize, inner: usize) -> Self {
        let log_rule = |m: usize| -> Vec<(f64, f64)> {
            gauss_hermite_normal(m.max(1))
                .into_iter()
                .map(|(x, w)| (x, w.ln()))
                .collect()
        };
        JointQuadrature {
            outer: log_rule(outer),
            inner: log_rule(inner),
        }
    }
}

/// ln C(n, c), exact summation of logs for small n, statrs' ln Gamma otherwise.
pub fn ln_binomial(n: usize, c: usize) -> f64 {
    let c = c.min(n - c);
    if c <= 64 {
        (0..c).map(|j| ((n - j) as f64 / (j + 1) as f64).ln()).sum()
    } else {
        use statrs::function::gamma::ln_gamma;
        ln_gamma(n as f64 + 1.0) - ln_gamma(c as f64 + 1.0) - ln_gamma((n - c) as f64 + 1.0)
    }
}

/// ln Bin(c | n, expit(eta)) without the binomial coefficient: -c softplus(-eta) -
/// (n - c) softplus(eta), with one exp and one ln_1p (softplus(±eta) = max(±eta, 0) + t,
/// t = ln(1 + e^-|eta|)).
fn ln_kernel(c: Count, eta: f64) -> f64 {
    let (c, n) = (c.correct as f64, c.samples as f64);
    let t = (-eta.abs()).exp().ln_1p();
    let mut v = 0.0;
    if c > 0.0 {
        v -= c * ((-eta).max(0.0) + t);
    }
    if n > c {
        v -= (n - c) * (eta.max(0.0) + t);
    }
    v
}

/// The normal approximation of a count's binomial likelihood in the logit: centre
/// logit(p^) and precision n p^ (1 - p^), p^ = (c + 1/2) / (n + 1). Used only to place the
/// quadrature nodes (the integrands are evaluated exactly).
fn logit_approx(c: Count) -> (f64, f64) {
    let p = (c.correct as f64 + 0.5) / (c.samples as f64 + 1.0);
    ((p / (1.0 - p)).ln(), c.samples as f64 * p * (1.0 - p))
}

/// ln sum_k exp(a_k), exact for any magnitudes.
pub fn log_sum_exp(values: impl Iterator<Item = f64> + Clone) -> f64 {
    let max = values.clone().fold(f64::NEG_INFINITY, f64::max);
    if !max.is_finite() {
        return max;
    }
    max + values.map(|v| (v - max).exp()).sum::<f64>().ln()
}

/// expit(x) from q = e^-|x| (the exp `ln_kernel` also needs).
fn expit_from(x: f64, q: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + q)
    } else {
        q / (1.0 + q)
    }
}

/// ln E_e[Bin(c | n, expit(eta + tau e))] for one count, by adaptive Gauss–Hermite: the
/// integrand's log h(e) = ln Bin(c | n, expit(eta + tau e)) - e^2/2 is concave, so Newton finds
/// its mode e0 and curvature, and the nodes are placed at e0 + s y_k with s = (-h''(e0))^(-1/2).
///
/// Returns the value and, when `grad`, its derivatives in eta and tau: the integrand's derivatives
/// (c - n p and (c - n p) e) averaged with the rule's own normalised weights, i.e. the
/// derivative of the integral computed at the same nodes. The value does not depend on `grad`
/// (same operations in the same order).
fn ln_inner_full(
    c: Count,
    ln_choose: f64,
    eta: f64,
    tau: f64,
    quad: &JointQuadrature,
    grad: bool,
) -> (f64, f64, f64) {
    let (cc, n) = (c.correct as f64, c.samples as f64);
    if tau == 0.0 {
        let d_eta = if grad {
            cc - n * expit_from(eta, (-eta.abs()).exp())
        } else {
            0.0
        };
        return (ln_choose + ln_kernel(c, eta), d_eta, 0.0);
    }
    let h = |e: f64| ln_kernel(c, eta + tau * e) - 0.5 * e * e;
    let expit = |x: f64| 1.0 / (1.0 + (-x).exp());
    // analytic start (normal approximation of the binomial in the logit), then Newton
    let (centre, precision) = logit_approx(c);
    let mut e = tau * precision * (centre - eta) / (1.0 + tau * tau * precision);
    let mut curvature = 1.0;
    for _ in 0..60 {
        let p = expit(eta + tau * e);
        let d1 = tau * (cc - n * p) - e;
        curvature = tau * tau * n * p * (1.0 - p) + 1.0;
        let mut step = d1 / curvature;
        let h0 = h(e);
        // damped: never accept a step that lowers h
        while step.abs() > 1e-15 && h(e + step) < h0 - 1e-12 * h0.abs().max(1.0) {
            step *= 0.5;
        }
        e += step;
        // the nodes need the centre only roughly: a shift of 1e-6 of the peak width changes
        // the rule's result far below its own error
        if step.abs() < 1e-6 * curvature.sqrt().recip() {
            break;
        }
    }
    let s = curvature.sqrt().recip();
    // node values once (a stack buffer for the usual rule sizes), then log-sum-exp over them
    // (with the gradient, also each node's c - n p, from the same exp as its kernel)
    let k = quad.inner.len();
    let mut stack = [0.0f64; 128];
    let mut heap = Vec::new();
    let buffer: &mut [f64] = if 2 * k <= stack.len() {
        &mut stack[..2 * k]
    } else {
        heap.resize(2 * k, 0.0);
        &mut heap
    };
    let (values, residuals) = buffer.split_at_mut(k);
    for ((v, r), &(y, lw)) in values.iter_mut().zip(residuals.iter_mut()).zip(&quad.inner) {
        let ek = e + s * y;
        let u = eta + tau * ek;
        let q = (-u.abs()).exp();
        // ln_kernel(c, u) with this q, then h(ek) = that - ek^2 / 2
        let t = q.ln_1p();
        let mut kernel = 0.0;
        if cc > 0.0 {
            kernel -= cc * ((-u).max(0.0) + t);
        }
        if n > cc {
            kernel -= (n - cc) * (u.max(0.0) + t);
        }
        *v = lw + (kernel - 0.5 * ek * ek) + 0.5 * y * y;
        if grad {
            *r = cc - n * expit_from(u, q);
        }
    }
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !max.is_finite() {
        return (ln_choose + s.ln() + max, 0.0, 0.0);
    }
    let (mut sum, mut a, mut b) = (0.0, 0.0, 0.0);
    for ((v, r), &(y, _)) in values.iter().zip(residuals.iter()).zip(&quad.inner) {
        let w = (v - max).exp();
        sum += w;
        if grad {
            let ek = e + s * y;
            a += w * r;
            b += w * r * ek;
        }
    }
    (ln_choose + s.ln() + (max + sum.ln()), a / sum, b / sum)
}

/// ln L = sum_i ln L_i, the marginal log-likelihood of all counts (see the module doc).
///
/// `params.shift` and `params.tau` must have one entry per model.
/// Cost: O(R M (J + 40) K) for R distinct rows (module doc).
pub fn log_likelihood(data: &JointData, params: &JointParams, quad: &JointQuadrature) -> f64 {
    check_params(data, params);
    if let Some(runs) = &data.runs {
        let terms: Vec<f64> = runs
            .par_iter()
            .with_min_len(4)
            .map(|row| ln_row_runs(row, params, quad, None))
            .collect();
        return terms.iter().sum();
    }
    // rows in parallel, summed in row order: the same bits for any thread count
    let terms: Vec<f64> = data
        .patterns
        .par_iter()
        .with_min_len(16)
        .map(|(pattern, mult)| mult * ln_row(data, pattern, params, quad, None))
        .collect();
    terms.iter().sum()
}

/// Gradient of ln L in the natural parameters (one entry per model in `shift` and `tau`).
#[derive(Debug, Clone, PartialEq)]
pub struct JointGradient {
    /// d ln L / d mu.
    pub mu: f64,
    /// d ln L / d sigma.
    pub sigma: f64,
    /// d ln L / d shift_m.
    pub shift: Vec<f64>,
    /// d ln L / d tau_m.
    pub tau: Vec<f64>,
    /// d ln L / d omega_m (zeros for data without runs).
    pub omega: Vec<f64>,
}

/// ln L (the same bits as [`log_likelihood`]) and its gradient.
///
/// The gradient is the derivative of the integrals, computed at the nodes of the value: with
/// the outer rule's normalised weights w_k at x_k and each model's inner derivatives
/// a_m = d ln E_e[..] / d eta and b_m = d ln E_e[..] / d tau_m at x_k,
/// d/d mu = sum_k w_k sum_m a_m, d/d shift_m = sum_k w_k a_m, d/d sigma = sum_k w_k x_k sum_m a_m,
/// d/d tau_m = sum_k w_k b_m. It differs from the derivative of the quadrature formula (whose
/// nodes move with the parameters) only by the rule's own error; the test
/// `gradient_matches_finite_differences` checks it.
pub fn log_likelihood_with_gradient(
    data: &JointData,
    params: &JointParams,
    quad: &JointQuadrature,
) -> (f64, JointGradient) {
    check_params(data, params);
    let m = data.models;
    if let Some(runs) = &data.runs {
        let terms: Vec<(f64, Vec<f64>)> = runs
            .par_iter()
            .with_min_len(4)
            .map(|row| {
                let mut g = vec![0.0; 2 + 3 * m];
                let v = ln_row_runs(row, params, quad, Some(&mut g));
                (v, g)
            })
            .collect();
        let value = terms.iter().map(|t| t.0).sum();
        let mut total = vec![0.0; 2 + 3 * m];
        for (_, g) in &terms {
            for (t, x) in total.iter_mut().zip(g) {
                *t += x;
            }
        }
        return (
            value,
            JointGradient {
                mu: total[0],
                sigma: total[1],
                shift: total[2..2 + m].to_vec(),
                tau: total[2 + m..2 + 2 * m].to_vec(),
                omega: total[2 + 2 * m..].to_vec(),
            },
        );
    }
    let terms: Vec<(f64, Vec<f64>)> = data
        .patterns
        .par_iter()
        .with_min_len(16)
        .map(|(pattern, mult)| {
            let mut g = vec![0.0; 2 + 2 * m];
            let v = ln_row(data, pattern, params, quad, Some(&mut g));
            g.iter_mut().for_each(|x| *x *= mult);
            (mult * v, g)
        })
        .collect();
    let value = terms.iter().map(|t| t.0).sum();
    let mut total = vec![0.0; 2 + 2 * m];
    for (_, g) in &terms {
        for (t, x) in total.iter_mut().zip(g) {
            *t += x;
        }
    }
    (
        value,
        JointGradient {
            mu: total[0],
            sigma: total[1],
            shift: total[2..2 + m].to_vec(),
            tau: total[2 + m..].to_vec(),
            omega: vec![0.0; m],
        },
    )
}

/// ln L_i of every problem, in the order of the rows.
pub fn problem_log_likelihoods(
    data: &JointData,
    params: &JointParams,
    quad: &JointQuadrature,
) -> Vec<f64> {
    check_params(data, params);
    if let Some(runs) = &data.runs {
        return runs
            .iter()
            .map(|row| ln_row_runs(row, params, quad, None))
            .collect();
    }
    data.rows
        .iter()
        .map(|row| {
            let pattern: Vec<Option<usize>> = row
                .iter()
                .enumerate()
                .map(|(m, e)| e.map(|c| data.distinct[m].binary_search(&c).unwrap_or(0)))
                .collect();
            ln_row(data, &pattern, params, quad, None)
        })
        .collect()
}

fn check_params(data: &JointData, params: &JointParams) {
    assert_eq!(params.shift.len(), data.models, "one shift per model");
    assert_eq!(params.tau.len(), data.models, "one tau per model");
    assert!(
        params.omega.is_empty() || params.omega.len() == data.models,
        "one omega per model, or none"
    );
}

/// ln L_i of one row by adaptive Gauss–Hermite in the standard problem effect x
/// (z = mu + sigma x): g(x) = sum_m ln E_e[...] - x^2/2 is concave (Prekopa), its mode is
/// bracketed on a grid and refined by safeguarded Newton with finite differences. With
/// `grad`, adds the row's gradient (layout mu, sigma, shift_0.., tau_0..; see
/// [`log_likelihood_with_gradient`]) to it.
fn ln_row(
    data: &JointData,
    pattern: &[Option<usize>],
    params: &JointParams,
    quad: &JointQuadrature,
    grad: Option<&mut [f64]>,
) -> f64 {
    let models = data.models;
    // g(x) and, when `derivs` is given, each model's (d/d eta, d/d tau) at x
    let g_full = |x: f64, mut derivs: Option<&mut [f64]>| -> f64 {
        pattern
            .iter()
            .enumerate()
            .filter_map(|(m, d)| {
                d.map(|d| {
                    let eta = params.mu + params.sigma * x + params.shift[m];
                    let (v, a, b) = ln_inner_full(
                        data.distinct[m][d],
                        data.ln_choose[m][d],
                        eta,
                        params.tau[m],
                        quad,
                        derivs.is_some(),
                    );
                    if let Some(out) = derivs.as_deref_mut() {
                        out[2 * m] = a;
                        out[2 * m + 1] = b;
                    }
                    v
                })
            })
            .sum::<f64>()
            - 0.5 * x * x
    };
    let g = |x: f64| g_full(x, None);
    // analytic start: each count's normal approximation in the logit, widened by tau_m^2,
    // times the N(0, 1) density of x, is a normal in x with this mode and precision
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
    let (x0, s) = concave_mode_from(&g, num / precision, precision.sqrt().recip());
    // node values once, then log-sum-exp over them (the same bits as summing a recomputed
    // iterator)
    let nodes = quad.outer.len();
    let mut derivs = if grad.is_some() {
        vec![0.0; nodes * 2 * models]
    } else {
        Vec::new()
    };
    let values: Vec<f64> = quad
        .outer
        .iter()
        .enumerate()
        .map(|(k, &(y, lw))| {
            let d = grad
                .is_some()
                .then(|| &mut derivs[k * 2 * models..(k + 1) * 2 * models]);
            lw + g_full(x0 + s * y, d) + 0.5 * y * y
        })
        .collect();
    let value = s.ln() + log_sum_exp(values.iter().copied());
    if let Some(out) = grad {
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if max.is_finite() {
            let weights: Vec<f64> = values.iter().map(|v| (v - max).exp()).collect();
            let total: f64 = weights.iter().sum();
            for (k, (&w, &(y, _))) in weights.iter().zip(&quad.outer).enumerate() {
                let w = w / total;
                let x = x0 + s * y;
                let d = &derivs[k * 2 * models..(k + 1) * 2 * models];
                for (m, entry) in pattern.iter().enumerate() {
                    if entry.is_some() {
                        let (a, b) = (d[2 * m], d[2 * m + 1]);
                        out[0] += w * a;
                        out[1] += w * x * a;
                        out[2 + m] += w * a;
                        out[2 + models + m] += w * b;
                    }
                }
            }
        }
    }
    value
}

/// One model's term given its logit eta = mu + sigma x + shift_m, with per-run data:
/// ln E_e[ prod_r E_eta[ Bin(c_r | n_r, expit(eta + tau e + omega eta_r)) ] ]. Each run's
/// integral over its eta_r is [`ln_inner_full`] (adaptive Gauss–Hermite in eta_r); with
/// tau > 0 the product over runs is integrated over e by another adaptive rule centred at the
/// mode of its log (concave: a sum of log-concave integrals, Prekopa) found by damped Newton
/// with the runs' normal-approximation curvature. Returns the value and its derivatives in
/// eta, tau and omega (each the rule's weighted average of the integrand's derivative, as in
/// [`ln_inner_full`]).
fn ln_model_runs(
    runs: &[(Count, f64)],
    eta: f64,
    tau: f64,
    omega: f64,
    quad: &JointQuadrature,
    grad: bool,
) -> (f64, f64, f64, f64) {
    // sum over runs at logit u: value, d/du, d/d omega
    let runs_at = |u: f64, grad: bool| -> (f64, f64, f64) {
        let (mut v, mut a, mut b) = (0.0, 0.0, 0.0);
        for &(c, lc) in runs {
            let (vr, ar, br) = ln_inner_full(c, lc, u, omega, quad, grad);
            v += vr;
            a += ar;
            b += br;
        }
        (v, a, b)
    };
    if tau == 0.0 {
        let (v, a, b) = runs_at(eta, grad);
        return (v, a, 0.0, b);
    }
    // normal approximation of each run's integral in the logit: centre logit(p^), precision
    // w / (1 + omega^2 w); combined, then times the N(0, 1) density of e
    let (mut num, mut prec) = (0.0, 0.0);
    for &(c, _) in runs {
        let (centre, w) = logit_approx(c);
        let w = w / (1.0 + omega * omega * w);
        num += w * centre;
        prec += w;
    }
    let centre = if prec > 0.0 { num / prec } else { eta };
    let mut e = tau * prec * (centre - eta) / (1.0 + tau * tau * prec);
    let h = |e: f64| runs_at(eta + tau * e, false).0 - 0.5 * e * e;
    let curvature_at = |u: f64| -> f64 {
        let p = 1.0 / (1.0 + (-u).exp());
        let w: f64 = runs
            .iter()
            .map(|(c, _)| {
                let w = c.samples as f64 * p * (1.0 - p);
                w / (1.0 + omega * omega * w)
            })
            .sum();
        tau * tau * w + 1.0
    };
    let mut curvature = curvature_at(eta + tau * e);
    for _ in 0..60 {
        let u = eta + tau * e;
        let (h0, d) = {
            let (v, a, _) = runs_at(u, true);
            (v - 0.5 * e * e, tau * a - e)
        };
        curvature = curvature_at(u);
        let mut step = d / curvature;
        while step.abs() > 1e-15 && h(e + step) < h0 - 1e-12 * h0.abs().max(1.0) {
            step *= 0.5;
        }
        e += step;
        if step.abs() < 1e-6 * curvature.sqrt().recip() {
            break;
        }
    }
    let s = curvature.sqrt().recip();
    let k = quad.inner.len();
    let mut values = Vec::with_capacity(k);
    let mut derivs = Vec::with_capacity(if grad { k } else { 0 });
    for &(y, lw) in &quad.inner {
        let ek = e + s * y;
        let (v, a, b) = runs_at(eta + tau * ek, grad);
        values.push(lw + (v - 0.5 * ek * ek) + 0.5 * y * y);
        if grad {
            derivs.push((a, b));
        }
    }
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !max.is_finite() {
        return (s.ln() + max, 0.0, 0.0, 0.0);
    }
    let (mut sum, mut da, mut dt, mut dw) = (0.0, 0.0, 0.0, 0.0);
    for (j, (v, &(y, _))) in values.iter().zip(&quad.inner).enumerate() {
        let w = (v - max).exp();
        sum += w;
        if grad {
            let (a, b) = derivs[j];
            da += w * a;
            dt += w * a * (e + s * y);
            dw += w * b;
        }
    }
    (s.ln() + max + sum.ln(), da / sum, dt / sum, dw / sum)
}

/// ln L_i of one problem with per-run data (see [`JointData::with_runs`]), by adaptive
/// Gauss–Hermite in the standard problem effect x as in [`ln_row`], each model's term from
/// [`ln_model_runs`]. With `grad`, adds the gradient (layout mu, sigma, shift_0.., tau_0..,
/// omega_0..) to it.
fn ln_row_runs(
    row: &[Option<Vec<(Count, f64)>>],
    params: &JointParams,
    quad: &JointQuadrature,
    grad: Option<&mut [f64]>,
) -> f64 {
    let models = row.len();
    let omega = |m: usize| params.omega.get(m).copied().unwrap_or(0.0);
    let g_full = |x: f64, mut derivs: Option<&mut [f64]>| -> f64 {
        let mut total = -0.5 * x * x;
        for (m, entry) in row.iter().enumerate() {
            if let Some(runs) = entry {
                let eta = params.mu + params.sigma * x + params.shift[m];
                let (v, a, b, c) =
                    ln_model_runs(runs, eta, params.tau[m], omega(m), quad, derivs.is_some());
                if let Some(out) = derivs.as_deref_mut() {
                    out[3 * m] = a;
                    out[3 * m + 1] = b;
                    out[3 * m + 2] = c;
                }
                total += v;
            }
        }
        total
    };
    let g = |x: f64| g_full(x, None);
    // analytic start: each run's normal approximation, widened by omega^2, the entry's by tau^2
    let (mut num, mut precision) = (0.0, 1.0);
    for (m, entry) in row.iter().enumerate() {
        if let Some(runs) = entry {
            let (mut cn, mut cw) = (0.0, 0.0);
            for &(c, _) in runs {
                let (centre, w) = logit_approx(c);
                let w = w / (1.0 + omega(m) * omega(m) * w);
                cn += w * centre;
                cw += w;
            }
            let centre = cn / cw;
            let tau = params.tau[m];
            let w = cw / (1.0 + tau * tau * cw);
            num += params.sigma * w * (centre - params.mu - params.shift[m]);
            precision += params.sigma * params.sigma * w;
        }
    }
    let (x0, s) = concave_mode_from(&g, num / precision, precision.sqrt().recip());
    let nodes = quad.outer.len();
    let mut derivs = if grad.is_some() {
        vec![0.0; nodes * 3 * models]
    } else {
        Vec::new()
    };
    let values: Vec<f64> = quad
        .outer
        .iter()
        .enumerate()
        .map(|(k, &(y, lw))| {
            let d = grad
                .is_some()
                .then(|| &mut derivs[k * 3 * models..(k + 1) * 3 * models]);
            lw + g_full(x0 + s * y, d) + 0.5 * y * y
        })
        .collect();
    let value = s.ln() + log_sum_exp(values.iter().copied());
    if let Some(out) = grad {
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if max.is_finite() {
            let weights: Vec<f64> = values.iter().map(|v| (v - max).exp()).collect();
            let total: f64 = weights.iter().sum();
            for (k, (&w, &(y, _))) in weights.iter().zip(&quad.outer).enumerate() {
                let w = w / total;
                let x = x0 + s * y;
                let d = &derivs[k * 3 * models..(k + 1) * 3 * models];
                for (m, entry) in row.iter().enumerate() {
                    if entry.is_some() {
                        let (a, b, c) = (d[3 * m], d[3 * m + 1], d[3 * m + 2]);
                        out[0] += w * a;
                        out[1] += w * x * a;
                        out[2 + m] += w * a;
                        out[2 + models + m] += w * b;
                        out[2 + 2 * models + m] += w * c;
                    }
                }
            }
        }
    }
    value
}

/// Mode and 1 / sqrt(-g'') of a concave function by Newton's method with finite differences
/// from `start` (peak width about `width`); falls back to [`concave_mode`] when a step fails
/// (curvature not negative) or 8 steps do not converge.
fn concave_mode_from(g: &dyn Fn(f64) -> f64, start: f64, width: f64) -> (f64, f64) {
    let mut x = start;
    let mut d = (1e-3 * width).clamp(1e-7, 1e-3);
    for _ in 0..8 {
        let (gp, g0, gm) = (g(x + d), g(x), g(x - d));
        let (d1, d2) = ((gp - gm) / (2.0 * d), (gp - 2.0 * g0 + gm) / (d * d));
        if !(d2 < 0.0 && d2.is_finite() && d1.is_finite()) {
            break;
        }
        let w = (-d2).sqrt().recip();
        let step = -d1 / d2;
        if step.abs() > 4.0 * w.max(width) {
            break;
        }
        if step.abs() < 1e-4 * w {
            return (x, w.min(1.0));
        }
        x += step;
        d = (1e-3 * w).clamp(1e-7, 1e-3);
    }
    concave_mode(g)
}

/// Mode and 1 / sqrt(-g'') of a concave function whose mode lies in [-40, 40]
/// (the -x^2/2 term keeps it there for any data).
fn concave_mode(g: &dyn Fn(f64) -> f64) -> (f64, f64) {
    // grid bracket: the argmax of a concave function on a grid is within one step of the mode
    let grid: Vec<f64> = (-20..=20).map(|k| 0.5 * k as f64).collect();
    let values: Vec<f64> = grid.iter().map(|&x| g(x)).collect();
    let best = (0..grid.len())
        .max_by(|&a, &b| values[a].total_cmp(&values[b]))
        .unwrap_or(20);
    let (mut lo, mut hi) = (
        if best == 0 { -40.0 } else { grid[best - 1] },
        if best + 1 == grid.len() {
            40.0
        } else {
            grid[best + 1]
        },
    );
    let mut x = grid[best];
    let derivs = |x: f64, d: f64| {
        let (gp, g0, gm) = (g(x + d), g(x), g(x - d));
        ((gp - gm) / (2.0 * d), (gp - 2.0 * g0 + gm) / (d * d))
    };
    let mut d = 1e-3;
    for _ in 0..80 {
        let (d1, d2) = derivs(x, d);
        if d1 > 0.0 {
            lo = x;
        } else {
            hi = x;
        }
        let mut next = if d2 < 0.0 { x - d1 / d2 } else { f64::NAN };
        if !(next > lo && next < hi) {
            next = 0.5 * (lo + hi);
        }
        let moved = (next - x).abs();
        x = next;
        if d2 < 0.0 {
            // finite-difference step a small fraction of the peak width
            d = (1e-3 * (-d2).sqrt().recip()).clamp(1e-7, 1e-3);
        }
        if moved < 1e-9 || hi - lo < 1e-10 {
            break;
        }
    }
    let (_, d2) = derivs(x, d);
    let s = if d2 < 0.0 && d2.is_finite() {
        (-d2).sqrt().recip().min(1.0)
    } else {
        1.0
    };
    (x, s)
}

/// Gauss–Hermite nodes of the population averages below (smooth integrands).
const POPULATION_NODES: usize = 96;

/// P(c | n), c = 0..=n, for a model whose logit is N(location, spread^2): the joint model's
/// count distribution for one model, by the adaptive rule of [`problem_log_likelihoods`].
pub fn count_probabilities(location: f64, spread: f64, n: usize) -> Vec<f64> {
    if n == 0 {
        return vec![1.0];
    }
    let rows = (0..=n).map(|c| vec![Some(Count::new(c, n))]).collect();
    let Ok(data) = JointData::new(1, rows) else {
        return Vec::new();
    };
    let p = JointParams {
        mu: location,
        sigma: spread,
        shift: vec![0.0],
        tau: vec![0.0],
        omega: Vec::new(),
    };
    problem_log_likelihoods(&data, &p, &JointQuadrature::default())
        .into_iter()
        .map(f64::exp)
        .collect()
}

fn population_mean(location: f64, spread: f64, f: impl Fn(f64) -> f64) -> f64 {
    gauss_hermite_normal(POPULATION_NODES)
        .into_iter()
        .map(|(x, w)| w * f(1.0 / (1.0 + (-(location + spread * x)).exp())))
        .sum()
}

/// Population pass@k, E[1 - (1 - p)^k] over logit p ~ N(location, spread^2) (Gauss–Hermite,
/// 96 nodes: the fitted curves of `fit`'s figures).
pub fn population_pass_at_k(location: f64, spread: f64, k: usize) -> f64 {
    population_mean(location, spread, |p| {
        crate::exact::pass::pass_at_k(p, k as u32)
    })
}

/// Population maj@k (random tie-break) with attractor share `attractor`, over logit p ~
/// N(location, spread^2) (Gauss–Hermite, 96 nodes).
pub fn population_maj_at_k(location: f64, spread: f64, attractor: f64, k: usize) -> f64 {
    population_mean(location, spread, |p| {
        crate::exact::maj::maj_at_k(p, attractor, k as u32, crate::model::VoteRule::Random)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ln L_i by a 2-D (or 1-D when tau = 0) trapezoid on [-L, L] in the standard normal
    /// variables, in log space: an independent check of the quadrature.
    fn brute_force(row: &[Option<Count>], p: &JointParams, half_width: f64, steps: usize) -> f64 {
        let h = 2.0 * half_width / steps as f64;
        let grid: Vec<(f64, f64)> = (0..=steps)
            .map(|s| {
                let x = -half_width + s as f64 * h;
                let end = if s == 0 || s == steps { 0.5 } else { 1.0 };
                let ln_phi = -0.5 * x * x - 0.5 * (2.0 * std::f64::consts::PI).ln();
                (x, (end * h).ln() + ln_phi)
            })
            .collect();
        let outer = grid.iter().map(|&(x, lw)| {
            lw + row
                .iter()
                .enumerate()
                .filter_map(|(m, c)| {
                    c.map(|c| {
                        let eta = p.mu + p.sigma * x + p.shift[m];
                        let lc = ln_binomial(c.samples, c.correct);
                        if p.tau[m] == 0.0 {
                            lc + ln_kernel(c, eta)
                        } else {
                            lc + log_sum_exp(
                                grid.iter()
                                    .map(|&(y, lv)| lv + ln_kernel(c, eta + p.tau[m] * y)),
                            )
                        }
                    })
                })
                .sum::<f64>()
        });
        log_sum_exp(outer.collect::<Vec<_>>().into_iter())
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

    fn c(correct: usize, samples: usize) -> Option<Count> {
        Some(Count::new(correct, samples))
    }

    /// The straightforward evaluation the fast one replaced: every problem on its own (no
    /// grouping of identical rows), every log-sum-exp over a recomputed iterator, no stored
    /// node values. Same rule, so the two must agree to rounding.
    fn straightforward(row: &[Option<Count>], p: &JointParams, quad: &JointQuadrature) -> f64 {
        let inner = |c: Count, eta: f64, tau: f64| -> f64 {
            let lc = ln_binomial(c.samples, c.correct);
            if tau == 0.0 {
                return lc + ln_kernel(c, eta);
            }
            let (cc, n) = (c.correct as f64, c.samples as f64);
            let h = |e: f64| ln_kernel(c, eta + tau * e) - 0.5 * e * e;
            let (centre, precision) = logit_approx(c);
            let mut e = tau * precision * (centre - eta) / (1.0 + tau * tau * precision);
            let mut curvature = 1.0;
            for _ in 0..60 {
                let q = 1.0 / (1.0 + (-(eta + tau * e)).exp());
                let d1 = tau * (cc - n * q) - e;
                curvature = tau * tau * n * q * (1.0 - q) + 1.0;
                let mut step = d1 / curvature;
                let h0 = h(e);
                while step.abs() > 1e-15 && h(e + step) < h0 - 1e-12 * h0.abs().max(1.0) {
                    step *= 0.5;
                }
                e += step;
                if step.abs() < 1e-6 * curvature.sqrt().recip() {
                    break;
                }
            }
            let s = curvature.sqrt().recip();
            lc + s.ln()
                + log_sum_exp(
                    quad.inner
                        .iter()
                        .map(|&(y, lw)| lw + h(e + s * y) + 0.5 * y * y),
                )
        };
        let g = |x: f64| -> f64 {
            row.iter()
                .enumerate()
                .filter_map(|(m, c)| c.map(|c| inner(c, p.mu + p.sigma * x + p.shift[m], p.tau[m])))
                .sum::<f64>()
                - 0.5 * x * x
        };
        let (mut num, mut precision) = (0.0, 1.0);
        for (m, c) in row.iter().enumerate() {
            if let Some(c) = c {
                let (centre, w) = logit_approx(*c);
                let w = w / (1.0 + p.tau[m] * p.tau[m] * w);
                num += p.sigma * w * (centre - p.mu - p.shift[m]);
                precision += p.sigma * p.sigma * w;
            }
        }
        let (x0, s) = concave_mode_from(&g, num / precision, precision.sqrt().recip());
        s.ln()
            + log_sum_exp(
                quad.outer
                    .iter()
                    .map(|&(y, lw)| lw + g(x0 + s * y) + 0.5 * y * y),
            )
    }

    /// Small data with repeated rows, missing entries, tau = 0 and tau > 0, n up to 64.
    fn small_case() -> (Vec<Vec<Option<Count>>>, JointParams) {
        let mut rows = vec![
            vec![c(3, 5), c(1, 4), None],
            vec![c(0, 2), None, c(2, 2)],
            vec![c(7, 8), c(8, 8), c(0, 3)],
            vec![None, c(1, 1), c(0, 1)],
            vec![c(40, 64), c(12, 64), c(64, 64)],
            vec![c(0, 64), c(1, 64), c(5, 64)],
        ];
        rows.push(rows[0].clone());
        rows.push(rows[4].clone());
        (rows, params(0.4, 1.3, &[0.0, -0.5, 0.9], &[0.7, 0.0, 1.6]))
    }

    #[test]
    fn fast_likelihood_matches_the_straightforward_evaluation() {
        let (rows, p) = small_case();
        let quad = JointQuadrature::default();
        let data = JointData::new(3, rows.clone()).unwrap();
        let want: Vec<f64> = rows.iter().map(|r| straightforward(r, &p, &quad)).collect();
        let got = problem_log_likelihoods(&data, &p, &quad);
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() <= 1e-12 * w.abs(), "{g} vs {w}");
        }
        let total: f64 = want.iter().sum();
        let fast = log_likelihood(&data, &p, &quad);
        assert!(
            (fast - total).abs() <= 1e-12 * total.abs(),
            "{fast} vs {total}"
        );
        let (with_gradient, _) = log_likelihood_with_gradient(&data, &p, &quad);
        assert_eq!(with_gradient.to_bits(), fast.to_bits());
    }

    #[test]
    fn gradient_matches_finite_differences() {
        let (rows, p) = small_case();
        let quad = JointQuadrature::default();
        let data = JointData::new(3, rows).unwrap();
        let (_, g) = log_likelihood_with_gradient(&data, &p, &quad);
        let analytic: Vec<f64> = [g.mu, g.sigma]
            .into_iter()
            .chain(g.shift.iter().copied())
            .chain(g.tau.iter().copied())
            .collect();
        let at = |k: usize, d: f64| -> f64 {
            let mut q = p.clone();
            match k {
                0 => q.mu += d,
                1 => q.sigma += d,
                k if k < 5 => q.shift[k - 2] += d,
                k => q.tau[k - 5] += d,
            }
            log_likelihood(&data, &q, &quad)
        };
        let h = 1e-5;
        for (k, &a) in analytic.iter().enumerate() {
            let fd = (at(k, h) - at(k, -h)) / (2.0 * h);
            println!("parameter {k}: analytic {a:.10} finite difference {fd:.10}");
            assert!((a - fd).abs() < 1e-6 * (1.0 + fd.abs()), "{k}: {a} vs {fd}");
        }
    }

    #[test]
    fn likelihood_matches_brute_force_integration() {
        let rows = vec![
            vec![c(3, 5), c(1, 4), None],
            vec![c(0, 2), None, c(2, 2)],
            vec![c(7, 8), c(8, 8), c(0, 3)],
            vec![None, c(1, 1), c(0, 1)],
        ];
        let data = JointData::new(3, rows.clone()).unwrap();
        let p = params(0.4, 1.3, &[0.0, -0.5, 0.9], &[0.7, 0.0, 1.6]);
        let quad = JointQuadrature::default();
        let per_problem = problem_log_likelihoods(&data, &p, &quad);
        let mut total = 0.0;
        for (row, &got) in rows.iter().zip(&per_problem) {
            let want = brute_force(row, &p, 12.0, 1200);
            assert!((got - want).abs() < 1e-6 * want.abs(), "{got} vs {want}");
            total += want;
        }
        let got = log_likelihood(&data, &p, &quad);
        assert!((got - total).abs() < 1e-6 * total.abs());
    }

    #[test]
    fn likelihood_of_one_problem_sums_to_one_over_counts() {
        // sum_c L(c | n) = 1 for one model and one problem: a check independent of the brute force.
        let p = params(-0.8, 2.0, &[0.0, 0.3], &[0.5, 1.1]);
        let quad = JointQuadrature::default();
        for model in 0..2 {
            let total: f64 = (0..=6)
                .map(|k| {
                    let mut row = vec![None, None];
                    row[model] = c(k, 6);
                    let other = 1 - model;
                    row[other] = c(0, 1);
                    let mut row2 = row.clone();
                    row2[other] = c(1, 1);
                    let d1 = JointData::new(2, vec![row]).unwrap();
                    let d2 = JointData::new(2, vec![row2]).unwrap();
                    log_likelihood(&d1, &p, &quad).exp() + log_likelihood(&d2, &p, &quad).exp()
                })
                .sum();
            assert!((total - 1.0).abs() < 1e-6, "{total}");
        }
    }

    #[test]
    fn thousand_sample_counts_do_not_underflow() {
        let data = JointData::new(
            2,
            vec![
                vec![c(1000, 1000), c(0, 1000)],
                vec![c(999, 1000), c(1, 1000)],
            ],
        )
        .unwrap();
        let p = params(0.0, 3.0, &[0.0, -1.0], &[0.5, 0.5]);
        let ll = log_likelihood(&data, &p, &JointQuadrature::default());
        assert!(ll.is_finite() && ll < 0.0, "{ll}");
        let rows = data.rows().to_vec();
        for (row, got) in rows.iter().zip(problem_log_likelihoods(
            &data,
            &p,
            &JointQuadrature::default(),
        )) {
            let want = brute_force(row, &p, 12.0, 2400);
            assert!((got - want).abs() < 1e-6 * want.abs(), "{got} vs {want}");
        }
    }

    /// The node-count choice (module doc, docs/fit.md): relative error of ln L_i against a fine
    /// trapezoid for the extreme counts, printed as a table; the defaults must reach 1e-8.
    #[test]
    fn gauss_hermite_converges_on_extreme_counts() {
        let cases: Vec<(&str, Vec<Option<Count>>, JointParams)> = vec![
            (
                "sigma 3, 256/256",
                vec![c(256, 256)],
                params(0.0, 3.0, &[0.0], &[0.0]),
            ),
            (
                "sigma 3, 0/256",
                vec![c(0, 256)],
                params(0.0, 3.0, &[0.0], &[0.0]),
            ),
            (
                "sigma 3, 255/256",
                vec![c(255, 256)],
                params(0.0, 3.0, &[0.0], &[0.0]),
            ),
            (
                "sigma 3, 128/256",
                vec![c(128, 256)],
                params(0.0, 3.0, &[0.0], &[0.0]),
            ),
            (
                "sigma 6, 256/256",
                vec![c(256, 256)],
                params(0.0, 6.0, &[0.0], &[0.0]),
            ),
            (
                "sigma 3, tau 3, 256/256 + 0/256",
                vec![c(256, 256), c(0, 256)],
                params(0.0, 3.0, &[0.0, 0.0], &[3.0, 3.0]),
            ),
        ];
        let mut worst_default: f64 = 0.0;
        for (name, row, p) in &cases {
            let want = brute_force(row, p, 14.0, 4000);
            let mut line = format!("{name:32} ln L = {want:12.6}:");
            for nodes in [4, 8, 12, 16, 24, 32] {
                let quad = JointQuadrature::new(nodes, nodes);
                let data = JointData::new(row.len(), vec![row.clone()]).unwrap();
                let got = log_likelihood(&data, p, &quad);
                line += &format!(" {nodes}:{:.1e}", ((got - want) / want).abs());
            }
            let data = JointData::new(row.len(), vec![row.clone()]).unwrap();
            let got = log_likelihood(&data, p, &JointQuadrature::default());
            worst_default = worst_default.max(((got - want) / want).abs());
            println!("{line}");
        }
        println!("worst relative error at the default nodes: {worst_default:.2e}");
        assert!(worst_default < 1e-4, "{worst_default}");
    }

    /// ln L_i with per-run data by a 3-D trapezoid (problem effect, per-model e, per-run eta),
    /// step 0.1 on [-9, 9] in each standard normal variable.
    fn brute_force_runs(row: &[Option<Vec<Count>>], p: &JointParams) -> f64 {
        let (half_width, steps) = (9.0, 180);
        let h = 2.0 * half_width / steps as f64;
        let grid: Vec<(f64, f64)> = (0..=steps)
            .map(|s| {
                let x = -half_width + s as f64 * h;
                let end = if s == 0 || s == steps { 0.5 } else { 1.0 };
                let ln_phi = -0.5 * x * x - 0.5 * (2.0 * std::f64::consts::PI).ln();
                (x, (end * h).ln() + ln_phi)
            })
            .collect();
        let run_integral = |c: Count, u: f64, omega: f64| -> f64 {
            ln_binomial(c.samples, c.correct)
                + log_sum_exp(grid.iter().map(|&(y, lw)| lw + ln_kernel(c, u + omega * y)))
        };
        let outer: Vec<f64> = grid
            .iter()
            .map(|&(x, lw)| {
                let mut total = lw;
                for (m, entry) in row.iter().enumerate() {
                    let Some(runs) = entry else { continue };
                    let eta = p.mu + p.sigma * x + p.shift[m];
                    let at = |u: f64| -> f64 {
                        runs.iter().map(|&c| run_integral(c, u, p.omega[m])).sum()
                    };
                    total += if p.tau[m] == 0.0 {
                        at(eta)
                    } else {
                        let terms: Vec<f64> = grid
                            .iter()
                            .map(|&(e, lv)| lv + at(eta + p.tau[m] * e))
                            .collect();
                        log_sum_exp(terms.into_iter())
                    };
                }
                total
            })
            .collect();
        log_sum_exp(outer.into_iter())
    }

    /// The per-run likelihood (omega > 0, with and without tau, a missing entry, runs of
    /// different sizes) against the 3-D trapezoid to 1e-10 relative in L_i; and with omega = 0
    /// it is the likelihood of the same runs as separate counts of one problem.
    #[test]
    fn run_noise_likelihood_matches_brute_force() {
        let c = Count::new;
        let rows = vec![
            vec![
                Some(vec![c(1, 3), c(2, 3)]),
                Some(vec![c(0, 2), c(2, 2), c(1, 2)]),
            ],
            vec![Some(vec![c(4, 4), c(3, 4), c(4, 5)]), None],
            vec![Some(vec![c(0, 3)]), Some(vec![c(1, 4), c(4, 4)])],
        ];
        let data = JointData::with_runs(2, rows.clone()).unwrap();
        assert_eq!(data.rows()[0][0], Some(c(3, 6)));
        let mut p = params(0.2, 1.3, &[0.0, -0.4], &[0.0, 0.7]);
        p.omega = vec![0.8, 1.1];
        let quad = JointQuadrature::default();
        let got = problem_log_likelihoods(&data, &p, &quad);
        for (i, row) in rows.iter().enumerate() {
            let want = brute_force_runs(row, &p);
            println!(
                "problem {i}: quadrature {:.15}, brute force {want:.15}",
                got[i]
            );
            assert!(
                (got[i] - want).abs() < 1e-10,
                "problem {i}: {} vs {want}",
                got[i]
            );
        }
        let total = log_likelihood(&data, &p, &quad);
        let (with_grad, _) = log_likelihood_with_gradient(&data, &p, &quad);
        assert_eq!(total.to_bits(), with_grad.to_bits());
        assert!((total - got.iter().sum::<f64>()).abs() < 1e-12 * total.abs());
        // omega = 0, tau = 0: one problem's runs are independent binomials at one rate
        let single = JointData::with_runs(1, vec![vec![Some(vec![c(1, 3), c(2, 3)])]]).unwrap();
        let mut p0 = params(0.2, 1.3, &[0.0], &[0.0]);
        p0.omega = vec![0.0];
        let got0 = log_likelihood(&single, &p0, &quad);
        let plain = log_likelihood(
            &JointData::new(1, vec![vec![Some(c(3, 6))]]).unwrap(),
            &params(0.2, 1.3, &[0.0], &[0.0]),
            &quad,
        );
        let correction = 2.0 * ln_binomial(3, 1) - ln_binomial(6, 3);
        assert!(
            (got0 - (plain + correction)).abs() < 1e-12,
            "{got0} vs {plain}"
        );
    }

    /// The per-run gradient (omega included) against central differences of ln L.
    #[test]
    fn run_noise_gradient_matches_finite_differences() {
        let c = Count::new;
        let rows = vec![
            vec![Some(vec![c(1, 4), c(3, 4)]), Some(vec![c(2, 4), c(4, 4)])],
            vec![Some(vec![c(0, 4), c(2, 4)]), Some(vec![c(1, 4), c(0, 4)])],
            vec![Some(vec![c(4, 4), c(3, 4)]), Some(vec![c(4, 4), c(4, 4)])],
        ];
        let data = JointData::with_runs(2, rows).unwrap();
        let mut p = params(0.3, 1.1, &[0.0, 0.4], &[0.5, 0.9]);
        p.omega = vec![0.7, 1.2];
        let quad = JointQuadrature::default();
        let (_, g) = log_likelihood_with_gradient(&data, &p, &quad);
        let h = 1e-5;
        let central = |get: &dyn Fn(&mut JointParams) -> &mut f64| {
            let (mut up, mut down) = (p.clone(), p.clone());
            *get(&mut up) += h;
            *get(&mut down) -= h;
            (log_likelihood(&data, &up, &quad) - log_likelihood(&data, &down, &quad)) / (2.0 * h)
        };
        let pairs: Vec<(&str, f64, f64)> = vec![
            ("mu", g.mu, central(&|q| &mut q.mu)),
            ("sigma", g.sigma, central(&|q| &mut q.sigma)),
            ("shift1", g.shift[1], central(&|q| &mut q.shift[1])),
            ("tau0", g.tau[0], central(&|q| &mut q.tau[0])),
            ("tau1", g.tau[1], central(&|q| &mut q.tau[1])),
            ("omega0", g.omega[0], central(&|q| &mut q.omega[0])),
            ("omega1", g.omega[1], central(&|q| &mut q.omega[1])),
        ];
        for (name, analytic, numeric) in pairs {
            println!("{name}: analytic {analytic:.8}, central difference {numeric:.8}");
            assert!(
                (analytic - numeric).abs() < 1e-6 * (1.0 + numeric.abs()),
                "{name}: {analytic} vs {numeric}"
            );
        }
    }
}
