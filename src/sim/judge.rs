//! Literal simulation of a pairwise judge; the exact values it checks are in
//! [`crate::exact::judge`].
//!
//! Every question draws its quality difference d ~ N(gap, spread^2) and the two answers'
//! lengths ln L_A, ln L_B from their own normals; then every protocol judges those two answers
//! with its own coins: the order (random order, length control), and one uniform per judgment
//! against expit(eta) of the answer shown first, with eta written out from the model (quality,
//! position, verbosity and self-preference of whichever answer sits in position 1). Nothing is
//! drawn from a closed-form win probability: X = d + v Delta is never formed.
//!
//! Streams: batch b of reruns uses `stream(seed, [key..., b])`, and batches are folded in
//! order, so results are identical for any thread count.
use rand::{Rng as _, RngCore};
use rand_distr::{Binomial, Distribution, StandardNormal};
use std::collections::HashMap;

use super::stream::stream;
use super::{batches, run_ordered_fold};
use crate::exact::judge::{Component, Judge, Protocol, Score};
use crate::exact::sign_test::critical;
use crate::model::expit;

/// What a run of reruns of N questions produced.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeTally {
    /// Per protocol (in [`Protocol::ALL`] order): the histogram of each rerun's total score in
    /// half points, over 0..=2N.
    pub totals: Vec<Vec<u64>>,
    /// Per protocol: questions scored 0, 1/2 and 1.
    pub scores: Vec<[u64; 3]>,
    /// Per decomposition step (in [`Component::ALL`] order): B's wins, one judgment (B first)
    /// per question.
    pub components: Vec<u64>,
    /// Questions simulated in all (reruns x N).
    pub questions: u64,
}

/// One answer as the judge sees it: quality, log length, whether it is the judge's family.
#[derive(Clone, Copy)]
struct Answer {
    quality: f64,
    log_length: f64,
    own: f64,
}

/// The judge's literal verdict: true when it prefers the answer in position 1, a uniform against
/// expit(eta) with eta = (q1 - q2) + beta + v (ln L1 - ln L2) + lambda (f1 - f2). `position` and
/// `verbosity` are the terms this judgment keeps.
fn prefers_first<R: RngCore>(
    j: &Judge,
    (first, second): (Answer, Answer),
    (position, verbosity): (bool, bool),
    rng: &mut R,
) -> bool {
    let mut eta = first.quality - second.quality + j.self_preference * (first.own - second.own);
    if position {
        eta += j.position_bias;
    }
    if verbosity {
        eta += j.verbosity * (first.log_length - second.log_length);
    }
    rng.random::<f64>() < expit(eta)
}

/// The judge's family flags (f_A, f_B) from s = f_B - f_A.
fn families(j: &Judge) -> (f64, f64) {
    match j.family {
        s if s > 0.0 => (0.0, 1.0),
        s if s < 0.0 => (1.0, 0.0),
        _ => (0.0, 0.0),
    }
}

/// One question: B's score (0, 1 or 2 half points) under every protocol, and B's win (0 or 1)
/// in every decomposition step.
fn question<R: RngCore>(j: &Judge, rng: &mut R) -> ([usize; 5], [u64; 4]) {
    let z: f64 = StandardNormal.sample(rng);
    let d = j.gap + j.spread * z;
    let za: f64 = StandardNormal.sample(rng);
    let zb: f64 = StandardNormal.sample(rng);
    let (fa, fb) = families(j);
    let a = Answer {
        quality: 0.0,
        log_length: j.length_a.mu + j.length_a.sigma * za,
        own: fa,
    };
    let b = Answer {
        quality: d,
        log_length: j.length_b.mu + j.length_b.sigma * zb,
        own: fb,
    };
    let full = (true, true);
    // B wins a judgment with B first when the judge prefers position 1, with A first when not.
    let b_first = |rng: &mut R, terms| prefers_first(j, (b, a), terms, rng);
    let a_first = |rng: &mut R, terms| !prefers_first(j, (a, b), terms, rng);
    let one = |won: bool| 2 * usize::from(won);
    let fixed_b = b_first(rng, full);
    let fixed_a = a_first(rng, full);
    let both = usize::from(b_first(rng, full)) + usize::from(a_first(rng, full));
    let random = if rng.random::<bool>() {
        b_first(rng, full)
    } else {
        a_first(rng, full)
    };
    let controlled = if rng.random::<bool>() {
        b_first(rng, (true, false))
    } else {
        a_first(rng, (true, false))
    };
    // The decomposition: B first with the terms switched on one by one (no position term, so
    // the order does not matter); its last step is `fixed_b`.
    let quality = {
        let plain = Judge {
            self_preference: 0.0,
            ..*j
        };
        prefers_first(&plain, (b, a), (false, false), rng)
    };
    let verbose = {
        let plain = Judge {
            self_preference: 0.0,
            ..*j
        };
        prefers_first(&plain, (b, a), (false, true), rng)
    };
    let own = prefers_first(j, (b, a), (false, true), rng);
    (
        [
            one(fixed_b),
            one(fixed_a),
            both,
            one(random),
            one(controlled),
        ],
        [
            u64::from(quality),
            u64::from(verbose),
            u64::from(own),
            u64::from(fixed_b),
        ],
    )
}

/// Simulates `reruns` reruns of `comparisons` questions each. Time: O(reruns N), 14 draws per
/// question.
pub fn simulate_judge(
    seed: u64,
    key: &[u64],
    judge: &Judge,
    comparisons: usize,
    reruns: u64,
) -> JudgeTally {
    let tasks: Vec<(u64, u64)> = batches(reruns).collect();
    let protocols = Protocol::ALL.len();
    let mut tally = JudgeTally {
        totals: vec![vec![0; 2 * comparisons + 1]; protocols],
        scores: vec![[0; 3]; protocols],
        components: vec![0; Component::ALL.len()],
        questions: 0,
    };
    run_ordered_fold(
        &tasks,
        |&(b, count)| {
            let mut path = key.to_vec();
            path.push(b);
            let mut rng = stream(seed, &path);
            let mut totals = Vec::with_capacity(count as usize);
            let mut scores = vec![[0u64; 3]; protocols];
            let mut components = [0u64; 4];
            for _ in 0..count {
                let mut total = [0usize; 5];
                for _ in 0..comparisons {
                    let (s, c) = question(judge, &mut rng);
                    for p in 0..protocols {
                        total[p] += s[p];
                        scores[p][s[p]] += 1;
                    }
                    components.iter_mut().zip(c).for_each(|(x, c)| *x += c);
                }
                totals.push(total);
            }
            (totals, scores, components, count)
        },
        |_, (totals, scores, components, count)| {
            for t in totals {
                for (p, &x) in t.iter().enumerate() {
                    tally.totals[p][x] += 1;
                }
            }
            for (into, s) in tally.scores.iter_mut().zip(scores) {
                into.iter_mut().zip(s).for_each(|(x, s)| *x += s);
            }
            tally
                .components
                .iter_mut()
                .zip(components)
                .for_each(|(x, c)| *x += c);
            tally.questions += count * comparisons as u64;
        },
    );
    tally
}

/// The key element that sets the sign-test streams of an experiment apart from its judgment
/// batches: `[key, POWER_STREAM, row]`.
pub const POWER_STREAM: u64 = 0x5349_474E_5445_5354;

/// Simulates `reruns` runs of the two-sided sign test on `questions` questions whose scores
/// follow `score`, and returns how many reject "B wins half". Each rerun draws the decided
/// questions M ~ Bin(N, P_0 + P_1) and B's wins among them W ~ Bin(M, P_1 / (P_0 + P_1)) (the
/// question scores themselves are checked by [`simulate_judge`]), and rejects when W >= u(M) or
/// W <= M - u(M), with u(M) from [`critical`]. One stream, `stream(seed, key)`. Time: O(reruns)
/// draws, plus O(sqrt(M)) per distinct M for its critical count.
pub fn simulate_sign_test(
    seed: u64,
    key: &[u64],
    score: &Score,
    questions: u64,
    reruns: u64,
) -> u64 {
    let mut rng = stream(seed, key);
    let decided = score.win + score.lose;
    let pi = score.win / decided;
    let mut upper: HashMap<u64, u64> = HashMap::new();
    let mut rejected = 0;
    for _ in 0..reruns {
        // Probabilities are in [0, 1], where Binomial::new cannot fail.
        let m = if score.split == 0.0 {
            questions
        } else {
            Binomial::new(questions, decided).map_or(0, |b| b.sample(&mut rng))
        };
        let w = Binomial::new(m, pi).map_or(0, |b| b.sample(&mut rng));
        let u = *upper
            .entry(m)
            .or_insert_with(|| critical(m as usize).upper as u64);
        if w >= u || w + u <= m {
            rejected += 1;
        }
    }
    rejected
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::judge::tests::example;
    use crate::sim::se::count_z;

    #[test]
    fn simulated_judgments_match_the_exact_laws_of_every_protocol() {
        let j = example();
        let (n, reruns) = (50usize, 4_000u64);
        let t = simulate_judge(17, &[3], &j, n, reruns);
        let q = t.questions;
        assert_eq!(q, reruns * n as u64);
        for (p, protocol) in Protocol::ALL.iter().enumerate() {
            let s = j.score(*protocol);
            let [lose, split, win] = t.scores[p];
            for (hits, prob, complement) in [
                (win, s.win, s.lose + s.split),
                (lose, s.lose, s.win + s.split),
                (split, s.split, s.win + s.lose),
            ] {
                if prob == 0.0 {
                    assert_eq!(hits, 0, "{protocol:?}");
                    continue;
                }
                let z = count_z(hits, q, prob, complement);
                assert!(
                    z.abs() <= 4.5,
                    "{protocol:?}: {hits} of {q}, exact {prob}, z {z}"
                );
            }
        }
        for (i, step) in Component::ALL.iter().enumerate() {
            let s = j.component(*step);
            let z = count_z(t.components[i], q, s.win, s.lose);
            assert!(z.abs() <= 4.5, "{step:?}: z {z}");
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_tally() {
        let j = example();
        let a = simulate_judge(5, &[1], &j, 7, 9_000);
        let b = simulate_judge(5, &[1], &j, 7, 9_000);
        assert_eq!(a, b);
        assert_eq!(a.totals[0].iter().sum::<u64>(), 9_000);
    }

    #[test]
    fn simulated_sign_tests_reject_as_often_as_the_exact_power_says() {
        use crate::exact::sign_test::power;
        let reruns = 20_000u64;
        for (i, s) in [
            Score {
                lose: 0.4,
                split: 0.0,
                win: 0.6,
            },
            Score {
                lose: 0.25,
                split: 0.45,
                win: 0.3,
            },
        ]
        .iter()
        .enumerate()
        {
            for n in [9u64, 120, 700] {
                let hits = simulate_sign_test(11, &[i as u64, n], s, n, reruns);
                let (p, miss) = power(s.lose, s.split, s.win, n as usize);
                let z = count_z(hits, reruns, p, miss);
                assert!(
                    z.abs() <= 4.5,
                    "{s:?} N = {n}: {hits} of {reruns}, power {p}, z {z}"
                );
            }
        }
    }
}
