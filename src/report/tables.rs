//! Tidy CSV tables: one row per point, columns documented in README.md.
use crate::experiments::{Estimate, RunOutput};

pub use super::csv::Csv;
pub use crate::experiments::num;

/// The columns of one check, after any leading columns of its table: the same in `checks.csv`
/// and `sweep.csv`.
pub const CHECK_COLUMNS: [&str; 9] = [
    "experiment",
    "quantity",
    "cell",
    "exact",
    "sim",
    "se",
    "z",
    "passed",
    "rule",
];

/// The fields of one check under [`CHECK_COLUMNS`]: its names, (exact, sim, se, z) as written,
/// and the verdict of the estimate's pass rule.
pub fn check_fields(names: [&str; 3], numbers: [String; 4], e: &Estimate) -> Vec<String> {
    let mut row: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    row.extend(numbers);
    row.extend([e.passed().to_string(), e.rule().to_string()]);
    row
}

/// `checks.csv`: every simulated number with its exact value, standard error and z.
pub fn checks_csv(run: &RunOutput) -> String {
    let mut header = vec!["scenario", "seed"];
    header.extend(CHECK_COLUMNS);
    let mut csv = Csv::new(&header);
    for c in run.checks() {
        let e = c.estimate;
        let mut row = vec![run.scenario.clone(), run.seed.to_string()];
        row.extend(check_fields(
            [&c.experiment, &c.quantity, &c.cell],
            [num(e.exact), num(e.sim), num(e.se), num(e.z)],
            &e,
        ));
        csv.row(row);
    }
    csv.finish()
}
