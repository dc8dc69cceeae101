//! Benchmark counts of one rerun: T = sum_i c_i with c_i ~ Bin(n, p_i), and streaming
//! histograms of T over many reruns (memory bounded by the observed range, not by reruns).
//!
//! Why here: the reruns of `seed-variance` and `head-to-head`. Depends on `model`, on `exact`
//! for the pmfs its tables are built from, and on the rest of `sim`.
use rand::RngCore;
use rand_distr::{Binomial, Distribution, StandardNormal};

use super::alias::{sample_packed, AliasTable};
use super::stream::{stream, Rng, TWO_53};
use super::{batches, batches_of, run_merged};
use crate::exact::grader::SampleGrading;
use crate::exact::maj::{binomial_pmf_with, ln_factorials};
use crate::model::expit;

/// Largest n for which per-problem alias tables are built; above it each count is drawn with
/// rand_distr's BTPE binomial.
const ALIAS_MAX_N: u32 = 4096;

/// Draws T = sum_i Bin(n, p_i) for a fixed set of rates: one u64 per problem.
#[derive(Debug, Clone)]
pub enum CountSampler {
    /// n = 1: c_i = \[u < p_i\] on 53-bit uniforms.
    Bernoulli(Vec<u64>),
    /// Alias tables of Bin(n, p_i), packed ([`AliasTable::packed`]) and laid end to end,
    /// `columns` = n + 1 entries each.
    Alias {
        /// Entries per table.
        columns: usize,
        /// The tables.
        entries: Vec<u64>,
    },
    /// Large n: BTPE per draw.
    Btpe(Vec<Binomial>),
    /// Problems redrawn every rerun from the logit-normal population (see
    /// [`random_placement_total`]).
    Population {
        /// Number of problems N.
        problems: usize,
        /// Logit mean.
        mu: f64,
        /// Logit SD.
        sigma: f64,
        /// Samples per problem.
        n: u32,
        /// How each sample is parsed and graded (the identity draws exactly as before).
        grading: SampleGrading,
        /// (c, r): each drawn problem is memorised with probability c and then solved at rate
        /// r (a contaminated model); `None` draws exactly as without it.
        memorised: Option<(f64, f64)>,
    },
    /// Samples parsed and graded ([`SampleGrading`]: unparsed answers, a noisy grader), drawn
    /// stage by stage per problem ([`staged_count`]) rather than from the graded rate (the
    /// plan's reruns; seed-variance draws Bin(n, p~) from alias tables instead).
    Staged {
        /// True solve rates.
        rates: Vec<f64>,
        /// Samples per problem.
        n: u32,
        /// Extraction and grading.
        grading: SampleGrading,
    },
}

impl CountSampler {
    /// A sampler for n samples of each problem with the given rates. Time: O(N n) for n <= 4096.
    pub fn new(n: u32, rates: &[f64]) -> CountSampler {
        if n == 1 {
            CountSampler::Bernoulli(rates.iter().map(|&p| (p * TWO_53) as u64).collect())
        } else if n <= ALIAS_MAX_N {
            let lnf = ln_factorials(n);
            let mut entries = Vec::with_capacity(rates.len() * (n as usize + 1));
            for &p in rates {
                entries.extend(AliasTable::new(&binomial_pmf_with(n, p, &lnf)).packed());
            }
            CountSampler::Alias {
                columns: n as usize + 1,
                entries,
            }
        } else {
            // Rates are validated to lie in [0, 1], where Binomial::new cannot fail.
            CountSampler::Btpe(
                rates
                    .iter()
                    .filter_map(|&p| Binomial::new(u64::from(n), p).ok())
                    .collect(),
            )
        }
    }

    /// One rerun's total count.
    #[inline]
    pub fn total<R: RngCore>(&self, rng: &mut R) -> u64 {
        match self {
            CountSampler::Bernoulli(t) => t
                .iter()
                .map(|&t| u64::from((rng.next_u64() >> 11) < t))
                .sum(),
            CountSampler::Alias { columns, entries } => entries
                .chunks_exact(*columns)
                .map(|t| u64::from(sample_packed(t, rng.next_u64())))
                .sum(),
            CountSampler::Btpe(b) => b.iter().map(|b| b.sample(rng)).sum(),
            CountSampler::Population {
                problems,
                mu,
                sigma,
                n,
                grading,
                memorised,
            } if grading.is_identity() => {
                random_placement_total(rng, *problems, (*mu, *sigma, *memorised), *n)
            }
            CountSampler::Population {
                problems,
                mu,
                sigma,
                n,
                grading,
                memorised,
            } => (0..*problems)
                .map(|_| {
                    let p = population_rate(rng, *mu, *sigma, *memorised);
                    staged_count(rng, p, *n, grading)
                })
                .sum(),
            CountSampler::Staged { rates, n, grading } => rates
                .iter()
                .map(|&p| staged_count(rng, p, *n, grading))
                .sum(),
        }
    }
}

impl CountSampler {
    /// Adds one rerun's total to each entry of `totals` (an entry per rerun). The loops run
    /// problem by problem and, inside, rerun by rerun, so one problem's table and the generator
    /// stay in registers and cache: the same distribution as [`CountSampler::total`] per entry,
    /// with the words of the stream used in a different order.
    pub fn add_totals<R: RngCore + Clone>(&self, rng: &mut R, totals: &mut [u64]) {
        let mut r = rng.clone();
        match self {
            // Two problems per pass over the block: half the loads and stores of the totals.
            CountSampler::Bernoulli(thresholds) => {
                let pairs = thresholds.chunks_exact(2);
                for &t in pairs.remainder() {
                    for x in totals.iter_mut() {
                        *x += u64::from((r.next_u64() >> 11) < t);
                    }
                }
                for t in pairs {
                    for x in totals.iter_mut() {
                        let first = u64::from((r.next_u64() >> 11) < t[0]);
                        *x += first + u64::from((r.next_u64() >> 11) < t[1]);
                    }
                }
            }
            CountSampler::Alias { columns, entries } => {
                let pairs = entries.chunks_exact(2 * columns);
                for table in pairs.remainder().chunks_exact(*columns) {
                    for x in totals.iter_mut() {
                        *x += u64::from(sample_packed(table, r.next_u64()));
                    }
                }
                for pair in pairs {
                    let (t0, t1) = pair.split_at(*columns);
                    for x in totals.iter_mut() {
                        let first = u64::from(sample_packed(t0, r.next_u64()));
                        *x += first + u64::from(sample_packed(t1, r.next_u64()));
                    }
                }
            }
            _ => {
                for x in totals.iter_mut() {
                    *x += self.total(&mut r);
                }
            }
        }
        *rng = r;
    }
}

/// Reruns drawn together by [`CountSampler::add_totals`] (their totals fit in L1 cache).
const BLOCK: u64 = 512;

/// Histograms of the rerun totals of several cells, `reruns` each. Every (cell, batch) is one
/// parallel task with its own generator keyed by (seed, cell key, batch), drawing blocks of
/// reruns problem by problem ([`CountSampler::add_totals`]). Results do not depend on the thread
/// count or on which other cells run.
pub fn total_histograms(
    seed: u64,
    cells: &[(&[u64], &CountSampler)],
    reruns: u64,
    progress: &(dyn Fn(u64) + Sync),
) -> Vec<Histogram> {
    per_cell_batches(
        cells.len(),
        reruns,
        progress,
        |ci, batch, count| {
            let mut block = [0u64; BLOCK as usize];
            let (key, sampler) = cells[ci];
            let mut rng = stream(seed, &[key, &[batch]].concat());
            let mut h = Histogram::default();
            for (_, n) in batches_of(count, BLOCK) {
                let totals = &mut block[..n as usize];
                totals.fill(0);
                sampler.add_totals(&mut rng, totals);
                for &t in totals.iter() {
                    h.add(t);
                }
            }
            h
        },
        Histogram::merge,
    )
}

/// Largest n for which [`PairSampler::new`] draws differences (building a table costs O(n^2)).
const DIFF_MAX_N: u32 = 256;

/// Draws paired reruns of two models on the same problems, each with n samples per problem and
/// its own independent samples.
#[derive(Debug, Clone)]
pub enum PairSampler {
    /// One alias table per problem of its difference D_i = B_i - A_i, with A_i ~ Bin(n, a_i) and
    /// B_i ~ Bin(n, b_i) independent: P(D_i = d) = sum_c P(A_i = c) P(B_i = c + d). Equal in law
    /// to drawing both counts and subtracting, at one u64 per problem instead of two. Only the
    /// per-problem pmf is tabulated: the sum over problems, and so the loss and tie rates the
    /// exact convolution computes, are left to the draws.
    Difference {
        /// Draws the sum of D_i + n over the problems: a [`CountSampler::Alias`] whose tables
        /// have 2n + 1 entries, for D_i + n = 0..=2n.
        shifted: CountSampler,
        /// N n: the drawn sum minus this is the rerun's difference.
        offset: u64,
    },
    /// A's and B's totals from their own samplers and generators.
    Separate(CountSampler, CountSampler),
}

impl PairSampler {
    /// Differences for n <= 256 samples per problem when the `reruns` pay for building them
    /// ((n + 1)^2 <= reruns: a table costs O(n^2) and saves one draw per rerun), two
    /// [`CountSampler`]s otherwise. Time: O(N n^2) for the differences, O(N n) otherwise.
    pub fn new(n: u32, a: &[f64], b: &[f64], reruns: u64) -> PairSampler {
        let pays = (u64::from(n) + 1).pow(2) <= reruns;
        if n > DIFF_MAX_N || !pays || a.len() != b.len() {
            return PairSampler::Separate(CountSampler::new(n, a), CountSampler::new(n, b));
        }
        let lnf = ln_factorials(n);
        let columns = 2 * n as usize + 1;
        let mut entries = Vec::with_capacity(a.len() * columns);
        for (&pa, &pb) in a.iter().zip(b) {
            entries.extend(AliasTable::new(&difference_pmf(n, pa, pb, &lnf)).packed());
        }
        PairSampler::Difference {
            shifted: CountSampler::Alias { columns, entries },
            offset: a.len() as u64 * u64::from(n),
        }
    }
}

/// pmf of B - A + n for independent A ~ Bin(n, pa) and B ~ Bin(n, pb), over 0..=2n. Time: O(n^2).
fn difference_pmf(n: u32, pa: f64, pb: f64, lnf: &[f64]) -> Vec<f64> {
    let (fa, fb) = (binomial_pmf_with(n, pa, lnf), binomial_pmf_with(n, pb, lnf));
    let mut pmf = vec![0.0; 2 * n as usize + 1];
    for (ca, &qa) in fa.iter().enumerate() {
        // B - A + n = cb + (n - ca) for every cb.
        let row = &mut pmf[n as usize - ca..][..fb.len()];
        row.iter_mut().zip(&fb).for_each(|(x, &qb)| *x += qa * qb);
    }
    pmf
}

/// Integer tallies of paired reruns: how often B's total is below or equal to A's, and the sums
/// of D = T_B - T_A and D^2. Exact, so sums do not depend on the order batches are merged in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PairTally {
    /// Reruns with T_B < T_A.
    pub loss: u64,
    /// Reruns with T_B = T_A.
    pub tie: u64,
    /// Sum of D.
    pub sum: i128,
    /// Sum of D^2.
    pub sum_sq: i128,
}

impl PairTally {
    /// Records one rerun.
    #[inline]
    pub fn add(&mut self, ta: u64, tb: u64) {
        self.add_difference(i128::from(tb) - i128::from(ta));
    }

    /// Records one rerun by its difference D = T_B - T_A.
    #[inline]
    pub fn add_difference(&mut self, d: i128) {
        self.loss += u64::from(d < 0);
        self.tie += u64::from(d == 0);
        self.sum += d;
        self.sum_sq += d * d;
    }

    /// Adds another tally.
    pub fn merge(self, o: PairTally) -> PairTally {
        PairTally {
            loss: self.loss + o.loss,
            tie: self.tie + o.tie,
            sum: self.sum + o.sum,
            sum_sq: self.sum_sq + o.sum_sq,
        }
    }
}

/// Tallies of paired reruns for several cells, in blocks of reruns drawn problem by problem.
/// Differences ([`PairSampler::Difference`]) use the generator keyed by (seed, cell key, batch,
/// 2); separate totals give each model its own, keyed by (seed, cell key, batch, 0 for A or 1 for
/// B) ([`CountSampler::add_totals`]).
pub fn pair_tallies(
    seed: u64,
    cells: &[(&[u64], &PairSampler)],
    reruns: u64,
    progress: &(dyn Fn(u64) + Sync),
) -> Vec<PairTally> {
    per_cell_batches(
        cells.len(),
        reruns,
        progress,
        |ci, batch, count| {
            let (key, sampler) = cells[ci];
            let mut tally = PairTally::default();
            let (mut ta, mut tb) = ([0u64; BLOCK as usize], [0u64; BLOCK as usize]);
            match sampler {
                PairSampler::Difference { shifted, offset } => {
                    let mut rng = stream(seed, &[key, &[batch, 2]].concat());
                    for (_, n) in batches_of(count, BLOCK) {
                        let totals = &mut ta[..n as usize];
                        totals.fill(0);
                        shifted.add_totals(&mut rng, totals);
                        for &t in totals.iter() {
                            tally.add_difference(i128::from(t) - i128::from(*offset));
                        }
                    }
                }
                PairSampler::Separate(a, b) => {
                    let (mut ra, mut rb) = lanes(seed, key, batch);
                    for (_, n) in batches_of(count, BLOCK) {
                        let (ta, tb) = (&mut ta[..n as usize], &mut tb[..n as usize]);
                        ta.fill(0);
                        tb.fill(0);
                        a.add_totals(&mut ra, ta);
                        b.add_totals(&mut rb, tb);
                        for (&x, &y) in ta.iter().zip(tb.iter()) {
                            tally.add(x, y);
                        }
                    }
                }
            }
            tally
        },
        PairTally::merge,
    )
}

/// Runs `work(cell, batch, reruns in it)` on every batch of every cell as one parallel job and
/// merges each cell's results with `merge` (exact, order-free), reporting each batch's reruns to
/// `progress`. One result per cell, in order.
fn per_cell_batches<R, W, M>(
    cells: usize,
    reruns: u64,
    progress: &(dyn Fn(u64) + Sync),
    work: W,
    merge: M,
) -> Vec<R>
where
    R: Send + Sync + Clone + Default,
    W: Fn(usize, u64, u64) -> R + Sync + Send,
    M: Fn(R, R) -> R + Sync + Send,
{
    let tasks: Vec<(usize, u64, u64)> = (0..cells)
        .flat_map(|ci| batches(reruns).map(move |(b, count)| (ci, b, count)))
        .collect();
    run_merged(
        &tasks,
        vec![R::default(); cells],
        |&(ci, batch, count)| {
            let r = work(ci, batch, count);
            progress(count);
            let mut out = vec![R::default(); cells];
            out[ci] = r;
            out
        },
        |a, b| a.into_iter().zip(b).map(|(x, y)| merge(x, y)).collect(),
    )
}

/// The two generators of one batch of a cell.
fn lanes(seed: u64, key: &[u64], batch: u64) -> (Rng, Rng) {
    let mut k = key.to_vec();
    k.extend([batch, 0]);
    let r0 = stream(seed, &k);
    if let Some(last) = k.last_mut() {
        *last = 1;
    }
    (r0, stream(seed, &k))
}

/// One drawn problem's rate: expit(mu + sigma z), z ~ N(0, 1); with `memorised` = (c, r), first
/// a 53-bit uniform u, and r when u < c (no normal drawn then). Without it the stream is used
/// exactly as before contamination existed.
#[inline]
fn population_rate<R: RngCore>(
    rng: &mut R,
    mu: f64,
    sigma: f64,
    memorised: Option<(f64, f64)>,
) -> f64 {
    if let Some((c, r)) = memorised {
        if ((rng.next_u64() >> 11) as f64) < c * TWO_53 {
            return r;
        }
    }
    let z: f64 = StandardNormal.sample(rng);
    expit(mu + sigma * z)
}

/// One rerun's total count when the problems are redrawn: p_i from `population_rate` (a
/// logit-normal draw, or the memorised rate), then c_i ~ Bin(n, p_i).
pub fn random_placement_total<R: RngCore>(
    rng: &mut R,
    problems: usize,
    (mu, sigma, memorised): (f64, f64, Option<(f64, f64)>),
    n: u32,
) -> u64 {
    (0..problems)
        .map(|_| {
            let p = population_rate(rng, mu, sigma, memorised);
            if n == 1 {
                u64::from(((rng.next_u64() >> 11) as f64) < p * TWO_53)
            } else {
                Binomial::new(u64::from(n), p).map_or(0, |b| b.sample(rng))
            }
        })
        .sum()
}

/// One problem's graded count out of n samples, drawn stage by stage: parsed ~ Bin(n, 1 - u)
/// (no draw when u = 0), correct ~ Bin(parsed, p), and with a grader graded = Bin(correct,
/// 1 - fnr) + Bin(parsed - correct, fpr); unparsed samples are never graded correct. Equal in
/// law to Bin(n, p~) with the graded rate of [`SampleGrading::rate`], which it does not use,
/// so the two check each other. Cost: two to four binomial draws.
pub fn staged_count<R: RngCore>(rng: &mut R, p: f64, n: u32, grading: &SampleGrading) -> u64 {
    let n = u64::from(n);
    let parsed = if grading.unparsed > 0.0 {
        binomial(rng, n, 1.0 - grading.unparsed)
    } else {
        n
    };
    let correct = binomial(rng, parsed, p);
    match grading.grader {
        None => correct,
        Some(g) => binomial(rng, correct, 1.0 - g.fnr) + binomial(rng, parsed - correct, g.fpr),
    }
}

/// One Bin(n, p) draw (0 for n = 0); p is a validated probability, where `Binomial::new`
/// cannot fail.
fn binomial<R: RngCore>(rng: &mut R, n: u64, p: f64) -> u64 {
    if n == 0 {
        return 0;
    }
    Binomial::new(n, p).map_or(0, |b| b.sample(rng))
}

/// A histogram of integer totals, stored over the observed range only.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Histogram {
    /// Smallest total the `counts` start at.
    pub offset: u64,
    /// counts\[j\] = reruns with total offset + j.
    pub counts: Vec<u64>,
}

impl Histogram {
    /// Records one total.
    pub fn add(&mut self, t: u64) {
        if self.counts.is_empty() {
            self.offset = t;
            self.counts.push(0);
        }
        if t < self.offset {
            let grow = (self.offset - t) as usize;
            let mut v = vec![0; grow];
            v.append(&mut self.counts);
            self.counts = v;
            self.offset = t;
        }
        let j = (t - self.offset) as usize;
        if j >= self.counts.len() {
            self.counts.resize(j + 1, 0);
        }
        self.counts[j] += 1;
    }

    /// Merges another histogram (exact integer sums, so the order of merging never matters).
    pub fn merge(mut self, other: Histogram) -> Histogram {
        if other.counts.is_empty() {
            return self;
        }
        if self.counts.is_empty() {
            return other;
        }
        let lo = self.offset.min(other.offset);
        let hi =
            (self.offset + self.counts.len() as u64).max(other.offset + other.counts.len() as u64);
        let mut out = vec![0u64; (hi - lo) as usize];
        for (h, o) in [(&self, self.offset), (&other, other.offset)] {
            for (j, c) in h.counts.iter().enumerate() {
                out[(o - lo) as usize + j] += c;
            }
        }
        self.offset = lo;
        self.counts = out;
        self
    }

    /// Number of reruns recorded.
    pub fn reruns(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// (total, reruns) pairs with nonzero counts.
    pub fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(j, &c)| (self.offset + j as u64, c))
    }

    /// Mean, and the central moments m2, m4 (divided by R) of the totals, with exact integer
    /// sums around the offset.
    pub fn moments(&self) -> (f64, f64, f64) {
        let r = self.reruns() as f64;
        let mean = self.iter().map(|(t, c)| t as f64 * c as f64).sum::<f64>() / r;
        let (mut m2, mut m4) = (0.0, 0.0);
        for (t, c) in self.iter() {
            let d = t as f64 - mean;
            m2 += c as f64 * d * d;
            m4 += c as f64 * d * d * d * d;
        }
        (mean, m2 / r, m4 / r)
    }

    /// Share of reruns with total <= t.
    pub fn cdf(&self, t: u64) -> f64 {
        let below: u64 = self.iter().filter(|(x, _)| *x <= t).map(|(_, c)| c).sum();
        below as f64 / self.reruns() as f64
    }

    /// The smallest total whose empirical CDF reaches `prob`.
    pub fn quantile(&self, prob: f64) -> u64 {
        let r = self.reruns() as f64;
        let mut acc = 0u64;
        for (t, c) in self.iter() {
            acc += c;
            if acc as f64 >= prob * r {
                return t;
            }
        }
        self.offset + self.counts.len().saturating_sub(1) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_totals_gives_every_entry_the_total_distribution() {
        use crate::sim::stream::stream;
        let rates = [0.05, 0.5, 0.9, 0.0, 1.0];
        // Bernoulli, alias tables and BTPE.
        for n in [1u32, 5, 5000] {
            let s = CountSampler::new(n, &rates);
            let mut rng = stream(3, &[n.into()]);
            let mut totals = vec![0u64; 20_000];
            s.add_totals(&mut rng, &mut totals);
            let r = totals.len() as f64;
            let nf = f64::from(n);
            let mean: f64 = rates.iter().map(|p| nf * p).sum();
            let var: f64 = rates.iter().map(|p| nf * p * (1.0 - p)).sum();
            let sim_mean = totals.iter().map(|&t| t as f64).sum::<f64>() / r;
            let z = (sim_mean - mean) / (var / r).sqrt();
            assert!(
                z.abs() < 4.5,
                "n = {n}: mean {sim_mean} against {mean}, z = {z}"
            );
            // Entries are independent: the next call continues the stream.
            let mut more = vec![0u64; 20_000];
            s.add_totals(&mut rng, &mut more);
            assert_ne!(totals, more);
        }
    }

    #[test]
    fn difference_pmf_equals_enumeration_of_both_counts() {
        let n = 3u32;
        let lnf = ln_factorials(n);
        let (pa, pb) = (0.3, 0.65);
        let pmf = difference_pmf(n, pa, pb, &lnf);
        let binom = |k: u32, p: f64| {
            let choose = [1.0, 3.0, 3.0, 1.0][k as usize];
            choose * p.powi(k as i32) * (1.0 - p).powi((n - k) as i32)
        };
        let mut brute = [0.0; 7];
        for ca in 0..=n {
            for cb in 0..=n {
                brute[(cb + n - ca) as usize] += binom(ca, pa) * binom(cb, pb);
            }
        }
        for (x, y) in pmf.iter().zip(brute) {
            assert!((x - y).abs() < 1e-15, "{pmf:?} against {brute:?}");
        }
    }

    #[test]
    fn differences_and_separate_totals_both_match_the_exact_head_to_head() {
        use crate::exact::noise::head_to_head;
        let a = [0.05, 0.5, 0.9, 0.0, 1.0, 0.3];
        let b = [0.1, 0.55, 0.85, 0.2, 1.0, 0.3];
        let reruns = 100_000u64;
        let r = reruns as f64;
        for n in [1u32, 3, 16, DIFF_MAX_N + 1] {
            let nf = f64::from(n);
            let diff = PairSampler::new(n, &a, &b, reruns);
            assert_eq!(
                matches!(diff, PairSampler::Difference { .. }),
                n <= DIFF_MAX_N
            );
            assert!(matches!(
                PairSampler::new(n, &a, &b, u64::from(n) * u64::from(n)),
                PairSampler::Separate(..)
            ));
            let separate =
                PairSampler::Separate(CountSampler::new(n, &a), CountSampler::new(n, &b));
            let exact = head_to_head(&a, &b, n);
            let mean: f64 = a.iter().zip(&b).map(|(x, y)| nf * (y - x)).sum();
            let var: f64 = a.iter().chain(&b).map(|p| nf * p * (1.0 - p)).sum();
            for sampler in [&diff, &separate] {
                let t = pair_tallies(7, &[(&[u64::from(n)], sampler)], reruns, &|_| {})[0];
                for (p, hits) in [(exact.loss, t.loss), (exact.tie, t.tie)] {
                    let z = (hits as f64 / r - p) / (p * (1.0 - p) / r).sqrt();
                    assert!(z.abs() < 4.5, "n = {n}: {hits} against {p}, z = {z}");
                }
                let z = (t.sum as f64 / r - mean) / (var / r).sqrt();
                assert!(z.abs() < 4.5, "n = {n}: mean z = {z}");
            }
        }
    }

    #[test]
    fn histogram_merge_is_order_free() {
        let mut a = Histogram::default();
        let mut b = Histogram::default();
        for t in [5, 3, 9, 5] {
            a.add(t);
        }
        for t in [1, 12, 5] {
            b.add(t);
        }
        let ab = a.clone().merge(b.clone());
        assert_eq!(ab, b.merge(a));
        assert_eq!(ab.reruns(), 7);
        assert_eq!(ab.quantile(0.5), 5);
        assert!((ab.cdf(5) - 5.0 / 7.0).abs() < 1e-15);
    }

    /// The staged draw (parse, solve, grade) has the law of Bin(n, p~) with the graded rate:
    /// every count's share within 4.5 binomial SEs of the exact pmf, and the identity grading
    /// is the plain binomial.
    #[test]
    fn staged_counts_follow_the_binomial_of_the_graded_rate() {
        use crate::exact::grader::Grader;
        use crate::exact::maj::binomial_pmf;
        let grading = SampleGrading {
            unparsed: 0.2,
            grader: Some(Grader {
                fpr: 0.1,
                fnr: 0.25,
            }),
        };
        let (p, n, draws) = (0.45, 5u32, 200_000u64);
        let mut rng = stream(3, &[41]);
        let mut hist = vec![0u64; n as usize + 1];
        for _ in 0..draws {
            hist[staged_count(&mut rng, p, n, &grading) as usize] += 1;
        }
        let pmf = binomial_pmf(n, grading.rate(p, 1.0 - p).0);
        for (c, (&h, &f)) in hist.iter().zip(&pmf).enumerate() {
            let se = (f * (1.0 - f) / draws as f64).sqrt();
            let share = h as f64 / draws as f64;
            assert!(
                (share - f).abs() < 4.5 * se,
                "count {c}: {share} vs {f} (se {se})"
            );
        }
    }
}
