//! Walker/Vose alias tables: one u64 per draw from any finite distribution.
//!
//! Why here: the O(1) draw behind every sampler. Depends on nothing but `rand`.
use rand::RngCore;

/// A discrete distribution over 0..len sampled with one 64-bit word: the high half of
/// `u * len` picks a column, the low half decides between the column and its alias.
#[derive(Debug, Clone)]
pub struct AliasTable {
    /// (threshold, alias) per column, together so that a draw touches one cache line.
    columns: Vec<(u64, u32)>,
}

impl AliasTable {
    /// Builds the table from probabilities (need not be normalised; must not all be zero).
    /// Time: O(len).
    pub fn new(probs: &[f64]) -> AliasTable {
        let n = probs.len();
        let total: f64 = probs.iter().sum();
        let mut scaled: Vec<f64> = probs.iter().map(|p| p * n as f64 / total).collect();
        let mut columns: Vec<(u64, u32)> = (0..n as u32).map(|i| (u64::MAX, i)).collect();
        // Every index is in one of the two lists at a time, so neither ever grows past n.
        let (mut small, mut large) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for (i, &x) in scaled.iter().enumerate() {
            if x < 1.0 {
                small.push(i);
            } else {
                large.push(i);
            }
        }
        while let (Some(s), Some(&l)) = (small.pop(), large.last()) {
            columns[s] = (to_u64(scaled[s]), l as u32);
            scaled[l] -= 1.0 - scaled[s];
            if scaled[l] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        // Whatever is left holds probability 1 up to rounding.
        AliasTable { columns }
    }

    /// Draws one value. Cost: one `next_u64`.
    #[inline]
    pub fn sample<R: RngCore + ?Sized>(&self, rng: &mut R) -> u32 {
        let u = rng.next_u64();
        let wide = u128::from(u) * self.columns.len() as u128;
        let col = (wide >> 64) as usize;
        let (threshold, alias) = self.columns[col];
        // The comparison is a coin flip, which a branch would mispredict half the time: ask for
        // a conditional move.
        std::hint::select_unpredictable((wide as u64) < threshold, col as u32, alias)
    }

    /// The columns packed one u64 each for [`sample_packed`]: the threshold with its low
    /// [`PACK_BITS`] bits replaced by the alias. Needs fewer than 2^PACK_BITS outcomes. Halves the
    /// memory of a table, so the tables of many problems stay in cache; the coin of a column
    /// then has a resolution of 2^-51 instead of 2^-64 (the 53-bit precision of the f64
    /// probabilities it is built from is coarser still).
    pub fn packed(&self) -> impl Iterator<Item = u64> + '_ {
        debug_assert!(self.columns.len() <= 1 << PACK_BITS);
        self.columns
            .iter()
            .map(|&(threshold, alias)| (threshold & !PACK_MASK) | u64::from(alias))
    }

    /// The columns with a label in place of each outcome, for [`sample_labelled`]: a draw then
    /// returns the label itself, with no second lookup. `labels` has one label per outcome.
    /// 16 bytes per column.
    pub fn labelled(&self, labels: &[u32]) -> Vec<LabelledColumn> {
        debug_assert_eq!(labels.len(), self.columns.len());
        self.columns
            .iter()
            .zip(labels)
            .map(|(&(threshold, alias), &own)| LabelledColumn {
                threshold,
                own,
                alias: labels[alias as usize],
            })
            .collect()
    }

    /// Number of outcomes.
    pub fn len(&self) -> usize {
        self.columns.len()
    }

    /// True when there are no outcomes.
    pub fn is_empty(&self) -> bool {
        self.columns.is_empty()
    }
}

/// Low bits of a packed column that hold its alias.
pub const PACK_BITS: u32 = 13;

const PACK_MASK: u64 = (1 << PACK_BITS) - 1;

/// Draws from a table packed by [`AliasTable::packed`] with the word `u`: the high half of
/// `u * len` picks the column, the low half (with its low [`PACK_BITS`] bits ignored) decides
/// between the column and its alias. The result is the same as [`AliasTable::sample`] with the
/// thresholds truncated to multiples of 2^PACK_BITS.
#[inline]
pub fn sample_packed(table: &[u64], u: u64) -> u32 {
    let wide = u128::from(u) * table.len() as u128;
    let col = (wide >> 64) as usize;
    let entry = table[col];
    // (low | mask) < entry exactly when low < threshold, as the threshold's low bits are zero.
    std::hint::select_unpredictable(
        ((wide as u64) | PACK_MASK) < entry,
        col as u32,
        (entry & PACK_MASK) as u32,
    )
}

/// One column of a table built by [`AliasTable::labelled`]: the acceptance threshold and the
/// labels of the column's own outcome and of its alias.
#[derive(Debug, Clone, Copy)]
pub struct LabelledColumn {
    threshold: u64,
    own: u32,
    alias: u32,
}

/// Draws the label of one outcome from a table built by [`AliasTable::labelled`] with the word
/// `u`: the same outcome as [`AliasTable::sample`] with `u`.
#[inline]
pub fn sample_labelled(table: &[LabelledColumn], u: u64) -> u32 {
    let wide = u128::from(u) * table.len() as u128;
    let col = table[(wide >> 64) as usize];
    std::hint::select_unpredictable((wide as u64) < col.threshold, col.own, col.alias)
}

fn to_u64(x: f64) -> u64 {
    if x >= 1.0 {
        u64::MAX
    } else if x <= 0.0 {
        0
    } else {
        (x * 18_446_744_073_709_551_616.0) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::stream::stream;

    #[test]
    fn frequencies_match_probabilities_within_mc_error() {
        let probs = [0.1, 0.0, 0.35, 0.05, 0.5];
        let t = AliasTable::new(&probs);
        let mut rng = stream(3, &[1]);
        let draws = 400_000u32;
        let mut counts = [0u32; 5];
        for _ in 0..draws {
            counts[t.sample(&mut rng) as usize] += 1;
        }
        for (p, c) in probs.iter().zip(counts) {
            let se = (p * (1.0 - p) / f64::from(draws)).sqrt();
            let f = f64::from(c) / f64::from(draws);
            if *p == 0.0 {
                assert_eq!(c, 0);
            } else {
                assert!(((f - p) / se).abs() < 4.5, "p={p} f={f}");
            }
        }
    }

    #[test]
    fn packed_draws_equal_full_draws_but_for_the_lowest_bits() {
        let t = AliasTable::new(&[0.1, 0.0, 0.35, 0.05, 0.5, 0.3]);
        let packed: Vec<u64> = t.packed().collect();
        let mut rng = stream(4, &[2]);
        let mut differ = 0;
        for _ in 0..200_000 {
            let u = rng.next_u64();
            let full = t.sample(&mut Fixed(u));
            let fast = sample_packed(&packed, u);
            differ += u32::from(full != fast);
        }
        // They can differ only when the low half of u * len falls within 2^13 of a threshold:
        // probability about 6 * 2^-51 per draw.
        assert_eq!(differ, 0);
        // Outcomes with probability zero never appear; the last column (threshold 2^64 - 1)
        // keeps itself.
        for u in [0, u64::MAX, u64::MAX / 6, u64::MAX / 6 * 5 + 7] {
            assert_ne!(sample_packed(&packed, u), 1);
        }
    }

    #[test]
    fn labelled_draws_are_the_labels_of_full_draws() {
        let t = AliasTable::new(&[0.1, 0.0, 0.35, 0.05, 0.5, 0.3]);
        let labels = [10, 11, 12, 13, 14, 15];
        let table = t.labelled(&labels);
        let mut rng = stream(4, &[3]);
        for _ in 0..200_000 {
            let u = rng.next_u64();
            assert_eq!(
                sample_labelled(&table, u),
                labels[t.sample(&mut Fixed(u)) as usize]
            );
        }
    }

    /// A generator that returns one fixed word.
    struct Fixed(u64);

    impl RngCore for Fixed {
        fn next_u32(&mut self) -> u32 {
            self.0 as u32
        }
        fn next_u64(&mut self) -> u64 {
            self.0
        }
        fn fill_bytes(&mut self, dst: &mut [u8]) {
            dst.fill(0);
        }
    }
}
