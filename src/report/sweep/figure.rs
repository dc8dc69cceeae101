//! One sweep figure per experiment: which of its quantities get a panel, which checks a panel
//! draws, and each panel's lines, ranges and labels. Built from a finished sweep's stored checks
//! only; no statistics beyond choosing what moves (exact values against 1.96 standard errors).

use super::super::plot::{self, Figure, Line, Markers, Panel};
use super::{cell_quantity, field_words, fields_moving, grid_pick, value, MAX_LINES, MAX_PANELS};
use crate::experiments::sweep::{StoredCheck, SweepCell, SweepOutput};

/// One experiment of a sweep as the figure sees it: the cells along the x axis (fields that
/// move nothing held at their first value), each cell's checks of the experiment, and the
/// series the other moving fields make.
struct View<'a> {
    s: &'a SweepOutput,
    exp: &'a str,
    /// The swept field on the x axis: the first that moves the experiment.
    xi: usize,
    moves: Vec<bool>,
    cells: Vec<&'a SweepCell>,
    /// The j-th check of the experiment is the same quantity in every cell (the cell text may
    /// name a swept value, so it is not the key).
    per_cell: Vec<Vec<&'a StoredCheck>>,
    /// Series labels (`field=value, ...` of the other moving fields), in cell order.
    series: Vec<String>,
    /// The most checks any cell has.
    count: usize,
}

impl<'a> View<'a> {
    fn new(s: &'a SweepOutput, exp: &'a str, moves: Vec<bool>) -> Self {
        // The x axis is the first swept field that moves the experiment; fields that move
        // nothing are held at their first value (their cells repeat the same numbers), and the
        // other moving fields name the lines.
        let xi = moves.iter().position(|&m| m).unwrap_or(0);
        let held =
            |c: &&SweepCell| {
                s.manifest.grid.iter().enumerate().all(|(fi, (_, vals))| {
                    fi == xi || moves[fi] || vals.first() == c.values.get(fi)
                })
            };
        let cells: Vec<&SweepCell> = s.cells.iter().filter(held).collect();
        let per_cell: Vec<Vec<&StoredCheck>> = cells
            .iter()
            .map(|c| c.checks.iter().filter(|ch| ch.experiment == exp).collect())
            .collect();
        let count = per_cell.iter().map(Vec::len).max().unwrap_or(0);
        let mut view = View {
            s,
            exp,
            xi,
            moves,
            cells,
            per_cell,
            series: Vec::new(),
            count,
        };
        for c in &view.cells {
            let l = view.series_label(&c.values);
            if !view.series.contains(&l) {
                view.series.push(l);
            }
        }
        view
    }

    fn series_label(&self, values: &[String]) -> String {
        self.s
            .manifest
            .grid
            .iter()
            .zip(values)
            .enumerate()
            .filter(|(fi, _)| *fi != self.xi && self.moves[*fi])
            .map(|(_, ((p, _), v))| format!("{}={v}", field_words(p)))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The j-th check of every cell that has one, in cell order.
    fn checks(&self, j: usize) -> impl Iterator<Item = &&'a StoredCheck> + '_ {
        self.per_cell.iter().filter_map(move |c| c.get(j))
    }

    /// The j-th check's title: its quantity and the cell words all cells share.
    fn title_of(&self, j: usize) -> String {
        let mut first: Option<(String, Vec<String>)> = None;
        for ch in self.checks(j) {
            let words: Vec<String> = ch.cell.split(' ').map(str::to_string).collect();
            first = Some(match first {
                None => (ch.quantity.clone(), words),
                Some((q, w)) => (q, w.into_iter().filter(|x| words.contains(x)).collect()),
            });
        }
        first.map_or_else(String::new, |(q, w)| format!("{q} [{}]", w.join(" ")))
    }

    /// The shared cell words of [`View::title_of`], one per entry.
    fn words_of(&self, j: usize) -> Vec<String> {
        let t = self.title_of(j);
        let inner = t
            .rsplit_once(" [")
            .map_or("", |(_, w)| w.trim_end_matches(']'));
        inner
            .split(' ')
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect()
    }

    /// Whether the j-th quantity changes by more than its Monte Carlo error (1.96 times the
    /// largest standard error) among the cells of one series (`among`), or every cell.
    fn changes_among(&self, j: usize, among: Option<&str>) -> bool {
        let (mut lo, mut hi, mut se) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
        for ch in self
            .cells
            .iter()
            .zip(&self.per_cell)
            .filter(|(c, _)| among.is_none_or(|l| self.series_label(&c.values) == l))
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
    }

    /// What changes along x within a series: the swept effect a panel shows.
    fn along_x(&self, j: usize) -> bool {
        self.series.iter().any(|l| self.changes_among(j, Some(l)))
    }

    /// The j-th quantity's name across the cells (it may change with the cell: n@k under a
    /// sweep of `submissions`; see [`cell_quantity`]).
    fn quantity_of(&self, j: usize) -> String {
        let mut names: Vec<&str> = Vec::new();
        for ch in self.checks(j) {
            if !names.contains(&ch.quantity.as_str()) {
                names.push(&ch.quantity);
            }
        }
        cell_quantity(&names)
    }

    /// Whether `--plot` (if given) names the j-th quantity, alone or as `experiment:quantity`.
    fn wanted(&self, j: usize, plot: Option<&[String]>) -> bool {
        plot.is_none_or(|names| {
            let each: Vec<String> = self
                .checks(j)
                .map(|ch| ch.quantity.clone())
                .chain([self.quantity_of(j)])
                .collect();
            each.iter().any(|q| {
                names
                    .iter()
                    .any(|n| n == q || *n == format!("{}:{q}", self.exp))
            })
        })
    }

    /// Whether every value of the checks `js` is a fraction (drawn in percent).
    fn fractions(&self, js: &[usize]) -> bool {
        js.iter().all(|&j| {
            self.checks(j).all(|ch| {
                let e = ch.estimate();
                [e.exact, e.sim]
                    .iter()
                    .all(|v| !v.is_finite() || (0.0..=1.0).contains(v))
            })
        })
    }
}

/// The panels chosen for one experiment: each quantity with the checks it draws, and how many
/// checks change across the grid.
struct Choice {
    groups: Vec<(String, Vec<usize>)>,
    moving: usize,
}

/// Quantities in order of interest: those that change along x, then between series, then (when
/// chosen by `--plot`, or when nothing changes) flat ones; every other check of a chosen quantity
/// joins its panel, up to a readable number of lines (spread over the list, as the panels are),
/// changing ones first. `None` when no quantity is left.
fn choose(v: &View, plot: Option<&[String]>) -> Option<Choice> {
    let (moving, flat): (Vec<usize>, Vec<usize>) = (0..v.count)
        .filter(|&j| v.wanted(j, plot))
        .partition(|&j| v.changes_among(j, None));
    let (on_x, between): (Vec<usize>, Vec<usize>) =
        moving.iter().copied().partition(|&j| v.along_x(j));
    let mut candidates: Vec<usize> = on_x.iter().chain(&between).copied().collect();
    if plot.is_some() || candidates.is_empty() {
        candidates.extend(&flat);
    }
    let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
    for &j in &candidates {
        let q = v.quantity_of(j);
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
        return None;
    }
    let words_of = |j: usize| v.words_of(j);
    for (q, js) in &mut groups {
        let of_q = |list: &[usize]| -> Vec<usize> {
            list.iter()
                .copied()
                .filter(|&j| v.quantity_of(j) == *q)
                .collect()
        };
        let lines = (MAX_LINES / v.series.len().max(1)).max(1);
        let mut chosen = grid_pick(&of_q(&moving), &words_of, lines);
        chosen.extend(grid_pick(&of_q(&flat), &words_of, lines - chosen.len()));
        chosen.sort_unstable();
        *js = chosen;
    }
    Some(Choice {
        groups,
        moving: moving.len(),
    })
}

/// The smallest and largest values seen: (y low, y high, x low, x high).
type Bounds = (f64, f64, f64, f64);

/// One line (exact values) and one set of markers (simulated values with 95% intervals) per
/// chosen check and series, values multiplied by `scale`; named by what differs (the check's
/// own cell words and the other swept fields). Returns the values' bounds.
fn draw_series(
    v: &View,
    p: &mut Panel,
    js: &[usize],
    own: &dyn Fn(usize) -> String,
    scale: f64,
) -> Bounds {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    let (mut xlo, mut xhi) = (f64::INFINITY, f64::NEG_INFINITY);
    let mut colour = 0;
    for &j in js {
        let cell_label = own(j);
        for label in &v.series {
            let mut line = Vec::new();
            let mut marks = Vec::new();
            for (c, checks) in v.cells.iter().zip(&v.per_cell) {
                if &v.series_label(&c.values) != label {
                    continue;
                }
                let x = value(&c.values[v.xi]);
                if let Some(ch) = checks.get(j) {
                    let mut e = ch.estimate();
                    for val in [&mut e.exact, &mut e.sim, &mut e.ci_low, &mut e.ci_high] {
                        *val *= scale;
                    }
                    xlo = xlo.min(x);
                    xhi = xhi.max(x);
                    for val in [e.exact, e.ci_low, e.ci_high] {
                        if val.is_finite() {
                            lo = lo.min(val);
                            hi = hi.max(val);
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
            // One line needs no legend; several are named by what differs.
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
    (lo, hi, xlo, xhi)
}

/// The panel of quantity `q` drawing checks `js`: its title (the quantity and the cell words its
/// checks share), units (fractions in percent, their SDs, SEs and gaps in points), lines and
/// ranges (no negative axis for what cannot be negative, none past 100%).
fn panel(v: &View, q: &str, js: &[usize]) -> Panel {
    let shared: Vec<String> = v
        .words_of(js[0])
        .into_iter()
        .filter(|w| js.iter().all(|&j| v.words_of(j).contains(w)))
        .collect();
    let own = |j: usize| -> String {
        v.words_of(j)
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
    let percent = !q.contains("token") && v.fractions(js);
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
    let xpath = &v.s.manifest.grid[v.xi].0;
    let mut p = Panel::new(title, field_words(xpath), y_label);
    let (mut lo, mut hi, mut xlo, mut xhi) = draw_series(v, &mut p, js, &own, scale);
    if !(lo.is_finite() && hi.is_finite()) {
        (lo, hi) = (0.0, 1.0);
    }
    let pad = ((hi - lo) * 0.08).max(1e-9 + hi.abs() * 0.02);
    let floor = if lo >= 0.0 { 0.0 } else { f64::NEG_INFINITY };
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
    let xs: Vec<f64> = v.s.manifest.grid[v.xi].1.iter().map(|x| value(x)).collect();
    if xs.len() <= 12 {
        p.x_ticks = Some(xs);
    }
    p
}

/// Panels whose lines are the same series say so once: the first keeps the legend.
fn share_legends(panels: &mut [Panel]) {
    let labels =
        |p: &Panel| -> Vec<Option<String>> { p.lines.iter().map(|l| l.label.clone()).collect() };
    if panels.len() > 1 && panels.iter().all(|p| labels(p) == labels(&panels[0])) {
        for p in panels.iter_mut().skip(1) {
            for l in &mut p.lines {
                l.label = None;
            }
        }
    }
}

/// Experiment `exp`'s figure, `sweep-EXP`: up to [`MAX_PANELS`] quantities against the first
/// swept field that moves it. `None` when nothing is left to draw (without `--plot`, an
/// experiment no field moves gets no figure).
pub(super) fn experiment_figure(
    s: &SweepOutput,
    exp: &str,
    plot: Option<&[String]>,
) -> Option<(String, Figure)> {
    let moves = fields_moving(s, exp);
    if plot.is_none() && !moves.contains(&true) {
        return None;
    }
    let v = View::new(s, exp, moves);
    let choice = choose(&v, plot)?;
    let mut panels: Vec<Panel> = choice
        .groups
        .iter()
        .map(|(q, js)| panel(&v, q, js))
        .collect();
    share_legends(&mut panels);
    let columns = plot::grid_columns(panels.len());
    let rows = panels.len().div_ceil(columns).max(1) as u32;
    let drawn: usize = choice.groups.iter().map(|(_, js)| js.len()).sum();
    let shown = if v.count > drawn {
        format!(
            " ({drawn} of {} values, {} change across the grid; all in sweep.csv)",
            v.count, choice.moving
        )
    } else {
        String::new()
    };
    Some((
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
    ))
}
