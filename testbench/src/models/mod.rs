//! Reference models of the `hdl::blocks` blocks: plain Rust, written from each block's
//! documented behaviour and independent of the HDL, for the simulators to be checked
//! against.

pub mod count_action;
pub mod counter;
pub mod fifo;
pub mod skid;
