//! Straight segments drawn one after another in one style, read as one path: the SVG backend
//! writes every dash of a dashed line, every error bar and every tick as a `<polyline>` of two
//! points, about 2,300 of them in the note's figures, and the rasteriser paid for each
//! element (parsing, a path, a stroke, a blitter) as for a curve.
//!
//! Consecutive two-point polylines with the same attributes become one `<path>` of as many
//! subpaths, in the same order, as long as no segment comes near another of its group: their
//! boxes, widened by half the stroke and one device pixel (a pixel an anti-aliased shape
//! touches lies within a pixel of it; a hairline's within a pixel of its centre line and half
//! a pixel more), do not overlap. A stroked subpath is the shape its polyline was, and shapes
//! that share no pixel, drawn together or one after the other, give the same pixels: the
//! picture is unchanged. A segment near another of the group (a dash at a sharp turn) starts
//! a new group.
use std::borrow::Cow;

/// The SVG with runs of mergeable two-point polylines written as paths; `scale` is the pixel
/// scale the document is drawn at.
pub(super) fn merge(svg: &str, scale: f32) -> Cow<'_, str> {
    if svg.matches("<polyline ").nth(1).is_none() {
        return Cow::Borrowed(svg);
    }
    // A device pixel in user units.
    let reach = 1.0 / f64::from(scale).max(1e-3);
    let mut out = String::with_capacity(svg.len());
    let mut group = Group::default();
    for line in svg.split_inclusive('\n') {
        match segment(line, reach) {
            Some(seg) if group.takes(&seg) => group.segments.push(seg),
            Some(seg) => {
                group.flush(&mut out);
                group.segments.push(seg);
            }
            None => {
                group.flush(&mut out);
                out.push_str(line);
            }
        }
    }
    group.flush(&mut out);
    Cow::Owned(out)
}

/// One two-point polyline: its line, the attributes before `points`, its two points as
/// written, and its box widened by half the stroke and `reach` (a device pixel).
struct Segment<'a> {
    line: &'a str,
    style: &'a str,
    points: [&'a str; 2],
    bounds: [f64; 4],
}

/// Reads a `<polyline fill="none" opacity="1" ... points="x,y x,y "/>` line of the backend;
/// `None` for any other line.
fn segment(line: &str, reach: f64) -> Option<Segment<'_>> {
    let body = line.strip_prefix("<polyline ")?;
    let at = body.find(" points=\"")?;
    let style = &body[..at];
    let rest = body[at + " points=\"".len()..].trim_end();
    let list = rest.strip_suffix("\"/>")?;
    if list.contains('"') || !style.contains("fill=\"none\"") || !style.contains(" opacity=\"1\"") {
        return None;
    }
    let mut tokens = list.split_whitespace();
    let points = [tokens.next()?, tokens.next()?];
    if tokens.next().is_some() {
        return None;
    }
    let xy = |p: &str| -> Option<(f64, f64)> {
        let (x, y) = p.split_once(',')?;
        Some((x.parse().ok()?, y.parse().ok()?))
    };
    let ((x0, y0), (x1, y1)) = (xy(points[0])?, xy(points[1])?);
    let width: f64 = attr(style, "stroke-width")?.parse().ok()?;
    let pad = width / 2.0 + reach;
    let bounds = [
        x0.min(x1) - pad,
        y0.min(y1) - pad,
        x0.max(x1) + pad,
        y0.max(y1) + pad,
    ];
    (bounds.iter().all(|v| v.is_finite()) && width >= 0.0).then_some(Segment {
        line,
        style,
        points,
        bounds,
    })
}

/// The value of attribute `name` in an element's attributes.
fn attr<'a>(style: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let at = style.find(&key)? + key.len();
    let len = style[at..].find('"')?;
    Some(&style[at..at + len])
}

#[derive(Default)]
struct Group<'a> {
    segments: Vec<Segment<'a>>,
}

impl<'a> Group<'a> {
    /// Whether `seg` joins the group: same style, and clear of every segment in it.
    fn takes(&self, seg: &Segment<'a>) -> bool {
        let Some(first) = self.segments.first() else {
            return true;
        };
        let [l, t, r, b] = seg.bounds;
        first.style == seg.style
            && self.segments.iter().all(|s| {
                let [sl, st, sr, sb] = s.bounds;
                r <= sl || sr <= l || b <= st || sb <= t
            })
    }

    /// Writes the group (a lone segment as it was) and empties it.
    fn flush(&mut self, out: &mut String) {
        match self.segments.as_slice() {
            [] => {}
            [one] => out.push_str(one.line),
            all => {
                out.push_str("<path ");
                out.push_str(all[0].style);
                out.push_str(" d=\"");
                for s in all {
                    out.push('M');
                    out.push_str(s.points[0]);
                    out.push_str(" L");
                    out.push_str(s.points[1]);
                    out.push(' ');
                }
                out.push_str("\"/>\n");
            }
        }
        self.segments.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consecutive_segments_of_one_style_clear_of_each_other_become_one_path() {
        let svg = concat!(
            "<svg>\n",
            "<polyline fill=\"none\" opacity=\"1\" stroke=\"#888888\" stroke-width=\"1\" points=\"10,0 10,6 \"/>\n",
            "<polyline fill=\"none\" opacity=\"1\" stroke=\"#888888\" stroke-width=\"1\" points=\"10,10 10,16 \"/>\n",
            // Within reach of the second (1/2 + 1 units at scale 1): a new group.
            "<polyline fill=\"none\" opacity=\"1\" stroke=\"#888888\" stroke-width=\"1\" points=\"10,18 10,30 \"/>\n",
            "<polyline fill=\"none\" opacity=\"1\" stroke=\"#888888\" stroke-width=\"1\" points=\"30,18 30,30 \"/>\n",
            // Another colour, three points, translucent: as written.
            "<polyline fill=\"none\" opacity=\"1\" stroke=\"#000000\" stroke-width=\"1\" points=\"0,0 5,5 \"/>\n",
            "<polyline fill=\"none\" opacity=\"1\" stroke=\"#000000\" stroke-width=\"1\" points=\"0,0 5,5 9,9 \"/>\n",
            "<polyline fill=\"none\" opacity=\"0.5\" stroke=\"#000000\" stroke-width=\"1\" points=\"0,50 5,50 \"/>\n",
            "<polyline fill=\"none\" opacity=\"0.5\" stroke=\"#000000\" stroke-width=\"1\" points=\"0,90 5,90 \"/>\n",
            "</svg>\n"
        );
        let out = merge(svg, 1.0);
        let lines: Vec<&str> = out.lines().collect();
        let style = "fill=\"none\" opacity=\"1\" stroke=\"#888888\" stroke-width=\"1\"";
        assert_eq!(
            lines[1],
            format!("<path {style} d=\"M10,0 L10,6 M10,10 L10,16 \"/>")
        );
        assert_eq!(
            lines[2],
            format!("<path {style} d=\"M10,18 L10,30 M30,18 L30,30 \"/>")
        );
        assert_eq!(&lines[3..], &svg.lines().collect::<Vec<_>>()[5..]);
        // At a quarter of the scale the reach is 4 units: the first two are kept apart.
        let out = merge(svg, 0.25);
        assert!(out
            .lines()
            .nth(1)
            .is_some_and(|l| l.starts_with("<polyline ")));
    }
}
