//! `testbench`: wirespeed's test bench.
//!
//! - [`axil`]: an AXI-Lite master that reads and writes registers on either engine.
//!
//! The external tools (Verilator lint, Icarus Verilog, Yosys) run through
//! [`gen::toolchain`], which `wirespeed synth` uses too.

pub mod axil;
pub mod bench;
pub mod caches;
pub mod dut;
pub mod engine;
pub mod files;
pub mod fp_adder;
pub mod golden;
pub mod harness;
pub mod host;
pub mod lightning;
pub mod models;
pub mod mutation;
pub mod panama;
pub mod pins;
pub mod rng;
pub mod turns;
pub mod verilator;
pub mod waveform;
