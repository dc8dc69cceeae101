//! The resampling loop of the percentile bootstrap over problems that `analyze` reports beside
//! its intervals: the generators, the draws and the replicate means. The percentiles (the
//! interval itself) are computed by the caller (`analyze::summary`).
//!
//! A replicate draws N problems with replacement from the N problems; its means depend only on
//! how many times each distinct per-problem pattern (the problem's row in every table) is drawn.
//! Those counts are multinomial over the distinct patterns with probabilities proportional to
//! their multiplicities, so a replicate draws them directly, as a sequence of conditional
//! binomials (over the patterns grouped by multiplicity, then within a group): the same
//! distribution as drawing problem indices, at a cost of O(distinct patterns) rather than O(N)
//! a replicate, and O(sqrt N) at most when a few patterns hold the problems.
//!
//! Replicate r draws from its own stream keyed by (seed, [`BOOTSTRAP_STREAM`], r), so the
//! replicates do not depend on the thread count or on how they are blocked. Depends on
//! [`super::stream`], `rand_distr` and rayon only.
use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use rand_distr::{Binomial, Distribution};
use rayon::prelude::*;

use rand::Rng as _;

use super::stream::{stream, Rng};

/// One table of per-problem values for [`replicate_means`]: `width` (at least 1) values a
/// problem, problem by problem.
pub struct BootstrapTable<'a> {
    /// The values, row-major: problem i's row is `rows[i * width..(i + 1) * width]`.
    pub rows: &'a [f64],
    /// Columns (at least 1).
    pub width: usize,
}

impl BootstrapTable<'_> {
    /// Problems (rows) of the table.
    fn problems(&self) -> usize {
        self.rows.len().checked_div(self.width).unwrap_or(0)
    }
}

/// A row compared and hashed by the bits of its values.
struct RowKey<'a>(&'a [f64]);

impl Hash for RowKey<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        for v in self.0 {
            state.write_u64(v.to_bits());
        }
    }
}

impl PartialEq for RowKey<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len()
            && self
                .0
                .iter()
                .zip(other.0)
                .all(|(a, b)| a.to_bits() == b.to_bits())
    }
}

impl Eq for RowKey<'_> {}

/// A table's distinct rows (identical rows, e.g. pass@k of problems with the same n and c, are
/// accumulated once with the summed count of their problems), in order of first appearance,
/// stored contiguously, and the distinct row of each problem.
struct DistinctRows {
    width: usize,
    of: Vec<u32>,
    values: Vec<f64>,
    count: usize,
}

impl DistinctRows {
    fn new(table: &BootstrapTable<'_>) -> Self {
        let w = table.width;
        let mut index: HashMap<RowKey<'_>, u32> = HashMap::new();
        let mut values = Vec::new();
        let of = table
            .rows
            .chunks_exact(w)
            .map(|row| {
                let next = u32::try_from(values.len() / w).unwrap_or(u32::MAX);
                *index.entry(RowKey(row)).or_insert_with(|| {
                    values.extend_from_slice(row);
                    next
                })
            })
            .collect();
        DistinctRows {
            width: w,
            of,
            count: values.len() / w,
            values,
        }
    }
}

/// The distinct per-problem patterns over every table (the tuple of a problem's distinct row in
/// each table), in order of first appearance: how many problems share each, and each one's
/// distinct row in every table (`rows[pattern * tables + table]`); and the patterns grouped by
/// multiplicity, largest first (`runs` of equally likely patterns in `order`).
struct Patterns {
    rows: Vec<u32>,
    order: Vec<u32>,
    runs: Vec<Run>,
}

/// Patterns `order[start..start + len]`, each shared by `multiplicity` problems.
struct Run {
    start: usize,
    len: usize,
    multiplicity: u64,
}

impl Patterns {
    fn new(distinct: &[DistinctRows], n: usize) -> Self {
        // Joint ids over the first t tables, refined one table at a time: two problems share an
        // id exactly when they share a row in each of those tables, and ids stay in order of
        // first appearance.
        let mut joint: Vec<u32> = vec![0; n];
        let mut count = 1usize;
        for t in distinct {
            let mut index: HashMap<(u32, u32), u32> = HashMap::new();
            for (j, &d) in joint.iter_mut().zip(&t.of) {
                let next = u32::try_from(index.len()).unwrap_or(u32::MAX);
                *j = *index.entry((*j, d)).or_insert(next);
            }
            count = index.len();
        }
        let tables = distinct.len();
        let mut multiplicity = vec![0u64; count];
        let mut rows = vec![0u32; count * tables];
        for (i, &j) in joint.iter().enumerate() {
            let j = j as usize;
            if multiplicity[j] == 0 {
                for (t, d) in distinct.iter().enumerate() {
                    rows[j * tables + t] = d.of[i];
                }
            }
            multiplicity[j] += 1;
        }
        let mut order: Vec<u32> = (0..u32::try_from(count).unwrap_or(u32::MAX)).collect();
        order.sort_by_key(|&j| std::cmp::Reverse(multiplicity[j as usize]));
        let mut runs: Vec<Run> = Vec::new();
        for (i, &j) in order.iter().enumerate() {
            let m = multiplicity[j as usize];
            match runs.last_mut() {
                Some(run) if run.multiplicity == m => run.len += 1,
                _ => runs.push(Run {
                    start: i,
                    len: 1,
                    multiplicity: m,
                }),
            }
        }
        Patterns { rows, order, runs }
    }
}

/// A draw of Bin(n, p) for p in [0, 1] (p = 1 gives n).
fn binomial(n: u64, p: f64, rng: &mut Rng) -> u64 {
    // p is a ratio of integer masses with the numerator at most the denominator, so `new`
    // never fails.
    Binomial::new(n, p).map_or(n, |b| b.sample(rng))
}

/// Below this many draws per pattern, the draws of a run of equally likely patterns are
/// placed one by one (a uniform pick each), above it by a binomial per pattern.
const PICKS_PER_PATTERN: u64 = 16;

/// One replicate's draw counts of each pattern, written into `counts`: `n` draws with
/// replacement from the `n` problems, a multinomial over the patterns with probabilities
/// multiplicity / n. Drawn as conditional binomials over the runs of equally likely patterns
/// (run i gets Bin(draws left, its multiplicity / that of the runs from i on)), then, within a
/// run of r patterns given x draws, as x uniform picks among them when x < 16 r, else as
/// conditional binomials over its patterns (Bin(draws left, 1 / patterns left)): each step the
/// exact conditional law of the multinomial, so the counts are exactly multinomial. Cost: a
/// binomial per run (at most sqrt(2 n) runs: their multiplicities differ and sum to n), plus
/// at most 16 picks or one binomial per pattern.
fn multinomial(patterns: &Patterns, n: u64, rng: &mut Rng, counts: &mut [u64]) {
    counts.fill(0);
    let mut left = n;
    let mut mass = n;
    for run in &patterns.runs {
        if left == 0 {
            break;
        }
        let members = &patterns.order[run.start..run.start + run.len];
        let run_mass = run.len as u64 * run.multiplicity;
        // run_mass <= mass, so p is in (0, 1]; p = 1 at the last run, which takes what is left.
        let x = binomial(left, run_mass as f64 / mass as f64, rng);
        left -= x;
        mass -= run_mass;
        let r = members.len();
        if r == 1 || x == 0 {
            counts[members[0] as usize] += x;
        } else if x < PICKS_PER_PATTERN * r as u64 {
            for _ in 0..x {
                counts[members[rng.random_range(0..r)] as usize] += 1;
            }
        } else {
            let mut x_left = x;
            for (i, &j) in members.iter().enumerate() {
                if x_left == 0 {
                    break;
                }
                let c = binomial(x_left, 1.0 / (r - i) as f64, rng);
                counts[j as usize] += c;
                x_left -= c;
            }
        }
    }
}

/// Replicates resampled together: each block draws its replicates' pattern counts, then streams
/// each table's distinct rows once for the whole block.
const BOOTSTRAP_BLOCK: usize = 16;

/// Stream tag of the bootstrap replicates.
pub const BOOTSTRAP_STREAM: u64 = 0xB007;

/// The `b` bootstrap replicate means of each column of each table, resampling problems (rows;
/// every table has one row per problem, in the same order): `means[table][column][replicate]`, in
/// replicate order. `None` when `b` is 0, there are no problems or the tables differ in length.
///
/// Replicate r draws, from its own stream keyed by (seed, r), how many of its N draws fall on
/// each distinct pattern (a multinomial, as conditional binomials: `multinomial`),
/// turns them into counts of each table's distinct rows and takes the weighted column means,
/// adding the distinct rows in order of first appearance. The same draws serve every table (so a
/// model's curves are resampled jointly), and replicates are computed in blocks of 16
/// (`BOOTSTRAP_BLOCK`) so that each distinct row is read once per block; neither changes a
/// replicate's arithmetic. Blocks run in parallel, so the result does not depend on the thread
/// count.
///
/// Cost: O(N T) to find the P distinct patterns and the D distinct rows of the T tables (K
/// columns), then O(B (P T + D K)), and O(B (sqrt N + D K)) when few patterns hold most
/// problems.
pub fn replicate_means(
    tables: &[BootstrapTable<'_>],
    b: usize,
    seed: u64,
) -> Option<Vec<Vec<Vec<f64>>>> {
    let n = tables.first().map_or(0, BootstrapTable::problems);
    if b == 0 || n == 0 || tables.iter().any(|t| t.problems() != n) {
        return None;
    }
    let distinct: Vec<DistinctRows> = tables.iter().map(DistinctRows::new).collect();
    let patterns = Patterns::new(&distinct, n);
    let starts: Vec<usize> = (0..b).step_by(BOOTSTRAP_BLOCK).collect();
    let n_draws = n as u64;
    // blocks[block][table] = the block's replicate means, replicate-major.
    let blocks: Vec<Vec<Vec<f64>>> = starts
        .par_iter()
        .map(|&lo| {
            let hi = (lo + BOOTSTRAP_BLOCK).min(b);
            let m = hi - lo;
            // counts[table][d * m + r]: problems of distinct row d drawn by replicate lo + r.
            let mut counts: Vec<Vec<u64>> =
                distinct.iter().map(|t| vec![0u64; t.count * m]).collect();
            let mut drawn = vec![0u64; patterns.order.len()];
            for r in 0..m {
                let mut rng = stream(seed, &[BOOTSTRAP_STREAM, (lo + r) as u64]);
                multinomial(&patterns, n_draws, &mut rng, &mut drawn);
                let rows = patterns.rows.chunks_exact(distinct.len().max(1));
                for (&times, of) in drawn.iter().zip(rows) {
                    if times == 0 {
                        continue;
                    }
                    for (c, &d) in counts.iter_mut().zip(of) {
                        c[d as usize * m + r] += times;
                    }
                }
            }
            distinct
                .iter()
                .zip(&counts)
                .map(|(t, c)| {
                    let w = t.width;
                    let mut acc = vec![0.0; m * w];
                    for (d, row) in t.values.chunks_exact(w).enumerate() {
                        for (r, &times) in c[d * m..(d + 1) * m].iter().enumerate() {
                            if times == 0 {
                                continue;
                            }
                            let times = times as f64;
                            for (a, v) in acc[r * w..(r + 1) * w].iter_mut().zip(row) {
                                *a += times * v;
                            }
                        }
                    }
                    acc.iter_mut().for_each(|a| *a /= n as f64);
                    acc
                })
                .collect()
        })
        .collect();
    let means = distinct
        .iter()
        .enumerate()
        .map(|(t, d)| {
            (0..d.width)
                .map(|j| {
                    blocks
                        .iter()
                        .flat_map(|block| block[t].iter().skip(j).step_by(d.width))
                        .copied()
                        .collect()
                })
                .collect()
        })
        .collect();
    Some(means)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Exact moments of the row bootstrap's replicate mean of values `x` (N problems, each drawn
    /// with probability 1/N, N draws): mean, variance and fourth central moment.
    fn exact_moments(x: &[f64]) -> (f64, f64, f64) {
        let n = x.len() as f64;
        let mu = x.iter().sum::<f64>() / n;
        let s2 = x.iter().map(|v| (v - mu).powi(2)).sum::<f64>() / n;
        let m4 = x.iter().map(|v| (v - mu).powi(4)).sum::<f64>() / n;
        // Mean of N iid draws: E(mean - mu)^4 = 3 s2^2 / N^2 + (m4 - 3 s2^2) / N^3.
        (
            mu,
            s2 / n,
            3.0 * s2 * s2 / (n * n) + (m4 - 3.0 * s2 * s2) / (n * n * n),
        )
    }

    /// Two tables whose rows repeat with different periods, so the distinct patterns (21 of
    /// them over 60 problems) have unequal multiplicities and neither table's rows alone
    /// determine them.
    fn two_tables() -> (Vec<f64>, Vec<f64>) {
        let a: Vec<f64> = (0..60)
            .flat_map(|i| {
                let j = (i % 7) as f64;
                [j * j / 36.0, if i % 7 < 2 { 1.0 } else { 0.25 }]
            })
            .collect();
        let b: Vec<f64> = (0..60)
            .map(|i| ((i % 3) as f64) * 0.5 + (i % 7) as f64 * 0.1)
            .collect();
        (a, b)
    }

    fn z(got: f64, expected: f64, se: f64) -> f64 {
        (got - expected) / se
    }

    /// z scores of the mean and the variance of replicate means `got` against the row
    /// bootstrap's exact values for values `x`.
    fn moment_z(x: &[f64], got: &[f64]) -> (f64, f64) {
        let r = got.len() as f64;
        let (mu, var, m4) = exact_moments(x);
        let m = got.iter().sum::<f64>() / r;
        let s2 = got.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (r - 1.0);
        // Var of the unbiased sample variance of r iid values.
        let var_s2 = m4 / r - var * var * (r - 3.0) / (r * (r - 1.0));
        (z(m, mu, (var / r).sqrt()), z(s2, var, var_s2.sqrt()))
    }

    /// Two patterns of 100 problems each and one of a single problem: the two form a run that
    /// gets about 200 draws, split by a binomial rather than picked one by one; a run of 40
    /// single problems, picked one by one. Both keep the row bootstrap's moments.
    #[test]
    fn count_resampling_keeps_the_moments_within_runs_of_equal_multiplicity() {
        for rows in [
            [vec![0.0; 100], vec![1.0; 100], vec![3.0]].concat(),
            (0..40)
                .map(|i| f64::from(i) / 40.0)
                .chain([2.0; 10])
                .collect(),
        ] {
            let means = replicate_means(
                &[BootstrapTable {
                    rows: &rows,
                    width: 1,
                }],
                20_000,
                8,
            )
            .expect("replicates");
            let (z_mean, z_var) = moment_z(&rows, &means[0][0]);
            assert!(
                z_mean.abs() < 4.5 && z_var.abs() < 4.5,
                "z {z_mean} {z_var}"
            );
        }
    }

    /// The replicate means have the row bootstrap's mean and variance in every column, and the
    /// row bootstrap's covariance across tables (the tables are resampled jointly, as pairs).
    #[test]
    fn count_resampling_has_the_row_bootstraps_moments() {
        let (a, b) = two_tables();
        let tables = [
            BootstrapTable { rows: &a, width: 2 },
            BootstrapTable { rows: &b, width: 1 },
        ];
        let reps = 20_000usize;
        let means = replicate_means(&tables, reps, 11).expect("replicates");
        let r = reps as f64;
        let columns: Vec<(Vec<f64>, &Vec<f64>)> = vec![
            (a.iter().step_by(2).copied().collect(), &means[0][0]),
            (a.iter().skip(1).step_by(2).copied().collect(), &means[0][1]),
            (b.clone(), &means[1][0]),
        ];
        for (x, got) in &columns {
            let (z_mean, z_var) = moment_z(x, got);
            assert!(
                z_mean.abs() < 4.5 && z_var.abs() < 4.5,
                "z {z_mean} {z_var}"
            );
        }
        // Covariance of table 0 column 0 with table 1: exact value and the SE of the sample
        // covariance of r iid pairs, from the exact mixed moments of the replicate means.
        let (x, gx) = (&columns[0].0, columns[0].1);
        let (y, gy) = (&columns[2].0, columns[2].1);
        let n = x.len() as f64;
        let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
        let pop = |f: &dyn Fn(f64, f64) -> f64| {
            x.iter().zip(y).map(|(u, v)| f(u - mx, v - my)).sum::<f64>() / n
        };
        let (sxx, syy, sxy) = (pop(&|u, _| u * u), pop(&|_, v| v * v), pop(&|u, v| u * v));
        let m22 = pop(&|u, v| u * u * v * v);
        let cov = sxy / n;
        // E[(mean_x - mx)^2 (mean_y - my)^2] for means of N iid pairs.
        let e22 = m22 / (n * n * n) + (n - 1.0) / (n * n * n) * (sxx * syy + 2.0 * sxy * sxy);
        let (gmx, gmy) = (gx.iter().sum::<f64>() / r, gy.iter().sum::<f64>() / r);
        let got_cov = gx
            .iter()
            .zip(gy)
            .map(|(u, v)| (u - gmx) * (v - gmy))
            .sum::<f64>()
            / (r - 1.0);
        let z_cov = z(got_cov, cov, ((e22 - cov * cov) / r).sqrt());
        assert!(
            cov > 0.0 && z_cov.abs() < 4.5,
            "cov {cov} got {got_cov} z {z_cov}"
        );
    }

    /// With 4 problems of values 0, 0, 1 and 5, a replicate's sum b + 5 c names how many times
    /// it drew the value 1 (b) and the value 5 (c): each of the 15 outcomes has its multinomial
    /// probability 4! / (a! b! c!) (1/2)^a (1/4)^b (1/4)^c.
    #[test]
    fn count_resampling_draws_each_outcome_with_its_multinomial_probability() {
        let rows = [0.0, 0.0, 1.0, 5.0];
        let reps = 40_000usize;
        let means = replicate_means(
            &[BootstrapTable {
                rows: &rows,
                width: 1,
            }],
            reps,
            3,
        )
        .expect("replicates");
        let mut seen = [0usize; 25];
        for m in &means[0][0] {
            seen[(m * 4.0).round() as usize] += 1;
        }
        let fact = |k: u32| (1..=k).product::<u32>() as f64;
        let mut total = 0.0;
        for c in 0..=4u32 {
            for b in 0..=4 - c {
                let a = 4 - b - c;
                let p = fact(4) / (fact(a) * fact(b) * fact(c))
                    * 0.5f64.powi(a as i32)
                    * 0.25f64.powi((b + c) as i32);
                total += p;
                let e = reps as f64 * p;
                let got = seen[(b + 5 * c) as usize] as f64;
                let zc = z(got, e, (e * (1.0 - p)).sqrt());
                assert!(zc.abs() < 4.5, "b {b} c {c}: {got} against {e} (z {zc})");
            }
        }
        assert!((total - 1.0).abs() < 1e-12);
    }

    /// The same replicates for any thread count (and any number of replicates not a multiple of
    /// the block).
    #[test]
    fn replicates_do_not_depend_on_the_thread_count() {
        let (a, b) = two_tables();
        let run = |threads: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("pool")
                .install(|| {
                    replicate_means(
                        &[
                            BootstrapTable { rows: &a, width: 2 },
                            BootstrapTable { rows: &b, width: 1 },
                        ],
                        1_001,
                        5,
                    )
                })
                .expect("replicates")
        };
        let bits = |m: Vec<Vec<Vec<f64>>>| -> Vec<u64> {
            m.into_iter()
                .flatten()
                .flatten()
                .map(f64::to_bits)
                .collect()
        };
        let one = bits(run(1));
        assert_eq!(one.len(), 3 * 1_001);
        assert_eq!(one, bits(run(2)));
        assert_eq!(one, bits(run(3)));
    }

    #[test]
    fn nothing_to_resample_gives_none_and_one_problem_repeats_itself() {
        let rows = [0.25, 0.5];
        let t = || BootstrapTable {
            rows: &rows,
            width: 2,
        };
        assert!(replicate_means(&[t()], 0, 1).is_none());
        assert!(replicate_means(
            &[BootstrapTable {
                rows: &[],
                width: 1
            }],
            10,
            1
        )
        .is_none());
        let three = [1.0, 2.0, 3.0];
        assert!(replicate_means(
            &[
                t(),
                BootstrapTable {
                    rows: &three,
                    width: 1
                }
            ],
            10,
            1
        )
        .is_none());
        let means = replicate_means(&[t()], 20, 1).expect("replicates");
        assert_eq!(means[0], vec![vec![0.25; 20], vec![0.5; 20]]);
    }
}
