//! The whole Lightning datapath in a closed loop with the photonic-core model:
//! logits bit-exact against the golden model (noise 0) for random networks,
//! 1–3 photonic cores with their own latencies and sample shifts; native ==
//! Verilator cycle by cycle (one and two cores); no hang and a `failed` status
//! with its reason without light, with a wrong preamble or with cores too far
//! apart, and every DAC dark from the failure's `done` on; the shipped MLP on
//! its test images; a LeNet-300-100-shaped network's cycle count per number of
//! cores.

use hdl::lightning::align::ALIGN_LATENCY;
use hdl::lightning::bus::DELAY_WIDTH;
use hdl::lightning::config::{Arith, DatapathConfig as HwConfig, WeightSource};
use hdl::lightning::datapath::datapath;
use hdl::lightning::datapath::{
    FAIL_LOST_LIGHT, FAIL_NONE, FAIL_NO_LOCK, FAIL_ROUND_TRIP, FAIL_SKEW, FAIL_WEIGHTS,
    SIGN_FIFO_DEPTH,
};
use hdl::lightning::decode::DECODE_LATENCY;
use hdl::Module;
use rand::Rng;
use testbench::dut::{Dut, NativeDut};
use testbench::harness::{DiffConfig, Differential};
use testbench::lightning::arith::{AccWidth, OpticalLoss};
use testbench::lightning::closed_loop::{
    hardware_config, run_image, LoopControls, LoopDriver, LoopRun, PortShape,
};
use testbench::lightning::golden::{infer, DatapathConfig, Network};
use testbench::lightning::link::PhotonicLink;
use testbench::lightning::model_files::{data_dir, load_workload};
use testbench::lightning::photonic::{IdealCore, PhotonicCore};
use testbench::rng::seeded;

fn random_network(rng: &mut impl Rng, sizes: &[usize]) -> Network {
    let shifts: Vec<u32> = (1..sizes.len()).map(|_| rng.gen_range(2..=5)).collect();
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

/// A generated datapath with the port shape the driver needs.
struct Built {
    module: Module,
    shape: PortShape,
}

fn build(net: &Network, acc: AccWidth, cores: u32) -> Built {
    build_with(net, acc, cores, WeightSource::Memory)
}

fn build_with(net: &Network, acc: AccWidth, cores: u32, source: WeightSource) -> Built {
    let cfg = HwConfig {
        weight_source: source,
        ..hardware_config(net, acc, cores)
    };
    Built {
        module: datapath(&cfg).unwrap(),
        shape: PortShape::of(&cfg),
    }
}

/// One ideal link per core: `paths[c]` = (latency, shift) of core *c*.
fn ideal_links(paths: &[(usize, usize)]) -> Vec<PhotonicLink<IdealCore>> {
    paths
        .iter()
        .map(|&(latency, shift)| PhotonicLink::new(IdealCore, latency, shift))
        .collect()
}

/// One image on the native simulator, core *c* through an ideal link `paths[c]`.
fn native_run(
    b: &Built,
    image: &[u8],
    paths: &[(usize, usize)],
    controls: &LoopControls,
) -> LoopRun {
    let mut dut = NativeDut::new(&b.module).unwrap();
    dut.reset(2);
    let mut links = ideal_links(paths);
    run_image(&mut dut, &mut links, image, b.shape.clone(), controls).unwrap()
}

fn assert_exact(run: &LoopRun, expected: &[i64], what: &str) {
    assert!(
        expected.iter().any(|&v| v != 0),
        "{what}: degenerate test, every golden logit is 0"
    );
    assert!(run.done, "{what}: not done after {} cycles", run.cycles);
    assert!(
        !run.failed,
        "{what}: failed status (reason {})",
        run.fail_reason
    );
    assert_eq!(run.fail_reason, FAIL_NONE, "{what}: fail reason");
    assert_eq!(run.logits, expected, "{what}: logits");
    assert_eq!(
        run.counters_unlike_ports(),
        Vec::<String>::new(),
        "{what}: counters against the ports"
    );
    assert_eq!(
        run.off_format_dac_samples, 0,
        "{what}: DAC samples outside the bus format"
    );
    assert_eq!(
        run.busy_counters_out_of_order(),
        Vec::<String>::new(),
        "{what}: busy counters"
    );
    let indices: Vec<u64> = (0..expected.len() as u64).collect();
    assert_eq!(run.logit_indices, indices, "{what}: logit indices");
}

#[test]
fn bad_parameters_are_errors() {
    let good = HwConfig {
        layers: vec![20, 3],
        acc_width: 16,
        shifts: vec![0],
        weights: vec![vec![1; 60]],
        cores: 1,
        weight_source: WeightSource::Memory,
        arith: Arith::Wirespeed,
    };
    assert!(datapath(&good).is_ok());
    assert!(datapath(&HwConfig {
        cores: 3,
        ..good.clone()
    })
    .is_ok());
    let cases: Vec<(&str, HwConfig)> = vec![
        (
            "cores",
            HwConfig {
                cores: 0,
                ..good.clone()
            },
        ),
        (
            "cores",
            HwConfig {
                cores: 9,
                ..good.clone()
            },
        ),
        (
            // More cores than the 3 outputs.
            "cores",
            HwConfig {
                cores: 4,
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
fn random_networks_cores_latencies_and_shifts_are_bit_exact_natively() {
    let mut rng = seeded("lightning datapath random", 9101);
    // [32, 32, 5]: on one core the hidden layer fills its activation bank's two
    // words exactly, on three its 11 rounds write 33 bytes and the last round's
    // tail spills into a third word; neither may wrap onto word 0.
    for cores in 1..=3u32 {
        for sizes in [[48usize, 16, 10], [20, 33, 7], [64, 17, 3], [32, 32, 5]] {
            let net = random_network(&mut rng, &sizes);
            let acc = AccWidth::new(rng.gen_range(14..=24)).unwrap();
            let b = build(&net, acc, cores);
            for _ in 0..2 {
                let image = random_image(&mut rng, sizes[0]);
                // Every core its own photonic path; the cores' windows stay
                // within the join's skew bound.
                let paths: Vec<(usize, usize)> = (0..cores)
                    .map(|_| (rng.gen_range(0..=20), rng.gen_range(0..=15)))
                    .collect();
                let d = rng.gen_range(0..=63);
                let controls = LoopControls {
                    preamble_length: rng.gen_range(1..=12),
                    dac_delay: vec![d; 2 * cores as usize],
                    ..LoopControls::default()
                };
                let run = native_run(&b, &image, &paths, &controls);
                let what = format!("cores {cores} {sizes:?} acc {acc:?} paths {paths:?} delay {d}");
                assert_exact(&run, &golden_logits(&net, &image, acc), &what);
            }
        }
    }
}

#[test]
fn each_core_compensates_with_its_own_loss_register() {
    // One weight layer, so core c's logits (neurons o with o mod 3 = c) are the
    // golden model's with core c's loss register alone.
    let mut rng = seeded("lightning datapath per-core loss", 9151);
    let net = random_network(&mut rng, &[40, 9]);
    let acc = AccWidth::new(24).unwrap();
    let losses = [OpticalLoss::UNITY, OpticalLoss(0x0180), OpticalLoss(0x00A0)];
    let b = build(&net, acc, 3);
    let image = random_image(&mut rng, 40);
    let per_loss: Vec<Vec<i64>> = losses
        .iter()
        .map(|&optical_loss| {
            let cfg = DatapathConfig {
                acc_width: acc,
                optical_loss,
            };
            infer(&net, &image, &cfg).unwrap().logits
        })
        .collect();
    assert_ne!(
        per_loss[0], per_loss[1],
        "degenerate: loss 1.5 changes nothing"
    );
    assert_ne!(
        per_loss[0], per_loss[2],
        "degenerate: loss 0.625 changes nothing"
    );
    let expected: Vec<i64> = (0..9).map(|o| per_loss[o % 3][o]).collect();
    let controls = LoopControls {
        optical_loss: losses.to_vec(),
        ..LoopControls::default()
    };
    let run = native_run(&b, &image, &[(10, 3), (12, 5), (9, 0)], &controls);
    assert_exact(&run, &expected, "per-core loss");
}

#[test]
fn busy_counters_match_the_observed_port_activity() {
    // Independent expectations: the beats from the network's shape (⌈outputs / C⌉
    // × ⌈inputs / 16⌉ per layer) and the data words the bench sees on `dac0`;
    // decode holds a neuron from the cycle after its layer's first accepted word
    // (registered count) until its last neuron leaves, DECODE_LATENCY cycles
    // after that word reaches decode (one register after the accept); a longer
    // photonic path adds its extra latency to every layer's words in flight.
    let mut rng = seeded("lightning datapath busy counters", 9901);
    let sizes = [40usize, 12, 5];
    let net = random_network(&mut rng, &sizes);
    let acc = AccWidth::new(20).unwrap();
    let image = random_image(&mut rng, sizes[0]);
    let layers = (sizes.len() - 1) as u64;
    let latency = u64::from(DECODE_LATENCY);
    for cores in [1u32, 2] {
        let beats: u64 = sizes
            .windows(2)
            .map(|p| (p[1].div_ceil(cores as usize) * p[0].div_ceil(16)) as u64)
            .sum();
        let b = build(&net, acc, cores);
        let runs: Vec<LoopRun> = [10usize, 17]
            .iter()
            .map(|&lat| {
                let paths = vec![(lat, 3); cores as usize];
                native_run(&b, &image, &paths, &LoopControls::default())
            })
            .collect();
        for r in &runs {
            let what = format!("cores {cores}");
            assert_exact(r, &golden_logits(&net, &image, acc), &what);
            assert_eq!(r.busy_dac_cycles, beats, "{what}: busy_dac_cycles");
            assert_eq!(r.observed_dac_beats, beats, "{what}: DAC data words seen");
            assert_eq!(
                r.busy_decode_cycles,
                beats + layers * latency,
                "{what}: busy_decode_cycles"
            );
            assert!(r.busy_photonic_cycles > r.busy_dac_cycles, "{what}: {r:?}");
            assert!(
                r.compute_cycles >= r.busy_photonic_cycles.max(r.busy_decode_cycles)
                    && r.compute_cycles < r.cycles,
                "{what}: compute_cycles {r:?}"
            );
        }
        let extra = 7 * layers;
        let (a, z) = (&runs[0], &runs[1]);
        assert_eq!(z.busy_photonic_cycles - a.busy_photonic_cycles, extra);
        assert_eq!(z.compute_cycles - a.compute_cycles, extra);
        assert_eq!(z.cycles - a.cycles, extra);
        assert_eq!(
            (z.busy_dac_cycles, z.busy_decode_cycles),
            (a.busy_dac_cycles, a.busy_decode_cycles)
        );
    }
    // Streamed weights with stalls: gaps in the DAC stream, one count per beat.
    let b = build_with(&net, acc, 1, WeightSource::Stream);
    let controls = LoopControls {
        weight_stall_percent: 50,
        ..LoopControls::default()
    };
    let r = native_run(&b, &image, &[(10, 3)], &controls);
    let beats: u64 = sizes
        .windows(2)
        .map(|p| (p[1] * p[0].div_ceil(16)) as u64)
        .sum();
    assert_exact(&r, &golden_logits(&net, &image, acc), "stalled stream");
    assert_eq!((r.busy_dac_cycles, r.observed_dac_beats), (beats, beats));
    assert!(r.compute_cycles < r.cycles, "{r:?}");
}

#[test]
fn alignment_every_shift_and_several_latencies_lock_and_are_exact() {
    let mut rng = seeded("lightning datapath alignment", 9201);
    let net = random_network(&mut rng, &[32, 16, 10]);
    let acc = AccWidth::new(20).unwrap();
    let b = build(&net, acc, 1);
    let image = random_image(&mut rng, 32);
    let expected = golden_logits(&net, &image, acc);
    for latency in [0usize, 1, 10, 40] {
        for shift in 0..16 {
            let run = native_run(&b, &image, &[(latency, shift)], &LoopControls::default());
            assert_exact(&run, &expected, &format!("latency {latency} shift {shift}"));
            // The window opens when the detector has judged the lock's words:
            // the preamble reaches the ADC `latency` cycles after the DAC, its
            // first matching word is the one after it, the lock takes
            // `preamble_length` − 1 matching words, and a lock shows 3 cycles
            // after its word reaches the detector (`preamble_detector`'s
            // latency): at any shift, one cycle a word.
            let lock = u64::from(LoopControls::default().preamble_length - 1);
            assert_eq!(
                run.window_open_cycle,
                run.dac_start_cycle + latency as u64 + 1 + (lock - 1) + 3,
                "latency {latency} shift {shift}: window open"
            );
        }
    }
    // Two cores: core 1 at every shift against core 0 at shift 0.
    let b = build(&net, acc, 2);
    for shift in 0..16 {
        let run = native_run(
            &b,
            &image,
            &[(10, 0), (10, shift)],
            &LoopControls::default(),
        );
        assert_exact(&run, &expected, &format!("two cores, core 1 shift {shift}"));
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

fn skewed(skew: usize) -> SkewedCore {
    SkewedCore {
        skew,
        weights: std::iter::repeat_n(0, skew).collect(),
    }
}

#[test]
fn operand_delay_and_shift_registers_realign_skewed_streams() {
    let mut rng = seeded("lightning datapath skew", 9301);
    let net = random_network(&mut rng, &[40, 12, 5]);
    let acc = AccWidth::new(18).unwrap();
    let image = random_image(&mut rng, 40);
    let expected = golden_logits(&net, &image, acc);
    let b = build(&net, acc, 1);
    for skew in [1usize, 7, 16, 16 * 3 + 9] {
        let mut links = vec![PhotonicLink::new(skewed(skew), 5, 2)];
        let controls = LoopControls {
            dac_delay: vec![(skew / 16) as u32, 0],
            dac_shift: vec![(skew % 16) as u32, 0],
            ..LoopControls::default()
        };
        let mut dut = NativeDut::new(&b.module).unwrap();
        dut.reset(2);
        let run = run_image(&mut dut, &mut links, &image, b.shape.clone(), &controls).unwrap();
        assert_exact(&run, &expected, &format!("skew {}", links[0].core().skew));
    }
    // Three cores, each with its own operand skew, corrected by its own DAC
    // delay and shift registers (dac{2c} for core c's activations).
    let b = build(&net, acc, 3);
    let skews = [5usize, 16 + 3, 0];
    let mut links: Vec<_> = skews
        .iter()
        .map(|&s| PhotonicLink::new(skewed(s), 4, 1))
        .collect();
    let mut controls = LoopControls {
        dac_delay: vec![0; 6],
        dac_shift: vec![0; 6],
        ..LoopControls::default()
    };
    for (c, &s) in skews.iter().enumerate() {
        controls.dac_delay[2 * c] = (s / 16) as u32;
        controls.dac_shift[2 * c] = (s % 16) as u32;
    }
    let mut dut = NativeDut::new(&b.module).unwrap();
    dut.reset(2);
    let run = run_image(&mut dut, &mut links, &image, b.shape.clone(), &controls).unwrap();
    assert_exact(&run, &expected, &format!("three cores, skews {skews:?}"));
}

/// A core that returns one fixed ADC sample whatever the light.
struct ConstantCore(u16);

impl PhotonicCore for ConstantCore {
    fn transmit(&mut self, _: u16, _: u16) -> u16 {
        self.0
    }
}

/// Any of the cores used in the failure tests.
#[derive(Clone)]
enum TestCore {
    Ideal,
    Constant(u16),
    Stuck,
}

impl PhotonicCore for TestCore {
    fn transmit(&mut self, activation: u16, weight: u16) -> u16 {
        match self {
            TestCore::Ideal => IdealCore.transmit(activation, weight),
            TestCore::Constant(s) => ConstantCore(*s).transmit(activation, weight),
            TestCore::Stuck => StuckWeights.transmit(activation, weight),
        }
    }
}

/// Every DAC of `dut` (a datapath of `cores` cores whose run has just ended
/// with `done`, not yet stepped past it) idle, `tvalid` 0 and every sample 0,
/// in the `done` cycle and for as long after it as any beat can stay in an
/// aligner (its latency at the largest `dac{j}_delay`): an inference that
/// fails mid-layer leaves no beat behind to light a modulator.
fn assert_dacs_dark_from_done(dut: &mut NativeDut, cores: u32, what: &str) {
    let dacs: Vec<[usize; 2]> = (0..2 * cores)
        .map(|j| [format!("dac{j}_tvalid"), format!("dac{j}_tdata")].map(|n| dut.port(&n).unwrap()))
        .collect();
    let mut data = [0u64; 4];
    let watch = ALIGN_LATENCY + (1 << DELAY_WIDTH);
    for k in 0..=watch {
        for (j, &[tvalid, tdata]) in dacs.iter().enumerate() {
            dut.get_into(tdata, &mut data).unwrap();
            let valid = dut.get(tvalid).unwrap()[0];
            assert!(
                valid == 0 && data == [0; 4],
                "{what}: dac{j} tvalid {valid}, data {data:x?}, {k} cycles after done"
            );
        }
        dut.step();
    }
}

#[test]
fn no_light_or_a_wrong_preamble_fails_without_hanging() {
    let mut rng = seeded("lightning datapath failure", 9401);
    let net = random_network(&mut rng, &[32, 8, 4]);
    let acc = AccWidth::new(16).unwrap();
    let image = random_image(&mut rng, 32);
    let timeout = 300;
    let controls = LoopControls {
        timeout,
        max_cycles: 5000,
        ..LoopControls::default()
    };
    let run_on = |dut: &mut NativeDut, b: &Built, cores: Vec<TestCore>| {
        let mut links: Vec<_> = cores
            .into_iter()
            .enumerate()
            .map(|(c, core)| PhotonicLink::new(core, 3 + c, 5))
            .collect();
        run_image(dut, &mut links, &image, b.shape.clone(), &controls).unwrap()
    };
    for cores in [1u32, 2] {
        let b = build(&net, acc, cores);
        let mut dut = NativeDut::new(&b.module).unwrap();
        dut.reset(2);
        // Core `cores - 1` is broken; the others are ideal.
        let broken = |core: TestCore| {
            (0..cores)
                .map(|c| {
                    if c + 1 == cores {
                        core.clone()
                    } else {
                        TestCore::Ideal
                    }
                })
                .collect::<Vec<_>>()
        };
        for (what, core) in [
            ("no light", TestCore::Constant(0)),
            ("all samples high", TestCore::Constant(0x7F00)),
            // A wrong weight preamble: the weight modulator stuck at 255 (no low
            // half) never locks.
            ("stuck weights", TestCore::Stuck),
        ] {
            let what = format!("{cores} cores, {what}");
            let run = run_on(&mut dut, &b, broken(core));
            assert!(run.done, "{what}: hung");
            assert!(run.failed, "{what}: no failure reported");
            assert_eq!(run.fail_reason, FAIL_NO_LOCK, "{what}: reason");
            assert!(run.logits.is_empty(), "{what}: logits {:?}", run.logits);
            assert!(
                run.cycles <= u64::from(timeout) + 10,
                "{what}: {} cycles",
                run.cycles
            );
            assert_dacs_dark_from_done(&mut dut, cores, &what);
        }
        // After a failure the same datapath runs the next image correctly.
        let all_ideal = (0..cores).map(|_| TestCore::Ideal).collect();
        let run = run_on(&mut dut, &b, all_ideal);
        assert_exact(
            &run,
            &golden_logits(&net, &image, acc),
            &format!("{cores} cores, after a failure"),
        );
    }
}

/// Failures in the middle of a layer's stream, with beats in every aligner
/// (none delayed, and every DAC at the largest delay and shifted by 5
/// samples): no light on one core ([`FAIL_NO_LOCK`]) and one core's ADC lost
/// after the lock ([`FAIL_LOST_LIGHT`]). Each ends before the layer's last
/// beat, every DAC is dark from `done` on, and the next image is exact; and
/// so is an image started at once after the same failure, within the delay
/// (the failed run's beats still in the aligners' history).
#[test]
fn a_failure_mid_stream_leaves_every_dac_dark_from_done() {
    let mut rng = seeded("lightning datapath dark after failure", 9402);
    // Layer 0 streams 20 rounds of 16 beats per core: far longer than the
    // timeout, so the failures come while the streamer fires.
    let net = random_network(&mut rng, &[256, 40, 4]);
    let acc = AccWidth::new(20).unwrap();
    let image = random_image(&mut rng, 256);
    let expected = golden_logits(&net, &image, acc);
    let cores = 2u32;
    let layer0_beats = 20 * 16;
    let b = build(&net, acc, cores);
    let mut dut = NativeDut::new(&b.module).unwrap();
    dut.reset(2);
    let paths = [(4, 3), (5, 9)];
    let run_on = |dut: &mut NativeDut, cores: Vec<TestCore>, controls: &LoopControls| {
        let mut links: Vec<_> = cores
            .into_iter()
            .zip(paths)
            .map(|(core, (latency, shift))| PhotonicLink::new(core, latency, shift))
            .collect();
        run_image(dut, &mut links, &image, b.shape.clone(), controls).unwrap()
    };
    let max_delay = (1u32 << DELAY_WIDTH) - 1;
    for (delay, shift) in [(0, 0), (max_delay, 5)] {
        let controls = LoopControls {
            timeout: 100,
            max_cycles: 20_000,
            dac_delay: vec![delay; 2 * cores as usize],
            dac_shift: vec![shift; 2 * cores as usize],
            ..LoopControls::default()
        };
        let ideal = || vec![TestCore::Ideal; cores as usize];
        let reference = run_on(&mut dut, ideal(), &controls);
        assert_exact(&reference, &expected, &format!("DAC delay {delay}"));
        let opens = reference
            .timeline
            .iter()
            .find(|e| e.what.ends_with("ADC window open"))
            .map(|e| e.cycle)
            .expect("the reference run's window opens");
        let lost = LoopControls {
            adc_stop: vec![(1, opens + 5)],
            ..controls.clone()
        };
        for (what, kinds, failing, reason) in [
            (
                "core 1 dark",
                vec![TestCore::Ideal, TestCore::Constant(0)],
                &controls,
                FAIL_NO_LOCK,
            ),
            ("core 1's ADC lost", ideal(), &lost, FAIL_LOST_LIGHT),
        ] {
            let what = format!("DAC delay {delay}, shift {shift}, {what}");
            for watched in [true, false] {
                let run = run_on(&mut dut, kinds.clone(), failing);
                assert!(run.done && run.failed, "{what}: {run:?}");
                assert_eq!(run.fail_reason, reason, "{what}: reason");
                assert!(
                    run.observed_dac_beats < layer0_beats,
                    "{what}: failed after the layer's last beat ({} beats)",
                    run.observed_dac_beats
                );
                if watched {
                    assert_dacs_dark_from_done(&mut dut, cores, &what);
                }
                let run = run_on(&mut dut, ideal(), &controls);
                let next = if watched { "later" } else { "at once" };
                assert_exact(&run, &expected, &format!("{what}, the next image {next}"));
            }
        }
    }
}

/// Weights modulator stuck at full transmission.
struct StuckWeights;

impl PhotonicCore for StuckWeights {
    fn transmit(&mut self, activation: u16, _: u16) -> u16 {
        IdealCore.transmit(activation, 255 << 7)
    }
}

#[test]
fn cores_too_far_apart_fail_with_the_skew_reason() {
    let mut rng = seeded("lightning datapath core skew", 9451);
    // Layer 0 streams 20 rounds × 4 beats: more than the skew buffer holds.
    let net = random_network(&mut rng, &[64, 40, 4]);
    let acc = AccWidth::new(20).unwrap();
    let b = build(&net, acc, 2);
    let image = random_image(&mut rng, 64);
    let expected = golden_logits(&net, &image, acc);
    let mut dut = NativeDut::new(&b.module).unwrap();
    dut.reset(2);
    let controls = LoopControls {
        max_cycles: 5000,
        ..LoopControls::default()
    };
    let depth = hdl::lightning::datapath::SKEW_DEPTH as usize;
    // The join accepts the cycle after every buffer holds a word, so when the
    // slower core's first word lands the faster core's buffer holds one word
    // per cycle of latency difference and takes one more before the first
    // accept: difference + 1 words. Within the bound: exact.
    let mut links = ideal_links(&[(0, 0), (depth - 2, 0)]);
    let run = run_image(&mut dut, &mut links, &image, b.shape.clone(), &controls).unwrap();
    assert_exact(&run, &expected, "skew within the bound");
    // At it, `SKEW_DEPTH` words ahead: the first layer's words of core 0
    // overflow its buffer.
    let gap = depth - 1;
    let mut links = ideal_links(&[(0, 0), (gap, 0)]);
    let run = run_image(&mut dut, &mut links, &image, b.shape.clone(), &controls).unwrap();
    assert!(run.done && run.failed, "skew past the bound: {run:?}");
    assert_eq!(run.fail_reason, FAIL_SKEW);
    assert!(run.logits.is_empty());
    assert_dacs_dark_from_done(&mut dut, 2, "skew past the bound");
    // The DAC delay registers compensate the skew: core 0's DACs wait.
    let compensated = LoopControls {
        dac_delay: vec![gap as u32, gap as u32, 0, 0],
        ..controls.clone()
    };
    let run = run_image(&mut dut, &mut links, &image, b.shape.clone(), &compensated).unwrap();
    assert_exact(&run, &expected, "skew compensated by DAC delays");
}

/// A datapath reset and run once on ideal `paths` with the detector and
/// watchdogs at `timeout`, which must be exact: the DUT for the runs that
/// follow, their controls, and the cycles at which the reference run's timeline
/// shows events ending in `event`, layer by layer.
fn reference_run(
    b: &Built,
    paths: &[(usize, usize)],
    image: &[u8],
    expected: &[i64],
    timeout: u32,
    event: &str,
) -> (NativeDut, LoopControls, Vec<u64>) {
    let mut dut = NativeDut::new(&b.module).unwrap();
    dut.reset(2);
    let base = LoopControls {
        timeout,
        max_cycles: 20_000,
        ..LoopControls::default()
    };
    let mut links = ideal_links(paths);
    let good = run_image(&mut dut, &mut links, image, b.shape.clone(), &base).unwrap();
    assert_exact(&good, expected, &format!("{paths:?}, reference run"));
    let cycles = good
        .timeline
        .iter()
        .filter(|e| e.what.ends_with(event))
        .map(|e| e.cycle)
        .collect();
    (dut, base, cycles)
}

#[test]
fn adc_lost_mid_layer_trips_the_watchdog() {
    let mut rng = seeded("lightning datapath watchdog", 9471);
    let net = random_network(&mut rng, &[64, 40, 4]);
    let acc = AccWidth::new(20).unwrap();
    let image = random_image(&mut rng, 64);
    let expected = golden_logits(&net, &image, acc);
    let timeout = 200u32;
    for cores in 1..=3u32 {
        let b = build(&net, acc, cores);
        let paths: Vec<(usize, usize)> = (0..cores as usize).map(|c| (8 + c, 3)).collect();
        // The reference run: where layer 0 and layer 1 take their words.
        let (mut dut, base, opens) =
            reference_run(&b, &paths, &image, &expected, timeout, "ADC window open");
        // Cut the last core mid-layer in layer 0 and in layer 1, and every core.
        for (what, at) in [("layer 0", opens[0] + 20), ("layer 1", opens[1] + 1)] {
            for stopped in [vec![cores as usize - 1], (0..cores as usize).collect()] {
                let controls = LoopControls {
                    adc_stop: stopped.iter().map(|&c| (c, at)).collect(),
                    ..base.clone()
                };
                let mut links = ideal_links(&paths);
                let run =
                    run_image(&mut dut, &mut links, &image, b.shape.clone(), &controls).unwrap();
                let what = format!("{cores} cores, ADC of cores {stopped:?} lost in {what}");
                assert!(run.done, "{what}: hung");
                assert!(run.failed, "{what}: no failure");
                assert_eq!(run.fail_reason, FAIL_LOST_LIGHT, "{what}: reason");
                // The watchdog waits `timeout` cycles without a word, never
                // fewer; its failure shows at most 3 cycles of pipeline later.
                let t = u64::from(timeout);
                assert!(
                    (at + t..=at + t + 3).contains(&run.cycles),
                    "{what}: failed at {}, cut at {at}",
                    run.cycles
                );
                assert_dacs_dark_from_done(&mut dut, cores, &what);
            }
        }
        // And the next image is exact again.
        let mut links = ideal_links(&paths);
        let run = run_image(&mut dut, &mut links, &image, b.shape.clone(), &base).unwrap();
        assert_exact(&run, &expected, &format!("{cores} cores, after a lost ADC"));
    }
}

#[test]
fn streamed_weights_with_random_stalls_are_bit_exact_natively() {
    let mut rng = seeded("lightning datapath weight stream", 9481);
    for cores in 1..=3u32 {
        for sizes in [[48usize, 16, 10], [20, 33, 7]] {
            let net = random_network(&mut rng, &sizes);
            let acc = AccWidth::new(20).unwrap();
            let b = build_with(&net, acc, cores, WeightSource::Stream);
            for stall in [0u32, 30, 70] {
                let image = random_image(&mut rng, sizes[0]);
                let paths: Vec<(usize, usize)> = (0..cores)
                    .map(|_| (rng.gen_range(0..=20), rng.gen_range(0..=15)))
                    .collect();
                let d = rng.gen_range(0..=40);
                let controls = LoopControls {
                    preamble_length: rng.gen_range(1..=12),
                    dac_delay: vec![d; 2 * cores as usize],
                    weight_stall_percent: stall,
                    weight_stall_seed: rng.gen(),
                    ..LoopControls::default()
                };
                let run = native_run(&b, &image, &paths, &controls);
                let what = format!(
                    "stream, cores {cores} {sizes:?} stall {stall}% paths {paths:?} delay {d}"
                );
                assert_exact(&run, &golden_logits(&net, &image, acc), &what);
            }
        }
    }
}

/// A weight DMA that is never armed, or stops mid-layer, ends the inference
/// with `FAIL_WEIGHTS` `timeout` cycles after it stops (it used to hold
/// `busy` until reset), and the next inference on the same datapath is exact.
#[test]
fn a_stopped_weight_stream_trips_the_weight_watchdog() {
    let mut rng = seeded("lightning datapath weight watchdog", 9501);
    let net = random_network(&mut rng, &[48, 16, 10]);
    let acc = AccWidth::new(20).unwrap();
    let image = random_image(&mut rng, 48);
    let expected = golden_logits(&net, &image, acc);
    let timeout = 150u32;
    for cores in 1..=2u32 {
        let b = build_with(&net, acc, cores, WeightSource::Stream);
        let paths: Vec<(usize, usize)> = (0..cores as usize).map(|c| (6 + c, 2)).collect();
        // Stop a few beats into each layer's data, while it still owes beats.
        let first_beat = "streamer fires the first data beat";
        let (mut dut, base, first_beats) =
            reference_run(&b, &paths, &image, &expected, timeout, first_beat);
        let last = cores as usize - 1;
        for (what, at) in [
            ("never armed", 0),
            ("stopped in layer 0", first_beats[0] + 5),
            ("stopped in layer 1", first_beats[1] + 1),
        ] {
            let controls = LoopControls {
                weight_stop: vec![(last, at)],
                ..base.clone()
            };
            let mut links = ideal_links(&paths);
            let run = run_image(&mut dut, &mut links, &image, b.shape.clone(), &controls).unwrap();
            let what = format!("{cores} cores, core {last}'s weights {what}");
            assert!(run.done, "{what}: hung ({} cycles)", run.cycles);
            assert!(run.failed, "{what}: no failure");
            assert_eq!(run.fail_reason, FAIL_WEIGHTS, "{what}: reason");
            // `timeout` cycles without a word, never fewer, then at most 2
            // cycles of pipeline.
            let t = u64::from(timeout);
            assert!(
                (at + t..=at + t + 2).contains(&run.cycles),
                "{what}: failed at {}, stopped at {at}",
                run.cycles
            );
            assert_dacs_dark_from_done(&mut dut, cores, &what);
        }
        let mut links = ideal_links(&paths);
        let run = run_image(&mut dut, &mut links, &image, b.shape.clone(), &base).unwrap();
        assert_exact(
            &run,
            &expected,
            &format!("{cores} cores, after a stopped stream"),
        );
    }
}

/// The weight watchdog bounds each wait, not the inference: a DMA that
/// trickles one word per `gap` cycles keeps the layers going while `gap` stays
/// under `timeout` (the inference is exact, however long), and fails it with
/// `FAIL_WEIGHTS` once a word comes later than `timeout` cycles after the one
/// before. Brackets the watchdog's target from both sides.
#[test]
fn a_trickling_weight_stream_is_slow_but_exact_until_a_gap_exceeds_timeout() {
    let mut rng = seeded("lightning datapath weight trickle", 9511);
    let net = random_network(&mut rng, &[48, 16, 10]);
    let acc = AccWidth::new(20).unwrap();
    let image = random_image(&mut rng, 48);
    let expected = golden_logits(&net, &image, acc);
    let timeout = 120u32;
    for cores in 1..=2u32 {
        let b = build_with(&net, acc, cores, WeightSource::Stream);
        let paths: Vec<(usize, usize)> = (0..cores as usize).map(|c| (6 + c, 2)).collect();
        let base = LoopControls {
            timeout,
            max_cycles: 200_000,
            ..LoopControls::default()
        };
        let brisk = native_run(&b, &image, &paths, &base);
        assert_exact(&brisk, &expected, &format!("{cores} cores, no gap"));
        let stream = b.shape.weight_stream.as_ref().expect("streamed weights");
        let words = stream.iter().map(Vec::len).max().unwrap_or(0) as u64;
        for (gap, exact) in [
            (u64::from(timeout) - 5, true),
            (u64::from(timeout) + 5, false),
        ] {
            let controls = LoopControls {
                weight_gap: gap,
                ..base.clone()
            };
            let run = native_run(&b, &image, &paths, &controls);
            let what = format!("{cores} cores, a word every {gap} cycles, timeout {timeout}");
            println!(
                "{what}: {} cycles, failed {}, reason {}",
                run.cycles, run.failed, run.fail_reason
            );
            assert!(run.done, "{what}: hung");
            if exact {
                assert_exact(&run, &expected, &what);
                assert!(
                    run.cycles >= gap * (words - 1) && run.cycles <= brisk.cycles + gap * words,
                    "{what}: {} cycles for {words} words a core",
                    run.cycles
                );
            } else {
                assert!(run.failed, "{what}: no failure");
                assert_eq!(run.fail_reason, FAIL_WEIGHTS, "{what}: reason");
            }
        }
    }
}

#[test]
fn streamed_weights_round_trip_longer_than_the_sign_fifo_fails() {
    let mut rng = seeded("lightning datapath sign fifo", 9491);
    // Layer 0 fires 48 × 4 beats: more entries than the FIFO holds in flight.
    let net = random_network(&mut rng, &[64, 48, 10]);
    let acc = AccWidth::new(20).unwrap();
    let image = random_image(&mut rng, 64);
    let b = build_with(&net, acc, 1, WeightSource::Stream);
    let depth = SIGN_FIFO_DEPTH as usize;
    let controls = LoopControls {
        max_cycles: 20_000,
        ..LoopControls::default()
    };
    // The round trip is 7 + `dac_delay` + latency cycles (the datapath's
    // docs): at `depth` − 1 it is exact, one cycle more fails, at any delay.
    for delay in [0usize, 5] {
        let longest = depth - 1 - 7 - delay;
        let delayed = LoopControls {
            dac_delay: vec![delay as u32; 2],
            ..controls.clone()
        };
        let run = native_run(&b, &image, &[(longest, 0)], &delayed);
        let what = format!("delay {delay}, latency {longest}");
        assert_exact(&run, &golden_logits(&net, &image, acc), &what);
        let run = native_run(&b, &image, &[(longest + 1, 0)], &delayed);
        assert!(run.done && run.failed, "{what} + 1: {run:?}");
        assert_eq!(run.fail_reason, FAIL_ROUND_TRIP, "{what} + 1");
    }
}

#[test]
fn closed_loop_native_equals_verilator_cycle_by_cycle() {
    let mut rng = seeded("lightning datapath differential", 9501);
    let shallow = random_network(&mut rng, &[32, 16, 10]);
    // Two hidden layers: the image's bank and both hidden layers' (a two-bit
    // bank select over three banks). The second hidden layer's inputs are
    // mostly small, so a small shift keeps its outputs alive.
    let mut deep_rng = seeded("lightning datapath differential deep", 9502);
    let deep = Network::random(&[32, 24, 16, 10], &[3, 1, 0], &mut deep_rng).unwrap();
    let acc = AccWidth::new(16).unwrap();
    for (name, net, cores, source) in [
        ("32-16-10", &shallow, 1u32, WeightSource::Memory),
        ("32-16-10", &shallow, 2, WeightSource::Memory),
        ("32-16-10", &shallow, 2, WeightSource::Stream),
        ("32-24-16-10", &deep, 2, WeightSource::Memory),
    ] {
        let b = build_with(net, acc, cores, source);
        let paths: Vec<(usize, usize)> = (0..cores)
            .map(|_| (rng.gen_range(2..=12), rng.gen_range(1..=15)))
            .collect();
        for _ in 0..2 {
            let image = random_image(&mut rng, 32);
            let controls = LoopControls {
                weight_stall_percent: if source == WeightSource::Stream {
                    40
                } else {
                    0
                },
                ..LoopControls::default()
            };
            let mut links = ideal_links(&paths);
            let mut driver = LoopDriver::new(&mut links, &image, b.shape.clone(), &controls);
            let native = native_run(&b, &image, &paths, &controls);
            let cycles = native.cycles + 20;
            Differential::new(&b.module)
                .try_run(&DiffConfig::cycles(cycles), |s| driver.cycle(s))
                .unwrap_or_else(|e| panic!("{e}"));
            let both = driver.result();
            let what = format!("{name}, cores {cores} {source:?} paths {paths:?}");
            assert_exact(both, &golden_logits(net, &image, acc), &what);
            assert_eq!(both, &native, "{what}: lockstep run vs native run");
        }
    }
}

/// The shipped MLP's first `images` test images on `cores` cores; returns the
/// cycles per image.
fn shipped_mlp(cores: u32, images: usize) -> u64 {
    let w = load_workload(&data_dir()).unwrap();
    let acc = w.model.acc_width;
    let net = &w.model.network;
    let b = build(net, acc, cores);
    let mut dut = NativeDut::new(&b.module).unwrap();
    dut.reset(2);
    let mut correct = 0;
    let mut cycles = Vec::new();
    let paths: Vec<(usize, usize)> = (0..cores as usize).map(|c| (10 + c, 3)).collect();
    let n = images.min(w.test.images.len());
    for (i, (image, &label)) in w.test.images.iter().zip(&w.test.labels).take(n).enumerate() {
        let mut links = ideal_links(&paths);
        let run = run_image(
            &mut dut,
            &mut links,
            image,
            b.shape.clone(),
            &LoopControls::default(),
        )
        .unwrap();
        let what = format!("{cores} cores, image {i}");
        assert_exact(&run, &golden_logits(net, image, acc), &what);
        assert_eq!(run.logits, w.reference.logits[i], "{what} vs Python");
        correct += usize::from(w.reference.predictions[i] == usize::from(label));
        cycles.push(run.cycles);
    }
    if n == w.test.images.len() {
        assert_eq!(correct, w.reference.correct);
    }
    cycles.dedup();
    println!("shipped MLP on {cores} cores: {n} images, cycles per image {cycles:?}");
    assert_eq!(
        cycles.len(),
        1,
        "the cycle count does not depend on the data"
    );
    cycles[0]
}

#[test]
fn shipped_mlp_test_set_is_bit_exact_natively() {
    let one = shipped_mlp(1, usize::MAX);
    let two = shipped_mlp(2, 40);
    let four = shipped_mlp(4, 40);
    assert!(four < two && two < one, "cycles {one} {two} {four}");
}

#[test]
fn lenet_300_100_shape_runs_end_to_end_natively() {
    let mut rng = seeded("lightning lenet shape", 9601);
    let sizes = [784usize, 300, 100, 10];
    // Shifts that keep the hidden activations alive (larger ones zero them all).
    let shifts = [5u32, 4, 0];
    let net = Network::random(&sizes, &shifts, &mut rng).unwrap();
    let acc = AccWidth::new(24).unwrap();
    let image = random_image(&mut rng, 784);
    let expected = golden_logits(&net, &image, acc);
    let cores: Vec<u32> = match std::env::var("LIGHTNING_LENET_CORES") {
        Ok(list) => list
            .split(',')
            .filter_map(|c| c.trim().parse().ok())
            .collect(),
        Err(_) => vec![1, 2, 3, 4],
    };
    for c in cores {
        let b = build(&net, acc, c);
        let paths: Vec<(usize, usize)> = (0..c).map(|_| (10, 3)).collect();
        let run = native_run(&b, &image, &paths, &LoopControls::default());
        assert_exact(&run, &expected, &format!("LeNet shape, {c} cores"));
        println!(
            "LeNet-300-100 on {c} cores: {} cycles per image (reference RTL: 16825); DAC start {}, window open {}",
            run.cycles, run.dac_start_cycle, run.window_open_cycle
        );
        for e in &run.timeline {
            println!("  cycle {:>6}: {}", e.cycle, e.what);
        }
    }
}
