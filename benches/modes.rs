//! Speed of exact maj@k with several attractors (the recurrence of `exact::modes`): k = 1,024 with
//! 4 and 8 attractors, with and without a split correct form, and k = 256 for scale; each against
//! the previous algorithm (`maj_at_k_modes_previous`) in the same run, for the ratio. Two rates:
//! just above the winning threshold (win and loss both interior) and 0.1 above it (a loss of
//! order 1e-8, where the windows must reach further into the tails). Run with
//! `cargo bench --bench modes --features reference-algorithms` (`-- k1024_m4` for the headline
//! case alone); the feature compiles the previous algorithm, which the library leaves out.
//!
//! Group `mode_votes`: simulation cost per vote, the literal sampler of several attractors
//! (`sim/modes.rs`, one word per sample) against the canonical one-attractor sampler (a joint
//! table of the vote's outcomes) on the same 30 problems, k = 8 and 32, 4,000 votes per problem,
//! on every thread (`-- mode_votes`).
use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use evalsim::exact::modes::reference::maj_at_k_modes_previous;
use evalsim::exact::modes::{maj_at_k_modes, winning_threshold, Extraction};
use evalsim::model::VoteRule;
use evalsim::sim::votes::{self, ModeAnswers, VoteCell};

fn modes(c: &mut Criterion) {
    let mut g = c.benchmark_group("maj_modes");
    g.sample_size(10);
    for (k, m, split, offset) in [
        (256u32, 8usize, 0.0, 0.01),
        (1024, 4, 0.0, 0.01),
        (1024, 4, 0.0, 0.1),
        (1024, 8, 0.0, 0.01),
        (1024, 8, 0.2, 0.01),
    ] {
        let attractors = vec![0.8 / m as f64; m];
        let p = winning_threshold(&attractors, split) + offset;
        let ex = Extraction {
            unparsed: 0.05,
            split,
        };
        let name = format!("k{k}_m{m}_split{split}_above{offset}");
        g.bench_function(&name, |b| {
            b.iter(|| maj_at_k_modes(black_box(p), &attractors, ex, k, VoteRule::Random))
        });
        g.bench_function(format!("{name}_previous"), |b| {
            b.iter(|| maj_at_k_modes_previous(black_box(p), &attractors, ex, k, VoteRule::Random))
        });
    }
    g.finish();
}

fn mode_votes(c: &mut Criterion) {
    let mut g = c.benchmark_group("mode_votes");
    g.sample_size(10);
    // 30 problems with rates spread over (0, 1), as a benchmark's would be.
    let rates: Vec<f64> = (0..30).map(|i| (i as f64 + 0.5) / 30.0).collect();
    const VOTES: u64 = 4000;
    for k in [8u32, 32] {
        let cell = |modes: Option<ModeAnswers>| VoteCell {
            k,
            p: rates.clone(),
            alpha: vec![0.5; rates.len()],
            rule: VoteRule::Random,
            modes,
        };
        let variants = [
            ("canonical_one_attractor", cell(None)),
            (
                "literal_one_attractor",
                cell(Some(ModeAnswers {
                    attractors: vec![0.5],
                    extraction: Extraction {
                        unparsed: 0.0,
                        split: 0.0,
                    },
                    per_problem: None,
                })),
            ),
            (
                "literal_four_attractors_unparsed_split",
                cell(Some(ModeAnswers {
                    attractors: vec![0.3, 0.2, 0.1, 0.1],
                    extraction: Extraction {
                        unparsed: 0.05,
                        split: 0.2,
                    },
                    per_problem: None,
                })),
            ),
        ];
        g.throughput(Throughput::Elements(VOTES * rates.len() as u64));
        for (name, cell) in &variants {
            let cells = std::slice::from_ref(cell);
            g.bench_function(format!("k{k}_{name}"), |b| {
                b.iter(|| black_box(votes::simulate(1, &[2], cells, VOTES, &|_| {})))
            });
        }
    }
    g.finish();
}

criterion_group!(benches, modes, mode_votes);
criterion_main!(benches);
