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
    if s.manifest.grid.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for exp in experiments(s) {
        // The x axis is the first swept field that moves the experiment; fields that move
        // nothing are held at their first value (their cells repeat the same numbers), and the
        // other moving fields name the lines.
        let moves = fields_moving(s, exp);
        if plot.is_none() && !moves.contains(&true) {
            continue;
        }
        let xi = moves.iter().position(|&m| m).unwrap_or(0);
        let xpath = &s.manifest.grid[xi].0;
        let held =
            |c: &&crate::experiments::sweep::SweepCell| {
                s.manifest.grid.iter().enumerate().all(|(fi, (_, vals))| {
                    fi == xi || moves[fi] || vals.first() == c.values.get(fi)
                })
            };
        let cells: Vec<&crate::experiments::sweep::SweepCell> =
            s.cells.iter().filter(held).collect();
        let series_label = |values: &[String]| -> String {
            s.manifest
                .grid
                .iter()
                .zip(values)
                .enumerate()
                .filter(|(fi, _)| *fi != xi && moves[*fi])
                .map(|(_, ((p, _), v))| format!("{}={v}", field_words(p)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        // The j-th check of the experiment is the same quantity in every cell (the cell text
        // may name a swept value, so it is not the key); the title keeps the words all cells share.
        let per_cell: Vec<Vec<&crate::experiments::sweep::StoredCheck>> = cells
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
            for ch in cells
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
            hi - lo > (crate::exact::normal::Z_95 * se).max(1e-12 * hi.abs().max(lo.abs()))
        };
        let mut series: Vec<String> = Vec::new();
        for c in &cells {
            let l = series_label(&c.values);
            if !series.contains(&l) {
                series.push(l);
            }
        }
        // What changes along x within a series comes first: that is the swept effect the
        // panel shows; what changes only between series fills the rest.
        let along_x = |j: usize| series.iter().any(|l| changes_among(j, Some(l)));
        let changes = |j: usize| changes_among(j, None);
        // A quantity's own name may change with the cell (n@k under a sweep of
        // `submissions`: 2@k, 3@k, ...): see [`cell_quantity`].
        let quantity_of = |j: usize| -> String {
            let mut names: Vec<&str> = Vec::new();
            for ch in per_cell.iter().filter_map(|c| c.get(j)) {
                if !names.contains(&ch.quantity.as_str()) {
                    names.push(&ch.quantity);
                }
            }
            cell_quantity(&names)
        };
        let wanted = |j: &usize| {
            plot.is_none_or(|names| {
                let q = quantity_of(*j);
                let each: Vec<String> = per_cell
                    .iter()
                    .filter_map(|c| c.get(*j))
                    .map(|ch| ch.quantity.clone())
                    .chain([q])
                    .collect();
                each.iter()
                    .any(|q| names.iter().any(|n| n == q || *n == format!("{exp}:{q}")))
            })
        };
        let (moving, flat): (Vec<usize>, Vec<usize>) =
            (0..count).filter(wanted).partition(|&j| changes(j));
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
            let q = quantity_of(j);
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
        // Every other check of a chosen quantity joins its panel, up to a readable number of
        // lines (spread over the list, as the panels are).
        // Lines that change across the grid come first; flat ones fill what room is left.
        for (q, js) in &mut groups {
            let of_q = |v: &[usize]| -> Vec<usize> {
                v.iter()
                    .copied()
                    .filter(|&j| quantity_of(j) == *q)
                    .collect()
            };
            let lines = (MAX_LINES / series.len().max(1)).max(1);
            let mut chosen = grid_pick(&of_q(&moving), &words_of, lines);
            chosen.extend(grid_pick(&of_q(&flat), &words_of, lines - chosen.len()));
            chosen.sort_unstable();
            *js = chosen;
        }
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
                // SDs, SEs and gaps of scores are differences of percentages: points.
                let spread = [" sd", "sd ", " se", "se ", "gap"]
                    .iter()
                    .any(|w| format!(" {} ", q.to_lowercase()).contains(w));
                let y_label = match (percent, spread) {
                    (true, true) => format!("{q} (points)"),
                    (true, false) => format!("{q} (%)"),
                    _ => q.to_string(),
                };
                let mut p = Panel::new(title, field_words(xpath), y_label);
                let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
                let (mut xlo, mut xhi) = (f64::INFINITY, f64::NEG_INFINITY);
                let mut colour = 0;
                for &j in js {
                    let cell_label = own(j);
                    for label in &series {
                        let mut line = Vec::new();
                        let mut marks = Vec::new();
                        for (c, checks) in cells.iter().zip(&per_cell) {
                            if &series_label(&c.values) != label {
                                continue;
                            }
                            let x = value(&c.values[xi]);
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
                // Nor does a percentage run past 100%.
                let ceiling = if percent && hi <= 100.0 {
                    100.0
                } else {
                    f64::INFINITY
                };
                p.y_range = ((lo - pad).max(floor), (hi + pad).min(ceiling));
                if !(xlo.is_finite() && xhi.is_finite()) {
                    (xlo, xhi) = (0.0, 1.0);
                }
                let xpad = ((xhi - xlo) * 0.05).max(0.5 * (xhi - xlo == 0.0) as u8 as f64);
                p.x_range = (xlo - xpad, xhi + xpad);
                let xs: Vec<f64> = s.manifest.grid[xi].1.iter().map(|x| value(x)).collect();
                if xs.len() <= 12 {
                    p.x_ticks = Some(xs);
                }
                p
            })
            .collect();
        // Panels whose lines are the same series say so once: the first keeps the legend.
        let mut panels = panels;
        let labels = |p: &Panel| -> Vec<Option<String>> {
            p.lines.iter().map(|l| l.label.clone()).collect()
        };
        if panels.len() > 1 && panels.iter().all(|p| labels(p) == labels(&panels[0])) {
            for p in panels.iter_mut().skip(1) {
                for l in &mut p.lines {
                    l.label = None;
                }
            }
        }
        let columns = super::plot::grid_columns(panels.len());
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

/// The name of the j-th quantity of an experiment across the cells, from its names in cell order:
/// the one name when the cells agree; `n@k` when they differ only in a leading whole number
/// (a sweep of `submissions`: `2@k`, `3@k`, ...; `2@k by verifier` gives `n@k by verifier`);
/// otherwise every name joined by " / ".
fn cell_quantity(names: &[&str]) -> String {
    if let [one] = names {
        return (*one).to_string();
    }
    let split = |q: &str| {
        let digits = q.bytes().take_while(u8::is_ascii_digit).count();
        (digits > 0).then(|| q[digits..].to_string())
    };
    let rests: Vec<Option<String>> = names.iter().map(|q| split(q)).collect();
    match rests.first() {
        Some(Some(rest)) if rests.iter().all(|r| r.as_deref() == Some(rest.as_str())) => {
            format!("n{rest}")
        }
        _ => names.join(" / "),
    }
}

/// At most `lines` of the checks `js`, chosen as a grid: each check's cell words of the form
/// `name=value` that not all of them share are its coordinates (`a=0.5 k=16`), and the
/// dimension with the most values loses values (its ends kept, the rest evenly spread) until the
/// product fits. So the lines are every chosen `a` at every chosen `k`, not arbitrary pairs.
fn grid_pick(js: &[usize], words_of: &dyn Fn(usize) -> Vec<String>, lines: usize) -> Vec<usize> {
    if js.len() <= lines {
        return js.to_vec();
    }
    if lines == 0 {
        return Vec::new();
    }
    let coords: Vec<Vec<(String, String)>> = js
        .iter()
        .map(|&j| {
            words_of(j)
                .into_iter()
                .filter_map(|w| {
                    w.split_once('=')
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                })
                .collect()
        })
        .collect();
    let mut dims: Vec<(String, Vec<String>)> = Vec::new();
    for c in &coords {
        for (k, v) in c {
            match dims.iter_mut().find(|(d, _)| d == k) {
                Some((_, vals)) if !vals.contains(v) => vals.push(v.clone()),
                Some(_) => {}
                None => dims.push((k.clone(), vec![v.clone()])),
            }
        }
    }
    let mut keep: Vec<Vec<String>> = dims.iter().map(|(_, v)| v.clone()).collect();
    let product = |keep: &[Vec<String>]| keep.iter().map(Vec::len).product::<usize>();
    while product(&keep) > lines {
        let Some(d) = (0..keep.len())
            .filter(|&d| keep[d].len() > 1)
            .max_by_key(|&d| (keep[d].len(), std::cmp::Reverse(d)))
        else {
            break;
        };
        let all = &dims[d].1;
        let m = keep[d].len() - 1;
        keep[d] = (0..m)
            .map(|i| all[i * (all.len() - 1) / (m - 1).max(1)].clone())
            .collect();
    }
    let inside = |c: &Vec<(String, String)>| {
        c.iter().all(|(k, v)| {
            dims.iter()
                .position(|(d, _)| d == k)
                .is_none_or(|d| keep[d].contains(v))
        })
    };
    let picked: Vec<usize> = js
        .iter()
        .zip(&coords)
        .filter(|(_, c)| inside(c))
        .map(|(&j, _)| j)
        .collect();
    if picked.len() <= lines {
        picked
    } else {
        (0..lines)
            .map(|i| picked[i * (picked.len() - 1) / (lines - 1).max(1)])
            .collect()
    }
}

/// The experiments of a sweep, in the order their checks first appear.
fn experiments(s: &SweepOutput) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for c in &s.cells {
        for ch in &c.checks {
            if !out.contains(&ch.experiment.as_str()) {
                out.push(&ch.experiment);
            }
        }
    }
    out
}

/// For each swept field, whether it moves experiment `exp`: two cells that differ only in that
/// field give a different exact value of one of its checks (beyond 1e-12 relative).
pub fn fields_moving(s: &SweepOutput, exp: &str) -> Vec<bool> {
    let exact = |c: &crate::experiments::sweep::SweepCell| -> Vec<f64> {
        c.checks
            .iter()
            .filter(|ch| ch.experiment == exp)
            .map(|ch| ch.estimate().exact)
            .collect()
    };
    let differ = |a: &[f64], b: &[f64]| {
        a.len() != b.len()
            || a.iter().zip(b).any(|(x, y)| {
                (x.is_finite() || y.is_finite())
                    && !(x == y || (x - y).abs() <= 1e-12 * x.abs().max(y.abs()))
            })
    };
    (0..s.manifest.grid.len())
        .map(|fi| {
            s.cells.iter().enumerate().any(|(i, a)| {
                s.cells[i + 1..].iter().any(|b| {
                    a.values
                        .iter()
                        .zip(&b.values)
                        .enumerate()
                        .all(|(fj, (x, y))| fj == fi || x == y)
                        && a.values.get(fi) != b.values.get(fi)
                        && differ(&exact(a), &exact(b))
                })
            })
        })
        .collect()
}

/// Per experiment, the swept fields that move none of its exact values (for a warning).
pub fn idle_fields(s: &SweepOutput) -> Vec<(String, Vec<String>)> {
    experiments(s)
        .into_iter()
        .filter_map(|exp| {
            let idle: Vec<String> = fields_moving(s, exp)
                .iter()
                .zip(&s.manifest.grid)
                .filter(|(m, _)| !**m)
                .map(|(_, (p, _))| p.clone())
                .collect();
            (!idle.is_empty()).then(|| (exp.to_string(), idle))
        })
        .collect()
}

/// A swept path in words for titles and axes: `model.long.attractor` -> "long: attractor",
/// `benchmark.sigma` -> "benchmark sigma", underscores as spaces.
pub fn field_words(path: &str) -> String {
    let words = |t: &str| t.replace('_', " ");
    match path.split('.').collect::<Vec<_>>().as_slice() {
        ["model", name, rest @ ..] if !rest.is_empty() => {
            format!("{name}: {}", words(&rest.join(" ")))
        }
        ["benchmark", rest @ ..] if !rest.is_empty() => {
            format!("benchmark {}", words(&rest.join(" ")))
        }
        _ => words(path),
    }
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

#[cfg(test)]
mod tests {
    use super::{cell_quantity, grid_pick};

    #[test]
    fn a_swept_submissions_named_its_panel_after_the_first_cell() {
        assert_eq!(cell_quantity(&["maj@k"]), "maj@k");
        assert_eq!(cell_quantity(&["2@k", "3@k", "10@k"]), "n@k");
        assert_eq!(
            cell_quantity(&["2@k by verifier", "5@k by verifier"]),
            "n@k by verifier"
        );
        assert_eq!(cell_quantity(&["2@k", "maj@k"]), "2@k / maj@k");
    }

    /// `attractor-sweep`'s checks `a=A k=K` for 5 shares and 7 k, in the order they are stored.
    fn words() -> Vec<Vec<String>> {
        let mut v = Vec::new();
        for a in ["0", "0.25", "0.5", "0.75", "0.9"] {
            for k in [1, 2, 4, 8, 16, 32, 64] {
                v.push(vec![
                    "model=long".to_string(),
                    format!("a={a}"),
                    format!("k={k}"),
                ]);
            }
        }
        v
    }

    #[test]
    fn sweep_lines_were_arbitrary_pairs_of_share_and_k() {
        let w = words();
        let js: Vec<usize> = (0..w.len()).collect();
        let of = |j: usize| w[j].clone();
        let picked = grid_pick(&js, &of, 8);
        assert!(picked.len() <= 8 && picked.len() >= 4, "{picked:?}");
        // Every kept share appears with every kept k: a full grid.
        let a: std::collections::BTreeSet<&str> =
            picked.iter().map(|&j| w[j][1].as_str()).collect();
        let k: std::collections::BTreeSet<&str> =
            picked.iter().map(|&j| w[j][2].as_str()).collect();
        assert_eq!(a.len() * k.len(), picked.len(), "{picked:?}");
        // The ends of each dimension are kept.
        for end in ["a=0", "a=0.9", "k=1", "k=64"] {
            assert!(a.contains(end) || k.contains(end), "{end} dropped");
        }
    }

    #[test]
    fn sweep_lines_fit_without_choice_are_all_kept() {
        let w = words();
        let js: Vec<usize> = (0..6).collect();
        assert_eq!(grid_pick(&js, &|j| w[j].clone(), 8), js);
        assert!(grid_pick(&js, &|j| w[j].clone(), 0).is_empty());
    }
}
