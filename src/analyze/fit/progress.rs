//! Progress of a joint fit, for the progress bar of `evalsim fit`: the fit reports each
//! objective evaluation and each stage ([`FitEvent`]), and [`FitEta`] turns them into work done
//! and a predicted total, both in evaluations (each a pass over the data of about the same
//! cost), so an ETA is (predicted total - done) times the time per evaluation.
//!
//! The prediction: the starts planned times the evaluations a start takes (the mean of the
//! finished starts; before the first finishes, the larger of its evaluations so far and
//! [`PRIOR_START`]); one start's worth for the polish and the information; and the profile
//! intervals times the evaluations an interval takes (the mean of the finished ones; before the
//! first, [`PROFILE_PER_START`] starts' worth, and at least [`PROFILE_PRIOR`]). Before the fit knows how many parameters need
//! a profile interval it assumes every spread parameter but one (`guess`).

/// What a fit tells its observer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FitEvent {
    /// One evaluation of the objective (with or without its gradient and Hessian).
    Evaluation,
    /// The optimisation starts from `starts` points, with `spreads` spread parameters
    /// (sigma, shift_sds, run_sds) free.
    Starts {
        /// Starting points.
        starts: usize,
        /// Free spread parameters.
        spreads: usize,
    },
    /// One start has converged.
    StartDone,
    /// This many parameters get a profile interval.
    Profiles(usize),
    /// One profile interval is done.
    ProfileDone,
}

/// Evaluations assumed for a start before one has finished.
pub const PRIOR_START: f64 = 6.0;

/// Evaluations between the starts and the profiles (checking the gradient, the information).
pub const AFTER_STARTS: f64 = 4.0;

/// Fewest evaluations assumed for a profile interval before one has finished.
pub const PROFILE_PRIOR: f64 = 10.0;

/// Evaluations of a profile interval, in starts, before one has finished (Newton's starts and
/// profile points).
pub const PROFILE_PER_START: f64 = 1.0;

/// Work done and predicted total of a fit, in evaluations (see the module docs). Shared by
/// reference across threads (the fit runs on a worker pool).
#[derive(Debug, Default)]
pub struct FitEta(std::sync::Mutex<State>);

#[derive(Debug, Default, Clone)]
struct State {
    evaluations: usize,
    starts: usize,
    starts_done: usize,
    /// Evaluations when the last start finished.
    at_start_done: usize,
    profiles: Option<usize>,
    profiles_done: usize,
    /// Evaluations when the profiles began, and when the last one finished.
    at_profiles: usize,
    at_profile_done: usize,
    /// Profile intervals assumed before the fit says how many.
    guess: usize,
}

impl FitEta {
    /// A tracker for a fit (told its starts and spreads by [`FitEvent::Starts`]).
    pub fn new() -> Self {
        Self::default()
    }

    /// Records `e`; returns (evaluations done, predicted total evaluations).
    pub fn observe(&self, e: FitEvent) -> (usize, usize) {
        let mut s = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let n = s.evaluations;
        match e {
            FitEvent::Evaluation => s.evaluations = n + 1,
            FitEvent::Starts { starts, spreads } => {
                s.starts = starts.max(1);
                s.guess = spreads.saturating_sub(1);
            }
            FitEvent::StartDone => {
                s.starts_done += 1;
                s.at_start_done = n;
            }
            FitEvent::Profiles(p) => {
                s.profiles = Some(p);
                s.at_profiles = n;
                s.at_profile_done = n;
            }
            FitEvent::ProfileDone => {
                s.profiles_done += 1;
                s.at_profile_done = n;
            }
        }
        (s.evaluations, s.predicted().round() as usize)
    }
}

impl State {
    /// The predicted total (module docs); at least the evaluations done.
    fn predicted(&self) -> f64 {
        let n = self.evaluations as f64;
        let done = self.starts_done;
        let starts = self.starts.max(done).max(1);
        let per_start = if done > 0 {
            self.at_start_done as f64 / done as f64
        } else {
            n.max(PRIOR_START)
        }
        .max(1.0);
        let Some(profiles) = self.profiles else {
            // still in the starts (or the polish after them)
            let current = n - self.at_start_done as f64;
            let left = (starts - done) as f64;
            let in_starts = if left > 0.0 {
                self.at_start_done as f64 + current.max(per_start) + (left - 1.0) * per_start
            } else {
                n
            };
            let guess = self.guess as f64 * (PROFILE_PER_START * per_start).max(PROFILE_PRIOR);
            return (in_starts + AFTER_STARTS + guess).max(n);
        };
        let per_profile = if self.profiles_done > 0 {
            (self.at_profile_done - self.at_profiles) as f64 / self.profiles_done as f64
        } else {
            (PROFILE_PER_START * per_start).max(PROFILE_PRIOR)
        };
        let current = n - self.at_profile_done as f64;
        let left = profiles.saturating_sub(self.profiles_done) as f64;
        let rest = if left > 0.0 {
            current.max(per_profile) + (left - 1.0) * per_profile
        } else {
            current
        };
        (self.at_profile_done as f64 + rest).max(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::fit::joint::{fit_joint_observed, JointFitOptions};
    use crate::exact::joint_likelihood::{Count, JointData};
    use rand::{Rng, SeedableRng};
    use rand_distr::{Binomial, Distribution, StandardNormal};
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// Counts of `models` models (shift 0, -0.5, ...; shift_sd `tau`) on `problems` problems,
    /// `runs` runs of `samples` each with run noise `omega` (one run: pooled counts).
    fn simulate(
        seed: u64,
        problems: usize,
        models: usize,
        (runs, samples): (usize, u64),
        (sigma, tau, omega): (f64, f64, f64),
    ) -> JointData {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut draw = |logit: f64, n: u64| {
            let p = 1.0 / (1.0 + (-logit).exp());
            Binomial::new(n, p).unwrap().sample(&mut rng) as usize
        };
        let mut normal = Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x9e37);
        let mut z = move || -> f64 { normal.sample(StandardNormal) };
        let rows: Vec<Vec<Option<Vec<Count>>>> = (0..problems)
            .map(|_| {
                let zi = 0.3 + sigma * z();
                (0..models)
                    .map(|m| {
                        let logit = zi - 0.5 * m as f64 + tau * z();
                        Some(
                            (0..runs)
                                .map(|_| {
                                    let eta = if runs > 1 { omega * z() } else { 0.0 };
                                    Count::new(draw(logit + eta, samples), samples as usize)
                                })
                                .collect(),
                        )
                    })
                    .collect()
            })
            .collect();
        if runs > 1 {
            JointData::with_runs(models, rows).unwrap()
        } else {
            let pooled = rows
                .into_iter()
                .map(|r| r.into_iter().map(|e| e.map(|v| v[0])).collect())
                .collect();
            JointData::new(models, pooled).unwrap()
        }
    }

    /// The trajectory of (done, predicted total) of a fit of `data`.
    fn trajectory(data: &JointData) -> Vec<(usize, usize)> {
        let eta = FitEta::new();
        let out = std::cell::RefCell::new(Vec::new());
        fit_joint_observed(data, &JointFitOptions::default(), &|e| {
            let x = eta.observe(e);
            out.borrow_mut().push(x);
        });
        out.into_inner()
    }

    /// The ETA of a fit must be honest: after the first 10% of its evaluations the predicted
    /// total stays within a factor of 2 of the true total (the ETA of the remaining work then
    /// moves by at most that factor when the time per evaluation is steady).
    #[test]
    fn fit_progress_predicts_the_total_within_a_factor_of_two_after_ten_percent() {
        let cases: Vec<(&str, JointData)> = vec![
            (
                "1 model, N = 200, n = 16",
                simulate(1, 200, 1, (1, 16), (1.5, 0.0, 0.0)),
            ),
            (
                "3 models, N = 100, n = 16",
                simulate(2, 100, 3, (1, 16), (1.2, 0.6, 0.0)),
            ),
            (
                "2 models, N = 800, n = 10, code benchmark",
                simulate(3, 800, 2, (1, 10), (12.0, 3.0, 0.0)),
            ),
            (
                "1 model, N = 60, 3 runs of 6",
                simulate(4, 60, 1, (3, 6), (1.5, 0.0, 0.7)),
            ),
        ];
        let mut bad = Vec::new();
        for (label, data) in cases {
            let t = trajectory(&data);
            let total = t.last().map_or(0, |x| x.0);
            let ratios: Vec<f64> = t
                .iter()
                .filter(|(done, _)| *done * 10 >= total)
                .map(|(_, predicted)| *predicted as f64 / total as f64)
                .collect();
            let (lo, hi) = ratios
                .iter()
                .fold((f64::INFINITY, 0.0f64), |(a, b), &r| (a.min(r), b.max(r)));
            println!("{label}: {total} evaluations, predicted/true after 10%: {lo:.2} to {hi:.2}");
            if !(lo >= 0.5 && hi <= 2.0) {
                bad.push(format!("{label}: {lo} to {hi}; {t:?}"));
            }
        }
        assert!(bad.is_empty(), "{bad:#?}");
    }
}
