//! Checks that hold whatever the timing: for runs in which packets may be dropped
//! on full buffers or flushed from stale slots, where the golden model cannot say
//! which packets are summed, what comes out must still obey these invariants
//! (PANAMA.md, "Buffers" and "Targets"):
//!
//! - every bypass frame comes out exactly once, unaltered, on its route, in order
//!   per destination (which frames are bypassed never depends on timing);
//! - every result frame equals the exact sum (tree order, rounding) of the packets
//!   it names by `seq` and bitmap, with the header of the packet its destination
//!   sent;
//! - every input frame is accounted for once: the parser-level counters equal the
//!   model's, `accepted + full_drops` equals the packets the model queues, and
//!   `accepted = results_out + seq_mismatch + other_mismatch + timeout_drops +
//!   waiting`;
//! - the input never waits longer than its bound;
//! - the `output_held_cycles` counter equals the cycles the bench refused an
//!   output beat.

use super::config::GoldenConfig;
use super::counters::Counters;
use super::frame::{classify, AggPacket, Class};
use super::golden::{run as golden_run, GoldenError, InFrame, OutFrame};
use super::header::{offset, HEADERS_LEN, PANAMA_OFFSET};
use super::result::result_frame;
use super::system::{result_slot, Observed};
use crate::golden::fp::tree_sum;
use std::collections::{BTreeMap, HashMap, VecDeque};

/// What a run produced, for [`check`].
pub struct RunRecord<'a> {
    /// The frames as the accelerator saw them on the wire, in arrival order.
    pub wire: &'a [InFrame],
    /// The frames that came out.
    pub observed: &'a [Observed],
    /// The hardware's counters at the end.
    pub counters: Counters,
    /// True if the run was drained (input over, every slot served or flushed):
    /// then no packet may be left waiting.
    pub drained: bool,
    /// The longest input stall ([`super::system::StreamDriver::longest_stall`]).
    pub longest_stall: u64,
    /// Its documented bound.
    pub stall_bound: u64,
    /// The `output_held_cycles` counter's increment over the run, and the
    /// cycles in which the bench refused an offered output beat
    /// ([`super::system::StreamDriver::output_held`]): equal.
    pub output_held: (u64, u64),
}

/// The invariants' tallies; [`Report::violations`] lists what failed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Bypass frames the model sends.
    pub bypass_expected: usize,
    /// Bypass frames that came out.
    pub bypass_out: usize,
    /// Expected bypass frames that did not come out at their destination (or came
    /// out of order there).
    pub bypass_lost: usize,
    /// Frames out that are neither the next bypass frame expected at their
    /// destination nor a result: altered, extra, misrouted or out of order.
    pub bypass_altered: usize,
    /// Result frames that came out.
    pub results_out: usize,
    /// Result frames that are not the exact sum of the packets they name.
    pub wrong_sums: usize,
    /// Output beats with a bit of `tuser[127:32]` set (PANAMA.md makes them 0).
    pub stray_tuser_beats: u64,
    /// Packets left waiting in the buffers according to the counters.
    pub waiting: i128,
    /// Counter identities or counter-versus-model comparisons that failed.
    pub counter_errors: Vec<String>,
    /// The longest input stall and its bound.
    pub longest_stall: (u64, u64),
    /// Cycles the output was held by the downstream: by the hardware's counter,
    /// and by the bench.
    pub output_held: (u64, u64),
    /// The first wrong result or bypass frame, described.
    pub first_error: Option<String>,
}

impl Report {
    /// Every invariant that failed, one line each (empty if all hold).
    pub fn violations(&self) -> Vec<String> {
        let mut v = vec![];
        if self.bypass_lost > 0 {
            v.push(format!("bypass lost: {}", self.bypass_lost));
        }
        if self.bypass_altered > 0 {
            v.push(format!("bypass altered: {}", self.bypass_altered));
        }
        if self.wrong_sums > 0 {
            v.push(format!("wrong sums: {}", self.wrong_sums));
        }
        if self.stray_tuser_beats > 0 {
            v.push(format!(
                "output beats with tuser[127:32] set: {}",
                self.stray_tuser_beats
            ));
        }
        v.extend(self.counter_errors.iter().cloned());
        let (stall, bound) = self.longest_stall;
        if stall > bound {
            v.push(format!(
                "longest input stall {stall} cycles > bound {bound}"
            ));
        }
        let (counted, refused) = self.output_held;
        if counted != refused {
            v.push(format!(
                "output_held_cycles {counted} ≠ {refused} cycles the output was refused"
            ));
        }
        if let Some(e) = &self.first_error {
            v.push(format!("first error: {e}"));
        }
        v
    }

    /// Adds `other`'s tallies (of a later part of the same run).
    pub fn absorb(&mut self, other: Report) {
        self.bypass_expected += other.bypass_expected;
        self.bypass_out += other.bypass_out;
        self.bypass_lost += other.bypass_lost;
        self.bypass_altered += other.bypass_altered;
        self.results_out += other.results_out;
        self.wrong_sums += other.wrong_sums;
        self.stray_tuser_beats += other.stray_tuser_beats;
        self.waiting = other.waiting;
        self.counter_errors.extend(other.counter_errors);
        self.longest_stall = (
            self.longest_stall.0.max(other.longest_stall.0),
            other.longest_stall.1,
        );
        self.output_held = (
            self.output_held.0 + other.output_held.0,
            self.output_held.1 + other.output_held.1,
        );
        if self.first_error.is_none() {
            self.first_error = other.first_error;
        }
    }
}

/// Checks `run` against the invariants for an instance configured as `config`;
/// also gives the wire indices of the bypass frames that came out, in output
/// order.
pub fn check(config: &GoldenConfig, run: &RunRecord) -> Result<(Report, Vec<usize>), GoldenError> {
    let unbounded = GoldenConfig {
        fifo_depth: None,
        ..config.clone()
    };
    let model = golden_run(&unbounded, run.wire)?;
    let mut report = Report {
        bypass_expected: model.bypass.len(),
        longest_stall: (run.longest_stall, run.stall_bound),
        output_held: run.output_held,
        ..Report::default()
    };
    // Each output frame is the next bypass frame expected at its destination, or
    // a result frame; a frame that is neither is an altered bypass frame. (Bypass
    // frames are matched by content first: ordinary traffic may look like a
    // result.)
    let mut want: BTreeMap<u8, VecDeque<&OutFrame>> = BTreeMap::new();
    for f in &model.bypass {
        want.entry(f.dst).or_default().push_back(f);
    }
    let mut bypassed = vec![];
    let named = Candidates::new(config, run.wire);
    for o in run.observed {
        report.stray_tuser_beats += u64::from(o.stray_tuser_beats);
        let next = want
            .get_mut(&o.dst)
            .filter(|q| q.front().is_some_and(|f| f.bytes == o.bytes));
        if let Some(f) = next.and_then(|q| q.pop_front()) {
            bypassed.push(f.input);
            report.bypass_out += 1;
            continue;
        }
        match result_slot(config, &o.bytes) {
            Some(slot) => {
                report.results_out += 1;
                if let Err(e) = named.check_result(config, slot, o.dst, &o.bytes) {
                    report.wrong_sums += 1;
                    report.first_error.get_or_insert(e);
                }
            }
            None => {
                report.bypass_out += 1;
                report.bypass_altered += 1;
                report.first_error.get_or_insert_with(|| {
                    format!(
                        "a frame of {} bytes to {:#04x} is neither the next bypass frame expected there nor a result",
                        o.bytes.len(),
                        o.dst
                    )
                });
            }
        }
    }
    for (d, q) in &want {
        if !q.is_empty() {
            report.bypass_lost += q.len();
            report.first_error.get_or_insert_with(|| {
                format!("{} bypass frames to {d:#04x} did not come out", q.len())
            });
        }
    }

    check_counters(&mut report, run, &model.counters);
    Ok((report, bypassed))
}

/// Compares the hardware's counters with the model's parser-level counters and
/// checks the identities.
fn check_counters(report: &mut Report, run: &RunRecord, model: &Counters) {
    let hw = run.counters;
    let mut expect = |name: &str, got: u64, want: u64| {
        if got != want {
            report
                .counter_errors
                .push(format!("counter {name}: {got}, expected {want}"));
        }
    };
    expect("packets_in", hw.packets_in, run.wire.len() as u64);
    expect("bypassed", hw.bypassed, model.bypassed);
    expect("unknown_job", hw.unknown_job, model.unknown_job);
    expect("malformed", hw.malformed, model.malformed);
    expect("oversize", hw.oversize, model.oversize);
    expect("empty_frames", hw.empty_frames, model.empty_frames);
    expect(
        "accepted + full_drops",
        hw.accepted + hw.full_drops,
        model.accepted,
    );
    expect("results_out", hw.results_out, report.results_out as u64);
    let consumed = hw.results_out + hw.seq_mismatch + hw.other_mismatch + hw.timeout_drops;
    report.waiting = i128::from(hw.accepted) - i128::from(consumed);
    let waiting = u64::try_from(report.waiting).unwrap_or(0);
    if report.waiting < 0 || (run.drained && waiting != 0) {
        report.counter_errors.push(format!(
            "accepted {} = results_out + seq_mismatch + other_mismatch + timeout_drops ({consumed}) + waiting: {} left waiting{}",
            hw.accepted,
            report.waiting,
            if run.drained { " after the drain" } else { "" }
        ));
    } else if let Err(e) = hw.check(waiting) {
        report.counter_errors.push(e.to_string());
    }
}

/// An aggregation packet and its 64 header bytes.
type Named = (AggPacket, [u8; HEADERS_LEN]);

/// The aggregation packets a result may name: per (slot, port index, seq), the
/// packets that arrived, first one first.
struct Candidates {
    by_key: HashMap<(usize, usize, u32), Vec<Named>>,
}

impl Candidates {
    fn new(config: &GoldenConfig, wire: &[InFrame]) -> Self {
        let mut by_key: HashMap<_, Vec<_>> = HashMap::new();
        for f in wire {
            if f.bytes.len() > config.max_frame_bytes {
                continue;
            }
            let Some(port) = config.port_index(f.src) else {
                continue;
            };
            if let Class::Aggregation(p) =
                classify(&f.bytes, config.agg_udp_port, config.max_payload_bytes)
            {
                let h = &p.header;
                if let Some(slot) = config.slot_for(h.job_id, h.tree_id, port) {
                    let mut head = [0u8; HEADERS_LEN];
                    head.copy_from_slice(&f.bytes[..HEADERS_LEN]);
                    by_key
                        .entry((slot, port, h.seq))
                        .or_default()
                        .push((p, head));
                }
            }
        }
        Candidates { by_key }
    }

    /// Checks one result frame of `slot` sent to port code `dst`.
    fn check_result(
        &self,
        config: &GoldenConfig,
        slot: usize,
        dst: u8,
        bytes: &[u8],
    ) -> Result<(), String> {
        let field = |at: usize, n: usize| {
            bytes[PANAMA_OFFSET + at..PANAMA_OFFSET + at + n]
                .iter()
                .fold(0u32, |acc, &b| acc << 8 | u32::from(b))
        };
        let seq = field(offset::SEQ, 4);
        let bitmap = field(offset::BITMAP, 4);
        let ports = config.slots[slot].ports;
        if bitmap != u32::from(ports) {
            return Err(format!(
                "result of slot {slot} seq {seq}: bitmap {bitmap:#x}, the slot's ports are {ports:#x}"
            ));
        }
        let dst_port = config
            .port_index(dst)
            .ok_or_else(|| format!("result of slot {slot} seq {seq} to {dst:#04x}, not a port"))?;
        let n = config.port_codes.len();
        let mut heads = vec![None; n];
        for (p, head) in heads
            .iter_mut()
            .enumerate()
            .filter(|(p, _)| ports >> p & 1 == 1)
        {
            let found = self.by_key.get(&(slot, p, seq)).and_then(|v| v.first());
            *head = Some(found.ok_or_else(|| {
                format!("result of slot {slot} seq {seq}: port {p} never sent that seq")
            })?);
        }
        let present: Vec<&(AggPacket, [u8; HEADERS_LEN])> =
            heads.iter().flatten().copied().collect();
        let elems = present.first().map_or(0, |(p, _)| p.payload.len());
        let sum: Vec<u64> = (0..elems)
            .map(|e| {
                let operands: Vec<Option<u64>> = heads
                    .iter()
                    .map(|h| h.and_then(|(p, _)| p.payload.get(e).copied()))
                    .collect();
                tree_sum(config.format, config.ftz, &operands)
            })
            .collect();
        let ecn = present.iter().fold(0, |acc, (p, _)| acc | p.ecn);
        let (_, own) = heads[dst_port].ok_or_else(|| {
            format!("result of slot {slot} seq {seq} to port {dst_port}, which does not take part")
        })?;
        let want =
            result_frame(own, ecn, bitmap, config.format, &sum).map_err(|e| e.to_string())?;
        if want != bytes {
            let at = want.iter().zip(bytes).position(|(a, b)| a != b);
            return Err(format!(
                "result of slot {slot} seq {seq} to port {dst_port}: {} bytes, {} expected, first difference at {at:?}",
                bytes.len(),
                want.len()
            ));
        }
        Ok(())
    }
}
