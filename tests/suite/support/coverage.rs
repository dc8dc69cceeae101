//! Coverage of `analyze`'s 95% intervals: data sets drawn from the workbench's own model
//! ([`super::evals`]), the population value of every metric by quadrature
//! ([`evalsim::exact::plan::PopulationNodes`]), and the share of data sets whose interval holds it.
//!
//! One replicate draws N problems from the logit-normal population and n answers per problem for
//! two models (B is A shifted by `gap` logits, on the same problems), runs the summary and the
//! paired comparison exactly as `evalsim analyze` does, and records for pass@1, pass@k, pass^k,
//! maj@k (at the given k) and the paired differences of pass@1, maj@k and pass@k whether each
//! interval covers the population value. Alternative constructions ([`IntervalMethod`]) are scored on the
//! same per-problem values, so the comparison between them is paired.
//!
//! It lives in `analyze` because it scores `analyze`'s own estimators and intervals; it depends
//! on `model`, `exact` (the population truth) and `sim` (the data sets, drawn on keyed streams;
//! no generator is built here).
use rayon::prelude::*;
use serde::Serialize;

use super::evals::{EvalSampler, ProblemTally};
use super::tally_pmf::paired_tally_pmf;
use evalsim::analyze::interval::{
    mean_interval, paired_score_from_moments, wilson_from_moments, IntervalMethod,
};
use evalsim::analyze::{
    compare_models, maj_at_k_exact, pass_at_k_curve, pass_hat_k_curve, summarize_model,
    ComparisonOptions, ModelSamples, ProblemSamples, SummaryOptions,
};
use evalsim::exact::plan::PopulationNodes;
use evalsim::model::VoteRule;

/// Stream tag of the coverage replicates.
const COVERAGE_STREAM: u64 = 0xC0FE;

/// What to simulate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CoverageSpec {
    /// Logit mean of the population of problems.
    pub mu: f64,
    /// Logit SD of the population.
    pub sigma: f64,
    /// Attractor share of wrong answers.
    pub attractor: f64,
    /// Logit shift of model B over model A.
    pub gap: f64,
    /// Problems N per data set.
    pub problems: usize,
    /// Samples n per problem.
    pub samples: usize,
    /// k of pass@k, pass^k and maj@k (at most `samples`).
    pub k: usize,
    /// Data sets simulated.
    pub replicates: usize,
    /// Bootstrap resamples of the summary (0: no percentile-bootstrap rows).
    pub bootstrap: usize,
    /// Seed.
    pub seed: u64,
}

/// Coverage of one interval construction for one metric.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CoverageRow {
    /// `pass@1`, `pass@k`, `pass^k`, `maj@k`, `diff pass@1`, `diff maj@k` or `diff pass@k`.
    pub metric: &'static str,
    /// The construction: `reported` (what `analyze` prints), `bootstrap`, or a method name.
    pub method: String,
    /// The population value (exact).
    pub truth: f64,
    /// Data sets whose interval holds the truth.
    pub covered: usize,
    /// Data sets simulated.
    pub replicates: usize,
    /// covered / replicates.
    pub coverage: f64,
    /// Binomial SE of the coverage at 95%: sqrt(0.95 * 0.05 / replicates).
    pub binomial_se: f64,
    /// Mean interval width.
    pub mean_width: f64,
}

/// Result of [`interval_coverage`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CoverageResult {
    /// The simulation.
    pub spec: CoverageSpec,
    /// One row per (metric, method).
    pub rows: Vec<CoverageRow>,
}

/// The metrics in row order (the paired differences from index 4 on).
pub const METRICS: [&str; 7] = [
    "pass@1",
    "pass@k",
    "pass^k",
    "maj@k",
    "diff pass@1",
    "diff maj@k",
    "diff pass@k",
];

/// For each paired difference of [`METRICS`] (index 4 on), the per-problem metric it is the
/// difference of (index into the first four).
fn differenced(m: usize) -> usize {
    match m {
        4 => 0,
        5 => 3,
        _ => 1,
    }
}

/// Population values of [`METRICS`] by quadrature over the logit-normal. Cost: 4 tabulations of
/// 40,002 nodes (maj@k: O(k^2) each).
pub fn population_truth(spec: &CoverageSpec) -> [f64; 7] {
    let k = spec.k as u32;
    let (mu, sigma, gap, a) = (spec.mu, spec.sigma, spec.gap, spec.attractor);
    let p1 = PopulationNodes::new(mu, sigma, gap, |p| p).moments();
    let pk =
        PopulationNodes::new(mu, sigma, gap, |p| evalsim::exact::pass::pass_at_k(p, k)).moments();
    let hk =
        PopulationNodes::new(mu, sigma, gap, |p| evalsim::exact::pass::pass_hat_k(p, k)).moments();
    let mk = PopulationNodes::new(mu, sigma, gap, |p| {
        evalsim::exact::maj::maj_at_k(p, a, k, VoteRule::Random)
    })
    .moments();
    [
        p1.mean_a,
        pk.mean_a,
        hk.mean_a,
        mk.mean_a,
        p1.mean_b - p1.mean_a,
        mk.mean_b - mk.mean_a,
        pk.mean_b - pk.mean_a,
    ]
}

fn model(name: &str, tallies: &[ProblemTally]) -> ModelSamples {
    ModelSamples {
        name: name.to_string(),
        problems: tallies
            .iter()
            .enumerate()
            .map(|(i, t)| {
                ProblemSamples::from_groups(&format!("q{i}"), t.correct, &t.wrong_groups())
            })
            .collect(),
        has_answers: true,
        has_tokens: false,
    }
}

/// Per-problem values of the four metrics at k for one model.
fn per_problem(tallies: &[ProblemTally], n: usize, k: usize) -> [Vec<f64>; 4] {
    let mut out: [Vec<f64>; 4] = Default::default();
    for t in tallies {
        out[0].push(t.correct as f64 / n as f64);
        out[1].push(pass_at_k_curve(n, t.correct, k).map_or(f64::NAN, |c| c[k - 1]));
        out[2].push(pass_hat_k_curve(n, t.correct, k).map_or(f64::NAN, |c| c[k - 1]));
        out[3].push(
            maj_at_k_exact(t.correct, &t.wrong_groups(), k, VoteRule::Random)
                .map_or(f64::NAN, |c| c[k - 1]),
        );
    }
    out
}

/// One replicate: for each metric, the (low, high) of the reported interval, of the bootstrap
/// (single-model metrics only) and of each method.
type Intervals = Vec<Vec<Option<[f64; 2]>>>;

fn replicate(spec: &CoverageSpec, methods: &[IntervalMethod], r: usize) -> Intervals {
    let sampler = EvalSampler {
        mu: spec.mu,
        sigma: spec.sigma,
        attractor: spec.attractor,
        samples: spec.samples,
        shifts: vec![0.0, spec.gap],
    };
    let draws = sampler.sample_keyed(
        spec.problems,
        spec.seed,
        &[
            COVERAGE_STREAM,
            spec.problems as u64,
            spec.samples as u64,
            r as u64,
        ],
    );
    let (a, b) = (model("a", &draws[0]), model("b", &draws[1]));
    let k = spec.k;
    let options = SummaryOptions {
        ks: Some(vec![1, k]),
        bootstrap: spec.bootstrap,
        seed: spec.seed ^ r as u64,
        ..SummaryOptions::default()
    };
    let mut out: Intervals = vec![Vec::new(); METRICS.len()];
    let summary = summarize_model(&a, &options).ok();
    let at = |curve: Option<&Vec<evalsim::analyze::CurvePoint>>, kk: usize| {
        curve.and_then(|c| c.iter().find(|p| p.k == kk)).cloned()
    };
    let points = [
        at(summary.as_ref().map(|s| &s.pass_at_k), 1),
        at(summary.as_ref().map(|s| &s.pass_at_k), k),
        at(summary.as_ref().map(|s| &s.pass_hat_k), k),
        at(summary.as_ref().and_then(|s| s.maj_at_k.as_ref()), k),
    ];
    for (m, p) in points.iter().enumerate() {
        out[m].push(p.as_ref().and_then(|p| p.ci95));
        out[m].push(p.as_ref().and_then(|p| p.bootstrap_ci));
    }
    let cmp = compare_models(
        &a,
        &b,
        &ComparisonOptions {
            ks: vec![1, k],
            maj_k: Some(k),
            reruns: 0,
            ..ComparisonOptions::default()
        },
    )
    .ok();
    out[4].push(cmp.as_ref().map(|c| c.pass_at_1.ci95));
    out[5].push(
        cmp.as_ref()
            .and_then(|c| c.maj_at_k.as_ref().map(|d| d.ci95)),
    );
    out[6].push(
        cmp.as_ref()
            .and_then(|c| c.pass_by_k.iter().find(|d| d.k == k).map(|d| d.ci95)),
    );
    for diff in &mut out[4..] {
        diff.push(None);
    }
    let va = per_problem(&draws[0], spec.samples, k);
    let vb = per_problem(&draws[1], spec.samples, k);
    let diff = |j: usize| -> Vec<f64> { vb[j].iter().zip(&va[j]).map(|(b, a)| b - a).collect() };
    let values = [
        va[0].clone(),
        va[1].clone(),
        va[2].clone(),
        va[3].clone(),
        diff(0),
        diff(3),
        diff(1),
    ];
    for (m, v) in values.iter().enumerate() {
        let range = if m >= 4 { (-1.0, 1.0) } else { (0.0, 1.0) };
        for &method in methods {
            // The paired score interval is one of differences in [-1, 1] only.
            let applies = m >= 4 || method != IntervalMethod::PairedScore;
            out[m].push(
                applies
                    .then(|| mean_interval(v, range, method).map(|i| [i.low, i.high]))
                    .flatten(),
            );
        }
    }
    out
}

/// Simulates `spec.replicates` data sets and scores the reported interval, the percentile
/// bootstrap (when `spec.bootstrap > 0`) and each of `methods`. Replicates run in parallel, each
/// on its own stream keyed by (seed, N, n, replicate), so the result is the same for any thread
/// count.
///
/// Cost: O(replicates N n k^2) for the maj@k DP plus O(replicates bootstrap N) for the bootstrap.
pub fn interval_coverage(spec: &CoverageSpec, methods: &[IntervalMethod]) -> CoverageResult {
    let truth = population_truth(spec);
    let all: Vec<Intervals> = (0..spec.replicates)
        .into_par_iter()
        .map(|r| replicate(spec, methods, r))
        .collect();
    let mut labels = vec!["reported".to_string(), "bootstrap".to_string()];
    labels.extend(methods.iter().map(|m| format!("{m:?}").to_lowercase()));
    let mut rows = Vec::new();
    for (m, metric) in METRICS.iter().enumerate() {
        for (j, label) in labels.iter().enumerate() {
            if j == 1 && (spec.bootstrap == 0 || m >= 4) {
                continue;
            }
            if m < 4 && label == "pairedscore" {
                continue;
            }
            let (mut covered, mut width, mut count) = (0usize, 0.0, 0usize);
            for rep in &all {
                if let Some([lo, hi]) = rep[m][j] {
                    count += 1;
                    width += hi - lo;
                    covered += usize::from(lo <= truth[m] && truth[m] <= hi);
                }
            }
            let replicates = spec.replicates;
            rows.push(CoverageRow {
                metric,
                method: label.clone(),
                truth: truth[m],
                covered,
                replicates,
                coverage: covered as f64 / replicates.max(1) as f64,
                binomial_se: (LEVEL_COVERAGE * (1.0 - LEVEL_COVERAGE) / replicates.max(1) as f64)
                    .sqrt(),
                mean_width: width / count.max(1) as f64,
            });
        }
    }
    CoverageResult {
        spec: spec.clone(),
        rows,
    }
}

/// The nominal coverage.
const LEVEL_COVERAGE: f64 = evalsim::analyze::interval::LEVEL;

/// Most data-set compositions [`exact_coverage`] enumerates per metric.
pub const EXACT_COVERAGE_MAX_COMPOSITIONS: f64 = 5e6;

/// The interval `analyze` reports for metric `m` of [`METRICS`] at `k`: for the paired
/// differences that of [`evalsim::analyze::compare::paired_method`] (Wilson for pass@1, the
/// Tango-type score interval for maj@k and pass@k at k >= 2), [`IntervalMethod::Wilson`] for
/// every single-model metric.
pub fn reported_method(m: usize, k: usize) -> IntervalMethod {
    match m {
        4 => evalsim::analyze::compare::paired_method(1),
        5 | 6 => evalsim::analyze::compare::paired_method(k),
        _ => IntervalMethod::Wilson,
    }
}

/// The exact coverage of the reported interval ([`reported_method`], as `analyze` prints) for
/// each of [`METRICS`], when it is computable: every per-problem value takes one of finitely
/// many values v_1..v_V with probabilities q_1..q_V (from the exact tally pmf,
/// [`paired_tally_pmf`], mapped through `analyze`'s own per-problem estimators), so a data set
/// is a multinomial composition (x_1..x_V) of N and
/// coverage = sum over compositions of Multinomial(x; N, q) [truth in CI(x)].
/// The interval depends on the data set only through its composition.
///
/// `None` for a metric whose number of compositions C(N + V - 1, V - 1) exceeds
/// [`EXACT_COVERAGE_MAX_COMPOSITIONS`] (e.g. maj@4 at n = 8: many values). With k = n = 4 and
/// N <= 15 every metric is computable (at most 9 values). Time: O(compositions N) per metric.
pub fn exact_coverage(spec: &CoverageSpec) -> [Option<f64>; 7] {
    exact_coverage_with(spec, |m| reported_method(m, spec.k))
}

/// [`exact_coverage`] for the construction `method(m)` of each metric m (e.g. `|_| Wilson` for
/// the previous intervals of the paired differences).
pub fn exact_coverage_with(
    spec: &CoverageSpec,
    method: impl Fn(usize) -> IntervalMethod,
) -> [Option<f64>; 7] {
    let (truth, dists) = value_distributions(spec);
    let mut out = [None; 7];
    for (m, slot) in out.iter_mut().enumerate() {
        let range = if m >= 4 { (-1.0, 1.0) } else { (0.0, 1.0) };
        *slot = composition_coverage(&dists[m], spec.problems, range, method(m), truth[m]);
    }
    out
}

/// The population value of each of [`METRICS`] and the distribution of its per-problem value,
/// as sorted (value, probability) pairs: the exact tally pmf ([`paired_tally_pmf`]) mapped
/// through `analyze`'s own per-problem estimators at `spec.k`. Time: O(20,001 T^2) for the pmf,
/// T = (n + 1)(n + 2) / 2.
pub fn value_distributions(spec: &CoverageSpec) -> ([f64; 7], [Vec<(f64, f64)>; 7]) {
    let truth = population_truth(spec);
    let pmf = paired_tally_pmf(spec.mu, spec.sigma, spec.gap, spec.attractor, spec.samples);
    let scores: Vec<[f64; 4]> = pmf
        .tallies
        .iter()
        .map(|&(c, a)| {
            let t = ProblemTally {
                correct: c,
                attractor: a,
                one_offs: spec.samples - c - a,
            };
            let v = per_problem(&[t], spec.samples, spec.k);
            [v[0][0], v[1][0], v[2][0], v[3][0]]
        })
        .collect();
    let t = pmf.tallies.len();
    let dists = std::array::from_fn(|m| {
        let mut dist: Vec<(f64, f64)> = Vec::new();
        for i in 0..t {
            for j in 0..t {
                let prob = pmf.joint[i * t + j];
                let value = if m < 4 {
                    scores[i][m]
                } else {
                    let s = differenced(m);
                    scores[j][s] - scores[i][s]
                };
                dist.push((value, prob));
            }
        }
        merge_values(dist)
    });
    (truth, dists)
}

/// The exact coverage of the reported interval ([`reported_method`]) for each of
/// [`METRICS`] whose per-problem values all lie on the lattice j / `lattice` (e.g. `lattice` =
/// 4 at k = n = 4: pass@1 = c / 4, maj@4 in {0, 1/4, 1/2, 1}, their differences), at any N.
///
/// The reported interval depends on a data set only through N, the sum and the sum of squares
/// of its values ([`wilson_from_moments`], [`paired_score_from_moments`]), so instead of every composition
/// ([`exact_coverage`], limited to small N) a dynamic programme over the integer pair
/// (sum, sum of squares) in lattice units carries the exact distribution of the statistics
/// over the N problems: coverage = sum over (s1, s2) of P(s1, s2) [truth in CI(s1, s2)].
/// `None` for a metric with a value off the lattice (by more than 1e-9).
/// Time: O(N^3 L^3 V) with V values per problem (the table has O(N^2 L^3) cells).
pub fn exact_coverage_lattice(spec: &CoverageSpec, lattice: usize) -> [Option<f64>; 7] {
    exact_coverage_lattice_with(spec, lattice, |m| reported_method(m, spec.k))
}

/// [`exact_coverage_lattice`] for the construction `method(m)` of each metric m: `Wilson` or
/// `PairedScore` (the two that are functions of the sum and the sum of squares); `None` for
/// any other.
pub fn exact_coverage_lattice_with(
    spec: &CoverageSpec,
    lattice: usize,
    method: impl Fn(usize) -> IntervalMethod,
) -> [Option<f64>; 7] {
    let (truth, dists) = value_distributions(spec);
    let mut out = [None; 7];
    for (m, slot) in out.iter_mut().enumerate() {
        let range = if m >= 4 { (-1, 1) } else { (0, 1) };
        *slot = match method(m) {
            IntervalMethod::Wilson => {
                lattice_coverage(&dists[m], spec.problems, range, lattice, truth[m], false)
            }
            IntervalMethod::PairedScore if m >= 4 => {
                lattice_coverage(&dists[m], spec.problems, range, lattice, truth[m], true)
            }
            _ => None,
        };
    }
    out
}

/// [`exact_coverage_lattice`] for one metric: values `dist` in the integer range `range`.
fn lattice_coverage(
    dist: &[(f64, f64)],
    problems: usize,
    (lo, hi): (i64, i64),
    lattice: usize,
    truth: f64,
    paired_score: bool,
) -> Option<f64> {
    let l = lattice as i64;
    let mut units: Vec<(i64, f64)> = Vec::with_capacity(dist.len());
    for &(value, prob) in dist {
        let u = (value * lattice as f64).round();
        if (u - value * lattice as f64).abs() > 1e-9 || problems < 2 {
            return None;
        }
        units.push((u as i64, prob));
    }
    // Every difference -1, 0 or +1: the score interval is Tango's (`is_three_point`).
    let three_point = units.iter().all(|&(u, _)| u == 0 || u.abs() == l);
    let n = problems as i64;
    // Sum s1 in [l lo n, l hi n], sum of squares s2 in [0, l^2 max(lo^2, hi^2) n].
    let s1_min = l * lo * n;
    let s1_len = (l * (hi - lo) * n + 1) as usize;
    let sq_max = l * l * lo.abs().max(hi.abs());
    let s2_len = (sq_max * n + 1) as usize;
    let mut table = vec![0.0; s1_len * s2_len];
    table[(-s1_min) as usize * s2_len] = 1.0;
    for step in 0..problems {
        let mut next = vec![0.0; s1_len * s2_len];
        let s2_reach = (sq_max * step as i64) as usize;
        for s1 in 0..s1_len {
            for s2 in 0..=s2_reach.min(s2_len - 1) {
                let p = table[s1 * s2_len + s2];
                if p == 0.0 {
                    continue;
                }
                for &(u, q) in &units {
                    let t1 = (s1 as i64 + u) as usize;
                    let t2 = s2 + (u * u) as usize;
                    next[t1 * s2_len + t2] += p * q;
                }
            }
        }
        table = next;
    }
    let (nf, lf) = (problems as f64, lattice as f64);
    let range = (lo as f64, hi as f64);
    let mut total = 0.0;
    for s1 in 0..s1_len {
        let sum = s1 as i64 + s1_min;
        for s2 in 0..s2_len {
            let p = table[s1 * s2_len + s2];
            if p == 0.0 {
                continue;
            }
            let sq = s2 as i64;
            // Integer numerators: (n - 1) n l^2 var = n s2 - s1^2; and on the unit scale
            // v = (u / l - lo) / w, l^2 w^2 sum v (1 - v) = l (hi + lo) s1 - s2 - n lo hi l^2.
            let var = (n * sq - sum * sum) as f64 / (nf * (nf - 1.0) * lf * lf);
            let w = (hi - lo) as f64;
            let inside =
                (l * (hi + lo) * sum - sq - n * lo * hi * l * l) as f64 / (lf * lf * w * w);
            let mean = sum as f64 / (lf * nf);
            let interval = if paired_score {
                paired_score_from_moments(problems, mean, var, three_point)
            } else {
                wilson_from_moments(problems, mean, var, inside, range)
            };
            if interval.is_some_and(|i| i.low <= truth && truth <= i.high) {
                total += p;
            }
        }
    }
    Some(total)
}

/// Sorts (value, probability) pairs and merges values within 1e-12 (the same score reached
/// through different tallies can differ in the last bits); drops zero probabilities.
fn merge_values(mut dist: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    dist.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out: Vec<(f64, f64)> = Vec::new();
    for (v, p) in dist {
        match out.last_mut() {
            Some(last) if (v - last.0).abs() <= 1e-12 => last.1 += p,
            _ => out.push((v, p)),
        }
    }
    out.retain(|&(_, p)| p > 0.0);
    out
}

/// Sum over the multinomial compositions of `problems` into the values of `dist` of their
/// probability times [truth in the interval]. `None` when there are too many compositions.
fn composition_coverage(
    dist: &[(f64, f64)],
    problems: usize,
    range: (f64, f64),
    method: IntervalMethod,
    truth: f64,
) -> Option<f64> {
    let v = dist.len();
    let mut count = 1.0;
    for j in 1..v {
        count *= (problems + j) as f64 / j as f64;
    }
    if count > EXACT_COVERAGE_MAX_COMPOSITIONS || v == 0 {
        return None;
    }
    let ln_fact: Vec<f64> = (0..=problems)
        .scan(0.0, |acc, j| {
            if j > 0 {
                *acc += (j as f64).ln();
            }
            Some(*acc)
        })
        .collect();
    let ln_q: Vec<f64> = dist.iter().map(|&(_, p)| p.ln()).collect();
    let mut counts = vec![0usize; v];
    let mut total = 0.0;
    walk(
        &mut |counts: &[usize]| {
            let ln_p = ln_fact[problems]
                + counts
                    .iter()
                    .zip(&ln_q)
                    .map(|(&x, &lq)| {
                        if x == 0 {
                            0.0
                        } else {
                            x as f64 * lq - ln_fact[x]
                        }
                    })
                    .sum::<f64>();
            let values: Vec<f64> = counts
                .iter()
                .zip(dist)
                .flat_map(|(&x, &(value, _))| std::iter::repeat_n(value, x))
                .collect();
            if mean_interval(&values, range, method)
                .is_some_and(|i| i.low <= truth && truth <= i.high)
            {
                total += ln_p.exp();
            }
        },
        &mut counts,
        0,
        problems,
    );
    Some(total)
}

/// Calls `visit` on every composition of `left` into `counts[at..]` (counts[..at] fixed).
fn walk(visit: &mut impl FnMut(&[usize]), counts: &mut [usize], at: usize, left: usize) {
    if at + 1 == counts.len() {
        counts[at] = left;
        visit(counts);
        return;
    }
    for x in 0..=left {
        counts[at] = x;
        walk(visit, counts, at + 1, left - x);
    }
}
