//! The outputs of an `attractor-sweep` experiment: maj@k at each setting of one model's answer
//! shares (attractor, split) or of its grader's false-positive rate.
mod figures;

use super::curves::{cell, vote_csv};
use super::KindReport;
use crate::experiments::votes::{Metric, VoteCurves};
use crate::experiments::RunOutput;
use crate::report::format::{pct, Unit};
use crate::report::plot::Figure;
use crate::report::summary::Rows;
use crate::scenario::SweepAxis;

/// The report of an `attractor-sweep` result.
pub(super) struct Report<'a>(pub(super) &'a VoteCurves);

impl KindReport for Report<'_> {
    fn tables(&self, run: &RunOutput) -> Vec<(String, String)> {
        vec![(format!("{}.csv", self.0.experiment), vote_csv(run, self.0))]
    }

    fn figures(&self, run: &RunOutput) -> Vec<(String, Figure)> {
        let r = self.0;
        let figure = match r.axis {
            Some(SweepAxis::Split) => figures::split_figure(run, r),
            Some(SweepAxis::GraderFpr) => figures::grader_figure(run, r),
            _ => figures::sweep_figure(run, r),
        };
        vec![(r.experiment.clone(), figure)]
    }

    fn caption(&self, _tail: &str) -> &'static str {
        match self.0.axis {
            Some(SweepAxis::GraderFpr) => "graded pass@k at each k against the grader's false-positive rate (lines exact, dots simulated with 95% CIs), with each k's true pass@k dashed in the same colour: every wrong sample has a chance fpr to be graded correct, so graded pass@k tends to 1 as k grows whatever the model can do.",
            Some(SweepAxis::Split) => "maj@k at each k against the split share (lines exact, dots simulated with 95% CIs), with pass@1 and pass@k at the largest k (dashed), which the split does not move.",
            Some(_) => "maj@k against k for each setting of the model's attractor shares, with pass@k for comparison; each dashed line is that setting's large-k limit of maj@k (a problem is won in the limit iff p max(s, 1 - s) > a_j (1 - p) for every j).",
            None => "maj@k against k for each attractor share a, with pass@k for comparison; each dashed line is that share's large-k limit of maj@k.",
        }
    }

    fn markdown(&self) -> String {
        sweep_md(self.0)
    }

    fn headline(&self, rows: &mut Rows) {
        attractor_sweep(self.0, rows);
    }
}

fn sweep_md(v: &VoteCurves) -> String {
    if v.axis == Some(SweepAxis::GraderFpr) {
        return grader_sweep_md(v);
    }
    if v.axis.is_some() {
        return sweep_axis_md(v);
    }
    let kmax = *v.k.last().unwrap_or(&1);
    let mut md = format!(
        "maj@{kmax} against the attractor share a (model `{}`; pass@{kmax} = {} for every a):\n\n",
        v.series[0].model,
        cell(v, 0, kmax, Metric::PassAtK)
    );
    md +=
        &format!("| a | threshold a/(1+a) | large-k limit | maj@{kmax} |\n|---:|---:|---:|---:|\n");
    for (si, s) in v.series.iter().enumerate() {
        md += &format!(
            "| {} | {:.3} | {} | {} |\n",
            s.attractor,
            s.threshold,
            pct(s.ceiling, 2),
            cell(v, si, kmax, Metric::MajAtK)
        );
    }
    md + "\n"
}

/// A sweep of the grader's false-positive rate: graded pass@k at the smallest and largest k, the
/// true value beside it, and graded maj@k.
fn grader_sweep_md(v: &VoteCurves) -> String {
    let (kmin, kmax) = (v.k[0], *v.k.last().unwrap_or(&1));
    let truth = |k: u32| {
        v.points
            .iter()
            .find(|p| p.series == 0 && p.k == k && p.metric == Metric::PassAtK)
            .and_then(|p| p.truth)
            .map_or("–".to_string(), |t| format!("{:.2}", 100.0 * t.exact))
    };
    let mut md = format!(
        "Graded pass@k of model `{}` against the grader's false-positive rate (fnr {}); the true pass@{kmin} is {} and the true pass@{kmax} {} points at every rate. Cells: exact (simulated ± SE), points.\n\n",
        v.series[0].model,
        v.series[0].grader.map_or(0.0, |g| g.fnr),
        truth(kmin),
        truth(kmax),
    );
    md += &format!("| grader fpr | pass@{kmin} graded | pass@{kmax} graded | maj@{kmax} graded |\n|---:|---:|---:|---:|\n");
    for (si, s) in v.series.iter().enumerate() {
        md += &format!(
            "| {} | {} | {} | {} |\n",
            s.grader.map_or(0.0, |g| g.fpr),
            cell(v, si, kmin, Metric::PassAtK),
            cell(v, si, kmax, Metric::PassAtK),
            cell(v, si, kmax, Metric::MajAtK)
        );
    }
    md + "\n"
}

/// A sweep of another axis than the one attractor share: one row per swept setting.
fn sweep_axis_md(v: &VoteCurves) -> String {
    let kmax = *v.k.last().unwrap_or(&1);
    let what = v.axis.map_or_else(|| "a".to_string(), |a| a.label());
    let mut md = format!(
        "maj@{kmax} against {what} (model `{}`), with pass@1 and pass@{kmax} beside it:\n\n",
        v.series[0].model,
    );
    md += &format!("| answers | pass@1 | pass@{kmax} | threshold | large-k limit | maj@{kmax} |\n|---|---:|---:|---:|---:|---:|\n");
    for (si, s) in v.series.iter().enumerate() {
        md += &format!(
            "| {} | {} | {} | {:.3} | {} | {} |\n",
            s.modes_label(),
            pct(s.pass_at_1, 2),
            cell(v, si, kmax, Metric::PassAtK),
            s.threshold,
            pct(s.ceiling, 2),
            cell(v, si, kmax, Metric::MajAtK)
        );
    }
    md + "\n"
}

fn attractor_sweep(v: &VoteCurves, rows: &mut Rows) {
    let kmax = *v.k.last().unwrap_or(&1);
    let metric = if v.axis == Some(SweepAxis::GraderFpr) {
        Metric::PassAtK
    } else {
        Metric::MajAtK
    };
    let name = metric.name().replace('k', &kmax.to_string());
    let mut collapse = None;
    for (si, s) in v.series.iter().enumerate() {
        let setting = match v.axis {
            Some(SweepAxis::GraderFpr) => s
                .grader
                .as_ref()
                .map_or_else(|| s.modes_label(), |g| format!("fpr={}", g.fpr)),
            _ => s.modes_label(),
        };
        for p in v
            .points
            .iter()
            .filter(|p| p.series == si && p.k == kmax && p.metric == metric)
        {
            rows.push(
                format!("{} {setting}: {name}", s.model),
                Unit::Percent,
                p.estimate.exact,
                Some(p.estimate.sim),
            );
            if metric == Metric::MajAtK && collapse.is_none() && p.estimate.exact < s.pass_at_1 {
                collapse = Some(format!(
                    "{} pass@1 ({name} falls below it from {setting})",
                    s.model
                ));
            }
        }
    }
    if metric == Metric::MajAtK {
        rows.push(
            collapse.unwrap_or_else(|| {
                let model = v.series.first().map_or("", |s| s.model.as_str());
                format!("{model} pass@1 ({name} stays above it at every setting)")
            }),
            Unit::Percent,
            v.series.first().map_or(f64::NAN, |s| s.pass_at_1),
            None,
        );
    }
}
