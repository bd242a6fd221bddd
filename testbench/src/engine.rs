//! Which simulator runs a design (`wirespeed sim --engine`): the native simulator,
//! Verilator, or both on the same stimulus; and the board clocks a design's clock
//! domains run at.

use crate::dut::{CompiledStart, Dut, NativeDut, Replayed, Script, VerilatorDut};
use crate::host::Host;
use crate::turns::SLICE_CYCLES;
use crate::verilator::BuildOptions;
use anyhow::{anyhow, bail, Context, Result};
use gen::board::Board;
use sim::{Backend, Takeover};
use std::time::{Duration, Instant};

/// Which engine runs the design.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// wirespeed's own simulator, on its compiled engine (native code generated at
    /// load time; the interpreter on a host it does not support).
    Native,
    /// [`Native`](Self::Native), its compiled engines built (or loaded from the
    /// code cache) on the calling thread when due rather than in the background:
    /// the engine before the first cycle, the one tuned from its profile at the
    /// settle that completes the profile (see [`sim::Takeover::Waiting`]). A slower
    /// start, but every run of a design runs each cycle on the same engine, as
    /// counted profiles need.
    Compiled,
    /// wirespeed's own simulator on its interpreter, the reference engine.
    Interpreted,
    /// Verilator on the emitted Verilog.
    Verilator,
    /// Native and Verilator, one after the other on the same stimulus: the results
    /// must be identical; reports both speeds and their ratio.
    Both,
    /// Native, interpreted and Verilator, one after the other on the same stimulus:
    /// the results must be identical; reports every speed against Verilator's.
    All,
}

impl std::fmt::Display for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Engine {
    /// The engines this choice runs, in order (Verilator last).
    pub fn engines(self) -> &'static [Engine] {
        match self {
            Engine::Both => &[Engine::Native, Engine::Verilator],
            Engine::All => &[Engine::Native, Engine::Interpreted, Engine::Verilator],
            Engine::Native => &[Engine::Native],
            Engine::Compiled => &[Engine::Compiled],
            Engine::Interpreted => &[Engine::Interpreted],
            Engine::Verilator => &[Engine::Verilator],
        }
    }

    /// The name the command line and reports use.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Native => "native",
            Engine::Compiled => "compiled",
            Engine::Interpreted => "interpreted",
            Engine::Verilator => "verilator",
            Engine::Both => "both",
            Engine::All => "all",
        }
    }

    /// True if this choice runs several engines whose results must agree.
    pub fn compares(self) -> bool {
        self.engines().len() > 1
    }

    /// A model of `module` on this engine (the first of [`engines`](Self::engines)) with every clock
    /// domain's period set from `clocks` before the first edge, and the time it took
    /// to build (native compile; Verilator build, or load from its cache). `trace`
    /// builds the Verilator model with VCD tracing compiled in (a separate, slower
    /// build); the native simulator always can trace.
    pub fn build(
        self,
        module: &hdl::Module,
        trace: bool,
        clocks: &[DomainClock],
    ) -> Result<(Box<dyn Dut>, Duration)> {
        let started = Instant::now();
        let mut dut: Box<dyn Dut> = match self {
            Engine::Verilator => Box::new(VerilatorDut::new(module, &verilator_options(trace))?),
            Engine::Interpreted => Box::new(NativeDut::with_backend(module, Backend::Interpreted)?),
            Engine::Compiled => Box::new(NativeDut::with_takeover(module, Takeover::Waiting)?),
            Engine::Native | Engine::Both | Engine::All => Box::new(NativeDut::new(module)?),
        };
        for domain in dut.domains().to_vec() {
            let clock = clocks.iter().find(|c| c.domain == domain).ok_or_else(|| {
                anyhow!(
                    "clock domain `{domain}` of `{}` has no board clock to take its period from",
                    module.name
                )
            })?;
            dut.set_clock_period(&domain, clock.period_ps)
                .with_context(|| format!("clock domain `{domain}` ({} clock)", clock.role))?;
        }
        Ok((dut, started.elapsed()))
    }
}

/// The slices a replay on several engines is cut into: the engines take turns
/// slice by slice, so that a change in the machine's speed during the replays
/// (this project's VM moves by up to a factor of two within seconds) falls on
/// every engine alike instead of on whichever ran then.
pub const REPLAY_SLICES: usize = 16;

/// Replays `script` (a recorded run of `module`) on each of `engines`, each on a
/// fresh model with its clocks from `clocks` (Verilator's without tracing), the
/// models taking turns in [`REPLAY_SLICES`] slices of the script's calls: the
/// engine-only times, in the order of `engines`.
pub fn replay_on_each(
    engines: &[Engine],
    module: &hdl::Module,
    clocks: &[DomainClock],
    script: &Script,
) -> Result<Vec<Replayed>> {
    let mut duts = (engines.iter())
        .map(|&engine| Ok(engine.build(module, false, clocks)?.0))
        .collect::<Result<Vec<_>>>()?;
    let mut replays = (duts.iter().zip(engines))
        .map(|(dut, engine)| {
            (script.start(dut.as_ref()))
                .with_context(|| format!("replaying the recorded run on the {engine} engine"))
        })
        .collect::<Result<Vec<_>>>()?;
    let slice = script.calls().div_ceil(REPLAY_SLICES).max(1);
    while replays.iter().any(|r| !r.done()) {
        for ((replay, dut), engine) in replays.iter_mut().zip(&mut duts).zip(engines) {
            (replay.advance(dut.as_mut(), slice))
                .with_context(|| format!("replaying the recorded run on the {engine} engine"))?;
        }
    }
    (replays.into_iter().zip(engines))
        .map(|(replay, &engine)| {
            (replay.finish(engine))
                .with_context(|| format!("replaying the recorded run on the {engine} engine"))
        })
        .collect()
}

/// Where a run on an engine is, for a progress display.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    /// `engine` starts a run of `total` steps (input beats, frames).
    Start {
        /// The engine.
        engine: Engine,
        /// Steps of the whole run.
        total: u64,
    },
    /// Steps done so far.
    At(u64),
    /// The engine finished.
    Done,
}

/// A clock domain of a simulated design and its period, from a board clock role.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DomainClock {
    /// The design's clock domain (e.g. `clk`).
    pub domain: String,
    /// The board clock role it runs at (e.g. `datapath`, `dac`).
    pub role: String,
    /// Its period in picoseconds (the board frequency's period, rounded to 1 ps).
    pub period_ps: u64,
}

/// The period in picoseconds of a clock at `mhz`, rounded to the nearest ps
/// (200 MHz → 5000).
pub fn period_ps(mhz: f64) -> u64 {
    (1e6 / mhz).round() as u64
}

/// The clocks of `bindings` (design domain, board clock role) on `board`; an error
/// names a role the board lacks.
pub fn board_clocks(board: &Board, bindings: &[(&str, &str)]) -> Result<Vec<DomainClock>> {
    bindings
        .iter()
        .map(|&(domain, role)| {
            let Some(clock) = board.clock(role) else {
                bail!(
                    "board {} has no `{role}` clock for clock domain `{domain}` (it has {})",
                    board.name,
                    board.roles().join(", ")
                );
            };
            let period_ps = period_ps(clock.mhz);
            if period_ps < 2 {
                bail!(
                    "board {}: the `{role}` clock ({} MHz) is faster than the 2 ps a simulated clock period needs",
                    board.name,
                    clock.mhz
                );
            }
            Ok(DomainClock {
                domain: domain.to_string(),
                role: role.to_string(),
                period_ps,
            })
        })
        .collect()
}

/// The options [`Engine::build`] builds Verilator models with (`trace`: VCD tracing
/// compiled in); [`Setting::of`] describes them for [`speed_report`].
pub fn verilator_options(trace: bool) -> BuildOptions {
    if trace {
        BuildOptions::with_trace()
    } else {
        BuildOptions::default()
    }
}

/// How long one engine took: to its first cycle (compile, build or cached load)
/// and for the run itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EngineTime {
    /// The engine.
    pub engine: Engine,
    /// Time to the first cycle: the native compile, or the Verilator build (or the
    /// load from its cache).
    pub build: Duration,
    /// Wall time of the run (stimulus, checks and engine together: end to end).
    pub wall: Duration,
    /// For the native engine, when its compiled engine took over (see
    /// [`Dut::compiled_start`]).
    pub compiled: Option<CompiledStart>,
}

/// What an engine comparison was measured with, printed beneath it: how the
/// Verilator model was built (when one ran) and the machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setting {
    /// The Verilator model's flags ([`BuildOptions::describe`]) and the versions
    /// of Verilator and the C++ compiler ([`BuildOptions::toolchain`]); `None`
    /// when no run was Verilator's.
    pub verilator: Option<(String, String)>,
    /// The machine.
    pub host: Host,
}

impl Setting {
    /// The setting of `runs` on this machine, their Verilator models built with
    /// `options`. The tools are asked their versions only if a run was
    /// Verilator's; a tool that does not answer is named in their place.
    pub fn of(options: &BuildOptions, runs: &[EngineTime]) -> Setting {
        match runs.iter().any(|r| r.engine == Engine::Verilator) {
            true => Setting::with_verilator(options),
            false => Setting {
                verilator: None,
                host: Host::detect(),
            },
        }
    }

    /// The setting on this machine of Verilator models built with `options`.
    pub fn with_verilator(options: &BuildOptions) -> Setting {
        let tools = (options.toolchain()).unwrap_or_else(|e| format!("tool versions unknown: {e}"));
        Setting {
            verilator: Some((options.describe(), tools)),
            host: Host::detect(),
        }
    }
}

/// The lines comparing engines that ran the same `cycles` with identical results
/// (`identical` says which: "the same frames out at the same cycles"): per engine
/// its cycles per second, time to first cycle and speed relative to
/// Verilator (when Verilator ran), then the [`Setting`]: how the Verilator model was
/// built and the machine.
pub fn speed_report(
    cycles: u64,
    identical: &str,
    runs: &[EngineTime],
    setting: &Setting,
) -> String {
    let rate = |wall: Duration| cycles as f64 / wall.as_secs_f64().max(1e-9);
    let verilator = runs.iter().find(|r| r.engine == Engine::Verilator);
    let mut out = format!("engines: identical results over {cycles} cycles ({identical})");
    for r in runs {
        let first = if r.build.as_secs_f64() < 0.1 {
            format!("{:.1} ms", r.build.as_secs_f64() * 1e3)
        } else {
            format!("{:.2} s", r.build.as_secs_f64())
        };
        out += &format!(
            "\n    {:<12} {:>10.0} cycles/s end to end, first cycle after {first}",
            r.engine.name(),
            rate(r.wall)
        );
        if let Some(v) = verilator.filter(|v| v.engine != r.engine) {
            out += &format!(
                "; {:.2}× Verilator's speed, first cycle in {:.1} % of its time",
                rate(r.wall) / rate(v.wall),
                100.0 * r.build.as_secs_f64() / v.build.as_secs_f64().max(1e-9)
            );
        }
        if let Some(c) = r.compiled {
            let program = match c.program_cached {
                true => "loaded from the code cache",
                false => "compiled",
            };
            out += &format!("\n    {:<12} program {program} before the first cycle", "");
            let how = match (c.cached, c.cycle) {
                (true, _) => "loaded from the code cache",
                (false, 0) => "built before the first cycle",
                (false, _) => "built alongside the interpreter",
            };
            let n = |k: usize, noun: &str| match k {
                1 => format!("1 {noun}"),
                k => format!("{k} {noun}s"),
            };
            let loops = match c.shape.run_calls {
                0 => String::new(),
                _ => format!(" ({})", c.shape.loops),
            };
            out += &format!(
                "\n    {:<12} compiled engine {how} in {:.1} ms, running from cycle {}: {}, {}, {}{loops}",
                "",
                c.build.as_secs_f64() * 1e3,
                c.cycle,
                n(c.shape.records, "straight-line record"),
                n(c.shape.vector_runs, "inline vector run"),
                n(c.shape.run_calls, "vector-loop call")
            );
            if let Some(t) = c.tuned {
                let how = if t.cached {
                    "loaded from the code cache"
                } else {
                    "built alongside"
                };
                out += &format!(
                    "\n    {:<12} tuned from its profile ({how} in {:.1} ms), running from \
                     cycle {}: {} of {} partitions untested",
                    "",
                    t.build.as_secs_f64() * 1e3,
                    t.cycle,
                    t.untested,
                    t.partitions
                );
            }
        }
    }
    if let Some((flags, tools)) = &setting.verilator {
        out += &format!("\n    Verilator built with `{flags}` ({tools})");
    }
    out += &format!("\n    measured on {}", setting.host);
    out
}

/// The median, least and greatest of a set of measurements.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    /// The median (of an even count, the mean of the middle two).
    pub median: f64,
    /// The least.
    pub min: f64,
    /// The greatest.
    pub max: f64,
}

impl Spread {
    /// The spread of `values`; `None` when there are none.
    pub fn of(values: &[f64]) -> Option<Spread> {
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let (&min, &max) = (v.first()?, v.last()?);
        let mid = v.len() / 2;
        let median = if v.len() % 2 == 1 {
            v[mid]
        } else {
            (v[mid - 1] + v[mid]) / 2.0
        };
        Some(Spread { median, min, max })
    }
}

/// The lines summing up a benchmark repeated over several rounds (`--repeat N`),
/// each round every engine once on the same stimulus (`rounds[r]`, in the order of
/// [`Engine::engines`]) over `cycles` cycles: per engine the median and range of
/// its cycles per second, and per engine beside Verilator the median and range of
/// its per-round ratio to Verilator's rate. A round's ratio compares two runs made
/// one after the other, so it moves less with the machine's load than either rate.
/// `None` for fewer than two rounds.
pub fn repeat_report(cycles: u64, rounds: &[Vec<EngineTime>]) -> Option<String> {
    if rounds.len() < 2 {
        return None;
    }
    let rate = |t: &EngineTime| cycles as f64 / t.wall.as_secs_f64().max(1e-9);
    let engines: Vec<Engine> = rounds[0].iter().map(|t| t.engine).collect();
    let rates = |e: Engine| -> Vec<f64> {
        rounds
            .iter()
            .flat_map(|r| r.iter().filter(|t| t.engine == e).map(rate))
            .collect()
    };
    let mut out = format!(
        "over {} rounds (every engine once per round on a fresh model, the engines taking \
         turns every {SLICE_CYCLES} cycles):",
        rounds.len()
    );
    for &e in &engines {
        if let Some(s) = Spread::of(&rates(e)) {
            out += &format!(
                "\n    {:<12} {:>10.0} cycles/s median ({:.0}–{:.0})",
                e.name(),
                s.median,
                s.min,
                s.max
            );
        }
    }
    let verilator = rates(Engine::Verilator);
    for &e in engines.iter().filter(|&&e| e != Engine::Verilator) {
        let ratios: Vec<f64> = rates(e)
            .iter()
            .zip(&verilator)
            .map(|(a, v)| a / v)
            .collect();
        if let Some(s) = Spread::of(&ratios) {
            out += &format!(
                "\n    {:<12} {:.2}× Verilator's speed, median of the rounds' ratios ({:.2}–{:.2})",
                e.name(),
                s.median,
                s.min,
                s.max
            );
        }
    }
    Some(out)
}

/// The lines of the engine-only comparison over `cycles` cycles: a run's calls on
/// the design replayed on each engine without the test bench (see [`Script`] and
/// [`replay_on_each`]), per engine its cycles per second and, beside Verilator, the
/// ratio to Verilator's. `None` without replays.
pub fn engine_only_report(cycles: u64, replays: &[Replayed]) -> Option<String> {
    if replays.is_empty() {
        return None;
    }
    let rate = |r: &Replayed| cycles as f64 / r.wall.as_secs_f64().max(1e-9);
    let verilator = replays.iter().find(|r| r.engine == Engine::Verilator);
    let mut out = format!(
        "engine only (the run's calls on the design replayed on a fresh model per engine, \
         the engines taking turns in {REPLAY_SLICES} slices; no test bench):"
    );
    for r in replays {
        out += &format!(
            "
    {:<12} {:>10.0} cycles/s",
            r.engine.name(),
            rate(r)
        );
        if let Some(v) = verilator.filter(|v| v.engine != r.engine) {
            out += &format!("; {:.2}× Verilator's speed", rate(r) / rate(v));
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dut::{CodeShape, TunedStart};

    #[test]
    fn the_report_says_when_the_compiled_engine_took_over() {
        let ms = Duration::from_millis;
        let mut runs = [
            EngineTime {
                engine: Engine::Native,
                build: ms(4),
                wall: ms(50),
                compiled: Some(CompiledStart {
                    cycle: 2865,
                    program_cached: false,
                    build: Duration::from_micros(28_700),
                    cached: false,
                    tuned: None,
                    shape: CodeShape {
                        records: 645,
                        vector_runs: 9,
                        run_calls: 1,
                        loops: sim::VectorLoops::Avx2,
                    },
                }),
            },
            EngineTime {
                engine: Engine::Verilator,
                build: ms(80),
                wall: ms(100),
                compiled: None,
            },
        ];
        let setting = Setting {
            verilator: Some(("verilator -O3".into(), "Verilator 5.006; g++ 12.2.0".into())),
            host: Host::from_cpuinfo("model name : AMD EPYC\n", 2),
        };
        let has = |runs: &[EngineTime], line: &str| {
            let report = speed_report(10_000, "the same frames", runs, &setting);
            assert!(report.contains(line), "{line}\nnot in\n{report}");
            report
        };
        // 10,000 cycles in 50 and 100 ms; first cycle 4 of 80 ms.
        has(&runs, "native           200000 cycles/s end to end, first cycle after 4.0 ms; 2.00× Verilator's speed, first cycle in 5.0 % of its time");
        let report = has(
            &runs,
            "compiled engine built alongside the interpreter in 28.7 ms, running from cycle 2865",
        );
        assert_eq!(report.matches("compiled engine").count(), 1, "{report}");
        has(&runs, "program compiled before the first cycle");
        has(
            &runs,
            "running from cycle 2865: 645 straight-line records, 9 inline vector runs, \
             1 vector-loop call (AVX2)",
        );
        let cached = CompiledStart {
            cycle: 0,
            build: Duration::from_micros(1_300),
            cached: true,
            program_cached: true,
            tuned: None,
            shape: CodeShape::default(),
        };
        runs[0].compiled = Some(cached);
        let report = has(
            &runs,
            "compiled engine loaded from the code cache in 1.3 ms, running from cycle 0",
        );
        // No vector-loop call: no instruction set to name.
        assert!(report.contains("0 vector-loop calls\n"), "{report}");
        assert!(report.contains("program loaded from the code cache before the first cycle"));
        runs[0].compiled = Some(CompiledStart {
            cached: false,
            ..cached
        });
        has(
            &runs,
            "compiled engine built before the first cycle in 1.3 ms, running from cycle 0",
        );
        assert!(!has(&runs, "running from cycle 0").contains("tuned"));
        let tuned = TunedStart {
            cycle: 4100,
            build: Duration::from_micros(10_700),
            cached: false,
            untested: 40,
            partitions: 139,
        };
        runs[0].compiled = Some(CompiledStart {
            tuned: Some(tuned),
            ..cached
        });
        has(
            &runs,
            "tuned from its profile (built alongside in 10.7 ms), running from cycle 4100: \
             40 of 139 partitions untested",
        );
    }

    #[test]
    fn the_report_names_the_verilator_build_and_the_machine() {
        let run = |engine| EngineTime {
            engine,
            build: Duration::from_millis(1),
            wall: Duration::from_millis(10),
            compiled: None,
        };
        let host = Host::from_cpuinfo("model name : AMD EPYC\ncpu family : 25\nmodel : 17\n", 2);
        let setting = Setting {
            verilator: Some(("verilator -O3".into(), "Verilator 5.006; g++ 12.2.0".into())),
            host: host.clone(),
        };
        let runs = [run(Engine::Native), run(Engine::Verilator)];
        let report = speed_report(1000, "the same frames", &runs, &setting);
        assert!(
            report.starts_with("engines: identical results over 1000 cycles (the same frames)\n")
        );
        let tail: Vec<&str> = report.lines().rev().take(2).collect();
        assert_eq!(
            tail,
            [
                "    measured on AMD EPYC (family 25, model 17), 2 logical CPUs",
                "    Verilator built with `verilator -O3` (Verilator 5.006; g++ 12.2.0)",
            ]
        );
        // Without a Verilator run, only the machine.
        let native_only = Setting {
            verilator: None,
            host,
        };
        let runs = [run(Engine::Native), run(Engine::Interpreted)];
        let report = speed_report(1000, "the same frames", &runs, &native_only);
        assert!(!report.contains("Verilator built"), "{report}");
        assert!(report.ends_with("measured on AMD EPYC (family 25, model 17), 2 logical CPUs"));
        // A setting taken from runs without Verilator does not ask for its version.
        assert_eq!(Setting::of(&BuildOptions::default(), &runs).verilator, None);
    }

    #[test]
    fn spreads_and_repeat_reports() {
        let s = Spread::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min, s.max), (2.0, 1.0, 3.0));
        assert_eq!(Spread::of(&[4.0, 1.0, 2.0, 10.0]).unwrap().median, 3.0);
        assert_eq!(Spread::of(&[]), None);
        let round = |native_ms, verilator_ms| {
            [
                (Engine::Native, native_ms),
                (Engine::Verilator, verilator_ms),
            ]
            .map(|(engine, ms)| EngineTime {
                engine,
                build: Duration::from_millis(1),
                wall: Duration::from_millis(ms),
                compiled: None,
            })
            .to_vec()
        };
        assert_eq!(repeat_report(1000, &[round(50, 100)]), None);
        // 10,000 cycles: native at 200, 100 and 250 k/s; Verilator at 100, 100
        // and 50 k/s; the rounds' ratios 2, 1 and 5.
        let rounds = [round(50, 100), round(100, 100), round(40, 200)];
        let report = repeat_report(10_000, &rounds).unwrap();
        for line in [
            "over 3 rounds",
            "native           200000 cycles/s median (100000–250000)",
            "verilator        100000 cycles/s median (50000–100000)",
            "native       2.00× Verilator's speed, median of the rounds' ratios (1.00–5.00)",
        ] {
            assert!(report.contains(line), "{line}\nnot in\n{report}");
        }
    }

    #[test]
    fn engine_only_reports() {
        assert_eq!(engine_only_report(1000, &[]), None);
        let replay = |engine, ms| Replayed {
            engine,
            wall: Duration::from_millis(ms),
        };
        // 10,000 cycles: native in 40 ms (250 k/s), Verilator in 100 ms (100 k/s).
        let replays = [replay(Engine::Native, 40), replay(Engine::Verilator, 100)];
        let report = engine_only_report(10_000, &replays).unwrap();
        for line in [
            "engine only",
            "native           250000 cycles/s; 2.50× Verilator's speed",
            "verilator        100000 cycles/s",
        ] {
            assert!(report.contains(line), "{line}\nnot in\n{report}");
        }
        assert!(
            !report.contains("verilator        100000 cycles/s;"),
            "{report}"
        );
    }

    #[test]
    fn native_duts_say_from_which_cycle_their_compiled_engine_ran() {
        let m = hdl::blocks::counter::up_counter(8).unwrap();
        let mut interpreted = NativeDut::with_backend(&m, Backend::Interpreted).unwrap();
        interpreted.step_cycles(3);
        assert_eq!(interpreted.compiled_start(), None);
        let mut compiled = NativeDut::with_backend(&m, Backend::Compiled).unwrap();
        compiled.step_cycles(3);
        assert_eq!(compiled.compiled_start().map(|c| c.cycle), Some(0));
        let shape = compiled.compiled_start().expect("compiled").shape;
        let stats = compiled.simulator().compile_stats().expect("compiled");
        assert_eq!(
            (shape.records, shape.vector_runs, shape.run_calls),
            (stats.records, stats.vector_runs, stats.runs)
        );
        assert_eq!(shape.loops, sim::vector_loops());
        assert!(shape.records > 0, "a counter is straight-line records");
        let mut tiered = NativeDut::new(&m).unwrap();
        tiered.step_cycles(3);
        tiered.simulator().finish_compile().unwrap();
        let start = tiered.compiled_start().expect("built and switched to");
        assert!(start.cycle <= 3, "{start:?}");
        assert_eq!(start.tuned, None, "3 cycles are too few to tune");
        // Past the profile's window (from cycle 10, 10 settles), the tuned
        // engine takes over (in the background: waited for here).
        tiered.simulator().set_tune_after(Some(10));
        tiered.step_cycles(25);
        tiered.simulator().finish_compile().unwrap();
        let tuned = tiered.compiled_start().and_then(|c| c.tuned);
        let tuned = tuned.expect("tuned after 10 settles");
        assert!(
            (20..=28).contains(&tuned.cycle),
            "after the profile's window: {tuned:?}"
        );
        assert!(tuned.untested <= tuned.partitions && tuned.partitions > 0);
    }

    /// `--engine compiled` waits for each engine where `native` starts on the
    /// interpreter: compiled from the first cycle, tuned at the settle that
    /// completes the profile, with no wait for a background build.
    #[test]
    fn the_compiled_engine_choice_switches_engines_without_background_builds() {
        let m = hdl::blocks::counter::up_counter(8).unwrap();
        let clocks = [DomainClock {
            domain: "clk".into(),
            role: "test".into(),
            period_ps: 4000,
        }];
        let (mut dut, _) = Engine::Compiled.build(&m, false, &clocks).unwrap();
        assert_eq!(dut.engine(), Engine::Compiled);
        assert_eq!(dut.compiled_start().map(|c| c.cycle), Some(0));
        // The profile's window opens at cycle `TUNE_AFTER` and counts as many
        // settles.
        let bound = 3 * sim::TUNE_AFTER;
        let mut tuned = None;
        for cycle in 1..=bound {
            dut.step();
            if let Some(t) = dut.compiled_start().and_then(|c| c.tuned) {
                tuned = Some((cycle, t.cycle));
                break;
            }
        }
        let (seen, from) = tuned.expect("tuned once its profile was complete");
        assert!(
            from <= seen && seen <= from + 1,
            "tuned from cycle {from}, seen at {seen}: taken over when built"
        );
        assert_eq!(Engine::Compiled.engines(), &[Engine::Compiled]);
        assert!(!Engine::Compiled.compares());
    }
}
