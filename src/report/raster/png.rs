//! The PNG of a rasterised figure: opaque 8-bit RGB, every row Paeth-filtered and the whole
//! compressed by `fdeflate` (the `png` crate's fast compression, for filtered image rows),
//! written straight from the RGBA pixmap one row at a time. A row equal to the one above it
//! filters to zeros without being read; nothing the size of the picture is allocated.
use std::io::Write;

/// The row buffers of one encoding: the previous and current rows as RGB, the filtered row.
#[derive(Default)]
pub(super) struct Rows {
    prev: Vec<u8>,
    cur: Vec<u8>,
    filtered: Vec<u8>,
}

/// Encodes `rgba` (`width` x `height` pixels, 4 bytes each, opaque) as an RGB PNG.
///
/// # Errors
/// The compressor's reason (it writes to memory, so none is expected).
pub(super) fn encode(
    rgba: &[u8],
    (width, height): (u32, u32),
    rows: &mut Rows,
) -> Result<Vec<u8>, String> {
    let w = width as usize;
    let line = w * 3;
    // Figures compress to a few percent of their RGB bytes; a larger one grows the vector.
    let mut png = Vec::with_capacity(line * height as usize / 16 + 1024);
    png.extend_from_slice(b"\x89PNG\r\n\x1a\n");
    let mut ihdr = [0u8; 13];
    ihdr[..4].copy_from_slice(&width.to_be_bytes());
    ihdr[4..8].copy_from_slice(&height.to_be_bytes());
    // 8 bits a channel, RGB, deflate, adaptive filtering (per-row filter bytes), no interlace.
    ihdr[8..].copy_from_slice(&[8, 2, 0, 0, 0]);
    chunk(&mut png, b"IHDR", &ihdr);

    let idat = png.len();
    png.extend_from_slice(&[0, 0, 0, 0]);
    png.extend_from_slice(b"IDAT");
    let fail = |e: std::io::Error| e.to_string();
    let mut z = fdeflate::Compressor::new(png).map_err(fail)?;
    rows.prev.clear();
    rows.prev.resize(line, 0);
    rows.cur.resize(line, 0);
    rows.filtered.resize(line + 1, 0);
    let mut above: Option<&[u8]> = None;
    for row in rgba.chunks_exact(w * 4).take(height as usize) {
        if above == Some(row) {
            // Paeth predicts every byte of a repeated row from the byte above it.
            rows.filtered.fill(0);
        } else {
            for (o, p) in rows.cur.chunks_exact_mut(3).zip(row.chunks_exact(4)) {
                o.copy_from_slice(&p[..3]);
            }
            paeth(&rows.prev, &rows.cur, &mut rows.filtered[1..]);
            std::mem::swap(&mut rows.prev, &mut rows.cur);
        }
        rows.filtered[0] = 4;
        z.write_data(&rows.filtered).map_err(fail)?;
        above = Some(row);
    }
    let mut png = z.finish().map_err(fail)?;
    let len = u32::try_from(png.len() - idat - 8).map_err(|_| "PNG data over 4 GB".to_string())?;
    png[idat..idat + 4].copy_from_slice(&len.to_be_bytes());
    let crc = crc32fast::hash(&png[idat + 4..]);
    png.write_all(&crc.to_be_bytes()).map_err(fail)?;
    chunk(&mut png, b"IEND", &[]);
    Ok(png)
}

/// Appends a chunk: length, type, data, CRC of type and data.
fn chunk(png: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    png.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = png.len();
    png.extend_from_slice(kind);
    png.extend_from_slice(data);
    let crc = crc32fast::hash(&png[start..]);
    png.extend_from_slice(&crc.to_be_bytes());
}

/// The Paeth filter of RGB row `cur` under row `prev` (3 bytes a pixel) into `out`.
fn paeth(prev: &[u8], cur: &[u8], out: &mut [u8]) {
    const BPP: usize = 3;
    let n = cur.len();
    for i in 0..BPP.min(n) {
        // No pixel to the left: a = c = 0, and Paeth predicts the byte above.
        out[i] = cur[i].wrapping_sub(prev[i]);
    }
    if n <= BPP {
        return;
    }
    let it = out[BPP..]
        .iter_mut()
        .zip(&cur[BPP..])
        .zip(&cur[..n - BPP])
        .zip(&prev[BPP..])
        .zip(&prev[..n - BPP]);
    for ((((o, &x), &a), &b), &c) in it {
        *o = x.wrapping_sub(predict(a, b, c));
    }
}

/// The Paeth predictor of a byte from its left (`a`), upper (`b`) and upper-left (`c`)
/// neighbours, in 8-bit arithmetic (the form of the `png` crate, after fpnge): the one of
/// `a`, `b`, `c` nearest `a + b - c`, ties to `a`, then `b`.
fn predict(a: u8, b: u8, c: u8) -> u8 {
    let pa = b.max(c) - c.min(b);
    let pb = a.max(c) - c.min(a);
    // When c lies outside [a, b], |a + b - 2c| exceeds both pa and pb.
    let pc = if (a < c) == (c < b) {
        pa.max(pb) - pa.min(pb)
    } else {
        255
    };
    if pa <= pb && pa <= pc {
        a
    } else if pb <= pc {
        b
    } else {
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(png: &[u8]) -> (u32, u32, Vec<u8>) {
        let img = image::load_from_memory_with_format(png, image::ImageFormat::Png)
            .expect("decodes")
            .to_rgb8();
        (img.width(), img.height(), img.into_raw())
    }

    #[test]
    fn the_paeth_predictor_is_the_specifications() {
        // The PNG specification's predictor, in wide arithmetic.
        let spec = |a: u8, b: u8, c: u8| {
            let p = i32::from(a) + i32::from(b) - i32::from(c);
            let (pa, pb, pc) = (
                (p - i32::from(a)).abs(),
                (p - i32::from(b)).abs(),
                (p - i32::from(c)).abs(),
            );
            if pa <= pb && pa <= pc {
                a
            } else if pb <= pc {
                b
            } else {
                c
            }
        };
        for a in (0..=255u8).step_by(3) {
            for b in (0..=255u8).step_by(5) {
                for c in 0..=255u8 {
                    assert_eq!(predict(a, b, c), spec(a, b, c), "{a} {b} {c}");
                }
            }
        }
    }

    #[test]
    fn encoded_pixels_decode_to_the_pixmaps_colours_with_repeated_rows_and_odd_widths() {
        for (w, h) in [(1u32, 1u32), (2, 3), (7, 5), (33, 9)] {
            let mut rgba = Vec::new();
            for y in 0..h {
                for x in 0..w {
                    // Rows 1 and 2 repeat row 0 when h > 2; the others vary.
                    let v = if (1..3).contains(&y) { 0 } else { y };
                    let r = (x * 37 + v * 11) as u8;
                    rgba.extend_from_slice(&[r, r.wrapping_mul(3), 255 - r, 255]);
                }
            }
            let png = encode(&rgba, (w, h), &mut Rows::default()).expect("encodes");
            let (dw, dh, rgb) = decode(&png);
            assert_eq!((dw, dh), (w, h));
            let want: Vec<u8> = rgba
                .chunks_exact(4)
                .flat_map(|p| [p[0], p[1], p[2]])
                .collect();
            assert_eq!(rgb, want, "{w}x{h}");
        }
    }
}
