//! The budget figures: scores and trace lengths against the token budget.

use crate::experiments::budget::{BudgetCurves, BudgetMetric};
use crate::experiments::RunOutput;
use crate::report::figures::{pct_top, percent, title};
use crate::report::plot::{grid_columns, Bars, Figure, Line, Markers, Panel, Scale};

/// Short token labels: 1k, 24k, 128k, 1.5M.
pub(in crate::report::kinds) fn tokens_label(x: f64) -> String {
    if x >= 1e6 {
        format!("{}M", (x / 1e5).round() / 10.0)
    } else if x >= 1000.0 {
        format!("{}k", (x / 100.0).round() / 10.0)
    } else {
        format!("{x:.0}")
    }
}

/// Ticks 1, 2, 5 times powers of ten inside [lo, hi].
pub(in crate::report::kinds) fn ticks_125(lo: f64, hi: f64) -> Vec<f64> {
    let mut out = Vec::new();
    let mut decade = 10f64.powf(lo.log10().floor());
    while decade <= hi {
        for m in [1.0, 2.0, 5.0] {
            let t = decade * m;
            if t >= lo && t <= hi {
                out.push(t);
            }
        }
        decade *= 10.0;
    }
    out
}

fn budget_axis(p: &mut Panel, budgets: &[f64]) {
    let lo = budgets.first().copied().unwrap_or(1000.0);
    let hi = budgets.last().copied().unwrap_or(1000.0);
    p.x_scale = Scale::Log10;
    p.x_range = (lo / 1.25, hi * 1.25);
    p.x_ticks = Some(budgets.to_vec());
}

pub(super) fn budget_figure(run: &RunOutput, r: &BudgetCurves) -> Figure {
    let x_label = "token budget B per sample (log scale)";
    let mut acc = Panel::new(
        "accuracy of one sample under the budget: lines exact, dots simulated (95% CI)",
        x_label,
        "Acc(B) (% of problems)",
    );
    let mut cut = Panel::new(
        "truncation rate: share of traces cut off by the budget",
        x_label,
        "traces longer than B (%)",
    );
    budget_axis(&mut acc, &r.budgets);
    budget_axis(&mut cut, &r.budgets);
    let top = r.models.iter().map(|m| m.pass_at_1).fold(0.0, f64::max);
    acc.y_range = (0.0, pct_top(top));
    cut.y_range = (0.0, 100.0);
    for (mi, m) in r.models.iter().enumerate() {
        let color = [0usize, 1, 2, 3, 4, 5][mi % 6];
        if let Some(c) = r.exact_curves.iter().find(|c| c.model == m.model) {
            for (panel, ys, what) in [
                (
                    &mut acc,
                    &c.accuracy,
                    format!("pass@1 {:.1}%", percent(m.pass_at_1)),
                ),
                (&mut cut, &c.truncation_rate, "exact".to_string()),
            ] {
                panel.lines.push(Line {
                    label: Some(format!("{} ({what})", m.model)),
                    color,
                    dashed: false,
                    points: c
                        .budget_tokens
                        .iter()
                        .zip(ys.iter())
                        .map(|(&b, &y)| (b, percent(y)))
                        .collect(),
                });
            }
        }
        for (panel, metric) in [
            (&mut acc, BudgetMetric::Accuracy),
            (&mut cut, BudgetMetric::TruncationRate),
        ] {
            panel.markers.push(Markers {
                label: None,
                color,
                points: r
                    .points
                    .iter()
                    .filter(|p| p.model == mi && p.metric == metric)
                    .map(|p| {
                        let e = p.estimate;
                        (
                            p.budget_tokens,
                            percent(e.sim),
                            percent(e.ci_low),
                            percent(e.ci_high),
                        )
                    })
                    .collect(),
            });
        }
    }
    for c in &r.crossovers {
        for x in &c.crossings {
            let label = format!(
                "crossover {}/{}: {} tokens ({} leads below, {} above)",
                c.model_a,
                c.model_b,
                tokens_label(x.budget_tokens),
                x.leader_below,
                x.leader_above
            );
            for panel in [&mut acc, &mut cut] {
                panel.vlines.push((x.budget_tokens, 6, Some(label.clone())));
            }
        }
    }
    Figure {
        title: title(
            run,
            &format!(
                "{}: accuracy against token budget ({} traces per problem)",
                r.experiment, r.traces
            ),
        ),
        panels: vec![acc, cut],
        columns: 2,
        size: (1700, 720),
    }
}

pub(super) fn lengths_figure(run: &RunOutput, r: &BudgetCurves) -> Figure {
    let top = r
        .lengths
        .iter()
        .flat_map(|h| {
            h.correct_sim
                .iter()
                .chain(&h.wrong_sim)
                .chain(&h.correct_exact)
                .chain(&h.wrong_exact)
        })
        .fold(0.0f64, |a, &b| a.max(b));
    let panels = r
        .lengths
        .iter()
        .map(|h| {
            let mut p = Panel::new(
                format!(
                    "model {}: bars simulated, lines exact; dashed: the budgets",
                    h.model
                ),
                "trace length (tokens, log scale)",
                "share of the model's traces per bin (%)",
            );
            let lo = h.edges_tokens.first().copied().unwrap_or(100.0);
            let hi = h.edges_tokens.last().copied().unwrap_or(1e6);
            p.x_scale = Scale::Log10;
            p.x_range = (lo, hi);
            // Ticks at the budgets, so each dashed budget line sits on a labelled tick.
            p.x_ticks = Some(r.budgets.clone());
            p.y_range = (0.0, 1.08 * percent(top));
            for (sim, exact, color, what) in [
                (&h.correct_sim, &h.correct_exact, 2usize, "correct"),
                (&h.wrong_sim, &h.wrong_exact, 1, "wrong"),
            ] {
                p.bars.push(Bars {
                    label: Some(format!("{what} traces (simulated)")),
                    color,
                    bars: h
                        .edges_tokens
                        .windows(2)
                        .zip(sim.iter())
                        .map(|(w, &y)| (w[0], w[1], percent(y)))
                        .collect(),
                });
                p.lines.push(Line {
                    label: Some(format!("{what} traces (exact)")),
                    color,
                    dashed: false,
                    points: h
                        .edges_tokens
                        .windows(2)
                        .zip(exact.iter())
                        .map(|(w, &y)| ((w[0] * w[1]).sqrt(), percent(y)))
                        .collect(),
                });
            }
            for (j, &b) in r.budgets.iter().enumerate() {
                let label = (j == 0).then(|| {
                    format!(
                        "budgets {} to {}",
                        tokens_label(r.budgets[0]),
                        tokens_label(*r.budgets.last().unwrap_or(&b))
                    )
                });
                p.vlines.push((b, 7, label));
            }
            p
        })
        .collect::<Vec<_>>();
    let columns = grid_columns(panels.len());
    let rows = panels.len().div_ceil(columns) as u32;
    Figure {
        title: title(
            run,
            &format!(
                "{}: trace-length distributions ({} traces per problem)",
                r.experiment, r.traces
            ),
        ),
        panels,
        columns,
        size: (
            if columns > 1 {
                850 * columns as u32
            } else {
                900
            },
            80 + 560 * rows,
        ),
    }
}
