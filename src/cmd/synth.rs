//! `wirespeed synth`: a block's Verilog through Yosys `synth_xilinx` for its
//! board's part (UltraScale+ without a board), out of context, and the resource
//! estimate as a table.
//!
//! The hierarchy is kept by default: each module is synthesized once and the
//! counts are summed over its instances, which keeps designs that repeat a large
//! module (an adder tree) within minutes; `--flatten` optimises across module
//! boundaries at a much higher run time. These are Yosys estimates, not Vivado
//! results.

use crate::{catalog, interrupt};
use anyhow::{Context, Result};
use gen::toolchain::{self, SynthReport};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// Arguments of `wirespeed synth`.
#[derive(clap::Args, Debug)]
pub struct SynthArgs {
    /// Block name (see `wirespeed list`).
    block: String,
    /// A parameter, as key=value (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// Target board: the block's `board` parameter if it has one (as `--set
    /// board=NAME`); for any other block, only the FPGA part Yosys maps to.
    #[arg(long = "board", value_name = "NAME")]
    board: Option<String>,
    /// Flatten before synthesis (slower; optimises across module boundaries).
    #[arg(long)]
    flatten: bool,
}

/// Runs `wirespeed synth`.
pub fn run(args: &SynthArgs) -> Result<()> {
    let spec = catalog::find(&args.block)?;
    let takes_board = spec.params().iter().any(|p| p.name == "board");
    // A block without a board parameter is synthesized for the board's part.
    let part_of = match &args.board {
        Some(name) if !takes_board => Some(gen::board::Board::named(name)?),
        _ => None,
    };
    let board_setting = args.board.as_deref().filter(|_| takes_board);
    let (spec, settings) = catalog::find_with_settings(&args.block, &args.sets, board_setting)?;
    let generated = spec.build(&settings)?;
    interrupt::check()?;
    let design = gen::emit(&generated.module)?;
    interrupt::check()?;
    // Removed when dropped, also when Ctrl-C stops Yosys (see `interrupt`).
    let dir = tempfile::Builder::new()
        .prefix("wirespeed-synth-")
        .tempdir()
        .context("creating a temporary directory")?;
    let manifest = gen::Manifest::new(&generated.module, &design);
    gen::write_design(dir.path(), &design, &manifest)?;
    let board = generated
        .board
        .as_ref()
        .map(|t| &t.board)
        .or(part_of.as_ref());
    let (family, target) = match board {
        Some(b) => (b.yosys_family(), format!("{} ({})", b.name, b.part)),
        None => ("xcup", "no board".to_string()),
    };
    let mode = if args.flatten {
        "flattened"
    } else {
        "hierarchical"
    };
    eprintln!(
        "synthesizing `{}` ({}) for {target}: yosys synth_xilinx -family {family}, {mode}",
        design.top,
        crate::plural(design.files.len(), "Verilog file")
    );
    interrupt::check()?;
    let start = Instant::now();
    // On a terminal a spinner shows the time running; elsewhere (logs, CI) a line
    // when Yosys starts and one when it ends.
    let on_terminal = std::io::stderr().is_terminal();
    let spinner = on_terminal.then(|| {
        let bar = ProgressBar::new_spinner().with_message("yosys running");
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg} {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(Duration::from_millis(200));
        bar
    });
    if !on_terminal {
        eprintln!("yosys started");
    }
    let report = if args.flatten {
        toolchain::yosys_synth_xilinx(&[dir.path()], &design.top, family)
    } else {
        toolchain::yosys_synth_xilinx_hierarchical(&[dir.path()], &design.top, family)
    };
    if let Some(bar) = spinner {
        bar.finish_and_clear();
    }
    let secs = start.elapsed().as_secs_f64();
    let report = report?;
    if !on_terminal {
        eprintln!("yosys finished in {secs:.1} s");
    }
    print!("{}", table(&design.top, &target, &report, secs));
    Ok(())
}

/// The report as a Markdown table row with its header; the last column is
/// Yosys's wall time in seconds.
fn table(top: &str, target: &str, r: &SynthReport, secs: f64) -> String {
    format!(
        "| top | target | LUT | FF | CARRY | BRAM36 | BRAM18 | LUTRAM/SRL | DSP | Yosys time |\n\
         |---|---|---|---|---|---|---|---|---|---|\n\
         | {top} | {target} | {} | {} | {} | {} | {} | {} | {} | {secs:.1} s |\n",
        r.luts, r.ffs, r.carries, r.ramb36, r.ramb18, r.lutrams, r.dsps
    )
}
