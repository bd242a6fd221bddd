//! `wirespeed sim lightning`: the shipped digits MLP's test images through the
//! generated Lightning datapath in a closed loop with the photonic-core model, on
//! the native simulator on `--cores` photonic cores (each with its own link and
//! independently seeded noise); accuracy without noise and with the testbed's
//! noise, cycles and time per image, and the timeline of the first image.

use std::path::PathBuf;

use super::EngineArg;
use anyhow::{bail, Context, Result};
use clap::Args;
use hdl::lightning::datapath::{datapath, fail_reason_text};
use std::time::Instant;
use testbench::dut::Dut;
use testbench::engine::{board_clocks, speed_line, Engine};
use testbench::lightning::arith::{argmax, OpticalLoss};
use testbench::lightning::closed_loop::{
    hardware_config, run_image, LoopControls, LoopRun, PortShape,
};
use testbench::lightning::golden::{infer, DatapathConfig};
use testbench::lightning::link::PhotonicLink;
use testbench::lightning::model_files::{data_dir, load_workload};
use testbench::lightning::photonic::{NoisyCore, TESTBED_SIGMA};

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
}

/// One pass over the test set with photonic noise `sigma`.
struct Pass {
    runs: Vec<LoopRun>,
    correct: usize,
}

fn pass(
    dut: &mut dyn Dut,
    images: &[Vec<u8>],
    labels: &[u8],
    shape: PortShape,
    sigma: f64,
    args: &LightningArgs,
) -> Result<Pass> {
    let mut links: Vec<_> = (0..u64::from(args.cores))
        .map(|c| {
            PhotonicLink::new(
                NoisyCore::new(sigma, 1.0, args.seed.wrapping_add(c)),
                args.latency,
                args.shift,
            )
        })
        .collect();
    let controls = LoopControls::default();
    let mut runs = Vec::new();
    let mut correct = 0;
    for (i, (image, &label)) in images.iter().zip(labels).enumerate() {
        let vcd = args.vcd.as_deref().filter(|_| i == 0 && sigma == 0.0);
        if let Some(path) = vcd {
            dut.trace_open(path)
                .with_context(|| format!("{}: cannot write the VCD", path.display()))?;
        }
        let run = run_image(dut, &mut links, image, shape.clone(), &controls)?;
        if vcd.is_some() {
            dut.trace_close()?;
        }
        if run.failed {
            bail!(
                "image {i}: the datapath failed after {} cycles: {} (fail_reason {})",
                run.cycles,
                fail_reason_text(run.fail_reason),
                run.fail_reason
            );
        }
        if !run.done {
            bail!(
                "image {i}: the datapath did not finish in {} cycles",
                run.cycles
            );
        }
        correct += usize::from(argmax(&run.logits) == Some(usize::from(label)));
        runs.push(run);
    }
    Ok(Pass { runs, correct })
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
    let images = &workload.test.images[..n];
    let labels = &workload.test.labels[..n];
    let hw = hardware_config(net, acc, args.cores);
    let module = datapath(&hw)?;
    let ports = PortShape::of(&hw);
    println!(
        "Lightning datapath, {} (acc {} bits), {n} test images from {}",
        shape(net.layers().iter().map(|l| l.outputs()), net.inputs()),
        acc.bits(),
        dir.display()
    );
    println!(
        "photonic cores: {}, each latency {} cycles, shift {} samples",
        args.cores, args.latency, args.shift
    );

    let board = gen::board::Board::named(BOARD)?;
    let clocks = board_clocks(&board, CLOCK_ROLES)?;
    let mut results = Vec::new();
    for (k, &engine) in Engine::from(args.engine).engines().iter().enumerate() {
        let (mut dut, build) = engine.build(&module, args.vcd.is_some(), &clocks)?;
        dut.reset(2);
        // A second engine's VCD goes beside the first's.
        let mut engine_args = args.clone();
        if k > 0 {
            engine_args.vcd = args.vcd.as_ref().map(|p| p.with_extension("verilator.vcd"));
        }
        let started = Instant::now();
        let exact = pass(
            dut.as_mut(),
            images,
            labels,
            ports.clone(),
            0.0,
            &engine_args,
        )?;
        let noisy = pass(
            dut.as_mut(),
            images,
            labels,
            ports.clone(),
            TESTBED_SIGMA,
            &engine_args,
        )?;
        results.push((exact, noisy, started.elapsed(), build));
    }
    if let [(exact, noisy, wall, build), (v_exact, v_noisy, v_wall, v_build)] = &results[..] {
        if exact.runs != v_exact.runs || noisy.runs != v_noisy.runs {
            bail!("Verilator's logits, cycles or timelines differ from the native simulator's");
        }
        let cycles: u64 = exact.runs.iter().chain(&noisy.runs).map(|r| r.cycles).sum();
        println!(
            "{} (logits, cycles and timelines of {} runs)",
            speed_line(cycles, (*wall, *build), (*v_wall, *v_build)),
            2 * n
        );
    }
    let Some((exact, noisy, _, _)) = results.into_iter().next() else {
        bail!("no engine ran");
    };
    let golden_cfg = DatapathConfig {
        acc_width: acc,
        optical_loss: OpticalLoss::UNITY,
    };
    let mut mismatches = 0;
    for (image, run) in images.iter().zip(&exact.runs) {
        let g = infer(net, image, &golden_cfg)?;
        mismatches += usize::from(g.logits != run.logits);
    }

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
