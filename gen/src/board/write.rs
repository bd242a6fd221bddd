//! Putting a design and its board files on disk, all or nothing.

use super::python::{register_map_python, PythonHost};
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
/// `register_map.h` (prefix: the top's name), `register_map.json` and
/// `register_map.py` (class named after the top, helpers for the board's family, see
/// [`PythonHost::for_family`]). Errors name the unknown clock role, the bad clock port,
/// or the clashing register names.
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
        let host = PythonHost::for_family(board.family);
        files.extend(register_map_files_for(map, &manifest.top, host)?);
    }
    Ok(files)
}

/// `register_map.md`, `register_map.h` (with `prefix`), `register_map.json` and
/// `register_map.py` (class named after `prefix`, both host helpers: see
/// [`PythonHost::Any`]) of `map`, as `(file name, text)`.
pub fn register_map_files(
    map: &RegisterMap,
    prefix: &str,
) -> Result<Vec<(String, String)>, GenError> {
    register_map_files_for(map, prefix, PythonHost::Any)
}

/// [`register_map_files`] with the Python driver's helpers for `host`.
fn register_map_files_for(
    map: &RegisterMap,
    prefix: &str,
    host: PythonHost,
) -> Result<Vec<(String, String)>, GenError> {
    Ok(vec![
        ("register_map.md".to_string(), register_map_markdown(map)),
        (
            "register_map.h".to_string(),
            register_map_c_header(map, prefix)?,
        ),
        ("register_map.json".to_string(), register_map_json(map)),
        (
            "register_map.py".to_string(),
            register_map_python(map, prefix, host)?,
        ),
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
