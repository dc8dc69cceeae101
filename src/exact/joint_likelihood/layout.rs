//! Where each parameter of the joint model sits in the likelihood's gradient and Hessian.

/// Positions of the parameters in the gradient and Hessian of the joint likelihood: mu,
/// sigma, shift_0.., tau_0.., and with per-run data omega_0.. (P = 2 + 2M, or 2 + 3M with
/// runs). Pooled counts are one run per entry with no run noise: their layout has no omega.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JointLayout {
    models: usize,
    run_noise: bool,
}

impl JointLayout {
    /// Position of mu.
    pub const MU: usize = 0;
    /// Position of sigma.
    pub const SIGMA: usize = 1;

    /// The layout of `models` models, with an omega per model when `run_noise`.
    pub fn new(models: usize, run_noise: bool) -> Self {
        JointLayout { models, run_noise }
    }

    /// Models M.
    pub fn models(&self) -> usize {
        self.models
    }

    /// True when the layout has an omega per model (per-run data).
    pub fn has_run_noise(&self) -> bool {
        self.run_noise
    }

    /// Position of model m's shift.
    pub fn shift(&self, m: usize) -> usize {
        2 + m
    }

    /// Position of model m's tau.
    pub fn tau(&self, m: usize) -> usize {
        2 + self.models + m
    }

    /// Position of model m's omega; `None` without run noise.
    pub fn omega(&self, m: usize) -> Option<usize> {
        self.run_noise.then_some(2 + 2 * self.models + m)
    }

    /// Parameters P.
    pub fn len(&self) -> usize {
        if self.run_noise {
            2 + 3 * self.models
        } else {
            2 + 2 * self.models
        }
    }

    /// Never true: mu and sigma are always there.
    pub fn is_empty(&self) -> bool {
        false
    }
}
