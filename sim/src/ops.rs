//! The single-word operations of the narrow kinds, as zero-sized types so that
//! every loop over them is monomorphized: `F::f` of a [`Unary`], [`Binary`] or
//! [`Ternary`] is the value of one record's destination word.

use crate::instr::Rec;

/// A single-word operation of one operand (`vals[a]`).
pub(crate) trait Unary {
    /// The result for operand `x` and record parameters `r`.
    fn f(x: u64, r: &Rec) -> u64;
}

/// A single-word operation of two operands (`vals[a]`, `vals[b]`).
pub(crate) trait Binary {
    /// The result for operands `x`, `y` and record parameters `r`.
    fn f(x: u64, y: u64, r: &Rec) -> u64;
}

/// A single-word operation of three operands (`vals[a]`, `vals[b]`, `vals[c]`).
pub(crate) trait Ternary {
    /// The result for operands `x`, `y`, `z` and record parameters `r`.
    fn f(x: u64, y: u64, z: u64, r: &Rec) -> u64;
}

macro_rules! ops {
    ($tr:ident: $($name:ident |$($x:ident),+; $r:ident| $body:expr;)*) => {$(
        #[doc = concat!("The `", stringify!($name), "` kind (see `Kind`).")]
        pub(crate) struct $name;
        impl $tr for $name {
            #[inline(always)]
            #[allow(unused_variables)]
            fn f($($x: u64,)+ $r: &Rec) -> u64 {
                $body
            }
        }
    )*};
}

ops! { Unary:
    Field |x; r| ((x >> r.b) & r.k) << r.c | r.k2;
    Not |x; r| x ^ r.k;
    Sra |x; r| (((x << r.c) as i64 >> r.b) as u64) & r.k;
    Replicate |x; r| x.wrapping_mul(r.k);
    RedAnd |x; r| (x == r.k) as u64;
    RedOr |x; r| (x != 0) as u64;
    RedXor |x; r| (x.count_ones() & 1) as u64;
    Lz |x; r| (x.leading_zeros() - (64 - r.c)) as u64 & r.k;
}

ops! { Binary:
    And |x, y; r| x & y;
    Or |x, y; r| x | y;
    Xor |x, y; r| x ^ y;
    Add |x, y; r| x.wrapping_add(y) & r.k;
    Sub |x, y; r| x.wrapping_sub(y) & r.k;
    Mul |x, y; r| x.wrapping_mul(y) & r.k;
    Eq |x, y; r| (x == y) as u64;
    Ne |x, y; r| (x != y) as u64;
    LtU |x, y; r| (x < y) as u64;
    LeU |x, y; r| (x <= y) as u64;
    LtS |x, y; r| (((x << r.c) as i64) < ((y << r.c) as i64)) as u64;
    LeS |x, y; r| (((x << r.c) as i64) <= ((y << r.c) as i64)) as u64;
    Cat2 |x, y; r| (x << r.c) | y | r.k;
    ShlV |x, s; r| (x << (s & 63)) & r.k & ((s < r.c as u64) as u64).wrapping_neg();
    ShrV |x, s; r| (x >> (s & 63)) & ((s < r.c as u64) as u64).wrapping_neg();
    SraV |x, s; r| {
        let sh = 64 - r.c;
        let s = s.min(r.c as u64 - 1);
        ((((x << sh) as i64) >> sh >> s) as u64) & r.k
    };
}

ops! { Ternary:
    Mux |s, t, f; r| {
        let m = (s & 1).wrapping_neg();
        (t & m) | (f & !m)
    };
    Cat3 |x, y, z; r| (x << (r.k2 & 63)) | (y << ((r.k2 >> 8) & 63)) | z | r.k;
}
