//! The figures of vote curves: curves against k and the one-panel sweeps (attractor, split, grader).

use super::{
    exact_and_dots, exact_and_simulated, fit_pct_y, k_axis, level, one_panel, padded_range,
    percent, title,
};
use crate::experiments::votes::{Metric, VoteCurves};
use crate::experiments::{Estimate, RunOutput};
use crate::model::{Verifier, VoteRule};
use crate::report::plot::{grid_columns, Band, Figure, Line, Markers, Panel};

/// One series' points of one metric as (k, estimate), in the result's order.
fn series_points(r: &VoteCurves, si: usize, metric: Metric) -> Vec<(f64, Estimate)> {
    r.points
        .iter()
        .filter(|p| p.series == si && p.metric == metric)
        .map(|p| (f64::from(p.k), p.estimate))
        .collect()
}

pub(super) fn curves_figure(run: &RunOutput, r: &VoteCurves) -> Figure {
    let all_metrics = [
        (Metric::PassAtK, 0usize),
        (Metric::MajAtK, 2),
        (Metric::PassHatK, 1),
        (Metric::BestAtK, 3),
    ];
    let panels = r
        .series
        .iter()
        .enumerate()
        .map(|(si, s)| {
            let metrics: Vec<(Metric, usize)> = all_metrics
                .into_iter()
                .filter(|(m, _)| *m != Metric::BestAtK || s.verifier.is_some())
                .collect();
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
            if s.run_sd > 0.0 {
                heading += &format!(", run_sd {}", s.run_sd);
            }
            if let Some(v) = &s.verifier {
                heading += &format!(", verifier {}", v.describe());
            }
            if let Some(g) = &s.grader {
                heading += &format!(", graded with fpr {} fnr {}", g.fpr, g.fnr);
            }
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
                    &mut p,
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
            let ceiling = format!(
                "maj@k large-k limit {:.1}% (p > {:.3})",
                percent(s.ceiling),
                s.threshold
            );
            level(&mut p, Some(ceiling), 2, percent(s.ceiling));
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
                level(&mut p, Some(label), 3, percent(c));
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
            fit_pct_y(&mut p);
            p
        })
        .collect::<Vec<_>>();
    let mut panels = panels;
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

pub(super) fn sweep_figure(run: &RunOutput, r: &VoteCurves) -> Figure {
    let s0 = &r.series[0];
    let mut p = Panel::new(
        format!("model {} ({} ties, pass@1 {:.1}%); lines exact, dots simulated (95% CI), dashed: large-k limit of maj@k", s0.model, s0.vote_rule.as_str(), percent(s0.pass_at_1)),
        "k (samples per problem, log2 scale)",
        "benchmark score (%)",
    );
    k_axis(&mut p, &r.k);
    let (pass_line, _) = exact_and_dots(&series_points(r, 0, Metric::PassAtK));
    p.lines.push(Line {
        label: Some("pass@k exact".into()),
        color: 6,
        dashed: false,
        points: pass_line,
    });
    for (si, s) in r.series.iter().enumerate() {
        let color = [0usize, 1, 2, 3, 4, 5, 7][si % 7];
        let label = if r.axis.is_some() {
            format!(
                "maj@k, {} (large-k limit {:.1}%)",
                s.modes_label(),
                percent(s.ceiling)
            )
        } else {
            format!(
                "maj@k, a = {} (large-k limit {:.1}%)",
                s.attractor,
                percent(s.ceiling)
            )
        };
        let points = series_points(r, si, Metric::MajAtK);
        exact_and_simulated(&mut p, Some(label), None, color, &points);
        level(&mut p, None, color, percent(s.ceiling));
    }
    one_panel_sweep(
        run,
        format!(
            "{}: maj@k by {} ({} votes/problem)",
            r.experiment,
            r.axis
                .map_or_else(|| "attractor share a".to_string(), |a| a.label()),
            r.votes
        ),
        p,
    )
}

/// A `split` sweep: maj@k at each k against the split share (lines exact, dots simulated with
/// 95% CIs), with pass@1 and pass@k at the largest k, which the split cannot move.
pub(super) fn split_figure(run: &RunOutput, r: &VoteCurves) -> Figure {
    let s0 = &r.series[0];
    let xs: Vec<f64> = r.series.iter().map(|s| s.split).collect();
    let mut p = Panel::new(
        format!(
            "model {} ({} ties, attractors {}); lines exact, dots simulated (95% CI)",
            s0.model,
            s0.vote_rule.as_str(),
            if s0.attractors.is_empty() {
                s0.attractor.to_string()
            } else {
                format!("{:?}", s0.attractors)
            }
        ),
        "split (share of correct samples in a form the normaliser does not merge)",
        "benchmark score (%)",
    );
    p.x_range = padded_range(&xs, 0.05);
    let kmax = *r.k.last().unwrap_or(&1);
    let at = |si: usize, k: u32, m: Metric| {
        r.points
            .iter()
            .find(|q| q.series == si && q.k == k && q.metric == m)
            .map(|q| q.estimate)
    };
    p.lines.push(Line {
        label: Some("pass@1 (exact)".into()),
        color: 6,
        dashed: true,
        points: r
            .series
            .iter()
            .map(|s| (s.split, percent(s.pass_at_1)))
            .collect(),
    });
    p.lines.push(Line {
        label: Some(format!("pass@{kmax} (exact)")),
        color: 0,
        dashed: true,
        points: (0..r.series.len())
            .filter_map(|si| at(si, kmax, Metric::PassAtK).map(|e| (xs[si], percent(e.exact))))
            .collect(),
    });
    for (ki, &k) in r.k.iter().filter(|&&k| k > 1).enumerate() {
        let color = [2usize, 1, 3, 4, 5, 7][ki % 6];
        let est: Vec<(f64, Estimate)> = (0..r.series.len())
            .filter_map(|si| at(si, k, Metric::MajAtK).map(|e| (xs[si], e)))
            .collect();
        exact_and_simulated(&mut p, Some(format!("maj@{k}")), None, color, &est);
    }
    one_panel_sweep(
        run,
        format!(
            "{}: maj@k falls with the split share while pass@1 stays ({} votes/problem)",
            r.experiment, r.votes
        ),
        p,
    )
}

/// Graded pass@k against the grader's false-positive rate (one line per k, exact; dots simulated
/// with 95% CIs), with each k's true pass@k dashed in the same colour: how far a lenient grader
/// lifts pass@k above the truth at each k.
pub(super) fn grader_figure(run: &RunOutput, r: &VoteCurves) -> Figure {
    let s0 = &r.series[0];
    let fpr = |si: usize| r.series[si].grader.map_or(0.0, |g| g.fpr);
    let fnr = s0.grader.map_or(0.0, |g| g.fnr);
    let xs: Vec<f64> = (0..r.series.len()).map(fpr).collect();
    let mut p = Panel::new(
        format!(
            "model {} (true pass@1 {:.1}%, grader fnr {}); solid: graded (exact; dots simulated, 95% CI), dashed: true, same colour",
            s0.model,
            percent(s0.pass_at_1),
            fnr
        ),
        "grader false-positive rate (share of wrong samples graded correct, %)",
        "graded pass@k (%)",
    );
    let (lo, hi) = padded_range(&xs, 0.01);
    p.x_range = (percent(lo), percent(hi));
    let at = |si: usize, k: u32| {
        r.points
            .iter()
            .find(|q| q.series == si && q.k == k && q.metric == Metric::PassAtK)
    };
    let palette = [6usize, 4, 0, 2, 1, 3, 5, 7];
    let ks: Vec<(usize, u32)> = r.k.iter().copied().enumerate().collect();
    for &(ki, k) in &ks {
        let color = palette[ki % palette.len()];
        let pts: Vec<(f64, Estimate)> = (0..r.series.len())
            .filter_map(|si| at(si, k).map(|q| (percent(xs[si]), q.estimate)))
            .collect();
        exact_and_simulated(&mut p, Some(format!("graded pass@{k}")), None, color, &pts);
        // The truth does not depend on the grader: one value, drawn across in the same colour,
        // so the gap to the solid line is the inflation at that k.
        if let Some(t) = at(0, k).and_then(|q| q.truth) {
            level(
                &mut p,
                Some(format!("true pass@{k}")),
                color,
                percent(t.exact),
            );
        }
    }
    one_panel_sweep(
        run,
        format!(
            "{}: graded pass@k against the grader's false-positive rate ({} votes/problem)",
            r.experiment, r.votes
        ),
        p,
    )
}

/// A one-panel sweep figure (attractor, split or grader axis): percent y fitted to the data, the
/// run's title with `caption`, 1200 x 720.
fn one_panel_sweep(run: &RunOutput, caption: String, mut p: Panel) -> Figure {
    fit_pct_y(&mut p);
    one_panel(run, &caption, p, (1200, 720))
}
