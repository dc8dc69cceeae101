//! The `[[experiment]]` keys of the key table; experiment keys whose default or meaning differs
//! by kind have one line per meaning.
use super::super::domain::{at_least, closed, closed_open, finite, open, open_closed, whole};
use super::super::{Field, Key, Sweep, Table};
use super::{BASE, MAX_COMPARISONS, MAX_GAPS, MAX_JUDGE_LOGIT, MAX_PLAN_SAMPLES, MAX_THRESHOLD};
use crate::exact::confidence::MAX_TOP_SHARE_K;
use crate::exact::plan::MAX_PLAN_SHIFT_SD;
use crate::scenario::raw::{ExperimentKind, RawExperiment};
use crate::scenario::{
    MAX_DRAWS, MAX_K, MAX_LIST, MAX_LOGIT, MAX_PROBLEMS, MAX_SAMPLES, MAX_TOKEN_SCALE,
};

use ExperimentKind::{
    AttractorSweep, Budget, Confidence, Contamination, Cost, Curves, HeadToHead, Judge, Plan,
    SeedVariance, VoteSpread,
};

/// The experiment keys, in the order `docs/keys.md` lists them.
// Every line ends in `..BASE` so that the table reads the same whichever fields a key sets.
#[allow(clippy::needless_update)]
pub(super) const KEYS: &[Key] = &[
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
        valid: "a number of logits in {}",
        domain: Some(closed(-MAX_JUDGE_LOGIT, MAX_JUDGE_LOGIT)),
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
        valid: "a number of logits in {}",
        domain: Some(closed(0.0, MAX_JUDGE_LOGIT)),
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
        valid: "a number of logits in {}",
        domain: Some(closed(-MAX_JUDGE_LOGIT, MAX_JUDGE_LOGIT)),
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
        valid: "a number of logits in {}",
        domain: Some(closed(-MAX_JUDGE_LOGIT, MAX_JUDGE_LOGIT)),
        note: "; nonzero needs [model.tokens] in a and b",
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
        valid: "a number of logits in {}",
        domain: Some(closed(-MAX_JUDGE_LOGIT, MAX_JUDGE_LOGIT)),
        note: "; nonzero needs judge_family",
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
        valid: "a whole number, {}",
        domain: Some(whole(1, MAX_COMPARISONS)),
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
        valid: "a list of {n} logit gaps in {}",
        domain: Some(closed(-MAX_LOGIT, MAX_LOGIT).list(1, MAX_GAPS)),
        default: "required unless gap_points is given",
        doc: "B's advantage over A in logits",
        kinds: &[Plan],
        present: set!(gap_logits),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "gap_points",
        valid: "a list of {n} gaps in points of population pass@1",
        domain: Some(finite().list(1, MAX_GAPS)),
        default: "required unless gap_logits is given",
        doc: "B's advantage over A in points of the score",
        kinds: &[Plan],
        present: set!(gap_points),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "problems",
        valid: "a list of whole numbers, {}",
        domain: Some(whole(1, MAX_PROBLEMS).list(1, MAX_LIST).increasing()),
        default: "[30, 100, 300, 1000]",
        doc: "benchmark sizes of the plan's grid",
        kinds: &[Plan],
        present: set!(problems),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "samples",
        valid: "a list of whole numbers, {}",
        domain: Some(whole(1, MAX_PLAN_SAMPLES).list(1, MAX_LIST).increasing()),
        default: "[1, 4, 16, 64]",
        doc: "samples per problem of the plan's grid (pass1)",
        kinds: &[Plan],
        present: set!(samples),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "attractor",
        valid: "a list of shares in {}",
        domain: Some(closed(0.0, 1.0).list(1, MAX_LIST)),
        note: " (factors >= 0 with vary = \"scale\")",
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
        valid: "a list of shares in {}",
        domain: Some(closed_open(0.0, 1.0).list(1, MAX_LIST)),
        default: "none",
        doc: "sweep the model's split share instead of its attractor",
        kinds: &[AttractorSweep],
        present: set!(split),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "grader_fpr",
        valid: "a list of probabilities in {}",
        domain: Some(closed(0.0, 1.0).list(1, MAX_LIST)),
        default: "none",
        doc: "sweep the model's grader false-positive rate instead of its attractor",
        kinds: &[AttractorSweep],
        present: set!(grader_fpr),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "k",
        valid: "a list of whole numbers, {}",
        domain: Some(whole(1, MAX_K).list(1, MAX_LIST).increasing()),
        default: "[1, 2, 4, 8, 16, 32, 64]",
        doc: "samples per problem of each point",
        kinds: &[Curves, AttractorSweep],
        present: set!(k),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "k",
        valid: "a list of whole numbers, {}",
        domain: Some(whole(1, MAX_TOP_SHARE_K as u64).list(1, MAX_LIST).increasing()),
        default: "[16]",
        doc: "samples per vote before filtering",
        kinds: &[Confidence],
        present: set!(k),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "submissions",
        valid: "a list of whole numbers, {}",
        domain: Some(whole(1, MAX_K).list(1, MAX_LIST).increasing()),
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
        valid: "a list of whole numbers, {}",
        domain: Some(whole(1, MAX_K).list(1, MAX_LIST).increasing()),
        default: "[16]",
        doc: "samples per vote",
        kinds: &[VoteSpread],
        present: set!(k),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "k",
        valid: "a list of whole numbers, {}",
        domain: Some(whole(1, MAX_K).list(1, MAX_LIST).increasing()),
        default: "[1, 8, 32]",
        doc: "samples per problem of each strategy",
        kinds: &[Cost],
        present: set!(k),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "k",
        valid: "a list of whole numbers, {}",
        domain: Some(whole(1, MAX_K).list(1, MAX_LIST).increasing()),
        default: "required with metric = \"maj\"",
        doc: "samples per vote of a maj plan",
        kinds: &[Plan],
        present: set!(k),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "n",
        valid: "a list of whole numbers, {}",
        domain: Some(whole(1, MAX_SAMPLES).list(1, MAX_LIST).increasing()),
        default: "[1, 4, 16, 64]",
        doc: "samples per problem of each rerun",
        kinds: &[SeedVariance, HeadToHead],
        present: set!(n),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "n",
        valid: "one whole number, {}",
        domain: Some(whole(1, MAX_SAMPLES).list(1, MAX_LIST)),
        default: "[1]",
        doc: "samples per problem",
        kinds: &[Contamination],
        present: set!(n),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "fresh",
        valid: "a list of whole numbers, {}",
        domain: Some(whole(1, MAX_PROBLEMS).list(1, MAX_LIST).increasing()),
        default: "[25, 50, 100, 200, 400]",
        doc: "fresh set sizes of the power curve",
        kinds: &[Contamination],
        present: set!(fresh),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "shares",
        valid: "a list of shares in {}",
        domain: Some(open_closed(0.0, 1.0).list(1, MAX_LIST).increasing()),
        default: "[benchmark.contaminated]",
        doc: "contaminated shares the power curve and plan cover",
        kinds: &[Contamination],
        present: set!(shares),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "shares",
        valid: "a list of shares in {}",
        domain: Some(open_closed(0.0, 1.0).list(1, MAX_LIST).increasing()),
        default: "[0.125, 0.25, 0.5, 0.75, 1]",
        doc: "kept shares of the top-share filter: the ceil(share k) most confident samples vote",
        kinds: &[Confidence],
        present: set!(shares),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "thresholds",
        valid: "a list of numbers in {}",
        domain: Some(closed(-MAX_THRESHOLD, MAX_THRESHOLD).list(1, MAX_LIST).increasing()),
        default: "[0, 0.5, 1, 1.5, 2]",
        doc: "confidence thresholds of the threshold filter: the samples above t vote",
        kinds: &[Confidence],
        present: set!(thresholds),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "budgets",
        valid: "{n} token caps in {}",
        domain: Some(open_closed(0.0, MAX_TOKEN_SCALE).list(2, MAX_LIST).increasing()),
        doc: "the token budgets of the accuracy curve",
        kinds: &[Budget],
        present: set!(budgets),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "votes",
        valid: "a whole number, {}",
        domain: Some(whole(1, MAX_DRAWS)),
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
        valid: "a whole number, {}",
        domain: Some(whole(1, MAX_DRAWS)),
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
        valid: "a token cap in {}",
        domain: Some(open_closed(0.0, MAX_TOKEN_SCALE)),
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
        valid: "a price {}",
        domain: Some(at_least(0.0)),
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
        valid: "a whole number, {}",
        domain: Some(whole(1, MAX_DRAWS)),
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
        valid: "a whole number, {}",
        domain: Some(whole(1, MAX_DRAWS)),
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
        valid: "a whole number, {}",
        domain: Some(whole(0, MAX_DRAWS)),
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
        valid: "a whole number, {}",
        domain: Some(whole(0, MAX_DRAWS)),
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
        valid: "a whole number, {}",
        domain: Some(whole(1, MAX_DRAWS)),
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
        valid: "a whole number, {}",
        domain: Some(whole(1, MAX_DRAWS)),
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
        valid: "a fraction in {}",
        domain: Some(open(0.0, 1.0)),
        default: "0.05",
        doc: "the plan's target probability that B does not beat A",
        kinds: &[Plan],
        present: set!(target_loss_or_tie),
        ..BASE
    },
    Key {
        table: Table::Experiment,
        name: "target_halfwidth",
        valid: "a fraction in {}",
        domain: Some(open(0.0, 1.0)),
        default: "0.02",
        doc: "the plan's target half-width of the 95% interval of B - A; 0.02 is 2 points",
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
        valid: "a number of logits in {}",
        domain: Some(closed(0.0, MAX_PLAN_SHIFT_SD)),
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
        valid: "a probability in {}",
        domain: Some(open(0.05, 1.0)),
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
        valid: "a probability in {}",
        domain: Some(open(0.0, 1.0)),
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
        valid: "a probability in {}",
        domain: Some(open(0.0, 1.0)),
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
        valid: "a whole number, {}",
        domain: Some(whole(1, MAX_PROBLEMS)),
        default: "2000",
        doc: "largest fresh set the plan scans",
        sweep: Sweep::Experiment(Field::Whole(|e| &mut e.max_fresh)),
        kinds: &[Contamination],
        present: set!(max_fresh),
        ..BASE
    },
];
