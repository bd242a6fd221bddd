//! Operations whose result their inputs do not decide: a mux whose select is a
//! literal, an `and` with zero, an `add` of zero, a product by one, an order with
//! an end of its range, an operation of literals only, an operation whose two
//! operands are one value (`x | x`), and an unsigned comparison the values its
//! operands can carry decide (`{1'b0, x[3:0]} + 5'h01 > 5'h10`, from the bounds
//! worked out by the IR's range analysis). The builder folds no constants (every
//! operation it is asked for is one the Verilog shows and a mutant can change),
//! so such an operation is a generator building logic for a case its
//! configuration cannot have, and it reaches the Verilog as `1'h0 ? a : b` or
//! `x + 9'h000`. A generator that knows the value computes the result in Rust
//! instead; this finds where one did not.

use super::ranges::Ranges;
use super::{ArithOp, BitOp, CmpOp, Driver, Module, ModuleData, NetId, Op, ShiftAmount, SourceLoc};
use crate::bits::Bits;

/// What decides an operation, whatever its variable inputs are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DecidedBy {
    /// Every operand is a literal: the result is a constant. A concatenation,
    /// replication or extension of literals is not one: it writes a constant by its
    /// parts (`{16{16'h7fff}}`), which reads better than the constant would.
    AllLiterals,
    /// A mux's select is a literal: it always takes one arm.
    LiteralSelect,
    /// A mux's arms are the same value: the select changes nothing.
    EqualArms,
    /// Both operands are the same value: `x & x` and `x | x` are `x`; `x ^ x`,
    /// `x - x`, `x == x` and `x < x` are constants.
    SameOperands,
    /// A literal makes the result a constant whatever the other operand is
    /// (`x & 0`, `x | ~0`, `x * 0`, or an order with the bound of its range:
    /// unsigned `x < 0`, `x <= ~0`, `~0 < x`, `0 <= x`, and the signed ones with
    /// the most negative and most positive values).
    Absorbing,
    /// A literal leaves the other operand unchanged (`x & ~0`, `x | 0`, `x ^ 0`,
    /// `x + 0`, `x - 0`, `x * 1`, a shift by 0).
    Identity,
    /// The values the operands can carry decide an unsigned order or an equality:
    /// every value of one side lies below every value of the other, no value is on
    /// both sides (`{1'b0, x[3:0]} + 5'h01 > 5'h10` is never true), or both sides
    /// hold one and the same value (`{4'h0, 4'h6} == 8'h06`).
    Ranges,
}

impl DecidedBy {
    /// A short description for reports.
    pub fn describe(self) -> &'static str {
        match self {
            DecidedBy::AllLiterals => "every operand is a literal",
            DecidedBy::LiteralSelect => "the mux's select is a literal",
            DecidedBy::EqualArms => "the mux's arms are the same value",
            DecidedBy::SameOperands => "both operands are the same value",
            DecidedBy::Absorbing => "a literal makes the result constant",
            DecidedBy::Identity => "a literal leaves the other operand unchanged",
            DecidedBy::Ranges => "the values its operands can carry decide it",
        }
    }
}

/// One decided operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decided {
    /// The module that holds it.
    pub module: String,
    /// The net the operation drives.
    pub net: NetId,
    /// The operation's short name (`mux`, `or`, `compare`).
    pub op: &'static str,
    /// The generator line that built it.
    pub location: SourceLoc,
    /// Why it is decided.
    pub by: DecidedBy,
}

impl Decided {
    /// `file:line: op in module: reason` for reports.
    pub fn describe(&self) -> String {
        let at = self.location.relative().unwrap_or_else(|| "?".into());
        format!(
            "{at}: {} in {}: {}",
            self.op,
            self.module,
            self.by.describe()
        )
    }
}

/// Every decided operation in `top` and the distinct modules below it
/// (each module once, by name), modules depth first, nets in order.
pub fn decided_operations(top: &Module) -> Vec<Decided> {
    let mut out = vec![];
    for m in top.distinct_modules() {
        let mut ranges = Ranges::new(&m);
        for (i, net) in m.nets.iter().enumerate() {
            let Driver::Op(op) = &net.driver else {
                continue;
            };
            let by = decided_by(&m, op).or_else(|| decided_by_ranges(&mut ranges, op));
            if let Some(by) = by {
                out.push(Decided {
                    module: m.name.clone(),
                    net: NetId(i as u32),
                    op: op.name(),
                    location: net.location,
                    by,
                });
            }
        }
    }
    out
}

/// What decides `op` in `m`, if anything does.
fn decided_by(m: &ModuleData, op: &Op) -> Option<DecidedBy> {
    let operands = op.operands();
    let builds_a_constant = matches!(
        op,
        Op::Const(_) | Op::Concat(_) | Op::Replicate { .. } | Op::Extend { .. }
    );
    if !builds_a_constant && operands.iter().all(|&n| m.literal(n).is_some()) {
        return Some(DecidedBy::AllLiterals);
    }
    let same_operands = match op {
        Op::Bit(_, a, b) | Op::Cmp(_, a, b) | Op::Arith(ArithOp::Sub, a, b) => {
            m.source(*a) == m.source(*b)
        }
        _ => false,
    };
    if same_operands {
        return Some(DecidedBy::SameOperands);
    }
    match op {
        Op::Mux {
            sel,
            if_true,
            if_false,
        } => {
            if m.literal(*sel).is_some() {
                return Some(DecidedBy::LiteralSelect);
            }
            let same_literal = matches!(
                (m.literal(*if_true), m.literal(*if_false)),
                (Some(a), Some(b)) if a == b
            );
            (m.source(*if_true) == m.source(*if_false) || same_literal)
                .then_some(DecidedBy::EqualArms)
        }
        Op::Bit(bit, a, b) => [*a, *b].iter().find_map(|&n| {
            let k = m.literal(n)?;
            match (bit, k.is_zero(), k.is_ones()) {
                (BitOp::And, true, _) | (BitOp::Or, _, true) => Some(DecidedBy::Absorbing),
                (BitOp::And, _, true) | (BitOp::Or | BitOp::Xor, true, _) => {
                    Some(DecidedBy::Identity)
                }
                _ => None,
            }
        }),
        Op::Arith(arith, a, b) => {
            let (ka, kb) = (m.literal(*a), m.literal(*b));
            match arith {
                ArithOp::Add if ka.is_some_and(Bits::is_zero) => Some(DecidedBy::Identity),
                ArithOp::Add | ArithOp::Sub if kb.is_some_and(Bits::is_zero) => {
                    Some(DecidedBy::Identity)
                }
                ArithOp::Mul => [ka, kb].into_iter().flatten().find_map(|k| {
                    if k.is_zero() {
                        Some(DecidedBy::Absorbing)
                    } else {
                        is_one(k).then_some(DecidedBy::Identity)
                    }
                }),
                _ => None,
            }
        }
        Op::Cmp(cmp, a, b) => {
            let (ka, kb) = (m.literal(*a), m.literal(*b));
            let at = |k: Option<&Bits>, end: End| k.is_some_and(|k| end.is(k, signed(*cmp)));
            let decided = match cmp {
                CmpOp::LtU | CmpOp::LtS => at(kb, End::Low) || at(ka, End::High),
                CmpOp::LeU | CmpOp::LeS => at(kb, End::High) || at(ka, End::Low),
                CmpOp::Eq | CmpOp::Ne => false,
            };
            decided.then_some(DecidedBy::Absorbing)
        }
        Op::Shift {
            amount: ShiftAmount::Const(0),
            ..
        } => Some(DecidedBy::Identity),
        Op::Shift {
            amount: ShiftAmount::Net(n),
            ..
        } => m
            .literal(*n)
            .is_some_and(Bits::is_zero)
            .then_some(DecidedBy::Identity),
        _ => None,
    }
}

/// `Ranges` if the ranges of `op`'s operands decide it: an unsigned order, an
/// equality or an inequality (sides that never meet, or two sides that each hold one
/// and the same value).
fn decided_by_ranges(ranges: &mut Ranges, op: &Op) -> Option<DecidedBy> {
    let Op::Cmp(cmp, a, b) = op else {
        return None;
    };
    let (a, b) = (ranges.of(*a)?, ranges.of(*b)?);
    let decided = match cmp {
        CmpOp::LtU => a.hi < b.lo || a.lo >= b.hi,
        CmpOp::LeU => a.hi <= b.lo || a.lo > b.hi,
        CmpOp::Eq | CmpOp::Ne => {
            let one_value = a.lo == a.hi && b.lo == b.hi && a.lo == b.lo;
            a.hi < b.lo || b.hi < a.lo || one_value
        }
        CmpOp::LtS | CmpOp::LeS => false,
    };
    decided.then_some(DecidedBy::Ranges)
}

/// An end of a comparison's range.
#[derive(Clone, Copy)]
enum End {
    /// 0 unsigned, the most negative value signed.
    Low,
    /// All ones unsigned, the most positive value signed.
    High,
}

impl End {
    /// True if `k` is this end of its width's range, signed or not.
    fn is(self, k: &Bits, signed: bool) -> bool {
        let w = k.width();
        let top = k.bit(w - 1);
        let rest_set = (0..w - 1).all(|i| k.bit(i));
        let rest_clear = (0..w - 1).all(|i| !k.bit(i));
        match (self, signed) {
            (End::Low, false) => !top && rest_clear,
            (End::High, false) => top && rest_set,
            (End::Low, true) => top && rest_clear,
            (End::High, true) => !top && rest_set,
        }
    }
}

/// True if `cmp` orders two's complement values.
fn signed(cmp: CmpOp) -> bool {
    matches!(cmp, CmpOp::LtS | CmpOp::LeS)
}

/// True if `k` is one.
fn is_one(k: &Bits) -> bool {
    k.bit(0) && (1..k.width()).all(|i| !k.bit(i))
}
