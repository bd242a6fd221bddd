//! The rewrite rules of the simplifier: for one operation whose operands are
//! already simplified, an equivalent constant, shared net or simpler operation.
//! Every rule keeps the value bit-exact (all widths as in the IR: operands
//! zero-extended where the IR says so, results truncated to the net's width).

use crate::fold;
use crate::operands::{all_operands, map_operands};
use crate::simplify::Node;
use crate::wide::{last_mask, words};
use hdl::ir::{ArithOp, BitOp, CmpOp, NetId, Op, ShiftAmount, ShiftOp};
use std::borrow::Cow;

/// The result of rewriting one operation.
enum Step {
    /// Final.
    Done(Node),
    /// A simpler operation, to be rewritten again.
    Again(Op),
}

/// The rules, over the nodes simplified so far.
pub(crate) struct Simplifier<'a> {
    /// Width of every net.
    pub widths: &'a [u32],
    /// Node of every net visited so far (`Dead` for the others).
    pub nodes: Vec<Node>,
}

impl Simplifier<'_> {
    fn width(&self, n: NetId) -> u32 {
        self.widths[n.0 as usize]
    }

    /// True if net `n` is computed by `op` at width `w`.
    pub fn computes(&self, n: NetId, op: &Op, w: u32) -> bool {
        matches!(&self.nodes[n.0 as usize], Node::Op(o) if o == op) && self.width(n) == w
    }

    /// The net holding the same value in the same words as `n` (following shares of
    /// equal width and copies).
    pub fn same(&self, mut n: NetId) -> NetId {
        for _ in 0..self.nodes.len() {
            match &self.nodes[n.0 as usize] {
                Node::Share { src, word: 0 } | Node::Copy(src)
                    if self.width(*src) == self.width(n) =>
                {
                    n = *src
                }
                _ => break,
            }
        }
        n
    }

    /// The constant value of `n`, if it has one.
    pub fn konst(&self, n: NetId) -> Option<&[u64]> {
        let mut n = n;
        for _ in 0..self.nodes.len() {
            match &self.nodes[n.0 as usize] {
                Node::Const(v) => return Some(v),
                Node::Share { src, word: 0 } | Node::Copy(src)
                    if words(self.width(*src)) == words(self.width(n)) =>
                {
                    n = *src
                }
                _ => return None,
            }
        }
        None
    }

    fn is_zero(&self, n: NetId) -> bool {
        self.konst(n).is_some_and(|v| v.iter().all(|w| *w == 0))
    }

    fn is_ones(&self, n: NetId) -> bool {
        let w = self.width(n);
        self.konst(n).is_some_and(|v| {
            let last = v.len().saturating_sub(1);
            v.iter()
                .enumerate()
                .all(|(i, x)| *x == if i == last { last_mask(w) } else { u64::MAX })
        })
    }

    /// The operation computing `n`'s value, seeing shared words as the slice or
    /// extension they are.
    fn op_of(&self, n: NetId) -> Option<Cow<'_, Op>> {
        match &self.nodes[n.0 as usize] {
            Node::Op(op) => Some(Cow::Borrowed(op)),
            Node::Share { src, word } => {
                let (w, sw) = (self.width(n), self.width(*src));
                if *word == 0 && w > sw {
                    Some(Cow::Owned(Op::Extend {
                        src: *src,
                        signed: false,
                    }))
                } else if *word * 64 + w <= sw {
                    Some(Cow::Owned(Op::Slice {
                        src: *src,
                        lo: *word * 64,
                    }))
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    /// `n`'s value as a `w`-bit net: shared if the words match, else an extension.
    fn zext(&self, n: NetId, w: u32) -> Step {
        if words(self.width(n)) == words(w) {
            Step::Done(Node::Share { src: n, word: 0 })
        } else {
            Step::Again(Op::Extend {
                src: n,
                signed: false,
            })
        }
    }

    /// One rewrite of `op` driving a `w`-bit net.
    fn step(&self, w: u32, op: Op) -> Step {
        let share = |n: NetId| Step::Done(Node::Share { src: n, word: 0 });
        let zero = || Step::Done(Node::Const(vec![0; words(w)]));
        if !matches!(op, Op::Const(_)) && all_operands(&op, |o| self.konst(o).is_some()) {
            let v = fold::eval(&op, w, |n| self.width(n), |n| self.konst(n).unwrap_or(&[]));
            return Step::Done(Node::Const(v));
        }
        match op {
            Op::Const(b) => Step::Done(Node::Const(fold::eval(&Op::Const(b), w, |_| 0, |_| &[]))),
            Op::Not(a) => match self.op_of(a).as_deref() {
                Some(&Op::Not(b)) if self.width(b) == w => share(self.same(b)),
                _ => Step::Done(Node::Op(Op::Not(a))),
            },
            Op::Bit(o, a, b) => match o {
                _ if a == b && o != BitOp::Xor => share(a),
                BitOp::Xor if a == b => zero(),
                BitOp::And if self.is_zero(a) || self.is_zero(b) => zero(),
                BitOp::And if self.is_ones(a) => share(b),
                BitOp::And if self.is_ones(b) => share(a),
                BitOp::Or | BitOp::Xor if self.is_zero(a) => share(b),
                BitOp::Or | BitOp::Xor if self.is_zero(b) => share(a),
                BitOp::Or if self.is_ones(a) => share(a),
                BitOp::Or if self.is_ones(b) => share(b),
                BitOp::Xor if self.is_ones(a) => Step::Again(Op::Not(b)),
                BitOp::Xor if self.is_ones(b) => Step::Again(Op::Not(a)),
                _ => Step::Done(Node::Op(Op::Bit(o, a, b))),
            },
            Op::Arith(o, a, b) => match o {
                ArithOp::Add if self.is_zero(b) => self.zext(a, w),
                ArithOp::Add if self.is_zero(a) => self.zext(b, w),
                ArithOp::Sub if self.is_zero(b) => self.zext(a, w),
                ArithOp::Mul if self.is_zero(a) || self.is_zero(b) => zero(),
                _ => Step::Done(Node::Op(Op::Arith(o, a, b))),
            },
            Op::Cmp(o, a, b) if a == b => {
                let v = matches!(o, CmpOp::Eq | CmpOp::LeU | CmpOp::LeS) as u64;
                Step::Done(Node::Const(vec![v]))
            }
            Op::Mux {
                sel,
                if_true,
                if_false,
            } => {
                if let Some(s) = self.konst(sel) {
                    share(if s[0] & 1 == 1 { if_true } else { if_false })
                } else if if_true == if_false {
                    share(if_true)
                } else if w == 1 && self.is_ones(if_true) && self.is_zero(if_false) {
                    share(sel)
                } else if w == 1 && self.is_zero(if_true) && self.is_ones(if_false) {
                    Step::Again(Op::Not(sel))
                } else if let Some(&Op::Not(s)) = self.op_of(sel).as_deref() {
                    // The select's complement: the operands swapped instead (the
                    // complement then often has no other reader and is dropped).
                    Step::Again(Op::Mux {
                        sel: s,
                        if_true: if_false,
                        if_false: if_true,
                    })
                } else {
                    Step::Done(Node::Op(Op::Mux {
                        sel,
                        if_true,
                        if_false,
                    }))
                }
            }
            Op::Slice { src, lo } => self.slice(w, src, lo),
            Op::Concat(parts) => self.concat(w, parts),
            Op::Extend { src, signed } => {
                let sw = self.width(src);
                if sw == w || (!signed && words(sw) == words(w)) {
                    share(src)
                } else {
                    match self.op_of(src).as_deref() {
                        Some(&Op::Extend {
                            src: inner,
                            signed: false,
                        }) if !signed => Step::Again(Op::Extend {
                            src: inner,
                            signed: false,
                        }),
                        _ => Step::Done(Node::Op(Op::Extend { src, signed })),
                    }
                }
            }
            Op::Replicate { src, count: 1 } => share(src),
            Op::Shift { op, src, amount } => self.shift(w, op, src, amount),
            Op::Reduce(_, a) if self.width(a) == 1 => share(a),
            op => Step::Done(Node::Op(op)),
        }
    }

    fn slice(&self, w: u32, src: NetId, lo: u32) -> Step {
        let sw = self.width(src);
        if lo.is_multiple_of(64) && (w.is_multiple_of(64) || lo + w == sw) {
            return Step::Done(Node::Share { src, word: lo / 64 });
        }
        match self.op_of(src).as_deref() {
            // Not through a slice of a wide bus: a lane extracted once and then
            // taken apart stays one extraction plus word-aligned work per lane.
            Some(&Op::Slice {
                src: inner,
                lo: lo2,
            }) if self.width(inner) <= 64 => Step::Again(Op::Slice {
                src: inner,
                lo: lo + lo2,
            }),
            Some(&Op::Extend { src: inner, signed }) => {
                let iw = self.width(inner);
                if lo + w <= iw {
                    Step::Again(Op::Slice { src: inner, lo })
                } else if !signed && lo >= iw {
                    Step::Done(Node::Const(vec![0; words(w)]))
                } else {
                    Step::Done(Node::Op(Op::Slice { src, lo }))
                }
            }
            Some(Op::Concat(parts)) => {
                let mut pos = 0;
                for p in parts.iter().rev() {
                    let pw = self.width(*p);
                    if lo >= pos && lo + w <= pos + pw {
                        return Step::Again(Op::Slice {
                            src: *p,
                            lo: lo - pos,
                        });
                    }
                    pos += pw;
                }
                Step::Done(Node::Op(Op::Slice { src, lo }))
            }
            _ => Step::Done(Node::Op(Op::Slice { src, lo })),
        }
    }

    fn concat(&self, w: u32, parts: Vec<NetId>) -> Step {
        if parts.len() == 1 {
            return Step::Done(Node::Share {
                src: parts[0],
                word: 0,
            });
        }
        // Inline nested concatenations.
        if parts
            .iter()
            .any(|p| matches!(self.op_of(*p).as_deref(), Some(Op::Concat(_))))
        {
            let mut flat = Vec::with_capacity(parts.len() * 2);
            for p in parts {
                match self.op_of(p).as_deref() {
                    Some(Op::Concat(inner)) => flat.extend(inner),
                    _ => flat.push(p),
                }
            }
            return Step::Again(Op::Concat(flat));
        }
        let (low, high) = parts.split_last().expect("two or more parts");
        if high.iter().all(|p| self.is_zero(*p)) {
            return self.zext(*low, w);
        }
        Step::Done(Node::Op(Op::Concat(parts)))
    }

    fn shift(&self, w: u32, op: ShiftOp, src: NetId, amount: ShiftAmount) -> Step {
        let k = match amount {
            ShiftAmount::Const(k) => k as u64,
            ShiftAmount::Net(a) => match self.konst(a) {
                Some(v) => {
                    if v.iter().skip(1).any(|x| *x != 0) {
                        u64::MAX
                    } else {
                        v[0]
                    }
                }
                None => return Step::Done(Node::Op(Op::Shift { op, src, amount })),
            },
        };
        if k == 0 {
            return Step::Done(Node::Share { src, word: 0 });
        }
        if k >= w as u64 {
            return match op {
                ShiftOp::Left | ShiftOp::RightLogical => Step::Done(Node::Const(vec![0; words(w)])),
                ShiftOp::RightArithmetic => Step::Done(Node::Op(Op::Shift {
                    op,
                    src,
                    amount: ShiftAmount::Const(w - 1),
                })),
            };
        }
        Step::Done(Node::Op(Op::Shift {
            op,
            src,
            amount: ShiftAmount::Const(k as u32),
        }))
    }

    /// The final node of a net driven by `op`.
    pub fn rewrite(&self, w: u32, op: &Op) -> Node {
        let mut op = map_operands(op, |n| self.same(n));
        for _ in 0..16 {
            match self.step(w, op) {
                Step::Done(Node::Share { src, word }) => {
                    return Node::Share {
                        src: self.same(src),
                        word,
                    }
                }
                Step::Done(node) => return node,
                Step::Again(next) => op = map_operands(&next, |n| self.same(n)),
            }
        }
        Node::Op(op)
    }
}
