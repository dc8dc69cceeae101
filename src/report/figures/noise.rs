//! The figures of the noise experiments: seed variance, vote spread and head-to-head.

use super::{exact_and_simulated, k_axis, level, one_panel, percent, row_series, title};
use crate::experiments::noise::{HeadToHead, SeedVariance, VoteSpread};
use crate::experiments::{Estimate, RunOutput};
use crate::report::plot::{grid_columns, Bars, Figure, Line, Markers, Panel, Scale};

pub(super) fn seed_histograms(run: &RunOutput, r: &SeedVariance) -> Figure {
    // One x axis for every panel, so the narrowing with n is visible.
    let (xlo, xhi) = r
        .rows
        .iter()
        .flat_map(|row| {
            row.histogram
                .iter()
                .flat_map(|&(a, b, _)| [percent(a), percent(b)])
        })
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    let panels: Vec<Panel> = r
        .rows
        .iter()
        .map(|row| {
            let mut p = Panel::new(
                format!(
                    "n = {}: SD exact {:.2}, simulated {:.2} points",
                    row.n,
                    percent(row.sd.exact),
                    percent(row.sd.sim)
                ),
                "benchmark score (%)",
                "density (per point)",
            );
            let bars: Vec<(f64, f64, f64)> = row
                .histogram
                .iter()
                .map(|&(a, b, d)| (percent(a), percent(b), d / 100.0))
                .collect();
            let ymax = bars
                .iter()
                .map(|b| b.2)
                .chain(row.normal_curve.iter().map(|c| c.1 / 100.0))
                .fold(0.0, f64::max);
            p.x_range = (xlo, xhi);
            // Headroom for the legend: at n = 1 the histogram fills the shared x range, and a
            // legend inside the frame would otherwise sit on its bars.
            p.y_range = (0.0, ymax * 1.45);
            p.bars.push(Bars {
                label: Some(format!("{} simulated reruns", r.reruns)),
                color: 0,
                bars,
            });
            p.lines.push(Line {
                label: Some("normal, exact mean and SD".into()),
                color: 1,
                dashed: false,
                points: row
                    .normal_curve
                    .iter()
                    .map(|&(x, d)| (percent(x), d / 100.0))
                    .collect(),
            });
            // The central 95% as dashed lines up to the data's top only, leaving the headroom
            // above free for the legend (a full-height line would cross it in a narrow panel).
            let top = ymax * 1.08;
            for (i, x) in [percent(row.sim_interval.0), percent(row.sim_interval.1)]
                .into_iter()
                .enumerate()
            {
                p.lines.push(Line {
                    label: (i == 0).then(|| {
                        format!(
                            "central 95%: {:.1} to {:.1}",
                            percent(row.sim_interval.0),
                            percent(row.sim_interval.1)
                        )
                    }),
                    color: 2,
                    dashed: true,
                    points: vec![(x, 0.0), (x, top)],
                });
            }
            p
        })
        .collect();
    let columns = grid_columns(panels.len());
    let rows = panels.len().div_ceil(columns) as u32;
    Figure {
        title: title(
            run,
            &format!(
                "{}: score of model {} across reruns ({} placement)",
                r.experiment,
                r.model,
                placement_name(r.placement)
            ),
        ),
        panels,
        columns,
        size: (
            if columns > 1 {
                700 * columns as u32
            } else {
                800
            },
            70 + 430 * rows,
        ),
    }
}

pub(super) fn seed_sd_figure(run: &RunOutput, r: &SeedVariance) -> Figure {
    let heading = match r.run_floor {
        Some(floor) => format!(
            "model {} (run_sd {}): seed SD levels off at the run-noise floor {:.2} points, not 0",
            r.model,
            r.run_sd,
            percent(floor)
        ),
        None => format!(
            "model {}: seed SD falls as 1/sqrt(n); the total SE levels off at the question-sampling SE {:.2} points",
            r.model,
            percent(r.question_se)
        ),
    };
    let mut p = Panel::new(
        heading,
        "n (samples per problem, log2 scale)",
        "SD of the benchmark score (points, log scale)",
    );
    let ns: Vec<u32> = r.rows.iter().map(|x| x.n).collect();
    k_axis(&mut p, &ns);
    p.y_scale = Scale::Log10;
    let all: Vec<f64> = r
        .rows
        .iter()
        .flat_map(|x| {
            [
                percent(x.sd.exact),
                percent(x.sd.ci_low.max(x.sd.sim * 0.5)),
                percent(x.total_se),
                percent(x.independent_sd.unwrap_or(x.sd.exact)),
            ]
        })
        .chain([percent(r.question_se)])
        .chain(r.run_floor.map(percent))
        .collect();
    let (lo, hi) = all
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(a, b), &v| (a.min(v), b.max(v)));
    p.y_range = (lo / 1.6, hi * 1.6);
    let sds: Vec<(f64, Estimate)> = r.rows.iter().map(|x| (f64::from(x.n), x.sd)).collect();
    exact_and_simulated(
        &mut p,
        Some("exact seed SD".into()),
        Some(format!("simulated, {} reruns (95% CI)", r.reruns)),
        0,
        &sds,
    );
    p.lines.push(Line {
        label: Some("exact total SE (seed and question sampling)".into()),
        color: 2,
        dashed: false,
        points: r
            .rows
            .iter()
            .map(|x| (f64::from(x.n), percent(x.total_se)))
            .collect(),
    });
    let question = format!("question-sampling SE {:.2}", percent(r.question_se));
    level(&mut p, Some(question), 1, percent(r.question_se));
    if r.run_floor.is_some() {
        p.lines.push(Line {
            label: Some("exact seed SD of independent samples (run_sd 0, same rates)".into()),
            color: 4,
            dashed: true,
            points: r
                .rows
                .iter()
                .filter_map(|x| x.independent_sd.map(|sd| (f64::from(x.n), percent(sd))))
                .collect(),
        });
    }
    if let Some(floor) = r.run_floor {
        let label = format!(
            "run-noise floor {:.2} (limit of the seed SD as n grows; more runs lower it)",
            percent(floor)
        );
        level(&mut p, Some(label), 3, percent(floor));
    }
    let what = format!("{}: seed SD against samples per problem", r.experiment);
    one_panel(run, &what, p, (1000, 640))
}

pub(super) fn spread_figure(run: &RunOutput, r: &VoteSpread) -> Figure {
    let mut p = Panel::new(
        format!(
            "model {} (a = {}, {} ties): one vote per problem vs the mean of the same k samples",
            r.model,
            r.attractor,
            r.vote_rule.as_str()
        ),
        "k (samples per problem, log2 scale)",
        "seed SD of the score (points)",
    );
    let ks: Vec<u32> = r.rows.iter().map(|x| x.k).collect();
    k_axis(&mut p, &ks);
    let hi = r
        .rows
        .iter()
        .flat_map(|x| [x.maj_sd.ci_high, x.avg_sd.ci_high, x.maj_sd.exact])
        .fold(0.0, f64::max);
    p.y_range = (0.0, percent(hi) * 1.08);
    row_series(
        &mut p,
        &r.rows,
        |x| f64::from(x.k),
        [
            ("maj@k exact", 2, |x| x.maj_sd),
            ("pass@1 averaged over k exact", 0, |x| x.avg_sd),
        ],
    );
    if r.rows.len() == 1 {
        // A single k: draw each exact value as a short level so it stays visible.
        p.x_range = (p.x_range.0 / 2.0, p.x_range.1 * 2.0);
        for l in &mut p.lines {
            if let Some(&(x, y)) = l.points.first() {
                l.points = vec![(x / 1.3, y), (x * 1.3, y)];
            }
        }
    }
    let what = format!(
        "{}: seed SD of maj@k ({} reruns; dots simulated, 95% CI)",
        r.experiment, r.reruns
    );
    one_panel(run, &what, p, (900, 560))
}

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

fn placement_name(p: crate::model::Placement) -> &'static str {
    match p {
        crate::model::Placement::Quantiles => "quantiles",
        crate::model::Placement::Random => "random",
    }
}
