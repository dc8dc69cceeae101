//! pass@k and pass^k of one problem, and their benchmark means.
//!
//! Why here: the closed forms of `curves` and the Bernoulli standard errors of every share.
//! Depends on nothing.

/// pass@k = 1 - (1 - p)^k: at least one of k samples is right, as -expm1(k ln(1 - p)), so it
/// keeps its relative accuracy when small (p k << 1). Time: O(1).
pub fn pass_at_k(p: f64, k: u32) -> f64 {
    if p <= 0.0 {
        return 0.0;
    }
    -(f64::from(k) * (-p).ln_1p()).exp_m1()
}

/// 1 - pass@k = (1 - p)^k, computed directly: the chance that all k samples are wrong, to full
/// relative precision however small. Time: O(1).
pub fn pass_at_k_complement(p: f64, k: u32) -> f64 {
    if p >= 1.0 {
        return 0.0;
    }
    (f64::from(k) * (-p).ln_1p()).exp()
}

/// pass^k = p^k: all k samples are right. Time: O(1).
pub fn pass_hat_k(p: f64, k: u32) -> f64 {
    p.powi(k as i32)
}

/// 1 - pass^k = -expm1(k ln p), computed directly (small when p is near 1). Time: O(1).
pub fn pass_hat_k_complement(p: f64, k: u32) -> f64 {
    if p <= 0.0 {
        return 1.0;
    }
    -(f64::from(k) * p.ln()).exp_m1()
}

/// ln q from p and q = 1 - p computed by the caller from their own terms: ln q itself when
/// q < 1/2 was not obtained as 1 - p (a p near 1 under per-run noise, whose 1 - p has lost
/// digits), else ln_1p(-p), accurate when p <= 1/2 or q = 1 - p exactly.
fn ln_miss(p: f64, q: f64) -> f64 {
    if q < 0.5 && q != 1.0 - p {
        q.ln()
    } else {
        (-p).ln_1p()
    }
}

/// ln p from p and q as [`ln_miss`]: ln_1p(-q) when q < 1/2 is not exactly 1 - p (a p near 1
/// under per-run noise, rounded to the nearest double below 1, has lost q's digits), else ln p
/// itself, accurate when p <= 1/2 or q = 1 - p exactly.
fn ln_hit(p: f64, q: f64) -> f64 {
    if q < 0.5 && q != 1.0 - p {
        (-q).ln_1p()
    } else {
        p.ln()
    }
}

/// (pass@k, 1 - pass@k) = (1 - q^k, q^k) from p and q = 1 - p computed from their own terms
/// (under per-run noise both come from the logit). With q = 1 - p it is ([`pass_at_k`],
/// [`pass_at_k_complement`]) bit for bit. Time: O(1).
pub fn pass_at_k_pq(p: f64, q: f64, k: u32) -> (f64, f64) {
    if p <= 0.0 {
        return (0.0, 1.0);
    }
    if q <= 0.0 {
        return (1.0, 0.0);
    }
    let t = f64::from(k) * ln_miss(p, q);
    (-t.exp_m1(), t.exp())
}

/// (pass^k, 1 - pass^k) = (p^k, 1 - p^k) from p and q as [`pass_at_k_pq`]. With q = 1 - p it is
/// ([`pass_hat_k`], [`pass_hat_k_complement`]) bit for bit. Time: O(1).
pub fn pass_hat_k_pq(p: f64, q: f64, k: u32) -> (f64, f64) {
    if p <= 0.0 {
        return (pass_hat_k(p, k), 1.0);
    }
    (pass_hat_k(p, k), -(f64::from(k) * ln_hit(p, q)).exp_m1())
}

/// Mean of a per-problem quantity over the benchmark. Time: O(N).
pub fn mean(values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.iter().sum::<f64>() / values.len() as f64
}

/// Monte Carlo standard error of a benchmark mean estimated from `draws` independent Bernoulli
/// trials per problem with success probabilities `probs`: sqrt(sum_i m_i (1 - m_i) / draws) / N.
/// Time: O(N).
/// Use it for given rates, whose complement 1 - p is exact in f64; for derived probabilities
/// (maj@k, pass@k, accuracies under a cap) use [`bernoulli_mean_se_with`] and their directly
/// computed complements.
pub fn bernoulli_mean_se(probs: &[f64], draws: u64) -> f64 {
    let complements: Vec<f64> = probs.iter().map(|m| 1.0 - m).collect();
    bernoulli_mean_se_with(probs, &complements, draws)
}

/// [`bernoulli_mean_se`] with the complements 1 - m_i given (computed directly where small):
/// sqrt(sum_i m_i c_i / draws) / N. Time: O(N).
pub fn bernoulli_mean_se_with(probs: &[f64], complements: &[f64], draws: u64) -> f64 {
    let n = probs.len() as f64;
    let var: f64 = probs.iter().zip(complements).map(|(m, c)| m * c).sum();
    (var / draws as f64).sqrt() / n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pass_at_k_edges() {
        assert_eq!(pass_at_k(0.0, 5), 0.0);
        assert_eq!(pass_at_k(1.0, 5), 1.0);
        assert!((pass_at_k(0.3, 1) - 0.3).abs() < 1e-15);
        assert!((pass_at_k(0.5, 2) - 0.75).abs() < 1e-15);
        assert!((pass_hat_k(0.5, 3) - 0.125).abs() < 1e-15);
    }

    #[test]
    fn pass_pairs_from_p_and_one_minus_p_are_the_closed_forms_bit_for_bit() {
        let rates = [
            0.0,
            1e-300,
            1e-9,
            0.1,
            0.3,
            0.5,
            0.7,
            0.999,
            1.0 - 1e-12,
            1.0,
        ];
        for &p in &rates {
            for k in [1u32, 2, 7, 64, 1024] {
                assert_eq!(
                    pass_at_k_pq(p, 1.0 - p, k),
                    (pass_at_k(p, k), pass_at_k_complement(p, k)),
                    "pass@k {p} {k}"
                );
                assert_eq!(
                    pass_hat_k_pq(p, 1.0 - p, k),
                    (pass_hat_k(p, k), pass_hat_k_complement(p, k)),
                    "pass^k {p} {k}"
                );
            }
        }
    }

    #[test]
    fn pass_pairs_keep_a_tiny_complement_given_separately() {
        // p = 1 - 1e-14: 1 - p has lost about two digits, q given exactly keeps them.
        let q = 1e-14;
        let p = 1.0 - q;
        let (_, miss) = pass_at_k_pq(p, q, 2);
        assert!((miss / (q * q) - 1.0).abs() < 1e-13, "{miss}");
        let from_p = pass_at_k_complement(p, 2);
        assert!((from_p / (q * q) - 1.0).abs() > 1e-4, "{from_p}");
        let (_, not_all) = pass_hat_k_pq(p, q, 3);
        assert!((not_all / (3.0 * q) - 1.0).abs() < 1e-13, "{not_all}");
        let from_p = pass_hat_k_complement(p, 3);
        assert!((from_p / (3.0 * q) - 1.0).abs() > 1e-4, "{from_p}");
    }
}
