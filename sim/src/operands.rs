//! Operand utilities over [`Op`] and [`Node`]: visiting (without allocating) and
//! rewriting the nets an operation reads.

use crate::simplify::Node;
use hdl::ir::{NetId, Op, ShiftAmount};

/// Calls `f` on every operand of `op`, in the order of [`Op::operands`].
#[inline]
pub(crate) fn each_operand(op: &Op, mut f: impl FnMut(NetId)) {
    match op {
        Op::Const(_) => {}
        Op::Not(a)
        | Op::Slice { src: a, .. }
        | Op::Replicate { src: a, .. }
        | Op::Extend { src: a, .. }
        | Op::Reduce(_, a)
        | Op::LeadingZeros(a) => f(*a),
        Op::Bit(_, a, b) | Op::Arith(_, a, b) | Op::Cmp(_, a, b) => {
            f(*a);
            f(*b)
        }
        Op::Mux {
            sel,
            if_true,
            if_false,
        } => {
            f(*sel);
            f(*if_true);
            f(*if_false)
        }
        Op::Concat(parts) => parts.iter().for_each(|p| f(*p)),
        Op::Shift { src, amount, .. } => {
            f(*src);
            if let ShiftAmount::Net(n) = amount {
                f(*n)
            }
        }
    }
}

/// True if `pred` holds for every operand of `op`.
#[inline]
pub(crate) fn all_operands(op: &Op, mut pred: impl FnMut(NetId) -> bool) -> bool {
    let mut all = true;
    each_operand(op, |n| all &= pred(n));
    all
}

/// Calls `f` on every net the value of `node` is read from.
#[inline]
pub(crate) fn each_node_operand(node: &Node, mut f: impl FnMut(NetId)) {
    match node {
        Node::Op(op) => each_operand(op, f),
        Node::Share { src, .. } | Node::Copy(src) => f(*src),
        _ => {}
    }
}

/// `op` with every operand `n` replaced by `f(n)`.
pub(crate) fn map_operands(op: &Op, f: impl Fn(NetId) -> NetId) -> Op {
    match op {
        Op::Const(b) => Op::Const(b.clone()),
        Op::Not(a) => Op::Not(f(*a)),
        Op::Bit(o, a, b) => Op::Bit(*o, f(*a), f(*b)),
        Op::Arith(o, a, b) => Op::Arith(*o, f(*a), f(*b)),
        Op::Cmp(o, a, b) => Op::Cmp(*o, f(*a), f(*b)),
        Op::Mux {
            sel,
            if_true,
            if_false,
        } => Op::Mux {
            sel: f(*sel),
            if_true: f(*if_true),
            if_false: f(*if_false),
        },
        Op::Slice { src, lo } => Op::Slice {
            src: f(*src),
            lo: *lo,
        },
        Op::Concat(parts) => Op::Concat(parts.iter().map(|p| f(*p)).collect()),
        Op::Replicate { src, count } => Op::Replicate {
            src: f(*src),
            count: *count,
        },
        Op::Extend { src, signed } => Op::Extend {
            src: f(*src),
            signed: *signed,
        },
        Op::Shift { op, src, amount } => Op::Shift {
            op: *op,
            src: f(*src),
            amount: match amount {
                ShiftAmount::Const(n) => ShiftAmount::Const(*n),
                ShiftAmount::Net(n) => ShiftAmount::Net(f(*n)),
            },
        },
        Op::Reduce(o, a) => Op::Reduce(*o, f(*a)),
        Op::LeadingZeros(a) => Op::LeadingZeros(f(*a)),
    }
}
