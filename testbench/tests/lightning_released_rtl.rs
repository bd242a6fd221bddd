//! The released RTL's arithmetic contract (`arith = released-rtl`): golden-model
//! unit tests of each of its five differences against values derived by hand
//! from the RTL's semantics (integer loss gain, sign bit 1 = positive, 16-bit
//! wrapping accumulator with ReLU on bit 15, data-dependent per-layer
//! normalization, halving preamble mean); the preamble detector's mean on both
//! engines; and random networks and images through the closed loop, bit-exact
//! against the golden model natively (1–3 cores, memory and streamed weights,
//! loss gains 1–3 in the `optical_loss` registers) and on Verilator (a small
//! sample: its builds are slow; gain 2), with networks built on purpose to wrap
//! the accumulator and to normalize with a left shift; its
//! Verilog passes Verilator lint (`-Wall`) and Icarus Verilog.

mod verilog_common;

use hdl::lightning::config::{Arith, DatapathConfig as HwConfig, WeightSource};
use hdl::lightning::datapath::{datapath, FAIL_NONE};
use hdl::lightning::preamble_detector::{preamble_detector, PreambleDetectorConfig, PreambleMean};
use hdl::Module;
use rand::Rng;
use testbench::dut::Dut;
use testbench::engine::{DomainClock, Engine};
use testbench::lightning::arith::released_rtl::{
    self, accumulate, halving_mask, halving_mean, layer_shift, normalize_layer, relu, signed_term,
    LossGain, Shift,
};
use testbench::lightning::arith::{
    encode_sample, pack_bus, AccWidth, Contract, OpticalLoss, Weight,
};
use testbench::lightning::closed_loop::{
    hardware_config_as, run_image, LoopControls, LoopRun, PortShape,
};
use testbench::lightning::golden::{
    infer, infer_as, released_lane_sums, ContractConfig, DatapathConfig, Inference, Layer, Network,
};
use testbench::lightning::link::PhotonicLink;
use testbench::lightning::photonic::IdealCore;
use testbench::pins::{Pin, Pins};
use testbench::rng::seeded;

/// The released RTL's golden answer with every core's loss gain `gain` (no
/// noise).
fn golden(net: &Network, image: &[u8], gain: LossGain) -> Inference {
    infer_as(net, image, &ContractConfig::ReleasedRtl(gain)).unwrap()
}

/// A generated released-RTL datapath and its port shape.
struct Built {
    module: Module,
    shape: PortShape,
}

fn build(net: &Network, cores: u32, source: WeightSource) -> Built {
    let cfg = HwConfig {
        weight_source: source,
        ..hardware_config_as(net, AccWidth::RELEASED_RTL, cores, Contract::ReleasedRtl)
    };
    assert_eq!(cfg.arith, Arith::ReleasedRtl);
    Built {
        module: datapath(&cfg).unwrap(),
        shape: PortShape::of(&cfg),
    }
}

/// `module` on `engine`, its clock at 4 ns (the period is not observable here).
fn model(engine: Engine, module: &Module) -> Box<dyn Dut> {
    let clocks: Vec<DomainClock> = module
        .domains
        .iter()
        .map(|d| DomainClock {
            domain: d.name.clone(),
            role: "test".into(),
            period_ps: 4000,
        })
        .collect();
    engine.build(module, false, &clocks).unwrap().0
}

/// One image on `engine`, core *c* through an ideal link with `paths[c]` =
/// (latency, shift), every core's `optical_loss` register holding `gain`.
fn run_on(
    engine: Engine,
    b: &Built,
    image: &[u8],
    paths: &[(usize, usize)],
    gain: LossGain,
) -> LoopRun {
    let mut dut = model(engine, &b.module);
    dut.reset(2);
    let mut links: Vec<_> = paths
        .iter()
        .map(|&(latency, shift)| PhotonicLink::new(IdealCore, latency, shift))
        .collect();
    let controls = LoopControls {
        optical_loss: vec![OpticalLoss(gain.0); paths.len()],
        ..LoopControls::default()
    };
    run_image(dut.as_mut(), &mut links, image, b.shape.clone(), &controls).unwrap()
}

fn assert_exact(run: &LoopRun, expected: &[i64], what: &str) {
    assert!(
        expected.iter().any(|&v| v != 0),
        "{what}: degenerate test, every golden logit is 0"
    );
    assert!(run.done, "{what}: not done after {} cycles", run.cycles);
    assert_eq!(run.fail_reason, FAIL_NONE, "{what}: fail reason");
    assert_eq!(run.logits, expected, "{what}: logits");
}

fn random_image(rng: &mut impl Rng, n: usize) -> Vec<u8> {
    (0..n).map(|_| rng.gen()).collect()
}

#[test]
fn loss_gain_multiplies_the_extracted_product_modulo_2_16() {
    // loss_compensator: tdata = sample[14:7] * multiply, 16 bits kept.
    assert_eq!(LossGain(3).apply(200), 600);
    // 200 · 400 = 80000 = 65536 + 14464.
    assert_eq!(LossGain(400).apply(200), 14_464);
    assert_eq!(LossGain::UNITY.apply(254), 254);
    // ADC sample of a=255, |w|=255 is (255*255)>>8 = 254 on bits [14:7]; gain 2.
    let sums = released_lane_sums(
        &[Weight::from_signed(255).unwrap()],
        &[255],
        LossGain(2),
        &mut IdealCore,
    );
    assert_eq!(sums, vec![508]);
    // wirespeed's Q8.8 factor 3.0 on the whole sample saturates at 0x7FFF, so
    // the extracted product is 255, not 600.
    let s = OpticalLoss(0x0300).compensate(encode_sample(200));
    assert_eq!(s, 0x7FFF);
}

#[test]
fn sign_bit_one_is_positive() {
    // integration: signed = sign ? op : 0 - op (16 bits).
    assert_eq!(signed_term(5, true), 5);
    assert_eq!(signed_term(5, false), 0xFFFB);
    let gained = [10u16; 16];
    let signs: [bool; 16] = std::array::from_fn(|i| i < 4);
    assert_eq!(
        released_rtl::lane_sum(&gained, &signs),
        0u16.wrapping_sub(80)
    );
    // The generator's sign words follow the contract: weights 3, -3, 0 on lanes
    // 0, 1, 2 give bits 0b101 (released RTL) and 0b010 (wirespeed).
    let cfg = HwConfig {
        layers: vec![3, 1],
        acc_width: 16,
        shifts: vec![0],
        weights: vec![vec![3, -3, 0]],
        cores: 1,
        weight_source: WeightSource::Memory,
        arith: Arith::ReleasedRtl,
    };
    let released = cfg.weight_words(0).1[0].to_words()[0];
    let ours = HwConfig {
        arith: Arith::Wirespeed,
        ..cfg.clone()
    }
    .weight_words(0)
    .1[0]
        .to_words()[0];
    assert_eq!((released, ours), (0b101, 0b010));
}

#[test]
fn accumulator_wraps_at_16_bits_and_relu_reads_bit_15() {
    assert_eq!(accumulate(&[0x7000, 0x2000]), (0x9000, 1));
    assert_eq!(released_rtl::logit(0x9000), -28_672);
    assert_eq!(relu(0x9000), 0);
    assert_eq!(relu(0x7FFF), 0x7FFF);
    // wirespeed's 16-bit accumulator saturates instead.
    assert_eq!(
        AccWidth::RELEASED_RTL.saturating_add(0x7000, 0x2000),
        (32_767, true)
    );
    // 144 inputs of 255 times weights +255: 9 cycles of 16 × 254 = 36576, which
    // wraps to 36576 − 65536 = −28960.
    let net = Network::new(vec![Layer::from_signed(&[vec![255; 144]], 0).unwrap()]).unwrap();
    let g = golden(&net, &[255; 144], LossGain::UNITY);
    assert_eq!((g.logits.clone(), g.wraps), (vec![-28_960], 1));
    let ours = DatapathConfig {
        acc_width: AccWidth::RELEASED_RTL,
        optical_loss: OpticalLoss::UNITY,
    };
    assert_eq!(
        infer(&net, &[255; 144], &ours).unwrap().logits,
        vec![32_767]
    );
}

#[test]
fn normalization_brings_the_layer_maximum_to_bit_7() {
    // normalization: top bit i of the maximum; left by 7 − i below bit 7.
    assert_eq!(layer_shift(1), Some(Shift::Left(7)));
    assert_eq!(layer_shift(100), Some(Shift::Left(1)));
    assert_eq!(layer_shift(255), Some(Shift::Left(0)));
    assert_eq!(layer_shift(0x7FFF), Some(Shift::Right(7)));
    assert_eq!(layer_shift(0), None);
    assert_eq!(
        normalize_layer(&[3, 100, 0]),
        (vec![6, 200, 0], Some(Shift::Left(1)))
    );
    assert_eq!(
        normalize_layer(&[0x1000, 0x0FFF, 31]),
        (vec![128, 127, 0], Some(Shift::Right(5)))
    );
    assert_eq!(normalize_layer(&[0, 0]), (vec![0, 0], None));
}

/// A word whose exact-mean mask is the aligned preamble's (0x00FF) but whose
/// halving mean (1) also puts lanes 12 and 13 (value 2) above it: 0x30FF.
const EXACT_LOCKS: [u16; 16] = [5, 4, 5, 5, 3, 3, 3, 3, 1, 1, 0, 0, 2, 2, 0, 0];
/// A word whose halving mean (1) gives 0x00FF, while the exact mean (2) leaves
/// lanes 0, 1 and 3 (value 2) below it: 0x00F4.
const HALVING_LOCKS: [u16; 16] = [2, 2, 5, 2, 4, 5, 3, 3, 1, 0, 1, 0, 1, 1, 1, 1];

#[test]
fn halving_mean_truncates_at_each_of_four_stages() {
    // averager_tree: ((s0+s1)/2 + (s2+s3)/2)/2 … ; pairs (2,1) and (1,0) lose.
    let w: [u16; 16] = std::array::from_fn(|i| [2, 1, 1, 0][i % 4]);
    assert_eq!(halving_mean(&w), 0);
    assert_eq!(released_rtl::exact_mask(&w), 0x1111);
    assert_eq!(halving_mask(&w), 0x7777);
    assert_eq!(halving_mean(&EXACT_LOCKS), 1);
    assert_eq!(released_rtl::exact_mask(&EXACT_LOCKS), 0x00FF);
    assert_eq!(halving_mask(&EXACT_LOCKS), 0x30FF);
    assert_eq!(halving_mean(&HALVING_LOCKS), 1);
    assert_eq!(released_rtl::exact_mask(&HALVING_LOCKS), 0x00F4);
    assert_eq!(halving_mask(&HALVING_LOCKS), 0x00FF);
}

/// Feeds `word` every cycle to a detector armed once; true if it locks before
/// it fails.
fn detector_locks(dut: &mut dyn Dut, word: &[u16; 16]) -> bool {
    dut.reset(2);
    let [adc_tvalid, adc_tdata, preamble_length, timeout, arm, locked, failed] = Pin::resolve_all(
        dut.ports(),
        [
            "adc_tvalid",
            "adc_tdata",
            "preamble_length",
            "timeout",
            "arm",
            "locked",
            "failed",
        ],
    )
    .unwrap();
    // A `&mut &mut dyn Dut`: these are the `Pins` methods, by handle.
    let d = &mut &mut *dut;
    d.set(adc_tvalid, &[1]).unwrap();
    d.set(adc_tdata, &pack_bus(word)).unwrap();
    d.set(preamble_length, &[4]).unwrap();
    d.set(timeout, &[40]).unwrap();
    d.set(arm, &[1]).unwrap();
    d.step();
    d.set(arm, &[0]).unwrap();
    for _ in 0..60 {
        d.step();
        let locked = d.is_high(locked).unwrap();
        let failed = d.is_high(failed).unwrap();
        if locked || failed {
            return locked;
        }
    }
    panic!("the detector neither locked nor failed");
}

#[test]
fn detector_mean_decides_which_word_is_a_preamble_on_both_engines() {
    for (mean, locks, fails) in [
        (PreambleMean::Exact, EXACT_LOCKS, HALVING_LOCKS),
        (PreambleMean::Halving, HALVING_LOCKS, EXACT_LOCKS),
    ] {
        let m = preamble_detector(&PreambleDetectorConfig {
            mean,
            ..PreambleDetectorConfig::default()
        })
        .unwrap();
        for engine in [Engine::Native, Engine::Verilator] {
            let mut dut = model(engine, &m);
            assert!(detector_locks(dut.as_mut(), &locks), "{mean:?} {engine:?}");
            assert!(!detector_locks(dut.as_mut(), &fails), "{mean:?} {engine:?}");
        }
    }
}

/// A network with weights drawn from `range` (shifts unused by the contract).
fn network_in(
    rng: &mut impl Rng,
    sizes: &[usize],
    range: std::ops::RangeInclusive<i32>,
) -> Network {
    let layers = sizes
        .windows(2)
        .map(|p| {
            let rows: Vec<Vec<i32>> = (0..p[1])
                .map(|_| (0..p[0]).map(|_| rng.gen_range(range.clone())).collect())
                .collect();
            Layer::from_signed(&rows, 0).unwrap()
        })
        .collect();
    Network::new(layers).unwrap()
}

/// A network whose first neuron wraps: its weights are all +255 on 144 inputs.
fn wrapping_network(rng: &mut impl Rng) -> Network {
    let mut first: Vec<Vec<i32>> = (0..6)
        .map(|_| (0..144).map(|_| rng.gen_range(-255..=255)).collect())
        .collect();
    first[0] = vec![255; 144];
    let second: Vec<Vec<i32>> = (0..4)
        .map(|_| (0..6).map(|_| rng.gen_range(-255..=255)).collect())
        .collect();
    Network::new(vec![
        Layer::from_signed(&first, 0).unwrap(),
        Layer::from_signed(&second, 0).unwrap(),
    ])
    .unwrap()
}

#[test]
fn random_networks_are_bit_exact_natively() {
    let mut rng = seeded("lightning released rtl random", 9601);
    let mut wraps = 0;
    let mut left_shifts = 0;
    let mut right_shifts = 0;
    let mut images = 0;
    for cores in 1..=3u32 {
        for (sizes, range) in [
            (vec![48usize, 16, 10], -255..=255),
            (vec![20, 33, 7], -255..=255),
            (vec![32, 9, 6, 3], -2..=2),
            // A hidden layer that fills its activation bank (one core) or
            // spills into a third word (three), as in `lightning_datapath`.
            (vec![32, 32, 5], -255..=255),
        ] {
            let net = network_in(&mut rng, &sizes, range);
            for source in [WeightSource::Memory, WeightSource::Stream] {
                let b = build(&net, cores, source);
                let image = random_image(&mut rng, sizes[0]);
                let paths: Vec<(usize, usize)> = (0..cores)
                    .map(|_| (rng.gen_range(2..=14), rng.gen_range(0..=15)))
                    .collect();
                // Gains 1, 2 and 3 in turn: the products scaled in hardware.
                let gain = LossGain(1 + (images % 3) as u16);
                let g = golden(&net, &image, gain);
                let run = run_on(Engine::Native, &b, &image, &paths, gain);
                let what =
                    format!("cores {cores} {sizes:?} {source:?} paths {paths:?} gain {gain:?}");
                assert_exact(&run, &g.logits, &what);
                wraps += g.wraps;
                left_shifts += g.left_shifts;
                right_shifts += (sizes.len() - 2) as u64 - g.left_shifts;
                images += 1;
            }
        }
        let net = wrapping_network(&mut rng);
        let b = build(&net, cores, WeightSource::Memory);
        let image = vec![255; 144];
        let g = golden(&net, &image, LossGain::UNITY);
        assert!(g.wraps > 0, "the wrapping network did not wrap");
        let paths = vec![(10, 3); cores as usize];
        let run = run_on(Engine::Native, &b, &image, &paths, LossGain::UNITY);
        assert_exact(&run, &g.logits, &format!("wrapping network, cores {cores}"));
        wraps += g.wraps;
        images += 1;
    }
    println!(
        "{images} images: {wraps} accumulator wraps, {left_shifts} left-shift and {right_shifts} right-shift layers"
    );
    assert!(wraps > 0 && left_shifts > 0 && right_shifts > 0);
}

#[test]
fn wrap_and_left_shift_networks_equal_the_golden_model_on_verilator() {
    let mut rng = seeded("lightning released rtl verilator", 9701);
    // Accumulator wrap, one core, memory weights.
    let net = wrapping_network(&mut rng);
    let image = vec![255; 144];
    let g = golden(&net, &image, LossGain::UNITY);
    assert!(g.wraps > 0, "no wrap");
    let b = build(&net, 1, WeightSource::Memory);
    let native = run_on(Engine::Native, &b, &image, &[(10, 3)], LossGain::UNITY);
    let verilator = run_on(Engine::Verilator, &b, &image, &[(10, 3)], LossGain::UNITY);
    assert_exact(&verilator, &g.logits, "wrap, Verilator");
    assert_eq!(native, verilator, "wrap: native vs Verilator");
    // Left-shift normalization (products 0 or 1), two cores, streamed weights.
    let net = network_in(&mut rng, &[32, 8, 4], -2..=2);
    let image: Vec<u8> = (0..32).map(|_| rng.gen_range(128..=255)).collect();
    // Loss gain 2 on both cores: the products doubled in hardware.
    let gain = LossGain(2);
    let g = golden(&net, &image, gain);
    assert_eq!(g.left_shifts, 1, "the hidden layer is not left-shifted");
    let b = build(&net, 2, WeightSource::Stream);
    let paths = [(9, 2), (11, 7)];
    let native = run_on(Engine::Native, &b, &image, &paths, gain);
    let verilator = run_on(Engine::Verilator, &b, &image, &paths, gain);
    assert_exact(&verilator, &g.logits, "left shift, Verilator");
    assert_eq!(native, verilator, "left shift: native vs Verilator");
}

#[test]
fn released_rtl_needs_the_16_bit_accumulator() {
    let cfg = HwConfig {
        layers: vec![20, 3],
        acc_width: 20,
        shifts: vec![0],
        weights: vec![vec![1; 60]],
        cores: 1,
        weight_source: WeightSource::Memory,
        arith: Arith::ReleasedRtl,
    };
    let e = datapath(&cfg).unwrap_err().to_string();
    assert!(e.contains("acc_width") && e.contains("released-rtl"), "{e}");
    let ok = HwConfig {
        acc_width: 16,
        ..cfg
    };
    assert!(datapath(&ok).is_ok());
}

#[test]
fn released_rtl_verilog_passes_lint_and_iverilog() {
    let mut rng = seeded("lightning released rtl tools", 9801);
    let net = network_in(&mut rng, &[20, 6, 3], -255..=255);
    for (cores, source) in [(1, WeightSource::Memory), (2, WeightSource::Stream)] {
        verilog_common::check_tools(&build(&net, cores, source).module, false);
    }
}
