//! The cycle counters: `cycles`, `dac_start_cycle`, `window_open_cycle`, and
//! the per-stage busy counters `busy_dac_cycles`, `busy_photonic_cycles`,
//! `busy_decode_cycles`, `compute_cycles` (definitions in the module docs of
//! [`datapath`](super::datapath)).

use super::sequencer::Sequencer;
use super::{Common, COUNTER_WIDTH};
use crate::dsl::{Domain, ModuleBuilder, Signal};

/// What the counters count.
pub(super) struct CountersIn<'a> {
    /// What every stage shares.
    pub common: &'a Common<'a>,
    /// The sequencer.
    pub seq: &'a Sequencer,
    /// `dac0_tvalid`.
    pub dac0_valid: Signal,
    /// Every core's detector is locked.
    pub locked: Signal,
}

/// The counters and the `locked` status.
pub(super) struct Counters {
    /// Cycles from `start` to `done`.
    pub cycles: Signal,
    /// Cycles from `start` to the first `dac0_tvalid`.
    pub dac_start: Signal,
    /// Cycles from `start` to the first `locked`.
    pub window_open: Signal,
    /// The `locked` output: every core locked, not in a `go` cycle.
    pub opened: Signal,
}

/// The counters of the module docs.
pub(super) fn counters(m: &mut ModuleBuilder, input: &CountersIn) -> Counters {
    let (clk, seq) = (input.common.clk, input.seq);
    let cycles = m.reg(clk, "cycles_q", COUNTER_WIDTH);
    let c_inc = m.add_const_wrap(cycles, 1);
    let c_kept = m.mux(seq.busy, c_inc, cycles);
    let c_one = m.lit(1, COUNTER_WIDTH);
    let c_next = m.mux(seq.start_ok, c_one, c_kept);
    m.set_next(cycles, c_next);
    let capture = |m: &mut ModuleBuilder, name: &str, event: Signal| {
        first_event(m, clk, name, seq, event, cycles)
    };
    let dac_start = capture(m, "dac_start", input.dac0_valid);
    // In `go` the detectors still show the previous layer's lock.
    let opened = m.and(input.locked, seq.not_go);
    let window_open = capture(m, "window_open", opened);
    Counters {
        cycles,
        dac_start,
        window_open,
        opened,
    }
}

/// The value of `cycles` in the first busy cycle where `event` is 1 since the
/// last `start`: a captured counter.
fn first_event(
    m: &mut ModuleBuilder,
    clk: Domain,
    name: &str,
    seq: &Sequencer,
    event: Signal,
    cycles: Signal,
) -> Signal {
    let seen = m.reg(clk, &format!("{name}_seen_q"), 1);
    let value = m.reg(clk, &format!("{name}_cycle_q"), COUNTER_WIDTH);
    let not_seen = m.not(seen);
    let hit = m.and_all(&[seq.busy, event, not_seen]);
    let seen_or = m.or(seen, hit);
    let not_start = m.not(seq.start_ok);
    let seen_next = m.and(not_start, seen_or);
    m.set_next(seen, seen_next);
    let zero = m.zeros(COUNTER_WIDTH);
    let captured = m.mux(hit, cycles, value);
    let value_next = m.mux(seq.start_ok, zero, captured);
    m.set_next(value, value_next);
    value
}

/// What the busy counters watch.
pub(super) struct BusyIn<'a> {
    /// What every stage shares.
    pub common: &'a Common<'a>,
    /// The sequencer.
    pub seq: &'a Sequencer,
    /// A data beat fires on the DACs.
    pub fire: Signal,
    /// Per core, it has words in flight (fired > taken).
    pub in_flight: Vec<Signal>,
    /// The cores' next words are accepted into decode.
    pub accept: Signal,
    /// The cores' decoders emit a neuron.
    pub emit: Signal,
}

/// The busy counters (32 bits, cleared by an accepted `start`).
pub(super) struct Busy {
    /// Cycles in which a data beat fired on the DACs.
    pub dac: Signal,
    /// Cycles in which some core had words in flight.
    pub photonic: Signal,
    /// Cycles in which the decoders held an accumulating neuron.
    pub decode: Signal,
    /// Cycles in which any of the three was busy.
    pub compute: Signal,
}

/// The per-stage busy counters of the module docs.
pub(super) fn busy_counters(m: &mut ModuleBuilder, input: &BusyIn) -> Busy {
    let (x, seq) = (input.common, input.seq);
    let in_flight = m.or_all(&input.in_flight);
    // Decode: words accepted in this layer exceed cpo x neurons emitted.
    let width = x.sh.count;
    let words = m.reg(x.clk, "busy_words_q", width);
    let w_inc = m.add_const_wrap(words, 1);
    let w_kept = m.mux(input.accept, w_inc, words);
    let zero = m.zeros(width);
    let w_next = m.mux(seq.go, zero, w_kept);
    m.set_next(words, w_next);
    let done_words = m.reg(x.clk, "busy_done_words_q", width);
    let d_inc = m.add_wrap(done_words, seq.constants.cpo);
    let d_kept = m.mux(input.emit, d_inc, done_words);
    let d_next = m.mux(seq.go, zero, d_kept);
    m.set_next(done_words, d_next);
    let decoding = m.gt(words, done_words);
    let any = m.or_all(&[input.fire, in_flight, decoding]);
    let count = |m: &mut ModuleBuilder, name: &str, event: Signal| {
        let q = m.reg(x.clk, &format!("{name}_q"), COUNTER_WIDTH);
        let inc = m.add_const_wrap(q, 1);
        let counts = m.and(seq.busy, event);
        let kept = m.mux(counts, inc, q);
        let zero = m.zeros(COUNTER_WIDTH);
        let next = m.mux(seq.start_ok, zero, kept);
        m.set_next(q, next);
        q
    };
    Busy {
        dac: count(m, "busy_dac", input.fire),
        photonic: count(m, "busy_photonic", in_flight),
        decode: count(m, "busy_decode", decoding),
        compute: count(m, "compute", any),
    }
}
