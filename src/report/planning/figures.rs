//! The figures of `evalsim plan`: the loss curves, the detectable gap and the heat map.

use super::{axis, design_short, ANSWER_ORDER};
use crate::experiments::plan::{Design, PlanCell, PlanMetric, PlanResult, SimCheck, DETECT_POWER};
use crate::experiments::Estimate;
use crate::report::figures::{level, percent};
use crate::report::plot::{self, HeatFigure, HeatPanel, Markers, Panel, Points, Scale};

pub(super) fn title(r: &PlanResult, scenario: Option<&str>, what: &str) -> String {
    let metric = match r.spec.metric {
        PlanMetric::Pass1 => "pass@1".to_string(),
        PlanMetric::Maj { attractor, rule } => {
            format!("maj@k (a = {attractor}, {})", rule.as_str())
        }
    };
    let tau = if let Some(m) = &r.spec.model_shift_sd {
        match m.tau_b {
            Some(b) => format!(" · shift_sd A {} B {b}", m.tau),
            None => format!(" · A and B shift_sd {}", m.tau),
        }
    } else if r.spec.shift_sd == 0.0 {
        String::new()
    } else {
        format!(" · shift_sd {}", r.spec.shift_sd)
    };
    let scenario = scenario.map_or(String::new(), |name| format!(" · scenario {name}"));
    let graded = if r.spec.answers.changes(r.spec.metric) {
        " · graded"
    } else {
        ""
    };
    format!(
        "{what} · {metric}{graded} · logit-normal({}, {}){tau}{scenario} · seed {}",
        r.spec.mu, r.spec.sigma, r.spec.seed
    )
}

pub(super) fn fixed(r: &PlanResult, gap: f64) -> impl Iterator<Item = &PlanCell> {
    r.cells
        .iter()
        .filter(move |c| c.design == Design::Fixed && c.gap_logits == gap)
}

/// A gap in logits with a sign and at most 3 significant digits (`+0.231`, `+0.21`, `-1.5`).
pub fn gap_text(gap: f64) -> String {
    if gap == 0.0 || !gap.is_finite() {
        return format!("{gap:+}");
    }
    let decimals = (2 - gap.abs().log10().floor() as i32).max(0) as usize;
    let t = format!("{gap:+.decimals$}");
    if t.contains('.') {
        t.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        t
    }
}

/// A loss probability in percent to one decimal, with a positive value below 0.05% shown as
/// `<0.1%` rather than `0.0%`.
pub(super) fn loss_label(v: f64) -> String {
    if v > 0.0 && percent(v) < 0.05 {
        "<0.1%".into()
    } else {
        format!("{:.1}%", percent(v))
    }
}

/// Loss-or-tie against N on a log axis, one series of exact points per n (fixed design), one panel
/// per gap. With a single N and several n (or k), n goes on the x axis instead (one series for the
/// one N).
pub fn loss_figure(r: &PlanResult, scenario: Option<&str>) -> plot::Figure {
    let s = &r.spec;
    let x_axis = PlanAxis::of(r);
    let by_samples = x_axis.by_samples;
    // Cells are picked by (x, series): the series value is the size not on the x axis.
    let series: Vec<f64> = if by_samples {
        s.problems.iter().map(|&n| n as f64).collect()
    } else {
        s.samples.iter().map(|&n| f64::from(n)).collect()
    };
    let series_of = |c: &PlanCell| -> f64 {
        if by_samples {
            c.problems as f64
        } else {
            f64::from(c.samples)
        }
    };
    let panels = s
        .gaps
        .iter()
        .map(|&gap| {
            // With the model's own shift_sd, B is A's shift plus the gap, each with its own
            // per-problem deviation: "B = A + gap" would say the deviations are shared.
            let relation = if r.spec.model_shift_sd.is_some() {
                "B's shift = A's"
            } else {
                "B = A"
            };
            let mut p = Panel::new(
                format!(
                    "{relation} {} logits · fixed benchmark (these problems, sampling noise only)",
                    gap_text(gap)
                ),
                x_axis.label,
                "P(B scores <= A) in one rerun, %",
            );
            x_axis.apply(&mut p);
            // The simulated intervals stay inside the frame too.
            let ymax = fixed(r, gap)
                .map(|c| {
                    c.sim
                        .map_or(c.loss_or_tie, |x| c.loss_or_tie.max(x.loss_or_tie.ci_high))
                })
                .fold(0.0, f64::max);
            p.y_range = (
                0.0,
                (percent(ymax) * 1.1).max(percent(s.target_loss_or_tie) * 1.5),
            );
            for (i, &v) in series.iter().enumerate() {
                let cells: Vec<&PlanCell> = fixed(r, gap).filter(|&c| series_of(c) == v).collect();
                let name = if by_samples {
                    format!("N = {v}")
                } else {
                    format!("{} = {v}", axis(r))
                };
                let exact: Vec<(f64, f64)> = cells
                    .iter()
                    .map(|&c| (x_axis.x(c), percent(c.loss_or_tie)))
                    .collect();
                exact_points(&mut p, i, exact, name);
                let sims = x_axis.sim_dots(&cells, |x| x.loss_or_tie);
                if !sims.is_empty() {
                    p.markers.push(Markers {
                        label: (i == 0).then(|| "simulated (95% CI)".to_string()),
                        color: i,
                        points: sims,
                    });
                }
            }
            let target = format!("target {}%", percent(s.target_loss_or_tie));
            level(&mut p, Some(target), 6, percent(s.target_loss_or_tie));
            p
        })
        .collect::<Vec<_>>();
    let columns = plot::grid_columns(panels.len());
    let rows = panels.len().div_ceil(columns) as u32;
    plot::Figure {
        title: title(r, scenario, "How often the better model loses or ties"),
        panels,
        columns,
        size: (900.max(800 * columns as u32), 80 + 560 * rows),
    }
}

/// Heat maps over N x n: fixed-design loss-or-tie and population-paired half-width per gap, the
/// cells meeting each target outlined.
pub fn heat_figure(r: &PlanResult, scenario: Option<&str>) -> HeatFigure {
    let s = &r.spec;
    let mut panels = Vec::new();
    for &gap in &s.gaps {
        for (design, target) in [
            (Design::Fixed, "loss_or_tie"),
            (Design::PopulationPaired, "halfwidth"),
        ] {
            let value = |c: &PlanCell| {
                if target == "loss_or_tie" {
                    c.loss_or_tie
                } else {
                    c.halfwidth
                }
            };
            let bound = if target == "loss_or_tie" {
                s.target_loss_or_tie
            } else {
                s.target_halfwidth
            };
            let cell = |big_n: usize, n: u32| {
                r.cells.iter().find(|c| {
                    c.design == design
                        && c.gap_logits == gap
                        && c.problems == big_n
                        && c.samples == n
                })
            };
            let grid: Vec<Vec<f64>> = s
                .samples
                .iter()
                .map(|&n| {
                    s.problems
                        .iter()
                        .map(|&big_n| cell(big_n, n).map_or(f64::NAN, value))
                        .collect()
                })
                .collect();
            let hi = grid.iter().flatten().copied().fold(0.0, f64::max);
            let best = r
                .answers
                .iter()
                .find(|a| a.design == design && a.gap_logits == gap && a.target == target)
                .and_then(|a| a.best);
            let labels: Vec<Vec<String>> = grid
                .iter()
                .zip(&s.samples)
                .map(|(row, &n)| {
                    row.iter()
                        .zip(&s.problems)
                        .map(|(&v, &big_n)| {
                            let star = if best.is_some_and(|b| b.0 == big_n && b.1 == n) {
                                " *"
                            } else {
                                ""
                            };
                            if target == "loss_or_tie" {
                                format!("{}{star}", loss_label(v))
                            } else {
                                format!("{:.2}{star}", percent(v))
                            }
                        })
                        .collect()
                })
                .collect();
            let outlined = grid
                .iter()
                .map(|row| row.iter().map(|&v| v <= bound).collect())
                .collect();
            let (what, unit, scale_label) = if target == "loss_or_tie" {
                (
                    "P(B <= A), fixed benchmark (sampling noise only)",
                    format!("{}%", percent(bound)),
                    "P(B <= A) (%)",
                )
            } else {
                (
                    "95% CI half-width (points), population paired (question + sampling noise)",
                    format!("{} points", percent(bound)),
                    "95% CI half-width (points)",
                )
            };
            // A cell shown as <0.1% says so under the chart.
            let tiny = labels.iter().flatten().any(|l| l.starts_with('<'));
            panels.push(HeatPanel {
                title: format!("{what}, gap {} logits", gap_text(gap)),
                x_label: "problems N".into(),
                y_label: match r.spec.metric {
                    PlanMetric::Pass1 => "samples per problem n".into(),
                    PlanMetric::Maj { .. } => "samples per vote k".into(),
                },
                columns: s.problems.iter().map(|n| n.to_string()).collect(),
                rows: s.samples.iter().map(|n| n.to_string()).collect(),
                values: grid,
                labels,
                outlined,
                range: (0.0, hi),
                scale_label: scale_label.into(),
                scale_factor: 100.0,
                footnote: format!(
                    "outlined: meets the target (<= {unit}); * fewest samples N x {} meeting it{}",
                    axis(r),
                    if tiny {
                        "; <0.1%: above 0 but below 0.05%"
                    } else {
                        ""
                    }
                ),
            });
        }
    }
    let rows = s.gaps.len() as u32;
    HeatFigure {
        title: title(
            r,
            scenario,
            match r.spec.metric {
                PlanMetric::Pass1 => "Plan over N x n",
                PlanMetric::Maj { .. } => "Plan over N x k",
            },
        ),
        panels,
        columns: 2,
        size: (1600, 80 + 520 * rows),
    }
}

/// The minimum detectable gap at 80% power (points of the score) against N on a log axis, one
/// series of exact points per n, one panel per design (population first), the simulated mean of
/// B - A at that gap with its 95% interval; with a single N and several n (or k), n goes on the x
/// axis.
pub fn detectable_figure(r: &PlanResult, scenario: Option<&str>) -> plot::Figure {
    let s = &r.spec;
    let x_axis = PlanAxis::of(r);
    let by_samples = x_axis.by_samples;
    let series: Vec<(usize, u32)> = if by_samples {
        vec![(s.problems[0], 0)]
    } else {
        s.samples.iter().map(|&n| (0, n)).collect()
    };
    let score = match s.metric {
        PlanMetric::Pass1 => "pass@1",
        PlanMetric::Maj { .. } => "maj@k",
    };
    let cells_of = |d: Design| -> Vec<&PlanCell> {
        r.detectable
            .iter()
            .filter(|x| x.design == d && x.power == DETECT_POWER)
            .filter_map(|x| x.cell.as_ref())
            .collect()
    };
    let ymax = ANSWER_ORDER
        .iter()
        .flat_map(|&d| cells_of(d))
        .map(|c| c.sim.map_or(c.gap, |x| c.gap.max(x.gap.ci_high)))
        .fold(0.0, f64::max);
    let panels = ANSWER_ORDER
        .iter()
        .map(|&d| {
            let mut p = Panel::new(
                design_short(d).to_string(),
                x_axis.label,
                format!("smallest gap with 80% power, points of {score}"),
            );
            x_axis.apply(&mut p);
            p.y_range = (0.0, percent(ymax) * 1.08);
            let cells = cells_of(d);
            let mut sim_labelled = false;
            for (i, &(big_n, n)) in series.iter().enumerate() {
                let mine: Vec<&PlanCell> = cells
                    .iter()
                    .copied()
                    .filter(|c| {
                        if by_samples {
                            c.problems == big_n
                        } else {
                            c.samples == n
                        }
                    })
                    .collect();
                let name = if by_samples {
                    format!("N = {big_n}")
                } else {
                    format!("{} = {n}", axis(r))
                };
                let exact: Vec<(f64, f64)> = mine
                    .iter()
                    .map(|&c| (x_axis.x(c), percent(c.gap)))
                    .collect();
                exact_points(&mut p, i, exact, name);
                let sims = x_axis.sim_dots(&mine, |x| x.gap);
                if !sims.is_empty() {
                    p.markers.push(Markers {
                        label: (!sim_labelled)
                            .then(|| "simulated mean of B - A (95% CI)".to_string()),
                        color: i,
                        points: sims,
                    });
                    sim_labelled = true;
                }
            }
            p
        })
        .collect::<Vec<_>>();
    plot::Figure {
        title: title(
            r,
            scenario,
            "Minimum detectable gap (two-sided 5% test, 80% power)",
        ),
        panels,
        columns: 3,
        size: (1800, 640),
    }
}

/// A series' exact values as hollow diamonds labelled "<name> (exact)": each N (or n) is a design
/// of its own, so nothing joins them.
pub(super) fn exact_points(p: &mut Panel, color: usize, exact: Vec<(f64, f64)>, name: String) {
    if !exact.is_empty() {
        p.points.push(Points {
            label: Some(format!("{name} (exact)")),
            color,
            points: exact,
        });
    }
}

/// The x axis of the loss and detectable figures: problems N on a log10 axis, or, with a single
/// N and several n (or k), the samples on a log2 axis.
pub(super) struct PlanAxis {
    /// Samples (n or k) on the x axis rather than problems.
    by_samples: bool,
    /// The values on the axis, in the spec's order: its ticks.
    xs: Vec<f64>,
    label: &'static str,
}

impl PlanAxis {
    fn of(r: &PlanResult) -> Self {
        let s = &r.spec;
        let by_samples = s.problems.len() == 1 && s.samples.len() > 1;
        let xs = if by_samples {
            s.samples.iter().map(|&n| f64::from(n)).collect()
        } else {
            s.problems.iter().map(|&n| n as f64).collect()
        };
        let label = if !by_samples {
            "problems N"
        } else if axis(r) == "n" {
            "samples per problem n (log2 scale)"
        } else {
            "samples per vote k (log2 scale)"
        };
        PlanAxis {
            by_samples,
            xs,
            label,
        }
    }

    /// A cell's position on the axis.
    fn x(&self, c: &PlanCell) -> f64 {
        if self.by_samples {
            f64::from(c.samples)
        } else {
            c.problems as f64
        }
    }

    /// Sets the panel's scale, its range (the values with a margin) and its ticks (the values).
    fn apply(&self, p: &mut Panel) {
        let xmin = self
            .xs
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min)
            .max(1.0);
        let xmax = self.xs.iter().copied().fold(0.0, f64::max).max(xmin);
        if self.by_samples {
            p.x_scale = Scale::Log2;
            p.x_range = (xmin / 1.25, xmax * 1.25);
        } else {
            p.x_scale = Scale::Log10;
            p.x_range = (xmin / 1.3, xmax * 1.3);
        }
        p.x_ticks = Some(self.xs.clone());
    }

    /// The simulated dots (x, estimate, 95% CI) in percent of the cells that were simulated,
    /// `get` picking the estimate.
    fn sim_dots(
        &self,
        cells: &[&PlanCell],
        get: impl Fn(&SimCheck) -> Estimate,
    ) -> Vec<(f64, f64, f64, f64)> {
        cells
            .iter()
            .filter_map(|&c| {
                c.sim.as_ref().map(|x| {
                    let e = get(x);
                    (
                        self.x(c),
                        percent(e.sim),
                        percent(e.ci_low),
                        percent(e.ci_high),
                    )
                })
            })
            .collect()
    }
}
