//! Token budgets: what a cap on trace length does to accuracy and cost, in closed form.
//!
//! A trace's length L is lognormal, ln L ~ N(mu_log, s^2), with median e^mu_log. Correct traces on
//! problem i have median L0 (1 + g d_i), wrong ones w times that, where d_i = 1 - p_i is the
//! difficulty of the problem in the benchmark (before any model shift). A trace longer than the
//! budget B ends with no answer, so the cap turns a would-be answer into a miss with probability
//! 1 - F(B).
//!
//! Why here: the closed forms every `budget` and `cost` number is checked against. Depends on
//! `model` (trace-length parameters, vote rules) and the rest of `exact` only.

use crate::exact::grader::SampleGrading;
#[cfg(doc)]
use crate::exact::maj::maj_at_k_all;
use crate::exact::maj::{binomial_pmf, conditional_win_loss, win_given_counts};
use crate::exact::modes::{maj_at_k_modes, Extraction};
use crate::exact::normal;
pub use crate::model::TraceLengths;
use crate::model::VoteRule;
use crate::numerics::root::{bisect, Side, Stop};

/// P(L <= x) for L lognormal with the given median and log-SD s: Phi((ln x - ln median) / s).
///
/// x <= 0 gives 0 and x = infinity gives 1; s = 0 is the point mass at the median.
///
/// Time: O(1).
///
/// # Panics
///
/// If `median` is not positive and finite or `s` is negative or not finite.
pub fn lognormal_cdf(x: f64, median: f64, s: f64) -> f64 {
    match locate(x, median, s) {
        Position::Z(z) => normal::cdf(z),
        Position::Certain { below } => f64::from(u8::from(below)),
    }
}

/// Where x sits in a lognormal with the given median and log-SD s.
enum Position {
    /// The standardised log-length z = (ln x - ln median) / s.
    Z(f64),
    /// P(L <= x) is exactly 1 (`below`) or exactly 0: x <= 0, x = infinity, or s = 0.
    Certain { below: bool },
}

/// The edge cases shared by [`lognormal_cdf`] and [`lognormal_sf`], each answered exactly, so
/// each function computes its own tail directly.
fn locate(x: f64, median: f64, s: f64) -> Position {
    check_lognormal(median, s);
    if x <= 0.0 {
        return Position::Certain { below: false };
    }
    if x == f64::INFINITY {
        return Position::Certain { below: true };
    }
    if s == 0.0 {
        return Position::Certain { below: x >= median };
    }
    Position::Z((x / median).ln() / s)
}

/// P(L > x) = 1 - [`lognormal_cdf`], computed directly (no digits lost when it is small).
///
/// Time: O(1).
///
/// # Panics
///
/// As [`lognormal_cdf`].
pub fn lognormal_sf(x: f64, median: f64, s: f64) -> f64 {
    match locate(x, median, s) {
        Position::Z(z) => normal::sf(z),
        Position::Certain { below } => f64::from(u8::from(!below)),
    }
}

/// E[min(L, B)] for L lognormal with the given median and log-SD s (mu = ln median):
/// e^(mu + s^2/2) Phi((ln B - mu - s^2) / s) + B (1 - Phi((ln B - mu) / s)).
///
/// B = infinity gives the mean e^(mu + s^2/2); B <= 0 gives 0; s = 0 gives min(median, B).
///
/// Time: O(1).
///
/// # Panics
///
/// If `median` is not positive and finite or `s` is negative or not finite.
pub fn expected_min(median: f64, s: f64, budget: f64) -> f64 {
    check_lognormal(median, s);
    let mean = median * (0.5 * s * s).exp();
    if budget <= 0.0 {
        return 0.0;
    }
    if budget == f64::INFINITY {
        return mean;
    }
    if s == 0.0 {
        return median.min(budget);
    }
    let z = (budget / median).ln() / s;
    mean * normal::cdf(z - s) + budget * normal::sf(z)
}

/// E[L 1(L <= B)], the mean of the traces that finish within the budget (a partial mean):
/// e^(mu + s^2/2) Phi((ln B - mu - s^2) / s).
///
/// B = infinity gives the mean; B <= 0 gives 0; s = 0 gives the median when B >= median.
///
/// Time: O(1).
///
/// # Panics
///
/// If `median` is not positive and finite or `s` is negative or not finite.
pub fn partial_mean(median: f64, s: f64, budget: f64) -> f64 {
    check_lognormal(median, s);
    let mean = median * (0.5 * s * s).exp();
    if budget <= 0.0 {
        return 0.0;
    }
    if budget == f64::INFINITY {
        return mean;
    }
    if s == 0.0 {
        return if budget >= median { median } else { 0.0 };
    }
    mean * normal::cdf((budget / median).ln() / s - s)
}

/// E[min(L, B)^2] for L lognormal with the given median and log-SD s (mu = ln median):
/// e^(2 mu + 2 s^2) Phi((ln B - mu - 2 s^2) / s) + B^2 (1 - Phi((ln B - mu) / s)).
///
/// With [`expected_min`] it gives the variance of the tokens one sample spends under the cap,
/// from which the Monte Carlo standard error of a simulated token count follows.
/// B = infinity gives E[L^2] = e^(2 mu + 2 s^2); B <= 0 gives 0; s = 0 gives min(median, B)^2.
///
/// Time: O(1).
///
/// # Panics
///
/// If `median` is not positive and finite or `s` is negative or not finite.
pub fn expected_min_sq(median: f64, s: f64, budget: f64) -> f64 {
    check_lognormal(median, s);
    let second = median * median * (2.0 * s * s).exp();
    if budget <= 0.0 {
        return 0.0;
    }
    if budget == f64::INFINITY {
        return second;
    }
    if s == 0.0 {
        return median.min(budget).powi(2);
    }
    let z = (budget / median).ln() / s;
    second * normal::cdf(z - 2.0 * s) + budget * budget * normal::sf(z)
}

/// Accuracy of one sample under the cap: Acc(B) = mean_i p_i F_c,i(B).
///
/// `rates` are the model's p_i; `difficulty` the benchmark's d_i = 1 - p_i before the model's
/// shift. Rises from 0 to mean_i p_i (pass@1) as B grows.
///
/// Time: O(N).
///
/// # Panics
///
/// If the slices differ in length or are empty, or as [`lognormal_cdf`] for any problem.
pub fn accuracy_at_budget(
    rates: &[f64],
    difficulty: &[f64],
    lengths: &TraceLengths,
    budget: f64,
) -> f64 {
    mean_over_problems(rates, difficulty, |p, d| {
        p * lognormal_cdf(budget, lengths.correct_median(d), lengths.sigma)
    })
}

/// Share of traces the cap cuts off: mean_i [p_i (1 - F_c,i(B)) + (1 - p_i) (1 - F_w,i(B))].
///
/// Time: O(N).
///
/// # Panics
///
/// If the slices differ in length or are empty, or as [`lognormal_cdf`] for any problem.
pub fn truncation_rate(
    rates: &[f64],
    difficulty: &[f64],
    lengths: &TraceLengths,
    budget: f64,
) -> f64 {
    mean_over_problems(rates, difficulty, |p, d| {
        let correct_cut = lognormal_sf(budget, lengths.correct_median(d), lengths.sigma);
        let wrong_cut = lognormal_sf(budget, lengths.wrong_median(d), lengths.sigma);
        p * correct_cut + (1.0 - p) * wrong_cut
    })
}

/// (p F_c(B), 1 - p F_c(B)) of one problem: the chance that one sample is correct under the
/// cap, and its complement (1 - p) + p (1 - F_c(B)) summed from its parts, never read off a
/// number near 1. Time: O(1).
///
/// # Panics
///
/// As [`lognormal_cdf`].
pub fn accuracy_and_miss(
    p: f64,
    difficulty: f64,
    lengths: &TraceLengths,
    budget: f64,
) -> (f64, f64) {
    let median = lengths.correct_median(difficulty);
    let kept = lognormal_cdf(budget, median, lengths.sigma);
    let cut = lognormal_sf(budget, median, lengths.sigma);
    (p * kept, (1.0 - p) + p * cut)
}

/// (graded Acc, its complement) of one problem under the cap with its answers parsed and
/// graded ([`SampleGrading`]): a cut trace has no answer and an unparsed one none either, so
/// neither is ever graded correct; a kept, parsed answer is graded correct with 1 - fnr when
/// true and fpr when wrong:
/// (1 - u) [(1 - fnr) p F_c(B) + fpr (1 - p) F_w(B)], and the complement
/// u + (1 - u) [fnr p F_c + (1 - fpr) (1 - p) F_w + p (1 - F_c) + (1 - p) (1 - F_w)], each
/// from its own terms. The identity grading is [`accuracy_and_miss`] bit for bit. Time: O(1).
///
/// # Panics
///
/// As [`lognormal_cdf`].
pub fn graded_accuracy_and_miss(
    p: f64,
    difficulty: f64,
    lengths: &TraceLengths,
    budget: f64,
    grading: &SampleGrading,
) -> (f64, f64) {
    if grading.is_identity() {
        return accuracy_and_miss(p, difficulty, lengths, budget);
    }
    let (c, w) = (
        lengths.correct_median(difficulty),
        lengths.wrong_median(difficulty),
    );
    let s = lengths.sigma;
    let q = 1.0 - p;
    let (correct_kept, wrong_kept) = (
        p * lognormal_cdf(budget, c, s),
        q * lognormal_cdf(budget, w, s),
    );
    let cut = p * lognormal_sf(budget, c, s) + q * lognormal_sf(budget, w, s);
    let (fpr, fnr) = grading.grader.map_or((0.0, 0.0), |g| (g.fpr, g.fnr));
    let u = grading.unparsed;
    (
        (1.0 - u) * ((1.0 - fnr) * correct_kept + fpr * wrong_kept),
        u + (1.0 - u) * (fnr * correct_kept + (1.0 - fpr) * wrong_kept + cut),
    )
}

/// Graded Acc(B) over the benchmark: the mean of [`graded_accuracy_and_miss`]; the identity
/// grading is [`accuracy_at_budget`] bit for bit. Time: O(N).
///
/// # Panics
///
/// As [`accuracy_at_budget`].
pub fn graded_accuracy_at_budget(
    rates: &[f64],
    difficulty: &[f64],
    lengths: &TraceLengths,
    budget: f64,
    grading: &SampleGrading,
) -> f64 {
    if grading.is_identity() {
        return accuracy_at_budget(rates, difficulty, lengths, budget);
    }
    mean_over_problems(rates, difficulty, |p, d| {
        graded_accuracy_and_miss(p, d, lengths, budget, grading).0
    })
}

/// (share cut, share kept) of one problem's traces under the cap, each summed from its parts:
/// p (1 - F_c) + (1 - p) (1 - F_w) and p F_c + (1 - p) F_w. Time: O(1).
///
/// # Panics
///
/// As [`lognormal_cdf`].
pub fn cut_and_kept(p: f64, difficulty: f64, lengths: &TraceLengths, budget: f64) -> (f64, f64) {
    let (c, w) = (
        lengths.correct_median(difficulty),
        lengths.wrong_median(difficulty),
    );
    let s = lengths.sigma;
    (
        p * lognormal_sf(budget, c, s) + (1.0 - p) * lognormal_sf(budget, w, s),
        p * lognormal_cdf(budget, c, s) + (1.0 - p) * lognormal_cdf(budget, w, s),
    )
}

/// Expected tokens spent on one sample under the cap:
/// mean_i [p_i E[min(L_c,i, B)] + (1 - p_i) E[min(L_w,i, B)]].
///
/// Time: O(N).
///
/// # Panics
///
/// If the slices differ in length or are empty, or as [`expected_min`] for any problem.
pub fn tokens_per_sample(
    rates: &[f64],
    difficulty: &[f64],
    lengths: &TraceLengths,
    budget: f64,
) -> f64 {
    mean_over_problems(rates, difficulty, |p, d| {
        let correct = expected_min(lengths.correct_median(d), lengths.sigma, budget);
        let wrong = expected_min(lengths.wrong_median(d), lengths.sigma, budget);
        p * correct + (1.0 - p) * wrong
    })
}

/// (F_c(B), F_w(B)): the shares of correct and of wrong traces of a problem that the cap keeps.
fn kept_shares(lengths: &TraceLengths, difficulty: f64, budget: f64) -> (f64, f64) {
    (
        lognormal_cdf(budget, lengths.correct_median(difficulty), lengths.sigma),
        lognormal_cdf(budget, lengths.wrong_median(difficulty), lengths.sigma),
    )
}

/// Per-sample (p', alpha') of one problem under the cap, in the form a vote needs: p' = p F_c(B)
/// and alpha' = q' / (1 - p'), the attractor share among the non-correct samples, with
/// q = a (1 - p) and q' = q F_w(B).
///
/// Written as alpha' = a F_w(B) (1 - p) / (1 - p'), so that when the cap keeps every trace
/// (F = 1 exactly, e.g. B = infinity) p' = p and alpha' = a to the last bit. p' = 1 gives
/// alpha' = 0 (no non-correct samples).
///
/// Time: O(1).
///
/// # Panics
///
/// As [`lognormal_cdf`].
pub fn capped_vote_rates(
    p: f64,
    attractor: f64,
    lengths: &TraceLengths,
    difficulty: f64,
    budget: f64,
) -> (f64, f64) {
    let (correct_kept, wrong_kept) = kept_shares(lengths, difficulty, budget);
    let p_capped = p * correct_kept;
    if p_capped >= 1.0 {
        return (p_capped, 0.0);
    }
    let alpha = attractor * wrong_kept * ((1.0 - p) / (1.0 - p_capped));
    (p_capped, alpha.clamp(0.0, 1.0))
}

/// maj@k of every problem under the cap B: the vote of k samples where a cut trace is a one-off
/// (it matches nothing), i.e. maj@k with per-sample (p F_c(B), a (1 - p) F_w(B)); see
/// [`capped_vote_rates`]. With B = infinity this is [`maj_at_k_all`] bit for bit.
///
/// Time: O(N k) plus O(k^1.5) per distinct alpha'.
///
/// # Panics
///
/// If the slices differ in length, or as [`lognormal_cdf`].
pub fn maj_at_k_capped(
    rates: &[f64],
    difficulty: &[f64],
    attractor: f64,
    lengths: &TraceLengths,
    k: u32,
    rule: VoteRule,
    budget: f64,
) -> Vec<f64> {
    maj_at_k_capped_with_loss(rates, difficulty, attractor, lengths, k, rule, budget)
        .into_iter()
        .map(|(m, _)| m)
        .collect()
}

/// (maj@k, 1 - maj@k) of every problem under the cap B, as [`maj_at_k_capped`], the loss
/// summed from its own terms (see [`conditional_win_loss`]).
///
/// Time: O(N k) plus O(k^2) at most per distinct alpha'.
///
/// # Panics
///
/// If the slices differ in length, or as [`lognormal_cdf`].
pub fn maj_at_k_capped_with_loss(
    rates: &[f64],
    difficulty: &[f64],
    attractor: f64,
    lengths: &TraceLengths,
    k: u32,
    rule: VoteRule,
    budget: f64,
) -> Vec<(f64, f64)> {
    // (alpha' bits, (W, 1 - W)) per distinct alpha'.
    type WinLoss = (u64, (Vec<f64>, Vec<f64>));
    let mut wins: Vec<WinLoss> = Vec::new();
    per_problem(rates, difficulty, |p, d| {
        let (p_capped, alpha) = capped_vote_rates(p, attractor, lengths, d, budget);
        let w = match wins.iter().position(|(bits, _)| *bits == alpha.to_bits()) {
            Some(i) => i,
            None => {
                wins.push((alpha.to_bits(), conditional_win_loss(k, alpha, rule)));
                wins.len() - 1
            }
        };
        let pmf = binomial_pmf(k, p_capped);
        let (win, loss) = &wins[w].1;
        (win_given_counts(&pmf, win), win_given_counts(&pmf, loss))
    })
    .collect()
}

/// Points of the log grid scanned for sign changes of f - g.
const CROSSOVER_GRID_POINTS: usize = 400;
/// Width of the final bracket on ln B: a relative accuracy of 1e-10 in B.
const CROSSOVER_LOG_TOLERANCE: f64 = 1e-10;

/// Per-sample (p', a') of one problem under the cap with several attractors: p' = p F_c(B), and
/// each share of the non-correct samples a'_j = a_j F_w(B) (1 - p) / (1 - p'), a cut trace being
/// a one-off (no answer). One share gives [`capped_vote_rates`] bit for bit; p' = 1 gives zero
/// shares. Time: O(m).
///
/// # Panics
///
/// As [`lognormal_cdf`].
pub fn capped_mode_shares(
    p: f64,
    attractors: &[f64],
    lengths: &TraceLengths,
    difficulty: f64,
    budget: f64,
) -> (f64, Vec<f64>) {
    let (correct_kept, wrong_kept) = kept_shares(lengths, difficulty, budget);
    let p_capped = p * correct_kept;
    if p_capped >= 1.0 {
        return (p_capped, vec![0.0; attractors.len()]);
    }
    let scale = wrong_kept * ((1.0 - p) / (1.0 - p_capped));
    (
        p_capped,
        attractors
            .iter()
            .map(|a| (a * scale).clamp(0.0, 1.0))
            .collect(),
    )
}

/// (maj@k, 1 - maj@k) of every problem under the cap B with several attractors and answer
/// extraction: the vote of [`crate::exact::modes::maj_at_k_modes`] on the capped per-sample
/// shares of [`capped_mode_shares`] (unparsed and split samples as without a cap: a share of
/// all samples and of the kept correct ones). Time: N calls of `maj_at_k_modes`.
///
/// # Panics
///
/// If the slices differ in length, k = 0, or as [`lognormal_cdf`].
#[allow(clippy::too_many_arguments)]
pub fn maj_at_k_capped_modes(
    rates: &[f64],
    difficulty: &[f64],
    attractors: &[f64],
    extraction: Extraction,
    lengths: &TraceLengths,
    k: u32,
    rule: VoteRule,
    budget: f64,
) -> Vec<(f64, f64)> {
    per_problem(rates, difficulty, |p, d| {
        let (p_capped, shares) = capped_mode_shares(p, attractors, lengths, d, budget);
        maj_at_k_modes(p_capped, &shares, extraction, k, rule)
    })
    .collect()
}

/// The graded form of [`token_sampling_moments`]: (variance of the benchmark mean of tokens per
/// sample, covariance of that mean with the benchmark mean of "kept, parsed and graded
/// correct"). Tokens do not depend on grading; per problem
/// Cov(X, Y~) = (1 - u) [(1 - fnr) p E[L_c; L_c <= B] + fpr (1 - p) E[L_w; L_w <= B]] - E\[X\] E[Y~].
/// The identity grading is [`token_sampling_moments`] bit for bit. Time: O(N).
///
/// # Panics
///
/// As [`lognormal_cdf`].
pub fn graded_token_sampling_moments(
    rates: &[f64],
    difficulty: &[f64],
    lengths: &TraceLengths,
    budget: f64,
    traces: u64,
    grading: &SampleGrading,
) -> (f64, f64) {
    if grading.is_identity() {
        return token_sampling_moments(rates, difficulty, lengths, budget, traces);
    }
    let s = lengths.sigma;
    let (fpr, fnr) = grading.grader.map_or((0.0, 0.0), |g| (g.fpr, g.fnr));
    let kept = 1.0 - grading.unparsed;
    let (mut var, mut cov) = (0.0, 0.0);
    for (&p, &d) in rates.iter().zip(difficulty) {
        let (mc, mw) = (lengths.correct_median(d), lengths.wrong_median(d));
        let ex = p * expected_min(mc, s, budget) + (1.0 - p) * expected_min(mw, s, budget);
        let ex2 = p * expected_min_sq(mc, s, budget) + (1.0 - p) * expected_min_sq(mw, s, budget);
        let ey = graded_accuracy_and_miss(p, d, lengths, budget, grading).0;
        let exy = kept
            * ((1.0 - fnr) * p * partial_mean(mc, s, budget)
                + fpr * (1.0 - p) * partial_mean(mw, s, budget));
        var += (ex2 - ex * ex).max(0.0);
        cov += exy - ex * ey;
    }
    let scale = traces as f64 * (rates.len() as f64).powi(2);
    (var / scale, cov / scale)
}

/// Every budget B in [lo, hi] where f(B) - g(B) changes sign (e.g. where two Acc(B) curves cross).
///
/// Scans 400 points evenly spaced in ln B, then bisects each bracket with a sign change on ln B to
/// a relative width of 1e-10. Grid points where f - g is exactly 0 (or NaN) are skipped over, so
/// a curve that touches zero without changing sign gives no root; crossings closer together than
/// one grid step (a factor (hi / lo)^(1/399)) may cancel out unseen. Roots come out increasing.
///
/// Time: O(400 + 40 r) evaluations of f and g, for r roots.
///
/// # Panics
///
/// If `lo` is not positive, or `hi` is not finite or not above `lo`.
pub fn crossover_budgets(
    f: impl Fn(f64) -> f64,
    g: impl Fn(f64) -> f64,
    lo: f64,
    hi: f64,
) -> Vec<f64> {
    assert!(
        lo > 0.0 && hi.is_finite() && hi > lo,
        "budget range [{lo}, {hi}] must satisfy 0 < lo < hi < infinity"
    );
    let gap = |log_budget: f64| {
        let budget = log_budget.exp();
        f(budget) - g(budget)
    };
    let (log_lo, log_hi) = (lo.ln(), hi.ln());
    let step = (log_hi - log_lo) / (CROSSOVER_GRID_POINTS - 1) as f64;
    let mut roots = Vec::new();
    let mut last_signed: Option<(f64, f64)> = None;
    for j in 0..CROSSOVER_GRID_POINTS {
        let log_budget = log_lo + j as f64 * step;
        let value = gap(log_budget);
        if value == 0.0 || value.is_nan() {
            continue;
        }
        if let Some((log_prev, prev)) = last_signed {
            if prev.signum() != value.signum() {
                roots.push(bisect_sign_change(&gap, log_prev, log_budget).exp());
            }
        }
        last_signed = Some((log_budget, value));
    }
    roots
}

/// Bisection for a sign change of `gap` between `below` and `above` (in ln B).
fn bisect_sign_change(gap: &impl Fn(f64) -> f64, below: f64, above: f64) -> f64 {
    let sign_below = gap(below).signum();
    bisect(below, above, Stop::Width(CROSSOVER_LOG_TOLERANCE), |x| {
        let value = gap(x);
        if value == 0.0 {
            Side::Root
        } else if value.signum() == sign_below {
            Side::A
        } else {
            Side::B
        }
    })
}

fn check_lognormal(median: f64, s: f64) {
    assert!(
        median > 0.0 && median.is_finite(),
        "median trace length {median} must be positive and finite"
    );
    assert!(
        s >= 0.0 && s.is_finite(),
        "log-SD of trace length {s} must be finite and >= 0"
    );
}

/// mean_i term(p_i, d_i) over paired model rates and benchmark difficulties.
fn mean_over_problems(rates: &[f64], difficulty: &[f64], term: impl Fn(f64, f64) -> f64) -> f64 {
    let terms = per_problem(rates, difficulty, term);
    assert!(!rates.is_empty(), "a benchmark needs at least one problem");
    let total: f64 = terms.sum();
    total / rates.len() as f64
}

/// term(p_i, d_i) of every problem in order, over paired model rates and benchmark
/// difficulties. Time: N calls of `term`, lazily.
///
/// # Panics
///
/// At once, if the slices differ in length.
fn per_problem<'a, T>(
    rates: &'a [f64],
    difficulty: &'a [f64],
    mut term: impl FnMut(f64, f64) -> T + 'a,
) -> impl Iterator<Item = T> + 'a {
    assert_eq!(
        rates.len(),
        difficulty.len(),
        "one difficulty per problem is needed"
    );
    rates.iter().zip(difficulty).map(move |(&p, &d)| term(p, d))
}

/// Exact sampling moments of one trace under the cap, for standard errors: (variance of the
/// benchmark mean of tokens per sample, covariance of that mean with the benchmark mean of
/// "correct within the budget"), both for `traces` traces per problem.
///
/// Per problem, X = min(L, B) and Y = 1[correct and L <= B]:
/// E\[X^2\] = p E\[min(L_c, B)^2\] + (1 - p) E\[min(L_w, B)^2\],
/// Cov(X, Y) = p E\[L_c; L_c <= B\] - E\[X\] E\[Y\].
/// Exact moments rather than sample ones: with a tight cap almost every trace is cut, and the
/// rare short traces make sample variances unreliable.
///
/// Time: O(N).
///
/// # Panics
///
/// As [`lognormal_cdf`].
pub fn token_sampling_moments(
    rates: &[f64],
    difficulty: &[f64],
    lengths: &TraceLengths,
    budget: f64,
    traces: u64,
) -> (f64, f64) {
    let s = lengths.sigma;
    let (mut var, mut cov) = (0.0, 0.0);
    for (&p, &d) in rates.iter().zip(difficulty) {
        let (mc, mw) = (lengths.correct_median(d), lengths.wrong_median(d));
        let ex = p * expected_min(mc, s, budget) + (1.0 - p) * expected_min(mw, s, budget);
        let ex2 = p * expected_min_sq(mc, s, budget) + (1.0 - p) * expected_min_sq(mw, s, budget);
        let ey = p * lognormal_cdf(budget, mc, s);
        var += (ex2 - ex * ex).max(0.0);
        cov += p * partial_mean(mc, s, budget) - ex * ey;
    }
    let scale = traces as f64 * (rates.len() as f64).powi(2);
    (var / scale, cov / scale)
}

/// Exact share of all traces that are correct (wrong) and fall between consecutive `edges`
/// (tokens, increasing): the CDF at every edge once per problem, then differences.
///
/// Time: O(N * edges).
///
/// # Panics
///
/// As [`lognormal_cdf`].
pub fn length_shares(
    rates: &[f64],
    difficulty: &[f64],
    lengths: &TraceLengths,
    edges: &[f64],
) -> (Vec<f64>, Vec<f64>) {
    let bins = edges.len().saturating_sub(1);
    let (mut correct, mut wrong) = (vec![0.0; bins], vec![0.0; bins]);
    let s = lengths.sigma;
    for (&p, &d) in rates.iter().zip(difficulty) {
        for (median, weight, out) in [
            (lengths.correct_median(d), p, &mut correct),
            (lengths.wrong_median(d), 1.0 - p, &mut wrong),
        ] {
            let cdf: Vec<f64> = edges.iter().map(|&x| lognormal_cdf(x, median, s)).collect();
            for (o, w) in out.iter_mut().zip(cdf.windows(2)) {
                *o += weight * (w[1] - w[0]);
            }
        }
    }
    let n = rates.len() as f64;
    correct
        .iter_mut()
        .chain(wrong.iter_mut())
        .for_each(|x| *x /= n);
    (correct, wrong)
}

/// Delta-method standard error of tokens per correct answer R = k T / A, from the SEs of the
/// mean tokens per sample T and the accuracy A and their covariance:
/// Var(R) / R^2 = Var(T) / T^2 + Var(A) / A^2 - 2 Cov(T, A) / (T A) (a negative estimate is 0).
///
/// Time: O(1).
pub fn tokens_per_correct_se(
    ratio: f64,
    tokens: f64,
    tokens_se: f64,
    accuracy: f64,
    accuracy_se: f64,
    cov: f64,
) -> f64 {
    let rel_var = tokens_se.powi(2) / tokens.powi(2) + accuracy_se.powi(2) / accuracy.powi(2)
        - 2.0 * cov / (tokens * accuracy);
    ratio * rel_var.max(0.0).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::exact::noise::tests::{note_rates, shift_logits};
    use statrs::distribution::{ContinuousCDF, LogNormal};

    /// Identities hold to round-off.
    const IDENTITY: f64 = 1e-12;

    /// Per-sample (p', q') of one problem under the cap: (p F_c(B), q F_w(B)).
    ///
    /// p is the correct rate and q = a (1 - p) the attractor mass; a cut trace gives no answer, which
    /// in a vote is a one-off, so the one-off mass becomes 1 - p' - q'.
    /// The plain (p, q) route that [`maj_at_k_capped`] is checked against.
    fn capped_rates(
        p: f64,
        q: f64,
        lengths: &TraceLengths,
        difficulty: f64,
        budget: f64,
    ) -> (f64, f64) {
        let (correct_kept, wrong_kept) = kept_shares(lengths, difficulty, budget);
        (p * correct_kept, q * wrong_kept)
    }

    fn assert_close(actual: f64, expected: f64, tolerance: f64) {
        assert!(
            (actual - expected).abs() <= tolerance,
            "{actual} differs from {expected} by more than {tolerance}"
        );
    }

    fn note_lengths(median_tokens: f64) -> TraceLengths {
        TraceLengths {
            median_tokens,
            hard_growth: 1.0,
            wrong_factor: 1.5,
            sigma: 0.55,
        }
    }

    fn difficulty_of(rates: &[f64]) -> Vec<f64> {
        rates.iter().map(|p| 1.0 - p).collect()
    }

    /// Composite Simpson in u = ln x on [ln x0, ln B] with x0 = median e^(-10 s), where
    /// P(L < x0) = Phi(-10) ~ 8e-24 (so the stretch below x0 is left to the caller).
    fn simpson_in_log(median: f64, s: f64, budget: f64, integrand: impl Fn(f64) -> f64) -> f64 {
        let start = median * (-10.0 * s).exp();
        let (a, b) = (start.ln(), budget.ln());
        let panels = 20_000;
        let h = (b - a) / panels as f64;
        let weighted: f64 = (0..=panels)
            .map(|j| {
                let weight = if j == 0 || j == panels {
                    1.0
                } else if j % 2 == 1 {
                    4.0
                } else {
                    2.0
                };
                weight * integrand(a + j as f64 * h)
            })
            .sum();
        weighted * h / 3.0
    }

    /// integral_0^B P(L > x) dx: x0 (P(L > x) = 1 below it) plus Simpson above it.
    fn survival_integral(median: f64, s: f64, budget: f64) -> f64 {
        let start = median * (-10.0 * s).exp();
        start
            + simpson_in_log(median, s, budget, |u| {
                (1.0 - lognormal_cdf(u.exp(), median, s)) * u.exp()
            })
    }

    #[test]
    fn lognormal_cdf_matches_statrs() {
        // statrs 0.18's erfc errs by up to 2.5e-11 absolute, so agreement is to that; the normal
        // CDF itself is tested against 60-digit references (`normal_cdf_matches_high_precision_
        // references`). The complement is computed on its own and adds to 1.
        for (median, s) in [(8000.0f64, 0.55), (2500.0, 1.3), (40.0, 0.05)] {
            let reference = LogNormal::new(median.ln(), s).expect("valid lognormal");
            for x in [1.0, median / 3.0, median, 2.0 * median, 10.0 * median] {
                assert_close(lognormal_cdf(x, median, s), reference.cdf(x), 5e-11);
                let sum = lognormal_cdf(x, median, s) + lognormal_sf(x, median, s);
                assert_close(sum, 1.0, 2.0 * f64::EPSILON);
            }
        }
    }

    #[test]
    fn lognormal_cdf_limits() {
        assert_eq!(lognormal_cdf(0.0, 100.0, 0.5), 0.0);
        assert_eq!(lognormal_cdf(-3.0, 100.0, 0.5), 0.0);
        assert_eq!(lognormal_cdf(f64::INFINITY, 100.0, 0.5), 1.0);
        assert_eq!(lognormal_cdf(100.0, 100.0, 0.5), 0.5);
        assert_eq!(lognormal_cdf(99.0, 100.0, 0.0), 0.0);
        assert_eq!(lognormal_cdf(100.0, 100.0, 0.0), 1.0);
    }

    #[test]
    fn expected_min_matches_integral_of_survival() {
        for (median, s) in [(8000.0, 0.55), (2500.0, 1.2), (300.0, 0.1)] {
            for budget in [0.2 * median, median, 3.0 * median, 50.0 * median] {
                let exact = expected_min(median, s, budget);
                let numeric = survival_integral(median, s, budget);
                assert_close(exact / numeric, 1.0, 1e-8);
            }
        }
    }

    /// integral_0^B 2 x P(L > x) dx = E[min(L, B)^2], by the same Simpson rule in u = ln x.
    fn survival_integral_sq(median: f64, s: f64, budget: f64) -> f64 {
        let start = median * (-10.0 * s).exp();
        start * start
            + simpson_in_log(median, s, budget, |u| {
                2.0 * (1.0 - lognormal_cdf(u.exp(), median, s)) * (2.0 * u).exp()
            })
    }

    #[test]
    fn second_moment_and_partial_mean_match_integrals() {
        for (median, s) in [(8000.0, 0.55), (2500.0, 1.2), (300.0, 0.1)] {
            for budget in [0.2 * median, median, 3.0 * median, 50.0 * median] {
                let exact = expected_min_sq(median, s, budget);
                let numeric = survival_integral_sq(median, s, budget);
                assert_close(exact / numeric, 1.0, 1e-8);
                // E[min(L, B)] = E[L; L <= B] + B P(L > B).
                let split = partial_mean(median, s, budget)
                    + budget * (1.0 - lognormal_cdf(budget, median, s));
                assert_close(split / expected_min(median, s, budget), 1.0, 1e-12);
            }
        }
        let (median, s) = (8000.0f64, 0.55f64);
        let second = median * median * (2.0 * s * s).exp();
        assert_eq!(expected_min_sq(median, s, f64::INFINITY), second);
        assert_close(expected_min_sq(median, s, 1e9) / second, 1.0, 1e-12);
        assert_eq!(expected_min_sq(median, 0.0, 5000.0), 25e6);
        assert_eq!(partial_mean(median, 0.0, 5000.0), 0.0);
    }

    #[test]
    fn expected_min_limits() {
        let (median, s) = (8000.0f64, 0.55f64);
        let mean = median * (0.5 * s * s).exp();
        assert_eq!(expected_min(median, s, f64::INFINITY), mean);
        assert_eq!(expected_min(median, s, 0.0), 0.0);
        assert_eq!(expected_min(median, 0.0, 5000.0), 5000.0);
        assert_eq!(expected_min(median, 0.0, 9000.0), median);
        // A tiny cap binds almost every trace, a huge one almost none.
        assert_close(expected_min(median, s, 1.0), 1.0, IDENTITY);
        assert_close(expected_min(median, s, 1e9) / mean, 1.0, IDENTITY);
    }

    #[test]
    fn trace_length_medians_follow_difficulty() {
        let lengths = note_lengths(8000.0);
        assert_eq!(lengths.correct_median(0.0), 8000.0);
        assert_eq!(lengths.correct_median(0.5), 12_000.0);
        assert_eq!(lengths.wrong_median(0.5), 18_000.0);
    }

    #[test]
    fn accuracy_at_budget_rises_to_pass_at_one() {
        let rates = note_rates();
        let difficulty = difficulty_of(&rates);
        let lengths = note_lengths(8000.0);
        let pass_at_one = rates.iter().sum::<f64>() / rates.len() as f64;
        let curve: Vec<f64> = (0..=40)
            .map(|j| accuracy_at_budget(&rates, &difficulty, &lengths, 500.0 * 1.25f64.powi(j)))
            .collect();
        // Strictly rising up to ~130k tokens; beyond it F(B) rounds to 1 and the curve flattens.
        assert!(curve[..=25].windows(2).all(|pair| pair[1] > pair[0]));
        assert!(curve.windows(2).all(|pair| pair[1] >= pair[0]));
        assert!(curve[0] < 0.01 * pass_at_one);
        let uncapped = accuracy_at_budget(&rates, &difficulty, &lengths, f64::INFINITY);
        assert_close(uncapped, pass_at_one, IDENTITY);
        let generous = accuracy_at_budget(&rates, &difficulty, &lengths, 1e8);
        assert_close(generous, pass_at_one, 1e-12);
    }

    #[test]
    fn truncation_rate_runs_from_one_to_zero() {
        let rates = note_rates();
        let difficulty = difficulty_of(&rates);
        let lengths = note_lengths(8000.0);
        assert_close(
            truncation_rate(&rates, &difficulty, &lengths, 1.0),
            1.0,
            IDENTITY,
        );
        assert_eq!(
            truncation_rate(&rates, &difficulty, &lengths, f64::INFINITY),
            0.0
        );
        let low = truncation_rate(&rates, &difficulty, &lengths, 8000.0);
        let high = truncation_rate(&rates, &difficulty, &lengths, 32_000.0);
        assert!(0.0 < high && high < low && low < 1.0);
    }

    #[test]
    fn uncapped_tokens_per_sample_is_the_lognormal_mean() {
        let rates = note_rates();
        let difficulty = difficulty_of(&rates);
        let lengths = note_lengths(2500.0);
        let inflation = (0.5 * lengths.sigma * lengths.sigma).exp();
        let expected = rates
            .iter()
            .zip(&difficulty)
            .map(|(&p, &d)| {
                inflation * (p * lengths.correct_median(d) + (1.0 - p) * lengths.wrong_median(d))
            })
            .sum::<f64>()
            / rates.len() as f64;
        let uncapped = tokens_per_sample(&rates, &difficulty, &lengths, f64::INFINITY);
        assert_close(uncapped / expected, 1.0, IDENTITY);
        let capped = tokens_per_sample(&rates, &difficulty, &lengths, 4000.0);
        assert!(capped < 4000.0 && capped < uncapped);
    }

    #[test]
    fn capped_rates_scale_by_the_kept_share() {
        let lengths = note_lengths(8000.0);
        let (p, q, d) = (0.6, 0.2, 0.4);
        let (p_capped, q_capped) = capped_rates(p, q, &lengths, d, 11_200.0);
        // The correct median is exactly 11,200 tokens, so half the correct traces survive.
        assert_close(p_capped, 0.3, IDENTITY);
        let wrong_kept = lognormal_cdf(11_200.0, 16_800.0, 0.55);
        assert_close(q_capped, q * wrong_kept, IDENTITY);
        assert_eq!(capped_rates(p, q, &lengths, d, f64::INFINITY), (p, q));
    }

    #[test]
    fn maj_under_a_huge_cap_equals_uncapped_maj_exactly() {
        use crate::exact::maj::maj_at_k_all;
        let rates = note_rates();
        let difficulty = difficulty_of(&rates);
        let lengths = note_lengths(8000.0);
        for k in [1u32, 2, 8, 32, 64] {
            for rule in [VoteRule::Random, VoteRule::Strict, VoteRule::Absolute] {
                let uncapped = maj_at_k_all(&rates, 0.5, k, rule);
                for cap in [1e12, f64::INFINITY] {
                    let capped = maj_at_k_capped(&rates, &difficulty, 0.5, &lengths, k, rule, cap);
                    assert_eq!(capped, uncapped, "k={k} {rule:?} cap={cap}");
                }
            }
        }
    }

    #[test]
    fn maj_under_a_tight_cap_matches_the_pq_route() {
        use crate::exact::maj::maj_at_k_pq;
        let rates = note_rates();
        let difficulty = difficulty_of(&rates);
        let lengths = note_lengths(8000.0);
        let capped = maj_at_k_capped(
            &rates,
            &difficulty,
            0.5,
            &lengths,
            8,
            VoteRule::Random,
            12_000.0,
        );
        for ((&p, &d), &c) in rates.iter().zip(&difficulty).zip(&capped) {
            let (pc, qc) = capped_rates(p, 0.5 * (1.0 - p), &lengths, d, 12_000.0);
            assert_close(c, maj_at_k_pq(pc, qc, 8, VoteRule::Random), 1e-12);
        }
    }

    #[test]
    fn crossover_budgets_find_every_sign_change() {
        // sin(ln B) changes sign at B = e^(k pi).
        let roots = crossover_budgets(|b: f64| b.ln().sin(), |_| 0.0, 2.0, 1e5);
        let expected: Vec<f64> = (1..=3)
            .map(|k| (k as f64 * std::f64::consts::PI).exp())
            .collect();
        assert_eq!(roots.len(), expected.len());
        for (root, exact) in roots.iter().zip(&expected) {
            assert_close(root / exact, 1.0, 1e-9);
        }
        // Touching zero without crossing is no crossover.
        let touch = crossover_budgets(|b: f64| (b.ln() - 3.0).powi(2), |_| 0.0, 1.0, 100.0);
        assert!(touch.is_empty());
    }

    #[test]
    fn note_models_cross_once_between_1k_and_128k_tokens() {
        let benchmark = note_rates();
        let difficulty = difficulty_of(&benchmark);
        let short_rates = shift_logits(&benchmark, -0.6);
        let (long, short) = (note_lengths(8000.0), note_lengths(2500.0));
        let long_accuracy = |b| accuracy_at_budget(&benchmark, &difficulty, &long, b);
        let short_accuracy = |b| accuracy_at_budget(&short_rates, &difficulty, &short, b);
        let crossings = crossover_budgets(long_accuracy, short_accuracy, 1_000.0, 128_000.0);
        assert_eq!(crossings.len(), 1);
        let crossover = crossings[0];
        let gap = |b| long_accuracy(b) - short_accuracy(b);
        assert!(
            gap(crossover * 0.999) < 0.0,
            "short leads below the crossover"
        );
        assert!(
            gap(crossover * 1.001) > 0.0,
            "long leads above the crossover"
        );
        assert!(gap(1_000.0) < 0.0 && gap(128_000.0) > 0.0);
        // Regression value: the curves cross at 17,647 tokens, at 44.25% accuracy.
        assert_close(crossover, 17_647.064, 1e-3);
    }

    /// Graded Acc(B) against enumeration of one trace's outcome tree: correct or wrong, kept or
    /// cut, parsed or not, graded correct or not. Only kept, parsed answers can be graded
    /// correct. The identity grading gives [`accuracy_and_miss`] bit for bit.
    #[test]
    fn graded_accuracy_matches_enumeration_of_each_traces_outcome() {
        use crate::exact::grader::{Grader, SampleGrading};
        let lengths = TraceLengths {
            median_tokens: 2000.0,
            hard_growth: 1.0,
            wrong_factor: 1.6,
            sigma: 0.6,
        };
        let grading = SampleGrading {
            unparsed: 0.2,
            grader: Some(Grader {
                fpr: 0.15,
                fnr: 0.1,
            }),
        };
        for &(p, d, b) in &[
            (0.7, 0.3, 2500.0),
            (0.1, 0.9, 8000.0),
            (1.0, 0.0, 500.0),
            (0.0, 1.0, 1e9),
        ] {
            let fc = lognormal_cdf(b, lengths.correct_median(d), lengths.sigma);
            let fw = lognormal_cdf(b, lengths.wrong_median(d), lengths.sigma);
            let (mut yes, mut no) = (0.0, 0.0);
            for correct in [true, false] {
                for kept in [true, false] {
                    for parsed in [true, false] {
                        for flip in [true, false] {
                            let mut pr = if correct { p } else { 1.0 - p };
                            let f = if correct { fc } else { fw };
                            pr *= if kept { f } else { 1.0 - f };
                            pr *= if parsed { 0.8 } else { 0.2 };
                            let rate = if correct { 0.1 } else { 0.15 };
                            pr *= if flip { rate } else { 1.0 - rate };
                            let graded = kept && parsed && (correct != flip);
                            if graded {
                                yes += pr;
                            } else {
                                no += pr;
                            }
                        }
                    }
                }
            }
            let (acc, miss) = graded_accuracy_and_miss(p, d, &lengths, b, &grading);
            assert!(
                (acc - yes).abs() < 1e-15 && (miss - no).abs() < 1e-15,
                "{acc} {yes} {miss} {no}"
            );
            assert_eq!(
                graded_accuracy_and_miss(p, d, &lengths, b, &SampleGrading::default()),
                accuracy_and_miss(p, d, &lengths, b)
            );
        }
    }

    /// Capped votes with two attractors against enumeration of every sequence of k sample
    /// outcomes (correct and kept, attractor j and kept, anything else: a one-off or a cut
    /// trace), random tie-breaking; one share gives the one-attractor closed form.
    #[test]
    fn capped_mode_votes_match_enumeration_and_the_one_attractor_form() {
        use crate::exact::modes::Extraction;
        let lengths = TraceLengths {
            median_tokens: 1000.0,
            hard_growth: 1.0,
            wrong_factor: 1.5,
            sigma: 0.7,
        };
        let (p, d, b) = (0.35, 0.6, 1800.0);
        let a = [0.4, 0.25];
        let fc = lognormal_cdf(b, lengths.correct_median(d), lengths.sigma);
        let fw = lognormal_cdf(b, lengths.wrong_median(d), lengths.sigma);
        let probs = [p * fc, a[0] * (1.0 - p) * fw, a[1] * (1.0 - p) * fw];
        let other = 1.0 - probs.iter().sum::<f64>();
        for k in 1..=5u32 {
            let mut win = 0.0;
            for code in 0..4u32.pow(k) {
                let mut counts = [0u32; 4];
                let mut pr = 1.0;
                for i in 0..k {
                    let label = (code / 4u32.pow(i) % 4) as usize;
                    counts[label] += 1;
                    pr *= if label == 3 { other } else { probs[label] };
                }
                let top = counts[..3]
                    .iter()
                    .copied()
                    .max()
                    .unwrap_or(0)
                    .max(u32::from(counts[3] > 0));
                if counts[0] == top && top > 0 {
                    let tied = counts[..3].iter().filter(|&&c| c == top).count() as u32
                        + if top == 1 { counts[3] } else { 0 };
                    win += pr / f64::from(tied);
                }
            }
            let got = maj_at_k_capped_modes(
                &[p],
                &[d],
                &a,
                Extraction::default(),
                &lengths,
                k,
                VoteRule::Random,
                b,
            )[0];
            assert!(
                (got.0 - win).abs() < 1e-13 && (got.0 + got.1 - 1.0).abs() < 1e-13,
                "k = {k}: {got:?} vs {win}"
            );
        }
        let (pc, shares) = capped_mode_shares(p, &[0.4], &lengths, d, b);
        assert_eq!((pc, shares[0]), capped_vote_rates(p, 0.4, &lengths, d, b));
        let one = maj_at_k_capped_modes(
            &[p],
            &[d],
            &[0.4],
            Extraction::default(),
            &lengths,
            6,
            VoteRule::Strict,
            b,
        )[0];
        let old = maj_at_k_capped_with_loss(&[p], &[d], 0.4, &lengths, 6, VoteRule::Strict, b)[0];
        assert!((one.0 - old.0).abs() < 1e-15 && (one.1 - old.1).abs() < 1e-15);
    }
}
