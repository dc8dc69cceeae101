//! Monte Carlo standard errors: how far a simulated number may sit from its exact value by
//! chance alone, for the z-scores of the checks. Experiments pair an exact value with a
//! simulated one and take its SE from here (the one pass rule is `experiments::check`).
//!
//! Depends on [`super::counts`] (histograms of simulated totals) and re-exports the SE of a
//! sample SD from [`crate::exact::noise`], a function of the exact moments.
use super::counts::Histogram;

pub use crate::exact::noise::sd_standard_error;

/// SE of the mean of `draws` independent draws whose SD is `sd`: sd / sqrt(draws).
pub fn mean_se(sd: f64, draws: u64) -> f64 {
    sd / (draws as f64).sqrt()
}

/// SE of the share of successes in `trials` independent trials, each a success with
/// probability `p`: sqrt(p (1 - p) / trials).
pub fn proportion_se(p: f64, trials: u64) -> f64 {
    (p * (1.0 - p) / trials as f64).sqrt()
}

/// z-score of `hits` successes in `trials` independent trials against the exact success
/// probability `p`, whose complement 1 - p is given (computed directly, so that it keeps its
/// relative accuracy when p is near 1): (hits - trials p) / sqrt(trials p (1 - p)).
pub fn count_z(hits: u64, trials: u64, p: f64, complement: f64) -> f64 {
    let r = trials as f64;
    (hits as f64 - r * p) / (r * p * complement).sqrt()
}

/// Sample statistics of a histogram of simulated totals, as scores (total / `scale`): the mean,
/// the SD (with Bessel's correction; 0 for one rerun) and the fourth central moment (divided by
/// the number of reruns).
pub fn score_stats(h: &Histogram, scale: f64) -> (f64, f64, f64) {
    let (mean, m2, m4) = h.moments();
    let r = h.reruns() as f64;
    let var = if r > 1.0 { m2 * r / (r - 1.0) } else { 0.0 };
    (mean / scale, var.sqrt() / scale, m4 / scale.powi(4))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::maj::binomial_pmf;

    #[test]
    fn proportion_se_is_the_sd_of_the_share_by_enumeration() {
        // Brute force: the SD of X / n with X ~ Binomial(n, p), from the pmf.
        for n in [1u32, 2, 7, 40] {
            for p in [0.0, 0.03, 0.5, 0.9] {
                let pmf = binomial_pmf(n, p);
                let share = |x: usize| x as f64 / f64::from(n);
                let mean: f64 = pmf.iter().enumerate().map(|(x, w)| w * share(x)).sum();
                let var: f64 = pmf
                    .iter()
                    .enumerate()
                    .map(|(x, w)| w * (share(x) - mean).powi(2))
                    .sum();
                let se = proportion_se(p, u64::from(n));
                assert!(
                    (se - var.sqrt()).abs() <= 1e-12,
                    "n {n} p {p}: {se} vs {}",
                    var.sqrt()
                );
                // The mean of n draws of one Bernoulli has the same SE.
                assert!((mean_se((p * (1.0 - p)).sqrt(), u64::from(n)) - se).abs() <= 1e-15);
            }
        }
    }

    #[test]
    fn count_z_is_the_share_off_by_its_se() {
        for (hits, trials, p) in [(3u64, 10u64, 0.5), (970, 1000, 0.97), (0, 50, 0.01)] {
            let share = hits as f64 / trials as f64;
            let z = (share - p) / proportion_se(p, trials);
            assert!(
                (count_z(hits, trials, p, 1.0 - p) - z).abs() < 1e-12,
                "{hits} {trials} {p}"
            );
        }
    }

    #[test]
    fn score_stats_match_the_sample_formulas() {
        let totals = [3u64, 5, 5, 6, 9, 9, 9, 12];
        let mut h = Histogram::default();
        for &t in &totals {
            h.add(t);
        }
        let scale = 4.0;
        let xs: Vec<f64> = totals.iter().map(|&t| t as f64 / scale).collect();
        let r = xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / r;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (r - 1.0);
        let m4 = xs.iter().map(|x| (x - mean).powi(4)).sum::<f64>() / r;
        let (m, sd, f) = score_stats(&h, scale);
        assert!((m - mean).abs() < 1e-15);
        assert!((sd - var.sqrt()).abs() < 1e-15);
        assert!((f - m4).abs() < 1e-14);
        let mut one = Histogram::default();
        one.add(4);
        assert_eq!(score_stats(&one, 2.0), (2.0, 0.0, 0.0));
    }
}
