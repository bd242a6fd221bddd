//! The shipped digits MLP through the Lightning board top over impaired links
//! (`testbench::lightning::impaired`, `wirespeed sim lightning --skew --loss
//! --calibrate`): with the top's self-calibration every image's logits equal the
//! golden model's (computed here, independently of the run), on 1, 2 and 4
//! cores, for either skew direction, on the native simulator and on Verilator
//! (which must agree); without it the same impairments break every image and
//! the accuracy falls; a skew beyond the calibrator's reach fails the
//! calibration without an error or a hang; bad scenarios are errors naming the
//! parameter.
//!
//! The scenarios run on the native simulator only, but for one: native and
//! Verilator run the same generated top, and a calibrated 2-core run checks
//! that they agree on the calibration, every logit and every counter.
//!
//! `cargo test --release -p testbench --test lightning_impaired` (about 5 s;
//! the first run adds one Verilator build of the top, about 15 s).

use gen::board::Board;
use testbench::engine::Engine;
use testbench::lightning::arith::{argmax, Contract, OpticalLoss};
use testbench::lightning::golden::{infer, DatapathConfig};
use testbench::lightning::impaired::{
    run_impaired, ImpairedOptions, ImpairedReport, Skew, Transmission,
};
use testbench::lightning::model_files::{data_dir, load_workload, Workload};
use testbench::lightning::top_bench::CalibrationRun;

/// `cal_status` reason code of a skew beyond reach (documented map).
const SKEW_BEYOND_REACH: u32 = 2;

fn workload() -> Workload {
    load_workload(&data_dir()).expect("the shipped workload loads")
}

fn zcu111() -> Board {
    Board::named("zcu111").expect("the zcu111 board file")
}

fn options(cores: u32, skew: &str, t: f64, calibrate: bool, engine: Engine) -> ImpairedOptions {
    ImpairedOptions {
        cores,
        latency: 10,
        shift: 3,
        skew: skew.parse().expect("a valid skew"),
        transmission: Transmission::new(t).expect("a valid transmission"),
        arith: Contract::Wirespeed,
        calibrate,
        engine,
    }
}

/// The golden model's logits for image `i` on a perfect link, and whether its
/// argmax is the label.
fn golden(w: &Workload, i: usize) -> (Vec<i64>, bool) {
    let cfg = DatapathConfig {
        acc_width: w.model.acc_width,
        optical_loss: OpticalLoss::UNITY,
    };
    let logits = infer(&w.model.network, &w.test.images[i], &cfg)
        .expect("golden inference")
        .logits;
    let correct = argmax(&logits) == Some(usize::from(w.test.labels[i]));
    (logits, correct)
}

/// Images whose hardware logits equal the golden model's, images the hardware
/// classifies correctly, images the golden model classifies correctly: counted
/// here from the raw registers, not from the report's own tallies.
fn tally(w: &Workload, report: &ImpairedReport) -> (usize, usize, usize) {
    let (mut exact, mut correct, mut golden_correct) = (0, 0, 0);
    for (i, image) in report.images.iter().enumerate() {
        let (logits, g_ok) = golden(w, i);
        let done = image.run.status & 0b110 == 0b010;
        exact += usize::from(done && image.run.logits == logits);
        correct +=
            usize::from(done && argmax(&image.run.logits) == Some(usize::from(w.test.labels[i])));
        golden_correct += usize::from(g_ok);
    }
    (exact, correct, golden_correct)
}

/// Runs a calibrated scenario on `n` images and checks it against the golden
/// model and the link's impairments.
fn calibrated_equals_golden(cores: u32, skew: &str, samples: i64, t: f64, n: usize) {
    let w = workload();
    let opts = options(cores, skew, t, true, Engine::Native);
    let report = run_impaired(&w, n, &opts, &zcu111()).expect("the impaired run");
    let cal = report.calibration.as_ref().expect("a calibration ran");
    assert!(cal.succeeded(), "cal_status {:#x}", cal.status);
    assert!(report.streams.clean(), "{}", report.streams);
    assert_eq!(cal.cores.len(), cores as usize);
    for (c, core) in cal.cores.iter().enumerate() {
        assert_eq!(core.measured_skew(), samples, "core {c}: measured skew");
        assert_eq!(core.fail_reason, 0, "core {c}");
        assert_eq!(
            core.settings,
            CalibrationRun::expected_settings(samples, t),
            "core {c}: programmed settings"
        );
    }
    let (exact, correct, golden_correct) = tally(&w, &report);
    println!(
        "{cores} cores, skew {skew}, t {t}: calibrated in {} cycles; {exact}/{n} exact, accuracy {correct}/{n} (golden {golden_correct}/{n}), cycles {:?}",
        cal.cycles,
        report.cycles_range()
    );
    assert_eq!(exact, n, "calibrated logits equal the golden model's");
    assert_eq!(
        correct, golden_correct,
        "calibrated accuracy = golden accuracy"
    );
    assert_eq!(report.exact(), exact, "the report's own count");
    assert_eq!(report.correct(), correct);
    assert_eq!(report.golden_correct(), golden_correct);
}

#[test]
fn calibration_makes_every_shipped_image_exact_on_one_core() {
    calibrated_equals_golden(1, "3,5", 53, 0.6, workload().test.images.len());
}

#[test]
fn calibration_makes_images_exact_on_two_and_four_cores_and_either_skew_sign() {
    calibrated_equals_golden(2, "3,5", 53, 0.6, 60);
    calibrated_equals_golden(4, "-3,5", -53, 0.6, 60);
    calibrated_equals_golden(1, "-0,7", -7, 0.35, 30);
}

#[test]
fn without_calibration_the_impairments_break_every_image_and_accuracy_falls() {
    let w = workload();
    let n = 60;
    for (skew, t) in [("3,5", 0.6), ("0,5", 1.0), ("-1,0", 1.0), ("0,0", 0.6)] {
        let report = run_impaired(
            &w,
            n,
            &options(1, skew, t, false, Engine::Native),
            &zcu111(),
        )
        .expect("the impaired run");
        assert!(report.calibration.is_none());
        let (exact, correct, golden_correct) = tally(&w, &report);
        println!("skew {skew}, t {t}, uncalibrated: {exact}/{n} exact, accuracy {correct}/{n} (golden {golden_correct}/{n}), failed {}", report.failed());
        assert_eq!(
            exact, 0,
            "skew {skew}, t {t}: an uncalibrated impaired link gave exact logits"
        );
        assert_eq!(report.exact(), 0);
        // A skew garbles the products (or the preamble lock): accuracy falls far.
        // A loss alone scales every product alike, so only the logits change.
        if skew != "0,0" {
            assert!(
                correct + 20 < golden_correct,
                "skew {skew}: accuracy {correct} vs golden {golden_correct}"
            );
        }
    }
}

#[test]
fn a_perfect_link_is_exact_with_and_without_calibration() {
    let w = workload();
    for calibrate in [false, true] {
        let report = run_impaired(
            &w,
            20,
            &options(1, "0,0", 1.0, calibrate, Engine::Native),
            &zcu111(),
        )
        .expect("the run");
        assert_eq!(tally(&w, &report).0, 20, "calibrate {calibrate}");
        if let Some(cal) = &report.calibration {
            assert_eq!(cal.cores[0].settings, [0x0100, 0, 0, 0, 0]);
        }
    }
}

#[test]
fn a_skew_at_the_reach_calibrates_either_way() {
    // 63 cycles and 15 samples = 1023 samples: the delay and shift registers'
    // largest setting, the last skew the calibrator must accept.
    calibrated_equals_golden(1, "63,15", 1023, 0.8, 10);
    calibrated_equals_golden(1, "-63,15", -1023, 0.8, 10);
}

#[test]
fn a_skew_beyond_reach_fails_the_calibration_and_loads_nothing() {
    let w = workload();
    // 64 cycles = 1024 samples: one past the delay/shift registers' reach.
    let report = run_impaired(
        &w,
        2,
        &options(2, "64,0", 0.8, true, Engine::Native),
        &zcu111(),
    )
    .expect("a failed calibration is a result, not an error");
    let cal = report.calibration.as_ref().expect("a calibration ran");
    assert!(!cal.succeeded(), "cal_status {:#x}", cal.status);
    for core in &cal.cores {
        assert_eq!(core.fail_reason, SKEW_BEYOND_REACH);
        assert_eq!(core.measured_skew(), 1024);
        assert_eq!(core.settings, [0x0100, 0, 0, 0, 0], "nothing loaded");
    }
    assert_eq!(tally(&w, &report).0, 0);
}

#[test]
fn native_and_verilator_agree_on_a_calibrated_impaired_run() {
    let w = workload();
    let n = 8;
    let report = run_impaired(
        &w,
        n,
        &options(2, "3,5", 0.6, true, Engine::Both),
        &zcu111(),
    )
    .expect("both engines agree");
    assert_eq!(report.engines.len(), 2);
    assert_eq!(tally(&w, &report).0, n);
}

#[test]
fn bad_scenarios_are_errors_naming_the_parameter() {
    let w = workload();
    let board = zcu111();
    let err = |o: &ImpairedOptions, n| {
        format!(
            "{:#}",
            run_impaired(&w, n, o, &board).expect_err("an error")
        )
    };
    let e = err(&options(5, "3,5", 0.6, true, Engine::Native), 1);
    assert!(e.contains("cores") && e.contains("1..=4"), "{e}");
    let e = err(&options(0, "3,5", 0.6, true, Engine::Native), 1);
    assert!(e.contains("cores"), "{e}");
    let e = err(&options(1, "3,5", 0.6, true, Engine::Native), 0);
    assert!(e.contains("images"), "{e}");
    let e = err(&options(1, "3,5", 0.6, true, Engine::Native), 301);
    assert!(e.contains("300"), "{e}");
    let rfsoc = Board::named("rfsoc4x2").expect("the rfsoc4x2 board file");
    let e = format!(
        "{:#}",
        run_impaired(&w, 1, &options(1, "3,5", 0.6, true, Engine::Native), &rfsoc)
            .expect_err("an 8-sample ADC")
    );
    assert!(e.contains("rfsoc4x2") && e.contains("ADC"), "{e}");
    assert_eq!(Skew::default().samples(), 0);
}
