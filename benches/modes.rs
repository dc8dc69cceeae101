//! Speed of exact maj@k with several attractors (the recurrence of `exact::modes`): k = 1,024 with
//! 4 and 8 attractors, with and without a split correct form, and k = 256 for scale. Run with
//! `cargo bench --bench modes`.
use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use evalsim::exact::modes::{
    maj_at_k_modes, maj_at_k_modes_unpruned, winning_threshold, Extraction,
};
use evalsim::model::VoteRule;

fn modes(c: &mut Criterion) {
    let mut g = c.benchmark_group("maj_modes");
    g.sample_size(10);
    for (k, m, split) in [
        (256u32, 8usize, 0.0),
        (1024, 4, 0.0),
        (1024, 8, 0.0),
        (1024, 8, 0.2),
    ] {
        let attractors = vec![0.8 / m as f64; m];
        // A rate near the winning threshold, where every term matters.
        let p = winning_threshold(&attractors, split) + 0.01;
        let ex = Extraction {
            unparsed: 0.05,
            split,
        };
        g.bench_function(format!("k{k}_m{m}_split{split}"), |b| {
            b.iter(|| maj_at_k_modes(black_box(p), &attractors, ex, k, VoteRule::Random))
        });
        // The same value with every leader count run (the recurrence before pruning), for the
        // ratio in the same run.
        g.bench_function(format!("k{k}_m{m}_split{split}_unpruned"), |b| {
            b.iter(|| maj_at_k_modes_unpruned(black_box(p), &attractors, ex, k, VoteRule::Random))
        });
    }
    g.finish();
}

criterion_group!(benches, modes);
criterion_main!(benches);
