//! Speed of the simulation engine, the exact formulas and the raw generator, measured side by side
//! (ratios against the xoshiro256++ rate in the same run). Run with `cargo bench --bench sim`.
use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use evalsim::exact::maj::{ln_factorials, maj_at_k};
use evalsim::experiments::run;
use evalsim::model::VoteRule;
use evalsim::scenario::Scenario;
use evalsim::sim::counts::{pair_tallies, total_histograms, CountSampler, PairSampler};
use evalsim::sim::stream::stream;
use evalsim::sim::traces::{self, TraceCell, TraceProblem};
use evalsim::sim::votes::{self, vote_total_histograms, AttractorTables, VoteCell, VoteSampler};
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

/// The workload of sections (a) and (b) of the numpy peer (a vectorised numpy implementation of the same workloads, see docs/performance.md): maj@k
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
                    black_box(run(&s, i, &|_| {}));
                }
            })
        },
    );
    g.finish();
}

/// The workload of sections (f) and (g) of the numpy peer: 4,000 traces per problem for `long`
/// and `short` evaluated at 9 budgets, then the uncapped cost table (k = 1, 8, 32; 4,000 votes
/// per problem for k > 1). evalsim's cost experiment also re-simulates 4,000 traces per problem
/// for tokens per sample, which the peer reuses from (f): 960,000 draws in all.
const PEER_FG: &str = r#"
seed = 20240601
[benchmark]
problems = 30
mu = 0.2
sigma = 2.2
[[model]]
name = "long"
attractor = 0.5
[model.tokens]
median_tokens = 8000
hard_growth = 1.0
wrong_factor = 1.5
sigma = 0.55
[[model]]
name = "short"
shift = -0.6
attractor = 0.5
[model.tokens]
median_tokens = 2500
hard_growth = 1.0
wrong_factor = 1.5
sigma = 0.55
[[experiment]]
kind = "budget"
budgets = [1000, 2000, 4000, 8000, 16000, 24000, 32000, 64000, 128000]
traces = 4000
[[experiment]]
kind = "cost"
k = [1, 8, 32]
votes = 4000
traces = 4000
"#;

fn note_budget(c: &mut Criterion) {
    let s = Scenario::from_toml(PEER_FG, "peer-fg", "bench").expect("valid");
    let mut g = c.benchmark_group("note");
    g.sample_size(30);
    let draws: u64 = (0..2)
        .map(|i| evalsim::experiments::planned_draws(&s, i))
        .sum();
    assert_eq!(draws, 240_000 + 240_000 + 480_000);
    g.throughput(Throughput::Elements(draws));
    g.bench_function("peer section f: budget (traces, all threads)", |b| {
        b.iter(|| black_box(run(&s, 0, &|_| {})))
    });
    g.bench_function("peer section g: cost (traces + votes, all threads)", |b| {
        b.iter(|| black_box(run(&s, 1, &|_| {})))
    });
    g.bench_function("peer sections f+g: budget + cost (all threads)", |b| {
        b.iter(|| {
            for i in 0..2 {
                black_box(run(&s, i, &|_| {}));
            }
        })
    });
    // The simulated part alone, as the peer's sections time it: the traces of (f) at 9 budgets
    // and the votes of (g); evalsim's exact values, checks, crossovers and figure data excluded.
    let difficulty = s.benchmark.difficulty();
    let cells: Vec<TraceCell> = s
        .models
        .iter()
        .map(|m| {
            let lengths = m.tokens.expect("tokens");
            TraceCell {
                problems: m
                    .rates_on(&s.benchmark)
                    .iter()
                    .zip(&difficulty)
                    .map(|(&p, &d)| TraceProblem {
                        p,
                        correct_median: lengths.correct_median(d),
                        wrong_median: lengths.wrong_median(d),
                        grading: Default::default(),
                    })
                    .collect(),
                sigma: lengths.sigma,
            }
        })
        .collect();
    let vote_cells: Vec<VoteCell> = s
        .models
        .iter()
        .flat_map(|m| {
            let rates = m.rates_on(&s.benchmark);
            [8u32, 32].map(|k| VoteCell {
                k,
                p: rates.clone(),
                alpha: vec![m.attractor; rates.len()],
                rule: VoteRule::Random,
                modes: None,
            })
        })
        .collect();
    let budgets = [
        1000.0, 2000.0, 4000.0, 8000.0, 16000.0, 24000.0, 32000.0, 64000.0, 128000.0,
    ];
    let run_traces = || traces::simulate(1, &[1], &cells, &budgets, 4000, None, &|_| {});
    g.throughput(Throughput::Elements(240_000 + 480_000));
    g.bench_function(
        "peer sections f+g, simulation only: 240k traces at 9 budgets + 480k votes",
        |b| {
            b.iter(|| {
                black_box(run_traces());
                black_box(votes::simulate(1, &[2], &vote_cells, 4000, &|_| {}));
            })
        },
    );
    g.throughput(Throughput::Elements(240_000));
    g.bench_function(
        "peer section f, simulated part: 240k traces at 9 budgets",
        |b| b.iter(|| black_box(run_traces())),
    );
    // The votes of (g) alone: k = 8 and 32 for both models, 4,000 votes per problem.
    g.throughput(Throughput::Elements(480_000));
    g.bench_function(
        "peer section g, simulated part: votes (480k votes, all threads)",
        |b| b.iter(|| black_box(votes::simulate(1, &[2], &vote_cells, 4000, &|_| {}))),
    );
    g.finish();
}

/// The workload of sections (c), (d) and (e) of the numpy peer: seed variance at n = 1, 4, 16, 64
/// with 20,000 reruns; the maj@16 seed spread with 2,000 reruns; head-to-head of `long` against
/// `long` + 0.21 logits at the same n with 20,000 paired reruns. Exact values are included in the
/// timing (the peer's normal mode computes none).
const PEER_CDE: &str = r#"
seed = 20240601
[benchmark]
problems = 30
mu = 0.2
sigma = 2.2
[[model]]
name = "long"
attractor = 0.5
[[model]]
name = "b"
shift = 0.21
attractor = 0.5
[[experiment]]
kind = "seed-variance"
model = "long"
n = [1, 4, 16, 64]
reruns = 20000
[[experiment]]
kind = "vote-spread"
model = "long"
k = [16]
reruns = 2000
[[experiment]]
kind = "head-to-head"
a = "long"
b = "b"
n = [1, 4, 16, 64]
reruns = 20000
"#;

fn note_noise(c: &mut Criterion) {
    let s = Scenario::from_toml(PEER_CDE, "peer-cde", "bench").expect("valid");
    let mut g = c.benchmark_group("note");
    g.sample_size(20);
    for (i, label) in [
        (0, "peer section c: seed-variance"),
        (1, "peer section d: vote-spread maj@16"),
        (2, "peer section e: head-to-head"),
    ] {
        g.bench_function(label, |b| b.iter(|| black_box(run(&s, i, &|_| {}))));
    }
    // The simulated part alone: the same samplers, draws, streams and histograms as the
    // experiments (sampler set-up included), no exact values.
    let (ra, rb) = (
        s.models[0].rates_on(&s.benchmark),
        s.models[1].rates_on(&s.benchmark),
    );
    let ns = [1u32, 4, 16, 64];
    let keys: Vec<[u64; 2]> = ns.iter().map(|&n| [1, u64::from(n)]).collect();
    let samplers = |rates: &[f64]| -> Vec<CountSampler> {
        ns.iter().map(|&n| CountSampler::new(n, rates)).collect()
    };
    g.bench_function(
        "peer section c, simulated part: seed-variance totals",
        |b| {
            b.iter(|| {
                let sa = samplers(&ra);
                let cells: Vec<(&[u64], &CountSampler)> =
                    keys.iter().map(|k| &k[..]).zip(&sa).collect();
                black_box(total_histograms(s.seed, &cells, 20_000, &|_| {}))
            })
        },
    );
    g.bench_function("peer section d, simulated part: maj@16 spread votes", |b| {
        b.iter(|| {
            let lnf = ln_factorials(16);
            let tables = AttractorTables::new(16, 0.5, &lnf);
            let voters = votes::samplers(16, &ra, &tables, VoteRule::Random, &lnf, 2_000);
            let cells: [(&[u64], &[VoteSampler]); 1] = [(&[1, 16], &voters)];
            black_box(vote_total_histograms(s.seed, &cells, 2_000, &|_| {}))
        })
    });
    g.bench_function("peer section e, simulated part: head-to-head totals", |b| {
        b.iter(|| {
            let pairs: Vec<PairSampler> = ns
                .iter()
                .map(|&n| PairSampler::new(n, &ra, &rb, 20_000))
                .collect();
            let cells: Vec<(&[u64], &PairSampler)> =
                keys.iter().map(|k| &k[..]).zip(&pairs).collect();
            black_box(pair_tallies(s.seed, &cells, 20_000, &|_| {}))
        })
    });
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
    use evalsim::experiments::plan::{exact_cells, run_plan, simulate, CheckCells, PlanSpec};
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
        shift_sd: 0.0,
        target_power: None,
        model_shift_sd: None,
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
    // The note's plan grid (`evalsim plan` defaults: gap 0.21, N {30, 100, 300, 1000} x n {1,
    // 4, 16, 64}), exact only (cells and minimum detectable gaps), without and with per-problem
    // disagreement: the ratio of the two is the cost of tau > 0.
    for tau in [0.0, 1.0] {
        let note = PlanSpec {
            gaps: vec![0.21],
            reruns: 0,
            shift_sd: tau,
            ..spec.clone()
        }
        .pass1();
        g.bench_function(
            format!("exact note grid with minimum detectable gaps, shift_sd {tau}"),
            |b| b.iter(|| black_box(run_plan(&note, "plan", &|_| {}))),
        );
    }
    let draws: u64 = cells.iter().map(|c| 2 * c.0 as u64 * spec.reruns).sum();
    g.throughput(Throughput::Elements(draws));
    g.bench_function(
        "simulated heavy grid, 10,000 reruns per cell (binomial draws, all threads)",
        |b| b.iter(|| black_box(simulate(&spec, &cells, &|_| {}))),
    );
    g.finish();
}

criterion_group!(
    benches,
    generator,
    note_votes,
    note_noise,
    note_budget,
    exact,
    plan
);
criterion_main!(benches);
