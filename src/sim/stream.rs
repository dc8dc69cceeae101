//! Deterministic random streams keyed by (seed, experiment, cell, batch, ...).
//!
//! Why here: the one seed derivation every generator in evalsim goes through. Depends on
//! nothing but `rand_xoshiro`.
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// The generator used everywhere.
pub type Rng = Xoshiro256PlusPlus;

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Hashes a key path into one 64-bit stream id.
pub fn stream_id(seed: u64, key: &[u64]) -> u64 {
    key.iter().fold(splitmix(seed), |h, &k| {
        splitmix(h ^ splitmix(k.wrapping_add(0x632B_E59B_D9B4_E019)))
    })
}

/// A generator for the stream at `key` under `seed`: the same key always gives the same numbers.
pub fn stream(seed: u64, key: &[u64]) -> Rng {
    Rng::seed_from_u64(stream_id(seed, key))
}

/// 2^53 as f64: a 53-bit uniform word below p 2^53 is a success with probability p, and p = 1
/// always succeeds.
pub(crate) const TWO_53: f64 = 9_007_199_254_740_992.0;

/// A uniform double in [0, 1) from one u64 (its top 53 bits).
#[inline]
pub(crate) fn unit<R: rand::RngCore + ?Sized>(rng: &mut R) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A uniform index in 0..n (n >= 1) from one u64 (Lemire's multiply-shift, without rejection:
/// a bias below n / 2^64).
#[inline]
pub(crate) fn index<R: rand::RngCore + ?Sized>(rng: &mut R, n: usize) -> usize {
    ((u128::from(rng.next_u64()) * n as u128) >> 64) as usize
}

/// Uniform draws in [0, 1) from the stream at `key` under `seed`, one per call (the tie-breaks
/// of `analyze`'s first-k vote).
pub fn uniforms(seed: u64, key: &[u64]) -> impl FnMut() -> f64 {
    use rand::Rng as _;
    let mut rng = stream(seed, key);
    move || rng.random::<f64>()
}

/// A stable 64-bit id for a name (FNV-1a), for keying streams by experiment or model name.
pub fn name_id(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngCore;

    #[test]
    fn streams_differ_by_key_and_repeat_by_key() {
        let a = stream(1, &[0, 1]).next_u64();
        assert_eq!(a, stream(1, &[0, 1]).next_u64());
        assert_ne!(a, stream(1, &[1, 0]).next_u64());
        assert_ne!(a, stream(2, &[0, 1]).next_u64());
    }
}
