//! Every board variant of the Lightning top (16-sample ADC as on the ZCU111,
//! 8-sample ADC with the gearbox as on the RFSoC 4x2) passes Verilator lint
//! (`-Wall`, no warnings), Verilator's full elaboration, Icarus Verilog and
//! Yosys `synth_xilinx -family xcup`. The network is a small random one so that
//! Yosys stays around a minute per variant; the shipped MLP's numbers come from
//! `wirespeed synth lightning --board <name> --flatten`.
//!
//! `cargo test -p testbench --test lightning_top_tools`

mod verilog_common;

use hdl::lightning::top::{lightning_top, TopConfig};
use testbench::lightning::arith::AccWidth;
use testbench::lightning::closed_loop::hardware_config;
use testbench::lightning::golden::Network;
use testbench::rng::seeded;
use verilog_common::check_tools;

fn variant(board: &str, adc_samples: u32) {
    let mut rng = seeded(&format!("lightning_top_tools {board}"), 3);
    let net = Network::random(&[20, 6, 3], &[6, 0], &mut rng).unwrap();
    let cfg = hardware_config(&net, AccWidth::new(20).unwrap(), 1);
    let top = TopConfig {
        adc_samples_per_clock: adc_samples,
        ..TopConfig::default()
    };
    let (m, map) = lightning_top(&cfg, &top).unwrap_or_else(|e| panic!("{e}"));
    assert!(map.registers.len() > 30);
    let report = check_tools(&m, true).expect("synthesis report");
    assert!(report.luts > 0 && report.ffs > 0, "{board}: {report:?}");
    // The 256-bit ADC FIFO and the weight/activation memories are RAMs.
    assert!(
        report.ramb18 + report.ramb36 + report.lutrams > 0,
        "{board}: no RAM cells in {:?}",
        report.cells
    );
    println!(
        "{board}: lint, verilation, iverilog and yosys pass: {} LUT, {} FF, {} RAMB36, {} RAMB18, {} LUT RAM, {} DSP",
        report.luts, report.ffs, report.ramb36, report.ramb18, report.lutrams, report.dsps
    );
}

#[test]
fn zcu111_variant_passes_lint_iverilog_and_yosys() {
    variant("zcu111", 16);
}

#[test]
fn rfsoc4x2_variant_passes_lint_iverilog_and_yosys() {
    variant("rfsoc4x2", 8);
}
