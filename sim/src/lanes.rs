//! The compiled engine's run calls (see [`RunKernel`]) in explicit AVX2, for the
//! kinds AVX2 has instructions for: four words per operation, the record's
//! parameters broadcast once per call, four vectors per loop iteration, and the last
//! one to three words as one masked vector instead of a scalar tail.
//!
//! The `vector` loops are what LLVM makes of a plain slice loop: for a run of 16 to
//! 32 words about half of a call is set-up (an overlap check between destination
//! and operands, a choice between three loop variants, five saved registers),
//! measured at 80–100 instructions a call on PANAMA and the fp32 adder tree. These
//! loops need no overlap check (a run's destination is none of its operands, the
//! [`RunKernel`] contract) and have one shape. The other kinds keep the `vector`
//! loops: those AVX2 has no instruction for (64-bit multiply, replication, parity,
//! leading zeros) and those measured rare in runs (arithmetic and variable shifts,
//! signed comparisons; the `vector` loops left run 811 of the fp32 tree's 20,328
//! instructions a cycle). So does every kind on a CPU without AVX2 (the CPU is
//! checked once, when a step's loop is chosen).
//!
//! Each form computes exactly what its kind's scalar operation in `ops` computes,
//! shift distances taken modulo 64 as the scalar code's are in a release build;
//! `jit`'s `every_run_matches_the_interpreter` holds them to the interpreter's loops
//! at every operand stride and every length from 8 to 24.
//!
//! # Safety
//!
//! The loops run AVX2 instructions without checking the CPU. They are private to
//! this module, whose only way to hand one out ([`unary`], [`binary`], [`ternary`],
//! [`slice2`]) checks `is_x86_feature_detected!("avx2")` first. A loop accesses
//! exactly the words the [`RunKernel`] contract lists: the `n` destination words,
//! each consecutive operand's `n` words (`n + 1` for a two-word slice), and the one
//! word of an operand of stride 0 (two for a slice); the masked rest loads and stores
//! only the lanes below `n` (`vpmaskmovq` does not touch the others).

use crate::instr::Rec;
use crate::ops::{Binary, Ternary, Unary};
use crate::vector::{RunCall, RunKernel};
use core::arch::x86_64::*;

/// Four words.
type V = __m256i;

/// A unary kind's four-lane form.
pub(crate) trait Lanes1: Unary {
    /// Its parameters, broadcast.
    type P: Copy;
    /// # Safety
    /// The CPU has AVX2.
    unsafe fn params(r: &Rec) -> Self::P;
    /// The kind's operation on each of four words.
    ///
    /// # Safety
    /// The CPU has AVX2.
    unsafe fn f4(x: V, p: Self::P) -> V;
}

/// A binary kind's four-lane form.
pub(crate) trait Lanes2: Binary {
    /// Its parameters, broadcast.
    type P: Copy;
    /// # Safety
    /// The CPU has AVX2.
    unsafe fn params(r: &Rec) -> Self::P;
    /// The kind's operation on each of four pairs of words.
    ///
    /// # Safety
    /// The CPU has AVX2.
    unsafe fn f4(x: V, y: V, p: Self::P) -> V;
}

/// A ternary kind's four-lane form.
pub(crate) trait Lanes3: Ternary {
    /// Its parameters, broadcast.
    type P: Copy;
    /// # Safety
    /// The CPU has AVX2.
    unsafe fn params(r: &Rec) -> Self::P;
    /// The kind's operation on each of four triples of words.
    ///
    /// # Safety
    /// The CPU has AVX2.
    unsafe fn f4(x: V, y: V, z: V, p: Self::P) -> V;
}

/// Whether the CPU runs AVX2 (checked once per chosen loop; it cannot change while
/// the process runs).
fn avx2() -> bool {
    std::arch::is_x86_feature_detected!("avx2")
}

/// The AVX2 run call of unary kind `F` (`a`: its operand is consecutive words), if
/// the CPU has AVX2.
pub(crate) fn unary<F: Lanes1>(a: bool) -> Option<RunKernel> {
    avx2().then_some(match a {
        true => unary_call::<F, true> as RunKernel,
        false => unary_call::<F, false>,
    })
}

/// The AVX2 run call of binary kind `F` (bit `i` of `strides`: operand `i` is
/// consecutive words), if the CPU has AVX2.
pub(crate) fn binary<F: Lanes2>(strides: u8) -> Option<RunKernel> {
    avx2().then_some(match strides & 3 {
        3 => binary_call::<F, true, true> as RunKernel,
        1 => binary_call::<F, true, false>,
        2 => binary_call::<F, false, true>,
        _ => binary_call::<F, false, false>,
    })
}

/// The AVX2 run call of ternary kind `F` (bit `i` of `strides`: operand `i` is
/// consecutive words), if the CPU has AVX2.
pub(crate) fn ternary<F: Lanes3>(strides: u8) -> Option<RunKernel> {
    avx2().then_some(match strides & 7 {
        7 => ternary_call::<F, true, true, true> as RunKernel,
        6 => ternary_call::<F, false, true, true>,
        5 => ternary_call::<F, true, false, true>,
        4 => ternary_call::<F, false, false, true>,
        3 => ternary_call::<F, true, true, false>,
        2 => ternary_call::<F, false, true, false>,
        1 => ternary_call::<F, true, false, false>,
        _ => ternary_call::<F, false, false, false>,
    })
}

/// The AVX2 run call of two-word slices (`a`: the source advances by a word per
/// instance), if the CPU has AVX2.
pub(crate) fn slice2(a: bool) -> Option<RunKernel> {
    avx2().then_some(match a {
        true => slice2_call::<true> as RunKernel,
        false => slice2_call::<false>,
    })
}

/// The lanes of the last vector of `n` words from word `j` (`n - j` in 1..=3).
#[target_feature(enable = "avx2")]
#[inline]
fn tail_mask(n: usize, j: usize) -> V {
    _mm256_cmpgt_epi64(
        _mm256_set1_epi64x((n - j) as i64),
        _mm256_setr_epi64x(0, 1, 2, 3),
    )
}

/// Four words of an operand from instance `j`: consecutive from `p` (`MANY`), or
/// `one` (the operand's single word, broadcast).
///
/// # Safety
/// For `MANY`, the four words from `p + j` lie in storage.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn load<const MANY: bool>(p: *const u64, j: usize, one: V) -> V {
    if MANY {
        // SAFETY: the caller's contract.
        unsafe { _mm256_loadu_si256(p.add(j).cast()) }
    } else {
        one
    }
}

/// [`load`] of the lanes of `mask` only (the others read nothing and are 0).
///
/// # Safety
/// For `MANY`, the words from `p + j` in the lanes of `mask` lie in storage.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn load_masked<const MANY: bool>(p: *const u64, j: usize, one: V, mask: V) -> V {
    if MANY {
        // SAFETY: the caller's contract; masked-off lanes are not accessed.
        unsafe { _mm256_maskload_epi64(p.add(j).cast(), mask) }
    } else {
        one
    }
}

/// The broadcast word at `p`, the operand of every instance (for an operand of
/// stride 0; for a consecutive one, unused and 0).
///
/// # Safety
/// For `!MANY`, the word at `p` lies in storage.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn single<const MANY: bool>(p: *const u64) -> V {
    if MANY {
        _mm256_setzero_si256()
    } else {
        // SAFETY: the caller's contract.
        _mm256_set1_epi64x(unsafe { *p } as i64)
    }
}

/// Runs a call's loop into the destination: four vectors per iteration, then the
/// at most three whole vectors left as two and one without a loop, then the masked
/// rest. `$load(j)` is the result of the four instances from `j`, `$masked(j,
/// mask)` the same from operands loaded in `mask`'s lanes.
macro_rules! run_loop {
    ($n:expr, $d:expr, |$j:ident| $load:expr, |$jm:ident, $mask:ident| $masked:expr) => {{
        let (n, d): (usize, *mut u64) = ($n, $d);
        let mut at = 0;
        while at + 16 <= n {
            let $j = at;
            let v0 = $load;
            let $j = at + 4;
            let v1 = $load;
            let $j = at + 8;
            let v2 = $load;
            let $j = at + 12;
            let v3 = $load;
            _mm256_storeu_si256(d.add(at).cast(), v0);
            _mm256_storeu_si256(d.add(at + 4).cast(), v1);
            _mm256_storeu_si256(d.add(at + 8).cast(), v2);
            _mm256_storeu_si256(d.add(at + 12).cast(), v3);
            at += 16;
        }
        if at + 8 <= n {
            let $j = at;
            let v0 = $load;
            let $j = at + 4;
            let v1 = $load;
            _mm256_storeu_si256(d.add(at).cast(), v0);
            _mm256_storeu_si256(d.add(at + 4).cast(), v1);
            at += 8;
        }
        if at + 4 <= n {
            let $j = at;
            _mm256_storeu_si256(d.add(at).cast(), $load);
            at += 4;
        }
        if at < n {
            let ($jm, $mask) = (at, tail_mask(n, at));
            _mm256_maskstore_epi64(d.add(at).cast(), $mask, $masked);
        }
    }};
}

/// The run call of unary kind `F`.
///
/// # Safety
/// As for [`RunKernel`], on a CPU with AVX2.
#[target_feature(enable = "avx2")]
unsafe extern "C" fn unary_call<F: Lanes1, const A: bool>(vals: *mut u64, call: &RunCall) {
    let r = &call.rec;
    // SAFETY: the caller's contract: every word read and written lies in storage,
    // the destination's words are none of the operand's.
    unsafe {
        let a = vals.add(r.a as usize);
        let (p, one) = (F::params(r), single::<A>(a));
        run_loop!(
            call.n as usize,
            vals.add(r.d as usize),
            |j| F::f4(load::<A>(a, j, one), p),
            |j, m| F::f4(load_masked::<A>(a, j, one, m), p)
        );
    }
}

/// The run call of binary kind `F`.
///
/// # Safety
/// As for [`RunKernel`], on a CPU with AVX2.
#[target_feature(enable = "avx2")]
unsafe extern "C" fn binary_call<F: Lanes2, const A: bool, const B: bool>(
    vals: *mut u64,
    call: &RunCall,
) {
    let r = &call.rec;
    // SAFETY: as for `unary_call`.
    unsafe {
        let (a, b) = (vals.add(r.a as usize), vals.add(r.b as usize));
        let (p, one_a, one_b) = (F::params(r), single::<A>(a), single::<B>(b));
        run_loop!(
            call.n as usize,
            vals.add(r.d as usize),
            |j| F::f4(load::<A>(a, j, one_a), load::<B>(b, j, one_b), p),
            |j, m| F::f4(
                load_masked::<A>(a, j, one_a, m),
                load_masked::<B>(b, j, one_b, m),
                p
            )
        );
    }
}

/// The run call of ternary kind `F`.
///
/// # Safety
/// As for [`RunKernel`], on a CPU with AVX2.
#[target_feature(enable = "avx2")]
unsafe extern "C" fn ternary_call<F: Lanes3, const A: bool, const B: bool, const C: bool>(
    vals: *mut u64,
    call: &RunCall,
) {
    let r = &call.rec;
    // SAFETY: as for `unary_call`.
    unsafe {
        let (a, b, c) = (
            vals.add(r.a as usize),
            vals.add(r.b as usize),
            vals.add(r.c as usize),
        );
        let p = F::params(r);
        let (one_a, one_b, one_c) = (single::<A>(a), single::<B>(b), single::<C>(c));
        run_loop!(
            call.n as usize,
            vals.add(r.d as usize),
            |j| F::f4(
                load::<A>(a, j, one_a),
                load::<B>(b, j, one_b),
                load::<C>(c, j, one_c),
                p
            ),
            |j, m| F::f4(
                load_masked::<A>(a, j, one_a, m),
                load_masked::<B>(b, j, one_b, m),
                load_masked::<C>(c, j, one_c, m),
                p
            )
        );
    }
}

/// The run call of two-word slices: `((w[j] >> b) | (w[j + 1] << (64 - b))) & k`
/// from consecutive pairs (`A`) or the first pair for all.
///
/// # Safety
/// As for [`RunKernel`], on a CPU with AVX2.
#[target_feature(enable = "avx2")]
unsafe extern "C" fn slice2_call<const A: bool>(vals: *mut u64, call: &RunCall) {
    let r = &call.rec;
    let lo = _mm_cvtsi64_si128(i64::from(r.b & 63));
    let hi = _mm_cvtsi64_si128(i64::from(64u32.wrapping_sub(r.b) & 63));
    let k = _mm256_set1_epi64x(r.k as i64);
    let f = |x: V, y: V| {
        _mm256_and_si256(
            _mm256_or_si256(_mm256_srl_epi64(x, lo), _mm256_sll_epi64(y, hi)),
            k,
        )
    };
    // SAFETY: as for `unary_call`; a consecutive run reads `n + 1` words from its
    // source, a single one its first two.
    unsafe {
        let w = vals.add(r.a as usize);
        let (one_lo, one_hi) = (single::<A>(w), single::<A>(w.add(1)));
        let next = w.add(1);
        run_loop!(
            call.n as usize,
            vals.add(r.d as usize),
            |j| f(load::<A>(w, j, one_lo), load::<A>(next, j, one_hi)),
            |j, m| f(
                load_masked::<A>(w, j, one_lo, m),
                load_masked::<A>(next, j, one_hi, m)
            )
        );
    }
}

/// A word of 1 in every lane.
#[target_feature(enable = "avx2")]
#[inline]
fn ones() -> V {
    _mm256_set1_epi64x(1)
}

/// A shift distance for `_mm256_sll_epi64` / `_mm256_srl_epi64`, modulo 64.
#[target_feature(enable = "avx2")]
#[inline]
fn distance(s: u64) -> __m128i {
    _mm_cvtsi64_si128((s & 63) as i64)
}

/// `x < y` as unsigned 64-bit words, all ones or 0 per lane.
#[target_feature(enable = "avx2")]
#[inline]
fn less_u(x: V, y: V) -> V {
    let sign = _mm256_set1_epi64x(i64::MIN);
    _mm256_cmpgt_epi64(_mm256_xor_si256(y, sign), _mm256_xor_si256(x, sign))
}

/// Declares the four-lane form of each listed kind:
/// `Kind(operands) [r => params: Type = expression] { body }`, the parameters
/// computed once per call from the record `r`.
macro_rules! lanes {
    ($tr:ident: $($kind:ident($($x:ident),+) [$r:ident => $p:ident: $pt:ty = $params:expr] $body:block)*) => {$(
        impl $tr for crate::ops::$kind {
            type P = $pt;
            #[target_feature(enable = "avx2")]
            #[inline]
            #[allow(unused_variables)]
            unsafe fn params($r: &Rec) -> $pt {
                $params
            }
            #[target_feature(enable = "avx2")]
            #[inline]
            #[allow(unused_variables)]
            unsafe fn f4($($x: V,)+ $p: $pt) -> V $body
        }
    )*};
}

lanes! { Lanes1:
    Field(x) [r => p: (__m128i, V, __m128i, V) = (
        distance(r.b.into()),
        _mm256_set1_epi64x(r.k as i64),
        distance(r.c.into()),
        _mm256_set1_epi64x(r.k2 as i64),
    )] {
        let field = _mm256_and_si256(_mm256_srl_epi64(x, p.0), p.1);
        _mm256_or_si256(_mm256_sll_epi64(field, p.2), p.3)
    }
    Not(x) [r => k: V = _mm256_set1_epi64x(r.k as i64)] { _mm256_xor_si256(x, k) }
    RedAnd(x) [r => k: V = _mm256_set1_epi64x(r.k as i64)] {
        _mm256_srli_epi64::<63>(_mm256_cmpeq_epi64(x, k))
    }
    RedOr(x) [r => zero: V = _mm256_setzero_si256()] {
        _mm256_andnot_si256(_mm256_cmpeq_epi64(x, zero), ones())
    }
}

lanes! { Lanes2:
    And(x, y) [r => none: () = ()] { _mm256_and_si256(x, y) }
    Or(x, y) [r => none: () = ()] { _mm256_or_si256(x, y) }
    Xor(x, y) [r => none: () = ()] { _mm256_xor_si256(x, y) }
    Add(x, y) [r => k: V = _mm256_set1_epi64x(r.k as i64)] {
        _mm256_and_si256(_mm256_add_epi64(x, y), k)
    }
    Sub(x, y) [r => k: V = _mm256_set1_epi64x(r.k as i64)] {
        _mm256_and_si256(_mm256_sub_epi64(x, y), k)
    }
    Eq(x, y) [r => none: () = ()] { _mm256_srli_epi64::<63>(_mm256_cmpeq_epi64(x, y)) }
    Ne(x, y) [r => none: () = ()] { _mm256_andnot_si256(_mm256_cmpeq_epi64(x, y), ones()) }
    LtU(x, y) [r => none: () = ()] { _mm256_srli_epi64::<63>(less_u(x, y)) }
    LeU(x, y) [r => none: () = ()] { _mm256_andnot_si256(less_u(y, x), ones()) }
    Cat2(x, y) [r => p: (__m128i, V) = (distance(r.c.into()), _mm256_set1_epi64x(r.k as i64))] {
        _mm256_or_si256(_mm256_or_si256(_mm256_sll_epi64(x, p.0), y), p.1)
    }
}

lanes! { Lanes3:
    Mux(s, t, f) [r => none: () = ()] {
        let m = _mm256_sub_epi64(_mm256_setzero_si256(), _mm256_and_si256(s, ones()));
        _mm256_or_si256(_mm256_and_si256(t, m), _mm256_andnot_si256(m, f))
    }
    Cat3(x, y, z) [r => p: (__m128i, __m128i, V) = (
        distance(r.k2),
        distance(r.k2 >> 8),
        _mm256_set1_epi64x(r.k as i64),
    )] {
        let parts = _mm256_or_si256(_mm256_sll_epi64(x, p.0), _mm256_sll_epi64(y, p.1));
        _mm256_or_si256(parts, _mm256_or_si256(z, p.2))
    }
}
