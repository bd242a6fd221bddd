//! The PANAMA top as a NetFPGA drop-in, through the built binary: `gen panama --top
//! output_port_lookup` writes a top of that name declaring the reference datapath's
//! `C_*` parameters; instantiated the way NetFPGA's IP wrapper instantiates
//! `switch_output_port_lookup` it elaborates clean in Verilator (`-Wall`), Icarus and
//! Yosys, and a parameter overridden with a value the design was not generated for
//! stops elaboration with a message naming the parameter and the value it must have.
//!
//! `cargo test --test cli_netfpga_top`

use std::fs;
use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_wirespeed");

/// The parameter values NetFPGA-SUME's `output_port_lookup_ip` wrapper passes to
/// `switch_output_port_lookup` (the reference switch), in the order the top declares
/// them. PLUS differs only in the stream width.
fn reference_values(data_width: u64) -> Vec<(&'static str, String)> {
    vec![
        ("C_M_AXIS_DATA_WIDTH", data_width.to_string()),
        ("C_S_AXIS_DATA_WIDTH", data_width.to_string()),
        ("C_M_AXIS_TUSER_WIDTH", "128".into()),
        ("C_S_AXIS_TUSER_WIDTH", "128".into()),
        ("C_S_AXI_DATA_WIDTH", "32".into()),
        ("C_S_AXI_ADDR_WIDTH", "12".into()),
        ("C_BASEADDR", "32'h00000000".into()),
    ]
}

/// Generates PANAMA named `output_port_lookup` into `dir` with `extra` arguments.
fn generate(dir: &Path, extra: &[&str]) -> serde_json::Value {
    let out = Command::new(BIN)
        .args(["gen", "panama", "--top", "output_port_lookup", "-o"])
        .arg(dir)
        .args(extra)
        .output()
        .expect("run wirespeed");
    assert!(
        out.status.success(),
        "gen failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap()
}

/// A stand-in for `nf_datapath.v`: the same ports as the top, passed straight through
/// to `output_port_lookup` instantiated with `values`. Written to `dir/nf_stub.v`.
fn write_stub(dir: &Path, manifest: &serde_json::Value, values: &[(&str, String)]) {
    let ports = manifest["ports"].as_array().expect("ports");
    let decls: Vec<String> = ports
        .iter()
        .map(|p| {
            let width = p["width"].as_u64().unwrap();
            let range = if width == 1 {
                String::new()
            } else {
                format!("[{}:0] ", width - 1)
            };
            format!(
                "    {} wire {range}{}",
                p["direction"].as_str().unwrap(),
                p["name"].as_str().unwrap()
            )
        })
        .collect();
    let conns: Vec<String> = ports
        .iter()
        .map(|p| format!("        .{0}({0})", p["name"].as_str().unwrap()))
        .collect();
    let params: Vec<String> = values
        .iter()
        .map(|(n, v)| format!("        .{n}({v})"))
        .collect();
    let text = format!(
        "`default_nettype none\nmodule nf_stub (\n{}\n);\n    output_port_lookup #(\n{}\n    ) output_port_lookup_1 (\n{}\n    );\nendmodule\n`default_nettype wire\n",
        decls.join(",\n"),
        params.join(",\n"),
        conns.join(",\n")
    );
    fs::write(dir.join("nf_stub.v"), text).unwrap();
}

/// The generated Verilog files of `dir` and the stub.
fn sources(dir: &Path, manifest: &serde_json::Value) -> Vec<String> {
    let mut files: Vec<String> = manifest["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| dir.join(f.as_str().unwrap()).display().to_string())
        .collect();
    files.push(dir.join("nf_stub.v").display().to_string());
    files
}

/// `(success, stderr)` of Verilator linting the stub with every warning on.
fn verilator_lint(dir: &Path, manifest: &serde_json::Value) -> (bool, String) {
    let out = Command::new("verilator")
        .args(["--lint-only", "-Wall", "--top-module", "nf_stub"])
        .args(sources(dir, manifest))
        .output()
        .expect("verilator is installed (scripts/test installs it)");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn sume_top_elaborates_with_the_reference_parameters_in_every_tool() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let manifest = generate(dir, &[]);
    assert_eq!(manifest["top"], "output_port_lookup");
    assert!(dir.join("output_port_lookup.v").is_file());
    let declared: Vec<(String, u64)> = manifest["verilog_parameters"]
        .as_array()
        .expect("verilog_parameters")
        .iter()
        .map(|p| {
            (
                p["name"].as_str().unwrap().to_string(),
                p["value"].as_u64().unwrap(),
            )
        })
        .collect();
    let expected: Vec<(String, u64)> = reference_values(256)
        .into_iter()
        .map(|(n, v)| {
            let v = v.strip_prefix("32'h").map_or_else(
                || v.parse().unwrap(),
                |h| u64::from_str_radix(h, 16).unwrap(),
            );
            (n.to_string(), v)
        })
        .collect();
    assert_eq!(declared, expected);

    write_stub(dir, &manifest, &reference_values(256));
    let (ok, stderr) = verilator_lint(dir, &manifest);
    assert!(ok, "Verilator rejected the reference parameters:\n{stderr}");

    let icarus = Command::new("iverilog")
        .args(["-g2005", "-o"])
        .arg(dir.join("a.out"))
        .args(["-s", "nf_stub"])
        .args(sources(dir, &manifest))
        .output()
        .expect("iverilog is installed");
    assert!(
        icarus.status.success(),
        "{}",
        String::from_utf8_lossy(&icarus.stderr)
    );

    let script = format!(
        "read_verilog {}; hierarchy -check -top nf_stub",
        sources(dir, &manifest).join(" ")
    );
    let yosys = Command::new("yosys")
        .args(["-q", "-p", &script])
        .output()
        .expect("yosys is installed");
    assert!(
        yosys.status.success(),
        "{}",
        String::from_utf8_lossy(&yosys.stderr)
    );
}

#[test]
fn a_parameter_the_design_was_not_generated_for_stops_elaboration_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let manifest = generate(dir, &[]);
    for (name, bad, rule) in [
        (
            "C_M_AXIS_DATA_WIDTH",
            "512",
            "C_M_AXIS_DATA_WIDTH_must_be_256",
        ),
        (
            "C_S_AXIS_TUSER_WIDTH",
            "64",
            "C_S_AXIS_TUSER_WIDTH_must_be_128",
        ),
        ("C_S_AXI_ADDR_WIDTH", "32", "C_S_AXI_ADDR_WIDTH_must_be_12"),
        (
            "C_BASEADDR",
            "32'h44020010",
            "C_BASEADDR_must_be_aligned_to_4096_bytes",
        ),
    ] {
        let values: Vec<(&str, String)> = reference_values(256)
            .into_iter()
            .map(|(n, v)| {
                if n == name {
                    (n, bad.to_string())
                } else {
                    (n, v)
                }
            })
            .collect();
        write_stub(dir, &manifest, &values);
        let (ok, stderr) = verilator_lint(dir, &manifest);
        assert!(!ok, "{name} = {bad} elaborated");
        assert!(
            stderr.contains(rule),
            "{name} = {bad}: no `{rule}` in:\n{stderr}"
        );
    }
    // Any base address aligned to the 4 KiB register window is fine.
    let values: Vec<(&str, String)> = reference_values(256)
        .into_iter()
        .map(|(n, v)| {
            if n == "C_BASEADDR" {
                (n, "32'h44020000".into())
            } else {
                (n, v)
            }
        })
        .collect();
    write_stub(dir, &manifest, &values);
    let (ok, stderr) = verilator_lint(dir, &manifest);
    assert!(ok, "an aligned C_BASEADDR was refused:\n{stderr}");
}

#[test]
fn plus_top_declares_its_own_stream_width() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let manifest = generate(
        dir,
        &["--board", "netfpga-plus-au250", "--set", "data_width=512"],
    );
    write_stub(dir, &manifest, &reference_values(512));
    let (ok, stderr) = verilator_lint(dir, &manifest);
    assert!(ok, "Verilator rejected the PLUS parameters:\n{stderr}");
    write_stub(dir, &manifest, &reference_values(1024));
    let (ok, stderr) = verilator_lint(dir, &manifest);
    assert!(
        !ok && stderr.contains("C_M_AXIS_DATA_WIDTH_must_be_512"),
        "{stderr}"
    );
}

#[test]
fn top_name_is_stable_and_checked() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    let out = Command::new(BIN)
        .args(["gen", "panama", "--set", "slots=2", "-o"])
        .arg(&a)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        a.join("panama.v").is_file(),
        "the default top is `panama` whatever the parameters"
    );
    for (name, why) in [
        ("module", "not a legal Verilog identifier"),
        ("9lives", "not a legal Verilog identifier"),
        (
            "pulse_sync",
            "a module inside the design is already called `pulse_sync`",
        ),
    ] {
        let out = Command::new(BIN)
            .args(["gen", "panama", "--top", name, "-o"])
            .arg(tmp.path().join(name))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "--top {name} was accepted");
        assert!(
            stderr.contains(&format!("--top {name}")) && stderr.contains(why),
            "{stderr}"
        );
        assert!(
            !tmp.path().join(name).exists(),
            "--top {name} left a folder"
        );
    }
}
