//! Coverage of `analyze`'s 95% intervals on data drawn from the workbench's own model
//! (logit-normal population mu = 0.2, sigma = 2.2, attractor 0.5; model B shifted by +0.21
//! logits on the same problems), the truth computed exactly by quadrature.
//!
//! The fast test runs in the normal suite. The full table (more replicates, every candidate
//! construction and the percentile bootstrap, as in docs/intervals.md) is an ignored test:
//!
//!     cargo test --release --test suite analyze_interval_coverage_full_table -- --ignored --nocapture
use evalsim::analyze::coverage::{interval_coverage, CoverageResult, CoverageSpec, METRICS};
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

/// Two-sided |z| bound of each coverage check: 18 checks (6 intervals at 3 sizes) in the fast
/// test, so under exact 95% coverage the whole test fails spuriously with probability about
/// 18 * 4.7e-4 = 0.8%.
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

/// With k = n, pass@k and pass^k of a problem are 0 or 1, so a data set's scores are N
/// Bernoulli(theta) draws and the interval's coverage at theta is exact:
/// sum over x of Binomial(x; N, theta) [theta in the interval of x ones and N - x zeros].
/// It oscillates with theta and N (Brown, Cai and DasGupta 2001): no interval for 0/1 data is
/// 95% at every theta, so for these cells the simulated coverage is checked against this exact
/// value, and the exact value is printed.
fn exact_binary_coverage(problems: usize, theta: f64) -> f64 {
    use statrs::distribution::{Binomial, Discrete};
    let pmf = Binomial::new(theta, problems as u64).expect("valid binomial");
    (0..=problems)
        .filter(|&x| {
            let mut v = vec![1.0; x];
            v.extend(vec![0.0; problems - x]);
            mean_interval(&v, (0.0, 1.0), IntervalMethod::Wilson)
                .is_some_and(|i| i.low <= theta && theta <= i.high)
        })
        .map(|x| pmf.pmf(x as u64))
        .sum()
}

/// Every reported interval within `Z` binomial SEs of 95%, except the 0/1-score cells (pass@k
/// and pass^k at k = n) at N < 15, which are held to their exact coverage (see
/// [`exact_binary_coverage`]).
fn assert_reported_covers(r: &CoverageResult) {
    for row in r.rows.iter().filter(|row| row.method == "reported") {
        let binary =
            r.spec.k == r.spec.samples && (row.metric == "pass@k" || row.metric == "pass^k");
        let target = if binary && r.spec.problems < 15 {
            let exact = exact_binary_coverage(r.spec.problems, row.truth);
            eprintln!(
                "{} at N = {}: exact coverage of 0/1 scores at theta = {:.4}: {:.2}%",
                row.metric,
                r.spec.problems,
                row.truth,
                100.0 * exact
            );
            exact
        } else {
            0.95
        };
        let se = (target * (1.0 - target) / row.replicates as f64).sqrt();
        let z = (row.coverage - target) / se;
        assert!(
            z.abs() <= Z,
            "{} at N = {}, n = {}: coverage {:.1}% of {} replicates, {z:.2} binomial SEs from {:.1}% (bound {Z})",
            row.metric,
            r.spec.problems,
            r.spec.samples,
            100.0 * row.coverage,
            row.replicates,
            100.0 * target
        );
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
