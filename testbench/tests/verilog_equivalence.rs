//! Inlining and naming change the Verilog's text, not its logic: each design is
//! emitted twice, in the netlist style (`EmitOptions { inline: false, locators: false,
//! .. }`, every operation a wire of its own) and with the defaults (single-use values
//! inlined, source locators), and Yosys proves the two equivalent
//! (`gen::toolchain::yosys_equiv`: `equiv_make`, `equiv_simple`, `equiv_induct`,
//! `equiv_status -assert`; a memory of the same shape on both sides is shared, its
//! address, data and enable proven equal). The flagship designs' pieces are here: the
//! fp adders, the std FIFO, the PANAMA parser and two Lightning blocks. Two deliberately
//! broken copies (an operator flipped in an inlined expression, a memory's write data
//! inverted) must fail the check. A missing Yosys fails with the command that installs
//! it.
//!
//! `cargo test -p testbench --test verilog_equivalence`

use gen::toolchain::{self, EquivReport, ToolError};
use gen::{emit_with, Design, EmitOptions};
use hdl::blocks::fifo;
use hdl::blocks::fp::{fp_add, FpAddConfig, FpFormat};
use hdl::lightning::decode::{decode, DecodeConfig};
use hdl::lightning::preamble_detector::{preamble_detector, PreambleDetectorConfig};
use hdl::panama::parser::{parser, ParserConfig};
use hdl::Module;

/// The netlist style: one wire per operation, no source locators.
fn netlist_style() -> EmitOptions {
    EmitOptions {
        inline: false,
        locators: false,
        top_note: None,
    }
}

/// Writes `design`'s files into a fresh temporary directory.
fn write(design: &Design) -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("wirespeed-equiv-")
        .tempdir()
        .expect("temp dir");
    for (name, text) in &design.files {
        std::fs::write(dir.path().join(name), text).expect("write Verilog");
    }
    dir
}

/// How many `assign`s and declared-with-value wires `design` has in all.
fn wires(design: &Design) -> usize {
    design
        .files
        .iter()
        .map(|(_, t)| t.matches("    assign ").count() + t.matches("    wire ").count())
        .sum()
}

/// `m` in both styles: (netlist style, defaults).
fn both_styles(m: &Module) -> (Design, Design) {
    let gold = emit_with(m, &netlist_style()).expect("emits");
    let gate = gen::emit(m).expect("emits");
    assert_eq!(gold.top, gate.top);
    assert!(
        wires(&gold) > wires(&gate),
        "`{}`: the defaults inline nothing ({} wires in both), so nothing is compared",
        gold.top,
        wires(&gold)
    );
    (gold, gate)
}

/// Runs Yosys' equivalence check of `gold` against `gate`.
fn check(gold: &Design, gate: &Design) -> Result<EquivReport, ToolError> {
    let (gold_dir, gate_dir) = (write(gold), write(gate));
    toolchain::yosys_equiv(&[gold_dir.path()], &[gate_dir.path()], &gold.top)
}

/// Proves `m`'s two styles equivalent.
fn prove(m: &Module) {
    let (gold, gate) = both_styles(m);
    let report = check(&gold, &gate).unwrap_or_else(|e| panic!("{e}"));
    assert!(report.proven > 0, "{report:?}");
    println!(
        "{}: netlist style ({} wires) and defaults ({} wires) equivalent, {} signal bits proven",
        gold.top,
        wires(&gold),
        wires(&gate),
        report.proven
    );
}

/// `m` with its default text edited (`from` replaced by `to` once, in the top's file)
/// must fail the check; returns the unproven signals Yosys names.
fn broken(m: &Module, from: &str, to: &str) -> String {
    let (gold, mut gate) = both_styles(m);
    let top_file = format!("{}.v", gate.top);
    let (_, text) = gate
        .files
        .iter_mut()
        .find(|(n, _)| *n == top_file)
        .expect("top file");
    assert!(
        text.contains(from),
        "`{from}` is not in the emitted text any more; pick another edit:\n{text}"
    );
    *text = text.replacen(from, to, 1);
    match check(&gold, &gate) {
        Err(ToolError::NotEquivalent {
            unproven, output, ..
        }) => {
            assert!(unproven > 0);
            println!("{}: `{from}` -> `{to}`: {unproven} bits unproven", gate.top);
            output
        }
        other => panic!("`{from}` -> `{to}` in `{}`: {other:?}", gate.top),
    }
}

#[test]
fn fp_adders_inlined_and_named_are_the_netlist() {
    prove(
        &fp_add(&FpAddConfig {
            format: FpFormat::Bf16,
            stages: 2,
            ftz: false,
        })
        .unwrap(),
    );
    prove(
        &fp_add(&FpAddConfig {
            format: FpFormat::Fp32,
            stages: 5,
            ftz: false,
        })
        .unwrap(),
    );
}

#[test]
fn std_fifo_inlined_is_the_netlist() {
    prove(&fifo::sync_fifo(32, 512).unwrap());
}

#[test]
fn panama_parser_inlined_is_the_netlist() {
    prove(&parser(&ParserConfig::default()).unwrap());
}

#[test]
fn lightning_decode_and_preamble_detector_inlined_are_the_netlist() {
    prove(&decode(&DecodeConfig::default()).unwrap());
    prove(&preamble_detector(&PreambleDetectorConfig::default()).unwrap());
}

#[test]
fn a_flipped_operator_in_an_inlined_expression_is_caught() {
    let m = fp_add(&FpAddConfig {
        format: FpFormat::Bf16,
        stages: 2,
        ftz: false,
    })
    .unwrap();
    let unproven = broken(
        &m,
        "exp_dist = exp_big - (a_smaller ? a_eff_exp : b_eff_exp);",
        "exp_dist = exp_big + (a_smaller ? a_eff_exp : b_eff_exp);",
    );
    assert!(unproven.contains("exp_dist"), "{unproven}");
}

#[test]
fn a_changed_memory_write_is_caught() {
    let unproven = broken(
        &fifo::sync_fifo(32, 512).unwrap(),
        "] <= wr_data;",
        "] <= ~wr_data;",
    );
    assert!(unproven.contains("ram"), "{unproven}");
}
