//! Goodness of fit of `evalsim fit`: per model, the observed number of problems with c = 0..n
//! correct against the number the fitted model expects ([`super::CountHistogram`]),
//! summarised by Pearson's chi-square with sparse bins pooled.
//!
//! Bins: adjacent counts are pooled from c = 0 upwards until a bin expects at least
//! [`MIN_EXPECTED`] problems (Cochran's rule, under which the chi-square approximation holds);
//! a remainder expecting fewer joins the last bin. The statistic sum (O - E)^2 / E has
//! bins - 1 - p degrees of freedom, p the number of estimated parameters that shape the model's
//! histogram (its location, its total spread and its run_sd, each only when estimated, not
//! refused). The parameters are estimated from all the data rather than from these bins, so
//! the null distribution lies between chi-square with bins - 1 - p and with bins - 1 degrees of
//! freedom (Chernoff and Lehmann, 1954); the p-value uses bins - 1 - p, the side that warns more
//! readily. A parametric bootstrap would be exact but costs a refit per replicate (seconds for
//! a code benchmark), where this costs nothing. With fewer than p + 2 bins there is no test.
//! A p-value below [`POOR_FIT_P`] makes the fit "poor" and gets a warning.
use serde::{Deserialize, Serialize};

use super::{CountHistogram, FitResult, Status};
use crate::analyze::fit::joint::Parameter;

/// Smallest expected number of problems in a pooled bin.
pub const MIN_EXPECTED: f64 = 5.0;

/// A p-value below this is a poor fit (warned about).
pub const POOR_FIT_P: f64 = 0.01;

/// One pooled bin: counts `from..=to` correct.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GofBin {
    /// Lowest count in the bin.
    pub from: usize,
    /// Highest count in the bin.
    pub to: usize,
    /// Problems observed with a count in the bin.
    pub observed: usize,
    /// Problems the fitted model expects there.
    pub expected: f64,
}

/// The chi-square goodness of fit of one model's count histogram.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GoodnessOfFit {
    /// Model name.
    pub model: String,
    /// The pooled bins.
    pub bins: Vec<GofBin>,
    /// Pearson's chi-square over the bins.
    pub statistic: f64,
    /// Degrees of freedom: bins - 1 - estimated parameters (0: no test).
    pub df: usize,
    /// Upper tail of chi-square(df) at the statistic (`None` without a test).
    pub p_value: Option<f64>,
}

impl GoodnessOfFit {
    /// Whether the p-value is below [`POOR_FIT_P`].
    pub fn poor(&self) -> bool {
        self.p_value.is_some_and(|p| p < POOR_FIT_P)
    }

    /// One line: "chi-square 3.21 on 4 df (7 bins of c = 0..10), p = 0.52".
    pub fn describe(&self) -> String {
        let n = self.bins.last().map_or(0, |b| b.to);
        let head = format!(
            "observed against expected problems with c = 0..{n} correct in {} bins",
            self.bins.len()
        );
        match self.p_value {
            Some(p) => format!(
                "chi-square {:.2} on {} df ({head}), p = {}",
                self.statistic,
                self.df,
                p_text(p)
            ),
            None => format!("no test ({head}: too few bins expecting {MIN_EXPECTED} or more problems for the parameters fitted)"),
        }
    }
}

/// A p-value with two significant digits ("0.52", "0.0031", "1.2e-10").
pub fn p_text(p: f64) -> String {
    if p >= 0.001 {
        let digits = (1 - p.log10().floor() as i32).max(2) as usize;
        format!("{p:.digits$}")
    } else {
        format!("{p:.1e}")
    }
}

/// Adjacent counts pooled until each bin expects at least [`MIN_EXPECTED`] problems.
pub fn pooled_bins(h: &CountHistogram) -> Vec<GofBin> {
    let mut bins: Vec<GofBin> = Vec::new();
    let mut open: Option<GofBin> = None;
    for (c, (&o, &e)) in h.observed.iter().zip(&h.fitted).enumerate() {
        let b = open.get_or_insert(GofBin {
            from: c,
            to: c,
            observed: 0,
            expected: 0.0,
        });
        b.to = c;
        b.observed += o;
        b.expected += e;
        if b.expected >= MIN_EXPECTED {
            bins.extend(open.take());
        }
    }
    if let Some(rest) = open {
        match bins.last_mut() {
            Some(last) => {
                last.to = rest.to;
                last.observed += rest.observed;
                last.expected += rest.expected;
            }
            None => bins.push(rest),
        }
    }
    bins
}

/// The goodness of fit of model m (see the module docs).
pub fn goodness_of_fit(fit: &FitResult, m: usize) -> GoodnessOfFit {
    use statrs::distribution::{ChiSquared, ContinuousCDF};
    let model = &fit.models[m];
    let bins = pooled_bins(&model.counts);
    let statistic = bins
        .iter()
        .filter(|b| b.expected > 0.0)
        .map(|b| (b.observed as f64 - b.expected).powi(2) / b.expected)
        .sum();
    let estimated = |p: Parameter| {
        fit.parameter(p)
            .is_some_and(|q| q.status == Status::Estimated)
    };
    let location = if m == 0 {
        estimated(Parameter::Mu)
    } else {
        estimated(Parameter::Mu) || estimated(Parameter::Shift(m))
    };
    let spread = estimated(Parameter::Sigma) || estimated(Parameter::Tau(m));
    let fitted = usize::from(location)
        + usize::from(spread)
        + usize::from(model.counts.run_shape.is_some() && estimated(Parameter::Omega(m)));
    let df = bins.len().saturating_sub(1 + fitted);
    let p_value = (df > 0)
        .then(|| ChiSquared::new(df as f64).ok())
        .flatten()
        .map(|d| d.sf(statistic));
    GoodnessOfFit {
        model: model.name.clone(),
        bins,
        statistic,
        df,
        p_value,
    }
}

/// The warning for a poor fit of model m: the test, the bins furthest off, and the refused
/// parameters that are the likely cause.
pub fn poor_fit_warning(fit: &FitResult, g: &GoodnessOfFit) -> Option<String> {
    if !g.poor() {
        return None;
    }
    let mut worst: Vec<&GofBin> = g.bins.iter().collect();
    let z = |b: &GofBin| (b.observed as f64 - b.expected).abs() / b.expected.max(1e-300).sqrt();
    worst.sort_by(|a, b| z(b).total_cmp(&z(a)));
    let shown: Vec<String> = worst
        .iter()
        .take(2)
        .map(|b| {
            let c = if b.from == b.to {
                format!("c = {}", b.from)
            } else {
                format!("c = {}..{}", b.from, b.to)
            };
            format!("{c}: {} observed, {:.1} expected", b.observed, b.expected)
        })
        .collect();
    let refused: Vec<String> = fit
        .parameters
        .iter()
        .filter_map(|q| match &q.status {
            Status::Refused { fallback, .. } => Some(format!("{} (fallback {fallback})", q.label)),
            Status::Estimated => None,
        })
        .collect();
    let cause = if refused.is_empty() {
        "the model (logit-normal problem rates, binomial samples) does not describe these data; read the scenario's numbers as rough".to_string()
    } else {
        format!(
            "not estimated and held at a default: {}, the likely cause; the scenario's numbers rest on that default",
            refused.join(", ")
        )
    };
    Some(format!(
        "the fit is poor for `{}`: {} ({}); {cause}",
        g.model,
        g.describe(),
        shown.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn histogram(observed: Vec<usize>, fitted: Vec<f64>) -> CountHistogram {
        CountHistogram {
            n: observed.len() - 1,
            run_shape: None,
            observed,
            fitted,
        }
    }

    #[test]
    fn sparse_bins_are_pooled_until_each_expects_five() {
        let h = histogram(
            vec![3, 1, 2, 10, 4, 1, 0],
            vec![2.0, 2.0, 2.0, 8.0, 3.0, 2.0, 1.0],
        );
        let b = pooled_bins(&h);
        let spans: Vec<(usize, usize, usize)> =
            b.iter().map(|b| (b.from, b.to, b.observed)).collect();
        assert_eq!(spans, vec![(0, 2, 6), (3, 3, 10), (4, 6, 5)]);
        assert!(b.iter().all(|b| b.expected >= MIN_EXPECTED));
        let total: f64 = b.iter().map(|b| b.expected).sum();
        assert!((total - 20.0).abs() < 1e-12);
    }

    #[test]
    fn p_values_print_with_two_significant_digits() {
        assert_eq!(p_text(0.5234), "0.52");
        assert_eq!(p_text(0.0312), "0.031");
        assert_eq!(p_text(0.0031), "0.0031");
        assert_eq!(p_text(1.23e-10), "1.2e-10");
    }
}
