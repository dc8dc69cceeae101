//! Literal samplers for several attractors, answer extraction, verifiers and noisy graders.
//!
//! Every sampler draws the k samples of one vote one by one, as labels (an answer, an acceptance,
//! a score, a graded outcome), and scores the result by counting them: deliberately the slow,
//! literal route, so that it checks the closed forms of [`crate::exact::modes`],
//! [`crate::exact::verifier`] and [`crate::exact::grader`] rather than repeating them. Cost:
//! O(k) draws per vote. Generators come from the caller (streams of [`super::stream`]); a
//! sampler is an immutable parameter struct. The literal best-of-k samplers (threshold, score,
//! several answer modes) and `graded_samples` are compiled for the tests only: the runs draw
//! picks and graded counts as counts per category (`sim::picks`), and the tests check both
//! against the exact values.
use rand::RngCore;
#[cfg(test)]
use rand_distr::{Distribution, StandardNormal};

use super::alias::AliasTable;
use super::stream::{index, unit};
use crate::exact::grader::Grader;
use crate::exact::modes::Extraction;
#[cfg(test)]
use crate::exact::verifier::{Fallback, ThresholdVerifier};
use crate::model::VoteRule;

/// Most attractors a [`ModeVoteSampler`] takes.
pub const SAMPLER_MAX_ATTRACTORS: usize = 30;

/// One simulated vote: whether it was won, and the graded outcomes of its samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ModeVote {
    /// The picked answer is correct (either form).
    pub win: bool,
    /// Samples graded correct (either form; unparsed samples never are).
    pub correct: u32,
    /// Samples with no extractable answer.
    pub unparsed: u32,
}

/// Draws votes of k samples, each sample a label: the correct answer's main form (0), its
/// alternate form (1), attractor j (2 + j), a one-off wrong answer (2 + m) or no answer (3 + m),
/// with the probabilities of [`crate::exact::modes::AnswerShares`] (one-offs and unparsed kept
/// apart here). The vote counts the labels, every one-off and unparsed sample its own answer,
/// and applies the rule to the answers at the top count.
#[derive(Debug, Clone)]
pub struct ModeVoteSampler {
    k: u32,
    m: usize,
    table: AliasTable,
    rule: VoteRule,
}

impl ModeVoteSampler {
    /// # Panics
    ///
    /// If k = 0 or there are more than [`SAMPLER_MAX_ATTRACTORS`] attractors.
    pub fn new(
        p: f64,
        attractors: &[f64],
        extraction: Extraction,
        k: u32,
        rule: VoteRule,
    ) -> ModeVoteSampler {
        assert!(k >= 1 && attractors.len() <= SAMPLER_MAX_ATTRACTORS);
        let (u, s) = (extraction.unparsed, extraction.split);
        let parsed = 1.0 - u;
        let mut probs = vec![parsed * p * (1.0 - s), parsed * p * s];
        probs.extend(attractors.iter().map(|a| parsed * a * (1.0 - p)));
        probs.push(parsed * (1.0 - attractors.iter().sum::<f64>()).max(0.0) * (1.0 - p));
        probs.push(u);
        ModeVoteSampler {
            k,
            m: attractors.len(),
            table: AliasTable::new(&probs),
            rule,
        }
    }

    /// Draws one vote. Cost: k + 1 u64 at most.
    pub fn sample<R: RngCore + ?Sized>(&self, rng: &mut R) -> ModeVote {
        let mut counts = [0u32; SAMPLER_MAX_ATTRACTORS + 2];
        let mut singles = 0u32;
        let mut unparsed = 0u32;
        for _ in 0..self.k {
            let label = self.table.sample(rng) as usize;
            if label < self.m + 2 {
                counts[label] += 1;
            } else {
                singles += 1;
                unparsed += u32::from(label == self.m + 3);
            }
        }
        let repeated = &counts[..self.m + 2];
        let top = repeated
            .iter()
            .copied()
            .max()
            .unwrap_or(0)
            .max(u32::from(singles > 0));
        let good_at_top = repeated[..2].iter().filter(|&&n| n == top).count() as u64;
        let bad_at_top = repeated[2..].iter().filter(|&&n| n == top).count() as u64
            + if top == 1 { u64::from(singles) } else { 0 };
        let tied = good_at_top + bad_at_top;
        let win = match self.rule {
            VoteRule::Random => (index(rng, tied as usize) as u64) < good_at_top,
            VoteRule::Strict => tied == 1 && good_at_top == 1,
            VoteRule::Absolute => 2 * counts[0] > self.k || 2 * counts[1] > self.k,
        };
        ModeVote {
            win,
            correct: counts[0] + counts[1],
            unparsed,
        }
    }
}

/// A vote of [`ModeVoteSampler`] as a noisy grader reports it: every parsed sample graded (a
/// correct one stays correct with 1 - fnr, a wrong one turns correct with fpr; an unparsed one is
/// never graded correct), and the vote's pick graded once. Cost: the vote's draws plus one u64
/// per parsed sample and one for the pick.
#[derive(Debug, Clone)]
pub struct GradedVoteSampler {
    /// The vote on the true answers.
    pub vote: ModeVoteSampler,
    /// The grader.
    pub grader: Grader,
}

impl GradedVoteSampler {
    /// Draws one graded vote: `win` is the pick graded correct, `correct` the samples graded
    /// correct.
    pub fn sample<R: RngCore + ?Sized>(&self, rng: &mut R) -> ModeVote {
        let v = self.vote.sample(rng);
        let wrong = self.vote.k - v.correct - v.unparsed;
        let mut graded = 0u32;
        for _ in 0..v.correct {
            graded += u32::from(grade(&self.grader, true, rng));
        }
        for _ in 0..wrong {
            graded += u32::from(grade(&self.grader, false, rng));
        }
        ModeVote {
            win: grade(&self.grader, v.win, rng),
            correct: graded,
            unparsed: v.unparsed,
        }
    }
}

#[cfg(test)]
/// Best-of-k with a threshold verifier, drawn literally: every sample is correct with
/// probability p and accepted with tpr or fpr; the pick is uniform among the accepted (by
/// reservoir sampling as they arrive), else the fallback.
#[derive(Debug, Clone, Copy)]
pub struct ThresholdSampler {
    /// Solve rate.
    pub p: f64,
    /// The verifier.
    pub verifier: ThresholdVerifier,
    /// Samples per selection.
    pub k: u32,
}

#[cfg(test)]
impl ThresholdSampler {
    /// Whether the pick of one best-of-k selection is correct. Cost: O(k) u64.
    pub fn sample<R: RngCore + ?Sized>(&self, rng: &mut R) -> bool {
        let p = self.p;
        threshold_pick(&self.verifier, self.k, rng, |rng| unit(rng) < p)
    }
}

#[cfg(test)]
/// One threshold-verifier selection of k samples, each drawn by `correct` (whether it is
/// correct; it may draw as many words as it needs): accepted with tpr or fpr, the pick uniform
/// among the accepted (reservoir sampling as they arrive), else the fallback.
#[inline(always)]
fn threshold_pick<R: RngCore + ?Sized>(
    verifier: &ThresholdVerifier,
    k: u32,
    rng: &mut R,
    mut correct: impl FnMut(&mut R) -> bool,
) -> bool {
    let (mut accepted, mut pick_accepted) = (0u64, false);
    let mut pick_any = false;
    for i in 0..u64::from(k) {
        let correct = correct(rng);
        let rate = if correct { verifier.tpr } else { verifier.fpr };
        if unit(rng) < rate {
            accepted += 1;
            if index(rng, accepted as usize) == 0 {
                pick_accepted = correct;
            }
        }
        if verifier.fallback == Fallback::Random && index(rng, (i + 1) as usize) == 0 {
            pick_any = correct;
        }
    }
    if accepted > 0 {
        pick_accepted
    } else {
        verifier.fallback == Fallback::Random && pick_any
    }
}

#[cfg(test)]
/// One score-verifier selection of k samples, each drawn by `correct`: scored N(separation, 1)
/// if correct and N(0, 1) if not, the argmax picked.
#[inline(always)]
fn score_pick<R: RngCore + ?Sized>(
    separation: f64,
    k: u32,
    rng: &mut R,
    mut correct: impl FnMut(&mut R) -> bool,
) -> bool {
    let (mut best, mut best_correct) = (f64::NEG_INFINITY, false);
    for _ in 0..k {
        let correct = correct(rng);
        let z: f64 = StandardNormal.sample(rng);
        let score = z + if correct { separation } else { 0.0 };
        if score > best {
            best = score;
            best_correct = correct;
        }
    }
    best_correct
}

#[cfg(test)]
/// Best-of-k with a score verifier, drawn literally: every sample is correct with probability p,
/// its score is N(separation, 1) if correct and N(0, 1) if not, and the pick is the argmax.
#[derive(Debug, Clone, Copy)]
pub struct ScoreSampler {
    /// Solve rate.
    pub p: f64,
    /// Mean score of a correct sample minus that of a wrong one.
    pub separation: f64,
    /// Samples per selection.
    pub k: u32,
}

#[cfg(test)]
impl ScoreSampler {
    /// Whether the highest-scoring sample is correct. Cost: O(k) draws.
    pub fn sample<R: RngCore + ?Sized>(&self, rng: &mut R) -> bool {
        let p = self.p;
        score_pick(self.separation, self.k, rng, |rng| unit(rng) < p)
    }
}

#[cfg(test)]
/// Best-of-k over the answers of several attractors and answer extraction, drawn literally:
/// every sample is a label of [`ModeVoteSampler`] (the correct answer in either form, an
/// attractor, a one-off or no answer) and the verifier sees only whether it is correct. Both
/// forms are correct; an unparsed sample is a wrong one to the verifier (accepted with `fpr`,
/// scored N(0, 1)), so the pick is correct with the best@k of the rate (1 - u) p, which this
/// checks rather than assumes. Cost: O(k) draws per selection.
#[derive(Debug, Clone)]
pub struct ModeBestSampler {
    /// The per-sample answer labels (its vote rule is not used).
    pub labels: ModeVoteSampler,
    /// The verifier.
    pub verifier: crate::model::Verifier,
}

#[cfg(test)]
impl ModeBestSampler {
    /// Whether the verifier's pick of one selection of k samples is correct.
    pub fn sample<R: RngCore + ?Sized>(&self, rng: &mut R) -> bool {
        let (table, k) = (&self.labels.table, self.labels.k);
        let correct = |rng: &mut R| table.sample(rng) < 2;
        match self.verifier {
            crate::model::Verifier::Threshold(v) => threshold_pick(&v, k, rng, correct),
            crate::model::Verifier::Score { separation } => score_pick(separation, k, rng, correct),
        }
    }
}

/// One grading of an answer whose true outcome is `correct`: flips it with the grader's fpr or
/// fnr. Cost: one u64.
pub fn grade<R: RngCore + ?Sized>(grader: &Grader, correct: bool, rng: &mut R) -> bool {
    if correct {
        unit(rng) >= grader.fnr
    } else {
        unit(rng) < grader.fpr
    }
}

/// k samples of a problem with solve rate p, each first parsed (an unparsed one, share u, has
/// no answer and is never graded correct) and then graded by `grader`: the graded correct count.
/// Cost: up to 3k u64.
pub fn graded_parsed_samples<R: RngCore + ?Sized>(
    p: f64,
    k: u32,
    unparsed: f64,
    grader: &Grader,
    rng: &mut R,
) -> u32 {
    let mut graded = 0;
    for _ in 0..k {
        if unit(rng) < unparsed {
            continue;
        }
        let correct = unit(rng) < p;
        graded += u32::from(grade(grader, correct, rng));
    }
    graded
}

/// Grades the picked answer of every vote literally: problem i's `wins` truly correct picks and
/// `votes - wins` wrong ones (`tallies[i]` = (wins, votes)), each through [`grade`], on the
/// stream (seed, key..., i). Returns the picks graded correct per problem; identical for any
/// thread count. Cost: one u64 per vote.
pub fn grade_picks(seed: u64, key: &[u64], tallies: &[(u64, u64)], grader: &Grader) -> Vec<u64> {
    tallies
        .iter()
        .enumerate()
        .map(|(i, &(wins, votes))| {
            let mut path = key.to_vec();
            path.push(i as u64);
            let mut rng = super::stream::stream(seed, &path);
            (0..votes)
                .map(|v| u64::from(grade(grader, v < wins, &mut rng)))
                .sum()
        })
        .collect()
}

#[cfg(test)]
/// k samples of a problem with solve rate p, each graded by `grader`: (graded correct count,
/// true correct count). Cost: 2k u64.
pub fn graded_samples<R: RngCore + ?Sized>(
    p: f64,
    k: u32,
    grader: &Grader,
    rng: &mut R,
) -> (u32, u32) {
    let (mut graded, mut truth) = (0, 0);
    for _ in 0..k {
        let correct = unit(rng) < p;
        truth += u32::from(correct);
        graded += u32::from(grade(grader, correct, rng));
    }
    (graded, truth)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::grader::Grader;
    use crate::exact::modes::{graded_rate, maj_at_k_modes};
    use crate::exact::pass::{pass_at_k, pass_hat_k};
    use crate::exact::verifier::best_at_k_threshold;
    use crate::sim::stream::stream;

    const RULES: [VoteRule; 3] = [VoteRule::Random, VoteRule::Strict, VoteRule::Absolute];

    /// Asserts |sim - exact| < 4.5 standard errors of a Bernoulli(exact) rate over `draws`
    /// (equality when the exact value is 0 or 1).
    fn assert_rate(what: &str, hits: u64, draws: u64, exact: f64) {
        let sim = hits as f64 / draws as f64;
        let se = (exact * (1.0 - exact) / draws as f64).sqrt();
        if se == 0.0 {
            assert_eq!(sim, exact, "{what}");
        } else {
            let z = (sim - exact) / se;
            assert!(z.abs() < 4.5, "{what}: sim {sim} exact {exact} z {z:.2}");
        }
    }

    #[test]
    fn literal_votes_match_exact_maj_pass_and_pass_hat() {
        let cases: Vec<(f64, Vec<f64>, Extraction)> = vec![
            (0.35, vec![0.5], Extraction::default()),
            (0.3, vec![0.3, 0.3, 0.2], Extraction::default()),
            (
                0.4,
                vec![0.25, 0.25, 0.1, 0.1, 0.05, 0.05, 0.1, 0.1],
                Extraction::default(),
            ),
            (
                0.5,
                vec![0.4, 0.2],
                Extraction {
                    unparsed: 0.15,
                    split: 0.0,
                },
            ),
            (
                0.6,
                vec![0.5],
                Extraction {
                    unparsed: 0.0,
                    split: 0.4,
                },
            ),
            (
                0.45,
                vec![0.3, 0.5],
                Extraction {
                    unparsed: 0.1,
                    split: 0.25,
                },
            ),
        ];
        let votes = 100_000u64;
        for (ci, (p, a, ex)) in cases.iter().enumerate() {
            for (ri, rule) in RULES.into_iter().enumerate() {
                for k in [1u32, 2, 5, 16, 40] {
                    let sampler = ModeVoteSampler::new(*p, a, *ex, k, rule);
                    let mut rng = stream(17, &[ci as u64, ri as u64, u64::from(k)]);
                    let (mut wins, mut any, mut all) = (0u64, 0u64, 0u64);
                    for _ in 0..votes {
                        let v = sampler.sample(&mut rng);
                        wins += u64::from(v.win);
                        any += u64::from(v.correct > 0);
                        all += u64::from(v.correct == k);
                    }
                    let what = format!("{rule:?} k={k} p={p} a={a:?} {ex:?}");
                    let (w, _) = maj_at_k_modes(*p, a, *ex, k, rule);
                    assert_rate(&what, wins, votes, w);
                    let g = graded_rate(*p, *ex);
                    assert_rate(&what, any, votes, pass_at_k(g, k));
                    assert_rate(&what, all, votes, pass_hat_k(g, k));
                }
            }
        }
    }

    #[test]
    fn literal_threshold_verifier_matches_exact_best_at_k() {
        let draws = 100_000u64;
        for (vi, &(tpr, fpr, fallback)) in [
            (0.9, 0.2, Fallback::Random),
            (0.6, 0.05, Fallback::Abstain),
            (0.5, 0.5, Fallback::Random),
            (0.3, 0.0, Fallback::Abstain),
        ]
        .iter()
        .enumerate()
        {
            let verifier = ThresholdVerifier { tpr, fpr, fallback };
            for &p in &[0.05, 0.3, 0.7] {
                for k in [1u32, 3, 16, 64] {
                    let s = ThresholdSampler { p, verifier, k };
                    let mut rng = stream(23, &[vi as u64, (p * 100.0) as u64, u64::from(k)]);
                    let hits = (0..draws).filter(|_| s.sample(&mut rng)).count() as u64;
                    let (w, _) = best_at_k_threshold(p, &verifier, k);
                    assert_rate(&format!("{verifier:?} p={p} k={k}"), hits, draws, w);
                }
            }
        }
    }

    /// A verifier over several attractors, unparsed and split, drawn answer by answer: the pick
    /// is correct with the exact best@k of the rate (1 - u) p, both kinds and fallbacks.
    #[test]
    fn literal_verifier_over_answer_modes_matches_exact_best_at_k() {
        use crate::exact::verifier::{best_at_k_score, selectable_rate};
        use crate::model::Verifier;
        let draws = 60_000u64;
        let verifiers = [
            Verifier::Threshold(ThresholdVerifier {
                tpr: 0.85,
                fpr: 0.12,
                fallback: Fallback::Random,
            }),
            Verifier::Threshold(ThresholdVerifier {
                tpr: 0.6,
                fpr: 0.3,
                fallback: Fallback::Abstain,
            }),
            Verifier::Score { separation: 1.5 },
        ];
        let cases = [
            (0.4, vec![0.3, 0.2], 0.2, 0.0),
            (0.55, vec![0.5], 0.0, 0.4),
            (0.3, vec![0.6, 0.3], 0.15, 0.35),
        ];
        for (vi, verifier) in verifiers.iter().enumerate() {
            for (ci, (p, a, u, s)) in cases.iter().enumerate() {
                let extraction = Extraction {
                    unparsed: *u,
                    split: *s,
                };
                for k in [1u32, 4, 24] {
                    let b = ModeBestSampler {
                        labels: ModeVoteSampler::new(*p, a, extraction, k, VoteRule::Random),
                        verifier: *verifier,
                    };
                    let mut rng = stream(37, &[vi as u64, ci as u64, u64::from(k)]);
                    let hits = (0..draws).filter(|_| b.sample(&mut rng)).count() as u64;
                    let rate = selectable_rate(*p, *u);
                    let exact = match verifier {
                        Verifier::Threshold(v) => best_at_k_threshold(rate, v, k).0,
                        Verifier::Score { separation } => best_at_k_score(rate, *separation, k).0,
                    };
                    let what = format!("{verifier:?} p={p} a={a:?} u={u} s={s} k={k}");
                    assert_rate(&what, hits, draws, exact);
                }
            }
        }
    }

    /// The score verifier at the k where best@k has an elementary closed form: k = 1 gives p;
    /// separation 0 makes the argmax a uniform pick (p for every k); k = 2 gives
    /// p^2 + 2 p (1 - p) Phi(d / sqrt 2) (the correct score beats the wrong one).
    #[test]
    fn literal_score_verifier_matches_its_closed_forms() {
        use crate::exact::normal::cdf;
        let draws = 100_000u64;
        for (i, &(p, d)) in [(0.3, 1.5), (0.6, 0.5), (0.1, 3.0)].iter().enumerate() {
            let cases = [
                (1u32, d, p),
                (7, 0.0, p),
                (2, d, p * p + 2.0 * p * (1.0 - p) * cdf(d / 2f64.sqrt())),
            ];
            for (j, &(k, separation, exact)) in cases.iter().enumerate() {
                let s = ScoreSampler { p, separation, k };
                let mut rng = stream(31, &[i as u64, j as u64]);
                let hits = (0..draws).filter(|_| s.sample(&mut rng)).count() as u64;
                assert_rate(&format!("p={p} d={separation} k={k}"), hits, draws, exact);
            }
        }
    }

    #[test]
    fn literal_grading_matches_exact_graded_metrics() {
        let g = Grader { fpr: 0.1, fnr: 0.2 };
        let draws = 100_000u64;
        for &p in &[0.0, 0.3, 0.9] {
            for k in [1u32, 4, 32] {
                let mut rng = stream(29, &[(p * 10.0) as u64, u64::from(k)]);
                let (mut any, mut all, mut maj_graded) = (0u64, 0u64, 0u64);
                let sampler =
                    ModeVoteSampler::new(p, &[0.5], Extraction::default(), k, VoteRule::Random);
                for _ in 0..draws {
                    let (graded, _) = graded_samples(p, k, &g, &mut rng);
                    any += u64::from(graded > 0);
                    all += u64::from(graded == k);
                    let v = sampler.sample(&mut rng);
                    maj_graded += u64::from(grade(&g, v.win, &mut rng));
                }
                let what = format!("p={p} k={k}");
                assert_rate(&what, any, draws, g.pass_at_k(p, k).0);
                assert_rate(&what, all, draws, g.pass_hat_k(p, k).0);
                let m = maj_at_k_modes(p, &[0.5], Extraction::default(), k, VoteRule::Random);
                assert_rate(&what, maj_graded, draws, g.selected(m).0);
            }
        }
    }

    #[test]
    fn samplers_are_deterministic_per_stream() {
        let s = ModeVoteSampler::new(
            0.4,
            &[0.3, 0.3],
            Extraction {
                unparsed: 0.1,
                split: 0.2,
            },
            9,
            VoteRule::Random,
        );
        let draw = |key: u64| {
            let mut rng = stream(3, &[key]);
            (0..100).map(|_| s.sample(&mut rng)).collect::<Vec<_>>()
        };
        assert_eq!(draw(1), draw(1));
        assert_ne!(draw(1), draw(2));
    }
}
