//! Speed of exact maj@k with several attractors (the recurrence of `exact::modes`): k = 1,024 with
//! 4 and 8 attractors, with and without a split correct form, and k = 256 for scale; each against
//! the previous algorithm (`maj_at_k_modes_previous`) in the same run, for the ratio. Two rates:
//! just above the winning threshold (win and loss both interior) and well above it (a loss of
//! about 1e-40, where the windowed programme must keep far-tail terms). Run with
//! `cargo bench --bench modes` (`-- k1024_m4` for the headline case alone).
use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use evalsim::exact::modes::{
    maj_at_k_modes, maj_at_k_modes_previous, winning_threshold, Extraction,
};
use evalsim::model::VoteRule;

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

criterion_group!(benches, modes);
criterion_main!(benches);
