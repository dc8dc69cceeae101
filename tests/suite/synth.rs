//! Synthetic canonical JSONL for the suite: the rows of `evalsim::sim::synth` (the workbench's own
//! model) written in the canonical format `analyze` reads.
use std::io::Write;

use evalsim::sim::synth::{for_each_row, SynthAnswer, SynthSpec};

/// Writes the `problems * samples` rows of `spec` as canonical JSONL (problem-major).
pub fn write_jsonl(spec: &SynthSpec, out: &mut dyn Write) -> std::io::Result<()> {
    for_each_row(spec, |row| {
        let answer = match row.answer {
            SynthAnswer::Right => "42".to_string(),
            SynthAnswer::Attractor => "7".to_string(),
            SynthAnswer::OneOff => format!("w{}", row.sample),
        };
        let mut line = format!(
            "{{\"problem_id\": \"q{}\", \"model\": \"{}\", \"sample\": {}, \"correct\": {}, \"answer\": \"{answer}\"",
            row.problem, spec.model, row.sample, row.correct
        );
        if let Some(t) = row.output_tokens {
            line.push_str(&format!(", \"output_tokens\": {t}"));
        }
        line.push_str("}\n");
        out.write_all(line.as_bytes())
    })
}
