//! The Python driver generator (`register_map_python`): names that are Python
//! keywords or not identifiers become usable attributes, clashes are errors naming
//! both owners, the host decides the helpers, the output is deterministic and
//! compiles and runs under `python3` (which these tests need).
//!
//! The drivers of the real designs are checked against their JSON maps by
//! `cargo test --test python_driver` (fake MMIO) and
//! `cargo test -p testbench --test python_driver_sim` (simulated AXI-Lite).

use gen::board::{register_map_python, PythonHost};
use gen::GenError;
use hdl::blocks::axil_regfile::{Access, RegisterEntry, RegisterMap, RegisterSpec};
use std::process::Command;

/// A map of `registers` at offsets 0, 4, 8, … built directly: register names need
/// not be Verilog port names here, as a map read from elsewhere may hold any.
fn map_of(registers: Vec<RegisterSpec>) -> RegisterMap {
    RegisterMap {
        block: "odd_regs".into(),
        addr_width: 8,
        data_width: 32,
        registers: registers
            .into_iter()
            .enumerate()
            .map(|(i, r)| RegisterEntry {
                name: r.name,
                offset: 4 * i as u32,
                width: r.width,
                access: r.access,
                reset: r.reset,
                description: r.description,
                command: r.command,
                hardware_load: r.hardware_load,
                fields: r.fields,
            })
            .collect(),
    }
}

/// Registers whose names need care in Python.
fn odd_map() -> RegisterMap {
    map_of(vec![
        RegisterSpec::new("class", Access::ReadWrite, 8)
            .with_reset(3)
            .describe("a keyword \"quoted\" with a backslash \\ and \u{b5}s")
            .field("import", 0, 2, "keyword field")
            .field("lambda", 4, 4, "another"),
        RegisterSpec::new("3d", Access::ReadOnly, 4).with_reset(9),
        RegisterSpec::new("pkts.in", Access::ClearOnWrite, 32),
        RegisterSpec::new("go", Access::ClearOnWrite, 1).as_command(),
    ])
}

/// Runs `code` with the module `text` importable as `register_map`; returns stdout.
fn run_python(text: &str, code: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("register_map.py"), text).unwrap();
    let out = Command::new("python3")
        .arg("-c")
        .arg(code)
        .current_dir(dir.path())
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run python3 ({e}): install it with `apt-get install python3`")
        });
    assert!(
        out.status.success(),
        "python3 failed:\n{}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn keywords_and_odd_names_become_usable_attributes() {
    let text = register_map_python(&odd_map(), "odd-top", PythonHost::Any).unwrap();
    assert!(text.contains("class OddTop(object):"), "{text}");
    assert!(text.contains("Driver = OddTop"));
    let out = run_python(
        &text,
        r#"
import register_map as m
class Mem(object):
    def __init__(self): self.words = {0: 3, 4: 9, 8: 77, 12: 0}; self.log = []
    def read(self, off): return self.words[off]
    def write(self, off, v): self.log.append((off, v)); self.words[off] = v
mem = Mem()
d = m.OddTop(mem)
print(d.class_.import_, d.class_.lambda_, d.r3d, d.pkts_in)
d.update_class_(lambda_=5)
d.clear_pkts_in()
d.go()
print(mem.log)
print(m.REGISTERS[0].description)
print(sorted(n for n in ("from_pynq", "from_dev_mem") if hasattr(d, n)))
"#,
    );
    assert_eq!(
        out,
        "3 0 9 77\n[(0, 83), (8, 0), (12, 1)]\n\
         a keyword \"quoted\" with a backslash \\ and \u{b5}s\n\
         ['from_dev_mem', 'from_pynq']\n"
    );
}

#[test]
fn the_host_decides_the_helpers() {
    let map = odd_map();
    let pynq = register_map_python(&map, "t", PythonHost::Pynq).unwrap();
    let dev = register_map_python(&map, "t", PythonHost::DevMem).unwrap();
    assert!(pynq.contains("def from_pynq(") && !pynq.contains("def from_dev_mem("));
    assert!(dev.contains("def from_dev_mem(") && !dev.contains("def from_pynq("));
    // `pynq` is imported only inside from_pynq.
    let imports: Vec<&str> = pynq
        .lines()
        .filter(|l| l.trim_start().starts_with("import "))
        .collect();
    assert_eq!(
        imports,
        [
            "import collections",
            "import mmap",
            "import os",
            "        import pynq"
        ]
    );
    // Deterministic.
    assert_eq!(
        register_map_python(&map, "t", PythonHost::Pynq).unwrap(),
        pynq
    );
    // An empty prefix names the class after the block.
    let text = register_map_python(&map, "", PythonHost::Any).unwrap();
    assert!(text.contains("class OddRegs(object):"));
}

/// The error of a clash, as text, after checking it is a Python name clash.
fn clash(registers: Vec<RegisterSpec>) -> String {
    match register_map_python(&map_of(registers), "t", PythonHost::Any) {
        Err(e @ GenError::PythonNameClash { .. }) => e.to_string(),
        other => panic!("expected a Python name clash, got {other:?}"),
    }
}

#[test]
fn clashes_are_errors_naming_both() {
    let rw = |n: &str| RegisterSpec::new(n, Access::ReadWrite, 8);
    for (registers, words) in [
        (
            vec![rw("class"), rw("class_")],
            &["register `class`", "register `class_`", "`class_`"][..],
        ),
        (
            vec![rw("a.b"), rw("a-b")],
            &["register `a.b`", "register `a-b`", "`a_b`"][..],
        ),
        (
            vec![rw("read_all")],
            &["the driver's own `read_all`", "register `read_all`"][..],
        ),
        (
            vec![
                RegisterSpec::new("x", Access::ClearOnWrite, 8),
                rw("clear_x"),
            ],
            &["the clear method of register `x`", "register `clear_x`"][..],
        ),
        (
            vec![rw("r").field("value", 0, 1, "")],
            &["the fields class's own `value`", "field `r.value`"][..],
        ),
        (
            vec![rw("r").field("a.b", 0, 1, "").field("a_b", 1, 1, "")],
            &["field `r.a.b`", "field `r.a_b`"][..],
        ),
        (
            vec![
                rw("a_b").field("f", 0, 1, ""),
                rw("a__b").field("f", 0, 1, ""),
            ],
            &[
                "the fields class of register `a_b`",
                "the fields class of register `a__b`",
                "`ABFields`",
            ][..],
        ),
    ] {
        let msg = clash(registers);
        assert!(msg.contains("odd_regs"), "{msg}");
        for w in words {
            assert!(msg.contains(w), "{msg} lacks {w}");
        }
    }
    // The driver class against a name of the module.
    let msg = register_map_python(&map_of(vec![rw("x")]), "field", PythonHost::Any)
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("the module's own `Field`") && msg.contains("the driver class"),
        "{msg}"
    );
}
