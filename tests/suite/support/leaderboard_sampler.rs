//! Simulated leaderboards: K models on one benchmark, for the calibration of `analyze`'s
//! leaderboard (rank intervals and Holm-adjusted pairwise tests; see
//! `support::leaderboard_coverage`).
//!
//! Problem i has z_i ~ N(0, 1); model j solves one sample of it with probability
//! p_ij = expit(mu + shift_j + sigma z_i + shift_sd e_ij), e_ij ~ N(0, 1) independent across
//! models and problems (the per-problem disagreement of `shift_sd` in the scenario files), and
//! draws c_ij ~ Bin(samples, p_ij). Model j's true pass@1 is E expit(N(mu + shift_j,
//! sigma^2 + shift_sd^2)), increasing in shift_j, so the true ranks are those of the shifts
//! (equal shifts tie) and [`LeaderboardSampler::truth`] gives the scores by quadrature.
//!
//! A test-only generator (the library's generators live in `sim`). Uses `model`, `exact::plan`
//! (the truth) and `sim::stream`.
use rand_distr::{Binomial, Distribution, StandardNormal};

use evalsim::model::expit;

/// K models that differ by a logit shift and a per-problem deviation.
#[derive(Debug, Clone, PartialEq)]
pub struct LeaderboardSampler {
    /// Logit mean of the problems.
    pub mu: f64,
    /// Logit SD of the problems (shared by every model).
    pub sigma: f64,
    /// SD of each model's own per-problem logit deviation.
    pub shift_sd: f64,
    /// Samples n per problem and model.
    pub samples: usize,
    /// Logit shift of each model.
    pub shifts: Vec<f64>,
}

impl LeaderboardSampler {
    /// One data set on the stream keyed by (`seed`, `key`): `counts[model][problem]` correct
    /// samples out of `samples`. The same data for any thread count. Cost: O(problems K) draws.
    pub fn sample_keyed(&self, problems: usize, seed: u64, key: &[u64]) -> Vec<Vec<usize>> {
        let mut rng = evalsim::sim::stream::stream(seed, key);
        let mut out = vec![Vec::with_capacity(problems); self.shifts.len()];
        for _ in 0..problems {
            let z: f64 = StandardNormal.sample(&mut rng);
            for (counts, shift) in out.iter_mut().zip(&self.shifts) {
                let e: f64 = if self.shift_sd > 0.0 {
                    StandardNormal.sample(&mut rng)
                } else {
                    0.0
                };
                let p = expit(self.mu + shift + self.sigma * z + self.shift_sd * e);
                // p lies in [0, 1], where Binomial::new cannot fail.
                let c = Binomial::new(self.samples as u64, p).map_or(0, |b| b.sample(&mut rng));
                counts.push(c as usize);
            }
        }
        out
    }

    /// Each model's true pass@1 over the population of problems (quadrature, relative error
    /// below 1e-12). Cost: K tabulations of 20,001 nodes.
    pub fn truth(&self) -> Vec<f64> {
        let total = self.sigma.hypot(self.shift_sd);
        self.shifts
            .iter()
            .map(|&s| {
                evalsim::exact::plan::PopulationNodes::new(self.mu, total, s, |p| p)
                    .moments()
                    .mean_b
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simulated_scores_match_the_true_pass_at_1() {
        // The share of correct samples of each model within 5 SEs of its truth, the SE from the
        // truth's own variance over problems plus the binomial part (bounded by 1 / (4 N n)).
        let s = LeaderboardSampler {
            mu: 0.0,
            sigma: 1.5,
            shift_sd: 0.8,
            samples: 4,
            shifts: vec![-1.0, 0.0, 0.5],
        };
        let n = 20_000;
        let counts = s.sample_keyed(n, 7, &[1]);
        for (c, t) in counts.iter().zip(s.truth()) {
            let share = c.iter().sum::<usize>() as f64 / (4 * n) as f64;
            let se = (t * (1.0 - t) / n as f64).sqrt();
            assert!(((share - t) / se).abs() < 5.0, "{share} vs {t}");
        }
        assert_eq!(counts, s.sample_keyed(n, 7, &[1]), "keyed streams repeat");
    }
}
