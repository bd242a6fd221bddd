//! The compiled engine's run calls (see [`RunKernel`]) in explicit AVX2, for the
//! kinds AVX2 has instructions for: four words per operation, the record's
//! parameters broadcast once per call, four vectors per loop iteration, and the last
//! one to three words as one masked vector instead of a scalar tail. The calls and
//! their loop are [`run_forms`](crate::run_forms)'s, shared with the AVX-512 forms
//! of [`lanes512`](crate::lanes512); this module gives them AVX2's primitives and
//! each kind's four-lane form.
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
//! `jit`'s `every_run_matches_the_interpreter` holds the chosen forms to the
//! interpreter's loops at every operand stride and every length from 8 to 24, and
//! `kernels`'s `every_avx2_form_matches_the_interpreter` and
//! `every_avx512_form_matches_the_interpreter` hold these and the AVX-512 forms
//! to them at every stride and every length from 1 to 40 (each ignored on a CPU
//! without its set).
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
use crate::run_forms::{kind_forms, lane_traits, run_calls};
use crate::vector::{RunCall, RunKernel};
use core::arch::x86_64::*;

/// Four words.
type V = __m256i;
/// The lanes a masked load or store touches: all ones in each.
type M = __m256i;
/// Words in a vector.
const LANES: usize = 4;

lane_traits!("AVX2");

/// Whether the CPU runs AVX2 (checked once per chosen loop; it cannot change while
/// the process runs).
pub(crate) fn supported() -> bool {
    std::arch::is_x86_feature_detected!("avx2")
}

run_calls!("avx2");

/// The lanes of the last vector of `n` words from word `j` (`n - j` in 1..=3).
#[target_feature(enable = "avx2")]
#[inline]
fn tail_mask(n: usize, j: usize) -> M {
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
unsafe fn load_masked<const MANY: bool>(p: *const u64, j: usize, one: V, mask: M) -> V {
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

/// Stores four words at `p`.
///
/// # Safety
/// The four words from `p` lie in storage.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn store(p: *mut u64, v: V) {
    // SAFETY: the caller's contract.
    unsafe { _mm256_storeu_si256(p.cast(), v) }
}

/// Stores the lanes of `mask` at `p` (the others are not touched).
///
/// # Safety
/// The words from `p` in the lanes of `mask` lie in storage.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn store_masked(p: *mut u64, mask: M, v: V) {
    // SAFETY: the caller's contract; masked-off lanes are not accessed.
    unsafe { _mm256_maskstore_epi64(p.cast(), mask, v) }
}

/// A two-word slice's shift distances and mask.
type SliceParams = (__m128i, __m128i, V);

/// The shift distances (`b` and `64 - b`, modulo 64) and the mask of a two-word
/// slice's record.
#[target_feature(enable = "avx2")]
#[inline]
fn slice_params(r: &Rec) -> SliceParams {
    (
        _mm_cvtsi64_si128(i64::from(r.b & 63)),
        _mm_cvtsi64_si128(i64::from(64u32.wrapping_sub(r.b) & 63)),
        _mm256_set1_epi64x(r.k as i64),
    )
}

/// The slices of four pairs of words.
#[target_feature(enable = "avx2")]
#[inline]
fn slice_pair(x: V, y: V, (lo, hi, k): SliceParams) -> V {
    _mm256_and_si256(
        _mm256_or_si256(_mm256_srl_epi64(x, lo), _mm256_sll_epi64(y, hi)),
        k,
    )
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

kind_forms! { "avx2", Lanes1:
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

kind_forms! { "avx2", Lanes2:
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

kind_forms! { "avx2", Lanes3:
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
