//! A pairwise LLM judge: two models A and B answer the same open-ended question, a judge sees
//! both answers (one in position 1, one in position 2) and prefers one. What each judging
//! protocol reports as B's win rate, against the true (quality-only) win probability; the exact
//! distribution of the reported rate over N comparisons and its 95% range (the comparisons a
//! protocol needs for 80% power are [`super::sign_test`]'s).
//!
//! The model (docs/judge.md has every formula):
//!
//! - per question, the quality difference d = q_B - q_A ~ N(gap, spread^2) (logits);
//! - each answer's length L ~ LogNormal(ln median, sigma^2) independently, so the log-length
//!   difference Delta = ln L_B - ln L_A ~ N(mu_L, s_L^2);
//! - the judge prefers the answer in position 1 with probability expit(eta),
//!   eta = (q_pos1 - q_pos2) + beta + v (ln L_pos1 - ln L_pos2) + lambda (f_pos1 - f_pos2),
//!   f = 1 for the judge's own family.
//!
//! With B first, B wins with expit(X + beta + lambda s); with A first, B wins with
//! expit(X - beta + lambda s), where X = d + v Delta ~ N(gap + v mu_L, spread^2 + v^2 s_L^2) and
//! s = f_B - f_A. Every probability is therefore E[g(X)] of one normal X: a one-dimensional
//! integral computed by [`AdaptiveKronrod`], each small complement from its own integrand.
//!
//! Depends on [`crate::model::expit`] and [`super::quadrature`] only.
use serde::Serialize;

use super::quadrature::AdaptiveKronrod;
use crate::model::expit;

/// The judge, the two models' quality difference and their answer lengths.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Judge {
    /// Mean of d = q_B - q_A over questions (logits).
    pub gap: f64,
    /// SD of d over questions (logits), >= 0.
    pub spread: f64,
    /// beta: the judge's extra logit for the answer in position 1.
    pub position_bias: f64,
    /// v: the judge's logit per unit of log-length difference (position 1 minus position 2).
    pub verbosity: f64,
    /// lambda: the judge's extra logit for an answer of its own family.
    pub self_preference: f64,
    /// s = 1[B is the judge's family] - 1[A is]: -1, 0 or 1.
    pub family: f64,
    /// ln L_A ~ N(mu, sigma^2): model A's answer length.
    pub length_a: LogLength,
    /// ln L_B ~ N(mu, sigma^2): model B's answer length.
    pub length_b: LogLength,
}

/// The normal law of a log answer length: ln L ~ N(mu, sigma^2) (mu = ln of the median).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct LogLength {
    /// ln of the median length in tokens.
    pub mu: f64,
    /// log-SD, >= 0.
    pub sigma: f64,
}

/// How the reported win rate of B is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Protocol {
    /// One judgment per question, B's answer always in position 1.
    BFirst,
    /// One judgment per question, A's answer always in position 1.
    AFirst,
    /// Two judgments per question, one in each order, scored 0, 1/2 or 1.
    BothOrders,
    /// One judgment per question, the order drawn by a fair coin.
    Random,
    /// Random order, the judge's verbosity term removed (the win rate a length-controlled
    /// regression reports at zero length difference).
    LengthControlled,
}

impl Protocol {
    /// Every protocol, in report order.
    pub const ALL: [Protocol; 5] = [
        Protocol::BFirst,
        Protocol::AFirst,
        Protocol::BothOrders,
        Protocol::Random,
        Protocol::LengthControlled,
    ];

    /// The name used in tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::BFirst => "b-first",
            Protocol::AFirst => "a-first",
            Protocol::BothOrders => "both-orders",
            Protocol::Random => "random-order",
            Protocol::LengthControlled => "length-controlled",
        }
    }

    /// Judge calls per question.
    pub fn calls(self) -> u32 {
        match self {
            Protocol::BothOrders => 2,
            _ => 1,
        }
    }
}

/// The judges of the decomposition: B first, with the bias terms switched on one by one, from
/// the quality-only judge (the true win probability) to the fixed-order protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Component {
    /// Quality only: expit(d). Its mean is the true win probability.
    Quality,
    /// Quality and verbosity: expit(d + v Delta).
    Verbosity,
    /// Quality, verbosity and self-preference: expit(d + v Delta + lambda s).
    SelfPreference,
    /// Everything, B in position 1: the [`Protocol::BFirst`] judge.
    Position,
}

impl Component {
    /// Every step, in order.
    pub const ALL: [Component; 4] = [
        Component::Quality,
        Component::Verbosity,
        Component::SelfPreference,
        Component::Position,
    ];

    /// The name used in tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Component::Quality => "quality",
            Component::Verbosity => "+ verbosity",
            Component::SelfPreference => "+ self-preference",
            Component::Position => "+ position (B first)",
        }
    }
}

/// The law of one question's score (B's share of its judgments): P(0), P(1/2), P(1), each
/// computed from its own integrand (none as 1 minus the others).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Score {
    /// P(score = 0): B loses every judgment of the question.
    pub lose: f64,
    /// P(score = 1/2): B wins one of two (both orders only; 0 otherwise).
    pub split: f64,
    /// P(score = 1): B wins every judgment.
    pub win: f64,
}

impl Score {
    /// E\[score\]: B's reported win rate, P(1) + P(1/2) / 2.
    pub fn mean(&self) -> f64 {
        self.win + 0.5 * self.split
    }

    /// 1 - E\[score\], as P(0) + P(1/2) / 2.
    pub fn mean_complement(&self) -> f64 {
        self.lose + 0.5 * self.split
    }

    /// Var(score) from non-negative terms: P(1) c^2 + P(1/2) (1/2 - m)^2 + P(0) m^2, with m the
    /// mean and c its complement.
    pub fn variance(&self) -> f64 {
        let (m, c) = (self.mean(), self.mean_complement());
        let half = 0.5 * (c - m);
        self.win * c * c + self.split * half * half + self.lose * m * m
    }
}

/// The quadrature of every judge probability: summed Kronrod-minus-Gauss differences within
/// 1e-14 of each entry (its small complements included, each its own entry).
const RULE: AdaptiveKronrod = AdaptiveKronrod {
    relative: 1e-14,
    max_panels: 4096,
};

/// E[g(m + s Z)] for Z ~ N(0, 1) of a vector of non-negative entries g(x, out); exact for s = 0.
fn expect(m: f64, s: f64, dim: usize, g: impl Fn(f64, &mut [f64])) -> Vec<f64> {
    if s == 0.0 {
        let mut out = vec![0.0; dim];
        g(m, &mut out);
        return out;
    }
    RULE.expect_many(dim, |z, out| g(m + s * z, out))
}

impl Judge {
    /// mu_L = mu_B - mu_A, the mean log-length difference ln L_B - ln L_A.
    pub fn length_mean(&self) -> f64 {
        self.length_b.mu - self.length_a.mu
    }

    /// s_L = sqrt(sigma_A^2 + sigma_B^2), the SD of the log-length difference.
    pub fn length_sd(&self) -> f64 {
        self.length_a.sigma.hypot(self.length_b.sigma)
    }

    /// (mean, SD) of X = d + v Delta, or of d alone when `verbosity` is false.
    fn x_law(&self, verbosity: bool) -> (f64, f64) {
        let v = if verbosity { self.verbosity } else { 0.0 };
        if v == 0.0 {
            (self.gap, self.spread)
        } else {
            (
                self.gap + v * self.length_mean(),
                self.spread.hypot(v * self.length_sd()),
            )
        }
    }

    /// The self-preference term lambda s.
    fn own(&self) -> f64 {
        self.self_preference * self.family
    }

    /// The law of one judgment with B's win logit X + `offset` (X with or without verbosity):
    /// (E[expit(X + c)], E[expit(-X - c)]). Time: one adaptive quadrature (a few hundred
    /// evaluations of expit).
    fn single(&self, verbosity: bool, offset: f64) -> Score {
        let (m, s) = self.x_law(verbosity);
        let v = expect(m, s, 2, |x, out| {
            out[0] = expit(x + offset);
            out[1] = expit(-x - offset);
        });
        Score {
            lose: v[1],
            split: 0.0,
            win: v[0],
        }
    }

    /// The fair-coin mixture of the two orders, as a single judgment.
    fn coin(&self, verbosity: bool) -> Score {
        let (m, s) = self.x_law(verbosity);
        let (c1, c2) = (
            self.position_bias + self.own(),
            -self.position_bias + self.own(),
        );
        let v = expect(m, s, 2, |x, out| {
            out[0] = 0.5 * (expit(x + c1) + expit(x + c2));
            out[1] = 0.5 * (expit(-x - c1) + expit(-x - c2));
        });
        Score {
            lose: v[1],
            split: 0.0,
            win: v[0],
        }
    }

    /// The law of one question's score under `protocol`. Both orders: the two judgments share
    /// the question's d and the two answers' lengths (the same X), and are independent given
    /// them, so P(1) = E[expit(X + c1) expit(X + c2)], P(0) = E[expit(-X - c1) expit(-X - c2)],
    /// P(1/2) the two mixed products, with c1 = beta + lambda s (B first) and c2 = -beta +
    /// lambda s (B second). Time: one adaptive quadrature.
    pub fn score(&self, protocol: Protocol) -> Score {
        let (c1, c2) = (
            self.position_bias + self.own(),
            -self.position_bias + self.own(),
        );
        match protocol {
            Protocol::BFirst => self.single(true, c1),
            Protocol::AFirst => self.single(true, c2),
            Protocol::Random => self.coin(true),
            Protocol::LengthControlled => self.coin(false),
            Protocol::BothOrders => {
                let (m, s) = self.x_law(true);
                let v = expect(m, s, 3, |x, out| {
                    let (w1, l1) = (expit(x + c1), expit(-x - c1));
                    let (w2, l2) = (expit(x + c2), expit(-x - c2));
                    out[0] = l1 * l2;
                    out[1] = w1 * l2 + l1 * w2;
                    out[2] = w1 * w2;
                });
                Score {
                    lose: v[0],
                    split: v[1],
                    win: v[2],
                }
            }
        }
    }

    /// The law of one judgment of a decomposition step (B first).
    pub fn component(&self, step: Component) -> Score {
        match step {
            Component::Quality => self.single(false, 0.0),
            Component::Verbosity => self.single(true, 0.0),
            Component::SelfPreference => self.single(true, self.own()),
            Component::Position => self.score(Protocol::BFirst),
        }
    }

    /// The true win probability of B, E[expit(d)] (quality only, no bias, order irrelevant),
    /// with its complement.
    pub fn true_win(&self) -> Score {
        self.component(Component::Quality)
    }

    /// The same judge and models with no quality difference on average (gap = 0): what a
    /// protocol reports when B is no better than A.
    pub fn null(&self) -> Judge {
        Judge { gap: 0.0, ..*self }
    }
}

/// The pmf of the total T of N independent question scores in half points (score 0, 1/2, 1 as
/// 0, 1, 2), over 0..=2N: T / 2N is the reported win rate. By the recurrence P_{n+1}(t) =
/// P(0) P_n(t) + P(1/2) P_n(t - 1) + P(1) P_n(t - 2), a convex combination at every step, so
/// each entry is accurate to about 3n ulps (3e-12 relative at N = 10,000) and a tail is never
/// 1 minus a number near 1; for a single judgment (P(1/2) = 0) it is Bin(N, win) on the even
/// entries. Time: O(N^2).
pub fn total_pmf(score: &Score, comparisons: usize) -> Vec<f64> {
    let mut pmf = vec![0.0; 2 * comparisons + 1];
    pmf[0] = 1.0;
    for n in 0..comparisons {
        // Highest entry first, so each reads the previous step's values.
        for t in (0..=2 * n + 2).rev() {
            let mut v = score.lose * pmf[t];
            if t >= 1 {
                v += score.split * pmf[t - 1];
            }
            if t >= 2 {
                v += score.win * pmf[t - 2];
            }
            pmf[t] = v;
        }
    }
    pmf
}

/// The central 95% range of the reported rate over N comparisons, from the exact pmf of the
/// total ([`total_pmf`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RateRange {
    /// Lower end: the smallest rate r with P(rate <= r) >= 2.5%.
    pub low: f64,
    /// Upper end: the largest rate r with P(rate >= r) >= 2.5%.
    pub high: f64,
    /// P(rate < low), at most 2.5%, summed from the lower tail.
    pub below: f64,
    /// P(rate > high), at most 2.5%, summed from the upper tail.
    pub above: f64,
    /// SD of the reported rate over reruns of N comparisons, sqrt(Var(score) / N).
    pub sd: f64,
}

/// The 95% range of the reported rate of N questions under `score`, from the pmf of their total
/// (`pmf` = [`total_pmf`]`(score, N)`, over 0..=2N). Each tail is summed from its own end.
/// Time: O(N).
pub fn rate_range(score: &Score, pmf: &[f64]) -> RateRange {
    let top = pmf.len() - 1;
    let comparisons = top / 2;
    let scale = 1.0 / top as f64;
    let tail = 0.025;
    // Lower end: first t whose cumulative mass reaches the tail.
    let (mut lo, mut below, mut acc) = (0usize, 0.0, 0.0);
    for (t, &p) in pmf.iter().enumerate() {
        if acc + p >= tail {
            lo = t;
            below = acc;
            break;
        }
        acc += p;
    }
    let (mut hi, mut above, mut acc) = (top, 0.0, 0.0);
    for t in (0..=top).rev() {
        if acc + pmf[t] >= tail {
            hi = t;
            above = acc;
            break;
        }
        acc += pmf[t];
    }
    RateRange {
        low: lo as f64 * scale,
        high: hi as f64 * scale,
        below,
        above,
        sd: (score.variance() / comparisons as f64).sqrt(),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::exact::shift::tests::trapezoid;

    pub(crate) fn example() -> Judge {
        Judge {
            gap: 0.1,
            spread: 1.0,
            position_bias: 0.8,
            verbosity: 0.4,
            self_preference: 0.3,
            family: 1.0,
            length_a: LogLength {
                mu: 6.0,
                sigma: 0.36,
            },
            length_b: LogLength {
                mu: 6.5,
                sigma: 0.48,
            },
        }
    }

    /// Brute force over the two normals d and Delta = ln L_B - ln L_A (the lengths enter only
    /// through their difference), each integrated by a plain trapezoid, nested: the judgment
    /// probabilities straight from the model's eta, not through the one normal X.
    fn brute(j: &Judge, f: impl Fn(f64, f64) -> f64) -> f64 {
        trapezoid_coarse(|zd| {
            trapezoid_coarse(|ze| f(j.gap + j.spread * zd, j.length_mean() + j.length_sd() * ze))
        })
    }

    /// A coarser trapezoid (1,201 points over |z| <= 12) for the nested brute force: the
    /// trapezoid converges geometrically for these smooth Gaussian-weighted integrands.
    fn trapezoid_coarse(f: impl Fn(f64) -> f64) -> f64 {
        let steps = 1_200;
        let h = 24.0 / steps as f64;
        let norm = 1.0 / (2.0 * std::f64::consts::PI).sqrt();
        (0..=steps)
            .map(|j| {
                let e = -12.0 + j as f64 * h;
                f(e) * (-0.5 * e * e).exp() * norm
            })
            .sum::<f64>()
            * h
    }

    fn close(a: f64, b: f64, rel: f64, what: &str) {
        assert!(
            (a - b).abs() <= rel * b.abs() + 1e-300,
            "{what}: {a} against {b} (relative {:e})",
            ((a - b) / b).abs()
        );
    }

    #[test]
    fn every_protocol_matches_a_brute_force_integral_over_quality_and_lengths() {
        let j = example();
        let (beta, v, own) = (j.position_bias, j.verbosity, j.self_preference * j.family);
        // B first: eta = d + beta + v Delta + lambda s; A first: B wins with expit(d - beta +
        // v Delta + lambda s).
        let b1 = |d: f64, dl: f64| expit(d + beta + v * dl + own);
        let b2 = |d: f64, dl: f64| expit(d - beta + v * dl + own);
        let s = j.score(Protocol::BFirst);
        close(s.win, brute(&j, b1), 1e-12, "b-first win");
        close(
            s.lose,
            brute(&j, |d, l| 1.0 - b1(d, l)),
            1e-12,
            "b-first loss",
        );
        let s = j.score(Protocol::AFirst);
        close(s.win, brute(&j, b2), 1e-12, "a-first win");
        let s = j.score(Protocol::Random);
        close(
            s.win,
            brute(&j, |d, l| 0.5 * (b1(d, l) + b2(d, l))),
            1e-12,
            "random win",
        );
        let s = j.score(Protocol::BothOrders);
        close(
            s.win,
            brute(&j, |d, l| b1(d, l) * b2(d, l)),
            1e-12,
            "both P(1)",
        );
        close(
            s.lose,
            brute(&j, |d, l| (1.0 - b1(d, l)) * (1.0 - b2(d, l))),
            1e-12,
            "both P(0)",
        );
        close(s.win + s.split + s.lose, 1.0, 1e-14, "both sums to 1");
        let s = j.score(Protocol::LengthControlled);
        let lc = |d: f64| 0.5 * (expit(d + beta + own) + expit(d - beta + own));
        close(s.win, brute(&j, |d, _| lc(d)), 1e-12, "length-controlled");
        close(
            j.true_win().win,
            trapezoid(|z| expit(j.gap + j.spread * z)),
            1e-12,
            "true win",
        );
    }

    #[test]
    fn a_tiny_loss_probability_keeps_its_relative_accuracy() {
        // B far better: P(B loses) ~ 1e-13, which 1 - win would lose entirely.
        let j = Judge {
            gap: 30.0,
            spread: 0.5,
            verbosity: 0.0,
            ..example()
        };
        for p in Protocol::ALL {
            let s = j.score(p);
            assert!(
                s.mean_complement() < 1e-11 && s.mean_complement() > 0.0,
                "{p:?}"
            );
        }
        let s = j.score(Protocol::BFirst);
        let c = j.position_bias + j.self_preference * j.family;
        close(
            s.lose,
            trapezoid(|z| expit(-(j.gap + j.spread * z) - c)),
            1e-12,
            "small loss",
        );
        let s = j.score(Protocol::BothOrders);
        let c2 = -j.position_bias + j.self_preference * j.family;
        close(
            s.lose,
            trapezoid(|z| {
                let x = j.gap + j.spread * z;
                expit(-x - c) * expit(-x - c2)
            }),
            1e-12,
            "small P(0) of both orders",
        );
    }

    #[test]
    fn no_spread_and_no_verbosity_give_a_plain_logistic() {
        let j = Judge {
            spread: 0.0,
            verbosity: 0.0,
            ..example()
        };
        let s = j.score(Protocol::BFirst);
        let direct = expit(j.gap + j.position_bias + j.self_preference);
        close(s.win, direct, 4.0 * f64::EPSILON, "one logistic");
    }

    #[test]
    fn averaging_both_orders_has_the_random_order_mean_and_less_variance() {
        let j = example();
        let (both, coin) = (j.score(Protocol::BothOrders), j.score(Protocol::Random));
        close(both.mean(), coin.mean(), 1e-13, "same mean");
        assert!(both.variance() < coin.variance());
    }

    #[test]
    fn total_pmf_is_the_binomial_for_single_judgments_and_a_brute_convolution_otherwise() {
        let s = Score {
            lose: 0.3,
            split: 0.0,
            win: 0.7,
        };
        let pmf = total_pmf(&s, 12);
        let bin = crate::exact::maj::binomial_pmf(12, 0.7);
        for (k, &b) in bin.iter().enumerate() {
            close(pmf[2 * k], b, 1e-13, "binomial entry");
            if 2 * k + 1 < pmf.len() {
                assert_eq!(pmf[2 * k + 1], 0.0);
            }
        }
        // Three questions, enumerated outcome by outcome.
        let s = Score {
            lose: 0.2,
            split: 0.5,
            win: 0.3,
        };
        let pmf = total_pmf(&s, 3);
        let probs = [s.lose, s.split, s.win];
        let mut brute = [0.0; 7];
        for a in 0..3 {
            for b in 0..3 {
                for c in 0..3 {
                    brute[a + b + c] += probs[a] * probs[b] * probs[c];
                }
            }
        }
        for t in 0..7 {
            close(pmf[t], brute[t], 1e-14, "trinomial entry");
        }
    }

    #[test]
    fn rate_range_tails_are_at_most_two_and_a_half_percent_and_maximal() {
        let j = example();
        for p in Protocol::ALL {
            let s = j.score(p);
            let n = 150;
            let pmf = total_pmf(&s, n);
            let r = rate_range(&s, &pmf);
            let top = (2 * n) as f64;
            let (lo, hi) = (
                (r.low * top).round() as usize,
                (r.high * top).round() as usize,
            );
            assert!(r.below < 0.025 && r.above < 0.025, "{p:?}");
            close(r.below, pmf[..lo].iter().sum(), 1e-13, "below");
            close(r.above, pmf[hi + 1..].iter().sum(), 1e-13, "above");
            // One step further in would pass the tail.
            assert!(r.below + pmf[lo] >= 0.025 && r.above + pmf[hi] >= 0.025);
        }
    }
}
