//! `wirespeed gen` records in `manifest.json` the value every parameter took,
//! derived defaults included (the board's width, ports and adder depth, the
//! weights file's accumulator width), and `wirespeed list` shows those defaults.
//!
//! `cargo test --test cli_manifest`

use serde_json::Value;
use std::process::Command;

/// Runs the CLI with `args`; panics with its stderr if it fails; returns stdout.
fn wirespeed(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_wirespeed"))
        .args(args)
        .output()
        .expect("the wirespeed binary runs");
    assert!(
        out.status.success(),
        "wirespeed {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The `parameters` of the manifest `gen` writes for `args`.
fn parameters(args: &[&str]) -> Value {
    let dir = tempfile::tempdir().expect("temporary directory");
    let out = dir.path().join("out");
    let out_text = out.to_string_lossy().into_owned();
    let mut all = vec!["gen"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", &out_text]);
    wirespeed(&all);
    let text = std::fs::read_to_string(out.join("manifest.json")).expect("manifest.json");
    let manifest: Value = serde_json::from_str(&text).expect("manifest JSON");
    manifest["parameters"].clone()
}

fn check(params: &Value, want: &[(&str, &str)]) {
    for (name, value) in want {
        assert_eq!(params[name], *value, "{name} in {params}");
    }
    let placeholders = ["board", "config", "model"];
    for (name, value) in params.as_object().expect("an object") {
        if name != "block" && name != "board" {
            let value = value.as_str().unwrap_or_default();
            assert!(!placeholders.contains(&value), "{name} = {value}");
        }
    }
}

#[test]
fn panama_records_the_values_of_its_board() {
    let sume = parameters(&["panama"]);
    check(
        &sume,
        &[
            ("board", "netfpga-sume"),
            ("data_width", "256"),
            ("ports", "4"),
            ("adder_stages", "5"),
            ("fifo_depth", "8"),
            ("full_wait", "4096"),
            ("slot_timeout", "1000000"),
        ],
    );
    let plus = parameters(&[
        "panama",
        "--board",
        "netfpga-plus-au250",
        "--set",
        "ftz=yes",
    ]);
    check(
        &plus,
        &[
            ("board", "netfpga-plus-au250"),
            ("data_width", "1024"),
            ("ports", "2"),
            ("adder_stages", "7"),
            ("ftz", "true"),
        ],
    );
    let given = parameters(&["panama", "--set", "ports=3", "--set", "adder_stages=6"]);
    check(&given, &[("ports", "3"), ("adder_stages", "6")]);
}

/// Register values as an FPGA engineer writes them: hexadecimal and `_`
/// separators are accepted, and the manifest records the number in decimal.
#[test]
fn hexadecimal_and_separated_values_are_numbers() {
    let params = parameters(&[
        "panama",
        "--set",
        "full_wait=0xFFFF_FFFF",
        "--set",
        "slot_timeout=200_000",
    ]);
    check(
        &params,
        &[("full_wait", "4294967295"), ("slot_timeout", "200000")],
    );
}

#[test]
fn lightning_records_the_weights_files_accumulator_width() {
    let params = parameters(&["lightning"]);
    check(
        &params,
        &[
            ("board", "zcu111"),
            ("weights", "shipped"),
            ("acc_width", "16"),
            ("arith", "wirespeed"),
            ("adc_fifo_depth", "16"),
            ("command_fifo_depth", "16"),
        ],
    );
    let released = parameters(&["lightning", "--set", "arith=released-rtl"]);
    check(&released, &[("arith", "released-rtl"), ("acc_width", "16")]);
}

#[test]
fn list_shows_the_values_gen_uses() {
    let list = wirespeed(&["list"]);
    let line = |block: &str, param: &str| -> String {
        let section = list
            .split_once(&format!("\n{block} "))
            .map(|(_, rest)| rest)
            .unwrap_or_else(|| panic!("no block {block} in:\n{list}"));
        section
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{param} ")))
            .unwrap_or_else(|| panic!("no {block}.{param} in:\n{list}"))
            .to_string()
    };
    for (block, param, default) in [
        ("panama", "fifo_depth", "default 8"),
        ("panama", "data_width", "default 256 (from the board"),
        ("panama", "ports", "default 4 (from the board"),
        ("panama", "adder_stages", "default 5 (from the board"),
        ("panama", "full_wait", "default 4096"),
        ("panama", "slot_timeout", "default 1000000"),
        (
            "lightning",
            "acc_width",
            "default 16 (from the weights file)",
        ),
    ] {
        let l = line(block, param);
        assert!(l.contains(default), "{block}.{param}: {l}");
    }
}

#[test]
fn list_starts_every_description_in_one_column() {
    let list = wirespeed(&["list"]);
    // A name, then at least one space, then the description: where it starts.
    let column = |line: &str| -> usize {
        let indent = line.len() - line.trim_start().len();
        let name_end = indent + line.trim_start().find(' ').unwrap_or(line.len());
        let gap = line[name_end..].len() - line[name_end..].trim_start().len();
        assert!(gap >= 1, "no space after the name: {line}");
        name_end + gap
    };
    let columns: std::collections::BTreeSet<usize> = list.lines().map(column).collect();
    assert_eq!(
        columns.len(),
        1,
        "descriptions start at columns {columns:?}:\n{list}"
    );
}
