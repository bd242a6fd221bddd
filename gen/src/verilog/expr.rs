//! Verilog expressions for the IR's combinational operations, written so that every
//! expression has exactly the width of the net it drives (no WIDTH warnings) and so
//! that the bits each expression reads are recorded for the `_unused_ok` line.

use super::names::{ModuleNames, Namespace};
use super::unused::Usage;
use crate::GenError;
use hdl::ir::{ArithOp, BitOp, CmpOp, NetId, Op, ReduceOp, ShiftAmount, ShiftOp};
use hdl::{Bits, Module};

/// A Verilog literal of exactly `b`'s width: `W'h...`.
pub(crate) fn literal(b: &Bits) -> String {
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
}

impl Refs<'_> {
    /// Width of `net`.
    pub(crate) fn width(&self, net: NetId) -> u32 {
        self.m.net(net).width
    }

    /// The whole of `net`, read.
    pub(crate) fn all(&mut self, net: NetId) -> String {
        self.usage.read_all(net);
        self.names.net(net).to_string()
    }

    /// Bits `hi..=lo` of `net`, read.
    pub(crate) fn bits(&mut self, net: NetId, hi: u32, lo: u32) -> String {
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
    pub(crate) fn op_expr(&mut self, net: NetId, op: &Op) -> Result<String, GenError> {
        let w = self.width(net);
        Ok(match op {
            Op::Const(b) => {
                if b.width() != w {
                    let reason = format!("constant of {} bits drives {w} bits", b.width());
                    return Err(self.malformed(net, reason));
                }
                literal(b)
            }
            Op::Not(a) => {
                self.expect_width(net, *a, w)?;
                format!("~{}", self.all(*a))
            }
            Op::Bit(op, a, b) => {
                self.expect_width(net, *a, w)?;
                self.expect_width(net, *b, w)?;
                let sym = match op {
                    BitOp::And => "&",
                    BitOp::Or => "|",
                    BitOp::Xor => "^",
                };
                format!("{} {sym} {}", self.all(*a), self.all(*b))
            }
            Op::Arith(op, a, b) => {
                let (wa, wb) = (self.width(*a), self.width(*b));
                if wa > w || wb > w {
                    let reason = format!("operands of {wa} and {wb} bits exceed the result's {w}");
                    return Err(self.malformed(net, reason));
                }
                let sym = match op {
                    ArithOp::Add => "+",
                    ArithOp::Sub => "-",
                    ArithOp::Mul => "*",
                };
                let ea = self.all(*a);
                let eb = self.all(*b);
                format!("{} {sym} {}", zext(&ea, wa, w), zext(&eb, wb, w))
            }
            Op::Cmp(op, a, b) => {
                let wa = self.width(*a);
                self.expect_width(net, *b, wa)?;
                self.expect_width(net, net, 1)?;
                let (ea, eb) = (self.all(*a), self.all(*b));
                match op {
                    CmpOp::Eq => format!("{ea} == {eb}"),
                    CmpOp::Ne => format!("{ea} != {eb}"),
                    // Unsigned order as a signed compare of zero-extended operands:
                    // Verilator folds constants through any logic and then reports
                    // `x < 0` or `x <= MAX` as UNSIGNED/CMPCONST; signed compares are
                    // never reported, and synthesis removes the extra bit.
                    CmpOp::LtU => format!(
                        "$signed({}) < $signed({})",
                        zext(&ea, wa, wa + 1),
                        zext(&eb, wa, wa + 1)
                    ),
                    CmpOp::LeU => format!(
                        "$signed({}) <= $signed({})",
                        zext(&ea, wa, wa + 1),
                        zext(&eb, wa, wa + 1)
                    ),
                    CmpOp::LtS => format!("$signed({ea}) < $signed({eb})"),
                    CmpOp::LeS => format!("$signed({ea}) <= $signed({eb})"),
                }
            }
            Op::Mux {
                sel,
                if_true,
                if_false,
            } => {
                self.expect_width(net, *sel, 1)?;
                self.expect_width(net, *if_true, w)?;
                self.expect_width(net, *if_false, w)?;
                let s = self.all(*sel);
                let t = self.all(*if_true);
                let f = self.all(*if_false);
                format!("{s} ? {t} : {f}")
            }
            Op::Slice { src, lo } => {
                let ws = self.width(*src);
                if lo.checked_add(w).is_none_or(|end| end > ws) {
                    let reason = format!("slice [{}+:{w}] of a {ws}-bit net", lo);
                    return Err(self.malformed(net, reason));
                }
                self.bits(*src, lo + w - 1, *lo)
            }
            Op::Concat(parts) => {
                let total: u64 = parts.iter().map(|p| self.width(*p) as u64).sum();
                if parts.is_empty() || total != w as u64 {
                    let reason = format!("concatenation of {total} bits drives {w} bits");
                    return Err(self.malformed(net, reason));
                }
                let items: Vec<String> = parts.iter().map(|p| self.all(*p)).collect();
                if items.len() == 1 {
                    items.concat()
                } else {
                    format!("{{{}}}", items.join(", "))
                }
            }
            Op::Replicate { src, count } => {
                if *count == 0 || self.width(*src) as u64 * *count as u64 != w as u64 {
                    let reason = format!("{count} copies of a {}-bit net", self.width(*src));
                    return Err(self.malformed(net, reason));
                }
                let a = self.all(*src);
                if *count == 1 {
                    a
                } else {
                    format!("{{{count}{{{a}}}}}")
                }
            }
            Op::Extend { src, signed } => {
                let ws = self.width(*src);
                if ws > w {
                    let reason = format!("extension of a {ws}-bit net to {w} bits");
                    return Err(self.malformed(net, reason));
                }
                let a = self.all(*src);
                match (w - ws, signed) {
                    (0, _) => a,
                    (n, false) => zext(&a, ws, ws + n),
                    (n, true) => {
                        let sign = self.msb(*src);
                        if n == 1 {
                            format!("{{{sign}, {a}}}")
                        } else {
                            format!("{{{{{n}{{{sign}}}}}, {a}}}")
                        }
                    }
                }
            }
            Op::Shift { op, src, amount } => {
                self.expect_width(net, *src, w)?;
                match amount {
                    ShiftAmount::Const(n) => self.const_shift(*op, *src, *n),
                    ShiftAmount::Net(amt) => {
                        let a = self.all(*src);
                        let n = self.all(*amt);
                        match op {
                            ShiftOp::Left => format!("{a} << {n}"),
                            ShiftOp::RightLogical => format!("{a} >> {n}"),
                            ShiftOp::RightArithmetic => format!("$signed({a}) >>> {n}"),
                        }
                    }
                }
            }
            Op::Reduce(op, a) => {
                self.expect_width(net, net, 1)?;
                let sym = match op {
                    ReduceOp::And => "&",
                    ReduceOp::Or => "|",
                    ReduceOp::Xor => "^",
                };
                format!("{sym}{}", self.all(*a))
            }
            Op::LeadingZeros(_) => {
                return Err(self.malformed(net, "leading-zeros has no single expression".into()))
            }
        })
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
