//! The two leaderboard figures, drawn with plotters in the style of [`super::plot`] (same font,
//! title and caption sizes, palette, PNG rasterised from the SVG): a forest plot (one row per
//! model, its score and interval, its rank interval in a column beside the chart) and a
//! triangular heat map of pairwise differences with the resolved cells outlined. Like every
//! renderer here, nothing is computed: each number drawn comes finished in the description.
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::FontStyle;

use super::plot::{
    draw_colour_bar, format_linear, nice_ticks, rasterise, register_fonts, PlotError, TickAxis,
    CAPTION_SIZE, FONT, PALETTE, TITLE_SIZE,
};

/// One row of a forest plot.
#[derive(Debug, Clone)]
pub struct ForestRow {
    /// The row's label (left of the chart).
    pub label: String,
    /// Point estimate, in axis units.
    pub estimate: f64,
    /// Interval, in axis units.
    pub low: f64,
    /// Interval, in axis units.
    pub high: f64,
    /// Text in the column right of the chart (e.g. the rank interval).
    pub side: String,
    /// Drawn in the palette's first colour (true) or grey (false).
    pub strong: bool,
}

/// A forest plot: rows top to bottom.
#[derive(Debug, Clone)]
pub struct ForestFigure {
    /// Figure title.
    pub title: String,
    /// Caption above the chart (what the bars and the side column are).
    pub caption: String,
    /// X axis label, with units.
    pub x_label: String,
    /// Header of the side column.
    pub side_header: String,
    /// X range in axis units.
    pub x_range: (f64, f64),
    /// Rows, top first.
    pub rows: Vec<ForestRow>,
    /// Pixel size.
    pub size: (u32, u32),
}

/// One cell of a triangular heat map.
#[derive(Debug, Clone)]
pub struct HeatCell {
    /// Row (0 = top).
    pub row: usize,
    /// Column (0 = left).
    pub column: usize,
    /// Value on the colour scale.
    pub value: f64,
    /// Text in the cell (may be empty).
    pub text: String,
    /// Outlined (e.g. resolved).
    pub outlined: bool,
}

/// A heat map of chosen cells on a grid of labelled rows and columns.
#[derive(Debug, Clone)]
pub struct TriangleHeat {
    /// Figure title.
    pub title: String,
    /// Caption above the chart.
    pub caption: String,
    /// Row labels, top first.
    pub rows: Vec<String>,
    /// Column labels, left first.
    pub columns: Vec<String>,
    /// X axis label.
    pub x_label: String,
    /// The cells drawn (others stay blank).
    pub cells: Vec<HeatCell>,
    /// Colour scale from white (`range.0`) to blue (`range.1`).
    pub range: (f64, f64),
    /// Label of the colour bar, with units.
    pub scale_label: String,
    /// A line under the chart.
    pub footnote: String,
    /// Pixel size.
    pub size: (u32, u32),
}

fn fail(title: &str, x: &dyn std::fmt::Debug) -> PlotError {
    PlotError {
        figure: title.to_string(),
        reason: format!("{x:?}"),
    }
}

/// Renders a forest plot as SVG.
///
/// # Errors
/// [`PlotError`] when plotters fails.
pub fn forest_svg(fig: &ForestFigure) -> Result<String, PlotError> {
    register_fonts();
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, fig.size).into_drawing_area();
        draw_forest(&root, fig).map_err(|x| fail(&fig.title, &x))?;
        root.present().map_err(|x| fail(&fig.title, &x))?;
    }
    Ok(out)
}

/// Renders a triangular heat map as SVG.
///
/// # Errors
/// [`PlotError`] when plotters fails.
pub fn heat_svg(fig: &TriangleHeat) -> Result<String, PlotError> {
    register_fonts();
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, fig.size).into_drawing_area();
        draw_triangle(&root, fig).map_err(|x| fail(&fig.title, &x))?;
        root.present().map_err(|x| fail(&fig.title, &x))?;
    }
    Ok(out)
}

/// The PNG of an SVG of `size` (rasterised as every figure is, at the `--dpi` scale).
///
/// # Errors
/// [`PlotError`] when the rasteriser fails.
pub fn png(
    svg: &str,
    size: (u32, u32),
    title: &str,
    raster: super::plot::Raster,
) -> Result<Vec<u8>, PlotError> {
    rasterise(svg, size, raster.scale).map_err(|e| fail(title, &e))
}

/// Pixel width of a label area holding `labels` at 14 px (about 8 px a character), at least
/// `min` and at most `max`.
fn label_width(labels: &[String], min: u32, max: u32) -> u32 {
    let chars = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0) as u32;
    (chars * 8 + 16).clamp(min, max)
}

/// `s` cut to `max` characters with an ellipsis.
fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

const MAX_LABEL_CHARS: usize = 34;

fn titled<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
) -> Result<DrawingArea<DB, Shift>, DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    root.titled(title, (FONT, TITLE_SIZE).into_font().style(FontStyle::Bold))
}

fn draw_forest<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    fig: &ForestFigure,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let body = titled(root, &fig.title)?;
    let n = fig.rows.len().max(1);
    let labels: Vec<String> = fig
        .rows
        .iter()
        .map(|r| cut(&r.label, MAX_LABEL_CHARS))
        .collect();
    let side_w = label_width(
        &fig.rows
            .iter()
            .map(|r| r.side.clone())
            .chain([fig.side_header.clone()])
            .collect::<Vec<_>>(),
        70,
        160,
    );
    let (chart_area, side) = body.split_horizontally(body.dim_in_pixel().0 - side_w);
    let (lo, hi) = fig.x_range;
    let (ticks, decimals) = nice_ticks(lo, hi, 8);
    let mut chart = ChartBuilder::on(&chart_area)
        .caption(&fig.caption, (FONT, CAPTION_SIZE))
        .margin(12)
        .x_label_area_size(48)
        .y_label_area_size(label_width(&labels, 64, 300))
        .build_cartesian_2d(
            TickAxis { lo, hi, ticks },
            TickAxis {
                lo: 0.0,
                hi: n as f64,
                ticks: (0..n).map(|i| i as f64 + 0.5).collect(),
            },
        )?;
    let ylab = |v: &f64| {
        let i = n as f64 - v.floor() - 1.0;
        labels.get(i.max(0.0) as usize).cloned().unwrap_or_default()
    };
    let xlab = |v: &f64| format_linear(*v, decimals);
    chart
        .configure_mesh()
        .disable_y_mesh()
        .x_desc(fig.x_label.as_str())
        .y_label_formatter(&ylab)
        .x_label_formatter(&xlab)
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 15))
        .light_line_style(RGBColor(235, 235, 235))
        .bold_line_style(RGBColor(215, 215, 215))
        .draw()?;
    let y_of = |i: usize| n as f64 - i as f64 - 0.5;
    for (i, r) in fig.rows.iter().enumerate() {
        let colour = if r.strong { PALETTE[0] } else { PALETTE[7] };
        let y = y_of(i);
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(r.low, y), (r.high, y)],
            colour.stroke_width(2),
        )))?;
        for x in [r.low, r.high] {
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(x, y - 0.18), (x, y + 0.18)],
                colour.stroke_width(2),
            )))?;
        }
        chart.draw_series(std::iter::once(Circle::new(
            (r.estimate, y),
            4,
            colour.filled(),
        )))?;
    }
    // The side column: each row's text level with its row.
    let base = side.get_base_pixel();
    let style = TextStyle::from((FONT, 14).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    let header_y = chart.backend_coord(&(lo, n as f64)).1 - 14 - base.1;
    side.draw(&Text::new(
        fig.side_header.clone(),
        (6, header_y),
        TextStyle::from((FONT, 14).into_font().style(FontStyle::Bold))
            .pos(Pos::new(HPos::Left, VPos::Center)),
    ))?;
    for (i, r) in fig.rows.iter().enumerate() {
        let y = chart.backend_coord(&(lo, y_of(i))).1 - base.1;
        side.draw(&Text::new(r.side.clone(), (6, y), style.clone()))?;
    }
    Ok(())
}

fn heat_colour(v: f64, (lo, hi): (f64, f64)) -> RGBColor {
    let t = if hi > lo {
        ((v - lo) / (hi - lo)).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let mix = |a: u8, b: u8| (f64::from(a) + t * (f64::from(b) - f64::from(a))).round() as u8;
    RGBColor(mix(255, 0x08), mix(255, 0x45), mix(255, 0x94))
}

/// Width of the colour bar strip.
const BAR_W: u32 = 96;

fn draw_triangle<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    fig: &TriangleHeat,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let body = titled(root, &fig.title)?;
    let (main, foot) = body.split_vertically(body.dim_in_pixel().1.saturating_sub(26));
    let (chart_area, bar) = main.split_horizontally(main.dim_in_pixel().0.saturating_sub(BAR_W));
    let (nr, nc) = (fig.rows.len().max(1), fig.columns.len().max(1));
    let rows: Vec<String> = fig.rows.iter().map(|r| cut(r, MAX_LABEL_CHARS)).collect();
    let mut chart = ChartBuilder::on(&chart_area)
        .caption(&fig.caption, (FONT, CAPTION_SIZE))
        .margin(12)
        .x_label_area_size(48)
        .y_label_area_size(label_width(&rows, 64, 300))
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
    let xlab = |v: &f64| {
        fig.columns
            .get(v.floor().max(0.0) as usize)
            .cloned()
            .unwrap_or_default()
    };
    let ylab = |v: &f64| {
        let i = nr as f64 - v.floor() - 1.0;
        rows.get(i.max(0.0) as usize).cloned().unwrap_or_default()
    };
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc(fig.x_label.as_str())
        .x_label_formatter(&xlab)
        .y_label_formatter(&ylab)
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 15))
        .draw()?;
    let font = if nc <= 12 { 14 } else { 11 };
    for c in &fig.cells {
        let (x, y) = (c.column as f64, (nr - 1 - c.row) as f64);
        let colour = heat_colour(c.value, fig.range);
        chart.draw_series(std::iter::once(Rectangle::new(
            [(x, y), (x + 1.0, y + 1.0)],
            colour.filled(),
        )))?;
        chart.draw_series(std::iter::once(Rectangle::new(
            [(x, y), (x + 1.0, y + 1.0)],
            RGBColor(225, 225, 225).stroke_width(1),
        )))?;
        if !c.text.is_empty() {
            let ink = if colour.0 < 110 { WHITE } else { BLACK };
            let style = TextStyle::from((FONT, font).into_font())
                .color(&ink)
                .pos(Pos::new(HPos::Center, VPos::Center));
            chart.draw_series(std::iter::once(Text::new(
                c.text.clone(),
                (x + 0.5, y + 0.5),
                style,
            )))?;
        }
    }
    for c in fig.cells.iter().filter(|c| c.outlined) {
        let (x, y) = (c.column as f64, (nr - 1 - c.row) as f64);
        chart.draw_series(std::iter::once(Rectangle::new(
            [(x + 0.04, y + 0.04), (x + 0.96, y + 0.96)],
            PALETTE[1].stroke_width(3),
        )))?;
    }
    foot.draw(&Text::new(
        fig.footnote.clone(),
        (16, 4),
        (FONT, 13).into_font(),
    ))?;
    // Colour bar level with the chart.
    let (_, rows_px) = chart.plotting_area().get_pixel_range();
    let top = rows_px.start - bar.get_base_pixel().1;
    let bottom = rows_px.end - bar.get_base_pixel().1;
    draw_colour_bar(
        &bar,
        (fig.range, 1.0),
        &fig.scale_label,
        BAR_W,
        (top, bottom),
    )
}
