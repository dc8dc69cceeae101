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

/// Writes the joint fit's benchmark input (docs/fit.md, "Speed"): 3 models x 500 problems x 64
/// samples from `evalsim::sim::synth::for_each_joint_row` (mu 0.2, sigma 1.5, shifts 0, -0.4,
/// 0.3, shift_sd 0.5, 0.8, 0.6, attractor 0.5, seed 5) to `$EVALSIM_FIT_BENCH` (default
/// `/tmp/evalsim-fit-3x500x64.jsonl`), and checks that it reads back as 3 models of 500
/// problems x 64 samples. Run with
/// `cargo test --release --test suite write_joint_fit_bench_file -- --ignored`.
#[test]
#[ignore]
fn write_joint_fit_bench_file() {
    use evalsim::analyze::{read_samples, Format, ReadOptions};
    use evalsim::sim::synth::{for_each_joint_row, JointSynthModel};
    let spec = SynthSpec {
        model: String::new(),
        problems: 500,
        samples: 64,
        mu: 0.2,
        sigma: 1.5,
        attractor: 0.5,
        tokens: false,
        seed: 5,
    };
    let models: Vec<JointSynthModel> = [("a", 0.0, 0.5), ("b", -0.4, 0.8), ("c", 0.3, 0.6)]
        .iter()
        .map(|&(name, shift, shift_sd)| JointSynthModel {
            name: name.to_string(),
            shift,
            shift_sd,
        })
        .collect();
    let mut bytes = Vec::new();
    for_each_joint_row(&spec, &models, |model, row| -> std::io::Result<()> {
        let answer = match row.answer {
            SynthAnswer::Right => "42".to_string(),
            SynthAnswer::Attractor => "7".to_string(),
            SynthAnswer::OneOff => format!("w{}", row.sample),
        };
        writeln!(
            bytes,
            "{{\"problem_id\": \"q{}\", \"model\": \"{model}\", \"sample\": {}, \"correct\": {}, \"answer\": \"{answer}\"}}",
            row.problem, row.sample, row.correct
        )
    })
    .expect("write to memory");
    let path = std::env::var("EVALSIM_FIT_BENCH")
        .unwrap_or_else(|_| "/tmp/evalsim-fit-3x500x64.jsonl".to_string());
    std::fs::write(&path, &bytes).expect("write the bench file");
    let data = read_samples(
        Format::Jsonl,
        &mut std::io::Cursor::new(&bytes),
        &path,
        &ReadOptions::default(),
    )
    .expect("reads back");
    assert_eq!(data.models.len(), 3);
    for m in &data.models {
        assert_eq!(m.problems.len(), 500);
        assert!(m.problems.iter().all(|p| p.n == 64));
    }
    println!(
        "wrote {path} ({} rows)",
        bytes.iter().filter(|&&b| b == b'\n').count()
    );
}
