//! The experiment kinds a scenario can ask for, one row each in [`KINDS`]: the name a scenario
//! file uses and the files an experiment of the kind writes. Everything that lists the kinds
//! (the "one of" of a missing `kind`, the docs, the output-file check) reads this table; what
//! each kind resolves, runs and reports lives with the kind (`resolve`, `experiments`,
//! `report::kinds`).
//!
//! Depends on nothing else in the crate.
use serde::{Deserialize, Serialize};

/// The experiment kinds a scenario can ask for. Each has one row in [`KINDS`], in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExperimentKind {
    /// pass@k, pass^k and maj@k against k.
    Curves,
    /// maj@k for a list of attractor shares.
    AttractorSweep,
    /// Seed variance of the benchmark score for several samples per problem.
    SeedVariance,
    /// Seed SD of maj@k against the averaged pass@1.
    VoteSpread,
    /// How often a better model loses a rerun.
    HeadToHead,
    /// Accuracy against a token budget.
    Budget,
    /// Cost per correct answer of (model, k) strategies.
    Cost,
    /// How many problems and samples tell two models apart (`evalsim plan` from a file).
    Plan,
    /// Public-minus-fresh gap of a contaminated model, and the fresh set that detects it.
    Contamination,
    /// A pairwise judge with position, verbosity and self-preference bias: what each judging
    /// protocol reports against the true win probability.
    Judge,
    /// Confidence-filtered majority vote against the kept share of the k samples.
    Confidence,
}

/// The files an experiment writes, as (suffix after its name, extensions).
pub type Outputs = &'static [(&'static str, &'static [&'static str])];

/// One experiment kind: its variant, the name scenario files use, and its output files.
#[derive(Debug)]
pub struct KindDef {
    pub kind: ExperimentKind,
    pub name: &'static str,
    pub outputs: Outputs,
}

const TABLE_AND_FIGURE: &[&str] = &["csv", "png", "svg"];
const FIGURE: &[&str] = &["png", "svg"];

/// Every kind, in the order the docs list them (and the variants are declared).
pub const KINDS: [KindDef; 11] = [
    KindDef {
        kind: ExperimentKind::Curves,
        name: "curves",
        outputs: &[("", TABLE_AND_FIGURE)],
    },
    KindDef {
        kind: ExperimentKind::AttractorSweep,
        name: "attractor-sweep",
        outputs: &[("", TABLE_AND_FIGURE)],
    },
    KindDef {
        kind: ExperimentKind::SeedVariance,
        name: "seed-variance",
        outputs: &[("", &["csv"]), ("-histograms", FIGURE), ("-sd", FIGURE)],
    },
    KindDef {
        kind: ExperimentKind::VoteSpread,
        name: "vote-spread",
        outputs: &[("", TABLE_AND_FIGURE)],
    },
    KindDef {
        kind: ExperimentKind::HeadToHead,
        name: "head-to-head",
        outputs: &[("", TABLE_AND_FIGURE)],
    },
    KindDef {
        kind: ExperimentKind::Budget,
        name: "budget",
        outputs: &[
            ("", TABLE_AND_FIGURE),
            ("-crossover", &["csv"]),
            ("-lengths", FIGURE),
        ],
    },
    KindDef {
        kind: ExperimentKind::Cost,
        name: "cost",
        outputs: &[("", TABLE_AND_FIGURE)],
    },
    KindDef {
        kind: ExperimentKind::Plan,
        name: "plan",
        outputs: &[
            ("", &["csv", "txt", "json"]),
            ("-loss", FIGURE),
            ("-detectable", FIGURE),
            ("-heatmap", FIGURE),
        ],
    },
    KindDef {
        kind: ExperimentKind::Contamination,
        name: "contamination",
        outputs: &[("", TABLE_AND_FIGURE), ("-plan", &["csv"])],
    },
    KindDef {
        kind: ExperimentKind::Judge,
        name: "judge",
        outputs: &[("", TABLE_AND_FIGURE), ("-distribution", &["csv"])],
    },
    KindDef {
        kind: ExperimentKind::Confidence,
        name: "confidence",
        outputs: &[("", TABLE_AND_FIGURE)],
    },
];

impl ExperimentKind {
    /// Every kind, in the order of [`KINDS`].
    pub const ALL: [ExperimentKind; KINDS.len()] = {
        let mut all = [ExperimentKind::Curves; KINDS.len()];
        let mut i = 0;
        while i < KINDS.len() {
            all[i] = KINDS[i].kind;
            i += 1;
        }
        all
    };

    /// This kind's row of [`KINDS`].
    pub fn def(self) -> &'static KindDef {
        &KINDS[self as usize]
    }

    /// The name used in scenario files.
    pub fn as_str(self) -> &'static str {
        self.def().name
    }

    /// The files an experiment of this kind named `name` writes into the output folder, as
    /// (suffix after the name, extensions): the report's exporters write exactly these.
    pub fn output_stems(self) -> Outputs {
        self.def().outputs
    }

    /// Every file name an experiment of this kind named `name` writes (see
    /// [`ExperimentKind::output_stems`]).
    pub fn output_files(self, name: &str) -> Vec<String> {
        self.output_stems()
            .iter()
            .flat_map(|(suffix, exts)| exts.iter().map(move |x| format!("{name}{suffix}.{x}")))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kinds_row_is_at_its_variants_place_and_names_it_as_scenario_files_do() {
        for (i, def) in KINDS.iter().enumerate() {
            assert_eq!(def.kind as usize, i, "{} is out of place", def.name);
            let written = toml::Value::try_from(def.kind).expect("a kind serialises");
            assert_eq!(written.as_str(), Some(def.name));
            let read: ExperimentKind = toml::Value::String(def.name.into())
                .try_into()
                .expect("a kind name reads");
            assert_eq!(read, def.kind);
        }
    }
}
