//! The `wirespeed` command line: parses arguments, then calls the crates.

use anyhow::{Context, Result};
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
        /// Output directory (created if missing).
        #[arg(short = 'o', long = "out", value_name = "DIR")]
        out: PathBuf,
    },
    /// Simulate a generated design in a closed loop with its peripheral models.
    #[command(subcommand)]
    Sim(SimTarget),
}

#[derive(Subcommand)]
enum SimTarget {
    /// The Lightning datapath with the photonic-core model on the shipped MLP.
    Lightning(wirespeed::lightning_sim::LightningArgs),
}

fn list() {
    for block in catalog::blocks() {
        println!("{:<16} {}", block.name, block.summary);
        for p in block.params {
            println!("    {:<16} default {:<12} {}", p.name, p.default, p.help);
        }
    }
}

fn generate(block: &str, sets: &[String], out: &std::path::Path) -> Result<()> {
    let spec = catalog::find(block)?;
    let settings = spec.settings(sets)?;
    let generated = spec.build(&settings)?;
    let design = gen::emit(&generated.module)?;
    let mut manifest =
        gen::Manifest::new(&generated.module, &design).with_parameter("block", block);
    for (k, v) in settings.as_map() {
        manifest = manifest.with_parameter(k, v);
    }
    let written = gen::write_design(out, &design, &manifest)?;
    for (name, text) in &generated.extra_files {
        let path = out.join(name);
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    }
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
        Command::Gen { block, sets, out } => generate(block, sets, out),
        Command::Sim(SimTarget::Lightning(args)) => wirespeed::lightning_sim::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
