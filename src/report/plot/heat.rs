//! Heat maps ([`HeatFigure`]) and their colour bar.
use plotters::coord::Shift;
use plotters::prelude::*;

use super::*;

/// A heat map: one coloured, labelled cell per (column, row), with chosen cells outlined.
#[derive(Debug, Clone)]
pub struct HeatPanel {
    /// Caption above the chart.
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label.
    pub y_label: String,
    /// Column labels, left to right.
    pub columns: Vec<String>,
    /// Row labels, bottom to top.
    pub rows: Vec<String>,
    /// values[row][column], coloured from white (`range.0`) to blue (`range.1`).
    pub values: Vec<Vec<f64>>,
    /// Text drawn in each cell.
    pub labels: Vec<Vec<String>>,
    /// Cells drawn with a thick outline (e.g. those meeting a target).
    pub outlined: Vec<Vec<bool>>,
    /// Colour scale.
    pub range: (f64, f64),
    /// The colour bar's label, with units (e.g. "P(B <= A) (%)").
    pub scale_label: String,
    /// From values to the colour bar's tick labels (100 for fractions shown in percent).
    pub scale_factor: f64,
    /// A line of text under the chart (e.g. what the outline means).
    pub footnote: String,
}

/// A figure of heat maps laid out in a grid.
#[derive(Debug, Clone)]
pub struct HeatFigure {
    /// Title naming the scenario and seed.
    pub title: String,
    /// Panels, row by row.
    pub panels: Vec<HeatPanel>,
    /// Grid columns.
    pub columns: usize,
    /// Pixel size.
    pub size: (u32, u32),
}

/// Renders a heat-map figure to PNG bytes (its SVG rasterised, as [`render_png`]).
///
/// # Errors
/// [`PlotError`] when plotters, the SVG parser or the PNG encoder fails.
pub fn render_heat_png(fig: &HeatFigure, raster: super::Raster) -> Result<Vec<u8>, PlotError> {
    rasterise(&render_heat_svg(fig)?, fig.size, raster.scale).map_err(|e| PlotError {
        figure: fig.title.clone(),
        reason: e,
    })
}

/// Renders a heat-map figure to an SVG document.
///
/// # Errors
/// [`PlotError`] when plotters fails.
pub fn render_heat_svg(fig: &HeatFigure) -> Result<String, PlotError> {
    register_fonts();
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, fig.size).into_drawing_area();
        draw_heat(&root, fig)?;
        root.present().map_err(|x| PlotError {
            figure: fig.title.clone(),
            reason: format!("{x:?}"),
        })?;
    }
    Ok(out)
}

pub(super) fn draw_heat<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    fig: &HeatFigure,
) -> Result<(), PlotError> {
    let e = |x: &dyn std::fmt::Debug| PlotError {
        figure: fig.title.clone(),
        reason: format!("{x:?}"),
    };
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let body = root
        .titled(
            &fig.title,
            (FONT, TITLE_SIZE).into_font().style(FontStyle::Bold),
        )
        .map_err(|x| e(&x))?;
    let cols = fig.columns.max(1);
    let rows = fig.panels.len().div_ceil(cols).max(1);
    for (panel, area) in fig
        .panels
        .iter()
        .zip(body.split_evenly((rows, cols)).iter())
    {
        draw_heat_panel(area, panel).map_err(|x| e(&x))?;
    }
    Ok(())
}

pub(super) fn heat_colour(v: f64, (lo, hi): (f64, f64)) -> RGBColor {
    let t = if hi > lo {
        ((v - lo) / (hi - lo)).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let mix = |a: u8, b: u8| (f64::from(a) + t * (f64::from(b) - f64::from(a))).round() as u8;
    // White to the palette's blue.
    RGBColor(mix(255, 0x08), mix(255, 0x45), mix(255, 0x94))
}

pub(super) fn draw_heat_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    p: &HeatPanel,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let (nc, nr) = (p.columns.len().max(1), p.rows.len().max(1));
    let (plot_area, foot) = area.split_vertically(area.dim_in_pixel().1.saturating_sub(28));
    // The colour bar takes a strip on the right.
    let (plot_area, bar_area) =
        plot_area.split_horizontally(plot_area.dim_in_pixel().0.saturating_sub(COLOUR_BAR_W));
    let mut chart = ChartBuilder::on(&plot_area)
        .caption(&p.title, (FONT, CAPTION_SIZE))
        .margin(12)
        .x_label_area_size(48)
        .y_label_area_size(64)
        .build_cartesian_2d(
            TickAxis {
                lo: 0.0,
                hi: nc as f64,
                ticks: (0..nc).map(|i| i as f64 + 0.5).collect(),
            },
            TickAxis {
                lo: 0.0,
                hi: nr as f64,
                ticks: (0..nr).map(|i| i as f64 + 0.5).collect(),
            },
        )?;
    let label = |names: &[String], v: f64| {
        names
            .get(v.floor().max(0.0) as usize)
            .cloned()
            .unwrap_or_default()
    };
    let xfmt = |v: &f64| label(&p.columns, *v);
    let yfmt = |v: &f64| label(&p.rows, *v);
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc(p.x_label.as_str())
        .y_desc(p.y_label.as_str())
        .x_label_formatter(&xfmt)
        .y_label_formatter(&yfmt)
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 15))
        .draw()?;
    for (r, row) in p.values.iter().enumerate() {
        for (c, &v) in row.iter().enumerate() {
            let (x, y) = (c as f64, r as f64);
            chart.draw_series(std::iter::once(Rectangle::new(
                [(x, y), (x + 1.0, y + 1.0)],
                heat_colour(v, p.range).filled(),
            )))?;
            let dark = heat_colour(v, p.range).0 < 110;
            let colour = if dark { WHITE } else { BLACK };
            let text = p
                .labels
                .get(r)
                .and_then(|l| l.get(c))
                .cloned()
                .unwrap_or_default();
            let style = TextStyle::from((FONT, 14).into_font()).color(&colour).pos(
                plotters::style::text_anchor::Pos::new(
                    plotters::style::text_anchor::HPos::Center,
                    plotters::style::text_anchor::VPos::Center,
                ),
            );
            chart.draw_series(std::iter::once(Text::new(text, (x + 0.5, y + 0.5), style)))?;
        }
    }
    for (r, row) in p.outlined.iter().enumerate() {
        for (c, &on) in row.iter().enumerate() {
            if on {
                let (x, y) = (c as f64, r as f64);
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(x + 0.02, y + 0.02), (x + 0.98, y + 0.98)],
                    PALETTE[1].stroke_width(3),
                )))?;
            }
        }
    }
    foot.draw(&Text::new(
        p.footnote.clone(),
        (16, 4),
        (FONT, 13).into_font(),
    ))?;
    let (_, rows_px) = chart.plotting_area().get_pixel_range();
    let top = rows_px.start - bar_area.get_base_pixel().1;
    let bottom = rows_px.end - bar_area.get_base_pixel().1;
    draw_colour_bar(
        &bar_area,
        (p.range, p.scale_factor),
        &p.scale_label,
        COLOUR_BAR_W,
        (top, bottom),
    )
}

/// Width of a heat map's colour bar strip, in pixels.
pub(super) const COLOUR_BAR_W: u32 = 100;

/// A heat map's colour bar: its colours from `range.0` (bottom) to `range.1` (top) between
/// pixel rows `top` and `bottom` of `area` (a strip `width` pixels wide), ticks in display units
/// (the values times `scale_factor`) and `label` rotated beside them.
pub(crate) fn draw_colour_bar<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (range, scale_factor): ((f64, f64), f64),
    label: &str,
    width: u32,
    (top, bottom): (i32, i32),
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let (lo, hi) = range;
    if !(hi > lo && lo.is_finite() && hi.is_finite() && bottom > top) {
        return Ok(());
    }
    let (x0, x1) = (8, 26);
    let steps = 64;
    let height = f64::from(bottom - top);
    for i in 0..steps {
        let y_hi = bottom - (height * f64::from(i + 1) / f64::from(steps)).round() as i32;
        let y_lo = bottom - (height * f64::from(i) / f64::from(steps)).round() as i32;
        let v = lo + (hi - lo) * (f64::from(i) + 0.5) / f64::from(steps);
        area.draw(&Rectangle::new(
            [(x0, y_hi), (x1, y_lo)],
            heat_colour(v, range).filled(),
        ))?;
    }
    area.draw(&Rectangle::new(
        [(x0, top), (x1, bottom)],
        RGBColor(150, 150, 150).stroke_width(1),
    ))?;
    let f = scale_factor;
    let (ticks, decimals) = nice_ticks(lo * f, hi * f, 5);
    let style =
        TextStyle::from((FONT, 13).into_font()).pos(plotters::style::text_anchor::Pos::new(
            plotters::style::text_anchor::HPos::Left,
            plotters::style::text_anchor::VPos::Center,
        ));
    for t in ticks {
        let y = bottom - ((t / f - lo) / (hi - lo) * height).round() as i32;
        area.draw(&PathElement::new(
            vec![(x1, y), (x1 + 4, y)],
            RGBColor(100, 100, 100).stroke_width(1),
        ))?;
        area.draw(&Text::new(
            format_linear(t, decimals),
            (x1 + 7, y),
            style.clone(),
        ))?;
    }
    let label_style = TextStyle::from((FONT, 15).into_font())
        .transform(FontTransform::Rotate270)
        .pos(plotters::style::text_anchor::Pos::new(
            plotters::style::text_anchor::HPos::Center,
            plotters::style::text_anchor::VPos::Center,
        ));
    area.draw(&Text::new(
        label.to_string(),
        (width as i32 - 14, (top + bottom) / 2),
        label_style,
    ))?;
    Ok(())
}
