//! Combinational operations of the builder.
//!
//! Width rules (never a silent truncation):
//! - bitwise ops, comparisons, `mux` arms: operands of equal width;
//! - `add`/`sub`: equal widths `w`, result `w + 1` (carry / borrow kept);
//!   `add_wrap`/`sub_wrap`: result `w`, explicitly modulo 2^w;
//! - `mul`: result `wa + wb`;
//! - shifts keep the operand's width (bits shifted out are the shift's meaning);
//! - narrowing only through `slice`/`truncate`, widening through `zext`/`sext`.

use super::builder::{ModuleBuilder, Signal};
use crate::bits::Bits;
use crate::ir::*;

impl ModuleBuilder {
    #[track_caller]
    fn op(&mut self, width: u32, op: Op) -> Signal {
        self.new_net(None, width, Driver::Op(op))
    }

    /// A placeholder of `width` bits returned after a recorded mistake, so that
    /// building can go on and `finish()` reports the first error.
    fn poison(&mut self, width: u32) -> Signal {
        self.op(width.max(1), Op::Const(Bits::zero(width.max(1))))
    }

    #[track_caller]
    fn width_error(&mut self, op: &str, detail: String) {
        self.error(
            None,
            HdlErrorKind::WidthMismatch {
                op: op.to_string(),
                detail,
            },
        );
    }

    #[track_caller]
    fn same_width(&mut self, op: &str, a: Signal, b: Signal) -> bool {
        if !self.owns(a) || !self.owns(b) {
            return false;
        }
        if a.width != b.width {
            let detail = format!(
                "`{}` is {} bits, `{}` is {} bits",
                self.describe(a),
                a.width,
                self.describe(b),
                b.width
            );
            self.width_error(op, detail);
            return false;
        }
        true
    }

    #[track_caller]
    fn one_bit(&mut self, op: &str, s: Signal) -> bool {
        if !self.owns(s) {
            return false;
        }
        if s.width != 1 {
            let detail = format!("`{}` must be 1 bit, is {} bits", self.describe(s), s.width);
            self.width_error(op, detail);
            return false;
        }
        true
    }

    /// A constant `value` of `width` bits; an error if it does not fit.
    #[track_caller]
    pub fn lit(&mut self, value: u64, width: u32) -> Signal {
        let width = self.check_width("literal", width);
        match Bits::from_u64(value, width) {
            Ok(b) => self.op(width, Op::Const(b)),
            Err(e) => {
                self.width_error("literal", e.to_string());
                self.poison(width)
            }
        }
    }

    /// A constant of arbitrary width.
    #[track_caller]
    pub fn constant(&mut self, value: &Bits) -> Signal {
        let width = self.check_width("constant", value.width());
        if width != value.width() {
            return self.poison(width);
        }
        self.op(width, Op::Const(value.clone()))
    }

    /// All zeros, `width` bits.
    #[track_caller]
    pub fn zeros(&mut self, width: u32) -> Signal {
        let width = self.check_width("zeros", width);
        self.op(width, Op::Const(Bits::zero(width)))
    }

    /// All ones, `width` bits.
    #[track_caller]
    pub fn ones(&mut self, width: u32) -> Signal {
        let width = self.check_width("ones", width);
        self.op(width, Op::Const(Bits::ones(width)))
    }

    /// Bitwise complement.
    #[track_caller]
    pub fn not(&mut self, a: Signal) -> Signal {
        if !self.owns(a) {
            return self.poison(a.width);
        }
        self.op(a.width, Op::Not(a.net))
    }

    #[track_caller]
    fn bitop(&mut self, name: &str, op: BitOp, a: Signal, b: Signal) -> Signal {
        if !self.same_width(name, a, b) {
            return self.poison(a.width);
        }
        self.op(a.width, Op::Bit(op, a.net, b.net))
    }

    /// Bitwise and (equal widths).
    #[track_caller]
    pub fn and(&mut self, a: Signal, b: Signal) -> Signal {
        self.bitop("and", BitOp::And, a, b)
    }

    /// Bitwise or (equal widths).
    #[track_caller]
    pub fn or(&mut self, a: Signal, b: Signal) -> Signal {
        self.bitop("or", BitOp::Or, a, b)
    }

    /// Bitwise exclusive or (equal widths).
    #[track_caller]
    pub fn xor(&mut self, a: Signal, b: Signal) -> Signal {
        self.bitop("xor", BitOp::Xor, a, b)
    }

    /// And of all `values` (equal widths; at least one). Three or more flags (1 bit
    /// each) are one reduction of their concatenation, `&{a, b, c}`.
    #[track_caller]
    pub fn and_all(&mut self, values: &[Signal]) -> Signal {
        if values.len() >= 3 && values.iter().all(|v| v.width == 1) {
            let flags = self.concat(values);
            return self.reduce_and(flags);
        }
        self.fold("and_all", values, Self::and)
    }

    /// Or of all `values` (equal widths; at least one). Three or more flags (1 bit
    /// each) are one reduction of their concatenation, `|{a, b, c}`.
    #[track_caller]
    pub fn or_all(&mut self, values: &[Signal]) -> Signal {
        if values.len() >= 3 && values.iter().all(|v| v.width == 1) {
            let flags = self.concat(values);
            return self.reduce_or(flags);
        }
        self.fold("or_all", values, Self::or)
    }

    /// The sum of equal-width `values` modulo 2^w, as a balanced tree of
    /// [`add_wrap`](Self::add_wrap)s pairing (0,1), (2,3), … at each level (an odd
    /// value passes to the next level). The caller sizes `w` for the sum; no
    /// operands is a width error.
    #[track_caller]
    pub fn add_tree_wrap(&mut self, values: &[Signal]) -> Signal {
        if values.is_empty() {
            self.width_error("add_tree_wrap", "no operands".into());
            return self.poison(1);
        }
        let mut level = values.to_vec();
        self.located(|m| {
            while level.len() > 1 {
                level = level
                    .chunks(2)
                    .map(|pair| match *pair {
                        [a, b] => m.add_wrap(a, b),
                        [a] => a,
                        _ => unreachable!("chunks(2) yields one or two values"),
                    })
                    .collect();
            }
        });
        level[0]
    }

    #[track_caller]
    fn fold(
        &mut self,
        name: &str,
        values: &[Signal],
        f: fn(&mut Self, Signal, Signal) -> Signal,
    ) -> Signal {
        let Some((first, rest)) = values.split_first() else {
            self.width_error(name, "no operands".into());
            return self.poison(1);
        };
        self.located(|m| rest.iter().fold(*first, |acc, v| f(m, acc, *v)))
    }

    #[track_caller]
    fn arith(&mut self, name: &str, op: ArithOp, a: Signal, b: Signal, width: u32) -> Signal {
        if !self.owns(a) || !self.owns(b) {
            return self.poison(width);
        }
        let width = self.check_width(name, width);
        self.op(width, Op::Arith(op, a.net, b.net))
    }

    /// `a + b` for equal widths `w`; the result has `w + 1` bits (carry kept).
    #[track_caller]
    pub fn add(&mut self, a: Signal, b: Signal) -> Signal {
        if !self.same_width("add", a, b) {
            return self.poison(a.width + 1);
        }
        self.arith("add", ArithOp::Add, a, b, a.width + 1)
    }

    /// `a + b` modulo 2^w for equal widths `w` (explicit wrap-around).
    #[track_caller]
    pub fn add_wrap(&mut self, a: Signal, b: Signal) -> Signal {
        if !self.same_width("add_wrap", a, b) {
            return self.poison(a.width);
        }
        self.arith("add_wrap", ArithOp::Add, a, b, a.width)
    }

    /// `a - b` for equal widths `w`; the result has `w + 1` bits, two's complement
    /// (its MSB is the borrow: set when `b > a`).
    #[track_caller]
    pub fn sub(&mut self, a: Signal, b: Signal) -> Signal {
        if !self.same_width("sub", a, b) {
            return self.poison(a.width + 1);
        }
        self.arith("sub", ArithOp::Sub, a, b, a.width + 1)
    }

    /// `a - b` modulo 2^w for equal widths `w` (explicit wrap-around).
    #[track_caller]
    pub fn sub_wrap(&mut self, a: Signal, b: Signal) -> Signal {
        if !self.same_width("sub_wrap", a, b) {
            return self.poison(a.width);
        }
        self.arith("sub_wrap", ArithOp::Sub, a, b, a.width)
    }

    /// Unsigned `a * b`; the result has `wa + wb` bits.
    #[track_caller]
    pub fn mul(&mut self, a: Signal, b: Signal) -> Signal {
        self.arith("mul", ArithOp::Mul, a, b, a.width + b.width)
    }

    /// `a + value` modulo 2^w: a counter's increment.
    #[track_caller]
    pub fn add_const_wrap(&mut self, a: Signal, value: u64) -> Signal {
        let c = self.lit(value, a.width);
        self.add_wrap(a, c)
    }

    /// `a - value` modulo 2^w: a length less a header, a count less one.
    #[track_caller]
    pub fn sub_const_wrap(&mut self, a: Signal, value: u64) -> Signal {
        let c = self.lit(value, a.width);
        self.sub_wrap(a, c)
    }

    #[track_caller]
    fn cmp(&mut self, name: &str, op: CmpOp, a: Signal, b: Signal) -> Signal {
        if !self.same_width(name, a, b) {
            return self.poison(1);
        }
        self.op(1, Op::Cmp(op, a.net, b.net))
    }

    /// `a == b` (1 bit).
    #[track_caller]
    pub fn eq(&mut self, a: Signal, b: Signal) -> Signal {
        self.cmp("eq", CmpOp::Eq, a, b)
    }

    /// `a != b` (1 bit).
    #[track_caller]
    pub fn ne(&mut self, a: Signal, b: Signal) -> Signal {
        self.cmp("ne", CmpOp::Ne, a, b)
    }

    /// `a == value` (1 bit); an error if `value` does not fit `a`.
    #[track_caller]
    pub fn eq_const(&mut self, a: Signal, value: u64) -> Signal {
        let c = self.lit(value, a.width);
        self.eq(a, c)
    }

    /// Unsigned `a < b`.
    #[track_caller]
    pub fn lt(&mut self, a: Signal, b: Signal) -> Signal {
        self.cmp("lt", CmpOp::LtU, a, b)
    }

    /// Unsigned `a <= b`.
    #[track_caller]
    pub fn le(&mut self, a: Signal, b: Signal) -> Signal {
        self.cmp("le", CmpOp::LeU, a, b)
    }

    /// Unsigned `a > b`.
    #[track_caller]
    pub fn gt(&mut self, a: Signal, b: Signal) -> Signal {
        self.cmp("gt", CmpOp::LtU, b, a)
    }

    /// Unsigned `a >= b`.
    #[track_caller]
    pub fn ge(&mut self, a: Signal, b: Signal) -> Signal {
        self.cmp("ge", CmpOp::LeU, b, a)
    }

    /// Two's complement `a < b`.
    #[track_caller]
    pub fn lt_signed(&mut self, a: Signal, b: Signal) -> Signal {
        self.cmp("lt_signed", CmpOp::LtS, a, b)
    }

    /// Two's complement `a <= b`.
    #[track_caller]
    pub fn le_signed(&mut self, a: Signal, b: Signal) -> Signal {
        self.cmp("le_signed", CmpOp::LeS, a, b)
    }

    /// Two's complement `a > b`.
    #[track_caller]
    pub fn gt_signed(&mut self, a: Signal, b: Signal) -> Signal {
        self.cmp("gt_signed", CmpOp::LtS, b, a)
    }

    /// Two's complement `a >= b`.
    #[track_caller]
    pub fn ge_signed(&mut self, a: Signal, b: Signal) -> Signal {
        self.cmp("ge_signed", CmpOp::LeS, b, a)
    }

    /// `sel ? if_true : if_false` (`sel` 1 bit, arms of equal width).
    #[track_caller]
    pub fn mux(&mut self, sel: Signal, if_true: Signal, if_false: Signal) -> Signal {
        if !self.one_bit("mux select", sel) || !self.same_width("mux", if_true, if_false) {
            return self.poison(if_true.width);
        }
        self.op(
            if_true.width,
            Op::Mux {
                sel: sel.net,
                if_true: if_true.net,
                if_false: if_false.net,
            },
        )
    }

    /// Priority select: the value of the first `(condition, value)` whose condition
    /// is 1, else `default`.
    #[track_caller]
    pub fn select(&mut self, cases: &[(Signal, Signal)], default: Signal) -> Signal {
        self.located(|m| {
            cases
                .iter()
                .rev()
                .fold(default, |acc, (c, v)| m.mux(*c, *v, acc))
        })
    }

    /// `values[index]` (index unsigned; an index past the end gives `values[last]`).
    #[track_caller]
    pub fn index(&mut self, index: Signal, values: &[Signal]) -> Signal {
        let Some(last) = values.last().copied() else {
            self.width_error("index", "no values to select from".into());
            return self.poison(1);
        };
        let cases: Vec<(Signal, Signal)> = self.located(|m| {
            values[..values.len() - 1]
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let hit = if index.width < 64 && (i as u64) >= (1u64 << index.width) {
                        m.lit(0, 1)
                    } else {
                        m.eq_const(index, i as u64)
                    };
                    (hit, *v)
                })
                .collect()
        });
        self.select(&cases, last)
    }

    /// Bits `[lo + width - 1 : lo]` of `a`.
    #[track_caller]
    pub fn slice(&mut self, a: Signal, lo: u32, width: u32) -> Signal {
        if !self.owns(a) {
            return self.poison(width);
        }
        let width = self.check_width("slice", width);
        if lo.checked_add(width).is_none_or(|hi| hi > a.width) {
            let detail = format!(
                "bits [{}:{}] of `{}`, which has {} bits",
                lo as u64 + width as u64 - 1,
                lo,
                self.describe(a),
                a.width
            );
            self.width_error("slice", detail);
            return self.poison(width);
        }
        if lo == 0 && width == a.width {
            return a;
        }
        self.op(width, Op::Slice { src: a.net, lo })
    }

    /// Bit `i` of `a`.
    #[track_caller]
    pub fn bit(&mut self, a: Signal, i: u32) -> Signal {
        self.slice(a, i, 1)
    }

    /// The most significant bit of `a`.
    #[track_caller]
    pub fn msb(&mut self, a: Signal) -> Signal {
        self.slice(a, a.width.max(1) - 1, 1)
    }

    /// The low `width` bits of `a` (an explicit narrowing).
    #[track_caller]
    pub fn truncate(&mut self, a: Signal, width: u32) -> Signal {
        self.slice(a, 0, width)
    }

    /// Concatenation, most significant part first (like Verilog `{a, b}`).
    #[track_caller]
    pub fn concat(&mut self, parts: &[Signal]) -> Signal {
        if parts.is_empty() {
            self.width_error("concat", "no parts".into());
            return self.poison(1);
        }
        if parts.len() == 1 {
            return parts[0];
        }
        if !parts.iter().all(|p| self.owns(*p)) {
            return self.poison(1);
        }
        let width: u64 = parts.iter().map(|p| p.width as u64).sum();
        let width = self.check_width("concat", width.min(u32::MAX as u64) as u32);
        self.op(width, Op::Concat(parts.iter().map(|p| p.net).collect()))
    }

    /// Concatenation with `lanes[0]` in the least significant bits: the natural order
    /// for a bus of lanes (lane `i` at bits `[w*i + w - 1 : w*i]`).
    #[track_caller]
    pub fn join_lanes(&mut self, lanes: &[Signal]) -> Signal {
        let msb_first: Vec<Signal> = lanes.iter().rev().copied().collect();
        self.concat(&msb_first)
    }

    /// Splits `a` into lanes of `lane_width` bits, lane 0 the least significant.
    #[track_caller]
    pub fn split_lanes(&mut self, a: Signal, lane_width: u32) -> Vec<Signal> {
        if lane_width == 0 || !a.width.is_multiple_of(lane_width) {
            let detail = format!(
                "`{}` ({} bits) does not split into {lane_width}-bit lanes",
                self.describe(a),
                a.width
            );
            self.width_error("split_lanes", detail);
            return vec![];
        }
        self.located(|m| {
            (0..a.width / lane_width)
                .map(|i| m.slice(a, i * lane_width, lane_width))
                .collect()
        })
    }

    /// `count` copies of `a` side by side.
    #[track_caller]
    pub fn replicate(&mut self, a: Signal, count: u32) -> Signal {
        if !self.owns(a) {
            return self.poison(1);
        }
        let width = self.check_width("replicate", a.width.saturating_mul(count));
        if count == 1 {
            return a;
        }
        self.op(width, Op::Replicate { src: a.net, count })
    }

    #[track_caller]
    fn extend(&mut self, name: &str, a: Signal, width: u32, signed: bool) -> Signal {
        if !self.owns(a) {
            return self.poison(width);
        }
        let width = self.check_width(name, width);
        if width < a.width {
            let detail = format!(
                "cannot extend `{}` ({} bits) to {width} bits; use truncate to narrow",
                self.describe(a),
                a.width
            );
            self.width_error(name, detail);
            return self.poison(width);
        }
        if width == a.width {
            return a;
        }
        self.op(width, Op::Extend { src: a.net, signed })
    }

    /// Zero-extends `a` to `width` bits (`width >= a.width()`).
    #[track_caller]
    pub fn zext(&mut self, a: Signal, width: u32) -> Signal {
        self.extend("zext", a, width, false)
    }

    /// Sign-extends `a` to `width` bits (`width >= a.width()`).
    #[track_caller]
    pub fn sext(&mut self, a: Signal, width: u32) -> Signal {
        self.extend("sext", a, width, true)
    }

    #[track_caller]
    fn shift(&mut self, op: ShiftOp, a: Signal, amount: ShiftAmount) -> Signal {
        if !self.owns(a) {
            return self.poison(a.width);
        }
        self.op(
            a.width,
            Op::Shift {
                op,
                src: a.net,
                amount,
            },
        )
    }

    /// `a << n` (same width, zeros in).
    #[track_caller]
    pub fn shl(&mut self, a: Signal, n: u32) -> Signal {
        self.shift(ShiftOp::Left, a, ShiftAmount::Const(n))
    }

    /// `a >> n` logical (same width, zeros in).
    #[track_caller]
    pub fn shr(&mut self, a: Signal, n: u32) -> Signal {
        self.shift(ShiftOp::RightLogical, a, ShiftAmount::Const(n))
    }

    /// `a >>> n` arithmetic (same width, sign bits in).
    #[track_caller]
    pub fn sra(&mut self, a: Signal, n: u32) -> Signal {
        self.shift(ShiftOp::RightArithmetic, a, ShiftAmount::Const(n))
    }

    #[track_caller]
    fn shift_by(&mut self, op: ShiftOp, a: Signal, amount: Signal) -> Signal {
        if !self.owns(amount) {
            return self.poison(a.width);
        }
        self.shift(op, a, ShiftAmount::Net(amount.net))
    }

    /// `a << amount` (amount unsigned; same width; amounts ≥ width give 0).
    #[track_caller]
    pub fn shl_by(&mut self, a: Signal, amount: Signal) -> Signal {
        self.shift_by(ShiftOp::Left, a, amount)
    }

    /// `a >> amount` logical (amounts ≥ width give 0).
    #[track_caller]
    pub fn shr_by(&mut self, a: Signal, amount: Signal) -> Signal {
        self.shift_by(ShiftOp::RightLogical, a, amount)
    }

    /// `a >>> amount` arithmetic (amounts ≥ width give all sign bits).
    #[track_caller]
    pub fn sra_by(&mut self, a: Signal, amount: Signal) -> Signal {
        self.shift_by(ShiftOp::RightArithmetic, a, amount)
    }

    #[track_caller]
    fn reduce(&mut self, op: ReduceOp, a: Signal) -> Signal {
        if !self.owns(a) {
            return self.poison(1);
        }
        self.op(1, Op::Reduce(op, a.net))
    }

    /// 1 if every bit of `a` is 1.
    #[track_caller]
    pub fn reduce_and(&mut self, a: Signal) -> Signal {
        self.reduce(ReduceOp::And, a)
    }

    /// 1 if any bit of `a` is 1.
    #[track_caller]
    pub fn reduce_or(&mut self, a: Signal) -> Signal {
        self.reduce(ReduceOp::Or, a)
    }

    /// Parity: 1 if an odd number of bits of `a` are 1.
    #[track_caller]
    pub fn reduce_xor(&mut self, a: Signal) -> Signal {
        self.reduce(ReduceOp::Xor, a)
    }

    /// Number of leading zeros of `a` (counting from the MSB; `a.width()` if `a` is 0),
    /// `bits_for(a.width())` bits wide.
    #[track_caller]
    pub fn leading_zeros(&mut self, a: Signal) -> Signal {
        if !self.owns(a) {
            return self.poison(1);
        }
        self.op(bits_for(a.width), Op::LeadingZeros(a.net))
    }

    /// Number of 1 bits in `a`, `bits_for(a.width())` bits wide (a balanced adder tree).
    #[track_caller]
    pub fn popcount(&mut self, a: Signal) -> Signal {
        let out_width = bits_for(a.width);
        let mut level: Vec<Signal> = self.located(|m| (0..a.width).map(|i| m.bit(a, i)).collect());
        while level.len() > 1 {
            let mut next = Vec::with_capacity(level.len().div_ceil(2));
            for pair in level.chunks(2) {
                match pair {
                    [x, y] => {
                        let w = x.width.max(y.width);
                        let (x, y) = (self.zext(*x, w), self.zext(*y, w));
                        next.push(self.add(x, y));
                    }
                    [x] => next.push(*x),
                    _ => unreachable!("chunks(2)"),
                }
            }
            level = next;
        }
        let total = level.pop().unwrap_or_else(|| self.zeros(1));
        if total.width >= out_width {
            self.truncate(total, out_width)
        } else {
            self.zext(total, out_width)
        }
    }
}

/// Bits needed to hold the numbers `0 ..= n` (at least 1).
pub fn bits_for(n: u32) -> u32 {
    (32 - n.leading_zeros()).max(1)
}
