//! The whole Lightning datapath on `cores` photonic cores: weight memories, ping-pong
//! activation buffer, the synchronized DAC streamer, per core an ADC preamble
//! detector and decode, and a control plane of count-action units.
//!
//! # Cores
//!
//! Core *c* (0 ≤ *c* < C = `cores`) has its own DAC pair — `dac{2c}` (activations)
//! and `dac{2c+1}` (weights) — its own ADC stream `adc{c}`, detector, decode and
//! weight/sign memories. Output neuron *o* belongs to core *o* mod C (see
//! [`config`](super::config)): in round *r* the cores compute neurons *r*·C …
//! *r*·C + C − 1 together. One sequencer drives all of them in lock-step: every
//! core's activation DAC streams the same word, every weight DAC its core's word,
//! and one synchronized streamer fires all 2C DACs in the same cycle. A layer
//! takes ⌈outputs / C⌉ rounds instead of `outputs` neurons.
//!
//! # Weight source
//!
//! With [`WeightSource::Memory`](super::config::WeightSource::Memory) each core's weights and signs sit in initialised
//! memories, read at issue (magnitudes) and at accept (signs), so the DAC stream of
//! a layer has no gaps. With [`WeightSource::Stream`](super::config::WeightSource::Stream) core *c* has an AXI-Stream
//! slave `w{c}_tvalid`/`w{c}_tready`/`w{c}_tdata[144]` (bits `[127:0]` the 16
//! magnitudes, byte *i* = lane *i*; bits `[143:128]` the 16 sign bits) that must
//! deliver [`DatapathConfig::weight_words`]`(c)` in order, after `start` (an
//! accepted `start` empties the one-word input buffers). `w{c}_tready` depends on
//! no input. A beat is issued only when every core's buffer holds a word (back-
//! pressure: the streamer waits), so an empty stream leaves dark gaps in the DAC
//! streams. To skip the gaps on the ADC side and to bring each word's signs to
//! decode, every core has a **sign FIFO** of [`SIGN_FIFO_DEPTH`] entries: from the
//! end of the preamble until the layer's last beat fires, every DAC cycle pushes
//! one entry (fired or gap, and the fired beat's signs); every window word after
//! the skipped one pops one, and only fired entries' words are taken. The FIFO
//! holds the entries in flight, so the photonic round trip (streamer and DAC
//! delay, photonic latency, detector: 7 + `dac_delay` + latency cycles) must
//! stay below [`SIGN_FIFO_DEPTH`] cycles; a push into a full FIFO aborts the
//! inference with [`FAIL_ROUND_TRIP`] rather than decoding with wrong signs.
//!
//! # Operation
//!
//! **Image load.** While `busy` = 0, `load_valid` writes `load_data` (16 8-bit
//! activations, byte *i* = input `16 · load_addr + i`) into word `load_addr` of
//! bank 0 of the activation buffer; writes while busy are ignored. Inputs past the
//! layer size must be written as 0 (they ride on padding lanes with weight +0).
//! Only loads write bank 0: the hidden layers write banks 1 and 2 in turn (bank 1
//! alone with a single hidden layer), so an image stays loaded across runs and a
//! `start` without a new load runs it again.
//!
//! **Inference.** `start` while idle clears `done`/`failed`/`fail_reason` and
//! starts layer 0. Each weight layer *l*, from its first cycle (`go`):
//! 1. the streamer sends a preamble of `preamble_length` cycles on every DAC and
//!    the detectors are armed (which also closes the previous layer's windows);
//! 2. an *issue* count-action unit (target = beats of *l* = rounds × cycles per
//!    output, one-shot) reads one activation word (bank 0 for *l* = 0, else bank
//!    1 + (*l* − 1) mod 2; word index =
//!    the count of an *activation* unit with target = cycles per output, which
//!    replays the input words for every round) and one weight word per core per
//!    beat; the streamer fires all DACs together;
//! 3. each core's detector locks after `preamble_length` − 1 preamble words (1 if
//!    the length is below 2) and the core drops its window's first word (the last
//!    preamble word); then a per-core *take* unit (target = beats, one-shot) takes
//!    exactly the layer's window words of that core;
//! 4. **join** (C > 1): each core's taken words wait in a buffer of
//!    [`SKEW_DEPTH`] words (cleared by `go`); when every buffer holds a word, all
//!    heads are *accepted* together. So cores whose photonic paths differ in
//!    latency or sample shift still decode in lock-step, as long as no core's
//!    window runs [`SKEW_DEPTH`] or more words ahead of another's (the DAC delay
//!    registers can even out larger differences). With C = 1 a taken word is
//!    accepted at once. An *accept* unit (target = beats, one-shot) counts them;
//!    each accepted word's sign bits are read from its core's sign memory and
//!    the word goes to its core's [`decode`], whose
//!    count-action window emits a neuron every cycles-per-output words — all
//!    cores in the same cycle;
//! 5. a *round* unit (target = rounds, one-shot) counts the rounds. A core's
//!    neuron *r*·C + *c* past the layer's outputs (last round only) is dropped.
//!    Hidden neurons: the round's C activation bytes are placed at the next free
//!    byte of a 16-byte collector; a *lane* unit (count-action, C events per
//!    round, target 16, the excess carried over) holds that byte position and
//!    fires when the word is full, which writes it to layer *l* + 1's bank and
//!    moves the bytes past the word boundary into the next word. The last round
//!    writes the partial word; if its bytes spill past a word boundary, the spilled
//!    word is written in the next cycle. The last layer's neurons leave on
//!    `logit_valid[c]`, `logit_index` (field *c* = the neuron index of core *c*)
//!    and `logit_data` (field *c* = signed `acc_width` bits); within a cycle, field
//!    *c* holds a smaller index than field *c* + 1, so reading the valid fields in
//!    order gives the logits in index order. No back-pressure;
//! 6. the cycle after the round unit fires (and after a spilled word's write), the
//!    next layer starts (`go`), or, after the last layer, `done` rises and `busy`
//!    falls.
//!
//! **Failures** (`failed` and `done` rise, `busy` falls, `fail_reason` says why;
//! it never hangs), by priority when several happen in one cycle:
//! - [`FAIL_NO_LOCK`] — a core's detector timed out (`timeout` cycles after `go`
//!   without a lock: no light, a wrong preamble);
//! - [`FAIL_LOST_LIGHT`] — a core's **watchdog** fired. Per core, a count-action
//!   unit (target = `timeout`, one-shot, cleared by `go` and by every taken word)
//!   counts the cycles in which the core is locked, still owes window words, has
//!   words in flight (data beats fired in this layer > words taken) and takes
//!   none: the ADC stream stopped after the lock (`adc{c}_tvalid` low: light or
//!   converter lost mid-layer). It cannot see light lost while the ADC keeps
//!   delivering valid (dark) words: those decode as zero products. `timeout` must
//!   exceed the few cycles between a lock and the first data word (it must
//!   already exceed the preamble's round trip for the detector);
//! - [`FAIL_ROUND_TRIP`] — streamed weights: a core's sign FIFO overflowed;
//! - [`FAIL_WEIGHTS`] — streamed weights: the **weight watchdog** fired. A
//!   count-action unit (target = `timeout`, one-shot, cleared by `go` and by
//!   every issued beat) counts the cycles in which the layer owes beats, the
//!   streamer has room and some core's one-word weight buffer is empty: a
//!   weight DMA that stops mid-layer, or is never armed, ends the inference
//!   instead of holding `busy` (and with it every command of the board top);
//! - [`FAIL_SKEW`] — a core's join buffer overflowed, reported once every core
//!   has taken all its words (a core that never locks or stops is reason 1 or 2).
//!
//! A failure ends the layer mid-stream, with beats still in the DAC aligners
//! (up to 3 + `dac{j}_delay` cycles of them): the streamer is flushed in the
//! cycle of the failure and in every idle cycle, so no beat of the failed
//! inference lights a modulator once `done` is up (every `dac{j}_tvalid` 0,
//! every sample 0). After a failure the next `start` runs normally.
//!
//! **Status.** `locked` = every core's detector is locked (and this is not a `go`
//! cycle); `core_locked[c]` = core *c*'s detector is locked.
//!
//! **Counters** (32 bits, valid after `done`): `cycles` = cycles from the `start`
//! cycle to the first cycle `done` is 1; `dac_start_cycle` = cycles from `start`
//! to the first cycle with `dac0_tvalid`; `window_open_cycle` = cycles from
//! `start` to the first cycle with `locked`.
//!
//! # Arithmetic contracts
//!
//! `cfg.arith` selects the decode, the detectors' mean and the normalization
//! ([`Arith`]). With [`Arith::ReleasedRtl`] the activation buffer holds 16-bit
//! values (the image's bytes zero-extended, then each hidden neuron's ReLU
//! output); the `normalize` stage tracks each hidden layer's largest value and
//! shifts the next layer's words as they are read; weight sign bits are
//! 1 = positive; the per-layer `shifts` are unused; the `optical_loss{c}`
//! registers are integer gains (1 = unchanged).
//!
//! # Stages
//!
//! [`datapath`] only wires stages, each a function from a typed input struct to
//! a typed output struct of signals, in this order: `sequencer` (layer index,
//! per-layer constants, busy/go/done), `dac_side` (issue and activation units,
//! activation buffer read, the weight source of `weights`, the streamer),
//! `adc_window` (per core: detector, skip, sign FIFO, take unit, watchdog),
//! `join` (skew buffers, accept unit, signs), `decoders` (one decode per core),
//! `writeback` (round unit, neuron indices, the hidden layers' collector and
//! the image-load port), `normalize` (released RTL only: the layer maximum), `failures` (conditions, then `fail_reason`), the
//! sequencer's transitions, and `counters`.
//!
//! **Busy counters** (32 bits, cleared by an accepted `start`, counting while
//! `busy`, valid after `done`; like the released RTL's `latency_counter` and
//! `compute_counter`): `busy_dac_cycles` = cycles in which a data beat fired on
//! the DACs (`fire`; each appears on `dac{j}_tdata` 3 + `dac{j}_delay` cycles
//! later), i.e. the layers' beats; `busy_photonic_cycles` = cycles in which
//! some core has words in flight between DAC and ADC window (data beats fired
//! in the layer > words that core has taken; the watchdog's condition);
//! `busy_decode_cycles` = cycles in which the decoders hold an accumulating
//! neuron (words accepted in the layer > cycles per output × neurons emitted;
//! all cores decode in lock-step); `compute_cycles` = cycles in which any of
//! the three holds. `cycles` − `compute_cycles` is the control overhead
//! (preamble, detector lock, layer turn-around) during which no stage works.
//!
//! Run-time controls are input ports (a register file can drive them):
//! `optical_loss{c}` (Q8.8, core *c*'s loss compensation, c in 0..C),
//! `preamble_length`, `timeout`, `dac{j}_delay`, `dac{j}_shift` (j in 0..2C).
//! Per-layer targets and shifts are generator constants.

mod adc_window;
mod counters;
mod dac_side;
mod decoders;
mod failures;
mod join;
mod normalize;
mod sequencer;
mod weights;
mod writeback;

use super::bus::{PREAMBLE_LENGTH_WIDTH, SAMPLES};
use super::config::{Arith, DatapathConfig};
use super::decode::{decode, DecodeConfig};
use super::preamble_detector::{
    preamble_detector, PreambleDetectorConfig, PreambleMean, TIMEOUT_WIDTH,
};
use super::streamer::core_streamer;
use crate::blocks::count_action::{count_action, CountActionConfig};
use crate::dsl::{bits_for, Domain, Instance, ModuleBuilder, Signal};
use crate::ir::{HdlError, Module, ResetPolarity};
use adc_window::{adc_windows, AdcWindowIn, AdcWindows};
use counters::Counters;
use counters::{busy_counters, counters, Busy, BusyIn, CountersIn};
use dac_side::{dac_side, DacSide, DacSideIn};
use decoders::Decoded;
use decoders::{decoders, DecodersIn};
use failures::{failures, record_reason, FailuresIn};
use join::{join, JoinIn};
use normalize::{track_layer_max, TrackIn};
use sequencer::Sequencer;
use sequencer::{advance, sequencer, AdvanceIn, SequencerIn};
use writeback::{collector, rounds, CollectorIn, Rounds, RoundsIn};

/// Width of one activation or weight-magnitude word: 16 bytes.
pub const BYTE_WORD_WIDTH: u32 = 8 * SAMPLES;
/// Width of the cycle counters.
pub const COUNTER_WIDTH: u32 = 32;
/// Width of `fail_reason`.
pub const FAIL_REASON_WIDTH: u32 = 3;
/// `fail_reason`: no failure.
pub const FAIL_NONE: u64 = 0;
/// `fail_reason`: a core's detector found no preamble within `timeout` cycles.
pub const FAIL_NO_LOCK: u64 = 1;
/// `fail_reason`: a locked core's ADC delivered no word for `timeout` cycles
/// while words were in flight (light or ADC lost mid-layer).
pub const FAIL_LOST_LIGHT: u64 = 2;
/// `fail_reason`: the cores' windows drifted more than [`SKEW_DEPTH`] words apart.
pub const FAIL_SKEW: u64 = 3;
/// `fail_reason`: with streamed weights, a core's sign FIFO overflowed: the
/// photonic round trip is longer than [`SIGN_FIFO_DEPTH`] cycles.
pub const FAIL_ROUND_TRIP: u64 = 4;
/// `fail_reason`: with streamed weights, a beat was owed and some core's weight
/// stream delivered no word for `timeout` cycles (the DMA stopped or was never
/// armed).
pub const FAIL_WEIGHTS: u64 = 5;
/// Every `fail_reason` code with its short name (for register maps) and its
/// meaning (for reports).
pub const FAIL_REASONS: [(u64, &str, &str); 6] = [
    (FAIL_NONE, "none", "no failure"),
    (
        FAIL_NO_LOCK,
        "no lock",
        "no lock: a core's detector found no preamble within `timeout` cycles (no light, a photonic latency longer than the timeout, or modulators out of step)",
    ),
    (
        FAIL_LOST_LIGHT,
        "lost light after lock",
        "lost light: a locked core's ADC delivered no word for `timeout` cycles",
    ),
    (
        FAIL_SKEW,
        "cores out of step beyond the skew buffer",
        "skew: the cores' windows drifted apart further than the join buffer holds",
    ),
    (
        FAIL_ROUND_TRIP,
        "round trip longer than the sign FIFO",
        "round trip: a core's sign FIFO overflowed (the photonic round trip is longer than it holds)",
    ),
    (
        FAIL_WEIGHTS,
        "weight stream stalled",
        "weights stalled: a core's weight stream delivered no word for `timeout` cycles while the layer owed beats",
    ),
];

/// What a `fail_reason` code means, in words for a report.
pub fn fail_reason_text(code: u64) -> &'static str {
    FAIL_REASONS
        .iter()
        .find(|(c, _, _)| *c == code)
        .map_or("unknown fail_reason code", |(_, _, text)| text)
}

/// The codes for a register map: `0 none, 1 no lock, …`.
pub fn fail_reason_codes() -> String {
    let codes: Vec<String> = FAIL_REASONS
        .iter()
        .map(|(code, name, _)| format!("{code} {name}"))
        .collect();
    codes.join(", ")
}

/// Entries of each core's sign FIFO (streamed weights): one per DAC cycle from
/// the end of the preamble until the word comes back through the window.
pub const SIGN_FIFO_DEPTH: u32 = 128;
/// Width of a streamed weight word: 128 magnitude bits, then 16 sign bits.
pub const WEIGHT_STREAM_WIDTH: u32 = BYTE_WORD_WIDTH + SAMPLES;
/// Words each core's window may run ahead of the slowest core's (cores > 1).
pub const SKEW_DEPTH: u32 = 32;

/// Widths derived from a validated configuration.
struct Shape {
    /// Width of every count-action target and count (beats, outputs, 16).
    count: u32,
    /// Width of the layer index.
    layer: u32,
    /// Address bits of one activation bank.
    bank: u32,
    /// Activation banks: bank 0 the image's, banks 1 and 2 the hidden layers'
    /// in turn (2 banks when at most one hidden layer needs no third), so that
    /// no run overwrites the image and a `start` without a new load runs it
    /// again.
    banks: u32,
    /// Address bits that select the bank.
    bank_select: u32,
    /// Words of the weight memory.
    weight_depth: u32,
}

impl Shape {
    fn of(cfg: &DatapathConfig) -> Shape {
        let n = cfg.weight_layers();
        let max_beats = (0..n)
            .map(|l| cfg.beats(l).max(cfg.layers[l + 1]))
            .max()
            .unwrap_or(1);
        let max_words = (0..n)
            .map(|l| cfg.cycles_per_output(l))
            .chain((0..n).map(|l| (cfg.rounds(l) * cfg.cores).div_ceil(SAMPLES)))
            .max()
            .unwrap_or(1);
        let total: u32 = (0..n).map(|l| cfg.beats(l)).sum();
        let banks = (n as u32).clamp(2, 3);
        Shape {
            count: bits_for(max_beats.max(SAMPLES)),
            layer: bits_for((n as u32).saturating_sub(1)),
            bank: bits_for(max_words - 1),
            banks,
            bank_select: bits_for(banks - 1),
            weight_depth: total.max(2),
        }
    }
}

/// Width of one core's field of `logit_index` for `cfg` (valid configurations).
pub fn logit_index_width(cfg: &DatapathConfig) -> u32 {
    Shape::of(cfg).count
}

/// Generates `lightning_datapath` for `cfg` (validated first).
///
/// Ports (C = `cores`): `clk`, `rst` (active high); inputs `start`,
/// `preamble_length[8]`, `timeout[16]`, `dac{j}_delay[6]` and `dac{j}_shift[4]`
/// for j in 0..2C, `adc{c}_tvalid`, `adc{c}_tdata[256]` and `optical_loss{c}[16]`
/// for c in 0..C, `load_valid`, `load_addr[bank bits]`, `load_data[128]`, with streamed
/// weights `w{c}_tvalid`, `w{c}_tdata[144]` (and output `w{c}_tready`); outputs
/// `dac{j}_tvalid`, `dac{j}_tdata[256]`, `fire`, `busy`, `done`, `failed`,
/// `fail_reason[3]`, `locked`, `core_locked[C]`, `layer`, `logit_valid[C]`,
/// `logit_index[C × index bits]`, `logit_data[C × acc_width]`, `cycles[32]`,
/// `dac_start_cycle[32]`, `window_open_cycle[32]`, `busy_dac_cycles[32]`,
/// `busy_photonic_cycles[32]`, `busy_decode_cycles[32]`, `compute_cycles[32]`.
/// See the module docs for the behaviour.
pub fn datapath(cfg: &DatapathConfig) -> Result<Module, HdlError> {
    cfg.validate()?;
    let sh = Shape::of(cfg);
    let units = Units::new(cfg, &sh)?;
    let mut b = ModuleBuilder::new("lightning_datapath");
    let m = &mut b;
    let clk = m.domain("clk", "clk", Some("rst"), ResetPolarity::ActiveHigh);
    let start = m.input("start", 1);
    let preamble_length = m.input("preamble_length", PREAMBLE_LENGTH_WIDTH);
    let timeout = m.input("timeout", TIMEOUT_WIDTH);
    let x = &Common {
        cfg,
        sh: &sh,
        units: &units,
        clk,
        zero: m.lit(0, 1),
        one: m.lit(1, 1),
    };
    let timeout = watchdog_target(m, timeout);

    let seq = &sequencer(m, &SequencerIn { common: x, start });
    let dac = &dac_side(
        m,
        &DacSideIn {
            common: x,
            seq,
            preamble_length,
            watchdog_target: timeout,
        },
    );
    let adc = &adc_windows(
        m,
        &AdcWindowIn {
            common: x,
            seq,
            dac,
            preamble_length,
            timeout,
        },
    );
    let weights = &dac.weights;
    let accepted = &join(
        m,
        &JoinIn {
            common: x,
            seq,
            adc,
            weights,
        },
    );
    let decoded = &decoders(
        m,
        &DecodersIn {
            common: x,
            seq,
            accepted,
        },
    );
    let rounds = &rounds(
        m,
        &RoundsIn {
            common: x,
            seq,
            decoded,
        },
    );
    let act_mem = dac.act_mem;
    let written = collector(
        m,
        &CollectorIn {
            common: x,
            seq,
            decoded,
            rounds,
            act_mem,
        },
    );
    if let Some(shift) = dac.norm_shift {
        let values = &written.values;
        let (write, last_round) = (written.write_event, rounds.last_round);
        let track = TrackIn {
            common: x,
            seq,
            shift,
            values,
            write,
            last_round,
        };
        track_layer_max(m, &track);
    }

    let weights_stalled = dac.weights_stalled;
    let can_fail = FailuresIn {
        seq,
        adc,
        accepted,
        weights_stalled,
    };
    let abort = end_layer_or_fail(m, &can_fail, rounds, written.hidden);
    // Idle, and in the cycle a failure ends the inference, the DACs drop the
    // beats still in their aligners: none lights a modulator once `done` is up.
    let flush = m.or(seq.not_busy, abort);
    m.assign(dac.flush, flush);
    let (dac0_valid, locked) = (dac.dac0_valid, adc.locked);
    let counted = &counters(
        m,
        &CountersIn {
            common: x,
            seq,
            dac0_valid,
            locked,
        },
    );
    let in_flight = adc.windows.iter().map(|w| w.in_flight).collect();
    let (fire, accept, emit) = (dac.fire, accepted.accept, decoded.out_valid);
    let busy = &busy_counters(
        m,
        &BusyIn {
            common: x,
            seq,
            fire,
            in_flight,
            accept,
            emit,
        },
    );
    outputs(
        m,
        &OutputsIn {
            seq,
            dac,
            adc,
            decoded,
            rounds,
            counted,
            busy,
        },
    );
    b.finish()
}

/// `timeout` as the watchdogs' target: 0 counts as 1, as the detectors take it,
/// so that no setting turns a watchdog off.
fn watchdog_target(m: &mut ModuleBuilder, timeout: Signal) -> Signal {
    let timeout_zero = m.eq_const(timeout, 0);
    let one_cycle = m.lit(1, TIMEOUT_WIDTH);
    let target = m.mux(timeout_zero, one_cycle, timeout);
    m.named("watchdog_target", target)
}

/// The end of a layer or of the run: the sequencer moves to the next layer
/// after a hidden layer's last round (`hidden`: the current layer is a hidden
/// one), to `done` after the last layer's or on a failure, whose reason is
/// recorded. Returns the failure's `abort` (the inference ends this cycle).
fn end_layer_or_fail(
    m: &mut ModuleBuilder,
    can_fail: &FailuresIn,
    rounds: &Rounds,
    hidden: Signal,
) -> Signal {
    let seq = can_fail.seq;
    let finish = m.and(rounds.layer_end, seq.constants.is_last);
    let failed = failures(m, can_fail);
    let (layer_end, abort) = (rounds.layer_end, failed.abort);
    advance(
        m,
        &AdvanceIn {
            seq,
            finish,
            abort,
            layer_end,
            hidden,
        },
    );
    record_reason(m, seq, &failed);
    abort
}

/// What every stage shares.
struct Common<'a> {
    /// The validated configuration.
    cfg: &'a DatapathConfig,
    /// Its derived widths.
    sh: &'a Shape,
    /// The submodules.
    units: &'a Units,
    /// The datapath clock.
    clk: Domain,
    /// Constant 0 (one bit).
    zero: Signal,
    /// Constant 1 (one bit).
    one: Signal,
}

impl Common<'_> {
    /// Width of one value in the activation buffer: 8 (wirespeed) or 16 (the
    /// released RTL's ReLU outputs, normalized when read).
    fn value_width(&self) -> u32 {
        match self.cfg.arith {
            Arith::Wirespeed => 8,
            Arith::ReleasedRtl => normalize::VALUE_WIDTH,
        }
    }

    /// Width of one activation buffer word: 16 values.
    fn word_width(&self) -> u32 {
        SAMPLES * self.value_width()
    }
}

/// The submodules the datapath instantiates.
struct Units {
    /// A one-event count-action unit of the count width.
    unit: Module,
    /// The lane unit: `cores` events per cycle.
    lane_unit: Module,
    /// The synchronized streamer of `cores` DAC pairs.
    streamer: Module,
    /// A preamble detector.
    detector: Module,
    /// A watchdog: a count-action unit of the timeout width.
    watchdog: Module,
    /// A decode unit.
    decode: Module,
}

impl Units {
    /// The submodules of `cfg` (validated).
    fn new(cfg: &DatapathConfig, sh: &Shape) -> Result<Units, HdlError> {
        Ok(Units {
            unit: count_action(&CountActionConfig {
                events: 1,
                count_width: sh.count,
            })?,
            lane_unit: count_action(&CountActionConfig {
                events: cfg.cores,
                count_width: sh.count,
            })?,
            streamer: core_streamer(cfg.cores)?,
            detector: preamble_detector(&PreambleDetectorConfig {
                mean: match cfg.arith {
                    Arith::Wirespeed => PreambleMean::Exact,
                    Arith::ReleasedRtl => PreambleMean::Halving,
                },
                ..PreambleDetectorConfig::default()
            })?,
            watchdog: count_action(&CountActionConfig {
                events: 1,
                count_width: TIMEOUT_WIDTH,
            })?,
            decode: decode(&DecodeConfig {
                acc_width: cfg.acc_width,
                target_width: sh.count,
                arith: cfg.arith,
            })?,
        })
    }
}

/// What the status and logit outputs show.
struct OutputsIn<'a> {
    /// The sequencer.
    seq: &'a Sequencer,
    /// The DAC side (`fire`).
    dac: &'a DacSide,
    /// The ADC windows (`core_locked`).
    adc: &'a AdcWindows,
    /// The emitted neurons.
    decoded: &'a Decoded,
    /// The round bookkeeping.
    rounds: &'a Rounds,
    /// The counters.
    counted: &'a Counters,
    /// The busy counters.
    busy: &'a Busy,
}

/// The status, logit and counter outputs.
fn outputs(m: &mut ModuleBuilder, input: &OutputsIn) {
    let seq = input.seq;
    let last = m.and(input.decoded.out_valid, seq.constants.is_last);
    let logit_valid: Vec<Signal> = input
        .rounds
        .exists
        .iter()
        .map(|&e| m.and(last, e))
        .collect();
    let logit_valid = m.join_lanes(&logit_valid);
    let logit_index = m.join_lanes(&input.rounds.indices);
    let logit_data = m.join_lanes(&input.decoded.accs);
    let core_locked = m.join_lanes(&input.adc.core_locked);
    m.output("fire", input.dac.fire);
    m.output("busy", seq.busy);
    m.output("done", seq.done);
    m.output("failed", seq.failed);
    m.output("fail_reason", seq.fail_reason);
    m.output("locked", input.counted.opened);
    m.output("core_locked", core_locked);
    m.output("layer", seq.layer);
    m.output("logit_valid", logit_valid);
    m.output("logit_index", logit_index);
    m.output("logit_data", logit_data);
    m.output("cycles", input.counted.cycles);
    m.output("dac_start_cycle", input.counted.dac_start);
    m.output("window_open_cycle", input.counted.window_open);
    m.output("busy_dac_cycles", input.busy.dac);
    m.output("busy_photonic_cycles", input.busy.photonic);
    m.output("busy_decode_cycles", input.busy.decode);
    m.output("compute_cycles", input.busy.compute);
}

/// A count-action instance counting `events`, cleared by `clear`.
#[allow(clippy::too_many_arguments)]
fn count_unit(
    m: &mut ModuleBuilder,
    unit: &Module,
    name: &str,
    clk: Domain,
    events: Signal,
    clear: Signal,
    one_shot: Signal,
    target: Signal,
) -> Instance {
    let u = m.instance(name, unit);
    m.bind_domain(u, "clk", clk);
    let one = m.lit(1, 1);
    m.connect(u, "events", events);
    m.connect(u, "enable", one);
    m.connect(u, "clear", clear);
    m.connect(u, "one_shot", one_shot);
    m.connect(u, "target", target);
    u
}

/// `s` zero-extended or truncated to `width` bits.
fn fit(m: &mut ModuleBuilder, s: Signal, width: u32) -> Signal {
    if s.width() >= width {
        m.truncate(s, width)
    } else {
        m.zext(s, width)
    }
}

/// 16 bytes to the 16-sample bus: byte *i* becomes sample *i* = `byte << 7`.
fn to_samples(m: &mut ModuleBuilder, bytes: Signal) -> Signal {
    let lanes: Vec<Signal> = m
        .split_lanes(bytes, 8)
        .into_iter()
        .map(|b| {
            let top = m.zeros(1);
            let low = m.zeros(7);
            m.concat(&[top, b, low])
        })
        .collect();
    m.join_lanes(&lanes)
}
