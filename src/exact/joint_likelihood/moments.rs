//! The outer rule's pieces: the gradient and Hessian of the log of a weighted node sum (the
//! likelihood's rule over the problem effect, `exact::joint_likelihood::runs`), the evaluation
//! at spreads of either sign, and the lazily filled tables the integrals share.
//!
//! # The moments of a weighted node sum
//!
//! Problem i's ln L_i = ln sum_k W_k e^{G_k}: with the normalised weights w_k, the gradient g_k
//! of G_k and its second derivatives S_k at node k, the derivatives of ln L_i are
//!
//! grad = sum_k w_k g_k,   Hessian = sum_k w_k (S_k + g_k g_k') - grad grad'.
//!
//! At node k each model contributes through its logit eta_m = mu + sigma x_k + shift_m (linear
//! in mu, sigma and shift_m with coefficients 1, x_k, 1) and through its own spreads (tau_m,
//! and omega_m with runs), which enter its term directly.

use std::sync::OnceLock;

use super::JointParams;

/// Accumulates the gradient and Hessian of ln of a weighted node sum (module doc), node by
/// node, in the layout mu, sigma, shift_0.., then the spreads.
pub(crate) struct NodeMoments {
    p: usize,
    hessian: bool,
    /// The current node's gradient g_k.
    node: Vec<f64>,
    grad: Vec<f64>,
    /// sum_k w_k S_k (upper triangle, row-major P x P).
    second: Vec<f64>,
    /// With the Hessian: every ended node's weight w_k and gradient g_k (P entries each), in
    /// node order; `finish` forms sum_k w_k g_k g_k' from them one row at a time.
    weights: Vec<f64>,
    nodes: Vec<f64>,
}

impl NodeMoments {
    /// Moments of P parameters, with the Hessian when `hessian`.
    pub(crate) fn new(p: usize, hessian: bool) -> Self {
        let square = if hessian { p * p } else { 0 };
        NodeMoments {
            p,
            hessian,
            node: vec![0.0; p],
            grad: vec![0.0; p],
            second: vec![0.0; square],
            weights: Vec::new(),
            nodes: Vec::new(),
        }
    }

    /// Starts a node: its gradient is cleared.
    pub(crate) fn start(&mut self) {
        self.node.iter_mut().for_each(|v| *v = 0.0);
    }

    /// Adds one model's term at the current node (weight `w`, outer variable `x`): `first` its
    /// derivatives in its logit and in the parameters `spreads` (indices in the layout), in that
    /// order; `second` (with the Hessian) their second derivatives, row-major over the same
    /// 1 + spreads variables. `shift` is the index of the model's shift.
    pub(crate) fn add_model(
        &mut self,
        w: f64,
        x: f64,
        shift: usize,
        spreads: &[usize],
        first: &[f64],
        second: &[f64],
    ) {
        let d_eta = first[0];
        self.node[0] += d_eta;
        self.node[1] += x * d_eta;
        self.node[shift] += d_eta;
        for (&s, &d) in spreads.iter().zip(&first[1..]) {
            self.node[s] += d;
        }
        if !self.hessian {
            return;
        }
        let p = self.p;
        let width = 1 + spreads.len();
        // the logit's coefficients in mu, sigma and shift_m (shift > 1 always)
        let lin = [(0, 1.0), (1, x), (shift, 1.0)];
        let ee = w * second[0];
        for (a, &(i, ci)) in lin.iter().enumerate() {
            for &(j, cj) in &lin[a..] {
                self.second[i * p + j] += ee * ci * cj;
            }
            for (b, &s) in spreads.iter().enumerate() {
                self.second[i * p + s] += w * second[1 + b] * ci;
            }
        }
        for (a, &s) in spreads.iter().enumerate() {
            for (b, &t) in spreads.iter().enumerate().skip(a) {
                self.second[s * p + t] += w * second[(1 + a) * width + 1 + b];
            }
        }
    }

    /// Ends the current node, of normalised weight `w`.
    pub(crate) fn end(&mut self, w: f64) {
        for (g, n) in self.grad.iter_mut().zip(&self.node) {
            *g += w * n;
        }
        if self.hessian {
            self.weights.push(w);
            self.nodes.extend_from_slice(&self.node);
        }
    }

    /// The gradient, and with the Hessian the full P x P matrix (row-major; empty without).
    pub(crate) fn finish(self) -> (Vec<f64>, Vec<f64>) {
        if !self.hessian {
            return (self.grad, Vec::new());
        }
        let p = self.p;
        // the Hessian is written over the outer products, whose entries below the diagonal
        // are never read
        let mut hess = weighted_outer_upper(&self.weights, &self.nodes, p);
        for i in 0..p {
            for j in i..p {
                let v = self.second[i * p + j] + hess[i * p + j] - self.grad[i] * self.grad[j];
                hess[i * p + j] = v;
                hess[j * p + i] = v;
            }
        }
        (self.grad, hess)
    }
}

/// Side of the square tiles of [`weighted_outer_upper`].
const TILE: usize = 4;

/// sum_k w_k g_k g_k' for the nodes' weights and gradients (`nodes` row-major, K x P), with
/// every entry on and above the diagonal right (row-major P x P; below it, some entries of
/// the diagonal tiles, the rest 0). Entry (i, j) is the sum over k in node order of
/// (w_k g_k[i]) g_k[j], a term with w_k g_k[i] = 0 left out: the same operations in the same
/// order as adding each node's outer product to the matrix in turn, so the same bits. The
/// matrix is formed in TILE x TILE tiles held in registers while the nodes stream past,
/// where adding whole outer products node by node streams the matrix once per node.
pub(crate) fn weighted_outer_upper(weights: &[f64], nodes: &[f64], p: usize) -> Vec<f64> {
    let weighted: Vec<f64> = nodes
        .chunks_exact(p.max(1))
        .zip(weights)
        .flat_map(|(g, &w)| g.iter().map(move |x| w * x))
        .collect();
    let mut out = vec![0.0; p * p];
    for i0 in (0..p).step_by(TILE) {
        let ni = TILE.min(p - i0);
        for j0 in (i0..p).step_by(TILE) {
            let nj = TILE.min(p - j0);
            let mut acc = [[0.0f64; TILE]; TILE];
            let rows = weighted.chunks_exact(p).zip(nodes.chunks_exact(p));
            if ni == TILE && nj == TILE {
                for (a, g) in rows {
                    let (a, g) = (&a[i0..i0 + TILE], &g[j0..j0 + TILE]);
                    for (row, &ai) in acc.iter_mut().zip(a) {
                        for (o, &gj) in row.iter_mut().zip(g) {
                            // adding +0 leaves a sum that is never -0 unchanged: a skip
                            *o += if ai == 0.0 { 0.0 } else { ai * gj };
                        }
                    }
                }
            } else {
                for (a, g) in rows {
                    for (row, &ai) in acc.iter_mut().zip(&a[i0..i0 + ni]) {
                        if ai == 0.0 {
                            continue;
                        }
                        for (o, &gj) in row.iter_mut().zip(&g[j0..j0 + nj]) {
                            *o += ai * gj;
                        }
                    }
                }
            }
            for (x, row) in acc.iter().enumerate().take(ni) {
                out[(i0 + x) * p + j0..(i0 + x) * p + j0 + nj].copy_from_slice(&row[..nj]);
            }
        }
    }
    out
}

/// One row's ln L_i, gradient and Hessian (row-major).
pub(crate) type RowTerms = (f64, Vec<f64>, Vec<f64>);

/// `evaluate` at |sigma|, |tau_m| and |omega_m| (ln L is even in each spread), with the
/// derivatives' signs turned back: the layout is `JointLayout`'s, mu, sigma, shift_0.., tau_0..,
/// omega_0.. (the omegas only when `params.omega` is not empty).
pub(crate) fn at_absolute_spreads(
    params: &JointParams,
    evaluate: impl FnOnce(&JointParams) -> Vec<RowTerms>,
) -> Vec<RowTerms> {
    let models = params.shift.len();
    let sign = |v: f64| if v < 0.0 { -1.0 } else { 1.0 };
    let mut signs = vec![1.0; 2 + 2 * models + params.omega.len()];
    signs[1] = sign(params.sigma);
    for (m, t) in params.tau.iter().enumerate() {
        signs[2 + models + m] = sign(*t);
    }
    for (m, o) in params.omega.iter().enumerate() {
        signs[2 + 2 * models + m] = sign(*o);
    }
    if signs.iter().all(|&s| s > 0.0) {
        return evaluate(params);
    }
    let absolute = JointParams {
        mu: params.mu,
        sigma: params.sigma.abs(),
        shift: params.shift.clone(),
        tau: params.tau.iter().map(|t| t.abs()).collect(),
        omega: params.omega.iter().map(|o| o.abs()).collect(),
    };
    let mut terms = evaluate(&absolute);
    for (_, g, h) in &mut terms {
        let p = g.len();
        signs.resize(p.max(signs.len()), 1.0);
        for (i, v) in g.iter_mut().enumerate() {
            *v *= signs[i];
        }
        for (k, v) in h.iter_mut().enumerate() {
            *v *= signs[k / p] * signs[k % p];
        }
    }
    terms
}

/// Entries of one chunk of a [`LazyTable`].
const CHUNK: usize = 64;

/// Values by index -reach < i < reach, each computed once when first asked for, in chunks
/// allocated when first touched (an evaluation touches a narrow band of a wide range, so a
/// table costs what it holds); beyond the reach each value is computed when asked.
pub(crate) struct LazyTable<T> {
    reach: i64,
    chunks: Vec<OnceLock<Box<[OnceLock<T>]>>>,
}

impl<T: Copy> LazyTable<T> {
    pub(crate) fn new(reach: i64) -> Self {
        let reach = reach.max(0);
        LazyTable {
            reach,
            chunks: (0..(2 * reach as usize).div_ceil(CHUNK))
                .map(|_| OnceLock::new())
                .collect(),
        }
    }

    /// Whether index i is held (|i| < reach).
    pub(crate) fn holds(&self, i: i64) -> bool {
        i.abs() < self.reach
    }

    /// The value at i, computed by `compute` the first time (inlined: it is the inner loop's
    /// table read of `trapezoid::lattice_integral`).
    #[inline(always)]
    pub(crate) fn get(&self, i: i64, compute: impl FnOnce() -> T) -> T {
        if !self.holds(i) {
            return compute();
        }
        let at = (i + self.reach) as usize;
        let chunk =
            self.chunks[at / CHUNK].get_or_init(|| (0..CHUNK).map(|_| OnceLock::new()).collect());
        *chunk[at % CHUNK].get_or_init(compute)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tiled outer product has the bits of adding each node's outer product in turn (the
    /// way the Hessian was summed before), zero weights and zero entries included, for sizes
    /// that are and are not multiples of the tile.
    #[test]
    fn tiled_outer_product_has_the_bits_of_node_by_node_sums() {
        for p in [1usize, 3, 4, 7, 13, 22] {
            let k = 9;
            let mut state = 0x9e37_79b9_7f4a_7c15u64 ^ p as u64;
            let mut next = || {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
            };
            let weights: Vec<f64> = (0..k).map(|i| if i == 4 { 0.0 } else { next() }).collect();
            let nodes: Vec<f64> = (0..k * p)
                .map(|i| if i % 5 == 2 { 0.0 } else { 1e3 * next() })
                .collect();
            let mut naive = vec![0.0; p * p];
            for (node, &w) in nodes.chunks_exact(p).zip(&weights) {
                for i in 0..p {
                    let wi = w * node[i];
                    if wi == 0.0 {
                        continue;
                    }
                    for j in i..p {
                        naive[i * p + j] += wi * node[j];
                    }
                }
            }
            let tiled = weighted_outer_upper(&weights, &nodes, p);
            for i in 0..p {
                for j in i..p {
                    assert_eq!(
                        tiled[i * p + j].to_bits(),
                        naive[i * p + j].to_bits(),
                        "p {p}, entry ({i}, {j})"
                    );
                }
            }
        }
    }
}
