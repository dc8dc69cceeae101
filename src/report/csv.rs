//! The CSV tables' building blocks: a minimal writer and the estimate columns every table of
//! exact and simulated values shares. A leaf of `report`: the per-experiment table modules
//! import it, it imports none of them.
use crate::experiments::{num, Estimate, RunOutput};

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

/// The columns every estimate contributes: exact, sim, se, z, ci_low, ci_high.
pub(super) const ESTIMATE_COLUMNS: [&str; 6] = ["exact", "sim", "se", "z", "ci_low", "ci_high"];

pub(super) fn estimate_fields(e: &Estimate) -> [String; 6] {
    [
        num(e.exact),
        num(e.sim),
        num(e.se),
        num(e.z),
        num(e.ci_low),
        num(e.ci_high),
    ]
}

/// A row of a table made by [`header`]: scenario, seed, experiment, the `lead` fields, the
/// estimate's six fields, then the `tail` fields.
pub(super) fn estimate_row(
    run: &RunOutput,
    experiment: &str,
    lead: impl IntoIterator<Item = String>,
    e: &Estimate,
    tail: impl IntoIterator<Item = String>,
) -> Vec<String> {
    let mut v = vec![
        run.scenario.clone(),
        run.seed.to_string(),
        experiment.to_string(),
    ];
    v.extend(lead);
    v.extend(estimate_fields(e));
    v.extend(tail);
    v
}

/// A table of estimates: scenario, seed, experiment, the `lead` columns, the estimate's six
/// columns, then the `tail` columns.
pub(super) fn header(lead: &[&str], tail: &[&str]) -> Csv {
    let cols: Vec<&str> = ["scenario", "seed", "experiment"]
        .iter()
        .chain(lead)
        .chain(ESTIMATE_COLUMNS.iter())
        .chain(tail)
        .copied()
        .collect();
    Csv::new(&cols)
}

pub(crate) fn opt(x: Option<f64>) -> String {
    x.map_or(String::new(), num)
}
