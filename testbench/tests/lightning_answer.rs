//! The answer block (`hdl::lightning::answer`): class and fixed-point
//! log-softmax of the last layer.
//!
//! - the bit-exact model (`testbench::lightning::answer`) against an independent
//!   f64 log-softmax (`exp`, `ln`) within the documented 1/32 nat, and its class
//!   against an independent argmax;
//! - the generated block against the model, cycle-exact (class, max, every
//!   log-softmax beat, `busy`, `done`), with the logits streamed as the datapath
//!   emits them: thousands of vectors on the native simulator, a sample on
//!   Verilator (the same driver through the `Dut` trait);
//! - Verilator `-Wall` lint, Icarus and Yosys on a generated block.
//!
//! Seeds are printed; `WIRESPEED_SEED` replays a run.
//! `cargo test -p testbench --test lightning_answer`

mod verilog_common;

use hdl::lightning::answer::{answer, AnswerConfig};
use rand::Rng;
use std::cmp::Reverse;
use testbench::dut::{Dut, NativeDut, VerilatorDut};
use testbench::lightning::answer::{self as model, nats, ACCURACY_NATS, LSM_MIN_NATS};
use testbench::rng::seeded;
use testbench::verilator::BuildOptions;

/// The real log-softmax of `x · 2^-s`, clamped at the block's minimum, in f64.
fn reference(logits: &[i64], s: u32) -> Vec<f64> {
    let scale = (-f64::from(s)).exp2();
    let m = logits.iter().copied().max().unwrap_or(0);
    let diffs: Vec<f64> = logits.iter().map(|&x| (x - m) as f64 * scale).collect();
    let lse = diffs.iter().map(|d| d.exp()).sum::<f64>().ln();
    diffs.iter().map(|d| (d - lse).max(LSM_MIN_NATS)).collect()
}

/// The first index of the largest value, computed another way than `argmax`.
fn first_max(logits: &[i64]) -> usize {
    (0..logits.len())
        .max_by_key(|&i| (logits[i], Reverse(i)))
        .unwrap_or(0)
}

/// A random logit vector of `n` values in `acc_width` bits signed, of a
/// random kind: uniform, narrow, ties, all equal, the extremes, negative only,
/// one huge outlier.
fn vector(rng: &mut impl Rng, n: usize, acc_width: u32) -> Vec<i64> {
    let max = (1i64 << (acc_width - 1)) - 1;
    let min = -max - 1;
    let base = rng.gen_range(min / 2..=max / 2);
    let v: Vec<i64> = match rng.gen_range(0..8) {
        0 => (0..n).map(|_| rng.gen_range(min..=max)).collect(),
        1 => (0..n).map(|_| base + rng.gen_range(-60..=60)).collect(),
        2 => {
            let pool: Vec<i64> = (0..3).map(|_| base + rng.gen_range(-500..=500)).collect();
            (0..n).map(|_| pool[rng.gen_range(0..pool.len())]).collect()
        }
        3 => vec![base; n],
        4 => {
            let pool = [min, min + 1, -1, 0, 1, max - 1, max];
            (0..n).map(|_| pool[rng.gen_range(0..pool.len())]).collect()
        }
        5 => (0..n).map(|_| rng.gen_range(min..0)).collect(),
        6 => {
            let mut v = vec![min; n];
            v[rng.gen_range(0..n)] = max;
            v
        }
        _ => (0..n).map(|_| base + rng.gen_range(-4000..=4000)).collect(),
    };
    v.into_iter().map(|x| x.clamp(min, max)).collect()
}

/// A scale shift below `2^width`, mostly in the range where spreads matter.
fn scale(rng: &mut impl Rng, width: u32) -> u32 {
    let top = (1u32 << width) - 1;
    if rng.gen_bool(0.7) {
        rng.gen_range(0..=top.min(12))
    } else {
        rng.gen_range(0..=top)
    }
}

#[test]
fn model_is_within_a_32nd_of_a_nat_of_f64_and_picks_the_first_max() {
    let mut rng = seeded("answer model vs f64", 9101);
    let mut worst = (0.0f64, Vec::new(), 0u32);
    let mut checked = 0u64;
    for round in 0..60_000 {
        let n = [1, 2, 10, 17, 64][round % 5];
        let w = [13, 16, 24, 32, 48][(round / 5) % 5];
        let logits = vector(&mut rng, n, w);
        let s = scale(&mut rng, 6);
        let a = model::answer(&logits, s).unwrap();
        assert_eq!(a.class, first_max(&logits), "class of {logits:?}");
        assert_eq!(a.max, logits[a.class]);
        for (i, r) in reference(&logits, s).into_iter().enumerate() {
            let err = (nats(a.log_softmax[i]) - r).abs();
            if err > worst.0 {
                worst = (err, logits.clone(), s);
            }
            checked += 1;
        }
    }
    println!(
        "{checked} log-softmax values: worst |error| {:.5} nat (bound {ACCURACY_NATS}) at s = {} for {:?}",
        worst.0, worst.2, worst.1
    );
    assert!(worst.0 <= ACCURACY_NATS, "worst error {}", worst.0);
}

/// Port indices of the block, resolved once.
struct Ports {
    clear: usize,
    valid: usize,
    index: usize,
    data: usize,
    last: usize,
    scale: usize,
    busy: usize,
    class_valid: usize,
    class_index: usize,
    max_logit: usize,
    lsm_valid: usize,
    lsm_index: usize,
    lsm_data: usize,
    done: usize,
}

impl Ports {
    fn of(dut: &dyn Dut) -> Ports {
        let p = |name: &str| dut.port(name).unwrap_or_else(|e| panic!("{e}"));
        Ports {
            clear: p("clear"),
            valid: p("logit_valid"),
            index: p("logit_index"),
            data: p("logit_data"),
            last: p("last"),
            scale: p("scale_shift"),
            busy: p("busy"),
            class_valid: p("class_valid"),
            class_index: p("class_index"),
            max_logit: p("max_logit"),
            lsm_valid: p("lsm_valid"),
            lsm_index: p("lsm_index"),
            lsm_data: p("lsm_data"),
            done: p("done"),
        }
    }
}

/// `C` fields of `width` bits packed into little-endian words (field 0 lowest).
fn pack(fields: &[u64], width: u32) -> Vec<u64> {
    let total = fields.len() as u32 * width;
    let mut words = vec![0u64; total.div_ceil(64) as usize];
    for (c, &f) in fields.iter().enumerate() {
        let f = f & mask(width);
        for b in 0..width {
            if f >> b & 1 == 1 {
                let bit = c as u32 * width + b;
                words[(bit / 64) as usize] |= 1 << (bit % 64);
            }
        }
    }
    words
}

fn mask(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1 << width) - 1
    }
}

fn signed(value: u64, width: u32) -> i64 {
    ((value << (64 - width)) as i64) >> (64 - width)
}

fn get(dut: &mut dyn Dut, port: usize) -> u64 {
    dut.get(port).unwrap_or_else(|e| panic!("{e}"))[0]
}

fn set(dut: &mut dyn Dut, port: usize, words: &[u64]) {
    dut.set(port, words).unwrap_or_else(|e| panic!("{e}"));
}

/// The logit stream drivers of one block.
struct Bench<'a> {
    dut: &'a mut dyn Dut,
    p: Ports,
    cfg: AnswerConfig,
}

impl Bench<'_> {
    /// Drives the logit fields (valid mask, indices, values).
    fn drive(&mut self, valid: u64, indices: &[u64], values: &[i64]) {
        let v: Vec<u64> = values.iter().map(|&x| x as u64).collect();
        set(self.dut, self.p.valid, &[valid]);
        set(self.dut, self.p.index, &pack(indices, self.cfg.index_width));
        set(self.dut, self.p.data, &pack(&v, self.cfg.acc_width));
    }

    /// Random fields with random valid bits (ignored while busy).
    fn drive_junk(&mut self, rng: &mut impl Rng) {
        let c = self.cfg.cores as usize;
        let n = u64::from(self.cfg.logits);
        let idx: Vec<u64> = (0..c).map(|_| rng.gen_range(0..n)).collect();
        let vals: Vec<i64> = (0..c).map(|_| rng.gen()).collect();
        self.drive(rng.gen::<u64>() & mask(self.cfg.cores), &idx, &vals);
    }

    /// The logits in rounds of C fields, in index order, as the datapath emits
    /// them (round r, field c = index r·C + c), with random idle gaps. Logits
    /// in `dropped` are not sent (the block then holds 0 after a clear). Fields
    /// past the last logit are valid with an index past the last (junk the
    /// block ignores) where the index width has room for one; after some rounds
    /// one of its logits is sent again in two fields of one cycle, a junk value
    /// in a lower field and the logit in the highest (which wins).
    fn stream(&mut self, rng: &mut impl Rng, logits: &[i64], dropped: &[bool]) {
        let c = self.cfg.cores as usize;
        let past = 1u64 << self.cfg.index_width > logits.len() as u64;
        for r in 0..logits.len().div_ceil(c) {
            let indices: Vec<u64> = (0..c).map(|f| (r * c + f) as u64).collect();
            let values: Vec<i64> = (0..c)
                .map(|f| logits.get(r * c + f).copied().unwrap_or(rng.gen()))
                .collect();
            let valid = (0..c)
                .filter(|&f| {
                    let i = r * c + f;
                    if i < logits.len() {
                        !dropped[i]
                    } else {
                        past
                    }
                })
                .fold(0u64, |m, f| m | 1 << f);
            self.drive(valid, &indices, &values);
            self.dut.step();
            let sent: Vec<usize> = (0..c)
                .map(|f| r * c + f)
                .filter(|&i| i < logits.len() && !dropped[i])
                .collect();
            if c >= 2 && !sent.is_empty() && rng.gen_bool(0.3) {
                let i = sent[rng.gen_range(0..sent.len())];
                let repeat = vec![i as u64; c];
                let mut vals: Vec<i64> = (0..c).map(|_| rng.gen()).collect();
                vals[c - 1] = logits[i];
                let low = rng.gen_range(0..c - 1);
                self.drive(1 << low | 1 << (c - 1), &repeat, &vals);
                self.dut.step();
            }
            while rng.gen_bool(0.1) {
                self.drive(0, &indices, &values);
                self.dut.step();
            }
        }
        set(self.dut, self.p.valid, &[0]);
    }

    fn clear(&mut self) {
        set(self.dut, self.p.clear, &[1]);
        self.dut.step();
        set(self.dut, self.p.clear, &[0]);
        for (name, port) in [
            ("busy", self.p.busy),
            ("class_valid", self.p.class_valid),
            ("done", self.p.done),
            ("lsm_valid", self.p.lsm_valid),
        ] {
            assert_eq!(get(self.dut, port), 0, "{name} after clear");
        }
    }
}

/// What the block did after one `last`, cycle by cycle (cycle 0 = `last`).
#[derive(Default)]
struct Observed {
    class_from: Option<u64>,
    class: u64,
    max: i64,
    beats: Vec<(u64, u64, i64)>,
    done_at: Option<u64>,
    busy_cycles: Vec<u64>,
}

/// Sends `last` with scale `s`, then watches up to the latency plus a margin.
fn watch(b: &mut Bench, rng: &mut impl Rng, s: u32) -> Observed {
    let n = u64::from(b.cfg.logits);
    let bound = 3 * n + 8 + 20;
    set(b.dut, b.p.last, &[1]);
    set(b.dut, b.p.scale, &[u64::from(s)]);
    b.dut.step();
    set(b.dut, b.p.last, &[0]);
    let mut o = Observed::default();
    let w = b.cfg.acc_width;
    for cycle in 1..=bound {
        // Inputs that must not matter now: scale, logits, a repeated `last`.
        set(
            b.dut,
            b.p.scale,
            &[rng.gen::<u64>() & mask(b.cfg.scale_width)],
        );
        b.drive_junk(rng);
        if get(b.dut, b.p.busy) == 1 {
            o.busy_cycles.push(cycle);
            set(b.dut, b.p.last, &[u64::from(rng.gen_bool(0.05))]);
        } else {
            set(b.dut, b.p.last, &[0]);
        }
        if get(b.dut, b.p.class_valid) == 1 && o.class_from.is_none() {
            o.class_from = Some(cycle);
            o.class = get(b.dut, b.p.class_index);
            o.max = signed(get(b.dut, b.p.max_logit), w);
        }
        if get(b.dut, b.p.lsm_valid) == 1 {
            let i = get(b.dut, b.p.lsm_index);
            let d = signed(get(b.dut, b.p.lsm_data), 32);
            o.beats.push((cycle, i, d));
        }
        if get(b.dut, b.p.done) == 1 {
            o.done_at = Some(cycle);
            break;
        }
        b.dut.step();
    }
    set(b.dut, b.p.last, &[0]);
    set(b.dut, b.p.valid, &[0]);
    o
}

/// Checks one observation against the model and the documented timing:
/// class valid from N + 1, beat i in 2N + 8 + i, done at 3N + 8, busy in between.
fn check(o: &Observed, expect: &model::Answer, n: u64, what: &str) {
    assert_eq!(o.class_from, Some(n + 1), "class_valid cycle, {what}");
    assert_eq!(o.class, expect.class as u64, "class, {what}");
    assert_eq!(o.max, expect.max, "max_logit, {what}");
    let beats: Vec<(u64, u64, i64)> = expect
        .log_softmax
        .iter()
        .enumerate()
        .map(|(i, &l)| (2 * n + 8 + i as u64, i as u64, l))
        .collect();
    assert_eq!(
        o.beats, beats,
        "log-softmax stream (cycle, index, Q23.8), {what}"
    );
    assert_eq!(o.done_at, Some(3 * n + 8), "done cycle, {what}");
    let busy: Vec<u64> = (1..3 * n + 8).collect();
    assert_eq!(o.busy_cycles, busy, "busy cycles, {what}");
}

/// The largest |hardware − f64| over one observation's beats, in nats.
fn error_vs_f64(o: &Observed, logits: &[i64], s: u32) -> f64 {
    let exact = reference(logits, s);
    o.beats
        .iter()
        .map(|&(_, i, d)| (nats(d) - exact[i as usize]).abs())
        .fold(0.0, f64::max)
}

/// Runs `vectors` random logit vectors through `dut` and checks each against
/// the model; some start without `clear`, some drop logits after a clear
/// (they count as 0), some are abandoned by a `clear` mid-computation.
fn run_vectors(dut: &mut dyn Dut, cfg: AnswerConfig, vectors: usize, seed: u64) -> usize {
    let mut worst = 0.0f64;
    let name = format!("answer {} {cfg:?}", dut.engine());
    let mut rng = seeded(&name, seed);
    dut.reset(2);
    let p = Ports::of(dut);
    let mut b = Bench { dut, p, cfg };
    let n = cfg.logits as usize;
    let mut checked = 0;
    b.clear();
    for v in 0..vectors {
        let mut logits = vector(&mut rng, n, cfg.acc_width);
        let s = scale(&mut rng, cfg.scale_width);
        let cleared = v == 0 || rng.gen_bool(0.7);
        if cleared && v > 0 {
            b.clear();
        }
        let dropped: Vec<bool> = (0..n).map(|_| cleared && rng.gen_bool(0.03)).collect();
        b.stream(&mut rng, &logits, &dropped);
        for (l, &d) in logits.iter_mut().zip(&dropped) {
            if d {
                *l = 0;
            }
        }
        if rng.gen_bool(0.04) {
            abandon(&mut b, &mut rng, s);
            b.stream(&mut rng, &logits, &vec![false; n]);
        }
        let expect = model::answer(&logits, s).unwrap();
        let o = watch(&mut b, &mut rng, s);
        let what = format!("{name} vector {v}: s = {s}, {logits:?}");
        check(&o, &expect, n as u64, &what);
        let err = error_vs_f64(&o, &logits, s);
        assert!(err <= ACCURACY_NATS, "error {err} nat, {what}");
        worst = worst.max(err);
        checked += 1;
    }
    println!("{name}: worst |hardware - f64| {worst:.5} nat");
    checked
}

/// `last`, then `clear` a random number of cycles later: everything falls.
fn abandon(b: &mut Bench, rng: &mut impl Rng, s: u32) {
    let n = u64::from(b.cfg.logits);
    set(b.dut, b.p.last, &[1]);
    set(b.dut, b.p.scale, &[u64::from(s)]);
    b.dut.step();
    set(b.dut, b.p.last, &[0]);
    for _ in 0..rng.gen_range(0..3 * n + 7) {
        b.dut.step();
    }
    b.clear();
}

fn block(
    cores: u32,
    logits: u32,
    acc_width: u32,
    index_width: u32,
    scale_width: u32,
) -> AnswerConfig {
    AnswerConfig {
        cores,
        acc_width,
        logits,
        index_width,
        scale_width,
    }
}

fn native(cfg: AnswerConfig, vectors: usize, seed: u64) {
    let m = answer(&cfg).unwrap_or_else(|e| panic!("{e}"));
    let mut dut = NativeDut::new(&m).unwrap_or_else(|e| panic!("{e}"));
    let checked = run_vectors(&mut dut, cfg, vectors, seed);
    println!("native {cfg:?}: {checked} vectors equal the model");
}

#[test]
fn native_one_logit_one_core() {
    native(block(1, 1, 13, 1, 5), 1000, 9201);
}

#[test]
fn native_ten_logits_two_and_four_cores() {
    native(block(2, 10, 16, 5, 5), 3000, 9202);
    native(block(4, 10, 20, 5, 5), 3000, 9203);
}

#[test]
fn native_sixty_four_logits_three_and_one_cores() {
    native(block(3, 64, 48, 7, 6), 1000, 9204);
    native(block(1, 64, 13, 6, 5), 600, 9205);
}

#[test]
fn native_odd_shapes() {
    native(block(8, 13, 24, 8, 4), 1500, 9206);
    native(block(4, 7, 32, 5, 5), 1500, 9207);
}

#[test]
fn verilator_sample_equals_the_model() {
    for (cfg, vectors, seed) in [
        (block(4, 10, 20, 5, 5), 150, 9301),
        (block(2, 64, 48, 7, 6), 25, 9302),
    ] {
        let m = answer(&cfg).unwrap_or_else(|e| panic!("{e}"));
        let mut dut =
            VerilatorDut::new(&m, &BuildOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        let checked = run_vectors(&mut dut, cfg, vectors, seed);
        println!("verilator {cfg:?}: {checked} vectors equal the model");
    }
}

#[test]
fn generated_block_passes_lint_iverilog_and_yosys() {
    let m = answer(&block(4, 10, 20, 5, 5)).unwrap_or_else(|e| panic!("{e}"));
    let report = verilog_common::check_tools(&m, true).expect("synthesis report");
    assert!(report.luts > 0 && report.ffs > 0, "{report:?}");
    println!(
        "answer c4 n10 a20: {} LUT, {} FF, {} RAMB18, {} RAMB36, {} LUT RAM, {} DSP",
        report.luts, report.ffs, report.ramb18, report.ramb36, report.lutrams, report.dsps
    );
}
