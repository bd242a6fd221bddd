//! The compiled form of the combinational logic: a flat list of instructions over
//! offsets into the packed `u64` storage. Narrow instructions work on single words
//! (every operand and the result ≤ 64 bits); everything else is a [`WideOp`].

use hdl::ir::{ArithOp, BitOp, CmpOp, ReduceOp, ShiftOp};

/// The storage words of one value: `words` words from offset `off`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Span {
    /// First word.
    pub off: u32,
    /// Number of words, `ceil(width / 64)`.
    pub words: u32,
}

/// One combinational evaluation step. Fields named `dst`, `a`, `b`, `sel`, `t`, `f`,
/// `src`, `amt` are storage offsets; `mask` keeps the result's unused high bits zero.
#[derive(Clone, Debug)]
pub(crate) enum Instr {
    /// `dst = a` (zero extension of a narrow value).
    Copy { dst: u32, a: u32 },
    /// `dst = !a & mask`.
    Not { dst: u32, a: u32, mask: u64 },
    /// `dst = a & b`.
    And { dst: u32, a: u32, b: u32 },
    /// `dst = a | b`.
    Or { dst: u32, a: u32, b: u32 },
    /// `dst = a ^ b`.
    Xor { dst: u32, a: u32, b: u32 },
    /// `dst = (a + b) & mask`.
    Add { dst: u32, a: u32, b: u32, mask: u64 },
    /// `dst = (a - b) & mask`.
    Sub { dst: u32, a: u32, b: u32, mask: u64 },
    /// `dst = (a * b) & mask`.
    Mul { dst: u32, a: u32, b: u32, mask: u64 },
    /// `dst = a == b`.
    Eq { dst: u32, a: u32, b: u32 },
    /// `dst = a != b`.
    Ne { dst: u32, a: u32, b: u32 },
    /// `dst = a < b` unsigned.
    LtU { dst: u32, a: u32, b: u32 },
    /// `dst = a <= b` unsigned.
    LeU { dst: u32, a: u32, b: u32 },
    /// `dst = a < b` signed; `sh = 64 - width` moves the sign bit to bit 63.
    LtS { dst: u32, a: u32, b: u32, sh: u32 },
    /// `dst = a <= b` signed.
    LeS { dst: u32, a: u32, b: u32, sh: u32 },
    /// `dst = sel ? t : f`.
    Mux { dst: u32, sel: u32, t: u32, f: u32 },
    /// `dst = (src >> shift) & mask`, bits within one word.
    Slice1 {
        dst: u32,
        src: u32,
        shift: u32,
        mask: u64,
    },
    /// Like `Slice1`, bits straddling words `src` and `src + 1` (`shift > 0`).
    Slice2 {
        dst: u32,
        src: u32,
        shift: u32,
        mask: u64,
    },
    /// Sign extension: `sh = 64 - source width`.
    Sext {
        dst: u32,
        a: u32,
        sh: u32,
        mask: u64,
    },
    /// `dst = a * pattern`, `pattern` having a 1 at every copy's position.
    Replicate { dst: u32, a: u32, pattern: u64 },
    /// `dst = OR of parts[start..start+len]`, each `(offset, shift)`.
    Concat { dst: u32, start: u32, len: u32 },
    /// `dst = (a << n) & mask`, `n < width`.
    Shl { dst: u32, a: u32, n: u32, mask: u64 },
    /// `dst = a >> n`, `n < width`.
    Shr { dst: u32, a: u32, n: u32 },
    /// Arithmetic shift by a constant: `((a << sh) as i64 >> total) & mask`.
    Sra {
        dst: u32,
        a: u32,
        sh: u32,
        total: u32,
        mask: u64,
    },
    /// `dst = a << amt` (0 when `amt >= width`).
    ShlV {
        dst: u32,
        a: u32,
        amt: u32,
        width: u32,
        mask: u64,
    },
    /// `dst = a >> amt` (0 when `amt >= width`).
    ShrV {
        dst: u32,
        a: u32,
        amt: u32,
        width: u32,
    },
    /// `dst = a >>> amt` (all sign bits when `amt >= width`).
    SraV {
        dst: u32,
        a: u32,
        amt: u32,
        width: u32,
        mask: u64,
    },
    /// `dst = a == full` (all bits of the operand set).
    RedAnd { dst: u32, a: u32, full: u64 },
    /// `dst = a != 0`.
    RedOr { dst: u32, a: u32 },
    /// `dst = parity of a`.
    RedXor { dst: u32, a: u32 },
    /// `dst = leading zeros of a (width bits) & mask`.
    Lz {
        dst: u32,
        a: u32,
        width: u32,
        mask: u64,
    },
    /// Any operation on values wider than 64 bits.
    Wide(Box<WideOp>),
}

/// Shift distance of a wide shift.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Amount {
    /// A constant.
    Const(u64),
    /// An unsigned value in storage.
    Net(Span),
}

/// An operation where some operand or the result has more than 64 bits; `mask` is
/// the mask of the result's top word.
#[derive(Clone, Debug)]
pub(crate) enum WideOp {
    /// `dst = !a`.
    Not { dst: Span, a: Span, mask: u64 },
    /// `dst = a op b`.
    Bit {
        op: BitOp,
        dst: Span,
        a: Span,
        b: Span,
    },
    /// `dst = a op b` modulo 2^width, operands zero-extended.
    Arith {
        op: ArithOp,
        dst: Span,
        a: Span,
        b: Span,
        mask: u64,
    },
    /// `dst = a op b` (1 bit), `width` the operands' width (for signed comparisons).
    Cmp {
        op: CmpOp,
        dst: u32,
        a: Span,
        b: Span,
        width: u32,
    },
    /// `dst = sel ? t : f`.
    Mux {
        dst: Span,
        sel: u32,
        t: Span,
        f: Span,
    },
    /// `dst = src[lo + width - 1 : lo]`.
    Slice {
        dst: Span,
        src: Span,
        lo: u32,
        mask: u64,
    },
    /// Parts with their bit positions in the result.
    Concat { dst: Span, parts: Vec<(Span, u32)> },
    /// `count` copies of the `src_width`-bit `src`.
    Replicate {
        dst: Span,
        src: Span,
        src_width: u32,
        count: u32,
        mask: u64,
    },
    /// Zero or sign extension from `src_width` bits.
    Extend {
        dst: Span,
        src: Span,
        src_width: u32,
        signed: bool,
        mask: u64,
    },
    /// Shift of the `width`-bit `src`.
    Shift {
        op: ShiftOp,
        dst: Span,
        src: Span,
        width: u32,
        amount: Amount,
        mask: u64,
    },
    /// Reduction of the `width`-bit `a` to 1 bit.
    Reduce {
        op: ReduceOp,
        dst: u32,
        a: Span,
        width: u32,
    },
    /// Leading zeros of the `width`-bit `a`.
    LeadingZeros {
        dst: Span,
        a: Span,
        width: u32,
        mask: u64,
    },
}
