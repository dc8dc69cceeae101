//! Closed forms: pure functions of rates and parameters, no I/O and no randomness.
//!
//! Why it exists: every quantity with a closed form is computed here, once, and the simulation
//! is checked against it; an experiment never derives a formula of its own. Each function states
//! its accuracy and cost. The normal expectations of the logit-normal all go through
//! [`quadrature`].
//!
//! May depend on: `model` (parameter types, expit) and nothing else of evalsim.

pub mod budget;
pub mod confidence;
pub mod contamination;
pub mod grader;
pub mod joint_likelihood;
pub mod judge;
pub mod maj;
pub mod modes;
pub mod noise;
pub mod normal;
pub mod outcome;
pub mod pass;
pub mod plan;
pub mod quadrature;
pub mod run_corr;
pub mod shift;
pub mod sign_test;
pub mod submit;
pub mod total;
pub mod verifier;

/// A probability summed from non-negative terms whose exact sum is at most 1 (a convex
/// combination such as p (1 - fnr) + (1 - p) fpr): the rounding of the sum can pass 1 by an ulp,
/// which is taken back here. Anything further above 1, and NaN, is returned as it is, so a real
/// error still shows.
pub fn rounded_probability(x: f64) -> f64 {
    if x > 1.0 && x <= 1.0 + 4.0 * f64::EPSILON {
        1.0
    } else {
        x
    }
}
