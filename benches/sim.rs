//! Speed of the simulation engine, the exact formulas and the raw generator, measured side by side
//! (ratios against the xoshiro256++ rate in the same run). Run with `cargo bench --bench sim`.
use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use evalsim::exact::maj::maj_at_k;
use evalsim::experiments::run;
use evalsim::model::VoteRule;
use evalsim::scenario::Scenario;
use evalsim::sim::stream::stream;
use rand::RngCore;

fn generator(c: &mut Criterion) {
    let mut g = c.benchmark_group("generator");
    let n = 10_000_000u64;
    g.throughput(Throughput::Elements(n));
    g.sample_size(10);
    g.bench_function("xoshiro256++ next_u64 (one thread)", |b| {
        b.iter(|| {
            let mut rng = stream(1, &[2]);
            let mut acc = 0u64;
            for _ in 0..n {
                acc ^= rng.next_u64();
            }
            black_box(acc)
        })
    });
    g.finish();
}

/// The workload of sections (a) and (b) of the numpy peer (`shared/peer/numpy_note.py`): maj@k
/// and pass@k of `long` for k = 1..64, then maj@64 for five attractor shares, 4,000 votes per
/// problem each: 1.44 million votes.
const PEER_AB: &str = r#"
seed = 20240601
[benchmark]
problems = 30
mu = 0.2
sigma = 2.2
[[model]]
name = "long"
attractor = 0.5
[[experiment]]
kind = "curves"
k = [1, 2, 4, 8, 16, 32, 64]
votes = 4000
[[experiment]]
kind = "attractor-sweep"
model = "long"
attractor = [0.0, 0.25, 0.5, 0.75, 0.9]
k = [64]
votes = 4000
"#;

fn note_votes(c: &mut Criterion) {
    let s = Scenario::from_toml(PEER_AB, "peer-ab", "bench").expect("valid");
    let mut g = c.benchmark_group("note");
    g.sample_size(20);
    let votes: u64 = (0..2)
        .map(|i| evalsim::experiments::planned_draws(&s, i))
        .sum();
    assert_eq!(votes, 1_440_000);
    g.throughput(Throughput::Elements(votes));
    g.bench_function(
        "peer sections a+b: curves + attractor-sweep (votes, all threads)",
        |b| {
            b.iter(|| {
                for i in 0..2 {
                    black_box(run(&s, i, &|_| {}).expect("runs"));
                }
            })
        },
    );
    g.finish();
}

fn exact(c: &mut Criterion) {
    let mut g = c.benchmark_group("exact");
    g.bench_function("maj@k one problem, k = 1024", |b| {
        b.iter(|| maj_at_k(black_box(0.4), 0.5, 1024, VoteRule::Random))
    });
    g.bench_function("maj@k one problem, k = 64", |b| {
        b.iter(|| maj_at_k(black_box(0.4), 0.5, 64, VoteRule::Random))
    });
    g.finish();
}

/// The peer's `--heavy` grid (N {30, 100, 300, 1000} x n {1, 4, 16, 64} x shift {0.05, 0.1, 0.21,
/// 0.4}) through `evalsim plan`: the exact values of all 192 cells, and the simulated check of the
/// 64 fixed-design cells at 10,000 paired reruns each (457.6 million binomial draws; the peer runs
/// 100,000, so multiply the time by 10 to compare).
fn plan(c: &mut Criterion) {
    use evalsim::experiments::plan::{exact_cells, simulate, CheckCells, PlanSpec};
    let spec = PlanSpec {
        mu: 0.2,
        sigma: 2.2,
        gaps: vec![0.05, 0.1, 0.21, 0.4],
        problems: vec![30, 100, 300, 1000],
        samples: vec![1, 4, 16, 64],
        target_loss_or_tie: 0.05,
        target_halfwidth: 0.02,
        reruns: 10_000,
        check_cells: CheckCells::All,
        seed: 1,
    };
    let cells: Vec<(usize, u32, f64)> = spec
        .gaps
        .iter()
        .flat_map(|&g| {
            spec.problems
                .iter()
                .flat_map(move |&big_n| [1u32, 4, 16, 64].map(|n| (big_n, n, g)))
        })
        .collect();
    let mut g = c.benchmark_group("plan");
    g.sample_size(10);
    g.bench_function("exact, all 192 cells (all threads)", |b| {
        b.iter(|| black_box(exact_cells(&spec)))
    });
    let draws: u64 = cells.iter().map(|c| 2 * c.0 as u64 * spec.reruns).sum();
    g.throughput(Throughput::Elements(draws));
    g.bench_function(
        "simulated heavy grid, 10,000 reruns per cell (binomial draws, all threads)",
        |b| b.iter(|| black_box(simulate(&spec, &cells, &|_| {}))),
    );
    g.finish();
}

criterion_group!(benches, generator, note_votes, exact, plan);
criterion_main!(benches);
