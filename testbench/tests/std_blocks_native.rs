//! Every `hdl::blocks` block on the native simulator against an independent reference
//! model (plain Rust, written from the block's documented behaviour), over ≥ 10,000
//! random cycles with a fixed, printed seed (`WIRESPEED_SEED` replays another),
//! including ≥ 512-bit data.

use hdl::blocks::{cdc, counter, fifo, skid};
use hdl::dsl::AxisConfig;
use rand::Rng;
use sim::{DomainHandle, PortHandle, Simulator};
use testbench::models::counter::CounterModel;
use testbench::models::fifo::SyncFifoModel;
use testbench::models::skid::SkidModel;
use testbench::rng::{random_words, seeded};

const CYCLES: u64 = 10_000;

/// The handle of the port called `name`, resolved once before a run.
fn handle(sim: &Simulator, name: &str) -> PortHandle {
    sim.port_handle(name)
        .unwrap_or_else(|e| panic!("port `{name}`: {e}"))
}

/// The handles of the ports called `names`, in that order.
fn handles<const N: usize>(sim: &Simulator, names: [&str; N]) -> [PortHandle; N] {
    names.map(|name| handle(sim, name))
}

fn bit(sim: &mut Simulator, h: PortHandle) -> bool {
    sim.get_handle_u64(h).expect("1-bit port") == 1
}

fn words(sim: &mut Simulator, h: PortHandle) -> Vec<u64> {
    sim.get_words(h).expect("readable").to_vec()
}

fn set_bit(sim: &mut Simulator, h: PortHandle, v: bool) {
    sim.set_handle_u64(h, v as u64).expect("1-bit input");
}

fn set_words(sim: &mut Simulator, h: PortHandle, v: &[u64]) {
    sim.set_words(h, v).expect("fits");
}

fn run_sync_fifo(width: u32, depth: u32, seed: u64) {
    let mut rng = seeded(&format!("sync_fifo w{width} d{depth}"), seed);
    let mut sim = Simulator::new(&fifo::sync_fifo(width, depth).unwrap()).unwrap();
    let mut model = SyncFifoModel::new(depth as usize);
    sim.reset(2);
    let [empty, full, count, rd_data, wr_en_p, wr_data, rd_en_p] = handles(
        &sim,
        [
            "empty", "full", "count", "rd_data", "wr_en", "wr_data", "rd_en",
        ],
    );
    let (mut pushes, mut pops, mut full_seen) = (0, 0, 0);
    for cycle in 0..CYCLES {
        // Phases that fill, drain and mix, so full and empty are both exercised.
        let (p_wr, p_rd) = match (cycle / 500) % 3 {
            0 => (0.9, 0.3),
            1 => (0.3, 0.9),
            _ => (0.6, 0.6),
        };
        let exp = model.outputs();
        assert_eq!(bit(&mut sim, empty), exp.empty, "empty at cycle {cycle}");
        assert_eq!(bit(&mut sim, full), exp.full, "full at cycle {cycle}");
        assert_eq!(
            sim.get_handle_u64(count).unwrap(),
            exp.count,
            "count at cycle {cycle}"
        );
        if let Some(d) = &exp.rd_data {
            assert_eq!(&words(&mut sim, rd_data), d, "rd_data at cycle {cycle}");
        }
        full_seen += exp.full as u32;
        let wr_en = rng.gen_bool(p_wr);
        let rd_en = rng.gen_bool(p_rd);
        let data = random_words(&mut rng, width);
        set_bit(&mut sim, wr_en_p, wr_en);
        set_words(&mut sim, wr_data, &data);
        set_bit(&mut sim, rd_en_p, rd_en);
        sim.step();
        let (pushed, popped) = model.step(wr_en, &data, rd_en);
        pushes += pushed as u32;
        pops += popped as u32;
    }
    assert!(
        pushes > 1000 && pops > 1000 && full_seen > 10,
        "stimulus too weak"
    );
}

#[test]
fn sync_fifo_matches_model_narrow_deep_and_odd_depths() {
    run_sync_fifo(8, 16, 1);
    run_sync_fifo(13, 10, 2);
    run_sync_fifo(32, 2, 3);
}

#[test]
fn sync_fifo_matches_model_512_bits() {
    run_sync_fifo(512, 32, 4);
}

fn run_skid(cfg: AxisConfig, seed: u64) {
    let mut rng = seeded(&format!("axis_skid {cfg:?}"), seed);
    let mut sim = Simulator::new(&skid::axis_skid(&cfg).unwrap()).unwrap();
    let mut model = SkidModel::new();
    sim.reset(2);
    let mut fields = vec![("tdata", cfg.data_width)];
    if cfg.packets {
        fields.push(("tkeep", cfg.data_width / 8));
    }
    if cfg.user_width > 0 {
        fields.push(("tuser", cfg.user_width));
    }
    if cfg.packets {
        fields.push(("tlast", 1));
    }
    let field_handles = |prefix: &str| -> Vec<PortHandle> {
        fields
            .iter()
            .map(|(f, _)| handle(&sim, &format!("{prefix}{f}")))
            .collect()
    };
    let (m_fields, s_fields) = (field_handles("m_axis_"), field_handles("s_axis_"));
    let [s_tready, m_tvalid, s_tvalid, m_tready] = handles(
        &sim,
        [
            "s_axis_tready",
            "m_axis_tvalid",
            "s_axis_tvalid",
            "m_axis_tready",
        ],
    );
    let mut moved = 0;
    for cycle in 0..CYCLES {
        let (p_in, p_out) = if (cycle / 300) % 2 == 0 {
            (0.9, 0.5)
        } else {
            (0.5, 0.95)
        };
        assert_eq!(bit(&mut sim, s_tready), model.ready(), "tready at {cycle}");
        let head = model.head().cloned();
        assert_eq!(bit(&mut sim, m_tvalid), head.is_some(), "tvalid at {cycle}");
        let beat: Vec<Vec<u64>> = fields
            .iter()
            .map(|(_, w)| random_words(&mut rng, *w))
            .collect();
        if let Some(h) = head {
            let got: Vec<Vec<u64>> = m_fields.iter().map(|h| words(&mut sim, *h)).collect();
            assert_eq!(got.concat(), h, "output beat at cycle {cycle}");
        }
        for (h, v) in s_fields.iter().zip(&beat) {
            set_words(&mut sim, *h, v);
        }
        let s_valid = rng.gen_bool(p_in);
        let m_ready = rng.gen_bool(p_out);
        set_bit(&mut sim, s_tvalid, s_valid);
        set_bit(&mut sim, m_tready, m_ready);
        sim.step();
        let (_, consumed) = model.step(s_valid, &beat.concat(), m_ready);
        moved += consumed as u32;
    }
    assert!(moved > 3000, "too few beats moved: {moved}");
}

#[test]
fn skid_buffer_matches_model_1024_bit_packets() {
    run_skid(AxisConfig::packets(1024, 128), 5);
}

#[test]
fn skid_buffer_matches_model_plain_words() {
    run_skid(AxisConfig::words(12), 6);
}

#[test]
fn counter_matches_model() {
    for (width, seed) in [(13, 7), (64, 8)] {
        let mut rng = seeded(&format!("up_counter w{width}"), seed);
        let mut sim = Simulator::new(&counter::up_counter(width).unwrap()).unwrap();
        let mut model = CounterModel::new(width);
        sim.reset(1);
        let [count, en_p, load_p, load_value] =
            handles(&sim, ["count", "en", "load", "load_value"]);
        let max = u64::MAX >> (64 - width);
        let mut wraps = 0;
        for cycle in 0..CYCLES {
            assert_eq!(
                sim.get_handle_u64(count).unwrap(),
                model.count(),
                "cycle {cycle}"
            );
            let en = rng.gen_bool(0.8);
            let load = rng.gen_bool(0.02);
            // Half the loads land within 16 of the top, so the count wraps.
            let value = if rng.gen() {
                max - rng.gen_range(0..16)
            } else {
                random_words(&mut rng, width)[0]
            };
            set_bit(&mut sim, en_p, en);
            set_bit(&mut sim, load_p, load);
            sim.set_handle_u64(load_value, value).unwrap();
            sim.step();
            let before = model.count();
            model.step(en, load, value);
            wraps += u32::from(!load && model.count() < before);
        }
        assert!(wraps >= 5, "width {width}: the count wrapped {wraps} times");
    }
}

#[test]
fn sync_bits_delays_by_its_stages_at_512_bits() {
    for (stages, seed) in [(2, 9), (3, 10)] {
        let mut rng = seeded(&format!("sync_bits s{stages}"), seed);
        let mut sim = Simulator::new(&cdc::sync_bits(512, stages).unwrap()).unwrap();
        sim.reset(1);
        let [q, d_p] = handles(&sim, ["q", "d"]);
        let mut history: Vec<Vec<u64>> = Vec::new();
        for cycle in 0..CYCLES as usize {
            let expect = if cycle >= stages as usize {
                history[cycle - stages as usize].clone()
            } else {
                vec![0; 8]
            };
            assert_eq!(words(&mut sim, q), expect, "cycle {cycle}");
            let d = random_words(&mut rng, 512);
            set_words(&mut sim, d_p, &d);
            history.push(d);
            sim.step();
        }
    }
}

/// Two clocks of the given periods; returns the simulator and the handles of the
/// domains called `a` and `b`.
fn two_clocks(
    module: &hdl::Module,
    (a, pa): (&str, u64),
    (b, pb): (&str, u64),
) -> (Simulator, DomainHandle, DomainHandle) {
    let mut sim = Simulator::new(module).unwrap();
    sim.set_clock_period(a, pa).unwrap();
    sim.set_clock_period(b, pb).unwrap();
    let ha = sim.domain_handle(a).unwrap();
    let hb = sim.domain_handle(b).unwrap();
    sim.reset(3);
    (sim, ha, hb)
}

#[test]
fn pulse_sync_delivers_every_pulse_once_within_three_destination_cycles() {
    for (p_src, p_dst, seed) in [(5_000, 7_000, 11), (10_000, 2_941, 12)] {
        let mut rng = seeded(&format!("pulse_sync {p_src}/{p_dst}"), seed);
        let m = cdc::pulse_sync().unwrap();
        let (mut sim, src, dst) = two_clocks(&m, ("src", p_src), ("dst", p_dst));
        let [dst_pulse_p, src_pulse] = handles(&sim, ["dst_pulse", "src_pulse"]);
        let gap_src_cycles = (3 * p_dst + p_src).div_ceil(p_src) + 1;
        let (mut sent, mut got) = (Vec::new(), Vec::new());
        let mut since_last = gap_src_cycles;
        let mut pulse = false;
        let mut src_cycles = 0;
        while src_cycles < CYCLES {
            let dst_pulse = bit(&mut sim, dst_pulse_p);
            let fired = sim.step_edge();
            let now = sim.time_ps();
            if fired.has(dst) && dst_pulse {
                got.push(now);
            }
            if fired.has(src) {
                src_cycles += 1;
                if pulse {
                    sent.push(now);
                }
                since_last = if pulse { 1 } else { since_last + 1 };
                pulse = since_last >= gap_src_cycles && rng.gen_bool(0.3);
                set_bit(&mut sim, src_pulse, pulse);
            }
        }
        // Let the last pulse arrive.
        for _ in 0..8 {
            let dst_pulse = bit(&mut sim, dst_pulse_p);
            if sim.step_edge().has(dst) && dst_pulse {
                got.push(sim.time_ps());
            }
        }
        if pulse {
            sent.pop();
        }
        assert!(sent.len() > 500, "too few pulses: {}", sent.len());
        assert_eq!(got.len(), sent.len(), "every pulse arrives exactly once");
        for (k, (s, g)) in sent.iter().zip(&got).enumerate() {
            // Edges observed here are the edges at which the pulse was sampled / seen.
            assert!(
                *g > *s && *g <= *s + 4 * p_dst,
                "pulse {k}: sent {s} ps, got {g} ps"
            );
        }
    }
}

#[test]
fn handshake_sync_carries_every_word_intact_at_512_bits() {
    for (p_src, p_dst, seed) in [(5_000, 10_000, 13), (2_941, 4_000, 14)] {
        let mut rng = seeded(&format!("handshake_sync {p_src}/{p_dst}"), seed);
        let m = cdc::handshake_sync(512).unwrap();
        let (mut sim, src, dst) = two_clocks(&m, ("src", p_src), ("dst", p_dst));
        let [src_ready, dst_valid_p, dst_data_p, src_valid, src_data] = handles(
            &sim,
            [
                "src_ready",
                "dst_valid",
                "dst_data",
                "src_valid",
                "src_data",
            ],
        );
        let (mut sent, mut got) = (Vec::new(), Vec::new());
        let mut offer = (false, vec![0u64; 8]);
        let mut src_cycles = 0;
        while src_cycles < CYCLES || got.len() < sent.len() {
            let ready = bit(&mut sim, src_ready);
            let dst_valid = bit(&mut sim, dst_valid_p);
            let dst_data = words(&mut sim, dst_data_p);
            let fired = sim.step_edge();
            if fired.has(dst) && dst_valid {
                got.push(dst_data);
            }
            if fired.has(src) {
                src_cycles += 1;
                if offer.0 && ready {
                    sent.push(offer.1.clone());
                }
                let keep_offering = src_cycles < CYCLES && rng.gen_bool(0.7);
                offer = (keep_offering, random_words(&mut rng, 512));
                set_bit(&mut sim, src_valid, offer.0);
                set_words(&mut sim, src_data, &offer.1);
            }
            assert!(src_cycles < CYCLES + 100, "words stuck in flight");
        }
        assert!(sent.len() > 500, "too few words: {}", sent.len());
        assert_eq!(got, sent, "words arrive in order, intact, once");
    }
}

#[test]
fn async_fifo_loses_reorders_or_invents_nothing_across_unrelated_clocks() {
    for (p_wr, p_rd, seed) in [(5_000, 10_000, 15), (2_941, 4_000, 16), (10_000, 3_333, 17)] {
        let (width, depth) = (512, 16);
        let mut rng = seeded(&format!("async_fifo {p_wr}/{p_rd}"), seed);
        let m = fifo::async_fifo(width, depth).unwrap();
        let (mut sim, wr, rd) = two_clocks(&m, ("wr", p_wr), ("rd", p_rd));
        let [full_p, empty_p, rd_data_p, wr_count, rd_en_p, wr_en_p, wr_data] = handles(
            &sim,
            [
                "full", "empty", "rd_data", "wr_count", "rd_en", "wr_en", "wr_data",
            ],
        );
        let mut queue = std::collections::VecDeque::new();
        let (mut pushes, mut pops, mut wr_cycles, mut full_seen) = (0u32, 0u32, 0u64, 0u32);
        let (mut wr_en, mut rd_en) = (false, false);
        let mut data = vec![0u64; 8];
        let mut rd_cycles_after = 0;
        while rd_cycles_after < 64 {
            let writing = wr_cycles < CYCLES;
            let full = bit(&mut sim, full_p);
            let empty = bit(&mut sim, empty_p);
            let rd_data = words(&mut sim, rd_data_p);
            let level = sim.get_handle_u64(wr_count).unwrap();
            assert!(level <= depth as u64, "wr_count {level} > depth");
            assert!(
                queue.len() <= depth as usize + 1,
                "more words held than RAM + output"
            );
            full_seen += full as u32;
            let fired = sim.step_edge();
            if fired.has(rd) {
                if rd_en && !empty {
                    let expect = queue
                        .pop_front()
                        .expect("a word was read that was never written");
                    assert_eq!(rd_data, expect, "word {pops} out of order or corrupted");
                    pops += 1;
                }
                let p = if (wr_cycles / 700) % 2 == 0 {
                    0.3
                } else {
                    0.95
                };
                rd_en = !writing || rng.gen_bool(p);
                set_bit(&mut sim, rd_en_p, rd_en);
                if !writing {
                    rd_cycles_after += 1;
                }
            }
            if fired.has(wr) {
                wr_cycles += 1;
                if wr_en && !full {
                    queue.push_back(data.clone());
                    pushes += 1;
                }
                wr_en = writing && rng.gen_bool(0.8);
                data = random_words(&mut rng, width);
                set_bit(&mut sim, wr_en_p, wr_en);
                set_words(&mut sim, wr_data, &data);
            }
        }
        assert!(queue.is_empty(), "{} words never came out", queue.len());
        assert!(bit(&mut sim, empty_p), "empty after draining");
        assert!(
            pushes > 1000 && full_seen > 10,
            "stimulus too weak: {pushes} pushes"
        );
        assert_eq!(pushes, pops);
    }
}

mod axil {
    //! The AXI-Lite register file against a bus-level model: a random master (random
    //! valid timing, random back-pressure on B and R) and the register semantics of
    //! `hdl::blocks::axil_regfile::Access`.

    use super::*;
    use hdl::blocks::axil_regfile::{axil_regfile, Access, RegFileSpec, RegisterSpec};

    const OKAY: u64 = 0;
    const SLVERR: u64 = 2;

    fn spec(separate_clock: bool) -> RegFileSpec {
        RegFileSpec {
            name: "regs".into(),
            registers: vec![
                RegisterSpec::new("ctrl", Access::ReadWrite, 32).with_reset(0xdead_beef),
                RegisterSpec::new("mode", Access::ReadWrite, 5).with_reset(3),
                RegisterSpec::new("status", Access::ReadOnly, 32),
                RegisterSpec::new("drops", Access::ClearOnWrite, 20),
            ],
            addr_width: 12,
            separate_clock,
        }
    }

    #[derive(Clone, Copy, PartialEq, Debug)]
    enum Op {
        Write { index: u32, data: u32, strb: u32 },
        Read { index: u32 },
    }

    /// Drives one AXI-Lite transaction at a time with random timing.
    struct Master {
        op: Option<Op>,
        aw_done: bool,
        w_done: bool,
        ar_done: bool,
        delay: u32,
    }

    /// The register file's ports, resolved once per run.
    struct Ports {
        awready: PortHandle,
        wready: PortHandle,
        bvalid: PortHandle,
        bresp: PortHandle,
        arready: PortHandle,
        rvalid: PortHandle,
        rdata: PortHandle,
        rresp: PortHandle,
        awvalid: PortHandle,
        wvalid: PortHandle,
        arvalid: PortHandle,
        bready: PortHandle,
        rready: PortHandle,
        awaddr: PortHandle,
        araddr: PortHandle,
        wdata: PortHandle,
        wstrb: PortHandle,
        drops_clear: PortHandle,
        status: PortHandle,
        drops: PortHandle,
        ctrl: PortHandle,
        mode: PortHandle,
    }

    impl Ports {
        fn resolve(sim: &Simulator) -> Ports {
            let h = |n: &str| handle(sim, n);
            Ports {
                awready: h("S_AXI_AWREADY"),
                wready: h("S_AXI_WREADY"),
                bvalid: h("S_AXI_BVALID"),
                bresp: h("S_AXI_BRESP"),
                arready: h("S_AXI_ARREADY"),
                rvalid: h("S_AXI_RVALID"),
                rdata: h("S_AXI_RDATA"),
                rresp: h("S_AXI_RRESP"),
                awvalid: h("S_AXI_AWVALID"),
                wvalid: h("S_AXI_WVALID"),
                arvalid: h("S_AXI_ARVALID"),
                bready: h("S_AXI_BREADY"),
                rready: h("S_AXI_RREADY"),
                awaddr: h("S_AXI_AWADDR"),
                araddr: h("S_AXI_ARADDR"),
                wdata: h("S_AXI_WDATA"),
                wstrb: h("S_AXI_WSTRB"),
                drops_clear: h("drops_clear"),
                status: h("status"),
                drops: h("drops"),
                ctrl: h("ctrl"),
                mode: h("mode"),
            }
        }
    }

    /// The bus as the master sees it before an edge.
    struct Bus {
        awready: bool,
        wready: bool,
        bvalid: bool,
        bresp: u64,
        arready: bool,
        rvalid: bool,
        rdata: u64,
        rresp: u64,
        awvalid: bool,
        wvalid: bool,
        arvalid: bool,
        bready: bool,
        rready: bool,
    }

    impl Bus {
        fn sample(sim: &mut Simulator, p: &Ports) -> Bus {
            let mut out = |h: PortHandle| sim.get_handle_u64(h).unwrap();
            Bus {
                awready: out(p.awready) == 1,
                wready: out(p.wready) == 1,
                bvalid: out(p.bvalid) == 1,
                bresp: out(p.bresp),
                arready: out(p.arready) == 1,
                rvalid: out(p.rvalid) == 1,
                rdata: out(p.rdata),
                rresp: out(p.rresp),
                awvalid: out(p.awvalid) == 1,
                wvalid: out(p.wvalid) == 1,
                arvalid: out(p.arvalid) == 1,
                bready: out(p.bready) == 1,
                rready: out(p.rready) == 1,
            }
        }
    }

    /// The register file's expected contents.
    struct Model {
        /// The two read-write registers.
        rw: [u32; 2],
        /// Their widths.
        widths: [u32; 2],
        /// `status` as driven: (from time, value).
        status_history: Vec<(u64, u64)>,
        /// `drops` as driven: (from time, value).
        drops_history: Vec<(u64, u64)>,
        /// Writes to `drops`, each owed one clear pulse.
        clears_expected: u32,
        /// How long a driven `status` may take to cross to the bus (ps).
        window_ps: u64,
    }

    impl Model {
        /// A write `op` answered with `bresp`: checked, then applied.
        fn write(&mut self, op: Op, bresp: u64) {
            let Op::Write { index, data, strb } = op else {
                panic!("B response to a read")
            };
            let writable = matches!(index, 0 | 1 | 3);
            assert_eq!(
                bresp,
                if writable { OKAY } else { SLVERR },
                "bresp for {op:?}"
            );
            if (index as usize) < 2 {
                let mask: u32 = (0..4)
                    .filter(|b| strb >> b & 1 == 1)
                    .map(|b| 0xffu32 << (8 * b))
                    .sum();
                let width_mask = if self.widths[index as usize] == 32 {
                    u32::MAX
                } else {
                    (1 << self.widths[index as usize]) - 1
                };
                let r = &mut self.rw[index as usize];
                *r = ((*r & !mask) | (data & mask)) & width_mask;
            }
            if index == 3 {
                self.clears_expected += 1;
            }
        }

        /// A read's response (`rdata`, `rresp`) at time `now`: checked.
        fn read(&self, op: Op, rdata: u64, rresp: u64, now: u64) {
            let Op::Read { index } = op else {
                panic!("R response to a write")
            };
            match index {
                0 | 1 => assert_eq!(
                    (rdata, rresp),
                    (self.rw[index as usize] as u64, OKAY),
                    "read {index}"
                ),
                2 | 3 => {
                    assert_eq!(rresp, OKAY);
                    let (name, h) = if index == 2 {
                        ("status", &self.status_history)
                    } else {
                        ("drops", &self.drops_history)
                    };
                    let recent = h.iter().enumerate().rev().any(|(k, (t, v))| {
                        let until = h.get(k + 1).map_or(u64::MAX, |n| n.0);
                        *v == rdata && until.saturating_add(self.window_ps) >= now && *t <= now
                    });
                    assert!(recent, "{name} read {rdata:#x} was never recently driven");
                }
                _ => assert_eq!((rdata, rresp), (0, SLVERR), "unmapped read"),
            }
        }
    }

    impl Master {
        /// Handshakes at this edge; true if the transaction completed (checked
        /// against `model`).
        fn handshakes(&mut self, bus: &Bus, model: &mut Model, now: u64) -> bool {
            let Some(op) = self.op else {
                return false;
            };
            self.aw_done |= bus.awvalid && bus.awready;
            self.w_done |= bus.wvalid && bus.wready;
            self.ar_done |= bus.arvalid && bus.arready;
            let mut done = false;
            if bus.bvalid && bus.bready {
                model.write(op, bus.bresp);
                self.op = None;
                done = true;
            }
            if bus.rvalid && bus.rready {
                model.read(op, bus.rdata, bus.rresp, now);
                self.op = None;
                done = true;
            }
            done
        }

        /// Starts a random transaction (one in ten to an unmapped address).
        fn start(&mut self, rng: &mut impl Rng) {
            let index = if rng.gen_bool(0.1) {
                rng.gen_range(4..1024)
            } else {
                rng.gen_range(0..4)
            };
            self.op = Some(if rng.gen_bool(0.5) {
                Op::Write {
                    index,
                    data: rng.gen(),
                    strb: rng.gen_range(0..16),
                }
            } else {
                Op::Read { index }
            });
            self.aw_done = false;
            self.w_done = false;
            self.ar_done = false;
            self.delay = rng.gen_range(0..3);
        }

        /// Drives the next cycle's master outputs; a valid, once raised, stays
        /// until its handshake.
        fn drive(&mut self, sim: &mut Simulator, p: &Ports, bus: &Bus, rng: &mut impl Rng) {
            let go = self.delay == 0;
            self.delay = self.delay.saturating_sub(1);
            let (aw, w, ar, addr, data, strb) = match self.op {
                Some(Op::Write { index, data, strb }) => (
                    go && !self.aw_done && rng.gen_bool(0.7),
                    go && !self.w_done && rng.gen_bool(0.7),
                    false,
                    index * 4,
                    data,
                    strb,
                ),
                Some(Op::Read { index }) => (false, false, go && !self.ar_done, index * 4, 0, 0),
                None => (false, false, false, 0, 0, 0),
            };
            let aw = aw || (bus.awvalid && !bus.awready);
            let w = w || (bus.wvalid && !bus.wready);
            let ar = ar || (bus.arvalid && !bus.arready);
            let mut set = |h: PortHandle, v: u64| sim.set_handle_u64(h, v).unwrap();
            set(p.awvalid, aw as u64);
            set(p.wvalid, w as u64);
            set(p.arvalid, ar as u64);
            set(p.awaddr, addr as u64);
            set(p.araddr, addr as u64);
            set(p.wdata, data as u64);
            set(p.wstrb, strb as u64);
            set(p.bready, rng.gen_bool(0.6) as u64);
            set(p.rready, rng.gen_bool(0.6) as u64);
        }
    }

    fn run(separate_clock: bool, periods: (u64, u64), seed: u64) {
        let mut rng = seeded(
            &format!("axil_regfile separate={separate_clock} {periods:?}"),
            seed,
        );
        let s = spec(separate_clock);
        let (m, _) = axil_regfile(&s).unwrap();
        let mut sim = Simulator::new(&m).unwrap();
        sim.set_clock_period("axil", periods.0).unwrap();
        let core = if separate_clock {
            sim.set_clock_period("core", periods.1).unwrap();
            Some(sim.domain_handle("core").unwrap())
        } else {
            None
        };
        let axil = sim.domain_handle("axil").unwrap();
        sim.reset(3);
        let ports = Ports::resolve(&sim);

        let mut model = Model {
            rw: [0xdead_beef, 3],
            widths: [32, 5],
            status_history: vec![(0, 0)],
            drops_history: vec![(0, 0)],
            clears_expected: 0,
            window_ps: 40 * periods.0.max(periods.1),
        };
        let mut clears_seen = 0u32;
        let mut master = Master {
            op: None,
            aw_done: false,
            w_done: false,
            ar_done: false,
            delay: 0,
        };
        let (mut axil_cycles, mut completed, mut quiet) = (0u64, 0u32, 0u32);
        while axil_cycles < CYCLES {
            let bus = Bus::sample(&mut sim, &ports);
            let clear = sim.get_handle_u64(ports.drops_clear).unwrap() == 1;
            let fired = sim.step_edge();
            let now = sim.time_ps();
            if fired.has(core.unwrap_or(axil)) {
                clears_seen += clear as u32;
                if rng.gen_bool(0.01) {
                    let v = rng.gen::<u32>() as u64;
                    sim.set_handle_u64(ports.status, v).unwrap();
                    model.status_history.push((now, v));
                }
                let drops = rng.gen::<u32>() as u64 & 0xfffff;
                sim.set_handle_u64(ports.drops, drops).unwrap();
                model.drops_history.push((now, drops));
            }
            if !fired.has(axil) {
                continue;
            }
            axil_cycles += 1;
            completed += master.handshakes(&bus, &mut model, now) as u32;
            // Quiet phases let crossings settle; then the datapath sees every RW value.
            if master.op.is_none() && quiet > 0 {
                quiet -= 1;
                if quiet == 0 {
                    assert_eq!(
                        sim.get_handle_u64(ports.ctrl).unwrap(),
                        model.rw[0] as u64,
                        "ctrl at datapath"
                    );
                    assert_eq!(
                        sim.get_handle_u64(ports.mode).unwrap(),
                        model.rw[1] as u64,
                        "mode at datapath"
                    );
                }
            } else if master.op.is_none() {
                if rng.gen_bool(0.02) {
                    quiet = 60;
                } else {
                    master.start(&mut rng);
                }
            }
            master.drive(&mut sim, &ports, &bus, &mut rng);
        }
        // Let the last clear pulses cross.
        for _ in 0..40 {
            let clear = sim.get_handle_u64(ports.drops_clear).unwrap() == 1;
            let fired = sim.step_edge();
            if fired.has(core.unwrap_or(axil)) {
                clears_seen += clear as u32;
            }
        }
        assert!(completed > 500, "too few transactions: {completed}");
        assert_eq!(
            clears_seen, model.clears_expected,
            "one clear pulse per write to `drops`"
        );
    }

    #[test]
    fn regfile_in_its_own_clock_domain_matches_the_bus_model() {
        run(true, (10_000, 5_000), 18);
        run(true, (2_941, 4_000), 19);
    }

    #[test]
    fn regfile_in_one_domain_matches_the_bus_model() {
        run(false, (4_000, 4_000), 20);
    }
}
