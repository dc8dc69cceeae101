//! The standard normal distribution function Phi and its upper tail, to full double precision.
//!
//! Every Phi in `exact/` goes through [`cdf`] or [`sf`]. They implement W. J. Cody's rational
//! Chebyshev approximations (Cody, "Rational Chebyshev approximations for the error function",
//! Math. Comp. 23 (1969) 631-637; the ANORM routine of Cody, ACM TOMS 715, 1993), the method of
//! R's `pnorm`: three intervals in |x| (up to 0.66291, up to sqrt(32), beyond), and in the tails
//! exp(-x^2 / 2) split as exp(-x_hi^2 / 2) exp(-(x - x_hi)(x + x_hi) / 2) with x_hi = x rounded
//! down to a multiple of 1/16, so the exponential adds no error of its own. The smaller of
//! Phi(x) and 1 - Phi(x) is always computed directly, never as 1 minus a number near 1.
//!
//! Accuracy, measured against 60-digit mpmath values at 1,963 points over [-38.5, 9] (the test
//! `normal_cdf_matches_high_precision_references`): relative error at most 5.7e-16 for both tails
//! wherever the value is a normal f64 (Phi(x) >= 2.2e-308, i.e. x >= -37.5); below that Phi
//! underflows gracefully to 0. statrs 0.18's `erfc`, used before, erred by up to 2.5e-11
//! absolute near x = -0.71.
//!
//! Why here: one accurate Phi for all of `exact`. Depends on nothing.

// Cody's coefficients and the reference values are published to 20 digits; they are kept as
// published rather than rounded by hand.
#![allow(clippy::excessive_precision)]

/// 1 / sqrt(2 pi).
/// The 97.5% standard normal quantile: the multiple of the SE in every two-sided 95% interval
/// and 5% test.
pub const Z_95: f64 = 1.959_963_984_540_054;

/// The 80% standard normal quantile (80% power).
pub const Z_80: f64 = 0.841_621_233_572_914_3;

const FRAC_1_SQRT_2PI: f64 = 0.398_942_280_401_432_677_939_946_059_934;
/// Where the first interval ends: Phi(0.66291) = 0.75.
const SMALL: f64 = 0.66291;
/// Where the second interval ends: sqrt(32).
const MEDIUM: f64 = 5.656_854_249_492_380_195_206_754_896_84;

const A: [f64; 5] = [
    2.235_252_035_460_683_928_7,
    161.028_231_068_555_878_81,
    1_067.689_485_460_370_958_2,
    18_154.981_253_343_561_249,
    0.065_682_337_918_207_449_113,
];
const B: [f64; 4] = [
    47.202_581_904_688_241_87,
    976.098_551_737_776_693_22,
    10_260.932_208_618_978_205,
    45_507.789_335_026_729_956,
];
const C: [f64; 9] = [
    0.398_941_512_088_134_667_64,
    8.883_149_794_388_375_941_2,
    93.506_656_132_177_855_979,
    597.270_276_394_800_262_26,
    2_494.537_585_290_372_671_1,
    6_848.190_450_536_282_332_6,
    11_602.651_437_647_350_124,
    9_842.714_838_383_978_021_8,
    1.076_557_677_372_019_231_7e-8,
];
const D: [f64; 8] = [
    22.266_688_044_328_115_691,
    235.387_901_782_624_998_61,
    1_519.377_599_407_554_805,
    6_485.558_298_266_760_755,
    18_615.571_640_885_098_091,
    34_900.952_721_145_977_266,
    38_912.003_286_093_271_411,
    19_685.429_676_859_990_727,
];
const P: [f64; 6] = [
    0.215_898_534_057_956_99,
    0.127_401_161_160_247_363_9,
    0.022_235_277_870_649_807,
    0.001_421_619_193_227_893_466,
    2.911_287_495_116_879_2e-5,
    0.023_073_441_764_940_173_03,
];
const Q: [f64; 5] = [
    1.284_260_096_144_911_21,
    0.468_238_212_480_865_118,
    0.065_988_137_868_928_551_5,
    0.003_782_396_332_027_582_44,
    7.297_515_550_839_662_05e-5,
];

/// (Phi(x), 1 - Phi(x)), each computed directly where it is the smaller one. NaN gives NaN;
/// -inf gives (0, 1) and inf (1, 0). Time: O(1).
pub fn cdf_and_sf(x: f64) -> (f64, f64) {
    if x.is_nan() {
        return (f64::NAN, f64::NAN);
    }
    let y = x.abs();
    if y <= SMALL {
        let xsq = if y > f64::EPSILON * 0.5 { x * x } else { 0.0 };
        let mut num = A[4] * xsq;
        let mut den = xsq;
        for i in 0..3 {
            num = (num + A[i]) * xsq;
            den = (den + B[i]) * xsq;
        }
        let t = x * (num + A[3]) / (den + B[3]);
        return (0.5 + t, 0.5 - t);
    }
    // The tail beyond |x|: exp(-x^2 / 2) times a rational function.
    let tail = if y <= MEDIUM {
        let mut num = C[8] * y;
        let mut den = y;
        for i in 0..7 {
            num = (num + C[i]) * y;
            den = (den + D[i]) * y;
        }
        gaussian_factor(y) * (num + C[7]) / (den + D[7])
    } else if y.is_finite() {
        let xsq = 1.0 / (x * x);
        let mut num = P[5] * xsq;
        let mut den = xsq;
        for i in 0..4 {
            num = (num + P[i]) * xsq;
            den = (den + Q[i]) * xsq;
        }
        let r = xsq * (num + P[4]) / (den + Q[4]);
        gaussian_factor(y) * (FRAC_1_SQRT_2PI - r) / y
    } else {
        0.0
    };
    if x > 0.0 {
        (1.0 - tail, tail)
    } else {
        (tail, 1.0 - tail)
    }
}

/// exp(-y^2 / 2) without the rounding error of y^2: y = hi + lo with hi a multiple of 1/16, so
/// hi^2 is exact and exp(-(y - hi)(y + hi) / 2) carries the rest.
fn gaussian_factor(y: f64) -> f64 {
    let hi = (y * 16.0).trunc() / 16.0;
    let del = (y - hi) * (y + hi);
    (-hi * hi * 0.5).exp() * (-del * 0.5).exp()
}

/// Phi(x) = P(Z <= x) for Z ~ N(0, 1), to full relative precision in the lower tail.
/// Time: O(1).
pub fn cdf(x: f64) -> f64 {
    cdf_and_sf(x).0
}

/// 1 - Phi(x) = P(Z > x), computed directly (full relative precision in the upper tail).
/// Time: O(1).
pub fn sf(x: f64) -> f64 {
    cdf_and_sf(x).1
}

/// The standard normal density phi(x) = exp(-x^2 / 2) / sqrt(2 pi), with the same exact split
/// of x^2 as [`cdf`]. Time: O(1).
pub fn pdf(x: f64) -> f64 {
    FRAC_1_SQRT_2PI * gaussian_factor(x.abs())
}

/// The density of N(mean, sd^2) at x, exp(-z^2 / 2) / (sd sqrt(2 pi)) with z = (x - mean) / sd,
/// evaluated plainly (for drawing a reference curve; [`pdf`] is the accurate standard density).
/// Time: O(1).
pub fn density(x: f64, mean: f64, sd: f64) -> f64 {
    let z = (x - mean) / sd;
    (-0.5 * z * z).exp() / (sd * (2.0 * std::f64::consts::PI).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (x, Phi(x)) to 17 significant digits from mpmath, x exactly representable. The full
    /// 1,963-point table of the integration test `normal_cdf_matches_high_precision_references`
    /// is written by `tests/fixtures/numerics/make_normal_cdf.py`.
    const SPOT: [(f64, f64); 8] = [
        (-0.71, 0.238_852_068_089_986_73),
        (0.0, 0.5),
        (-1.0, 0.158_655_253_931_457_05),
        (-5.0, 2.866_515_718_791_939_1e-7),
        (-10.0, 7.619_853_024_160_526_1e-24),
        (-20.0, 2.753_624_118_606_233_4e-89),
        (-37.0, 5.725_571_222_524_576_8e-300),
        (3.0, 0.998_650_101_968_369_9),
    ];

    #[test]
    fn spot_values_are_accurate_to_full_precision() {
        for (x, want) in SPOT {
            let got = cdf(x);
            assert!(
                ((got - want) / want).abs() < 2e-15,
                "Phi({x}) = {got:e}, want {want:e}"
            );
        }
    }

    #[test]
    fn the_two_tails_are_symmetric_and_sum_to_one() {
        for i in -400..=400 {
            let x = i as f64 / 37.0;
            let (c, s) = cdf_and_sf(x);
            assert_eq!(c, sf(-x));
            assert!((c + s - 1.0).abs() <= 2.0 * f64::EPSILON);
        }
        assert_eq!(cdf_and_sf(f64::NEG_INFINITY), (0.0, 1.0));
        assert_eq!(cdf_and_sf(f64::INFINITY), (1.0, 0.0));
        assert!(cdf(f64::NAN).is_nan());
    }
}
