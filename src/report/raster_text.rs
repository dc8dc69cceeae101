//! The text of a figure's SVG, drawn into its PNG without the SVG parser: each `<text>` line
//! as the SVG backend writes it is shaped with rustybuzz on the embedded DejaVu Sans (parsed
//! once per process, its glyph outlines once per thread) and laid out following usvg's text
//! layout step by step (the anchor, the `dy` shift, the cluster advances, the glyph
//! transforms) so the glyphs land where resvg puts them, within the quarter pixel to which
//! [`glyphs`] rounds them: each glyph's coverage is scan-converted once per thread and size,
//! not filled again for every text. usvg parsed the font afresh for every glyph it outlined
//! and every string it shaped: about half of a figure's rasterising time went to text.
//!
//! A text this module does not know how to lay out exactly as usvg does (an attribute it does
//! not read, a character outside the embedded font or from a right-to-left script, spaces
//! that SVG's white-space rules would collapse) stays in the document for usvg. Free of
//! statistics and of layout decisions (those are [`super::plot`]'s).
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::OnceLock;

use resvg::tiny_skia::{Path, PathBuilder, PixmapMut, Transform};

mod glyphs;

/// One `<text>` element, resolved to what its layout needs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TextRun {
    /// The anchor point (`x`, `y`) and the `dy` shift, in user units.
    x: f32,
    y: f32,
    dy: f32,
    /// 0 start, 1 middle, 2 end.
    anchor: u8,
    size: f32,
    bold: bool,
    color: [u8; 3],
    /// The element's own transform (a rotation about a point, or none).
    transform: Transform,
    text: String,
}

/// The embedded DejaVu Sans faces, regular and bold, parsed once per process.
fn face(bold: bool) -> &'static rustybuzz::Face<'static> {
    static FACES: OnceLock<[rustybuzz::Face<'static>; 2]> = OnceLock::new();
    let faces = FACES.get_or_init(|| {
        let parse = |data: &'static [u8]| {
            rustybuzz::Face::from_slice(data, 0).expect("the embedded DejaVu Sans parses")
        };
        [parse(dejavu::sans::regular()), parse(dejavu::sans::bold())]
    });
    &faces[usize::from(bold)]
}

/// The value of attribute `name` in an element's line.
fn attr<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let at = line.find(&key)? + key.len();
    let len = line[at..].find('"')?;
    Some(&line[at..at + len])
}

/// The attributes the SVG backend writes on `<text>`; any other makes the text usvg's.
const KNOWN: [&str; 10] = [
    "x",
    "y",
    "dy",
    "text-anchor",
    "font-family",
    "font-size",
    "opacity",
    "fill",
    "font-weight",
    "transform",
];

/// Reads a `<text ...>` opening line and its one line of content; `None` when any part is
/// outside what [`layout`] reproduces.
fn parse_text(open: &str, content: &str) -> Option<TextRun> {
    let inner = open.strip_prefix("<text ")?.strip_suffix('>')?;
    for part in inner.split("\" ") {
        let name = part.split('=').next()?;
        if !KNOWN.contains(&name) {
            return None;
        }
    }
    if inner.matches('=').count() != inner.matches("=\"").count() {
        return None;
    }
    let num = |s: &str| s.parse::<f64>().ok().filter(|v| v.is_finite());
    let size = num(attr(open, "font-size")?)? as f32;
    let dy = match attr(open, "dy") {
        None => 0.0,
        Some(d) => match (d.strip_suffix("em"), d.strip_suffix("ex")) {
            (Some(n), _) => num(n)? as f32 * size,
            (_, Some(n)) => num(n)? as f32 * size / 2.0,
            _ => return None,
        },
    };
    let anchor = match attr(open, "text-anchor").unwrap_or("start") {
        "start" => 0,
        "middle" => 1,
        "end" => 2,
        _ => return None,
    };
    let bold = match attr(open, "font-weight") {
        None => false,
        Some("bold") => true,
        Some(_) => return None,
    };
    if attr(open, "opacity").is_some_and(|o| o != "1")
        || !attr(open, "font-family")?.starts_with("DejaVu Sans,")
    {
        return None;
    }
    let hex = attr(open, "fill")?.strip_prefix('#')?;
    let byte = |i: usize| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok();
    if hex.len() != 6 {
        return None;
    }
    let color = [byte(0)?, byte(2)?, byte(4)?];
    let transform = match attr(open, "transform") {
        None => Transform::identity(),
        Some(t) => rotation(t)?,
    };
    Some(TextRun {
        x: num(attr(open, "x")?)? as f32,
        y: num(attr(open, "y")?)? as f32,
        dy,
        anchor,
        size,
        bold,
        color,
        transform,
        text: plain_text(content)?,
    })
}

/// `rotate(a, cx, cy)` as svgtypes and usvg compute it: in f64, then to f32.
fn rotation(t: &str) -> Option<Transform> {
    let args: Vec<f64> = t
        .strip_prefix("rotate(")?
        .strip_suffix(')')?
        .split(',')
        .map(|s| s.trim().parse::<f64>().ok())
        .collect::<Option<_>>()?;
    let [a, cx, cy] = args[..] else { return None };
    let (sin, cos) = a.to_radians().sin_cos();
    // translate(cx, cy) · rotate(a) · translate(-cx, -cy)
    let tx = cx + cos * -cx + -sin * -cy;
    let ty = cy + sin * -cx + cos * -cy;
    Some(Transform::from_row(
        cos as f32,
        sin as f32,
        -sin as f32,
        cos as f32,
        tx as f32,
        ty as f32,
    ))
}

/// The content line as text: XML's five entities resolved; `None` for anything else escaped,
/// for a character outside the scripts laid out left to right here, and for spaces SVG would
/// collapse or strip.
fn plain_text(content: &str) -> Option<String> {
    if content.is_empty()
        || content.starts_with(' ')
        || content.ends_with(' ')
        || content.contains("  ")
        || content.contains(['\t', '\r', '<'])
    {
        return None;
    }
    let mut out = String::with_capacity(content.len());
    let mut rest = content;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        let end = rest[at..].find(';')? + at;
        out.push(match &rest[at..=end] {
            "&lt;" => '<',
            "&gt;" => '>',
            "&amp;" => '&',
            "&apos;" => '\'',
            "&quot;" => '"',
            _ => return None,
        });
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    // Left-to-right scripts and symbols only (no bidirectional runs to resolve).
    let ltr = |c: char| (' '..'\u{0590}').contains(&c) || ('\u{2000}'..'\u{2c00}').contains(&c);
    out.chars().all(ltr).then_some(out)
}

/// A glyph of a laid-out text: its id and its transform from font units to user units
/// (before the element's transform).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Glyph {
    id: u16,
    transform: Transform,
}

/// The document without the texts this module draws, and those texts (with their glyphs;
/// none when nothing is drawn) in document order.
pub(crate) fn split_texts(svg: &str) -> (String, Vec<(TextRun, Vec<Glyph>)>) {
    let mut kept = String::with_capacity(svg.len());
    let mut runs = Vec::new();
    let mut lines = svg.split_inclusive('\n').peekable();
    while let Some(line) = lines.next() {
        if !line.starts_with("<text ") {
            kept.push_str(line);
            continue;
        }
        // The backend writes `<text ...>`, the content, `</text>` on three lines.
        let content = lines.next().unwrap_or("");
        let close = lines.next().unwrap_or("");
        let run = (close.trim_end() == "</text>")
            .then(|| parse_text(line.trim_end(), content.trim_end_matches(['\n', '\r'])))
            .flatten()
            .and_then(|r| layout(&r).ok().map(|p| (r, p)));
        match run {
            Some(r) => runs.push(r),
            None => {
                kept.push_str(line);
                kept.push_str(content);
                kept.push_str(close);
            }
        }
    }
    (kept, runs)
}

thread_local! {
    /// Glyph outlines in font units, (bold, glyph id) -> path (none: an empty glyph).
    static OUTLINES: RefCell<HashMap<(bool, u16), Option<Path>>> = RefCell::new(HashMap::new());
    /// Shaping plans by (bold, script, language): `rustybuzz::shape` compiles one per call.
    static PLANS: RefCell<HashMap<PlanKey, rustybuzz::ShapePlan>> = RefCell::new(HashMap::new());
}

type PlanKey = (bool, rustybuzz::Script, Option<rustybuzz::Language>);

/// `rustybuzz::shape(face, &[], buffer)` with the plan it would compile taken from a cache.
/// A text whose script stays unknown (digits and punctuation only) is shaped as by
/// `rustybuzz::shape`: its plan is compiled without a script, which the key cannot say.
fn shape(
    face: &rustybuzz::Face<'static>,
    bold: bool,
    mut buffer: rustybuzz::UnicodeBuffer,
) -> rustybuzz::GlyphBuffer {
    buffer.guess_segment_properties();
    let script = buffer.script();
    if script == rustybuzz::script::UNKNOWN {
        return rustybuzz::shape(face, &[], buffer);
    }
    let key = (bold, script, buffer.language());
    PLANS.with(|cell| {
        let mut plans = cell.borrow_mut();
        let plan = plans.entry(key).or_insert_with(|| {
            rustybuzz::ShapePlan::new(
                face,
                buffer.direction(),
                Some(script),
                buffer.language().as_ref(),
                &[],
            )
        });
        rustybuzz::shape_with_plan(face, plan, buffer)
    })
}

struct Outline(PathBuilder);

impl rustybuzz::ttf_parser::OutlineBuilder for Outline {
    fn move_to(&mut self, x: f32, y: f32) {
        self.0.move_to(x, y);
    }
    fn line_to(&mut self, x: f32, y: f32) {
        self.0.line_to(x, y);
    }
    fn quad_to(&mut self, x1: f32, y1: f32, x: f32, y: f32) {
        self.0.quad_to(x1, y1, x, y);
    }
    fn curve_to(&mut self, x1: f32, y1: f32, x2: f32, y2: f32, x: f32, y: f32) {
        self.0.cubic_to(x1, y1, x2, y2, x, y);
    }
    fn close(&mut self) {
        self.0.close();
    }
}

/// Calls `f` with the glyph's outline in font units (none: an empty glyph).
fn with_outline<T>(bold: bool, id: u16, f: impl FnOnce(Option<&Path>) -> T) -> T {
    OUTLINES.with(|cell| {
        f(cell
            .borrow_mut()
            .entry((bold, id))
            .or_insert_with(|| {
                let mut b = Outline(PathBuilder::new());
                face(bold).outline_glyph(rustybuzz::ttf_parser::GlyphId(id), &mut b)?;
                b.0.finish()
            })
            .as_ref())
    })
}

/// The text's glyphs that draw something, placed in user units (before the element's
/// transform) as usvg lays them out: `Err` when a character has no glyph in the font (usvg
/// would look for a fallback font).
fn layout(run: &TextRun) -> Result<Vec<Glyph>, ()> {
    let face = face(run.bold);
    let mut buffer = rustybuzz::UnicodeBuffer::new();
    buffer.push_str(&run.text);
    buffer.set_direction(rustybuzz::Direction::LeftToRight);
    let shaped = shape(face, run.bold, buffer);
    let (infos, positions) = (shaped.glyph_infos(), shaped.glyph_positions());
    if infos.iter().any(|g| g.glyph_id == 0) {
        return Err(());
    }
    let sx = run.size / f32::from(face.units_per_em() as u16);
    // Glyph clusters: consecutive glyphs of one cluster share a position; the cluster's
    // advance is its widest glyph's.
    let mut clusters: Vec<(usize, usize, f32)> = Vec::new();
    let mut i = 0;
    while i < infos.len() {
        let mut j = i + 1;
        while j < infos.len() && infos[j].cluster == infos[i].cluster {
            j += 1;
        }
        let advance = positions[i..j]
            .iter()
            .map(|p| p.x_advance as f32 * sx)
            .fold(0.0f32, |w, g| if g > w { g } else { w });
        clusters.push((i, j, advance));
        i = j;
    }
    let width = clusters.iter().fold(0.0f32, |w, c| w + c.2);
    let mut x = match run.anchor {
        0 => 0.0,
        1 => -width / 2.0,
        _ => -width,
    };
    // usvg's span transform: the anchor point, then a baseline shift of 0.
    let span_ts = Transform::default().pre_translate(run.x, run.y);
    let mut glyphs = Vec::with_capacity(infos.len());
    for &(a, b, advance) in &clusters {
        // usvg adds each character's dx (0) and dy (only the first's is not 0) to the pen.
        let cluster_ts = Transform::default().pre_translate(x, run.dy);
        let mut gx: f32 = 0.0;
        for (info, pos) in infos[a..b].iter().zip(&positions[a..b]) {
            let glyph_ts =
                Transform::from_translate(gx + pos.x_offset as f32, -pos.y_offset as f32);
            gx += pos.x_advance as f32;
            let ts = span_ts
                .pre_concat(cluster_ts)
                .pre_concat(Transform::from_scale(sx, sx))
                .pre_concat(glyph_ts)
                .pre_concat(Transform::from_scale(1.0, -1.0));
            let Ok(id) = u16::try_from(info.glyph_id) else {
                return Err(());
            };
            if with_outline(run.bold, id, |p| p.is_some()) {
                glyphs.push(Glyph { id, transform: ts });
            }
        }
        x += advance;
    }
    Ok(glyphs)
}

/// Draws a text's `glyphs` over `pixmap` as resvg draws a text (its outlines filled,
/// anti-aliased, non-zero, in its colour, under `root`, the pixel scale, and the element's
/// transform), each glyph at its position rounded to a quarter pixel (see [`glyphs`]).
pub(crate) fn draw(glyphs: &[Glyph], run: &TextRun, root: Transform, pixmap: &mut PixmapMut) {
    let device = root.pre_concat(run.transform);
    let placed: Vec<glyphs::Placed> = glyphs
        .iter()
        .map(|g| glyphs::Placed {
            bold: run.bold,
            id: g.id,
            transform: device.pre_concat(g.transform),
        })
        .collect();
    let outline = |bold, id| with_outline(bold, id, |p| p.cloned());
    glyphs::draw(&placed, run.color, outline, pixmap);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_lines_the_backend_writes_are_read_and_others_left_to_usvg() {
        let open = r##"<text x="66" y="606" dy="0.5ex" text-anchor="end" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="11.290322580645162" opacity="1" fill="#000000">"##;
        let run = parse_text(open, "a &lt; b · 50").expect("read");
        assert_eq!(run.text, "a < b · 50");
        assert_eq!((run.x, run.y, run.anchor), (66.0, 606.0, 2));
        assert_eq!(run.dy, 0.5f32 * 11.290322580645162f64 as f32 / 2.0);
        // Spaces SVG would collapse, an unknown entity or attribute, right-to-left text.
        assert!(parse_text(open, "a  b").is_none());
        assert!(parse_text(open, " a").is_none());
        assert!(parse_text(open, "a &nbsp; b").is_none());
        assert!(parse_text(open, "שלום").is_none());
        let odd = open.replace("opacity=\"1\"", "letter-spacing=\"2\"");
        assert!(parse_text(&odd, "a").is_none());
    }
}
