//! The chaos run: a hostile traffic mix for the accelerator — dead, restarted and
//! runaway workers, duplicate and missing `seq`, malformed and mismatched packets,
//! unknown jobs and live jobs' packets from ports outside their slots, jumbo,
//! oversize and unterminated frames, runts, empty and garbage
//! frames, host (DMA) traffic — under random load and back-pressure, checked by
//! the timing-independent [`invariants`](super::invariants).
//!
//! The run is cut into epochs of [`ChaosConfig::epoch_frames`] frames. Each epoch's
//! frames are generated from `(seed, epoch)` alone (replayable) and run as one
//! batch of a [`Session`]: fed to the same running accelerator, drained, checked,
//! and forgotten, so memory stays bounded for any number of frames. `seq` numbers
//! grow across epochs, so packets of different epochs never pair up.
//!
//! Packet contents are a function of (job, worker, seq): a duplicate is an exact
//! copy (a retransmission), so a result names its summands without ambiguity.

use super::config::{GoldenConfig, SlotConfig};
use super::counters::Counters;
use super::frame::AggPacket;
use super::golden::InFrame;
use super::invariants::Report;
use super::session::{wire_spans, Sent, Session};
use super::system::Shape;
use super::traffic::{background_frame, random_element, with_defect, with_format, Defect, Values};
use crate::dut::Dut;
use crate::engine::{DomainClock, Engine, EngineTime, Progress};
use crate::rng::derived;
use hdl::blocks::fp::FpFormat;
use hdl::panama::config::PanamaConfig;
use hdl::panama::core::panama_core;
use rand::seq::SliceRandom;
use rand::Rng;
use std::collections::BTreeMap;
use std::time::Instant;

/// The chaos run's `full_wait`: short, so drops on full buffers happen often.
pub const CHAOS_FULL_WAIT: u32 = 256;
/// The chaos run's `slot_timeout`: short, so stale slots are flushed often.
pub const CHAOS_SLOT_TIMEOUT: u32 = 2_048;

/// What a chaos run does.
#[derive(Clone, Debug, PartialEq)]
pub struct ChaosConfig {
    /// Frames in all (as generated; unterminated frames merge with the next).
    pub frames: usize,
    /// Frames per epoch.
    pub epoch_frames: usize,
    /// Seed of every random choice.
    pub seed: u64,
    /// Probability that a new input beat is offered in a cycle.
    pub load: f64,
    /// Probability that `m_axis_tready` is low in a cycle.
    pub back_pressure: f64,
    /// The `full_wait` register for the run.
    pub full_wait: u32,
    /// The `slot_timeout` register for the run.
    pub slot_timeout: u32,
}

impl ChaosConfig {
    /// `frames` frames from `seed`: epochs of 2,000 frames, line-rate input, 10 %
    /// back-pressure, [`CHAOS_FULL_WAIT`] and [`CHAOS_SLOT_TIMEOUT`].
    pub fn new(frames: usize, seed: u64) -> Self {
        ChaosConfig {
            frames,
            epoch_frames: 2_000,
            seed,
            load: 1.0,
            back_pressure: 0.1,
            full_wait: CHAOS_FULL_WAIT,
            slot_timeout: CHAOS_SLOT_TIMEOUT,
        }
    }
}

/// What a generated frame is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// A worker's aggregation packet.
    Aggregation,
    /// An exact copy of an earlier aggregation packet.
    Duplicate,
    /// A packet of a runaway worker, ahead of its partners.
    Runaway,
    /// A packet whose `elem_count` or format differs from its partners'.
    Mismatched,
    /// A malformed aggregation packet.
    Malformed,
    /// An aggregation packet of a job no slot has.
    UnknownJob,
    /// Ordinary traffic (60–1514 bytes).
    Background,
    /// Ordinary traffic from a host (DMA) port.
    Host,
    /// A 9,000-byte IPv4/UDP frame.
    Jumbo,
    /// A frame of 1–59 bytes.
    Runt,
    /// A frame without a byte.
    Empty,
    /// Random bytes.
    Garbage,
    /// A frame longer than `max_frame_bytes`, up to 64 KiB.
    Oversize,
    /// A frame whose last beat has no `tlast` (it runs into the next frame).
    Unterminated,
    /// A 1,514-byte frame with a beat of empty `tkeep` in the middle.
    EmptyBeat,
}

impl Kind {
    /// The kind's name in a report, in the counters' snake_case (`unknown_job`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Aggregation => "aggregation",
            Kind::Duplicate => "duplicate",
            Kind::Runaway => "runaway",
            Kind::Mismatched => "mismatched",
            Kind::Malformed => "malformed",
            Kind::UnknownJob => "unknown_job",
            Kind::Background => "background",
            Kind::Host => "host",
            Kind::Jumbo => "jumbo",
            Kind::Runt => "runt",
            Kind::Empty => "empty",
            Kind::Garbage => "garbage",
            Kind::Oversize => "oversize",
            Kind::Unterminated => "unterminated",
            Kind::EmptyBeat => "empty_beat",
        }
    }

    /// How frames of this kind are laid out on the bus.
    pub fn shape(self) -> Shape {
        match self {
            Kind::Unterminated => Shape::Unterminated,
            Kind::EmptyBeat => Shape::EmptyBeatBefore(EMPTY_BEAT_AT),
            _ => Shape::Whole,
        }
    }
}

/// Where [`Kind::EmptyBeat`] frames get their empty beat: past the header bytes
/// the parser reads at every bus width.
const EMPTY_BEAT_AT: usize = 3;

/// One generated frame.
#[derive(Clone, Debug)]
pub struct ChaosFrame {
    /// The frame.
    pub frame: InFrame,
    /// What it is.
    pub kind: Kind,
}

/// How a worker behaves in an epoch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Behaviour {
    Healthy,
    /// Stops after this many packets.
    Dies(usize),
    /// Stops after the first, resumes at the second with `seq` jumped ahead.
    Restarts(usize, usize),
    /// Sends this many packets beyond its partners'.
    RunsAhead(usize),
}

/// The jobs of a chaos run on `ports` ports: (job_id, participating port indices).
fn jobs(ports: usize) -> Vec<(u16, Vec<usize>)> {
    vec![
        (700, vec![0, 1]),
        (701, (0..ports).collect()),
        (702, vec![ports - 2, ports - 1]),
    ]
}

/// The job a retired slot still names (disabled, with its job, tree and ports
/// left in place); some of a chaos run's packets of no slot are this job's.
const RETIRED_JOB: u16 = 800;

/// The (job, tree) of an aggregation packet of no enabled slot, by `kind` (0–4),
/// and the port index it comes from on `ports` ports, `port` (drawn from all of
/// them) unless said otherwise: the retired slot's job, a live job on a tree none
/// of its slots has, a job no slot names, a live job on another live job's tree,
/// and a live job on its own tree (slot 0's, whose ports are 0 and 1) from one of
/// the ports 2 and up, outside its slot (taken from `port`, so that the rest of
/// the traffic draws the same numbers). A board of two ports has no such port
/// (every job has every port): there kind 4 is kind 2.
fn stray(kind: u8, port: usize, ports: usize) -> ((u16, u8), usize) {
    match kind {
        0 => ((RETIRED_JOB, 0), port),
        1 => ((700, 3), port),
        3 => ((701, 0), port),
        4 if ports > 2 => ((700, 0), 2 + port % (ports - 2)),
        _ => ((801, 0), port),
    }
}

/// The golden configuration of a chaos run on `cfg`: its jobs in slots 0–2, and
/// every further slot retired (disabled, holding job 800 on tree 0 over every
/// port, as a host leaves a slot it turned off).
pub fn chaos_config(cfg: &PanamaConfig, chaos: &ChaosConfig) -> GoldenConfig {
    let ports = cfg.port_codes.len();
    let retired = SlotConfig {
        enable: false,
        ..SlotConfig::new(RETIRED_JOB, 0, &(0..ports).collect::<Vec<_>>())
    };
    let mut slots: Vec<SlotConfig> = jobs(ports)
        .into_iter()
        .take(cfg.slots as usize)
        .enumerate()
        .map(|(j, (job, ports))| SlotConfig::new(job, j as u8, &ports))
        .collect();
    slots.resize(cfg.slots as usize, retired);
    GoldenConfig {
        full_wait: chaos.full_wait,
        slot_timeout: chaos.slot_timeout,
        ..super::system::golden_config(cfg, slots)
    }
}

/// The packet worker `port` of job (`job`, `tree`) sends for `seq` (a function of
/// those alone): `elems` elements of `format` and a random ECN.
fn packet(
    cfg: &GoldenConfig,
    seed: u64,
    (job, tree): (u16, u8),
    port: usize,
    seq: u32,
    elems: usize,
) -> AggPacket {
    let mut rng = derived(seed, ("packet", job, port, seq));
    let payload = (0..elems)
        .map(|_| random_element(&mut rng, cfg.format, Values::Finite))
        .collect();
    let mut p = AggPacket::new(
        cfg.format,
        job,
        tree,
        seq,
        port as u16,
        cfg.agg_udp_port,
        payload,
    );
    p.ecn = rng.gen_range(0..4);
    p
}

/// One worker's packets in an epoch.
struct WorkerPlan {
    /// (job_id, tree_id).
    id: (u16, u8),
    /// Its port index.
    port: usize,
    /// Elements per packet.
    elems: usize,
    /// Packets a healthy worker sends.
    packets: usize,
    /// The epoch's first `seq`.
    seq_base: u32,
}

/// The frames of the worker `plan` describes, with a behaviour drawn from `rng`:
/// healthy, dying, restarting with `seq` jumped ahead, or running ahead; with
/// missing `seq`, duplicates, malformed copies and mismatched packets.
fn worker_stream(
    cfg: &GoldenConfig,
    seed: u64,
    plan: &WorkerPlan,
    rng: &mut impl Rng,
) -> Vec<ChaosFrame> {
    let (job, port, per_worker) = (plan.id.0, plan.port, plan.packets);
    let elem_bytes = cfg.format.width() as usize / 8;
    let seq_base = plan.seq_base;
    let behaviour = match rng.gen_range(0..10) {
        0 => Behaviour::Dies(rng.gen_range(0..per_worker)),
        1 => {
            let stop = rng.gen_range(0..per_worker);
            Behaviour::Restarts(stop, rng.gen_range(stop..=per_worker))
        }
        2 => Behaviour::RunsAhead(rng.gen_range(1..=per_worker)),
        _ => Behaviour::Healthy,
    };
    let total = match behaviour {
        Behaviour::RunsAhead(extra) => per_worker + extra,
        _ => per_worker,
    };
    let mut stream = vec![];
    for k in 0..total {
        let seq = match behaviour {
            Behaviour::Dies(stop) if k >= stop => break,
            Behaviour::Restarts(stop, resume) if k >= stop && k < resume => continue,
            Behaviour::Restarts(_, resume) if k >= resume => seq_base + 500_000 + k as u32,
            _ => seq_base + k as u32,
        };
        if rng.gen_ratio(1, 30) {
            continue; // a missing seq
        }
        let mut kind = if k >= per_worker {
            Kind::Runaway
        } else {
            Kind::Aggregation
        };
        let mut p = packet(cfg, seed, plan.id, port, seq, plan.elems);
        if derived(seed, ("mismatch", job, port, seq)).gen_ratio(1, 40) {
            kind = Kind::Mismatched;
            p = if rng.gen() {
                let other = match cfg.format {
                    FpFormat::Fp32 => FpFormat::Bf16,
                    _ => FpFormat::Fp32,
                };
                with_format(&p, other)
            } else {
                packet(cfg, seed, plan.id, port, seq, plan.elems + 64 / elem_bytes)
            };
        }
        let Ok(bytes) = p.to_frame() else { continue };
        let src = cfg.port_codes[port];
        if rng.gen_ratio(1, 30) {
            let defect = *[
                Defect::Version,
                Defect::Ipv4Length,
                Defect::Truncated,
                Defect::EmptyPayload,
            ]
            .choose(rng)
            .unwrap_or(&Defect::Version);
            let bad = with_defect(rng, &bytes, defect, cfg.max_payload_bytes);
            stream.push(ChaosFrame {
                frame: InFrame { src, bytes: bad },
                kind: Kind::Malformed,
            });
        }
        let frame = InFrame { src, bytes };
        if rng.gen_ratio(1, 25) {
            stream.push(ChaosFrame {
                frame: frame.clone(),
                kind: Kind::Duplicate,
            });
        }
        stream.push(ChaosFrame { frame, kind });
    }
    stream
}

/// Generates epoch `epoch` of the run: `count` frames or a few more, for the
/// jobs of `cfg`'s enabled slots.
pub fn epoch_frames(
    cfg: &GoldenConfig,
    chaos: &ChaosConfig,
    epoch: usize,
    count: usize,
) -> Vec<ChaosFrame> {
    let mut rng = derived(chaos.seed, ("epoch", epoch));
    let ports = cfg.port_codes.len();
    let elem_bytes = cfg.format.width() as usize / 8;
    let mut streams: Vec<Vec<ChaosFrame>> = vec![];
    let agg_budget = count / 2;
    let job_list: Vec<(u16, u8, Vec<usize>)> = cfg
        .slots
        .iter()
        .filter(|s| s.enable)
        .map(|s| {
            (
                s.job_id,
                s.tree_id,
                (0..ports).filter(|&p| s.has_port(p)).collect(),
            )
        })
        .collect();
    let workers: usize = job_list.iter().map(|(_, _, p)| p.len()).sum();
    let per_worker = (agg_budget / workers.max(1)).max(1);
    let seq_base = (epoch as u32) * 1_000_000;
    for (job, tree, members) in &job_list {
        let elems = rng.gen_range(1..=cfg.max_payload_bytes / 64) * 64 / elem_bytes;
        for &port in members {
            let plan = WorkerPlan {
                id: (*job, *tree),
                port,
                elems,
                packets: per_worker,
                seq_base,
            };
            streams.push(worker_stream(cfg, chaos.seed, &plan, &mut rng));
        }
    }
    let used: usize = streams.iter().map(Vec::len).sum();
    let mut other = vec![];
    for _ in 0..count.saturating_sub(used) {
        other.push(other_frame(cfg, &mut rng, seq_base));
    }
    streams.push(other);
    let mut frames = super::traffic::interleave(&mut rng, streams);
    if frames.last().is_some_and(|f| f.kind == Kind::Unterminated) {
        let src = cfg.port_codes[0];
        let bytes = background_frame(&mut rng, cfg.agg_udp_port);
        frames.push(ChaosFrame {
            frame: InFrame { src, bytes },
            kind: Kind::Background,
        });
    }
    frames
}

/// One frame of the non-worker traffic.
fn other_frame(cfg: &GoldenConfig, rng: &mut impl Rng, seq_base: u32) -> ChaosFrame {
    let port_index = rng.gen_range(0..cfg.port_codes.len());
    let port = cfg.port_codes[port_index];
    let host = cfg.host_routes.choose(rng).map_or(port, |&(h, _)| h);
    let mtu = cfg.max_frame_bytes;
    let (kind, src, bytes) = match rng.gen_range(0..100) {
        0..=51 => (
            Kind::Background,
            port,
            background_frame(rng, cfg.agg_udp_port),
        ),
        52..=61 => (Kind::Host, host, background_frame(rng, cfg.agg_udp_port)),
        62..=63 => {
            let mut f = background_frame(rng, cfg.agg_udp_port);
            f.resize(9_000.min(mtu), 0xA5);
            (Kind::Jumbo, port, f)
        }
        64..=71 => {
            let n = rng.gen_range(1..60);
            (Kind::Runt, port, (0..n).map(|_| rng.gen()).collect())
        }
        72..=73 => (Kind::Empty, port, vec![]),
        74..=81 => {
            let n = rng.gen_range(60..=1514);
            (Kind::Garbage, port, (0..n).map(|_| rng.gen()).collect())
        }
        82..=83 => {
            let longest = if rng.gen_ratio(1, 10) {
                65_536
            } else {
                2 * mtu
            };
            let n = rng.gen_range(mtu + 1..=longest);
            (Kind::Oversize, port, (0..n).map(|_| rng.gen()).collect())
        }
        84..=85 => {
            let n = (mtu / 128 + rng.gen_range(1..40)) * 128;
            (Kind::Unterminated, port, vec![0x5A; n])
        }
        86 => {
            let mut f = background_frame(rng, cfg.agg_udp_port);
            f.resize(1514, 0x3C);
            (Kind::EmptyBeat, port, f)
        }
        _ => {
            let ((job, tree), from) = stray(rng.gen_range(0..5), port_index, cfg.port_codes.len());
            let elems = 64 / (cfg.format.width() as usize / 8);
            let p = AggPacket::new(
                cfg.format,
                job,
                tree,
                seq_base,
                1,
                cfg.agg_udp_port,
                vec![0; elems],
            );
            let bytes = p.to_frame().unwrap_or_default();
            (Kind::UnknownJob, cfg.port_codes[from], bytes)
        }
    };
    ChaosFrame {
        frame: InFrame { src, bytes },
        kind,
    }
}

/// The kind of each frame on the wire: that of its first sent frame
/// ([`wire_spans`]).
fn wire_kinds(frames: &[ChaosFrame]) -> Vec<Kind> {
    wire_spans(frames.iter().map(|f| f.kind.shape()))
        .into_iter()
        .map(|span| frames[span.start].kind)
        .collect()
}

/// The outcome of a chaos run on one engine.
#[derive(Clone, Debug, Default)]
pub struct ChaosOutcome {
    /// Frames generated, by kind.
    pub frames_in: BTreeMap<Kind, u64>,
    /// Bypass frames out, by the kind of the frame they were (an unterminated
    /// frame merged with those after it counts as unterminated).
    pub bypass_out: BTreeMap<Kind, u64>,
    /// Frames on the wire (after unterminated frames merged).
    pub wire_frames: u64,
    /// The invariants' tallies over every epoch.
    pub report: Report,
    /// The hardware counters summed over the run.
    pub counters: Counters,
    /// Cycles simulated.
    pub cycles: u64,
    /// Input beats taken.
    pub beats_in: u64,
    /// Epochs whose drain did not finish in its bound.
    pub undrained: Vec<usize>,
    /// A digest of every output frame and its cycle (equal across engines).
    pub digest: u64,
}

impl ChaosOutcome {
    /// Every invariant that failed (empty: the run passed).
    pub fn violations(&self) -> Vec<String> {
        let mut v = self.report.violations();
        if !self.undrained.is_empty() {
            v.push(format!("epochs not drained: {:?}", self.undrained));
        }
        v
    }
}

/// Runs `chaos` on the accelerator core `dut` (an instance of `cfg`, reset here);
/// `progress` sees the frames done after each epoch.
pub fn run(
    dut: &mut dyn Dut,
    cfg: &PanamaConfig,
    chaos: &ChaosConfig,
    mut progress: impl FnMut(usize),
) -> Result<ChaosOutcome, String> {
    let golden = chaos_config(cfg, chaos);
    let mut session = Session::new(
        dut,
        cfg,
        golden.clone(),
        (chaos.load, chaos.back_pressure),
        chaos.seed,
    )
    .map_err(|e| e.to_string())?;
    let mut out = ChaosOutcome::default();
    let epochs = chaos.frames.div_ceil(chaos.epoch_frames.max(1));
    for epoch in 0..epochs {
        let count = chaos
            .epoch_frames
            .min(chaos.frames - epoch * chaos.epoch_frames);
        let frames = epoch_frames(&golden, chaos, epoch, count);
        let kinds = wire_kinds(&frames);
        let sent: Vec<Sent> = frames
            .into_iter()
            .map(|f| {
                *out.frames_in.entry(f.kind).or_default() += 1;
                (f.frame, f.kind.shape())
            })
            .collect();
        let batch = session
            .run_batch(&sent)
            .map_err(|e| format!("epoch {epoch}: {e}"))?;
        out.wire_frames += batch.wire.len() as u64;
        for &i in &batch.bypassed {
            *out.bypass_out.entry(kinds[i]).or_default() += 1;
        }
        if !batch.drained {
            out.undrained.push(epoch);
        }
        out.counters = out.counters.plus(&batch.counters);
        out.report.absorb(batch.report);
        progress((epoch * chaos.epoch_frames + count).min(chaos.frames));
    }
    out.cycles = session.cycles();
    out.beats_in = session.beats_in();
    out.digest = session.digest();
    Ok(out)
}

/// One engine's chaos run.
pub struct EngineChaos {
    /// The engine, its build and its run time (simulation only, building excluded).
    pub time: EngineTime,
    /// What the run saw.
    pub outcome: ChaosOutcome,
}

/// Runs `chaos` on the core of `cfg` on every engine of `engine` (clock periods
/// from `clocks`); an error if a run fails or the engines disagree (frames,
/// cycles, counters). `progress` sees the frames done.
pub fn run_engines(
    cfg: &PanamaConfig,
    clocks: &[DomainClock],
    chaos: &ChaosConfig,
    engine: Engine,
    progress: &mut dyn FnMut(Progress),
) -> anyhow::Result<Vec<EngineChaos>> {
    let module = panama_core(cfg)?;
    let mut runs: Vec<EngineChaos> = vec![];
    for &e in engine.engines() {
        let (mut dut, build) = e.build(&module, false, clocks)?;
        progress(Progress::Start {
            engine: e,
            total: chaos.frames as u64,
        });
        let started = Instant::now();
        let outcome = run(dut.as_mut(), cfg, chaos, |done| {
            progress(Progress::At(done as u64))
        })
        .map_err(|e| anyhow::anyhow!("chaos run: {e}"))?;
        progress(Progress::Done);
        runs.push(EngineChaos {
            time: EngineTime {
                engine: e,
                build,
                wall: started.elapsed(),
                compiled: dut.compiled_start(),
            },
            outcome,
        });
    }
    let first = &runs[0];
    for other in &runs[1..] {
        let (a, b) = (&first.outcome, &other.outcome);
        if a.digest != b.digest || a.cycles != b.cycles || a.counters != b.counters {
            anyhow::bail!(
                "the {} engine differs from the {} engine: {} vs {} cycles, counters {:?} vs {:?}",
                other.time.engine,
                first.time.engine,
                b.cycles,
                a.cycles,
                b.counters,
                a.counters
            );
        }
    }
    Ok(runs)
}
