#![doc = include_str!("../README.md")]
//! The `wirespeed` facade: re-exports the crates and holds the command line's catalog.

pub mod catalog;
pub mod engine;
pub mod generate;
pub mod interrupt;
pub mod lightning_sim;
pub mod sim_chaos;
pub mod sim_panama;
pub mod synth;

pub use gen;
pub use hdl;
pub use sim;

/// `count` and `noun`, plural when `count` is not 1 ("1 Verilog file", "17 Verilog
/// files").
pub fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("{count} {noun}")
    } else {
        format!("{count} {noun}s")
    }
}
