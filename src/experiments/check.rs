//! The check type and its one pass rule, used by `run`, `check`, `sweep`, `merge` and `plan`.
//!
//! Every simulated number is an [`Estimate`] next to its exact value; [`Estimate::passed`] is the
//! only place that decides whether a simulation agrees with the closed form. Sweeps store the
//! estimate with everything the rule needs (the trial weight and any reason a number is not
//! tested) and judge it again with the same function.
//!
//! Why here: one rule for every command that judges a simulation. Depends on nothing.
use serde::Serialize;

use crate::exact::normal::Z_95;

/// A check fails when |z| = |sim - exact| / se exceeds this bound. Under a correct model each
/// check fails with probability about 7e-6 (two-sided normal tail at 4.5), so a scenario with a
/// few hundred checks fails spuriously about once in 500 seeds.
pub const Z_BOUND: f64 = 4.5;

/// The two-sided normal tail beyond [`Z_BOUND`], 2 (1 - Phi(4.5)): the false-failure rate every
/// check is held to.
pub const CHECK_TAIL: f64 = 6.795_346_249_5e-6;

/// The largest |sim - exact| that Bernstein's inequality allows, with probability at least
/// 1 - [`CHECK_TAIL`], for a sum of independent terms each within `step` of its mean and with
/// standard deviation `se` in all: P(|S - E S| >= t) <= 2 exp(-t^2 / (2 (se^2 + step t / 3))),
/// solved for t. It needs no normal approximation, so it holds for counts of rare events, where a
/// single event can be many standard errors away; when `step` is small against `se` it is
/// sqrt(2 ln(2 / CHECK_TAIL)) se = 5.02 se.
pub fn bernstein_allowance(se: f64, step: f64) -> f64 {
    let l = (2.0 / CHECK_TAIL).ln();
    let a = l * step / 3.0;
    a + (a * a + 2.0 * l * se * se).sqrt()
}

/// How many units in the last place of the larger of exact and simulated a difference may be
/// and still be the rounding of the exact value rather than a disagreement. An exact mean is a
/// sum of rounded terms (each accurate to a few ulps, the mean of N of them to a few times
/// sqrt(N) ulps); 64 ulps (1.4e-14 relative) is far below the 1e-12 relative accuracy exact values are held to, and far below
/// any Monte Carlo error a simulation can resolve (a share's smallest step, 1 / trials, is at
/// least 1e-10 for fewer than 1e10 trials). Only a z with an SE below the exact value's own
/// rounding can tell the two apart, and such a z says nothing about the simulation.
pub const ROUNDING_ULPS: f64 = 64.0;

/// The largest difference that is the rounding of the exact value: [`ROUNDING_ULPS`] ulps of
/// the larger magnitude (0 when either is infinite).
fn rounding(exact: f64, sim: f64) -> f64 {
    let scale = exact.abs().max(sim.abs());
    if scale.is_finite() {
        ROUNDING_ULPS * f64::EPSILON * scale
    } else {
        0.0
    }
}

/// Why a simulated number is reported but not held to the pass rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Untested {
    /// A ratio whose denominator is a count of rare events (e.g. tokens per correct answer when
    /// few correct answers are expected): its delta-method SE is meaningless, so the count itself
    /// is checked (with Bernstein's bound) in its own row and the ratio is only reported.
    RatioOfRareCount,
}

impl Untested {
    /// The text `checks.csv` and stored sweeps use.
    pub fn as_str(self) -> &'static str {
        match self {
            Untested::RatioOfRareCount => "untested: ratio of a rare count (the count is checked)",
        }
    }

    /// The reason back from [`Untested::as_str`].
    pub fn parse(text: &str) -> Option<Untested> {
        [Untested::RatioOfRareCount]
            .into_iter()
            .find(|u| u.as_str() == text)
    }
}

/// The largest relative standard error of a ratio's denominator for which the ratio is checked
/// by its delta-method z: above it the linearisation of 1 / A is off by about the square of the
/// relative SE, a skew and bias that the z bound does not allow for (and A = 0 gives inf).
pub const RATIO_MAX_RELATIVE_SE: f64 = 0.05;

/// One simulated number next to its exact value.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    /// The closed-form value.
    pub exact: f64,
    /// The Monte Carlo estimate.
    pub sim: f64,
    /// Monte Carlo standard error of `sim`, computed from the exact per-problem probabilities.
    pub se: f64,
    /// (sim - exact) / se; 0 when both are equal (also both infinite, or se = 0), infinite when
    /// they differ with se = 0.
    pub z: f64,
    /// Lower end of the 95% interval sim - z(0.975) se.
    pub ci_low: f64,
    /// Upper end of the 95% interval sim + z(0.975) se.
    pub ci_high: f64,
    /// For a simulated number that is a scaled count of independent trials, the weight of one
    /// trial (1 / (trials in all) for a share); 0 otherwise. Lets the check use Bernstein's
    /// bound where the normal approximation behind z fails ([`Estimate::passed`]).
    #[serde(skip)]
    pub step: f64,
    /// Set when the number is reported but not tested ([`Untested`]).
    #[serde(skip)]
    pub untested: Option<Untested>,
}

impl Estimate {
    /// Pairs a simulated value with its exact value and standard error.
    pub fn new(exact: f64, sim: f64, se: f64) -> Estimate {
        let diff = sim - exact;
        let z = if sim == exact || diff.abs() <= rounding(exact, sim) {
            0.0
        } else if se > 0.0 {
            diff / se
        } else {
            f64::INFINITY.copysign(diff)
        };
        Estimate {
            exact,
            sim,
            se,
            z,
            ci_low: sim - Z_95 * se,
            ci_high: sim + Z_95 * se,
            step: 0.0,
            untested: None,
        }
    }

    /// Marks the simulated number as a sum of independent terms, each within `step` of its
    /// mean: a count of trials scaled by `step` (a share of `1 / step` trials in all, or a mean
    /// of per-problem shares with `1 / step` trials in all), or a mean of `n` values bounded in
    /// `[0, B]` (tokens under a cap: `step = B / n`).
    pub fn counting(mut self, step: f64) -> Estimate {
        self.step = step;
        self
    }

    /// Marks the number as reported but not tested, for `why`.
    pub fn untested(mut self, why: Untested) -> Estimate {
        self.untested = Some(why);
        self
    }

    /// The pass rule, the only one: true when the number is [`Untested`]; when simulated and
    /// exact are equal (including both infinite) or differ by no more than the rounding of the
    /// exact value itself ([`ROUNDING_ULPS`]: a mean of m printed as 0.9999999999999999 is 1 to
    /// the precision it was computed with, whatever tiny SE its complements give); when |z| is within [`Z_BOUND`]; or, for a
    /// count of independent trials ([`Estimate::counting`]), when |sim - exact| is within
    /// [`bernstein_allowance`]. Both bounds hold a correct simulation to a false-failure rate of
    /// about [`CHECK_TAIL`]; the second also where the normal approximation fails: a share of
    /// 1 - 5.5e-7 estimated from 160,000 votes sees two misses 0.4% of the time, at z = -6.5.
    /// NaN anywhere fails.
    pub fn passed(&self) -> bool {
        if self.untested.is_some()
            || self.sim == self.exact
            || (self.sim - self.exact).abs() <= rounding(self.exact, self.sim)
        {
            return true;
        }
        self.z.abs() <= Z_BOUND
            || (self.step > 0.0
                && self.se > 0.0
                && (self.sim - self.exact).abs() <= bernstein_allowance(self.se, self.step))
    }

    /// Which rule judged the number, as `checks.csv` writes it: `exact` (se = 0: the
    /// simulation must equal the exact value), `z`, `z or Bernstein bound`, or the [`Untested`]
    /// reason.
    pub fn rule(&self) -> &'static str {
        match self.untested {
            Some(u) => u.as_str(),
            None if self.se == 0.0 => "exact",
            None if self.step > 0.0 => "z or Bernstein bound",
            None => "z",
        }
    }
}

/// One row of `checks.csv`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    /// Experiment name.
    pub experiment: String,
    /// What is compared, e.g. `maj@k`.
    pub quantity: String,
    /// The cell, e.g. `model=long k=16`.
    pub cell: String,
    /// Exact, simulated, standard error and z.
    #[serde(flatten)]
    pub estimate: Estimate,
}

impl Check {
    /// A check of `estimate` for `quantity` in `cell` of `experiment`.
    pub fn new(experiment: &str, quantity: &str, cell: &str, estimate: Estimate) -> Check {
        Check {
            experiment: experiment.into(),
            quantity: quantity.into(),
            cell: cell.into(),
            estimate,
        }
    }

    /// [`Estimate::passed`] of the check's estimate.
    pub fn passed(&self) -> bool {
        self.estimate.passed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use statrs::distribution::{ContinuousCDF, Normal};

    #[test]
    fn check_tail_is_the_normal_tail_at_the_z_bound() {
        let tail = 2.0 * Normal::standard().sf(Z_BOUND);
        assert!((CHECK_TAIL / tail - 1.0).abs() < 1e-6, "{tail}");
    }

    #[test]
    fn bernstein_allowance_tends_to_a_normal_like_bound_and_grows_with_the_step() {
        let l = (2.0 / CHECK_TAIL).ln();
        assert!((bernstein_allowance(1.0, 0.0) - (2.0 * l).sqrt()).abs() < 1e-12);
        assert!(bernstein_allowance(1.0, 1e-9) > bernstein_allowance(1.0, 0.0));
        // Solves the bound: 2 exp(-t^2 / (2 (se^2 + step t / 3))) = CHECK_TAIL.
        let (se, step) = (1.9e-6, 1.0 / 160_000.0);
        let t = bernstein_allowance(se, step);
        let bound = 2.0 * (-t * t / (2.0 * (se * se + step * t / 3.0))).exp();
        assert!((bound / CHECK_TAIL - 1.0).abs() < 1e-9, "{bound}");
    }

    #[test]
    fn a_rare_count_passes_by_bernstein_and_a_real_excess_still_fails() {
        // pass@32 of 1 - 5.48e-7 from 160,000 votes (40 problems x 4,000): 0.088 misses expected.
        let votes: f64 = 160_000.0;
        let exact: f64 = 1.0 - 5.48e-7;
        let se = (exact * (1.0 - exact) / votes).sqrt();
        let check = |misses: f64| {
            let e = Estimate::new(exact, 1.0 - misses / votes, se);
            (
                Check::new("x", "pass@k", "c", e).passed(),
                Check::new("x", "pass@k", "c", e.counting(1.0 / votes)).passed(),
            )
        };
        // Two misses (a 0.4% event): |z| = 6.5 fails the z bound alone, passes as a count.
        assert_eq!(check(2.0), (false, true));
        // Fifteen misses (P < 1e-20 when 0.088 are expected) fail either way.
        assert_eq!(check(15.0), (false, false));
        // Within the z bound nothing changes.
        assert_eq!(check(0.0), (true, true));
    }

    #[test]
    fn a_mean_a_hair_below_1_failed_against_its_complement_se() {
        // maj@150: exact mean 1 - 2^-53 (the average of m rounded in the last bit), SE from
        // the complements 2.5e-18, every vote right.
        let e = Estimate::new(0.999_999_999_999_999_9, 1.0, 2.5e-18);
        assert!(e.passed(), "{e:?}");
        assert_eq!(e.z, 0.0);
        // A real miss at that SE still fails: one vote in 1e6 wrong is 4e11 SEs.
        assert!(!Estimate::new(0.999_999_999_999_999_9, 1.0 - 1e-6, 2.5e-18).passed());
        // Rounding is relative: at 1e-3 the same absolute gap is a disagreement.
        assert!(!Estimate::new(1e-3, 1e-3 + 1e-16, 1e-20).passed());
    }

    #[test]
    fn a_rare_event_token_mean_failed_by_a_normal_z() {
        // 1e6 traces capped at 1,000 tokens; 15 expected shorter than the cap (400 tokens
        // short on average), 27 drawn, 600 short: z = -6.6 against an SE driven by those few.
        let n: f64 = 1e6;
        let (expected, drawn, short): (f64, f64, f64) = (15.0, 27.0, 400.0);
        let exact = 1000.0 - expected * short / n;
        let sim = 1000.0 - drawn * 600.0 / n;
        let se = (expected * short * short).sqrt() / n;
        let e = Estimate::new(exact, sim, se);
        assert!(!e.passed() && e.z < -4.5, "{e:?}");
        assert!(e.counting(1000.0 / n).passed());
        // 150 such traces (ten times the expectation) still fail.
        let far = Estimate::new(exact, 1000.0 - 150.0 * short / n, se).counting(1000.0 / n);
        assert!(!far.passed(), "{far:?}");
    }
}
