//! The Lightning golden model: the arithmetic contract on hand-computed examples,
//! the shipped digits MLP against the Python integer model (logit by logit), noisy
//! accuracy, and a LeNet-300-100-shaped network.
//!
//! Golden model only (no hardware engine yet): these tests pin the contract that
//! the Lightning generator will later be checked against on `sim` and Verilator.

use std::path::Path;

use rand::Rng;
use testbench::lightning::arith::{
    self, cycles_per_output, decode_adc, encode_sample, lane_sum, normalize, relu, signed_term,
    AccWidth, ArithError, OpticalLoss, Weight,
};
use testbench::lightning::golden::{
    accumulate, evaluate, infer, infer_with_core, lane_sums, DatapathConfig, Layer, Network,
};
use testbench::lightning::model_files::{data_dir, load_workload, ModelFileError, Workload};
use testbench::lightning::photonic::{
    adc_sample, add_noise, product, IdealCore, NoisyCore, PhotonicCore, TESTBED_SIGMA,
};
use testbench::rng::seeded;

fn workload() -> Workload {
    match load_workload(&data_dir()) {
        Ok(w) => w,
        Err(e) => panic!("shipped workload: {e}"),
    }
}

fn exact_config(w: &Workload) -> DatapathConfig {
    DatapathConfig {
        acc_width: w.model.acc_width,
        optical_loss: OpticalLoss::UNITY,
    }
}

#[test]
fn photonic_products_by_hand() {
    assert_eq!(product(255, 255), 254); // 65025 >> 8
    assert_eq!(product(128, 128), 64); // 16384 >> 8
    assert_eq!(product(100, 50), 19); // 5000 >> 8 = 19.53 → 19 (truncation)
    assert_eq!(product(16, 16), 1);
    assert_eq!(product(15, 17), 0); // 255 >> 8
    assert_eq!(product(0, 255), 0);
    // The core returns {0, p[7:0], 7'b0}.
    let s = IdealCore.transmit(encode_sample(255), encode_sample(255));
    assert_eq!(s, 0x7F00);
    assert_eq!(IdealCore.transmit(0x7F80 | 0x7F, 0x7F80 | 0x8000), 0x7F00); // [14:7] only
    assert_eq!(decode_adc(s, OpticalLoss::UNITY), 254);
}

#[test]
fn signs_and_weights() {
    assert_eq!(signed_term(19, true), -19);
    assert_eq!(signed_term(19, false), 19);
    let w = Weight::from_signed(-255).expect("in range");
    assert_eq!((w.magnitude, w.negative, w.signed()), (255, true, -255));
    assert_eq!(Weight::from_signed(0), Ok(Weight::ZERO));
    assert_eq!(Weight::from_signed(256), Err(ArithError::Weight(256)));
    assert_eq!(
        Weight::from_signed(-256).map_err(|e| e.to_string()),
        Err(
            "weight -256 is out of range: must be -255..=255 (8-bit magnitude and a sign bit)"
                .into()
        )
    );
}

#[test]
fn lane_sums_by_hand() {
    let all = [254u8; 16];
    assert_eq!(lane_sum(&all, &[false; 16]), 4064);
    assert_eq!(lane_sum(&all, &[true; 16]), -4064);
    let alternating: [bool; 16] = std::array::from_fn(|i| i % 2 == 1);
    assert_eq!(lane_sum(&all, &alternating), 0);
    // Products 0..16 with lanes 3 and 10 negative: 120 − 2·(3 + 10) = 94.
    let ramp: [u8; 16] = std::array::from_fn(|i| i as u8);
    let signs: [bool; 16] = std::array::from_fn(|i| i == 3 || i == 10);
    assert_eq!(lane_sum(&ramp, &signs), 94);

    // Through the core: 20 inputs → 2 cycles, the second padded with 12 zero lanes.
    let acts: Vec<u8> = (0..20).map(|i| 10 * i as u8).collect(); // 0, 10, …, 190
    let weights: Vec<Weight> = (0..20)
        .map(|i| Weight {
            magnitude: 200,
            negative: i >= 16,
        })
        .collect();
    let sums = lane_sums(&weights, &acts, OpticalLoss::UNITY, &mut IdealCore);
    let expect_first: i64 = (0..16).map(|i| (10 * i * 200) >> 8).sum();
    let expect_second: i64 = -(16..20).map(|i| (10 * i * 200) >> 8).sum::<i64>();
    assert_eq!(sums, vec![expect_first, expect_second]);
    // By hand: (2000·i) >> 8 for i = 0..16 sums to 930; 125 + 132 + 140 + 148 = 545.
    assert_eq!((expect_first, expect_second), (930, -545));
}

#[test]
fn accumulator_saturates_and_recovers() {
    assert_eq!(AccWidth::new(12), Err(ArithError::AccWidth(12)));
    assert!(AccWidth::new(49).is_err());
    let w13 = AccWidth::new(13).expect("valid");
    assert_eq!((w13.min_value(), w13.max_value()), (-4096, 4095));
    assert_eq!(w13.saturating_add(4000, 4064), (4095, true));
    assert_eq!(w13.saturating_add(-4000, -4064), (-4096, true));
    assert_eq!(w13.saturating_add(4095, -4064), (31, false)); // not sticky
                                                              // 16 bits: 8 × 4064 = 32512 fits, the 9th cycle clamps at 32767.
    let w16 = AccWidth::RELEASED_RTL;
    assert_eq!(accumulate(&[4064; 8], w16), (32512, 0));
    assert_eq!(accumulate(&[4064; 9], w16), (32767, 1));
    assert_eq!(accumulate(&[4064, 4064, -4064], w13), (31, 1)); // 4064, 4095 (clamped), 31
                                                                // A dense neuron: 144 inputs of 255 × +255 overflows 16 bits, not 24.
    let layer = Layer::from_signed(&[vec![255; 144], vec![-255; 144]], 0).expect("valid");
    let net = Network::new(vec![layer]).expect("valid");
    let narrow = DatapathConfig {
        acc_width: w16,
        ..DatapathConfig::default()
    };
    let wide = DatapathConfig {
        acc_width: AccWidth::new(24).expect("valid"),
        ..DatapathConfig::default()
    };
    let r16 = infer(&net, &[255; 144], &narrow).expect("runs");
    let r24 = infer(&net, &[255; 144], &wide).expect("runs");
    assert_eq!(
        (r16.logits.clone(), r16.saturations),
        (vec![32767, -32768], 2)
    );
    assert_eq!((r24.logits, r24.saturations), (vec![36576, -36576], 0));
}

#[test]
fn relu_and_normalization_by_hand() {
    assert_eq!(relu(-5), 0);
    assert_eq!(relu(7), 7);
    assert_eq!(normalize(1019, 2), 254);
    assert_eq!(normalize(1020, 2), 255);
    assert_eq!(normalize(1024, 2), 255); // clamp
    assert_eq!(normalize(100_000, 0), 255);
    assert_eq!(normalize(7, 1), 3); // floor
    assert_eq!(normalize(-1, 0), 0);
    assert_eq!(normalize(-8, 2), 0);
    assert_eq!(arith::check_shift(31), Ok(31));
    assert_eq!(arith::check_shift(32), Err(ArithError::Shift(32)));
    assert_eq!(arith::argmax(&[3, 9, -2, 9]), Some(1)); // first of equal maxima
    assert_eq!(arith::argmax(&[]), None);

    // A hidden layer normalizes (ReLU, >> k, clamp); the last emits raw accumulators.
    let hidden =
        Layer::from_signed(&[vec![255; 16], vec![-255; 16], vec![64; 16]], 4).expect("valid");
    let last = Layer::from_signed(&[vec![255, -255, 0]], 9).expect("valid");
    let net = Network::new(vec![hidden, last]).expect("valid");
    let r = infer(&net, &[255; 16], &DatapathConfig::default()).expect("runs");
    // Row 0: 16 × 254 = 4064 >> 4 = 254; row 1: ReLU → 0; row 2: 16 × 63 = 1008 >> 4 = 63.
    assert_eq!(r.activations, vec![vec![254, 0, 63]]);
    // Logit: (254 · 255) >> 8 = 253, minus 0, plus 0 — no shift on the last layer.
    assert_eq!(r.logits, vec![253]);
}

#[test]
fn layer_timing_matches_the_released_rtl() {
    assert_eq!(cycles_per_output(0), Err(ArithError::NoInputs));
    assert_eq!(cycles_per_output(16), Ok(1));
    assert_eq!(cycles_per_output(17), Ok(2));
    assert_eq!(cycles_per_output(64), Ok(4));
    let mut rng = seeded("layer_timing_matches_the_released_rtl", 1);
    let net = Network::random(&[784, 300, 100, 10], &[4, 1, 0], &mut rng).expect("valid");
    let shapes = net.shapes();
    // LIGHTNING.md's reference timeline: 300 × 49, 100 × 19, 10 × 7 DAC cycles.
    let cycles: Vec<(usize, usize)> = shapes
        .iter()
        .map(|s| (s.cycles_per_output, s.compute_cycles))
        .collect();
    assert_eq!(cycles, vec![(49, 14700), (19, 1900), (7, 70)]);
    assert_eq!(shapes[0].padded_inputs, 784);
    assert_eq!(shapes[1].padded_inputs, 304);
    assert_eq!(shapes[2].padded_inputs, 112);
}

#[test]
fn loss_compensation() {
    // Unity register is the identity on every sample.
    for s in 0..=u16::MAX {
        assert_eq!(OpticalLoss::UNITY.compensate(s), s.min(0x7FFF));
    }
    // Power-of-two loss compensated exactly: every product survives.
    let half = OpticalLoss::from_factor(2.0).expect("valid");
    for p in 0..=255u8 {
        assert_eq!(decode_adc(adc_sample(p, 0.5), half), p);
    }
    // Every transmission from 0.2 to 1.0 (step 0.001): the gain a calibration
    // derives from one full-scale product, round(256 · (254 << 7) / sample),
    // decodes every product 0..=254 exactly. With truncation instead of rounding
    // to the nearest product, some transmissions admit no exact Q8.8 gain at all.
    let full_scale = f64::from(254u32 << 7);
    for step in 0..=800 {
        let t = 0.2 + f64::from(step) * 0.001;
        let measured = f64::from(adc_sample(254, t));
        let gain = OpticalLoss((256.0 * full_scale / measured).round() as u16);
        for p in 0..=254u8 {
            let got = decode_adc(adc_sample(p, t), gain);
            assert_eq!(
                got, p,
                "transmission {t:.3}, gain {:#x}: product {p}",
                gain.0
            );
        }
    }

    // On the workload, 0.5 transmission + ×2 register gives the exact logits.
    let w = workload();
    let config = DatapathConfig {
        acc_width: w.model.acc_width,
        optical_loss: half,
    };
    let mut core = NoisyCore::new(0.0, 0.5, 0);
    for img in w.test.images.iter().take(20) {
        let exact = infer(&w.model.network, img, &exact_config(&w)).expect("runs");
        let lossy = infer_with_core(&w.model.network, img, &config, &mut core).expect("runs");
        assert_eq!(exact, lossy);
    }
}

#[test]
fn golden_reproduces_the_python_integer_model() {
    let w = workload();
    let config = exact_config(&w);
    let net = &w.model.network;
    assert_eq!(net.inputs(), 64);
    assert_eq!(net.outputs(), 10);
    assert_eq!(w.test.images.len(), 300);
    let mut correct = 0;
    for (i, img) in w.test.images.iter().enumerate() {
        let r = infer(net, img, &config).expect("runs");
        assert_eq!(
            r.logits, w.reference.logits[i],
            "image {i}: logits differ from Python"
        );
        assert_eq!(
            r.prediction(),
            w.reference.predictions[i],
            "image {i}: prediction"
        );
        assert_eq!(
            r.saturations, 0,
            "image {i}: the 16-bit accumulator saturated"
        );
        assert_eq!(r.activations.len(), 1);
        correct += usize::from(r.prediction() == usize::from(w.test.labels[i]));
    }
    assert_eq!(correct, w.reference.correct);
    println!(
        "digits {}: quantized accuracy {correct}/{} = {:.2}%",
        net.shapes()
            .iter()
            .map(|s| s.inputs.to_string())
            .chain([net.outputs().to_string()])
            .collect::<Vec<_>>()
            .join("-"),
        w.test.images.len(),
        100.0 * correct as f64 / w.test.images.len() as f64
    );
}

#[test]
fn noisy_accuracy_is_close_to_noise_free() {
    let w = workload();
    let config = exact_config(&w);
    let net = &w.model.network;
    let exact =
        evaluate(net, &w.test.images, &w.test.labels, &config, &mut IdealCore).expect("runs");
    let seed: u64 = seeded("noisy_accuracy_is_close_to_noise_free", 1657).gen();
    let run = |seed| {
        let mut core = NoisyCore::new(TESTBED_SIGMA, 1.0, seed);
        evaluate(net, &w.test.images, &w.test.labels, &config, &mut core).expect("runs")
    };
    let noisy = run(seed);
    assert_eq!(noisy, run(seed), "same seed, same predictions");
    let flipped = noisy
        .predictions
        .iter()
        .zip(&exact.predictions)
        .filter(|(a, b)| a != b)
        .count();
    println!(
        "sigma {TESTBED_SIGMA}: noisy accuracy {}/{} = {:.2}% vs noise-free {:.2}% ({flipped} predictions changed)",
        noisy.correct,
        noisy.predictions.len(),
        100.0 * noisy.fraction(),
        100.0 * exact.fraction()
    );
    assert!(
        (noisy.fraction() - exact.fraction()).abs() <= 0.05,
        "noisy {:.2}% is more than 5 points from noise-free {:.2}%",
        100.0 * noisy.fraction(),
        100.0 * exact.fraction()
    );
    // The noise model itself: rounding and clamping on the 0–255 scale.
    assert_eq!(add_noise(10, 1.0, 0.49), 10);
    assert_eq!(add_noise(10, 1.0, 0.5), 11); // half away from zero
    assert_eq!(add_noise(0, 2.0, -3.0), 0);
    assert_eq!(add_noise(254, 2.0, 3.0), 255);
}

#[test]
fn lenet_300_100_runs_through_golden_inference() {
    let mut rng = seeded("lenet_300_100_runs_through_golden_inference", 300_100);
    let net = Network::random(&[784, 300, 100, 10], &[4, 1, 0], &mut rng).expect("valid");
    let input: Vec<u8> = (0..784).map(|_| rng.gen()).collect();
    let config = DatapathConfig::default();
    let r = infer(&net, &input, &config).expect("runs");
    let lens: Vec<usize> = r.activations.iter().map(Vec::len).collect();
    assert_eq!(lens, vec![300, 100]);
    assert_eq!(r.logits.len(), 10);
    assert_eq!(
        r,
        infer(&net, &input, &config).expect("runs"),
        "deterministic"
    );
    for (l, acts) in r.activations.iter().enumerate() {
        let live = acts.iter().filter(|&&a| a > 0 && a < 255).count();
        assert!(
            live > acts.len() / 10,
            "layer {l}: only {live} activations in 1..255"
        );
    }
    let wide = DatapathConfig {
        acc_width: AccWidth::new(32).expect("valid"),
        ..config
    };
    let r32 = infer(&net, &input, &wide).expect("runs");
    if r.saturations == 0 {
        assert_eq!(r, r32, "no saturation: width does not matter");
    }
    println!(
        "LeNet-300-100 (random): logits {:?}, 16-bit saturations {}",
        r.logits, r.saturations
    );
    let bad = infer(&net, &input[..783], &config).expect_err("short input");
    assert_eq!(
        bad.to_string(),
        "input has 783 values, but the network takes 784"
    );
}

fn copy_workload(dir: &Path) {
    for f in [
        "weights.json",
        "test_images.bin",
        "test_labels.bin",
        "reference.json",
    ] {
        std::fs::copy(data_dir().join(f), dir.join(f)).expect("copy workload file");
    }
}

fn load_err(dir: &Path) -> String {
    match load_workload(dir) {
        Ok(_) => panic!("{} loaded, but is corrupted", dir.display()),
        Err(e) => e.to_string(),
    }
}

#[test]
fn malformed_files_are_named_with_the_reason() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    copy_workload(dir);
    assert!(load_workload(dir).is_ok());

    let images = dir.join("test_images.bin");
    let bytes = std::fs::read(&images).expect("read");
    std::fs::write(&images, &bytes[..bytes.len() - 1]).expect("write");
    let e = load_err(dir);
    assert!(e.starts_with(&images.display().to_string()), "{e}");
    assert!(
        e.contains("300 images of 64 features, but the payload has 19199 bytes"),
        "{e}"
    );
    std::fs::write(&images, b"NOTMAGIC\0\0\0\0\0\0\0\0").expect("write");
    assert!(load_err(dir).contains("bad magic"));
    std::fs::write(&images, &bytes).expect("write");

    let weights = dir.join("weights.json");
    let text = std::fs::read_to_string(&weights).expect("read");
    std::fs::write(&weights, &text[..100]).expect("write");
    assert!(load_err(dir).contains("weights.json: not valid JSON"));
    let shortened = text.replacen("[0,32,14,-33,", "[32,14,-33,", 1);
    assert_ne!(shortened, text, "the first weight row changed");
    std::fs::write(&weights, shortened).expect("write");
    let e = load_err(dir);
    assert!(
        e.contains("layers[0].weights[0]: 63 weights, but inputs is 64"),
        "{e}"
    );
    std::fs::write(&weights, text.replacen("[0,32,", "[0,320,", 1)).expect("write");
    let e = load_err(dir);
    assert!(e.contains("weight 320 is out of range"), "{e}");
    std::fs::remove_file(&weights).expect("remove");
    let e = load_workload(dir).expect_err("missing file");
    assert!(matches!(e, ModelFileError::Io { .. }));
    assert!(e.to_string().contains("weights.json: cannot read"), "{e}");
}

#[test]
fn the_generator_reads_the_weights_file_as_the_golden_model_does() {
    use hdl::lightning::weights::load_weights;
    use testbench::lightning::closed_loop::hardware_config;
    let w = workload();
    let file = load_weights(&data_dir().join("weights.json")).expect("shipped weights");
    assert_eq!(file.acc_width, w.model.acc_width.bits());
    for cores in [1, 2] {
        assert_eq!(
            file.datapath_config(file.acc_width, cores),
            hardware_config(&w.model.network, w.model.acc_width, cores)
        );
    }
}
