//! Clustered standard errors, and the 95% intervals that rest on them.
//!
//! When problems come in clusters (the subtasks of an lm-eval group, a `cluster` or `task` column,
//! an inspect_ai metadata key named with `--cluster`), problems of one cluster share more than the
//! population does (a passage, a template, a subject), so the N problems are not N independent
//! draws: the claim about the population of problems the clusters stand for rests on C clusters.
//!
//! - **Clustered SE** (CR1): SE_cl^2 = C / (C - 1) * sum_g (sum_{i in g} (theta_i - m))^2 / N^2,
//!   the cluster-robust (sandwich) variance of a mean with the small-sample factor C / (C - 1)
//!   (Cameron and Miller 2015, "A Practitioner's Guide to Cluster-Robust Inference", J. Human
//!   Resources 50(2), section VI.B: the factor c = G/(G-1) (N-1)/(N-K), which is G/(G-1) for a
//!   mean, K = 1; Stata's default; inspect_ai's `stderr(cluster=)`). Without the factor (CR0) it
//!   is the clustered SE of Miller (2024, "Adding Error Bars to Evals", eq. 4), lower by
//!   sqrt((C - 1) / C): 5.1% at C = 10, 2.7% at C = 19, 1.0% at C = 50. CR0 is biased low with
//!   few clusters (each cluster's residual is fitted by the mean it helps estimate); the factor
//!   removes that bias exactly when the clusters have equal size and equal variance, and the
//!   interval below is measured with it (docs/intervals.md).
//! - **Interval**: the Wilson interval of [`super::interval`] with the effective sample size from
//!   the clustered SE, n* = m (1 - m) / SE_cl^2 (on the unit scale; the survey form of Korn and
//!   Graubard 1998, whose setting this is), and the t quantile with C - 1 degrees of freedom, the
//!   number of independent units less one (the clustered variance is estimated from C cluster
//!   totals; its distribution is close to a scaled chi-square with C - 1 df for clusters of
//!   similar size). The paired difference of maj@k keeps its Tango-type score interval with the
//!   same effective sample size (the design effect SE_cl^2 / SE^2 divides N) and t(C - 1). When
//!   every cluster has the same mean score (SE_cl = 0), the exact all-equal bound after C
//!   clusters.
//!
//! Depends on [`super::interval`] only; pure.
use super::interval::{
    all_equal_bound, paired_score_scaled, t_quantile_real, wilson_with_variance, IntervalMethod,
    MeanInterval,
};

/// Below this many clusters the clustered SE is itself uncertain, and `analyze` warns.
pub const FEW_CLUSTERS: usize = 10;

/// The cluster of each problem, as indices 0..C in sorted label order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clusters {
    of: Vec<usize>,
    count: usize,
}

impl Clusters {
    /// The clusters of problems labelled `labels`; `None` unless every problem has a label.
    /// Cost: O(N log N).
    pub fn new(labels: &[Option<&str>]) -> Option<Self> {
        if labels.is_empty() || labels.iter().any(Option::is_none) {
            return None;
        }
        let mut sorted: Vec<&str> = labels.iter().flatten().copied().collect();
        sorted.sort_unstable();
        sorted.dedup();
        let of = labels
            .iter()
            .map(|l| sorted.binary_search(&l.unwrap_or_default()).unwrap_or(0))
            .collect();
        Some(Clusters {
            of,
            count: sorted.len(),
        })
    }

    /// Number of clusters C.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Number of problems.
    pub fn len(&self) -> usize {
        self.of.len()
    }

    /// True without problems (never: [`Clusters::new`] needs one).
    pub fn is_empty(&self) -> bool {
        self.of.is_empty()
    }
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len().max(1) as f64
}

/// The CR1 clustered SE of the mean of `values` (module docs); `None` with fewer than 2
/// clusters or when `clusters` is for another number of problems. Cost: O(N).
pub fn clustered_se(values: &[f64], clusters: &Clusters) -> Option<f64> {
    let g = clusters.count;
    if g < 2 || values.len() != clusters.of.len() {
        return None;
    }
    let m = mean(values);
    let mut sums = vec![0.0; g];
    for (v, &c) in values.iter().zip(&clusters.of) {
        sums[c] += v - m;
    }
    let ss: f64 = sums.iter().map(|s| s * s).sum();
    Some((g as f64 / (g - 1) as f64 * ss).sqrt() / values.len() as f64)
}

/// The 95% interval of the mean of `values` in `[lo, hi]` from the clustered SE with t(C - 1)
/// (module docs): the Wilson interval, or for [`IntervalMethod::PairedScore`] on [-1, 1] the
/// Tango-type score interval at the effective sample size. `None` with fewer than 2 clusters.
/// Cost: O(N).
pub fn clustered_interval(
    values: &[f64],
    clusters: &Clusters,
    (lo, hi): (f64, f64),
    method: IntervalMethod,
) -> Option<MeanInterval> {
    let se = clustered_se(values, clusters)?;
    let c = clusters.count;
    let m = mean(values);
    if se <= 0.0 {
        return Some(all_equal_bound(m, c, (lo, hi)));
    }
    let df = (c - 1) as f64;
    if method == IntervalMethod::PairedScore && (lo, hi) == (-1.0, 1.0) {
        let n = values.len();
        let var = values.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (n - 1).max(1) as f64;
        return paired_score_scaled(n, m, var, var / (se * se), t_quantile_real(df));
    }
    wilson_with_variance(m, se * se, df, (lo, hi))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::interval::mean_interval;

    #[test]
    fn one_problem_per_cluster_is_the_question_se_times_the_factor() {
        let v = [0.1, 0.5, 0.9, 0.3, 0.7, 0.2];
        let labels: Vec<String> = (0..6).map(|i| format!("c{i}")).collect();
        let refs: Vec<Option<&str>> = labels.iter().map(|s| Some(s.as_str())).collect();
        let c = Clusters::new(&refs).unwrap();
        let m = mean(&v);
        let var = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / 5.0;
        // C = N: CR1 = sqrt(N/(N-1) * sum (v - m)^2) / N = the question SE.
        let q = (var / 6.0).sqrt();
        assert!((clustered_se(&v, &c).unwrap() - q).abs() < 1e-15);
        // Same variance: the Wilson interval with t(N - 1), i.e. the WilsonT method.
        let i = clustered_interval(&v, &c, (0.0, 1.0), IntervalMethod::Wilson).unwrap();
        let t = mean_interval(&v, (0.0, 1.0), IntervalMethod::WilsonT).unwrap();
        assert!((i.low - t.low).abs() < 1e-12 && (i.high - t.high).abs() < 1e-12);
        assert!(Clusters::new(&[Some("a"), None]).is_none());
    }

    #[test]
    fn equal_cluster_means_give_the_bound_after_c_clusters() {
        let v = [0.0, 1.0, 1.0, 0.0];
        let c = Clusters::new(&[Some("a"), Some("a"), Some("b"), Some("b")]).unwrap();
        assert_eq!(clustered_se(&v, &c), Some(0.0));
        let i = clustered_interval(&v, &c, (0.0, 1.0), IntervalMethod::Wilson).unwrap();
        let u = crate::analyze::interval::none_in_n_bound(2);
        assert!(
            (i.low - (0.5 - u * 0.5)).abs() < 1e-15 && (i.high - (0.5 + u * 0.5)).abs() < 1e-15
        );
    }
}
