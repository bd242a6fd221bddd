//! Gather and mixed steps: every record on its own, reading and writing words
//! anywhere in storage (single-word kinds are a few word operations each,
//! branch-free).

use crate::exec::Code;
use crate::instr::{Kind, Rec, Step};
use crate::ops::*;
use crate::wide_exec::run_wide;

/// The records of step `s`.
#[inline(always)]
fn records<'a>(code: &'a Code, s: &Step) -> &'a [Rec] {
    &code.recs[s.start as usize..(s.start + s.n) as usize]
}

/// Every record of `s` as the unary operation `F`.
pub(crate) fn unary<F: Unary>(code: &Code, s: &Step, vals: &mut [u64]) {
    for r in records(code, s) {
        vals[r.d as usize] = F::f(vals[r.a as usize], r);
    }
}

/// Every record of `s` as the binary operation `F`.
pub(crate) fn binary<F: Binary>(code: &Code, s: &Step, vals: &mut [u64]) {
    for r in records(code, s) {
        vals[r.d as usize] = F::f(vals[r.a as usize], vals[r.b as usize], r);
    }
}

/// Every record of `s` as the ternary operation `F`.
pub(crate) fn ternary<F: Ternary>(code: &Code, s: &Step, vals: &mut [u64]) {
    for r in records(code, s) {
        vals[r.d as usize] = F::f(
            vals[r.a as usize],
            vals[r.b as usize],
            vals[r.c as usize],
            r,
        );
    }
}

/// `Slice2`: bits straddling two words.
#[inline(always)]
fn slice2_one(r: &Rec, vals: &mut [u64]) {
    let lo = vals[r.a as usize] >> r.b;
    let hi = vals[r.a as usize + 1] << (64 - r.b);
    vals[r.d as usize] = (lo | hi) & r.k;
}

/// Every record of `s` as a `Slice2`.
pub(crate) fn slice2(code: &Code, s: &Step, vals: &mut [u64]) {
    for r in records(code, s) {
        slice2_one(r, vals);
    }
}

/// `vals[d] = k | OR of the parts` (out of line: rare in mixed steps).
#[inline(never)]
fn cat_n_one(code: &Code, r: &Rec, vals: &mut [u64]) {
    let mut acc = r.k;
    for &(off, sh) in &code.parts[r.a as usize..(r.a + r.b) as usize] {
        acc |= vals[off as usize] << sh;
    }
    vals[r.d as usize] = acc;
}

/// Every record of `s` as a `CatN`.
pub(crate) fn cat_n(code: &Code, s: &Step, vals: &mut [u64]) {
    for r in records(code, s) {
        cat_n_one(code, r, vals);
    }
}

/// The wide operation of record `r` (out of line: rare in mixed steps).
#[inline(never)]
fn wide_one(code: &Code, r: &Rec, vals: &mut [u64]) {
    run_wide(&code.wide[r.a as usize], vals);
}

/// Every record of `s` as a wide operation.
pub(crate) fn wide(code: &Code, s: &Step, vals: &mut [u64]) {
    for r in records(code, s) {
        wide_one(code, r, vals);
    }
}

/// Runs record `r` of kind `kind` on its own.
#[inline(always)]
fn one(code: &Code, kind: Kind, r: &Rec, vals: &mut [u64]) {
    macro_rules! un {
        ($f:ty) => {
            vals[r.d as usize] = <$f>::f(vals[r.a as usize], r)
        };
    }
    macro_rules! bin {
        ($f:ty) => {
            vals[r.d as usize] = <$f>::f(vals[r.a as usize], vals[r.b as usize], r)
        };
    }
    macro_rules! ter {
        ($f:ty) => {
            vals[r.d as usize] = <$f>::f(
                vals[r.a as usize],
                vals[r.b as usize],
                vals[r.c as usize],
                r,
            )
        };
    }
    match kind {
        Kind::Field => un!(Field),
        Kind::Not => un!(Not),
        Kind::Sra => un!(Sra),
        Kind::Replicate => un!(Replicate),
        Kind::RedAnd => un!(RedAnd),
        Kind::RedOr => un!(RedOr),
        Kind::RedXor => un!(RedXor),
        Kind::Lz => un!(Lz),
        Kind::And => bin!(And),
        Kind::Or => bin!(Or),
        Kind::Xor => bin!(Xor),
        Kind::Add => bin!(Add),
        Kind::Sub => bin!(Sub),
        Kind::Mul => bin!(Mul),
        Kind::Eq => bin!(Eq),
        Kind::Ne => bin!(Ne),
        Kind::LtU => bin!(LtU),
        Kind::LeU => bin!(LeU),
        Kind::LtS => bin!(LtS),
        Kind::LeS => bin!(LeS),
        Kind::Cat2 => bin!(Cat2),
        Kind::ShlV => bin!(ShlV),
        Kind::ShrV => bin!(ShrV),
        Kind::SraV => bin!(SraV),
        Kind::Mux => ter!(Mux),
        Kind::Cat3 => ter!(Cat3),
        Kind::Slice2 => slice2_one(r, vals),
        Kind::CatN => cat_n_one(code, r, vals),
        Kind::Wide => wide_one(code, r, vals),
    }
}

/// Runs a mixed step: every record that depends on a source in `dirty`, by its
/// own kind.
#[inline]
pub(crate) fn mixed(code: &Code, s: &Step, vals: &mut [u64], dirty: u64) {
    let range = s.start as usize..(s.start + s.n) as usize;
    for (r, t) in code.recs[range.clone()].iter().zip(&code.tags[range]) {
        if t.mask & dirty != 0 {
            one(code, t.kind, r, vals);
        }
    }
}

/// Runs every record of a mixed step.
pub(crate) fn mixed_all(code: &Code, s: &Step, vals: &mut [u64]) {
    mixed(code, s, vals, u64::MAX);
}
