//! The comparison of `analyze --compare`: its rows (every paired difference B - A, pass@k and
//! maj@k at every compared k), the headline rows the terminal prints, and the figure of the
//! differences per k with their 95% intervals against a zero line. Draws finished results only
//! (layout, never statistics); depends on [`crate::analyze`]'s result types and
//! [`crate::report::plot`].

use super::figures::k_ticks;
use super::{input_names, signed_pts};
use crate::analyze::interval::{IntervalBasis, IntervalMethod};
use crate::analyze::{Analysis, Comparison, DiffEstimate};
use crate::report::plot::{Figure, Line, Markers, Panel, Scale};

/// One compared metric: `pass@1`, `pass@k` (k >= 2) or `maj@k`, as in `comparison.csv`.
pub(super) type Row<'a> = (&'static str, &'a DiffEstimate);

/// Every row of the comparison in the order of `comparison.csv`: pass@1, pass@k at each k >= 2,
/// then maj@k at each k.
pub(super) fn comparison_rows(c: &Comparison) -> Vec<Row<'_>> {
    let mut rows: Vec<Row<'_>> = vec![("pass@1", &c.pass_at_1)];
    rows.extend(
        c.pass_by_k
            .iter()
            .filter(|d| d.k > 1)
            .map(|d| ("pass@k", d)),
    );
    match (&c.maj_at_k, c.maj_by_k.is_empty()) {
        (Some(d), true) => rows.push(("maj@k", d)),
        _ => rows.extend(c.maj_by_k.iter().map(|d| ("maj@k", d))),
    }
    rows
}

/// The rows the terminal prints: pass@1, pass@k at the largest k and maj@k at the largest k.
pub(super) fn headline_rows(c: &Comparison) -> Vec<Row<'_>> {
    let mut rows: Vec<Row<'_>> = vec![("pass@1", &c.pass_at_1)];
    if let Some(d) = c.pass_by_k.last().filter(|d| d.k > 1) {
        rows.push(("pass@k", d));
    }
    if let Some(d) = &c.maj_at_k {
        rows.push(("maj@k", d));
    }
    rows
}

/// A row's name in text: `pass@1`, `pass@4`, `maj@4 (random)`.
pub(super) fn row_name((metric, d): Row<'_>, rule: &str) -> String {
    match metric {
        "maj@k" => format!("maj@{} ({rule})", d.k),
        "pass@1" => "pass@1".to_string(),
        _ => format!("pass@{}", d.k),
    }
}

/// The k values a per-k table or figure marks: all when there are at most 12, else powers of two
/// and the largest (as the curves' ticks).
fn marked(ds: &[&DiffEstimate]) -> Vec<usize> {
    k_ticks(ds.iter().map(|d| d.k as f64))
        .into_iter()
        .map(|k| k as usize)
        .collect()
}

/// The rows a table in report.md shows: every row at the marked k of its metric.
pub(super) fn shown_rows(c: &Comparison) -> Vec<Row<'_>> {
    let rows = comparison_rows(c);
    let ks = |metric: &str| -> Vec<usize> {
        let ds: Vec<&DiffEstimate> = rows
            .iter()
            .filter(|(m, _)| *m == metric || (metric == "pass@k" && *m == "pass@1"))
            .map(|(_, d)| *d)
            .collect();
        marked(&ds)
    };
    let (pass_ks, maj_ks) = (ks("pass@k"), ks("maj@k"));
    rows.into_iter()
        .filter(|(m, d)| {
            if *m == "maj@k" {
                maj_ks.contains(&d.k)
            } else {
                pass_ks.contains(&d.k)
            }
        })
        .collect()
}

/// " († at k = 1, 2)" for the k of `ds` whose interval is the exact bound (every problem has the
/// same difference); empty when there is none.
fn bound_ks(ds: &[&DiffEstimate]) -> String {
    let ks: Vec<String> = ds
        .iter()
        .filter(|d| d.ci_basis != IntervalBasis::Spread)
        .map(|d| d.k.to_string())
        .collect();
    if ks.is_empty() {
        String::new()
    } else {
        format!(
            "; † exact bound at k = {}: every problem has the same difference",
            ks.join(", ")
        )
    }
}

/// The paired differences B - A per k with their 95% intervals: pass@k and maj@k as two series
/// on a log2 k axis (bars at the marked k, a line through every computed k, the two series a
/// little apart so their bars do not overlap), against a dashed zero line. `None` without a
/// comparison.
pub fn comparison_figure(a: &Analysis) -> Option<Figure> {
    let c = a.comparison.as_ref()?;
    let rule = super::rule_name(a.options.summary.maj_rule);
    let rows = comparison_rows(c);
    let series = |metric: &str| -> Vec<&DiffEstimate> {
        rows.iter()
            .filter(|(m, _)| match metric {
                "pass@k" => *m != "maj@k",
                _ => *m == "maj@k",
            })
            .map(|(_, d)| *d)
            .collect()
    };
    let (pass, maj) = (series("pass@k"), series("maj@k"));
    let all_ks: Vec<f64> = pass.iter().chain(&maj).map(|d| d.k as f64).collect();
    let kmin = all_ks.iter().copied().fold(f64::INFINITY, f64::min);
    let kmax = all_ks.iter().copied().fold(1.0, f64::max);
    // With one sample per problem the only k is 1, where maj@1 is pass@1 (one answer votes for
    // itself): one series, labelled so.
    let single = kmax <= 1.0;
    let clustered = if c.pass_at_1.ci_clusters.is_some() {
        "clustered (CR2) "
    } else {
        ""
    };
    let mut p = Panel::new(
        format!(
            "{} common problems{}; bars: 95% intervals ({clustered}{})",
            c.common_problems,
            c.pass_at_1
                .ci_clusters
                .map_or(String::new(), |k| format!(" in {k} clusters")),
            if single {
                "Wilson"
            } else if maj
                .iter()
                .any(|d| d.k == 2 && d.ci_method == IntervalMethod::Wilson)
            {
                "Wilson at k = 1 and for maj@2, which is pass@1 with random ties; Tango-type score otherwise"
            } else {
                "Wilson at k = 1, Tango-type score from k = 2"
            }
        ),
        "k (samples per problem, log2 scale)",
        y_label(c),
    );
    p.x_scale = Scale::Log2;
    p.x_range = (kmin / 1.25, kmax * 1.25);
    p.x_ticks = Some(k_ticks(all_ks.iter().copied()));
    let (mut lo, mut hi) = (0.0f64, 0.0f64);
    // pass@k a little left of each k, maj@k a little right (0.08 octave apart).
    let both = [
        (&pass, 0, 2f64.powf(-0.04), "pass@k (unbiased)".to_string()),
        (&maj, 2, 2f64.powf(0.04), format!("maj@k ({rule} ties)")),
    ];
    let one = [(
        &pass,
        0,
        1.0,
        if maj.is_empty() {
            "pass@1".to_string()
        } else {
            "pass@1 (= maj@1 at n = 1)".to_string()
        },
    )];
    let drawn: &[_] = if single { &one } else { &both };
    for (ds, color, dodge, name) in drawn {
        let (color, dodge) = (*color, *dodge);
        let Some(last) = ds.last() else {
            continue;
        };
        let ticks = marked(ds);
        let bars: Vec<(f64, f64, f64, f64)> = ds
            .iter()
            .filter(|d| ticks.contains(&d.k))
            .map(|d| {
                let [l, h] = d.ci95;
                lo = lo.min(100.0 * l);
                hi = hi.max(100.0 * h);
                (
                    d.k as f64 * dodge,
                    100.0 * d.difference,
                    100.0 * l,
                    100.0 * h,
                )
            })
            .collect();
        for d in ds.iter() {
            lo = lo.min(100.0 * d.difference);
            hi = hi.max(100.0 * d.difference);
        }
        if ds.len() > 1 {
            p.lines.push(Line {
                label: None,
                color,
                dashed: false,
                points: ds
                    .iter()
                    .map(|d| (d.k as f64 * dodge, 100.0 * d.difference))
                    .collect(),
            });
        }
        p.markers.push(Markers {
            label: Some(format!(
                "{name}; at k = {}: {} pts [{}, {}]{}",
                last.k,
                signed_pts(last.difference),
                signed_pts(last.ci95[0]),
                signed_pts(last.ci95[1]),
                bound_ks(ds)
            )),
            color,
            points: bars,
        });
    }
    let pad = ((hi - lo) * 0.12).max(1.0);
    p.y_range = ((lo - pad).max(-100.0), (hi + pad).min(100.0));
    p.lines.push(Line {
        label: Some("0: no difference".to_string()),
        color: 7,
        dashed: true,
        points: vec![(p.x_range.0, 0.0), (p.x_range.1, 0.0)],
    });
    Some(Figure {
        title: format!(
            "{} − {} · paired differences per k with 95% intervals · {} · seed {}",
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

/// "B − A (percentage points)" with the model names, or "difference (percentage points)" when
/// they would not fit beside the axis (the title, "B − A · ...", says which way).
fn y_label(c: &Comparison) -> String {
    let named = format!("{} − {} (percentage points)", c.model_b, c.model_a);
    if named.chars().count() <= 56 {
        named
    } else {
        "difference (percentage points)".to_string()
    }
}
