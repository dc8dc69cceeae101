//! Simulated reasoning traces under token budgets.
//!
//! One trace of problem i: a uniform decides whether it is correct (u < p_i), then its length is
//! lognormal, L = median * e^(sigma Z) with Z ~ N(0, 1) from the ziggurat (one u64 almost always)
//! and the median of a correct or a wrong trace. Every budget is evaluated on the same traces:
//! L <= B iff Z <= ln(B / median) / sigma, so a trace needs one comparison search over the sorted
//! budgets and one `exp` (only when some budget keeps it). This route draws lengths and compares
//! them, independently of the closed forms in [`crate::exact::budget`], so the two check each
//! other.
use rand::RngCore;
use rand_distr::{Distribution, StandardNormal};

use super::{batches, run_ordered_fold, stream::stream};

/// One problem of a trace cell.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TraceProblem {
    /// Probability that a trace ends in the right answer (before any cap).
    pub p: f64,
    /// Median length of a correct trace, tokens.
    pub correct_median: f64,
    /// Median length of a wrong trace, tokens.
    pub wrong_median: f64,
}

/// One cell (a model): its problems and the log-SD of its trace lengths.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceCell {
    /// The problems.
    pub problems: Vec<TraceProblem>,
    /// Log-SD of the lognormal lengths (> 0).
    pub sigma: f64,
}

/// Bins of equal width on log10(tokens) for a histogram of simulated lengths.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogBins {
    /// log10 of the lower edge of the first bin.
    pub lo_log10: f64,
    /// Width of every bin in log10 units.
    pub width_log10: f64,
    /// Number of bins; lengths outside them are not counted.
    pub bins: usize,
}

/// Totals over the traces of one problem, per budget (same order as the budgets given).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProblemTraces {
    /// Traces drawn.
    pub traces: u64,
    /// Traces that are correct and within the budget (right answers under the cap).
    pub correct_kept: Vec<u64>,
    /// Traces longer than the budget (cut off with no answer).
    pub cut: Vec<u64>,
    /// Sum of min(L, B) over all traces, tokens.
    pub tokens: Vec<f64>,
    /// Sum of min(L, B)^2 over all traces.
    pub tokens_sq: Vec<f64>,
    /// Sum of min(L, B) over the correct traces within the budget (for the covariance of tokens
    /// and correctness).
    pub tokens_correct: Vec<f64>,
}

/// What the traces of one cell produced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CellTraces {
    /// Per problem, in order.
    pub problems: Vec<ProblemTraces>,
    /// Histogram of the lengths of correct traces over all problems (when bins were asked for).
    pub hist_correct: Vec<u64>,
    /// Histogram of the lengths of wrong traces over all problems.
    pub hist_wrong: Vec<u64>,
}

struct Batch {
    totals: ProblemTraces,
    hist_correct: Vec<u64>,
    hist_wrong: Vec<u64>,
}

/// Simulates `traces` traces per problem in every cell and evaluates each against every budget
/// in `budgets` (strictly increasing, > 0; `f64::INFINITY` allowed for "no cap"). The batch of
/// problem i in cell c uses the stream (seed, key..., c, i, batch), so the result is identical
/// for any thread count. `progress` is called with traces done.
///
/// Time: O(traces * problems * (log J + 1)) per cell plus O(J) per batch, for J budgets.
pub fn simulate(
    seed: u64,
    key: &[u64],
    cells: &[TraceCell],
    budgets: &[f64],
    traces: u64,
    bins: Option<LogBins>,
    progress: &(dyn Fn(u64) + Sync),
) -> Vec<CellTraces> {
    let mut tasks = Vec::new();
    for (ci, cell) in cells.iter().enumerate() {
        for i in 0..cell.problems.len() {
            for (b, n) in batches(traces) {
                tasks.push((ci, i, b, n));
            }
        }
    }
    let nbins = bins.map_or(0, |b| b.bins);
    let mut result: Vec<CellTraces> = cells
        .iter()
        .map(|c| CellTraces {
            problems: vec![ProblemTraces::zeros(budgets.len()); c.problems.len()],
            hist_correct: vec![0; nbins],
            hist_wrong: vec![0; nbins],
        })
        .collect();
    let work = |&(ci, i, b, n): &(usize, usize, u64, u64)| {
        let mut path = key.to_vec();
        path.extend([ci as u64, i as u64, b]);
        let mut rng = stream(seed, &path);
        let cell = &cells[ci];
        let out = batch(&cell.problems[i], cell.sigma, budgets, n, bins, &mut rng);
        progress(n);
        out
    };
    run_ordered_fold(&tasks, work, |&(ci, i, _, _), b| {
        let cell = &mut result[ci];
        cell.problems[i].add(&b.totals);
        add_counts(&mut cell.hist_correct, &b.hist_correct);
        add_counts(&mut cell.hist_wrong, &b.hist_wrong);
    });
    result
}

fn add_counts(into: &mut [u64], from: &[u64]) {
    into.iter_mut().zip(from).for_each(|(a, b)| *a += b);
}

impl ProblemTraces {
    fn zeros(budgets: usize) -> ProblemTraces {
        ProblemTraces {
            traces: 0,
            correct_kept: vec![0; budgets],
            cut: vec![0; budgets],
            tokens: vec![0.0; budgets],
            tokens_sq: vec![0.0; budgets],
            tokens_correct: vec![0.0; budgets],
        }
    }

    fn add(&mut self, o: &ProblemTraces) {
        self.traces += o.traces;
        add_counts(&mut self.correct_kept, &o.correct_kept);
        add_counts(&mut self.cut, &o.cut);
        for (a, b) in [
            (&mut self.tokens, &o.tokens),
            (&mut self.tokens_sq, &o.tokens_sq),
            (&mut self.tokens_correct, &o.tokens_correct),
        ] {
            a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
        }
    }
}

/// 2^53 as f64.
const TWO_53: f64 = 9_007_199_254_740_992.0;

/// z-thresholds ln(B_j / median) / sigma, increasing in j (infinite for B = infinity).
fn thresholds(median: f64, sigma: f64, budgets: &[f64]) -> Vec<f64> {
    budgets.iter().map(|&b| (b / median).ln() / sigma).collect()
}

fn batch<R: RngCore>(
    problem: &TraceProblem,
    sigma: f64,
    budgets: &[f64],
    n: u64,
    bins: Option<LogBins>,
    rng: &mut R,
) -> Batch {
    let nb = budgets.len();
    let stride = nb + 1;
    // Class 0 = wrong, 1 = correct; everything per class sits at offset class * stride, so the
    // loop picks its row by index instead of branching on the (unpredictable) class.
    let medians = [problem.wrong_median, problem.correct_median];
    let mut thr = thresholds(problem.wrong_median, sigma, budgets);
    thr.extend(thresholds(problem.correct_median, sigma, budgets));
    // Accumulators indexed by class * stride + (the first budget that keeps the trace; nb when
    // every budget cuts it).
    let mut count = vec![0u64; 2 * stride];
    let mut sum = vec![0.0f64; 2 * stride];
    let mut sum_sq = vec![0.0f64; 2 * stride];
    // Histogram rows with an underflow and an overflow slot at each end.
    let nbins = bins.map_or(0, |b| b.bins);
    let hstride = nbins + 2;
    let mut hist = vec![0u64; 2 * hstride];
    let (lo, width) = bins.map_or((0.0, 1.0), |b| (b.lo_log10, b.width_log10));
    // Bin position of each class's median, and sigma in bins per unit of Z.
    let hist_origin = [
        (problem.wrong_median.log10() - lo) / width,
        (problem.correct_median.log10() - lo) / width,
    ];
    let hist_slope = sigma * std::f64::consts::LOG10_E / width;
    let top = nbins as f64 + 1.0;
    // A trace is correct when the top 53 bits of a word, as an integer, are below p 2^53: the
    // same event as u < p for the 53-bit uniform u, with no conversion to f64.
    let correct_below = (problem.p * TWO_53).ceil() as u64;
    for _ in 0..n {
        let class = usize::from((rng.next_u64() >> 11) < correct_below);
        let z: f64 = StandardNormal.sample(rng);
        let row = &thr[class * nb..class * nb + nb];
        // Thresholds increase, so the number below z is the first budget that keeps the trace
        // (a branch-free binary search).
        let first = row.partition_point(|&t| t < z);
        let slot = class * stride + first;
        count[slot] += 1;
        let len = medians[class] * (sigma * z).exp();
        sum[slot] += len;
        sum_sq[slot] += len * len;
        if nbins > 0 {
            let x = (hist_origin[class] + hist_slope * z + 1.0).clamp(0.0, top);
            hist[class * hstride + x as usize] += 1;
        }
    }
    // Prefix sums over "first budget that keeps the trace" give every budget's totals.
    let mut totals = ProblemTraces::zeros(nb);
    totals.traces = n;
    let (mut kept_all, mut kept_correct) = (0u64, 0u64);
    let (mut kept_sum, mut kept_sum_sq, mut sum_correct) = (0.0, 0.0, 0.0);
    for (j, &budget) in budgets.iter().enumerate() {
        let (w, c) = (j, stride + j);
        kept_correct += count[c];
        kept_all += count[c] + count[w];
        kept_sum += sum[c] + sum[w];
        kept_sum_sq += sum_sq[c] + sum_sq[w];
        sum_correct += sum[c];
        let cut = n - kept_all;
        totals.correct_kept[j] = kept_correct;
        totals.cut[j] = cut;
        let capped = if cut == 0 { 0.0 } else { cut as f64 * budget };
        totals.tokens[j] = kept_sum + capped;
        totals.tokens_sq[j] = kept_sum_sq + if cut == 0 { 0.0 } else { capped * budget };
        totals.tokens_correct[j] = sum_correct;
    }
    let inner = |class: usize| hist[class * hstride + 1..class * hstride + 1 + nbins].to_vec();
    Batch {
        totals,
        hist_correct: inner(1),
        hist_wrong: inner(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::budget::{expected_min, lognormal_cdf};

    const Z: f64 = 4.5;

    fn one(p: f64) -> TraceCell {
        TraceCell {
            problems: vec![TraceProblem {
                p,
                correct_median: 4000.0,
                wrong_median: 6000.0,
            }],
            sigma: 0.55,
        }
    }

    #[test]
    fn kept_and_cut_shares_match_the_lognormal_cdf() {
        let budgets = [1000.0, 4000.0, 9000.0, f64::INFINITY];
        let n = 200_000u64;
        let out = simulate(5, &[1], &[one(0.6)], &budgets, n, None, &|_| {});
        let pt = &out[0].problems[0];
        assert_eq!(pt.traces, n);
        for (j, &b) in budgets.iter().enumerate() {
            let (fc, fw) = (
                lognormal_cdf(b, 4000.0, 0.55),
                lognormal_cdf(b, 6000.0, 0.55),
            );
            let acc = 0.6 * fc;
            let cut = 1.0 - 0.6 * fc - 0.4 * fw;
            for (exact, count) in [(acc, pt.correct_kept[j]), (cut, pt.cut[j])] {
                let sim = count as f64 / n as f64;
                let se = (exact * (1.0 - exact) / n as f64).sqrt();
                if se == 0.0 {
                    assert_eq!(sim, exact);
                } else {
                    assert!(((sim - exact) / se).abs() < Z, "B={b}: {sim} vs {exact}");
                }
            }
            let exact_tokens =
                0.6 * expected_min(4000.0, 0.55, b) + 0.4 * expected_min(6000.0, 0.55, b);
            let mean = pt.tokens[j] / n as f64;
            let var = (pt.tokens_sq[j] / n as f64 - mean * mean) * n as f64 / (n - 1) as f64;
            let se = (var / n as f64).sqrt();
            assert!(((mean - exact_tokens) / se).abs() < Z, "B={b}");
        }
    }

    #[test]
    fn identical_for_any_batching_of_threads() {
        let budgets = [2000.0, 8000.0];
        let cells = [one(0.3), one(0.9)];
        let a = simulate(9, &[2], &cells, &budgets, 10_000, None, &|_| {});
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .expect("pool");
        let b = pool.install(|| simulate(9, &[2], &cells, &budgets, 10_000, None, &|_| {}));
        assert_eq!(a, b);
    }

    #[test]
    fn histogram_counts_every_trace_in_range() {
        let bins = LogBins {
            lo_log10: 1.0,
            width_log10: 0.5,
            bins: 12,
        };
        let out = simulate(3, &[3], &[one(0.5)], &[1e9], 5_000, Some(bins), &|_| {});
        let total: u64 =
            out[0].hist_correct.iter().sum::<u64>() + out[0].hist_wrong.iter().sum::<u64>();
        assert_eq!(total, 5_000);
        assert_eq!(
            out[0].hist_correct.iter().sum::<u64>(),
            out[0].problems[0].correct_kept[0]
        );
    }
}
