//! The exact distribution of one problem's tallies under the workbench's eval model, for a pair
//! of models on the same problem: what `sim::evals::EvalSampler` draws, integrated over the
//! logit-normal population.
//!
//! Given the problem's z, model j solves each of n samples with p_j = expit(mu + shift_j +
//! sigma z); a wrong sample lands on the attractor with probability r, else it is a one-off. The
//! tally (c correct, a on the attractor, n - c - a one-offs) then has
//! P(c, a | p) = Bin(c; n, p) Bin(a; n - c, r), and the two models' tallies are independent given
//! z. The joint pmf over the population is the expectation over z ~ N(0, 1) by the planner's
//! composite Simpson rule ([`CompositeSimpson::PLAN`], 20,001 nodes on |z| <= 12).
//!
//! Why: with finitely many tallies, any per-problem score (pass@k, pass^k, maj@k at k = n, their
//! paired differences) takes finitely many values, so the distribution of a whole data set of N
//! problems is multinomial and the coverage of an interval built from it is a finite sum
//! (`analyze::coverage::exact_coverage`).
use evalsim::exact::maj::binomial_pmf;
use evalsim::exact::quadrature::CompositeSimpson;
use evalsim::model::expit;

/// Joint pmf of the tallies of models A and B on one problem drawn from the population.
#[derive(Debug, Clone, PartialEq)]
pub struct PairedTallyPmf {
    /// The possible tallies (c, a) of one model, c + a <= n (the rest are one-offs).
    pub tallies: Vec<(usize, usize)>,
    /// P(A has `tallies[i]`, B has `tallies[j]`) at `i * tallies.len() + j`; sums to 1.
    pub joint: Vec<f64>,
}

/// The tally pmf given the solve rate p: P(c, a | p) over [`PairedTallyPmf::tallies`] order.
fn conditional(p: f64, samples: usize, wrong: &[Vec<f64>]) -> Vec<f64> {
    let n = u32::try_from(samples).expect("samples fit u32");
    let pc = binomial_pmf(n, p);
    let mut out = Vec::with_capacity((samples + 1) * (samples + 2) / 2);
    for (c, &pc) in pc.iter().enumerate() {
        for &pa in &wrong[samples - c] {
            out.push(pc * pa);
        }
    }
    out
}

/// Joint tally pmf of A (logit mu + sigma z) and B (A shifted by `gap` logits) with `samples`
/// answers each and attractor share `attractor`. Each entry is accurate to about 1e-12
/// relative (binomial pmfs to 1e-13 as [`binomial_pmf`], the sum over 20,001 nodes; the
/// Simpson rule's own error is far below that for the smooth integrands here). Time: O(20,001 T^2) with T = (n + 1)(n + 2) / 2 tallies.
///
/// # Panics
/// If `mu` or `gap` is not finite, `sigma` is negative or not finite, or `attractor` is not in
/// [0, 1].
pub fn paired_tally_pmf(
    mu: f64,
    sigma: f64,
    gap: f64,
    attractor: f64,
    samples: usize,
) -> PairedTallyPmf {
    assert!(
        mu.is_finite() && gap.is_finite(),
        "mu and gap must be finite"
    );
    assert!(sigma.is_finite() && sigma >= 0.0, "sigma must be >= 0");
    assert!(
        (0.0..=1.0).contains(&attractor),
        "attractor must be in [0, 1]"
    );
    let tallies: Vec<(usize, usize)> = (0..=samples)
        .flat_map(|c| (0..=samples - c).map(move |a| (c, a)))
        .collect();
    // wrong[w] = Bin(.; w, attractor) over a = 0..=w.
    let wrong: Vec<Vec<f64>> = (0..=samples)
        .map(|w| binomial_pmf(u32::try_from(w).expect("samples fit u32"), attractor))
        .collect();
    let rule = CompositeSimpson::PLAN;
    let weights = rule.weights();
    let t = tallies.len();
    let mut joint = vec![0.0; t * t];
    for (j, &w) in weights.iter().enumerate() {
        let z = rule.node(j);
        let fa = conditional(expit(mu + sigma * z), samples, &wrong);
        let fb = conditional(expit(mu + gap + sigma * z), samples, &wrong);
        for (i, &x) in fa.iter().enumerate() {
            let wx = w * x;
            for (k, &y) in fb.iter().enumerate() {
                joint[i * t + k] += wx * y;
            }
        }
    }
    PairedTallyPmf { tallies, joint }
}

/// The pmf of the total count difference S = sum over `problems` problems of (c_B - c_A), from
/// the per-problem tally pmf: paired, both counts on the same problem (the joint pmf); unpaired,
/// on independent problems (the product of the margins). Returned as (the pmf over
/// S = -n N..=n N, index S + n N). Exact up to rounding (N-fold convolution of a pmf on 2n + 1
/// points). Time: O(N^2 n^2).
pub fn count_difference_pmf(
    pmf: &PairedTallyPmf,
    samples: usize,
    problems: usize,
    paired: bool,
) -> Vec<f64> {
    let t = pmf.tallies.len();
    let mut one = vec![0.0; 2 * samples + 1];
    if paired {
        for i in 0..t {
            for k in 0..t {
                one[samples + pmf.tallies[k].0 - pmf.tallies[i].0] += pmf.joint[i * t + k];
            }
        }
    } else {
        let (mut ca, mut cb) = (vec![0.0; samples + 1], vec![0.0; samples + 1]);
        for i in 0..t {
            for k in 0..t {
                ca[pmf.tallies[i].0] += pmf.joint[i * t + k];
                cb[pmf.tallies[k].0] += pmf.joint[i * t + k];
            }
        }
        for (x, pa) in ca.iter().enumerate() {
            for (y, pb) in cb.iter().enumerate() {
                one[samples + y - x] += pa * pb;
            }
        }
    }
    let mut total = vec![1.0];
    for _ in 0..problems {
        let mut next = vec![0.0; total.len() + 2 * samples];
        for (s, &ps) in total.iter().enumerate() {
            for (d, &pd) in one.iter().enumerate() {
                next[s + d] += ps * pd;
            }
        }
        total = next;
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_to_one_and_margins_give_the_mean_solve_rate() {
        let pmf = paired_tally_pmf(0.2, 2.2, 0.21, 0.5, 4);
        let t = pmf.tallies.len();
        assert_eq!(t, 15);
        let total: f64 = pmf.joint.iter().sum();
        assert!((total - 1.0).abs() < 1e-13, "{total}");
        // E[c / n] for A and B equals E[p] by quadrature.
        let m = evalsim::exact::plan::population_pair_moments(0.2, 2.2, 0.21);
        let (mut ea, mut eb) = (0.0, 0.0);
        for i in 0..t {
            for k in 0..t {
                ea += pmf.joint[i * t + k] * pmf.tallies[i].0 as f64 / 4.0;
                eb += pmf.joint[i * t + k] * pmf.tallies[k].0 as f64 / 4.0;
            }
        }
        assert!((ea - m.mean_a).abs() < 1e-13 && (eb - m.mean_b).abs() < 1e-13);
    }

    #[test]
    fn one_sample_at_sigma_zero_is_a_product_of_bernoullis() {
        // sigma = 0: every problem has p = expit(mu); tallies independent across models.
        let pmf = paired_tally_pmf(0.3, 0.0, 1.0, 0.25, 1);
        let (pa, pb) = (expit(0.3), expit(1.3));
        // tallies: (0,0) one-off, (0,1) attractor, (1,0) correct.
        let ta = [(1.0 - pa) * 0.75, (1.0 - pa) * 0.25, pa];
        let tb = [(1.0 - pb) * 0.75, (1.0 - pb) * 0.25, pb];
        assert_eq!(pmf.tallies, vec![(0, 0), (0, 1), (1, 0)]);
        for (i, &x) in ta.iter().enumerate() {
            for (k, &y) in tb.iter().enumerate() {
                let want = x * y;
                let got = pmf.joint[i * 3 + k];
                // Summing 20,001 node terms: rounding up to about 1e-12 relative.
                assert!(
                    (got - want).abs() < 1e-12 * want,
                    "{i} {k}: {got} vs {want}"
                );
            }
        }
    }
}
