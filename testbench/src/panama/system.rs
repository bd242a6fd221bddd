//! Running whole frames through an accelerator on any engine, and checking what
//! comes out against the golden model.
//!
//! [`StreamDriver`] (from [`super::stream`]) is the NetFPGA side of the
//! accelerator; [`configure`] drives the core's configuration inputs and
//! [`CounterPins`] reads its counters, through any [`Pins`] (a single [`Dut`]
//! or the differential harness's [`Step`](crate::harness::Step)). [`check`]
//! then compares the output frames with a [`GoldenOutcome`] the way its
//! contract allows:
//! bypass frames per destination in order, result frames per (slot,
//! destination) in order, nothing missing, nothing extra.

use super::config::{GoldenConfig, SlotConfig};
use super::golden::{GoldenOutcome, InFrame};
use super::header::{offset, FLAG_RESULT, HEADERS_LEN, IPV4_OFFSET, PANAMA_OFFSET, UDP_OFFSET};
pub use super::stream::{Observed, Shape, StreamDriver};
use crate::dut::{Dut, DutError};
use crate::pins::{Pin, Pins};
use hdl::panama::config::PanamaConfig;
use hdl::panama::core::{COUNTERS, OUTPUT_HELD_CYCLES, STALL_CYCLES};
use rand::Rng;
use std::collections::BTreeMap;

/// What [`check`] compared.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CheckSummary {
    /// Bypass frames compared byte for byte.
    pub bypass_frames: usize,
    /// Result frames compared byte for byte.
    pub result_frames: usize,
}

/// True if `bytes` is a result frame: IPv4 + UDP from `agg_udp_port` (results
/// swap the UDP ports) with PANAMA `flags.result` set.
pub fn is_result(bytes: &[u8], agg_udp_port: u16) -> bool {
    bytes.len() >= HEADERS_LEN
        && bytes[12..14] == [0x08, 0x00]
        && bytes[IPV4_OFFSET + 9] == 17
        && bytes[UDP_OFFSET..UDP_OFFSET + 2] == agg_udp_port.to_be_bytes()
        && bytes[PANAMA_OFFSET + offset::FLAGS] & FLAG_RESULT != 0
}

/// The (job_id, tree_id) of a frame with a PANAMA header.
fn job_of(bytes: &[u8]) -> (u16, u8) {
    let at = PANAMA_OFFSET + offset::JOB_ID;
    (
        u16::from_be_bytes([bytes[at], bytes[at + 1]]),
        bytes[PANAMA_OFFSET + offset::TREE_ID],
    )
}

/// Output frames sorted the way the golden model's contract orders them.
pub struct Outputs<'a> {
    /// Bypass frames per tuser destination, in order.
    pub bypass: BTreeMap<u8, Vec<&'a Observed>>,
    /// Result frames per (slot, destination), in order.
    pub results: BTreeMap<(usize, u8), Vec<&'a Observed>>,
}

/// The slot of a result frame: a frame with the result flag (`is_result`) of a
/// (job, tree) an enabled slot has. Ordinary traffic may look like a result of
/// some other job; the accelerator sends results only for its slots' jobs.
pub fn result_slot(config: &GoldenConfig, bytes: &[u8]) -> Option<usize> {
    if !is_result(bytes, config.agg_udp_port) {
        return None;
    }
    let (job, tree) = job_of(bytes);
    config
        .slots
        .iter()
        .position(|s| s.enable && s.job_id == job && s.tree_id == tree)
}

/// Splits `observed` into bypass frames per destination and result frames per
/// (slot, destination) ([`result_slot`]).
pub fn split_outputs<'a>(config: &GoldenConfig, observed: &'a [Observed]) -> Outputs<'a> {
    let mut out = Outputs {
        bypass: BTreeMap::new(),
        results: BTreeMap::new(),
    };
    for o in observed {
        match result_slot(config, &o.bytes) {
            Some(slot) => out.results.entry((slot, o.dst)).or_default().push(o),
            None => out.bypass.entry(o.dst).or_default().push(o),
        }
    }
    out
}

/// The golden model's configuration of an instance of `cfg` with `slots` (register
/// defaults for the rest, finite FIFOs of `cfg.fifo_depth`).
pub fn golden_config(cfg: &PanamaConfig, slots: Vec<SlotConfig>) -> GoldenConfig {
    GoldenConfig {
        ftz: cfg.ftz,
        max_payload_bytes: cfg.max_payload_bytes as usize,
        fifo_depth: Some(cfg.fifo_depth as usize),
        max_frame_bytes: cfg.max_frame_bytes as usize,
        host_routes: cfg.host_routes.clone(),
        full_wait: cfg.full_wait,
        slot_timeout: cfg.slot_timeout,
        ..GoldenConfig::new(cfg.format, &cfg.port_codes, slots)
    }
}

/// Compares `observed` with `golden` (see the module docs); the error says which
/// stream differs first and how.
pub fn check(
    config: &GoldenConfig,
    golden: &GoldenOutcome,
    observed: &[Observed],
) -> Result<CheckSummary, String> {
    for o in observed {
        if usize::from(o.tuser_len) != o.bytes.len() {
            return Err(format!(
                "output frame of {} bytes has tuser length {}",
                o.bytes.len(),
                o.tuser_len
            ));
        }
        if o.stray_tuser_beats > 0 {
            return Err(format!(
                "output frame of {} bytes from cycle {}: {} beats with tuser[127:32] not 0",
                o.bytes.len(),
                o.first_cycle,
                o.stray_tuser_beats
            ));
        }
    }
    let Outputs { bypass, results } = split_outputs(config, observed);
    let mut want_bypass: BTreeMap<u8, Vec<&[u8]>> = BTreeMap::new();
    for f in &golden.bypass {
        want_bypass.entry(f.dst).or_default().push(&f.bytes);
    }
    let mut want_results: BTreeMap<(usize, u8), Vec<&[u8]>> = BTreeMap::new();
    for a in &golden.aggregations {
        for f in &a.results {
            want_results
                .entry((a.slot, f.dst))
                .or_default()
                .push(&f.bytes);
        }
    }
    let mut summary = CheckSummary::default();
    let dsts: std::collections::BTreeSet<u8> =
        bypass.keys().chain(want_bypass.keys()).copied().collect();
    for d in dsts {
        let got: Vec<&[u8]> = bypass
            .get(&d)
            .map_or(vec![], |v| v.iter().map(|o| o.bytes.as_slice()).collect());
        let want = want_bypass.get(&d).cloned().unwrap_or_default();
        compare(&format!("bypass frames to {d:#04x}"), &got, &want)?;
        summary.bypass_frames += got.len();
    }
    let keys: std::collections::BTreeSet<(usize, u8)> =
        results.keys().chain(want_results.keys()).copied().collect();
    for k in keys {
        let got: Vec<&[u8]> = results
            .get(&k)
            .map_or(vec![], |v| v.iter().map(|o| o.bytes.as_slice()).collect());
        let want = want_results.get(&k).cloned().unwrap_or_default();
        compare(
            &format!("results of slot {} to {:#04x}", k.0, k.1),
            &got,
            &want,
        )?;
        summary.result_frames += got.len();
    }
    Ok(summary)
}

/// Compares two frame sequences.
fn compare(what: &str, got: &[&[u8]], want: &[&[u8]]) -> Result<(), String> {
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        if g != w {
            let at = g.iter().zip(w.iter()).position(|(a, b)| a != b);
            return Err(format!(
                "{what}: frame {i} differs (lengths {} / {} expected, first differing byte {at:?})",
                g.len(),
                w.len()
            ));
        }
    }
    if got.len() != want.len() {
        return Err(format!(
            "{what}: {} frames came out, {} expected",
            got.len(),
            want.len()
        ));
    }
    Ok(())
}

/// Drives the accelerator core's configuration inputs (`agg_udp_port`,
/// `bypass_dst{p}`, `host_dst{k}`, `full_wait`, `slot_timeout`, `slot{s}_*`) from
/// `config` (by name: once per run); an error names a port the core lacks.
pub fn apply_config(
    pins: &mut (impl Pins + ?Sized),
    config: &GoldenConfig,
) -> Result<(), DutError> {
    let mut set = |name: &str, value: u64| {
        let pin = pins.pin(name)?;
        pins.set_u64(pin, value)
    };
    set("agg_udp_port", u64::from(config.agg_udp_port))?;
    for (p, &d) in config.bypass_dst.iter().enumerate() {
        set(&format!("bypass_dst{p}"), u64::from(d))?;
    }
    for (k, &(_, d)) in config.host_routes.iter().enumerate() {
        set(&format!("host_dst{k}"), u64::from(d))?;
    }
    set("full_wait", u64::from(config.full_wait))?;
    set("slot_timeout", u64::from(config.slot_timeout))?;
    for (s, slot) in config.slots.iter().enumerate() {
        set(&format!("slot{s}_enable"), u64::from(slot.enable))?;
        set(&format!("slot{s}_job_id"), u64::from(slot.job_id))?;
        set(&format!("slot{s}_tree_id"), u64::from(slot.tree_id))?;
        set(&format!("slot{s}_ports"), u64::from(slot.ports))?;
    }
    Ok(())
}

/// [`apply_config`], then the streams idle (`s_axis_tvalid`, `m_axis_tready`
/// 0) and every counter's `<name>_clear` 0: the core's inputs before a run.
pub fn configure(pins: &mut (impl Pins + ?Sized), config: &GoldenConfig) -> Result<(), DutError> {
    apply_config(pins, config)?;
    for name in ["s_axis_tvalid", "m_axis_tready"] {
        let pin = pins.pin(name)?;
        pins.set_u64(pin, 0)?;
    }
    for (name, _) in COUNTERS {
        let pin = pins.pin(&format!("{name}_clear"))?;
        pins.set_u64(pin, 0)?;
    }
    Ok(())
}

/// The core's counter outputs (named as in `hdl::panama::core::COUNTERS`),
/// resolved once.
#[derive(Clone, Debug)]
pub struct CounterPins {
    all: Vec<(&'static str, Pin)>,
    stall_cycles: Pin,
    output_held: Pin,
}

impl CounterPins {
    /// The counters among `pins`' ports; an error names one the core lacks.
    pub fn resolve(pins: &(impl Pins + ?Sized)) -> Result<Self, DutError> {
        let all = COUNTERS
            .iter()
            .map(|(name, _)| Ok((*name, pins.pin(name)?)))
            .collect::<Result<_, DutError>>()?;
        Ok(CounterPins {
            all,
            stall_cycles: pins.pin(STALL_CYCLES)?,
            output_held: pins.pin(OUTPUT_HELD_CYCLES)?,
        })
    }

    /// Every counter's value now, in `COUNTERS` order.
    pub fn read(
        &self,
        pins: &mut (impl Pins + ?Sized),
    ) -> Result<Vec<(&'static str, u64)>, DutError> {
        self.all
            .iter()
            .map(|&(name, pin)| Ok((name, pins.get_u64(pin)?)))
            .collect()
    }

    /// The `stall_cycles` counter now.
    pub fn stall_cycles(&self, pins: &mut (impl Pins + ?Sized)) -> Result<u64, DutError> {
        pins.get_u64(self.stall_cycles)
    }

    /// The `output_held_cycles` counter now.
    pub fn output_held(&self, pins: &mut (impl Pins + ?Sized)) -> Result<u64, DutError> {
        pins.get_u64(self.output_held)
    }
}

/// How the NetFPGA side behaves.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Traffic {
    /// Probability that a new input beat is offered in a cycle (1 = line rate).
    pub p_valid: f64,
    /// Probability that `m_axis_tready` is 1 in a cycle (1 = no back-pressure).
    pub p_ready: f64,
}

impl Traffic {
    /// Line-rate input, no back-pressure.
    pub const LINE_RATE: Traffic = Traffic {
        p_valid: 1.0,
        p_ready: 1.0,
    };
}

/// The end of a [`run`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunEnd {
    /// Every input was taken and `expected_outputs` frames came out.
    Complete,
    /// Nothing moved for `quiet_cycles` (with inputs left: the accelerator holds
    /// `s_axis_tready` low).
    Quiet,
    /// `max_cycles` passed first.
    Timeout,
}

/// Cycles [`run`] goes on after the expected frames came out, so that an extra
/// frame shows among the outputs.
pub const COMPLETE_TAIL: u64 = 256;

/// Runs `frames` through the accelerator core on `dut` (configured from
/// `config`, reset first) until every input is taken and `expected_outputs`
/// frames have come out (and then [`COMPLETE_TAIL`] cycles more; the cycle
/// returned is the one the last expected frame came out in), nothing has moved
/// for `quiet_cycles`, or `max_cycles` passed. `on_cycle` sees the cycle number
/// after every edge. A port the core lacks is an error before the first cycle.
#[allow(clippy::too_many_arguments)]
pub fn run(
    mut dut: &mut dyn Dut,
    config: &GoldenConfig,
    frames: &[InFrame],
    data_width: u32,
    traffic: Traffic,
    rng: &mut impl Rng,
    expected_outputs: Option<usize>,
    quiet_cycles: u64,
    max_cycles: u64,
    mut on_cycle: impl FnMut(&mut dyn Dut, u64),
) -> Result<(StreamDriver, u64, RunEnd), DutError> {
    configure(&mut dut, config)?;
    dut.reset(4);
    let mut d = StreamDriver::new(frames, data_width);
    let Traffic { p_valid, p_ready } = traffic;
    d.step(&mut dut, 0, false, rng, p_valid, p_ready)?;
    let mut last_move = 0;
    let mut moved = (0, 0);
    for cycle in 1..=max_cycles {
        dut.step();
        d.step(&mut dut, cycle, true, rng, p_valid, p_ready)?;
        on_cycle(dut, cycle);
        let now = (d.accepted_beats(), d.output_beats);
        if now != moved {
            moved = now;
            last_move = cycle;
        }
        if d.input_done() && expected_outputs.is_some_and(|n| d.outputs.len() >= n) {
            // A frame beyond the expected ones would start within the tail.
            for tail in 1..=COMPLETE_TAIL {
                dut.step();
                d.step(&mut dut, cycle + tail, true, rng, p_valid, p_ready)?;
                on_cycle(dut, cycle + tail);
            }
            return Ok((d, cycle, RunEnd::Complete));
        }
        if cycle - last_move >= quiet_cycles {
            return Ok((d, cycle, RunEnd::Quiet));
        }
    }
    Ok((d, max_cycles, RunEnd::Timeout))
}

/// Reads the core's counters (output ports named as in
/// `hdl::panama::core::COUNTERS`), in that order.
pub fn read_counters(mut dut: &mut dyn Dut) -> Result<Vec<(&'static str, u64)>, DutError> {
    CounterPins::resolve(&dut)?.read(&mut dut)
}
