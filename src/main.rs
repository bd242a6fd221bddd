//! The `wirespeed` command line: parses arguments, then calls the crates.

use anyhow::Result;
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use wirespeed::catalog;

/// wirespeed: generate and simulate ML-network datapaths.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List the blocks that can be generated, with their parameters and defaults.
    List,
    /// Write a block's Verilog and manifest into a directory.
    Gen {
        /// Block name (see `wirespeed list`).
        block: String,
        /// A parameter, as key=value (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
        /// Target board (same as `--set board=NAME`; blocks with a `board` parameter).
        #[arg(long = "board", value_name = "NAME")]
        board: Option<String>,
        /// Output directory (created if missing).
        #[arg(short = 'o', long = "out", value_name = "DIR")]
        out: PathBuf,
    },
    /// Synthesize a block with Yosys for its board's part and print the resources.
    Synth(wirespeed::synth::SynthArgs),
    /// Simulate a system (see `wirespeed sim panama --help`, `wirespeed sim lightning --help`).
    #[command(subcommand)]
    Sim(SimCommand),
}

#[derive(Subcommand)]
enum SimCommand {
    /// PANAMA: traffic through the accelerator, checked against the golden model.
    Panama(wirespeed::sim_panama::PanamaArgs),
    /// The Lightning datapath with the photonic-core model on the shipped MLP.
    Lightning(wirespeed::lightning_sim::LightningArgs),
}

fn list() {
    for block in catalog::blocks() {
        println!("{:<16} {}", block.name, block.summary);
        for p in block.params {
            println!("    {:<16} {}; default {}", p.name, p.help, p.default);
        }
    }
}

fn generate(
    block: &str,
    sets: &[String],
    board: Option<&str>,
    out: &std::path::Path,
) -> Result<()> {
    let (spec, settings) = catalog::find_with_settings(block, sets, board)?;
    let generated = spec.build(&settings)?;
    let design = gen::emit(&generated.module)?;
    let mut manifest =
        gen::Manifest::new(&generated.module, &design).with_parameter("block", block);
    for (k, v) in settings.as_map() {
        manifest = manifest.with_parameter(k, v);
    }
    let mut files = generated.extra_files.clone();
    if let Some(t) = &generated.board {
        files.extend(gen::board::board_files(
            &t.board,
            &manifest,
            &t.clocks,
            t.registers.as_ref(),
        )?);
    }
    let written = gen::board::write_board_design(out, &design, &manifest, &files)?;
    println!(
        "wrote {} ({} Verilog files, top `{}`) to {}",
        block,
        design.files.len(),
        design.top,
        out.display()
    );
    for path in written {
        println!("  {}", path.display());
    }
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::List => {
            list();
            Ok(())
        }
        Command::Gen {
            block,
            sets,
            board,
            out,
        } => generate(block, sets, board.as_deref(), out),
        Command::Synth(args) => wirespeed::synth::run(args),
        Command::Sim(SimCommand::Panama(args)) => wirespeed::sim_panama::run(args),
        Command::Sim(SimCommand::Lightning(args)) => wirespeed::lightning_sim::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
