//! The resampling loop of the percentile bootstrap over problems that `analyze` reports beside
//! its intervals: the generators, the draws and the replicate means. The percentiles (the
//! interval itself) are computed by the caller (`analyze::summary`).
//!
//! Replicate r draws its N problem indices from its own stream keyed by (seed, [`BOOTSTRAP_STREAM`],
//! r), so the replicates do not depend on the thread count or on how they are blocked. Depends on
//! [`super::stream`] and rayon only.
use rand::Rng;
use rayon::prelude::*;

use super::stream::stream;

/// One table of per-problem values for [`replicate_means`]: a row per problem, `width` columns.
pub struct BootstrapTable<'a> {
    /// One row per problem (at least `width` values each).
    pub rows: &'a [Vec<f64>],
    /// Columns.
    pub width: usize,
}

/// A table's distinct rows (identical rows, e.g. pass@k of problems with the same n and c, are
/// accumulated once with the summed multiplicity of their problems), in order of first
/// appearance, stored contiguously, and the distinct row of each problem.
struct DistinctRows {
    width: usize,
    of: Vec<u32>,
    values: Vec<f64>,
    count: usize,
}

impl DistinctRows {
    fn new(table: &BootstrapTable<'_>) -> Self {
        let mut index: std::collections::HashMap<Vec<u64>, u32> = std::collections::HashMap::new();
        let mut values = Vec::new();
        let mut count = 0usize;
        let of = table
            .rows
            .iter()
            .map(|row| {
                let key: Vec<u64> = row.iter().map(|v| v.to_bits()).collect();
                *index.entry(key).or_insert_with(|| {
                    values.extend_from_slice(&row[..table.width]);
                    count += 1;
                    u32::try_from(count - 1).unwrap_or(u32::MAX)
                })
            })
            .collect();
        DistinctRows {
            width: table.width,
            of,
            values,
            count,
        }
    }
}

/// Replicates resampled together: each block draws its replicates' problem indices once for
/// every table, then streams each table's distinct rows once for the whole block.
const BOOTSTRAP_BLOCK: usize = 16;

/// Stream tag of the bootstrap replicates.
pub const BOOTSTRAP_STREAM: u64 = 0xB007;

/// The `b` bootstrap replicate means of each column of each table, resampling problems (rows;
/// every table has one row per problem, in the same order): `means[table][column][replicate]`, in
/// replicate order. `None` when `b` is 0, there are no problems or the tables differ in length.
///
/// Replicate r draws N problem indices from its own stream keyed by (seed, r), turns them into
/// multiplicities of each table's distinct rows and takes the weighted column means, adding the
/// distinct rows in order of first appearance. The same draws serve every table (so a model's
/// curves are resampled jointly, and the draws are made once), and replicates are computed in
/// blocks of 16 (`BOOTSTRAP_BLOCK`) so that each distinct row is read once per block; neither
/// changes a replicate's arithmetic. Blocks run in parallel, so the result does not depend on
/// the thread count.
///
/// Cost: O(N K) to find the D distinct rows, then O(B (N + D K)) per table.
pub fn replicate_means(
    tables: &[BootstrapTable<'_>],
    b: usize,
    seed: u64,
) -> Option<Vec<Vec<Vec<f64>>>> {
    let n = tables.first().map_or(0, |t| t.rows.len());
    if b == 0 || n == 0 || tables.iter().any(|t| t.rows.len() != n) {
        return None;
    }
    let distinct: Vec<DistinctRows> = tables.iter().map(DistinctRows::new).collect();
    let starts: Vec<usize> = (0..b).step_by(BOOTSTRAP_BLOCK).collect();
    // blocks[block][table] = the block's replicate means, replicate-major.
    let blocks: Vec<Vec<Vec<f64>>> = starts
        .par_iter()
        .map(|&lo| {
            let hi = (lo + BOOTSTRAP_BLOCK).min(b);
            let m = hi - lo;
            // counts[table][d * m + r]: problems of distinct row d drawn by replicate lo + r.
            let mut counts: Vec<Vec<u32>> =
                distinct.iter().map(|t| vec![0u32; t.count * m]).collect();
            for r in 0..m {
                let mut rng = stream(seed, &[BOOTSTRAP_STREAM, (lo + r) as u64]);
                for _ in 0..n {
                    let i = rng.random_range(0..n);
                    for (t, c) in distinct.iter().zip(counts.iter_mut()) {
                        c[t.of[i] as usize * m + r] += 1;
                    }
                }
            }
            distinct
                .iter()
                .zip(&counts)
                .map(|(t, c)| {
                    let w = t.width;
                    let mut acc = vec![0.0; m * w];
                    for (d, row) in t.values.chunks_exact(w.max(1)).enumerate() {
                        for (r, &times) in c[d * m..(d + 1) * m].iter().enumerate() {
                            if times == 0 {
                                continue;
                            }
                            let times = f64::from(times);
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
