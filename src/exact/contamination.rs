//! Contamination: the public-minus-fresh gap of pass@1, exactly, and the smallest fresh set that
//! detects it.
//!
//! A public benchmark of N problems and a fresh one of M problems are drawn from the same
//! logit-normal population (mu, sigma) of problems. A share c (`contaminated`) of the public
//! problems is memorised by the model, which solves those at rate r (`memorized_rate`); the fresh
//! set has none. Each problem is sampled n times; each score is the mean of c_i / n.
//!
//! One problem's count pmf is a mixture: with probability c, Bin(n, r); otherwise
//! E_p[Bin(n, p)] over the population (Gauss–Hermite quadrature,
//! [`run_corr::mixture_count_pmf`]). Problems are independent and identically distributed, so the
//! public count X is the N-fold convolution power of that pmf and the fresh count Y the M-fold
//! power of the population pmf (direct convolution by repeated squaring, no FFT: every entry
//! keeps its relative accuracy). The gap is
//!
//! G = X / (n N) - Y / (n M) = D / (n N M), D = X M - Y N (an integer),
//!
//! and P(D > t) = sum_y P(Y = y) P(X > floor((t + y N) / M)), with P(X > u) a suffix sum: the
//! exact distribution of the gap through its survival function. E\[G\] = c (r - E\[p\]).
//!
//! Detection: "public mean minus fresh mean > threshold", the threshold the smallest lattice point
//! with false-alarm rate (c = 0) at most alpha; power is P(D > t) at the given c. The test is
//! one-sided: memorising helps only when r > E\[p\].
use crate::exact::grader::SampleGrading;
use crate::exact::quadrature::AdaptiveKronrod;
use crate::exact::{noise, run_corr};
use crate::model::expit;
use crate::numerics::root::first_true;
use statrs::distribution::{ContinuousCDF, Normal};

/// The parameters of a contamination comparison.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Contamination {
    /// Logit mean of the problem population.
    pub mu: f64,
    /// Logit SD of the problem population.
    pub sigma: f64,
    /// SD tau of the model's own per-problem logit deviation (`shift_sd`): the model's logit
    /// on a problem is mu + sigma z + tau e, so one model's rates follow the logit-normal of
    /// SD [`Contamination::spread`] = sqrt(sigma^2 + tau^2) (at most [`run_corr::MAX_OMEGA`]).
    pub shift_sd: f64,
    /// Samples per problem.
    pub n: u32,
    /// Share c of public problems memorised, in [0, 1].
    pub contaminated: f64,
    /// Solve rate r on memorised problems, in [0, 1].
    pub memorized_rate: f64,
    /// How each sample is parsed and graded (unparsed answers, a noisy grader): every count is
    /// then of the graded rate p~ = a + b p ([`SampleGrading::rate`]). The identity (the
    /// default) keeps every formula, bit for bit.
    pub grading: SampleGrading,
}

impl Contamination {
    /// The logit SD of the model's rate on a problem drawn from the population,
    /// sqrt(sigma^2 + tau^2): every count pmf of one model depends on sigma and tau only
    /// through it (sigma itself when tau = 0, bit for bit).
    pub fn spread(&self) -> f64 {
        self.sigma.hypot(self.shift_sd)
    }

    /// The count pmf over 0..=n of one problem drawn from the population (no contamination).
    /// Time: O(NODES n).
    pub fn population_pmf(&self) -> Vec<f64> {
        assert!(self.n >= 1, "samples per problem must be at least 1");
        if !self.grading.is_identity() {
            // E_z[Bin(n, p~(expit(mu + sigma z)))] by the same rule as the true pmf.
            let g = self.grading;
            let graded = |p: f64| g.rate(p, 1.0 - p).0;
            if self.spread() == 0.0 {
                return crate::exact::maj::binomial_pmf(self.n, graded(expit(self.mu)));
            }
            let (mu, sigma, n) = (self.mu, self.spread(), self.n);
            return AdaptiveKronrod::RUN_NOISE.expect_many(n as usize + 1, |z, out| {
                out.copy_from_slice(&crate::exact::maj::binomial_pmf(
                    n,
                    graded(expit(mu + sigma * z)),
                ));
            });
        }
        if self.spread() == 0.0 {
            return crate::exact::maj::binomial_pmf(self.n, expit(self.mu));
        }
        run_corr::mixture_count_pmf(self.mu, self.spread(), self.n)
    }

    /// The graded rate of a memorised problem, r~ (r itself for the identity grading).
    pub fn graded_memorized_rate(&self) -> f64 {
        let r = self.memorized_rate;
        if self.grading.is_identity() {
            r
        } else {
            self.grading.rate(r, 1.0 - r).0
        }
    }

    /// The count pmf of one public problem: c Bin(n, r) + (1 - c) population pmf (c = 0 gives
    /// the population pmf unchanged). Time: O(NODES n).
    pub fn public_pmf(&self) -> Vec<f64> {
        let (c, r) = (self.contaminated, self.memorized_rate);
        assert!(
            (0.0..=1.0).contains(&c),
            "contaminated {c} must be in [0, 1]"
        );
        assert!(
            (0.0..=1.0).contains(&r),
            "memorized_rate {r} must be in [0, 1]"
        );
        let population = self.population_pmf();
        if c == 0.0 {
            return population;
        }
        let memorised = crate::exact::maj::binomial_pmf(self.n, self.graded_memorized_rate());
        population
            .iter()
            .zip(&memorised)
            .map(|(p, m)| (1.0 - c) * p + c * m)
            .collect()
    }

    /// SD of the gap G = X / (n N) - Y / (n M) over reruns (public and fresh sets redrawn):
    /// sqrt(Var x / (n^2 N) + Var y / (n^2 M)) with Var x, Var y the variances of one public and
    /// one fresh problem's count, from their pmfs. Time: O(quadrature nodes n).
    pub fn gap_sd(&self, public_problems: usize, fresh_problems: usize) -> f64 {
        let var = |pmf: &[f64]| noise::pmf_central_moments(pmf).1;
        let n2 = f64::from(self.n).powi(2);
        (var(&self.public_pmf()) / (n2 * public_problems as f64)
            + var(&self.population_pmf()) / (n2 * fresh_problems as f64))
            .sqrt()
    }

    /// E\[gap\] = c (r - E\[p\]), with E\[p\] the population pass@1
    /// ([`noise::random_placement_moments`]); graded, c (r~ - E\[p~\]) = c b (r - E\[p\]) with
    /// b the slope of p~ = a + b p ([`SampleGrading::affine`]). Time: O(1).
    pub fn expected_gap(&self) -> f64 {
        let (mean_p, _, _) = noise::random_placement_moments(self.mu, self.spread());
        if self.grading.is_identity() {
            return self.contaminated * (self.memorized_rate - mean_p);
        }
        let (_, b, _) = self.grading.affine();
        self.contaminated * b * (self.memorized_rate - mean_p)
    }
}

/// The pmf of the sum of `times` >= 1 independent copies of a count with pmf `piece`, by
/// repeated squaring with direct convolution. Time: O((times |piece|)^2) at most.
///
/// # Panics
/// If `times` is 0 or `piece` is empty.
pub fn convolution_power(piece: &[f64], times: usize) -> Vec<f64> {
    assert!(times >= 1 && !piece.is_empty(), "need at least one piece");
    let mut result: Option<Vec<f64>> = None;
    let mut base = piece.to_vec();
    let mut e = times;
    loop {
        if e & 1 == 1 {
            result = Some(match result {
                None => base.clone(),
                Some(r) => convolve(&r, &base),
            });
        }
        e >>= 1;
        if e == 0 {
            break;
        }
        base = convolve(&base, &base);
    }
    result.unwrap_or_else(|| vec![1.0])
}

/// Direct convolution of two pmfs. Time: O(|a| |b|).
pub fn convolve(a: &[f64], b: &[f64]) -> Vec<f64> {
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

/// The exact distribution of the gap D = X M - Y N between a public count X (N problems) and a
/// fresh count Y (M problems), n samples each: G = D / (n N M).
#[derive(Debug, Clone)]
pub struct GapDistribution {
    /// N.
    public_problems: usize,
    /// M.
    fresh_problems: usize,
    /// n.
    n: u32,
    /// P(X <= x), x = 0..=n N (prefix sums).
    public_cdf: Vec<f64>,
    /// P(X > x), x = 0..=n N (suffix sums, not 1 - cdf).
    public_sf: Vec<f64>,
    /// P(Y = y), y = 0..=n M.
    fresh_pmf: Vec<f64>,
}

impl GapDistribution {
    /// From the public and fresh count pmfs (over 0..=n N and 0..=n M). Time: O(n (N + M)).
    ///
    /// # Panics
    /// If the pmf lengths do not match n N + 1 and n M + 1.
    pub fn new(public_count: &[f64], fresh_count: Vec<f64>, n: u32) -> GapDistribution {
        let nn = n as usize;
        assert!(nn >= 1, "samples per problem must be at least 1");
        assert!(
            public_count.len() > 1 && fresh_count.len() > 1,
            "at least one problem on each side"
        );
        let public_problems = (public_count.len() - 1) / nn;
        let fresh_problems = (fresh_count.len() - 1) / nn;
        assert_eq!(
            public_count.len(),
            public_problems * nn + 1,
            "public pmf length"
        );
        assert_eq!(
            fresh_count.len(),
            fresh_problems * nn + 1,
            "fresh pmf length"
        );
        let mut public_cdf = Vec::with_capacity(public_count.len());
        let mut acc = 0.0;
        for &q in public_count {
            acc += q;
            public_cdf.push(acc);
        }
        let mut public_sf = vec![0.0; public_count.len()];
        for x in (0..public_count.len() - 1).rev() {
            public_sf[x] = public_sf[x + 1] + public_count[x + 1];
        }
        GapDistribution {
            public_problems,
            fresh_problems,
            n,
            public_cdf,
            public_sf,
            fresh_pmf: fresh_count,
        }
    }

    /// The gap in score units of the integer difference d: d / (n N M).
    pub fn gap_of(&self, d: i64) -> f64 {
        d as f64 / (f64::from(self.n) * self.public_problems as f64 * self.fresh_problems as f64)
    }

    /// (P(D > t), P(D <= t)), each summed from its own terms. Time: O(n M).
    pub fn exceeds(&self, t: i64) -> (f64, f64) {
        let (big_n, big_m) = (self.public_problems as i64, self.fresh_problems as i64);
        let top = self.public_sf.len() as i64 - 1;
        let (mut above, mut below) = (0.0, 0.0);
        for (y, &fy) in self.fresh_pmf.iter().enumerate() {
            if fy == 0.0 {
                continue;
            }
            // X M > t + y N  <=>  X > floor((t + y N) / M).
            let u = (t + y as i64 * big_n).div_euclid(big_m);
            let (sf, cdf) = if u < 0 {
                (1.0, 0.0)
            } else if u >= top {
                (0.0, 1.0)
            } else {
                (self.public_sf[u as usize], self.public_cdf[u as usize])
            };
            above += fy * sf;
            below += fy * cdf;
        }
        (above, below)
    }

    /// The smallest integer t with P(D > t) <= alpha (alpha in (0, 1)), by bisection on the
    /// nonincreasing survival function. Time: O(n M log(n N M)).
    pub fn threshold(&self, alpha: f64) -> i64 {
        assert!(
            alpha > 0.0 && alpha < 1.0,
            "alpha {alpha} must be in (0, 1)"
        );
        let n = i64::from(self.n);
        let (big_n, big_m) = (self.public_problems as i64, self.fresh_problems as i64);
        // P(D > lo) = 1 > alpha; P(D > hi) = 0 <= alpha.
        let (lo, hi) = (-(n * big_m * big_n) - 1, n * big_n * big_m);
        first_true(lo, hi, |t| self.exceeds(t).0 <= alpha)
    }
}

/// One detection design: fresh set size, threshold, false-alarm rate and power.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Detection {
    /// Fresh problems M.
    pub fresh_problems: usize,
    /// Threshold on D = X M - Y N: contamination is flagged when D > threshold.
    pub threshold: i64,
    /// The same threshold as a gap of scores, threshold / (n N M).
    pub threshold_gap: f64,
    /// P(flag | c = 0), at most alpha.
    pub false_alarm: f64,
    /// P(flag | c).
    pub power: f64,
    /// P(no flag | c), summed directly.
    pub miss: f64,
}

fn detection_from(null: &GapDistribution, alt: &GapDistribution, alpha: f64) -> Detection {
    let threshold = null.threshold(alpha);
    let (power, miss) = alt.exceeds(threshold);
    Detection {
        fresh_problems: null.fresh_problems,
        threshold,
        threshold_gap: null.gap_of(threshold),
        false_alarm: null.exceeds(threshold).0,
        power,
        miss,
    }
}

/// The detection design for N public and M fresh problems at false-alarm rate alpha.
/// Time: O((n N)^2 + (n M)^2 + n M log(n N M)).
pub fn detection(
    model: &Contamination,
    public_problems: usize,
    fresh_problems: usize,
    alpha: f64,
) -> Detection {
    let population = model.population_pmf();
    let fresh = convolution_power(&population, fresh_problems);
    let null = GapDistribution::new(
        &convolution_power(&population, public_problems),
        fresh.clone(),
        model.n,
    );
    let alt = GapDistribution::new(
        &convolution_power(&model.public_pmf(), public_problems),
        fresh,
        model.n,
    );
    detection_from(&null, &alt, alpha)
}

/// The smallest fresh set M in 1..=`max_fresh` whose test at false-alarm rate alpha has power at
/// least `target`, scanning M upwards (the fresh pmf grows by one convolution per step). Power
/// is not exactly monotone in M (the lattice of the gap moves with M), so this is the first such
/// M, not one from which on power stays above target. `None` when no M up to `max_fresh` reaches
/// it. Time: O((n N)^2 + max_fresh^2 n^2 + max_fresh n M log(n N M)).
pub fn smallest_fresh_set(
    model: &Contamination,
    public_problems: usize,
    alpha: f64,
    target: f64,
    max_fresh: usize,
) -> Option<Detection> {
    let population = model.population_pmf();
    let null_public = convolution_power(&population, public_problems);
    let alt_public = convolution_power(&model.public_pmf(), public_problems);
    let mut fresh = vec![1.0];
    for m in 1..=max_fresh {
        fresh = convolve(&fresh, &population);
        let null = GapDistribution::new(&null_public, fresh.clone(), model.n);
        let alt = GapDistribution::new(&alt_public, fresh.clone(), model.n);
        let d = detection_from(&null, &alt, alpha);
        debug_assert_eq!(d.fresh_problems, m);
        if d.power >= target {
            return Some(d);
        }
    }
    None
}

/// Normal approximation of the power (a sanity check of the exact one, not a substitute):
/// G ~ N(E G, Var X / (n N)^2 + Var Y / (n M)^2), threshold z_{1 - alpha} times the null SD.
pub fn normal_power(
    model: &Contamination,
    public_problems: usize,
    fresh_problems: usize,
    alpha: f64,
) -> f64 {
    let moments = |pmf: &[f64]| {
        let mean: f64 = pmf.iter().enumerate().map(|(j, q)| j as f64 * q).sum();
        pmf.iter()
            .enumerate()
            .map(|(j, q)| (j as f64 - mean).powi(2) * q)
            .sum::<f64>()
    };
    let n = f64::from(model.n);
    let (big_n, big_m) = (public_problems as f64, fresh_problems as f64);
    let var0 = moments(&model.population_pmf());
    let var1 = moments(&model.public_pmf());
    let sd_null = (var0 / (n * n * big_n) + var0 / (n * n * big_m)).sqrt();
    let sd_alt = (var1 / (n * n * big_n) + var0 / (n * n * big_m)).sqrt();
    let z = Normal::standard().inverse_cdf(1.0 - alpha);
    crate::exact::normal::sf((z * sd_null - model.expected_gap()) / sd_alt)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn example(c: f64) -> Contamination {
        Contamination {
            mu: 0.2,
            sigma: 2.2,
            shift_sd: 0.0,
            n: 2,
            contaminated: c,
            memorized_rate: 0.98,
            grading: SampleGrading::default(),
        }
    }

    #[test]
    fn convolution_power_matches_repeated_convolution() {
        let piece = [0.2, 0.5, 0.3];
        let mut naive = vec![1.0];
        for times in 1..=9 {
            naive = convolve(&naive, &piece);
            let fast = convolution_power(&piece, times);
            assert_eq!(fast.len(), naive.len());
            for (a, b) in fast.iter().zip(&naive) {
                assert!((a - b).abs() <= 1e-14 * b, "{times}: {a} vs {b}");
            }
        }
    }

    /// Brute force: enumerate every public and fresh count on a tiny case.
    #[test]
    fn gap_survival_matches_enumeration_of_every_count() {
        let model = example(0.3);
        let (big_n, big_m, n) = (3usize, 2usize, model.n);
        let public_piece = model.public_pmf();
        let fresh_piece = model.population_pmf();
        let g = GapDistribution::new(
            &convolution_power(&public_piece, big_n),
            convolution_power(&fresh_piece, big_m),
            n,
        );
        // Enumerate (x_1..x_N, y_1..y_M) problem by problem.
        let mut cases: Vec<(i64, f64)> = vec![(0, 1.0)];
        for _ in 0..big_n {
            cases = cases
                .iter()
                .flat_map(|&(d, q)| {
                    public_piece
                        .iter()
                        .enumerate()
                        .map(move |(x, &px)| (d + (x * big_m) as i64, q * px))
                })
                .collect();
        }
        for _ in 0..big_m {
            cases = cases
                .iter()
                .flat_map(|&(d, q)| {
                    fresh_piece
                        .iter()
                        .enumerate()
                        .map(move |(y, &py)| (d - (y * big_n) as i64, q * py))
                })
                .collect();
        }
        for t in -15..=15 {
            let above: f64 = cases.iter().filter(|c| c.0 > t).map(|c| c.1).sum();
            let below: f64 = cases.iter().filter(|c| c.0 <= t).map(|c| c.1).sum();
            let (a, b) = g.exceeds(t);
            assert!((a - above).abs() < 1e-14, "t {t}: {a} vs {above}");
            assert!((b - below).abs() < 1e-14, "t {t}: {b} vs {below}");
        }
    }

    #[test]
    fn expected_gap_is_the_mean_of_the_exact_distribution() {
        let model = example(0.2);
        let (pubp, frp) = (model.public_pmf(), model.population_pmf());
        let mean = |pmf: &[f64]| -> f64 {
            pmf.iter()
                .enumerate()
                .map(|(j, q)| j as f64 * q)
                .sum::<f64>()
                / f64::from(model.n)
        };
        // Population mean by Gauss–Hermite against the adaptive Simpson of noise.rs.
        let gap = mean(&pubp) - mean(&frp);
        assert!((gap - model.expected_gap()).abs() < 1e-13, "{gap}");
        assert_eq!(example(0.0).expected_gap(), 0.0);
        assert_eq!(example(0.0).public_pmf(), example(0.0).population_pmf());
    }

    #[test]
    fn graded_count_pmfs_equal_the_brute_force_mixture_of_graded_binomials() {
        // Unparsed answers and a grader: each count is Bin(n, p~) with p~ = a + b p; the pmf of
        // a population problem is E_z[Bin(n, p~)], checked entry by entry against composite
        // Simpson (an independent rule) at 1e-12 relative.
        use crate::exact::grader::Grader;
        let mut model = example(0.3);
        model.grading = SampleGrading {
            unparsed: 0.1,
            grader: Some(Grader { fpr: 0.2, fnr: 0.1 }),
        };
        let g = model.grading;
        let pop = model.population_pmf();
        for (j, &q) in pop.iter().enumerate() {
            let brute = run_corr::tests::brute_force(|z| {
                let p = expit(model.mu + model.sigma * z);
                crate::exact::maj::binomial_pmf(model.n, g.rate(p, 1.0 - p).0)[j]
            });
            assert!((q - brute).abs() <= 1e-12 * brute, "{j}: {q} vs {brute}");
        }
        // The memorised part is Bin(n, r~); the exact mean gap is c b (r - E[p]).
        let r = g.rate(0.98, 0.02).0;
        let public = model.public_pmf();
        let memorised = crate::exact::maj::binomial_pmf(model.n, r);
        for j in 0..public.len() {
            let want = 0.7 * pop[j] + 0.3 * memorised[j];
            assert!((public[j] - want).abs() <= 1e-15, "{j}");
        }
        let mean = |pmf: &[f64]| -> f64 {
            pmf.iter()
                .enumerate()
                .map(|(j, q)| j as f64 * q)
                .sum::<f64>()
                / f64::from(model.n)
        };
        let gap = mean(&public) - mean(&pop);
        assert!((gap - model.expected_gap()).abs() < 1e-13, "{gap}");
        let (_, b, _) = g.affine();
        let truth = example(0.3).expected_gap();
        assert!((model.expected_gap() - b * truth).abs() < 1e-15);
    }

    #[test]
    fn threshold_keeps_the_false_alarm_rate_and_is_the_smallest() {
        let model = example(0.0);
        let pop = model.population_pmf();
        let g = GapDistribution::new(
            &convolution_power(&pop, 40),
            convolution_power(&pop, 25),
            model.n,
        );
        let t = g.threshold(0.05);
        assert!(g.exceeds(t).0 <= 0.05);
        assert!(g.exceeds(t - 1).0 > 0.05);
    }

    #[test]
    fn power_grows_with_contamination_and_meets_the_target_at_the_smallest_fresh_set() {
        let big_n = 100;
        let low = detection(&example(0.05), big_n, 100, 0.05);
        let high = detection(&example(0.3), big_n, 100, 0.05);
        assert!(high.power > low.power);
        assert!(low.false_alarm <= 0.05);
        assert!((high.power + high.miss - 1.0).abs() < 1e-12);
        let found = smallest_fresh_set(&example(0.3), big_n, 0.05, 0.8, 400).expect("reachable");
        assert!(found.power >= 0.8 && found.false_alarm <= 0.05);
        let m = found.fresh_problems;
        for smaller in 1..m {
            assert!(
                detection(&example(0.3), big_n, smaller, 0.05).power < 0.8,
                "M = {smaller}"
            );
        }
        let again = detection(&example(0.3), big_n, m, 0.05);
        assert_eq!(again.threshold, found.threshold);
        assert!((again.power - found.power).abs() < 1e-12);
    }

    /// Sanity only: the normal approximation lands near the exact power on a large design.
    #[test]
    fn normal_approximation_lands_near_the_exact_power() {
        let model = example(0.15);
        let exact = detection(&model, 300, 300, 0.05).power;
        let approx = normal_power(&model, 300, 300, 0.05);
        assert!(
            (exact - approx).abs() < 0.03,
            "exact {exact} vs normal {approx}"
        );
    }
}
