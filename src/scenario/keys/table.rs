//! The key table itself: one [`Key`] per scenario key (see the parent module for what reads it),
//! with the bounds of the numeric keys that no other layer defines.
use super::domain::{above, at_least, closed, closed_open, finite, open_closed, whole};
use super::{block, Field, Key, Sweep, Table};
use crate::exact::run_corr::MAX_OMEGA;
use crate::scenario::raw::ExperimentKind;
use crate::scenario::{MAX_LOGIT, MAX_PROBLEMS, MAX_SHIFT_SD};

use ExperimentKind::{
    AttractorSweep, Budget, Confidence, Contamination, Cost, Curves, HeadToHead, SeedVariance,
    VoteSpread,
};

/// Largest |separation| of a score verifier or of a model's confidence: beyond it a correct
/// sample outscores every wrong one (or the reverse) to within the quadrature's error at every
/// k up to [`crate::scenario::MAX_K`], and the integration range of `exact::verifier` would have
/// to widen.
pub const MAX_SEPARATION: f64 = 10.0;

/// Largest |gap|, |position_bias|, |verbosity| and |self_preference|, and the largest spread,
/// of a `judge` experiment, in logits: beyond 10 logits a judgment is all but certain, and the
/// quadrature's range (|z| <= 38) covers every integrand with room to spare.
pub const MAX_JUDGE_LOGIT: f64 = 10.0;

/// Most questions a `judge` experiment compares per rerun: the exact distribution of the
/// reported total is built by an O(N^2) recurrence per protocol.
pub const MAX_COMPARISONS: u64 = 10_000;

/// Largest |threshold| of a `confidence` experiment's threshold filter, in SDs of a one-off
/// wrong answer's confidence (the confidence means are within [`MAX_SEPARATION`] of 0).
pub const MAX_THRESHOLD: f64 = 10.0;

/// Most repeated wrong answers (`attractor` as a list) a model may list.
pub const MAX_ATTRACTORS: usize = 8;

/// Most gaps (`gap_logits` or `gap_points`) a plan lists.
pub const MAX_GAPS: usize = 64;

/// Largest number of samples per problem in a plan's pass@1 grid (`samples`).
pub const MAX_PLAN_SAMPLES: u64 = 4096;

/// The span of experiment field `$f` when the file sets it.
macro_rules! set {
    ($f:ident) => {
        Some(|e: &RawExperiment| e.$f.as_ref().map(|x| x.span()))
    };
}

mod experiments;

/// Every scenario key, table by table in file order: the file's own tables, then
/// `[[experiment]]`.
pub const KEYS: &[Key] =
    &concat::<{ FILE_KEYS.len() + experiments::KEYS.len() }>(FILE_KEYS, experiments::KEYS);

/// The two halves of [`KEYS`] as one array.
const fn concat<const N: usize>(a: &[Key], b: &[Key]) -> [Key; N] {
    let mut out = [BASE; N];
    let mut i = 0;
    while i < N {
        out[i] = if i < a.len() { a[i] } else { b[i - a.len()] };
        i += 1;
    }
    out
}

/// A key with no sweep field, no kinds and no presence function, as struct-update base.
const BASE: Key = Key {
    table: Table::Top,
    name: "",
    valid: "",
    domain: None,
    note: "",
    default: "required",
    doc: "",
    sweep: Sweep::No,
    kinds: &[],
    present: None,
};

/// The keys of the top level, `[benchmark]` and `[[model]]` with its blocks.
// Every line ends in `..BASE` so that the table reads the same whichever fields a key sets.
#[allow(clippy::needless_update)]
const FILE_KEYS: &[Key] = &[
    Key {
        name: "title",
        valid: "a string",
        default: "the file stem",
        doc: "used in figure titles",
        ..BASE
    },
    Key {
        name: "seed",
        valid: "a whole number {}",
        domain: Some(whole(0, u64::MAX)),
        default: "1",
        doc: "master seed: the same seed gives the same tables",
        sweep: Sweep::Top(Field::Whole(|s| &mut s.seed)),
        ..BASE
    },
    // [benchmark]
    Key {
        table: Table::Benchmark,
        name: "problems",
        valid: "a whole number, {}",
        domain: Some(whole(1, MAX_PROBLEMS)),
        default: "required unless `rates` is given",
        doc: "N, the number of problems",
        sweep: Sweep::Benchmark(Field::Whole(|b| &mut b.problems)),
        ..BASE
    },
    Key {
        table: Table::Benchmark,
        name: "mu",
        valid: "a number of logits in {}",
        domain: Some(closed(-MAX_LOGIT, MAX_LOGIT)),
        default: "required unless `rates` is given",
        doc: "mean of the logit-normal spread of per-problem solve rates",
        sweep: Sweep::Benchmark(Field::Real(|b| &mut b.mu)),
        ..BASE
    },
    Key {
        table: Table::Benchmark,
        name: "sigma",
        valid: "a number of logits in {}",
        domain: Some(open_closed(0.0, MAX_LOGIT)),
        default: "required unless `rates` is given",
        doc: "SD of the logit-normal spread",
        sweep: Sweep::Benchmark(Field::Real(|b| &mut b.sigma)),
        ..BASE
    },
    Key {
        table: Table::Benchmark,
        name: "placement",
        valid: "\"quantiles\", \"random\"",
        default: "\"quantiles\"",
        doc: "quantiles: a fixed benchmark at the spread's quantiles; random: redrawn every rerun",
        ..BASE
    },
    Key {
        table: Table::Benchmark,
        name: "rates",
        valid: "a list of {n} rates in {}",
        domain: Some(closed(0.0, 1.0).list(1, MAX_PROBLEMS as usize)),
        default: "none",
        doc: "explicit per-problem solve rates instead of mu, sigma and placement",
        ..BASE
    },
    Key {
        table: Table::Benchmark,
        name: "contaminated",
        valid: "a share in {}",
        domain: Some(open_closed(0.0, 1.0)),
        default: "none",
        doc: "share of problems the contaminated models memorised; needs contaminated_models",
        sweep: Sweep::Benchmark(Field::Real(|b| &mut b.contaminated)),
        ..BASE
    },
    Key {
        table: Table::Benchmark,
        name: "contaminated_models",
        valid: "a list of model names",
        default: "none",
        doc: "the models that memorised them; each needs memorized_rate",
        ..BASE
    },
    // [[model]]
    Key {
        table: Table::Model,
        name: "name",
        valid: "letters, digits, _ - . +; unique",
        doc: "the model's name in experiments and outputs",
        ..BASE
    },
    Key {
        table: Table::Model,
        name: "shift",
        valid: "a finite number of logits",
        domain: Some(finite()),
        default: "0",
        doc: "logit shift of every benchmark rate; rates of exactly 0 or 1 stay put",
        sweep: Sweep::Model(Field::Real(|m| &mut m.shift)),
        ..BASE
    },
    Key {
        table: Table::Model,
        name: "rates",
        valid: "one rate in {} per problem",
        domain: Some(closed(0.0, 1.0).list(1, MAX_PROBLEMS as usize)),
        default: "none",
        doc: "explicit per-problem rates instead of `shift`",
        ..BASE
    },
    Key {
        table: Table::Model,
        name: "shift_sd",
        valid: "a number of logits in {}",
        domain: Some(closed(0.0, MAX_SHIFT_SD)),
        note: ", with `shift` only",
        default: "0",
        doc: "SD of the model's own per-problem logit deviation",
        sweep: Sweep::Model(Field::Real(|m| &mut m.shift_sd)),
        ..BASE
    },
    Key {
        table: Table::Model,
        name: "attractor",
        valid: "a share in {}, or a list of {n} such shares",
        domain: Some(closed(0.0, 1.0).list(0, MAX_ATTRACTORS)),
        note: " summing to at most 1",
        doc: "share of the wrong answers on one repeated wrong answer, one share per repeated answer in a list",
        sweep: Sweep::Model(Field::Number(|m| &mut m.attractor)),
        ..BASE
    },
    Key {
        table: Table::Model,
        name: "unparsed",
        valid: "a share in {}",
        domain: Some(closed_open(0.0, 1.0)),
        default: "0",
        doc: "share of samples with no extractable answer, graded wrong and a vote of its own",
        sweep: Sweep::Model(Field::Real(|m| &mut m.unparsed)),
        ..BASE
    },
    Key {
        table: Table::Model,
        name: "split",
        valid: "a share in {}",
        domain: Some(closed_open(0.0, 1.0)),
        default: "0",
        doc: "share of correct samples in a form the normaliser does not merge with the main one",
        sweep: Sweep::Model(Field::Real(|m| &mut m.split)),
        ..BASE
    },
    Key {
        table: Table::Model,
        name: "vote_rule",
        valid: "\"random\", \"strict\", \"absolute\"",
        default: "\"random\"",
        doc: "how this model's votes break ties at the top",
        ..BASE
    },
    Key {
        table: Table::Model,
        name: "run_sd",
        valid: "a number of logits in {}",
        domain: Some(closed(0.0, MAX_OMEGA)),
        default: "0",
        doc: "SD of a logit offset the samples of one run share; 0 gives independent samples",
        sweep: Sweep::Model(Field::Real(|m| &mut m.run_sd)),
        kinds: &[Curves, SeedVariance, HeadToHead],
        ..BASE
    },
    Key {
        table: Table::Model,
        name: "memorized_rate",
        valid: "a rate in {}",
        domain: Some(closed(0.0, 1.0)),
        default: "required for a model in contaminated_models",
        doc: "solve rate on memorised problems",
        sweep: Sweep::Model(Field::Real(|m| &mut m.memorized_rate)),
        kinds: &[
            Curves,
            AttractorSweep,
            SeedVariance,
            VoteSpread,
            HeadToHead,
            Budget,
            Cost,
            Contamination,
            Confidence,
        ],
        ..BASE
    },
    // [model.tokens]
    Key {
        table: Table::Tokens,
        name: "median_tokens",
        valid: "a number of tokens {}",
        domain: Some(above(0.0)),
        doc: "median correct trace on the easiest problem",
        sweep: Sweep::Model(Field::Real(|m| &mut block(&mut m.tokens).median_tokens)),
        ..BASE
    },
    Key {
        table: Table::Tokens,
        name: "hard_growth",
        valid: "a number {}",
        domain: Some(at_least(0.0)),
        doc: "the median grows as L0 (1 + g (1 - p))",
        sweep: Sweep::Model(Field::Real(|m| &mut block(&mut m.tokens).hard_growth)),
        ..BASE
    },
    Key {
        table: Table::Tokens,
        name: "wrong_factor",
        valid: "a factor {}",
        domain: Some(above(0.0)),
        doc: "wrong traces are w times longer",
        sweep: Sweep::Model(Field::Real(|m| &mut block(&mut m.tokens).wrong_factor)),
        ..BASE
    },
    Key {
        table: Table::Tokens,
        name: "sigma",
        valid: "a log-SD {}",
        domain: Some(above(0.0)),
        doc: "log-SD of the lognormal trace length",
        sweep: Sweep::Model(Field::Real(|m| &mut block(&mut m.tokens).sigma)),
        ..BASE
    },
    // [model.verifier]
    Key {
        table: Table::Verifier,
        name: "kind",
        valid: "\"threshold\", \"score\"",
        doc: "threshold accepts or rejects each sample; score scores each one and picks the argmax (the block is optional)",
        ..BASE
    },
    Key {
        table: Table::Verifier,
        name: "tpr",
        valid: "a probability in {}",
        domain: Some(closed(0.0, 1.0)),
        note: ", threshold only",
        doc: "P(accept | correct sample)",
        sweep: Sweep::Model(Field::Real(|m| &mut block(&mut m.verifier).tpr)),
        ..BASE
    },
    Key {
        table: Table::Verifier,
        name: "fpr",
        valid: "a probability in {}",
        domain: Some(closed(0.0, 1.0)),
        note: ", threshold only",
        doc: "P(accept | wrong sample)",
        sweep: Sweep::Model(Field::Real(|m| &mut block(&mut m.verifier).fpr)),
        ..BASE
    },
    Key {
        table: Table::Verifier,
        name: "fallback",
        valid: "\"random\", \"abstain\" (threshold only)",
        default: "\"random\"",
        doc: "when no sample is accepted: a uniform pick of all k, or no answer",
        ..BASE
    },
    Key {
        table: Table::Verifier,
        name: "separation",
        valid: "a number of SDs in {}",
        domain: Some(closed(-MAX_SEPARATION, MAX_SEPARATION)),
        note: ", score only",
        doc: "a correct sample scores N(separation, 1), a wrong one N(0, 1)",
        sweep: Sweep::Model(Field::Real(|m| &mut block(&mut m.verifier).separation)),
        ..BASE
    },
    // [model.grader]
    Key {
        table: Table::Grader,
        name: "fpr",
        valid: "a probability in {}",
        domain: Some(closed(0.0, 1.0)),
        default: "0",
        doc: "P(a wrong answer is graded correct)",
        sweep: Sweep::Model(Field::Real(|m| &mut block(&mut m.grader).fpr)),
        ..BASE
    },
    Key {
        table: Table::Grader,
        name: "fnr",
        valid: "a probability in {}",
        domain: Some(closed(0.0, 1.0)),
        default: "0",
        doc: "P(a correct answer is graded wrong)",
        sweep: Sweep::Model(Field::Real(|m| &mut block(&mut m.grader).fnr)),
        ..BASE
    },
    // [model.confidence]
    Key {
        table: Table::Confidence,
        name: "separation",
        valid: "a number of SDs in {}",
        domain: Some(closed(-MAX_SEPARATION, MAX_SEPARATION)),
        doc: "a correct sample's confidence is N(separation, 1), a one-off wrong answer's N(0, 1)",
        sweep: Sweep::Model(Field::Real(|m| &mut block(&mut m.confidence).separation)),
        ..BASE
    },
    Key {
        table: Table::Confidence,
        name: "attractor",
        valid: "a number of SDs in {}",
        domain: Some(closed(-MAX_SEPARATION, MAX_SEPARATION)),
        default: "0",
        doc: "the repeated attractor answer's confidence is N(attractor, 1)",
        sweep: Sweep::Model(Field::Real(|m| &mut block(&mut m.confidence).attractor)),
        ..BASE
    },
];
