//! Outputs of `evalsim sweep` and `evalsim merge`: one tidy table over the grid, the full JSON,
//! and per experiment a figure of headline quantities against the first swept field. Built from
//! a finished [`SweepOutput`] only, so a merged sweep renders byte for byte like an unsharded one.

use super::plot::{self, Figure, Line, Markers, Panel};
use super::tables::{check_fields, Csv, CHECK_COLUMNS};
use super::{Artifact, ReportError};
use crate::experiments::sweep::SweepOutput;

/// Most panels (quantities) drawn per experiment; every quantity is in `sweep.csv`.
pub const MAX_PANELS: usize = 6;
/// Most lines in one panel (the palette's eight colours); longer lists are spread.
pub const MAX_LINES: usize = 8;

/// `sweep.csv`: one row per cell and check, the swept values first.
pub fn sweep_csv(s: &SweepOutput) -> String {
    let mut header: Vec<&str> = s.manifest.grid.iter().map(|(p, _)| p.as_str()).collect();
    header.extend(CHECK_COLUMNS);
    let mut csv = Csv::new(&header);
    for c in &s.cells {
        for ch in &c.checks {
            let mut row = c.values.clone();
            row.extend(check_fields(
                [&ch.experiment, &ch.quantity, &ch.cell],
                ch.values.clone(),
                &ch.estimate(),
            ));
            csv.row(row);
        }
    }
    csv.finish()
}

fn value(s: &str) -> f64 {
    s.parse().unwrap_or(f64::NAN)
}

/// The names `--plot` accepts for this sweep: every quantity, and every `EXPERIMENT:QUANTITY`.
pub fn plot_names(s: &SweepOutput) -> Vec<String> {
    plot_names_of(
        s.cells
            .iter()
            .flat_map(|c| &c.checks)
            .map(|ch| (ch.experiment.as_str(), ch.quantity.as_str())),
    )
}

/// The names `--plot` accepts for checks of these `(experiment, quantity)` pairs.
pub fn plot_names_of<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for (experiment, quantity) in pairs {
        for n in [quantity.to_string(), format!("{experiment}:{quantity}")] {
            if !names.contains(&n) {
                names.push(n);
            }
        }
    }
    names
}

/// Checks the names given to `--plot` against the sweep's quantities.
///
/// # Errors
/// A message naming the first unknown name and listing the valid ones.
pub fn check_plot_names(s: &SweepOutput, wanted: &[String]) -> Result<(), String> {
    check_plot_names_in(&plot_names(s), wanted)
}

/// Checks the names given to `--plot` against `valid` (from [`plot_names_of`]).
///
/// # Errors
/// A message naming the first unknown name and listing the valid ones.
pub fn check_plot_names_in(valid: &[String], wanted: &[String]) -> Result<(), String> {
    let quantities = || {
        valid
            .iter()
            .filter(|n| !n.contains(':'))
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(", ")
    };
    if wanted.is_empty() {
        return Err(format!(
            "--plot: give at least one quantity; valid quantities: {}",
            quantities()
        ));
    }
    match wanted.iter().find(|w| !valid.contains(w)) {
        None => Ok(()),
        Some(bad) => Err(format!(
            "--plot {bad:?}: no such quantity in this sweep; valid quantities: {} (or EXPERIMENT:QUANTITY for one experiment's, e.g. {:?})",
            quantities(),
            valid.iter().find(|n| n.contains(':')).map_or("", String::as_str)
        )),
    }
}

/// Splits the text of `--plot` (comma-separated quantity names) into names.
pub fn parse_plot(text: &str) -> Vec<String> {
    text.split(',')
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .collect()
}

/// One figure per experiment: up to [`MAX_PANELS`] of its quantities (spread over its list)
/// against the first swept field, one line per combination of the other fields; exact values as
/// lines, simulated ones as points with 95% intervals.
pub fn sweep_figures(s: &SweepOutput) -> Vec<(String, Figure)> {
    sweep_figures_of(s, None)
}

/// [`sweep_figures`] with the panels chosen by `--plot`: only checks whose quantity (or
/// `experiment:quantity`) is listed; those that change across the grid first. Experiments with
/// none of the listed quantities get no figure.
pub fn sweep_figures_of(s: &SweepOutput, plot: Option<&[String]>) -> Vec<(String, Figure)> {
    let Some((xpath, _)) = s.manifest.grid.first() else {
        return Vec::new();
    };
    let mut experiments: Vec<&str> = Vec::new();
    for c in &s.cells {
        for ch in &c.checks {
            if !experiments.contains(&ch.experiment.as_str()) {
                experiments.push(&ch.experiment);
            }
        }
    }
    let series_label = |values: &[String]| -> String {
        s.manifest
            .grid
            .iter()
            .zip(values)
            .skip(1)
            .map(|((p, _), v)| format!("{p}={v}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out = Vec::new();
    for exp in experiments {
        // The j-th check of the experiment is the same quantity in every cell (the cell text
        // may name a swept value, so it is not the key); the title keeps the words all cells share.
        let per_cell: Vec<Vec<&crate::experiments::sweep::StoredCheck>> = s
            .cells
            .iter()
            .map(|c| c.checks.iter().filter(|ch| ch.experiment == exp).collect())
            .collect();
        let count = per_cell.iter().map(Vec::len).max().unwrap_or(0);
        let title_of = |j: usize| -> String {
            let mut first: Option<(String, Vec<String>)> = None;
            for checks in &per_cell {
                if let Some(ch) = checks.get(j) {
                    let words: Vec<String> = ch.cell.split(' ').map(str::to_string).collect();
                    first = Some(match first {
                        None => (ch.quantity.clone(), words),
                        Some((q, w)) => (q, w.into_iter().filter(|x| words.contains(x)).collect()),
                    });
                }
            }
            first.map_or_else(String::new, |(q, w)| format!("{q} [{}]", w.join(" ")))
        };
        // Quantities that change across the grid by more than their Monte Carlo error (1.96
        // times the largest standard error) come first; flat ones only fill free panels.
        // `among`: only the cells of one series (the other fields fixed), or every cell.
        let changes_among = |j: usize, among: Option<&str>| -> bool {
            let (mut lo, mut hi, mut se) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
            for ch in s
                .cells
                .iter()
                .zip(&per_cell)
                .filter(|(c, _)| among.is_none_or(|l| series_label(&c.values) == l))
                .filter_map(|(_, checks)| checks.get(j))
            {
                let e = ch.estimate();
                let v = if e.exact.is_finite() { e.exact } else { e.sim };
                if v.is_finite() {
                    (lo, hi) = (lo.min(v), hi.max(v));
                }
                if e.se.is_finite() {
                    se = se.max(e.se);
                }
            }
            hi - lo > (1.96 * se).max(1e-12 * hi.abs().max(lo.abs()))
        };
        let mut series: Vec<String> = Vec::new();
        for c in &s.cells {
            let l = series_label(&c.values);
            if !series.contains(&l) {
                series.push(l);
            }
        }
        // What changes along x within a series comes first: that is the swept effect the
        // panel shows; what changes only between series fills the rest.
        let along_x = |j: usize| series.iter().any(|l| changes_among(j, Some(l)));
        let changes = |j: usize| changes_among(j, None);
        let quantity_of = |j: usize| -> &str {
            per_cell
                .iter()
                .find_map(|c| c.get(j))
                .map_or("", |ch| ch.quantity.as_str())
        };
        let wanted = |j: &usize| {
            plot.is_none_or(|names| {
                let q = quantity_of(*j);
                names.iter().any(|n| n == q || *n == format!("{exp}:{q}"))
            })
        };
        let (moving, flat): (Vec<usize>, Vec<usize>) =
            (0..count).filter(wanted).partition(|&j| changes(j));
        let spread = |v: &[usize], m: usize| -> Vec<usize> {
            if v.len() <= m {
                v.to_vec()
            } else {
                (0..m)
                    .map(|i| v[i * (v.len() - 1) / (m - 1).max(1)])
                    .collect()
            }
        };
        let (on_x, between): (Vec<usize>, Vec<usize>) =
            moving.iter().copied().partition(|&j| along_x(j));
        // Quantities in order of interest: those that change along x, then between series,
        // then (when chosen by --plot, or when nothing changes) flat ones.
        let mut candidates: Vec<usize> = on_x.iter().chain(&between).copied().collect();
        if plot.is_some() || candidates.is_empty() {
            candidates.extend(&flat);
        }
        let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
        for &j in &candidates {
            let q = quantity_of(j).to_string();
            if !groups.iter().any(|(g, _)| *g == q) {
                groups.push((q, Vec::new()));
            }
        }
        let limit = if plot.is_none() && on_x.is_empty() && between.is_empty() {
            MAX_PANELS.min(2)
        } else {
            MAX_PANELS
        };
        groups.truncate(limit);
        if groups.is_empty() {
            continue;
        }
        // Every other check of a chosen quantity joins its panel, up to a readable number of
        // lines (spread over the list, as the panels are).
        // Lines that change across the grid come first; flat ones fill what room is left.
        for (q, js) in &mut groups {
            let of_q = |v: &[usize]| -> Vec<usize> {
                v.iter()
                    .copied()
                    .filter(|&j| quantity_of(j) == q.as_str())
                    .collect()
            };
            let lines = (MAX_LINES / series.len().max(1)).max(1);
            let mut chosen = spread(&of_q(&moving), lines);
            chosen.extend(spread(&of_q(&flat), lines - chosen.len()));
            chosen.sort_unstable();
            *js = chosen;
        }
        let words_of = |j: usize| -> Vec<String> {
            let t = title_of(j);
            let inner = t
                .rsplit_once(" [")
                .map_or("", |(_, w)| w.trim_end_matches(']'));
            inner
                .split(' ')
                .filter(|w| !w.is_empty())
                .map(str::to_string)
                .collect()
        };
        let panels: Vec<Panel> = groups
            .iter()
            .map(|(q, js)| {
                let q = q.as_str();
                let shared: Vec<String> = words_of(js[0])
                    .into_iter()
                    .filter(|w| js.iter().all(|&j| words_of(j).contains(w)))
                    .collect();
                let own = |j: usize| -> String {
                    words_of(j)
                        .into_iter()
                        .filter(|w| !shared.contains(w))
                        .collect::<Vec<_>>()
                        .join(" ")
                };
                let title = if shared.is_empty() {
                    q.to_string()
                } else {
                    format!("{q} [{}]", shared.join(" "))
                };
                // Scores, shares and their SDs (fractions) are drawn in percent, as everywhere.
                let percent = !q.contains("token")
                    && js.iter().all(|&j| {
                        per_cell.iter().filter_map(|c| c.get(j)).all(|ch| {
                            let e = ch.estimate();
                            [e.exact, e.sim]
                                .iter()
                                .all(|v| !v.is_finite() || (0.0..=1.0).contains(v))
                        })
                    });
                let scale = if percent { 100.0 } else { 1.0 };
                let y_label = if percent {
                    format!("{q} (%)")
                } else {
                    q.to_string()
                };
                let mut p = Panel::new(title, xpath.as_str(), y_label);
                let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
                let (mut xlo, mut xhi) = (f64::INFINITY, f64::NEG_INFINITY);
                let mut colour = 0;
                for &j in js {
                    let cell_label = own(j);
                    for label in &series {
                        let mut line = Vec::new();
                        let mut marks = Vec::new();
                        for (c, checks) in s.cells.iter().zip(&per_cell) {
                            if &series_label(&c.values) != label {
                                continue;
                            }
                            let x = value(&c.values[0]);
                            if let Some(ch) = checks.get(j) {
                                let mut e = ch.estimate();
                                for v in [&mut e.exact, &mut e.sim, &mut e.ci_low, &mut e.ci_high] {
                                    *v *= scale;
                                }
                                xlo = xlo.min(x);
                                xhi = xhi.max(x);
                                for v in [e.exact, e.ci_low, e.ci_high] {
                                    if v.is_finite() {
                                        lo = lo.min(v);
                                        hi = hi.max(v);
                                    }
                                }
                                if e.exact.is_finite() {
                                    line.push((x, e.exact));
                                }
                                if e.sim.is_finite() && e.se.is_finite() {
                                    marks.push((x, e.sim, e.ci_low, e.ci_high));
                                }
                            }
                        }
                        line.sort_by(|a, b| a.0.total_cmp(&b.0));
                        // One line needs no legend; several are named by what differs: the
                        // check's own cell words and the other swept fields.
                        let name = [cell_label.as_str(), label.as_str()]
                            .iter()
                            .filter(|t| !t.is_empty())
                            .copied()
                            .collect::<Vec<_>>()
                            .join(", ");
                        p.lines.push(Line {
                            label: (!name.is_empty()).then_some(name),
                            color: colour,
                            dashed: false,
                            points: line,
                        });
                        p.markers.push(Markers {
                            label: None,
                            color: colour,
                            points: marks,
                        });
                        colour += 1;
                    }
                }
                if !(lo.is_finite() && hi.is_finite()) {
                    (lo, hi) = (0.0, 1.0);
                }
                let pad = ((hi - lo) * 0.08).max(1e-9 + hi.abs() * 0.02);
                // A quantity that cannot be negative gets no negative axis.
                let floor = if lo >= 0.0 { 0.0 } else { f64::NEG_INFINITY };
                p.y_range = ((lo - pad).max(floor), hi + pad);
                if !(xlo.is_finite() && xhi.is_finite()) {
                    (xlo, xhi) = (0.0, 1.0);
                }
                let xpad = ((xhi - xlo) * 0.05).max(0.5 * (xhi - xlo == 0.0) as u8 as f64);
                p.x_range = (xlo - xpad, xhi + xpad);
                let xs: Vec<f64> = s
                    .manifest
                    .grid
                    .first()
                    .map(|(_, v)| v.iter().map(|x| value(x)).collect())
                    .unwrap_or_default();
                if xs.len() <= 12 {
                    p.x_ticks = Some(xs);
                }
                p
            })
            .collect();
        let columns = panels.len().clamp(1, 3);
        let rows = panels.len().div_ceil(columns).max(1) as u32;
        let drawn: usize = groups.iter().map(|(_, js)| js.len()).sum();
        let shown = if count > drawn {
            format!(
                " ({drawn} of {count} values, {} change across the grid; all in sweep.csv)",
                moving.len()
            )
        } else {
            String::new()
        };
        out.push((
            format!("sweep-{exp}"),
            Figure {
                title: format!(
                    "{exp} across the sweep{shown} · scenario {} · seed {}",
                    s.manifest.scenario, s.manifest.seed
                ),
                panels,
                columns,
                // A lone panel gets room for the figure's title.
                size: ((560 * columns as u32).max(840), 60 + 440 * rows),
            },
        ));
    }
    out
}

/// Every output of a whole sweep: `sweep.csv`, `sweep.json` and the figures.
///
/// # Errors
/// [`ReportError`] when a figure or JSON document cannot be produced.
pub fn render_sweep(s: &SweepOutput, figures: bool) -> Result<Vec<Artifact>, ReportError> {
    render_sweep_of(s, figures, None)
}

/// [`render_sweep`] with the figures' panels chosen by `--plot` (names checked by
/// [`check_plot_names`] first).
///
/// # Errors
/// [`ReportError`] when a figure or JSON document cannot be produced.
pub fn render_sweep_of(
    s: &SweepOutput,
    figures: bool,
    plot: Option<&[String]>,
) -> Result<Vec<Artifact>, ReportError> {
    let mut out = vec![
        Artifact {
            file: "sweep.csv".into(),
            bytes: sweep_csv(s).into_bytes(),
        },
        Artifact {
            file: "sweep.json".into(),
            bytes: super::json("sweep.json", s)?,
        },
    ];
    if figures {
        use rayon::prelude::*;
        let drawn = sweep_figures_of(s, plot)
            .par_iter()
            .map(|(stem, fig)| plot::render_both(fig).map(|(png, svg)| (stem.clone(), png, svg)))
            .collect::<Result<Vec<_>, _>>()?;
        for (stem, png, svg) in drawn {
            out.push(Artifact {
                file: format!("{stem}.png"),
                bytes: png,
            });
            out.push(Artifact {
                file: format!("{stem}.svg"),
                bytes: svg.into_bytes(),
            });
        }
    }
    Ok(out)
}

/// A shard's one file, `shard-I-of-N.json`.
///
/// # Errors
/// [`ReportError::Json`] when it cannot be serialised.
pub fn render_shard(s: &SweepOutput) -> Result<Artifact, ReportError> {
    let [i, n] = s.shard.unwrap_or([0, 1]);
    let file = format!("shard-{i}-of-{n}.json");
    Ok(Artifact {
        bytes: super::json(&file, s)?,
        file,
    })
}
