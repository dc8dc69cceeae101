//! Figures: a plain description of what to draw ([`Figure`]), rendered to PNG and SVG with
//! plotters and an embedded DejaVu Sans font (no system font libraries). Rendering never
//! computes a statistic: every number it draws comes finished in the [`Figure`].
use std::sync::Once;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;

/// CSS font list written into SVG text, so viewers without DejaVu fall back gracefully.
pub const FONT: &str = "DejaVu Sans, Helvetica, Arial, sans-serif";

/// A colour-blind-safe palette (Okabe–Ito, yellow left out for contrast on white).
pub const PALETTE: [RGBColor; 8] = [
    RGBColor(0x00, 0x72, 0xB2),
    RGBColor(0xD5, 0x5E, 0x00),
    RGBColor(0x00, 0x9E, 0x73),
    RGBColor(0xCC, 0x79, 0xA7),
    RGBColor(0xE6, 0x9F, 0x00),
    RGBColor(0x56, 0xB4, 0xE9),
    RGBColor(0x00, 0x00, 0x00),
    RGBColor(0x88, 0x88, 0x88),
];

/// How an axis maps values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Plain numbers.
    Linear,
    /// Powers of two (labels 1, 2, 4, ...).
    Log2,
    /// Powers of ten (labels 1k, 10k, ...).
    Log10,
}

impl Scale {
    fn to_axis(self, v: f64) -> f64 {
        match self {
            Scale::Linear => v,
            Scale::Log2 => v.log2(),
            Scale::Log10 => v.log10(),
        }
    }

    fn value_at(self, v: f64) -> f64 {
        match self {
            Scale::Linear => v,
            Scale::Log2 => v.exp2(),
            Scale::Log10 => 10f64.powf(v),
        }
    }
}

/// A line through points (exact curves).
#[derive(Debug, Clone, Default)]
pub struct Line {
    /// Legend label; `None` keeps it out of the legend.
    pub label: Option<String>,
    /// Index into [`PALETTE`].
    pub color: usize,
    /// Dashed instead of solid.
    pub dashed: bool,
    /// (x, y) in data units.
    pub points: Vec<(f64, f64)>,
}

/// Markers with vertical error bars (simulated values and their 95% intervals).
#[derive(Debug, Clone, Default)]
pub struct Markers {
    /// Legend label.
    pub label: Option<String>,
    /// Index into [`PALETTE`].
    pub color: usize,
    /// (x, y, low, high) in data units.
    pub points: Vec<(f64, f64, f64, f64)>,
}

/// A shaded band between two curves (confidence intervals): (x, low, high) in data units.
#[derive(Debug, Clone, Default)]
pub struct Band {
    /// Legend label.
    pub label: Option<String>,
    /// Index into [`PALETTE`].
    pub color: usize,
    /// (x, low, high) in data units, sorted by x.
    pub points: Vec<(f64, f64, f64)>,
}

/// Filled bars (histograms): (x from, x to, height).
#[derive(Debug, Clone, Default)]
pub struct Bars {
    /// Legend label.
    pub label: Option<String>,
    /// Index into [`PALETTE`].
    pub color: usize,
    /// (x0, x1, height) in data units.
    pub bars: Vec<(f64, f64, f64)>,
}

/// A text label at a data point.
#[derive(Debug, Clone)]
pub struct Note {
    /// Position in data units.
    pub at: (f64, f64),
    /// The text.
    pub text: String,
}

/// One chart.
#[derive(Debug, Clone)]
pub struct Panel {
    /// Caption above the chart.
    pub title: String,
    /// X axis label, with units.
    pub x_label: String,
    /// Y axis label, with units.
    pub y_label: String,
    /// X mapping.
    pub x_scale: Scale,
    /// Y mapping.
    pub y_scale: Scale,
    /// X range in data units.
    pub x_range: (f64, f64),
    /// Y range in data units.
    pub y_range: (f64, f64),
    /// Tick positions on x in data units (`None`: automatic).
    pub x_ticks: Option<Vec<f64>>,
    /// Bars, drawn first.
    pub bars: Vec<Bars>,
    /// Shaded bands, drawn after the bars and before the lines.
    pub bands: Vec<Band>,
    /// Lines.
    pub lines: Vec<Line>,
    /// Markers with error bars.
    pub markers: Vec<Markers>,
    /// Vertical reference lines: (x, color, label).
    pub vlines: Vec<(f64, usize, Option<String>)>,
    /// Text labels.
    pub notes: Vec<Note>,
    /// Where the legend goes.
    pub legend: SeriesLabelPosition,
}

impl Panel {
    /// An empty panel with the given axes.
    pub fn new(
        title: impl Into<String>,
        x_label: impl Into<String>,
        y_label: impl Into<String>,
    ) -> Panel {
        Panel {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            x_scale: Scale::Linear,
            y_scale: Scale::Linear,
            x_range: (0.0, 1.0),
            y_range: (0.0, 1.0),
            x_ticks: None,
            bars: Vec::new(),
            bands: Vec::new(),
            lines: Vec::new(),
            markers: Vec::new(),
            vlines: Vec::new(),
            notes: Vec::new(),
            legend: SeriesLabelPosition::LowerRight,
        }
    }
}

/// A whole figure: a title and panels laid out in a grid.
#[derive(Debug, Clone)]
pub struct Figure {
    /// Title naming the scenario and seed.
    pub title: String,
    /// Panels, row by row.
    pub panels: Vec<Panel>,
    /// Grid columns.
    pub columns: usize,
    /// Pixel size of the PNG (and the SVG's view box).
    pub size: (u32, u32),
}

/// A figure that could not be drawn.
#[derive(Debug, thiserror::Error)]
#[error("cannot draw figure `{figure}`: {reason}")]
pub struct PlotError {
    /// Figure title.
    pub figure: String,
    /// What the backend said.
    pub reason: String,
}

fn register_fonts() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The embedded fonts are valid TrueType files; a failure here would only drop text.
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular());
        let _ = plotters::style::register_font(FONT, FontStyle::Bold, dejavu::sans::bold());
    });
}

/// Renders the figure to PNG bytes.
///
/// # Errors
/// [`PlotError`] when plotters or the PNG encoder fails.
pub fn render_png(fig: &Figure) -> Result<Vec<u8>, PlotError> {
    register_fonts();
    let (w, h) = fig.size;
    let mut buf = vec![0u8; w as usize * h as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        draw(&root, fig)?;
        root.present().map_err(|e| err(fig, e))?;
    }
    let mut png = Vec::new();
    use image::ImageEncoder;
    image::codecs::png::PngEncoder::new(&mut png)
        .write_image(&buf, w, h, image::ColorType::Rgb8)
        .map_err(|e| err(fig, e))?;
    Ok(png)
}

/// Renders the figure to an SVG document.
///
/// # Errors
/// [`PlotError`] when plotters fails.
pub fn render_svg(fig: &Figure) -> Result<String, PlotError> {
    register_fonts();
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, fig.size).into_drawing_area();
        draw(&root, fig)?;
        root.present().map_err(|e| err(fig, e))?;
    }
    Ok(out)
}

fn err(fig: &Figure, e: impl std::fmt::Debug) -> PlotError {
    PlotError {
        figure: fig.title.clone(),
        reason: format!("{e:?}"),
    }
}

fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, fig: &Figure) -> Result<(), PlotError> {
    root.fill(&WHITE).map_err(|e| err(fig, e))?;
    // The title shrinks until it fits the width.
    let mut size = 24.0;
    while size > 11.0 {
        let font = TextStyle::from((FONT, size).into_font().style(FontStyle::Bold));
        match root.estimate_text_size(&fig.title, &font) {
            Ok((w, _)) if w + 24 > fig.size.0 => size -= 1.0,
            _ => break,
        }
    }
    let body = root
        .titled(&fig.title, (FONT, size).into_font().style(FontStyle::Bold))
        .map_err(|e| err(fig, e))?;
    let cols = fig.columns.max(1);
    let rows = fig.panels.len().div_ceil(cols).max(1);
    let areas = body.split_evenly((rows, cols));
    for (panel, area) in fig.panels.iter().zip(areas.iter()) {
        draw_panel(area, panel).map_err(|e| err(fig, e))?;
    }
    Ok(())
}

fn format_tick(scale: Scale, v: f64) -> String {
    let x = scale.value_at(v);
    let abs = x.abs();
    if abs >= 1e6 && (x / 1e6).fract().abs() < 1e-9 {
        format!("{}M", x / 1e6)
    } else if abs >= 1000.0 && scale != Scale::Linear {
        let k = x / 1000.0;
        if (k - k.round()).abs() < 1e-6 {
            format!("{}k", k.round())
        } else {
            format!("{k:.1}k")
        }
    } else if (x - x.round()).abs() < 1e-9 && abs < 1e6 {
        format!("{}", x.round())
    } else if abs >= 0.01 {
        let s = format!("{x:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{x:.1e}")
    }
}

/// Ticks at 1, 2, 5 times powers of ten inside a positive range (thinned to 1 and 5, or to
/// powers of ten, when the range is wide).
fn log_ticks((lo, hi): (f64, f64)) -> Vec<f64> {
    if !(lo > 0.0 && hi > lo) {
        return Vec::new();
    }
    let decades = (hi / lo).log10();
    let steps: &[f64] = if decades > 4.0 {
        &[1.0]
    } else if decades > 2.0 {
        &[1.0, 3.0]
    } else {
        &[1.0, 2.0, 5.0]
    };
    let mut out = Vec::new();
    let mut base = 10f64.powf(lo.log10().floor());
    while base <= hi {
        for s in steps {
            let t = base * s;
            if t >= lo && t <= hi {
                out.push(t);
            }
        }
        base *= 10.0;
    }
    out
}

/// A linear axis over transformed values whose ticks can be given explicitly.
struct TickAxis {
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
}

impl Ranged for TickAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let r = (value - self.lo) / (self.hi - self.lo);
        limit.0 + (r * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if self.ticks.is_empty() {
            RangedCoordf64::from(self.lo..self.hi).key_points(hint)
        } else if hint.max_num_points() == 0 {
            Vec::new()
        } else {
            self.ticks
                .iter()
                .copied()
                .filter(|t| *t >= self.lo && *t <= self.hi)
                .collect()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    p: &Panel,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let (xs, ys) = (p.x_scale, p.y_scale);
    let x0 = xs.to_axis(p.x_range.0);
    let x1 = xs.to_axis(p.x_range.1);
    let y0 = ys.to_axis(p.y_range.0);
    let y1 = ys.to_axis(p.y_range.1);
    let ticks: Vec<f64> = match &p.x_ticks {
        Some(t) => t.iter().map(|&v| xs.to_axis(v)).collect(),
        None if xs == Scale::Log10 => log_ticks(p.x_range)
            .into_iter()
            .map(|v| xs.to_axis(v))
            .collect(),
        None => Vec::new(),
    };
    let yticks: Vec<f64> = match ys {
        Scale::Log10 => log_ticks(p.y_range)
            .into_iter()
            .map(|v| ys.to_axis(v))
            .collect(),
        _ => Vec::new(),
    };
    let mut chart = ChartBuilder::on(area)
        .caption(&p.title, (FONT, 18))
        .margin(12)
        .x_label_area_size(48)
        .y_label_area_size(64)
        .build_cartesian_2d(
            TickAxis {
                lo: x0,
                hi: x1,
                ticks: ticks.clone(),
            },
            TickAxis {
                lo: y0,
                hi: y1,
                ticks: yticks,
            },
        )?;
    let xfmt = |v: &f64| format_tick(xs, *v);
    let yfmt = |v: &f64| format_tick(ys, *v);
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(p.x_label.as_str())
        .y_desc(p.y_label.as_str())
        .x_label_formatter(&xfmt)
        .y_label_formatter(&yfmt)
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 15))
        .light_line_style(RGBColor(235, 235, 235));
    if ticks.is_empty() {
        mesh.x_labels(8);
    }
    mesh.draw()?;
    let color = |i: usize| PALETTE[i % PALETTE.len()];
    let mut labelled = false;
    for b in &p.bars {
        let c = color(b.color);
        let series = chart.draw_series(b.bars.iter().map(|&(a, z, h)| {
            Rectangle::new(
                [
                    (xs.to_axis(a), ys.to_axis(0f64.max(p.y_range.0))),
                    (xs.to_axis(z), ys.to_axis(h)),
                ],
                c.mix(0.35).filled(),
            )
        }))?;
        if let Some(l) = &b.label {
            labelled = true;
            series.label(l.as_str()).legend(move |(x, y)| {
                Rectangle::new([(x, y - 5), (x + 16, y + 5)], c.mix(0.35).filled())
            });
        }
    }
    for band in &p.bands {
        let c = color(band.color);
        let clamp = |y: f64| ys.to_axis(y.clamp(p.y_range.0, p.y_range.1));
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
        let series =
            chart.draw_series(std::iter::once(Polygon::new(outline, c.mix(0.18).filled())))?;
        if let Some(l) = &band.label {
            labelled = true;
            series.label(l.as_str()).legend(move |(x, y)| {
                Rectangle::new([(x, y - 5), (x + 16, y + 5)], c.mix(0.18).filled())
            });
        }
    }
    for (x, ci, label) in &p.vlines {
        let c = color(*ci);
        let series = chart.draw_series(DashedLineSeries::new(
            vec![(xs.to_axis(*x), y0), (xs.to_axis(*x), y1)],
            6,
            4,
            c.stroke_width(1),
        ))?;
        if let Some(l) = label {
            labelled = true;
            series.label(l.as_str()).legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(1))
            });
        }
    }
    for line in &p.lines {
        let c = color(line.color);
        let pts: Vec<(f64, f64)> = line
            .points
            .iter()
            .map(|&(x, y)| (xs.to_axis(x), ys.to_axis(y)))
            .collect();
        let style = c.stroke_width(2);
        let series = if line.dashed {
            chart.draw_series(DashedLineSeries::new(pts, 8, 5, style))?
        } else {
            chart.draw_series(LineSeries::new(pts, style))?
        };
        if let Some(l) = &line.label {
            labelled = true;
            let dashed = line.dashed;
            series.label(l.as_str()).legend(move |(x, y)| {
                let end = if dashed { x + 8 } else { x + 18 };
                PathElement::new(vec![(x, y), (end, y)], c.stroke_width(2))
            });
        }
    }
    for m in &p.markers {
        let c = color(m.color);
        for &(x, _, lo, hi) in &m.points {
            let (ax, alo, ahi) = (
                xs.to_axis(x),
                ys.to_axis(lo.max(p.y_range.0)),
                ys.to_axis(hi.min(p.y_range.1)),
            );
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(ax, alo), (ax, ahi)],
                c.stroke_width(1),
            )))?;
        }
        let series = chart.draw_series(
            m.points
                .iter()
                .map(|&(x, y, _, _)| Circle::new((xs.to_axis(x), ys.to_axis(y)), 3, c.filled())),
        )?;
        if let Some(l) = &m.label {
            labelled = true;
            series
                .label(l.as_str())
                .legend(move |(x, y)| Circle::new((x + 9, y), 3, c.filled()));
        }
    }
    for n in &p.notes {
        chart.draw_series(std::iter::once(Text::new(
            n.text.clone(),
            (xs.to_axis(n.at.0), ys.to_axis(n.at.1)),
            (FONT, 13),
        )))?;
    }
    if labelled {
        chart
            .configure_series_labels()
            .position(p.legend.clone())
            .label_font((FONT, 13))
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(200, 200, 200))
            .draw()?;
    }
    Ok(())
}

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

/// Renders a heat-map figure to PNG bytes.
///
/// # Errors
/// [`PlotError`] when plotters or the PNG encoder fails.
pub fn render_heat_png(fig: &HeatFigure) -> Result<Vec<u8>, PlotError> {
    register_fonts();
    let (w, h) = fig.size;
    let mut buf = vec![0u8; w as usize * h as usize * 3];
    let e = |x: &dyn std::fmt::Debug| PlotError {
        figure: fig.title.clone(),
        reason: format!("{x:?}"),
    };
    {
        let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        draw_heat(&root, fig)?;
        root.present().map_err(|x| e(&x))?;
    }
    let mut png = Vec::new();
    use image::ImageEncoder;
    image::codecs::png::PngEncoder::new(&mut png)
        .write_image(&buf, w, h, image::ColorType::Rgb8)
        .map_err(|x| e(&x))?;
    Ok(png)
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

fn draw_heat<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    fig: &HeatFigure,
) -> Result<(), PlotError> {
    let e = |x: &dyn std::fmt::Debug| PlotError {
        figure: fig.title.clone(),
        reason: format!("{x:?}"),
    };
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let body = root
        .titled(&fig.title, (FONT, 20).into_font().style(FontStyle::Bold))
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

fn heat_colour(v: f64, (lo, hi): (f64, f64)) -> RGBColor {
    let t = if hi > lo {
        ((v - lo) / (hi - lo)).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let mix = |a: u8, b: u8| (f64::from(a) + t * (f64::from(b) - f64::from(a))).round() as u8;
    // White to the palette's blue.
    RGBColor(mix(255, 0x08), mix(255, 0x45), mix(255, 0x94))
}

fn draw_heat_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    p: &HeatPanel,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let (nc, nr) = (p.columns.len().max(1), p.rows.len().max(1));
    let (plot_area, foot) = area.split_vertically(area.dim_in_pixel().1.saturating_sub(28));
    let mut chart = ChartBuilder::on(&plot_area)
        .caption(&p.title, (FONT, 17))
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
    Ok(())
}
