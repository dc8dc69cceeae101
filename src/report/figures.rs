//! Turns finished results into [`Figure`] descriptions (no statistics computed here).
use plotters::prelude::SeriesLabelPosition;

use super::plot::{Figure, Line, Markers, Panel, Scale};
use crate::experiments::votes::{Metric, VoteCurves};
use crate::experiments::{ExperimentResult, RunOutput};

/// Percent of a fraction, for axes in percent.
fn pct(x: f64) -> f64 {
    100.0 * x
}

fn title(run: &RunOutput, what: &str) -> String {
    format!("{what} · scenario {} · seed {}", run.scenario, run.seed)
}

/// The figures of one experiment: (file stem, figure).
pub fn experiment_figures(run: &RunOutput, result: &ExperimentResult) -> Vec<(String, Figure)> {
    match result {
        ExperimentResult::Curves(r) => vec![(r.experiment.clone(), curves_figure(run, r))],
        ExperimentResult::AttractorSweep(r) => vec![(r.experiment.clone(), sweep_figure(run, r))],
    }
}

fn k_axis(p: &mut Panel, ks: &[u32]) {
    p.x_scale = Scale::Log2;
    let kmin = f64::from(*ks.first().unwrap_or(&1));
    let kmax = f64::from(*ks.last().unwrap_or(&64));
    p.x_range = (kmin / 1.25, kmax * 1.25);
    let mut ticks = Vec::new();
    let mut t = 1.0;
    while t <= kmax * 1.01 {
        if t >= kmin * 0.99 {
            ticks.push(t);
        }
        t *= 2.0;
    }
    p.x_ticks = Some(ticks);
    p.y_range = (0.0, 100.0);
}

type XY = Vec<(f64, f64)>;
type XYBars = Vec<(f64, f64, f64, f64)>;

fn series_line(r: &VoteCurves, si: usize, metric: Metric) -> (XY, XYBars) {
    let pts: Vec<_> = r
        .points
        .iter()
        .filter(|p| p.series == si && p.metric == metric)
        .collect();
    let line = pts
        .iter()
        .map(|p| (f64::from(p.k), pct(p.estimate.exact)))
        .collect();
    let marks = pts
        .iter()
        .map(|p| {
            (
                f64::from(p.k),
                pct(p.estimate.sim),
                pct(p.estimate.ci_low),
                pct(p.estimate.ci_high),
            )
        })
        .collect();
    (line, marks)
}

fn curves_figure(run: &RunOutput, r: &VoteCurves) -> Figure {
    let metrics = [
        (Metric::PassAtK, 0usize),
        (Metric::MajAtK, 2),
        (Metric::PassHatK, 1),
    ];
    let panels = r
        .series
        .iter()
        .enumerate()
        .map(|(si, s)| {
            let mut p = Panel::new(
                format!(
                    "model {} (a = {}, {} ties, pass@1 {:.1}%)",
                    s.model,
                    s.attractor,
                    s.vote_rule.as_str(),
                    pct(s.pass_at_1)
                ),
                "k (samples per problem, log2 scale)",
                "benchmark score (%)",
            );
            k_axis(&mut p, &r.k);
            for (metric, color) in metrics {
                let (line, marks) = series_line(r, si, metric);
                p.lines.push(Line {
                    label: Some(metric.as_str().to_string()),
                    color,
                    dashed: false,
                    points: line,
                });
                p.markers.push(Markers {
                    label: None,
                    color,
                    points: marks,
                });
            }
            p.lines.push(Line {
                label: Some(format!(
                    "maj@k ceiling {:.1}% (p > {:.3})",
                    pct(s.ceiling),
                    s.threshold
                )),
                color: 2,
                dashed: true,
                points: vec![(p.x_range.0, pct(s.ceiling)), (p.x_range.1, pct(s.ceiling))],
            });
            p.legend = SeriesLabelPosition::UpperLeft;
            p
        })
        .collect::<Vec<_>>();
    let columns = panels.len().min(2);
    let width = if columns > 1 { 1600 } else { 900 };
    let rows = panels.len().div_ceil(columns) as u32;
    Figure {
        title: title(
            run,
            &format!(
                "{}: lines exact, dots simulated with 95% CI ({} votes per problem)",
                r.experiment, r.votes
            ),
        ),
        panels,
        columns,
        size: (width, 80 + 560 * rows),
    }
}

fn sweep_figure(run: &RunOutput, r: &VoteCurves) -> Figure {
    let s0 = &r.series[0];
    let mut p = Panel::new(
        format!("model {} ({} ties, pass@1 {:.1}%); lines exact, dots simulated (95% CI), dashed: large-k ceiling", s0.model, s0.vote_rule.as_str(), pct(s0.pass_at_1)),
        "k (samples per problem, log2 scale)",
        "benchmark score (%)",
    );
    k_axis(&mut p, &r.k);
    let (pass_line, _) = series_line(r, 0, Metric::PassAtK);
    p.lines.push(Line {
        label: Some("pass@k exact".into()),
        color: 6,
        dashed: false,
        points: pass_line,
    });
    for (si, s) in r.series.iter().enumerate() {
        let color = [0usize, 1, 2, 3, 4, 5, 7][si % 7];
        let (line, marks) = series_line(r, si, Metric::MajAtK);
        p.lines.push(Line {
            label: Some(format!(
                "maj@k, a = {} (ceiling {:.1}%)",
                s.attractor,
                pct(s.ceiling)
            )),
            color,
            dashed: false,
            points: line,
        });
        p.markers.push(Markers {
            label: None,
            color,
            points: marks,
        });
        p.lines.push(Line {
            label: None,
            color,
            dashed: true,
            points: vec![(p.x_range.0, pct(s.ceiling)), (p.x_range.1, pct(s.ceiling))],
        });
    }
    p.legend = SeriesLabelPosition::UpperLeft;
    Figure {
        title: title(
            run,
            &format!(
                "{}: maj@k by attractor share a ({} votes/problem)",
                r.experiment, r.votes
            ),
        ),
        panels: vec![p],
        columns: 1,
        size: (1200, 720),
    }
}
