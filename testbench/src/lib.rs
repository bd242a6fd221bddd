//! `testbench`: wirespeed's test bench.
//!
//! - [`axil`]: an AXI-Lite master that reads and writes registers on either engine;
//! - [`tools`]: the external EDA tools as checks — Verilator lint, Icarus Verilog
//!   compile and simulation, Verilator binaries, Yosys synthesis for Xilinx parts.

pub mod axil;
pub mod dut;
pub mod golden;
pub mod harness;
pub mod lightning;
pub mod lut_levels;
pub mod models;
pub mod panama;
pub mod rng;
pub mod tools;
pub mod verilator;
pub mod waveform;
