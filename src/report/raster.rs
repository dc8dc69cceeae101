//! SVG to PNG: every figure's SVG document rasterised by resvg with the embedded DejaVu Sans and
//! encoded as an opaque RGB PNG. Free of statistics and of layout (that is [`super::plot`]).
//!
//! Three things keep a figure cheap: the texts are shaped and drawn without the SVG parser,
//! from glyph coverage cached per thread (see [`super::raster_text`]; usvg's text layout and
//! drawing were about half of a figure's time), each translucent fill-only shape is read with
//! `fill-opacity` in place of `opacity` (see [`raster_input`]), and the encoder (see [`png`])
//! filters every row with Paeth instead of trying all five filters per row, reading the
//! pixmap's rows directly.
//!
//! Each worker thread keeps its pixel buffers from one figure to the next: a figure's pixmap is
//! megabytes, and a fresh allocation of that size is a fresh mapping whose every page faults
//! when first written. The buffers are overwritten in full before use (the pixmap filled
//! white, the encoder's rows written from it), so the PNG bytes do not depend on what they
//! held.
use std::borrow::Cow;
use std::cell::RefCell;
use std::sync::{Arc, OnceLock};

use resvg::usvg::fontdb::Database;

use super::raster_text;
use resvg::{tiny_skia, usvg};

mod png;
mod segments;

/// The fonts of every figure: the embedded DejaVu Sans, regular and bold, loaded once.
fn font_db() -> Arc<Database> {
    static DB: OnceLock<Arc<Database>> = OnceLock::new();
    DB.get_or_init(|| {
        let mut db = Database::new();
        db.load_font_data(dejavu::sans::regular().to_vec());
        db.load_font_data(dejavu::sans::bold().to_vec());
        db.set_sans_serif_family("DejaVu Sans");
        Arc::new(db)
    })
    .clone()
}

/// A thread's pixel buffers: the RGBA pixmap and the encoder's rows.
#[derive(Default)]
struct Buffers {
    rgba: Vec<u8>,
    rows: png::Rows,
}

thread_local! {
    static BUFFERS: RefCell<Buffers> = RefCell::new(Buffers::default());
}

/// Rasterises an SVG document of `size` pixels at `scale` (2.0: twice the pixels) to PNG.
///
/// # Errors
/// The parser's or the encoder's reason.
pub fn rasterise(svg: &str, size: (u32, u32), scale: f32) -> Result<Vec<u8>, String> {
    let opt = usvg::Options {
        font_family: "DejaVu Sans".into(),
        fontdb: font_db(),
        ..usvg::Options::default()
    };
    let input = raster_input(svg);
    let (doc, texts) = raster_text::split_texts(&segments::merge(&input, scale));
    let tree = usvg::Tree::from_str(&doc, &opt).map_err(|e| e.to_string())?;
    let w = ((size.0 as f32) * scale).round().max(1.0) as u32;
    let h = ((size.1 as f32) * scale).round().max(1.0) as u32;
    let scene = Scene {
        tree: &tree,
        texts: &texts,
    };
    BUFFERS.with(|cell| match cell.try_borrow_mut() {
        Ok(mut b) => draw(&scene, (w, h), scale, &mut b),
        // Not reachable (nothing here calls back into it); fresh buffers give the same bytes.
        Err(_) => draw(&scene, (w, h), scale, &mut Buffers::default()),
    })
}

/// What one figure draws: the parsed document, then the texts drawn without it.
struct Scene<'a> {
    tree: &'a usvg::Tree,
    texts: &'a [(raster_text::TextRun, Vec<raster_text::Glyph>)],
}

/// Draws `scene` into `b`'s pixmap of w x h pixels and encodes it. The texts go last: a shape
/// that came after a text in the document would now lie under it, but the figures' layouts
/// keep shapes off their texts (legends are placed clear of notes and labels), and the PNGs
/// of the built-in scenarios have the same pixels as when usvg drew the texts in order.
fn draw(
    scene: &Scene<'_>,
    (w, h): (u32, u32),
    scale: f32,
    b: &mut Buffers,
) -> Result<Vec<u8>, String> {
    let no_room = || format!("cannot allocate {w}x{h} pixels");
    let pixels = (w as usize).checked_mul(h as usize).ok_or_else(no_room)?;
    b.rgba.resize(pixels.checked_mul(4).ok_or_else(no_room)?, 0);
    let mut pixmap =
        tiny_skia::PixmapMut::from_bytes(&mut b.rgba[..pixels * 4], w, h).ok_or_else(no_room)?;
    pixmap.fill(tiny_skia::Color::WHITE);
    let root = tiny_skia::Transform::from_scale(scale, scale);
    resvg::render(scene.tree, root, &mut pixmap);
    for (run, glyphs) in scene.texts {
        raster_text::draw(glyphs, run, root, &mut pixmap);
    }
    // Opaque RGB: the figure has a white background.
    png::encode(&b.rgba[..pixels * 4], (w, h), &mut b.rows)
}

/// The SVG as the rasteriser reads it: each translucent shape that is only filled (a `rect`,
/// `polygon`, `circle` or `path` element on a line of its own, as the SVG backend writes
/// them, with no stroke) gets its `opacity` as `fill-opacity`. For such a shape the two mean
/// the same picture, but resvg draws a shape with `opacity` below 1 into a layer of its own
/// and blends the layer in floating point, which took about a fifth of the rasterising time of
/// a figure with bands or bars; with `fill-opacity` it blends the shape as it draws it. The
/// colours may differ from the layer's by rounding (at most 2 of 255, in parts of bands and bars). The SVG
/// written to disk is unchanged.
///
/// It also leaves out a white background drawn first (the backend's full-canvas `rect`): the
/// pixmap starts white, and filling it white again took a tenth of the drawing time.
pub(crate) fn raster_input(svg: &str) -> Cow<'_, str> {
    let mut lines = svg.split_inclusive('\n');
    let Some(head) = lines.next() else {
        return Cow::Borrowed(svg);
    };
    let mut lines = lines.peekable();
    let white = lines.peek().is_some_and(|l| {
        l.starts_with("<rect ")
            && l.trim_end()
                .ends_with(" opacity=\"1\" fill=\"#FFFFFF\" stroke=\"none\"/>")
    });
    if !white && !svg.contains(" opacity=\"0.") {
        return Cow::Borrowed(svg);
    }
    if white {
        lines.next();
    }
    let mut out = String::with_capacity(svg.len() + 256);
    out.push_str(head);
    for line in lines {
        let shape = ["<rect ", "<polygon ", "<circle ", "<path "]
            .iter()
            .any(|t| line.starts_with(t));
        let fill_only = shape
            && !line.contains("fill-opacity=")
            && !line.contains("fill=\"none\"")
            && (line.contains("stroke=\"none\"") || !line.contains("stroke="));
        match line.find(" opacity=\"0.") {
            Some(at) if fill_only => {
                out.push_str(&line[..at]);
                out.push_str(" fill-opacity=");
                out.push_str(&line[at + " opacity=".len()..]);
            }
            _ => out.push_str(line),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::plot::{
        render_heat_svg, render_svg, Band, Figure, HeatFigure, HeatPanel, Line, Markers, Note,
        Panel, Scale,
    };

    /// What resvg draws from the whole document (its white background included, texts laid
    /// out by usvg), as RGB. The test figures' translucent shapes are all fill-only, so
    /// reading their `opacity` as `fill-opacity` is [`raster_input`]'s rewrite.
    fn usvg_rgb(svg: &str, scale: f32) -> (u32, u32, Vec<u8>) {
        let opt = usvg::Options {
            font_family: "DejaVu Sans".into(),
            fontdb: font_db(),
            ..usvg::Options::default()
        };
        let doc = svg.replace(" opacity=\"0.", " fill-opacity=\"0.");
        let tree = usvg::Tree::from_str(&doc, &opt).expect("parses");
        let w = (tree.size().width() * scale).round() as u32;
        let h = (tree.size().height() * scale).round() as u32;
        let mut pixmap = tiny_skia::Pixmap::new(w, h).expect("size");
        pixmap.fill(tiny_skia::Color::WHITE);
        let root = tiny_skia::Transform::from_scale(scale, scale);
        resvg::render(&tree, root, &mut pixmap.as_mut());
        let rgb = pixmap
            .data()
            .chunks_exact(4)
            .flat_map(|p| [p[0], p[1], p[2]]);
        (w, h, rgb.collect())
    }

    fn png_rgb(png: &[u8]) -> (u32, u32, Vec<u8>) {
        let img = image::load_from_memory_with_format(png, image::ImageFormat::Png)
            .expect("decodes")
            .to_rgb8();
        (img.width(), img.height(), img.into_raw())
    }

    fn test_figure() -> Figure {
        let mut p = Panel::new(
            "pass@k ± its SD · a caption long enough to wrap onto a second line at this width",
            "k (samples per problem, log2 scale)",
            "benchmark score (%)",
        );
        p.x_scale = Scale::Log2;
        p.x_range = (0.8, 80.0);
        p.y_range = (0.0, 100.0);
        p.lines.push(Line {
            label: Some("exact <pass@k> & 'maj@k'".into()),
            color: 0,
            dashed: false,
            points: vec![(1.0, 20.0), (8.0, 55.0), (64.0, 80.0)],
        });
        p.lines.push(Line {
            label: Some("large-k limit".into()),
            color: 1,
            dashed: true,
            points: vec![(1.0, 90.0), (64.0, 90.0)],
        });
        p.markers.push(Markers {
            label: Some("simulated (95% CI)".into()),
            color: 0,
            points: vec![(2.0, 31.0, 25.0, 37.0), (16.0, 66.0, 60.0, 72.0)],
        });
        p.bands.push(Band {
            label: Some("±1 seed SD".into()),
            color: 2,
            points: vec![(1.0, 10.0, 30.0), (64.0, 70.0, 90.0)],
        });
        p.notes.push(Note {
            at: (8.0, 55.0),
            text: "k = 8: 55.0%".into(),
        });
        let mut q = Panel::new("מודל  two spaces (left to usvg)", "x", "y");
        q.lines.push(Line {
            label: Some("Hebrew: שלום".into()),
            color: 3,
            dashed: false,
            points: vec![(0.0, 0.2), (1.0, 0.7)],
        });
        Figure {
            title: "texts drawn without usvg · scenario test · seed 1".into(),
            panels: vec![p, q],
            columns: 2,
            size: (1300, 560),
        }
    }

    /// The test figure and a heat map, as SVG.
    fn test_documents() -> [String; 2] {
        let svg = render_svg(&test_figure()).expect("svg");
        let heat = render_heat_svg(&HeatFigure {
            title: "heat · bold title".into(),
            panels: vec![HeatPanel {
                title: "P(B ≤ A) (%)".into(),
                x_label: "N".into(),
                y_label: "k".into(),
                columns: vec!["30".into(), "100".into()],
                rows: vec!["1".into(), "4".into()],
                values: vec![vec![0.2, 0.9], vec![0.5, 0.1]],
                labels: vec![
                    vec!["20".into(), "90".into()],
                    vec!["50".into(), "10".into()],
                ],
                outlined: vec![vec![false, true], vec![false, false]],
                range: (0.0, 1.0),
                scale_label: "P(B ≤ A) (%)".into(),
                scale_factor: 100.0,
                footnote: "outlined: 80% or more".into(),
            }],
            columns: 1,
            size: (700, 500),
        })
        .expect("heat svg");
        [svg, heat]
    }

    /// Compares the PNG of `drawn` (this module's path) with usvg's pixels of `reference` at
    /// `scale`: (largest channel difference, differing pixels, pixels usvg's texts change).
    /// `Err` when a differing pixel lies more than a pixel away from every pixel the texts
    /// change, or differs by more than 129 of 255: half of a pixel's 16 coverage samples
    /// (each glyph lands within 1/8 pixel of its place, which flips at most a sample a
    /// sub-row at each edge, and its curves are cut into finer straight pieces) and rounding.
    fn against_usvg(
        drawn: &str,
        reference: &str,
        scale: f32,
    ) -> Result<(u8, usize, usize), String> {
        let (w, h, _) = usvg_rgb(reference, 1.0);
        let png = rasterise(drawn, (w, h), scale).expect("png");
        let (nw, nh, new) = png_rgb(&png);
        let (ow, oh, old) = usvg_rgb(reference, scale);
        assert_eq!((nw, nh), (ow, oh));
        let (kept, _) = raster_text::split_texts(&raster_input(reference));
        let (_, _, plain) = usvg_rgb(&kept, scale);
        let px = |v: &[u8], i: usize| [v[3 * i], v[3 * i + 1], v[3 * i + 2]];
        let (w, h) = (nw as usize, nh as usize);
        let inked: Vec<bool> = (0..w * h).map(|i| px(&old, i) != px(&plain, i)).collect();
        let (mut max, mut differ) = (0u8, 0usize);
        for i in 0..w * h {
            let (a, b) = (px(&new, i), px(&old, i));
            let d = (0..3).map(|c| a[c].abs_diff(b[c])).max().unwrap_or(0);
            if d == 0 {
                continue;
            }
            differ += 1;
            max = max.max(d);
            let (x, y) = (i % w, i / w);
            let near = (y.saturating_sub(1)..(y + 2).min(h))
                .any(|v| (x.saturating_sub(1)..(x + 2).min(w)).any(|u| inked[v * w + u]));
            if !near {
                return Err(format!(
                    "pixel ({x}, {y}) differs by {d} away from any text"
                ));
            }
        }
        let ink = inked.iter().filter(|&&b| b).count();
        if max > 129 {
            return Err(format!(
                "{differ} of {ink} text pixels differ, by up to {max}"
            ));
        }
        Ok((max, differ, ink))
    }

    #[test]
    fn texts_drawn_without_the_svg_parser_are_usvgs_up_to_glyphs_moved_an_eighth_of_a_pixel() {
        for doc in &test_documents() {
            let texts = doc.matches("<text ").count();
            let (kept, drawn) = raster_text::split_texts(&raster_input(doc));
            // Most texts take the new path (rotated, bold, escaped, each anchor); the Hebrew
            // and the doubled space stay with usvg.
            assert!(
                drawn.len() + 3 >= texts && drawn.len() >= 10,
                "{texts} {drawn:?}"
            );
            assert_eq!(kept.matches("<text ").count() + drawn.len(), texts);
            for scale in [1.0, 2.0] {
                let (_, differ, ink) = against_usvg(doc, doc, scale).expect("like usvg's");
                // Edges only (at these sizes most of a text's pixels are on an edge): no more
                // than two thirds of them differ; about half do.
                assert!(3 * differ <= 2 * ink, "{differ} of {ink} at scale {scale}");
            }
        }
    }

    #[test]
    fn a_text_moved_half_a_pixel_or_missing_a_letter_fails_the_comparison_with_usvg() {
        let [doc, _] = test_documents();
        let title = "texts drawn without usvg";
        assert!(doc.contains(title));
        // The first text moved half a pixel right.
        let at = doc.find("<text x=\"").expect("a text") + "<text x=\"".len();
        let end = at + doc[at..].find('"').expect("x ends");
        let x: f64 = doc[at..end].parse().expect("x");
        let moved = format!("{}{}{}", &doc[..at], x + 0.5, &doc[end..]);
        assert!(
            against_usvg(&moved, &doc, 1.0).is_err(),
            "moved half a pixel"
        );
        let missing = doc.replacen(title, "texts drawn without usv", 1);
        assert!(
            against_usvg(&missing, &doc, 1.0).is_err(),
            "a letter missing"
        );
    }

    #[test]
    fn only_translucent_fill_only_shapes_are_read_with_fill_opacity_and_a_white_background_dropped()
    {
        let svg = concat!(
            "<svg>\n",
            "<rect x=\"0\" y=\"0\" width=\"9\" height=\"9\" opacity=\"1\" fill=\"#FFFFFF\" stroke=\"none\"/>\n",
            "<rect x=\"1\" y=\"2\" width=\"3\" height=\"4\" opacity=\"0.35\" fill=\"#0072B2\" stroke=\"none\"/>\n",
            "<polygon opacity=\"0.18\" fill=\"#D55E00\" points=\"0,0 5,5 0,5 \"/>\n",
            "<polyline fill=\"none\" opacity=\"0.5\" stroke=\"#000000\" stroke-width=\"1\" points=\"0,0 5,5 \"/>\n",
            "<rect x=\"1\" y=\"2\" width=\"3\" height=\"4\" opacity=\"0.9\" fill=\"#FFFFFF\" stroke=\"#000000\"/>\n",
            "<rect x=\"1\" y=\"2\" width=\"3\" height=\"4\" opacity=\"1\" fill=\"#FFFFFF\" stroke=\"none\"/>\n",
            "</svg>\n"
        );
        let out = raster_input(svg);
        // The white background first is left out (the pixmap starts white).
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len() + 1, svg.lines().count());
        assert!(lines[1].contains(" fill-opacity=\"0.35\"") && !lines[1].contains(" opacity="));
        assert!(lines[2].contains(" fill-opacity=\"0.18\""));
        // A stroke, a filled and stroked shape, an opaque shape: as written.
        assert_eq!(&lines[3..6], &svg.lines().collect::<Vec<_>>()[4..7]);
    }
}
