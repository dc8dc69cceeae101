//! The outputs of a `head-to-head` experiment: how often the better model loses a rerun.
mod figures;

use super::KindReport;
use crate::experiments::noise::HeadToHead;
use crate::experiments::{num, RunOutput};
use crate::report::csv::{estimate_row, header};
use crate::report::format::{pct, pts, Unit};
use crate::report::plot::Figure;
use crate::report::summary::Rows;

/// The report of a `head-to-head` result.
pub(super) struct Report<'a>(pub(super) &'a HeadToHead);

impl KindReport for Report<'_> {
    fn tables(&self, run: &RunOutput) -> Vec<(String, String)> {
        vec![(format!("{}.csv", self.0.experiment), h2h_csv(run, self.0))]
    }

    fn figures(&self, run: &RunOutput) -> Vec<(String, Figure)> {
        vec![(self.0.experiment.clone(), figures::h2h_figure(run, self.0))]
    }

    fn caption(&self, _tail: &str) -> &'static str {
        "How often the better model B scores below (or level with) A in one rerun, against samples per problem n."
    }

    fn markdown(&self) -> String {
        h2h_md(self.0)
    }

    fn headline(&self, rows: &mut Rows) {
        head_to_head(self.0, rows);
    }
}

fn h2h_md(v: &HeadToHead) -> String {
    let mut md = format!(
        "`{}` (pass@1 {}) against `{}` (pass@1 {}): a true gap of {:+.2} points. Each rerun scores both models on independent seeds; {} reruns per n. Probabilities in percent.\n\n",
        v.b, pct(v.pass_at_1_b, 2), v.a, pct(v.pass_at_1_a, 2), 100.0 * (v.pass_at_1_b - v.pass_at_1_a), v.reruns
    );
    if let Some(d) = &v.disagreement {
        md += &disagreement_md(v, d);
    }
    md += "| n | P(B < A) | P(B = A) | P(B > A) | P(B <= A) |\n|---:|---:|---:|---:|---:|\n";
    for r in &v.rows {
        md += &format!(
            "| {} | {} | {} | {} | {} |\n",
            r.n,
            pts(&r.loss),
            pts(&r.tie),
            pts(&r.win),
            pts(&r.loss_or_tie)
        );
    }
    md + "\n"
}

/// The paragraph on per-problem disagreement of a head-to-head with `shift_sd` > 0.
fn disagreement_md(v: &HeadToHead, d: &crate::experiments::noise::Disagreement) -> String {
    let corr = |x: Option<f64>| x.map_or_else(|| "undefined".to_string(), |c| format!("{c:.3}"));
    let population = match d.population_correlation {
        Some(c) => format!(
            "{c:.3} in the population of problems (sigma^2 / sqrt((sigma^2 + tau_A^2)(sigma^2 + tau_B^2)))"
        ),
        None => "not defined in the population for an explicit list of benchmark rates".into(),
    };
    format!(
        "Per-problem disagreement: `{}` has shift_sd {} and `{}` has shift_sd {} (logits). The correlation of the two models' per-problem logits is {population}, and {} on this fixed benchmark. The difference p_B - p_A varies across problems with SD {:.2} points ({:.2} points with the constant shifts alone): the paired difference is not one number.\n\n",
        v.a, num(d.tau_a), v.b, num(d.tau_b), corr(d.realised_correlation),
        100.0 * d.difference_sd, 100.0 * d.difference_sd_constant_shift
    )
}

fn head_to_head(v: &HeadToHead, rows: &mut Rows) {
    rows.push(
        format!("pass@1 gap {} - {}", v.b, v.a),
        Unit::Points,
        v.pass_at_1_b - v.pass_at_1_a,
        None,
    );
    for row in &v.rows {
        rows.push(
            format!("P({} < {}), n={}", v.b, v.a, row.n),
            Unit::Percent,
            row.loss.exact,
            Some(row.loss.sim),
        );
    }
    if let Some(d) = &v.disagreement {
        rows.push(
            format!("per-problem SD of p_{} - p_{}", v.b, v.a),
            Unit::Points,
            d.difference_sd,
            None,
        );
        if let Some(c) = d.population_correlation {
            rows.push(
                format!("logit correlation {} ~ {}", v.a, v.b),
                Unit::Plain,
                c,
                d.realised_correlation,
            );
        }
    }
}

fn h2h_csv(run: &RunOutput, r: &HeadToHead) -> String {
    // Per-problem disagreement (`shift_sd`) adds columns; without it the table is unchanged.
    let disagreement_columns = [
        "tau_a",
        "tau_b",
        "logit_corr_population",
        "logit_corr_realised",
        "diff_sd_per_problem",
        "diff_sd_per_problem_constant_shift",
    ];
    let disagreement: Vec<String> = r.disagreement.as_ref().map_or(Vec::new(), |d| {
        let opt = |x: Option<f64>| x.map_or_else(String::new, num);
        vec![
            num(d.tau_a),
            num(d.tau_b),
            opt(d.population_correlation),
            opt(d.realised_correlation),
            num(d.difference_sd),
            num(d.difference_sd_constant_shift),
        ]
    });
    let mut tail = vec!["reruns", "pass_at_1_a", "pass_at_1_b"];
    if r.disagreement.is_some() {
        tail.extend(disagreement_columns);
    }
    let mut csv = header(&["a", "b", "n", "quantity"], &tail);
    for row in &r.rows {
        for (q, e) in [
            ("loss", &row.loss),
            ("tie", &row.tie),
            ("win", &row.win),
            ("loss_or_tie", &row.loss_or_tie),
        ] {
            let mut fields = estimate_row(
                run,
                &r.experiment,
                [r.a.clone(), r.b.clone(), row.n.to_string(), q.into()],
                e,
                [r.reruns.to_string(), num(r.pass_at_1_a), num(r.pass_at_1_b)],
            );
            fields.extend(disagreement.iter().cloned());
            csv.row(fields);
        }
    }
    csv.finish()
}
