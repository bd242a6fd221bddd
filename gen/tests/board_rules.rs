//! The board rules (`Board::ethernet_codes`, `dma_codes`, `port_codes`,
//! `fp_adder_stages`, `require_family`) against the values written in
//! `constraints/boards/*.json`, read here as plain JSON.

use gen::board::{board_names, fp_adder_stages, Board, Family};
use serde_json::Value;

/// The JSON file of board `name`, parsed without the board types.
fn raw(name: &str) -> Value {
    let path = format!(
        "{}/../constraints/boards/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The `one_hot` codes of the file's ports of `kind`, in file order.
fn raw_codes(board: &Value, kind: &str) -> Vec<u8> {
    board["ports"]
        .as_array()
        .map(|ports| {
            ports
                .iter()
                .filter(|p| p["kind"] == kind)
                .map(|p| p["one_hot"].as_u64().expect("a number") as u8)
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn port_codes_are_the_files_codes() {
    for name in board_names() {
        let board = Board::named(name).expect("embedded board");
        let file = raw(name);
        let ethernet = raw_codes(&file, "ethernet");
        let dma = raw_codes(&file, "dma");
        assert_eq!(board.ethernet_codes(), ethernet, "{name}");
        assert_eq!(board.dma_codes(), dma, "{name}");
        assert_eq!(board.port_codes(), [ethernet, dma].concat(), "{name}");
    }
    let sume = Board::named("netfpga-sume").expect("SUME");
    assert_eq!(sume.ethernet_codes(), [0x01, 0x04, 0x10, 0x40]);
    assert_eq!(sume.dma_codes(), [0x02, 0x08, 0x20, 0x80]);
    let plus = Board::named("netfpga-plus-au250").expect("PLUS");
    assert_eq!(plus.ethernet_codes(), [0x01, 0x04]);
    assert_eq!(plus.dma_codes(), [0x02, 0x08]);
    assert!(Board::named("zcu111")
        .expect("ZCU111")
        .port_codes()
        .is_empty());
}

#[test]
fn adder_stages_follow_the_datapath_clock() {
    assert_eq!(fp_adder_stages(200.0), 5);
    assert_eq!(fp_adder_stages(250.0), 5);
    assert_eq!(fp_adder_stages(250.1), 7);
    assert_eq!(fp_adder_stages(340.0), 7);
    for name in board_names() {
        let board = Board::named(name).expect("embedded board");
        let file = raw(name);
        let mhz = file["clocks"]
            .as_array()
            .expect("clocks")
            .iter()
            .find(|c| c["role"] == "datapath")
            .and_then(|c| c["mhz"].as_f64());
        let want = mhz.map(|m| if m <= 250.0 { 5 } else { 7 });
        assert_eq!(board.fp_adder_stages(), want, "{name}");
    }
    let stages = |name: &str| Board::named(name).ok().and_then(|b| b.fp_adder_stages());
    assert_eq!(stages("netfpga-sume"), Some(5));
    assert_eq!(stages("netfpga-plus-au250"), Some(7));
    assert_eq!(stages("netfpga-plus-au280"), Some(7));
}

#[test]
fn the_family_check_names_the_design_the_board_and_the_family() {
    let zcu = Board::named("zcu111").expect("ZCU111");
    zcu.require_family(Family::Rfsoc, "Lightning")
        .expect("an RFSoC board");
    let e = zcu
        .require_family(Family::Netfpga, "PANAMA")
        .expect_err("not a NetFPGA board")
        .to_string();
    assert_eq!(
        e,
        "PANAMA runs on NetFPGA boards (netfpga-sume, netfpga-plus-au250, \
         netfpga-plus-au280); `zcu111` is not one"
    );
    let sume = Board::named("netfpga-sume").expect("SUME");
    let e = sume
        .require_family(Family::Rfsoc, "Lightning")
        .expect_err("not an RFSoC board")
        .to_string();
    assert_eq!(
        e,
        "Lightning runs on RFSoC boards (zcu111, rfsoc4x2); `netfpga-sume` is not one"
    );
}
