//! Figures: a plain description of what to draw ([`Figure`]), rendered to PNG and SVG with
//! plotters and an embedded DejaVu Sans font (no system font libraries). Rendering never
//! computes a statistic: every number it draws comes finished in the [`Figure`].
use std::sync::Once;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;

pub use super::raster::rasterise;

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

/// Exact values at discrete designs (a benchmark of N problems exists only at the N computed), drawn
/// as hollow diamonds and never joined: a line between two designs would read as values computed
/// in between. A simulated marker at the same point sits inside its diamond.
#[derive(Debug, Clone, Default)]
pub struct Points {
    /// Legend label.
    pub label: Option<String>,
    /// Index into [`PALETTE`].
    pub color: usize,
    /// (x, y) in data units.
    pub points: Vec<(f64, f64)>,
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

/// A text label next to a data point. The renderer puts it beside the point (right, left, above
/// or below) where it crosses no line, marker, band edge or earlier label and stays inside the
/// plot (see `place_notes`).
#[derive(Debug, Clone)]
pub struct Note {
    /// The labelled point, in data units.
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
    /// Labels of `x_ticks`, in the same order (`None`: the numbers).
    pub x_tick_labels: Option<Vec<String>>,
    /// No y tick above this value (a percent axis given headroom for its legend stops at 100).
    pub y_tick_max: Option<f64>,
    /// Only whole numbers as y ticks (counts).
    pub y_integer: bool,
    /// Bars, drawn first.
    pub bars: Vec<Bars>,
    /// Shaded bands, drawn after the bars and before the lines.
    pub bands: Vec<Band>,
    /// Lines.
    pub lines: Vec<Line>,
    /// Markers with error bars.
    pub markers: Vec<Markers>,
    /// Exact values at discrete designs, drawn after the markers.
    pub points: Vec<Points>,
    /// Vertical reference lines: (x, color, label).
    pub vlines: Vec<(f64, usize, Option<String>)>,
    /// Text labels.
    pub notes: Vec<Note>,
    /// Where the legend goes (by default the least crowded spot, see [`Legend::Auto`]).
    pub legend: Legend,
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
            x_tick_labels: None,
            y_tick_max: None,
            y_integer: false,
            bars: Vec::new(),
            bands: Vec::new(),
            lines: Vec::new(),
            markers: Vec::new(),
            points: Vec::new(),
            vlines: Vec::new(),
            notes: Vec::new(),
            legend: Legend::Auto,
        }
    }
}

/// Where a panel's legend goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Legend {
    /// Inside the plot, at the corner or side whose box covers no line, band edge, marker, bar
    /// top, reference line or note, and of those the least band or bar fill; outside, right
    /// of the plot (or under it when the legend is wide), when every inside spot would cover
    /// some. Ties go to upper right, upper left, lower right, lower left, then the sides.
    #[default]
    Auto,
    /// Outside, right of the plot (or under it when the legend is wide).
    Outside,
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

/// Grid columns for `n` panels that leave no cell empty where that is possible with at most
/// three columns (3 panels in one row, 6 in two rows of three), else the fewest empty cells
/// (two columns for 4, three for 5); at least 1.
pub fn grid_columns(n: usize) -> usize {
    match n {
        0 | 1 => 1,
        2 | 4 => 2,
        3 | 5 | 6 | 9 => 3,
        7 | 8 => 4,
        _ => n.isqrt() + usize::from(n.isqrt() * n.isqrt() < n),
    }
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

pub(crate) fn register_fonts() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The embedded fonts are valid TrueType files; a failure here would only drop text.
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular());
        let _ = plotters::style::register_font(FONT, FontStyle::Bold, dejavu::sans::bold());
    });
}

/// Renders the figure to PNG bytes: the SVG of [`render_svg`] rasterised by resvg with the
/// embedded DejaVu Sans, so PNG and SVG show the same figure with shaped text.
///
/// # Errors
/// [`PlotError`] when plotters, the SVG parser or the PNG encoder fails.
pub fn render_png(fig: &Figure) -> Result<Vec<u8>, PlotError> {
    let (svg, size) = svg_and_size(fig)?;
    rasterise(&svg, size, png_scale()).map_err(|e| err(fig, e))
}

static PNG_SCALE: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0x3f80_0000);

/// Sets the pixel scale of every PNG rendered afterwards (the `--dpi` flag: dpi / 96; 1.0 by
/// default). SVGs are resolution-free and unaffected.
pub fn set_png_scale(scale: f32) {
    PNG_SCALE.store(scale.to_bits(), std::sync::atomic::Ordering::Relaxed);
}

pub(crate) fn png_scale() -> f32 {
    f32::from_bits(PNG_SCALE.load(std::sync::atomic::Ordering::Relaxed))
}

/// Renders the figure once as SVG and rasterises that SVG: (PNG bytes, SVG document).
///
/// # Errors
/// [`PlotError`] as [`render_png`].
pub fn render_both(fig: &Figure) -> Result<(Vec<u8>, String), PlotError> {
    let (svg, size) = svg_and_size(fig)?;
    let png = rasterise(&svg, size, png_scale()).map_err(|e| err(fig, e))?;
    Ok((png, svg))
}

/// Renders the figure to an SVG document.
///
/// # Errors
/// [`PlotError`] when plotters fails.
pub fn render_svg(fig: &Figure) -> Result<String, PlotError> {
    svg_and_size(fig).map(|r| r.0)
}

/// The SVG document and its pixel size: [`Figure::size`] grown by the strips that hold the
/// legends placed outside the plots (see [`layout`]).
fn svg_and_size(fig: &Figure) -> Result<(String, (u32, u32)), PlotError> {
    register_fonts();
    let lay = layout(fig);
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, lay.size).into_drawing_area();
        draw(&root, fig, &lay)?;
        root.present().map_err(|e| err(fig, e))?;
    }
    Ok((xml_text(out), lay.size))
}

/// The SVG with every character XML forbids (control characters other than tab and line
/// breaks, U+FFFE, U+FFFF) written as a visible `\u{..}` escape: a model name read from a
/// results file can hold them, and the figure should show the name, not fail to parse.
fn xml_text(svg: String) -> String {
    let forbidden = |c: char| {
        (c < '\u{20}' && !matches!(c, '\t' | '\n' | '\r')) || matches!(c, '\u{fffe}' | '\u{ffff}')
    };
    if !svg.contains(forbidden) {
        return svg;
    }
    let mut out = String::with_capacity(svg.len() + 16);
    for c in svg.chars() {
        if forbidden(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

fn err(fig: &Figure, e: impl std::fmt::Debug) -> PlotError {
    PlotError {
        figure: fig.title.clone(),
        reason: format!("{e:?}"),
    }
}

/// Width and height of `text` in pixels at `size` (bold or not), from the embedded font.
fn text_size(text: &str, size: f64, bold: bool) -> (i32, i32) {
    let font = (FONT, size).into_font();
    let font = if bold {
        font.style(FontStyle::Bold)
    } else {
        font
    };
    font.box_size(text)
        .map_or((0, 0), |(w, h)| (w as i32, h as i32))
}

/// Where a panel's legend ends up.
#[derive(Debug, Clone, Copy, PartialEq)]
enum LegendAt {
    /// No legend entries.
    Nowhere,
    /// Inside the plot, its top left corner in pixels from the plot area's top left.
    Inside(f64, f64),
    /// In the strip right of the panel.
    Right,
    /// In the strip under the panel, in columns.
    Below,
}

/// One panel's place in a [`Layout`].
#[derive(Debug, Clone)]
struct PanelLayout {
    /// Caption lines.
    caption: Vec<String>,
    /// Legend entries, their box size in pixels, the widths of its columns (none: one column)
    /// and the place.
    entries: Vec<(Swatch, String)>,
    legend_size: (i32, i32),
    legend_columns: Vec<i32>,
    legend: LegendAt,
    /// Each note's text box: top left corner in pixels from the plot area's top left.
    notes: Vec<(f64, f64)>,
}

/// The pixel layout of a [`Figure`], decided before drawing: every panel gets a chart cell of
/// the same size (so plots compared side by side have equal widths and heights), captions
/// share one height, and legends that fit nowhere inside their plot go to a
/// strip right of (or under) every cell, which grows the canvas instead of shrinking one plot.
#[derive(Debug, Clone)]
struct Layout {
    /// Canvas size in pixels.
    size: (u32, u32),
    /// The title's lines at [`TITLE_SIZE`].
    title_lines: Vec<String>,
    /// One chart cell (caption, axes and plot) in pixels.
    cell: (i32, i32),
    /// Width of the strip right of each cell and height of the strip under it.
    right: i32,
    below: i32,
    /// The height reserved for captions (at [`CAPTION_SIZE`]) in every cell.
    caption_h: i32,
    panels: Vec<PanelLayout>,
}

/// Margin around a chart, and the sizes of its x and y label areas, in pixels.
const CHART_MARGIN: i32 = 12;
const X_LABEL_AREA: i32 = 48;
const Y_LABEL_AREA: i32 = 64;
/// Gap between legend columns.
const LEGEND_COLUMN_GAP: i32 = 16;

/// The one font size of every figure title (bold) and of every panel caption, in pixels: a
/// long title or caption wraps onto more lines instead of shrinking, so every figure reads at
/// the same sizes.
pub const TITLE_SIZE: f64 = 22.0;
pub const CAPTION_SIZE: f64 = 17.0;

/// Most lines a panel caption takes; the last is cut at a word with an ellipsis beyond them.
const CAPTION_MAX_LINES: usize = 3;

/// `text` in one line if it fits `room` pixels at `size`, else in two lines split at the word
/// that balances them, if that fits.
fn wrap_balanced(text: &str, size: f64, bold: bool, room: i32) -> Option<Vec<String>> {
    if text_size(text, size, bold).0 <= room {
        return Some(vec![text.to_string()]);
    }
    let words: Vec<&str> = text.split(' ').collect();
    (1..words.len())
        .map(|n| (words[..n].join(" "), words[n..].join(" ")))
        .map(|(a, b)| {
            let w = text_size(&a, size, bold).0.max(text_size(&b, size, bold).0);
            (w, a, b)
        })
        .filter(|t| t.0 <= room)
        .min_by_key(|t| t.0)
        .map(|(_, a, b)| vec![a, b])
}

/// `text` filled greedily into lines of at most `room` pixels at `size`, breaking at spaces (a
/// word wider than the room gets a line of its own).
fn wrap_greedy(text: &str, size: f64, bold: bool, room: i32) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ') {
        match lines.last_mut() {
            Some(line) if text_size(&format!("{line} {word}"), size, bold).0 <= room => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

/// The panel captions at [`CAPTION_SIZE`]: each in one line, or two balanced lines, or filled
/// into up to [`CAPTION_MAX_LINES`] lines with the last cut at a word and an ellipsis.
fn fit_captions(titles: &[&str], room: i32) -> Vec<Vec<String>> {
    let s = CAPTION_SIZE;
    titles
        .iter()
        .map(|t| {
            wrap_balanced(t, s, false, room).unwrap_or_else(|| {
                let mut lines = wrap_greedy(t, s, false, room);
                if lines.len() > CAPTION_MAX_LINES {
                    let rest = lines.split_off(CAPTION_MAX_LINES - 1).join(" ");
                    let mut words: Vec<&str> = rest.split(' ').collect();
                    while words.len() > 1
                        && text_size(&format!("{} …", words.join(" ")), s, false).0 > room
                    {
                        words.pop();
                    }
                    lines.push(format!("{} …", words.join(" ")));
                }
                lines
            })
        })
        .collect()
}

/// Decides the [`Layout`] of a figure.
fn layout(fig: &Figure) -> Layout {
    let cols = fig.columns.max(1);
    let rows = fig.panels.len().div_ceil(cols).max(1);
    let (w0, h0) = (fig.size.0 as i32, fig.size.1 as i32);
    let title_lines = fit_title(&fig.title, w0);
    let title_h = title_lines_block(title_lines.len());
    let cell = (w0 / cols as i32, (h0 - title_h) / rows as i32);
    let titles: Vec<&str> = fig.panels.iter().map(|p| p.title.as_str()).collect();
    let captions = fit_captions(&titles, cell.0 - 16);
    let lines = captions.iter().map(Vec::len).max().unwrap_or(1) as i32;
    let line_h = (CAPTION_SIZE * 1.25).ceil() as i32;
    let caption_h = if titles.iter().all(|t| t.is_empty()) {
        0
    } else {
        lines * line_h + 12
    };
    let plot_w = cell.0 - 2 * CHART_MARGIN - Y_LABEL_AREA;
    let plot_h = cell.1 - caption_h - 2 * CHART_MARGIN - X_LABEL_AREA;
    let mut panels: Vec<PanelLayout> = fig
        .panels
        .iter()
        .zip(captions)
        .map(|(p, caption)| {
            let entries = legend_entries(p);
            let text_w = entries
                .iter()
                .map(|e| text_size(&e.1, LEGEND_FONT, false).0)
                .max()
                .unwrap_or(0);
            let legend_size = (
                2 * LEGEND_PAD + LEGEND_KEY + text_w,
                2 * LEGEND_PAD + LEGEND_ROW * entries.len() as i32,
            );
            let notes = place_notes(p, f64::from(plot_w), f64::from(plot_h));
            let legend = match (entries.is_empty(), p.legend) {
                (true, _) => LegendAt::Nowhere,
                (false, Legend::Outside) => LegendAt::Right,
                (false, Legend::Auto) => legend_spot(
                    p,
                    &notes,
                    (f64::from(legend_size.0), f64::from(legend_size.1)),
                    f64::from(plot_w),
                    f64::from(plot_h),
                )
                .map_or(LegendAt::Right, |(x, y)| LegendAt::Inside(x, y)),
            };
            PanelLayout {
                caption,
                entries,
                legend_size,
                legend_columns: Vec::new(),
                legend,
                notes,
            }
        })
        .collect();
    // Outside legends go right of the cells when each leaves its plot two thirds of the cell
    // width, else all under the cells, in as many columns as the plot's width holds.
    let outside = |l: &PanelLayout| matches!(l.legend, LegendAt::Right | LegendAt::Below);
    let right_fits = panels
        .iter()
        .filter(|l| outside(l))
        .all(|l| l.legend_size.0 * 3 <= cell.0);
    let (mut right, mut below) = (0, 0);
    for l in panels.iter_mut().filter(|l| outside(l)) {
        if right_fits {
            l.legend = LegendAt::Right;
            right = right.max(l.legend_size.0 + LEGEND_INSET);
        } else {
            l.legend = LegendAt::Below;
            // The most columns (filled top to bottom) whose widths fit under the plot.
            let n = l.entries.len().max(1);
            let widths: Vec<i32> = l
                .entries
                .iter()
                .map(|e| LEGEND_KEY + text_size(&e.1, LEGEND_FONT, false).0)
                .collect();
            let room = cell.0 - 2 * CHART_MARGIN - Y_LABEL_AREA;
            for columns in (1..=n).rev() {
                let legend_rows = n.div_ceil(columns);
                let cols: Vec<i32> = widths
                    .chunks(legend_rows)
                    .map(|c| c.iter().copied().max().unwrap_or(0))
                    .collect();
                let w = 2 * LEGEND_PAD
                    + cols.iter().sum::<i32>()
                    + LEGEND_COLUMN_GAP * (cols.len() as i32 - 1);
                if w <= room || columns == 1 {
                    l.legend_columns = cols;
                    l.legend_size = (w, 2 * LEGEND_PAD + LEGEND_ROW * legend_rows as i32);
                    break;
                }
            }
            below = below.max(l.legend_size.1 + LEGEND_INSET);
        }
    }
    Layout {
        size: (
            (cell.0 + right) as u32 * cols as u32,
            (title_h + (cell.1 + below) * rows as i32) as u32,
        ),
        title_lines,
        cell,
        right,
        below,
        caption_h,
        panels,
    }
}

/// Whether a title line fits a canvas `w0` pixels wide at [`TITLE_SIZE`].
fn title_fits(line: &str, w0: i32) -> bool {
    let w = text_size(line, TITLE_SIZE, true).0;
    w + w / 12 + 32 <= w0
}

/// The figure title's lines at [`TITLE_SIZE`]: one line if it fits the width; else two lines
/// split at the " · " that balances them, if both fit; else its " · "-separated parts packed
/// into as few lines as fit (a part too wide for a line wrapped at its words).
fn fit_title(title: &str, w0: i32) -> Vec<String> {
    if title_fits(title, w0) {
        return vec![title.to_string()];
    }
    let room = {
        // The widest line `title_fits` accepts.
        let mut r = w0;
        while r > 0 && r + r / 12 + 32 > w0 {
            r -= 1;
        }
        r
    };
    // Two lines split at the " · " that balances them, when both fit.
    let parts: Vec<&str> = title.split(" · ").collect();
    let balanced = (1..parts.len())
        .map(|n| (parts[..n].join(" · "), parts[n..].join(" · ")))
        .filter(|(a, b)| title_fits(a, w0) && title_fits(b, w0))
        .min_by_key(|(a, b)| {
            text_size(a, TITLE_SIZE, true)
                .0
                .max(text_size(b, TITLE_SIZE, true).0)
        });
    if let Some((a, b)) = balanced {
        return vec![a, b];
    }
    let mut lines: Vec<String> = Vec::new();
    for part in parts {
        let joined = lines.last().map(|l| format!("{l} · {part}"));
        match joined {
            Some(j) if title_fits(&j, w0) => *lines.last_mut().expect("a line") = j,
            _ => lines.extend(wrap_greedy(part, TITLE_SIZE, true, room)),
        }
    }
    lines
}

/// Height of a title strip of `lines` lines at [`TITLE_SIZE`].
fn title_lines_block(lines: usize) -> i32 {
    let h = text_size("Ag", TITLE_SIZE, true).1;
    let line_h = (f64::from(h) * 1.2).ceil() as i32;
    line_h * lines as i32 + 2 * (h / 2).min(5)
}

fn draw<DB: DrawingBackend>(
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

/// A range the axis code can draw: finite, positive on a log scale, low below high. A range
/// that collapsed to a point (every value equal) is widened around it: by 5% of its magnitude on
/// a linear axis (one unit around 0), by a factor of 2 each way on a log axis. Every range goes
/// through here before it reaches plotters, whose tick search never ends on an empty range.
pub fn usable_range(scale: Scale, (a, b): (f64, f64)) -> (f64, f64) {
    let finite: Vec<f64> = [a, b].into_iter().filter(|v| v.is_finite()).collect();
    let (mut lo, mut hi) = match finite.as_slice() {
        [x, y] => (x.min(*y), x.max(*y)),
        [x] => (*x, *x),
        _ => {
            return if scale == Scale::Linear {
                (0.0, 1.0)
            } else {
                (1.0, 10.0)
            }
        }
    };
    match scale {
        Scale::Linear => {
            let mag = lo.abs().max(hi.abs());
            if hi - lo <= mag * 1e-9 {
                let c = 0.5 * (lo + hi);
                let half = if mag > 0.0 {
                    (0.05 * mag).min(1e300)
                } else {
                    0.5
                };
                (lo, hi) = (c - half, c + half);
            }
            if lo.is_finite() && hi.is_finite() && hi > lo {
                (lo, hi)
            } else {
                (0.0, 1.0)
            }
        }
        Scale::Log2 | Scale::Log10 => {
            if hi <= 0.0 {
                return (1.0, 10.0);
            }
            if lo <= 0.0 {
                lo = hi / 100.0;
            }
            if lo == 0.0 {
                lo = f64::MIN_POSITIVE;
            }
            if hi / lo < 1.0 + 1e-9 {
                (lo, hi) = (lo / 2.0, (hi * 2.0).min(f64::MAX));
            }
            (lo, hi)
        }
    }
}

/// About `max` ticks at 1, 2, 2.5 or 5 times a power of ten inside [lo, hi], and the number of
/// decimals that tells them apart.
pub(crate) fn nice_ticks(lo: f64, hi: f64, max: usize) -> (Vec<f64>, usize) {
    let span = hi - lo;
    if !(span > 0.0 && span.is_finite()) {
        return (Vec::new(), 0);
    }
    let raw = span / max.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let mult = [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .find(|m| m * mag >= raw * (1.0 - 1e-12))
        .unwrap_or(10.0);
    let step = mult * mag;
    let (first, last) = ((lo / step - 1e-9).ceil(), (hi / step + 1e-9).floor());
    if !(first.is_finite() && last.is_finite()) || last - first > 1000.0 {
        return (Vec::new(), 0);
    }
    let ticks = (0..=(last - first) as i64)
        .map(|i| (first + i as f64) * step + 0.0)
        .collect();
    let extra = usize::from(mult == 2.5);
    let decimals = (-(step.log10().floor())).max(0.0) as usize + extra;
    (ticks, decimals.min(12))
}

/// Axis positions and labels of the ticks of one axis (the axis in transformed units).
fn axis_ticks(
    scale: Scale,
    range: (f64, f64),
    given: Option<&[f64]>,
    max: usize,
) -> Vec<(f64, String)> {
    let (lo, hi) = range;
    let label = |v: f64| format_tick(scale, scale.to_axis(v));
    if let Some(t) = given {
        return t
            .iter()
            .filter(|v| v.is_finite() && **v >= lo && **v <= hi)
            .map(|&v| (scale.to_axis(v), label(v)))
            .collect();
    }
    match scale {
        Scale::Linear => {
            let (ticks, decimals) = nice_ticks(lo, hi, max);
            ticks
                .into_iter()
                .map(|v| (v, format_linear(v, decimals)))
                .collect()
        }
        Scale::Log10 | Scale::Log2 => {
            let mut t = if scale == Scale::Log10 {
                log_ticks(range)
            } else {
                let (a, b) = (lo.log2().ceil(), hi.log2().floor());
                let stride = ((b - a) / max.max(1) as f64).ceil().max(1.0);
                let mut out = Vec::new();
                let mut e = a;
                while e <= b && out.len() < 64 {
                    out.push(e.exp2());
                    e += stride;
                }
                out
            };
            if t.len() < 2 {
                // Less than a decade (or an octave): plain numbers inside the range.
                let (ticks, decimals) = nice_ticks(lo, hi, max.min(5));
                return ticks
                    .into_iter()
                    .filter(|v| *v > 0.0)
                    .map(|v| (scale.to_axis(v), format_linear(v, decimals)))
                    .collect();
            }
            t.retain(|v| *v >= lo && *v <= hi);
            t.into_iter()
                .map(|v| (scale.to_axis(v), label(v)))
                .collect()
        }
    }
}

/// A linear tick label with a fixed number of decimals (thousands as k above 10,000).
pub(crate) fn format_linear(v: f64, decimals: usize) -> String {
    if v.abs() >= 1e4 && decimals == 0 && (v / 1000.0).fract() == 0.0 {
        format!("{}k", v / 1000.0)
    } else {
        format!("{v:.decimals$}")
    }
}

/// A linear axis over transformed values whose ticks can be given explicitly.
pub(crate) struct TickAxis {
    pub(crate) lo: f64,
    pub(crate) hi: f64,
    pub(crate) ticks: Vec<f64>,
}

impl Ranged for TickAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let r = (value - self.lo) / (self.hi - self.lo);
        limit.0 + (r * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.max_num_points() == 0 {
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

/// What a legend entry shows next to its label.
#[derive(Debug, Clone, Copy)]
enum Swatch {
    /// A filled box (bars at opacity 0.35, bands at 0.18).
    Fill(usize, f64),
    /// A line (dashed or not) of the given width.
    Stroke(usize, u32, bool),
    /// A dot (markers).
    Dot(usize),
    /// A hollow diamond (exact values at discrete designs).
    Diamond(usize),
    /// A triangle pointing up: a value cut at the frame.
    Cut,
}

/// The legend label said when some value of a panel lies beyond its y range and is drawn cut at
/// the frame (with a triangle on each cut interval end).
pub const CUT_LABEL: &str = "beyond the axis: cut at the frame";

/// Whether a panel cuts a marker's interval at its y frame, which draws a triangle on the cut
/// end. Bands and lines are clipped at the frame without a mark (a band of one SD about a score
/// near 0 stops at 0), so they need no legend entry.
fn has_cut(p: &Panel) -> bool {
    let yr = usable_range(p.y_scale, p.y_range);
    p.markers
        .iter()
        .flat_map(|m| &m.points)
        .any(|&(_, _, lo, hi)| (hi > yr.1 && hi.is_finite()) || (lo < yr.0 && lo.is_finite()))
}

/// The legend entries of a panel, in drawing order.
fn legend_entries(p: &Panel) -> Vec<(Swatch, String)> {
    let mut out = Vec::new();
    for b in &p.bars {
        out.extend(b.label.clone().map(|l| (Swatch::Fill(b.color, 0.35), l)));
    }
    for b in &p.bands {
        out.extend(b.label.clone().map(|l| (Swatch::Fill(b.color, 0.18), l)));
    }
    for (_, c, l) in &p.vlines {
        out.extend(l.clone().map(|l| (Swatch::Stroke(*c, 1, true), l)));
    }
    for l in &p.lines {
        out.extend(
            l.label
                .clone()
                .map(|t| (Swatch::Stroke(l.color, 2, l.dashed), t)),
        );
    }
    for m in &p.markers {
        out.extend(m.label.clone().map(|l| (Swatch::Dot(m.color), l)));
    }
    for q in &p.points {
        out.extend(q.label.clone().map(|l| (Swatch::Diamond(q.color), l)));
    }
    if has_cut(p) {
        out.push((Swatch::Cut, CUT_LABEL.to_string()));
    }
    out
}

/// Legend font size, row height and inner padding, in pixels.
const LEGEND_FONT: f64 = 13.0;
const LEGEND_ROW: i32 = 18;
const LEGEND_PAD: i32 = 7;
/// Width of a legend swatch and the gap after it.
const LEGEND_KEY: i32 = 30;
/// Gap between the legend and the plot's frame.
const LEGEND_INSET: i32 = 8;

/// Things a panel draws, as weighted sample points in pixels from the plot area's top left
/// corner (`w` x `h` pixels): what the legend placement counts under each candidate box.
fn drawn_samples(p: &Panel, w: f64, h: f64) -> Vec<(f64, f64, f64)> {
    let (xs, ys) = (p.x_scale, p.y_scale);
    let (xr, yr) = (usable_range(xs, p.x_range), usable_range(ys, p.y_range));
    let (x0, x1) = (xs.to_axis(xr.0), xs.to_axis(xr.1));
    let (y0, y1) = (ys.to_axis(yr.0), ys.to_axis(yr.1));
    let px = |x: f64| (xs.to_axis(x) - x0) / (x1 - x0) * w;
    let py = |y: f64| (1.0 - (ys.to_axis(y.clamp(yr.0, yr.1)) - y0) / (y1 - y0)) * h;
    let mut out: Vec<(f64, f64, f64)> = Vec::new();
    // A segment sampled every 2 pixels (ends included).
    let segment = |a: (f64, f64), b: (f64, f64), weight: f64, out: &mut Vec<_>| {
        if !(a.0.is_finite() && a.1.is_finite() && b.0.is_finite() && b.1.is_finite()) {
            return;
        }
        let steps = ((b.0 - a.0).hypot(b.1 - a.1) / 2.0)
            .ceil()
            .clamp(1.0, 2000.0) as usize;
        for i in 0..=steps {
            let t = i as f64 / steps as f64;
            out.push((weight, a.0 + t * (b.0 - a.0), a.1 + t * (b.1 - a.1)));
        }
    };
    for l in &p.lines {
        for pair in l.points.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            segment((px(a.0), py(a.1)), (px(b.0), py(b.1)), 1.0, &mut out);
        }
    }
    for b in &p.bands {
        for pair in b.points.windows(2) {
            let (a, c) = (pair[0], pair[1]);
            segment((px(a.0), py(a.1)), (px(c.0), py(c.1)), 0.5, &mut out);
            segment((px(a.0), py(a.2)), (px(c.0), py(c.2)), 0.5, &mut out);
        }
        // The fill, lightly: a vertical line through each point and the midpoints between.
        for &(x, lo, hi) in &b.points {
            segment((px(x), py(lo)), (px(x), py(hi)), 0.1, &mut out);
        }
    }
    for m in &p.markers {
        for &(x, y, lo, hi) in &m.points {
            segment((px(x), py(lo)), (px(x), py(hi)), 1.0, &mut out);
            for (dx, dy) in [(0.0, 0.0), (-3.0, 0.0), (3.0, 0.0), (0.0, -3.0), (0.0, 3.0)] {
                out.push((2.0, px(x) + dx, py(y) + dy));
            }
        }
    }
    for q in &p.points {
        for &(x, y) in &q.points {
            let r = f64::from(DIAMOND);
            for (dx, dy) in [(0.0, 0.0), (-r, 0.0), (r, 0.0), (0.0, -r), (0.0, r)] {
                out.push((2.0, px(x) + dx, py(y) + dy));
            }
        }
    }
    for b in &p.bars {
        for &(a, z, top) in &b.bars {
            let base = 0f64.max(yr.0);
            segment((px(a), py(top)), (px(z), py(top)), 1.0, &mut out);
            let (l, r) = (px(a), px(z));
            let mut x = l;
            while x <= r {
                segment((x, py(top)), (x, py(base)), 0.1, &mut out);
                x += 6.0;
            }
        }
    }
    // A reference line spans the whole height and a legend must not hide any of it.
    for (x, _, _) in &p.vlines {
        segment((px(*x), 0.0), (px(*x), h), 0.5, &mut out);
    }
    out
}

/// Font size of a [`Note`], and the gap between a note's text box and its point, in pixels.
const NOTE_FONT: f64 = 13.0;
const NOTE_GAP: f64 = 6.0;

/// The text box (left, top, width, height in pixels) of each of a panel's notes, placed one
/// after another: of the candidate spots beside the point (upper right, lower right, upper left,
/// lower left, above, below, right, left), the first that stays inside the `w` x `h` plot area
/// and covers the least of what the panel draws (lines, markers, band edges, bar tops: see
/// `drawn_samples`) and of the notes already placed.
fn note_boxes(p: &Panel, w: f64, h: f64) -> Vec<(f64, f64, f64, f64)> {
    if p.notes.is_empty() {
        return Vec::new();
    }
    let (xs, ys) = (p.x_scale, p.y_scale);
    let (xr, yr) = (usable_range(xs, p.x_range), usable_range(ys, p.y_range));
    let (x0, x1) = (xs.to_axis(xr.0), xs.to_axis(xr.1));
    let (y0, y1) = (ys.to_axis(yr.0), ys.to_axis(yr.1));
    let px = |x: f64| (xs.to_axis(x) - x0) / (x1 - x0) * w;
    let py = |y: f64| (1.0 - (ys.to_axis(y) - y0) / (y1 - y0)) * h;
    let samples = drawn_samples(p, w, h);
    let mut placed: Vec<(f64, f64, f64, f64)> = Vec::new();
    for n in &p.notes {
        let (tw, th) = text_size(&n.text, NOTE_FONT, false);
        let (tw, th) = (f64::from(tw), f64::from(th));
        let (x, y) = (px(n.at.0), py(n.at.1));
        let g = NOTE_GAP;
        let spots = [
            (x + g, y - th - 2.0),
            (x + g, y + 2.0),
            (x - g - tw, y - th - 2.0),
            (x - g - tw, y + 2.0),
            (x - tw / 2.0, y - th - g),
            (x - tw / 2.0, y + g),
            (x + g, y - th / 2.0),
            (x - g - tw, y - th / 2.0),
        ];
        let pad = 2.0;
        let cost = |&(l, t): &(f64, f64)| {
            let inside = l >= 0.0 && t >= 0.0 && l + tw <= w && t + th <= h;
            let covered: f64 = samples
                .iter()
                .filter(|s| {
                    s.0 >= 0.5
                        && s.1 >= l - pad
                        && s.1 <= l + tw + pad
                        && s.2 >= t - pad
                        && s.2 <= t + th + pad
                })
                .map(|s| s.0)
                .sum();
            let clash = placed
                .iter()
                .filter(|b| {
                    l < b.0 + b.2 + pad
                        && b.0 < l + tw + pad
                        && t < b.1 + b.3 + pad
                        && b.1 < t + th + pad
                })
                .count() as f64;
            covered + 1e3 * clash + if inside { 0.0 } else { 1e6 }
        };
        let mut best = (f64::INFINITY, spots[0]);
        for spot in &spots {
            let c = cost(spot);
            if c < best.0 {
                best = (c, *spot);
            }
        }
        placed.push((best.1 .0, best.1 .1, tw, th));
    }
    placed
}

/// The top left corner of each note's text box (see [`note_boxes`]).
fn place_notes(p: &Panel, w: f64, h: f64) -> Vec<(f64, f64)> {
    note_boxes(p, w, h).iter().map(|b| (b.0, b.1)).collect()
}

/// The candidate inside spots of a legend of `size` in a plot area of `w` x `h` pixels: the
/// box's top left corner, in the order ties are broken.
fn legend_spots((bw, bh): (f64, f64), w: f64, h: f64) -> [(f64, f64); 8] {
    let inset = f64::from(LEGEND_INSET);
    let (left, right) = (inset, w - inset - bw);
    let (top, bottom) = (inset, h - inset - bh);
    let (cx, cy) = ((w - bw) / 2.0, (h - bh) / 2.0);
    [
        (right, top),
        (left, top),
        (right, bottom),
        (left, bottom),
        (right, cy),
        (left, cy),
        (cx, top),
        (cx, bottom),
    ]
}

/// The inside spot (top left corner, pixels from the plot area's top left) of the legend box
/// that covers nothing solid (lines, band edges, markers, bar tops, reference lines, notes:
/// weight 0.5 and more), if any: of those, the first spot of [`legend_spots`] covering the least
/// of the light rest (band and bar fills).
fn legend_spot(
    p: &Panel,
    notes: &[(f64, f64)],
    size: (f64, f64),
    w: f64,
    h: f64,
) -> Option<(f64, f64)> {
    if size.0 > w - 2.0 * f64::from(LEGEND_INSET) || size.1 > h - 2.0 * f64::from(LEGEND_INSET) {
        return None;
    }
    let mut samples = drawn_samples(p, w, h);
    // A placed note: its text box, sampled every 2 pixels along three rows.
    for (n, &(l, t)) in p.notes.iter().zip(notes) {
        let (tw, th) = text_size(&n.text, NOTE_FONT, false);
        for row in [0.0, 0.5, 1.0] {
            let mut x = l;
            while x <= l + f64::from(tw) {
                samples.push((3.0, x, t + row * f64::from(th)));
                x += 2.0;
            }
        }
    }
    // A few pixels of clearance around the box count as covered too.
    let pad = 3.0;
    let mut best: Option<(f64, (f64, f64))> = None;
    for spot in legend_spots(size, w, h) {
        let (mut solid, mut light) = (0.0, 0.0);
        for s in samples.iter().filter(|s| {
            s.1 >= spot.0 - pad
                && s.1 <= spot.0 + size.0 + pad
                && s.2 >= spot.1 - pad
                && s.2 <= spot.1 + size.1 + pad
        }) {
            if s.0 >= 0.5 {
                solid += s.0;
            } else {
                light += s.0;
            }
        }
        if solid == 0.0 && best.is_none_or(|b| light < b.0) {
            best = Some((light, spot));
        }
    }
    best.map(|b| b.1)
}

/// Draws a legend box with its top left corner at `at` (pixels in `area`).
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[(Swatch, String)],
    at: (i32, i32),
    size: (i32, i32),
    columns: &[i32],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let color = |i: usize| PALETTE[i % PALETTE.len()];
    // Entries fill the columns top to bottom, left to right.
    let rows = entries.len().div_ceil(columns.len().max(1)).max(1);
    let col_x = |c: usize| {
        columns[..c.min(columns.len())]
            .iter()
            .map(|w| w + LEGEND_COLUMN_GAP)
            .sum::<i32>()
    };
    area.draw(&Rectangle::new(
        [at, (at.0 + size.0, at.1 + size.1)],
        WHITE.mix(0.9).filled(),
    ))?;
    area.draw(&Rectangle::new(
        [at, (at.0 + size.0, at.1 + size.1)],
        RGBColor(200, 200, 200).stroke_width(1),
    ))?;
    let font = TextStyle::from((FONT, LEGEND_FONT).into_font()).pos(
        plotters::style::text_anchor::Pos::new(
            plotters::style::text_anchor::HPos::Left,
            plotters::style::text_anchor::VPos::Center,
        ),
    );
    for (i, (swatch, label)) in entries.iter().enumerate() {
        let (row, col) = ((i % rows) as i32, i / rows);
        let y = at.1 + LEGEND_PAD + LEGEND_ROW * row + LEGEND_ROW / 2;
        let x = at.0 + LEGEND_PAD + col_x(col);
        match *swatch {
            Swatch::Fill(c, alpha) => area.draw(&Rectangle::new(
                [(x, y - 5), (x + 20, y + 5)],
                color(c).mix(alpha).filled(),
            ))?,
            Swatch::Stroke(c, width, dashed) => {
                let style = color(c).stroke_width(width);
                if dashed {
                    area.draw(&PathElement::new(vec![(x, y), (x + 8, y)], style))?;
                    area.draw(&PathElement::new(vec![(x + 13, y), (x + 21, y)], style))?;
                } else {
                    area.draw(&PathElement::new(vec![(x, y), (x + 21, y)], style))?;
                }
            }
            Swatch::Dot(c) => area.draw(&Circle::new((x + 10, y), 3, color(c).filled()))?,
            Swatch::Diamond(c) => area.draw(&diamond((x + 10, y), color(c)))?,
            Swatch::Cut => area.draw(&Polygon::new(
                vec![(x + 10, y - 5), (x + 5, y + 4), (x + 15, y + 4)],
                color(6).filled(),
            ))?,
        }
        area.draw(&Text::new(label.clone(), (x + LEGEND_KEY, y), font.clone()))?;
    }
    Ok(())
}

/// Radius in pixels of the hollow diamond of [`Points`]: a simulated dot (radius 3) fits inside.
const DIAMOND: i32 = 7;

/// A hollow diamond centred at `at` (pixels).
fn diamond(at: (i32, i32), c: RGBColor) -> PathElement<(i32, i32)> {
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

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    p: &Panel,
    pl: &PanelLayout,
    lay: &Layout,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let (xs, ys) = (p.x_scale, p.y_scale);
    let (xr, yr) = (usable_range(xs, p.x_range), usable_range(ys, p.y_range));
    let (x0, x1) = (xs.to_axis(xr.0), xs.to_axis(xr.1));
    let (y0, y1) = (ys.to_axis(yr.0), ys.to_axis(yr.1));
    let xt = match (&p.x_ticks, &p.x_tick_labels) {
        (Some(t), Some(l)) => t
            .iter()
            .zip(l)
            .filter(|(v, _)| v.is_finite() && **v >= xr.0 && **v <= xr.1)
            .map(|(&v, l)| (xs.to_axis(v), l.clone()))
            .collect(),
        _ => axis_ticks(xs, xr, p.x_ticks.as_deref(), 8),
    };
    // Ticks are chosen over the data's range only (not the legend's headroom above it).
    let tick_range = (yr.0, p.y_tick_max.map_or(yr.1, |m| m.min(yr.1)));
    let mut yt = axis_ticks(ys, tick_range, None, 6);
    if p.y_integer {
        yt.retain(|t| ys.value_at(t.0).fract() == 0.0);
        for t in &mut yt {
            t.1 = format!("{}", ys.value_at(t.0));
        }
    }
    // The chart cell (caption, axes, plot) at the top left; the legend strips beside and under.
    let chart_cell = area
        .clone()
        .shrink((0, 0), (lay.cell.0 as u32, lay.cell.1 as u32));
    let (caption_area, plot_area) = chart_cell.split_vertically(lay.caption_h);
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
    let color = |i: usize| PALETTE[i % PALETTE.len()];
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
            // An interval end beyond the frame: a triangle at the frame pointing out.
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
pub fn render_heat_png(fig: &HeatFigure) -> Result<Vec<u8>, PlotError> {
    rasterise(&render_heat_svg(fig)?, fig.size, png_scale()).map_err(|e| PlotError {
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
const COLOUR_BAR_W: u32 = 100;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collapsed_ranges_are_widened_before_the_axis_code() {
        for scale in [Scale::Linear, Scale::Log2, Scale::Log10] {
            for r in [
                (50.0, 50.0),
                (0.0, 0.0),
                (1e-300, 1e-300),
                (1e300, 1e300),
                (f64::NAN, 1.0),
                (f64::INFINITY, f64::INFINITY),
                (3.0, 2.0),
                (-5.0, -5.0),
                (0.3, 0.3 + 1e-15),
            ] {
                let (lo, hi) = usable_range(scale, r);
                assert!(
                    lo.is_finite() && hi.is_finite() && hi > lo,
                    "{scale:?} {r:?}"
                );
                let (a, b) = (scale.to_axis(lo), scale.to_axis(hi));
                assert!(a.is_finite() && b.is_finite() && b > a, "{scale:?} {r:?}");
                let ticks = axis_ticks(scale, (lo, hi), None, 8);
                assert!(ticks.len() <= 64, "{scale:?} {r:?}: {}", ticks.len());
            }
        }
    }

    fn panel_with(lines: usize, ci: (f64, f64)) -> Panel {
        let mut p = Panel::new("t", "x", "y (%)");
        p.x_range = (0.0, 10.0);
        p.y_range = (0.0, 100.0);
        for i in 0..lines {
            p.lines.push(Line {
                label: Some(format!("a long legend label for line number {i}")),
                color: i,
                dashed: false,
                // Lines across the whole plot, so no inside spot is free.
                points: (0..=10)
                    .map(|x| (f64::from(x), 5.0 + 9.0 * i as f64 + f64::from(x % 2) * 40.0))
                    .collect(),
            });
        }
        p.markers.push(Markers {
            label: None,
            color: 0,
            points: vec![(5.0, 50.0, ci.0, ci.1)],
        });
        p
    }

    #[test]
    fn a_clamped_value_says_it_was_clamped() {
        // An interval reaching below the axis is cut at the frame, and the legend says so.
        let cut = panel_with(0, (-3.0, 60.0));
        assert!(legend_entries(&cut).iter().any(|e| e.1 == CUT_LABEL));
        let fig = Figure {
            title: "cut".into(),
            panels: vec![cut],
            columns: 1,
            size: (600, 400),
        };
        assert!(render_svg(&fig).unwrap().contains(CUT_LABEL));
        // Inside the range: nothing cut, nothing said.
        let whole = panel_with(0, (40.0, 60.0));
        assert!(legend_entries(&whole).iter().all(|e| e.1 != CUT_LABEL));
        let over = panel_with(0, (40.0, 100.5));
        assert!(legend_entries(&over).iter().any(|e| e.1 == CUT_LABEL));
    }

    #[test]
    fn an_outside_legend_grows_the_canvas_not_one_panel() {
        // One panel whose nine-entry legend fits nowhere inside, one with no legend: the
        // legend goes under the cells, every cell keeps the same plot size and the canvas
        // grows by the strip.
        let fig = Figure {
            title: "layout".into(),
            panels: vec![panel_with(9, (40.0, 60.0)), panel_with(0, (40.0, 60.0))],
            columns: 2,
            size: (1200, 500),
        };
        let lay = layout(&fig);
        assert_eq!(lay.panels[0].legend, LegendAt::Below);
        assert_eq!(lay.panels[1].legend, LegendAt::Nowhere);
        assert!(lay.below > 0 && lay.right == 0);
        assert_eq!(lay.size.0, 1200);
        assert!(lay.size.1 as i32 >= 500 + lay.below - 1);
        // The legend's columns fit under the plot.
        assert!(lay.panels[0].legend_size.0 <= lay.cell.0 - 2 * CHART_MARGIN - Y_LABEL_AREA);
        assert!(lay.panels[0].legend_columns.len() > 1);
        let (png, svg) = render_both(&fig).unwrap();
        assert!(!png.is_empty() && svg.contains("line number 8"));
    }

    #[test]
    fn long_captions_wrap_to_two_lines_at_one_size() {
        let long = "model judged (a = 0.15, random ties, pass@1 23.3% graded, 19.7% true), verifier threshold tpr 0.85 fpr 0.12 random, graded with fpr 0.05 fnr 0.02";
        let lines = fit_captions(&[long, "short"], 740);
        assert!(lines[0].len() >= 2, "{lines:?}");
        assert_eq!(lines[0].join(" "), long);
        assert_eq!(lines[1], vec!["short".to_string()]);
        assert!(lines[0]
            .iter()
            .all(|l| text_size(l, CAPTION_SIZE, false).0 <= 740));
        // Far too long for three lines: the third is cut with an ellipsis, inside the room.
        let huge = long.repeat(4);
        let lines = fit_captions(&[&huge], 740);
        assert_eq!(lines[0].len(), CAPTION_MAX_LINES, "{lines:?}");
        assert!(lines[0][2].ends_with('…'));
        assert!(lines[0]
            .iter()
            .all(|l| text_size(l, CAPTION_SIZE, false).0 <= 740));
    }

    #[test]
    fn a_long_title_wraps_at_one_size_instead_of_shrinking() {
        let title = "curves: lines exact, dots simulated with 95% CI (4000 votes per problem), bands ±1 seed SD of one run · scenario note · seed 20240601";
        assert_eq!(fit_title(title, 2000), vec![title.to_string()]);
        let lines = fit_title(title, 900);
        assert!(lines.len() >= 2, "{lines:?}");
        assert!(lines.iter().all(|l| title_fits(l, 900)), "{lines:?}");
        assert_eq!(
            lines.join(" ").replace(" ·", "").replace("  ", " "),
            title.replace(" ·", "")
        );
    }

    #[test]
    fn tick_labels_never_repeat() {
        for (lo, hi) in [
            (0.0105, 0.0112),
            (0.0, 100.0),
            (52.0, 53.0),
            (0.0, 1e-6),
            (9e5, 1.2e6),
        ] {
            let ticks = axis_ticks(Scale::Linear, (lo, hi), None, 6);
            assert!(ticks.len() >= 2, "{lo} {hi}");
            let labels: Vec<&String> = ticks.iter().map(|t| &t.1).collect();
            let mut unique = labels.clone();
            unique.dedup();
            assert_eq!(labels, unique, "{lo} {hi}");
        }
    }
}
