//! The photonic noise of one sample, drawn as an integer offset from one 64-bit
//! random word.
//!
//! The noise law (see [`photonic`](super::photonic)) is `clamp(round(p + σ·z),
//! 0, 255)` for a product `p` in 0..=255 and a standard normal `z`. For an integer
//! `p` that is `clamp(p + D, 0, 255)` with `D = round(σ·z)`, except when `σ·z` is
//! exactly half an integer, which has probability 0. So a sample needs only `D`,
//! whose law is `P(D ≤ k) = Φ((k + ½) / σ)`, and whose values at or beyond ±255
//! all clamp alike: [`NoiseOffsets`] tabulates that law once per σ and draws `D`
//! by inverting it at a uniform 63-bit number.
//!
//! Drawing `z` first (`rand_distr`'s ziggurat) and rounding `p + σ·z` took 7.0–10.0
//! ns a sample on this project's VM, and a lit Lightning cycle draws 16 samples a
//! core; one random word, a table lookup and a short search take 4.9–6.4 ns, of
//! which the ChaCha8 word is 3.3–3.9 (loops of 20 million samples). The test bench
//! of `sim lightning --cores 4` fell from 525 to 340 ns a cycle (see the
//! performance log).

/// The offsets told apart: `-REACH..=REACH`. A product is at most 254 and a
/// noisy one is clamped to 0..=255, so every offset at or below `-REACH`
/// gives 0 and every one at or above `REACH` gives 255.
const REACH: i32 = 255;

/// Entries of the law's table: one per offset told apart.
const OFFSETS: usize = 2 * REACH as usize + 1;

/// The scale of the table: probabilities as multiples of 2^-63.
const ONE: u64 = 1 << 63;

/// Bits of the uniform number that pick where a search starts.
const GUIDE_BITS: u32 = 8;

/// The law of `D = round(σ·z)` for one σ, as a table to draw from.
#[derive(Clone, Debug)]
pub struct NoiseOffsets {
    /// `below[i]`: `2^63 · P(D ≤ i − REACH)`, rounded; non-decreasing, the last
    /// exactly `2^63` (the offsets at and past `REACH` lumped together, as are
    /// those at and below `-REACH` in the first).
    below: Box<[u64; OFFSETS]>,
    /// `guide[b]`: the first entry of `below` above `b · 2^55`, where the search
    /// for a number whose top bits are `b` starts.
    guide: Box<[u16; 1 << GUIDE_BITS]>,
}

impl NoiseOffsets {
    /// The law for noise `sigma` on the 0–255 scale; `None` unless `sigma > 0`
    /// (no noise; a NaN included).
    pub fn new(sigma: f64) -> Option<NoiseOffsets> {
        if sigma.is_nan() || sigma <= 0.0 {
            return None;
        }
        let below: Box<[u64; OFFSETS]> = Box::new(std::array::from_fn(|i| {
            if i == OFFSETS - 1 {
                return ONE;
            }
            let k = i as i32 - REACH;
            let p = normal_cdf((f64::from(k) + 0.5) / sigma);
            // `p` is at most 1, so the scaled value is at most 2^63 and converts
            // exactly; the minimum only guards the top against rounding.
            ((p * ONE as f64).round() as u64).min(ONE)
        }));
        let guide = Box::new(std::array::from_fn(|b| {
            let floor = (b as u64) << (63 - GUIDE_BITS);
            below.partition_point(|&x| x <= floor) as u16
        }));
        Some(NoiseOffsets { below, guide })
    }

    /// The offset drawn by the 64-bit random word `word`: `D = k` for the 63-bit
    /// number `u = word >> 1` with `2^63 · P(D < k) ≤ u < 2^63 · P(D ≤ k)`.
    #[inline]
    pub fn offset(&self, word: u64) -> i32 {
        let u = word >> 1;
        let mut i = usize::from(self.guide[(u >> (63 - GUIDE_BITS)) as usize]);
        // Ends within the table: its last entry, 2^63, exceeds every u.
        while self.below[i] <= u {
            i += 1;
        }
        i as i32 - REACH
    }

    /// Product `p` with the noise drawn by `word`: `clamp(p + D, 0, 255)`.
    #[inline]
    pub fn add(&self, p: u8, word: u64) -> u8 {
        (i32::from(p) + self.offset(word)).clamp(0, 255) as u8
    }
}

/// The standard normal distribution function `Φ(x)`, from `erfc` on the side
/// where it keeps its relative precision.
fn normal_cdf(x: f64) -> f64 {
    let t = x / std::f64::consts::SQRT_2;
    if x < 0.0 {
        0.5 * libm::erfc(-t)
    } else {
        1.0 - 0.5 * libm::erfc(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lightning::photonic::add_noise;
    use rand::{Rng, RngCore, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use rand_distr::StandardNormal;

    const SIGMAS: [f64; 5] = [0.05, 0.3, 1.657, 40.0, 300.0];

    /// `∫ φ` over `[a, b]` by Simpson's rule on panels at most 1/2000 wide: the
    /// normal law without `erfc` (error below 1e-13 over 24 units).
    fn normal_mass(a: f64, b: f64) -> f64 {
        let pdf = |z: f64| (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt();
        let n = 2 * (((b - a) * 1000.0).ceil() as usize).max(100);
        let h = (b - a) / n as f64;
        let inner: f64 = (1..n)
            .map(|j| (if j % 2 == 1 { 4.0 } else { 2.0 }) * pdf(a + j as f64 * h))
            .sum();
        (pdf(a) + inner + pdf(b)) * h / 3.0
    }

    /// Each offset's probability in the table, against the normal density
    /// integrated over the values of `z` for which `σ·z` rounds to it (within
    /// ±12, outside which lies less than 1e-32 of the mass).
    #[test]
    fn the_table_is_the_law_of_the_rounded_noise() {
        for sigma in SIGMAS {
            let t = NoiseOffsets::new(sigma).expect("noise");
            let mut total = 0.0;
            for i in 0..OFFSETS {
                let k = f64::from(i as i32 - REACH);
                let lo = if i == 0 { -12.0 } else { (k - 0.5) / sigma };
                let hi = if i == OFFSETS - 1 {
                    12.0
                } else {
                    (k + 0.5) / sigma
                };
                let (lo, hi) = (lo.clamp(-12.0, 12.0), hi.clamp(-12.0, 12.0));
                let want = if hi > lo { normal_mass(lo, hi) } else { 0.0 };
                let from = if i == 0 { 0 } else { t.below[i - 1] };
                let got = (t.below[i] - from) as f64 / ONE as f64;
                assert!(
                    (got - want).abs() < 1e-12,
                    "sigma {sigma}, offset {k}: table {got:e}, integral {want:e}"
                );
                total += want;
            }
            assert!((total - 1.0).abs() < 1e-12, "sigma {sigma}: mass {total}");
        }
    }

    /// The first entry above `u`, found by a plain scan: the search without the
    /// guide.
    fn scanned(t: &NoiseOffsets, u: u64) -> i32 {
        let i = t
            .below
            .iter()
            .position(|&x| x > u)
            .expect("the last is 2^63");
        i as i32 - REACH
    }

    /// At both ends of every offset's interval, just outside them, at the guide's
    /// bucket edges and at random numbers, the guided search finds what a scan
    /// of the whole table finds; the word's lowest bit is ignored.
    #[test]
    fn a_draw_is_the_offset_whose_interval_holds_it() {
        let mut rng = ChaCha8Rng::seed_from_u64(21);
        for sigma in SIGMAS {
            let t = NoiseOffsets::new(sigma).expect("noise");
            let mut us: Vec<u64> = (0..20_000).map(|_| rng.gen::<u64>() >> 1).collect();
            for &b in t.below.iter() {
                us.extend([b.saturating_sub(1), b, b + 1].map(|u| u.min(ONE - 1)));
            }
            us.extend((0..1u64 << GUIDE_BITS).flat_map(|b| {
                let floor = b << (63 - GUIDE_BITS);
                [floor, floor.saturating_sub(1)]
            }));
            for u in us {
                let want = scanned(&t, u);
                assert_eq!(t.offset(u << 1), want, "sigma {sigma}, u {u:#x}");
                assert_eq!(t.offset(u << 1 | 1), want, "sigma {sigma}, u {u:#x}");
            }
        }
    }

    /// Two-sample χ² of the noisy products: drawn from the table, and computed
    /// from normal draws (`rand_distr`'s ziggurat) by [`add_noise`], the law as
    /// written. Neighbouring values are pooled until a bin holds 80 samples of
    /// the two; the bound lies ten standard deviations of χ² above its mean for
    /// the bins' degrees of freedom, which a right law does not reach and a law
    /// off by half an offset exceeds many times over.
    #[test]
    fn noisy_products_follow_the_law_as_written() {
        let n = 200_000;
        for (p, sigma) in [
            (100u8, 1.657),
            (0, 1.657),
            (254, 1.657),
            (3, 40.0),
            (128, 300.0),
        ] {
            let t = NoiseOffsets::new(sigma).expect("noise");
            let mut words = ChaCha8Rng::seed_from_u64(u64::from(p) + 7);
            let mut normals = ChaCha8Rng::seed_from_u64(u64::from(p) + 8);
            let (mut drawn, mut written) = ([0u64; 256], [0u64; 256]);
            for _ in 0..n {
                drawn[usize::from(t.add(p, words.next_u64()))] += 1;
                let z: f64 = normals.sample(StandardNormal);
                written[usize::from(add_noise(p, sigma, z))] += 1;
            }
            let (mut chi2, mut bins, mut pooled) = (0.0, 0usize, (0u64, 0u64));
            for (a, b) in drawn.iter().zip(&written) {
                pooled = (pooled.0 + a, pooled.1 + b);
                if pooled.0 + pooled.1 >= 80 {
                    let (a, b) = (pooled.0 as f64, pooled.1 as f64);
                    chi2 += (a - b) * (a - b) / (a + b);
                    bins += 1;
                    pooled = (0, 0);
                }
            }
            let df = bins.saturating_sub(1) as f64;
            let bound = df + 10.0 * (2.0 * df).sqrt() + 25.0;
            assert!(
                chi2 < bound,
                "p {p}, sigma {sigma}: chi-square {chi2:.1} over {bins} bins, bound {bound:.1}"
            );
        }
    }

    #[test]
    fn no_noise_without_a_positive_sigma() {
        for sigma in [0.0, -1.0, f64::NAN] {
            assert!(NoiseOffsets::new(sigma).is_none(), "sigma {sigma}");
        }
    }
}
