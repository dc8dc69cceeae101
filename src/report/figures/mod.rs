//! The building blocks of the experiments' figures (each kind's figures are in
//! [`super::kinds`]): axes, levels and exact-and-simulated series. No statistics computed here.

use super::plot::{Figure, Line, Markers, Panel, Scale};
use crate::experiments::{Estimate, RunOutput};

/// A fraction in percent (points), for axes in percent.
pub(super) fn percent(x: f64) -> f64 {
    100.0 * x
}

pub(super) fn title(run: &RunOutput, what: &str) -> String {
    format!("{what} · scenario {} · seed {}", run.scenario, run.seed)
}

/// Adds one estimated series to a panel, in percent: the exact values as a solid line labelled
/// `line_label`, the simulated values as dots with their 95% CI bars labelled `dots_label`.
pub(super) fn exact_and_simulated(
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
pub(super) type RowSeries<T> = (&'static str, usize, fn(&T) -> Estimate);

/// One [`exact_and_simulated`] series per (label, colour, estimate of a row), against `x` of the
/// row: for results whose rows carry several estimates side by side.
pub(super) fn row_series<T, const N: usize>(
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
pub(super) fn exact_and_dots(points: &[(f64, Estimate)]) -> (XY, XYBars) {
    let line = points.iter().map(|(x, e)| (*x, percent(e.exact))).collect();
    let dots = points
        .iter()
        .map(|(x, e)| (*x, percent(e.sim), percent(e.ci_low), percent(e.ci_high)))
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
pub(super) fn padded_range(xs: &[f64], min_span: f64) -> (f64, f64) {
    let (lo, hi) = (
        xs.iter().copied().fold(f64::INFINITY, f64::min),
        xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    );
    let pad = 0.04 * (hi - lo).max(min_span);
    (lo - pad, hi + pad)
}

/// A figure of one panel titled with the run's scenario and seed.
pub(super) fn one_panel(run: &RunOutput, what: &str, p: Panel, size: (u32, u32)) -> Figure {
    Figure {
        title: title(run, what),
        panels: vec![p],
        columns: 1,
        size,
    }
}

/// Top of a percent axis: the largest value plus a 5% margin, rounded up to 5 points, at most 100.
pub(super) fn pct_top(max_fraction: f64) -> f64 {
    ((percent(max_fraction) * 1.05 / 5.0).ceil() * 5.0).clamp(5.0, 100.0)
}

pub(super) fn k_axis(p: &mut Panel, ks: &[u32]) {
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

pub(super) type XY = Vec<(f64, f64)>;
pub(super) type XYBars = Vec<(f64, f64, f64, f64)>;

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
