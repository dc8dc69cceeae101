//! The plan's random draws: literal binomial counts and majority votes for paired reruns of
//! two models, on the fixed benchmark or on problems redrawn from the population, run in
//! deterministic batches. Every stream is keyed by (seed, "plan", metric, design, N, n, gap,
//! batch, model), so a cell's draws depend on nothing else. Depends on [`crate::model`],
//! [`crate::scenario::spec`] (the plan it simulates) and the samplers of this module's siblings.
use rand::RngCore;
use rand_distr::{Binomial, Distribution, StandardNormal};
use rayon::prelude::*;

use super::counts::{pair_tallies, staged_count, CountSampler, PairSampler, PairTally as Tally};
use super::modes::{GradedVoteSampler, ModeVoteSampler};
use super::picks::binomial;
use super::stream::{name_id, stream, Rng};
use super::votes::{self, AttractorTables, VoteSampler};
use super::{batches, run_merged};
use crate::exact::grader::SampleGrading;
use crate::exact::maj::ln_factorials;
use crate::exact::modes::Extraction;
use crate::exact::plan::fixed_pair_rates_with;
use crate::model::{expit, VoteRule};
use crate::scenario::spec::{Design, Plan, PlanMetric, PlanSpec};

/// Where the simulation reports progress: called with the reruns just done, each weighted by
/// its cell's [`Plan::rerun_cost`].
pub type Progress<'a> = &'a (dyn Fn(u64) + Sync);

/// Largest number of alias-table entries (N (n + 1) or N (k + 1)) a fixed-design simulated cell
/// may build per model (about 200 MB); larger cells draw each count with BTPE instead.
const TABLE_ENTRIES: u64 = 1 << 24;

/// A majority vote of k samples scored answer by answer, for a correct count drawn by the
/// caller: [`AttractorTables::correct_wins`], the route of [`crate::sim::votes::VoteSampler`].
#[derive(Debug, Clone)]
struct LiteralVoter {
    k: u32,
    rule: VoteRule,
    /// Bin(m, a) for m = 0..=k.
    others: AttractorTables,
}

impl LiteralVoter {
    /// Time and memory: O(k^2).
    fn new(k: u32, attractor: f64, rule: VoteRule) -> LiteralVoter {
        LiteralVoter {
            k,
            rule,
            others: AttractorTables::new(k, attractor, &ln_factorials(k)),
        }
    }

    /// Whether the correct answer wins, given c correct answers among the k.
    #[inline]
    fn wins<R: RngCore>(&self, c: u32, rng: &mut R) -> bool {
        self.others.correct_wins(self.k, c, self.rule, rng)
    }

    /// One vote on a problem with solve rate p.
    #[inline]
    fn vote<R: RngCore>(&self, p: f64, rng: &mut R) -> u64 {
        let c = binomial(self.k, p, rng);
        u64::from(self.wins(c, rng))
    }
}

/// The stream key of a cell: (seed, "plan", metric, design, N, n, gap); batches and models are
/// appended.
fn stream_prefix(spec: &Plan, design: Design, (gap, big_n, n): (f64, usize, u32)) -> Vec<u64> {
    let mut prefix = vec![name_id("plan")];
    prefix.extend(metric_key(spec.metric));
    if design != Design::Fixed {
        prefix.push(name_id(design.as_str()));
    }
    prefix.extend([big_n as u64, u64::from(n), gap.to_bits()]);
    if spec.shift_sd != 0.0 {
        // Only with a disagreement, so plans without one keep their streams.
        prefix.extend([name_id("shift_sd"), spec.shift_sd.to_bits()]);
    }
    if let Some(m) = &spec.model_shift_sd {
        // Only with a model's own deviation, likewise.
        prefix.extend([
            name_id("model_shift_sd"),
            m.tau.to_bits(),
            name_id(&m.model),
        ]);
        if let Some(b) = m.tau_b {
            // Only with B's own SD given, likewise.
            prefix.extend([name_id("b_shift_sd"), b.to_bits()]);
        }
    }
    let a = &spec.answers;
    if a.changes(spec.metric) {
        // Only when the harness grades differently from the truth, likewise.
        prefix.extend([name_id("answers"), a.unparsed.to_bits(), a.split.to_bits()]);
        if let Some(g) = a.grader {
            prefix.extend([name_id("grader"), g.fpr.to_bits(), g.fnr.to_bits()]);
        }
        prefix.extend(a.attractors.iter().map(|x| x.to_bits()));
    }
    prefix
}

/// Runs `reruns` paired reruns of one cell in batches of 4,096, each batch with a stream per
/// model keyed by ([`stream_prefix`], batch, model). `draw` returns one rerun's totals
/// (T_A, T_B) from the two streams.
fn run_cell(
    spec: &Plan,
    design: Design,
    cell: (f64, usize, u32),
    progress: Progress,
    draw: impl Fn(&mut Rng, &mut Rng) -> (u64, u64) + Sync,
) -> Tally {
    let prefix = stream_prefix(spec, design, cell);
    let tasks: Vec<(u64, u64)> = batches(spec.reruns_of(design)).collect();
    run_merged(
        &tasks,
        Tally::default(),
        |&(batch, count)| {
            let mut key = prefix.clone();
            key.extend([batch, 0]);
            let mut rng_a = stream(spec.seed, &key);
            let last = key.len() - 1;
            key[last] = 1;
            let mut rng_b = stream(spec.seed, &key);
            let mut t = Tally::default();
            for _ in 0..count {
                let (ta, tb) = draw(&mut rng_a, &mut rng_b);
                t.add(ta, tb);
            }
            progress(count);
            t
        },
        Tally::merge,
    )
}

/// Count samplers of models A and B for a fixed-design pass@1 cell: alias tables, or BTPE draws
/// when the tables would exceed `TABLE_ENTRIES`.
fn fixed_samplers(spec: &Plan, (gap, big_n, n): (f64, usize, u32)) -> PairSampler {
    let (ra, rb) = fixed_rates(spec, gap, big_n);
    if spec.answers.changes(PlanMetric::Pass1) {
        // Every sample parsed, solved and graded stage by stage (the exact side uses the graded
        // rate p~, which these draws never see).
        let grading = grading(spec);
        let staged = |rates: Vec<f64>| CountSampler::Staged { rates, n, grading };
        return PairSampler::Separate(staged(ra), staged(rb));
    }
    let big = big_n as u64 * (u64::from(n) + 1) > TABLE_ENTRIES;
    if big && n > 1 {
        let btpe = |r: &[f64]| {
            CountSampler::Btpe(
                r.iter()
                    .filter_map(|&p| Binomial::new(u64::from(n), p).ok())
                    .collect(),
            )
        };
        PairSampler::Separate(btpe(&ra), btpe(&rb))
    } else {
        PairSampler::new(n, &ra, &rb, spec.reruns)
    }
}

/// How a plan's samples are parsed and graded (both models alike).
fn grading(spec: &Plan) -> SampleGrading {
    SampleGrading {
        unparsed: spec.answers.unparsed,
        grader: spec.answers.grader,
    }
}

/// A literal vote of k samples under the plan's answer keys (several attractors, split,
/// unparsed, a grader): labels drawn sample by sample ([`ModeVoteSampler`]), the pick graded
/// once when there is a grader ([`GradedVoteSampler`]).
enum ModeVoter {
    Plain(ModeVoteSampler),
    Graded(GradedVoteSampler),
}

impl ModeVoter {
    /// The voter of a problem with true solve rate p (O(m) to build).
    fn new(spec: &Plan, p: f64, k: u32, rule: VoteRule) -> ModeVoter {
        let a = &spec.answers;
        let shares = match spec.metric {
            _ if !a.attractors.is_empty() => a.attractors.clone(),
            PlanMetric::Maj { attractor, .. } => vec![attractor],
            PlanMetric::Pass1 => Vec::new(),
        };
        let extraction = Extraction {
            unparsed: a.unparsed,
            split: a.split,
        };
        let vote = ModeVoteSampler::new(p, &shares, extraction, k, rule);
        match a.grader {
            Some(grader) => ModeVoter::Graded(GradedVoteSampler { vote, grader }),
            None => ModeVoter::Plain(vote),
        }
    }

    /// 1 when the vote is (graded) won.
    fn win<R: RngCore>(&self, rng: &mut R) -> u64 {
        u64::from(match self {
            ModeVoter::Plain(v) => v.sample(rng).win,
            ModeVoter::Graded(v) => v.sample(rng).win,
        })
    }
}

/// Both models' per-problem rates on the fixed benchmark of a cell (with their fixed offsets).
fn fixed_rates(spec: &Plan, gap: f64, big_n: usize) -> (Vec<f64>, Vec<f64>) {
    fixed_pair_rates_with(
        spec.mu,
        spec.sigma,
        gap,
        spec.deviation_sds(),
        spec.deviation_name(),
        big_n,
    )
}

/// Table entries of a fixed-design pass@1 cell's two samplers (for the memory budget).
fn fixed_entries((_, big_n, n): (f64, usize, u32)) -> u64 {
    2 * (big_n as u64 * (u64::from(n) + 1)).min(TABLE_ENTRIES)
}

/// Simulates every chosen (design, cell), returning each one's tally (in `chosen`'s order). Fixed-design pass@1 cells run together, as one parallel
/// job of (cell, batch) tasks ([`pair_tallies`]) in groups whose tables fit in `TABLE_ENTRIES`
/// x 2, so the threads stay busy to the end; the other cells run one after another, each in
/// parallel over its batches. Stops early (with zero tallies) once an interruption is requested.
pub fn simulate_chosen(
    spec: &Plan,
    chosen: &[(Design, (f64, usize, u32))],
    progress: Progress,
) -> Vec<Tally> {
    let mut out = vec![Tally::default(); chosen.len()];
    let together = |d: Design| d == Design::Fixed && spec.metric == PlanMetric::Pass1;
    // (Graded pass@1 cells run together too: their samplers draw stage by stage.)
    let fixed: Vec<usize> = (0..chosen.len())
        .filter(|&i| together(chosen[i].0))
        .collect();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut entries = u64::MAX;
    for &i in &fixed {
        let e = fixed_entries(chosen[i].1);
        if entries.saturating_add(e) > 2 * TABLE_ENTRIES {
            groups.push(Vec::new());
            entries = 0;
        }
        entries += e;
        if let Some(g) = groups.last_mut() {
            g.push(i);
        }
    }
    for group in groups {
        if crate::interrupt::requested() {
            return out;
        }
        // The group's cells run interleaved: each batch is reported at the group's mean cost.
        let cost = group
            .iter()
            .map(|&i| {
                let (_, big_n, n) = chosen[i].1;
                spec.rerun_cost(Design::Fixed, big_n, n)
            })
            .sum::<u64>()
            / group.len().max(1) as u64;
        let weighted = |r: u64| progress(r.saturating_mul(cost));
        let samplers: Vec<PairSampler> = group
            .par_iter()
            .map(|&i| fixed_samplers(spec, chosen[i].1))
            .collect();
        let keys: Vec<Vec<u64>> = group
            .iter()
            .map(|&i| stream_prefix(spec, Design::Fixed, chosen[i].1))
            .collect();
        let cells: Vec<(&[u64], &PairSampler)> =
            keys.iter().map(|k| k.as_slice()).zip(&samplers).collect();
        for (&i, t) in group
            .iter()
            .zip(pair_tallies(spec.seed, &cells, spec.reruns, &weighted))
        {
            out[i] = t;
        }
    }
    for (i, &(design, cell)) in chosen.iter().enumerate() {
        if together(design) {
            continue;
        }
        if crate::interrupt::requested() {
            break;
        }
        let cost = spec.rerun_cost(design, cell.1, cell.2);
        out[i] = simulate_cell(spec, design, cell, &|r| progress(r.saturating_mul(cost)));
    }
    out
}

/// Simulates one cell in one design.
fn simulate_cell(
    spec: &Plan,
    design: Design,
    cell: (f64, usize, u32),
    progress: Progress,
) -> Tally {
    let (gap, big_n, n) = cell;
    let (mu, sigma) = (spec.mu, spec.sigma);
    let big = big_n as u64 * (u64::from(n) + 1) > TABLE_ENTRIES;
    match (design, spec.metric) {
        (Design::Fixed, PlanMetric::Pass1) => {
            let sampler = fixed_samplers(spec, cell);
            let key = stream_prefix(spec, design, cell);
            pair_tallies(spec.seed, &[(&key, &sampler)], spec.reruns, progress)[0]
        }
        (Design::Fixed, PlanMetric::Maj { rule, .. }) if spec.answers.changes(spec.metric) => {
            let (ra, rb) = fixed_rates(spec, gap, big_n);
            let voters = |r: &[f64]| -> Vec<ModeVoter> {
                r.iter()
                    .map(|&p| ModeVoter::new(spec, p, n, rule))
                    .collect()
            };
            let (va, vb) = (voters(&ra), voters(&rb));
            let total =
                |vs: &[ModeVoter], rng: &mut Rng| -> u64 { vs.iter().map(|v| v.win(rng)).sum() };
            run_cell(spec, design, cell, progress, |a, b| {
                (total(&va, a), total(&vb, b))
            })
        }
        (Design::Fixed, PlanMetric::Maj { attractor, rule }) => {
            let (ra, rb) = fixed_rates(spec, gap, big_n);
            if big {
                let voter = LiteralVoter::new(n, attractor, rule);
                let bins = |r: &[f64]| -> Vec<Binomial> {
                    r.iter()
                        .filter_map(|&p| Binomial::new(u64::from(n), p).ok())
                        .collect()
                };
                let (ba, bb) = (bins(&ra), bins(&rb));
                let total = |bs: &[Binomial], rng: &mut Rng| -> u64 {
                    bs.iter()
                        .map(|b| u64::from(voter.wins(b.sample(rng) as u32, rng)))
                        .sum()
                };
                run_cell(spec, design, cell, progress, |a, b| {
                    (total(&ba, a), total(&bb, b))
                })
            } else {
                let lnf = ln_factorials(n);
                let tables = AttractorTables::new(n, attractor, &lnf);
                let samplers = |r: &[f64]| votes::samplers(n, r, &tables, rule, &lnf, spec.reruns);
                let (sa, sb) = (samplers(&ra), samplers(&rb));
                let total = |ss: &[VoteSampler], rng: &mut Rng| -> u64 {
                    ss.iter().map(|s| u64::from(s.sample(rng).win)).sum()
                };
                run_cell(spec, design, cell, progress, |a, b| {
                    (total(&sa, a), total(&sb, b))
                })
            }
        }
        (_, metric) => {
            // Problems redrawn every rerun: one z per problem for both models when paired, one
            // each otherwise; then the problem's score (its count, or its vote) drawn literally.
            let literal = !spec.answers.changes(metric);
            let voter = match metric {
                PlanMetric::Maj { attractor, rule } if literal => {
                    Some(LiteralVoter::new(n, attractor, rule))
                }
                _ => None,
            };
            let grading = grading(spec);
            // Graded: a pass@1 count drawn stage by stage, or a vote drawn label by label.
            let score = |p: f64, rng: &mut Rng| match (&voter, metric) {
                (Some(v), _) => v.vote(p, rng),
                (None, PlanMetric::Pass1) if literal => u64::from(binomial(n, p, rng)),
                (None, PlanMetric::Pass1) => staged_count(rng, p, n, &grading),
                (None, PlanMetric::Maj { rule, .. }) => ModeVoter::new(spec, p, n, rule).win(rng),
            };
            let paired = design == Design::PopulationPaired;
            let (tau_a, tau) = spec.deviation_sds();
            run_cell(spec, design, cell, progress, |a, b| {
                (0..big_n).fold((0, 0), |(x, y), _| {
                    let za: f64 = StandardNormal.sample(a);
                    let zb: f64 = if paired { za } else { StandardNormal.sample(b) };
                    // A's own deviation e_A, drawn from A's stream only when tau_A > 0 (the
                    // model's `shift_sd`): the literal model z + tau_A e_A, not the conditional
                    // form the exact values integrate, so the check compares the two.
                    let la = if tau_a == 0.0 {
                        mu + sigma * za
                    } else {
                        let e: f64 = StandardNormal.sample(a);
                        mu + sigma * za + tau_a * e
                    };
                    // B's own deviation e, drawn from B's stream only when tau > 0 (so plans
                    // without one keep their draws).
                    let lb = if tau == 0.0 {
                        mu + gap + sigma * zb
                    } else {
                        let e: f64 = StandardNormal.sample(b);
                        mu + gap + sigma * zb + tau * e
                    };
                    let (pa, pb) = (expit(la), expit(lb));
                    (x + score(pa, a), y + score(pb, b))
                })
            })
        }
    }
}

/// Simulates paired fixed-design pass@1 reruns of `cells` (N, n, gap), all cells as one parallel
/// job, with the streams a plan's run uses.
/// Returns (per cell: (loss, tie) counts), per-problem draws.
pub fn simulate(
    spec: &PlanSpec,
    cells: &[(usize, u32, f64)],
    progress: Progress,
) -> (Vec<(u64, u64)>, u64) {
    let plan = spec.clone().pass1();
    let chosen: Vec<(Design, (f64, usize, u32))> = cells
        .iter()
        .map(|&(big_n, n, gap)| (Design::Fixed, (gap, big_n, n)))
        .collect();
    let counts = simulate_chosen(&plan, &chosen, progress)
        .into_iter()
        .map(|t| (t.loss, t.tie))
        .collect();
    let draws = cells
        .iter()
        .map(|&(big_n, _, _)| 2 * big_n as u64 * spec.reruns)
        .sum();
    (counts, draws)
}

/// Extra stream-key words of a metric (none for pass@1, so its fixed-design streams are
/// unchanged).
fn metric_key(metric: PlanMetric) -> Vec<u64> {
    match metric {
        PlanMetric::Pass1 => Vec::new(),
        PlanMetric::Maj { attractor, rule } => {
            vec![name_id("maj"), attractor.to_bits(), name_id(rule.as_str())]
        }
    }
}
