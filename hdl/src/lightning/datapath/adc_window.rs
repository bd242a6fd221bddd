//! The ADC side, per core: the preamble detector, the skip of the window's first
//! word, the sign FIFO (streamed weights), the *take* unit that takes exactly the
//! layer's window words, and the watchdog that catches an ADC stream stopped
//! with words in flight.

use super::dac_side::DacSide;
use super::sequencer::Sequencer;
use super::{count_unit, Common, SIGN_FIFO_DEPTH};
use crate::dsl::{Domain, ModuleBuilder, Signal};
use crate::lightning::bus::{BUS_WIDTH, PREAMBLE_LENGTH_WIDTH, SAMPLES};
use crate::lightning::config::WeightSource;

/// What the ADC windows are made from.
pub(super) struct AdcWindowIn<'a> {
    /// What every stage shares.
    pub common: &'a Common<'a>,
    /// The sequencer.
    pub seq: &'a Sequencer,
    /// The DAC side.
    pub dac: &'a DacSide,
    /// The `preamble_length` input.
    pub preamble_length: Signal,
    /// The `timeout` input.
    pub timeout: Signal,
}

/// One core's ADC window after its preamble lock.
pub(super) struct Window {
    /// The layer's next data word is on `data` (a one-shot unit stops after
    /// `beats` words).
    pub take: Signal,
    /// The detector's realigned window word (with streamed weights, the sign
    /// FIFO's head signs above it).
    pub data: Signal,
    /// The core's detector is locked.
    pub locked: Signal,
    /// The core's detector timed out.
    pub failed: Signal,
    /// The core's watchdog fired: its ADC stopped with words in flight.
    pub lost: Signal,
    /// The core has taken all of the layer's words.
    pub taken_done: Signal,
    /// The core has words in flight: data beats fired in this layer > words
    /// it has taken.
    pub in_flight: Signal,
}

/// All cores' windows and what they say together.
pub(super) struct AdcWindows {
    /// Per core, its window.
    pub windows: Vec<Window>,
    /// Per core, its detector is locked.
    pub core_locked: Vec<Signal>,
    /// Every core's detector is locked.
    pub locked: Signal,
    /// A core's detector timed out.
    pub det_failed: Signal,
    /// A core's watchdog fired.
    pub light_lost: Signal,
    /// Every core has taken all of the layer's words.
    pub all_taken: Signal,
    /// Per core (streamed weights), its sign FIFO overflowed.
    pub round_trip_overflows: Vec<Signal>,
}

/// Signals shared by every core's window.
struct Shared {
    /// The detectors' run length: `preamble_length` − 1 (or as given below 2).
    lock_length: Signal,
    /// The window's first word is skipped.
    skip_one: Signal,
    /// Not `skip_one`.
    no_skip: Signal,
    /// Data beats fired in this layer.
    fired: Signal,
    /// Streamed weights: record a sign FIFO entry in this DAC cycle.
    record: Signal,
}

/// Every core's window; see the module docs of [`datapath`](super::datapath).
pub(super) fn adc_windows(m: &mut ModuleBuilder, input: &AdcWindowIn) -> AdcWindows {
    let x = input.common;
    let shared = shared(m, input);
    let mut round_trip_overflows = Vec::new();
    let mut windows = Vec::new();
    for c in 0..x.cfg.cores {
        let (w, overflow) = core_window(m, input, &shared, c);
        round_trip_overflows.extend(overflow);
        windows.push(w);
    }
    let core_locked: Vec<Signal> = windows.iter().map(|w| w.locked).collect();
    let locked = m.and_all(&core_locked);
    let core_failed: Vec<Signal> = windows.iter().map(|w| w.failed).collect();
    let det_failed = m.or_all(&core_failed);
    let core_lost: Vec<Signal> = windows.iter().map(|w| w.lost).collect();
    let light_lost = m.or_all(&core_lost);
    let core_taken: Vec<Signal> = windows.iter().map(|w| w.taken_done).collect();
    let all_taken = m.and_all(&core_taken);
    AdcWindows {
        windows,
        core_locked,
        locked,
        det_failed,
        light_lost,
        all_taken,
        round_trip_overflows,
    }
}

/// The lock length, the fired-beat counter and the sign FIFOs' record strobe.
fn shared(m: &mut ModuleBuilder, input: &AdcWindowIn) -> Shared {
    let x = input.common;
    let (clk, seq) = (x.clk, input.seq);
    // Lock on the first `preamble_length - 1` preamble words and skip the last
    // one in the window: the last word's tail is judged against the mean of a
    // data word, which noise on dark preamble lanes can defeat.
    let preamble_length = input.preamble_length;
    let two = m.lit(2, PREAMBLE_LENGTH_WIDTH);
    let skip_one = m.ge(preamble_length, two);
    let shorter = m.sub_const_wrap(preamble_length, 1);
    let lock_length = m.mux(skip_one, shorter, preamble_length);
    let no_skip = m.not(skip_one);
    // Data beats fired in this layer (the watchdog's words in flight).
    let fired = m.reg(clk, "fired_q", x.sh.count);
    let f_inc = m.add_const_wrap(fired, 1);
    let f_kept = m.mux(input.dac.fire, f_inc, fired);
    let f_zero = m.zeros(x.sh.count);
    let f_next = m.mux(seq.go, f_zero, f_kept);
    m.set_next(fired, f_next);
    // Streamed weights: record every DAC cycle from the end of the preamble
    // until the layer's last beat fired: whether a beat fired, and its signs.
    let preamble_active = m.instance_output(input.dac.streamer, "preamble_active");
    let seen_pre = m.reg(clk, "seen_preamble_q", 1);
    let pre_run = m.and(preamble_active, seq.running);
    let seen_or = m.or(seen_pre, pre_run);
    let seen_next = m.and(seen_or, seq.not_go);
    m.set_next(seen_pre, seen_next);
    let not_pre = m.not(preamble_active);
    let all_fired = m.eq(fired, seq.constants.beats);
    let not_all_fired = m.not(all_fired);
    let record = m.and_all(&[seq.running, seen_pre, not_pre, not_all_fired]);
    Shared {
        lock_length,
        skip_one,
        no_skip,
        fired,
        record,
    }
}

/// Core `c`'s detector, skip, take unit and watchdog; with streamed weights also
/// its sign FIFO's overflow.
fn core_window(
    m: &mut ModuleBuilder,
    input: &AdcWindowIn,
    shared: &Shared,
    c: u32,
) -> (Window, Option<Signal>) {
    let x = input.common;
    let (clk, seq, one) = (x.clk, input.seq, x.one);
    let adc_valid = m.input(&format!("adc{c}_tvalid"), 1);
    let adc_data = m.input(&format!("adc{c}_tdata"), BUS_WIDTH);
    let det = m.instance(&format!("u_detector{c}"), &x.units.detector);
    m.bind_domain(det, "clk", clk);
    m.connect(det, "adc_tvalid", adc_valid);
    m.connect(det, "adc_tdata", adc_data);
    m.connect(det, "arm", seq.go);
    m.connect(det, "preamble_length", shared.lock_length);
    m.connect(det, "timeout", input.timeout);
    let win_valid = m.instance_output(det, "m_tvalid");
    let win_data = m.instance_output(det, "m_tdata");
    let locked = m.instance_output(det, "locked");
    let failed = m.instance_output(det, "failed");

    // `locked` masks the one stale window word the detector emits after `arm`.
    let skipped = m.reg(clk, &format!("skipped{c}_q"), 1);
    let not_skipped = m.not(skipped);
    let skip = m.and_all(&[win_valid, locked, shared.skip_one, not_skipped, seq.not_go]);
    let skipped_or = m.or(skipped, skip);
    let skipped_next = m.and(skipped_or, seq.not_go);
    m.set_next(skipped, skipped_next);
    let past_skip = m.or(skipped, shared.no_skip);
    let taken_done = m.wire(&format!("taken{c}_done"), 1);
    let not_taken_done = m.not(taken_done);
    let slot = m.and_all(&[win_valid, locked, past_skip, seq.running, not_taken_done]);
    let (take, data, overflow) = match x.cfg.weight_source {
        WeightSource::Stream => {
            let fifo = sign_fifo(
                m,
                &SignFifoIn {
                    clk,
                    c,
                    record: shared.record,
                    fire: input.dac.fire,
                    signs: input.dac.weights.signs[c as usize],
                    slot,
                    go: seq.go,
                },
            );
            let take = m.and(slot, fifo.fired);
            (take, m.concat(&[fifo.signs, win_data]), Some(fifo.overflow))
        }
        WeightSource::Memory => (slot, win_data, None),
    };
    let take = m.named(&format!("take{c}"), take);
    let beats = seq.constants.beats;
    let name = format!("u_take{c}");
    let take_u = count_unit(m, &x.units.unit, &name, clk, take, seq.go, one, beats);
    let td = m.instance_output(take_u, "done");
    m.assign(taken_done, td);
    // Watchdog: cycles in which the core is locked, has words in flight
    // (fired, not yet taken) and takes none, up to `timeout`.
    let taken = m.instance_output(take_u, "count");
    let in_flight = m.gt(shared.fired, taken);
    let not_take = m.not(take);
    let starving = m.and_all(&[seq.running, locked, not_taken_done, in_flight, not_take]);
    let wd_clear = m.or(seq.go, take);
    let wd = m.instance(&format!("u_watchdog{c}"), &x.units.watchdog);
    m.bind_domain(wd, "clk", clk);
    m.connect(wd, "events", starving);
    m.connect(wd, "enable", one);
    m.connect(wd, "clear", wd_clear);
    m.connect(wd, "one_shot", one);
    m.connect(wd, "target", input.timeout);
    let lost = m.instance_output(wd, "action");
    let window = Window {
        take,
        data,
        locked,
        failed,
        lost,
        taken_done,
        in_flight,
    };
    (window, overflow)
}

/// What one core's sign FIFO is made from.
struct SignFifoIn {
    /// The datapath clock.
    clk: Domain,
    /// The core.
    c: u32,
    /// Push an entry in this DAC cycle.
    record: Signal,
    /// The entry's beat fired (else it is a gap).
    fire: Signal,
    /// The fired beat's sign bits.
    signs: Signal,
    /// A window word after the skip: pop the head.
    slot: Signal,
    /// First cycle of a layer: empties the FIFO.
    go: Signal,
}

/// One core's sign FIFO (streamed weights).
struct SignFifo {
    /// The head entry is a fired beat (else a gap: the window word is dark).
    fired: Signal,
    /// The head entry's sign bits.
    signs: Signal,
    /// An entry was recorded while the FIFO was full.
    overflow: Signal,
}

/// Core `c`'s sign FIFO: `record` pushes (`fire`, `signs`) once per DAC cycle
/// after the preamble; `slot` (a window word after the skip) pops the head, which
/// is available in the same cycle. Cleared by `go`.
fn sign_fifo(m: &mut ModuleBuilder, input: &SignFifoIn) -> SignFifo {
    let (clk, c, go) = (input.clk, input.c, input.go);
    let aw = SIGN_FIFO_DEPTH.trailing_zeros();
    let wp = m.reg(clk, &format!("sign_wr{c}_q"), aw + 1);
    let rp = m.reg(clk, &format!("sign_rd{c}_q"), aw + 1);
    let held = m.sub_wrap(wp, rp);
    let full = m.eq_const(held, u64::from(SIGN_FIFO_DEPTH));
    let not_full = m.not(full);
    let push = m.and(input.record, not_full);
    let overflow = m.and(input.record, full);
    let mem = m.memory(&format!("sign_fifo{c}"), SAMPLES + 1, SIGN_FIFO_DEPTH, None);
    let entry = m.concat(&[input.signs, input.fire]);
    let waddr = m.truncate(wp, aw);
    m.mem_write(mem, clk, waddr, entry, push);
    let zero = m.zeros(aw + 1);
    let wp_inc = m.add_const_wrap(wp, 1);
    let wp_kept = m.mux(push, wp_inc, wp);
    let wp_next = m.mux(go, zero, wp_kept);
    m.set_next(wp, wp_next);
    let rp_inc = m.add_const_wrap(rp, 1);
    let rp_kept = m.mux(input.slot, rp_inc, rp);
    let rp_next = m.mux(go, zero, rp_kept);
    m.set_next(rp, rp_next);
    // Reading the next head every cycle puts entry `rp` on the output; an entry
    // is read many cycles after its write (the round trip).
    let raddr = m.truncate(rp_next, aw);
    let head = m.mem_read(mem, clk, &format!("sign_head{c}"), raddr, None);
    SignFifo {
        fired: m.bit(head, 0),
        signs: m.slice(head, 1, SAMPLES),
        overflow,
    }
}
