//! The answer of each experiment: the few numbers it exists for, printed by `run` and written to
//! `summary.json` (the same rows, machine-readable). Chosen per experiment kind:
//!
//! - curves: pass@1, pass@k, maj@k (and best@k with a verifier) at the largest k, and the large-k
//!   limit of maj@k;
//! - attractor-sweep: maj@k at the largest k for each setting, and where it falls below pass@1;
//! - seed-variance: the seed SD at each n and the question-sampling SE;
//! - vote-spread: the seed SDs of maj@k and of the average of its k samples at the largest k, their
//!   ratio, and from which k maj@k is the noisier;
//! - head-to-head: the gap, then P(B < A) at each n;
//! - budget: each crossover (tokens, who leads below and above), then accuracy at the extreme
//!   budgets;
//! - cost: the Pareto frontier in order of tokens per correct answer;
//! - contamination: the smallest fresh set per share, and its power;
//! - judge: the true win rate of B and the rate each protocol reports;
//! - confidence: each model's unfiltered maj@k and its best filter's;
//! - plan: the cheapest design that meets each target.
use serde::Serialize;

use crate::experiments::budget::{BudgetCurves, BudgetMetric};
use crate::experiments::cost::CostTable;
use crate::experiments::noise::{HeadToHead, SeedVariance, VoteSpread};
use crate::experiments::votes::{Metric, VoteCurves};
use crate::experiments::{ExperimentResult, RunOutput};
use crate::model::VoteRule;
use crate::scenario::SweepAxis;

/// Headline numbers of a run.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// Scenario name.
    pub scenario: String,
    /// Title.
    pub title: String,
    /// Seed used.
    pub seed: u64,
    /// evalsim version.
    pub version: String,
    /// Number of checks.
    pub checks: usize,
    /// Checks that failed (|z| above the bound and, for counts of trials, outside Bernstein's
    /// bound).
    pub checks_failed: usize,
    /// Largest |z|.
    pub max_abs_z: f64,
    /// The |z| bound.
    pub z_bound: f64,
    /// Headline values, experiment by experiment in scenario order.
    pub headline: Vec<Headline>,
}

pub use super::format::Unit;

/// One headline number.
#[derive(Debug, Clone, Serialize)]
pub struct Headline {
    /// Experiment.
    pub experiment: String,
    /// What it is.
    pub name: String,
    /// How it is measured and printed.
    pub unit: Unit,
    /// Exact value.
    pub exact: f64,
    /// Simulated value, when there is one.
    pub sim: Option<f64>,
}

/// The rows of one experiment, built with its name.
struct Rows<'a> {
    experiment: &'a str,
    out: &'a mut Vec<Headline>,
}

impl Rows<'_> {
    fn push(&mut self, name: String, unit: Unit, exact: f64, sim: Option<f64>) {
        self.out.push(Headline {
            experiment: self.experiment.to_string(),
            name,
            unit,
            exact,
            sim,
        });
    }
}

/// The summary of a run.
pub fn summary(run: &RunOutput) -> Summary {
    let checks = run.checks();
    let max_abs_z = checks
        .iter()
        .map(|c| c.estimate.z.abs())
        .fold(0.0, f64::max);
    let mut headline = Vec::new();
    for r in &run.results {
        let mut rows = Rows {
            experiment: r.name(),
            out: &mut headline,
        };
        match r {
            ExperimentResult::Curves(v) => curves(v, &mut rows),
            ExperimentResult::AttractorSweep(v) => attractor_sweep(v, &mut rows),
            ExperimentResult::SeedVariance(v) => seed_variance(v, &mut rows),
            ExperimentResult::VoteSpread(v) => vote_spread(v, &mut rows),
            ExperimentResult::HeadToHead(v) => head_to_head(v, &mut rows),
            ExperimentResult::Budget(b) => budget(b, &mut rows),
            ExperimentResult::Cost(c) => cost(c, &mut rows),
            ExperimentResult::Judge(j) => {
                super::judge::judge_headline(j, &mut |n, u, e, s| rows.push(n, u, e, s))
            }
            ExperimentResult::Confidence(c) => {
                super::confidence::confidence_headline(c, &mut |n, u, e, s| rows.push(n, u, e, s))
            }
            ExperimentResult::Contamination(c) => {
                for p in &c.plan {
                    match (p.fresh, p.power) {
                        (Some(m), Some(power)) => {
                            rows.push(
                                format!(
                                    "{} c={}: smallest fresh set reaching {} power",
                                    c.model,
                                    p.share,
                                    percent(c.target_power)
                                ),
                                Unit::Count,
                                m as f64,
                                None,
                            );
                            rows.push(
                                format!("{} c={}: power with {m} fresh problems", c.model, p.share),
                                Unit::Percent,
                                power.exact,
                                Some(power.sim),
                            );
                        }
                        _ => rows.push(
                            format!(
                                "{} c={}: fresh problems needed (none up to {} reaches {} power)",
                                c.model,
                                p.share,
                                c.max_fresh,
                                percent(c.target_power)
                            ),
                            Unit::Count,
                            f64::INFINITY,
                            None,
                        ),
                    }
                }
            }
            ExperimentResult::Plan(p) => {
                let per_problem = match p.spec.metric {
                    crate::scenario::spec::PlanMetric::Pass1 => "n",
                    crate::scenario::spec::PlanMetric::Maj { .. } => "k",
                };
                for a in &p.answers {
                    let (what, unit) = if a.target == "loss_or_tie" {
                        ("P(B <= A)", Unit::Percent)
                    } else {
                        ("95% CI half-width", Unit::Points)
                    };
                    let bound = format_value(unit, a.bound);
                    match a.best {
                        Some((big_n, n, v)) => rows.push(
                            format!(
                                "{} at gap {} logits, cheapest with {what} <= {bound}: N={big_n}, {}={n}",
                                a.design.as_str(),
                                a.gap_logits,
                                per_problem
                            ),
                            unit,
                            v,
                            None,
                        ),
                        None => rows.push(
                            format!(
                                "{} at gap {} logits: no cell of the grid has {what} <= {bound}",
                                a.design.as_str(),
                                a.gap_logits
                            ),
                            unit,
                            f64::NAN,
                            None,
                        ),
                    }
                }
            }
        }
    }
    Summary {
        scenario: run.scenario.clone(),
        title: run.title.clone(),
        seed: run.seed,
        version: run.version.to_string(),
        checks: checks.len(),
        checks_failed: checks.iter().filter(|c| !c.passed()).count(),
        max_abs_z,
        z_bound: run.z_bound,
        headline,
    }
}

fn percent(x: f64) -> String {
    format_value(Unit::Percent, x)
}

fn curves(v: &VoteCurves, rows: &mut Rows) {
    let kmax = *v.k.last().unwrap_or(&1);
    for (si, s) in v.series.iter().enumerate() {
        let tag = if v.series.iter().filter(|t| t.model == s.model).count() > 1 {
            format!("{} {}", s.model, s.modes_label())
        } else {
            s.model.clone()
        };
        // pass@1 from the curve's point at k = 1 (graded and true for a graded model), else exact.
        let first = v
            .points
            .iter()
            .find(|p| p.series == si && p.k == 1 && p.metric == Metric::PassAtK);
        match first {
            Some(p) => match &p.truth {
                Some(t) => {
                    rows.push(
                        format!("{tag} pass@1 (graded)"),
                        Unit::Percent,
                        p.estimate.exact,
                        Some(p.estimate.sim),
                    );
                    rows.push(
                        format!("{tag} pass@1 (true)"),
                        Unit::Percent,
                        t.exact,
                        Some(t.sim),
                    );
                }
                None => rows.push(
                    format!("{tag} pass@1"),
                    Unit::Percent,
                    p.estimate.exact,
                    Some(p.estimate.sim),
                ),
            },
            None => rows.push(format!("{tag} pass@1"), Unit::Percent, s.pass_at_1, None),
        }
        // n@k between maj@k and best@k; 1@k under random ties is maj@k itself.
        let submitted = v.points.iter().filter_map(|p| match p.metric {
            Metric::SubmitAtK(n) if p.series == si && p.k == kmax => {
                (n > 1 || s.vote_rule != VoteRule::Random).then_some(p.metric)
            }
            Metric::VerifiedAtK(n) if p.series == si && p.k == kmax => (n > 1).then_some(p.metric),
            _ => None,
        });
        let metrics: Vec<Metric> = [Metric::PassAtK, Metric::MajAtK]
            .into_iter()
            .chain(submitted)
            .chain([Metric::BestAtK])
            .collect();
        for metric in metrics {
            for p in v
                .points
                .iter()
                .filter(|p| p.series == si && p.k == kmax && p.metric == metric)
            {
                let graded = if p.truth.is_some() { " (graded)" } else { "" };
                rows.push(
                    format!(
                        "{tag} {}{graded}",
                        metric.name().replace('k', &kmax.to_string())
                    ),
                    Unit::Percent,
                    p.estimate.exact,
                    Some(p.estimate.sim),
                );
            }
        }
        rows.push(
            format!("{tag} large-k limit of maj@k"),
            Unit::Percent,
            s.ceiling,
            None,
        );
    }
}

fn attractor_sweep(v: &VoteCurves, rows: &mut Rows) {
    let kmax = *v.k.last().unwrap_or(&1);
    let metric = if v.axis == Some(SweepAxis::GraderFpr) {
        Metric::PassAtK
    } else {
        Metric::MajAtK
    };
    let name = metric.name().replace('k', &kmax.to_string());
    let mut collapse = None;
    for (si, s) in v.series.iter().enumerate() {
        let setting = match v.axis {
            Some(SweepAxis::GraderFpr) => s
                .grader
                .as_ref()
                .map_or_else(|| s.modes_label(), |g| format!("fpr={}", g.fpr)),
            _ => s.modes_label(),
        };
        for p in v
            .points
            .iter()
            .filter(|p| p.series == si && p.k == kmax && p.metric == metric)
        {
            rows.push(
                format!("{} {setting}: {name}", s.model),
                Unit::Percent,
                p.estimate.exact,
                Some(p.estimate.sim),
            );
            if metric == Metric::MajAtK && collapse.is_none() && p.estimate.exact < s.pass_at_1 {
                collapse = Some(format!(
                    "{} pass@1 ({name} falls below it from {setting})",
                    s.model
                ));
            }
        }
    }
    if metric == Metric::MajAtK {
        rows.push(
            collapse.unwrap_or_else(|| {
                let model = v.series.first().map_or("", |s| s.model.as_str());
                format!("{model} pass@1 ({name} stays above it at every setting)")
            }),
            Unit::Percent,
            v.series.first().map_or(f64::NAN, |s| s.pass_at_1),
            None,
        );
    }
}

fn seed_variance(v: &SeedVariance, rows: &mut Rows) {
    for row in &v.rows {
        rows.push(
            format!("{} seed SD of pass@1, n={}", v.model, row.n),
            Unit::Points,
            row.sd.exact,
            Some(row.sd.sim),
        );
    }
    rows.push(
        format!("{} question-sampling SE (any n)", v.model),
        Unit::Points,
        v.question_se,
        None,
    );
}

fn vote_spread(v: &VoteSpread, rows: &mut Rows) {
    let Some(last) = v.rows.last() else { return };
    rows.push(
        format!("{} maj@{} seed SD", v.model, last.k),
        Unit::Points,
        last.maj_sd.exact,
        Some(last.maj_sd.sim),
    );
    rows.push(
        format!(
            "{} seed SD of pass@1 averaged over {} samples",
            v.model, last.k
        ),
        Unit::Points,
        last.avg_sd.exact,
        Some(last.avg_sd.sim),
    );
    let ratio = |maj: f64, avg: f64| if avg > 0.0 { maj / avg } else { f64::NAN };
    rows.push(
        format!("{} maj@{} SD / averaged SD", v.model, last.k),
        Unit::Ratio,
        ratio(last.maj_sd.exact, last.avg_sd.exact),
        Some(ratio(last.maj_sd.sim, last.avg_sd.sim)),
    );
    // The smallest k from which maj@k is noisier than the average of its samples at every k.
    let noisier_from = v
        .rows
        .iter()
        .rposition(|r| r.maj_sd.exact <= r.avg_sd.exact)
        .map_or(Some(0), |i| (i + 1 < v.rows.len()).then_some(i + 1))
        .map(|i| v.rows[i].k);
    match noisier_from {
        Some(k) => rows.push(
            format!(
                "{} maj@k noisier than the average of its k samples from k",
                v.model
            ),
            Unit::Count,
            k as f64,
            None,
        ),
        None => rows.push(
            format!(
                "{} maj@k is not noisier than the average of its k samples at k={}",
                v.model, last.k
            ),
            Unit::Count,
            last.k as f64,
            None,
        ),
    }
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
                percent(s.accuracy.exact)
            ),
            Unit::Tokens,
            s.tokens_per_correct.exact,
            Some(s.tokens_per_correct.sim),
        );
    }
}

/// A value as printed. Percentages keep the digits rounding would hide (see
/// [`super::keep_digits`]; below 1e-7% in scientific notation): "0.0021%", not "0.00%". Nothing
/// prints as "-0.00": a value that rounds to zero loses its sign.
pub fn format_value(unit: Unit, v: f64) -> String {
    if v.is_nan() {
        return "-".into();
    }
    let text = match unit {
        Unit::Tokens | Unit::Count if v.is_infinite() => "inf".to_string(),
        Unit::Tokens | Unit::Count => format!("{v:.0}"),
        Unit::Ratio => format!("{v:.2}x"),
        Unit::Plain => format!("{v:.3}"),
        Unit::Points => format!("{:.2} pts", 100.0 * v),
        Unit::Percent => {
            let x = 100.0 * v;
            if x != 0.0 && x.abs() < 0.1 && x.is_finite() {
                let digits = (1 - x.abs().log10().floor() as i32).max(2) as usize;
                if digits <= 8 {
                    format!("{x:.digits$}%")
                } else {
                    // Tinier than 1e-7 %: scientific notation, not a run of zeros.
                    format!("{x:.1e}%")
                }
            } else {
                format!("{}%", super::keep_digits(x, 2))
            }
        }
    };
    match text.strip_prefix('-') {
        Some(rest) if rest.chars().all(|c| !c.is_ascii_digit() || c == '0') => rest.to_string(),
        _ => text,
    }
}

/// A headline value as printed, in the headline's unit.
pub fn headline_value(h: &Headline, v: f64) -> String {
    format_value(h.unit, v)
}

/// The headline numbers as text rows: (experiment, quantity, exact, simulated), every row.
pub fn headline_rows(s: &Summary) -> Vec<[String; 4]> {
    s.headline
        .iter()
        .map(|h| {
            [
                h.experiment.clone(),
                h.name.clone(),
                headline_value(h, h.exact),
                h.sim.map_or_else(String::new, |v| headline_value(h, v)),
            ]
        })
        .collect()
}

/// The headline numbers as a table for the terminal, columns aligned (numbers to the right), the
/// experiment named once at the head of its rows.
pub fn headline_text(s: &Summary) -> String {
    let mut rows = vec![[
        "experiment".to_string(),
        "quantity".to_string(),
        "exact".to_string(),
        "simulated".to_string(),
    ]];
    let mut last = String::new();
    for mut r in headline_rows(s) {
        if r[0] == last {
            r[0] = String::new();
        } else {
            last = r[0].clone();
        }
        rows.push(r);
    }
    let w: Vec<usize> = (0..4)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in &rows {
        let line = format!(
            "  {:<w0$}  {:<w1$}  {:>w2$}  {:>w3$}",
            r[0],
            r[1],
            r[2],
            r[3],
            w0 = w[0],
            w1 = w[1],
            w2 = w[2],
            w3 = w[3]
        );
        out += line.trim_end();
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_that_rounds_to_zero_prints_without_a_minus_sign() {
        assert_eq!(format_value(Unit::Points, -1e-6), "0.00 pts");
        assert_eq!(format_value(Unit::Plain, -1e-9), "0.000");
        assert_eq!(format_value(Unit::Points, -0.0123), "-1.23 pts");
        assert_eq!(format_value(Unit::Percent, -0.0), "0.00%");
    }

    #[test]
    fn each_unit_prints_in_its_own_form() {
        assert_eq!(format_value(Unit::Tokens, 17_646.6), "17647");
        assert_eq!(format_value(Unit::Count, f64::INFINITY), "inf");
        assert_eq!(format_value(Unit::Ratio, 2.538), "2.54x");
        assert_eq!(format_value(Unit::Percent, 0.0108), "1.08%");
        assert_eq!(format_value(Unit::Points, 0.0108), "1.08 pts");
        assert_eq!(format_value(Unit::Percent, f64::NAN), "-");
    }
}
