//! Synthetic eval results in the canonical JSONL format, drawn from the workbench's own model, for
//! tests and benchmarks (round trips through `fit`, the 1,000,000-row streaming bench). Not used
//! by the commands.
//!
//! Problem i has rate p_i = expit(mu + sigma z_i), z_i ~ N(0, 1); each of its n samples is correct
//! with probability p_i, else the attractor answer with probability `attractor`, else a one-off
//! answer. Token counts are lognormal with median 2000 (1 + d_i) for correct samples (d_i = 1 -
//! p_i), 1.5 times that for wrong ones, log-SD 0.5.
use std::io::Write;

use rand::Rng;
use rand_distr::{Distribution, StandardNormal};
use serde::{Deserialize, Serialize};

use crate::sim::stream::stream;

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
    /// Write `output_tokens`.
    pub tokens: bool,
    /// Seed.
    pub seed: u64,
}

/// Writes `problems * samples` canonical JSONL rows (problem-major) to `out`. Cost: O(rows).
///
/// # Errors
/// Whatever `out` returns.
pub fn write_jsonl(spec: &SynthSpec, out: &mut dyn Write) -> std::io::Result<()> {
    let mut line = String::with_capacity(160);
    for i in 0..spec.problems {
        let mut rng = stream(spec.seed, &[0x5947, i as u64]);
        let z: f64 = StandardNormal.sample(&mut rng);
        let p = 1.0 / (1.0 + (-(spec.mu + spec.sigma * z)).exp());
        let median = 2000.0 * (2.0 - p);
        for s in 0..spec.samples {
            let correct = rng.random::<f64>() < p;
            let answer = if correct {
                "42".to_string()
            } else if rng.random::<f64>() < spec.attractor {
                "7".to_string()
            } else {
                format!("w{s}")
            };
            line.clear();
            line.push_str(&format!(
                "{{\"problem_id\": \"q{i}\", \"model\": \"{}\", \"sample\": {s}, \"correct\": {correct}, \"answer\": \"{answer}\"",
                spec.model
            ));
            if spec.tokens {
                let m: f64 = if correct { median } else { 1.5 * median };
                let e: f64 = StandardNormal.sample(&mut rng);
                let t = (m.ln() + 0.5 * e).exp().round();
                line.push_str(&format!(", \"output_tokens\": {t}"));
            }
            line.push_str("}\n");
            out.write_all(line.as_bytes())?;
        }
    }
    Ok(())
}
