//! Confidence-filtered majority vote (DeepConf-style): k samples, each with a confidence; keep
//! the confident ones, vote among those kept.
//!
//! Each sample is correct (share p), the one repeated attractor answer (q = a (1 - p)) or a
//! one-off wrong answer (o = (1 - a)(1 - p)), and carries a confidence Z ~ N(mu_X, 1) with
//! mu = d (`separation`) for a correct sample, e (`attractor`) for the attractor and 0 for a
//! one-off. Two filters:
//!
//! - **Threshold t**: keep the samples with Z > t. Each class is thinned independently (a
//!   correct sample survives with S_c = 1 - Phi(t - d), the attractor with S_a = 1 - Phi(t - e),
//!   a one-off with S_w = 1 - Phi(t)), so the kept count is M ~ Bin(k, r) with
//!   r = p S_c + q S_a + o S_w, and given M = m the kept samples are i.i.d. with the renormalised
//!   shares p' = p S_c / r and attractor share a' = a S_a / (a S_a + (1 - a) S_w) of the kept
//!   wrong ones (the same on every problem). So filtered maj@k = sum_m P(M = m) maj@m(p', a'),
//!   with the canonical maj@m of [`crate::exact::maj`]; M = 0 (nothing kept) is scored as a loss.
//! - **Top share s**: keep the m = ceil(s k) most confident samples. Let T be the confidence of
//!   the m-th most confident sample. Its density is k C(k - 1, m - 1) f(t) S(t)^(m - 1)
//!   F(t)^(k - m) with the mixture density f = sum_X pi_X phi(t - mu_X) and survival S = 1 - F;
//!   given T = t its class is X with weight pi_X phi(t - mu_X), and the m - 1 samples above it
//!   are i.i.d. with class weights pi_X S_X(t) / S(t). Filtered maj@k is the integral over t of
//!   the vote of those m samples, a one-dimensional integral computed by
//!   [`AdaptiveKronrod`] (summed differences within 1e-13 of the whole, for the value and for
//!   its complement separately), each node an O(m^2) sum over the kept counts. Ties of two
//!   confidences have probability 0. s = 1 keeps every sample: maj@k itself.
//!
//! Both filters and their complements are each summed from non-negative terms. The top-share
//! filter is computed for k up to [`MAX_TOP_SHARE_K`] (the scenario layer refuses larger k).
//!
//! May depend on: `model` and the closed forms of this module's siblings.
use serde::Serialize;

use super::maj::{binomial_pmf_pq, ln_factorials, maj_at_k_all_with_loss, maj_at_k_with_loss};
use super::normal::cdf_and_sf;
use super::quadrature::AdaptiveKronrod;
use crate::model::{Confidence, VoteRule};

/// The largest k of the top-share filter's exact value: O(m^2) per quadrature node and problem.
pub const MAX_TOP_SHARE_K: u32 = 64;

/// Which samples a confidence filter keeps.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Filter {
    /// Keep the samples whose confidence exceeds the threshold.
    Threshold(f64),
    /// Keep the ceil(s k) most confident samples (s in (0, 1]).
    TopShare(f64),
}

impl Filter {
    /// The name in tables, checks and legends: `conf>1.5` or `top 50%`.
    pub fn name(self) -> String {
        match self {
            Filter::Threshold(t) => format!("conf>{t}"),
            Filter::TopShare(s) => format!("top {}%", 100.0 * s),
        }
    }
}

/// The number of samples the top share s keeps of k: ceil(s k), at least 1, where s k within
/// 1e-9 of a whole number counts as that number (0.3 x 10 keeps 3, not 4).
pub fn top_count(share: f64, k: u32) -> u32 {
    let x = share * f64::from(k);
    let r = x.round();
    let m = if (x - r).abs() <= 1e-9 * r.max(1.0) {
        r
    } else {
        x.ceil()
    };
    (m as u32).clamp(1, k)
}

/// The per-sample class shares (correct, attractor, one-off) on a problem with rate p and
/// attractor share a.
fn classes(p: f64, a: f64) -> [f64; 3] {
    [p, a * (1.0 - p), (1.0 - a) * (1.0 - p)]
}

/// The class means (correct, attractor, one-off).
fn means(c: Confidence) -> [f64; 3] {
    [c.separation, c.attractor, 0.0]
}

/// (r, 1 - r): the chance that one sample's confidence exceeds t, and its complement, each
/// summed over the classes. Time: O(1).
pub fn kept_share(p: f64, a: f64, c: Confidence, t: f64) -> (f64, f64) {
    let pi = classes(p, a);
    let (mut keep, mut drop) = (0.0, 0.0);
    for (w, mu) in pi.iter().zip(means(c)) {
        let (f, s) = cdf_and_sf(t - mu);
        keep += w * s;
        drop += w * f;
    }
    (keep.min(1.0), drop.min(1.0))
}

/// Each problem's (filtered maj@k, 1 - filtered maj@k) under the threshold filter t: sum over
/// the kept count m of P(M = m) maj@m(p', a'), nothing kept a loss. Time: O(k^3 + N k^2).
pub fn threshold_maj(
    rates: &[f64],
    a: f64,
    c: Confidence,
    t: f64,
    k: u32,
    rule: VoteRule,
) -> Vec<(f64, f64)> {
    let sa = cdf_and_sf(t - c.attractor).1;
    let sw = cdf_and_sf(t).1;
    let sc = cdf_and_sf(t - c.separation).1;
    let (wa, ww) = (a * sa, (1.0 - a) * sw);
    let a_kept = if wa + ww > 0.0 { wa / (wa + ww) } else { 0.0 };
    let kept: Vec<(f64, f64)> = rates.iter().map(|&p| kept_share(p, a, c, t)).collect();
    let pmfs: Vec<Vec<f64>> = kept
        .iter()
        .map(|&(r, s)| binomial_pmf_pq(k, r, s))
        .collect();
    let renormalised: Vec<f64> = rates
        .iter()
        .zip(&kept)
        .map(|(&p, &(r, _))| if r > 0.0 { (p * sc / r).min(1.0) } else { 0.0 })
        .collect();
    let mut out: Vec<(f64, f64)> = pmfs.iter().map(|pmf| (0.0, pmf[0])).collect();
    for m in 1..=k {
        let votes = maj_at_k_all_with_loss(&renormalised, a_kept, m, rule);
        for ((o, pmf), (w, l)) in out.iter_mut().zip(&pmfs).zip(votes) {
            o.0 += pmf[m as usize] * w;
            o.1 += pmf[m as usize] * l;
        }
    }
    out.into_iter()
        .map(|(w, l)| (w.clamp(0.0, 1.0), l.clamp(0.0, 1.0)))
        .collect()
}

/// (win, loss) of a vote of m kept samples of which c are correct, `at` the attractor and the
/// rest one-offs (each its own answer), under `rule`: the outcome [`crate::exact::maj`]'s W(c)
/// averages. Time: O(1).
fn vote_of(c: u32, at: u32, m: u32, rule: VoteRule) -> (f64, f64) {
    let win = |x: bool| if x { (1.0, 0.0) } else { (0.0, 1.0) };
    match (rule, c) {
        (VoteRule::Absolute, _) => win(2 * c > m),
        (_, 0) => (0.0, 1.0),
        // One correct sample ties with every other singleton when no answer repeats.
        (VoteRule::Strict, 1) => win(m == 1),
        (_, 1) if at <= 1 => {
            let m = f64::from(m);
            (1.0 / m, (m - 1.0) / m)
        }
        (_, 1) => (0.0, 1.0),
        (VoteRule::Strict, _) => win(at < c),
        (_, _) if at == c => (0.5, 0.5),
        (_, _) => win(at < c),
    }
}

/// (filtered maj@k, 1 - filtered maj@k) of one problem with rate p and attractor share a when
/// the m most confident of k samples are kept. m = k is maj@k itself
/// ([`maj_at_k_with_loss`]); otherwise the integral over the boundary confidence (module doc).
/// Time: O(G m^2) with G quadrature nodes (about 1,200 to 2,000).
///
/// # Panics
///
/// If m = 0 or m > k.
pub fn top_share_maj(p: f64, a: f64, c: Confidence, m: u32, k: u32, rule: VoteRule) -> (f64, f64) {
    assert!(m >= 1 && m <= k, "top-share filter needs 1 <= m <= k");
    if m == k {
        return maj_at_k_with_loss(p, a, k, rule);
    }
    boundary_integral(p, a, c, m, k, rule)
}

/// The integral of [`top_share_maj`] for any 1 <= m <= k (m = k included: a test compares it
/// with maj@k). Time: O(G m^2).
pub(crate) fn boundary_integral(
    p: f64,
    a: f64,
    c: Confidence,
    m: u32,
    k: u32,
    rule: VoteRule,
) -> (f64, f64) {
    let pi = classes(p, a);
    let mu = means(c);
    let lnf = ln_factorials(k);
    let (k_us, m_us) = (k as usize, m as usize);
    // ln of k C(k - 1, m - 1).
    let ln_count = f64::from(k).ln() + lnf[k_us - 1] - lnf[m_us - 1] - lnf[k_us - m_us];
    let rule_k = AdaptiveKronrod::RUN_NOISE;
    let v = rule_k.expect_many(2, |z, out| {
        out[0] = 0.0;
        out[1] = 0.0;
        // Survival and cdf of each class at t = z, and the mixture's.
        let mut surv = [0.0; 3];
        let (mut big_f, mut big_s) = (0.0, 0.0);
        for x in 0..3 {
            let (f, s) = cdf_and_sf(z - mu[x]);
            surv[x] = pi[x] * s;
            big_f += pi[x] * f;
            big_s += pi[x] * s;
        }
        // phi(z - mu) / phi(z) for each class: the integral is E[. / phi(Z)] over Z ~ N(0, 1).
        let ratio: [f64; 3] =
            std::array::from_fn(|x| pi[x] * (mu[x] * z - 0.5 * mu[x] * mu[x]).exp());
        let ln_pow = |x: f64, n: usize| if n == 0 { 0.0 } else { n as f64 * x.ln() };
        let ln_front = ln_count + ln_pow(big_f, k_us - m_us) + ln_pow(big_s, m_us - 1);
        let largest = ratio.iter().fold(0.0f64, |x, &y| x.max(y));
        // Negligible (or NaN from an empty tail): the floor of the rule is 1e-300.
        let ln_size = ln_front + largest.ln();
        if ln_size.is_nan() || ln_size <= -700.0 {
            return;
        }
        let front = ln_front.exp();
        // The m - 1 samples above the boundary: C ~ Bin(m - 1, w_c), A | C ~ Bin(m - 1 - C, alpha).
        let n = m - 1;
        let wc = if big_s > 0.0 { surv[0] / big_s } else { 0.0 };
        let wrong = surv[1] + surv[2];
        let alpha = if wrong > 0.0 { surv[1] / wrong } else { 0.0 };
        let pmf_c = binomial_pmf_pq(n, wc, if big_s > 0.0 { wrong / big_s } else { 1.0 });
        let (mut win, mut loss) = (0.0, 0.0);
        for (cc, &pc) in pmf_c.iter().enumerate() {
            if pc == 0.0 {
                continue;
            }
            let cc = cc as u32;
            let pmf_a = binomial_pmf_pq(
                n - cc,
                alpha,
                if wrong > 0.0 { surv[2] / wrong } else { 1.0 },
            );
            for (aa, &pa) in pmf_a.iter().enumerate() {
                let w = pc * pa;
                if w == 0.0 {
                    continue;
                }
                let aa = aa as u32;
                // The boundary sample of each class.
                for (x, (dc, da)) in [(1, 0), (0, 1), (0, 0)].into_iter().enumerate() {
                    let (vw, vl) = vote_of(cc + dc, aa + da, m, rule);
                    win += w * ratio[x] * vw;
                    loss += w * ratio[x] * vl;
                }
            }
        }
        out[0] = front * win;
        out[1] = front * loss;
    });
    (v[0].clamp(0.0, 1.0), v[1].clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::maj::maj_at_k_with_loss;
    use crate::exact::normal::cdf;

    const RULES: [VoteRule; 3] = [VoteRule::Random, VoteRule::Strict, VoteRule::Absolute];

    fn rel(x: f64, y: f64) -> f64 {
        if x == y {
            0.0
        } else {
            (x - y).abs() / x.abs().max(y.abs())
        }
    }

    /// (win, loss) of a vote with the given counts, written out from the rules' definitions
    /// (largest answer wins; ties broken uniformly under `random`, lost under `strict`;
    /// `absolute` needs more than half), independently of `vote_of`.
    fn literal_vote(c: u32, at: u32, w: u32, rule: VoteRule) -> (f64, f64) {
        let m = c + at + w;
        if m == 0 || c == 0 {
            return (0.0, 1.0);
        }
        if rule == VoteRule::Absolute {
            return if 2 * c > m { (1.0, 0.0) } else { (0.0, 1.0) };
        }
        let mut sizes = vec![c];
        if at > 0 {
            sizes.push(at);
        }
        sizes.extend(std::iter::repeat_n(1, w as usize));
        let top = *sizes.iter().max().unwrap();
        let tied = sizes.iter().filter(|&&s| s == top).count() as f64;
        if c < top {
            (0.0, 1.0)
        } else if rule == VoteRule::Strict {
            if tied == 1.0 {
                (1.0, 0.0)
            } else {
                (0.0, 1.0)
            }
        } else {
            (1.0 / tied, 1.0 - 1.0 / tied)
        }
    }

    /// Threshold filter by brute force: every sample is one of 6 (class, kept) outcomes; the
    /// 6^k sequences are enumerated and each voted literally.
    fn threshold_brute(
        p: f64,
        a: f64,
        c: Confidence,
        t: f64,
        k: u32,
        rule: VoteRule,
    ) -> (f64, f64) {
        let pi = classes(p, a);
        let mu = means(c);
        let mut probs = [0.0; 6];
        for x in 0..3 {
            probs[2 * x] = pi[x] * cdf_and_sf(t - mu[x]).1;
            probs[2 * x + 1] = pi[x] * cdf_and_sf(t - mu[x]).0;
        }
        let (mut win, mut loss) = (0.0, 0.0);
        for code in 0..6u64.pow(k) {
            let (mut pr, mut counts, mut x) = (1.0, [0u32; 3], code);
            for _ in 0..k {
                let o = (x % 6) as usize;
                x /= 6;
                pr *= probs[o];
                if o.is_multiple_of(2) {
                    counts[o / 2] += 1;
                }
            }
            let (vw, vl) = literal_vote(counts[0], counts[1], counts[2], rule);
            win += pr * vw;
            loss += pr * vl;
        }
        (win, loss)
    }

    #[test]
    fn threshold_filter_matches_brute_force_enumeration() {
        let confs = [
            Confidence {
                separation: 1.5,
                attractor: 0.0,
            },
            Confidence {
                separation: 1.0,
                attractor: 2.5,
            },
        ];
        let rates = [0.05, 0.35, 0.6, 0.97];
        for rule in RULES {
            for c in confs {
                for t in [-1.0, 0.4, 2.0] {
                    for k in [1, 2, 3, 5] {
                        let exact = threshold_maj(&rates, 0.4, c, t, k, rule);
                        for (&p, &(w, l)) in rates.iter().zip(&exact) {
                            let (bw, bl) = threshold_brute(p, 0.4, c, t, k, rule);
                            assert!(
                                rel(w, bw) < 1e-12,
                                "{rule:?} {c:?} t={t} k={k} p={p}: {w} {bw}"
                            );
                            assert!(
                                rel(l, bl) < 1e-12,
                                "{rule:?} {c:?} t={t} k={k} p={p}: {l} {bl}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn a_threshold_below_every_confidence_is_maj_at_k() {
        let c = Confidence {
            separation: 2.0,
            attractor: 1.0,
        };
        let rates = [0.1, 0.5, 0.9];
        for rule in RULES {
            for k in [1, 4, 16, 33] {
                let exact = threshold_maj(&rates, 0.3, c, -50.0, k, rule);
                for (&p, &(w, l)) in rates.iter().zip(&exact) {
                    let (mw, ml) = maj_at_k_with_loss(p, 0.3, k, rule);
                    assert!(
                        rel(w, mw) < 1e-13 && rel(l, ml) < 1e-13,
                        "{rule:?} k={k} p={p}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_boundary_integral_at_m_equals_k_is_maj_at_k() {
        let c = Confidence {
            separation: 1.2,
            attractor: 2.0,
        };
        for rule in RULES {
            for k in [2, 5, 16] {
                for p in [0.02, 0.3, 0.7, 0.99] {
                    let (w, l) = boundary_integral(p, 0.5, c, k, k, rule);
                    let (mw, ml) = maj_at_k_with_loss(p, 0.5, k, rule);
                    assert!(rel(w, mw) < 1e-12, "{rule:?} k={k} p={p}: {w} {mw}");
                    assert!(rel(l, ml) < 1e-12, "{rule:?} k={k} p={p}: {l} {ml}");
                }
            }
        }
    }

    #[test]
    fn uninformative_confidence_keeps_a_uniform_subset_so_top_m_is_maj_at_m() {
        // Every class's confidence is N(0, 1): the m most confident are m samples chosen
        // uniformly, i.i.d. with the original shares.
        let c = Confidence::default();
        for rule in RULES {
            for (m, k) in [(1, 2), (1, 7), (3, 8), (5, 16), (17, 64)] {
                for p in [0.05, 0.4, 0.8] {
                    let (w, l) = top_share_maj(p, 0.6, c, m, k, rule);
                    let (mw, ml) = maj_at_k_with_loss(p, 0.6, m, rule);
                    assert!(rel(w, mw) < 1e-12, "{rule:?} m={m} k={k} p={p}: {w} {mw}");
                    assert!(rel(l, ml) < 1e-12, "{rule:?} m={m} k={k} p={p}: {l} {ml}");
                }
            }
        }
    }

    #[test]
    fn top_one_of_two_is_the_closed_form_of_a_pairwise_comparison() {
        // The more confident of two samples is correct: both correct, or one correct and more
        // confident than the other, P(Z_c > Z_X) = Phi((mu_c - mu_X) / sqrt 2).
        let a = 0.4;
        for c in [
            Confidence {
                separation: 1.5,
                attractor: 0.0,
            },
            Confidence {
                separation: 0.5,
                attractor: 2.5,
            },
            Confidence {
                separation: -1.0,
                attractor: 3.0,
            },
        ] {
            for p in [0.1, 0.5, 0.9] {
                let [pc, pa, pw] = classes(p, a);
                let beats = |mu: f64| cdf((c.separation - mu) / std::f64::consts::SQRT_2);
                let loses = |mu: f64| cdf((mu - c.separation) / std::f64::consts::SQRT_2);
                let win = pc * pc + 2.0 * pc * (pa * beats(c.attractor) + pw * beats(0.0));
                let loss = pa * pa
                    + pw * pw
                    + 2.0 * pa * pw
                    + 2.0 * pc * (pa * loses(c.attractor) + pw * loses(0.0));
                for rule in [VoteRule::Random, VoteRule::Strict] {
                    let (w, l) = top_share_maj(p, a, c, 1, 2, rule);
                    assert!(rel(w, win) < 1e-12, "{c:?} p={p}: {w} {win}");
                    assert!(rel(l, loss) < 1e-12, "{c:?} p={p}: {l} {loss}");
                }
            }
        }
    }

    #[test]
    fn the_boundary_integral_and_its_complement_sum_to_one_at_unequal_means() {
        // A check of the quadrature where no closed form exists: win + loss integrates the
        // density of the boundary confidence, whose mass is 1.
        for c in [
            Confidence {
                separation: 3.0,
                attractor: -2.0,
            },
            Confidence {
                separation: -1.0,
                attractor: 6.0,
            },
            Confidence {
                separation: 10.0,
                attractor: 10.0,
            },
        ] {
            for (m, k) in [(1, 64), (5, 64), (40, 64), (3, 16)] {
                for p in [1e-6, 0.3, 0.999] {
                    let (w, l) = top_share_maj(p, 0.5, c, m, k, VoteRule::Random);
                    assert!(
                        (w + l - 1.0).abs() < 1e-12,
                        "{c:?} m={m} k={k} p={p}: {w} + {l}"
                    );
                }
            }
        }
    }

    #[test]
    fn top_count_rounds_up_but_not_a_product_that_is_whole() {
        assert_eq!(top_count(0.3, 10), 3);
        assert_eq!(top_count(0.25, 16), 4);
        assert_eq!(top_count(0.26, 16), 5);
        assert_eq!(top_count(0.01, 16), 1);
        assert_eq!(top_count(1.0, 16), 16);
        assert_eq!(top_count(0.1, 30), 3);
    }

    #[test]
    fn kept_share_and_its_complement_sum_to_one() {
        let c = Confidence {
            separation: 2.0,
            attractor: -1.0,
        };
        for p in [0.0, 0.3, 1.0] {
            for t in [-3.0, 0.0, 4.0, 30.0] {
                let (r, s) = kept_share(p, 0.5, c, t);
                assert!((r + s - 1.0).abs() < 4e-16, "p={p} t={t}");
            }
        }
    }
}
