//! The root-finding of the minimum detectable gap (see [`smallest_gap_with_power`]).

use crate::numerics::root::illinois;

/// The smallest logit gap g in (0, 40] whose power `power(g)` reaches `target`, for a power that
/// rises with g from 0.05 at g = 0: a doubling search from 0.05 logits brackets the root, then
/// the Illinois variant of regula falsi shrinks the bracket [lo, hi] (power(lo) < target <=
/// power(hi) throughout) until lo and hi are within 4 ulps of each other, i.e. to the resolution
/// of f64 on the gap axis: the answer is the exact function's own root, not a root to a chosen
/// tolerance. Returns hi (its power is >= target). None when even 40 logits fall short.
/// Time: about 10 to 20 evaluations of `power` (at most 300).
pub fn smallest_gap_with_power(target: f64, mut power: impl FnMut(f64) -> f64) -> Option<f64> {
    let (mut lo, mut flo) = (0.0, power(0.0) - target);
    if flo >= 0.0 {
        return Some(0.0);
    }
    let mut hi = 0.05;
    let mut fhi = power(hi) - target;
    while fhi < 0.0 {
        if hi >= 40.0 {
            return None;
        }
        (lo, flo) = (hi, fhi);
        hi = (2.0 * hi).min(40.0);
        fhi = power(hi) - target;
    }
    let (_, hi) = illinois(
        (lo, flo),
        (hi, fhi),
        300,
        |hi| 4.0 * f64::EPSILON * hi,
        |x| power(x) - target,
    );
    Some(hi)
}
