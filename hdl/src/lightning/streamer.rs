//! The synchronized DAC streamer (spec steps 1–3): one count-action unit starts all
//! DAC streams in the same cycle, a second one times the preamble before a layer,
//! and each stream then passes through its own operand alignment
//! ([`operand_align`]).
//!
//! ```text
//! module synchronized_data_streamer {
//!   counts:  { sum DAC[i].valid (i = 1 to num_DACs) }
//!   targets: { num_DACs }
//!   actions: { stream DAC[i].data (i = 1 to num_DACs) }
//! };
//! ```
//!
//! # Semantics (cycle-exact)
//!
//! In [`streamer`], stream 0 carries activations and streams 1.. carry weights; in
//! [`core_streamer`] (one pair per photonic core) even streams carry activations
//! and odd streams weights. The two differ only in the preamble patterns. Sources
//! are AXI-Stream
//! (`s{i}_tvalid`, `s{i}_tdata`, `s{i}_tready`); a source is expected to hold
//! `tvalid` and its beat until it is taken.
//!
//! **Preamble.** `start` = 1 in cycle *c* makes cycles *c*+1 … *c*+L preamble
//! cycles, L = `preamble_length` sampled as the preamble runs (0 = no preamble;
//! lowering it below the cycles already sent ends the preamble at once). A second
//! preamble counter, a count-action unit (events = "this is a preamble cycle",
//! target = `preamble_length`, cleared by `start`), fires in the last preamble
//! cycle. A `start` during a preamble restarts it: L more cycles follow. In a
//! preamble cycle every stream emits a valid word of its pattern: activations all
//! `0xFFFF`; weights samples 0–7 = `255 << 7`, samples 8–15 = 0.
//! `preamble_active` (registered) is 1 exactly in preamble cycles.
//!
//! **Synchronized streaming.** The sync unit counts *arrivals*: a source whose
//! `tvalid` is 1 and that has not been counted yet adds one event; the unit's
//! target is the number of DACs, so its action fires in the first cycle in which
//! every source is valid. In that cycle `fire` = 1 and every `s{i}_tready` = 1
//! (combinationally; all sources pop together) and every stream emits its source's
//! beat as a valid word. The unit and the arrival flags are cleared (nothing fires)
//! in `start` cycles, in preamble cycles, and in a cycle where a counted source has
//! dropped `tvalid` without being taken (an AXI violation; the others are counted
//! afresh from the next cycle). So `fire` implies every source is valid in that
//! cycle, and with AXI-compliant sources `fire` = (all `tvalid`) outside the
//! preamble and `start` cycles: one beat per cycle at full rate.
//!
//! In all other cycles the streams emit idle words (valid 0, samples 0).
//!
//! **Alignment and latency.** Stream *i*'s words go through an aligner with
//! `dac{i}_delay` (0–63) and `dac{i}_shift` (0–15): the word of cycle *n* leaves
//! on `dac{i}_tvalid`/`dac{i}_tdata` in cycle *n* + 3 + delay, its sample *j* at
//! position *j* + shift (the top `shift` samples carried into the next cycle).
//! With equal delays and shifts all DAC outputs are valid in the same cycle.
//! `flush` = 1 in a cycle flushes every aligner: no word of that cycle or an
//! earlier one leaves after it (the aligner's contract), so an owner that
//! aborts a stream leaves no beat behind on any DAC.

use super::align::operand_align;
use super::bus::{
    activation_preamble, bus_constant, weight_preamble, BUS_WIDTH, DELAY_WIDTH,
    PREAMBLE_LENGTH_WIDTH, SHIFT_WIDTH,
};
use crate::blocks::count_action::{count_action, CountActionConfig};
use crate::dsl::{bits_for, ModuleBuilder};
use crate::ir::{HdlError, Module, ResetPolarity};

/// Largest number of DAC streams of [`streamer`].
pub const MAX_DACS: u32 = 8;
/// Largest number of cores (DAC pairs) of [`core_streamer`].
pub const MAX_CORE_PAIRS: u32 = 8;

/// Shape of a synchronized DAC streamer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StreamerConfig {
    /// Number of DAC streams (1..=8): stream 0 activations, the others weights.
    pub dacs: u32,
}

impl Default for StreamerConfig {
    /// Two DACs: activations and weights.
    fn default() -> Self {
        StreamerConfig { dacs: 2 }
    }
}

/// Generates `lightning_streamer_d{dacs}`.
///
/// Ports: `clk`, `rst` (active high); `start`, `preamble_length[8]`, `flush`; per stream
/// *i*: inputs `s{i}_tvalid`, `s{i}_tdata[256]`, `dac{i}_delay[6]`,
/// `dac{i}_shift[4]`, outputs `s{i}_tready`, `dac{i}_tvalid`, `dac{i}_tdata[256]`;
/// outputs `fire` (the sync unit's action, combinational) and `preamble_active`
/// (registered). See the module docs for the cycle-level contract.
pub fn streamer(cfg: &StreamerConfig) -> Result<Module, HdlError> {
    if !(1..=MAX_DACS).contains(&cfg.dacs) {
        return Err(HdlError::parameter(
            "lightning_streamer",
            "dacs",
            format!("{} is not in 1..={MAX_DACS}", cfg.dacs),
        ));
    }
    build(
        &format!("lightning_streamer_d{}", cfg.dacs),
        cfg.dacs,
        |i| i == 0,
    )
}

/// Generates `lightning_streamer_c{cores}`: the streamer of `cores` photonic
/// cores (1..=8), one synchronized group of 2 · `cores` DAC streams: stream 2*c*
/// carries core *c*'s activations (activation preamble), stream 2*c* + 1 its
/// weights (weight preamble). Same ports and contract as [`streamer`].
pub fn core_streamer(cores: u32) -> Result<Module, HdlError> {
    if !(1..=MAX_CORE_PAIRS).contains(&cores) {
        return Err(HdlError::parameter(
            "lightning_streamer",
            "cores",
            format!("{cores} is not in 1..={MAX_CORE_PAIRS}"),
        ));
    }
    build(&format!("lightning_streamer_c{cores}"), 2 * cores, |i| {
        i % 2 == 0
    })
}

/// The streamer of `dacs` streams; `is_activation(i)` picks stream *i*'s preamble.
fn build(name: &str, dacs: u32, is_activation: impl Fn(u32) -> bool) -> Result<Module, HdlError> {
    let sync_unit = count_action(&CountActionConfig {
        events: dacs,
        count_width: bits_for(dacs),
    })?;
    let preamble_unit = count_action(&CountActionConfig {
        events: 1,
        count_width: PREAMBLE_LENGTH_WIDTH,
    })?;
    let aligner = operand_align()?;

    let mut m = ModuleBuilder::new(name);
    let clk = m.domain("clk", "clk", Some("rst"), ResetPolarity::ActiveHigh);
    let start = m.input("start", 1);
    let preamble_length = m.input("preamble_length", PREAMBLE_LENGTH_WIDTH);
    let flush = m.input("flush", 1);
    let zero = m.lit(0, 1);
    let one = m.lit(1, 1);

    // Preamble: a count-action unit counts preamble cycles up to the length.
    let pre_q = m.reg(clk, "preamble_q", 1);
    let pre_unit = m.instance("u_preamble", &preamble_unit);
    m.bind_domain(pre_unit, "clk", clk);
    m.connect(pre_unit, "events", pre_q);
    m.connect(pre_unit, "enable", one);
    m.connect(pre_unit, "clear", start);
    m.connect(pre_unit, "one_shot", zero);
    m.connect(pre_unit, "target", preamble_length);
    let pre_done = m.instance_output(pre_unit, "action");
    let no_length = m.eq_const(preamble_length, 0);
    let last = m.or(pre_done, no_length);
    let not_last = m.not(last);
    let goes_on = m.and(pre_q, not_last);
    let has_length = m.not(no_length);
    let pre_next = m.mux(start, has_length, goes_on);
    m.set_next(pre_q, pre_next);

    // Synchronized streaming: count arrivals of valid sources, target = dacs.
    let mut valids = Vec::new();
    let mut datas = Vec::new();
    for i in 0..dacs {
        valids.push(m.input(&format!("s{i}_tvalid"), 1));
        datas.push(m.input(&format!("s{i}_tdata"), BUS_WIDTH));
    }
    let valid = m.join_lanes(&valids);
    let arrived = m.reg(clk, "arrived_q", dacs);
    let not_valid = m.not(valid);
    let gone = m.and(arrived, not_valid);
    let dropped = m.reduce_or(gone);
    let clear = m.or_all(&[start, pre_q, dropped]);
    let not_arrived = m.not(arrived);
    let events = m.and(valid, not_arrived);
    let sync = m.instance("u_sync", &sync_unit);
    m.bind_domain(sync, "clk", clk);
    m.connect(sync, "events", events);
    m.connect(sync, "enable", one);
    m.connect(sync, "clear", clear);
    m.connect(sync, "one_shot", zero);
    let target = m.lit(u64::from(dacs), bits_for(dacs));
    m.connect(sync, "target", target);
    let fire = m.instance_output(sync, "action");
    let fire_or_clear = m.or(fire, clear);
    let keep = m.not(fire_or_clear);
    let keep_all = m.replicate(keep, dacs);
    let arrived_next = m.and(valid, keep_all);
    m.set_next(arrived, arrived_next);

    // Each stream: preamble pattern, source beat or idle, then its aligner.
    let idle = m.zeros(BUS_WIDTH);
    let emit = m.or(pre_q, fire);
    for i in 0..dacs {
        let pattern = if is_activation(i) {
            activation_preamble()
        } else {
            weight_preamble()
        };
        let pattern = bus_constant(&mut m, &pattern);
        let beat = m.mux(fire, datas[i as usize], idle);
        let word = m.mux(pre_q, pattern, beat);
        let delay = m.input(&format!("dac{i}_delay"), DELAY_WIDTH);
        let shift = m.input(&format!("dac{i}_shift"), SHIFT_WIDTH);
        let u = m.instance(&format!("u_align{i}"), &aligner);
        m.bind_domain(u, "clk", clk);
        m.connect(u, "in_valid", emit);
        m.connect(u, "in_data", word);
        m.connect(u, "delay", delay);
        m.connect(u, "shift", shift);
        m.connect(u, "flush", flush);
        let out_valid = m.instance_output(u, "out_valid");
        let out_data = m.instance_output(u, "out_data");
        m.output(&format!("s{i}_tready"), fire);
        m.output(&format!("dac{i}_tvalid"), out_valid);
        m.output(&format!("dac{i}_tdata"), out_data);
    }
    m.output("fire", fire);
    m.output("preamble_active", pre_q);
    m.finish()
}
