//! Wide operations the compiled engine writes inline, word by word: the data
//! movement and bitwise logic that dominates wide datapaths (complements,
//! bitwise operations, multiplexers, slices, concatenations, zero extensions,
//! equality, or-reduction). Every other wide operation (arithmetic, shifts,
//! ordered comparisons, sign extension, …) goes through the callback.
//!
//! Each follows its routine in [`wide`](crate::wide) exactly: operands are
//! zero-extended (a word past an operand's span reads 0) and the destination's top
//! word is masked where the routine masks it.

use super::emit::Emitter;
use crate::instr::{Span, WideOp};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{InstBuilder, Value};
use hdl::ir::{BitOp, CmpOp, ReduceOp};

/// Whether the compiled engine writes `op` inline (one of the operations above)
/// rather than calling back.
pub(super) fn inlines(op: &WideOp) -> bool {
    matches!(
        op,
        WideOp::Not { .. }
            | WideOp::Bit { .. }
            | WideOp::Mux { .. }
            | WideOp::Slice { .. }
            | WideOp::Concat { .. }
            | WideOp::Extend { signed: false, .. }
            | WideOp::Cmp {
                op: CmpOp::Eq | CmpOp::Ne,
                ..
            }
            | WideOp::Reduce {
                op: ReduceOp::Or,
                ..
            }
    )
}

impl Emitter<'_, '_> {
    /// Writes `op` inline; only for an operation that [`inlines`] has.
    pub(super) fn wide_inline(&mut self, op: &WideOp) {
        match *op {
            WideOp::Not { dst, a, mask } => {
                let words: Vec<Value> = (0..dst.words)
                    .map(|i| {
                        let x = self.word_of(a, i);
                        self.b.ins().bnot(x)
                    })
                    .collect();
                self.store_words(dst, words, mask);
            }
            WideOp::Bit { op, dst, a, b } => {
                let words: Vec<Value> = (0..dst.words)
                    .map(|i| {
                        let (x, y) = (self.word_of(a, i), self.word_of(b, i));
                        match op {
                            BitOp::And => self.b.ins().band(x, y),
                            BitOp::Or => self.b.ins().bor(x, y),
                            BitOp::Xor => self.b.ins().bxor(x, y),
                        }
                    })
                    .collect();
                self.store_words(dst, words, u64::MAX);
            }
            WideOp::Mux { dst, sel, t, f } => {
                let s = self.read(sel);
                let s = self.b.ins().band_imm(s, 1);
                let words: Vec<Value> = (0..dst.words)
                    .map(|i| {
                        let (x, y) = (self.word_of(t, i), self.word_of(f, i));
                        self.b.ins().select(s, x, y)
                    })
                    .collect();
                self.store_words(dst, words, u64::MAX);
            }
            WideOp::Slice { dst, src, lo, mask } => {
                let (q, s) = (lo / 64, u64::from(lo % 64));
                let words: Vec<Value> = (0..dst.words)
                    .map(|k| {
                        let low = self.word_of(src, q + k);
                        if s == 0 {
                            return low;
                        }
                        let high = self.word_of(src, q + k + 1);
                        let low = self.shr(low, s);
                        let high = self.shl(high, 64 - s);
                        self.b.ins().bor(low, high)
                    })
                    .collect();
                self.store_words(dst, words, mask);
            }
            WideOp::Concat { dst, ref parts } => self.concat(dst, parts),
            WideOp::Extend {
                dst,
                src,
                signed: false,
                mask,
                ..
            } => {
                let words: Vec<Value> = (0..dst.words).map(|i| self.word_of(src, i)).collect();
                self.store_words(dst, words, mask);
            }
            WideOp::Cmp {
                op: op @ (CmpOp::Eq | CmpOp::Ne),
                dst,
                a,
                b,
                ..
            } => {
                let mut diff = self.konst(0);
                for i in 0..a.words.max(b.words) {
                    let (x, y) = (self.word_of(a, i), self.word_of(b, i));
                    let d = self.b.ins().bxor(x, y);
                    diff = self.b.ins().bor(diff, d);
                }
                let zero = self.konst(0);
                let cc = if op == CmpOp::Eq {
                    IntCC::Equal
                } else {
                    IntCC::NotEqual
                };
                let v = self.flag(cc, diff, zero);
                self.write(dst, v);
            }
            WideOp::Reduce {
                op: ReduceOp::Or,
                dst,
                a,
                ..
            } => {
                let mut any = self.konst(0);
                for i in 0..a.words {
                    let x = self.word_of(a, i);
                    any = self.b.ins().bor(any, x);
                }
                let zero = self.konst(0);
                let v = self.flag(IntCC::NotEqual, any, zero);
                self.write(dst, v);
            }
            _ => unreachable!("{op:?} has no inline form (see `inlines`)"),
        }
    }

    /// `dst = 0`, then every part ORed in at its bit position (see `wide::insert`).
    fn concat(&mut self, dst: Span, parts: &[(Span, u32)]) {
        let mut acc: Vec<Option<Value>> = vec![None; dst.words as usize];
        let mut or_into = |e: &mut Self, at: u32, v: Value| {
            if let Some(slot) = acc.get_mut(at as usize) {
                *slot = Some(match *slot {
                    Some(old) => e.b.ins().bor(old, v),
                    None => v,
                });
            }
        };
        for &(part, pos) in parts {
            let (q, s) = (pos / 64, u64::from(pos % 64));
            for j in 0..part.words {
                let w = self.read(part.off + j);
                let low = self.shl(w, s);
                or_into(self, q + j, low);
                if s != 0 {
                    let high = self.shr(w, 64 - s);
                    or_into(self, q + j + 1, high);
                }
            }
        }
        let words: Vec<Value> = acc
            .into_iter()
            .map(|v| v.unwrap_or_else(|| self.konst(0)))
            .collect();
        self.store_words(dst, words, u64::MAX);
    }

    /// Word `i` of `span`, 0 past its end.
    fn word_of(&mut self, span: Span, i: u32) -> Value {
        if i < span.words {
            self.read(span.off + i)
        } else {
            self.konst(0)
        }
    }

    /// Stores `words` to `dst`, the top one masked with `mask`; written only after
    /// every source word was read (the destination may not overlap a source, but
    /// stays exact even if it did).
    fn store_words(&mut self, dst: Span, mut words: Vec<Value>, mask: u64) {
        if let Some(top) = words.last_mut() {
            *top = self.mask(*top, mask);
        }
        for (i, w) in words.into_iter().enumerate() {
            self.write(dst.off + i as u32, w);
        }
    }
}
