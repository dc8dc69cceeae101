//! The outputs of a `budget` experiment: accuracy, truncation and tokens against a token budget,
//! and where two models' accuracies cross.
mod figures;

pub(in crate::report::kinds) use figures::{ticks_125, tokens_label};

use super::KindReport;
use crate::experiments::budget::{BudgetCurves, BudgetMetric};
use crate::experiments::{num, RunOutput};
use crate::report::csv::{estimate_row, header, opt, Csv};
use crate::report::format::{pct, tokens, Unit};
use crate::report::plot::Figure;
use crate::report::summary::{format_value, Rows};

/// The report of a `budget` result.
pub(super) struct Report<'a>(pub(super) &'a BudgetCurves);

impl KindReport for Report<'_> {
    fn tables(&self, run: &RunOutput) -> Vec<(String, String)> {
        let r = self.0;
        vec![
            (format!("{}.csv", r.experiment), budget_csv(run, r)),
            (
                format!("{}-crossover.csv", r.experiment),
                crossover_csv(run, r),
            ),
        ]
    }

    fn figures(&self, run: &RunOutput) -> Vec<(String, Figure)> {
        let r = self.0;
        vec![
            (r.experiment.clone(), figures::budget_figure(run, r)),
            (
                format!("{}-lengths", r.experiment),
                figures::lengths_figure(run, r),
            ),
        ]
    }

    fn caption(&self, tail: &str) -> &'static str {
        match tail {
            "-lengths" => "Trace lengths per model, correct and wrong (bars simulated, lines exact), with the budgets as dashed lines.",
            _ => "Accuracy of one sample (left) and the share of traces cut off (right) against the token budget; dashed verticals mark the crossovers.",
        }
    }

    fn markdown(&self) -> String {
        budget_md(self.0)
    }

    fn headline(&self, rows: &mut Rows) {
        budget(self.0, rows);
    }
}

fn budget_cell(b: &BudgetCurves, mi: usize, budget: f64, metric: BudgetMetric) -> String {
    b.point(mi, budget, metric).map_or("".into(), |p| {
        let e = p.estimate;
        match metric {
            BudgetMetric::TokensPerSample => {
                format!("{} ({} ± {:.0})", tokens(e.exact), tokens(e.sim), e.se)
            }
            _ => format!(
                "{} ({} ± {})",
                pct(e.exact, 2),
                pct(e.sim, 2),
                crate::report::keep_digits(100.0 * e.se, 2)
            ),
        }
    })
}

fn budget_md(b: &BudgetCurves) -> String {
    let mut md = format!(
        "Accuracy of one sample under a token budget B (a trace longer than B ends with no answer), {} simulated traces per problem per model, every budget read off the same traces.\n\n",
        b.traces
    );
    for c in &b.crossovers {
        let gaps = format!(
            "The gap {} − {} is {:+.2} points at {} tokens and {:+.2} points at {} tokens.",
            c.model_a,
            c.model_b,
            100.0 * c.gap_at_min,
            c.min_budget_tokens,
            100.0 * c.gap_at_max,
            c.max_budget_tokens
        );
        if c.crossings.is_empty() {
            md += &format!(
                "`{}` and `{}` do not cross between {} and {} tokens ({} leads). {gaps}\n\n",
                c.model_a, c.model_b, c.min_budget_tokens, c.max_budget_tokens, c.leader_at_min
            );
        }
        for x in &c.crossings {
            md += &format!(
                "`{}` and `{}` cross at **{:.0} tokens** (accuracy {}): `{}` leads below, `{}` above. {gaps}\n\n",
                c.model_a, c.model_b, x.budget_tokens, pct(x.accuracy, 2), x.leader_below, x.leader_above
            );
        }
    }
    for (metric, what) in [
        (BudgetMetric::Accuracy, "Acc(B)"),
        (BudgetMetric::TruncationRate, "truncation rate"),
        (BudgetMetric::TokensPerSample, "tokens per sample"),
    ] {
        md += &format!("{what}:\n\n| budget (tokens) |");
        for m in &b.models {
            md += &format!(" {} |", m.model);
        }
        md += "\n|---:|";
        md += &"---:|".repeat(b.models.len());
        md += "\n";
        for &budget in &b.budgets {
            md += &format!("| {budget} |");
            for mi in 0..b.models.len() {
                md += &format!(" {} |", budget_cell(b, mi, budget, metric));
            }
            md += "\n";
        }
        md += "\n";
    }
    md += &format!("Crossovers: `{}-crossover.csv`. ", b.experiment);
    md
}

fn budget(b: &BudgetCurves, rows: &mut Rows) {
    for c in &b.crossovers {
        if c.crossings.is_empty() {
            rows.push(
                format!(
                    "{} vs {}: no crossover from {} to {} tokens; {} leads at both ends (gap at the largest budget)",
                    c.model_a,
                    c.model_b,
                    c.min_budget_tokens,
                    c.max_budget_tokens,
                    c.leader_at_max
                ),
                Unit::Points,
                c.gap_at_max.abs(),
                None,
            );
        }
        for x in &c.crossings {
            rows.push(
                format!(
                    "crossover {} vs {}: {} leads below, {} above (tokens)",
                    c.model_a, c.model_b, x.leader_below, x.leader_above
                ),
                Unit::Tokens,
                x.budget_tokens,
                None,
            );
            rows.push(
                format!("accuracy at the crossover {} vs {}", c.model_a, c.model_b),
                Unit::Percent,
                x.accuracy,
                None,
            );
        }
    }
    let (lo, hi) = (
        b.budgets.first().copied().unwrap_or(0.0),
        b.budgets.last().copied().unwrap_or(0.0),
    );
    for (mi, m) in b.models.iter().enumerate() {
        for budget in [lo, hi] {
            if let Some(p) = b.point(mi, budget, BudgetMetric::Accuracy) {
                rows.push(
                    format!(
                        "{} accuracy at {} tokens",
                        m.model,
                        format_value(Unit::Tokens, budget)
                    ),
                    Unit::Percent,
                    p.estimate.exact,
                    Some(p.estimate.sim),
                );
            }
        }
    }
}

fn budget_csv(run: &RunOutput, r: &BudgetCurves) -> String {
    let mut csv = header(&["model", "budget_tokens", "metric"], &["traces"]);
    for p in &r.points {
        csv.row(estimate_row(
            run,
            &r.experiment,
            [
                r.models[p.model].model.clone(),
                num(p.budget_tokens),
                p.metric.as_str().to_string(),
            ],
            &p.estimate,
            [r.traces.to_string()],
        ));
    }
    csv.finish()
}

fn crossover_csv(run: &RunOutput, r: &BudgetCurves) -> String {
    let mut csv = Csv::new(&[
        "scenario",
        "seed",
        "experiment",
        "model_a",
        "model_b",
        "crossover_tokens",
        "accuracy_at_crossover",
        "leader_below",
        "leader_above",
        "min_budget_tokens",
        "max_budget_tokens",
        "gap_at_min",
        "gap_at_max",
    ]);
    for c in &r.crossovers {
        let base = |cross: Option<&crate::experiments::budget::Crossing>| {
            vec![
                run.scenario.clone(),
                run.seed.to_string(),
                r.experiment.clone(),
                c.model_a.clone(),
                c.model_b.clone(),
                opt(cross.map(|x| x.budget_tokens)),
                opt(cross.map(|x| x.accuracy)),
                cross.map_or(c.leader_at_min.clone(), |x| x.leader_below.clone()),
                cross.map_or(c.leader_at_max.clone(), |x| x.leader_above.clone()),
                num(c.min_budget_tokens),
                num(c.max_budget_tokens),
                num(c.gap_at_min),
                num(c.gap_at_max),
            ]
        };
        if c.crossings.is_empty() {
            csv.row(base(None));
        }
        for x in &c.crossings {
            csv.row(base(Some(x)));
        }
    }
    csv.finish()
}
