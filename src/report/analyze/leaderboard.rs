//! The leaderboard's outputs: `leaderboard.csv`, `pairs.csv`, its section of `report.md`, the
//! terminal table with its one-line headline, and the forest plot and heat map of differences.
//! Formats a finished [`Leaderboard`] only.
use super::{interval_label, method_name, opt, pts, rule_name, signed_pts};
use crate::analyze::interval::IntervalMethod;
use crate::analyze::{Analysis, CurvePoint, Leaderboard};
use crate::report::leaderboard_plot::{
    forest_svg, heat_svg, png, ForestFigure, ForestRow, HeatCell, TriangleHeat,
};
use crate::report::tables::{num, Csv};
use crate::report::{Artifact, ReportError};

/// Most models whose per-model figures (curves, solve rates: one panel each) are drawn beside a
/// leaderboard; above it the panels would be too small to read, and the numbers are in the
/// `model-*.csv` files.
pub const MAX_PANEL_MODELS: usize = 12;

/// Whether `analyze` draws the per-model figures: always without a leaderboard, else up to
/// [`MAX_PANEL_MODELS`] models.
pub fn per_model_figures(a: &Analysis) -> bool {
    a.leaderboard.is_none() || a.models.len() <= MAX_PANEL_MODELS
}

/// Columns of `leaderboard.csv`.
pub const LEADERBOARD_COLUMNS: [&str; 20] = [
    "position",
    "model",
    "problems",
    "n_min",
    "pass_at_1",
    "ci_low",
    "ci_high",
    "ci_method",
    "rank_best",
    "rank_worst",
    "k",
    "pass_at_k",
    "pass_at_k_low",
    "pass_at_k_high",
    "vote_rule",
    "maj_at_k",
    "maj_at_k_low",
    "maj_at_k_high",
    "resolved_above",
    "resolved_below",
];

/// Columns of `pairs.csv`.
pub const PAIRS_COLUMNS: [&str; 15] = [
    "higher",
    "lower",
    "model_higher",
    "model_lower",
    "shared",
    "left_out",
    "difference",
    "se",
    "ci_low",
    "ci_high",
    "ci_method",
    "p_value",
    "p_holm",
    "resolved",
    "clusters",
];

fn point_cells(p: Option<&CurvePoint>) -> [String; 3] {
    match p {
        None => Default::default(),
        Some(p) => [
            num(p.estimate),
            opt(p.ci95.map(|c| c[0])),
            opt(p.ci95.map(|c| c[1])),
        ],
    }
}

/// `leaderboard.csv`: one row per model in table order.
pub fn leaderboard_csv(a: &Analysis, b: &Leaderboard) -> String {
    let mut csv = Csv::new(&LEADERBOARD_COLUMNS);
    let kk = b.entries.len();
    for e in &b.entries {
        let [pk, pk_lo, pk_hi] = point_cells(e.pass_at_k.as_ref());
        let [mk, mk_lo, mk_hi] = point_cells(e.maj_at_k.as_ref());
        csv.row([
            e.position.to_string(),
            e.model.clone(),
            e.problems.to_string(),
            e.n_min.to_string(),
            num(e.pass_at_1),
            num(e.ci95[0]),
            num(e.ci95[1]),
            method_name(IntervalMethod::Wilson, e.ci_clusters).to_string(),
            e.rank_interval[0].to_string(),
            e.rank_interval[1].to_string(),
            b.k.map(|k| k.to_string()).unwrap_or_default(),
            pk,
            pk_lo,
            pk_hi,
            if e.maj_at_k.is_some() {
                rule_name(a.options.summary.maj_rule).to_string()
            } else {
                String::new()
            },
            mk,
            mk_lo,
            mk_hi,
            (e.rank_interval[0] - 1).to_string(),
            (kk - e.rank_interval[1]).to_string(),
        ]);
    }
    csv.finish()
}

/// `pairs.csv`: one row per pair, the difference higher - lower on the shared problems.
pub fn pairs_csv(b: &Leaderboard) -> String {
    let mut csv = Csv::new(&PAIRS_COLUMNS);
    for p in &b.pairs {
        let d = p.difference.as_ref();
        csv.row([
            p.higher.to_string(),
            p.lower.to_string(),
            b.entries[p.higher - 1].model.clone(),
            b.entries[p.lower - 1].model.clone(),
            p.shared.to_string(),
            p.left_out.to_string(),
            opt(d.map(|d| d.difference)),
            opt(d.map(|d| d.se)),
            opt(d.map(|d| d.ci95[0])),
            opt(d.map(|d| d.ci95[1])),
            d.map(|d| method_name(d.ci_method, d.ci_clusters).to_string())
                .unwrap_or_default(),
            num(p.p_value),
            num(p.p_holm),
            p.resolved.to_string(),
            d.and_then(|d| d.ci_clusters)
                .map(|c| c.to_string())
                .unwrap_or_default(),
        ]);
    }
    csv.finish()
}

/// "1-2" or "3".
fn span(a: usize, b: usize) -> String {
    if a == b {
        a.to_string()
    } else {
        format!("{a}-{b}")
    }
}

/// The one-line headline: pairs resolved, which ranks are settled and which overlap, and the
/// resolution.
pub fn leaderboard_headline(b: &Leaderboard) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    let e = &b.entries;
    while i < e.len() {
        let settled = e[i].rank_interval[0] == e[i].rank_interval[1];
        let mut j = i;
        while j + 1 < e.len() && (e[j + 1].rank_interval[0] == e[j + 1].rank_interval[1]) == settled
        {
            j += 1;
        }
        parts.push(format!(
            "{} {} {}",
            if i == j { "rank" } else { "ranks" },
            span(i + 1, j + 1),
            match (settled, i == j) {
                (true, true) => "settled",
                (true, false) => "settled",
                (false, true) => "unsettled",
                (false, false) => "overlap",
            }
        ));
        i = j + 1;
    }
    let ranks = if e.iter().any(|e| e.rank_interval[0] == e.rank_interval[1]) {
        parts.join(", ")
    } else {
        "no rank settled".to_string()
    };
    let mut line = format!(
        "{} of {} pairs resolved; {ranks}",
        b.resolved(),
        b.pairs.len()
    );
    if let Some(r) = &b.resolution {
        line += &format!(
            "; differences under {} points are not resolvable here",
            pts(r.detectable_80)
        );
    }
    line
}

fn resolution_sentence(b: &Leaderboard) -> String {
    match &b.resolution {
        None => "no pair has a paired SE, so the resolution is not defined".to_string(),
        Some(r) => format!(
            "resolution: the median paired SE over pairs is {} points, so a single 5% test of a typical pair detects a true difference of {} points with 80% power (2.80 SE; more under Holm's adjustment); the median half-width of the pairs' 95% intervals is {} points",
            pts(r.median_se),
            pts(r.detectable_80),
            pts(r.median_half_width)
        ),
    }
}

fn score_cell(p: Option<&CurvePoint>) -> String {
    p.map_or("-".to_string(), |p| {
        format!(
            "{}{}",
            pts(p.estimate),
            p.ci95
                .map_or(String::new(), |[l, h]| format!(" [{}, {}]", pts(l), pts(h)))
        )
    })
}

fn table_rows(a: &Analysis, b: &Leaderboard) -> Vec<Vec<String>> {
    let rule = rule_name(a.options.summary.maj_rule);
    let mut header = vec![
        "#".to_string(),
        "model".to_string(),
        "pass@1 [95% CI]".to_string(),
    ];
    let k = b.k;
    let maj = b.entries.iter().any(|e| e.maj_at_k.is_some());
    if let Some(k) = k {
        header.push(format!("pass@{k} [95% CI]"));
        if maj {
            header.push(format!("maj@{k} {rule} [95% CI]"));
        }
    }
    header.push("rank (95%)".to_string());
    header.push("N".to_string());
    let mut rows = vec![header];
    for e in &b.entries {
        let mut r = vec![
            e.position.to_string(),
            e.model.clone(),
            format!(
                "{} [{}, {}]",
                pts(e.pass_at_1),
                pts(e.ci95[0]),
                pts(e.ci95[1])
            ),
        ];
        if k.is_some() {
            r.push(score_cell(e.pass_at_k.as_ref()));
            if maj {
                r.push(score_cell(e.maj_at_k.as_ref()));
            }
        }
        r.push(span(e.rank_interval[0], e.rank_interval[1]));
        r.push(e.problems.to_string());
        rows.push(r);
    }
    rows
}

/// The leaderboard on the terminal: the table, the headline, the resolution and the warnings.
pub fn leaderboard_text(a: &Analysis, b: &Leaderboard) -> String {
    let rows = table_rows(a, b);
    let w: Vec<usize> = (0..rows[0].len())
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut t = format!(
        "leaderboard of {} models (pass@1, % of problems):\n",
        b.entries.len()
    );
    for r in &rows {
        let mut line = String::from(" ");
        for (c, cell) in r.iter().enumerate() {
            if c == 1 {
                line += &format!(" {cell:<width$}", width = w[c]);
            } else {
                line += &format!(" {cell:>width$}", width = w[c]);
            }
        }
        t += line.trim_end();
        t.push('\n');
    }
    t += &format!("{}\n", leaderboard_headline(b));
    t += &format!("  {}\n", resolution_sentence(b));
    t
}

/// The leaderboard's section of `report.md`.
pub fn leaderboard_markdown(a: &Analysis, b: &Leaderboard, figures: &[String]) -> String {
    let mut md = format!("## Leaderboard\n\n**{}.**\n\n", leaderboard_headline(b));
    for w in &b.warnings {
        md += &format!("Warning: {w}.\n\n");
    }
    let rows = table_rows(a, b);
    md += &format!("| {} |\n", rows[0].join(" | "));
    md += &format!(
        "|{}\n",
        rows[0]
            .iter()
            .enumerate()
            .map(|(i, _)| if i == 1 { "---|" } else { "---:|" })
            .collect::<String>()
    );
    for r in &rows[1..] {
        md += &format!("| {} |\n", r.join(" | "));
    }
    md += &format!(
        "\nScores use each model's own problems; 95% intervals: {}. Rank (95%) is a simultaneous 95% rank interval: 1 + the number of models resolved better .. K - the number resolved worse, where a pair is resolved when its Holm-adjusted paired t-test p < 0.05 over all {} pairs (pass@1, on the problems both models share). The {}.\n\n",
        interval_label(IntervalMethod::Wilson, None),
        b.pairs.len(),
        resolution_sentence(b)
    );
    for f in figures {
        md += &format!("![{f}]({f})\n\n");
    }
    if !per_model_figures(a) {
        md += &format!(
            "The per-model figures (curves, solve rates) are drawn up to {MAX_PANEL_MODELS} models; each model's numbers are in its section below and its `model-*.csv`.\n\n"
        );
    }
    let shown: Vec<_> = b
        .pairs
        .iter()
        .filter(|p| p.resolved || p.lower == p.higher + 1)
        .collect();
    md += &format!(
        "Adjacent pairs and every resolved pair (all {} in `pairs.csv`; per model: `leaderboard.csv`):\n\n| higher | lower | shared | left out | difference | 95% CI | p | Holm p | resolved |\n|---|---|---:|---:|---:|---:|---:|---:|---|\n",
        b.pairs.len()
    );
    for p in shown {
        let (d, ci) = p
            .difference
            .as_ref()
            .map_or(("-".to_string(), "-".to_string()), |d| {
                (
                    signed_pts(d.difference),
                    format!("[{}, {}]", signed_pts(d.ci95[0]), signed_pts(d.ci95[1])),
                )
            });
        md += &format!(
            "| {} `{}` | {} `{}` | {} | {} | {d} | {ci} | {} | {} | {} |\n",
            p.higher,
            b.entries[p.higher - 1].model,
            p.lower,
            b.entries[p.lower - 1].model,
            p.shared,
            p.left_out,
            p_text(p.p_value),
            p_text(p.p_holm),
            if p.resolved { "yes" } else { "no" }
        );
    }
    md + "\n"
}

fn p_text(p: f64) -> String {
    if p < 1e-4 {
        "<0.0001".to_string()
    } else {
        format!("{p:.4}")
    }
}

/// The forest plot: models top to bottom in table order, pass@1 with its 95% interval, the
/// rank interval beside; settled ranks in blue, the rest grey.
pub fn forest_figure(a: &Analysis, b: &Leaderboard) -> ForestFigure {
    let lo = b
        .entries
        .iter()
        .map(|e| e.ci95[0])
        .fold(f64::INFINITY, f64::min);
    let hi = b
        .entries
        .iter()
        .map(|e| e.ci95[1])
        .fold(f64::NEG_INFINITY, f64::max);
    let pad = ((hi - lo) * 0.05).max(0.005);
    let x_range = (
        (100.0 * (lo - pad)).max(0.0).floor(),
        (100.0 * (hi + pad)).min(100.0).ceil(),
    );
    let n = b.entries.len() as u32;
    ForestFigure {
        title: format!("Leaderboard: {}", super::input_names_short(a)),
        caption: format!(
            "pass@1 with 95% interval (blue: rank settled); {} of {} pairs resolved (Holm)",
            b.resolved(),
            b.pairs.len()
        ),
        x_label: "pass@1 (% of problems)".to_string(),
        side_header: "rank (95%)".to_string(),
        x_range,
        rows: b
            .entries
            .iter()
            .map(|e| ForestRow {
                label: e.model.clone(),
                estimate: 100.0 * e.pass_at_1,
                low: 100.0 * e.ci95[0],
                high: 100.0 * e.ci95[1],
                side: span(e.rank_interval[0], e.rank_interval[1]),
                strong: e.rank_interval[0] == e.rank_interval[1],
            })
            .collect(),
        size: (1000, (150 + 26 * n).max(420)),
    }
}

/// The heat map: row model minus column model (pass@1 points, on their shared problems) for
/// every row above its column in the table; resolved pairs outlined.
pub fn heat_figure(a: &Analysis, b: &Leaderboard) -> TriangleHeat {
    let kk = b.entries.len();
    let max = b
        .pairs
        .iter()
        .filter_map(|p| p.difference.as_ref().map(|d| 100.0 * d.difference))
        .fold(0.0, f64::max);
    let labelled = kk <= 20;
    let cells = b
        .pairs
        .iter()
        .filter_map(|p| {
            let d = p.difference.as_ref()?;
            Some(HeatCell {
                row: p.higher - 1,
                column: p.lower - 2,
                value: 100.0 * d.difference,
                text: if labelled {
                    format!("{:.1}", 100.0 * d.difference)
                } else {
                    String::new()
                },
                outlined: p.resolved,
            })
        })
        .collect();
    let cell = if kk <= 12 {
        64
    } else {
        (900 / kk as u32).max(14)
    };
    let side = 200 + cell * (kk as u32 - 1);
    TriangleHeat {
        title: format!("Pairwise differences: {}", super::input_names_short(a)),
        caption: format!(
            "row - column, pass@1 points on shared problems; {} of {} resolved",
            b.resolved(),
            b.pairs.len()
        ),
        rows: b.entries[..kk - 1]
            .iter()
            .map(|e| format!("{} {}", e.position, e.model))
            .collect(),
        columns: (2..=kk).map(|p| p.to_string()).collect(),
        x_label: "column: table position".to_string(),
        cells,
        range: (0.0, if max > 0.0 { max } else { 1.0 }),
        scale_label: "difference (points)".to_string(),
        footnote: "outlined: resolved (Holm-adjusted p < 0.05)".to_string(),
        size: ((side + 420).max(820), (side + 60).max(560)),
    }
}

/// The leaderboard's files: the two tables and, with `figures` (the PNGs' raster), the forest
/// plot and the heat map (PNG and SVG); the PNG names go to `files` for report.md.
///
/// # Errors
/// [`ReportError`] when a figure cannot be rendered.
pub fn leaderboard_artifacts(
    a: &Analysis,
    b: &Leaderboard,
    figures: Option<crate::report::plot::Raster>,
    out: &mut Vec<Artifact>,
    files: &mut Vec<String>,
) -> Result<(), ReportError> {
    out.push(Artifact {
        file: "leaderboard.csv".into(),
        bytes: leaderboard_csv(a, b).into_bytes(),
    });
    out.push(Artifact {
        file: "pairs.csv".into(),
        bytes: pairs_csv(b).into_bytes(),
    });
    let Some(raster) = figures else {
        return Ok(());
    };
    let forest = forest_figure(a, b);
    let heat = heat_figure(a, b);
    let rendered = [
        (
            "leaderboard",
            forest_svg(&forest)?,
            forest.size,
            &forest.title,
        ),
        ("pair-differences", heat_svg(&heat)?, heat.size, &heat.title),
    ];
    for (stem, svg, size, title) in rendered {
        out.extend(Artifact::figure(stem, png(&svg, size, title, raster)?, svg));
        files.push(format!("{stem}.png"));
    }
    Ok(())
}
