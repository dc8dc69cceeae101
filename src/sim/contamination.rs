//! Literal simulation of a contaminated public benchmark and a fresh one from the same
//! population; the exact values it checks are in [`crate::exact::contamination`].
//!
//! Every rerun draws both benchmarks anew: each public problem is memorised with probability c
//! (then its rate is r), otherwise its rate is expit(mu + sigma Z + tau E) with the model's own
//! deviation E (tau = `shift_sd`); each fresh problem's rate is drawn the same way; each problem
//! is sampled n times. Streams: batch b of reruns uses
//! `stream(seed, [key..., b])`, batches folded in order, so results are identical for any
//! thread count.
use rand::{Rng as _, RngCore};
use rand_distr::{Distribution, StandardNormal};

use super::stream::stream;
use super::{batches, run_ordered_fold};
use crate::exact::contamination::Contamination;
use crate::model::expit;

fn draw_count<R: RngCore>(model: &Contamination, contaminated: f64, rng: &mut R) -> u64 {
    let memorised = contaminated > 0.0 && rng.random::<f64>() < contaminated;
    let z: f64 = StandardNormal.sample(rng);
    // The model's own deviation e is drawn only when it has one, so tau = 0 keeps the streams.
    let e: f64 = if model.shift_sd > 0.0 {
        StandardNormal.sample(rng)
    } else {
        0.0
    };
    let p = if memorised {
        model.memorized_rate
    } else {
        expit(model.mu + model.sigma * z + model.shift_sd * e)
    };
    if !model.grading.is_identity() {
        // Parsed, solved and graded stage by stage (the exact side uses the graded rate).
        return super::counts::staged_count(rng, p, model.n, &model.grading);
    }
    u64::from(super::picks::binomial(model.n, p, rng))
}

/// Simulates `reruns` pairs (public count X over N problems, fresh count Y over M problems), in
/// rerun order. Time: O(reruns (N + M) log n).
pub fn simulate_gap(
    seed: u64,
    key: &[u64],
    model: &Contamination,
    public_problems: usize,
    fresh_problems: usize,
    reruns: u64,
) -> Vec<(u64, u64)> {
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
                    let x = (0..public_problems)
                        .map(|_| draw_count(model, model.contaminated, &mut rng))
                        .sum();
                    let y = (0..fresh_problems)
                        .map(|_| draw_count(model, 0.0, &mut rng))
                        .sum();
                    (x, y)
                })
                .collect::<Vec<_>>()
        },
        |_, pairs| out.extend(pairs),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::contamination::{detection, tests::example};
    use crate::sim::se::count_z;

    #[test]
    fn simulated_detection_rates_match_exact_false_alarm_and_power() {
        let (big_n, big_m, reruns) = (60usize, 40usize, 20_000u64);
        for (i, c) in [0.0, 0.1, 0.25].into_iter().enumerate() {
            let model = example(c);
            let d = detection(&model, big_n, big_m, 0.05);
            let pairs = simulate_gap(21, &[4, i as u64], &model, big_n, big_m, reruns);
            let flags = pairs
                .iter()
                .filter(|&&(x, y)| x as i64 * big_m as i64 - y as i64 * big_n as i64 > d.threshold)
                .count() as u64;
            let (p, q) = if c == 0.0 {
                (d.false_alarm, 1.0 - d.false_alarm)
            } else {
                (d.power, d.miss)
            };
            let z = count_z(flags, reruns, p, q);
            assert!(
                z.abs() <= 4.5,
                "c {c}: {flags} flags of {reruns}, exact {p}, z = {z}"
            );
        }
    }

    #[test]
    fn simulated_mean_gap_matches_c_times_r_minus_mean_rate() {
        let (big_n, big_m, reruns) = (50usize, 50usize, 20_000u64);
        let model = example(0.2);
        let pairs = simulate_gap(5, &[8], &model, big_n, big_m, reruns);
        let n = f64::from(model.n);
        let gaps: Vec<f64> = pairs
            .iter()
            .map(|&(x, y)| x as f64 / (n * big_n as f64) - y as f64 / (n * big_m as f64))
            .collect();
        let r = reruns as f64;
        let mean = gaps.iter().sum::<f64>() / r;
        let sd = (gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / (r - 1.0)).sqrt();
        let z = (mean - model.expected_gap()) / (sd / r.sqrt());
        assert!(
            z.abs() <= 4.5,
            "mean gap {mean} vs {}, z = {z}",
            model.expected_gap()
        );
    }

    #[test]
    fn gap_simulation_is_deterministic_per_seed() {
        let model = example(0.3);
        let a = simulate_gap(1, &[2], &model, 10, 7, 5000);
        assert_eq!(a, simulate_gap(1, &[2], &model, 10, 7, 5000));
        assert_ne!(a, simulate_gap(2, &[2], &model, 10, 7, 5000));
    }
}
