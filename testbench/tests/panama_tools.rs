//! Every board variant of the PANAMA top passes Verilator lint, Icarus Verilog and
//! Yosys `synth_xilinx`, with its buffers in block RAM; the resource estimates are
//! printed for the README.

mod verilog_common;

use hdl::panama::config::PanamaConfig;
use hdl::panama::top::panama_top;
use testbench::panama::config::{PLUS_PORTS, SUME_PORTS};
use verilog_common::check_tools;

fn board_variant(name: &str, cfg: &PanamaConfig, synthesise: bool) {
    let (top, map) = panama_top(cfg).unwrap_or_else(|e| panic!("{e}"));
    assert!(map.registers.len() > 20);
    let report = check_tools(&top, synthesise);
    if let Some(r) = report {
        println!(
            "{name}: LUT {} FF {} RAMB18 {} RAMB36 {} DSP {} (yosys synth_xilinx)",
            r.luts, r.ffs, r.ramb18, r.ramb36, r.dsps
        );
        assert!(r.ramb18 + r.ramb36 > 0, "{name}: buffers are not block RAM");
    }
}

#[test]
fn netfpga_sume_variant_passes_lint_iverilog_and_yosys() {
    let cfg = PanamaConfig {
        fifo_depth: 8,
        ..PanamaConfig::new(256, &SUME_PORTS)
    };
    board_variant("netfpga-sume", &cfg, true);
}

#[test]
fn netfpga_plus_variant_passes_lint_iverilog_and_yosys() {
    // netfpga-plus-au250 and -au280 generate the same Verilog (the part differs).
    let cfg = PanamaConfig {
        fifo_depth: 8,
        adder_stages: 7,
        ..PanamaConfig::new(1024, &PLUS_PORTS)
    };
    board_variant("netfpga-plus", &cfg, true);
}
