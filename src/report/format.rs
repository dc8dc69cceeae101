//! Number formatting shared by the reports.

/// A fraction `x` in percent with a `%` sign, to `decimals` places, keeping the digits rounding
/// would hide (see [`super::keep_digits`]): "0.0015%", not "0.00%"; "99.9962%", not "100.00%".
pub(crate) fn pct(x: f64, decimals: usize) -> String {
    format!("{}%", super::keep_digits(100.0 * x, decimals))
}
