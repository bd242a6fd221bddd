//! The released RTL's per-layer normalization ([`Arith::ReleasedRtl`]): the
//! activation buffer holds each hidden neuron's 16-bit ReLU output; the
//! largest value of a layer sets a power-of-two shift that brings its top bit
//! to bit 7 (a left shift when it is below bit 7), and the next layer's words
//! are shifted as they are read, giving the 8-bit activations the DACs stream.
//!
//! As the RTL's `normalization`: with the largest value's top bit at *i*, the
//! shift is left by 7 − *i* for *i* < 8, else right by *i* − 7; a layer whose
//! values are all 0 gives all-0 activations (any shift). Layer 0 reads the image
//! unshifted. Unlike the RTL, which shifts the whole 256-bit word (bits of a
//! lane move into its neighbour on a right shift), each 16-bit lane is shifted
//! on its own; the 8 bits that reach the DAC are the same.
//!
//! [`Arith::ReleasedRtl`]: crate::lightning::config::Arith::ReleasedRtl

use super::sequencer::Sequencer;
use super::Common;
use crate::dsl::{ModuleBuilder, Signal};

/// Width of a value in the released RTL's activation buffer.
pub(super) const VALUE_WIDTH: u32 = 16;
/// Width of a shift amount (0..=8).
const AMOUNT_WIDTH: u32 = 4;

/// The shift applied while reading the current layer's activations.
#[derive(Clone, Copy)]
pub(super) struct NormShift {
    /// Shift left (else right).
    pub left: Signal,
    /// Shift amount, 0..=8.
    pub amount: Signal,
}

/// The shift registers (set by [`track_layer_max`]).
pub(super) fn shift_registers(m: &mut ModuleBuilder, x: &Common) -> NormShift {
    NormShift {
        left: m.reg(x.clk, "norm_left_q", 1),
        amount: m.reg(x.clk, "norm_amount_q", AMOUNT_WIDTH),
    }
}

/// A buffer word (16 lanes of 16 bits) to 16 bytes: each lane shifted by
/// `shift`, its low 8 bits kept.
pub(super) fn normalize_word(m: &mut ModuleBuilder, word: Signal, shift: NormShift) -> Signal {
    let bytes: Vec<Signal> = m
        .split_lanes(word, VALUE_WIDTH)
        .into_iter()
        .map(|v| {
            let up = m.shl_by(v, shift.amount);
            let down = m.shr_by(v, shift.amount);
            let moved = m.mux(shift.left, up, down);
            m.truncate(moved, 8)
        })
        .collect();
    m.join_lanes(&bytes)
}

/// What the layer maximum is tracked from.
pub(super) struct TrackIn<'a> {
    /// What every stage shares.
    pub common: &'a Common<'a>,
    /// The sequencer.
    pub seq: &'a Sequencer,
    /// The shift registers to set.
    pub shift: NormShift,
    /// Per core, this round's ReLU output (0 for a neuron past the outputs).
    pub values: &'a [Signal],
    /// A hidden layer's round is emitted.
    pub write: Signal,
    /// It is the layer's last round.
    pub last_round: Signal,
}

/// The running maximum of a hidden layer's values (cleared by `go`); at the
/// layer's last round the shift registers take the shift it implies, and an
/// accepted `start` resets them to "right by 0" for the image.
pub(super) fn track_layer_max(m: &mut ModuleBuilder, input: &TrackIn) {
    let (x, seq) = (input.common, input.seq);
    let layer_max = m.reg(x.clk, "layer_max_q", VALUE_WIDTH);
    let mut round_max = layer_max;
    for &v in input.values {
        let bigger = m.gt(v, round_max);
        round_max = m.mux(bigger, v, round_max);
    }
    let max_next = m.mux(input.write, round_max, layer_max);
    let zero = m.zeros(VALUE_WIDTH);
    let cleared = m.mux(seq.go, zero, max_next);
    m.set_next(layer_max, cleared);

    // Top bit i = 15 - lz: left by lz - 8 when lz >= 8, else right by 8 - lz.
    let lz = m.leading_zeros(max_next);
    let lz = m.zext(lz, AMOUNT_WIDTH + 1);
    let eight = m.lit(8, AMOUNT_WIDTH + 1);
    let left = m.ge(lz, eight);
    let up = m.sub_wrap(lz, eight);
    let down = m.sub_wrap(eight, lz);
    let amount = m.mux(left, up, down);
    let amount = m.truncate(amount, AMOUNT_WIDTH);
    let capture = m.and(input.write, input.last_round);
    let right = m.zeros(1);
    let none = m.zeros(AMOUNT_WIDTH);
    let left_kept = m.mux(capture, left, input.shift.left);
    let left_next = m.mux(seq.start_ok, right, left_kept);
    m.set_next(input.shift.left, left_next);
    let amount_kept = m.mux(capture, amount, input.shift.amount);
    let amount_next = m.mux(seq.start_ok, none, amount_kept);
    m.set_next(input.shift.amount, amount_next);
}
