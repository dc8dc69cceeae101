//! The outputs of a `plan` experiment: the files `evalsim plan` writes (see
//! [`crate::report::planning`]), a Markdown section and the cheapest design per target.

use super::KindReport;
use crate::experiments::plan::PlanResult;
use crate::experiments::RunOutput;
use crate::report::format::Unit;
use crate::report::plot::Figure;
use crate::report::summary::{format_value, Rows};
use crate::report::{planning, Artifact, ReportError};
use crate::scenario::spec::PlanMetric;

/// The report of a `plan` result.
pub(super) struct Report<'a>(pub(super) &'a PlanResult);

impl KindReport for Report<'_> {
    /// A plan writes the files of `evalsim plan` instead ([`KindReport::own_files`]).
    fn tables(&self, _run: &RunOutput) -> Vec<(String, String)> {
        Vec::new()
    }

    /// A plan's figures (a line figure and a heat map) come from [`planning::render_plan`].
    fn figures(&self, _run: &RunOutput) -> Vec<(String, Figure)> {
        Vec::new()
    }

    fn own_files(
        &self,
        run: &RunOutput,
        figures: Option<crate::report::plot::Raster>,
    ) -> Option<Result<Vec<Artifact>, ReportError>> {
        // The same files `evalsim plan` writes, named after the experiment.
        Some(planning::render_plan(self.0, Some(&run.scenario), figures))
    }

    fn caption(&self, tail: &str) -> &'static str {
        match tail {
            "-detectable" => "The smallest gap a two-sided 5% test finds with 80% power, per design (population: new problems, question + sampling noise; fixed: these problems, sampling noise only), with the simulated mean of B - A there.",
            "-heatmap" => "Each cell of the grid coloured by the planned quantity; outlined cells meet the target.",
            _ => "How often the better model scores at or below the worse one in one rerun, against the number of problems N.",
        }
    }

    fn markdown(&self) -> String {
        plan_md(self.0)
    }

    fn headline(&self, rows: &mut Rows) {
        plan(self.0, rows);
    }
}

fn plan_md(p: &PlanResult) -> String {
    let mut md = planning::paragraph(p);
    md += "\n| design | gap (logits) | target | bound | N | samples | value |\n|---|---:|---|---:|---:|---:|---:|\n";
    for a in &p.answers {
        let (n, s, v) = a.best.map_or(
            ("none".into(), String::new(), String::new()),
            |(n, s, v)| (n.to_string(), s.to_string(), format!("{v:.4}")),
        );
        md += &format!(
            "| {} | {} | {} | {} | {n} | {s} | {v} |\n",
            a.design.as_str(),
            a.gap_logits,
            a.target,
            a.bound
        );
    }
    md + "\n"
}

/// The cheapest design that meets each target.
fn plan(p: &PlanResult, rows: &mut Rows) {
    let per_problem = match p.spec.metric {
        PlanMetric::Pass1 => "n",
        PlanMetric::Maj { .. } => "k",
    };
    for a in &p.answers {
        let (what, unit) = if a.target == "loss_or_tie" {
            ("P(B <= A)", Unit::Percent)
        } else {
            ("95% CI half-width", Unit::Points)
        };
        let bound = format_value(unit, a.bound);
        match a.best {
            Some((big_n, n, v)) => rows.push(
                format!(
                    "{} at gap {} logits, cheapest with {what} <= {bound}: N={big_n}, {}={n}",
                    a.design.as_str(),
                    a.gap_logits,
                    per_problem
                ),
                unit,
                v,
                None,
            ),
            None => rows.push(
                format!(
                    "{} at gap {} logits: no cell of the grid has {what} <= {bound}",
                    a.design.as_str(),
                    a.gap_logits
                ),
                unit,
                f64::NAN,
                None,
            ),
        }
    }
}
