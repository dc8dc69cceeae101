//! The Monte Carlo engine: deterministic random streams, O(1) samplers and a parallel runner.
//!
//! Every batch of draws gets its own generator seeded from (scenario seed, experiment, cell,
//! batch), never from the thread that runs it, so results are identical for any thread count.
//! Nothing here knows about files; nothing above `sim` draws random numbers.
pub mod alias;
pub mod counts;
pub mod stream;
pub mod traces;
pub mod votes;

use rayon::prelude::*;

/// Draws per batch: the unit of parallel work and of random streams.
pub const BATCH: u64 = 4096;

/// Splits `total` draws into fixed batches: (batch index, draws in it).
pub fn batches(total: u64) -> impl Iterator<Item = (u64, u64)> {
    let n = total.div_ceil(BATCH);
    (0..n).map(move |b| (b, BATCH.min(total - b * BATCH)))
}

/// Runs `work` on every task in parallel and returns the results in task order, so that any
/// reduction over them is independent of scheduling. Long tasks should return early once
/// [`crate::interrupt::requested`] is true (the caller then discards the results).
pub fn run_ordered<T, R, F>(tasks: &[T], work: F) -> Vec<R>
where
    T: Sync,
    R: Send,
    F: Fn(&T) -> R + Sync + Send,
{
    tasks.par_iter().map(work).collect()
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
        .map(work)
        .reduce(|| identity.clone(), &merge)
}
