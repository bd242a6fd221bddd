//! Demand-driven settling: the steps the top's output ports depend on.
//!
//! A test bench reads outputs between clock edges and then sets inputs; settling the
//! whole design for those reads would evaluate everything that depends on both the
//! registers and the inputs twice per cycle. So the steps split in two parts: the
//! *output part* (every step an output port's value depends on, closed under
//! "reads a word written by") and the rest. Reading an output settles only the
//! output part; everything else settles once, before the next edge (or a peek, a
//! trace). Running the output part first and the rest after is a valid order:
//! no output step reads a word a rest step writes.
//!
//! The part is exactly the records the outputs need ([`output_instrs`]): the
//! schedule never batches them with the rest's, nor does a step mix them, so the
//! part is Lightning's 28 records of 805 and PANAMA SUME's 6 of 4,093. A step
//! mixing both would pull into the part what its other records read, which
//! depends on the inputs too, and the bench's reads after its writes would
//! settle that again. The simulator marks the part dirty only for the sources
//! it depends on at all: every flagship's outputs depend on registers alone, so
//! their reads after the bench's writes find them settled.

use crate::exec::{each_record, Code};
use crate::instr::{Kind, Rec, Span};
use crate::schedule::Preds;
use crate::state::NONE;

/// Which steps a settle runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Part {
    /// The steps the output ports depend on.
    Outputs,
    /// Every other step.
    Rest,
}

impl Part {
    /// Both parts, in the order a full settle runs them.
    pub const BOTH: [Part; 2] = [Part::Outputs, Part::Rest];

    /// True if step `i` of `code` belongs to this part.
    #[inline]
    pub fn has(self, code: &Code, i: usize) -> bool {
        code.outputs.get(i).copied().unwrap_or(false) == (self == Part::Outputs)
    }

    /// The sources any step of this part of `code` depends on (see
    /// [`cones`](crate::cones)).
    pub fn mask(self, code: &Code) -> u64 {
        (code.steps.iter().enumerate())
            .filter(|&(i, _)| self.has(code, i))
            .fold(0, |m, (_, s)| m | s.mask)
    }
}

/// The words record `r` of `kind` writes (`true`) and reads (`false`).
pub(crate) fn each_word(code: &Code, kind: Kind, r: &Rec, mut f: impl FnMut(u32, bool)) {
    let mut span = |s: Span, write: bool| (s.off..s.off + s.words).for_each(|w| f(w, write));
    match kind {
        Kind::Wide => {
            let mut first = true;
            code.wide[r.a as usize].each_span(|s| {
                span(s, first);
                first = false;
            });
        }
        Kind::CatN => {
            span(Span { off: r.d, words: 1 }, true);
            let parts = &code.parts[r.a as usize..(r.a + r.b) as usize];
            parts
                .iter()
                .for_each(|&(off, _)| span(Span { off, words: 1 }, false));
        }
        _ => {
            span(Span { off: r.d, words: 1 }, true);
            for (field, is_offset) in [r.a, r.b, r.c].into_iter().zip(kind.offsets()) {
                if is_offset {
                    span(
                        Span {
                            off: field,
                            words: 1,
                        },
                        false,
                    );
                }
            }
            if kind == Kind::Slice2 {
                span(
                    Span {
                        off: r.a + 1,
                        words: 1,
                    },
                    false,
                );
            }
        }
    }
}

/// For each of `n` instructions, whether an output port's value depends on it:
/// the instructions in `roots` (those computing the output ports) and every
/// instruction they read through `preds`, transitively. The schedule keeps these
/// apart from the rest, so that a step [`output_steps`] marks holds nothing the
/// outputs do not need: a step mixing both would pull into the output part
/// everything its other records read, and run it again after every input write.
pub(crate) fn output_instrs(
    preds: &Preds,
    n: usize,
    roots: impl IntoIterator<Item = u32>,
) -> Vec<bool> {
    let mut marked = vec![false; n];
    let mut stack: Vec<u32> = Vec::new();
    for r in roots {
        if !std::mem::replace(&mut marked[r as usize], true) {
            stack.push(r);
        }
    }
    while let Some(i) = stack.pop() {
        for &p in preds.row(i as usize) {
            if !std::mem::replace(&mut marked[p as usize], true) {
                stack.push(p);
            }
        }
    }
    marked
}

/// For every step of `code` over `words` storage words, whether the words of
/// `outputs` depend on it.
pub(crate) fn output_steps(code: &Code, outputs: &[Span], words: usize) -> Vec<bool> {
    let mut writer = vec![NONE; words];
    for (i, s) in code.steps.iter().enumerate() {
        each_record(code, s, |kind, r, _| {
            each_word(code, kind, &r, |w, write| {
                if write {
                    writer[w as usize] = i as u32;
                }
            })
        });
    }
    let mut marked = vec![false; code.steps.len()];
    for o in outputs {
        for w in o.off..o.off + o.words {
            if let Some(&s) = writer.get(w as usize).filter(|&&s| s != NONE) {
                marked[s as usize] = true;
            }
        }
    }
    // Steps are in dependency order: a step's writers come before it.
    for i in (0..code.steps.len()).rev() {
        if !marked[i] {
            continue;
        }
        each_record(code, &code.steps[i], |kind, r, _| {
            each_word(code, kind, &r, |w, write| {
                let s = writer[w as usize];
                if !write && s != NONE && (s as usize) < i {
                    marked[s as usize] = true;
                }
            })
        });
    }
    marked
}
