//! A leaderboard of many models on one benchmark: each model's score with its 95% interval, the
//! paired difference of every pair with a Holm-adjusted p-value, a simultaneous 95% rank
//! interval per model, and the benchmark's resolution at this N and n.
//!
//! - **Scores** use each model's own problems: pass@1 (the mean score for partial credit) with
//!   the interval every score of `analyze` has (`summary::reported_interval`: Wilson
//!   with effective sample size, clustered when the problems carry clusters), and pass@k /
//!   maj@k at the leaderboard's k copied from the model's summary. Models are sorted by pass@1
//!   (ties by name).
//! - **Pairs** use the problems both models share: the paired difference of pass@1
//!   (`compare::paired_values`, the computation of `analyze --compare`) with its
//!   interval, and the two-sided paired t-test p = 2 P(T > |d| / SE), T ~ t(N - 1) (with
//!   clusters, the CR2 clustered SE with Bell-McCaffrey degrees of freedom, as the interval);
//!   when every shared problem has the same difference
//!   the t statistic is undefined and the exact sign test is used (p = 1 for all zeros,
//!   2 * 0.5^N for N equal non-zero differences). The p-values of all K (K - 1) / 2 pairs are
//!   Holm-adjusted (step-down, family-wise error <= 5% under any dependence between the tests);
//!   a pair is **resolved** when its adjusted p < 0.05.
//! - **Rank intervals** follow from the resolved pairs: model m ranks in
//!   \[1 + #models resolved better than m, K - #models resolved worse than m\]. Whenever no
//!   resolved pair is wrong (in existence or in direction), every model's true rank lies in its
//!   interval, so the intervals hold simultaneously with the Holm tests' family-wise level,
//!   with no resampling; tied true scores count as any of the ranks they share. The
//!   simulation check is the suite's `support::leaderboard_coverage` (docs/leaderboard.md).
//! - **Resolution**: the median paired SE over pairs, times z(0.975) + z(0.80) = 2.80: the true
//!   difference a single unadjusted 5% test of a typical pair detects with 80% power, in
//!   points; the median half-width of the pairs' 95% intervals is kept beside it.
//!
//! Pure: no I/O, no random numbers; pairs are computed in parallel and collected in order.
use std::collections::HashMap;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

use super::cluster::Clusters;
use super::compare::{paired_values, sign_test_p_value, DiffEstimate};
use super::data::ModelSamples;
use super::interval::IntervalMethod;
use super::summary::{reported_interval, CurvePoint, ModelSummary};
use super::{AnalyzeError, Result};

/// Family-wise level of the pairwise tests and the rank intervals.
pub const FAMILY_LEVEL: f64 = 0.05;

/// z(0.975) + z(0.80): the multiple of the SE a true difference needs for 80% power in one
/// two-sided 5% test.
pub const POWER_80_MULTIPLE: f64 = crate::exact::normal::Z_95 + crate::exact::normal::Z_80;

/// One model's row of the leaderboard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// Model name.
    pub model: String,
    /// Position in the sorted table (1 = highest pass@1).
    pub position: usize,
    /// The model's own problems.
    pub problems: usize,
    /// Smallest n over its problems.
    pub n_min: usize,
    /// pass@1 over its own problems (the mean score for partial credit).
    pub pass_at_1: f64,
    /// 95% interval of `pass_at_1`.
    pub ci95: [f64; 2],
    /// Clusters the interval rests on, when clustered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci_clusters: Option<usize>,
    /// pass@k at the leaderboard's k (from the model's summary).
    pub pass_at_k: Option<CurvePoint>,
    /// maj@k at the leaderboard's k (from the model's summary; `None` without answers).
    pub maj_at_k: Option<CurvePoint>,
    /// Simultaneous 95% rank interval `[best, worst]` (1 = top).
    pub rank_interval: [usize; 2],
}

/// One pair of models, `higher` above `lower` in the table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pair {
    /// Position (1-based) of the model higher in the table.
    pub higher: usize,
    /// Position of the model lower in the table.
    pub lower: usize,
    /// Problems both have.
    pub shared: usize,
    /// Problems of either model left out because the other lacks them.
    pub left_out: usize,
    /// pass@1 difference higher - lower on the shared problems (`a` = lower, `b` = higher);
    /// `None` with fewer than 2 shared problems.
    pub difference: Option<DiffEstimate>,
    /// Two-sided p-value of no difference (paired t-test, or the sign test without spread).
    pub p_value: f64,
    /// Holm-adjusted p-value over all pairs.
    pub p_holm: f64,
    /// `p_holm` < 0.05.
    pub resolved: bool,
}

/// The benchmark's resolution on this data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resolution {
    /// Median paired SE over the pairs.
    pub median_se: f64,
    /// [`POWER_80_MULTIPLE`] * `median_se`: the smallest true difference one unadjusted 5% test
    /// of a typical pair detects with 80% power.
    pub detectable_80: f64,
    /// Median half-width of the pairs' 95% intervals.
    pub median_half_width: f64,
}

/// The whole leaderboard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Leaderboard {
    /// k of the pass@k and maj@k columns (`None` when some model reports none beyond 1).
    pub k: Option<usize>,
    /// Models, sorted by pass@1 (highest first).
    pub entries: Vec<Entry>,
    /// Every pair (i < j in table order), row-major.
    pub pairs: Vec<Pair>,
    /// Distinct problems over all models.
    pub problems_union: usize,
    /// Problems every model has.
    pub problems_shared: usize,
    /// Resolution (`None` when no pair has a paired SE).
    pub resolution: Option<Resolution>,
    /// Warnings (problem sets that differ, pairs without enough shared problems).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl Leaderboard {
    /// Pairs resolved.
    pub fn resolved(&self) -> usize {
        self.pairs.iter().filter(|p| p.resolved).count()
    }

    /// The pair of table positions `i` < `j` (1-based).
    pub fn pair(&self, i: usize, j: usize) -> Option<&Pair> {
        self.pairs.iter().find(|p| p.higher == i && p.lower == j)
    }
}

/// Two-sided p-value of a paired difference: the t-test on `d.difference / SE` (the CR2
/// clustered SE with Bell-McCaffrey degrees of freedom when the interval is clustered, the
/// same two numbers the interval uses; else the paired SE with t(N - 1)); without
/// spread the exact sign test over the `n` shared problems. Cost: O(1).
pub fn paired_p_value(d: &DiffEstimate, n: usize) -> f64 {
    // The SE and degrees of freedom of the pair's interval: CR2 with Bell-McCaffrey's df when
    // it is clustered, else the paired SE with N - 1.
    let (se, df) = match d.clustered_se_df {
        Some([se, df]) => (se, df),
        None => (d.se, n.saturating_sub(1) as f64),
    };
    if se.is_nan() || se <= 0.0 || df <= 0.0 {
        return if d.difference == 0.0 {
            1.0
        } else if d.difference > 0.0 {
            sign_test_p_value(0, n)
        } else {
            sign_test_p_value(n, 0)
        };
    }
    let t = (d.difference / se).abs();
    match StudentsT::new(0.0, 1.0, df) {
        // The upper tail directly, so tiny p-values keep their digits.
        Ok(dist) => (2.0 * dist.sf(t)).min(1.0),
        Err(_) => 1.0,
    }
}

/// Holm's step-down adjustment of `p` (same order out). Cost: O(m log m).
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]).then(a.cmp(&b)));
    let mut out = vec![0.0; m];
    let mut running: f64 = 0.0;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * p[i]).min(1.0));
        out[i] = running;
    }
    out
}

/// Rank intervals of `k` models from the resolved pairs: `(i, j, i_better)` for each resolved
/// pair of positions (0-based). Cost: O(k + pairs).
pub fn rank_intervals(k: usize, resolved: &[(usize, usize, bool)]) -> Vec<[usize; 2]> {
    let mut better = vec![0usize; k];
    let mut worse = vec![0usize; k];
    for &(i, j, i_better) in resolved {
        let (w, l) = if i_better { (i, j) } else { (j, i) };
        worse[w] += 1;
        better[l] += 1;
    }
    (0..k).map(|m| [1 + better[m], k - worse[m]]).collect()
}

/// The leaderboard's k: the largest k of pass@k (and of maj@k when every model has it) that
/// every summary reports.
fn common_k(summaries: &[&ModelSummary]) -> Option<usize> {
    let ks = |c: &[CurvePoint]| c.iter().map(|p| p.k).collect::<Vec<_>>();
    let first = ks(&summaries.first()?.pass_at_k);
    first
        .into_iter()
        .filter(|k| {
            summaries
                .iter()
                .all(|s| s.pass_at_k.iter().any(|p| p.k == *k))
        })
        .max()
        .filter(|&k| k > 1)
}

fn point_at(curve: Option<&[CurvePoint]>, k: Option<usize>) -> Option<CurvePoint> {
    let k = k?;
    curve?.iter().find(|p| p.k == k).cloned()
}

/// The leaderboard of `models` (with their summaries, in the same order, for the pass@k and
/// maj@k columns; empty leaves those out). Cost: O(K N) for the
/// scores plus O(K^2 N) for the pairs (in parallel).
///
/// # Errors
/// Fewer than 3 models; a model without problems.
pub fn leaderboard(models: &[&ModelSamples], summaries: &[&ModelSummary]) -> Result<Leaderboard> {
    let kk = models.len();
    if kk < 3 || !(summaries.is_empty() || summaries.len() == kk) {
        return Err(AnalyzeError::BadOption {
            option: "leaderboard".to_string(),
            value: format!("{kk} model(s)"),
            expected: "at least three models".to_string(),
        });
    }
    let k = common_k(summaries);
    // Per model: each problem's (estimate, variance of the estimate) and the id index.
    let values: Vec<Vec<(f64, Option<f64>)>> = models
        .par_iter()
        .map(|m| {
            m.problems
                .iter()
                .map(|p| p.score_mean_and_variance())
                .collect()
        })
        .collect();
    let mut rows = entries_of(models, summaries, &values, k)?;
    rows.sort_by(|(_, a), (_, b)| {
        b.pass_at_1
            .total_cmp(&a.pass_at_1)
            .then_with(|| a.model.cmp(&b.model))
    });
    let order: Vec<usize> = rows.iter().map(|(i, _)| *i).collect();
    let mut entries: Vec<Entry> = rows.into_iter().map(|(_, e)| e).collect();
    for (pos, e) in entries.iter_mut().enumerate() {
        e.position = pos + 1;
    }
    let index: Vec<HashMap<&str, usize>> = models
        .iter()
        .map(|m| {
            m.problems
                .iter()
                .enumerate()
                .map(|(j, p)| (p.id.as_str(), j))
                .collect()
        })
        .collect();
    let mut union: HashMap<&str, usize> = HashMap::new();
    for ix in &index {
        for id in ix.keys() {
            *union.entry(id).or_insert(0) += 1;
        }
    }
    let problems_shared = union.values().filter(|&&c| c == kk).count();
    let slots: Vec<(usize, usize)> = (0..kk)
        .flat_map(|i| (i + 1..kk).map(move |j| (i, j)))
        .collect();
    let computed = paired_differences(models, &values, &index, &order, &slots);
    let mut warnings = Vec::new();
    let mut pairs = Vec::with_capacity(slots.len());
    for (&(i, j), c) in slots.iter().zip(computed) {
        let (shared, left_out, difference) = c?;
        if difference.is_none() {
            warnings.push(format!(
                "`{}` and `{}` share {shared} problem(s); a paired comparison needs 2 (counted as unresolved)",
                entries[i].model, entries[j].model
            ));
        }
        let p_value = difference
            .as_ref()
            .map_or(1.0, |d| paired_p_value(d, shared));
        pairs.push(Pair {
            higher: i + 1,
            lower: j + 1,
            shared,
            left_out,
            difference,
            p_value,
            p_holm: 1.0,
            resolved: false,
        });
    }
    let adjusted = holm(&pairs.iter().map(|p| p.p_value).collect::<Vec<_>>());
    let mut resolved = Vec::new();
    for (p, a) in pairs.iter_mut().zip(adjusted) {
        p.p_holm = a;
        p.resolved = a < FAMILY_LEVEL;
        if p.resolved {
            let up = p.difference.as_ref().is_some_and(|d| d.difference > 0.0);
            resolved.push((p.higher - 1, p.lower - 1, up));
        }
    }
    for (e, r) in entries.iter_mut().zip(rank_intervals(kk, &resolved)) {
        e.rank_interval = r;
    }
    if problems_shared != union.len() {
        warnings.insert(
            0,
            format!(
                "the models' problem sets differ: {} problems in all, {problems_shared} shared by every model; scores use each model's own problems, pairs the problems both share (left out per pair in pairs.csv)",
                union.len()
            ),
        );
    }
    Ok(Leaderboard {
        k,
        entries,
        resolution: resolution(&pairs),
        pairs,
        problems_union: union.len(),
        problems_shared,
        warnings,
    })
}

/// One row per model (position and rank interval still to set), in model order with its index:
/// pass@1 with its Wilson interval (by cluster where the problems name clusters), and pass@k
/// and maj@k at the common k.
fn entries_of(
    models: &[&ModelSamples],
    summaries: &[&ModelSummary],
    values: &[Vec<(f64, Option<f64>)>],
    k: Option<usize>,
) -> Result<Vec<(usize, Entry)>> {
    let kk = models.len();
    let mut rows = Vec::with_capacity(kk);
    for (i, m) in models.iter().enumerate() {
        let scores: Vec<f64> = values[i].iter().map(|v| v.0).collect();
        let labels: Vec<Option<&str>> = m.problems.iter().map(|p| p.cluster.as_deref()).collect();
        let clusters = Clusters::new(&labels);
        let (ci, ci_clusters, _) = reported_interval(
            &scores,
            (0.0, 1.0),
            IntervalMethod::Wilson,
            clusters.as_ref(),
        );
        let ci = ci.ok_or_else(|| AnalyzeError::TooFewProblems {
            what: format!("the leaderboard row of `{}`", m.name),
            needed: 1,
            found: 0,
        })?;
        let s = summaries.get(i);
        rows.push((
            i,
            Entry {
                model: m.name.clone(),
                position: 0,
                problems: m.problems.len(),
                n_min: m.problems.iter().map(|p| p.n).min().unwrap_or(0),
                pass_at_1: scores.iter().sum::<f64>() / scores.len() as f64,
                ci95: [ci.low, ci.high],
                ci_clusters,
                pass_at_k: point_at(s.map(|s| s.pass_at_k.as_slice()), k),
                maj_at_k: point_at(s.and_then(|s| s.maj_at_k.as_deref()), k),
                rank_interval: [1, kk],
            },
        ));
    }
    Ok(rows)
}

/// A model pair's result: problems shared, problems left out, and the paired difference (None
/// when fewer than 2 problems are shared).
type PairDifference = Result<(usize, usize, Option<DiffEstimate>)>;

/// The paired difference of each pair of table positions (i higher, j lower) on the problems
/// both models answered, in parallel.
fn paired_differences(
    models: &[&ModelSamples],
    values: &[Vec<(f64, Option<f64>)>],
    index: &[HashMap<&str, usize>],
    order: &[usize],
    slots: &[(usize, usize)],
) -> Vec<PairDifference> {
    slots
        .par_iter()
        .map(|&(i, j)| {
            // Table positions i (higher) and j (lower); A = lower, B = higher.
            let (hi, lo) = (order[i], order[j]);
            let mut shared = Vec::new();
            let mut labels = Vec::new();
            for (q, p) in models[lo].problems.iter().enumerate() {
                if let Some(&r) = index[hi].get(p.id.as_str()) {
                    shared.push((values[lo][q], values[hi][r]));
                    labels.push(
                        p.cluster
                            .as_deref()
                            .or(models[hi].problems[r].cluster.as_deref()),
                    );
                }
            }
            let n = shared.len();
            let left_out = models[lo].problems.len() + models[hi].problems.len() - 2 * n;
            if n < 2 {
                return Ok((n, left_out, None));
            }
            let clusters = Clusters::new(&labels);
            let d = paired_values(1, IntervalMethod::Wilson, &shared, clusters.as_ref())?;
            Ok((n, left_out, Some(d)))
        })
        .collect()
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    })
}

fn resolution(pairs: &[Pair]) -> Option<Resolution> {
    let diffs: Vec<&DiffEstimate> = pairs.iter().filter_map(|p| p.difference.as_ref()).collect();
    let median_se = median(
        diffs
            .iter()
            .map(|d| {
                d.clustered_se
                    .filter(|_| d.ci_clusters.is_some())
                    .unwrap_or(d.se)
            })
            .collect(),
    )?;
    let median_half_width = median(
        diffs
            .iter()
            .map(|d| (d.ci95[1] - d.ci95[0]) / 2.0)
            .collect(),
    )?;
    Some(Resolution {
        median_se,
        detectable_80: POWER_80_MULTIPLE * median_se,
        median_half_width,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::summary::{summarize_model, SummaryOptions};

    fn board(models: &[ModelSamples]) -> Leaderboard {
        let opts = SummaryOptions {
            bootstrap: 0,
            ..SummaryOptions::default()
        };
        let sums: Vec<ModelSummary> = models
            .iter()
            .map(|m| summarize_model(m, &opts).unwrap())
            .collect();
        leaderboard(
            &models.iter().collect::<Vec<_>>(),
            &sums.iter().collect::<Vec<_>>(),
        )
        .unwrap()
    }

    #[test]
    fn holm_adjusts_step_down_and_keeps_the_order() {
        let a = holm(&[0.01, 0.04, 0.03, 0.5]);
        // Sorted 0.01 (x4), 0.03 (x3), 0.04 (x2), 0.5 (x1), each at least the one before.
        assert_eq!(a, vec![0.04, 0.09, 0.09, 0.5]);
        assert_eq!(holm(&[0.9, 0.9]), vec![1.0, 1.0]);
    }

    #[test]
    fn rank_intervals_count_the_models_resolved_above_and_below() {
        // 4 models: 0 beats 2 and 3, 1 beats 3.
        let r = rank_intervals(4, &[(0, 2, true), (0, 3, true), (1, 3, true)]);
        assert_eq!(r, vec![[1, 2], [1, 3], [2, 4], [3, 4]]);
        // A resolved pair the other way round.
        assert_eq!(
            rank_intervals(3, &[(0, 1, false)]),
            vec![[2, 3], [1, 2], [1, 3]]
        );
    }

    #[test]
    fn paired_p_value_is_the_t_test_and_the_sign_test_without_spread() {
        let m = |d: &[(usize, usize)]| ModelSamples::from_counts("m", d);
        let a = m(&[(0, 1), (1, 1), (0, 1), (1, 1), (0, 1)]);
        let b = m(&[(1, 1), (1, 1), (1, 1), (1, 1), (1, 1)]);
        let d = super::super::compare::compare_models(
            &a,
            &b,
            &super::super::compare::ComparisonOptions {
                reruns: 0,
                ..Default::default()
            },
        )
        .unwrap()
        .pass_at_1;
        // d = (1, 0, 1, 0, 1): mean 0.6, SD sqrt(0.3), SE sqrt(0.06); t(4).
        let t = 0.6 / 0.06f64.sqrt();
        let want = 2.0 * StudentsT::new(0.0, 1.0, 4.0).unwrap().sf(t);
        assert!((paired_p_value(&d, 5) - want).abs() < 1e-14);
        let same = DiffEstimate {
            difference: 1.0,
            se: 0.0,
            ..d.clone()
        };
        assert_eq!(paired_p_value(&same, 5), 2.0 * 0.5f64.powi(5));
        let zero = DiffEstimate {
            difference: 0.0,
            se: 0.0,
            ..d
        };
        assert_eq!(paired_p_value(&zero, 5), 1.0);
    }

    #[test]
    fn leaderboard_sorts_by_pass_at_1_and_pairs_only_shared_problems() {
        let strong = ModelSamples::from_counts("strong", &[(4, 4); 40]);
        let mid = ModelSamples::from_counts("mid", &[(2, 4); 40]);
        let mut weak = ModelSamples::from_counts("weak", &[(0, 4); 40]);
        weak.problems.truncate(30);
        let b = board(&[weak, strong, mid]);
        let names: Vec<&str> = b.entries.iter().map(|e| e.model.as_str()).collect();
        assert_eq!(names, ["strong", "mid", "weak"]);
        assert_eq!((b.problems_union, b.problems_shared), (40, 30));
        assert!(
            b.warnings[0].contains("problem sets differ"),
            "{:?}",
            b.warnings
        );
        let p = b.pair(1, 3).unwrap();
        assert_eq!((p.shared, p.left_out), (30, 10));
        assert_eq!(p.difference.as_ref().unwrap().difference, 1.0);
        assert_eq!(b.resolved(), 3);
        let ranks: Vec<[usize; 2]> = b.entries.iter().map(|e| e.rank_interval).collect();
        assert_eq!(ranks, vec![[1, 1], [2, 2], [3, 3]]);
        assert_eq!(b.k, Some(4));
        assert_eq!(b.entries[0].pass_at_k.as_ref().unwrap().k, 4);
    }

    #[test]
    fn models_sharing_fewer_than_two_problems_are_unresolved_with_a_warning() {
        let a = ModelSamples::from_counts("a", &[(1, 2), (2, 2), (0, 2)]);
        let mut b = ModelSamples::from_counts("b", &[(1, 2), (2, 2), (0, 2)]);
        for p in &mut b.problems {
            p.id = format!("other-{}", p.id);
        }
        let c = ModelSamples::from_counts("c", &[(1, 2), (1, 2), (1, 2)]);
        let board = board(&[a, b, c]);
        let p = board
            .pairs
            .iter()
            .find(|p| p.shared == 0)
            .expect("a and b share nothing");
        assert!(p.difference.is_none() && !p.resolved && p.p_value == 1.0);
        assert!(board.warnings.iter().any(|w| w.contains("share 0 problem")));
    }
}
