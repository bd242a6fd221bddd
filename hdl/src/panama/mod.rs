//! PANAMA: the bump-in-the-wire in-network aggregation accelerator (header parser,
//! per-job buffers, floating-point adder tree at line rate). Spec:
//! `shared/docs/PANAMA.md`.
//!
//! - [`parser`]: the header parser and classifier (frames through, metadata out).

pub mod config;
pub mod core;
pub mod parser;
pub mod top;
