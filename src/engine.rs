//! The `--engine` option of the `sim` commands: which simulator runs the design.

use anyhow::Result;
use clap::ValueEnum;
use std::time::{Duration, Instant};
use testbench::dut::{Dut, NativeDut, VerilatorDut};
use testbench::verilator::BuildOptions;

/// Which engine runs the design.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Engine {
    /// wirespeed's own simulator.
    Native,
    /// Verilator on the emitted Verilog.
    Verilator,
    /// Both, one after the other on the same stimulus: the results must be
    /// identical; reports both speeds and their ratio.
    Both,
}

impl Engine {
    /// The engines this choice runs, in order (native first).
    pub fn engines(self) -> &'static [Engine] {
        match self {
            Engine::Both => &[Engine::Native, Engine::Verilator],
            Engine::Native => &[Engine::Native],
            Engine::Verilator => &[Engine::Verilator],
        }
    }

    /// A model of `module` on this engine (native for `Both`) and the time it took
    /// to build (native compile; Verilator build, or load from its cache).
    pub fn build(self, module: &hdl::Module) -> Result<(Box<dyn Dut>, Duration)> {
        let started = Instant::now();
        let dut: Box<dyn Dut> = match self {
            Engine::Verilator => Box::new(VerilatorDut::new(module, &BuildOptions::default())?),
            Engine::Native | Engine::Both => Box::new(NativeDut::new(module)?),
        };
        Ok((dut, started.elapsed()))
    }
}

/// The line comparing two engines' speeds over the same `cycles`.
pub fn speed_line(
    cycles: u64,
    native: (Duration, Duration),
    verilator: (Duration, Duration),
) -> String {
    let rate = |wall: Duration| cycles as f64 / wall.as_secs_f64().max(1e-9);
    format!(
        "engines: identical results; native {:.0} cycles/s (build {:.2} s), Verilator {:.0} \
         cycles/s (build {:.1} s), native ÷ Verilator {:.2}",
        rate(native.0),
        native.1.as_secs_f64(),
        rate(verilator.0),
        verilator.1.as_secs_f64(),
        rate(native.0) / rate(verilator.0)
    )
}
