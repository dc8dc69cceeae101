//! Figures: a plain description of what to draw ([`Figure`]), rendered to PNG and SVG with
//! plotters and an embedded DejaVu Sans font (no system font libraries). Rendering never
//! computes a statistic: every number it draws comes finished in the [`Figure`].
use std::sync::Once;

use plotters::prelude::*;
use plotters::style::FontStyle;

mod chart;
mod heat;
mod layout;
mod legend;
mod ticks;

pub use super::raster::rasterise;
use chart::*;
pub(crate) use heat::draw_colour_bar;
pub use heat::{render_heat_png, render_heat_svg, HeatFigure, HeatPanel};
use layout::*;
pub use layout::{CAPTION_SIZE, TITLE_SIZE};
pub use legend::CUT_LABEL;
use legend::*;
pub use ticks::usable_range;
use ticks::*;
pub(crate) use ticks::{format_linear, nice_ticks, TickAxis};

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
pub fn render_png(fig: &Figure, raster: Raster) -> Result<Vec<u8>, PlotError> {
    let (svg, size) = svg_and_size(fig)?;
    rasterise(&svg, size, raster.scale).map_err(|e| err(fig, e))
}

/// How PNGs are rasterised: pixels per unit of the figure's size (the `--dpi` flag over 96;
/// 1 by default). SVGs are resolution-free and unaffected. Passed to every renderer that writes
/// a PNG, with the figure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Raster {
    pub scale: f32,
}

impl Raster {
    /// One pixel per unit (96 dpi).
    pub const DEFAULT: Raster = Raster { scale: 1.0 };

    /// The raster of `--dpi`: dpi / 96 pixels per unit; the default without the flag.
    pub fn at_dpi(dpi: Option<u16>) -> Raster {
        dpi.map_or(Raster::DEFAULT, |d| Raster {
            scale: f32::from(d) / 96.0,
        })
    }
}

impl Default for Raster {
    fn default() -> Self {
        Raster::DEFAULT
    }
}

/// Renders the figure once as SVG and rasterises that SVG: (PNG bytes, SVG document).
///
/// # Errors
/// [`PlotError`] as [`render_png`].
pub fn render_both(fig: &Figure, raster: Raster) -> Result<(Vec<u8>, String), PlotError> {
    let (svg, size) = svg_and_size(fig)?;
    let png = rasterise(&svg, size, raster.scale).map_err(|e| err(fig, e))?;
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
        let (png, svg) = render_both(&fig, Raster::DEFAULT).unwrap();
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
