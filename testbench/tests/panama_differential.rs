//! The PANAMA accelerator on both engines in lockstep (every output compared
//! after every input change and every edge), and what comes out checked against
//! the golden model packet for packet: one configuration per bus width and
//! format, with jobs sharing ports, bypass traffic and random back-pressure.

use hdl::blocks::fp::FpFormat;
use hdl::panama::config::PanamaConfig;
use hdl::panama::core::panama_core;
use testbench::harness::{DiffConfig, Differential};
use testbench::panama::config::{PLUS_PORTS, SUME_PORTS};
use testbench::panama::golden::run as golden_run;
use testbench::panama::scenario::Scenario;
use testbench::panama::system::{check, configure, golden_config, StreamDriver};
use testbench::rng::seeded;

fn lockstep(cfg: &PanamaConfig, scenario: &Scenario, p_valid: f64, p_ready: f64) {
    let name = format!("panama differential {}", cfg.module_suffix());
    let mut rng = seeded(&name, 11);
    let golden_cfg = golden_config(cfg, scenario.slot_configs(cfg.slots as usize));
    let frames = scenario.frames(&mut rng, &golden_cfg);
    let want = golden_run(&golden_cfg, &frames).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(want.overflow_at, None);
    let module = panama_core(cfg).unwrap_or_else(|e| panic!("{e}"));
    let mut driver = StreamDriver::new(&frames, cfg.data_width);
    let beats = driver.input_beats() as u64;
    let cycles = (beats as f64 / p_valid.min(p_ready) * 1.6) as u64 + 600;
    let report = Differential::new(&module)
        .try_run(&DiffConfig::cycles(cycles), |s| {
            let cycle = s.cycles[0];
            let edge = !s.fired.is_empty();
            if cycle == 0 && !edge {
                configure(s, &golden_cfg)?;
            }
            driver.step(s, cycle, edge, &mut rng, p_valid, p_ready)
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let summary =
        check(&golden_cfg, &want, &driver.outputs).unwrap_or_else(|e| panic!("{name}: {e}"));
    let expected = want.frames_out();
    assert_eq!(summary.bypass_frames + summary.result_frames, expected);
    println!(
        "{name}: {} frames ({beats} beats) in, {} bypass + {} results out, identical on both \
         engines for {} cycles ({} comparisons) and equal to the golden model",
        frames.len(),
        summary.bypass_frames,
        summary.result_frames,
        report.cycles[0],
        report.comparisons
    );
}

#[test]
fn sume_256_fp32_three_jobs_with_bypass_and_back_pressure() {
    let cfg = PanamaConfig {
        fifo_depth: 8,
        ..PanamaConfig::new(256, &SUME_PORTS)
    };
    let mut scenario = Scenario::uniform(3, 4, 3, 128, FpFormat::Fp32);
    scenario.jobs[1].ports = vec![1, 2, 3];
    scenario.jobs[2].ports = vec![0, 2];
    scenario.background = 0.5;
    lockstep(&cfg, &scenario, 0.9, 0.7);
}

#[test]
fn w512_bf16_two_jobs_with_faults() {
    let cfg = PanamaConfig {
        format: FpFormat::Bf16,
        fifo_depth: 8,
        adder_stages: 3,
        ..PanamaConfig::new(512, &SUME_PORTS)
    };
    let mut scenario = Scenario::uniform(2, 4, 3, 128, FpFormat::Bf16);
    scenario.faults = 0.5;
    scenario.background = 0.3;
    lockstep(&cfg, &scenario, 0.8, 0.6);
}

#[test]
fn plus_1024_fp16_one_job_line_rate() {
    let cfg = PanamaConfig {
        format: FpFormat::Fp16,
        adder_stages: 7,
        fifo_depth: 16,
        ..PanamaConfig::new(1024, &PLUS_PORTS)
    };
    let mut scenario = Scenario::uniform(1, 2, 6, 256, FpFormat::Fp16);
    scenario.background = 1.0;
    lockstep(&cfg, &scenario, 1.0, 0.8);
}
