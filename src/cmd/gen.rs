//! `wirespeed gen`: a catalog block's Verilog, manifest and board files into one
//! output folder, one design per folder and all or nothing (see [`gen::output`]).

use crate::{catalog, interrupt};
use anyhow::{anyhow, bail, Result};
use hdl::Module;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Runs `wirespeed gen`: builds `block` (see [`build`]), then writes it into `out`
/// (see [`write_design`]) and prints what was written. A bad block name or parameter
/// stops before anything is announced or written.
pub fn run(
    block: &str,
    sets: &[String],
    board: Option<&str>,
    top: Option<&str>,
    out: &Path,
    force: bool,
    locators: bool,
) -> Result<()> {
    let built = build(block, sets, board, top)?;
    eprintln!("generating `{block}` into {}", out.display());
    let w = write_design(&built, out, force, locators)?;
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

/// What [`write_design`] wrote.
pub struct Written {
    /// The top module.
    pub top: String,
    /// How many Verilog files.
    pub verilog_files: usize,
    /// Every file written, Verilog first.
    pub paths: Vec<PathBuf>,
}

/// The top module's note on what generated it: the block and every parameter value
/// it took (derived ones included), wrapped to lines of about 90 characters.
fn block_note(block: &str, parameters: &BTreeMap<String, String>) -> String {
    let mut lines = vec![format!("Block `{block}`")];
    for (i, (k, v)) in parameters.iter().enumerate() {
        let item = format!("{k}={v}");
        let n = lines.len() - 1;
        let sep = if i == 0 { ": " } else { ", " };
        if i > 0 && lines[n].len() + sep.len() + item.len() > 90 {
            lines[n].push(',');
            lines.push(format!("  {item}"));
        } else {
            lines[n].push_str(sep);
            lines[n].push_str(&item);
        }
    }
    lines.join("\n")
}

/// `module` called `name` if one is given. Errors if `name` is not a legal Verilog
/// identifier or another module of the design already has it.
fn named_top(module: &Module, name: Option<&str>) -> Result<Module> {
    let Some(name) = name else {
        return Ok(module.clone());
    };
    if !hdl::ir::is_legal_identifier(name) {
        bail!("--top {name}: not a legal Verilog identifier (a keyword, or not a letter or `_` followed by letters, digits, `_` or `$`)");
    }
    if module.descendant_names().contains(name) {
        bail!("--top {name}: a module inside the design is already called `{name}`; pick another top name");
    }
    module
        .renamed(name)
        .map_err(|e| anyhow!("--top {name}: {}", e.kind))
}

/// A catalog block built from its parameters, ready to be written.
pub struct Built {
    /// The block's catalog name.
    block: String,
    /// What the block's generator returned.
    generated: catalog::Generated,
    /// The top module, renamed if a top name was given.
    module: Module,
}

/// Builds `block` with `sets` (and `board`), its top module called `top` if given
/// (else the block's own name). Errors name a bad block, parameter or top name.
pub fn build(
    block: &str,
    sets: &[String],
    board: Option<&str>,
    top: Option<&str>,
) -> Result<Built> {
    let (spec, settings) = catalog::find_with_settings(block, sets, board)?;
    let generated = spec.build(&settings)?;
    let module = named_top(&generated.module, top)?;
    Ok(Built {
        block: block.to_string(),
        generated,
        module,
    })
}

/// Writes `built` into `out`: `force` replaces another design's files as its
/// manifest lists them; `locators` keeps the Verilog's `// @[file.rs:line]` source
/// locators. Stops with an error, writing nothing, if Ctrl-C is pressed (see
/// [`interrupt`]).
pub fn write_design(built: &Built, out: &Path, force: bool, locators: bool) -> Result<Written> {
    let Built {
        block,
        generated,
        module,
    } = built;
    interrupt::check()?;
    let options = gen::EmitOptions {
        locators,
        top_note: Some(block_note(block, &generated.parameters)),
        ..gen::EmitOptions::default()
    };
    let design = gen::emit_with(module, &options)?;
    interrupt::check()?;
    let mut manifest = gen::Manifest::new(module, &design).with_parameter("block", block);
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
