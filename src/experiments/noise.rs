//! Benchmark-level noise: `seed-variance` and `vote-spread` (`head-to-head` is
//! [`super::head_to_head`], re-exported here).
//!
//! A rerun samples every problem n times and scores mean_i c_i / n. The exact side uses the
//! closed forms of [`crate::exact::noise`]; the simulated side draws whole reruns and keeps a
//! histogram of the integer totals, so memory does not grow with the number of reruns.
//!
//! Depends on `scenario`, `model`, `exact` and `sim`; computes no closed form and no Monte Carlo
//! SE itself (those are `sim::se`): it pairs.
use super::{ExperimentResult, KindResult, KindRun};
use crate::scenario::{SeedVarianceSpec, VoteSpreadSpec};
use serde::Serialize;

use super::{Check, Estimate, Progress};
use crate::exact::grader::{Grader, SampleGrading};
use crate::exact::maj::maj_at_k_all_with_loss;
use crate::exact::modes::{graded_rate, maj_at_k_modes, Extraction};
use crate::exact::noise::graded_random_placement;
use crate::exact::noise::{
    binomial_sum_moments, count_cdf, count_pmf, question_se, score_quantile, seed_sd, vote_seed_sd,
    PopulationMoments,
};
use crate::exact::noise::{count_pmf_of, pmf_central_moments};
use crate::exact::pass::mean;
use crate::exact::run_corr::{count_pmf_run, run_moments, seed_sd_floor, seed_sd_run};
use crate::exact::shift::question_se_with_deviation;
use crate::exact::total::{graded_total_se_with_deviation, total_se_with_deviation};
use crate::model::{Difficulty, Placement, VoteRule};
use crate::scenario::Scenario;
use crate::sim::counts::{total_histograms, CountSampler, Histogram};
use crate::sim::modes::{GradedVoteSampler, ModeVoteSampler};
use crate::sim::run_corr::simulate_reruns;
use crate::sim::se::{mean_se, proportion_se, score_stats, sd_standard_error};
use crate::sim::votes::{self, vote_total_histograms, AttractorTables, DrawVote, VoteSampler};

pub use super::head_to_head::{run_head_to_head, Disagreement, H2HRow, HeadToHead};

/// A histogram bin: (from, to, density per unit score).
pub type Bin = (f64, f64, f64);

/// Bins of the seed-variance histograms (at most).
const HISTOGRAM_BINS: u64 = 40;

/// One n of a seed-variance experiment.
#[derive(Debug, Clone, Serialize)]
pub struct SeedRow {
    /// Samples per problem.
    pub n: u32,
    /// Mean score across reruns (fraction).
    pub mean: Estimate,
    /// SD of the score across reruns (fraction); exact sqrt(sum p(1-p)/n)/N, or with random
    /// placement sqrt(E[p(1-p)]/(nN) + Var(p)/N).
    pub sd: Estimate,
    /// Exact total SE of the score, seed and question sampling combined (fraction): the spread
    /// over fresh benchmarks of N problems from the population and fresh seeds
    /// ([`crate::exact::total::total_se`]; with random placement the SD above already is it).
    pub total_se: f64,
    /// Exact 2.5% and 97.5% quantiles of the score (fixed placement only).
    pub exact_interval: Option<(f64, f64)>,
    /// Simulated 2.5% and 97.5% quantiles of the score.
    pub sim_interval: (f64, f64),
    /// Share of reruns at or below the exact 2.5% and 97.5% quantiles, against the exact CDF
    /// there (fixed placement only).
    pub interval_checks: Vec<(String, Estimate)>,
    /// Histogram of simulated scores: (from, to, density per unit score).
    pub histogram: Vec<Bin>,
    /// Normal density with the exact mean and SD at points across the histogram's range.
    pub normal_curve: Vec<(f64, f64)>,
    /// With run_sd > 0: the exact seed SD of the same rates with independent samples (run_sd
    /// 0), which falls to 0 as n grows where the run-noise SD levels off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub independent_sd: Option<f64>,
}

/// Result of `seed-variance`.
#[derive(Debug, Clone, Serialize)]
pub struct SeedVariance {
    /// Experiment name.
    pub experiment: String,
    /// Model name.
    pub model: String,
    /// Problem placement (`quantiles` = fixed benchmark; `random` = redrawn every rerun).
    pub placement: Placement,
    /// Number of problems N.
    pub problems: usize,
    /// Reruns per n.
    pub reruns: u64,
    /// Question-sampling SE: sample SD of the rates / sqrt(N) (the population value with random
    /// placement): the floor more samples per problem cannot lower. With `shift_sd` > 0 on a
    /// fixed benchmark each problem's rate is integrated over a fresh deviation e
    /// ([`crate::exact::shift::question_se_with_deviation`]).
    pub question_se: f64,
    /// One row per n.
    pub rows: Vec<SeedRow>,
    /// The model's per-run logit SD omega (absent: 0, independent samples).
    #[serde(skip_serializing_if = "crate::model::is_zero")]
    pub run_sd: f64,
    /// With run_sd > 0: the limit of the seed SD as n grows, sqrt(sum_i Var p_i(eta)) / N
    /// ([`crate::exact::run_corr::seed_sd_floor`]); more samples per run cannot go below it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_floor: Option<f64>,
    /// The model's share of unparsed samples (absent: 0): the score counts them as wrong.
    #[serde(skip_serializing_if = "crate::model::is_zero")]
    pub unparsed: f64,
    /// The model's grader, when grading is noisy: every value is then as graded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grader: Option<Grader>,
}

impl KindResult for SeedVariance {
    fn name(&self) -> &str {
        &self.experiment
    }

    /// Checks: mean and SD per n, and the CDF at the exact 2.5% / 97.5% quantiles.
    fn checks(&self) -> Vec<Check> {
        let mut out = Vec::new();
        for r in &self.rows {
            let cell = format!(
                "model={} n={} placement={:?}",
                self.model, r.n, self.placement
            )
            .to_lowercase();
            let mut push =
                |q: &str, e: Estimate| out.push(Check::new(&self.experiment, q, &cell, e));
            push("mean score", r.mean);
            push("seed sd", r.sd);
            for (q, e) in &r.interval_checks {
                push(q, *e);
            }
        }
        out
    }
}

/// The checks of a result with a fixed set of quantities per row: `each` gives a row's cell and
/// its (quantity, estimate) pairs, checked in that order, row by row.
pub(super) fn row_checks<T, const N: usize>(
    experiment: &str,
    rows: &[T],
    each: impl Fn(&T) -> (String, [(&'static str, Estimate); N]),
) -> Vec<Check> {
    let mut out = Vec::new();
    for r in rows {
        let (cell, quantities) = each(r);
        for (q, e) in quantities {
            out.push(Check::new(experiment, q, &cell, e));
        }
    }
    out
}

/// The exact central 95% interval of the score (from the count pmf of n samples on each of
/// `problems` problems) and its checks: at each end, the share of the simulated reruns scoring
/// at most the exact quantile against the exact CDF there. Time: O(pmf length).
fn interval_checks(
    pmf: &[f64],
    n: u32,
    problems: usize,
    hist: &Histogram,
    reruns: u64,
) -> ((f64, f64), Vec<(String, Estimate)>) {
    let scale = f64::from(n) * problems as f64;
    let lo = score_quantile(pmf, n, problems, 0.025);
    let hi = score_quantile(pmf, n, problems, 0.975);
    let checks = [("2.5%", lo), ("97.5%", hi)]
        .iter()
        .map(|(label, q)| {
            let t = (q * scale).round() as u64;
            let f = count_cdf(pmf, t);
            let se = proportion_se(f, reruns);
            (
                format!("P(score <= exact {label} quantile)"),
                Estimate::new(f, hist.cdf(t), se).counting(1.0 / reruns as f64),
            )
        })
        .collect();
    ((lo, hi), checks)
}

fn placement_of(s: &Scenario) -> (Placement, f64, f64) {
    match s.benchmark.difficulty {
        Difficulty::LogitNormal {
            mu,
            sigma,
            placement,
        } => (placement, mu, sigma),
        Difficulty::Rates { .. } => (Placement::Quantiles, 0.0, 0.0),
    }
}

/// A random placement's population: its (mu, sigma) and its memorised (share, rate), if any.
type Population = (f64, f64, Option<(f64, f64)>);

/// One count sampler per n: the staged draw of a random placement from the population, else one
/// alias table per problem.
fn count_samplers(
    ns: &[u32],
    rates: &[f64],
    population: Option<Population>,
    grading: SampleGrading,
) -> Vec<CountSampler> {
    let problems = rates.len();
    ns.iter()
        .map(|&n| {
            if let Some((mu, sigma, memorised)) = population {
                CountSampler::Population {
                    problems,
                    mu,
                    sigma,
                    n,
                    grading,
                    memorised,
                }
            } else {
                // Graded or not, a problem's count is Bin(n, rate): with unparsed answers or a
                // grader the rate is p~, the law of the staged draw (parse, solve, grade) proved
                // by `staged_counts_follow_the_binomial_of_the_graded_rate`; one alias table per
                // problem draws it as fast as the ungraded count (the staged binomials cost
                // about 30 times as much).
                CountSampler::new(n, rates)
            }
        })
        .collect()
}

/// Seed variance of one model's pass@1 score for each n.
pub fn seed_variance(
    scenario: &Scenario,
    name: &str,
    key: u64,
    model: usize,
    ns: &[u32],
    reruns: u64,
    progress: Progress,
) -> SeedVariance {
    let m = &scenario.models[model];
    if m.run_sd > 0.0 {
        return seed_variance_run(scenario, name, key, model, ns, reruns, progress);
    }
    let (placement, mu, sigma) = placement_of(scenario);
    let random =
        placement == Placement::Random && matches!(m.source, crate::model::RateSource::Shift(_));
    // With random placement a model's logit mu + shift + sigma z + tau e is normal with SD
    // hypot(sigma, tau): the population is again logit-normal, exactly.
    let (mu, sigma) = match m.source {
        crate::model::RateSource::Shift(s) if m.shift_sd > 0.0 => (mu + s, sigma.hypot(m.shift_sd)),
        crate::model::RateSource::Shift(s) => (mu + s, sigma),
        _ => (mu, sigma),
    };
    let true_rates = m.rates_on(&scenario.benchmark);
    // Unparsed answers and a noisy grader: every exact quantity below is that of the graded
    // rates p~; fixed problems draw Bin(n, p~), a random placement stage by stage.
    let grading = SampleGrading::of(m);
    let staged = !grading.is_identity();
    let (rates, complements): (Vec<f64>, Vec<f64>) = if staged {
        true_rates.iter().map(|&p| grading.rate(p, 1.0 - p)).unzip()
    } else {
        let complements = true_rates.iter().map(|p| 1.0 - p).collect();
        (true_rates.clone(), complements)
    };
    // The constant-shift rates: the centres the population quantities integrate e around.
    let centres = m.constant_shift_rates_on(&scenario.benchmark);
    let taus = m.deviation_sds_on(&scenario.benchmark);
    let problems = rates.len();
    // A contaminated model on a redrawn benchmark: each drawn problem is memorised with
    // probability c (`benchmark.contaminated`) and then solved at `memorized_rate`.
    let memorised = m
        .memorized_rate
        .map(|r| (scenario.benchmark.contaminated, r));
    let population = match memorised {
        Some((c, r)) => PopulationMoments::logit_normal(mu, sigma).memorised(c, r),
        None => PopulationMoments::logit_normal(mu, sigma),
    };
    let samplers = count_samplers(
        ns,
        &rates,
        random.then_some((mu, sigma, memorised)),
        grading,
    );
    let keys: Vec<[u64; 2]> = ns.iter().map(|&n| [key, u64::from(n)]).collect();
    let cells: Vec<(&[u64], &CountSampler)> = keys.iter().map(|k| &k[..]).zip(&samplers).collect();
    let hists = total_histograms(scenario.seed, &cells, reruns, progress);
    let rows = ns
        .iter()
        .zip(hists)
        .map(|(&n, hist)| {
            let scale = f64::from(n) * problems as f64;
            let (sim_mean, sim_sd, sim_m4) = score_stats(&hist, scale);
            let (exact_mean, exact_sd, sd_se, mean_se) = if random {
                let (mean_score, sd, _) =
                    graded_random_placement(&population, n, problems, &grading);
                // The fourth moment is estimated from the simulation itself (no closed form).
                (
                    mean_score,
                    sd,
                    sd_standard_error(sim_sd * sim_sd, sim_m4, reruns),
                    mean_se(sd, reruns),
                )
            } else {
                let (var_t, mu4_t) = binomial_sum_moments(&rates, &complements, n);
                let sd = seed_sd(&rates, n);
                (
                    mean(&rates),
                    sd,
                    sd_standard_error(var_t, mu4_t, reruns) / scale,
                    mean_se(sd, reruns),
                )
            };
            let sim_interval = (
                hist.quantile(0.025) as f64 / scale,
                hist.quantile(0.975) as f64 / scale,
            );
            let (exact_interval, interval_checks) = if random {
                (None, Vec::new())
            } else {
                let (interval, checks) =
                    interval_checks(&count_pmf(&rates, n), n, problems, &hist, reruns);
                (Some(interval), checks)
            };
            let (histogram, normal_curve) = histogram_and_curve(&hist, scale, exact_mean, exact_sd);
            SeedRow {
                n,
                mean: Estimate::new(exact_mean, sim_mean, mean_se),
                sd: Estimate::new(exact_sd, sim_sd, sd_se),
                total_se: if random {
                    exact_sd
                } else if staged {
                    graded_total_se_with_deviation(&centres, &taus, n, &grading).0
                } else {
                    total_se_with_deviation(&centres, &taus, n)
                },
                exact_interval,
                sim_interval,
                interval_checks,
                histogram,
                normal_curve,
                independent_sd: None,
            }
        })
        .collect();
    let question = match (random, staged) {
        (true, _) => graded_random_placement(&population, 1, problems, &grading).2,
        (false, false) => question_se_with_deviation(&centres, &taus),
        (false, true) => graded_total_se_with_deviation(&centres, &taus, 1, &grading).1,
    };
    SeedVariance {
        experiment: name.into(),
        model: m.name.clone(),
        placement: if random {
            Placement::Random
        } else {
            Placement::Quantiles
        },
        problems,
        reruns,
        question_se: question,
        rows,
        run_sd: 0.0,
        run_floor: None,
        unparsed: m.unparsed,
        grader: m.grader,
    }
}

/// Reruns under per-run noise (the rerun-by-rerun sampler of [`simulate_reruns`]) use the
/// per-run noise stream tag of the outcome sampler.
use crate::sim::outcome::RUN_NOISE_STREAM;

/// The exact count pmf over 0..=n N of one rerun under per-run noise omega: the convolution of
/// the problems' logit-normal binomial pmfs.
pub(super) fn run_count_pmf(rates: &[f64], omega: f64, n: u32) -> Vec<f64> {
    count_pmf_of(rates.iter().map(|&p| count_pmf_run(p, omega, n)).collect())
}

/// [`seed_variance`] of a model with per-run noise (fixed problems): every rerun draws one eta
/// per problem shared by its n samples. Exact mean, SD ([`seed_sd_run`], which flattens to a
/// floor as n grows), quantiles and the SD's standard error from the exact count pmf
/// ([`count_pmf_of`] of [`count_pmf_run`]); simulated literally ([`simulate_reruns`]).
fn seed_variance_run(
    scenario: &Scenario,
    name: &str,
    key: u64,
    model: usize,
    ns: &[u32],
    reruns: u64,
    progress: Progress,
) -> SeedVariance {
    let m = &scenario.models[model];
    let omega = m.run_sd;
    let rates = m.rates_on(&scenario.benchmark);
    let problems = rates.len();
    let exact_mean = rates
        .iter()
        .map(|&p| run_moments(p, omega).mean)
        .sum::<f64>()
        / problems as f64;
    let question = question_se(&rates);
    let rows = ns
        .iter()
        .map(|&n| {
            let totals = simulate_reruns(
                scenario.seed,
                &[key, u64::from(n), RUN_NOISE_STREAM],
                &rates,
                omega,
                n,
                reruns,
            );
            progress(reruns);
            let mut hist = Histogram::default();
            totals.iter().for_each(|&t| hist.add(t));
            let scale = f64::from(n) * problems as f64;
            let (sim_mean, sim_sd, _) = score_stats(&hist, scale);
            let pmf = run_count_pmf(&rates, omega, n);
            let (_, var_t, mu4_t) = pmf_central_moments(&pmf);
            let sd = seed_sd_run(&rates, omega, n);
            let ((lo, hi), interval_checks) = interval_checks(&pmf, n, problems, &hist, reruns);
            let (histogram, normal_curve) = histogram_and_curve(&hist, scale, exact_mean, sd);
            SeedRow {
                n,
                mean: Estimate::new(exact_mean, sim_mean, sd / (reruns as f64).sqrt()),
                sd: Estimate::new(sd, sim_sd, sd_standard_error(var_t, mu4_t, reruns) / scale),
                total_se: (sd * sd + question * question).sqrt(),
                exact_interval: Some((lo, hi)),
                sim_interval: (
                    hist.quantile(0.025) as f64 / scale,
                    hist.quantile(0.975) as f64 / scale,
                ),
                interval_checks,
                histogram,
                normal_curve,
                independent_sd: Some(seed_sd(&rates, n)),
            }
        })
        .collect();
    SeedVariance {
        experiment: name.into(),
        model: m.name.clone(),
        placement: Placement::Quantiles,
        problems,
        reruns,
        question_se: question,
        rows,
        run_sd: omega,
        run_floor: Some(seed_sd_floor(&rates, omega)),
        unparsed: 0.0,
        grader: None,
    }
}

/// Bins the totals into at most [`HISTOGRAM_BINS`] bins of whole counts, as densities per unit
/// score, and evaluates the normal density with the exact mean and SD across the same range.
fn histogram_and_curve(
    h: &Histogram,
    scale: f64,
    mean: f64,
    sd: f64,
) -> (Vec<Bin>, Vec<(f64, f64)>) {
    let (lo, hi) = (h.offset, h.offset + h.counts.len() as u64);
    let width = (hi - lo).div_ceil(HISTOGRAM_BINS).max(1);
    let r = h.reruns() as f64;
    let mut bins = Vec::new();
    let mut start = lo;
    while start < hi {
        let c: u64 = h
            .iter()
            .filter(|(t, _)| *t >= start && *t < start + width)
            .map(|(_, c)| c)
            .sum();
        let (x0, x1) = (
            (start as f64 - 0.5) / scale,
            ((start + width) as f64 - 0.5) / scale,
        );
        bins.push((x0, x1, c as f64 / r / (x1 - x0)));
        start += width;
    }
    let (x0, x1) = (
        bins.first().map_or(0.0, |b| b.0),
        bins.last().map_or(1.0, |b| b.1),
    );
    let curve = if sd > 0.0 {
        (0..=120)
            .map(|i| {
                let x = x0 + (x1 - x0) * f64::from(i) / 120.0;
                (x, crate::exact::normal::density(x, mean, sd))
            })
            .collect()
    } else {
        Vec::new()
    };
    (bins, curve)
}

/// One k of a vote-spread experiment.
#[derive(Debug, Clone, Serialize)]
pub struct SpreadRow {
    /// Samples per problem.
    pub k: u32,
    /// Mean maj@k score across reruns.
    pub maj_mean: Estimate,
    /// Seed SD of the maj@k score (one vote per problem per rerun): sqrt(sum m(1-m))/N.
    pub maj_sd: Estimate,
    /// Mean of pass@1 averaged over the same k samples.
    pub avg_mean: Estimate,
    /// Seed SD of pass@1 averaged over the k samples: sqrt(sum p(1-p)/k)/N.
    pub avg_sd: Estimate,
}

/// Result of `vote-spread`.
#[derive(Debug, Clone, Serialize)]
pub struct VoteSpread {
    /// Experiment name.
    pub experiment: String,
    /// Model name.
    pub model: String,
    /// Attractor share.
    pub attractor: f64,
    /// Vote rule.
    pub vote_rule: VoteRule,
    /// Reruns per k.
    pub reruns: u64,
    /// One row per k.
    pub rows: Vec<SpreadRow>,
    /// Every attractor share, when the model lists several (maj@k by the mode recurrence).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub attractors: Vec<f64>,
    /// Share of unparsed samples (absent: 0): the average counts them wrong.
    #[serde(skip_serializing_if = "crate::model::is_zero")]
    pub unparsed: f64,
    /// Share of correct samples in the alternate form (absent: 0).
    #[serde(skip_serializing_if = "crate::model::is_zero")]
    pub split: f64,
    /// The model's grader, when grading is noisy: both scores are then as graded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grader: Option<Grader>,
}

impl KindResult for VoteSpread {
    fn name(&self) -> &str {
        &self.experiment
    }

    /// Checks: means and SDs of both scores per k.
    fn checks(&self) -> Vec<Check> {
        row_checks(&self.experiment, &self.rows, |r| {
            // Named like the curves' cells: every share, and u/s when set.
            let cell = format!(
                "model={} {} rule={} k={}",
                self.model,
                super::votes::modes_label(
                    self.attractor,
                    &self.attractors,
                    self.unparsed,
                    self.split
                ),
                self.vote_rule.as_str(),
                r.k
            );
            let quantities = [
                ("maj@k mean", r.maj_mean),
                ("maj@k seed sd", r.maj_sd),
                ("avg pass@1 mean", r.avg_mean),
                ("avg pass@1 seed sd", r.avg_sd),
            ];
            (cell, quantities)
        })
    }
}

/// Seed SD of maj@k against the SD of pass@1 averaged over the same k samples.
#[allow(clippy::too_many_arguments)]
pub fn vote_spread(
    scenario: &Scenario,
    name: &str,
    key: u64,
    model: usize,
    ks: &[u32],
    reruns: u64,
    rule: Option<VoteRule>,
    progress: Progress,
) -> VoteSpread {
    let m = &scenario.models[model];
    let rule = rule.unwrap_or(m.vote_rule);
    let true_rates = m.rates_on(&scenario.benchmark);
    // Several attractors or answer extraction: maj@k by the mode recurrence, the average of the
    // graded rate (1 - u) p, each vote drawn sample by sample.
    let extraction = Extraction {
        unparsed: m.unparsed,
        split: m.split,
    };
    let modes = m.answer_modes_key().is_some();
    // A noisy grader grades every parsed sample and the vote's pick (drawn sample by sample).
    let grading = SampleGrading::of(m);
    let rates = if let Some(_g) = m.grader {
        true_rates
            .iter()
            .map(|&p| grading.rate(p, 1.0 - p).0)
            .collect()
    } else if modes {
        true_rates
            .iter()
            .map(|&p| graded_rate(p, extraction))
            .collect()
    } else {
        true_rates.clone()
    };
    let complements: Vec<f64> = rates.iter().map(|p| 1.0 - p).collect();
    let problems = rates.len() as f64;
    let keys: Vec<[u64; 2]> = ks.iter().map(|&k| [key, u64::from(k)]).collect();
    let hists = if let Some(grader) = m.grader {
        let one = [m.attractor];
        let shares: &[f64] = if m.attractors.len() > 1 {
            &m.attractors
        } else {
            &one
        };
        let samplers: Vec<Vec<GradedVoteSampler>> = ks
            .iter()
            .map(|&k| {
                true_rates
                    .iter()
                    .map(|&p| GradedVoteSampler {
                        vote: ModeVoteSampler::new(p, shares, extraction, k, rule),
                        grader,
                    })
                    .collect()
            })
            .collect();
        histograms_per_k(scenario.seed, &keys, &samplers, reruns, progress)
    } else if modes {
        let samplers: Vec<Vec<ModeVoteSampler>> = ks
            .iter()
            .map(|&k| {
                true_rates
                    .iter()
                    .map(|&p| ModeVoteSampler::new(p, &m.attractors, extraction, k, rule))
                    .collect()
            })
            .collect();
        histograms_per_k(scenario.seed, &keys, &samplers, reruns, progress)
    } else {
        let kmax = ks.iter().copied().max().unwrap_or(1);
        let lnf = crate::exact::maj::ln_factorials(kmax);
        let tables: Vec<AttractorTables> = ks
            .iter()
            .map(|&k| AttractorTables::new(k, m.attractor, &lnf))
            .collect();
        let samplers: Vec<Vec<VoteSampler>> = ks
            .iter()
            .zip(&tables)
            .map(|(&k, t)| votes::samplers(k, &rates, t, rule, &lnf, reruns))
            .collect();
        histograms_per_k(scenario.seed, &keys, &samplers, reruns, progress)
    };
    let rows = ks
        .iter()
        .zip(hists)
        .map(|(&k, (wins, correct))| {
            let pairs: Vec<(f64, f64)> = if modes {
                true_rates
                    .iter()
                    .map(|&p| maj_at_k_modes(p, &m.attractors, extraction, k, rule))
                    .collect()
            } else {
                maj_at_k_all_with_loss(&true_rates, m.attractor, k, rule)
            };
            let (maj, loss): (Vec<f64>, Vec<f64>) = match m.grader {
                Some(g) => pairs.into_iter().map(|x| g.selected(x)).unzip(),
                None => pairs.into_iter().unzip(),
            };
            let (w_mean, w_sd, _) = score_stats(&wins, problems);
            let (c_mean, c_sd, _) = score_stats(&correct, problems * f64::from(k));
            // Moments of the exact totals: a sum of Bernoulli(m_i), and a sum of Bin(k, p_i).
            let (wv, w4) = binomial_sum_moments(&maj, &loss, 1);
            let (cv, c4) = binomial_sum_moments(&rates, &complements, k);
            let maj_sd = vote_seed_sd(&maj, &loss);
            let avg_sd = seed_sd(&rates, k);
            SpreadRow {
                k,
                maj_mean: Estimate::new(mean(&maj), w_mean, mean_se(maj_sd, reruns)),
                maj_sd: Estimate::new(maj_sd, w_sd, sd_standard_error(wv, w4, reruns) / problems),
                avg_mean: Estimate::new(mean(&rates), c_mean, mean_se(avg_sd, reruns)),
                avg_sd: Estimate::new(
                    avg_sd,
                    c_sd,
                    sd_standard_error(cv, c4, reruns) / (problems * f64::from(k)),
                ),
            }
        })
        .collect();
    VoteSpread {
        experiment: name.into(),
        model: m.name.clone(),
        attractor: m.attractor,
        vote_rule: rule,
        reruns,
        rows,
        attractors: if m.attractors.len() > 1 {
            m.attractors.clone()
        } else {
            Vec::new()
        },
        unparsed: m.unparsed,
        split: m.split,
        grader: m.grader,
    }
}

/// [`vote_total_histograms`] with one cell per k: stream key `keys[j]`, one sampler per problem
/// in `samplers[j]`.
fn histograms_per_k<S: DrawVote + Sync>(
    seed: u64,
    keys: &[[u64; 2]],
    samplers: &[Vec<S>],
    reruns: u64,
    progress: Progress,
) -> Vec<(Histogram, Histogram)> {
    let cells: Vec<(&[u64], &[S])> = keys
        .iter()
        .map(|k| &k[..])
        .zip(samplers.iter().map(Vec::as_slice))
        .collect();
    vote_total_histograms(seed, &cells, reruns, progress)
}

impl KindRun for SeedVarianceSpec {
    fn draw_cost_ns(&self) -> u64 {
        200
    }

    fn run(
        &self,
        scenario: &Scenario,
        name: &str,
        key: u64,
        progress: Progress,
    ) -> ExperimentResult {
        ExperimentResult::SeedVariance(seed_variance(
            scenario,
            name,
            key,
            self.model,
            &self.n,
            self.reruns,
            progress,
        ))
    }
}

impl KindRun for VoteSpreadSpec {
    fn draw_cost_ns(&self) -> u64 {
        900
    }

    fn run(
        &self,
        scenario: &Scenario,
        name: &str,
        key: u64,
        progress: Progress,
    ) -> ExperimentResult {
        ExperimentResult::VoteSpread(vote_spread(
            scenario,
            name,
            key,
            self.model,
            &self.k,
            self.reruns,
            self.vote_rule,
            progress,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(placement: &str) -> Scenario {
        let src = format!(
            "seed = 9\n[benchmark]\nproblems = 40\nmu = 0.3\nsigma = 1.5\nplacement = \"{placement}\"\n[[model]]\nname = \"m\"\nshift = 0.2\nattractor = 0.5\n[[model]]\nname = \"w\"\nshift = -0.2\nattractor = 0.5\n"
        );
        Scenario::from_toml(&src, "t", "test").expect("valid")
    }

    #[test]
    fn random_placement_sd_matches_exact_total_sd() {
        let s = scenario("random");
        let r = seed_variance(&s, "sv", 1, 0, &[1, 16], 40_000, &|_| {});
        assert_eq!(r.placement, Placement::Random);
        for row in &r.rows {
            assert!(row.sd.passed() && row.mean.passed(), "{row:?}");
            // Redrawing the problems keeps the SD above the question-sampling floor.
            assert!(row.sd.exact > r.question_se);
        }
    }

    #[test]
    fn fixed_placement_agrees_and_checks_the_interval() {
        let s = scenario("quantiles");
        let r = seed_variance(&s, "sv", 1, 0, &[2], 30_000, &|_| {});
        let c = r.checks();
        assert_eq!(c.len(), 4);
        assert!(c.iter().all(Check::passed), "{c:?}");
    }

    #[test]
    fn head_to_head_and_vote_spread_agree_with_exact() {
        let s = scenario("quantiles");
        let h = run_head_to_head(&s, "h", 2, 1, 0, &[1, 8], 30_000, &|_| {});
        assert!(h.checks().iter().all(Check::passed));
        let v = vote_spread(&s, "v", 3, 0, &[3, 8], 20_000, None, &|_| {});
        assert!(v.checks().iter().all(Check::passed));
    }

    #[test]
    fn results_do_not_depend_on_thread_count() {
        let s = scenario("quantiles");
        let run = |threads| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("pool");
            pool.install(|| {
                serde_json::to_string(&seed_variance(&s, "sv", 1, 0, &[4], 20_000, &|_| {}))
                    .expect("json")
            })
        };
        assert_eq!(run(1), run(3));
    }
}
