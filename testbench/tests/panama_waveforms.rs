//! Waveform snapshots of the PANAMA core on the NetFPGA-SUME bus (256 bits): one
//! bypass packet, and one two-worker aggregation from the first input beat to the
//! last result beat. Each window is recorded on the native simulator and on
//! Verilator, which must agree cycle for cycle; the frames that come out inside
//! the window are checked against the golden model, so the snapshots pin down
//! timing whose content another check establishes.

use hdl::blocks::fp::FpFormat;
use hdl::panama::config::PanamaConfig;
use hdl::panama::core::panama_core;
use hdl::Module;
use std::cell::RefCell;
use std::rc::Rc;
use testbench::dut::{Dut, DutError, NativeDut};
use testbench::panama::config::{GoldenConfig, SUME_PORTS};
use testbench::panama::golden::{run as golden_run, GoldenOutcome, InFrame};
use testbench::panama::scenario::Scenario;
use testbench::panama::system::{check, configure, golden_config, StreamDriver};
use testbench::panama::traffic::background_frame;
use testbench::rng::seeded;
use testbench::waveform::Waveform;

/// The recorded ports: both AXI-Stream interfaces, `tuser` cut to the NetFPGA
/// length/source/destination fields.
const SIGNALS: &[&str] = &[
    "s_axis_tvalid",
    "s_axis_tready",
    "s_axis_tlast",
    "s_axis_tuser[31:0]",
    "s_axis_tdata",
    "m_axis_tvalid",
    "m_axis_tready",
    "m_axis_tlast",
    "m_axis_tuser[31:0]",
    "m_axis_tdata",
];

/// Cycles a window may take before the test gives up.
const BOUND: u32 = 400;

/// A small SUME-width core: one job slot, two packets per buffer.
fn config() -> PanamaConfig {
    PanamaConfig {
        slots: 1,
        fifo_depth: 2,
        max_payload_bytes: 256,
        ..PanamaConfig::new(256, &SUME_PORTS)
    }
}

/// A drive that configures the core, offers `frames` back to back and takes every
/// output beat at once; the driver stays readable through `probe`.
fn drive(
    frames: &[InFrame],
    golden_cfg: &GoldenConfig,
    width: u32,
    probe: &Rc<RefCell<StreamDriver>>,
) -> impl FnMut(u32, &mut dyn Dut) -> Result<(), DutError> {
    let driver = Rc::clone(probe);
    *driver.borrow_mut() = StreamDriver::new(frames, width);
    let golden_cfg = golden_cfg.clone();
    let mut rng = seeded("panama waveform drive", 0);
    move |cycle, mut dut| {
        if cycle == 0 {
            configure(&mut dut, &golden_cfg)?;
        }
        driver
            .borrow_mut()
            .step(&mut dut, u64::from(cycle), cycle > 0, &mut rng, 1.0, 1.0)
    }
}

/// Records the window from the first input beat to the last output beat of
/// `frames` on both engines, checks what came out against the golden model and
/// returns the table rendering.
fn window(
    name: &str,
    module: &Module,
    cfg: &PanamaConfig,
    scenario: &Scenario,
    frames: &[InFrame],
) -> String {
    let golden_cfg = golden_config(cfg, scenario.slot_configs(cfg.slots as usize));
    let want: GoldenOutcome = golden_run(&golden_cfg, frames).unwrap_or_else(|e| panic!("{e}"));
    let expected = want.frames_out();
    let probe = Rc::new(RefCell::new(StreamDriver::new(&[], cfg.data_width)));

    // Find the window's length natively: up to the cycle the last frame left.
    let mut native = NativeDut::new(module).unwrap_or_else(|e| panic!("{e}"));
    native.reset(2);
    Waveform::record(
        &mut native,
        &["m_axis_tvalid"],
        BOUND,
        drive(frames, &golden_cfg, cfg.data_width, &probe),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let last_cycle = {
        let d = probe.borrow();
        assert_eq!(
            d.outputs.len(),
            expected,
            "{name}: frames out within {BOUND} cycles"
        );
        d.output_span().1
    };
    // Through the cycle after the last beat, in which the driver sees it taken.
    let cycles = last_cycle as u32 + 2;

    let wave = Waveform::record_on_both_engines(module, SIGNALS, cycles, || {
        drive(frames, &golden_cfg, cfg.data_width, &probe)
    })
    .unwrap_or_else(|e| panic!("{name}: {e}"));
    let d = probe.borrow();
    assert_eq!(d.first_accepted.first().copied().flatten(), Some(0));
    assert_eq!(
        d.outputs.len(),
        expected,
        "{name}: every frame inside the window"
    );
    let summary = check(&golden_cfg, &want, &d.outputs).unwrap_or_else(|e| panic!("{name}: {e}"));
    println!(
        "{name}: {cycles} cycles, {} bypass + {} result frames, equal on both engines and to \
         the golden model",
        summary.bypass_frames, summary.result_frames
    );
    wave.render_table()
}

#[test]
fn waveform_one_bypass_packet() {
    let cfg = config();
    let module = panama_core(&cfg).unwrap_or_else(|e| panic!("{e}"));
    let scenario = Scenario::uniform(0, 0, 0, 64, FpFormat::Fp32);
    // The first seeded background frame of at most two beats (a short window).
    let mut rng = seeded("panama waveform bypass", 0);
    let bytes = std::iter::repeat_with(|| background_frame(&mut rng, 0x5041))
        .find(|f| f.len() <= 2 * cfg.beat_bytes() as usize)
        .unwrap_or_default();
    let frames = [InFrame { src: 1, bytes }];
    insta::assert_snapshot!(window("bypass", &module, &cfg, &scenario, &frames));
}

#[test]
fn waveform_two_worker_aggregation() {
    let cfg = config();
    let module = panama_core(&cfg).unwrap_or_else(|e| panic!("{e}"));
    let mut scenario = Scenario::uniform(1, 2, 1, 64, FpFormat::Fp32);
    scenario.round_robin = true;
    let golden_cfg = golden_config(&cfg, scenario.slot_configs(cfg.slots as usize));
    let frames = scenario.frames(&mut seeded("panama waveform aggregation", 0), &golden_cfg);
    assert_eq!(frames.len(), 2, "one packet per worker");
    insta::assert_snapshot!(window("aggregation", &module, &cfg, &scenario, &frames));
}
