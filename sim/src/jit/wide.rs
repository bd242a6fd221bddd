//! Wide operations the compiled engine writes inline, word by word: the data
//! movement and bitwise logic that dominates wide datapaths (complements,
//! bitwise operations, multiplexers, slices, concatenations, zero extensions,
//! equality, or-reduction, logical shifts). Every other wide operation
//! (arithmetic, arithmetic shifts, ordered comparisons, sign extension, …) goes
//! through the callback.
//!
//! A logical shift by a net (Lightning's streamers shift 512-bit words by a
//! sample count) reads its operand from storage at word indices computed at run
//! time; the operand's words are therefore always stored ([`reads_storage`]).
//! When the layout placed the operand between zero words that nothing writes
//! (`layout::shift_pads`, the operation marked `padded`), each word is one load
//! at a constant offset from an address computed once per shift; the plan checks
//! that those zero words lie in storage, so that no amount loads outside it.
//! Otherwise each index is masked or clamped into the operand's span before the
//! load and its word replaced by 0 past it.
//!
//! Each follows its routine in [`wide`](crate::wide) exactly: operands are
//! zero-extended (a word past an operand's span reads 0) and the destination's top
//! word is masked where the routine masks it.

use super::emit::Emitter;
use crate::instr::{Amount, Placed, Span, WideOp};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::I64;
use cranelift_codegen::ir::{InstBuilder, MemFlags, Value};
use hdl::ir::{BitOp, CmpOp, ReduceOp, ShiftOp};
use std::collections::HashMap;

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
            | WideOp::Shift {
                op: ShiftOp::Left | ShiftOp::RightLogical,
                ..
            }
    )
}

/// Whether the inline form of `op` reads its operand's words from storage, at an
/// index known only at run time (a shift by a net), rather than from values in
/// hand: those words must be stored (see [`Unstored`](super::unstored::Unstored)).
pub(super) fn reads_storage(op: &WideOp) -> bool {
    matches!(
        op,
        WideOp::Shift {
            amount: Amount::Net(_),
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
            WideOp::Mux { dst, sel, t, f }
                if self.in_storage(t, dst.words) && self.in_storage(f, dst.words) =>
            {
                // Both operands only in storage: the select picks an address, and
                // each word is one load from it (no load of the other operand's
                // word, no test and conditional move per word).
                let s = self.condition(sel);
                let (t, f) = (self.address_of(t.off), self.address_of(f.off));
                let from = self.b.ins().select(s, t, f);
                let words: Vec<Value> = (0..dst.words)
                    .map(|i| {
                        let at = (i as i32) * 8;
                        self.b.ins().load(I64, MemFlags::trusted(), from, at)
                    })
                    .collect();
                self.store_words(dst, words, u64::MAX);
            }
            WideOp::Mux { dst, sel, t, f } => {
                let s = self.condition(sel);
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
            WideOp::Shift {
                op,
                dst,
                src,
                width,
                amount,
                mask,
                padded,
            } => self.shift(op, dst, src, width, (amount, padded), mask),
            _ => unreachable!("{op:?} has no inline form (see `inlines`)"),
        }
    }

    /// A logical shift of the `width`-bit `src` into `dst` (see `wide::shift`):
    /// by a constant, word by word from the values in hand; by a net, from
    /// storage at indices computed at run time (`padded`: `src` lies between the
    /// zero words `layout::shift_pads` gives). An amount of `width` or more gives
    /// 0.
    fn shift(
        &mut self,
        op: ShiftOp,
        dst: Span,
        src: Span,
        width: u32,
        (amount, padded): (Amount, bool),
        mask: u64,
    ) {
        let left = op == ShiftOp::Left;
        // Right shifts read the source zero-extended to the destination's words.
        let len = if left {
            src.words
        } else {
            src.words.min(dst.words)
        };
        let words = match amount {
            Amount::Const(n) if n >= u64::from(width) => {
                (0..dst.words).map(|_| self.konst(0)).collect()
            }
            Amount::Const(n) => {
                let (q, s) = ((n / 64) as i64, n % 64);
                (0..i64::from(dst.words))
                    .map(|i| {
                        let mut at = |k: i64| match u32::try_from(k) {
                            Ok(k) if k < len => self.read(src.off + k),
                            _ => self.konst(0),
                        };
                        let (near, far) = if left {
                            (at(i - q), at(i - q - 1))
                        } else {
                            (at(i + q), at(i + q + 1))
                        };
                        self.join(left, near, far, None, s)
                    })
                    .collect()
            }
            Amount::Net(a) => self.shift_by_net(left, dst, (src, len, padded), width, a),
        };
        self.store_words(dst, words, mask);
    }

    /// The amount of a shift by net `a` of a `width`-bit value, as
    /// `wide::read_amount` reads it, with `past` (bits) instead when it shifts
    /// everything out: when a 1 lies above its first word, or it is `width` or
    /// more.
    fn amount_or(&mut self, a: Span, width: u32, past: u64) -> Value {
        let n = self.word_of(a, 0);
        let mut out = self
            .b
            .ins()
            .icmp_imm(IntCC::UnsignedGreaterThanOrEqual, n, i64::from(width));
        if a.words > 1 {
            let mut high = self.read(a.off + 1);
            for i in 2..a.words {
                let w = self.read(a.off + i);
                high = self.b.ins().bor(high, w);
            }
            let out_high = self.b.ins().icmp_imm(IntCC::NotEqual, high, 0);
            out = self.b.ins().bor(out, out_high);
        }
        let past = self.konst(past);
        self.b.ins().select(out, past, n)
    }

    /// The words of a logical shift by the value of net `a` (see [`shift`]).
    ///
    /// Result word `i` takes source words `i ∓ q` and `i ∓ q ∓ 1`. From a padded
    /// source (between the zero words `layout::shift_pads` gives, which says why
    /// every word selected lies in them or the source) the address of word `-q`
    /// (left) or `q` (right) is computed once and every word loaded at a constant
    /// offset to it, unchecked; otherwise each index is checked (masked or
    /// clamped into the source, its word replaced by 0 past it).
    fn shift_by_net(
        &mut self,
        left: bool,
        dst: Span,
        (src, len, padded): (Span, u32, bool),
        width: u32,
        a: Span,
    ) -> Vec<Value> {
        // An amount that shifts everything out selects only words past the
        // source (below it, for a padded left shift).
        let past = match (padded, left) {
            (true, true) => dst.words,
            (true, false) => src.words,
            (false, _) => dst.words + len + 2,
        };
        let n = self.amount_or(a, width, 64 * u64::from(past));
        let q = self.b.ins().ushr_imm(n, 6);
        let s = self.b.ins().band_imm(n, 63);
        let back = self.konst(63);
        let back = self.b.ins().isub(back, s);
        let moved = padded.then(|| {
            let bytes = self.b.ins().ishl_imm(q, 3);
            if left {
                self.b.ins().isub(self.vals, bytes)
            } else {
                self.b.ins().iadd(self.vals, bytes)
            }
        });
        let source = |e: &mut Self, j: i64| match moved {
            Some(base) => {
                let at = (i64::from(src.off) + j) * 8;
                let (base, at) = match i32::try_from(at) {
                    Ok(at) => (base, at),
                    Err(_) => (e.b.ins().iadd_imm(base, at), 0),
                };
                e.b.ins().load(I64, MemFlags::trusted(), base, at)
            }
            None => {
                // A negative index wraps to a large one, which reads 0.
                let k = if left {
                    let j = e.konst(j as u64);
                    e.b.ins().isub(j, q)
                } else {
                    e.b.ins().iadd_imm(q, j)
                };
                e.word_at_run_time(src, len, k)
            }
        };
        // The word next to word `i`'s own is word `i + 1`'s own for a right shift
        // and word `i - 1`'s for a left one: each source word is loaded once.
        let mut words = Vec::with_capacity(dst.words as usize);
        if left {
            let mut far = source(self, -1);
            for i in 0..i64::from(dst.words) {
                let near = source(self, i);
                words.push(self.join(left, near, far, Some((s, back)), 0));
                far = near;
            }
        } else {
            let mut near = source(self, 0);
            for i in 0..i64::from(dst.words) {
                let far = source(self, i + 1);
                words.push(self.join(left, near, far, Some((s, back)), 0));
                near = far;
            }
        }
        words
    }

    /// One word of a shift by `s` bits within the word: `near` (the source word
    /// that lands on it) moved by `s`, with the bits that cross over from `far`
    /// (the next lower word for a left shift, the next higher for a right one).
    /// `by_net` has `s` and `63 - s` as values; otherwise `s` is the constant
    /// `constant`. By a value the crossing bits move in two steps (1, then
    /// `63 - s`), so that `s = 0` brings none.
    fn join(
        &mut self,
        left: bool,
        near: Value,
        far: Value,
        by_net: Option<(Value, Value)>,
        constant: u64,
    ) -> Value {
        let (near, far) = match (by_net, left) {
            (Some((s, back)), true) => {
                let far = self.b.ins().ushr_imm(far, 1);
                (self.b.ins().ishl(near, s), self.b.ins().ushr(far, back))
            }
            (Some((s, back)), false) => {
                let far = self.b.ins().ishl_imm(far, 1);
                (self.b.ins().ushr(near, s), self.b.ins().ishl(far, back))
            }
            (None, _) if constant == 0 => return near,
            (None, true) => (self.shl(near, constant), self.shr(far, 64 - constant)),
            (None, false) => (self.shr(near, constant), self.shl(far, 64 - constant)),
        };
        self.b.ins().bor(near, far)
    }

    /// `dst = 0`, then every part ORed in at its bit position (see `wide::insert`).
    ///
    /// Each word of a part lands in a word of the result shifted left, and the
    /// bits it carries past bit 63 in the next word shifted right. A term (a word
    /// in hand, shifted by an amount) that lands in several words of the result,
    /// as a field repeated in every lane of a vector of samples does, is shifted
    /// once, and the terms that land in the same words are or-ed together once
    /// for all of them.
    fn concat(&mut self, dst: Span, parts: &[Placed]) {
        let mut terms = Terms::default();
        for part in parts {
            let (q, s) = (part.pos / 64, part.pos % 64);
            for j in (0..part.span.words).take_while(|j| q + j < dst.words) {
                let off = part.span.off + j;
                terms.add((off, Shift::Left(s)), q + j);
                // The word's bits above the part's width are 0: it spills into the
                // next word of the result only when its value reaches past bit 63.
                let bits = part.width.saturating_sub(64 * j).min(64);
                if s + bits > 64 && q + j + 1 < dst.words {
                    terms.add((off, Shift::Right(64 - s)), q + j + 1);
                }
            }
        }
        // The groups shared by several words first, then the others term by term
        // in order, so that few words are in hand at once.
        let mut acc: Vec<Option<Value>> = vec![None; dst.words as usize];
        let Grouped { shared, single } = terms.groups();
        for (words, group) in shared {
            let mut value = None;
            for term in group {
                let x = self.term(term);
                value = Some(self.or_into_opt(value, x));
            }
            let value = value.expect("a group has a term");
            for at in words {
                acc[at as usize] = Some(self.or_into_opt(acc[at as usize], value));
            }
        }
        for (term, at) in single {
            let x = self.term(term);
            acc[at as usize] = Some(self.or_into_opt(acc[at as usize], x));
        }
        let words: Vec<Value> = acc
            .into_iter()
            .map(|v| v.unwrap_or_else(|| self.konst(0)))
            .collect();
        self.store_words(dst, words, u64::MAX);
    }

    /// Storage word `off` moved by `shift`.
    fn term(&mut self, (off, shift): Term) -> Value {
        let w = self.read(off);
        match shift {
            Shift::Left(s) => self.shl(w, u64::from(s)),
            Shift::Right(s) => self.shr(w, u64::from(s)),
        }
    }

    /// `a | b`, or `b` without `a`.
    fn or_into_opt(&mut self, a: Option<Value>, b: Value) -> Value {
        match a {
            Some(a) => self.b.ins().bor(a, b),
            None => b,
        }
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

/// How a term of a concatenation moves its word: left by a part's position
/// within a word, or right by what remains of the word for the bits that spill.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Shift {
    Left(u32),
    Right(u32),
}

/// A term of a concatenation: a storage word of a part, moved.
type Term = (u32, Shift);

/// The terms of a concatenation, each with the words of the result it lands in,
/// in the order they were first added (so the emitted code does not depend on a
/// hash order).
#[derive(Default)]
struct Terms {
    order: Vec<Term>,
    words: HashMap<Term, Vec<u32>>,
}

impl Terms {
    /// Term `term` lands in word `at` of the result.
    fn add(&mut self, term: Term, at: u32) {
        let words = self.words.entry(term).or_insert_with(|| {
            self.order.push(term);
            Vec::new()
        });
        words.push(at);
    }

    /// The terms grouped by where they land.
    fn groups(self) -> Grouped {
        let mut index: HashMap<&[u32], usize> = HashMap::new();
        let (mut shared, mut single) = (Vec::new(), Vec::new());
        for &term in &self.order {
            match self.words[&term].as_slice() {
                &[at] => single.push((term, at)),
                words => {
                    let g = *index.entry(words).or_insert_with(|| {
                        shared.push((words.to_vec(), Vec::new()));
                        shared.len() - 1
                    });
                    shared[g].1.push(term);
                }
            }
        }
        Grouped { shared, single }
    }
}

/// The terms of a concatenation by where they land.
struct Grouped {
    /// The terms that land in several words, grouped by those words: each group
    /// with its words.
    shared: Vec<(Vec<u32>, Vec<Term>)>,
    /// Every other term with its one word, in order.
    single: Vec<(Term, u32)>,
}
