//! `fit`: turn observed per-problem counts into a scenario the simulator can rerun.
//!
//! - **Spread** (mu, sigma): maximum likelihood of the logit-normal mixture of binomials,
//!   L = prod_i C(n_i, c_i) E_z[p(z)^c_i (1 - p(z))^(n_i - c_i)], p(z) = expit(mu + sigma z),
//!   z ~ N(0, 1), the expectation by Gauss–Hermite quadrature, maximised by Nelder–Mead on
//!   (mu, ln sigma). Standard errors from the inverse of the numerical Hessian of -ln L in
//!   (mu, sigma) (observed information).
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
use super::summary::check_k;
use super::{AnalyzeError, Result};
/// The fit's quadrature rule lives with the others in [`crate::exact::quadrature`].
pub use crate::exact::quadrature::gauss_hermite_normal;

/// Options of [`fit_model`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FitOptions {
    /// Gauss–Hermite nodes (more for very large sigma).
    pub quadrature_nodes: usize,
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
            quadrature_nodes: 48,
            curve_k: vec![1, 2, 4, 8, 16, 32, 64],
            votes: 4000,
            seed: 1,
        }
    }
}

/// Fitted logit-normal spread of per-problem rates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogitNormalFit {
    /// Location on the logit scale.
    pub mu: f64,
    /// Spread on the logit scale.
    pub sigma: f64,
    /// SE of mu (`None` if the Hessian is not positive definite).
    pub mu_se: Option<f64>,
    /// SE of sigma.
    pub sigma_se: Option<f64>,
    /// Maximised log-likelihood.
    pub log_likelihood: f64,
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
    /// Problems with c = 0..=n correct.
    pub observed: Vec<usize>,
    /// Expected problems with c = 0..=n under the fitted spread.
    pub fitted: Vec<f64>,
}

/// Result of [`fit_model`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FitResult {
    /// Model fitted.
    pub model: String,
    /// Problems used.
    pub problems: usize,
    /// Spread of rates.
    pub logit_normal: LogitNormalFit,
    /// Attractor share (`None` without answers).
    pub attractor: Option<AttractorFit>,
    /// Trace lengths (`None` without tokens).
    pub traces: Option<TraceFit>,
    /// Observed vs fitted counts.
    pub counts: CountHistogram,
    /// Scenario TOML reproducing the fit.
    pub scenario_toml: String,
}

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

/// Fit the logit-normal spread to per-problem counts. Cost: O(iterations * groups * nodes).
fn fit_logit_normal(model: &ModelSamples, nodes: &[(f64, f64)]) -> LogitNormalFit {
    let mut map: std::collections::BTreeMap<(usize, usize), usize> =
        std::collections::BTreeMap::new();
    for p in &model.problems {
        *map.entry((p.n, p.correct)).or_default() += 1;
    }
    let groups: Vec<((usize, usize), usize)> = map.into_iter().collect();
    let (sc, sn) = model.problems.iter().fold((0.0, 0.0), |(c, n), p| {
        (c + p.correct as f64, n + p.n as f64)
    });
    let rate = ((sc + 0.5) / (sn + 1.0)).clamp(1e-3, 1.0 - 1e-3);
    let start = [(rate / (1.0 - rate)).ln(), 0.0];
    let nll = |v: [f64; 2]| -log_likelihood(&groups, nodes, v[0], v[1].clamp(-20.0, 5.0).exp());
    let best = nelder_mead(nll, start, 0.5);
    let (mu, sigma) = (best[0], best[1].clamp(-20.0, 5.0).exp());
    // Observed information in (mu, sigma) by central differences.
    let f = |m: f64, s: f64| -log_likelihood(&groups, nodes, m, s.abs());
    let (hm, hs) = (1e-4 * (1.0 + mu.abs()), 1e-4 * (1.0 + sigma));
    let f0 = f(mu, sigma);
    let a = (f(mu + hm, sigma) - 2.0 * f0 + f(mu - hm, sigma)) / (hm * hm);
    let d = (f(mu, sigma + hs) - 2.0 * f0 + f(mu, sigma - hs)) / (hs * hs);
    let b = (f(mu + hm, sigma + hs) - f(mu + hm, sigma - hs) - f(mu - hm, sigma + hs)
        + f(mu - hm, sigma - hs))
        / (4.0 * hm * hs);
    let det = a * d - b * b;
    let (mu_se, sigma_se) = if a > 0.0 && det > 0.0 {
        (Some((d / det).sqrt()), Some((a / det).sqrt()))
    } else {
        (None, None)
    };
    LogitNormalFit {
        mu,
        sigma,
        mu_se,
        sigma_se,
        log_likelihood: -f0,
    }
}

/// Golden-section maximisation of a unimodal function on [lo, hi]. Cost: O(log(1/tol)).
fn golden_max(f: impl Fn(f64) -> f64, mut lo: f64, mut hi: f64) -> f64 {
    let r = (5f64.sqrt() - 1.0) / 2.0;
    let (mut x1, mut x2) = (hi - r * (hi - lo), lo + r * (hi - lo));
    let (mut f1, mut f2) = (f(x1), f(x2));
    for _ in 0..200 {
        if (hi - lo).abs() < 1e-12 {
            break;
        }
        if f1 < f2 {
            lo = x1;
            x1 = x2;
            f1 = f2;
            x2 = lo + r * (hi - lo);
            f2 = f(x2);
        } else {
            hi = x2;
            x2 = x1;
            f2 = f1;
            x1 = hi - r * (hi - lo);
            f1 = f(x1);
        }
    }
    (lo + hi) / 2.0
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

/// Trace-length fit (see the module docs); `None` without tokens on every sample or without a
/// problem that has both correct and wrong traces. Cost: O(samples + grid * N).
pub fn fit_traces(model: &ModelSamples) -> Option<TraceFit> {
    if !model.has_tokens {
        return None;
    }
    let mut curve_points = Vec::new(); // (d_i, mean ln L of correct)
    let (mut diff_num, mut diff_den) = (0.0, 0.0);
    let (mut ss, mut dof) = (0.0, 0.0);
    for p in &model.problems {
        let d = 1.0 - p.correct as f64 / p.n as f64;
        let mut right = Vec::new();
        let mut wrong = Vec::new();
        for (t, ok) in p.tokens.iter().zip(p.correct_flags()) {
            let l = t.unwrap_or(1.0).max(1.0).ln();
            if ok {
                right.push(l);
            } else {
                wrong.push(l);
            }
        }
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        for v in [&right, &wrong] {
            if v.len() >= 2 {
                let m = mean(v);
                ss += v.iter().map(|x| (x - m).powi(2)).sum::<f64>();
                dof += (v.len() - 1) as f64;
            }
        }
        if !right.is_empty() {
            curve_points.push((d, mean(&right)));
        }
        if !right.is_empty() && !wrong.is_empty() {
            let (nc, nw) = (right.len() as f64, wrong.len() as f64);
            let h = nc * nw / (nc + nw);
            diff_num += h * (mean(&wrong) - mean(&right));
            diff_den += h;
        }
    }
    if curve_points.is_empty() || diff_den == 0.0 || dof == 0.0 {
        return None;
    }
    let intercept = |g: f64| {
        curve_points
            .iter()
            .map(|&(d, y)| y - (g * d).ln_1p())
            .sum::<f64>()
            / curve_points.len() as f64
    };
    let neg_sse = |g: f64| {
        let a = intercept(g);
        -curve_points
            .iter()
            .map(|&(d, y)| (y - a - (g * d).ln_1p()).powi(2))
            .sum::<f64>()
    };
    // Coarse grid, then golden section around the best grid point (g in [0, 50]).
    let grid: Vec<f64> = (0..=500).map(|i| i as f64 * 0.1).collect();
    let best = grid
        .iter()
        .copied()
        .max_by(|&a, &b| neg_sse(a).total_cmp(&neg_sse(b)))
        .unwrap_or(0.0);
    let g = golden_max(neg_sse, (best - 0.1).max(0.0), best + 0.1);
    Some(TraceFit {
        median_tokens: intercept(g).exp(),
        hard_growth: g,
        wrong_factor: (diff_num / diff_den).exp(),
        sigma: (ss / dof).sqrt(),
    })
}

/// Fit a model's samples and write the scenario TOML.
///
/// # Errors
/// A model without problems or with a zero-sample problem; partial-credit scores.
pub fn fit_model(model: &ModelSamples, source: &str, options: &FitOptions) -> Result<FitResult> {
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
    if !(2..=crate::exact::quadrature::MAX_GAUSS_HERMITE_NODES).contains(&options.quadrature_nodes)
    {
        return Err(AnalyzeError::BadOption {
            option: "quadrature_nodes".to_string(),
            value: options.quadrature_nodes.to_string(),
            expected: format!(
                "2 to {} (48 is the default)",
                crate::exact::quadrature::MAX_GAUSS_HERMITE_NODES
            ),
        });
    }
    let nodes = gauss_hermite_normal(options.quadrature_nodes);
    let logit_normal = fit_logit_normal(model, &nodes);
    let attractor = fit_attractor(model);
    let traces = fit_traces(model);
    let counts = count_histogram(model, &nodes, logit_normal.mu, logit_normal.sigma);
    let scenario_toml = scenario_toml(
        source,
        model.problems.len(),
        &logit_normal,
        attractor.as_ref(),
        traces.as_ref(),
        options,
    )
    .map_err(|e| AnalyzeError::BadOption {
        option: "fit".to_string(),
        value: format!("the fitted scenario of `{}` ({e})", model.name),
        expected: "values TOML can hold".to_string(),
    })?;
    Ok(FitResult {
        model: model.name.clone(),
        problems: model.problems.len(),
        logit_normal,
        attractor,
        traces,
        counts,
        scenario_toml,
    })
}

fn count_histogram(
    model: &ModelSamples,
    nodes: &[(f64, f64)],
    mu: f64,
    sigma: f64,
) -> CountHistogram {
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
    let fitted = (0..=n)
        .map(|c| total * log_likelihood(&[((n, c), 1)], nodes, mu, sigma).exp())
        .collect();
    CountHistogram {
        n,
        observed,
        fitted,
    }
}

/// `x` at 4 decimals, as the fitted scenario shows it.
fn decimals4(x: f64) -> f64 {
    format!("{x:.4}").parse().unwrap_or(x)
}

/// A positive number for the scenario: 4 decimals, or every digit when 4 decimals would show 0
/// (the loader requires these values to be > 0).
fn positive(x: f64) -> f64 {
    let fixed = decimals4(x);
    if fixed > 0.0 {
        fixed
    } else {
        x
    }
}

/// The fitted scenario, written with the serde types that read scenario files (so it reads
/// back as one): a title, the seed, the benchmark, one model `fitted` and a `curves`
/// experiment. What the values cannot say goes into comments at the top.
fn scenario_toml(
    source: &str,
    problems: usize,
    spread: &LogitNormalFit,
    attractor: Option<&AttractorFit>,
    traces: Option<&TraceFit>,
    options: &FitOptions,
) -> std::result::Result<String, toml::ser::Error> {
    use crate::scenario::raw::{
        ExperimentKind, RawBenchmark, RawExperiment, RawModel, RawScenario, RawTokens,
    };
    use crate::scenario::MAX_PROBLEMS;
    use toml::Spanned;
    fn at<T>(x: T) -> Option<Spanned<T>> {
        Some(Spanned::new(0..0, x))
    }
    let mut notes = String::new();
    if problems > MAX_PROBLEMS as usize {
        notes.push_str(&format!(
            "# the input has {problems} problems; scenarios hold at most {MAX_PROBLEMS}\n"
        ));
    }
    if attractor.is_none() {
        notes.push_str("# attractor = 0.0: no answers in the input, not estimated\n");
    }
    let raw = RawScenario {
        title: at(format!("fitted from {source}")),
        seed: at(options.seed),
        benchmark: at(RawBenchmark {
            problems: at(problems.min(MAX_PROBLEMS as usize) as u64),
            mu: at(decimals4(spread.mu)),
            sigma: at(positive(spread.sigma)),
            placement: at(crate::model::Placement::Quantiles),
            rates: None,
            contaminated: None,
            contaminated_models: None,
        }),
        model: vec![Spanned::new(
            0..0,
            RawModel {
                name: at("fitted".to_string()),
                shift: at(0.0),
                rates: None,
                attractor: at(attractor.map_or(0.0, |a| decimals4(a.share))),
                run_sd: None,
                memorized_rate: None,
                vote_rule: None,
                tokens: traces.map(|t| {
                    Spanned::new(
                        0..0,
                        RawTokens {
                            median_tokens: at(positive(t.median_tokens)),
                            hard_growth: at(decimals4(t.hard_growth)),
                            wrong_factor: at(positive(t.wrong_factor)),
                            sigma: at(positive(t.sigma)),
                        },
                    )
                }),
            },
        )],
        experiment: vec![Spanned::new(
            0..0,
            RawExperiment {
                kind: at(ExperimentKind::Curves),
                models: at(vec!["fitted".to_string()]),
                k: at(options.curve_k.iter().map(|&k| k as u64).collect()),
                votes: at(options.votes as u64),
                ..RawExperiment::default()
            },
        )],
    };
    Ok(notes + &toml::to_string(&raw)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::data::ProblemSamples;
    use rand::SeedableRng;
    use rand_distr::{Binomial, Distribution, Normal, StandardNormal};
    use rand_xoshiro::Xoshiro256PlusPlus;

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
        let fit = fit_model(&model, "sim.jsonl", &FitOptions::default()).unwrap();
        let ln = &fit.logit_normal;
        let (mu_se, sigma_se) = (ln.mu_se.unwrap(), ln.sigma_se.unwrap());
        assert!(mu_se > 0.0 && mu_se < 0.5 && sigma_se > 0.0 && sigma_se < 0.5);
        assert!((ln.mu - mu).abs() < 3.0 * mu_se, "mu {} +- {mu_se}", ln.mu);
        assert!(
            (ln.sigma - sigma).abs() < 3.0 * sigma_se,
            "sigma {} +- {sigma_se}",
            ln.sigma
        );

        let att = fit.attractor.as_ref().unwrap();
        let se = att.se.unwrap();
        assert!((att.share - a).abs() < 3.0 * se, "a {} +- {se}", att.share);
        assert!(
            att.naive_share > att.share,
            "the naive share counts lone wrong answers"
        );

        // Trace fit: w and sigma_L use within-problem contrasts, so their SEs are the textbook
        // ones: SE(ln w) ~ s * sqrt(1 / sum h_i), SE(s) ~ s / sqrt(2 dof). Bound by 4 SE.
        let t = fit.traces.as_ref().unwrap();
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

        let hist = &fit.counts;
        assert_eq!(hist.n, 16);
        assert_eq!(hist.observed.iter().sum::<usize>(), 400);
        assert!((hist.fitted.iter().sum::<f64>() - 400.0).abs() < 1e-6);
    }

    #[test]
    fn scenario_toml_has_the_leads_layout() {
        let model = simulate(30, 8, 0.2, 2.2, 0.5, 3);
        let fit = fit_model(&model, "results.jsonl", &FitOptions::default()).unwrap();
        let value: toml::Value = toml::from_str(&fit.scenario_toml).unwrap();
        assert_eq!(value["title"].as_str(), Some("fitted from results.jsonl"));
        assert_eq!(value["benchmark"]["problems"].as_integer(), Some(30));
        assert_eq!(value["benchmark"]["placement"].as_str(), Some("quantiles"));
        let m = &value["model"][0];
        assert_eq!(m["name"].as_str(), Some("fitted"));
        assert!(m["attractor"].as_float().is_some());
        assert!(m["tokens"]["median_tokens"].as_float().is_some());
        assert!(m["tokens"]["hard_growth"].as_float().is_some());
        assert_eq!(value["experiment"][0]["kind"].as_str(), Some("curves"));
        assert_eq!(value["experiment"][0]["votes"].as_integer(), Some(4000));

        let mut pass_fail = model.clone();
        pass_fail.has_answers = false;
        pass_fail.has_tokens = false;
        let fit = fit_model(&pass_fail, "he\"x\".jsonl", &FitOptions::default()).unwrap();
        let value: toml::Value = toml::from_str(&fit.scenario_toml).unwrap();
        assert!(value["model"][0].get("tokens").is_none());
        assert_eq!(value["model"][0]["attractor"].as_float(), Some(0.0));
        assert_eq!(value["title"].as_str(), Some("fitted from he\"x\".jsonl"));
    }
}
