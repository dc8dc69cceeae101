//! Coverage of `analyze`'s 95% intervals on data drawn from the workbench's own model
//! (logit-normal population mu = 0.2, sigma = 2.2, attractor 0.5; model B shifted by +0.21
//! logits on the same problems), the truth computed exactly by quadrature.
//!
//! The fast test runs in the normal suite. The full table (more replicates, every candidate
//! construction and the percentile bootstrap, as in docs/intervals.md) is an ignored test:
//!
//!     cargo test --release --test suite analyze_interval_coverage_full_table -- --ignored --nocapture
//!
//! With k = n = 4 the coverage is also exact at any N (a programme over the sum and the sum of
//! squares of the per-problem values): `exact_coverage_band_at_n_30` holds the documented band at
//! N = 30 in the suite, and the ignored grid over 11 populations, gaps 0.21 and 1, N = 10 to 100:
//!
//!     cargo test --release --test suite analyze_interval_exact_coverage_grid -- --ignored --nocapture
use crate::support::coverage::{
    exact_coverage, exact_coverage_lattice, exact_coverage_lattice_with, interval_coverage,
    population_truth, reported_method, CoverageResult, CoverageSpec, METRICS,
};
use evalsim::analyze::interval::{mean_interval, IntervalMethod};

fn spec(problems: usize, samples: usize, replicates: usize, bootstrap: usize) -> CoverageSpec {
    CoverageSpec {
        mu: 0.2,
        sigma: 2.2,
        attractor: 0.5,
        gap: 0.21,
        problems,
        samples,
        k: 4,
        replicates,
        bootstrap,
        seed: 19,
    }
}

/// Two-sided |z| bound of each coverage check: 21 checks (7 intervals at 3 sizes) in the fast
/// test, so under exact 95% coverage the whole test fails spuriously with probability about
/// 21 * 4.7e-4 = 1.0%.
const Z: f64 = 3.5;

fn table(results: &[CoverageResult]) -> String {
    let mut methods: Vec<String> = Vec::new();
    for r in results {
        for row in &r.rows {
            if !methods.contains(&row.method) {
                methods.push(row.method.clone());
            }
        }
    }
    let mut t = String::new();
    for method in &methods {
        t += &format!("\n{method}\n| N x n | replicates | binomial SE |");
        for m in METRICS {
            t += &format!(" {m} |");
        }
        t += "\n";
        for r in results {
            let se = r.rows.first().map_or(0.0, |row| row.binomial_se);
            t += &format!(
                "| {} x {} | {} | {:.2}% |",
                r.spec.problems,
                r.spec.samples,
                r.spec.replicates,
                100.0 * se
            );
            for m in METRICS {
                let cell = r
                    .rows
                    .iter()
                    .find(|row| row.metric == m && &row.method == method)
                    .map_or("-".to_string(), |row| {
                        format!("{:.1}% (w {:.3})", 100.0 * row.coverage, row.mean_width)
                    });
                t += &format!(" {cell} |");
            }
            t += "\n";
        }
    }
    t
}

/// With k = n every per-problem score takes finitely many values (0/1 for pass@k and pass^k,
/// {0, 1/4, 1/2, 1} for maj@4, ...), so a data set is a multinomial draw over those values and
/// the interval's coverage at the population value is exact
/// ([`exact_coverage`]). It oscillates with the population and N (Brown, Cai and DasGupta 2001):
/// no interval built from such lumpy scores is 95% at every population, so where the exact value
/// is computable the simulated coverage is checked against it (and the exact value is printed
/// with its distance from 95%); elsewhere against 95%.
fn assert_reported_covers(r: &CoverageResult) {
    let exact = exact_coverage(&r.spec);
    for (m, row) in r
        .rows
        .iter()
        .filter(|row| row.method == "reported")
        .enumerate()
    {
        assert_eq!(row.metric, METRICS[m]);
        let target = match exact[m] {
            Some(e) => {
                eprintln!(
                    "{} at {} x {}: exact coverage at the population value {:.4}: {:.2}% ({:+.1} binomial SEs of {} replicates from 95%)",
                    row.metric,
                    r.spec.problems,
                    r.spec.samples,
                    row.truth,
                    100.0 * e,
                    (e - 0.95) / row.binomial_se,
                    row.replicates
                );
                e
            }
            None => 0.95,
        };
        let se = (target * (1.0 - target) / row.replicates as f64).sqrt();
        let z = (row.coverage - target) / se;
        // The paired score interval (B - A of maj@k and pass@k, k >= 2) is conservative by
        // construction where no exact value is computable (its variance never falls below the
        // observed one and keeps the skew of the most skewed reading): only too low is a failure.
        let one_sided =
            exact[m].is_none() && reported_method(m, r.spec.k) == IntervalMethod::PairedScore;
        assert!(
            z >= -Z && (one_sided || z <= Z),
            "{} at N = {}, n = {}: coverage {:.1}% of {} replicates, {z:.2} binomial SEs from {:.2}% (bound {Z})",
            row.metric,
            r.spec.problems,
            r.spec.samples,
            100.0 * row.coverage,
            row.replicates,
            100.0 * target
        );
    }
}

/// Brute force on the 0/1 cells: with k = n, pass@k and pass^k are N Bernoulli(theta) draws and
/// the exact coverage is sum over x of Binomial(x; N, theta) [theta in CI(x ones)], which
/// [`exact_coverage`]'s multinomial enumeration must reproduce.
#[test]
fn exact_coverage_of_binary_scores_is_the_binomial_sum() {
    use statrs::distribution::{Binomial, Discrete};
    for problems in [10, 15] {
        let s = spec(problems, 4, 0, 0);
        let exact = exact_coverage(&s);
        let truth = population_truth(&s);
        for m in [1, 2] {
            let theta = truth[m];
            let pmf = Binomial::new(theta, problems as u64).expect("valid binomial");
            let brute: f64 = (0..=problems)
                .filter(|&x| {
                    let mut v = vec![1.0; x];
                    v.extend(vec![0.0; problems - x]);
                    mean_interval(&v, (0.0, 1.0), IntervalMethod::Wilson)
                        .is_some_and(|i| i.low <= theta && theta <= i.high)
                })
                .map(|x| pmf.pmf(x as u64))
                .sum();
            let e = exact[m].expect("two values: computable");
            assert!(
                (e - brute).abs() < 1e-12,
                "{} N {problems}: {e} vs {brute}",
                METRICS[m]
            );
        }
        // Every metric is computable at k = n = 4, N <= 15.
        assert!(exact.iter().all(Option::is_some));
    }
}

#[test]
fn analyze_intervals_cover_95_percent_at_n_10_30_100() {
    let results: Vec<CoverageResult> = [(10, 4), (30, 8), (100, 8)]
        .iter()
        .map(|&(problems, samples)| interval_coverage(&spec(problems, samples, 400, 0), &[]))
        .collect();
    eprintln!("{}", table(&results));
    for r in &results {
        assert_reported_covers(r);
    }
}

#[test]
#[ignore = "full coverage table, about a minute: cargo test --release --test suite analyze_interval_coverage_full_table -- --ignored --nocapture"]
fn analyze_interval_coverage_full_table() {
    let replicates: usize = std::env::var("COVERAGE_REPLICATES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4000);
    let bootstrap: usize = std::env::var("COVERAGE_BOOTSTRAP")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let methods = [
        IntervalMethod::Wald,
        IntervalMethod::WaldT,
        IntervalMethod::Wilson,
        IntervalMethod::WilsonT,
        IntervalMethod::WilsonZ,
        IntervalMethod::KornGraubard,
        IntervalMethod::PairedScore,
    ];
    let results: Vec<CoverageResult> = [(10, 4), (15, 4), (30, 8), (100, 8)]
        .iter()
        .map(|&(problems, samples)| {
            interval_coverage(&spec(problems, samples, replicates, bootstrap), &methods)
        })
        .collect();
    println!("{}", table(&results));
    for r in &results {
        assert_reported_covers(r);
    }
}

/// The exact coverage of the reported interval at k = n = 4, N = 10 and 15, over a grid of
/// populations (mu from -2.5 to 2.5, sigma = 2.2, gap 0.21, attractor 0.5): it shows which
/// distances from 95% at the one population of the table are the oscillation of lumpy scores
/// (the mean over populations is near 95%) and which are systematic (docs/intervals.md).
///
///     cargo test --release --test suite analyze_interval_exact_coverage_over_populations -- --ignored --nocapture
#[test]
#[ignore = "exact coverage over 11 populations, about a minute: cargo test --release --test suite analyze_interval_exact_coverage_over_populations -- --ignored --nocapture"]
fn analyze_interval_exact_coverage_over_populations() {
    for problems in [10, 15] {
        println!("\nN x n = {problems} x 4: exact coverage (%) of the reported interval");
        println!("| mu | {} |", METRICS.join(" | "));
        let mut sums = [0.0; 7];
        let mut mins = [1.0f64; 7];
        let grid: Vec<f64> = (0..11).map(|i| -2.5 + 0.5 * f64::from(i)).collect();
        for &mu in &grid {
            let s = CoverageSpec {
                mu,
                ..spec(problems, 4, 0, 0)
            };
            let e = exact_coverage(&s);
            let mut line = format!("| {mu:.1} |");
            for m in 0..METRICS.len() {
                let c = e[m].expect("computable at k = n = 4");
                assert!((0.0..=1.0 + 1e-12).contains(&c));
                sums[m] += c;
                mins[m] = mins[m].min(c);
                line += &format!(" {:.2} |", 100.0 * c);
            }
            println!("{line}");
        }
        let k = grid.len() as f64;
        println!(
            "| mean | {} |",
            sums.iter()
                .map(|s| format!("{:.2}", 100.0 * s / k))
                .collect::<Vec<_>>()
                .join(" | ")
        );
        println!(
            "| min | {} |",
            mins.iter()
                .map(|s| format!("{:.2}", 100.0 * s))
                .collect::<Vec<_>>()
                .join(" | ")
        );
    }
}

/// The lattice programme over (sum, sum of squares) must give the same exact coverage as the
/// enumeration of every composition, for every metric at k = n = 4, N = 10 and 15, at a small and
/// a large gap.
#[test]
fn lattice_exact_coverage_equals_composition_enumeration() {
    for gap in [0.21, 1.0] {
        for problems in [10, 15] {
            let s = CoverageSpec {
                gap,
                ..spec(problems, 4, 0, 0)
            };
            let by_composition = exact_coverage(&s);
            let by_lattice = exact_coverage_lattice(&s, 4);
            for m in 0..METRICS.len() {
                let (c, l) = (by_composition[m].unwrap(), by_lattice[m].unwrap());
                assert!(
                    (c - l).abs() < 1e-12,
                    "{} gap {gap} N {problems}: {c} vs {l}",
                    METRICS[m]
                );
            }
        }
    }
}

/// The populations of the exact grid: mu from -2.5 to 2.5 in steps of 0.5.
fn mu_grid() -> Vec<f64> {
    (0..11).map(|i| -2.5 + 0.5 * f64::from(i)).collect()
}

/// (lowest, mean, highest) of one metric's exact coverage over the grid.
type Band = (f64, f64, f64);

/// Exact coverage (lattice programme) of every metric at k = n = 4 over the population grid, for
/// one gap and N: per metric (lowest, mean, highest) over the grid, and the per-population rows.
fn exact_grid(gap: f64, problems: usize) -> (Vec<[f64; 7]>, [Band; 7]) {
    use rayon::prelude::*;
    let rows: Vec<[f64; 7]> = mu_grid()
        .par_iter()
        .map(|&mu| {
            let s = CoverageSpec {
                mu,
                gap,
                ..spec(problems, 4, 0, 0)
            };
            exact_coverage_lattice(&s, 4).map(|c| c.expect("on the quarter lattice"))
        })
        .collect();
    let summary = std::array::from_fn(|m| {
        let col: Vec<f64> = rows.iter().map(|r| r[m]).collect();
        (
            col.iter().copied().fold(1.0, f64::min),
            col.iter().sum::<f64>() / col.len() as f64,
            col.iter().copied().fold(0.0, f64::max),
        )
    });
    (rows, summary)
}

/// The exact coverage of the reported interval at k = n = 4 over 11 populations, gaps 0.21 and
/// 1 logit, N = 10 to 100 (docs/intervals.md, "Exact coverage at every N"):
///
///     cargo test --release --test suite analyze_interval_exact_coverage_grid -- --ignored --nocapture
#[test]
#[ignore = "exact coverage over 11 populations x 2 gaps x 6 sizes, a few minutes: cargo test --release --test suite analyze_interval_exact_coverage_grid -- --ignored --nocapture"]
fn analyze_interval_exact_coverage_grid() {
    for gap in [0.21, 1.0] {
        for problems in [10, 15, 20, 30, 50, 100] {
            let (rows, summary) = exact_grid(gap, problems);
            println!("\ngap {gap}, N x n = {problems} x 4: exact coverage (%)");
            println!("| mu | {} |", METRICS.join(" | "));
            for (mu, row) in mu_grid().iter().zip(&rows) {
                let cells: Vec<String> = row.iter().map(|c| format!("{:.2}", 100.0 * c)).collect();
                println!("| {mu:.1} | {} |", cells.join(" | "));
            }
            for (label, pick) in [("lowest", 0), ("mean", 1), ("highest", 2)] {
                let cells: Vec<String> = summary
                    .iter()
                    .map(|s| format!("{:.2}", 100.0 * [s.0, s.1, s.2][pick]))
                    .collect();
                println!("| {label} | {} |", cells.join(" | "));
            }
        }
    }
}

/// The band the reported interval holds at N x n = 30 x 4, exactly, over the 11 populations of the
/// grid and both gaps (docs/intervals.md, "Exact coverage at every N"): pass@1, maj@4 and the
/// paired difference of pass@1 within 94% to 96%; pass@4 and pass^4 (0/1 scores, whose coverage
/// oscillates with the population as the binomial's does) within 92% to 98%; the paired
/// difference of maj@4 (Tango-type score interval) within 95% to 98% at gap 0.21 (measured 95.5%
/// to 97.4%) and 95% to 97.5% at gap 1 (measured 96.4% to 97.5%; the Wilson interval covers 91.7%
/// to 94.7% there); the paired difference of pass@4 (0/1 scores at k = n, the same
/// score interval) within 94% to 100% (measured 95.2% to 99.8% at gap 0.21 and 94.2% to 99.7% at
/// gap 1, the high values where nearly every problem is solved at k = 4 by both models).
#[test]
fn exact_coverage_band_at_n_30() {
    let mut failures = Vec::new();
    for gap in [0.21, 1.0] {
        let (rows, _) = exact_grid(gap, 30);
        for (mu, row) in mu_grid().iter().zip(&rows) {
            for (m, &c) in row.iter().enumerate() {
                let (lo, hi) = match (m, gap > 0.5) {
                    (1 | 2, _) => (0.92, 0.98),
                    // Conservative where both models solve nearly every problem at k = 4 (few
                    // problems differ), never below 94%.
                    (6, _) => (0.94, 1.0),
                    (5, false) => (0.95, 0.98),
                    (5, true) => (0.95, 0.975),
                    _ => (0.94, 0.96),
                };
                if !(lo..=hi).contains(&c) {
                    failures.push(format!(
                        "{} gap {gap} mu {mu}: {:.2}% outside [{}, {}]",
                        METRICS[m],
                        100.0 * c,
                        100.0 * lo,
                        100.0 * hi
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Brute force for the paired interval on 0/+-1 differences (b problems where only B is right,
/// c where only A is, the rest ties): it must be Tango's (1998) score interval, i.e. at each end
/// Delta the squared score statistic (mean - Delta)^2 N / V(Delta) equals 1.96^2, with V(Delta) =
/// p10 + p01 - Delta^2 at the restricted maximum-likelihood (p10, p01) under p10 - p01 = Delta,
/// here found by a direct search over p01 instead of Tango's closed form.
#[test]
fn paired_score_on_binary_differences_is_tangos_interval() {
    let z = 1.959_963_984_540_054_f64;
    for &(n, b, c) in &[
        (10usize, 3usize, 0usize),
        (10, 1, 0),
        (15, 4, 2),
        (30, 9, 1),
        (20, 2, 2),
    ] {
        let mut d = vec![1.0; b];
        d.extend(vec![-1.0; c]);
        d.extend(vec![0.0; n - b - c]);
        let ci = mean_interval(&d, (-1.0, 1.0), IntervalMethod::PairedScore).expect("N >= 2");
        let nf = n as f64;
        let mean = (b as f64 - c as f64) / nf;
        for delta in [ci.low, ci.high] {
            if delta.abs() >= 1.0 - 1e-12 {
                continue;
            }
            // Restricted MLE of p01 on a fine grid refined twice around the best point.
            let loglik = |p01: f64| {
                let p10 = p01 + delta;
                let p00 = 1.0 - p10 - p01;
                if p10 <= 0.0 || p01 <= 0.0 || p00 <= 0.0 {
                    return f64::NEG_INFINITY;
                }
                b as f64 * p10.ln() + c as f64 * p01.ln() + (nf - (b + c) as f64) * p00.ln()
            };
            let (mut lo, mut hi) = ((-delta).max(0.0), (1.0 - delta) / 2.0);
            let mut best = lo;
            for _ in 0..6 {
                let step = (hi - lo) / 2000.0;
                best = (0..=2000)
                    .map(|i| lo + step * f64::from(i))
                    .max_by(|x, y| loglik(*x).total_cmp(&loglik(*y)))
                    .expect("grid");
                (lo, hi) = ((best - step).max(0.0), best + step);
            }
            let v = 2.0 * best + delta - delta * delta;
            let score2 = (mean - delta).powi(2) * nf / v;
            assert!(
                (score2 - z * z).abs() < 1e-6 * z * z,
                "N {n}, b {b}, c {c}: end {delta}: score^2 {score2} vs {}",
                z * z
            );
        }
        assert!(ci.low < mean && mean < ci.high);
    }
}

/// Issue 19: the paired difference of maj@4 was liberal at gap 1 logit, 89.4% exact coverage at
/// N = 10, mu = -2.5 with the Wilson interval. The Tango-type score interval covers 93.9% there.
#[test]
fn paired_maj_difference_at_gap_1_is_not_liberal() {
    let s = CoverageSpec {
        mu: -2.5,
        gap: 1.0,
        ..spec(10, 4, 0, 0)
    };
    let now = exact_coverage_lattice(&s, 4)[5].expect("on the quarter lattice");
    let before = exact_coverage_lattice_with(&s, 4, |_| IntervalMethod::Wilson)[5]
        .expect("on the quarter lattice");
    assert!(before < 0.90, "Wilson {before}");
    assert!((0.935..0.95).contains(&now), "paired score {now}");
}

/// Coverage of the paired differences where k < n (k = 4 of n = 5 and of n = 8) and at a large
/// gap (1 logit), reported interval beside the Wilson and the Tango-type score interval on the
/// same data sets (docs/intervals.md, "The paired difference of pass@k"):
///
///     cargo test --release --test suite analyze_paired_difference_coverage_below_k_equals_n -- --ignored --nocapture
///
/// It holds the lowest cell documented there: the reported B - A pass@4 interval covers at least
/// 89% in every cell (measured lowest 90.3% at N x n = 10 x 8, gap 1; 2,000 data sets per cell,
/// binomial SE 0.49 points at 95%).
#[test]
#[ignore = "paired-difference coverage below k = n, about 20 s: cargo test --release --test suite analyze_paired_difference_coverage_below_k_equals_n -- --ignored --nocapture"]
fn analyze_paired_difference_coverage_below_k_equals_n() {
    let cells = [
        (0.21, 10, 5),
        (0.21, 30, 5),
        (0.21, 100, 5),
        (1.0, 10, 8),
        (1.0, 30, 8),
        (1.0, 100, 8),
        (1.0, 30, 5),
        (1.0, 100, 5),
    ];
    println!("| gap | N x n | metric | reported | Wilson | Tango-type score |");
    println!("|---:|---|---|---:|---:|---:|");
    let mut lowest = 1.0f64;
    for (gap, problems, samples) in cells {
        let s = CoverageSpec {
            gap,
            ..spec(problems, samples, 2000, 0)
        };
        let r = interval_coverage(&s, &[IntervalMethod::Wilson, IntervalMethod::PairedScore]);
        for metric in ["diff pass@1", "diff maj@k", "diff pass@k"] {
            let cell = |method: &str| {
                r.rows
                    .iter()
                    .find(|row| row.metric == metric && row.method == method)
                    .expect("scored")
            };
            let reported = cell("reported");
            if metric == "diff pass@k" {
                lowest = lowest.min(reported.coverage);
            }
            println!(
                "| {gap} | {problems} x {samples} | {metric} | {:.1} (.{:03.0}) | {:.1} (.{:03.0}) | {:.1} (.{:03.0}) |",
                100.0 * reported.coverage,
                1000.0 * reported.mean_width,
                100.0 * cell("wilson").coverage,
                1000.0 * cell("wilson").mean_width,
                100.0 * cell("pairedscore").coverage,
                1000.0 * cell("pairedscore").mean_width,
            );
        }
    }
    assert!(lowest >= 0.89, "B - A pass@4 covers {:.1}%", 100.0 * lowest);
}

/// The paired score interval under-covered B - A of pass@4 and of maj@4 at N x n = 100 x 8, gap
/// 0.21 logits (93.9% and 91.9% of 4,000 data sets): per-problem differences inside (-1, 1) read
/// as the most skewed three-point law have a restricted variance far below the observed one on
/// the side towards zero. With the variance held at least at the observed one both cover at least
/// 95% - 2.5 binomial SEs of 4,000 data sets (0.34 points: 94.14%; measured 96.0% and 96.0%).
#[test]
fn paired_score_interval_under_covered_pass_at_k_differences_at_100_problems() {
    let replicates = 4000;
    let r = interval_coverage(&spec(100, 8, replicates, 0), &[]);
    let se = (0.95f64 * 0.05 / replicates as f64).sqrt();
    for metric in ["diff pass@k", "diff maj@k"] {
        let row = r
            .rows
            .iter()
            .find(|row| row.metric == metric && row.method == "reported")
            .expect("scored");
        assert!(
            row.coverage >= 0.95 - 2.5 * se,
            "{metric} at 100 x 8: coverage {:.2}% of {replicates} data sets, below {:.2}%",
            100.0 * row.coverage,
            100.0 * (0.95 - 2.5 * se)
        );
    }
}
