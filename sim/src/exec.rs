//! The evaluation loop: runs the compiled instruction list over the storage words.
//! No allocation; narrow instructions are one or two word operations each.

use crate::instr::{Amount, Instr, Span, WideOp};
use crate::wide;
use hdl::ir::{ArithOp, BitOp};

/// Evaluates every instruction in order (one full combinational settle).
pub(crate) fn run(instrs: &[Instr], parts: &[(u32, u32)], vals: &mut [u64]) {
    for ins in instrs {
        match *ins {
            Instr::Copy { dst, a } => vals[dst as usize] = vals[a as usize],
            Instr::Not { dst, a, mask } => vals[dst as usize] = !vals[a as usize] & mask,
            Instr::And { dst, a, b } => vals[dst as usize] = vals[a as usize] & vals[b as usize],
            Instr::Or { dst, a, b } => vals[dst as usize] = vals[a as usize] | vals[b as usize],
            Instr::Xor { dst, a, b } => vals[dst as usize] = vals[a as usize] ^ vals[b as usize],
            Instr::Add { dst, a, b, mask } => {
                vals[dst as usize] = vals[a as usize].wrapping_add(vals[b as usize]) & mask
            }
            Instr::Sub { dst, a, b, mask } => {
                vals[dst as usize] = vals[a as usize].wrapping_sub(vals[b as usize]) & mask
            }
            Instr::Mul { dst, a, b, mask } => {
                vals[dst as usize] = vals[a as usize].wrapping_mul(vals[b as usize]) & mask
            }
            Instr::Eq { dst, a, b } => {
                vals[dst as usize] = (vals[a as usize] == vals[b as usize]) as u64
            }
            Instr::Ne { dst, a, b } => {
                vals[dst as usize] = (vals[a as usize] != vals[b as usize]) as u64
            }
            Instr::LtU { dst, a, b } => {
                vals[dst as usize] = (vals[a as usize] < vals[b as usize]) as u64
            }
            Instr::LeU { dst, a, b } => {
                vals[dst as usize] = (vals[a as usize] <= vals[b as usize]) as u64
            }
            Instr::LtS { dst, a, b, sh } => {
                let x = (vals[a as usize] << sh) as i64;
                let y = (vals[b as usize] << sh) as i64;
                vals[dst as usize] = (x < y) as u64;
            }
            Instr::LeS { dst, a, b, sh } => {
                let x = (vals[a as usize] << sh) as i64;
                let y = (vals[b as usize] << sh) as i64;
                vals[dst as usize] = (x <= y) as u64;
            }
            Instr::Mux { dst, sel, t, f } => {
                let src = if vals[sel as usize] & 1 == 1 { t } else { f };
                vals[dst as usize] = vals[src as usize];
            }
            Instr::Slice1 {
                dst,
                src,
                shift,
                mask,
            } => vals[dst as usize] = (vals[src as usize] >> shift) & mask,
            Instr::Slice2 {
                dst,
                src,
                shift,
                mask,
            } => {
                let lo = vals[src as usize] >> shift;
                let hi = vals[src as usize + 1] << (64 - shift);
                vals[dst as usize] = (lo | hi) & mask;
            }
            Instr::Sext { dst, a, sh, mask } => {
                vals[dst as usize] = ((((vals[a as usize] << sh) as i64) >> sh) as u64) & mask
            }
            Instr::Replicate { dst, a, pattern } => {
                vals[dst as usize] = vals[a as usize].wrapping_mul(pattern)
            }
            Instr::Concat { dst, start, len } => {
                let mut acc = 0u64;
                for &(off, sh) in &parts[start as usize..(start + len) as usize] {
                    acc |= vals[off as usize] << sh;
                }
                vals[dst as usize] = acc;
            }
            Instr::Shl { dst, a, n, mask } => vals[dst as usize] = (vals[a as usize] << n) & mask,
            Instr::Shr { dst, a, n } => vals[dst as usize] = vals[a as usize] >> n,
            Instr::Sra {
                dst,
                a,
                sh,
                total,
                mask,
            } => vals[dst as usize] = ((((vals[a as usize] << sh) as i64) >> total) as u64) & mask,
            Instr::ShlV {
                dst,
                a,
                amt,
                width,
                mask,
            } => {
                let n = vals[amt as usize];
                vals[dst as usize] = if n >= width as u64 {
                    0
                } else {
                    (vals[a as usize] << n) & mask
                };
            }
            Instr::ShrV { dst, a, amt, width } => {
                let n = vals[amt as usize];
                vals[dst as usize] = if n >= width as u64 {
                    0
                } else {
                    vals[a as usize] >> n
                };
            }
            Instr::SraV {
                dst,
                a,
                amt,
                width,
                mask,
            } => {
                let sh = 64 - width;
                let signed = ((vals[a as usize] << sh) as i64) >> sh;
                let n = vals[amt as usize].min(width as u64 - 1);
                vals[dst as usize] = ((signed >> n) as u64) & mask;
            }
            Instr::RedAnd { dst, a, full } => {
                vals[dst as usize] = (vals[a as usize] == full) as u64
            }
            Instr::RedOr { dst, a } => vals[dst as usize] = (vals[a as usize] != 0) as u64,
            Instr::RedXor { dst, a } => {
                vals[dst as usize] = (vals[a as usize].count_ones() & 1) as u64
            }
            Instr::Lz {
                dst,
                a,
                width,
                mask,
            } => {
                let x = vals[a as usize];
                let lz = if x == 0 {
                    width as u64
                } else {
                    (x.leading_zeros() - (64 - width)) as u64
                };
                vals[dst as usize] = lz & mask;
            }
            Instr::Wide(ref op) => run_wide(op, vals),
        }
    }
}

/// Read access to every storage word outside one destination span.
struct Src<'a> {
    lo: &'a [u64],
    hi: &'a [u64],
    hi_start: usize,
}

impl Src<'_> {
    #[inline]
    fn get(&self, s: Span) -> &[u64] {
        let (off, n) = (s.off as usize, s.words as usize);
        if off < self.lo.len() {
            &self.lo[off..off + n]
        } else {
            &self.hi[off - self.hi_start..off - self.hi_start + n]
        }
    }

    #[inline]
    fn word(&self, off: u32) -> u64 {
        self.get(Span { off, words: 1 })[0]
    }
}

/// Splits storage into the destination span (mutable) and everything else (read-only).
#[inline]
fn split(vals: &mut [u64], dst: Span) -> (&mut [u64], Src<'_>) {
    let (lo, rest) = vals.split_at_mut(dst.off as usize);
    let (d, hi) = rest.split_at_mut(dst.words as usize);
    let hi_start = dst.off as usize + dst.words as usize;
    (d, Src { lo, hi, hi_start })
}

fn one(off: u32) -> Span {
    Span { off, words: 1 }
}

fn run_wide(op: &WideOp, vals: &mut [u64]) {
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
            for &(part, pos) in parts {
                wide::insert(d, s.get(part), pos as u64);
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
