//! Simulated reasoning traces under token budgets.
//!
//! One trace of problem i: a uniform decides whether it is correct (u < p_i), then its length is
//! lognormal, L = median * e^(sigma Z) with Z ~ N(0, 1) from the ziggurat (one u64 almost always)
//! and the median of a correct or a wrong trace. Every budget is evaluated on the same traces:
//! L <= B iff Z <= ln(B / median) / sigma, so a trace needs one O(1) lookup of how many budgets
//! cut it (`BudgetIndex`) and one e^x (a table and a polynomial, `Exp`). This route draws
//! lengths and compares them, independently of the closed forms in [`crate::exact::budget`], so
//! the two check each other.
//!
//! Why here: the simulated side of `budget` and `cost`. Depends on `exact` (the grading type, and closed forms in tests) and
//! the rest of `sim`.
use std::sync::LazyLock;

use rand::RngCore;
use rand_distr::{Distribution, StandardNormal};

use super::stream::{stream, TWO_53};
use super::{batches, run_ordered_fold};
use crate::exact::grader::SampleGrading;

/// One problem of a trace cell.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TraceProblem {
    /// Probability that a trace ends in the right answer (before any cap).
    pub p: f64,
    /// Median length of a correct trace, tokens.
    pub correct_median: f64,
    /// Median length of a wrong trace, tokens.
    pub wrong_median: f64,
    /// How a kept trace's answer is parsed and graded (the identity draws nothing more).
    pub grading: SampleGrading,
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
    /// Traces within the budget whose answer is parsed and graded correct (equal to
    /// `correct_kept` when every answer is parsed and graded perfectly).
    pub graded_kept: Vec<u64>,
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
            graded_kept: vec![0; budgets],
            cut: vec![0; budgets],
            tokens: vec![0.0; budgets],
            tokens_sq: vec![0.0; budgets],
            tokens_correct: vec![0.0; budgets],
        }
    }

    fn add(&mut self, o: &ProblemTraces) {
        self.traces += o.traces;
        add_counts(&mut self.correct_kept, &o.correct_kept);
        add_counts(&mut self.graded_kept, &o.graded_kept);
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

/// e^x without a call into libm, for the trace lengths (a quarter of a trace's cost went to
/// `f64::exp`). Writes x = (64 k + j) ln 2 / 64 + r with |r| <= ln 2 / 128, so that
/// e^x = 2^k 2^(j/64) e^r: 2^(j/64) comes from a table, e^r from its Taylor polynomial of degree
/// 5 (truncation error below r^6 / 720 < 4e-17), and 2^k is added to the exponent bits. The result
/// is within a few ulp of `f64::exp` (tested); |x| >= 700, infinities and NaN go to `f64::exp`.
struct Exp {
    /// 2^(j/64) for j = 0..64.
    table: [f64; 64],
}

static EXP: LazyLock<Exp> = LazyLock::new(Exp::new);

impl Exp {
    fn new() -> Exp {
        Exp {
            table: std::array::from_fn(|j| (j as f64 / 64.0).exp2()),
        }
    }

    #[inline(always)]
    fn eval(&self, x: f64) -> f64 {
        // 1.5 * 2^52: adding it rounds to an integer held in the low bits of the mantissa.
        const SHIFT: f64 = 6_755_399_441_055_744.0;
        // ln 2 / 64 split in two (Cody and Waite), the first with 21 trailing zero bits so that
        // n * HI is exact for |n| < 2^21.
        const HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000) / 64.0;
        const LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76) / 64.0;
        if x.is_nan() || x.abs() >= 700.0 {
            return x.exp();
        }
        let t = x * (64.0 / std::f64::consts::LN_2) + SHIFT;
        let n = t.to_bits() as u32 as i32;
        let nf = t - SHIFT;
        let r = (x - nf * HI) - nf * LO;
        // Estrin's scheme: a shorter chain of dependent operations than Horner's.
        let r2 = r * r;
        let poly =
            (1.0 + r) + r2 * ((0.5 + r * (1.0 / 6.0)) + r2 * (1.0 / 24.0 + r * (1.0 / 120.0)));
        let scale_bits = self.table[(n & 63) as usize].to_bits() as i64 + (i64::from(n >> 6) << 52);
        f64::from_bits(scale_bits as u64) * poly
    }
}

/// z-thresholds ln(B_j / median) / sigma, increasing in j (infinite for B = infinity).
fn thresholds(median: f64, sigma: f64, budgets: &[f64]) -> Vec<f64> {
    budgets.iter().map(|&b| (b / median).ln() / sigma).collect()
}

/// Counts the thresholds below z in O(1): the number of budgets that cut a trace with log-length
/// z, for thresholds sorted ascending. A grid of equal cells over the finite thresholds, fine
/// enough that a cell holds at most one of them, maps z to its cell by one multiplication; every
/// threshold in an earlier cell is below z and every one in a later cell is not, because the map
/// from z to its cell is monotone (so this holds exactly, whatever the rounding), and the one
/// threshold in z's own cell is compared. Cells that still hold more than one (thresholds
/// closer than 1/4096 of their span) are counted one by one.
#[derive(Debug, Clone)]
struct BudgetIndex {
    /// The thresholds, ascending.
    thresholds: Vec<f64>,
    lo: f64,
    inv_width: f64,
    /// The index of the last cell.
    last: i64,
    cells: Vec<GridCell>,
}

#[derive(Debug, Clone, Copy)]
struct GridCell {
    /// The first threshold in the cell (+infinity when the cell has none).
    first: f64,
    /// Number of thresholds in earlier cells.
    before: u32,
    /// True when the cell holds more than one threshold.
    crowded: bool,
}

/// Traces drawn ahead of their evaluation in [`batch`].
const DRAW_BLOCK: usize = 256;

/// Most cells in a [`BudgetIndex`].
const INDEX_MAX_CELLS: usize = 4096;

impl BudgetIndex {
    fn new(thresholds: &[f64]) -> BudgetIndex {
        // The grid spans the finite thresholds; infinite ones fall in the end cells (the map to
        // cells is monotone over all of f64), which the crowded-cell count handles.
        let finite: Vec<f64> = thresholds
            .iter()
            .copied()
            .filter(|t| t.is_finite())
            .collect();
        let (lo, hi) = match (finite.first(), finite.last()) {
            (Some(&lo), Some(&hi)) => (lo, hi),
            _ => (0.0, 0.0),
        };
        let span = hi - lo;
        let min_gap = finite
            .windows(2)
            .map(|w| w[1] - w[0])
            .filter(|&g| g > 0.0)
            .fold(f64::INFINITY, f64::min);
        // Cells at most half the smallest gap wide, so each holds at most one threshold.
        let cells = if span > 0.0 {
            ((2.0 * span / min_gap).ceil().min(INDEX_MAX_CELLS as f64) as usize + 2)
                .clamp(2, INDEX_MAX_CELLS)
        } else {
            1
        };
        let inv_width = if span > 0.0 {
            (cells - 1) as f64 / span
        } else {
            0.0
        };
        let mut index = BudgetIndex {
            thresholds: thresholds.to_vec(),
            lo,
            inv_width,
            last: cells as i64 - 1,
            cells: vec![
                GridCell {
                    first: f64::INFINITY,
                    before: 0,
                    crowded: false,
                };
                cells
            ],
        };
        let mut in_cell = vec![0u32; cells];
        for &t in thresholds {
            let c = index.cell(t);
            if in_cell[c] == 0 {
                index.cells[c].first = t;
            }
            in_cell[c] += 1;
        }
        let mut before = 0;
        for (cell, &n) in index.cells.iter_mut().zip(&in_cell) {
            cell.before = before;
            cell.crowded = n > 1;
            before += n;
        }
        index
    }

    /// The cell of z: monotone non-decreasing in z.
    #[inline(always)]
    fn cell(&self, z: f64) -> usize {
        // The cast saturates, so the map stays monotone over all of f64 (a signed cast is a
        // single instruction on x86-64, an unsigned one is not).
        (((z - self.lo) * self.inv_width) as i64).clamp(0, self.last) as usize
    }

    /// The number of thresholds below z (t < z).
    #[inline(always)]
    fn count_below(&self, z: f64) -> usize {
        let cell = self.cells[self.cell(z)];
        let mut k = cell.before as usize + usize::from(cell.first < z);
        if cell.crowded {
            while k < self.thresholds.len() && self.thresholds[k] < z {
                k += 1;
            }
        }
        k
    }
}

/// Whether one trace's answer, if the cap keeps it, is parsed (share 1 - u) and then graded
/// correct (a true answer with 1 - fnr, a wrong one with fpr). Cost: one u64 per stage used.
fn graded_correct<R: RngCore>(grading: &SampleGrading, correct: bool, rng: &mut R) -> bool {
    let unit = |rng: &mut R| (rng.next_u64() >> 11) as f64 / TWO_53;
    if grading.unparsed > 0.0 && unit(rng) < grading.unparsed {
        return false;
    }
    match grading.grader {
        None => correct,
        Some(g) if correct => unit(rng) >= g.fnr,
        Some(g) => unit(rng) < g.fpr,
    }
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
    let index = [
        BudgetIndex::new(&thresholds(problem.wrong_median, sigma, budgets)),
        BudgetIndex::new(&thresholds(problem.correct_median, sigma, budgets)),
    ];
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
    let exp: &Exp = &EXP;
    // Draws come first, a block at a time, and the lengths and sums after: the second loop's
    // traces do not wait on the generator, so the processor overlaps several of them.
    let mut classes = [0usize; DRAW_BLOCK];
    let mut zs = [0.0f64; DRAW_BLOCK];
    // With extraction failures or a noisy grader, each trace also draws whether its answer (if
    // the cap keeps it) is parsed and graded correct; the canonical model draws nothing more.
    let staged = !problem.grading.is_identity();
    let mut flags = [false; DRAW_BLOCK];
    let mut graded = vec![0u64; 2 * stride];
    let mut left = n as usize;
    while left > 0 {
        let m = left.min(DRAW_BLOCK);
        left -= m;
        for (class, z) in classes[..m].iter_mut().zip(&mut zs[..m]) {
            *class = usize::from((rng.next_u64() >> 11) < correct_below);
            *z = StandardNormal.sample(rng);
        }
        if staged {
            for (flag, &class) in flags[..m].iter_mut().zip(&classes[..m]) {
                *flag = graded_correct(&problem.grading, class == 1, rng);
            }
        }
        for (i, (&class, &z)) in classes[..m].iter().zip(&zs[..m]).enumerate() {
            // Thresholds increase with the budget, so the number below z is the first budget
            // that keeps the trace.
            let slot = class * stride + index[class].count_below(z);
            count[slot] += 1;
            if staged {
                graded[slot] += u64::from(flags[i]);
            }
            let len = medians[class] * exp.eval(sigma * z);
            sum[slot] += len;
            sum_sq[slot] += len * len;
            if nbins > 0 {
                let x = (hist_origin[class] + hist_slope * z + 1.0).clamp(0.0, top);
                hist[class * hstride + x as usize] += 1;
            }
        }
    }
    // Prefix sums over "first budget that keeps the trace" give every budget's totals.
    let mut totals = ProblemTraces::zeros(nb);
    totals.traces = n;
    if !staged {
        graded[stride..].copy_from_slice(&count[stride..]);
    }
    let (mut kept_all, mut kept_correct, mut kept_graded) = (0u64, 0u64, 0u64);
    let (mut kept_sum, mut kept_sum_sq, mut sum_correct) = (0.0, 0.0, 0.0);
    for (j, &budget) in budgets.iter().enumerate() {
        let (w, c) = (j, stride + j);
        kept_correct += count[c];
        kept_graded += graded[c] + graded[w];
        kept_all += count[c] + count[w];
        kept_sum += sum[c] + sum[w];
        kept_sum_sq += sum_sq[c] + sum_sq[w];
        sum_correct += sum[c];
        let cut = n - kept_all;
        totals.correct_kept[j] = kept_correct;
        totals.graded_kept[j] = kept_graded;
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
    use crate::sim::stream::stream;

    const Z: f64 = 4.5;

    fn one(p: f64) -> TraceCell {
        TraceCell {
            problems: vec![TraceProblem {
                p,
                correct_median: 4000.0,
                wrong_median: 6000.0,
                grading: SampleGrading::default(),
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
    fn budget_index_counts_like_a_search_at_and_around_every_threshold() {
        let sets: [&[f64]; 10] = [
            &[],
            &[0.3],
            &[f64::NEG_INFINITY, 0.0, 1.0],
            &[f64::NEG_INFINITY, f64::NEG_INFINITY, 2.0, f64::INFINITY],
            &[0.0, 1e-300, 1.0],
            &[-2.0, -1.0, 0.5, 0.51, 3.0, f64::INFINITY],
            &[1.0, 1.0 + 1e-15, 1.0 + 2e-15, 7.0],
            &[-5.0, -5.0, -5.0],
            &[f64::INFINITY, f64::INFINITY],
            &[0.0, 1e-9, 1e-6, 1e-3, 1.0, 1e3],
        ];
        let mut probes = vec![f64::NEG_INFINITY, f64::INFINITY, -1e300, 1e300, 0.0, -0.0];
        probes.extend((-800..=800).map(|i| f64::from(i) / 100.0));
        for set in sets {
            let index = BudgetIndex::new(set);
            let mut at = probes.clone();
            for &t in set.iter().filter(|t| t.is_finite()) {
                at.extend([t, t.next_up(), t.next_down(), t + 1e-12, t - 1e-12]);
            }
            for z in at {
                let want = set.partition_point(|&t| t < z);
                assert_eq!(index.count_below(z), want, "{set:?} at {z}");
            }
        }
        // Random sorted sets, with a grid as fine as it gets.
        let mut rng = stream(11, &[4]);
        for _ in 0..200 {
            let len = 1 + (rng.next_u64() % 40) as usize;
            let mut set: Vec<f64> = (0..len)
                .map(|_| (rng.next_u64() >> 11) as f64 / TWO_53 * 20.0 - 10.0)
                .collect();
            set.sort_by(f64::total_cmp);
            let index = BudgetIndex::new(&set);
            for _ in 0..500 {
                let z: f64 = StandardNormal.sample(&mut rng);
                let z = 4.0 * z;
                assert_eq!(index.count_below(z), set.partition_point(|&t| t < z));
            }
        }
    }

    #[test]
    fn fast_exp_is_within_four_ulp_of_libm() {
        let mut rng = stream(12, &[5]);
        let probes = (0..200_000).map(|_| {
            let z: f64 = StandardNormal.sample(&mut rng);
            z * 10.0
        });
        let edges = [
            0.0, -0.0, 1e-300, -1e-300, 699.9, -699.9, 700.0, -745.2, 710.0,
        ];
        for x in probes.chain(edges) {
            let (fast, libm) = (EXP.eval(x), x.exp());
            let ulp = libm.next_up() - libm;
            assert!(
                fast == libm || (fast - libm).abs() <= 4.0 * ulp,
                "e^{x}: {fast} vs {libm}"
            );
        }
        assert!(EXP.eval(f64::NAN).is_nan());
        assert_eq!(EXP.eval(f64::INFINITY), f64::INFINITY);
        assert_eq!(EXP.eval(f64::NEG_INFINITY), 0.0);
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
