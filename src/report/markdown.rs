//! `report.md` (every figure and table, ready to paste) and `summary.json` (headline numbers).

use crate::experiments::RunOutput;

pub use super::summary::{
    headline_rows, headline_text, headline_value, summary, Headline, Summary, Unit,
};

/// The Markdown report. `figures` lists (experiment name, PNG file) pairs: each experiment's
/// section embeds its own figures only.
pub fn report(run: &RunOutput, figures: &[(String, String)]) -> String {
    let s = summary(run);
    let mut md = format!(
        "# {}\n\nScenario `{}` from `{}`, seed {}, evalsim {}.\n\n",
        run.title, run.scenario, run.source, run.seed, run.version
    );
    md += &format!(
        "Checks: {} simulated numbers compared with their exact values; {} failed (|z| > {} and, for counts of trials, outside Bernstein's bound; largest |z| = {:.2}). See `checks.csv`.\n\n",
        s.checks, s.checks_failed, s.z_bound, s.max_abs_z
    );
    md += "Percentages are benchmark scores (mean over problems). Each cell reads `exact (simulated ± standard error)`.\n\n";
    if !s.headline.is_empty() {
        md += "## Summary\n\n| experiment | quantity | exact | simulated |\n|---|---|---:|---:|\n";
        for r in headline_rows(&s) {
            md += &format!("| {} | {} | {} | {} |\n", r[0], r[1], r[2], r[3]);
        }
        md += "\n";
    }
    for r in &run.results {
        let name = r.name();
        let kind = super::kinds::of(r);
        md += &format!("## {name}\n\n");
        for (_, f) in figures.iter().filter(|(e, _)| e == name) {
            let tail = f.trim_end_matches(".png").strip_prefix(name).unwrap_or("");
            md += &format!("![{name}]({f})\n\n{}\n\n", kind.caption(tail));
        }
        md += &kind.markdown();
        md += &format!("Table: `{name}.csv`.\n\n");
    }
    md
}
