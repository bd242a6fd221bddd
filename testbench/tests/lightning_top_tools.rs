//! Every board variant of the Lightning top passes Verilator lint (`-Wall`, no
//! warnings), Verilator's full elaboration and Icarus Verilog: the 16-sample ADC
//! as on the ZCU111 and the 8-sample ADC with the gearbox as on the RFSoC 4x2; 2
//! cores with streamed weights and 4 cores with on-chip weights (the ZCU111's
//! limit); and the released RTL's arithmetic.
//!
//! Two variants that between them hold every optional part also pass Yosys
//! `synth_xilinx -family xcup`: 2 cores with streamed weights on the ZCU111 (the
//! multi-core top and the weight stream), and one core on the RFSoC 4x2 with the
//! released RTL's arithmetic (the gearbox and the other accumulator). Yosys takes
//! two to five minutes per variant here, so synthesizing every variant would
//! more than double the suite's longest binary for no part that is not already
//! synthesized. The network is a small random one; the shipped MLP's numbers come
//! from `wirespeed synth lightning --board <name> --flatten`.
//!
//! `cargo test -p testbench --test lightning_top_tools`

mod verilog_common;

use hdl::lightning::config::WeightSource;
use hdl::lightning::top::{lightning_top, TopConfig};
use testbench::lightning::arith::{AccWidth, Contract};
use testbench::lightning::closed_loop::hardware_config_as;
use testbench::lightning::golden::Network;
use testbench::rng::seeded;
use verilog_common::check_tools;

/// One board variant of the top.
struct Variant {
    board: &'static str,
    adc_samples: u32,
    cores: u32,
    weights: WeightSource,
    contract: Contract,
}

impl Variant {
    /// One core, on-chip weights, wirespeed's arithmetic.
    fn board(board: &'static str, adc_samples: u32) -> Variant {
        Variant {
            board,
            adc_samples,
            cores: 1,
            weights: WeightSource::Memory,
            contract: Contract::Wirespeed,
        }
    }
}

/// Whether a variant also goes through Yosys.
#[derive(Clone, Copy, PartialEq)]
enum Tools {
    /// Verilator lint and elaboration, Icarus Verilog.
    Check,
    /// Those and Yosys `synth_xilinx`.
    Synthesize,
}

fn variant(v: Variant, tools: Tools) {
    let Variant {
        board,
        adc_samples,
        cores,
        weights,
        contract,
    } = v;
    let board = format!("{board} ({cores} cores, {weights:?} weights, {contract:?})");
    let mut rng = seeded("lightning_top_tools", 3);
    // Every core needs a neuron in every layer.
    let logits = 3.max(cores as usize);
    let net = Network::random(&[20, 6, logits], &[6, 0], &mut rng).unwrap();
    let mut cfg = hardware_config_as(&net, AccWidth::new(20).unwrap(), cores, contract);
    cfg.weight_source = weights;
    let top = TopConfig {
        adc_samples_per_clock: adc_samples,
        ..TopConfig::default()
    };
    let (m, map) = lightning_top(&cfg, &top).unwrap_or_else(|e| panic!("{e}"));
    assert!(map.registers.len() > 30);
    let Some(report) = check_tools(&m, tools == Tools::Synthesize) else {
        println!("{board}: lint, verilation and iverilog pass");
        return;
    };
    assert!(report.luts > 0 && report.ffs > 0, "{board}: {report:?}");
    // The 256-bit ADC FIFO and the activation memories are RAMs.
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
fn zcu111_variant_passes_lint_and_iverilog() {
    variant(Variant::board("zcu111", 16), Tools::Check);
}

#[test]
fn rfsoc4x2_variant_passes_lint_and_iverilog() {
    variant(Variant::board("rfsoc4x2", 8), Tools::Check);
}

#[test]
fn four_cores_pass_lint_and_iverilog() {
    variant(
        Variant {
            cores: 4,
            ..Variant::board("zcu111", 16)
        },
        Tools::Check,
    );
}

#[test]
fn released_rtl_arithmetic_passes_lint_and_iverilog() {
    variant(
        Variant {
            contract: Contract::ReleasedRtl,
            ..Variant::board("zcu111", 16)
        },
        Tools::Check,
    );
}

#[test]
fn two_cores_with_streamed_weights_pass_lint_iverilog_and_yosys() {
    variant(
        Variant {
            cores: 2,
            weights: WeightSource::Stream,
            ..Variant::board("zcu111", 16)
        },
        Tools::Synthesize,
    );
}

#[test]
fn rfsoc4x2_with_released_rtl_arithmetic_passes_lint_iverilog_and_yosys() {
    variant(
        Variant {
            contract: Contract::ReleasedRtl,
            ..Variant::board("rfsoc4x2", 8)
        },
        Tools::Synthesize,
    );
}
