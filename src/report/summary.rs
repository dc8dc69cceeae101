//! The answer of each experiment: the few numbers it exists for, printed by `run` and written to
//! `summary.json` (the same rows, machine-readable). Each kind's `headline` in [`super::kinds`]
//! chooses them:
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

use crate::experiments::RunOutput;

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

/// The headline rows of one experiment, built with its name.
pub struct Rows<'a> {
    experiment: &'a str,
    out: &'a mut Vec<Headline>,
}

impl Rows<'_> {
    /// Adds the row `name` in `unit`.
    pub(crate) fn push(&mut self, name: String, unit: Unit, exact: f64, sim: Option<f64>) {
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
        super::kinds::of(r).headline(&mut rows);
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

pub(crate) fn percent(x: f64) -> String {
    format_value(Unit::Percent, x)
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
