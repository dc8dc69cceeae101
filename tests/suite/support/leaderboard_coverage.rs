//! Calibration of the leaderboard by simulation: how often the simultaneous rank intervals hold
//! the true rank of every model, and how often the Holm-adjusted pairwise tests resolve a pair
//! wrongly (models equal in truth, or the other way round), on leaderboards drawn by
//! [`LeaderboardSampler`] whose true scores are known exactly.
//!
//! A model whose true score ties with others may take any rank of the tie, so its interval
//! covers only when it holds all of them: \[1 + #truly better, K - #truly worse\]. With every
//! model equal that is [1, K] for all, and coverage is one minus the family-wise error.
//!
//! Replicates run in parallel, each on its own stream keyed by its index: the same numbers for
//! any thread count. The measured table is in docs/leaderboard.md.
use rayon::prelude::*;
use serde::Serialize;

use evalsim::analyze::data::{ModelSamples, ProblemSamples};
use evalsim::analyze::leaderboard;

use super::leaderboard_sampler::LeaderboardSampler;

/// One calibration cell.
#[derive(Debug, Clone, PartialEq)]
pub struct RankCoverageSpec {
    /// The models and their benchmark.
    pub sampler: LeaderboardSampler,
    /// Problems N.
    pub problems: usize,
    /// Simulated leaderboards.
    pub replicates: usize,
    /// Seed of the streams.
    pub seed: u64,
}

/// What the replicates showed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankCoverage {
    /// Simulated leaderboards.
    pub replicates: usize,
    /// Leaderboards where every model's rank interval held its true rank(s).
    pub covered: usize,
    /// Leaderboards with at least one pair resolved wrongly (equal in truth, or reversed).
    pub family_errors: usize,
    /// Mean share of pairs resolved.
    pub resolved_share: f64,
    /// Mean width (worst - best) of the rank intervals.
    pub mean_width: f64,
}

impl RankCoverage {
    /// Share of leaderboards covered.
    pub fn coverage(&self) -> f64 {
        self.covered as f64 / self.replicates as f64
    }

    /// Share of leaderboards with a wrong resolution (the family-wise error).
    pub fn family_error(&self) -> f64 {
        self.family_errors as f64 / self.replicates as f64
    }
}

/// The models of one simulated leaderboard (`m{j}` solves `c` of `n` on problem `q{i}`).
fn models(counts: &[Vec<usize>], n: usize) -> Vec<ModelSamples> {
    counts
        .iter()
        .enumerate()
        .map(|(j, cs)| ModelSamples {
            name: format!("m{j}"),
            problems: cs
                .iter()
                .enumerate()
                .map(|(i, &c)| ProblemSamples::from_groups(&format!("q{i}"), c, &[n - c]))
                .collect(),
            has_answers: false,
            has_tokens: false,
        })
        .collect()
}

/// Runs the cell. Cost: `replicates` leaderboards of K models on N problems.
///
/// # Panics
/// Fewer than 3 models or 2 problems (the leaderboard needs them).
pub fn rank_coverage(spec: &RankCoverageSpec) -> RankCoverage {
    let truth = spec.sampler.truth();
    let kk = truth.len();
    let per: Vec<(bool, bool, f64, f64)> = (0..spec.replicates)
        .into_par_iter()
        .map(|r| {
            let counts = spec
                .sampler
                .sample_keyed(spec.problems, spec.seed, &[0x1ead, r as u64]);
            let ms = models(&counts, spec.sampler.samples);
            let board = leaderboard(&ms.iter().collect::<Vec<_>>(), &[])
                .expect("at least 3 models and 2 problems");
            let model_of = |pos: usize| -> usize {
                board.entries[pos - 1].model[1..]
                    .parse()
                    .expect("models are named m<j>")
            };
            let covered = board.entries.iter().all(|e| {
                let j: usize = e.model[1..].parse().expect("models are named m<j>");
                let better = truth.iter().filter(|&&t| t > truth[j]).count();
                let worse = truth.iter().filter(|&&t| t < truth[j]).count();
                e.rank_interval[0] <= 1 + better && e.rank_interval[1] >= kk - worse
            });
            let wrong = board.pairs.iter().filter(|p| p.resolved).any(|p| {
                let (h, l) = (model_of(p.higher), model_of(p.lower));
                let up = p.difference.as_ref().is_some_and(|d| d.difference > 0.0);
                let (w, v) = if up { (h, l) } else { (l, h) };
                truth[w] <= truth[v]
            });
            let share = board.resolved() as f64 / board.pairs.len() as f64;
            let width = board
                .entries
                .iter()
                .map(|e| (e.rank_interval[1] - e.rank_interval[0]) as f64)
                .sum::<f64>()
                / kk as f64;
            (covered, wrong, share, width)
        })
        .collect();
    let r = spec.replicates.max(1) as f64;
    RankCoverage {
        replicates: spec.replicates,
        covered: per.iter().filter(|x| x.0).count(),
        family_errors: per.iter().filter(|x| x.1).count(),
        resolved_share: per.iter().map(|x| x.2).sum::<f64>() / r,
        mean_width: per.iter().map(|x| x.3).sum::<f64>() / r,
    }
}
