//! The key table: every scenario key written once, with its table, what values are valid, its
//! default, a one-line doc, whether `sweep --set` may vary it, and which experiment kinds take
//! it (experiment keys) or honour it (model keys).
//!
//! What reads it: the kinds' key lists ([`names_of_kind`]) and the "does not apply"
//! error, the keys an experiment sets ([`present`]), the unknown-key message
//! (the valid keys of the table and the nearest one), the quoted-string options of enum keys,
//! the refusal of a model key an experiment does not honour, the sweep fields
//! ([`super::grid`]), the key comments of `evalsim init`, and `docs/keys.md`
//! ([`markdown`], compared with the file by the test suite).
//!
//! **Adding a key** is one [`Key`] line here plus the code that uses it: the raw field in
//! [`super::raw`] (serde reads the file into it) and its check in [`super::resolve`].
use std::ops::Range;

use toml::Spanned;

use super::raw::{ExperimentKind, RawBenchmark, RawExperiment, RawModel, RawScenario};

/// The TOML table a key sits in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    /// The top level of the file.
    Top,
    /// `[benchmark]`.
    Benchmark,
    /// A `[[model]]`.
    Model,
    /// `[model.tokens]`.
    Tokens,
    /// `[model.verifier]`.
    Verifier,
    /// `[model.grader]`.
    Grader,
    /// An `[[experiment]]`.
    Experiment,
}

impl Table {
    /// Every table, in file order.
    pub const ALL: [Table; 7] = [
        Table::Top,
        Table::Benchmark,
        Table::Model,
        Table::Tokens,
        Table::Verifier,
        Table::Grader,
        Table::Experiment,
    ];

    /// The header as written in a file.
    pub fn header(self) -> &'static str {
        match self {
            Table::Top => "the top level",
            Table::Benchmark => "[benchmark]",
            Table::Model => "[[model]]",
            Table::Tokens => "[model.tokens]",
            Table::Verifier => "[model.verifier]",
            Table::Grader => "[model.grader]",
            Table::Experiment => "[[experiment]]",
        }
    }

    /// The table a located key names (`benchmark.mu`, `model[2].tokens.sigma`,
    /// `experiment[1].k`, `seed`), or `None` for a key path of no table.
    pub fn of_path(path: &str) -> Option<Table> {
        let head: Vec<&str> = path
            .split('.')
            .map(|p| p.split('[').next().unwrap_or(p))
            .collect();
        Some(match head.as_slice() {
            [_] => Table::Top,
            ["benchmark", _] => Table::Benchmark,
            ["model", "tokens", _] => Table::Tokens,
            ["model", "verifier", _] => Table::Verifier,
            ["model", "grader", _] => Table::Grader,
            ["model", _] => Table::Model,
            ["experiment", _] => Table::Experiment,
            _ => return None,
        })
    }

    /// The prefix of a sweep path inside the block the table belongs to (`tokens.` for
    /// `model.NAME.tokens.sigma`).
    fn sweep_prefix(self) -> &'static str {
        match self {
            Table::Tokens => "tokens.",
            Table::Verifier => "verifier.",
            Table::Grader => "grader.",
            _ => "",
        }
    }
}

/// A numeric field of the raw block `T`, with its own type: a function from the block to the
/// field. What `sweep --set` writes.
pub enum Field<T> {
    /// A whole number >= 0, exact to `u64::MAX` (seed, problems, votes, reruns, traces).
    Whole(fn(&mut T) -> &mut Option<Spanned<u64>>),
    /// A real number (shift, mu, sigma, ...); the validator checks its range.
    Real(fn(&mut T) -> &mut Option<Spanned<f64>>),
    /// A real number stored where the file may also give a list (`attractor`): the swept value
    /// replaces the list with that one number.
    Number(fn(&mut T) -> &mut Option<Spanned<toml::Value>>),
}

/// Whether and how `sweep --set` may vary a key.
pub enum Sweep {
    /// Not a sweep field (names, lists, words).
    No,
    /// A top-level field.
    Top(Field<RawScenario>),
    /// A `[benchmark]` field.
    Benchmark(Field<RawBenchmark>),
    /// A field of a model or of one of its blocks (through [`block`]).
    Model(Field<RawModel>),
    /// An experiment field.
    Experiment(Field<RawExperiment>),
}

/// The span of an experiment key the file sets, if it sets it.
pub type Present = fn(&RawExperiment) -> Option<Range<usize>>;

/// One scenario key.
pub struct Key {
    /// Its table.
    pub table: Table,
    /// Its name in the file.
    pub name: &'static str,
    /// What values are valid.
    pub valid: &'static str,
    /// Its default ("required" when there is none).
    pub default: &'static str,
    /// One line on what it means.
    pub doc: &'static str,
    /// Whether `sweep --set` may vary it.
    pub sweep: Sweep,
    /// Experiment keys: the kinds that take it. Model keys: the kinds that honour it when it
    /// is set (empty: every kind).
    pub kinds: &'static [ExperimentKind],
    /// Experiment keys: whether a file sets it (`None` for `kind` and `name`, which every kind
    /// takes).
    pub present: Option<Present>,
}

impl Key {
    /// The path `sweep --set` uses inside the key's block (`tokens.sigma`).
    pub fn sweep_name(&self) -> String {
        format!("{}{}", self.table.sweep_prefix(), self.name)
    }

    /// Whether an experiment of `kind` takes (or honours) this key.
    pub fn for_kind(&self, kind: ExperimentKind) -> bool {
        self.kinds.is_empty() || self.kinds.contains(&kind)
    }

    /// The comment `evalsim init` writes after the key: the doc, then what is valid and the
    /// default.
    pub fn comment(&self) -> String {
        if self.default.starts_with("required") {
            format!("{}; {} ({})", self.doc, self.valid, self.default)
        } else {
            format!("{}; {} (default {})", self.doc, self.valid, self.default)
        }
    }
}

/// The nested block `b` (e.g. `[model.tokens]`), created empty when the file has none.
pub fn block<T: Default>(b: &mut Option<Spanned<T>>) -> &mut T {
    b.get_or_insert_with(|| Spanned::new(0..0, T::default()))
        .get_mut()
}

use ExperimentKind::{
    AttractorSweep, Budget, Contamination, Cost, Curves, HeadToHead, Plan, SeedVariance, VoteSpread,
};

/// The span of experiment field `$f` when the file sets it.
macro_rules! set {
    ($f:ident) => {
        Some(|e: &RawExperiment| e.$f.as_ref().map(|x| x.span()))
    };
}

/// A key with no sweep field, no kinds and no presence function, as struct-update base.
const BASE: Key = Key {
    table: Table::Top,
    name: "",
    valid: "",
    default: "required",
    doc: "",
    sweep: Sweep::No,
    kinds: &[],
    present: None,
};

/// Every scenario key, table by table in file order. Experiment keys whose default or meaning
/// differs by kind have one line per meaning.
// Every line ends in `..BASE` so that the table reads the same whichever fields a key sets.
#[allow(clippy::needless_update)]
pub const KEYS: &[Key] = &[
    Key {
        name: "title",
        valid: "a string",
        default: "the file stem",
        doc: "used in figure titles",
        ..BASE
    },
    Key {
        name: "seed",
        valid: "a whole number >= 0",
        default: "1",
        doc: "master seed: the same seed gives the same tables",
        sweep: Sweep::Top(Field::Whole(|s| &mut s.seed)),
        ..BASE
    },
    // [benchmark]
    Key {
        table: Table::Benchmark,
        name: "problems",
        valid: "a whole number, 1 to 100000",
        default: "required unless `rates` is given",
        doc: "N, the number of problems",
        sweep: Sweep::Benchmark(Field::Whole(|b| &mut b.problems)),
        ..BASE
    },
    Key {
        table: Table::Benchmark,
        name: "mu",
        valid: "a number of logits, -40 to 40",
        default: "required unless `rates` is given",
        doc: "mean of the logit-normal spread of per-problem solve rates",
        sweep: Sweep::Benchmark(Field::Real(|b| &mut b.mu)),
        ..BASE
    },
    Key {
        table: Table::Benchmark,
        name: "sigma",
        valid: "a number of logits in (0, 40]",
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
        valid: "a list of 1 to 100000 rates in [0, 1]",
        default: "none",
        doc: "explicit per-problem solve rates instead of mu, sigma and placement",
        ..BASE
    },
    Key {
        table: Table::Benchmark,
        name: "contaminated",
        valid: "a share in (0, 1]",
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
        default: "0",
        doc: "logit shift of every benchmark rate (rates of exactly 0 or 1 stay put)",
        sweep: Sweep::Model(Field::Real(|m| &mut m.shift)),
        ..BASE
    },
    Key {
        table: Table::Model,
        name: "rates",
        valid: "one rate in [0, 1] per problem",
        default: "none",
        doc: "explicit per-problem rates instead of `shift`",
        ..BASE
    },
    Key {
        table: Table::Model,
        name: "shift_sd",
        valid: "tau in [0, 10] logits, with `shift` only",
        default: "0",
        doc: "SD of the model's own per-problem logit deviation",
        sweep: Sweep::Model(Field::Real(|m| &mut m.shift_sd)),
        ..BASE
    },
    Key {
        table: Table::Model,
        name: "attractor",
        valid: "a share in [0, 1], or a list of up to 8 shares >= 0 summing to at most 1",
        doc: "share of the wrong answers on one repeated wrong answer (a list: one per repeated answer)",
        sweep: Sweep::Model(Field::Number(|m| &mut m.attractor)),
        ..BASE
    },
    Key {
        table: Table::Model,
        name: "unparsed",
        valid: "a share in [0, 1)",
        default: "0",
        doc: "share of samples with no extractable answer (graded wrong, a vote of its own)",
        sweep: Sweep::Model(Field::Real(|m| &mut m.unparsed)),
        ..BASE
    },
    Key {
        table: Table::Model,
        name: "split",
        valid: "a share in [0, 1)",
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
        valid: "omega in [0, 3] logits",
        default: "0",
        doc: "SD of a logit offset the samples of one run share (0: independent samples)",
        sweep: Sweep::Model(Field::Real(|m| &mut m.run_sd)),
        kinds: &[Curves, SeedVariance, HeadToHead],
        ..BASE
    },
    Key {
        table: Table::Model,
        name: "memorized_rate",
        valid: "a rate in [0, 1]",
        default: "required for a model in contaminated_models",
        doc: "solve rate on memorised problems",
        sweep: Sweep::Model(Field::Real(|m| &mut m.memorized_rate)),
        ..BASE
    },
    // [model.tokens]
    Key {
        table: Table::Tokens,
        name: "median_tokens",
        valid: "L0 > 0",
        doc: "median correct trace on the easiest problem",
        sweep: Sweep::Model(Field::Real(|m| &mut block(&mut m.tokens).median_tokens)),
        ..BASE
    },
    Key {
        table: Table::Tokens,
        name: "hard_growth",
        valid: "g >= 0",
        doc: "the median grows as L0 (1 + g (1 - p))",
        sweep: Sweep::Model(Field::Real(|m| &mut block(&mut m.tokens).hard_growth)),
        ..BASE
    },
    Key {
        table: Table::Tokens,
        name: "wrong_factor",
        valid: "w > 0",
        doc: "wrong traces are w times longer",
        sweep: Sweep::Model(Field::Real(|m| &mut block(&mut m.tokens).wrong_factor)),
        ..BASE
    },
    Key {
        table: Table::Tokens,
        name: "sigma",
        valid: "a log-SD > 0",
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
        valid: "a probability in [0, 1], threshold only",
        doc: "P(accept | correct sample)",
        sweep: Sweep::Model(Field::Real(|m| &mut block(&mut m.verifier).tpr)),
        ..BASE
    },
    Key {
        table: Table::Verifier,
        name: "fpr",
        valid: "a probability in [0, 1], threshold only",
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
        valid: "a number of SDs in [-10, 10], score only",
        doc: "a correct sample scores N(separation, 1), a wrong one N(0, 1)",
        sweep: Sweep::Model(Field::Real(|m| &mut block(&mut m.verifier).separation)),
        ..BASE
    },
    // [model.grader]
    Key {
        table: Table::Grader,
        name: "fpr",
        valid: "a probability in [0, 1]",
        default: "0",
        doc: "P(a wrong answer is graded correct)",
        sweep: Sweep::Model(Field::Real(|m| &mut block(&mut m.grader).fpr)),
        ..BASE
    },
    Key {
        table: Table::Grader,
        name: "fnr",
        valid: "a probability in [0, 1]",
        default: "0",
        doc: "P(a correct answer is graded wrong)",
        sweep: Sweep::Model(Field::Real(|m| &mut block(&mut m.grader).fnr)),
        ..BASE
    },
    // [[experiment]]
    Key {
        table: Table::Experiment,
        name: "kind",
        valid: "\"curves\", \"attractor-sweep\", \"seed-variance\", \"vote-spread\", \"head-to-head\", \"budget\", \"cost\", \"plan\", \"contamination\"",
        doc: "what the experiment computes",
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "name",
        valid: "letters, digits, _ and -, at most 64 characters",
        default: "the kind",
        doc: "names the output files; two experiments of one kind need names",
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "models",
        valid: "a list of model names",
        default: "every model",
        doc: "the models it covers (budget and cost: each needs [model.tokens])",
        kinds: &[Curves, Budget, Cost],
        present: set!(models),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "model",
        valid: "a model name",
        doc: "the model it studies (contamination: a model in benchmark.contaminated_models)",
        kinds: &[AttractorSweep, SeedVariance, VoteSpread, Contamination],
        present: set!(model),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "model",
        valid: "a model name",
        default: "the first model",
        doc: "model A of the plan (B is A shifted by the gap)",
        kinds: &[Plan],
        present: set!(model),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "a",
        valid: "a model name",
        doc: "the weaker model",
        kinds: &[HeadToHead],
        present: set!(a),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "b",
        valid: "a model name other than a",
        doc: "the stronger model",
        kinds: &[HeadToHead],
        present: set!(b),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "metric",
        valid: "\"pass1\", \"maj\"",
        default: "\"pass1\"",
        doc: "the score planned for: pass@1 averaged over n samples, or one maj@k vote",
        kinds: &[Plan],
        present: set!(metric),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "gap_logits",
        valid: "a list of 1 to 64 logit gaps in [-40, 40]",
        default: "required unless gap_points is given",
        doc: "B's advantage over A in logits",
        kinds: &[Plan],
        present: set!(gap_logits),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "gap_points",
        valid: "a list of 1 to 64 gaps in points of population pass@1",
        default: "required unless gap_logits is given",
        doc: "B's advantage over A in points of the score",
        kinds: &[Plan],
        present: set!(gap_points),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "problems",
        valid: "a list of whole numbers, 1 to 100000, increasing",
        default: "[30, 100, 300, 1000]",
        doc: "benchmark sizes of the plan's grid",
        kinds: &[Plan],
        present: set!(problems),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "samples",
        valid: "a list of whole numbers, 1 to 4096, increasing",
        default: "[1, 4, 16, 64]",
        doc: "samples per problem of the plan's grid (pass1)",
        kinds: &[Plan],
        present: set!(samples),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "attractor",
        valid: "a list of shares in [0, 1] (factors >= 0 with vary = \"scale\")",
        default: "required unless split or grader_fpr is given",
        doc: "the attractor shares the sweep sets on its model",
        kinds: &[AttractorSweep],
        present: set!(attractor),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "vary",
        valid: "\"share\", \"scale\"",
        default: "\"share\"",
        doc: "share: each value replaces one share of the model's list; scale: each multiplies the list",
        kinds: &[AttractorSweep],
        present: set!(vary),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "share",
        valid: "a whole number from 1 to the model's number of shares",
        default: "1",
        doc: "which share vary = \"share\" replaces",
        kinds: &[AttractorSweep],
        present: set!(share),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "split",
        valid: "a list of shares in [0, 1)",
        default: "none",
        doc: "sweep the model's split share instead of its attractor",
        kinds: &[AttractorSweep],
        present: set!(split),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "grader_fpr",
        valid: "a list of probabilities in [0, 1]",
        default: "none",
        doc: "sweep the model's grader false-positive rate instead of its attractor",
        kinds: &[AttractorSweep],
        present: set!(grader_fpr),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "k",
        valid: "a list of whole numbers, 1 to 1024, increasing",
        default: "[1, 2, 4, 8, 16, 32, 64]",
        doc: "samples per problem of each point",
        kinds: &[Curves, AttractorSweep],
        present: set!(k),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "k",
        valid: "a list of whole numbers, 1 to 1024, increasing",
        default: "[16]",
        doc: "samples per vote",
        kinds: &[VoteSpread],
        present: set!(k),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "k",
        valid: "a list of whole numbers, 1 to 1024, increasing",
        default: "[1, 8, 32]",
        doc: "samples per problem of each strategy",
        kinds: &[Cost],
        present: set!(k),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "k",
        valid: "a list of whole numbers, 1 to 1024, increasing",
        default: "required with metric = \"maj\"",
        doc: "samples per vote of a maj plan",
        kinds: &[Plan],
        present: set!(k),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "n",
        valid: "a list of whole numbers, 1 to 100000, increasing",
        default: "[1, 4, 16, 64]",
        doc: "samples per problem of each rerun",
        kinds: &[SeedVariance, HeadToHead],
        present: set!(n),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "n",
        valid: "one whole number, 1 to 100000",
        default: "[1]",
        doc: "samples per problem",
        kinds: &[Contamination],
        present: set!(n),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "fresh",
        valid: "a list of whole numbers, 1 to 100000, increasing",
        default: "[25, 50, 100, 200, 400]",
        doc: "fresh set sizes of the power curve",
        kinds: &[Contamination],
        present: set!(fresh),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "shares",
        valid: "a list of shares in (0, 1], increasing",
        default: "[benchmark.contaminated]",
        doc: "contaminated shares the power curve and plan cover",
        kinds: &[Contamination],
        present: set!(shares),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "budgets",
        valid: "2 to 256 finite token caps > 0, increasing, at most 1e150",
        doc: "the token budgets of the accuracy curve",
        kinds: &[Budget],
        present: set!(budgets),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "votes",
        valid: "a whole number, 1 to 100000000",
        default: "4000",
        doc: "simulated votes per problem per point",
        sweep: Sweep::Experiment(Field::Whole(|e| &mut e.votes)),
        kinds: &[Curves, AttractorSweep, Cost],
        present: set!(votes),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "traces",
        valid: "a whole number, 1 to 100000000",
        default: "4000",
        doc: "simulated traces per problem",
        sweep: Sweep::Experiment(Field::Whole(|e| &mut e.traces)),
        kinds: &[Budget, Cost],
        present: set!(traces),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "cap",
        valid: "a token cap > 0",
        default: "none (unlimited)",
        doc: "traces longer than the cap are cut and count as wrong",
        sweep: Sweep::Experiment(Field::Real(|e| &mut e.cap)),
        kinds: &[Cost],
        present: set!(cap),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "price_per_mtok",
        valid: "a price > 0",
        default: "none",
        doc: "price per million tokens, for a cost per correct answer in money",
        sweep: Sweep::Experiment(Field::Real(|e| &mut e.price_per_mtok)),
        kinds: &[Cost],
        present: set!(price_per_mtok),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "vote_rule",
        valid: "\"random\", \"strict\", \"absolute\"",
        default: "each model's own",
        doc: "overrides the models' vote rules",
        kinds: &[Curves, AttractorSweep, VoteSpread, Cost, Plan],
        present: set!(vote_rule),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "reruns",
        valid: "a whole number, 1 to 100000000",
        default: "20000",
        doc: "simulated reruns",
        sweep: Sweep::Experiment(Field::Whole(|e| &mut e.reruns)),
        kinds: &[SeedVariance, HeadToHead],
        present: set!(reruns),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "reruns",
        valid: "a whole number, 1 to 100000000",
        default: "2000",
        doc: "simulated reruns",
        sweep: Sweep::Experiment(Field::Whole(|e| &mut e.reruns)),
        kinds: &[VoteSpread],
        present: set!(reruns),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "reruns",
        valid: "a whole number, 0 to 100000000",
        default: "20000",
        doc: "simulated reruns per checked cell (0: no simulation)",
        sweep: Sweep::Experiment(Field::Whole(|e| &mut e.reruns)),
        kinds: &[Plan],
        present: set!(reruns),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "reruns",
        valid: "a whole number, 1 to 100000000",
        default: "4000",
        doc: "simulated public and fresh sets per point",
        sweep: Sweep::Experiment(Field::Whole(|e| &mut e.reruns)),
        kinds: &[Contamination],
        present: set!(reruns),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "target_loss_or_tie",
        valid: "a fraction in (0, 1)",
        default: "0.05",
        doc: "the plan's target probability that B does not beat A",
        kinds: &[Plan],
        present: set!(target_loss_or_tie),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "target_halfwidth",
        valid: "a fraction in (0, 1)",
        default: "0.02",
        doc: "the plan's target half-width of the 95% interval of B - A (0.02 = 2 points)",
        kinds: &[Plan],
        present: set!(target_halfwidth),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "check_cells",
        valid: "\"all\", \"none\", or a number of cells",
        default: "\"all\"",
        doc: "which cells of the fixed-benchmark grid the simulation checks",
        kinds: &[Plan],
        present: set!(check_cells),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "check_population",
        valid: "\"all\", \"none\", or a number of cells",
        default: "4",
        doc: "which cells of the population designs the simulation checks",
        kinds: &[Plan],
        present: set!(check_population),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "shift_sd",
        valid: "tau_B in [0, 3] logits",
        default: "model A's own shift_sd",
        doc: "SD of B's per-problem logit deviation",
        sweep: Sweep::Experiment(Field::Real(|e| &mut e.shift_sd)),
        kinds: &[Plan],
        present: set!(shift_sd),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "target_power",
        valid: "a probability in (0.05, 1)",
        default: "none",
        doc: "a power besides 80% for the minimum detectable gap",
        sweep: Sweep::Experiment(Field::Real(|e| &mut e.target_power)),
        kinds: &[Plan],
        present: set!(target_power),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "alpha",
        valid: "a probability in (0, 1)",
        default: "0.05",
        doc: "false-alarm rate of the contamination test",
        sweep: Sweep::Experiment(Field::Real(|e| &mut e.alpha)),
        kinds: &[Contamination],
        present: set!(alpha),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "target_power",
        valid: "a probability in (0, 1)",
        default: "0.8",
        doc: "the power the smallest fresh set must reach",
        sweep: Sweep::Experiment(Field::Real(|e| &mut e.target_power)),
        kinds: &[Contamination],
        present: set!(target_power),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "max_fresh",
        valid: "a whole number, 1 to 100000",
        default: "2000",
        doc: "largest fresh set the plan scans",
        sweep: Sweep::Experiment(Field::Whole(|e| &mut e.max_fresh)),
        kinds: &[Contamination],
        present: set!(max_fresh),
        ..BASE
    },
];

/// The keys an experiment of `kind` takes besides `kind` and `name`, by name.
pub fn names_of_kind(kind: ExperimentKind) -> Vec<&'static str> {
    of_kind(kind).map(|k| k.name).collect()
}

/// The optional keys an experiment sets, with their spans, in table order.
pub fn present(e: &RawExperiment) -> Vec<(&'static str, Range<usize>)> {
    let mut out: Vec<(&'static str, Range<usize>)> = Vec::new();
    for key in KEYS {
        if let Some(span) = key.present.and_then(|p| p(e)) {
            if !out.iter().any(|(name, _)| *name == key.name) {
                out.push((key.name, span));
            }
        }
    }
    out
}

/// The keys of one table, in table order (a name that has one line per kind appears once).
pub fn of_table(table: Table) -> impl Iterator<Item = &'static Key> {
    let mut seen: Vec<&str> = Vec::new();
    KEYS.iter().filter(move |k| {
        let fresh = k.table == table && !seen.contains(&k.name);
        if fresh {
            seen.push(k.name);
        }
        fresh
    })
}

/// The key `name` of `table` as an experiment of `kind` reads it (`kind` only matters for
/// experiment keys and the honoured kinds of model keys).
pub fn find(table: Table, name: &str, kind: Option<ExperimentKind>) -> Option<&'static Key> {
    KEYS.iter().find(|k| {
        k.table == table
            && k.name == name
            && (table != Table::Experiment || kind.is_none_or(|kind| k.for_kind(kind)))
    })
}

/// The keys an experiment of `kind` takes besides `kind` and `name`, in table order.
pub fn of_kind(kind: ExperimentKind) -> impl Iterator<Item = &'static Key> {
    KEYS.iter()
        .filter(move |k| k.table == Table::Experiment && k.present.is_some() && k.for_kind(kind))
}

/// The key names of `table` nearest to `unknown` (one edit away, or a prefix either way), for
/// "did you mean".
pub fn nearest(table: Table, unknown: &str) -> Option<&'static str> {
    of_table(table)
        .map(|k| k.name)
        .filter(|name| name.len() > 1 && unknown.len() > 1)
        .min_by_key(|name| edit_distance(name, unknown))
        .filter(|name| edit_distance(name, unknown) <= 2.max(unknown.len() / 4))
}

/// Levenshtein distance of two short ASCII words (one row of the table).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = if ca == *cb {
                prev
            } else {
                1 + prev.min(row[j]).min(cur)
            };
            prev = cur;
        }
    }
    row[b.len()]
}

/// `docs/keys.md`: the reference page of every key, generated from [`KEYS`]. The suite checks
/// the file is current; `EVALSIM_BLESS=1 cargo test --release --test suite keys_md` rewrites it.
pub fn markdown() -> String {
    let mut out = String::from(
        "# Scenario keys\n\n\
         Generated from the key table in `src/scenario/keys.rs` (the suite fails when this page is \
         stale; `EVALSIM_BLESS=1 cargo test --release --test suite keys_md` rewrites it). \
         \"sweep\" marks the keys `evalsim sweep --set` may vary ([sweep.md](sweep.md)); the last \
         section lists the keys of each experiment kind.\n",
    );
    let cell = |s: &str| s.replace('|', "\\|");
    for table in Table::ALL {
        let heading = if table == Table::Top {
            "Top level"
        } else {
            table.header()
        };
        out.push_str(&format!("\n## {heading}\n\n"));
        if table == Table::Experiment {
            out.push_str(
                "| key | kinds | valid | default | meaning | sweep |\n|---|---|---|---|---|---|\n",
            );
        } else if table == Table::Model {
            out.push_str("| key | valid | default | meaning | honoured by | sweep |\n|---|---|---|---|---|---|\n");
        } else {
            out.push_str("| key | valid | default | meaning | sweep |\n|---|---|---|---|---|\n");
        }
        for k in KEYS.iter().filter(|k| k.table == table) {
            let kinds = if k.kinds.is_empty() {
                "every kind".to_string()
            } else {
                k.kinds
                    .iter()
                    .map(|k| k.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let sweep = if matches!(k.sweep, Sweep::No) {
                ""
            } else {
                "sweep"
            };
            let row = match table {
                Table::Experiment => vec![
                    format!("`{}`", k.name),
                    kinds,
                    cell(k.valid),
                    cell(k.default),
                    cell(k.doc),
                    sweep.into(),
                ],
                Table::Model => vec![
                    format!("`{}`", k.name),
                    cell(k.valid),
                    cell(k.default),
                    cell(k.doc),
                    kinds,
                    sweep.into(),
                ],
                _ => vec![
                    format!("`{}`", k.name),
                    cell(k.valid),
                    cell(k.default),
                    cell(k.doc),
                    sweep.into(),
                ],
            };
            out.push_str(&format!("| {} |\n", row.join(" | ")));
        }
    }
    out.push_str("\n## Keys of each experiment kind\n\nEvery kind also takes `kind` and `name`; a key a kind does not take is refused with the list of those it takes.\n\n| kind | keys |\n|---|---|\n");
    for kind in ExperimentKind::ALL {
        let names: Vec<String> = names_of_kind(kind)
            .iter()
            .map(|n| format!("`{n}`"))
            .collect();
        out.push_str(&format!("| `{}` | {} |\n", kind.as_str(), names.join(", ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_experiment_key_is_taken_by_some_kind_and_has_its_presence() {
        for k in KEYS.iter().filter(|k| k.table == Table::Experiment) {
            let fixed = k.name == "kind" || k.name == "name";
            assert_eq!(k.present.is_none(), fixed, "{}", k.name);
            assert_eq!(k.kinds.is_empty(), fixed, "{}", k.name);
        }
    }

    #[test]
    fn a_key_with_one_line_per_kind_never_gives_one_kind_two_lines() {
        for kind in ExperimentKind::ALL {
            let names: Vec<&str> = of_kind(kind).map(|k| k.name).collect();
            let mut unique = names.clone();
            unique.sort_unstable();
            unique.dedup();
            assert_eq!(names.len(), unique.len(), "{kind:?}: {names:?}");
        }
    }

    #[test]
    fn nearest_suggests_the_key_one_typo_away() {
        assert_eq!(nearest(Table::Model, "shfit"), Some("shift"));
        assert_eq!(nearest(Table::Experiment, "votse"), Some("votes"));
        assert_eq!(nearest(Table::Top, "titel"), Some("title"));
        assert_eq!(nearest(Table::Benchmark, "spread"), None);
    }
}
