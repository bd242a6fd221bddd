//! The photonic core as data: the analog multiply, its noise and its loss, in one
//! place, so that the golden model and the `sim` peripheral compute the same thing.
//!
//! There is no timing here (latency, intra-cycle shift and preambles belong to
//! the peripheral); a core maps one pair of DAC samples to one ADC sample:
//!
//! 1. decode both operands (bits `[14:7]`): activation `a`, weight magnitude `b`;
//! 2. multiply: `p = (a · b) >> 8` ([`product`], 0..=254);
//! 3. noise (optional): `p' = clamp(round(p + σ·z), 0, 255)` with `z` a standard
//!    normal draw (the ziggurat method of `rand_distr` on a seeded ChaCha8
//!    stream, one draw per sample, padding lanes included; `round` is half away
//!    from zero);
//! 4. loss: the ADC sample is `min(round(p' · 128 · t), 0x7FFF)` with `t` the
//!    optical transmission (1.0 = lossless, giving exactly `p' << 7`, i.e.
//!    `{0, p'[7:0], 7'b0}`).
//!
//! With σ = 0 and `t` = 1 the core is [`IdealCore`] and the datapath is exact.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;

use super::arith::{decode_sample, encode_sample, SAMPLE_MAX, VALUE_MAX};

/// The noise measured on Lightning's testbed, σ on the 0–255 product scale.
pub const TESTBED_SIGMA: f64 = 1.657;

/// The photonic product of two 8-bit magnitudes: `(a · b) >> 8`.
pub fn product(a: u8, b: u8) -> u8 {
    ((u16::from(a) * u16::from(b)) >> 8) as u8
}

/// A product with additive Gaussian noise: `clamp(round(p + sigma · z), 0, 255)`.
pub fn add_noise(p: u8, sigma: f64, z: f64) -> u8 {
    (f64::from(p) + sigma * z)
        .round()
        .clamp(0.0, f64::from(VALUE_MAX)) as u8
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

/// One standard normal draw: `rand_distr`'s ziggurat sampler, usually one
/// 64-bit word and a table lookup where Box–Muller takes a logarithm, a square
/// root and a cosine (a lit fabric cycle draws 16 per core).
pub fn standard_normal(rng: &mut impl Rng) -> f64 {
    rng.sample(StandardNormal)
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
}

impl NoisyCore {
    /// A core with noise `sigma` (0-255 scale; 0 draws nothing), transmission
    /// `transmission` (1.0 lossless) and the random stream of `seed`.
    pub fn new(sigma: f64, transmission: f64, seed: u64) -> NoisyCore {
        NoisyCore {
            sigma,
            transmission,
            rng: ChaCha8Rng::seed_from_u64(seed),
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
        let p = if self.sigma > 0.0 {
            let z = standard_normal(&mut self.rng);
            add_noise(p, self.sigma, z)
        } else {
            p
        };
        adc_sample(p, self.transmission)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn normal_draws_have_unit_variance() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let n = 20_000;
        let draws: Vec<f64> = (0..n).map(|_| standard_normal(&mut rng)).collect();
        let mean = draws.iter().sum::<f64>() / n as f64;
        let var = draws.iter().map(|z| (z - mean) * (z - mean)).sum::<f64>() / n as f64;
        assert!(mean.abs() < 0.03, "mean {mean}");
        assert!((var - 1.0).abs() < 0.05, "variance {var}");
        // The shape, against the normal law: P(|z| < 1) = 0.6827, P(|z| < 2) =
        // 0.9545, P(|z| < 3) = 0.9973.
        for (k, p) in [(1.0, 0.6827), (2.0, 0.9545), (3.0, 0.9973)] {
            let inside = draws.iter().filter(|z| z.abs() < k).count() as f64 / n as f64;
            assert!(
                (inside - p).abs() < 0.01,
                "P(|z| < {k}) = {inside}, not {p}"
            );
        }
    }
}
