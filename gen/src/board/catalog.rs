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

#[cfg(test)]
mod tests {
    use super::*;

    fn sume_text() -> &'static str {
        SOURCES[0].1
    }

    fn reason(name: &str, text: &str) -> String {
        match parse(name, text) {
            Err(GenError::BoardFile { board, reason }) => {
                assert_eq!(board, name);
                reason
            }
            other => panic!("expected a BoardFile error, got {other:?}"),
        }
    }

    #[test]
    fn a_file_must_name_its_board() {
        let r = reason("other", sume_text());
        assert!(r.contains("`netfpga-sume`"), "{r}");
    }

    #[test]
    fn unknown_fields_and_bad_json_are_refused() {
        let text = sume_text().replacen("\"part\"", "\"prat\"", 1);
        let r = reason("netfpga-sume", &text);
        assert!(r.contains("prat"), "{r}");
        let r = reason("netfpga-sume", "{");
        assert!(!r.is_empty());
    }

    #[test]
    fn inconsistent_descriptions_are_refused() {
        let cases = [
            (
                "\"role\": \"axil\"",
                "\"role\": \"datapath\"",
                "appears twice",
            ),
            ("\"mhz\": 200.0", "\"mhz\": 0.0", "frequency 0"),
            (
                "\"role\": \"axil\"",
                "\"role\": \"ax il\"",
                "plain identifier",
            ),
            ("\"one_hot\": 4", "\"one_hot\": 3", "not one-hot"),
            ("\"one_hot\": 4", "\"one_hot\": 1", "repeats"),
            ("\"lsb\": 24", "\"lsb\": 124", "does not fit"),
            ("\"data_width\": 256", "\"data_width\": 0", "data_width"),
        ];
        for (from, to, want) in cases {
            let text = sume_text().replacen(from, to, 1);
            assert_ne!(text, sume_text(), "{from} not in the SUME file");
            let r = reason("netfpga-sume", &text);
            assert!(r.contains(want), "{from} -> {to}: {r}");
        }
        let zcu = SOURCES[3]
            .1
            .replacen("\"clock\": \"adc\"", "\"clock\": \"rf\"", 1);
        let r = reason("zcu111", &zcu);
        assert!(r.contains("`rf`"), "{r}");
    }
}
