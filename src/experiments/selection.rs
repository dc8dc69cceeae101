//! Best-of-k selection and noisy grading on the `curves` experiment: the best@k points of a
//! model with a `[model.verifier]`, and the graded values of a model with a `[model.grader]`
//! (what the harness prints) with the true values kept beside them.
//!
//! Exact values come from [`crate::exact::verifier`] and [`crate::exact::grader`], simulated
//! ones from [`crate::sim::selection`] (every sample drawn, selected and graded literally).
//! Models with neither key never reach this module, so their numbers are untouched.
use rayon::prelude::*;

use super::points::{Metric, Series, VotePoint};
use super::Estimate;
use crate::exact::grader::{Grader, SampleGrading};
use crate::exact::maj::maj_at_k_all_with_loss;
use crate::exact::modes::maj_at_k_modes;
use crate::exact::noise::vote_seed_sd;
use crate::exact::pass::{bernoulli_mean_se_with, mean};
use crate::exact::pass::{pass_at_k, pass_at_k_complement, pass_hat_k, pass_hat_k_complement};
use crate::exact::verifier::{
    best_at_k_score, best_at_k_threshold, score_ceiling, selectable_rate, threshold_ceiling,
};
use crate::model::{Verifier, VoteRule};
use crate::sim::selection::{simulate_selection, SelectionCell, SelectionCounts};
use crate::sim::stream::name_id;
use crate::sim::votes::ModeAnswers;

/// What this module needs of one series of a vote experiment.
pub(super) struct Selector<'a> {
    pub rates: &'a [f64],
    pub attractor: f64,
    pub rule: VoteRule,
    pub verifier: Option<Verifier>,
    pub grader: Option<Grader>,
    /// Several attractors or answer extraction: graded values then follow
    /// [`crate::exact::modes`] and [`SampleGrading`].
    pub modes: Option<&'a ModeAnswers>,
}

/// (best@k, 1 - best@k) of every problem, exact and true (before grading). Score verifiers
/// integrate per problem, in parallel.
pub fn best_pairs(rates: &[f64], verifier: &Verifier, k: u32) -> Vec<(f64, f64)> {
    match *verifier {
        Verifier::Threshold(v) => rates
            .iter()
            .map(|&p| best_at_k_threshold(p, &v, k))
            .collect(),
        Verifier::Score { separation } => rates
            .par_iter()
            .map(|&p| best_at_k_score(p, separation, k))
            .collect(),
    }
}

/// The large-k limit of best@k on the benchmark (mean over problems), as graded.
pub fn best_ceiling(rates: &[f64], verifier: &Verifier, grader: Option<Grader>) -> f64 {
    let per: Vec<f64> = rates
        .iter()
        .map(|&p| {
            let c = match verifier {
                Verifier::Threshold(v) => threshold_ceiling(p, v),
                Verifier::Score { separation } => score_ceiling(p, *separation),
            };
            grader.map_or(c, |g| g.selected((c, 1.0 - c)).0)
        })
        .collect();
    mean(&per)
}

/// (1 - p)^k from the complement q itself when it is small, else from p: the miss
/// probability of pass@k, accurate in both tails.
fn miss_all(q: f64, p: f64, k: u32) -> f64 {
    if q < 0.5 {
        q.powf(f64::from(k))
    } else {
        pass_at_k_complement(p, k)
    }
}

fn estimate(pairs: &[(f64, f64)], hits: u64, votes: u64) -> (Estimate, f64) {
    let (exact, complement): (Vec<f64>, Vec<f64>) = pairs.iter().copied().unzip();
    let trials = votes as f64 * pairs.len() as f64;
    (
        Estimate::new(
            mean(&exact),
            hits as f64 / trials,
            bernoulli_mean_se_with(&exact, &complement, votes),
        )
        .counting(1.0 / trials),
        vote_seed_sd(&exact, &complement),
    )
}

/// Adds best@k points and grades the other metrics, for every series with a verifier or a
/// grader. `points` are in (series, k, metric) order on entry and on return.
pub(super) fn apply(
    seed: u64,
    key: u64,
    selectors: &[Selector],
    ks: &[u32],
    votes: u64,
    series: &mut [Series],
    points: &mut Vec<VotePoint>,
) {
    let active: Vec<usize> = (0..selectors.len())
        .filter(|&i| selectors[i].verifier.is_some() || selectors[i].grader.is_some())
        .collect();
    if active.is_empty() {
        return;
    }
    let cells: Vec<SelectionCell> = active
        .iter()
        .flat_map(|&si| {
            let s = &selectors[si];
            ks.iter().map(move |&k| SelectionCell {
                p: s.rates.to_vec(),
                k,
                attractor: s.attractor,
                rule: s.rule,
                verifier: s.verifier,
                grader: s.grader,
                modes: s.modes.cloned(),
            })
        })
        .collect();
    let counts = simulate_selection(seed, &[key, name_id("selection")], &cells, votes);
    let total = |c: &[SelectionCounts], f: fn(&SelectionCounts) -> u64| c.iter().map(f).sum();
    for (ai, &si) in active.iter().enumerate() {
        let s = &selectors[si];
        let mut leads = Vec::new();
        // The verifier sees correct or wrong: both split forms are correct, an unparsed sample
        // is wrong, so best@k is that of the rate (1 - u) p.
        let unparsed = s.modes.map_or(0.0, |m| m.extraction.unparsed);
        let selectable: Vec<f64> = s
            .rates
            .iter()
            .map(|&p| selectable_rate(p, unparsed))
            .collect();
        for (ki, &k) in ks.iter().enumerate() {
            let c = &counts[ai * ks.len() + ki];
            let mut maj_graded = None;
            if let (Some(g), Some(md)) = (s.grader, s.modes) {
                // Per-sample metrics of the graded rate (an unparsed sample is never graded
                // correct); the vote's pick graded once.
                let grading = SampleGrading {
                    unparsed: md.extraction.unparsed,
                    grader: Some(g),
                };
                let rate: Vec<(f64, f64)> =
                    s.rates.iter().map(|&p| grading.rate(p, 1.0 - p)).collect();
                for pt in points.iter_mut().filter(|pt| pt.series == si && pt.k == k) {
                    let (pairs, hits): (Vec<(f64, f64)>, u64) = match pt.metric {
                        Metric::PassAtK => (
                            rate.iter()
                                .map(|&(p, q)| (pass_at_k(p, k), miss_all(q, p, k)))
                                .collect(),
                            total(c, |x| x.any_graded),
                        ),
                        Metric::PassHatK => (
                            rate.iter()
                                .map(|&(p, _)| (pass_hat_k(p, k), pass_hat_k_complement(p, k)))
                                .collect(),
                            total(c, |x| x.all_graded),
                        ),
                        Metric::MajAtK => (
                            s.rates
                                .iter()
                                .map(|&p| {
                                    g.selected(maj_at_k_modes(
                                        p,
                                        &md.attractors,
                                        md.extraction,
                                        k,
                                        s.rule,
                                    ))
                                })
                                .collect(),
                            total(c, |x| x.maj_graded),
                        ),
                        Metric::BestAtK => continue,
                    };
                    let (graded, sd) = estimate(&pairs, hits, votes);
                    pt.truth = Some(pt.estimate);
                    pt.estimate = graded;
                    pt.seed_sd = sd;
                }
            } else if let Some(g) = s.grader {
                for pt in points.iter_mut().filter(|pt| pt.series == si && pt.k == k) {
                    let (pairs, hits): (Vec<(f64, f64)>, u64) = match pt.metric {
                        Metric::PassAtK => (
                            s.rates.iter().map(|&p| g.pass_at_k(p, k)).collect(),
                            total(c, |x| x.any_graded),
                        ),
                        Metric::PassHatK => (
                            s.rates.iter().map(|&p| g.pass_hat_k(p, k)).collect(),
                            total(c, |x| x.all_graded),
                        ),
                        Metric::MajAtK => (
                            maj_at_k_all_with_loss(s.rates, s.attractor, k, s.rule)
                                .into_iter()
                                .map(|m| g.selected(m))
                                .collect(),
                            total(c, |x| x.maj_graded),
                        ),
                        Metric::BestAtK => continue,
                    };
                    let (graded, sd) = estimate(&pairs, hits, votes);
                    if pt.metric == Metric::MajAtK {
                        maj_graded = Some(graded.exact);
                    }
                    pt.truth = Some(pt.estimate);
                    pt.estimate = graded;
                    pt.seed_sd = sd;
                }
            }
            if let Some(v) = &s.verifier {
                let truth = best_pairs(&selectable, v, k);
                let (true_est, true_sd) = estimate(&truth, total(c, |x| x.best_true), votes);
                let point = match s.grader {
                    Some(g) => {
                        let graded: Vec<(f64, f64)> =
                            truth.iter().map(|&m| g.selected(m)).collect();
                        let (est, sd) = estimate(&graded, total(c, |x| x.best_graded), votes);
                        VotePoint {
                            series: si,
                            k,
                            metric: Metric::BestAtK,
                            estimate: est,
                            seed_sd: sd,
                            truth: Some(true_est),
                        }
                    }
                    None => VotePoint {
                        series: si,
                        k,
                        metric: Metric::BestAtK,
                        estimate: true_est,
                        seed_sd: true_sd,
                        truth: None,
                    },
                };
                let maj = maj_graded.or_else(|| {
                    points
                        .iter()
                        .find(|q| q.series == si && q.k == k && q.metric == Metric::MajAtK)
                        .map(|q| q.estimate.exact)
                });
                if maj.is_some_and(|m| point.estimate.exact > m) {
                    leads.push(k);
                }
                points.push(point);
            }
        }
        let out = &mut series[si];
        out.grader = s.grader;
        if let Some(v) = &s.verifier {
            out.verifier = Some(*v);
            out.best_ceiling = Some(best_ceiling(&selectable, v, s.grader));
            out.best_leads = Some(leads);
        }
    }
    let kpos = |k: u32| ks.iter().position(|&x| x == k).unwrap_or(0);
    points.sort_by_key(|pt| (pt.series, kpos(pt.k)));
}
