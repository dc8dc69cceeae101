//! Pixel layout, decided before drawing: text sizes, wrapped titles and captions, equal chart
//! cells and where each legend goes.
use plotters::prelude::*;
use plotters::style::FontStyle;

use super::*;

/// Width and height of `text` in pixels at `size` (bold or not), from the embedded font.
pub(super) fn text_size(text: &str, size: f64, bold: bool) -> (i32, i32) {
    // Unregistered, the font measures every text as 0 x 0 (and layout would then fit anything).
    super::register_fonts();
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
pub(super) enum LegendAt {
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
pub(super) struct PanelLayout {
    /// Caption lines.
    pub(super) caption: Vec<String>,
    /// Legend entries, their box size in pixels, the widths of its columns (none: one column)
    /// and the place.
    pub(super) entries: Vec<(Swatch, String)>,
    pub(super) legend_size: (i32, i32),
    pub(super) legend_columns: Vec<i32>,
    pub(super) legend: LegendAt,
    /// Each note's text box: top left corner in pixels from the plot area's top left.
    pub(super) notes: Vec<(f64, f64)>,
}

/// The pixel layout of a [`Figure`], decided before drawing: every panel gets a chart cell of
/// the same size (so plots compared side by side have equal widths and heights), captions
/// share one height, and legends that fit nowhere inside their plot go to a
/// strip right of (or under) every cell, which grows the canvas instead of shrinking one plot.
#[derive(Debug, Clone)]
pub(super) struct Layout {
    /// Canvas size in pixels.
    pub(super) size: (u32, u32),
    /// The title's lines at [`TITLE_SIZE`].
    pub(super) title_lines: Vec<String>,
    /// One chart cell (caption, axes and plot) in pixels.
    pub(super) cell: (i32, i32),
    /// Width of the strip right of each cell and height of the strip under it.
    pub(super) right: i32,
    pub(super) below: i32,
    /// The height reserved for captions (at [`CAPTION_SIZE`]) in every cell.
    pub(super) caption_h: i32,
    pub(super) panels: Vec<PanelLayout>,
}

/// Margin around a chart, and the sizes of its x and y label areas, in pixels.
pub(super) const CHART_MARGIN: i32 = 12;
pub(super) const X_LABEL_AREA: i32 = 48;
pub(super) const Y_LABEL_AREA: i32 = 64;
/// Gap between legend columns.
pub(super) const LEGEND_COLUMN_GAP: i32 = 16;

/// The one font size of every figure title (bold) and of every panel caption, in pixels: a
/// long title or caption wraps onto more lines instead of shrinking, so every figure reads at
/// the same sizes.
pub const TITLE_SIZE: f64 = 22.0;
pub const CAPTION_SIZE: f64 = 17.0;

/// Most lines a panel caption takes; the last is cut at a word with an ellipsis beyond them.
pub(super) const CAPTION_MAX_LINES: usize = 3;

/// `text` in one line if it fits `room` pixels at `size`, else in two lines split at the word
/// that balances them, if that fits.
pub(super) fn wrap_balanced(text: &str, size: f64, bold: bool, room: i32) -> Option<Vec<String>> {
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
pub(super) fn wrap_greedy(text: &str, size: f64, bold: bool, room: i32) -> Vec<String> {
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
pub(super) fn fit_captions(titles: &[&str], room: i32) -> Vec<Vec<String>> {
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
pub(super) fn layout(fig: &Figure) -> Layout {
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
pub(super) fn title_fits(line: &str, w0: i32) -> bool {
    let w = text_size(line, TITLE_SIZE, true).0;
    w + w / 12 + 32 <= w0
}

/// The figure title's lines at [`TITLE_SIZE`]: one line if it fits the width; else two lines
/// split at the " · " that balances them, if both fit; else its " · "-separated parts packed
/// into as few lines as fit (a part too wide for a line wrapped at its words).
pub(super) fn fit_title(title: &str, w0: i32) -> Vec<String> {
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
pub(super) fn title_lines_block(lines: usize) -> i32 {
    let h = text_size("Ag", TITLE_SIZE, true).1;
    let line_h = (f64::from(h) * 1.2).ceil() as i32;
    line_h * lines as i32 + 2 * (h / 2).min(5)
}
