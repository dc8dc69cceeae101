//! The key table itself: one [`Key`] per scenario key (see the parent module for what reads it).
use super::{block, Field, Key, Sweep, Table};
use crate::scenario::raw::{ExperimentKind, RawExperiment};

use ExperimentKind::{
    AttractorSweep, Budget, Confidence, Contamination, Cost, Curves, HeadToHead, Judge, Plan,
    SeedVariance, VoteSpread,
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
    // [model.confidence]
    Key {
        table: Table::Confidence,
        name: "separation",
        valid: "a number of SDs in [-10, 10]",
        doc: "a correct sample's confidence is N(separation, 1), a one-off wrong answer's N(0, 1)",
        sweep: Sweep::Model(Field::Real(|m| &mut block(&mut m.confidence).separation)),
        ..BASE
    },
    Key {
        table: Table::Confidence,
        name: "attractor",
        valid: "a number of SDs in [-10, 10]",
        default: "0",
        doc: "the repeated attractor answer's confidence is N(attractor, 1)",
        sweep: Sweep::Model(Field::Real(|m| &mut block(&mut m.confidence).attractor)),
        ..BASE
    },
    // [[experiment]]
    Key {
        table: Table::Experiment,
        name: "kind",
        valid: "\"curves\", \"attractor-sweep\", \"seed-variance\", \"vote-spread\", \"head-to-head\", \"budget\", \"cost\", \"plan\", \"contamination\", \"judge\", \"confidence\"",
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
        doc: "the models it covers (budget and cost: each needs [model.tokens]; confidence: [model.confidence])",
        kinds: &[Curves, Budget, Cost, Confidence],
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
        name: "a",
        valid: "a model name",
        doc: "model A, the baseline of the comparison",
        kinds: &[Judge],
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
        name: "b",
        valid: "a model name other than a",
        doc: "model B, whose win rate over A is reported (shown first by the fixed order)",
        kinds: &[Judge],
        present: set!(b),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "gap",
        valid: "a number of logits in [-10, 10]",
        default: "B's shift minus A's shift",
        doc: "mean quality difference q_B - q_A over questions",
        sweep: Sweep::Experiment(Field::Real(|e| &mut e.gap)),
        kinds: &[Judge],
        present: set!(gap),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "spread",
        valid: "a number of logits in [0, 10]",
        default: "sqrt(shift_sd_A^2 + shift_sd_B^2)",
        doc: "SD of the quality difference over questions",
        sweep: Sweep::Experiment(Field::Real(|e| &mut e.spread)),
        kinds: &[Judge],
        present: set!(spread),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "position_bias",
        valid: "a number of logits in [-10, 10]",
        default: "0",
        doc: "the judge's extra logit for the answer shown first",
        sweep: Sweep::Experiment(Field::Real(|e| &mut e.position_bias)),
        kinds: &[Judge],
        present: set!(position_bias),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "verbosity",
        valid: "a number of logits in [-10, 10]; nonzero needs [model.tokens] in a and b",
        default: "0",
        doc: "the judge's logit per unit of ln(length shown first / length shown second)",
        sweep: Sweep::Experiment(Field::Real(|e| &mut e.verbosity)),
        kinds: &[Judge],
        present: set!(verbosity),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "self_preference",
        valid: "a number of logits in [-10, 10]; nonzero needs judge_family",
        default: "0",
        doc: "the judge's extra logit for an answer of its own family",
        sweep: Sweep::Experiment(Field::Real(|e| &mut e.self_preference)),
        kinds: &[Judge],
        present: set!(self_preference),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "judge_family",
        valid: "the name of model a or b",
        default: "none (the judge belongs to neither)",
        doc: "the model whose family the judge belongs to",
        kinds: &[Judge],
        present: set!(judge_family),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "comparisons",
        valid: "a whole number, 1 to 10000",
        default: "the benchmark's problems",
        doc: "questions N compared per rerun (each protocol's reported rate is over N)",
        sweep: Sweep::Experiment(Field::Whole(|e| &mut e.comparisons)),
        kinds: &[Judge],
        present: set!(comparisons),
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
        valid: "a list of whole numbers, 1 to 64, increasing",
        default: "[16]",
        doc: "samples per vote before filtering",
        kinds: &[Confidence],
        present: set!(k),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "submissions",
        valid: "a list of whole numbers, 1 to 1024, increasing",
        default: "[] (no n@k points)",
        doc: "n of n@k: the n largest answer clusters of k samples are submitted",
        sweep: Sweep::Experiment(Field::WholeList(|e| &mut e.submissions)),
        kinds: &[Curves],
        present: set!(submissions),
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
        name: "shares",
        valid: "a list of shares in (0, 1], increasing",
        default: "[0.125, 0.25, 0.5, 0.75, 1]",
        doc: "kept shares of the top-share filter: the ceil(share k) most confident samples vote",
        kinds: &[Confidence],
        present: set!(shares),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "thresholds",
        valid: "a list of numbers in [-10, 10], increasing",
        default: "[0, 0.5, 1, 1.5, 2]",
        doc: "confidence thresholds of the threshold filter: the samples above t vote",
        kinds: &[Confidence],
        present: set!(thresholds),
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
        kinds: &[Curves, AttractorSweep, Cost, Confidence],
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
        kinds: &[Curves, AttractorSweep, VoteSpread, Cost, Plan, Confidence],
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
        name: "population_reruns",
        valid: "a whole number, 0 to 100000000",
        default: "the smaller of reruns and 3000",
        doc: "simulated reruns per checked cell of the population designs (each redraws every problem)",
        sweep: Sweep::Experiment(Field::Whole(|e| &mut e.population_reruns)),
        kinds: &[Plan],
        present: set!(population_reruns),
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
        name: "reruns",
        valid: "a whole number, 1 to 100000000",
        default: "4000",
        doc: "simulated reruns of the N comparisons",
        sweep: Sweep::Experiment(Field::Whole(|e| &mut e.reruns)),
        kinds: &[Judge],
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
