//! Lowering of one computed net to an instruction: a single-word record of some
//! [`Kind`] when the result and every operand have at most 64 bits, a [`WideOp`]
//! otherwise. Constant parts of a concatenation are folded into the record's
//! constant.

use crate::instr::{Amount, Kind, Placed, Rec, Span, WideOp};
use crate::layout::shift_pads;
use crate::operands::all_operands;
use crate::simplify::{Graph, Node};
use crate::wide::last_mask;
use hdl::ir::{ArithOp, BitOp, CmpOp, NetId, Op, ReduceOp, ShiftAmount, ShiftOp};
use std::collections::HashMap;

/// Where every net lives, and the side tables instructions refer to.
pub(crate) struct Lowerer<'a> {
    /// The simplified netlist.
    pub graph: &'a Graph,
    /// Storage of every net (placed before its users are lowered).
    pub spans: &'a [Span],
    /// The nets placed with zero words around them (see `layout::shift_pads`).
    pub pads: &'a HashMap<u32, (u32, u32, u32)>,
    /// Parts of `CatN` records: `(offset, shift)`.
    pub parts: Vec<(u32, u32)>,
    /// Operations on values wider than 64 bits.
    pub wide: Vec<WideOp>,
}

impl Lowerer<'_> {
    fn width(&self, n: NetId) -> u32 {
        self.graph.widths[n.0 as usize]
    }

    fn span(&self, n: NetId) -> Span {
        self.spans[n.0 as usize]
    }

    /// Whether `src` lies in storage with the zero words a shift `op` into `dst`
    /// by a net needs around it (see `layout::shift_pads`).
    fn padded(&self, op: ShiftOp, dst: Span, src: Span) -> bool {
        let needed = shift_pads(op, dst.words, src.words);
        match (needed, self.pads.get(&src.off)) {
            (Some((below, above)), Some(&(words, has_below, has_above))) => {
                words == src.words && has_below >= below && has_above >= above
            }
            _ => false,
        }
    }

    fn off(&self, n: NetId) -> u32 {
        self.spans[n.0 as usize].off
    }

    fn wide_op(&mut self, op: WideOp) -> (Kind, Rec) {
        let rec = Rec {
            d: op.dst().off,
            a: self.wide.len() as u32,
            ..Rec::default()
        };
        self.wide.push(op);
        (Kind::Wide, rec)
    }

    /// The instruction computing net `n` (a [`Node::Op`] or [`Node::Copy`]).
    pub fn lower(&mut self, n: NetId) -> (Kind, Rec) {
        let w = self.width(n);
        let dst = self.span(n);
        match &self.graph.nodes[n.0 as usize] {
            Node::Op(op) => {
                let narrow = w <= 64 && all_operands(op, |o| self.width(o) <= 64);
                if narrow || matches!(op, Op::Slice { .. } if w <= 64) {
                    self.narrow(w, dst.off, op)
                } else {
                    self.wide(w, dst, op)
                }
            }
            Node::Copy(src) => {
                let src = *src;
                if w <= 64 {
                    (
                        Kind::Field,
                        Rec {
                            d: dst.off,
                            a: self.off(src),
                            k: u64::MAX,
                            ..Rec::default()
                        },
                    )
                } else {
                    let op = WideOp::Extend {
                        dst,
                        src: self.span(src),
                        src_width: self.width(src),
                        signed: false,
                        mask: last_mask(w),
                    };
                    self.wide_op(op)
                }
            }
            other => unreachable!("only operations and copies are lowered, not {other:?}"),
        }
    }

    fn narrow(&mut self, w: u32, d: u32, op: &Op) -> (Kind, Rec) {
        let mask = last_mask(w);
        let rec = |a: u32, b: u32, c: u32, k: u64| Rec {
            d,
            a,
            b,
            c,
            k,
            k2: 0,
        };
        match op {
            Op::Not(a) => (Kind::Not, rec(self.off(*a), 0, 0, mask)),
            Op::Bit(o, x, y) => {
                let kind = match o {
                    BitOp::And => Kind::And,
                    BitOp::Or => Kind::Or,
                    BitOp::Xor => Kind::Xor,
                };
                (kind, rec(self.off(*x), self.off(*y), 0, 0))
            }
            Op::Arith(o, x, y) => {
                let kind = match o {
                    ArithOp::Add => Kind::Add,
                    ArithOp::Sub => Kind::Sub,
                    ArithOp::Mul => Kind::Mul,
                };
                (kind, rec(self.off(*x), self.off(*y), 0, mask))
            }
            Op::Cmp(o, x, y) => {
                let ow = self.width(*x).max(self.width(*y));
                let kind = match o {
                    CmpOp::Eq => Kind::Eq,
                    CmpOp::Ne => Kind::Ne,
                    CmpOp::LtU => Kind::LtU,
                    CmpOp::LeU => Kind::LeU,
                    CmpOp::LtS => Kind::LtS,
                    CmpOp::LeS => Kind::LeS,
                };
                (kind, rec(self.off(*x), self.off(*y), 64 - ow, 0))
            }
            Op::Mux {
                sel,
                if_true,
                if_false,
            } => (
                Kind::Mux,
                rec(self.off(*sel), self.off(*if_true), self.off(*if_false), 0),
            ),
            Op::Slice { src, lo } => {
                let word = self.off(*src) + lo / 64;
                let shift = lo % 64;
                if shift + w <= 64 {
                    (Kind::Field, rec(word, shift, 0, mask))
                } else {
                    (Kind::Slice2, rec(word, shift, 0, mask))
                }
            }
            Op::Concat(parts) => self.concat(d, parts),
            Op::Replicate { src, count } => {
                let sw = self.width(*src);
                let pattern = (0..*count).fold(0u64, |acc, k| acc | 1u64 << (k * sw));
                (Kind::Replicate, rec(self.off(*src), 0, 0, pattern))
            }
            Op::Extend { src, signed } => {
                let sh = 64 - self.width(*src);
                if *signed {
                    (Kind::Sra, rec(self.off(*src), sh, sh, mask))
                } else {
                    (Kind::Field, rec(self.off(*src), 0, 0, u64::MAX))
                }
            }
            Op::Shift { op, src, amount } => {
                let a = self.off(*src);
                match amount {
                    ShiftAmount::Const(k) => {
                        let k = *k;
                        match op {
                            ShiftOp::Left if k >= w => (Kind::Field, rec(a, 0, 0, 0)),
                            ShiftOp::RightLogical if k >= w => (Kind::Field, rec(a, 0, 0, 0)),
                            ShiftOp::Left => (Kind::Field, rec(a, 0, k, mask >> k)),
                            ShiftOp::RightLogical => (Kind::Field, rec(a, k, 0, u64::MAX)),
                            ShiftOp::RightArithmetic => {
                                let sh = 64 - w;
                                (Kind::Sra, rec(a, sh + k.min(w - 1), sh, mask))
                            }
                        }
                    }
                    ShiftAmount::Net(amt) => {
                        let kind = match op {
                            ShiftOp::Left => Kind::ShlV,
                            ShiftOp::RightLogical => Kind::ShrV,
                            ShiftOp::RightArithmetic => Kind::SraV,
                        };
                        (kind, rec(a, self.off(*amt), w, mask))
                    }
                }
            }
            Op::Reduce(o, src) => {
                let a = self.off(*src);
                match o {
                    ReduceOp::And => (Kind::RedAnd, rec(a, 0, 0, last_mask(self.width(*src)))),
                    ReduceOp::Or => (Kind::RedOr, rec(a, 0, 0, 0)),
                    ReduceOp::Xor => (Kind::RedXor, rec(a, 0, 0, 0)),
                }
            }
            Op::LeadingZeros(src) => {
                let sw = self.width(*src);
                (Kind::Lz, rec(self.off(*src), 0, sw, mask))
            }
            Op::Const(_) => unreachable!("constants are placed in the initial image"),
        }
    }

    /// A narrow concatenation: constant parts go into `k`, the others are shifted in.
    fn concat(&mut self, d: u32, parts: &[NetId]) -> (Kind, Rec) {
        let mut k = 0u64;
        let mut placed: Vec<(u32, u32)> = Vec::with_capacity(parts.len());
        let mut pos = 0u32;
        for p in parts.iter().rev() {
            match self.graph.konst(*p) {
                Some(v) => k |= v.first().copied().unwrap_or(0) << pos,
                None => placed.push((self.off(*p), pos)),
            }
            pos += self.width(*p);
        }
        let rec = Rec {
            d,
            k,
            ..Rec::default()
        };
        match placed[..] {
            [] => (
                Kind::Field,
                Rec {
                    a: d,
                    k: 0,
                    k2: k,
                    ..rec
                },
            ),
            [(a, sh)] => (
                Kind::Field,
                Rec {
                    a,
                    c: sh,
                    k: u64::MAX,
                    k2: k,
                    ..rec
                },
            ),
            [(b, 0), (a, c)] => (Kind::Cat2, Rec { a, b, c, ..rec }),
            [(c, 0), (b, sb), (a, sa)] => (
                Kind::Cat3,
                Rec {
                    a,
                    b,
                    c,
                    k2: (sa | sb << 8) as u64,
                    ..rec
                },
            ),
            _ => {
                let start = self.parts.len() as u32;
                self.parts.extend_from_slice(&placed);
                (
                    Kind::CatN,
                    Rec {
                        a: start,
                        b: placed.len() as u32,
                        ..rec
                    },
                )
            }
        }
    }

    fn wide(&mut self, w: u32, dst: Span, op: &Op) -> (Kind, Rec) {
        let mask = last_mask(w);
        let op = match op {
            Op::Not(a) => WideOp::Not {
                dst,
                a: self.span(*a),
                mask,
            },
            Op::Bit(o, a, b) => WideOp::Bit {
                op: *o,
                dst,
                a: self.span(*a),
                b: self.span(*b),
            },
            Op::Arith(o, a, b) => WideOp::Arith {
                op: *o,
                dst,
                a: self.span(*a),
                b: self.span(*b),
                mask,
            },
            Op::Cmp(o, a, b) => WideOp::Cmp {
                op: *o,
                dst: dst.off,
                a: self.span(*a),
                b: self.span(*b),
                width: self.width(*a).max(self.width(*b)),
            },
            Op::Mux {
                sel,
                if_true,
                if_false,
            } => WideOp::Mux {
                dst,
                sel: self.off(*sel),
                t: self.span(*if_true),
                f: self.span(*if_false),
            },
            Op::Slice { src, lo } => WideOp::Slice {
                dst,
                src: self.span(*src),
                lo: *lo,
                mask,
            },
            Op::Concat(parts) => {
                let mut pos = 0u32;
                let mut placed = Vec::with_capacity(parts.len());
                for p in parts.iter().rev() {
                    let width = self.width(*p);
                    placed.push(Placed {
                        span: self.span(*p),
                        pos,
                        width,
                    });
                    pos = pos.saturating_add(width);
                }
                WideOp::Concat { dst, parts: placed }
            }
            Op::Replicate { src, count } => WideOp::Replicate {
                dst,
                src: self.span(*src),
                src_width: self.width(*src),
                count: *count,
                mask,
            },
            Op::Extend { src, signed } => WideOp::Extend {
                dst,
                src: self.span(*src),
                src_width: self.width(*src),
                signed: *signed,
                mask,
            },
            Op::Shift { op, src, amount } => {
                let src = self.span(*src);
                WideOp::Shift {
                    op: *op,
                    dst,
                    src,
                    width: w,
                    amount: match amount {
                        ShiftAmount::Const(k) => Amount::Const(*k as u64),
                        ShiftAmount::Net(n) => Amount::Net(self.span(*n)),
                    },
                    mask,
                    padded: matches!(amount, ShiftAmount::Net(_)) && self.padded(*op, dst, src),
                }
            }
            Op::Reduce(o, a) => WideOp::Reduce {
                op: *o,
                dst: dst.off,
                a: self.span(*a),
                width: self.width(*a),
            },
            Op::LeadingZeros(a) => WideOp::LeadingZeros {
                dst,
                a: self.span(*a),
                width: self.width(*a),
                mask,
            },
            Op::Const(_) => unreachable!("constants are placed in the initial image"),
        };
        self.wide_op(op)
    }
}
