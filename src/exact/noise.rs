//! Benchmark-level noise: how far a benchmark score moves between reruns, in closed form.
//!
//! One rerun samples every problem `n` times and scores mean_i c_i / n, where the counts
//! c_i ~ Bin(n, p_i) are independent. The spread of that score across reruns (seed noise), the
//! spread across draws of the problems themselves (question sampling), and the chance that a
//! better model loses a single head-to-head rerun are all exact functions of the rates, computed
//! here so the simulator has something to be checked against.
//!
//! Conventions: rates are `&[f64]` in [0, 1] (0 and 1 allowed), `n` is the number of samples per
//! problem and N = `rates.len()` the number of problems.
//!
//! Why here: the closed forms of `seed-variance`, `vote-spread`, `head-to-head` and the
//! planner. Depends on `model` and the rest of `exact` only.

use crate::exact::grader::SampleGrading;
use crate::exact::maj::binomial_pmf;
use crate::exact::normal;
use crate::exact::quadrature::{AdaptiveSimpson, NormalQuadrature};
use rustfft::num_complex::Complex;
use rustfft::FftPlanner;
use serde::Serialize;

use crate::model::expit;

/// Seed standard deviation of the benchmark score: sqrt(sum_i p_i (1 - p_i) / n) / N.
///
/// The SD of mean_i c_i / n over reruns with fixed problems; it falls as 1 / sqrt(n).
///
/// Time: O(N).
///
/// # Panics
///
/// If `rates` is empty, a rate lies outside [0, 1], or `n` is 0.
pub fn seed_sd(rates: &[f64], n: u32) -> f64 {
    check_rates(rates);
    check_samples(n);
    let bernoulli_variance: f64 = rates.iter().map(|&p| p * (1.0 - p)).sum();
    (bernoulli_variance / f64::from(n)).sqrt() / rates.len() as f64
}

/// Question-sampling standard error: SD(p) / sqrt(N), with the sample SD (ddof = 1) of the rates.
///
/// The floor that more samples per problem cannot lower, because the N problems are themselves a
/// sample from a population of problems. Zero when N = 1 (no spread can be estimated).
///
/// Time: O(N).
///
/// # Panics
///
/// If `rates` is empty or a rate lies outside [0, 1].
pub fn question_se(rates: &[f64]) -> f64 {
    check_rates(rates);
    let n_problems = rates.len();
    if n_problems == 1 {
        return 0.0;
    }
    let mean = rates.iter().sum::<f64>() / n_problems as f64;
    let sum_squares: f64 = rates.iter().map(|&p| (p - mean) * (p - mean)).sum();
    let sample_variance = sum_squares / (n_problems - 1) as f64;
    (sample_variance / n_problems as f64).sqrt()
}

/// Seed SD of a maj@k score: sqrt(sum_i m_i (1 - m_i)) / N, with the losses 1 - m_i given
/// (computed directly, e.g. by [`crate::exact::maj::maj_at_k_all_with_loss`]): when m_i is
/// within 1e-16 of 1, 1 - m_i read off m_i would be 1.1e-16 or 0 instead of, say, 4e-28.
///
/// Each problem's vote is one Bernoulli(m_i) per rerun, with m_i = maj@k of that problem.
///
/// Time: O(N).
///
/// # Panics
///
/// If `win_probs` is empty, the slices differ in length, or a probability lies outside [0, 1].
pub fn vote_seed_sd(win_probs: &[f64], loss_probs: &[f64]) -> f64 {
    check_rates(win_probs);
    check_rates(loss_probs);
    assert_eq!(
        win_probs.len(),
        loss_probs.len(),
        "one loss per win probability"
    );
    let variance: f64 = win_probs.iter().zip(loss_probs).map(|(m, l)| m * l).sum();
    variance.sqrt() / win_probs.len() as f64
}

/// Exact pmf of the benchmark count sum_i Bin(n, p_i) over 0..=n N.
///
/// Each problem's binomial pmf (see [`binomial_pmf`], walked from the mode: each term to about
/// 2 |j - mode| ulps) is combined by a balanced divide-and-conquer
/// convolution: direct summation while the pieces are small, FFT (real pair packed into one
/// complex transform) once they are large. Tiny negative FFT round-off is clamped to 0 and the
/// result renormalised to sum to 1.
///
/// Accuracy: direct convolutions are accurate to relative ~1e-15 per term; FFT convolutions to an
/// absolute ~1e-16 per term, so masses far below that (deep tails) carry no relative accuracy,
/// while CDFs, quantiles and comparison probabilities built from the pmf are accurate to ~1e-12.
///
/// Time: O(n N log(n N) log N); for N = 1,000 and n = 64 (support 64,001) about 40 ms optimised.
///
/// # Panics
///
/// If `rates` is empty, a rate lies outside [0, 1], or `n` is 0.
pub fn count_pmf(rates: &[f64], n: u32) -> Vec<f64> {
    check_rates(rates);
    check_samples(n);
    let pieces = rates.iter().map(|&p| binomial_pmf(n, p)).collect();
    count_pmf_of(pieces)
}

/// Exact pmf of the benchmark count sum_i c_i of independent per-problem counts, each given by
/// its own pmf over 0..=n (e.g. the logit-normal binomial of a run with shared noise,
/// [`crate::exact::run_corr::count_pmf_run`]). The same convolution and accuracy as
/// [`count_pmf`], which is this function on binomial pieces (bit for bit).
///
/// Time: as [`count_pmf`].
///
/// # Panics
///
/// If `pieces` is empty or a piece is empty.
pub fn count_pmf_of(pieces: Vec<Vec<f64>>) -> Vec<f64> {
    assert!(
        !pieces.is_empty() && pieces.iter().all(|p| !p.is_empty()),
        "a benchmark needs at least one problem, each with a count pmf"
    );
    let mut pmf = convolve_all(pieces, &mut FftPlanner::new());
    normalise(&mut pmf);
    pmf
}

/// Outcome probabilities of one head-to-head rerun of model B against model A.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct HeadToHeadOdds {
    /// P(score_B < score_A): B loses the rerun although it may be the better model.
    pub loss: f64,
    /// P(score_B = score_A).
    pub tie: f64,
    /// P(score_B > score_A).
    pub win: f64,
}

impl HeadToHeadOdds {
    /// P(score_B <= score_A), from the smaller side: 1 - win when a win is the rarer outcome
    /// (so a near-certain loss-or-tie is never a hair above 1), loss + tie otherwise.
    pub fn loss_or_tie(&self) -> f64 {
        if self.win < 0.5 {
            1.0 - self.win
        } else {
            self.loss + self.tie
        }
    }
}

/// Exact head-to-head of model B against model A on independent seeds, n samples per problem each.
///
/// With f_A, f_B the count pmfs ([`count_pmf`]) and F_B the CDF of B's count (equal counts are equal
/// scores, both models being scored on the same N problems and n):
/// loss = sum_a f_A(a) F_B(a - 1), tie = sum_a f_A(a) f_B(a), win = sum_a f_A(a) (1 - F_B(a)),
/// with 1 - F_B taken as a suffix sum so no probability is a difference of two near-equal numbers.
/// The three add to 1 within ~1e-12.
///
/// Time: O(n N log(n N) log N); about 80 ms optimised for N = 1,000 and n = 64.
///
/// # Panics
///
/// If the two rate slices differ in length, either is empty, a rate lies outside [0, 1], or `n` is 0.
pub fn head_to_head(rates_a: &[f64], rates_b: &[f64], n: u32) -> HeadToHeadOdds {
    check_same_problems(rates_a, rates_b);
    compare_counts(&count_pmf(rates_a, n), &count_pmf(rates_b, n))
}

/// Mean, variance and fourth central moment of a count with the given pmf over 0, 1, 2, ...
/// (e.g. [`count_pmf_of`]): the exact moments a simulated SD is checked with when the counts
/// are not binomial. Time: O(len).
pub fn pmf_central_moments(pmf: &[f64]) -> (f64, f64, f64) {
    let mean: f64 = pmf.iter().enumerate().map(|(j, q)| j as f64 * q).sum();
    let (mut var, mut mu4) = (0.0, 0.0);
    for (j, q) in pmf.iter().enumerate() {
        let d2 = (j as f64 - mean).powi(2);
        var += d2 * q;
        mu4 += d2 * d2 * q;
    }
    (mean, var, mu4)
}

/// Exact head-to-head of B against A from their benchmark count pmfs (over the same support,
/// e.g. from [`count_pmf_of`] on per-problem pmfs under per-run noise): as [`head_to_head`],
/// which is this function on binomial counts. Time: O(n N).
///
/// # Panics
///
/// If the two pmfs differ in length.
pub fn head_to_head_of(count_a: &[f64], count_b: &[f64]) -> HeadToHeadOdds {
    assert_eq!(count_a.len(), count_b.len(), "both counts over 0..=n N");
    compare_counts(count_a, count_b)
}

/// Normal approximation of [`head_to_head`], with continuity correction.
///
/// The count difference D = C_B - C_A has mean n sum_i (p_i^B - p_i^A) and variance
/// n sum_i (p_i^A q_i^A + p_i^B q_i^B). D is integer, so loss = P(D <= -1) ~ Phi((-1/2 - mean) / sd),
/// win = P(D >= 1) ~ Phi((mean - 1/2) / sd) and tie is the rest. By the Berry–Esseen theorem each of
/// loss and win is off by at most 0.56 sum E|X - EX|^3 / sd^3 over the 2 n N Bernoulli terms
/// (tie by twice that). A zero variance gives the exact point-mass answer.
///
/// For planning when the exact convolution would be too big.
///
/// Time: O(N).
///
/// # Panics
///
/// If the two rate slices differ in length, either is empty, a rate lies outside [0, 1], or `n` is 0.
pub fn diff_normal_approx(rates_a: &[f64], rates_b: &[f64], n: u32) -> HeadToHeadOdds {
    check_same_problems(rates_a, rates_b);
    check_samples(n);
    let samples = f64::from(n);
    let mean = samples * (rates_b.iter().sum::<f64>() - rates_a.iter().sum::<f64>());
    let variance = samples
        * rates_a
            .iter()
            .chain(rates_b)
            .map(|&p| p * (1.0 - p))
            .sum::<f64>();
    if variance == 0.0 {
        return point_mass_outcome(mean);
    }
    let sd = variance.sqrt();
    let loss = normal::cdf((-0.5 - mean) / sd);
    let win = normal::cdf((mean - 0.5) / sd);
    HeadToHeadOdds {
        loss,
        tie: (1.0 - loss - win).max(0.0),
        win,
    }
}

/// The smallest score s = count / (n N) whose CDF under `pmf` reaches `prob`.
///
/// `pmf` is a count pmf from [`count_pmf`] over 0..=n N; `prob` = 0.025 and 0.975 give the exact
/// 95% range of a rerun's score. Should round-off leave the total a hair below `prob`, the largest
/// score 1 is returned.
///
/// Time: O(n N).
///
/// # Panics
///
/// If `pmf.len()` is not n N + 1 or `prob` is not in (0, 1].
pub fn score_quantile(pmf: &[f64], n: u32, n_problems: usize, prob: f64) -> f64 {
    let total_samples = n as usize * n_problems;
    assert_eq!(
        pmf.len(),
        total_samples + 1,
        "a count pmf over 0..=n N has n N + 1 entries"
    );
    assert!(
        prob > 0.0 && prob <= 1.0,
        "quantile probability {prob} must be in (0, 1]"
    );
    let mut cumulative = 0.0;
    for (count, &mass) in pmf.iter().enumerate() {
        cumulative += mass;
        if cumulative >= prob {
            return count as f64 / total_samples as f64;
        }
    }
    1.0
}

/// Exact variance and fourth central moment of a total sum_i Bin(n, p_i) of independent counts:
/// kappa2 = sum n p q, kappa4 = sum n p q (1 - 6 p q), mu4 = kappa4 + 3 kappa2^2. The complements
/// q_i are passed in so a small one is never computed as 1 - p. With n = 1 and the win / loss
/// probabilities of a vote, it is the total of one vote per problem. Time: O(N).
pub fn binomial_sum_moments(rates: &[f64], complements: &[f64], n: u32) -> (f64, f64) {
    let n = f64::from(n);
    let pq: Vec<f64> = rates.iter().zip(complements).map(|(p, q)| p * q).collect();
    let k2: f64 = pq.iter().map(|pq| n * pq).sum();
    let k4: f64 = pq.iter().map(|pq| n * pq * (1.0 - 6.0 * pq)).sum();
    (k2, k4 + 3.0 * k2 * k2)
}

/// Standard error of a sample SD over `reruns` draws of a variable with variance `var` and
/// fourth central moment `mu4`: Var(s^2) ~ (mu4 - var^2 (R - 3) / (R - 1)) / R, then the delta
/// method s = sqrt(s^2). Zero for a zero variance. Time: O(1).
pub fn sd_standard_error(var: f64, mu4: f64, reruns: u64) -> f64 {
    if var <= 0.0 {
        return 0.0;
    }
    let r = reruns as f64;
    let var_s2 = ((mu4 - var * var * (r - 3.0) / (r - 1.0)) / r).max(0.0);
    var_s2.sqrt() / (2.0 * var.sqrt())
}

/// P(count <= t) from a count pmf over 0..=n N: the sum of the first t + 1 entries, capped at 1
/// against round-off. Time: O(t).
pub fn count_cdf(pmf: &[f64], t: u64) -> f64 {
    pmf.iter().take(t as usize + 1).sum::<f64>().min(1.0)
}

/// Moments of a problem's rate under random placement: `(E[p], E[p (1 - p)], Var(p))` for
/// p = expit(mu + sigma Z), Z ~ N(0, 1).
///
/// Each is an integral against the normal density over |z| <= 12 (the mass beyond is ~4e-33),
/// computed by adaptive Simpson on half-unit panels with an extra break where the logistic turns
/// (z = -mu / sigma), so steep curves for large sigma are not stepped over. Var(p) is integrated
/// as `E[(p - E p)^2]`, not `E[p^2] - E[p]^2`, to avoid cancellation. Accurate to ~1e-12 absolute.
/// sigma = 0 gives (expit(mu), expit(mu) expit(-mu), 0) exactly.
///
/// Time: O(1) (a few thousand evaluations of expit).
///
/// # Panics
///
/// If `mu` is not finite or `sigma` is negative or not finite.
pub fn random_placement_moments(mu: f64, sigma: f64) -> (f64, f64, f64) {
    assert!(mu.is_finite(), "logit mean {mu} must be finite");
    assert!(
        sigma.is_finite() && sigma >= 0.0,
        "logit SD {sigma} must be finite and >= 0"
    );
    if sigma == 0.0 {
        return (expit(mu), expit(mu) * expit(-mu), 0.0);
    }
    let rule = AdaptiveSimpson::with_break(-mu / sigma);
    let mean_p = rule.expect(|z| expit(mu + sigma * z));
    let mean_pq = rule.expect(|z| expit(mu + sigma * z) * expit(-mu - sigma * z));
    let var_p = rule.expect(|z| {
        let deviation = expit(mu + sigma * z) - mean_p;
        deviation * deviation
    });
    (mean_p, mean_pq, var_p)
}

/// The moments of one problem's rate p over the population a redrawn benchmark samples from:
/// E\[p\], E[1 - p] (integrated directly, not as 1 - E\[p\]), E[p (1 - p)] and Var(p).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PopulationMoments {
    /// E\[p\].
    pub mean_p: f64,
    /// E[1 - p].
    pub mean_q: f64,
    /// E[p (1 - p)].
    pub mean_pq: f64,
    /// Var(p).
    pub var_p: f64,
}

impl PopulationMoments {
    /// p = expit(mu + sigma Z), Z ~ N(0, 1) ([`random_placement_moments`], twice: E[1 - p] is
    /// E\[p\] of the mirrored population).
    pub fn logit_normal(mu: f64, sigma: f64) -> PopulationMoments {
        let (mean_p, mean_pq, var_p) = random_placement_moments(mu, sigma);
        let (mean_q, _, _) = random_placement_moments(-mu, sigma);
        PopulationMoments {
            mean_p,
            mean_q,
            mean_pq,
            var_p,
        }
    }

    /// The mixture in which each drawn problem is memorised with probability c and then solved
    /// at rate r: E\[p\] = c r + (1 - c) E\[p\], likewise E[1 - p] and E[p (1 - p)], and
    /// Var(p) = (1 - c) Var(p) + c (1 - c) (r - E\[p\])^2 (within plus between the two parts;
    /// a memorised rate does not vary). Every term is non-negative. c = 0 returns `self`.
    pub fn memorised(self, c: f64, r: f64) -> PopulationMoments {
        if c == 0.0 {
            return self;
        }
        let rest = 1.0 - c;
        PopulationMoments {
            mean_p: c * r + rest * self.mean_p,
            mean_q: c * (1.0 - r) + rest * self.mean_q,
            mean_pq: c * r * (1.0 - r) + rest * self.mean_pq,
            var_p: rest * self.var_p + c * rest * (r - self.mean_p).powi(2),
        }
    }
}

/// Random placement, the samples graded ([`SampleGrading`]: unparsed answers and a noisy
/// grader; the identity for neither): (mean score, total SD, question-sampling SE) of the score
/// of N problems redrawn from the population every rerun, n samples each. The graded rate
/// p~ = a + b p is affine in p, so E[p~] = a + b E\[p\], Var(p~) = b^2 Var(p) and
/// E[p~ (1 - p~)] comes from E\[p\], E[1 - p] and E[p (1 - p)] ([`SampleGrading::mean_pq`]);
/// the total SD is sqrt(E[p~ (1 - p~)] / (n N) + Var(p~) / N), seed noise plus question noise,
/// and the question-sampling SE sqrt(Var(p~) / N) (the floor more samples cannot lower).
///
/// Time: O(1).
///
/// # Panics
///
/// If `n` or `n_problems` is 0.
pub fn graded_random_placement(
    population: &PopulationMoments,
    n: u32,
    n_problems: usize,
    grading: &SampleGrading,
) -> (f64, f64, f64) {
    check_samples(n);
    assert!(n_problems >= 1, "a benchmark needs at least one problem");
    let (a, b, _) = grading.affine();
    let problems = n_problems as f64;
    let var = b * b * population.var_p;
    let pq = grading.mean_pq(population.mean_p, population.mean_q, population.mean_pq);
    (
        a + b * population.mean_p,
        (pq / (f64::from(n) * problems) + var / problems).sqrt(),
        (var / problems).sqrt(),
    )
}

// ---------------------------------------------------------------------------------------------
// Preconditions

fn check_rates(rates: &[f64]) {
    assert!(!rates.is_empty(), "a benchmark needs at least one problem");
    if let Some(bad) = rates.iter().find(|p| !(0.0..=1.0).contains(*p)) {
        panic!("rate {bad} is not a probability in [0, 1]");
    }
}

fn check_samples(n: u32) {
    assert!(n >= 1, "samples per problem must be at least 1");
}

fn check_same_problems(rates_a: &[f64], rates_b: &[f64]) {
    assert_eq!(
        rates_a.len(),
        rates_b.len(),
        "both models must be scored on the same problems"
    );
    check_rates(rates_a);
    check_rates(rates_b);
}

// ---------------------------------------------------------------------------------------------
// Binomial pmf and convolution

/// Convolves all pieces pairwise, level by level, so every convolution joins pieces of similar size.
fn convolve_all(mut pieces: Vec<Vec<f64>>, planner: &mut FftPlanner<f64>) -> Vec<f64> {
    while pieces.len() > 1 {
        let mut next = Vec::with_capacity(pieces.len().div_ceil(2));
        let mut level = pieces.into_iter();
        while let Some(left) = level.next() {
            match level.next() {
                Some(right) => next.push(convolve(&left, &right, planner)),
                None => next.push(left),
            }
        }
        pieces = next;
    }
    pieces.pop().unwrap_or_else(|| vec![1.0])
}

/// Direct sums cost |a| |b|; an FFT of size m (a power of two) costs ~ m log2 m times a constant
/// that this factor stands in for.
const FFT_COST_FACTOR: f64 = 4.0;

/// Convolution of two pmfs, by whichever of direct summation and FFT is cheaper.
fn convolve(a: &[f64], b: &[f64], planner: &mut FftPlanner<f64>) -> Vec<f64> {
    let size = (a.len() + b.len() - 1).next_power_of_two() as f64;
    if (a.len() as f64) * (b.len() as f64) <= FFT_COST_FACTOR * size * size.log2() {
        direct_convolve(a, b)
    } else {
        fft_convolve(a, b, planner)
    }
}

fn direct_convolve(a: &[f64], b: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; a.len() + b.len() - 1];
    for (i, &x) in a.iter().enumerate() {
        if x == 0.0 {
            continue;
        }
        for (slot, &y) in out[i..].iter_mut().zip(b) {
            *slot += x * y;
        }
    }
    out
}

/// FFT convolution of two real sequences with one forward and one inverse transform: z = a + i b,
/// and with Z its transform, A_k B_k = (Z_k^2 - conj(Z_{m-k})^2) / (4 i). Negative round-off is
/// clamped to 0.
fn fft_convolve(a: &[f64], b: &[f64], planner: &mut FftPlanner<f64>) -> Vec<f64> {
    let out_len = a.len() + b.len() - 1;
    let size = out_len.next_power_of_two();
    let padded = |x: &[f64]| {
        x.iter()
            .copied()
            .chain(std::iter::repeat(0.0))
            .take(size)
            .collect::<Vec<_>>()
    };
    let mut packed: Vec<Complex<f64>> = padded(a)
        .into_iter()
        .zip(padded(b))
        .map(|(re, im)| Complex::new(re, im))
        .collect();
    planner.plan_fft_forward(size).process(&mut packed);
    let quarter_over_i = Complex::new(0.0, -0.25);
    let mut product: Vec<Complex<f64>> = (0..size)
        .map(|k| {
            let z = packed[k];
            let mirror = packed[(size - k) % size].conj();
            (z * z - mirror * mirror) * quarter_over_i
        })
        .collect();
    planner.plan_fft_inverse(size).process(&mut product);
    let scale = 1.0 / size as f64;
    product[..out_len]
        .iter()
        .map(|c| (c.re * scale).max(0.0))
        .collect()
}

fn normalise(pmf: &mut [f64]) {
    let total: f64 = pmf.iter().sum();
    for mass in pmf.iter_mut() {
        *mass /= total;
    }
}

/// loss / tie / win of count B against count A from their pmfs over the same support.
fn compare_counts(f_a: &[f64], f_b: &[f64]) -> HeadToHeadOdds {
    // above[c] = P(C_B > c), a suffix sum.
    let mut above = vec![0.0; f_b.len()];
    for c in (0..f_b.len().saturating_sub(1)).rev() {
        above[c] = above[c + 1] + f_b[c + 1];
    }
    let (mut loss, mut tie, mut win) = (0.0, 0.0, 0.0);
    let mut below = 0.0; // P(C_B < c)
    for ((&mass_a, &mass_b), &above_b) in f_a.iter().zip(f_b).zip(&above) {
        loss += mass_a * below;
        tie += mass_a * mass_b;
        win += mass_a * above_b;
        below += mass_b;
    }
    // The pmfs sum to 1 up to rounding: the three outcomes are scaled to their total, so none
    // passes 1 (a near-certain loss summed to 1.0000000000000002 made its SE NaN).
    let total = loss + tie + win;
    if total > 0.0 && total != 1.0 {
        (loss, tie, win) = (loss / total, tie / total, win / total);
    }
    HeadToHeadOdds { loss, tie, win }
}

fn point_mass_outcome(difference: f64) -> HeadToHeadOdds {
    let indicator = |holds: bool| if holds { 1.0 } else { 0.0 };
    HeadToHeadOdds {
        loss: indicator(difference < 0.0),
        tie: indicator(difference == 0.0),
        win: indicator(difference > 0.0),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use statrs::distribution::{ContinuousCDF, Normal};

    /// Rates of the canonical `note` benchmark: p_i = expit(0.2 + 2.2 Phi^-1((i - 1/2) / 30)).
    pub(crate) fn note_rates() -> Vec<f64> {
        let normal = Normal::standard();
        (1..=30)
            .map(|i| expit(0.2 + 2.2 * normal.inverse_cdf((i as f64 - 0.5) / 30.0)))
            .collect()
    }

    /// p' = expit(logit(p) + shift); rates of 0 and 1 stay put.
    pub(crate) fn shift_logits(rates: &[f64], shift: f64) -> Vec<f64> {
        rates
            .iter()
            .map(|&p| {
                if p == 0.0 || p == 1.0 {
                    p
                } else {
                    expit((p / (1.0 - p)).ln() + shift)
                }
            })
            .collect()
    }

    /// Deterministic spread of rates over (0, 1) for large-N tests.
    fn spread_rates(n_problems: usize) -> Vec<f64> {
        let normal = Normal::standard();
        (0..n_problems)
            .map(|i| {
                let u = (i as f64 + 0.5) / n_problems as f64;
                expit(0.3 + 1.8 * normal.inverse_cdf(u))
            })
            .collect()
    }

    fn assert_close(actual: f64, expected: f64, tolerance: f64) {
        assert!(
            (actual - expected).abs() <= tolerance,
            "{actual} differs from {expected} by more than {tolerance}"
        );
    }

    /// Identities hold to round-off.
    const IDENTITY: f64 = 1e-12;

    /// All 2^(n N) sample outcomes of one rerun, as (count, probability).
    fn enumerate_counts(rates: &[f64], n: u32) -> Vec<(usize, f64)> {
        let draws: Vec<f64> = rates
            .iter()
            .flat_map(|&p| std::iter::repeat_n(p, n as usize))
            .collect();
        (0u32..1 << draws.len())
            .map(|bits| {
                draws
                    .iter()
                    .enumerate()
                    .fold((0, 1.0), |(count, prob), (j, &p)| {
                        if bits >> j & 1 == 1 {
                            (count + 1, prob * p)
                        } else {
                            (count, prob * (1.0 - p))
                        }
                    })
            })
            .collect()
    }

    fn pmf_moments(pmf: &[f64]) -> (f64, f64) {
        let mean: f64 = pmf.iter().enumerate().map(|(c, m)| c as f64 * m).sum();
        let variance = pmf
            .iter()
            .enumerate()
            .map(|(c, m)| (c as f64 - mean).powi(2) * m)
            .sum();
        (mean, variance)
    }

    // --- note figures -----------------------------------------------------------------------

    #[test]
    fn note_rates_match_published_range_and_mean() {
        let rates = note_rates();
        let percent = |x: f64| (1000.0 * x).round() / 10.0;
        assert_eq!(percent(rates[0]), 1.1);
        assert_eq!(percent(rates.iter().sum::<f64>() / 30.0), 52.9);
        // Exact top rate 99.2473%: the published "99.3%" is 99.25 rounded up once more.
        assert_close(100.0 * rates[29], 99.247_3, 1e-4);
    }

    #[test]
    fn note_seed_sd_reproduces_published_points() {
        let rates = note_rates();
        let points = |n| 100.0 * seed_sd(&rates, n);
        let rounded = |n| (points(n) * 10.0).round() / 10.0;
        assert_close(points(1), 6.889_675, 1e-6);
        assert_close(points(4), 3.444_838, 1e-6);
        assert_close(points(16), 1.722_419, 1e-6);
        assert_close(points(64), 0.861_209, 1e-6);
        assert_eq!(
            [rounded(1), rounded(4), rounded(16), rounded(64)],
            [6.9, 3.4, 1.7, 0.9]
        );
    }

    #[test]
    fn note_question_se_reproduces_published_points() {
        let points = 100.0 * question_se(&note_rates());
        assert_close(points, 6.068_094, 1e-6);
        assert_eq!((points * 10.0).round() / 10.0, 6.1);
    }

    // --- seed SD, question SE, vote SD ------------------------------------------------------

    #[test]
    fn sd_standard_error_of_a_normal_is_sd_over_root_2r() {
        // For a normal variable mu4 = 3 var^2, so se(s) ~ sigma / sqrt(2 (R - 1)).
        let se = sd_standard_error(4.0, 48.0, 10_001);
        assert!((se - 2.0 / (2.0f64 * 10_000.0).sqrt()).abs() < 1e-6);
    }

    #[test]
    fn binomial_sum_moments_match_a_pmf() {
        // Bin(3, 0.2) + Bin(3, 0.7): the moments of the convolved pmf.
        let (rates, n) = ([0.2, 0.7], 3);
        let complements = [0.8, 0.3];
        let (var, mu4) = binomial_sum_moments(&rates, &complements, n);
        let pmf = count_pmf(&rates, n);
        let mean: f64 = pmf.iter().enumerate().map(|(t, m)| t as f64 * m).sum();
        let central = |k: i32| -> f64 {
            pmf.iter()
                .enumerate()
                .map(|(t, m)| (t as f64 - mean).powi(k) * m)
                .sum()
        };
        assert!((var - central(2)).abs() < 1e-12, "{var}");
        assert!((mu4 - central(4)).abs() < 1e-12, "{mu4}");
    }

    #[test]
    fn seed_sd_falls_as_one_over_root_n() {
        let rates = note_rates();
        for n in [1, 3, 7] {
            let ratio = seed_sd(&rates, n) / seed_sd(&rates, 4 * n);
            assert_close(ratio, 2.0, IDENTITY);
        }
    }

    #[test]
    fn seed_sd_is_zero_for_certain_problems_and_matches_hand_value() {
        assert_eq!(seed_sd(&[0.0, 1.0, 1.0], 8), 0.0);
        // sqrt((0.25 + 0.21) / 4) / 2
        assert_close(
            seed_sd(&[0.5, 0.3], 4),
            (0.46f64 / 4.0).sqrt() / 2.0,
            IDENTITY,
        );
    }

    #[test]
    fn question_se_of_one_problem_is_zero_and_matches_hand_value() {
        assert_eq!(question_se(&[0.4]), 0.0);
        // rates 0.2, 0.4, 0.9: mean 0.5, squares 0.09 + 0.01 + 0.16 = 0.26, s^2 = 0.13.
        assert_close(
            question_se(&[0.2, 0.4, 0.9]),
            (0.13f64 / 3.0).sqrt(),
            IDENTITY,
        );
    }

    #[test]
    fn vote_seed_sd_is_the_one_sample_seed_sd() {
        let probs = [0.9, 0.1, 0.55, 1.0];
        let losses = probs.map(|m| 1.0 - m);
        assert_eq!(vote_seed_sd(&probs, &losses), seed_sd(&probs, 1));
        let expected = (0.09f64 + 0.09 + 0.2475).sqrt() / 4.0;
        assert_close(vote_seed_sd(&probs, &losses), expected, IDENTITY);
    }

    #[test]
    #[should_panic(expected = "not a probability")]
    fn rates_outside_unit_interval_panic() {
        seed_sd(&[0.5, 1.2], 1);
    }

    #[test]
    #[should_panic(expected = "at least one problem")]
    fn empty_rates_panic() {
        question_se(&[]);
    }

    // --- binomial and count pmfs ------------------------------------------------------------

    #[test]
    fn binomial_pmf_matches_closed_form() {
        let (n, p) = (5u32, 0.3f64);
        let choose = [1.0, 5.0, 10.0, 10.0, 5.0, 1.0];
        for (k, &mass) in binomial_pmf(n, p).iter().enumerate() {
            let expected = choose[k] * p.powi(k as i32) * (1.0 - p).powi(5 - k as i32);
            assert_close(mass, expected, IDENTITY);
        }
    }

    #[test]
    fn binomial_pmf_of_certain_rates_is_an_exact_point_mass() {
        assert_eq!(binomial_pmf(3, 0.0), vec![1.0, 0.0, 0.0, 0.0]);
        assert_eq!(binomial_pmf(3, 1.0), vec![0.0, 0.0, 0.0, 1.0]);
    }

    #[test]
    fn binomial_pmf_survives_extreme_rates_and_sizes() {
        for (n, p) in [
            (10_000u32, 0.5),
            (64, 1e-300),
            (64, 1.0 - 1e-16),
            (5_000, 0.999),
        ] {
            let pmf = binomial_pmf(n, p);
            assert!(pmf.iter().all(|m| m.is_finite() && *m >= 0.0));
            assert_close(pmf.iter().sum(), 1.0, IDENTITY);
            let (mean, _) = pmf_moments(&pmf);
            assert_close(mean / f64::from(n), p, IDENTITY);
        }
    }

    #[test]
    fn count_pmf_matches_enumeration_of_every_sample() {
        let rates = [0.15, 0.5, 0.85];
        let mut brute = vec![0.0; 7];
        for (count, prob) in enumerate_counts(&rates, 2) {
            brute[count] += prob;
        }
        let pmf = count_pmf(&rates, 2);
        assert_eq!(pmf.len(), 7);
        for (exact, enumerated) in pmf.iter().zip(&brute) {
            assert_close(*exact, *enumerated, IDENTITY);
        }
    }

    #[test]
    fn count_pmf_shifts_by_certain_problems() {
        let pmf = count_pmf(&[1.0, 0.25, 0.0, 1.0], 2);
        let single = binomial_pmf(2, 0.25);
        assert_eq!(pmf.len(), 9);
        for (count, &mass) in pmf.iter().enumerate() {
            let expected = count
                .checked_sub(4)
                .and_then(|k| single.get(k))
                .copied()
                .unwrap_or(0.0);
            assert_close(mass, expected, IDENTITY);
        }
    }

    #[test]
    fn fft_convolution_agrees_with_direct_sums() {
        let mut planner = FftPlanner::new();
        let a = count_pmf(&spread_rates(40), 16);
        let b = count_pmf(&spread_rates(25), 16);
        let direct = direct_convolve(&a, &b);
        let fft = fft_convolve(&a, &b, &mut planner);
        assert_eq!(direct.len(), fft.len());
        for (x, y) in direct.iter().zip(&fft) {
            // Absolute FFT round-off per term is of order eps; 1e-15 leaves room for log2(size).
            assert_close(*x, *y, 1e-15);
        }
    }

    #[test]
    fn large_count_pmf_has_binomial_mean_and_variance() {
        let rates = spread_rates(1_000);
        let n = 64;
        let pmf = count_pmf(&rates, n);
        assert_eq!(pmf.len(), 64_001);
        assert!(pmf.iter().all(|m| *m >= 0.0));
        assert_close(pmf.iter().sum(), 1.0, IDENTITY);
        let (mean, variance) = pmf_moments(&pmf);
        let samples = f64::from(n);
        let exact_mean = samples * rates.iter().sum::<f64>();
        let exact_variance = samples * rates.iter().map(|p| p * (1.0 - p)).sum::<f64>();
        assert_close(mean / exact_mean, 1.0, IDENTITY);
        assert_close(variance / exact_variance, 1.0, 1e-10);
    }

    // --- head-to-head -----------------------------------------------------------------------

    #[test]
    fn head_to_head_matches_enumeration_of_every_outcome() {
        let rates_a = [0.2, 0.55, 0.9];
        let rates_b = [0.35, 0.6, 0.75];
        let (outcomes_a, outcomes_b) =
            (enumerate_counts(&rates_a, 2), enumerate_counts(&rates_b, 2));
        let mut brute = HeadToHeadOdds {
            loss: 0.0,
            tie: 0.0,
            win: 0.0,
        };
        for &(count_a, prob_a) in &outcomes_a {
            for &(count_b, prob_b) in &outcomes_b {
                let slot = match count_b.cmp(&count_a) {
                    std::cmp::Ordering::Less => &mut brute.loss,
                    std::cmp::Ordering::Equal => &mut brute.tie,
                    std::cmp::Ordering::Greater => &mut brute.win,
                };
                *slot += prob_a * prob_b;
            }
        }
        let exact = head_to_head(&rates_a, &rates_b, 2);
        assert_close(exact.loss, brute.loss, IDENTITY);
        assert_close(exact.tie, brute.tie, IDENTITY);
        assert_close(exact.win, brute.win, IDENTITY);
    }

    #[test]
    fn head_to_head_at_full_scale_sums_to_one() {
        let rates_a = spread_rates(1_000);
        let rates_b = shift_logits(&rates_a, 0.05);
        let outcome = head_to_head(&rates_a, &rates_b, 64);
        assert_close(outcome.loss + outcome.tie + outcome.win, 1.0, 1e-9);
        assert!(outcome.win > outcome.loss);
    }

    #[test]
    fn head_to_head_is_antisymmetric() {
        let rates_a = note_rates();
        let rates_b = shift_logits(&rates_a, 0.21);
        let forward = head_to_head(&rates_a, &rates_b, 4);
        let backward = head_to_head(&rates_b, &rates_a, 4);
        assert_close(forward.loss, backward.win, IDENTITY);
        assert_close(forward.tie, backward.tie, IDENTITY);
        let itself = head_to_head(&rates_a, &rates_a, 4);
        assert_close(itself.loss, itself.win, IDENTITY);
    }

    #[test]
    fn note_head_to_head_loss_falls_with_samples() {
        let rates_a = note_rates();
        let rates_b = shift_logits(&rates_a, 0.21);
        let losses: Vec<f64> = [1, 4, 16, 64]
            .iter()
            .map(|&n| head_to_head(&rates_a, &rates_b, n).loss)
            .collect();
        assert!(losses.windows(2).all(|pair| pair[1] < pair[0]));
        // Regression values: B is 2.98 points better yet loses 31.6% / 24.2% / 10.2% / 0.67%.
        let expected = [0.315_632_880, 0.242_174_850, 0.102_268_362, 0.006_707_621];
        for (loss, value) in losses.iter().zip(expected) {
            assert_close(*loss, value, 1e-9);
        }
    }

    #[test]
    fn normal_approximation_lands_near_exact_head_to_head() {
        let rates_a = spread_rates(300);
        let rates_b = shift_logits(&rates_a, 0.1);
        let n = 4;
        let exact = head_to_head(&rates_a, &rates_b, n);
        let approx = diff_normal_approx(&rates_a, &rates_b, n);
        // Berry–Esseen with Shevtsova's constant 0.56 over all 2 n N Bernoulli terms.
        let (third, variance) =
            rates_a
                .iter()
                .chain(&rates_b)
                .fold((0.0, 0.0), |(third, variance), &p| {
                    let q = 1.0 - p;
                    (third + p * q * (p * p + q * q), variance + p * q)
                });
        let samples = f64::from(n);
        let bound = 0.56 * samples * third / (samples * variance).powf(1.5);
        assert_close(approx.loss, exact.loss, bound);
        assert_close(approx.win, exact.win, bound);
        assert_close(approx.tie, exact.tie, 2.0 * bound);
    }

    #[test]
    fn normal_approximation_of_a_certain_difference_is_exact() {
        let outcome = diff_normal_approx(&[1.0, 0.0], &[1.0, 1.0], 3);
        assert_eq!(
            outcome,
            HeadToHeadOdds {
                loss: 0.0,
                tie: 0.0,
                win: 1.0
            }
        );
    }

    // --- quantiles --------------------------------------------------------------------------

    #[test]
    fn score_quantile_steps_through_the_cdf() {
        // One problem, n = 2, p = 1/2: pmf 1/4, 1/2, 1/4 over scores 0, 1/2, 1.
        let pmf = count_pmf(&[0.5], 2);
        assert_eq!(score_quantile(&pmf, 2, 1, 0.25), 0.0);
        assert_eq!(score_quantile(&pmf, 2, 1, 0.26), 0.5);
        assert_eq!(score_quantile(&pmf, 2, 1, 0.75), 0.5);
        assert_eq!(score_quantile(&pmf, 2, 1, 0.76), 1.0);
        assert_eq!(score_quantile(&pmf, 2, 1, 1.0), 1.0);
    }

    #[test]
    fn score_quantiles_bracket_the_mean_of_the_note_benchmark() {
        let rates = note_rates();
        let pmf = count_pmf(&rates, 4);
        let lower = score_quantile(&pmf, 4, 30, 0.025);
        let upper = score_quantile(&pmf, 4, 30, 0.975);
        let mean = rates.iter().sum::<f64>() / 30.0;
        let sd = seed_sd(&rates, 4);
        assert!(lower < mean && mean < upper);
        // The range is about +-1.96 SD; one count step (1/120) of slack either side.
        assert_close(upper - lower, 2.0 * 1.96 * sd, 2.0 / 120.0);
    }

    #[test]
    #[should_panic(expected = "n N + 1 entries")]
    fn score_quantile_rejects_a_pmf_of_the_wrong_size() {
        score_quantile(&[0.5, 0.5], 2, 1, 0.5);
    }

    // --- random placement -------------------------------------------------------------------

    /// Midpoint Riemann sum of E[f(Z)] on |z| <= 12 with 400,000 cells.
    fn riemann_expectation(f: impl Fn(f64) -> f64) -> f64 {
        let cells = 400_000;
        let width = 24.0 / cells as f64;
        (0..cells)
            .map(|j| {
                let z = -12.0 + (j as f64 + 0.5) * width;
                f(z) * (-0.5 * z * z).exp()
            })
            .sum::<f64>()
            * width
            / (2.0 * std::f64::consts::PI).sqrt()
    }

    #[test]
    fn random_placement_moments_match_a_fine_riemann_sum() {
        for (mu, sigma) in [(0.2, 2.2), (-1.5, 0.7), (3.0, 6.0), (0.0, 40.0)] {
            let (mean_p, mean_pq, var_p) = random_placement_moments(mu, sigma);
            let p = |z: f64| expit(mu + sigma * z);
            let brute_mean = riemann_expectation(p);
            let brute_pq = riemann_expectation(|z| p(z) * (1.0 - p(z)));
            let brute_var = riemann_expectation(|z| p(z) * p(z)) - brute_mean * brute_mean;
            assert_close(mean_p, brute_mean, 1e-10);
            assert_close(mean_pq, brute_pq, 1e-10);
            assert_close(var_p, brute_var, 1e-10);
            // E[p] = E[p^2] + E[p q] holds exactly for every p.
            assert_close(mean_p, var_p + mean_p * mean_p + mean_pq, IDENTITY);
        }
    }

    #[test]
    fn random_placement_moments_follow_the_delta_method_for_small_sigma() {
        let (mu, sigma) = (0.7, 1e-3);
        let (p, q) = (expit(mu), expit(-mu));
        let slope = p * q;
        let curvature = p * q * (q - p);
        let (mean_p, mean_pq, var_p) = random_placement_moments(mu, sigma);
        // Second-order delta method; the next terms are O(sigma^4) = 1e-12.
        assert_close(mean_p, p + 0.5 * sigma * sigma * curvature, 1e-12);
        assert_close(var_p, sigma * sigma * slope * slope, 1e-12);
        let pq_curvature = p * q * ((q - p).powi(2) - 2.0 * p * q);
        assert_close(mean_pq, p * q + 0.5 * sigma * sigma * pq_curvature, 1e-12);
        assert_eq!(random_placement_moments(mu, 0.0), (p, p * q, 0.0));
    }

    /// Random placement without grading or memorised problems.
    fn plain_random_placement(mu: f64, sigma: f64, n: u32, problems: usize) -> (f64, f64, f64) {
        let identity = crate::exact::grader::SampleGrading {
            unparsed: 0.0,
            grader: None,
        };
        let population = PopulationMoments::logit_normal(mu, sigma);
        graded_random_placement(&population, n, problems, &identity)
    }

    /// A memorised share: the mixture's moments against the same integrals taken over the
    /// mixture directly (a point mass at r with weight c, the population with weight 1 - c).
    #[test]
    fn memorised_population_moments_match_the_mixture_integrals() {
        use crate::exact::shift::tests::trapezoid;
        let (mu, sigma) = (0.3, 1.9);
        for (c, r) in [(0.2, 0.98), (0.5, 0.1), (1.0, 0.7), (0.0, 0.9)] {
            let got = PopulationMoments::logit_normal(mu, sigma).memorised(c, r);
            let p = |z: f64| expit(mu + sigma * z);
            let mean = c * r + (1.0 - c) * trapezoid(p);
            let second = c * r * r + (1.0 - c) * trapezoid(|z| p(z) * p(z));
            let pq = c * r * (1.0 - r) + (1.0 - c) * trapezoid(|z| p(z) * expit(-mu - sigma * z));
            assert_close(got.mean_p, mean, 1e-10);
            assert_close(got.mean_q, 1.0 - mean, 1e-10);
            assert_close(got.mean_pq, pq, 1e-10);
            assert_close(got.var_p, second - mean * mean, 1e-10);
        }
        let none = PopulationMoments::logit_normal(mu, sigma);
        assert_eq!(none.memorised(0.0, 0.98), none);
    }

    #[test]
    fn random_placement_sd_without_spread_is_the_seed_sd() {
        let (mu, n, n_problems) = (0.4, 8, 50);
        let rates = vec![expit(mu); n_problems];
        assert_close(
            plain_random_placement(mu, 0.0, n, n_problems).1,
            seed_sd(&rates, n),
            IDENTITY,
        );
    }

    #[test]
    fn random_placement_sd_adds_question_noise_to_seed_noise() {
        let (mu, sigma, n, n_problems) = (0.2, 2.2, 4, 30);
        let (_, mean_pq, var_p) = random_placement_moments(mu, sigma);
        let total = plain_random_placement(mu, sigma, n, n_problems).1;
        let seed_part = (mean_pq / 120.0).sqrt();
        let question_part = (var_p / 30.0).sqrt();
        assert_close(
            total * total,
            seed_part.powi(2) + question_part.powi(2),
            IDENTITY,
        );
        assert!(total > seed_part && total > question_part);
    }

    #[test]
    fn random_placement_question_se_is_the_population_sd_over_root_n() {
        // Var(p) by a plain midpoint rule over z in [-12, 12], independent of the library's
        // quadrature.
        let (mu, sigma, n_problems) = (0.2, 2.2, 30);
        let steps = 200_000;
        let h = 24.0 / f64::from(steps);
        let (mut m1, mut m2) = (0.0, 0.0);
        for i in 0..steps {
            let z = -12.0 + (f64::from(i) + 0.5) * h;
            let w = (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt() * h;
            let p = 1.0 / (1.0 + (-(mu + sigma * z)).exp());
            m1 += w * p;
            m2 += w * p * p;
        }
        let direct = ((m2 - m1 * m1) / 30.0).sqrt();
        assert_close(
            plain_random_placement(mu, sigma, 1, n_problems).2,
            direct,
            1e-9,
        );
    }

    /// Random placement with graded samples against a direct integral of the graded rate over
    /// the logit-normal population (plain trapezoid).
    #[test]
    fn graded_random_placement_matches_direct_integration() {
        use crate::exact::grader::{Grader, SampleGrading};
        use crate::exact::shift::tests::trapezoid;
        for grading in [
            SampleGrading {
                unparsed: 0.25,
                grader: None,
            },
            SampleGrading {
                unparsed: 0.0,
                grader: Some(Grader {
                    fpr: 0.05,
                    fnr: 0.3,
                }),
            },
        ] {
            let (mu, sigma, n, problems) = (0.4, 1.7, 4u32, 30usize);
            let g = |z: f64| grading.rate(expit(mu + sigma * z), expit(-mu - sigma * z));
            let mean = trapezoid(|z| g(z).0);
            let var = trapezoid(|z| (g(z).0 - mean).powi(2));
            let pq = trapezoid(|z| g(z).0 * g(z).1);
            let sd = (pq / (f64::from(n) * problems as f64) + var / problems as f64).sqrt();
            let population = PopulationMoments::logit_normal(mu, sigma);
            let (m, s, q) = graded_random_placement(&population, n, problems, &grading);
            assert!((m - mean).abs() < 1e-10, "{m} {mean}");
            assert!((s - sd).abs() < 1e-10 * sd, "{s} {sd}");
            assert!((q - (var / problems as f64).sqrt()).abs() < 1e-10 * q);
        }
    }
}
