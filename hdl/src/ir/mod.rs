//! The IR: a netlist of typed, width-checked nets, registers, memories and module
//! instances. Every back end (Verilog, simulator, board files) reads this and only this.
//! It knows nothing of the designs built with it.

pub mod decided;
mod error;
pub mod mutate;
mod names;
mod netlist;
mod ranges;
mod validate;

pub use error::{HdlError, HdlErrorKind};
pub use names::{is_generated_name, is_legal_identifier};
pub use netlist::*;
pub use validate::comb_order;
pub(crate) use validate::validate;
