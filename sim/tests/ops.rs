//! Every IR operation, on narrow (≤ 64 bits), mid (65–257 bits) and wide (512–4096 bits)
//! operands, checked against independent models: a bit-by-bit `Vec<bool>` model for
//! every width, and plain `u128` arithmetic for widths whose results fit 128 bits.

mod common;

use common::*;
use hdl::{Module, ModuleBuilder, Signal};
use rand::Rng;
use sim::{Backend, PortHandle, Simulator};
use std::cmp::Ordering;

#[derive(Clone, Copy, Debug)]
enum Spec {
    Not,
    And,
    Or,
    Xor,
    Add,
    AddWrap,
    Sub,
    SubWrap,
    Mul,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    LtS,
    LeS,
    GtS,
    GeS,
    Mux,
    Slice(usize, usize),
    ConcatAB,
    ConcatBCA,
    /// `a` above `n` 16-bit lanes of `{s, the low 15 bits of c}`: parts repeated
    /// at the same place in several words of the result.
    Lanes(usize),
    RepA(usize),
    RepS(usize),
    Zext(usize),
    Sext(usize),
    ShlC(usize),
    ShrC(usize),
    SraC(usize),
    ShlV,
    ShrV,
    SraV,
    ShlW,
    ShrW,
    SraW,
    RedAnd,
    RedOr,
    RedXor,
    Lz,
}

/// Widths of one configuration: `a`, `b` are `w` bits, `c` is `wc`, `amt` is `wamt`.
#[derive(Clone, Copy, Debug)]
struct Shape {
    w: usize,
    wc: usize,
    wamt: usize,
}

const WIDE_AMOUNT: usize = 70;

fn specs(rng: &mut impl Rng, s: Shape) -> Vec<Spec> {
    use Spec::*;
    let w = s.w;
    let mut v = vec![
        Not,
        And,
        Or,
        Xor,
        Add,
        AddWrap,
        Sub,
        SubWrap,
        Mul,
        Eq,
        Ne,
        Lt,
        Le,
        Gt,
        Ge,
        LtS,
        LeS,
        GtS,
        GeS,
        Mux,
        ConcatAB,
        ConcatBCA,
        Lanes(3),
        Lanes(16),
        RepA(3),
        RepS(77),
        Zext(w + 37),
        Sext(w + 37),
        Sext(w + 64),
        Zext(w + 128),
        ShlV,
        ShrV,
        SraV,
        ShlW,
        ShrW,
        SraW,
        RedAnd,
        RedOr,
        RedXor,
        Lz,
    ];
    for k in [
        0,
        1,
        w.saturating_sub(1),
        w,
        w + 5,
        rng.gen_range(0..w),
        64,
        65,
    ] {
        v.extend([ShlC(k), ShrC(k), SraC(k)]);
    }
    v.push(Slice(0, w));
    v.push(Slice(w - 1, 1));
    for _ in 0..6 {
        let sw = rng.gen_range(1..=w);
        let lo = rng.gen_range(0..=w - sw);
        v.push(Slice(lo, sw));
    }
    if w >= 128 {
        v.push(Slice(64, w - 64));
        v.push(Slice(w - 64, 64));
        v.push(Slice(63, 65));
    }
    v
}

struct Ins {
    a: Signal,
    b: Signal,
    c: Signal,
    s: Signal,
    amt: Signal,
    amtw: Signal,
}

fn build_one(m: &mut ModuleBuilder, spec: Spec, i: &Ins) -> Signal {
    use Spec::*;
    let (a, b, c, s) = (i.a, i.b, i.c, i.s);
    match spec {
        Not => m.not(a),
        And => m.and(a, b),
        Or => m.or(a, b),
        Xor => m.xor(a, b),
        Add => m.add(a, b),
        AddWrap => m.add_wrap(a, b),
        Sub => m.sub(a, b),
        SubWrap => m.sub_wrap(a, b),
        Mul => m.mul(a, c),
        Eq => m.eq(a, b),
        Ne => m.ne(a, b),
        Lt => m.lt(a, b),
        Le => m.le(a, b),
        Gt => m.gt(a, b),
        Ge => m.ge(a, b),
        LtS => m.lt_signed(a, b),
        LeS => m.le_signed(a, b),
        GtS => m.gt_signed(a, b),
        GeS => m.ge_signed(a, b),
        Mux => m.mux(s, a, b),
        Slice(lo, w) => m.slice(a, lo as u32, w as u32),
        ConcatAB => m.concat(&[a, b]),
        ConcatBCA => m.concat(&[b, c, a]),
        Lanes(n) => {
            let low = m.slice(c, 0, c.width().min(15));
            let t = m.zext(low, 15);
            let mut parts = vec![a];
            (0..n).for_each(|_| parts.extend([s, t]));
            m.concat(&parts)
        }
        RepA(n) => m.replicate(a, n as u32),
        RepS(n) => m.replicate(s, n as u32),
        Zext(t) => m.zext(a, t as u32),
        Sext(t) => m.sext(a, t as u32),
        ShlC(k) => m.shl(a, k as u32),
        ShrC(k) => m.shr(a, k as u32),
        SraC(k) => m.sra(a, k as u32),
        ShlV => m.shl_by(a, i.amt),
        ShrV => m.shr_by(a, i.amt),
        SraV => m.sra_by(a, i.amt),
        ShlW => m.shl_by(a, i.amtw),
        ShrW => m.shr_by(a, i.amtw),
        SraW => m.sra_by(a, i.amtw),
        RedAnd => m.reduce_and(a),
        RedOr => m.reduce_or(a),
        RedXor => m.reduce_xor(a),
        Lz => m.leading_zeros(a),
    }
}

fn build(s: Shape, specs: &[Spec]) -> Module {
    let mut m = ModuleBuilder::new("ops");
    let ins = Ins {
        a: m.input("a", s.w as u32),
        b: m.input("b", s.w as u32),
        c: m.input("c", s.wc as u32),
        s: m.input("s", 1),
        amt: m.input("amt", s.wamt as u32),
        amtw: m.input("amtw", WIDE_AMOUNT as u32),
    };
    for (k, spec) in specs.iter().enumerate() {
        let y = build_one(&mut m, *spec, &ins);
        m.output(&format!("y{k}"), y);
    }
    m.finish().expect("test module is valid")
}

struct Vector {
    a: Bv,
    b: Bv,
    c: Bv,
    s: Bv,
    amt: Bv,
    amtw: Bv,
}

fn random_vector(rng: &mut impl Rng, s: Shape) -> Vector {
    let a = random_bv(rng, s.w);
    let b = if rng.gen_ratio(1, 8) {
        a.clone()
    } else {
        random_bv(rng, s.w)
    };
    // In range, a 1 above the first word with a low word in range (shifts
    // everything out), or anything.
    let amtw = match rng.gen_range(0..4) {
        0 | 1 => from_u128(rng.gen_range(0..s.w as u128 + 3), WIDE_AMOUNT),
        2 => from_u128(1 << 64 | rng.gen_range(0..s.w as u128), WIDE_AMOUNT),
        _ => random_bv(rng, WIDE_AMOUNT),
    };
    Vector {
        a,
        b,
        c: random_bv(rng, s.wc),
        s: vec![rng.gen()],
        amt: (0..s.wamt).map(|_| rng.gen()).collect(),
        amtw,
    }
}

fn amount(v: &Bv) -> usize {
    to_u128_sat(v).min(usize::MAX as u128) as usize
}

fn bool_bv(b: bool) -> Bv {
    vec![b]
}

/// The bit-by-bit model.
fn model(spec: Spec, s: Shape, v: &Vector) -> Bv {
    use Spec::*;
    let (a, b, c) = (&v.a, &v.b, &v.c);
    let w = s.w;
    match spec {
        Not => a.iter().map(|x| !x).collect(),
        And => a.iter().zip(b).map(|(x, y)| *x && *y).collect(),
        Or => a.iter().zip(b).map(|(x, y)| *x || *y).collect(),
        Xor => a.iter().zip(b).map(|(x, y)| x ^ y).collect(),
        Add => add(a, b, w + 1),
        AddWrap => add(a, b, w),
        Sub => sub(a, b, w + 1),
        SubWrap => sub(a, b, w),
        Mul => mul(a, c, w + s.wc),
        Eq => bool_bv(cmp_u(a, b) == Ordering::Equal),
        Ne => bool_bv(cmp_u(a, b) != Ordering::Equal),
        Lt => bool_bv(cmp_u(a, b) == Ordering::Less),
        Le => bool_bv(cmp_u(a, b) != Ordering::Greater),
        Gt => bool_bv(cmp_u(a, b) == Ordering::Greater),
        Ge => bool_bv(cmp_u(a, b) != Ordering::Less),
        LtS => bool_bv(cmp_s(a, b) == Ordering::Less),
        LeS => bool_bv(cmp_s(a, b) != Ordering::Greater),
        GtS => bool_bv(cmp_s(a, b) == Ordering::Greater),
        GeS => bool_bv(cmp_s(a, b) != Ordering::Less),
        Mux => {
            if v.s[0] {
                a.clone()
            } else {
                b.clone()
            }
        }
        Slice(lo, sw) => slice(a, lo, sw),
        ConcatAB => concat(&[a, b]),
        ConcatBCA => concat(&[b, c, a]),
        Lanes(n) => {
            let t = resize(&slice(c, 0, s.wc.min(15)), 15, false);
            let mut parts = vec![a];
            (0..n).for_each(|_| parts.extend([&v.s, &t]));
            concat(&parts)
        }
        RepA(n) => concat(&vec![a; n]),
        RepS(n) => vec![v.s[0]; n],
        Zext(t) => resize(a, t, false),
        Sext(t) => resize(a, t, true),
        ShlC(k) => shl(a, k),
        ShrC(k) => shr(a, k, false),
        SraC(k) => shr(a, k, true),
        ShlV => shl(a, amount(&v.amt)),
        ShrV => shr(a, amount(&v.amt), false),
        SraV => shr(a, amount(&v.amt), true),
        ShlW => shl(a, amount(&v.amtw)),
        ShrW => shr(a, amount(&v.amtw), false),
        SraW => shr(a, amount(&v.amtw), true),
        RedAnd => bool_bv(a.iter().all(|x| *x)),
        RedOr => bool_bv(a.iter().any(|x| *x)),
        RedXor => bool_bv(a.iter().filter(|x| **x).count() % 2 == 1),
        Lz => from_u128(leading_zeros(a) as u128, bits_for(w)),
    }
}

fn m128(w: usize) -> u128 {
    if w >= 128 {
        u128::MAX
    } else {
        (1u128 << w) - 1
    }
}

fn sx(v: u128, w: usize) -> i128 {
    ((v << (128 - w)) as i128) >> (128 - w)
}

/// The `u128` model, for results of at most 128 bits from operands of at most 64 bits;
/// `None` where it does not apply. Returns (value, width).
fn model_u128(spec: Spec, s: Shape, v: &Vector) -> Option<(u128, usize)> {
    use Spec::*;
    let w = s.w;
    if w > 64 || s.wc > 64 {
        return None;
    }
    let u = |x: &Bv| to_u128_sat(x);
    let (a, b, c) = (u(&v.a), u(&v.b), u(&v.c));
    let sel = v.s[0];
    let shl = |a: u128, k: usize| if k >= w { 0 } else { (a << k) & m128(w) };
    let shr = |a: u128, k: usize| if k >= w { 0 } else { a >> k };
    let sra = |a: u128, k: usize| (sx(a, w) >> k.min(w - 1)) as u128 & m128(w);
    let r = match spec {
        Not => (!a & m128(w), w),
        And => (a & b, w),
        Or => (a | b, w),
        Xor => (a ^ b, w),
        Add => ((a + b) & m128(w + 1), w + 1),
        AddWrap => ((a + b) & m128(w), w),
        Sub => (a.wrapping_sub(b) & m128(w + 1), w + 1),
        SubWrap => (a.wrapping_sub(b) & m128(w), w),
        Mul => (a * c, w + s.wc),
        Eq => ((a == b) as u128, 1),
        Ne => ((a != b) as u128, 1),
        Lt => ((a < b) as u128, 1),
        Le => ((a <= b) as u128, 1),
        Gt => ((a > b) as u128, 1),
        Ge => ((a >= b) as u128, 1),
        LtS => ((sx(a, w) < sx(b, w)) as u128, 1),
        LeS => ((sx(a, w) <= sx(b, w)) as u128, 1),
        GtS => ((sx(a, w) > sx(b, w)) as u128, 1),
        GeS => ((sx(a, w) >= sx(b, w)) as u128, 1),
        Mux => (if sel { a } else { b }, w),
        Slice(lo, sw) => ((a >> lo) & m128(sw), sw),
        ConcatAB => ((a << w) | b, 2 * w),
        ConcatBCA if 2 * w + s.wc <= 128 => ((b << (s.wc + w)) | (c << w) | a, 2 * w + s.wc),
        RepA(n) if n * w <= 128 => ((0..n).fold(0, |acc, k| acc | a << (k * w)), n * w),
        RepS(n) if n <= 128 => (if sel { m128(n) } else { 0 }, n),
        Zext(t) if t <= 128 => (a, t),
        Sext(t) if t <= 128 => (sx(a, w) as u128 & m128(t), t),
        ShlC(k) => (shl(a, k), w),
        ShrC(k) => (shr(a, k), w),
        SraC(k) => (sra(a, k), w),
        ShlV => (shl(a, amount(&v.amt)), w),
        ShrV => (shr(a, amount(&v.amt)), w),
        SraV => (sra(a, amount(&v.amt)), w),
        ShlW => (shl(a, amount(&v.amtw)), w),
        ShrW => (shr(a, amount(&v.amtw)), w),
        SraW => (sra(a, amount(&v.amtw)), w),
        RedAnd => ((a == m128(w)) as u128, 1),
        RedOr => ((a != 0) as u128, 1),
        RedXor => ((a.count_ones() & 1) as u128, 1),
        Lz => {
            let lz = if a == 0 {
                w as u128
            } else {
                (a.leading_zeros() as usize - (128 - w)) as u128
            };
            (lz, bits_for(w))
        }
        _ => return None,
    };
    Some(r)
}

/// Runs `vectors` random vectors through one module of shape `s` on each engine (the
/// compiled one and the interpreter, each from the first cycle); returns checks done.
fn run_shape(rng: &mut impl Rng, s: Shape, vectors: usize) -> usize {
    let specs = specs(rng, s);
    let module = build(s, &specs);
    let vectors: Vec<Vector> = (0..vectors).map(|_| random_vector(rng, s)).collect();
    [Backend::Compiled, Backend::Interpreted]
        .into_iter()
        .map(|backend| {
            let sim = Simulator::with_backend(&module, backend).expect("compiles");
            check_engine(sim, s, &specs, &vectors)
        })
        .sum()
}

/// Checks every output of `sim` (a module of shape `s` with outputs `specs`) on every
/// vector against the models; returns checks done.
fn check_engine(mut sim: Simulator, s: Shape, specs: &[Spec], vectors: &[Vector]) -> usize {
    let engine = sim.backend().name();
    let outs: Vec<PortHandle> = (0..specs.len())
        .map(|k| sim.port_handle(&format!("y{k}")).expect("port"))
        .collect();
    let mut checks = 0;
    for (n, v) in vectors.iter().enumerate() {
        sim.set("a", &to_bits(&v.a)).unwrap();
        sim.set("b", &to_bits(&v.b)).unwrap();
        sim.set("c", &to_bits(&v.c)).unwrap();
        sim.set("s", &to_bits(&v.s)).unwrap();
        sim.set("amt", &to_bits(&v.amt)).unwrap();
        sim.set("amtw", &to_bits(&v.amtw)).unwrap();
        for (k, spec) in specs.iter().enumerate() {
            let got = from_bits(&sim.get_handle(outs[k]).unwrap());
            let want = model(*spec, s, v);
            let context = || {
                format!(
                    "{spec:?} on the {engine} engine, shape {s:?} vector {n}: a={} b={} c={} s={} amt={} amtw={}",
                    hex(&v.a),
                    hex(&v.b),
                    hex(&v.c),
                    v.s[0],
                    hex(&v.amt),
                    hex(&v.amtw)
                )
            };
            assert_eq!(got.len(), want.len(), "width of {}", context());
            assert!(
                got == want,
                "{}\n got {}\nwant {}",
                context(),
                hex(&got),
                hex(&want)
            );
            if let Some((value, width)) = model_u128(*spec, s, v) {
                assert_eq!(got.len(), width, "u128 width of {}", context());
                assert_eq!(to_u128_sat(&got), value, "u128 model: {}", context());
                checks += 1;
            }
            checks += 1;
        }
    }
    checks
}

#[test]
fn narrow_ops_match_u128_and_bit_models() {
    let mut rng = rng("narrow_ops");
    let mut checks = 0;
    let mut vectors = 0;
    for w in [1, 2, 3, 5, 7, 8, 13, 16, 31, 32, 33, 47, 63, 64] {
        let wc = rng.gen_range(1..=64);
        let shape = Shape {
            w,
            wc,
            wamt: bits_for(w) + 1,
        };
        checks += run_shape(&mut rng, shape, 250);
        vectors += 250;
    }
    println!("{vectors} vectors, {checks} checks");
    assert!(vectors >= 3000);
}

#[test]
fn mid_width_ops_match_bit_model() {
    let mut rng = rng("mid_ops");
    let mut vectors = 0;
    for w in [65, 100, 127, 128, 129, 191, 255, 256, 257] {
        let wc = if rng.gen() { w } else { rng.gen_range(1..=64) };
        let shape = Shape {
            w,
            wc,
            wamt: bits_for(w) + 1,
        };
        run_shape(&mut rng, shape, 150);
        vectors += 150;
    }
    println!("{vectors} vectors");
}

#[test]
fn wide_ops_match_bit_model() {
    let mut rng = rng("wide_ops");
    let mut vectors = 0;
    for (w, n) in [(512, 60), (600, 40), (1000, 20), (4096, 5)] {
        let shape = Shape {
            w,
            wc: w,
            wamt: bits_for(w) + 1,
        };
        run_shape(&mut rng, shape, n);
        vectors += n;
    }
    // A narrow-by-wide product and a wide amount on a narrow value.
    let shape = Shape {
        w: 4096,
        wc: 13,
        wamt: 3,
    };
    run_shape(&mut rng, shape, 5);
    println!("{} vectors", vectors + 5);
}
