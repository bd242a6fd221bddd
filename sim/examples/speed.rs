//! Native simulator speed on the benchmark designs, without Verilator: the same
//! stimulus pattern as `testbench/examples/bench.rs` (every data input set from a
//! random table, one cycle, every output read) through the `Simulator` handles.
//!
//! `cargo run --release -p sim --example speed [-- --cycles N] [--only NAME]`

use hdl::blocks::fp::{fp_add_tree, FpAddConfig, FpFormat, FpTreeConfig};
use hdl::blocks::{counter, fifo, skid};
use hdl::dsl::AxisConfig;
use hdl::ir::{Direction, PortKind};
use hdl::Module;
use rand::{Rng, SeedableRng};
use sim::Simulator;
use std::time::Instant;

fn designs() -> Vec<(&'static str, Module)> {
    let tree = FpTreeConfig {
        inputs: 4,
        lanes: 16,
        adder: FpAddConfig {
            format: FpFormat::Fp32,
            stages: 3,
            ftz: false,
        },
    };
    vec![
        ("counter", counter::up_counter(32).expect("valid")),
        ("fifo", fifo::sync_fifo(512, 512).expect("valid")),
        (
            "skid",
            skid::axis_skid(&AxisConfig::packets(1024, 128)).expect("valid"),
        ),
        ("fptree", fp_add_tree(&tree).expect("valid")),
    ]
}

fn random_words(rng: &mut impl Rng, width: u32) -> Vec<u64> {
    let n = width.div_ceil(64) as usize;
    let mut w: Vec<u64> = (0..n).map(|_| rng.gen()).collect();
    if !width.is_multiple_of(64) {
        if let Some(last) = w.last_mut() {
            *last &= (1u64 << (width % 64)) - 1;
        }
    }
    w
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let cycles: usize = arg("--cycles")
        .and_then(|n| n.parse().ok())
        .unwrap_or(100_000);
    let only = arg("--only");
    for (name, module) in designs() {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        let t = Instant::now();
        let mut s = Simulator::new(&module).expect("compiles");
        let compile = t.elapsed();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let inputs: Vec<_> = s
            .ports()
            .iter()
            .filter(|p| p.direction == Direction::Input && p.kind == PortKind::Data)
            .map(|p| (p.name.clone(), p.width))
            .collect();
        let outputs: Vec<_> = s
            .ports()
            .iter()
            .filter(|p| p.direction == Direction::Output)
            .map(|p| s.port_handle(&p.name).expect("port"))
            .collect();
        let stim: Vec<Vec<_>> = (0..1024)
            .map(|_| {
                inputs
                    .iter()
                    .map(|(n, w)| (s.port_handle(n).expect("port"), random_words(&mut rng, *w)))
                    .collect()
            })
            .collect();
        s.reset(2);
        let t = Instant::now();
        let mut sink = 0u64;
        for sets in stim.iter().cycle().take(cycles) {
            for (h, words) in sets {
                s.set_words(*h, words).expect("fits");
            }
            s.step();
            for o in &outputs {
                sink ^= s.get_words(*o).expect("readable")[0];
            }
        }
        std::hint::black_box(sink);
        let rate = cycles as f64 / t.elapsed().as_secs_f64();
        println!(
            "{name:8} compile {:7.2} ms  {rate:12.0} cycles/s  sink {sink:016x}  {s:?}",
            compile.as_secs_f64() * 1e3
        );
    }
}
