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
//!
//! Each loop has two entries that share its body: the interpreter's [`Kernel`],
//! which finds the run's words from its step and storage slice (bounds-checked),
//! and the compiled engine's [`RunKernel`], which the emitted code calls directly
//! with the storage base and the run's [`RunCall`] (the words were checked when
//! the engine was planned): a dozen instructions of set-up instead of about fifty.

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

/// One run as the compiled engine calls it: its loop, its instance count and its
/// template record (instance 0's storage offsets and the kind's parameters).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct RunCall {
    /// The loop.
    pub kernel: RunKernel,
    /// Instances.
    pub n: u64,
    /// The template record.
    pub rec: Rec,
}

/// A run's loop as the compiled engine calls it: over the storage at `vals`,
/// without a bounds check.
///
/// # Safety
/// Every word `call` reads or writes (its `n` destination words, and each operand's
/// `n` words, or one for an operand of stride 0, or `n + 1` and 2 for a two-word
/// slice) lies in the storage at `vals`; the destination words are none of the
/// words it reads; nothing else accesses them during the call. The compiled
/// engine's plan checks the first two (see `jit::plan`).
pub(crate) type RunKernel = unsafe extern "C" fn(vals: *mut u64, call: &RunCall);

/// The destination words of `call`.
///
/// # Safety
/// As for [`RunKernel`].
#[inline(always)]
unsafe fn call_dst<'a>(vals: *mut u64, call: &RunCall) -> &'a mut [u64] {
    // SAFETY: the words lie in storage and nothing else accesses them.
    unsafe { std::slice::from_raw_parts_mut(vals.add(call.rec.d as usize), call.n as usize) }
}

/// The `n` words at `off` (consecutive), or the one word there.
///
/// # Safety
/// As for [`RunKernel`]: the words lie in storage, outside the destination.
#[inline(always)]
unsafe fn call_operand<'a>(vals: *const u64, off: u32, n: u64, consecutive: bool) -> Words<'a> {
    let at = unsafe { vals.add(off as usize) };
    // SAFETY: the caller's contract; these words are not the destination's.
    unsafe {
        if consecutive {
            Words::Many(std::slice::from_raw_parts(at, n as usize))
        } else {
            Words::One(*at)
        }
    }
}

#[inline(always)]
fn unary<F: Unary>(r: &Rec, d: &mut [u64], a: Words) {
    match a {
        Words::Many(a) => {
            for (x, y) in d.iter_mut().zip(a) {
                *x = F::f(*y, r);
            }
        }
        Words::One(y) => d.fill(F::f(y, r)),
    }
}

#[inline(always)]
fn binary<F: Binary>(r: &Rec, d: &mut [u64], a: Words, b: Words) {
    match (a, b) {
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
fn ternary<F: Ternary>(r: &Rec, d: &mut [u64], a: Words, b: Words, c: Words) {
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

/// Two-word slices of `w`: one per destination word from consecutive pairs
/// (`consecutive`), or the first pair's for all.
#[inline(always)]
fn slice2(r: &Rec, d: &mut [u64], w: &[u64], consecutive: bool) {
    let (b, k) = (r.b, r.k);
    if consecutive {
        for (x, p) in d.iter_mut().zip(w.windows(2)) {
            *x = ((p[0] >> b) | (p[1] << (64 - b))) & k;
        }
    } else {
        d.fill(((w[0] >> b) | (w[1] << (64 - b))) & k);
    }
}

/// Words a two-word slice run reads: `n + 1` consecutive, or the first two.
fn slice2_words(n: u32, consecutive: bool) -> u32 {
    if consecutive {
        n + 1
    } else {
        2
    }
}

/// The interpreter's run kernels (see [`Kernel`]) and the compiled engine's (see
/// [`RunKernel`]): the operands found by step, or by call, then the loop.
mod shapes {
    use super::*;

    #[inline(always)]
    pub fn unary_step<F: Unary, const A: bool>(code: &Code, s: &Step, vals: &mut [u64]) {
        let (r, d, src) = parts(code, s, vals);
        unary::<F>(r, d, operand(&src, r.a, s.n, A))
    }

    #[inline(always)]
    pub fn binary_step<F: Binary, const A: bool, const B: bool>(
        code: &Code,
        s: &Step,
        vals: &mut [u64],
    ) {
        let (r, d, src) = parts(code, s, vals);
        let (a, b) = (operand(&src, r.a, s.n, A), operand(&src, r.b, s.n, B));
        binary::<F>(r, d, a, b)
    }

    #[inline(always)]
    pub fn ternary_step<F: Ternary, const A: bool, const B: bool, const C: bool>(
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
        ternary::<F>(r, d, a, b, c)
    }

    #[inline(always)]
    pub fn slice2_step<const A: bool>(code: &Code, s: &Step, vals: &mut [u64]) {
        let (r, d, src) = parts(code, s, vals);
        let w = src.get(Span {
            off: r.a,
            words: slice2_words(s.n, A),
        });
        slice2(r, d, w, A)
    }

    /// # Safety
    /// As for [`RunKernel`].
    #[inline(always)]
    pub unsafe fn unary_call<F: Unary, const A: bool>(vals: *mut u64, call: &RunCall) {
        let r = &call.rec;
        // SAFETY: the caller's contract.
        unsafe { unary::<F>(r, call_dst(vals, call), call_operand(vals, r.a, call.n, A)) }
    }

    /// # Safety
    /// As for [`RunKernel`].
    #[inline(always)]
    pub unsafe fn binary_call<F: Binary, const A: bool, const B: bool>(
        vals: *mut u64,
        call: &RunCall,
    ) {
        let (r, n) = (&call.rec, call.n);
        // SAFETY: the caller's contract.
        unsafe {
            let (a, b) = (call_operand(vals, r.a, n, A), call_operand(vals, r.b, n, B));
            binary::<F>(r, call_dst(vals, call), a, b)
        }
    }

    /// # Safety
    /// As for [`RunKernel`].
    #[inline(always)]
    pub unsafe fn ternary_call<F: Ternary, const A: bool, const B: bool, const C: bool>(
        vals: *mut u64,
        call: &RunCall,
    ) {
        let (r, n) = (&call.rec, call.n);
        // SAFETY: the caller's contract.
        unsafe {
            let (a, b, c) = (
                call_operand(vals, r.a, n, A),
                call_operand(vals, r.b, n, B),
                call_operand(vals, r.c, n, C),
            );
            ternary::<F>(r, call_dst(vals, call), a, b, c)
        }
    }

    /// # Safety
    /// As for [`RunKernel`].
    #[inline(always)]
    pub unsafe fn slice2_call<const A: bool>(vals: *mut u64, call: &RunCall) {
        let r = &call.rec;
        let words = slice2_words(call.n as u32, A) as u64;
        // SAFETY: the caller's contract.
        unsafe {
            let Words::Many(w) = call_operand(vals, r.a, words, true) else {
                unreachable!("consecutive words")
            };
            slice2(r, call_dst(vals, call), w, A)
        }
    }
}

/// Declares each shape's kernels for one target, `$attr` being its
/// `target_feature` (none for the baseline): the interpreter's (a safe function
/// calling an inner one that carries the attribute) and the compiled engine's
/// (`unsafe extern "C"`, carrying the attribute itself).
macro_rules! target_kernels {
    ($(#[$attr:meta])?) => {
        use super::*;

        pub(super) fn unary<F: Unary, const A: bool>(code: &Code, s: &Step, vals: &mut [u64]) {
            $(#[$attr])?
            fn go<F: Unary, const A: bool>(code: &Code, s: &Step, vals: &mut [u64]) {
                shapes::unary_step::<F, A>(code, s, vals)
            }
            // SAFETY: the CPU has the target's features (see the module's safety section).
            #[allow(unused_unsafe)]
            unsafe {
                go::<F, A>(code, s, vals)
            }
        }

        pub(super) fn binary<F: Binary, const A: bool, const B: bool>(
            code: &Code,
            s: &Step,
            vals: &mut [u64],
        ) {
            $(#[$attr])?
            fn go<F: Binary, const A: bool, const B: bool>(code: &Code, s: &Step, vals: &mut [u64]) {
                shapes::binary_step::<F, A, B>(code, s, vals)
            }
            // SAFETY: as above.
            #[allow(unused_unsafe)]
            unsafe {
                go::<F, A, B>(code, s, vals)
            }
        }

        pub(super) fn ternary<F: Ternary, const A: bool, const B: bool, const C: bool>(
            code: &Code,
            s: &Step,
            vals: &mut [u64],
        ) {
            $(#[$attr])?
            fn go<F: Ternary, const A: bool, const B: bool, const C: bool>(
                code: &Code,
                s: &Step,
                vals: &mut [u64],
            ) {
                shapes::ternary_step::<F, A, B, C>(code, s, vals)
            }
            // SAFETY: as above.
            #[allow(unused_unsafe)]
            unsafe {
                go::<F, A, B, C>(code, s, vals)
            }
        }

        pub(super) fn slice2<const A: bool>(code: &Code, s: &Step, vals: &mut [u64]) {
            $(#[$attr])?
            fn go<const A: bool>(code: &Code, s: &Step, vals: &mut [u64]) {
                shapes::slice2_step::<A>(code, s, vals)
            }
            // SAFETY: as above.
            #[allow(unused_unsafe)]
            unsafe {
                go::<A>(code, s, vals)
            }
        }

        /// # Safety
        /// As for [`RunKernel`], on a CPU with the target's features.
        $(#[$attr])?
        pub(super) unsafe extern "C" fn unary_call<F: Unary, const A: bool>(
            vals: *mut u64,
            call: &RunCall,
        ) {
            // SAFETY: the caller's contract.
            unsafe { shapes::unary_call::<F, A>(vals, call) }
        }

        /// # Safety
        /// As for [`RunKernel`], on a CPU with the target's features.
        $(#[$attr])?
        pub(super) unsafe extern "C" fn binary_call<F: Binary, const A: bool, const B: bool>(
            vals: *mut u64,
            call: &RunCall,
        ) {
            // SAFETY: the caller's contract.
            unsafe { shapes::binary_call::<F, A, B>(vals, call) }
        }

        /// # Safety
        /// As for [`RunKernel`], on a CPU with the target's features.
        $(#[$attr])?
        pub(super) unsafe extern "C" fn ternary_call<
            F: Ternary,
            const A: bool,
            const B: bool,
            const C: bool,
        >(
            vals: *mut u64,
            call: &RunCall,
        ) {
            // SAFETY: the caller's contract.
            unsafe { shapes::ternary_call::<F, A, B, C>(vals, call) }
        }

        /// # Safety
        /// As for [`RunKernel`], on a CPU with the target's features.
        $(#[$attr])?
        pub(super) unsafe extern "C" fn slice2_call<const A: bool>(vals: *mut u64, call: &RunCall) {
            // SAFETY: the caller's contract.
            unsafe { shapes::slice2_call::<A>(vals, call) }
        }
    };
}

/// Kernels compiled for the baseline target.
mod plain {
    target_kernels!();
}

/// Kernels compiled with AVX2.
///
/// # Safety
///
/// Each function runs AVX2 code without checking the CPU. They are private to
/// this module's parent, whose only way to hand them out is [`kernel!`], which
/// checks `is_x86_feature_detected!("avx2")` first (once, when a step's kernel is
/// chosen; the check cannot change while the process runs). The bodies are
/// otherwise the same code as the baseline ones.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    target_kernels!(#[target_feature(enable = "avx2")]);
}

/// A run's two loops: the interpreter's and the compiled engine's.
#[derive(Clone, Copy)]
pub(crate) struct RunLoops {
    /// The interpreter's.
    pub step: Kernel,
    /// The compiled engine's.
    pub call: RunKernel,
}

/// The loops `$step::<…>` and `$call::<…>`: the AVX2 ones if the CPU has it (the
/// only place that hands one out), the baseline ones otherwise.
macro_rules! loops {
    ($step:ident, $call:ident, <$($arg:tt),*>) => {{
        #[cfg(target_arch = "x86_64")]
        let loops = if std::arch::is_x86_feature_detected!("avx2") {
            RunLoops {
                step: avx2::$step::<$($arg),*>,
                call: avx2::$call::<$($arg),*>,
            }
        } else {
            RunLoops {
                step: plain::$step::<$($arg),*>,
                call: plain::$call::<$($arg),*>,
            }
        };
        #[cfg(not(target_arch = "x86_64"))]
        let loops = RunLoops {
            step: plain::$step::<$($arg),*>,
            call: plain::$call::<$($arg),*>,
        };
        loops
    }};
}

/// The loops of a run of `F`; `a`: its operand is consecutive words.
pub(crate) fn unary_run<F: Unary>(a: bool) -> RunLoops {
    match a {
        true => loops!(unary, unary_call, <F, true>),
        false => loops!(unary, unary_call, <F, false>),
    }
}

/// The loops of a run of `F`; bit `i` of `strides`: operand `i` is consecutive
/// words.
pub(crate) fn binary_run<F: Binary>(strides: u8) -> RunLoops {
    match strides & 3 {
        3 => loops!(binary, binary_call, <F, true, true>),
        1 => loops!(binary, binary_call, <F, true, false>),
        2 => loops!(binary, binary_call, <F, false, true>),
        _ => loops!(binary, binary_call, <F, false, false>),
    }
}

/// The loops of a run of `F`; bit `i` of `strides`: operand `i` is consecutive
/// words.
pub(crate) fn ternary_run<F: Ternary>(strides: u8) -> RunLoops {
    match strides & 7 {
        7 => loops!(ternary, ternary_call, <F, true, true, true>),
        6 => loops!(ternary, ternary_call, <F, false, true, true>),
        5 => loops!(ternary, ternary_call, <F, true, false, true>),
        4 => loops!(ternary, ternary_call, <F, false, false, true>),
        3 => loops!(ternary, ternary_call, <F, true, true, false>),
        2 => loops!(ternary, ternary_call, <F, false, true, false>),
        1 => loops!(ternary, ternary_call, <F, true, false, false>),
        _ => loops!(ternary, ternary_call, <F, false, false, false>),
    }
}

/// The loops of a run of two-word slices; `a`: the source advances by a word per
/// instance.
pub(crate) fn slice2_run(a: bool) -> RunLoops {
    match a {
        true => loops!(slice2, slice2_call, <true>),
        false => loops!(slice2, slice2_call, <false>),
    }
}
