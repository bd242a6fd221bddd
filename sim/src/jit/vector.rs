//! Short runs written inline as 128-bit vector code. A run of `n` identical
//! instances (see [`Mode::Run`]) of a bitwise, arithmetic, comparison or
//! bit-moving kind is, for `n` up to [`MAX_INLINE`], two instances per
//! instruction on `I64X2` values: each operand loaded as two consecutive words
//! (stride 1) or one word broadcast to both lanes (stride 0), the kind's
//! operation, and a store of the two destination words. An odd last instance is
//! an ordinary scalar record.
//!
//! Against a call of the run's loop (see [`RunKernel`](crate::vector::RunKernel))
//! this saves the call's set-up, the loop's own set-up and the registers the call
//! clobbers; for the runs of eight to a few dozen instances that wide datapaths
//! are made of (a lane per 32-bit element of a 256-bit bus), those are most of a
//! call's instructions. Like a call, the run wakes the readers of its destination
//! whenever it runs: comparing the destination's old words with the new ones
//! (a load, an XOR and an OR per two words) cost more on PANAMA than the
//! partitions it let sleep.
//!
//! The code reads its operands from storage and writes its destination there,
//! like the loop it replaces: a run still reads no value in hand (see
//! [`Item::reads_in_hand`](super::plan::Item::reads_in_hand)), so its operands
//! are always stored, and its destination is disjoint from them (checked when
//! planned). Each kind computes exactly what its scalar record computes (see
//! [`Kind`]); unsigned comparisons are signed ones of the operands with their
//! top bits flipped, which every x86-64 Cranelift target lowers.

use super::emit::Emitter;
use crate::instr::{Kind, Mode, Rec, Span, Step};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I32, I64, I64X2};
use cranelift_codegen::ir::{InstBuilder, MemFlags, Value};

/// Runs of at most this many instances are written inline; longer ones call
/// their loop, which handles four words per AVX2 instruction. On PANAMA (runs of
/// 8 and 24), inlining runs of up to 32 ran fewer instructions than up to 16 but
/// missed the instruction cache more often and ran no faster.
pub(super) const MAX_INLINE: u32 = 16;

/// Whether run step `s` is written inline.
pub(super) fn inlines(s: &Step) -> bool {
    matches!(s.mode, Mode::Run { .. })
        && s.n <= MAX_INLINE
        && matches!(
            s.kind,
            Kind::And
                | Kind::Or
                | Kind::Xor
                | Kind::Not
                | Kind::Add
                | Kind::Sub
                | Kind::Field
                | Kind::Slice2
                | Kind::Cat2
                | Kind::Cat3
                | Kind::Mux
                | Kind::RedOr
                | Kind::RedAnd
                | Kind::Eq
                | Kind::Ne
                | Kind::LtU
                | Kind::LeU
        )
}

/// Vector loads and stores: never trapping (every word was checked to lie in
/// storage when planned), and not assumed aligned to 16 bytes (a run may start
/// at any word).
fn flags() -> MemFlags {
    MemFlags::new().with_notrap()
}

/// The direction of a shift by a constant.
#[derive(Clone, Copy)]
enum Shift {
    Left,
    Right,
}

/// One operand of a run: the words of consecutive instances, or one word for all.
#[derive(Clone, Copy)]
enum Operand {
    /// Instance `j` reads word `off + j`.
    Many(u32),
    /// Every instance reads this value (both lanes).
    One(Value),
}

impl Emitter<'_, '_> {
    /// Run step `s` as inline vector code (see the module's documentation);
    /// [`inlines`] must hold for it.
    pub(super) fn run_inline(&mut self, s: &Step) {
        let Mode::Run { strides } = s.mode else {
            unreachable!("only runs are written inline")
        };
        let r = self.code_rec(s.start);
        let pairs = s.n / 2;
        let fields = [r.a, r.b, r.c];
        let offsets = s.kind.offsets();
        let mut operands = [Operand::Many(0); 3];
        for (i, operand) in operands.iter_mut().enumerate() {
            if !offsets[i] {
                continue;
            }
            let consecutive = strides >> i & 1 == 1;
            *operand = match (consecutive, s.kind) {
                (true, _) => Operand::Many(fields[i]),
                // Every instance slices the same two words: one value for all.
                (false, Kind::Slice2) => {
                    let v = self.slice2(&r);
                    Operand::One(self.b.ins().splat(I64X2, v))
                }
                (false, _) => {
                    let v = self.read(fields[i]);
                    Operand::One(self.b.ins().splat(I64X2, v))
                }
            };
        }
        let consts = Consts::new(self, s.kind, &r);
        // With every operand the same word for all, every pair is the same value.
        let same = (0..3).all(|i| !offsets[i] || matches!(operands[i], Operand::One(_)));
        let mut last = None;
        for p in 0..pairs {
            let j = p * 2;
            let v = match last {
                Some(v) if same => v,
                _ => self.pair(s.kind, &r, &operands, &consts, j),
            };
            last = Some(v);
            let (base, at) = self.address(r.d + j);
            self.b.ins().store(flags(), v, base, at);
        }
        self.forget(Span {
            off: r.d,
            words: pairs * 2,
        });
        self.wake_readers(r.d..r.d + pairs * 2);
        if s.n % 2 == 1 {
            let kind = s.kind;
            let rec = r.instance(kind, strides, s.n - 1);
            self.record(&super::plan::Inst { kind, rec });
        }
    }

    /// The two instances `j` and `j + 1` of a run of `kind` (template `r`).
    fn pair(&mut self, kind: Kind, r: &Rec, operands: &[Operand; 3], k: &Consts, j: u32) -> Value {
        let load = |e: &mut Self, i: usize| match operands[i] {
            Operand::Many(off) => {
                let (base, at) = e.address(off + j);
                e.b.ins().load(I64X2, flags(), base, at)
            }
            Operand::One(v) => v,
        };
        match kind {
            Kind::And | Kind::Or | Kind::Xor => {
                let (x, y) = (load(self, 0), load(self, 1));
                match kind {
                    Kind::And => self.b.ins().band(x, y),
                    Kind::Or => self.b.ins().bor(x, y),
                    _ => self.b.ins().bxor(x, y),
                }
            }
            Kind::Not => {
                let x = load(self, 0);
                self.b.ins().bxor(x, k.k.expect("a complement's mask"))
            }
            Kind::Add | Kind::Sub => {
                let (x, y) = (load(self, 0), load(self, 1));
                let v = if kind == Kind::Add {
                    self.b.ins().iadd(x, y)
                } else {
                    self.b.ins().isub(x, y)
                };
                self.and_opt(v, k.k)
            }
            Kind::Field => {
                let x = load(self, 0);
                let v = self.ushr_v(x, u64::from(r.b));
                let v = self.and_opt(v, k.k);
                let v = self.ishl_v(v, u64::from(r.c));
                self.or_opt(v, k.k2)
            }
            Kind::Slice2 => match operands[0] {
                Operand::One(v) => v,
                Operand::Many(off) => {
                    let (base, at) = self.address(off + j);
                    let lo = self.b.ins().load(I64X2, flags(), base, at);
                    let (base, at) = self.address(off + j + 1);
                    let hi = self.b.ins().load(I64X2, flags(), base, at);
                    let lo = self.ushr_v(lo, u64::from(r.b));
                    let hi = self.ishl_v(hi, u64::from(64 - r.b));
                    let v = self.b.ins().bor(lo, hi);
                    self.and_opt(v, k.k)
                }
            },
            Kind::Cat2 => {
                let (x, y) = (load(self, 0), load(self, 1));
                let x = self.ishl_v(x, u64::from(r.c));
                let v = self.b.ins().bor(x, y);
                self.or_opt(v, k.k)
            }
            Kind::Cat3 => {
                let (x, y, z) = (load(self, 0), load(self, 1), load(self, 2));
                let x = self.ishl_v(x, r.k2 & 63);
                let y = self.ishl_v(y, (r.k2 >> 8) & 63);
                let v = self.b.ins().bor(x, y);
                let v = self.b.ins().bor(v, z);
                self.or_opt(v, k.k)
            }
            Kind::Mux => {
                let (x, y, z) = (load(self, 0), load(self, 1), load(self, 2));
                let bit = self.b.ins().band(x, k.one());
                let select = self.b.ins().ineg(bit);
                self.b.ins().bitselect(select, y, z)
            }
            Kind::RedOr => {
                let x = load(self, 0);
                self.flags_of(
                    IntCC::NotEqual,
                    x,
                    k.zero.expect("an or-reduction's zero"),
                    k.one(),
                )
            }
            Kind::RedAnd => {
                let x = load(self, 0);
                let all = k.k.expect("an and-reduction's mask");
                self.flags_of(IntCC::Equal, x, all, k.one())
            }
            Kind::Eq | Kind::Ne => {
                let (x, y) = (load(self, 0), load(self, 1));
                let cc = if kind == Kind::Eq {
                    IntCC::Equal
                } else {
                    IntCC::NotEqual
                };
                self.flags_of(cc, x, y, k.one())
            }
            Kind::LtU | Kind::LeU => {
                let (x, y) = (load(self, 0), load(self, 1));
                let top = k.top.expect("an unsigned comparison's top bit");
                let (x, y) = (self.b.ins().bxor(x, top), self.b.ins().bxor(y, top));
                let cc = if kind == Kind::LtU {
                    IntCC::SignedLessThan
                } else {
                    IntCC::SignedLessThanOrEqual
                };
                self.flags_of(cc, x, y, k.one())
            }
            _ => unreachable!("{kind:?} is not written inline"),
        }
    }

    /// The comparison `x cc y` in each lane as 0 or 1.
    fn flags_of(&mut self, cc: IntCC, x: Value, y: Value, one: Value) -> Value {
        let all = self.b.ins().icmp(cc, x, y);
        self.b.ins().band(all, one)
    }

    /// `v >> s` (logical) in each lane, left out when `s` is 0.
    fn ushr_v(&mut self, v: Value, s: u64) -> Value {
        self.shift_v(v, s, Shift::Right)
    }

    /// `v << s` in each lane, left out when `s` is 0.
    fn ishl_v(&mut self, v: Value, s: u64) -> Value {
        self.shift_v(v, s, Shift::Left)
    }

    /// Each lane of `v` shifted by the constant `s` (mod 64), left out when 0.
    fn shift_v(&mut self, v: Value, s: u64, dir: Shift) -> Value {
        if s & 63 == 0 {
            return v;
        }
        let s = self.b.ins().iconst(I32, (s & 63) as i64);
        match dir {
            Shift::Left => self.b.ins().ishl(v, s),
            Shift::Right => self.b.ins().ushr(v, s),
        }
    }

    /// `v & k`, left out when there is no mask.
    fn and_opt(&mut self, v: Value, k: Option<Value>) -> Value {
        match k {
            Some(k) => self.b.ins().band(v, k),
            None => v,
        }
    }

    /// `v | k`, left out when there is nothing to set.
    fn or_opt(&mut self, v: Value, k: Option<Value>) -> Value {
        match k {
            Some(k) => self.b.ins().bor(v, k),
            None => v,
        }
    }
}

/// The constants a run's pairs share, broadcast once before its first pair.
struct Consts {
    /// Its record's `k` (a mask, or bits to set), when it has an effect.
    k: Option<Value>,
    /// Its record's `k2` (a field's bits to set), when nonzero.
    k2: Option<Value>,
    /// 1 in each lane (a comparison's result, a multiplexer's select bit).
    one: Option<Value>,
    /// 0 in each lane (or-reductions).
    zero: Option<Value>,
    /// The top bit in each lane (unsigned comparisons).
    top: Option<Value>,
}

impl Consts {
    /// 1 in each lane; kinds that produce flags or test a select bit have it.
    fn one(&self) -> Value {
        self.one.expect("a flag-producing kind's 1")
    }

    fn new(e: &mut Emitter, kind: Kind, r: &Rec) -> Consts {
        let mut splat = |k: u64| {
            let v = e.b.ins().iconst(I64, k as i64);
            e.b.ins().splat(I64X2, v)
        };
        let k = match kind {
            // A mask of all ones changes nothing.
            Kind::Add | Kind::Sub | Kind::Field | Kind::Slice2 if r.k == u64::MAX => None,
            // Bits to set: none to set changes nothing.
            Kind::Cat2 | Kind::Cat3 if r.k == 0 => None,
            Kind::Not
            | Kind::RedAnd
            | Kind::Add
            | Kind::Sub
            | Kind::Field
            | Kind::Slice2
            | Kind::Cat2
            | Kind::Cat3 => Some(splat(r.k)),
            _ => None,
        };
        let k2 = (kind == Kind::Field && r.k2 != 0).then(|| splat(r.k2));
        let top = matches!(kind, Kind::LtU | Kind::LeU).then(|| splat(1 << 63));
        let flags = matches!(
            kind,
            Kind::Mux | Kind::RedOr | Kind::RedAnd | Kind::Eq | Kind::Ne | Kind::LtU | Kind::LeU
        );
        Consts {
            k,
            k2,
            one: flags.then(|| splat(1)),
            zero: (kind == Kind::RedOr).then(|| splat(0)),
            top,
        }
    }
}
