//! `wirespeed sim lightning`: the shipped digits MLP's test images through the
//! generated Lightning datapath in a closed loop with the photonic-core model, on
//! the native simulator on `--cores` photonic cores (each with its own link and
//! independently seeded noise); accuracy without noise and with the testbed's
//! noise, cycles and time per image, and the timeline of the first image.

use std::path::PathBuf;

use super::EngineArg;
use anyhow::{bail, Result};
use clap::Args;
use testbench::engine::{board_clocks, speed_line};
use testbench::lightning::arith::Contract;
use testbench::lightning::model_files::{data_dir, load_workload};
use testbench::lightning::photonic::TESTBED_SIGMA;
use testbench::lightning::test_set::{TestSet, TestSetOptions};

/// The ZCU111 fabric clock of Lightning's build, MHz.
pub const BOARD_CLOCK_MHZ: f64 = 253.44;

/// The board whose clocks the simulation runs at.
pub const BOARD: &str = "zcu111";

/// The datapath's clock domains and the board clock roles they run at: the
/// datapath core runs on the DAC fabric clock (the ADC side is crossed into it
/// outside the core).
pub const CLOCK_ROLES: &[(&str, &str)] = &[("clk", "dac")];

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
    /// Seed of the photonic noise (core c draws from seed + c).
    #[arg(long, default_value_t = 1)]
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
    /// Arithmetic contract of the datapath and the golden model: wirespeed's, or
    /// the authors' released RTL's (16-bit wrapping accumulator, per-layer
    /// data-dependent normalization).
    #[arg(long, value_enum, default_value_t = ArithArg::Wirespeed)]
    pub arith: ArithArg,
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
    if args.shift > 15 {
        bail!("--shift {}: must be 0..=15 samples", args.shift);
    }
    let dir = args.data.clone().unwrap_or_else(data_dir);
    let workload = load_workload(&dir)?;
    let net = &workload.model.network;
    let acc = workload.model.acc_width;
    let available = workload.test.images.len();
    let n = args.images.unwrap_or(available);
    if n == 0 || n > available {
        bail!(
            "--images {n}: the workload in {} has {available} test images; give 1..={available}",
            dir.display()
        );
    }
    let options = TestSetOptions {
        cores: args.cores,
        latency: args.latency,
        shift: args.shift,
        seed: args.seed,
        vcd: args.vcd.clone(),
        engine: args.engine.into(),
        arith: args.arith.into(),
    };
    let test_set = TestSet::new(&workload, n, options)?;
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
    let run = test_set.run(&clocks)?;
    if let [native, verilator] = &run.engines[..] {
        let cycles: u64 = native
            .exact
            .runs
            .iter()
            .chain(&native.noisy.runs)
            .map(|r| r.cycles)
            .sum();
        println!(
            "{} (logits, cycles and timelines of {} runs)",
            speed_line(
                cycles,
                (native.wall, native.build),
                (verilator.wall, verilator.build)
            ),
            2 * n
        );
    }
    let Some(first) = run.engines.first() else {
        bail!("no engine ran");
    };
    let (exact, noisy, mismatches) = (&first.exact, &first.noisy, run.mismatches);
    println!(
        "accuracy, noise 0:        {:.2}% ({}/{n}); logits equal the golden model's on {}/{n} images",
        percent(exact.correct, n),
        exact.correct,
        n - mismatches
    );
    println!(
        "accuracy, sigma {TESTBED_SIGMA}:  {:.2}% ({}/{n}), seed {}",
        percent(noisy.correct, n),
        noisy.correct,
        args.seed
    );
    if let Some(first) = exact.runs.first() {
        let us = first.cycles as f64 / BOARD_CLOCK_MHZ;
        println!(
            "cycles per image: {} ({us:.2} us at {BOARD_CLOCK_MHZ} MHz); DAC start at cycle {}, ADC window open at cycle {}",
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

fn shape(outputs: impl Iterator<Item = usize>, inputs: usize) -> String {
    std::iter::once(inputs)
        .chain(outputs)
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join("-")
}
