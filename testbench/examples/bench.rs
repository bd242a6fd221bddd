//! Simulator benchmark, engine against engine: for a few designs, the native
//! simulator (compiled and interpreted) and Verilator run the same pre-generated
//! random stimulus through the same `Dut` calls in one process, with no test bench
//! logic in between; prints the Verilator flags with the tools' versions and the
//! machine, then time to first cycle, cold and cached, of both engines
//! in the same way (native: the median of starts into an empty code cache, the
//! program compiled and the interpreter ready while the compiled engine builds in
//! the background, and of when that engine is ready, and the median of later
//! starts from the cache, the program and the engine loaded; Verilator: a cold
//! build into an empty cache, and the median of later cached loads) and
//! steady-state cycles per second (native: on the compiled engine), with the
//! ratios to Verilator. What a process does once (its code paged in, its first
//! thread, its allocator's first pages) is paid before the first design's starts:
//! by an untimed native start of a small design, as Verilator's cold build pays it
//! before its cached loads. Each engine runs once per round, the
//! engines taking turns in 16 slices of the round's cycles (so that a change in
//! the machine's speed during a round falls on every engine alike), and the table
//! gives each rate's median and range and the median and range of the rounds'
//! ratios. The designs, the stimulus and the loop are [`testbench::bench`]'s
//! (the `bench_count` example runs the loop alone, for Valgrind to count).
//!
//! `cargo run --release -p testbench --example bench [-- --cycles N] [--repeat R]`
//! (defaults 200000 cycles, 3 rounds; `-- --help` lists the options)

use clap::Parser;
use hdl::blocks::counter;
use hdl::Module;
use sim::Backend;
use std::path::Path;
use std::time::{Duration, Instant};
use testbench::bench::{self, Stimulus};
use testbench::dut::{Dut, NativeDut, VerilatorDut};
use testbench::engine::Spread;
use testbench::verilator::BuildOptions;

/// The slices a round is cut into: the engines take turns slice by slice, so
/// that a change in the machine's speed during the round falls on every engine
/// alike.
const SLICES: usize = 16;

/// One engine's run through a round: inputs set, one clock cycle, every output
/// read, `cycles` times, made a slice at a time.
struct Run<'a> {
    dut: &'a mut dyn Dut,
    outputs: Vec<usize>,
    buf: Vec<u64>,
    /// Cycles run so far.
    done: usize,
    sink: u64,
    wall: Duration,
}

impl<'a> Run<'a> {
    /// A run of `dut` from a reset.
    fn new(dut: &'a mut dyn Dut) -> Run<'a> {
        dut.reset(2);
        let (outputs, buf) = bench::outputs(dut);
        Run {
            dut,
            outputs,
            buf,
            done: 0,
            sink: 0,
            wall: Duration::ZERO,
        }
    }

    /// The next `cycles` cycles of `stim`, timed.
    fn slice(&mut self, stim: &Stimulus, cycles: usize) {
        let start = Instant::now();
        let reads = (self.outputs.as_slice(), self.buf.as_mut_slice());
        self.sink ^= bench::drive(self.dut, stim, self.done, cycles, reads);
        self.wall += start.elapsed();
        self.done += cycles;
    }
}

/// One round: every engine of `duts` runs `cycles` cycles of `stim` from a reset,
/// the engines taking turns in [`SLICES`] slices; each engine's cycles per second.
fn round(duts: [&mut dyn Dut; 3], stim: &Stimulus, cycles: usize) -> [f64; 3] {
    let mut runs = duts.map(Run::new);
    let slice = cycles.div_ceil(SLICES);
    for k in 0..SLICES {
        let n = slice.min(cycles - (k * slice).min(cycles));
        for run in &mut runs {
            run.slice(stim, n);
        }
    }
    runs.map(|run| {
        std::hint::black_box(run.sink);
        run.done as f64 / run.wall.as_secs_f64()
    })
}

/// How many times each engine's cached start is timed on a design (the median
/// is reported, each start after a cold one into the same cache, so that both
/// engines' cached starts are timed in the same state of the process).
const STARTS: usize = 5;

/// The medians of [`STARTS`] native starts of `module`, each into an empty code
/// cache of its own (the first into `first`, the others into directories under
/// `dir`): when the first cycle could run (the program compiled) and when the
/// compiled engine was ready. Returns the first start's model too, its program and
/// engine stored in `first`.
fn cold_starts(module: &Module, dir: &Path, first: &sim::CodeCache) -> (NativeDut, [Duration; 2]) {
    let mut kept = None;
    let (mut colds, mut readies) = (Vec::new(), Vec::new());
    for k in 0..STARTS {
        let cache = match k {
            0 => first.clone(),
            _ => sim::CodeCache::new(dir.join(format!("cold-{k}"))),
        };
        let t = Instant::now();
        let mut dut =
            NativeDut::with_code_cache(module, &cache).expect("the native simulator compiles it");
        colds.push(t.elapsed());
        dut.simulator()
            .finish_compile()
            .expect("the compiled engine builds it");
        readies.push(t.elapsed());
        kept.get_or_insert(dut);
    }
    let dut = kept.expect("at least one start");
    (dut, [median(colds), median(readies)])
}

/// The median of `times` (at least one).
fn median(times: Vec<Duration>) -> Duration {
    let secs: Vec<f64> = times.iter().map(Duration::as_secs_f64).collect();
    Duration::from_secs_f64(Spread::of(&secs).expect("at least one time").median)
}

/// The first native start of the process, untimed: a small design into a cache of
/// its own, its compiled engine built, so that no design's timed start pays for
/// what a process does once.
fn warm_up(dir: &Path) {
    let module = counter::up_counter(8).expect("valid parameters");
    let cache = sim::CodeCache::new(dir.join("warm-up"));
    let mut dut =
        NativeDut::with_code_cache(&module, &cache).expect("the native simulator compiles it");
    dut.simulator()
        .finish_compile()
        .expect("the compiled engine builds it");
}

/// The median time of [`STARTS`] calls of `start`, each model handed to `done`
/// (untimed) before the next start.
fn median_start<T>(start: impl Fn() -> T, done: impl Fn(T)) -> Duration {
    let times = (0..STARTS)
        .map(|_| {
            let t = Instant::now();
            let model = start();
            let time = t.elapsed();
            done(model);
            time
        })
        .collect();
    median(times)
}

/// `d` in milliseconds, to a tenth (a hundredth below one).
fn ms(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1e3;
    match ms < 1.0 {
        true => format!("{ms:.2} ms"),
        false => format!("{ms:.1} ms"),
    }
}

/// The median of `xs` (at least one round) and, over several, its range, as
/// `median (low–high)`.
fn median_range(xs: &[f64], show: impl Fn(f64) -> String) -> String {
    let s = Spread::of(xs).expect("at least one round");
    match xs.len() {
        1 => show(s.median),
        _ => format!("{} ({}–{})", show(s.median), show(s.min), show(s.max)),
    }
}

/// The command line.
#[derive(Parser)]
#[command(about = "Native simulator against Verilator on the bench designs")]
struct Args {
    /// Cycles each engine runs a round.
    #[arg(long, default_value_t = 200_000, value_parser = clap::value_parser!(u64).range(1..))]
    cycles: u64,
    /// Rounds.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..))]
    repeat: u64,
}

fn main() {
    let args = Args::parse();
    let (cycles, rounds) = (args.cycles as usize, args.repeat as usize);
    let cold_cache = std::env::temp_dir().join(format!("wirespeed-bench-{}", std::process::id()));
    let cold_opts = BuildOptions {
        cache_dir: Some(cold_cache.clone()),
        ..BuildOptions::default()
    };
    println!(
        "{cycles} cycles per run; inputs set and outputs read every cycle through the Dut trait; \
         {rounds} rounds, each engine once per round, the engines taking turns in {SLICES} \
         slices of a round: medians (range)"
    );
    let setting = testbench::engine::Setting::with_verilator(&cold_opts);
    if let Some((flags, tools)) = &setting.verilator {
        println!("Verilator flags: {flags} ({tools})");
    }
    println!("Measured on {}\n", setting.host);
    warm_up(&cold_cache);
    println!("| design | native first cycle: cold (program compiled) / compiled engine ready / cached (medians of {STARTS}) | Verilator first cycle: cold build / cached load (median of {STARTS}) | native cycles/s | interpreted cycles/s | Verilator cycles/s | native ÷ Verilator | interpreted ÷ Verilator |");
    println!("|---|---|---|---|---|---|---|---|");
    for case in bench::cases() {
        let native_dir = cold_cache.join(format!("native-{}", case.name));
        let native_cache = sim::CodeCache::new(native_dir.join("cache"));
        let native_start = || {
            NativeDut::with_code_cache(&case.module, &native_cache)
                .expect("the native simulator compiles it")
        };
        let (mut native, [native_cold, native_compiled]) =
            cold_starts(&case.module, &native_dir, &native_cache);
        let native_cached = median_start(native_start, |mut dut| {
            assert!(dut.simulator().program_from_cache());
            dut.simulator()
                .finish_compile()
                .expect("the compiled engine loads");
        });

        let t = Instant::now();
        drop(VerilatorDut::new(&case.module, &cold_opts).expect("Verilator builds it"));
        let cold = t.elapsed();
        let verilator_start =
            || VerilatorDut::new(&case.module, &cold_opts).expect("Verilator loads it");
        let cached = median_start(verilator_start, drop);
        let mut verilator = verilator_start();

        let mut interpreted = NativeDut::with_backend(&case.module, Backend::Interpreted)
            .expect("the native simulator compiles it");

        let stim = bench::stimulus(&native);
        let mut rates = [vec![], vec![], vec![]];
        for _ in 0..rounds {
            let round = round(
                [&mut native, &mut interpreted, &mut verilator],
                &stim,
                cycles,
            );
            for (rates, rate) in rates.iter_mut().zip(round) {
                rates.push(rate);
            }
        }
        let ratios = |engine: usize| -> Vec<f64> {
            (rates[engine].iter().zip(&rates[2]))
                .map(|(e, v)| e / v)
                .collect()
        };
        let rate = |x: f64| format!("{x:.0}");
        let ratio = |x: f64| format!("{x:.2}");
        println!(
            "| {} | {} / {} / {} | {:.1} s / {} | {} | {} | {} | {} | {} |",
            case.name,
            ms(native_cold),
            ms(native_compiled),
            ms(native_cached),
            cold.as_secs_f64(),
            ms(cached),
            median_range(&rates[0], rate),
            median_range(&rates[1], rate),
            median_range(&rates[2], rate),
            median_range(&ratios(0), ratio),
            median_range(&ratios(1), ratio),
        );
    }
    let _ = std::fs::remove_dir_all(&cold_cache);
}
