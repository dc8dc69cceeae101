//! Drawing a [`Figure`] onto a backend: the title, one cell per panel, its axes, series and legend.
use plotters::coord::Shift;
use plotters::prelude::*;

use super::*;

pub(super) fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    fig: &Figure,
    lay: &Layout,
) -> Result<(), PlotError> {
    root.fill(&WHITE).map_err(|e| err(fig, e))?;
    let font = (FONT, TITLE_SIZE).into_font().style(FontStyle::Bold);
    let body = {
        let h = text_size("Ag", TITLE_SIZE, true).1;
        let line_h = (f64::from(h) * 1.2).ceil() as i32;
        let block = title_lines_block(lay.title_lines.len());
        let (strip, body) = root.split_vertically(block);
        let style = TextStyle::from(font).pos(plotters::style::text_anchor::Pos::new(
            plotters::style::text_anchor::HPos::Center,
            plotters::style::text_anchor::VPos::Top,
        ));
        let mid = strip.dim_in_pixel().0 as i32 / 2;
        for (i, line) in lay.title_lines.iter().enumerate() {
            strip
                .draw(&Text::new(
                    line.clone(),
                    (mid, (h / 2).min(5) + line_h * i as i32),
                    style.clone(),
                ))
                .map_err(|e| err(fig, e))?;
        }
        body
    };
    let cols = fig.columns.max(1);
    let (cw, ch) = (lay.cell.0 + lay.right, lay.cell.1 + lay.below);
    for (i, (panel, pl)) in fig.panels.iter().zip(&lay.panels).enumerate() {
        let (r, c) = ((i / cols) as i32, (i % cols) as i32);
        let cell = body
            .clone()
            .shrink((c * cw, r * ch), (cw as u32, ch as u32));
        draw_panel(&cell, panel, pl, lay).map_err(|e| err(fig, e))?;
    }
    Ok(())
}

/// Radius in pixels of the hollow diamond of [`Points`]: a simulated dot (radius 3) fits inside.
pub(super) const DIAMOND: i32 = 7;

/// A hollow diamond centred at `at` (pixels).
pub(super) fn diamond(at: (i32, i32), c: RGBColor) -> PathElement<(i32, i32)> {
    let (x, y) = at;
    PathElement::new(
        vec![
            (x, y - DIAMOND),
            (x + DIAMOND, y),
            (x, y + DIAMOND),
            (x - DIAMOND, y),
            (x, y - DIAMOND),
        ],
        c.stroke_width(2),
    )
}

/// A panel's chart in axis coordinates (the panel's scales applied).
type PanelChart<'a, DB> = ChartContext<'a, DB, Cartesian2d<TickAxis, TickAxis>>;

/// Ticks in axis coordinates with their labels.
type Ticks = Vec<(f64, String)>;

/// A panel's ticks in axis coordinates with their labels: x (the panel's own ticks and labels
/// when it has both) and y (over the data's range only, not the legend's headroom above it;
/// whole numbers only for an integer axis).
fn panel_ticks(p: &Panel, xr: (f64, f64), yr: (f64, f64)) -> (Ticks, Ticks) {
    let (xs, ys) = (p.x_scale, p.y_scale);
    let xt = match (&p.x_ticks, &p.x_tick_labels) {
        (Some(t), Some(l)) => t
            .iter()
            .zip(l)
            .filter(|(v, _)| v.is_finite() && **v >= xr.0 && **v <= xr.1)
            .map(|(&v, l)| (xs.to_axis(v), l.clone()))
            .collect(),
        _ => axis_ticks(xs, xr, p.x_ticks.as_deref(), 8),
    };
    let tick_range = (yr.0, p.y_tick_max.map_or(yr.1, |m| m.min(yr.1)));
    let mut yt = axis_ticks(ys, tick_range, None, 6);
    if p.y_integer {
        yt.retain(|t| ys.value_at(t.0).fract() == 0.0);
        for t in &mut yt {
            t.1 = format!("{}", ys.value_at(t.0));
        }
    }
    (xt, yt)
}

/// The panel's caption lines, centred at the top of its chart cell.
fn draw_caption<DB: DrawingBackend>(
    caption_area: &DrawingArea<DB, Shift>,
    pl: &PanelLayout,
    lay: &Layout,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let caption_style = TextStyle::from((FONT, CAPTION_SIZE).into_font()).pos(
        plotters::style::text_anchor::Pos::new(
            plotters::style::text_anchor::HPos::Center,
            plotters::style::text_anchor::VPos::Top,
        ),
    );
    let line_h = (CAPTION_SIZE * 1.25).ceil() as i32;
    for (i, line) in pl.caption.iter().enumerate() {
        caption_area.draw(&Text::new(
            line.clone(),
            (lay.cell.0 / 2, 10 + line_h * i as i32),
            caption_style.clone(),
        ))?;
    }
    Ok(())
}

fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Histogram bars, bands, vertical dashed lines and lines, in that order (later ones on top).
fn draw_shapes<DB: DrawingBackend>(
    chart: &mut PanelChart<'_, DB>,
    p: &Panel,
    yr: (f64, f64),
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let (xs, ys) = (p.x_scale, p.y_scale);
    let (y0, y1) = (ys.to_axis(yr.0), ys.to_axis(yr.1));
    for b in &p.bars {
        let c = color(b.color);
        chart.draw_series(b.bars.iter().map(|&(a, z, h)| {
            Rectangle::new(
                [
                    (xs.to_axis(a), ys.to_axis(0f64.max(yr.0))),
                    (xs.to_axis(z), ys.to_axis(h)),
                ],
                c.mix(0.35).filled(),
            )
        }))?;
    }
    for band in &p.bands {
        let c = color(band.color);
        let clamp = |y: f64| ys.to_axis(y.clamp(yr.0, yr.1));
        let mut outline: Vec<(f64, f64)> = band
            .points
            .iter()
            .map(|&(x, _, hi)| (xs.to_axis(x), clamp(hi)))
            .collect();
        outline.extend(
            band.points
                .iter()
                .rev()
                .map(|&(x, lo, _)| (xs.to_axis(x), clamp(lo))),
        );
        chart.draw_series(std::iter::once(Polygon::new(outline, c.mix(0.18).filled())))?;
    }
    for (x, ci, _) in &p.vlines {
        let c = color(*ci);
        chart.draw_series(DashedLineSeries::new(
            vec![(xs.to_axis(*x), y0), (xs.to_axis(*x), y1)],
            6,
            4,
            c.stroke_width(1),
        ))?;
    }
    for line in &p.lines {
        let c = color(line.color);
        let pts: Vec<(f64, f64)> = line
            .points
            .iter()
            .map(|&(x, y)| (xs.to_axis(x), ys.to_axis(y)))
            .collect();
        let style = c.stroke_width(2);
        if line.dashed {
            chart.draw_series(DashedLineSeries::new(pts, 8, 5, style))?;
        } else {
            chart.draw_series(LineSeries::new(pts, style))?;
        }
    }
    Ok(())
}

/// Simulated points with their 95% intervals (an interval end beyond the frame: a triangle at
/// the frame pointing out), then the hollow diamonds of [`Points`].
fn draw_marks<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    chart: &mut PanelChart<'_, DB>,
    p: &Panel,
    yr: (f64, f64),
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let (xs, ys) = (p.x_scale, p.y_scale);
    for m in &p.markers {
        let c = color(m.color);
        for &(x, _, lo, hi) in &m.points {
            let (ax, alo, ahi) = (
                xs.to_axis(x),
                ys.to_axis(lo.max(yr.0)),
                ys.to_axis(hi.min(yr.1)),
            );
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(ax, alo), (ax, ahi)],
                c.stroke_width(1),
            )))?;
            let (px, py) = chart.backend_coord(&(ax, ys.to_axis(yr.1)));
            let (_, pb) = chart.backend_coord(&(ax, ys.to_axis(yr.0)));
            let base = area.get_base_pixel();
            let (px, py, pb) = (px - base.0, py - base.1, pb - base.1);
            if hi > yr.1 && hi.is_finite() {
                area.draw(&Polygon::new(
                    vec![(px, py - 1), (px - 4, py + 7), (px + 4, py + 7)],
                    c.filled(),
                ))?;
            }
            if lo < yr.0 && lo.is_finite() {
                area.draw(&Polygon::new(
                    vec![(px, pb + 1), (px - 4, pb - 7), (px + 4, pb - 7)],
                    c.filled(),
                ))?;
            }
        }
        chart.draw_series(
            m.points
                .iter()
                .map(|&(x, y, _, _)| Circle::new((xs.to_axis(x), ys.to_axis(y)), 3, c.filled())),
        )?;
    }
    for q in &p.points {
        let c = color(q.color);
        for &(x, y) in &q.points {
            if !(x.is_finite() && y.is_finite()) {
                continue;
            }
            let (px, py) = chart.backend_coord(&(xs.to_axis(x), ys.to_axis(y)));
            let base = area.get_base_pixel();
            area.draw(&diamond((px - base.0, py - base.1), c))?;
        }
    }
    Ok(())
}

/// One panel in its cell: caption, axes with their ticks and labels, shapes, marks, notes and
/// the legend where its layout put it.
pub(super) fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    p: &Panel,
    pl: &PanelLayout,
    lay: &Layout,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let (xs, ys) = (p.x_scale, p.y_scale);
    let (xr, yr) = (usable_range(xs, p.x_range), usable_range(ys, p.y_range));
    let (x0, x1) = (xs.to_axis(xr.0), xs.to_axis(xr.1));
    let (y0, y1) = (ys.to_axis(yr.0), ys.to_axis(yr.1));
    let (xt, yt) = panel_ticks(p, xr, yr);
    // The chart cell (caption, axes, plot) at the top left; the legend strips beside and under.
    let chart_cell = area
        .clone()
        .shrink((0, 0), (lay.cell.0 as u32, lay.cell.1 as u32));
    let (caption_area, plot_area) = chart_cell.split_vertically(lay.caption_h);
    draw_caption(&caption_area, pl, lay)?;
    let mut chart = ChartBuilder::on(&plot_area)
        .margin(CHART_MARGIN)
        .x_label_area_size(X_LABEL_AREA)
        .y_label_area_size(Y_LABEL_AREA)
        .build_cartesian_2d(
            TickAxis {
                lo: x0,
                hi: x1,
                ticks: xt.iter().map(|t| t.0).collect(),
            },
            TickAxis {
                lo: y0,
                hi: y1,
                ticks: yt.iter().map(|t| t.0).collect(),
            },
        )?;
    let name = |ticks: &[(f64, String)], v: f64| {
        ticks
            .iter()
            .find(|t| (t.0 - v).abs() <= 1e-9 * (1.0 + v.abs()))
            .map(|t| t.1.clone())
            .unwrap_or_default()
    };
    let xfmt = |v: &f64| name(&xt, *v);
    let yfmt = |v: &f64| name(&yt, *v);
    chart
        .configure_mesh()
        .x_desc(p.x_label.as_str())
        .y_desc(p.y_label.as_str())
        .x_label_formatter(&xfmt)
        .y_label_formatter(&yfmt)
        .x_labels(xt.len().max(1))
        .y_labels(yt.len().max(1))
        .max_light_lines(0)
        .bold_line_style(RGBColor(228, 228, 228))
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 15))
        .draw()?;
    draw_shapes(&mut chart, p, yr)?;
    draw_marks(area, &mut chart, p, yr)?;
    // The plot area's pixels relative to the panel's own area.
    let (px, py) = chart.plotting_area().get_pixel_range();
    let base = area.get_base_pixel();
    let (left, top) = (px.start - base.0, py.start - base.1);
    for (n, &(x, y)) in p.notes.iter().zip(&pl.notes) {
        area.draw(&Text::new(
            n.text.clone(),
            (left + x.round() as i32, top + y.round() as i32),
            (FONT, NOTE_FONT),
        ))?;
    }
    let at = match pl.legend {
        LegendAt::Nowhere => return Ok(()),
        LegendAt::Inside(x, y) => (left + x.round() as i32, top + y.round() as i32),
        LegendAt::Right => (lay.cell.0, top),
        LegendAt::Below => (left, lay.cell.1 + LEGEND_INSET / 2),
    };
    draw_legend(area, &pl.entries, at, pl.legend_size, &pl.legend_columns)
}
