//! The Python host drivers `wirespeed gen` writes (`register_map.py`) against their
//! JSON register maps: generated through the built binary for PANAMA (SUME and
//! PLUS), Lightning and a plain register file, compiled by `python3 -m py_compile`,
//! listed in the manifest, and checked by `tests/python/fake_mmio_check.py` with a
//! dict-backed fake MMIO: offsets, reset values, read-only refusals, field decoding
//! and encoding against masks computed from the JSON, clear-on-write and commands,
//! the `/dev/mem` helper over a plain file and `from_pynq` over a stand-in `pynq`.
//!
//! Needs `python3` (`apt-get install python3`; `scripts/test` installs it).
//!
//! `cargo test --test python_driver`

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_wirespeed");

/// The checking script, beside this file.
fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/fake_mmio_check.py")
}

/// Runs `python3` with `args`; a missing interpreter fails with the install command.
fn python(args: &[&str]) -> Output {
    Command::new("python3")
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run python3 ({e}): install it with `apt-get install python3`")
        })
}

/// `wirespeed gen <args> -o dir`, which must succeed.
fn gen(dir: &Path, args: &[&str]) {
    let out = Command::new(BIN)
        .arg("gen")
        .args(args)
        .arg("-o")
        .arg(dir)
        .output()
        .expect("run wirespeed");
    assert!(
        out.status.success(),
        "wirespeed gen {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The JSON map's register and field counts, read here in Rust.
fn counts(json: &Path) -> (usize, usize) {
    let v: serde_json::Value = serde_json::from_str(&fs::read_to_string(json).unwrap()).unwrap();
    let regs = v["registers"].as_array().expect("registers");
    let fields = regs
        .iter()
        .map(|r| {
            r.get("fields")
                .and_then(|f| f.as_array())
                .map_or(0, Vec::len)
        })
        .sum();
    (regs.len(), fields)
}

#[test]
fn gen_panama_writes_the_driver_and_lists_it_in_the_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("out");
    gen(&dir, &["panama"]);
    let driver = dir.join("register_map.py");
    assert!(driver.is_file(), "no register_map.py");
    let manifest: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    let outputs: Vec<&str> = manifest["outputs"]
        .as_array()
        .expect("outputs")
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    assert!(outputs.contains(&"register_map.py"), "{outputs:?}");
    let out = python(&["-m", "py_compile", driver.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "py_compile: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The same design gives the same driver.
    let again = tmp.path().join("again");
    gen(&again, &["panama"]);
    assert_eq!(
        fs::read(&driver).unwrap(),
        fs::read(again.join("register_map.py")).unwrap()
    );
}

#[test]
fn drivers_match_their_json_maps_over_a_fake_mmio() {
    let tmp = tempfile::tempdir().unwrap();
    // (name, gen arguments, helpers the driver must offer, fields at least)
    let cases: [(&str, &[&str], &str, usize); 4] = [
        ("panama", &["panama"], "dev_mem", 6),
        (
            "plus",
            &["panama", "--board", "netfpga-plus-au250"],
            "dev_mem",
            6,
        ),
        ("lightning", &["lightning"], "pynq", 13),
        ("regfile", &["axil-regfile"], "any", 0),
    ];
    for (name, args, host, min_fields) in cases {
        let dir = tmp.path().join(name);
        gen(&dir, args);
        let json = dir.join("register_map.json");
        let (regs, fields) = counts(&json);
        assert!(fields >= min_fields, "{name}: {fields} fields");
        let out = python(&[
            script().to_str().unwrap(),
            dir.join("register_map.py").to_str().unwrap(),
            json.to_str().unwrap(),
            host,
        ]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{name}: the driver check failed:\n{stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            stdout.trim(),
            format!("checked {regs} registers, {fields} fields"),
            "{name}"
        );
    }
}
