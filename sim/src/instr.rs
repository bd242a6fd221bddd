//! The compiled form of the combinational logic: records ([`Rec`]) of a [`Kind`]
//! over offsets into the packed `u64` storage, grouped into batches of
//! independent records of one kind and executed as [`Step`]s.
//!
//! No record of a batch reads a word another record of the same batch writes, so
//! their order within the batch is free; a batch becomes run steps (identical
//! records over consecutive words, one vector loop) and gather steps (one tight
//! loop over records). Narrow kinds work on single words (every operand and the
//! result ≤ 64 bits); everything else is a [`WideOp`] behind [`Kind::Wide`].

use hdl::ir::{ArithOp, BitOp, CmpOp, ReduceOp, ShiftOp};
use serde::{Deserialize, Serialize};

/// The storage words of one value: `words` words from offset `off`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub(crate) struct Span {
    /// First word.
    pub off: u32,
    /// Number of words, `ceil(width / 64)`.
    pub words: u32,
}

/// One part of a concatenation: its `width`-bit value (stored in `span`, zero
/// above `width`) at bit `pos` of the result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub(crate) struct Placed {
    /// Where the part's value is stored.
    pub span: Span,
    /// The bit of the result the part's bit 0 lands on.
    pub pos: u32,
    /// The part's width in bits.
    pub width: u32,
}

/// What the records of a batch compute. Every record has a destination word `d`,
/// three fields `a`, `b`, `c` and two 64-bit constants `k`, `k2`; each kind says
/// which fields are storage offsets (`vals[x]`) and which are parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub(crate) enum Kind {
    /// A bit-field move: `vals[d] = ((vals[a] >> b) & k) << c | k2` (copies,
    /// slices within a word, shifts by constants, concatenations with constants).
    Field,
    /// `vals[d] = vals[a] ^ k` (`k` the mask of the width: a complement).
    Not,
    /// `vals[d] = vals[a] & vals[b]`.
    And,
    /// `vals[d] = vals[a] | vals[b]`.
    Or,
    /// `vals[d] = vals[a] ^ vals[b]`.
    Xor,
    /// `vals[d] = (vals[a] + vals[b]) & k`.
    Add,
    /// `vals[d] = (vals[a] - vals[b]) & k`.
    Sub,
    /// `vals[d] = (vals[a] * vals[b]) & k`.
    Mul,
    /// `vals[d] = vals[a] == vals[b]`.
    Eq,
    /// `vals[d] = vals[a] != vals[b]`.
    Ne,
    /// `vals[d] = vals[a] < vals[b]` (unsigned).
    LtU,
    /// `vals[d] = vals[a] <= vals[b]` (unsigned).
    LeU,
    /// `vals[d] = vals[a] < vals[b]` (signed; `c = 64 - width` moves the sign to bit 63).
    LtS,
    /// `vals[d] = vals[a] <= vals[b]` (signed, `c` as for `LtS`).
    LeS,
    /// `vals[d] = vals[a] & 1 ? vals[b] : vals[c]` (branch-free).
    Mux,
    /// `vals[d] = ((vals[a] >> b) | (vals[a + 1] << (64 - b))) & k`, `0 < b < 64`.
    Slice2,
    /// `vals[d] = ((vals[a] << c) as i64 >> b) as u64 & k`: sign extension
    /// (`b = c = 64 - source width`) or arithmetic shift right by a constant.
    Sra,
    /// `vals[d] = vals[a] * k` (`k` has a 1 at every copy's position).
    Replicate,
    /// `vals[d] = (vals[a] << c) | vals[b] | k` (two parts, the low one at bit 0).
    Cat2,
    /// `vals[d] = (vals[a] << (k2 & 63)) | (vals[b] << (k2 >> 8 & 63)) | vals[c] | k`
    /// (three parts, the low one at bit 0).
    Cat3,
    /// `vals[d] = k | OR of vals[p] << s over `(p, s)` in `parts[a .. a + b]`.
    CatN,
    /// `vals[d] = vals[b] < c ? (vals[a] << vals[b]) & k : 0` (`c` = width).
    ShlV,
    /// `vals[d] = vals[b] < c ? vals[a] >> vals[b] : 0` (`c` = width).
    ShrV,
    /// `vals[d] = (sext(vals[a]) >> min(vals[b], c - 1)) & k` (`c` = width).
    SraV,
    /// `vals[d] = vals[a] == k` (`k` all ones of the operand's width).
    RedAnd,
    /// `vals[d] = vals[a] != 0`.
    RedOr,
    /// `vals[d] = parity of vals[a]`.
    RedXor,
    /// `vals[d] = (leading_zeros(vals[a]) - (64 - c)) & k` (`c` = operand width).
    Lz,
    /// `wide[a]` (the destination is in the [`WideOp`]).
    Wide,
}

/// One instruction of a batch (see [`Kind`] for the meaning of each field).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub(crate) struct Rec {
    /// Destination word.
    pub d: u32,
    /// First source (an offset) or parameter.
    pub a: u32,
    /// Second source or parameter.
    pub b: u32,
    /// Third source or parameter.
    pub c: u32,
    /// Constant or mask.
    pub k: u64,
    /// Second constant.
    pub k2: u64,
}

impl Rec {
    /// A record of `kind` with random parameters within its contract (operand
    /// widths, shift distances, masks) and every offset 0, for tests to place.
    /// `CatN` takes parts 0..3 of the program's part table.
    #[cfg(test)]
    pub fn random_params(kind: Kind, rng: &mut impl rand::Rng) -> Rec {
        let w: u32 = rng.gen_range(1..=64);
        let mut r = Rec {
            k: crate::wide::last_mask(w),
            ..Rec::default()
        };
        match kind {
            Kind::Field => {
                r.b = rng.gen_range(0..64);
                r.c = rng.gen_range(0..64);
                r.k = rng.gen();
                r.k2 = rng.gen();
            }
            Kind::Slice2 => r.b = rng.gen_range(1..64),
            Kind::Sra => {
                r.c = 64 - w;
                r.b = r.c + rng.gen_range(0..w);
            }
            Kind::Replicate | Kind::RedAnd => r.k = rng.gen(),
            Kind::LtS | Kind::LeS => r.c = 64 - w,
            Kind::Cat2 => {
                r.c = rng.gen_range(0..64);
                r.k = rng.gen();
            }
            Kind::Cat3 => {
                r.k = rng.gen();
                r.k2 = rng.gen_range(0..64) | rng.gen_range(0..64) << 8;
            }
            Kind::ShlV | Kind::ShrV | Kind::SraV | Kind::Lz => r.c = w,
            Kind::CatN => {
                r.b = 3;
                r.k = rng.gen::<u64>() & 0xff00_0000_0000_0000;
            }
            _ => {}
        }
        r
    }

    /// Instance `j` of a run whose first instance is `self` (see [`Mode::Run`]).
    pub fn instance(self, kind: Kind, strides: u8, j: u32) -> Rec {
        let offs = kind.offsets();
        let step = |i: usize| j.wrapping_mul(u32::from((strides >> i) & 1));
        let mut r = self;
        r.d = r.d.wrapping_add(j);
        if offs[0] {
            r.a = r.a.wrapping_add(step(0));
        }
        if offs[1] {
            r.b = r.b.wrapping_add(step(1));
        }
        if offs[2] {
            r.c = r.c.wrapping_add(step(2));
        }
        r
    }
}

/// What a mixed step needs to know of each of its records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub(crate) struct Tag {
    /// The sources the record depends on (see [`cones`](crate::cones)).
    pub mask: u64,
    /// What the record computes.
    pub kind: Kind,
}

/// `recs[start..end]`, all of kind `kind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Batch {
    /// What every record computes.
    pub kind: Kind,
    /// First record.
    pub start: u32,
    /// One past the last record.
    pub end: u32,
    /// Whether an output port depends on the records (all of them or none, see
    /// [`demand::output_instrs`](crate::demand::output_instrs)).
    pub output: bool,
}

impl Kind {
    /// Every single-word kind (all but `Wide`), for tests that sweep them.
    #[cfg(test)]
    pub const NARROW: [Kind; 28] = [
        Kind::Field,
        Kind::Not,
        Kind::And,
        Kind::Or,
        Kind::Xor,
        Kind::Add,
        Kind::Sub,
        Kind::Mul,
        Kind::Eq,
        Kind::Ne,
        Kind::LtU,
        Kind::LeU,
        Kind::LtS,
        Kind::LeS,
        Kind::Mux,
        Kind::Slice2,
        Kind::Sra,
        Kind::Replicate,
        Kind::Cat2,
        Kind::Cat3,
        Kind::CatN,
        Kind::ShlV,
        Kind::ShrV,
        Kind::SraV,
        Kind::RedAnd,
        Kind::RedOr,
        Kind::RedXor,
        Kind::Lz,
    ];

    /// Which of the fields `a`, `b`, `c` are storage offsets (read words).
    pub fn offsets(self) -> [bool; 3] {
        match self {
            Kind::Field
            | Kind::Not
            | Kind::Slice2
            | Kind::Sra
            | Kind::Replicate
            | Kind::RedAnd
            | Kind::RedOr
            | Kind::RedXor
            | Kind::Lz => [true, false, false],
            Kind::And
            | Kind::Or
            | Kind::Xor
            | Kind::Add
            | Kind::Sub
            | Kind::Mul
            | Kind::Eq
            | Kind::Ne
            | Kind::LtU
            | Kind::LeU
            | Kind::LtS
            | Kind::LeS
            | Kind::Cat2
            | Kind::ShlV
            | Kind::ShrV
            | Kind::SraV => [true, true, false],
            Kind::Mux | Kind::Cat3 => [true, true, true],
            Kind::CatN | Kind::Wide => [false, false, false],
        }
    }

    /// True if consecutive records of this kind can run as one vector loop.
    pub fn vectorizes(self) -> bool {
        !matches!(self, Kind::CatN | Kind::Wide)
    }
}

/// How a [`Step`] runs its records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub(crate) enum Mode {
    /// Every record of `recs[start..start + n]` on its own.
    Gather,
    /// Every record of `recs[start..start + n]` on its own, each of its own kind
    /// (small gathers of a dependency chain, merged to save dispatches).
    Mixed,
    /// `n` instances of the record `recs[start]`: instance `j` writes word `d + j`
    /// and reads `a + j·sa`, `b + j·sb`, `c + j·sc` (strides 0 or 1, one bit each
    /// of `strides`: bit 0 for `a`, 1 for `b`, 2 for `c`).
    Run {
        /// Stride bits.
        strides: u8,
    },
}

/// One dispatch of the evaluation loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub(crate) struct Step {
    /// What the records compute.
    pub kind: Kind,
    /// Gathered records or a run.
    pub mode: Mode,
    /// First record.
    pub start: u32,
    /// Number of records (gather) or instances (run).
    pub n: u32,
    /// The sources the step depends on (see [`cones`](crate::cones)).
    pub mask: u64,
}

/// Shift distance of a wide shift.
#[derive(Clone, Copy, Debug, Hash, Serialize, Deserialize)]
pub(crate) enum Amount {
    /// A constant.
    Const(u64),
    /// An unsigned value in storage.
    Net(Span),
}

/// An operation where some operand or the result has more than 64 bits; `mask` is
/// the mask of the result's top word.
#[derive(Clone, Debug, Hash, Serialize, Deserialize)]
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
    /// Parts placed at their bit positions in the result.
    Concat { dst: Span, parts: Vec<Placed> },
    /// `count` copies of the `src_width`-bit `src`.
    Replicate {
        dst: Span,
        src: Span,
        src_width: u32,
        count: u32,
        mask: u64,
    },
    /// Zero or sign extension from `src_width` bits (a copy when the widths match).
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
        /// `src` lies in storage with the zero words `layout::shift_pads` gives
        /// for a shift by a net around it, which nothing writes.
        padded: bool,
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

impl WideOp {
    /// Every storage span this operation reads or writes (the destination first).
    pub fn each_span(&self, mut f: impl FnMut(Span)) {
        let one = |off: u32| Span { off, words: 1 };
        match self {
            WideOp::Not { dst, a, .. } => [*dst, *a].into_iter().for_each(f),
            WideOp::Bit { dst, a, b, .. } | WideOp::Arith { dst, a, b, .. } => {
                [*dst, *a, *b].into_iter().for_each(f)
            }
            WideOp::Cmp { dst, a, b, .. } => [one(*dst), *a, *b].into_iter().for_each(f),
            WideOp::Mux { dst, sel, t, f: e } => [*dst, one(*sel), *t, *e].into_iter().for_each(f),
            WideOp::Slice { dst, src, .. }
            | WideOp::Replicate { dst, src, .. }
            | WideOp::Extend { dst, src, .. } => [*dst, *src].into_iter().for_each(f),
            WideOp::Concat { dst, parts } => {
                f(*dst);
                parts.iter().for_each(|p| f(p.span));
            }
            WideOp::Shift {
                dst, src, amount, ..
            } => {
                f(*dst);
                f(*src);
                if let Amount::Net(s) = amount {
                    f(*s);
                }
            }
            WideOp::Reduce { dst, a, .. } => [one(*dst), *a].into_iter().for_each(f),
            WideOp::LeadingZeros { dst, a, .. } => [*dst, *a].into_iter().for_each(f),
        }
    }

    /// The storage words this operation writes.
    pub fn dst(&self) -> Span {
        match self {
            WideOp::Not { dst, .. }
            | WideOp::Bit { dst, .. }
            | WideOp::Arith { dst, .. }
            | WideOp::Mux { dst, .. }
            | WideOp::Slice { dst, .. }
            | WideOp::Concat { dst, .. }
            | WideOp::Replicate { dst, .. }
            | WideOp::Extend { dst, .. }
            | WideOp::Shift { dst, .. }
            | WideOp::LeadingZeros { dst, .. } => *dst,
            WideOp::Cmp { dst, .. } | WideOp::Reduce { dst, .. } => Span {
                off: *dst,
                words: 1,
            },
        }
    }
}
