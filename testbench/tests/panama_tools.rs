//! Every board variant of the PANAMA top passes Verilator lint (`-Wall`, no
//! warnings), Verilator's full elaboration and Icarus Verilog. (Yosys
//! `synth_xilinx` of the whole top takes more than ten minutes per variant on the
//! 2-core CI machine, so it is not part of the suite yet.)

mod verilog_common;

use hdl::panama::config::PanamaConfig;
use hdl::panama::top::panama_top;
use testbench::panama::config::{PLUS_PORTS, SUME_PORTS};
use verilog_common::check_tools;

fn board_variant(name: &str, cfg: &PanamaConfig) {
    let (top, map) = panama_top(cfg).unwrap_or_else(|e| panic!("{e}"));
    assert!(map.registers.len() > 20);
    check_tools(&top, false);
    println!(
        "{name}: `{}` passes lint, verilation and iverilog",
        top.name
    );
}

#[test]
fn netfpga_sume_variant_passes_lint_and_iverilog() {
    let cfg = PanamaConfig {
        fifo_depth: 8,
        ..PanamaConfig::new(256, &SUME_PORTS)
    };
    board_variant("netfpga-sume", &cfg);
}

#[test]
fn netfpga_plus_variant_passes_lint_and_iverilog() {
    // netfpga-plus-au250 and -au280 generate the same Verilog (the part differs).
    let cfg = PanamaConfig {
        fifo_depth: 8,
        adder_stages: 7,
        ..PanamaConfig::new(1024, &PLUS_PORTS)
    };
    board_variant("netfpga-plus", &cfg);
}
