//! The choice of the loop that executes a step, one function per kind and operand
//! pattern, so that a step costs one indirect call and a tight loop: a gather
//! ([`gather`](crate::gather)) or a run ([`vector`](crate::vector)) kernel.

use crate::exec::Code;
use crate::gather;
use crate::instr::{Kind, Mode, Step};
use crate::ops::*;
use crate::vector::{self, RunKernel, RunLoops};

/// A step's loop: runs step `s` of `code` over the storage.
pub(crate) type Kernel = fn(code: &Code, s: &Step, vals: &mut [u64]);

/// A step's loops: the interpreter's, and for a run the compiled engine's.
type Loops = (Kernel, Option<RunKernel>);

fn both(run: RunLoops) -> Loops {
    (run.step, Some(run.call))
}

/// `loops` with the compiled engine's call replaced by `call` (an explicit AVX2
/// one, see [`lanes`](crate::lanes), given only for a run) if there is one.
#[cfg(target_arch = "x86_64")]
fn with_call((step, run_call): Loops, call: Option<RunKernel>) -> Loops {
    (step, call.or(run_call))
}

/// `$loops`, with the run call `$call` where the kind has an explicit AVX2 form and
/// the target is x86-64 (elsewhere `$call` is not compiled).
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

/// The explicit AVX2 run call of unary kind `F` for a run of strides `run`.
#[cfg(target_arch = "x86_64")]
fn lanes1<F: crate::lanes::Lanes1>(run: Option<u8>) -> Option<RunKernel> {
    crate::lanes::unary::<F>(run? & 1 != 0)
}

/// The explicit AVX2 run call of binary kind `F` for a run of strides `run`.
#[cfg(target_arch = "x86_64")]
fn lanes2<F: crate::lanes::Lanes2>(run: Option<u8>) -> Option<RunKernel> {
    crate::lanes::binary::<F>(run?)
}

/// The explicit AVX2 run call of ternary kind `F` for a run of strides `run`.
#[cfg(target_arch = "x86_64")]
fn lanes3<F: crate::lanes::Lanes3>(run: Option<u8>) -> Option<RunKernel> {
    crate::lanes::ternary::<F>(run?)
}

/// The kernel of a step of `kind` run in `mode`.
pub(crate) fn kernel(kind: Kind, mode: Mode) -> Kernel {
    loops(kind, mode).0
}

/// The compiled engine's loop for a step of `kind` run in `mode`, if it is a run
/// (see [`RunKernel`]).
pub(crate) fn run_kernel(kind: Kind, mode: Mode) -> Option<RunKernel> {
    loops(kind, mode).1
}

fn loops(kind: Kind, mode: Mode) -> Loops {
    let run = match mode {
        Mode::Run { strides } => Some(strides),
        Mode::Gather => None,
        Mode::Mixed => return (gather::mixed_all, None),
    };
    match kind {
        Kind::Field => lanes!(unary::<Field>(run), lanes1::<Field>(run)),
        Kind::Not => lanes!(unary::<Not>(run), lanes1::<Not>(run)),
        Kind::Sra => unary::<Sra>(run),
        Kind::Replicate => unary::<Replicate>(run),
        Kind::RedAnd => lanes!(unary::<RedAnd>(run), lanes1::<RedAnd>(run)),
        Kind::RedOr => lanes!(unary::<RedOr>(run), lanes1::<RedOr>(run)),
        Kind::RedXor => unary::<RedXor>(run),
        Kind::Lz => unary::<Lz>(run),
        Kind::And => lanes!(binary::<And>(run), lanes2::<And>(run)),
        Kind::Or => lanes!(binary::<Or>(run), lanes2::<Or>(run)),
        Kind::Xor => lanes!(binary::<Xor>(run), lanes2::<Xor>(run)),
        Kind::Add => lanes!(binary::<Add>(run), lanes2::<Add>(run)),
        Kind::Sub => lanes!(binary::<Sub>(run), lanes2::<Sub>(run)),
        Kind::Mul => binary::<Mul>(run),
        Kind::Eq => lanes!(binary::<Eq>(run), lanes2::<Eq>(run)),
        Kind::Ne => lanes!(binary::<Ne>(run), lanes2::<Ne>(run)),
        Kind::LtU => lanes!(binary::<LtU>(run), lanes2::<LtU>(run)),
        Kind::LeU => lanes!(binary::<LeU>(run), lanes2::<LeU>(run)),
        Kind::LtS => binary::<LtS>(run),
        Kind::LeS => binary::<LeS>(run),
        Kind::Cat2 => lanes!(binary::<Cat2>(run), lanes2::<Cat2>(run)),
        Kind::ShlV => binary::<ShlV>(run),
        Kind::ShrV => binary::<ShrV>(run),
        Kind::SraV => binary::<SraV>(run),
        Kind::Mux => lanes!(ternary::<Mux>(run), lanes3::<Mux>(run)),
        Kind::Cat3 => lanes!(ternary::<Cat3>(run), lanes3::<Cat3>(run)),
        Kind::Slice2 => match run {
            None => (gather::slice2, None),
            Some(st) => lanes!(
                both(vector::slice2_run(st & 1 != 0)),
                crate::lanes::slice2(st & 1 != 0)
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
