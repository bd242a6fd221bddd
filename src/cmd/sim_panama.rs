//! `wirespeed sim panama`: traffic through the PANAMA accelerator on the native
//! simulator (or Verilator), at the board's clock, with throughput, latency and
//! counters, every output checked against the golden model.

use super::EngineArg;
use crate::catalog;
use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use hdl::panama::config::PanamaConfig;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use testbench::engine::{
    board_clocks, engine_only_report, repeat_report, speed_report, verilator_options, DomainClock,
    EngineTime, Setting,
};
use testbench::panama::chaos::{ChaosConfig, CHAOS_FULL_WAIT, CHAOS_SLOT_TIMEOUT};
use testbench::panama::config::{GoldenConfig, SlotConfig, DEFAULT_AGG_UDP_PORT};
use testbench::panama::golden::InFrame;
use testbench::panama::measure::{measure, slots_from, stats, MeasureOptions, Throughput, Verdict};
use testbench::panama::pcap::{read_pcapng, read_port_captures, CaptureFormat};
use testbench::panama::scenario::{background_bytes, traffic_fits, Scenario, MAX_BACKGROUND};
use testbench::panama::system::{golden_config, RunEnd};
use testbench::panama::traffic::background_frame;
use testbench::rng::seeded;

/// The options that make traffic of their own, which the options shaping generated
/// traffic conflict with.
const GENERATED_TRAFFIC_EXCLUDES: [&str; 2] = ["pcap_in", "chaos"];

/// Random bypass frames sent with `--jobs 0` unless `--bypass-frames` says otherwise.
const DEFAULT_BYPASS_FRAMES: usize = 1_000;

/// Options of `wirespeed sim panama`.
#[derive(Args, Debug)]
pub struct PanamaArgs {
    /// NetFPGA board (sets the clock, bus width and ports; default: the `panama`
    /// block's, netfpga-sume).
    #[arg(long)]
    board: Option<String>,
    /// A generator parameter of the `panama` block, key=value (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// Jobs sharing the accelerator (job ids 100, 101, …; job j in slot j); 0 runs
    /// bypass traffic only (`--bypass-frames`).
    #[arg(long, default_value_t = 2, conflicts_with_all = GENERATED_TRAFFIC_EXCLUDES)]
    jobs: usize,
    /// With `--jobs 0`: how many random bypass frames (60–1514 bytes) to send
    /// (default 1000).
    #[arg(long, value_name = "N", conflicts_with_all = GENERATED_TRAFFIC_EXCLUDES)]
    bypass_frames: Option<usize>,
    /// Workers per job (one per port, ports 0..W; default: every port).
    #[arg(long, conflicts_with_all = GENERATED_TRAFFIC_EXCLUDES)]
    workers: Option<usize>,
    /// Tensor length per worker, in elements (at least 1; rounded up to whole
    /// packets of --payload bytes, and the report says how many were sent).
    #[arg(long, default_value_t = 16_384, conflicts_with_all = GENERATED_TRAFFIC_EXCLUDES)]
    elements: usize,
    /// Payload bytes per aggregation packet (default: max_payload_bytes).
    #[arg(long, conflicts_with_all = GENERATED_TRAFFIC_EXCLUDES)]
    payload: Option<usize>,
    /// Background (bypass) frames per aggregation packet: 1.0 gives a 50/50 mix of frames.
    #[arg(long, default_value_t = 0.0, conflicts_with_all = GENERATED_TRAFFIC_EXCLUDES)]
    background: f64,
    /// Probability that a new input beat is offered in a cycle (1 = line rate).
    #[arg(long, default_value_t = 1.0)]
    load: f64,
    /// Probability that the output is not ready in a cycle (random back-pressure;
    /// default 0, with --chaos 0.1).
    #[arg(long)]
    back_pressure: Option<f64>,
    /// Probability that a worker's stream gets one fault (malformed, gap, duplicate, …).
    #[arg(long, default_value_t = 0.0, conflicts_with_all = GENERATED_TRAFFIC_EXCLUDES)]
    faults: f64,
    /// Input traffic from capture files; slots are set up for every (job, tree) found.
    /// `FILE`: a pcapng with one interface per port (if_description = one-hot code,
    /// see README) or a classic pcap whose frames all enter on port 0.
    /// `PORT=FILE` (repeatable): every frame of FILE (pcap or pcapng) enters on PORT,
    /// a port index (`0`, `1`, …) or a one-hot code (`0x04`); files are merged by
    /// timestamp. `--pcap-out`'s `DIR/input.pcapng` replays a run's traffic.
    /// The options that shape generated traffic (--jobs, --bypass-frames,
    /// --workers, --elements, --payload, --background, --faults,
    /// --random-interleave) are refused with it.
    #[arg(long = "pcap-in", value_name = "[PORT=]FILE")]
    pcap_in: Vec<PcapIn>,
    /// Write the output frames as one pcap per destination port into DIR
    /// (`port<i>.pcap`), and the offered frames as `input.pcapng` (one interface
    /// per port, in arrival order), which `--pcap-in` replays.
    #[arg(long, value_name = "DIR")]
    pcap_out: Option<PathBuf>,
    /// Write a VCD of the accelerator's ports, time in ps at the board's datapath clock
    /// (SUME: 5000 ps per cycle); with `--engine both`, Verilator's goes beside it as
    /// `<name>.verilator.vcd` (Verilator is then built with tracing).
    #[arg(long, value_name = "FILE")]
    vcd: Option<PathBuf>,
    /// Interleave workers at random instead of taking turns packet by packet (a
    /// worker more than fifo_depth packets ahead costs full_wait cycles and loses
    /// packets; the run is then checked by invariants).
    #[arg(long, conflicts_with_all = GENERATED_TRAFFIC_EXCLUDES)]
    random_interleave: bool,
    /// Random seed (traffic, interleaving, back-pressure).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Run the chaos mix instead (dead, restarted and runaway workers, oversize,
    /// unterminated, empty, runt and garbage frames, host traffic, …) and check
    /// the invariants; takes --frames, --load, --back-pressure, --seed, --engine
    /// and refuses the options that shape generated traffic.
    #[arg(long)]
    chaos: bool,
    /// With --chaos: frames to generate (a run sends a few more: every worker gets
    /// at least one packet an epoch, and an unterminated last frame one after it).
    #[arg(long, default_value_t = 10_000, requires = "chaos")]
    frames: usize,
    /// With --chaos: the `full_wait` register (cycles; short, so drops happen;
    /// decimal, 0x hexadecimal or 0b binary).
    #[arg(long, default_value_t = CHAOS_FULL_WAIT, requires = "chaos", value_parser = crate::catalog::parse_u32)]
    full_wait: u32,
    /// With --chaos: the `slot_timeout` register (cycles; short, so flushes
    /// happen; decimal, 0x hexadecimal or 0b binary).
    #[arg(long, default_value_t = CHAOS_SLOT_TIMEOUT, requires = "chaos", value_parser = crate::catalog::parse_u32)]
    slot_timeout: u32,
    /// Simulation engine.
    #[arg(long, value_enum, default_value_t = EngineArg::Native)]
    engine: EngineArg,
    /// Run the traffic N times, every engine of --engine once per round on a fresh
    /// model, and print the median and range of each engine's speed and of its
    /// per-round ratio to Verilator's (the rest of the report is the first
    /// round's; later rounds must agree with it).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000), conflicts_with = "chaos")]
    repeat: u32,
    /// Write a perf map of the native engine's compiled code to
    /// `/tmp/perf-<pid>.map` (the path is printed), so that `perf report` names its
    /// functions instead of showing bare addresses (see `scripts/engine-time`).
    #[arg(long)]
    perf_map: bool,
}

/// Which port a `--pcap-in` file's frames enter on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortSpec {
    /// A port index, 0..ports-1 (decimal).
    Index(usize),
    /// A one-hot tuser port code (hexadecimal with `0x`, e.g. `0x04`).
    Code(u8),
}

/// One `--pcap-in` argument: `FILE`, or `PORT=FILE`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PcapIn {
    /// The port every frame enters on; `None`: from the file (pcapng) or port 0 (pcap).
    pub port: Option<PortSpec>,
    /// The capture file.
    pub path: PathBuf,
}

/// Why a `--pcap-in` argument does not parse.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum PcapInError {
    /// The file name is empty.
    #[error("no file given (expected FILE or PORT=FILE)")]
    NoFile,
    /// `0x..` is not a one-hot 8-bit code.
    #[error("port `{0}` is not a one-hot 8-bit port code like 0x04")]
    BadCode(String),
}

impl FromStr for PcapIn {
    type Err = PcapInError;

    /// `FILE` or `PORT=FILE`: the text before the first `=` is a port if it is a
    /// decimal index or a `0x` code; otherwise the whole text is the file name.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let port = match s.split_once('=') {
            Some((p, file)) => {
                let spec = if let Some(hex) = p.strip_prefix("0x").or(p.strip_prefix("0X")) {
                    let code = u8::from_str_radix(hex, 16)
                        .ok()
                        .filter(|c| c.count_ones() == 1)
                        .ok_or_else(|| PcapInError::BadCode(p.to_string()))?;
                    Some(PortSpec::Code(code))
                } else if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) {
                    p.parse().ok().map(PortSpec::Index)
                } else {
                    None
                };
                spec.map(|spec| (spec, file))
            }
            None => None,
        };
        let (port, path) = match port {
            Some((spec, file)) => (Some(spec), file),
            None => (None, s),
        };
        if path.is_empty() {
            return Err(PcapInError::NoFile);
        }
        Ok(PcapIn {
            port,
            path: PathBuf::from(path),
        })
    }
}

/// The input frames of `inputs` (see [`PcapIn`]) on an instance with `port_codes`.
pub fn read_pcap_inputs(inputs: &[PcapIn], port_codes: &[u8]) -> Result<Vec<InFrame>> {
    if let [PcapIn { port: None, path }] = inputs {
        let frames = match CaptureFormat::of_file(path)? {
            CaptureFormat::PcapNg => read_pcapng(path)?,
            CaptureFormat::Pcap => {
                let Some(&code) = port_codes.first() else {
                    bail!("--pcap-in {}: the instance has no ports", path.display());
                };
                read_port_captures(&[(code, path.as_path())])?
            }
        };
        return Ok(frames);
    }
    let mut files = Vec::with_capacity(inputs.len());
    for input in inputs {
        let path = input.path.as_path();
        let code = match input.port {
            None => bail!(
                "--pcap-in {}: with several --pcap-in, each needs a port (PORT=FILE)",
                path.display()
            ),
            Some(PortSpec::Index(i)) => *port_codes.get(i).ok_or_else(|| {
                anyhow!(
                    "--pcap-in {i}={}: port {i} does not exist (the instance has ports 0..{})",
                    path.display(),
                    port_codes.len().saturating_sub(1)
                )
            })?,
            Some(PortSpec::Code(c)) => {
                if !port_codes.contains(&c) {
                    bail!(
                        "--pcap-in {c:#04x}={}: the instance has no port with code {c:#04x} (codes {port_codes:02x?})",
                        path.display()
                    );
                }
                c
            }
        };
        files.push((code, path));
    }
    Ok(read_port_captures(&files)?)
}

/// One line of latency statistics.
fn print_stats(what: &str, mut v: Vec<u64>) {
    match stats(&mut v) {
        Some((min, med, p99, max)) => println!(
            "  {what:<22} {:>6} frames: min {min}, median {med}, p99 {p99}, max {max} cycles",
            v.len()
        ),
        None => println!("  {what:<22} (none)"),
    }
}

/// Runs `wirespeed sim panama`.
pub fn run(args: &PanamaArgs) -> Result<()> {
    super::start_perf_map(args.perf_map, args.engine)?;
    let (_, settings) = catalog::find_with_settings("panama", &args.sets, args.board.as_deref())?;
    let (cfg, board) = catalog::panama_config(&settings)?;
    let mhz = board
        .clock("datapath")
        .map(|c| c.mhz)
        .ok_or_else(|| anyhow!("board {} has no datapath clock", board.name))?;
    let back_pressure = args
        .back_pressure
        .unwrap_or(if args.chaos { 0.1 } else { 0.0 });
    for (name, p) in [
        ("load", args.load),
        ("back-pressure", back_pressure),
        ("faults", args.faults),
    ] {
        if !(0.0..=1.0).contains(&p) {
            bail!("--{name} {p}: a probability in 0..=1 is needed");
        }
    }
    if args.load == 0.0 || back_pressure == 1.0 {
        bail!("--load 0 or --back-pressure 1: nothing would ever move");
    }
    if !(0.0..=MAX_BACKGROUND).contains(&args.background) {
        bail!(
            "--background {}: give a number of background frames per aggregation packet in 0..={MAX_BACKGROUND}",
            args.background
        );
    }
    if args.chaos {
        if args.frames == 0 {
            bail!("--frames 0: a chaos run needs at least one frame");
        }
        for (option, given) in [
            ("--pcap-in", !args.pcap_in.is_empty()),
            ("--pcap-out", args.pcap_out.is_some()),
            ("--vcd", args.vcd.is_some()),
        ] {
            if given {
                bail!("{option} is not available with --chaos (it makes its own traffic and writes no traces)");
            }
        }
        let chaos = ChaosConfig {
            load: args.load,
            back_pressure,
            full_wait: args.full_wait,
            slot_timeout: args.slot_timeout,
            ..ChaosConfig::new(args.frames, args.seed)
        };
        return super::sim_chaos::run(
            &cfg,
            &board.name,
            mhz,
            &panama_clocks(&board)?,
            &chaos,
            args.engine.into(),
        );
    }
    super::check_trace_path(args.vcd.as_deref())?;
    let created = match &args.pcap_out {
        Some(dir) => prepare_pcap_folder(dir)?,
        None => None,
    };
    let result = run_traffic(args, &cfg, &board, mhz);
    if let (Err(_), Some(dir)) = (&result, created) {
        // Only an empty folder goes: a run that wrote captures before it failed keeps them.
        let _ = std::fs::remove_dir(dir);
    }
    result
}

/// The run of `sim panama` past its checks: the traffic (from `--pcap-in` or
/// generated) through the accelerator, reported.
fn run_traffic(
    args: &PanamaArgs,
    cfg: &PanamaConfig,
    board: &gen::board::Board,
    mhz: f64,
) -> Result<()> {
    let mut golden_cfg = golden_config(cfg, vec![]);
    let (frames, tensor, rng) = if !args.pcap_in.is_empty() {
        let frames = read_pcap_inputs(&args.pcap_in, &cfg.port_codes)?;
        golden_cfg.slots = slots_from(&frames, cfg, golden_cfg.agg_udp_port)?;
        golden_cfg
            .slots
            .resize(cfg.slots as usize, SlotConfig::DISABLED);
        (frames, None, seeded("wirespeed sim panama", args.seed))
    } else {
        let TrafficShape {
            workers,
            payload,
            packets,
        } = traffic_shape(args, cfg)?;
        let mut scenario = Scenario::uniform(args.jobs, workers, packets, payload, cfg.format);
        scenario.background = args.background;
        scenario.faults = args.faults;
        scenario.round_robin = !args.random_interleave;
        if args.jobs == 0 {
            let n = args.bypass_frames.unwrap_or(DEFAULT_BYPASS_FRAMES);
            traffic_fits(n as u64, background_bytes(n as u64))
                .map_err(|e| anyhow!("--bypass-frames {n}: {e}"))?;
            let mut rng = seeded("wirespeed sim panama", args.seed);
            let ports = &cfg.port_codes;
            golden_cfg.slots = scenario.slot_configs(cfg.slots as usize);
            return run_frames(
                args,
                cfg,
                board,
                mhz,
                golden_cfg,
                Traffic {
                    frames: (0..n)
                        .map(|_| InFrame {
                            src: ports[rand::Rng::gen_range(&mut rng, 0..ports.len())],
                            bytes: background_frame(&mut rng, DEFAULT_AGG_UDP_PORT),
                        })
                        .collect(),
                    tensor: None,
                },
                rng,
            );
        }
        scenario.check(&golden_cfg).map_err(|e| {
            anyhow!(
                "--elements {} ({} jobs × {workers} workers, --payload {payload}, --background {}): {e}",
                args.elements,
                args.jobs,
                args.background
            )
        })?;
        let mut rng = seeded("wirespeed sim panama", args.seed);
        golden_cfg.slots = scenario.slot_configs(cfg.slots as usize);
        let tensor = Tensor {
            jobs: scenario.jobs.len(),
            workers,
            packets,
            elements: scenario.jobs.first().map_or(0, |j| j.elements),
        };
        (scenario.frames(&mut rng, &golden_cfg), Some(tensor), rng)
    };
    let traffic = Traffic { frames, tensor };
    run_frames(args, cfg, board, mhz, golden_cfg, traffic, rng)
}

/// The file in `--pcap-out`'s folder that holds the offered traffic (pcapng, one
/// interface per port), which `--pcap-in` replays.
const INPUT_CAPTURE: &str = "input.pcapng";

/// Makes `--pcap-out`'s folder before the run, so that a path that cannot be one
/// is refused before anything is simulated; the folder when this made it (for the
/// caller to remove if the run fails before writing into it).
fn prepare_pcap_folder(dir: &Path) -> Result<Option<&Path>> {
    if dir.exists() {
        if !dir.is_dir() {
            bail!(
                "--pcap-out {}: exists and is not a folder; give a folder for the port captures",
                dir.display()
            );
        }
        return Ok(None);
    }
    std::fs::create_dir_all(dir)
        .with_context(|| format!("--pcap-out {}: cannot create the folder", dir.display()))?;
    Ok(Some(dir))
}

/// The `port<i>.pcap` files in `dir` for ports at or beyond `ports`: captures an
/// earlier run on a board with more ports left there, which this run did not write.
fn stale_pcaps(dir: &Path, ports: usize) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut stale: Vec<(usize, PathBuf)> = entries
        .filter_map(|e| {
            let path = e.ok()?.path();
            let name = path.file_name()?.to_str()?;
            let index: usize = name
                .strip_prefix("port")?
                .strip_suffix(".pcap")?
                .parse()
                .ok()?;
            (index >= ports).then_some((index, path))
        })
        .collect();
    stale.sort();
    stale.into_iter().map(|(_, p)| p).collect()
}

/// Generated aggregation traffic's shape, checked against the instance.
struct TrafficShape {
    /// Workers per job.
    workers: usize,
    /// Payload bytes per aggregation packet.
    payload: usize,
    /// Packets per worker.
    packets: usize,
}

/// The shape of the traffic `args` asks for; an error names the flag that does not
/// fit the instance `cfg`.
fn traffic_shape(args: &PanamaArgs, cfg: &PanamaConfig) -> Result<TrafficShape> {
    let port_count = cfg.port_codes.len();
    let workers = args.workers.unwrap_or(port_count);
    if !(1..=port_count).contains(&workers) {
        bail!("--workers {workers}: the instance has {port_count} ports; give 1..={port_count}");
    }
    if args.jobs > cfg.slots as usize {
        bail!("--jobs {}: the instance has {} slots", args.jobs, cfg.slots);
    }
    let payload = args.payload.unwrap_or(cfg.max_payload_bytes as usize);
    if payload == 0 || !payload.is_multiple_of(64) || payload > cfg.max_payload_bytes as usize {
        bail!(
            "--payload {payload}: a multiple of 64 up to max_payload_bytes ({})",
            cfg.max_payload_bytes
        );
    }
    if args.elements == 0 {
        bail!("--elements 0: a worker's tensor needs at least one element");
    }
    if let Some(n) = args.bypass_frames.filter(|_| args.jobs != 0) {
        bail!(
            "--bypass-frames {n}: only with --jobs 0 (with jobs, --background sets the bypass traffic)"
        );
    }
    let per_packet = payload / (cfg.format.width() as usize / 8);
    Ok(TrafficShape {
        workers,
        payload,
        packets: args.elements.div_ceil(per_packet),
    })
}

/// The frames a run sends and, for generated aggregation traffic, the tensors
/// they carry.
struct Traffic {
    frames: Vec<InFrame>,
    tensor: Option<Tensor>,
}

/// The tensors of an aggregation run: each of `workers` workers of each of
/// `jobs` jobs sends `elements` elements in `packets` packets (`--elements`
/// rounded up to whole packets).
#[derive(Clone, Copy)]
struct Tensor {
    jobs: usize,
    workers: usize,
    packets: usize,
    elements: usize,
}

/// Runs `frames` through the accelerator ([`measure`]) and prints the report (the
/// second half of [`run`]).
fn run_frames(
    args: &PanamaArgs,
    cfg: &PanamaConfig,
    board: &gen::board::Board,
    mhz: f64,
    golden_cfg: GoldenConfig,
    traffic: Traffic,
    rng: impl rand::Rng + Clone + Sync,
) -> Result<()> {
    let Traffic { frames, tensor } = traffic;
    let options = MeasureOptions {
        engine: args.engine.into(),
        load: args.load,
        back_pressure: args.back_pressure.unwrap_or(0.0),
        vcd: args.vcd.clone(),
        repeat: args.repeat,
    };
    let clocks = panama_clocks(board)?;
    let mut bar = None;
    let m = measure(cfg, &clocks, golden_cfg, frames, &options, rng, &mut |p| {
        super::show_progress(&mut bar, p, "input beats")
    })?;
    let run = m.run();
    println!(
        "PANAMA on {} ({}, {}-bit, {mhz} MHz, raw {:.1} Gb/s), {} ports, {} slots, {}{}, engine {}",
        board.name,
        board.part,
        cfg.data_width,
        f64::from(cfg.data_width) * mhz / 1000.0,
        cfg.ports(),
        cfg.slots,
        cfg.format.name(),
        if cfg.ftz { " ftz" } else { "" },
        options.engine
    );
    if let Some(t) = tensor {
        println!(
            "  tensors: {} elements in {} packets per worker (--elements {}), jobs × workers {} × {}",
            t.elements, t.packets, args.elements, t.jobs, t.workers
        );
    }
    println!(
        "  traffic: {} frames ({} aggregation results expected, {} bypass), {} beats; load {:.2}, back-pressure {:.2}",
        m.frames.len(),
        m.expected - m.golden.bypass.len(),
        m.golden.bypass.len(),
        m.beats,
        args.load,
        options.back_pressure
    );
    println!(
        "  simulated {} cycles ({:.1} µs at {mhz} MHz) in {:.2} s: {:.0} cycles/s",
        run.cycles,
        run.cycles as f64 / mhz,
        run.time.wall.as_secs_f64(),
        run.cycles as f64 / run.time.wall.as_secs_f64().max(1e-9)
    );
    if m.runs.len() > 1 {
        let times: Vec<EngineTime> = m.runs.iter().map(|r| r.time).collect();
        let setting = Setting::of(&verilator_options(args.vcd.is_some()), &times);
        let identical = "the same frames out at the same cycles";
        println!(
            "  {}",
            speed_report(run.cycles, identical, &times, &setting)
        );
    }
    if let Some(report) = repeat_report(run.cycles, &m.rounds) {
        println!("  {report}");
    }
    if let Some(report) = engine_only_report(run.cycles, &m.engine_only) {
        println!("  {report}");
    }
    print_throughput(&m.throughput(cfg.data_width, mhz), args.load);
    let (bypass_lat, agg_lat) = m.latencies();
    print_stats("bypass latency", bypass_lat);
    print_stats("aggregation latency", agg_lat);
    let line: Vec<String> = run
        .counters
        .iter()
        .map(|(n, v)| format!("{n} {v}"))
        .collect();
    println!("  counters: {}", line.join(", "));
    if let Some(dir) = &args.pcap_out {
        for (path, count, code) in m.write_pcaps(dir, &cfg.port_codes, mhz)? {
            println!(
                "  wrote {} ({count} frames to port code {code:#04x})",
                path.display()
            );
        }
        let input = dir.join(INPUT_CAPTURE);
        m.write_input_pcapng(&input, &cfg.port_codes, mhz)?;
        println!(
            "  wrote {} ({} frames offered, in order; replay with --pcap-in {})",
            input.display(),
            m.frames.len(),
            input.display()
        );
        for path in stale_pcaps(dir, cfg.port_codes.len()) {
            println!(
                "  note: {} is not from this run ({} ports here); an earlier run left it",
                path.display(),
                cfg.port_codes.len()
            );
        }
    }
    match m.verdict(cfg)? {
        Verdict::Invariants { at, report } => println!(
            "  a worker ran more than fifo_depth packets ahead at frame {at}: drops on full buffers \
             depend on timing; invariants hold ({} bypass frames out unaltered, {} results exact \
             sums, counters balance, longest input stall {} ≤ {} cycles)",
            report.bypass_out, report.results_out, report.longest_stall.0, report.longest_stall.1
        ),
        Verdict::Golden(s) => println!(
            "  golden model: {} bypass and {} result frames identical",
            s.bypass_frames, s.result_frames
        ),
    }
    if run.end == RunEnd::Timeout {
        bail!("the run did not finish in {} cycles", m.bound);
    }
    Ok(())
}

/// The offered, input and output rates.
fn print_throughput(t: &Throughput, load: f64) {
    println!(
        "  offered   {:>7.1} Gb/s ({:>5.1} % of raw)",
        t.raw_gbps * load,
        100.0 * load
    );
    println!(
        "  input     {:>7.1} Gb/s ({:>5.1} % of raw; {} beats in {} cycles)",
        t.input_gbps, t.input_percent, t.input_beats, t.input_span
    );
    println!(
        "  output    {:>7.1} Gb/s ({:>5.1} % of raw; {} beats in {} cycles)",
        t.output_gbps, t.output_percent, t.output_beats, t.output_span
    );
}

/// The core's one clock domain `clk` at the board's datapath clock.
fn panama_clocks(board: &gen::board::Board) -> Result<Vec<DomainClock>> {
    board_clocks(board, &[("clk", "datapath")])
}
