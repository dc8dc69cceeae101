//! `confidence`: confidence-filtered maj@k against the kept share of the k samples, for each
//! model and k: the top-share filter at each share, the threshold filter at each threshold
//! (placed at its expected kept share), and the unfiltered maj@k (share 1). Every value is
//! exact (the model's outcome model) and simulated (the outcome sampler), paired as a check;
//! the threshold filter's kept share is checked too.
//!
//! Depends on `scenario`, `model`, `exact` and `sim`; computes no closed form itself.
use super::{ExperimentResult, KindResult, KindRun};
use crate::scenario::ConfidenceSpec;
use serde::Serialize;

use super::{Check, Estimate, Progress};
use crate::exact::confidence::{top_count, Filter};
use crate::exact::outcome::{Metric, OutcomeModel};
use crate::exact::pass::{bernoulli_mean_se_with, mean};
use crate::model::{Confidence, VoteRule};
use crate::scenario::Scenario;
use crate::sim;
use crate::sim::outcome::OutcomeSeries;

/// One model of a `confidence` experiment.
#[derive(Debug, Clone, Serialize)]
pub struct ConfidenceSeries {
    /// Model name.
    pub model: String,
    /// Its attractor share a.
    pub attractor: f64,
    /// Its confidence model.
    pub confidence: Confidence,
    /// The vote rule of every vote.
    pub vote_rule: VoteRule,
    /// Benchmark pass@1 (mean rate).
    pub pass_at_1: f64,
}

/// One point: a filter (or none) of one model at one k.
#[derive(Debug, Clone, Serialize)]
pub struct ConfidencePoint {
    /// Index into the series.
    pub series: usize,
    /// Samples per vote before filtering.
    pub k: u32,
    /// The filter; `None` for the unfiltered maj@k.
    pub filter: Option<Filter>,
    /// The exact mean share of the k samples kept (m / k for the top share, the mean of r over
    /// problems for a threshold, 1 unfiltered).
    pub kept_share: f64,
    /// The threshold filter's kept share, exact and simulated (samples kept / samples drawn).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kept: Option<Estimate>,
    /// Benchmark maj@k among the kept samples, exact and simulated.
    pub estimate: Estimate,
    /// Exact filtered minus unfiltered maj@k at this k (positive: filtering helps).
    pub gain: f64,
}

/// Result of `confidence`.
#[derive(Debug, Clone, Serialize)]
pub struct ConfidenceCurves {
    /// Experiment name.
    pub experiment: String,
    /// Votes simulated per problem per (model, k).
    pub votes: u64,
    /// Number of problems N.
    pub problems: usize,
    /// The k values.
    pub k: Vec<u32>,
    /// One series per model.
    pub series: Vec<ConfidenceSeries>,
    /// Every point, in (series, k) order: unfiltered, top shares, thresholds.
    pub points: Vec<ConfidencePoint>,
}

impl KindResult for ConfidenceCurves {
    fn name(&self) -> &str {
        &self.experiment
    }

    /// Every point's maj@k and every threshold's kept share as a check.
    fn checks(&self) -> Vec<Check> {
        let mut out = Vec::new();
        for pt in &self.points {
            let s = &self.series[pt.series];
            let cell = format!(
                "model={} filter={} rule={} k={}",
                s.model,
                Self::filter_name(pt.filter),
                s.vote_rule.as_str(),
                pt.k
            );
            out.push(Check::new(
                &self.experiment,
                "filtered maj@k",
                &cell,
                pt.estimate,
            ));
            if let Some(kept) = pt.kept {
                out.push(Check::new(&self.experiment, "kept share", &cell, kept));
            }
        }
        out
    }
}

impl ConfidenceCurves {
    /// The name of a point's filter in tables and checks.
    pub fn filter_name(filter: Option<Filter>) -> String {
        filter.map_or("none".into(), Filter::name)
    }
}

/// Filtered maj@k against the kept share for each listed model.
#[allow(clippy::too_many_arguments)]
pub fn confidence(
    scenario: &Scenario,
    name: &str,
    key: u64,
    models: &[usize],
    ks: &[u32],
    (shares, thresholds): (&[f64], &[f64]),
    votes: u64,
    rule: Option<VoteRule>,
    progress: Progress,
) -> ConfidenceCurves {
    let specs: Vec<(String, Vec<f64>, OutcomeModel)> = models
        .iter()
        .map(|&m| {
            let model = &scenario.models[m];
            let outcome = OutcomeModel::of(model, rule.unwrap_or(model.vote_rule));
            (
                model.name.clone(),
                model.rates_on(&scenario.benchmark),
                outcome,
            )
        })
        .collect();
    let filters: Vec<Filter> = shares
        .iter()
        .map(|&s| Filter::TopShare(s))
        .chain(thresholds.iter().map(|&t| Filter::Threshold(t)))
        .collect();
    let inputs: Vec<OutcomeSeries> = specs
        .iter()
        .map(|(_, rates, outcome)| OutcomeSeries { outcome, rates })
        .collect();
    let tallies = sim::outcome::simulate(
        scenario.seed,
        key,
        &inputs,
        ks,
        &[],
        &filters,
        votes,
        progress,
    );
    let mut points = Vec::new();
    for (si, (_, rates, o)) in specs.iter().enumerate() {
        let n = rates.len() as f64;
        let trials = votes as f64 * n;
        for (ki, &k) in ks.iter().enumerate() {
            let tally = &tallies[si][ki];
            let estimate = |metric: Metric| {
                let (exact, complement): (Vec<f64>, Vec<f64>) =
                    o.value(rates, metric, k).into_iter().unzip();
                let hits: u64 = tally.iter().map(|t| t.hits(metric, false)).sum();
                Estimate::new(
                    mean(&exact),
                    hits as f64 / trials,
                    bernoulli_mean_se_with(&exact, &complement, votes),
                )
                .counting(1.0 / trials)
            };
            let unfiltered = estimate(Metric::MajAtK);
            points.push(ConfidencePoint {
                series: si,
                k,
                filter: None,
                kept_share: 1.0,
                kept: None,
                estimate: unfiltered,
                gain: 0.0,
            });
            for &f in &filters {
                let est = estimate(Metric::FilteredMajAtK(f));
                let (kept_share, kept) = match f {
                    Filter::TopShare(s) => (f64::from(top_count(s, k)) / f64::from(k), None),
                    Filter::Threshold(t) => {
                        let (r, not_r): (Vec<f64>, Vec<f64>) =
                            o.kept_share(rates, t).into_iter().unzip();
                        let samples = trials * f64::from(k);
                        let kept: u64 = tally.iter().map(|x| x.kept(f)).sum();
                        let e = Estimate::new(
                            mean(&r),
                            kept as f64 / samples,
                            bernoulli_mean_se_with(&r, &not_r, votes * u64::from(k)),
                        )
                        .counting(1.0 / samples);
                        (e.exact, Some(e))
                    }
                };
                points.push(ConfidencePoint {
                    series: si,
                    k,
                    filter: Some(f),
                    kept_share,
                    kept,
                    estimate: est,
                    gain: est.exact - unfiltered.exact,
                });
            }
        }
    }
    let series = specs
        .iter()
        .map(|(model, rates, o)| ConfidenceSeries {
            model: model.clone(),
            attractor: o.attractor(),
            confidence: o.confidence.expect("checked when the scenario resolves"),
            vote_rule: o.rule,
            pass_at_1: o.pass_at_1(rates),
        })
        .collect();
    ConfidenceCurves {
        experiment: name.to_string(),
        votes,
        problems: specs.first().map_or(0, |s| s.1.len()),
        k: ks.to_vec(),
        series,
        points,
    }
}

impl KindRun for ConfidenceSpec {
    /// Per vote of k = 16 samples with their confidences, all filters scored.
    fn draw_cost_ns(&self) -> u64 {
        600
    }

    fn run(
        &self,
        scenario: &Scenario,
        name: &str,
        key: u64,
        progress: Progress,
    ) -> ExperimentResult {
        ExperimentResult::Confidence(confidence(
            scenario,
            name,
            key,
            &self.models,
            &self.k,
            (&self.shares, &self.thresholds),
            self.votes,
            self.vote_rule,
            progress,
        ))
    }
}
