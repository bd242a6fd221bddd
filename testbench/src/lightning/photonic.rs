//! The photonic core as data: the analog multiply, its noise and its loss, in one
//! place, so that the golden model and the `sim` peripheral compute the same thing.
//!
//! There is no timing here (latency, intra-cycle shift and preambles belong to
//! the peripheral); a core maps one pair of DAC samples to one ADC sample:
//!
//! 1. decode both operands (bits `[14:7]`): activation `a`, weight magnitude `b`;
//! 2. multiply: `p = (a · b) >> 8` ([`product`], 0..=254);
//! 3. noise (optional): `p' = clamp(round(p + σ·z), 0, 255)` with `z` a standard
//!    normal draw and `round` half away from zero ([`add_noise`]), drawn as
//!    `clamp(p + D, 0, 255)` with `D = round(σ·z)` taken from its law by one
//!    64-bit word of a seeded ChaCha8 stream per sample, padding lanes included
//!    (see [`noise`](super::noise): the same law, for less than a normal draw and
//!    a rounding cost);
//! 4. loss: the ADC sample is `min(round(p' · 128 · t), 0x7FFF)` with `t` the
//!    optical transmission (1.0 = lossless, giving exactly `p' << 7`, i.e.
//!    `{0, p'[7:0], 7'b0}`).
//!
//! With σ = 0 and `t` = 1 the core is [`IdealCore`] and the datapath is exact.

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::arith::{decode_sample, encode_sample, SAMPLE_MAX, VALUE_MAX};
use super::noise::NoiseOffsets;

/// The noise measured on Lightning's testbed, σ on the 0–255 product scale.
pub const TESTBED_SIGMA: f64 = 1.657;

/// The photonic product of two 8-bit magnitudes: `(a · b) >> 8`.
pub fn product(a: u8, b: u8) -> u8 {
    ((u16::from(a) * u16::from(b)) >> 8) as u8
}

/// A product with additive Gaussian noise: `clamp(round(p + sigma · z), 0, 255)`
/// (a NaN reads as 0), for a given normal draw `z`: the noise law as written,
/// which [`NoisyCore`] samples without drawing `z` (see [`noise`](super::noise)).
///
/// Rounded without a call: x86-64 has no instruction for rounding half away from
/// zero, so `f64::round` is a call into libm, two of which took about a twentieth
/// of a Lightning simulation. Between 0 and 255 the sum is truncated and its
/// fraction, which the subtraction gives exactly, decides; outside, the clamp does.
pub fn add_noise(p: u8, sigma: f64, z: f64) -> u8 {
    let x = f64::from(p) + sigma * z;
    if x > 0.0 && x < f64::from(VALUE_MAX) {
        let t = x as u8;
        t + u8::from(x - f64::from(t) >= 0.5)
    } else if x >= f64::from(VALUE_MAX) {
        VALUE_MAX
    } else {
        0
    }
}

/// The ADC sample of a product after an optical transmission `t`:
/// `min(round(p · 128 · t), 0x7FFF)` (negative or NaN results read as 0).
pub fn adc_sample(p: u8, transmission: f64) -> u16 {
    let s = (f64::from(p) * 128.0 * transmission).round();
    if s.is_nan() || s <= 0.0 {
        0
    } else {
        s.min(f64::from(SAMPLE_MAX)) as u16
    }
}

/// A photonic core: one ADC sample per pair of DAC samples.
pub trait PhotonicCore {
    /// The ADC sample for activation sample `activation` (DAC 0) and weight
    /// magnitude sample `weight` (DAC 1), both in the `v << 7` format.
    fn transmit(&mut self, activation: u16, weight: u16) -> u16;
}

/// The noise-free, lossless core: `encode(product(decode(a), decode(b)))`.
#[derive(Clone, Copy, Debug, Default)]
pub struct IdealCore;

impl PhotonicCore for IdealCore {
    fn transmit(&mut self, activation: u16, weight: u16) -> u16 {
        encode_sample(product(decode_sample(activation), decode_sample(weight)))
    }
}

/// A core with seeded Gaussian noise σ and an optical transmission; deterministic
/// for a given seed and call sequence.
#[derive(Clone, Debug)]
pub struct NoisyCore {
    sigma: f64,
    transmission: f64,
    rng: ChaCha8Rng,
    /// The law of the noise's offset (none without noise).
    noise: Option<NoiseOffsets>,
    /// [`adc_sample`] of every noisy product at this transmission, computed once.
    adc: [u16; 256],
}

impl NoisyCore {
    /// A core with noise `sigma` (0-255 scale; 0 or less draws nothing), transmission
    /// `transmission` (1.0 lossless) and the random stream of `seed`.
    pub fn new(sigma: f64, transmission: f64, seed: u64) -> NoisyCore {
        NoisyCore {
            sigma,
            transmission,
            rng: ChaCha8Rng::seed_from_u64(seed),
            noise: NoiseOffsets::new(sigma),
            adc: std::array::from_fn(|p| adc_sample(p as u8, transmission)),
        }
    }

    /// Noise σ on the 0–255 product scale.
    pub fn sigma(&self) -> f64 {
        self.sigma
    }

    /// Optical transmission factor.
    pub fn transmission(&self) -> f64 {
        self.transmission
    }
}

impl PhotonicCore for NoisyCore {
    fn transmit(&mut self, activation: u16, weight: u16) -> u16 {
        let p = product(decode_sample(activation), decode_sample(weight));
        let p = match &self.noise {
            Some(noise) => noise.add(p, self.rng.next_u64()),
            None => p,
        };
        self.adc[usize::from(p)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;
    use rand_distr::StandardNormal;

    /// The law as the module states it, rounded by `f64::round` (libm's half
    /// away from zero): the reference the rounding without a call is held to.
    fn noisy_reference(p: u8, sigma: f64, z: f64) -> u8 {
        (f64::from(p) + sigma * z).round().clamp(0.0, 255.0) as u8
    }

    #[test]
    fn noise_rounds_half_away_from_zero_and_clamps_as_the_law_says() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for p in 0..=255u8 {
            for sigma in [0.3, 1.657, 40.0, 300.0] {
                for _ in 0..200 {
                    let z: f64 = rng.sample(StandardNormal);
                    assert_eq!(add_noise(p, sigma, z), noisy_reference(p, sigma, z));
                }
            }
        }
        // Sums at, just below and just above every half, both signs, the clamp's
        // edges and what is not a number.
        let below_half = 0.5 - f64::EPSILON / 4.0;
        for k in -3..=258 {
            for frac in [0.0, below_half, 0.5, 0.5 + f64::EPSILON, -below_half, -0.5] {
                let z = f64::from(k) + frac;
                assert_eq!(add_noise(0, 1.0, z), noisy_reference(0, 1.0, z), "sum {z}");
            }
        }
        for z in [
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            1e300,
            -1e300,
            -0.0,
        ] {
            assert_eq!(add_noise(7, 1.0, z), noisy_reference(7, 1.0, z), "z {z}");
        }
    }

    /// The core's product, its noise offset drawn by the next word of the seed's
    /// stream (one word a sample, whatever the sample), clamped, then the loss.
    /// The offsets' law is tested in [`noise`](crate::lightning::noise).
    #[test]
    fn noisy_core_is_its_law_sample_by_sample() {
        let offsets = NoiseOffsets::new(1.657).expect("noise");
        for (t, seed) in [(1.0, 11), (0.73, 12), (1.3, 13), (0.0, 14)] {
            let mut core = NoisyCore::new(1.657, t, seed);
            let mut words = ChaCha8Rng::seed_from_u64(seed);
            for a in (0..=255u8).step_by(3) {
                for b in (0..=255u8).step_by(7) {
                    let (sa, sb) = (encode_sample(a), encode_sample(b));
                    let d = offsets.offset(words.next_u64());
                    let noisy = (i32::from(product(a, b)) + d).clamp(0, 255) as u8;
                    let want = adc_sample(noisy, t);
                    assert_eq!(core.transmit(sa, sb), want, "a {a} b {b} t {t}");
                }
            }
        }
    }

    #[test]
    fn noise_free_noisy_core_is_ideal() {
        let mut noisy = NoisyCore::new(0.0, 1.0, 7);
        for a in (0..=255u8).step_by(5) {
            for b in (0..=255u8).step_by(3) {
                let (sa, sb) = (encode_sample(a), encode_sample(b));
                assert_eq!(noisy.transmit(sa, sb), IdealCore.transmit(sa, sb));
            }
        }
    }
}
