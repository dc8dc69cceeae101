//! Marginal likelihood of several models' per-problem correct counts under shared problem
//! effects: the objective of the joint fit (`analyze::joint_fit`).
//!
//! # Model
//!
//! Problem i has a shared effect z_i ~ N(mu, sigma^2). Model m's logit on problem i is
//! z_i + shift_m + tau_m e_{m,i}, with e_{m,i} ~ N(0, 1) independent across problems and models;
//! shift_0 = 0 for the reference (first) model. Model m runs problem i one or more times; run r
//! adds its own noise omega_m eta_r (eta_r ~ N(0, 1)) to the logit, draws n_r samples and gets
//! c_r right, c_r ~ Bin(n_r, expit(logit + omega_m eta_r)). A model may miss problems (no
//! entry). Given z_i the models are independent, so problem i contributes
//!
//! L_i = E_z[ prod_m E_e[ prod_r J(c_r, z + shift_m + tau_m e, omega_m) ] ],
//! J(c, u, omega) = E_eta[ C(n, c) p^c (1 - p)^(n - c) ],  p = expit(u + omega eta),
//!
//! and ln L = sum_i ln L_i. There is one likelihood (`runs`): pooled counts (data without a
//! run column) are one run per entry with no run noise, omega = 0, where J is the binomial
//! and an entry is the inner integral of its count over e; their parameters have no omega
//! ([`JointLayout`]). Each expectation is a trapezoid sum placed where its integrand lives
//! ([`trapezoid`]), on one lattice of logits per model, with each table entry shared by every
//! row that needs it; accurate to about 1e-13 in ln L_i up to sigma 30 and tau 20 (checked
//! against dense brute-force integrals at those extremes). Every product and sum is done on
//! logs (log-sum-exp), so counts of n = 1000 all right, whose binomial terms are far below the
//! smallest double, stay exact; ln p and ln(1 - p) are -softplus(-eta) and -softplus(eta),
//! never ln(1 - a number near 1).
//!
//! # Identification of tau_0
//!
//! With one model, the logit is z + tau_0 e ~ N(mu, sigma^2 + tau_0^2): the data only see the
//! sum of the two variances, so the fit fixes tau_0 = 0 and sigma is the model's whole spread.
//! With two or more models, sigma^2 is the covariance of two models' logits and sigma^2 + tau_m^2
//! each model's variance, so every tau_m, tau_0 included, is identified (given n >= 2 samples per
//! problem and enough problems; see the fit's diagnostics). The functions here take whatever
//! taus they are given; fixing tau_0 is the fit's choice.

use rayon::prelude::*;

#[cfg(test)]
mod grouping_tests;
mod layout;
mod moments;
#[cfg(test)]
mod pooled_reference;
mod runs;
pub mod trapezoid;

use crate::exact::quadrature::gauss_hermite_normal;
pub use layout::JointLayout;
use runs::{runs_log_likelihood, RunIndex};
use trapezoid::inner_integral;

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
    /// Per-run counts (`[problem][model]`), when the data name runs ([`JointData::with_runs`]);
    /// `rows` then hold each entry's totals.
    runs: Option<Vec<Vec<Option<Vec<Count>>>>>,
    /// The counts indexed for the likelihood (identical rows, entries and run counts
    /// integrated once); pooled counts as one run per entry.
    run_index: RunIndex,
}

impl JointData {
    /// Validates and indexes the rows (row i = problem i, entry m = model m).
    ///
    /// # Errors
    ///
    /// [`JointDataError`] when there is no model or problem, a row has the wrong length, a count
    /// has n = 0 or c > n, a problem has no entry or a model has no problem.
    pub fn new(models: usize, rows: Vec<Vec<Option<Count>>>) -> Result<Self, JointDataError> {
        Self::validate(models, &rows)?;
        let run_index = RunIndex::new(models, rows.len(), |i, m| {
            rows[i][m].as_ref().map(std::slice::from_ref)
        });
        Ok(JointData {
            models,
            rows,
            runs: None,
            run_index,
        })
    }

    /// The checks of [`JointData::new`] on rows of counts (per-entry totals with runs).
    fn validate(models: usize, rows: &[Vec<Option<Count>>]) -> Result<(), JointDataError> {
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
        Ok(())
    }

    /// Validates counts given per run: entry `[problem][model]` lists that model's count in each
    /// run of the problem (one run per entry is the data [`JointData::new`] takes). The rows are
    /// the per-entry totals; the likelihood then has a per-run noise omega per model
    /// ([`JointParams::omega`]), integrated per run, and its layout an omega per model
    /// ([`JointLayout`]).
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
        Self::validate(models, &rows)?;
        Ok(JointData {
            models,
            rows,
            run_index: RunIndex::new(models, runs.len(), |i, m| runs[i][m].as_deref()),
            runs: Some(runs),
        })
    }

    /// The per-run counts (`[problem][model]`), when the data were given per run.
    pub fn runs(&self) -> Option<Vec<Vec<Option<Vec<Count>>>>> {
        self.runs.clone()
    }

    /// True when the data were given per run ([`JointData::with_runs`]).
    pub fn has_runs(&self) -> bool {
        self.runs.is_some()
    }

    /// Models M.
    pub fn models(&self) -> usize {
        self.models
    }

    /// The layout of the likelihood's gradient and Hessian for these data: an omega per model
    /// only with runs.
    pub fn layout(&self) -> JointLayout {
        JointLayout::new(self.models, self.has_runs())
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
    /// own eta ~ N(0, omega_m^2) to the logit. Only per-run data ([`JointData::with_runs`])
    /// have run noise (pooled counts take it empty or 0); empty means 0 for every model.
    pub omega: Vec<f64>,
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
#[cfg(test)]
fn ln_kernel(c: Count, eta: f64) -> f64 {
    ln_kernel_q(c, eta, (-eta.abs()).exp())
}

/// [`ln_kernel`] given q = e^-|eta|, for callers that also need q (for expit).
pub(crate) fn ln_kernel_q(c: Count, eta: f64, q: f64) -> f64 {
    let (c, n) = (c.correct as f64, c.samples as f64);
    let t = ln_1p_unit(q);
    let mut v = 0.0;
    if c > 0.0 {
        v -= c * ((-eta).max(0.0) + t);
    }
    if n > c {
        v -= (n - c) * (eta.max(0.0) + t);
    }
    v
}

/// ln(1 + q) for q in [0, 1] by the one-log form q ln(u) / (u - 1), u = 1 + q rounded
/// (Goldberg 1991, Theorem 4): within a few ulps of `f64::ln_1p`, and about three times
/// faster with glibc, whose log1p was a third of the fit's time. The kernel's softplus needs
/// nothing more accurate: its error is below 1e-15 relative.
pub(crate) fn ln_1p_unit(q: f64) -> f64 {
    let u = 1.0 + q;
    if u == 1.0 {
        q
    } else {
        q * u.ln() / (u - 1.0)
    }
}

/// The normal approximation of a count's binomial likelihood in the logit: centre
/// logit(p^) and precision n p^ (1 - p^), p^ = (c + 1/2) / (n + 1). Used only to place the
/// quadrature nodes (the integrands are evaluated exactly).
pub(crate) fn logit_approx(c: Count) -> (f64, f64) {
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
pub(crate) fn expit_from(x: f64, q: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + q)
    } else {
        q / (1.0 + q)
    }
}

/// How much of an integral's derivatives to compute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Order {
    /// The value only.
    Value,
    /// The value and the first derivatives.
    Gradient,
    /// The value and the first and second derivatives.
    Hessian,
}

/// One inner integral's log and its derivatives in eta (the logit) and tau.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Inner {
    pub(crate) value: f64,
    pub(crate) d_eta: f64,
    pub(crate) d_tau: f64,
    pub(crate) d_eta2: f64,
    pub(crate) d_eta_tau: f64,
    pub(crate) d_tau2: f64,
}

/// ln L = sum_i ln L_i, the marginal log-likelihood of all counts (see the module doc).
///
/// `params.shift` and `params.tau` must have one entry per model.
/// Cost: O(R M (J + 40) K) for R distinct rows (module doc).
pub fn log_likelihood(data: &JointData, params: &JointParams) -> f64 {
    check_params(data, params);
    totals(data, params, Order::Value).0
}

/// ln L, and with `order` its gradient and Hessian (row-major), each the rows' terms times
/// their multiplicities summed in row order (the same bits for any thread count), in the
/// data's [`JointLayout`].
fn totals(data: &JointData, params: &JointParams, order: Order) -> (f64, Vec<f64>, Vec<f64>) {
    let index = &data.run_index;
    let terms = runs_log_likelihood(index, params, data.layout(), order);
    let multiplicities: Vec<f64> = index.multiplicities().collect();
    let value = terms
        .iter()
        .zip(&multiplicities)
        .map(|(t, mult)| mult * t.0)
        .sum();
    let (p, hp) = terms.first().map_or((0, 0), |t| (t.1.len(), t.2.len()));
    let mut gradient = vec![0.0; p];
    let mut hessian = vec![0.0; hp];
    for ((_, g, h), mult) in terms.iter().zip(&multiplicities) {
        for (t, x) in gradient.iter_mut().zip(g) {
            *t += mult * x;
        }
        for (t, x) in hessian.iter_mut().zip(h) {
            *t += mult * x;
        }
    }
    (value, gradient, hessian)
}

/// The gradient of [`totals`] in `layout`.
fn gradient_of(total: &[f64], layout: JointLayout) -> JointGradient {
    let models = 0..layout.models();
    JointGradient {
        mu: total[JointLayout::MU],
        sigma: total[JointLayout::SIGMA],
        shift: models.clone().map(|m| total[layout.shift(m)]).collect(),
        tau: models.clone().map(|m| total[layout.tau(m)]).collect(),
        omega: models
            .map(|m| layout.omega(m).map_or(0.0, |i| total[i]))
            .collect(),
    }
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
) -> (f64, JointGradient) {
    check_params(data, params);
    let (value, gradient, _) = totals(data, params, Order::Gradient);
    (value, gradient_of(&gradient, data.layout()))
}

/// ln L (the same bits as [`log_likelihood`]), its gradient and its Hessian in the natural
/// parameters (always `Some`; the `Option` is kept for callers written when per-run data had
/// no Hessian).
///
/// The Hessian is, like the gradient, the second derivative of the integrals computed at the
/// nodes of the value (`exact::joint_likelihood::runs`); its rows and columns are the data's
/// [`JointLayout`] (mu, sigma, shift_0.., tau_0.., and with per-run data omega_0..; shift_0
/// and tau_0 included whether or not a fit frees them). It replaces
/// the fit's central differences of the gradient (2P gradient evaluations) by one pass that
/// costs about a quarter more than the gradient's; the two agree to the differences' own
/// truncation error (test `hessian_matches_differences_of_the_gradient`).
pub fn log_likelihood_with_hessian(
    data: &JointData,
    params: &JointParams,
) -> Option<(f64, JointGradient, Vec<Vec<f64>>)> {
    check_params(data, params);
    let (value, gradient, hessian) = totals(data, params, Order::Hessian);
    let p = gradient.len();
    Some((
        value,
        gradient_of(&gradient, data.layout()),
        hessian.chunks(p).map(<[f64]>::to_vec).collect(),
    ))
}

/// ln L_i of every problem, in the order of the rows.
pub fn problem_log_likelihoods(data: &JointData, params: &JointParams) -> Vec<f64> {
    check_params(data, params);
    let index = &data.run_index;
    let terms = runs_log_likelihood(index, params, data.layout(), Order::Value);
    index.row_of().iter().map(|&r| terms[r].0).collect()
}

fn check_params(data: &JointData, params: &JointParams) {
    assert_eq!(params.shift.len(), data.models, "one shift per model");
    assert_eq!(params.tau.len(), data.models, "one tau per model");
    assert!(
        params.omega.is_empty() || params.omega.len() == data.models,
        "one omega per model, or none"
    );
    assert!(
        data.has_runs() || params.omega.iter().all(|&o| o == 0.0),
        "run noise (omega) needs per-run data: pooled counts are one run each with no run noise"
    );
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
    problem_log_likelihoods(&data, &p)
        .into_iter()
        .map(f64::exp)
        .collect()
}

/// Points of the trapezoid over the problem effect in [`count_probabilities_runs`].
const RUN_COUNT_POINTS: usize = 2001;

/// P(c), c = 0..=runs n_run, of a problem's count pooled over `runs` runs of `n_run` samples,
/// for a model whose logit is N(location, spread^2) per problem plus its own N(0, omega^2) per
/// run (`run_sd`): the count distribution of the joint model with per-run noise. Given the
/// problem's logit u, each run's count has P(c_r | u) = E_eta[Bin(c_r | n_run, expit(u + omega
/// eta))] (the likelihood's trapezoid rule, `trapezoid::inner_integral`), the runs' distributions are
/// convolved, and the result is averaged over u by a trapezoid of 2,001 points on +/-10
/// standard units. With omega = 0 it is the binomial pooled count (test
/// `run_count_probabilities_reduce_to_the_pooled_ones`).
pub fn count_probabilities_runs(
    location: f64,
    spread: f64,
    omega: f64,
    runs: usize,
    n_run: usize,
) -> Vec<f64> {
    let total = runs * n_run;
    if runs == 0 || n_run == 0 {
        return vec![1.0];
    }
    let ln_choose: Vec<f64> = (0..=n_run).map(|c| ln_binomial(n_run, c)).collect();
    let half = 10.0;
    let h = 2.0 * half / (RUN_COUNT_POINTS - 1) as f64;
    let per_point: Vec<Vec<f64>> = (0..RUN_COUNT_POINTS)
        .into_par_iter()
        .with_min_len(64)
        .map(|j| {
            let x = -half + j as f64 * h;
            let u = location + spread * x;
            let one: Vec<f64> = (0..=n_run)
                .map(|c| {
                    inner_integral(Count::new(c, n_run), ln_choose[c], u, omega, Order::Value)
                        .value
                        .exp()
                })
                .collect();
            let mut pooled = vec![1.0];
            for _ in 0..runs {
                let mut next = vec![0.0; pooled.len() + n_run];
                for (a, &pa) in pooled.iter().enumerate() {
                    for (b, &pb) in one.iter().enumerate() {
                        next[a + b] += pa * pb;
                    }
                }
                pooled = next;
            }
            let end = if j == 0 || j == RUN_COUNT_POINTS - 1 {
                0.5
            } else {
                1.0
            };
            let w = end * h * (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt();
            pooled.into_iter().map(|q| w * q).collect()
        })
        .collect();
    let mut out = vec![0.0; total + 1];
    for point in &per_point {
        for (o, q) in out.iter_mut().zip(point) {
            *o += q;
        }
    }
    out
}

/// The 96-node rule of the population averages, built once.
fn population_rule() -> &'static [(f64, f64)] {
    static RULE: std::sync::OnceLock<Vec<(f64, f64)>> = std::sync::OnceLock::new();
    RULE.get_or_init(|| gauss_hermite_normal(POPULATION_NODES))
}

fn population_mean(location: f64, spread: f64, f: impl Fn(f64) -> f64) -> f64 {
    population_rule()
        .iter()
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
    fn gradient_matches_finite_differences() {
        let (rows, p) = small_case();
        let data = JointData::new(3, rows).unwrap();
        let (_, g) = log_likelihood_with_gradient(&data, &p);
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
            log_likelihood(&data, &q)
        };
        let h = 1e-5;
        for (k, &a) in analytic.iter().enumerate() {
            let fd = (at(k, h) - at(k, -h)) / (2.0 * h);
            println!("parameter {k}: analytic {a:.10} finite difference {fd:.10}");
            assert!((a - fd).abs() < 1e-6 * (1.0 + fd.abs()), "{k}: {a} vs {fd}");
        }
    }

    #[test]
    #[allow(clippy::needless_range_loop)]
    fn hessian_matches_differences_of_the_gradient() {
        let (rows, p) = small_case();
        let data = JointData::new(3, rows).unwrap();
        let (v, g, h) = log_likelihood_with_hessian(&data, &p).unwrap();
        let (v1, g1) = log_likelihood_with_gradient(&data, &p);
        assert_eq!(v.to_bits(), v1.to_bits());
        assert_eq!(g, g1);
        let flat = |g: &JointGradient| -> Vec<f64> {
            [g.mu, g.sigma]
                .into_iter()
                .chain(g.shift.iter().copied())
                .chain(g.tau.iter().copied())
                .collect()
        };
        let at = |k: usize, d: f64| -> Vec<f64> {
            let mut q = p.clone();
            match k {
                0 => q.mu += d,
                1 => q.sigma += d,
                k if k < 5 => q.shift[k - 2] += d,
                k => q.tau[k - 5] += d,
            }
            flat(&log_likelihood_with_gradient(&data, &q).1)
        };
        // tau[1] = 0: the differences straddle the tau = 0 branch, which the analytic value
        // at 0 must continue
        let step = 1e-4;
        for j in 0..8 {
            let (up, down) = (at(j, step), at(j, -step));
            for i in 0..8 {
                let fd = (up[i] - down[i]) / (2.0 * step);
                println!("H[{i}][{j}]: analytic {:.8} differences {fd:.8}", h[i][j]);
                assert!(
                    (h[i][j] - fd).abs() < 1e-5 * (1.0 + fd.abs()),
                    "H[{i}][{j}]: {} vs {fd}",
                    h[i][j]
                );
            }
        }
    }

    #[test]
    fn run_count_probabilities_reduce_to_the_pooled_ones() {
        // omega = 0: the pooled count of 3 runs of 6 is binomial with n = 18
        let runs = count_probabilities_runs(0.3, 1.2, 0.0, 3, 6);
        let pooled = count_probabilities(0.3, 1.2, 18);
        assert_eq!(runs.len(), 19);
        for (c, (a, b)) in runs.iter().zip(&pooled).enumerate() {
            assert!((a - b).abs() < 1e-9, "c = {c}: {a} vs {b}");
        }
        // omega > 0: sums to 1, and its mean is 18 E[expit(L)] with L ~ N(0.3, 1.2^2 + 0.7^2)
        // (the mean sees only the total variance)
        let with = count_probabilities_runs(0.3, 1.2, 0.7, 3, 6);
        let sum: f64 = with.iter().sum();
        assert!((sum - 1.0).abs() < 1e-10, "{sum}");
        let mean: f64 = with.iter().enumerate().map(|(c, q)| c as f64 * q).sum();
        let want = 18.0 * population_mean(0.3, (1.2f64.powi(2) + 0.49).sqrt(), |p| p);
        assert!((mean - want).abs() < 1e-9 * want, "{mean} vs {want}");
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
        let per_problem = problem_log_likelihoods(&data, &p);
        let mut total = 0.0;
        for (row, &got) in rows.iter().zip(&per_problem) {
            let want = brute_force(row, &p, 12.0, 1200);
            assert!((got - want).abs() < 1e-6 * want.abs(), "{got} vs {want}");
            total += want;
        }
        let got = log_likelihood(&data, &p);
        assert!((got - total).abs() < 1e-6 * total.abs());
    }

    #[test]
    fn likelihood_of_one_problem_sums_to_one_over_counts() {
        // sum_c L(c | n) = 1 for one model and one problem: a check independent of the brute force.
        let p = params(-0.8, 2.0, &[0.0, 0.3], &[0.5, 1.1]);
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
                    log_likelihood(&d1, &p).exp() + log_likelihood(&d2, &p).exp()
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
        let ll = log_likelihood(&data, &p);
        assert!(ll.is_finite() && ll < 0.0, "{ll}");
        let rows = data.rows().to_vec();
        for (row, got) in rows.iter().zip(problem_log_likelihoods(&data, &p)) {
            let want = brute_force(row, &p, 12.0, 2400);
            assert!((got - want).abs() < 1e-6 * want.abs(), "{got} vs {want}");
        }
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
        let got = problem_log_likelihoods(&data, &p);
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
        let total = log_likelihood(&data, &p);
        let (with_grad, _) = log_likelihood_with_gradient(&data, &p);
        assert_eq!(total.to_bits(), with_grad.to_bits());
        assert!((total - got.iter().sum::<f64>()).abs() < 1e-12 * total.abs());
        // omega = 0, tau = 0: one problem's runs are independent binomials at one rate
        let single = JointData::with_runs(1, vec![vec![Some(vec![c(1, 3), c(2, 3)])]]).unwrap();
        let mut p0 = params(0.2, 1.3, &[0.0], &[0.0]);
        p0.omega = vec![0.0];
        let got0 = log_likelihood(&single, &p0);
        let plain = log_likelihood(
            &JointData::new(1, vec![vec![Some(c(3, 6))]]).unwrap(),
            &params(0.2, 1.3, &[0.0], &[0.0]),
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
        let (_, g) = log_likelihood_with_gradient(&data, &p);
        let h = 1e-5;
        let central = |get: &dyn Fn(&mut JointParams) -> &mut f64| {
            let (mut up, mut down) = (p.clone(), p.clone());
            *get(&mut up) += h;
            *get(&mut down) -= h;
            (log_likelihood(&data, &up) - log_likelihood(&data, &down)) / (2.0 * h)
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
