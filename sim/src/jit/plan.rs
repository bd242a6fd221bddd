//! What the compiled engine emits, before any code is emitted: every step of the
//! program expanded into concrete records (a run of `n` instances becomes `n`
//! records), grouped into *segments*, one per partition (one activity test each,
//! see [`partition`](super::partition) and [`activity`](super::activity)), and
//! cut into functions of bounded size. Every storage offset the records touch is
//! checked here, so that the emitted code can never address a word outside
//! storage.

use super::partition::partitions;
use crate::demand::{each_word, Part};
use crate::exec::{each_record, Code};
use crate::instr::{Kind, Mode, Rec, Span, Step, WideOp};
use crate::layout::shift_pads;
use std::ops::Range;

/// At most this many items (records or kernel calls) go into one native function, so that compile time
/// stays linear in the design (register allocation is superlinear in function size).
pub(super) const MAX_ITEMS_PER_FUNCTION: usize = 2048;

/// One record with concrete offsets.
#[derive(Clone, Copy, Debug)]
pub(super) struct Inst {
    /// What it computes.
    pub kind: Kind,
    /// Its fields (see [`Kind`]).
    pub rec: Rec,
}

/// Runs of at least this many identical instances are not unrolled: the short
/// ones of the kinds [`vector`](super::vector) has are written as vector code,
/// two instances an instruction, and the emitted code calls the interpreter's
/// vector loop (AVX2 where the CPU has it) for the rest. Both are faster than
/// straight-line scalar code for such runs and keep the code small enough for
/// the instruction cache.
pub(super) const MIN_RUN_CALL: u32 = 8;

/// What the emitter emits, in execution order.
#[derive(Clone, Copy, Debug)]
pub(super) enum Item {
    /// One record, as straight-line code.
    Rec(Inst),
    /// A call of the loop of step `step` (see
    /// [`RunKernel`](crate::vector::RunKernel)), a run writing the words `dst`.
    Run {
        /// Index into the program's steps.
        step: u32,
        /// The words it writes.
        dst: Span,
        /// Its index in the engine's table of run calls.
        call: u32,
    },
    /// Run step `step` as inline vector code (see [`vector`](super::vector)).
    Vector {
        /// Index into the program's steps.
        step: u32,
    },
}

impl Item {
    /// Whether the emitter writes the item as code (true) or calls back into the
    /// interpreter, which reads and writes storage (false).
    pub fn inline(&self, code: &Code) -> bool {
        match *self {
            Item::Rec(inst) => {
                inst.kind != Kind::Wide || super::wide::inlines(&code.wide[inst.rec.a as usize])
            }
            Item::Run { .. } | Item::Vector { .. } => false,
        }
    }

    /// Whether the emitter writes the item as code that takes every word it reads
    /// from the values in hand or storage alike (true), or reads some from
    /// storage only (a callback, a run, a wide operation that indexes its operand
    /// at run time): those words must be stored.
    pub fn reads_in_hand(&self, code: &Code) -> bool {
        match *self {
            Item::Rec(inst) if inst.kind == Kind::Wide => {
                let op = &code.wide[inst.rec.a as usize];
                super::wide::inlines(op) && !super::wide::reads_storage(op)
            }
            _ => self.inline(code),
        }
    }

    /// Calls `f(word, is_write)` for every word the item reads or writes.
    pub fn each_word(&self, code: &Code, mut f: impl FnMut(u32, bool)) {
        match *self {
            Item::Rec(inst) => each_word(code, inst.kind, &inst.rec, f),
            Item::Run { step, .. } | Item::Vector { step } => {
                each_record(code, &code.steps[step as usize], |kind, r, _| {
                    each_word(code, kind, &r, &mut f)
                })
            }
        }
    }
}

/// The items of one partition: they run when its flag is set (see
/// [`activity`](super::activity)).
#[derive(Clone, Debug)]
pub(super) struct Segment {
    /// The index of its flag.
    pub flag: u32,
    /// The sources its items depend on at all (see [`cones`](crate::cones)): its
    /// flag can be set only after one of them changed, so consecutive segments of
    /// one mask share a first test of it.
    pub mask: u64,
    /// The items, as a range of [`Plan::items`].
    pub items: Range<usize>,
}

/// The program as the emitter sees it.
#[derive(Debug, Default)]
pub(super) struct Plan {
    /// Everything a full settle runs, in execution order.
    pub items: Vec<Item>,
    /// Records emitted as straight-line code (run instances counted one by one).
    pub unrolled: usize,
    /// The functions to emit, each a list of segments.
    pub functions: Vec<Vec<Segment>>,
    /// The step of each run call, by its index less the first's.
    pub calls: Vec<u32>,
    /// The index of its first segment's flag.
    first_flag: u32,
    /// The index of its first run call.
    first_call: u32,
}

/// Why a program cannot be compiled: it addresses something it does not have.
#[derive(Clone, Debug, thiserror::Error)]
#[error("record {record} ({kind:?}) {what}")]
pub struct Malformed {
    /// Position of the record in the expanded program.
    pub(crate) record: usize,
    /// Its kind.
    pub(crate) kind: Kind,
    /// What is out of range.
    pub(crate) what: String,
}

/// Expands, checks and groups the steps of `part` of `code` over `words` storage
/// words; the segments' flags and the run calls are numbered on from `after`'s.
pub(super) fn plan(
    code: &Code,
    words: usize,
    part: Part,
    after: Option<&Plan>,
) -> Result<Plan, Malformed> {
    let (first_flag, first_call) = after.map_or((0, 0), |p| (p.end_flag(), p.end_call()));
    let mut insts = Vec::with_capacity(code.instructions());
    let mut items = Vec::with_capacity(code.instructions());
    let mut masks = Vec::with_capacity(code.instructions());
    let (mut calls, mut runs) = (Vec::new(), Vec::new());
    for (index, s) in code.steps.iter().enumerate() {
        if !part.has(code, index) {
            continue;
        }
        check_step(code, s, insts.len())?;
        let run = matches!(s.mode, Mode::Run { .. }) && s.n >= MIN_RUN_CALL && s.kind.vectorizes();
        if run {
            runs.push((index as u32, insts.len()));
        }
        each_record(code, s, |kind, rec, mask| {
            let inst = Inst { kind, rec };
            insts.push(inst);
            if !run {
                items.push(Item::Rec(inst));
                masks.push(mask);
            }
        });
        if run && super::vector::inlines(s) {
            items.push(Item::Vector { step: index as u32 });
            masks.push(s.mask);
        } else if run {
            let dst = Span {
                off: code.recs[s.start as usize].d,
                words: s.n,
            };
            items.push(Item::Run {
                step: index as u32,
                dst,
                call: first_call + calls.len() as u32,
            });
            calls.push(index as u32);
            masks.push(s.mask);
        }
    }
    for (i, inst) in insts.iter().enumerate() {
        check(code, inst, words).map_err(|what| Malformed {
            record: i,
            kind: inst.kind,
            what,
        })?;
    }
    for &(step, record) in &runs {
        let s = &code.steps[step as usize];
        check_disjoint(code, s).map_err(|what| Malformed {
            record,
            kind: s.kind,
            what,
        })?;
    }
    // The records are checked: their words can be walked.
    let mut ordered = Vec::with_capacity(items.len());
    let mut segments = Vec::new();
    for (k, members) in partitions(code, &items, words).into_iter().enumerate() {
        let first = ordered.len();
        ordered.extend(members.iter().map(|&i| items[i]));
        segments.push(Segment {
            flag: first_flag + k as u32,
            mask: members.iter().fold(0, |m, &i| m | masks[i]),
            items: first..ordered.len(),
        });
    }
    Ok(Plan {
        functions: functions(&segments),
        unrolled: ordered.iter().filter(|i| matches!(i, Item::Rec(_))).count(),
        items: ordered,
        calls,
        first_flag,
        first_call,
    })
}

impl Plan {
    /// Its segments, in order.
    pub fn segments(&self) -> impl Iterator<Item = &Segment> {
        self.functions.iter().flatten()
    }

    /// The number of its segments (and flags).
    pub fn flags(&self) -> u32 {
        self.segments().count() as u32
    }

    /// The index after its last flag.
    pub fn end_flag(&self) -> u32 {
        self.first_flag + self.flags()
    }

    /// The index after its last run call.
    pub fn end_call(&self) -> u32 {
        self.first_call + self.calls.len() as u32
    }
}

/// An error if a word run step `s` reads is one of the words it writes: its loop
/// (or vector code) reads its operands while it writes its destination (the
/// interpreter's split of storage would panic on such a step; the compiled
/// engine's code must never see one).
fn check_disjoint(code: &Code, s: &Step) -> Result<(), String> {
    let Mode::Run { strides } = s.mode else {
        return Ok(());
    };
    let r = &code.recs[s.start as usize];
    let dst = u64::from(r.d)..u64::from(r.d) + u64::from(s.n);
    let fields = [r.a, r.b, r.c].into_iter().zip(s.kind.offsets());
    for (i, (off, is_offset)) in fields.enumerate() {
        let consecutive = strides >> i & 1 == 1;
        let words = match (s.kind, consecutive) {
            (Kind::Slice2, true) => s.n + 1,
            (Kind::Slice2, false) => 2,
            (_, true) => s.n,
            (_, false) => 1,
        };
        let read = u64::from(off)..u64::from(off) + u64::from(words);
        if is_offset && read.start < dst.end && dst.start < read.end {
            return Err(format!(
                "run operand {i} (words {off}+{words}) overlaps its destination (words {}+{})",
                r.d, s.n
            ));
        }
    }
    Ok(())
}

/// An error if step `s` points past the records (or, mixed, past the tags);
/// `record` is the position its first record would take.
fn check_step(code: &Code, s: &Step, record: usize) -> Result<(), Malformed> {
    let n = match s.mode {
        Mode::Run { .. } => 1,
        Mode::Gather | Mode::Mixed => s.n as usize,
    };
    let range = s.start as usize..s.start as usize + n;
    let tags = s.mode != Mode::Mixed || code.tags.get(range.clone()).is_some();
    if code.recs.get(range.clone()).is_some() && tags {
        return Ok(());
    }
    Err(Malformed {
        record,
        kind: s.kind,
        what: format!(
            "step reads records {}..{} of {}",
            range.start,
            range.end,
            code.recs.len()
        ),
    })
}

/// Checks that the zero words around the source of a padded shift (which the
/// compiled engine loads from unchecked) lie within `words`.
fn check_pads(op: &WideOp, words: usize) -> Result<(), String> {
    let WideOp::Shift {
        op,
        dst,
        src,
        padded: true,
        ..
    } = *op
    else {
        return Ok(());
    };
    match shift_pads(op, dst.words, src.words) {
        Some((below, above))
            if below <= src.off
                && src.off as usize + src.words as usize + above as usize <= words =>
        {
            Ok(())
        }
        _ => Err(format!(
            "the zero words around padded shift source {}+{} are outside storage of {words} words",
            src.off, src.words
        )),
    }
}

/// Checks that every word `inst` reads or writes lies within `words`.
fn check(code: &Code, inst: &Inst, words: usize) -> Result<(), String> {
    let word = |off: u32, role: &str| {
        if (off as usize) < words {
            Ok(())
        } else {
            Err(format!(
                "{role} word {off} is outside storage of {words} words"
            ))
        }
    };
    let r = &inst.rec;
    match inst.kind {
        Kind::Wide => {
            let op = code
                .wide
                .get(r.a as usize)
                .ok_or_else(|| format!("names wide operation {} of {}", r.a, code.wide.len()))?;
            let mut bad = None;
            op.each_span(|s| {
                if s.off as usize + s.words as usize > words && bad.is_none() {
                    bad = Some(format!(
                        "wide operand {}+{} is outside storage of {words} words",
                        s.off, s.words
                    ));
                }
            });
            bad.map_or(Ok(()), Err)?;
            check_pads(op, words)
        }
        Kind::CatN => {
            word(r.d, "destination")?;
            let parts = code
                .parts
                .get(r.a as usize..(r.a as usize + r.b as usize))
                .ok_or_else(|| format!("names parts {}+{} of {}", r.a, r.b, code.parts.len()))?;
            parts.iter().try_for_each(|&(off, _)| word(off, "part"))
        }
        kind => {
            word(r.d, "destination")?;
            for (field, is_offset) in [r.a, r.b, r.c].into_iter().zip(kind.offsets()) {
                if is_offset {
                    word(field, "operand")?;
                }
            }
            if kind == Kind::Slice2 {
                word(r.a.saturating_add(1), "upper operand")?;
            }
            Ok(())
        }
    }
}

/// Segments packed in order into functions of at most
/// [`MAX_ITEMS_PER_FUNCTION`] items (a longer segment gets a function of its own).
fn functions(segments: &[Segment]) -> Vec<Vec<Segment>> {
    let mut out: Vec<Vec<Segment>> = Vec::new();
    let mut size = 0;
    for s in segments {
        if out.is_empty() || size + s.items.len() > MAX_ITEMS_PER_FUNCTION {
            out.push(Vec::new());
            size = 0;
        }
        size += s.items.len();
        out.last_mut().expect("pushed above").push(s.clone());
    }
    out
}
