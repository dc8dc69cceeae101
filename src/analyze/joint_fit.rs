//! Joint fit of several models' per-problem counts: shared problem effects, a shift and a
//! per-problem disagreement SD per model (issue #16 item 2, the math layer).
//!
//! # Model and likelihood
//!
//! z_i ~ N(mu, sigma^2) shared by all models; model m's logit on problem i is
//! z_i + shift_m + tau_m e_{m,i}, e ~ N(0, 1), shift_0 = 0 (the first model is the reference).
//! The marginal log-likelihood of the binomial counts is `exact::joint_likelihood` (Gauss–Hermite
//! in both integrals, log space). With one model tau_0 is fixed at 0 (only sigma^2 + tau_0^2 is
//! identified); with two or more every tau_m is free.
//!
//! # Estimation
//!
//! Maximum likelihood (or the MAP of the penalised likelihood, below) over
//! (mu, ln sigma, shift_1.., ln tau_..) by Nelder–Mead: three starts (a moment-based guess and
//! two spread-out variants), each restarted from its best point until the objective stops
//! improving, the best kept. ln sigma and ln tau are floored at ln 1e-4 (a spread of 1e-4 logits
//! is zero for every purpose); an estimate at the floor is reported as 0 (boundary). Everything
//! is deterministic: no randomness, fixed starts and step sizes.
//!
//! # Intervals
//!
//! The observed information is the numerical Hessian (central differences) of the objective in
//! the natural parameters (mu, sigma, shift_m, tau_m) at the optimum; SE = sqrt of the diagonal of
//! its inverse, and the Wald interval is estimate +/- 1.96 SE. A profile-likelihood interval
//! {theta : 2 (l_hat - max_rest l(theta, rest)) <= 3.84} replaces it when
//! - the Hessian is not positive definite, or
//! - a sigma or tau whose Wald interval would cross 0 (at or near the boundary; the likelihood is
//!   even in sigma and tau, so the Wald interval is meaningless there). The profile's lower
//!   end is 0 when the profile drop at 0 is below 1.92.
//!
//! An end the profile cannot reach within 60 logits of the estimate is reported as `None`
//! (unbounded).
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

use crate::exact::joint_likelihood::{
    log_likelihood, JointData, JointParams, JointQuadrature, DEFAULT_INNER_NODES,
    DEFAULT_OUTER_NODES,
};

/// Floor of ln sigma and ln tau in the search (1e-4 logits).
const LN_SPREAD_FLOOR: f64 = -9.210_340_371_976_182;
/// Half of the 95% chi-square(1) quantile: the profile drop at a 95% interval end.
const PROFILE_DROP: f64 = 1.920_729_410_347_062;
/// Normal 97.5% quantile.
const Z95: f64 = 1.959_963_984_540_054;
/// A profile end further than this from the estimate is reported unbounded.
const PROFILE_REACH: f64 = 60.0;

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
    /// Gauss–Hermite nodes of the problem-effect integral.
    pub outer_nodes: usize,
    /// Gauss–Hermite nodes of the per-model disagreement integral.
    pub inner_nodes: usize,
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
            outer_nodes: DEFAULT_OUTER_NODES,
            inner_nodes: DEFAULT_INNER_NODES,
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
}

impl std::fmt::Display for Parameter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Parameter::Mu => write!(f, "mu"),
            Parameter::Sigma => write!(f, "sigma"),
            Parameter::Shift(m) => write!(f, "shift[{m}]"),
            Parameter::Tau(m) => write!(f, "tau[{m}]"),
        }
    }
}

/// Why a parameter is not identified.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Unidentified {
    /// Too few problems with 0 < c < n.
    AllOrNone {
        /// Problems with 0 < c < n (for sigma: for some model; for tau\[m\]: for model m).
        informative: usize,
        /// Problems considered.
        problems: usize,
    },
    /// Every count has n = 1 (for sigma: every model's).
    OneSamplePerProblem,
    /// Fewer than 5 problems.
    TooFewProblems {
        /// Problems in the data.
        problems: usize,
    },
    /// Every count all right: the location runs to +infinity.
    AllRight,
    /// Every count all wrong: the location runs to -infinity.
    AllWrong,
}

/// A parameter the data cannot identify, and what would.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnosis {
    /// The parameter.
    pub parameter: Parameter,
    /// Why.
    pub reason: Unidentified,
    /// What data would identify it.
    pub remedy: String,
}

impl std::fmt::Display for Diagnosis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let why = match &self.reason {
            Unidentified::AllOrNone {
                informative,
                problems,
            } => format!(
                "only {informative} of {problems} problems have some but not all samples right"
            ),
            Unidentified::OneSamplePerProblem => "every problem has one sample".to_string(),
            Unidentified::TooFewProblems { problems } => format!("only {problems} problems"),
            Unidentified::AllRight => "every sample is right".to_string(),
            Unidentified::AllWrong => "every sample is wrong".to_string(),
        };
        write!(
            f,
            "{} is not identified: {why}; {}",
            self.parameter, self.remedy
        )
    }
}

/// Kind of interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum IntervalKind {
    /// estimate +/- 1.96 SE from the observed information.
    Wald,
    /// Profile likelihood (drop 1.92).
    Profile,
}

/// One estimated parameter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
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
    /// Every free parameter: mu, sigma, shift[1..], tau[..].
    pub estimates: Vec<Estimate>,
    /// Covariance of the free natural parameters (inverse observed information), in the order
    /// of `estimates` (`None` if not positive definite).
    pub covariance: Option<Vec<Vec<f64>>>,
    /// ln L at the estimate (unpenalised).
    pub log_likelihood: f64,
    /// True if the estimate is the MAP under [`Prior`], not the ML.
    pub regularised: bool,
    /// Parameters the data do not identify.
    pub diagnoses: Vec<Diagnosis>,
}

impl JointFit {
    /// The estimate of one parameter.
    pub fn estimate(&self, p: Parameter) -> Option<&Estimate> {
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

/// Identification diagnostics of the data (module doc).
pub fn diagnose(data: &JointData) -> Vec<Diagnosis> {
    let models = data.models();
    let problems = data.problems();
    let rows = data.rows();
    let mut out = Vec::new();
    let more_problems = "more problems (at least 5, better 30 or more)".to_string();
    let intermediate = "more samples per problem or problems of intermediate difficulty, so that more problems have some but not all samples right";
    let multi = "at least 2 samples per problem (8 or more is better)";
    let free_taus: Vec<usize> = if models == 1 {
        Vec::new()
    } else {
        (0..models).collect()
    };
    let all_n1 = |m: usize| rows.iter().filter_map(|r| r[m]).all(|c| c.samples == 1);
    // sigma
    let informative = rows
        .iter()
        .filter(|r| r.iter().flatten().any(|c| c.is_intermediate()))
        .count();
    if problems < 5 {
        out.push(Diagnosis {
            parameter: Parameter::Sigma,
            reason: Unidentified::TooFewProblems { problems },
            remedy: more_problems.clone(),
        });
    } else if (0..models).all(all_n1) {
        out.push(Diagnosis {
            parameter: Parameter::Sigma,
            reason: Unidentified::OneSamplePerProblem,
            remedy: multi.to_string(),
        });
    } else if informative < 5 || (informative as f64) < 0.2 * problems as f64 {
        out.push(Diagnosis {
            parameter: Parameter::Sigma,
            reason: Unidentified::AllOrNone {
                informative,
                problems,
            },
            remedy: intermediate.to_string(),
        });
    }
    // locations
    for m in 0..models {
        let counts: Vec<_> = rows.iter().filter_map(|r| r[m]).collect();
        let parameter = if m == 0 {
            Parameter::Mu
        } else {
            Parameter::Shift(m)
        };
        let remedy = "problems this model sometimes gets wrong and sometimes right".to_string();
        if counts.iter().all(|c| c.correct == c.samples) {
            out.push(Diagnosis {
                parameter,
                reason: Unidentified::AllRight,
                remedy: format!("harder {remedy}"),
            });
        } else if counts.iter().all(|c| c.correct == 0) {
            out.push(Diagnosis {
                parameter,
                reason: Unidentified::AllWrong,
                remedy: format!("easier {remedy}"),
            });
        }
    }
    // taus
    for &m in &free_taus {
        let counts: Vec<_> = rows.iter().filter_map(|r| r[m]).collect();
        let informative = counts.iter().filter(|c| c.is_intermediate()).count();
        let (reason, remedy) = if problems < 5 {
            (
                Unidentified::TooFewProblems { problems },
                more_problems.clone(),
            )
        } else if all_n1(m) {
            (Unidentified::OneSamplePerProblem, multi.to_string())
        } else if informative < 5 {
            (
                Unidentified::AllOrNone {
                    informative,
                    problems: counts.len(),
                },
                intermediate.to_string(),
            )
        } else {
            continue;
        };
        out.push(Diagnosis {
            parameter: Parameter::Tau(m),
            reason,
            remedy,
        });
    }
    out
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
    quad: JointQuadrature,
    prior: Option<Prior>,
    layout: Vec<Parameter>,
    /// Parameters held fixed (not in `layout`).
    fixed: Vec<(Parameter, f64)>,
}

impl Problem<'_> {
    fn params(&self, natural: &[f64]) -> JointParams {
        let m = self.data.models();
        let mut p = JointParams {
            mu: 0.0,
            sigma: 0.0,
            shift: vec![0.0; m],
            tau: vec![0.0; m],
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
            }
        }
        p
    }

    fn log_prior(&self, natural: &[f64]) -> f64 {
        let Some(prior) = self.prior else {
            return 0.0;
        };
        natural
            .iter()
            .zip(&self.layout)
            .map(|(v, par)| {
                let sd = match par {
                    Parameter::Mu => prior.mu_sd,
                    Parameter::Sigma => prior.sigma_scale,
                    Parameter::Shift(_) => prior.shift_sd,
                    Parameter::Tau(_) => prior.tau_scale,
                };
                -0.5 * (v / sd).powi(2)
            })
            .sum()
    }

    /// -(ln L + ln prior) at natural parameters.
    fn objective(&self, natural: &[f64]) -> f64 {
        let v = -(log_likelihood(self.data, &self.params(natural), &self.quad)
            + self.log_prior(natural));
        if v.is_nan() {
            f64::INFINITY
        } else {
            v
        }
    }

    fn is_spread(&self, i: usize) -> bool {
        matches!(self.layout[i], Parameter::Sigma | Parameter::Tau(_))
    }

    fn to_natural(&self, internal: &[f64]) -> Vec<f64> {
        internal
            .iter()
            .enumerate()
            .map(|(i, &t)| {
                if self.is_spread(i) {
                    t.max(LN_SPREAD_FLOOR).exp()
                } else {
                    t
                }
            })
            .collect()
    }

    fn to_internal(&self, natural: &[f64]) -> Vec<f64> {
        natural
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                if self.is_spread(i) {
                    v.abs().max(1e-300).ln().max(LN_SPREAD_FLOOR)
                } else {
                    v
                }
            })
            .collect()
    }

    /// Minimum over the internal parameters, holding `fixed` (index, natural value) if given.
    fn minimise(&self, start: &[f64], step: f64, fixed: Option<(usize, f64)>) -> (Vec<f64>, f64) {
        let free: Vec<usize> = (0..self.layout.len())
            .filter(|&i| fixed.is_none_or(|(k, _)| k != i))
            .collect();
        let full = |x: &[f64]| -> Vec<f64> {
            let mut internal = start.to_vec();
            for (&i, &v) in free.iter().zip(x) {
                internal[i] = v;
            }
            let mut nat = self.to_natural(&internal);
            if let Some((k, v)) = fixed {
                nat[k] = v;
            }
            nat
        };
        let f = |x: &[f64]| self.objective(&full(x));
        let x0: Vec<f64> = free.iter().map(|&i| start[i]).collect();
        if x0.is_empty() {
            let nat = full(&x0);
            let v = self.objective(&nat);
            return (self.to_internal(&nat), v);
        }
        let (mut x, mut v) = nelder_mead(&f, &x0, step);
        // restart from the best point until no more progress (once on a profile, whose
        // start is the optimum next door)
        let restarts = if fixed.is_some() { 1 } else { 6 };
        for _ in 0..restarts {
            let (x2, v2) = nelder_mead(&f, &x, step * 0.5);
            let better = v2 < v - 1e-9;
            if v2 <= v {
                x = x2;
                v = v2;
            }
            if !better {
                break;
            }
        }
        let mut internal = start.to_vec();
        for (&i, &val) in free.iter().zip(&x) {
            internal[i] = val;
        }
        (internal, v)
    }
}

/// Nelder–Mead minimisation (standard coefficients 1, 2, 0.5, 0.5), deterministic.
/// Stops when the simplex's objective range falls below 1e-10 (absolute and relative) or after
/// 400 * dim iterations.
fn nelder_mead(f: &dyn Fn(&[f64]) -> f64, start: &[f64], step: f64) -> (Vec<f64>, f64) {
    let d = start.len();
    let mut simplex: Vec<Vec<f64>> = vec![start.to_vec()];
    for i in 0..d {
        let mut p = start.to_vec();
        p[i] += step;
        simplex.push(p);
    }
    let mut values: Vec<f64> = simplex.iter().map(|p| f(p)).collect();
    for _ in 0..400 * d {
        let mut order: Vec<usize> = (0..=d).collect();
        order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
        simplex = order.iter().map(|&i| simplex[i].clone()).collect();
        values = order.iter().map(|&i| values[i]).collect();
        let (best, worst) = (values[0], values[d]);
        if (worst - best).abs() <= 1e-10 * (1.0 + best.abs()) {
            break;
        }
        let centroid: Vec<f64> = (0..d)
            .map(|j| simplex[..d].iter().map(|p| p[j]).sum::<f64>() / d as f64)
            .collect();
        let along = |t: f64| -> Vec<f64> {
            (0..d)
                .map(|j| centroid[j] + t * (simplex[d][j] - centroid[j]))
                .collect()
        };
        let reflected = along(-1.0);
        let fr = f(&reflected);
        if fr < values[0] {
            let expanded = along(-2.0);
            let fe = f(&expanded);
            if fe < fr {
                simplex[d] = expanded;
                values[d] = fe;
            } else {
                simplex[d] = reflected;
                values[d] = fr;
            }
        } else if fr < values[d - 1] {
            simplex[d] = reflected;
            values[d] = fr;
        } else {
            let contracted = if fr < values[d] {
                along(-0.5)
            } else {
                along(0.5)
            };
            let fc = f(&contracted);
            if fc < values[d].min(fr) {
                simplex[d] = contracted;
                values[d] = fc;
            } else {
                for i in 1..=d {
                    let p: Vec<f64> = (0..d)
                        .map(|j| simplex[0][j] + 0.5 * (simplex[i][j] - simplex[0][j]))
                        .collect();
                    values[i] = f(&p);
                    simplex[i] = p;
                }
            }
        }
    }
    let best = (0..=d)
        .min_by(|&a, &b| values[a].total_cmp(&values[b]))
        .unwrap_or(0);
    (simplex[best].clone(), values[best])
}

/// logit of a rate clamped to [0.5/n, 1 - 0.5/n] style bounds.
fn logit_of(correct: f64, samples: f64) -> f64 {
    let p = (correct + 0.5) / (samples + 1.0);
    (p / (1.0 - p)).ln()
}

/// Symmetric numerical Hessian of f at x with steps h.
fn hessian(f: &dyn Fn(&[f64]) -> f64, x: &[f64], h: &[f64]) -> Vec<Vec<f64>> {
    let d = x.len();
    let f0 = f(x);
    let at = |moves: &[(usize, f64)]| {
        let mut y = x.to_vec();
        for &(i, s) in moves {
            y[i] += s * h[i];
        }
        f(&y)
    };
    let mut out = vec![vec![0.0; d]; d];
    for i in 0..d {
        out[i][i] = (at(&[(i, 1.0)]) - 2.0 * f0 + at(&[(i, -1.0)])) / (h[i] * h[i]);
        for j in 0..i {
            let v = (at(&[(i, 1.0), (j, 1.0)])
                - at(&[(i, 1.0), (j, -1.0)])
                - at(&[(i, -1.0), (j, 1.0)])
                + at(&[(i, -1.0), (j, -1.0)]))
                / (4.0 * h[i] * h[j]);
            out[i][j] = v;
            out[j][i] = v;
        }
    }
    out
}

/// Inverse of a symmetric positive definite matrix by Cholesky; `None` if not positive definite.
#[allow(clippy::needless_range_loop)]
fn invert_spd(a: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let d = a.len();
    let mut l = vec![vec![0.0; d]; d];
    for i in 0..d {
        for j in 0..=i {
            let s: f64 = a[i][j] - (0..j).map(|k| l[i][k] * l[j][k]).sum::<f64>();
            if i == j {
                if s.is_nan() || s <= 0.0 || !s.is_finite() {
                    return None;
                }
                l[i][i] = s.sqrt();
            } else {
                l[i][j] = s / l[j][j];
            }
        }
    }
    // inverse of L, then L^-T L^-1
    let mut li = vec![vec![0.0; d]; d];
    for i in 0..d {
        li[i][i] = 1.0 / l[i][i];
        for j in 0..i {
            let s: f64 = (j..i).map(|k| l[i][k] * li[k][j]).sum();
            li[i][j] = -s / l[i][i];
        }
    }
    Some(
        (0..d)
            .map(|i| {
                (0..d)
                    .map(|j| (i.max(j)..d).map(|k| li[k][i] * li[k][j]).sum())
                    .collect()
            })
            .collect(),
    )
}

/// Fits the joint model (module doc). Cost: a few thousand likelihood evaluations
/// (`exact::joint_likelihood`), more when profile intervals are needed.
pub fn fit_joint(data: &JointData, options: &JointFitOptions) -> JointFit {
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
    layout.retain(|p| !is_fixed(*p));
    let problem = Problem {
        data,
        quad: JointQuadrature::new(options.outer_nodes, options.inner_nodes),
        prior: regularised.then_some(options.prior),
        layout,
        fixed: options.fixed.clone(),
    };
    // moment-based start: pooled logits
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
    let base: Vec<f64> = problem
        .layout
        .iter()
        .map(|p| match *p {
            Parameter::Mu => pooled(0),
            Parameter::Sigma => sigma0.ln(),
            Parameter::Shift(m) => pooled(m) - pooled(0),
            Parameter::Tau(m) => tau0[m].ln(),
        })
        .collect();
    // the method-of-moments start, and one with more spread in case the moments mislead
    // (all-or-none counts make the empirical logits' spread too small)
    let starts: Vec<Vec<f64>> = [0.0, 0.7]
        .iter()
        .map(|&ds| {
            base.iter()
                .zip(&problem.layout)
                .map(|(&v, p)| match p {
                    Parameter::Sigma => v + ds,
                    _ => v,
                })
                .collect()
        })
        .collect();
    let (mut best, mut best_v) = (base.clone(), f64::INFINITY);
    for s in &starts {
        let (x, v) = problem.minimise(s, 0.5, None);
        if v < best_v {
            best = x;
            best_v = v;
        }
    }
    let mut natural = problem.to_natural(&best);
    let at_boundary: Vec<bool> = (0..natural.len())
        .map(|i| problem.is_spread(i) && best[i] <= LN_SPREAD_FLOOR + 1e-9)
        .collect();
    for (i, b) in at_boundary.iter().enumerate() {
        if *b {
            natural[i] = 0.0;
        }
    }
    let objective_nat = |x: &[f64]| problem.objective(x);
    let steps: Vec<f64> = natural.iter().map(|v| 1e-3 * (1.0 + v.abs())).collect();
    let info = hessian(&objective_nat, &natural, &steps);
    let covariance = invert_spd(&info);
    let opt_value = problem.objective(&natural);
    let estimates: Vec<Estimate> = (0..natural.len())
        .map(|i| {
            let value = natural[i];
            let se = covariance
                .as_ref()
                .map(|c| c[i][i])
                .filter(|v| v.is_finite() && *v > 0.0)
                .map(f64::sqrt);
            let spread = problem.is_spread(i);
            let wald_ok = match se {
                Some(se) => !spread || value - Z95 * se > 0.0,
                None => false,
            };
            let (lower, upper, interval) = if wald_ok {
                let se = se.unwrap_or(0.0);
                (
                    Some(value - Z95 * se),
                    Some(value + Z95 * se),
                    IntervalKind::Wald,
                )
            } else {
                let (lo, hi) = profile_interval(&problem, &best, &natural, i, opt_value, se);
                (lo, hi, IntervalKind::Profile)
            };
            Estimate {
                parameter: problem.layout[i],
                value,
                se,
                lower,
                upper,
                interval,
                at_boundary: at_boundary[i],
            }
        })
        .collect();
    let params = problem.params(&natural);
    let log_likelihood = log_likelihood(data, &params, &problem.quad);
    JointFit {
        models,
        problems: data.problems(),
        mu: params.mu,
        sigma: params.sigma,
        shift: params.shift,
        tau: params.tau,
        estimates,
        covariance,
        log_likelihood,
        regularised,
        diagnoses,
    }
}

/// Profile-likelihood 95% interval of parameter i (module doc).
fn profile_interval(
    problem: &Problem<'_>,
    best_internal: &[f64],
    natural: &[f64],
    i: usize,
    opt_value: f64,
    se: Option<f64>,
) -> (Option<f64>, Option<f64>) {
    let value = natural[i];
    let drop = |v: f64| -> f64 {
        let (_, obj) = problem.minimise(best_internal, 0.2, Some((i, v)));
        obj - opt_value
    };
    let base_step = se.unwrap_or(0.5).clamp(0.05, 5.0);
    // find the end on one side: direction +1 or -1
    let find_end = |dir: f64, limit: Option<f64>| -> Option<f64> {
        let mut inside = value;
        let mut step = base_step;
        loop {
            let mut v = value + dir * step;
            if let Some(l) = limit {
                if dir * (v - l) >= 0.0 {
                    v = l;
                    if drop(v) <= PROFILE_DROP {
                        return Some(l);
                    }
                    return Some(bisect(&drop, inside, v));
                }
            }
            if drop(v) > PROFILE_DROP {
                return Some(bisect(&drop, inside, v));
            }
            if step > PROFILE_REACH {
                return None;
            }
            inside = v;
            step *= 2.0;
        }
    };
    let limit = problem.is_spread(i).then_some(0.0);
    let lower = find_end(-1.0, limit);
    let upper = find_end(1.0, None);
    (lower, upper)
}

/// End of {drop <= PROFILE_DROP} between `inside` (drop below) and `outside` (drop above).
fn bisect(drop: &dyn Fn(f64) -> f64, mut inside: f64, mut outside: f64) -> f64 {
    for _ in 0..30 {
        if (outside - inside).abs() <= 1e-3 * (1.0 + inside.abs()) {
            break;
        }
        let mid = 0.5 * (inside + outside);
        if drop(mid) > PROFILE_DROP {
            outside = mid;
        } else {
            inside = mid;
        }
    }
    0.5 * (inside + outside)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::joint_likelihood::Count;
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

    /// Two models: slow (minutes; the fit is not yet optimised), so ignored:
    /// `cargo test --release --lib joint_fit_recovers_two_models -- --ignored --nocapture`
    #[test]
    #[ignore]
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
        let quad = JointQuadrature::default();
        let p = JointParams {
            mu: 0.2,
            sigma: 1.5,
            shift: vec![0.0, -0.4, 0.3],
            tau: vec![0.5, 0.8, 0.6],
        };
        let t = std::time::Instant::now();
        let reps = 20;
        for _ in 0..reps {
            std::hint::black_box(log_likelihood(&data, &p, &quad));
        }
        let per_eval = t.elapsed().as_secs_f64() / reps as f64;
        let t = std::time::Instant::now();
        let fit = fit_joint(&data, &JointFitOptions::default());
        let total = t.elapsed().as_secs_f64();
        println!(
            "one ln L evaluation {:.2} ms; fit {total:.2} s ({:.0} evaluations' worth); mu {:.3} sigma {:.3} taus {:?}",
            per_eval * 1e3,
            total / per_eval,
            fit.mu,
            fit.sigma,
            fit.tau
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

    /// Coverage of the 95% intervals of (mu, sigma) of one model at N = 30, n = 8 over `sets`
    /// simulated data sets; returns the covered counts.
    fn coverage(sets: u64) -> [usize; 2] {
        let (mu, sigma) = (0.5, 1.2);
        let mut covered = [0usize; 2];
        for seed in 0..sets {
            let data = simulate(1000 + seed, 30, 8, mu, sigma, &[0.0], &[0.0]);
            let fit = fit_joint(&data, &JointFitOptions::default());
            for (k, truth) in [mu, sigma].into_iter().enumerate() {
                let e = &fit.estimates[k];
                if e.lower.is_none_or(|l| l <= truth) && e.upper.is_none_or(|u| truth <= u) {
                    covered[k] += 1;
                }
            }
        }
        covered
    }

    /// 40 data sets: each parameter's coverage count must not fall below 95% by more than
    /// 3 binomial SDs (40 * 0.95 - 3 sqrt(40 * 0.95 * 0.05) = 33.9).
    #[test]
    fn joint_fit_intervals_cover_at_95_percent_fast() {
        let covered = coverage(40);
        println!("covered of 40: mu {}, sigma {}", covered[0], covered[1]);
        let bound = 40.0 * 0.95 - 3.0 * (40.0f64 * 0.95 * 0.05).sqrt();
        for c in covered {
            assert!(c as f64 >= bound, "{covered:?}");
        }
    }

    /// `cargo test --release --lib joint_fit_intervals_cover_at_95_percent_200 -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn joint_fit_intervals_cover_at_95_percent_200() {
        let covered = coverage(200);
        println!("covered of 200: mu {}, sigma {}", covered[0], covered[1]);
        let bound = 200.0 * 0.95 - 3.0 * (200.0f64 * 0.95 * 0.05).sqrt();
        for c in covered {
            assert!(c as f64 >= bound, "{covered:?}");
        }
    }
}
