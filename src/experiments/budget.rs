//! `budget`: what a cap on trace length does to accuracy, truncation and tokens per sample, at
//! each budget of a grid, exact and simulated; also the per-model inputs that
//! [`cost`](super::cost) shares.
//!
//! Exact values come from [`crate::exact::budget`] (lognormal CDFs, E[min(L, B)], the token
//! sampling moments and the length shares); simulated ones from [`crate::sim::traces`]
//! (lognormal lengths drawn and compared with each budget). Standard errors: from the exact
//! per-problem probabilities for shares and from the exact per-problem moments of min(L, B) for
//! tokens per sample.
//!
//! Depends on `scenario`, `model`, `exact` and `sim`; computes no closed form itself.
use super::{ExperimentResult, KindResult, KindRun};
use crate::scenario::BudgetSpec;
use serde::Serialize;

use super::{Check, Estimate, Progress};
use crate::exact::budget::{
    crossover_budgets, cut_and_kept, graded_accuracy_and_miss, graded_accuracy_at_budget,
    length_shares, token_sampling_moments, tokens_per_sample, truncation_rate, TraceLengths,
};
use crate::exact::grader::{Grader, SampleGrading};
use crate::exact::pass::{bernoulli_mean_se_with, mean};
use crate::model::VoteRule;
use crate::scenario::Scenario;
use crate::sim::traces::{self, CellTraces, LogBins, TraceCell, TraceProblem};

/// Which quantity a budget point is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BudgetMetric {
    /// Acc(B): share of samples that are right and within the budget.
    Accuracy,
    /// Share of traces longer than the budget (cut off with no answer).
    TruncationRate,
    /// Mean tokens spent on one sample, E[min(L, B)] mixed over correct and wrong traces.
    TokensPerSample,
}

impl BudgetMetric {
    /// The name used in tables and checks.
    pub fn as_str(self) -> &'static str {
        match self {
            BudgetMetric::Accuracy => "accuracy",
            BudgetMetric::TruncationRate => "truncation_rate",
            BudgetMetric::TokensPerSample => "tokens_per_sample",
        }
    }
}

/// A model of a budget or cost experiment.
#[derive(Debug, Clone, Serialize)]
pub struct BudgetModel {
    /// Model name.
    pub model: String,
    /// pass@1 without a cap (mean rate, as graded): the limit of Acc(B) as B grows.
    pub pass_at_1: f64,
    /// The model's trace-length parameters.
    pub lengths: TraceLengths,
    /// Share of samples with no extractable answer (absent: 0), never graded correct.
    #[serde(skip_serializing_if = "crate::model::is_zero")]
    pub unparsed: f64,
    /// The model's grader, when grading is noisy: accuracy and pass@1 are then as graded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grader: Option<Grader>,
}

/// One point of a budget experiment: a metric of one model at one budget.
#[derive(Debug, Clone, Serialize)]
pub struct BudgetPoint {
    /// Index into [`BudgetCurves::models`].
    pub model: usize,
    /// The cap B, tokens.
    pub budget_tokens: f64,
    /// Which metric.
    pub metric: BudgetMetric,
    /// Exact and simulated values (shares as fractions; tokens as tokens).
    #[serde(flatten)]
    pub estimate: Estimate,
}

/// One budget where two Acc(B) curves cross.
#[derive(Debug, Clone, Serialize)]
pub struct Crossing {
    /// The crossover budget, tokens (exact, root of Acc_a - Acc_b on ln B).
    pub budget_tokens: f64,
    /// Acc(B) of both models at the crossover.
    pub accuracy: f64,
    /// Model ahead just below the crossover.
    pub leader_below: String,
    /// Model ahead just above the crossover.
    pub leader_above: String,
}

/// How the Acc(B) curves of two models compare over the budget range.
#[derive(Debug, Clone, Serialize)]
pub struct CrossoverPair {
    /// First model (gaps are a - b).
    pub model_a: String,
    /// Second model.
    pub model_b: String,
    /// Smallest budget of the experiment, tokens.
    pub min_budget_tokens: f64,
    /// Largest budget of the experiment, tokens.
    pub max_budget_tokens: f64,
    /// Acc_a - Acc_b at the smallest budget (exact).
    pub gap_at_min: f64,
    /// Acc_a - Acc_b at the largest budget (exact).
    pub gap_at_max: f64,
    /// Model ahead at the smallest budget (`tie` when equal).
    pub leader_at_min: String,
    /// Model ahead at the largest budget.
    pub leader_at_max: String,
    /// Every crossing in the range, increasing.
    pub crossings: Vec<Crossing>,
}

/// Distribution of one model's trace lengths: share of all its traces per log-spaced bin,
/// correct and wrong separately (exact and simulated), for the lengths figure.
#[derive(Debug, Clone, Serialize)]
pub struct LengthHistogram {
    /// Model name.
    pub model: String,
    /// Bin edges, tokens (bins + 1 values, equally spaced in log10).
    pub edges_tokens: Vec<f64>,
    /// Exact share of all traces that are correct and fall in each bin.
    pub correct_exact: Vec<f64>,
    /// Exact share of all traces that are wrong and fall in each bin.
    pub wrong_exact: Vec<f64>,
    /// Simulated share of correct traces per bin.
    pub correct_sim: Vec<f64>,
    /// Simulated share of wrong traces per bin.
    pub wrong_sim: Vec<f64>,
}

/// Result of a `budget` experiment.
#[derive(Debug, Clone, Serialize)]
pub struct BudgetCurves {
    /// Experiment name.
    pub experiment: String,
    /// Traces simulated per problem per model (every budget uses the same traces).
    pub traces: u64,
    /// The budgets, tokens, increasing.
    pub budgets: Vec<f64>,
    /// The models.
    pub models: Vec<BudgetModel>,
    /// Every point: accuracy, truncation rate and tokens per sample per model per budget.
    pub points: Vec<BudgetPoint>,
    /// Crossovers of each pair of models, in model order.
    pub crossovers: Vec<CrossoverPair>,
    /// Trace-length distributions, one per model.
    pub lengths: Vec<LengthHistogram>,
    /// Exact Acc(B) and truncation rate of each model on a fine log grid, for smooth lines.
    pub exact_curves: Vec<ExactCurve>,
}

/// Exact curves of one model on a fine grid of budgets (for figures).
#[derive(Debug, Clone, Serialize)]
pub struct ExactCurve {
    /// Model name.
    pub model: String,
    /// Budgets, tokens (log-spaced from the smallest to the largest budget).
    pub budget_tokens: Vec<f64>,
    /// Acc(B) at each budget.
    pub accuracy: Vec<f64>,
    /// Truncation rate at each budget.
    pub truncation_rate: Vec<f64>,
}

impl KindResult for BudgetCurves {
    fn name(&self) -> &str {
        &self.experiment
    }

    /// Every point as a check.
    fn checks(&self) -> Vec<Check> {
        self.points
            .iter()
            .map(|pt| Check {
                experiment: self.experiment.clone(),
                quantity: pt.metric.as_str().to_string(),
                cell: format!(
                    "model={} budget={}",
                    self.models[pt.model].model, pt.budget_tokens
                ),
                estimate: pt.estimate,
            })
            .collect()
    }
}

impl BudgetCurves {
    /// The point of a model, budget and metric.
    pub fn point(&self, model: usize, budget: f64, metric: BudgetMetric) -> Option<&BudgetPoint> {
        self.points
            .iter()
            .find(|p| p.model == model && p.budget_tokens == budget && p.metric == metric)
    }
}

/// A model's per-problem inputs: rates, benchmark difficulties and trace lengths.
pub(super) struct ModelInputs {
    pub(super) name: String,
    pub(super) rates: Vec<f64>,
    pub(super) attractor: f64,
    pub(super) rule: VoteRule,
    pub(super) lengths: TraceLengths,
    pub(super) verifier: Option<crate::model::Verifier>,
    /// Extraction failures and the grader: what Acc(B) counts as graded correct.
    pub(super) grading: SampleGrading,
    /// Every repeated wrong answer's share (the votes of `cost`).
    pub(super) attractors: Vec<f64>,
    /// Share of correct samples in the alternate form (the votes of `cost`).
    pub(super) split: f64,
}

pub(super) fn inputs(scenario: &Scenario, models: &[usize]) -> Vec<ModelInputs> {
    models
        .iter()
        .filter_map(|&m| {
            let model = &scenario.models[m];
            // Validation guarantees the tokens block for budget and cost models.
            model.tokens.map(|lengths| ModelInputs {
                name: model.name.clone(),
                rates: model.rates_on(&scenario.benchmark),
                attractor: model.attractor,
                rule: model.vote_rule,
                lengths,
                verifier: model.verifier,
                grading: SampleGrading::of(model),
                attractors: model.attractors.clone(),
                split: model.split,
            })
        })
        .collect()
}

pub(super) fn trace_cell(m: &ModelInputs, difficulty: &[f64]) -> TraceCell {
    TraceCell {
        problems: m
            .rates
            .iter()
            .zip(difficulty)
            .map(|(&p, &d)| TraceProblem {
                p,
                correct_median: m.lengths.correct_median(d),
                wrong_median: m.lengths.wrong_median(d),
                grading: m.grading,
            })
            .collect(),
        sigma: m.lengths.sigma,
    }
}

pub(super) fn budget_model(m: &ModelInputs) -> BudgetModel {
    BudgetModel {
        model: m.name.clone(),
        pass_at_1: if m.grading.is_identity() {
            mean(&m.rates)
        } else {
            let graded: Vec<f64> = m
                .rates
                .iter()
                .map(|&p| m.grading.rate(p, 1.0 - p).0)
                .collect();
            mean(&graded)
        },
        lengths: m.lengths,
        unparsed: m.grading.unparsed,
        grader: m.grading.grader,
    }
}

/// Simulated means at budget index j, over problems.
pub(super) struct SimMeans {
    /// Mean tokens per sample.
    pub(super) tokens: f64,
    /// Share correct within the budget.
    pub(super) accuracy: f64,
    /// Share cut.
    pub(super) cut: f64,
}

pub(super) fn sim_means(cell: &CellTraces, j: usize) -> SimMeans {
    let big_n = cell.problems.len() as f64;
    let (mut tok, mut acc, mut cut) = (0.0, 0.0, 0.0);
    for pt in &cell.problems {
        let n = pt.traces as f64;
        tok += pt.tokens[j] / n;
        acc += pt.graded_kept[j] as f64 / n;
        cut += pt.cut[j] as f64 / n;
    }
    SimMeans {
        tokens: tok / big_n,
        accuracy: acc / big_n,
        cut: cut / big_n,
    }
}

/// Bins of the lengths figure: 60 bins on log10 tokens covering the budgets and 3.5 log-SDs
/// around every model's shortest and longest median.
fn length_bins(ms: &[ModelInputs], difficulty: &[f64], budgets: &[f64]) -> LogBins {
    let mut lo = budgets.first().copied().unwrap_or(1000.0).log10();
    let mut hi = budgets.last().copied().unwrap_or(1000.0).log10();
    for m in ms {
        let spread = 3.5 * m.lengths.sigma * std::f64::consts::LOG10_E;
        for &d in difficulty {
            lo = lo.min(m.lengths.correct_median(d).log10() - spread);
            hi = hi.max(m.lengths.wrong_median(d).log10() + spread);
        }
    }
    let bins = 60;
    LogBins {
        lo_log10: lo,
        width_log10: (hi - lo) / bins as f64,
        bins,
    }
}

/// Acc(B), truncation rate and tokens per sample of each model at each budget, the crossovers
/// of every pair of models, and the trace-length distributions.
pub fn budget(
    scenario: &Scenario,
    name: &str,
    key: u64,
    models: &[usize],
    budgets: &[f64],
    traces: u64,
    progress: Progress,
) -> BudgetCurves {
    let difficulty = scenario.benchmark.difficulty();
    let ms = inputs(scenario, models);
    let cells: Vec<TraceCell> = ms.iter().map(|m| trace_cell(m, &difficulty)).collect();
    let bins = length_bins(&ms, &difficulty, budgets);
    let sims = traces::simulate(
        scenario.seed,
        &[key],
        &cells,
        budgets,
        traces,
        Some(bins),
        progress,
    );
    let mut points = Vec::new();
    for (mi, (m, cell)) in ms.iter().zip(&sims).enumerate() {
        for (j, &b) in budgets.iter().enumerate() {
            let mo = sim_means(cell, j);
            let (tokens_var, _) =
                token_sampling_moments(&m.rates, &difficulty, &m.lengths, b, traces);
            let (cut_i, kept_i): (Vec<f64>, Vec<f64>) = m
                .rates
                .iter()
                .zip(&difficulty)
                .map(|(&p, &d)| cut_and_kept(p, d, &m.lengths, b))
                .unzip();
            let (acc_i, miss_i): (Vec<f64>, Vec<f64>) = m
                .rates
                .iter()
                .zip(&difficulty)
                .map(|(&p, &d)| graded_accuracy_and_miss(p, d, &m.lengths, b, &m.grading))
                .unzip();
            let rows = [
                (
                    BudgetMetric::Accuracy,
                    Estimate::new(
                        graded_accuracy_at_budget(&m.rates, &difficulty, &m.lengths, b, &m.grading),
                        mo.accuracy,
                        bernoulli_mean_se_with(&acc_i, &miss_i, traces),
                    )
                    .counting(1.0 / (traces as f64 * m.rates.len() as f64)),
                ),
                (
                    BudgetMetric::TruncationRate,
                    Estimate::new(
                        truncation_rate(&m.rates, &difficulty, &m.lengths, b),
                        mo.cut,
                        bernoulli_mean_se_with(&cut_i, &kept_i, traces),
                    )
                    .counting(1.0 / (traces as f64 * m.rates.len() as f64)),
                ),
                (
                    BudgetMetric::TokensPerSample,
                    // Each trace's min(L, B) lies in [0, B]: a mean of bounded terms, so
                    // Bernstein's bound applies where a few short traces drive the deviation.
                    Estimate::new(
                        tokens_per_sample(&m.rates, &difficulty, &m.lengths, b),
                        mo.tokens,
                        tokens_var.sqrt(),
                    )
                    .counting(b / (traces as f64 * m.rates.len() as f64)),
                ),
            ];
            for (metric, estimate) in rows {
                points.push(BudgetPoint {
                    model: mi,
                    budget_tokens: b,
                    metric,
                    estimate,
                });
            }
        }
    }
    let mut crossovers = Vec::new();
    for a in 0..ms.len() {
        for b in a + 1..ms.len() {
            crossovers.push(crossover_pair(&ms[a], &ms[b], &difficulty, budgets));
        }
    }
    let lengths = ms
        .iter()
        .zip(&sims)
        .map(|(m, cell)| {
            let edges: Vec<f64> = (0..=bins.bins)
                .map(|j| 10f64.powf(bins.lo_log10 + j as f64 * bins.width_log10))
                .collect();
            let (correct_exact, wrong_exact) =
                length_shares(&m.rates, &difficulty, &m.lengths, &edges);
            let total = (traces * m.rates.len() as u64) as f64;
            let share = |h: &[u64]| h.iter().map(|&c| c as f64 / total).collect();
            LengthHistogram {
                model: m.name.clone(),
                edges_tokens: edges,
                correct_exact,
                wrong_exact,
                correct_sim: share(&cell.hist_correct),
                wrong_sim: share(&cell.hist_wrong),
            }
        })
        .collect();
    let exact_curves = ms
        .iter()
        .map(|m| exact_curve(m, &difficulty, budgets))
        .collect();
    BudgetCurves {
        experiment: name.to_string(),
        traces,
        budgets: budgets.to_vec(),
        models: ms.iter().map(budget_model).collect(),
        points,
        crossovers,
        lengths,
        exact_curves,
    }
}

/// Points of the exact curves drawn in figures.
const CURVE_POINTS: usize = 81;

fn exact_curve(m: &ModelInputs, difficulty: &[f64], budgets: &[f64]) -> ExactCurve {
    let lo = budgets.first().copied().unwrap_or(1.0).ln();
    let hi = budgets.last().copied().unwrap_or(2.0).ln();
    let grid: Vec<f64> = (0..CURVE_POINTS)
        .map(|j| (lo + (hi - lo) * j as f64 / (CURVE_POINTS - 1) as f64).exp())
        .collect();
    ExactCurve {
        model: m.name.clone(),
        accuracy: grid
            .iter()
            .map(|&b| graded_accuracy_at_budget(&m.rates, difficulty, &m.lengths, b, &m.grading))
            .collect(),
        truncation_rate: grid
            .iter()
            .map(|&b| truncation_rate(&m.rates, difficulty, &m.lengths, b))
            .collect(),
        budget_tokens: grid,
    }
}

fn leader(gap: f64, a: &str, b: &str) -> String {
    if gap > 0.0 {
        a.to_string()
    } else if gap < 0.0 {
        b.to_string()
    } else {
        "tie".to_string()
    }
}

fn crossover_pair(
    a: &ModelInputs,
    b: &ModelInputs,
    difficulty: &[f64],
    budgets: &[f64],
) -> CrossoverPair {
    let acc_a = |x: f64| graded_accuracy_at_budget(&a.rates, difficulty, &a.lengths, x, &a.grading);
    let acc_b = |x: f64| graded_accuracy_at_budget(&b.rates, difficulty, &b.lengths, x, &b.grading);
    let gap = |x: f64| acc_a(x) - acc_b(x);
    // Validation guarantees at least two increasing budgets > 0.
    let lo = budgets.first().copied().unwrap_or(1.0);
    let hi = budgets.last().copied().unwrap_or(2.0);
    let roots = crossover_budgets(acc_a, acc_b, lo, hi);
    // The leader on each stretch between roots, read at its geometric midpoint.
    let mut bounds = vec![lo];
    bounds.extend(&roots);
    bounds.push(hi);
    let stretch_leader: Vec<String> = bounds
        .windows(2)
        .map(|w| leader(gap((w[0] * w[1]).sqrt()), &a.name, &b.name))
        .collect();
    let crossings = roots
        .iter()
        .enumerate()
        .map(|(j, &r)| Crossing {
            budget_tokens: r,
            accuracy: 0.5 * (acc_a(r) + acc_b(r)),
            leader_below: stretch_leader[j].clone(),
            leader_above: stretch_leader[j + 1].clone(),
        })
        .collect();
    CrossoverPair {
        model_a: a.name.clone(),
        model_b: b.name.clone(),
        min_budget_tokens: lo,
        max_budget_tokens: hi,
        gap_at_min: gap(lo),
        gap_at_max: gap(hi),
        leader_at_min: leader(gap(lo), &a.name, &b.name),
        leader_at_max: leader(gap(hi), &a.name, &b.name),
        crossings,
    }
}

impl KindRun for BudgetSpec {
    fn draw_cost_ns(&self) -> u64 {
        40
    }

    fn run(
        &self,
        scenario: &Scenario,
        name: &str,
        key: u64,
        progress: Progress,
    ) -> ExperimentResult {
        ExperimentResult::Budget(budget(
            scenario,
            name,
            key,
            &self.models,
            &self.budgets,
            self.traces,
            progress,
        ))
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    const SMALL: &str = r#"
seed = 11
[benchmark]
problems = 6
mu = 0.2
sigma = 1.5
[[model]]
name = "long"
attractor = 0.5
[model.tokens]
median_tokens = 8000
hard_growth = 1.0
wrong_factor = 1.5
sigma = 0.55
[[model]]
name = "short"
shift = -0.6
attractor = 0.5
[model.tokens]
median_tokens = 2500
hard_growth = 1.0
wrong_factor = 1.5
sigma = 0.55
[[experiment]]
kind = "budget"
budgets = [1000, 4000, 16000, 64000]
traces = 20000
[[experiment]]
kind = "cost"
k = [1, 4, 9]
cap = 20000
votes = 20000
traces = 20000
"#;

    pub(in crate::experiments) fn small() -> Scenario {
        Scenario::from_toml(SMALL, "small", "test").expect("valid")
    }

    #[test]
    fn budget_simulation_agrees_with_exact_within_the_z_bound() {
        let s = small();
        let r = budget(
            &s,
            "budget",
            7,
            &[0, 1],
            &[1000.0, 4000.0, 16000.0, 64000.0],
            20_000,
            &|_| {},
        );
        assert_eq!(r.points.len(), 2 * 4 * 3);
        for c in r.checks() {
            assert!(c.estimate.se > 0.0, "{}", c.cell);
            assert!(
                c.passed(),
                "{} {}: z = {}",
                c.quantity,
                c.cell,
                c.estimate.z
            );
        }
        // Simulated length shares add up to the traces inside the bins.
        for h in &r.lengths {
            let sim: f64 = h.correct_sim.iter().chain(&h.wrong_sim).sum();
            let exact: f64 = h.correct_exact.iter().chain(&h.wrong_exact).sum();
            assert!(sim <= 1.0 && exact <= 1.0 && exact > 0.99);
        }
    }

    #[test]
    fn same_seed_same_result_other_seed_other_result() {
        let s = small();
        let run = |seed: u64| {
            let mut s = s.clone();
            s.seed = seed;
            budget(&s, "budget", 7, &[0], &[1000.0, 4000.0], 3000, &|_| {})
                .points
                .iter()
                .map(|p| p.estimate.sim)
                .collect::<Vec<_>>()
        };
        assert_eq!(run(1), run(1));
        assert_ne!(run(1), run(2));
    }
}
