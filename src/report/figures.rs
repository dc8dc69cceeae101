//! Turns finished results into [`Figure`] descriptions (no statistics computed here).

use super::plot::{grid_columns, Band, Bars, Figure, Line, Markers, Note, Panel, Scale};
use crate::experiments::budget::{BudgetCurves, BudgetMetric};
use crate::experiments::contamination::ContaminationResult;
use crate::experiments::cost::{CostTable, Strategy as CostStrategy};
use crate::experiments::noise::{HeadToHead, SeedVariance, VoteSpread};
use crate::experiments::votes::{Metric, VoteCurves};
use crate::experiments::{Estimate, ExperimentResult, RunOutput};
use crate::model::{Verifier, VoteRule};
use crate::scenario::SweepAxis;

/// Percent of a fraction, for axes in percent.
/// A fraction in percent (points).
pub(super) fn pct(x: f64) -> f64 {
    100.0 * x
}

fn title(run: &RunOutput, what: &str) -> String {
    format!("{what} · scenario {} · seed {}", run.scenario, run.seed)
}

/// The figures of one experiment: (file stem, figure).
pub fn experiment_figures(run: &RunOutput, result: &ExperimentResult) -> Vec<(String, Figure)> {
    match result {
        ExperimentResult::Curves(r) => vec![(r.experiment.clone(), curves_figure(run, r))],
        ExperimentResult::AttractorSweep(r) if r.axis == Some(SweepAxis::Split) => {
            vec![(r.experiment.clone(), split_figure(run, r))]
        }
        ExperimentResult::AttractorSweep(r) if r.axis == Some(SweepAxis::GraderFpr) => {
            vec![(r.experiment.clone(), grader_figure(run, r))]
        }
        ExperimentResult::AttractorSweep(r) => vec![(r.experiment.clone(), sweep_figure(run, r))],
        ExperimentResult::SeedVariance(r) => vec![
            (
                format!("{}-histograms", r.experiment),
                seed_histograms(run, r),
            ),
            (format!("{}-sd", r.experiment), seed_sd_figure(run, r)),
        ],
        ExperimentResult::VoteSpread(r) => vec![(r.experiment.clone(), spread_figure(run, r))],
        ExperimentResult::HeadToHead(r) => vec![(r.experiment.clone(), h2h_figure(run, r))],
        ExperimentResult::Budget(r) => vec![
            (r.experiment.clone(), budget_figure(run, r)),
            (format!("{}-lengths", r.experiment), lengths_figure(run, r)),
        ],
        ExperimentResult::Cost(r) => vec![(r.experiment.clone(), cost_figure(run, r))],
        // A plan's figures (a line figure and a heat map) come from `planning::render_plan`.
        ExperimentResult::Plan(_) => Vec::new(),
        ExperimentResult::Contamination(r) => {
            vec![(r.experiment.clone(), contamination_figure(run, r))]
        }
        ExperimentResult::Judge(r) => {
            vec![(r.experiment.clone(), super::judge::judge_figure(run, r))]
        }
        ExperimentResult::Confidence(r) => vec![(
            r.experiment.clone(),
            super::confidence::confidence_figure(run, r),
        )],
    }
}

/// Power of the public-minus-fresh test against the fresh set size, one line per share (the
/// null's false-alarm rate too), dots simulated; the target power dashed, each share's
/// smallest fresh set as a vertical line.
fn contamination_figure(run: &RunOutput, r: &ContaminationResult) -> Figure {
    let mut p = Panel::new(
        format!(
            "model {}: {} public problems, n = {}, memorised problems solved at {:.0}%, fresh pass@1 {:.1}%; test at {:.0}% false alarm",
            r.model,
            r.public_problems,
            r.n,
            pct(r.memorized_rate),
            pct(r.fresh_pass_at_1),
            pct(r.alpha)
        ),
        "fresh problems M (log2 scale)",
        "P(flag contamination) (%)",
    );
    let fresh: Vec<u32> = {
        let mut v: Vec<u32> = r.rows.iter().map(|x| x.fresh as u32).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    k_axis(&mut p, &fresh);
    let target = format!("target power {:.0}%", pct(r.target_power));
    level(&mut p, Some(target), 7, pct(r.target_power));
    let shares: Vec<f64> = std::iter::once(0.0)
        .chain(r.shares.iter().copied())
        .collect();
    for (i, &c) in shares.iter().enumerate() {
        let points: Vec<(f64, Estimate)> = r
            .rows
            .iter()
            .filter(|x| x.share == c)
            .map(|x| (x.fresh as f64, x.power))
            .collect();
        let label = if c == 0.0 {
            "no contamination (false alarm)".to_string()
        } else {
            format!("{:.0}% contaminated", pct(c))
        };
        exact_and_simulated(&mut p, Some(label), None, i, &points);
    }
    let missing: Vec<String> = r
        .plan
        .iter()
        .filter(|plan| plan.fresh.is_none())
        .map(|plan| format!("{:.0}%", pct(plan.share)))
        .collect();
    let beyond: Vec<String> = r
        .plan
        .iter()
        .filter_map(|plan| {
            let m = plan.fresh?;
            let (lo, hi) = p.x_range;
            ((m as f64) <= lo || (m as f64) >= hi).then(|| format!("{:.0}%: {m}", pct(plan.share)))
        })
        .collect();
    if !beyond.is_empty() {
        p.title += &format!("; smallest fresh sets off the axis: {}", beyond.join(", "));
    }
    if !missing.is_empty() {
        p.title += &format!(
            "; {} contaminated: no fresh set up to {} reaches {:.0}% power",
            missing.join(", "),
            r.max_fresh,
            pct(r.target_power)
        );
    }
    for (i, plan) in r.plan.iter().enumerate() {
        if let Some(m) = plan.fresh {
            let (lo, hi) = p.x_range;
            if (m as f64) > lo && (m as f64) < hi {
                p.vlines.push((
                    m as f64,
                    i + 1,
                    Some(format!("{:.0}%: smallest fresh set {m}", pct(plan.share))),
                ));
            }
        }
    }
    let what = format!(
        "{}: power to detect contamination against fresh set size ({} reruns; lines exact, dots simulated)",
        r.experiment, r.reruns
    );
    one_panel(run, &what, p, (1400, 640))
}

/// Short token labels: 1k, 24k, 128k, 1.5M.
fn tokens_label(x: f64) -> String {
    if x >= 1e6 {
        format!("{}M", (x / 1e5).round() / 10.0)
    } else if x >= 1000.0 {
        format!("{}k", (x / 100.0).round() / 10.0)
    } else {
        format!("{x:.0}")
    }
}

/// Ticks 1, 2, 5 times powers of ten inside [lo, hi].
fn ticks_125(lo: f64, hi: f64) -> Vec<f64> {
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

/// Adds one estimated series to a panel, in percent: the exact values as a solid line labelled
/// `line_label`, the simulated values as dots with their 95% CI bars labelled `dots_label`.
fn exact_and_simulated(
    p: &mut Panel,
    line_label: Option<String>,
    dots_label: Option<String>,
    color: usize,
    points: &[(f64, Estimate)],
) {
    let (line, dots) = exact_and_dots(points);
    p.lines.push(Line {
        label: line_label,
        color,
        dashed: false,
        points: line,
    });
    p.markers.push(Markers {
        label: dots_label,
        color,
        points: dots,
    });
}

/// (label, colour, the row's estimate) of one series of [`row_series`].
type RowSeries<T> = (&'static str, usize, fn(&T) -> Estimate);

/// One [`exact_and_simulated`] series per (label, colour, estimate of a row), against `x` of the
/// row: for results whose rows carry several estimates side by side.
fn row_series<T, const N: usize>(
    p: &mut Panel,
    rows: &[T],
    x: impl Fn(&T) -> f64,
    series: [RowSeries<T>; N],
) {
    for (label, color, get) in series {
        let points: Vec<(f64, Estimate)> = rows.iter().map(|row| (x(row), get(row))).collect();
        exact_and_simulated(p, Some(label.to_string()), None, color, &points);
    }
}

/// Splits (x, estimate) points into the exact values (x, y) and the simulated dots with their
/// 95% CIs (x, y, low, high), in percent.
fn exact_and_dots(points: &[(f64, Estimate)]) -> (XY, XYBars) {
    let line = points.iter().map(|(x, e)| (*x, pct(e.exact))).collect();
    let dots = points
        .iter()
        .map(|(x, e)| (*x, pct(e.sim), pct(e.ci_low), pct(e.ci_high)))
        .collect();
    (line, dots)
}

/// A dashed level at `y` across the panel's current x range (a ceiling, a target, a floor).
pub(super) fn level(p: &mut Panel, label: Option<String>, color: usize, y: f64) {
    let (x0, x1) = p.x_range;
    p.lines.push(Line {
        label,
        color,
        dashed: true,
        points: vec![(x0, y), (x1, y)],
    });
}

/// `xs` from smallest to largest, widened on each side by 4% of the span (at least of
/// `min_span`), so the end points do not sit on the frame.
fn padded_range(xs: &[f64], min_span: f64) -> (f64, f64) {
    let (lo, hi) = (
        xs.iter().copied().fold(f64::INFINITY, f64::min),
        xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    );
    let pad = 0.04 * (hi - lo).max(min_span);
    (lo - pad, hi + pad)
}

/// A figure of one panel titled with the run's scenario and seed.
fn one_panel(run: &RunOutput, what: &str, p: Panel, size: (u32, u32)) -> Figure {
    Figure {
        title: title(run, what),
        panels: vec![p],
        columns: 1,
        size,
    }
}

/// Top of a percent axis: the largest value plus a 5% margin, rounded up to 5 points, at most 100.
fn pct_top(max_fraction: f64) -> f64 {
    ((pct(max_fraction) * 1.05 / 5.0).ceil() * 5.0).clamp(5.0, 100.0)
}

fn budget_axis(p: &mut Panel, budgets: &[f64]) {
    let lo = budgets.first().copied().unwrap_or(1000.0);
    let hi = budgets.last().copied().unwrap_or(1000.0);
    p.x_scale = Scale::Log10;
    p.x_range = (lo / 1.25, hi * 1.25);
    p.x_ticks = Some(budgets.to_vec());
}

fn budget_figure(run: &RunOutput, r: &BudgetCurves) -> Figure {
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
                    format!("pass@1 {:.1}%", pct(m.pass_at_1)),
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
                        .map(|(&b, &y)| (b, pct(y)))
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
                        (p.budget_tokens, pct(e.sim), pct(e.ci_low), pct(e.ci_high))
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

fn lengths_figure(run: &RunOutput, r: &BudgetCurves) -> Figure {
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
            p.y_range = (0.0, 1.08 * pct(top));
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
                        .map(|(w, &y)| (w[0], w[1], pct(y)))
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
                        .map(|(w, &y)| ((w[0] * w[1]).sqrt(), pct(y)))
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

fn cost_figure(run: &RunOutput, r: &CostTable) -> Figure {
    // With a price, x is the money per correct answer the result holds; else tokens.
    let priced = r.price_per_mtok.is_some();
    let x_exact = |s: &CostStrategy| {
        s.cost_per_correct
            .filter(|_| priced)
            .unwrap_or(s.tokens_per_correct.exact)
    };
    let x_sim = |s: &CostStrategy| {
        s.cost_per_correct_sim
            .filter(|_| priced)
            .unwrap_or(s.tokens_per_correct.sim)
    };
    let finite: Vec<_> = r
        .strategies
        .iter()
        .filter(|s| x_exact(s).is_finite() && x_sim(s).is_finite())
        .collect();
    let xs = finite.iter().flat_map(|s| [x_exact(s), x_sim(s)]);
    let lo = xs.clone().fold(f64::INFINITY, f64::min);
    let hi = xs.fold(0.0f64, f64::max);
    let (lo, hi) = if lo.is_finite() && lo > 0.0 && hi > 0.0 {
        (lo / 1.6, hi * 1.6)
    } else if priced {
        (1e-3, 1.0)
    } else {
        (1e3, 1e6)
    };
    let cap = r.cap_tokens.map_or("no cap".to_string(), |c| {
        format!("cap {} tokens", tokens_label(c))
    });
    let mut p = Panel::new(
        format!(
            "{cap}; dots simulated (95% CI; {} traces, {} votes per problem), * on the exact Pareto frontier",
            r.traces, r.votes
        ),
        match r.price_per_mtok {
            Some(price) => format!(
                "cost per correct answer at {} per million output tokens (log scale)",
                price
            ),
            None => "tokens per correct answer (k × tokens per sample / accuracy, log scale)".into(),
        },
        "accuracy (% of problems)",
    );
    p.x_scale = Scale::Log10;
    p.x_range = (lo, hi);
    p.x_ticks = Some(ticks_125(lo, hi));
    p.lines.push(Line {
        label: Some("Pareto frontier (exact)".into()),
        color: 6,
        dashed: false,
        points: finite
            .iter()
            .filter(|s| s.frontier)
            .map(|s| (x_exact(s), pct(s.accuracy.exact)))
            .collect(),
    });
    for (mi, m) in r.models.iter().enumerate() {
        let color = [0usize, 1, 2, 3, 4, 5][mi % 6];
        p.markers.push(Markers {
            label: Some(format!(
                "{} (k = 1: one sample; k > 1: maj@k{})",
                m.model,
                if r.strategies
                    .iter()
                    .any(|s| s.model == m.model && s.best_of_k)
                {
                    ", or best@k where marked best"
                } else {
                    ""
                }
            )),
            color,
            points: finite
                .iter()
                .filter(|s| s.model == m.model)
                .map(|s| {
                    let a = s.accuracy;
                    (x_sim(s), pct(a.sim), pct(a.ci_low), pct(a.ci_high))
                })
                .collect(),
        });
    }
    // y fitted to the points and their intervals (as every percent axis), not to a fixed floor.
    fit_pct_y(&mut p);
    for s in &finite {
        p.notes.push(Note {
            at: (x_sim(s), pct(s.accuracy.sim)),
            text: format!(
                "{} k={}{}{}",
                s.model,
                s.k,
                if s.best_of_k { " best" } else { "" },
                if s.frontier { " *" } else { "" }
            ),
        });
    }
    let what = format!(
        "{}: accuracy against {} per correct answer",
        r.experiment,
        if priced { "cost" } else { "tokens" }
    );
    one_panel(run, &what, p, (1200, 760))
}

fn k_axis(p: &mut Panel, ks: &[u32]) {
    let mut ks = ks.to_vec();
    ks.sort_unstable();
    ks.dedup();
    p.x_scale = Scale::Log2;
    let kmin = f64::from(*ks.first().unwrap_or(&1));
    let kmax = f64::from(*ks.last().unwrap_or(&64));
    p.x_range = (kmin / 1.25, kmax * 1.25);
    // Ticks at the k that exist when they are few (k = 3, 5 get a label too); else powers of two.
    let ticks = if ks.len() <= 12 {
        ks.iter().map(|&k| f64::from(k)).collect()
    } else {
        let mut ticks = Vec::new();
        let mut t = 1.0;
        while t <= kmax * 1.01 {
            if t >= kmin * 0.99 {
                ticks.push(t);
            }
            t *= 2.0;
        }
        ticks
    };
    p.x_ticks = Some(ticks);
    p.y_range = (0.0, 100.0);
}

/// Fits a percent y axis to what the panel draws (lines, markers and their bars, bands), with a
/// margin of 8% of the span, widened to multiples of 5 points, never below 0 nor above 100 (a
/// ceiling at 100% runs along the top of the frame). Legends that find no room inside go
/// outside the plot (see [`super::plot::Legend`]); the axis never grows to make room for them.
pub(super) fn fit_pct_y(p: &mut Panel) {
    let ys = p
        .lines
        .iter()
        .flat_map(|l| l.points.iter().map(|q| q.1))
        .chain(
            p.markers
                .iter()
                .flat_map(|m| m.points.iter().flat_map(|q| [q.1, q.2, q.3])),
        )
        .chain(
            p.bands
                .iter()
                .flat_map(|b| b.points.iter().flat_map(|q| [q.1, q.2])),
        )
        .filter(|v| v.is_finite());
    let (lo, hi) = ys.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    });
    if lo > hi {
        return;
    }
    let margin = 0.08 * (hi - lo).max(1.0);
    p.y_range = (
        (((lo - margin) / 5.0).floor() * 5.0).clamp(0.0, 95.0),
        (((hi + margin) / 5.0).ceil() * 5.0).clamp(5.0, 100.0),
    );
}

type XY = Vec<(f64, f64)>;
type XYBars = Vec<(f64, f64, f64, f64)>;

/// One series' points of one metric as (k, estimate), in the result's order.
fn series_points(r: &VoteCurves, si: usize, metric: Metric) -> Vec<(f64, Estimate)> {
    r.points
        .iter()
        .filter(|p| p.series == si && p.metric == metric)
        .map(|p| (f64::from(p.k), p.estimate))
        .collect()
}

fn curves_figure(run: &RunOutput, r: &VoteCurves) -> Figure {
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
                    pct(g),
                    pct(s.pass_at_1)
                ),
                None => format!("pass@1 {:.1}%", pct(s.pass_at_1)),
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
                            let (e, sd) = (pct(q.estimate.exact), pct(q.seed_sd));
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
                pct(s.ceiling),
                s.threshold
            );
            level(&mut p, Some(ceiling), 2, pct(s.ceiling));
            if let Some(c) = s.best_ceiling {
                let label = format!(
                    "best@k ceiling {:.1}% ({})",
                    pct(c),
                    match s.verifier {
                        Some(Verifier::Threshold(_)) => {
                            "the verifier's precision: mean of alpha/(alpha+beta)"
                        }
                        _ => "reward model: a correct sample tops the rest as k grows",
                    }
                );
                level(&mut p, Some(label), 3, pct(c));
            }
            if s.grader.is_some() {
                // The true values beside the graded ones: how much the grader inflates them.
                for (metric, color) in [(Metric::PassAtK, 0usize), (Metric::MajAtK, 2)] {
                    let points: Vec<(f64, f64)> = r
                        .points
                        .iter()
                        .filter(|q| q.series == si && q.metric == metric)
                        .filter_map(|q| q.truth.map(|t| (f64::from(q.k), pct(t.exact))))
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
        let label = format!("{}: maj@k (pass@1 {:.1}%)", s.model, pct(s.pass_at_1));
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
            pct(s.pass_at_1)
        );
        let points = series_points(r, si, Metric::PassAtK);
        exact_and_simulated(&mut p, Some(label), None, si % 8, &points);
    }
    fit_pct_y(&mut p);
    p
}

fn sweep_figure(run: &RunOutput, r: &VoteCurves) -> Figure {
    let s0 = &r.series[0];
    let mut p = Panel::new(
        format!("model {} ({} ties, pass@1 {:.1}%); lines exact, dots simulated (95% CI), dashed: large-k limit of maj@k", s0.model, s0.vote_rule.as_str(), pct(s0.pass_at_1)),
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
                pct(s.ceiling)
            )
        } else {
            format!(
                "maj@k, a = {} (large-k limit {:.1}%)",
                s.attractor,
                pct(s.ceiling)
            )
        };
        let points = series_points(r, si, Metric::MajAtK);
        exact_and_simulated(&mut p, Some(label), None, color, &points);
        level(&mut p, None, color, pct(s.ceiling));
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
fn split_figure(run: &RunOutput, r: &VoteCurves) -> Figure {
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
            .map(|s| (s.split, pct(s.pass_at_1)))
            .collect(),
    });
    p.lines.push(Line {
        label: Some(format!("pass@{kmax} (exact)")),
        color: 0,
        dashed: true,
        points: (0..r.series.len())
            .filter_map(|si| at(si, kmax, Metric::PassAtK).map(|e| (xs[si], pct(e.exact))))
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
fn grader_figure(run: &RunOutput, r: &VoteCurves) -> Figure {
    let s0 = &r.series[0];
    let fpr = |si: usize| r.series[si].grader.map_or(0.0, |g| g.fpr);
    let fnr = s0.grader.map_or(0.0, |g| g.fnr);
    let xs: Vec<f64> = (0..r.series.len()).map(fpr).collect();
    let mut p = Panel::new(
        format!(
            "model {} (true pass@1 {:.1}%, grader fnr {}); solid: graded (exact; dots simulated, 95% CI), dashed: true, same colour",
            s0.model,
            pct(s0.pass_at_1),
            fnr
        ),
        "grader false-positive rate (share of wrong samples graded correct, %)",
        "graded pass@k (%)",
    );
    let (lo, hi) = padded_range(&xs, 0.01);
    p.x_range = (pct(lo), pct(hi));
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
            .filter_map(|si| at(si, k).map(|q| (pct(xs[si]), q.estimate)))
            .collect();
        exact_and_simulated(&mut p, Some(format!("graded pass@{k}")), None, color, &pts);
        // The truth does not depend on the grader: one value, drawn across in the same colour,
        // so the gap to the solid line is the inflation at that k.
        if let Some(t) = at(0, k).and_then(|q| q.truth) {
            level(&mut p, Some(format!("true pass@{k}")), color, pct(t.exact));
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

fn seed_histograms(run: &RunOutput, r: &SeedVariance) -> Figure {
    // One x axis for every panel, so the narrowing with n is visible.
    let (xlo, xhi) = r
        .rows
        .iter()
        .flat_map(|row| row.histogram.iter().flat_map(|&(a, b, _)| [pct(a), pct(b)]))
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
                    pct(row.sd.exact),
                    pct(row.sd.sim)
                ),
                "benchmark score (%)",
                "density (per point)",
            );
            let bars: Vec<(f64, f64, f64)> = row
                .histogram
                .iter()
                .map(|&(a, b, d)| (pct(a), pct(b), d / 100.0))
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
                    .map(|&(x, d)| (pct(x), d / 100.0))
                    .collect(),
            });
            // The central 95% as dashed lines up to the data's top only, leaving the headroom
            // above free for the legend (a full-height line would cross it in a narrow panel).
            let top = ymax * 1.08;
            for (i, x) in [pct(row.sim_interval.0), pct(row.sim_interval.1)]
                .into_iter()
                .enumerate()
            {
                p.lines.push(Line {
                    label: (i == 0).then(|| {
                        format!(
                            "central 95%: {:.1} to {:.1}",
                            pct(row.sim_interval.0),
                            pct(row.sim_interval.1)
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

fn seed_sd_figure(run: &RunOutput, r: &SeedVariance) -> Figure {
    let heading = match r.run_floor {
        Some(floor) => format!(
            "model {} (run_sd {}): seed SD levels off at the run-noise floor {:.2} points, not 0",
            r.model,
            r.run_sd,
            pct(floor)
        ),
        None => format!(
            "model {}: seed SD falls as 1/sqrt(n); the total SE levels off at the question-sampling SE {:.2} points",
            r.model,
            pct(r.question_se)
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
                pct(x.sd.exact),
                pct(x.sd.ci_low.max(x.sd.sim * 0.5)),
                pct(x.total_se),
                pct(x.independent_sd.unwrap_or(x.sd.exact)),
            ]
        })
        .chain([pct(r.question_se)])
        .chain(r.run_floor.map(pct))
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
            .map(|x| (f64::from(x.n), pct(x.total_se)))
            .collect(),
    });
    let question = format!("question-sampling SE {:.2}", pct(r.question_se));
    level(&mut p, Some(question), 1, pct(r.question_se));
    if r.run_floor.is_some() {
        p.lines.push(Line {
            label: Some("exact seed SD of independent samples (run_sd 0, same rates)".into()),
            color: 4,
            dashed: true,
            points: r
                .rows
                .iter()
                .filter_map(|x| x.independent_sd.map(|sd| (f64::from(x.n), pct(sd))))
                .collect(),
        });
    }
    if let Some(floor) = r.run_floor {
        let label = format!(
            "run-noise floor {:.2} (limit of the seed SD as n grows; more runs lower it)",
            pct(floor)
        );
        level(&mut p, Some(label), 3, pct(floor));
    }
    let what = format!("{}: seed SD against samples per problem", r.experiment);
    one_panel(run, &what, p, (1000, 640))
}

fn spread_figure(run: &RunOutput, r: &VoteSpread) -> Figure {
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
    p.y_range = (0.0, pct(hi) * 1.08);
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

fn h2h_figure(run: &RunOutput, r: &HeadToHead) -> Figure {
    let gap = pct(r.pass_at_1_b - r.pass_at_1_a);
    let mut p = Panel::new(
        format!(
            "B = {} (pass@1 {:.1}%) against A = {} ({:.1}%): true gap {gap:+.1} points",
            r.b,
            pct(r.pass_at_1_b),
            r.a,
            pct(r.pass_at_1_a)
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
    p.y_range = (0.0, (pct(hi) * 1.08).clamp(6.0, 100.0));
    level(&mut p, Some("5% reference".into()), 7, 5.0);
    // "The better model" only when B is better: at a gap of 0 or below, B losing is no upset.
    let better = r.pass_at_1_b > r.pass_at_1_a;
    let (loss, question) = if better {
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
            pct(d.difference_sd),
            pct(d.difference_sd_constant_shift),
            corr(d.population_correlation),
            corr(d.realised_correlation)
        ),
        "benchmark solve rate of the problem (%)",
        format!("p_{} - p_{} (points)", r.b, r.a),
    );
    let mut pts: Vec<(f64, f64, f64)> = d
        .per_problem
        .iter()
        .map(|&(x, y, c)| (pct(x), pct(y), pct(c)))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verifier_curves_y_axis_stops_at_100_percent() {
        // Curves reaching 100% with nine legend entries: the axis stops at 100 (the legend
        // goes outside instead of stretching it).
        let mut p = Panel::new("t", "k", "score (%)");
        for i in 0..9 {
            p.lines.push(Line {
                label: Some(format!("entry {i}")),
                color: i,
                dashed: false,
                points: vec![(1.0, 50.0), (256.0, 100.0)],
            });
        }
        fit_pct_y(&mut p);
        assert_eq!(p.y_range, (45.0, 100.0));
        // Low data keeps a small margin, never a negative axis.
        let mut q = Panel::new("t", "k", "score (%)");
        q.lines.push(Line {
            points: vec![(1.0, 0.0), (2.0, 20.0)],
            ..Line::default()
        });
        fit_pct_y(&mut q);
        assert_eq!(q.y_range, (0.0, 25.0));
    }
}
