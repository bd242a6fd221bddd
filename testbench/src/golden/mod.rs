//! Golden models: what the hardware must compute, from its inputs, in plain Rust
//! that knows nothing of the HDL.

pub mod fp;
pub mod fp_cases;
