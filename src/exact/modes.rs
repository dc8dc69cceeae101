//! Exact majority vote with several wrong-answer modes and answer-extraction failures.
//!
//! # The per-sample answer distribution
//!
//! A problem has solve rate p and attractor shares a_1..a_m (sum <= 1). Answer extraction adds
//! two shares ([`Extraction`]):
//!
//! - `unparsed` u: the harness extracts no answer from a share u of the samples, whatever the
//!   sample said. Such a sample is graded wrong and in a vote it is an answer of its own that
//!   never votes with another (exactly like a one-off wrong answer, and like a trace cut by a
//!   token budget). It counts among the answers tied at the top when the top count is 1.
//! - `split` s: a share s of the *parsed correct* samples is written in an equivalent form that
//!   the normaliser treats as a different answer. Both forms are graded correct; their votes do
//!   not combine (that is the point: splitting the correct vote lowers maj@k). The vote is won
//!   when the picked answer is either form.
//!
//! So each sample is, independently ([`AnswerShares::new`]):
//!
//! | answer | probability |
//! |---|---|
//! | correct, main form | (1 - u) p (1 - s) |
//! | correct, alternate form | (1 - u) p s |
//! | attractor j | (1 - u) a_j (1 - p) |
//! | one-off (incl. unparsed) | u + (1 - u) (1 - sum a) (1 - p) |
//!
//! The graded per-sample rate is (1 - u) p ([`graded_rate`]): pass@k and pass^k are those of
//! (1 - u) p; `split` leaves them unchanged, `unparsed` scales the rate by 1 - u.
//!
//! # The vote
//!
//! The answers of a vote of k samples are the distinct labels among them (every one-off its own
//! answer). M is the top count and T the number of answers at M. Under [`VoteRule::Random`] the
//! pick is uniform among the T answers, and the vote is won with probability (good answers at M)
//! / T, where "good" is either correct form. [`VoteRule::Strict`] wins only when T = 1 and that
//! answer is good (a tie between the two correct forms is a tie, so it loses: the harness cannot
//! know they are equal). [`VoteRule::Absolute`] wins when one correct form alone has more than
//! k / 2 votes. With m = 1 and u = s = 0 these are the rules of [`crate::exact::maj`].
//!
//! # The recurrence
//!
//! The configurations are split by the *leading* correct form: pass 1 has the main form ahead or
//! level (C1 >= C2), pass 2 the alternate form strictly ahead (C2 > C1); without `split` only
//! pass 1 exists. In a pass the leader's count c ~ Bin(k, pi_L) is the outer sum. Given c, the
//! other n = k - c samples fall, one category after another, into the partner form (count
//! Bin(n, beta_0), kept when below c, or equal to c in pass 1) and attractors 1..m (attractor j
//! takes Bin(n', beta_j) of the n' samples still unassigned, beta_j = pi_j / (pi_j + ... + pi_m +
//! pi_one-off)); the rest are one-offs. A forward dynamic programme carries the probability of
//! every state (samples unassigned n', good answers level with c (1 or 2), attractors level with
//! c (0..m)) through the m + 1 stages, each a convolution with the binomial row of n' truncated
//! at c. Mass where an attractor exceeds c is added to the *loss* directly (its binomial upper
//! tail, a sum of positive terms); at the end every state is scored literally (T = good + level
//! attractors, plus the one-offs when c = 1). Win and loss are therefore both sums of positive
//! terms, never 1 minus a number near 1, and both keep their relative accuracy. c = 0 loses;
//! 2c > k wins outright with no programme.
//!
//! # Windows: keeping only what carries mass
//!
//! Every state of the programme passes its whole probability on to the win or the loss (the
//! stages only split it), so dropping a term of probability x changes the win and the loss by
//! at most x, and never raises either. The default ([`maj_at_k_shares`]) runs the programme with
//! a threshold tau: a leader count with P(C = c) < tau is skipped, a state below tau is dropped,
//! and of the binomial row of a state of probability w only the window of entries >= tau / w is
//! used (found by bisection on the unimodal row, O(log k)); each dropped state adds its
//! probability and each dropped entry tau (a bound on w times the entry) to a running total D.
//! The true win then lies in [win, win + D] and so does the true loss. When D <= 1e-15 of the
//! smaller of the two, both keep a relative error below 1e-15; otherwise the run is redone with
//! tau lowered in proportion (aiming 100 times below the bound), and below 1e-280 the
//! programme keeps everything. The first tau is 1e-25. A tiny win or loss (1e-40, 1e-200)
//! therefore costs a second or third run at a smaller tau, never accuracy (test
//! `windowed_programme_matches_the_previous_algorithm_to_1e_12`, against the previous
//! algorithm on wins and losses down to below 1e-100).
//!
//! With every count Bin(., .) concentrated within z standard deviations (z = sqrt(2 ln(1/tau)),
//! about 11 at tau = 1e-25), a window holds O(z sqrt(k)) leader counts, states and row entries,
//! so a run costs O(m (z sqrt k)^3) = O(m z^3 k^1.5) multiply-adds per tie layer instead of the
//! O(m k^3 / 12) of the full sum: at k = 1,024 the windows are a quarter to a half of the full
//! ranges. That is the cost when win and loss are not astronomically small; as the smaller one
//! falls, z grows as sqrt(2 ln(1 / min(win, loss))) and the windows widen back to the full
//! ranges (the worst case stays O(m k^3 / 12)).
//!
//! The previous algorithm (`reference::maj_at_k_modes_previous`, compiled only for the tests and
//! with the `reference-algorithms` feature for the benchmark) runs the leader counts largest
//! P(C = c) first over every state and entry above 1e-300, and stops once the counts not yet run
//! sum below 1e-15 of the smaller of win and loss (test
//! `pruned_sum_matches_every_leader_count_to_1e_12` against the full sum,
//! `reference::maj_at_k_modes_unpruned`).
//!
//! Binomial rows of every stage are built once per call by the Pascal recurrence (each step a
//! convex combination, stable) and trimmed of entries below 1e-300 like [`crate::exact::maj`].
//!
//! Time: O(m z^3 k^1.5) multiply-adds per tie layer with the windows when win and loss are not
//! tiny (above), O(m k^3 / 12) in the worst case (the sum over c <= k / 2 of stages x states x
//! row length, (k - c) c), times the number of tie layers that carry mass (2 (m + 1) at most,
//! fewer in practice: level attractors need c (t + 1) <= k); O((m + 1) k^2) to build the rows,
//! O((m + 1) k^2 / 2) floats of memory. `split` doubles the time (two passes). The benchmark
//! `cargo bench --bench modes --features reference-algorithms` measures it against the previous
//! algorithm in the same run (see docs/model-extensions.md). `Absolute` is O(k) (O(k^2) with
//! `split`).
//!
//! With m <= 1 and s = 0, [`maj_at_k_modes`] calls [`crate::exact::maj`] itself, so today's
//! numbers are reproduced bit for bit; the recurrence agrees with it to about 1e-14 relative
//! (test `recurrence_reproduces_one_attractor_maj`).

use crate::exact::maj::{binomial_pmf, binomial_pmf_into, maj_at_k_with_loss, TINY};
use crate::model::VoteRule;

#[cfg(any(test, feature = "reference-algorithms"))]
#[doc(hidden)]
pub mod reference;
mod table;

pub use table::{maj_at_k_table, ModesTable};

/// Relative accuracy of the pruned sum over leader counts (see `shares_win_loss`): the counts
/// skipped change the win and the loss by less than this fraction of each.
const PRUNE: f64 = 1e-15;

/// First drop threshold of the windowed programme: a state or a (state, binomial entry) pair
/// whose probability is below it is dropped and its mass (or a bound on it) counted.
const TAU0: f64 = 1e-25;

/// Below this the windowed programme keeps everything (as the full sum does).
const TAU_FLOOR: f64 = 1e-280;

/// Answer-extraction failures of one model: shares in [0, 1].
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Extraction {
    /// Share of all samples with no extractable answer (graded wrong, a one-off in a vote).
    pub unparsed: f64,
    /// Share of parsed correct samples written in the alternate form (a distinct answer, graded
    /// correct).
    pub split: f64,
}

/// The per-sample probabilities of every answer of one problem (they sum to 1).
#[derive(Debug, Clone, PartialEq)]
pub struct AnswerShares {
    /// The correct answer in its main form.
    pub correct: f64,
    /// The correct answer in its alternate form (a different answer to the vote).
    pub alternate: f64,
    /// Each repeated wrong answer.
    pub attractors: Vec<f64>,
    /// A wrong answer that never repeats, or no answer at all.
    pub one_off: f64,
}

impl AnswerShares {
    /// The shares of a problem with solve rate `p`, attractor shares `attractors` (each of the
    /// wrong mass, summing to at most 1) and extraction failures `extraction`; see the module
    /// doc for the table. The one-off share is computed from its own terms. Time: O(m).
    pub fn new(p: f64, attractors: &[f64], extraction: Extraction) -> AnswerShares {
        let parsed = 1.0 - extraction.unparsed;
        let wrong = 1.0 - p;
        let spare = (1.0 - attractors.iter().sum::<f64>()).max(0.0);
        AnswerShares {
            correct: parsed * p * (1.0 - extraction.split),
            alternate: parsed * p * extraction.split,
            attractors: attractors.iter().map(|a| parsed * a * wrong).collect(),
            one_off: extraction.unparsed + parsed * spare * wrong,
        }
    }
}

/// The graded per-sample solve rate (1 - u) p: the rate behind pass@k and pass^k. `split` does
/// not change it (both forms are graded correct). Time: O(1).
pub fn graded_rate(p: f64, extraction: Extraction) -> f64 {
    (1.0 - extraction.unparsed) * p
}

/// (maj@k, 1 - maj@k) of one problem with solve rate `p`, attractor shares `attractors` and
/// extraction failures, each summed from its own terms. With at most one attractor and no split
/// this is [`crate::exact::maj`] itself (bit for bit with u = 0); otherwise the recurrence of the
/// module doc. Time: O(k^2) for m <= 1 without split, else see the module doc.
///
/// # Panics
///
/// If k = 0.
pub fn maj_at_k_modes(
    p: f64,
    attractors: &[f64],
    extraction: Extraction,
    k: u32,
    rule: VoteRule,
) -> (f64, f64) {
    assert!(k >= 1, "a vote needs at least one sample");
    if extraction.split == 0.0 && attractors.len() <= 1 {
        let a = attractors.first().copied().unwrap_or(0.0);
        let u = extraction.unparsed;
        let (rate, alpha) = if u == 0.0 {
            (p, a)
        } else if p >= 1.0 {
            ((1.0 - u) * p, 0.0)
        } else {
            let not_correct = u + (1.0 - u) * (1.0 - p);
            (
                (1.0 - u) * p,
                ((1.0 - u) * a * (1.0 - p) / not_correct).clamp(0.0, 1.0),
            )
        };
        return maj_at_k_with_loss(rate, alpha, k, rule);
    }
    maj_at_k_shares(&AnswerShares::new(p, attractors, extraction), k, rule)
}

/// (maj@k, 1 - maj@k) for any per-sample answer distribution, by the recurrence of the module
/// doc (whatever m, with or without split). Time: see the module doc.
///
/// # Panics
///
/// If k = 0.
pub fn maj_at_k_shares(shares: &AnswerShares, k: u32, rule: VoteRule) -> (f64, f64) {
    shares_win_loss(shares, k, rule)
}

/// Buffers of [`shares_win_loss`], kept per thread: a population table calls it 20,001 times per
/// model with the same k, and at small k allocating the rows and states cost more than the
/// programme itself. Reusing them changes no arithmetic (every buffer is cleared or resized to
/// zeros before use), so results are bit for bit those of fresh buffers.
#[derive(Default)]
struct Scratch {
    rest: Vec<f64>,
    attractor_rows: Vec<Rows>,
    partner_alt: Rows,
    partner_main: Rows,
    dp: Programme,
    runs: Vec<(f64, usize, bool)>,
    pmf: Vec<f64>,
    row: Vec<f64>,
    next: Vec<f64>,
}

/// [`maj_at_k_shares`] in this thread's [`Scratch`].
fn shares_win_loss(shares: &AnswerShares, k: u32, rule: VoteRule) -> (f64, f64) {
    thread_local! {
        static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
    }
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut s) => shares_win_loss_in(&mut s, shares, k, rule),
        // Not reachable (nothing here calls back into it); fresh buffers are still correct.
        Err(_) => shares_win_loss_in(&mut Scratch::default(), shares, k, rule),
    })
}

/// The programme's inputs, in `s`: the binomial rows of every stage, the leader counts that need
/// the programme (in `s.runs`, largest P(C = c) first) and the win and loss of the counts decided
/// without it, with whether a second pass (split) was run. `Err` holds the finished (win, loss)
/// of `Absolute`, which needs no programme.
fn prepare(
    s: &mut Scratch,
    shares: &AnswerShares,
    k: u32,
    rule: VoteRule,
) -> Result<((Sum, Sum), bool), (f64, f64)> {
    assert!(k >= 1, "a vote needs at least one sample");
    let Scratch {
        rest,
        attractor_rows,
        partner_alt,
        partner_main,
        dp,
        runs,
        pmf,
        row,
        next,
        ..
    } = s;
    let k_us = k as usize;
    let pi = &shares.attractors;
    // Mass of attractors j.. plus the one-offs, each from its own terms.
    rest.clear();
    rest.resize(pi.len() + 1, shares.one_off.max(0.0));
    for j in (0..pi.len()).rev() {
        rest[j] = rest[j + 1] + pi[j].max(0.0);
    }
    let stage = |share: f64, total: f64| {
        if total > 0.0 {
            let b = (share / total).clamp(0.0, 1.0);
            (b, ((total - share) / total).clamp(0.0, 1.0))
        } else {
            (0.0, 1.0)
        }
    };
    attractor_rows.resize_with(pi.len(), Rows::default);
    for ((rows, &share), &total) in attractor_rows.iter_mut().zip(pi).zip(rest.iter()) {
        let (b, nb) = stage(share.max(0.0), total);
        rows.fill(k_us, b, nb, row, next);
    }
    let main = shares.correct.max(0.0);
    let alt = shares.alternate.max(0.0);
    let (b_alt, nb_alt) = stage(alt, alt + rest[0]);
    partner_alt.fill(k_us, b_alt, nb_alt, row, next);
    if rule == VoteRule::Absolute {
        return Err(absolute(k_us, main, alt, partner_alt));
    }
    let mut acc = (Sum::default(), Sum::default());
    dp.reset(k_us, pi.len());
    // The leader counts c that need the programme, from both passes: (P(C = c), c, pass 2).
    runs.clear();
    dp.pass(main, partner_alt, true, &mut acc, runs, false, pmf);
    let has_main = alt > 0.0;
    if has_main {
        let (b_main, nb_main) = stage(main, main + rest[0]);
        partner_main.fill(k_us, b_main, nb_main, row, next);
        dp.pass(alt, partner_main, false, &mut acc, runs, true, pmf);
    }
    // Largest P(C = c) first. Every c adds exactly its P(C = c) to win + loss (both sums of
    // positive terms), so the counts not yet run can change the win or the loss by at most
    // the sum of their P(C = c).
    runs.sort_by(|a, b| b.0.total_cmp(&a.0));
    Ok((acc, has_main))
}

/// The partner form's rows of a leader count of pass 2 (`second`) or pass 1, and whether a tie
/// with the partner shares the win (pass 1 only).
fn partner_of<'a>(alt: &'a Rows, main: &'a Rows, second: bool, has_main: bool) -> (&'a Rows, bool) {
    if second && has_main {
        (main, false)
    } else {
        (alt, true)
    }
}

/// The windowed programme of the module doc: the leader counts decided without the programme
/// are exact; the windowed runs add to a copy, redone with a smaller threshold until the dropped
/// mass is below [`PRUNE`] of the smaller of the win and the loss.
fn shares_win_loss_in(
    s: &mut Scratch,
    shares: &AnswerShares,
    k: u32,
    rule: VoteRule,
) -> (f64, f64) {
    let (acc, has_main) = match prepare(s, shares, k, rule) {
        Ok(prepared) => prepared,
        Err(absolute) => return absolute,
    };
    let Scratch {
        attractor_rows,
        partner_alt,
        partner_main,
        dp,
        runs,
        ..
    } = s;
    let partner_of = |second: bool| partner_of(partner_alt, partner_main, second, has_main);
    let mut tau = TAU0;
    loop {
        let mut run_acc = acc;
        let mut dropped = 0.0;
        for &(w0, c, second) in runs.iter() {
            if w0 < tau {
                dropped += w0;
                continue;
            }
            let (partner, ties) = partner_of(second);
            dp.run_windowed(
                c,
                w0,
                partner,
                ties,
                attractor_rows,
                rule,
                &mut run_acc,
                tau,
                &mut dropped,
            );
        }
        let (w, l) = (run_acc.0.value(), run_acc.1.value());
        let small = w.min(l);
        if dropped <= PRUNE * small || tau == 0.0 {
            return (w.clamp(0.0, 1.0), l.clamp(0.0, 1.0));
        }
        // The dropped mass grows about linearly in the threshold: aim 100 times below the
        // bound; with nothing gathered on one side, jump far down; near 1e-300 run in full.
        tau = if small > 0.0 {
            (tau * 1e-2 * PRUNE * small / dropped).min(tau * 1e-3)
        } else {
            tau * 1e-40
        };
        if tau < TAU_FLOOR {
            tau = 0.0;
        }
    }
}

/// `Absolute`: win when one form alone has more than k / 2 votes (the events are disjoint);
/// loss when neither has, summed over the main count with the alternate's conditional cdf.
fn absolute(k: usize, main: f64, alt: f64, partner: &Rows) -> (f64, f64) {
    let half = k / 2; // c > k / 2  <=>  c > half
    let pm = binomial_pmf(k as u32, main);
    let mut win: f64 = pm[half + 1..].iter().sum();
    if alt > 0.0 {
        win += binomial_pmf(k as u32, alt)[half + 1..].iter().sum::<f64>();
    }
    let mut loss = 0.0;
    for (c, &w) in pm.iter().enumerate().take(half + 1) {
        if w == 0.0 {
            continue;
        }
        let (lo, row) = partner.row(k - c);
        let below: f64 = row
            .iter()
            .enumerate()
            .filter(|(i, _)| lo + i <= half)
            .map(|(_, x)| x)
            .sum();
        loss += w * below;
    }
    (win.clamp(0.0, 1.0), loss.clamp(0.0, 1.0))
}

/// A compensated (Neumaier) running sum: the win and the loss each gather millions of terms at
/// k = 1,024, whose plain sum would drift by about 1e-13.
#[derive(Debug, Clone, Copy, Default)]
struct Sum {
    sum: f64,
    carry: f64,
}

impl Sum {
    #[inline]
    fn add(&mut self, x: f64) {
        let t = self.sum + x;
        if self.sum.abs() >= x.abs() {
            self.carry += (self.sum - t) + x;
        } else {
            self.carry += (x - t) + self.sum;
        }
        self.sum = t;
    }

    fn value(self) -> f64 {
        self.sum + self.carry
    }
}

/// Binomial rows Bin(n, b) for n = 0..=k, each kept on the entries above [`TINY`].
#[derive(Default)]
struct Rows {
    /// Row n is `data[start[n]..start[n + 1]]`, holding entries lo[n]..
    start: Vec<usize>,
    lo: Vec<usize>,
    /// The index of the largest entry of row n (rows are unimodal).
    mode: Vec<usize>,
    data: Vec<f64>,
}

impl Rows {
    /// By the Pascal recurrence row_{n+1}[j] = nb row_n[j] + b row_n[j - 1], nb = 1 - b given
    /// from its own terms, each row renormalised. Time: O(k^2) at most.
    /// Written into `self` (its buffers reused), with `row` and `next` as the rolling rows.
    fn fill(&mut self, k: usize, b: f64, nb: f64, row: &mut Vec<f64>, next: &mut Vec<f64>) {
        let Rows {
            start,
            lo: lo_v,
            mode,
            data,
        } = self;
        start.clear();
        start.push(0);
        lo_v.clear();
        mode.clear();
        data.clear();
        row.clear();
        row.resize(k + 2, 0.0);
        next.clear();
        next.resize(k + 2, 0.0);
        row[0] = 1.0;
        let (mut lo, mut hi) = (0usize, 0usize);
        for n in 0..=k {
            lo_v.push(lo);
            let top = (lo..=hi).fold(lo, |m, j| if row[j] > row[m] { j } else { m });
            mode.push(top);
            data.extend_from_slice(&row[lo..=hi]);
            start.push(data.len());
            if n == k {
                break;
            }
            next[lo] = nb * row[lo];
            for j in lo + 1..=hi + 1 {
                next[j] = nb * row[j] + b * row[j - 1];
            }
            std::mem::swap(row, next);
            next[lo..=hi + 1].fill(0.0);
            hi += 1;
            while lo < hi && row[lo] < TINY {
                row[lo] = 0.0;
                lo += 1;
            }
            while hi > lo && row[hi] < TINY {
                row[hi] = 0.0;
                hi -= 1;
            }
            // b + nb is 1 only to within an ulp, and (b + nb)^n would drift by n ulps (1e-13 at
            // k = 1,024): every row is renormalised to sum 1.
            let total: f64 = row[lo..=hi].iter().sum();
            row[lo..=hi].iter_mut().for_each(|x| *x /= total);
        }
    }

    /// The range of row n whose entries are at least `thr` (rows are unimodal: an increasing
    /// run up to the mode, then a decreasing one), or None when the largest entry is below it.
    /// Time: O(log k).
    #[inline]
    fn window(&self, n: usize, thr: f64) -> Option<(usize, usize)> {
        let (lo, row) = self.row(n);
        let md = self.mode[n] - lo;
        if row[md] < thr {
            return None;
        }
        let l = row[..md].partition_point(|&x| x < thr);
        let r = md + row[md..].partition_point(|&x| x >= thr) - 1;
        Some((lo + l, lo + r))
    }

    /// (first index, entries) of row n.
    #[inline]
    fn row(&self, n: usize) -> (usize, &[f64]) {
        (self.lo[n], &self.data[self.start[n]..self.start[n + 1]])
    }
}

/// The states of the forward programme: one layer per (good answers level with the leader,
/// 1 or 2; attractors level with it, 0..=m), each a vector over the samples still unassigned,
/// with its active range.
#[derive(Default)]
struct Programme {
    m: usize,
    cur: Vec<Vec<f64>>,
    next: Vec<Vec<f64>>,
    cur_range: Vec<Option<(usize, usize)>>,
    next_range: Vec<Option<(usize, usize)>>,
}

impl Programme {
    fn new(k: usize, m: usize) -> Programme {
        let layers = 2 * (m + 1);
        Programme {
            m,
            cur: vec![vec![0.0; k + 1]; layers],
            next: vec![vec![0.0; k + 1]; layers],
            cur_range: vec![None; layers],
            next_range: vec![None; layers],
        }
    }

    /// Ready for a vote of k samples with m attractors: all states zero, no active range (the
    /// buffers kept when k and m are those of the last vote).
    fn reset(&mut self, k: usize, m: usize) {
        let layers = 2 * (m + 1);
        if self.m != m || self.cur.len() != layers || self.cur[0].len() != k + 1 {
            *self = Programme::new(k, m);
            return;
        }
        for v in self.cur.iter_mut().chain(self.next.iter_mut()) {
            v.fill(0.0);
        }
        self.cur_range.fill(None);
        self.next_range.fill(None);
    }

    #[inline]
    fn layer(&self, good: usize, level: usize) -> usize {
        (good - 1) * (self.m + 1) + level
    }

    fn add(vals: &mut [f64], range: &mut Option<(usize, usize)>, n: usize, x: f64) {
        vals[n] += x;
        *range = Some(match *range {
            None => (n, n),
            Some((lo, hi)) => (lo.min(n), hi.max(n)),
        });
    }

    /// One pass with the leader's share `leader` and the partner form's rows, over the
    /// configurations where the leader is ahead of the partner (or level with it when
    /// `partner_ties`): adds to `acc` = (win, loss) the leader counts decided without the
    /// programme (c = 0, 2c > k) and lists the others in `runs` as (P(C = c), c, `second`);
    /// `pmf` is the buffer of the leader's count pmf.
    #[allow(clippy::too_many_arguments)]
    fn pass(
        &mut self,
        leader: f64,
        partner: &Rows,
        partner_ties: bool,
        acc: &mut (Sum, Sum),
        runs: &mut Vec<(f64, usize, bool)>,
        second: bool,
        pmf: &mut Vec<f64>,
    ) {
        let k = self.cur[0].len() - 1;
        binomial_pmf_into(k as u32, leader, pmf);
        for (c, &w0) in pmf.iter().enumerate() {
            if w0 == 0.0 {
                continue;
            }
            if c == 0 {
                // No good answer can win; pass 2 (partner strictly below 0) has nothing here.
                if partner_ties {
                    let (lo, row) = partner.row(k);
                    if lo == 0 {
                        acc.1.add(w0 * row[0]);
                    }
                }
                continue;
            }
            if 2 * c > k {
                acc.0.add(w0);
                continue;
            }
            runs.push((w0, c, second));
        }
    }

    /// [`Programme::run`] keeping only what carries mass: a state below `tau` is dropped, and of
    /// the binomial row of a state of probability w only the window of entries at least tau / w
    /// is used. Each dropped state adds its probability to `dropped`, each dropped entry tau (a
    /// bound on w times the entry): every dropped term would have added its probability to the
    /// win or the loss, so the true win and loss each lie between the gathered value and that
    /// value plus `dropped`. With `tau` = 0 this is the full programme of the `reference`
    /// module (up to the order of the additions). The upper tail above c is summed over the
    /// window only (the rest is dropped and counted like any other entry).
    #[allow(clippy::too_many_arguments)]
    fn run_windowed(
        &mut self,
        c: usize,
        w0: f64,
        partner: &Rows,
        partner_ties: bool,
        attractors: &[Rows],
        rule: VoteRule,
        acc: &mut (Sum, Sum),
        tau: f64,
        dropped: &mut f64,
    ) {
        let k = self.cur[0].len() - 1;
        let n0 = k - c;
        for (v, r) in self.cur.iter_mut().zip(self.cur_range.iter_mut()) {
            if let Some((lo, hi)) = r.take() {
                v[lo..=hi].fill(0.0);
            }
        }
        // The partner form, over its window.
        let (plo, prow) = partner.row(n0);
        let Some((wl, wh)) = partner.window(n0, tau / w0) else {
            *dropped += w0;
            return;
        };
        *dropped += tau * (prow.len() - (wh - wl + 1)) as f64;
        let (l1, l2) = (self.layer(1, 0), self.layer(2, 0));
        for v in wl..=wh {
            let x = prow[v - plo];
            if v < c {
                Self::add(&mut self.cur[l1], &mut self.cur_range[l1], n0 - v, w0 * x);
            } else if v == c && partner_ties {
                Self::add(&mut self.cur[l2], &mut self.cur_range[l2], n0 - v, w0 * x);
            }
        }
        // The attractors, one stage each.
        for (j, rows) in attractors.iter().enumerate() {
            for (v, r) in self.next.iter_mut().zip(self.next_range.iter_mut()) {
                if let Some((lo, hi)) = r.take() {
                    v[lo..=hi].fill(0.0);
                }
            }
            for good in 1..=2 {
                for level in 0..=j.min(self.m) {
                    let li = self.layer(good, level);
                    let Some((lo, hi)) = self.cur_range[li] else {
                        continue;
                    };
                    let up = self.layer(good, level + 1);
                    for n in lo..=hi {
                        let w = self.cur[li][n];
                        if w < TINY {
                            continue;
                        }
                        if w < tau {
                            *dropped += w;
                            continue;
                        }
                        let (rlo, row) = rows.row(n);
                        let Some((wl, wh)) = rows.window(n, tau / w) else {
                            *dropped += w;
                            continue;
                        };
                        *dropped += tau * (row.len() - (wh - wl + 1)) as f64;
                        // Counts a < c stay at this level.
                        if wl < c {
                            let top = wh.min(c - 1);
                            let dst = &mut self.next[li][n - top..=n - wl];
                            for (d, &x) in dst.iter_mut().rev().zip(&row[wl - rlo..=top - rlo]) {
                                *d += w * x;
                            }
                            let r = &mut self.next_range[li];
                            *r = Some(match *r {
                                None => (n - top, n - wl),
                                Some((a, b)) => (a.min(n - top), b.max(n - wl)),
                            });
                        }
                        if (wl..=wh).contains(&c) {
                            let x = w * row[c - rlo];
                            Self::add(&mut self.next[up], &mut self.next_range[up], n - c, x);
                        }
                        if wh > c {
                            let from = (c + 1).max(wl) - rlo;
                            acc.1.add(w * row[from..=wh - rlo].iter().sum::<f64>());
                        }
                    }
                }
            }
            std::mem::swap(&mut self.cur, &mut self.next);
            std::mem::swap(&mut self.cur_range, &mut self.next_range);
            // Trim the ends of every layer below the threshold, counting what is dropped.
            let cut = tau.max(TINY);
            for (v, r) in self.cur.iter_mut().zip(self.cur_range.iter_mut()) {
                if let Some((mut lo, mut hi)) = *r {
                    while lo < hi && v[lo] < cut {
                        if v[lo] >= TINY {
                            *dropped += v[lo];
                        }
                        v[lo] = 0.0;
                        lo += 1;
                    }
                    while hi > lo && v[hi] < cut {
                        if v[hi] >= TINY {
                            *dropped += v[hi];
                        }
                        v[hi] = 0.0;
                        hi -= 1;
                    }
                    *r = Some((lo, hi));
                }
            }
        }
        self.score(c, rule, acc);
    }

    /// Scores every state of the programme literally (T = good + level attractors, plus the
    /// one-offs when c = 1) into `acc`.
    fn score(&self, c: usize, rule: VoteRule, acc: &mut (Sum, Sum)) {
        for good in 1..=2usize {
            for level in 0..=self.m {
                let li = self.layer(good, level);
                let Some((lo, hi)) = self.cur_range[li] else {
                    continue;
                };
                for n in lo..=hi {
                    let w = self.cur[li][n];
                    if w == 0.0 {
                        continue;
                    }
                    let tied = good + level + if c == 1 { n } else { 0 };
                    match rule {
                        VoteRule::Strict => {
                            if tied == 1 {
                                acc.0.add(w);
                            } else {
                                acc.1.add(w);
                            }
                        }
                        _ => {
                            let t = tied as f64;
                            acc.0.add(w * (good as f64 / t));
                            acc.1.add(w * ((tied - good) as f64 / t));
                        }
                    }
                }
            }
        }
    }
}

/// The large-k limit of maj@k of one problem: under `Random` and `Strict`, with top = the largest
/// share of a repeated answer (either correct form or an attractor), the share of the answers at
/// that top that are correct: 1 when a correct form's share exceeds every attractor's
/// (p max(s, 1 - s) > a_j (1 - p) for every j), 0 when some attractor's exceeds both forms',
/// and g / (g + t) on an exact tie of g correct forms with t attractors (their counts are then
/// exchangeable and exact ties vanish). Under `Absolute`: 1 when a form's share exceeds 1/2,
/// 1/2 at exactly 1/2, else 0. No repeated answer at all (every share 0) gives 0. `unparsed`
/// (below 1) does not change the limit. Time: O(m).
pub fn maj_limit(shares: &AnswerShares, rule: VoteRule) -> f64 {
    let good = shares.correct.max(shares.alternate);
    if rule == VoteRule::Absolute {
        return if good > 0.5 {
            1.0
        } else if good == 0.5 {
            0.5
        } else {
            0.0
        };
    }
    let bad = shares.attractors.iter().fold(0.0f64, |x, &y| x.max(y));
    let top = good.max(bad);
    if top <= 0.0 || good < top {
        return 0.0;
    }
    let g = [shares.correct, shares.alternate]
        .iter()
        .filter(|&&x| x == top)
        .count();
    let t = shares.attractors.iter().filter(|&&x| x == top).count();
    g as f64 / (g + t) as f64
}

/// The rate above which a problem is won in the limit, below which it is lost: p* = a_max /
/// (max(s, 1 - s) + a_max) with a_max the largest attractor share (p > p* iff p max(s, 1 - s) >
/// a_max (1 - p)); at p = p* the limit is the tie share of [`maj_limit`]. With one attractor and
/// no split this is a / (1 + a), [`crate::exact::maj::attractor_threshold`]. Time: O(m).
pub fn winning_threshold(attractors: &[f64], split: f64) -> f64 {
    let a = attractors.iter().fold(0.0f64, |x, &y| x.max(y));
    a / ((1.0 - split).max(split) + a)
}

/// The large-k limit of benchmark maj@k under `Random`: the mean of [`maj_limit`] over the rates,
/// with the same attractor shares and extraction for every problem. Time: O(N m).
pub fn maj_ceiling_modes(
    rates: &[f64],
    attractors: &[f64],
    extraction: Extraction,
    rule: VoteRule,
) -> f64 {
    let total: f64 = rates
        .iter()
        .map(|&p| maj_limit(&AnswerShares::new(p, attractors, extraction), rule))
        .sum();
    total / rates.len() as f64
}

#[cfg(test)]
pub(crate) mod tests {
    #[test]
    fn reused_buffers_give_the_bits_of_fresh_ones() {
        let cases: Vec<(f64, Vec<f64>, Extraction, u32)> = vec![
            (
                0.3,
                vec![0.3, 0.2],
                Extraction {
                    unparsed: 0.0,
                    split: 0.1,
                },
                7,
            ),
            (0.6, vec![0.5, 0.1, 0.1], Extraction::default(), 64),
            (
                0.05,
                vec![0.4, 0.4],
                Extraction {
                    unparsed: 0.2,
                    split: 0.0,
                },
                3,
            ),
            (
                0.45,
                vec![0.2; 4],
                Extraction {
                    unparsed: 0.1,
                    split: 0.3,
                },
                200,
            ),
            (
                0.3,
                vec![0.3, 0.2],
                Extraction {
                    unparsed: 0.0,
                    split: 0.1,
                },
                7,
            ),
        ];
        let value = |(p, a, e, k): &(f64, Vec<f64>, Extraction, u32)| {
            let rules = [VoteRule::Random, VoteRule::Strict, VoteRule::Absolute];
            rules.map(|r| maj_at_k_modes(*p, a, *e, *k, r))
        };
        // This thread's buffers after every case, against a fresh thread per case.
        let reused: Vec<_> = cases.iter().chain(cases.iter().rev()).map(value).collect();
        let fresh: Vec<_> = cases
            .iter()
            .chain(cases.iter().rev())
            .map(|c| {
                let c = c.clone();
                std::thread::spawn(move || value(&c))
                    .join()
                    .expect("thread")
            })
            .collect();
        for (a, b) in reused.iter().zip(&fresh) {
            for (x, y) in a.iter().zip(b) {
                assert_eq!(
                    (x.0.to_bits(), x.1.to_bits()),
                    (y.0.to_bits(), y.1.to_bits())
                );
            }
        }
    }

    use super::*;
    use crate::exact::maj::{maj_at_k_all_with_loss, maj_ceiling};

    const RULES: [VoteRule; 3] = [VoteRule::Random, VoteRule::Strict, VoteRule::Absolute];

    /// The vote of one literal sequence of labels: 0 = main correct form, 1 = alternate form,
    /// 2..2 + m = attractors, 2 + m = a one-off (each one its own answer). Returns the win
    /// probability (uniform pick among the answers at the top count).
    pub(crate) fn literal_vote(labels: &[usize], m: usize, rule: VoteRule) -> f64 {
        let k = labels.len();
        let mut counts = vec![0usize; m + 2];
        let mut one_offs = 0usize;
        for &l in labels {
            if l < m + 2 {
                counts[l] += 1;
            } else {
                one_offs += 1;
            }
        }
        // (count, good) of every answer.
        let mut answers: Vec<(usize, bool)> = counts
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(i, &n)| (n, i < 2))
            .collect();
        answers.extend(std::iter::repeat_n((1, false), one_offs));
        let top = answers.iter().map(|x| x.0).max().unwrap_or(0);
        let tied: Vec<bool> = answers.iter().filter(|x| x.0 == top).map(|x| x.1).collect();
        let good = tied.iter().filter(|&&g| g).count();
        match rule {
            VoteRule::Random => good as f64 / tied.len() as f64,
            VoteRule::Strict => f64::from(u8::from(tied.len() == 1 && good == 1)),
            VoteRule::Absolute => f64::from(u8::from(counts[0] * 2 > k || counts[1] * 2 > k)),
        }
    }

    /// maj@k by enumerating every sequence of k labels: (win, loss).
    pub(crate) fn brute_force(shares: &AnswerShares, k: usize, rule: VoteRule) -> (f64, f64) {
        let m = shares.attractors.len();
        let mut probs = vec![shares.correct, shares.alternate];
        probs.extend(&shares.attractors);
        probs.push(shares.one_off);
        let cats = probs.len();
        let mut labels = vec![0usize; k];
        let (mut win, mut loss) = (0.0, 0.0);
        loop {
            let pr: f64 = labels.iter().map(|&l| probs[l]).product();
            let w = literal_vote(&labels, m, rule);
            win += pr * w;
            loss += pr * (1.0 - w);
            // Next sequence (odometer).
            let mut i = 0;
            while i < k {
                labels[i] += 1;
                if labels[i] < cats {
                    break;
                }
                labels[i] = 0;
                i += 1;
            }
            if i == k {
                return (win, loss);
            }
        }
    }

    fn rel(a: f64, b: f64) -> f64 {
        if a == b {
            0.0
        } else {
            (a - b).abs() / a.abs().max(b.abs())
        }
    }

    #[test]
    fn recurrence_matches_brute_force_on_every_sequence() {
        let cases: Vec<(f64, Vec<f64>, Extraction)> = vec![
            (0.4, vec![0.5], Extraction::default()),
            (0.3, vec![0.3, 0.3], Extraction::default()),
            (0.25, vec![0.5, 0.2, 0.3], Extraction::default()),
            (
                0.5,
                vec![0.4, 0.1],
                Extraction {
                    unparsed: 0.2,
                    split: 0.0,
                },
            ),
            (
                0.6,
                vec![0.5],
                Extraction {
                    unparsed: 0.0,
                    split: 0.5,
                },
            ),
            (
                0.5,
                vec![0.3, 0.6],
                Extraction {
                    unparsed: 0.1,
                    split: 0.3,
                },
            ),
            (
                0.7,
                vec![],
                Extraction {
                    unparsed: 0.0,
                    split: 0.4,
                },
            ),
            (
                1.0,
                vec![0.5, 0.5],
                Extraction {
                    unparsed: 0.0,
                    split: 0.5,
                },
            ),
            (0.0, vec![0.5, 0.2], Extraction::default()),
        ];
        for (p, a, ex) in &cases {
            let shares = AnswerShares::new(*p, a, *ex);
            for k in 1..=6usize {
                if k > 4 && a.len() == 3 {
                    continue;
                }
                for rule in RULES {
                    let (w, l) = maj_at_k_shares(&shares, k as u32, rule);
                    let (bw, bl) = brute_force(&shares, k, rule);
                    let what = format!("{rule:?} k={k} p={p} a={a:?} {ex:?}");
                    // The enumeration sums up to 6^6 products: 1e-13 covers its own rounding.
                    assert!((w - bw).abs() < 1e-13, "{what}: win {w} vs {bw}");
                    assert!((l - bl).abs() < 1e-13, "{what}: loss {l} vs {bl}");
                    let (dw, dl) = maj_at_k_modes(*p, a, *ex, k as u32, rule);
                    assert!((dw - bw).abs() < 1e-13 && (dl - bl).abs() < 1e-13, "{what}");
                    let (ow, ol) = reference::maj_at_k_modes_previous(*p, a, *ex, k as u32, rule);
                    assert!((ow - bw).abs() < 1e-13 && (ol - bl).abs() < 1e-13, "{what}");
                }
            }
        }
    }

    /// The pruned sum over leader counts and the windowed programme against the full sum
    /// (every count, state and entry run), on cases where the win and the loss are both
    /// interior and where one of them is tiny.
    #[test]
    fn pruned_sum_matches_every_leader_count_to_1e_12() {
        let mut worst: f64 = 0.0;
        let cases: Vec<(u32, Vec<f64>, f64, Extraction)> = vec![
            (300, vec![0.1; 8], 0.0, Extraction::default()),
            (
                300,
                vec![0.3, 0.2, 0.15, 0.1],
                0.2,
                Extraction {
                    unparsed: 0.05,
                    split: 0.2,
                },
            ),
            (1024, vec![0.2; 4], 0.01, Extraction::default()),
            (
                1024,
                vec![0.3, 0.25],
                -0.1,
                Extraction {
                    unparsed: 0.0,
                    split: 0.3,
                },
            ),
            (1024, vec![0.4, 0.3, 0.1], 0.25, Extraction::default()),
        ];
        for (k, a, offset, ex) in &cases {
            let p = (winning_threshold(a, ex.split) + offset).clamp(0.0, 1.0);
            for rule in [VoteRule::Random, VoteRule::Strict] {
                let sh = AnswerShares::new(p, a, *ex);
                let full = reference::win_loss(&sh, *k, rule, false);
                let pruned = reference::win_loss(&sh, *k, rule, true);
                let windowed = maj_at_k_shares(&sh, *k, rule);
                for (method, fast) in [("pruned", pruned), ("windowed", windowed)] {
                    let what = format!("{method} {rule:?} k={k} a={a:?} p={p} {ex:?}");
                    for (x, y) in [(fast.0, full.0), (fast.1, full.1)] {
                        let err = rel(x, y);
                        worst = worst.max(err);
                        assert!(err < 1e-12, "{what}: {x:e} vs {y:e} ({err:e})");
                    }
                }
            }
        }
        eprintln!("largest relative difference, pruned vs full: {worst:e}");
    }

    /// The windowed programme (the default) against the previous algorithm (pruned leader
    /// counts, every state and entry), to 1e-12 relative on the win and on the loss, across
    /// the rules, 2 to 8 attractors, split and unparsed, and rates from hopeless to certain
    /// (wins and losses down to 1e-100 and below, where the threshold must shrink).
    #[test]
    fn windowed_programme_matches_the_previous_algorithm_to_1e_12() {
        let mut worst: f64 = 0.0;
        let mut tiny = 0;
        let cases: Vec<(u32, Vec<f64>, Extraction)> = vec![
            (64, vec![0.3, 0.3], Extraction::default()),
            (
                200,
                vec![0.25, 0.2, 0.15, 0.1],
                Extraction {
                    unparsed: 0.05,
                    split: 0.2,
                },
            ),
            (512, vec![0.1; 8], Extraction::default()),
            (
                1024,
                vec![0.2; 4],
                Extraction {
                    unparsed: 0.05,
                    split: 0.0,
                },
            ),
        ];
        for (k, a, ex) in &cases {
            let t = winning_threshold(a, ex.split);
            for offset in [-0.15, -0.02, 0.0, 0.01, 0.05, 0.3] {
                let p = (t + offset).clamp(0.0, 1.0);
                for rule in RULES {
                    let new = maj_at_k_modes(p, a, *ex, *k, rule);
                    let old = reference::maj_at_k_modes_previous(p, a, *ex, *k, rule);
                    let what = format!("{rule:?} k={k} a={a:?} p={p} {ex:?}");
                    for (x, y) in [(new.0, old.0), (new.1, old.1)] {
                        if y < 1e-100 {
                            tiny += 1;
                        }
                        let err = rel(x, y);
                        worst = worst.max(err);
                        assert!(err < 1e-12, "{what}: {x:e} vs {y:e} ({err:e})");
                    }
                }
            }
        }
        // The grid reaches the far tails, where the threshold has to shrink.
        assert!(tiny > 0, "no tiny win or loss in the grid");
        eprintln!("largest relative difference, windowed vs previous: {worst:e}");
    }

    #[test]
    fn recurrence_reproduces_one_attractor_maj() {
        let mut worst: f64 = 0.0;
        for rule in RULES {
            for k in [1u32, 2, 3, 7, 16, 33, 64, 257, 1024] {
                for &p in &[0.0, 0.011, 0.2, 1.0 / 3.0, 0.36, 0.5, 0.77, 0.993, 1.0] {
                    for &a in &[0.0, 0.25, 0.5, 0.9, 1.0] {
                        let shares = AnswerShares::new(p, &[a], Extraction::default());
                        let (w, l) = maj_at_k_shares(&shares, k, rule);
                        let (ew, el) = maj_at_k_all_with_loss(&[p], a, k, rule)[0];
                        let what = format!("{rule:?} k={k} p={p} a={a}");
                        for (x, y) in [(w, ew), (l, el)] {
                            // Relative where above 1e-290, absolute below (trimmed terms).
                            let err = if y.abs() > 1e-290 {
                                rel(x, y)
                            } else {
                                (x - y).abs()
                            };
                            worst = worst.max(err);
                            assert!(err < 1e-13, "{what}: {x} vs {y} ({err:e})");
                        }
                        // The public function is maj.rs itself: bit for bit.
                        let d = maj_at_k_modes(p, &[a], Extraction::default(), k, rule);
                        assert_eq!(d, (ew, el), "{what}");
                    }
                }
            }
        }
        eprintln!("largest relative difference from exact::maj: {worst:e}");
    }

    #[test]
    fn unparsed_with_one_attractor_equals_the_recurrence() {
        for rule in RULES {
            for k in [1u32, 4, 9, 40] {
                for &(p, a, u) in &[(0.5, 0.5, 0.2), (0.3, 0.9, 0.5), (0.8, 0.0, 0.1)] {
                    let ex = Extraction {
                        unparsed: u,
                        split: 0.0,
                    };
                    let d = maj_at_k_modes(p, &[a], ex, k, rule);
                    let r = maj_at_k_shares(&AnswerShares::new(p, &[a], ex), k, rule);
                    assert!(
                        rel(d.0, r.0) < 1e-12 && rel(d.1, r.1) < 1e-12,
                        "{d:?} {r:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn attractor_order_does_not_matter_and_win_plus_loss_is_one() {
        let a = [0.3, 0.05, 0.2, 0.1, 0.15];
        let mut b = a;
        b.reverse();
        let ex = Extraction {
            unparsed: 0.05,
            split: 0.2,
        };
        for rule in RULES {
            for k in [5u32, 30, 100] {
                for &p in &[0.1, 0.2, 0.45] {
                    let x = maj_at_k_modes(p, &a, ex, k, rule);
                    let y = maj_at_k_modes(p, &b, ex, k, rule);
                    assert!(
                        rel(x.0, y.0) < 1e-12 && rel(x.1, y.1) < 1e-12,
                        "{x:?} {y:?}"
                    );
                    assert!((x.0 + x.1 - 1.0).abs() < 1e-13, "{x:?}");
                }
            }
        }
    }

    #[test]
    fn exact_at_k_1024_with_8_attractors() {
        // Complements stay accurate: a lopsided problem's loss is tiny and positive, and the
        // win of a hopeless one likewise.
        let a = [0.1; 8];
        let (w, l) = maj_at_k_modes(0.3, &a, Extraction::default(), 1024, VoteRule::Random);
        assert!(l > 0.0 && l < 1e-20 && (w - 1.0).abs() < 1e-15, "{w} {l}");
        let (w, l) = maj_at_k_modes(
            0.05,
            &[0.5, 0.4],
            Extraction::default(),
            1024,
            VoteRule::Random,
        );
        assert!(w > 0.0 && w < 1e-20 && (l - 1.0).abs() < 1e-15, "{w} {l}");
        // Near the threshold the value is interior and win + loss = 1.
        let p = winning_threshold(&a, 0.0);
        let (w, l) = maj_at_k_modes(p, &a, Extraction::default(), 1024, VoteRule::Random);
        assert!(w > 0.1 && l > 0.1 && (w + l - 1.0).abs() < 1e-14, "{w} {l}");
        // Unequal shares in two orders: the programme runs differently, the value is the same.
        let b = [0.2, 0.15, 0.1, 0.1, 0.08, 0.07, 0.05, 0.05];
        let mut r = b;
        r.reverse();
        let p = winning_threshold(&b, 0.0) + 0.003;
        let x = maj_at_k_modes(p, &b, Extraction::default(), 1024, VoteRule::Random);
        let y = maj_at_k_modes(p, &r, Extraction::default(), 1024, VoteRule::Random);
        assert!(
            rel(x.0, y.0) < 1e-13 && rel(x.1, y.1) < 1e-13,
            "{x:?} {y:?}"
        );
    }

    #[test]
    fn split_lowers_maj_but_not_the_graded_rate() {
        let a = [0.4];
        let mut last = f64::INFINITY;
        for s in [0.0, 0.1, 0.2, 0.3, 0.4, 0.5] {
            let ex = Extraction {
                unparsed: 0.0,
                split: s,
            };
            let (w, _) = maj_at_k_modes(0.5, &a, ex, 32, VoteRule::Random);
            assert!(w < last, "split {s}: {w} not below {last}");
            last = w;
            assert_eq!(graded_rate(0.5, ex), 0.5);
        }
        // The shares of the two forms add up to the graded rate.
        let sh = AnswerShares::new(
            0.6,
            &a,
            Extraction {
                unparsed: 0.25,
                split: 0.3,
            },
        );
        assert!(
            (sh.correct + sh.alternate
                - graded_rate(
                    0.6,
                    Extraction {
                        unparsed: 0.25,
                        split: 0.3
                    }
                ))
            .abs()
                < 1e-16
        );
        let total = sh.correct + sh.alternate + sh.attractors[0] + sh.one_off;
        assert!((total - 1.0).abs() < 1e-15);
    }

    #[test]
    fn maj1_and_maj2_equal_the_graded_rate() {
        let ex = Extraction {
            unparsed: 0.2,
            split: 0.3,
        };
        for &p in &[0.1, 0.5, 0.9] {
            for k in [1u32, 2] {
                let (w, _) = maj_at_k_modes(p, &[0.3, 0.4], ex, k, VoteRule::Random);
                assert!((w - graded_rate(p, ex)).abs() < 1e-15, "k={k} p={p}: {w}");
            }
        }
    }

    #[test]
    fn limits_and_thresholds() {
        let a = [0.2, 0.5, 0.1];
        let t = winning_threshold(&a, 0.0);
        assert!((t - 0.5 / 1.5).abs() < 1e-16);
        assert_eq!(t, crate::exact::maj::attractor_threshold(0.5));
        let lim = |p: f64| {
            maj_limit(
                &AnswerShares::new(p, &a, Extraction::default()),
                VoteRule::Random,
            )
        };
        assert_eq!(lim(0.34), 1.0);
        assert_eq!(lim(0.33), 0.0);
        // Exact tie: p = a (1 - p) with a = 1/2 at p = 1/3; representable ties via shares.
        let tie = AnswerShares {
            correct: 0.25,
            alternate: 0.0,
            attractors: vec![0.25, 0.25, 0.1],
            one_off: 0.4,
        };
        assert_eq!(maj_limit(&tie, VoteRule::Random), 1.0 / 3.0);
        let tie2 = AnswerShares {
            correct: 0.3,
            alternate: 0.3,
            attractors: vec![0.3],
            one_off: 0.1,
        };
        assert_eq!(maj_limit(&tie2, VoteRule::Strict), 2.0 / 3.0);
        // Split raises the threshold: 0.6 * 0.5 = 0.3 < 0.5 * 0.4... at p = 0.6, s = 0.5, a = 0.5.
        let ex = Extraction {
            unparsed: 0.3,
            split: 0.5,
        };
        assert_eq!(
            maj_limit(&AnswerShares::new(0.6, &[0.5], ex), VoteRule::Random),
            1.0
        );
        assert_eq!(
            maj_limit(&AnswerShares::new(0.45, &[0.5], ex), VoteRule::Random),
            0.0
        );
        assert!((winning_threshold(&[0.5], 0.5) - 0.5).abs() < 1e-16);
        // The limit is approached: at k = 1,024 far from the threshold.
        for &p in &[0.2, 0.45] {
            let (w, _) = maj_at_k_modes(p, &a, Extraction::default(), 1024, VoteRule::Random);
            assert!((w - lim(p)).abs() < 1e-6, "p={p}: {w}");
        }
        // The one-attractor ceiling is the existing one.
        let rates = [0.1, 0.3, 0.34, 0.5, 0.9];
        assert_eq!(
            maj_ceiling_modes(&rates, &[0.5], Extraction::default(), VoteRule::Random),
            maj_ceiling(&rates, 0.5)
        );
    }
}
