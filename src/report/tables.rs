//! Tidy CSV tables: one row per point, columns documented in README.md.
use crate::experiments::votes::VoteCurves;
use crate::experiments::{ExperimentResult, RunOutput};

/// A minimal CSV builder (RFC 4180 quoting).
#[derive(Debug, Default)]
pub struct Csv {
    text: String,
}

impl Csv {
    /// A table with the given header.
    pub fn new(header: &[&str]) -> Csv {
        let mut c = Csv::default();
        c.row(header.iter().map(|h| h.to_string()));
        c
    }

    /// Appends a row.
    pub fn row<I: IntoIterator<Item = String>>(&mut self, fields: I) {
        let line: Vec<String> = fields.into_iter().map(|f| quote(&f)).collect();
        self.text.push_str(&line.join(","));
        self.text.push('\n');
    }

    /// The finished text.
    pub fn finish(self) -> String {
        self.text
    }
}

fn quote(f: &str) -> String {
    if f.contains([',', '"', '\n']) {
        format!("\"{}\"", f.replace('"', "\"\""))
    } else {
        f.to_string()
    }
}

/// Formats a number for a table: shortest round-trip form, `inf`/`-inf`/`nan` spelled out.
pub fn num(x: f64) -> String {
    if x.is_finite() {
        format!("{x}")
    } else if x.is_nan() {
        "nan".into()
    } else if x > 0.0 {
        "inf".into()
    } else {
        "-inf".into()
    }
}

/// The CSV tables of one experiment: (file name, text).
pub fn experiment_tables(run: &RunOutput, result: &ExperimentResult) -> Vec<(String, String)> {
    match result {
        ExperimentResult::Curves(r) | ExperimentResult::AttractorSweep(r) => {
            vec![(format!("{}.csv", r.experiment), vote_csv(run, r))]
        }
    }
}

fn vote_csv(run: &RunOutput, r: &VoteCurves) -> String {
    let mut csv = Csv::new(&[
        "scenario",
        "seed",
        "experiment",
        "model",
        "attractor",
        "vote_rule",
        "k",
        "metric",
        "exact",
        "sim",
        "se",
        "z",
        "ci_low",
        "ci_high",
        "votes",
    ]);
    for p in &r.points {
        let s = &r.series[p.series];
        let e = p.estimate;
        csv.row([
            run.scenario.clone(),
            run.seed.to_string(),
            r.experiment.clone(),
            s.model.clone(),
            num(s.attractor),
            s.vote_rule.as_str().to_string(),
            p.k.to_string(),
            p.metric.as_str().to_string(),
            num(e.exact),
            num(e.sim),
            num(e.se),
            num(e.z),
            num(e.ci_low),
            num(e.ci_high),
            r.votes.to_string(),
        ]);
    }
    csv.finish()
}

/// `checks.csv`: every simulated number with its exact value, standard error and z.
pub fn checks_csv(run: &RunOutput) -> String {
    let mut csv = Csv::new(&[
        "scenario",
        "seed",
        "experiment",
        "quantity",
        "cell",
        "exact",
        "sim",
        "se",
        "z",
        "passed",
    ]);
    for c in run.checks() {
        let e = c.estimate;
        csv.row([
            run.scenario.clone(),
            run.seed.to_string(),
            c.experiment.clone(),
            c.quantity.clone(),
            c.cell.clone(),
            num(e.exact),
            num(e.sim),
            num(e.se),
            num(e.z),
            c.passed().to_string(),
        ]);
    }
    csv.finish()
}
