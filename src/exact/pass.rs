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
}
