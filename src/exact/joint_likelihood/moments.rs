//! What the two outer rules of the joint likelihood share: the gradient and Hessian of the log
//! of a weighted node sum (`exact::joint_likelihood::trapezoid` for pooled counts, `exact::joint_likelihood::runs` for
//! per-run data), and the evaluation at spreads of either sign.
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
    /// sum_k w_k g_k g_k' (upper triangle).
    outer: Vec<f64>,
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
            outer: vec![0.0; square],
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
            let p = self.p;
            for i in 0..p {
                let wi = w * self.node[i];
                if wi == 0.0 {
                    continue;
                }
                let row = &mut self.outer[i * p + i..(i + 1) * p];
                for (o, n) in row.iter_mut().zip(&self.node[i..]) {
                    *o += wi * n;
                }
            }
        }
    }

    /// The gradient, and with the Hessian the full P x P matrix (row-major; empty without).
    pub(crate) fn finish(self) -> (Vec<f64>, Vec<f64>) {
        if !self.hessian {
            return (self.grad, Vec::new());
        }
        let p = self.p;
        let mut hess = vec![0.0; p * p];
        for i in 0..p {
            for j in i..p {
                let v =
                    self.second[i * p + j] + self.outer[i * p + j] - self.grad[i] * self.grad[j];
                hess[i * p + j] = v;
                hess[j * p + i] = v;
            }
        }
        (self.grad, hess)
    }
}

/// One row's ln L_i, gradient and Hessian (row-major).
pub(crate) type RowTerms = (f64, Vec<f64>, Vec<f64>);

/// `evaluate` at |sigma|, |tau_m| and |omega_m| (ln L is even in each spread), with the
/// derivatives' signs turned back: the layout is mu, sigma, shift_0.., tau_0.., omega_0.. (the
/// omegas only when `params.omega` is not empty).
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

    /// The value at i, computed by `compute` the first time.
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
