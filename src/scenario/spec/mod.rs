//! Resolved scenario data: what [`super::resolve`] builds and every later layer reads.
//!
//! Every experiment's parameters live here, the plan's included, with every default filled in
//! and the seed set, so nothing downstream patches a spec. This module holds data and the
//! arithmetic of its size ([`KindSpec::work`], in `kinds`); it may depend on [`crate::model`] and on
//! [`super::kinds`] (for [`ExperimentKind`](super::kinds::ExperimentKind)), never on `exact`, `sim`, `experiments`, `report` or
//! `cli`.
use serde::Serialize;

mod kinds;

use crate::model::{Benchmark, Grader, Model, VoteRule};
pub use kinds::{KindSpec, Work};

/// A validated scenario: everything needed to run its experiments.
#[derive(Debug, Clone, Serialize)]
pub struct Scenario {
    /// Short name: the named scenario or the file stem.
    pub name: String,
    /// Where it was read from (a path, or `<embedded NAME>`).
    pub source: String,
    /// Human title for figures and reports.
    pub title: String,
    /// Master seed of every random stream.
    pub seed: u64,
    /// The benchmark.
    pub benchmark: Benchmark,
    /// The models, in file order.
    pub models: Vec<Model>,
    /// The experiments, in file order.
    pub experiments: Vec<Experiment>,
}

/// One experiment of a scenario.
#[derive(Debug, Clone, Serialize)]
pub struct Experiment {
    /// Unique name, used in file names (defaults to the kind, numbered when repeated).
    pub name: String,
    /// What to run.
    pub spec: ExperimentSpec,
}

/// The parameters of an experiment, by kind. Model references are indices into
/// [`Scenario::models`].
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum ExperimentSpec {
    /// pass@k, pass^k and maj@k against k.
    Curves(CurvesSpec),
    /// maj@k for a list of attractor shares (or factors on the attractor vector, or `split`
    /// shares: `axis`).
    AttractorSweep(AttractorSweepSpec),
    /// Seed variance of the pass@1 score.
    SeedVariance(SeedVarianceSpec),
    /// Seed SD of maj@k against averaged pass@1.
    VoteSpread(VoteSpreadSpec),
    /// Model b against model a on independent seeds.
    HeadToHead(HeadToHeadSpec),
    /// Accuracy against a token budget.
    Budget(BudgetSpec),
    /// Cost per correct answer of (model, k) strategies.
    Cost(CostSpec),
    /// How many problems and samples tell model A (`model`) from B = A + gap logits. The plan's
    /// `mu` is the benchmark's mu plus A's shift; its seed is the scenario's.
    Plan(PlanExperimentSpec),
    /// Public-minus-fresh gap of a contaminated model and the smallest fresh set detecting it.
    Contamination(ContaminationSpec),
    /// A pairwise judge comparing model b's answers with model a's; the answer lengths come from
    /// the models' trace lengths.
    Judge(JudgeSpec),
    /// Confidence-filtered maj@k against the kept share: every filter of every model at every k.
    Confidence(ConfidenceSpec),
}

/// pass@k, pass^k and maj@k against k.
#[derive(Debug, Clone, Serialize)]
pub struct CurvesSpec {
    pub models: Vec<usize>,
    pub k: Vec<u32>,
    /// The n of each n@k series (empty: none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub submissions: Vec<u32>,
    pub votes: u64,
    pub vote_rule: Option<VoteRule>,
}

/// maj@k for a list of attractor shares (or factors on the attractor vector, or `split`
/// shares: `axis`).
#[derive(Debug, Clone, Serialize)]
pub struct AttractorSweepSpec {
    pub model: usize,
    /// The swept values.
    pub attractors: Vec<f64>,
    /// What each value sets.
    #[serde(skip_serializing_if = "SweepAxis::is_first_share")]
    pub axis: SweepAxis,
    pub k: Vec<u32>,
    pub votes: u64,
    pub vote_rule: Option<VoteRule>,
}

/// Seed variance of the pass@1 score.
#[derive(Debug, Clone, Serialize)]
pub struct SeedVarianceSpec {
    pub model: usize,
    pub n: Vec<u32>,
    pub reruns: u64,
}

/// Seed SD of maj@k against averaged pass@1.
#[derive(Debug, Clone, Serialize)]
pub struct VoteSpreadSpec {
    pub model: usize,
    pub k: Vec<u32>,
    pub reruns: u64,
    pub vote_rule: Option<VoteRule>,
}

/// Model b against model a on independent seeds.
#[derive(Debug, Clone, Serialize)]
pub struct HeadToHeadSpec {
    pub a: usize,
    pub b: usize,
    pub n: Vec<u32>,
    pub reruns: u64,
}

/// Accuracy against a token budget.
#[derive(Debug, Clone, Serialize)]
pub struct BudgetSpec {
    pub models: Vec<usize>,
    pub budgets: Vec<f64>,
    pub traces: u64,
}

/// Cost per correct answer of (model, k) strategies.
#[derive(Debug, Clone, Serialize)]
pub struct CostSpec {
    pub models: Vec<usize>,
    pub k: Vec<u32>,
    pub cap: Option<f64>,
    pub price_per_mtok: Option<f64>,
    pub votes: u64,
    pub traces: u64,
    pub vote_rule: Option<VoteRule>,
}

/// How many problems and samples tell model A (`model`) from B = A + gap logits. The plan's
/// `mu` is the benchmark's mu plus A's shift; its seed is the scenario's.
#[derive(Debug, Clone, Serialize)]
pub struct PlanExperimentSpec {
    pub model: usize,
    pub plan: Box<Plan>,
}

/// Public-minus-fresh gap of a contaminated model and the smallest fresh set detecting it.
#[derive(Debug, Clone, Serialize)]
pub struct ContaminationSpec {
    /// The contaminated model.
    pub model: usize,
    /// Samples per problem.
    pub n: u32,
    /// Fresh set sizes of the power curve.
    pub fresh: Vec<u32>,
    /// Contaminated shares of the power curve and the plan.
    pub shares: Vec<f64>,
    /// False-alarm rate of the test.
    pub alpha: f64,
    /// Power the smallest fresh set must reach.
    pub target_power: f64,
    /// Largest fresh set the plan scans.
    pub max_fresh: u32,
    /// Simulated reruns per cell.
    pub reruns: u64,
}

/// A pairwise judge comparing model b's answers with model a's; the answer lengths come from
/// the models' trace lengths.
#[derive(Debug, Clone, Serialize)]
pub struct JudgeSpec {
    /// Model A.
    pub a: usize,
    /// Model B.
    pub b: usize,
    /// The model whose family the judge belongs to (a or b), if either.
    pub judge_family: Option<usize>,
    /// Mean quality difference B - A over questions (logits).
    pub gap: f64,
    /// SD of the quality difference over questions (logits).
    pub spread: f64,
    /// The judge's logit for the answer in position 1.
    pub position_bias: f64,
    /// The judge's logit per unit of log-length difference (position 1 minus 2).
    pub verbosity: f64,
    /// The judge's logit for its own family's answer.
    pub self_preference: f64,
    /// Questions per rerun N.
    pub comparisons: u32,
    /// Simulated reruns of N questions.
    pub reruns: u64,
}

/// Confidence-filtered maj@k against the kept share: every filter of every model at every k.
#[derive(Debug, Clone, Serialize)]
pub struct ConfidenceSpec {
    /// Models, by index (each with a confidence).
    pub models: Vec<usize>,
    /// Samples per vote before filtering.
    pub k: Vec<u32>,
    /// Kept shares of the top-share filter.
    pub shares: Vec<f64>,
    /// Confidence thresholds of the threshold filter.
    pub thresholds: Vec<f64>,
    /// Simulated votes per problem per (model, k).
    pub votes: u64,
    /// Vote rule override.
    pub vote_rule: Option<VoteRule>,
}

/// Draws per simulated question of a `judge` experiment: 3 normals (quality, two lengths) and 11
/// uniforms or coins (every protocol's judgments and orders, the decomposition's judgments).
pub const JUDGE_DRAWS_PER_QUESTION: u64 = 14;

/// What the values of an `attractor-sweep` set on its model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SweepAxis {
    /// Share j (0-based) of the attractor vector (appended when j is its length).
    Share(usize),
    /// A factor on every attractor share.
    Scale,
    /// The model's `split` share.
    Split,
    /// The false-positive rate of the model's grader (its `fnr` kept, 0 without a grader).
    GraderFpr,
}

impl SweepAxis {
    fn is_first_share(&self) -> bool {
        *self == SweepAxis::Share(0)
    }

    /// The (attractor vector, split) of a model with `vector` and `split` at swept value `x`.
    /// With one share and `Share(0)` this is `([x], split)`: the one-attractor sweep.
    pub fn apply(self, vector: &[f64], split: f64, x: f64) -> (Vec<f64>, f64) {
        match self {
            SweepAxis::Share(j) => {
                let mut v = vector.to_vec();
                if j < v.len() {
                    v[j] = x;
                } else {
                    v.push(x);
                }
                (v, split)
            }
            SweepAxis::Scale => (vector.iter().map(|a| a * x).collect(), split),
            SweepAxis::Split => (vector.to_vec(), x),
            SweepAxis::GraderFpr => (vector.to_vec(), split),
        }
    }

    /// The name used in tables and figure legends for a swept value.
    pub fn label(self) -> String {
        match self {
            SweepAxis::Share(j) => format!("attractor {}", j + 1),
            SweepAxis::Scale => "attractor scale".into(),
            SweepAxis::Split => "split".into(),
            SweepAxis::GraderFpr => "grader fpr".into(),
        }
    }
}

/// The study design a cell describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Design {
    /// The same N problems at quantile placement for both models, independent seeds.
    Fixed,
    /// Problems drawn from the population; both models on the same draws.
    PopulationPaired,
    /// Problems drawn from the population; each model on its own draws.
    PopulationUnpaired,
}

impl Design {
    /// All designs, in report order.
    pub const ALL: [Design; 3] = [
        Design::Fixed,
        Design::PopulationPaired,
        Design::PopulationUnpaired,
    ];

    /// The name used in tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Design::Fixed => "fixed",
            Design::PopulationPaired => "population-paired",
            Design::PopulationUnpaired => "population-unpaired",
        }
    }
}

/// The default reruns of a population-design check (at most the plan's `reruns`). The checks
/// there are of the mean and SD of B - A, whose exact values are integrated to 1e-12, so a
/// check looks for a wrong formula, not for rounding: R reruns see a bias of
/// (4.5 + 0.84) / sqrt(R) of the cell's SE in the mean (a tenth at R = 2,852) and of about
/// 5.34 / sqrt(2 R) in the SD (6.9% at 3,000) with 80% power at |z| <= 4.5. A population
/// rerun redraws every problem (a normal, e^x and a literal count or vote per problem and
/// model, 15 to 40 times the cost of a fixed-design count), so this size, not the fixed
/// design's 20,000, is what the default plan's time is made of (docs/plan.md).
pub const DEFAULT_POPULATION_RERUNS: u64 = 3_000;

/// The score being planned for.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PlanMetric {
    /// pass@1 averaged over the n samples of each problem.
    Pass1,
    /// maj@k: the share of problems whose majority vote of k samples is correct (one vote per
    /// problem per rerun); the grid's `samples` are the k values.
    Maj {
        /// Share of wrong answers on the repeated attractor (both models).
        attractor: f64,
        /// How ties at the top are scored.
        rule: VoteRule,
    },
}

impl PlanMetric {
    /// The name used in tables: `pass@1` or `maj@k`.
    pub fn label(self) -> &'static str {
        match self {
            PlanMetric::Pass1 => "pass@1",
            PlanMetric::Maj { .. } => "maj@k",
        }
    }

    /// Trials t per problem per rerun for `samples` (n or k): n for pass@1, 1 vote for maj@k.
    pub fn trials(self, samples: u32) -> u32 {
        match self {
            PlanMetric::Pass1 => samples,
            PlanMetric::Maj { .. } => 1,
        }
    }
}

/// Which (gap, N, n) cells of a design to simulate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum CheckCells {
    /// Every cell.
    All,
    /// No cell.
    None,
    /// This many cells spread evenly over the grid (always the first and the last).
    Count(usize),
}

/// The inputs of a plan.
#[derive(Debug, Clone, Serialize)]
pub struct PlanSpec {
    /// Logit mean of model A's problem population (B's is mu + gap).
    pub mu: f64,
    /// Logit SD of the problem population.
    pub sigma: f64,
    /// Logit shifts of B over A.
    pub gaps: Vec<f64>,
    /// Candidate N.
    pub problems: Vec<usize>,
    /// Candidate n (pass@1: samples per problem) or k (maj@k: samples per vote).
    pub samples: Vec<u32>,
    /// Largest acceptable P(B <= A).
    pub target_loss_or_tie: f64,
    /// Largest acceptable 95% CI half-width of the difference (a fraction: 0.02 = 2 points).
    pub target_halfwidth: f64,
    /// Simulated paired reruns per checked cell and design.
    pub reruns: u64,
    /// Which cells to simulate in the fixed design.
    pub check_cells: CheckCells,
    /// Master seed of the simulation.
    pub seed: u64,
    /// SD tau of B's per-problem disagreement with A, in logits: B's logit on a problem is A's
    /// + gap + tau e with e ~ N(0, 1) (0: B is A shifted by the gap; left out of the JSON then).
    #[serde(skip_serializing_if = "crate::model::is_zero")]
    pub shift_sd: f64,
    /// A power besides 80% for the minimum detectable gap, when the user asked for one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_power: Option<f64>,
    /// Model A's own per-problem deviation (the scenario model's `shift_sd`), which B, a model
    /// of the same kind, shares in size with offsets of its own unless the plan block gives B's
    /// (then in [`ModelShiftSd::tau_b`], and `shift_sd` here stays 0). None without one (left
    /// out of the JSON then).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_shift_sd: Option<ModelShiftSd>,
}

/// The `shift_sd` of a plan's model A: A's logit on a problem is mu + sigma z + tau e_A and B's
/// mu + gap + sigma z + tau_B e_B, with e_A, e_B independent standard normals; B is a model of
/// the same kind (tau_B = tau) unless the plan block gives B's own `shift_sd`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelShiftSd {
    /// Model A's name: it fixes A's offsets e_A on a fixed benchmark
    /// ([`crate::model::problem_deviations`]), as in every other experiment.
    pub model: String,
    /// tau (logits), > 0.
    pub tau: f64,
    /// B's own deviation SD tau_B when the plan block's `shift_sd` gives one (0 allowed: a B
    /// without per-problem deviation); None: tau_B = tau (left out of the JSON then).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tau_b: Option<f64>,
}

impl ModelShiftSd {
    /// tau_B: the plan block's `shift_sd` when given, else A's tau.
    pub fn b(&self) -> f64 {
        self.tau_b.unwrap_or(self.tau)
    }
}

/// A full plan: the grid and targets of a [`PlanSpec`], the score, and which cells to simulate
/// in the population designs. It dereferences to its [`PlanSpec`], so `plan.mu` reads the grid.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    /// The population, grid, targets and fixed-design checks.
    #[serde(flatten)]
    pub spec: PlanSpec,
    /// The score.
    pub metric: PlanMetric,
    /// Which cells to simulate in each population design (problems redrawn every rerun, about
    /// ten times the cost of a fixed-design rerun).
    pub check_population: CheckCells,
    /// Simulated paired reruns per checked cell of the population designs (`reruns` is the
    /// fixed design's): at most [`DEFAULT_POPULATION_RERUNS`] unless the scenario asks for
    /// more. Not serialised: each simulated cell records its own reruns.
    #[serde(skip)]
    pub population_reruns: u64,
    /// How both models' answers are extracted, voted and graded (model A's keys; B is a model of
    /// the same kind). The default (the canonical model) is left out of the JSON.
    #[serde(flatten)]
    pub answers: PlanAnswers,
}

/// Model A's answer keys that change what a plan's harness sees (B shares them): several
/// attractor shares and `split` (maj@k only: pass@1 does not see them), `unparsed` and a noisy
/// grader (both metrics). The default is the canonical model, whose plans are unchanged.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct PlanAnswers {
    /// Every attractor share when the model lists several (maj@k's vote); empty otherwise (the
    /// metric's one share).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub attractors: Vec<f64>,
    /// Share of samples with no extractable answer.
    #[serde(skip_serializing_if = "crate::model::is_zero")]
    pub unparsed: f64,
    /// Share of parsed correct samples in an alternate form (a separate answer in a vote).
    #[serde(skip_serializing_if = "crate::model::is_zero")]
    pub split: f64,
    /// The noisy grader, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grader: Option<Grader>,
}

impl PlanAnswers {
    /// Model `m`'s answer keys.
    pub fn of(m: &Model) -> PlanAnswers {
        PlanAnswers {
            attractors: if m.attractors.len() > 1 {
                m.attractors.clone()
            } else {
                Vec::new()
            },
            unparsed: m.unparsed,
            split: m.split,
            grader: m.grader,
        }
    }

    /// True for the canonical model (one attractor share, every answer parsed in one form and
    /// graded perfectly): the plan then takes its original code paths, bit for bit.
    pub fn is_canonical(&self) -> bool {
        *self == PlanAnswers::default()
    }

    /// True when the harness's numbers differ from the true ones under `metric`: pass@1 sees
    /// `unparsed` and the grader; maj@k sees every key.
    pub fn changes(&self, metric: PlanMetric) -> bool {
        match metric {
            PlanMetric::Pass1 => self.unparsed != 0.0 || self.grader.is_some(),
            PlanMetric::Maj { .. } => !self.is_canonical(),
        }
    }
}

impl std::ops::Deref for Plan {
    type Target = PlanSpec;

    fn deref(&self) -> &PlanSpec {
        &self.spec
    }
}

impl PlanSpec {
    /// (tau_A, tau_B): the per-problem deviation SDs of A and B. (tau, tau_B) with a model's
    /// own `shift_sd` ([`ModelShiftSd::b`]); (0, `shift_sd`) otherwise (B's disagreement with a
    /// model A that has none).
    pub fn deviation_sds(&self) -> (f64, f64) {
        match &self.model_shift_sd {
            Some(m) => (m.tau, m.b()),
            None => (0.0, self.shift_sd),
        }
    }

    /// The name that fixes A's offsets on a fixed benchmark (empty without a model `shift_sd`,
    /// where A has none).
    pub fn deviation_name(&self) -> &str {
        self.model_shift_sd
            .as_ref()
            .map_or("", |m| m.model.as_str())
    }

    /// The plan of pass@1 averaged over n samples, with no population-design simulation.
    pub fn pass1(self) -> Plan {
        Plan {
            spec: self,
            metric: PlanMetric::Pass1,
            check_population: CheckCells::None,
            population_reruns: 0,
            answers: PlanAnswers::default(),
        }
    }
}

impl Plan {
    /// Simulated paired reruns of a checked cell of `design`: `reruns` for the fixed design,
    /// `population_reruns` for the population designs.
    pub fn reruns_of(&self, design: Design) -> u64 {
        match design {
            Design::Fixed => self.reruns,
            _ => self.population_reruns,
        }
    }

    /// The (gap, N, n) cells the simulation checks in `design`, in grid order.
    pub fn checked_cells(&self, design: Design) -> Vec<(f64, usize, u32)> {
        if self.reruns_of(design) == 0 {
            return Vec::new();
        }
        let mut grid = Vec::new();
        for &gap in &self.gaps {
            for &big_n in &self.problems {
                for &n in &self.samples {
                    grid.push((gap, big_n, n));
                }
            }
        }
        let which = match design {
            Design::Fixed => self.check_cells,
            _ => self.check_population,
        };
        checked(grid.len(), which)
            .into_iter()
            .map(|i| grid[i])
            .collect()
    }

    /// The (N, n) whose minimum detectable gap (at 80% power) the simulation checks in
    /// `design`: those of the cells checked at the first gap.
    pub fn detectable_checked(&self, design: Design) -> Vec<(usize, u32)> {
        let first = self.gaps.first().copied();
        self.checked_cells(design)
            .into_iter()
            .filter(|&(gap, _, _)| Some(gap) == first)
            .map(|(_, big_n, n)| (big_n, n))
            .collect()
    }

    /// The simulation's progress units: every checked cell's and checked minimum detectable
    /// gap's reruns, each weighted by [`Plan::rerun_cost`], so that the progress bar moves at
    /// one speed through cheap and costly cells.
    pub fn planned_cost(&self) -> u64 {
        Design::ALL
            .iter()
            .flat_map(|&d| {
                self.checked_cells(d)
                    .into_iter()
                    .map(|(_, big_n, n)| (big_n, n))
                    .chain(self.detectable_checked(d))
                    .map(move |(big_n, n)| {
                        self.rerun_cost(d, big_n, n)
                            .saturating_mul(self.reruns_of(d))
                    })
            })
            .fold(0u64, u64::saturating_add)
    }

    /// The measured time of one paired rerun of a cell on one thread, in nanoseconds (about
    /// ±30%; docs/performance.md, "Progress weights"): per problem and model, a fixed-design
    /// count from its alias table costs about 1.5 ns (the pair is one draw of their difference)
    /// and a vote from its joint table 12 ns; a
    /// population draw (a normal, e^x and the count or vote drawn literally) 48 ns plus 1.1 ns
    /// a sample; a graded count drawn stage by stage 40 ns plus 2 ns a sample; a vote drawn
    /// sample by sample 14 ns a sample.
    pub fn rerun_cost(&self, design: Design, big_n: usize, n: u32) -> u64 {
        let n = f64::from(n);
        let graded = self.answers.changes(self.metric);
        let per_draw = match (design, self.metric, graded) {
            (Design::Fixed, PlanMetric::Pass1, false) => 1.5,
            (Design::Fixed, PlanMetric::Maj { .. }, false) => 12.0,
            (Design::Fixed, PlanMetric::Pass1, true) => 40.0 + 2.0 * n,
            (Design::Fixed, PlanMetric::Maj { .. }, true) => 20.0 + 14.0 * n,
            (_, PlanMetric::Pass1, false) => 48.0 + 1.1 * n,
            (_, PlanMetric::Maj { .. }, false) => 55.0 + 1.1 * n,
            (_, PlanMetric::Pass1, true) => 60.0 + 2.0 * n,
            (_, PlanMetric::Maj { .. }, true) => 100.0 + 14.0 * n,
        };
        (2.0 * big_n as f64 * per_draw).ceil() as u64
    }

    /// Per-problem draws the simulation will make: one count or vote per problem per model per
    /// rerun, over every checked cell and design. Bounded by the caller (the scenario loader and
    /// the CLI refuse more than [`super::MAX_TOTAL_VOTES`]).
    pub fn simulated_draws(&self) -> u64 {
        Design::ALL
            .iter()
            .flat_map(|&d| {
                self.checked_cells(d)
                    .into_iter()
                    .map(|(_, big_n, _)| big_n)
                    .chain(
                        self.detectable_checked(d)
                            .into_iter()
                            .map(|(big_n, _)| big_n),
                    )
                    .map(move |big_n| (2 * big_n as u64).saturating_mul(self.reruns_of(d)))
            })
            .fold(0u64, u64::saturating_add)
    }
}

/// Indices (into the grid of `count` cells) to simulate.
pub fn checked(count: usize, which: CheckCells) -> Vec<usize> {
    match which {
        CheckCells::All => (0..count).collect(),
        CheckCells::None => Vec::new(),
        CheckCells::Count(k) if k >= count => (0..count).collect(),
        CheckCells::Count(0) => Vec::new(),
        CheckCells::Count(1) => vec![0],
        CheckCells::Count(k) => {
            let mut v: Vec<usize> = (0..k)
                .map(|j| ((j * (count - 1)) as f64 / (k - 1) as f64).round() as usize)
                .collect();
            v.dedup();
            v
        }
    }
}
