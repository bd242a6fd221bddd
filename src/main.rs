//! The `wirespeed` command line: parses arguments, then calls the crates.

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use wirespeed::cmd;

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
        /// Name of the top module, as the project that instantiates it expects (for
        /// example `output_port_lookup`); default: the block's stable name.
        #[arg(long = "top", value_name = "NAME")]
        top: Option<String>,
        /// Output directory (created if missing). It must not hold another design's
        /// generated files (see `--force`) nor unrelated files named like ours.
        #[arg(short = 'o', long = "out", value_name = "DIR")]
        out: PathBuf,
        /// Replace another design's files in DIR: exactly those its manifest.json
        /// lists, nothing else.
        #[arg(long)]
        force: bool,
        /// Leave out the `// @[file.rs:line]` source locators that point each wire,
        /// register and instance back to the generator line that built it.
        #[arg(long)]
        no_locators: bool,
    },
    /// Synthesize a block with Yosys for its board's part and print the resources.
    Synth(wirespeed::cmd::synth::SynthArgs),
    /// Simulate a system (see `wirespeed sim panama --help`, `wirespeed sim lightning --help`).
    #[command(subcommand)]
    Sim(SimCommand),
}

#[derive(Subcommand)]
enum SimCommand {
    /// PANAMA: traffic through the accelerator, checked against the golden model.
    Panama(wirespeed::cmd::sim_panama::PanamaArgs),
    /// The Lightning datapath with the photonic-core model on the shipped MLP.
    Lightning(wirespeed::cmd::sim_lightning::LightningArgs),
}

fn main() -> ExitCode {
    wirespeed::interrupt::default_sigpipe();
    let cli = Cli::parse();
    // `gen` and `synth` clean up after Ctrl-C; the other commands keep the default
    // (the process ends at once).
    if matches!(cli.command, Command::Gen { .. } | Command::Synth(_)) {
        if let Err(e) = wirespeed::interrupt::install() {
            eprintln!("error: {}", wirespeed::error_line(&e));
            return ExitCode::FAILURE;
        }
    }
    let result = match &cli.command {
        Command::List => {
            cmd::list::run();
            Ok(())
        }
        Command::Gen {
            block,
            sets,
            board,
            out,
            top,
            force,
            no_locators,
        } => cmd::gen::run(
            block,
            sets,
            board.as_deref(),
            top.as_deref(),
            out,
            *force,
            !*no_locators,
        ),
        Command::Synth(args) => cmd::synth::run(args),
        Command::Sim(SimCommand::Panama(args)) => cmd::sim_panama::run(args),
        Command::Sim(SimCommand::Lightning(args)) => cmd::sim_lightning::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", wirespeed::error_line(&e));
            if wirespeed::interrupt::interrupted() {
                // The conventional status of a process ended by SIGINT.
                return ExitCode::from(130);
            }
            ExitCode::FAILURE
        }
    }
}
