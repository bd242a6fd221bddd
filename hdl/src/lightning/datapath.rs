//! The whole single-core Lightning datapath: weight memory, ping-pong activation
//! buffer, the synchronized DAC streamer, the ADC preamble detector, decode and
//! integration, and a control plane of count-action units.
//!
//! # Operation
//!
//! **Image load.** While `busy` = 0, `load_valid` writes `load_data` (16 8-bit
//! activations, byte *i* = input `16 · load_addr + i`) into word `load_addr` of
//! bank 0 of the activation buffer; writes while busy are ignored. Inputs past the
//! layer size must be written as 0 (they ride on padding lanes with weight +0).
//!
//! **Inference.** `start` while idle clears `done`/`failed` and starts layer 0.
//! Each weight layer *l*, from its first cycle (`go`):
//! 1. the streamer sends a preamble of `preamble_length` cycles on both DACs and
//!    the detector is armed (which also closes the previous layer's window);
//! 2. an *issue* count-action unit (target = beats of *l* = outputs × cycles per
//!    output, one-shot) reads one activation word (bank *l* mod 2, word index =
//!    the count of an *activation* unit with target = cycles per output, which
//!    replays the input words for every neuron) and one weight word per beat; the
//!    streamer fires both DACs together;
//! 3. the detector locks after `preamble_length` − 1 preamble words (1 if the
//!    length is below 2) and the datapath drops the window's first word (the last
//!    preamble word); then an *accept* unit (target = beats, one-shot) takes
//!    exactly the layer's window words; each word's sign bits are read from the
//!    sign memory and the word goes to [`decode`](super::decode::decode), whose
//!    count-action window emits a neuron every cycles-per-output words;
//! 4. a *neuron* unit (target = outputs, one-shot) counts emitted neurons. Hidden
//!    neurons are packed 16 per word by a *lane* unit (target 16) into bank
//!    (*l* + 1) mod 2; the last layer's neurons leave on `logit_valid`,
//!    `logit_index`, `logit_data` (signed `acc_width` bits; no back-pressure);
//! 5. the cycle after the last neuron, the next layer starts (`go`), or, after the
//!    last layer, `done` rises and `busy` falls.
//!
//! If the detector times out (`timeout` cycles after `go` without a lock: no light,
//! a wrong preamble), the inference stops: `failed` and `done` rise, `busy` falls.
//!
//! **Counters** (32 bits, valid after `done`): `cycles` = cycles from the `start`
//! cycle to the first cycle `done` is 1; `dac_start_cycle` = cycles from `start`
//! to the first cycle with `dac0_tvalid`; `window_open_cycle` = cycles from
//! `start` to the first cycle with `locked`.
//!
//! Run-time controls are input ports (a register file can drive them):
//! `optical_loss` (Q8.8), `preamble_length`, `timeout`, `dac{0,1}_delay`,
//! `dac{0,1}_shift`. Per-layer targets and shifts are generator constants.

use super::bus::{BUS_WIDTH, DELAY_WIDTH, PREAMBLE_LENGTH_WIDTH, SAMPLES, SHIFT_WIDTH};
use super::config::DatapathConfig;
use super::decode::{decode, DecodeConfig, LOSS_WIDTH, NORM_SHIFT_WIDTH};
use super::preamble_detector::{preamble_detector, PreambleDetectorConfig, TIMEOUT_WIDTH};
use super::streamer::{streamer, StreamerConfig};
use crate::dsl::{bits_for, Domain, ModuleBuilder, Signal};
use crate::ir::{HdlError, Module, ResetPolarity};
use crate::std::count_action::{count_action, CountActionConfig};

/// Width of one activation or weight-magnitude word: 16 bytes.
pub const BYTE_WORD_WIDTH: u32 = 8 * SAMPLES;
/// Width of the cycle counters.
pub const COUNTER_WIDTH: u32 = 32;

/// Widths derived from a validated configuration.
struct Shape {
    /// Width of every count-action target and count.
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
        let max_beats = (0..n).map(|l| cfg.beats(l)).max().unwrap_or(1);
        let max_words = (0..n)
            .map(|l| cfg.cycles_per_output(l))
            .chain((0..n).map(|l| cfg.layers[l + 1].div_ceil(SAMPLES)))
            .max()
            .unwrap_or(1);
        let total: u32 = (0..n).map(|l| cfg.beats(l)).sum();
        Shape {
            count: bits_for(max_beats.max(SAMPLES)),
            layer: bits_for(n as u32 - 1),
            bank: bits_for(max_words - 1),
            weight_depth: total.max(2),
        }
    }
}

/// Generates `lightning_datapath` for `cfg` (validated first).
///
/// Ports: `clk`, `rst` (active high); inputs `start`, `optical_loss[16]`,
/// `preamble_length[8]`, `timeout[16]`, `dac{0,1}_delay[6]`, `dac{0,1}_shift[4]`,
/// `adc_tvalid`, `adc_tdata[256]`, `load_valid`, `load_addr[bank bits]`,
/// `load_data[128]`; outputs `dac{0,1}_tvalid`, `dac{0,1}_tdata[256]`, `fire`,
/// `busy`, `done`, `failed`, `locked`, `layer`, `logit_valid`, `logit_index`,
/// `logit_data[acc_width]`, `cycles[32]`, `dac_start_cycle[32]`,
/// `window_open_cycle[32]`. See the module docs for the behaviour.
pub fn datapath(cfg: &DatapathConfig) -> Result<Module, HdlError> {
    cfg.validate()?;
    let sh = Shape::of(cfg);
    let n = cfg.weight_layers();
    let unit = count_action(&CountActionConfig {
        events: 1,
        count_width: sh.count,
    })?;
    let streamer_m = streamer(&StreamerConfig { dacs: 2 })?;
    let detector_m = preamble_detector(&PreambleDetectorConfig::default())?;
    let decode_m = decode(&DecodeConfig {
        acc_width: cfg.acc_width,
        target_width: sh.count,
    })?;

    let mut m = ModuleBuilder::new("lightning_datapath");
    let clk = m.domain("clk", "clk", Some("rst"), ResetPolarity::ActiveHigh);
    let start = m.input("start", 1);
    let loss = m.input("optical_loss", LOSS_WIDTH);
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
    let outputs = per_layer(&mut m, sh.count, &|l| u64::from(cfg.layers[l + 1]));
    let shift = per_layer(&mut m, NORM_SHIFT_WIDTH, &|l| u64::from(cfg.shifts[l]));
    let is_last = per_layer(&mut m, 1, &|l| u64::from(l + 1 == n));
    let parity = m.bit(layer, 0);

    // Sequencer state.
    let busy = m.reg(clk, "busy_q", 1);
    let go = m.reg(clk, "go_q", 1);
    let done = m.reg(clk, "done_q", 1);
    let failed = m.reg(clk, "failed_q", 1);
    let not_busy = m.not(busy);
    let start_ok = m.and(start, not_busy);
    let not_go = m.not(go);

    // DAC side: issue reads, replay activations, stream.
    let fire = m.wire("sync_fire", 1);
    let beat_valid = m.reg(clk, "beat_valid_q", 1);
    let issue_done = m.wire("issue_done", 1);
    let not_issue_done = m.not(issue_done);
    let not_beat = m.not(beat_valid);
    let room = m.or(not_beat, fire);
    let issue = m.and_all(&[busy, not_go, not_issue_done, room]);
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

    let weight_addr_w = bits_for(sh.weight_depth - 1);
    let w_addr = m.reg(clk, "weight_addr_q", weight_addr_w);
    let w_inc = m.add_const_wrap(w_addr, 1);
    let w_kept = m.mux(issue, w_inc, w_addr);
    let w_zero = m.zeros(weight_addr_w);
    let w_next = m.mux(start_ok, w_zero, w_kept);
    m.set_next(w_addr, w_next);
    let (magnitudes, signs) = cfg.weight_words();
    let (magnitudes, signs) = pad_depth(magnitudes, signs, sh.weight_depth);
    let w_mem = m.memory(
        "weights",
        BYTE_WORD_WIDTH,
        sh.weight_depth,
        Some(magnitudes),
    );
    let s_mem = m.memory("signs", SAMPLES, sh.weight_depth, Some(signs));
    let weight_word = m.mem_read(w_mem, clk, "weight_word", w_addr, Some(issue));

    let act_mem = m.memory("activations", BYTE_WORD_WIDTH, 2 << sh.bank, None);
    let act_addr = m.concat(&[parity, act_index]);
    let act_word = m.mem_read(act_mem, clk, "act_word", act_addr, Some(issue));

    let st = m.instance("u_streamer", &streamer_m);
    m.bind_domain(st, "clk", clk);
    m.connect(st, "start", go);
    m.connect(st, "preamble_length", preamble_length);
    let act_bus = to_samples(&mut m, act_word);
    let weight_bus = to_samples(&mut m, weight_word);
    for (i, data) in [act_bus, weight_bus].into_iter().enumerate() {
        m.connect(st, &format!("s{i}_tvalid"), beat_valid);
        m.connect(st, &format!("s{i}_tdata"), data);
        let delay = m.input(&format!("dac{i}_delay"), DELAY_WIDTH);
        let shift_in = m.input(&format!("dac{i}_shift"), SHIFT_WIDTH);
        m.connect(st, &format!("dac{i}_delay"), delay);
        m.connect(st, &format!("dac{i}_shift"), shift_in);
    }
    let st_fire = m.instance_output(st, "fire");
    m.assign(fire, st_fire);
    let dac0_valid = m.instance_output(st, "dac0_tvalid");
    for i in 0..2 {
        let v = m.instance_output(st, &format!("dac{i}_tvalid"));
        let data = m.instance_output(st, &format!("dac{i}_tdata"));
        m.output(&format!("dac{i}_tvalid"), v);
        m.output(&format!("dac{i}_tdata"), data);
    }

    // ADC side: preamble lock, accept the layer's window words, decode.
    let adc_valid = m.input("adc_tvalid", 1);
    let adc_data = m.input("adc_tdata", BUS_WIDTH);
    let det = m.instance("u_detector", &detector_m);
    m.bind_domain(det, "clk", clk);
    m.connect(det, "adc_tvalid", adc_valid);
    m.connect(det, "adc_tdata", adc_data);
    m.connect(det, "arm", go);
    // Lock on the first `preamble_length - 1` preamble words and skip the last
    // one in the window: the last word's tail is judged against the mean of a
    // data word, which noise on dark preamble lanes can defeat.
    let two = m.lit(2, PREAMBLE_LENGTH_WIDTH);
    let skip_one = m.ge(preamble_length, two);
    let shorter = m.add_const_wrap(preamble_length, u64::from(u8::MAX));
    let lock_length = m.mux(skip_one, shorter, preamble_length);
    m.connect(det, "preamble_length", lock_length);
    m.connect(det, "timeout", timeout);
    let win_valid = m.instance_output(det, "m_tvalid");
    let win_data = m.instance_output(det, "m_tdata");
    let locked = m.instance_output(det, "locked");
    let det_failed = m.instance_output(det, "failed");

    let accept_done = m.wire("accept_done", 1);
    let not_accept_done = m.not(accept_done);
    // `locked` masks the one stale window word the detector emits after `arm`.
    let skipped = m.reg(clk, "skipped_q", 1);
    let not_skipped = m.not(skipped);
    let skip = m.and_all(&[win_valid, locked, skip_one, not_skipped, not_go]);
    let skipped_or = m.or(skipped, skip);
    let skipped_next = m.and(skipped_or, not_go);
    m.set_next(skipped, skipped_next);
    let no_skip = m.not(skip_one);
    let past_skip = m.or(skipped, no_skip);
    let accept = m.and_all(&[win_valid, locked, past_skip, busy, not_go, not_accept_done]);
    let accept = m.named("accept", accept);
    let accept_u = count_unit(&mut m, &unit, "u_accept", clk, accept, go, one, beats);
    let ad = m.instance_output(accept_u, "done");
    m.assign(accept_done, ad);
    let s_addr = m.reg(clk, "sign_addr_q", weight_addr_w);
    let s_inc = m.add_const_wrap(s_addr, 1);
    let s_kept = m.mux(accept, s_inc, s_addr);
    let s_next = m.mux(start_ok, w_zero, s_kept);
    m.set_next(s_addr, s_next);
    let sign_word = m.mem_read(s_mem, clk, "sign_word", s_addr, Some(accept));
    let in_valid = m.register(clk, "dec_valid_q", accept);
    let in_data = m.reg_no_reset(clk, "dec_data_q", BUS_WIDTH);
    m.set_next(in_data, win_data);

    let dec = m.instance("u_decode", &decode_m);
    m.bind_domain(dec, "clk", clk);
    m.connect(dec, "in_valid", in_valid);
    m.connect(dec, "in_data", in_data);
    m.connect(dec, "signs", sign_word);
    m.connect(dec, "optical_loss", loss);
    m.connect(dec, "cycles_per_output", cpo);
    m.connect(dec, "shift", shift);
    m.connect(dec, "clear", go);
    let out_valid = m.instance_output(dec, "out_valid");
    let out_acc = m.instance_output(dec, "out_acc");
    let out_act = m.instance_output(dec, "out_act");

    let neuron_u = count_unit(&mut m, &unit, "u_neuron", clk, out_valid, go, one, outputs);
    let last_neuron = m.instance_output(neuron_u, "action");
    let neuron_index = m.instance_output(neuron_u, "count");
    let layer_end = m.register(clk, "layer_end_q", last_neuron);

    // Hidden neurons: pack 16 per word into the other bank.
    let hidden = m.not(is_last);
    let wr_ev = m.and(out_valid, hidden);
    let sixteen = m.lit(u64::from(SAMPLES), sh.count);
    let lane_u = count_unit(&mut m, &unit, "u_lane", clk, wr_ev, go, zero, sixteen);
    let lane = m.instance_output(lane_u, "count");
    let full = m.instance_output(lane_u, "action");
    let lane = m.truncate(lane, 4);
    let collector = m.reg(clk, "collector_q", BYTE_WORD_WIDTH);
    let act_wide = m.zext(out_act, BYTE_WORD_WIDTH);
    let three = m.zeros(3);
    let bit_pos = m.concat(&[lane, three]);
    let placed = m.shl_by(act_wide, bit_pos);
    let merged = m.or(collector, placed);
    let flush = m.or(full, last_neuron);
    let write = m.and(wr_ev, flush);
    let empty = m.zeros(BYTE_WORD_WIDTH);
    let kept = m.mux(wr_ev, merged, collector);
    let kept = m.mux(write, empty, kept);
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

    let load_valid = m.input("load_valid", 1);
    let load_addr = m.input("load_addr", sh.bank);
    let load_data = m.input("load_data", BYTE_WORD_WIDTH);
    let load_full_addr = m.concat(&[zero, load_addr]);
    let load_en = m.and(load_valid, not_busy);
    let wa = m.mux(busy, hidden_addr, load_full_addr);
    let wd = m.mux(busy, merged, load_data);
    let we = m.mux(busy, write, load_en);
    m.mem_write(act_mem, clk, wa, wd, we);

    // Sequencer transitions.
    let finish = m.and(layer_end, is_last);
    // In `go` the detector still shows the previous search's failure.
    let abort = m.and_all(&[busy, not_go, det_failed]);
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

    // Counters.
    let cycles = m.reg(clk, "cycles_q", COUNTER_WIDTH);
    let c_inc = m.add_const_wrap(cycles, 1);
    let c_kept = m.mux(busy, c_inc, cycles);
    let c_one = m.lit(1, COUNTER_WIDTH);
    let c_next = m.mux(start_ok, c_one, c_kept);
    m.set_next(cycles, c_next);
    let dac_start = first_event(&mut m, clk, "dac_start", busy, start_ok, dac0_valid, cycles);
    let window_open = first_event(&mut m, clk, "window_open", busy, start_ok, locked, cycles);

    let last = m.and(out_valid, is_last);
    m.output("fire", fire);
    m.output("busy", busy);
    m.output("done", done);
    m.output("failed", failed);
    m.output("locked", locked);
    m.output("layer", layer);
    m.output("logit_valid", last);
    m.output("logit_index", neuron_index);
    m.output("logit_data", out_acc);
    m.output("cycles", cycles);
    m.output("dac_start_cycle", dac_start);
    m.output("window_open_cycle", window_open);
    m.finish()
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
