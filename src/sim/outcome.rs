//! The sampler of the outcome model ([`crate::exact::outcome`]): votes of k samples of one model
//! on every problem, counted for every metric, true and as graded.
//!
//! One entry point for every model; which sampler draws a series is decided here, once, by what
//! its outcome model holds:
//! - independent samples: [`super::votes::simulate`] (one alias draw per vote for one
//!   attractor, the samples drawn literally for several attractors or answer extraction), the
//!   series' cells on streams (key, cell, problem, batch) numbered over the series without
//!   per-run noise;
//! - per-run noise: [`super::run_corr::simulate_problem`], one eta per run and problem, on
//!   streams (key, [`RUN_NOISE_STREAM`], series, k, problem, batch), then the run's samples at
//!   p(eta) (binomial counts for one attractor, the answers one by one otherwise); the
//!   selection, grading and n@k samplers below likewise draw each vote's own p(eta) first;
//! - a verifier or a grader: in addition, [`super::selection::simulate_selection`] draws each
//!   vote's samples one by one, selects and grades them, on streams (key, "selection", cell,
//!   problem) numbered over those series;
//! - confidence filters: in addition, [`super::confidence::filtered_hits`] draws each vote's
//!   samples with their confidences, on streams (key, "confidence", series, k, problem).
//!
//! Counts are integer sums over parallel batches, so they are identical for any thread count.
use super::confidence::filtered_hits;
use super::run_corr::{per_run, simulate_problem, RunProblem};
use super::selection::{simulate_selection, SelectionCell, SelectionCounts};
use super::stream::{name_id, stream};
use super::submit::{submit_hits, verified_hits};
use super::votes::{simulate as simulate_votes, ModeAnswers, VoteCell, VoteCounts};
use crate::exact::confidence::Filter;
use crate::exact::outcome::{Metric, OutcomeModel};
use crate::exact::verifier::selectable_rate;
use rayon::prelude::*;

/// Stream tag of the run-by-run simulation of models with per-run noise.
pub const RUN_NOISE_STREAM: u64 = 0x0072_756e_7364; // "runsd"

/// What one vote of a series at k costs in progress units, each the time of one vote of the
/// canonical model (one alias draw, about 10 ns; docs/performance.md, "Progress weights"): the
/// vote itself (k answers one by one for several attractors or answer extraction, a run's
/// rate and two binomial counts under per-run noise) plus the verifier's pick and the graded
/// counts of [`super::selection`] (a score verifier draws k scores). Measured per vote with
/// `--threads 1` on the built-in scenarios; about +-30%.
pub fn vote_weight(outcome: &OutcomeModel, k: u32) -> u64 {
    let k = u64::from(k);
    let vote = if outcome.run_sd != 0.0 {
        3 + k / 8 + if outcome.is_canonical() { 0 } else { k * 2 / 5 }
    } else if outcome.is_canonical() {
        1
    } else {
        1 + k * 2 / 5
    };
    let pick = match outcome.verifier {
        None => 0,
        Some(crate::model::Verifier::Threshold(_)) => 2,
        Some(crate::model::Verifier::Score { .. }) => 1 + k * 2 / 5,
    };
    let graded = match (outcome.grader, outcome.is_canonical()) {
        (None, _) => 0,
        (Some(_), true) => 4,
        (Some(_), false) => 4 + k * 2 / 5,
    };
    vote + pick + graded
}

/// One series to simulate: a model's outcome model on the benchmark's rates.
#[derive(Debug, Clone, Copy)]
pub struct OutcomeSeries<'a> {
    /// What one sample can be.
    pub outcome: &'a OutcomeModel,
    /// Per-problem solve rates.
    pub rates: &'a [f64],
}

/// Counts of one (series, k, problem) over its votes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tally {
    /// Votes with at least one correct sample.
    pub any_correct: u64,
    /// Votes with every sample correct.
    pub all_correct: u64,
    /// Votes the correct answer won.
    pub wins: u64,
    /// The verifier's picks that were correct.
    pub best_true: u64,
    /// As graded (drawn only with a grader): votes with a sample graded correct, with every
    /// sample graded correct, majority picks graded correct; best-of-k picks graded correct
    /// (drawn with a verifier, equal to `best_true` without a grader).
    pub any_graded: u64,
    /// See `any_graded`.
    pub all_graded: u64,
    /// See `any_graded`.
    pub maj_graded: u64,
    /// See `any_graded`.
    pub best_graded: u64,
    /// n@k per submission count n: (n, true hits, hits as graded).
    pub submitted: Vec<(u32, u64, u64)>,
    /// n@k by the verifier per n, as `submitted` (drawn with a verifier).
    pub verified: Vec<(u32, u64, u64)>,
    /// Confidence-filtered maj@k per filter: (filter, votes won, samples kept over all votes).
    pub filtered: Vec<(Filter, u64, u64)>,
}

impl Tally {
    /// Votes in which `metric` was a hit: as graded when `graded`, else the true hits.
    pub fn hits(&self, metric: Metric, graded: bool) -> u64 {
        match (metric, graded) {
            (Metric::PassAtK, false) => self.any_correct,
            (Metric::PassHatK, false) => self.all_correct,
            (Metric::MajAtK, false) => self.wins,
            (Metric::BestAtK, false) => self.best_true,
            (Metric::PassAtK, true) => self.any_graded,
            (Metric::PassHatK, true) => self.all_graded,
            (Metric::MajAtK, true) => self.maj_graded,
            (Metric::BestAtK, true) => self.best_graded,
            (Metric::SubmitAtK(n), _) => pick(&self.submitted, n, graded),
            (Metric::VerifiedAtK(n), _) => pick(&self.verified, n, graded),
            (Metric::FilteredMajAtK(f), _) => {
                self.filtered.iter().find(|x| x.0 == f).map_or(0, |x| x.1)
            }
        }
    }

    /// Samples a confidence filter kept over all votes (0 for a filter not drawn).
    pub fn kept(&self, filter: Filter) -> u64 {
        self.filtered
            .iter()
            .find(|x| x.0 == filter)
            .map_or(0, |x| x.2)
    }

    fn votes(&mut self, c: &VoteCounts) {
        self.any_correct = c.any_correct;
        self.all_correct = c.all_correct;
        self.wins = c.wins;
    }

    fn selection(&mut self, c: &SelectionCounts) {
        self.any_graded = c.any_graded;
        self.all_graded = c.all_graded;
        self.maj_graded = c.maj_graded;
        self.best_true = c.best_true;
        self.best_graded = c.best_graded;
    }
}

/// The outcome model without its verifier and grader: what its plain vote costs to draw.
fn unselected(o: &OutcomeModel) -> OutcomeModel {
    OutcomeModel {
        verifier: None,
        grader: None,
        ..o.clone()
    }
}

/// The answer modes a vote cell draws, when the model is not the canonical one.
fn mode_answers(o: &OutcomeModel) -> Option<ModeAnswers> {
    (!o.is_canonical()).then(|| ModeAnswers {
        attractors: o.attractors.clone(),
        extraction: o.extraction,
        per_problem: None,
    })
}

/// The hits of n in a list of (n, true hits, graded hits).
fn pick(list: &[(u32, u64, u64)], n: u32, graded: bool) -> u64 {
    list.iter()
        .find(|s| s.0 == n)
        .map_or(0, |s| if graded { s.2 } else { s.1 })
}

/// Simulates `votes` votes of k samples on every problem of every series at every k, with the
/// n@k of `submissions` and the confidence-filtered votes of `filters`. Returns
/// the tallies indexed `[series][k][problem]`. `progress` is called with votes done, each
/// weighted by [`vote_weight`] of its series and k (the vote, run-noise and selection samplers
/// report; the confidence filters report their votes unweighted). After an interruption
/// ([`crate::interrupt::requested`]) some counts stay zero and must be discarded.
///
/// Under per-run noise every vote of every sampler first draws its run's rate p(eta) from its
/// own stream and then its samples at that rate.
///
/// # Panics
///
/// If a series' outcome model is [`OutcomeModel::unsupported`], or refuses n@k or the
/// filtered vote that is asked for.
#[allow(clippy::too_many_arguments)]
pub fn simulate(
    seed: u64,
    key: u64,
    series: &[OutcomeSeries],
    ks: &[u32],
    submissions: &[u32],
    filters: &[Filter],
    votes: u64,
    progress: &(dyn Fn(u64) + Sync),
) -> Vec<Vec<Vec<Tally>>> {
    assert!(
        series.iter().all(|s| s.outcome.unsupported().is_none()),
        "unsupported outcome model"
    );
    assert!(
        submissions.is_empty()
            || series
                .iter()
                .all(|s| s.outcome.refuses(Metric::SubmitAtK(1)).is_none()),
        "n@k of an outcome model that refuses it"
    );
    assert!(
        filters.iter().all(|&f| series
            .iter()
            .all(|s| s.outcome.refuses(Metric::FilteredMajAtK(f)).is_none())),
        "a filtered vote of an outcome model that refuses it"
    );
    let mut out: Vec<Vec<Vec<Tally>>> = series
        .iter()
        .map(|s| vec![vec![Tally::default(); s.rates.len()]; ks.len()])
        .collect();
    independent_votes(seed, key, series, ks, votes, progress, &mut out);
    noisy_votes(seed, key, series, ks, votes, progress, &mut out);
    selection(seed, key, series, ks, votes, progress, &mut out);
    if !submissions.is_empty() {
        submitted(seed, key, series, ks, submissions, votes, &mut out);
    }
    if !filters.is_empty() {
        filtered(seed, key, series, ks, filters, votes, progress, &mut out);
    }
    out
}

/// Every (series, k, problem) triple of `series` that `keep` selects, in order.
fn triples(
    series: &[OutcomeSeries],
    ks: usize,
    keep: impl Fn(&OutcomeSeries) -> bool,
) -> Vec<(usize, usize, usize)> {
    (0..series.len())
        .filter(|&si| keep(&series[si]))
        .flat_map(|si| {
            (0..ks).flat_map(move |ki| (0..series[si].rates.len()).map(move |i| (si, ki, i)))
        })
        .collect()
}

/// The votes of the series with independent samples: one vote cell per (series, k) on streams
/// (key, cell, problem, batch), cells numbered over those series.
fn independent_votes(
    seed: u64,
    key: u64,
    series: &[OutcomeSeries],
    ks: &[u32],
    votes: u64,
    progress: &(dyn Fn(u64) + Sync),
    out: &mut [Vec<Vec<Tally>>],
) {
    let independent: Vec<usize> = (0..series.len())
        .filter(|&si| series[si].outcome.run_sd == 0.0)
        .collect();
    let cells: Vec<VoteCell> = independent
        .iter()
        .flat_map(|&si| {
            let s = series[si];
            ks.iter().map(move |&k| VoteCell {
                k,
                p: s.rates.to_vec(),
                alpha: vec![s.outcome.attractor(); s.rates.len()],
                rule: s.outcome.rule,
                modes: mode_answers(s.outcome),
            })
        })
        .collect();
    // The vote cells run one after another: the votes reported so far tell which one runs.
    let cell_votes: Vec<u64> = cells.iter().map(|c| c.p.len() as u64 * votes).collect();
    let cell_weights: Vec<u64> = independent
        .iter()
        .flat_map(|&si| ks.iter().map(move |&k| (si, k)))
        .map(|(si, k)| vote_weight(&unselected(series[si].outcome), k))
        .collect();
    let reported = std::sync::atomic::AtomicU64::new(0);
    let weighted = |n: u64| {
        let before = reported.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        let (mut end, mut w) = (0u64, 1u64);
        for (&v, &cw) in cell_votes.iter().zip(&cell_weights) {
            end += v;
            w = cw;
            if before < end {
                break;
            }
        }
        progress(n.saturating_mul(w));
    };
    let counts = simulate_votes(seed, &[key], &cells, votes, &weighted);
    scatter(out, &independent, ks.len(), &counts, Tally::votes);
}

/// Adds each cell's per-problem counts to its tallies: cell j x ks + ki holds series `rows[j]`
/// at its ki-th k.
fn scatter<C>(
    out: &mut [Vec<Vec<Tally>>],
    rows: &[usize],
    ks: usize,
    counts: &[Vec<C>],
    add: impl Fn(&mut Tally, &C),
) {
    for (j, &si) in rows.iter().enumerate() {
        for ki in 0..ks {
            for (t, c) in out[si][ki].iter_mut().zip(&counts[j * ks + ki]) {
                add(t, c);
            }
        }
    }
}

/// The votes of the series with per-run noise, run by run, one eta per run and problem; every
/// (series, k, problem) on its own stream (key, [`RUN_NOISE_STREAM`], series, k, problem,
/// batch), in parallel.
fn noisy_votes(
    seed: u64,
    key: u64,
    series: &[OutcomeSeries],
    ks: &[u32],
    votes: u64,
    progress: &(dyn Fn(u64) + Sync),
    out: &mut [Vec<Vec<Tally>>],
) {
    let noisy = triples(series, ks.len(), |s| s.outcome.run_sd != 0.0);
    let runs: Vec<_> = noisy
        .par_iter()
        .map(|&(si, ki, i)| {
            let s = series[si];
            let k = ks[ki];
            let problem = RunProblem {
                p: s.rates[i],
                attractor: s.outcome.attractor(),
                omega: s.outcome.run_sd,
                k,
                rule: s.outcome.rule,
                modes: (!s.outcome.is_canonical())
                    .then_some((s.outcome.attractors.as_slice(), s.outcome.extraction)),
            };
            let path = [key, RUN_NOISE_STREAM, si as u64, u64::from(k), i as u64];
            let r = simulate_problem(seed, &path, &problem, votes);
            progress(votes.saturating_mul(vote_weight(&unselected(s.outcome), k)));
            r
        })
        .collect();
    for (&(si, ki, i), r) in noisy.iter().zip(runs) {
        let t = &mut out[si][ki][i];
        t.any_correct = r.any_correct;
        t.all_correct = r.all_correct;
        t.wins = r.vote_wins;
    }
}

/// Selection and grading, drawn sample by sample, for the series with a verifier or a grader,
/// on streams (key, "selection", cell, problem) with cells numbered over those series.
fn selection(
    seed: u64,
    key: u64,
    series: &[OutcomeSeries],
    ks: &[u32],
    votes: u64,
    progress: &(dyn Fn(u64) + Sync),
    out: &mut [Vec<Vec<Tally>>],
) {
    let selected: Vec<usize> = (0..series.len())
        .filter(|&si| series[si].outcome.verifier.is_some() || series[si].outcome.grader.is_some())
        .collect();
    let cells: Vec<SelectionCell> = selected
        .iter()
        .flat_map(|&si| {
            let s = series[si];
            ks.iter().map(move |&k| SelectionCell {
                p: s.rates.to_vec(),
                k,
                attractor: s.outcome.attractor(),
                rule: s.outcome.rule,
                verifier: s.outcome.verifier,
                grader: s.outcome.grader,
                modes: mode_answers(s.outcome),
                run_sd: s.outcome.run_sd,
            })
        })
        .collect();
    if cells.is_empty() {
        return;
    }
    // The selection's share of each series' weight: the whole weight less its vote's.
    let weights: Vec<u64> = selected
        .iter()
        .flat_map(|&si| ks.iter().map(move |&k| (si, k)))
        .map(|(si, k)| {
            let o = series[si].outcome;
            vote_weight(o, k) - vote_weight(&unselected(o), k)
        })
        .collect();
    let tick = |cell: usize, n: u64| progress(n.saturating_mul(weights[cell]));
    let counts = simulate_selection(seed, &[key, name_id("selection")], &cells, votes, &tick);
    scatter(out, &selected, ks.len(), &counts, Tally::selection);
}

/// n@k: each vote's samples drawn as answers and clustered, on streams (key, "submit", series,
/// k, problem); every n of one vote shares its samples. The verifier's picks on their own
/// streams (key, "verified", series, k, problem): it sees correct or wrong only. Under per-run
/// noise each vote first draws its run's rate.
fn submitted(
    seed: u64,
    key: u64,
    series: &[OutcomeSeries],
    ks: &[u32],
    submissions: &[u32],
    votes: u64,
    out: &mut [Vec<Vec<Tally>>],
) {
    let cells = triples(series, ks.len(), |_| true);
    type Hits = Vec<(u64, u64)>;
    let hits: Vec<(Hits, Option<Hits>)> = cells
        .par_iter()
        .map(|&(si, ki, i)| {
            if crate::interrupt::requested() {
                return (vec![(0, 0); submissions.len()], None);
            }
            let (s, k) = (series[si], ks[ki]);
            let (o, omega) = (s.outcome, s.outcome.run_sd);
            let path = [key, name_id("submit"), si as u64, u64::from(k), i as u64];
            let mut rng = stream(seed, &path);
            let clusters = per_run(s.rates[i], omega, votes, &mut rng, |p, n, rng| {
                submit_hits(&o.shares(p), k, submissions, o.grader, n, rng)
            });
            let verified = o.verifier.map(|v| {
                let path = [key, name_id("verified"), si as u64, u64::from(k), i as u64];
                let mut rng = stream(seed, &path);
                per_run(s.rates[i], omega, votes, &mut rng, |p, n, rng| {
                    let p = selectable_rate(p, o.extraction.unparsed);
                    verified_hits(p, &v, k, submissions, o.grader, n, rng)
                })
            });
            (clusters, verified)
        })
        .collect();
    let label = |h: Vec<(u64, u64)>| -> Vec<(u32, u64, u64)> {
        submissions
            .iter()
            .zip(h)
            .map(|(&n, (t, g))| (n, t, g))
            .collect()
    };
    for (&(si, ki, i), (clusters, verified)) in cells.iter().zip(hits) {
        let t = &mut out[si][ki][i];
        t.submitted = label(clusters);
        t.verified = verified.map(label).unwrap_or_default();
    }
}

/// The confidence-filtered votes of every (series, k, problem), each on its own stream
/// (key, "confidence", series, k, problem); every filter of one vote scores the same samples.
/// Reports `votes` to `progress` per (series, k, problem).
#[allow(clippy::too_many_arguments)]
fn filtered(
    seed: u64,
    key: u64,
    series: &[OutcomeSeries],
    ks: &[u32],
    filters: &[Filter],
    votes: u64,
    progress: &(dyn Fn(u64) + Sync),
    out: &mut [Vec<Vec<Tally>>],
) {
    let cells: Vec<(usize, usize, usize)> = (0..series.len())
        .flat_map(|si| {
            (0..ks.len()).flat_map(move |ki| (0..series[si].rates.len()).map(move |i| (si, ki, i)))
        })
        .collect();
    let hits: Vec<Vec<(u64, u64)>> = cells
        .par_iter()
        .map(|&(si, ki, i)| {
            if crate::interrupt::requested() {
                return vec![(0, 0); filters.len()];
            }
            let s = series[si];
            let k = ks[ki];
            let path = [
                key,
                name_id("confidence"),
                si as u64,
                u64::from(k),
                i as u64,
            ];
            let mut rng = stream(seed, &path);
            let c = s.outcome.confidence.expect("checked by refuses");
            let h = filtered_hits(
                s.rates[i],
                s.outcome.attractor(),
                c,
                k,
                filters,
                s.outcome.rule,
                votes,
                &mut rng,
            );
            progress(votes);
            h
        })
        .collect();
    for (&(si, ki, i), h) in cells.iter().zip(hits) {
        out[si][ki][i].filtered = filters
            .iter()
            .zip(h)
            .map(|(&f, (won, kept))| (f, won, kept))
            .collect();
    }
}
