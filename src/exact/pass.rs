//! pass@k and pass^k of one problem, and their benchmark means.

/// pass@k = 1 - (1 - p)^k: at least one of k samples is right. Time: O(1).
pub fn pass_at_k(p: f64, k: u32) -> f64 {
    1.0 - (1.0 - p).powi(k as i32)
}

/// pass^k = p^k: all k samples are right. Time: O(1).
pub fn pass_hat_k(p: f64, k: u32) -> f64 {
    p.powi(k as i32)
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
pub fn bernoulli_mean_se(probs: &[f64], draws: u64) -> f64 {
    let n = probs.len() as f64;
    let var: f64 = probs.iter().map(|m| m * (1.0 - m)).sum();
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
