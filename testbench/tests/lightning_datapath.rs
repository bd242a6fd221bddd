//! The whole Lightning datapath in a closed loop with the photonic-core model:
//! logits bit-exact against the golden model (noise 0) for random networks,
//! photonic latencies and sample shifts; native == Verilator cycle by cycle; no
//! hang and a `failed` status without light or with a wrong preamble; the
//! shipped MLP on its test images; a LeNet-300-100-shaped network's cycle count.

use hdl::lightning::config::DatapathConfig as HwConfig;
use hdl::lightning::datapath::datapath;
use hdl::Module;
use rand::Rng;
use testbench::dut::{Dut, NativeDut};
use testbench::harness::{DiffConfig, Differential};
use testbench::lightning::arith::{AccWidth, OpticalLoss};
use testbench::lightning::closed_loop::{
    hardware_config, run_image, LoopControls, LoopDriver, LoopRun,
};
use testbench::lightning::golden::{infer, DatapathConfig, Network};
use testbench::lightning::link::PhotonicLink;
use testbench::lightning::model_files::{data_dir, load_workload};
use testbench::lightning::photonic::{IdealCore, PhotonicCore};
use testbench::rng::seeded;

fn random_network(rng: &mut impl Rng, sizes: &[usize]) -> Network {
    let shifts: Vec<u32> = (1..sizes.len()).map(|_| rng.gen_range(5..=9)).collect();
    Network::random(sizes, &shifts, rng).unwrap()
}

fn random_image(rng: &mut impl Rng, n: usize) -> Vec<u8> {
    (0..n).map(|_| rng.gen()).collect()
}

fn golden_logits(net: &Network, image: &[u8], acc: AccWidth) -> Vec<i64> {
    let cfg = DatapathConfig {
        acc_width: acc,
        optical_loss: OpticalLoss::UNITY,
    };
    infer(net, image, &cfg).unwrap().logits
}

fn build(net: &Network, acc: AccWidth) -> Module {
    datapath(&hardware_config(net, acc)).unwrap()
}

/// One image on the native simulator through an ideal core.
fn native_run(
    m: &Module,
    image: &[u8],
    acc: AccWidth,
    latency: usize,
    shift: usize,
    controls: &LoopControls,
) -> LoopRun {
    let mut dut = NativeDut::new(m).unwrap();
    dut.reset(2);
    let mut link = PhotonicLink::new(IdealCore, latency, shift);
    run_image(&mut dut, &mut link, image, acc.bits(), controls).unwrap()
}

fn assert_exact(run: &LoopRun, expected: &[i64], what: &str) {
    assert!(run.done, "{what}: not done after {} cycles", run.cycles);
    assert!(!run.failed, "{what}: failed status");
    assert_eq!(run.logits, expected, "{what}: logits");
}

#[test]
fn bad_parameters_are_errors() {
    let good = HwConfig {
        layers: vec![20, 3],
        acc_width: 16,
        shifts: vec![0],
        weights: vec![vec![1; 60]],
        cores: 1,
    };
    assert!(datapath(&good).is_ok());
    let cases: Vec<(&str, HwConfig)> = vec![
        (
            "cores",
            HwConfig {
                cores: 2,
                ..good.clone()
            },
        ),
        (
            "layers",
            HwConfig {
                layers: vec![20],
                ..good.clone()
            },
        ),
        (
            "layers",
            HwConfig {
                layers: vec![20, 0],
                ..good.clone()
            },
        ),
        (
            "acc_width",
            HwConfig {
                acc_width: 12,
                ..good.clone()
            },
        ),
        (
            "acc_width",
            HwConfig {
                acc_width: 49,
                ..good.clone()
            },
        ),
        (
            "shifts",
            HwConfig {
                shifts: vec![],
                ..good.clone()
            },
        ),
        (
            "shifts",
            HwConfig {
                shifts: vec![32],
                ..good.clone()
            },
        ),
        (
            "weights",
            HwConfig {
                weights: vec![vec![1; 59]],
                ..good.clone()
            },
        ),
        (
            "weights",
            HwConfig {
                weights: vec![vec![256; 60]],
                ..good.clone()
            },
        ),
        (
            "weights",
            HwConfig {
                weights: vec![],
                ..good.clone()
            },
        ),
    ];
    for (param, cfg) in cases {
        let e = datapath(&cfg).unwrap_err().to_string();
        assert!(e.contains(param), "{param}: {e}");
    }
}

#[test]
fn random_networks_latencies_and_shifts_are_bit_exact_natively() {
    let mut rng = seeded("lightning datapath random", 9101);
    for sizes in [[48usize, 16, 10], [20, 33, 7], [64, 17, 3]] {
        let net = random_network(&mut rng, &sizes);
        let acc = AccWidth::new(rng.gen_range(14..=24)).unwrap();
        let m = build(&net, acc);
        for _ in 0..3 {
            let image = random_image(&mut rng, sizes[0]);
            let latency = rng.gen_range(0..=20);
            let shift = rng.gen_range(0..=15);
            let d = rng.gen_range(0..=63);
            let controls = LoopControls {
                preamble_length: rng.gen_range(1..=12),
                dac_delay: [d; 2],
                ..LoopControls::default()
            };
            let run = native_run(&m, &image, acc, latency, shift, &controls);
            let what = format!("{sizes:?} acc {acc:?} latency {latency} shift {shift} delay {d}");
            assert_exact(&run, &golden_logits(&net, &image, acc), &what);
        }
    }
}

#[test]
fn alignment_every_shift_and_several_latencies_lock_and_are_exact() {
    let mut rng = seeded("lightning datapath alignment", 9201);
    let net = random_network(&mut rng, &[32, 16, 10]);
    let acc = AccWidth::new(20).unwrap();
    let m = build(&net, acc);
    let image = random_image(&mut rng, 32);
    let expected = golden_logits(&net, &image, acc);
    for latency in [0usize, 1, 10, 40] {
        for shift in 0..16 {
            let run = native_run(&m, &image, acc, latency, shift, &LoopControls::default());
            assert_exact(&run, &expected, &format!("latency {latency} shift {shift}"));
            // The window opens the detector latency after the preamble reaches the ADC.
            assert!(run.window_open_cycle > run.dac_start_cycle + latency as u64);
        }
    }
}

/// Operand skew: DAC 1 reaches the modulator `skew` samples later than DAC 0;
/// delaying DAC 0 by the same amount (whole cycles + shift) realigns them.
struct SkewedCore {
    skew: usize,
    weights: std::collections::VecDeque<u16>,
}

impl PhotonicCore for SkewedCore {
    fn transmit(&mut self, activation: u16, weight: u16) -> u16 {
        self.weights.push_back(weight);
        let w = self.weights.pop_front().unwrap_or(0);
        IdealCore.transmit(activation, w)
    }
}

#[test]
fn operand_delay_and_shift_registers_realign_skewed_streams() {
    let mut rng = seeded("lightning datapath skew", 9301);
    let net = random_network(&mut rng, &[40, 12, 5]);
    let acc = AccWidth::new(18).unwrap();
    let m = build(&net, acc);
    let image = random_image(&mut rng, 40);
    let expected = golden_logits(&net, &image, acc);
    for skew in [1usize, 7, 16, 16 * 3 + 9] {
        let core = SkewedCore {
            skew,
            weights: std::iter::repeat_n(0, skew).collect(),
        };
        let mut link = PhotonicLink::new(core, 5, 2);
        let controls = LoopControls {
            dac_delay: [(skew / 16) as u32, 0],
            dac_shift: [(skew % 16) as u32, 0],
            ..LoopControls::default()
        };
        let mut dut = NativeDut::new(&m).unwrap();
        dut.reset(2);
        let run = run_image(&mut dut, &mut link, &image, acc.bits(), &controls).unwrap();
        assert_exact(&run, &expected, &format!("skew {}", link.core().skew));
    }
}

/// A core that returns one fixed ADC sample whatever the light.
struct ConstantCore(u16);

impl PhotonicCore for ConstantCore {
    fn transmit(&mut self, _: u16, _: u16) -> u16 {
        self.0
    }
}

#[test]
fn no_light_or_a_wrong_preamble_fails_without_hanging() {
    let mut rng = seeded("lightning datapath failure", 9401);
    let net = random_network(&mut rng, &[32, 8, 4]);
    let acc = AccWidth::new(16).unwrap();
    let m = build(&net, acc);
    let image = random_image(&mut rng, 32);
    let timeout = 300;
    let controls = LoopControls {
        timeout,
        max_cycles: 5000,
        ..LoopControls::default()
    };
    for (what, sample) in [("no light", 0u16), ("all samples high", 0x7F00)] {
        let mut dut = NativeDut::new(&m).unwrap();
        dut.reset(2);
        let mut link = PhotonicLink::new(ConstantCore(sample), 3, 0);
        let run = run_image(&mut dut, &mut link, &image, acc.bits(), &controls).unwrap();
        assert!(run.done, "{what}: hung");
        assert!(run.failed, "{what}: no failure reported");
        assert!(run.logits.is_empty(), "{what}: logits {:?}", run.logits);
        assert!(
            run.cycles <= u64::from(timeout) + 10,
            "{what}: {} cycles",
            run.cycles
        );
    }
    // A wrong weight preamble: DAC 1 stuck at 255 (no low half) never locks.
    let mut dut = NativeDut::new(&m).unwrap();
    dut.reset(2);
    let stuck = StuckWeights;
    let mut link = PhotonicLink::new(stuck, 3, 5);
    let run = run_image(&mut dut, &mut link, &image, acc.bits(), &controls).unwrap();
    assert!(run.done && run.failed, "stuck weights: {run:?}");
    // After a failure the same datapath runs the next image correctly.
    let mut link = PhotonicLink::new(IdealCore, 3, 5);
    let run = run_image(&mut dut, &mut link, &image, acc.bits(), &controls).unwrap();
    assert_exact(&run, &golden_logits(&net, &image, acc), "after a failure");
}

/// Weights modulator stuck at full transmission.
struct StuckWeights;

impl PhotonicCore for StuckWeights {
    fn transmit(&mut self, activation: u16, _: u16) -> u16 {
        IdealCore.transmit(activation, 255 << 7)
    }
}

#[test]
fn closed_loop_native_equals_verilator_cycle_by_cycle() {
    let mut rng = seeded("lightning datapath differential", 9501);
    let net = random_network(&mut rng, &[32, 16, 10]);
    let acc = AccWidth::new(16).unwrap();
    let m = build(&net, acc);
    let latency = rng.gen_range(2..=12);
    let shift = rng.gen_range(1..=15);
    for _ in 0..2 {
        let image = random_image(&mut rng, 32);
        let controls = LoopControls::default();
        let mut link = PhotonicLink::new(IdealCore, latency, shift);
        let mut driver = LoopDriver::new(&mut link, &image, acc.bits(), &controls);
        let native = native_run(&m, &image, acc, latency, shift, &controls);
        let cycles = native.cycles + 20;
        Differential::new(&m)
            .run(&DiffConfig::cycles(cycles), |s| driver.cycle(s))
            .unwrap_or_else(|e| panic!("{e}"));
        let both = driver.result();
        let what = format!("latency {latency} shift {shift}");
        assert_exact(both, &golden_logits(&net, &image, acc), &what);
        assert_eq!(both, &native, "{what}: lockstep run vs native run");
    }
}

#[test]
fn shipped_mlp_test_set_is_bit_exact_natively() {
    let w = load_workload(&data_dir()).unwrap();
    let acc = w.model.acc_width;
    let net = &w.model.network;
    let m = build(net, acc);
    let mut dut = NativeDut::new(&m).unwrap();
    dut.reset(2);
    let mut correct = 0;
    let mut cycles = Vec::new();
    for (i, (image, &label)) in w.test.images.iter().zip(&w.test.labels).enumerate() {
        let mut link = PhotonicLink::new(IdealCore, 10, 3);
        let run = run_image(
            &mut dut,
            &mut link,
            image,
            acc.bits(),
            &LoopControls::default(),
        )
        .unwrap();
        assert_exact(&run, &golden_logits(net, image, acc), &format!("image {i}"));
        assert_eq!(run.logits, w.reference.logits[i], "image {i} vs Python");
        correct += usize::from(w.reference.predictions[i] == usize::from(label));
        cycles.push(run.cycles);
    }
    assert_eq!(correct, w.reference.correct);
    cycles.dedup();
    println!(
        "shipped MLP: {} images, cycles per image {cycles:?}",
        w.test.images.len()
    );
    assert_eq!(
        cycles.len(),
        1,
        "the cycle count does not depend on the data"
    );
}

#[test]
fn lenet_300_100_shape_runs_end_to_end_natively() {
    let mut rng = seeded("lightning lenet shape", 9601);
    let sizes = [784usize, 300, 100, 10];
    let shifts = [12u32, 12, 0];
    let net = Network::random(&sizes, &shifts, &mut rng).unwrap();
    let acc = AccWidth::new(24).unwrap();
    let m = build(&net, acc);
    let image = random_image(&mut rng, 784);
    let run = native_run(&m, &image, acc, 10, 3, &LoopControls::default());
    assert_exact(&run, &golden_logits(&net, &image, acc), "LeNet shape");
    println!(
        "LeNet-300-100: {} cycles per image (reference RTL: 16825); DAC start {}, window open {}",
        run.cycles, run.dac_start_cycle, run.window_open_cycle
    );
    for e in &run.timeline {
        println!("  cycle {:>6}: {}", e.cycle, e.what);
    }
}
