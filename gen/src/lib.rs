//! `gen`: wirespeed's back ends that turn an HDL [`Module`](hdl::Module) into files.
//!
//! - [`verilog`]: Verilog-2005, one file per unique module, deterministic and clean under
//!   `verilator --lint-only -Wall`, `iverilog -g2005` and `yosys synth_xilinx`;
//! - [`manifest`]: a JSON description of a generated design (top, ports, files,
//!   generator parameters) and [`write_design`], which puts a
//!   design and its manifest on disk.

#![warn(missing_docs)]

mod error;
pub mod manifest;
pub mod verilog;

pub use error::GenError;
pub use manifest::{write_design, Manifest};
pub use verilog::{emit, Design};
