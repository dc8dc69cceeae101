//! `evalsim analyze` as one computation: datasets in, one serialisable [`Analysis`] out, which the
//! report layer turns into tables, figures and text without computing anything further.
//!
//! Models are summarised in parallel (and maj@k per problem inside each summary); every random
//! number comes from streams keyed by the seed, so the result is the same for any thread count.
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::compare::{compare_models, Comparison, ComparisonOptions};
use super::data::{Dataset, HarnessInfo, ModelSamples};
use super::leaderboard::{leaderboard, Leaderboard};
use super::read::Format;
use super::summary::{summarize_model, ModelSummary, SummaryOptions};
use super::{AnalyzeError, MajRule, Result};
use crate::model::VoteRule;

/// Options of [`analyze`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnalysisOptions {
    /// Per-model summary options (k grid, vote rule, token cap, bootstrap, seed).
    pub summary: SummaryOptions,
    /// Run the paired comparison (needs exactly two models in all inputs together).
    pub compare: bool,
    /// Simulated reruns for the comparison's reversal probability.
    pub reruns: usize,
}

impl Default for AnalysisOptions {
    fn default() -> Self {
        AnalysisOptions {
            summary: SummaryOptions::default(),
            compare: false,
            reruns: ComparisonOptions::default().reruns,
        }
    }
}

/// One input file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceInfo {
    /// The file as named on the command line.
    pub source: String,
    /// The format it was read as.
    pub format: Format,
    /// The models it holds (as named in the analysis).
    pub models: Vec<String>,
    /// What the harness wrote beside the samples (its aggregate, epoch reducers, skipped
    /// samples, token totals, warnings), model names as in the analysis.
    #[serde(default)]
    pub harness: HarnessInfo,
    /// Where evalsim's pass@1 differs from the harness's own aggregate by more than rounding
    /// (a misread, or a harness aggregate over other samples): one message each.
    #[serde(default)]
    pub mismatches: Vec<String>,
}

/// Largest difference between evalsim's pass@1 and the harness's aggregate that counts as
/// rounding (both are means of the same per-sample scores, computed in a different order).
pub const HARNESS_AGREEMENT: f64 = 1e-9;

/// One bin of the per-problem solve-rate histogram.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RateBin {
    /// Lower edge of the bin (solve rate c/n).
    pub low: f64,
    /// Upper edge.
    pub high: f64,
    /// Problems whose c/n falls in [low, high) (the last bin includes 1).
    pub problems: usize,
}

/// Per-problem solve rates c_i / n_i of one model, binned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SolveRateHistogram {
    /// Bins covering 0 to 1. When every problem has the same n <= 20, one bin per possible count
    /// c, centred on c/n with width 1/(n + 1) (so the end bins reach past 0 and 1); otherwise 20
    /// bins of width 0.05.
    pub bins: Vec<RateBin>,
    /// Problems with c = 0 (never solved).
    pub never_solved: usize,
    /// Problems with c = n (always solved).
    pub always_solved: usize,
}

/// Everything `analyze` reports about one model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelAnalysis {
    /// The input file the model came from.
    pub source: String,
    /// Estimates with their uncertainty.
    pub summary: ModelSummary,
    /// Per-problem solve rates.
    pub solve_rates: SolveRateHistogram,
}

/// The whole result of `evalsim analyze`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    /// evalsim version.
    pub version: String,
    /// Seed of the bootstrap and the reversal simulation.
    pub seed: u64,
    /// The inputs, in command-line order.
    pub sources: Vec<SourceInfo>,
    /// The options used.
    pub options: AnalysisOptions,
    /// One entry per model, in input order.
    pub models: Vec<ModelAnalysis>,
    /// The paired comparison (second model minus first), when asked for.
    pub comparison: Option<Comparison>,
    /// The leaderboard, when the inputs hold more than two models and no comparison was asked
    /// for ([`super::leaderboard()`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leaderboard: Option<Leaderboard>,
}

fn rename_in_harness(h: &mut HarnessInfo, from: &str, to: &str) {
    for a in &mut h.aggregates {
        if a.model == from {
            a.model = to.to_string();
        }
    }
    for (m, _, _) in &mut h.reductions {
        if m == from {
            *m = to.to_string();
        }
    }
    for (m, _) in &mut h.tokens {
        if m == from {
            *m = to.to_string();
        }
    }
}

/// Bins per-problem solve rates. Cost: O(N).
pub fn solve_rate_histogram(model: &ModelSamples) -> SolveRateHistogram {
    let n_min = model.problems.iter().map(|p| p.n).min().unwrap_or(0);
    let n_max = model.problems.iter().map(|p| p.n).max().unwrap_or(0);
    let partial = model.partial_credit();
    let mut bins: Vec<RateBin> = if !partial && n_min == n_max && (1..=20).contains(&n_min) {
        let w = 1.0 / (n_min as f64 + 1.0);
        (0..=n_min)
            .map(|c| {
                let centre = c as f64 / n_min as f64;
                RateBin {
                    low: centre - w / 2.0,
                    high: centre + w / 2.0,
                    problems: 0,
                }
            })
            .collect()
    } else {
        (0..20)
            .map(|i| RateBin {
                low: i as f64 * 0.05,
                high: (i + 1) as f64 * 0.05,
                problems: 0,
            })
            .collect()
    };
    let per_count = n_min == n_max && bins.len() == n_min + 1;
    let (mut never, mut always) = (0, 0);
    for p in &model.problems {
        if p.n == 0 {
            continue;
        }
        // Partial credit: the problem's mean score in place of c/n.
        let (rate, _) = p.score_mean_and_variance();
        never += usize::from(rate == 0.0);
        always += usize::from(rate == 1.0);
        let i = if per_count {
            p.correct
        } else if partial {
            (rate * 20.0).floor() as usize
        } else {
            ((p.correct as f64 / p.n as f64) * 20.0).floor() as usize
        };
        let last = bins.len() - 1;
        bins[i.min(last)].problems += 1;
    }
    SolveRateHistogram {
        bins,
        never_solved: never,
        always_solved: always,
    }
}

/// Summarises every model of every dataset and, with `options.compare`, compares the two models;
/// without it, more than two models get a leaderboard ([`super::leaderboard::leaderboard`]).
///
/// Models with the same name in different files are renamed `name (file)`.
///
/// Cost: that of [`summarize_model`] per model (in parallel) plus [`compare_models`].
///
/// # Errors
/// Any error of [`summarize_model`] or [`compare_models`]; `compare` with other than two models.
pub fn analyze(inputs: Vec<(Dataset, Format)>, options: &AnalysisOptions) -> Result<Analysis> {
    let mut sources = Vec::new();
    let mut models: Vec<(String, ModelSamples)> = Vec::new();
    for (dataset, format) in inputs {
        let mut names = Vec::new();
        let mut harness = dataset.harness;
        for mut m in dataset.models {
            if models.iter().any(|(_, o)| o.name == m.name) {
                let renamed = format!("{} ({})", m.name, dataset.source);
                rename_in_harness(&mut harness, &m.name, &renamed);
                m.name = renamed;
            }
            names.push(m.name.clone());
            models.push((dataset.source.clone(), m));
        }
        sources.push(SourceInfo {
            source: dataset.source,
            format,
            models: names,
            harness,
            mismatches: Vec::new(),
        });
    }
    if options.compare && models.len() != 2 {
        return Err(AnalyzeError::BadOption {
            option: "--compare".to_string(),
            value: format!(
                "{} model(s) ({})",
                models.len(),
                models
                    .iter()
                    .map(|(_, m)| format!("`{}`", m.name))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            expected: "exactly two models: two files with one model each, or one file with two"
                .to_string(),
        });
    }
    if options.compare {
        if let Some((_, m)) = models.iter().find(|(_, m)| m.partial_credit()) {
            return Err(AnalyzeError::BadOption {
                option: "--compare".to_string(),
                value: format!("`{}`, whose scores give partial credit", m.name),
                expected: "two models with binary (right/wrong) scores: the paired comparison \
                           does not handle partial credit yet"
                    .to_string(),
            });
        }
    }
    let results: Vec<Result<ModelAnalysis>> = models
        .par_iter()
        .map(|(source, m)| {
            Ok(ModelAnalysis {
                source: source.clone(),
                summary: summarize_model(m, &options.summary)?,
                solve_rates: solve_rate_histogram(m),
            })
        })
        .collect();
    let analyses: Vec<ModelAnalysis> = results.into_iter().collect::<Result<_>>()?;
    for source in &mut sources {
        for agg in &source.harness.aggregates {
            let Some(m) = analyses.iter().find(|m| m.summary.model == agg.model) else {
                continue;
            };
            let ours = m.summary.pass_at_1;
            if (ours - agg.value).abs() > HARNESS_AGREEMENT {
                source.mismatches.push(format!(
                    "{}: evalsim's pass@1 of `{}` is {ours:.6}, the harness wrote {:.6} ({}); they should agree: check the scorer/metric read, or report this file",
                    source.source, agg.model, agg.value, agg.field
                ));
            }
        }
    }
    let comparison = if options.compare {
        let (a, b) = (&models[0].1, &models[1].1);
        let vote = match options.summary.maj_rule {
            MajRule::Random => Some(VoteRule::Random),
            MajRule::Strict => Some(VoteRule::Strict),
            MajRule::Absolute => Some(VoteRule::Absolute),
            MajRule::First => None,
        };
        // maj@k at the largest k both summaries report (no maj@k for `first` or without answers).
        let maj_k = analyses
            .iter()
            .map(|m| {
                m.summary
                    .maj_at_k
                    .as_ref()
                    .and_then(|c| c.last().map(|p| p.k))
            })
            .collect::<Option<Vec<usize>>>()
            .and_then(|ks| ks.into_iter().min())
            .filter(|_| vote.is_some());
        // The per-k differences at every k both summaries' curves have.
        let ks: Vec<usize> = analyses[0]
            .summary
            .pass_at_k
            .iter()
            .map(|p| p.k)
            .filter(|k| analyses[1].summary.pass_at_k.iter().any(|q| q.k == *k))
            .collect();
        Some(compare_models(
            a,
            b,
            &ComparisonOptions {
                ks,
                maj_k,
                maj_rule: vote.unwrap_or(VoteRule::Random),
                reruns: options.reruns,
                seed: options.summary.seed,
            },
        )?)
    } else {
        None
    };
    let leaderboard = if !options.compare && models.len() > 2 {
        Some(leaderboard(
            &models.iter().map(|(_, m)| m).collect::<Vec<_>>(),
            &analyses.iter().map(|m| &m.summary).collect::<Vec<_>>(),
        )?)
    } else {
        None
    };
    Ok(Analysis {
        version: env!("CARGO_PKG_VERSION").to_string(),
        seed: options.summary.seed,
        sources,
        options: options.clone(),
        models: analyses,
        comparison,
        leaderboard,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(name: &str, counts: &[(usize, usize)]) -> ModelSamples {
        ModelSamples::from_counts(name, counts)
    }

    #[test]
    fn histogram_bins() {
        let h = solve_rate_histogram(&model("m", &[(0, 4), (4, 4), (2, 4), (2, 4)]));
        assert_eq!(h.bins.len(), 5);
        let counts: Vec<usize> = h.bins.iter().map(|b| b.problems).collect();
        assert_eq!(counts, vec![1, 0, 2, 0, 1]);
        assert_eq!((h.never_solved, h.always_solved), (1, 1));
        let h = solve_rate_histogram(&model("m", &[(0, 30), (30, 30), (15, 31)]));
        assert_eq!(h.bins.len(), 20);
        assert_eq!(h.bins[19].problems, 1);
        assert_eq!(h.bins[9].problems, 1, "15/31 = 0.484");
    }

    #[test]
    fn compare_needs_two_models_and_renames_duplicates() {
        let d = |src: &str| Dataset {
            source: src.to_string(),
            models: vec![model("m", &[(1, 4), (2, 4), (3, 4)])],
            harness: Default::default(),
        };
        let opts = AnalysisOptions {
            compare: true,
            reruns: 100,
            ..AnalysisOptions::default()
        };
        let a = analyze(
            vec![(d("a.jsonl"), Format::Jsonl), (d("b.jsonl"), Format::Jsonl)],
            &opts,
        )
        .unwrap();
        assert_eq!(a.models[1].summary.model, "m (b.jsonl)");
        let c = a.comparison.as_ref().unwrap();
        assert_eq!(c.pass_at_1.difference, 0.0);
        assert_eq!(c.maj_at_k.as_ref().map(|d| d.k), Some(4));
        let err = analyze(vec![(d("a.jsonl"), Format::Jsonl)], &opts)
            .unwrap_err()
            .to_string();
        assert!(err.contains("exactly two models"), "{err}");
    }
}
