//! `wirespeed sim lightning`: the shipped digits MLP's test images through the
//! generated Lightning datapath in a closed loop with the photonic-core model, on
//! the native simulator on `--cores` photonic cores (each with its own link and
//! independently seeded noise); accuracy without noise and with the testbed's
//! noise, cycles and time per image, and the timeline of the first image.
//!
//! With `--skew`, `--loss` or `--calibrate` the images run instead through the
//! board top (`hdl::lightning::top`, driven through AXI-Lite) over impaired,
//! noise-free links ([`testbench::lightning::impaired`]), optionally after the
//! top's self-calibration.

use std::path::{Path, PathBuf};

use super::EngineArg;
use anyhow::{bail, Result};
use clap::Args;
use hdl::ir::HdlError;
use testbench::engine::{
    board_clocks, engine_only_report, repeat_report, speed_report, verilator_options, EngineTime,
    Setting,
};
use testbench::lightning::arith::Contract;
use testbench::lightning::impaired::{
    board_cores, calibration_fail_text, run_impaired, CalibrationReport, ImpairedOptions,
    ImpairedReport, Skew, Transmission,
};
use testbench::lightning::link::MAX_LATENCY_CYCLES;
use testbench::lightning::model_files::{data_dir, load_workload, Workload};
use testbench::lightning::photonic::TESTBED_SIGMA;
use testbench::lightning::test_set::{TestSet, TestSetOptions};

/// The board whose clocks the simulation runs at.
pub const BOARD: &str = "zcu111";

/// The board clock role the datapath runs at: the DAC fabric clock (the ADC
/// side is crossed into it outside the core).
pub const DATAPATH_ROLE: &str = "dac";

/// The datapath's clock domains and the board clock roles they run at.
pub const CLOCK_ROLES: &[(&str, &str)] = &[("clk", DATAPATH_ROLE)];

/// The datapath clock of `board` in MHz, from its board file: the clock that
/// turns cycle counts into time.
fn datapath_mhz(board: &gen::board::Board) -> Result<f64> {
    match board.clock(DATAPATH_ROLE) {
        Some(clock) => Ok(clock.mhz),
        None => bail!(
            "board {} has no `{DATAPATH_ROLE}` clock for the Lightning datapath (it has {})",
            board.name,
            board.roles().join(", ")
        ),
    }
}

/// Options of `wirespeed sim lightning`.
#[derive(Args, Debug, Clone)]
pub struct LightningArgs {
    /// Workload directory (weights.json, test_images.bin, test_labels.bin,
    /// reference.json); default: the shipped digits MLP.
    #[arg(long, value_name = "DIR")]
    pub data: Option<PathBuf>,
    /// Run only the first N test images.
    #[arg(long, value_name = "N")]
    pub images: Option<usize>,
    /// Photonic latency in whole fabric cycles.
    #[arg(long, default_value_t = 10)]
    pub latency: usize,
    /// Photonic intra-cycle sample shift (0-15).
    #[arg(long, default_value_t = 3)]
    pub shift: usize,
    /// Seed of the photonic noise (core c draws from seed + c); impaired runs
    /// are noise-free and refuse it.
    #[arg(long, default_value_t = 1, conflicts_with_all = ["skew", "loss", "calibrate"])]
    pub seed: u64,
    /// Photonic cores (1-8; at most the smallest layer's outputs).
    #[arg(long, default_value_t = 1)]
    pub cores: u32,
    /// Write a VCD of the first image's noise-free run to this file, time in ps at the
    /// ZCU111 DAC fabric clock (3946 ps per cycle); with `--engine both`, Verilator's
    /// goes beside it as `<name>.verilator.vcd` (Verilator is then built with tracing).
    #[arg(long, value_name = "FILE")]
    pub vcd: Option<PathBuf>,
    /// Simulation engine (`both`: the same images on each, results must agree).
    #[arg(long, value_enum, default_value_t = EngineArg::Native)]
    pub engine: EngineArg,
    /// Run the images N times, every engine of --engine once per round on a fresh
    /// model, and print the median and range of each engine's speed and of its
    /// per-round ratio to Verilator's (the rest of the report is the first
    /// round's; later rounds must agree with it). Not with the board top's runs.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000), conflicts_with_all = ["skew", "loss", "calibrate"])]
    pub repeat: u32,
    /// Write a perf map of the native engine's compiled code to
    /// `/tmp/perf-<pid>.map` (the path is printed), so that `perf report` names its
    /// functions instead of showing bare addresses (see `scripts/engine-time`).
    #[arg(long)]
    pub perf_map: bool,
    /// Arithmetic contract of the datapath and the golden model: wirespeed's, or
    /// the authors' released RTL's (16-bit wrapping accumulator, per-layer
    /// data-dependent normalization).
    #[arg(long, value_enum, default_value_t = ArithArg::Wirespeed)]
    pub arith: ArithArg,
    /// Skew between the modulators, CYCLES,SAMPLES (SAMPLES 0-15): the weight
    /// modulator sees its DAC's samples 16·CYCLES + SAMPLES samples after the
    /// activation modulator sees its DAC's; a negative CYCLES (`-3,5`, `-0,5`)
    /// makes the activation modulator the late one. Runs through the board top.
    #[arg(long, value_name = "CYCLES,SAMPLES", allow_hyphen_values = true)]
    pub skew: Option<Skew>,
    /// Optical transmission in (0, 1]: the fraction of the light that reaches
    /// the ADC (0.6 = 40 % lost). Runs through the board top.
    #[arg(long, value_name = "FACTOR")]
    pub loss: Option<Transmission>,
    /// Run the board top's self-calibration before the images (it measures the
    /// skew and the loss and programs the DAC delays, shifts and the loss
    /// compensation); an error if it fails or any image's logits then differ
    /// from the golden model's.
    #[arg(long)]
    pub calibrate: bool,
}

impl LightningArgs {
    /// True if the run goes through the board top over impaired links.
    pub fn impaired(&self) -> bool {
        self.skew.is_some() || self.loss.is_some() || self.calibrate
    }
}

/// The arithmetic contract on the command line.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArithArg {
    /// wirespeed's contract (saturating accumulator, fixed per-layer shifts).
    Wirespeed,
    /// The authors' released RTL's contract.
    ReleasedRtl,
}

impl From<ArithArg> for Contract {
    fn from(arg: ArithArg) -> Contract {
        match arg {
            ArithArg::Wirespeed => Contract::Wirespeed,
            ArithArg::ReleasedRtl => Contract::ReleasedRtl,
        }
    }
}

fn percent(correct: usize, total: usize) -> f64 {
    100.0 * correct as f64 / total.max(1) as f64
}

/// Runs the simulation and prints the report; an error (exit code ≠ 0) if the
/// noise-free logits differ from the golden model's on any image.
pub fn run(args: &LightningArgs) -> Result<()> {
    super::start_perf_map(args.perf_map, args.engine)?;
    if args.shift > 15 {
        bail!("--shift {}: must be 0..=15 samples", args.shift);
    }
    if args.latency > MAX_LATENCY_CYCLES {
        bail!(
            "--latency {}: at most {MAX_LATENCY_CYCLES} cycles (the link model holds every sample in flight; a latency past the detectors' timeout already fails with no lock)",
            args.latency
        );
    }
    if args.impaired() && args.vcd.is_some() {
        bail!("--vcd traces the datapath's closed loop; it cannot be combined with --skew, --loss or --calibrate (the board top's runs)");
    }
    super::check_trace_path(args.vcd.as_deref())?;
    let dir = args.data.clone().unwrap_or_else(data_dir);
    let workload = load_workload(&dir)?;
    let available = workload.test.images.len();
    let n = args.images.unwrap_or(available);
    if n == 0 || n > available {
        bail!(
            "--images {n}: the workload in {} has {available} test images; give 1..={available}",
            dir.display()
        );
    }
    if args.impaired() {
        run_impaired_top(args, &workload, n, &dir)
    } else {
        run_closed_loop(args, &workload, n, &dir)
    }
}

/// The datapath's closed loop with the photonic-core model, noise 0 and σ.
fn run_closed_loop(args: &LightningArgs, workload: &Workload, n: usize, dir: &Path) -> Result<()> {
    let net = &workload.model.network;
    let acc = workload.model.acc_width;
    let options = TestSetOptions {
        cores: args.cores,
        latency: args.latency,
        shift: args.shift,
        seed: args.seed,
        vcd: args.vcd.clone(),
        engine: args.engine.into(),
        arith: args.arith.into(),
        repeat: args.repeat,
    };
    let test_set =
        TestSet::new(workload, n, options).map_err(|e| blame_cores_flag(e, args.cores))?;
    println!(
        "Lightning datapath, {} (acc {} bits), {n} test images from {}",
        shape(net.layers().iter().map(|l| l.outputs()), net.inputs()),
        acc.bits(),
        dir.display()
    );
    if args.arith == ArithArg::ReleasedRtl {
        println!("arithmetic contract: released-rtl (16-bit wrapping accumulator)");
    }
    println!(
        "photonic cores: {}, each latency {} cycles, shift {} samples",
        args.cores, args.latency, args.shift
    );
    let board = gen::board::Board::named(BOARD)?;
    let clocks = board_clocks(&board, CLOCK_ROLES)?;
    let mhz = datapath_mhz(&board)?;
    let run = test_set.run(&clocks)?;
    let Some(first) = run.engines.first() else {
        bail!("no engine ran");
    };
    let cycles: u64 = first
        .exact
        .runs
        .iter()
        .chain(&first.noisy.runs)
        .map(|r| r.cycles)
        .sum();
    let wall = first.time.wall.as_secs_f64();
    println!(
        "inference: {cycles} cycles ({:.1} µs at {mhz} MHz) in {wall:.2} s on {}: {:.0} cycles/s",
        cycles as f64 / mhz,
        first.time.engine,
        cycles as f64 / wall.max(1e-9)
    );
    if run.engines.len() > 1 {
        let times: Vec<EngineTime> = run.engines.iter().map(|e| e.time).collect();
        let setting = Setting::of(&verilator_options(args.vcd.is_some()), &times);
        let identical = format!("logits, cycles and timelines of {} runs", 2 * n);
        println!("{}", speed_report(cycles, &identical, &times, &setting));
    }
    if let Some(report) = repeat_report(cycles, &run.rounds) {
        println!("{report}");
    }
    if let Some(report) = engine_only_report(cycles, &run.engine_only) {
        println!("{report}");
    }
    let (exact, noisy, mismatches) = (&first.exact, &first.noisy, run.mismatches);
    let (exact_label, noisy_label) = (
        "accuracy, noise 0:".to_string(),
        format!("accuracy, sigma {TESTBED_SIGMA}:"),
    );
    let w = exact_label.len().max(noisy_label.len());
    println!(
        "{exact_label:<w$} {:.2}% ({}/{n}); logits equal the golden model's on {}/{n} images",
        percent(exact.correct, n),
        exact.correct,
        n - mismatches
    );
    println!(
        "{noisy_label:<w$} {:.2}% ({}/{n}), seed {}",
        percent(noisy.correct, n),
        noisy.correct,
        args.seed
    );
    if let Some(first) = exact.runs.first() {
        let us = first.cycles as f64 / mhz;
        println!(
            "cycles per image: {} ({us:.2} µs at {mhz} MHz); DAC start at cycle {}, ADC window open at cycle {}",
            first.cycles, first.dac_start_cycle, first.window_open_cycle
        );
        println!("timeline of image 0 (cycles after start):");
        for e in &first.timeline {
            println!("  {:>6}  {}", e.cycle, e.what);
        }
    }
    if let Some(path) = &args.vcd {
        println!("VCD of image 0: {}", path.display());
    }
    if mismatches > 0 {
        bail!("noise-free logits disagree with the golden model on {mismatches} of {n} images");
    }
    Ok(())
}

/// `e`, prefixed with `--cores N` when the datapath's generator rejected its
/// `cores` parameter, so that the error names the flag the user gave.
fn blame_cores_flag(e: anyhow::Error, cores: u32) -> anyhow::Error {
    let about_cores = e.chain().any(|cause| {
        cause
            .downcast_ref::<HdlError>()
            .is_some_and(|h| h.signal.as_deref() == Some("cores"))
    });
    match about_cores {
        true => e.context(format!("--cores {cores}")),
        false => e,
    }
}

/// The board top over impaired links: calibration (if asked), accuracy against
/// the golden model's, exact images; an error if `--calibrate` was given and it
/// failed or left any image's logits different from the golden model's.
fn run_impaired_top(args: &LightningArgs, workload: &Workload, n: usize, dir: &Path) -> Result<()> {
    let net = &workload.model.network;
    let options = ImpairedOptions {
        cores: args.cores,
        latency: args.latency,
        shift: args.shift,
        skew: args.skew.unwrap_or_default(),
        transmission: args.loss.unwrap_or_default(),
        arith: args.arith.into(),
        calibrate: args.calibrate,
        engine: args.engine.into(),
    };
    let board = gen::board::Board::named(BOARD)?;
    let limit = board_cores(&board);
    let mhz = datapath_mhz(&board)?;
    if args.cores == 0 || args.cores > limit {
        bail!(
            "--cores {}: the board top on {BOARD} has converter channels for 1..={limit} photonic cores (a core needs two DACs and one ADC)",
            args.cores
        );
    }
    println!(
        "Lightning board top ({BOARD}, driven through AXI-Lite), {} (acc {} bits), {n} test images from {}",
        shape(net.layers().iter().map(|l| l.outputs()), net.inputs()),
        workload.model.acc_width.bits(),
        dir.display()
    );
    if args.arith == ArithArg::ReleasedRtl {
        println!("arithmetic contract: released-rtl (16-bit wrapping accumulator)");
    }
    println!(
        "impaired links: skew {}, transmission {}; calibration: {}",
        options.skew,
        options.transmission.factor(),
        if args.calibrate { "yes" } else { "no" }
    );
    println!(
        "photonic cores: {}, each latency {} cycles, shift {} samples, noise-free",
        args.cores, args.latency, args.shift
    );
    let report = run_impaired(workload, n, &options, &board)?;
    if let Some(cal) = &report.calibration {
        print_calibration(cal, options.skew);
    }
    print_impaired(&report, n, mhz);
    if !report.streams.clean() {
        bail!(
            "the top's converter streams broke what the RF Data Converter and the host take: {}",
            report.streams
        );
    }
    let exact = report.exact();
    if let Some(cal) = report.calibration.as_ref().filter(|c| !c.succeeded()) {
        let reasons: Vec<String> = cal
            .cores
            .iter()
            .enumerate()
            .filter(|(_, core)| core.fail_reason != 0)
            .map(|(c, core)| format!("core {c}: {}", calibration_fail_text(core.fail_reason)))
            .collect();
        bail!(
            "calibration failed (cal_status {:#x}){}{}",
            cal.status,
            if reasons.is_empty() { "" } else { ": " },
            reasons.join(", ")
        );
    }
    if args.calibrate && exact < n {
        let hint = if args.arith == ArithArg::ReleasedRtl && options.transmission.factor() < 1.0 {
            " (the released RTL's loss gain is an integer on the truncated 8-bit product: it cannot undo a transmission below 1 exactly)"
        } else {
            ""
        };
        bail!(
            "after calibration the logits differ from the golden model's on {} of {n} images{hint}",
            n - exact
        );
    }
    Ok(())
}

/// The calibration's status and, per core, what it measured and loaded.
fn print_calibration(cal: &CalibrationReport, skew: Skew) {
    let verdict = if cal.succeeded() {
        "succeeded"
    } else {
        "FAILED"
    };
    println!(
        "calibration: {verdict} in {} DAC cycles (cal_status {:#x})",
        cal.cycles, cal.status
    );
    for (c, core) in cal.cores.iter().enumerate() {
        let [loss, act_delay, act_shift, w_delay, w_shift] = core.settings;
        println!(
            "  core {c}: arrivals activation {} weight {} samples, skew {} samples (link: {}); level {}, gain {:#06x}",
            core.activation_arrival,
            core.weight_arrival,
            core.measured_skew(),
            skew.samples(),
            core.level,
            core.gain
        );
        if core.fail_reason != 0 {
            println!(
                "    failed: reason {} ({})",
                core.fail_reason,
                calibration_fail_text(core.fail_reason)
            );
        }
        println!(
            "    registers: optical_loss{c} = {loss:#06x}, dac{}_delay/shift = {act_delay}/{act_shift}, dac{}_delay/shift = {w_delay}/{w_shift}",
            2 * c,
            2 * c + 1
        );
    }
}

/// Accuracy, exact images, failures, cycles (and their time at `mhz`) and the
/// engines' times.
fn print_impaired(report: &ImpairedReport, n: usize, mhz: f64) {
    let (hw, golden) = (report.correct(), report.golden_correct());
    let drop = percent(golden, n) - percent(hw, n);
    let lower = if hw < golden {
        format!(": {drop:.2} points below the golden model")
    } else {
        String::new()
    };
    println!(
        "accuracy: hardware {:.2}% ({hw}/{n}), golden model {:.2}% ({golden}/{n}){lower}",
        percent(hw, n),
        percent(golden, n)
    );
    println!(
        "logits equal the golden model's on {}/{n} images",
        report.exact()
    );
    for (reason, count, text) in report.failures() {
        println!("inference failed on {count}/{n} images: fail_reason {reason} ({text})");
    }
    if let Some((min, max)) = report.cycles_range() {
        let us = f64::from(max) / mhz;
        let range = if min == max {
            min.to_string()
        } else {
            format!("{min}-{max}")
        };
        println!("cycles per image: {range} ({us:.2} µs at {mhz} MHz)");
    }
    for t in &report.engines {
        println!(
            "engine {}: build {:.2} s, {:.2} s for {}{} ({:.1} ms per image)",
            t.engine.name(),
            t.build.as_secs_f64(),
            t.wall.as_secs_f64(),
            if report.calibration.is_some() {
                "the calibration and "
            } else {
                ""
            },
            crate::plural(n, "image"),
            1e3 * t.wall.as_secs_f64() / n as f64
        );
    }
    if report.streams.clean() {
        println!("converter streams: every lit DAC sample in the bus format, zero samples without tvalid, no answer beat outside an inference");
    }
    if report.engines.len() > 1 {
        println!("engines: identical calibration, logits, counters and converter streams");
    }
}

fn shape(outputs: impl Iterator<Item = usize>, inputs: usize) -> String {
    std::iter::once(inputs)
        .chain(outputs)
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join("-")
}
