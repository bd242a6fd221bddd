//! The Lightning board top with several photonic cores, with streamed weights,
//! and its self-calibration, driven only through AXI-Lite and the converter
//! streams (a link model per core, a DMA engine per weight stream): logits equal
//! the golden model on native and Verilator; calibration from random wrong
//! settings (skew, loss) finds the settings the link model implies, computed here
//! independently of the calibrator, and makes the logits exact again, with
//! `cal_cycles` the count the DAC ports' timeline gives; a dark link fails the
//! calibration and never hangs; an ADC overflow counts alike on 1, 2 and 4
//! cores; images queued by a pipelining host run back to back, each answered
//! with its own logits.
//!
//! `cargo test -p testbench --test lightning_top_cores`

use std::cmp::Reverse;

use hdl::blocks::axil_regfile::RegisterMap;
use hdl::lightning::config::{DatapathConfig as HwConfig, WeightSource};
use hdl::lightning::decode::DECODE_LATENCY;
use hdl::lightning::top::{lightning_top, TopConfig};
use hdl::Module;
use rand::Rng;
use testbench::dut::{Dut, NativeDut, VerilatorDut};
use testbench::lightning::answer::{answer as answer_model, nats, ACCURACY_NATS, LSM_MIN_NATS};
use testbench::lightning::arith::{AccWidth, Contract, OpticalLoss};
use testbench::lightning::closed_loop::{hardware_config, hardware_config_as, PortShape};
use testbench::lightning::golden::{infer, DatapathConfig, Network};
use testbench::lightning::link::PhotonicLink;
use testbench::lightning::photonic::{IdealCore, NoisyCore};
use testbench::lightning::top_bench::{AnswerBeat, CalibrationRun, TopBench, TopRun, WordOrder};
use testbench::rng::seeded;
use testbench::verilator::BuildOptions;

/// Status bits from the documented map.
const BUSY: u32 = 1;
const DONE: u32 = 2;
const FAILED: u32 = 4;
/// `cal_status` bits and core c's 2-bit reason at 8 + 2c (1 = no light).
const CAL_BUSY: u32 = 1;
const CAL_DONE: u32 = 2;
const CAL_FAILED: u32 = 4;
const CAL_NO_LIGHT: u32 = 1;
/// A lossless full-scale product's ADC sample, (255 · 255 >> 8) << 7.
const FULL_SCALE: f64 = 32512.0;

/// Photonic latency (cycles) and intra-cycle shift of every link.
const LATENCY: usize = 10;
const SHIFT: usize = 3;

fn golden(net: &Network, image: &[u8], acc: AccWidth) -> Vec<i64> {
    let cfg = DatapathConfig {
        acc_width: acc,
        optical_loss: OpticalLoss::UNITY,
    };
    infer(net, image, &cfg).unwrap().logits
}

fn top(cfg: &HwConfig) -> (Module, RegisterMap) {
    lightning_top(cfg, &TopConfig::default()).unwrap()
}

fn start(dut: &mut dyn Dut) {
    dut.set_clock_period("dac", 1000).unwrap();
    dut.set_clock_period("adc", 1000).unwrap();
    dut.set_clock_period("axil", 2531).unwrap();
    dut.reset(4);
}

/// A random network whose hidden layers all stay alive: the first hidden
/// layer, fed by 8-bit image bytes, takes a normalization shift of 6 to 9; a
/// hidden layer fed by another one's (mostly small) activations takes 0 to 2,
/// as with 6 or more its outputs clamp to 0 for every image and the logits no
/// longer depend on the image.
fn network(seed: u64, sizes: &[usize]) -> Network {
    let mut rng = seeded("lightning_top_cores network", seed);
    let shifts: Vec<u32> = (1..sizes.len())
        .map(|layer| match layer {
            1 => rng.gen_range(6..=9),
            _ => rng.gen_range(0..=2),
        })
        .collect();
    Network::random(sizes, &shifts, &mut rng).unwrap()
}

/// Asserts that `images` are told apart by `net`: their golden logits are
/// pairwise different and none is all zeros, so a run that answers with another
/// image's logits, or with nothing computed, fails.
fn assert_images_told_apart(net: &Network, images: &[Vec<u8>], acc: AccWidth) {
    let logits: Vec<Vec<i64>> = images.iter().map(|im| golden(net, im, acc)).collect();
    for (k, l) in logits.iter().enumerate() {
        assert!(
            l.iter().any(|&x| x != 0),
            "image {k}: the golden logits are all 0"
        );
        assert!(
            !logits[..k].contains(l),
            "image {k}: the golden logits equal an earlier image's"
        );
    }
}

fn assert_exact(run: &TopRun, expected: &[i64], what: &str) {
    assert_eq!(
        run.status & (DONE | FAILED),
        DONE,
        "{what}: status {:#x}",
        run.status
    );
    assert_eq!(run.logits, expected, "{what}: logits");
}

/// `images` random images through a top of `cores` cores with `source` weights;
/// returns the cycles per image.
fn images_through_top(
    dut: &mut dyn Dut,
    map: &RegisterMap,
    hw: &HwConfig,
    net: &Network,
    acc: AccWidth,
    images: usize,
) -> Vec<u32> {
    start(dut);
    let links = (0..hw.cores)
        .map(|_| PhotonicLink::new(IdealCore, LATENCY, SHIFT))
        .collect();
    let mut bench = TopBench::new(dut, links, map, 16).unwrap();
    if let Some(words) = PortShape::of(hw).weight_stream {
        bench.feed_weights(words.as_ref().clone()).unwrap();
    }
    let mut rng = seeded("lightning_top_cores images", u64::from(hw.cores));
    let mut cycles = Vec::new();
    for k in 0..images {
        let image: Vec<u8> = (0..net.inputs()).map(|_| rng.gen()).collect();
        let scale = rng.gen_range(0..=12);
        bench.write("scale_shift", scale).unwrap();
        let run = bench.infer(&image, net.outputs(), 400).unwrap();
        let what = format!("{} cores, {:?}, image {k}", hw.cores, hw.weight_source);
        let expected = golden(net, &image, acc);
        assert_exact(&run, &expected, &what);
        assert_answer(&run, &expected, scale, &what);
        assert_busy_counters(&run, net, hw.cores, &what);
        cycles.push(run.cycles);
    }
    cycles
}

/// The real log-softmax of `x · 2^-s` in f64, clamped at the block's minimum.
fn log_softmax(logits: &[i64], s: u32) -> Vec<f64> {
    let scale = (-f64::from(s)).exp2();
    let m = logits.iter().copied().max().unwrap_or(0);
    let diffs: Vec<f64> = logits.iter().map(|&x| (x - m) as f64 * scale).collect();
    let lse = diffs.iter().map(|d| d.exp()).sum::<f64>().ln();
    diffs.iter().map(|d| (d - lse).max(LSM_MIN_NATS)).collect()
}

/// The index of the first largest of `logits`: the answer's class.
fn first_max(logits: &[i64]) -> usize {
    (0..logits.len())
        .max_by_key(|&i| (logits[i], Reverse(i)))
        .unwrap_or(0)
}

/// The answer registers and stream against the golden logits: the class is the
/// first largest logit, every log-softmax is the block's bit-exact contract and
/// within its accuracy of the real value, and the stream carries one beat per
/// logit in index order with `tlast` on the last.
fn assert_answer(run: &TopRun, logits: &[i64], scale: u32, what: &str) {
    let first_max = first_max(logits);
    assert_eq!(run.class as usize, first_max, "{what}: class");
    assert_eq!(run.max_logit, logits[first_max], "{what}: max_logit");
    let contract = answer_model(logits, scale).unwrap();
    assert_eq!(run.lsm, contract.log_softmax, "{what}: lsm (contract)");
    for (i, (&word, real)) in run.lsm.iter().zip(log_softmax(logits, scale)).enumerate() {
        let err = (nats(word) - real).abs();
        assert!(err <= ACCURACY_NATS, "{what}: lsm{i} off by {err} nat");
    }
    assert_answer_beats(&run.answer_beats, logits, &run.lsm, what);
}

/// One inference's `m_axis_answer` beats: one per logit in index order, each
/// with its log-softmax `lsm`, the class (the first largest logit), and `tlast`
/// on the last.
fn assert_answer_beats(beats: &[AnswerBeat], logits: &[i64], lsm: &[i64], what: &str) {
    let class = first_max(logits) as u32;
    let n = logits.len();
    assert_eq!(beats.len(), n, "{what}: answer beats");
    for (i, b) in beats.iter().enumerate() {
        let expected = AnswerBeat {
            logit: logits[i],
            lsm: lsm[i],
            index: i as u32,
            class,
            last: i + 1 == n,
        };
        assert_eq!(*b, expected, "{what}: answer beat {i}");
    }
}

/// The busy counters: one DAC beat per neuron (of its core) and 16 inputs, and
/// the busy stages fit in the run.
fn assert_busy_counters(run: &TopRun, net: &Network, cores: u32, what: &str) {
    let beats: usize = net
        .layers()
        .iter()
        .map(|l| l.outputs().div_ceil(cores as usize) * l.inputs().div_ceil(16))
        .sum();
    let [dac, photonic, decode, compute] = run.busy_cycles;
    assert_eq!(dac as usize, beats, "{what}: busy_dac_cycles");
    // Each layer's decode runs its beats plus the decoder's latency once.
    let layers = net.layers().len() as u32;
    assert_eq!(
        decode,
        dac + layers * DECODE_LATENCY,
        "{what}: busy_decode_cycles"
    );
    // A layer's words are in flight at least the link's latency beyond its beats.
    assert!(
        photonic >= dac + layers * LATENCY as u32,
        "{what}: busy_photonic_cycles {:?}",
        run.busy_cycles
    );
    assert!(
        compute >= photonic.max(decode) && compute < run.cycles,
        "{what}: compute_cycles {} of {}",
        compute,
        run.cycles
    );
}

fn config(net: &Network, acc: AccWidth, cores: u32, source: WeightSource) -> HwConfig {
    let mut hw = hardware_config(net, acc, cores);
    hw.weight_source = source;
    hw
}

#[test]
fn two_and_four_cores_equal_golden_native_and_divide_the_cycles() {
    let acc = AccWidth::new(24).unwrap();
    let net = network(1, &[48, 16, 8]);
    let mut per_image = Vec::new();
    for cores in [1, 2, 4] {
        let hw = config(&net, acc, cores, WeightSource::Memory);
        let (m, map) = top(&hw);
        let mut dut = NativeDut::new(&m).unwrap();
        let cycles = images_through_top(&mut dut, &map, &hw, &net, acc, 2);
        per_image.push((cores, cycles[0]));
    }
    println!("cycles per image through the top (cores, cycles): {per_image:?}");
    // 16 + 8 neurons of 3 + 1 beats: more cores, fewer cycles.
    assert!(per_image[1].1 < per_image[0].1 && per_image[2].1 < per_image[1].1);
}

#[test]
fn streamed_weights_equal_golden_native_on_one_and_four_cores() {
    let acc = AccWidth::new(24).unwrap();
    let net = network(2, &[40, 12, 8]);
    for cores in [1, 4] {
        let hw = config(&net, acc, cores, WeightSource::Stream);
        let (m, map) = top(&hw);
        let mut dut = NativeDut::new(&m).unwrap();
        images_through_top(&mut dut, &map, &hw, &net, acc, 2);
    }
}

#[test]
fn verilator_two_cores_streamed_weights_equal_golden() {
    let acc = AccWidth::new(24).unwrap();
    let net = network(3, &[40, 12, 8]);
    let hw = config(&net, acc, 2, WeightSource::Stream);
    let (m, map) = top(&hw);
    let mut dut = VerilatorDut::new(&m, &BuildOptions::default()).unwrap();
    images_through_top(&mut dut, &map, &hw, &net, acc, 2);
}

/// Calibrates a top of `cores` cores whose links have random skews and losses,
/// checks the programmed settings and that the next inferences are exact.
fn calibrate_and_infer(
    dut: &mut dyn Dut,
    map: &RegisterMap,
    net: &Network,
    acc: AccWidth,
    cores: u32,
    seed: u64,
) {
    let mut rng = seeded("lightning calibration", seed);
    let impairments: Vec<(i64, f64)> = (0..cores)
        .map(|_| (rng.gen_range(-1023..=1023), rng.gen_range(0.5..=1.0)))
        .collect();
    start(dut);
    let links = impairments
        .iter()
        .map(|&(skew, t)| PhotonicLink::with_skew(NoisyCore::new(0.0, t, 1), LATENCY, SHIFT, skew))
        .collect();
    let mut bench = TopBench::new(dut, links, map, 16).unwrap();
    let run = bench.calibrate(cores as usize, 5000).unwrap();
    assert!(run.succeeded(), "cal_status {:#x}", run.status);
    assert_eq!(
        run.status_after_write & (CAL_BUSY | CAL_DONE),
        CAL_BUSY,
        "cal_status {:#x} right after the calibrate write",
        run.status_after_write
    );
    assert_eq!(run.busy_and_done, 0, "polls showing busy and done");
    let timeout = bench.read("timeout").unwrap();
    let want = run.cycles_from_dac_ports(timeout).unwrap();
    assert_eq!(u64::from(run.cycles), want, "cal_cycles");
    for (c, &(skew, t)) in impairments.iter().enumerate() {
        let (a, w) = run.arrivals[c];
        assert_eq!(i64::from(w) - i64::from(a), skew, "core {c}: measured skew");
        assert_eq!(
            run.settings[c],
            CalibrationRun::expected_settings(skew, t),
            "core {c} (skew {skew}, t {t:.3})"
        );
    }
    println!(
        "{cores} cores calibrated in {} DAC cycles; impairments {impairments:?}; settings {:?}",
        run.cycles, run.settings
    );
    let mut img_rng = seeded("lightning calibration images", seed);
    for k in 0..2 {
        let image: Vec<u8> = (0..net.inputs()).map(|_| img_rng.gen()).collect();
        let run = bench.infer(&image, net.outputs(), 400).unwrap();
        assert_exact(
            &run,
            &golden(net, &image, acc),
            &format!("calibrated image {k}"),
        );
    }
    let streams = bench.streams();
    assert!(streams.clean(), "{streams}");
}

#[test]
fn calibration_from_random_impairments_converges_on_one_and_two_cores_native() {
    let acc = AccWidth::new(24).unwrap();
    let net = network(4, &[40, 12, 8]);
    for (cores, seeds) in [(1u32, 0..3u64), (2, 10..12)] {
        let (m, map) = top(&config(&net, acc, cores, WeightSource::Memory));
        for seed in seeds {
            let mut dut = NativeDut::new(&m).unwrap();
            calibrate_and_infer(&mut dut, &map, &net, acc, cores, seed);
        }
    }
}

#[test]
fn without_calibration_impairments_break_the_logits() {
    let acc = AccWidth::new(24).unwrap();
    let net = network(4, &[40, 12, 8]);
    let hw = config(&net, acc, 1, WeightSource::Memory);
    let (m, map) = top(&hw);
    let mut dut = NativeDut::new(&m).unwrap();
    start(&mut dut);
    let link = PhotonicLink::with_skew(NoisyCore::new(0.0, 0.6, 1), LATENCY, SHIFT, 3 * 16 + 5);
    let mut bench = TopBench::new(&mut dut, vec![link], &map, 16).unwrap();
    let mut rng = seeded("lightning uncalibrated", 1);
    let mut exact = 0;
    for _ in 0..3 {
        let image: Vec<u8> = (0..net.inputs()).map(|_| rng.gen()).collect();
        let run = bench.infer(&image, net.outputs(), 400).unwrap();
        let ok = run.status & (DONE | FAILED) == DONE && run.logits == golden(&net, &image, acc);
        exact += usize::from(ok);
    }
    assert_eq!(exact, 0, "an impaired, uncalibrated link gave exact logits");
}

#[test]
fn a_dark_link_fails_calibration_and_never_hangs() {
    let acc = AccWidth::new(24).unwrap();
    let net = network(4, &[40, 12, 8]);
    let hw = config(&net, acc, 2, WeightSource::Memory);
    let (m, map) = top(&hw);
    let mut dut = NativeDut::new(&m).unwrap();
    start(&mut dut);
    // Core 1 has no light at all.
    let links = vec![
        PhotonicLink::new(NoisyCore::new(0.0, 1.0, 1), LATENCY, SHIFT),
        PhotonicLink::new(NoisyCore::new(0.0, 0.0, 2), LATENCY, SHIFT),
    ];
    let mut bench = TopBench::new(&mut dut, links, &map, 16).unwrap();
    bench.write("timeout", 300).unwrap();
    let before = bench.read("dac1_delay").unwrap();
    let run = bench.calibrate(2, 400).unwrap();
    assert_eq!(run.status & (CAL_DONE | CAL_FAILED), CAL_DONE | CAL_FAILED);
    assert_eq!((run.status >> 8) & 3, 0, "core 0 had light");
    assert_eq!((run.status >> 10) & 3, CAL_NO_LIGHT, "core 1 is dark");
    assert_eq!(bench.read("dac1_delay").unwrap(), before, "nothing loaded");
    assert_eq!(run.settings[1][0], 0x0100, "core 1's loss untouched");
}

/// Under the released RTL's contract the loss gain is an integer on the 8-bit
/// product: its reset value is 1 (no compensation), and a calibration loads the
/// integer nearest to 32512 / level, e.g. 2 for half the light and 3 for a third.
#[test]
fn released_rtl_calibration_loads_the_nearest_integer_gain() {
    let net = network(4, &[40, 12, 8]);
    let acc = AccWidth::new(24).unwrap();
    let hw = hardware_config_as(&net, acc, 1, Contract::ReleasedRtl);
    let (m, map) = top(&hw);
    for (seed, t) in [(0u64, 0.5), (1, 0.34), (2, 0.9)] {
        let mut dut = NativeDut::new(&m).unwrap();
        start(&mut dut);
        let skew = seeded("lightning released-rtl calibration", seed).gen_range(-300..=300);
        let link = PhotonicLink::with_skew(NoisyCore::new(0.0, t, 1), LATENCY, SHIFT, skew);
        let mut bench = TopBench::new(&mut dut, vec![link], &map, 16).unwrap();
        assert_eq!(bench.read("optical_loss0").unwrap(), 1, "reset: gain 1");
        let run = bench.calibrate(1, 5000).unwrap();
        assert!(run.succeeded(), "cal_status {:#x}", run.status);
        let level = (FULL_SCALE * t).round();
        let integer = (FULL_SCALE / level).round() as u32;
        let [_, d, s, wd, ws] = CalibrationRun::expected_settings(skew, t);
        assert_eq!(
            run.settings[0],
            [integer, d, s, wd, ws],
            "t {t}, skew {skew}"
        );
    }
}

/// The native top of `hw`, reset and started, one ideal link per core, and a
/// bench on it (16 ADC samples a beat), handed to `body`.
fn on_started_top(hw: &HwConfig, body: impl FnOnce(&mut TopBench<'_, IdealCore>)) {
    let (m, map) = top(hw);
    let mut dut = NativeDut::new(&m).unwrap();
    start(&mut dut);
    let links = (0..hw.cores)
        .map(|_| PhotonicLink::new(IdealCore, LATENCY, SHIFT))
        .collect();
    let mut bench = TopBench::new(&mut dut, links, &map, 16).unwrap();
    body(&mut bench);
}

/// A host that pipelines: three images' words and starts written at once run
/// back to back, and each answer on the stream is the golden model's for its
/// own image. The network is wide behind a three-word input, so a run lasts
/// longer than the host's writes (19 AXI-Lite writes an image): the next
/// images' words and starts wait in the command queue while one runs, and are
/// taken in order when it ends: a queue that took the next image's first word
/// in the cycle its start is handed to the datapath (still idle then) would
/// overwrite a word that run has yet to read. The host writes each image's
/// words first to last, then (three more images) last to first.
#[test]
fn queued_images_run_back_to_back_each_answered_with_its_own_logits() {
    let acc = AccWidth::new(24).unwrap();
    let net = network(7, &[48, 256, 128, 10]);
    let hw = config(&net, acc, 2, WeightSource::Memory);
    on_started_top(&hw, |bench| {
        let scale = 4;
        bench.write("scale_shift", scale).unwrap();
        let mut rng = seeded("lightning_top_cores queued images", 7);
        for order in [WordOrder::FirstToLast, WordOrder::LastToFirst] {
            let images: Vec<Vec<u8>> = (0..3)
                .map(|_| (0..net.inputs()).map(|_| rng.gen()).collect())
                .collect();
            assert_images_told_apart(&net, &images, acc);
            let queued: Vec<&[u8]> = images.iter().map(Vec::as_slice).collect();
            let runs = bench.infer_queued(&queued, order, 6_000).unwrap();
            let finished = runs.finished_after_writes as usize;
            assert_eq!(
                finished, 0,
                "{order:?}: runs ended before the last write: the first run does not outlast the writes"
            );
            assert_eq!(
                runs.answers.len(),
                images.len(),
                "{order:?}: inferences answered"
            );
            for (k, (beats, image)) in runs.answers.iter().zip(&images).enumerate() {
                let expected = golden(&net, image, acc);
                let lsm = answer_model(&expected, scale).unwrap().log_softmax;
                assert_answer_beats(
                    beats,
                    &expected,
                    &lsm,
                    &format!("{order:?}: queued image {k}"),
                );
            }
            assert_eq!(
                bench.read("cmd_dropped").unwrap(),
                0,
                "{order:?}: cmd_dropped"
            );
            let status = bench.read("status").unwrap();
            assert_eq!(
                status & (BUSY | DONE | FAILED),
                DONE,
                "{order:?}: status {status:#x}"
            );
        }
        let streams = bench.streams();
        assert!(streams.clean(), "{streams}");
    });
}

/// Four starts queued back to back after one image load, a different
/// `scale_shift` written before each: the image stays loaded (its bank is
/// written by loads only, not by the two hidden layers), so every run answers
/// with the image's golden logits, and with the log-softmax of the scale in
/// force at its own `start` (the snapshot the start carries); no start is
/// taken before the previous run's last answer beat has left (a start clears
/// the answer unit).
#[test]
fn queued_starts_each_answer_with_the_controls_written_before_them() {
    let acc = AccWidth::new(24).unwrap();
    let net = network(7, &[48, 256, 128, 10]);
    let hw = config(&net, acc, 2, WeightSource::Memory);
    on_started_top(&hw, |bench| {
        let mut rng = seeded("lightning_top_cores queued starts", 8);
        let image: Vec<u8> = (0..net.inputs()).map(|_| rng.gen()).collect();
        assert_images_told_apart(&net, std::slice::from_ref(&image), acc);
        let expected = golden(&net, &image, acc);
        let scales = [4u32, 6, 0, 9];
        let mark = bench.begin_queue().unwrap();
        bench.load_image(&image).unwrap();
        for &scale in &scales {
            bench.write("scale_shift", scale).unwrap();
            bench.write("start", 1).unwrap();
        }
        let runs = bench.await_queued(mark, scales.len(), 10_000).unwrap();
        assert_eq!(
            runs.finished_after_writes, 0,
            "runs ended before the last write"
        );
        assert_eq!(runs.answers.len(), scales.len(), "inferences answered");
        let mut lsms = Vec::new();
        for (beats, &scale) in runs.answers.iter().zip(&scales) {
            let lsm = answer_model(&expected, scale).unwrap().log_softmax;
            assert_answer_beats(beats, &expected, &lsm, &format!("scale_shift {scale}"));
            lsms.push(lsm);
        }
        lsms.dedup();
        assert_eq!(
            lsms.len(),
            scales.len(),
            "the scales' log-softmaxes must differ"
        );
        assert_eq!(bench.read("cmd_dropped").unwrap(), 0, "cmd_dropped");
        let streams = bench.streams();
        assert!(streams.clean(), "{streams}");
    });
}

/// A consumer that never takes `m_axis_answer` cannot stall the top: the run
/// finishes with its registers intact, every beat is counted as dropped and
/// `answer_overflow` is set until `clear_stats`.
#[test]
fn a_refusing_answer_consumer_never_stalls_the_run() {
    use hdl::lightning::top_regs::status::ANSWER_OVERFLOW;
    let acc = AccWidth::new(24).unwrap();
    let net = network(5, &[32, 12, 6]);
    let hw = config(&net, acc, 2, WeightSource::Memory);
    on_started_top(&hw, |bench| {
        bench.answer_ready = false;
        let image: Vec<u8> = (0..net.inputs()).map(|i| (i * 37 % 256) as u8).collect();
        let expected = golden(&net, &image, acc);
        for k in 1..=2u32 {
            let run = bench.infer(&image, net.outputs(), 400).unwrap();
            assert_exact(&run, &expected, "refused answer");
            assert!(run.answer_beats.is_empty());
            assert_ne!(run.status & ANSWER_OVERFLOW, 0, "status {:#x}", run.status);
            let dropped = bench.read("answer_dropped").unwrap();
            assert_eq!(dropped, k * net.outputs() as u32, "answer_dropped");
        }
        bench.write("clear_stats", 1).unwrap();
        bench.idle(20).unwrap();
        assert_eq!(bench.read("status").unwrap() & ANSWER_OVERFLOW, 0);
        assert_eq!(bench.read("answer_dropped").unwrap(), 0);
    });
}

/// A converter that refuses DAC beats (`m_axis_dac{j}_tready` = 0) cannot hold
/// them (the photonic timing would break): the inference runs on, exact, and
/// the sticky `dac_stall` is set until `clear_stats`, also when only the last
/// DAC refuses; a run with the converters ready leaves it clear.
#[test]
fn a_refusing_dac_sets_dac_stall_and_never_holds_the_beats() {
    use hdl::lightning::top_regs::status::DAC_STALL;
    let acc = AccWidth::new(24).unwrap();
    let net = network(6, &[32, 12, 6]);
    let hw = config(&net, acc, 2, WeightSource::Memory);
    on_started_top(&hw, |bench| {
        let image: Vec<u8> = (0..net.inputs()).map(|i| (i * 29 % 256) as u8).collect();
        let expected = golden(&net, &image, acc);
        let run = bench.infer(&image, net.outputs(), 400).unwrap();
        assert_exact(&run, &expected, "converters ready");
        assert_eq!(run.status & DAC_STALL, 0, "status {:#x}", run.status);
        bench.set_dac_ready(false).unwrap();
        let run = bench.infer(&image, net.outputs(), 400).unwrap();
        assert_exact(&run, &expected, "converters refusing");
        assert_ne!(run.status & DAC_STALL, 0, "status {:#x}", run.status);
        bench.set_dac_ready(true).unwrap();
        bench.write("clear_stats", 1).unwrap();
        bench.idle(20).unwrap();
        assert_eq!(bench.read("status").unwrap() & DAC_STALL, 0);
        // Only the last DAC (core 1's weights) refusing sets it too.
        bench.set_one_dac_ready(3, false).unwrap();
        let run = bench.infer(&image, net.outputs(), 400).unwrap();
        assert_exact(&run, &expected, "DAC 3 refusing");
        assert_ne!(run.status & DAC_STALL, 0, "status {:#x}", run.status);
    });
}

/// A weight DMA that runs dry mid-inference cannot wedge the board top: the
/// inference fails with `fail_reason` 5 (weight stream stalled), `failures`
/// counts it, and the next `start`, with the stream complete, is exact.
#[test]
fn a_weight_dma_that_runs_dry_fails_the_inference_and_frees_the_top() {
    use hdl::lightning::datapath::FAIL_WEIGHTS;
    use hdl::lightning::top_regs::status::FAIL_REASON_SHIFT;
    let acc = AccWidth::new(24).unwrap();
    let net = network(7, &[40, 12, 8]);
    let hw = config(&net, acc, 2, WeightSource::Stream);
    on_started_top(&hw, |bench| {
        let words = PortShape::of(&hw).weight_stream.expect("streamed weights");
        let full = words.as_ref().clone();
        let mut short = full.clone();
        short[1].truncate(full[1].len() / 2);
        bench.write("timeout", 300).unwrap();
        bench.feed_weights(short).unwrap();
        let image: Vec<u8> = (0..net.inputs()).map(|i| (i * 53 % 256) as u8).collect();
        let run = bench.infer(&image, net.outputs(), 400).unwrap();
        assert_eq!(
            run.status & (DONE | FAILED),
            DONE | FAILED,
            "{:#x}",
            run.status
        );
        let reason = u64::from(run.status >> FAIL_REASON_SHIFT & 7);
        assert_eq!(reason, FAIL_WEIGHTS, "status {:#x}", run.status);
        assert_eq!(bench.read("failures").unwrap(), 1);
        bench.feed_weights(full).unwrap();
        let run = bench.infer(&image, net.outputs(), 400).unwrap();
        assert_exact(&run, &golden(&net, &image, acc), "after a dry DMA");
    });
}

/// `adc_dropped` counts the ADC cycles in which any core's word was dropped
/// (the documented map), and every core's FIFO fills in the same cycles: with
/// ADC words arriving twice as fast as the DAC clock takes them, one, two and
/// four cores count the same non-zero number over the same window, and set
/// `status.adc_overflow`; so do four cores of which only core 3's ADC sends.
/// (A count that combined the cores' drops wrongly, e.g. by parity, would
/// count nothing on an even number of cores; one that read core 0 alone,
/// nothing when only core 3 drops.)
#[test]
fn adc_overflow_counts_the_same_on_one_two_and_four_cores() {
    const ADC_OVERFLOW: u32 = 16;
    let acc = AccWidth::new(24).unwrap();
    let net = network(7, &[48, 16, 8]);
    let mut counts = Vec::new();
    for (cores, silent) in [(1u32, vec![]), (2, vec![]), (4, vec![]), (4, vec![0, 1, 2])] {
        let (m, map) = top(&config(&net, acc, cores, WeightSource::Memory));
        let mut dut = NativeDut::new(&m).unwrap();
        dut.set_clock_period("dac", 1000).unwrap();
        dut.set_clock_period("adc", 500).unwrap();
        dut.set_clock_period("axil", 2531).unwrap();
        dut.reset(4);
        let links = (0..cores)
            .map(|_| PhotonicLink::new(IdealCore, LATENCY, SHIFT))
            .collect();
        let mut bench = TopBench::new(&mut dut, links, &map, 16).unwrap();
        bench.adc_silent = silent;
        bench.idle(100).unwrap();
        bench.adc_enabled = false;
        bench.idle(20).unwrap();
        let dropped = bench.read("adc_dropped").unwrap();
        let status = bench.read("status").unwrap();
        assert_ne!(
            status & ADC_OVERFLOW,
            0,
            "{cores} cores: status {status:#x}"
        );
        counts.push(dropped);
    }
    assert!(counts[0] > 0, "no drops counted: {counts:?}");
    assert_eq!(
        counts,
        vec![counts[0]; 4],
        "adc_dropped on 1, 2 and 4 cores, and on 4 with only core 3 sending"
    );
}

/// `cal_cycles` is what the DAC ports show: on two cores whose links differ
/// (the longer calibration counts), at two timeouts a cycle apart, it equals
/// the count `CalibrationRun::cycles_from_dac_ports` derives from the
/// documented procedure, and it holds after the run.
#[test]
fn cal_cycles_is_the_calibration_the_dac_ports_show_and_holds() {
    let acc = AccWidth::new(24).unwrap();
    let net = network(4, &[40, 12, 8]);
    let (m, map) = top(&config(&net, acc, 2, WeightSource::Memory));
    for (timeout, skews) in [(300, [53, -21]), (301, [53, -21]), (300, [-70, 0])] {
        let mut dut = NativeDut::new(&m).unwrap();
        start(&mut dut);
        let links = skews
            .iter()
            .map(|&s| PhotonicLink::with_skew(NoisyCore::new(0.0, 0.7, 1), LATENCY, SHIFT, s))
            .collect();
        let mut bench = TopBench::new(&mut dut, links, &map, 16).unwrap();
        bench.write("timeout", timeout).unwrap();
        let run = bench.calibrate(2, 5000).unwrap();
        let what = format!("timeout {timeout}, skews {skews:?}");
        assert!(run.succeeded(), "{what}: cal_status {:#x}", run.status);
        let want = run.cycles_from_dac_ports(timeout).unwrap();
        assert_eq!(u64::from(run.cycles), want, "{what}: cal_cycles");
        bench.idle(100).unwrap();
        assert_eq!(
            bench.read("cal_cycles").unwrap(),
            run.cycles,
            "{what}: 100 cycles later"
        );
        let streams = bench.streams();
        assert!(streams.clean(), "{what}: {streams}");
    }
}
