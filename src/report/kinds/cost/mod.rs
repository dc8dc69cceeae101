//! The outputs of a `cost` experiment: tokens per correct answer of (model, k) strategies and
//! their Pareto frontier.

use super::budget::{ticks_125, tokens_label};
use super::KindReport;
use crate::experiments::cost::{CostTable, Strategy as CostStrategy};
use crate::experiments::{num, RunOutput};
use crate::report::csv::{opt, Csv};
use crate::report::figures::{fit_pct_y, one_panel, percent};
use crate::report::format::{pct, tokens, Unit};
use crate::report::plot::{Figure, Line, Markers, Note, Panel, Scale};
use crate::report::summary::{percent as percent_text, Rows};

/// The report of a `cost` result.
pub(super) struct Report<'a>(pub(super) &'a CostTable);

impl KindReport for Report<'_> {
    fn tables(&self, run: &RunOutput) -> Vec<(String, String)> {
        vec![(format!("{}.csv", self.0.experiment), cost_csv(run, self.0))]
    }

    fn figures(&self, run: &RunOutput) -> Vec<(String, Figure)> {
        vec![(self.0.experiment.clone(), cost_figure(run, self.0))]
    }

    fn caption(&self, _tail: &str) -> &'static str {
        "Accuracy against tokens per correct answer for each strategy (model, k); the line is the exact Pareto frontier."
    }

    fn markdown(&self) -> String {
        cost_md(self.0)
    }

    fn headline(&self, rows: &mut Rows) {
        cost(self.0, rows);
    }
}

fn cost_md(c: &CostTable) -> String {
    let cap = c
        .cap_tokens
        .map_or("no cap".to_string(), |b| format!("a cap of {b} tokens"));
    let mut md = format!(
        "Strategies (model, k samples per problem; k > 1 is a majority vote) at {cap}, sorted by tokens per correct answer = k × tokens per sample / accuracy. Frontier: no cheaper strategy is at least as accurate. {} traces per problem for k = 1 and tokens, {} votes per problem for k > 1.\n\n",
        c.traces, c.votes
    );
    let money = c.price_per_mtok.is_some();
    md += "| model | k | accuracy | tokens per sample | tokens per correct | frontier |";
    if money {
        md += " cost per correct |";
    }
    md += "\n|---|---:|---:|---:|---:|:---:|";
    if money {
        md += "---:|";
    }
    md += "\n";
    for s in &c.strategies {
        let (a, t, r) = (s.accuracy, s.tokens_per_sample, s.tokens_per_correct);
        md += &format!(
            "| {} | {}{} | {} ({} ± {}) | {} ({} ± {:.0}) | {} ({} ± {:.0}) | {} |",
            s.model,
            s.k,
            if s.best_of_k { " (best-of-k)" } else { "" },
            pct(a.exact, 2),
            pct(a.sim, 2),
            crate::report::keep_digits(100.0 * a.se, 2),
            tokens(t.exact),
            tokens(t.sim),
            t.se,
            tokens(r.exact),
            tokens(r.sim),
            r.se,
            if s.frontier { "yes" } else { "" }
        );
        if let (Some(e), Some(p)) = (s.cost_per_correct, c.price_per_mtok) {
            md += &format!(" {e:.4} (at {p} per million tokens) |");
        }
        md += "\n";
    }
    md + "\n"
}

fn cost(c: &CostTable, rows: &mut Rows) {
    let mut frontier: Vec<_> = c.strategies.iter().filter(|s| s.frontier).collect();
    frontier.sort_by(|a, b| {
        a.tokens_per_correct
            .exact
            .total_cmp(&b.tokens_per_correct.exact)
    });
    for (i, s) in frontier.iter().enumerate() {
        rows.push(
            format!(
                "frontier {}: {} k={}{} (accuracy {}), tokens per correct",
                i + 1,
                s.model,
                s.k,
                if s.best_of_k { " best-of-k" } else { "" },
                percent_text(s.accuracy.exact)
            ),
            Unit::Tokens,
            s.tokens_per_correct.exact,
            Some(s.tokens_per_correct.sim),
        );
    }
}

fn cost_csv(run: &RunOutput, r: &CostTable) -> String {
    // The `selection` column (maj or best) appears only when some model has a verifier.
    let selection = r.strategies.iter().any(|s| s.best_of_k);
    let mut columns = vec![
        "scenario",
        "seed",
        "experiment",
        "model",
        "k",
        "vote_rule",
        "cap_tokens",
        "accuracy_exact",
        "accuracy_sim",
        "accuracy_se",
        "accuracy_z",
        "tokens_per_sample_exact",
        "tokens_per_sample_sim",
        "tokens_per_sample_se",
        "tokens_per_correct_exact",
        "tokens_per_correct_sim",
        "tokens_per_correct_se",
        "tokens_per_correct_z",
        "tokens_per_correct_ci_low",
        "tokens_per_correct_ci_high",
        "frontier",
        "price_per_mtok",
        "cost_per_correct_exact",
        "cost_per_correct_sim",
        "votes",
        "traces",
    ];
    if selection {
        columns.push("selection");
    }
    let mut csv = Csv::new(&columns);
    for s in &r.strategies {
        let (a, t, c) = (s.accuracy, s.tokens_per_sample, s.tokens_per_correct);
        let mut row = vec![
            run.scenario.clone(),
            run.seed.to_string(),
            r.experiment.clone(),
            s.model.clone(),
            s.k.to_string(),
            s.vote_rule.as_str().to_string(),
            r.cap_tokens.map_or("unlimited".into(), num),
            num(a.exact),
            num(a.sim),
            num(a.se),
            num(a.z),
            num(t.exact),
            num(t.sim),
            num(t.se),
            num(c.exact),
            num(c.sim),
            num(c.se),
            num(c.z),
            num(c.ci_low),
            num(c.ci_high),
            s.frontier.to_string(),
            opt(r.price_per_mtok),
            opt(s.cost_per_correct),
            opt(s.cost_per_correct_sim),
            if s.k > 1 {
                r.votes.to_string()
            } else {
                String::new()
            },
            r.traces.to_string(),
        ];
        if selection {
            row.push(if s.best_of_k { "best" } else { "maj" }.to_string());
        }
        csv.row(row);
    }
    csv.finish()
}

fn cost_figure(run: &RunOutput, r: &CostTable) -> Figure {
    // With a price, x is the money per correct answer the result holds; else tokens.
    let priced = r.price_per_mtok.is_some();
    let x_exact = |s: &CostStrategy| {
        s.cost_per_correct
            .filter(|_| priced)
            .unwrap_or(s.tokens_per_correct.exact)
    };
    let x_sim = |s: &CostStrategy| {
        s.cost_per_correct_sim
            .filter(|_| priced)
            .unwrap_or(s.tokens_per_correct.sim)
    };
    let finite: Vec<_> = r
        .strategies
        .iter()
        .filter(|s| x_exact(s).is_finite() && x_sim(s).is_finite())
        .collect();
    let xs = finite.iter().flat_map(|s| [x_exact(s), x_sim(s)]);
    let lo = xs.clone().fold(f64::INFINITY, f64::min);
    let hi = xs.fold(0.0f64, f64::max);
    let (lo, hi) = if lo.is_finite() && lo > 0.0 && hi > 0.0 {
        (lo / 1.6, hi * 1.6)
    } else if priced {
        (1e-3, 1.0)
    } else {
        (1e3, 1e6)
    };
    let cap = r.cap_tokens.map_or("no cap".to_string(), |c| {
        format!("cap {} tokens", tokens_label(c))
    });
    let mut p = Panel::new(
        format!(
            "{cap}; dots simulated (95% CI; {} traces, {} votes per problem), * on the exact Pareto frontier",
            r.traces, r.votes
        ),
        match r.price_per_mtok {
            Some(price) => format!(
                "cost per correct answer at {} per million output tokens (log scale)",
                price
            ),
            None => "tokens per correct answer (k × tokens per sample / accuracy, log scale)".into(),
        },
        "accuracy (% of problems)",
    );
    p.x_scale = Scale::Log10;
    p.x_range = (lo, hi);
    p.x_ticks = Some(ticks_125(lo, hi));
    p.lines.push(Line {
        label: Some("Pareto frontier (exact)".into()),
        color: 6,
        dashed: false,
        points: finite
            .iter()
            .filter(|s| s.frontier)
            .map(|s| (x_exact(s), percent(s.accuracy.exact)))
            .collect(),
    });
    for (mi, m) in r.models.iter().enumerate() {
        let color = [0usize, 1, 2, 3, 4, 5][mi % 6];
        p.markers.push(Markers {
            label: Some(format!(
                "{} (k = 1: one sample; k > 1: maj@k{})",
                m.model,
                if r.strategies
                    .iter()
                    .any(|s| s.model == m.model && s.best_of_k)
                {
                    ", or best@k where marked best"
                } else {
                    ""
                }
            )),
            color,
            points: finite
                .iter()
                .filter(|s| s.model == m.model)
                .map(|s| {
                    let a = s.accuracy;
                    (
                        x_sim(s),
                        percent(a.sim),
                        percent(a.ci_low),
                        percent(a.ci_high),
                    )
                })
                .collect(),
        });
    }
    // y fitted to the points and their intervals (as every percent axis), not to a fixed floor.
    fit_pct_y(&mut p);
    for s in &finite {
        p.notes.push(Note {
            at: (x_sim(s), percent(s.accuracy.sim)),
            text: format!(
                "{} k={}{}{}",
                s.model,
                s.k,
                if s.best_of_k { " best" } else { "" },
                if s.frontier { " *" } else { "" }
            ),
        });
    }
    let what = format!(
        "{}: accuracy against {} per correct answer",
        r.experiment,
        if priced { "cost" } else { "tokens" }
    );
    one_panel(run, &what, p, (1200, 760))
}
