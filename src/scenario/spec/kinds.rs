//! What the scenario layer asks of each kind's resolved spec, one [`KindSpec`] impl per kind:
//! its kind, the models it draws from, how much simulation it asks for ([`Work`]), the model keys
//! it sets itself, and the same experiment with fewer draws (the probe `sweep --plot` runs).
//! [`ExperimentSpec::as_kind`] is the one match over the variants.
use super::*;
use crate::scenario::kinds::ExperimentKind;

/// How much simulation an experiment asks for, from one count of its cells: the limits bound
/// `draws`, the progress bar counts `ticks`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Work {
    /// Per-problem draws (votes, counts, traces or reruns times the problems they cover): what
    /// [`crate::scenario::MAX_TOTAL_VOTES`] bounds.
    pub draws: u64,
    /// Progress units the experiment reports as it runs: votes or traces for the per-problem
    /// kinds, reruns for the noise kinds, and for the plan its reruns weighted by their cost
    /// ([`Plan::rerun_cost`]).
    pub ticks: u64,
}

impl Work {
    /// `units` draws on each of `problems` problems, each a tick.
    fn per_problem(units: u64, problems: usize) -> Work {
        let p = problems as u64;
        Work {
            draws: units.saturating_mul(p),
            ticks: units.saturating_mul(p),
        }
    }

    /// `reruns` reruns of `cells` cells, each rerun drawing every problem of `models` models;
    /// a rerun is a tick.
    fn reruns(cells: u64, models: u64, reruns: u64, problems: usize) -> Work {
        Work {
            draws: cells
                .saturating_mul(models)
                .saturating_mul(reruns)
                .saturating_mul(problems as u64),
            ticks: cells.saturating_mul(reruns),
        }
    }
}

/// One kind's resolved spec, as the scenario layer (limits, progress, sweeps) sees it.
pub trait KindSpec {
    /// The kind of this experiment.
    fn kind(&self) -> ExperimentKind;

    /// The models the experiment draws from, by index.
    fn models(&self) -> Vec<usize>;

    /// The simulation the experiment will run on a benchmark of `problems` problems.
    fn work(&self, problems: usize) -> Work;

    /// Caps the votes, reruns or traces of every cell at `most` (a probe run: which checks an
    /// experiment reports depends on its grids, not on its draws).
    fn cap_draws(&mut self, most: u64);

    /// The keys of its model that the experiment sets itself, so that a value given in the model
    /// (or swept with `--set model.NAME.KEY`) does not reach it.
    fn sets_model_keys(&self) -> &'static [&'static str] {
        &[]
    }
}

/// Applies `$body` to the spec struct `$s` inside any variant of an [`ExperimentSpec`]: the one
/// list of variants the dispatch of [`KindSpec`] (and `experiments::kind_run`) is written from.
#[macro_export]
macro_rules! each_spec {
    ($spec:expr, $s:ident => $body:expr) => {{
        use $crate::scenario::ExperimentSpec as E;
        match $spec {
            E::Curves($s) => $body,
            E::AttractorSweep($s) => $body,
            E::SeedVariance($s) => $body,
            E::VoteSpread($s) => $body,
            E::HeadToHead($s) => $body,
            E::Budget($s) => $body,
            E::Cost($s) => $body,
            E::Plan($s) => $body,
            E::Contamination($s) => $body,
            E::Judge($s) => $body,
            E::Confidence($s) => $body,
        }
    }};
}

impl ExperimentSpec {
    /// The spec as its kind's [`KindSpec`].
    pub fn as_kind(&self) -> &dyn KindSpec {
        each_spec!(self, s => s as &dyn KindSpec)
    }

    /// The spec as its kind's [`KindSpec`], to change.
    pub fn as_kind_mut(&mut self) -> &mut dyn KindSpec {
        each_spec!(self, s => s as &mut dyn KindSpec)
    }

    /// The kind of this experiment.
    pub fn kind(&self) -> ExperimentKind {
        self.as_kind().kind()
    }

    /// The models an experiment of this spec draws from, by index.
    pub fn models(&self) -> Vec<usize> {
        self.as_kind().models()
    }

    /// The simulation this experiment will run on a benchmark of `problems` problems.
    pub fn work(&self, problems: usize) -> Work {
        self.as_kind().work(problems)
    }

    /// See [`KindSpec::sets_model_keys`]: an `attractor-sweep` sets the attractor share (or
    /// split, or grader fpr) it sweeps.
    pub fn sets_model_keys(&self) -> &'static [&'static str] {
        self.as_kind().sets_model_keys()
    }
}

fn cap(x: &mut u64, most: u64) {
    *x = (*x).min(most);
}

impl KindSpec for CurvesSpec {
    fn kind(&self) -> ExperimentKind {
        ExperimentKind::Curves
    }
    fn models(&self) -> Vec<usize> {
        self.models.clone()
    }
    fn work(&self, problems: usize) -> Work {
        let cells = self.models.len() as u64 * self.k.len() as u64;
        Work::per_problem(cells.saturating_mul(self.votes), problems)
    }
    fn cap_draws(&mut self, most: u64) {
        cap(&mut self.votes, most);
    }
}

impl KindSpec for AttractorSweepSpec {
    fn kind(&self) -> ExperimentKind {
        ExperimentKind::AttractorSweep
    }
    fn models(&self) -> Vec<usize> {
        vec![self.model]
    }
    fn work(&self, problems: usize) -> Work {
        let cells = self.attractors.len() as u64 * self.k.len() as u64;
        Work::per_problem(cells.saturating_mul(self.votes), problems)
    }
    fn cap_draws(&mut self, most: u64) {
        cap(&mut self.votes, most);
    }
    fn sets_model_keys(&self) -> &'static [&'static str] {
        match self.axis {
            SweepAxis::Share(_) => &["attractor", "attractors"],
            SweepAxis::Scale => &[],
            SweepAxis::Split => &["split"],
            SweepAxis::GraderFpr => &["grader.fpr"],
        }
    }
}

impl KindSpec for SeedVarianceSpec {
    fn kind(&self) -> ExperimentKind {
        ExperimentKind::SeedVariance
    }
    fn models(&self) -> Vec<usize> {
        vec![self.model]
    }
    fn work(&self, problems: usize) -> Work {
        Work::reruns(self.n.len() as u64, 1, self.reruns, problems)
    }
    fn cap_draws(&mut self, most: u64) {
        cap(&mut self.reruns, most);
    }
}

impl KindSpec for VoteSpreadSpec {
    fn kind(&self) -> ExperimentKind {
        ExperimentKind::VoteSpread
    }
    fn models(&self) -> Vec<usize> {
        vec![self.model]
    }
    fn work(&self, problems: usize) -> Work {
        Work::reruns(self.k.len() as u64, 1, self.reruns, problems)
    }
    fn cap_draws(&mut self, most: u64) {
        cap(&mut self.reruns, most);
    }
}

impl KindSpec for HeadToHeadSpec {
    fn kind(&self) -> ExperimentKind {
        ExperimentKind::HeadToHead
    }
    fn models(&self) -> Vec<usize> {
        vec![self.a, self.b]
    }
    fn work(&self, problems: usize) -> Work {
        Work::reruns(self.n.len() as u64, 2, self.reruns, problems)
    }
    fn cap_draws(&mut self, most: u64) {
        cap(&mut self.reruns, most);
    }
}

impl KindSpec for BudgetSpec {
    fn kind(&self) -> ExperimentKind {
        ExperimentKind::Budget
    }
    fn models(&self) -> Vec<usize> {
        self.models.clone()
    }
    fn work(&self, problems: usize) -> Work {
        Work::per_problem(
            (self.models.len() as u64).saturating_mul(self.traces),
            problems,
        )
    }
    fn cap_draws(&mut self, most: u64) {
        cap(&mut self.traces, most);
    }
}

impl KindSpec for CostSpec {
    fn kind(&self) -> ExperimentKind {
        ExperimentKind::Cost
    }
    fn models(&self) -> Vec<usize> {
        self.models.clone()
    }
    fn work(&self, problems: usize) -> Work {
        let voting = self.k.iter().filter(|&&k| k > 1).count() as u64;
        let per_model = self
            .traces
            .saturating_add(voting.saturating_mul(self.votes));
        Work::per_problem(
            (self.models.len() as u64).saturating_mul(per_model),
            problems,
        )
    }
    fn cap_draws(&mut self, most: u64) {
        cap(&mut self.votes, most);
        cap(&mut self.traces, most);
    }
}

impl KindSpec for PlanExperimentSpec {
    fn kind(&self) -> ExperimentKind {
        ExperimentKind::Plan
    }
    fn models(&self) -> Vec<usize> {
        vec![self.model]
    }
    fn work(&self, _problems: usize) -> Work {
        Work {
            draws: self.plan.simulated_draws(),
            ticks: self.plan.planned_cost(),
        }
    }
    fn cap_draws(&mut self, most: u64) {
        cap(&mut self.plan.spec.reruns, most);
    }
}

impl KindSpec for ContaminationSpec {
    fn kind(&self) -> ExperimentKind {
        ExperimentKind::Contamination
    }
    fn models(&self) -> Vec<usize> {
        vec![self.model]
    }
    /// Every (share or 0, fresh size) cell and every share's planned set, each rerun drawing the
    /// public and a fresh set of at most max(fresh, max_fresh) problems.
    fn work(&self, problems: usize) -> Work {
        let s = self.shares.len() as u64;
        let cells = (s + 1) * self.fresh.len() as u64 + 2 * s;
        let largest = u64::from(*self.fresh.iter().max().unwrap_or(&1).max(&self.max_fresh));
        Work {
            draws: cells
                .saturating_mul(self.reruns)
                .saturating_mul(u64::from(self.n))
                .saturating_mul(problems as u64 + largest),
            ticks: cells.saturating_mul(self.reruns),
        }
    }
    fn cap_draws(&mut self, most: u64) {
        cap(&mut self.reruns, most);
    }
}

impl KindSpec for JudgeSpec {
    fn kind(&self) -> ExperimentKind {
        ExperimentKind::Judge
    }
    fn models(&self) -> Vec<usize> {
        vec![self.a, self.b]
    }
    /// The benchmark's problems play no part: N questions per rerun.
    fn work(&self, _problems: usize) -> Work {
        Work {
            draws: self
                .reruns
                .saturating_mul(u64::from(self.comparisons))
                .saturating_mul(JUDGE_DRAWS_PER_QUESTION),
            ticks: self.reruns.saturating_mul(u64::from(self.comparisons)),
        }
    }
    fn cap_draws(&mut self, most: u64) {
        cap(&mut self.reruns, most);
    }
}

impl KindSpec for ConfidenceSpec {
    fn kind(&self) -> ExperimentKind {
        ExperimentKind::Confidence
    }
    fn models(&self) -> Vec<usize> {
        self.models.clone()
    }
    /// Every vote draws its k samples one by one (each with its confidence); every filter scores
    /// the same samples. Progress: the unfiltered votes, then the filtered ones.
    fn work(&self, problems: usize) -> Work {
        let p = problems as u64;
        let ksum: u64 = self.k.iter().map(|&x| u64::from(x)).sum();
        let m = self.models.len() as u64;
        Work {
            draws: m
                .saturating_mul(ksum)
                .saturating_mul(self.votes)
                .saturating_mul(p),
            ticks: (2 * m * self.k.len() as u64)
                .saturating_mul(self.votes)
                .saturating_mul(p),
        }
    }
    fn cap_draws(&mut self, most: u64) {
        cap(&mut self.votes, most);
    }
}
