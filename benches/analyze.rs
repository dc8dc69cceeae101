//! Speed of `evalsim analyze` on real-sized inputs: a 1,000,000-row canonical JSONL (15,625
//! problems x 64 samples, with answers and token counts) read and summarised (every k from 1 to
//! 64, all standard errors, 2,000 bootstrap resamples), and exact maj@k over subsets for 500
//! problems x 64 samples at every k from 1 to 64. Run with `cargo bench --bench analyze`.
use std::hint::black_box;
use std::io::Cursor;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use evalsim::analyze::synth::{write_jsonl, SynthSpec};
use evalsim::analyze::{
    analyze, maj_at_k_exact, read_samples, AnalysisOptions, Format, ReadOptions,
};
use evalsim::model::VoteRule;

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
    write_jsonl(&spec, &mut bytes).expect("in memory");
    bytes
}

fn million_rows(c: &mut Criterion) {
    let bytes = jsonl(15_625, 64);
    let mut g = c.benchmark_group("analyze");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(40));
    g.throughput(Throughput::Elements(1_000_000));
    g.bench_function("read 1M-row JSONL", |b| {
        b.iter(|| {
            let d = read_samples(
                Format::Jsonl,
                &mut Cursor::new(&bytes),
                "bench.jsonl",
                &ReadOptions::default(),
            )
            .expect("valid");
            black_box(d)
        })
    });
    g.bench_function("read + analyze 1M-row JSONL (all threads)", |b| {
        b.iter(|| {
            let d = read_samples(
                Format::Jsonl,
                &mut Cursor::new(&bytes),
                "bench.jsonl",
                &ReadOptions::default(),
            )
            .expect("valid");
            black_box(analyze(vec![(d, Format::Jsonl)], &AnalysisOptions::default()).expect("ok"))
        })
    });
    g.finish();
}

fn maj_500x64(c: &mut Criterion) {
    let bytes = jsonl(500, 64);
    let d = read_samples(
        Format::Jsonl,
        &mut Cursor::new(&bytes),
        "bench.jsonl",
        &ReadOptions::default(),
    )
    .expect("valid");
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
