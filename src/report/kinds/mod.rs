//! One module per experiment kind, each holding every output of its result: the CSV tables,
//! the figures and their captions, the Markdown section of `report.md`, and the headline rows
//! `run` prints and `summary.json` holds. Each implements [`KindReport`]; [`of`] is the one place
//! that maps a result to its kind's report, so that a new kind adds a module and one line there.
//! Formatting only: every number is in the result.
mod attractor_sweep;
mod budget;
mod confidence;
mod contamination;
mod cost;
mod curves;
mod head_to_head;
mod judge;
mod plan;
mod seed_variance;
mod vote_spread;

use super::plot::Figure;
use super::summary::Rows;
use super::{Artifact, ReportError};
use crate::experiments::{ExperimentResult, RunOutput};

/// Every output of one experiment kind's result.
pub trait KindReport {
    /// The CSV tables: (file name, text).
    fn tables(&self, run: &RunOutput) -> Vec<(String, String)>;

    /// The figures: (file stem, figure).
    fn figures(&self, run: &RunOutput) -> Vec<(String, Figure)>;

    /// Files the kind renders itself in place of [`KindReport::tables`] and
    /// [`KindReport::figures`] (PNG files among them are embedded in `report.md`); None for
    /// the kinds whose tables and figures are all their files.
    ///
    /// # Errors
    /// [`ReportError`] when a figure cannot be rendered.
    fn own_files(
        &self,
        _run: &RunOutput,
        _figures: Option<crate::report::plot::Raster>,
    ) -> Option<Result<Vec<Artifact>, ReportError>> {
        None
    }

    /// One sentence saying what a figure shows; `tail` is its file stem after the experiment's
    /// name ("" for the main figure, "-lengths", ...).
    fn caption(&self, tail: &str) -> &'static str;

    /// The experiment's section of `report.md`, after its figures.
    fn markdown(&self) -> String;

    /// The few numbers the experiment exists for (see [`super::summary`]).
    fn headline(&self, rows: &mut Rows);
}

/// The report of `result`: the registry of experiment kinds.
pub fn of(result: &ExperimentResult) -> Box<dyn KindReport + '_> {
    match result {
        ExperimentResult::Curves(r) => Box::new(curves::Report(r)),
        ExperimentResult::AttractorSweep(r) => Box::new(attractor_sweep::Report(r)),
        ExperimentResult::SeedVariance(r) => Box::new(seed_variance::Report(r)),
        ExperimentResult::VoteSpread(r) => Box::new(vote_spread::Report(r)),
        ExperimentResult::HeadToHead(r) => Box::new(head_to_head::Report(r)),
        ExperimentResult::Budget(r) => Box::new(budget::Report(r)),
        ExperimentResult::Cost(r) => Box::new(cost::Report(r)),
        ExperimentResult::Plan(r) => Box::new(plan::Report(r)),
        ExperimentResult::Contamination(r) => Box::new(contamination::Report(r)),
        ExperimentResult::Judge(r) => Box::new(judge::Report(r)),
        ExperimentResult::Confidence(r) => Box::new(confidence::Report(r)),
    }
}
