//! The outputs of a `confidence` experiment: its CSV table, its Markdown section, its headline
//! rows and its figure (filtered maj@k against the kept share, one panel per model and k).
//! Formatting only: every number is in the result.
use crate::exact::confidence::Filter;
use crate::experiments::confidence::{ConfidenceCurves, ConfidencePoint};
use crate::experiments::{num, RunOutput};
use crate::report::csv::{estimate_row, header};
use crate::report::format::Unit;
use crate::report::kinds::KindReport;
use crate::report::plot::{Figure, Line, Markers, Note, Panel};
use crate::report::summary::Rows;

/// The report of a `confidence` result.
pub(super) struct Report<'a>(pub(super) &'a ConfidenceCurves);

impl KindReport for Report<'_> {
    fn tables(&self, run: &RunOutput) -> Vec<(String, String)> {
        vec![(
            format!("{}.csv", self.0.experiment),
            confidence_csv(run, self.0),
        )]
    }

    fn figures(&self, run: &RunOutput) -> Vec<(String, Figure)> {
        vec![(self.0.experiment.clone(), confidence_figure(run, self.0))]
    }

    fn caption(&self, _tail: &str) -> &'static str {
        CAPTION
    }

    fn markdown(&self) -> String {
        confidence_md(self.0)
    }

    fn headline(&self, rows: &mut Rows) {
        confidence_headline(self.0, rows);
    }
}

use crate::report::format::{pct, signed_pts};

use crate::report::format::pct_cell as cell;

/// The filter's kind and parameter as two table fields.
fn filter_fields(f: Option<Filter>) -> [String; 2] {
    match f {
        None => ["none".into(), String::new()],
        Some(Filter::TopShare(s)) => ["top-share".into(), num(s)],
        Some(Filter::Threshold(t)) => ["threshold".into(), num(t)],
    }
}

/// One row per (point, quantity): filtered maj@k, and the threshold filter's kept share.
fn confidence_csv(run: &RunOutput, r: &ConfidenceCurves) -> String {
    let mut csv = header(
        &["model", "k", "filter", "parameter", "quantity"],
        &[
            "kept_share",
            "gain",
            "separation",
            "attractor_confidence",
            "attractor",
            "vote_rule",
            "votes",
        ],
    );
    for pt in &r.points {
        let s = &r.series[pt.series];
        let [kind, parameter] = filter_fields(pt.filter);
        let rows = std::iter::once(("filtered maj@k", &pt.estimate))
            .chain(pt.kept.as_ref().map(|k| ("kept share", k)));
        for (quantity, e) in rows {
            csv.row(estimate_row(
                run,
                &r.experiment,
                [
                    s.model.clone(),
                    pt.k.to_string(),
                    kind.clone(),
                    parameter.clone(),
                    quantity.to_string(),
                ],
                e,
                [
                    num(pt.kept_share),
                    num(pt.gain),
                    num(s.confidence.separation),
                    num(s.confidence.attractor),
                    num(s.attractor),
                    s.vote_rule.as_str().to_string(),
                    r.votes.to_string(),
                ],
            ));
        }
    }
    csv.finish()
}

/// The Markdown section: one table per model and k.
fn confidence_md(r: &ConfidenceCurves) -> String {
    let mut md = format!(
        "Confidence-filtered maj@k on {} problems ({} simulated votes per problem and point): a correct sample's confidence is N(separation, 1), the attractor answer's N(attractor confidence, 1), a one-off wrong answer's N(0, 1). \"top s\" keeps the ceil(s k) most confident samples; \"conf>t\" keeps those above t (its kept share is the exact mean over problems); a vote with nothing kept is lost.\n\n",
        r.problems, r.votes
    );
    for (si, s) in r.series.iter().enumerate() {
        for &k in &r.k {
            md += &format!(
                "`{}` (pass@1 {}, attractor share {}, separation {}, attractor confidence {}), k = {}:\n\n| filter | kept share | filtered maj@k | minus unfiltered |\n|---|---:|---:|---:|\n",
                s.model,
                pct(s.pass_at_1, 1),
                num(s.attractor),
                num(s.confidence.separation),
                num(s.confidence.attractor),
                k
            );
            for pt in r.points.iter().filter(|p| p.series == si && p.k == k) {
                md += &format!(
                    "| {} | {} | {} | {} pts |\n",
                    ConfidenceCurves::filter_name(pt.filter),
                    pct(pt.kept_share, 1),
                    cell(&pt.estimate),
                    signed_pts(pt.gain, 2)
                );
            }
            md += "\n";
        }
    }
    md
}

/// The headline rows: per model and k, the unfiltered maj@k and the best filter's.
fn confidence_headline(r: &ConfidenceCurves, rows: &mut Rows) {
    for (si, s) in r.series.iter().enumerate() {
        for &k in &r.k {
            let pts: Vec<&ConfidencePoint> = r
                .points
                .iter()
                .filter(|p| p.series == si && p.k == k)
                .collect();
            let Some(plain) = pts.iter().find(|p| p.filter.is_none()) else {
                continue;
            };
            rows.push(
                format!("{} maj@{k} unfiltered", s.model),
                Unit::Percent,
                plain.estimate.exact,
                Some(plain.estimate.sim),
            );
            let best = pts.iter().filter(|p| p.filter.is_some()).fold(
                None::<&&ConfidencePoint>,
                |b, p| match b {
                    Some(b) if b.estimate.exact >= p.estimate.exact => Some(b),
                    _ => Some(p),
                },
            );
            if let Some(b) = best {
                rows.push(
                    format!(
                        "{} maj@{k}, best filter ({})",
                        s.model,
                        ConfidenceCurves::filter_name(b.filter)
                    ),
                    Unit::Percent,
                    b.estimate.exact,
                    Some(b.estimate.sim),
                );
            }
        }
    }
}

/// The caption under the figure.
const CAPTION: &str = "Benchmark maj@k among the samples a confidence filter keeps, against the share of the k samples kept: the top-share filter (the most confident ceil(s k) vote) and the threshold filter (samples above t vote; placed at its exact mean kept share, each point labelled with t). Lines exact, dots simulated with 95% CIs; the dashed line is the unfiltered maj@k (kept share 100%). Filtering helps where the lines rise above it and hurts where they fall below.";

/// One panel per (model, k): filtered maj@k against the kept share.
fn confidence_figure(run: &RunOutput, r: &ConfidenceCurves) -> Figure {
    let pc = |x: f64| 100.0 * x;
    let mut panels = Vec::new();
    for (si, s) in r.series.iter().enumerate() {
        for &k in &r.k {
            let pts: Vec<&ConfidencePoint> = r
                .points
                .iter()
                .filter(|p| p.series == si && p.k == k)
                .collect();
            let Some(plain) = pts.iter().find(|p| p.filter.is_none()) else {
                continue;
            };
            let plain_y = pc(plain.estimate.exact);
            let mut p = Panel::new(
                format!(
                    "{}: separation {}, attractor confidence {} (a = {}), k = {k}",
                    s.model,
                    num(s.confidence.separation),
                    num(s.confidence.attractor),
                    num(s.attractor)
                ),
                "share of the k samples kept (%)",
                format!("maj@{k} among kept samples (%)"),
            );
            p.x_range = (0.0, 100.0);
            let (mut lo, mut hi) = (plain_y, plain_y);
            let mut series = |top: bool, color: usize, label: &str| {
                let mut chosen: Vec<&&ConfidencePoint> = pts
                    .iter()
                    .filter(|q| match q.filter {
                        Some(Filter::TopShare(_)) => top,
                        Some(Filter::Threshold(_)) => !top,
                        None => false,
                    })
                    .collect();
                chosen.sort_by(|a, b| a.kept_share.total_cmp(&b.kept_share));
                let mut line: Vec<(f64, f64)> = chosen
                    .iter()
                    .map(|q| (pc(q.kept_share), pc(q.estimate.exact)))
                    .collect();
                // Keeping every sample is the unfiltered vote.
                if line.last().is_none_or(|l| l.0 < 100.0) {
                    line.push((100.0, plain_y));
                }
                for q in &chosen {
                    lo = lo.min(pc(q.estimate.ci_low)).min(pc(q.estimate.exact));
                    hi = hi.max(pc(q.estimate.ci_high)).max(pc(q.estimate.exact));
                }
                p.lines.push(Line {
                    label: Some(format!("{label} (exact)")),
                    color,
                    dashed: false,
                    points: line,
                });
                p.markers.push(Markers {
                    label: Some(format!("{label}, simulated (95% CI)")),
                    color,
                    points: chosen
                        .iter()
                        .map(|q| {
                            let e = q.estimate;
                            (pc(q.kept_share), pc(e.sim), pc(e.ci_low), pc(e.ci_high))
                        })
                        .collect(),
                });
                if !top {
                    for q in &chosen {
                        if let Some(Filter::Threshold(t)) = q.filter {
                            p.notes.push(Note {
                                at: (pc(q.kept_share), pc(q.estimate.exact)),
                                text: format!("t={}", num(t)),
                            });
                        }
                    }
                }
            };
            series(true, 0, "most confident share");
            series(false, 1, "confidence above t");
            p.lines.push(Line {
                label: Some(format!(
                    "unfiltered maj@{k} {}",
                    pct(plain.estimate.exact, 1)
                )),
                color: 7,
                dashed: true,
                points: vec![(0.0, plain_y), (100.0, plain_y)],
            });
            let pad = 0.12 * (hi - lo).max(4.0);
            p.y_range = ((lo - pad).max(0.0), (hi + pad).min(100.0));
            panels.push(p);
        }
    }
    let n = panels.len();
    let columns = crate::report::plot::grid_columns(n);
    let rows = n.div_ceil(columns).max(1);
    Figure {
        title: format!(
            "{}: confidence-filtered majority vote against the kept share · scenario {} · seed {}",
            r.experiment, run.scenario, run.seed
        ),
        panels,
        columns,
        size: (1000 * columns as u32, 120 + 640 * rows as u32),
    }
}
