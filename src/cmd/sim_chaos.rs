//! `wirespeed sim panama --chaos`: the hostile-traffic run of
//! `testbench::panama::chaos` on the native simulator and/or Verilator, with its
//! tallies and invariants printed; an error if any invariant fails.

use anyhow::{bail, Result};
use hdl::panama::config::PanamaConfig;
use testbench::engine::{
    speed_report, verilator_options, DomainClock, Engine, EngineTime, Setting,
};
use testbench::panama::chaos::{run_engines, ChaosConfig, EngineChaos};

/// Runs `chaos` on `cfg` with every engine of `engine` (clock periods from
/// `clocks`), prints the report and fails if an invariant fails or the engines
/// disagree.
pub fn run(
    cfg: &PanamaConfig,
    board: &str,
    mhz: f64,
    clocks: &[DomainClock],
    chaos: &ChaosConfig,
    engine: Engine,
) -> Result<()> {
    let mut bar = None;
    let runs = run_engines(cfg, clocks, chaos, engine, &mut |p| {
        super::show_progress(&mut bar, p, "frames")
    })?;
    let first = &runs[0];
    print_report(cfg, board, mhz, chaos, first);
    if runs.len() > 1 {
        let times: Vec<EngineTime> = runs.iter().map(|r| r.time).collect();
        let setting = Setting::of(&verilator_options(false), &times);
        let identical = "the same frames out at the same cycles";
        let report = speed_report(first.outcome.cycles, identical, &times, &setting);
        println!("  {report}");
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

/// The run's tallies, drops, invariants and counter balance.
fn print_report(cfg: &PanamaConfig, board: &str, mhz: f64, chaos: &ChaosConfig, r: &EngineChaos) {
    let o = &r.outcome;
    let rep = &o.report;
    let c = &o.counters;
    println!(
        "PANAMA chaos run on {board} ({}-bit, {mhz} MHz), {} ports, {} slots, fifo_depth {}, engine {}, seed {}",
        cfg.data_width,
        cfg.ports(),
        cfg.slots,
        cfg.fifo_depth,
        r.time.engine,
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
        r.time.wall.as_secs_f64(),
        o.cycles as f64 / r.time.wall.as_secs_f64().max(1e-9)
    );
    let kinds: Vec<String> = o
        .frames_in
        .iter()
        .map(|(k, n)| format!("{} {n}", k.name()))
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
        .map(|(k, n)| format!("{} {n}", k.name()))
        .collect();
    let by_kind = if out.is_empty() {
        String::new()
    } else {
        format!(": {}", out.join(", "))
    };
    println!(
        "  frames out: {} bypass (of {} expected){by_kind}; {} results",
        rep.bypass_out, rep.bypass_expected, rep.results_out
    );
    println!(
        "  dropped: malformed {}, oversize {}, empty {}, full buffer {}, seq mismatch {}, other mismatch {}, timeout {}; unknown job (bypassed) {}",
        c.malformed, c.oversize, c.empty_frames, c.full_drops, c.seq_mismatch, c.other_mismatch, c.timeout_drops, c.unknown_job
    );
    println!("  bypass lost: {}", rep.bypass_lost);
    println!("  bypass altered: {}", rep.bypass_altered);
    println!("  wrong sums: {}", rep.wrong_sums);
    println!(
        "  output beats with tuser[127:32] set: {}",
        rep.stray_tuser_beats
    );
    let (stall, bound) = rep.longest_stall;
    println!("  longest input stall: {stall} cycles (bound {bound}: full_wait + one result frame + pipeline)");
    let (counted, refused) = rep.output_held;
    println!("  output held by m_axis_tready: {counted} cycles by output_held_cycles, {refused} refused by the bench");
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
