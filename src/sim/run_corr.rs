//! Literal simulation of per-run correlation (`run_sd`, omega): every run draws its own
//! eta ~ N(0, omega^2) per problem, shared by all samples of that run and problem, then draws the
//! samples one by one. The exact values it checks are in [`crate::exact::run_corr`].
//!
//! Streams: batch b of runs uses `stream(seed, [key..., b])`; runs are drawn in order within a
//! batch and batches are folded in order, so results are identical for any thread count.
use rand::{Rng as _, RngCore};
use rand_distr::{Distribution, StandardNormal};

use super::modes::ModeVoteSampler;
use super::picks::binomial;
use super::stream::stream;
use super::{batches, run_merged, run_ordered_fold};
use crate::exact::modes::Extraction;
use crate::model::{expit, logit, VoteRule};

/// One run's rate of a problem: expit(logit p + omega Z), rates 0 and 1 fixed. Draws one
/// standard normal.
pub fn run_rate<R: RngCore>(p: f64, omega: f64, rng: &mut R) -> f64 {
    let z: f64 = StandardNormal.sample(rng);
    if p <= 0.0 || p >= 1.0 || omega == 0.0 {
        p
    } else {
        expit(logit(p) + omega * z)
    }
}

/// Tallies of simulated runs of k samples of one problem.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunTally {
    /// Runs simulated.
    pub runs: u64,
    /// Runs with at least one correct sample (pass@k).
    pub any_correct: u64,
    /// Runs with every sample correct (pass^k).
    pub all_correct: u64,
    /// Runs whose majority vote picked the correct answer (maj@k).
    pub vote_wins: u64,
}

impl RunTally {
    fn merge(self, o: RunTally) -> RunTally {
        RunTally {
            runs: self.runs + o.runs,
            any_correct: self.any_correct + o.any_correct,
            all_correct: self.all_correct + o.all_correct,
            vote_wins: self.vote_wins + o.vote_wins,
        }
    }
}

/// The vote of the model's spec, literally: M = max(C, A, [S > 0]), T answers tied at M, the
/// correct answer wins with probability 1[C = M, C >= 1] / T (uniform tie-break; `Strict`: only
/// when alone at the top; `Absolute`: 2C > k).
fn vote<R: RngCore>(k: u32, c: u32, a: u32, rule: VoteRule, rng: &mut R) -> bool {
    let s = k - c - a;
    let m = c.max(a).max(u32::from(s > 0));
    if c == 0 || c != m {
        return rule == VoteRule::Absolute && 2 * c > k;
    }
    let tied = 1 + u32::from(a == m) + if m == 1 { s } else { 0 };
    match rule {
        VoteRule::Random => rng.random_range(0..tied) == 0,
        VoteRule::Strict => tied == 1,
        VoteRule::Absolute => 2 * c > k,
    }
}

/// One problem's runs: rate p, attractor share, per-run noise omega, k samples, vote rule, and
/// the answer modes of a model other than the canonical one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunProblem<'a> {
    /// The problem's rate p (median over runs).
    pub p: f64,
    /// Attractor share a of the wrong answers.
    pub attractor: f64,
    /// Per-run logit SD omega.
    pub omega: f64,
    /// Samples per run.
    pub k: u32,
    /// Vote rule.
    pub rule: VoteRule,
    /// Several attractor shares or answer extraction: each run's k answers are then drawn one
    /// by one ([`ModeVoteSampler`] at the run's rate); `None` for the one-attractor model.
    pub modes: Option<(&'a [f64], Extraction)>,
}

/// Simulates `runs` runs of k samples of one problem with rate p, attractor share a and per-run
/// noise omega: per run one eta, then per sample correct with p(eta), else the attractor with
/// probability a, else a one-off, drawn as binomial counts (the answers one by one at p(eta)
/// with answer modes). Time: O(runs log k), O(runs k) with answer modes.
pub fn simulate_problem(seed: u64, key: &[u64], problem: &RunProblem, runs: u64) -> RunTally {
    let tasks: Vec<(u64, u64)> = batches(runs).collect();
    run_merged(
        &tasks,
        RunTally::default(),
        |&(b, count)| {
            let mut path = key.to_vec();
            path.push(b);
            let mut rng = stream(seed, &path);
            let mut t = RunTally::default();
            for _ in 0..count {
                let (c, win) = draw_run(problem, &mut rng);
                t.runs += 1;
                t.any_correct += u64::from(c >= 1);
                t.all_correct += u64::from(c == problem.k);
                t.vote_wins += u64::from(win);
            }
            t
        },
        RunTally::merge,
    )
}

/// One run of a problem: its rate p(eta), then its k samples; returns (correct samples, vote
/// won). The one-attractor model draws counts: C ~ Bin(k, p(eta)) correct, A ~ Bin(k - C, a) of
/// the others on the attractor (each sample is correct, else the attractor with probability a,
/// independently); answer modes draw each answer at p(eta) (parsed correct samples counted).
fn draw_run<R: RngCore>(problem: &RunProblem, rng: &mut R) -> (u32, bool) {
    let RunProblem {
        p,
        attractor,
        omega,
        k,
        rule,
        modes,
    } = *problem;
    let pr = run_rate(p, omega, rng);
    match modes {
        None => {
            let c = binomial(k, pr, rng);
            let a = binomial(k - c, attractor, rng);
            (c, vote(k, c, a, rule, rng))
        }
        Some((attractors, extraction)) => {
            let v = ModeVoteSampler::new(pr, attractors, extraction, k, rule).sample(rng);
            (v.correct, v.win)
        }
    }
}

/// The counts of `votes` votes of one problem with rate p: `draw(p, votes, rng)` itself without
/// per-run noise, else one call per vote at that run's rate p(eta) ([`run_rate`], drawn first
/// from the same stream), the counts summed entry by entry.
pub fn per_run<R: RngCore>(
    p: f64,
    omega: f64,
    votes: u64,
    rng: &mut R,
    mut draw: impl FnMut(f64, u64, &mut R) -> Vec<(u64, u64)>,
) -> Vec<(u64, u64)> {
    if omega == 0.0 {
        return draw(p, votes, rng);
    }
    let mut total: Vec<(u64, u64)> = Vec::new();
    for _ in 0..votes {
        let pr = run_rate(p, omega, rng);
        let one = draw(pr, 1, rng);
        total.resize(one.len(), (0, 0));
        for (t, o) in total.iter_mut().zip(one) {
            t.0 += o.0;
            t.1 += o.1;
        }
    }
    total
}

/// Simulates `reruns` reruns of a benchmark with the given rates, n samples per problem per
/// rerun, one eta per problem per rerun shared by its n samples; returns each rerun's total
/// count of correct samples, in rerun order (the score is total / (n N)). Time: O(reruns N log n).
pub fn simulate_reruns(
    seed: u64,
    key: &[u64],
    rates: &[f64],
    omega: f64,
    n: u32,
    reruns: u64,
) -> Vec<u64> {
    let tasks: Vec<(u64, u64)> = batches(reruns).collect();
    let mut out = Vec::with_capacity(reruns as usize);
    run_ordered_fold(
        &tasks,
        |&(b, count)| {
            let mut path = key.to_vec();
            path.push(b);
            let mut rng = stream(seed, &path);
            (0..count)
                .map(|_| {
                    let mut total = 0u64;
                    for &p in rates {
                        let pr = run_rate(p, omega, &mut rng);
                        total += u64::from(binomial(n, pr, &mut rng));
                    }
                    total
                })
                .collect::<Vec<u64>>()
        },
        |_, totals| out.extend(totals),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::run_corr;
    use crate::sim::se::count_z;

    /// z of an observed Bernoulli count against its exact probability and complement.
    #[test]
    fn simulated_runs_match_exact_pass_and_maj_under_run_noise() {
        let runs = 40_000;
        for (i, &(p, omega, k)) in [(0.2, 1.5, 8u32), (0.6, 0.8, 5), (0.05, 2.5, 16)]
            .iter()
            .enumerate()
        {
            let problem = RunProblem {
                p,
                attractor: 0.5,
                omega,
                k,
                rule: VoteRule::Random,
                modes: None,
            };
            let t = simulate_problem(7, &[1, i as u64], &problem, runs);
            let (v, c) = run_corr::pass_at_k_run(p, omega, k);
            let z = count_z(t.any_correct, runs, v, c);
            assert!(z.abs() <= 4.5, "pass@{k} p {p} omega {omega}: z = {z}");
            let (v, c) = run_corr::pass_hat_k_run(p, omega, k);
            let z = count_z(t.all_correct, runs, v, c);
            assert!(z.abs() <= 4.5, "pass^{k} p {p} omega {omega}: z = {z}");
            let (v, c) = run_corr::maj_at_k_run(p, 0.5, omega, k, VoteRule::Random);
            let z = count_z(t.vote_wins, runs, v, c);
            assert!(z.abs() <= 4.5, "maj@{k} p {p} omega {omega}: z = {z}");
        }
    }

    #[test]
    fn simulated_votes_match_exact_maj_for_every_rule() {
        let runs = 40_000;
        for (i, rule) in [VoteRule::Random, VoteRule::Strict, VoteRule::Absolute]
            .into_iter()
            .enumerate()
        {
            let (p, omega, k) = (0.35, 1.0, 6u32);
            let problem = RunProblem {
                p,
                attractor: 0.6,
                omega,
                k,
                rule,
                modes: None,
            };
            let t = simulate_problem(11, &[2, i as u64], &problem, runs);
            let (v, c) = run_corr::maj_at_k_run(p, 0.6, omega, k, rule);
            let z = count_z(t.vote_wins, runs, v, c);
            assert!(z.abs() <= 4.5, "{rule:?}: z = {z}");
        }
    }

    /// The rerun variance of the score against its exact value: the sample variance of R reruns
    /// has standard error sqrt((m4 - s^4 (R - 3) / (R - 1)) / R), with m4 estimated from the
    /// reruns themselves.
    #[test]
    fn simulated_rerun_spread_matches_exact_seed_sd_with_run_noise() {
        let rates = crate::exact::noise::tests::note_rates();
        let reruns = 20_000u64;
        for (i, &(omega, n)) in [(0.0, 4u32), (1.0, 4), (1.0, 32)].iter().enumerate() {
            let totals = simulate_reruns(3, &[5, i as u64], &rates, omega, n, reruns);
            assert_eq!(totals.len() as u64, reruns);
            let scale = f64::from(n) * rates.len() as f64;
            let scores: Vec<f64> = totals.iter().map(|&t| t as f64 / scale).collect();
            let r = reruns as f64;
            let mean = scores.iter().sum::<f64>() / r;
            let var = scores.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / (r - 1.0);
            let m4 = scores.iter().map(|s| (s - mean).powi(4)).sum::<f64>() / r;
            let se_var = ((m4 - var * var * (r - 3.0) / (r - 1.0)) / r).sqrt();
            let exact = run_corr::seed_sd_run(&rates, omega, n).powi(2);
            let z = (var - exact) / se_var;
            assert!(
                z.abs() <= 4.5,
                "omega {omega} n {n}: var {var} vs {exact}, z = {z}"
            );
            // The mean score is the mean of E[p(eta)].
            let exact_mean: f64 = rates
                .iter()
                .map(|&p| run_corr::run_moments(p, omega).mean)
                .sum::<f64>()
                / rates.len() as f64;
            let z = (mean - exact_mean) / (exact.sqrt() / r.sqrt());
            assert!(z.abs() <= 4.5, "omega {omega} n {n}: mean z = {z}");
        }
    }

    #[test]
    fn reruns_are_deterministic_per_seed() {
        let rates = [0.1, 0.5, 0.9];
        let a = simulate_reruns(9, &[1], &rates, 0.7, 3, 5000);
        assert_eq!(a, simulate_reruns(9, &[1], &rates, 0.7, 3, 5000));
        assert_ne!(a, simulate_reruns(10, &[1], &rates, 0.7, 3, 5000));
    }
}
