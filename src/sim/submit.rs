//! Literal simulation of n@k by answer clusters: each vote draws its k samples one by one as
//! answers, groups them, puts the groups in a uniformly random order and sorts them by size
//! (a stable sort, so equal sizes stay in random order), submits the first n and grades each
//! submitted answer. It checks [`crate::exact::submit`] without sharing its enumeration; the
//! verifier's n picks ([`verified_hits`]) are drawn the same way, sample by sample.
//! Cost: O(k log k) per vote.
use rand::RngCore;
use rand_distr::{Distribution, StandardNormal};

use super::stream::{index, unit};
use crate::exact::modes::AnswerShares;
use crate::model::{Fallback, Grader, Verifier};

/// Hits of `votes` votes of k samples for every n of `submissions`: (true hits, hits as graded)
/// per n, in order. Without a grader the graded hits are the true ones.
pub fn submit_hits<R: RngCore + ?Sized>(
    shares: &AnswerShares,
    k: u32,
    submissions: &[u32],
    grader: Option<Grader>,
    votes: u64,
    rng: &mut R,
) -> Vec<(u64, u64)> {
    let attractor = shares.attractors.first().copied().unwrap_or(0.0);
    let mut out = vec![(0u64, 0u64); submissions.len()];
    // (size, correct) of each cluster of one vote.
    let mut clusters: Vec<(u32, bool)> = Vec::with_capacity(k as usize);
    for _ in 0..votes {
        let mut counts = [0u32; 3];
        clusters.clear();
        for _ in 0..k {
            let x = unit(rng);
            if x < shares.correct {
                counts[0] += 1;
            } else if x < shares.correct + shares.alternate {
                counts[1] += 1;
            } else if x < shares.correct + shares.alternate + attractor {
                counts[2] += 1;
            } else {
                clusters.push((1, false));
            }
        }
        for (t, &c) in counts.iter().enumerate() {
            if c > 0 {
                clusters.push((c, t < 2));
            }
        }
        // Fisher-Yates, then a stable sort by size: ties in uniformly random order.
        for i in (1..clusters.len()).rev() {
            clusters.swap(i, index(rng, i + 1));
        }
        clusters.sort_by_key(|c| std::cmp::Reverse(c.0));
        for (slot, &n) in out.iter_mut().zip(submissions) {
            let chosen = &clusters[..(n as usize).min(clusters.len())];
            let hit = chosen.iter().any(|c| c.1);
            slot.0 += u64::from(hit);
            slot.1 += u64::from(match grader {
                None => hit,
                Some(g) => chosen.iter().fold(false, |any, c| {
                    let marked = if c.1 {
                        unit(rng) >= g.fnr
                    } else {
                        unit(rng) < g.fpr
                    };
                    any | marked
                }),
            });
        }
    }
    out
}

/// Hits of `votes` votes of k samples when the verifier chooses the submissions, for every n of
/// `submissions`: (true hits, hits as graded) per n. Each sample is correct with `p`; a
/// threshold verifier accepts it (tpr or fpr) and n submissions are drawn uniformly from the
/// accepted ones, topped up under `Random` from the rejected; a score verifier draws each
/// sample's score (N(separation, 1) or N(0, 1)) and submits the n highest.
pub fn verified_hits<R: RngCore + ?Sized>(
    p: f64,
    verifier: &Verifier,
    k: u32,
    submissions: &[u32],
    grader: Option<Grader>,
    votes: u64,
    rng: &mut R,
) -> Vec<(u64, u64)> {
    let mut out = vec![(0u64, 0u64); submissions.len()];
    // Each sample as (rank key, correct): a higher key is submitted first.
    let mut samples: Vec<(f64, bool)> = Vec::with_capacity(k as usize);
    for _ in 0..votes {
        samples.clear();
        for _ in 0..k {
            let correct = unit(rng) < p;
            let key = match verifier {
                Verifier::Threshold(v) => {
                    let accepted = unit(rng) < if correct { v.tpr } else { v.fpr };
                    // Accepted samples first, each group in uniformly random order.
                    let order = unit(rng);
                    match (accepted, v.fallback) {
                        (true, _) => 2.0 + order,
                        (false, Fallback::Random) => order,
                        (false, Fallback::Abstain) => -1.0,
                    }
                }
                Verifier::Score { separation } => {
                    let z: f64 = StandardNormal.sample(rng);
                    if correct {
                        z + separation
                    } else {
                        z
                    }
                }
            };
            samples.push((key, correct));
        }
        samples.sort_by(|x, y| y.0.total_cmp(&x.0));
        for (slot, &n) in out.iter_mut().zip(submissions) {
            // An abstaining verifier submits no rejected sample.
            let chosen = samples
                .iter()
                .take(n as usize)
                .filter(|s| !matches!(verifier, Verifier::Threshold(_)) || s.0 >= 0.0);
            let mut hit = false;
            let mut marked = false;
            for s in chosen {
                hit |= s.1;
                marked |= match grader {
                    None => s.1,
                    Some(g) => {
                        if s.1 {
                            unit(rng) >= g.fnr
                        } else {
                            unit(rng) < g.fpr
                        }
                    }
                };
            }
            slot.0 += u64::from(hit);
            slot.1 += u64::from(marked);
        }
    }
    out
}
