//! The choice of the loop that executes a step, one function per kind and operand
//! pattern, so that a step costs one indirect call and a tight loop: a gather
//! ([`gather`](crate::gather)) or a run ([`vector`](crate::vector)) kernel.

use crate::exec::Code;
use crate::gather;
use crate::instr::{Kind, Mode, Step};
use crate::ops::*;
use crate::run_forms::VectorLoops;
use crate::vector::{self, RunKernel, RunLoops};

/// A step's loop: runs step `s` of `code` over the storage.
pub(crate) type Kernel = fn(code: &Code, s: &Step, vals: &mut [u64]);

/// A step's loops: the interpreter's, and for a run the compiled engine's.
type Loops = (Kernel, Option<RunKernel>);

fn both(run: RunLoops) -> Loops {
    (run.step, Some(run.call))
}

/// `loops` with the compiled engine's call replaced by `call` (an explicit AVX2
/// or AVX-512 one, see [`lanes`](crate::lanes), given only for a run) if there is
/// one.
#[cfg(target_arch = "x86_64")]
fn with_call((step, run_call): Loops, call: Option<RunKernel>) -> Loops {
    (step, call.or(run_call))
}

/// `$loops`, with the run call `$call` where the kind has explicit vector forms
/// and the target is x86-64 (elsewhere `$call` is not compiled).
macro_rules! lanes {
    ($loops:expr, $call:expr) => {{
        #[cfg(target_arch = "x86_64")]
        let loops = with_call($loops, $call);
        #[cfg(not(target_arch = "x86_64"))]
        let loops = $loops;
        loops
    }};
}

fn unary<F: Unary>(run: Option<u8>) -> Loops {
    match run {
        None => (gather::unary::<F>, None),
        Some(st) => both(vector::unary_run::<F>(st & 1 != 0)),
    }
}

fn binary<F: Binary>(run: Option<u8>) -> Loops {
    match run {
        None => (gather::binary::<F>, None),
        Some(st) => both(vector::binary_run::<F>(st)),
    }
}

fn ternary<F: Ternary>(run: Option<u8>) -> Loops {
    match run {
        None => (gather::ternary::<F>, None),
        Some(st) => both(vector::ternary_run::<F>(st)),
    }
}

/// The explicit run call of unary kind `F` for a run of strides `run`: AVX-512's
/// if `wide`, else AVX2's (either only where the CPU has it).
#[cfg(target_arch = "x86_64")]
fn lanes1<F: crate::lanes::Lanes1 + crate::lanes512::Lanes1>(
    run: Option<u8>,
    wide: bool,
) -> Option<RunKernel> {
    let a = run? & 1 != 0;
    match wide {
        true => crate::lanes512::unary::<F>(a),
        false => crate::lanes::unary::<F>(a),
    }
}

/// The explicit run call of binary kind `F` for a run of strides `run` (as
/// [`lanes1`]).
#[cfg(target_arch = "x86_64")]
fn lanes2<F: crate::lanes::Lanes2 + crate::lanes512::Lanes2>(
    run: Option<u8>,
    wide: bool,
) -> Option<RunKernel> {
    match wide {
        true => crate::lanes512::binary::<F>(run?),
        false => crate::lanes::binary::<F>(run?),
    }
}

/// The explicit run call of ternary kind `F` for a run of strides `run` (as
/// [`lanes1`]).
#[cfg(target_arch = "x86_64")]
fn lanes3<F: crate::lanes::Lanes3 + crate::lanes512::Lanes3>(
    run: Option<u8>,
    wide: bool,
) -> Option<RunKernel> {
    match wide {
        true => crate::lanes512::ternary::<F>(run?),
        false => crate::lanes::ternary::<F>(run?),
    }
}

/// The explicit run call of two-word slices (as [`lanes1`]).
#[cfg(target_arch = "x86_64")]
fn slices(a: bool, wide: bool) -> Option<RunKernel> {
    match wide {
        true => crate::lanes512::slice2(a),
        false => crate::lanes::slice2(a),
    }
}

/// The kernel of a step of `kind` run in `mode`.
pub(crate) fn kernel(kind: Kind, mode: Mode) -> Kernel {
    // The interpreter's loop is the same in either set's choice.
    loops_with(kind, mode, false).0
}

/// The compiled engine's loop for a step of `kind` run in `mode`, if it is a run
/// (see [`RunKernel`]).
pub(crate) fn run_kernel(kind: Kind, mode: Mode) -> Option<RunKernel> {
    let wide = crate::run_forms::vector_loops() == VectorLoops::Avx512;
    loops_with(kind, mode, wide).1
}

/// The compiled engine's run call of `kind` in `mode` in the AVX-512 forms
/// (`wide`) or the AVX2 ones, where the kind has them and the CPU runs them: for
/// tests to hold both to the interpreter whatever this process chose.
#[cfg(test)]
pub(crate) fn run_kernel_in(kind: Kind, mode: Mode, wide: bool) -> Option<RunKernel> {
    loops_with(kind, mode, wide).1
}

#[cfg_attr(not(target_arch = "x86_64"), allow(unused_variables))]
fn loops_with(kind: Kind, mode: Mode, wide: bool) -> Loops {
    let run = match mode {
        Mode::Run { strides } => Some(strides),
        Mode::Gather => None,
        Mode::Mixed => return (gather::mixed_all, None),
    };
    match kind {
        Kind::Field => lanes!(unary::<Field>(run), lanes1::<Field>(run, wide)),
        Kind::Not => lanes!(unary::<Not>(run), lanes1::<Not>(run, wide)),
        Kind::Sra => unary::<Sra>(run),
        Kind::Replicate => unary::<Replicate>(run),
        Kind::RedAnd => lanes!(unary::<RedAnd>(run), lanes1::<RedAnd>(run, wide)),
        Kind::RedOr => lanes!(unary::<RedOr>(run), lanes1::<RedOr>(run, wide)),
        Kind::RedXor => unary::<RedXor>(run),
        Kind::Lz => unary::<Lz>(run),
        Kind::And => lanes!(binary::<And>(run), lanes2::<And>(run, wide)),
        Kind::Or => lanes!(binary::<Or>(run), lanes2::<Or>(run, wide)),
        Kind::Xor => lanes!(binary::<Xor>(run), lanes2::<Xor>(run, wide)),
        Kind::Add => lanes!(binary::<Add>(run), lanes2::<Add>(run, wide)),
        Kind::Sub => lanes!(binary::<Sub>(run), lanes2::<Sub>(run, wide)),
        Kind::Mul => binary::<Mul>(run),
        Kind::Eq => lanes!(binary::<Eq>(run), lanes2::<Eq>(run, wide)),
        Kind::Ne => lanes!(binary::<Ne>(run), lanes2::<Ne>(run, wide)),
        Kind::LtU => lanes!(binary::<LtU>(run), lanes2::<LtU>(run, wide)),
        Kind::LeU => lanes!(binary::<LeU>(run), lanes2::<LeU>(run, wide)),
        Kind::LtS => binary::<LtS>(run),
        Kind::LeS => binary::<LeS>(run),
        Kind::Cat2 => lanes!(binary::<Cat2>(run), lanes2::<Cat2>(run, wide)),
        Kind::ShlV => binary::<ShlV>(run),
        Kind::ShrV => binary::<ShrV>(run),
        Kind::SraV => binary::<SraV>(run),
        Kind::Mux => lanes!(ternary::<Mux>(run), lanes3::<Mux>(run, wide)),
        Kind::Cat3 => lanes!(ternary::<Cat3>(run), lanes3::<Cat3>(run, wide)),
        Kind::Slice2 => match run {
            None => (gather::slice2, None),
            Some(st) => lanes!(
                both(vector::slice2_run(st & 1 != 0)),
                slices(st & 1 != 0, wide)
            ),
        },
        // Never runs (see `Kind::vectorizes`).
        Kind::CatN => (gather::cat_n, None),
        Kind::Wide => (gather::wide, None),
    }
}

/// A run's template record of `kind` for tests: random parameters within the
/// kind's contract, its operands at words 0, 100 and 200, its destination 300.
#[cfg(test)]
pub(crate) fn test_run_template(kind: Kind, rng: &mut impl rand::Rng) -> crate::instr::Rec {
    let mut t = crate::instr::Rec {
        d: 300,
        ..crate::instr::Rec::random_params(kind, rng)
    };
    let fields = [&mut t.a, &mut t.b, &mut t.c].into_iter();
    for (field, (is_offset, base)) in fields.zip(kind.offsets().into_iter().zip([0, 100, 200])) {
        if is_offset {
            *field = base;
        }
    }
    t
}

/// 400 words of random storage for a run test over the template `t` of `kind`
/// (see [`test_run_template`]): values that fit shift amounts and operands alike,
/// and operands within the kind's width where it has one.
#[cfg(test)]
pub(crate) fn test_run_storage(
    kind: Kind,
    t: &crate::instr::Rec,
    rng: &mut impl rand::Rng,
) -> Vec<u64> {
    let mut vals: Vec<u64> = (0..400)
        .map(|_| match rng.gen_range(0..4) {
            0 => rng.gen_range(0..70),
            _ => rng.gen::<u64>() & t.k.max(1),
        })
        .collect();
    let width = match kind {
        Kind::LtS | Kind::LeS => Some(64 - t.c),
        Kind::Lz | Kind::SraV => Some(t.c),
        _ => None,
    };
    if let Some(w) = width {
        // A variable shift's amount (at 100) is not an operand of its width.
        let operands = if kind == Kind::SraV { 100 } else { 200 };
        let m = crate::wide::last_mask(w);
        vals.iter_mut().take(operands).for_each(|v| *v &= m);
    }
    vals
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::instr::{Rec, Tag};
    use rand::{Rng, SeedableRng};

    /// The AVX2 forms compute what the interpreter's loop computes, for every
    /// kind, operand stride and length from 1 to 40 (a masked rest of 1 to 3
    /// words). Ignored on a CPU without AVX2, where they cannot run.
    #[test]
    #[cfg_attr(
        not(ws_host_avx2),
        ignore = "this CPU has no AVX2: the AVX2 forms cannot run here"
    )]
    fn every_avx2_form_matches_the_interpreter() {
        assert_forms_match_the_interpreter(false);
    }

    /// The AVX-512 forms compute what the interpreter's loop computes (a masked
    /// rest of 1 to 7 words). Ignored on a CPU without AVX-512F, where they
    /// cannot run: the suite then reports the test as ignored, not passed.
    #[test]
    #[cfg_attr(
        not(ws_host_avx512),
        ignore = "this CPU has no AVX-512F: the AVX-512 forms cannot run here"
    )]
    fn every_avx512_form_matches_the_interpreter() {
        assert_forms_match_the_interpreter(true);
    }

    /// The explicit forms of one set (`wide`: AVX-512, else AVX2) against the
    /// interpreter's loop, for every kind, operand stride and length from 1 to
    /// 40. Fails if the CPU lacks the set, since the portable loop would then
    /// stand in and be compared with itself.
    fn assert_forms_match_the_interpreter(wide: bool) {
        #[cfg(target_arch = "x86_64")]
        let runs = if wide {
            crate::lanes512::supported()
        } else {
            crate::lanes::supported()
        };
        #[cfg(not(target_arch = "x86_64"))]
        let runs = false;
        assert!(
            runs,
            "this CPU does not run these forms (the test was forced with --include-ignored, \
             or built on another CPU: `cargo clean -p sim` rebuilds it for this one)"
        );
        let kinds = Kind::NARROW.into_iter().filter(|k| k.vectorizes());
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(17);
        for kind in kinds {
            for (strides, n) in (0..8u8).flat_map(|s| (1..=40u32).map(move |n| (s, n))) {
                let mode = Mode::Run { strides };
                let t = test_run_template(kind, &mut rng);
                let run = Code::new(
                    (
                        vec![Step {
                            kind,
                            mode,
                            start: 0,
                            n,
                            mask: 1,
                        }],
                        vec![t],
                        vec![Tag { kind, mask: 1 }],
                    ),
                    Vec::new(),
                    Vec::new(),
                );
                let vals = test_run_storage(kind, &t, &mut rng);
                let (mut want, mut got) = (vals.clone(), vals);
                crate::exec::run_all(&run, &mut want, 1);
                let kernel = run_kernel_in(kind, mode, wide).expect("a run has a call");
                let call = crate::vector::RunCall {
                    kernel,
                    n: u64::from(n),
                    rec: t,
                };
                // SAFETY: the template's operands (0, 100, 200) and destination
                // (300) keep `n` ≤ 40 words (41 for a slice) apart within the 400
                // words, as the run call's contract asks.
                unsafe { kernel(got.as_mut_ptr(), &call) };
                assert_eq!(
                    got, want,
                    "{kind:?} wide {wide} strides {strides:03b} n {n}: {t:?}"
                );
            }
        }
    }

    /// A CPU without AVX-512F is never handed an AVX-512 form, and no process
    /// takes those forms on one.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx512_forms_only_where_the_cpu_runs_them() {
        let has = crate::lanes512::supported();
        assert_eq!(crate::lanes512::unary::<Not>(true).is_some(), has);
        assert_eq!(crate::lanes512::slice2(false).is_some(), has);
        if !has {
            assert_ne!(crate::run_forms::vector_loops(), VectorLoops::Avx512);
        }
    }

    #[test]
    fn run_kernels_match_gather_kernels() {
        let kinds = Kind::NARROW.into_iter().filter(|k| k.vectorizes());
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for kind in kinds {
            for strides in 0..8u8 {
                let offs = kind.offsets();
                let n = rng.gen_range(1..40u32);
                // Operands at 0, 100, 200 (stride 0 or 1), destinations from 300.
                let t = test_run_template(kind, &mut rng);
                let recs: Vec<Rec> = (0..n)
                    .map(|j| {
                        let mut r = Rec { d: 300 + j, ..t };
                        let step = |i: usize| j * ((strides >> i) & 1) as u32;
                        if offs[0] {
                            r.a += step(0);
                        }
                        if offs[1] {
                            r.b += step(1);
                        }
                        if offs[2] {
                            r.c += step(2);
                        }
                        r
                    })
                    .collect();
                let vals = test_run_storage(kind, &t, &mut rng);
                let run = Code::new(
                    (
                        vec![Step {
                            kind,
                            mode: Mode::Run { strides },
                            start: 0,
                            n,
                            mask: 1,
                        }],
                        vec![recs[0]],
                        vec![Tag { kind, mask: 1 }],
                    ),
                    Vec::new(),
                    Vec::new(),
                );
                let gather = Code::new(
                    (
                        vec![Step {
                            kind,
                            mode: Mode::Gather,
                            start: 0,
                            n,
                            mask: 1,
                        }],
                        recs.clone(),
                        vec![Tag { kind, mask: 1 }; n as usize],
                    ),
                    Vec::new(),
                    Vec::new(),
                );
                let (mut a, mut b) = (vals.clone(), vals);
                crate::exec::run_all(&run, &mut a, 1);
                crate::exec::run_all(&gather, &mut b, 1);
                assert_eq!(a, b, "{kind:?} strides {strides:03b} n {n} template {t:?}");
            }
        }
    }
}
