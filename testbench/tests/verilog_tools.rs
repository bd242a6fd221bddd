//! The generated Verilog passes the external tools: `verilator --lint-only -Wall`
//! without a single warning, `iverilog -g2005 -Wall`, and (for the small designs and the
//! block-RAM check) `yosys synth_xilinx -family xcup`.

mod verilog_common;

use gen::emit;
use verilog_common::*;

#[test]
fn every_op_narrow_passes_lint_iverilog_and_yosys() {
    check_tools(&all_ops("ops8", 8), false);
    check_tools(&all_ops("ops1", 1), false);
    let report = check_tools(&all_ops("ops13", 13), true).expect("synth report");
    assert!(report.luts > 0 && report.carries > 0, "{report:?}");
}

#[test]
fn every_op_1024_bits_passes_lint_and_iverilog() {
    check_tools(&all_ops("ops1024", 1024), false);
}

#[test]
fn every_op_4096_bits_passes_lint_and_iverilog() {
    check_tools(&all_ops("ops4096", 4096), false);
}

#[test]
fn registers_in_two_domains_pass_lint_iverilog_and_yosys() {
    let report = check_tools(&registers(), true).expect("synth report");
    // counter 16 + acc 16 + axi 8 + 8 + flag 1 flip-flops (`held` is constant after
    // reset and may go); the unreset 3-deep `pipe` may become 16 shift registers.
    let (flops, pipe) = (16 + 16 + 8 + 8 + 1, 16);
    assert!(report.ffs >= flops, "{report:?}");
    assert!(report.ffs + report.lutrams >= flops + pipe, "{report:?}");
    assert!(
        report.logic_depth.is_some_and(|d| d > 0 && d < 16),
        "{report:?}"
    );
}

#[test]
fn memories_pass_lint_iverilog_and_yosys() {
    let report = check_tools(&memories(), true).expect("synth report");
    eprintln!("memories on xcup: {report:?}");
    assert!(
        report.ramb18 + report.ramb36 + report.lutrams > 0,
        "{report:?}"
    );
}

#[test]
fn a_512_by_512_memory_becomes_block_ram() {
    let report = check_tools(&bram(512, 512), true).expect("synth report");
    eprintln!("512x512 memory on xcup: {report:?}");
    assert!(report.ramb18 + report.ramb36 > 0, "{report:?}");
    // 256 Kib at most 36 Kib per RAMB36: at least 7.1 of them.
    assert!(report.bram36_equivalent() >= 7.0, "{report:?}");
    assert!(
        report.luts < 64,
        "the memory must not be built of logic: {report:?}"
    );
    assert_eq!(report.lutrams, 0, "{report:?}");
}

#[test]
fn hierarchy_emits_shared_children_once_and_uniquifies_clashes() {
    let top = hierarchy();
    let d = emit(&top).expect("emit");
    assert_eq!(
        d.module_names(),
        vec!["stage", "add_reg", "stage_1", "hier_top"]
    );
    let top_text = d.file("hier_top.v").expect("top file");
    assert_eq!(top_text.matches("    add_reg u").count(), 2);
    assert!(top_text.contains("    stage_1 st ("));
    let report = check_tools(&top, true).expect("synth report");
    assert!(report.ffs >= 16, "{report:?}");
}

#[test]
fn emitting_twice_gives_identical_bytes() {
    for m in [all_ops("ops13", 13), registers(), memories(), hierarchy()] {
        assert_eq!(emit(&m).expect("emit"), emit(&m).expect("emit"));
    }
}

#[test]
fn lint_warnings_are_errors_with_verilators_text() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("bad.v");
    std::fs::write(
        &path,
        "module bad (input wire [7:0] a, output wire y);\n    assign y = a[0];\nendmodule\n",
    )
    .expect("write");
    let err = gen::toolchain::verilator_lint(&[&path], "bad").expect_err("unused bits");
    let text = err.to_string();
    assert!(text.contains("UNUSEDSIGNAL"), "{text}");
}

#[test]
fn corner_cases_pass_lint_iverilog_and_yosys() {
    check_tools(&corners(), true);
}

/// Reads of a memory whose depth is not a power of two at addresses Verilator folds to
/// constants (all ones, past the end; a word inside) and at a computed address: the
/// guards `addr < depth` must never be a constant compare (CMPCONST under lint and in
/// a plain Verilation).
#[test]
fn odd_depth_memory_reads_at_foldable_addresses_pass_lint_and_iverilog() {
    use hdl::{ModuleBuilder, ResetPolarity};
    let mut m = ModuleBuilder::new("mem_fold");
    let clk = m.domain("core", "clk", None, ResetPolarity::ActiveHigh);
    let (wa, wd, we) = (m.input("wa", 3), m.input("wd", 8), m.input("we", 1));
    let mem = m.memory("five", 8, 5, None);
    m.mem_write(mem, clk, wa, wd, we);
    let ones = m.ones(3);
    let two = m.lit(2, 3);
    let computed = m.xor(wa, two);
    for (name, addr) in [("past", ones), ("within", two), ("computed", computed)] {
        let q = m.mem_read(mem, clk, &format!("rd_{name}"), addr, None);
        m.output(&format!("q_{name}"), q);
    }
    check_tools(&m.finish().expect("builds"), false);
}
