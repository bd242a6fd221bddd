//! The Lightning fabric bus and the preamble patterns, shared by the DAC streamer
//! and the ADC preamble detector.
//!
//! Every stream carries [`SAMPLES`] = 16 samples of [`SAMPLE_WIDTH`] = 16 bits per
//! fabric cycle, sample *i* in bits `[16i+15:16i]`; an 8-bit value *v* travels as
//! `v << 7`. Consecutive cycles form one continuous sample sequence: sample *i* of
//! cycle *t* is sample number `16t + i` of the stream.

use crate::dsl::{ModuleBuilder, Signal};

/// Samples per fabric cycle.
pub const SAMPLES: u32 = 16;
/// Width of one sample in bits.
pub const SAMPLE_WIDTH: u32 = 16;
/// Width of one bus beat: 16 samples × 16 bits.
pub const BUS_WIDTH: u32 = SAMPLES * SAMPLE_WIDTH;
/// Width of the run-time `preamble_length` inputs (0..=255 cycles).
pub const PREAMBLE_LENGTH_WIDTH: u32 = 8;
/// The preamble length a control plane should program by default (cycles).
pub const DEFAULT_PREAMBLE_LENGTH: u32 = 10;
/// Largest whole-cycle operand delay.
pub const MAX_DELAY: u32 = 63;
/// Width of a run-time delay input (0..=63 cycles).
pub const DELAY_WIDTH: u32 = 6;
/// Width of a run-time intra-cycle shift input (0..=15 samples).
pub const SHIFT_WIDTH: u32 = 4;
/// A weight-preamble sample that carries 255 (`255 << 7`).
pub const WEIGHT_PREAMBLE_HIGH: u16 = 255 << 7;
/// An activation-preamble sample.
pub const ACTIVATION_PREAMBLE_SAMPLE: u16 = 0xFFFF;
/// The mask (bit *i* = sample *i* above the cycle's mean) of an aligned preamble
/// cycle at the ADC: samples 0–7 high, 8–15 low.
pub const PREAMBLE_MASK: u16 = 0x00FF;

/// The weight preamble of one cycle: samples 0–7 = `255 << 7`, samples 8–15 = 0.
pub fn weight_preamble() -> [u16; SAMPLES as usize] {
    std::array::from_fn(|i| if i < 8 { WEIGHT_PREAMBLE_HIGH } else { 0 })
}

/// The activation preamble of one cycle: every sample `0xFFFF`.
pub fn activation_preamble() -> [u16; SAMPLES as usize] {
    [ACTIVATION_PREAMBLE_SAMPLE; SAMPLES as usize]
}

/// A 256-bit constant from 16 samples (sample 0 in the low bits).
pub(crate) fn bus_constant(m: &mut ModuleBuilder, samples: &[u16; SAMPLES as usize]) -> Signal {
    let lanes: Vec<Signal> = samples
        .iter()
        .map(|&s| m.lit(u64::from(s), SAMPLE_WIDTH))
        .collect();
    m.join_lanes(&lanes)
}

/// The 16 consecutive samples that start at sample `k` (0..=15) of `earlier`,
/// continuing into `later` (the cycle after it): sample *i* of the result is
/// `earlier[i + k]` for `i + k < 16`, else `later[i + k − 16]`. `k` is a 4-bit
/// signal; the result is the low 256 bits of `{later, earlier} >> 16k`.
pub(crate) fn sample_window(
    m: &mut ModuleBuilder,
    earlier: Signal,
    later: Signal,
    k: Signal,
) -> Signal {
    let both = m.concat(&[later, earlier]);
    let four = m.zeros(4);
    let bits = m.concat(&[k, four]);
    let shifted = m.shr_by(both, bits);
    m.truncate(shifted, BUS_WIDTH)
}
