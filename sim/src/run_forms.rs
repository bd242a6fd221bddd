//! What the explicit vector run calls of [`lanes`](crate::lanes) (AVX2) and
//! [`lanes512`](crate::lanes512) (AVX-512) share: the calls themselves and their
//! loop, written once as macros over the primitives each instruction set's module
//! defines, and the choice between the two sets, made once per process.
//!
//! A module expanding [`run_calls!`] defines, each with its instruction set
//! enabled: `V` (a vector of `LANES` words) and `M` (a mask of lanes); `supported`
//! (whether this CPU runs the set); `load`, `load_masked` (only the lanes of a
//! mask, the others read nothing), `single` (an operand of stride 0, broadcast),
//! `store`, `store_masked` and `tail_mask` (the lanes below a run's end); the
//! two-word slice's `SliceParams`, `slice_params` and `slice_pair`; and the traits
//! `Lanes1`, `Lanes2`, `Lanes3` ([`lane_traits!`]), whose `f` is a kind's operation
//! on `LANES` words (implemented with [`kind_forms!`]). Target features cannot be
//! generic parameters, so the calls are stamped out per set rather than written
//! once over a trait.

use std::sync::OnceLock;

/// Runs a call's loop into the destination: four vectors per iteration, then the
/// at most three whole vectors left as two and one without a loop, then the masked
/// rest. `$load(j)` is the result of the `LANES` instances from `j`, `$masked(j,
/// mask)` the same from operands loaded in `mask`'s lanes.
macro_rules! run_loop {
    ($n:expr, $d:expr, |$j:ident| $load:expr, |$jm:ident, $mask:ident| $masked:expr) => {{
        let (n, d): (usize, *mut u64) = ($n, $d);
        let mut at = 0;
        while at + 4 * LANES <= n {
            let $j = at;
            let v0 = $load;
            let $j = at + LANES;
            let v1 = $load;
            let $j = at + 2 * LANES;
            let v2 = $load;
            let $j = at + 3 * LANES;
            let v3 = $load;
            store(d.add(at), v0);
            store(d.add(at + LANES), v1);
            store(d.add(at + 2 * LANES), v2);
            store(d.add(at + 3 * LANES), v3);
            at += 4 * LANES;
        }
        if at + 2 * LANES <= n {
            let $j = at;
            let v0 = $load;
            let $j = at + LANES;
            let v1 = $load;
            store(d.add(at), v0);
            store(d.add(at + LANES), v1);
            at += 2 * LANES;
        }
        if at + LANES <= n {
            let $j = at;
            store(d.add(at), $load);
            at += LANES;
        }
        if at < n {
            let ($jm, $mask) = (at, tail_mask(n, at));
            store_masked(d.add(at), $mask, $masked);
        }
    }};
}
pub(crate) use run_loop;

/// Defines the run calls of the module's instruction set (`$feature`, as
/// `target_feature` names it) and the functions that hand them out when the CPU
/// has it: `unary`, `binary`, `ternary` and `slice2`.
macro_rules! run_calls {
    ($feature:literal) => {
        /// The run call of unary kind `F` (`a`: its operand is consecutive
        /// words), if the CPU has this module's instruction set.
        pub(crate) fn unary<F: Lanes1>(a: bool) -> Option<RunKernel> {
            supported().then_some(match a {
                true => unary_call::<F, true> as RunKernel,
                false => unary_call::<F, false>,
            })
        }

        /// The run call of binary kind `F` (bit `i` of `strides`: operand `i`
        /// is consecutive words), if the CPU has this module's instruction set.
        pub(crate) fn binary<F: Lanes2>(strides: u8) -> Option<RunKernel> {
            supported().then_some(match strides & 3 {
                3 => binary_call::<F, true, true> as RunKernel,
                1 => binary_call::<F, true, false>,
                2 => binary_call::<F, false, true>,
                _ => binary_call::<F, false, false>,
            })
        }

        /// The run call of ternary kind `F` (bit `i` of `strides`: operand `i`
        /// is consecutive words), if the CPU has this module's instruction set.
        pub(crate) fn ternary<F: Lanes3>(strides: u8) -> Option<RunKernel> {
            supported().then_some(match strides & 7 {
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

        /// The run call of two-word slices (`a`: the source advances by a word
        /// per instance), if the CPU has this module's instruction set.
        pub(crate) fn slice2(a: bool) -> Option<RunKernel> {
            supported().then_some(match a {
                true => slice2_call::<true> as RunKernel,
                false => slice2_call::<false>,
            })
        }

        /// The run call of unary kind `F`.
        ///
        /// # Safety
        /// As for [`RunKernel`], on a CPU with this module's instruction set.
        #[target_feature(enable = $feature)]
        unsafe extern "C" fn unary_call<F: Lanes1, const A: bool>(vals: *mut u64, call: &RunCall) {
            let r = &call.rec;
            // SAFETY: the caller's contract: every word read and written lies in
            // storage, the destination's words are none of the operand's.
            unsafe {
                let a = vals.add(r.a as usize);
                let (p, one) = (<F as Lanes1>::params(r), single::<A>(a));
                $crate::run_forms::run_loop!(
                    call.n as usize,
                    vals.add(r.d as usize),
                    |j| <F as Lanes1>::f(load::<A>(a, j, one), p),
                    |j, m| <F as Lanes1>::f(load_masked::<A>(a, j, one, m), p)
                );
            }
        }

        /// The run call of binary kind `F`.
        ///
        /// # Safety
        /// As for [`RunKernel`], on a CPU with this module's instruction set.
        #[target_feature(enable = $feature)]
        unsafe extern "C" fn binary_call<F: Lanes2, const A: bool, const B: bool>(
            vals: *mut u64,
            call: &RunCall,
        ) {
            let r = &call.rec;
            // SAFETY: as for `unary_call`.
            unsafe {
                let (a, b) = (vals.add(r.a as usize), vals.add(r.b as usize));
                let (p, one_a, one_b) = (<F as Lanes2>::params(r), single::<A>(a), single::<B>(b));
                $crate::run_forms::run_loop!(
                    call.n as usize,
                    vals.add(r.d as usize),
                    |j| <F as Lanes2>::f(load::<A>(a, j, one_a), load::<B>(b, j, one_b), p),
                    |j, m| <F as Lanes2>::f(
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
        /// As for [`RunKernel`], on a CPU with this module's instruction set.
        #[target_feature(enable = $feature)]
        unsafe extern "C" fn ternary_call<
            F: Lanes3,
            const A: bool,
            const B: bool,
            const C: bool,
        >(
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
                let p = <F as Lanes3>::params(r);
                let (one_a, one_b, one_c) = (single::<A>(a), single::<B>(b), single::<C>(c));
                $crate::run_forms::run_loop!(
                    call.n as usize,
                    vals.add(r.d as usize),
                    |j| <F as Lanes3>::f(
                        load::<A>(a, j, one_a),
                        load::<B>(b, j, one_b),
                        load::<C>(c, j, one_c),
                        p
                    ),
                    |j, m| <F as Lanes3>::f(
                        load_masked::<A>(a, j, one_a, m),
                        load_masked::<B>(b, j, one_b, m),
                        load_masked::<C>(c, j, one_c, m),
                        p
                    )
                );
            }
        }

        /// The run call of two-word slices: `((w[j] >> b) | (w[j + 1] << (64 -
        /// b))) & k` from consecutive pairs (`A`) or the first pair for all.
        ///
        /// # Safety
        /// As for [`RunKernel`], on a CPU with this module's instruction set.
        #[target_feature(enable = $feature)]
        unsafe extern "C" fn slice2_call<const A: bool>(vals: *mut u64, call: &RunCall) {
            let r = &call.rec;
            let p = slice_params(r);
            // SAFETY: as for `unary_call`; a consecutive run reads `n + 1` words
            // from its source, a single one its first two.
            unsafe {
                let w = vals.add(r.a as usize);
                let (one_lo, one_hi) = (single::<A>(w), single::<A>(w.add(1)));
                let next = w.add(1);
                $crate::run_forms::run_loop!(
                    call.n as usize,
                    vals.add(r.d as usize),
                    |j| slice_pair(load::<A>(w, j, one_lo), load::<A>(next, j, one_hi), p),
                    |j, m| slice_pair(
                        load_masked::<A>(w, j, one_lo, m),
                        load_masked::<A>(next, j, one_hi, m),
                        p
                    )
                );
            }
        }
    };
}
pub(crate) use run_calls;

/// Declares the module's traits `Lanes1`, `Lanes2` and `Lanes3`: a unary, binary
/// or ternary kind's form in instruction set `$set` (its name for people), whose
/// `f` is the kind's operation on each of `LANES` words (or pairs, or triples).
macro_rules! lane_traits {
    ($set:literal) => {
        #[doc = concat!("A unary kind's form in ", $set, ".")]
        pub(crate) trait Lanes1: Unary {
            /// Its parameters, broadcast.
            type P: Copy;
            /// # Safety
            #[doc = concat!("The CPU has ", $set, ".")]
            unsafe fn params(r: &Rec) -> Self::P;
            /// The kind's operation on each of `LANES` words.
            ///
            /// # Safety
            #[doc = concat!("The CPU has ", $set, ".")]
            unsafe fn f(x: V, p: Self::P) -> V;
        }

        #[doc = concat!("A binary kind's form in ", $set, ".")]
        pub(crate) trait Lanes2: Binary {
            /// Its parameters, broadcast.
            type P: Copy;
            /// # Safety
            #[doc = concat!("The CPU has ", $set, ".")]
            unsafe fn params(r: &Rec) -> Self::P;
            /// The kind's operation on each of `LANES` pairs of words.
            ///
            /// # Safety
            #[doc = concat!("The CPU has ", $set, ".")]
            unsafe fn f(x: V, y: V, p: Self::P) -> V;
        }

        #[doc = concat!("A ternary kind's form in ", $set, ".")]
        pub(crate) trait Lanes3: Ternary {
            /// Its parameters, broadcast.
            type P: Copy;
            /// # Safety
            #[doc = concat!("The CPU has ", $set, ".")]
            unsafe fn params(r: &Rec) -> Self::P;
            /// The kind's operation on each of `LANES` triples of words.
            ///
            /// # Safety
            #[doc = concat!("The CPU has ", $set, ".")]
            unsafe fn f(x: V, y: V, z: V, p: Self::P) -> V;
        }
    };
}
pub(crate) use lane_traits;

/// Declares each listed kind's form in the module's trait `$tr` for instruction
/// set `$feature`: `Kind(operands) [r => params: Type = expression] { body }`, the
/// parameters computed once per call from the record `r`.
macro_rules! kind_forms {
    ($feature:literal, $tr:ident: $($kind:ident($($x:ident),+) [$r:ident => $p:ident: $pt:ty = $params:expr] $body:block)*) => {$(
        impl $tr for $crate::ops::$kind {
            type P = $pt;
            #[target_feature(enable = $feature)]
            #[inline]
            #[allow(unused_variables)]
            unsafe fn params($r: &Rec) -> $pt {
                $params
            }
            #[target_feature(enable = $feature)]
            #[inline]
            #[allow(unused_variables)]
            unsafe fn f($($x: V,)+ $p: $pt) -> V $body
        }
    )*};
}
pub(crate) use kind_forms;

/// The explicit vector forms the run calls take in this process.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum VectorLoops {
    /// The `vector` module's loops, as LLVM compiles them for any CPU of the
    /// target (no AVX2, or not x86-64).
    #[default]
    Portable,
    /// AVX2, four words an operation.
    Avx2,
    /// AVX-512, eight words an operation (an Intel CPU with AVX-512F).
    Avx512,
}

impl std::fmt::Display for VectorLoops {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            VectorLoops::Portable => "portable Rust",
            VectorLoops::Avx2 => "AVX2",
            VectorLoops::Avx512 => "AVX-512",
        })
    }
}

/// The explicit vector forms of this process's run calls (see [`VectorLoops`]),
/// chosen once from the CPU: AVX-512 on an Intel CPU with AVX-512F, AVX2 on any
/// other CPU with AVX2, else the portable loops. AMD's Zen 4 executes a 512-bit
/// operation as two 256-bit halves, and `bench`'s fp32 adder tree and PANAMA core
/// were measured slower there with AVX-512; on an Intel Xeon (family 6, model
/// 207) the fp32 tree gained about a tenth and the flagships were level (see the
/// performance log). Timing the two sets in the process was tried and dropped:
/// beside the interpreter's thread its verdict flipped from run to run. The
/// choice only moves speed: every form computes the same words.
pub fn vector_loops() -> VectorLoops {
    static CHOSEN: OnceLock<VectorLoops> = OnceLock::new();
    *CHOSEN.get_or_init(choose)
}

#[cfg(target_arch = "x86_64")]
fn choose() -> VectorLoops {
    if !crate::lanes::supported() {
        VectorLoops::Portable
    } else if crate::lanes512::supported() && intel() {
        VectorLoops::Avx512
    } else {
        VectorLoops::Avx2
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn choose() -> VectorLoops {
    VectorLoops::Portable
}

/// Whether the CPU's vendor string (CPUID leaf 0) is Intel's.
#[cfg(target_arch = "x86_64")]
fn intel() -> bool {
    let id = core::arch::x86_64::__cpuid(0);
    let vendor = [id.ebx, id.edx, id.ecx].map(u32::to_le_bytes);
    vendor.concat() == b"GenuineIntel"
}
