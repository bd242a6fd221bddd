//! Compile-time evaluation of an operation whose operands are all constants, with
//! the same word routines the simulator runs (so a folded value is exactly the
//! value the instruction would have computed).

use crate::wide::{self, last_mask, words};
use hdl::ir::{ArithOp, BitOp, NetId, Op, ShiftAmount};

/// The value (`ceil(w / 64)` words, high bits zero) of `op` driving a `w`-bit net;
/// `width` and `value` give each operand's width and constant value.
pub(crate) fn eval<'a>(
    op: &Op,
    w: u32,
    width: impl Fn(NetId) -> u32,
    value: impl Fn(NetId) -> &'a [u64],
) -> Vec<u64> {
    let mask = last_mask(w);
    let mut d = vec![0u64; words(w)];
    match op {
        Op::Const(b) => {
            for (x, v) in d.iter_mut().zip(b.words()) {
                *x = v;
            }
            if let Some(top) = d.last_mut() {
                *top &= mask;
            }
        }
        Op::Not(a) => wide::not(&mut d, value(*a), mask),
        Op::Bit(o, a, b) => {
            let (a, b) = (value(*a), value(*b));
            match o {
                BitOp::And => wide::bitwise(&mut d, a, b, |x, y| x & y),
                BitOp::Or => wide::bitwise(&mut d, a, b, |x, y| x | y),
                BitOp::Xor => wide::bitwise(&mut d, a, b, |x, y| x ^ y),
            }
        }
        Op::Arith(o, a, b) => {
            let (a, b) = (value(*a), value(*b));
            match o {
                ArithOp::Add => wide::add(&mut d, a, b, mask),
                ArithOp::Sub => wide::sub(&mut d, a, b, mask),
                ArithOp::Mul => wide::mul(&mut d, a, b, mask),
            }
        }
        Op::Cmp(o, a, b) => {
            let ow = width(*a).max(width(*b));
            d[0] = wide::compare(*o, value(*a), value(*b), ow) as u64;
        }
        Op::Mux {
            sel,
            if_true,
            if_false,
        } => {
            let pick = if value(*sel)[0] & 1 == 1 {
                if_true
            } else {
                if_false
            };
            wide::extend(&mut d, value(*pick), w, false, mask);
        }
        Op::Slice { src, lo } => wide::extract(&mut d, value(*src), *lo, mask),
        Op::Concat(parts) => {
            let mut pos = 0u64;
            for p in parts.iter().rev() {
                wide::insert(&mut d, value(*p), pos);
                pos += width(*p) as u64;
            }
        }
        Op::Replicate { src, count } => {
            wide::replicate(&mut d, value(*src), width(*src), *count, mask)
        }
        Op::Extend { src, signed } => wide::extend(&mut d, value(*src), width(*src), *signed, mask),
        Op::Shift { op, src, amount } => {
            let n = match amount {
                ShiftAmount::Const(k) => *k as u64,
                ShiftAmount::Net(a) => wide::read_amount(value(*a)),
            };
            wide::shift(*op, &mut d, value(*src), w, n, mask);
        }
        Op::Reduce(o, a) => d[0] = wide::reduce(*o, value(*a), width(*a)) as u64,
        Op::LeadingZeros(a) => {
            let lz = wide::leading_zeros(value(*a), width(*a));
            wide::write_u64(&mut d, lz, mask);
        }
    }
    d
}
