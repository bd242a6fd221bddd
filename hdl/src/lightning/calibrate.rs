//! Self-calibration of one photonic core: it drives the core's two DACs with
//! known steps, watches the core's ADC words, and measures the round trip of each
//! modulator, the skew between them (whole cycles and samples) and the optical
//! loss; from those it derives the DAC delay and shift settings that make the
//! two operands meet, and the loss-compensation gain. It goes beyond the
//! released RTL, whose calibration only averages a loss value.
//!
//! # Procedure (cycle-exact at the ports)
//!
//! `start` = 1 while idle begins a run: `busy` = 1, `done`/`failed` = 0. The
//! run has two **phases**, one per probed modulator: first the activation DAC
//! (the *probe*) with the weight DAC as *reference*, then the other way round.
//! Each phase:
//!
//! 1. **dark** — both DACs off (`tvalid` = 0, zero samples) for `timeout` + 1
//!    cycles, so that the light of the previous phase has drained;
//! 2. **reference** — the reference DAC streams full scale (every sample
//!    `255 << 7`) for [`REFERENCE_CYCLES`] cycles; the probe stays dark, so the
//!    products are 0;
//! 3. **search** — the probe streams full scale too, and the ADC words are
//!    numbered from 0 in this cycle (words with `adc_tvalid` = 1 only). The first
//!    sample at or above [`THRESHOLD`] marks the probe's light: its number in
//!    the word sequence, 16 · word + lane, is the phase's **arrival**. No such
//!    sample within `timeout` cycles fails the run ([`CAL_FAIL_NO_LIGHT`]);
//! 4. **measure** — after [`SETTLE_WORDS`] more words, the next
//!    [`MEASURE_WORDS`] ADC words are summed (both DACs still at full scale),
//!    bounded by `timeout` cycles as well.
//!
//! Then, without touching the DACs:
//! - `skew` = weight arrival − activation arrival (samples, signed): how much
//!   later the weight modulator's light arrives. The later path gets no delay
//!   and the earlier DAC is delayed by |`skew`|: `delay` = |skew| / 16,
//!   `shift` = |skew| mod 16 (the operand aligner's two settings). A skew beyond
//!   [`MAX_SKEW`] samples fails the run ([`CAL_FAIL_SKEW`]);
//! - `level` = the mean full-scale sample over both phases (the sum of
//!   2 · [`MEASURE_WORDS`] · 16 samples, shifted right), and `gain` =
//!   round(256 · [`FULL_SCALE`] / `level`) in Q8.8, saturating at `0xFFFF`: the
//!   `optical_loss` setting under which decode reads every product exactly (a
//!   lossless link gives `level` = [`FULL_SCALE`], `gain` = `0x0100`). A
//!   sequential divider takes [`DIVIDE_CYCLES`] cycles.
//!
//! The DAC outputs are registered, so at the ports each phase's reference
//! `tvalid` rises [`REFERENCE_CYCLES`] cycles before the probe's, both fall in
//! the same cycle (the cycle after the measurement's last word), and the DACs
//! stay dark for `timeout` + 1 cycles between the phases. A successful run is
//! busy for 2 · (`timeout` + 1) + the cycles each phase's reference shines +
//! [`DIVIDE_CYCLES`] cycles.
//!
//! Finally `done` = 1 (and `failed` = 1 on a failure), `busy` = 0; the outputs
//! hold the results until the next `start`. Every wait in a phase (dark, search,
//! measure) is bounded by `timeout`, so a run takes at most
//! [`max_run_cycles`]`(timeout)` cycles, that is
//! 2 · (3 · (`timeout` + 1) + [`REFERENCE_CYCLES`]) + [`DIVIDE_CYCLES`] + 1,
//! and never waits on anything else: nothing outside can hang it. A healthy
//! link finds its light within the loop's latency and measures in
//! [`SETTLE_WORDS`] + [`MEASURE_WORDS`] words, so a run that succeeds takes
//! about 2 · (`timeout` + [`REFERENCE_CYCLES`]) + [`DIVIDE_CYCLES`] plus twice
//! the round trip.
//!
//! The arrivals count ADC words, so they include the ADC path's constant
//! latency (converter stream, clock-crossing FIFO); the skew, the level and the
//! gain do not depend on it.

use super::bus::{BUS_WIDTH, DELAY_WIDTH, SAMPLES, SAMPLE_WIDTH, SHIFT_WIDTH};
use super::datapath::COUNTER_WIDTH;
use super::preamble_detector::TIMEOUT_WIDTH;
use crate::dsl::{bits_for, Domain, ModuleBuilder, Signal};
use crate::ir::{HdlError, Module, ResetPolarity};

/// A full-scale DAC sample: 255 in the bus format.
pub const DAC_FULL_SCALE: u64 = 255 << 7;
/// The ADC sample of a full-scale product on a lossless link:
/// `((255 · 255) >> 8) << 7` = 254 << 7.
pub const FULL_SCALE: u64 = 254 << 7;
/// The first ADC sample at or above this value is the probe's light (a product
/// of 16 on a lossless link; calibrates transmissions down to about 1/16).
pub const THRESHOLD: u64 = 0x0800;
/// Cycles the reference DAC shines alone before the probe starts: more than the
/// largest skew, so the reference's light is there when the probe's arrives.
pub const REFERENCE_CYCLES: u32 = 80;
/// Largest |skew| the DAC aligners can compensate: 63 cycles and 15 samples.
pub const MAX_SKEW: u32 = 63 * SAMPLES + 15;
/// ADC words skipped after the arrival before the level is measured.
pub const SETTLE_WORDS: u32 = 2;
/// ADC words summed per phase for the level.
pub const MEASURE_WORDS: u32 = 16;
/// Cycles of the sequential divider.
pub const DIVIDE_CYCLES: u32 = DIVIDEND_WIDTH;
/// Width of the arrival outputs (samples).
pub const ARRIVAL_WIDTH: u32 = 16;
/// Width of the `gain` and `level` outputs.
pub const GAIN_WIDTH: u32 = 16;
/// Width of `fail_reason`.
pub const CAL_FAIL_WIDTH: u32 = 2;
/// `fail_reason`: no failure.
pub const CAL_FAIL_NONE: u64 = 0;
/// `fail_reason`: a probe's light never reached the ADC within `timeout` cycles
/// (or the ADC stopped while the level was measured).
pub const CAL_FAIL_NO_LIGHT: u64 = 1;
/// `fail_reason`: the skew is larger than [`MAX_SKEW`] samples.
pub const CAL_FAIL_SKEW: u64 = 2;

/// The most cycles a run can take with the `timeout` register at `timeout`,
/// counted as the `cycles` output counts them (the `start` cycle included),
/// whatever the ADC does: per phase, dark for `timeout` + 1 cycles, the
/// reference's [`REFERENCE_CYCLES`], and at most `timeout` + 1 each for the
/// search and the measurement; then the divider's [`DIVIDE_CYCLES`] and the
/// `start` cycle.
pub fn max_run_cycles(timeout: u32) -> u64 {
    let wait = u64::from(timeout) + 1;
    2 * (3 * wait + u64::from(REFERENCE_CYCLES)) + u64::from(DIVIDE_CYCLES) + 1
}

/// Width of the divider's dividend, `256 · FULL_SCALE + level / 2` (24 bits).
const DIVIDEND_WIDTH: u32 = 24;
/// Width of the summed samples of both phases (2 · 16 · 16 samples of 16 bits).
const SUM_WIDTH: u32 = SAMPLE_WIDTH + 10;
/// Width of the signed skew.
const SKEW_WIDTH: u32 = ARRIVAL_WIDTH + 1;

/// The run's states.
#[derive(Clone, Copy)]
enum State {
    Idle = 0,
    Dark = 1,
    Reference = 2,
    Search = 3,
    Measure = 4,
    Divide = 5,
}

/// Width of the state register.
const STATE_WIDTH: u32 = 3;

/// Generates `lightning_calibrator` (see the module docs).
///
/// Ports: `clk`, `rst` (active high); inputs `start`, `timeout[16]`,
/// `adc_tvalid`, `adc_tdata[256]`; outputs `act_tvalid`, `act_tdata[256]`,
/// `weight_tvalid`, `weight_tdata[256]`, `busy`, `done`, `failed`,
/// `fail_reason[2]`, `act_arrival[16]`, `weight_arrival[16]`, `level[16]`,
/// `gain[16]`, `act_delay[6]`, `act_shift[4]`, `weight_delay[6]`,
/// `weight_shift[4]`, `cycles[32]` (cycles of the last run).
pub fn calibrator() -> Result<Module, HdlError> {
    let mut m = ModuleBuilder::new("lightning_calibrator");
    let clk = m.domain("clk", "clk", Some("rst"), ResetPolarity::ActiveHigh);
    let start = m.input("start", 1);
    let timeout = m.input("timeout", TIMEOUT_WIDTH);
    let adc_valid = m.input("adc_tvalid", 1);
    let adc_data = m.input("adc_tdata", BUS_WIDTH);

    let fsm = Fsm::new(&mut m, clk, start);
    let dacs = drive_dacs(&mut m, &fsm);
    let light = watch_adc(&mut m, clk, &fsm, adc_valid, adc_data);
    fsm.advance(&mut m, &light, timeout);
    let results = derive_settings(&mut m, clk, &fsm, &light);

    m.output("act_tvalid", dacs.act_valid);
    m.output("act_tdata", dacs.act_data);
    m.output("weight_tvalid", dacs.weight_valid);
    m.output("weight_tdata", dacs.weight_data);
    m.output("busy", fsm.busy);
    m.output("done", fsm.done);
    m.output("failed", fsm.failed);
    m.output("fail_reason", fsm.fail_reason);
    m.output("act_arrival", light.arrival[0]);
    m.output("weight_arrival", light.arrival[1]);
    m.output("level", results.level);
    m.output("gain", results.gain);
    m.output("act_delay", results.act_delay);
    m.output("act_shift", results.act_shift);
    m.output("weight_delay", results.weight_delay);
    m.output("weight_shift", results.weight_shift);
    m.output("cycles", fsm.cycles);
    m.finish()
}

/// The run's sequencer: state, phase, the cycle counter of the current state.
struct Fsm {
    clk: Domain,
    state: Signal,
    /// 0: probing the activation modulator; 1: the weight modulator.
    phase: Signal,
    /// Cycles spent in the current state.
    count: Signal,
    /// `start` accepted in this cycle.
    begin: Signal,
    busy: Signal,
    done: Signal,
    failed: Signal,
    fail_reason: Signal,
    cycles: Signal,
}

impl Fsm {
    fn new(m: &mut ModuleBuilder, clk: Domain, start: Signal) -> Fsm {
        let state = m.reg(clk, "state_q", STATE_WIDTH);
        let phase = m.reg(clk, "phase_q", 1);
        let count = m.reg(clk, "state_cycles_q", COUNTER_WIDTH);
        let done = m.reg(clk, "done_q", 1);
        let failed = m.reg(clk, "failed_q", 1);
        let fail_reason = m.reg(clk, "fail_reason_q", CAL_FAIL_WIDTH);
        let cycles = m.reg(clk, "cycles_q", COUNTER_WIDTH);
        let idle = m.eq_const(state, State::Idle as u64);
        let busy = m.not(idle);
        let begin = m.and(start, idle);
        Fsm {
            clk,
            state,
            phase,
            count,
            begin,
            busy,
            done,
            failed,
            fail_reason,
            cycles,
        }
    }

    fn is(&self, m: &mut ModuleBuilder, s: State) -> Signal {
        m.eq_const(self.state, s as u64)
    }

    /// The transitions, given what the ADC watch saw.
    fn advance(&self, m: &mut ModuleBuilder, light: &Light, timeout: Signal) {
        let timeout32 = m.zext(timeout, COUNTER_WIDTH);
        let timed_out = m.ge(self.count, timeout32);
        let dark = self.is(m, State::Dark);
        let reference = self.is(m, State::Reference);
        let search = self.is(m, State::Search);
        let measure = self.is(m, State::Measure);
        let divide = self.is(m, State::Divide);
        let dark_end = m.and(dark, timed_out);
        let last_ref = m.lit(u64::from(REFERENCE_CYCLES - 1), COUNTER_WIDTH);
        let ref_done = m.eq(self.count, last_ref);
        let ref_end = m.and(reference, ref_done);
        let not_found = m.not(light.found);
        let search_lost = m.and_all(&[search, not_found, timed_out]);
        let search_end = m.and(search, light.found);
        let not_measured = m.not(light.measured);
        let measure_lost = m.and_all(&[measure, not_measured, timed_out]);
        let measure_end = m.and(measure, light.measured);
        let last_div = m.lit(u64::from(DIVIDE_CYCLES - 1), COUNTER_WIDTH);
        let div_done = m.eq(self.count, last_div);
        let divide_end = m.and(divide, div_done);
        let no_light = m.or(search_lost, measure_lost);
        let second = self.phase;
        let next_phase = m.and(measure_end, second);
        let not_second = m.not(second);
        let again = m.and(measure_end, not_second);

        let lit = |m: &mut ModuleBuilder, s: State| m.lit(s as u64, STATE_WIDTH);
        let s_idle = lit(m, State::Idle);
        let s_dark = lit(m, State::Dark);
        let s_ref = lit(m, State::Reference);
        let s_search = lit(m, State::Search);
        let s_measure = lit(m, State::Measure);
        let s_divide = lit(m, State::Divide);
        let finish = m.or_all(&[no_light, divide_end, light.skew_too_large]);
        let next = m.select(
            &[
                (self.begin, s_dark),
                (finish, s_idle),
                (dark_end, s_ref),
                (ref_end, s_search),
                (search_end, s_measure),
                (again, s_dark),
                (next_phase, s_divide),
            ],
            self.state,
        );
        m.set_next(self.state, next);
        let changed = m.or_all(&[self.begin, dark_end, ref_end, search_end, measure_end]);
        let inc = m.add_const_wrap(self.count, 1);
        let zero = m.zeros(COUNTER_WIDTH);
        let count_next = m.mux(changed, zero, inc);
        m.set_next(self.count, count_next);
        let flip = m.not(self.phase);
        let zero1 = m.zeros(1);
        let phase_kept = m.mux(again, flip, self.phase);
        let phase_next = m.mux(self.begin, zero1, phase_kept);
        m.set_next(self.phase, phase_next);

        let not_begin = m.not(self.begin);
        let done_or = m.or(self.done, finish);
        let done_next = m.and(done_or, not_begin);
        m.set_next(self.done, done_next);
        let fail = m.or(no_light, light.skew_too_large);
        let failed_or = m.or(self.failed, fail);
        let failed_next = m.and(failed_or, not_begin);
        m.set_next(self.failed, failed_next);
        let r_none = m.lit(CAL_FAIL_NONE, CAL_FAIL_WIDTH);
        let r_light = m.lit(CAL_FAIL_NO_LIGHT, CAL_FAIL_WIDTH);
        let r_skew = m.lit(CAL_FAIL_SKEW, CAL_FAIL_WIDTH);
        let reason = m.select(
            &[
                (self.begin, r_none),
                (no_light, r_light),
                (light.skew_too_large, r_skew),
            ],
            self.fail_reason,
        );
        m.set_next(self.fail_reason, reason);
        let c_inc = m.add_const_wrap(self.cycles, 1);
        let c_kept = m.mux(self.busy, c_inc, self.cycles);
        let c_one = m.lit(1, COUNTER_WIDTH);
        let c_next = m.mux(self.begin, c_one, c_kept);
        m.set_next(self.cycles, c_next);
    }
}

/// The two DAC streams the calibrator drives.
struct Dacs {
    act_valid: Signal,
    act_data: Signal,
    weight_valid: Signal,
    weight_data: Signal,
}

/// The reference shines from the reference state on, the probe from the search
/// state on, both until the level is measured (registered outputs).
fn drive_dacs(m: &mut ModuleBuilder, fsm: &Fsm) -> Dacs {
    let reference = fsm.is(m, State::Reference);
    let search = fsm.is(m, State::Search);
    let measure = fsm.is(m, State::Measure);
    let probing = m.or(search, measure);
    let ref_on = m.or(reference, probing);
    let probe_is_weight = fsm.phase;
    let probe_is_act = m.not(probe_is_weight);
    // Phase 0: the activation DAC probes, the weight DAC is the reference.
    let act_ref = m.and(probe_is_weight, ref_on);
    let act_probe = m.and(probe_is_act, probing);
    let act_on = m.or(act_ref, act_probe);
    let weight_ref = m.and(probe_is_act, ref_on);
    let weight_probe = m.and(probe_is_weight, probing);
    let weight_on = m.or(weight_ref, weight_probe);
    let full = m.lit(DAC_FULL_SCALE, SAMPLE_WIDTH);
    let full_word = m.replicate(full, SAMPLES);
    let dark_word = m.zeros(BUS_WIDTH);
    let act_word = m.mux(act_on, full_word, dark_word);
    let weight_word = m.mux(weight_on, full_word, dark_word);
    Dacs {
        act_valid: m.register(fsm.clk, "act_valid_q", act_on),
        act_data: m.register(fsm.clk, "act_data_q", act_word),
        weight_valid: m.register(fsm.clk, "weight_valid_q", weight_on),
        weight_data: m.register(fsm.clk, "weight_data_q", weight_word),
    }
}

/// What the ADC watch measured.
struct Light {
    /// The probe's light was found in this search (level, in the search state).
    found: Signal,
    /// The phase's level measurement is complete (in the measure state).
    measured: Signal,
    /// Per phase, the arrival (samples).
    arrival: [Signal; 2],
    /// The full-scale samples summed over both phases.
    sum: Signal,
    /// The arrivals are further apart than [`MAX_SKEW`] (at the end of phase 1).
    skew_too_large: Signal,
    /// The weight modulator's light arrives first (weight arrival < activation
    /// arrival).
    weight_first: Signal,
    /// |weight arrival − activation arrival| (samples).
    skew_magnitude: Signal,
}

/// Numbers the ADC words of the search, finds the first lit sample, sums the
/// level words.
fn watch_adc(
    m: &mut ModuleBuilder,
    clk: Domain,
    fsm: &Fsm,
    adc_valid: Signal,
    adc_data: Signal,
) -> Light {
    let search = fsm.is(m, State::Search);
    let measure = fsm.is(m, State::Measure);
    let first_cycle = m.eq_const(fsm.count, 0);
    let search_start = m.and(search, first_cycle);
    let measure_start = m.and(measure, first_cycle);

    // The word number since the search began (valid words only).
    let words = m.reg(clk, "words_q", ARRIVAL_WIDTH - 4);
    let samples = m.split_lanes(adc_data, SAMPLE_WIDTH);
    let thr = m.lit(THRESHOLD, SAMPLE_WIDTH);
    let hits: Vec<Signal> = samples
        .iter()
        .enumerate()
        .map(|(i, &s)| {
            let hit = m.ge(s, thr);
            m.named(&format!("lane{i}_lit"), hit)
        })
        .collect();
    let any_hit = m.or_all(&hits);
    let lane_bits = bits_for(SAMPLES - 1);
    let lanes: Vec<(Signal, Signal)> = hits
        .iter()
        .enumerate()
        .map(|(i, &h)| (h, m.lit(i as u64, lane_bits)))
        .collect();
    let no_lane = m.zeros(lane_bits);
    let first_lane = m.select(&lanes, no_lane);
    // The word number of this cycle's word counts from 0 at the search's start.
    let zero_words = m.zeros(ARRIVAL_WIDTH - 4);
    let number = m.mux(search_start, zero_words, words);
    let searching = m.and(search, adc_valid);
    let hit = m.and(searching, any_hit);
    let w_inc = m.add_const_wrap(number, 1);
    let w_kept = m.mux(adc_valid, w_inc, number);
    let w_next = m.mux(search, w_kept, words);
    m.set_next(words, w_next);
    let arrival_now = m.concat(&[number, first_lane]);
    let found = m.named("light_found", hit);

    let not_phase = m.not(fsm.phase);
    let hit0 = m.and(found, not_phase);
    let hit1 = m.and(found, fsm.phase);
    let a0 = m.reg(clk, "act_arrival_q", ARRIVAL_WIDTH);
    let a1 = m.reg(clk, "weight_arrival_q", ARRIVAL_WIDTH);
    let zero_a = m.zeros(ARRIVAL_WIDTH);
    let a0_kept = m.mux(hit0, arrival_now, a0);
    let a0_next = m.mux(fsm.begin, zero_a, a0_kept);
    m.set_next(a0, a0_next);
    let a1_kept = m.mux(hit1, arrival_now, a1);
    let a1_next = m.mux(fsm.begin, zero_a, a1_kept);
    m.set_next(a1, a1_next);

    // Level: skip SETTLE_WORDS valid words, then sum MEASURE_WORDS words.
    let taken = m.reg(clk, "level_words_q", bits_for(SETTLE_WORDS + MEASURE_WORDS));
    let zero_t = m.zeros(taken.width());
    let t_now = m.mux(measure_start, zero_t, taken);
    let meas_valid = m.and(measure, adc_valid);
    let settle = m.lit(u64::from(SETTLE_WORDS), taken.width());
    let past_settle = m.ge(t_now, settle);
    let add = m.and(meas_valid, past_settle);
    let t_inc = m.add_const_wrap(t_now, 1);
    let t_kept = m.mux(meas_valid, t_inc, t_now);
    m.set_next(taken, t_kept);
    let last = m.lit(u64::from(SETTLE_WORDS + MEASURE_WORDS - 1), taken.width());
    let at_last = m.eq(t_now, last);
    let measured = m.and(meas_valid, at_last);
    let wide: Vec<Signal> = samples.iter().map(|&s| m.zext(s, SUM_WIDTH)).collect();
    let word_sum = m.add_tree_wrap(&wide);
    let sum = m.reg(clk, "level_sum_q", SUM_WIDTH);
    let added = m.add_wrap(sum, word_sum);
    let s_kept = m.mux(add, added, sum);
    let zero_s = m.zeros(SUM_WIDTH);
    let s_next = m.mux(fsm.begin, zero_s, s_kept);
    m.set_next(sum, s_next);

    let a0x = m.zext(a0, SKEW_WIDTH);
    let a1x = m.zext(a1, SKEW_WIDTH);
    let skew = m.sub_wrap(a1x, a0x);
    let neg = m.sub_wrap(a0x, a1x);
    let weight_first = m.msb(skew);
    let magnitude = m.mux(weight_first, neg, skew);
    let reach = m.lit(u64::from(MAX_SKEW), SKEW_WIDTH);
    let beyond = m.gt(magnitude, reach);
    let second_done = m.and(measured, fsm.phase);
    let skew_too_large = m.and(second_done, beyond);
    Light {
        found,
        measured,
        arrival: [a0, a1],
        sum,
        skew_too_large,
        weight_first,
        skew_magnitude: magnitude,
    }
}

/// The settings derived at the end of the run.
struct Settings {
    level: Signal,
    gain: Signal,
    act_delay: Signal,
    act_shift: Signal,
    weight_delay: Signal,
    weight_shift: Signal,
}

/// Level, gain (sequential restoring division) and the DAC delays from the skew.
fn derive_settings(m: &mut ModuleBuilder, clk: Domain, fsm: &Fsm, light: &Light) -> Settings {
    // Mean of 2 · MEASURE_WORDS · 16 = 512 samples.
    let level_full = m.slice(light.sum, 9, SUM_WIDTH - 9);
    let level = m.truncate(level_full, GAIN_WIDTH);
    let divide = fsm.is(m, State::Divide);
    let first = m.eq_const(fsm.count, 0);
    let load = m.and(divide, first);
    // Dividend 256 · FULL_SCALE + level / 2: round to nearest.
    let base = m.lit(256 * FULL_SCALE, DIVIDEND_WIDTH);
    let half = m.slice(level, 1, GAIN_WIDTH - 1);
    let half = m.zext(half, DIVIDEND_WIDTH);
    let dividend = m.add_wrap(base, half);
    let quotient = m.reg(clk, "quotient_q", DIVIDEND_WIDTH);
    let rem_w = GAIN_WIDTH + 1;
    let rem = m.reg(clk, "remainder_q", rem_w);
    // One restoring step on (rem, q): shift in q's top bit, subtract if it fits.
    let q_src = m.mux(load, dividend, quotient);
    let zero_r = m.zeros(rem_w);
    let r_src = m.mux(load, zero_r, rem);
    let r_low = m.truncate(r_src, rem_w - 1);
    let q_top = m.msb(q_src);
    let shifted = m.concat(&[r_low, q_top]);
    let divisor = m.zext(level, rem_w);
    let fits = m.ge(shifted, divisor);
    let reduced = m.sub_wrap(shifted, divisor);
    let r_next = m.mux(fits, reduced, shifted);
    let q_low = m.truncate(q_src, DIVIDEND_WIDTH - 1);
    let q_next = m.concat(&[q_low, fits]);
    let q_kept = m.mux(divide, q_next, quotient);
    m.set_next(quotient, q_kept);
    let r_kept = m.mux(divide, r_next, rem);
    m.set_next(rem, r_kept);
    let high = m.slice(quotient, GAIN_WIDTH, DIVIDEND_WIDTH - GAIN_WIDTH);
    let over = m.reduce_or(high);
    let low = m.truncate(quotient, GAIN_WIDTH);
    let all = m.ones(GAIN_WIDTH);
    let gain = m.mux(over, all, low);

    // The earlier modulator's DAC waits |skew| samples.
    let negative = light.weight_first;
    let shift = m.truncate(light.skew_magnitude, SHIFT_WIDTH);
    let delay = m.slice(light.skew_magnitude, SHIFT_WIDTH, DELAY_WIDTH);
    let zero_d = m.zeros(DELAY_WIDTH);
    let zero_s = m.zeros(SHIFT_WIDTH);
    // Weight later (skew ≥ 0): delay the activations; else the weights.
    let act_delay = m.mux(negative, zero_d, delay);
    let act_shift = m.mux(negative, zero_s, shift);
    let weight_delay = m.mux(negative, delay, zero_d);
    let weight_shift = m.mux(negative, shift, zero_s);
    Settings {
        level,
        gain,
        act_delay,
        act_shift,
        weight_delay,
        weight_shift,
    }
}
