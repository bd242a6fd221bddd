//! PANAMA never wedges the wire (PANAMA.md, "Buffers" and "MTU"): every fault class
//! alone, then all together, on the native simulator and on Verilator. After each
//! fault batch the timing-independent invariants hold (bypass frames out once,
//! unaltered; every result an exact sum; counters balance; the input never held
//! past its bound) and a following clean aggregation is exact against the golden
//! model. Also: where frames go that bring a `tuser` destination of their own.

use hdl::blocks::fp::FpFormat;
use hdl::panama::config::PanamaConfig;
use hdl::panama::core::{panama_core, STALL_CYCLES};
use rand::Rng;
use testbench::dut::{Dut, NativeDut, VerilatorDut};
use testbench::panama::chaos::{epoch_frames, ChaosConfig};
use testbench::panama::config::{GoldenConfig, SlotConfig, SUME_PORTS};
use testbench::panama::counters::Counters;
use testbench::panama::frame::AggPacket;
use testbench::panama::golden::{run as golden_run, InFrame};
use testbench::panama::session::{Sent, Session};
use testbench::panama::system::{
    check, configure, golden_config, is_result, read_counters, run, Observed, Shape, StreamDriver,
    Traffic,
};
use testbench::panama::traffic::{background_frame, from_f32, with_defect, Defect};
use testbench::rng::seeded;
use testbench::verilator::BuildOptions;

/// SUME, 4-packet buffers; `full_wait` longer than the 1,024-beat landing buffer
/// takes to fill, so a dead worker really holds the input, and a short
/// `slot_timeout` so flushes happen fast.
fn instance() -> PanamaConfig {
    PanamaConfig {
        fifo_depth: 4,
        full_wait: 2_048,
        slot_timeout: 4_096,
        ..PanamaConfig::new(256, &SUME_PORTS)
    }
}

/// Job 5 in slot 0 on ports 0 and 1; job 6 in slot 1 on ports 2 and 3.
fn golden(cfg: &PanamaConfig) -> GoldenConfig {
    let slots = vec![
        SlotConfig::new(5, 0, &[0, 1]),
        SlotConfig::new(6, 1, &[2, 3]),
        SlotConfig::new(7, 2, &[0, 2]),
        SlotConfig::new(8, 3, &[1, 3]),
    ];
    let mut g = golden_config(cfg, slots);
    // dma0 redirected from nf0 to nf3: the route register, not its reset value.
    g.host_routes[0].1 = 0x40;
    g
}

/// The packet port `port` sends for `seq` of `job` (tree = slot), 256 bytes of
/// small integers that depend on (job, port, seq) only.
fn packet(g: &GoldenConfig, job: u16, tree: u8, port: usize, seq: u32) -> InFrame {
    let payload = (0..64)
        .map(|e| {
            from_f32(
                FpFormat::Fp32,
                ((seq as usize + port * 3 + e) % 17) as f32 - 8.0,
            )
        })
        .collect();
    let p = AggPacket::new(
        FpFormat::Fp32,
        job,
        tree,
        seq,
        port as u16,
        g.agg_udp_port,
        payload,
    );
    InFrame {
        src: g.port_codes[port],
        bytes: p.to_frame().expect("a consistent packet"),
    }
}

fn sent(frames: Vec<InFrame>) -> Vec<Sent> {
    frames.into_iter().map(|f| (f, Shape::Whole)).collect()
}

/// A bypass frame from port `port`.
fn bypass(g: &GoldenConfig, rng: &mut impl Rng, port: usize) -> InFrame {
    InFrame {
        src: g.port_codes[port],
        bytes: background_frame(rng, g.agg_udp_port),
    }
}

/// One fault class: its name and frames.
struct Fault {
    name: &'static str,
    frames: Vec<Sent>,
}

/// Every fault class, each alone.
fn faults(g: &GoldenConfig, rng: &mut impl Rng) -> Vec<Fault> {
    let mtu = g.max_frame_bytes;
    let mut v = vec![];

    // Worker 1 of job 5 is dead: worker 0 sends 16 packets (4 fit), 30 bypass
    // frames of 1514 bytes from port 2 in between, and job 6 stays healthy.
    let mut frames = vec![];
    for seq in 0..16 {
        frames.push(packet(g, 5, 0, 0, seq));
        frames.push(InFrame {
            src: g.port_codes[2],
            bytes: {
                let mut b = background_frame(rng, g.agg_udp_port);
                b.resize(1514, 0x77);
                b
            },
        });
        if seq < 8 {
            frames.push(packet(g, 6, 1, 2, seq));
            frames.push(packet(g, 6, 1, 3, seq));
        }
    }
    frames.extend((16..30).map(|_| bypass(g, rng, 2)));
    v.push(Fault {
        name: "dead worker",
        frames: sent(frames),
    });

    // A runaway worker: 20 seqs ahead of its partner, which sends 3.
    let mut frames: Vec<InFrame> = (100..120).map(|s| packet(g, 5, 0, 0, s)).collect();
    frames.extend((100..103).map(|s| packet(g, 5, 0, 1, s)));
    frames.push(bypass(g, rng, 1));
    v.push(Fault {
        name: "runaway worker",
        frames: sent(frames),
    });

    // The longest frames that pass (MTU − 1 and MTU bytes), then oversize
    // ones: just over the MTU, one past the landing buffer, 64 KiB.
    let frames = [mtu - 1, mtu, mtu + 1, 32_800, 65_536]
        .iter()
        .map(|&n| InFrame {
            src: g.port_codes[0],
            bytes: (0..n).map(|i| i as u8).collect(),
        })
        .chain([bypass(g, rng, 0)])
        .collect();
    v.push(Fault {
        name: "oversize",
        frames: sent(frames),
    });

    // A frame without tlast for longer than the MTU runs into the next frame.
    v.push(Fault {
        name: "unterminated",
        frames: vec![
            (
                InFrame {
                    src: g.port_codes[1],
                    bytes: vec![0x5A; (mtu / 128 + 10) * 128],
                },
                Shape::Unterminated,
            ),
            (bypass(g, rng, 1), Shape::Whole),
            (bypass(g, rng, 1), Shape::Whole),
        ],
    });

    // Empty frames, runts, and frames with an empty-tkeep beat in the middle.
    let mut frames: Vec<Sent> = [0usize, 1, 13, 33, 59, 0]
        .iter()
        .map(|&n| {
            let f = InFrame {
                src: g.port_codes[3],
                bytes: vec![0xC3; n],
            };
            (f, Shape::Whole)
        })
        .collect();
    for at in [3, 5] {
        let mut f = bypass(g, rng, 0);
        f.bytes.resize(1514, 0x3C);
        frames.push((f, Shape::EmptyBeatBefore(at)));
    }
    v.push(Fault {
        name: "empty frames, runts, empty beats",
        frames,
    });

    // Garbage, malformed packets, unknown jobs, host (DMA) traffic.
    let mut frames: Vec<InFrame> = (0..10)
        .map(|_| InFrame {
            src: g.port_codes[rng.gen_range(0..4)],
            bytes: (0..rng.gen_range(60..1514)).map(|_| rng.gen()).collect(),
        })
        .collect();
    for d in [
        Defect::Version,
        Defect::Ipv4Length,
        Defect::Truncated,
        Defect::ElemCount,
        Defect::EmptyPayload,
    ] {
        let good = packet(g, 5, 0, 0, 200);
        frames.push(InFrame {
            src: good.src,
            bytes: with_defect(rng, &good.bytes, d, g.max_payload_bytes),
        });
    }
    frames.push(packet(g, 999, 0, 0, 1));
    // Live jobs from ports outside their slots (job 5 is on ports 0 and 1, job 6
    // on 2 and 3): no slot's, so bypassed as unknown jobs.
    frames.push(packet(g, 5, 0, 2, 1));
    frames.push(packet(g, 6, 1, 0, 1));
    for &(host, _) in &g.host_routes {
        frames.push(InFrame {
            src: host,
            bytes: background_frame(rng, g.agg_udp_port),
        });
        frames.push(InFrame {
            src: host,
            bytes: packet(g, 5, 0, 0, 300).bytes,
        });
    }
    v.push(Fault {
        name: "garbage, malformed, unknown jobs, host ports",
        frames: sent(frames),
    });

    // Duplicate and missing seq.
    let frames = vec![
        packet(g, 5, 0, 0, 400),
        packet(g, 5, 0, 0, 400),
        packet(g, 5, 0, 1, 400),
        packet(g, 5, 0, 0, 402),
        packet(g, 5, 0, 1, 401),
        packet(g, 5, 0, 1, 402),
        packet(g, 5, 0, 1, 402),
    ];
    v.push(Fault {
        name: "duplicate and missing seq",
        frames: sent(frames),
    });
    v
}

/// A clean aggregation of every job with `seq`, and bypass frames.
fn clean_round(g: &GoldenConfig, rng: &mut impl Rng, seq: u32) -> Vec<InFrame> {
    let mut frames = vec![];
    for (slot, s) in g.slots.iter().enumerate() {
        for port in (0..4).filter(|&p| s.has_port(p)) {
            frames.push(packet(g, s.job_id, slot as u8, port, seq));
        }
        frames.push(bypass(g, rng, slot));
    }
    frames
}

/// What one engine saw, batch by batch, for the comparison across engines.
type Trace = Vec<Vec<Observed>>;

/// Runs every fault, each followed by a clean round, then a chaos epoch, on `dut`.
fn run_all(dut: &mut dyn Dut, cfg: &PanamaConfig, back_pressure: f64) -> Trace {
    let g = golden(cfg);
    let mut rng = seeded("panama faults", 11);
    let mut session = Session::new(dut, cfg, g.clone(), (1.0, back_pressure), 11)
        .unwrap_or_else(|e| panic!("{e}"));
    let mut trace = vec![];
    let bound = cfg.input_stall_bound(g.full_wait);
    for (k, fault) in faults(&g, &mut rng).into_iter().enumerate() {
        let batch = session.run_batch(&fault.frames).expect("invariants check");
        let r = &batch.report;
        println!(
            "{}: {} wire frames, {} bypass out, {} results, counters {:?}, longest stall {} (bound {bound})",
            fault.name,
            batch.wire.len(),
            r.bypass_out,
            r.results_out,
            batch.counters,
            r.longest_stall.0
        );
        assert!(batch.drained, "{}: did not drain", fault.name);
        assert_eq!(r.violations(), Vec::<String>::new(), "{}", fault.name);
        assert_eq!(r.bypass_out, r.bypass_expected, "{}", fault.name);
        if fault.name == "dead worker" {
            let c = batch.counters;
            assert!(c.full_drops > 0 && c.timeout_drops > 0, "{c:?}");
            assert!(r.longest_stall.0 > 0, "the dead worker held the input");
            // The healthy job: all 8 aggregations, both copies, exact sums.
            let healthy = batch
                .observed
                .iter()
                .filter(|o| is_result(&o.bytes, g.agg_udp_port) && o.bytes[44..46] == [0, 6])
                .count();
            assert_eq!(healthy, 16);
        }
        trace.push(batch.observed);

        // Recovery: a clean round afterwards is exact against the golden model.
        let clean = clean_round(&g, &mut rng, 10_000 + k as u32);
        let want = golden_run(&g, &clean).expect("model");
        let batch = session.run_batch(&sent(clean)).expect("invariants check");
        let summary = check(&g, &want, &batch.observed)
            .unwrap_or_else(|e| panic!("after {}: {e}", fault.name));
        assert_eq!(summary.result_frames, 8, "after {}", fault.name);
        assert_eq!(batch.counters, want.counters, "after {}", fault.name);
        trace.push(batch.observed);
    }

    // All together.
    let chaos = ChaosConfig::new(1_500, 11);
    let frames: Vec<Sent> = epoch_frames(&g, &chaos, 0, chaos.frames)
        .into_iter()
        .map(|f| (f.frame, f.kind.shape()))
        .collect();
    let batch = session.run_batch(&frames).expect("invariants check");
    println!(
        "all together: {} wire frames, counters {:?}, longest stall {}",
        batch.wire.len(),
        batch.counters,
        batch.report.longest_stall.0
    );
    assert!(batch.drained);
    assert_eq!(batch.report.violations(), Vec::<String>::new());
    trace.push(batch.observed);
    trace
}

/// Every fault class on the native simulator, at line rate and under 20 %
/// back-pressure.
#[test]
fn every_fault_class_alone_then_together_native() {
    let cfg = instance();
    let module = panama_core(&cfg).expect("core");
    for back_pressure in [0.0, 0.2] {
        let mut dut = NativeDut::new(&module).expect("native");
        run_all(&mut dut, &cfg, back_pressure);
    }
}

/// The same on Verilator: identical frames out at identical cycles.
#[test]
fn every_fault_class_alone_then_together_verilator_matches_native() {
    let cfg = instance();
    let module = panama_core(&cfg).expect("core");
    let mut native = NativeDut::new(&module).expect("native");
    let want = run_all(&mut native, &cfg, 0.2);
    let mut verilated =
        VerilatorDut::new(&module, &BuildOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    let got = run_all(&mut verilated, &cfg, 0.2);
    assert_eq!(got.len(), want.len());
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "batch {k}: Verilator's output differs from native");
    }
}

/// The chaos run that CI affords (the README's 10⁶-frame run is opt-in through
/// the CLI): a few thousand frames of every fault at once, every invariant.
#[test]
fn a_chaos_run_keeps_every_invariant() {
    let cfg = PanamaConfig {
        fifo_depth: 8,
        ..PanamaConfig::new(256, &SUME_PORTS)
    };
    let module = panama_core(&cfg).expect("core");
    let mut dut = NativeDut::new(&module).expect("native");
    let chaos = ChaosConfig::new(6_000, 3);
    let out = testbench::panama::chaos::run(&mut dut, &cfg, &chaos, |_| {}).expect("chaos");
    println!(
        "chaos: {} frames in, {} cycles, report {:?}, counters {:?}",
        chaos.frames, out.cycles, out.report, out.counters
    );
    assert_eq!(out.violations(), Vec::<String>::new());
    let c = out.counters;
    for (what, n) in [
        ("oversize", c.oversize),
        ("empty", c.empty_frames),
        ("full drops", c.full_drops),
        ("timeout drops", c.timeout_drops),
        ("seq mismatch", c.seq_mismatch),
        ("other mismatch", c.other_mismatch),
        ("malformed", c.malformed),
        ("results", c.results_out),
    ] {
        assert!(n > 0, "the chaos mix exercised no {what}");
    }
}

/// `frames` offered at line rate to `dut`, a `width`-bit core configured as
/// `g` (the output always ready), until the output has been quiet for `quiet` cycles
/// (at most 20 × `quiet`), `on_cycle` seeing every cycle; every frame must be
/// taken. The driver and the cycles simulated.
fn at_line_rate(
    dut: &mut NativeDut,
    (g, width): (&GoldenConfig, u32),
    frames: &[InFrame],
    rng: &mut impl Rng,
    quiet: u64,
    on_cycle: impl FnMut(&mut dyn Dut, u64),
) -> (StreamDriver, u64) {
    let (d, cycles, end) = run(
        dut,
        g,
        frames,
        width,
        Traffic::LINE_RATE,
        rng,
        None,
        quiet,
        20 * quiet,
        on_cycle,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(d.input_done(), "every frame was taken ({end:?})");
    (d, cycles)
}

/// `frames` at line rate through a new core of `cfg` (configured as `g`) until
/// the output has been quiet for two `full_wait`s and 2,000 cycles: the core
/// (for its counters), the driver and the cycles simulated.
fn through_new_core(
    cfg: &PanamaConfig,
    g: &GoldenConfig,
    frames: &[InFrame],
    rng: &mut impl Rng,
) -> (NativeDut, StreamDriver, u64) {
    let module = panama_core(cfg).expect("core");
    let mut dut = NativeDut::new(&module).expect("native");
    let quiet = 2 * u64::from(cfg.full_wait) + 2_000;
    let (d, cycles) = at_line_rate(&mut dut, (g, cfg.data_width), frames, rng, quiet, |_, _| {});
    (dut, d, cycles)
}

/// A frame's own destination (`tuser[31:24]` as it arrives) counts only for a
/// source code that is neither one of the core's ports nor a host's: such a
/// frame, an aggregation packet of a live job included, is bypassed unchanged
/// to the destination it brought, as the core cannot tell which port's buffer
/// it would belong to. A port's frame leaves where its `bypass_dst` register
/// says and a host's where its route says, whatever they bring. (The golden
/// model refuses frames from unknown codes, so the expectation is written here.)
#[test]
fn only_frames_from_unknown_source_codes_keep_their_own_destination() {
    let cfg = instance();
    let g = golden(&cfg);
    let mut rng = seeded("panama faults own destination", 4401);
    let (host, route) = g.host_routes[0];
    let unknown = [0x00, g.port_codes[0] | g.port_codes[1]];
    for code in unknown {
        assert!(!g.port_codes.contains(&code) && g.host_routes.iter().all(|&(h, _)| h != code));
    }
    let frame = |src: u8, bytes: Vec<u8>| InFrame { src, bytes };
    // (frame, the destination it brings, the one it must leave with)
    let sent = [
        (
            frame(unknown[0], background_frame(&mut rng, g.agg_udp_port)),
            0x10,
            0x10,
        ),
        (frame(unknown[1], packet(&g, 5, 0, 0, 1).bytes), 0x04, 0x04),
        (bypass(&g, &mut rng, 1), 0x80, g.bypass_dst[1]),
        (
            frame(host, background_frame(&mut rng, g.agg_udp_port)),
            0x01,
            route,
        ),
    ];
    for (f, brought, leaves) in &sent[2..] {
        assert_ne!(
            brought, leaves,
            "from {:#04x}: a destination that shows",
            f.src
        );
    }
    let module = panama_core(&cfg).expect("core");
    let mut native = NativeDut::new(&module).expect("native");
    let mut dut: &mut dyn Dut = &mut native;
    configure(&mut dut, &g).unwrap_or_else(|e| panic!("{e}"));
    dut.reset(4);
    let mut d = StreamDriver::streaming(cfg.data_width);
    for (f, brought, _) in &sent {
        d.push_frame_to(f, Shape::Whole, *brought);
    }
    for cycle in 0..2_000 {
        if cycle > 0 {
            dut.step();
        }
        d.step(&mut dut, cycle, cycle > 0, &mut rng, 1.0, 1.0)
            .unwrap_or_else(|e| panic!("{e}"));
    }
    assert!(d.input_done(), "every frame was taken");
    let left: Vec<(u8, &[u8])> = d.outputs.iter().map(|o| (o.dst, &o.bytes[..])).collect();
    let expected: Vec<(u8, &[u8])> = sent.iter().map(|(f, _, l)| (*l, &f.bytes[..])).collect();
    assert_eq!(
        left, expected,
        "(destination, bytes) of the frames that left"
    );
    let counters = read_counters(dut).unwrap_or_else(|e| panic!("{e}"));
    let count = |name: &str| counters.iter().find(|(n, _)| *n == name).map(|&(_, v)| v);
    for (name, value) in [("packets_in", 4), ("bypassed", 4), ("accepted", 0)] {
        assert_eq!(count(name), Some(value), "{name}: {counters:?}");
    }
}

/// When a worker is dead, its partner's packets are flushed one per
/// `slot_timeout` (the engine's module docs): the slot's age counts the cycles
/// it holds a packet, a pop restarts it at 0, and the slot is flushed in the
/// cycle its age reaches `slot_timeout`, so flushes follow each other every
/// `slot_timeout + 1` cycles. The first comes once the packet has been stored
/// (its beats through the landing buffer) and the age has run out: at most
/// `slot_timeout` + the frame's beats + 8 cycles after its last beat arrived,
/// the same lag for every `slot_timeout`. Port 1 of job 5 never sends; port 0
/// sends three packets back to back. Each flush is seen as a step of the
/// `timeout_drops` counter.
#[test]
fn a_dead_workers_partner_loses_one_packet_per_slot_timeout() {
    let cfg = instance();
    let module = panama_core(&cfg).expect("core");
    let frames: Vec<InFrame> = (0..3)
        .map(|seq| packet(&golden(&cfg), 5, 0, 0, seq))
        .collect();
    let frame_beats = frames[0].bytes.len().div_ceil(cfg.beat_bytes() as usize) as u64;
    let mut lags = vec![];
    for slot_timeout in [300u32, 1_000, 2_500] {
        let t = u64::from(slot_timeout);
        let g = GoldenConfig {
            slot_timeout,
            ..golden(&cfg)
        };
        let mut dut = NativeDut::new(&module).expect("native");
        let counter = dut.port("timeout_drops").expect("the counter");
        let mut flushes = vec![];
        let mut seen = 0;
        let mut rng = seeded("panama flush timing", 1);
        let (d, _) = at_line_rate(
            &mut dut,
            (&g, cfg.data_width),
            &frames,
            &mut rng,
            4 * t,
            |dut, cycle| {
                let now = dut.get(counter).expect("read")[0];
                if now != seen {
                    flushes.push((cycle, now - seen));
                    seen = now;
                }
            },
        );
        let arrived = d.last_accepted[0].expect("the first packet was taken");
        println!(
            "slot_timeout {t}: first packet's last beat at cycle {arrived}, \
             flushes (cycle, packets) {flushes:?}, {frame_beats} beats a frame"
        );
        assert_eq!(flushes.len(), 3, "one flush per packet, one packet each");
        assert!(flushes.iter().all(|&(_, n)| n == 1));
        for pair in flushes.windows(2) {
            assert_eq!(pair[1].0 - pair[0].0, t + 1, "flushes {t} + 1 cycles apart");
        }
        let lag = flushes[0].0 - arrived;
        assert!(
            (t..=t + frame_beats + 8).contains(&lag),
            "first flush {lag} cycles after the packet, slot_timeout {t}"
        );
        lags.push(lag - t);
    }
    assert!(
        lags.windows(2).all(|w| w[0] == w[1]),
        "lags beyond slot_timeout {lags:?}"
    );
}

/// What [`dead_worker_run`] saw.
struct DeadWorker {
    /// The cycle each bypass frame's first beat came out, in input order.
    bypass_out: Vec<u64>,
    /// The counters at the end.
    counters: Counters,
    /// `stall_cycles` at the end: the cycles the dispatcher waited on a full
    /// packet buffer.
    stall_cycles: u64,
}

/// Job 9 over all four SUME ports, port 3 dead: `rounds` rounds in which ports
/// 0–2 each send a packet and one bypass frame follows, then three more bypass
/// frames, all at line rate, on a core of `cfg`.
fn dead_worker_run(cfg: &PanamaConfig, rounds: u32) -> DeadWorker {
    let mut slots = vec![SlotConfig::new(9, 0, &[0, 1, 2, 3])];
    slots.resize(cfg.slots as usize, SlotConfig::DISABLED);
    let g = golden_config(cfg, slots);
    let mut rng = seeded("panama dead worker bypass bound", 2);
    let mut frames = vec![];
    let mut bypassed = vec![];
    for seq in 0..rounds {
        frames.extend((0..3).map(|port| packet(&g, 9, 0, port, seq)));
        bypassed.push(frames.len());
        frames.push(bypass(&g, &mut rng, seq as usize % 4));
    }
    for port in 0..3 {
        bypassed.push(frames.len());
        frames.push(bypass(&g, &mut rng, port));
    }
    let (mut dut, d, _) = through_new_core(cfg, &g, &frames, &mut rng);
    let named = read_counters(&mut dut).expect("counters");
    let stall_cycles = named.iter().find(|(n, _)| *n == STALL_CYCLES);
    // Bypass frames are unaltered and distinct: found by their bytes.
    let bypass_out = bypassed
        .iter()
        .map(|&i| {
            let out = d.outputs.iter().find(|o| o.bytes == frames[i].bytes);
            out.expect("every bypass frame comes out").first_cycle
        })
        .collect();
    DeadWorker {
        bypass_out,
        counters: Counters::from_named(&named),
        stall_cycles: stall_cycles.expect("the counter").1,
    }
}

/// PANAMA.md's bound on a bypass frame's delay for one dead worker of a job of
/// W workers, reached exactly: between two pops of the slot each of the W − 1
/// live workers' buffers costs the input one `full_wait` (its first packet
/// beyond `fifo_depth` waits, is dropped and wedges the buffer; the rest are
/// dropped at once), so against the same traffic with `full_wait` = 0 (every
/// such packet dropped at once) bypass frames come out at most (W − 1) ×
/// `full_wait` cycles later, and the last ones that late. With `slot_timeout`
/// below `full_wait` the pops pace the job instead: every wait ends at the
/// slot's next pop, so each round of packets delays the bypass frames behind it
/// by at most `slot_timeout` + 1 cycles, and nothing is dropped on a full
/// buffer. Either way the last bypass frames are late by exactly the cycles the
/// dispatcher waited (`stall_cycles`).
#[test]
fn a_dead_worker_delays_bypass_frames_by_at_most_w_minus_1_full_waits() {
    let full_wait = 600u32;
    let rounds = 8;
    let base = PanamaConfig {
        fifo_depth: 2,
        full_wait,
        ..PanamaConfig::new(256, &SUME_PORTS)
    };
    let waits = dead_worker_run(&base, rounds);
    let at_once = dead_worker_run(
        &PanamaConfig {
            full_wait: 0,
            ..base.clone()
        },
        rounds,
    );
    let late: Vec<i64> = (waits.bypass_out.iter().zip(&at_once.bypass_out))
        .map(|(&w, &a)| w as i64 - a as i64)
        .collect();
    println!(
        "no pops: bypass frames later than with full_wait 0 by {late:?}, stall_cycles {}, counters {:?}",
        waits.stall_cycles, waits.counters
    );
    let w_minus_1 = 3;
    let bound = w_minus_1 * i64::from(full_wait);
    assert_eq!(waits.stall_cycles, bound as u64);
    let beyond = u64::from(rounds - base.fifo_depth);
    assert_eq!(waits.counters.full_drops, w_minus_1 as u64 * beyond);
    assert_eq!(at_once.counters.full_drops, waits.counters.full_drops);
    assert!(
        late.iter().all(|&l| (0..=bound).contains(&l)),
        "bound {bound}"
    );
    assert_eq!(
        late.last(),
        Some(&bound),
        "the last bypass frame waited every wait"
    );
    assert_eq!(late.last(), Some(&(waits.stall_cycles as i64)));

    let paced = PanamaConfig {
        slot_timeout: 400,
        ..base
    };
    let pops = dead_worker_run(&paced, rounds);
    let late: Vec<i64> = (pops.bypass_out.iter().zip(&at_once.bypass_out))
        .map(|(&w, &a)| w as i64 - a as i64)
        .collect();
    println!(
        "slot_timeout {}: bypass frames later by {late:?}, stall_cycles {}, counters {:?}",
        paced.slot_timeout, pops.stall_cycles, pops.counters
    );
    let sent = u64::from(3 * rounds);
    assert_eq!(
        pops.counters.full_drops, 0,
        "the pops free room before full_wait"
    );
    assert_eq!(pops.counters.accepted, sent);
    assert_eq!(pops.counters.timeout_drops, sent, "every packet flushed");
    let pace = i64::from(paced.slot_timeout) + 1;
    assert!(
        late.windows(2).all(|w| (0..=pace).contains(&(w[1] - w[0]))),
        "each round later by at most slot_timeout + 1"
    );
    assert_eq!(late.last(), Some(&(pops.stall_cycles as i64)));
}

/// The input-stall bound (`PanamaConfig::input_stall_bound`: `full_wait` +
/// one result frame + 8) is reached in its main term, not just respected: two
/// jobs, each with a dead worker, fill their live workers' 2-packet buffers; a
/// third packet for each waits `full_wait` in turn while bypass traffic fills
/// the landing buffer behind them, so the second wait starts with the landing
/// buffer full and holds the input for at least `full_wait` cycles. With the
/// output always ready, no result frame can add to it.
#[test]
fn the_longest_input_stall_reaches_full_wait() {
    let full_wait = 3_000u32;
    let cfg = PanamaConfig {
        fifo_depth: 2,
        full_wait,
        slot_timeout: 1_000_000,
        ..PanamaConfig::new(256, &SUME_PORTS)
    };
    let g = golden(&cfg);
    let mut rng = seeded("panama longest stall", 4);
    let mut frames = vec![];
    for seq in 0..3 {
        frames.push(packet(&g, 5, 0, 0, seq));
        frames.push(packet(&g, 6, 1, 2, seq));
    }
    let packet_beats = frames[0].bytes.len().div_ceil(cfg.beat_bytes() as usize) as u64;
    let landing = u64::from(cfg.frame_buffer_beats());
    let mut bypass_beats = 0;
    while bypass_beats < 2 * landing {
        let f = bypass(&g, &mut rng, frames.len() % 4);
        bypass_beats += f.bytes.len().div_ceil(cfg.beat_bytes() as usize) as u64;
        frames.push(f);
    }
    let (_, d, cycles) = through_new_core(&cfg, &g, &frames, &mut rng);
    let bound = cfg.input_stall_bound(full_wait);
    println!(
        "{} frames, {cycles} cycles: longest input stall {} cycles, bound {bound}, \
         {packet_beats} beats a packet",
        frames.len(),
        d.longest_stall
    );
    let floor = u64::from(full_wait);
    assert!(
        (floor..=bound).contains(&d.longest_stall),
        "longest stall {} not within [{floor}, {bound}]",
        d.longest_stall
    );
}
