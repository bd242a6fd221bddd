//! Random netlists built through the public `hdl::ModuleBuilder` API, run on every
//! engine in lockstep: the compiled (Cranelift) simulator against the interpreter on
//! hundreds of designs and thousands of cycles, and the compiled simulator against
//! Verilator (running the emitted Verilog) on a sample.
//!
//! `sim`'s own randomized test (`sim/src/reference.rs`) builds flat designs directly,
//! so it has no memories, no hierarchy and no Verilog. The designs here come from the
//! builder, as a user's would, and so also go through validation, flattening and the
//! Verilog back end. Each design has two or three clock domains whose periods share
//! rising edges (domain 0 at 1000 ps, the others at 500–3000 ps), resets of either
//! polarity (or none), and per domain an island of random logic: bitwise, arithmetic
//! (wrapping and widening), signed and unsigned comparisons, shifts by constants and
//! by nets, muxes, index selects, slices, concatenations, extensions, replication,
//! reductions, leading zeros and popcounts over widths 1–4096 (mostly ≤ 64, some
//! 65–300, a few up to 4096); registers with and without enable and reset; memories
//! (random initial contents or none, depths that are often not powers of two) with a
//! write port and one or two read ports, with and without read enable; and a
//! `sync_bits` instance carrying a value from the previous domain. Registers, memory
//! read data and about half of every island's values are outputs, read after every
//! input change and every rising edge, so any divergence is seen where it happens.
//!
//! Memory addresses are left unconstrained on purpose: with a depth that is not a
//! power of two, an address can point past the last word. The native simulator
//! ignores such writes and reads 0; the emitted Verilog guards its reads
//! (`addr < depth ? mem[addr] : 0`), and IEEE 1800 (§7.4.6), which Verilator follows,
//! ignores writes to an address outside the array. The Verilator sample checks that
//! this agreement holds rather than assuming it.
//!
//! Memory ports are code both native engines share (`sim/src/state.rs`): a memory bug makes
//! them agree with each other, and only the Verilator sample can see it.
//!
//! Seeds are fixed and printed; design `k` of a run has seed `base + k`, and
//! `WIRESPEED_SEED=<seed>` makes a failing design the first of a replay.

use hdl::blocks::cdc::sync_bits;
use hdl::ir::{Direction, PortKind, ResetPolarity};
use hdl::{Bits, Domain, Memory, Module, ModuleBuilder, Signal};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sim::Backend;
use testbench::dut::{Dut, Lockstep, NativeDut, VerilatorDut};
use testbench::rng::{random_words, SEED_VAR};
use testbench::verilator::BuildOptions;

type Rand = ChaCha8Rng;

/// The widest value a design makes.
const MAX_WIDTH: u32 = 4096;

/// Designs of the compiled-against-interpreter test, and domain-0 cycles each.
const DESIGNS: u64 = 250;
const CYCLES: u64 = 80;
/// The profile window (settles, from settle `TUNE_WINDOW` on) after which every
/// second design's compiled engine is tuned: small enough that the tuned engine,
/// which runs some partitions untested, runs most of the cycles.
const TUNE_WINDOW: u64 = 12;

/// The Verilator sample: designs bundled into one module (one Verilator build),
/// and domain-0 cycles.
const VERILATOR_DESIGNS: u64 = 4;
const VERILATOR_CYCLES: u64 = 400;

/// Designs bundled into one module for the Verilator lint check (`WIRESPEED_LINT_DESIGNS`
/// raises it for a longer search).
const LINT_DESIGNS: u64 = 40;

/// Periods (ps) of the domains after domain 0 (1000 ps). Each shares rising edges with
/// domain 0: every edge (500, 1000), every 2 ns (2000), 3 ns (1500, 3000) or 7 ns (700).
const PERIODS: [u64; 6] = [500, 700, 1000, 1500, 2000, 3000];

/// The base seed of a test: `$WIRESPEED_SEED` or `default`, printed.
fn base_seed(test: &str, default: u64) -> u64 {
    let seed = std::env::var(SEED_VAR)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default);
    println!("{test}: base seed {seed} (design k has seed {seed} + k; replay one with {SEED_VAR}=<its seed>)");
    seed
}

/// A random width: mostly ≤ 64 bits, some 65–300, a few up to 4096.
fn random_width(rng: &mut Rand) -> u32 {
    match rng.gen_range(0..100) {
        0..=79 => rng.gen_range(1..=64),
        80..=96 => rng.gen_range(65..=300),
        _ => rng.gen_range(301..=MAX_WIDTH),
    }
}

/// One random design: its module, its seeds (one per bundled island set) and the
/// clock period of each domain.
struct Design {
    module: Module,
    seeds: Vec<u64>,
    periods: Vec<u64>,
}

impl Design {
    fn describe(&self) -> String {
        format!("design `{}` (seeds {:?})", self.module.name, self.seeds)
    }
}

/// A clock domain of a design: its handle and its active-high reset, if it has one.
struct DomainInfo {
    domain: Domain,
    reset: Option<Signal>,
}

/// Declares 2–3 clock domains `d0`, `d1`, `d2` (clocks `clk*`, resets `rst*` of random
/// polarity; every domain but the first may have none) and chooses their periods.
fn declare_domains(m: &mut ModuleBuilder, rng: &mut Rand) -> (Vec<DomainInfo>, Vec<u64>) {
    let count = if rng.gen_bool(0.3) { 3 } else { 2 };
    let mut domains = Vec::new();
    let mut periods = Vec::new();
    for d in 0..count {
        let polarity = if rng.gen() {
            ResetPolarity::ActiveHigh
        } else {
            ResetPolarity::ActiveLow
        };
        let rst = format!("rst{d}");
        let with_reset = d == 0 || rng.gen_bool(0.75);
        let domain = m.domain(
            &format!("d{d}"),
            &format!("clk{d}"),
            with_reset.then_some(rst.as_str()),
            polarity,
        );
        let reset = with_reset.then(|| m.reset_active(domain));
        domains.push(DomainInfo { domain, reset });
        periods.push(if d == 0 {
            1000
        } else {
            PERIODS[rng.gen_range(0..PERIODS.len())]
        });
    }
    (domains, periods)
}

/// A random design made of one set of islands per seed (one island per domain), in
/// one module called `name`.
fn design(name: &str, seeds: &[u64]) -> Design {
    let mut rng = Rand::seed_from_u64(seeds[0] ^ 0xd0_d0);
    let mut m = ModuleBuilder::new(name);
    let (domains, periods) = declare_domains(&mut m, &mut rng);
    for (k, &seed) in seeds.iter().enumerate() {
        let mut irng = Rand::seed_from_u64(seed);
        let mut previous: Option<Vec<Signal>> = None;
        for (d, info) in domains.iter().enumerate() {
            let prefix = format!("s{k}_d{d}");
            let crossed = match (&previous, info.reset) {
                (Some(pool), Some(_)) if irng.gen_bool(0.7) => {
                    let value = pool[irng.gen_range(0..pool.len())];
                    Some(cross(&mut m, &mut irng, &prefix, value, info.domain))
                }
                _ => None,
            };
            let mut island = Island {
                m: &mut m,
                rng: &mut irng,
                prefix,
                pool: Vec::new(),
                named: 0,
            };
            island.build(info, crossed);
            previous = Some(island.pool);
        }
    }
    let module = m
        .finish()
        .unwrap_or_else(|e| panic!("design `{name}` (seeds {seeds:?}) does not build: {e}"));
    Design {
        module,
        seeds: seeds.to_vec(),
        periods,
    }
}

/// `value` (of another domain) carried into `dst` by a `sync_bits` instance.
fn cross(
    m: &mut ModuleBuilder,
    rng: &mut Rand,
    prefix: &str,
    value: Signal,
    dst: Domain,
) -> Signal {
    let value = if value.width() > 300 {
        m.slice(value, 0, rng.gen_range(1..=300))
    } else {
        value
    };
    let stages = rng.gen_range(2..=3);
    let sync = sync_bits(value.width(), stages).expect("sync_bits builds");
    let inst = m.instance(&format!("{prefix}_sync"), &sync);
    m.bind_domain(inst, "clk", dst);
    m.connect(inst, "d", value);
    m.instance_output(inst, "q")
}

/// A register of an island and how it is driven.
struct Reg {
    q: Signal,
    enabled: bool,
}

/// One domain's island of random logic over a pool of values.
struct Island<'a> {
    m: &'a mut ModuleBuilder,
    rng: &'a mut Rand,
    prefix: String,
    pool: Vec<Signal>,
    /// Names given so far (names are `{prefix}_{what}{n}`).
    named: u32,
}

impl Island<'_> {
    /// A fresh name in the island.
    fn name(&mut self, what: &str) -> String {
        self.named += 1;
        format!("{}_{what}{}", self.prefix, self.named)
    }

    fn pick(&mut self) -> Signal {
        self.pool[self.rng.gen_range(0..self.pool.len())]
    }

    /// Inputs, registers, logic, memories and outputs of the island.
    fn build(&mut self, info: &DomainInfo, crossed: Option<Signal>) {
        for _ in 0..self.rng.gen_range(1..=4) {
            let (name, w) = (self.name("in"), random_width(self.rng));
            let input = self.m.input(&name, w);
            self.pool.push(input);
        }
        self.pool.extend(info.reset);
        self.pool.extend(crossed);
        for _ in 0..self.rng.gen_range(1..=3) {
            let w = if self.rng.gen_bool(0.8) {
                self.rng.gen_range(1..=70)
            } else {
                random_width(self.rng)
            };
            let k = self.constant(w);
            self.pool.push(k);
        }
        let regs = self.registers(info.domain);
        let mut exposed: Vec<Signal> = regs.iter().map(|r| r.q).collect();
        let first_op = self.pool.len();
        let n = self.rng.gen_range(8..=25);
        self.logic(n);
        let memories = self.memories(info.domain, &mut exposed);
        let n = self.rng.gen_range(5..=20);
        self.logic(n);
        for mem in &memories {
            self.write_port(*mem, info.domain);
        }
        self.drive_registers(&regs);
        let ops = self.pool[first_op..].to_vec();
        exposed.extend(ops.into_iter().filter(|_| self.rng.gen_bool(0.5)));
        for value in exposed {
            let name = self.name("o");
            self.m.output(&name, value);
        }
    }

    /// `count` random operations, each added to the pool (some of them named).
    fn logic(&mut self, count: u32) {
        for _ in 0..count {
            let v = self.random_op();
            let v = if self.rng.gen_bool(0.15) {
                let name = self.name("n");
                self.m.named(&name, v)
            } else {
                v
            };
            self.pool.push(v);
        }
    }

    /// A random constant of `width` bits: zeros, ones, small or random.
    fn constant(&mut self, width: u32) -> Signal {
        let words = match self.rng.gen_range(0..4) {
            0 => return self.m.zeros(width),
            1 => return self.m.ones(width),
            2 => vec![self.rng.gen_range(0..4)],
            _ => random_words(self.rng, width),
        };
        self.m.constant(&Bits::from_words(&words, width))
    }

    /// A value of `width` bits made from `s`: itself, a random slice, or an extension.
    fn adapt(&mut self, s: Signal, width: u32) -> Signal {
        let w = s.width();
        match w.cmp(&width) {
            std::cmp::Ordering::Equal => s,
            std::cmp::Ordering::Greater => {
                let lo = self.rng.gen_range(0..=w - width);
                self.m.slice(s, lo, width)
            }
            std::cmp::Ordering::Less if self.rng.gen() => self.m.sext(s, width),
            std::cmp::Ordering::Less => self.m.zext(s, width),
        }
    }

    /// A random 1-bit value of the pool (enables, selects).
    fn flag(&mut self) -> Signal {
        let s = self.pick();
        self.adapt(s, 1)
    }

    /// One random operation over the pool.
    fn random_op(&mut self) -> Signal {
        let a = self.pick();
        let b = self.pick();
        match self.rng.gen_range(0..20) {
            0..=2 => self.bitwise(a, b),
            3..=5 => self.arith(a, b),
            6 | 7 => self.compare(a, b),
            8 | 9 => self.shift(a, b),
            10 | 11 => {
                let sel = self.flag();
                let b = self.adapt(b, a.width());
                self.m.mux(sel, a, b)
            }
            12 => self.index(a),
            13..=16 => self.reshape(a, b),
            _ => self.unary(a),
        }
    }

    fn bitwise(&mut self, a: Signal, b: Signal) -> Signal {
        let b = self.adapt(b, a.width());
        match self.rng.gen_range(0..4) {
            0 => self.m.and(a, b),
            1 => self.m.or(a, b),
            2 => self.m.xor(a, b),
            _ => self.m.not(a),
        }
    }

    /// Add, subtract (wrapping or widening), multiply, or add a constant.
    fn arith(&mut self, a: Signal, b: Signal) -> Signal {
        let a = if a.width() >= MAX_WIDTH {
            self.m.slice(a, 0, MAX_WIDTH - 1)
        } else {
            a
        };
        match self.rng.gen_range(0..6) {
            0 => {
                let b = self.adapt(b, a.width());
                self.m.add(a, b)
            }
            1 => {
                let b = self.adapt(b, a.width());
                self.m.sub(a, b)
            }
            2 => {
                let b = self.adapt(b, a.width());
                self.m.add_wrap(a, b)
            }
            3 => {
                let b = self.adapt(b, a.width());
                self.m.sub_wrap(a, b)
            }
            4 => {
                let wb = b.width().min(MAX_WIDTH - a.width()).clamp(1, 300);
                let b = self.adapt(b, wb);
                self.m.mul(a, b)
            }
            _ => {
                let k = self.rng.gen::<u64>() & (u64::MAX >> 64u32.saturating_sub(a.width()));
                self.m.add_const_wrap(a, k)
            }
        }
    }

    /// A comparison, signed or unsigned (1 bit).
    fn compare(&mut self, a: Signal, b: Signal) -> Signal {
        let b = self.adapt(b, a.width());
        match self.rng.gen_range(0..11) {
            0 => self.m.eq(a, b),
            1 => self.m.ne(a, b),
            2 => self.m.lt(a, b),
            3 => self.m.le(a, b),
            4 => self.m.gt(a, b),
            5 => self.m.ge(a, b),
            6 => self.m.lt_signed(a, b),
            7 => self.m.le_signed(a, b),
            8 => self.m.gt_signed(a, b),
            9 => self.m.ge_signed(a, b),
            _ => {
                let k = self.rng.gen_range(0..4);
                self.m
                    .eq_const(a, k.min(u64::MAX >> 64u32.saturating_sub(a.width())))
            }
        }
    }

    /// A shift by a constant (up to past the width) or by a value of the pool (mostly
    /// narrow amounts, sometimes the whole value, however wide).
    fn shift(&mut self, a: Signal, b: Signal) -> Signal {
        let by_net = self.rng.gen_bool(0.5);
        let amount = if !by_net {
            None
        } else if self.rng.gen_bool(0.2) {
            Some(b)
        } else {
            let w = b.width().min(self.rng.gen_range(1..=13));
            Some(self.adapt(b, w))
        };
        let n = self.rng.gen_range(0..a.width() + 3);
        match (self.rng.gen_range(0..3), amount) {
            (0, None) => self.m.shl(a, n),
            (1, None) => self.m.shr(a, n),
            (_, None) => self.m.sra(a, n),
            (0, Some(x)) => self.m.shl_by(a, x),
            (1, Some(x)) => self.m.shr_by(a, x),
            (_, Some(x)) => self.m.sra_by(a, x),
        }
    }

    /// `values[index]` over 2–5 values of `a`'s width, the index from the pool.
    fn index(&mut self, a: Signal) -> Signal {
        let mut values = vec![a];
        for _ in 0..self.rng.gen_range(1..=4) {
            let v = self.pick();
            values.push(self.adapt(v, a.width()));
        }
        let i = self.pick();
        let iw = i.width().min(self.rng.gen_range(1..=4));
        let i = self.adapt(i, iw);
        self.m.index(i, &values)
    }

    /// A slice, a concatenation, an extension or a replication.
    fn reshape(&mut self, a: Signal, b: Signal) -> Signal {
        let wa = a.width();
        match self.rng.gen_range(0..5) {
            0 | 1 => {
                let w = self.rng.gen_range(1..=wa);
                let lo = self.rng.gen_range(0..=wa - w);
                self.m.slice(a, lo, w)
            }
            2 => {
                let mut parts = vec![a, b];
                for _ in 0..self.rng.gen_range(0..=2) {
                    parts.push(self.pick());
                }
                let mut total = 0;
                parts.retain(|p| {
                    total += p.width();
                    total <= MAX_WIDTH
                });
                self.m.concat(&parts)
            }
            3 => {
                let w = (wa + self.rng.gen_range(0..=70)).min(MAX_WIDTH.max(wa));
                if self.rng.gen() {
                    self.m.sext(a, w)
                } else {
                    self.m.zext(a, w)
                }
            }
            _ => {
                let w = wa.min(self.rng.gen_range(1..=20));
                let src = self.adapt(a, w);
                let count = self.rng.gen_range(1..=(MAX_WIDTH / src.width()).min(6));
                self.m.replicate(src, count)
            }
        }
    }

    /// A reduction, leading zeros or (narrow values) a popcount.
    fn unary(&mut self, a: Signal) -> Signal {
        match self.rng.gen_range(0..5) {
            0 => self.m.reduce_and(a),
            1 => self.m.reduce_or(a),
            2 => self.m.reduce_xor(a),
            3 if a.width() <= 64 => self.m.popcount(a),
            _ => self.m.leading_zeros(a),
        }
    }

    /// 1–5 registers of `domain` (reset to 0, to a value, or not reset), in the pool
    /// before any logic so that they can feed back.
    fn registers(&mut self, domain: Domain) -> Vec<Reg> {
        let mut regs = Vec::new();
        for _ in 0..self.rng.gen_range(1..=5) {
            let (name, w) = (self.name("r"), random_width(self.rng));
            let q = match self.rng.gen_range(0..3) {
                0 => self.m.reg(domain, &name, w),
                1 => {
                    let v = self.rng.gen::<u64>() & (u64::MAX >> 64u32.saturating_sub(w));
                    self.m.reg_init(domain, &name, w, v)
                }
                _ => self.m.reg_no_reset(domain, &name, w),
            };
            self.pool.push(q);
            regs.push(Reg {
                q,
                enabled: self.rng.gen_bool(0.4),
            });
        }
        regs
    }

    /// Drives every register from the pool (and its enable, if it has one).
    fn drive_registers(&mut self, regs: &[Reg]) {
        for r in regs {
            let src = self.pick();
            let next = self.adapt(src, r.q.width());
            self.m.set_next(r.q, next);
            if r.enabled {
                let en = self.flag();
                self.m.set_enable(r.q, en);
            }
        }
    }

    /// 0–2 memories of `domain` with one or two read ports each (data added to the pool
    /// and to `exposed`); their write ports are added later, from a larger pool.
    fn memories(&mut self, domain: Domain, exposed: &mut Vec<Signal>) -> Vec<Memory> {
        const DEPTHS: [u32; 10] = [2, 3, 4, 5, 7, 12, 16, 17, 31, 64];
        let mut mems = Vec::new();
        for _ in 0..self.rng.gen_range(0..=2) {
            let width = if self.rng.gen_bool(0.8) {
                self.rng.gen_range(1..=64)
            } else {
                self.rng.gen_range(65..=300)
            };
            let depth = DEPTHS[self.rng.gen_range(0..DEPTHS.len())];
            let init = self.rng.gen_bool(0.5).then(|| {
                (0..depth)
                    .map(|_| Bits::from_words(&random_words(self.rng, width), width))
                    .collect()
            });
            let name = self.name("mem");
            let mem = self.m.memory(&name, width, depth, init);
            for _ in 0..self.rng.gen_range(1..=2) {
                let a = self.pick();
                let addr = self.adapt(a, mem.addr_width());
                let enable = self.rng.gen_bool(0.5).then(|| self.flag());
                let name = self.name("rd");
                let data = self.m.mem_read(mem, domain, &name, addr, enable);
                self.pool.push(data);
                exposed.push(data);
            }
            mems.push(mem);
        }
        mems
    }

    /// The write port of `mem`: address, data and enable from the pool.
    fn write_port(&mut self, mem: Memory, domain: Domain) {
        let a = self.pick();
        let addr = self.adapt(a, mem.addr_width());
        let d = self.pick();
        let data = self.adapt(d, mem.width());
        let enable = self.flag();
        self.m.mem_write(mem, domain, addr, data, enable);
    }
}

/// How a design is driven: its data inputs, its resets (port, active level) and its
/// outputs, by port index.
struct Stimulus {
    inputs: Vec<(usize, u32)>,
    resets: Vec<(usize, u64)>,
    outputs: Vec<usize>,
    buffer: Vec<u64>,
}

impl Stimulus {
    fn of(module: &Module) -> Self {
        let port_of = |net| {
            module
                .ports
                .iter()
                .position(|p| p.net == net)
                .expect("a port")
        };
        let resets = module
            .domains
            .iter()
            .filter_map(|d| {
                let active = (d.polarity == ResetPolarity::ActiveHigh) as u64;
                d.reset.map(|r| (port_of(r), active))
            })
            .collect();
        let width = |p: &hdl::ir::Port| module.net(p.net).width;
        let data = |dir| {
            module
                .ports
                .iter()
                .enumerate()
                .filter(move |(_, p)| p.direction == dir && p.kind == PortKind::Data)
        };
        let inputs = data(Direction::Input).map(|(i, p)| (i, width(p))).collect();
        let outputs: Vec<usize> = data(Direction::Output).map(|(i, _)| i).collect();
        let widest = module.ports.iter().map(|p| width(p).div_ceil(64)).max();
        Stimulus {
            inputs,
            resets,
            outputs,
            buffer: vec![0; widest.unwrap_or(1) as usize],
        }
    }

    /// New random values on most inputs; each reset is asserted now and then.
    fn drive(&self, dut: &mut impl Dut, rng: &mut Rand) -> Result<(), String> {
        for &(port, width) in &self.inputs {
            if rng.gen_bool(0.7) {
                let v = random_words(rng, width);
                dut.set(port, &v).map_err(|e| e.to_string())?;
            }
        }
        for &(port, active) in &self.resets {
            let level = if rng.gen_bool(0.04) {
                active
            } else {
                1 - active
            };
            dut.set(port, &[level]).map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// Reads (and so, in lockstep, compares) every output.
    fn read_all(&mut self, dut: &mut impl Dut) -> Result<(), String> {
        for &o in &self.outputs {
            dut.get_into(o, &mut self.buffer)
                .map_err(|e| e.to_string())?;
        }
        Ok(())
    }
}

/// Runs `design` on `dut` for `cycles` rising edges of domain 0 after a reset: random
/// inputs before every edge of any domain, every output read after the inputs change
/// and after the edge. Returns the number of edges; an error names the design and when.
fn run(dut: &mut impl Dut, design: &Design, cycles: u64) -> Result<u64, String> {
    let fail = |when: String, e: String| format!("{}, {when}: {e}", design.describe());
    for (d, &period) in design.periods.iter().enumerate() {
        dut.set_clock_period(&format!("d{d}"), period)
            .map_err(|e| fail("setting clocks".into(), e.to_string()))?;
    }
    let mut stim = Stimulus::of(&design.module);
    let mut rng = Rand::seed_from_u64(design.seeds[0] ^ 0x57_1a);
    dut.reset(2);
    stim.read_all(dut)
        .map_err(|e| fail("after the reset".into(), e))?;
    let (mut done, mut edges) = (0, 0);
    while done < cycles {
        stim.drive(dut, &mut rng)
            .map_err(|e| fail(format!("edge {edges}"), e))?;
        stim.read_all(dut)
            .map_err(|e| fail(format!("before edge {edges}"), e))?;
        let fired = dut.step_edge();
        done += fired.contains(0) as u64;
        stim.read_all(dut)
            .map_err(|e| fail(format!("after edge {edges} (domains {fired:?})"), e))?;
        edges += 1;
    }
    Ok(edges)
}

#[test]
fn compiled_matches_interpreter_on_random_netlists() {
    let base = base_seed("compiled vs interpreter", 0x7a4d_0001);
    let started = std::time::Instant::now();
    let (mut edges, mut outputs, mut memories, mut tuned) = (0, 0, 0, 0);
    for k in 0..DESIGNS {
        let seed = base.wrapping_add(k);
        let d = design(&format!("random_{k}"), &[seed]);
        let native = NativeDut::with_backend(&d.module, Backend::Compiled);
        let interpreted = NativeDut::with_backend(&d.module, Backend::Interpreted);
        let (mut native, interpreted) = match (native, interpreted) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(e), _) | (_, Err(e)) => panic!("{}: does not simulate: {e}", d.describe()),
        };
        // Every second design's compiled engine is tuned from a profile of
        // TUNE_WINDOW settles early enough to run most of the cycles tuned.
        let tune = k % 2 == 1;
        if tune {
            native.simulator().set_tune_after(Some(TUNE_WINDOW));
        }
        let mut pair =
            Lockstep::new(native, interpreted).unwrap_or_else(|e| panic!("{}: {e}", d.describe()));
        edges += run(&mut pair, &d, CYCLES).unwrap_or_else(|e| panic!("{e}"));
        if tune {
            let ran = pair.engines().0.simulator().tuned_stats().is_some();
            assert!(ran, "{}: the tuned engine never ran", d.describe());
            tuned += 1;
        }
        outputs += Stimulus::of(&d.module).outputs.len();
        memories += d.module.mems.len();
    }
    println!(
        "{DESIGNS} designs ({tuned} on a tuned engine from about cycle {}) × {CYCLES} domain-0 cycles ({edges} edges of any domain, {outputs} outputs, {memories} memories) in {:.1?}",
        2 * TUNE_WINDOW,
        started.elapsed()
    );
}

#[test]
fn verilator_matches_native_on_a_sample() {
    let base = base_seed("Verilator vs native", 0x7a4d_1001);
    let seeds: Vec<u64> = (0..VERILATOR_DESIGNS)
        .map(|k| base.wrapping_add(k))
        .collect();
    let d = design("random_bundle", &seeds);
    let started = std::time::Instant::now();
    let verilator = VerilatorDut::new(&d.module, &BuildOptions::default())
        .unwrap_or_else(|e| panic!("{}: Verilator: {e}", d.describe()));
    let built = started.elapsed();
    let native = NativeDut::with_backend(&d.module, Backend::Compiled)
        .unwrap_or_else(|e| panic!("{}: {e}", d.describe()));
    let mut pair =
        Lockstep::new(native, verilator).unwrap_or_else(|e| panic!("{}: {e}", d.describe()));
    let edges = run(&mut pair, &d, VERILATOR_CYCLES).unwrap_or_else(|e| panic!("{e}"));
    println!(
        "{VERILATOR_DESIGNS} designs in one module ({} outputs, {} memories) × {VERILATOR_CYCLES} domain-0 cycles ({edges} edges); Verilator build {built:.1?}, total {:.1?}",
        Stimulus::of(&d.module).outputs.len(),
        d.module.mems.len(),
        started.elapsed()
    );
}

/// The emitted Verilog of random designs passes Verilator's `-Wall` lint. Above all,
/// no unsigned order the back end writes plainly (`a < b`) becomes a constant compare
/// once Verilator has folded its sides (UNSIGNED/CMPCONST, which would also stop a
/// model's build), whatever literals, slices and operations the sides are made of:
/// the islands' pools hold zeros, all-ones and small literals, so sides like `x & 0`
/// or a select of an extension's zero bits occur.
#[test]
fn random_netlists_pass_verilator_lint() {
    let base = base_seed("Verilator lint", 0x7a4d_2001);
    let count = std::env::var("WIRESPEED_LINT_DESIGNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(LINT_DESIGNS);
    let seeds: Vec<u64> = (0..count).map(|k| base.wrapping_add(k)).collect();
    let d = design("random_lint", &seeds);
    let emitted = gen::emit(&d.module).unwrap_or_else(|e| panic!("{}: {e}", d.describe()));
    let dir = tempfile::tempdir().expect("temp dir");
    let manifest = gen::Manifest::new(&d.module, &emitted);
    gen::write_design(dir.path(), &emitted, &manifest).expect("write design");
    let (plain, signed) = unsigned_orders(&d.module);
    println!(
        "{count} designs in one module: {} unsigned orders, {plain} of them written plainly",
        plain + signed
    );
    gen::toolchain::verilator_lint(&[dir.path()], &emitted.top)
        .unwrap_or_else(|e| panic!("{}: {e}", d.describe()));
}

/// How many of `m`'s unsigned orders the Verilog writes plainly and how many as signed
/// compares of zero-extended operands, counted in its netlist style (every operation a
/// wire or assign of its own, `wire _n7 = a < b;`), which writes each order as the
/// default style does. A signed compare of two names is a signed order; one of a
/// concatenation or a literal (`$signed({1'b0, a})`, `$signed(9'h000)`), an unsigned
/// one.
fn unsigned_orders(m: &Module) -> (usize, usize) {
    let options = gen::EmitOptions {
        inline: false,
        locators: false,
        top_note: None,
    };
    let netlist = gen::emit_with(m, &options).expect("emits");
    let (mut plain, mut signed) = (0, 0);
    for (_, text) in &netlist.files {
        for line in text.lines().map(str::trim_start) {
            let order = line.contains(" < ") || line.contains(" <= ");
            let declared = line.starts_with("wire") || line.starts_with("assign");
            if !declared || !line.contains(" = ") || !order {
                continue;
            }
            match line.split_once("$signed(") {
                None => plain += 1,
                Some((_, operand))
                    if operand.starts_with(|c: char| c == '{' || c.is_ascii_digit()) =>
                {
                    signed += 1
                }
                Some(_) => {}
            }
        }
    }
    (plain, signed)
}

/// Regression (found by seeds 123–126 of the sample): a memory of a depth that is not a
/// power of two read at an address Verilator folds to all ones — past the end — made
/// the emitted guard `addr < depth` a constant compare, which Verilator refused
/// (CMPCONST). Such reads give 0 on both engines; in-range constant and variable
/// addresses read the written words.
#[test]
fn constant_read_addresses_of_an_odd_depth_memory_agree_with_verilator() {
    let mut m = ModuleBuilder::new("mem_const_addr");
    let d = m.domain("d0", "clk0", None, ResetPolarity::ActiveHigh);
    let mem = m.memory("odd", 6, 3, None);
    let (wa, wd, we) = (m.input("wa", 2), m.input("wd", 6), m.input("we", 1));
    m.mem_write(mem, d, wa, wd, we);
    let k = m.ones(4);
    let past = m.slice(k, 1, 2);
    let within = m.lit(2, 2);
    for (name, addr) in [("past", past), ("within", within), ("any", wa)] {
        let q = m.mem_read(mem, d, &format!("rd_{name}"), addr, None);
        m.output(&format!("q_{name}"), q);
    }
    let design = Design {
        module: m.finish().expect("builds"),
        seeds: vec![0],
        periods: vec![1000],
    };
    let verilator = VerilatorDut::new(&design.module, &BuildOptions::default())
        .unwrap_or_else(|e| panic!("Verilator: {e}"));
    let native = NativeDut::with_backend(&design.module, Backend::Compiled).expect("simulates");
    let mut pair = Lockstep::new(native, verilator).expect("same ports");
    run(&mut pair, &design, 64).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(pair.get_u64("q_past").expect("agree"), 0);
}
