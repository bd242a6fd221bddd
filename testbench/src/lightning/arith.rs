//! The arithmetic contract of the Lightning datapath, bit-exact.
//!
//! Everything the digital side of one photonic core computes, as plain integer
//! functions (the analog multiply itself is in [`super::photonic`]). The hardware
//! generator must match these functions bit for bit when the photonic noise is 0
//! and the optical loss is compensated exactly.
//!
//! # Samples and the bus
//! The fabric bus carries [`SAMPLES_PER_CYCLE`] = 16 samples of [`SAMPLE_WIDTH`] =
//! 16 bits per cycle, sample *i* in bits `[16i+15:16i]` ([`pack_bus`]). An 8-bit
//! value *v* travels as `v << 7` (bits `[14:7]`, bit 15 and bits `[6:0]` zero):
//! [`encode_sample`]; the datapath reads a sample back as bits `[14:7]`:
//! [`decode_sample`].
//!
//! # One output neuron, cycle by cycle
//! For a layer with `N` inputs, input `j` goes to cycle `j / 16`, lane `j % 16`;
//! the inputs are zero-padded to a multiple of 16 (padding lanes carry activation
//! 0 and weight +0), so a neuron takes [`cycles_per_output`]`(N) = ceil(N / 16)`
//! cycles. In each cycle, per lane:
//!
//! 1. the photonic core returns the ADC sample of `p = (a · |w|) >> 8`
//!    ([`super::photonic::product`]), `a` the activation and `|w|` the weight
//!    magnitude (both 0..=255, so `p` is 0..=254);
//! 2. loss compensation: the 16-bit sample times the `optical_loss` register, a
//!    Q8.8 factor ([`OpticalLoss::compensate`]: `(s · L + 128) >> 8`, round half
//!    up, saturating at `0x7FFF`); with `L = 1.0` (`0x0100`) it is the identity;
//! 3. the 8-bit product is the compensated sample rounded to the nearest multiple
//!    of 128 ([`decode_adc`]: `min((s' + 64) >> 7, 255)`); on a lossless sample
//!    `p << 7` that is bits `[14:7]`, and after a loss it makes a gain near
//!    `1 / transmission` exact for every product (truncation would read some
//!    products one low whatever the gain);
//! 4. the weight's sign bit negates it ([`signed_term`]).
//!
//! The 16 signed terms are summed ([`lane_sum`], −4064..=4064, 13 bits signed) and
//! the lane sum is added to a signed two's-complement accumulator of `acc_width`
//! bits that **saturates** at every addition ([`AccWidth::saturating_add`]): it
//! never wraps, and a later lane sum of the other sign moves it back from the
//! bound. After the last cycle the accumulator is the neuron's value; it is
//! cleared before the next neuron.
//!
//! # Between layers and at the end
//! Hidden layers apply ReLU ([`relu`]) and power-of-two normalization
//! ([`normalize`]: arithmetic right shift by the layer's shift `k`, then clamp to
//! 0..=255), giving the next layer's 8-bit activations. The last layer emits its
//! accumulators as signed logits, before any ReLU or normalization; the
//! prediction is the index of the first largest logit ([`argmax`]).
//!
//! # The released RTL's contract ([`released_rtl`])
//! The authors' released RTL for the ZCU111 prototype (`lenet_single_core.v`)
//! differs in five ways, each a function of [`released_rtl`]: an integer loss
//! gain on the extracted product, sign bit 1 = positive, a 16-bit wrapping
//! accumulator with ReLU on bit 15, a data-dependent power-of-two
//! normalization per layer, and a preamble mean that halves at each of four
//! adder stages. [`Contract`] names the two.

use thiserror::Error;

/// Samples per fabric cycle (lanes of the bus and of the lane-sum adder tree).
pub const SAMPLES_PER_CYCLE: usize = 16;
/// Width of one bus sample in bits.
pub const SAMPLE_WIDTH: u32 = 16;
/// Position of an 8-bit value inside its sample: `v << VALUE_SHIFT`.
pub const VALUE_SHIFT: u32 = 7;
/// Largest 8-bit activation or weight magnitude.
pub const VALUE_MAX: u8 = 255;
/// Largest magnitude of one lane sum: 16 lanes × `(255 · 255) >> 8` = 16 × 254.
pub const LANE_SUM_MAX: i64 = 16 * 254;
/// Narrowest accumulator that holds any single lane sum (13 bits signed).
pub const ACC_WIDTH_MIN: u32 = 13;
/// Widest accumulator the model supports.
pub const ACC_WIDTH_MAX: u32 = 48;
/// Largest normalization shift (a 5-bit per-layer register).
pub const SHIFT_MAX: u32 = 31;
/// Largest sample value after loss compensation (bit 15 stays 0).
pub const SAMPLE_MAX: u16 = 0x7FFF;

/// A value outside the contract's parameter ranges.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum ArithError {
    /// The accumulator width is outside `ACC_WIDTH_MIN..=ACC_WIDTH_MAX`.
    #[error("accumulator width {0} bits is out of range: must be {ACC_WIDTH_MIN}..={ACC_WIDTH_MAX} so that one lane sum (±{LANE_SUM_MAX}) fits")]
    AccWidth(u32),
    /// A normalization shift above `SHIFT_MAX`.
    #[error("normalization shift {0} is out of range: must be 0..={SHIFT_MAX}")]
    Shift(u32),
    /// A weight outside −255..=255.
    #[error("weight {0} is out of range: must be -255..=255 (8-bit magnitude and a sign bit)")]
    Weight(i32),
    /// A layer with no inputs.
    #[error("a layer needs at least one input")]
    NoInputs,
    /// An optical loss factor that is not representable in Q8.8.
    #[error("optical loss factor {0} is out of range: must be finite, > 0 and < 256 (Q8.8)")]
    OpticalLoss(f64),
}

/// The two arithmetic contracts the golden model implements.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Contract {
    /// wirespeed's (the rest of this module).
    #[default]
    Wirespeed,
    /// The authors' released RTL ([`released_rtl`]).
    ReleasedRtl,
}

/// Encodes an 8-bit value as a bus sample: `v << 7`.
pub fn encode_sample(v: u8) -> u16 {
    u16::from(v) << VALUE_SHIFT
}

/// Decodes a bus sample: bits `[14:7]` (bit 15 and bits `[6:0]` are ignored).
pub fn decode_sample(s: u16) -> u8 {
    ((s >> VALUE_SHIFT) & 0xFF) as u8
}

/// Packs 16 samples into the 256-bit bus as four little-endian 64-bit words:
/// sample `i` in bits `[16i+15:16i]`.
pub fn pack_bus(samples: &[u16; SAMPLES_PER_CYCLE]) -> [u64; 4] {
    let mut words = [0u64; 4];
    for (i, &s) in samples.iter().enumerate() {
        words[i / 4] |= u64::from(s) << (16 * (i % 4));
    }
    words
}

/// Unpacks the 256-bit bus (four little-endian 64-bit words) into 16 samples.
pub fn unpack_bus(words: &[u64; 4]) -> [u16; SAMPLES_PER_CYCLE] {
    let mut samples = [0u16; SAMPLES_PER_CYCLE];
    for (i, s) in samples.iter_mut().enumerate() {
        *s = (words[i / 4] >> (16 * (i % 4))) as u16;
    }
    samples
}

/// A weight as the datapath sees it: an 8-bit magnitude streamed to DAC 1 and a
/// sign bit per lane applied after the ADC. Zero is positive.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Weight {
    /// Magnitude 0..=255.
    pub magnitude: u8,
    /// Sign bit: the product is subtracted when set.
    pub negative: bool,
}

impl Weight {
    /// The weight +0 (used on padding lanes).
    pub const ZERO: Weight = Weight {
        magnitude: 0,
        negative: false,
    };

    /// A weight from a signed value in −255..=255 (0 is positive).
    pub fn from_signed(w: i32) -> Result<Weight, ArithError> {
        let magnitude = u8::try_from(w.unsigned_abs()).map_err(|_| ArithError::Weight(w))?;
        Ok(Weight {
            magnitude,
            negative: w < 0,
        })
    }

    /// The signed value −255..=255 (a negative zero reads as 0).
    pub fn signed(self) -> i32 {
        let m = i32::from(self.magnitude);
        if self.negative {
            -m
        } else {
            m
        }
    }
}

/// The `optical_loss` register: an unsigned Q8.8 factor (`0x0100` = 1.0) that
/// multiplies every ADC sample to compensate the optical loss of the core.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct OpticalLoss(pub u16);

impl OpticalLoss {
    /// Factor 1.0: no compensation, the exact path.
    pub const UNITY: OpticalLoss = OpticalLoss(0x0100);

    /// The register value nearest to `factor` (round half up), e.g. `1 / 0.8`.
    pub fn from_factor(factor: f64) -> Result<OpticalLoss, ArithError> {
        if !factor.is_finite() || factor <= 0.0 {
            return Err(ArithError::OpticalLoss(factor));
        }
        let raw = (factor * 256.0 + 0.5).floor();
        if raw > f64::from(u16::MAX) {
            return Err(ArithError::OpticalLoss(factor));
        }
        Ok(OpticalLoss(raw as u16))
    }

    /// The factor this register represents.
    pub fn factor(self) -> f64 {
        f64::from(self.0) / 256.0
    }

    /// Compensates one ADC sample: `min((s · L + 128) >> 8, 0x7FFF)` with `L`
    /// the raw Q8.8 register (the product is at most 32 bits; round half up).
    pub fn compensate(self, sample: u16) -> u16 {
        let wide = (u32::from(sample) * u32::from(self.0) + 0x80) >> 8;
        wide.min(u32::from(SAMPLE_MAX)) as u16
    }
}

impl Default for OpticalLoss {
    fn default() -> Self {
        OpticalLoss::UNITY
    }
}

/// Decodes one ADC sample into the 8-bit product: loss compensation, then the
/// nearest 8-bit value, `min((s' + 64) >> 7, 255)` (round half up).
pub fn decode_adc(sample: u16, loss: OpticalLoss) -> u8 {
    ((u32::from(loss.compensate(sample)) + 64) >> VALUE_SHIFT).min(u32::from(VALUE_MAX)) as u8
}

/// The product with the weight's sign applied: `−p` when `negative`, else `p`.
pub fn signed_term(product: u8, negative: bool) -> i64 {
    let p = i64::from(product);
    if negative {
        -p
    } else {
        p
    }
}

/// The sum of one cycle's 16 signed terms (−4064..=4064 for products ≤ 254).
pub fn lane_sum(products: &[u8; SAMPLES_PER_CYCLE], signs: &[bool; SAMPLES_PER_CYCLE]) -> i64 {
    products
        .iter()
        .zip(signs)
        .map(|(&p, &neg)| signed_term(p, neg))
        .sum()
}

/// Number of 16-sample cycles one output neuron of an `inputs`-input layer takes:
/// `ceil(inputs / 16)`.
pub fn cycles_per_output(inputs: usize) -> Result<usize, ArithError> {
    if inputs == 0 {
        return Err(ArithError::NoInputs);
    }
    Ok(inputs.div_ceil(SAMPLES_PER_CYCLE))
}

/// The width of the signed accumulator, validated (`ACC_WIDTH_MIN..=ACC_WIDTH_MAX`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AccWidth(u32);

impl AccWidth {
    /// The released RTL's 16-bit accumulator.
    pub const RELEASED_RTL: AccWidth = AccWidth(16);

    /// An accumulator of `bits` bits.
    pub fn new(bits: u32) -> Result<AccWidth, ArithError> {
        if (ACC_WIDTH_MIN..=ACC_WIDTH_MAX).contains(&bits) {
            Ok(AccWidth(bits))
        } else {
            Err(ArithError::AccWidth(bits))
        }
    }

    /// Width in bits.
    pub fn bits(self) -> u32 {
        self.0
    }

    /// Smallest value: `−2^(bits−1)`.
    pub fn min_value(self) -> i64 {
        -(1i64 << (self.0 - 1))
    }

    /// Largest value: `2^(bits−1) − 1`.
    pub fn max_value(self) -> i64 {
        (1i64 << (self.0 - 1)) - 1
    }

    /// One accumulation step: `clamp(acc + x, min, max)`, and whether it clamped.
    /// `acc` must already be in range and `|x| ≤ 2^47`, which the datapath ensures.
    pub fn saturating_add(self, acc: i64, x: i64) -> (i64, bool) {
        let sum = acc + x;
        let clamped = sum.clamp(self.min_value(), self.max_value());
        (clamped, clamped != sum)
    }
}

impl Default for AccWidth {
    fn default() -> Self {
        AccWidth::RELEASED_RTL
    }
}

/// ReLU: `max(acc, 0)`.
pub fn relu(acc: i64) -> i64 {
    acc.max(0)
}

/// Power-of-two normalization to an 8-bit activation: `clamp(acc >> shift, 0,
/// 255)`, `>>` an arithmetic shift (rounds toward −∞; a negative `acc` gives 0).
/// `shift` must be ≤ `SHIFT_MAX` (checked when a layer is built).
pub fn normalize(acc: i64, shift: u32) -> u8 {
    (acc >> shift.min(63)).clamp(0, i64::from(VALUE_MAX)) as u8
}

/// Checks a normalization shift against `SHIFT_MAX`.
pub fn check_shift(shift: u32) -> Result<u32, ArithError> {
    if shift <= SHIFT_MAX {
        Ok(shift)
    } else {
        Err(ArithError::Shift(shift))
    }
}

/// Index of the first largest value (`None` for an empty slice): the prediction
/// from a logit vector.
pub fn argmax(values: &[i64]) -> Option<usize> {
    let mut best: Option<(usize, i64)> = None;
    for (i, &v) in values.iter().enumerate() {
        if best.is_none_or(|(_, b)| v > b) {
            best = Some((i, v));
        }
    }
    best.map(|(i, _)| i)
}

/// The released RTL's arithmetic, read from its Verilog (module names given).
pub mod released_rtl {
    use super::SAMPLES_PER_CYCLE;

    /// The accumulator width: 16 bits, wrapping (`integration`).
    pub const ACC_BITS: u32 = 16;

    /// The `optical_loss` register as the RTL's `loss_compensator` reads it: an
    /// integer gain that multiplies the extracted 8-bit product.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub struct LossGain(pub u16);

    impl LossGain {
        /// Gain 1: the product unchanged.
        pub const UNITY: LossGain = LossGain(1);

        /// `(product · gain) mod 2^16`: the RTL keeps the low 16 bits.
        pub fn apply(self, product: u8) -> u16 {
            (u32::from(product) * u32::from(self.0)) as u16
        }
    }

    /// A term of the lane sum (`integration`): the gained product when the sign
    /// bit is 1 (positive), else its negation, modulo 2^16.
    pub fn signed_term(gained: u16, sign_bit: bool) -> u16 {
        if sign_bit {
            gained
        } else {
            0u16.wrapping_sub(gained)
        }
    }

    /// The lane sum of 16 terms, modulo 2^16 (the RTL's 16-bit adder tree).
    pub fn lane_sum(
        gained: &[u16; SAMPLES_PER_CYCLE],
        sign_bits: &[bool; SAMPLES_PER_CYCLE],
    ) -> u16 {
        gained
            .iter()
            .zip(sign_bits)
            .fold(0u16, |acc, (&g, &s)| acc.wrapping_add(signed_term(g, s)))
    }

    /// Accumulates lane sums from 0 in 16 bits, wrapping; returns the result and
    /// how many additions wrapped (left the signed 16-bit range).
    pub fn accumulate(lane_sums: &[u16]) -> (u16, u64) {
        lane_sums.iter().fold((0u16, 0u64), |(acc, wraps), &x| {
            let (_, wrapped) = (acc as i16).overflowing_add(x as i16);
            (acc.wrapping_add(x), wraps + u64::from(wrapped))
        })
    }

    /// The RTL's `relu`: 0 when bit 15 is set, else the value.
    pub fn relu(acc: u16) -> u16 {
        if acc & 0x8000 != 0 {
            0
        } else {
            acc
        }
    }

    /// A logit: the accumulator read as signed 16 bits.
    pub fn logit(acc: u16) -> i64 {
        i64::from(acc as i16)
    }

    /// The power-of-two shift the RTL's `normalization` picks for a layer.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Shift {
        /// Shift left by this many bits (the largest value is below 128).
        Left(u32),
        /// Shift right by this many bits.
        Right(u32),
    }

    /// The shift that brings the top set bit *i* of `max` to bit 7: left by
    /// 7 − *i* for *i* < 8, else right by *i* − 7; `None` when `max` is 0.
    pub fn layer_shift(max: u16) -> Option<Shift> {
        let i = 15u32
            .checked_sub(max.leading_zeros())
            .filter(|_| max != 0)?;
        Some(if i < 8 {
            Shift::Left(7 - i)
        } else {
            Shift::Right(i - 7)
        })
    }

    /// A hidden layer's 8-bit activations from its ReLU outputs: every value
    /// shifted by [`layer_shift`] of the largest, low 8 bits (all 0 when every
    /// value is 0); and the shift used.
    pub fn normalize_layer(values: &[u16]) -> (Vec<u8>, Option<Shift>) {
        let max = values.iter().copied().max().unwrap_or(0);
        let shift = layer_shift(max);
        let acts = values
            .iter()
            .map(|&v| match shift {
                Some(Shift::Left(k)) => (u32::from(v) << k) as u8,
                Some(Shift::Right(k)) => (v >> k) as u8,
                None => 0,
            })
            .collect();
        (acts, shift)
    }

    /// The preamble detector's mean (`averager_tree`): four stages, each adding
    /// pairs at full precision and halving with truncation.
    pub fn halving_mean(samples: &[u16; SAMPLES_PER_CYCLE]) -> u16 {
        let mut level: Vec<u32> = samples.iter().map(|&s| u32::from(s)).collect();
        while level.len() > 1 {
            level = level.chunks(2).map(|p| (p[0] + p[1]) / 2).collect();
        }
        level[0] as u16
    }

    /// The detector's mask with [`halving_mean`]: bit *i* = sample *i* above it.
    pub fn halving_mask(samples: &[u16; SAMPLES_PER_CYCLE]) -> u16 {
        let mean = halving_mean(samples);
        mask_above(samples, |s| u32::from(s) > u32::from(mean))
    }

    /// wirespeed's mask: bit *i* = sample *i* above the exact mean
    /// (`16 · sample > sum`).
    pub fn exact_mask(samples: &[u16; SAMPLES_PER_CYCLE]) -> u16 {
        let sum: u32 = samples.iter().map(|&s| u32::from(s)).sum();
        mask_above(samples, |s| 16 * u32::from(s) > sum)
    }

    fn mask_above(samples: &[u16; SAMPLES_PER_CYCLE], above: impl Fn(u16) -> bool) -> u16 {
        samples
            .iter()
            .enumerate()
            .fold(0, |m, (i, &s)| m | (u16::from(above(s)) << i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_round_trip_and_pack() {
        for v in 0..=255u8 {
            assert_eq!(decode_sample(encode_sample(v)), v);
        }
        assert_eq!(encode_sample(255), 0x7F80);
        let samples: [u16; 16] = std::array::from_fn(|i| encode_sample(i as u8 * 17));
        let words = pack_bus(&samples);
        assert_eq!(words[0] & 0xFFFF, 0);
        assert_eq!((words[0] >> 16) & 0xFFFF, u64::from(encode_sample(17)));
        assert_eq!(unpack_bus(&words), samples);
    }

    #[test]
    fn loss_register_rounds_half_up() {
        assert_eq!(OpticalLoss::from_factor(1.0), Ok(OpticalLoss::UNITY));
        assert_eq!(OpticalLoss::from_factor(1.25), Ok(OpticalLoss(0x0140)));
        assert!(OpticalLoss::from_factor(0.0).is_err());
        assert!(OpticalLoss::from_factor(300.0).is_err());
        // 3 · 0x80 = 0x180 → (0x180 + 0x80) >> 8 = 2 (half rounds up).
        assert_eq!(OpticalLoss(0x80).compensate(3), 2);
        assert_eq!(OpticalLoss(0x0400).compensate(0x7F80), SAMPLE_MAX);
    }
}
