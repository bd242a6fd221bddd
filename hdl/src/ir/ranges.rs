//! Bounds on the unsigned values a net can carry, from the operations that make it:
//! a 4-bit field zero-extended and incremented lies in 1..=16, whatever the field
//! holds. The bounds are sound, not tight (a concatenation's bounds are its parts'
//! least and greatest values placed, though not every value between them occurs),
//! and a net the rules cannot bound, or one wider than 64 bits, has its width's
//! whole range or none. Inputs, registers, memory reads and instance outputs take
//! their whole range: no state is followed through its next value.

use super::{ArithOp, BitOp, Driver, ModuleData, NetId, Op, ShiftAmount, ShiftOp};
use std::collections::HashMap;

/// How deep the operations under a net are followed; below it a net takes its
/// width's whole range (sound, and it bounds the recursion).
const MAX_DEPTH: u32 = 48;

/// The least and the greatest unsigned value a net can carry, both inclusive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Range {
    /// The least value.
    pub lo: u64,
    /// The greatest value.
    pub hi: u64,
}

impl Range {
    /// Every value of `width` bits (at most 64).
    fn full(width: u32) -> Self {
        Range {
            lo: 0,
            hi: max_of(width),
        }
    }

    /// `lo..=hi` if `hi` fits in `width` bits, else the whole range.
    fn fitting(lo: u128, hi: u128, width: u32) -> Self {
        if hi <= u128::from(max_of(width)) {
            Range {
                lo: lo as u64,
                hi: hi as u64,
            }
        } else {
            Range::full(width)
        }
    }

    /// The least range holding both.
    fn union(self, other: Range) -> Self {
        Range {
            lo: self.lo.min(other.lo),
            hi: self.hi.max(other.hi),
        }
    }
}

/// The greatest value of `width` bits (at most 64).
fn max_of(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1 << width) - 1
    }
}

/// The least all-ones value at or above `v`: the greatest value any `or` or `xor`
/// of values up to `v` can reach.
fn ones_covering(v: u64) -> u64 {
    match v {
        0 => 0,
        _ => u64::MAX >> v.leading_zeros(),
    }
}

/// The ranges of one module's nets, each worked out once.
pub(crate) struct Ranges<'m> {
    m: &'m ModuleData,
    memo: HashMap<NetId, Option<Range>>,
}

impl<'m> Ranges<'m> {
    /// The ranges of `m`'s nets.
    pub(crate) fn new(m: &'m ModuleData) -> Self {
        Ranges {
            m,
            memo: HashMap::new(),
        }
    }

    /// The values `net` can carry; `None` for a net wider than 64 bits.
    pub(crate) fn of(&mut self, net: NetId) -> Option<Range> {
        self.at(net, 0)
    }

    /// `net`'s range, its operations followed `depth` levels down already.
    fn at(&mut self, net: NetId, depth: u32) -> Option<Range> {
        let n = self.m.net(net);
        if n.width > 64 {
            return None;
        }
        if let Some(&r) = self.memo.get(&net) {
            return r;
        }
        if depth >= MAX_DEPTH {
            return Some(Range::full(n.width));
        }
        let r = match &n.driver {
            Driver::Alias(src) => self.at(*src, depth + 1),
            Driver::Op(op) => Some(self.op(op, n.width, depth + 1)),
            _ => Some(Range::full(n.width)),
        };
        self.memo.insert(net, r);
        r
    }

    /// The range of `op`'s result, `width` bits, its operands at `depth`.
    fn op(&mut self, op: &Op, width: u32, depth: u32) -> Range {
        let full = Range::full(width);
        let at = |r: &mut Self, n: NetId| r.at(n, depth);
        let bounded = match op {
            Op::Const(k) => k.to_u64().map(|v| Range { lo: v, hi: v }),
            Op::Extend { src, signed } => {
                let ws = self.m.net(*src).width;
                at(self, *src).filter(|r| !signed || r.hi <= max_of(ws) >> 1)
            }
            Op::Concat(parts) => {
                let mut acc = Some((0u128, 0u128, 0u32));
                for &p in parts.iter().rev() {
                    let pw = self.m.net(p).width;
                    acc = match (acc, at(self, p)) {
                        (Some((lo, hi, shift)), Some(r)) => Some((
                            lo | u128::from(r.lo) << shift,
                            hi | u128::from(r.hi) << shift,
                            shift + pw,
                        )),
                        _ => None,
                    };
                }
                acc.map(|(lo, hi, _)| Range::fitting(lo, hi, width))
            }
            Op::Slice { src, lo } => {
                let r = at(self, *src);
                r.filter(|r| r.hi >> lo <= max_of(width)).map(|r| Range {
                    lo: r.lo >> lo,
                    hi: r.hi >> lo,
                })
            }
            Op::Arith(arith, a, b) => {
                let (a, b) = (at(self, *a), at(self, *b));
                a.zip(b).and_then(|(a, b)| arith_range(*arith, a, b, width))
            }
            Op::Mux {
                if_true, if_false, ..
            } => {
                let (t, f) = (at(self, *if_true), at(self, *if_false));
                t.zip(f).map(|(t, f)| t.union(f))
            }
            Op::Bit(bit, a, b) => {
                let (a, b) = (at(self, *a), at(self, *b));
                a.zip(b).map(|(a, b)| match bit {
                    BitOp::And => Range {
                        lo: 0,
                        hi: a.hi.min(b.hi),
                    },
                    BitOp::Or => Range {
                        lo: a.lo.max(b.lo),
                        hi: ones_covering(a.hi.max(b.hi)),
                    },
                    BitOp::Xor => Range {
                        lo: 0,
                        hi: ones_covering(a.hi.max(b.hi)),
                    },
                })
            }
            Op::Not(a) => at(self, *a).map(|r| Range {
                lo: full.hi - r.hi,
                hi: full.hi - r.lo,
            }),
            Op::Shift { op, src, amount } => {
                let r = at(self, *src);
                r.and_then(|r| shift_range(*op, *amount, r, width))
            }
            Op::LeadingZeros(src) => Some(Range {
                lo: 0,
                hi: u64::from(self.m.net(*src).width).min(full.hi),
            }),
            Op::Replicate { .. } | Op::Reduce(..) | Op::Cmp(..) => None,
        };
        bounded.unwrap_or(full)
    }
}

/// The range of `a op b` in `width` bits, if no result wraps.
fn arith_range(op: ArithOp, a: Range, b: Range, width: u32) -> Option<Range> {
    let (al, ah, bl, bh) = (
        u128::from(a.lo),
        u128::from(a.hi),
        u128::from(b.lo),
        u128::from(b.hi),
    );
    match op {
        ArithOp::Add => Some(Range::fitting(al + bl, ah + bh, width)),
        ArithOp::Mul => Some(Range::fitting(al * bl, ah * bh, width)),
        ArithOp::Sub => (al >= bh).then(|| Range::fitting(al - bh, ah - bl, width)),
    }
}

/// The range of a shift of a value in `r`, if no bit leaves a left shift.
fn shift_range(op: ShiftOp, amount: ShiftAmount, r: Range, width: u32) -> Option<Range> {
    match (op, amount) {
        (ShiftOp::Left, ShiftAmount::Const(n)) if n < 64 => {
            let (lo, hi) = (u128::from(r.lo) << n, u128::from(r.hi) << n);
            Some(Range::fitting(lo, hi, width))
        }
        (ShiftOp::RightLogical, ShiftAmount::Const(n)) => Some(Range {
            lo: r.lo.checked_shr(n).unwrap_or(0),
            hi: r.hi.checked_shr(n).unwrap_or(0),
        }),
        (ShiftOp::RightLogical, ShiftAmount::Net(_)) => Some(Range { lo: 0, hi: r.hi }),
        _ => None,
    }
}
