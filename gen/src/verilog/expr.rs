//! Verilog expressions for the IR's combinational operations, written so that every
//! expression has exactly the width of the net it drives (no WIDTH warnings) and so
//! that the bits each expression reads are recorded for the `_unused_ok` line.
//!
//! An operand is either a net's name or, when the [inlining plan](super::inline) says
//! so, the operand's own expression, parenthesized where Verilog's precedence needs it.
//! Every expression's natural (self-determined) width is its net's width, and every
//! operand sits where the context width is its own, so inlining never changes a width.

use super::fold::Folds;
use super::inline::{Plan, Recorder, Slot};
use super::names::{ModuleNames, Namespace};
use super::unused::Usage;
use crate::GenError;
use hdl::ir::{ArithOp, BitOp, CmpOp, Driver, NetId, Op, ReduceOp, ShiftAmount, ShiftOp};
use hdl::{Bits, Module};

/// Literals up to this many bits spell every hex digit (`7'h01`); a wider zero
/// is written `W'h0`, so that a reviewer reads a cleared bus, not a count of
/// dozens of zeros.
const SPELLED_ZERO_MAX_WIDTH: u32 = 64;

/// A Verilog literal of exactly `b`'s width: `W'h...`, every digit spelled, but
/// a zero wider than [`SPELLED_ZERO_MAX_WIDTH`] bits as `W'h0`.
pub(crate) fn literal(b: &Bits) -> String {
    if b.width() > SPELLED_ZERO_MAX_WIDTH && b.is_zero() {
        return zeros(b.width());
    }
    format!("{}'h{}", b.width(), b.to_hex())
}

/// `width` zero bits as a literal.
pub(crate) fn zeros(width: u32) -> String {
    format!("{width}'h0")
}

/// Bits `hi..=lo` of a signal called `name` that is `width` bits wide: the bare name for
/// all bits (1-bit nets are scalars and must not be indexed), `name[i]` or `name[hi:lo]`.
pub(crate) fn select(name: &str, width: u32, hi: u32, lo: u32) -> String {
    if lo == 0 && hi + 1 == width {
        name.to_string()
    } else if hi == lo {
        format!("{name}[{hi}]")
    } else {
        format!("{name}[{hi}:{lo}]")
    }
}

/// `expr` (of `from` bits) zero-extended to `to` bits with an explicit concatenation.
pub(crate) fn zext(expr: &str, from: u32, to: u32) -> String {
    match to.saturating_sub(from) {
        0 => expr.to_string(),
        1 => format!("{{1'b0, {expr}}}"),
        n => format!("{{{{{n}{{1'b0}}}}, {expr}}}"),
    }
}

/// The literal that decides an unsigned comparison from one side.
#[derive(Clone, Copy, Debug)]
enum Bound {
    /// All zeros.
    Zero,
    /// All ones.
    Max,
}

/// Binding strength of an expression's outermost operator (Verilog-2005 Table 5-4;
/// higher binds tighter). `&`, `^` and `|` share one level here, so that mixing them
/// is always parenthesized.
pub(crate) mod prec {
    /// Names, literals, selects, concatenations, function calls, parenthesized text.
    pub(crate) const PRIMARY: u8 = 100;
    /// `~x` and the reductions `&x`, `|x`, `^x`.
    pub(crate) const UNARY: u8 = 90;
    /// `*`.
    pub(crate) const MUL: u8 = 80;
    /// `+`, `-`.
    pub(crate) const ADD: u8 = 70;
    /// `<<`, `>>`, `>>>`.
    pub(crate) const SHIFT: u8 = 60;
    /// `<`, `<=`.
    pub(crate) const REL: u8 = 50;
    /// `==`, `!=`.
    pub(crate) const EQ: u8 = 40;
    /// `&`, `^`, `|`.
    pub(crate) const BIT: u8 = 30;
    /// `? :`.
    pub(crate) const COND: u8 = 10;
    /// Operands of binary operators and mux conditions bind here: anything but an atom
    /// or a unary operation is parenthesized, `(a + b) & c` rather than `a + b & c`,
    /// whatever the precedence table would allow.
    pub(crate) const OPERAND: u8 = UNARY - 1;
    /// Inside `{…}` or `(…)`: nothing needs parentheses.
    pub(crate) const NONE: u8 = 0;
}

/// A Verilog expression and what its consumer needs to know to embed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Expr {
    /// The text.
    pub(crate) text: String,
    /// Binding strength of its outermost operator (see [`prec`]).
    pub(crate) prec: u8,
    /// A self-determined atom (name, literal, select, concatenation): safe as the
    /// argument of `$signed(…)` whatever the tool makes of that argument's width.
    pub(crate) atom: bool,
    /// Its Verilog type is signed (`$signed(x) >>> n`): never inlined, since an
    /// unsigned neighbour would turn the arithmetic shift into a logical one.
    pub(crate) signed: bool,
}

impl Expr {
    /// An expression of binding strength `prec`, not an atom, unsigned.
    fn op(text: String, prec: u8) -> Self {
        Expr {
            text,
            prec,
            atom: false,
            signed: false,
        }
    }

    /// A self-determined atom (name, literal, select, concatenation).
    fn atom(text: String) -> Self {
        Expr {
            text,
            prec: prec::PRIMARY,
            atom: true,
            signed: false,
        }
    }
}

/// Net references of one module: names nets and records which of their bits are read.
pub(crate) struct Refs<'a> {
    /// The module being emitted.
    pub(crate) m: &'a Module,
    /// Its Verilog names.
    pub(crate) names: &'a ModuleNames,
    /// Bits read so far.
    pub(crate) usage: Usage,
    /// Identifiers taken in the module; helper signals draw fresh names from here.
    pub(crate) space: Namespace,
    /// The first pass records every reference to every net here.
    pub(crate) recorder: Option<Recorder>,
    /// The second pass writes the nets this plan inlines as expressions.
    pub(crate) plan: Option<&'a Plan>,
    /// Which nets Verilator may fold to constants (for how orders are written).
    pub(crate) folds: &'a Folds<'a>,
}

impl Refs<'_> {
    /// Records a reference to `net` (first pass only).
    fn record(&mut self, net: NetId, slot: Slot) {
        if let Some(r) = &mut self.recorder {
            r.reference(net, slot);
        }
    }

    /// True if `net` is written as its expression rather than its name.
    pub(crate) fn is_inlined(&self, net: NetId) -> bool {
        self.plan.is_some_and(|p| p.inlined(net))
    }

    /// True if `net` is left out of the module: nothing written reads it.
    pub(crate) fn is_dead(&self, net: NetId) -> bool {
        self.plan.is_some_and(|p| p.dead(net))
    }

    /// `net` as an operand that binds at `bind`: its name, or (when inlined) its
    /// expression, parenthesized unless it binds tighter than `bind`.
    pub(crate) fn operand(&mut self, net: NetId, bind: u8) -> Result<String, GenError> {
        self.record(net, Slot::Operand { atom_only: false });
        self.usage.read_all(net);
        if !self.is_inlined(net) {
            return Ok(self.names.net(net).to_string());
        }
        let e = self.inline_expr(net)?;
        Ok(if e.prec <= bind {
            format!("({})", e.text)
        } else {
            e.text
        })
    }

    /// `x` zero-extended to `to` bits (`{1'b0, x}`, `{{n{1'b0}}, x}`). An inlined zero
    /// extension is merged into this one: `{{2{1'b0}}, t}`, not `{1'b0, {1'b0, t}}`;
    /// an inlined literal is written at the wider width: `6'h10`, not `{1'b0, 5'h10}`.
    fn zext_operand(&mut self, x: NetId, to: u32) -> Result<String, GenError> {
        if self.is_inlined(x) {
            match &self.m.net(x).driver {
                Driver::Op(Op::Extend { src, signed: false })
                    if self.width(*src) <= self.width(x) =>
                {
                    let src = *src;
                    self.usage.read_all(x);
                    return self.zext_operand(src, to);
                }
                Driver::Op(Op::Const(k)) if k.width() <= to => {
                    let wide = Bits::from_words(&k.to_words(), to);
                    self.record(x, Slot::Operand { atom_only: false });
                    self.usage.read_all(x);
                    return Ok(literal(&wide));
                }
                _ => {}
            }
        }
        let wx = self.width(x);
        Ok(zext(&self.operand(x, prec::NONE)?, wx, to))
    }

    /// `net` as the argument of `$signed(…)`: its name, or its expression when that is
    /// a self-determined atom (the plan inlines nothing else here).
    fn atom_operand(&mut self, net: NetId) -> Result<String, GenError> {
        self.name_or_text(net, Slot::Operand { atom_only: true })
    }

    /// `net`, read whole in `slot`: its name, or its expression's text when the
    /// plan inlines it, which it does in these slots only for atoms and literals,
    /// which need no parentheses.
    fn name_or_text(&mut self, net: NetId, slot: Slot) -> Result<String, GenError> {
        self.record(net, slot);
        self.usage.read_all(net);
        if !self.is_inlined(net) {
            return Ok(self.names.net(net).to_string());
        }
        Ok(self.inline_expr(net)?.text)
    }

    /// The expression of an inlined net (an operation other than leading zeros).
    fn inline_expr(&mut self, net: NetId) -> Result<Expr, GenError> {
        match &self.m.net(net).driver {
            hdl::ir::Driver::Op(op) => self.op_expr(net, op),
            _ => Err(self.malformed(net, "only operations can be inlined".into())),
        }
    }

    /// Width of `net`.
    pub(crate) fn width(&self, net: NetId) -> u32 {
        self.m.net(net).width
    }

    /// `net` as an instance's input: a literal when the plan inlines it, else its
    /// name.
    pub(crate) fn connection(&mut self, net: NetId) -> Result<String, GenError> {
        self.name_or_text(net, Slot::Connection)
    }

    /// The whole of `net` by name, read.
    pub(crate) fn all(&mut self, net: NetId) -> String {
        self.record(net, Slot::Name);
        self.usage.read_all(net);
        self.names.net(net).to_string()
    }

    /// Bits `hi..=lo` of `net`, read.
    pub(crate) fn bits(&mut self, net: NetId, hi: u32, lo: u32) -> String {
        self.record(net, Slot::Name);
        self.usage.read(net, lo, hi + 1);
        select(self.names.net(net), self.width(net), hi, lo)
    }

    /// The most significant bit of `net`, read.
    pub(crate) fn msb(&mut self, net: NetId) -> String {
        let w = self.width(net);
        self.bits(net, w - 1, w - 1)
    }

    /// An error about `net` in this module.
    pub(crate) fn malformed(&self, net: NetId, reason: String) -> GenError {
        GenError::Malformed {
            module: self.m.name.clone(),
            signal: self.m.describe_net(net),
            reason,
        }
    }

    /// Checks `operand` is `want` bits wide (an IR invariant of the op driving `net`).
    fn expect_width(&self, net: NetId, operand: NetId, want: u32) -> Result<(), GenError> {
        let got = self.width(operand);
        if got != want {
            return Err(self.malformed(
                net,
                format!(
                    "operand `{}` is {got} bits, expected {want}",
                    self.m.describe_net(operand)
                ),
            ));
        }
        Ok(())
    }

    /// The expression for `op`, which drives `net`: exactly `net`'s width.
    /// `Op::LeadingZeros` has no single expression and is emitted by `lzc`.
    pub(crate) fn op_expr(&mut self, net: NetId, op: &Op) -> Result<Expr, GenError> {
        let w = self.width(net);
        Ok(match op {
            Op::Const(b) => {
                if b.width() != w {
                    let reason = format!("constant of {} bits drives {w} bits", b.width());
                    return Err(self.malformed(net, reason));
                }
                Expr::atom(literal(b))
            }
            Op::Not(a) => {
                self.expect_width(net, *a, w)?;
                // Only an atom follows `~` bare: `~&x` would read as a reduction nand.
                let a = self.operand(*a, prec::UNARY)?;
                Expr::op(format!("~{a}"), prec::UNARY)
            }
            Op::Bit(op, a, b) => {
                self.expect_width(net, *a, w)?;
                self.expect_width(net, *b, w)?;
                let sym = match op {
                    BitOp::And => "&",
                    BitOp::Or => "|",
                    BitOp::Xor => "^",
                };
                let (a, b) = (
                    self.operand(*a, prec::OPERAND)?,
                    self.operand(*b, prec::OPERAND)?,
                );
                Expr::op(format!("{a} {sym} {b}"), prec::BIT)
            }
            Op::Arith(op, a, b) => self.arith(net, *op, *a, *b)?,
            Op::Cmp(op, a, b) => self.compare(net, *op, *a, *b)?,
            Op::Mux {
                sel,
                if_true,
                if_false,
            } => {
                self.expect_width(net, *sel, 1)?;
                self.expect_width(net, *if_true, w)?;
                self.expect_width(net, *if_false, w)?;
                let s = self.operand(*sel, prec::OPERAND)?;
                let t = self.operand(*if_true, prec::COND)?;
                let f = self.operand(*if_false, prec::COND)?;
                Expr::op(format!("{s} ? {t} : {f}"), prec::COND)
            }
            Op::Slice { src, lo } => {
                let ws = self.width(*src);
                if lo.checked_add(w).is_none_or(|end| end > ws) {
                    let reason = format!("slice [{}+:{w}] of a {ws}-bit net", lo);
                    return Err(self.malformed(net, reason));
                }
                Expr::atom(self.bits(*src, lo + w - 1, *lo))
            }
            Op::Concat(parts) => {
                let total: u64 = parts.iter().map(|p| self.width(*p) as u64).sum();
                if parts.is_empty() || total != w as u64 {
                    let reason = format!("concatenation of {total} bits drives {w} bits");
                    return Err(self.malformed(net, reason));
                }
                if let [only] = parts.as_slice() {
                    return Ok(Expr::atom(self.all(*only)));
                }
                let items = parts
                    .iter()
                    .map(|p| self.operand(*p, prec::NONE))
                    .collect::<Result<Vec<_>, _>>()?;
                Expr::atom(format!("{{{}}}", items.join(", ")))
            }
            Op::Replicate { src, count } => {
                if *count == 0 || self.width(*src) as u64 * *count as u64 != w as u64 {
                    let reason = format!("{count} copies of a {}-bit net", self.width(*src));
                    return Err(self.malformed(net, reason));
                }
                if *count == 1 {
                    Expr::atom(self.all(*src))
                } else {
                    let a = self.operand(*src, prec::NONE)?;
                    Expr::atom(format!("{{{count}{{{a}}}}}"))
                }
            }
            Op::Extend { src, signed } => self.extend(net, *src, *signed)?,
            Op::Shift { op, src, amount } => {
                self.expect_width(net, *src, w)?;
                match amount {
                    ShiftAmount::Const(n) => Expr::atom(self.const_shift(*op, *src, *n)),
                    ShiftAmount::Net(amt) => self.shift(*op, *src, *amt)?,
                }
            }
            Op::Reduce(op, a) => {
                self.expect_width(net, net, 1)?;
                let sym = match op {
                    ReduceOp::And => "&",
                    ReduceOp::Or => "|",
                    ReduceOp::Xor => "^",
                };
                let a = self.operand(*a, prec::UNARY)?;
                Expr::op(format!("{sym}{a}"), prec::UNARY)
            }
            Op::LeadingZeros(_) => {
                return Err(self.malformed(net, "leading-zeros has no single expression".into()))
            }
        })
    }

    /// Add, subtract or multiply: operands zero-extended to the result width, a
    /// narrower one inside a concatenation (self-determined), an equal one bare.
    fn arith(&mut self, net: NetId, op: ArithOp, a: NetId, b: NetId) -> Result<Expr, GenError> {
        let w = self.width(net);
        let (wa, wb) = (self.width(a), self.width(b));
        if wa > w || wb > w {
            let reason = format!("operands of {wa} and {wb} bits exceed the result's {w}");
            return Err(self.malformed(net, reason));
        }
        let (sym, p) = match op {
            ArithOp::Add => ("+", prec::ADD),
            ArithOp::Sub => ("-", prec::ADD),
            ArithOp::Mul => ("*", prec::MUL),
        };
        let mut side = |x: NetId, wx: u32| -> Result<String, GenError> {
            if wx == w {
                self.operand(x, prec::OPERAND)
            } else {
                self.zext_operand(x, w)
            }
        };
        let ea = side(a, wa)?;
        let eb = side(b, wb)?;
        Ok(Expr::op(format!("{ea} {sym} {eb}"), p))
    }

    /// A comparison (1 bit). An unsigned order is written plainly when neither side
    /// can fold to the literal that decides it; otherwise as a signed compare of
    /// zero-extended operands: Verilator folds constants through wires and logic and
    /// then reports `x < 0` or `x <= MAX` as UNSIGNED/CMPCONST; signed compares are
    /// never reported, and synthesis removes the extra bit.
    fn compare(&mut self, net: NetId, op: CmpOp, a: NetId, b: NetId) -> Result<Expr, GenError> {
        let wa = self.width(a);
        self.expect_width(net, b, wa)?;
        self.expect_width(net, net, 1)?;
        let (sym, p) = match op {
            CmpOp::Eq => ("==", prec::EQ),
            CmpOp::Ne => ("!=", prec::EQ),
            CmpOp::LtU | CmpOp::LtS => ("<", prec::REL),
            CmpOp::LeU | CmpOp::LeS => ("<=", prec::REL),
        };
        let text = match op {
            CmpOp::Eq | CmpOp::Ne => {
                let (ea, eb) = (
                    self.operand(a, prec::OPERAND)?,
                    self.operand(b, prec::OPERAND)?,
                );
                format!("{ea} {sym} {eb}")
            }
            CmpOp::LtU | CmpOp::LeU if self.order_is_variable(op, a, b) => {
                let (ea, eb) = (self.operand(a, prec::REL)?, self.operand(b, prec::REL)?);
                format!("{ea} {sym} {eb}")
            }
            CmpOp::LtU | CmpOp::LeU => {
                let ea = self.zext_operand(a, wa + 1)?;
                let eb = self.zext_operand(b, wa + 1)?;
                format!("$signed({ea}) {sym} $signed({eb})")
            }
            CmpOp::LtS | CmpOp::LeS => {
                let (ea, eb) = (self.atom_operand(a)?, self.atom_operand(b)?);
                format!("$signed({ea}) {sym} $signed({eb})")
            }
        };
        Ok(Expr::op(text, p))
    }

    /// True if the unsigned comparison `a op b` can be neither constant nor folded to a
    /// constant by Verilator, so it may be written plainly (`a < b`): each side
    /// varies (see [`Folds`]), or is a literal other than the bound (0, all ones) that
    /// would decide the comparison, and the sides are not the same tree.
    fn order_is_variable(&self, op: CmpOp, a: NetId, b: NetId) -> bool {
        let (left_bound_decides, right_bound_decides) = match op {
            // `0 < x` varies; `MAX < x` is false. `x < 0` is false; `x < MAX` varies.
            CmpOp::LtU => (Bound::Max, Bound::Zero),
            // `0 <= x` is true; `x <= MAX` is true.
            _ => (Bound::Zero, Bound::Max),
        };
        !self.folds.may_be_same(a, b)
            && self.side_varies(a, b, left_bound_decides)
            && self.side_varies(b, a, right_bound_decides)
    }

    /// True if `side` of a comparison with `other` varies, or is a literal that is not
    /// `bound` compared with a varying `other`.
    fn side_varies(&self, side: NetId, other: NetId, bound: Bound) -> bool {
        if self.folds.value(side).varies() {
            return true;
        }
        let Driver::Op(Op::Const(k)) = &self.m.net(side).driver else {
            return false;
        };
        let decides = match bound {
            Bound::Zero => k.is_zero(),
            Bound::Max => k.is_ones(),
        };
        !decides && self.folds.value(other).varies()
    }

    /// Zero- or sign-extension of `src` to `net`'s width.
    fn extend(&mut self, net: NetId, src: NetId, signed: bool) -> Result<Expr, GenError> {
        let w = self.width(net);
        let ws = self.width(src);
        if ws > w {
            let reason = format!("extension of a {ws}-bit net to {w} bits");
            return Err(self.malformed(net, reason));
        }
        Ok(match (w - ws, signed) {
            (0, _) => Expr::atom(self.all(src)),
            (_, false) => Expr::atom(self.zext_operand(src, w)?),
            (n, true) => {
                let a = self.all(src);
                let sign = self.msb(src);
                if n == 1 {
                    Expr::atom(format!("{{{sign}, {a}}}"))
                } else {
                    Expr::atom(format!("{{{{{n}{{{sign}}}}}, {a}}}"))
                }
            }
        })
    }

    /// A shift by the amount a net holds: `<<`, `>>`, or `$signed(x) >>> n`, a signed
    /// expression that always stays a wire of its own.
    fn shift(&mut self, op: ShiftOp, src: NetId, amt: NetId) -> Result<Expr, GenError> {
        Ok(match op {
            ShiftOp::Left | ShiftOp::RightLogical => {
                let sym = if op == ShiftOp::Left { "<<" } else { ">>" };
                let a = self.operand(src, prec::OPERAND)?;
                let n = self.shift_amount(amt)?;
                Expr::op(format!("{a} {sym} {n}"), prec::SHIFT)
            }
            ShiftOp::RightArithmetic => {
                let a = self.atom_operand(src)?;
                let n = self.shift_amount(amt)?;
                Expr {
                    text: format!("$signed({a}) >>> {n}"),
                    prec: prec::SHIFT,
                    atom: false,
                    signed: true,
                }
            }
        })
    }

    /// A shift's amount. One wider than 32 bits that Verilator may fold to a constant
    /// is clamped to 32 bits (`(|n[63:32]) ? 32'hffffffff : n[31:0]`: any amount of
    /// 2^32 or more shifts every bit out, as all ones does), because Verilator refuses
    /// a constant shift amount of 2^32 or more ("Unsupported: Shifting of by over
    /// 32-bit number").
    fn shift_amount(&mut self, amt: NetId) -> Result<String, GenError> {
        let w = self.width(amt);
        if w <= 32 || self.folds.value(amt).varies() {
            return self.operand(amt, prec::OPERAND);
        }
        let high = self.bits(amt, w - 1, 32);
        let low = self.bits(amt, 31, 0);
        Ok(format!("((|{high}) ? 32'hffffffff : {low})"))
    }

    /// A shift by a constant as slices and concatenations (only the bits kept are read).
    fn const_shift(&mut self, op: ShiftOp, src: NetId, n: u32) -> String {
        let w = self.width(src);
        if n == 0 {
            return self.all(src);
        }
        match op {
            ShiftOp::Left if n >= w => zeros(w),
            ShiftOp::Left => format!("{{{}, {}}}", self.bits(src, w - n - 1, 0), zeros(n)),
            ShiftOp::RightLogical if n >= w => zeros(w),
            ShiftOp::RightLogical => format!("{{{}, {}}}", zeros(n), self.bits(src, w - 1, n)),
            ShiftOp::RightArithmetic => {
                let sign = self.msb(src);
                if n >= w {
                    return if w == 1 {
                        sign
                    } else {
                        format!("{{{w}{{{sign}}}}}")
                    };
                }
                let fill = if n == 1 {
                    sign
                } else {
                    format!("{{{n}{{{sign}}}}}")
                };
                format!("{{{fill}, {}}}", self.bits(src, w - 1, n))
            }
        }
    }
}
