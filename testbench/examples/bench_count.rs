//! One `bench` design's loop on one engine, for Valgrind to count: the design
//! built (the native simulator as `--engine compiled`: its compiled engine from
//! the first cycle, the one tuned from its profile from the settle that
//! completes it, both built before the simulation goes on; or Verilator at the
//! settings `bench` uses), reset, then `--cycles` cycles of `bench`'s stimulus
//! through [`testbench::bench::drive`], after 3 × `sim::TUNE_AFTER` untimed
//! cycles in the same function (past the tuning: the profile's window opens at
//! cycle `TUNE_AFTER` and counts as many settles). Counted at two
//! lengths, the difference divided by the difference in cycles is the marginal
//! cost of a cycle, warm-up and start-up cancelled:
//!
//! ```text
//! cargo build --release -p testbench --example bench_count
//! for n in 20000 40000; do
//!   valgrind --tool=callgrind --fair-sched=yes \
//!     --toggle-collect='testbench::bench::drive' --callgrind-out-file=fifo.$n \
//!     target/release/examples/bench_count --design fifo --cycles $n
//! done
//! callgrind_annotate fifo.20000 | head; callgrind_annotate fifo.40000 | head
//! ```
//!
//! `--design` takes any part of a design's name in `bench`'s table (`counter`,
//! `fifo`, `skid`, `fp32`, `PANAMA`); `--engine` is `compiled` (the default) or
//! `verilator`.

use clap::{Parser, ValueEnum};
use sim::{Backend, TUNE_AFTER};
use testbench::bench;
use testbench::dut::{Dut, NativeDut, VerilatorDut};
use testbench::verilator::BuildOptions;

/// The command line.
#[derive(Parser)]
#[command(about = "One bench design's loop on one engine, for Valgrind to count")]
struct Args {
    /// Any part of a design's name in `bench`'s table.
    #[arg(long, default_value = "fifo")]
    design: String,
    /// Cycles counted, after the warm-up.
    #[arg(long, default_value_t = 20_000)]
    cycles: usize,
    /// The engine.
    #[arg(long, value_enum, default_value_t = Engine::Compiled)]
    engine: Engine,
}

/// The engines this example runs.
#[derive(Clone, Copy, ValueEnum)]
enum Engine {
    /// The native simulator's compiled engine from the first cycle.
    Compiled,
    /// Verilator at the settings `bench` uses.
    Verilator,
}

fn main() -> anyhow::Result<()> {
    let Args {
        design,
        cycles,
        engine,
    } = Args::parse();
    let names = || bench::cases().iter().map(|c| c.name).collect::<Vec<_>>();
    let case = bench::cases()
        .into_iter()
        .find(|c| c.name.contains(&design))
        .ok_or_else(|| anyhow::anyhow!("--design {design}: none of {:?}", names()))?;
    let mut dut: Box<dyn Dut> = match engine {
        Engine::Compiled => Box::new(NativeDut::with_backend(&case.module, Backend::Compiled)?),
        Engine::Verilator => Box::new(VerilatorDut::new(&case.module, &BuildOptions::default())?),
    };
    let stim = bench::stimulus(dut.as_ref());
    let (outputs, mut buf) = bench::outputs(dut.as_ref());
    dut.reset(2);
    let warm_up = 3 * TUNE_AFTER as usize;
    let mut sink = bench::drive(dut.as_mut(), &stim, 0, warm_up, (&outputs, &mut buf));
    sink ^= bench::drive(dut.as_mut(), &stim, warm_up, cycles, (&outputs, &mut buf));
    println!(
        "{}: {cycles} cycles after {warm_up} (outputs' digest {sink:#x})",
        case.name
    );
    Ok(())
}
