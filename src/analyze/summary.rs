//! Per-model summary: pass@k, pass^k and maj@k curves with their standard errors.
//!
//! Three kinds of uncertainty are reported because they answer different questions:
//!
//! - **question SE**, SD_i(theta_i) / sqrt(N): the problems are a sample from a population of
//!   problems (CLT over problems; includes the sampling noise of each theta_i). This is the
//!   right error bar for "how good is the model on problems like these".
//! - **sampling SE**, sqrt(sum_i Var_jk(theta_i)) / N: only the noise from drawing n answers per
//!   problem (fixed benchmark). Var_jk is the delete-one jackknife over the problem's samples,
//!   which for pass@1 equals p(1-p)/(n-1) and for pass@k, pass^k and maj@k needs only the
//!   estimator at n - 1 (one value per answer group, since deleting any member of a group gives
//!   the same subset counts). Undefined at k = n.
//! - **clustered SE** (when every problem has a cluster): sqrt(G/(G-1) sum_g (sum_{i in g}
//!   (theta_i - mean))^2) / N, for problems that share a passage or template.
//!
//! plus a 95% interval for the benchmark score (Wilson with effective sample size and a t
//! quantile, [`super::interval`]), which keeps its coverage down to N = 10 and never leaves
//! [0, 1], and, for comparison, a seeded percentile **bootstrap** 95% CI over problems.
//!
//! Depends on [`super::data`], [`super::estimators`], [`super::interval`], and
//! [`crate::sim::bootstrap`] for the bootstrap's resampled means (it draws every random number;
//! the percentiles are taken here).
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::data::{ModelSamples, ProblemSamples};
use super::estimators::{
    maj_at_k_exact, maj_at_k_first, pass_at_k_curve, pass_at_k_plugin, pass_hat_k_curve,
};
use super::interval::{mean_interval, IntervalBasis, IntervalMethod};
use super::{AnalyzeError, MajRule, Result};
use crate::model::VoteRule;
use crate::sim::bootstrap::{replicate_means, BootstrapTable};

/// Largest k for exact maj@k unless the caller asks for more (the DP costs O(n k^2 log k) per
/// problem).
pub const DEFAULT_MAJ_K_CAP: usize = 256;

/// Options of [`summarize_model`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SummaryOptions {
    /// The k values to report; `None` = every k up to the smallest n when that is at most 128,
    /// else powers of two and the smallest n.
    pub ks: Option<Vec<usize>>,
    /// Largest k for maj@k (default [`DEFAULT_MAJ_K_CAP`]); pass@k and pass^k use all `ks`.
    pub maj_k_cap: usize,
    /// Vote rule for maj@k ([`MajRule::First`] reports the file-order vote only).
    pub maj_rule: MajRule,
    /// Token cap for the truncation rate.
    pub token_cap: Option<f64>,
    /// Bootstrap resamples over problems (0 disables the CI).
    pub bootstrap: usize,
    /// Seed of the bootstrap.
    pub seed: u64,
}

/// Why a partial-credit model has no pass@k, pass^k or maj@k (stdout, report.md).
pub const BINARY_ONLY: &str = "pass@k, pass^k and maj@k need binary scores (right or wrong); \
these scores give partial credit, so only the mean score is reported";

impl Default for SummaryOptions {
    fn default() -> Self {
        SummaryOptions {
            ks: None,
            maj_k_cap: DEFAULT_MAJ_K_CAP,
            maj_rule: MajRule::Random,
            token_cap: None,
            bootstrap: 2000,
            seed: 1,
        }
    }
}

/// One point of a curve: the benchmark estimate at k with its uncertainty.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    /// Number of samples k.
    pub k: usize,
    /// Mean over problems of the per-problem unbiased estimate.
    pub estimate: f64,
    /// Question-sampling SE (CLT over problems); `None` with fewer than 2 problems.
    pub question_se: Option<f64>,
    /// Within-problem sampling SE (jackknife); `None` when k equals some problem's n.
    pub sampling_se: Option<f64>,
    /// Cluster-robust SE; `None` without clusters on every problem or with fewer than 2.
    pub clustered_se: Option<f64>,
    /// 95% interval, `[low, high]`: Wilson score interval with effective sample size and a
    /// t(N - 1) quantile, within [0, 1]; the exact bound when every problem scores the same (see
    /// [`super::interval`]). `None` with fewer than 2 problems.
    pub ci95: Option<[f64; 2]>,
    /// What `ci95` rests on (the spread of the scores, or all problems solved / unsolved).
    pub ci_basis: Option<IntervalBasis>,
    /// Bootstrap 95% percentile CI over problems, `[low, high]` (shown for comparison; it
    /// under-covers at small N like estimate -/+ 1.96 SE).
    pub bootstrap_ci: Option<[f64; 2]>,
    /// Plug-in 1 - (1 - c/n)^k averaged over problems (pass@k only), to show its bias.
    pub plug_in: Option<f64>,
}

/// Token statistics of one model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TokenSummary {
    /// Mean output tokens per sample.
    pub mean_tokens_per_sample: f64,
    /// Total output tokens divided by the number of correct samples (`None` if none correct).
    pub tokens_per_correct: Option<f64>,
    /// Mean tokens of correct samples.
    pub mean_tokens_correct: Option<f64>,
    /// Mean tokens of wrong samples.
    pub mean_tokens_wrong: Option<f64>,
    /// The cap used for `truncation_rate`.
    pub cap_tokens: Option<f64>,
    /// Share of samples with output tokens >= the cap (they probably hit it).
    pub truncation_rate: Option<f64>,
}

/// What answer extraction and normalisation did to one model's answers.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AnswerCounts {
    /// Samples with an answer field but no extractable answer (absent, null, empty, blank).
    pub unparsed: usize,
    /// `unparsed` over all samples of the model.
    pub unparsed_share: f64,
    /// Samples whose written answer the normaliser merged into the same answer written
    /// differently earlier in the problem (0 with `--normalize off`).
    pub merged: usize,
    /// `merged` over all samples of the model.
    pub merged_share: f64,
}

/// The answer counts of a model whose input carried answers (`None` otherwise). Time: O(N).
pub fn answer_counts(model: &ModelSamples) -> Option<AnswerCounts> {
    if !model.has_answers {
        return None;
    }
    let samples: usize = model.problems.iter().map(|p| p.n).sum();
    let unparsed: usize = model.problems.iter().map(|p| p.unparsed).sum();
    let merged: usize = model.problems.iter().map(|p| p.merged).sum();
    let share = |x: usize| x as f64 / samples.max(1) as f64;
    Some(AnswerCounts {
        unparsed,
        unparsed_share: share(unparsed),
        merged,
        merged_share: share(merged),
    })
}

/// Summary of one model's samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelSummary {
    /// Model name.
    pub model: String,
    /// Number of problems N.
    pub problems: usize,
    /// Total samples.
    pub samples: usize,
    /// Smallest n over problems.
    pub n_min: usize,
    /// Largest n over problems.
    pub n_max: usize,
    /// pass@1 = avg@n: mean over problems of c_i / n_i.
    pub pass_at_1: f64,
    /// Unbiased pass@k with the plug-in alongside.
    pub pass_at_k: Vec<CurvePoint>,
    /// Unbiased pass^k (all k right).
    pub pass_hat_k: Vec<CurvePoint>,
    /// Rule used for `maj_at_k`.
    pub maj_rule: MajRule,
    /// Exact maj@k over subsets (`None` without answers in the input).
    pub maj_at_k: Option<Vec<CurvePoint>>,
    /// maj@k of the first k answers in file order, for comparison (`None` without answers).
    pub maj_first: Option<Vec<CurvePoint>>,
    /// Token statistics (`None` unless every sample has a token count).
    pub tokens: Option<TokenSummary>,
    /// Bootstrap resamples used.
    pub bootstrap: usize,
    /// Seed of the bootstrap.
    pub seed: u64,
    /// Partial-credit (non-binary) scores: the mean score over problems (of each problem's mean
    /// score) with its SEs and intervals, at k = 1; `pass_at_1` holds the same mean, and the
    /// curves (pass@k, pass^k, maj@k), which need binary scores, are empty. `None` for binary
    /// scores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_score: Option<CurvePoint>,
    /// Unparsed and merged answers (`None` when the input carried no answers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answers: Option<AnswerCounts>,
}

/// The problem with the smallest n (first one on ties).
pub(crate) fn smallest_n(model: &ModelSamples) -> Option<&ProblemSamples> {
    model.problems.iter().min_by_key(|p| p.n)
}

/// Check 1 <= k <= smallest n; the error names the smallest n and its problem.
pub(crate) fn check_k(model: &ModelSamples, k: usize) -> Result<()> {
    if k == 0 {
        return Err(AnalyzeError::KZero);
    }
    let Some(p) = smallest_n(model) else {
        return Err(AnalyzeError::TooFewProblems {
            what: format!("model `{}`", model.name),
            needed: 1,
            found: 0,
        });
    };
    if p.n == 0 {
        return Err(AnalyzeError::ZeroSamples {
            source_name: model.name.clone(),
            line: 0,
            problem: p.id.clone(),
        });
    }
    if k > p.n {
        return Err(AnalyzeError::KTooLarge {
            k,
            smallest_n: p.n,
            problem: p.id.clone(),
            model: model.name.clone(),
        });
    }
    Ok(())
}

/// Default k grid: all k when n <= 128, else powers of two plus n.
pub(crate) fn default_ks(n_min: usize) -> Vec<usize> {
    if n_min <= 128 {
        return (1..=n_min).collect();
    }
    let mut ks: Vec<usize> = std::iter::successors(Some(1usize), |k| k.checked_mul(2))
        .take_while(|&k| k < n_min)
        .collect();
    ks.push(n_min);
    ks
}

/// Per-problem estimate and jackknife variance of a curve up to `k_max`.
/// Index [k - 1]; the variance is `None` when k >= n.
#[derive(Clone)]
pub(crate) struct PerProblem {
    pub est: Vec<f64>,
    pub var: Vec<Option<f64>>,
}

/// Delete-one jackknife variance from leave-one-out curves with multiplicities:
/// (n - 1)/n * sum_j m_j (theta_j - mean)^2.
fn jackknife(n: usize, loo: &[(usize, Vec<f64>)], k_max: usize) -> Vec<Option<f64>> {
    (0..k_max)
        .map(|k| {
            if k + 1 >= n {
                return None;
            }
            let mean = loo.iter().map(|(m, v)| *m as f64 * v[k]).sum::<f64>() / n as f64;
            let ss: f64 = loo
                .iter()
                .map(|(m, v)| *m as f64 * (v[k] - mean).powi(2))
                .sum();
            Some((n - 1) as f64 / n as f64 * ss)
        })
        .collect()
}

/// pass@k (or pass^k with `hat`) of one problem with jackknife variances.
pub(crate) fn pass_curve(p: &ProblemSamples, k_max: usize, hat: bool) -> Result<PerProblem> {
    let curve = |n: usize, c: usize, k: usize| {
        if hat {
            pass_hat_k_curve(n, c, k)
        } else {
            pass_at_k_curve(n, c, k)
        }
    };
    let est = curve(p.n, p.correct, k_max)?;
    let var = if p.n >= 2 {
        let kk = k_max.min(p.n - 1);
        let mut loo = Vec::new();
        if p.correct > 0 {
            loo.push((p.correct, pad(curve(p.n - 1, p.correct - 1, kk)?, k_max)));
        }
        if p.correct < p.n {
            loo.push((p.n - p.correct, pad(curve(p.n - 1, p.correct, kk)?, k_max)));
        }
        jackknife(p.n, &loo, k_max)
    } else {
        vec![None; k_max]
    };
    Ok(PerProblem { est, var })
}

fn pad(mut v: Vec<f64>, len: usize) -> Vec<f64> {
    v.resize(len, f64::NAN);
    v
}

/// Exact maj@k of one problem with jackknife variances (one recomputation per distinct group
/// size, since deleting any member of equal-sized groups gives the same counts).
pub(crate) fn maj_curve(p: &ProblemSamples, k_max: usize, rule: VoteRule) -> Result<PerProblem> {
    let named = |e: AnalyzeError| match e {
        AnalyzeError::MajOverflow { n, k, k_limit, .. } => AnalyzeError::MajOverflow {
            problem: p.id.clone(),
            n,
            k,
            k_limit,
        },
        other => other,
    };
    let est = maj_at_k_exact(p.correct, &p.wrong_groups, k_max, rule).map_err(named)?;
    if p.n < 2 {
        return Ok(PerProblem {
            est,
            var: vec![None; k_max],
        });
    }
    let kk = k_max.min(p.n - 1);
    let mut loo = Vec::new();
    if p.correct > 0 {
        let v = maj_at_k_exact(p.correct - 1, &p.wrong_groups, kk, rule).map_err(named)?;
        loo.push((p.correct, pad(v, k_max)));
    }
    let mut sizes: Vec<usize> = p.wrong_groups.clone();
    sizes.sort_unstable();
    sizes.dedup();
    for size in sizes.into_iter().filter(|&g| g > 0) {
        let members: usize = p.wrong_groups.iter().filter(|&&g| g == size).count() * size;
        let mut groups = p.wrong_groups.clone();
        if let Some(pos) = groups.iter().position(|&g| g == size) {
            groups[pos] -= 1;
        }
        groups.retain(|&g| g > 0);
        let v = maj_at_k_exact(p.correct, &groups, kk, rule).map_err(named)?;
        loo.push((members, pad(v, k_max)));
    }
    Ok(PerProblem {
        est,
        var: jackknife(p.n, &loo, k_max),
    })
}

fn mean(xs: impl Iterator<Item = f64>) -> f64 {
    let (mut s, mut n) = (0.0, 0usize);
    for x in xs {
        s += x;
        n += 1;
    }
    s / n.max(1) as f64
}

/// Sample SD over problems divided by sqrt(N). Cost: O(N).
pub(crate) fn question_se(values: &[f64]) -> Option<f64> {
    let n = values.len();
    if n < 2 {
        return None;
    }
    let m = mean(values.iter().copied());
    let var = values.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (n - 1) as f64;
    Some((var / n as f64).sqrt())
}

/// Cluster-robust SE of a mean over problems. Cost: O(N log N).
pub(crate) fn clustered_se(values: &[f64], clusters: &[Option<&str>]) -> Option<f64> {
    if clusters.iter().any(Option::is_none) {
        return None;
    }
    let m = mean(values.iter().copied());
    let mut sums: std::collections::BTreeMap<&str, f64> = std::collections::BTreeMap::new();
    for (v, c) in values.iter().zip(clusters) {
        *sums.entry(c.unwrap_or_default()).or_default() += v - m;
    }
    let g = sums.len();
    if g < 2 {
        return None;
    }
    let ss: f64 = sums.values().map(|s| s * s).sum();
    Some((g as f64 / (g - 1) as f64 * ss).sqrt() / values.len() as f64)
}

/// Percentile bootstrap 95% CIs for the mean of each column of each table (the replicates of
/// [`replicate_means`]); every entry `None` when there is nothing to resample.
pub(crate) fn bootstrap_cis(
    tables: &[BootstrapTable<'_>],
    b: usize,
    seed: u64,
) -> Vec<Vec<Option<[f64; 2]>>> {
    let Some(means) = replicate_means(tables, b, seed) else {
        return tables.iter().map(|t| vec![None; t.width]).collect();
    };
    means
        .into_iter()
        .map(|columns| {
            columns
                .into_iter()
                .map(|mut r| {
                    r.sort_by(f64::total_cmp);
                    Some([quantile(&r, 0.025), quantile(&r, 0.975)])
                })
                .collect()
        })
        .collect()
}

/// Linear-interpolated quantile of sorted data.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    sorted[lo] + (pos - lo as f64) * (sorted[hi] - sorted[lo])
}

/// The rows of a curve's bootstrap table: per problem, its estimates at `ks`.
fn curve_rows(per: &[&PerProblem], ks: &[usize]) -> Vec<Vec<f64>> {
    per.iter()
        .map(|p| ks.iter().map(|&k| p.est[k - 1]).collect())
        .collect()
}

struct CurveInput<'a> {
    ks: &'a [usize],
    per: &'a [&'a PerProblem],
    rows: &'a [Vec<f64>],
    cis: &'a [Option<[f64; 2]>],
    clusters: &'a [Option<&'a str>],
}

/// The points of one curve. The sampling SE is `None` wherever a problem has no jackknife
/// variance (k = n, or the file-order vote, which has none).
fn build_curve(input: &CurveInput<'_>) -> Vec<CurvePoint> {
    let n = input.per.len();
    input
        .ks
        .iter()
        .enumerate()
        .map(|(j, &k)| {
            let col: Vec<f64> = input.rows.iter().map(|r| r[j]).collect();
            let sampling_se = input
                .per
                .iter()
                .map(|p| p.var[k - 1])
                .sum::<Option<f64>>()
                .map(|s| s.sqrt() / n as f64);
            let interval = mean_interval(&col, (0.0, 1.0), IntervalMethod::Wilson);
            CurvePoint {
                k,
                estimate: mean(col.iter().copied()),
                ci95: interval.map(|i| [i.low, i.high]),
                ci_basis: interval.map(|i| i.basis),
                question_se: question_se(&col),
                sampling_se,
                clustered_se: clustered_se(&col, input.clusters),
                bootstrap_ci: input.cis.get(j).copied().flatten(),
                plug_in: None,
            }
        })
        .collect()
}

/// Computes `f` once per distinct key (in order of first appearance, so the first error is the
/// same as computing it for every problem) and returns each problem's value by reference.
fn shared_per_problem<'a, K: std::hash::Hash + Eq>(
    problems: &'a [ProblemSamples],
    key: impl Fn(&ProblemSamples) -> K,
    distinct: &'a mut Vec<PerProblem>,
    f: impl Fn(&ProblemSamples) -> Result<PerProblem> + Sync,
) -> Result<Vec<&'a PerProblem>> {
    let mut index: std::collections::HashMap<K, usize> = std::collections::HashMap::new();
    let mut firsts: Vec<&ProblemSamples> = Vec::new();
    let which: Vec<usize> = problems
        .iter()
        .map(|p| {
            *index.entry(key(p)).or_insert_with(|| {
                firsts.push(p);
                firsts.len() - 1
            })
        })
        .collect();
    // In parallel, then in order, so the first error is the same for any thread count.
    let computed: Vec<Result<PerProblem>> = firsts.par_iter().map(|p| f(p)).collect();
    *distinct = computed.into_iter().collect::<Result<_>>()?;
    let distinct: &'a Vec<PerProblem> = distinct;
    Ok(which.iter().map(|&i| &distinct[i]).collect())
}

/// Summarise one model: pass@k, pass^k, maj@k (exact over subsets, plus the file-order vote),
/// standard errors, bootstrap CIs and token statistics.
///
/// Cost: O(N K) for pass@k and pass^k, O(N n K^2 log K) worst case for maj@k (typically far
/// less), O(B N K) for the bootstrap.
///
/// # Errors
/// A requested k above the smallest n ([`AnalyzeError::KTooLarge`] names it and its problem);
/// k = 0; a model without problems; maj@k overflow.
pub fn summarize_model(model: &ModelSamples, options: &SummaryOptions) -> Result<ModelSummary> {
    check_k(model, 1)?;
    if model.partial_credit() {
        return Ok(summarize_partial(model, options));
    }
    let n_min = model.problems.iter().map(|p| p.n).min().unwrap_or(0);
    let n_max = model.problems.iter().map(|p| p.n).max().unwrap_or(0);
    let mut ks = options.ks.clone().unwrap_or_else(|| default_ks(n_min));
    ks.sort_unstable();
    ks.dedup();
    for &k in &ks {
        check_k(model, k)?;
    }
    let k_max = ks.last().copied().unwrap_or(1);
    let clusters: Vec<Option<&str>> = model
        .problems
        .iter()
        .map(|p| p.cluster.as_deref())
        .collect();

    // pass@k and pass^k depend on (n, c) only, maj@k on c and the multiset of wrong-group sizes:
    // each distinct curve is computed once.
    let (mut pass_store, mut hat_store, mut exact_store) = (Vec::new(), Vec::new(), Vec::new());
    let pass = shared_per_problem(
        &model.problems,
        |p| (p.n, p.correct),
        &mut pass_store,
        |p| pass_curve(p, k_max, false),
    )?;
    let hat = shared_per_problem(
        &model.problems,
        |p| (p.n, p.correct),
        &mut hat_store,
        |p| pass_curve(p, k_max, true),
    )?;
    let maj_ks: Vec<usize> = ks
        .iter()
        .copied()
        .filter(|&k| k <= options.maj_k_cap)
        .collect();
    let maj_max = maj_ks.last().copied().unwrap_or(0);
    let with_maj = model.has_answers && maj_max > 0;
    let first_store: Vec<PerProblem> = if with_maj {
        model
            .problems
            .iter()
            .map(|p| PerProblem {
                est: maj_at_k_first(&p.sequence, 0),
                var: vec![None; p.n],
            })
            .collect()
    } else {
        Vec::new()
    };
    let first: Vec<&PerProblem> = first_store.iter().collect();
    let exact: Option<Vec<&PerProblem>> = match options.maj_rule {
        MajRule::First => None,
        _ if !with_maj => None,
        rule => {
            let vote = match rule {
                MajRule::Strict => VoteRule::Strict,
                MajRule::Absolute => VoteRule::Absolute,
                _ => VoteRule::Random,
            };
            Some(shared_per_problem(
                &model.problems,
                |p| {
                    let mut groups = p.wrong_groups.clone();
                    groups.sort_unstable();
                    (p.correct, groups)
                },
                &mut exact_store,
                |p| maj_curve(p, maj_max, vote),
            )?)
        }
    };

    // One bootstrap for every curve (the same resampled problems for all of them).
    let pass_rows = curve_rows(&pass, &ks);
    let hat_rows = curve_rows(&hat, &ks);
    let first_rows = curve_rows(&first, &maj_ks);
    let exact_rows = exact
        .as_ref()
        .map_or_else(Vec::new, |e| curve_rows(e, &maj_ks));
    let mut tables = vec![
        BootstrapTable {
            rows: &pass_rows,
            width: ks.len(),
        },
        BootstrapTable {
            rows: &hat_rows,
            width: ks.len(),
        },
    ];
    if with_maj {
        tables.push(BootstrapTable {
            rows: &first_rows,
            width: maj_ks.len(),
        });
    }
    if exact.is_some() {
        tables.push(BootstrapTable {
            rows: &exact_rows,
            width: maj_ks.len(),
        });
    }
    let cis = bootstrap_cis(&tables, options.bootstrap, options.seed);
    let curve = |ks: &[usize], per: &[&PerProblem], rows: &[Vec<f64>], table: usize| {
        build_curve(&CurveInput {
            ks,
            per,
            rows,
            cis: cis.get(table).map_or(&[], Vec::as_slice),
            clusters: &clusters,
        })
    };
    let mut pass_at_k = curve(&ks, &pass, &pass_rows, 0);
    for point in &mut pass_at_k {
        let plug: Vec<f64> = model
            .problems
            .iter()
            .map(|p| pass_at_k_plugin(p.n, p.correct, point.k))
            .collect::<Result<_>>()?;
        point.plug_in = Some(mean(plug.into_iter()));
    }
    let pass_hat_k = curve(&ks, &hat, &hat_rows, 1);
    let maj_first = with_maj.then(|| curve(&maj_ks, &first, &first_rows, 2));
    let maj_at_k = exact.as_ref().map(|e| curve(&maj_ks, e, &exact_rows, 3));

    Ok(ModelSummary {
        model: model.name.clone(),
        problems: model.problems.len(),
        samples: model.problems.iter().map(|p| p.n).sum(),
        n_min,
        n_max,
        pass_at_1: mean(model.problems.iter().map(|p| p.correct as f64 / p.n as f64)),
        pass_at_k,
        pass_hat_k,
        maj_rule: options.maj_rule,
        maj_at_k,
        maj_first,
        tokens: token_summary(model, options.token_cap),
        bootstrap: options.bootstrap,
        seed: options.seed,
        mean_score: None,
        answers: answer_counts(model),
    })
}

/// The summary of a model with partial-credit scores: the mean score (mean over problems of each
/// problem's mean score) with the question SE, the within-problem sampling SE (sample variance of
/// the scores / n per problem), the clustered SE, the bounded-score interval and the bootstrap
/// CI; no curves. Cost: O(samples + B N).
fn summarize_partial(model: &ModelSamples, options: &SummaryOptions) -> ModelSummary {
    let per_store: Vec<PerProblem> = model
        .problems
        .iter()
        .map(|p| {
            let (m, var) = p.score_mean_and_variance();
            PerProblem {
                est: vec![m],
                var: vec![var],
            }
        })
        .collect();
    let per: Vec<&PerProblem> = per_store.iter().collect();
    let clusters: Vec<Option<&str>> = model
        .problems
        .iter()
        .map(|p| p.cluster.as_deref())
        .collect();
    let rows = curve_rows(&per, &[1]);
    let cis = bootstrap_cis(
        &[BootstrapTable {
            rows: &rows,
            width: 1,
        }],
        options.bootstrap,
        options.seed,
    );
    let point = build_curve(&CurveInput {
        ks: &[1],
        per: &per,
        rows: &rows,
        cis: cis.first().map_or(&[], Vec::as_slice),
        clusters: &clusters,
    })
    .pop();
    ModelSummary {
        model: model.name.clone(),
        problems: model.problems.len(),
        samples: model.problems.iter().map(|p| p.n).sum(),
        n_min: model.problems.iter().map(|p| p.n).min().unwrap_or(0),
        n_max: model.problems.iter().map(|p| p.n).max().unwrap_or(0),
        pass_at_1: mean(per_store.iter().map(|p| p.est[0])),
        pass_at_k: Vec::new(),
        pass_hat_k: Vec::new(),
        maj_rule: options.maj_rule,
        maj_at_k: None,
        maj_first: None,
        tokens: token_summary(model, options.token_cap),
        bootstrap: options.bootstrap,
        seed: options.seed,
        mean_score: point,
        answers: answer_counts(model),
    }
}

/// Token statistics; `None` unless every sample carries a token count. Cost: O(samples).
pub fn token_summary(model: &ModelSamples, cap_tokens: Option<f64>) -> Option<TokenSummary> {
    if !model.has_tokens {
        return None;
    }
    let (mut total, mut count, mut right_sum, mut right, mut capped) =
        (0.0, 0usize, 0.0, 0usize, 0usize);
    for p in &model.problems {
        for (t, ok) in p.tokens.iter().zip(p.correct_flags()) {
            let t = (*t)?;
            total += t;
            count += 1;
            if ok {
                right_sum += t;
                right += 1;
            }
            if cap_tokens.is_some_and(|cap| t >= cap) {
                capped += 1;
            }
        }
    }
    let wrong = count - right;
    Some(TokenSummary {
        mean_tokens_per_sample: total / count.max(1) as f64,
        tokens_per_correct: (right > 0).then(|| total / right as f64),
        mean_tokens_correct: (right > 0).then(|| right_sum / right as f64),
        mean_tokens_wrong: (wrong > 0).then(|| (total - right_sum) / wrong as f64),
        cap_tokens,
        truncation_rate: cap_tokens.map(|_| capped as f64 / count.max(1) as f64),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::data::ProblemSamples;

    fn model(problems: Vec<ProblemSamples>, has_answers: bool) -> ModelSamples {
        ModelSamples {
            name: "m".to_string(),
            problems,
            has_answers,
            has_tokens: false,
        }
    }

    #[test]
    fn worked_example_through_the_summary() {
        let m = model(vec![ProblemSamples::from_groups("q", 3, &[7])], false);
        let s = summarize_model(&m, &SummaryOptions::default()).unwrap();
        assert_eq!(s.pass_at_k.len(), 10);
        assert!((s.pass_at_1 - 0.3).abs() < 1e-12);
        let p5 = &s.pass_at_k[4];
        assert!((p5.estimate - 0.917).abs() < 5e-4);
        assert!((p5.plug_in.unwrap_or(0.0) - 0.832).abs() < 5e-4);
        assert_eq!(s.pass_at_k[9].estimate, 1.0);
        assert!((s.pass_at_k[9].plug_in.unwrap_or(0.0) - 0.972).abs() < 5e-4);
        assert!(s.maj_at_k.is_none() && s.pass_at_k[0].question_se.is_none());
    }

    #[test]
    fn k_above_smallest_n_names_it() {
        let m = model(
            vec![
                ProblemSamples::from_groups("a", 3, &[5]),
                ProblemSamples::from_groups("short", 1, &[3]),
            ],
            true,
        );
        let opts = SummaryOptions {
            ks: Some(vec![1, 5]),
            ..SummaryOptions::default()
        };
        let err = summarize_model(&m, &opts).unwrap_err().to_string();
        assert!(
            err.contains("smallest n = 4") && err.contains("`short`"),
            "{err}"
        );
    }

    #[test]
    fn zero_sample_problem_is_an_error() {
        let mut p = ProblemSamples::from_groups("empty", 0, &[]);
        p.n = 0;
        let err = summarize_model(&model(vec![p], true), &SummaryOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("`empty`") && err.contains("zero samples"),
            "{err}"
        );
    }

    #[test]
    fn standard_errors() {
        let mut problems: Vec<ProblemSamples> = (0..20)
            .map(|i| ProblemSamples::from_groups(&format!("p{i}"), i % 9, &[8 - i % 9, 1]))
            .collect();
        for (i, p) in problems.iter_mut().enumerate() {
            p.cluster = Some(format!("c{}", i % 4));
        }
        let m = model(problems, true);
        let opts = SummaryOptions::default();
        let s = summarize_model(&m, &opts).unwrap();
        // pass@1 sampling SE = sqrt(sum p(1-p)/(n-1)) / N.
        let expect = (m
            .problems
            .iter()
            .map(|p| {
                let r = p.correct as f64 / p.n as f64;
                r * (1.0 - r) / (p.n - 1) as f64
            })
            .sum::<f64>())
        .sqrt()
            / 20.0;
        let p1 = &s.pass_at_k[0];
        assert!((p1.sampling_se.unwrap_or(0.0) - expect).abs() < 1e-12);
        assert!(p1.clustered_se.is_some() && p1.question_se.is_some());
        let [lo, hi] = p1.bootstrap_ci.unwrap_or([1.0, 0.0]);
        assert!(lo < p1.estimate && p1.estimate < hi);
        assert!(
            s.pass_at_k[8].sampling_se.is_none(),
            "k = n has no jackknife"
        );
        // maj@1 equals pass@1 and its jackknife matches pass@1's.
        let maj = s.maj_at_k.as_ref().unwrap();
        assert!((maj[0].estimate - p1.estimate).abs() < 1e-12);
        assert!((maj[0].sampling_se.unwrap_or(0.0) - expect).abs() < 1e-12);
        assert!(s.maj_first.is_some());
        // Same seed, same result.
        assert_eq!(summarize_model(&m, &opts).unwrap(), s);
    }

    #[test]
    fn tokens_from_the_fixture() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/analyze/canonical.jsonl"
        ))
        .unwrap_or_default();
        let d = crate::analyze::read_samples(
            crate::analyze::Format::Jsonl,
            &mut std::io::Cursor::new(text.as_bytes()),
            "canonical.jsonl",
            &crate::analyze::ReadOptions::default(),
        )
        .unwrap();
        let t = token_summary(&d.models[0], Some(8000.0)).unwrap();
        assert!((t.mean_tokens_per_sample - 15800.0 / 6.0).abs() < 1e-9);
        assert_eq!(t.tokens_per_correct, Some(15800.0 / 2.0));
        assert_eq!(t.truncation_rate, Some(1.0 / 6.0));
    }
}
