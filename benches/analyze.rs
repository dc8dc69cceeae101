//! Speed of `evalsim analyze` on real-sized inputs: 1,000,000-row canonical JSONL files (with
//! answers and token counts) in four shapes, 15,625 problems x 64 samples, 10,000 x 100,
//! 1,000 x 1,000 and 1,000,000 x 1, read and summarised with the default options (the default k grid, maj@k up to
//! k = 256, all standard errors, 2,000 bootstrap resamples), and exact maj@k over subsets for 500
//! problems x 64 samples at every k from 1 to 64. Run with `cargo bench --bench analyze`
//! (`cargo bench --bench analyze -- 1M` for the large files only).
use std::hint::black_box;
use std::io::Cursor;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use evalsim::analyze::{
    analyze, maj_at_k_exact, read_samples, AnalysisOptions, Format, ReadOptions,
};
use evalsim::model::VoteRule;
use evalsim::sim::synth::{for_each_row, SynthAnswer, SynthSpec};

fn jsonl(problems: usize, samples: usize) -> Vec<u8> {
    let spec = SynthSpec {
        model: "bench".to_string(),
        problems,
        samples,
        mu: 0.2,
        sigma: 2.2,
        attractor: 0.5,
        tokens: true,
        seed: 7,
    };
    let mut bytes = Vec::new();
    for_each_row(&spec, |row| -> Result<(), std::convert::Infallible> {
        let answer = match row.answer {
            SynthAnswer::Right => "42".to_string(),
            SynthAnswer::Attractor => "7".to_string(),
            SynthAnswer::OneOff => format!("w{}", row.sample),
        };
        bytes.extend_from_slice(
            format!(
                "{{\"problem_id\": \"q{}\", \"model\": \"bench\", \"sample\": {}, \"correct\": {}, \"answer\": \"{answer}\", \"output_tokens\": {}}}\n",
                row.problem,
                row.sample,
                row.correct,
                row.output_tokens.unwrap_or(0.0)
            )
            .as_bytes(),
        );
        Ok(())
    })
    .expect("infallible");
    bytes
}

fn read(bytes: &[u8]) -> evalsim::analyze::Dataset {
    read_samples(
        Format::Jsonl,
        &mut Cursor::new(bytes),
        "bench.jsonl",
        &ReadOptions::default(),
    )
    .expect("valid")
}

fn million_rows(c: &mut Criterion) {
    let mut g = c.benchmark_group("analyze");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(20));
    g.throughput(Throughput::Elements(1_000_000));
    for (problems, samples) in [(15_625, 64), (10_000, 100), (1_000, 1_000), (1_000_000, 1)] {
        let bytes = jsonl(problems, samples);
        if samples == 64 {
            g.bench_function("read 1M-row JSONL (15,625 x 64)", |b| {
                b.iter(|| black_box(read(&bytes)))
            });
        }
        g.bench_function(
            format!("read + analyze 1M-row JSONL ({problems} x {samples}, all threads)"),
            |b| {
                b.iter(|| {
                    let d = read(&bytes);
                    black_box(
                        analyze(vec![(d, Format::Jsonl)], &AnalysisOptions::default()).expect("ok"),
                    )
                })
            },
        );
    }
    g.finish();
}

fn maj_500x64(c: &mut Criterion) {
    let bytes = jsonl(500, 64);
    let d = read(&bytes);
    let model = d.models[0].clone();
    let mut g = c.benchmark_group("maj");
    g.sample_size(10);
    g.bench_function(
        "exact maj@k over subsets, 500 problems x 64, k = 1..64 (one thread)",
        |b| {
            b.iter(|| {
                for p in &model.problems {
                    black_box(
                        maj_at_k_exact(p.correct, &p.wrong_groups, 64, VoteRule::Random)
                            .expect("ok"),
                    );
                }
            })
        },
    );
    let opts = AnalysisOptions::default();
    g.bench_function(
        "analyze 500 x 64: every curve, SE and 2,000-resample CI (all threads)",
        |b| b.iter(|| black_box(analyze(vec![(d.clone(), Format::Jsonl)], &opts).expect("ok"))),
    );
    g.finish();
}

criterion_group!(benches, maj_500x64, million_rows);
criterion_main!(benches);
