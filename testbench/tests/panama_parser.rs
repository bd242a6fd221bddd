//! `hdl::panama::parser` against the golden classifier `testbench::panama::classify`,
//! on both engines in lockstep (the differential harness: native simulator and
//! Verilator compared on every output after every input change and every edge):
//! - per data width, thousands of random frames (good aggregation packets, every
//!   `Defect`, IPv4 options, truncations, VLAN tags, fragments, background traffic
//!   incl. IPv6 and ARP) back to back with random `tvalid` gaps and random
//!   `m_axis_tready` back-pressure: every output beat equals the input beat (so
//!   every frame's bytes are unchanged, none lost, order kept) and every metadata
//!   record equals the golden classification;
//! - throughput and latency without back-pressure, as exact cycle counts;
//! - parameter errors; Verilator lint and iverilog on the emitted Verilog.

mod verilog_common;

use hdl::blocks::fp::FpFormat;
use hdl::panama::parser::{meta, parser, FrameClass, ParserConfig, Reason, LATENCY};
use rand::Rng;
use std::collections::{BTreeMap, BTreeSet};
use testbench::dut::{ports_of, DutError};
use testbench::harness::{DiffConfig, Differential, Step};
use testbench::panama::config::{DEFAULT_AGG_UDP_PORT, SUME_PORTS};
use testbench::panama::header::{elem_bytes, IPV4_OFFSET, UDP_OFFSET};
use testbench::panama::traffic::{background_frame, random_element, with_defect, Defect, Values};
use testbench::panama::{classify, AggPacket, Class, Malformed};
use testbench::pins::{AxisPins, Pin, Pins};
use testbench::rng::seeded;

const MAX_PAYLOAD: usize = 1024;

/// One input frame: its bytes, its one-hot source port, and the bytes to leave in
/// the unused lanes of its last beat where it was cut from a longer frame (`ghost`,
/// whose prefix it is): stale header bytes the parser must not read.
struct Frame {
    bytes: Vec<u8>,
    src: u8,
    ghost: Vec<u8>,
}

/// One AXI-Stream beat as port words.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Beat {
    data: Vec<u64>,
    keep: Vec<u64>,
    user: Vec<u64>,
    last: bool,
}

/// The metadata record, field by field in `meta::FIELDS` order.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Record(Vec<u64>);

// ---------------------------------------------------------------- frames

fn agg_packet(rng: &mut impl Rng, port: u16) -> AggPacket {
    let format = FpFormat::ALL[rng.gen_range(0..FpFormat::ALL.len())];
    let bytes = 64 * rng.gen_range(1..=MAX_PAYLOAD / 64);
    let payload = (0..bytes / elem_bytes(format))
        .map(|_| random_element(rng, format, Values::WithSpecials))
        .collect();
    let mut p = AggPacket::new(
        format,
        rng.gen(),
        rng.gen(),
        rng.gen(),
        rng.gen(),
        port,
        payload,
    );
    p.ecn = rng.gen_range(0..4);
    p.dscp = rng.gen_range(0..64);
    p.identification = rng.gen();
    p.dont_fragment = rng.gen();
    p.ttl = rng.gen();
    p.src_port = rng.gen();
    p
}

fn agg_frame(rng: &mut impl Rng, port: u16) -> Vec<u8> {
    agg_packet(rng, port)
        .to_frame()
        .unwrap_or_else(|e| panic!("building a frame: {e}"))
}

fn set_be16(f: &mut [u8], at: usize, v: u16) {
    f[at..at + 2].copy_from_slice(&v.to_be_bytes());
}

/// An aggregation frame with `words` (1..=10) words of IPv4 options (NOPs), IHL and
/// total length adjusted: the UDP port moves behind the options.
fn with_options(frame: &[u8], words: usize) -> Vec<u8> {
    let mut f = frame[..UDP_OFFSET].to_vec();
    f.extend(std::iter::repeat_n(1u8, 4 * words));
    f.extend_from_slice(&frame[UDP_OFFSET..]);
    f[IPV4_OFFSET] = 0x40 | (5 + words as u8);
    let total = (f.len() - IPV4_OFFSET) as u16;
    set_be16(&mut f, IPV4_OFFSET + 2, total);
    f
}

/// Edge cases around the aggregation test: options, truncations, VLAN tags,
/// fragments, other ports, and random headers that look like aggregation; with the
/// frame a cut one was cut from.
fn odd_frame(rng: &mut impl Rng, port: u16) -> (Vec<u8>, Vec<u8>) {
    let f = agg_frame(rng, port);
    let ghost = f.clone();
    let cut = |g: Vec<u8>| (g.clone(), g);
    let g = match rng.gen_range(0..8) {
        0 => with_options(&f, rng.gen_range(1..=10)),
        1 => {
            let (mut g, ghost) = cut(with_options(&f, rng.gen_range(1..=10)));
            g.truncate(rng.gen_range(34..=90));
            return (g, ghost);
        }
        2 => return (f[..rng.gen_range(1..=127)].to_vec(), ghost),
        7 => {
            // Cut at a length where a check's outcome flips: the UDP port just
            // (in)visible behind 0–10 option words, the IPv4 header, the headers.
            let words = rng.gen_range(0..=10);
            let (mut g, ghost) = cut(if words == 0 {
                f
            } else {
                with_options(&f, words)
            });
            let port_end = UDP_OFFSET + 4 * words + 4;
            let cuts = [port_end - 1, port_end, port_end + 1, 33, 34, 63, 64, 65];
            g.truncate(cuts[rng.gen_range(0..cuts.len())]);
            return (g, ghost);
        }
        3 => {
            // An 802.1Q tag before the IPv4 EtherType: not aggregation.
            let mut g = f[..12].to_vec();
            g.extend_from_slice(&[0x81, 0x00, 0x00, 0x05]);
            g.extend_from_slice(&f[12..]);
            g
        }
        4 => {
            let mut g = f;
            g[IPV4_OFFSET + 7] = rng.gen_range(1..=255);
            g
        }
        5 => {
            let mut g = f;
            set_be16(&mut g, UDP_OFFSET + 2, port ^ rng.gen_range(1..=u16::MAX));
            g
        }
        _ => {
            // Random bytes with an aggregation-looking prefix: several checks fail
            // at once, so the priority order is what is tested.
            let len = rng.gen_range(34..=200);
            let mut g: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
            g[..f.len().min(len)].copy_from_slice(&f[..f.len().min(len)]);
            for b in g.iter_mut().skip(UDP_OFFSET + 4) {
                if rng.gen_bool(0.3) {
                    *b = rng.gen();
                }
            }
            g[IPV4_OFFSET] = 0x45;
            g
        }
    };
    (g, vec![])
}

/// `count` random frames of every kind, to `port`.
fn random_frames(rng: &mut impl Rng, count: usize, port: u16) -> Vec<Frame> {
    let mut defects = Defect::ALL.iter().cycle();
    (0..count)
        .map(|_| {
            let (bytes, ghost) = match rng.gen_range(0..100) {
                0..40 => (agg_frame(rng, port), vec![]),
                40..55 => {
                    let defect = *defects.next().unwrap_or(&Defect::Version);
                    let f = agg_frame(rng, port);
                    (with_defect(rng, &f, defect, MAX_PAYLOAD), f)
                }
                55..65 => {
                    // Two defects at once: the first failing check must win.
                    let f = agg_frame(rng, port);
                    let mut g = f.clone();
                    for _ in 0..2 {
                        let defect = Defect::ALL[rng.gen_range(0..Defect::ALL.len())];
                        g = with_defect(rng, &g, defect, MAX_PAYLOAD);
                    }
                    (g, f)
                }
                65..85 => (background_frame(rng, port), vec![]),
                _ => odd_frame(rng, port),
            };
            let src = SUME_PORTS[rng.gen_range(0..SUME_PORTS.len())];
            Frame { bytes, src, ghost }
        })
        .collect()
}

/// Little-endian words of `bits` bits with `bytes` in bytes `0..`.
fn words_of(bytes: &[u8], bits: usize) -> Vec<u64> {
    let mut w = vec![0u64; bits.div_ceil(64)];
    for (i, b) in bytes.iter().enumerate() {
        w[i / 8] |= u64::from(*b) << (8 * (i % 8));
    }
    w
}

/// The frame as beats of `width` bits: `tkeep` all ones but on the last beat,
/// the ghost's bytes or garbage in the unused bytes of the last beat, the NetFPGA
/// `tuser` on the first
/// beat (length, source port) and garbage in `tuser` of the others.
fn beats(rng: &mut impl Rng, frame: &Frame, width: usize) -> Vec<Beat> {
    let per_beat = width / 8;
    let chunks: Vec<&[u8]> = frame.bytes.chunks(per_beat).collect();
    let n = chunks.len();
    chunks
        .iter()
        .enumerate()
        .map(|(i, chunk)| {
            let mut data = chunk.to_vec();
            data.extend((chunk.len()..per_beat).map(|b| {
                let ghost = frame.ghost.get(i * per_beat + b).copied();
                ghost.unwrap_or_else(|| rng.gen::<u8>())
            }));
            let mut keep = vec![0u64; per_beat.div_ceil(64)];
            for b in 0..chunk.len() {
                keep[b / 64] |= 1 << (b % 64);
            }
            let user = if i == 0 {
                vec![
                    (frame.bytes.len() as u64 & 0xFFFF) | u64::from(frame.src) << 16,
                    0,
                ]
            } else {
                vec![rng.gen(), rng.gen()]
            };
            Beat {
                data: words_of(&data, width),
                keep,
                user,
                last: i + 1 == n,
            }
        })
        .collect()
}

// ---------------------------------------------------------------- golden records

fn reason(m: &Malformed) -> Reason {
    match m {
        Malformed::Truncated { .. } => Reason::Truncated,
        Malformed::Ipv4Options { .. } => Reason::Ipv4Options,
        Malformed::Fragmented => Reason::Fragmented,
        Malformed::Ipv4Length { .. } => Reason::Ipv4Length,
        Malformed::UdpLength { .. } => Reason::UdpLength,
        Malformed::Version { .. } => Reason::Version,
        Malformed::Flags { .. } => Reason::Flags,
        Malformed::UnknownFormat { .. } => Reason::UnknownFormat,
        Malformed::PayloadLength { .. } => Reason::PayloadLength,
        Malformed::PayloadTooLong { .. } => Reason::PayloadTooLong,
        Malformed::ElemCount { .. } => Reason::ElemCount,
        Malformed::Layer(e) => panic!("golden classifier hit an etherparse error: {e}"),
    }
}

/// What the parser must report for `frame` (in `meta::FIELDS` order).
fn expected(frame: &Frame, port: u16) -> Record {
    let len = frame.bytes.len() as u64;
    let src = u64::from(frame.src);
    let v = match classify(&frame.bytes, port, MAX_PAYLOAD) {
        Class::Bypass => vec![FrameClass::Bypass.code(), 0, len, src, 0, 0, 0, 0, 0, 0, 0],
        Class::Malformed(m) => {
            let code = reason(&m).code();
            vec![
                FrameClass::Malformed.code(),
                code,
                len,
                src,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
            ]
        }
        Class::Aggregation(p) => {
            let h = p.header;
            vec![
                FrameClass::Aggregation.code(),
                0,
                len,
                src,
                u64::from(p.ecn),
                u64::from(h.job_id),
                u64::from(h.tree_id),
                u64::from(h.format),
                u64::from(h.seq),
                u64::from(h.worker_id),
                u64::from(h.elem_count),
            ]
        }
    };
    Record(v)
}

// ---------------------------------------------------------------- the stimulus

/// Drives frames into `s_axis` and checks `m_axis` and the metadata, between two
/// edges at a time (see [`Checker::step`]).
struct Checker {
    beats: Vec<Beat>,
    records: Vec<Record>,
    /// Index of the beat on `s_axis` (or next to offer).
    next_in: usize,
    /// `s_axis_tvalid` driven for the interval that just ended.
    driving: bool,
    /// `s_axis_tready` seen in that interval.
    in_ready: bool,
    /// Output beat and record presented in that interval, if `m_axis_tvalid`.
    presented: Option<(Beat, Record)>,
    /// `m_axis_tready` driven in that interval.
    out_ready: bool,
    next_out: usize,
    frames_out: usize,
    /// Intervals with `tvalid && !tready` on the input.
    input_stalls: u64,
    /// Interval index at which each input beat was accepted / output beat first seen.
    accepted_at: Vec<u64>,
    first_seen_at: Vec<Option<u64>>,
    /// Frames checked per (class, reason) code.
    seen: BTreeMap<(u64, u64), usize>,
    /// Interval in which the last output beat was taken.
    last_out_at: u64,
}

impl Checker {
    fn new(beats: Vec<Beat>, records: Vec<Record>) -> Self {
        let n = beats.len();
        Checker {
            beats,
            records,
            next_in: 0,
            driving: false,
            in_ready: false,
            presented: None,
            out_ready: false,
            next_out: 0,
            frames_out: 0,
            input_stalls: 0,
            accepted_at: vec![],
            first_seen_at: vec![None; n],
            seen: BTreeMap::new(),
            last_out_at: 0,
        }
    }

    fn done(&self) -> bool {
        self.next_out == self.beats.len()
    }

    fn read(s: &mut Step, p: &ParserPins) -> Result<(bool, Beat, Record, bool), DutError> {
        let m = &p.m_axis;
        let valid = s.is_high(m.tvalid)?;
        let beat = Beat {
            data: value(s, m.tdata)?,
            keep: value(s, m.tkeep)?,
            user: value(s, m.tuser)?,
            last: s.is_high(m.tlast)?,
        };
        let record = Record(
            p.meta
                .iter()
                .map(|&pin| s.get_u64(pin))
                .collect::<Result<_, _>>()?,
        );
        Ok((valid, beat, record, s.is_high(p.meta_valid)?))
    }

    /// One interval: account for the edge that just happened, check what is now on
    /// the outputs, then drive the inputs (`p_valid`, `p_ready`: probabilities of
    /// offering a new beat and of accepting an output beat).
    fn step(
        &mut self,
        s: &mut Step,
        p: &ParserPins,
        rng: &mut impl Rng,
        p_valid: f64,
        p_ready: f64,
    ) -> Result<(), DutError> {
        let now = s.cycles[0];
        if !s.fired.is_empty() {
            if self.driving && self.in_ready {
                self.accepted_at.push(now - 1);
                self.next_in += 1;
            }
            if self.driving && !self.in_ready {
                self.input_stalls += 1;
            }
            if let (Some((beat, record)), true) = (self.presented.take(), self.out_ready) {
                self.consume(beat, record);
                self.last_out_at = now;
            }
        }
        let (valid, beat, record, meta_valid) = Self::read(s, p)?;
        assert_eq!(
            meta_valid,
            valid && beat.last,
            "m_meta_valid at cycle {now}"
        );
        if !meta_valid {
            assert!(
                record.0.iter().all(|&v| v == 0),
                "metadata {record:?} without m_meta_valid at cycle {now}"
            );
        }
        if valid {
            assert!(
                self.next_out < self.beats.len(),
                "extra output beat at cycle {now}"
            );
            self.first_seen_at[self.next_out].get_or_insert(now);
            self.presented = Some((beat, record));
        }
        self.in_ready = s.is_high(p.s_axis.tready)?;

        // AXI-Stream: a beat once offered stays offered until taken.
        let offer = self.next_in < self.beats.len() && (self.driving || rng.gen_bool(p_valid));
        self.driving = offer;
        let shown = if offer {
            self.next_in
        } else {
            (self.next_in * 7 + 3) % self.beats.len()
        };
        let b = &self.beats[shown];
        let i = &p.s_axis;
        s.set(i.tdata, &b.data)?;
        s.set(i.tkeep, &b.keep)?;
        s.set(i.tuser, &b.user)?;
        s.set_u64(i.tlast, u64::from(b.last))?;
        s.set_u64(i.tvalid, u64::from(offer))?;
        self.out_ready = rng.gen_bool(p_ready);
        s.set_u64(p.m_axis.tready, u64::from(self.out_ready))
    }

    fn consume(&mut self, beat: Beat, record: Record) {
        let i = self.next_out;
        assert_eq!(
            beat, self.beats[i],
            "output beat {i} (frame {})",
            self.frames_out
        );
        if beat.last {
            let want = &self.records[self.frames_out];
            assert_eq!(
                &record,
                want,
                "metadata of frame {} (fields {:?})",
                self.frames_out,
                meta::FIELDS.map(|f| f.0)
            );
            *self.seen.entry((want.0[0], want.0[1])).or_default() += 1;
            self.frames_out += 1;
        }
        self.next_out += 1;
    }
}

fn stream(rng: &mut impl Rng, frames: &[Frame], width: usize, port: u16) -> Checker {
    let beats: Vec<Beat> = frames.iter().flat_map(|f| beats(rng, f, width)).collect();
    let records = frames.iter().map(|f| expected(f, port)).collect();
    Checker::new(beats, records)
}

/// The value of `pin` (any width), as words.
fn value(s: &mut Step, pin: Pin) -> Result<Vec<u64>, DutError> {
    let mut words = vec![0; s.words(pin)];
    s.get_into(pin, &mut words)?;
    Ok(words)
}

/// The parser's ports, resolved once per run.
struct ParserPins {
    s_axis: AxisPins,
    m_axis: AxisPins,
    /// `m_meta_valid`.
    meta_valid: Pin,
    /// The record's fields, in [`meta::FIELDS`] order.
    meta: [Pin; meta::FIELDS.len()],
    agg_udp_port: Pin,
}

impl ParserPins {
    fn of(m: &hdl::Module) -> Result<Self, DutError> {
        let ports = ports_of(m);
        Ok(ParserPins {
            s_axis: AxisPins::resolve(&ports, "s_axis_")?,
            m_axis: AxisPins::resolve(&ports, "m_axis_")?,
            meta_valid: Pin::resolve(&ports, "m_meta_valid")?,
            meta: Pin::resolve_all(&ports, meta::FIELDS.map(|(name, _)| name))?,
            agg_udp_port: Pin::resolve(&ports, "agg_udp_port")?,
        })
    }
}

fn set_port(s: &mut Step, p: &ParserPins, port: u16) -> Result<(), DutError> {
    s.set_u64(p.agg_udp_port, u64::from(port))
}

// ---------------------------------------------------------------- tests

const FRAMES_PER_WIDTH: usize = 2_200;

fn random_traffic(width: u32, seed: u64) {
    let mut rng = seeded(&format!("panama parser {width}"), seed);
    let port = if width == 512 {
        rng.gen()
    } else {
        DEFAULT_AGG_UDP_PORT
    };
    let m = parser(&ParserConfig::new(width)).unwrap_or_else(|e| panic!("{e}"));
    let frames = random_frames(&mut rng, FRAMES_PER_WIDTH, port);
    let mut c = stream(&mut rng, &frames, width as usize, port);
    let cycles = c.beats.len() as u64 * 3 + 1_000;
    let p = ParserPins::of(&m).unwrap_or_else(|e| panic!("{e}"));
    let report = Differential::new(&m)
        .try_run(&DiffConfig::cycles(cycles), |s| {
            set_port(s, &p, port)?;
            // Phases of back-pressure: light, heavy, none, random.
            let (pv, pr) =
                [(0.8, 0.8), (0.9, 0.3), (0.7, 1.0), (0.5, 0.6)][(s.cycles[0] / 700 % 4) as usize];
            c.step(s, &p, &mut rng, pv, pr)
        })
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        c.done(),
        "{} of {} beats came out in {cycles} cycles",
        c.next_out,
        c.beats.len()
    );
    assert_eq!(c.frames_out, frames.len());
    let classes: BTreeSet<u64> = c.seen.keys().map(|(k, _)| *k).collect();
    assert_eq!(classes.len(), 3, "every class seen: {:?}", c.seen);
    for r in Reason::CHECKS {
        assert!(
            c.seen
                .contains_key(&(FrameClass::Malformed.code(), r.code())),
            "no {r:?} frame among {:?}",
            c.seen
        );
    }
    println!(
        "width {width}: {} frames, {} beats, all out by cycle {} (of {} run), {} comparisons; \
         frames per (class, reason): {:?}",
        frames.len(),
        c.beats.len(),
        c.last_out_at,
        report.cycles[0],
        report.comparisons,
        c.seen
    );
}

#[test]
fn random_frames_256_bits_pass_unchanged_with_golden_metadata() {
    random_traffic(256, 0x256);
}

#[test]
fn random_frames_512_bits_pass_unchanged_with_golden_metadata() {
    random_traffic(512, 0x512);
}

#[test]
fn random_frames_1024_bits_pass_unchanged_with_golden_metadata() {
    random_traffic(1024, 0x1024);
}

/// Back-to-back frames with `m_axis_tready` = 1: one beat accepted every cycle (no
/// input stall after the first beat), every beat out exactly `LATENCY` cycles after
/// it went in, and the last beat leaves at cycle `beats + LATENCY`.
#[test]
fn full_throughput_and_latency_without_back_pressure() {
    for width in [256u32, 512, 1024] {
        let mut rng = seeded(&format!("panama parser throughput {width}"), 7);
        let port = DEFAULT_AGG_UDP_PORT;
        let m = parser(&ParserConfig::new(width)).unwrap_or_else(|e| panic!("{e}"));
        let frames = random_frames(&mut rng, 150, port);
        let mut c = stream(&mut rng, &frames, width as usize, port);
        let n = c.beats.len() as u64;
        let cycles = n + u64::from(LATENCY) + 1;
        let p = ParserPins::of(&m).unwrap_or_else(|e| panic!("{e}"));
        Differential::new(&m)
            .try_run(&DiffConfig::cycles(cycles), |s| {
                set_port(s, &p, port)?;
                c.step(s, &p, &mut rng, 1.0, 1.0)
            })
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.input_stalls, 0, "input stalls at {width} bits");
        assert!(c.done(), "{} of {n} beats out at {width} bits", c.next_out);
        assert_eq!(c.frames_out, frames.len());
        let accepted: Vec<u64> = (0..n).collect();
        assert_eq!(
            c.accepted_at, accepted,
            "one beat per cycle at {width} bits"
        );
        for (i, seen) in c.first_seen_at.iter().enumerate() {
            assert_eq!(
                *seen,
                Some(i as u64 + u64::from(LATENCY)),
                "beat {i} latency at {width} bits"
            );
        }
        println!(
            "width {width}: {} frames, {n} beats in {n} cycles",
            frames.len()
        );
    }
}

#[test]
fn bad_parameters_are_errors_naming_the_parameter() {
    for width in [0u32, 8, 128, 300, 2048] {
        let e = parser(&ParserConfig::new(width)).expect_err("bad width accepted");
        let text = e.to_string();
        assert!(text.contains("data_width"), "{text}");
        assert!(text.contains(&width.to_string()), "{text}");
    }
    for max in [0u32, 100, 65_536] {
        let cfg = ParserConfig {
            data_width: 512,
            max_payload_bytes: max,
        };
        let text = parser(&cfg).expect_err("bad max_payload_bytes").to_string();
        assert!(text.contains("max_payload_bytes"), "{text}");
    }
    assert!(parser(&ParserConfig::default()).is_ok());
}

/// The emitted Verilog passes `verilator --lint-only -Wall`, a full Verilation and
/// `iverilog -g2005`, and is emitted identically twice.
#[test]
fn verilog_passes_lint_and_iverilog() {
    for width in [256u32, 1024] {
        let m = parser(&ParserConfig::new(width)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(gen::emit(&m).ok(), gen::emit(&m).ok(), "deterministic");
        verilog_common::check_tools(&m, false);
    }
}
