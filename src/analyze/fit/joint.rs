//! Joint fit of several models' per-problem counts: shared problem effects, a shift and a
//! per-problem disagreement SD per model (issue #16 item 2, the math layer).
//!
//! # Model and likelihood
//!
//! z_i ~ N(mu, sigma^2) shared by all models; model m's logit on problem i is
//! z_i + shift_m + tau_m e_{m,i}, e ~ N(0, 1), shift_0 = 0 (the first model is the reference).
//! The marginal log-likelihood of the binomial counts is `exact::joint_likelihood` (trapezoid
//! rules placed where each integrand lives, with runs on one lattice per model (`exact::joint_likelihood::runs`); log space). With one model tau_0 is fixed at 0 (only sigma^2 + tau_0^2 is
//! identified); with two or more every tau_m is free.
//!
//! # Estimation
//!
//! Maximum likelihood (or the MAP of the penalised likelihood, below) by Newton's method with the
//! analytic Hessian where it applies (a spread reaching 0 held at that bound), else BFGS with the
//! analytic gradient (`exact::joint_likelihood::log_likelihood_with_gradient`) and an Armijo line search,
//! over (mu, t_sigma, shift_1.., t_tau..) with sigma = |t_sigma| and tau = |t_tau|: the
//! likelihood is even and smooth in each spread, so 0 is an interior point and needs no floor. A
//! spread estimated below 1e-4 logits is reported as 0 (boundary). One start (method of moments),
//! plus two wider ones when the data have a diagnosis or are mostly all-or-none; the gradient at
//! the estimate is reported (`JointFit::gradient`, below 1e-6 when converged). Deterministic.
//!
//! # Intervals
//!
//! The observed information is the Hessian by central differences of the analytic gradient in
//! the natural parameters (mu, sigma, shift_m, tau_m) at the optimum; SE = sqrt of the diagonal
//! of its inverse, and the Wald interval is estimate +/- 1.96 SE. A profile-likelihood interval
//! {theta : 2 (l_hat - max_rest l(theta, rest)) <= 3.84} replaces it when
//! - the Hessian is not positive definite, or
//! - a sigma or tau whose Wald interval would cross 0 (at or near the boundary; the likelihood is
//!   even in sigma and tau, so the Wald interval is meaningless there). The profile's lower
//!   end is 0 when the profile drop at 0 is below 1.92.
//!
//! Each profile end is found by Newton steps on sqrt(2 drop) that move the other parameters too
//! (`profile/end.rs`), else by regula falsi over warm-started profile points. An end the profile
//! cannot reach within 60 logits of the estimate is reported as `None` (unbounded).
//!
//! # Identification and the weak prior
//!
//! Before fitting, [`diagnose`] checks the data for the three failures of issue #16:
//! - *all-or-none problems*: sigma is informed by problems with 0 < c < n for some model (an
//!   all-right or all-wrong problem only says "far from 0.5"); fewer than 5 such problems, or
//!   fewer than 20% of all problems, and sigma is flagged. A model with fewer than 5
//!   intermediate problems gets its tau flagged, and a model (or the reference) that is all right
//!   or all wrong on every problem gets its shift (mu) flagged: the estimate runs to infinity.
//! - *n = 1*: with one sample per problem a count is a single Bernoulli draw whose probability
//!   is E[expit(logit)]; the spread of the logits is not identified within a model, so sigma
//!   (when no model has n >= 2) and the tau of every model with n = 1 throughout are flagged.
//! - *too few problems* (N < 5): sigma and every tau are flagged.
//!
//! Each [`Diagnosis`] names the parameter, the reason and the data that would identify it. With
//! any diagnosis (and [`PriorMode::Auto`], the default), the fit maximises the penalised
//! log-likelihood l(theta) + ln prior(theta) instead and says so (`regularised`): independent
//! weak priors mu ~ N(0, 5^2), shift_m ~ N(0, 5^2), sigma ~ half-normal(3), tau_m ~
//! half-normal(3) (all in logits). Scale 3 allows rates from 0.05% to 99.95% two SDs out, so the
//! prior only bites where the data say nothing. The estimates are then posterior modes and the
//! intervals come from the penalised information (approximate posterior intervals), never a
//! plain ML fit. The math is in docs/fit.md.

use serde::{Deserialize, Serialize};

use crate::numerics::optimise::{bfgs, hessian_from_gradient, invert_spd, newton_minimise};

mod diagnose;
mod profile;

pub use diagnose::{diagnose, Diagnosis, Unidentified};
#[cfg(test)]
mod runs_tests;
use super::progress::FitEvent;
use crate::exact::joint_likelihood::{
    log_likelihood, log_likelihood_with_gradient, log_likelihood_with_hessian, JointData,
    JointGradient, JointLayout, JointParams,
};
use profile::profile_interval;

/// A sigma or tau estimate below this (logits) is reported as 0 (boundary).
const SPREAD_ZERO: f64 = 1e-4;
/// Half of the 95% chi-square(1) quantile: the profile drop at a 95% interval end.
const PROFILE_DROP: f64 = 1.920_729_410_347_062;
use crate::exact::normal::Z_95;

/// When the weak prior is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PriorMode {
    /// Only when [`diagnose`] flags a parameter (the default).
    Auto,
    /// Always (MAP).
    Always,
    /// Never (plain ML even when a parameter is not identified; estimates may run off).
    Never,
}

/// Weak prior of the regularised fit (all in logits).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Prior {
    /// SD of the normal prior on mu (mean 0).
    pub mu_sd: f64,
    /// SD of the normal prior on each shift (mean 0).
    pub shift_sd: f64,
    /// Scale of the half-normal prior on sigma.
    pub sigma_scale: f64,
    /// Scale of the half-normal prior on each tau.
    pub tau_scale: f64,
}

impl Default for Prior {
    fn default() -> Self {
        Prior {
            mu_sd: 5.0,
            shift_sd: 5.0,
            sigma_scale: 3.0,
            tau_scale: 3.0,
        }
    }
}

/// Options of [`fit_joint`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JointFitOptions {
    /// When to use the prior.
    pub prior_mode: PriorMode,
    /// The prior.
    pub prior: Prior,
    /// Parameters held at a given value (not estimated; absent from the estimates). The CLI
    /// holds a parameter the data do not identify at a documented fallback this way.
    pub fixed: Vec<(Parameter, f64)>,
}

impl Default for JointFitOptions {
    fn default() -> Self {
        JointFitOptions {
            prior_mode: PriorMode::Auto,
            prior: Prior::default(),
            fixed: Vec::new(),
        }
    }
}

/// Which parameter an estimate or diagnosis is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Parameter {
    /// mu.
    Mu,
    /// sigma.
    Sigma,
    /// shift of model m (m >= 1).
    Shift(usize),
    /// tau of model m.
    Tau(usize),
    /// omega (`run_sd`) of model m: per-run noise, with per-run data only.
    Omega(usize),
}

impl std::fmt::Display for Parameter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Parameter::Mu => write!(f, "mu"),
            Parameter::Sigma => write!(f, "sigma"),
            Parameter::Shift(m) => write!(f, "shift[{m}]"),
            Parameter::Tau(m) => write!(f, "tau[{m}]"),
            Parameter::Omega(m) => write!(f, "omega[{m}]"),
        }
    }
}

/// Kind of interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum IntervalKind {
    /// estimate +/- 1.96 SE from the observed information.
    Wald,
    /// Profile likelihood (drop 1.92).
    Profile,
    /// Profile likelihood whose search hit a cap: on some side the end is the last bracket end
    /// (farther from the estimate than the exact end) or open (`None`), or a profile point's
    /// optimisation stopped at its cap (that end may then be too close). Not exact; said so.
    ProfileCapped,
}

/// One estimated parameter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParamEstimate {
    /// Which parameter.
    pub parameter: Parameter,
    /// Estimate (natural scale; 0 at the sigma/tau boundary).
    pub value: f64,
    /// SE from the observed information (`None` if the Hessian is not positive definite).
    pub se: Option<f64>,
    /// Lower end of the 95% interval (`None`: unbounded).
    pub lower: Option<f64>,
    /// Upper end of the 95% interval (`None`: unbounded).
    pub upper: Option<f64>,
    /// How the interval was computed.
    pub interval: IntervalKind,
    /// sigma or tau at the floor of the search (reported as 0).
    pub at_boundary: bool,
}

/// Result of [`fit_joint`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JointFit {
    /// Models M.
    pub models: usize,
    /// Problems N.
    pub problems: usize,
    /// mu.
    pub mu: f64,
    /// sigma.
    pub sigma: f64,
    /// shift per model (entry 0 is 0).
    pub shift: Vec<f64>,
    /// tau per model (entry 0 is fixed at 0 with one model).
    pub tau: Vec<f64>,
    /// omega (`run_sd`) per model: 0 for data without runs.
    pub omega: Vec<f64>,
    /// Every free parameter: mu, sigma, shift[1..], tau[..], omega[..] (per-run data).
    pub estimates: Vec<ParamEstimate>,
    /// Covariance of the free natural parameters (inverse observed information), in the order
    /// of `estimates` (`None` if not positive definite); a spread estimated at its bound 0 is
    /// held there, its row and column 0 and the others' covariance conditional on it.
    pub covariance: Option<Vec<Vec<f64>>>,
    /// ln L at the estimate (unpenalised).
    pub log_likelihood: f64,
    /// True if the estimate is the MAP under [`Prior`], not the ML.
    pub regularised: bool,
    /// Parameters the data do not identify.
    pub diagnoses: Vec<Diagnosis>,
    /// Evaluations of the objective the fit spent (optimiser, information, profiles).
    #[serde(skip)]
    pub evaluations: usize,
    /// Largest |d objective / d parameter| over the free parameters at the estimate: below
    /// [`GRADIENT_TOLERANCE`] when the optimiser converged.
    #[serde(default)]
    pub gradient: f64,
    /// The objective (-ln L, penalised when regularised) each start reached, in start order.
    #[serde(default)]
    pub start_values: Vec<f64>,
}

/// The optimiser has converged when every component of the gradient is below this.
pub const GRADIENT_TOLERANCE: f64 = 1e-6;
/// A spread whose SE exceeds this fraction of its estimate gets a profile interval (the
/// likelihood is then far from quadratic in it).
const WEAK_RELATIVE_SE: f64 = 0.2;
/// Problems a model must share with another model for its shift_sd to be estimated.
pub const MIN_SHARED_PROBLEMS: usize = 5;

impl JointFit {
    /// The estimate of one parameter.
    pub fn estimate(&self, p: Parameter) -> Option<&ParamEstimate> {
        self.estimates.iter().find(|e| e.parameter == p)
    }

    /// Implied correlation of models a and b's per-problem logits,
    /// sigma^2 / sqrt((sigma^2 + tau_a^2)(sigma^2 + tau_b^2)), with its delta-method SE.
    pub fn correlation(&self, a: usize, b: usize) -> (f64, Option<f64>) {
        let (s, ta, tb) = (self.sigma, self.tau[a], self.tau[b]);
        let r = correlation(s, ta, tb);
        let Some(cov) = &self.covariance else {
            return (r, None);
        };
        // d r / d(sigma, tau_a, tau_b)
        let (va, vb) = (s * s + ta * ta, s * s + tb * tb);
        let d_sigma = r * (2.0 / s - s / va - s / vb);
        let d_ta = -r * ta / va;
        let d_tb = -r * tb / vb;
        let mut grad = vec![0.0; self.estimates.len()];
        for (i, e) in self.estimates.iter().enumerate() {
            match e.parameter {
                Parameter::Sigma => grad[i] += d_sigma,
                Parameter::Tau(m) if m == a && m == b => grad[i] += d_ta + d_tb,
                Parameter::Tau(m) if m == a => grad[i] += d_ta,
                Parameter::Tau(m) if m == b => grad[i] += d_tb,
                _ => {}
            }
        }
        let var: f64 = (0..grad.len())
            .map(|i| {
                (0..grad.len())
                    .map(|j| grad[i] * cov[i][j] * grad[j])
                    .sum::<f64>()
            })
            .sum();
        (r, (var.is_finite() && var >= 0.0).then(|| var.sqrt()))
    }
}

/// sigma^2 / sqrt((sigma^2 + tau_a^2)(sigma^2 + tau_b^2)); 1 when all three are 0.
pub fn correlation(sigma: f64, tau_a: f64, tau_b: f64) -> f64 {
    let s2 = sigma * sigma;
    let d = ((s2 + tau_a * tau_a) * (s2 + tau_b * tau_b)).sqrt();
    if d == 0.0 {
        1.0
    } else {
        s2 / d
    }
}

/// omega is refused when fewer problems than this have at least 2 runs of at least 2 samples.
pub const MIN_REPEATED_PROBLEMS: usize = 5;

/// Method-of-moments start of each model's omega: the mean over problems with two or more runs
/// of (variance of the runs' empirical logits - their mean sampling variance), floored at 0.3^2
/// (a spread started at 0 would stay there: the likelihood is even in omega).
fn moment_omegas(data: &JointData) -> Vec<f64> {
    let models = data.models();
    let Some(runs) = data.runs() else {
        return vec![0.0; models];
    };
    (0..models)
        .map(|m| {
            let (mut sum, mut k) = (0.0, 0.0);
            for row in &runs {
                let Some(list) = &row[m] else { continue };
                if list.len() < 2 {
                    continue;
                }
                let vals: Vec<(f64, f64)> = list
                    .iter()
                    .map(|c| {
                        let p = (c.correct as f64 + 0.5) / (c.samples as f64 + 1.0);
                        (
                            (p / (1.0 - p)).ln(),
                            1.0 / (c.samples as f64 * p * (1.0 - p)),
                        )
                    })
                    .collect();
                let r = vals.len() as f64;
                let mean = vals.iter().map(|v| v.0).sum::<f64>() / r;
                let var = vals.iter().map(|v| (v.0 - mean).powi(2)).sum::<f64>() / (r - 1.0);
                sum += var - vals.iter().map(|v| v.1).sum::<f64>() / r;
                k += 1.0;
            }
            let v = if k > 0.0 { sum / k } else { 0.0 };
            v.max(0.09).sqrt()
        })
        .collect()
}

/// Method-of-moments spreads, the optimiser's start: with l_{m,i} = logit((c + 1/2)/(n + 1))
/// and its sampling variance v = 1 / (n p (1 - p)), sigma^2 is the mean covariance of two
/// models' l over common problems (one model: var l - mean v) and tau_m^2 = var l_m - mean v_m
/// - sigma^2; each floored at 0.05^2 (the search works on logs).
fn moment_spreads(data: &JointData) -> (f64, Vec<f64>) {
    let models = data.models();
    let logit = |c: &crate::exact::joint_likelihood::Count| {
        let p = (c.correct as f64 + 0.5) / (c.samples as f64 + 1.0);
        (
            (p / (1.0 - p)).ln(),
            1.0 / (c.samples as f64 * p * (1.0 - p)),
        )
    };
    let mut var = vec![0.0; models];
    for (m, v) in var.iter_mut().enumerate() {
        let vals: Vec<(f64, f64)> = data
            .rows()
            .iter()
            .filter_map(|r| r[m])
            .map(|c| logit(&c))
            .collect();
        let k = vals.len() as f64;
        let mean = vals.iter().map(|x| x.0).sum::<f64>() / k;
        let noise = vals.iter().map(|x| x.1).sum::<f64>() / k;
        let raw = vals.iter().map(|x| (x.0 - mean).powi(2)).sum::<f64>() / (k - 1.0).max(1.0);
        *v = raw - noise;
    }
    let floor = 0.05f64 * 0.05;
    if models == 1 {
        return (var[0].max(floor).sqrt(), vec![floor.sqrt()]);
    }
    let (mut cov_sum, mut pairs) = (0.0, 0.0);
    for a in 0..models {
        for b in a + 1..models {
            let both: Vec<(f64, f64)> = data
                .rows()
                .iter()
                .filter_map(|r| Some((logit(&r[a]?).0, logit(&r[b]?).0)))
                .collect();
            if both.len() < 2 {
                continue;
            }
            let k = both.len() as f64;
            let (ma, mb) = (
                both.iter().map(|x| x.0).sum::<f64>() / k,
                both.iter().map(|x| x.1).sum::<f64>() / k,
            );
            cov_sum += both.iter().map(|x| (x.0 - ma) * (x.1 - mb)).sum::<f64>() / (k - 1.0);
            pairs += 1.0;
        }
    }
    let s2 = if pairs > 0.0 { cov_sum / pairs } else { var[0] }.max(floor);
    let taus = var.iter().map(|v| (v - s2).max(floor).sqrt()).collect();
    (s2.sqrt(), taus)
}

/// The free parameters and the objective (negative penalised log-likelihood).
struct Problem<'a> {
    data: &'a JointData,
    prior: Option<Prior>,
    layout: Vec<Parameter>,
    /// Parameters held fixed (not in `layout`).
    fixed: Vec<(Parameter, f64)>,
    /// Objective evaluations so far (the profile search's budget counts them).
    evaluations: std::cell::Cell<usize>,
    /// Set when a profile point's BFGS stopped at its iteration or evaluation cap (its profile
    /// value may then be above the true minimum, so an interval end may be too close).
    profile_capped: std::cell::Cell<bool>,
    /// Told of every evaluation and stage ([`FitEvent`]).
    progress: &'a dyn Fn(FitEvent),
}

#[cfg(test)]
impl<'a> Problem<'a> {
    /// The unpenalised objective of `data` over the parameters `layout`, nothing held fixed:
    /// what the tests evaluate at a fit's estimates.
    fn unpenalised(data: &'a JointData, layout: Vec<Parameter>) -> Self {
        Problem {
            data,
            prior: None,
            layout,
            fixed: Vec::new(),
            evaluations: std::cell::Cell::new(0),
            profile_capped: std::cell::Cell::new(false),
            progress: &|_| {},
        }
    }
}

impl Problem<'_> {
    /// Counts one objective evaluation and tells the progress observer.
    fn counted(&self) {
        self.evaluations.set(self.evaluations.get() + 1);
        (self.progress)(FitEvent::Evaluation);
    }

    fn params(&self, natural: &[f64]) -> JointParams {
        let m = self.data.models();
        let mut p = JointParams {
            mu: 0.0,
            sigma: 0.0,
            shift: vec![0.0; m],
            tau: vec![0.0; m],
            omega: if self.data.has_runs() {
                vec![0.0; m]
            } else {
                Vec::new()
            },
        };
        for (v, par) in self
            .fixed
            .iter()
            .map(|(p, v)| (v, p))
            .chain(natural.iter().zip(&self.layout))
        {
            match *par {
                Parameter::Mu => p.mu = *v,
                Parameter::Sigma => p.sigma = *v,
                Parameter::Shift(k) => p.shift[k] = *v,
                Parameter::Tau(k) => p.tau[k] = *v,
                Parameter::Omega(k) => p.omega[k] = *v,
            }
        }
        p
    }

    /// SD (or scale) of the prior of parameter `par`.
    fn prior_sd(prior: &Prior, par: &Parameter) -> f64 {
        match par {
            Parameter::Mu => prior.mu_sd,
            Parameter::Sigma => prior.sigma_scale,
            Parameter::Shift(_) => prior.shift_sd,
            Parameter::Tau(_) | Parameter::Omega(_) => prior.tau_scale,
        }
    }

    fn log_prior(&self, natural: &[f64]) -> f64 {
        let Some(prior) = self.prior else {
            return 0.0;
        };
        natural
            .iter()
            .zip(&self.layout)
            .map(|(v, par)| -0.5 * (v / Self::prior_sd(&prior, par)).powi(2))
            .sum()
    }

    /// -(ln L + ln prior) at natural parameters.
    fn objective(&self, natural: &[f64]) -> f64 {
        self.counted();
        let v = -(log_likelihood(self.data, &self.params(natural)) + self.log_prior(natural));
        if v.is_nan() {
            f64::INFINITY
        } else {
            v
        }
    }

    /// The objective's gradient in the layout's natural parameters from ln L's gradient `g`
    /// (the prior's term included).
    fn objective_gradient(&self, natural: &[f64], g: &JointGradient) -> Vec<f64> {
        natural
            .iter()
            .zip(&self.layout)
            .map(|(x, par)| {
                let d = match *par {
                    Parameter::Mu => g.mu,
                    Parameter::Sigma => g.sigma,
                    Parameter::Shift(k) => g.shift[k],
                    Parameter::Tau(k) => g.tau[k],
                    Parameter::Omega(k) => g.omega[k],
                };
                let dp = self
                    .prior
                    .map_or(0.0, |p| -x / Self::prior_sd(&p, par).powi(2));
                -(d + dp)
            })
            .collect()
    }

    /// [`Problem::objective`] and its gradient in the natural parameters.
    fn objective_grad(&self, natural: &[f64]) -> (f64, Vec<f64>) {
        self.counted();
        let (ll, g) = log_likelihood_with_gradient(self.data, &self.params(natural));
        let v = -(ll + self.log_prior(natural));
        let grad = self.objective_gradient(natural, &g);
        if v.is_nan() || grad.iter().any(|x| !x.is_finite()) {
            (f64::INFINITY, vec![0.0; natural.len()])
        } else {
            (v, grad)
        }
    }

    /// Hessian of [`Problem::objective`] in the natural parameters of the layout, from the
    /// analytic second derivatives (`log_likelihood_with_hessian`); `None` for a
    /// non-finite value (the caller then differences the gradient).
    fn objective_hessian(&self, natural: &[f64]) -> Option<Vec<Vec<f64>>> {
        self.objective_newton(natural).map(|(_, _, h)| h)
    }

    /// [`Problem::objective`], its gradient and its Hessian in the natural parameters of the
    /// layout, in one pass (`log_likelihood_with_hessian`); `None` for a
    /// non-finite value.
    fn objective_newton(&self, natural: &[f64]) -> Option<(f64, Vec<f64>, Vec<Vec<f64>>)> {
        self.counted();
        let (ll, g, h) = log_likelihood_with_hessian(self.data, &self.params(natural))?;
        let positions = self.data.layout();
        let index = |par: &Parameter| match *par {
            Parameter::Mu => Some(JointLayout::MU),
            Parameter::Sigma => Some(JointLayout::SIGMA),
            Parameter::Shift(k) => Some(positions.shift(k)),
            Parameter::Tau(k) => Some(positions.tau(k)),
            Parameter::Omega(k) => positions.omega(k),
        };
        let at: Vec<usize> = self.layout.iter().map(index).collect::<Option<_>>()?;
        let value = -(ll + self.log_prior(natural));
        let gradient = self.objective_gradient(natural, &g);
        let out: Vec<Vec<f64>> = self
            .layout
            .iter()
            .enumerate()
            .map(|(i, par)| {
                let prior = self.prior.map_or(0.0, |p| Self::prior_sd(&p, par).powi(-2));
                at.iter()
                    .enumerate()
                    .map(|(j, &b)| -h[at[i]][b] + if i == j { prior } else { 0.0 })
                    .collect()
            })
            .collect();
        let finite = value.is_finite()
            && gradient.iter().all(|v| v.is_finite())
            && out.iter().flatten().all(|v| v.is_finite());
        finite.then_some((value, gradient, out))
    }

    /// Minimum by Newton's method with the analytic Hessian from `start` (internal
    /// parameters, every spread > 0), each step backtracked until it lowers the objective by
    /// the Armijo fraction; stops when the predicted decrease g' H^-1 g / 2 falls below
    /// 1e-15 (1 + |f|) (a thousandth of the criterion [`bfgs`] uses: Newton's quadratic
    /// convergence reaches it in one more step), or when no step lowers f (the objective
    /// resolved to its quadrature noise). Where the Hessian is not positive definite the step
    /// is damped ([`crate::numerics::optimise::damped_inverse`]). `None` (the caller then runs BFGS) for
    /// a non-finite value, or no convergence in 60 steps. From the moments it converges in a handful of
    /// steps, each one pass that costs about 1.25 gradient evaluations.
    fn minimise_newton(&self, start: &[f64]) -> Option<(Vec<f64>, f64)> {
        self.minimise_newton_at(start, None)
    }

    /// [`Problem::minimise_newton`] holding parameter `fixed.0` at the natural value
    /// `fixed.1` (a profile point): [`newton_minimise`] on the other parameters, each spread
    /// bounded below by 0 (at most [`SPREAD_ZERO`] counts as at the bound).
    fn minimise_newton_at(
        &self,
        start: &[f64],
        fixed: Option<(usize, f64)>,
    ) -> Option<(Vec<f64>, f64)> {
        let spreads: Vec<bool> = (0..start.len()).map(|i| self.is_spread(i)).collect();
        newton_minimise(
            &|x| self.objective_newton(x),
            start,
            fixed,
            &spreads,
            SPREAD_ZERO,
        )
    }

    fn is_spread(&self, i: usize) -> bool {
        matches!(
            self.layout[i],
            Parameter::Sigma | Parameter::Tau(_) | Parameter::Omega(_)
        )
    }

    /// Natural parameters of the internal ones: a spread is |t| (the likelihood is even and
    /// smooth in sigma and tau, so 0 is an interior point of t and needs no floor); the
    /// others are themselves.
    fn to_natural(&self, internal: &[f64]) -> Vec<f64> {
        internal
            .iter()
            .enumerate()
            .map(|(i, &t)| if self.is_spread(i) { t.abs() } else { t })
            .collect()
    }

    /// Minimum over the internal parameters from `start` by BFGS, holding `fixed`
    /// (index, natural value) if given; returns the internal minimiser (with the fixed
    /// entry set) and the objective.
    fn minimise(
        &self,
        start: &[f64],
        fixed: Option<(usize, f64)>,
        max_iterations: usize,
        max_evaluations: usize,
    ) -> (Vec<f64>, f64) {
        let free: Vec<usize> = (0..self.layout.len())
            .filter(|&i| fixed.is_none_or(|(k, _)| k != i))
            .collect();
        let mut base = start.to_vec();
        if let Some((k, v)) = fixed {
            base[k] = v;
        }
        let full = |x: &[f64]| -> Vec<f64> {
            let mut internal = base.clone();
            for (&i, &v) in free.iter().zip(x) {
                internal[i] = v;
            }
            internal
        };
        let f = |x: &[f64]| -> (f64, Vec<f64>) {
            let internal = full(x);
            let (v, g) = self.objective_grad(&self.to_natural(&internal));
            let g = free
                .iter()
                .map(|&i| {
                    if self.is_spread(i) {
                        // d/dt of f(|t|); at t = 0 the derivative is 0 by symmetry
                        g[i] * if internal[i] < 0.0 { -1.0 } else { 1.0 }
                    } else {
                        g[i]
                    }
                })
                .collect();
            (v, g)
        };
        let x0: Vec<f64> = free.iter().map(|&i| base[i]).collect();
        if x0.is_empty() {
            let v = self.objective(&self.to_natural(&base));
            return (base, v);
        }
        let (x, v, capped) = bfgs(&f, &x0, max_iterations, max_evaluations);
        if capped && fixed.is_some() {
            self.profile_capped.set(true);
        }
        (full(&x), v)
    }
}

/// logit of a rate clamped to [0.5/n, 1 - 0.5/n] style bounds.
fn logit_of(correct: f64, samples: f64) -> f64 {
    let p = (correct + 0.5) / (samples + 1.0);
    (p / (1.0 - p)).ln()
}

/// Fits the joint model (module doc). Cost: for pooled counts, a handful of Newton steps (each
/// one pass of the likelihood with its gradient and Hessian, `exact::joint_likelihood`) per
/// start, else a few dozen BFGS evaluations of the likelihood and its gradient; one Hessian
/// pass for the information; and three to five such passes per profile interval end (more
/// where the direct search gives way to the bracketed one).
pub fn fit_joint(data: &JointData, options: &JointFitOptions) -> JointFit {
    fit_joint_observed(data, options, &|_| {})
}

/// [`fit_joint`], telling `progress` of every evaluation and stage (for a progress bar:
/// [`super::progress::FitEta`]).
pub fn fit_joint_observed(
    data: &JointData,
    options: &JointFitOptions,
    progress: &dyn Fn(FitEvent),
) -> JointFit {
    let models = data.models();
    let diagnoses = diagnose(data);
    let is_fixed = |p: Parameter| options.fixed.iter().any(|(q, _)| *q == p);
    let regularised = match options.prior_mode {
        PriorMode::Auto => diagnoses.iter().any(|d| !is_fixed(d.parameter)),
        PriorMode::Always => true,
        PriorMode::Never => false,
    };
    let mut layout = vec![Parameter::Mu, Parameter::Sigma];
    layout.extend((1..models).map(Parameter::Shift));
    if models > 1 {
        layout.extend((0..models).map(Parameter::Tau));
    }
    if data.has_runs() {
        layout.extend((0..models).map(Parameter::Omega));
    }
    layout.retain(|p| !is_fixed(*p));
    let problem = Problem {
        data,
        prior: regularised.then_some(options.prior),
        layout,
        fixed: options.fixed.clone(),
        evaluations: std::cell::Cell::new(0),
        profile_capped: std::cell::Cell::new(false),
        progress,
    };
    let (best, start_values) = problem.minimise_from_starts(diagnoses.is_empty());
    let mut natural = problem.to_natural(&best);
    let at_boundary: Vec<bool> = (0..natural.len())
        .map(|i| problem.is_spread(i) && natural[i] < SPREAD_ZERO)
        .collect();
    for (i, b) in at_boundary.iter().enumerate() {
        if *b {
            natural[i] = 0.0;
        }
    }
    let covariance = problem.covariance(&natural, &at_boundary);
    let opt_value = problem.objective(&natural);
    let gradient = problem
        .objective_grad(&natural)
        .1
        .iter()
        .fold(0.0f64, |m, v| m.max(v.abs()));
    let estimates = problem.estimates(
        &best,
        &natural,
        &at_boundary,
        covariance.as_ref(),
        opt_value,
    );
    let params = problem.params(&natural);
    let log_likelihood = log_likelihood(data, &params);
    JointFit {
        models,
        problems: data.problems(),
        mu: params.mu,
        sigma: params.sigma,
        shift: params.shift,
        tau: params.tau,
        omega: if params.omega.is_empty() {
            vec![0.0; models]
        } else {
            params.omega
        },
        estimates,
        covariance,
        log_likelihood,
        regularised,
        diagnoses,
        evaluations: problem.evaluations.get(),
        gradient,
        start_values,
    }
}

impl Problem<'_> {
    /// The starts in internal parameters: the method-of-moments start (pooled logits and the
    /// moment spreads), and wider ones in case the moments mislead (all-or-none counts make the
    /// empirical logits' spread too small, and the surface is flat there).
    fn starts(&self) -> Vec<Vec<f64>> {
        let data = self.data;
        let pooled = |m: usize| {
            let (c, n) = data
                .rows()
                .iter()
                .filter_map(|r| r[m])
                .fold((0.0, 0.0), |(c, n), x| {
                    (c + x.correct as f64, n + x.samples as f64)
                });
            logit_of(c, n)
        };
        let (sigma0, tau0) = moment_spreads(data);
        let omega0 = moment_omegas(data);
        let base: Vec<f64> = self
            .layout
            .iter()
            .map(|p| match *p {
                Parameter::Mu => pooled(0),
                Parameter::Sigma => sigma0,
                Parameter::Shift(m) => pooled(m) - pooled(0),
                Parameter::Tau(m) => tau0[m],
                Parameter::Omega(m) => omega0[m],
            })
            .collect();
        [(1.0, 1.0), (2.0, 1.0), (4.0, 2.0)]
            .iter()
            .map(|&(ds, dt)| {
                base.iter()
                    .zip(&self.layout)
                    .map(|(&v, p)| match p {
                        Parameter::Sigma => v * ds,
                        Parameter::Tau(_) => v * dt,
                        _ => v,
                    })
                    .collect()
            })
            .collect()
    }

    /// The best minimum over the starts (one suffices for data without a diagnosis and mostly
    /// intermediate counts; the wider starts are for mostly all-or-none data), each by Newton
    /// with the analytic Hessian where it applies (pooled counts, spreads inside), else BFGS;
    /// polished when not converged (a flat surface, or BFGS resolved only to its line search)
    /// by Newton, then BFGS, keeping whatever lowers the objective. Returns the internal
    /// minimiser and each start's objective.
    fn minimise_from_starts(&self, no_diagnosis: bool) -> (Vec<f64>, Vec<f64>) {
        let starts = self.starts();
        let intermediate = self
            .data
            .rows()
            .iter()
            .filter(|r| r.iter().flatten().any(|c| c.is_intermediate()))
            .count();
        let used = if no_diagnosis && 2 * intermediate >= self.data.problems() {
            1
        } else {
            starts.len()
        };
        let (mut best, mut best_v) = (starts[0].clone(), f64::INFINITY);
        let mut start_values = Vec::with_capacity(used);
        (self.progress)(FitEvent::Starts {
            starts: used,
            spreads: (0..self.layout.len())
                .filter(|&i| self.is_spread(i))
                .count(),
        });
        for s in &starts[..used] {
            let (x, v) = self
                .minimise_newton(s)
                .unwrap_or_else(|| self.minimise(s, None, 500, usize::MAX));
            start_values.push(v);
            (self.progress)(FitEvent::StartDone);
            if v < best_v {
                best = x;
                best_v = v;
            }
        }
        let gradient_at = |x: &[f64]| -> f64 {
            let g = self.objective_grad(&self.to_natural(x)).1;
            g.iter().fold(0.0f64, |m, v| m.max(v.abs()))
        };
        if gradient_at(&best) > GRADIENT_TOLERANCE {
            let polished = self
                .minimise_newton(&best)
                .filter(|(x, _)| gradient_at(x) <= GRADIENT_TOLERANCE)
                .unwrap_or_else(|| self.minimise(&best, None, 1000, usize::MAX));
            if polished.1 <= best_v {
                best = polished.0;
            }
        }
        (best, start_values)
    }

    /// The inverse of the observed information at the estimate `natural` (analytic for pooled
    /// counts, else central differences of the gradient). A spread at its bound 0 is held
    /// there: the others' covariance is conditional on it, and its own row and column are 0
    /// (its interval is a profile). `None` when the information is not positive definite.
    fn covariance(&self, natural: &[f64], at_boundary: &[bool]) -> Option<Vec<Vec<f64>>> {
        let info = self.objective_hessian(natural).unwrap_or_else(|| {
            let gradient_nat = |x: &[f64]| self.objective_grad(x).1;
            let steps: Vec<f64> = natural.iter().map(|v| 5e-4 * (1.0 + v.abs())).collect();
            hessian_from_gradient(&gradient_nat, natural, &steps)
        });
        let keep: Vec<usize> = (0..natural.len()).filter(|&i| !at_boundary[i]).collect();
        invert_spd(
            &keep
                .iter()
                .map(|&i| keep.iter().map(|&j| info[i][j]).collect())
                .collect::<Vec<Vec<f64>>>(),
        )
        .map(|c| {
            let mut full = vec![vec![0.0; natural.len()]; natural.len()];
            for (a, &i) in keep.iter().enumerate() {
                for (b, &j) in keep.iter().enumerate() {
                    full[i][j] = c[a][b];
                }
            }
            full
        })
    }

    /// Each parameter's estimate with its SE and interval: Wald where the SE exists and (for a
    /// spread) the interval stays clear of 0 and the SE is not weak, else the profile interval
    /// from the internal minimiser `best` at objective `opt_value`.
    fn estimates(
        &self,
        best: &[f64],
        natural: &[f64],
        at_boundary: &[bool],
        covariance: Option<&Vec<Vec<f64>>>,
        opt_value: f64,
    ) -> Vec<ParamEstimate> {
        let ses: Vec<Option<f64>> = (0..natural.len())
            .map(|i| {
                covariance
                    .map(|c| c[i][i])
                    .filter(|v| v.is_finite() && *v > 0.0)
                    .map(f64::sqrt)
            })
            .collect();
        let wald: Vec<bool> = (0..natural.len())
            .map(|i| match ses[i] {
                Some(se) => {
                    let value = natural[i];
                    !self.is_spread(i)
                        || (value - Z_95 * se > 0.0 && se <= WEAK_RELATIVE_SE * value)
                }
                None => false,
            })
            .collect();
        (self.progress)(FitEvent::Profiles(wald.iter().filter(|w| !**w).count()));
        // how the other parameters move with parameter i along its profile, to first order:
        // Cov[., i] / Var[i] (the profile points' warm starts; none without a covariance)
        let slope = |i: usize| -> Vec<f64> {
            covariance.filter(|c| c[i][i] > 0.0).map_or_else(
                || vec![0.0; natural.len()],
                |c| c.iter().map(|row| row[i] / c[i][i]).collect(),
            )
        };
        (0..natural.len())
            .map(|i| {
                let (value, se, wald_ok) = (natural[i], ses[i], wald[i]);
                let (lower, upper, interval) = if wald_ok {
                    let se = se.unwrap_or(0.0);
                    (
                        Some(value - Z_95 * se),
                        Some(value + Z_95 * se),
                        IntervalKind::Wald,
                    )
                } else {
                    let (lo, hi, capped) =
                        profile_interval(self, best, natural, i, opt_value, se, &slope(i));
                    (self.progress)(FitEvent::ProfileDone);
                    let kind = if capped {
                        IntervalKind::ProfileCapped
                    } else {
                        IntervalKind::Profile
                    };
                    (lo, hi, kind)
                };
                ParamEstimate {
                    parameter: self.layout[i],
                    value,
                    se,
                    lower,
                    upper,
                    interval,
                    at_boundary: at_boundary[i],
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::joint_likelihood::{log_likelihood_with_gradient, Count};
    use rand::{Rng, SeedableRng};
    use rand_distr::{Binomial, Distribution, StandardNormal};
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// Counts simulated from the joint model (tests only construct generators).
    fn simulate(
        seed: u64,
        problems: usize,
        samples: u64,
        mu: f64,
        sigma: f64,
        shift: &[f64],
        tau: &[f64],
    ) -> JointData {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let rows = (0..problems)
            .map(|_| {
                let z: f64 = mu + sigma * rng.sample::<f64, _>(StandardNormal);
                shift
                    .iter()
                    .zip(tau)
                    .map(|(s, t)| {
                        let e: f64 = rng.sample(StandardNormal);
                        let p = 1.0 / (1.0 + (-(z + s + t * e)).exp());
                        let c = Binomial::new(samples, p).unwrap().sample(&mut rng);
                        Some(Count::new(c as usize, samples as usize))
                    })
                    .collect()
            })
            .collect();
        JointData::new(shift.len(), rows).unwrap()
    }

    fn rows_of(counts: &[(usize, usize)]) -> JointData {
        JointData::new(
            1,
            counts
                .iter()
                .map(|&(c, n)| vec![Some(Count::new(c, n))])
                .collect(),
        )
        .unwrap()
    }

    /// Two models, N = 200, n = 16 (about a second since the gradient and BFGS).
    #[test]
    fn joint_fit_recovers_two_models_within_four_se() {
        recover(&[0.0, -0.7], &[0.6, 1.0]);
    }

    #[test]
    fn joint_fit_recovers_one_model_within_four_se() {
        recover(&[0.0], &[0.0]);
    }

    fn recover(shift: &[f64], tau: &[f64]) {
        let (mu, sigma) = (0.3, 1.5);
        let data = simulate(16, 200, 16, mu, sigma, shift, tau);
        let fit = fit_joint(&data, &JointFitOptions::default());
        assert!(!fit.regularised, "{:?}", fit.diagnoses);
        let truth = |p: Parameter| match p {
            Parameter::Mu => mu,
            Parameter::Sigma => sigma,
            Parameter::Shift(m) => shift[m],
            Parameter::Tau(m) => tau[m],
            Parameter::Omega(_) => 0.0,
        };
        for e in &fit.estimates {
            let se = e.se.expect("positive definite information");
            let z = (e.value - truth(e.parameter)) / se;
            println!(
                "{}: {:.3} +/- {:.3} (truth {}, z {z:.2})",
                e.parameter,
                e.value,
                se,
                truth(e.parameter)
            );
            assert!(z.abs() < 4.0, "{}: z = {z}", e.parameter);
        }
        if shift.len() < 2 {
            return;
        }
        let (r, r_se) = fit.correlation(0, 1);
        let r_true = correlation(sigma, tau[0], tau[1]);
        let r_se = r_se.unwrap();
        println!("correlation {r:.3} +/- {r_se:.3} (truth {r_true:.3})");
        assert!(((r - r_true) / r_se).abs() < 4.0);
    }

    /// Issue #16's speed target: 3 models x 500 problems x 64 samples. Prints the time of one
    /// likelihood evaluation and of the whole fit:
    /// `cargo test --release --lib joint_fit_speed_3x500x64 -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn joint_fit_speed_3x500x64() {
        let data = simulate(5, 500, 64, 0.2, 1.5, &[0.0, -0.4, 0.3], &[0.5, 0.8, 0.6]);
        let p = JointParams {
            mu: 0.2,
            sigma: 1.5,
            shift: vec![0.0, -0.4, 0.3],
            tau: vec![0.5, 0.8, 0.6],
            omega: Vec::new(),
        };
        let t = std::time::Instant::now();
        let reps = 20;
        for _ in 0..reps {
            std::hint::black_box(log_likelihood(&data, &p));
        }
        let per_eval = t.elapsed().as_secs_f64() / reps as f64;
        let t = std::time::Instant::now();
        for _ in 0..reps {
            std::hint::black_box(log_likelihood_with_gradient(&data, &p));
        }
        let per_grad = t.elapsed().as_secs_f64() / reps as f64;
        let t = std::time::Instant::now();
        for _ in 0..reps {
            std::hint::black_box(log_likelihood_with_hessian(&data, &p));
        }
        let per_hess = t.elapsed().as_secs_f64() / reps as f64;
        println!(
            "one ln L evaluation {:.2} ms, with gradient {:.2} ms, with Hessian {:.2} ms",
            per_eval * 1e3,
            per_grad * 1e3,
            per_hess * 1e3
        );
        let t = std::time::Instant::now();
        let fit = fit_joint(&data, &JointFitOptions::default());
        let total = t.elapsed().as_secs_f64();
        println!(
            "fit {total:.3} s ({:.0} gradient evaluations' worth, {} evaluations); mu {:.3} sigma {:.3} shifts {:?} taus {:?}",
            total / per_grad,
            fit.evaluations,
            fit.mu,
            fit.sigma,
            fit.shift,
            fit.tau
        );
        for e in &fit.estimates {
            println!(
                "{}: {:.4} [{:?}, {:?}] {:?}",
                e.parameter, e.value, e.lower, e.upper, e.interval
            );
        }
    }

    /// The observed information from the analytic Hessian against the central differences of
    /// the gradient it replaced (step 5e-4 (1 + |v|)), at a three-model fit with one tau near
    /// 0: the standard errors agree to the differences' truncation error.
    /// Counts shaped like code benchmarks (n = 10, sigma 10 to 12, shift_sd 2 to 6, most
    /// counts 0 or 10; 800 problems x 2 models and 400 x 3): the fit reaches a gradient below
    /// 1e-6, and a second optimiser (plain BFGS on -ln L from another start) reaches the same
    /// maximum and the same estimates to 1e-3 SE. The fit used to stop with a gradient of 0.7
    /// to 1.7 on such data. Prints each fit's time (not asserted: measured with farm-bench).
    #[test]
    fn fit_of_all_or_none_code_benchmarks_stopped_with_a_gradient_near_one() {
        for (seed, problems, sigma, shift, tau) in [
            (36u64, 800usize, 12.0, vec![0.0, 0.8], vec![4.0, 2.5]),
            (37, 400, 10.0, vec![0.0, -1.5, -4.0], vec![6.0, 3.0, 2.0]),
        ] {
            let data = simulate(seed, problems, 10, 0.0, sigma, &shift, &tau);
            let all_or_none = data
                .rows()
                .iter()
                .filter(|r| r.iter().flatten().all(|c| !c.is_intermediate()))
                .count();
            let clock = std::time::Instant::now();
            let fit = fit_joint(&data, &JointFitOptions::default());
            let seconds = clock.elapsed().as_secs_f64();
            println!(
                "{problems} problems x {} models, {all_or_none} all-or-none: ln L {:.6}, gradient {:.1e}, starts {:?}, {} evaluations, {seconds:.2} s",
                shift.len(),
                fit.log_likelihood,
                fit.gradient,
                fit.start_values,
                fit.evaluations
            );
            assert!(2 * all_or_none > problems);
            let at = JointParams {
                mu: fit.mu,
                sigma: fit.sigma,
                shift: fit.shift.clone(),
                tau: fit.tau.clone(),
                omega: Vec::new(),
            };
            let clock = std::time::Instant::now();
            let _ = log_likelihood(&data, &at);
            let value = clock.elapsed().as_secs_f64();
            let _ = log_likelihood_with_gradient(&data, &at);
            let gradient = clock.elapsed().as_secs_f64() - value;
            let _ = log_likelihood_with_hessian(&data, &at);
            let hessian = clock.elapsed().as_secs_f64() - value - gradient;
            println!("one evaluation: value {value:.3} s, gradient {gradient:.3} s, Hessian {hessian:.3} s");
            assert!(!fit.regularised, "{:?}", fit.diagnoses);
            assert!(fit.gradient < GRADIENT_TOLERANCE, "{}", fit.gradient);
            let m = shift.len();
            let unpack = |x: &[f64]| JointParams {
                mu: x[0],
                sigma: x[1].abs(),
                shift: std::iter::once(0.0)
                    .chain(x[2..1 + m].iter().copied())
                    .collect(),
                tau: x[1 + m..].iter().map(|t| t.abs()).collect(),
                omega: Vec::new(),
            };
            let f = |x: &[f64]| -> (f64, Vec<f64>) {
                let (v, g) = log_likelihood_with_gradient(&data, &unpack(x));
                let mut d = vec![-g.mu, -g.sigma * x[1].signum()];
                d.extend(g.shift[1..].iter().map(|v| -v));
                d.extend(g.tau.iter().zip(&x[1 + m..]).map(|(v, t)| -v * t.signum()));
                (-v, d)
            };
            let mut start = vec![0.5, 0.7 * sigma];
            start.extend(&shift[1..]);
            start.extend(tau.iter().map(|t| 1.3 * t));
            let (x, v, _) = bfgs(&f, &start, 5000, usize::MAX);
            println!(
                "second optimiser (BFGS): -ln L {v:.9}, the fit's {:.9}",
                -fit.log_likelihood
            );
            assert!(
                (v + fit.log_likelihood).abs() < 1e-6,
                "{v} vs {}",
                fit.log_likelihood
            );
            let other = unpack(&x);
            for e in &fit.estimates {
                let theirs = match e.parameter {
                    Parameter::Mu => other.mu,
                    Parameter::Sigma => other.sigma,
                    Parameter::Shift(k) => other.shift[k],
                    Parameter::Tau(k) => other.tau[k],
                    Parameter::Omega(_) => 0.0,
                };
                if e.at_boundary {
                    // held at the bound 0: BFGS creeps towards it (ln L is flat, even there)
                    println!(
                        "{}: at the bound 0 (BFGS {theirs:.4}), 95% profile {:?} to {:?}",
                        e.parameter, e.lower, e.upper
                    );
                    assert!(theirs < 0.5 && e.lower == Some(0.0) && e.upper.is_some());
                    continue;
                }
                let se = e.se.expect("an SE for every parameter off its bound");
                println!(
                    "{}: {:.6} (BFGS {theirs:.6}), SE {se:.4}, 95% {:?} {:?} to {:?}",
                    e.parameter, e.value, e.interval, e.lower, e.upper
                );
                assert!((e.value - theirs).abs() < 1e-2 * se, "{}", e.parameter);
            }
        }
    }

    #[test]
    fn analytic_information_matches_the_differenced_one() {
        let data = simulate(11, 100, 16, 0.3, 1.2, &[0.0, -0.5, 0.4], &[0.6, 0.9, 0.0]);
        let fit = fit_joint(&data, &JointFitOptions::default());
        assert!(fit.diagnoses.is_empty() && !fit.regularised);
        let problem =
            Problem::unpenalised(&data, fit.estimates.iter().map(|e| e.parameter).collect());
        let natural: Vec<f64> = fit.estimates.iter().map(|e| e.value).collect();
        let analytic = problem.objective_hessian(&natural).expect("pooled counts");
        let gradient = |x: &[f64]| problem.objective_grad(x).1;
        let steps: Vec<f64> = natural.iter().map(|v| 5e-4 * (1.0 + v.abs())).collect();
        let differenced = hessian_from_gradient(&gradient, &natural, &steps);
        let (a, d) = (
            invert_spd(&analytic).expect("positive definite"),
            invert_spd(&differenced).expect("positive definite"),
        );
        let mut worst = 0.0f64;
        for (i, e) in fit.estimates.iter().enumerate() {
            let (sa, sd) = (a[i][i].sqrt(), d[i][i].sqrt());
            println!("{}: SE analytic {sa:.9} differenced {sd:.9}", e.parameter);
            worst = worst.max((sa / sd - 1.0).abs());
            assert_eq!(e.se, Some(sa));
        }
        println!("largest relative SE difference {worst:.2e}");
        assert!(worst < 1e-5, "{worst}");
    }

    #[test]
    fn newton_reaches_the_bfgs_optimum_in_fewer_evaluations() {
        let data = simulate(11, 100, 16, 0.3, 1.2, &[0.0, -0.5, 0.4], &[0.6, 0.9, 0.4]);
        let problem = Problem::unpenalised(
            &data,
            vec![
                Parameter::Mu,
                Parameter::Sigma,
                Parameter::Shift(1),
                Parameter::Shift(2),
                Parameter::Tau(0),
                Parameter::Tau(1),
                Parameter::Tau(2),
            ],
        );
        let start = [0.2, 1.0, -0.3, 0.3, 0.5, 0.5, 0.5];
        let (xn, fnewton) = problem.minimise_newton(&start).expect("pooled counts");
        let newton_evaluations = problem.evaluations.replace(0);
        let (xb, fbfgs) = problem.minimise(&start, None, 500, usize::MAX);
        let bfgs_evaluations = problem.evaluations.get();
        // Newton's optimum is at least as low, and the two agree within BFGS's own stopping
        // tolerance (a predicted decrease of 1e-12 (1 + |f|), so about 1e-5 in the parameters).
        assert!(
            fnewton <= fbfgs + 1e-9 * fbfgs.abs(),
            "{fnewton} vs {fbfgs}"
        );
        for (a, b) in xn.iter().zip(&xb) {
            assert!((a - b).abs() < 1e-4, "{xn:?} vs {xb:?}");
        }
        // At Newton's optimum the gradient vanishes to the quadrature's resolution.
        let (_, g) = problem.objective_grad(&xn);
        assert!(g.iter().all(|v| v.abs() < 1e-6), "{g:?}");
        assert!(
            newton_evaluations < bfgs_evaluations,
            "{newton_evaluations} vs {bfgs_evaluations}"
        );
    }

    #[test]
    fn joint_fit_is_deterministic() {
        let data = simulate(3, 40, 8, -0.5, 1.0, &[0.0], &[0.0]);
        let a = fit_joint(&data, &JointFitOptions::default());
        let b = fit_joint(&data, &JointFitOptions::default());
        assert_eq!(a, b);
    }

    #[test]
    fn all_or_none_problems_flag_sigma_and_regularise() {
        // the human-eval shape: 160 of 164 problems all right or all wrong
        let mut counts = vec![(10, 10); 100];
        counts.extend(vec![(0, 10); 60]);
        counts.extend([(3, 10), (5, 10), (7, 10), (9, 10)]);
        let fit = fit_joint(&rows_of(&counts), &JointFitOptions::default());
        assert!(fit.diagnoses.iter().any(|d| d.parameter == Parameter::Sigma
            && d.reason
                == Unidentified::AllOrNone {
                    informative: 4,
                    problems: 164
                }));
        assert!(fit.regularised);
        assert!(fit.sigma.is_finite() && fit.mu.is_finite());
        println!("{} sigma {}", fit.diagnoses[0], fit.sigma);
    }

    #[test]
    fn four_problems_flag_sigma_as_too_few() {
        let fit = fit_joint(
            &rows_of(&[(2, 8), (5, 8), (8, 8), (1, 8)]),
            &JointFitOptions::default(),
        );
        assert_eq!(
            fit.diagnoses[0].reason,
            Unidentified::TooFewProblems { problems: 4 }
        );
        assert!(fit.regularised && fit.sigma.is_finite() && fit.mu.is_finite());
    }

    #[test]
    fn one_all_right_problem_flags_mu_and_sigma() {
        let fit = fit_joint(&rows_of(&[(16, 16)]), &JointFitOptions::default());
        let flagged: Vec<Parameter> = fit.diagnoses.iter().map(|d| d.parameter).collect();
        assert!(flagged.contains(&Parameter::Mu) && flagged.contains(&Parameter::Sigma));
        assert!(fit.regularised && fit.mu.is_finite() && fit.mu < 20.0 && fit.sigma.is_finite());
    }

    #[test]
    fn one_sample_per_problem_flags_sigma() {
        let counts: Vec<(usize, usize)> = (0..40).map(|i| (i % 3 % 2, 1)).collect();
        let fit = fit_joint(&rows_of(&counts), &JointFitOptions::default());
        assert_eq!(fit.diagnoses[0].reason, Unidentified::OneSamplePerProblem);
        assert!(fit.regularised && fit.sigma.is_finite());
    }

    /// Truth of a coverage study: (mu, sigma, shifts, taus).
    struct Truth {
        mu: f64,
        sigma: f64,
        shift: Vec<f64>,
        tau: Vec<f64>,
    }

    impl Truth {
        fn of(&self, p: Parameter) -> f64 {
            match p {
                Parameter::Mu => self.mu,
                Parameter::Sigma => self.sigma,
                Parameter::Shift(m) => self.shift[m],
                Parameter::Tau(m) => self.tau[m],
                Parameter::Omega(_) => 0.0,
            }
        }
    }

    /// Per parameter: covered, data sets used.
    type Coverage = Vec<(Parameter, usize, usize)>;

    /// Coverage of every parameter's 95% interval over `sets` data sets simulated from `truth`
    /// with N = `problems`, n = `samples` (seeds 1000, 1001, ...): per parameter, (covered,
    /// data sets where the fit claimed it identified). A data set with a diagnosis is fitted
    /// regularised, so its intervals are not ML intervals: it counts for no parameter.
    fn coverage(
        truth: &Truth,
        problems: usize,
        samples: u64,
        sets: u64,
    ) -> Vec<(Parameter, usize, usize)> {
        let mut out: Vec<(Parameter, usize, usize)> = Vec::new();
        for seed in 0..sets {
            let data = simulate(
                1000 + seed,
                problems,
                samples,
                truth.mu,
                truth.sigma,
                &truth.shift,
                &truth.tau,
            );
            let fit = fit_joint(&data, &JointFitOptions::default());
            if out.is_empty() {
                out = fit.estimates.iter().map(|e| (e.parameter, 0, 0)).collect();
            }
            if fit.regularised {
                continue;
            }
            for (e, row) in fit.estimates.iter().zip(out.iter_mut()) {
                let t = truth.of(e.parameter);
                row.2 += 1;
                if e.lower.is_none_or(|l| l <= t) && e.upper.is_none_or(|u| t <= u) {
                    row.1 += 1;
                }
            }
        }
        out
    }

    /// Prints the coverage table and asserts each parameter's count is not below 95% by more
    /// than 3 binomial SDs (the bound from the SE of a coverage proportion).
    fn assert_coverage(name: &str, rows: &[(Parameter, usize, usize)]) {
        for &(p, covered, used) in rows {
            let n = used as f64;
            let rate = covered as f64 / n;
            let se = (0.95 * 0.05 / n).sqrt();
            println!(
                "{name}: {p}: {covered}/{used} = {:.1}% (95% +/- {:.1} points at 2 SE)",
                100.0 * rate,
                200.0 * se
            );
            assert!(used > 0, "{name}: {p}: no identified fit");
            let bound = n * 0.95 - 3.0 * (n * 0.95 * 0.05).sqrt();
            assert!(covered as f64 >= bound, "{name}: {p}: {covered}/{used}");
        }
    }

    fn one_model() -> Truth {
        Truth {
            mu: 0.5,
            sigma: 1.2,
            shift: vec![0.0],
            tau: vec![0.0],
        }
    }

    fn three_models() -> Truth {
        Truth {
            mu: 0.3,
            sigma: 1.2,
            shift: vec![0.0, -0.5, 0.4],
            tau: vec![0.6, 0.9, 0.6],
        }
    }

    /// 40 data sets of one model (N = 30, n = 8) and 20 of three models (N = 100, n = 16).
    #[test]
    fn joint_fit_intervals_cover_at_95_percent_fast() {
        assert_coverage("1 model, N 30, n 8", &coverage(&one_model(), 30, 8, 40));
        assert_coverage(
            "3 models, N 100, n 16",
            &coverage(&three_models(), 100, 16, 20),
        );
    }

    /// 200 data sets per case (issue #16's recovery test; the tables in docs/fit.md):
    /// `cargo test --release --lib joint_fit_intervals_cover_at_95_percent_200 -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn joint_fit_intervals_cover_at_95_percent_200() {
        let cases: Vec<(&str, Truth, usize, u64)> = vec![
            ("1 model, N 30, n 8", one_model(), 30, 8),
            ("1 model, N 500, n 64", one_model(), 500, 64),
            ("3 models, N 100, n 16", three_models(), 100, 16),
            ("3 models, N 30, n 8", three_models(), 30, 8),
        ];
        // every table first, then the assertions
        let tables: Vec<(&str, Coverage)> = cases
            .iter()
            .map(|(name, truth, problems, samples)| {
                let t = std::time::Instant::now();
                let rows = coverage(truth, *problems, *samples, 200);
                println!("{name}: {:.1} s", t.elapsed().as_secs_f64());
                for &(p, covered, used) in &rows {
                    println!("{name}: {p}: {covered}/{used}");
                }
                (*name, rows)
            })
            .collect();
        for (name, rows) in &tables {
            assert_coverage(name, rows);
        }
    }

    /// The bug: three-model fits of 30 problems x 8 samples took 10.5, 96.6 and 104.3 s on
    /// seeds 1112, 1144 and 1148 (profile searches without a bound). Each profile side now has
    /// an evaluation budget; seed 1144 (and the two others) must fit in under 2 s in release,
    /// and every interval must still contain its estimate.
    #[test]
    fn slow_profile_intervals_on_three_models_n30_seed_1144() {
        let truth = three_models();
        for seed in [1144, 1112, 1148] {
            let data = simulate(seed, 30, 8, truth.mu, truth.sigma, &truth.shift, &truth.tau);
            let t = std::time::Instant::now();
            let fit = fit_joint(&data, &JointFitOptions::default());
            let elapsed = t.elapsed().as_secs_f64();
            println!(
                "seed {seed}: {elapsed:.2} s, {} evaluations",
                fit.evaluations
            );
            // measured 49 to 89 (287 to 331 by the bounded bracketed search alone; the unbounded
            // search spent 10 to 100 s, tens of thousands of evaluations)
            assert!(
                fit.evaluations <= 1000,
                "seed {seed}: {} evaluations",
                fit.evaluations
            );
            for e in &fit.estimates {
                println!(
                    "  {}: {:.4} [{:?}, {:?}] {:?}",
                    e.parameter, e.value, e.lower, e.upper, e.interval
                );
                assert!(e.lower.is_none_or(|l| l <= e.value + 1e-9), "{e:?}");
                assert!(e.upper.is_none_or(|u| u >= e.value - 1e-9), "{e:?}");
            }
        }
    }
}
