//! Every board variant of the PANAMA top passes Verilator lint (`-Wall`, no
//! warnings), Verilator's full elaboration, Icarus Verilog and Yosys
//! `synth_xilinx` for the board's part family. Synthesis keeps the hierarchy (each
//! module once, cells summed over instances) and the variants here are small
//! instances (two slots, short buffers) so that the suite stays within minutes on
//! a 2-core machine; `wirespeed synth panama --board <name>` synthesizes the
//! defaults (README, "PANAMA").

mod verilog_common;

use gen::toolchain;
use hdl::panama::config::PanamaConfig;
use hdl::panama::top::panama_top;
use testbench::panama::config::{PLUS_PORTS, SUME_PORTS};
use verilog_common::{check_tools, write_temp};

fn board_variant(name: &str, cfg: &PanamaConfig, family: &str) {
    let (top, map) = panama_top(cfg).unwrap_or_else(|e| panic!("{e}"));
    assert!(map.registers.len() > 20);
    check_tools(&top, false);
    let (dir, design) = write_temp(&top);
    let r = toolchain::yosys_synth_xilinx_hierarchical(&[dir.path()], &design.top, family)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(r.luts > 0 && r.ffs > 0, "{name}: {r:?}");
    assert!(
        r.ramb18 + r.ramb36 > 0,
        "{name}: the packet buffers map to block RAM ({r:?})"
    );
    println!(
        "{name}: `{}` passes lint, verilation, iverilog and yosys synth_xilinx -family \
         {family}: {} LUT, {} FF, {} RAMB36 + {} RAMB18, {} LUTRAM/SRL, {} DSP",
        top.name, r.luts, r.ffs, r.ramb36, r.ramb18, r.lutrams, r.dsps
    );
}

#[test]
fn netfpga_sume_variant_passes_lint_iverilog_and_yosys() {
    let cfg = PanamaConfig {
        slots: 2,
        fifo_depth: 2,
        max_payload_bytes: 256,
        ..PanamaConfig::new(256, &SUME_PORTS)
    };
    board_variant("netfpga-sume", &cfg, "xc7");
}

#[test]
fn netfpga_plus_variant_passes_lint_iverilog_and_yosys() {
    // netfpga-plus-au250 and -au280 generate the same Verilog (the part differs).
    let cfg = PanamaConfig {
        slots: 2,
        fifo_depth: 2,
        max_payload_bytes: 256,
        adder_stages: 7,
        ..PanamaConfig::new(1024, &PLUS_PORTS)
    };
    board_variant("netfpga-plus", &cfg, "xcup");
}
