//! Test only: a naive reference simulator of flat designs (every net evaluated in
//! order with [`fold::eval`], registers sampled then committed), and a randomized
//! differential test of the whole compiler against it — simplification, batching,
//! layout, vector runs, cones and direct register commits — on both engines (the
//! interpreter and the compiled engine).
//!
//! Random designs are made of identical "cells" (the same random structure
//! instantiated several times with their own inputs, like lanes) so that batches
//! and vector runs form, with constants everywhere (so that the rewrite rules
//! fire), registers with and without enable and reset (chains, swaps, registers
//! reading another domain's registers), two clocks with coincident edges, and
//! named nets (observed through `peek` at every step).

use crate::flatten::{FlatDesign, FlatReg, FlatReset};
use crate::fold;
use crate::levelize::levelize;
use crate::sim::{Backend, Simulator};
use crate::wide::{last_mask, words};
use hdl::ir::{
    ArithOp, BitOp, ClockDomain, CmpOp, Direction, DomainId, Driver, Net, NetId, Op, Port, PortId,
    PortKind, ReduceOp, RegId, ResetPolarity, ShiftAmount, ShiftOp,
};
use hdl::Bits;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The reference simulator: the value of every net, and the registers' state.
struct Reference<'a> {
    flat: &'a FlatDesign,
    order: Vec<NetId>,
    vals: Vec<Vec<u64>>,
    state: Vec<Vec<u64>>,
}

impl<'a> Reference<'a> {
    fn new(flat: &'a FlatDesign) -> Self {
        let order = levelize(flat).expect("no combinational loop");
        let vals = flat.nets.iter().map(|n| vec![0; words(n.width)]).collect();
        let state = flat
            .regs
            .iter()
            .map(|r| vec![0; words(flat.nets[r.q.0 as usize].width)])
            .collect();
        Reference {
            flat,
            order,
            vals,
            state,
        }
    }

    /// Sets input net `n`.
    fn set(&mut self, n: NetId, v: &[u64]) {
        self.vals[n.0 as usize] = v.to_vec();
    }

    /// Evaluates every net.
    fn settle(&mut self) {
        for &n in &self.order {
            let i = n.0 as usize;
            let net = &self.flat.nets[i];
            let v = match &net.driver {
                Driver::Reg(r) => self.state[r.0 as usize].clone(),
                Driver::Alias(src) => self.vals[src.0 as usize].clone(),
                Driver::Op(op) => {
                    let vals = &self.vals;
                    fold::eval(
                        op,
                        net.width,
                        |m| self.flat.nets[m.0 as usize].width,
                        |m| &vals[m.0 as usize],
                    )
                }
                _ => continue,
            };
            self.vals[i] = v;
        }
    }

    /// One atomic edge of the domains `fired` (values settled before).
    fn edge(&mut self, fired: &[usize]) {
        let bit = |v: &Vec<u64>| v[0] & 1;
        let mut next = self.state.clone();
        for (ri, r) in self.flat.regs.iter().enumerate() {
            if !fired.contains(&(r.domain.0 as usize)) {
                continue;
            }
            let n = words(self.flat.nets[r.q.0 as usize].width);
            let reset = match (&r.reset_value, r.reset) {
                (Some(v), Some(rst)) => {
                    let level = (rst.polarity == ResetPolarity::ActiveHigh) as u64;
                    (bit(&self.vals[rst.net.0 as usize]) == level).then(|| {
                        let mut w = v.to_words();
                        w.resize(n, 0);
                        w
                    })
                }
                _ => None,
            };
            next[ri] = match reset {
                Some(w) => w,
                None if r.enable.is_none_or(|e| bit(&self.vals[e.0 as usize]) == 1) => {
                    self.vals[r.next.0 as usize].clone()
                }
                None => continue,
            };
        }
        self.state = next;
    }
}

type Rand = ChaCha8Rng;

/// Width limits of random designs.
#[derive(Clone, Copy, Debug)]
struct Widths {
    /// Widest input or register (inputs and registers wider than 64 bits are 20 %
    /// and 15 % of them).
    max: u32,
    /// Widest arithmetic result.
    arith: u32,
    /// Widest concatenation.
    concat: u32,
}

/// Mostly narrow designs with some multi-word values (the default sweep).
const NARROW: Widths = Widths {
    max: 200,
    arith: 200,
    concat: 300,
};

/// Designs with values up to 4096 bits (wide datapaths).
const WIDE: Widths = Widths {
    max: 4096,
    arith: 1024,
    concat: 8192,
};

/// Builds random designs.
struct Gen {
    d: FlatDesign,
    widths: Widths,
}

impl Gen {
    fn width(&self, n: NetId) -> u32 {
        self.d.nets[n.0 as usize].width
    }

    fn push(&mut self, name: Option<String>, width: u32, driver: Driver) -> NetId {
        self.d.nets.push(Net {
            name,
            width,
            driver,
            location: hdl::ir::SourceLoc::unknown(),
        });
        NetId(self.d.nets.len() as u32 - 1)
    }

    fn input(&mut self, name: &str, width: u32, kind: PortKind) -> NetId {
        let p = PortId(self.d.ports.len() as u32);
        let net = self.push(Some(name.to_string()), width, Driver::Input(p));
        self.d.ports.push(Port {
            name: name.to_string(),
            direction: Direction::Input,
            kind,
            net,
        });
        net
    }

    fn op(&mut self, width: u32, op: Op) -> NetId {
        self.push(None, width, Driver::Op(op))
    }

    fn konst(&mut self, rng: &mut Rand, width: u32) -> NetId {
        let mut w: Vec<u64> = (0..words(width)).map(|_| rng.gen()).collect();
        match rng.gen_range(0..4) {
            0 => w.iter_mut().for_each(|x| *x = 0),
            1 => w.iter_mut().for_each(|x| *x = u64::MAX),
            2 => w.iter_mut().for_each(|x| *x &= 3),
            _ => {}
        }
        self.op(width, Op::Const(Bits::from_words(&w, width)))
    }

    /// A net of `width` bits made from `n` (a slice or an extension if needed).
    fn adapt(&mut self, rng: &mut Rand, n: NetId, width: u32) -> NetId {
        let w = self.width(n);
        match w.cmp(&width) {
            std::cmp::Ordering::Equal => n,
            std::cmp::Ordering::Greater => {
                let lo = rng.gen_range(0..=w - width);
                self.op(width, Op::Slice { src: n, lo })
            }
            std::cmp::Ordering::Less => {
                let signed = rng.gen();
                self.op(width, Op::Extend { src: n, signed })
            }
        }
    }

    /// A random operation over `pool`.
    fn random_op(&mut self, rng: &mut Rand, pool: &[NetId]) -> NetId {
        let pick = |rng: &mut Rand| pool[rng.gen_range(0..pool.len())];
        let a = pick(rng);
        let b = pick(rng);
        let wa = self.width(a);
        match rng.gen_range(0..16) {
            0 => self.op(wa, Op::Not(a)),
            1 | 2 => {
                let b = self.adapt(rng, b, wa);
                let o = [BitOp::And, BitOp::Or, BitOp::Xor][rng.gen_range(0..3)];
                self.op(wa, Op::Bit(o, a, b))
            }
            3 => {
                let w = (wa.max(self.width(b)) + rng.gen_range(0..2)).min(self.widths.arith);
                let (a, b) = (
                    self.adapt(rng, a, w.min(wa)),
                    self.adapt(rng, b, w.min(self.width(b))),
                );
                let o = [ArithOp::Add, ArithOp::Sub, ArithOp::Mul][rng.gen_range(0..3)];
                self.op(w, Op::Arith(o, a, b))
            }
            4 => {
                let b = self.adapt(rng, b, wa);
                let o = [
                    CmpOp::Eq,
                    CmpOp::Ne,
                    CmpOp::LtU,
                    CmpOp::LeU,
                    CmpOp::LtS,
                    CmpOp::LeS,
                ][rng.gen_range(0..6)];
                self.op(1, Op::Cmp(o, a, b))
            }
            5 | 6 => {
                let s = pick(rng);
                let sel = self.adapt(rng, s, 1);
                let f = self.adapt(rng, b, wa);
                let (t, f) = if rng.gen() { (a, f) } else { (f, a) };
                self.op(
                    wa,
                    Op::Mux {
                        sel,
                        if_true: t,
                        if_false: f,
                    },
                )
            }
            7 | 8 => {
                let w = rng.gen_range(1..=wa);
                let lo = rng.gen_range(0..=wa - w);
                self.op(w, Op::Slice { src: a, lo })
            }
            9 => {
                let n = rng.gen_range(2..=4);
                let parts: Vec<NetId> = (0..n).map(|_| pick(rng)).collect();
                let w: u32 = parts.iter().map(|p| self.width(*p)).sum();
                if w > self.widths.concat {
                    return self.op(wa, Op::Not(a));
                }
                self.op(w, Op::Concat(parts))
            }
            10 => {
                let w = wa.min(rng.gen_range(1..=16));
                let src = self.adapt(rng, a, w);
                let count = rng.gen_range(1..=4);
                self.op(self.width(src) * count, Op::Replicate { src, count })
            }
            11 => {
                let w = wa + rng.gen_range(0..70);
                self.op(
                    w,
                    Op::Extend {
                        src: a,
                        signed: rng.gen(),
                    },
                )
            }
            12 | 13 => {
                let op = [
                    ShiftOp::Left,
                    ShiftOp::RightLogical,
                    ShiftOp::RightArithmetic,
                ][rng.gen_range(0..3)];
                let amount = if rng.gen() {
                    ShiftAmount::Const(rng.gen_range(0..wa + 3))
                } else {
                    let w = self.width(b).min(rng.gen_range(1..=8));
                    let amt = self.adapt(rng, b, w);
                    ShiftAmount::Net(amt)
                };
                self.op(wa, Op::Shift { op, src: a, amount })
            }
            14 => {
                let o = [ReduceOp::And, ReduceOp::Or, ReduceOp::Xor][rng.gen_range(0..3)];
                self.op(1, Op::Reduce(o, a))
            }
            _ => self.op(rng.gen_range(1..=8), Op::LeadingZeros(a)),
        }
    }

    /// One cell: registers, constants and logic over `inputs`, named `c{copy}.…`.
    fn cell(&mut self, rng: &mut Rand, copy: usize, inputs: Vec<NetId>, domains: u32) {
        let reset = self.d.domains[0].reset.expect("a reset");
        let mut pool = inputs;
        pool.push(reset);
        let nregs = rng.gen_range(0..6);
        let first_reg = self.d.regs.len();
        for r in 0..nregs {
            let w = if rng.gen_bool(0.15) {
                rng.gen_range(65..=self.widths.max.max(65))
            } else {
                rng.gen_range(1..=64)
            };
            let rid = RegId(self.d.regs.len() as u32);
            let q = self.push(Some(format!("c{copy}.r{r}")), w, Driver::Reg(rid));
            let domain = rng.gen_range(0..domains);
            let polarity = self.d.domains[domain as usize].polarity;
            self.d.regs.push(FlatReg {
                q,
                next: q,
                enable: None,
                reset_value: None,
                domain: DomainId(domain),
                reset: Some(FlatReset {
                    net: reset,
                    polarity,
                }),
            });
            pool.push(q);
        }
        for _ in 0..rng.gen_range(1..4) {
            let w = rng.gen_range(1..=70);
            let k = self.konst(rng, w);
            pool.push(k);
        }
        for i in 0..rng.gen_range(5..40) {
            let n = self.random_op(rng, &pool);
            pool.push(n);
            if rng.gen_bool(0.3) {
                self.d.nets[n.0 as usize].name = Some(format!("c{copy}.n{i}"));
            }
            if rng.gen_bool(0.1) {
                let w = self.width(n);
                let alias = self.push(Some(format!("c{copy}.a{i}")), w, Driver::Alias(n));
                pool.push(alias);
            }
        }
        for ri in first_reg..first_reg + nregs {
            let w = self.width(self.d.regs[ri].q);
            let src = pool[rng.gen_range(0..pool.len())];
            let next = self.adapt(rng, src, w);
            let enable = if rng.gen_bool(0.3) {
                let e = pool[rng.gen_range(0..pool.len())];
                Some(self.adapt(rng, e, 1))
            } else {
                None
            };
            let reset_value = rng.gen_bool(0.5).then(|| {
                let v: Vec<u64> = (0..words(w)).map(|_| rng.gen::<u64>() & 0xff).collect();
                Bits::from_words(&v, w)
            });
            let r = &mut self.d.regs[ri];
            r.next = next;
            r.enable = enable;
            r.reset_value = reset_value;
        }
        for j in 0..rng.gen_range(1..3) {
            let net = pool[rng.gen_range(0..pool.len())];
            let w = self.width(net);
            let name = format!("c{copy}_out{j}");
            let out = self.push(Some(name.clone()), w, Driver::Alias(net));
            self.d.ports.push(Port {
                name,
                direction: Direction::Output,
                kind: PortKind::Data,
                net: out,
            });
        }
    }
}

/// A random design of identical cells.
fn design(seed: u64, widths: Widths) -> FlatDesign {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut g = Gen {
        widths,
        d: FlatDesign {
            name: format!("random_{seed}"),
            nets: Vec::new(),
            ports: Vec::new(),
            domains: Vec::new(),
            regs: Vec::new(),
            mems: Vec::new(),
        },
    };
    let reset = g.input("rst", 1, PortKind::Reset);
    let polarity = if rng.gen() {
        ResetPolarity::ActiveHigh
    } else {
        ResetPolarity::ActiveLow
    };
    let domains = rng.gen_range(1..=2);
    for k in 0..domains {
        let clock = g.input(&format!("clk{k}"), 1, PortKind::Clock);
        g.d.domains.push(ClockDomain {
            name: format!("d{k}"),
            clock,
            reset: Some(reset),
            polarity,
        });
    }
    let cell_seed: u64 = rng.gen();
    let copies = rng.gen_range(1..=12);
    let inputs = rng.gen_range(1..4);
    for c in 0..copies {
        let mut crng = ChaCha8Rng::seed_from_u64(cell_seed);
        let ins: Vec<NetId> = (0..inputs)
            .map(|i| {
                let w = if crng.gen_bool(0.2) {
                    crng.gen_range(65..=widths.max)
                } else {
                    crng.gen_range(1..=64)
                };
                g.input(&format!("c{c}_in{i}"), w, PortKind::Data)
            })
            .collect();
        g.cell(&mut crng, c, ins, domains);
    }
    g.d
}

/// Checks every named net of `sim` against the reference: the output ports first
/// (reading them settles only the logic they depend on), then every net.
fn compare(sim: &mut Simulator, r: &Reference<'_>, seed: u64, when: &str) {
    for p in r
        .flat
        .ports
        .iter()
        .filter(|p| p.direction == Direction::Output)
    {
        let net = &r.flat.nets[p.net.0 as usize];
        let expect = Bits::from_words(&r.vals[p.net.0 as usize], net.width);
        let got = sim.get(&p.name).expect("an output");
        assert_eq!(got, expect, "seed {seed}, {when}: output `{}`", p.name);
    }
    for (i, net) in r.flat.nets.iter().enumerate() {
        let Some(name) = &net.name else { continue };
        if r.flat.domains.iter().any(|d| d.clock.0 as usize == i) {
            continue; // the simulator drives clocks; the reference does not model them
        }
        let expect = Bits::from_words(&r.vals[i], net.width);
        let got = sim.peek(name).expect("named nets can be peeked");
        assert_eq!(got, expect, "seed {seed}, {when}: net `{name}`");
    }
}

/// The random stimulus of a design: its inputs (clocks aside), each set in about
/// seven cycles of ten to random words, resets mostly to their inactive level.
struct Stimulus<'a> {
    flat: &'a FlatDesign,
    inputs: Vec<&'a Port>,
    rng: ChaCha8Rng,
    /// The level that asserts the first domain's reset.
    active: u64,
}

impl<'a> Stimulus<'a> {
    /// The stimulus of design `seed`.
    fn new(flat: &'a FlatDesign, seed: u64) -> Stimulus<'a> {
        let inputs = flat
            .ports
            .iter()
            .filter(|p| p.direction == Direction::Input && p.kind != PortKind::Clock)
            .collect();
        Stimulus {
            flat,
            inputs,
            rng: ChaCha8Rng::seed_from_u64(seed ^ 0xabcdef),
            active: (flat.domains[0].polarity == ResetPolarity::ActiveHigh) as u64,
        }
    }

    /// The inputs one cycle sets, with their new words.
    fn cycle(&mut self) -> Vec<(&'a Port, Vec<u64>)> {
        let mut set = Vec::new();
        for &p in &self.inputs {
            let w = self.flat.nets[p.net.0 as usize].width;
            let mut v: Vec<u64> = (0..words(w)).map(|_| self.rng.gen()).collect();
            if let Some(top) = v.last_mut() {
                *top &= last_mask(w);
            }
            if p.kind == PortKind::Reset {
                // Mostly inactive.
                v[0] = if self.rng.gen_bool(0.15) {
                    self.active
                } else {
                    1 - self.active
                };
            }
            if self.rng.gen_bool(0.7) {
                set.push((p, v));
            }
        }
        set
    }
}

/// Runs design `seed` for `cycles` cycles on `backend` against the reference. The
/// compiled engine profiles the second third of the cycles and runs tuned from
/// there; returns the tuned engine's partitions that run untested, and all its
/// partitions.
fn run(seed: u64, widths: Widths, cycles: usize, backend: Backend) -> Option<(usize, usize)> {
    let flat = design(seed, widths);
    let mut sim = Simulator::from_flat_with(&flat, backend).expect("compiles");
    sim.set_tune_after(Some(cycles as u64 / 3));
    let mut r = Reference::new(&flat);
    let mut stimulus = Stimulus::new(&flat, seed);
    // Reset inputs start inactive.
    if let Some(rst) = flat.domains[0].reset {
        r.set(rst, &[1 - stimulus.active]);
    }
    if flat.domains.len() > 1 {
        sim.set_clock_period("d1", 1500).expect("a domain");
    }
    for cycle in 0..cycles {
        for (p, v) in stimulus.cycle() {
            let w = flat.nets[p.net.0 as usize].width;
            sim.set(&p.name, &Bits::from_words(&v, w))
                .expect("an input");
            r.set(p.net, &v);
        }
        r.settle();
        compare(
            &mut sim,
            &r,
            seed,
            &format!("{}, cycle {cycle} before the edge", backend.name()),
        );
        let fired: Vec<usize> = sim.step_edge().iter().collect();
        r.edge(&fired);
        r.settle();
        let when = format!("{}, cycle {cycle} after the edge", backend.name());
        compare(&mut sim, &r, seed, &when);
    }
    sim.tuned_stats().and_then(|(_, s)| s.tuned)
}

/// Runs designs `seeds` on both engines; asserts that the compiled engine was
/// tuned on every design, with partitions that run untested and tested ones
/// among them.
fn run_designs(seeds: impl Iterator<Item = u64>, widths: Widths, cycles: usize) {
    let (mut always, mut all) = (0, 0);
    for seed in seeds {
        run(seed, widths, cycles, Backend::Interpreted);
        let tuned = run(seed, widths, cycles, Backend::Compiled);
        let (a, n) = tuned.unwrap_or_else(|| panic!("seed {seed}: the engine was not tuned"));
        (always, all) = (always + a, all + n);
    }
    assert!(
        0 < always && always < all,
        "{always} of {all} partitions run untested: both kinds must be exercised"
    );
}

/// Runs design `seed` for 40 cycles on the interpreter, the compiled engine
/// taking over at cycle `takeover`, with a profile from cycle 12; returns the
/// cycle the tuned engine took over at and its partitions that run untested.
fn tuned_after_takeover(seed: u64, takeover: u64) -> (u64, usize) {
    let flat = design(seed, NARROW);
    let mut sim = Simulator::from_flat_with(&flat, Backend::Interpreted).expect("compiles");
    sim.set_tune_after(Some(12));
    let mut stimulus = Stimulus::new(&flat, seed);
    for cycle in 0..40 {
        if cycle == takeover {
            sim.compile_now();
        }
        for (p, v) in stimulus.cycle() {
            let w = flat.nets[p.net.0 as usize].width;
            sim.set(&p.name, &Bits::from_words(&v, w))
                .expect("an input");
        }
        sim.step_edge();
    }
    let (from, stats) = sim.tuned_stats().expect("tuned");
    (from, stats.tuned.expect("a tuned engine").0)
}

/// The profile counts the same cycles whatever cycle before them the compiled
/// engine took over at, so every run of the same stimulus is tuned alike: the
/// same partitions untested, from the same cycle.
#[test]
fn the_tuning_does_not_depend_on_when_the_compiled_engine_took_over() {
    for seed in 0..40 {
        let from_start = tuned_after_takeover(seed, 0);
        for takeover in [1, 5, 11] {
            assert_eq!(
                tuned_after_takeover(seed, takeover),
                from_start,
                "seed {seed}: (tuned from cycle, untested partitions), compiled from \
                 cycle {takeover} against from the first"
            );
        }
    }
}

#[test]
fn random_designs_match_the_reference() {
    let base = std::env::var("WIRESPEED_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_u64);
    run_designs((0..300).map(|k| base.wrapping_add(k)), NARROW, 24);
}

/// Values up to 4096 bits (the compiled engine writes wide data movement inline
/// and calls back for the rest), over longer runs.
#[test]
fn wide_random_designs_match_the_reference() {
    let base = std::env::var("WIRESPEED_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x3a1d_u64);
    run_designs((0..40).map(|k| base.wrapping_add(k)), WIDE, 100);
}

/// The output part (see [`demand`](crate::demand)) holds exactly the records the
/// output ports depend on, found here record by record and word by word: no step
/// mixes them with the rest, which would make every read after an input write
/// settle logic no output needs.
#[test]
fn the_output_part_is_exactly_what_the_outputs_read() {
    use crate::built::Built;
    use crate::demand::each_word;
    use crate::exec::each_record;
    use crate::state::NONE;
    let mut records = 0;
    for seed in (0..120).map(|k| 0x0a7_u64 + k) {
        let flat = design(seed, NARROW);
        let outputs: Vec<NetId> = (flat.ports.iter())
            .filter(|p| p.direction == Direction::Output)
            .map(|p| p.net)
            .collect();
        let built = Built::compile(flat).expect("random designs compile");
        let (prog, code) = (&built.prog, &built.prog.code);
        let mut recs = Vec::new();
        for (i, st) in code.steps.iter().enumerate() {
            each_record(code, st, |kind, r, _| recs.push((i, kind, r)));
        }
        let mut writer = vec![usize::MAX; prog.init.len()];
        for (j, (_, kind, r)) in recs.iter().enumerate() {
            each_word(code, *kind, r, |w, write| {
                if write {
                    writer[w as usize] = j;
                }
            });
        }
        let mut needed = vec![false; recs.len()];
        let mut stack: Vec<u32> = (outputs.iter())
            .map(|n| prog.nets[n.0 as usize])
            .filter(|s| s.off != NONE)
            .flat_map(|s| s.off..s.off + s.words)
            .collect();
        while let Some(w) = stack.pop() {
            let j = writer[w as usize];
            if j == usize::MAX || std::mem::replace(&mut needed[j], true) {
                continue;
            }
            let (_, kind, r) = &recs[j];
            each_word(code, *kind, r, |w, write| {
                if !write {
                    stack.push(w);
                }
            });
        }
        for (j, (i, _, _)) in recs.iter().enumerate() {
            let in_part = code.outputs.get(*i).copied().unwrap_or(false);
            assert_eq!(
                in_part, needed[j],
                "seed {seed}: record {j} of step {i} is {}in the output part but {}needed by an output",
                if in_part { "" } else { "not " },
                if needed[j] { "" } else { "not " },
            );
        }
        records += recs.len();
    }
    assert!(records > 10_000, "only {records} records in the sample");
}
