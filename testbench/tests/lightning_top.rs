//! The Lightning board top (`hdl::lightning::top`), driven only through AXI-Lite
//! with the photonic link between its DAC and ADC streams: logits equal the
//! golden model bit for bit, on the native simulator (both boards' ADC formats,
//! unrelated clocks) and on Verilator, with the converter streams clean (lit DAC
//! samples in the bus format, zero samples without `tvalid`, no stray answer
//! beat); every register's reset value against the map, the status protocol,
//! failures and overflow accounting; parameter errors.
//!
//! `cargo test -p testbench --test lightning_top`

use hdl::blocks::axil_regfile::RegisterMap;
use hdl::lightning::config::DatapathConfig as HwConfig;
use hdl::lightning::top::{lightning_top, TopConfig};
use hdl::Module;
use rand::Rng;
use testbench::dut::{Dut, NativeDut, VerilatorDut};
use testbench::lightning::arith::{AccWidth, OpticalLoss};
use testbench::lightning::closed_loop::hardware_config;
use testbench::lightning::golden::{infer, DatapathConfig, Network};
use testbench::lightning::link::PhotonicLink;
use testbench::lightning::model_files::{data_dir, load_workload};
use testbench::lightning::photonic::IdealCore;
use testbench::lightning::top_bench::{TopBench, TopRun};
use testbench::rng::seeded;
use testbench::verilator::BuildOptions;

/// Status bits (independent of the generator's constants, from the documented map).
const BUSY: u32 = 1;
const DONE: u32 = 2;
const FAILED: u32 = 4;
const ADC_OVERFLOW: u32 = 16;
const CMD_OVERFLOW: u32 = 32;
/// `status[18:16]`: why the last run failed (1 = no preamble lock).
const FAIL_REASON_SHIFT: u32 = 16;
const NO_LOCK: u32 = 1;

/// Clock periods in ps: (dac, adc, axil).
type Periods = (u64, u64, u64);

fn golden_logits(net: &Network, image: &[u8], acc: AccWidth) -> Vec<i64> {
    let cfg = DatapathConfig {
        acc_width: acc,
        optical_loss: OpticalLoss::UNITY,
    };
    infer(net, image, &cfg).unwrap().logits
}

fn top_for(cfg: &HwConfig, adc_samples: u32, cmd_depth: u32) -> (Module, RegisterMap) {
    lightning_top(
        cfg,
        &TopConfig {
            adc_samples_per_clock: adc_samples,
            adc_fifo_depth: 16,
            command_fifo_depth: cmd_depth,
        },
    )
    .unwrap()
}

fn start_dut(dut: &mut dyn Dut, periods: Periods) {
    dut.set_clock_period("dac", periods.0).unwrap();
    dut.set_clock_period("adc", periods.1).unwrap();
    dut.set_clock_period("axil", periods.2).unwrap();
    dut.reset(4);
}

fn assert_golden(run: &TopRun, expected: &[i64], what: &str) {
    assert_eq!(
        run.status & (BUSY | DONE | FAILED),
        DONE,
        "{what}: status {:#x}",
        run.status
    );
    assert_eq!(run.logits, expected, "{what}: logits");
    assert_eq!(
        run.photonic_slack,
        run.window_open_cycle - run.dac_start_cycle,
        "{what}: slack"
    );
    assert!(run.dac_start_cycle > 0 && run.window_open_cycle > run.dac_start_cycle);
    assert!(
        run.cycles > run.window_open_cycle,
        "{what}: cycles {}",
        run.cycles
    );
    assert_eq!(
        run.status_after_start & (BUSY | DONE),
        BUSY,
        "{what}: status right after start"
    );
}

/// The shipped MLP's first `n` test images through the top on `dut`.
fn shipped_images(
    dut: &mut dyn Dut,
    map: &RegisterMap,
    adc_samples: usize,
    n: usize,
    periods: Periods,
) {
    shipped_images_with_gaps(dut, map, adc_samples, n, periods, None);
}

/// [`shipped_images`] with the ADC streams' gaps (`TopBench::adc_gaps`).
fn shipped_images_with_gaps(
    dut: &mut dyn Dut,
    map: &RegisterMap,
    adc_samples: usize,
    n: usize,
    periods: Periods,
    gaps: Option<(u64, u64)>,
) {
    let w = load_workload(&data_dir()).unwrap();
    let net = &w.model.network;
    start_dut(dut, periods);
    let link = PhotonicLink::new(IdealCore, 10, 3);
    let mut bench = TopBench::new(dut, vec![link], map, adc_samples).unwrap();
    bench.adc_gaps = gaps;
    bench.idle(8).unwrap();
    for (k, image) in w.test.images.iter().take(n).enumerate() {
        let run = bench.infer(image, net.outputs(), 200).unwrap();
        let expected = golden_logits(net, image, w.model.acc_width);
        assert_golden(&run, &expected, &format!("image {k}"));
        assert_eq!(
            run.logits, w.reference.logits[k],
            "image {k}: Python reference"
        );
    }
    assert_eq!(bench.read("runs").unwrap(), n as u32);
    assert_eq!(bench.read("failures").unwrap(), 0);
    let (lo, hi) = (
        bench.read("latency_min").unwrap(),
        bench.read("latency_max").unwrap(),
    );
    assert!(lo <= hi && lo > 0, "latency range {lo}..{hi}");
    assert_eq!(bench.read("adc_dropped").unwrap(), 0);
    assert_eq!(bench.read("cmd_dropped").unwrap(), 0);
    let streams = bench.streams();
    assert!(streams.clean(), "{streams}");
}

fn shipped_top(adc_samples: u32) -> (Module, RegisterMap) {
    let w = load_workload(&data_dir()).unwrap();
    top_for(
        &hardware_config(&w.model.network, w.model.acc_width, 1),
        adc_samples,
        16,
    )
}

#[test]
fn zcu111_shipped_mlp_over_axi_lite_equals_golden_native() {
    let (m, map) = shipped_top(16);
    let mut dut = NativeDut::new(&m).unwrap();
    // ZCU111: DAC and ADC on one clock; AXI-Lite unrelated (~100 vs 253 MHz).
    shipped_images(&mut dut, &map, 16, 20, (1000, 1000, 2531));
}

#[test]
fn rfsoc4x2_eight_sample_adc_on_its_own_clock_equals_golden_native() {
    let (m, map) = shipped_top(8);
    let mut dut = NativeDut::new(&m).unwrap();
    // 8-sample ADC beats at twice the DAC word rate; AXI-Lite slow and unrelated.
    shipped_images(&mut dut, &map, 8, 6, (1000, 500, 6143));
}

/// The 8-sample gearbox pairs valid beats only: one ADC cycle in 97 the stream
/// holds its beat (`tvalid` 0 over all-ones data, the beat kept for the next
/// cycle), so gaps fall between the two halves of a word and words arrive late
/// during each inference, and every answer stays exact.
#[test]
fn rfsoc4x2_eight_sample_adc_with_gaps_equals_golden_native() {
    let (m, map) = shipped_top(8);
    let mut dut = NativeDut::new(&m).unwrap();
    shipped_images_with_gaps(&mut dut, &map, 8, 4, (1000, 500, 6143), Some((97, 1)));
}

/// `latency_min` and `latency_max` follow runs of different lengths: the same
/// image with both DACs of the core delayed by 0, 6 and 3 whole cycles takes
/// three different times (each answer exact), so the smallest is the first run
/// and the largest the second, neither the last.
#[test]
fn latency_range_follows_runs_of_different_lengths() {
    let w = load_workload(&data_dir()).unwrap();
    let net = &w.model.network;
    let (m, map) = shipped_top(16);
    let mut dut = NativeDut::new(&m).unwrap();
    start_dut(&mut dut, (1000, 1000, 2531));
    let link = PhotonicLink::new(IdealCore, 10, 3);
    let mut bench = TopBench::new(&mut dut, vec![link], &map, 16).unwrap();
    let image = &w.test.images[0];
    let expected = golden_logits(net, image, w.model.acc_width);
    let mut cycles = vec![];
    for delay in [0, 6, 3] {
        bench.write("dac0_delay", delay).unwrap();
        bench.write("dac1_delay", delay).unwrap();
        let run = bench.infer(image, net.outputs(), 200).unwrap();
        assert_golden(&run, &expected, &format!("delay {delay}"));
        cycles.push(run.cycles);
    }
    assert!(
        cycles[0] < cycles[2] && cycles[2] < cycles[1],
        "run lengths {cycles:?} do not follow the delays"
    );
    assert_eq!(bench.read("latency_min").unwrap(), cycles[0]);
    assert_eq!(bench.read("latency_max").unwrap(), cycles[1]);
    assert_eq!(bench.read("runs").unwrap(), 3);
}

#[test]
fn random_network_with_skewed_clocks_native() {
    let mut rng = seeded("lightning_top random network", 7);
    let sizes = [40usize, 20, 5];
    let shifts: Vec<u32> = (1..sizes.len()).map(|_| rng.gen_range(5..=9)).collect();
    let net = Network::random(&sizes, &shifts, &mut rng).unwrap();
    let acc = AccWidth::new(24).unwrap();
    let (m, map) = top_for(&hardware_config(&net, acc, 1), 16, 16);
    let mut dut = NativeDut::new(&m).unwrap();
    // Another photonic latency and shift, AXI-Lite at an unrelated period.
    start_dut(&mut dut, (1000, 1000, 3700));
    let mut bench = TopBench::new(
        &mut dut,
        vec![PhotonicLink::new(IdealCore, 7, 11)],
        &map,
        16,
    )
    .unwrap();
    for k in 0..4 {
        let image: Vec<u8> = (0..sizes[0]).map(|_| rng.gen()).collect();
        let run = bench.infer(&image, sizes[2], 200).unwrap();
        assert_golden(
            &run,
            &golden_logits(&net, &image, acc),
            &format!("image {k}"),
        );
    }
}

#[test]
fn verilator_shipped_mlp_over_axi_lite_equals_golden() {
    let (m, map) = shipped_top(16);
    let mut dut = VerilatorDut::new(&m, &BuildOptions::default()).unwrap();
    shipped_images(&mut dut, &map, 16, 3, (1000, 1000, 2531));
}

#[test]
fn register_map_resets_to_the_closed_loop_defaults_and_describes_the_network() {
    let w = load_workload(&data_dir()).unwrap();
    let net = &w.model.network;
    let (m, map) = shipped_top(16);
    let mut dut = NativeDut::new(&m).unwrap();
    start_dut(&mut dut, (1000, 1000, 2531));
    let mut bench = TopBench::new(
        &mut dut,
        vec![PhotonicLink::new(IdealCore, 10, 3)],
        &map,
        16,
    )
    .unwrap();
    bench.idle(20).unwrap();
    let mut expected: Vec<(String, u32)> = vec![
        ("id".into(), u32::from_be_bytes(*b"LGHT")),
        ("inputs".into(), net.inputs() as u32),
        ("optical_loss0".into(), 0x0100),
        ("preamble_length".into(), 10),
        ("timeout".into(), 2000),
        ("dac0_delay".into(), 0),
        ("dac0_shift".into(), 0),
        ("dac1_delay".into(), 0),
        ("dac1_shift".into(), 0),
        ("status".into(), 0),
        ("runs".into(), 0),
        ("latency_min".into(), u32::MAX),
        (
            "params".into(),
            net.layers().len() as u32 | 16 << 8 | 16 << 16 | (net.outputs() as u32) << 24,
        ),
    ];
    for (l, layer) in net.layers().iter().enumerate() {
        expected.push((format!("layer{l}_outputs"), layer.outputs() as u32));
        expected.push((
            format!("layer{l}_cycles_per_output"),
            layer.inputs().div_ceil(16) as u32,
        ));
    }
    for (name, value) in &expected {
        assert_eq!(bench.read(name).unwrap(), *value, "register {name}");
    }
    // The map's reset column says the same, every register reads its reset
    // column after reset, and offsets are 4 apart from 0.
    for (i, r) in map.registers.iter().enumerate() {
        assert_eq!(r.offset, 4 * i as u32, "{}", r.name);
        if let Some((_, v)) = expected.iter().find(|(n, _)| *n == r.name) {
            assert_eq!(r.reset, *v, "map reset of {}", r.name);
        }
        let got = bench.read(&r.name).unwrap();
        assert_eq!(
            got, r.reset,
            "register {} after reset, against the map",
            r.name
        );
    }
    // Read-only registers refuse writes; past the map is an error.
    let id = bench.offset("id").unwrap();
    assert_ne!(bench.write_addr(id, 0).unwrap(), 0, "write to id");
    let end = 4 * map.registers.len() as u32;
    assert_ne!(bench.read_addr(end).unwrap().1, 0, "read past the map");
}

#[test]
fn a_failed_run_is_reported_and_the_next_run_uses_the_restored_controls() {
    let w = load_workload(&data_dir()).unwrap();
    let net = &w.model.network;
    let (m, map) = shipped_top(16);
    let mut dut = NativeDut::new(&m).unwrap();
    start_dut(&mut dut, (1000, 1000, 2531));
    let mut bench = TopBench::new(
        &mut dut,
        vec![PhotonicLink::new(IdealCore, 10, 3)],
        &map,
        16,
    )
    .unwrap();
    let image = &w.test.images[0];
    // 5 cycles are too few to lock on a 10-cycle preamble 13 cycles away.
    bench.write("timeout", 5).unwrap();
    let run = bench.infer(image, net.outputs(), 200).unwrap();
    assert_eq!(
        run.status & (BUSY | DONE | FAILED),
        DONE | FAILED,
        "status {:#x}",
        run.status
    );
    assert_eq!(run.status >> FAIL_REASON_SHIFT & 7, NO_LOCK, "fail_reason");
    assert_eq!(bench.read("failures").unwrap(), 1);
    bench.write("timeout", 2000).unwrap();
    let run = bench.infer(image, net.outputs(), 200).unwrap();
    assert_eq!(
        run.status >> FAIL_REASON_SHIFT & 7,
        0,
        "fail_reason after success"
    );
    assert_golden(
        &run,
        &golden_logits(net, image, w.model.acc_width),
        "after failure",
    );
    assert_eq!(bench.read("runs").unwrap(), 2);
    assert_eq!(bench.read("latency_min").unwrap(), run.cycles);
    bench.write("clear_stats", 1).unwrap();
    bench.idle(20).unwrap();
    assert_eq!(bench.read("runs").unwrap(), 0);
    assert_eq!(bench.read("failures").unwrap(), 0);
    assert_eq!(bench.read("latency_min").unwrap(), u32::MAX);
}

#[test]
fn adc_fifo_overflow_is_counted_and_flagged_never_silent() {
    let (m, map) = shipped_top(16);
    let mut dut = NativeDut::new(&m).unwrap();
    // ADC words arrive twice as fast as the DAC clock can take them.
    start_dut(&mut dut, (1000, 500, 2531));
    let mut bench = TopBench::new(
        &mut dut,
        vec![PhotonicLink::new(IdealCore, 10, 3)],
        &map,
        16,
    )
    .unwrap();
    bench.idle(100).unwrap();
    let dropped = bench.read("adc_dropped").unwrap();
    assert!(dropped > 0, "no drops counted");
    assert_ne!(bench.read("status").unwrap() & ADC_OVERFLOW, 0);
    // Stop the ADC, clear: the count and the bit stay clear.
    bench.adc_enabled = false;
    bench.idle(20).unwrap();
    bench.write("clear_stats", 1).unwrap();
    bench.idle(20).unwrap();
    assert_eq!(bench.read("adc_dropped").unwrap(), 0);
    assert_eq!(bench.read("status").unwrap() & ADC_OVERFLOW, 0);
}

#[test]
fn command_queue_overflow_is_counted_and_flagged() {
    let w = load_workload(&data_dir()).unwrap();
    let net = &w.model.network;
    let cfg = hardware_config(net, w.model.acc_width, 1);
    let (m, map) = top_for(&cfg, 16, 4);
    let mut dut = NativeDut::new(&m).unwrap();
    start_dut(&mut dut, (1000, 1000, 2531));
    let mut bench = TopBench::new(
        &mut dut,
        vec![PhotonicLink::new(IdealCore, 10, 3)],
        &map,
        16,
    )
    .unwrap();
    bench.load_image(&w.test.images[0]).unwrap();
    bench.write("start", 1).unwrap();
    // While the run lasts, commands wait; 12 commits overflow a 4-entry queue.
    for _ in 0..12 {
        bench.write("image_commit", 1).unwrap();
    }
    let dropped = bench.read("cmd_dropped").unwrap();
    assert!(dropped > 0, "no command drops counted");
    assert_ne!(bench.read("status").unwrap() & CMD_OVERFLOW, 0);
    assert_eq!(
        bench.read("image_commit").unwrap() + dropped,
        4 + 12,
        "every commit accounted"
    );
}

#[test]
fn bad_top_parameters_are_errors_naming_the_parameter() {
    let w = load_workload(&data_dir()).unwrap();
    let cfg = hardware_config(&w.model.network, w.model.acc_width, 1);
    let ok = TopConfig::default();
    let cases: Vec<(HwConfig, TopConfig, &str)> = vec![
        (
            cfg.clone(),
            TopConfig {
                adc_samples_per_clock: 12,
                ..ok.clone()
            },
            "adc_samples_per_clock",
        ),
        (
            cfg.clone(),
            TopConfig {
                adc_fifo_depth: 24,
                ..ok.clone()
            },
            "adc_fifo_depth",
        ),
        (
            cfg.clone(),
            TopConfig {
                command_fifo_depth: 2,
                ..ok.clone()
            },
            "command_fifo_depth",
        ),
        (
            HwConfig {
                acc_width: 40,
                ..cfg.clone()
            },
            ok.clone(),
            "acc_width",
        ),
        (
            HwConfig {
                cores: 0,
                ..cfg.clone()
            },
            ok.clone(),
            "cores",
        ),
        (
            HwConfig {
                cores: 9,
                ..cfg.clone()
            },
            ok.clone(),
            "cores",
        ),
        (
            HwConfig {
                layers: vec![16, 65],
                shifts: vec![0],
                weights: vec![vec![1; 16 * 65]],
                ..cfg.clone()
            },
            ok.clone(),
            "layers",
        ),
    ];
    for (c, t, param) in cases {
        let e = lightning_top(&c, &t).expect_err(param).to_string();
        assert!(e.contains(param), "error for {param} does not name it: {e}");
    }
}
