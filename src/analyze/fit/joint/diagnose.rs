//! Identification diagnostics: which parameters of the joint model the data cannot identify
//! (all-or-none problems, one sample per problem, too few problems, shared problems or runs),
//! why, and what data would identify them. Pure: counts in, diagnoses out.

use serde::{Deserialize, Serialize};

use super::{Parameter, MIN_REPEATED_PROBLEMS, MIN_SHARED_PROBLEMS};
use crate::exact::joint_likelihood::JointData;

/// Why a parameter is not identified.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Unidentified {
    /// Too few problems with 0 < c < n.
    AllOrNone {
        /// Problems with 0 < c < n (for sigma: for some model; for tau\[m\]: for model m).
        informative: usize,
        /// Problems considered.
        problems: usize,
    },
    /// Every count has n = 1 (for sigma: every model's).
    OneSamplePerProblem,
    /// omega: fewer than 5 problems where the model has at least 2 runs of at least 2 samples.
    TooFewRuns {
        /// Problems with at least 2 runs of at least 2 samples each.
        repeated: usize,
        /// Problems the model answered.
        problems: usize,
    },
    /// tau\[m\]: fewer than [`MIN_SHARED_PROBLEMS`] problems shared with another model.
    TooFewShared {
        /// Problems this model shares with at least one other model.
        shared: usize,
        /// Problems the model answered.
        problems: usize,
    },
    /// Fewer than 5 problems.
    TooFewProblems {
        /// Problems in the data.
        problems: usize,
    },
    /// Every count all right: the location runs to +infinity.
    AllRight,
    /// Every count all wrong: the location runs to -infinity.
    AllWrong,
}

/// A parameter the data cannot identify, and what would.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnosis {
    /// The parameter.
    pub parameter: Parameter,
    /// Why.
    pub reason: Unidentified,
    /// What data would identify it.
    pub remedy: String,
}

impl std::fmt::Display for Diagnosis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let why = match &self.reason {
            Unidentified::AllOrNone {
                informative,
                problems,
            } => format!(
                "only {informative} of {problems} problems have some but not all samples right"
            ),
            Unidentified::OneSamplePerProblem => "every problem has one sample".to_string(),
            Unidentified::TooFewProblems { problems } => format!("only {problems} problems"),
            Unidentified::TooFewShared { shared, problems } => format!(
                "only {shared} of its {problems} problems are answered by another model too (a shift_sd is the part of a model's spread the other models do not share, seen only on common problems)"
            ),
            Unidentified::TooFewRuns { repeated, problems } => format!(
                "only {repeated} of {problems} problems have at least 2 runs of at least 2 samples"
            ),
            Unidentified::AllRight => "every sample is right".to_string(),
            Unidentified::AllWrong => "every sample is wrong".to_string(),
        };
        write!(
            f,
            "{} is not identified: {why}; {}",
            self.parameter, self.remedy
        )
    }
}

/// Identification diagnostics of the data (module doc).
pub fn diagnose(data: &JointData) -> Vec<Diagnosis> {
    let models = data.models();
    let problems = data.problems();
    let rows = data.rows();
    let mut out = Vec::new();
    let more_problems = "more problems (at least 5, better 30 or more)".to_string();
    let intermediate = "more samples per problem or problems of intermediate difficulty, so that more problems have some but not all samples right";
    let multi = "at least 2 samples per problem (8 or more is better)";
    let free_taus: Vec<usize> = if models == 1 {
        Vec::new()
    } else {
        (0..models).collect()
    };
    let all_n1 = |m: usize| rows.iter().filter_map(|r| r[m]).all(|c| c.samples == 1);
    let shared = |m: usize| {
        rows.iter()
            .filter(|r| r[m].is_some() && r.iter().filter(|e| e.is_some()).count() >= 2)
            .count()
    };
    // sigma
    let informative = rows
        .iter()
        .filter(|r| r.iter().flatten().any(|c| c.is_intermediate()))
        .count();
    if problems < 5 {
        out.push(Diagnosis {
            parameter: Parameter::Sigma,
            reason: Unidentified::TooFewProblems { problems },
            remedy: more_problems.clone(),
        });
    } else if (0..models).all(all_n1) {
        out.push(Diagnosis {
            parameter: Parameter::Sigma,
            reason: Unidentified::OneSamplePerProblem,
            remedy: multi.to_string(),
        });
    } else if informative < 5 || (informative as f64) < 0.2 * problems as f64 {
        out.push(Diagnosis {
            parameter: Parameter::Sigma,
            reason: Unidentified::AllOrNone {
                informative,
                problems,
            },
            remedy: intermediate.to_string(),
        });
    }
    // locations
    for m in 0..models {
        let counts: Vec<_> = rows.iter().filter_map(|r| r[m]).collect();
        let parameter = if m == 0 {
            Parameter::Mu
        } else {
            Parameter::Shift(m)
        };
        let remedy = "problems this model sometimes gets wrong and sometimes right".to_string();
        if counts.iter().all(|c| c.correct == c.samples) {
            out.push(Diagnosis {
                parameter,
                reason: Unidentified::AllRight,
                remedy: format!("harder {remedy}"),
            });
        } else if counts.iter().all(|c| c.correct == 0) {
            out.push(Diagnosis {
                parameter,
                reason: Unidentified::AllWrong,
                remedy: format!("easier {remedy}"),
            });
        }
    }
    // taus
    for &m in &free_taus {
        let counts: Vec<_> = rows.iter().filter_map(|r| r[m]).collect();
        let informative = counts.iter().filter(|c| c.is_intermediate()).count();
        let (reason, remedy) = if problems < 5 {
            (
                Unidentified::TooFewProblems { problems },
                more_problems.clone(),
            )
        } else if all_n1(m) {
            (Unidentified::OneSamplePerProblem, multi.to_string())
        } else if shared(m) < MIN_SHARED_PROBLEMS {
            (
                Unidentified::TooFewShared {
                    shared: shared(m),
                    problems: counts.len(),
                },
                format!("at least {MIN_SHARED_PROBLEMS} problems (better 30 or more) answered by this model and another one"),
            )
        } else if informative < 5 {
            (
                Unidentified::AllOrNone {
                    informative,
                    problems: counts.len(),
                },
                intermediate.to_string(),
            )
        } else {
            continue;
        };
        out.push(Diagnosis {
            parameter: Parameter::Tau(m),
            reason,
            remedy,
        });
    }
    // omegas: per-run data only
    if let Some(runs) = data.runs() {
        for m in 0..models {
            let entries: Vec<&Vec<crate::exact::joint_likelihood::Count>> =
                runs.iter().filter_map(|r| r[m].as_ref()).collect();
            let repeated = entries
                .iter()
                .filter(|l| l.iter().filter(|c| c.samples >= 2).count() >= 2)
                .count();
            if repeated < MIN_REPEATED_PROBLEMS {
                out.push(Diagnosis {
                    parameter: Parameter::Omega(m),
                    reason: Unidentified::TooFewRuns {
                        repeated,
                        problems: entries.len(),
                    },
                    remedy: format!("at least 2 runs (reruns of the benchmark, a `run` column) of at least 2 samples each on at least {MIN_REPEATED_PROBLEMS} problems"),
                });
            }
        }
    }
    out
}
