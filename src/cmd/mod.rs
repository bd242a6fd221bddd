//! The subcommands of `wirespeed`, one file each: they parse their options, call
//! the crates (the catalog, `gen`, `testbench`) and print.

pub mod gen;
pub mod list;
pub mod sim_chaos;
pub mod sim_lightning;
pub mod sim_panama;
pub mod synth;

use testbench::engine::Engine;

/// The `--engine` option of the `sim` commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum EngineArg {
    /// wirespeed's own simulator.
    Native,
    /// Verilator on the emitted Verilog.
    Verilator,
    /// Both, one after the other on the same stimulus: the results must be
    /// identical; reports both speeds and their ratio.
    Both,
}

impl From<EngineArg> for Engine {
    fn from(arg: EngineArg) -> Engine {
        match arg {
            EngineArg::Native => Engine::Native,
            EngineArg::Verilator => Engine::Verilator,
            EngineArg::Both => Engine::Both,
        }
    }
}
