//! ADC decode and integration for one photonic core (spec step 6): loss
//! compensation, 8-bit product, weight sign, 16-lane adder tree, a saturating
//! accumulator, the integration window of a count-action unit, and ReLU with
//! power-of-two normalization for hidden layers.
//!
//! The arithmetic is the contract of `testbench::lightning::arith`, bit for bit.
//!
//! # Semantics (cycle-exact)
//!
//! A word is **accepted** in cycle *c* when `in_valid` = 1; `in_data` carries its
//! 16 ADC samples and `signs` bit *i* the weight sign of lane *i* (1 = subtract).
//! Per lane: `s' = (s · optical_loss + 128) >> 8`, product = `min((s' + 64) >> 7, 255)`
//! (the compensated sample rounded to the nearest 8-bit value, so a loss register
//! near `1 / transmission` decodes every product exactly),
//! term = ±product; the lane sum is the sum of the 16 terms.
//!
//! The accepted word's lane sum is added, two cycles later (cycle *c* + 2), to a
//! signed `acc_width`-bit accumulator that saturates at its bounds on every
//! addition. A count-action unit counts accepted words (events = the valid flag
//! of that stage, target = `cycles_per_output`): when it fires, the saturated sum
//! is **emitted** as one neuron and the accumulator restarts at 0. The emitted
//! neuron appears in cycle *c* + 3: `out_valid` = 1 for one cycle, `out_acc` = the
//! signed accumulator (the raw value: a logit), `out_act` =
//! `clamp(max(acc, 0) >> shift, 0, 255)` (a hidden activation). `shift` and
//! `cycles_per_output` are sampled in the accumulate cycle (*c* + 2).
//!
//! `clear` = 1 in cycle *x* zeroes the accumulator and the unit's count at the
//! end of cycle *x* (a word accumulating in cycle *x* is dropped, and nothing is
//! emitted in cycle *x* + 1); words accepted from cycle *x* − 1 on belong to the new
//! window. `cycles_per_output` = 0 disables emission (the count-action rule).
//!
//! After reset the accumulator and the count are 0 and `out_valid` is 0.
//!
//! # The released RTL's contract ([`Arith::ReleasedRtl`])
//!
//! Module `lightning_decode_rtl_t{target_width}`, the same ports and timing
//! except that there is no `shift` input and `out_act` is 16 bits. Per lane:
//! product = `s[14:7]`, gain = `(product · optical_loss) mod 2^16` (an integer
//! gain, as the RTL's `loss_compensator`), term = `+gain` when the sign bit is
//! 1, else `−gain` (the RTL's `integration`: 1 = positive), all modulo 2^16; the
//! lane sum and the 16-bit accumulator wrap (`acc_width` must be 16). `out_acc`
//! = the wrapped accumulator (a logit when read as signed), `out_act` = the
//! RTL's `relu`: 0 when bit 15 is set, else the accumulator (normalization
//! happens later, per layer, in the datapath).

use super::bus::{BUS_WIDTH, SAMPLES, SAMPLE_WIDTH};
use super::config::{Arith, RELEASED_RTL_ACC_WIDTH};
use crate::blocks::count_action::{count_action, CountActionConfig};
use crate::dsl::{Domain, ModuleBuilder, Signal};
use crate::ir::{HdlError, Module, ResetPolarity};

/// Narrowest accumulator: one lane sum (±4080) must fit.
pub const ACC_WIDTH_MIN: u32 = 13;
/// Widest accumulator.
pub const ACC_WIDTH_MAX: u32 = 48;
/// Width of the `optical_loss` input (unsigned Q8.8; `0x0100` = 1.0).
pub const LOSS_WIDTH: u32 = 16;
/// Width of the `shift` input (normalization shift 0..=31).
pub const NORM_SHIFT_WIDTH: u32 = 5;
/// Width of a signed lane sum (−4080..=4080).
const LANE_SUM_WIDTH: u32 = 13;
/// Cycles from an accepted word to its emitted neuron (`out_valid`).
pub const DECODE_LATENCY: u32 = 3;

/// Shape of a decode unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DecodeConfig {
    /// Accumulator width in bits (`ACC_WIDTH_MIN..=ACC_WIDTH_MAX`).
    pub acc_width: u32,
    /// Width of the `cycles_per_output` target (1..=32 bits).
    pub target_width: u32,
    /// The arithmetic contract ([`Arith::ReleasedRtl`] needs `acc_width` 16).
    pub arith: Arith,
}

impl Default for DecodeConfig {
    /// The released RTL's 16-bit accumulator; up to 65535 cycles per neuron.
    fn default() -> Self {
        DecodeConfig {
            acc_width: 16,
            target_width: 16,
            arith: Arith::Wirespeed,
        }
    }
}

/// Generates `lightning_decode_a{acc_width}_t{target_width}` (wirespeed's
/// contract) or `lightning_decode_rtl_t{target_width}` (the released RTL's).
///
/// Ports: `clk`, `rst` (active high); inputs `in_valid`, `in_data[256]`,
/// `signs[16]`, `optical_loss[16]`, `cycles_per_output[target_width]`,
/// `shift[5]`, `clear`; registered outputs `out_valid`, `out_acc[acc_width]`,
/// `out_act[8]`. See the module docs for the cycle-level contract.
pub fn decode(cfg: &DecodeConfig) -> Result<Module, HdlError> {
    const NAME: &str = "lightning_decode";
    let w = cfg.acc_width;
    if !(ACC_WIDTH_MIN..=ACC_WIDTH_MAX).contains(&w) {
        return Err(HdlError::parameter(
            NAME,
            "acc_width",
            format!("{w} is not in {ACC_WIDTH_MIN}..={ACC_WIDTH_MAX} (a lane sum needs 13 bits)"),
        ));
    }
    let tw = cfg.target_width;
    if !(1..=32).contains(&tw) {
        return Err(HdlError::parameter(
            NAME,
            "target_width",
            format!("{tw} is not in 1..=32"),
        ));
    }
    if cfg.arith == Arith::ReleasedRtl && w != RELEASED_RTL_ACC_WIDTH {
        return Err(HdlError::parameter(
            NAME,
            "acc_width",
            format!("{w} bits, but arith released-rtl uses a {RELEASED_RTL_ACC_WIDTH}-bit wrapping accumulator"),
        ));
    }
    let window_unit = count_action(&CountActionConfig {
        events: 1,
        count_width: tw,
    })?;
    if cfg.arith == Arith::ReleasedRtl {
        return released_rtl_decode(tw, &window_unit);
    }

    let mut m = ModuleBuilder::new(&format!("{NAME}_a{w}_t{tw}"));
    let clk = m.domain("clk", "clk", Some("rst"), ResetPolarity::ActiveHigh);
    let in_valid = m.input("in_valid", 1);
    let in_data = m.input("in_data", BUS_WIDTH);
    let signs = m.input("signs", SAMPLES);
    let loss = m.input("optical_loss", LOSS_WIDTH);
    let target = m.input("cycles_per_output", tw);
    let shift = m.input("shift", NORM_SHIFT_WIDTH);
    let clear = m.input("clear", 1);
    let not_clear = m.not(clear);

    // Stage 1: loss compensation and the 8-bit product of every lane.
    let products: Vec<Signal> = m
        .split_lanes(in_data, SAMPLE_WIDTH)
        .into_iter()
        .enumerate()
        .map(|(i, s)| m.scope(&format!("lane{i}"), |m| compensated_product(m, s, loss)))
        .collect();
    let products = m.join_lanes(&products);
    let v1 = m.register(clk, "s1_valid", in_valid);
    let p1 = m.reg_no_reset(clk, "s1_products", 8 * SAMPLES);
    m.set_next(p1, products);
    let signs1 = m.reg_no_reset(clk, "s1_signs", SAMPLES);
    m.set_next(signs1, signs);

    // Stage 2: signed terms and the lane sum.
    let mut terms = Vec::new();
    for (i, p) in m.split_lanes(p1, 8).into_iter().enumerate() {
        let p = m.zext(p, LANE_SUM_WIDTH);
        let zero = m.zeros(LANE_SUM_WIDTH);
        let neg = m.sub_wrap(zero, p);
        let negative = m.bit(signs1, i as u32);
        let term = m.mux(negative, neg, p);
        terms.push(m.named(&format!("s2_term{i}"), term));
    }
    let sum = m.add_tree_wrap(&terms);
    let v2 = m.register(clk, "s2_valid", v1);
    let v2 = m.and(v2, not_clear);
    let sum2 = m.reg_no_reset(clk, "s2_sum", LANE_SUM_WIDTH);
    m.set_next(sum2, sum);

    // Stage 3: saturating accumulation, the integration window, the neuron.
    let acc = m.reg(clk, "acc_q", w);
    let acc_x = m.sext(acc, w + 1);
    let sum_x = m.sext(sum2, w + 1);
    let total = m.add_wrap(acc_x, sum_x);
    let sat = saturate(&mut m, total, w);
    let added = m.mux(v2, sat, acc);

    let unit = m.instance("u_window", &window_unit);
    m.bind_domain(unit, "clk", clk);
    let zero = m.lit(0, 1);
    let one = m.lit(1, 1);
    m.connect(unit, "events", v2);
    m.connect(unit, "enable", one);
    m.connect(unit, "clear", clear);
    m.connect(unit, "one_shot", zero);
    m.connect(unit, "target", target);
    let emit = m.instance_output(unit, "action");
    let emit = m.named("emit", emit);

    let zero_acc = m.zeros(w);
    let restart = m.or(emit, clear);
    let acc_next = m.mux(restart, zero_acc, added);
    m.set_next(acc, acc_next);

    let act = normalize(&mut m, added, shift);
    let out_valid = m.register(clk, "out_valid_q", emit);
    let out_acc = m.register_en(clk, "out_acc_q", added, emit);
    let out_act = m.register_en(clk, "out_act_q", act, emit);
    m.output("out_valid", out_valid);
    m.output("out_acc", out_acc);
    m.output("out_act", out_act);
    m.finish()
}

/// The released RTL's decode (see the module docs): integer loss gain on the
/// 8-bit product, sign bit 1 = positive, everything modulo 2^16, ReLU on bit 15.
fn released_rtl_decode(tw: u32, window_unit: &Module) -> Result<Module, HdlError> {
    const W: u32 = RELEASED_RTL_ACC_WIDTH;
    let mut m = ModuleBuilder::new(&format!("lightning_decode_rtl_t{tw}"));
    let clk = m.domain("clk", "clk", Some("rst"), ResetPolarity::ActiveHigh);
    let in_valid = m.input("in_valid", 1);
    let in_data = m.input("in_data", BUS_WIDTH);
    let signs = m.input("signs", SAMPLES);
    let gain = m.input("optical_loss", LOSS_WIDTH);
    let target = m.input("cycles_per_output", tw);
    let clear = m.input("clear", 1);
    let not_clear = m.not(clear);

    // Stage 1: the 8-bit product times the integer gain, modulo 2^16.
    let gains: Vec<Signal> = m
        .split_lanes(in_data, SAMPLE_WIDTH)
        .into_iter()
        .map(|s| {
            let product = m.slice(s, 7, 8);
            let scaled = m.mul(product, gain);
            m.truncate(scaled, W)
        })
        .collect();
    let gains = m.join_lanes(&gains);
    let v1 = m.register(clk, "s1_valid", in_valid);
    let g1 = m.reg_no_reset(clk, "s1_gains", W * SAMPLES);
    m.set_next(g1, gains);
    let signs1 = m.reg_no_reset(clk, "s1_signs", SAMPLES);
    m.set_next(signs1, signs);

    // Stage 2: sign bit 1 = positive; the wrapping lane sum.
    let mut terms = Vec::new();
    for (i, g) in m.split_lanes(g1, W).into_iter().enumerate() {
        let zero = m.zeros(W);
        let neg = m.sub_wrap(zero, g);
        let positive = m.bit(signs1, i as u32);
        terms.push(m.mux(positive, g, neg));
    }
    let sum = m.add_tree_wrap(&terms);
    let v2 = m.register(clk, "s2_valid", v1);
    let v2 = m.and(v2, not_clear);
    let sum2 = m.reg_no_reset(clk, "s2_sum", W);
    m.set_next(sum2, sum);

    // Stage 3: the wrapping accumulator, the window, ReLU on bit 15.
    let acc = m.reg(clk, "acc_q", W);
    let total = m.add_wrap(acc, sum2);
    let added = m.mux(v2, total, acc);
    let emit = integration_window(&mut m, clk, window_unit, v2, clear, target);
    let zero_acc = m.zeros(W);
    let restart = m.or(emit, clear);
    let acc_next = m.mux(restart, zero_acc, added);
    m.set_next(acc, acc_next);
    let negative = m.msb(added);
    let relu = m.mux(negative, zero_acc, added);
    let out_valid = m.register(clk, "out_valid_q", emit);
    let out_acc = m.register_en(clk, "out_acc_q", added, emit);
    let out_act = m.register_en(clk, "out_act_q", relu, emit);
    m.output("out_valid", out_valid);
    m.output("out_acc", out_acc);
    m.output("out_act", out_act);
    m.finish()
}

/// The count-action integration window: counts `events`, fires (`emit`) every
/// `target` of them; `clear` restarts it.
fn integration_window(
    m: &mut ModuleBuilder,
    clk: Domain,
    window_unit: &Module,
    events: Signal,
    clear: Signal,
    target: Signal,
) -> Signal {
    let unit = m.instance("u_window", window_unit);
    m.bind_domain(unit, "clk", clk);
    let zero = m.lit(0, 1);
    let one = m.lit(1, 1);
    m.connect(unit, "events", events);
    m.connect(unit, "enable", one);
    m.connect(unit, "clear", clear);
    m.connect(unit, "one_shot", zero);
    m.connect(unit, "target", target);
    let emit = m.instance_output(unit, "action");
    m.named("emit", emit)
}

/// `min((((s · loss + 128) >> 8) + 64) >> 7, 255)`: the compensated sample
/// rounded to the nearest product (both roundings folded into one constant,
/// `128 + 64 · 256`).
fn compensated_product(m: &mut ModuleBuilder, sample: Signal, loss: Signal) -> Signal {
    let scaled = m.mul(sample, loss); // 32 bits
    let half = m.lit(0x80 + (0x40 << 8), 32);
    let rounded = m.add(scaled, half); // 33 bits
    let rounded = m.named("rounded", rounded);
    let shifted = m.slice(rounded, 8, 25);
    let shifted = m.named("shifted", shifted);
    let high = m.slice(shifted, 15, 10);
    let over = m.reduce_or(high);
    let product = m.slice(shifted, 7, 8);
    let max = m.ones(8);
    let product = m.mux(over, max, product);
    m.named("product", product)
}

/// Clamps a signed `w + 1`-bit value into `w` bits signed.
fn saturate(m: &mut ModuleBuilder, value: Signal, w: u32) -> Signal {
    let top = m.msb(value);
    let next = m.bit(value, w - 1);
    let overflow = m.xor(top, next);
    let low = m.truncate(value, w);
    let ones = m.ones(w - 1);
    let zero = m.lit(0, 1);
    let max = m.concat(&[zero, ones]);
    let one = m.lit(1, 1);
    let zeros = m.zeros(w - 1);
    let min = m.concat(&[one, zeros]);
    let bound = m.mux(top, min, max);
    m.mux(overflow, bound, low)
}

/// `clamp(max(acc, 0) >> shift, 0, 255)` of a signed accumulator.
fn normalize(m: &mut ModuleBuilder, acc: Signal, shift: Signal) -> Signal {
    let w = acc.width();
    let negative = m.msb(acc);
    let shifted = m.shr_by(acc, shift);
    let high = m.slice(shifted, 8, w - 8);
    let big = m.reduce_or(high);
    let low = m.truncate(shifted, 8);
    let max = m.ones(8);
    let clamped = m.mux(big, max, low);
    let zero = m.zeros(8);
    m.mux(negative, zero, clamped)
}
