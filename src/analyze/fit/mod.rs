//! `fit`: turn observed per-problem counts of one or more models into a scenario the simulator
//! can rerun.
//!
//! - **Rates** (mu, sigma, and per model a shift and a disagreement SD tau): the joint fit of
//!   [`joint`] — shared problem effects z_i ~ N(mu, sigma^2), model m's logit
//!   z_i + shift_m + tau_m e_{m,i}, the first model the reference (shift 0; with one model
//!   tau is 0 and sigma is its whole spread) — by marginal maximum likelihood over the binomial
//!   counts, with Wald or profile 95% intervals. This is the only fitting path: one model is
//!   the joint fit with M = 1.
//! - **Identification**: [`joint::diagnose`] flags a parameter the data cannot
//!   identify (all-or-none problems, one sample per problem, fewer than 5 problems, a model
//!   right or wrong on everything). Such a parameter is REFUSED, never estimated: it is held at
//!   a documented fallback ([`FALLBACK_SIGMA`], tau = 0, or the smoothed pooled logit for a
//!   location), the other parameters are fitted with it held, and the output and the scenario
//!   say "not estimated", why, and what data would identify it.
//! - **Attractor share** a: the model says each wrong answer is the problem's one attractor with
//!   probability a and otherwise a one-off that never repeats. So in a problem with W wrong
//!   answers whose largest wrong-answer group has m >= 2 members, that group *is* the attractor
//!   and A = m ~ Bin(W, a). If no wrong answer repeats (m <= 1), A is 0 or 1 but we cannot tell
//!   which: a single attractor hit looks like a one-off. The estimator is the maximum likelihood
//!   with that censoring — the "correction for one-offs" — maximising
//!   sum_{m_i >= 2} [m_i ln a + (W_i - m_i) ln(1 - a)] + sum_{m_i <= 1} ln[(1 - a)^W_i + W_i a (1 - a)^(W_i - 1)].
//!   (The naive pooled share sum m_i / sum W_i counts every lone wrong answer as an attractor hit
//!   and is biased up.) Missing answers are one-offs. Second repeated wrong groups, which the
//!   one-attractor model does not have, are counted as one-offs. SE from the observed
//!   information.
//! - **Trace lengths** (when every sample has tokens): with difficulty d_i = 1 - c_i/n_i,
//!   ln(median correct length) = ln L0 + ln(1 + g d_i), fitted by least squares to each
//!   problem's mean log length of correct traces (the ML estimate of a lognormal's log-median);
//!   ln w = the pooled within-problem difference of mean log lengths, wrong minus correct
//!   (weights n_c n_w / (n_c + n_w)), immune to errors in the fitted curve; sigma_L = the pooled
//!   within-problem SD of log lengths. Traces cut at a cap bias all three down.
use serde::{Deserialize, Serialize};

use super::data::ModelSamples;
use super::summary::{check_k, summarize_model, CurvePoint, SummaryOptions};
use super::{AnalyzeError, Result};
use crate::exact::joint_likelihood::{
    count_probabilities, count_probabilities_runs, population_maj_at_k, population_pass_at_k,
    Count, JointData,
};
use crate::numerics::optimise::golden_max;
use joint::{diagnose, Diagnosis, IntervalKind, JointFit, JointFitOptions, Parameter};

pub mod checks;
pub mod gof;
pub mod joint;
pub mod progress;
mod scenario;

/// The fit's quadrature rule lives with the others in [`crate::exact::quadrature`].
pub use crate::exact::quadrature::gauss_hermite_normal;
pub use checks::fit_traces;

/// The attractor shares of the `attractor-sweep` written for a model without answers.
pub(crate) const ATTRACTOR_SWEEP: [f64; 5] = [0.0, 0.25, 0.5, 0.75, 0.9];

/// sigma written to the scenario when the data do not identify it: a middle value on the
/// logit scale (rates from 2% to 98% two SDs out around mu = 0), NOT a measurement.
pub const FALLBACK_SIGMA: f64 = 2.0;

/// Options of [`fit_models`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FitOptions {
    /// k values of the scenario's `curves` experiment.
    pub curve_k: Vec<usize>,
    /// Votes per problem of the scenario's `curves` experiment.
    pub votes: usize,
    /// Seed written into the scenario.
    pub seed: u64,
}

impl Default for FitOptions {
    fn default() -> Self {
        FitOptions {
            curve_k: vec![1, 2, 4, 8, 16, 32, 64],
            votes: 4000,
            seed: 1,
        }
    }
}

/// Whether a parameter was estimated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Status {
    /// Maximum likelihood estimate with its 95% interval.
    Estimated,
    /// Not identified by the data: refused and held at `fallback` (not an estimate).
    Refused {
        /// The value written to the scenario instead.
        fallback: f64,
        /// Why, and what data would identify it.
        diagnosis: String,
    },
}

/// One rate parameter of the fit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParameterFit {
    /// Which parameter (model indices as in [`FitResult::models`]).
    pub parameter: Parameter,
    /// Readable name, e.g. `sigma` or ``shift of `b` ``.
    pub label: String,
    /// Estimate, or the fallback when refused.
    pub value: f64,
    /// SE from the observed information (estimated parameters only).
    pub se: Option<f64>,
    /// Lower end of the 95% interval (`None`: unbounded or refused).
    pub lower: Option<f64>,
    /// Upper end of the 95% interval (`None`: unbounded or refused).
    pub upper: Option<f64>,
    /// Wald or profile (estimated parameters only).
    pub interval: Option<IntervalKind>,
    /// Estimated or refused.
    pub status: Status,
}

impl ParameterFit {
    /// True when the parameter was estimated.
    pub fn estimated(&self) -> bool {
        self.status == Status::Estimated
    }

    /// "0.312 (95% 0.10 to 0.52, Wald)" or "NOT ESTIMATED, fallback 2".
    pub fn describe(&self) -> String {
        match &self.status {
            Status::Estimated => {
                let end =
                    |v: Option<f64>, inf: &str| v.map_or(inf.to_string(), |v| format!("{v:.3}"));
                // A spread estimated below the search floor is reported as exactly 0: say so.
                let floor = self.value == 0.0
                    && matches!(self.parameter, Parameter::Sigma | Parameter::Tau(_));
                format!(
                    "{:.3}{} (95% interval {} to {}, {})",
                    self.value,
                    if floor {
                        " (estimated below 1e-4 logits: at the boundary, reported as 0)"
                    } else {
                        ""
                    },
                    end(self.lower, "-inf"),
                    end(self.upper, "+inf"),
                    match self.interval {
                        Some(IntervalKind::Profile) => "profile likelihood",
                        Some(IntervalKind::ProfileCapped) =>
                            "profile likelihood, search capped: an end is approximate or open",
                        _ => "Wald",
                    }
                )
            }
            Status::Refused { fallback, .. } => {
                format!("NOT ESTIMATED (fallback {fallback})")
            }
        }
    }
}

/// Fitted attractor share.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttractorFit {
    /// Estimated share a of wrong answers that land on the attractor.
    pub share: f64,
    /// SE of a from the observed information.
    pub se: Option<f64>,
    /// Naive pooled share sum m_i / sum W_i (biased up; shown for comparison).
    pub naive_share: f64,
    /// Wrong answers used.
    pub wrong_answers: usize,
}

/// Fitted lognormal trace-length model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceFit {
    /// L0: median tokens of a correct trace on a problem of difficulty 0.
    pub median_tokens: f64,
    /// g: growth of the median with difficulty.
    pub hard_growth: f64,
    /// w: wrong traces are this many times longer.
    pub wrong_factor: f64,
    /// sigma_L: log-SD of trace lengths.
    pub sigma: f64,
}

/// Observed and fitted distribution of per-problem correct counts, for problems with the most
/// common n.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CountHistogram {
    /// The n of the problems counted.
    pub n: usize,
    /// (R, n_r): with a fitted run_sd, the problems counted are those of R runs of n_r samples
    /// each (n = R n_r), and the fitted distribution is pooled over the runs. `None` otherwise
    /// (left out of the JSON then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_shape: Option<(usize, usize)>,
    /// Problems with c = 0..=n correct.
    pub observed: Vec<usize>,
    /// Expected problems with c = 0..=n under the fitted model.
    pub fitted: Vec<f64>,
}

/// An observed curve (pass@k or maj@k) with the fitted population value at each k.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CurveFit {
    /// `pass@k` or `maj@k`.
    pub metric: String,
    /// Observed points with their 95% intervals (from `analyze`'s estimators).
    pub observed: Vec<CurvePoint>,
    /// Fitted population value at each observed k.
    pub fitted: Vec<f64>,
}

/// Everything fitted about one model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelFit {
    /// Model name, as in the input.
    pub name: String,
    /// Problems it answered.
    pub problems: usize,
    /// Its logit mean mu + shift.
    pub location: f64,
    /// Its total logit SD sqrt(sigma^2 + tau^2).
    pub spread: f64,
    /// Attractor share (`None` without answers).
    pub attractor: Option<AttractorFit>,
    /// Trace lengths (`None` without tokens).
    pub traces: Option<TraceFit>,
    /// Observed vs fitted counts.
    pub counts: CountHistogram,
    /// Observed vs fitted pass@k (and maj@k with answers).
    pub curves: Vec<CurveFit>,
}

/// Implied correlation of two models' per-problem logits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CorrelationFit {
    /// First model.
    pub a: String,
    /// Second model.
    pub b: String,
    /// sigma^2 / sqrt((sigma^2 + tau_a^2)(sigma^2 + tau_b^2)).
    pub value: f64,
    /// Delta-method SE (`None` if a spread was refused or the information is singular).
    pub se: Option<f64>,
}

/// Result of [`fit_models`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FitResult {
    /// Where the samples came from (file names).
    pub source: String,
    /// Problems (the union over models).
    pub problems: usize,
    /// Every rate parameter: mu, sigma, then shift and tau per model.
    pub parameters: Vec<ParameterFit>,
    /// Per model, in input order (the first is the reference).
    pub models: Vec<ModelFit>,
    /// Every pair of models.
    pub correlations: Vec<CorrelationFit>,
    /// ln L at the fit.
    pub log_likelihood: f64,
    /// What the data do not identify (empty when everything is).
    pub diagnoses: Vec<String>,
    /// What the user must know about estimates that were made: a barely identified spread
    /// (with its profile interval and what it means for the plan), an optimiser that did not
    /// converge, a plan left out. Printed as warnings and written into the scenario's comments.
    #[serde(default)]
    pub warnings: Vec<String>,
    /// Per model, the chi-square goodness of fit of its count histogram.
    #[serde(default)]
    pub goodness: Vec<gof::GoodnessOfFit>,
    /// Scenario TOML reproducing the fit.
    pub scenario_toml: String,
}

impl FitResult {
    /// The fit of one parameter.
    pub fn parameter(&self, p: Parameter) -> Option<&ParameterFit> {
        self.parameters.iter().find(|q| q.parameter == p)
    }

    /// mu, sigma (estimate or fallback).
    pub fn mu_sigma(&self) -> (f64, f64) {
        let v = |p| self.parameter(p).map_or(f64::NAN, |q| q.value);
        (v(Parameter::Mu), v(Parameter::Sigma))
    }
}

fn too_few_common(models: &[&ModelSamples], m: usize, source: &str) -> AnalyzeError {
    let first = |k: usize| {
        models[k]
            .problems
            .iter()
            .take(3)
            .map(|p| format!("`{}`", p.id))
            .collect::<Vec<_>>()
            .join(", ")
    };
    AnalyzeError::BadOption {
        option: "fit".to_string(),
        value: format!(
            "{source}: model `{}` shares no problem id with `{}` (its ids begin {}; `{}`'s begin {})",
            models[m].name,
            models[0].name,
            first(m),
            models[0].name,
            first(0)
        ),
        expected: "the same problem ids in every model's results (the joint fit pairs models problem by problem)".to_string(),
    }
}

/// The joint counts: one row per problem id (in first-seen order over the models).
fn joint_data(models: &[&ModelSamples], source: &str) -> Result<(JointData, Vec<String>)> {
    let mut ids: Vec<String> = Vec::new();
    let mut index: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for m in models {
        for p in &m.problems {
            if !index.contains_key(p.id.as_str()) {
                index.insert(p.id.as_str(), ids.len());
                ids.push(p.id.clone());
            }
        }
    }
    let mut rows = vec![vec![None; models.len()]; ids.len()];
    // per-run counts when some model's input names runs (a model without runs: one run each)
    let with_runs = models
        .iter()
        .any(|m| m.problems.iter().any(|p| !p.runs.is_empty()));
    let mut run_rows: Vec<Vec<Option<Vec<Count>>>> = if with_runs {
        vec![vec![None; models.len()]; ids.len()]
    } else {
        Vec::new()
    };
    for (k, m) in models.iter().enumerate() {
        for p in &m.problems {
            rows[index[p.id.as_str()]][k] = Some(Count::new(p.correct, p.n));
            if with_runs {
                run_rows[index[p.id.as_str()]][k] = Some(if p.runs.is_empty() {
                    vec![Count::new(p.correct, p.n)]
                } else {
                    p.runs.iter().map(|r| Count::new(r.correct, r.n)).collect()
                });
            }
        }
        if k > 0 {
            let common = m
                .problems
                .iter()
                .filter(|p| rows[index[p.id.as_str()]][0].is_some())
                .count();
            if common == 0 {
                return Err(too_few_common(models, k, source));
            }
        }
    }
    let data = if with_runs {
        JointData::with_runs(models.len(), run_rows)
    } else {
        JointData::new(models.len(), rows)
    }
    .map_err(|e| AnalyzeError::BadOption {
        option: "fit".to_string(),
        value: format!("{source}: {e}"),
        expected: "counts of c right out of n >= 1 samples".to_string(),
    })?;
    Ok((data, ids))
}

/// The smoothed pooled logit logit((sum c + 1/2) / (sum n + 1)) of model m: the fallback of a
/// location the data only bound (every sample right, or every sample wrong).
fn pooled_logit(data: &JointData, m: usize) -> f64 {
    let (c, n) = data
        .rows()
        .iter()
        .filter_map(|r| r[m])
        .fold((0.0, 0.0), |(c, n), x| {
            (c + x.correct as f64, n + x.samples as f64)
        });
    let p = (c + 0.5) / (n + 1.0);
    (p / (1.0 - p)).ln()
}

/// Fits several models jointly (one model is the case M = 1) and writes the scenario.
///
/// # Errors
/// No model; a model without problems or with a zero-sample problem; partial-credit scores;
/// a model sharing no problem id with the first; node counts out of range.
pub fn fit_models(
    models: &[&ModelSamples],
    source: &str,
    options: &FitOptions,
) -> Result<FitResult> {
    fit_models_observed(models, source, options, &|_| {})
}

/// [`fit_models`], telling `progress` of the joint fit's evaluations and stages.
///
/// # Errors
/// As [`fit_models`].
pub fn fit_models_observed(
    models: &[&ModelSamples],
    source: &str,
    options: &FitOptions,
    progress: &dyn Fn(progress::FitEvent),
) -> Result<FitResult> {
    check_fit_input(models, source)?;
    let (data, ids) = joint_data(models, source)?;
    let diagnoses: Vec<Diagnosis> = diagnose(&data);
    // Refuse every flagged parameter: hold it at its fallback.
    let fallback = |p: Parameter| match p {
        Parameter::Mu => pooled_logit(&data, 0),
        Parameter::Sigma => FALLBACK_SIGMA,
        Parameter::Shift(m) => pooled_logit(&data, m) - pooled_logit(&data, 0),
        Parameter::Tau(_) | Parameter::Omega(_) => 0.0,
    };
    let mut fixed: Vec<(Parameter, f64)> = Vec::new();
    for d in &diagnoses {
        if !fixed.iter().any(|(p, _)| *p == d.parameter) {
            fixed.push((d.parameter, fallback(d.parameter)));
        }
    }
    let joint = joint::fit_joint_observed(
        &data,
        &JointFitOptions {
            fixed: fixed.clone(),
            ..JointFitOptions::default()
        },
        progress,
    );
    let parameters = parameter_fits(models, &data, &joint, &fixed, &diagnoses);
    let model_fits = models
        .iter()
        .enumerate()
        .map(|(m, model)| model_fit(model, &joint, m))
        .collect::<Result<Vec<_>>>()?;
    let correlations = correlation_fits(models, &joint, &fixed);
    let mut result = FitResult {
        source: source.to_string(),
        problems: ids.len(),
        parameters,
        models: model_fits,
        correlations,
        log_likelihood: joint.log_likelihood,
        diagnoses: diagnoses.iter().map(ToString::to_string).collect(),
        warnings: Vec::new(),
        goodness: Vec::new(),
        scenario_toml: String::new(),
    };
    result.goodness = (0..models.len())
        .map(|m| gof::goodness_of_fit(&result, m))
        .collect();
    result.warnings = checks::fit_warnings(&result, &joint, &data);
    result.scenario_toml =
        scenario::scenario_toml(&result, options).map_err(|e| AnalyzeError::BadOption {
            option: "fit".to_string(),
            value: format!("the fitted scenario ({e})"),
            expected: "values TOML can hold".to_string(),
        })?;
    Ok(result)
}

/// The fit's refusals of its input: no model, or a model with partial-credit scores (the fit
/// models c right answers of n) or without one sample per problem.
fn check_fit_input(models: &[&ModelSamples], source: &str) -> Result<()> {
    if models.is_empty() {
        return Err(AnalyzeError::BadOption {
            option: "fit".to_string(),
            value: format!("{source}: no model"),
            expected: "at least one model's samples".to_string(),
        });
    }
    for model in models {
        check_k(model, 1)?;
        if model.partial_credit() {
            // The fit models right/wrong counts c of n; partial credit has no such count.
            return Err(AnalyzeError::BadOption {
                option: "fit".to_string(),
                value: format!(
                    "`{}` from {source}, whose scores give partial credit",
                    model.name
                ),
                expected: "binary (right/wrong) scores: the fit models c right answers of n"
                    .to_string(),
            });
        }
    }
    Ok(())
}

/// One row per parameter in the written order (mu, sigma, then each model's shift, shift_sd
/// and run_sd): the joint fit's estimate, or the refusal of a flagged parameter held at
/// its fallback with the diagnoses that flagged it.
fn parameter_fits(
    models: &[&ModelSamples],
    data: &JointData,
    joint: &JointFit,
    fixed: &[(Parameter, f64)],
    diagnoses: &[Diagnosis],
) -> Vec<ParameterFit> {
    let name = |m: usize| models[m].name.as_str();
    let label = |p: Parameter| match p {
        Parameter::Mu => format!("mu (logit of `{}`)", name(0)),
        Parameter::Sigma => "sigma".to_string(),
        Parameter::Shift(m) => format!("shift of `{}`", name(m)),
        Parameter::Tau(m) => format!("shift_sd of `{}`", name(m)),
        Parameter::Omega(m) => format!("run_sd of `{}`", name(m)),
    };
    let mut order = vec![Parameter::Mu, Parameter::Sigma];
    for m in 0..models.len() {
        if m > 0 {
            order.push(Parameter::Shift(m));
        }
        if models.len() > 1 {
            order.push(Parameter::Tau(m));
        }
        if data.has_runs() {
            order.push(Parameter::Omega(m));
        }
    }
    order
        .into_iter()
        .map(|p| {
            if let Some((_, v)) = fixed.iter().find(|(q, _)| *q == p) {
                let why: Vec<String> = diagnoses
                    .iter()
                    .filter(|d| d.parameter == p)
                    .map(|d| d.to_string().replacen(&p.to_string(), &label(p), 1))
                    .collect();
                return ParameterFit {
                    parameter: p,
                    label: label(p),
                    value: *v,
                    se: None,
                    lower: None,
                    upper: None,
                    interval: None,
                    status: Status::Refused {
                        fallback: *v,
                        diagnosis: why.join("; "),
                    },
                };
            }
            let e = joint.estimate(p);
            ParameterFit {
                parameter: p,
                label: label(p),
                value: e.map_or(f64::NAN, |e| e.value),
                se: e.and_then(|e| e.se),
                lower: e.and_then(|e| e.lower),
                upper: e.and_then(|e| e.upper),
                interval: e.map(|e| e.interval),
                status: Status::Estimated,
            }
        })
        .collect()
}

/// The correlation of each pair of models' per-problem logits (no SE when a spread was
/// refused).
fn correlation_fits(
    models: &[&ModelSamples],
    joint: &JointFit,
    fixed: &[(Parameter, f64)],
) -> Vec<CorrelationFit> {
    let name = |m: usize| models[m].name.as_str();
    let mut correlations = Vec::new();
    for a in 0..models.len() {
        for b in a + 1..models.len() {
            let (value, se) = joint.correlation(a, b);
            let refused = fixed
                .iter()
                .any(|(p, _)| matches!(p, Parameter::Sigma | Parameter::Tau(_)));
            correlations.push(CorrelationFit {
                a: name(a).to_string(),
                b: name(b).to_string(),
                value,
                se: if refused { None } else { se },
            });
        }
    }
    correlations
}

/// The models of several result files, combined by name: a model named in two files (an
/// lm-eval run split over files, say) gets the problems of both. With `only` non-empty, just
/// those models, in that order (the first is the fit's reference).
///
/// # Errors
/// A model with the same problem id in two files; a name in `only` that no file holds.
pub fn combine_models(
    datasets: Vec<super::data::Dataset>,
    only: &[String],
) -> Result<Vec<ModelSamples>> {
    let mut models: Vec<(ModelSamples, String)> = Vec::new();
    for d in datasets {
        for m in d.models {
            match models.iter_mut().find(|(o, _)| o.name == m.name) {
                None => models.push((m, d.source.clone())),
                Some((o, first)) => {
                    if let Some(p) = m
                        .problems
                        .iter()
                        .find(|p| o.problems.iter().any(|q| q.id == p.id))
                    {
                        return Err(AnalyzeError::BadOption {
                            option: "fit".to_string(),
                            value: format!(
                                "model `{}` has problem `{}` in both {first} and {}",
                                m.name, p.id, d.source
                            ),
                            expected: "each model's samples of a problem in one file (merge the files first, or rename one model)".to_string(),
                        });
                    }
                    o.has_answers &= m.has_answers;
                    o.has_tokens &= m.has_tokens;
                    o.problems.extend(m.problems);
                }
            }
        }
    }
    if only.is_empty() {
        return Ok(models.into_iter().map(|(m, _)| m).collect());
    }
    let available = || {
        models
            .iter()
            .map(|(m, _)| format!("`{}`", m.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out = Vec::new();
    for name in only {
        match models.iter().find(|(m, _)| &m.name == name) {
            Some((m, _)) => {
                if !out.iter().any(|o: &ModelSamples| &o.name == name) {
                    out.push(m.clone());
                }
            }
            None => {
                return Err(AnalyzeError::UnknownModel {
                    model: name.clone(),
                    available: available(),
                })
            }
        }
    }
    Ok(out)
}

/// Attractor, traces, counts and curves of model m under the joint fit.
fn model_fit(model: &ModelSamples, joint: &JointFit, m: usize) -> Result<ModelFit> {
    let location = joint.mu + joint.shift[m];
    let spread = (joint.sigma.powi(2) + joint.tau[m].powi(2)).sqrt();
    let attractor = fit_attractor(model);
    let summary = summarize_model(model, &SummaryOptions::default())?;
    let mut curves = vec![CurveFit {
        metric: "pass@k".to_string(),
        fitted: summary
            .pass_at_k
            .iter()
            .map(|p| population_pass_at_k(location, spread, p.k))
            .collect(),
        observed: summary.pass_at_k.clone(),
    }];
    if let (Some(maj), Some(a)) = (&summary.maj_at_k, &attractor) {
        curves.push(CurveFit {
            metric: "maj@k".to_string(),
            fitted: maj
                .iter()
                .map(|p| population_maj_at_k(location, spread, a.share, p.k))
                .collect(),
            observed: maj.clone(),
        });
    }
    Ok(ModelFit {
        name: model.name.clone(),
        problems: model.problems.len(),
        location,
        spread,
        attractor,
        traces: fit_traces(model),
        counts: count_histogram(model, location, spread, joint.omega[m]),
        curves,
    })
}

/// Observed and fitted per-problem counts. With a fitted run_sd (omega > 0), over the problems of
/// the most common run shape (R runs of n_r samples each), with the fitted distribution of the
/// count pooled over those runs (`count_probabilities_runs`); otherwise over the problems of
/// the most common n, with the distribution without run noise.
fn count_histogram(model: &ModelSamples, location: f64, spread: f64, omega: f64) -> CountHistogram {
    if omega > 0.0 {
        let mut by_shape: std::collections::BTreeMap<(usize, usize), usize> =
            std::collections::BTreeMap::new();
        let shape = |p: &crate::analyze::ProblemSamples| -> Option<(usize, usize)> {
            let size = p.runs.first()?.n;
            p.runs
                .iter()
                .all(|r| r.n == size)
                .then_some((p.runs.len(), size))
        };
        for p in &model.problems {
            if let Some(k) = shape(p) {
                *by_shape.entry(k).or_default() += 1;
            }
        }
        if let Some((&(runs, size), &total)) = by_shape
            .iter()
            .max_by_key(|&(k, count)| (*count, std::cmp::Reverse(k.0 * k.1)))
        {
            let n = runs * size;
            let mut observed = vec![0usize; n + 1];
            for p in model
                .problems
                .iter()
                .filter(|p| shape(p) == Some((runs, size)))
            {
                observed[p.correct] += 1;
            }
            let fitted = count_probabilities_runs(location, spread, omega, runs, size)
                .into_iter()
                .map(|q| total as f64 * q)
                .collect();
            return CountHistogram {
                n,
                run_shape: Some((runs, size)),
                observed,
                fitted,
            };
        }
    }
    let mut by_n: std::collections::BTreeMap<usize, usize> = std::collections::BTreeMap::new();
    for p in &model.problems {
        *by_n.entry(p.n).or_default() += 1;
    }
    let n = by_n
        .iter()
        .max_by_key(|&(n, count)| (*count, std::cmp::Reverse(*n)))
        .map(|(n, _)| *n)
        .unwrap_or(0);
    let mut observed = vec![0usize; n + 1];
    for p in model.problems.iter().filter(|p| p.n == n) {
        observed[p.correct] += 1;
    }
    let total = by_n.get(&n).copied().unwrap_or(0) as f64;
    let fitted = count_probabilities(location, spread, n)
        .into_iter()
        .map(|q| total * q)
        .collect();
    CountHistogram {
        n,
        run_shape: None,
        observed,
        fitted,
    }
}

/// Censored maximum-likelihood attractor share (see the module docs). Cost: O(N).
pub fn fit_attractor(model: &ModelSamples) -> Option<AttractorFit> {
    if !model.has_answers {
        return None;
    }
    // (W, m, censored)
    let data: Vec<(f64, f64, bool)> = model
        .problems
        .iter()
        .filter(|p| p.n > p.correct)
        .map(|p| {
            let w = (p.n - p.correct) as f64;
            let m = p.wrong_groups.iter().copied().max().unwrap_or(0);
            (w, m as f64, m <= 1)
        })
        .collect();
    let wrong: f64 = data.iter().map(|d| d.0).sum();
    if wrong == 0.0 {
        return None;
    }
    let naive = data.iter().map(|d| d.1).sum::<f64>() / wrong;
    let ll = |a: f64| -> f64 {
        data.iter()
            .map(|&(w, m, censored)| {
                if censored {
                    ((1.0 - a).powf(w) + w * a * (1.0 - a).powf(w - 1.0)).ln()
                } else {
                    m * a.ln() + (w - m) * (1.0 - a).ln()
                }
            })
            .sum()
    };
    let eps = 1e-9;
    let share = golden_max(ll, eps, 1.0 - eps);
    let h = 1e-4 * share.min(1.0 - share).max(1e-6);
    let curvature = -(ll(share + h) - 2.0 * ll(share) + ll(share - h)) / (h * h);
    Some(AttractorFit {
        share,
        se: (curvature > 0.0 && share - h > 0.0 && share + h < 1.0).then(|| 1.0 / curvature.sqrt()),
        naive_share: naive,
        wrong_answers: wrong as usize,
    })
}

/// `x` at 4 decimals, as the fitted scenario shows it.
pub(crate) fn decimals4(x: f64) -> f64 {
    format!("{x:.4}").parse().unwrap_or(x)
}

/// A positive number for the scenario: 4 decimals, or every digit when 4 decimals would show 0
/// (the loader requires these values to be > 0).
pub(crate) fn positive(x: f64) -> f64 {
    let fixed = decimals4(x);
    if fixed > 0.0 {
        fixed
    } else {
        x
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_share_interval_cut_at_0_or_1_says_it_was_cut() {
        assert_eq!(
            super::scenario::share_interval_text(0.5, 0.1),
            " (95% interval 0.304 to 0.696)"
        );
        assert_eq!(
            super::scenario::share_interval_text(0.707, 0.25),
            " (95% interval 0.217 to 1.000, upper end cut at 1 from 1.197)"
        );
        assert_eq!(
            super::scenario::share_interval_text(0.05, 0.05),
            " (95% interval 0.000 to 0.148, lower end cut at 0 from -0.048)"
        );
    }

    use super::*;
    use crate::analyze::data::ProblemSamples;
    use rand::SeedableRng;
    use rand_distr::{Binomial, Distribution, Normal, StandardNormal};
    use rand_xoshiro::Xoshiro256PlusPlus;

    // The fit this module had before the joint fit (plain 48-node Gauss–Hermite, 2-D
    // Nelder–Mead): kept as an independent reference for the one-model case.
    fn softplus(x: f64) -> f64 {
        x.max(0.0) + (-x.abs()).exp().ln_1p()
    }

    /// Log-likelihood of the logit-normal binomial mixture for grouped counts ((n, c), multiplicity).
    /// Cost: O(groups * nodes).
    fn log_likelihood(
        groups: &[((usize, usize), usize)],
        nodes: &[(f64, f64)],
        mu: f64,
        sigma: f64,
    ) -> f64 {
        let mut total = 0.0;
        for &((n, c), mult) in groups {
            let terms: Vec<f64> = nodes
                .iter()
                .map(|&(z, w)| {
                    let eta = mu + sigma * z;
                    // ln p = -softplus(-eta), ln(1 - p) = -softplus(eta)
                    w.ln() - c as f64 * softplus(-eta) - (n - c) as f64 * softplus(eta)
                })
                .collect();
            let top = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let lse = top + terms.iter().map(|t| (t - top).exp()).sum::<f64>().ln();
            let ln_binom = statrs::function::factorial::ln_binomial(n as u64, c as u64);
            total += mult as f64 * (ln_binom + lse);
        }
        total
    }

    /// Minimise `f` over R^2 by Nelder–Mead. Cost: O(iterations) evaluations.
    fn nelder_mead(f: impl Fn([f64; 2]) -> f64, start: [f64; 2], step: f64) -> [f64; 2] {
        let mut simplex = [
            start,
            [start[0] + step, start[1]],
            [start[0], start[1] + step],
        ];
        let mut values = simplex.map(&f);
        for _ in 0..5000 {
            let mut order = [0usize, 1, 2];
            order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
            simplex = order.map(|i| simplex[i]);
            values = order.map(|i| values[i]);
            if (values[2] - values[0]).abs() < 1e-12 * (1.0 + values[0].abs())
                && (simplex[2][0] - simplex[0][0])
                    .abs()
                    .max((simplex[2][1] - simplex[0][1]).abs())
                    < 1e-9
            {
                break;
            }
            let centroid = [
                (simplex[0][0] + simplex[1][0]) / 2.0,
                (simplex[0][1] + simplex[1][1]) / 2.0,
            ];
            let along = |t: f64| {
                [
                    centroid[0] + t * (simplex[2][0] - centroid[0]),
                    centroid[1] + t * (simplex[2][1] - centroid[1]),
                ]
            };
            let reflected = along(-1.0);
            let fr = f(reflected);
            if fr < values[0] {
                let expanded = along(-2.0);
                let fe = f(expanded);
                if fe < fr {
                    simplex[2] = expanded;
                    values[2] = fe;
                } else {
                    simplex[2] = reflected;
                    values[2] = fr;
                }
            } else if fr < values[1] {
                simplex[2] = reflected;
                values[2] = fr;
            } else {
                let contracted = if fr < values[2] {
                    along(-0.5)
                } else {
                    along(0.5)
                };
                let fc = f(contracted);
                if fc < values[2].min(fr) {
                    simplex[2] = contracted;
                    values[2] = fc;
                } else {
                    for i in 1..3 {
                        simplex[i] = [
                            (simplex[0][0] + simplex[i][0]) / 2.0,
                            (simplex[0][1] + simplex[i][1]) / 2.0,
                        ];
                        values[i] = f(simplex[i]);
                    }
                }
            }
        }
        let best = (0..3)
            .min_by(|&a, &b| values[a].total_cmp(&values[b]))
            .unwrap_or(0);
        simplex[best]
    }

    fn previous_fit(model: &ModelSamples) -> (f64, f64) {
        let nodes = gauss_hermite_normal(48);
        let mut map: std::collections::BTreeMap<(usize, usize), usize> =
            std::collections::BTreeMap::new();
        for p in &model.problems {
            *map.entry((p.n, p.correct)).or_default() += 1;
        }
        let groups: Vec<((usize, usize), usize)> = map.into_iter().collect();
        let nll =
            |v: [f64; 2]| -log_likelihood(&groups, &nodes, v[0], v[1].clamp(-20.0, 5.0).exp());
        let best = nelder_mead(nll, [0.0, 0.0], 0.5);
        (best[0], best[1].clamp(-20.0, 5.0).exp())
    }

    fn expit(x: f64) -> f64 {
        1.0 / (1.0 + (-x).exp())
    }

    /// The workbench's model in miniature: logit-normal rates, attractor share a, lognormal
    /// trace lengths with L0 (1 + g d), wrong factor w, log-SD s.
    fn simulate(problems: usize, n: usize, mu: f64, sigma: f64, a: f64, seed: u64) -> ModelSamples {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let (l0, g, w, s) = (8000.0f64, 1.0, 1.5f64, 0.55);
        let noise = Normal::new(0.0, s).unwrap();
        let mut out = Vec::new();
        for i in 0..problems {
            let z: f64 = StandardNormal.sample(&mut rng);
            let p = expit(mu + sigma * z);
            let c = Binomial::new(n as u64, p).unwrap().sample(&mut rng) as usize;
            let wrong = n - c;
            let att = Binomial::new(wrong as u64, a).unwrap().sample(&mut rng) as usize;
            let mut groups = vec![att];
            groups.extend(std::iter::repeat_n(1, wrong - att));
            let mut prob = ProblemSamples::from_groups(&format!("q{i}"), c, &groups);
            let median = l0 * (1.0 + g * (1.0 - p));
            prob.tokens = prob
                .correct_flags()
                .map(|ok| {
                    let m = if ok { median } else { median * w };
                    Some((m.ln() + noise.sample(&mut rng)).exp())
                })
                .collect::<Vec<_>>();
            out.push(prob);
        }
        ModelSamples {
            name: "sim".to_string(),
            problems: out,
            has_answers: true,
            has_tokens: true,
        }
    }

    #[test]
    fn fit_recovers_known_parameters_within_reported_se() {
        let (mu, sigma, a) = (0.3, 1.5, 0.4);
        let model = simulate(400, 16, mu, sigma, a, 7);
        let fit = fit_models(&[&model], "sim.jsonl", &FitOptions::default()).unwrap();
        assert!(fit.diagnoses.is_empty(), "{:?}", fit.diagnoses);
        let m = fit.parameter(Parameter::Mu).unwrap();
        let s = fit.parameter(Parameter::Sigma).unwrap();
        let (mu_se, sigma_se) = (m.se.unwrap(), s.se.unwrap());
        assert!(mu_se > 0.0 && mu_se < 0.5 && sigma_se > 0.0 && sigma_se < 0.5);
        assert!(
            (m.value - mu).abs() < 3.0 * mu_se,
            "mu {} +- {mu_se}",
            m.value
        );
        assert!(
            (s.value - sigma).abs() < 3.0 * sigma_se,
            "sigma {} +- {sigma_se}",
            s.value
        );
        // one fitting path: the joint fit with one model agrees with the fit this module
        // had before (plain 48-node quadrature, its own optimiser) to optimiser precision
        let (old_mu, old_sigma) = previous_fit(&model);
        println!(
            "joint {} {} previous {old_mu} {old_sigma}",
            m.value, s.value
        );
        assert!((m.value - old_mu).abs() < 1e-3 * mu_se.max(1e-3) * 10.0);
        assert!((s.value - old_sigma).abs() < 1e-3 * sigma_se.max(1e-3) * 10.0);

        let fm = &fit.models[0];
        let att = fm.attractor.as_ref().unwrap();
        let se = att.se.unwrap();
        assert!((att.share - a).abs() < 3.0 * se, "a {} +- {se}", att.share);
        assert!(
            att.naive_share > att.share,
            "the naive share counts lone wrong answers"
        );

        // Trace fit: w and sigma_L use within-problem contrasts, so their SEs are the textbook
        // ones: SE(ln w) ~ s * sqrt(1 / sum h_i), SE(s) ~ s / sqrt(2 dof). Bound by 4 SE.
        let t = fm.traces.as_ref().unwrap();
        let samples = 400.0 * 16.0;
        let se_sigma = 0.55 / (2.0 * samples * 0.9f64).sqrt();
        assert!(
            (t.sigma - 0.55).abs() < 4.0 * se_sigma,
            "sigma_L {}",
            t.sigma
        );
        let h: f64 = model
            .problems
            .iter()
            .map(|p| (p.correct * (p.n - p.correct)) as f64 / p.n as f64)
            .sum();
        let se_ln_w = 0.55 / h.sqrt();
        assert!(
            (t.wrong_factor.ln() - 1.5f64.ln()).abs() < 4.0 * se_ln_w,
            "w {}",
            t.wrong_factor
        );
        assert!(t.median_tokens > 4000.0 && t.median_tokens < 16000.0);

        let hist = &fm.counts;
        assert_eq!(hist.n, 16);
        assert_eq!(hist.observed.iter().sum::<usize>(), 400);
        assert!((hist.fitted.iter().sum::<f64>() - 400.0).abs() < 1e-6);
    }

    #[test]
    fn scenario_toml_has_the_leads_layout() {
        let model = simulate(30, 8, 0.2, 2.2, 0.5, 3);
        let fit = fit_models(&[&model], "results.jsonl", &FitOptions::default()).unwrap();
        let value: toml::Value = toml::from_str(&fit.scenario_toml).unwrap();
        assert_eq!(value["title"].as_str(), Some("fitted from results.jsonl"));
        assert_eq!(value["benchmark"]["problems"].as_integer(), Some(30));
        assert_eq!(value["benchmark"]["placement"].as_str(), Some("quantiles"));
        let m = &value["model"][0];
        assert_eq!(m["name"].as_str(), Some("sim"));
        assert_eq!(m["shift_sd"].as_float(), Some(0.0));
        assert!(m["attractor"].as_float().is_some());
        assert!(m["tokens"]["median_tokens"].as_float().is_some());
        assert!(m["tokens"]["hard_growth"].as_float().is_some());
        assert_eq!(value["experiment"][0]["kind"].as_str(), Some("curves"));
        assert_eq!(value["experiment"][0]["votes"].as_integer(), Some(4000));

        let mut pass_fail = model.clone();
        pass_fail.has_answers = false;
        pass_fail.has_tokens = false;
        let fit = fit_models(&[&pass_fail], "he\"x\".jsonl", &FitOptions::default()).unwrap();
        let value: toml::Value = toml::from_str(&fit.scenario_toml).unwrap();
        assert!(value["model"][0].get("tokens").is_none());
        assert_eq!(value["model"][0]["attractor"].as_float(), Some(0.0));
        assert_eq!(value["title"].as_str(), Some("fitted from he\"x\".jsonl"));
    }

    fn refused(fit: &FitResult, p: Parameter) -> bool {
        matches!(
            fit.parameter(p).map(|q| &q.status),
            Some(Status::Refused { .. })
        )
    }

    /// Issue #16's degenerate data sets: sigma is refused (held at the fallback, said in the
    /// scenario), never reported as an estimate; a location on all-right data too.
    #[test]
    fn degenerate_data_sets_refuse_sigma_not_estimate_it() {
        let mut human_eval = vec![(10, 10); 100];
        human_eval.extend(vec![(0, 10); 60]);
        human_eval.extend([(3, 10), (5, 10), (7, 10), (9, 10)]);
        let one_sample: Vec<(usize, usize)> = (0..40).map(|i| (i % 3 % 2, 1)).collect();
        type Case<'a> = (&'a str, Vec<(usize, usize)>, &'a str);
        let cases: Vec<Case> = vec![
            ("all-or-none", human_eval, "only 4 of 164 problems"),
            ("n = 1", one_sample, "every problem has one sample"),
            (
                "4 problems",
                vec![(2, 8), (5, 8), (8, 8), (1, 8)],
                "only 4 problems",
            ),
            ("1 problem", vec![(16, 16)], "only 1 problems"),
        ];
        for (name, counts, why) in cases {
            let model = ModelSamples::from_counts("m", &counts);
            let fit = fit_models(&[&model], "x.jsonl", &FitOptions::default()).unwrap();
            let sigma = fit.parameter(Parameter::Sigma).unwrap();
            assert!(refused(&fit, Parameter::Sigma), "{name}: {sigma:?}");
            assert_eq!(sigma.value, FALLBACK_SIGMA, "{name}");
            assert!(sigma.lower.is_none() && sigma.se.is_none(), "{name}");
            let Status::Refused { diagnosis, .. } = &sigma.status else {
                unreachable!()
            };
            assert!(diagnosis.contains(why), "{name}: {diagnosis}");
            assert!(fit.scenario_toml.contains("sigma: NOT ESTIMATED"), "{name}");
            let value: toml::Value = toml::from_str(&fit.scenario_toml).unwrap();
            assert_eq!(value["benchmark"]["sigma"].as_float(), Some(FALLBACK_SIGMA));
            let mu = fit.mu_sigma().0;
            assert!(mu.is_finite() && mu.abs() < 10.0, "{name}: mu {mu}");
        }
        // one all-right problem: mu is only bounded, so refused as well
        let model = ModelSamples::from_counts("m", &[(16, 16)]);
        let fit = fit_models(&[&model], "x.jsonl", &FitOptions::default()).unwrap();
        assert!(refused(&fit, Parameter::Mu));
        // and data that identify everything refuse nothing
        let model = simulate(200, 16, 0.3, 1.5, 0.4, 5);
        let fit = fit_models(&[&model], "x.jsonl", &FitOptions::default()).unwrap();
        assert!(fit.parameters.iter().all(ParameterFit::estimated));
        assert!(!fit.scenario_toml.contains("NOT ESTIMATED"));
    }

    #[test]
    fn two_models_write_head_to_head_and_a_plan_at_the_observed_gap() {
        let a = simulate(60, 8, 0.2, 1.5, 0.5, 11);
        let mut b = simulate(60, 8, -0.3, 1.5, 0.5, 12);
        b.name = "other".to_string();
        let fit = fit_models(&[&a, &b], "a.jsonl + b.jsonl", &FitOptions::default()).unwrap();
        let value: toml::Value = toml::from_str(&fit.scenario_toml).unwrap();
        let models = value["model"].as_array().unwrap();
        assert_eq!(models.len(), 2);
        assert_eq!(models[1]["name"].as_str(), Some("other"));
        let kinds: Vec<&str> = value["experiment"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["kind"].as_str().unwrap())
            .collect();
        // (then the budget and cost experiments of the token data)
        assert_eq!(&kinds[..3], ["curves", "head-to-head", "plan"]);
        let shift = fit.parameter(Parameter::Shift(1)).unwrap().value;
        let gap = value["experiment"][2]["gap_logits"][0].as_float().unwrap();
        assert!((gap - shift).abs() < 1e-4);
        assert_eq!(fit.correlations.len(), 1);
        assert!(fit.scenario_toml.contains("# shift of `other`: "));
        // The plan's A and B carry the two models' own fitted shift_sd.
        let tau = |m: usize| models[m]["shift_sd"].as_float().unwrap_or(0.0);
        assert_ne!(tau(0), tau(1));
        let scenario = crate::scenario::Scenario::from_toml(&fit.scenario_toml, "f", "f.toml")
            .expect("the written scenario loads");
        let crate::scenario::ExperimentSpec::Plan(crate::scenario::PlanExperimentSpec {
            plan, ..
        }) = &scenario.experiments[2].spec
        else {
            panic!("not a plan")
        };
        assert_eq!(plan.deviation_sds(), (tau(0), tau(1)));
    }

    #[test]
    fn fit_at_sigma_zero_writes_a_scenario_that_loads() {
        // Two models simulated on unrelated problems share no problem effect: sigma is fitted
        // at 0, which a scenario's benchmark refuses. The file takes the smallest positive
        // sigma and says so; it loads.
        let a = simulate(60, 8, 0.2, 1.5, 0.5, 11);
        let mut b = simulate(60, 8, -0.3, 1.5, 0.5, 12);
        b.name = "other".to_string();
        let fit = fit_models(&[&a, &b], "a.jsonl + b.jsonl", &FitOptions::default()).unwrap();
        assert_eq!(fit.parameter(Parameter::Sigma).map(|q| q.value), Some(0.0));
        assert!(
            fit.scenario_toml.contains("sigma is fitted at 0"),
            "{}",
            fit.scenario_toml
        );
        let value: toml::Value = toml::from_str(&fit.scenario_toml).unwrap();
        assert_eq!(value["benchmark"]["sigma"].as_float(), Some(1e-4));
        crate::scenario::Scenario::from_toml(&fit.scenario_toml, "f", "f.toml").expect("loads");
    }

    #[test]
    fn fit_on_two_models_sharing_one_problem_fitted_a_shift_sd_and_a_plan_without_a_warning() {
        let a = simulate(60, 8, 0.2, 1.5, 0.5, 11);
        let mut b = simulate(60, 8, -0.3, 1.5, 0.5, 12);
        b.name = "other".to_string();
        for p in b.problems.iter_mut().skip(1) {
            p.id = format!("b-{}", p.id);
        }
        let fit = fit_models(&[&a, &b], "a.jsonl + b.jsonl", &FitOptions::default()).unwrap();
        assert!(refused(&fit, Parameter::Tau(0)) && refused(&fit, Parameter::Tau(1)));
        let warnings = crate::report::analyze::fit_warnings(&fit);
        assert!(
            warnings.contains("only 1 of its 60 problems are answered by another model too"),
            "{warnings}"
        );
        let value: toml::Value = toml::from_str(&fit.scenario_toml).unwrap();
        let kinds: Vec<&str> = value["experiment"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["kind"].as_str().unwrap())
            .collect();
        assert_eq!(&kinds[..2], ["curves", "head-to-head"]);
        assert!(!kinds.contains(&"plan"));
        assert!(
            fit.scenario_toml
                .contains("# no plan block: the plan rests on the shift_sd of `sim` and `other`"),
            "{}",
            fit.scenario_toml
        );
        crate::scenario::Scenario::from_toml(&fit.scenario_toml, "f", "f.toml").expect("loads");
    }

    /// A code benchmark in miniature: 800 problems x 2 models, n = 10, sigma 12, shift_sd 4 and
    /// 2.5, most counts 0 or 10. The fit used to report sigma without SEs and say nothing.
    #[test]
    fn fit_on_all_or_none_code_benchmark_said_nothing_of_barely_identified_spreads() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(29);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for _ in 0..800 {
            let z: f64 = StandardNormal.sample(&mut rng);
            let z = 12.0 * z;
            for (out, shift, tau) in [(&mut a, 0.0, 4.0), (&mut b, 0.8, 2.5)] {
                let e: f64 = StandardNormal.sample(&mut rng);
                let p = expit(z + shift + tau * e);
                out.push((Binomial::new(10, p).unwrap().sample(&mut rng) as usize, 10));
            }
        }
        let (a, b) = (
            ModelSamples::from_counts("base", &a),
            ModelSamples::from_counts("tuned", &b),
        );
        let fit = fit_models(&[&a, &b], "code.jsonl", &FitOptions::default()).unwrap();
        for q in &fit.parameters {
            assert!(q.status == Status::Estimated, "{}", q.label);
            assert!(
                q.se.is_some() || q.lower.is_some() || q.upper.is_some(),
                "{}: neither an SE nor an interval",
                q.label
            );
        }
        let text = crate::report::analyze::fit_warnings(&fit);
        println!("{text}");
        assert!(text.contains("is barely identified"), "{text}");
        assert!(text.contains("run the plan again"), "{text}");
        assert!(!text.contains("optimiser stopped"), "{text}");
        assert!(fit.scenario_toml.contains("# WARNING: "));
        crate::scenario::Scenario::from_toml(&fit.scenario_toml, "f", "f.toml").expect("loads");
    }

    /// Three models on 60 problems of 16 samples at moderate rates (sigma 1, shift_sd 0.4; few
    /// all-or-none problems): a weak shift_sd is warned of, and the warning used to blame the
    /// all-or-none problems ("0 of 60 problems are all right or all wrong ... so the
    /// likelihood is flat in it") where there were almost none.
    #[test]
    fn a_barely_identified_shift_sd_was_blamed_on_all_or_none_problems_there_were_none_of() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(33);
        let mut models = [Vec::new(), Vec::new(), Vec::new()];
        for _ in 0..60 {
            let z: f64 = StandardNormal.sample(&mut rng);
            for (m, out) in models.iter_mut().enumerate() {
                let e: f64 = StandardNormal.sample(&mut rng);
                let p = expit(z - 0.3 * m as f64 + 0.4 * e);
                out.push((Binomial::new(16, p).unwrap().sample(&mut rng) as usize, 16));
            }
        }
        let samples: Vec<ModelSamples> = models
            .iter()
            .enumerate()
            .map(|(m, counts)| ModelSamples::from_counts(&format!("m{m}"), counts))
            .collect();
        let refs: Vec<&ModelSamples> = samples.iter().collect();
        let fit = fit_models(&refs, "moderate.jsonl", &FitOptions::default()).unwrap();
        let text = crate::report::analyze::fit_warnings(&fit);
        println!("{text}");
        assert!(text.contains("is barely identified"), "{text}");
        assert!(
            text.contains("the data constrain it only loosely"),
            "{text}"
        );
        assert!(!text.contains("all right or all wrong"), "{text}");
    }

    #[test]
    fn fit_on_constant_token_counts_wrote_a_token_sigma_of_0_its_scenario_refused() {
        let mut a = simulate(40, 8, 0.2, 1.5, 0.5, 21);
        for p in &mut a.problems {
            p.tokens = p.tokens.iter().map(|_| Some(500.0)).collect();
        }
        let fit = fit_models(&[&a], "a.jsonl", &FitOptions::default()).unwrap();
        let fitted = fit.models[0].traces.as_ref().map_or(1.0, |t| t.sigma);
        assert!(fitted < 1e-12, "{fitted}");
        let value: toml::Value = toml::from_str(&fit.scenario_toml).unwrap();
        assert_eq!(
            value["model"][0]["tokens"]["sigma"].as_float(),
            Some(crate::analyze::fit::checks::TOKEN_SIGMA_FLOOR)
        );
        assert!(
            fit.scenario_toml.contains("# tokens.sigma is fitted at "),
            "{}",
            fit.scenario_toml
        );
        crate::scenario::Scenario::from_toml(&fit.scenario_toml, "f", "f.toml")
            .expect("the written scenario loads");
    }

    #[test]
    fn problem_ids_that_do_not_line_up_are_a_located_error() {
        let a = ModelSamples::from_counts("a", &[(1, 4), (2, 4)]);
        let mut b = ModelSamples::from_counts("b", &[(1, 4), (2, 4)]);
        for p in &mut b.problems {
            p.id = format!("task/{}", p.id);
        }
        let e = fit_models(&[&a, &b], "a.jsonl + b.jsonl", &FitOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("a.jsonl + b.jsonl") && e.contains("`task/p0`") && e.contains("`p0`"),
            "{e}"
        );
    }

    /// Canonical JSONL of one model with `runs` runs of `samples` samples per problem, drawn by
    /// evalsim's own generator (`sim::synth::for_each_run_row`), each row naming its run.
    fn runs_jsonl(problems: usize, runs: usize, samples: usize, run_sd: f64, seed: u64) -> String {
        use crate::sim::synth::{for_each_run_row, SynthSpec};
        let spec = SynthSpec {
            model: "sim".to_string(),
            problems,
            samples,
            mu: 0.3,
            sigma: 1.2,
            attractor: 0.4,
            tokens: false,
            seed,
        };
        let mut text = String::new();
        for_each_run_row(&spec, runs, run_sd, |row| {
            text += &format!(
                "{{\"problem_id\": \"q{}\", \"model\": \"sim\", \"run\": {}, \"correct\": {}}}\n",
                row.problem, row.run, row.correct
            );
            Ok::<(), ()>(())
        })
        .unwrap();
        text
    }

    fn read_jsonl(text: &str) -> ModelSamples {
        use crate::analyze::read::{read_samples, Format, ReadOptions};
        let mut reader = std::io::Cursor::new(text.as_bytes());
        let data = read_samples(
            Format::Jsonl,
            &mut reader,
            "runs.jsonl",
            &ReadOptions::default(),
        )
        .unwrap();
        data.models[0].clone()
    }

    /// Issue #18: with a `run` column and several runs per problem, `fit` estimates each
    /// model's run_sd (omega); on data simulated by evalsim (N = 150, 4 runs of 8 samples,
    /// mu 0.3, sigma 1.2, omega 0.8, seed 18) every estimate is within 4 SE of the truth, and
    /// the scenario carries `run_sd` with its interval.
    #[test]
    fn fit_estimates_run_sd_from_runs_within_four_se() {
        let model = read_jsonl(&runs_jsonl(150, 4, 8, 0.8, 18));
        assert_eq!(model.problems[0].runs.len(), 4);
        assert_eq!(model.problems[0].n, 32);
        let fit = fit_models(&[&model], "runs.jsonl", &FitOptions::default()).unwrap();
        // The count figure says its counts pool 4 runs of 8; the curve figure says its lines
        // leave out the fitted run_sd.
        assert_eq!(fit.models[0].counts.run_shape, Some((4, 8)));
        let counts = crate::report::analyze::fit_figure(&fit, 1);
        assert!(
            counts.panels[0].title.contains("n = 32 (4 runs of 8)"),
            "{}",
            counts.panels[0].title
        );
        let curves = crate::report::analyze::fit_curves_figure(&fit, 1);
        assert!(
            curves.panels[0].title.contains("without the fitted run_sd"),
            "{}",
            curves.panels[0].title
        );
        for (p, truth) in [
            (Parameter::Mu, 0.3),
            (Parameter::Sigma, 1.2),
            (Parameter::Omega(0), 0.8),
        ] {
            let q = fit.parameter(p).unwrap();
            assert_eq!(q.status, Status::Estimated, "{p}");
            let se = q.se.unwrap();
            let z = (q.value - truth) / se;
            println!(
                "{p}: {:.4} +/- {se:.4} (truth {truth}, z {z:.2}), interval {:?} to {:?}",
                q.value, q.lower, q.upper
            );
            assert!(z.abs() < 4.0, "{p}: z = {z}");
            assert!(q.lower.unwrap() < q.value && q.value < q.upper.unwrap());
        }
        let value: toml::Value = toml::from_str(&fit.scenario_toml).unwrap();
        let omega = fit.parameter(Parameter::Omega(0)).unwrap().value;
        assert_eq!(
            value["model"][0]["run_sd"].as_float(),
            Some(decimals4(omega))
        );
        assert!(
            fit.scenario_toml.contains("# run_sd of `sim`: "),
            "{}",
            fit.scenario_toml
        );
    }

    /// Issue #18: omega is refused (held at 0, said so) when the runs cannot identify it: one
    /// run per problem, or runs of one sample each.
    #[test]
    fn fit_refuses_run_sd_on_single_run_data() {
        for (runs, samples, why) in [
            (
                1,
                8,
                "only 0 of 60 problems have at least 2 runs of at least 2 samples",
            ),
            (
                4,
                1,
                "only 0 of 60 problems have at least 2 runs of at least 2 samples",
            ),
        ] {
            let model = read_jsonl(&runs_jsonl(60, runs, samples, 0.8, 7));
            let fit = fit_models(&[&model], "runs.jsonl", &FitOptions::default()).unwrap();
            let q = fit.parameter(Parameter::Omega(0)).unwrap();
            assert!(
                refused(&fit, Parameter::Omega(0)),
                "{runs} x {samples}: {q:?}"
            );
            assert_eq!(q.value, 0.0);
            let Status::Refused { diagnosis, .. } = &q.status else {
                unreachable!()
            };
            assert!(diagnosis.contains(why), "{diagnosis}");
            assert!(
                fit.scenario_toml.contains("run_sd of `sim`"),
                "{}",
                fit.scenario_toml
            );
            assert!(fit.scenario_toml.contains("NOT ESTIMATED"));
            let value: toml::Value = toml::from_str(&fit.scenario_toml).unwrap();
            // regression (#18): a refused run_sd wrote `run_sd = 0` as if it were an estimate
            assert!(value["model"][0].get("run_sd").is_none(), "{value}");
            assert!(fit
                .scenario_toml
                .contains("run_sd is not written below: it was not estimated"));
        }
        // without a run column, omega is not a parameter and the scenario has no run_sd
        let model = simulate(60, 8, 0.2, 1.5, 0.5, 3);
        let fit = fit_models(&[&model], "plain.jsonl", &FitOptions::default()).unwrap();
        assert!(fit.parameter(Parameter::Omega(0)).is_none());
        assert!(!fit.scenario_toml.contains("run_sd"));
    }

    /// A model's rows must all name a run or none: the mixed row is a located error.
    #[test]
    fn mixed_run_rows_are_a_located_error() {
        use crate::analyze::read::{read_samples, Format, ReadOptions};
        let text = "{\"problem_id\": 1, \"run\": \"a\", \"correct\": true}\n{\"problem_id\": 1, \"correct\": false}\n";
        let mut reader = std::io::Cursor::new(text.as_bytes());
        let e = read_samples(
            Format::Jsonl,
            &mut reader,
            "m.jsonl",
            &ReadOptions::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("m.jsonl:2:") && e.contains("`run`"), "{e}");
        let csv = "problem_id,run,correct\n1,a,1\n1,,0\n";
        let mut reader = std::io::Cursor::new(csv.as_bytes());
        let e = read_samples(Format::Csv, &mut reader, "m.csv", &ReadOptions::default())
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("m.csv:3:") && e.contains("`run`"), "{e}");
        let csv = "problem_id,run,correct\n1,a,1\n1,b,0\n1,a,1\n";
        let mut reader = std::io::Cursor::new(csv.as_bytes());
        let d = read_samples(Format::Csv, &mut reader, "m.csv", &ReadOptions::default()).unwrap();
        let runs: Vec<(String, usize, usize)> = d.models[0].problems[0]
            .runs
            .iter()
            .map(|r| (r.run.clone(), r.n, r.correct))
            .collect();
        assert_eq!(runs, vec![("a".to_string(), 2, 2), ("b".to_string(), 1, 0)]);
        let bad = "{\"problem_id\": 1, \"run\": [1], \"correct\": true}\n";
        let mut reader = std::io::Cursor::new(bad.as_bytes());
        let e = read_samples(
            Format::Jsonl,
            &mut reader,
            "b.jsonl",
            &ReadOptions::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("b.jsonl:1:") && e.contains("run"), "{e}");
    }
}
