//! Number formatting shared by the reports.
use crate::experiments::Estimate;
use serde::Serialize;

/// A fraction `x` in percent with a `%` sign, to `decimals` places, keeping the digits rounding
/// would hide (see [`super::keep_digits`]): "0.0015%", not "0.00%"; "99.9962%", not "100.00%".
pub(crate) fn pct(x: f64, decimals: usize) -> String {
    format!("{}%", super::keep_digits(100.0 * x, decimals))
}

/// A difference of fractions `x` in signed percentage points ("+5.2", "-0.03"), to `decimals`
/// places, keeping the digits rounding would hide (see [`super::keep_digits`]).
pub(crate) fn signed_pts(x: f64, decimals: usize) -> String {
    let t = super::keep_digits(100.0 * x.abs(), decimals);
    if x < 0.0 {
        format!("-{t}")
    } else {
        format!("+{t}")
    }
}

/// What a headline number measures, which decides how it is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// A score or probability (a fraction), printed in percent.
    Percent,
    /// An SD, SE or gap of scores (a fraction), printed in percentage points.
    Points,
    /// Tokens, printed as a whole number.
    Tokens,
    /// A count (problems, k), printed as a whole number.
    Count,
    /// A ratio of two SDs, printed with two decimals and "x".
    Ratio,
    /// A correlation or another plain number, printed with three decimals.
    Plain,
}

/// `exact (sim ± se)` in points.
pub(crate) fn pts(e: &Estimate) -> String {
    format!(
        "{} ({} ± {})",
        crate::report::keep_digits(100.0 * e.exact, 2),
        crate::report::keep_digits(100.0 * e.sim, 2),
        crate::report::keep_digits(100.0 * e.se, 2)
    )
}

/// `exact (sim ± se)` with the exact value as a percentage ([`pct`]), the simulated one and its
/// SE in points.
pub(crate) fn pct_cell(e: &Estimate) -> String {
    format!(
        "{} ({} ± {})",
        pct(e.exact, 2),
        crate::report::keep_digits(100.0 * e.sim, 2),
        crate::report::keep_digits(100.0 * e.se, 2)
    )
}

pub(crate) fn tokens(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.0}")
    } else {
        "inf".into()
    }
}
