//! The check a PANAMA core's mutants face ([`crate::mutation`]): the kinds of
//! thing the test suite's PANAMA tests check, in four runs short enough to
//! repeat for hundreds of mutants.
//!
//! 1. Three jobs on overlapping port sets with bypass traffic, 90 % input load
//!    and 40 % output back-pressure, then frames of exactly `max_frame_bytes`
//!    (passed) and one byte more (dropped): every frame out equal to the golden
//!    model's, every modelled counter equal to the model's, `output_held_cycles`
//!    equal to the bench's count.
//! 2. A chaos run ([`super::chaos`]) of 1,500 frames: every invariant.
//! 3. Every slot's job with one late worker (a different port each): the
//!    others send twice `fifo_depth` packets first, so that every other packet
//!    buffer fills, waits, drops and wedges; then the late one sends its first
//!    `fifo_depth`, which complete the buffered packets. After the drain: the
//!    invariants (every result the exact sum of the packets it names), exactly
//!    the first `fifo_depth` seqs of every job summed, and per live buffer one
//!    wait of `full_wait` (`stall_cycles`) and `fifo_depth` drops; then a clean
//!    round of every job on all ports, frame for frame and counter for counter
//!    against the golden model.
//! 4. Two jobs whose workers take turns, `3 × fifo_depth` packets each, under a
//!    slow output (70 % back-pressure): result banks back up, buffers fill and
//!    the input waits until they are served, losing nothing; as in 1.

use super::chaos::{self, ChaosConfig};
use super::frame::{classify, Class};
use super::golden::{run as golden_run, InFrame};
use super::header::{PanamaHeader, PANAMA_HEADER_LEN, PANAMA_OFFSET};
use super::scenario::Scenario;
use super::session::{Sent, Session};
use super::system::{
    check as check_frames, golden_config, read_counters, result_slot, run, RunEnd, Shape, Traffic,
};
use super::GoldenConfig;
use crate::dut::NativeDut;
use crate::rng::derived;
use hdl::panama::config::PanamaConfig;
use hdl::panama::core::OUTPUT_HELD_CYCLES;
use hdl::Module;
use sim::Backend;
use std::collections::{BTreeMap, BTreeSet};

/// Runs the four checks on `core`, a (mutated) core generated for `cfg`; the
/// error says what the first failing one saw.
pub fn check(cfg: &PanamaConfig, core: &Module) -> Result<(), String> {
    let mut jobs = Scenario::uniform(3, 4, 4, 256, cfg.format);
    jobs.jobs[1].ports = vec![1, 2, 3];
    jobs.jobs[2].ports = vec![0, 3];
    jobs.background = 0.5;
    let traffic = Traffic {
        p_valid: 0.9,
        p_ready: 0.6,
    };
    against_golden("jobs and bypass", cfg, core, &jobs, traffic, edge_lengths)?;
    chaos_run(cfg, core)?;
    late_workers_everywhere(cfg, core)?;
    let mut backlog = Scenario::uniform(2, 4, 4 * cfg.fifo_depth as usize, 1024, cfg.format);
    backlog.background = 0.2;
    backlog.round_robin = true;
    let slow_output = Traffic {
        p_valid: 1.0,
        p_ready: 0.15,
    };
    against_golden("full buffers", cfg, core, &backlog, slow_output, |_| vec![])
}

/// Frames of the longest length that passes and the shortest that is dropped.
fn edge_lengths(golden: &GoldenConfig) -> Vec<InFrame> {
    let mtu = golden.max_frame_bytes;
    [mtu, mtu + 1]
        .iter()
        .map(|&n| InFrame {
            src: golden.port_codes[1],
            bytes: (0..n).map(|i| (i * 7) as u8).collect(),
        })
        .collect()
}

/// Checks 1 and 4 (see the module docs): `scenario`'s frames and then
/// `extra`'s offered as `traffic`, the frames and counters against the golden
/// model's.
fn against_golden(
    what: &str,
    cfg: &PanamaConfig,
    core: &Module,
    scenario: &Scenario,
    traffic: Traffic,
    extra: fn(&GoldenConfig) -> Vec<InFrame>,
) -> Result<(), String> {
    let golden = golden_config(cfg, scenario.slot_configs(cfg.slots as usize));
    let mut rng = derived(1, what);
    let mut frames = scenario.frames(&mut rng, &golden);
    frames.extend(extra(&golden));
    let want = golden_run(&golden, &frames).map_err(|e| e.to_string())?;
    let mut dut = NativeDut::with_backend(core, Backend::Compiled).map_err(|e| e.to_string())?;
    let beats: u64 = frames
        .iter()
        .map(|f| f.bytes.len().div_ceil(cfg.beat_bytes() as usize) as u64)
        .sum();
    let (driver, cycles, end) = run(
        &mut dut,
        &golden,
        &frames,
        cfg.data_width,
        traffic,
        &mut rng,
        Some(want.frames_out()),
        2_000,
        20 * beats + 5_000,
        |_, _| {},
    )
    .map_err(|e| e.to_string())?;
    if end != RunEnd::Complete {
        return Err(format!("{what}: {end:?} after {cycles} cycles"));
    }
    check_frames(&golden, &want, &driver.outputs).map_err(|e| format!("{what}: {e}"))?;
    let counters = read_counters(&mut dut).map_err(|e| e.to_string())?;
    let get = |name: &str| counters.iter().find(|(n, _)| *n == name).map(|&(_, v)| v);
    for (name, value) in want.counters.named() {
        if get(name) != Some(value) {
            return Err(format!(
                "{what}: counter {name} {:?}, model {value}",
                get(name)
            ));
        }
    }
    if get(OUTPUT_HELD_CYCLES) != Some(driver.output_held) {
        return Err(format!("{what}: output_held_cycles differs from the bench"));
    }
    Ok(())
}

/// Check 2 (see the module docs).
fn chaos_run(cfg: &PanamaConfig, core: &Module) -> Result<(), String> {
    let mut dut = NativeDut::with_backend(core, Backend::Compiled).map_err(|e| e.to_string())?;
    let out = chaos::run(&mut dut, cfg, &ChaosConfig::new(1_500, 11), |_| {})?;
    match out.violations().first() {
        Some(v) => Err(format!("chaos: {v}")),
        None => Ok(()),
    }
}

/// Check 3 (see the module docs).
fn late_workers_everywhere(cfg: &PanamaConfig, core: &Module) -> Result<(), String> {
    let ports = cfg.ports() as usize;
    let slots = cfg.slots as usize;
    let packets = 2 * cfg.fifo_depth as usize;
    let mut scenario = Scenario::uniform(slots, ports, packets, 64, cfg.format);
    scenario.background = 0.2;
    let mut golden = golden_config(cfg, scenario.slot_configs(slots));
    golden.full_wait = 64;
    golden.slot_timeout = 4_096;
    let mut rng = derived(3, "mutants: late workers everywhere");
    // Of an aggregation packet: (sent by its job's late worker, its seq).
    let late = |f: &InFrame| match classify(
        &f.bytes,
        golden.agg_udp_port,
        cfg.max_payload_bytes as usize,
    ) {
        Class::Aggregation(p) => Some((
            f.src == golden.port_codes[usize::from(p.header.tree_id) % ports],
            p.header.seq,
        )),
        _ => None,
    };
    let (mut first, mut last) = (vec![], vec![]);
    for f in scenario.frames(&mut rng, &golden) {
        match late(&f) {
            Some((true, seq)) if seq < cfg.fifo_depth => last.push(f),
            Some((true, _)) => {}
            _ => first.push(f),
        }
    }
    let frames: Vec<Sent> = (first.into_iter().chain(last))
        .map(|f| (f, Shape::Whole))
        .collect();
    let mut dut = NativeDut::with_backend(core, Backend::Compiled).map_err(|e| e.to_string())?;
    let mut session =
        Session::new(&mut dut, cfg, golden.clone(), (1.0, 0.2), 3).map_err(|e| e.to_string())?;
    let batch = session.run_batch(&frames).map_err(|e| e.to_string())?;
    if !batch.drained {
        return Err("late workers: the buffers did not drain".into());
    }
    if let Some(v) = batch.report.violations().first() {
        return Err(format!("late workers: {v}"));
    }
    // Each live worker's buffer: `fifo_depth` packets in, one waits `full_wait`
    // and is dropped, wedging it, the rest are dropped at once.
    let live = (slots * (ports - 1)) as u64;
    let c = batch.counters;
    let depth = u64::from(cfg.fifo_depth);
    if c.full_drops != live * depth {
        return Err(format!(
            "late workers: {} full drops, {live} × {depth} expected",
            c.full_drops
        ));
    }
    let stalled = session.stall_cycles().map_err(|e| e.to_string())?;
    if stalled != live * u64::from(golden.full_wait) {
        return Err(format!(
            "late workers: stall_cycles {stalled}, {live} waits of full_wait expected"
        ));
    }
    // The first `fifo_depth` packets of every live worker were buffered, the
    // rest dropped before the late worker came: exactly those seqs are summed.
    let mut summed: BTreeMap<usize, BTreeSet<u32>> = BTreeMap::new();
    for o in &batch.observed {
        if let Some(slot) = result_slot(&golden, &o.bytes) {
            let at = PANAMA_OFFSET..PANAMA_OFFSET + PANAMA_HEADER_LEN;
            let header: &[u8; PANAMA_HEADER_LEN] =
                o.bytes[at].try_into().map_err(|_| "short result")?;
            summed
                .entry(slot)
                .or_default()
                .insert(PanamaHeader::from_bytes(header).seq);
        }
    }
    let buffered: BTreeSet<u32> = (0..cfg.fifo_depth).collect();
    for slot in 0..slots {
        if summed.get(&slot) != Some(&buffered) {
            return Err(format!(
                "late workers: slot {slot} summed seqs {:?}",
                summed.get(&slot)
            ));
        }
    }
    let mut clean = Scenario::uniform(slots, ports, 1, 64, cfg.format);
    clean.background = 0.2;
    let round = clean.frames(&mut rng, &golden);
    let want = golden_run(&golden, &round).map_err(|e| e.to_string())?;
    let sent: Vec<Sent> = round.into_iter().map(|f| (f, Shape::Whole)).collect();
    let batch = session.run_batch(&sent).map_err(|e| e.to_string())?;
    check_frames(&golden, &want, &batch.observed).map_err(|e| format!("clean round: {e}"))?;
    if batch.counters != want.counters {
        return Err(format!(
            "clean round: counters {:?}, model {:?}",
            batch.counters, want.counters
        ));
    }
    Ok(())
}
