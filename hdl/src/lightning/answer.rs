//! The answer a host wants from the last layer: the class (argmax) and a correct
//! log-softmax of the logits, in fixed point, from the datapath's logit stream.
//!
//! The authors' released RTL ends in a broken log-softmax (it compares
//! overlapping lane pairs, never looks at lanes 6–9 and adds where it should take
//! the maximum); this block replaces it.
//!
//! # Interface (C = `cores`, IW = `index_width`, W = `acc_width`)
//!
//! Clock `clk`, reset `rst` (active high). Inputs:
//! - `clear`: a new inference starts: every stored logit becomes 0, a computation
//!   in progress is abandoned, `busy`, `class_valid`, `done` and `lsm_valid`
//!   fall at the next edge. Priority over everything else.
//! - `logit_valid[C]`, `logit_index[C × IW]`, `logit_data[C × W]`: the datapath's
//!   logit stream, wired as it is emitted (field *c* of each bus is core *c*;
//!   `logit_data` fields are signed). Every valid field with an index below
//!   `logits` stores its value at that index (indices ≥ `logits` are ignored; if
//!   two fields of a cycle carry the same index the higher field wins). Logits
//!   are taken while `busy` = 0, including the `last` cycle; a logit index that
//!   did not arrive since `clear` counts as 0. No back-pressure.
//! - `last`: one-cycle strobe after the final logit (the datapath's `done`
//!   rising). While `busy` = 0 it starts a computation; while busy it is ignored.
//! - `scale_shift[scale_width]`: the softmax temperature *s*, sampled in the
//!   `last` cycle: the softmax is taken over *x*ᵢ · 2⁻ˢ.
//!
//! Outputs (all registered):
//! - `busy`: 1 from the cycle after `last` until `done` rises;
//! - `class_valid` (level), `class_index[IW]`: the index of the largest logit (ties:
//!   the smallest index), and `max_logit[W]`, its value; valid from `N` + 1
//!   cycles after `last` until `clear` or the next `last`;
//! - `lsm_valid`, `lsm_index[IW]`, `lsm_data[32]`: one log-softmax value per
//!   cycle, indices 0, 1, …, N − 1 on consecutive cycles;
//! - `done` (level): the last `lsm` beat has left; 1 until `clear` or the next
//!   `last`.
//!
//! # Timing
//!
//! With N = `logits` and `last` in cycle *T*: `class_valid` is 1 from cycle
//! *T* + N + 1, beat *i* of the log-softmax stream appears in cycle
//! *T* + 2N + 8 + *i*, and `done` is 1 from cycle *T* + [`answer_latency`]`(N)` =
//! *T* + 3N + 8 (N = 10: 38 cycles, N = 64: 200 cycles).
//!
//! # Arithmetic (bit-exact contract: `testbench::lightning::answer`)
//!
//! The logits sit in a rotating register bank; three passes read them in index
//! order, one per cycle.
//! 1. **Max**: `max` = the largest logit, `class_index` its first index.
//! 2. **Sum**: per logit, `t` = ⌊(x − max) · 2⁸⁻ˢ⌋, the scaled difference in Q.8
//!    nats (≤ 0). If −t ≥ 2¹² (a difference of 16 nats or more) the term is 0;
//!    otherwise `u` = ⌊(−t) · 94548 / 2¹⁶⌋ (log₂e in Q.16: −t in Q.8 log₂ units)
//!    and term = ⌊`EXP2[u mod 256]` / 2^⌊u / 256⌋⌋ with `EXP2[f]` =
//!    round(2¹⁶ · 2^(−f/256)) (a 256-word table). `S` = Σ terms (Q.16, 23 bits;
//!    the max contributes exactly 2¹⁶, so 2¹⁶ ≤ S < 2²³).
//! 3. **ln**: with `p` the position of S's leading one, k = p − 16 and `j` the 8
//!    bits below the leading one, L16 = k · 45426 + `LN[j]` (ln 2 in Q.16 and
//!    `LN[j]` = round(2¹⁶ · ln(1 + (j + ½)/256))), `L` = ⌊(L16 + 128) / 256⌋
//!    (ln S in Q.8 nats).
//! 4. **Out**: `lsm_data`ᵢ = t − L, saturated to 32 bits: **signed Q23.8 nats**
//!    (natural log; value / 256), at least −2²³ nats.
//!
//! **Accuracy:** |`lsm_data`ᵢ / 256 − log_softmaxᵢ| ≤ 1/32 nat against the exact
//! real value of x · 2⁻ˢ − max − ln Σ exp((xⱼ − max) · 2⁻ˢ) (clamped at −2²³),
//! for every W, s and N ≤ 64 (the error budget: flooring t, ≤ 1/256 in the output
//! and in each term; u's floor, ≤ ln2/256; the terms' truncation, ≤ N / 2¹⁶
//! relative; the ln table's mantissa, ≤ 1/512; rounding L, ≤ 1/512).

use super::decode::{ACC_WIDTH_MAX, ACC_WIDTH_MIN};
use crate::bits::Bits;
use crate::dsl::{bits_for, Domain, ModuleBuilder, Signal};
use crate::ir::{HdlError, Module, ResetPolarity};

/// Module name used in parameter errors.
const NAME: &str = "lightning_answer";
/// Largest number of photonic cores (fields of the logit stream).
pub const MAX_CORES: u32 = 8;
/// Largest number of logits.
pub const MAX_LOGITS: u32 = 64;
/// Widest `logit_index` field and `class_index`.
pub const MAX_INDEX_WIDTH: u32 = 32;
/// Widest `scale_shift` input (shifts up to 63).
pub const MAX_SCALE_WIDTH: u32 = 6;
/// Width of `lsm_data`: signed Q23.8 nats.
pub const LSM_WIDTH: u32 = 32;
/// Fractional bits of `lsm_data` and of the internal scaled differences.
pub const LSM_FRAC: u32 = 8;
/// Fractional bits of the exp terms and their sum.
pub const EXP_FRAC: u32 = 16;
/// A scaled difference of at least `2^CUTOFF_BITS` Q.8 nats (16 nats) adds 0.
pub const CUTOFF_BITS: u32 = 12;
/// log₂ e in Q.16 (round(1.4426950408889634 · 2¹⁶)).
pub const LOG2E_Q16: u64 = 94548;
/// ln 2 in Q.16 (round(0.6931471805599453 · 2¹⁶)).
pub const LN2_Q16: u64 = 45426;
/// Width of the exp-table words (2¹⁶ needs 17 bits).
const EXP_WORD: u32 = EXP_FRAC + 1;
/// Width of the sum of the exp terms: up to 64 · 2¹⁶.
const SUM_WIDTH: u32 = 23;
/// Width of u: −t < 2¹² times log₂ e, in Q.8.
const U_WIDTH: u32 = 13;
/// Width of the ln-table words.
const LN_WORD: u32 = 16;
/// Width of L (ln S in Q.8 nats, < 2¹²).
const L_WIDTH: u32 = 12;

/// Shape of the answer block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AnswerConfig {
    /// Fields of the logit stream: the datapath's photonic cores (1..=8).
    pub cores: u32,
    /// Width of a logit: the datapath's accumulator width (13..=48).
    pub acc_width: u32,
    /// Number of logits N: the last layer's outputs (1..=64).
    pub logits: u32,
    /// Width of one `logit_index` field, of `class_index` and `lsm_index` (1..=32, and
    /// enough for N − 1): the datapath's `logit_index_width`.
    pub index_width: u32,
    /// Width of the run-time `scale_shift` input (1..=6; 5 gives shifts 0..=31).
    pub scale_width: u32,
}

impl Default for AnswerConfig {
    /// One core, 16-bit logits, ten classes (MNIST), 5-bit index and scale.
    fn default() -> Self {
        AnswerConfig {
            cores: 1,
            acc_width: 16,
            logits: 10,
            index_width: 5,
            scale_width: 5,
        }
    }
}

impl AnswerConfig {
    /// Checks every parameter; the error names the first bad one and why.
    pub fn validate(&self) -> Result<(), HdlError> {
        let err = |p: &str, why: String| Err(HdlError::parameter(NAME, p, why));
        if !(1..=MAX_CORES).contains(&self.cores) {
            return err("cores", format!("{} is not in 1..={MAX_CORES}", self.cores));
        }
        if !(ACC_WIDTH_MIN..=ACC_WIDTH_MAX).contains(&self.acc_width) {
            return err(
                "acc_width",
                format!(
                    "{} is not in {ACC_WIDTH_MIN}..={ACC_WIDTH_MAX}",
                    self.acc_width
                ),
            );
        }
        if !(1..=MAX_LOGITS).contains(&self.logits) {
            return err(
                "logits",
                format!("{} is not in 1..={MAX_LOGITS}", self.logits),
            );
        }
        if !(1..=MAX_INDEX_WIDTH).contains(&self.index_width) {
            return err(
                "index_width",
                format!("{} is not in 1..={MAX_INDEX_WIDTH}", self.index_width),
            );
        }
        let needed = bits_for(self.logits - 1);
        if self.index_width < needed {
            return err(
                "index_width",
                format!(
                    "{} bits cannot hold index {} of {} logits (needs {needed})",
                    self.index_width,
                    self.logits - 1,
                    self.logits
                ),
            );
        }
        if !(1..=MAX_SCALE_WIDTH).contains(&self.scale_width) {
            return err(
                "scale_width",
                format!("{} is not in 1..={MAX_SCALE_WIDTH}", self.scale_width),
            );
        }
        Ok(())
    }
}

/// Cycles from the `last` cycle to the first cycle `done` is 1, for `logits` N.
pub fn answer_latency(logits: u32) -> u32 {
    3 * logits + 8
}

/// Word `f` of the exp table: round(2¹⁶ · 2^(−f/256)), f in 0..256.
pub fn exp2_table_word(f: u32) -> u64 {
    (65536.0 * (-(f as f64) / 256.0).exp2()).round() as u64
}

/// Word `j` of the ln table: round(2¹⁶ · ln(1 + (j + ½)/256)), j in 0..256.
pub fn ln_table_word(j: u32) -> u64 {
    (65536.0 * (1.0 + (j as f64 + 0.5) / 256.0).ln()).round() as u64
}

/// Generates `lightning_answer_c{C}_n{N}_a{W}_i{IW}_s{scale_width}` for `cfg`
/// (validated first). See the module docs for the ports, timing and arithmetic.
pub fn answer(cfg: &AnswerConfig) -> Result<Module, HdlError> {
    cfg.validate()?;
    let mut m = ModuleBuilder::new(&format!(
        "{NAME}_c{}_n{}_a{}_i{}_s{}",
        cfg.cores, cfg.logits, cfg.acc_width, cfg.index_width, cfg.scale_width
    ));
    let clk = m.domain("clk", "clk", Some("rst"), ResetPolarity::ActiveHigh);
    let clear = m.input("clear", 1);
    let valid = m.input("logit_valid", cfg.cores);
    let index = m.input("logit_index", cfg.cores * cfg.index_width);
    let data = m.input("logit_data", cfg.cores * cfg.acc_width);
    let last = m.input("last", 1);
    let scale = m.input("scale_shift", cfg.scale_width);

    let ctl = control(&mut m, clk, cfg, clear, last);
    let head = bank(&mut m, clk, cfg, &ctl, valid, index, data);
    let best = max_pass(&mut m, clk, cfg, &ctl, head);
    let shift = m.reg(clk, "shift_q", cfg.scale_width);
    let shift_next = m.mux(ctl.start, scale, shift);
    m.set_next(shift, shift_next);
    let t = m.reg_no_reset(clk, "t_q", cfg.acc_width + 1 + LSM_FRAC);
    let scaled = scaled_difference(&mut m, head, best.max, shift);
    m.set_next(t, scaled);
    let sum = exp_sum(&mut m, clk, &ctl, t)?;
    let ln = log_of_sum(&mut m, clk, sum)?;
    stream_out(&mut m, clk, cfg, &ctl, t, ln);

    m.output("busy", ctl.busy);
    m.output("class_valid", best.valid);
    let class = m.zext(best.class, cfg.index_width);
    m.output("class_index", class);
    m.output("max_logit", best.max);
    m.output("done", ctl.done);
    m.finish()
}

/// The sequencer: `busy`, the step counter and the pass decodes.
struct Control {
    /// `last` accepted: a computation starts at the next edge.
    start: Signal,
    /// `clear` (forget everything).
    clear: Signal,
    /// `clear` inverted.
    not_clear: Signal,
    /// Computing.
    busy: Signal,
    /// The last beat has left.
    done: Signal,
    /// Max pass: the head is entry `pos`.
    in_max: Signal,
    /// First cycle of the max pass.
    first: Signal,
    /// Last cycle of the max pass.
    max_end: Signal,
    /// Sum pass issue cycles.
    in_sum: Signal,
    /// Output pass issue cycles.
    in_out: Signal,
    /// The bank rotates (any pass's issue cycle).
    rotate: Signal,
    /// Index of the bank's head entry.
    pos: Signal,
}

/// Steps (cycles after `last`) of the passes: max 0..N, sum N..2N, output
/// 2N + 5 .. 3N + 5; the last beat leaves in step 3N + 6.
fn control(
    m: &mut ModuleBuilder,
    clk: Domain,
    cfg: &AnswerConfig,
    clear: Signal,
    last: Signal,
) -> Control {
    let n = u64::from(cfg.logits);
    let finish_step = 3 * n + 6;
    let sw = bits_for(finish_step as u32);
    let busy = m.reg(clk, "busy_q", 1);
    let done = m.reg(clk, "done_q", 1);
    let step = m.reg(clk, "step_q", sw);
    let not_clear = m.not(clear);
    let not_busy = m.not(busy);
    let start = m.and_all(&[last, not_busy, not_clear]);
    let start = m.named("start", start);

    // Busy with a step in lo..hi (every step is at least 0).
    let range = |m: &mut ModuleBuilder, lo: u64, hi: u64| {
        let hi_c = m.lit(hi, sw);
        let below = m.lt(step, hi_c);
        if lo == 0 {
            return m.and(busy, below);
        }
        let lo_c = m.lit(lo, sw);
        let above = m.ge(step, lo_c);
        m.and_all(&[busy, above, below])
    };
    let in_max = range(m, 0, n);
    let in_sum = range(m, n, 2 * n);
    let in_out = range(m, 2 * n + 5, 3 * n + 5);
    let rotate = m.or_all(&[in_max, in_sum, in_out]);
    let at_zero = m.eq_const(step, 0);
    let first = m.and(busy, at_zero);
    let at_max_end = m.eq_const(step, n - 1);
    let max_end = m.and(busy, at_max_end);
    let at_finish = m.eq_const(step, finish_step);
    let finish = m.and(busy, at_finish);

    let zero = m.zeros(sw);
    let inc = m.add_const_wrap(step, 1);
    let step_next = m.mux(start, zero, inc);
    m.set_next(step, step_next);
    let not_finish = m.not(finish);
    let running = m.and(busy, not_finish);
    let busy_next = m.or(start, running);
    let busy_next = m.and(busy_next, not_clear);
    m.set_next(busy, busy_next);
    let not_start = m.not(start);
    let done_or = m.or(done, finish);
    let done_next = m.and_all(&[done_or, not_start, not_clear]);
    m.set_next(done, done_next);

    let pw = bits_for(cfg.logits - 1);
    let pos = m.reg(clk, "pos_q", pw);
    let at_end = m.eq_const(pos, n - 1);
    let pos_inc = m.add_const_wrap(pos, 1);
    let zero_pos = m.zeros(pw);
    let advanced = m.mux(at_end, zero_pos, pos_inc);
    let moved = m.mux(rotate, advanced, pos);
    let pos_next = m.mux(clear, zero_pos, moved);
    m.set_next(pos, pos_next);

    Control {
        start,
        clear,
        not_clear,
        busy,
        done,
        in_max,
        first,
        max_end,
        in_sum,
        in_out,
        rotate,
        pos,
    }
}

/// The rotating logit bank: entry *k* takes the logit with index *k* while idle;
/// every pass cycle shifts the bank down by one (entry 0 wraps to N − 1), so
/// after the 3N pass cycles every entry is back in place. Returns entry 0.
fn bank(
    m: &mut ModuleBuilder,
    clk: Domain,
    cfg: &AnswerConfig,
    ctl: &Control,
    valid: Signal,
    index: Signal,
    data: Signal,
) -> Signal {
    let w = cfg.acc_width;
    let indices = m.split_lanes(index, cfg.index_width);
    let values = m.split_lanes(data, w);
    let not_busy = m.not(ctl.busy);
    let entries: Vec<Signal> = (0..cfg.logits)
        .map(|k| m.reg(clk, &format!("logit{k}_q"), w))
        .collect();
    let zero = m.zeros(w);
    for (k, &entry) in entries.iter().enumerate() {
        let mut written = entry;
        for c in 0..cfg.cores as usize {
            let v = m.bit(valid, c as u32);
            let hit = m.eq_const(indices[c], k as u64);
            let take = m.and_all(&[v, hit, not_busy]);
            written = m.mux(take, values[c], written);
        }
        let written = m.named(&format!("logit{k}_written"), written);
        let next_entry = entries[(k + 1) % entries.len()];
        let rotated = m.mux(ctl.rotate, next_entry, written);
        let next = m.mux(ctl.clear, zero, rotated);
        m.set_next(entry, next);
    }
    entries[0]
}

/// The running maximum and its first index.
struct Best {
    /// The largest logit.
    max: Signal,
    /// Its index (bank position width).
    class: Signal,
    /// `class_valid`.
    valid: Signal,
}

/// Pass 1: the largest logit and its smallest index.
fn max_pass(
    m: &mut ModuleBuilder,
    clk: Domain,
    cfg: &AnswerConfig,
    ctl: &Control,
    head: Signal,
) -> Best {
    let max = m.reg(clk, "max_q", cfg.acc_width);
    let class = m.reg(clk, "class_q", ctl.pos.width());
    let valid = m.reg(clk, "class_valid_q", 1);
    let larger = m.gt_signed(head, max);
    let better = m.and(ctl.in_max, larger);
    let take = m.or(ctl.first, better);
    let max_next = m.mux(take, head, max);
    m.set_next(max, max_next);
    let class_next = m.mux(take, ctl.pos, class);
    m.set_next(class, class_next);
    let not_start = m.not(ctl.start);
    let set = m.or(valid, ctl.max_end);
    let valid_next = m.and_all(&[set, not_start, ctl.not_clear]);
    m.set_next(valid, valid_next);
    Best { max, class, valid }
}

/// ⌊(head − max) · 2⁸⁻ˢ⌋ in W + 9 bits signed (Q.8).
fn scaled_difference(m: &mut ModuleBuilder, head: Signal, max: Signal, shift: Signal) -> Signal {
    let w = head.width();
    let h = m.sext(head, w + 1);
    let x = m.sext(max, w + 1);
    let d = m.sub_wrap(h, x);
    let wide = m.sext(d, w + 1 + LSM_FRAC);
    let q8 = m.shl(wide, LSM_FRAC);
    m.sra_by(q8, shift)
}

/// Pass 2: S = Σ 2^(−u) over the scaled differences (Q.16), three stages after
/// `t`. S is cleared by `start` and final from step 2N + 3 on.
fn exp_sum(
    m: &mut ModuleBuilder,
    clk: Domain,
    ctl: &Control,
    t: Signal,
) -> Result<Signal, HdlError> {
    let tw = t.width();
    let tv_next = m.and(ctl.in_sum, ctl.not_clear);
    let tv = m.register(clk, "sum_v0", tv_next);

    // Stage 1: −t, the cutoff and u = ⌊−t · log₂e⌋ in Q.8.
    let zero_t = m.zeros(tw);
    let neg = m.sub_wrap(zero_t, t);
    let high = m.slice(neg, CUTOFF_BITS, tw - CUTOFF_BITS);
    let cut = m.reduce_or(high);
    let live = m.not(cut);
    let a = m.truncate(neg, CUTOFF_BITS);
    let log2e = m.lit(LOG2E_Q16, EXP_WORD);
    let product = m.mul(a, log2e);
    let u = m.slice(product, EXP_FRAC, U_WIDTH);
    let u1 = m.reg_no_reset(clk, "sum_u1", U_WIDTH);
    m.set_next(u1, u);
    let live1 = m.reg_no_reset(clk, "sum_live1", 1);
    m.set_next(live1, live);
    let v1_next = m.and(tv, ctl.not_clear);
    let v1 = m.register(clk, "sum_v1", v1_next);

    // Stage 2: the fraction's table word (synchronous ROM read).
    let words = table(exp2_table_word, EXP_WORD)?;
    let rom = m.memory("exp2_table", EXP_WORD, 256, Some(words));
    let frac = m.truncate(u1, LSM_FRAC);
    let fraction = m.mem_read(rom, clk, "exp2_word", frac, None);
    let whole = m.slice(u1, LSM_FRAC, U_WIDTH - LSM_FRAC);
    let whole2 = m.reg_no_reset(clk, "sum_whole2", U_WIDTH - LSM_FRAC);
    m.set_next(whole2, whole);
    let live2 = m.reg_no_reset(clk, "sum_live2", 1);
    m.set_next(live2, live1);
    let v2_next = m.and(v1, ctl.not_clear);
    let v2 = m.register(clk, "sum_v2", v2_next);

    // Stage 3: the integer part as a shift, and the accumulation.
    let term = m.shr_by(fraction, whole2);
    let zero_term = m.zeros(EXP_WORD);
    let term = m.mux(live2, term, zero_term);
    let term = m.zext(term, SUM_WIDTH);
    let sum = m.reg(clk, "sum_q", SUM_WIDTH);
    let added = m.add_wrap(sum, term);
    let kept = m.mux(v2, added, sum);
    let zero_sum = m.zeros(SUM_WIDTH);
    let next = m.mux(ctl.start, zero_sum, kept);
    m.set_next(sum, next);
    Ok(sum)
}

/// ln S in Q.8 nats (2¹⁶ ≤ S < 2²³), two stages after S: leading-one detection,
/// the mantissa's table word, k · ln 2. Final from step 2N + 5 on.
fn log_of_sum(m: &mut ModuleBuilder, clk: Domain, sum: Signal) -> Result<Signal, HdlError> {
    let lz = m.leading_zeros(sum);
    let normalized = m.shl_by(sum, lz);
    let j = m.slice(normalized, SUM_WIDTH - 1 - LSM_FRAC, LSM_FRAC);
    let top = m.lit(u64::from(SUM_WIDTH - 1 - EXP_FRAC), lz.width());
    let k = m.sub_wrap(top, lz);
    let k = m.truncate(k, 3);
    let k1 = m.reg_no_reset(clk, "ln_k1", 3);
    m.set_next(k1, k);
    let words = table(ln_table_word, LN_WORD)?;
    let rom = m.memory("ln_table", LN_WORD, 256, Some(words));
    let mantissa = m.mem_read(rom, clk, "ln_word", j, None);

    let ln2 = m.lit(LN2_Q16, LN_WORD);
    let whole = m.mul(k1, ln2);
    let mantissa = m.zext(mantissa, whole.width());
    let l16 = m.add(whole, mantissa);
    let half = m.lit(1 << (LSM_FRAC - 1), l16.width());
    let rounded = m.add(l16, half);
    let l8 = m.slice(rounded, LSM_FRAC, L_WIDTH);
    let l = m.reg_no_reset(clk, "ln_sum_q", L_WIDTH);
    m.set_next(l, l8);
    Ok(l)
}

/// Pass 3: `lsm` = sat₃₂(t − L), one beat per cycle, one cycle after `t`.
fn stream_out(
    m: &mut ModuleBuilder,
    clk: Domain,
    cfg: &AnswerConfig,
    ctl: &Control,
    t: Signal,
    ln: Signal,
) {
    let tw = t.width();
    let tv_next = m.and(ctl.in_out, ctl.not_clear);
    let tv = m.register(clk, "out_v0", tv_next);
    let t_index = m.register(clk, "out_index0", ctl.pos);
    let wide = m.sext(t, tw + 1);
    let l = m.zext(ln, tw + 1);
    let lsm = m.sub_wrap(wide, l);
    let lsm = saturate(m, lsm, LSM_WIDTH);
    let valid_next = m.and(tv, ctl.not_clear);
    let valid = m.register(clk, "lsm_valid_q", valid_next);
    let index = m.zext(t_index, cfg.index_width);
    let index = m.register(clk, "lsm_index_q", index);
    let data = m.register(clk, "lsm_data_q", lsm);
    m.output("lsm_valid", valid);
    m.output("lsm_index", index);
    m.output("lsm_data", data);
}

/// A signed value clamped into `width` bits (sign-extended if narrower).
fn saturate(m: &mut ModuleBuilder, value: Signal, width: u32) -> Signal {
    let vw = value.width();
    if vw <= width {
        return m.sext(value, width);
    }
    let sign = m.msb(value);
    let upper = m.slice(value, width - 1, vw - width + 1);
    let all_ones = m.reduce_and(upper);
    let any_one = m.reduce_or(upper);
    let not_any = m.not(any_one);
    let fits = m.or(all_ones, not_any);
    let low = m.truncate(value, width);
    let ones = m.ones(width - 1);
    let zeros = m.zeros(width - 1);
    let b0 = m.lit(0, 1);
    let b1 = m.lit(1, 1);
    let max = m.concat(&[b0, ones]);
    let min = m.concat(&[b1, zeros]);
    let bound = m.mux(sign, min, max);
    m.mux(fits, low, bound)
}

/// The 256 words `word(i)` of a ROM of `width` bits.
fn table(word: fn(u32) -> u64, width: u32) -> Result<Vec<Bits>, HdlError> {
    (0..256)
        .map(|i| {
            Bits::from_u64(word(i), width).map_err(|e| {
                HdlError::parameter(NAME, "table", format!("word {i} does not fit: {e}"))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bad(cfg: AnswerConfig, param: &str) {
        let e = answer(&cfg).unwrap_err();
        let text = e.to_string();
        assert!(text.contains(param), "{param}: {text}");
    }

    #[test]
    fn answer_rejects_bad_parameters_by_name() {
        let ok = AnswerConfig::default();
        assert!(answer(&ok).is_ok());
        for cores in [0, 9] {
            bad(AnswerConfig { cores, ..ok }, "cores");
        }
        for acc_width in [12, 49] {
            bad(AnswerConfig { acc_width, ..ok }, "acc_width");
        }
        for logits in [0, 65] {
            bad(AnswerConfig { logits, ..ok }, "logits");
        }
        for index_width in [0, 33] {
            bad(AnswerConfig { index_width, ..ok }, "index_width");
        }
        // 10 logits need index 9: four bits.
        bad(
            AnswerConfig {
                index_width: 3,
                ..ok
            },
            "index_width",
        );
        assert!(answer(&AnswerConfig {
            index_width: 4,
            ..ok
        })
        .is_ok());
        for scale_width in [0, 7] {
            bad(AnswerConfig { scale_width, ..ok }, "scale_width");
        }
    }

    #[test]
    fn answer_builds_at_the_parameter_extremes() {
        for (cores, acc_width, logits, index_width, scale_width) in
            [(1, 13, 1, 1, 1), (8, 48, 64, 32, 6), (3, 20, 10, 7, 5)]
        {
            let cfg = AnswerConfig {
                cores,
                acc_width,
                logits,
                index_width,
                scale_width,
            };
            answer(&cfg).unwrap_or_else(|e| panic!("{cfg:?}: {e}"));
        }
    }

    #[test]
    fn answer_tables_hold_their_end_points() {
        assert_eq!(exp2_table_word(0), 1 << 16);
        assert_eq!(exp2_table_word(128), 46341); // 2^16 / √2
        assert_eq!(ln_table_word(0), 128); // 2^16 · ln(1 + 1/512) ≈ 127.9
        assert!(ln_table_word(255) < LN2_Q16);
    }
}
