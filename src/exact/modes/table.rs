//! maj@k of one answer law at every solve rate: conditional win tables for several attractors,
//! `split` and `unparsed` (what [`crate::exact::maj`] does for one attractor share).
//!
//! A sample is parsed and correct with probability (1 - u) p, parsed and wrong with
//! (1 - u)(1 - p), and unparsed with u. Given the counts (c, w) of the first two, who wins the vote
//! no longer depends on p: the c correct samples split between the two forms as Bin(c, s), the w
//! wrong ones fall on attractor j or a one-off with the fixed shares a_j and 1 - sum a, and the
//! k - c - w unparsed samples are one-offs. So
//!
//! ```text
//! maj@k(p) = sum_z Bin(z; k, u) sum_c Bin(c; k - z, p) W(c, k - z - c),
//! ```
//!
//! a polynomial of degree k in p. [`ModesTable::new`] computes W (and the loss table L, from its
//! own terms) once per (k, shares, extraction, rule), then writes the polynomial in the degree-k
//! Bernstein basis: each inner sum of degree k - z is raised to degree k (every step a convex
//! combination of neighbouring coefficients) and weighted by Bin(z; k, u). Then
//! maj@k(p) = sum_c Bin(c; k, p) V(c) and 1 - maj@k(p) = sum_c Bin(c; k, p) V_loss(c): O(k) per
//! rate, and both sums of positive terms, so each keeps its relative accuracy however small it is.
//!
//! W(c, w) sums over the main form's count c_1 ~ Bin(c, 1 - s): the leader count is
//! l = max(c_1, c - c_1) and g in {1, 2} forms reach it. What the attractors do with w samples is
//! a backward programme over the attractors, for each l: H_l(w)[t], the probability that no
//! attractor exceeds l and exactly t reach it, and E_l(w), the probability that one exceeds l (an
//! upper binomial tail, summed from its own terms). Attractor j takes Bin(n, beta_j) of the n
//! samples left, beta_j = a_j / (a_j + ... + a_m + one-off share). Scoring: at l >= 2 one-offs are
//! never at the top; `Random` wins with g / (g + t), `Strict` only when g = 1 and t = 0; at l = 1
//! every answer is at the top (k of them), so `Random` wins with c / k and `Strict` only at
//! k = 1; `Absolute` wins when one form alone has more than k / 2.
//!
//! Time: O(m k^2 sum_l l min(m, k / l)) = O(m k^3) at most to build (m attractors), O(k^3) for
//! the assembly and the degree raising, then O(k) per rate. The tables are kept per thread for the
//! last few answer laws ([`maj_at_k_table`]), so a population of tens of thousands of rates costs
//! one build.

use crate::exact::maj::{binomial_pmf, binomial_pmf_into};
use crate::exact::modes::Extraction;
use crate::model::VoteRule;

/// The conditional tables of one answer law in the Bernstein basis of degree k.
#[derive(Debug, Clone)]
pub struct ModesTable {
    k: u32,
    win: Vec<f64>,
    loss: Vec<f64>,
}

/// What the attractors do with w wrong parsed samples, for one leader count l: `held[w][t]` (no
/// attractor above l, t of them at l) and `exceeded[w]`.
struct AttractorLaw {
    held: Vec<Vec<f64>>,
    exceeded: Vec<f64>,
}

impl ModesTable {
    /// The tables of maj@k for attractor shares `attractors` (of the wrong mass, summing to at
    /// most 1), extraction failures `extraction` and vote rule `rule`.
    ///
    /// # Panics
    ///
    /// If k = 0.
    pub fn new(attractors: &[f64], extraction: Extraction, k: u32, rule: VoteRule) -> ModesTable {
        assert!(k >= 1, "a vote needs at least one sample");
        let ku = k as usize;
        let laws = attractor_laws(attractors, ku, rule);
        // W(c, w) and L(c, w) for c + w <= k, indexed [c][w].
        let mut w_tab = vec![Vec::new(); ku + 1];
        let mut l_tab = vec![Vec::new(); ku + 1];
        for c in 0..=ku {
            let forms = binomial_pmf(c as u32, 1.0 - extraction.split);
            for w in 0..=ku - c {
                let (win, loss) = conditional(c, w, ku, &forms, &laws, rule);
                w_tab[c].push(win);
                l_tab[c].push(loss);
            }
        }
        let (win, loss) = raise(&w_tab, &l_tab, ku, extraction.unparsed);
        ModesTable { k, win, loss }
    }

    /// (maj@k, 1 - maj@k) at solve rate `p`, each from its own terms, with `pmf` as a buffer.
    /// Time: O(k).
    pub fn at(&self, p: f64, pmf: &mut Vec<f64>) -> (f64, f64) {
        binomial_pmf_into(self.k, p, pmf);
        let dot = |v: &[f64]| -> f64 {
            pmf.iter()
                .zip(v)
                .map(|(a, b)| a * b)
                .sum::<f64>()
                .clamp(0.0, 1.0)
        };
        (dot(&self.win), dot(&self.loss))
    }
}

/// The attractor laws of every leader count l = 1..=k (index l; 0 unused).
fn attractor_laws(attractors: &[f64], k: usize, rule: VoteRule) -> Vec<AttractorLaw> {
    if rule == VoteRule::Absolute {
        return Vec::new();
    }
    let spare = (1.0 - attractors.iter().sum::<f64>()).max(0.0);
    // beta_j and its complement, each from its own terms: the rest after j is
    // a_{j+1} + ... + a_m + spare.
    let m = attractors.len();
    let mut rest_after = vec![spare; m];
    for j in (0..m.saturating_sub(1)).rev() {
        rest_after[j] = rest_after[j + 1] + attractors[j + 1];
    }
    let rows: Vec<Vec<Vec<f64>>> = (0..m)
        .map(|j| {
            let total = attractors[j] + rest_after[j];
            let beta = if total > 0.0 {
                attractors[j] / total
            } else {
                0.0
            };
            (0..=k).map(|n| binomial_pmf(n as u32, beta)).collect()
        })
        .collect();
    (0..=k)
        .map(|l| {
            if l == 0 {
                AttractorLaw {
                    held: Vec::new(),
                    exceeded: Vec::new(),
                }
            } else {
                backward(&rows, l, k)
            }
        })
        .collect()
}

/// The backward programme over the attractors for leader count `l`: stage by stage from the
/// last attractor, the law of (held with t at l, exceeded) given n samples still to place.
fn backward(rows: &[Vec<Vec<f64>>], l: usize, k: usize) -> AttractorLaw {
    let m = rows.len();
    let levels = m.min(k / l) + 1;
    // After the last stage: nothing can exceed, none at l (the rest are one-offs).
    let mut held: Vec<Vec<f64>> = (0..=k)
        .map(|_| {
            let mut v = vec![0.0; levels];
            v[0] = 1.0;
            v
        })
        .collect();
    let mut exceeded = vec![0.0; k + 1];
    for row_j in rows.iter().rev() {
        let mut next_held = vec![vec![0.0; levels]; k + 1];
        let mut next_exceeded = vec![0.0; k + 1];
        for n in 0..=k {
            let row = &row_j[n];
            let mut ex: f64 = row.iter().skip(l + 1).sum();
            for (x, &b) in row.iter().enumerate().take(l.min(n) + 1) {
                if b == 0.0 {
                    continue;
                }
                let level = usize::from(x == l);
                ex += b * exceeded[n - x];
                let from = &held[n - x];
                let to = &mut next_held[n];
                for t in 0..levels - level {
                    to[t + level] += b * from[t];
                }
            }
            next_exceeded[n] = ex;
        }
        held = next_held;
        exceeded = next_exceeded;
    }
    AttractorLaw { held, exceeded }
}

/// (W(c, w), L(c, w)): the win and loss of a vote of k samples given c parsed correct and w parsed
/// wrong samples (the rest unparsed one-offs). `forms` is the pmf of the main form's count.
fn conditional(
    c: usize,
    w: usize,
    k: usize,
    forms: &[f64],
    laws: &[AttractorLaw],
    rule: VoteRule,
) -> (f64, f64) {
    let (mut win, mut loss) = (0.0, 0.0);
    for (c1, &pf) in forms.iter().enumerate() {
        if pf == 0.0 {
            continue;
        }
        let c2 = c - c1;
        let lead = c1.max(c2);
        if rule == VoteRule::Absolute {
            if 2 * lead > k {
                win += pf;
            } else {
                loss += pf;
            }
            continue;
        }
        if lead == 0 {
            loss += pf;
            continue;
        }
        let good = usize::from(c1 == lead) + usize::from(c2 == lead);
        let law = &laws[lead];
        let held = &law.held[w];
        let (mut cw, mut cl) = (0.0, law.exceeded[w]);
        if lead == 1 {
            // Every answer has one vote: all k are at the top.
            let ok: f64 = held.iter().sum();
            match rule {
                VoteRule::Random => {
                    cw += ok * c as f64 / k as f64;
                    cl += ok * (k - c) as f64 / k as f64;
                }
                _ if k == 1 => cw += ok,
                _ => cl += ok,
            }
        } else {
            for (t, &h) in held.iter().enumerate() {
                match rule {
                    VoteRule::Random => {
                        let tied = (good + t) as f64;
                        cw += h * good as f64 / tied;
                        cl += h * t as f64 / tied;
                    }
                    _ if good == 1 && t == 0 => cw += h,
                    _ => cl += h,
                }
            }
        }
        win += pf * cw;
        loss += pf * cl;
    }
    (win, loss)
}

/// The Bernstein coefficients of degree k of sum_z Bin(z; k, u) sum_c Bin(c; k - z, p)
/// T(c, k - z - c), for the win and the loss tables.
fn raise(w_tab: &[Vec<f64>], l_tab: &[Vec<f64>], k: usize, unparsed: f64) -> (Vec<f64>, Vec<f64>) {
    let pz = binomial_pmf(k as u32, unparsed);
    let mut win = vec![0.0; k + 1];
    let mut loss = vec![0.0; k + 1];
    let mut a = Vec::with_capacity(k + 1);
    let mut b = Vec::with_capacity(k + 1);
    for (z, &weight) in pz.iter().enumerate() {
        if weight == 0.0 {
            continue;
        }
        let n = k - z;
        a.clear();
        b.clear();
        a.extend((0..=n).map(|c| w_tab[c][n - c]));
        b.extend((0..=n).map(|c| l_tab[c][n - c]));
        for degree in n..k {
            elevate(&mut a, degree);
            elevate(&mut b, degree);
        }
        for c in 0..=k {
            win[c] += weight * a[c];
            loss[c] += weight * b[c];
        }
    }
    (win, loss)
}

/// Raises Bernstein coefficients from degree `n` to n + 1:
/// b'_i = i / (n + 1) b_{i-1} + (n + 1 - i) / (n + 1) b_i.
fn elevate(v: &mut Vec<f64>, n: usize) {
    let d = (n + 1) as f64;
    v.push(0.0);
    for i in (0..=n + 1).rev() {
        let left = if i > 0 { v[i - 1] } else { 0.0 };
        v[i] = (i as f64 / d) * left + ((n + 1 - i) as f64 / d) * v[i];
    }
}

/// (maj@k, 1 - maj@k) of one problem with solve rate `p` through this thread's tables of the last
/// few answer laws (built on first use): the same quantity as
/// [`crate::exact::modes::maj_at_k_modes`], for callers that evaluate one law at many rates.
pub fn maj_at_k_table(
    p: f64,
    attractors: &[f64],
    extraction: Extraction,
    k: u32,
    rule: VoteRule,
) -> (f64, f64) {
    type Key = (u32, Vec<u64>, u64, u64, VoteRule);
    const KEPT: usize = 4;
    #[derive(Default)]
    struct Cache {
        tables: Vec<(Key, ModesTable)>,
        pmf: Vec<f64>,
    }
    thread_local! {
        static CACHE: std::cell::RefCell<Cache> = std::cell::RefCell::new(Cache::default());
    }
    let key: Key = (
        k,
        attractors.iter().map(|a| a.to_bits()).collect(),
        extraction.unparsed.to_bits(),
        extraction.split.to_bits(),
        rule,
    );
    CACHE.with(|cell| {
        let mut cache = cell.borrow_mut();
        let Cache { tables, pmf } = &mut *cache;
        let i = match tables.iter().position(|(kk, _)| *kk == key) {
            Some(i) => i,
            None => {
                if tables.len() == KEPT {
                    tables.remove(0);
                }
                let table = ModesTable::new(attractors, extraction, k, rule);
                tables.push((key, table));
                tables.len() - 1
            }
        };
        tables[i].1.at(p, pmf)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::modes::tests::brute_force;
    use crate::exact::modes::{maj_at_k_modes, AnswerShares};

    const RULES: [VoteRule; 3] = [VoteRule::Random, VoteRule::Strict, VoteRule::Absolute];

    fn close(got: f64, want: f64, rel: f64) -> bool {
        (got - want).abs() <= rel * want.abs() || (got == 0.0 && want.abs() < 1e-300)
    }

    #[test]
    fn tables_equal_enumeration_of_every_label_sequence() {
        let laws: [(&[f64], Extraction); 4] = [
            (&[0.4, 0.3], Extraction::default()),
            (
                &[0.4, 0.3],
                Extraction {
                    unparsed: 0.1,
                    split: 0.2,
                },
            ),
            (
                &[0.5],
                Extraction {
                    unparsed: 0.0,
                    split: 0.3,
                },
            ),
            (
                &[0.2, 0.2, 0.6],
                Extraction {
                    unparsed: 0.25,
                    split: 0.0,
                },
            ),
        ];
        for (shares, ex) in laws {
            for rule in RULES {
                for k in 1..=6u32 {
                    let table = ModesTable::new(shares, ex, k, rule);
                    let mut pmf = Vec::new();
                    for p in [0.0, 0.03, 0.3, 0.5, 0.77, 1.0] {
                        let (win, loss) = table.at(p, &mut pmf);
                        let (bw, bl) =
                            brute_force(&AnswerShares::new(p, shares, ex), k as usize, rule);
                        assert!(
                            (win - bw).abs() <= 1e-13 && (loss - bl).abs() <= 1e-13,
                            "{shares:?} {ex:?} {rule:?} k={k} p={p}: ({win}, {loss}) vs ({bw}, {bl})"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn tables_agree_with_the_recurrence_to_1e_12_in_win_and_loss() {
        let laws: [(&[f64], Extraction); 4] = [
            (
                &[0.3, 0.2],
                Extraction {
                    unparsed: 0.0,
                    split: 0.1,
                },
            ),
            (&[0.45, 0.45], Extraction::default()),
            (
                &[0.1, 0.2, 0.3, 0.15],
                Extraction {
                    unparsed: 0.05,
                    split: 0.2,
                },
            ),
            (
                &[0.6],
                Extraction {
                    unparsed: 0.3,
                    split: 0.4,
                },
            ),
        ];
        for (shares, ex) in laws {
            for rule in RULES {
                for k in [3u32, 7, 16, 33, 64] {
                    for p in [1e-6, 0.01, 0.2, 0.41, 0.5, 0.7, 0.95, 1.0 - 1e-7] {
                        let (win, loss) = maj_at_k_table(p, shares, ex, k, rule);
                        let (rw, rl) = maj_at_k_modes(p, shares, ex, k, rule);
                        assert!(
                            close(win, rw, 1e-12) && close(loss, rl, 1e-12),
                            "{shares:?} {ex:?} {rule:?} k={k} p={p}: ({win:e}, {loss:e}) vs ({rw:e}, {rl:e})"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn raising_the_degree_keeps_the_polynomial() {
        // b(p) = sum_c Bin(c; 3, p) v_c, raised to degree 7, at several p.
        let v = vec![0.1, 0.7, 0.2, 0.9];
        let mut raised = v.clone();
        for n in 3..7 {
            elevate(&mut raised, n);
        }
        for p in [0.0, 0.2, 0.5, 0.9, 1.0] {
            let low: f64 = binomial_pmf(3, p).iter().zip(&v).map(|(a, b)| a * b).sum();
            let high: f64 = binomial_pmf(7, p)
                .iter()
                .zip(&raised)
                .map(|(a, b)| a * b)
                .sum();
            assert!((low - high).abs() <= 1e-15, "p={p}: {low} vs {high}");
        }
    }
}
