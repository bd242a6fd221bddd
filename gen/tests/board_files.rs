//! Board targets: the embedded board descriptions, the XDC, the Vivado script, the
//! register-map documents, and writing them beside a design all or nothing.

use gen::board::{
    board_files, board_names, boards, register_map_c_header, register_map_json,
    register_map_markdown, vivado_tcl, write_board_design, xdc, Board, ClockBinding, Family,
    PortKind,
};
use gen::{emit, GenError, Manifest};
use hdl::blocks::axil_regfile::{axil_regfile, Access, RegFileSpec, RegisterMap, RegisterSpec};
use hdl::Module;
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

/// The period in ns with 3 decimals, computed from the frequency in kHz with integer
/// arithmetic (independently of the library's floating-point division).
fn period_text(khz: u64) -> String {
    // picoseconds = 1e9 / kHz, rounded half up
    let ps = (1_000_000_000 + khz / 2) / khz;
    format!("{}.{:03}", ps / 1000, ps % 1000)
}

/// A board clock's frequency in kHz.
fn khz(board: &Board, role: &str) -> u64 {
    let mhz = board.clock(role).unwrap().mhz;
    (mhz * 1000.0).round() as u64
}

#[test]
fn every_board_parses_and_is_listed() {
    let all = boards().unwrap();
    let names: Vec<&str> = all.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "netfpga-sume",
            "netfpga-plus-au250",
            "netfpga-plus-au280",
            "zcu111",
            "rfsoc4x2"
        ]
    );
    assert_eq!(board_names(), names);
    for b in &all {
        assert_eq!(&Board::named(&b.name).unwrap(), b);
        assert!(b.clock("axil").is_some(), "{} has no axil clock", b.name);
        match b.family {
            Family::Netfpga => {
                assert!(b.clock("datapath").is_some(), "{}", b.name);
                assert_eq!(b.tuser.as_ref().unwrap().width, 128, "{}", b.name);
                assert!(!b.ports.is_empty(), "{}", b.name);
                assert!(b.converters.is_empty(), "{}", b.name);
            }
            Family::Rfsoc => {
                assert!(b.clock("dac").is_some() && b.clock("adc").is_some());
                assert!(b.ports.is_empty() && b.tuser.is_none(), "{}", b.name);
                assert_eq!(b.converters[0].stream_width(), b.data_width, "{}", b.name);
            }
        }
    }
}

#[test]
fn board_table() {
    let row = |name: &str| {
        let b = Board::named(name).unwrap();
        let clocks: BTreeMap<String, u64> = b
            .clocks
            .iter()
            .map(|c| (c.role.clone(), khz(&b, &c.role)))
            .collect();
        (b.part.clone(), b.data_width, clocks)
    };
    let clocks = |pairs: &[(&str, u64)]| -> BTreeMap<String, u64> {
        pairs.iter().map(|(r, k)| (r.to_string(), *k)).collect()
    };
    assert_eq!(
        row("netfpga-sume"),
        (
            "xc7vx690tffg1761-3".into(),
            256,
            clocks(&[("datapath", 200_000), ("axil", 100_000)])
        )
    );
    for (name, part) in [
        ("netfpga-plus-au250", "xcu250-figd2104-2L-e"),
        ("netfpga-plus-au280", "xcu280-fsvh2892-2L-e"),
    ] {
        assert_eq!(
            row(name),
            (
                part.into(),
                1024,
                clocks(&[("datapath", 340_000), ("axil", 125_000)])
            )
        );
    }
    assert_eq!(
        row("zcu111"),
        (
            "xczu28dr-ffvg1517-2-e".into(),
            256,
            clocks(&[("dac", 253_440), ("adc", 253_440), ("axil", 100_000)])
        )
    );
    assert_eq!(
        row("rfsoc4x2"),
        (
            "xczu48dr-ffvg1517-2-e".into(),
            256,
            clocks(&[("dac", 614_400), ("adc", 552_960), ("axil", 100_000)])
        )
    );
    let converters = |name: &str| -> Vec<(u32, u32)> {
        Board::named(name)
            .unwrap()
            .converters
            .iter()
            .map(|c| (c.samples_per_clock, c.sample_width))
            .collect()
    };
    assert_eq!(converters("zcu111"), [(16, 16), (16, 16)]);
    assert_eq!(converters("rfsoc4x2"), [(16, 16), (8, 16)]);
}

#[test]
fn netfpga_port_numbering_and_tuser() {
    let codes = |name: &str, kind: PortKind| -> Vec<u32> {
        Board::named(name)
            .unwrap()
            .ports
            .iter()
            .filter(|p| p.kind == kind)
            .map(|p| p.one_hot)
            .collect()
    };
    assert_eq!(
        codes("netfpga-sume", PortKind::Ethernet),
        [0x01, 0x04, 0x10, 0x40]
    );
    assert_eq!(
        codes("netfpga-sume", PortKind::Dma),
        [0x02, 0x08, 0x20, 0x80]
    );
    for plus in ["netfpga-plus-au250", "netfpga-plus-au280"] {
        assert_eq!(codes(plus, PortKind::Ethernet), [0x01, 0x04]);
        assert_eq!(codes(plus, PortKind::Dma), [0x02, 0x08]);
    }
    let fields: Vec<(String, u32, u32)> = Board::named("netfpga-sume")
        .unwrap()
        .tuser
        .unwrap()
        .fields
        .into_iter()
        .map(|f| (f.name, f.lsb, f.width))
        .collect();
    assert_eq!(
        fields,
        [
            ("length".into(), 0, 16),
            ("src_port".into(), 16, 8),
            ("dst_port".into(), 24, 8)
        ]
    );
}

#[test]
fn periods_have_three_decimals_and_are_right() {
    assert_eq!(period_text(200_000), "5.000");
    assert_eq!(period_text(340_000), "2.941");
    assert_eq!(period_text(253_440), "3.946");
    assert_eq!(period_text(614_400), "1.628");
    assert_eq!(period_text(552_960), "1.808");
    assert_eq!(period_text(100_000), "10.000");
    assert_eq!(period_text(125_000), "8.000");
    for b in boards().unwrap() {
        for c in &b.clocks {
            let text = xdc(&b, "top", &[ClockBinding::new("clk", &c.role)]).unwrap();
            let want = format!(
                "create_clock -name clk -period {} [get_ports clk]\n",
                period_text(khz(&b, &c.role))
            );
            assert!(text.contains(&want), "{}/{}:\n{text}", b.name, c.role);
        }
    }
}

#[test]
fn xdc_groups_roles_asynchronously() {
    let b = Board::named("rfsoc4x2").unwrap();
    let text = xdc(
        &b,
        "lightning",
        &[
            ClockBinding::new("dac_clk", "dac"),
            ClockBinding::new("adc_clk", "adc"),
            ClockBinding::new("s_axi_aclk", "axil"),
            ClockBinding::new("dac_clk2", "dac"),
        ],
    )
    .unwrap();
    let header: String = text.lines().take_while(|l| l.starts_with('#')).collect();
    for word in ["lightning", "RFSoC 4x2", "xczu48dr-ffvg1517-2-e"] {
        assert!(header.contains(word), "{word} not in {header}");
    }
    assert_eq!(text.matches("create_clock").count(), 4);
    let groups: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("set_clock_groups"))
        .collect();
    assert_eq!(
        groups,
        [
            "set_clock_groups -asynchronous -group [get_clocks {dac_clk dac_clk2}] \
          -group [get_clocks {adc_clk}] -group [get_clocks {s_axi_aclk}]"
        ]
    );
    // One role: nothing to group.
    let one = xdc(
        &b,
        "x",
        &[ClockBinding::new("a", "dac"), ClockBinding::new("b", "dac")],
    )
    .unwrap();
    assert!(!one.contains("set_clock_groups"), "{one}");
    insta::assert_snapshot!("xdc_rfsoc4x2", text);
}

#[test]
fn unknown_board_and_role_are_named() {
    let err = Board::named("netfpga-1g").unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, GenError::UnknownBoard { .. }), "{msg}");
    assert!(msg.contains("netfpga-1g"), "{msg}");
    for name in board_names() {
        assert!(msg.contains(name), "{msg} does not list {name}");
    }

    let sume = Board::named("netfpga-sume").unwrap();
    let err = xdc(&sume, "t", &[ClockBinding::new("dac_clk", "dac")]).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, GenError::UnknownClockRole { .. }), "{msg}");
    for word in ["`dac`", "netfpga-sume", "datapath", "axil"] {
        assert!(msg.contains(word), "{msg} lacks {word}");
    }

    let err = xdc(
        &sume,
        "t",
        &[
            ClockBinding::new("c", "axil"),
            ClockBinding::new("c", "datapath"),
        ],
    )
    .unwrap_err();
    assert!(
        matches!(&err, GenError::BadClockBinding { port, .. } if port == "c"),
        "{err}"
    );
    let err = xdc(&sume, "t", &[ClockBinding::new("c [x]", "axil")]).unwrap_err();
    assert!(err.to_string().contains("c [x]"), "{err}");
}

/// A PANAMA-like register file's map.
fn registers() -> RegisterMap {
    let spec = RegFileSpec {
        name: "panama_regs".into(),
        registers: vec![
            RegisterSpec::new("agg_udp_port", Access::ReadWrite, 16)
                .with_reset(0x4d2)
                .describe("UDP destination port of aggregation packets"),
            RegisterSpec::new("enable", Access::ReadWrite, 1).with_reset(1),
            RegisterSpec::new("pkts_in", Access::ClearOnWrite, 32)
                .describe("packets in | any write clears"),
            RegisterSpec::new("status", Access::ReadOnly, 7),
        ],
        addr_width: 12,
        separate_clock: true,
    };
    axil_regfile(&spec).unwrap().1
}

#[test]
fn c_header_defines_match_the_map() {
    let map = registers();
    let text = register_map_c_header(&map, "panama").unwrap();
    let mut defines: BTreeMap<String, u64> = BTreeMap::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("#define ") {
            let mut parts = rest.split_whitespace();
            let name = parts.next().unwrap().to_string();
            let Some(value) = parts.next() else {
                continue; // the include guard
            };
            let value = value.trim_end_matches('u');
            let value = match value.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16).unwrap(),
                None => value.parse().unwrap(),
            };
            defines.insert(name, value);
        }
    }
    let guard = text.lines().find(|l| l.starts_with("#ifndef ")).unwrap();
    assert_eq!(guard, "#ifndef PANAMA_REGS_H");
    assert!(text.trim_end().ends_with("#endif /* PANAMA_REGS_H */"));
    assert_eq!(defines["PANAMA_ADDR_WIDTH"], 12);
    assert_eq!(defines["PANAMA_REGISTER_COUNT"], 4);
    for r in &map.registers {
        let p = format!("PANAMA_{}", r.name.to_uppercase());
        assert_eq!(defines[&format!("{p}_OFFSET")], u64::from(r.offset), "{p}");
        assert_eq!(defines[&format!("{p}_WIDTH")], u64::from(r.width), "{p}");
        assert_eq!(defines[&format!("{p}_RESET")], u64::from(r.reset), "{p}");
        assert_eq!(defines[&format!("{p}_MASK")], (1u64 << r.width) - 1, "{p}");
    }
    assert_eq!(defines.len(), 2 + 4 * map.registers.len());
    assert!(
        text.contains("/* pkts_in: read-only, clear on write - packets in | any write clears */"),
        "{text}"
    );
    insta::assert_snapshot!("c_header", text);
}

#[test]
fn c_names_are_sanitized_and_clashes_refused() {
    let mut map = registers();
    map.registers[0].name = "agg.udp-port".into();
    let text = register_map_c_header(&map, "3x-regs").unwrap();
    assert!(
        text.contains("#define R3X_REGS_AGG_UDP_PORT_OFFSET 0x000u"),
        "{text}"
    );
    let text = register_map_c_header(&map, "").unwrap();
    assert!(text.contains("#ifndef PANAMA_REGS_REGS_H"), "{text}");

    map.registers[1].name = "AGG_UDP_PORT".into();
    let err = register_map_c_header(&map, "p").unwrap_err();
    let msg = err.to_string();
    for word in [
        "agg.udp-port",
        "AGG_UDP_PORT",
        "P_AGG_UDP_PORT",
        "panama_regs",
    ] {
        assert!(msg.contains(word), "{msg} lacks {word}");
    }
}

#[test]
fn json_round_trips_and_matches_the_map() {
    let map = registers();
    let text = register_map_json(&map);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["block"], "panama_regs");
    assert_eq!(v["addr_width"], 12);
    assert_eq!(v["data_width"], 32);
    let regs = v["registers"].as_array().unwrap();
    assert_eq!(regs.len(), map.registers.len());
    for (j, r) in regs.iter().zip(&map.registers) {
        assert_eq!(j["name"], r.name.as_str());
        assert_eq!(j["offset"], r.offset);
        assert_eq!(j["width"], r.width);
        assert_eq!(j["reset"], r.reset);
        assert_eq!(j["description"], r.description.as_str());
        assert_eq!(j["access"], serde_json::to_value(r.access).unwrap());
    }
    assert_eq!(regs[2]["access"], "clear_on_write");
    assert_eq!(regs[3]["offset"], 12);
}

#[test]
fn markdown_has_one_row_per_register() {
    let map = registers();
    let text = register_map_markdown(&map);
    let rows: Vec<&str> = text.lines().filter(|l| l.starts_with("| 0x")).collect();
    assert_eq!(rows.len(), map.registers.len());
    for (row, r) in rows.iter().zip(&map.registers) {
        let start = format!("| 0x{:03X} | `{}` |", r.offset, r.name);
        assert!(row.starts_with(&start), "{row}");
        assert!(
            row.contains(&format!(" | {} | 0x{:X} |", r.width, r.reset)),
            "{row}"
        );
    }
    // A `|` in a description does not open a column.
    assert_eq!(rows[2].matches(" | ").count(), 5, "{}", rows[2]);
    insta::assert_snapshot!("markdown", text);
}

/// A register file with a separate AXI-Lite clock, as a top module, and its map.
fn top() -> (Module, RegisterMap) {
    let spec = RegFileSpec {
        name: "regs_top".into(),
        registers: vec![RegisterSpec::new("scratch", Access::ReadWrite, 8)],
        addr_width: 4,
        separate_clock: true,
    };
    axil_regfile(&spec).unwrap()
}

#[test]
fn tcl_names_the_part_and_every_file() {
    let (m, _) = top();
    let design = emit(&m).unwrap();
    let manifest = Manifest::new(&m, &design);
    assert!(!manifest.files.is_empty());
    for b in boards().unwrap() {
        let tcl = vivado_tcl(&b, &manifest, "regs_top.xdc");
        assert!(tcl.contains(&format!("set part {}\n", b.part)), "{tcl}");
        for file in &manifest.files {
            let add = format!("[file join $here {{{file}}}]");
            assert!(tcl.contains(&add), "{file}");
        }
        for needle in [
            "[file dirname [info script]]",
            "[file join $here {regs_top.xdc}]",
            "USED_IN {synthesis implementation out_of_context}",
            "set_property top $top",
            "synth_design -top $top -part $part -mode out_of_context",
            "report_utilization",
            "report_timing_summary",
            "ipx::package_project",
            "-vendor wirespeed -library wirespeed",
            "aximm_rtl",
            "axis_rtl",
        ] {
            assert!(tcl.contains(needle), "{needle} missing from\n{tcl}");
        }
    }
    let sume = Board::named("netfpga-sume").unwrap();
    insta::assert_snapshot!("tcl_sume", vivado_tcl(&sume, &manifest, "regs_top.xdc"));
}

/// The names in `dir`, sorted.
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn writes_design_and_board_files() {
    let (m, map) = top();
    let design = emit(&m).unwrap();
    let manifest = Manifest::new(&m, &design);
    let board = Board::named("netfpga-sume").unwrap();
    let clock_ports: Vec<&str> = manifest.domains.iter().map(|d| d.clock.as_str()).collect();
    assert_eq!(clock_ports.len(), 2, "{clock_ports:?}");
    let bindings = [
        ClockBinding::new(clock_ports[0], "axil"),
        ClockBinding::new(clock_ports[1], "datapath"),
    ];
    let files = board_files(&board, &manifest, &bindings, Some(&map)).unwrap();
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "regs_top.xdc",
            "build.tcl",
            "register_map.md",
            "register_map.h",
            "register_map.json",
            "register_map.py"
        ]
    );
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("out");
    let written = write_board_design(&dir, &design, &manifest, &files).unwrap();
    assert_eq!(written.len(), design.files.len() + 1 + files.len());
    assert_eq!(written.last().unwrap(), &dir.join("register_map.py"));
    for (name, text) in files.iter().chain(&design.files) {
        assert_eq!(&fs::read_to_string(dir.join(name)).unwrap(), text, "{name}");
    }
    assert!(dir.join("manifest.json").is_file());
    assert_eq!(names_in(&dir).len(), written.len());
}

#[test]
fn a_failed_write_leaves_nothing() {
    let (m, _) = top();
    let design = emit(&m).unwrap();
    let manifest = Manifest::new(&m, &design);
    let files = vec![("notes.md".to_string(), "x\n".to_string())];
    let tmp = tempfile::tempdir().unwrap();

    // The target directory is a file.
    let file = tmp.path().join("a_file");
    fs::write(&file, "x").unwrap();
    let err = write_board_design(&file, &design, &manifest, &files).unwrap_err();
    assert!(err.to_string().contains("a_file"), "{err}");
    assert_eq!(names_in(tmp.path()), ["a_file"]);

    // The last board file's place is taken by a directory: its rename fails, and the
    // files already renamed into place are taken back.
    let dir = tmp.path().join("out");
    fs::create_dir_all(dir.join("notes.md")).unwrap();
    let err = write_board_design(&dir, &design, &manifest, &files).unwrap_err();
    assert!(
        matches!(&err, GenError::Io { path, .. } if path.ends_with("notes.md")),
        "{err}"
    );
    assert_eq!(names_in(&dir), ["notes.md"]);
}

#[test]
fn bad_board_file_names_are_refused_before_writing() {
    let (m, _) = top();
    let design = emit(&m).unwrap();
    let manifest = Manifest::new(&m, &design);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("out");
    let verilog = design.files[0].0.clone();
    for name in [
        "",
        "../x.h",
        "sub/x.h",
        ".hidden",
        "manifest.json",
        verilog.as_str(),
    ] {
        let files = vec![(name.to_string(), String::new())];
        let err = write_board_design(&dir, &design, &manifest, &files).unwrap_err();
        assert!(
            matches!(&err, GenError::BadOutputName { name: n, .. } if n == name),
            "{name}: {err}"
        );
    }
    let twice = vec![
        ("a.h".to_string(), String::new()),
        ("a.h".to_string(), String::new()),
    ];
    let err = write_board_design(&dir, &design, &manifest, &twice).unwrap_err();
    assert!(err.to_string().contains("a.h"), "{err}");
    assert!(!dir.exists());
}

/// A register file with bit fields and a command.
fn with_fields() -> RegisterMap {
    let spec = RegFileSpec {
        name: "ctl_regs".into(),
        registers: vec![
            RegisterSpec::new("ctrl", Access::ReadWrite, 16)
                .with_reset(0x0102)
                .field("enable", 0, 1, "1: run")
                .field("mode", 4, 3, "operating mode | 0..7")
                .field("level", 8, 8, "threshold"),
            RegisterSpec::new("go", Access::ClearOnWrite, 1)
                .as_command()
                .describe("write any value: start"),
            RegisterSpec::new("plain", Access::ReadOnly, 32),
        ],
        addr_width: 6,
        separate_clock: false,
    };
    axil_regfile(&spec).unwrap().1
}

#[test]
fn fields_appear_in_markdown_c_header_and_json() {
    let map = with_fields();
    let md = register_map_markdown(&map);
    for row in [
        "| `ctrl` | [0] | `enable` | 1: run |",
        "| `ctrl` | [6:4] | `mode` | operating mode \\| 0..7 |",
        "| `ctrl` | [15:8] | `level` | threshold |",
    ] {
        assert!(md.contains(row), "{row} missing from\n{md}");
    }
    assert_eq!(md.matches("\n| `").count(), 3, "{md}");
    // Still one register row per register.
    assert_eq!(md.lines().filter(|l| l.starts_with("| 0x")).count(), 3);

    let h = register_map_c_header(&map, "ctl").unwrap();
    for (name, value) in [
        ("CTL_CTRL_ENABLE_LSB", "0u"),
        ("CTL_CTRL_ENABLE_MASK", "0x00000001u"),
        ("CTL_CTRL_MODE_LSB", "4u"),
        ("CTL_CTRL_MODE_WIDTH", "3u"),
        ("CTL_CTRL_MODE_MASK", "0x00000070u"),
        ("CTL_CTRL_LEVEL_LSB", "8u"),
        ("CTL_CTRL_LEVEL_MASK", "0x0000FF00u"),
        ("CTL_CTRL_MASK", "0x0000FFFFu"),
    ] {
        let line = format!("#define {name} {value}\n");
        assert!(h.contains(&line), "{line} missing from\n{h}");
    }
    assert!(
        h.contains("/* ctrl.mode [6:4] - operating mode | 0..7 */"),
        "{h}"
    );

    let v: serde_json::Value = serde_json::from_str(&register_map_json(&map)).unwrap();
    let regs = v["registers"].as_array().unwrap();
    let fields = regs[0]["fields"].as_array().unwrap();
    assert_eq!(fields.len(), 3);
    assert_eq!(fields[1]["name"], "mode");
    assert_eq!(fields[1]["lsb"], 4);
    assert_eq!(fields[1]["width"], 3);
    assert_eq!(fields[1]["description"], "operating mode | 0..7");
    assert_eq!(regs[1]["command"], true);
    // Absent unless used: a map without fields or commands keeps its JSON.
    assert!(regs[2].get("fields").is_none() && regs[2].get("command").is_none());
    assert!(regs[0].get("command").is_none());
    assert!(!register_map_json(&registers()).contains("\"fields\""));
}

#[test]
fn a_field_whose_c_name_is_a_registers_is_refused() {
    let mut map = with_fields();
    map.registers[2].name = "ctrl_mode".into();
    let msg = register_map_c_header(&map, "ctl").unwrap_err().to_string();
    for word in ["ctrl.mode", "ctrl_mode", "CTL_CTRL_MODE", "ctl_regs"] {
        assert!(msg.contains(word), "{msg} lacks {word}");
    }
}
