//! Lowering of one IR operation to instructions: a single-word fast path when the
//! result and every operand have at most 64 bits, a [`WideOp`] otherwise.
//! Results that are constant at compile time (constants, shifts by a constant
//! ≥ width) go to the initial storage image and cost nothing per cycle.

use crate::compile::Builder;
use crate::instr::{Amount, Instr, WideOp};
use crate::wide::last_mask;
use hdl::ir::{ArithOp, BitOp, CmpOp, NetId, Op, ReduceOp, ShiftAmount, ShiftOp};

/// Appends the instructions computing net `n`, driven by `op`.
pub(crate) fn lower(b: &mut Builder<'_>, n: NetId, op: &Op) {
    let w = b.width(n);
    let dst = b.span(n);
    let mask = last_mask(w);
    let narrow = w <= 64 && op.operands().iter().all(|o| b.width(*o) <= 64);
    let d = dst.off;
    let wide = |op: WideOp| Instr::Wide(Box::new(op));

    let instr = match op {
        Op::Const(value) => {
            b.store_const(d, value, w);
            return;
        }
        Op::Not(a) => {
            if narrow {
                Instr::Not {
                    dst: d,
                    a: b.off(*a),
                    mask,
                }
            } else {
                wide(WideOp::Not {
                    dst,
                    a: b.span(*a),
                    mask,
                })
            }
        }
        Op::Bit(o, x, y) => {
            let (a, c) = (b.off(*x), b.off(*y));
            match (narrow, o) {
                (true, BitOp::And) => Instr::And { dst: d, a, b: c },
                (true, BitOp::Or) => Instr::Or { dst: d, a, b: c },
                (true, BitOp::Xor) => Instr::Xor { dst: d, a, b: c },
                (false, _) => wide(WideOp::Bit {
                    op: *o,
                    dst,
                    a: b.span(*x),
                    b: b.span(*y),
                }),
            }
        }
        Op::Arith(o, x, y) => {
            let (a, c) = (b.off(*x), b.off(*y));
            match (narrow, o) {
                (true, ArithOp::Add) => Instr::Add {
                    dst: d,
                    a,
                    b: c,
                    mask,
                },
                (true, ArithOp::Sub) => Instr::Sub {
                    dst: d,
                    a,
                    b: c,
                    mask,
                },
                (true, ArithOp::Mul) => Instr::Mul {
                    dst: d,
                    a,
                    b: c,
                    mask,
                },
                (false, _) => wide(WideOp::Arith {
                    op: *o,
                    dst,
                    a: b.span(*x),
                    b: b.span(*y),
                    mask,
                }),
            }
        }
        Op::Cmp(o, x, y) => {
            let (a, c) = (b.off(*x), b.off(*y));
            let ow = b.width(*x).max(b.width(*y));
            if narrow {
                let sh = 64 - ow;
                match o {
                    CmpOp::Eq => Instr::Eq { dst: d, a, b: c },
                    CmpOp::Ne => Instr::Ne { dst: d, a, b: c },
                    CmpOp::LtU => Instr::LtU { dst: d, a, b: c },
                    CmpOp::LeU => Instr::LeU { dst: d, a, b: c },
                    CmpOp::LtS => Instr::LtS {
                        dst: d,
                        a,
                        b: c,
                        sh,
                    },
                    CmpOp::LeS => Instr::LeS {
                        dst: d,
                        a,
                        b: c,
                        sh,
                    },
                }
            } else {
                wide(WideOp::Cmp {
                    op: *o,
                    dst: d,
                    a: b.span(*x),
                    b: b.span(*y),
                    width: ow,
                })
            }
        }
        Op::Mux {
            sel,
            if_true,
            if_false,
        } => {
            if narrow {
                Instr::Mux {
                    dst: d,
                    sel: b.off(*sel),
                    t: b.off(*if_true),
                    f: b.off(*if_false),
                }
            } else {
                wide(WideOp::Mux {
                    dst,
                    sel: b.off(*sel),
                    t: b.span(*if_true),
                    f: b.span(*if_false),
                })
            }
        }
        Op::Slice { src, lo } => {
            let s = b.span(*src);
            // A narrow result is a one- or two-word extraction even from a wide source.
            if w <= 64 {
                let word = s.off + lo / 64;
                let shift = lo % 64;
                if shift + w <= 64 {
                    Instr::Slice1 {
                        dst: d,
                        src: word,
                        shift,
                        mask,
                    }
                } else {
                    Instr::Slice2 {
                        dst: d,
                        src: word,
                        shift,
                        mask,
                    }
                }
            } else {
                wide(WideOp::Slice {
                    dst,
                    src: s,
                    lo: *lo,
                    mask,
                })
            }
        }
        Op::Concat(parts) => {
            // Parts come most significant first; position of each from the LSB.
            let mut pos = 0u32;
            let mut placed = Vec::with_capacity(parts.len());
            for p in parts.iter().rev() {
                placed.push((*p, pos));
                pos = pos.saturating_add(b.width(*p));
            }
            if narrow {
                let start = b.parts.len() as u32;
                for (p, pos) in &placed {
                    let off = b.off(*p);
                    b.parts.push((off, *pos));
                }
                Instr::Concat {
                    dst: d,
                    start,
                    len: placed.len() as u32,
                }
            } else {
                let parts = placed.iter().map(|(p, pos)| (b.span(*p), *pos)).collect();
                wide(WideOp::Concat { dst, parts })
            }
        }
        Op::Replicate { src, count } => {
            let sw = b.width(*src);
            if narrow {
                let pattern = (0..*count).fold(0u64, |acc, k| acc | 1u64 << (k * sw));
                Instr::Replicate {
                    dst: d,
                    a: b.off(*src),
                    pattern,
                }
            } else {
                wide(WideOp::Replicate {
                    dst,
                    src: b.span(*src),
                    src_width: sw,
                    count: *count,
                    mask,
                })
            }
        }
        Op::Extend { src, signed } => {
            let sw = b.width(*src);
            match (narrow, signed) {
                (true, false) => Instr::Copy {
                    dst: d,
                    a: b.off(*src),
                },
                (true, true) => Instr::Sext {
                    dst: d,
                    a: b.off(*src),
                    sh: 64 - sw,
                    mask,
                },
                (false, _) => wide(WideOp::Extend {
                    dst,
                    src: b.span(*src),
                    src_width: sw,
                    signed: *signed,
                    mask,
                }),
            }
        }
        Op::Shift { op, src, amount } => {
            let a = b.off(*src);
            match (narrow, amount) {
                (true, ShiftAmount::Const(k)) => {
                    let k = *k;
                    match op {
                        ShiftOp::Left | ShiftOp::RightLogical if k >= w => return, // all zeros
                        ShiftOp::Left => Instr::Shl {
                            dst: d,
                            a,
                            n: k,
                            mask,
                        },
                        ShiftOp::RightLogical => Instr::Shr { dst: d, a, n: k },
                        ShiftOp::RightArithmetic => Instr::Sra {
                            dst: d,
                            a,
                            sh: 64 - w,
                            total: 64 - w + k.min(w - 1),
                            mask,
                        },
                    }
                }
                (true, ShiftAmount::Net(amt)) => {
                    let amt = b.off(*amt);
                    match op {
                        ShiftOp::Left => Instr::ShlV {
                            dst: d,
                            a,
                            amt,
                            width: w,
                            mask,
                        },
                        ShiftOp::RightLogical => Instr::ShrV {
                            dst: d,
                            a,
                            amt,
                            width: w,
                        },
                        ShiftOp::RightArithmetic => Instr::SraV {
                            dst: d,
                            a,
                            amt,
                            width: w,
                            mask,
                        },
                    }
                }
                (false, amount) => wide(WideOp::Shift {
                    op: *op,
                    dst,
                    src: b.span(*src),
                    width: w,
                    amount: match amount {
                        ShiftAmount::Const(k) => Amount::Const(*k as u64),
                        ShiftAmount::Net(n) => Amount::Net(b.span(*n)),
                    },
                    mask,
                }),
            }
        }
        Op::Reduce(o, src) => {
            let sw = b.width(*src);
            let a = b.off(*src);
            match (narrow, o) {
                (true, ReduceOp::And) => Instr::RedAnd {
                    dst: d,
                    a,
                    full: last_mask(sw),
                },
                (true, ReduceOp::Or) => Instr::RedOr { dst: d, a },
                (true, ReduceOp::Xor) => Instr::RedXor { dst: d, a },
                (false, _) => wide(WideOp::Reduce {
                    op: *o,
                    dst: d,
                    a: b.span(*src),
                    width: sw,
                }),
            }
        }
        Op::LeadingZeros(src) => {
            let sw = b.width(*src);
            if narrow {
                Instr::Lz {
                    dst: d,
                    a: b.off(*src),
                    width: sw,
                    mask,
                }
            } else {
                wide(WideOp::LeadingZeros {
                    dst,
                    a: b.span(*src),
                    width: sw,
                    mask,
                })
            }
        }
    };
    b.instrs.push(instr);
}
