//! Per-sample eval outcomes drawn from the workbench's own model, tallied per problem the way
//! `analyze` tallies a harness log: for the coverage checks of `analyze`'s intervals, where the
//! population value is known exactly (see `exact::plan::PopulationNodes`).
//!
//! Problem i has z_i ~ N(0, 1); model j solves one sample of it with probability
//! p_ij = expit(mu + shift_j + sigma z_i) (the same z_i for every model: paired data). A wrong
//! sample is the problem's one attractor answer with probability `attractor`, else a one-off
//! answer that matches nothing. Each sample costs O(1) draws.
//!
//! Why here: the simulated data sets of the coverage experiment. Depends on `model`, `exact`
//! (pmfs for its tables) and the rest of `sim`.
use rand::{Rng, RngCore};
use rand_distr::{Distribution, StandardNormal};

use evalsim::model::expit;

/// The tallies of one problem for one model: what `analyze` keeps of n sampled answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProblemTally {
    /// Correct samples c.
    pub correct: usize,
    /// Samples on the attractor (the one repeated wrong answer).
    pub attractor: usize,
    /// One-off wrong samples (each its own answer).
    pub one_offs: usize,
}

impl ProblemTally {
    /// Sizes of the wrong-answer groups: the attractor group (when not empty), then one group of
    /// size 1 per one-off answer.
    pub fn wrong_groups(&self) -> Vec<usize> {
        let mut groups = Vec::with_capacity(1 + self.one_offs);
        if self.attractor > 0 {
            groups.push(self.attractor);
        }
        groups.extend(std::iter::repeat_n(1, self.one_offs));
        groups
    }
}

/// A population of problems from the logit-normal and models that differ by a logit shift.
/// Immutable parameters; the generator is the caller's.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalSampler {
    /// Logit mean of the population.
    pub mu: f64,
    /// Logit SD of the population.
    pub sigma: f64,
    /// Share of wrong answers that land on the attractor.
    pub attractor: f64,
    /// Samples n per problem and model.
    pub samples: usize,
    /// Logit shift of each model (one entry per model).
    pub shifts: Vec<f64>,
}

impl EvalSampler {
    /// One data set on its own stream, keyed by (`seed`, `key`): the same data set for any
    /// thread count and replicate order. `result[model][problem]`. Cost: as [`Self::sample`].
    pub fn sample_keyed(&self, problems: usize, seed: u64, key: &[u64]) -> Vec<Vec<ProblemTally>> {
        let mut rng = evalsim::sim::stream::stream(seed, key);
        self.sample(problems, &mut rng)
    }

    /// Draws `problems` problems and, for each model, `samples` answers per problem:
    /// `result[model][problem]`. Cost: O(problems (1 + models samples)) draws.
    pub fn sample<R: RngCore + ?Sized>(
        &self,
        problems: usize,
        rng: &mut R,
    ) -> Vec<Vec<ProblemTally>> {
        let mut out = vec![Vec::with_capacity(problems); self.shifts.len()];
        for _ in 0..problems {
            self.draw_problem(0.0, rng, &mut out);
        }
        out
    }

    /// A clustered data set on its own stream keyed by (`seed`, `key`): `clusters` clusters whose
    /// sizes are drawn uniformly from `sizes` (inclusive), cluster g shifted by its own
    /// u_g ~ N(0, `tau`^2) on the logit scale (the same for every model), so problem i of cluster
    /// g has p_ij = expit(mu + shift_j + u_g + sigma z_i). Returns `result[model][problem]` and
    /// the cluster of each problem. The population of problems is the logit-normal with SD
    /// sqrt(sigma^2 + tau^2). Cost: O(problems (1 + models samples)) draws.
    pub fn sample_clustered_keyed(
        &self,
        clusters: usize,
        (smallest, largest): (usize, usize),
        tau: f64,
        seed: u64,
        key: &[u64],
    ) -> (Vec<Vec<ProblemTally>>, Vec<usize>) {
        let mut rng = evalsim::sim::stream::stream(seed, key);
        let mut out = vec![Vec::new(); self.shifts.len()];
        let mut of = Vec::new();
        for g in 0..clusters {
            let size = rng.random_range(smallest..=largest.max(smallest));
            let z: f64 = StandardNormal.sample(&mut rng);
            for _ in 0..size {
                self.draw_problem(tau * z, &mut rng, &mut out);
                of.push(g);
            }
        }
        (out, of)
    }

    /// One problem at logit offset `offset`: its z_i, then `samples` answers for each model.
    fn draw_problem<R: RngCore + ?Sized>(
        &self,
        offset: f64,
        rng: &mut R,
        out: &mut [Vec<ProblemTally>],
    ) {
        let z: f64 = StandardNormal.sample(rng);
        for (tallies, shift) in out.iter_mut().zip(&self.shifts) {
            let p = expit(self.mu + shift + offset + self.sigma * z);
            let mut t = ProblemTally {
                correct: 0,
                attractor: 0,
                one_offs: 0,
            };
            for _ in 0..self.samples {
                if rng.random::<f64>() < p {
                    t.correct += 1;
                } else if rng.random::<f64>() < self.attractor {
                    t.attractor += 1;
                } else {
                    t.one_offs += 1;
                }
            }
            tallies.push(t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use evalsim::sim::stream::stream;

    #[test]
    fn tallies_add_up_and_models_share_problems() {
        let s = EvalSampler {
            mu: 0.2,
            sigma: 2.2,
            attractor: 0.5,
            samples: 8,
            shifts: vec![0.0, 50.0],
        };
        let draws = s.sample(200, &mut stream(3, &[1]));
        assert_eq!(draws.len(), 2);
        for t in draws.iter().flatten() {
            assert_eq!(t.correct + t.attractor + t.one_offs, 8);
            assert_eq!(t.wrong_groups().iter().sum::<usize>(), 8 - t.correct);
        }
        // A shift of +50 logits solves everything.
        assert!(draws[1].iter().all(|t| t.correct == 8));
    }

    #[test]
    fn solve_share_matches_the_population_mean() {
        // E[p] by quadrature; the simulated share of correct samples within 5 binomial-plus-
        // question SEs (the problems are a sample, so the SE is sqrt(Var(p)/N + E[pq]/(N n))).
        let s = EvalSampler {
            mu: 0.2,
            sigma: 2.2,
            attractor: 0.5,
            samples: 4,
            shifts: vec![0.0],
        };
        let problems = 20_000;
        let draws = s.sample(problems, &mut stream(5, &[2]));
        let share = draws[0].iter().map(|t| t.correct as f64).sum::<f64>() / (4 * problems) as f64;
        let m = evalsim::exact::plan::population_pair_moments(0.2, 2.2, 0.0);
        let se = (m.var_a / problems as f64 + m.mean_pq_a / (4 * problems) as f64).sqrt();
        assert!(
            ((share - m.mean_a) / se).abs() < 5.0,
            "share {share} vs {} (se {se})",
            m.mean_a
        );
    }
}
