//! The figure of vote curves: pass@k, maj@k and pass^k against k, one panel per series.

use crate::experiments::votes::{Metric, VoteCurves};
use crate::experiments::{Estimate, RunOutput};
use crate::model::{Verifier, VoteRule};
use crate::report::figures::{
    exact_and_dots, exact_and_simulated, fit_pct_y, k_axis, level, percent, title,
};
use crate::report::plot::{grid_columns, Band, Figure, Line, Markers, Panel};

/// One series' points of one metric as (k, estimate), in the result's order.
pub(in crate::report::kinds) fn series_points(
    r: &VoteCurves,
    si: usize,
    metric: Metric,
) -> Vec<(f64, Estimate)> {
    r.points
        .iter()
        .filter(|p| p.series == si && p.metric == metric)
        .map(|p| (f64::from(p.k), p.estimate))
        .collect()
}

pub(super) fn curves_figure(run: &RunOutput, r: &VoteCurves) -> Figure {
    let mut panels: Vec<Panel> = (0..r.series.len()).map(|si| series_panel(r, si)).collect();
    if r.series.len() > 1 && r.series.iter().any(|s| s.run_sd > 0.0) {
        panels.push(run_sd_panel(r));
    }
    if maj_order_changes(r) {
        panels.push(maj_overtake_panel(r));
    }
    let columns = grid_columns(panels.len());
    let width = if columns > 1 {
        800 * columns as u32
    } else {
        900
    };
    let rows = panels.len().div_ceil(columns) as u32;
    Figure {
        title: title(
            run,
            &format!(
                "{}: lines exact, dots simulated with 95% CI ({} votes per problem), bands ±1 seed SD of one run",
                r.experiment, r.votes
            ),
        ),
        panels,
        columns,
        size: (width, 80 + 560 * rows),
    }
}

/// The panel of series `si`: its metrics against k with their seed-SD bands, its n@k lines, its
/// large-k limits and, under a noisy grader, the true values.
fn series_panel(r: &VoteCurves, si: usize) -> Panel {
    let s = &r.series[si];
    let all_metrics = [
        (Metric::PassAtK, 0usize),
        (Metric::MajAtK, 2),
        (Metric::PassHatK, 1),
        (Metric::BestAtK, 3),
    ];
    let metrics: Vec<(Metric, usize)> = all_metrics
        .into_iter()
        .filter(|(m, _)| *m != Metric::BestAtK || s.verifier.is_some())
        .collect();
    let heading = series_heading(r, si);
    let mut p = Panel::new(
        heading,
        "k (samples per problem, log2 scale)",
        "benchmark score (%)",
    );
    k_axis(&mut p, &r.k);
    for (mi, (metric, color)) in metrics.into_iter().enumerate() {
        // The run-to-run spread of one run at the benchmark's own N (exact).
        p.bands.push(Band {
            label: (mi == 0).then(|| {
                format!(
                    "±1 seed SD of one run ({} problems, k samples each)",
                    r.problems
                )
            }),
            color,
            points: r
                .points
                .iter()
                .filter(|q| q.series == si && q.metric == metric)
                .map(|q| {
                    let (e, sd) = (percent(q.estimate.exact), percent(q.seed_sd));
                    (f64::from(q.k), e - sd, e + sd)
                })
                .collect(),
        });
        exact_and_simulated(
            &mut p,
            Some(metric.name()),
            None,
            color,
            &series_points(r, si, metric),
        );
    }
    selection_lines(&mut p, r, si);
    limits_and_truth(&mut p, r, si);
    fit_pct_y(&mut p);
    p
}

/// The heading of series `si`'s panel: model, answers, ties, pass@1 and its verifier and grader.
fn series_heading(r: &VoteCurves, si: usize) -> String {
    let s = &r.series[si];
    let answers = if s.attractors.is_empty() && s.unparsed == 0.0 && s.split == 0.0 {
        format!("a = {}", s.attractor)
    } else {
        s.modes_label()
    };
    // With a noisy grader the curves are graded: the title gives the graded pass@1 (the
    // k = 1 point's exact value) beside the true one.
    let graded_pass1 = r
        .points
        .iter()
        .find(|pt| pt.series == si && pt.k == 1 && pt.metric == Metric::PassAtK)
        .filter(|_| s.grader.is_some())
        .map(|pt| pt.estimate.exact);
    let pass1 = match graded_pass1 {
        Some(g) => format!(
            "pass@1 {:.1}% graded, {:.1}% true",
            percent(g),
            percent(s.pass_at_1)
        ),
        None => format!("pass@1 {:.1}%", percent(s.pass_at_1)),
    };
    let mut heading = format!(
        "model {} ({answers}, {} ties, {pass1})",
        s.model,
        s.vote_rule.as_str(),
    );
    if s.shift_sd > 0.0 {
        heading += &format!(", shift_sd {}", s.shift_sd);
    }
    if let Some(m) = s.memorised {
        heading += &format!(", memorised share {} at rate {}", m.share, m.rate);
    }
    if s.run_sd > 0.0 {
        heading += &format!(", run_sd {}", s.run_sd);
    }
    if let Some(v) = &s.verifier {
        heading += &format!(", verifier {}", v.describe());
    }
    if let Some(g) = &s.grader {
        heading += &format!(", graded with fpr {} fnr {}", g.fpr, g.fnr);
    }
    heading
}

/// n@k by clusters (solid) and by the verifier (dashed) of series `si`.
fn selection_lines(p: &mut Panel, r: &VoteCurves, si: usize) {
    let s = &r.series[si];
    // n@k between maj@k and pass@k: exact lines and simulated dots, no bands. 1@k is
    // maj@k under random ties and would hide its line; the table keeps it.
    let submitted: Vec<Metric> = r
        .points
        .iter()
        .filter(|q| q.series == si && q.k == r.k[0])
        .map(|q| q.metric)
        .filter(|m| match m {
            Metric::SubmitAtK(1) => s.vote_rule != VoteRule::Random,
            Metric::SubmitAtK(_) => true,
            _ => false,
        })
        .collect();
    // The verifier's n picks, dashed in the colour of the same n by clusters; 1 pick is
    // best@k.
    let verified: Vec<Metric> = r
        .points
        .iter()
        .filter(|q| q.series == si && q.k == r.k[0])
        .map(|q| q.metric)
        .filter(|m| matches!(m, Metric::VerifiedAtK(n) if *n > 1))
        .collect();
    for (j, metric) in submitted.into_iter().enumerate() {
        let label = match metric {
            Metric::SubmitAtK(1) => "1@k (the largest answer cluster submitted)".into(),
            Metric::SubmitAtK(n) => {
                format!("{n}@k (the {n} largest answer clusters submitted)")
            }
            _ => metric.name(),
        };
        exact_and_simulated(
            p,
            Some(label),
            None,
            [6, 4, 7, 5][j % 4],
            &series_points(r, si, metric),
        );
    }
    for (j, metric) in verified.into_iter().enumerate() {
        let Metric::VerifiedAtK(n) = metric else {
            continue;
        };
        let (line, dots) = exact_and_dots(&series_points(r, si, metric));
        let color = [6, 4, 7, 5][j % 4];
        p.lines.push(Line {
            label: Some(format!("{n}@k by verifier (its {n} top-ranked samples)")),
            color,
            dashed: true,
            points: line,
        });
        p.markers.push(Markers {
            label: None,
            color,
            points: dots,
        });
    }
}

/// The large-k limits of maj@k and best@k as levels, and the true pass@k and maj@k beside the
/// graded ones under a noisy grader.
fn limits_and_truth(p: &mut Panel, r: &VoteCurves, si: usize) {
    let s = &r.series[si];
    let ceiling = format!(
        "maj@k large-k limit {:.1}% (p > {:.3})",
        percent(s.ceiling),
        s.threshold
    );
    level(p, Some(ceiling), 2, percent(s.ceiling));
    if let Some(c) = s.best_ceiling {
        let label = format!(
            "best@k ceiling {:.1}% ({})",
            percent(c),
            match s.verifier {
                Some(Verifier::Threshold(_)) => {
                    "the verifier's precision: mean of alpha/(alpha+beta)"
                }
                _ => "reward model: a correct sample tops the rest as k grows",
            }
        );
        level(p, Some(label), 3, percent(c));
    }
    if s.grader.is_some() {
        // The true values beside the graded ones: how much the grader inflates them.
        for (metric, color) in [(Metric::PassAtK, 0usize), (Metric::MajAtK, 2)] {
            let points: Vec<(f64, f64)> = r
                .points
                .iter()
                .filter(|q| q.series == si && q.metric == metric)
                .filter_map(|q| q.truth.map(|t| (f64::from(q.k), percent(t.exact))))
                .collect();
            p.lines.push(Line {
                label: Some(format!("{} true (perfect grader)", metric.name())),
                color: if color == 0 { 5 } else { 7 },
                dashed: true,
                points,
            });
        }
    }
}

/// Whether the exact maj@k of two series change order between the smallest and the largest k
/// (a model behind at pass@1 overtakes in the vote): the story then needs one axis.
fn maj_order_changes(r: &VoteCurves) -> bool {
    let ends: Vec<(f64, f64)> = (0..r.series.len())
        .filter_map(|si| {
            let pts = series_points(r, si, Metric::MajAtK);
            Some((pts.first()?.1.exact, pts.last()?.1.exact))
        })
        .collect();
    ends.iter().enumerate().any(|(i, a)| {
        ends[i + 1..]
            .iter()
            .any(|b| (a.0 - b.0) * (a.1 - b.1) < 0.0)
    })
}

/// maj@k (and, dashed, pass@k) of every series on one axis: where one model's vote overtakes
/// another's.
fn maj_overtake_panel(r: &VoteCurves) -> Panel {
    let mut p = Panel::new(
        "maj@k of the models above on one axis: the order changes with k",
        "k (samples per problem, log2 scale)",
        "maj@k (%)",
    );
    k_axis(&mut p, &r.k);
    for (si, s) in r.series.iter().enumerate() {
        let label = format!("{}: maj@k (pass@1 {:.1}%)", s.model, percent(s.pass_at_1));
        let points = series_points(r, si, Metric::MajAtK);
        exact_and_simulated(&mut p, Some(label), None, si % 8, &points);
    }
    fit_pct_y(&mut p);
    p
}

/// pass@k of every series on one panel, labelled by run_sd: at equal pass@1 the curves part as
/// the shared per-run noise flattens them.
fn run_sd_panel(r: &VoteCurves) -> Panel {
    let mut p = Panel::new(
        "pass@k of the models above on one axis: shared per-run noise (run_sd) flattens it",
        "k (samples per problem, log2 scale)",
        "pass@k (%)",
    );
    k_axis(&mut p, &r.k);
    for (si, s) in r.series.iter().enumerate() {
        let label = format!(
            "{}: run_sd {}, pass@1 {:.1}%",
            s.model,
            s.run_sd,
            percent(s.pass_at_1)
        );
        let points = series_points(r, si, Metric::PassAtK);
        exact_and_simulated(&mut p, Some(label), None, si % 8, &points);
    }
    fit_pct_y(&mut p);
    p
}
