//! Bracketing root finders: bisection of a real bracket ([`bisect`]), the first integer where a
//! monotone predicate turns true ([`first_true`]), and the Illinois variant of regula falsi
//! ([`illinois`]).

/// Which end of the bracket a probe replaces, or that it is a root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The probe is on the side of `a` (it becomes the new `a`).
    A,
    /// The probe is on the side of `b` (it becomes the new `b`).
    B,
    /// The probe is a root: the search stops there.
    Root,
}

/// When a bisection stops.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stop {
    /// After this many halvings.
    Halvings(u32),
    /// Once the bracket is at most this wide.
    Width(f64),
}

/// Bisection of the bracket [a, b] (either order): the midpoint 0.5 (a + b) replaces the end
/// `side` names, until `stop`; returns the final midpoint, or the first probe `side` calls a
/// root. Time: the number of halvings, or log2(|b - a| / width), evaluations of `side`.
pub fn bisect(mut a: f64, mut b: f64, stop: Stop, mut side: impl FnMut(f64) -> Side) -> f64 {
    let mut halvings = 0u32;
    loop {
        let done = match stop {
            Stop::Halvings(n) => halvings >= n,
            Stop::Width(w) => (b - a).abs() <= w,
        };
        if done {
            return 0.5 * (a + b);
        }
        let mid = 0.5 * (a + b);
        match side(mid) {
            Side::A => a = mid,
            Side::B => b = mid,
            Side::Root => return mid,
        }
        halvings += 1;
    }
}

/// The smallest integer n in (below, above] with `holds(n)`, for a predicate that is false at
/// `below`, true at `above` and monotone between (false, then true). `holds` is not evaluated at
/// either end. Time: log2(above - below) evaluations.
///
/// # Panics
///
/// If `above <= below`.
pub fn first_true(mut below: i64, mut above: i64, mut holds: impl FnMut(i64) -> bool) -> i64 {
    assert!(above > below, "an empty bracket ({below}, {above}]");
    while above - below > 1 {
        let mid = below + (above - below) / 2;
        if holds(mid) {
            above = mid;
        } else {
            below = mid;
        }
    }
    above
}

/// The Illinois variant of regula falsi on a bracket lo < hi with f(lo) < 0 <= f(hi) (`flo` and
/// `fhi` their values): the secant through the ends replaces the end on its side, and an end kept
/// twice in a row has its value halved, so the bracket shrinks from both sides. Stops when
/// hi - lo <= `width`(hi) or after `max_steps` probes, and returns (lo, hi): f(lo) < 0 <= f(hi)
/// throughout. A secant outside the open bracket is replaced by the midpoint. Time: at most
/// `max_steps` evaluations of f, usually 10 to 20 to the resolution of f64.
pub fn illinois(
    (mut lo, mut flo): (f64, f64),
    (mut hi, mut fhi): (f64, f64),
    max_steps: u32,
    width: impl Fn(f64) -> f64,
    mut f: impl FnMut(f64) -> f64,
) -> (f64, f64) {
    let mut side = 0i8;
    for _ in 0..max_steps {
        if hi - lo <= width(hi) {
            break;
        }
        let mut x = (lo * fhi - hi * flo) / (fhi - flo);
        if !(x > lo && x < hi) {
            x = 0.5 * (lo + hi);
        }
        let fx = f(x);
        if fx >= 0.0 {
            (hi, fhi) = (x, fx);
            if side == 1 {
                flo *= 0.5;
            }
            side = 1;
        } else {
            (lo, flo) = (x, fx);
            if side == -1 {
                fhi *= 0.5;
            }
            side = -1;
        }
    }
    (lo, hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bisection_halves_the_bracket_towards_the_root() {
        // x^2 = 2 on [0, 2] (either order), 60 halvings: within 2^-59 of sqrt 2.
        let side = |x: f64| if x * x < 2.0 { Side::A } else { Side::B };
        let r = bisect(0.0, 2.0, Stop::Halvings(60), side);
        assert!((r - 2f64.sqrt()).abs() <= 4.0 * f64::EPSILON, "{r}");
        let side = |x: f64| if x * x < 2.0 { Side::B } else { Side::A };
        let r = bisect(2.0, 0.0, Stop::Width(1e-10), side);
        assert!((r - 2f64.sqrt()).abs() <= 1e-10, "{r}");
        // A probe that is a root stops the search at once.
        assert_eq!(bisect(0.0, 2.0, Stop::Width(0.0), |_| Side::Root), 1.0);
    }

    #[test]
    fn first_true_finds_the_switch_of_a_monotone_predicate() {
        for switch in -5..=7 {
            let mut calls = 0;
            let n = first_true(-6, 7, |n| {
                calls += 1;
                n >= switch
            });
            assert_eq!(n, switch.max(-5), "switch {switch}");
            assert!(calls <= 4, "{calls} calls");
        }
    }

    #[test]
    fn illinois_shrinks_the_bracket_to_the_resolution_of_f64() {
        let f = |x: f64| x.exp() - 3.0;
        let (lo, hi) = illinois(
            (0.0, f(0.0)),
            (2.0, f(2.0)),
            300,
            |hi| 4.0 * f64::EPSILON * hi,
            f,
        );
        assert!(f(lo) < 0.0 && f(hi) >= 0.0);
        assert!((hi - 3f64.ln()).abs() <= 8.0 * f64::EPSILON, "{hi}");
    }
}
