//! Glyph coverage, cached: each glyph shape (face, glyph, the device size and orientation) is
//! scan-converted once per thread, and every text that draws it adds the shape's coverage at
//! its position to the pixels, instead of filling the text's outlines afresh.
//!
//! The coverage is tiny-skia's: its anti-aliased fill samples each pixel on a 4 x 4 grid of
//! "superpixels" (scan-converting the path at four times the resolution) and turns the
//! samples of each row into coverage as [`add_span`] does. A shape is scan-converted once at
//! that resolution and kept as the runs of superpixels it covers; a glyph placed a whole
//! number of superpixels away covers the same runs, shifted. So each glyph's position is
//! rounded to the nearest quarter pixel (it moves by at most 1/8 pixel in x and in y), and
//! its coverage is read from the runs at one of the 16 quarter-pixel phases, itself cached.
//! The coverages of a text's glyphs are summed and the sum blended once, with the colour
//! arithmetic of tiny-skia's anti-aliased blitter: where the glyphs do not overlap, the sum
//! is what filling the text as one path gives at the rounded positions.
//!
//! The output depends on nothing but the figure: a cached shape or phase is what computing
//! it afresh gives, so the pixels are the same for any number of threads.
use std::cell::RefCell;
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::rc::Rc;

use resvg::tiny_skia::{FillRule, Mask, Path, PixmapMut, Transform};

/// Superpixels per pixel along each axis (tiny-skia's `SUPERSAMPLE_SHIFT` of 2).
const SCALE: i32 = 4;

/// Shapes kept per thread before the cache starts afresh (a process drawing at many sizes
/// would otherwise keep every one).
const MAX_SHAPES: usize = 4096;

/// (bold, glyph id, the device transform's linear part as bits).
type ShapeKey = (bool, u16, [u32; 4]);

/// One glyph scan-converted at four times the device resolution.
struct Shape {
    /// The superpixel of the runs' (0, 0), relative to the glyph's origin.
    x0: i32,
    y0: i32,
    /// Superpixel columns and rows the runs span.
    width: i32,
    height: i32,
    /// The covered runs `[start, end)` of each superpixel row: row r's are
    /// `runs[row_start[r]..row_start[r + 1]]`.
    runs: Vec<(u16, u16)>,
    row_start: Vec<u32>,
    /// Coverage at pixel resolution by sub-pixel phase (`4 * ry + rx`), made on first use.
    phases: [Option<Rc<Tile>>; 16],
}

/// A glyph's coverage (0 to 255 each) on `width` x `height` pixels.
struct Tile {
    width: usize,
    height: usize,
    coverage: Vec<u16>,
}

thread_local! {
    static SHAPES: RefCell<HashMap<ShapeKey, Shape>> = RefCell::new(HashMap::new());
    /// The summed coverage of the text being drawn.
    static SUM: RefCell<Vec<u16>> = const { RefCell::new(Vec::new()) };
}

/// A glyph to draw: its face and id, and its transform from font units to pixels.
pub(super) struct Placed {
    pub(super) bold: bool,
    pub(super) id: u16,
    pub(super) transform: Transform,
}

/// A glyph's coverage and the pixel its top-left corner lands on.
type Landing = (Rc<Tile>, i64, i64);

/// Draws `glyphs` (one text) in opaque `color` over `pixmap`, anti-aliased; `outline` gives
/// a glyph's outline in font units (asked only for a shape not yet cached).
pub(super) fn draw(
    glyphs: &[Placed],
    color: [u8; 3],
    outline: impl Fn(bool, u16) -> Option<Path>,
    pixmap: &mut PixmapMut,
) {
    SHAPES.with(|shapes| {
        let mut shapes = shapes.borrow_mut();
        if shapes.len() > MAX_SHAPES {
            shapes.clear();
        }
        let mut landings = Vec::with_capacity(glyphs.len());
        for g in glyphs {
            let t = g.transform;
            let key = (g.bold, g.id, [t.sx, t.ky, t.kx, t.sy].map(f32::to_bits));
            let (qx, qy) = ((t.tx * 4.0).round(), (t.ty * 4.0).round());
            // Off any figure by far (or not finite): nothing of it could be seen.
            if !(qx.abs() < 1e8 && qy.abs() < 1e8) {
                continue;
            }
            let shape = match shapes.entry(key) {
                Entry::Occupied(e) => e.into_mut(),
                Entry::Vacant(e) => match outline(g.bold, g.id).and_then(|p| scan(&p, t)) {
                    Some(s) => e.insert(s),
                    None => continue,
                },
            };
            let (sx, sy) = (
                qx as i64 + i64::from(shape.x0),
                qy as i64 + i64::from(shape.y0),
            );
            let (rx, ry) = (sx.rem_euclid(4) as usize, sy.rem_euclid(4) as usize);
            let phase = 4 * ry + rx;
            let tile = match &shape.phases[phase] {
                Some(t) => Rc::clone(t),
                None => {
                    let t = Rc::new(tile(shape, rx, ry));
                    shape.phases[phase] = Some(Rc::clone(&t));
                    t
                }
            };
            landings.push((tile, sx.div_euclid(4), sy.div_euclid(4)));
        }
        SUM.with(|sum| blend(&landings, color, pixmap, &mut sum.borrow_mut()));
    });
}

/// Scan-converts `outline` under `t`'s linear part at four times the resolution: `None` when
/// it covers nothing.
fn scan(outline: &Path, t: Transform) -> Option<Shape> {
    let linear = Transform::from_row(t.sx, t.ky, t.kx, t.sy, 0.0, 0.0);
    let up = outline
        .clone()
        .transform(linear.post_scale(SCALE as f32, SCALE as f32))?;
    let b = up.bounds();
    let x0 = b.left().floor() as i32 - 1;
    let y0 = b.top().floor() as i32 - 1;
    let width = b.right().ceil() as i32 - x0 + 1;
    let height = b.bottom().ceil() as i32 - y0 + 1;
    if width > i32::from(u16::MAX) || height > 1 << 20 {
        return None;
    }
    let mut mask = Mask::new(width as u32, height as u32)?;
    mask.fill_path(
        &up,
        FillRule::Winding,
        false,
        Transform::from_translate(-x0 as f32, -y0 as f32),
    );
    let mut runs = Vec::new();
    let mut row_start = Vec::with_capacity(height as usize + 1);
    for row in mask.data().chunks_exact(width as usize) {
        row_start.push(runs.len() as u32);
        let mut i = 0;
        while i < row.len() {
            if row[i] == 0 {
                i += 1;
                continue;
            }
            let start = i;
            while i < row.len() && row[i] != 0 {
                i += 1;
            }
            runs.push((start as u16, i as u16));
        }
    }
    row_start.push(runs.len() as u32);
    Some(Shape {
        x0,
        y0,
        width,
        height,
        runs,
        row_start,
        phases: Default::default(),
    })
}

/// The shape's coverage with its runs shifted `rx`, `ry` superpixels right and down.
fn tile(shape: &Shape, rx: usize, ry: usize) -> Tile {
    let width = (rx + shape.width as usize).div_ceil(4);
    let height = (ry + shape.height as usize).div_ceil(4);
    let mut coverage = vec![0u16; width * height];
    for r in 0..shape.height as usize {
        let y = ry + r;
        let row = &mut coverage[(y / 4) * width..(y / 4 + 1) * width];
        let runs = &shape.runs[shape.row_start[r] as usize..shape.row_start[r + 1] as usize];
        for &(start, end) in runs {
            add_span(row, rx + usize::from(start), rx + usize::from(end), y % 4);
        }
    }
    Tile {
        width,
        height,
        coverage,
    }
}

/// Adds superpixels `[start, end)` of sub-row `sub` (0 to 3) to a pixel row's coverage as
/// tiny-skia's supersampling blitter does: 16 for each covered superpixel of a partly
/// covered pixel, 64 for a pixel the run covers whole (63 in the last sub-row, so that a
/// pixel covered whole sums to 255).
fn add_span(row: &mut [u16], start: usize, end: usize, sub: usize) {
    let full = 64 - ((sub as u16 + 1) >> 2);
    let (first, last) = (start / 4, end / 4);
    if first == last {
        row[first] += 16 * (end - start) as u16;
        return;
    }
    let mut x = first;
    if !start.is_multiple_of(4) {
        row[x] += 16 * (4 - start % 4) as u16;
        x += 1;
    }
    for c in &mut row[x..last] {
        *c += full;
    }
    if !end.is_multiple_of(4) {
        row[last] += 16 * (end % 4) as u16;
    }
}

/// Sums the landed tiles over their bounding box and blends `color` by the sum (at most 255)
/// into the pixmap: where it is 255 the colour replaces the pixel, elsewhere each channel
/// becomes `(d * (255 - a) + c * a + 255) >> 8`, tiny-skia's lerp.
fn blend(tiles: &[Landing], color: [u8; 3], pixmap: &mut PixmapMut, sum: &mut Vec<u16>) {
    let Some(left) = tiles.iter().map(|t| t.1).min() else {
        return;
    };
    let top = tiles.iter().map(|t| t.2).min().unwrap_or(0);
    let right = tiles
        .iter()
        .map(|t| t.1 + t.0.width as i64)
        .max()
        .unwrap_or(0);
    let bottom = tiles
        .iter()
        .map(|t| t.2 + t.0.height as i64)
        .max()
        .unwrap_or(0);
    // Only the part on the pixmap.
    let (pw, ph) = (i64::from(pixmap.width()), i64::from(pixmap.height()));
    let (cl, ct, cr, cb) = (left.max(0), top.max(0), right.min(pw), bottom.min(ph));
    if cl >= cr || ct >= cb {
        return;
    }
    let w = (cr - cl) as usize;
    sum.clear();
    sum.resize(w * (cb - ct) as usize, 0);
    for (t, x, y) in tiles {
        let (x, y) = (*x, *y);
        for ty in 0..t.height as i64 {
            let py = y + ty;
            if py < ct || py >= cb {
                continue;
            }
            let src = &t.coverage[ty as usize * t.width..(ty as usize + 1) * t.width];
            let out = &mut sum[(py - ct) as usize * w..(py - ct + 1) as usize * w];
            for (tx, &c) in src.iter().enumerate() {
                let px = x + tx as i64;
                if c != 0 && px >= cl && px < cr {
                    out[(px - cl) as usize] += c;
                }
            }
        }
    }
    let stride = pw as usize * 4;
    let data = pixmap.data_mut();
    for (row, y) in sum.chunks_exact(w).zip(ct as usize..) {
        let line = &mut data[y * stride + cl as usize * 4..y * stride + cr as usize * 4];
        for (&s, px) in row.iter().zip(line.chunks_exact_mut(4)) {
            let a = s.min(255);
            if a == 0 {
                continue;
            }
            if a == 255 {
                px.copy_from_slice(&[color[0], color[1], color[2], 255]);
                continue;
            }
            let lerp =
                |d: u8, c: u8| ((u16::from(d) * (255 - a) + u16::from(c) * a + 255) >> 8) as u8;
            px[0] = lerp(px[0], color[0]);
            px[1] = lerp(px[1], color[1]);
            px[2] = lerp(px[2], color[2]);
            px[3] = lerp(px[3], 255);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use resvg::tiny_skia::{Paint, PathBuilder, Pixmap};

    /// `path` drawn in `color` over a white `w` x `h` pixmap, by tiny-skia's own anti-aliased
    /// fill and through the cache, each placed by `t`.
    fn both(path: &Path, t: Transform, color: [u8; 3], (w, h): (u32, u32)) -> (Vec<u8>, Vec<u8>) {
        let mut own = Pixmap::new(w, h).expect("size");
        own.fill(resvg::tiny_skia::Color::WHITE);
        let mut paint = Paint::default();
        paint.set_color_rgba8(color[0], color[1], color[2], 255);
        paint.anti_alias = true;
        own.fill_path(path, &paint, FillRule::Winding, t, None);
        let mut cached = Pixmap::new(w, h).expect("size");
        cached.fill(resvg::tiny_skia::Color::WHITE);
        let placed = [Placed {
            bold: false,
            id: 9999,
            transform: t,
        }];
        draw(
            &placed,
            color,
            |_, _| Some(path.clone()),
            &mut cached.as_mut(),
        );
        SHAPES.with(|s| s.borrow_mut().clear());
        (own.data().to_vec(), cached.data().to_vec())
    }

    #[test]
    fn straight_edged_shapes_at_quarter_pixels_get_tiny_skias_own_pixels() {
        let mut tri = PathBuilder::new();
        tri.move_to(0.3, 0.1);
        tri.line_to(7.9, 3.2);
        tri.line_to(2.2, 6.7);
        tri.close();
        let tri = tri.finish().expect("triangle");
        let rect = PathBuilder::from_rect(
            resvg::tiny_skia::Rect::from_ltrb(0.25, 0.5, 5.75, 3.25).expect("rect"),
        );
        let mut rotated = Transform::from_rotate(90.0);
        rotated.tx = 9.0;
        for path in [&tri, &rect] {
            for (dx, dy) in [(1.0, 1.0), (2.25, 1.5), (3.75, 2.75), (1.5, 4.0)] {
                for t in [
                    Transform::from_translate(dx, dy),
                    Transform::from_scale(1.5, 1.5).post_translate(dx, dy),
                    rotated.post_translate(dx, dy),
                ] {
                    let (own, cached) = both(path, t, [0, 114, 178], (24, 20));
                    assert_eq!(own, cached, "{t:?}");
                }
            }
        }
    }

    #[test]
    fn a_curved_glyph_off_the_quarter_pixel_grid_moves_by_at_most_an_eighth_of_a_pixel() {
        // The "@" of DejaVu Sans Bold at 30 px, at positions 0 to 1/8 pixel off the grid.
        let id = super::super::face(true).glyph_index('@').expect("@").0;
        let outline = super::super::with_outline(true, id, |p| p.cloned()).expect("@ outline");
        let size = 30.0 / 2048.0;
        for off in [0.0, 0.05, 0.124] {
            let t = Transform::from_row(size, 0.0, 0.0, -size, 3.0 + off, 32.0 - off);
            let (own, cached) = both(&outline, t, [0, 0, 0], (40, 40));
            // Where the cache's glyph sits 1/8 pixel or less away, a pixel's coverage changes
            // by the samples the edges cross: a few of 16 on the edges, none inside.
            let diff: Vec<u8> = own
                .chunks_exact(4)
                .zip(cached.chunks_exact(4))
                .map(|(a, b)| a[0].abs_diff(b[0]))
                .collect();
            let inked = own.chunks_exact(4).filter(|p| p[0] < 255).count();
            let differ = diff.iter().filter(|&&d| d > 0).count();
            let max = diff.iter().copied().max().unwrap_or(0);
            assert!(inked > 200, "{inked}");
            assert!(max <= 128, "offset {off}: max difference {max}");
            assert!(
                2 * differ <= inked,
                "offset {off}: {differ} of {inked} differ"
            );
            if off == 0.0 {
                // On the grid only the curves differ: scan-converted at four times the
                // resolution, they are cut into finer straight pieces. Up to 4 samples a pixel.
                assert!(max <= 64 && 4 * differ <= inked, "{max} {differ}");
            }
        }
    }
}
