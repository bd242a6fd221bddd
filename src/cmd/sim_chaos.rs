//! `wirespeed sim panama --chaos`: the hostile-traffic run of
//! `testbench::panama::chaos` on the native simulator and/or Verilator, with its
//! tallies and invariants printed; an error if any invariant fails.

use anyhow::{anyhow, bail, Result};
use hdl::panama::config::PanamaConfig;
use hdl::panama::core::panama_core;
use indicatif::{ProgressBar, ProgressStyle};
use std::time::{Duration, Instant};
use testbench::engine::{speed_line, DomainClock, Engine};
use testbench::panama::chaos::{run as chaos_run, ChaosConfig, ChaosOutcome};

/// One engine's chaos run.
struct EngineRun {
    engine: Engine,
    outcome: ChaosOutcome,
    wall: Duration,
    build: Duration,
}

/// Runs `chaos` on `cfg` with every engine of `engine` (clock periods from
/// `clocks`), prints the report and
/// fails if an invariant fails or the engines disagree.
pub fn run(
    cfg: &PanamaConfig,
    board: &str,
    mhz: f64,
    clocks: &[DomainClock],
    chaos: &ChaosConfig,
    engine: Engine,
) -> Result<()> {
    let module = panama_core(cfg)?;
    let mut runs = vec![];
    for &e in engine.engines() {
        let (mut dut, build) = e.build(&module, false, clocks)?;
        let bar = ProgressBar::new(chaos.frames as u64);
        bar.set_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} frames  {elapsed}  {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar.set_message(format!("{e:?}"));
        let started = Instant::now();
        let outcome = chaos_run(dut.as_mut(), cfg, chaos, |done| {
            bar.set_position(done as u64)
        })
        .map_err(|e| anyhow!("chaos run: {e}"))?;
        bar.finish_and_clear();
        runs.push(EngineRun {
            engine: e,
            outcome,
            wall: started.elapsed(),
            build,
        });
    }
    let first = &runs[0];
    for other in &runs[1..] {
        let (a, b) = (&first.outcome, &other.outcome);
        if a.digest != b.digest || a.cycles != b.cycles || a.counters != b.counters {
            bail!(
                "{:?} differs from {:?}: {} vs {} cycles, counters {:?} vs {:?}",
                other.engine,
                first.engine,
                b.cycles,
                a.cycles,
                b.counters,
                a.counters
            );
        }
    }
    print_report(cfg, board, mhz, chaos, first);
    if let [native, verilator] = &runs[..] {
        println!(
            "  {} (the same frames out at the same cycles)",
            speed_line(
                first.outcome.cycles,
                (native.wall, native.build),
                (verilator.wall, verilator.build)
            )
        );
    }
    let violations = first.outcome.violations();
    if violations.is_empty() {
        println!("  every invariant holds");
        Ok(())
    } else {
        for v in &violations {
            println!("  FAILED: {v}");
        }
        bail!(
            "{} invariant(s) failed (replay with --seed {})",
            violations.len(),
            chaos.seed
        )
    }
}

fn print_report(cfg: &PanamaConfig, board: &str, mhz: f64, chaos: &ChaosConfig, r: &EngineRun) {
    let o = &r.outcome;
    let rep = &o.report;
    let c = &o.counters;
    println!(
        "PANAMA chaos run on {board} ({}-bit, {mhz} MHz), {} ports, {} slots, fifo_depth {}, engine {:?}, seed {}",
        cfg.data_width,
        cfg.ports(),
        cfg.slots,
        cfg.fifo_depth,
        r.engine,
        chaos.seed
    );
    println!(
        "  full_wait {} cycles, slot_timeout {} cycles, max_frame_bytes {}; load {:.2}, back-pressure {:.2}",
        chaos.full_wait, chaos.slot_timeout, cfg.max_frame_bytes, chaos.load, chaos.back_pressure
    );
    println!(
        "  simulated {} cycles ({:.1} ms at {mhz} MHz) in {:.1} s: {:.0} cycles/s",
        o.cycles,
        o.cycles as f64 / mhz / 1000.0,
        r.wall.as_secs_f64(),
        o.cycles as f64 / r.wall.as_secs_f64().max(1e-9)
    );
    let kinds: Vec<String> = o
        .frames_in
        .iter()
        .map(|(k, n)| format!("{k:?} {n}"))
        .collect();
    println!(
        "  frames in: {} ({} on the wire): {}",
        o.frames_in.values().sum::<u64>(),
        o.wire_frames,
        kinds.join(", ")
    );
    let out: Vec<String> = o
        .bypass_out
        .iter()
        .map(|(k, n)| format!("{k:?} {n}"))
        .collect();
    println!(
        "  frames out: {} bypass (of {} expected): {}; {} results",
        rep.bypass_out,
        rep.bypass_expected,
        out.join(", "),
        rep.results_out
    );
    println!(
        "  dropped: malformed {}, oversize {}, empty {}, full buffer {}, seq mismatch {}, other mismatch {}, timeout {}; unknown job (bypassed) {}",
        c.malformed, c.oversize, c.empty_frames, c.full_drops, c.seq_mismatch, c.other_mismatch, c.timeout_drops, c.unknown_job
    );
    println!("  bypass lost: {}", rep.bypass_lost);
    println!("  bypass altered: {}", rep.bypass_altered);
    println!("  wrong sums: {}", rep.wrong_sums);
    let (stall, bound) = rep.longest_stall;
    println!("  longest input stall: {stall} cycles (bound {bound}: full_wait + one result frame + pipeline)");
    println!(
        "  counters balance: {}",
        if rep.counter_errors.is_empty() {
            format!(
                "yes (in {} = bypassed {} + accepted {} + dropped {}; accepted = summed {} + dropped {} + waiting {})",
                c.packets_in,
                c.bypassed,
                c.accepted,
                c.malformed + c.oversize + c.empty_frames + c.full_drops,
                c.results_out,
                c.seq_mismatch + c.other_mismatch + c.timeout_drops,
                rep.waiting
            )
        } else {
            format!("no: {}", rep.counter_errors.join("; "))
        }
    );
}
