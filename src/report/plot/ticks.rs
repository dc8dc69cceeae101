//! Axis ticks: where they go and how their labels read, for linear and log scales.
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};

use super::*;

pub(super) fn format_tick(scale: Scale, v: f64) -> String {
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
pub(super) fn log_ticks((lo, hi): (f64, f64)) -> Vec<f64> {
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
pub(super) fn axis_ticks(
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
