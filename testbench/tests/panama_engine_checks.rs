//! The PANAMA core's aggregation engine and egress against what their module docs
//! promise, where the packet-for-packet comparison of `panama_accel.rs` cannot
//! look: the round-robin order in which ready slots are served, every branch of
//! the head check (`elem_count`, format, foreign format, `seq` before the rest),
//! an enabled slot without ports, the engine's cycle budget per sum, the output
//! arbiter's alternation and the gap-free result stream.
//!
//! Every run is deterministic (line-rate input, `m_axis_tready` either always 1
//! or held at 0 until the input is in, then always 1) on the native simulator.
//! Frames and counters are compared with the golden model; orders and timings
//! with rules derived from the documented behaviour.

use hdl::blocks::fp::FpFormat;
use hdl::panama::config::PanamaConfig;
use hdl::panama::core::panama_core;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use testbench::dut::{Dut, NativeDut};
use testbench::panama::config::{GoldenConfig, SlotConfig, SUME_PORTS};
use testbench::panama::frame::AggPacket;
use testbench::panama::golden::{run as golden_run, GoldenOutcome, InFrame};
use testbench::panama::header::{elem_bytes, offset, PANAMA_OFFSET};
use testbench::panama::scenario::Scenario;
use testbench::panama::system::{
    check, configure, golden_config, is_result, read_counters, Observed, StreamDriver,
};
use testbench::panama::traffic::{background_frame, random_element, Values};
use testbench::pins::Pins;
use testbench::rng::seeded;

/// The job every hand-built packet belongs to (slot 0 of [`one_job`]).
const JOB: u16 = 100;

/// How the bench takes the output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Output {
    /// `m_axis_tready` is 1 in every cycle.
    Open,
    /// `m_axis_tready` is 0 until every input beat has been taken and `settle`
    /// more cycles have passed (the engine has filled every result bank it can),
    /// then 1 in every cycle.
    HeldUntilInputDone { settle: u64 },
}

/// One run of the core.
struct Run {
    want: GoldenOutcome,
    driver: StreamDriver,
    /// First cycle in which `m_axis_tready` was 1.
    release: u64,
    /// Cycles simulated.
    cycles: u64,
    /// Every input was taken and the expected number of frames came out (then
    /// the run went on for [`TAIL`] cycles to catch anything extra).
    complete: bool,
    counters: Vec<(&'static str, u64)>,
}

/// Cycles simulated after the last expected output frame.
const TAIL: u64 = 500;

/// Runs `frames` through a core of `cfg` configured as `golden` (then with the
/// inputs in `overrides` driven on top), line-rate input, output as `output`.
fn simulate(
    name: &str,
    cfg: &PanamaConfig,
    golden: &GoldenConfig,
    frames: &[InFrame],
    overrides: &[(String, u64)],
    output: Output,
) -> Run {
    let want = golden_run(golden, frames).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(
        want.overflow_at, None,
        "{name}: the scenario must not stall"
    );
    let expected = want.frames_out();
    let module = panama_core(cfg).unwrap_or_else(|e| panic!("{e}"));
    let mut dut = NativeDut::new(&module).unwrap_or_else(|e| panic!("{e}"));
    // The driver flips coins with probability 0 or 1 only: any seed will do.
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let mut pins = &mut dut;
    configure(&mut pins, golden).unwrap_or_else(|e| panic!("{name}: {e}"));
    for (port, value) in overrides {
        let pin = Pins::pin(&pins, port).unwrap_or_else(|e| panic!("{name}: {e}"));
        Pins::set_u64(&mut pins, pin, *value).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    pins.reset(4);
    let mut d = StreamDriver::new(frames, cfg.data_width);
    let max_cycles = 40 * d.input_beats() as u64 + 10_000;
    let mut release = (output == Output::Open).then_some(0);
    let mut input_done_at = None;
    let ready = |release: Option<u64>| if release.is_some() { 1.0 } else { 0.0 };
    d.step(&mut pins, 0, false, &mut rng, 1.0, ready(release))
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut done_at = None;
    let mut cycles = max_cycles;
    for cycle in 1..=max_cycles {
        pins.step();
        if let Output::HeldUntilInputDone { settle } = output {
            if d.input_done() {
                let at = *input_done_at.get_or_insert(cycle);
                if release.is_none() && cycle >= at + settle {
                    release = Some(cycle);
                }
            }
        }
        d.step(&mut pins, cycle, true, &mut rng, 1.0, ready(release))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        if done_at.is_none() && d.input_done() && d.outputs.len() >= expected {
            done_at = Some(cycle);
        }
        if done_at.is_some_and(|t| cycle >= t + TAIL) {
            cycles = cycle;
            break;
        }
    }
    let counters = read_counters(pins).unwrap_or_else(|e| panic!("{name}: {e}"));
    println!(
        "{name}: {} frames in, {} out ({expected} expected) in {cycles} cycles, output from \
         cycle {:?}, counters {counters:?}",
        frames.len(),
        d.outputs.len(),
        release
    );
    Run {
        want,
        driver: d,
        release: release.unwrap_or(u64::MAX),
        cycles,
        complete: done_at.is_some(),
        counters,
    }
}

/// Everything came out as the golden model says (per destination and per
/// (slot, destination)), nothing extra, and every counter equals the model's.
fn assert_golden(name: &str, golden: &GoldenConfig, run: &Run) {
    assert!(
        run.complete,
        "{name}: {} of {} frames out after {} cycles",
        run.driver.outputs.len(),
        run.want.frames_out(),
        run.cycles
    );
    check(golden, &run.want, &run.driver.outputs)
        .unwrap_or_else(|e| panic!("{name}: {e} (after {} cycles)", run.cycles));
    for (counter, value) in run.want.counters.named() {
        let got = run.counters.iter().find(|(n, _)| *n == counter);
        assert_eq!(
            got.map(|(_, v)| *v),
            Some(value),
            "{name}: counter {counter} (hardware {:?}, model {:?})",
            run.counters,
            run.want.counters
        );
    }
}

/// The slot of a result frame (by its job and tree), or `None` for a bypass frame.
fn result_slot(golden: &GoldenConfig, o: &Observed) -> Option<usize> {
    if !is_result(&o.bytes, golden.agg_udp_port) {
        return None;
    }
    let at = PANAMA_OFFSET + offset::JOB_ID;
    let job = u16::from_be_bytes([o.bytes[at], o.bytes[at + 1]]);
    let tree = o.bytes[PANAMA_OFFSET + offset::TREE_ID];
    let slot = golden
        .slots
        .iter()
        .position(|s| s.enable && s.job_id == job && s.tree_id == tree);
    Some(slot.unwrap_or_else(|| panic!("result frame of job {job} tree {tree}: no such slot")))
}

/// The slots of the aggregations in the order their results left: each
/// aggregation sends one copy to every participating port, so its copy to the
/// slot's lowest participating port stands for it.
fn result_order(golden: &GoldenConfig, outputs: &[Observed]) -> Vec<usize> {
    outputs
        .iter()
        .filter_map(|o| {
            let slot = result_slot(golden, o)?;
            let lowest = golden.slots[slot].ports.trailing_zeros() as usize;
            (o.dst == golden.port_codes[lowest]).then_some(slot)
        })
        .collect()
}

/// A SUME-style instance (four ports) of `width` bits with the PANAMA defaults
/// and 4 packets per buffer.
fn instance(width: u32) -> PanamaConfig {
    PanamaConfig {
        fifo_depth: 4,
        ..PanamaConfig::new(width, &SUME_PORTS)
    }
}

/// `cfg`'s golden configuration with slot 0 for job [`JOB`] (tree 0) over
/// `ports`, the other slots disabled.
fn one_job(cfg: &PanamaConfig, ports: &[usize]) -> GoldenConfig {
    let mut slots = vec![SlotConfig::new(JOB, 0, ports)];
    slots.resize(cfg.slots as usize, SlotConfig::DISABLED);
    golden_config(cfg, slots)
}

/// A well-formed packet of job [`JOB`] from the worker at port index `port`:
/// sequence `seq`, `elems` random finite elements of `format`.
fn packet(
    golden: &GoldenConfig,
    rng: &mut impl rand::Rng,
    port: usize,
    seq: u32,
    format: FpFormat,
    elems: usize,
) -> InFrame {
    assert_eq!(
        (elems * elem_bytes(format)) % 64,
        0,
        "payloads are whole granules"
    );
    let payload = (0..elems)
        .map(|_| random_element(rng, format, Values::Finite))
        .collect();
    let p = AggPacket::new(
        format,
        JOB,
        0,
        seq,
        port as u16,
        golden.agg_udp_port,
        payload,
    );
    InFrame {
        src: golden.port_codes[port],
        bytes: p.to_frame().unwrap_or_else(|e| panic!("{e}")),
    }
}

// ---------------------------------------------------------------------------
// Round robin.

/// A backlog on all four slots, uneven in length: slot 0 over ports {0,1} with 4
/// packets per worker, slot 1 {2,3} with 2, slot 2 {0,2} with 4, slot 3 {1,3}
/// with 3, workers taking turns on the input; 256-byte payloads.
fn four_slot_backlog(cfg: &PanamaConfig) -> (GoldenConfig, Vec<InFrame>) {
    let mut scenario = Scenario::uniform(4, 2, 1, 256, FpFormat::Fp32);
    let shape: [(&[usize], usize); 4] = [(&[0, 1], 4), (&[2, 3], 2), (&[0, 2], 4), (&[1, 3], 3)];
    for (job, (ports, packets)) in scenario.jobs.iter_mut().zip(shape) {
        job.ports = ports.to_vec();
        job.elements = packets * 64;
    }
    scenario.round_robin = true;
    let golden = golden_config(cfg, scenario.slot_configs(cfg.slots as usize));
    let mut rng = seeded("panama engine backlog", 21);
    let frames = scenario.frames(&mut rng, &golden);
    (golden, frames)
}

/// Round robin (engine.rs, SCAN): with results held back, the engine fills every
/// result bank and all four slots queue up; once the output flows, each slot
/// served is the first ready one after the slot served last, cyclically (ready
/// = aggregations left), so slots take turns and an emptied slot is skipped.
/// The service order is read from the result order (banks are a ring: results
/// leave in the order the sums started).
#[test]
fn ready_slots_are_served_in_round_robin_after_the_last_served() {
    let name = "panama round robin";
    let cfg = instance(256);
    let (golden, frames) = four_slot_backlog(&cfg);
    let run = simulate(
        name,
        &cfg,
        &golden,
        &frames,
        &[],
        Output::HeldUntilInputDone { settle: 300 },
    );
    assert_golden(name, &golden, &run);
    let order = result_order(&golden, &run.driver.outputs);
    let mut left = vec![0usize; cfg.slots as usize];
    for a in &run.want.aggregations {
        left[a.slot] += 1;
    }
    assert_eq!(left, [4, 2, 4, 3], "the model's aggregations per slot");
    assert_eq!(order.len(), 13);
    println!("  service order {order:?}");
    // The first `result_banks` sums happened while the output was held (the
    // slots became ready in arrival order); every later one with every slot's
    // packets queued.
    let banks = cfg.result_banks as usize;
    for &s in &order[..banks] {
        left[s] -= 1;
    }
    let slots = left.len();
    for i in banks..order.len() {
        let prev = order[i - 1];
        let want = (1..=slots)
            .map(|k| (prev + k) % slots)
            .find(|&s| left[s] > 0)
            .expect("an aggregation is left");
        assert_eq!(
            order[i], want,
            "sum {i}: after slot {prev} with {left:?} aggregations left per slot, the next \
             ready slot is {want} (service order {order:?})"
        );
        left[order[i]] -= 1;
    }
}

// ---------------------------------------------------------------------------
// The head check.

/// Runs `frames` through the one-job instance over ports {0,1} and compares
/// outputs and counters with the model, whose drop counts must be `seq_drops`
/// and `other_drops` with `sums` aggregations.
fn head_check(name: &str, frames: &[InFrame], seq_drops: u64, other_drops: u64, sums: usize) {
    let cfg = instance(256);
    let golden = one_job(&cfg, &[0, 1]);
    let run = simulate(name, &cfg, &golden, frames, &[], Output::Open);
    let c = &run.want.counters;
    assert_eq!(
        (
            c.seq_mismatch,
            c.other_mismatch,
            run.want.aggregations.len()
        ),
        (seq_drops, other_drops, sums),
        "{name}: the model's drops and sums for this scenario"
    );
    assert!(run.want.waiting.is_empty());
    assert_golden(name, &golden, &run);
}

/// Heads that differ only in `elem_count` (both fp32, 64 and 128 elements) are
/// both dropped as `other_mismatch`; the matching packets behind them are summed.
#[test]
fn heads_differing_only_in_elem_count_are_dropped() {
    let name = "panama elem_count mismatch";
    let cfg = instance(256);
    let g = one_job(&cfg, &[0, 1]);
    let mut rng = seeded(name, 31);
    let frames = vec![
        packet(&g, &mut rng, 0, 0, FpFormat::Fp32, 64),
        packet(&g, &mut rng, 1, 0, FpFormat::Fp32, 128),
        packet(&g, &mut rng, 0, 1, FpFormat::Fp32, 64),
        packet(&g, &mut rng, 1, 1, FpFormat::Fp32, 64),
        packet(&g, &mut rng, 1, 2, FpFormat::Fp32, 128),
        packet(&g, &mut rng, 0, 2, FpFormat::Fp32, 128),
    ];
    head_check(name, &frames, 0, 2, 2);
}

/// Heads that differ only in format (fp32 and bf16, both 64 elements; the bf16
/// one on the second port, so the first head's format is the instance's) are
/// both dropped as `other_mismatch`.
#[test]
fn heads_differing_only_in_format_are_dropped() {
    let name = "panama format mismatch";
    let cfg = instance(256);
    let g = one_job(&cfg, &[0, 1]);
    let mut rng = seeded(name, 32);
    let frames = vec![
        packet(&g, &mut rng, 0, 0, FpFormat::Fp32, 64),
        packet(&g, &mut rng, 1, 0, FpFormat::Bf16, 64),
        packet(&g, &mut rng, 0, 1, FpFormat::Fp32, 64),
        packet(&g, &mut rng, 1, 1, FpFormat::Fp32, 64),
        packet(&g, &mut rng, 1, 2, FpFormat::Fp16, 64),
        packet(&g, &mut rng, 0, 2, FpFormat::Fp32, 64),
        packet(&g, &mut rng, 0, 3, FpFormat::Fp32, 32),
        packet(&g, &mut rng, 1, 3, FpFormat::Fp32, 32),
    ];
    head_check(name, &frames, 0, 4, 2);
}

/// Heads that agree with each other but all carry a foreign format (bf16 on an
/// fp32 instance) are dropped as `other_mismatch`, never summed.
#[test]
fn heads_sharing_a_foreign_format_are_dropped() {
    let name = "panama foreign format";
    let cfg = instance(256);
    let g = one_job(&cfg, &[0, 1]);
    let mut rng = seeded(name, 33);
    let frames = vec![
        packet(&g, &mut rng, 0, 0, FpFormat::Bf16, 128),
        packet(&g, &mut rng, 1, 0, FpFormat::Bf16, 128),
        packet(&g, &mut rng, 0, 1, FpFormat::Fp32, 64),
        packet(&g, &mut rng, 1, 1, FpFormat::Fp32, 64),
        packet(&g, &mut rng, 1, 2, FpFormat::Fp16, 64),
        packet(&g, &mut rng, 0, 2, FpFormat::Fp16, 64),
    ];
    head_check(name, &frames, 0, 4, 1);
}

/// When the heads' `seq` differ and so do their `elem_count`s, only the older
/// head is dropped (`seq_mismatch`, nothing in `other_mismatch`): the newer head
/// then matches the next packet behind the dropped one and is summed with it.
#[test]
fn a_seq_mismatch_is_handled_before_an_elem_count_mismatch() {
    let name = "panama seq before elem_count";
    let cfg = instance(256);
    let g = one_job(&cfg, &[0, 1]);
    let mut rng = seeded(name, 34);
    let frames = vec![
        packet(&g, &mut rng, 0, 0, FpFormat::Fp32, 64),
        packet(&g, &mut rng, 1, 1, FpFormat::Fp32, 128),
        packet(&g, &mut rng, 0, 1, FpFormat::Fp32, 128),
        packet(&g, &mut rng, 1, 2, FpFormat::Fp32, 64),
        packet(&g, &mut rng, 0, 4, FpFormat::Fp32, 128),
        packet(&g, &mut rng, 0, 5, FpFormat::Fp32, 64),
        packet(&g, &mut rng, 1, 5, FpFormat::Fp32, 64),
    ];
    head_check(name, &frames, 3, 0, 2);
}

// ---------------------------------------------------------------------------
// Readiness.

/// A slot enabled with no participating port (the core's inputs allow it; the
/// model's configuration does not) is never ready: next to it, slot 0 over ports
/// {0,1} sums exactly as the model says with that slot disabled, packets of its
/// job are bypassed as unknown, nothing extra comes out and nothing hangs.
#[test]
fn an_enabled_slot_without_ports_is_never_served() {
    let name = "panama empty slot";
    let cfg = instance(256);
    let mut golden = one_job(&cfg, &[0, 1]);
    golden.slots[1] = SlotConfig {
        job_id: JOB + 1,
        ..SlotConfig::DISABLED
    };
    let mut rng = seeded(name, 41);
    let mut frames = vec![];
    for seq in 0..4 {
        frames.push(packet(&golden, &mut rng, 0, seq, FpFormat::Fp32, 64));
        frames.push(packet(&golden, &mut rng, 1, seq, FpFormat::Fp32, 64));
    }
    // Two packets of the empty slot's job.
    for port in [0, 2] {
        let mut f = packet(&golden, &mut rng, port, 0, FpFormat::Fp32, 64);
        let at = PANAMA_OFFSET + offset::JOB_ID;
        f.bytes[at..at + 2].copy_from_slice(&(JOB + 1).to_be_bytes());
        frames.insert(3, f);
    }
    let overrides = [
        ("slot1_enable".to_string(), 1),
        ("slot1_ports".to_string(), 0),
    ];
    let run = simulate(name, &cfg, &golden, &frames, &overrides, Output::Open);
    assert_eq!(run.want.counters.unknown_job, 2);
    assert_eq!(run.want.aggregations.len(), 4);
    assert_golden(name, &golden, &run);
}

// ---------------------------------------------------------------------------
// Timing.

/// The engine's cycle budget (engine.rs docs: SCAN, META and CHECK one cycle
/// each, then one SUM cycle per beat): with a single-port slot, line-rate input
/// and an open output, the engine is the bottleneck, so consecutive results
/// start `beats + 3` cycles apart — for frames of a whole number of beats too
/// (256- and 512-bit buses with 320-byte frames; 1024 bits with 256 bytes).
#[test]
fn each_sum_takes_three_cycles_plus_one_per_beat() {
    for (width, payload) in [(256u32, 256usize), (512, 256), (1024, 192)] {
        let name = format!("panama sum budget {width}");
        let cfg = instance(width);
        let golden = one_job(&cfg, &[0]);
        let mut rng = seeded(&name, 51);
        let frames: Vec<InFrame> = (0..12)
            .map(|seq| packet(&golden, &mut rng, 0, seq, FpFormat::Fp32, payload / 4))
            .collect();
        let bytes = 64 + payload;
        let beats = bytes / cfg.beat_bytes() as usize;
        assert_eq!(bytes % cfg.beat_bytes() as usize, 0, "whole beats");
        let run = simulate(&name, &cfg, &golden, &frames, &[], Output::Open);
        assert_golden(&name, &golden, &run);
        let starts: Vec<u64> = run.driver.outputs.iter().map(|o| o.first_cycle).collect();
        let gaps: Vec<u64> = starts.windows(2).map(|w| w[1] - w[0]).collect();
        println!("  {width} bits, {beats} beats per frame: result spacing {gaps:?}");
        let budget = beats as u64 + 3;
        for (i, &gap) in gaps.iter().enumerate() {
            assert!(
                gap <= budget,
                "{name}: results {i} and {} start {gap} cycles apart, more than the {budget} \
                 cycles a sum of {beats} beats takes (spacing {gaps:?})",
                i + 1
            );
        }
    }
}

/// The emitter goes from one copy to the next and from one bank to the next
/// without a gap (egress.rs docs): with the result banks full (output held
/// until the input is in) and then no back-pressure, result frames leave back
/// to back, every cycle a beat, until the last.
#[test]
fn backlogged_results_leave_back_to_back() {
    let name = "panama result line rate";
    let cfg = instance(256);
    let (golden, frames) = four_slot_backlog(&cfg);
    let run = simulate(
        name,
        &cfg,
        &golden,
        &frames,
        &[],
        Output::HeldUntilInputDone { settle: 300 },
    );
    assert_golden(name, &golden, &run);
    let out = &run.driver.outputs;
    assert!(out.iter().all(|o| o.first_cycle >= run.release));
    assert_eq!(out[0].first_cycle, run.release, "the output starts at once");
    for (i, w) in out.windows(2).enumerate() {
        assert_eq!(
            w[1].first_cycle,
            w[0].last_cycle + 1,
            "{name}: {} idle output cycles between result frames {i} and {}",
            w[1].first_cycle - w[0].last_cycle - 1,
            i + 1
        );
    }
    let (first, last) = run.driver.output_span();
    assert_eq!(last - first + 1, run.driver.output_beats);
}

/// The output arbiter alternates whole frames between the bypass buffer and
/// the results when both wait (egress.rs docs). Output held until all input is
/// in: 12 bypass frames sit in the bypass buffer and a job's 8 aggregations in
/// the result banks and packet buffers. Once the output flows, no source sends
/// two frames in a row while the other still has frames to send.
#[test]
fn the_arbiter_alternates_while_both_sources_wait() {
    let name = "panama arbiter";
    let cfg = instance(256);
    let golden = one_job(&cfg, &[0, 1]);
    let mut rng = seeded(name, 61);
    let mut frames = vec![];
    for seq in 0..8 {
        for port in [0, 1] {
            frames.push(packet(&golden, &mut rng, port, seq, FpFormat::Fp32, 64));
        }
        if seq < 6 {
            for port in [2, 3] {
                frames.push(InFrame {
                    src: golden.port_codes[port],
                    bytes: background_frame(&mut rng, golden.agg_udp_port),
                });
            }
        }
    }
    let run = simulate(
        name,
        &cfg,
        &golden,
        &frames,
        &[],
        Output::HeldUntilInputDone { settle: 300 },
    );
    assert_golden(name, &golden, &run);
    let kinds: Vec<bool> = run
        .driver
        .outputs
        .iter()
        .map(|o| result_slot(&golden, o).is_some())
        .collect();
    let total_results = kinds.iter().filter(|&&r| r).count();
    let total_bypass = kinds.len() - total_results;
    assert_eq!((total_results, total_bypass), (16, 12));
    let text: String = kinds.iter().map(|&r| if r { 'R' } else { 'B' }).collect();
    println!("  output order {text}");
    let (mut results, mut bypass) = (0, 0);
    for (i, w) in kinds.windows(2).enumerate() {
        if w[0] {
            results += 1;
        } else {
            bypass += 1;
        }
        if w[0] == w[1] {
            let other_left = if w[0] {
                total_bypass - bypass
            } else {
                total_results - results
            };
            assert_eq!(
                other_left,
                0,
                "{name}: frames {i} and {} both from the {}, with {other_left} frames of \
                 the other source waiting (order {text})",
                i + 1,
                if w[0] { "results" } else { "bypass buffer" }
            );
        }
    }
}
