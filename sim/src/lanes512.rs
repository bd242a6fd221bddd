//! The compiled engine's run calls (see [`RunKernel`]) in explicit AVX-512, for the
//! kinds [`lanes`](crate::lanes) has AVX2 forms of: eight words per operation,
//! comparisons into mask registers, multiplexers as blends, and the last one to
//! seven words as one masked vector. The calls and their loop are
//! [`run_forms`](crate::run_forms)'s; this module gives them AVX-512F's primitives
//! and each kind's eight-lane form. A process takes these forms where
//! [`vector_loops`](crate::run_forms::vector_loops) chooses them (an Intel CPU with
//! AVX-512F); `kernels`'s tests hold them to the interpreter's loops on any CPU that
//! has AVX-512F.
//!
//! # Safety
//!
//! The loops run AVX-512F instructions without checking the CPU. They are private
//! to this module, whose only way to hand one out ([`unary`], [`binary`],
//! [`ternary`], [`slice2`]) checks `is_x86_feature_detected!("avx512f")` first. A
//! loop accesses exactly the words the [`RunKernel`] contract lists, as `lanes`'s
//! do; the masked rest loads and stores only the lanes below `n` (a masked
//! `vmovdqu64` neither reads nor writes, nor faults on, the others).

use crate::instr::Rec;
use crate::ops::{Binary, Ternary, Unary};
use crate::run_forms::{kind_forms, lane_traits, run_calls};
use crate::vector::{RunCall, RunKernel};
use core::arch::x86_64::*;

/// Eight words.
type V = __m512i;
/// The lanes a masked load or store touches: one bit each.
type M = __mmask8;
/// Words in a vector.
const LANES: usize = 8;

lane_traits!("AVX-512F");

/// Whether the CPU runs AVX-512F (it cannot change while the process runs).
pub(crate) fn supported() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
}

run_calls!("avx512f");

/// The lanes of the last vector of `n` words from word `j` (`n - j` in 1..=7).
#[inline]
fn tail_mask(n: usize, j: usize) -> M {
    ((1u32 << (n - j)) - 1) as M
}

/// Eight words of an operand from instance `j`: consecutive from `p` (`MANY`), or
/// `one` (the operand's single word, broadcast).
///
/// # Safety
/// For `MANY`, the eight words from `p + j` lie in storage.
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn load<const MANY: bool>(p: *const u64, j: usize, one: V) -> V {
    if MANY {
        // SAFETY: the caller's contract.
        unsafe { _mm512_loadu_si512(p.add(j).cast()) }
    } else {
        one
    }
}

/// [`load`] of the lanes of `mask` only (the others read nothing and are 0).
///
/// # Safety
/// For `MANY`, the words from `p + j` in the lanes of `mask` lie in storage.
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn load_masked<const MANY: bool>(p: *const u64, j: usize, one: V, mask: M) -> V {
    if MANY {
        // SAFETY: the caller's contract; masked-off lanes are not accessed.
        unsafe { _mm512_maskz_loadu_epi64(mask, p.add(j).cast()) }
    } else {
        one
    }
}

/// The broadcast word at `p`, the operand of every instance (for an operand of
/// stride 0; for a consecutive one, unused and 0).
///
/// # Safety
/// For `!MANY`, the word at `p` lies in storage.
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn single<const MANY: bool>(p: *const u64) -> V {
    if MANY {
        _mm512_setzero_si512()
    } else {
        // SAFETY: the caller's contract.
        _mm512_set1_epi64(unsafe { *p } as i64)
    }
}

/// Stores eight words at `p`.
///
/// # Safety
/// The eight words from `p` lie in storage.
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn store(p: *mut u64, v: V) {
    // SAFETY: the caller's contract.
    unsafe { _mm512_storeu_si512(p.cast(), v) }
}

/// Stores the lanes of `mask` at `p` (the others are not touched).
///
/// # Safety
/// The words from `p` in the lanes of `mask` lie in storage.
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn store_masked(p: *mut u64, mask: M, v: V) {
    // SAFETY: the caller's contract; masked-off lanes are not accessed.
    unsafe { _mm512_mask_storeu_epi64(p.cast(), mask, v) }
}

/// A two-word slice's shift distances and mask.
type SliceParams = (__m128i, __m128i, V);

/// The shift distances (`b` and `64 - b`, modulo 64) and the mask of a two-word
/// slice's record.
#[target_feature(enable = "avx512f")]
#[inline]
fn slice_params(r: &Rec) -> SliceParams {
    (
        distance(r.b.into()),
        distance(64u64.wrapping_sub(r.b.into())),
        _mm512_set1_epi64(r.k as i64),
    )
}

/// The slices of eight pairs of words.
#[target_feature(enable = "avx512f")]
#[inline]
fn slice_pair(x: V, y: V, (lo, hi, k): SliceParams) -> V {
    _mm512_and_si512(
        _mm512_or_si512(_mm512_srl_epi64(x, lo), _mm512_sll_epi64(y, hi)),
        k,
    )
}

/// 1 in the lanes of `k`, 0 in the others.
#[target_feature(enable = "avx512f")]
#[inline]
fn bit(k: M) -> V {
    _mm512_maskz_mov_epi64(k, _mm512_set1_epi64(1))
}

/// A shift distance for `_mm512_sll_epi64` / `_mm512_srl_epi64`, modulo 64.
#[target_feature(enable = "avx512f")]
#[inline]
fn distance(s: u64) -> __m128i {
    _mm_cvtsi64_si128((s & 63) as i64)
}

kind_forms! { "avx512f", Lanes1:
    Field(x) [r => p: (__m128i, V, __m128i, V) = (
        distance(r.b.into()),
        _mm512_set1_epi64(r.k as i64),
        distance(r.c.into()),
        _mm512_set1_epi64(r.k2 as i64),
    )] {
        let field = _mm512_and_si512(_mm512_srl_epi64(x, p.0), p.1);
        _mm512_or_si512(_mm512_sll_epi64(field, p.2), p.3)
    }
    Not(x) [r => k: V = _mm512_set1_epi64(r.k as i64)] { _mm512_xor_si512(x, k) }
    RedAnd(x) [r => k: V = _mm512_set1_epi64(r.k as i64)] {
        bit(_mm512_cmpeq_epu64_mask(x, k))
    }
    RedOr(x) [r => zero: V = _mm512_setzero_si512()] {
        bit(_mm512_cmpneq_epu64_mask(x, zero))
    }
}

kind_forms! { "avx512f", Lanes2:
    And(x, y) [r => none: () = ()] { _mm512_and_si512(x, y) }
    Or(x, y) [r => none: () = ()] { _mm512_or_si512(x, y) }
    Xor(x, y) [r => none: () = ()] { _mm512_xor_si512(x, y) }
    Add(x, y) [r => k: V = _mm512_set1_epi64(r.k as i64)] {
        _mm512_and_si512(_mm512_add_epi64(x, y), k)
    }
    Sub(x, y) [r => k: V = _mm512_set1_epi64(r.k as i64)] {
        _mm512_and_si512(_mm512_sub_epi64(x, y), k)
    }
    Eq(x, y) [r => none: () = ()] { bit(_mm512_cmpeq_epu64_mask(x, y)) }
    Ne(x, y) [r => none: () = ()] { bit(_mm512_cmpneq_epu64_mask(x, y)) }
    LtU(x, y) [r => none: () = ()] { bit(_mm512_cmplt_epu64_mask(x, y)) }
    LeU(x, y) [r => none: () = ()] { bit(_mm512_cmple_epu64_mask(x, y)) }
    Cat2(x, y) [r => p: (__m128i, V) = (distance(r.c.into()), _mm512_set1_epi64(r.k as i64))] {
        _mm512_or_si512(_mm512_or_si512(_mm512_sll_epi64(x, p.0), y), p.1)
    }
}

kind_forms! { "avx512f", Lanes3:
    Mux(s, t, f) [r => none: () = ()] {
        let select = _mm512_test_epi64_mask(s, _mm512_set1_epi64(1));
        _mm512_mask_blend_epi64(select, f, t)
    }
    Cat3(x, y, z) [r => p: (__m128i, __m128i, V) = (
        distance(r.k2),
        distance(r.k2 >> 8),
        _mm512_set1_epi64(r.k as i64),
    )] {
        let parts = _mm512_or_si512(_mm512_sll_epi64(x, p.0), _mm512_sll_epi64(y, p.1));
        _mm512_or_si512(parts, _mm512_or_si512(z, p.2))
    }
}
