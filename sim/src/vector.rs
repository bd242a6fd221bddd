//! Run steps: `n` instances of one record over consecutive words, as plain slice
//! loops (no per-instance record, index or bounds check) that the compiler
//! vectorizes. Each operand is either `n` consecutive words (stride 1) or one word
//! for all (stride 0), fixed per kernel by const parameters.
//!
//! The loop bodies are `#[inline(always)]` and instantiated twice: plainly (the
//! baseline target) and, on x86-64 CPUs that have it, with AVX2 enabled (four
//! words per vector operation instead of two, and 64-bit compares and variable
//! shifts in vector registers). The CPU is checked once, when a step's kernel is
//! chosen (`*_run`), not at every call.

use crate::exec::Code;
use crate::instr::{Rec, Span, Step};
use crate::kernels::Kernel;
use crate::ops::{Binary, Ternary, Unary};
use crate::wide_exec::{split, Src};

/// Operand words of a run.
enum Words<'a> {
    /// `n` consecutive words.
    Many(&'a [u64]),
    /// One word for every instance.
    One(u64),
}

impl Words<'_> {
    #[inline(always)]
    fn at(&self, j: usize) -> u64 {
        match self {
            Words::Many(v) => v[j],
            Words::One(x) => *x,
        }
    }
}

#[inline(always)]
fn operand<'a>(src: &'a Src<'_>, off: u32, n: u32, consecutive: bool) -> Words<'a> {
    if consecutive {
        Words::Many(src.get(Span { off, words: n }))
    } else {
        Words::One(src.word(off))
    }
}

/// The template record of run `s`, its destination words and the rest of storage.
#[inline(always)]
fn parts<'a>(code: &'a Code, s: &Step, vals: &'a mut [u64]) -> (&'a Rec, &'a mut [u64], Src<'a>) {
    let r = &code.recs[s.start as usize];
    let (d, src) = split(
        vals,
        Span {
            off: r.d,
            words: s.n,
        },
    );
    (r, d, src)
}

#[inline(always)]
fn unary<F: Unary, const A: bool>(code: &Code, s: &Step, vals: &mut [u64]) {
    let (r, d, src) = parts(code, s, vals);
    match operand(&src, r.a, s.n, A) {
        Words::Many(a) => {
            for (x, y) in d.iter_mut().zip(a) {
                *x = F::f(*y, r);
            }
        }
        Words::One(y) => d.fill(F::f(y, r)),
    }
}

#[inline(always)]
fn binary<F: Binary, const A: bool, const B: bool>(code: &Code, s: &Step, vals: &mut [u64]) {
    let (r, d, src) = parts(code, s, vals);
    match (operand(&src, r.a, s.n, A), operand(&src, r.b, s.n, B)) {
        (Words::Many(a), Words::Many(b)) => {
            for ((x, y), z) in d.iter_mut().zip(a).zip(b) {
                *x = F::f(*y, *z, r);
            }
        }
        (Words::Many(a), Words::One(z)) => {
            for (x, y) in d.iter_mut().zip(a) {
                *x = F::f(*y, z, r);
            }
        }
        (Words::One(y), Words::Many(b)) => {
            for (x, z) in d.iter_mut().zip(b) {
                *x = F::f(y, *z, r);
            }
        }
        (Words::One(y), Words::One(z)) => d.fill(F::f(y, z, r)),
    }
}

#[inline(always)]
fn ternary<F: Ternary, const A: bool, const B: bool, const C: bool>(
    code: &Code,
    s: &Step,
    vals: &mut [u64],
) {
    let (r, d, src) = parts(code, s, vals);
    let (a, b, c) = (
        operand(&src, r.a, s.n, A),
        operand(&src, r.b, s.n, B),
        operand(&src, r.c, s.n, C),
    );
    match (&a, &b, &c) {
        (Words::Many(a), Words::Many(b), Words::Many(c)) => {
            for (((x, p), q), t) in d.iter_mut().zip(*a).zip(*b).zip(*c) {
                *x = F::f(*p, *q, *t, r);
            }
        }
        (Words::Many(a), Words::Many(b), Words::One(t)) => {
            for ((x, p), q) in d.iter_mut().zip(*a).zip(*b) {
                *x = F::f(*p, *q, *t, r);
            }
        }
        (Words::Many(a), Words::One(q), Words::Many(c)) => {
            for ((x, p), t) in d.iter_mut().zip(*a).zip(*c) {
                *x = F::f(*p, *q, *t, r);
            }
        }
        _ => {
            for (j, x) in d.iter_mut().enumerate() {
                *x = F::f(a.at(j), b.at(j), c.at(j), r);
            }
        }
    }
}

#[inline(always)]
fn slice2<const A: bool>(code: &Code, s: &Step, vals: &mut [u64]) {
    let (r, d, src) = parts(code, s, vals);
    let words = if A { s.n + 1 } else { 2 };
    let w = src.get(Span { off: r.a, words });
    let (b, k) = (r.b, r.k);
    if A {
        for (x, p) in d.iter_mut().zip(w.windows(2)) {
            *x = ((p[0] >> b) | (p[1] << (64 - b))) & k;
        }
    } else {
        d.fill(((w[0] >> b) | (w[1] << (64 - b))) & k);
    }
}

/// Kernels compiled for the baseline target.
mod plain {
    use super::*;

    pub(super) fn unary<F: Unary, const A: bool>(code: &Code, s: &Step, vals: &mut [u64]) {
        super::unary::<F, A>(code, s, vals)
    }

    pub(super) fn binary<F: Binary, const A: bool, const B: bool>(
        code: &Code,
        s: &Step,
        vals: &mut [u64],
    ) {
        super::binary::<F, A, B>(code, s, vals)
    }

    pub(super) fn ternary<F: Ternary, const A: bool, const B: bool, const C: bool>(
        code: &Code,
        s: &Step,
        vals: &mut [u64],
    ) {
        super::ternary::<F, A, B, C>(code, s, vals)
    }

    pub(super) fn slice2<const A: bool>(code: &Code, s: &Step, vals: &mut [u64]) {
        super::slice2::<A>(code, s, vals)
    }
}

/// Kernels compiled with AVX2.
///
/// # Safety
///
/// Each function calls its `#[target_feature(enable = "avx2")]` body without
/// checking the CPU. They are private to this module's parent, whose only way to
/// hand them out is [`kernel!`], which checks `is_x86_feature_detected!("avx2")`
/// first (once, when a step's kernel is chosen; the check cannot change while the
/// process runs). The bodies are otherwise ordinary safe code.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::*;

    pub(super) fn unary<F: Unary, const A: bool>(code: &Code, s: &Step, vals: &mut [u64]) {
        #[target_feature(enable = "avx2")]
        fn go<F: Unary, const A: bool>(code: &Code, s: &Step, vals: &mut [u64]) {
            super::unary::<F, A>(code, s, vals)
        }
        // SAFETY: the CPU has AVX2 (see the module's safety section).
        unsafe { go::<F, A>(code, s, vals) }
    }

    pub(super) fn binary<F: Binary, const A: bool, const B: bool>(
        code: &Code,
        s: &Step,
        vals: &mut [u64],
    ) {
        #[target_feature(enable = "avx2")]
        fn go<F: Binary, const A: bool, const B: bool>(code: &Code, s: &Step, vals: &mut [u64]) {
            super::binary::<F, A, B>(code, s, vals)
        }
        // SAFETY: the CPU has AVX2 (see the module's safety section).
        unsafe { go::<F, A, B>(code, s, vals) }
    }

    pub(super) fn ternary<F: Ternary, const A: bool, const B: bool, const C: bool>(
        code: &Code,
        s: &Step,
        vals: &mut [u64],
    ) {
        #[target_feature(enable = "avx2")]
        fn go<F: Ternary, const A: bool, const B: bool, const C: bool>(
            code: &Code,
            s: &Step,
            vals: &mut [u64],
        ) {
            super::ternary::<F, A, B, C>(code, s, vals)
        }
        // SAFETY: the CPU has AVX2 (see the module's safety section).
        unsafe { go::<F, A, B, C>(code, s, vals) }
    }

    pub(super) fn slice2<const A: bool>(code: &Code, s: &Step, vals: &mut [u64]) {
        #[target_feature(enable = "avx2")]
        fn go<const A: bool>(code: &Code, s: &Step, vals: &mut [u64]) {
            super::slice2::<A>(code, s, vals)
        }
        // SAFETY: the CPU has AVX2 (see the module's safety section).
        unsafe { go::<A>(code, s, vals) }
    }
}

/// The kernel `$f::<…>`: the AVX2 one if the CPU has it (the only place that
/// hands one out), the baseline one otherwise.
macro_rules! kernel {
    ($f:ident::<$($arg:tt),*>) => {{
        #[cfg(target_arch = "x86_64")]
        let k: Kernel = if std::arch::is_x86_feature_detected!("avx2") {
            avx2::$f::<$($arg),*>
        } else {
            plain::$f::<$($arg),*>
        };
        #[cfg(not(target_arch = "x86_64"))]
        let k: Kernel = plain::$f::<$($arg),*>;
        k
    }};
}

/// The kernel of a run of `F`; `a`: its operand is consecutive words.
pub(crate) fn unary_run<F: Unary>(a: bool) -> Kernel {
    match a {
        true => kernel!(unary::<F, true>),
        false => kernel!(unary::<F, false>),
    }
}

/// The kernel of a run of `F`; bit `i` of `strides`: operand `i` is consecutive
/// words.
pub(crate) fn binary_run<F: Binary>(strides: u8) -> Kernel {
    match strides & 3 {
        3 => kernel!(binary::<F, true, true>),
        1 => kernel!(binary::<F, true, false>),
        2 => kernel!(binary::<F, false, true>),
        _ => kernel!(binary::<F, false, false>),
    }
}

/// The kernel of a run of `F`; bit `i` of `strides`: operand `i` is consecutive
/// words.
pub(crate) fn ternary_run<F: Ternary>(strides: u8) -> Kernel {
    match strides & 7 {
        7 => kernel!(ternary::<F, true, true, true>),
        6 => kernel!(ternary::<F, false, true, true>),
        5 => kernel!(ternary::<F, true, false, true>),
        4 => kernel!(ternary::<F, false, false, true>),
        3 => kernel!(ternary::<F, true, true, false>),
        2 => kernel!(ternary::<F, false, true, false>),
        1 => kernel!(ternary::<F, true, false, false>),
        _ => kernel!(ternary::<F, false, false, false>),
    }
}

/// The kernel of a run of two-word slices; `a`: the source advances by a word per
/// instance.
pub(crate) fn slice2_run(a: bool) -> Kernel {
    match a {
        true => kernel!(slice2::<true>),
        false => kernel!(slice2::<false>),
    }
}
