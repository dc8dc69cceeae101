//! Literal simulation of confidence-filtered votes: each vote draws its k samples one by one
//! (the answer class, then the confidence N(mu, 1) of that class), keeps those above a
//! threshold or the most confident ones, and votes among the kept answers by counting them
//! (ties broken by a uniform draw under `random`). It checks [`crate::exact::confidence`]
//! without sharing its sums or its integral. Cost: O(k log k) per vote.
use rand::RngCore;
use rand_distr::{Distribution, StandardNormal};

use super::stream::{index, unit};
use crate::exact::confidence::{top_count, Filter};
use crate::model::{Confidence, VoteRule};

/// One sample's answer: correct, the attractor, or a one-off (its own answer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    Correct,
    Attractor,
    OneOff,
}

/// Whether the correct answer wins the vote of the kept answers: the largest group wins; a
/// tie is broken by a uniform pick among the tied groups under `random` and lost under
/// `strict`; `absolute` needs more than half of the kept votes. Nothing kept is a loss.
fn vote<R: RngCore + ?Sized>(kept: &[Answer], rule: VoteRule, rng: &mut R) -> bool {
    let count = |x: Answer| kept.iter().filter(|&&a| a == x).count();
    let (c, a, w) = (
        count(Answer::Correct),
        count(Answer::Attractor),
        count(Answer::OneOff),
    );
    if c == 0 {
        return false;
    }
    if rule == VoteRule::Absolute {
        return 2 * c > kept.len();
    }
    // Group sizes: the correct answer, the attractor, each one-off alone.
    let top = c.max(a).max(usize::from(w > 0));
    if c < top {
        return false;
    }
    let tied = 1 + usize::from(a == top) + if top == 1 { w } else { 0 };
    match rule {
        VoteRule::Strict => tied == 1,
        // The correct answer is group 0 of the tied ones.
        _ => tied == 1 || index(rng, tied) == 0,
    }
}

/// Hits of `votes` votes of k samples for every filter: (votes the correct answer won among
/// the kept samples, samples kept over all votes) per filter, in order. Each sample is correct
/// with p, the attractor with a (1 - p), a one-off otherwise.
#[allow(clippy::too_many_arguments)]
pub fn filtered_hits<R: RngCore + ?Sized>(
    p: f64,
    attractor: f64,
    confidence: Confidence,
    k: u32,
    filters: &[Filter],
    rule: VoteRule,
    votes: u64,
    rng: &mut R,
) -> Vec<(u64, u64)> {
    let q = attractor * (1.0 - p);
    let mut out = vec![(0u64, 0u64); filters.len()];
    let mut samples: Vec<(f64, Answer)> = Vec::with_capacity(k as usize);
    let mut kept: Vec<Answer> = Vec::with_capacity(k as usize);
    for _ in 0..votes {
        samples.clear();
        for _ in 0..k {
            let x = unit(rng);
            let (answer, mean) = if x < p {
                (Answer::Correct, confidence.separation)
            } else if x < p + q {
                (Answer::Attractor, confidence.attractor)
            } else {
                (Answer::OneOff, 0.0)
            };
            let z: f64 = StandardNormal.sample(rng);
            samples.push((mean + z, answer));
        }
        // Most confident first (ties have probability 0).
        samples.sort_by(|x, y| y.0.total_cmp(&x.0));
        for (slot, &f) in out.iter_mut().zip(filters) {
            kept.clear();
            match f {
                Filter::Threshold(t) => {
                    kept.extend(samples.iter().filter(|s| s.0 > t).map(|s| s.1));
                }
                Filter::TopShare(s) => {
                    let m = top_count(s, k) as usize;
                    kept.extend(samples[..m].iter().map(|s| s.1));
                }
            }
            slot.0 += u64::from(vote(&kept, rule, rng));
            slot.1 += kept.len() as u64;
        }
    }
    out
}
