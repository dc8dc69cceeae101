//! The minimum detectable gaps of a plan: one root-finding on the exact power per (design, N, n,
//! power), sharing what does not depend on the root. Every population table of one n has the
//! same column for model A (A's nodes do not move with the gap), and every root's doubling
//! search starts from the same gaps (0, 0.05, 0.1, 0.2, ...), so the population moments of
//! each (n, gap) are computed once for all designs and N. Shared values are the values each
//! root would compute on its own, bit for bit: the roots, cells and tables do not change.
use std::sync::Mutex;

use rayon::prelude::*;

use super::{
    detect_powers, exact_cell, fixed_scores, population_a_column, population_nodes_given_a, Design,
    Detectable, Plan,
};
use crate::exact::plan::{
    detect_power, fixed_gap_se, population_gap_se, smallest_gap_with_power, PairMoments,
    PopulationNodes,
};

/// What the root-findings of one plan share.
struct Shared<'a> {
    spec: &'a Plan,
    /// A's column of the population tables of each n of `spec.samples`, computed up front
    /// (not lazily: a lazy cell initialised inside a parallel loop can be re-entered by the
    /// same worker thread while it waits on the table's own parallel loop).
    a_columns: Vec<Vec<f64>>,
    /// The population moments of every (n, gap bits) evaluated so far.
    moments: Mutex<Vec<((u32, u64), PairMoments)>>,
}

impl<'a> Shared<'a> {
    fn new(spec: &'a Plan) -> Shared<'a> {
        Shared {
            spec,
            a_columns: spec
                .samples
                .iter()
                .map(|&n| population_a_column(spec, n))
                .collect(),
            moments: Mutex::new(Vec::new()),
        }
    }

    /// The population table of (gap, n), with A's column computed once per n.
    fn nodes(&self, gap: f64, n: u32) -> PopulationNodes {
        let fa = self
            .spec
            .samples
            .iter()
            .position(|&s| s == n)
            .map(|i| self.a_columns[i].clone());
        population_nodes_given_a(self.spec, gap, n, fa)
    }

    /// The population moments of (gap, n), computed once.
    fn moments(&self, gap: f64, n: u32) -> PairMoments {
        let key = (n, gap.to_bits());
        let lock = || self.moments.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&(_, m)) = lock().iter().find(|(k, _)| *k == key) {
            return m;
        }
        // Two threads may compute the same key at once: both get the same bits.
        let m = self.nodes(gap, n).moments();
        lock().push((key, m));
        m
    }

    /// The power of one (design, N, n) at a logit gap (the exact gap and SE, then
    /// [`detect_power`]). Time: O(N) fixed; a population table otherwise (once per (n, gap)).
    fn power_at(&self, design: Design, big_n: usize, n: u32, gap: f64) -> f64 {
        let t = self.spec.metric.trials(n);
        let (diff, se) = match design {
            Design::Fixed => {
                let (fa, fb) = fixed_scores(self.spec, big_n, n, gap);
                fixed_gap_se(&fa, &fb, t)
            }
            _ => {
                let m = self.moments(gap, n);
                population_gap_se(&m, t, big_n, design == Design::PopulationPaired)
            }
        };
        detect_power(diff, se)
    }
}

/// The power of one (design, N, n) at a logit gap, on its own (for tests).
#[cfg(test)]
pub(super) fn power_at(spec: &Plan, design: Design, big_n: usize, n: u32, gap: f64) -> f64 {
    Shared::new(spec).power_at(design, big_n, n, gap)
}

/// The minimum detectable gap of every (design, N, n, power) by root-finding on the exact
/// power ([`smallest_gap_with_power`]), with its exact cell and population table (for the
/// simulated check). In parallel over the roots.
pub(super) fn detectable_exact(spec: &Plan) -> Vec<(Detectable, Option<PopulationNodes>)> {
    let shared = Shared::new(spec);
    let mut keys = Vec::new();
    for design in Design::ALL {
        for &big_n in &spec.problems {
            for &n in &spec.samples {
                for &power in &detect_powers(spec) {
                    keys.push((design, big_n, n, power));
                }
            }
        }
    }
    keys.par_iter()
        .map(|&(design, big_n, n, power)| {
            let root = smallest_gap_with_power(power, |g| shared.power_at(design, big_n, n, g));
            let (cell, nodes) = match root {
                Some(g) => {
                    let nodes = shared.nodes(g, n);
                    let cell = exact_cell(spec, (design, g, big_n, n), &nodes, None);
                    (Some(cell), Some(nodes))
                }
                None => (None, None),
            };
            (
                Detectable {
                    design,
                    problems: big_n,
                    samples: n,
                    power,
                    cell,
                },
                nodes,
            )
        })
        .collect()
}
