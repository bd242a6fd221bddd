//! `testbench`: wirespeed's test bench.
//!
//! - [`tools`]: the external EDA tools as checks — Verilator lint, Icarus Verilog
//!   compile and simulation, Verilator binaries, Yosys synthesis for Xilinx parts.

pub mod tools;
pub mod golden;
pub mod models;
pub mod rng;
pub mod verilator;
