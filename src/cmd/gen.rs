//! `wirespeed gen`: a catalog block's Verilog, manifest and board files into one
//! output folder, one design per folder and all or nothing (see [`gen::output`]).

use crate::{catalog, interrupt};
use anyhow::Result;
use std::path::{Path, PathBuf};

/// Runs `wirespeed gen`: generates `block` into `out` (see [`generate`]) and prints
/// what was written.
pub fn run(
    block: &str,
    sets: &[String],
    board: Option<&str>,
    out: &Path,
    force: bool,
) -> Result<()> {
    eprintln!("generating `{block}` into {}", out.display());
    let w = generate(block, sets, board, out, force)?;
    println!(
        "wrote {} ({}, top `{}`) to {}",
        block,
        crate::plural(w.verilog_files, "Verilog file"),
        w.top,
        out.display()
    );
    for path in w.paths {
        println!("  {}", path.display());
    }
    Ok(())
}

/// What [`generate`] wrote.
pub struct Written {
    /// The top module.
    pub top: String,
    /// How many Verilog files.
    pub verilog_files: usize,
    /// Every file written, Verilog first.
    pub paths: Vec<PathBuf>,
}

/// Generates `block` with `sets` (and `board`) into `out`; `force` replaces another
/// design's files as its manifest lists them. Stops with an error, writing nothing,
/// if Ctrl-C is pressed (see [`interrupt`]).
pub fn generate(
    block: &str,
    sets: &[String],
    board: Option<&str>,
    out: &Path,
    force: bool,
) -> Result<Written> {
    let (spec, settings) = catalog::find_with_settings(block, sets, board)?;
    let generated = spec.build(&settings)?;
    interrupt::check()?;
    let design = gen::emit(&generated.module)?;
    interrupt::check()?;
    let mut manifest =
        gen::Manifest::new(&generated.module, &design).with_parameter("block", block);
    for (k, v) in &generated.parameters {
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
    interrupt::check()?;
    let options = gen::FolderOptions {
        force,
        cancel: Some(interrupt::flag()),
    };
    let paths = gen::write_folder(out, &design, &manifest, &files, options)?;
    Ok(Written {
        top: design.top,
        verilog_files: design.files.len(),
        paths,
    })
}
