//! The comparison figure of `analyze --compare`: each paired difference B - A (pass@1, and
//! maj@k when requested) with its 95% interval, against a zero line. Draws finished results
//! only (layout, never statistics); depends on [`crate::analyze`]'s result types and
//! [`crate::report::plot`].

use super::{input_names, rule_name, signed_pts, EXACT_BOUND_MARK};
use crate::analyze::interval::{IntervalBasis, IntervalMethod};
use crate::analyze::{Analysis, DiffEstimate};
use crate::report::plot::{Figure, Line, Markers, Panel};

/// The rows of the comparison, in the order of `comparison.csv`: (label, difference).
fn rows(a: &Analysis) -> Vec<(String, &DiffEstimate)> {
    let Some(c) = &a.comparison else {
        return Vec::new();
    };
    let mut rows = vec![("pass@1".to_string(), &c.pass_at_1)];
    if let Some(d) = &c.maj_at_k {
        rows.push((
            format!(
                "maj@{} ({} ties)",
                d.k,
                rule_name(a.options.summary.maj_rule)
            ),
            d,
        ));
    }
    rows
}

/// The paired differences B - A with their 95% intervals, one marker per compared metric, on a
/// percentage-point axis that holds every interval and 0. `None` without a comparison.
pub fn comparison_figure(a: &Analysis) -> Option<Figure> {
    let c = a.comparison.as_ref()?;
    let rows = rows(a);
    let count = rows.len() as f64;
    let mut p = Panel::new(
        format!(
            "{} common problems{}; bars: 95% intervals",
            c.common_problems,
            c.pass_at_1
                .ci_clusters
                .map_or(String::new(), |k| format!(" in {k} clusters"))
        ),
        "compared metric",
        format!("{} − {} (percentage points)", c.model_b, c.model_a),
    );
    p.x_range = (0.4, count + 0.6);
    p.x_ticks = Some((1..=rows.len()).map(|i| i as f64).collect());
    p.x_tick_labels = Some(rows.iter().map(|(name, _)| name.clone()).collect());
    let (mut lo, mut hi) = (0.0f64, 0.0f64);
    for (i, (name, d)) in rows.iter().enumerate() {
        let [l, h] = d.ci95;
        lo = lo.min(100.0 * l).min(100.0 * d.difference);
        hi = hi.max(100.0 * h).max(100.0 * d.difference);
        let mark = if d.ci_basis == IntervalBasis::Spread {
            ""
        } else {
            EXACT_BOUND_MARK
        };
        let short = match (d.ci_method, d.ci_clusters) {
            _ if !mark.is_empty() => {
                "exact bound: every problem has the same difference".to_string()
            }
            (IntervalMethod::PairedScore, None) => "Tango-type score".to_string(),
            (IntervalMethod::PairedScore, Some(k)) => format!("Tango-type score, {k} clusters"),
            (_, None) => "Wilson".to_string(),
            (_, Some(k)) => format!("Wilson, {k} clusters"),
        };
        p.markers.push(Markers {
            label: Some(format!(
                "{name}: {} pts [{}, {}]{mark} ({short})",
                signed_pts(d.difference),
                signed_pts(l),
                signed_pts(h),
            )),
            color: if i == 0 { 0 } else { 2 },
            points: vec![((i + 1) as f64, 100.0 * d.difference, 100.0 * l, 100.0 * h)],
        });
    }
    let pad = ((hi - lo) * 0.12).max(1.0);
    p.y_range = ((lo - pad).max(-100.0), (hi + pad).min(100.0));
    p.lines.push(Line {
        label: Some("0: no difference".to_string()),
        color: 7,
        dashed: true,
        points: vec![p_x(&p, 0), p_x(&p, 1)],
    });
    Some(Figure {
        title: format!(
            "{} − {} · paired differences with 95% intervals · {} · seed {}",
            c.model_b,
            c.model_a,
            input_names(a),
            a.seed
        ),
        panels: vec![p],
        columns: 1,
        size: (1000, 640),
    })
}

/// The left (`side` 0) or right end of the panel's x range at y = 0.
fn p_x(p: &Panel, side: usize) -> (f64, f64) {
    (if side == 0 { p.x_range.0 } else { p.x_range.1 }, 0.0)
}
