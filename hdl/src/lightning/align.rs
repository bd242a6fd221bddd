//! Operand alignment of one DAC stream: a run-time whole-cycle delay (0–63 cycles)
//! and a run-time intra-cycle sample shift (0–15 samples), so that the activation
//! and the weight of one product meet in the modulators in the same sample.
//!
//! # Semantics (cycle-exact)
//!
//! The input is a continuous stream: in every cycle *n* a word `X[n]` = (`in_valid`,
//! `in_data`); a cycle with `in_valid` = 0 should carry zero samples (an idle DAC),
//! and the word is stored as given either way. Words before the first cycle after
//! reset count as idle (valid 0, all samples 0), whatever the memory held.
//!
//! With `d` = `delay` and `s` = `shift` sampled in cycle *t* − 2, the output of
//! cycle *t* is built from the two words `A = X[t − 3 − d]` and `B = X[t − 4 − d]`
//! (each idle if `flush` was 1 in its cycle or in any cycle after it up to
//! *t* − 1, see below):
//!
//! - `out_data` sample *i* = `A[i − s]` for `i ≥ s`, and `B[16 + i − s]` for `i < s`:
//!   **a shift by `s` moves sample *i* to position *i* + *s* and carries the top `s`
//!   samples of a cycle into the next cycle** (on the continuous sample sequence
//!   `x[16n + i] = X[n][i]`, `out[16t + i] = x[16(t − 3 − d) + i − s]`);
//! - `out_valid` = `A.valid | (s != 0 & B.valid)`: 1 when any output sample comes
//!   from a valid input cycle.
//!
//! **Latency** 3 + `d` cycles: the word of cycle *n* leaves, unshifted, in cycle
//! *n* + 3 + `d`. A change of `delay` or `shift` takes effect on the output two
//! cycles later, exactly by the formula above (there is no transient beyond it).
//!
//! **Flush.** `flush` = 1 in cycle *f* drops every word of cycle *f* and before:
//! from cycle *f* + 1 on, they leave as idle words (valid 0, samples 0), as words
//! from before reset do. Words of later cycles leave as usual, so a stream whose
//! source stopped mid-word (an aborted inference) leaves nothing behind in the
//! DAC, at any `delay`, once its owner flushes it.
//!
//! # Structure
//! The words are written into a 128 × 257-bit circular buffer (block RAM) at the
//! write pointer `n mod 128`; two synchronous read ports fetch `X[n − 1 − d]` and
//! `X[n − 2 − d]` (never the word being written), an age counter (cleared by
//! `flush`) marks words from before reset or the last flush as idle, and a
//! registered 512-bit barrel shift applies `s`; `flush` also clears the taps'
//! and the output's registers.

use super::bus::{BUS_WIDTH, DELAY_WIDTH, SHIFT_WIDTH};
use crate::dsl::ModuleBuilder;
use crate::ir::{HdlError, Module, ResetPolarity};

/// Depth of the circular history buffer (words; ≥ `MAX_DELAY + 3`).
const HISTORY: u32 = 128;
/// Width of the history pointer and of the age counter.
const PTR_WIDTH: u32 = 7;
/// The aligner's latency with `delay` = 0 (cycles).
pub const ALIGN_LATENCY: u32 = 3;

/// Generates `lightning_align`: one stream's whole-cycle delay and sample shift.
///
/// Ports: `clk`, `rst` (active high); inputs `in_valid`, `in_data[256]`,
/// `delay[6]` (0..=63 cycles), `shift[4]` (0..=15 samples), `flush`; registered outputs
/// `out_valid`, `out_data[256]`. See the module docs for the cycle-level contract.
pub fn operand_align() -> Result<Module, HdlError> {
    let mut m = ModuleBuilder::new("lightning_align");
    let clk = m.domain("clk", "clk", Some("rst"), ResetPolarity::ActiveHigh);
    let in_valid = m.input("in_valid", 1);
    let in_data = m.input("in_data", BUS_WIDTH);
    let delay = m.input("delay", DELAY_WIDTH);
    let shift = m.input("shift", SHIFT_WIDTH);
    let flush = m.input("flush", 1);
    let kept = m.not(flush);

    // History: word n at address n mod 128.
    let wp = m.reg(clk, "wr_ptr", PTR_WIDTH);
    let wp_next = m.add_const_wrap(wp, 1);
    m.set_next(wp, wp_next);
    let mem = m.memory("history", BUS_WIDTH + 1, HISTORY, None);
    let word = m.concat(&[in_valid, in_data]);
    let one = m.lit(1, 1);
    m.mem_write(mem, clk, wp, word, one);

    // Read X[n-1-d] and X[n-2-d].
    let d = m.zext(delay, PTR_WIDTH);
    let back_a = m.add_const_wrap(d, 1);
    let back_b = m.add_const_wrap(d, 2);
    let addr_a = m.sub_wrap(wp, back_a);
    let addr_b = m.sub_wrap(wp, back_b);
    let rd_a = m.mem_read(mem, clk, "tap_a", addr_a, None);
    let rd_b = m.mem_read(mem, clk, "tap_b", addr_b, None);

    // Age: words written since reset or the last flush (saturating); a tap older
    // than that is idle.
    let age = m.reg(clk, "age", PTR_WIDTH);
    let age_full = m.reduce_and(age);
    let age_inc = m.add_const_wrap(age, 1);
    let age_kept = m.mux(age_full, age, age_inc);
    let age_zero = m.zeros(PTR_WIDTH);
    let age_next = m.mux(flush, age_zero, age_kept);
    m.set_next(age, age_next);
    let ok_a = m.ge(age, back_a);
    let ok_b = m.ge(age, back_b);
    let ok_a = m.and(ok_a, kept);
    let ok_b = m.and(ok_b, kept);
    let ok_a_q = m.register(clk, "tap_a_ok", ok_a);
    let ok_b_q = m.register(clk, "tap_b_ok", ok_b);
    let shift_q = m.register(clk, "shift_q", shift);

    // Combine: upper half of {A, B} << 16s.
    let idle = m.zeros(BUS_WIDTH + 1);
    let a = m.mux(ok_a_q, rd_a, idle);
    let b = m.mux(ok_b_q, rd_b, idle);
    let a_valid = m.msb(a);
    let b_valid = m.msb(b);
    let a_data = m.truncate(a, BUS_WIDTH);
    let b_data = m.truncate(b, BUS_WIDTH);
    let both = m.concat(&[a_data, b_data]);
    let four = m.zeros(4);
    let amount = m.concat(&[shift_q, four]);
    let shifted = m.shl_by(both, amount);
    let data = m.slice(shifted, BUS_WIDTH, BUS_WIDTH);
    let carries = m.reduce_or(shift_q);
    let b_counts = m.and(carries, b_valid);
    let valid = m.or(a_valid, b_counts);
    let valid = m.and(valid, kept);
    let no_data = m.zeros(BUS_WIDTH);
    let data = m.mux(flush, no_data, data);

    let out_valid = m.register(clk, "out_valid_q", valid);
    let out_data = m.register(clk, "out_data_q", data);
    m.output("out_valid", out_valid);
    m.output("out_data", out_data);
    m.finish()
}
