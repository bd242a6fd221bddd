//! Putting a design and its board files on disk, all or nothing.

use super::regmap::{register_map_c_header, register_map_json, register_map_markdown};
use super::spec::Board;
use super::tcl::vivado_tcl;
use super::xdc::{xdc, ClockBinding};
use crate::manifest::write_design_and;
use crate::verilog::Design;
use crate::{GenError, Manifest};
use hdl::blocks::axil_regfile::RegisterMap;
use std::path::{Path, PathBuf};

/// The board files of the design in `manifest` on `board`, as `(file name, text)`:
/// `<top>.xdc` (timing for the clock ports in `bindings`), `build.tcl` (the Vivado
/// script, reading that XDC) and, if `registers` is given, `register_map.md`,
/// `register_map.h` (prefix: the top's name) and `register_map.json`. Errors name the
/// unknown clock role, the bad clock port, or the clashing register names.
pub fn board_files(
    board: &Board,
    manifest: &Manifest,
    bindings: &[ClockBinding],
    registers: Option<&RegisterMap>,
) -> Result<Vec<(String, String)>, GenError> {
    let xdc_name = format!("{}.xdc", manifest.top);
    let mut files = vec![
        (xdc_name.clone(), xdc(board, &manifest.top, bindings)?),
        (
            "build.tcl".to_string(),
            vivado_tcl(board, manifest, &xdc_name),
        ),
    ];
    if let Some(map) = registers {
        files.extend(register_map_files(map, &manifest.top)?);
    }
    Ok(files)
}

/// `register_map.md`, `register_map.h` (with `prefix`) and `register_map.json` of
/// `map`, as `(file name, text)`.
pub fn register_map_files(
    map: &RegisterMap,
    prefix: &str,
) -> Result<Vec<(String, String)>, GenError> {
    Ok(vec![
        ("register_map.md".to_string(), register_map_markdown(map)),
        (
            "register_map.h".to_string(),
            register_map_c_header(map, prefix)?,
        ),
        ("register_map.json".to_string(), register_map_json(map)),
    ])
}

/// Writes the Verilog files of `design`, `manifest.json` and every `(file name, text)`
/// of `board_files` into `dir` (created if needed), and returns the paths written:
/// Verilog, manifest, then the board files in order.
///
/// Shares [`write_design`](crate::write_design)'s mechanism: every file is written in
/// full under a temporary name and renamed into place only when all are written, so an
/// error leaves no partial output. A board file name that is not a plain file name,
/// starts with `.`, or repeats another output's name is refused before anything is
/// written.
pub fn write_board_design(
    dir: &Path,
    design: &Design,
    manifest: &Manifest,
    board_files: &[(String, String)],
) -> Result<Vec<PathBuf>, GenError> {
    write_design_and(dir, design, manifest, board_files)
}
