//! A measured run of the accelerator core (`wirespeed sim panama`): frames through
//! the core on one engine or both, the engines compared, and what the run shows —
//! throughput against the raw rate, bypass and aggregation latencies, counters,
//! the output as pcap files, and the verdict against the golden model (frame for
//! frame) or, once a worker ran past its buffer, against the invariants.

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use hdl::panama::config::PanamaConfig;
use hdl::panama::core::{panama_core, OUTPUT_HELD_CYCLES};

use super::config::{GoldenConfig, SlotConfig};
use super::counters::Counters;
use super::frame::{classify, Class};
use super::golden::{run as golden_run, GoldenOutcome, InFrame};
use super::invariants::{self, Report, RunRecord};
use super::pcap::{write_pcap, write_pcapng_stamped, Stamped};
use super::system::{
    check, read_counters, run as run_system, split_outputs, CheckSummary, Observed, RunEnd,
    StreamDriver, Traffic,
};
use crate::dut::{Dut, DutError, Recorder, Replayed};
use crate::engine::{replay_on_each, DomainClock, Engine, EngineTime, Progress};
use crate::turns::{take_turns, Player};

/// Cycles without any movement after which a run ends.
const QUIET_CYCLES: u64 = 5_000;
/// Cycles between two progress reports.
const PROGRESS_EVERY: u64 = 4096;

/// How a measured run drives the core.
#[derive(Clone, Debug)]
pub struct MeasureOptions {
    /// The engine(s) to run.
    pub engine: Engine,
    /// Probability that a new input beat is offered in a cycle (1 = line rate).
    pub load: f64,
    /// Probability that the output is not ready in a cycle.
    pub back_pressure: f64,
    /// A VCD of the core's ports; when several engines run, the later ones' go
    /// beside it as `<name>.<engine>.vcd`.
    pub vcd: Option<PathBuf>,
    /// Rounds of the whole run (at least 1), each every engine once on the same
    /// traffic, for the spread of the speeds
    /// ([`repeat_report`](crate::engine::repeat_report)); the later rounds are
    /// checked against the first and write no VCD.
    pub repeat: u32,
}

/// One engine's run.
pub struct EngineRun {
    /// The engine, its build and its run time (simulation only, building excluded).
    pub time: EngineTime,
    /// The stream driver, with every output frame and the input timing.
    pub driver: StreamDriver,
    /// Cycles simulated.
    pub cycles: u64,
    /// How the run ended.
    pub end: RunEnd,
    /// The core's counters at the end, in `hdl::panama::core::COUNTERS` order.
    pub counters: Vec<(&'static str, u64)>,
}

impl EngineRun {
    /// The `output_held_cycles` counter at the end: the cycles the downstream
    /// refused an offered output beat, by the hardware's count.
    pub fn output_held_counted(&self) -> u64 {
        let held = self.counters.iter().find(|(n, _)| *n == OUTPUT_HELD_CYCLES);
        held.map_or(0, |&(_, v)| v)
    }
}

/// A measured run: the golden model's outcome and each engine's run (the same
/// frames out at the same cycles on every engine).
pub struct Measured {
    /// The golden model's configuration.
    pub golden_cfg: GoldenConfig,
    /// The input frames.
    pub frames: Vec<InFrame>,
    /// The golden model's outcome.
    pub golden: GoldenOutcome,
    /// Frames the golden model expects out.
    pub expected: usize,
    /// Input beats of the traffic.
    pub beats: u64,
    /// Cycles after which the run gives up.
    pub bound: u64,
    /// The runs of the first round, native first.
    pub runs: Vec<EngineRun>,
    /// Every round's times, the first round's included (see
    /// [`MeasureOptions::repeat`]).
    pub rounds: Vec<Vec<EngineTime>>,
    /// When several engines ran: the first engine's calls on the core recorded in
    /// one more run and replayed on every engine (a fresh model each) without the
    /// test bench, in engine order (see [`Script`](crate::dut::Script)).
    pub engine_only: Vec<Replayed>,
}

/// Throughput of a run against the datapath's raw rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Throughput {
    /// Raw rate of the datapath, Gb/s (width × clock).
    pub raw_gbps: f64,
    /// Input rate over the input span, Gb/s.
    pub input_gbps: f64,
    /// Input beats per cycle of the input span, percent.
    pub input_percent: f64,
    /// Input beats taken.
    pub input_beats: u64,
    /// Cycles from the first input beat to the last.
    pub input_span: u64,
    /// Output rate over the output span, Gb/s.
    pub output_gbps: f64,
    /// Output beats per cycle of the output span, percent.
    pub output_percent: f64,
    /// Output beats.
    pub output_beats: u64,
    /// Cycles from the first output beat to the last.
    pub output_span: u64,
}

/// What the outputs were checked against.
pub enum Verdict {
    /// Frame for frame equal to the golden model.
    Golden(CheckSummary),
    /// A worker ran more than `fifo_depth` packets ahead at input frame `at`, so
    /// drops on full buffers depend on timing: the invariants hold.
    Invariants {
        /// The input frame from which the golden model no longer fixes the output.
        at: usize,
        /// The invariants' report.
        report: Report,
    },
}

/// min / median / p99 / max of `v` (sorted in place), or `None` when empty.
pub fn stats(v: &mut [u64]) -> Option<(u64, u64, u64, u64)> {
    if v.is_empty() {
        return None;
    }
    v.sort_unstable();
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    Some((v[0], at(0.5), at(0.99), v[v.len() - 1]))
}

/// Slots for every (job, tree) of the aggregation packets in `frames`, over the
/// ports they come from; an error if `cfg` has fewer slots or lacks a port.
pub fn slots_from(
    frames: &[InFrame],
    cfg: &PanamaConfig,
    agg_udp_port: u16,
) -> Result<Vec<SlotConfig>> {
    let mut jobs: BTreeMap<(u16, u8), u8> = BTreeMap::new();
    for f in frames {
        if let Class::Aggregation(p) =
            classify(&f.bytes, agg_udp_port, cfg.max_payload_bytes as usize)
        {
            let port = cfg
                .port_codes
                .iter()
                .position(|&c| c == f.src)
                .ok_or_else(|| {
                    anyhow!(
                        "a frame comes from port code {:#04x}, which the instance does not have",
                        f.src
                    )
                })?;
            *jobs.entry((p.header.job_id, p.header.tree_id)).or_default() |= 1 << port;
        }
    }
    if jobs.len() > cfg.slots as usize {
        bail!(
            "the pcap has {} (job, tree) pairs but the instance has {} slots (--set slots=N)",
            jobs.len(),
            cfg.slots
        );
    }
    Ok(jobs
        .into_iter()
        .map(|((job_id, tree_id), ports)| SlotConfig {
            enable: true,
            job_id,
            tree_id,
            ports,
        })
        .collect())
}

/// Runs `frames` through the core of `cfg` on every engine of `options` (clock
/// periods from `clocks`), each engine with the same random draws from `rng`; an
/// error if the engines disagree. `progress` sees each engine's progress.
pub fn measure(
    cfg: &PanamaConfig,
    clocks: &[DomainClock],
    golden_cfg: GoldenConfig,
    frames: Vec<InFrame>,
    options: &MeasureOptions,
    rng: impl rand::Rng + Clone + Sync,
    progress: &mut dyn FnMut(Progress),
) -> Result<Measured> {
    let golden = golden_run(&golden_cfg, &frames)?;
    let expected = golden.frames_out();
    let module = panama_core(cfg)?;
    let beats: u64 = frames
        .iter()
        .map(|f| f.bytes.len().div_ceil(cfg.beat_bytes() as usize).max(1) as u64)
        .sum();
    let mut measured = Measured {
        golden_cfg,
        frames,
        golden,
        expected,
        beats,
        bound: 50 * beats + 20_000,
        runs: Vec::new(),
        rounds: Vec::new(),
        engine_only: Vec::new(),
    };
    let expected_out = measured.golden.overflow_at.is_none().then_some(expected);
    let engines = options.engine.engines();
    for round in 0..options.repeat.max(1) {
        let vcd = |k: usize| match &options.vcd {
            _ if round > 0 => None,
            Some(path) if k > 0 => Some(path.with_extension(format!("{}.vcd", engines[k].name()))),
            other => other.clone(),
        };
        let run = |k: usize, player: Player<'_>, progress: &mut dyn FnMut(Progress)| {
            let engine = (engines[k], clocks, vcd(k));
            let system = (cfg.data_width, expected_out);
            let rng = rng.clone();
            run_engine(
                &module, &measured, system, engine, player, options, rng, progress,
            )
        };
        // The engines take turns (see `turns`); the first shows its progress.
        let runs = take_turns(
            engines.len(),
            |player| run(0, player, progress),
            |k, player| run(k, player, &mut |_| {}),
        );
        let mut times = Vec::new();
        for run in runs {
            let run = run?;
            if let Some(first) = measured.runs.first() {
                check_same(first, &run).with_context(|| format!("round {}", round + 1))?;
            }
            times.push(run.time);
            if round == 0 {
                measured.runs.push(run);
            }
        }
        measured.rounds.push(times);
    }
    if options.engine.compares() {
        let run = (cfg.data_width, expected_out, clocks);
        measured.engine_only = engine_only(&module, &measured, run, options, rng)?;
    }
    Ok(measured)
}

/// Runs the traffic of `m` once more on the first engine of `options` with its
/// calls recorded (untimed, checked against the first run), then replays them on
/// every engine, each on a fresh model.
fn engine_only(
    module: &hdl::Module,
    m: &Measured,
    (data_width, expected_out, clocks): (u32, Option<usize>, &[DomainClock]),
    options: &MeasureOptions,
    mut rng: impl rand::Rng,
) -> Result<Vec<Replayed>> {
    let engines = options.engine.engines();
    let (mut dut, _) = engines[0].build(module, false, clocks)?;
    let mut recorder = Recorder::new(dut.as_mut());
    let (driver, cycles, _) = m.drive(
        &mut recorder,
        (data_width, expected_out),
        options,
        &mut rng,
        |_, _| {},
    )?;
    let first = m.run();
    if differs(first, &driver, cycles) {
        bail!(
            "the recorded run on the {} engine differs from the first: {} vs {} frames out in {} vs {} cycles",
            engines[0],
            driver.outputs.len(),
            first.driver.outputs.len(),
            cycles,
            first.cycles
        );
    }
    replay_on_each(engines, module, clocks, &recorder.finish())
}

/// An error unless `run` put out the same frames in the same cycles as `first`.
fn check_same(first: &EngineRun, run: &EngineRun) -> Result<()> {
    if differs(first, &run.driver, run.cycles) {
        bail!(
            "the {} engine differs from the {} engine: {} vs {} frames out in {} vs {} cycles",
            run.time.engine,
            first.time.engine,
            run.driver.outputs.len(),
            first.driver.outputs.len(),
            run.cycles,
            first.cycles
        );
    }
    Ok(())
}

/// True unless `driver` saw the same frames out as `first`, in `cycles` as it did.
fn differs(first: &EngineRun, driver: &StreamDriver, cycles: u64) -> bool {
    driver.outputs != first.driver.outputs || cycles != first.cycles
}

/// Runs the traffic of `m` on one engine (`engine`, its clocks and VCD path) with
/// its place in the round's rotation, `player` (see `turns`): the model is built
/// in its first turn, and the run's time is that of its turns.
#[allow(clippy::too_many_arguments)]
fn run_engine(
    module: &hdl::Module,
    m: &Measured,
    system: (u32, Option<usize>),
    (engine, clocks, vcd): (Engine, &[DomainClock], Option<PathBuf>),
    mut player: Player,
    options: &MeasureOptions,
    mut rng: impl rand::Rng,
    progress: &mut dyn FnMut(Progress),
) -> Result<EngineRun> {
    let (mut dut, build) = engine.build(module, options.vcd.is_some(), clocks)?;
    if let Some(path) = &vcd {
        dut.trace_open(path)?;
    }
    progress(Progress::Start {
        engine,
        total: m.beats,
    });
    player.restart_clock();
    let (driver, cycles, end) = m.drive(dut.as_mut(), system, options, &mut rng, |_, cycle| {
        if cycle % PROGRESS_EVERY == 0 {
            progress(Progress::At(cycle.min(m.beats)));
        }
        player.ran(1);
    })?;
    progress(Progress::Done);
    let wall = player.played();
    if vcd.is_some() {
        dut.trace_close()?;
    }
    let counters = read_counters(dut.as_mut())?;
    Ok(EngineRun {
        time: EngineTime {
            engine,
            build,
            wall,
            compiled: dut.compiled_start(),
        },
        driver,
        cycles,
        end,
        counters,
    })
}

impl Measured {
    /// Drives the traffic through the core on `dut` (the system run of a
    /// `data_width`-bit datapath that ends after `expected_out` frames out, if
    /// known) with the load and back-pressure of `options` drawn from `rng`;
    /// `on_cycle` sees every cycle.
    fn drive(
        &self,
        dut: &mut dyn Dut,
        (data_width, expected_out): (u32, Option<usize>),
        options: &MeasureOptions,
        rng: &mut impl rand::Rng,
        on_cycle: impl FnMut(&mut dyn Dut, u64),
    ) -> Result<(StreamDriver, u64, RunEnd), DutError> {
        let traffic = Traffic {
            p_valid: options.load,
            p_ready: 1.0 - options.back_pressure,
        };
        run_system(
            dut,
            &self.golden_cfg,
            &self.frames,
            data_width,
            traffic,
            rng,
            expected_out,
            QUIET_CYCLES,
            self.bound,
            on_cycle,
        )
    }

    /// The first engine's run (every engine's is the same).
    pub fn run(&self) -> &EngineRun {
        &self.runs[0]
    }

    /// Throughput of the first engine's run on a `data_width`-bit datapath at `mhz`.
    pub fn throughput(&self, data_width: u32, mhz: f64) -> Throughput {
        let d = &self.run().driver;
        let raw_gbps = f64::from(data_width) * mhz / 1000.0;
        let bytes_in: usize = self
            .frames
            .iter()
            .zip(&d.last_accepted)
            .filter(|(_, t)| t.is_some())
            .map(|(f, _)| f.bytes.len())
            .sum();
        let bytes_out: usize = d.outputs.iter().map(|o| o.bytes.len()).sum();
        let (first, last) = d.input_span();
        let input_span = last - first + 1;
        let (out_first, out_last) = d.output_span();
        let output_span = out_last.saturating_sub(out_first) + 1;
        let gbps = |bytes: usize, span: u64| bytes as f64 * 8.0 / (span as f64 / mhz) / 1000.0;
        let input_beats = d.accepted_beats() as u64;
        Throughput {
            raw_gbps,
            input_gbps: gbps(bytes_in, input_span),
            input_percent: 100.0 * input_beats as f64 / input_span as f64,
            input_beats,
            input_span,
            output_gbps: gbps(bytes_out, output_span),
            output_percent: 100.0 * d.output_beats as f64 / output_span as f64,
            output_beats: d.output_beats,
            output_span,
        }
    }

    /// Latencies in cycles of the bypass frames (first input beat → first output
    /// beat) and of the aggregations (last input beat of the last packet → first
    /// result beat), in the golden model's order.
    pub fn latencies(&self) -> (Vec<u64>, Vec<u64>) {
        let d = &self.run().driver;
        let outputs = split_outputs(&self.golden_cfg, &d.outputs);
        let mut bypass: BTreeMap<u8, VecDeque<&Observed>> = outputs
            .bypass
            .into_iter()
            .map(|(k, v)| (k, VecDeque::from(v)))
            .collect();
        let mut results: BTreeMap<(usize, u8), VecDeque<&Observed>> = outputs
            .results
            .into_iter()
            .map(|(k, v)| (k, VecDeque::from(v)))
            .collect();
        let bypass_lat = self
            .golden
            .bypass
            .iter()
            .filter_map(|f| {
                let o = bypass.get_mut(&f.dst)?.pop_front()?;
                Some(o.first_cycle - d.first_accepted[f.input]?)
            })
            .collect();
        let agg_lat = self
            .golden
            .aggregations
            .iter()
            .filter_map(|a| {
                let last_in = a.inputs.iter().filter_map(|&i| d.last_accepted[i]).max()?;
                let first_out = a
                    .results
                    .iter()
                    .filter_map(|f| results.get_mut(&(a.slot, f.dst))?.pop_front())
                    .map(|o| o.first_cycle)
                    .min()?;
                Some(first_out.saturating_sub(last_in))
            })
            .collect();
        (bypass_lat, agg_lat)
    }

    /// Writes the output frames as one classic pcap per port of `port_codes` into
    /// `dir` (`port<i>.pcap`), each frame stamped with its first output cycle at
    /// `mhz`; returns each file with its frame count and port code.
    pub fn write_pcaps(
        &self,
        dir: &Path,
        port_codes: &[u8],
        mhz: f64,
    ) -> Result<Vec<(PathBuf, usize, u8)>> {
        std::fs::create_dir_all(dir).with_context(|| format!("--pcap-out {}", dir.display()))?;
        let mut written = Vec::with_capacity(port_codes.len());
        for (i, &code) in port_codes.iter().enumerate() {
            let stamped: Vec<Stamped> = self
                .run()
                .driver
                .outputs
                .iter()
                .filter(|o| o.dst & code != 0)
                .map(|o| Stamped {
                    time: cycle_time(o.first_cycle, mhz),
                    bytes: o.bytes.clone(),
                })
                .collect();
            let path = dir.join(format!("port{i}.pcap"));
            write_pcap(&path, &stamped)?;
            written.push((path, stamped.len(), code));
        }
        Ok(written)
    }

    /// Writes the offered frames, in the order they entered, to the pcapng `path`:
    /// one interface per port of `port_codes` (its description the port's one-hot
    /// code), each frame stamped with the cycle its first beat was accepted at
    /// `mhz` (a frame never accepted takes the stamp before it). `sim panama
    /// --pcap-in` replays the file as the same traffic.
    pub fn write_input_pcapng(&self, path: &Path, port_codes: &[u8], mhz: f64) -> Result<()> {
        let accepted = &self.run().driver.first_accepted;
        let mut stamps = Vec::with_capacity(self.frames.len());
        let mut last = 0;
        for i in 0..self.frames.len() {
            last = accepted.get(i).copied().flatten().unwrap_or(last);
            stamps.push(cycle_time(last, mhz));
        }
        write_pcapng_stamped(path, port_codes, &self.frames, |i| stamps[i])?;
        Ok(())
    }

    /// The outputs checked: frame for frame against the golden model, or against
    /// the invariants from the frame where a worker ran past its buffer (`cfg`
    /// gives the input-stall bound), and the `output_held_cycles` counter against
    /// the bench's count of refused output beats; an error says what does not
    /// hold.
    pub fn verdict(&self, cfg: &PanamaConfig) -> Result<Verdict> {
        let run = self.run();
        let (counted, refused) = (run.output_held_counted(), run.driver.output_held);
        if counted != refused {
            bail!("output_held_cycles {counted} ≠ {refused} cycles the output was refused");
        }
        let Some(at) = self.golden.overflow_at else {
            let summary = check(&self.golden_cfg, &self.golden, &run.driver.outputs)
                .map_err(|e| anyhow!("output differs from the golden model: {e}"))?;
            return Ok(Verdict::Golden(summary));
        };
        let (report, _) = invariants::check(
            &self.golden_cfg,
            &RunRecord {
                wire: &self.frames,
                observed: &run.driver.outputs,
                counters: Counters::from_named(&run.counters),
                drained: false,
                longest_stall: run.driver.longest_stall,
                stall_bound: cfg.input_stall_bound(self.golden_cfg.full_wait),
                output_held: (counted, refused),
            },
        )?;
        let violations = report.violations();
        if !violations.is_empty() {
            bail!("invariants fail: {}", violations.join("; "));
        }
        Ok(Verdict::Invariants { at, report })
    }
}

/// The time of cycle `cycle` of a clock at `mhz`, from cycle 0: a capture's stamp.
fn cycle_time(cycle: u64, mhz: f64) -> Duration {
    Duration::from_nanos((cycle as f64 * 1000.0 / mhz) as u64)
}
