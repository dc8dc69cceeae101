//! Model parameters: immutable structs built from a validated scenario. No randomness, no I/O.
//!
//! A benchmark is a list of per-problem solve rates p_i; a model shifts them on the logit scale
//! (or lists its own), spreads its wrong answers between one repeated attractor and one-offs,
//! and draws lognormal trace lengths.
use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, Normal};

/// How a majority vote over k sampled answers is scored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum VoteRule {
    /// Uniform over the answers tied at the top (equals "first answer seen" and "partial credit"
    /// under exchangeable samples).
    #[default]
    Random,
    /// A tie at the top is not a win.
    Strict,
    /// The correct answer needs more than half of the k votes.
    Absolute,
}

impl VoteRule {
    /// The name used in scenario files and tables.
    pub fn as_str(self) -> &'static str {
        match self {
            VoteRule::Random => "random",
            VoteRule::Strict => "strict",
            VoteRule::Absolute => "absolute",
        }
    }
}

/// Where the N problems of a logit-normal benchmark sit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Placement {
    /// p_i = expit(mu + sigma * Phi^-1((i - 1/2) / N)): the fixed benchmark.
    #[default]
    Quantiles,
    /// z_i ~ N(0, 1) drawn afresh for every rerun: the problems are a sample of a population.
    Random,
}

/// The source of a benchmark's per-problem solve rates.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Difficulty {
    /// Logit-normal spread of rates.
    LogitNormal {
        mu: f64,
        sigma: f64,
        placement: Placement,
    },
    /// An explicit list of rates (0 and 1 allowed).
    Rates { rates: Vec<f64> },
}

/// A benchmark: N problems and where their rates come from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Benchmark {
    /// Number of problems N.
    pub problems: usize,
    /// Source of the rates.
    pub difficulty: Difficulty,
    /// Share of the problems memorised by the contaminated models (0 = none).
    #[serde(skip_serializing_if = "is_zero")]
    pub contaminated: f64,
    /// Indices of the models that saw the memorised problems.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub contaminated_models: Vec<usize>,
}

/// Whether a serialised number is 0 (serde's `skip_serializing_if` for keys whose 0 is the
/// default and is left out of the JSON), for any number type.
pub(crate) fn is_zero<T: Default + PartialEq>(x: &T) -> bool {
    *x == T::default()
}

impl Benchmark {
    /// The fixed benchmark's rates: quantile placement for a logit-normal spread (also the
    /// population's quantiles when placement is `random`), or the explicit list. Time: O(N).
    pub fn rates(&self) -> Vec<f64> {
        match &self.difficulty {
            Difficulty::LogitNormal { mu, sigma, .. } => quantile_rates(*mu, *sigma, self.problems),
            Difficulty::Rates { rates } => rates.clone(),
        }
    }

    /// Which problems the contaminated models memorised: M = round(c N) of the N problems
    /// (c = `contaminated`; none when c = 0), the same M for every contaminated model (the
    /// leaked problems), chosen in a pseudo-random order that depends only on the problem's
    /// index. With quantile placement the problems run from hardest to easiest, so the
    /// memorised ones spread over the whole range of difficulty, as a leak that does not depend
    /// on difficulty would. The choice does not depend on the seed, the thread count or the
    /// models. Time: O(N log N).
    pub fn memorised(&self) -> Vec<bool> {
        let count = (self.contaminated * self.problems as f64).round() as usize;
        let mut order: Vec<usize> = (0..self.problems).collect();
        order.sort_by_key(|&i| (mix64(CONTAMINATION_DOMAIN ^ mix64(i as u64)), i));
        let mut memorised = vec![false; self.problems];
        for &i in order.iter().take(count) {
            memorised[i] = true;
        }
        memorised
    }

    /// Difficulty d_i = 1 - p_i of each problem, from the benchmark's own rates.
    pub fn difficulty(&self) -> Vec<f64> {
        self.rates().iter().map(|p| 1.0 - p).collect()
    }

    /// The placement, when the rates are logit-normal.
    pub fn placement(&self) -> Option<Placement> {
        match self.difficulty {
            Difficulty::LogitNormal { placement, .. } => Some(placement),
            Difficulty::Rates { .. } => None,
        }
    }
}

/// p_i = expit(mu + sigma * Phi^-1((i - 1/2) / N)) for i = 1..N. Time: O(N).
pub fn quantile_rates(mu: f64, sigma: f64, problems: usize) -> Vec<f64> {
    let std_normal = Normal::standard();
    (1..=problems)
        .map(|i| {
            let z = std_normal.inverse_cdf((i as f64 - 0.5) / problems as f64);
            expit(mu + sigma * z)
        })
        .collect()
}

/// The logistic function 1 / (1 + e^-x).
pub fn expit(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

/// ln(p / (1 - p)).
pub fn logit(p: f64) -> f64 {
    (p / (1.0 - p)).ln()
}

/// p' = expit(logit(p) + s); rates of exactly 0 or 1 stay where they are.
pub fn shift_rate(p: f64, shift: f64) -> f64 {
    if p <= 0.0 || p >= 1.0 {
        p
    } else {
        expit(logit(p) + shift)
    }
}

/// Trace-length parameters: lognormal lengths with log-sd `sigma`; the median correct trace on
/// a problem of difficulty d is `median_tokens * (1 + hard_growth * d)`, wrong traces are
/// `wrong_factor` times longer.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TraceLengths {
    /// L0: median correct-trace length on the easiest problem, in tokens.
    pub median_tokens: f64,
    /// g: growth of the median with difficulty.
    pub hard_growth: f64,
    /// w: wrong traces are this many times longer.
    pub wrong_factor: f64,
    /// Log-sd of the lognormal.
    pub sigma: f64,
}

impl TraceLengths {
    /// Median correct-trace length at difficulty d, in tokens.
    pub fn correct_median(&self, difficulty: f64) -> f64 {
        self.median_tokens * (1.0 + self.hard_growth * difficulty)
    }

    /// Median wrong-trace length at difficulty d, in tokens.
    pub fn wrong_median(&self, difficulty: f64) -> f64 {
        self.wrong_factor * self.correct_median(difficulty)
    }
}

/// How a model's per-problem rates are obtained from the benchmark.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RateSource {
    /// A logit shift applied to every benchmark rate.
    Shift(f64),
    /// Explicit per-problem rates.
    Rates(Vec<f64>),
}

/// A model: its rates on the benchmark, its wrong-answer structure and its trace lengths.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Model {
    /// Name used in experiments and tables.
    pub name: String,
    /// Logit shift or explicit rates.
    pub source: RateSource,
    /// Share a of the wrong mass that lands on one repeated attractor answer (the first share
    /// when the scenario lists several: see [`Model::attractors`]).
    pub attractor: f64,
    /// Default vote rule for this model's majority votes.
    pub vote_rule: VoteRule,
    /// Trace lengths, when the scenario gives them.
    pub tokens: Option<TraceLengths>,
    /// Per-run logit SD omega: each run adds eta ~ N(0, omega^2) to every problem's logit,
    /// shared by the samples of that run (0 = independent samples).
    #[serde(skip_serializing_if = "is_zero")]
    pub run_sd: f64,
    /// Solve rate on memorised problems, when the model is contaminated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memorized_rate: Option<f64>,
    /// Every repeated wrong answer's share of the wrong mass, in file order: `[attractor]` when
    /// the scenario gave one number, empty for an empty list (every wrong answer a one-off).
    #[serde(skip_serializing_if = "at_most_one")]
    pub attractors: Vec<f64>,
    /// Share of all samples with no extractable answer (graded wrong, never voting with another).
    #[serde(skip_serializing_if = "is_zero")]
    pub unparsed: f64,
    /// Share of parsed correct samples written in a form the normaliser treats as a different
    /// answer (graded correct, but its votes do not combine with the main form's).
    #[serde(skip_serializing_if = "is_zero")]
    pub split: f64,
    /// tau >= 0 (`shift_sd`, logits): the SD of the model's own per-problem deviation, so its
    /// logit on problem i is the benchmark's logit + shift + tau e_i ([`problem_deviations`]).
    /// 0 (the default) is the constant shift; only with [`RateSource::Shift`].
    pub shift_sd: f64,
    /// The verifier that picks one of k samples (best-of-k), when the scenario gives one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verifier: Option<Verifier>,
    /// The grader's error rates, when grading is noisy (`None`: a perfect grader).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grader: Option<Grader>,
    /// Each sample's confidence, when the scenario gives `[model.confidence]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confidence: Option<Confidence>,
}

fn at_most_one(v: &[f64]) -> bool {
    v.len() <= 1
}

impl Model {
    /// The model's per-problem rates on the fixed benchmark: expit(logit(p_i) + shift + tau e_i)
    /// with the fixed deviations e_i of [`problem_deviations`] (tau = 0 is the plain shift);
    /// rates of 0 or 1 stay. A contaminated model (one with a `memorized_rate` r) solves the
    /// problems [`Benchmark::memorised`] marks at r instead. Time: O(N log N) with tau > 0 or
    /// contamination, else O(N).
    pub fn rates_on(&self, benchmark: &Benchmark) -> Vec<f64> {
        let bench = benchmark.rates();
        let rates = match &self.source {
            RateSource::Shift(s) if self.shift_sd > 0.0 => {
                let e = problem_deviations(&self.name, bench.len());
                bench
                    .iter()
                    .zip(e)
                    .map(|(&p, e)| shift_rate(p, *s + self.shift_sd * e))
                    .collect()
            }
            RateSource::Shift(s) => bench.iter().map(|&p| shift_rate(p, *s)).collect(),
            RateSource::Rates(r) => r.clone(),
        };
        self.memorise(benchmark, rates)
    }

    /// The model's rates with its constant shift alone (tau taken as 0; memorised problems at
    /// `memorized_rate`): the centre its per-problem deviations move each rate from. Time: O(N).
    pub fn constant_shift_rates_on(&self, benchmark: &Benchmark) -> Vec<f64> {
        let rates = match &self.source {
            RateSource::Shift(s) => benchmark
                .rates()
                .iter()
                .map(|&p| shift_rate(p, *s))
                .collect(),
            RateSource::Rates(r) => r.clone(),
        };
        self.memorise(benchmark, rates)
    }

    /// The SD of each problem's own logit deviation: `shift_sd` on every problem except the
    /// memorised ones, whose rate is `memorized_rate` exactly. Time: O(N) (O(N log N) with
    /// contamination).
    pub fn deviation_sds_on(&self, benchmark: &Benchmark) -> Vec<f64> {
        let mut taus = vec![self.shift_sd; benchmark.problems];
        if self.memorized_rate.is_some() {
            for (tau, memorised) in taus.iter_mut().zip(benchmark.memorised()) {
                if memorised {
                    *tau = 0.0;
                }
            }
        }
        taus
    }

    /// The rates with the memorised problems' replaced by `memorized_rate` (a model without one
    /// is not contaminated: the rates unchanged).
    fn memorise(&self, benchmark: &Benchmark, mut rates: Vec<f64>) -> Vec<f64> {
        if let Some(r) = self.memorized_rate {
            for (p, memorised) in rates.iter_mut().zip(benchmark.memorised()) {
                if memorised {
                    *p = r;
                }
            }
        }
        rates
    }

    /// The first key of the answer-mode extensions this model sets away from the canonical
    /// model (several attractors, `unparsed`, `split`), or `None` when it is the canonical model
    /// with one attractor share [`Model::attractor`].
    pub fn answer_modes_key(&self) -> Option<&'static str> {
        if self.attractors.len() > 1 {
            Some("attractor")
        } else if self.unparsed != 0.0 {
            Some("unparsed")
        } else if self.split != 0.0 {
            Some("split")
        } else {
            None
        }
    }

    /// The graded per-sample rate (1 - unparsed) p of each rate: what pass@1 sees. The rates
    /// themselves (bit for bit) when `unparsed` is 0. Time: O(N).
    pub fn graded(&self, rates: Vec<f64>) -> Vec<f64> {
        if self.unparsed == 0.0 {
            rates
        } else {
            rates.iter().map(|p| (1.0 - self.unparsed) * p).collect()
        }
    }

    /// The model's constant logit shift, when its rates come from one.
    pub fn shift(&self) -> Option<f64> {
        match self.source {
            RateSource::Shift(s) => Some(s),
            RateSource::Rates(_) => None,
        }
    }
}

/// The fixed benchmark's per-problem deviations e_1..e_N of the model named `name`: the N
/// evenly spaced standard-normal quantiles Phi^-1((j - 1/2) / N), j = 1..N, in a pseudo-random
/// order that depends only on the model's name (problem i gets the quantile of its rank under
/// a 64-bit hash of (name, i)).
///
/// Why this choice (docs/model.md, "Per-problem disagreement"): like the benchmark's own
/// quantile placement, the realised deviations have mean exactly 0 and the spread of a normal,
/// so only the pairing of deviations with problems is random, which is the disagreement itself.
/// The order does not depend on the run's seed (the seed draws sampling noise, not the
/// benchmark), nor on the model's position in the file or on any experiment: the same
/// scenario gives the same benchmark under every seed and thread count. Distinct names give
/// independent-looking orders. Time: O(N log N).
pub fn problem_deviations(name: &str, problems: usize) -> Vec<f64> {
    let std_normal = Normal::standard();
    let salt = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    let salt = mix64(salt ^ DEVIATION_DOMAIN);
    let mut order: Vec<usize> = (0..problems).collect();
    // Ties in a 64-bit hash are practically impossible; the index breaks them all the same.
    order.sort_by_key(|&i| (mix64(salt ^ mix64(i as u64)), i));
    let mut e = vec![0.0; problems];
    for (rank, &i) in order.iter().enumerate() {
        e[i] = std_normal.inverse_cdf((rank as f64 + 0.5) / problems as f64);
    }
    e
}

/// Separates the deviation hash from any other use of the same name hash ("shift_sd" in ASCII).
const DEVIATION_DOMAIN: u64 = 0x7368_6966_745f_7364;

/// Separates the memorised-problem order from the deviation hash ("memorise" in ASCII).
const CONTAMINATION_DOMAIN: u64 = 0x6d65_6d6f_7269_7365;

/// The splitmix64 finaliser: a bijective 64-bit mix.
fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// What a threshold verifier does when it accepts none of the k samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fallback {
    /// A uniform pick among all k samples.
    #[default]
    Random,
    /// No answer: graded wrong.
    Abstain,
}

impl Fallback {
    /// The name used in scenario files and tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Fallback::Random => "random",
            Fallback::Abstain => "abstain",
        }
    }
}

/// A verifier that accepts a correct sample with probability `tpr` and a wrong one with `fpr`
/// (closed forms in `exact::verifier`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ThresholdVerifier {
    /// P(accept | correct), in [0, 1].
    pub tpr: f64,
    /// P(accept | wrong), in [0, 1].
    pub fpr: f64,
    /// The pick when nothing is accepted.
    pub fallback: Fallback,
}

/// The two kinds of `[model.verifier]` a scenario can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VerifierKind {
    /// Accept or reject each sample; pick uniformly among the accepted.
    Threshold,
    /// A normal reward score per sample; pick the argmax.
    Score,
}

impl VerifierKind {
    /// The name used in scenario files and tables.
    pub fn as_str(self) -> &'static str {
        match self {
            VerifierKind::Threshold => "threshold",
            VerifierKind::Score => "score",
        }
    }
}

/// A best-of-k selector: how one of a model's k samples is picked.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verifier {
    /// Accept/reject with rates `tpr`, `fpr`; uniform pick among the accepted.
    Threshold(ThresholdVerifier),
    /// Scores N(separation, 1) for correct samples and N(0, 1) for wrong ones; the argmax wins.
    Score {
        /// Mean score of a correct sample minus that of a wrong one.
        separation: f64,
    },
}

impl Verifier {
    /// A short description for legends and tables, e.g. `threshold tpr 0.9 fpr 0.1 random`.
    pub fn describe(&self) -> String {
        match self {
            Verifier::Threshold(v) => format!(
                "threshold tpr {} fpr {} {}",
                v.tpr,
                v.fpr,
                v.fallback.as_str()
            ),
            Verifier::Score { separation } => format!("score separation {separation}"),
        }
    }
}

/// The confidence each sample carries (confidence-filtered voting, `exact::confidence`): a
/// correct sample's confidence is N(separation, 1), the repeated attractor answer's
/// N(attractor, 1), a one-off wrong answer's N(0, 1).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Confidence {
    /// Mean confidence of a correct sample, in SDs above a one-off wrong one.
    pub separation: f64,
    /// Mean confidence of the attractor answer (above `separation`: a confident attractor).
    pub attractor: f64,
}

/// A grader's error rates, each in [0, 1] (closed forms in `exact::grader`).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Grader {
    /// P(graded correct | wrong).
    pub fpr: f64,
    /// P(graded wrong | correct).
    pub fnr: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn note_rates_match_the_spec() {
        let r = quantile_rates(0.2, 2.2, 30);
        assert_eq!(format!("{:.1}", 100.0 * r[0]), "1.1");
        // The spec prints 99.3%: the exact value is 99.247%, which rounds to 99.25 and only
        // then to 99.3 (a double rounding). We hold the exact value.
        assert_eq!(format!("{:.3}", 100.0 * r[29]), "99.247");
        let mean = r.iter().sum::<f64>() / 30.0;
        assert_eq!(format!("{:.1}", 100.0 * mean), "52.9");
        assert_eq!(r.iter().filter(|&&p| p > 1.0 / 3.0).count(), 20);
    }

    #[test]
    fn shift_keeps_0_and_1() {
        assert_eq!(shift_rate(0.0, 3.0), 0.0);
        assert_eq!(shift_rate(1.0, -3.0), 1.0);
        assert!((shift_rate(0.5, 0.0) - 0.5).abs() < 1e-15);
        assert!((logit(expit(1.3)) - 1.3).abs() < 1e-12);
    }

    fn model(name: &str, shift: f64, tau: f64) -> Model {
        Model {
            name: name.into(),
            source: RateSource::Shift(shift),
            attractor: 0.5,
            vote_rule: VoteRule::Random,
            tokens: None,
            attractors: vec![0.5],
            unparsed: 0.0,
            split: 0.0,
            shift_sd: tau,
            verifier: None,
            grader: None,
            run_sd: 0.0,
            memorized_rate: None,
            confidence: None,
        }
    }

    #[test]
    fn deviations_are_the_normal_quantiles_in_a_name_keyed_order() {
        let e = problem_deviations("long", 30);
        let mut sorted = e.clone();
        sorted.sort_by(f64::total_cmp);
        let std_normal = Normal::standard();
        for (j, x) in sorted.iter().enumerate() {
            assert_eq!(*x, std_normal.inverse_cdf((j as f64 + 0.5) / 30.0));
        }
        // Not the identity order, the same every call, and different for another name.
        assert_ne!(e, sorted);
        assert_eq!(e, problem_deviations("long", 30));
        assert_ne!(e, problem_deviations("short", 30));
        assert!(e.iter().sum::<f64>().abs() < 1e-12);
    }

    #[test]
    fn tau_zero_rates_are_the_plain_shift_bit_for_bit() {
        let benchmark = Benchmark {
            problems: 30,
            difficulty: Difficulty::LogitNormal {
                mu: 0.2,
                sigma: 2.2,
                placement: Placement::Quantiles,
            },
            contaminated: 0.0,
            contaminated_models: Vec::new(),
        };
        let bench = quantile_rates(0.2, 2.2, 30);
        let plain: Vec<f64> = bench.iter().map(|&p| shift_rate(p, -0.7)).collect();
        assert_eq!(model("m", -0.7, 0.0).rates_on(&benchmark), plain);
        let moved = model("m", -0.7, 1.0).rates_on(&benchmark);
        assert_ne!(moved, plain);
        // logit(p_i') = logit(p_i) + shift + tau e_i, problem by problem.
        let e = problem_deviations("m", 30);
        for (i, ((&p, &m), &e)) in bench.iter().zip(&moved).zip(&e).enumerate() {
            let want = logit(p) - 0.7 + e;
            assert!((logit(m) - want).abs() < 1e-9, "problem {i}");
        }
    }
}
