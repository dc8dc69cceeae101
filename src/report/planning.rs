//! Outputs of `evalsim plan`: the table, the figures and the answer paragraph (nothing computed
//! here beyond picking finished numbers).

use super::plot::{self, HeatFigure, HeatPanel, Line, Markers, Panel, Scale};
use super::tables::{num, Csv};
use super::{Artifact, ReportError};
use crate::experiments::plan::{Answer, Design, Metric, PlanCell, PlanResult};

fn pct(x: f64) -> f64 {
    100.0 * x
}

/// `<plan>.csv`: one row per (design, gap, N, n).
pub fn plan_csv(r: &PlanResult) -> String {
    let mut csv = Csv::new(&[
        "mu",
        "sigma",
        "metric",
        "attractor",
        "vote_rule",
        "seed",
        "design",
        "problems",
        "samples",
        "gap_logits",
        "gap",
        "se",
        "halfwidth",
        "power",
        "loss",
        "tie",
        "loss_or_tie",
        "method",
        "sim_loss",
        "sim_loss_or_tie",
        "sim_se",
        "z",
        "approx_error_in_se",
        "sim_gap",
        "sim_gap_se",
        "gap_z",
        "sim_sd",
        "sim_sd_se",
        "sd_z",
        "reruns",
        "meets_loss_or_tie",
        "meets_halfwidth",
    ]);
    let s = &r.spec;
    let (attractor, rule) = match s.metric {
        Metric::Pass1 => (String::new(), String::new()),
        Metric::Maj { attractor, rule } => (num(attractor), rule.as_str().to_string()),
    };
    for c in &r.cells {
        let sim: [String; 12] = match c.sim {
            Some(x) => {
                // z is a check only against an exact value; against the normal approximation
                // the same number measures the approximation (information, not a check).
                let (z, approx) = if c.loss_checked() {
                    (num(x.loss_or_tie.z), String::new())
                } else {
                    (String::new(), num(x.loss_or_tie.z))
                };
                [
                    num(x.loss.sim),
                    num(x.loss_or_tie.sim),
                    num(x.loss_or_tie.se),
                    z,
                    approx,
                    num(x.gap.sim),
                    num(x.gap.se),
                    num(x.gap.z),
                    num(x.sd.sim),
                    num(x.sd.se),
                    num(x.sd.z),
                    x.reruns.to_string(),
                ]
            }
            None => Default::default(),
        };
        let mut row = vec![
            num(s.mu),
            num(s.sigma),
            s.metric.label().into(),
            attractor.clone(),
            rule.clone(),
            s.seed.to_string(),
            c.design.as_str().into(),
            c.problems.to_string(),
            c.samples.to_string(),
            num(c.gap_logits),
            num(c.gap),
            num(c.se),
            num(c.halfwidth),
            num(c.power),
            num(c.loss),
            num(c.tie),
            num(c.loss_or_tie),
            c.method.into(),
        ];
        row.extend(sim);
        row.push((c.loss_or_tie <= s.target_loss_or_tie).to_string());
        row.push((c.halfwidth <= s.target_halfwidth).to_string());
        csv.row(row);
    }
    csv.finish()
}

/// The letter of the grid's second axis: n (pass@1) or k (maj@k).
fn axis(r: &PlanResult) -> &'static str {
    match r.spec.metric {
        Metric::Pass1 => "n",
        Metric::Maj { .. } => "k",
    }
}

fn design_words(d: Design) -> &'static str {
    match d {
        Design::Fixed => "on a fixed benchmark (the same problems for both models, independent seeds)",
        Design::PopulationPaired => {
            "when the problems are a sample from a population and both models answer the same ones (paired)"
        }
        Design::PopulationUnpaired => "when each model answers its own sample of problems (unpaired)",
    }
}

fn thousands(x: u64) -> String {
    let s = x.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

fn answer_text(r: &PlanResult, a: &Answer) -> String {
    match a.best {
        Some((big_n, n, v)) => {
            let what = if a.target == "loss_or_tie" {
                format!("loss-or-tie {:.1}%", pct(v))
            } else {
                format!("half-width {:.2} points", pct(v))
            };
            let each = match r.spec.metric {
                Metric::Pass1 => format!("n = {n} sample{} each", if n == 1 { "" } else { "s" }),
                Metric::Maj { .. } => format!(
                    "one vote of k = {n} sample{} each",
                    if n == 1 { "" } else { "s" }
                ),
            };
            format!(
                "N = {} problems with {each} ({} samples per model; {what}) {}",
                thousands(big_n as u64),
                thousands(big_n as u64 * u64::from(n)),
                design_words(a.design)
            )
        }
        None => format!(
            "a larger grid: no cell suffices {} (try larger N or {})",
            design_words(a.design),
            axis(r)
        ),
    }
}

/// The answer: one paragraph per gap, ready to paste into a plan.
pub fn paragraph(r: &PlanResult) -> String {
    let s = &r.spec;
    let mut out = String::new();
    for &gap in &s.gaps {
        let pick = |design: Design, target: &str| {
            r.answers
                .iter()
                .find(|a| a.design == design && a.gap_logits == gap && a.target == target)
        };
        let pop_gaps: Vec<(u32, f64)> = r
            .cells
            .iter()
            .filter(|c| {
                c.design == Design::PopulationPaired
                    && c.gap_logits == gap
                    && Some(&c.problems) == s.problems.first()
            })
            .map(|c| (c.samples, c.gap))
            .collect();
        let lt: Vec<String> = Design::ALL
            .iter()
            .filter_map(|&d| pick(d, "loss_or_tie"))
            .take(1)
            .map(|a| answer_text(r, a))
            .collect();
        let hw: Vec<String> = Design::ALL
            .iter()
            .filter_map(|&d| pick(d, "halfwidth"))
            .map(|a| answer_text(r, a))
            .collect();
        let score = match s.metric {
            Metric::Pass1 => format!(
                "{:+.1} points of pass@1 (averaged over n samples per problem)",
                pct(pop_gaps.first().map_or(0.0, |g| g.1))
            ),
            Metric::Maj { attractor, rule } => {
                let gaps: Vec<String> = pop_gaps
                    .iter()
                    .map(|(k, g)| format!("{:+.1} at k = {k}", pct(*g)))
                    .collect();
                format!(
                    "in maj@k (one majority vote of k samples per problem; attractor share {attractor}, {} ties) the population gap is {} points",
                    rule.as_str(),
                    gaps.join(", ")
                )
            }
        };
        out.push_str(&format!(
            "Model B is {} logits better than model A on problems whose solve rates are \
             logit-normal(mu = {}, sigma = {}): {score}. Searching N in {:?} and {} in {:?} for \
             the fewest samples N x {}: for B to lose or tie a rerun at most {}% of the time, \
             use {}. For a 95% confidence interval on the difference no wider than +/-{} points, \
             use {}; {}; and {}.\n\n",
            gap_text(gap),
            s.mu,
            s.sigma,
            s.problems,
            axis(r),
            s.samples,
            axis(r),
            pct(s.target_loss_or_tie),
            lt.join("; "),
            pct(s.target_halfwidth),
            hw.first().cloned().unwrap_or_default(),
            hw.get(1).cloned().unwrap_or_default(),
            hw.get(2).cloned().unwrap_or_default(),
        ));
    }
    out.trim_end().to_string() + "\n"
}

fn title(r: &PlanResult, what: &str) -> String {
    let metric = match r.spec.metric {
        Metric::Pass1 => "pass@1".to_string(),
        Metric::Maj { attractor, rule } => format!("maj@k (a = {attractor}, {})", rule.as_str()),
    };
    format!(
        "{what} · {metric} · logit-normal({}, {}) · seed {}",
        r.spec.mu, r.spec.sigma, r.spec.seed
    )
}

fn fixed(r: &PlanResult, gap: f64) -> impl Iterator<Item = &PlanCell> {
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
fn loss_label(v: f64) -> String {
    if v > 0.0 && pct(v) < 0.05 {
        "<0.1%".into()
    } else {
        format!("{:.1}%", pct(v))
    }
}

/// Loss-or-tie against N on a log axis, one line per n (fixed design), one panel per gap. With a
/// single N and several n (or k), n goes on the x axis instead (one line for the one N); a line
/// of one point is drawn as an exact mark.
pub fn loss_figure(r: &PlanResult) -> plot::Figure {
    let s = &r.spec;
    let by_samples = s.problems.len() == 1 && s.samples.len() > 1;
    // (x values, series values): cells are picked by (x, series).
    let xs: Vec<f64> = if by_samples {
        s.samples.iter().map(|&n| f64::from(n)).collect()
    } else {
        s.problems.iter().map(|&n| n as f64).collect()
    };
    let series: Vec<f64> = if by_samples {
        s.problems.iter().map(|&n| n as f64).collect()
    } else {
        s.samples.iter().map(|&n| f64::from(n)).collect()
    };
    let of = |c: &PlanCell| -> (f64, f64) {
        if by_samples {
            (f64::from(c.samples), c.problems as f64)
        } else {
            (c.problems as f64, f64::from(c.samples))
        }
    };
    let xmin = xs.iter().copied().fold(f64::INFINITY, f64::min).max(1.0);
    let xmax = xs.iter().copied().fold(0.0, f64::max).max(xmin);
    let x_label = if !by_samples {
        "problems N".to_string()
    } else if axis(r) == "n" {
        "samples per problem n (log2 scale)".to_string()
    } else {
        "samples per vote k (log2 scale)".to_string()
    };
    let panels = s
        .gaps
        .iter()
        .map(|&gap| {
            let mut p = Panel::new(
                format!("B = A {} logits (fixed benchmark)", gap_text(gap)),
                x_label.as_str(),
                "P(B scores <= A) in one rerun, %",
            );
            if by_samples {
                p.x_scale = Scale::Log2;
                p.x_range = (xmin / 1.25, xmax * 1.25);
            } else {
                p.x_scale = Scale::Log10;
                p.x_range = (xmin / 1.3, xmax * 1.3);
            }
            p.x_ticks = Some(xs.clone());
            // The simulated intervals stay inside the frame too.
            let ymax = fixed(r, gap)
                .map(|c| {
                    c.sim
                        .map_or(c.loss_or_tie, |x| c.loss_or_tie.max(x.loss_or_tie.ci_high))
                })
                .fold(0.0, f64::max);
            p.y_range = (0.0, (pct(ymax) * 1.1).max(pct(s.target_loss_or_tie) * 1.5));
            let mut single_labelled = false;
            for (i, &v) in series.iter().enumerate() {
                let cells: Vec<&PlanCell> = fixed(r, gap).filter(|&c| of(c).1 == v).collect();
                let name = if by_samples {
                    format!("N = {v}")
                } else {
                    format!("{} = {v}", axis(r))
                };
                let exact: Vec<(f64, f64)> = cells
                    .iter()
                    .map(|&c| (of(c).0, pct(c.loss_or_tie)))
                    .collect();
                if exact.len() == 1 {
                    // No line to draw through one point: the exact value as a mark.
                    let (x, y) = exact[0];
                    let label = if single_labelled {
                        name
                    } else {
                        format!("{name} (exact)")
                    };
                    single_labelled = true;
                    p.markers.push(Markers {
                        label: Some(label),
                        color: i,
                        points: vec![(x, y, y, y)],
                    });
                } else {
                    p.lines.push(Line {
                        label: Some(name),
                        color: i,
                        dashed: false,
                        points: exact,
                    });
                }
                let sims: Vec<_> = cells
                    .iter()
                    .filter_map(|&c| {
                        c.sim.map(|x| {
                            let e = x.loss_or_tie;
                            (of(c).0, pct(e.sim), pct(e.ci_low), pct(e.ci_high))
                        })
                    })
                    .collect();
                if !sims.is_empty() {
                    p.markers.push(Markers {
                        label: (i == 0).then(|| "simulated (95% CI)".to_string()),
                        color: i,
                        points: sims,
                    });
                }
            }
            p.lines.push(Line {
                label: Some(format!("target {}%", pct(s.target_loss_or_tie))),
                color: 6,
                dashed: true,
                points: vec![
                    (p.x_range.0, pct(s.target_loss_or_tie)),
                    (p.x_range.1, pct(s.target_loss_or_tie)),
                ],
            });
            p
        })
        .collect::<Vec<_>>();
    let columns = panels.len().min(2);
    let rows = panels.len().div_ceil(2) as u32;
    plot::Figure {
        title: title(r, "How often the better model loses or ties"),
        panels,
        columns,
        size: (if columns == 1 { 900 } else { 1600 }, 80 + 560 * rows),
    }
}

/// Heat maps over N x n: fixed-design loss-or-tie and population-paired half-width per gap, the
/// cells meeting each target outlined.
pub fn heat_figure(r: &PlanResult) -> HeatFigure {
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
            let labels = grid
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
                                format!("{:.2}{star}", pct(v))
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
                    "P(B <= A), fixed benchmark",
                    format!("{}%", pct(bound)),
                    "P(B <= A) (%)",
                )
            } else {
                (
                    "95% CI half-width (points), population paired",
                    format!("{} points", pct(bound)),
                    "95% CI half-width (points)",
                )
            };
            panels.push(HeatPanel {
                title: format!("{what}, gap {} logits", gap_text(gap)),
                x_label: "problems N".into(),
                y_label: match r.spec.metric {
                    Metric::Pass1 => "samples per problem n".into(),
                    Metric::Maj { .. } => "samples per vote k".into(),
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
                    "outlined: meets the target (<= {unit}); * fewest samples N x {} meeting it",
                    axis(r)
                ),
            });
        }
    }
    let rows = s.gaps.len() as u32;
    HeatFigure {
        title: title(
            r,
            match r.spec.metric {
                Metric::Pass1 => "Plan over N x n",
                Metric::Maj { .. } => "Plan over N x k",
            },
        ),
        panels,
        columns: 2,
        size: (1600, 80 + 520 * rows),
    }
}

/// Every output file of a plan, named after its experiment (`plan` from the command line):
/// `<plan>.csv`, `<plan>.txt` (the answer), `<plan>.json`, and the figures `<plan>-loss` and
/// `<plan>-heatmap` (PNG and SVG).
///
/// # Errors
/// [`ReportError`] when a figure or JSON document cannot be produced.
pub fn render_plan(r: &PlanResult, figures: bool) -> Result<Vec<Artifact>, ReportError> {
    let stem = &r.experiment;
    let mut out = vec![
        Artifact {
            file: format!("{stem}.csv"),
            bytes: plan_csv(r).into_bytes(),
        },
        Artifact {
            file: format!("{stem}.txt"),
            bytes: paragraph(r).into_bytes(),
        },
        Artifact {
            file: format!("{stem}.json"),
            bytes: super::json(&format!("{stem}.json"), r)?,
        },
    ];
    if figures {
        let loss = loss_figure(r);
        out.push(Artifact {
            file: format!("{stem}-loss.png"),
            bytes: plot::render_png(&loss)?,
        });
        out.push(Artifact {
            file: format!("{stem}-loss.svg"),
            bytes: plot::render_svg(&loss)?.into_bytes(),
        });
        let heat = heat_figure(r);
        out.push(Artifact {
            file: format!("{stem}-heatmap.png"),
            bytes: plot::render_heat_png(&heat)?,
        });
        out.push(Artifact {
            file: format!("{stem}-heatmap.svg"),
            bytes: plot::render_heat_svg(&heat)?.into_bytes(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_gap_titles_print_three_significant_digits() {
        assert_eq!(gap_text(0.230_812_861_717_722_7), "+0.231");
        assert_eq!(gap_text(0.21), "+0.21");
        assert_eq!(gap_text(-1.5), "-1.5");
        assert_eq!(gap_text(12.345), "+12.3");
        assert_eq!(gap_text(0.000_123_456), "+0.000123");
        assert_eq!(gap_text(250.0), "+250");
    }

    #[test]
    fn plan_heatmap_loss_below_a_twentieth_of_a_point_reads_below_0_1_percent() {
        assert_eq!(loss_label(1e-6), "<0.1%");
        assert_eq!(loss_label(0.0), "0.0%");
        assert_eq!(loss_label(0.0123), "1.2%");
    }
}
