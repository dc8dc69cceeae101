//! `cost`: accuracy, tokens per sample and tokens per correct answer of every (model, k)
//! strategy at one cap, with the Pareto frontier, exact and simulated.
//!
//! Exact values come from [`crate::exact::budget`] (capped accuracy, capped maj@k, token moments
//! and the delta-method SE of the ratio); simulated ones from [`crate::sim::traces`] (k = 1) and
//! [`crate::sim::votes`] (capped votes, k > 1). Depends on scenario, exact, sim and the shared
//! per-model inputs of [`super::budget`].
use super::{ExperimentResult, KindResult, KindRun};
use crate::scenario::CostSpec;
use serde::Serialize;

use super::budget::{budget_model, inputs, sim_means, trace_cell, BudgetModel, ModelInputs};
use super::check::{Untested, RATIO_MAX_RELATIVE_SE};
use super::{Check, Estimate, Progress};
use crate::exact::budget::{
    capped_mode_shares, capped_vote_rates, graded_accuracy_and_miss, graded_token_sampling_moments,
    maj_at_k_capped_modes, maj_at_k_capped_with_loss, tokens_per_correct_se, tokens_per_sample,
};
use crate::exact::modes::Extraction;
use crate::exact::pass::{bernoulli_mean_se_with, mean};
use crate::exact::verifier::{best_pairs, selectable_rate};
use crate::model::VoteRule;
use crate::scenario::Scenario;
use crate::sim::modes::grade_picks;
use crate::sim::selection::{simulate_selection, SelectionCell};
use crate::sim::traces::{self, TraceCell};
use crate::sim::votes::{self, ModeAnswers, VoteCell};

/// One strategy of a cost experiment: k samples of one model per problem, at the cap.
#[derive(Debug, Clone, Serialize)]
pub struct Strategy {
    /// Model name.
    pub model: String,
    /// Samples per problem (k = 1: one sample; k > 1: majority vote).
    pub k: u32,
    /// Vote rule of the maj@k (k > 1).
    pub vote_rule: VoteRule,
    /// Accuracy: Acc(B) for k = 1, maj@k under the cap for k > 1.
    pub accuracy: Estimate,
    /// Mean tokens per sample under the cap (the same for every k of a model).
    pub tokens_per_sample: Estimate,
    /// k * tokens per sample / accuracy (delta-method standard error).
    pub tokens_per_correct: Estimate,
    /// Exact money per correct answer, tokens per correct * price / 1e6 (when a price is set).
    pub cost_per_correct: Option<f64>,
    /// Simulated money per correct answer (when a price is set).
    pub cost_per_correct_sim: Option<f64>,
    /// On the Pareto frontier: no other strategy is at least as accurate for fewer tokens per
    /// correct answer (exact values).
    pub frontier: bool,
    /// A best-of-k strategy: the model's verifier picks one of the k samples (instead of a
    /// majority vote). Only models with a `[model.verifier]` have them, for every k > 1.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub best_of_k: bool,
}

/// Result of a `cost` experiment.
#[derive(Debug, Clone, Serialize)]
pub struct CostTable {
    /// Experiment name.
    pub experiment: String,
    /// The cap, tokens (`None`: unlimited).
    pub cap_tokens: Option<f64>,
    /// Price per million output tokens, when given.
    pub price_per_mtok: Option<f64>,
    /// Votes simulated per problem per strategy with k > 1.
    pub votes: u64,
    /// Traces simulated per problem per model (accuracy at k = 1 and tokens per sample).
    pub traces: u64,
    /// The models.
    pub models: Vec<BudgetModel>,
    /// The strategies, sorted by exact tokens per correct answer (cheapest first).
    pub strategies: Vec<Strategy>,
}

impl KindResult for CostTable {
    fn name(&self) -> &str {
        &self.experiment
    }

    /// Tokens per sample once per model, then accuracy and tokens per correct per strategy.
    fn checks(&self) -> Vec<Check> {
        let cap = self
            .cap_tokens
            .map_or("unlimited".to_string(), |c| c.to_string());
        let mut out = Vec::new();
        for m in &self.models {
            if let Some(s) = self.strategies.iter().find(|s| s.model == m.model) {
                out.push(Check::new(
                    &self.experiment,
                    "tokens_per_sample",
                    &format!("model={} cap={cap}", m.model),
                    s.tokens_per_sample,
                ));
            }
        }
        for s in &self.strategies {
            for (quantity, estimate) in [
                ("accuracy", s.accuracy),
                ("tokens_per_correct", s.tokens_per_correct),
            ] {
                let how = if s.best_of_k { " best-of-k" } else { "" };
                out.push(Check::new(
                    &self.experiment,
                    quantity,
                    &format!("model={} k={}{how} cap={cap}", s.model, s.k),
                    estimate,
                ));
            }
        }
        out
    }
}

/// One strategy's accuracy inputs: (exact per problem with complement, simulated mean, draws per
/// problem, covariance of the simulated accuracy with the simulated tokens).
type AccuracyInputs = (Vec<(f64, f64)>, f64, u64, f64);

/// Accuracy, tokens per sample and tokens per correct answer of every (model, k) strategy at the
/// cap (`None`: unlimited), with the Pareto frontier.
#[allow(clippy::too_many_arguments)]
pub fn cost(
    scenario: &Scenario,
    name: &str,
    key: u64,
    models: &[usize],
    ks: &[u32],
    cap: Option<f64>,
    price_per_mtok: Option<f64>,
    votes_per_problem: u64,
    traces: u64,
    rule: Option<VoteRule>,
    progress: Progress,
) -> CostTable {
    let difficulty = scenario.benchmark.difficulty();
    let ms = inputs(scenario, models);
    let budget = cap.unwrap_or(f64::INFINITY);
    let cells: Vec<TraceCell> = ms.iter().map(|m| trace_cell(m, &difficulty)).collect();
    let sims = traces::simulate(
        scenario.seed,
        &[key, 0],
        &cells,
        &[budget],
        traces,
        None,
        progress,
    );
    let (vote_cells, vote_index) = vote_cells_of(&ms, ks, &difficulty, budget, rule);
    let vote_counts = votes::simulate(
        scenario.seed,
        &[key, 1],
        &vote_cells,
        votes_per_problem,
        progress,
    );
    let (best_cells, best_index) = best_cells_of(&ms, ks, &difficulty, budget, rule);
    let best_counts = simulate_selection(
        scenario.seed,
        &[key, 2],
        &best_cells,
        votes_per_problem,
        &|_, _| {},
    );
    let big_n = difficulty.len() as f64;
    let mut strategies = Vec::new();
    for (mi, (m, cell)) in ms.iter().zip(&sims).enumerate() {
        let mo = sim_means(cell, 0);
        let (tokens, tokens_cov) = tokens_estimate(m, mo.tokens, &difficulty, budget, traces);
        let vote_rule = rule.unwrap_or(m.rule);
        let best = |k: u32| -> Option<AccuracyInputs> {
            let verifier = m.verifier.as_ref()?;
            let bi = best_index
                .iter()
                .position(|&(bm, bk)| bm == mi && bk == k)?;
            // The verifier picks on correct or wrong: an unparsed sample is a wrong one.
            let selectable: Vec<f64> = best_cells[bi]
                .p
                .iter()
                .map(|&p| selectable_rate(p, m.grading.unparsed))
                .collect();
            let mut pairs = best_pairs(&selectable, verifier, k);
            // A noisy grader grades the verifier's pick.
            if let Some(g) = m.grading.grader {
                pairs.iter_mut().for_each(|x| *x = g.selected(*x));
            }
            let wins: u64 = best_counts[bi]
                .iter()
                .map(|c| match m.grading.grader {
                    Some(_) => c.best_graded,
                    None => c.best_true,
                })
                .sum();
            let sim = wins as f64 / (votes_per_problem as f64 * big_n);
            Some((pairs, sim, votes_per_problem, 0.0))
        };
        let mut rows: Vec<(u32, bool, AccuracyInputs)> = Vec::new();
        for &k in ks {
            // (exact per problem, simulated mean, draws per problem, covariance with tokens)
            let (pairs, sim, draws, cov) = if k == 1 {
                let acc_i: Vec<(f64, f64)> = m
                    .rates
                    .iter()
                    .zip(&difficulty)
                    .map(|(&p, &d)| graded_accuracy_and_miss(p, d, &m.lengths, budget, &m.grading))
                    .collect();
                (acc_i, mo.accuracy, traces, tokens_cov)
            } else {
                let mut maj_i = maj_exact(m, &difficulty, k, vote_rule, budget);
                let vi = vote_index
                    .iter()
                    .position(|&(vm, vk)| vm == mi && vk == k)
                    .unwrap_or(0);
                let counts = vote_counts.get(vi).map_or(&[][..], |c| &c[..]);
                // A noisy grader grades the vote's pick: exact by the grader's closed form,
                // simulated by grading every simulated pick.
                let wins: u64 = match m.grading.grader {
                    Some(g) => {
                        maj_i.iter_mut().for_each(|x| *x = g.selected(*x));
                        let tallies: Vec<(u64, u64)> =
                            counts.iter().map(|v| (v.wins, v.votes)).collect();
                        grade_picks(scenario.seed, &[key, 3, vi as u64], &tallies, &g)
                            .iter()
                            .sum()
                    }
                    None => counts.iter().map(|v| v.wins).sum(),
                };
                let sim = wins as f64 / (votes_per_problem as f64 * big_n);
                (maj_i, sim, votes_per_problem, 0.0)
            };
            rows.push((k, false, (pairs, sim, draws, cov)));
            if k > 1 {
                if let Some(b) = best(k) {
                    rows.push((k, true, b));
                }
            }
        }
        for (k, best_of_k, inputs) in rows {
            strategies.push(strategy(
                m,
                k,
                best_of_k,
                inputs,
                tokens,
                big_n,
                vote_rule,
                price_per_mtok,
            ));
        }
    }
    strategies.sort_by(|a, b| {
        a.tokens_per_correct
            .exact
            .total_cmp(&b.tokens_per_correct.exact)
            .then(b.accuracy.exact.total_cmp(&a.accuracy.exact))
    });
    mark_frontier(&mut strategies);
    CostTable {
        experiment: name.to_string(),
        cap_tokens: cap,
        price_per_mtok,
        votes: votes_per_problem,
        traces,
        models: ms.iter().map(budget_model).collect(),
        strategies,
    }
}

/// Tokens per sample of model `m` under the cap `budget` against its simulated mean `sim`, and
/// the covariance of tokens and correctness of the same traces.
fn tokens_estimate(
    m: &ModelInputs,
    sim: f64,
    difficulty: &[f64],
    budget: f64,
    traces: u64,
) -> (Estimate, f64) {
    let (tokens_var, tokens_cov) =
        graded_token_sampling_moments(&m.rates, difficulty, &m.lengths, budget, traces, &m.grading);
    let tokens_exact = tokens_per_sample(&m.rates, difficulty, &m.lengths, budget);
    let tokens = Estimate::new(tokens_exact, sim, tokens_var.sqrt());
    // Under a cap each sample's tokens lie in [0, cap]: Bernstein's bound applies.
    let tokens = if budget.is_finite() {
        tokens.counting(budget / (traces as f64 * m.rates.len() as f64))
    } else {
        tokens
    };
    (tokens, tokens_cov)
}

/// The vote cells of every (model, k > 1), with the per-problem capped (p', alpha'), and the
/// (model, k) of each.
fn vote_cells_of(
    ms: &[ModelInputs],
    ks: &[u32],
    difficulty: &[f64],
    budget: f64,
    rule: Option<VoteRule>,
) -> (Vec<VoteCell>, Vec<(usize, u32)>) {
    let mut cells = Vec::new();
    let mut index = Vec::new();
    for (mi, m) in ms.iter().enumerate() {
        // Several attractors or answer extraction: every problem's capped shares, drawn
        // literally by the mode sampler; the canonical model keeps its own cells.
        let modes = mode_answers(m, difficulty, budget);
        let capped: Vec<(f64, f64)> = match &modes {
            Some((p_capped, _)) => p_capped.iter().map(|&p| (p, 0.0)).collect(),
            None => m
                .rates
                .iter()
                .zip(difficulty)
                .map(|(&p, &d)| capped_vote_rates(p, m.attractor, &m.lengths, d, budget))
                .collect(),
        };
        for &k in ks.iter().filter(|&&k| k > 1) {
            index.push((mi, k));
            cells.push(VoteCell {
                k,
                p: capped.iter().map(|c| c.0).collect(),
                alpha: capped.iter().map(|c| c.1).collect(),
                rule: rule.unwrap_or(m.rule),
                modes: modes.as_ref().map(|(_, answers)| answers.clone()),
            });
        }
    }
    (cells, index)
}

/// The best-of-k cells of every (model with a verifier, k > 1), on the capped correct rates (a
/// trace cut by the cap has no answer: to the verifier it is a wrong sample), and the (model, k)
/// of each.
fn best_cells_of(
    ms: &[ModelInputs],
    ks: &[u32],
    difficulty: &[f64],
    budget: f64,
    rule: Option<VoteRule>,
) -> (Vec<SelectionCell>, Vec<(usize, u32)>) {
    let mut cells = Vec::new();
    let mut index = Vec::new();
    for (mi, m) in ms.iter().enumerate() {
        let Some(verifier) = m.verifier else { continue };
        // Several attractors or extraction: the verifier's samples are drawn as answers, on
        // every problem's capped shares (the same as the vote's).
        let modes = mode_answers(m, difficulty, budget);
        let capped: Vec<f64> = match &modes {
            Some((p_capped, _)) => p_capped.clone(),
            None => m
                .rates
                .iter()
                .zip(difficulty)
                .map(|(&p, &d)| capped_vote_rates(p, m.attractor, &m.lengths, d, budget).0)
                .collect(),
        };
        for &k in ks.iter().filter(|&&k| k > 1) {
            index.push((mi, k));
            cells.push(SelectionCell {
                p: capped.clone(),
                k,
                attractor: m.attractor,
                rule: rule.unwrap_or(m.rule),
                verifier: Some(verifier),
                grader: m.grading.grader,
                modes: modes.as_ref().map(|(_, answers)| answers.clone()),
                run_sd: 0.0,
            });
        }
    }
    (cells, index)
}

/// The exact per-problem (maj@k, its complement) of model `m` under the cap `budget`.
fn maj_exact(
    m: &ModelInputs,
    difficulty: &[f64],
    k: u32,
    vote_rule: VoteRule,
    budget: f64,
) -> Vec<(f64, f64)> {
    if has_modes(m) {
        maj_at_k_capped_modes(
            &m.rates,
            difficulty,
            &m.attractors,
            Extraction {
                unparsed: m.grading.unparsed,
                split: m.split,
            },
            &m.lengths,
            k,
            vote_rule,
            budget,
        )
    } else {
        maj_at_k_capped_with_loss(
            &m.rates,
            difficulty,
            m.attractor,
            &m.lengths,
            k,
            vote_rule,
            budget,
        )
    }
}

/// One strategy's row: accuracy, tokens per sample and tokens per correct answer with their
/// SEs, from its accuracy inputs (exact per problem, simulated mean, draws per problem,
/// covariance with tokens).
#[allow(clippy::too_many_arguments)]
fn strategy(
    m: &ModelInputs,
    k: u32,
    best_of_k: bool,
    (pairs, sim, draws, cov): AccuracyInputs,
    tokens: Estimate,
    big_n: f64,
    vote_rule: VoteRule,
    price_per_mtok: Option<f64>,
) -> Strategy {
    let tokens_exact = tokens.exact;
    let (per_problem, miss): (Vec<f64>, Vec<f64>) = pairs.into_iter().unzip();
    let acc_se = bernoulli_mean_se_with(&per_problem, &miss, draws);
    let accuracy =
        Estimate::new(mean(&per_problem), sim, acc_se).counting(1.0 / (draws as f64 * big_n));
    let kf = f64::from(k);
    let ratio = |t: f64, a: f64| kf * t / a;
    let r = ratio(tokens_exact, accuracy.exact);
    let tpc_se = tokens_per_correct_se(r, tokens_exact, tokens.se, accuracy.exact, acc_se, cov);
    let mut tokens_per_correct = Estimate::new(r, ratio(tokens.sim, accuracy.sim), tpc_se);
    // The ratio is tested only where its delta-method SE means something: the accuracy
    // (a count of correct answers) is then known to a few percent. Otherwise the count
    // is checked in the accuracy row, with Bernstein's bound, and the ratio reported.
    let meaningful = accuracy.exact > 0.0 && acc_se <= RATIO_MAX_RELATIVE_SE * accuracy.exact;
    if !meaningful {
        tokens_per_correct = tokens_per_correct.untested(Untested::RatioOfRareCount);
    }
    Strategy {
        model: m.name.clone(),
        k,
        vote_rule,
        accuracy,
        tokens_per_sample: tokens,
        tokens_per_correct,
        cost_per_correct: price_per_mtok.map(|p| tokens_per_correct.exact * p / 1e6),
        cost_per_correct_sim: price_per_mtok.map(|p| tokens_per_correct.sim * p / 1e6),
        frontier: false,
        best_of_k,
    }
}

/// True when a model sets several attractors, `unparsed` or `split` (its votes go through the
/// mode recurrence and sampler).
fn has_modes(m: &ModelInputs) -> bool {
    m.attractors.len() > 1 || m.grading.unparsed != 0.0 || m.split != 0.0
}

/// The capped per-problem correct rates and mode answers of a model with several attractors,
/// `unparsed` or `split` ([`capped_mode_shares`]); `None` for the canonical model.
fn mode_answers(
    m: &ModelInputs,
    difficulty: &[f64],
    budget: f64,
) -> Option<(Vec<f64>, ModeAnswers)> {
    if !has_modes(m) {
        return None;
    }
    let (p_capped, shares): (Vec<f64>, Vec<Vec<f64>>) = m
        .rates
        .iter()
        .zip(difficulty)
        .map(|(&p, &d)| capped_mode_shares(p, &m.attractors, &m.lengths, d, budget))
        .unzip();
    Some((
        p_capped,
        ModeAnswers {
            attractors: m.attractors.clone(),
            extraction: Extraction {
                unparsed: m.grading.unparsed,
                split: m.split,
            },
            per_problem: Some(shares),
        },
    ))
}

/// Marks the Pareto frontier of strategies sorted by cost (then by accuracy, best first): a
/// strategy is on it when every cheaper-or-equal strategy is strictly less accurate.
fn mark_frontier(sorted: &mut [Strategy]) {
    let mut best = f64::NEG_INFINITY;
    for s in sorted.iter_mut() {
        let finite = s.tokens_per_correct.exact.is_finite();
        s.frontier = finite && s.accuracy.exact > best;
        if finite {
            best = best.max(s.accuracy.exact);
        }
    }
}

impl KindRun for CostSpec {
    fn draw_cost_ns(&self) -> u64 {
        25
    }

    fn run(
        &self,
        scenario: &Scenario,
        name: &str,
        key: u64,
        progress: Progress,
    ) -> ExperimentResult {
        ExperimentResult::Cost(cost(
            scenario,
            name,
            key,
            &self.models,
            &self.k,
            self.cap,
            self.price_per_mtok,
            self.votes,
            self.traces,
            self.vote_rule,
            progress,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::budget::tests::small;

    #[test]
    fn cost_simulation_agrees_with_exact_and_marks_the_frontier() {
        let s = small();
        let r = cost(
            &s,
            "cost",
            8,
            &[0, 1],
            &[1, 4, 9],
            Some(20_000.0),
            Some(2.0),
            20_000,
            20_000,
            None,
            &|_| {},
        );
        assert_eq!(r.strategies.len(), 6);
        assert_eq!(r.checks().len(), 2 + 6 * 2);
        for c in r.checks() {
            assert!(
                c.passed(),
                "{} {}: z = {}",
                c.quantity,
                c.cell,
                c.estimate.z
            );
        }
        assert!(r
            .strategies
            .windows(2)
            .all(|w| w[0].tokens_per_correct.exact <= w[1].tokens_per_correct.exact));
        // The cheapest strategy is always on the frontier; the frontier's accuracy rises.
        assert!(r.strategies[0].frontier);
        let front: Vec<f64> = r
            .strategies
            .iter()
            .filter(|s| s.frontier)
            .map(|s| s.accuracy.exact)
            .collect();
        assert!(front.windows(2).all(|w| w[1] > w[0]));
        let st = &r.strategies[0];
        let money = st.cost_per_correct.expect("price given");
        assert!((money - st.tokens_per_correct.exact * 2.0 / 1e6).abs() < 1e-15);
    }
}
