//! Simulated reruns of a paired comparison on a fixed benchmark: each problem's correct counts
//! redrawn as c_i ~ Bin(n_i, observed rate) for both models, `analyze compare`'s reversal
//! probability. Also the generator of a plain seed (not a stream key) for seeded loops.
//!
//! Depends on rand / rand_distr and [`super::stream::Rng`] only; knows nothing of files or of
//! `analyze`'s data types.
use rand::SeedableRng;
use rand_distr::{Binomial, Distribution};

use super::stream::Rng;

/// The generator seeded directly with `seed` (splitmix64 expansion of `seed_from_u64`), for a
/// seeded loop that is not keyed through [`super::stream::stream`]: compare's reruns (kept so
/// for identical output) and seeded property tests.
pub fn seeded(seed: u64) -> Rng {
    Rng::seed_from_u64(seed)
}

/// One problem of a paired rerun: samples and observed rate of model a, then of model b.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairedRates {
    /// Samples of model a.
    pub n_a: u64,
    /// Observed rate of model a, c_a / n_a.
    pub rate_a: f64,
    /// Samples of model b.
    pub n_b: u64,
    /// Observed rate of model b, c_b / n_b.
    pub rate_b: f64,
}

/// How the reruns' pass@1 differences (b minus a, summed over problems) fell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RerunSigns {
    /// Reruns whose difference has the opposite sign to the observed one.
    pub reversed: usize,
    /// Reruns whose difference is 0 (|d| < 1e-12).
    pub tied: usize,
}

/// A rate that is not a probability: the problem's index and whether it was model b's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadRate {
    /// Index into the problems.
    pub problem: usize,
    /// `true` for model b's rate, `false` for model a's.
    pub model_b: bool,
}

/// Runs `reruns` reruns from one generator [`seeded`] with `seed`; per rerun, per problem in
/// order, draws model a's count then model b's, and sums (c_b / n_b - c_a / n_a). A rerun
/// reverses when its difference is not a tie and its sign differs from `observed > 0`.
/// Cost: O(reruns * problems).
///
/// # Errors
/// The first rate (a before b) that is not in [0, 1].
pub fn paired_rerun_signs(
    problems: &[PairedRates],
    observed: f64,
    reruns: usize,
    seed: u64,
) -> Result<RerunSigns, BadRate> {
    let dists: Vec<(Binomial, f64, Binomial, f64)> = problems
        .iter()
        .enumerate()
        .map(|(problem, p)| {
            let bad = |model_b| BadRate { problem, model_b };
            let da = Binomial::new(p.n_a, p.rate_a).map_err(|_| bad(false))?;
            let db = Binomial::new(p.n_b, p.rate_b).map_err(|_| bad(true))?;
            Ok((da, p.n_a as f64, db, p.n_b as f64))
        })
        .collect::<Result<_, BadRate>>()?;
    let mut rng = seeded(seed);
    let (mut reversed, mut tied) = (0usize, 0usize);
    for _ in 0..reruns {
        // Work in a common integer-free form: sum of rate differences.
        let d: f64 = dists
            .iter()
            .map(|(da, na, db, nb)| {
                db.sample(&mut rng) as f64 / nb - da.sample(&mut rng) as f64 / na
            })
            .sum();
        if d.abs() < 1e-12 {
            tied += 1;
        } else if (d > 0.0) != (observed > 0.0) {
            reversed += 1;
        }
    }
    Ok(RerunSigns { reversed, tied })
}
