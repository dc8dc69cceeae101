//! The head-to-head figure: P(B < A) against n, and the per-problem disagreement of the two
//! models when they have one.

use crate::experiments::noise::HeadToHead;
use crate::experiments::RunOutput;
use crate::report::figures::{k_axis, level, percent, row_series, title};
use crate::report::plot::{Figure, Line, Markers, Panel};

pub(super) fn h2h_figure(run: &RunOutput, r: &HeadToHead) -> Figure {
    let gap = percent(r.pass_at_1_b - r.pass_at_1_a);
    let mut p = Panel::new(
        format!(
            "B = {} (pass@1 {:.1}%) against A = {} ({:.1}%): true gap {gap:+.1} points",
            r.b,
            percent(r.pass_at_1_b),
            r.a,
            percent(r.pass_at_1_a)
        ),
        "n (samples per problem per model, log2 scale)",
        "probability (%)",
    );
    let ns: Vec<u32> = r.rows.iter().map(|x| x.n).collect();
    k_axis(&mut p, &ns);
    let hi = r
        .rows
        .iter()
        .map(|x| x.loss_or_tie.exact)
        .fold(0.0, f64::max);
    // The data with a small margin, and the 5% reference line always inside.
    let hi = r
        .rows
        .iter()
        .flat_map(|x| [x.loss_or_tie.exact, x.loss_or_tie.ci_high, x.loss.ci_high])
        .fold(hi, f64::max);
    p.y_range = (0.0, (percent(hi) * 1.08).clamp(6.0, 100.0));
    level(&mut p, Some("5% reference".into()), 7, 5.0);
    // "The better model" only when B is better: at a gap of 0 or below, B losing is no upset; a
    // B ahead by memorised problems is the leader, not the better model.
    let better = r.pass_at_1_b > r.pass_at_1_a;
    let (loss, question) = if better && r.b_memorises {
        (
            "P(B < A): B, ahead by memorised problems, loses",
            "how often the contaminated leader loses a rerun",
        )
    } else if better {
        (
            "P(B < A): the better model loses",
            "how often the better model loses a rerun",
        )
    } else {
        (
            "P(B < A): B scores below A",
            "how often B scores below A in a rerun",
        )
    };
    row_series(
        &mut p,
        &r.rows,
        |x| f64::from(x.n),
        [
            (loss, 1, |x| x.loss),
            ("P(B <= A): below or tied", 0, |x| x.loss_or_tie),
        ],
    );
    // A probability's interval ends at 0 and 100%: sim -/+ 1.96 SE of a rate near 0 would
    // otherwise be drawn as cut at the frame.
    for m in &mut p.markers {
        for point in &mut m.points {
            (point.2, point.3) = (point.2.max(0.0), point.3.min(100.0));
        }
    }
    let mut panels = vec![p];
    let mut size = (1100, 600);
    if let Some(d) = &r.disagreement {
        panels.push(disagreement_panel(r, d));
        size = (1100, 1100);
    }
    let what = format!(
        "{}: {question} ({} reruns; lines exact, dots simulated)",
        r.experiment, r.reruns
    );
    Figure {
        title: title(run, &what),
        panels,
        columns: 1,
        size,
    }
}

/// With `shift_sd` > 0: the per-problem difference p_B - p_A against the benchmark's rate, with
/// tau and with the constant shifts alone.
fn disagreement_panel(r: &HeadToHead, d: &crate::experiments::noise::Disagreement) -> Panel {
    let corr = |x: Option<f64>| x.map_or_else(|| "n/a".to_string(), |c| format!("{c:.2}"));
    let mut p = Panel::new(
        format!(
            "Per-problem difference B - A: SD {:.1} points across problems (constant shifts alone: {:.1}); logit correlation {} population, {} this benchmark",
            percent(d.difference_sd),
            percent(d.difference_sd_constant_shift),
            corr(d.population_correlation),
            corr(d.realised_correlation)
        ),
        "benchmark solve rate of the problem (%)",
        format!("p_{} - p_{} (points)", r.b, r.a),
    );
    let mut pts: Vec<(f64, f64, f64)> = d
        .per_problem
        .iter()
        .map(|&(x, y, c)| (percent(x), percent(y), percent(c)))
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (lo, hi) = pts.iter().fold((0.0f64, 0.0f64), |(lo, hi), &(_, y, c)| {
        (lo.min(y).min(c), hi.max(y).max(c))
    });
    let pad = 0.08 * (hi - lo).max(1.0);
    p.x_range = (0.0, 100.0);
    p.y_range = (lo - pad, hi + pad);
    p.lines.push(Line {
        label: Some("constant shifts alone (shift_sd = 0)".into()),
        color: 7,
        dashed: true,
        points: pts.iter().map(|&(x, _, c)| (x, c)).collect(),
    });
    p.markers.push(Markers {
        label: Some(format!(
            "each problem, shift_sd A = {}, B = {}",
            crate::experiments::num(d.tau_a),
            crate::experiments::num(d.tau_b)
        )),
        color: 5,
        points: pts.iter().map(|&(x, y, _)| (x, y, y, y)).collect(),
    });
    p
}
