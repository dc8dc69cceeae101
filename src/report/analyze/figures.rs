//! The figures of `analyze` and `fit`: the pass@k / pass^k / maj@k curves with their interval
//! bands, the solve-rate histogram and the fitted count distribution. Draws finished results only
//! (layout, never statistics); depends on [`crate::analyze`]'s result types and
//! [`crate::report::plot`].

use super::{curves, input_names};
use crate::analyze::fit::joint::Parameter;
use crate::analyze::interval::IntervalBasis;
use crate::analyze::{Analysis, CurvePoint, FitResult, ModelAnalysis};
use crate::report::format::pct;
use crate::report::plot::{grid_columns, Band, Bars, Figure, Line, Markers, Panel, Scale};

/// The x ticks of a curve against k: a tick at every computed k when there are at most 12 of
/// them, else at the computed powers of two and the largest k (never a tick at a k that was not
/// computed).
pub(super) fn k_ticks(ks: impl IntoIterator<Item = f64>) -> Vec<f64> {
    let mut ks: Vec<f64> = ks.into_iter().filter(|k| k.is_finite()).collect();
    ks.sort_by(f64::total_cmp);
    ks.dedup();
    if ks.len() <= 12 {
        return ks;
    }
    let last = ks.last().copied();
    let mut ticks: Vec<f64> = ks
        .into_iter()
        .filter(|&k| k >= 1.0 && (k as u64).is_power_of_two() && k.fract() == 0.0)
        .collect();
    // The largest k is always labelled (n = 3 has k = 3, not a power of two).
    if let Some(last) = last {
        if ticks.last() != Some(&last) {
            ticks.push(last);
        }
    }
    ticks
}

/// Sorted k values as text: runs of consecutive values as "52-64", the rest listed ("1, 3").
fn k_list(ks: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ks.len() {
        let mut j = i;
        while j + 1 < ks.len() && ks[j + 1] == ks[j] + 1 {
            j += 1;
        }
        parts.push(if j >= i + 2 {
            format!("{}-{}", ks[i], ks[j])
        } else {
            ks[i..=j]
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        });
        i = j + 1;
    }
    parts.join(", ")
}

/// pass@k, pass^k and maj@k against k, one panel per model, with 95% interval bands.
pub fn curves_figure(a: &Analysis) -> Figure {
    let mut panels: Vec<Panel> = a.models.iter().map(model_panel).collect();
    share_y(&mut panels);
    let columns = grid_columns(panels.len());
    let rows = panels.len().div_ceil(columns).max(1) as u32;
    Figure {
        title: format!(
            "pass@k and maj@k against k · {} · bands: 95% interval (Wilson, effective size, t quantile) · seed {}",
            input_names(a),
            a.seed
        ),
        panels,
        columns,
        size: (if columns > 1 { 800 * columns as u32 } else { 1000 }, 80 + 600 * rows),
    }
}

/// One model's panel of [`curves_figure`]: its curves and the plug-in pass@k against k.
fn model_panel(m: &ModelAnalysis) -> Panel {
    let s = &m.summary;
    let mut p = Panel::new(
        format!(
            "{}: {} problems, n = {}{}, {} {}",
            s.model,
            s.problems,
            s.n_min,
            if s.n_max > s.n_min {
                format!("–{}", s.n_max)
            } else {
                String::new()
            },
            if s.mean_score.is_some() {
                "mean score"
            } else {
                "pass@1"
            },
            pct(s.pass_at_1, 1)
        ),
        "k (samples per problem, log2 scale)",
        "benchmark score (%)",
    );
    p.x_scale = Scale::Log2;
    let kmin = s.pass_at_k.first().map_or(1.0, |q| q.k as f64);
    let kmax = s.pass_at_k.last().map_or(1.0, |q| q.k as f64);
    p.x_range = (kmin / 1.25, kmax * 1.25);
    p.x_ticks = Some(k_ticks(s.pass_at_k.iter().map(|q| q.k as f64)));
    p.y_range = (0.0, 100.0);
    // With one sample per problem every curve is the single point k = 1, where pass^1 and both
    // maj@1 equal pass@1: one mark, labelled so, instead of four stacked marks under four
    // legend entries.
    let single = s.n_max == 1;
    // Partial credit leaves pass@k and pass^k empty: no legend entry for them.
    for (metric, rule, points) in curves(m)
        .into_iter()
        .filter(|c| !c.2.is_empty())
        .filter(|c| !single || matches!(c.0, "pass@k" | "mean_score"))
    {
        let (color, label) = match metric {
            "pass@k" if single => (0, "pass@1 (= pass^1 = maj@1 at n = 1)".to_string()),
            "pass@k" => (0, "pass@k (unbiased)".to_string()),
            "pass^k" => (1, "pass^k".to_string()),
            "maj@k" => (2, format!("maj@k ({rule} ties, exact over subsets)")),
            "mean_score" => (0, "mean score (partial credit)".to_string()),
            _ => (3, "maj@k of the first k answers".to_string()),
        };
        if metric != "maj@k-first" {
            add_intervals(&mut p, metric, points, color, s.problems);
        }
        let line: Vec<(f64, f64)> = points
            .iter()
            .map(|q| (q.k as f64, 100.0 * q.estimate))
            .collect();
        if points.len() == 1 {
            p.markers.push(Markers {
                label: Some(label.clone()),
                color,
                points: line.iter().map(|&(x, y)| (x, y, y, y)).collect(),
            });
        } else {
            p.lines.push(Line {
                label: Some(label),
                color,
                dashed: metric == "maj@k-first",
                points: line,
            });
        }
    }
    let plug: Vec<(f64, f64)> = s
        .pass_at_k
        .iter()
        .filter_map(|q| q.plug_in.map(|v| (q.k as f64, 100.0 * v)))
        .collect();
    if plug.len() > 1 {
        p.lines.push(Line {
            label: Some("plug-in 1-(1-c/n)^k (biased low)".to_string()),
            color: 7,
            dashed: true,
            points: plug,
        });
    }
    crate::report::figures::fit_pct_y(&mut p);
    p
}

/// A curve's 95% intervals: a band (or bars where there are too few points for one) where the
/// interval comes from the problems' spread; where every problem scores the same (e.g. all
/// solved at large k) the interval is the exact bound 1 - 0.05^(1/N), and those k get bars and a
/// legend entry saying so instead of a band that jumps.
fn add_intervals(
    p: &mut Panel,
    metric: &str,
    points: &[CurvePoint],
    color: usize,
    problems: usize,
) {
    let bound = |q: &CurvePoint| {
        matches!(
            q.ci_basis,
            Some(IntervalBasis::AllMax | IntervalBasis::AllMin | IntervalBasis::AllEqual)
        )
    };
    // Bars of different curves at one k are drawn a little apart (pass@k left, pass^k right,
    // 0.12 octave between them) so that they do not overlap.
    let dodge = match metric {
        "pass@k" => 2f64.powf(-0.06),
        "pass^k" => 2f64.powf(0.06),
        _ => 1.0,
    };
    let bounded: Vec<(f64, f64, f64, f64)> = points
        .iter()
        .filter(|q| bound(q))
        .filter_map(|q| {
            q.ci95.map(|[lo, hi]| {
                (
                    q.k as f64 * dodge,
                    100.0 * q.estimate,
                    100.0 * lo,
                    100.0 * hi,
                )
            })
        })
        .collect();
    let spread_points = points.len() - bounded.len();
    if !bounded.is_empty() && spread_points > 0 {
        p.markers.push(Markers {
            label: Some(format!(
                "{metric} at k = {}: every problem scores the same; bars: exact bound 1 - 0.05^(1/{})",
                k_list(
                    &points
                        .iter()
                        .filter(|q| bound(q) && q.ci95.is_some())
                        .map(|q| q.k)
                        .collect::<Vec<_>>()
                ),
                problems
            )),
            color,
            points: bounded,
        });
    }
    let spread = |q: &&CurvePoint| spread_points == 0 || !bound(q);
    let band: Vec<(f64, f64, f64)> = points
        .iter()
        .filter(spread)
        .filter_map(|q| q.ci95.map(|[lo, hi]| (q.k as f64, 100.0 * lo, 100.0 * hi)))
        .collect();
    let banded = if spread_points == 0 {
        points.len()
    } else {
        spread_points
    };
    if band.len() == banded && band.len() > 1 {
        p.bands.push(Band {
            label: None,
            color,
            points: band,
        });
    } else if !band.is_empty() {
        p.markers.push(Markers {
            label: None,
            color,
            points: points
                .iter()
                .filter(spread)
                .filter_map(|q| {
                    q.ci95
                        .map(|[lo, hi]| (q.k as f64, 100.0 * q.estimate, 100.0 * lo, 100.0 * hi))
                })
                .collect(),
        });
    }
}

/// One y range for every panel (the union of theirs), so that models drawn side by side are
/// compared on the same scale.
fn share_y(panels: &mut [Panel]) {
    if panels.len() < 2 {
        return;
    }
    let lo = panels
        .iter()
        .map(|p| p.y_range.0)
        .fold(f64::INFINITY, f64::min);
    let hi = panels
        .iter()
        .map(|p| p.y_range.1)
        .fold(f64::NEG_INFINITY, f64::max);
    for p in panels {
        p.y_range = (lo, hi);
    }
}

/// Histogram of per-problem solve rates, one panel per model.
pub fn solve_rates_figure(a: &Analysis) -> Figure {
    let panels: Vec<Panel> = a
        .models
        .iter()
        .map(|m| {
            let h = &m.solve_rates;
            let mut p = Panel::new(
                format!(
                    "{}: {} problems; never solved {}, always solved {}",
                    m.summary.model, m.summary.problems, h.never_solved, h.always_solved
                ),
                "per-problem solve rate c/n",
                "problems",
            );
            let top = h.bins.iter().map(|b| b.problems).max().unwrap_or(1).max(1) as f64;
            let lo = h.bins.first().map_or(0.0, |b| b.low.min(0.0));
            let hi = h.bins.last().map_or(1.0, |b| b.high.max(1.0));
            // A little room beside the outer bars, so that they do not run into the frame.
            let pad = 0.02 * (hi - lo);
            p.x_range = (lo - pad, hi + pad);
            p.y_range = (0.0, top * 1.12);
            p.x_ticks = Some((0..=10).map(|i| f64::from(i) / 10.0).collect());
            p.y_integer = true;
            // One bin per count c (every problem has the same n): ticks at c/n, labelled so.
            let n = h.bins.len().saturating_sub(1);
            let one_per_count = (1..=20).contains(&n)
                && h.bins
                    .iter()
                    .enumerate()
                    .all(|(c, b)| (0.5 * (b.low + b.high) - c as f64 / n as f64).abs() < 1e-9);
            if one_per_count {
                let step = n.div_ceil(10);
                let cs: Vec<usize> = (0..=n).step_by(step).collect();
                p.x_ticks = Some(cs.iter().map(|&c| c as f64 / n as f64).collect());
                p.x_tick_labels = Some(cs.iter().map(|c| format!("{c}/{n}")).collect());
            }
            p.bars.push(Bars {
                label: None,
                color: 0,
                bars: h
                    .bins
                    .iter()
                    .map(|b| (b.low, b.high, b.problems as f64))
                    .collect(),
            });
            p
        })
        .collect();
    let mut panels = panels;
    share_y(&mut panels);
    let columns = grid_columns(panels.len());
    let rows = panels.len().div_ceil(columns).max(1) as u32;
    Figure {
        title: format!(
            "per-problem solve rates · {} · seed {}",
            input_names(a),
            a.seed
        ),
        panels,
        columns,
        size: (
            if columns > 1 {
                800 * columns as u32
            } else {
                1000
            },
            80 + 520 * rows,
        ),
    }
}

/// The parts of model `m`'s fitted distribution that were not estimated but held at a
/// fallback (sigma, the model's shift_sd, its location), as "sigma = 2" etc.; empty when every
/// parameter behind the curve was estimated.
pub fn assumed_parts(fit: &FitResult, m: usize) -> Vec<String> {
    fit.parameters
        .iter()
        .filter(|p| !p.estimated())
        .filter_map(|p| match p.parameter {
            Parameter::Sigma => Some(format!("sigma = {}", p.value)),
            Parameter::Tau(k) if k == m => Some(format!("shift_sd = {}", p.value)),
            Parameter::Mu => Some(format!("mu = {:.3}", p.value)),
            Parameter::Shift(k) if k == m => Some(format!("shift = {:.3}", p.value)),
            _ => None,
        })
        .collect()
}

/// "fitted" when everything behind model `m`'s curve was estimated, else "assumed sigma = 2
/// (not estimated)": a curve drawn from a fallback is never labelled as fitted.
fn curve_kind(fit: &FitResult, m: usize) -> String {
    let assumed = assumed_parts(fit, m);
    if assumed.is_empty() {
        "fitted".to_string()
    } else {
        format!("assumed {} (not estimated)", assumed.join(", "))
    }
}

/// "fitted" when every model's curve is fitted, else "model".
fn whole_kind(fit: &FitResult) -> &'static str {
    if (0..fit.models.len()).all(|m| assumed_parts(fit, m).is_empty()) {
        "fitted"
    } else {
        "model"
    }
}

/// Observed against fitted distribution of per-problem correct counts, one panel per model.
/// A model whose curve rests on a refused parameter says so in its title and legend
/// (`assumed_parts`).
pub fn fit_figure(fit: &FitResult, seed: u64) -> Figure {
    let panels: Vec<Panel> = fit
        .models
        .iter()
        .enumerate()
        .map(|(index, m)| {
            let kind = curve_kind(fit, index);
            let h = &m.counts;
            let n = h.n as f64;
            let top = h
                .observed
                .iter()
                .map(|&o| o as f64)
                .chain(h.fitted.iter().copied())
                .fold(1.0, f64::max);
            // with a fitted run_sd the fitted counts are pooled over runs (fit::count_histogram)
            let runs = fit
                .parameter(Parameter::Omega(index))
                .filter(|q| q.estimated() && q.value > 0.0)
                .map_or(String::new(), |q| {
                    format!(" + run_sd {:.2} per run", q.value)
                });
            // "n = 18 (3 runs of 6)" when the counts pool runs
            let n_text = match h.run_shape {
                Some((r, size)) => format!("{} ({r} runs of {size})", h.n),
                None => h.n.to_string(),
            };
            let mut p = Panel::new(
                format!(
                    "`{}`: {} problems with n = {n_text}; {} logit N({:.2}, {:.2}^2){runs}",
                    m.name,
                    h.observed.iter().sum::<usize>(),
                    if kind == "fitted" { "fitted" } else { "model" },
                    m.location,
                    m.spread
                ),
                "correct answers c out of n",
                "problems",
            );
            p.x_range = (-0.5, n + 0.5);
            p.y_range = (0.0, top * 1.15);
            let step = (h.n / 16).max(1);
            p.x_ticks = Some((0..=h.n).step_by(step).map(|c| c as f64).collect());
            p.bars.push(Bars {
                label: Some("observed".to_string()),
                color: 0,
                bars: h
                    .observed
                    .iter()
                    .enumerate()
                    .map(|(c, &o)| (c as f64 - 0.4, c as f64 + 0.4, o as f64))
                    .collect(),
            });
            let fitted: Vec<(f64, f64)> = h
                .fitted
                .iter()
                .enumerate()
                .map(|(c, &f)| (c as f64, f))
                .collect();
            p.lines.push(Line {
                label: Some(if kind == "fitted" {
                    "fitted (expected problems)".to_string()
                } else {
                    format!("expected problems, {kind}")
                }),
                color: 1,
                dashed: false,
                points: fitted.clone(),
            });
            p.markers.push(Markers {
                label: None,
                color: 1,
                points: fitted.iter().map(|&(x, y)| (x, y, y, y)).collect(),
            });
            p
        })
        .collect();
    let columns = grid_columns(panels.len());
    let rows = panels.len().div_ceil(columns);
    Figure {
        title: format!(
            "fit: observed vs {} correct counts per problem · {} · seed {seed}",
            whole_kind(fit),
            fit.source
        ),
        panels,
        columns,
        size: (
            if columns > 1 {
                800 * columns as u32
            } else {
                1000
            },
            120 + 520 * rows as u32,
        ),
    }
}

/// Observed pass@k (and maj@k) with their 95% intervals, the fitted population curves over
/// them, one panel per model.
pub fn fit_curves_figure(fit: &FitResult, seed: u64) -> Figure {
    let panels: Vec<Panel> = fit
        .models
        .iter()
        .enumerate()
        .map(|(index, m)| {
            let kind = curve_kind(fit, index);
            // the lines are the population curves without run noise: say so when a run_sd
            // was fitted (the observed curves pool samples across runs)
            let without_runs = fit
                .parameter(Parameter::Omega(index))
                .filter(|q| q.estimated() && q.value > 0.0)
                .map_or(String::new(), |q| {
                    format!(", without the fitted run_sd {:.2}", q.value)
                });
            let mut p = Panel::new(
                format!(
                    "`{}`: observed (marks, 95% intervals) and {} (lines{without_runs})",
                    m.name,
                    if kind == "fitted" { "fitted" } else { "model" }
                ),
                "k (samples per problem, log2 scale)",
                "benchmark score (%)",
            );
            p.x_scale = Scale::Log2;
            let ks: Vec<f64> = m
                .curves
                .iter()
                .flat_map(|c| c.observed.iter().map(|q| q.k as f64))
                .collect();
            let kmin = ks.iter().copied().fold(f64::INFINITY, f64::min).min(1.0);
            let kmax = ks.iter().copied().fold(1.0, f64::max);
            p.x_range = (kmin / 1.25, kmax * 1.25);
            p.x_ticks = Some(k_ticks(ks.iter().copied()));
            p.y_range = (0.0, 100.0);
            for (i, c) in m.curves.iter().enumerate() {
                let color = if c.metric == "maj@k" { 2 } else { 0 };
                let _ = i;
                p.markers.push(Markers {
                    label: Some(format!("{} observed", c.metric)),
                    color,
                    points: c
                        .observed
                        .iter()
                        .map(|q| {
                            let [lo, hi] = q.ci95.unwrap_or([q.estimate, q.estimate]);
                            (q.k as f64, 100.0 * q.estimate, 100.0 * lo, 100.0 * hi)
                        })
                        .collect(),
                });
                p.lines.push(Line {
                    label: Some(if kind == "fitted" {
                        format!("{} fitted", c.metric)
                    } else {
                        format!("{}, {kind}", c.metric)
                    }),
                    color,
                    dashed: true,
                    points: c
                        .observed
                        .iter()
                        .zip(&c.fitted)
                        .map(|(q, &f)| (q.k as f64, 100.0 * f))
                        .collect(),
                });
            }
            crate::report::figures::fit_pct_y(&mut p);
            p
        })
        .collect();
    let columns = grid_columns(panels.len());
    let rows = panels.len().div_ceil(columns);
    Figure {
        title: format!(
            "fit: observed vs {} pass@k / maj@k · {} · seed {seed}",
            whole_kind(fit),
            fit.source
        ),
        panels,
        columns,
        size: (
            if columns > 1 {
                800 * columns as u32
            } else {
                1000
            },
            120 + 520 * rows as u32,
        ),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn k_values_of_the_exact_bound_are_named_as_they_are() {
        assert_eq!(super::k_list(&[1, 3]), "1, 3");
        assert_eq!(super::k_list(&[52, 53, 54, 55]), "52-55");
        assert_eq!(super::k_list(&[1, 2, 5, 6, 7]), "1, 2, 5-7");
    }

    #[test]
    fn analyze_with_n_3_labels_k_3() {
        assert_eq!(super::k_ticks([1.0, 2.0, 3.0]), vec![1.0, 2.0, 3.0]);
        let every: Vec<f64> = (1..=64).map(f64::from).collect();
        assert_eq!(super::k_ticks(every.iter().copied()).last(), Some(&64.0));
        assert_eq!(super::k_ticks(every.iter().copied()).len(), 7);
        let to_67: Vec<f64> = (1..=67).map(f64::from).collect();
        assert_eq!(super::k_ticks(to_67).last(), Some(&67.0));
    }

    #[test]
    fn curves_for_k_1_2_4_8_put_ticks_at_k_3_5_6_and_7() {
        assert_eq!(
            super::k_ticks([1.0, 2.0, 4.0, 8.0]),
            vec![1.0, 2.0, 4.0, 8.0]
        );
        assert_eq!(super::k_ticks([8.0, 1.0, 4.0, 4.0]), vec![1.0, 4.0, 8.0]);
    }
}

#[cfg(test)]
mod fit_label_tests {
    use super::*;
    use crate::analyze::{fit_models, FitOptions, ModelSamples};

    /// Every title and legend label of the two fit figures.
    fn labels(fig: &Figure) -> Vec<String> {
        let mut out = vec![fig.title.clone()];
        for p in &fig.panels {
            out.push(p.title.clone());
            out.extend(p.lines.iter().filter_map(|l| l.label.clone()));
        }
        out
    }

    /// Regression: the fit figures drew the curve of a refused (fallback) sigma under the
    /// label "fitted". Checked on the figures' label data, not pixels.
    #[test]
    fn fit_figures_label_a_fallback_sigma_as_assumed_not_fitted() {
        // the human-eval shape: 160 of 164 problems all-or-none, sigma refused
        let mut counts = vec![(10, 10); 100];
        counts.extend(vec![(0, 10); 60]);
        counts.extend([(3, 10), (5, 10), (7, 10), (9, 10)]);
        let model = ModelSamples::from_counts("m", &counts);
        let fit = fit_models(&[&model], "he.jsonl", &FitOptions::default()).unwrap();
        for fig in [fit_figure(&fit, 1), fit_curves_figure(&fit, 1)] {
            let all = labels(&fig);
            assert!(all.iter().all(|l| !l.contains("fitted")), "{all:?}");
            let lines: Vec<&String> = fig
                .panels
                .iter()
                .flat_map(|p| p.lines.iter().filter_map(|l| l.label.as_ref()))
                .collect();
            assert!(!lines.is_empty());
            for l in lines {
                assert!(l.contains("assumed sigma = 2 (not estimated)"), "{l}");
            }
        }
        // data that identify sigma keep the word "fitted" and say nothing is assumed
        let counts: Vec<(usize, usize)> = (0..60).map(|i| (i % 9, 8)).collect();
        let model = ModelSamples::from_counts("m", &counts);
        let fit = fit_models(&[&model], "ok.jsonl", &FitOptions::default()).unwrap();
        assert!(assumed_parts(&fit, 0).is_empty());
        for fig in [fit_figure(&fit, 1), fit_curves_figure(&fit, 1)] {
            let all = labels(&fig);
            assert!(all.iter().all(|l| !l.contains("assumed")), "{all:?}");
            assert!(all[0].contains("fitted"), "{all:?}");
        }
    }
}
