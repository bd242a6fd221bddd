//! `gen`: wirespeed's back ends that turn an HDL [`Module`](hdl::Module) into files.
//!
//! - [`verilog`]: Verilog-2005, one file per unique module, deterministic and clean under
//!   `verilator --lint-only -Wall`, `iverilog -g2005` and `yosys synth_xilinx`;
//! - [`manifest`]: a JSON description of a generated design (top, ports, files,
//!   generator parameters) and [`write_design`], which puts a
//!   design and its manifest on disk;
//! - [`board`]: board descriptions (`constraints/boards/`) and the files for a design on
//!   a board: timing XDC, Vivado TCL, register maps (Markdown, C header, JSON);
//! - [`output`]: one design per output folder, written all or nothing ([`write_folder`]);
//! - [`toolchain`]: the external tools on generated Verilog (Verilator lint, Icarus
//!   Verilog, Yosys `synth_xilinx` and its resource report), for `wirespeed synth` and
//!   the tests.

#![warn(missing_docs)]

pub mod board;
mod error;
pub mod manifest;
pub mod output;
pub mod toolchain;
pub mod verilog;

pub use error::GenError;
pub use manifest::{write_design, Manifest};
pub use output::{write_folder, FolderOptions};
pub use verilog::{emit, emit_with, Design, EmitOptions};
