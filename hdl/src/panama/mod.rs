//! PANAMA: the bump-in-the-wire in-network aggregation accelerator (header parser,
//! per-job buffers, floating-point adder tree at line rate). Spec:
//! `shared/docs/PANAMA.md`.
//!
//! - [`parser`]: the header parser and classifier (frames through, metadata out);
//! - [`config`]: the generator parameters ([`config::PanamaConfig`]) and their checks;
//! - [`core`]: the accelerator between the two AXI-Streams, configuration as ports;
//! - [`top`]: the NetFPGA `output_port_lookup` replacement: core + AXI-Lite registers.

pub mod config;
pub mod core;
pub mod parser;
pub mod top;
