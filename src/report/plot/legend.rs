//! Legends and notes: their entries, the drawn samples they must not cover, and where they go.
use plotters::coord::Shift;
use plotters::prelude::*;

use super::*;

/// What a legend entry shows next to its label.
#[derive(Debug, Clone, Copy)]
pub(super) enum Swatch {
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
pub(super) fn has_cut(p: &Panel) -> bool {
    let yr = usable_range(p.y_scale, p.y_range);
    p.markers
        .iter()
        .flat_map(|m| &m.points)
        .any(|&(_, _, lo, hi)| (hi > yr.1 && hi.is_finite()) || (lo < yr.0 && lo.is_finite()))
}

/// The legend entries of a panel, in drawing order.
pub(super) fn legend_entries(p: &Panel) -> Vec<(Swatch, String)> {
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
pub(super) const LEGEND_FONT: f64 = 13.0;
pub(super) const LEGEND_ROW: i32 = 18;
pub(super) const LEGEND_PAD: i32 = 7;
/// Width of a legend swatch and the gap after it.
pub(super) const LEGEND_KEY: i32 = 30;
/// Gap between the legend and the plot's frame.
pub(super) const LEGEND_INSET: i32 = 8;

/// Things a panel draws, as weighted sample points in pixels from the plot area's top left
/// corner (`w` x `h` pixels): what the legend placement counts under each candidate box.
pub(super) fn drawn_samples(p: &Panel, w: f64, h: f64) -> Vec<(f64, f64, f64)> {
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
pub(super) const NOTE_FONT: f64 = 13.0;
pub(super) const NOTE_GAP: f64 = 6.0;

/// The text box (left, top, width, height in pixels) of each of a panel's notes, placed one
/// after another: of the candidate spots beside the point (upper right, lower right, upper left,
/// lower left, above, below, right, left), the first that stays inside the `w` x `h` plot area
/// and covers the least of what the panel draws (lines, markers, band edges, bar tops: see
/// `drawn_samples`) and of the notes already placed.
pub(super) fn note_boxes(p: &Panel, w: f64, h: f64) -> Vec<(f64, f64, f64, f64)> {
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
pub(super) fn place_notes(p: &Panel, w: f64, h: f64) -> Vec<(f64, f64)> {
    note_boxes(p, w, h).iter().map(|b| (b.0, b.1)).collect()
}

/// The candidate inside spots of a legend of `size` in a plot area of `w` x `h` pixels: the
/// box's top left corner, in the order ties are broken.
pub(super) fn legend_spots((bw, bh): (f64, f64), w: f64, h: f64) -> [(f64, f64); 8] {
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
pub(super) fn legend_spot(
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
pub(super) fn draw_legend<DB: DrawingBackend>(
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
