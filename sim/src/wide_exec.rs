//! Execution of one [`WideOp`]: the destination span is split off the storage
//! (mutable) from everything else (read-only), then the word-slice routines of
//! [`wide`](crate::wide) run on them.

use crate::instr::{Amount, Span, WideOp};
use crate::wide;
use hdl::ir::{ArithOp, BitOp};

/// Read access to every storage word outside one destination span.
pub(crate) struct Src<'a> {
    lo: &'a [u64],
    hi: &'a [u64],
    hi_start: usize,
}

impl Src<'_> {
    /// The words of `s`, which lies entirely below or above the destination.
    #[inline]
    pub fn get(&self, s: Span) -> &[u64] {
        let (off, n) = (s.off as usize, s.words as usize);
        if off < self.lo.len() {
            &self.lo[off..off + n]
        } else {
            &self.hi[off - self.hi_start..off - self.hi_start + n]
        }
    }

    /// The word at `off` (outside the destination).
    #[inline]
    pub fn word(&self, off: u32) -> u64 {
        self.get(Span { off, words: 1 })[0]
    }
}

/// Splits storage into the destination span (mutable) and everything else (read-only).
#[inline]
pub(crate) fn split(vals: &mut [u64], dst: Span) -> (&mut [u64], Src<'_>) {
    let (lo, rest) = vals.split_at_mut(dst.off as usize);
    let (d, hi) = rest.split_at_mut(dst.words as usize);
    let hi_start = dst.off as usize + dst.words as usize;
    (d, Src { lo, hi, hi_start })
}

fn one(off: u32) -> Span {
    Span { off, words: 1 }
}

/// Runs `op` over the storage `vals`.
pub(crate) fn run_wide(op: &WideOp, vals: &mut [u64]) {
    match *op {
        WideOp::Not { dst, a, mask } => {
            let (d, s) = split(vals, dst);
            wide::not(d, s.get(a), mask);
        }
        WideOp::Bit { op, dst, a, b } => {
            let (d, s) = split(vals, dst);
            let (a, b) = (s.get(a), s.get(b));
            match op {
                BitOp::And => wide::bitwise(d, a, b, |x, y| x & y),
                BitOp::Or => wide::bitwise(d, a, b, |x, y| x | y),
                BitOp::Xor => wide::bitwise(d, a, b, |x, y| x ^ y),
            }
        }
        WideOp::Arith {
            op,
            dst,
            a,
            b,
            mask,
        } => {
            let (d, s) = split(vals, dst);
            let (a, b) = (s.get(a), s.get(b));
            match op {
                ArithOp::Add => wide::add(d, a, b, mask),
                ArithOp::Sub => wide::sub(d, a, b, mask),
                ArithOp::Mul => wide::mul(d, a, b, mask),
            }
        }
        WideOp::Cmp {
            op,
            dst,
            a,
            b,
            width,
        } => {
            let (d, s) = split(vals, one(dst));
            d[0] = wide::compare(op, s.get(a), s.get(b), width) as u64;
        }
        WideOp::Mux { dst, sel, t, f } => {
            let (d, s) = split(vals, dst);
            let src = if s.word(sel) & 1 == 1 { t } else { f };
            d.copy_from_slice(s.get(src));
        }
        WideOp::Slice { dst, src, lo, mask } => {
            let (d, s) = split(vals, dst);
            wide::extract(d, s.get(src), lo, mask);
        }
        WideOp::Concat { dst, ref parts } => {
            let (d, s) = split(vals, dst);
            d.fill(0);
            for p in parts {
                wide::insert(d, s.get(p.span), u64::from(p.pos));
            }
        }
        WideOp::Replicate {
            dst,
            src,
            src_width,
            count,
            mask,
        } => {
            let (d, s) = split(vals, dst);
            wide::replicate(d, s.get(src), src_width, count, mask);
        }
        WideOp::Extend {
            dst,
            src,
            src_width,
            signed,
            mask,
        } => {
            let (d, s) = split(vals, dst);
            wide::extend(d, s.get(src), src_width, signed, mask);
        }
        WideOp::Shift {
            op,
            dst,
            src,
            width,
            amount,
            mask,
            ..
        } => {
            let (d, s) = split(vals, dst);
            let n = match amount {
                Amount::Const(n) => n,
                Amount::Net(a) => wide::read_amount(s.get(a)),
            };
            wide::shift(op, d, s.get(src), width, n, mask);
        }
        WideOp::Reduce { op, dst, a, width } => {
            let (d, s) = split(vals, one(dst));
            d[0] = wide::reduce(op, s.get(a), width) as u64;
        }
        WideOp::LeadingZeros {
            dst,
            a,
            width,
            mask,
        } => {
            let (d, s) = split(vals, dst);
            let lz = wide::leading_zeros(s.get(a), width);
            wide::write_u64(d, lz, mask);
        }
    }
}
