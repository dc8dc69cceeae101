//! `report.md` of `analyze`: inputs, per-model tables, the comparison and the figures. Formats
//! finished results only; depends on [`crate::analyze`]'s result types and the sibling text
//! helpers.
use super::text::{
    at_k, boundary_notes, clustered_diff, diff_note, harness_text, interval_labels, model_header,
    p_value, reversal_text, shown, sign_text,
};
use super::{
    ci_cell, ci_pct, input_names, interval_label, opt_pts, pts, rule_name, signed_pts,
    EXACT_BOUND_MARK,
};
use crate::analyze::interval::IntervalBasis;
use crate::analyze::summary::BINARY_ONLY;
use crate::analyze::{Analysis, ModelAnalysis};

pub(super) fn md_curve_table(m: &ModelAnalysis, rule: &str) -> String {
    let s = &m.summary;
    let note = boundary_notes(m, true);
    let note = if note.is_empty() {
        note
    } else {
        format!("\n{note}")
    };
    if let Some(p) = &s.mean_score {
        return format!(
            "| metric | estimate | question SE | sampling SE | clustered SE | 95% CI | bootstrap 95% CI |\n|---|---:|---:|---:|---:|---:|---:|\n| mean score (partial credit) | {} | {} | {} | {} | {} | {} |\n{note}\nNot available: {BINARY_ONLY}.\n\n",
            pts(p.estimate),
            opt_pts(p.question_se),
            opt_pts(p.sampling_se),
            opt_pts(p.clustered_se),
            ci_cell(p.ci95, p.ci_basis),
            ci_pct(p.bootstrap_ci),
        );
    }
    let mut md = format!(
        "| k | pass@k | question SE | sampling SE | clustered SE | 95% CI | plug-in | pass^k | maj@k ({rule}) | maj@k 95% CI | maj@k first |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    );
    for p in shown(&s.pass_at_k) {
        let maj = at_k(s.maj_at_k.as_ref(), p.k);
        md += &format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            p.k,
            pts(p.estimate),
            opt_pts(p.question_se),
            opt_pts(p.sampling_se),
            opt_pts(p.clustered_se),
            ci_cell(p.ci95, p.ci_basis),
            opt_pts(p.plug_in),
            at_k(Some(&s.pass_hat_k), p.k).map_or("-".to_string(), |q| pts(q.estimate)),
            maj.map_or("-".to_string(), |q| pts(q.estimate)),
            maj.map_or("-".to_string(), |q| ci_cell(q.ci95, q.ci_basis)),
            at_k(s.maj_first.as_ref(), p.k).map_or("-".to_string(), |q| pts(q.estimate)),
        );
    }
    md + &note + "\n"
}

/// `report.md`: inputs, per-model tables, the comparison and the figures.
pub fn analysis_markdown(a: &Analysis, model_files: &[String], figures: &[String]) -> String {
    let rule = rule_name(a.options.summary.maj_rule);
    let mut md = format!(
        "# evalsim analyze: {}\n\nevalsim {}, seed {}, {} bootstrap resamples over problems. Numbers are percentages of the benchmark (mean over problems); SEs in percentage points. {} (effective sample size m(1-m)/SE^2), within [0, 100]; the exact bound when every problem (cluster) scores the same or there is one problem.\n\n",
        input_names(a),
        a.version,
        a.seed,
        a.options.summary.bootstrap,
        interval_labels(a)
    );
    md += "| input | format | models |\n|---|---|---|\n";
    for s in &a.sources {
        md += &format!(
            "| `{}` | {} | {} |\n",
            s.source,
            s.format.name(),
            s.models
                .iter()
                .map(|m| format!("`{m}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    md += "\n";
    let harness = harness_text(a);
    if !harness.is_empty() {
        md += &format!("## The harness's own numbers\n\n```\n{harness}```\n\n");
    }
    let (board_figures, figures): (Vec<String>, Vec<String>) = figures
        .iter()
        .cloned()
        .partition(|f| f.starts_with("leaderboard") || f.starts_with("pair-differences"));
    if let Some(b) = &a.leaderboard {
        md += &super::leaderboard::leaderboard_markdown(a, b, &board_figures);
    }
    for f in &figures {
        md += &format!("![{f}]({f})\n\n");
    }
    for (m, file) in a.models.iter().zip(model_files) {
        md += &format!("## {}\n\n", m.summary.model);
        md += &format!("```\n{}```\n\n", model_header(m));
        for w in &m.summary.warnings {
            md += &format!("Warning: {w}.\n\n");
        }
        md += &md_curve_table(m, rule);
        md += &format!("Every k: `{file}.csv`.\n\n");
    }
    if let Some(c) = &a.comparison {
        md += &format!(
            "## Comparison: `{}` - `{}`\n\n{} common problems ({} only in `{}`, {} only in `{}`).\n\n",
            c.model_b, c.model_a, c.common_problems, c.only_a, c.model_a, c.only_b, c.model_b
        );
        md += "| metric | A | B | B - A | paired SE | question part | sampling part | 95% CI | sign test: B better / A better, p |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
        let name = |r: super::compare_figure::Row<'_>| super::compare_figure::row_name(r, rule);
        let rows: Vec<(String, &crate::analyze::DiffEstimate)> =
            super::compare_figure::shown_rows(c)
                .into_iter()
                .map(|r| (name(r), r.1))
                .collect();
        for (name, d) in &rows {
            md += &format!(
                "| {name} | {} | {} | {} | {} | {} | {} | [{}, {}]{} | {} / {}, p = {} |\n",
                pts(d.a),
                pts(d.b),
                signed_pts(d.difference),
                pts(d.se),
                pts(d.question_se),
                opt_pts(d.sampling_se),
                signed_pts(d.ci95[0]),
                signed_pts(d.ci95[1]),
                if d.ci_basis == IntervalBasis::Spread {
                    ""
                } else {
                    EXACT_BOUND_MARK
                },
                d.sign_test.b_better,
                d.sign_test.a_better,
                p_value(d.sign_test.p_value),
            );
        }
        let all = super::compare_figure::comparison_rows(c).len();
        if all > rows.len() {
            md += &format!(
                "\nRows at the k of the curves' ticks; every k ({all} rows): `comparison.csv`.\n"
            );
        }
        let note = diff_note(c, &rows);
        if !note.is_empty() {
            md += &format!("\n{note}");
        }
        // One line per interval construction, naming the rows that use it.
        let mut labels: Vec<(String, Vec<&str>)> = Vec::new();
        for (name, d) in &rows {
            let label = format!(
                "{}{}",
                interval_label(d.ci_method, d.ci_clusters),
                clustered_diff(d)
            );
            match labels.iter_mut().find(|(l, _)| *l == label) {
                Some((_, names)) => names.push(name),
                None => labels.push((label, vec![name])),
            }
        }
        for (label, names) in &labels {
            let plural = if names.len() > 1 { "s" } else { "" };
            md += &format!(
                "\n95% CI of the {} difference{plural}: {label}.\n",
                names.join(", ")
            );
        }
        for r in super::compare_figure::headline_rows(c) {
            md += &format!("\n{}.\n", sign_text(c, &name(r), r.1));
        }
        md += &format!(
            "\nProbability that a fresh rerun at the same n reverses the pass@1 order: {}. Table: `comparison.csv`.\n\n",
            reversal_text(c),
        );
    }
    md
}
