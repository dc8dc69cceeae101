//! Coverage of `analyze`'s 95% intervals on clustered data: clusters of problems, each cluster
//! with its own logit shift ([`crate::support::evals::EvalSampler::sample_clustered_keyed`]), run
//! through `summarize_model` and `compare_models` exactly as `evalsim analyze` runs them on a
//! file with a `cluster` column. Scored: the reported interval (CR2, Bell-McCaffrey t) and, for
//! comparison, the interval from the question SE that treats the problems as independent.
//!
//! The truth is the population value by quadrature: the problems' logits are
//! mu + u_g + sigma z_i with u_g ~ N(0, tau^2), so marginally logit-normal with SD
//! sqrt(sigma^2 + tau^2) ([`evalsim::exact::plan::PopulationNodes`]); cluster sizes are drawn
//! independently of the shifts, so the mean over problems estimates it without bias.
//!
//! Depends on `analyze` (the estimators, as reported), `exact` (the truth) and `sim` (the data
//! sets, on keyed streams; no generator is built here).
use rayon::prelude::*;
use serde::Serialize;

use crate::support::coverage::CoverageRow;
use crate::support::evals::{EvalSampler, ProblemTally};
use evalsim::analyze::{
    compare_models, ComparisonOptions, CurvePoint, ModelSamples, ProblemSamples, SummaryOptions,
};
use evalsim::exact::plan::PopulationNodes;
use evalsim::model::VoteRule;

/// Stream tag of the clustered coverage replicates.
const CLUSTER_COVERAGE_STREAM: u64 = 0xC1C0;

/// What to simulate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClusteredSpec {
    /// Logit mean of the population of problems.
    pub mu: f64,
    /// Logit SD of problems within a cluster.
    pub sigma: f64,
    /// Logit SD of the cluster shifts.
    pub tau: f64,
    /// Attractor share of wrong answers.
    pub attractor: f64,
    /// Logit shift of model B over model A.
    pub gap: f64,
    /// Clusters C per data set.
    pub clusters: usize,
    /// Smallest and largest cluster size (drawn uniformly).
    pub sizes: (usize, usize),
    /// Samples n per problem (also the k of pass@k and maj@k).
    pub samples: usize,
    /// Data sets simulated.
    pub replicates: usize,
    /// Seed.
    pub seed: u64,
}

/// The metrics in row order: pass@1, pass@n, maj@n, and the paired differences of pass@1 and
/// maj@n.
pub const CLUSTERED_METRICS: [&str; 5] = ["pass@1", "pass@k", "maj@k", "diff pass@1", "diff maj@k"];

/// The two intervals scored per metric.
pub const CLUSTERED_METHODS: [&str; 2] = ["reported (clustered)", "question SE"];

/// Population values of [`CLUSTERED_METRICS`] by quadrature. Cost: 3 tabulations.
pub fn clustered_truth(spec: &ClusteredSpec) -> [f64; 5] {
    let k = spec.samples as u32;
    let sd = spec.sigma.hypot(spec.tau);
    let (mu, gap, a) = (spec.mu, spec.gap, spec.attractor);
    let p1 = PopulationNodes::new(mu, sd, gap, |p| p).moments();
    let pk = PopulationNodes::new(mu, sd, gap, |p| evalsim::exact::pass::pass_at_k(p, k)).moments();
    let mk = PopulationNodes::new(mu, sd, gap, |p| {
        evalsim::exact::maj::maj_at_k(p, a, k, VoteRule::Random)
    })
    .moments();
    [
        p1.mean_a,
        pk.mean_a,
        mk.mean_a,
        p1.mean_b - p1.mean_a,
        mk.mean_b - mk.mean_a,
    ]
}

fn model(name: &str, tallies: &[ProblemTally], of: &[usize]) -> ModelSamples {
    ModelSamples {
        name: name.to_string(),
        problems: tallies
            .iter()
            .zip(of)
            .enumerate()
            .map(|(i, (t, g))| {
                let mut p =
                    ProblemSamples::from_groups(&format!("q{i}"), t.correct, &t.wrong_groups());
                p.cluster = Some(format!("c{g}"));
                p
            })
            .collect(),
        has_answers: true,
        has_tokens: false,
    }
}

/// Per metric, the (reported, question-SE) intervals of one replicate.
type Pair = [Option<[f64; 2]>; 2];

fn replicate(spec: &ClusteredSpec, r: usize) -> [Pair; 5] {
    let sampler = EvalSampler {
        mu: spec.mu,
        sigma: spec.sigma,
        attractor: spec.attractor,
        samples: spec.samples,
        shifts: vec![0.0, spec.gap],
    };
    let (draws, of) = sampler.sample_clustered_keyed(
        spec.clusters,
        spec.sizes,
        spec.tau,
        spec.seed,
        &[CLUSTER_COVERAGE_STREAM, spec.clusters as u64, r as u64],
    );
    let (a, b) = (model("a", &draws[0], &of), model("b", &draws[1], &of));
    let k = spec.samples;
    let options = SummaryOptions {
        ks: Some(vec![1, k]),
        bootstrap: 0,
        seed: spec.seed,
        ..SummaryOptions::default()
    };
    let summary = evalsim::analyze::summarize_model(&a, &options).ok();
    let at = |curve: Option<&Vec<CurvePoint>>, kk: usize| -> Pair {
        curve
            .and_then(|c| c.iter().find(|p| p.k == kk))
            .map_or([None, None], |p| [p.ci95, p.unclustered_ci95])
    };
    let cmp = compare_models(
        &a,
        &b,
        &ComparisonOptions {
            maj_k: Some(k),
            reruns: 0,
            ..ComparisonOptions::default()
        },
    )
    .ok();
    let diff = |d: Option<&evalsim::analyze::DiffEstimate>| -> Pair {
        d.map_or([None, None], |d| [Some(d.ci95), d.unclustered_ci95])
    };
    [
        at(summary.as_ref().map(|s| &s.pass_at_k), 1),
        at(summary.as_ref().map(|s| &s.pass_at_k), k),
        at(summary.as_ref().and_then(|s| s.maj_at_k.as_ref()), k),
        diff(cmp.as_ref().map(|c| &c.pass_at_1)),
        diff(cmp.as_ref().and_then(|c| c.maj_at_k.as_ref())),
    ]
}

/// Simulates `spec.replicates` clustered data sets and scores, per metric, the reported
/// interval and the one from the question SE. Replicates run in parallel on streams keyed by
/// (seed, C, replicate), so the result is the same for any thread count.
///
/// Cost: O(replicates N n^3) (the maj@n DP is tiny at small n).
pub fn clustered_coverage(spec: &ClusteredSpec) -> Vec<CoverageRow> {
    let truth = clustered_truth(spec);
    let all: Vec<[Pair; 5]> = (0..spec.replicates)
        .into_par_iter()
        .map(|r| replicate(spec, r))
        .collect();
    let level = evalsim::analyze::interval::LEVEL;
    let mut rows = Vec::new();
    for (m, metric) in CLUSTERED_METRICS.iter().enumerate() {
        for (j, method) in CLUSTERED_METHODS.iter().enumerate() {
            let (mut covered, mut width, mut count) = (0usize, 0.0, 0usize);
            for rep in &all {
                if let Some([lo, hi]) = rep[m][j] {
                    count += 1;
                    width += hi - lo;
                    covered += usize::from(lo <= truth[m] && truth[m] <= hi);
                }
            }
            let replicates = spec.replicates.max(1);
            rows.push(CoverageRow {
                metric,
                method: (*method).to_string(),
                truth: truth[m],
                covered,
                replicates: spec.replicates,
                coverage: covered as f64 / replicates as f64,
                binomial_se: (level * (1.0 - level) / replicates as f64).sqrt(),
                mean_width: width / count.max(1) as f64,
            });
        }
    }
    rows
}
