//! Which values Verilator's lint may fold to a constant. An unsigned order is written
//! plainly (`a < b`) only when neither side can become the literal that decides it
//! (`x < 0`, `x <= ~0`: UNSIGNED/CMPCONST, which also stop a model's build), a memory
//! read's guard likewise (`addr < depth`), and a wide shift amount is clamped where it
//! could fold past 2^32 (which Verilator refuses).
//!
//! Verilator folds through wires and expressions alike: literals, a literal that
//! absorbs its operation (`x & 0`, `x * 0`, `x << 8` of 8 bits), operands that are the
//! same tree (`x ^ x`, `x - x`), selects of a concatenation's or an extension's
//! constant bits, a mux with a literal select or equal arms, and bitwise operations
//! over concatenations merged part by part. It does not fold registers, inputs,
//! memory reads or instance outputs: those are the leaves here, each bit free.
//!
//! The classes are conservative: a value is taken to vary only when the operations it
//! is made of cannot produce a constant from a varying operand.
//! - Selects, wiring, complements and `xor` with a literal keep their operands' bits;
//!   a mask keeps the bits it lets through.
//! - The low `w` bits of a sum or difference vary when either operand's low `w` bits
//!   do; of a product, when both operands' are free, or when one is a literal `k·2^t`
//!   (`k` odd) and the other's low `w − t` bits vary.
//! - A mux varies with its arms, or with its select between distinct arms.
//! - An `and`, `or` or `xor` of two values varies when both are free (or both are
//!   single varying bits) and neither is the other or its complement; so does a
//!   comparison of two free values; a comparison with a literal, when the other side
//!   is free and the literal is not the bound that decides it.
//! - A reduction or leading-zero count varies only of a leaf.
//!
//! Anything else may fold. `random_netlists_pass_verilator_lint` holds the model to
//! Verilator's own lint over random designs.

use hdl::ir::{ArithOp, BitOp, CmpOp, Driver, NetId, Op, ShiftAmount, ShiftOp};
use hdl::{Bits, Module};

/// How many drivers deep some of a value's bits (a select, a part of a concatenation)
/// are followed before they are taken to fold. A whole value's class is worked out
/// once, from its operands' classes, however deep it lies.
const SELECT_DEPTH: u32 = 12;

/// How far two trees are compared before they are taken to be the same (which only
/// makes a value [`Fold::Foldable`], the safe side).
const SAME_TREE_DEPTH: u32 = 8;

/// How much of a value (or of some of its bits) Verilator may fold to constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fold {
    /// Every bit is a bit of a leaf or its complement: no bit can fold.
    Free,
    /// The value as a whole cannot fold to a constant, though some of its bits may.
    Varies,
    /// It may fold to a constant (or is one).
    Foldable,
}

impl Fold {
    /// The class of bits taken side by side: free if every part is, varying if some
    /// part cannot fold, else foldable.
    fn join(parts: impl IntoIterator<Item = Fold>) -> Fold {
        let mut all_free = true;
        let mut any_varies = false;
        for p in parts {
            all_free &= p == Fold::Free;
            any_varies |= p != Fold::Foldable;
        }
        match (all_free && any_varies, any_varies) {
            (true, _) => Fold::Free,
            (false, true) => Fold::Varies,
            (false, false) => Fold::Foldable,
        }
    }

    /// True if the value cannot fold to a constant.
    pub(crate) fn varies(self) -> bool {
        self != Fold::Foldable
    }
}

/// The fold classes of one module's nets.
pub(crate) struct Folds<'a> {
    m: &'a Module,
    /// The class of each net's whole value, by net index.
    whole: Vec<Fold>,
}

impl<'a> Folds<'a> {
    /// The analysis of module `m`, whose nets `order` lists in dataflow order
    /// (`comb_order`): each net's class comes from its operands' classes, worked out
    /// before it.
    pub(crate) fn new(m: &'a Module, order: &[NetId]) -> Self {
        let mut folds = Folds {
            m,
            whole: vec![Fold::Foldable; m.nets.len()],
        };
        for &net in order {
            let class = folds.driven(net, 0, m.net(net).width, SELECT_DEPTH);
            folds.whole[net.0 as usize] = class;
        }
        folds
    }

    /// The class of `net`'s whole value.
    pub(crate) fn value(&self, net: NetId) -> Fold {
        self.whole[net.0 as usize]
    }

    /// True if `a` and `b` may be the same tree to Verilator (see `same_tree`).
    pub(crate) fn may_be_same(&self, a: NetId, b: NetId) -> bool {
        self.same_tree(a, b, SAME_TREE_DEPTH)
    }

    /// The class of bits `lo .. lo + w` of `net`: its whole value's, or, for some of
    /// its bits, what its driver makes of them (followed `depth` drivers deep at most).
    fn bits(&self, net: NetId, lo: u32, w: u32, depth: u32) -> Fold {
        if lo == 0 && w == self.m.net(net).width {
            self.value(net)
        } else if depth == 0 {
            Fold::Foldable
        } else {
            self.driven(net, lo, w, depth - 1)
        }
    }

    /// The class of bits `lo .. lo + w` of `net` from its driver.
    fn driven(&self, net: NetId, lo: u32, w: u32, depth: u32) -> Fold {
        let m = self.m;
        let width = m.net(net).width;
        let op = match &m.net(net).driver {
            Driver::Reg(_)
            | Driver::Input(_)
            | Driver::MemRead { .. }
            | Driver::InstanceOutput { .. } => return Fold::Free,
            Driver::Undriven => return Fold::Foldable,
            Driver::Alias(src) => return self.bits(*src, lo, w, depth),
            Driver::Op(op) => op,
        };
        let bits = |net: NetId, lo: u32, w: u32| self.bits(net, lo, w, depth);
        match op {
            Op::Const(_) => Fold::Foldable,
            Op::Not(x) => bits(*x, lo, w),
            Op::Bit(BitOp::Xor, a, b) if self.m.literal(*b).is_some() => bits(*a, lo, w),
            Op::Bit(BitOp::Xor, a, b) if self.m.literal(*a).is_some() => bits(*b, lo, w),
            Op::Slice { src, lo: from } => bits(*src, from + lo, w),
            Op::Concat(parts) => {
                let mut at = width;
                let mut classes = Vec::new();
                for &p in parts {
                    let pw = m.net(p).width;
                    at -= pw;
                    let (a, b) = (lo.max(at), (lo + w).min(at + pw));
                    if a < b {
                        classes.push(bits(p, a - at, b - a));
                    }
                }
                Fold::join(classes)
            }
            Op::Extend { src, signed } => {
                let ws = m.net(*src).width;
                let mut classes = Vec::new();
                if lo < ws {
                    classes.push(bits(*src, lo, (lo + w).min(ws) - lo));
                }
                if lo + w > ws {
                    classes.push(if *signed {
                        bits(*src, ws - 1, 1)
                    } else {
                        Fold::Foldable
                    });
                }
                Fold::join(classes)
            }
            Op::Replicate { src, .. } => {
                let ws = m.net(*src).width;
                let first = lo % ws;
                if w >= ws {
                    self.value(*src)
                } else if first + w <= ws {
                    bits(*src, first, w)
                } else {
                    Fold::join([bits(*src, first, ws - first), bits(*src, 0, first + w - ws)])
                }
            }
            Op::Shift {
                op,
                src,
                amount: ShiftAmount::Const(k),
            } => self.shifted_bits(*op, *src, *k, lo, w, depth),
            Op::Bit(bit, a, b) => self.bitwise(*bit, *a, *b, lo, w, depth),
            Op::Mux {
                sel,
                if_true,
                if_false,
            } => self.mux(*sel, *if_true, *if_false, lo, w, depth),
            Op::Arith(arith, a, b) if lo == 0 => self.arithmetic(*arith, *a, *b, w, depth),
            _ if lo == 0 && w == width => self.operation(op),
            _ => Fold::Foldable,
        }
    }

    /// Bits `lo .. lo + w` of `src` shifted by the constant `k` (the result as wide as `src`):
    /// the bits shifted in are constants (or, arithmetically, copies of the sign bit).
    fn shifted_bits(&self, op: ShiftOp, src: NetId, k: u32, lo: u32, w: u32, depth: u32) -> Fold {
        let width = self.m.net(src).width;
        let (hi, mut classes) = (lo + w, Vec::new());
        match op {
            ShiftOp::Left => {
                if lo < k.min(width) {
                    classes.push(Fold::Foldable);
                }
                if hi > k {
                    let from = lo.max(k);
                    classes.push(self.bits(src, from - k, hi - from, depth));
                }
            }
            ShiftOp::RightLogical | ShiftOp::RightArithmetic => {
                let kept = width.saturating_sub(k);
                if lo < kept {
                    classes.push(self.bits(src, lo + k, hi.min(kept) - lo, depth));
                }
                if hi > kept {
                    classes.push(if op == ShiftOp::RightArithmetic {
                        self.bits(src, width - 1, 1, depth)
                    } else {
                        Fold::Foldable
                    });
                }
            }
        }
        Fold::join(classes)
    }

    /// The class of an operation's whole value, for the operations whose result bits
    /// each depend on many operand bits.
    fn operation(&self, op: &Op) -> Fold {
        match op {
            Op::Cmp(cmp, a, b) => self.comparison(*cmp, *a, *b),
            Op::Shift {
                src,
                amount: ShiftAmount::Net(n),
                ..
            } => {
                let free = self.value(*src) == Fold::Free && !self.same_tree(*src, *n, 1);
                varies_if(free && self.value(*n).varies())
            }
            Op::Reduce(_, x) | Op::LeadingZeros(x) => varies_if(self.leaf(*x)),
            _ => Fold::Foldable,
        }
    }

    /// Bits `lo .. lo + w` of `a op b` for a bitwise `op` (an `xor` with a literal is
    /// its other operand's bits, flipped). With a literal, an `and` with 0 or an `or`
    /// with all ones is a constant; otherwise the bits the literal lets through vary
    /// when the other operand's bits are free. Two operands that are not literals vary
    /// together when neither is the other (or its complement) and both are free, or
    /// both are single varying bits (wider operands Verilator may merge part by part,
    /// as `{x, 4'h0} & {4'h0, y}`, whose parts are constants).
    fn bitwise(&self, op: BitOp, a: NetId, b: NetId, lo: u32, w: u32, depth: u32) -> Fold {
        let (ka, kb) = (self.m.literal(a), self.m.literal(b));
        let (k, x) = match (ka, kb) {
            (Some(_), Some(_)) => return Fold::Foldable,
            (Some(k), None) => (k, b),
            (None, Some(k)) => (k, a),
            (None, None) => {
                let unrelated = !self.same_tree(a, b, SAME_TREE_DEPTH) && !self.complements(a, b);
                let (fa, fb) = (self.bits(a, lo, w, depth), self.bits(b, lo, w, depth));
                let free = fa == Fold::Free && fb == Fold::Free;
                let single_bits = w == 1 && fa.varies() && fb.varies();
                return varies_if(unrelated && (free || single_bits));
            }
        };
        let absorbs = match op {
            BitOp::And => (lo..lo + w).all(|i| !k.bit(i)),
            BitOp::Or => (lo..lo + w).all(|i| k.bit(i)),
            BitOp::Xor => false,
        };
        match self.bits(x, lo, w, depth) {
            _ if absorbs => Fold::Foldable,
            f if op == BitOp::Xor => f,
            Fold::Free => Fold::Varies,
            _ => Fold::Foldable,
        }
    }

    /// The low `w` bits of `a + b`, `a - b` or `a * b` (operands zero-extended to the
    /// result's width), which depend only on the operands' low `w` bits: a sum or
    /// difference varies when one operand's low bits do (a constant added to a varying
    /// value varies); a product when both operands' low bits are free, or one is a
    /// literal `k·2^t` with `k` odd and the other's low `w − t` bits vary (an odd factor
    /// maps distinct values to distinct products). The same tree on both sides may
    /// fold (`x - x`), and so may a value and its complement (`x + ~x` is all ones).
    fn arithmetic(&self, op: ArithOp, a: NetId, b: NetId, w: u32, depth: u32) -> Fold {
        if self.same_tree(a, b, SAME_TREE_DEPTH) || self.complements(a, b) {
            return Fold::Foldable;
        }
        let low = |x: NetId, n: u32| match n.min(self.m.net(x).width) {
            0 => Fold::Foldable,
            n => self.bits(x, 0, n, depth),
        };
        let scaled = |k: &Bits, x: NetId| {
            let t = (0..w.min(k.width())).find(|&i| k.bit(i));
            t.is_some_and(|t| low(x, w - t).varies())
        };
        varies_if(match (op, self.m.literal(a), self.m.literal(b)) {
            (_, Some(_), Some(_)) => false,
            (ArithOp::Mul, Some(k), None) => scaled(k, b),
            (ArithOp::Mul, None, Some(k)) => scaled(k, a),
            (ArithOp::Mul, None, None) => low(a, w) == Fold::Free && low(b, w) == Fold::Free,
            _ => low(a, w).varies() || low(b, w).varies(),
        })
    }

    /// `a op b` for a comparison: it varies when its sides are free and neither is the
    /// other (or its complement), or when one side is free and the other a literal
    /// that does not decide it (for an unsigned order, not the bound that makes it
    /// constant: `x < 0`, `x <= ~0`, `~0 < x`, `0 <= x`). Signed orders vary only
    /// between two free sides.
    fn comparison(&self, op: CmpOp, a: NetId, b: NetId) -> Fold {
        if self.same_tree(a, b, SAME_TREE_DEPTH) || self.complements(a, b) {
            return Fold::Foldable;
        }
        let free = |n: NetId| self.value(n) == Fold::Free;
        varies_if(match (op, self.m.literal(a), self.m.literal(b)) {
            (_, None, None) => free(a) && free(b),
            (CmpOp::Eq | CmpOp::Ne, Some(_), None) => free(b),
            (CmpOp::Eq | CmpOp::Ne, None, Some(_)) => free(a),
            (CmpOp::LtU, Some(k), None) => !k.is_ones() && free(b),
            (CmpOp::LtU, None, Some(k)) => !k.is_zero() && free(a),
            (CmpOp::LeU, Some(k), None) => !k.is_zero() && free(b),
            (CmpOp::LeU, None, Some(k)) => !k.is_ones() && free(a),
            _ => false,
        })
    }

    /// Bits `lo .. lo + w` of `sel ? t : f`: they vary when the arms' bits do, or when
    /// the select varies and the arms' bits are not the same (and neither arm is the
    /// select or its complement, which Verilator turns into logic with the select).
    fn mux(&self, sel: NetId, t: NetId, f: NetId, lo: u32, w: u32, depth: u32) -> Fold {
        if self.m.literal(sel).is_some() {
            return Fold::Foldable;
        }
        if self.same_tree(t, f, SAME_TREE_DEPTH) {
            return varies_if(self.bits(t, lo, w, depth).varies());
        }
        let tied_to_sel = [t, f]
            .into_iter()
            .any(|arm| self.same_tree(arm, sel, SAME_TREE_DEPTH) || self.complements(arm, sel));
        if tied_to_sel {
            return Fold::Foldable;
        }
        let (vt, vf) = (
            self.bits(t, lo, w, depth).varies(),
            self.bits(f, lo, w, depth).varies(),
        );
        if vt && vf {
            return Fold::Varies;
        }
        let distinct_literals = match (self.m.literal(t), self.m.literal(f)) {
            (Some(a), Some(b)) => (lo..lo + w).any(|i| a.bit(i) != b.bit(i)),
            _ => false,
        };
        varies_if(self.value(sel).varies() && (vt || vf || distinct_literals))
    }

    /// True if `net` is a leaf or a select of one: a value whose bits are all free and
    /// distinct.
    fn leaf(&self, mut net: NetId) -> bool {
        loop {
            match &self.m.net(net).driver {
                Driver::Reg(_)
                | Driver::Input(_)
                | Driver::MemRead { .. }
                | Driver::InstanceOutput { .. } => return true,
                Driver::Alias(src) | Driver::Op(Op::Slice { src, .. }) => net = *src,
                _ => return false,
            }
        }
    }

    /// True if `a` and `b` may be the same tree to Verilator: the same net, equal
    /// literals, or the same operation on the same trees. Past `depth` levels they are
    /// taken to be the same.
    fn same_tree(&self, a: NetId, b: NetId, depth: u32) -> bool {
        let (a, b) = (self.m.source(a), self.m.source(b));
        if a == b {
            return true;
        }
        if self.m.net(a).width != self.m.net(b).width {
            return false;
        }
        let (Driver::Op(x), Driver::Op(y)) = (&self.m.net(a).driver, &self.m.net(b).driver) else {
            return false;
        };
        if let (Op::Const(j), Op::Const(k)) = (x, y) {
            return j == k;
        }
        if std::mem::discriminant(x) != std::mem::discriminant(y) || !same_shape(x, y) {
            return false;
        }
        if depth == 0 {
            return true;
        }
        let (xs, ys) = (x.operands(), y.operands());
        xs.len() == ys.len()
            && xs
                .iter()
                .zip(&ys)
                .all(|(p, q)| self.same_tree(*p, *q, depth - 1))
    }

    /// True if `a` is the complement of `b`: `~b`, or `b` is `~a`, or two literals
    /// whose bits all differ.
    fn complements(&self, a: NetId, b: NetId) -> bool {
        let not_of = |n: NetId| match &self.m.net(self.m.source(n)).driver {
            Driver::Op(Op::Not(x)) => Some(*x),
            _ => None,
        };
        if not_of(a).is_some_and(|x| self.same_tree(x, b, SAME_TREE_DEPTH))
            || not_of(b).is_some_and(|x| self.same_tree(x, a, SAME_TREE_DEPTH))
        {
            return true;
        }
        match (self.m.literal(a), self.m.literal(b)) {
            (Some(j), Some(k)) => {
                j.width() == k.width() && (0..j.width()).all(|i| j.bit(i) != k.bit(i))
            }
            _ => false,
        }
    }
}

/// [`Fold::Varies`] if `cond`, else [`Fold::Foldable`].
fn varies_if(cond: bool) -> Fold {
    if cond {
        Fold::Varies
    } else {
        Fold::Foldable
    }
}

/// True if two operations of the same kind take the same parameters (everything but
/// their operands): the same operator, select position, copy count, extension or shift.
fn same_shape(x: &Op, y: &Op) -> bool {
    match (x, y) {
        (Op::Bit(p, ..), Op::Bit(q, ..)) => p == q,
        (Op::Arith(p, ..), Op::Arith(q, ..)) => p == q,
        (Op::Cmp(p, ..), Op::Cmp(q, ..)) => p == q,
        (Op::Reduce(p, _), Op::Reduce(q, _)) => p == q,
        (Op::Slice { lo: p, .. }, Op::Slice { lo: q, .. }) => p == q,
        (Op::Replicate { count: p, .. }, Op::Replicate { count: q, .. }) => p == q,
        (Op::Extend { signed: p, .. }, Op::Extend { signed: q, .. }) => p == q,
        (
            Op::Shift {
                op: p, amount: a, ..
            },
            Op::Shift {
                op: q, amount: b, ..
            },
        ) => {
            p == q
                && match (a, b) {
                    (ShiftAmount::Const(i), ShiftAmount::Const(j)) => i == j,
                    (ShiftAmount::Net(_), ShiftAmount::Net(_)) => true,
                    _ => false,
                }
        }
        _ => true,
    }
}
