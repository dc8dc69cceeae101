//! The figures of a seed-variance experiment: the score's histograms per n and its seed SD.

use crate::experiments::noise::SeedVariance;
use crate::experiments::{Estimate, RunOutput};
use crate::report::figures::{exact_and_simulated, k_axis, level, one_panel, percent, title};
use crate::report::plot::{grid_columns, Bars, Figure, Line, Panel, Scale};

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

fn placement_name(p: crate::model::Placement) -> &'static str {
    match p {
        crate::model::Placement::Quantiles => "quantiles",
        crate::model::Placement::Random => "random",
    }
}
