//! `hdl`: wirespeed's Rust-embedded hardware description language.
//!
//! - [`ir`]: the netlist every back end reads;
//! - [`dsl`]: the builder designs are written with;
//! - [`blocks`]: reusable blocks (FIFOs, clock-domain crossings, AXI-Stream,
//!   AXI-Lite, floating point, count-action);
//! - [`panama`], [`lightning`]: the two flagship designs.

pub mod bits;
pub mod blocks;
pub mod dsl;
pub mod ir;
pub mod lightning;
pub mod panama;

pub use bits::Bits;
pub use dsl::{Domain, Instance, Memory, ModuleBuilder, Signal};
pub use ir::{HdlError, HdlErrorKind, Module, ResetPolarity};
