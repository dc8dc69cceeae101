//! Synthetic per-sample eval rows drawn from the workbench's own model, for tests and benchmarks
//! of `analyze` and `fit` (round trips, the 1,000,000-row streaming bench); not used by the
//! commands. The callers format the rows (canonical JSONL) themselves: this module only draws.
//!
//! Problem i has rate p_i = expit(mu + sigma z_i), z_i ~ N(0, 1); each of its n samples is correct
//! with probability p_i, else the attractor answer with probability `attractor`, else a one-off
//! answer. Token counts are lognormal with median 2000 (1 + d_i) for correct samples (d_i = 1 -
//! p_i), 1.5 times that for wrong ones, log-SD 0.5. Problem i draws from its own stream
//! (seed, 0x5947, i). Depends on [`super::stream`] and rand / rand_distr only.
use rand::Rng;
use rand_distr::{Distribution, StandardNormal};
use serde::{Deserialize, Serialize};

use super::stream::stream;

/// What to generate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SynthSpec {
    /// Model name written on every row.
    pub model: String,
    /// Number of problems.
    pub problems: usize,
    /// Samples per problem.
    pub samples: usize,
    /// Logit-normal location.
    pub mu: f64,
    /// Logit-normal spread.
    pub sigma: f64,
    /// Share of wrong answers on the problem's one attractor answer.
    pub attractor: f64,
    /// Draw `output_tokens`.
    pub tokens: bool,
    /// Seed.
    pub seed: u64,
}

/// The answer of one synthetic sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SynthAnswer {
    /// The right answer, `42`.
    Right,
    /// The problem's attractor, `7`.
    Attractor,
    /// A one-off wrong answer, `w<sample>`.
    OneOff,
}

/// One synthetic sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SynthRow {
    /// Problem index (its id is `q<problem>`).
    pub problem: usize,
    /// Sample index within the problem.
    pub sample: usize,
    /// Run index (0 for [`for_each_row`]; see [`for_each_run_row`]).
    pub run: usize,
    /// Whether the sample is correct.
    pub correct: bool,
    /// Its answer.
    pub answer: SynthAnswer,
    /// Output tokens (when [`SynthSpec::tokens`]).
    pub output_tokens: Option<f64>,
}

/// One sample's grade and answer: correct with probability `p`, else the attractor with
/// probability `attractor`, else a one-off.
struct AnswerDraw {
    p: f64,
    attractor: f64,
}

impl AnswerDraw {
    /// (correct, answer), from one uniform for a correct sample and two for a wrong one.
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> (bool, SynthAnswer) {
        if rng.random::<f64>() < self.p {
            (true, SynthAnswer::Right)
        } else if rng.random::<f64>() < self.attractor {
            (false, SynthAnswer::Attractor)
        } else {
            (false, SynthAnswer::OneOff)
        }
    }
}

/// Draws the `problems * samples` rows of `spec` problem-major and hands each to `each`, stopping
/// at its first error. Cost: O(rows).
///
/// # Errors
/// Whatever `each` returns.
pub fn for_each_row<E>(
    spec: &SynthSpec,
    mut each: impl FnMut(&SynthRow) -> Result<(), E>,
) -> Result<(), E> {
    for i in 0..spec.problems {
        let mut rng = stream(spec.seed, &[0x5947, i as u64]);
        let z: f64 = StandardNormal.sample(&mut rng);
        let p = 1.0 / (1.0 + (-(spec.mu + spec.sigma * z)).exp());
        let median = 2000.0 * (2.0 - p);
        let draw = AnswerDraw {
            p,
            attractor: spec.attractor,
        };
        for s in 0..spec.samples {
            let (correct, answer) = draw.sample(&mut rng);
            let output_tokens = spec.tokens.then(|| {
                let m: f64 = if correct { median } else { 1.5 * median };
                let e: f64 = StandardNormal.sample(&mut rng);
                (m.ln() + 0.5 * e).exp().round()
            });
            each(&SynthRow {
                problem: i,
                sample: s,
                run: 0,
                correct,
                answer,
                output_tokens,
            })?;
        }
    }
    Ok(())
}

/// Like [`for_each_row`], with `runs` runs of `spec.samples` samples per problem and per-run
/// logit noise `run_sd` (omega): problem i draws z_i from its own stream (seed, 0x5948, i), then
/// for each run r an eta_r ~ N(0, omega^2) shared by that run's samples, each correct with
/// probability expit(mu + sigma z_i + eta_r), else the attractor with probability `attractor`,
/// else a one-off. No tokens. Rows come problem-major, run by run; `sample` counts within the
/// problem. Cost: O(problems runs samples).
///
/// # Errors
/// Whatever `each` returns.
pub fn for_each_run_row<E>(
    spec: &SynthSpec,
    runs: usize,
    run_sd: f64,
    mut each: impl FnMut(&SynthRow) -> Result<(), E>,
) -> Result<(), E> {
    for i in 0..spec.problems {
        let mut rng = stream(spec.seed, &[0x5948, i as u64]);
        let z: f64 = StandardNormal.sample(&mut rng);
        for r in 0..runs {
            let eta: f64 = StandardNormal.sample(&mut rng);
            let logit = spec.mu + spec.sigma * z + run_sd * eta;
            let draw = AnswerDraw {
                p: 1.0 / (1.0 + (-logit).exp()),
                attractor: spec.attractor,
            };
            for s in 0..spec.samples {
                let (correct, answer) = draw.sample(&mut rng);
                each(&SynthRow {
                    problem: i,
                    sample: r * spec.samples + s,
                    run: r,
                    correct,
                    answer,
                    output_tokens: None,
                })?;
            }
        }
    }
    Ok(())
}

/// One model of [`for_each_joint_row`]: its name, logit shift and per-problem disagreement SD.
#[derive(Debug, Clone, PartialEq)]
pub struct JointSynthModel {
    /// Model name written on its rows.
    pub name: String,
    /// Logit shift against the shared problem effect.
    pub shift: f64,
    /// SD of the model's own per-problem offset (`shift_sd`, tau).
    pub shift_sd: f64,
}

/// Several models on shared problems, the joint fit's model: problem i has z_i ~ N(0, 1) from
/// its own stream (seed, 0x594a, i); model m's logit on it is mu + sigma z_i + shift_m + tau_m
/// e_{m,i}, with e_{m,i} ~ N(0, 1) and then the model's `spec.samples` samples drawn from the
/// stream (seed, 0x594b, m, i) (each correct with probability expit(logit), else the attractor
/// with probability `spec.attractor`, else a one-off). No tokens. Rows come model by model, each
/// problem-major, handed to `each` with the model's name. Cost: O(models problems samples).
///
/// # Errors
/// Whatever `each` returns.
pub fn for_each_joint_row<E>(
    spec: &SynthSpec,
    models: &[JointSynthModel],
    mut each: impl FnMut(&str, &SynthRow) -> Result<(), E>,
) -> Result<(), E> {
    let z: Vec<f64> = (0..spec.problems)
        .map(|i| StandardNormal.sample(&mut stream(spec.seed, &[0x594a, i as u64])))
        .collect();
    for (m, model) in models.iter().enumerate() {
        for (i, &zi) in z.iter().enumerate() {
            let mut rng = stream(spec.seed, &[0x594b, m as u64, i as u64]);
            let e: f64 = StandardNormal.sample(&mut rng);
            let logit = spec.mu + spec.sigma * zi + model.shift + model.shift_sd * e;
            let p = 1.0 / (1.0 + (-logit).exp());
            for s in 0..spec.samples {
                let correct = rng.random::<f64>() < p;
                let answer = if correct {
                    SynthAnswer::Right
                } else if rng.random::<f64>() < spec.attractor {
                    SynthAnswer::Attractor
                } else {
                    SynthAnswer::OneOff
                };
                each(
                    &model.name,
                    &SynthRow {
                        problem: i,
                        sample: s,
                        run: 0,
                        correct,
                        answer,
                        output_tokens: None,
                    },
                )?;
            }
        }
    }
    Ok(())
}
