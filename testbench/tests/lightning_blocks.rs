//! Lightning's first datapath blocks: the synchronized DAC streamer (with preamble
//! insertion and operand alignment) and the ADC preamble detector. Reference
//! models written from the module docs run in lockstep with the native simulator
//! and Verilator; the detector locks on ADC streams made by the photonic model at
//! every rotation; waveform snapshots pin a streamer firing and a preamble lock.

mod verilog_common;

use hdl::lightning::align::operand_align;
use hdl::lightning::bus::{activation_preamble, weight_preamble, BUS_WIDTH};
use hdl::lightning::preamble_detector::{preamble_detector, PreambleDetectorConfig};
use hdl::lightning::streamer::{streamer, StreamerConfig};
use hdl::{Module, ModuleBuilder, ResetPolarity};
use rand::Rng;
use std::collections::VecDeque;
use testbench::dut::{ports_of, Dut, DutError, NativeDut};
use testbench::harness::{DiffConfig, Differential, Step};
use testbench::lightning::arith::{decode_sample, encode_sample, pack_bus, unpack_bus};
use testbench::lightning::photonic::product;
use testbench::pins::{Pin, Pins};
use testbench::rng::seeded;
use testbench::waveform::Waveform;

/// One bus cycle: 16 samples, sample 0 first.
type Word = [u16; 16];

const IDLE: Word = [0; 16];

fn pack(w: &Word) -> Vec<u64> {
    pack_bus(w).to_vec()
}

fn unpack(words: &[u64]) -> Word {
    let mut a = [0u64; 4];
    for (dst, src) in a.iter_mut().zip(words) {
        *dst = *src;
    }
    unpack_bus(&a)
}

fn random_word(rng: &mut impl Rng) -> Word {
    std::array::from_fn(|_| rng.gen())
}

/// A word of 8-bit values as the DAC carries them (`v << 7`).
fn random_values(rng: &mut impl Rng) -> Word {
    std::array::from_fn(|_| encode_sample(rng.gen()))
}

// ---------------------------------------------------------------------------
// Reference models, from the module docs.
// ---------------------------------------------------------------------------

/// `lightning_align`: out(t) from X[t-3-d] and X[t-4-d], d and s of cycle t-2,
/// each idle if `flush` was 1 in its cycle or a later one before t.
#[derive(Default)]
struct AlignModel {
    history: Vec<(bool, Word)>,
    controls: Vec<(usize, usize)>,
    /// The cycles with `flush` = 1.
    flushes: Vec<usize>,
}

impl AlignModel {
    /// Records the input word and `flush` of this cycle and the controls of the
    /// next.
    fn push(&mut self, valid: bool, word: Word, delay: usize, shift: usize, flush: bool) {
        if flush {
            self.flushes.push(self.history.len());
        }
        self.history.push((valid, word));
        self.controls.push((delay, shift));
    }

    /// Word `n` as it leaves in cycle `t` (as if no flush came, without
    /// `flushes`).
    fn word(&self, n: isize, t: usize, flushes: bool) -> (bool, Word) {
        let flushed = |n: usize| flushes && self.flushes.iter().any(|&f| (n..t).contains(&f));
        match usize::try_from(n) {
            Ok(n) if !flushed(n) => self.history[n],
            _ => (false, IDLE),
        }
    }

    /// The registered output in cycle `t` (every cycle before `t` pushed).
    fn output(&self, t: usize) -> (bool, Word) {
        self.output_as(t, true)
    }

    /// The output in cycle `t`, as if no flush came without `flushes`.
    fn output_as(&self, t: usize, flushes: bool) -> (bool, Word) {
        if t < 2 {
            return (false, IDLE);
        }
        let (d, s) = self.controls[t - 2];
        let (va, a) = self.word(t as isize - 3 - d as isize, t, flushes);
        let (vb, b) = self.word(t as isize - 4 - d as isize, t, flushes);
        let data = std::array::from_fn(|i| if i >= s { a[i - s] } else { b[16 + i - s] });
        (va || (s != 0 && vb), data)
    }
}

/// Inputs of the streamer in one cycle.
struct StreamerCycle {
    start: bool,
    length: u32,
    flush: bool,
    valid: Vec<bool>,
    data: Vec<Word>,
    delay: Vec<usize>,
    shift: Vec<usize>,
}

/// `lightning_streamer_d{dacs}`.
struct StreamerModel {
    preamble: bool,
    sent: u32,
    arrived: Vec<bool>,
    aligners: Vec<AlignModel>,
}

impl StreamerModel {
    fn new(dacs: usize) -> Self {
        StreamerModel {
            preamble: false,
            sent: 0,
            arrived: vec![false; dacs],
            aligners: (0..dacs).map(|_| AlignModel::default()).collect(),
        }
    }

    /// Applies one cycle; returns `fire` (= every `tready`) of that cycle.
    fn step(&mut self, c: &StreamerCycle) -> bool {
        let dropped = self
            .arrived
            .iter()
            .zip(&c.valid)
            .any(|(&arrived, &valid)| arrived && !valid);
        let clear = c.start || self.preamble || dropped;
        let fire = !clear && c.valid.iter().all(|&v| v);
        for (i, aligner) in self.aligners.iter_mut().enumerate() {
            let word = if self.preamble {
                if i == 0 {
                    activation_preamble()
                } else {
                    weight_preamble()
                }
            } else if fire {
                c.data[i]
            } else {
                IDLE
            };
            let valid = self.preamble || fire;
            aligner.push(valid, word, c.delay[i], c.shift[i], c.flush);
        }
        for (arrived, &valid) in self.arrived.iter_mut().zip(&c.valid) {
            *arrived = valid && !fire && !clear;
        }
        let last = self.preamble && (c.length == 0 || self.sent + 1 >= c.length);
        let next = if c.start {
            c.length != 0
        } else {
            self.preamble && !last
        };
        if c.start {
            self.sent = 0;
        } else if self.preamble {
            self.sent += 1;
        }
        self.preamble = next;
        fire
    }
}

/// Mask of one ADC word: bit i = 16 * sample_i > sum.
fn mask_of(w: &Word) -> u16 {
    let sum: u32 = w.iter().map(|&s| u32::from(s)).sum();
    (0..16)
        .filter(|&i| 16 * u32::from(w[i]) > sum)
        .fold(0, |m, i| m | (1 << i))
}

/// Lowest rotation k whose window (bits k..15 of `prev`, 0..k-1 of `cur`) is 0x00FF.
fn rotation_of(prev: u16, cur: u16) -> Option<usize> {
    let pair = (u32::from(cur) << 16) | u32::from(prev);
    (0..16).find(|&k| (pair >> k) & 0xFFFF == 0x00FF)
}

/// The 16 samples starting at sample k of `prev`, continuing into `cur`.
fn window(prev: &Word, cur: &Word, k: usize) -> Word {
    std::array::from_fn(|i| {
        if i + k < 16 {
            prev[i + k]
        } else {
            cur[i + k - 16]
        }
    })
}

/// Inputs of the detector in one cycle.
#[derive(Clone, Copy)]
struct DetectorCycle {
    valid: bool,
    data: Word,
    arm: bool,
    length: u32,
    timeout: u64,
}

/// Registered outputs of the detector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct DetectorOut {
    m_valid: bool,
    m_data: Word,
    searching: bool,
    locked: bool,
    failed: bool,
    rotation: usize,
}

/// `lightning_preamble_detector_t{w}`.
struct DetectorModel {
    pipe: [(bool, Word); 2],
    prev_mask: u16,
    prev_word: Word,
    prev_any: bool,
    prev_k: usize,
    run: u32,
    waited: u64,
    out: DetectorOut,
}

impl DetectorModel {
    fn new() -> Self {
        DetectorModel {
            pipe: [(false, IDLE); 2],
            prev_mask: 0,
            prev_word: IDLE,
            prev_any: false,
            prev_k: 0,
            run: 0,
            waited: 0,
            out: DetectorOut {
                m_valid: false,
                m_data: IDLE,
                searching: false,
                locked: false,
                failed: false,
                rotation: 0,
            },
        }
    }

    fn step(&mut self, c: &DetectorCycle) {
        let (v2, w2) = self.pipe[1];
        self.pipe[1] = self.pipe[0];
        self.pipe[0] = (c.valid, c.data);
        let mask = mask_of(&w2);
        let k = rotation_of(self.prev_mask, mask);
        let any = k.is_some();
        let k = k.unwrap_or(0);
        let same = any && self.prev_any && k == self.prev_k;
        let o = self.out;
        let judged = o.searching && v2;
        let run_after = if same { self.run + 1 } else { u32::from(any) };
        let lock = judged && !c.arm && any && run_after >= c.length.max(1);
        let expired = o.searching && self.waited + 1 >= c.timeout.max(1);
        let fail = o.searching && !c.arm && expired && !lock;
        // Counters.
        if c.arm {
            self.waited = 0;
            self.run = 0;
        } else {
            if o.searching {
                self.waited += 1;
            }
            if judged {
                self.run = run_after;
            }
        }
        // State and window.
        let mut next = o;
        next.searching = c.arm || (o.searching && !lock && !fail);
        next.locked = !c.arm && (o.locked || lock);
        next.failed = !c.arm && (o.failed || fail);
        if lock {
            next.rotation = k;
        }
        next.m_valid = o.locked && v2;
        if next.m_valid {
            next.m_data = window(&self.prev_word, &w2, o.rotation);
        }
        if v2 {
            self.prev_mask = mask;
            self.prev_word = w2;
            self.prev_k = k;
        }
        let kept = if v2 { any } else { self.prev_any };
        self.prev_any = !c.arm && kept;
        self.out = next;
    }
}

/// The ports called `names` of `m`, resolved once before a run.
fn pins<const N: usize>(m: &Module, names: [&str; N]) -> [Pin; N] {
    Pin::resolve_all(&ports_of(m), names).unwrap_or_else(|e| panic!("{e}"))
}

/// The detector's ports, resolved once per run.
struct DetectorPins {
    inputs: [Pin; 5],
    m_tvalid: Pin,
    m_tdata: Pin,
    searching: Pin,
    locked: Pin,
    failed: Pin,
    rotation: Pin,
}

impl DetectorPins {
    fn of(m: &Module) -> Self {
        let [m_tvalid, m_tdata, searching, locked, failed, rotation] = pins(
            m,
            [
                "m_tvalid",
                "m_tdata",
                "searching",
                "locked",
                "failed",
                "rotation",
            ],
        );
        DetectorPins {
            inputs: pins(
                m,
                [
                    "adc_tvalid",
                    "adc_tdata",
                    "arm",
                    "preamble_length",
                    "timeout",
                ],
            ),
            m_tvalid,
            m_tdata,
            searching,
            locked,
            failed,
            rotation,
        }
    }
}

fn detector_out(s: &mut Step, p: &DetectorPins) -> Result<DetectorOut, DutError> {
    let mut data = [0u64; 4];
    s.get_into(p.m_tdata, &mut data)?;
    Ok(DetectorOut {
        m_valid: s.is_high(p.m_tvalid)?,
        m_data: unpack(&data),
        searching: s.is_high(p.searching)?,
        locked: s.is_high(p.locked)?,
        failed: s.is_high(p.failed)?,
        rotation: s.get_u64(p.rotation)? as usize,
    })
}

fn set_detector(s: &mut Step, p: &DetectorPins, c: &DetectorCycle) -> Result<(), DutError> {
    let [adc_tvalid, adc_tdata, arm, preamble_length, timeout] = p.inputs;
    s.set_u64(adc_tvalid, u64::from(c.valid))?;
    s.set(adc_tdata, &pack(&c.data))?;
    s.set_u64(arm, u64::from(c.arm))?;
    s.set_u64(preamble_length, u64::from(c.length))?;
    s.set_u64(timeout, c.timeout)
}

fn detector() -> Module {
    preamble_detector(&PreambleDetectorConfig::default()).unwrap()
}

// ---------------------------------------------------------------------------
// Parameters.
// ---------------------------------------------------------------------------

#[test]
fn bad_parameters_are_errors() {
    for dacs in [0, 9] {
        let e = streamer(&StreamerConfig { dacs }).unwrap_err();
        assert!(e.to_string().contains("dacs"), "{e}");
    }
    for timeout_width in [0, 33] {
        let e = preamble_detector(&PreambleDetectorConfig {
            timeout_width,
            ..PreambleDetectorConfig::default()
        })
        .unwrap_err();
        assert!(e.to_string().contains("timeout_width"), "{e}");
    }
    for dacs in 1..=8 {
        assert!(streamer(&StreamerConfig { dacs }).is_ok());
    }
}

/// The emitted Verilog passes `verilator --lint-only -Wall`, a full Verilation
/// and `iverilog -g2005`; the aligner's history buffer synthesises to block RAM.
#[test]
fn generated_verilog_passes_the_tools() {
    let r = verilog_common::check_tools(&operand_align().unwrap(), true).expect("report");
    assert!(r.ramb18 + r.ramb36 > 0, "no block RAM: {:?}", r.cells);
    verilog_common::check_tools(&streamer(&StreamerConfig { dacs: 3 }).unwrap(), false);
    verilog_common::check_tools(&detector(), false);
}

// ---------------------------------------------------------------------------
// Streamer.
// ---------------------------------------------------------------------------

/// An AXI-Stream source offering random beats; occasionally it breaks the rules
/// and withdraws a beat that was not taken.
struct Source {
    offered: Option<Word>,
}

/// One DAC's ports of the streamer, resolved once per run.
struct DacPins {
    /// `s{i}_tvalid`, `s{i}_tdata`, `dac{i}_delay`, `dac{i}_shift`.
    inputs: [Pin; 4],
    /// `dac{i}_tvalid`, `dac{i}_tdata`.
    outputs: [Pin; 2],
}

impl DacPins {
    /// DAC `i`'s ports of the streamer `m`.
    fn of(m: &Module, i: usize) -> Self {
        DacPins {
            inputs: pins(
                m,
                [
                    &format!("s{i}_tvalid"),
                    &format!("s{i}_tdata"),
                    &format!("dac{i}_delay"),
                    &format!("dac{i}_shift"),
                ],
            ),
            outputs: pins(m, [&format!("dac{i}_tvalid"), &format!("dac{i}_tdata")]),
        }
    }
}

fn streamer_random(dacs: usize, cycles: u64, seed: u64) {
    let mut rng = seeded(&format!("lightning streamer d{dacs}"), seed);
    let m = streamer(&StreamerConfig { dacs: dacs as u32 }).unwrap();
    let mut model = StreamerModel::new(dacs);
    let mut sources: Vec<Source> = (0..dacs).map(|_| Source { offered: None }).collect();
    let mut delay = vec![0usize; dacs];
    let mut shift = vec![0usize; dacs];
    let mut rate = vec![0.8f64; dacs];
    let mut length = 10u32;
    let (mut fired, mut preambles, mut valid_out, mut dropped) = (0u64, 0u64, 0u64, 0u64);
    let [start, preamble_length, flush, preamble_active] =
        pins(&m, ["start", "preamble_length", "flush", "preamble_active"]);
    let dac_pins: Vec<DacPins> = (0..dacs).map(|i| DacPins::of(&m, i)).collect();
    let mut dac_data = [0u64; 4];
    Differential::new(&m)
        .try_run(&DiffConfig::cycles(cycles), |s| {
            let t = s.cycles[0] as usize;
            for (i, (aligner, p)) in model.aligners.iter().zip(&dac_pins).enumerate() {
                let (valid, data) = aligner.output(t);
                let [tvalid, tdata] = p.outputs;
                assert_eq!(s.is_high(tvalid)?, valid, "dac{i}_tvalid at cycle {t}");
                s.get_into(tdata, &mut dac_data)?;
                assert_eq!(unpack(&dac_data), data, "dac{i}_tdata at cycle {t}");
                valid_out += u64::from(valid);
                dropped += u64::from(!valid && aligner.output_as(t, false).0);
            }
            assert_eq!(
                s.is_high(preamble_active)?,
                model.preamble,
                "preamble_active at cycle {t}"
            );
            // New phase: rates, length, alignment.
            if t.is_multiple_of(400) {
                for r in rate.iter_mut() {
                    *r = [0.2, 0.6, 0.95, 1.0][rng.gen_range(0..4)];
                }
            }
            if rng.gen_bool(0.002) {
                length = rng.gen_range(0..=12);
            }
            for i in 0..dacs {
                if rng.gen_bool(0.004) {
                    delay[i] = rng.gen_range(0..=63);
                }
                if rng.gen_bool(0.004) {
                    shift[i] = rng.gen_range(0..=15);
                }
            }
            for (src, &r) in sources.iter_mut().zip(&rate) {
                if src.offered.is_none() && rng.gen_bool(r) {
                    src.offered = Some(random_word(&mut rng));
                } else if src.offered.is_some() && rng.gen_bool(0.003) {
                    src.offered = None;
                }
            }
            let c = StreamerCycle {
                start: rng.gen_bool(0.005),
                length,
                flush: rng.gen_bool(0.002),
                valid: sources.iter().map(|x| x.offered.is_some()).collect(),
                data: sources.iter().map(|x| x.offered.unwrap_or(IDLE)).collect(),
                delay: delay.clone(),
                shift: shift.clone(),
            };
            s.set_u64(start, u64::from(c.start))?;
            s.set_u64(preamble_length, u64::from(length))?;
            s.set_u64(flush, u64::from(c.flush))?;
            for (i, p) in dac_pins.iter().enumerate() {
                let [tvalid, tdata, dac_delay, dac_shift] = p.inputs;
                s.set_u64(tvalid, u64::from(c.valid[i]))?;
                s.set(tdata, &pack(&c.data[i]))?;
                s.set_u64(dac_delay, delay[i] as u64)?;
                s.set_u64(dac_shift, shift[i] as u64)?;
            }
            preambles += u64::from(c.start && length > 0);
            if model.step(&c) {
                fired += 1;
                for src in sources.iter_mut() {
                    src.offered = None;
                }
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(fired > cycles / 10, "too few synchronized beats: {fired}");
    assert!(preambles > 5, "too few preambles: {preambles}");
    assert!(
        valid_out > cycles / 5,
        "too few valid DAC words: {valid_out}"
    );
    assert!(
        dropped > cycles / 200,
        "too few valid DAC words dropped by a flush: {dropped}"
    );
}

#[test]
fn streamer_two_dacs_random_cycles_match_the_model_on_both_engines() {
    streamer_random(2, 12_000, 7101);
}

#[test]
fn streamer_three_dacs_random_cycles_match_the_model_on_both_engines() {
    streamer_random(3, 4_000, 7102);
}

/// The ports of a two-DAC streamer that the native tests drive and read,
/// resolved once per run.
struct TwoDacPins {
    start: Pin,
    preamble_length: Pin,
    fire: Pin,
    /// `s0_tready`, `s1_tready`.
    tready: [Pin; 2],
    dacs: [DacPins; 2],
}

impl TwoDacPins {
    fn of(m: &Module) -> Self {
        let [start, preamble_length, fire, tready0, tready1] = pins(
            m,
            ["start", "preamble_length", "fire", "s0_tready", "s1_tready"],
        );
        TwoDacPins {
            start,
            preamble_length,
            fire,
            tready: [tready0, tready1],
            dacs: [0, 1].map(|i| DacPins::of(m, i)),
        }
    }
}

/// Sets every streamer input of a two-DAC streamer (delay and shift 0).
fn drive_streamer(
    d: &mut impl Pins,
    p: &TwoDacPins,
    start: bool,
    valid: [bool; 2],
    data: [Word; 2],
) {
    d.set_u64(p.start, u64::from(start)).unwrap();
    d.set_u64(p.preamble_length, 3).unwrap();
    for (i, dac) in p.dacs.iter().enumerate() {
        let [tvalid, tdata, delay, shift] = dac.inputs;
        d.set_u64(tvalid, u64::from(valid[i])).unwrap();
        d.set(tdata, &pack(&data[i])).unwrap();
        d.set_u64(delay, 0).unwrap();
        d.set_u64(shift, 0).unwrap();
    }
}

/// Native only: the combinational `tready` = `fire` contract, cycle by cycle
/// (the differential test checks it only through the data it moves).
#[test]
fn streamer_fires_only_when_every_source_is_valid() {
    let m = streamer(&StreamerConfig::default()).unwrap();
    let mut d = NativeDut::new(&m).unwrap();
    d.reset(2);
    let p = TwoDacPins::of(&m);
    // A `&mut &mut NativeDut`, so that `set_u64` and `is_high` are the `Pins` ones.
    let d = &mut &mut d;
    let a = [0x1111; 16];
    let b = [0x2222; 16];
    // (start, valid0, valid1) -> expected fire
    let script = [
        (false, true, false, false),
        (false, true, false, false),
        (false, true, true, true),
        (false, true, true, true),
        (true, true, true, false),  // start cycle: no streaming
        (false, true, true, false), // preamble 1..3
        (false, true, true, false),
        (false, true, true, false),
        (false, true, true, true),
        (false, false, true, false),
        (false, false, false, false),
    ];
    for (c, &(start, v0, v1, fire)) in script.iter().enumerate() {
        drive_streamer(d, &p, start, [v0, v1], [a, b]);
        assert_eq!(d.is_high(p.fire).unwrap(), fire, "fire in cycle {c}");
        assert_eq!(d.is_high(p.tready[0]).unwrap(), fire, "tready {c}");
        assert_eq!(d.is_high(p.tready[1]).unwrap(), fire, "tready {c}");
        d.step();
    }
}

// ---------------------------------------------------------------------------
// Preamble detector.
// ---------------------------------------------------------------------------

/// A scenario generator for the detector: a continuous sample sequence mixing
/// random words, silence and shifted, possibly truncated or noisy preambles.
struct AdcScenario {
    samples: VecDeque<u16>,
}

impl AdcScenario {
    fn refill(&mut self, rng: &mut impl Rng) {
        match rng.gen_range(0..4) {
            0 => {
                for _ in 0..16 * rng.gen_range(1..6) {
                    self.samples.push_back(rng.gen());
                }
            }
            1 => {
                for _ in 0..16 * rng.gen_range(1..4) {
                    self.samples.push_back(0);
                }
            }
            _ => {
                let k = rng.gen_range(0..16);
                for _ in 0..k {
                    self.samples.push_back(0);
                }
                let noisy = rng.gen_bool(0.3);
                for _ in 0..rng.gen_range(1..14) {
                    for i in 0..16 {
                        let base: u16 = if i < 8 { 0x7F00 } else { 0 };
                        let noise = if noisy { rng.gen_range(0..0x300) } else { 0 };
                        self.samples.push_back(base + noise);
                    }
                }
                for _ in 0..16 * rng.gen_range(1..4) {
                    self.samples.push_back(encode_sample(rng.gen()));
                }
            }
        }
    }

    fn next_word(&mut self, rng: &mut impl Rng) -> Word {
        while self.samples.len() < 16 {
            self.refill(rng);
        }
        std::array::from_fn(|_| self.samples.pop_front().unwrap_or(0))
    }
}

#[test]
fn detector_random_cycles_match_the_model_on_both_engines() {
    let mut rng = seeded("lightning preamble detector", 7201);
    let mut model = DetectorModel::new();
    let mut scenario = AdcScenario {
        samples: VecDeque::new(),
    };
    let (mut locks, mut fails, mut windows) = (0u64, 0u64, 0u64);
    let mut hole_rate = 0.0;
    let (mut length, mut timeout) = (10u32, 100u64);
    let m = detector();
    let p = DetectorPins::of(&m);
    Differential::new(&m)
        .try_run(&DiffConfig::cycles(12_000), |s| {
            let t = s.cycles[0];
            let before = model.out;
            assert_eq!(detector_out(s, &p)?, before, "outputs at cycle {t}");
            if t.is_multiple_of(500) {
                hole_rate = [0.0, 0.0, 0.1, 0.4][rng.gen_range(0..4)];
                length = [0, 1, 2, 3, 5, 8, 10, 10, 12][rng.gen_range(0..9)];
                timeout = [0, 1, 20, 60, 150, 400][rng.gen_range(0..6)];
            }
            let valid = !rng.gen_bool(hole_rate);
            let data = if valid {
                scenario.next_word(&mut rng)
            } else {
                random_word(&mut rng)
            };
            let idle = !before.searching;
            let arm = rng.gen_bool(if idle { 0.05 } else { 0.002 });
            let c = DetectorCycle {
                valid,
                data,
                arm,
                length,
                timeout,
            };
            set_detector(s, &p, &c)?;
            model.step(&c);
            locks += u64::from(model.out.locked && !before.locked);
            fails += u64::from(model.out.failed && !before.failed);
            windows += u64::from(model.out.m_valid);
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(locks > 20, "too few locks: {locks}");
    assert!(fails > 5, "too few failures: {fails}");
    assert!(windows > 1000, "too few window words: {windows}");
}

/// The DAC side of one layer: idle, preamble, data, idle (activations, weights).
struct Layer {
    activations: Vec<Word>,
    weights: Vec<Word>,
}

const LEAD: usize = 3;
const PREAMBLE: usize = 10;
const DATA: usize = 20;
const TAIL: usize = 6;

fn layer(rng: &mut impl Rng, act_pre: Word, weight_pre: Word) -> Layer {
    let mut activations = vec![IDLE; LEAD];
    let mut weights = vec![IDLE; LEAD];
    for _ in 0..PREAMBLE {
        activations.push(act_pre);
        weights.push(weight_pre);
    }
    for _ in 0..DATA {
        activations.push(random_values(rng));
        weights.push(random_values(rng));
    }
    activations.extend([IDLE; TAIL]);
    weights.extend([IDLE; TAIL]);
    Layer {
        activations,
        weights,
    }
}

/// The photonic core on each pair of DAC samples (`product`, lossless, noise 0),
/// delayed by `shift` samples (the path's latency and intra-cycle shift).
fn photonic_adc(l: &Layer, shift: usize) -> Vec<Word> {
    let mut samples = vec![0u16; shift];
    for (a, w) in l.activations.iter().zip(&l.weights) {
        for i in 0..16 {
            let p = product(decode_sample(a[i]), decode_sample(w[i]));
            samples.push(encode_sample(p));
        }
    }
    samples.resize(samples.len().div_ceil(16) * 16, 0);
    samples
        .chunks(16)
        .map(|c| std::array::from_fn(|i| c[i]))
        .collect()
}

/// Products the window must deliver: the data part of the layer.
fn expected_products(l: &Layer) -> Vec<Word> {
    (LEAD + PREAMBLE..LEAD + PREAMBLE + DATA)
        .map(|n| {
            std::array::from_fn(|i| {
                encode_sample(product(
                    decode_sample(l.activations[n][i]),
                    decode_sample(l.weights[n][i]),
                ))
            })
        })
        .collect()
}

/// Arms in cycle 0 and feeds `adc` (then zeros) on both engines, checking the
/// model every cycle; returns the outputs of every cycle.
fn run_detector(m: &Module, adc: &[Word], length: u32, timeout: u64) -> Vec<DetectorOut> {
    let mut model = DetectorModel::new();
    let mut outs = Vec::new();
    let cycles = adc.len() as u64 + 8;
    let p = DetectorPins::of(m);
    Differential::new(m)
        .try_run(&DiffConfig::cycles(cycles), |s| {
            let t = s.cycles[0] as usize;
            let out = detector_out(s, &p)?;
            assert_eq!(out, model.out, "outputs at cycle {t}");
            outs.push(out);
            let c = DetectorCycle {
                valid: true,
                data: adc.get(t).copied().unwrap_or(IDLE),
                arm: t == 0,
                length,
                timeout,
            };
            set_detector(s, &p, &c)?;
            model.step(&c);
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
    outs
}

#[test]
fn detector_locks_at_every_rotation_and_latency_and_realigns_exactly() {
    let mut rng = seeded("lightning preamble lock", 7301);
    let m = detector();
    for latency in [0usize, 1, 7, 30] {
        for k in 0..16 {
            let l = layer(&mut rng, activation_preamble(), weight_preamble());
            let adc = photonic_adc(&l, 16 * latency + k);
            let outs = run_detector(&m, &adc, PREAMBLE as u32, 200);
            let what = format!("latency {latency}, rotation {k}");
            let last = outs.last().copied().unwrap_or_else(|| panic!("{what}"));
            assert!(last.locked && !last.failed, "{what}: no lock");
            assert_eq!(last.rotation, k, "{what}");
            // Data word 0 is completed by ADC word LEAD + PREAMBLE + latency + 1
            // and appears 3 cycles later.
            let first = LEAD + PREAMBLE + latency + 4;
            let got: Vec<(usize, Word)> = outs
                .iter()
                .enumerate()
                .filter(|(_, o)| o.m_valid)
                .map(|(c, o)| (c, o.m_data))
                .collect();
            assert_eq!(got.first().map(|g| g.0), Some(first), "{what}: window");
            let words: Vec<Word> = got.iter().take(DATA).map(|g| g.1).collect();
            assert_eq!(words, expected_products(&l), "{what}: realigned data");
        }
    }
}

/// No lock: `failed` rises exactly `timeout` + 1 cycles after `arm`, `searching`
/// falls with it and `locked` never rises.
fn assert_times_out(outs: &[DetectorOut], timeout: usize, what: &str) {
    for (c, o) in outs.iter().enumerate() {
        assert!(!o.locked && !o.m_valid, "{what}: locked in cycle {c}");
        let searching = (1..=timeout).contains(&c);
        assert_eq!(o.searching, searching, "{what}: searching in cycle {c}");
        assert_eq!(o.failed, c > timeout, "{what}: failed in cycle {c}");
    }
}

#[test]
fn wrong_preambles_and_silence_do_not_lock_and_time_out() {
    let mut rng = seeded("lightning wrong preamble", 7401);
    let m = detector();
    let timeout = 30;
    let all_high = [encode_sample(255); 16];
    let comb: Word = std::array::from_fn(|i| if i % 8 < 4 { encode_sample(255) } else { 0 });
    let no_low_half = layer(&mut rng, activation_preamble(), all_high);
    let two_bands = layer(&mut rng, activation_preamble(), comb);
    let dark = layer(&mut rng, IDLE, weight_preamble());
    for (what, l) in [
        ("weights all 255", no_low_half),
        ("weights in two bands", two_bands),
        ("activations 0", dark),
    ] {
        let adc = photonic_adc(&l, 5);
        let outs = run_detector(&m, &adc, PREAMBLE as u32, timeout);
        let outs: Vec<_> = outs.into_iter().take(timeout as usize + 5).collect();
        assert!(outs.len() > timeout as usize + 1, "{what}: run too short");
        assert_times_out(&outs, timeout as usize, what);
    }
    let zeros = vec![IDLE; 60];
    let outs = run_detector(&m, &zeros, PREAMBLE as u32, timeout);
    assert_times_out(&outs, timeout as usize, "all-zero ADC stream");
}

/// End to end through both generated blocks on the native simulator: the
/// streamer's DAC outputs (preamble, then one layer's data) through the photonic
/// model with a latency and shift, into the detector.
#[test]
fn streamer_to_photonic_core_to_detector() {
    let mut rng = seeded("lightning end to end", 7501);
    let s = streamer(&StreamerConfig::default()).unwrap();
    let mut dac = NativeDut::new(&s).unwrap();
    dac.reset(2);
    let sp = TwoDacPins::of(&s);
    // A `&mut &mut NativeDut`, so that `set_u64` and `get_into` are the `Pins` ones.
    let dac = &mut &mut dac;
    let data: Vec<[Word; 2]> = (0..DATA)
        .map(|_| [random_values(&mut rng), random_values(&mut rng)])
        .collect();
    let mut next = 0;
    let mut streams: [Vec<Word>; 2] = [Vec::new(), Vec::new()];
    let mut dac_data = [0u64; 4];
    for c in 0..60 {
        let offered = data.get(next).copied();
        drive_streamer(
            dac,
            &sp,
            c == 2,
            [offered.is_some() && c > 2; 2],
            offered.unwrap_or([IDLE; 2]),
        );
        dac.set_u64(sp.preamble_length, PREAMBLE as u64).unwrap();
        if dac.is_high(sp.fire).unwrap() {
            next += 1;
        }
        for (stream, p) in streams.iter_mut().zip(&sp.dacs) {
            let [_, tdata] = p.outputs;
            dac.get_into(tdata, &mut dac_data).unwrap();
            stream.push(unpack(&dac_data));
        }
        dac.step();
    }
    assert_eq!(next, DATA, "every beat streamed");
    let [activations, weights] = streams;
    let l = Layer {
        activations,
        weights,
    };
    let expected: Vec<Word> = data
        .iter()
        .map(|[a, w]| {
            std::array::from_fn(|i| {
                encode_sample(product(decode_sample(a[i]), decode_sample(w[i])))
            })
        })
        .collect();
    let m = detector();
    let p = DetectorPins::of(&m);
    let [adc_tvalid, adc_tdata, arm, preamble_length, timeout] = p.inputs;
    let mut m_data = [0u64; 4];
    for shift in [3usize, 16 * 4 + 11] {
        let adc = photonic_adc(&l, shift);
        let mut d = NativeDut::new(&m).unwrap();
        d.reset(2);
        let d = &mut &mut d;
        let mut words = Vec::new();
        for (c, w) in adc.iter().chain([IDLE; 8].iter()).enumerate() {
            d.set_u64(arm, u64::from(c == 0)).unwrap();
            d.set_u64(adc_tvalid, 1).unwrap();
            d.set(adc_tdata, &pack(w)).unwrap();
            d.set_u64(preamble_length, PREAMBLE as u64).unwrap();
            d.set_u64(timeout, 500).unwrap();
            if d.is_high(p.m_tvalid).unwrap() {
                d.get_into(p.m_tdata, &mut m_data).unwrap();
                words.push(unpack(&m_data));
            }
            d.step();
        }
        assert_eq!(d.get_u64(p.rotation).unwrap(), (shift % 16) as u64);
        assert!(
            words.len() >= DATA,
            "shift {shift}: {} window words",
            words.len()
        );
        assert_eq!(&words[..DATA], &expected[..], "shift {shift}");
    }
}

// ---------------------------------------------------------------------------
// Waveform snapshots.
// ---------------------------------------------------------------------------

type Drive = Box<dyn FnMut(u32, &mut dyn Dut) -> Result<(), DutError>>;

/// The window rendered on both engines (which must agree).
fn both_engines(
    module: &Module,
    signals: &[&str],
    cycles: u32,
    make_drive: impl Fn() -> Drive,
) -> String {
    Waveform::on_both_engines(module, signals, cycles, make_drive).unwrap_or_else(|e| panic!("{e}"))
}

/// A streamer with narrow ports for a readable waveform: each source's beat is
/// one 16-bit sample repeated; the DACs show samples 0 and 15; no alignment.
fn streamer_probe() -> Module {
    let inner = streamer(&StreamerConfig::default()).unwrap();
    let mut m = ModuleBuilder::new("streamer_probe");
    let clk = m.domain("clk", "clk", Some("rst"), ResetPolarity::ActiveHigh);
    let u = m.instance("u_streamer", &inner);
    m.bind_domain(u, "clk", clk);
    let start = m.input("start", 1);
    let length = m.input("preamble_length", 8);
    m.connect(u, "start", start);
    m.connect(u, "preamble_length", length);
    let no_flush = m.lit(0, 1);
    m.connect(u, "flush", no_flush);
    let no_delay = m.lit(0, 6);
    let no_shift = m.lit(0, 4);
    for i in 0..2 {
        let v = m.input(&format!("s{i}_tvalid"), 1);
        let sample = m.input(&format!("s{i}_sample"), 16);
        let word = m.replicate(sample, 16);
        m.connect(u, &format!("s{i}_tvalid"), v);
        m.connect(u, &format!("s{i}_tdata"), word);
        m.connect(u, &format!("dac{i}_delay"), no_delay);
        m.connect(u, &format!("dac{i}_shift"), no_shift);
    }
    let fire = m.instance_output(u, "fire");
    m.output("fire", fire);
    let pre = m.instance_output(u, "preamble_active");
    m.output("preamble_active", pre);
    for i in 0..2 {
        let v = m.instance_output(u, &format!("dac{i}_tvalid"));
        let data = m.instance_output(u, &format!("dac{i}_tdata"));
        let first = m.slice(data, 0, 16);
        let last = m.slice(data, BUS_WIDTH - 16, 16);
        m.output(&format!("dac{i}_tvalid"), v);
        m.output(&format!("dac{i}_s0"), first);
        m.output(&format!("dac{i}_s15"), last);
    }
    m.finish().unwrap()
}

#[test]
fn waveform_synchronized_streamer_firing() {
    let m = streamer_probe();
    let [start, preamble_length, s0_tvalid, s0_sample, s1_tvalid, s1_sample, fire] = pins(
        &m,
        [
            "start",
            "preamble_length",
            "s0_tvalid",
            "s0_sample",
            "s1_tvalid",
            "s1_sample",
            "fire",
        ],
    );
    let wave = both_engines(
        &m,
        &[
            "start",
            "s0_tvalid",
            "s0_sample",
            "s1_tvalid",
            "s1_sample",
            "fire",
            "preamble_active",
            "dac0_tvalid",
            "dac0_s0",
            "dac1_tvalid",
            "dac1_s0",
            "dac1_s15",
        ],
        20,
        || {
            // A 2-cycle preamble on start (cycle 0); source 0 offers beats 0xA0.. from
            // cycle 1, source 1 offers beats 0xB0.. from cycle 5 (the streamer waits
            // for both), then source 1 pauses in cycles 9-10.
            let mut next = [0u64; 2];
            let mut taken = false;
            Box::new(move |c, d| {
                if taken {
                    next[0] += 1;
                    next[1] += 1;
                }
                let v0 = (1..14).contains(&c);
                let v1 = (5..14).contains(&c) && !(9..11).contains(&c);
                // A `&mut &mut dyn Dut`: these are the `Pins` methods, by handle.
                let d = &mut &mut *d;
                d.set_u64(start, u64::from(c == 0))?;
                d.set_u64(preamble_length, 2)?;
                d.set_u64(s0_tvalid, u64::from(v0))?;
                d.set_u64(s0_sample, 0xA0 + next[0])?;
                d.set_u64(s1_tvalid, u64::from(v1))?;
                d.set_u64(s1_sample, 0xB0 + next[1])?;
                taken = d.is_high(fire)?;
                Ok(())
            })
        },
    );
    insta::assert_snapshot!(wave);
}

/// A detector with narrow probes: ADC samples 0 and 5 in, window sample 0 out.
fn detector_probe() -> Module {
    let inner = detector();
    let mut m = ModuleBuilder::new("detector_probe");
    let clk = m.domain("clk", "clk", Some("rst"), ResetPolarity::ActiveHigh);
    let u = m.instance("u_detector", &inner);
    m.bind_domain(u, "clk", clk);
    for (name, width) in [
        ("adc_tvalid", 1),
        ("adc_tdata", BUS_WIDTH),
        ("arm", 1),
        ("preamble_length", 8),
        ("timeout", 16),
    ] {
        let p = m.input(name, width);
        m.connect(u, name, p);
        if name == "adc_tdata" {
            let s0 = m.slice(p, 0, 16);
            m.output("adc_s0", s0);
            let s5 = m.slice(p, 5 * 16, 16);
            m.output("adc_s5", s5);
        }
    }
    for name in ["searching", "locked", "failed", "rotation", "m_tvalid"] {
        let o = m.instance_output(u, name);
        m.output(name, o);
    }
    let data = m.instance_output(u, "m_tdata");
    let s0 = m.slice(data, 0, 16);
    m.output("m_s0", s0);
    m.finish().unwrap()
}

#[test]
fn waveform_preamble_lock() {
    let m = detector_probe();
    let [arm, adc_tvalid, adc_tdata, preamble_length, timeout] = pins(
        &m,
        [
            "arm",
            "adc_tvalid",
            "adc_tdata",
            "preamble_length",
            "timeout",
        ],
    );
    // Three preamble cycles, then data words whose samples are 1.., 2.., ...
    // (products of activation n and weight 255), shifted by 16 + 5 samples.
    let mut l = Layer {
        activations: vec![IDLE; 2],
        weights: vec![IDLE; 2],
    };
    for _ in 0..3 {
        l.activations.push(activation_preamble());
        l.weights.push(weight_preamble());
    }
    for n in 1..=5u8 {
        l.activations
            .push(std::array::from_fn(|i| encode_sample(n * 16 + i as u8 + 1)));
        l.weights.push([encode_sample(255); 16]);
    }
    let adc = photonic_adc(&l, 16 + 5);
    let wave = both_engines(
        &m,
        &[
            "arm",
            "adc_s0",
            "adc_s5",
            "searching",
            "locked",
            "rotation",
            "m_tvalid",
            "m_s0",
        ],
        16,
        move || {
            let adc = adc.clone();
            Box::new(move |c, d| {
                // A `&mut &mut dyn Dut`: these are the `Pins` methods, by handle.
                let d = &mut &mut *d;
                d.set_u64(arm, u64::from(c == 0))?;
                d.set_u64(adc_tvalid, 1)?;
                let w = adc.get(c as usize).copied().unwrap_or(IDLE);
                d.set(adc_tdata, &pack(&w))?;
                d.set_u64(preamble_length, 3)?;
                d.set_u64(timeout, 100)
            })
        },
    );
    insta::assert_snapshot!(wave);
}
