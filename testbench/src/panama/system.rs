//! Running whole frames through an accelerator on any engine, and checking what
//! comes out against the golden model.
//!
//! [`StreamDriver`] is the NetFPGA side of the accelerator: it offers the input
//! frames beat by beat on `s_axis_*` (with `tuser` = length and one-hot source
//! port), takes output beats from `m_axis_*` with a chosen probability of
//! `tready` (random back-pressure), reassembles the output frames and records
//! when every beat moved. It drives [`Pins`], which both the differential
//! harness's [`Step`] and a single [`Dut`] provide. [`check`] then compares the
//! output frames with a [`GoldenOutcome`] the way its contract allows:
//! bypass frames per destination in order, result frames per (slot,
//! destination) in order, nothing missing, nothing extra.

use super::config::{GoldenConfig, SlotConfig};
use super::golden::{GoldenOutcome, InFrame};
use super::header::{offset, FLAG_RESULT, HEADERS_LEN, IPV4_OFFSET, PANAMA_OFFSET, UDP_OFFSET};
use crate::dut::Dut;
use crate::harness::Step;
use hdl::panama::config::PanamaConfig;
use rand::Rng;
use std::collections::{BTreeMap, HashMap, VecDeque};

/// Named access to a design's ports.
pub trait Pins {
    /// Drives input `name` with little-endian 64-bit words.
    fn set(&mut self, name: &str, words: &[u64]);
    /// Reads port `name` (settled).
    fn get(&mut self, name: &str) -> Vec<u64>;
}

impl Pins for Step<'_> {
    fn set(&mut self, name: &str, words: &[u64]) {
        Step::set(self, name, words);
    }
    fn get(&mut self, name: &str) -> Vec<u64> {
        Step::get(self, name).to_vec()
    }
}

/// [`Pins`] of one [`Dut`], with port indices looked up once.
pub struct DutPins<'a> {
    dut: &'a mut dyn Dut,
    index: HashMap<String, usize>,
}

impl<'a> DutPins<'a> {
    /// Wraps `dut`.
    pub fn new(dut: &'a mut dyn Dut) -> Self {
        let index = dut
            .ports()
            .iter()
            .enumerate()
            .map(|(i, p)| (p.name.clone(), i))
            .collect();
        DutPins { dut, index }
    }

    /// The wrapped design.
    pub fn dut(&mut self) -> &mut dyn Dut {
        self.dut
    }

    fn port(&self, name: &str) -> usize {
        *self
            .index
            .get(name)
            .unwrap_or_else(|| panic!("the accelerator has no port `{name}` (a bug in the driver)"))
    }
}

impl Pins for DutPins<'_> {
    fn set(&mut self, name: &str, words: &[u64]) {
        let p = self.port(name);
        self.dut
            .set(p, words)
            .unwrap_or_else(|e| panic!("driving `{name}`: {e}"));
    }
    fn get(&mut self, name: &str) -> Vec<u64> {
        let p = self.port(name);
        self.dut
            .get(p)
            .unwrap_or_else(|e| panic!("reading `{name}`: {e}"))
    }
}

/// One AXI-Stream beat as words.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Beat {
    data: Vec<u64>,
    keep: Vec<u64>,
    user: Vec<u64>,
    last: bool,
    frame: usize,
}

/// Little-endian words of `bytes`, `bits` wide.
fn words(bytes: &[u8], bits: usize) -> Vec<u64> {
    let mut w = vec![0u64; bits.div_ceil(64)];
    for (i, &b) in bytes.iter().enumerate() {
        w[i / 8] |= u64::from(b) << (8 * (i % 8));
    }
    w
}

/// How a frame's beats are laid out on the bus.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// As a NetFPGA MAC sends it: `tkeep` full on every beat but the last, which
    /// carries `tlast`; a frame without bytes is one beat with an empty `tkeep`.
    Whole,
    /// No `tlast` on the last beat: the frame runs into the next one on the wire.
    Unterminated,
    /// An extra beat with an empty `tkeep` before beat `n` (if the frame has more
    /// than `n` beats). A NetFPGA stream never has one; it carries no byte.
    EmptyBeatBefore(usize),
}

/// The beats of `frame` (index `index`) on a `width`-bit bus, NetFPGA tuser, laid
/// out as `shape` says.
fn beats_of(frame: &InFrame, index: usize, width: usize, shape: Shape) -> Vec<Beat> {
    let per = width / 8;
    let user = u64::from(frame.bytes.len() as u16) | u64::from(frame.src) << 16;
    let mut chunks: Vec<&[u8]> = frame.bytes.chunks(per).collect();
    if chunks.is_empty() {
        chunks.push(&[]);
    }
    if let Shape::EmptyBeatBefore(n) = shape {
        if n > 0 && n < chunks.len() {
            chunks.insert(n, &[]);
        }
    }
    let n = chunks.len();
    chunks
        .into_iter()
        .enumerate()
        .map(|(k, chunk)| Beat {
            data: words(chunk, width),
            keep: (0..per.div_ceil(64))
                .map(|w| keep_word(chunk.len(), w))
                .collect(),
            user: vec![user, 0],
            last: shape != Shape::Unterminated && k + 1 == n,
            frame: index,
        })
        .collect()
}

/// Word `w` of a `tkeep` with the low `bytes` bits set.
fn keep_word(bytes: usize, w: usize) -> u64 {
    let lo = w * 64;
    match bytes.saturating_sub(lo) {
        0 => 0,
        n if n >= 64 => u64::MAX,
        n => (1u64 << n) - 1,
    }
}

/// An output beat as sampled before the edge that takes it.
#[derive(Clone, Debug)]
struct Snap {
    data: Vec<u64>,
    keep: Vec<u64>,
    user: Vec<u64>,
    last: bool,
}

/// A frame that left the accelerator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Observed {
    /// `tuser[31:24]` of its first beat.
    pub dst: u8,
    /// `tuser[15:0]` of its first beat.
    pub tuser_len: u16,
    /// Its bytes (the `tkeep` bytes of every beat).
    pub bytes: Vec<u8>,
    /// Cycle its first beat was taken.
    pub first_cycle: u64,
    /// Cycle its last beat was taken.
    pub last_cycle: u64,
}

/// Drives frames in and takes frames out (see the module docs). Frames are
/// given up front ([`StreamDriver::new`]) or fed while it runs
/// ([`StreamDriver::push_frame`]); only beats not yet taken are held.
pub struct StreamDriver {
    width: usize,
    beats: VecDeque<Beat>,
    pushed_beats: usize,
    frames: usize,
    next_in: usize,
    driving: bool,
    in_ready: bool,
    out_valid: bool,
    out_ready: bool,
    snapshot: Option<Snap>,
    partial: Option<Observed>,
    /// Output frames in the order they completed.
    pub outputs: Vec<Observed>,
    /// Cycle each input frame's first beat was accepted.
    pub first_accepted: Vec<Option<u64>>,
    /// Cycle each input frame's last beat was accepted.
    pub last_accepted: Vec<Option<u64>>,
    /// Cycles in which a beat was offered and not taken.
    pub input_stalls: u64,
    /// The longest input stall: the most cycles with `m_axis_tready` high in one
    /// unbroken run of cycles in which a beat was offered and not taken (cycles
    /// the output was back-pressured are the downstream's, not counted).
    pub longest_stall: u64,
    stall_run: u64,
    /// Cycles in which an output beat moved.
    pub output_beats: u64,
}

impl StreamDriver {
    /// A driver that will offer `frames` in order on a `width`-bit bus.
    pub fn new(frames: &[InFrame], width: u32) -> Self {
        let mut d = StreamDriver::streaming(width);
        for f in frames {
            d.push_frame(f, Shape::Whole);
        }
        d
    }

    /// A driver with no frames yet, for [`StreamDriver::push_frame`].
    pub fn streaming(width: u32) -> Self {
        StreamDriver {
            width: width as usize,
            beats: VecDeque::new(),
            pushed_beats: 0,
            frames: 0,
            next_in: 0,
            driving: false,
            in_ready: false,
            out_valid: false,
            out_ready: false,
            snapshot: None,
            partial: None,
            outputs: vec![],
            first_accepted: vec![],
            last_accepted: vec![],
            input_stalls: 0,
            longest_stall: 0,
            stall_run: 0,
            output_beats: 0,
        }
    }

    /// Queues `frame` (the next frame index), laid out as `shape` says, behind the
    /// frames given so far.
    pub fn push_frame(&mut self, frame: &InFrame, shape: Shape) {
        let beats = beats_of(frame, self.frames, self.width, shape);
        self.pushed_beats += beats.len();
        self.beats.extend(beats);
        self.frames += 1;
        self.first_accepted.push(None);
        self.last_accepted.push(None);
    }

    /// Input beats not yet taken.
    pub fn queued_beats(&self) -> usize {
        self.beats.len()
    }

    /// Input beats in all.
    pub fn input_beats(&self) -> usize {
        self.pushed_beats
    }

    /// Input beats accepted so far.
    pub fn accepted_beats(&self) -> usize {
        self.next_in
    }

    /// Cycles of the first and the last accepted input beat (0, 0 before any).
    pub fn input_span(&self) -> (u64, u64) {
        let first = self.first_accepted.iter().flatten().min();
        let last = self.last_accepted.iter().flatten().max();
        (first.copied().unwrap_or(0), last.copied().unwrap_or(0))
    }

    /// Cycles of the first and the last output beat taken (0, 0 before any).
    pub fn output_span(&self) -> (u64, u64) {
        let first = self.outputs.iter().map(|o| o.first_cycle).min();
        let last = self.outputs.iter().map(|o| o.last_cycle).max();
        (first.unwrap_or(0), last.unwrap_or(0))
    }

    /// True once every input beat was accepted.
    pub fn input_done(&self) -> bool {
        self.beats.is_empty()
    }

    /// One cycle. `edge` is true if the clock rose since the last call (then the
    /// handshakes sampled in the last call took place, at cycle `cycle - 1`);
    /// `p_valid` is the probability of offering a new beat, `p_ready` of taking an
    /// output beat.
    pub fn step(
        &mut self,
        pins: &mut impl Pins,
        cycle: u64,
        edge: bool,
        rng: &mut impl Rng,
        p_valid: f64,
        p_ready: f64,
    ) {
        if edge {
            let took = cycle.saturating_sub(1);
            if self.driving && self.in_ready {
                if let Some(b) = self.beats.pop_front() {
                    self.first_accepted[b.frame].get_or_insert(took);
                    let ends = b.last || self.beats.front().is_none_or(|n| n.frame != b.frame);
                    if ends {
                        self.last_accepted[b.frame] = Some(took);
                    }
                }
                self.next_in += 1;
                self.stall_run = 0;
            } else if self.driving {
                self.input_stalls += 1;
                if self.out_ready {
                    self.stall_run += 1;
                    self.longest_stall = self.longest_stall.max(self.stall_run);
                }
            }
            if self.out_valid && self.out_ready {
                if let Some(snap) = self.snapshot.take() {
                    self.take_output(snap, took);
                }
            }
        }
        self.out_valid = pins.get("m_axis_tvalid")[0] == 1;
        if self.out_valid {
            self.snapshot = Some(Snap {
                data: pins.get("m_axis_tdata"),
                keep: pins.get("m_axis_tkeep"),
                user: pins.get("m_axis_tuser"),
                last: pins.get("m_axis_tlast")[0] == 1,
            });
        }
        self.in_ready = pins.get("s_axis_tready")[0] == 1;
        let offer = !self.beats.is_empty() && (self.driving || rng.gen_bool(p_valid));
        self.driving = offer;
        if let Some(b) = self.beats.front().filter(|_| offer) {
            pins.set("s_axis_tdata", &b.data);
            pins.set("s_axis_tkeep", &b.keep);
            pins.set("s_axis_tuser", &b.user);
            pins.set("s_axis_tlast", &[u64::from(b.last)]);
        }
        pins.set("s_axis_tvalid", &[u64::from(offer)]);
        self.out_ready = p_ready >= 1.0 || rng.gen_bool(p_ready);
        pins.set("m_axis_tready", &[u64::from(self.out_ready)]);
    }

    /// Adds a taken output beat to the frame being reassembled.
    fn take_output(&mut self, snap: Snap, cycle: u64) {
        self.output_beats += 1;
        let per = self.width / 8;
        let frame = self.partial.get_or_insert_with(|| Observed {
            dst: (snap.user[0] >> 24) as u8,
            tuser_len: snap.user[0] as u16,
            bytes: vec![],
            first_cycle: cycle,
            last_cycle: cycle,
        });
        for i in 0..per {
            if snap.keep[i / 64] >> (i % 64) & 1 == 1 {
                frame.bytes.push((snap.data[i / 8] >> (8 * (i % 8))) as u8);
            }
        }
        frame.last_cycle = cycle;
        if snap.last {
            if let Some(done) = self.partial.take() {
                self.outputs.push(done);
            }
        }
    }
}

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
/// `config`.
pub fn apply_config(pins: &mut impl Pins, config: &GoldenConfig) {
    pins.set("agg_udp_port", &[u64::from(config.agg_udp_port)]);
    for (p, &d) in config.bypass_dst.iter().enumerate() {
        pins.set(&format!("bypass_dst{p}"), &[u64::from(d)]);
    }
    for (k, &(_, d)) in config.host_routes.iter().enumerate() {
        pins.set(&format!("host_dst{k}"), &[u64::from(d)]);
    }
    pins.set("full_wait", &[u64::from(config.full_wait)]);
    pins.set("slot_timeout", &[u64::from(config.slot_timeout)]);
    for (s, slot) in config.slots.iter().enumerate() {
        pins.set(&format!("slot{s}_enable"), &[u64::from(slot.enable)]);
        pins.set(&format!("slot{s}_job_id"), &[u64::from(slot.job_id)]);
        pins.set(&format!("slot{s}_tree_id"), &[u64::from(slot.tree_id)]);
        pins.set(&format!("slot{s}_ports"), &[u64::from(slot.ports)]);
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

/// Runs `frames` through the accelerator core on `dut` (configured from
/// `config`, reset first) until every input is taken and `expected_outputs`
/// frames have come out, nothing has moved for `quiet_cycles`, or `max_cycles`
/// passed. `on_cycle` sees the cycle number after every edge.
#[allow(clippy::too_many_arguments)]
pub fn run(
    dut: &mut dyn Dut,
    config: &GoldenConfig,
    frames: &[InFrame],
    data_width: u32,
    traffic: Traffic,
    rng: &mut impl Rng,
    expected_outputs: Option<usize>,
    quiet_cycles: u64,
    max_cycles: u64,
    mut on_cycle: impl FnMut(&mut dyn Dut, u64),
) -> (StreamDriver, u64, RunEnd) {
    let mut pins = DutPins::new(dut);
    apply_config(&mut pins, config);
    pins.set("s_axis_tvalid", &[0]);
    pins.set("m_axis_tready", &[0]);
    for (name, _) in hdl::panama::core::COUNTERS {
        pins.set(&format!("{name}_clear"), &[0]);
    }
    pins.dut().reset(4);
    let mut d = StreamDriver::new(frames, data_width);
    d.step(&mut pins, 0, false, rng, traffic.p_valid, traffic.p_ready);
    let mut last_move = 0;
    let mut moved = (0, 0);
    for cycle in 1..=max_cycles {
        pins.dut().step();
        d.step(
            &mut pins,
            cycle,
            true,
            rng,
            traffic.p_valid,
            traffic.p_ready,
        );
        on_cycle(pins.dut(), cycle);
        let now = (d.accepted_beats(), d.output_beats);
        if now != moved {
            moved = now;
            last_move = cycle;
        }
        if d.input_done() && expected_outputs.is_some_and(|n| d.outputs.len() >= n) {
            return (d, cycle, RunEnd::Complete);
        }
        if cycle - last_move >= quiet_cycles {
            return (d, cycle, RunEnd::Quiet);
        }
    }
    (d, max_cycles, RunEnd::Timeout)
}

/// Reads the core's counters (output ports named as in
/// `hdl::panama::core::COUNTERS`), in that order.
pub fn read_counters(dut: &mut dyn Dut) -> Vec<(&'static str, u64)> {
    hdl::panama::core::COUNTERS
        .iter()
        .map(|(name, _)| {
            let v = dut
                .get_u64(name)
                .unwrap_or_else(|e| panic!("reading counter `{name}`: {e}"));
            (*name, v)
        })
        .collect()
}
