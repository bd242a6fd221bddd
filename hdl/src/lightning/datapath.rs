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
//! With [`WeightSource::Memory`] each core's weights and signs sit in initialised
//! memories, read at issue (magnitudes) and at accept (signs), so the DAC stream of
//! a layer has no gaps. With [`WeightSource::Stream`] core *c* has an AXI-Stream
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
//! delay, photonic latency, detector: about 7 + `dac_delay` + latency cycles)
//! must stay below [`SIGN_FIFO_DEPTH`] cycles; a push into a full FIFO aborts the
//! inference with [`FAIL_ROUND_TRIP`] rather than decoding with wrong signs.
//!
//! # Operation
//!
//! **Image load.** While `busy` = 0, `load_valid` writes `load_data` (16 8-bit
//! activations, byte *i* = input `16 · load_addr + i`) into word `load_addr` of
//! bank 0 of the activation buffer; writes while busy are ignored. Inputs past the
//! layer size must be written as 0 (they ride on padding lanes with weight +0).
//!
//! **Inference.** `start` while idle clears `done`/`failed`/`fail_reason` and
//! starts layer 0. Each weight layer *l*, from its first cycle (`go`):
//! 1. the streamer sends a preamble of `preamble_length` cycles on every DAC and
//!    the detectors are armed (which also closes the previous layer's windows);
//! 2. an *issue* count-action unit (target = beats of *l* = rounds × cycles per
//!    output, one-shot) reads one activation word (bank *l* mod 2, word index =
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
//!    the word goes to its core's [`decode`](super::decode::decode), whose
//!    count-action window emits a neuron every cycles-per-output words — all
//!    cores in the same cycle;
//! 5. a *round* unit (target = rounds, one-shot) counts the rounds. A core's
//!    neuron *r*·C + *c* past the layer's outputs (last round only) is dropped.
//!    Hidden neurons: the round's C activation bytes are placed at the next free
//!    byte of a 16-byte collector; a *lane* unit (count-action, C events per
//!    round, target 16, the excess carried over) holds that byte position and
//!    fires when the word is full, which writes it to bank (*l* + 1) mod 2 and
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
//! - [`FAIL_SKEW`] — a core's join buffer overflowed, reported once every core
//!   has taken all its words (a core that never locks or stops is reason 1 or 2).
//!
//! After a failure the next `start` runs normally.
//!
//! **Status.** `locked` = every core's detector is locked (and this is not a `go`
//! cycle); `core_locked[c]` = core *c*'s detector is locked.
//!
//! **Counters** (32 bits, valid after `done`): `cycles` = cycles from the `start`
//! cycle to the first cycle `done` is 1; `dac_start_cycle` = cycles from `start`
//! to the first cycle with `dac0_tvalid`; `window_open_cycle` = cycles from
//! `start` to the first cycle with `locked`.
//!
//! Run-time controls are input ports (a register file can drive them):
//! `optical_loss{c}` (Q8.8, per core), `preamble_length`, `timeout`, `dac{j}_delay`,
//! `dac{j}_shift` (j in 0..2C). Per-layer targets and shifts are generator
//! constants.

use super::bus::{BUS_WIDTH, DELAY_WIDTH, PREAMBLE_LENGTH_WIDTH, SAMPLES, SHIFT_WIDTH};
use super::config::{DatapathConfig, WeightSource};
use super::decode::{decode, DecodeConfig, LOSS_WIDTH, NORM_SHIFT_WIDTH};
use super::preamble_detector::{preamble_detector, PreambleDetectorConfig, TIMEOUT_WIDTH};
use super::streamer::core_streamer;
use crate::blocks::count_action::{count_action, CountActionConfig};
use crate::dsl::{bits_for, Domain, ModuleBuilder, Signal};
use crate::ir::{HdlError, Module, ResetPolarity};

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
/// What a `fail_reason` code means, in words for a report.
pub fn fail_reason_text(code: u64) -> &'static str {
    match code {
        FAIL_NONE => "no failure",
        FAIL_NO_LOCK => "no lock: a core's detector found no preamble within `timeout` cycles (is the photonic latency longer than the timeout?)",
        FAIL_LOST_LIGHT => "lost light: a locked core's ADC delivered no word for `timeout` cycles",
        FAIL_SKEW => "skew: the cores' windows drifted apart further than the join buffer holds",
        FAIL_ROUND_TRIP => "round trip: a core's sign FIFO overflowed (the photonic round trip is longer than it holds)",
        _ => "unknown fail_reason code",
    }
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
        Shape {
            count: bits_for(max_beats.max(SAMPLES)),
            layer: bits_for((n as u32).saturating_sub(1)),
            bank: bits_for(max_words - 1),
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
/// `optical_loss{c}[16]` for c in 0..C, `preamble_length[8]`, `timeout[16]`, `dac{j}_delay[6]` and
/// `dac{j}_shift[4]` for j in 0..2C, `adc{c}_tvalid` and `adc{c}_tdata[256]` for c in
/// 0..C, `load_valid`, `load_addr[bank bits]`, `load_data[128]`, with streamed
/// weights `w{c}_tvalid`, `w{c}_tdata[144]` (and output `w{c}_tready`); outputs
/// `dac{j}_tvalid`, `dac{j}_tdata[256]`, `fire`, `busy`, `done`, `failed`,
/// `fail_reason[3]`, `locked`, `core_locked[C]`, `layer`, `logit_valid[C]`,
/// `logit_index[C × index bits]`, `logit_data[C × acc_width]`, `cycles[32]`,
/// `dac_start_cycle[32]`, `window_open_cycle[32]`. See the module docs for the
/// behaviour.
pub fn datapath(cfg: &DatapathConfig) -> Result<Module, HdlError> {
    cfg.validate()?;
    let sh = Shape::of(cfg);
    let n = cfg.weight_layers();
    let cores = cfg.cores;
    let unit = count_action(&CountActionConfig {
        events: 1,
        count_width: sh.count,
    })?;
    let lane_unit = count_action(&CountActionConfig {
        events: cores,
        count_width: sh.count,
    })?;
    let streamer_m = core_streamer(cores)?;
    let detector_m = preamble_detector(&PreambleDetectorConfig::default())?;
    let watchdog_m = count_action(&CountActionConfig {
        events: 1,
        count_width: TIMEOUT_WIDTH,
    })?;
    let decode_m = decode(&DecodeConfig {
        acc_width: cfg.acc_width,
        target_width: sh.count,
    })?;

    let mut m = ModuleBuilder::new("lightning_datapath");
    let clk = m.domain("clk", "clk", Some("rst"), ResetPolarity::ActiveHigh);
    let start = m.input("start", 1);
    let preamble_length = m.input("preamble_length", PREAMBLE_LENGTH_WIDTH);
    let timeout = m.input("timeout", TIMEOUT_WIDTH);
    let zero = m.lit(0, 1);
    let one = m.lit(1, 1);

    // Per-layer constants, selected by the layer index.
    let layer = m.reg(clk, "layer_q", sh.layer);
    let per_layer = |m: &mut ModuleBuilder, width: u32, f: &dyn Fn(usize) -> u64| {
        let values: Vec<Signal> = (0..n).map(|l| m.lit(f(l), width)).collect();
        m.index(layer, &values)
    };
    let cpo = per_layer(&mut m, sh.count, &|l| u64::from(cfg.cycles_per_output(l)));
    let beats = per_layer(&mut m, sh.count, &|l| u64::from(cfg.beats(l)));
    let rounds = per_layer(&mut m, sh.count, &|l| u64::from(cfg.rounds(l)));
    let outputs = per_layer(&mut m, sh.count, &|l| u64::from(cfg.layers[l + 1]));
    let shift = per_layer(&mut m, NORM_SHIFT_WIDTH, &|l| u64::from(cfg.shifts[l]));
    let is_last = per_layer(&mut m, 1, &|l| u64::from(l + 1 == n));
    let parity = m.bit(layer, 0);

    // Sequencer state.
    let busy = m.reg(clk, "busy_q", 1);
    let go = m.reg(clk, "go_q", 1);
    let done = m.reg(clk, "done_q", 1);
    let failed = m.reg(clk, "failed_q", 1);
    let fail_reason = m.reg(clk, "fail_reason_q", FAIL_REASON_WIDTH);
    let not_busy = m.not(busy);
    let start_ok = m.and(start, not_busy);
    let not_go = m.not(go);
    let running = m.and(busy, not_go);

    // DAC side: issue reads, replay activations, stream.
    let fire = m.wire("sync_fire", 1);
    let beat_valid = m.reg(clk, "beat_valid_q", 1);
    let issue_done = m.wire("issue_done", 1);
    let not_issue_done = m.not(issue_done);
    let not_beat = m.not(beat_valid);
    let room = m.or(not_beat, fire);
    let stream = cfg.weight_source == WeightSource::Stream;
    // Streamed weights: every core's one-word buffer must hold a word.
    let weights_ready = m.wire("weights_ready", 1);
    let issue = m.and_all(&[running, not_issue_done, room, weights_ready]);
    let issue = m.named("issue", issue);
    let issue_u = count_unit(&mut m, &unit, "u_issue", clk, issue, go, one, beats);
    let d = m.instance_output(issue_u, "done");
    m.assign(issue_done, d);
    let act_u = count_unit(&mut m, &unit, "u_act", clk, issue, go, zero, cpo);
    let act_index = m.instance_output(act_u, "count");
    let act_index = fit(&mut m, act_index, sh.bank);
    let not_fire = m.not(fire);
    let held = m.and(beat_valid, not_fire);
    let pending = m.or(issue, held);
    let beat_next = m.and(busy, pending);
    m.set_next(beat_valid, beat_next);

    let weights = if stream {
        weight_streams(&mut m, clk, cores, issue, start_ok)
    } else {
        weight_memories(&mut m, clk, cfg, &sh, issue, start_ok)
    };
    m.assign(weights_ready, weights.ready);
    let weight_buses = weights.buses.clone();

    let act_mem = m.memory("activations", BYTE_WORD_WIDTH, 2 << sh.bank, None);
    let act_addr = m.concat(&[parity, act_index]);
    let act_word = m.mem_read(act_mem, clk, "act_word", act_addr, Some(issue));
    let act_bus = to_samples(&mut m, act_word);

    let st = m.instance("u_streamer", &streamer_m);
    m.bind_domain(st, "clk", clk);
    m.connect(st, "start", go);
    m.connect(st, "preamble_length", preamble_length);
    for j in 0..2 * cores {
        let data = if j % 2 == 0 {
            act_bus
        } else {
            weight_buses[(j / 2) as usize]
        };
        m.connect(st, &format!("s{j}_tvalid"), beat_valid);
        m.connect(st, &format!("s{j}_tdata"), data);
        let delay = m.input(&format!("dac{j}_delay"), DELAY_WIDTH);
        let shift_in = m.input(&format!("dac{j}_shift"), SHIFT_WIDTH);
        m.connect(st, &format!("dac{j}_delay"), delay);
        m.connect(st, &format!("dac{j}_shift"), shift_in);
    }
    let st_fire = m.instance_output(st, "fire");
    m.assign(fire, st_fire);
    let dac0_valid = m.instance_output(st, "dac0_tvalid");
    for j in 0..2 * cores {
        let v = m.instance_output(st, &format!("dac{j}_tvalid"));
        let data = m.instance_output(st, &format!("dac{j}_tdata"));
        m.output(&format!("dac{j}_tvalid"), v);
        m.output(&format!("dac{j}_tdata"), data);
    }

    // ADC side, per core: preamble lock, the layer's window words.
    // Lock on the first `preamble_length - 1` preamble words and skip the last
    // one in the window: the last word's tail is judged against the mean of a
    // data word, which noise on dark preamble lanes can defeat.
    let two = m.lit(2, PREAMBLE_LENGTH_WIDTH);
    let skip_one = m.ge(preamble_length, two);
    let shorter = m.add_const_wrap(preamble_length, u64::from(u8::MAX));
    let lock_length = m.mux(skip_one, shorter, preamble_length);
    let no_skip = m.not(skip_one);
    // Data beats fired in this layer (the watchdog's words in flight).
    let fired = m.reg(clk, "fired_q", sh.count);
    let f_inc = m.add_const_wrap(fired, 1);
    let f_kept = m.mux(fire, f_inc, fired);
    let f_zero = m.zeros(sh.count);
    let f_next = m.mux(go, f_zero, f_kept);
    m.set_next(fired, f_next);
    // Streamed weights: record every DAC cycle from the end of the preamble
    // until the layer's last beat fired: whether a beat fired, and its signs.
    let preamble_active = m.instance_output(st, "preamble_active");
    let seen_pre = m.reg(clk, "seen_preamble_q", 1);
    let pre_run = m.and(preamble_active, running);
    let seen_or = m.or(seen_pre, pre_run);
    let seen_next = m.and(seen_or, not_go);
    m.set_next(seen_pre, seen_next);
    let not_pre = m.not(preamble_active);
    let all_fired = m.eq(fired, beats);
    let not_all_fired = m.not(all_fired);
    let record = m.and_all(&[running, seen_pre, not_pre, not_all_fired]);
    let mut round_trip_overflows = Vec::new();
    let mut windows = Vec::new();
    for c in 0..cores {
        let adc_valid = m.input(&format!("adc{c}_tvalid"), 1);
        let adc_data = m.input(&format!("adc{c}_tdata"), BUS_WIDTH);
        let det = m.instance(&format!("u_detector{c}"), &detector_m);
        m.bind_domain(det, "clk", clk);
        m.connect(det, "adc_tvalid", adc_valid);
        m.connect(det, "adc_tdata", adc_data);
        m.connect(det, "arm", go);
        m.connect(det, "preamble_length", lock_length);
        m.connect(det, "timeout", timeout);
        let win_valid = m.instance_output(det, "m_tvalid");
        let win_data = m.instance_output(det, "m_tdata");
        let locked = m.instance_output(det, "locked");
        let failed = m.instance_output(det, "failed");

        // `locked` masks the one stale window word the detector emits after `arm`.
        let skipped = m.reg(clk, &format!("skipped{c}_q"), 1);
        let not_skipped = m.not(skipped);
        let skip = m.and_all(&[win_valid, locked, skip_one, not_skipped, not_go]);
        let skipped_or = m.or(skipped, skip);
        let skipped_next = m.and(skipped_or, not_go);
        m.set_next(skipped, skipped_next);
        let past_skip = m.or(skipped, no_skip);
        let taken_done = m.wire(&format!("taken{c}_done"), 1);
        let not_taken_done = m.not(taken_done);
        let slot = m.and_all(&[win_valid, locked, past_skip, running, not_taken_done]);
        let (take, win_data) = if stream {
            let fifo = sign_fifo(
                &mut m,
                clk,
                c,
                record,
                fire,
                weights.signs[c as usize],
                slot,
                go,
            );
            round_trip_overflows.push(fifo.overflow);
            let take = m.and(slot, fifo.fired);
            (take, m.concat(&[fifo.signs, win_data]))
        } else {
            (slot, win_data)
        };
        let take = m.named(&format!("take{c}"), take);
        let take_u = count_unit(
            &mut m,
            &unit,
            &format!("u_take{c}"),
            clk,
            take,
            go,
            one,
            beats,
        );
        let td = m.instance_output(take_u, "done");
        m.assign(taken_done, td);
        // Watchdog: cycles in which the core is locked, has words in flight
        // (fired, not yet taken) and takes none, up to `timeout`.
        let taken = m.instance_output(take_u, "count");
        let in_flight = m.gt(fired, taken);
        let not_take = m.not(take);
        let starving = m.and_all(&[running, locked, not_taken_done, in_flight, not_take]);
        let wd_clear = m.or(go, take);
        let wd = m.instance(&format!("u_watchdog{c}"), &watchdog_m);
        m.bind_domain(wd, "clk", clk);
        m.connect(wd, "events", starving);
        m.connect(wd, "enable", one);
        m.connect(wd, "clear", wd_clear);
        m.connect(wd, "one_shot", one);
        m.connect(wd, "target", timeout);
        let lost = m.instance_output(wd, "action");
        windows.push(Window {
            take,
            data: win_data,
            locked,
            failed,
            lost,
            taken_done,
        });
    }
    let core_locked: Vec<Signal> = windows.iter().map(|w| w.locked).collect();
    let locked = m.and_all(&core_locked);
    let core_failed: Vec<Signal> = windows.iter().map(|w| w.failed).collect();
    let det_failed = m.or_all(&core_failed);
    let core_lost: Vec<Signal> = windows.iter().map(|w| w.lost).collect();
    let light_lost = m.or_all(&core_lost);
    let core_taken: Vec<Signal> = windows.iter().map(|w| w.taken_done).collect();
    let all_taken = m.and_all(&core_taken);

    // Join: one accept for all cores, each core's word on the next cycle.
    let accept_done = m.wire("accept_done", 1);
    let not_accept_done = m.not(accept_done);
    let joined = join_windows(
        &mut m,
        clk,
        &windows,
        go,
        running,
        not_accept_done,
        all_taken,
    );
    let accept = m.named("accept", joined.accept);
    let accept_u = count_unit(&mut m, &unit, "u_accept", clk, accept, go, one, beats);
    let ad = m.instance_output(accept_u, "done");
    m.assign(accept_done, ad);
    // Memory weights: the sign memory is read at accept, in streaming order.
    let s_addr = if stream {
        None
    } else {
        let aw = weights.addr_width;
        let s_addr = m.reg(clk, "sign_addr_q", aw);
        let s_inc = m.add_const_wrap(s_addr, 1);
        let s_kept = m.mux(accept, s_inc, s_addr);
        let s_zero = m.zeros(aw);
        let s_next = m.mux(start_ok, s_zero, s_kept);
        m.set_next(s_addr, s_next);
        Some(s_addr)
    };
    let in_valid = m.register(clk, "dec_valid_q", accept);
    let mut sign_words = Vec::new();
    let mut buses = Vec::new();
    for (c, &data) in joined.data.iter().enumerate() {
        match (s_addr, weights.sign_mems.get(c)) {
            (Some(addr), Some(&mem)) => {
                let name = format!("sign_word{c}");
                sign_words.push(m.mem_read(mem, clk, &name, addr, Some(accept)));
                buses.push(data);
            }
            _ => {
                sign_words.push(m.slice(data, BUS_WIDTH, SAMPLES));
                buses.push(m.truncate(data, BUS_WIDTH));
            }
        }
    }

    let mut decoded = Vec::new();
    for (c, (&sign_word, &data)) in sign_words.iter().zip(&buses).enumerate() {
        let dec = m.instance(&format!("u_decode{c}"), &decode_m);
        m.bind_domain(dec, "clk", clk);
        m.connect(dec, "in_valid", in_valid);
        m.connect(dec, "in_data", data);
        m.connect(dec, "signs", sign_word);
        let loss = m.input(&format!("optical_loss{c}"), LOSS_WIDTH);
        m.connect(dec, "optical_loss", loss);
        m.connect(dec, "cycles_per_output", cpo);
        m.connect(dec, "shift", shift);
        m.connect(dec, "clear", go);
        let valid = m.instance_output(dec, "out_valid");
        let acc = m.instance_output(dec, "out_acc");
        let act = m.instance_output(dec, "out_act");
        decoded.push((valid, acc, act));
    }
    // All decoders run in lock-step: core 0's strobe marks every round.
    let out_valid = decoded[0].0;

    let round_u = count_unit(&mut m, &unit, "u_round", clk, out_valid, go, one, rounds);
    let last_round = m.instance_output(round_u, "action");
    let round = m.instance_output(round_u, "count");
    let layer_end = m.register(clk, "layer_end_q", last_round);

    // Neuron round * cores + c of core c exists if it is below the outputs.
    let index_w = sh.count + bits_for(cores);
    let round_x = m.zext(round, index_w);
    let cores_lit = m.lit(u64::from(cores), index_w);
    let base = m.mul(round_x, cores_lit);
    let base = m.truncate(base, index_w);
    let outputs_x = m.zext(outputs, index_w);
    let mut indices = Vec::new();
    let mut exists = Vec::new();
    for c in 0..cores {
        let idx = m.add_const_wrap(base, u64::from(c));
        exists.push(m.lt(idx, outputs_x));
        indices.push(m.truncate(idx, sh.count));
    }

    // Hidden neurons: C bytes per round into a 16-byte collector; a lane unit
    // (count-action, C events per round, target 16) tracks the byte position and
    // fires when a word is full, the excess carrying over into the next word.
    let hidden = m.not(is_last);
    let wr_ev = m.and(out_valid, hidden);
    let sixteen = m.lit(u64::from(SAMPLES), sh.count);
    let lane_events = m.replicate(wr_ev, cores);
    let lane_u = count_unit(
        &mut m,
        &lane_unit,
        "u_lane",
        clk,
        lane_events,
        go,
        zero,
        sixteen,
    );
    let lane = m.instance_output(lane_u, "count");
    let full = m.instance_output(lane_u, "action");
    let lane = m.truncate(lane, 4);
    let zero_byte = m.zeros(8);
    let bytes: Vec<Signal> = decoded
        .iter()
        .zip(&exists)
        .map(|(&(_, _, act), &e)| m.mux(e, act, zero_byte))
        .collect();
    let round_bytes = m.join_lanes(&bytes);
    let wide = 2 * BYTE_WORD_WIDTH;
    let round_wide = m.zext(round_bytes, wide);
    let three = m.zeros(3);
    let bit_pos = m.concat(&[lane, three]);
    let placed = m.shl_by(round_wide, bit_pos);
    let placed_low = m.truncate(placed, BYTE_WORD_WIDTH);
    let placed_high = m.slice(placed, BYTE_WORD_WIDTH, BYTE_WORD_WIDTH);
    let collector = m.reg(clk, "collector_q", BYTE_WORD_WIDTH);
    let merged = m.or(collector, placed_low);
    let flush = m.or(full, last_round);
    let write_round = m.and(wr_ev, flush);
    // A last round that spills past a word boundary writes its tail next cycle.
    let lane5 = m.zext(lane, 5);
    let end_lane = m.add_const_wrap(lane5, u64::from(cores));
    let word_end = m.lit(u64::from(SAMPLES), 5);
    let spills = m.gt(end_lane, word_end);
    let tail = m.reg(clk, "tail_q", 1);
    let tail_next = m.and_all(&[wr_ev, last_round, spills]);
    m.set_next(tail, tail_next);
    let write = m.or(write_round, tail);
    let empty = m.zeros(BYTE_WORD_WIDTH);
    let after_write = m.mux(full, placed_high, empty);
    let kept = m.mux(wr_ev, merged, collector);
    let kept = m.mux(write_round, after_write, kept);
    let coll_next = m.mux(go, empty, kept);
    m.set_next(collector, coll_next);
    let word_index = m.reg(clk, "write_index_q", sh.bank);
    let wi_inc = m.add_const_wrap(word_index, 1);
    let wi_kept = m.mux(write, wi_inc, word_index);
    let wi_zero = m.zeros(sh.bank);
    let wi_next = m.mux(go, wi_zero, wi_kept);
    m.set_next(word_index, wi_next);
    let other = m.not(parity);
    let hidden_addr = m.concat(&[other, word_index]);
    let hidden_data = m.mux(tail, collector, merged);

    let load_valid = m.input("load_valid", 1);
    let load_addr = m.input("load_addr", sh.bank);
    let load_data = m.input("load_data", BYTE_WORD_WIDTH);
    let load_full_addr = m.concat(&[zero, load_addr]);
    let load_en = m.and(load_valid, not_busy);
    let wa = m.mux(busy, hidden_addr, load_full_addr);
    let wd = m.mux(busy, hidden_data, load_data);
    let we = m.mux(busy, write, load_en);
    m.mem_write(act_mem, clk, wa, wd, we);

    // Sequencer transitions.
    let finish = m.and(layer_end, is_last);
    // In `go` the detectors still show the previous search's failure.
    let no_lock = m.and(running, det_failed);
    let no_light = m.and(running, light_lost);
    let skewed = m.and(running, joined.overflow);
    let trip_any = if round_trip_overflows.is_empty() {
        m.zeros(1)
    } else {
        m.or_all(&round_trip_overflows)
    };
    let too_long = m.and(running, trip_any);
    let abort = m.or_all(&[no_lock, no_light, too_long, skewed]);
    let ends = m.or(finish, abort);
    let not_ends = m.not(ends);
    let stays = m.and(busy, not_ends);
    let busy_next = m.or(start_ok, stays);
    m.set_next(busy, busy_next);
    let more = m.and_all(&[layer_end, hidden, busy]);
    let go_next = m.or(start_ok, more);
    m.set_next(go, go_next);
    let l_inc = m.add_const_wrap(layer, 1);
    let l_kept = m.mux(more, l_inc, layer);
    let l_zero = m.zeros(sh.layer);
    let l_next = m.mux(start_ok, l_zero, l_kept);
    m.set_next(layer, l_next);
    let done_or = m.or(done, ends);
    let not_start = m.not(start_ok);
    let done_next = m.and(not_start, done_or);
    m.set_next(done, done_next);
    let failed_or = m.or(failed, abort);
    let failed_next = m.and(not_start, failed_or);
    m.set_next(failed, failed_next);
    let reason_no_lock = m.lit(FAIL_NO_LOCK, FAIL_REASON_WIDTH);
    let reason_skew = m.lit(FAIL_SKEW, FAIL_REASON_WIDTH);
    let reason_none = m.zeros(FAIL_REASON_WIDTH);
    let reason_lost = m.lit(FAIL_LOST_LIGHT, FAIL_REASON_WIDTH);
    let reason_trip = m.lit(FAIL_ROUND_TRIP, FAIL_REASON_WIDTH);
    let new_reason = m.mux(too_long, reason_trip, reason_skew);
    let new_reason = m.mux(no_light, reason_lost, new_reason);
    let new_reason = m.mux(no_lock, reason_no_lock, new_reason);
    let not_failed = m.not(failed);
    let first_abort = m.and(abort, not_failed);
    let reason_kept = m.mux(first_abort, new_reason, fail_reason);
    let reason_next = m.mux(start_ok, reason_none, reason_kept);
    m.set_next(fail_reason, reason_next);

    // Counters.
    let cycles = m.reg(clk, "cycles_q", COUNTER_WIDTH);
    let c_inc = m.add_const_wrap(cycles, 1);
    let c_kept = m.mux(busy, c_inc, cycles);
    let c_one = m.lit(1, COUNTER_WIDTH);
    let c_next = m.mux(start_ok, c_one, c_kept);
    m.set_next(cycles, c_next);
    let dac_start = first_event(&mut m, clk, "dac_start", busy, start_ok, dac0_valid, cycles);
    // In `go` the detectors still show the previous layer's lock.
    let opened = m.and(locked, not_go);
    let window_open = first_event(&mut m, clk, "window_open", busy, start_ok, opened, cycles);

    let last = m.and(out_valid, is_last);
    let logit_valid: Vec<Signal> = exists.iter().map(|&e| m.and(last, e)).collect();
    let logit_valid = m.join_lanes(&logit_valid);
    let logit_index = m.join_lanes(&indices);
    let accs: Vec<Signal> = decoded.iter().map(|d| d.1).collect();
    let logit_data = m.join_lanes(&accs);
    let core_locked = m.join_lanes(&core_locked);
    m.output("fire", fire);
    m.output("busy", busy);
    m.output("done", done);
    m.output("failed", failed);
    m.output("fail_reason", fail_reason);
    m.output("locked", opened);
    m.output("core_locked", core_locked);
    m.output("layer", layer);
    m.output("logit_valid", logit_valid);
    m.output("logit_index", logit_index);
    m.output("logit_data", logit_data);
    m.output("cycles", cycles);
    m.output("dac_start_cycle", dac_start);
    m.output("window_open_cycle", window_open);
    m.finish()
}

/// One core's ADC window after its preamble lock.
struct Window {
    /// The layer's next data word is on `data` (a one-shot unit stops after
    /// `beats` words).
    take: Signal,
    /// The detector's realigned window word.
    data: Signal,
    /// The core's detector is locked.
    locked: Signal,
    /// The core's detector timed out.
    failed: Signal,
    /// The core's watchdog fired: its ADC stopped with words in flight.
    lost: Signal,
    /// The core has taken all of the layer's words.
    taken_done: Signal,
}

/// The cores' windows joined into one accept strobe.
struct Joined {
    /// All cores' next words are accepted in this cycle.
    accept: Signal,
    /// Per core, the accepted word, in the cycle after `accept`.
    data: Vec<Signal>,
    /// A core's words ran `SKEW_DEPTH` words ahead of another's (sticky per
    /// layer; reported once every core has taken all its words).
    overflow: Signal,
}

/// Joins the cores' windows: with one core a word is accepted as it is taken;
/// with more, each core's words wait in a small buffer (`SKEW_DEPTH` words,
/// cleared by `go`) and all cores' heads are accepted together when every buffer
/// holds one.
#[allow(clippy::too_many_arguments)]
fn join_windows(
    m: &mut ModuleBuilder,
    clk: Domain,
    windows: &[Window],
    go: Signal,
    running: Signal,
    not_accept_done: Signal,
    all_taken: Signal,
) -> Joined {
    if let [w] = windows {
        let data = m.reg_no_reset(clk, "dec_data_q", w.data.width());
        m.set_next(data, w.data);
        return Joined {
            accept: w.take,
            data: vec![data],
            overflow: m.zeros(1),
        };
    }
    let aw = SKEW_DEPTH.trailing_zeros();
    let rptr = m.reg(clk, "skew_rd_q", aw + 1);
    let mut avail = Vec::new();
    let mut overflows = Vec::new();
    let mut mems = Vec::new();
    for (c, w) in windows.iter().enumerate() {
        let wptr = m.reg(clk, &format!("skew_wr{c}_q"), aw + 1);
        let held = m.sub_wrap(wptr, rptr);
        let is_full = m.eq_const(held, u64::from(SKEW_DEPTH));
        let not_full = m.not(is_full);
        let push = m.and(w.take, not_full);
        let mem = m.memory(&format!("skew{c}"), w.data.width(), SKEW_DEPTH, None);
        let waddr = m.truncate(wptr, aw);
        m.mem_write(mem, clk, waddr, w.data, push);
        let w_inc = m.add_const_wrap(wptr, 1);
        let w_kept = m.mux(push, w_inc, wptr);
        let ptr_zero = m.zeros(aw + 1);
        let w_next = m.mux(go, ptr_zero, w_kept);
        m.set_next(wptr, w_next);
        avail.push(m.ne(wptr, rptr));
        overflows.push(m.and(w.take, is_full));
        mems.push(mem);
    }
    let ready = m.and_all(&avail);
    let accept = m.and_all(&[ready, running, not_accept_done]);
    let raddr = m.truncate(rptr, aw);
    let data = mems
        .iter()
        .enumerate()
        .map(|(c, &mem)| m.mem_read(mem, clk, &format!("skew_word{c}"), raddr, Some(accept)))
        .collect();
    let r_inc = m.add_const_wrap(rptr, 1);
    let r_kept = m.mux(accept, r_inc, rptr);
    let ptr_zero = m.zeros(aw + 1);
    let r_next = m.mux(go, ptr_zero, r_kept);
    m.set_next(rptr, r_next);
    // A dropped word is fatal, but only reported once every core has taken its
    // words: a core that never locks or stops is reason 1 or 2, not skew.
    let lost = m.reg(clk, "skew_lost_q", 1);
    let any = m.or_all(&overflows);
    let lost_or = m.or(lost, any);
    let not_go = m.not(go);
    let lost_next = m.and(lost_or, not_go);
    m.set_next(lost, lost_next);
    let overflow = m.and(lost, all_taken);
    Joined {
        accept,
        data,
        overflow,
    }
}

/// The weight side of the DAC streams.
struct Weights {
    /// Every core has a word for the next beat.
    ready: Signal,
    /// Per core, the weight beat (16 samples), registered at `issue`.
    buses: Vec<Signal>,
    /// Per core, the beat's 16 sign bits (streamed weights).
    signs: Vec<Signal>,
    /// Per core, the sign memory (memory weights).
    sign_mems: Vec<crate::dsl::Memory>,
    /// Width of the weight/sign memory address.
    addr_width: u32,
}

/// Weights from initialised on-chip memories: one read per `issue`.
fn weight_memories(
    m: &mut ModuleBuilder,
    clk: Domain,
    cfg: &DatapathConfig,
    sh: &Shape,
    issue: Signal,
    start_ok: Signal,
) -> Weights {
    let addr_width = bits_for(sh.weight_depth - 1);
    let w_addr = m.reg(clk, "weight_addr_q", addr_width);
    let w_inc = m.add_const_wrap(w_addr, 1);
    let w_kept = m.mux(issue, w_inc, w_addr);
    let w_zero = m.zeros(addr_width);
    let w_next = m.mux(start_ok, w_zero, w_kept);
    m.set_next(w_addr, w_next);
    let mut sign_mems = Vec::new();
    let mut buses = Vec::new();
    for c in 0..cfg.cores {
        let (magnitudes, signs) = cfg.weight_words(c);
        let (magnitudes, signs) = pad_depth(magnitudes, signs, sh.weight_depth);
        let w_mem = m.memory(
            &format!("weights{c}"),
            BYTE_WORD_WIDTH,
            sh.weight_depth,
            Some(magnitudes),
        );
        sign_mems.push(m.memory(&format!("signs{c}"), SAMPLES, sh.weight_depth, Some(signs)));
        let word = m.mem_read(w_mem, clk, &format!("weight_word{c}"), w_addr, Some(issue));
        buses.push(to_samples(m, word));
    }
    Weights {
        ready: m.lit(1, 1),
        buses,
        signs: Vec::new(),
        sign_mems,
        addr_width,
    }
}

/// Weights from one AXI-Stream slave per core, each into a one-word buffer.
/// `w{c}_tready` = buffer empty or being issued (registered state only, so it
/// never depends on `tvalid`); `issue` takes every core's buffered word at once;
/// an accepted `start` empties the buffers.
fn weight_streams(
    m: &mut ModuleBuilder,
    clk: Domain,
    cores: u32,
    issue: Signal,
    start_ok: Signal,
) -> Weights {
    let mut held_all = Vec::new();
    let mut buses = Vec::new();
    let mut signs = Vec::new();
    for c in 0..cores {
        let valid = m.input(&format!("w{c}_tvalid"), 1);
        let data = m.input(&format!("w{c}_tdata"), WEIGHT_STREAM_WIDTH);
        let held = m.reg(clk, &format!("w{c}_held_q"), 1);
        let word = m.reg_no_reset(clk, &format!("w{c}_word_q"), WEIGHT_STREAM_WIDTH);
        let not_held = m.not(held);
        let ready = m.or(not_held, issue);
        let taken = m.and(valid, ready);
        let not_issue = m.not(issue);
        let stays = m.and(held, not_issue);
        let held_or = m.or(taken, stays);
        let not_start = m.not(start_ok);
        let held_next = m.and(held_or, not_start);
        m.set_next(held, held_next);
        let word_next = m.mux(taken, data, word);
        m.set_next(word, word_next);
        m.output(&format!("w{c}_tready"), ready);
        held_all.push(held);
        let magnitudes = m.truncate(word, BYTE_WORD_WIDTH);
        let beat = m.register_en(clk, &format!("weight_word{c}"), magnitudes, issue);
        buses.push(to_samples(m, beat));
        let sign = m.slice(word, BYTE_WORD_WIDTH, SAMPLES);
        signs.push(m.register_en(clk, &format!("beat_signs{c}"), sign, issue));
    }
    Weights {
        ready: m.and_all(&held_all),
        buses,
        signs,
        sign_mems: Vec::new(),
        addr_width: 1,
    }
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
#[allow(clippy::too_many_arguments)]
fn sign_fifo(
    m: &mut ModuleBuilder,
    clk: Domain,
    c: u32,
    record: Signal,
    fire: Signal,
    signs: Signal,
    slot: Signal,
    go: Signal,
) -> SignFifo {
    let aw = SIGN_FIFO_DEPTH.trailing_zeros();
    let wp = m.reg(clk, &format!("sign_wr{c}_q"), aw + 1);
    let rp = m.reg(clk, &format!("sign_rd{c}_q"), aw + 1);
    let held = m.sub_wrap(wp, rp);
    let full = m.eq_const(held, u64::from(SIGN_FIFO_DEPTH));
    let not_full = m.not(full);
    let push = m.and(record, not_full);
    let overflow = m.and(record, full);
    let mem = m.memory(&format!("sign_fifo{c}"), SAMPLES + 1, SIGN_FIFO_DEPTH, None);
    let entry = m.concat(&[signs, fire]);
    let waddr = m.truncate(wp, aw);
    m.mem_write(mem, clk, waddr, entry, push);
    let zero = m.zeros(aw + 1);
    let wp_inc = m.add_const_wrap(wp, 1);
    let wp_kept = m.mux(push, wp_inc, wp);
    let wp_next = m.mux(go, zero, wp_kept);
    m.set_next(wp, wp_next);
    let rp_inc = m.add_const_wrap(rp, 1);
    let rp_kept = m.mux(slot, rp_inc, rp);
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
) -> crate::dsl::Instance {
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

/// The value of `cycles` in the first busy cycle where `event` is 1 since the
/// last `start`: a captured counter.
fn first_event(
    m: &mut ModuleBuilder,
    clk: Domain,
    name: &str,
    busy: Signal,
    start: Signal,
    event: Signal,
    cycles: Signal,
) -> Signal {
    let seen = m.reg(clk, &format!("{name}_seen_q"), 1);
    let value = m.reg(clk, &format!("{name}_cycle_q"), COUNTER_WIDTH);
    let not_seen = m.not(seen);
    let hit = m.and_all(&[busy, event, not_seen]);
    let seen_or = m.or(seen, hit);
    let not_start = m.not(start);
    let seen_next = m.and(not_start, seen_or);
    m.set_next(seen, seen_next);
    let zero = m.zeros(COUNTER_WIDTH);
    let captured = m.mux(hit, cycles, value);
    let value_next = m.mux(start, zero, captured);
    m.set_next(value, value_next);
    value
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

/// The memory images padded with zero words to `depth`.
fn pad_depth(
    mut magnitudes: Vec<crate::bits::Bits>,
    mut signs: Vec<crate::bits::Bits>,
    depth: u32,
) -> (Vec<crate::bits::Bits>, Vec<crate::bits::Bits>) {
    magnitudes.resize(depth as usize, crate::bits::Bits::zero(BYTE_WORD_WIDTH));
    signs.resize(depth as usize, crate::bits::Bits::zero(SAMPLES));
    (magnitudes, signs)
}
