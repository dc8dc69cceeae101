//! Paired comparison of two models on their common problems.
//!
//! Pairing matters: the question-sampling variance, which dominates the SE of each model's score,
//! largely cancels in the per-problem difference d_i = theta_i^B - theta_i^A. The paired SE is
//! SD_i(d_i)/sqrt(N) (CLT over problems); its sampling part is sqrt(sum_i (Var_jk^A + Var_jk^B))/N
//! (within-problem jackknife of each model, independent samples), and the question part is
//! the remainder sqrt(max(0, SE^2 - sampling^2)). The 95% interval of the difference is the one
//! of [`super::interval`] on the range [-1, 1]. When the common problems have clusters (C >= 2),
//! the clustered paired variance (CR2 over the d_i with Bell-McCaffrey t, [`super::cluster`])
//! gives the reported interval, and the one from the paired SE is kept beside it.
//!
//! Depends on [`super::data`], [`super::summary`]'s per-problem curves, [`super::interval`], and
//! [`crate::sim::reruns`] for the simulated reruns (which draw every random number).
use serde::{Deserialize, Serialize};

use super::cluster::{clustered_se, cr2_variance_and_df, Clusters};
use super::data::{ModelSamples, ProblemSamples};
use super::interval::{IntervalBasis, IntervalMethod};
use super::summary::{check_k, maj_curve, pass_curve, question_se, reported_interval, PerProblem};
use super::{AnalyzeError, Result};
use crate::model::VoteRule;
use crate::sim::reruns::{paired_rerun_signs, PairedRates};

/// Options of [`compare_models`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComparisonOptions {
    /// The k values of the per-k differences ([`Comparison::pass_by_k`], and
    /// [`Comparison::maj_by_k`] at those up to `maj_k`); 1 is always included. `analyze` passes
    /// the k values of its curves.
    #[serde(default)]
    pub ks: Vec<usize>,
    /// The largest k of the maj@k differences (`None` skips them); needs answers in both inputs.
    pub maj_k: Option<usize>,
    /// Vote rule for maj@k.
    pub maj_rule: VoteRule,
    /// Simulated reruns for the reversal probability.
    pub reruns: usize,
    /// Seed of the reruns.
    pub seed: u64,
}

impl Default for ComparisonOptions {
    fn default() -> Self {
        ComparisonOptions {
            ks: Vec::new(),
            maj_k: None,
            maj_rule: VoteRule::Random,
            reruns: 20_000,
            seed: 1,
        }
    }
}

/// A paired difference B - A of one metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiffEstimate {
    /// k of the metric (1 for pass@1).
    pub k: usize,
    /// Model A's mean over common problems.
    pub a: f64,
    /// Model B's mean over common problems.
    pub b: f64,
    /// b - a.
    pub difference: f64,
    /// Paired SE, SD_i(d_i)/sqrt(N).
    pub se: f64,
    /// Question-sampling part, sqrt(max(0, se^2 - sampling_se^2)).
    pub question_se: f64,
    /// Within-problem sampling part (jackknife), `None` when k equals some problem's n.
    pub sampling_se: Option<f64>,
    /// 95% interval of the difference within [-1, 1]. k = 1 (pass@1, maj@1): Wilson with
    /// effective sample size and adaptive t on the differences mapped to [0, 1]; k >= 2 (pass@k
    /// and maj@k): a Tango-type score interval whose variance is re-estimated under each
    /// hypothesised difference, never below the observed variance unless every difference is
    /// 0 or +-1 (Tango's setting; [`super::interval::paired_score_from_moments`]). When every problem's difference is the same (e.g. all 0), the
    /// exact bound on how often a problem could differ.
    pub ci95: [f64; 2],
    /// What `ci95` rests on.
    pub ci_basis: IntervalBasis,
    /// The construction of `ci95`: `wilson` (k = 1) or `paired-score` (k >= 2).
    #[serde(default)]
    pub ci_method: IntervalMethod,
    /// Clustered paired SE (CR1 over the per-problem differences), when every common problem
    /// has a cluster (from model A, else B) and there are at least 2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clustered_se: Option<f64>,
    /// The number of clusters C when `ci95` rests on the clustered paired variance (CR2, with
    /// Bell-McCaffrey t).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci_clusters: Option<usize>,
    /// With `ci_clusters`: the CR2 SE and the Bell-McCaffrey degrees of freedom `ci95` rests
    /// on, so a test of the difference uses the same two numbers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clustered_se_df: Option<[f64; 2]>,
    /// With `ci_clusters`: the interval from the paired SE (problems independent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unclustered_ci95: Option<[f64; 2]>,
    /// This metric's own exact sign test over the problems whose per-problem estimates of it
    /// differ (for 0/1 estimates, as maj@k with k = n often is, the exact McNemar test).
    #[serde(default)]
    pub sign_test: SignTest,
}

/// Exact two-sided sign test over problems whose per-problem estimate of a metric differs
/// between the models.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SignTest {
    /// Problems where B's estimate is higher.
    pub b_better: usize,
    /// Problems where A's estimate is higher.
    pub a_better: usize,
    /// Problems with equal estimates (left out of the test).
    pub ties: usize,
    /// Two-sided p-value, min(1, 2 P(X <= min(a_better, b_better))), X ~ Bin(a_better + b_better, 1/2).
    pub p_value: f64,
}

/// Result of [`compare_models`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Model A.
    pub model_a: String,
    /// Model B.
    pub model_b: String,
    /// Problems present for both models (the comparison uses only these).
    pub common_problems: usize,
    /// Problems only A has.
    pub only_a: usize,
    /// Problems only B has.
    pub only_b: usize,
    /// pass@1 difference B - A.
    pub pass_at_1: DiffEstimate,
    /// maj@k difference B - A at the largest k of `maj_by_k`, when requested.
    pub maj_at_k: Option<DiffEstimate>,
    /// pass@k difference B - A at every k of the options' k list, in increasing k (the first,
    /// k = 1, is `pass_at_1`): the per-problem unbiased estimates paired across the common
    /// problems. k = 1 gets the Wilson interval, k >= 2 the Tango-type score interval
    /// ([`paired_method`]).
    #[serde(default)]
    pub pass_by_k: Vec<DiffEstimate>,
    /// maj@k difference B - A at every k of the options' k list up to `maj_k` (and at `maj_k`),
    /// in increasing k (the last is `maj_at_k`); empty without maj@k.
    #[serde(default)]
    pub maj_by_k: Vec<DiffEstimate>,
    /// Sign test on per-problem pass@1 (the same as `pass_at_1.sign_test`).
    pub sign_test: SignTest,
    /// Probability that a fresh rerun at the same n per problem orders the models the other way
    /// (strictly), taking the observed per-problem rates as the truth; `None` when the observed
    /// difference is exactly 0, when no rerun was simulated, or when `degenerate_reruns`.
    pub reversal_probability: Option<f64>,
    /// Probability that the rerun ties exactly; `None` when no rerun was simulated.
    pub rerun_tie_probability: Option<f64>,
    /// Every per-problem rate of both models is 0 or 1 (as with one sample per problem): reruns
    /// drawn at those rates repeat the data exactly, so the reversal probability cannot be
    /// estimated from them and none is given.
    #[serde(default)]
    pub degenerate_reruns: bool,
    /// Reruns simulated.
    pub reruns: usize,
    /// Seed of the reruns.
    pub seed: u64,
}

fn paired(
    k: usize,
    method: IntervalMethod,
    pairs: &[(&ProblemSamples, &ProblemSamples)],
    clusters: Option<&Clusters>,
    per_problem: impl Fn(&ProblemSamples) -> Result<(f64, Option<f64>)>,
) -> Result<DiffEstimate> {
    let values = pairs
        .iter()
        .map(|(pa, pb)| Ok((per_problem(pa)?, per_problem(pb)?)))
        .collect::<Result<Vec<_>>>()?;
    paired_values(k, method, &values, clusters)
}

/// The paired differences B - A of one metric at each of `ks` (increasing, non-empty or empty):
/// each problem's curve is computed once up to the largest k (`curve(problem, k_max)`) and read
/// at every k, and each k gets [`paired_values`] with the interval of [`paired_method`].
/// Cost: one curve per problem and model plus O(N) per k.
fn per_k_differences(
    pairs: &[(&ProblemSamples, &ProblemSamples)],
    clusters: Option<&Clusters>,
    ks: &[usize],
    curve: impl Fn(&ProblemSamples, usize) -> Result<PerProblem>,
) -> Result<Vec<DiffEstimate>> {
    let Some(&k_max) = ks.last() else {
        return Ok(Vec::new());
    };
    let curves = pairs
        .iter()
        .map(|(pa, pb)| Ok((curve(pa, k_max)?, curve(pb, k_max)?)))
        .collect::<Result<Vec<_>>>()?;
    ks.iter()
        .map(|&k| {
            let values: Vec<EstimatePair> = curves
                .iter()
                .map(|(ca, cb)| {
                    (
                        (ca.est[k - 1], ca.var[k - 1]),
                        (cb.est[k - 1], cb.var[k - 1]),
                    )
                })
                .collect();
            paired_values(k, paired_method(k), &values, clusters)
        })
        .collect()
}

/// One shared problem's (estimate, jackknife variance) for model A and for model B.
pub(crate) type EstimatePair = ((f64, Option<f64>), (f64, Option<f64>));

/// The paired difference B - A from each shared problem's (estimate, jackknife variance) for A
/// and for B, in problem order (`clusters` for the same problems): the one computation behind
/// [`compare_models`] and the leaderboard's pairs. Cost: O(N).
///
/// # Errors
/// Fewer than 2 problems.
pub(crate) fn paired_values(
    k: usize,
    method: IntervalMethod,
    values: &[EstimatePair],
    clusters: Option<&Clusters>,
) -> Result<DiffEstimate> {
    let n = values.len() as f64;
    let mut d = Vec::with_capacity(values.len());
    let (mut sa, mut sb) = (0.0, 0.0);
    let mut var_sum = Some(0.0);
    let mut sign = SignTest::default();
    for &((ea, va), (eb, vb)) in values {
        sa += ea;
        sb += eb;
        match eb.partial_cmp(&ea) {
            Some(std::cmp::Ordering::Greater) => sign.b_better += 1,
            Some(std::cmp::Ordering::Less) => sign.a_better += 1,
            _ => sign.ties += 1,
        }
        d.push(eb - ea);
        var_sum = match (var_sum, va, vb) {
            (Some(s), Some(x), Some(y)) => Some(s + x + y),
            _ => None,
        };
    }
    let se = question_se(&d).ok_or_else(|| AnalyzeError::TooFewProblems {
        what: "a paired standard error".to_string(),
        needed: 2,
        found: values.len(),
    })?;
    let sampling_se = var_sum.map(|v| v.sqrt() / n);
    let question = (se * se - sampling_se.unwrap_or(0.0).powi(2))
        .max(0.0)
        .sqrt();
    let difference = (sb - sa) / n;
    let (interval, ci_clusters, plain) = reported_interval(&d, (-1.0, 1.0), method, clusters);
    let interval = interval.ok_or_else(|| AnalyzeError::TooFewProblems {
        what: "a paired interval".to_string(),
        needed: 2,
        found: values.len(),
    })?;
    Ok(DiffEstimate {
        k,
        a: sa / n,
        b: sb / n,
        difference,
        se,
        question_se: question,
        sampling_se,
        ci95: [interval.low, interval.high],
        ci_basis: interval.basis,
        ci_method: method,
        clustered_se: clusters.and_then(|c| clustered_se(&d, c)),
        ci_clusters,
        clustered_se_df: ci_clusters
            .and(clusters)
            .and_then(|c| cr2_variance_and_df(&d, c))
            .map(|(var, df)| [var.sqrt(), df]),
        unclustered_ci95: plain.map(|i| [i.low, i.high]),
        sign_test: SignTest {
            p_value: sign_test_p_value(sign.a_better, sign.b_better),
            ..sign
        },
    })
}

/// The interval construction of a paired difference of a metric at `k`: pass@1 and maj@1 are
/// the same quantity (one answer votes for itself) and get the Wilson interval; pass@k and maj@k
/// with k >= 2, whose per-problem differences pile up at -1, 0 and +1 as k grows (whole flips,
/// Tango's setting), the Tango-type score interval (coverage in docs/intervals.md).
pub fn paired_method(k: usize) -> IntervalMethod {
    if k == 1 {
        IntervalMethod::Wilson
    } else {
        IntervalMethod::PairedScore
    }
}

/// Whether maj@k under `rule` is pass@1 problem by problem, for every tally: k = 1 (one answer
/// votes for itself, under every rule), and k = 2 with random ties (two right answers win, a
/// right and a wrong one tie and win half the time, two wrong ones lose, so the estimate over
/// the 2-subsets of n answers with c right is (C(c, 2) + c (n - c) / 2) / C(n, 2) = c / n).
pub fn maj_is_pass_at_1(k: usize, rule: VoteRule) -> bool {
    k == 1 || (k == 2 && rule == VoteRule::Random)
}

/// Exact two-sided sign test. Cost: O(min(a, b)).
pub fn sign_test_p_value(a_better: usize, b_better: usize) -> f64 {
    let m = a_better + b_better;
    if m == 0 {
        return 1.0;
    }
    let lo = a_better.min(b_better);
    let ln_half = -(m as f64) * std::f64::consts::LN_2;
    let tail: f64 = (0..=lo)
        .map(|x| (statrs::function::factorial::ln_binomial(m as u64, x as u64) + ln_half).exp())
        .sum();
    (2.0 * tail).min(1.0)
}

/// Compare models A and B on their common problems (matched by problem id).
///
/// Cost: one pass@k curve per problem and model up to the largest k, O(N) per compared k, plus
/// O(reruns * N) binomial draws for the reversal probability, plus the maj@k DP when requested.
///
/// # Errors
/// Fewer than 2 common problems; a k of `ks` or `maj_k` above the smallest n of either model
/// (the error names it); maj@k requested without answers.
pub fn compare_models(
    a: &ModelSamples,
    b: &ModelSamples,
    options: &ComparisonOptions,
) -> Result<Comparison> {
    let index: std::collections::HashMap<&str, &ProblemSamples> =
        b.problems.iter().map(|p| (p.id.as_str(), p)).collect();
    let pairs: Vec<(&ProblemSamples, &ProblemSamples)> = a
        .problems
        .iter()
        .filter_map(|p| index.get(p.id.as_str()).map(|q| (p, *q)))
        .collect();
    if pairs.len() < 2 {
        return Err(AnalyzeError::TooFewProblems {
            what: format!("comparing `{}` with `{}` (common problems)", a.name, b.name),
            needed: 2,
            found: pairs.len(),
        });
    }
    check_k(a, 1)?;
    check_k(b, 1)?;
    // A problem's cluster from model A, else from B (the same problem in both).
    let labels: Vec<Option<&str>> = pairs
        .iter()
        .map(|(pa, pb)| pa.cluster.as_deref().or(pb.cluster.as_deref()))
        .collect();
    let clusters = Clusters::new(&labels);
    let pass_at_1 = paired(1, paired_method(1), &pairs, clusters.as_ref(), |p| {
        let c = pass_curve(p, 1, false)?;
        Ok((c.est[0], c.var[0]))
    })?;
    let mut ks: Vec<usize> = options.ks.iter().copied().chain([1]).collect();
    ks.sort_unstable();
    ks.dedup();
    for m in [a, b] {
        for &k in &ks {
            check_k(m, k)?;
        }
    }
    let pass_by_k = per_k_differences(&pairs, clusters.as_ref(), &ks[1..], |p, k_max| {
        pass_curve(p, k_max, false)
    })?;
    let pass_by_k: Vec<DiffEstimate> = std::iter::once(pass_at_1.clone())
        .chain(pass_by_k)
        .collect();
    let maj_by_k = match options.maj_k {
        None => Vec::new(),
        Some(k) => {
            for m in [a, b] {
                check_k(m, k)?;
                if !m.has_answers {
                    return Err(AnalyzeError::BadOption {
                        option: "maj_k".to_string(),
                        value: k.to_string(),
                        expected: format!("no maj@k for `{}`: its input has no answers", m.name),
                    });
                }
            }
            let mut maj_ks: Vec<usize> = ks.iter().copied().filter(|&j| j < k).collect();
            maj_ks.push(k);
            // maj@k that is pass@1 problem by problem gets the pass@1 row, bit for bit, not a
            // second computation (and interval) of the same quantity.
            let (same, other): (Vec<usize>, Vec<usize>) = maj_ks
                .into_iter()
                .partition(|&j| maj_is_pass_at_1(j, options.maj_rule));
            let mut computed = per_k_differences(&pairs, clusters.as_ref(), &other, |p, k_max| {
                maj_curve(p, k_max, options.maj_rule)
            })?;
            computed.extend(same.into_iter().map(|j| DiffEstimate {
                k: j,
                ..pass_at_1.clone()
            }));
            computed.sort_by_key(|d| d.k);
            computed
        }
    };
    let maj_at_k = maj_by_k.last().cloned();
    let degenerate_reruns = pairs
        .iter()
        .flat_map(|(pa, pb)| [pa, pb])
        .all(|p| p.correct == 0 || p.correct == p.n);
    let reruns = if degenerate_reruns { 0 } else { options.reruns };
    let (reversal, tie) = reversal_probability(&pairs, pass_at_1.difference, reruns, options.seed)?;
    let sign_test = pass_at_1.sign_test.clone();
    Ok(Comparison {
        model_a: a.name.clone(),
        model_b: b.name.clone(),
        common_problems: pairs.len(),
        only_a: a.problems.len() - pairs.len(),
        only_b: b.problems.len() - pairs.len(),
        pass_at_1,
        maj_at_k,
        pass_by_k,
        maj_by_k,
        sign_test,
        reversal_probability: reversal,
        rerun_tie_probability: tie,
        degenerate_reruns,
        reruns,
        seed: options.seed,
    })
}

/// Share of simulated reruns (c_i ~ Bin(n_i, observed rate) for each model and problem) whose
/// pass@1 difference has the opposite sign to `observed`, and the share that tie (the reruns are
/// drawn by [`paired_rerun_signs`]).
/// Cost: O(reruns * N).
fn reversal_probability(
    pairs: &[(&ProblemSamples, &ProblemSamples)],
    observed: f64,
    reruns: usize,
    seed: u64,
) -> Result<(Option<f64>, Option<f64>)> {
    if reruns == 0 {
        return Ok((None, None));
    }
    let problems: Vec<PairedRates> = pairs
        .iter()
        .map(|(pa, pb)| PairedRates {
            n_a: pa.n as u64,
            rate_a: pa.correct as f64 / pa.n as f64,
            n_b: pb.n as u64,
            rate_b: pb.correct as f64 / pb.n as f64,
        })
        .collect();
    let signs = paired_rerun_signs(&problems, observed, reruns, seed).map_err(|bad| {
        let (pa, pb) = pairs[bad.problem];
        let p = if bad.model_b { pb } else { pa };
        AnalyzeError::BadOption {
            option: "problem rate".to_string(),
            value: format!("{}/{}", p.correct, p.n),
            expected: "a rate in [0, 1]".to_string(),
        }
    })?;
    let (reversed, tied) = (signs.reversed, signs.tied);
    let r = reruns as f64;
    let reversal = (observed.abs() >= 1e-12).then(|| reversed as f64 / r);
    Ok((reversal, Some(tied as f64 / r)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(name: &str, counts: &[(usize, usize)]) -> ModelSamples {
        ModelSamples::from_counts(name, counts)
    }

    #[test]
    fn sign_test_values() {
        // 2 * P(X <= 1), X ~ Bin(10, 1/2) = 2 * 11/1024.
        assert!((sign_test_p_value(1, 9) - 22.0 / 1024.0).abs() < 1e-12);
        assert_eq!(sign_test_p_value(5, 5), 1.0);
        assert_eq!(sign_test_p_value(0, 0), 1.0);
    }

    #[test]
    fn paired_comparison() {
        let a_counts: Vec<(usize, usize)> = (0..30).map(|i| (i % 9, 8)).collect();
        let b_counts: Vec<(usize, usize)> = (0..30).map(|i| ((i % 9 + 1).min(8), 8)).collect();
        let a = model("a", &a_counts);
        let mut b = model("b", &b_counts);
        b.problems
            .push(ProblemSamples::from_groups("extra", 1, &[7]));
        let opts = ComparisonOptions {
            maj_k: Some(3),
            reruns: 2000,
            ..ComparisonOptions::default()
        };
        let c = compare_models(&a, &b, &opts).unwrap();
        assert_eq!((c.common_problems, c.only_a, c.only_b), (30, 0, 1));
        assert!(c.pass_at_1.difference > 0.0);
        let s = c.pass_at_1.sampling_se.unwrap_or(0.0);
        assert!(
            (c.pass_at_1.question_se.powi(2) + s * s - c.pass_at_1.se.powi(2)).abs() < 1e-12
                || c.pass_at_1.question_se == 0.0
        );
        assert_eq!(c.sign_test.b_better, 27);
        assert_eq!(c.sign_test.ties, 3);
        let r = c.reversal_probability.unwrap_or(1.0);
        assert!(
            (0.0..0.05).contains(&r),
            "a +{} point gap rarely reverses: {r}",
            c.pass_at_1.difference
        );
        assert!(c.maj_at_k.is_some());
        assert_eq!(compare_models(&a, &b, &opts).unwrap(), c, "seeded");
        let too_big = ComparisonOptions {
            maj_k: Some(9),
            ..opts
        };
        let err = compare_models(&a, &b, &too_big).unwrap_err().to_string();
        assert!(err.contains("smallest n = 8"), "{err}");
    }

    /// The paired comparison built its interval from the paired SE even when the problems come
    /// in clusters; with clusters it uses the clustered paired variance (CR2, Bell-McCaffrey t).
    #[test]
    fn paired_comparison_ignored_the_clusters() {
        let a_counts: Vec<(usize, usize)> = (0..30).map(|i| (i % 9, 8)).collect();
        let b_counts: Vec<(usize, usize)> = (0..30).map(|i| ((i % 9 + i % 3).min(8), 8)).collect();
        let (mut a, b) = (model("a", &a_counts), model("b", &b_counts));
        for (i, p) in a.problems.iter_mut().enumerate() {
            p.cluster = Some(format!("c{}", i % 5));
        }
        let opts = ComparisonOptions {
            maj_k: Some(3),
            reruns: 0,
            ..ComparisonOptions::default()
        };
        let c = compare_models(&a, &b, &opts).unwrap();
        for d in [&c.pass_at_1, c.maj_at_k.as_ref().unwrap()] {
            assert_eq!(d.ci_clusters, Some(5));
            let cse = d.clustered_se.unwrap();
            assert!(cse > 0.0 && d.unclustered_ci95.is_some());
            assert_ne!(Some(d.ci95), d.unclustered_ci95);
        }
        let d: Vec<f64> = a
            .problems
            .iter()
            .zip(&b.problems)
            .map(|(pa, pb)| (pb.correct as f64 - pa.correct as f64) / 8.0)
            .collect();
        let labels: Vec<Option<&str>> = a.problems.iter().map(|p| p.cluster.as_deref()).collect();
        let clusters = Clusters::new(&labels).unwrap();
        let want = crate::analyze::cluster::clustered_interval(
            &d,
            &clusters,
            (-1.0, 1.0),
            IntervalMethod::Wilson,
        )
        .unwrap();
        assert_eq!(c.pass_at_1.ci95, [want.low, want.high]);
        assert_eq!(c.pass_at_1.clustered_se, clustered_se(&d, &clusters));
    }

    /// With one sample per problem every rate is 0 or 1, reruns drawn at those rates repeat the
    /// data, and the simulation said "reverses with probability 0"; now no probability is given
    /// and the comparison says why.
    #[test]
    fn one_sample_per_problem_gave_a_rerun_reversal_probability_of_0() {
        let a = model("a", &[(0, 1), (1, 1), (0, 1), (0, 1), (1, 1), (0, 1)]);
        let b = model("b", &[(1, 1), (1, 1), (0, 1), (0, 1), (1, 1), (0, 1)]);
        let opts = ComparisonOptions::default();
        let c = compare_models(&a, &b, &opts).unwrap();
        assert!(c.degenerate_reruns && c.pass_at_1.difference > 0.0);
        assert_eq!(
            (c.reversal_probability, c.rerun_tie_probability, c.reruns),
            (None, None, 0)
        );
        // Rates strictly inside (0, 1) somewhere: the reruns are simulated.
        let b = model("b", &[(1, 2), (1, 1), (0, 1), (0, 1), (1, 1), (0, 1)]);
        let c = compare_models(&a, &b, &opts).unwrap();
        assert!(!c.degenerate_reruns && c.reruns == opts.reruns);
        assert!(c.reversal_probability.is_some() && c.rerun_tie_probability.is_some());
    }

    /// maj@1 is pass@1 (one answer votes for itself), yet the maj@1 difference got the
    /// Tango-type interval and pass@1 the Wilson one: two intervals for one quantity.
    #[test]
    fn maj_at_1_got_another_interval_than_pass_at_1() {
        for n in [1, 4] {
            let a_counts: Vec<(usize, usize)> = (0..12).map(|i| ((i * 5) % (n + 1), n)).collect();
            let b_counts: Vec<(usize, usize)> = (0..12).map(|i| ((i * 7) % (n + 1), n)).collect();
            let (a, b) = (model("a", &a_counts), model("b", &b_counts));
            let opts = ComparisonOptions {
                maj_k: Some(1),
                reruns: 0,
                ..ComparisonOptions::default()
            };
            let c = compare_models(&a, &b, &opts).unwrap();
            let m = c.maj_at_k.as_ref().unwrap();
            assert_eq!(m.difference, c.pass_at_1.difference, "n = {n}");
            assert_eq!(
                (m.ci95, m.ci_method, m.ci_basis),
                (
                    c.pass_at_1.ci95,
                    c.pass_at_1.ci_method,
                    c.pass_at_1.ci_basis
                ),
                "n = {n}"
            );
        }
        assert_eq!(paired_method(2), IntervalMethod::PairedScore);
    }

    /// comparison.csv's maj@k row repeated the pass@1 sign test; each metric now has its own,
    /// over the problems whose per-problem estimates of that metric differ.
    #[test]
    fn maj_at_k_row_repeated_the_pass_at_1_sign_test() {
        // B is one answer better on every problem; at 3 of 4 right both votes are already
        // right, so maj@4 differs only where A has 1 or 2 of 4.
        let a_counts = [
            (3, 4),
            (3, 4),
            (3, 4),
            (3, 4),
            (2, 4),
            (1, 4),
            (0, 4),
            (3, 4),
        ];
        let b_counts = [
            (4, 4),
            (4, 4),
            (4, 4),
            (4, 4),
            (3, 4),
            (2, 4),
            (1, 4),
            (4, 4),
        ];
        let (a, b) = (model("a", &a_counts), model("b", &b_counts));
        let opts = ComparisonOptions {
            maj_k: Some(4),
            reruns: 0,
            ..ComparisonOptions::default()
        };
        let c = compare_models(&a, &b, &opts).unwrap();
        assert_eq!((c.sign_test.b_better, c.sign_test.ties), (8, 0));
        assert_eq!(c.sign_test, c.pass_at_1.sign_test);
        let m = &c.maj_at_k.as_ref().unwrap().sign_test;
        // maj@4 (random ties): 3/4 and 4/4 both 1; 2/4 -> 3/4 and 1/4 -> 2/4 raise it; 0 -> 1/4
        // stays 0 (one right answer loses to three wrong ones in one group).
        assert_eq!((m.b_better, m.a_better, m.ties), (2, 0, 6), "{m:?}");
        assert!((m.p_value - sign_test_p_value(0, 2)).abs() < 1e-15);
        assert!(m.p_value > c.sign_test.p_value);
    }

    /// pass@k and maj@k (random ties) of one problem by enumerating every k-subset of its n
    /// answers: `labels[j]` is 0 for a right answer, g >= 1 for wrong answer g.
    fn brute_force(labels: &[usize], k: usize) -> (f64, f64) {
        let n = labels.len();
        let (mut subsets, mut pass, mut maj) = (0.0, 0.0, 0.0);
        for mask in 0u32..(1 << n) {
            if mask.count_ones() as usize != k {
                continue;
            }
            subsets += 1.0;
            let mut votes = std::collections::BTreeMap::new();
            for (j, &l) in labels.iter().enumerate() {
                if mask & (1 << j) != 0 {
                    *votes.entry(l).or_insert(0usize) += 1;
                }
            }
            let right = votes.get(&0).copied().unwrap_or(0);
            pass += f64::from(u8::from(right > 0));
            let top = votes.values().copied().max().unwrap_or(0);
            if right == top && right > 0 {
                maj += 1.0 / votes.values().filter(|&&v| v == top).count() as f64;
            }
        }
        (pass / subsets, maj / subsets)
    }

    /// The per-k rows against enumeration of every k-subset on tiny data: A and B means and the
    /// difference of pass@k and maj@k at every k, each row's own sign test, and the interval of
    /// [`paired_method`] on the brute-force per-problem differences.
    #[test]
    fn per_k_differences_match_enumeration_of_every_subset() {
        // (right, wrong groups) per problem, n = 5.
        let a_spec: [(usize, &[usize]); 6] = [
            (0, &[5]),
            (1, &[2, 2]),
            (2, &[3]),
            (1, &[1, 1, 1, 1]),
            (4, &[1]),
            (2, &[1, 1, 1]),
        ];
        let b_spec: [(usize, &[usize]); 6] = [
            (1, &[4]),
            (1, &[3, 1]),
            (3, &[2]),
            (0, &[2, 2, 1]),
            (5, &[]),
            (2, &[2, 1]),
        ];
        let build = |name: &str, spec: &[(usize, &[usize])]| ModelSamples {
            name: name.to_string(),
            problems: spec
                .iter()
                .enumerate()
                .map(|(i, (c, w))| ProblemSamples::from_groups(&format!("q{i}"), *c, w))
                .collect(),
            has_answers: true,
            has_tokens: false,
        };
        let labels = |spec: &[(usize, &[usize])]| -> Vec<Vec<usize>> {
            spec.iter()
                .map(|(c, w)| {
                    let mut l = vec![0; *c];
                    for (g, &size) in w.iter().enumerate() {
                        l.extend(std::iter::repeat_n(g + 1, size));
                    }
                    l
                })
                .collect()
        };
        let (a, b) = (build("a", &a_spec), build("b", &b_spec));
        let (la, lb) = (labels(&a_spec), labels(&b_spec));
        let opts = ComparisonOptions {
            ks: vec![5, 2, 3, 2],
            maj_k: Some(4),
            reruns: 0,
            ..ComparisonOptions::default()
        };
        let c = compare_models(&a, &b, &opts).unwrap();
        let pass_ks: Vec<usize> = c.pass_by_k.iter().map(|d| d.k).collect();
        let maj_ks: Vec<usize> = c.maj_by_k.iter().map(|d| d.k).collect();
        assert_eq!((pass_ks, maj_ks), (vec![1, 2, 3, 5], vec![1, 2, 3, 4]));
        assert_eq!(c.pass_by_k[0], c.pass_at_1);
        assert_eq!(c.maj_by_k.last(), c.maj_at_k.as_ref());
        for d in &c.maj_by_k[..2] {
            assert_eq!(
                *d,
                DiffEstimate {
                    k: d.k,
                    ..c.pass_at_1.clone()
                }
            );
        }
        for (series, rows) in [(0, &c.pass_by_k), (1, &c.maj_by_k)] {
            for d in rows.iter() {
                let per = |l: &[Vec<usize>]| -> Vec<f64> {
                    l.iter()
                        .map(|x| {
                            let (p, m) = brute_force(x, d.k);
                            if series == 0 {
                                p
                            } else {
                                m
                            }
                        })
                        .collect()
                };
                let (va, vb) = (per(&la), per(&lb));
                let diffs: Vec<f64> = vb.iter().zip(&va).map(|(y, x)| y - x).collect();
                let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
                let what = format!("{} k = {}", ["pass", "maj"][series], d.k);
                assert!(
                    (d.a - mean(&va)).abs() < 1e-12,
                    "{what}: {} vs {}",
                    d.a,
                    mean(&va)
                );
                assert!((d.b - mean(&vb)).abs() < 1e-12, "{what}");
                assert!((d.difference - mean(&diffs)).abs() < 1e-12, "{what}");
                let (bb, ab) = (
                    diffs.iter().filter(|&&x| x > 1e-12).count(),
                    diffs.iter().filter(|&&x| x < -1e-12).count(),
                );
                assert_eq!(
                    (d.sign_test.b_better, d.sign_test.a_better),
                    (bb, ab),
                    "{what}"
                );
                assert_eq!(d.sign_test.p_value, sign_test_p_value(ab, bb), "{what}");
                // maj@2 with random ties is pass@1: the pass@1 row's (Wilson) interval.
                let method = if series == 1 && maj_is_pass_at_1(d.k, VoteRule::Random) {
                    paired_method(1)
                } else {
                    paired_method(d.k)
                };
                let want =
                    crate::analyze::interval::mean_interval(&diffs, (-1.0, 1.0), method).unwrap();
                assert!(
                    (d.ci95[0] - want.low).abs() < 1e-9 && (d.ci95[1] - want.high).abs() < 1e-9,
                    "{what}: {:?} vs {want:?}",
                    d.ci95
                );
                assert_eq!(d.ci_method, method, "{what}");
            }
        }
        // A k above the smallest n is refused, naming it.
        let err = compare_models(
            &a,
            &b,
            &ComparisonOptions {
                ks: vec![6],
                ..opts
            },
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("smallest n = 5"), "{err}");
    }

    /// With random ties maj@2 is pass@1 problem by problem (a 1-1 split is a coin flip), yet the
    /// per-k comparison gave the maj@2 row the Tango-type interval and pass@1 the Wilson one: two
    /// intervals for one quantity, side by side in report.md.
    #[test]
    fn maj_at_2_with_random_ties_got_another_interval_than_pass_at_1() {
        let a_counts: Vec<(usize, usize)> = (0..20).map(|i| ((i * 5) % 7, 6)).collect();
        let b_counts: Vec<(usize, usize)> = (0..20).map(|i| ((i * 3 + 1) % 7, 6)).collect();
        let (a, b) = (model("a", &a_counts), model("b", &b_counts));
        let mut opts = ComparisonOptions {
            ks: vec![2, 4],
            maj_k: Some(4),
            reruns: 0,
            ..ComparisonOptions::default()
        };
        let c = compare_models(&a, &b, &opts).unwrap();
        let m2 = c.maj_by_k.iter().find(|d| d.k == 2).unwrap();
        assert_eq!(
            (m2.difference, m2.ci95, m2.ci_method),
            (
                c.pass_at_1.difference,
                c.pass_at_1.ci95,
                IntervalMethod::Wilson
            )
        );
        // Strict ties: a 1-1 split loses, maj@2 is pass^2, its own row and interval.
        opts.maj_rule = VoteRule::Strict;
        let c = compare_models(&a, &b, &opts).unwrap();
        let m2 = c.maj_by_k.iter().find(|d| d.k == 2).unwrap();
        assert_eq!(m2.ci_method, IntervalMethod::PairedScore);
        assert!(m2.difference != c.pass_at_1.difference);
    }
}
