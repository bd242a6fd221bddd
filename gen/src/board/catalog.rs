//! The boards wirespeed knows: the descriptions in `constraints/boards/`, embedded in the
//! binary so that it needs no files at run time.

use super::spec::Board;
use crate::GenError;

/// `(name, JSON text)` of every embedded board description.
const SOURCES: &[(&str, &str)] = &[
    (
        "netfpga-sume",
        include_str!("../../../constraints/boards/netfpga-sume.json"),
    ),
    (
        "netfpga-plus-au250",
        include_str!("../../../constraints/boards/netfpga-plus-au250.json"),
    ),
    (
        "netfpga-plus-au280",
        include_str!("../../../constraints/boards/netfpga-plus-au280.json"),
    ),
    (
        "zcu111",
        include_str!("../../../constraints/boards/zcu111.json"),
    ),
    (
        "rfsoc4x2",
        include_str!("../../../constraints/boards/rfsoc4x2.json"),
    ),
];

/// The names of the known boards, in a fixed order (NetFPGA first, then RFSoC).
pub fn board_names() -> Vec<&'static str> {
    SOURCES.iter().map(|(n, _)| *n).collect()
}

/// Every known board, parsed and checked.
pub fn boards() -> Result<Vec<Board>, GenError> {
    SOURCES.iter().map(|(n, text)| parse(n, text)).collect()
}

impl Board {
    /// The board called `name` (see [`board_names`]); an unknown name is an error that
    /// lists the known boards.
    pub fn named(name: &str) -> Result<Board, GenError> {
        let (n, text) =
            SOURCES
                .iter()
                .find(|(n, _)| *n == name)
                .ok_or_else(|| GenError::UnknownBoard {
                    name: name.to_string(),
                    known: board_names().join(", "),
                })?;
        parse(n, text)
    }
}

/// Parses and checks one embedded description.
fn parse(name: &str, text: &str) -> Result<Board, GenError> {
    let bad = |reason: String| GenError::BoardFile {
        board: name.to_string(),
        reason,
    };
    let board: Board = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
    if board.name != name {
        return Err(bad(format!("the file names the board `{}`", board.name)));
    }
    match board.inconsistency() {
        Some(reason) => Err(bad(reason)),
        None => Ok(board),
    }
}
