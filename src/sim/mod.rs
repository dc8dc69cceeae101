//! The Monte Carlo engine: deterministic random streams, O(1) samplers and a parallel runner.
//!
//! Every batch of draws gets its own generator seeded from (scenario seed, experiment, cell,
//! batch), never from the thread that runs it, so results are identical for any thread count.
//! Nothing here knows about files; nothing above `sim` draws random numbers.
//!
//! May depend on: `model`, `exact` (the pmfs that samplers' tables are built from, and closed
//! forms in tests) and `interrupt` (to stop between batches).
pub mod alias;
pub mod bootstrap;
pub mod confidence;
pub mod contamination;
pub mod counts;
pub mod judge;
pub mod modes;
pub mod outcome;
pub mod picks;
pub mod plan;
pub mod reruns;
pub mod run_corr;
pub mod se;
pub mod selection;
pub mod stream;
pub mod submit;
pub mod synth;
pub mod traces;
pub mod votes;

use rayon::prelude::*;

/// Draws per batch: the unit of parallel work and of random streams.
pub const BATCH: u64 = 4096;

/// Splits `total` draws into fixed batches: (batch index, draws in it).
pub fn batches(total: u64) -> impl Iterator<Item = (u64, u64)> {
    batches_of(total, BATCH)
}

/// Splits `total` draws into batches of `size` (> 0): (batch index, draws in it).
pub fn batches_of(total: u64, size: u64) -> impl Iterator<Item = (u64, u64)> {
    let n = total.div_ceil(size);
    (0..n).map(move |b| (b, size.min(total - b * size)))
}

/// Runs `work` on every task in parallel and folds the results with `merge`, which must be
/// associative and commutative (exact integer sums), so the result is independent of scheduling
/// while memory stays bounded by the number of threads, not the number of tasks.
pub fn run_merged<T, R, F, M>(tasks: &[T], identity: R, work: F, merge: M) -> R
where
    T: Sync,
    R: Send + Clone + Sync,
    F: Fn(&T) -> R + Sync + Send,
    M: Fn(R, R) -> R + Sync + Send,
{
    tasks
        .par_iter()
        .map(|t| {
            if crate::interrupt::requested() {
                identity.clone()
            } else {
                work(t)
            }
        })
        .reduce(|| identity.clone(), &merge)
}

/// Tasks per parallel chunk of [`run_ordered_fold`].
const CHUNK: usize = 8192;

/// Runs `work` on every task in parallel, chunk by chunk, and folds the results in task order
/// with `fold` (so floating-point sums are identical for any thread count), keeping at most one
/// chunk of results in memory. Stops after the current chunk once an interruption is
/// [`requested`](crate::interrupt::requested); the caller must then discard the result.
pub fn run_ordered_fold<T, R, F, G>(tasks: &[T], work: F, mut fold: G)
where
    T: Sync,
    R: Send,
    F: Fn(&T) -> R + Sync + Send,
    G: FnMut(&T, R),
{
    for chunk in tasks.chunks(CHUNK) {
        if crate::interrupt::requested() {
            return;
        }
        let done: Vec<R> = chunk.par_iter().map(&work).collect();
        for (t, r) in chunk.iter().zip(done) {
            fold(t, r);
        }
    }
}
