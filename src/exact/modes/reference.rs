//! The reference algorithms the windowed programme of [`super`] is tested against, kept out of
//! the production build: the full sum over every leader count, state and binomial entry above
//! 1e-300 ([`maj_at_k_modes_unpruned`]) and the previous algorithm, which runs the leader counts
//! largest P(C = c) first and stops once the counts not yet run sum below 1e-15 of the smaller of
//! the win and the loss ([`maj_at_k_modes_previous`]). Compiled for the tests and, with the
//! `reference-algorithms` feature, for the `modes` benchmark's baseline.
use super::{
    partner_of, prepare, AnswerShares, Extraction, Programme, Rows, Scratch, Sum, PRUNE, TINY,
};
use crate::model::VoteRule;

/// [`super::maj_at_k_modes`] with the programme run for every leader count, state and entry
/// (no pruning, no windows): the full sum. Time: O(m k^3 / 12).
///
/// # Panics
///
/// If k = 0.
pub fn maj_at_k_modes_unpruned(
    p: f64,
    attractors: &[f64],
    extraction: Extraction,
    k: u32,
    rule: VoteRule,
) -> (f64, f64) {
    win_loss(
        &AnswerShares::new(p, attractors, extraction),
        k,
        rule,
        false,
    )
}

/// [`super::maj_at_k_modes`] by the previous algorithm: every state and every binomial entry
/// above 1e-300 of the leader counts kept by the pruned sum over leader counts, without the
/// windows. Time: O(m k^3 / 12).
///
/// # Panics
///
/// If k = 0.
pub fn maj_at_k_modes_previous(
    p: f64,
    attractors: &[f64],
    extraction: Extraction,
    k: u32,
    rule: VoteRule,
) -> (f64, f64) {
    win_loss(&AnswerShares::new(p, attractors, extraction), k, rule, true)
}

/// (win, loss) of `shares` by the full sum, or with `pruned` by the previous algorithm, in fresh
/// buffers.
pub(crate) fn win_loss(shares: &AnswerShares, k: u32, rule: VoteRule, pruned: bool) -> (f64, f64) {
    let mut s = Scratch::default();
    let (mut acc, has_main) = match prepare(&mut s, shares, k, rule) {
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
    } = &mut s;
    // The counts not yet run can change the win or the loss by at most the sum of their
    // P(C = c), `left` (summed smallest first). Once that is below PRUNE of the smaller of the
    // win and loss gathered so far (which only grow), the rest is skipped: each result keeps a
    // relative error below PRUNE.
    let mut left = vec![0.0; runs.len() + 1];
    for i in (0..runs.len()).rev() {
        left[i] = left[i + 1] + runs[i].0;
    }
    for (i, &(w0, c, second)) in runs.iter().enumerate() {
        if pruned && left[i] <= PRUNE * acc.0.value().min(acc.1.value()) {
            break;
        }
        let (partner, ties) = partner_of(partner_alt, partner_main, second, has_main);
        dp.run(c, w0, partner, ties, attractor_rows, rule, &mut acc);
    }
    (acc.0.value().clamp(0.0, 1.0), acc.1.value().clamp(0.0, 1.0))
}

impl Programme {
    /// One leader count c of probability `w0` through every stage, every state and every row
    /// entry above 1e-300: [`Programme::run_windowed`] without the windows.
    #[allow(clippy::too_many_arguments)]
    fn run(
        &mut self,
        c: usize,
        w0: f64,
        partner: &Rows,
        partner_ties: bool,
        attractors: &[Rows],
        rule: VoteRule,
        acc: &mut (Sum, Sum),
    ) {
        let k = self.cur[0].len() - 1;
        let n0 = k - c;
        for (v, r) in self.cur.iter_mut().zip(self.cur_range.iter_mut()) {
            if let Some((lo, hi)) = r.take() {
                v[lo..=hi].fill(0.0);
            }
        }
        // The partner form.
        let (plo, prow) = partner.row(n0);
        let (l1, l2) = (self.layer(1, 0), self.layer(2, 0));
        for (i, &x) in prow.iter().enumerate() {
            let v = plo + i;
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
                        let (rlo, row) = rows.row(n);
                        let rhi = rlo + row.len() - 1;
                        // Counts a < c stay at this level.
                        if rlo < c {
                            let top = rhi.min(c - 1);
                            let dst = &mut self.next[li][n - top..=n - rlo];
                            for (d, &x) in dst.iter_mut().rev().zip(&row[..=top - rlo]) {
                                *d += w * x;
                            }
                            let r = &mut self.next_range[li];
                            *r = Some(match *r {
                                None => (n - top, n - rlo),
                                Some((a, b)) => (a.min(n - top), b.max(n - rlo)),
                            });
                        }
                        if (rlo..=rhi).contains(&c) {
                            let x = w * row[c - rlo];
                            Self::add(&mut self.next[up], &mut self.next_range[up], n - c, x);
                        }
                        if rhi > c {
                            let from = (c + 1).max(rlo) - rlo;
                            acc.1.add(w * row[from..].iter().sum::<f64>());
                        }
                    }
                }
            }
            std::mem::swap(&mut self.cur, &mut self.next);
            std::mem::swap(&mut self.cur_range, &mut self.next_range);
            for (v, r) in self.cur.iter_mut().zip(self.cur_range.iter_mut()) {
                if let Some((mut lo, mut hi)) = *r {
                    while lo < hi && v[lo] < TINY {
                        v[lo] = 0.0;
                        lo += 1;
                    }
                    while hi > lo && v[hi] < TINY {
                        v[hi] = 0.0;
                        hi -= 1;
                    }
                    *r = Some((lo, hi));
                }
            }
        }
        self.score(c, rule, acc);
    }
}
