//! Every `hdl::blocks` block's Verilog, including ≥ 1024-bit datapaths, through tools
//! that are not ours: `verilator --lint-only -Wall` (no warnings), a full Verilation,
//! `iverilog -g2005`, and `yosys synth_xilinx -family xcup` — and emitted twice to the
//! same bytes. A missing tool fails with the command that installs it.

mod verilog_common;

use hdl::blocks::axil_regfile::{axil_regfile, Access, RegFileSpec, RegisterSpec};
use hdl::blocks::count_action::{count_action, CountActionConfig};
use hdl::blocks::fp::{fp_add, fp_add_tree, FpAddConfig, FpFormat, FpTreeConfig};
use hdl::blocks::{cdc, counter, fifo, skid};
use hdl::dsl::AxisConfig;
use hdl::Module;
use verilog_common::check_tools;

fn check(m: &Module) -> gen::toolchain::SynthReport {
    assert_eq!(
        gen::emit(m).unwrap(),
        gen::emit(m).unwrap(),
        "deterministic"
    );
    let r = check_tools(m, true).expect("synthesis report");
    println!(
        "{:<32} LUT {:>6} FF {:>6} CARRY {:>4} DSP {:>3} RAMB18 {:>3} RAMB36 {:>3} depth {:?}",
        m.name, r.luts, r.ffs, r.carries, r.dsps, r.ramb18, r.ramb36, r.logic_depth
    );
    r
}

#[test]
fn sync_fifo_1024_bits_wide_uses_block_ram() {
    let r = check(&fifo::sync_fifo(1024, 512).unwrap());
    assert!(r.ramb18 + r.ramb36 > 0, "no block RAM: {:?}", r.cells);
    check(&fifo::sync_fifo(8, 10).unwrap());
}

#[test]
fn async_fifo_uses_block_ram() {
    let r = check(&fifo::async_fifo(64, 512).unwrap());
    assert!(r.ramb18 + r.ramb36 > 0, "no block RAM: {:?}", r.cells);
}

#[test]
fn crossings_pass_the_tools() {
    check(&cdc::sync_bits(1024, 2).unwrap());
    check(&cdc::pulse_sync().unwrap());
    check(&cdc::handshake_sync(1024).unwrap());
}

#[test]
fn skid_buffer_1024_bits_passes_the_tools() {
    check(&skid::axis_skid(&AxisConfig::packets(1024, 128)).unwrap());
    check(&skid::axis_skid(&AxisConfig::words(8)).unwrap());
}

#[test]
fn register_files_and_counter_pass_the_tools() {
    for separate_clock in [true, false] {
        let spec = RegFileSpec {
            name: format!("regs_{}", if separate_clock { "cdc" } else { "local" }),
            registers: vec![
                RegisterSpec::new("ctrl", Access::ReadWrite, 32).with_reset(7),
                RegisterSpec::new("status", Access::ReadOnly, 16),
                RegisterSpec::new("drops", Access::ClearOnWrite, 32),
            ],
            addr_width: 12,
            separate_clock,
        };
        check(&axil_regfile(&spec).unwrap().0);
    }
    check(&counter::up_counter(32).unwrap());
    check(
        &count_action(&CountActionConfig {
            events: 16,
            count_width: 16,
        })
        .unwrap(),
    );
}

#[test]
fn floating_point_blocks_pass_the_tools() {
    for format in FpFormat::ALL {
        check(
            &fp_add(&FpAddConfig {
                format,
                stages: 3,
                ftz: false,
            })
            .unwrap(),
        );
    }
    check(
        &fp_add(&FpAddConfig {
            format: FpFormat::Bf16,
            stages: 0,
            ftz: true,
        })
        .unwrap(),
    );
    let tree = FpTreeConfig {
        inputs: 3,
        lanes: 2,
        adder: FpAddConfig {
            format: FpFormat::Fp16,
            stages: 2,
            ftz: false,
        },
    };
    check(&fp_add_tree(&tree).unwrap());
}
