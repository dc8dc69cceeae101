//! The one-panel figures of an attractor sweep: maj@k against k per setting, against the split
//! share, or graded pass@k against the grader's false-positive rate.

use crate::experiments::votes::{Metric, VoteCurves};
use crate::experiments::{Estimate, RunOutput};
use crate::report::figures::{
    exact_and_dots, exact_and_simulated, fit_pct_y, k_axis, level, one_panel, padded_range, percent,
};
use crate::report::kinds::curves::series_points;
use crate::report::plot::{Figure, Line, Panel};

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
