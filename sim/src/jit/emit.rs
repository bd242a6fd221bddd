//! Cranelift IR for one native function of the compiled engine: its segments (one
//! per partition) in order, each behind one test of the partition's flag (but
//! those a profile marked [`Always`], inline without one), each record as
//! straight-line code. The tests lie next to each other on the hot
//! path and the segments' bodies after them, out of line (Cranelift's cold
//! blocks), so a cycle in which most partitions sleep fetches a few cache lines
//! of tests rather than a line per partition: the code a cycle runs is larger
//! than the first-level instruction cache, and fetching it is much of its cost.
//! Eight consecutive flags are also tested at once, their dirty bytes loaded as
//! one word, before their own tests. A word written or read earlier in the same
//! segment is taken from the value already in hand (a register, or a spill the
//! allocator chose) instead of being loaded again; every result is still stored,
//! so storage is exact after every segment and ports, traces and register commits
//! read it as they always have. A result that other partitions read is compared
//! with the word's old value; the differences of the words with the same readers
//! are or-ed together in a register over the whole segment, and at its end the
//! difference becomes a byte, 1 if any word changed, which is or-ed into each
//! reader's dirty byte (see [`activity`](super::activity)). Wide operations call
//! back into the word-slice routines.

use super::activity::Readers;
use super::plan::{Inst, Item, Segment};
use super::remat::Remat;
use super::tune::Always;
use super::unstored::Unstored;
use crate::exec::Code;
use crate::instr::{Kind, Rec, Span};
use crate::vector::RunCall;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I16, I32, I64, I8};
use cranelift_codegen::ir::{
    Block, FuncRef, InstBuilder, MemFlags, SigRef, StackSlot, StackSlotData, StackSlotKind, Value,
};
use cranelift_frontend::FunctionBuilder;
use std::collections::HashMap;

/// At most this many sets of readers have their differences pending in a segment
/// (each holds a register); a new one past it sets the oldest set's flags first.
const MAX_PENDING: usize = 4;

/// Consecutive flags tested at once (their dirty bytes loaded as one word)
/// before their own tests.
pub(super) const FLAGS_PER_TEST: usize = 8;

/// The function's parameters, in order: storage base, storage length, dirty
/// sources, the program (for the callbacks), the activity flags, the run calls.
pub(super) const PARAMS: usize = 6;

/// What the emitted code calls: the callback of a wide operation (`(program,
/// index, storage base, storage length)`), and run loops (`(storage base, run
/// call)`, the loop's address read from its [`RunCall`]).
pub(super) struct Callbacks {
    /// `ws_wide`: wide operation `index`.
    pub wide: FuncRef,
    /// The signature of a [`RunKernel`](crate::vector::RunKernel).
    pub run: SigRef,
}

/// What the emitter knows of every storage word.
#[derive(Clone, Copy)]
pub(super) struct Words<'a> {
    /// The partitions and copies that read it.
    pub readers: &'a Readers,
    /// Whether the code may leave it unstored.
    pub unstored: &'a Unstored,
    /// Whether the code recomputes it where it is read.
    pub remat: &'a Remat,
}

/// How the emitter treats the partitions' activity (see [`tune`](super::tune)).
#[derive(Clone, Copy)]
pub(super) struct Activity<'a> {
    /// The partitions that run at every settle, untested.
    pub always: &'a Always,
    /// While profiling: the word of the flags past their dirty bytes, where one
    /// run count per flag follows (partition or copy `p`'s at word `counts +
    /// p`).
    pub counts: Option<u32>,
}

/// The byte offset of flag `flag`'s dirty byte from the first dirty byte.
pub(super) fn flag_at(flag: u32) -> i32 {
    i32::try_from(flag).expect("flags are bounded by MAX_FLAGS when prepared")
}

/// The byte offset of flag `flag`'s run count, the counts starting at word
/// `counts` of the flags.
fn count_at(counts: u32, flag: u32) -> i32 {
    i32::try_from((u64::from(counts) + u64::from(flag)) * 8)
        .expect("flags are bounded by MAX_FLAGS when prepared")
}

/// A byte that is 1 when `value` (a word) is nonzero and 0 otherwise: what
/// [`or_into_flag`] ors into a flag.
pub(super) fn flag_byte(b: &mut FunctionBuilder, value: Value) -> Value {
    b.ins().icmp_imm(IntCC::NotEqual, value, 0)
}

/// Ors `set` (a [`flag_byte`]) into flag `flag`'s dirty byte (of the dirty
/// bytes at `flags`): a load, an OR and a store of the byte.
pub(super) fn or_into_flag(b: &mut FunctionBuilder, flags: Value, flag: u32, set: Value) {
    let at = flag_at(flag);
    let f = b.ins().load(I8, MemFlags::trusted(), flags, at);
    let v = b.ins().bor(f, set);
    b.ins().store(MemFlags::trusted(), v, flags, at);
}

/// Continues in a new block that runs only when flag `flag` (of the flags at
/// `flags`) is set, and clears it there; returns the block that follows, which
/// the caller jumps to, switches to and seals when done. The new block is cold:
/// Cranelift places it after the function's hot path, so consecutive tests stay
/// next to each other in the code.
pub(super) fn enter_if_flagged(b: &mut FunctionBuilder, flags: Value, flag: u32) -> Block {
    let (body, next) = (b.create_block(), b.create_block());
    let at = flag_at(flag);
    let set = b.ins().load(I8, MemFlags::trusted(), flags, at);
    b.ins().brif(set, body, &[], next, &[]);
    b.set_cold_block(body);
    b.switch_to_block(body);
    b.seal_block(body);
    let zero = b.ins().iconst(I8, 0);
    b.ins().store(MemFlags::trusted(), zero, flags, at);
    next
}

/// Adds 1 to flag `flag`'s run count (of the flags at `flags`, whose counts
/// start at word `counts`), in a profiling build.
pub(super) fn count_run(b: &mut FunctionBuilder, flags: Value, counts: u32, flag: u32) {
    let at = count_at(counts, flag);
    let n = b.ins().load(I64, MemFlags::trusted(), flags, at);
    let n = b.ins().iadd_imm(n, 1);
    b.ins().store(MemFlags::trusted(), n, flags, at);
}

/// Continues in a new block when `cond` is nonzero; otherwise the code jumps to
/// `skip`, which the caller switches to and seals after the skipped code.
fn continue_if(b: &mut FunctionBuilder, cond: Value, skip: Block) {
    let body = b.create_block();
    b.ins().brif(cond, body, &[], skip, &[]);
    b.switch_to_block(body);
    b.seal_block(body);
}

/// Continues in a new block only when one of the `n` flags from `first` (of the
/// dirty bytes at `flags`; at least 2, at most [`FLAGS_PER_TEST`]) is set, their
/// bytes loaded as one word (the flags are padded for the last ones) and those
/// past them masked off; otherwise the code jumps to `skip`, as for
/// [`continue_if`]. Exact when only code between here and `skip` sets those
/// flags.
pub(super) fn continue_if_any_flagged(
    b: &mut FunctionBuilder,
    flags: Value,
    first: u32,
    n: usize,
    skip: Block,
) {
    debug_assert!((2..=FLAGS_PER_TEST).contains(&n));
    // Eight dirty bytes, not necessarily 8-byte aligned.
    let unaligned = MemFlags::new().with_notrap();
    let bytes = b.ins().load(I64, unaligned, flags, flag_at(first));
    let any = match n {
        FLAGS_PER_TEST => bytes,
        _ => b.ins().band_imm(bytes, ((1u64 << (8 * n)) - 1) as i64),
    };
    continue_if(b, any, skip);
}

/// Emits the body of one function.
pub(super) struct Emitter<'a, 'b> {
    pub(super) b: &'a mut FunctionBuilder<'b>,
    code: &'a Code,
    /// The storage's first word.
    pub(super) vals: Value,
    len: Value,
    /// The stack slot holding the dirty sources (see [`group`](Self::group)).
    dirty: StackSlot,
    program: Value,
    flags: Value,
    runs: Value,
    calls: Callbacks,
    readers: &'a Readers,
    unstored: &'a Unstored,
    remat: &'a Remat,
    activity: Activity<'a>,
    /// The flag of the partition being emitted.
    flag: u32,
    /// Words whose current value is in hand, by offset.
    known: HashMap<u32, Value>,
    /// The segment's changes others read, per set of readers: the OR of old XOR
    /// new over the words those partitions read (see [`flush`](Self::flush)).
    changed: Vec<(&'a [u32], Value)>,
    wake: Vec<u32>,
}

impl<'a, 'b> Emitter<'a, 'b> {
    /// An emitter into `b`, whose entry block is current and has the function's
    /// parameters; `calls` are the imported callbacks.
    pub fn new(
        b: &'a mut FunctionBuilder<'b>,
        code: &'a Code,
        calls: Callbacks,
        (words, activity): (Words<'a>, Activity<'a>),
    ) -> Self {
        let entry = b.current_block().expect("the entry block is current");
        let p = b.block_params(entry).to_vec();
        let dirty =
            b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 8, 3));
        b.ins().stack_store(p[2], dirty, 0);
        Emitter {
            b,
            code,
            vals: p[0],
            len: p[1],
            dirty,
            program: p[3],
            flags: p[4],
            runs: p[5],
            calls,
            readers: words.readers,
            unstored: words.unstored,
            remat: words.remat,
            activity,
            flag: 0,
            known: HashMap::new(),
            changed: Vec::new(),
            wake: Vec::new(),
        }
    }

    /// Emits `segments` (over `items`) and the return.
    pub fn body(mut self, segments: &[Segment], items: &[Item]) {
        for group in segments.chunk_by(|a, b| a.mask == b.mask) {
            self.group(group, items);
        }
        self.b.ins().return_(&[]);
    }

    /// Consecutive segments of one mask: skipped at once unless a source in the
    /// mask is dirty (no flag of theirs can be set otherwise). A group of one
    /// tested segment has its flag's test alone, which the mask's would only
    /// precede.
    fn group(&mut self, segments: &[Segment], items: &[Item]) {
        let mask = segments[0].mask;
        let next = self.b.create_block();
        let always = self.activity.always;
        let alone = matches!(segments, [s] if !always.has(s.flag));
        if mask != u64::MAX && !alone {
            // Read from the stack at each test rather than kept in a register
            // through the function, where the allocator spilled it anyway and
            // reloaded it twice a test.
            let dirty = self.b.ins().stack_load(I64, self.dirty, 0);
            let hit = self.b.ins().band_imm(dirty, mask as i64);
            self.continue_if(hit, next);
        }
        let alike = |a: &Segment, b: &Segment| always.has(a.flag) == always.has(b.flag);
        for run in segments.chunk_by(|a, b| b.flag == a.flag + 1 && alike(a, b)) {
            if always.has(run[0].flag) {
                for s in run {
                    self.segment(s, &items[s.items.clone()]);
                }
                continue;
            }
            for chunk in run.chunks(FLAGS_PER_TEST) {
                self.chunk(chunk, items);
            }
        }
        self.b.ins().jump(next, &[]);
        self.b.switch_to_block(next);
        self.b.seal_block(next);
    }

    /// Segments of consecutive flags, up to [`FLAGS_PER_TEST`]; two or more are
    /// skipped at once while all their flags are clear (their dirty bytes loaded
    /// as one word).
    /// Exact: a segment's flag is set only by a segment that runs, so while none of
    /// these runs none of their flags can become set.
    fn chunk(&mut self, segments: &[Segment], items: &[Item]) {
        let after = self.b.create_block();
        if segments.len() >= 2 {
            let first = segments[0].flag;
            continue_if_any_flagged(self.b, self.flags, first, segments.len(), after);
        }
        for s in segments {
            self.segment(s, &items[s.items.clone()]);
        }
        self.b.ins().jump(after, &[]);
        self.b.switch_to_block(after);
        self.b.seal_block(after);
    }

    /// See [`continue_if`].
    fn continue_if(&mut self, cond: Value, skip: Block) {
        continue_if(self.b, cond, skip);
    }

    /// One segment: skipped unless its partition's flag is set (or it runs
    /// untested, [`Always`]); a run clears the flag, and counts itself while
    /// profiling.
    fn segment(&mut self, s: &Segment, items: &[Item]) {
        self.known.clear();
        self.flag = s.flag;
        let tested = !self.activity.always.has(s.flag);
        let next = tested.then(|| enter_if_flagged(self.b, self.flags, s.flag));
        if let Some(counts) = self.activity.counts {
            count_run(self.b, self.flags, counts, s.flag);
        }
        for item in items {
            match item {
                Item::Rec(_) if self.remat.skips(item) => {}
                Item::Rec(inst) => self.record(inst),
                Item::Vector { step } => self.run_inline(&self.code.steps[*step as usize]),
                Item::Run { dst, call, .. } => {
                    self.call_run(*call, *dst);
                    let mut written = Vec::new();
                    item.each_word(self.code, |w, write| {
                        if write {
                            written.push(w)
                        }
                    });
                    self.wake_readers(written);
                }
            }
        }
        self.flush();
        if let Some(next) = next {
            self.b.ins().jump(next, &[]);
            self.b.switch_to_block(next);
            self.b.seal_block(next);
        }
        self.known.clear();
    }

    /// Whether a change of a word read by `reader` must set its flag: it is
    /// another partition's (or a copy's), and tested.
    fn wakes(&self, reader: u32) -> bool {
        reader != self.flag && self.activity.always.wakes(reader)
    }

    /// Template record `index` of the program.
    pub(super) fn code_rec(&self, index: u32) -> Rec {
        self.code.recs[index as usize]
    }

    /// The address of word `off`, with the byte offset the load or store adds.
    pub(super) fn address(&mut self, off: u32) -> (Value, i32) {
        let bytes = u64::from(off) * 8;
        match i32::try_from(bytes) {
            Ok(b) => (self.vals, b),
            Err(_) => (self.b.ins().iadd_imm(self.vals, bytes as i64), 0),
        }
    }

    /// Whether `span` has `words` words and each is read from storage: none is in
    /// hand or recomputed where read.
    pub(super) fn in_storage(&self, span: Span, words: u32) -> bool {
        span.words == words
            && (span.off..span.off + words)
                .all(|w| !self.known.contains_key(&w) && self.remat.get(w).is_none())
    }

    /// The address of word `off` as a value.
    pub(super) fn address_of(&mut self, off: u32) -> Value {
        super::commit::word_at(self.b, self.vals, off)
    }

    /// The current value of word `off`.
    pub(super) fn read(&mut self, off: u32) -> Value {
        if let Some(&v) = self.known.get(&off) {
            return v;
        }
        if let Some(i) = self.remat.get(off) {
            let x = self.read(i.rec.a);
            let v = self.unary(i.kind, x, &i.rec);
            self.known.insert(off, v);
            return v;
        }
        let (base, at) = self.address(off);
        let v = self.b.ins().load(I64, MemFlags::trusted(), base, at);
        self.known.insert(off, v);
        v
    }

    /// Stores `v` to word `off` (unless it is [`Unstored`]) and keeps it in hand;
    /// when other partitions read the word, notes whether it changed (see
    /// [`flush`](Self::flush)).
    pub(super) fn write(&mut self, off: u32, v: Value) {
        self.known.insert(off, v);
        if self.unstored.has(off) {
            return;
        }
        let (base, at) = self.address(off);
        let readers = self.readers.of(off);
        if readers.iter().any(|&s| self.wakes(s)) {
            let old = self.b.ins().load(I64, MemFlags::trusted(), base, at);
            let diff = self.b.ins().bxor(old, v);
            self.note_change(readers, diff);
        }
        self.b.ins().store(MemFlags::trusted(), v, base, at);
    }

    /// Notes `diff` (nonzero if a word changed) for the partitions `readers`, or-ed
    /// into what is pending for the same readers (see [`flush`](Self::flush)).
    fn note_change(&mut self, readers: &'a [u32], diff: Value) {
        match self.changed.iter_mut().find(|(r, _)| *r == readers) {
            Some((_, acc)) => *acc = self.b.ins().bor(*acc, diff),
            None => {
                if self.changed.len() == MAX_PENDING {
                    let oldest = self.changed.remove(0);
                    self.set_flags([oldest]);
                }
                self.changed.push((readers, diff));
            }
        }
    }

    /// At the end of a segment: sets the flag of every other partition that reads
    /// a word the segment changed. (The segment is straight-line code, so every
    /// difference is in hand here; no flag is tested before the segment ends, so
    /// setting them late is exact.)
    fn flush(&mut self) {
        let changed = std::mem::take(&mut self.changed);
        self.set_flags(changed);
    }

    /// Sets the flags of the readers of `changed` that [`wakes`](Self::wakes):
    /// each set's difference becomes a [`flag_byte`], and each reader's dirty
    /// byte gets those of its sets or-ed into it ([`or_into_flag`]).
    fn set_flags(&mut self, changed: impl IntoIterator<Item = (&'a [u32], Value)>) {
        let mut sets: Vec<(u32, Value)> = Vec::new();
        for (readers, diff) in changed {
            if !readers.iter().any(|&s| self.wakes(s)) {
                continue;
            }
            let set = flag_byte(self.b, diff);
            sets.extend(
                readers
                    .iter()
                    .filter(|&&s| self.wakes(s))
                    .map(|&s| (s, set)),
            );
        }
        sets.sort_by_key(|&(s, _)| s);
        for flag in sets.chunk_by(|a, b| a.0 == b.0) {
            let mut set = flag[0].1;
            for &(_, other) in &flag[1..] {
                set = self.b.ins().bor(set, other);
            }
            or_into_flag(self.b, self.flags, flag[0].0, set);
        }
    }

    /// Sets the flags of the readers of `words` that [`wakes`](Self::wakes),
    /// which a callback wrote without comparing.
    pub(super) fn wake_readers(&mut self, words: impl IntoIterator<Item = u32>) {
        let mut wake = std::mem::take(&mut self.wake);
        for w in words {
            wake.extend_from_slice(self.readers.of(w));
        }
        wake.sort_unstable();
        wake.dedup();
        wake.retain(|&s| self.wakes(s));
        if !wake.is_empty() {
            let one = self.b.ins().iconst(I8, 1);
            for &s in &wake {
                self.b
                    .ins()
                    .store(MemFlags::trusted(), one, self.flags, flag_at(s));
            }
        }
        wake.clear();
        self.wake = wake;
    }

    pub(super) fn konst(&mut self, k: u64) -> Value {
        self.b.ins().iconst(I64, k as i64)
    }

    /// `v & k`, left out when `k` is all ones; the low 8, 16 or 32 bits as a zero
    /// extension (`movzx`, or a 32-bit `mov`: three or four bytes of code where an
    /// `and` with a 32-bit immediate takes seven).
    pub(super) fn mask(&mut self, v: Value, k: u64) -> Value {
        let narrow = match k {
            u64::MAX => return v,
            0xff => I8,
            0xffff => I16,
            0xffff_ffff => I32,
            _ => return self.b.ins().band_imm(v, k as i64),
        };
        let low = self.b.ins().ireduce(narrow, v);
        self.b.ins().uextend(I64, low)
    }

    /// `v << s` by a constant, left out when `s` is 0.
    pub(super) fn shl(&mut self, v: Value, s: u64) -> Value {
        match s & 63 {
            0 => v,
            s => self.b.ins().ishl_imm(v, s as i64),
        }
    }

    /// `v >> s` (logical) by a constant, left out when `s` is 0.
    pub(super) fn shr(&mut self, v: Value, s: u64) -> Value {
        match s & 63 {
            0 => v,
            s => self.b.ins().ushr_imm(v, s as i64),
        }
    }

    /// Word `k` (a value computed at run time) of the first `len` words of
    /// `span`, read from storage; 0 when `k >= len`. The index is masked or clamped
    /// into those words before the load, so any `k` reads within `span`.
    pub(super) fn word_at_run_time(&mut self, span: Span, len: u32, k: Value) -> Value {
        if len == 0 {
            return self.konst(0);
        }
        // Any index into the words: masked when their count is a power of two (one
        // instruction), clamped otherwise.
        let at = if len.is_power_of_two() {
            self.b.ins().band_imm(k, i64::from(len - 1))
        } else {
            let last = self.konst(u64::from(len - 1));
            self.b.ins().umin(k, last)
        };
        let bytes = self.b.ins().ishl_imm(at, 3);
        let base = self.b.ins().iadd(self.vals, bytes);
        let (base, off) = match i32::try_from(u64::from(span.off) * 8) {
            Ok(off) => (base, off),
            Err(_) => (self.b.ins().iadd_imm(base, i64::from(span.off) * 8), 0),
        };
        let w = self.b.ins().load(I64, MemFlags::trusted(), base, off);
        let inside = self
            .b
            .ins()
            .icmp_imm(IntCC::UnsignedLessThan, k, i64::from(len));
        let zero = self.konst(0);
        self.b.ins().select(inside, w, zero)
    }

    /// `v | k`, left out when `k` is 0.
    fn or_k(&mut self, v: Value, k: u64) -> Value {
        if k == 0 {
            v
        } else {
            self.b.ins().bor_imm(v, k as i64)
        }
    }

    /// A comparison's flag as a 0/1 word.
    pub(super) fn flag(&mut self, cc: IntCC, x: Value, y: Value) -> Value {
        let c = self.b.ins().icmp(cc, x, y);
        self.b.ins().uextend(I64, c)
    }

    /// One record (see [`Kind`] for what each computes).
    pub(super) fn record(&mut self, inst: &Inst) {
        let r = inst.rec;
        let v = match inst.kind {
            Kind::Wide => return self.wide_op(r.a),
            Kind::CatN => {
                let mut acc: Option<Value> = None;
                let parts = &self.code.parts[r.a as usize..(r.a + r.b) as usize];
                for &(off, sh) in parts {
                    let p = self.read(off);
                    let p = self.shl(p, u64::from(sh));
                    acc = Some(match acc {
                        Some(acc) => self.b.ins().bor(acc, p),
                        None => p,
                    });
                }
                match acc {
                    Some(acc) => self.or_k(acc, r.k),
                    None => self.konst(r.k),
                }
            }
            Kind::Slice2 => self.slice2(&r),
            Kind::Mux => {
                let s = self.condition(r.a);
                let (y, z) = (self.read(r.b), self.read(r.c));
                self.b.ins().select(s, y, z)
            }
            kind => match kind.offsets() {
                [true, false, false] => {
                    let x = self.read(r.a);
                    self.unary(kind, x, &r)
                }
                [true, true, false] => {
                    let (x, y) = (self.read(r.a), self.read(r.b));
                    self.binary(kind, x, y, &r)
                }
                _ => {
                    let (x, y, z) = (self.read(r.a), self.read(r.b), self.read(r.c));
                    self.ternary(kind, x, y, z, &r)
                }
            },
        };
        self.write(r.d, v);
    }

    /// A value that is nonzero exactly when bit 0 of word `off` is set, for a
    /// select or a branch. A word not in hand that is a one-bit field of another
    /// (recomputed where it is read, see [`remat`](super::remat)) tests that bit
    /// of its source directly, instead of shifting and masking it first.
    pub(super) fn condition(&mut self, off: u32) -> Value {
        if !self.known.contains_key(&off) {
            if let Some(i) = self.remat.get(off).filter(|i| i.kind == Kind::Field) {
                let r = i.rec;
                if r.k & 1 == 1 && r.c == 0 && r.k2 & 1 == 0 && r.b < 64 {
                    let x = self.read(r.a);
                    return self.b.ins().band_imm(x, (1u64 << r.b) as i64);
                }
            }
        }
        // Bit 0 tested in the low byte: a shorter encoding than the word's.
        let x = self.read(off);
        let s = self.b.ins().ireduce(I8, x);
        self.b.ins().band_imm(s, 1)
    }

    /// A two-word slice (see [`Kind::Slice2`]) of the words at `r.a` and `r.a + 1`.
    pub(super) fn slice2(&mut self, r: &Rec) -> Value {
        let lo = self.read(r.a);
        let hi = self.read(r.a + 1);
        let lo = self.shr(lo, u64::from(r.b));
        let hi = self.shl(hi, u64::from(64 - r.b));
        let v = self.b.ins().bor(lo, hi);
        self.mask(v, r.k)
    }

    fn unary(&mut self, kind: Kind, x: Value, r: &Rec) -> Value {
        match kind {
            Kind::Field => {
                let v = self.shr(x, u64::from(r.b));
                let v = self.mask(v, r.k);
                let v = self.shl(v, u64::from(r.c));
                self.or_k(v, r.k2)
            }
            Kind::Not => self.b.ins().bxor_imm(x, r.k as i64),
            Kind::Sra => {
                let v = self.shl(x, u64::from(r.c));
                let v = match r.b & 63 {
                    0 => v,
                    s => self.b.ins().sshr_imm(v, i64::from(s)),
                };
                self.mask(v, r.k)
            }
            Kind::Replicate => self.b.ins().imul_imm(x, r.k as i64),
            Kind::RedAnd => {
                let k = self.konst(r.k);
                self.flag(IntCC::Equal, x, k)
            }
            Kind::RedOr => {
                let zero = self.konst(0);
                self.flag(IntCC::NotEqual, x, zero)
            }
            Kind::RedXor => {
                let n = self.b.ins().popcnt(x);
                self.b.ins().band_imm(n, 1)
            }
            Kind::Lz => {
                let n = self.b.ins().clz(x);
                let n = self.b.ins().iadd_imm(n, -(64 - i64::from(r.c)));
                self.mask(n, r.k)
            }
            _ => unreachable!("{kind:?} is not unary"),
        }
    }

    fn binary(&mut self, kind: Kind, x: Value, y: Value, r: &Rec) -> Value {
        match kind {
            Kind::And => self.b.ins().band(x, y),
            Kind::Or => self.b.ins().bor(x, y),
            Kind::Xor => self.b.ins().bxor(x, y),
            Kind::Add => {
                let v = self.b.ins().iadd(x, y);
                self.mask(v, r.k)
            }
            Kind::Sub => {
                let v = self.b.ins().isub(x, y);
                self.mask(v, r.k)
            }
            Kind::Mul => {
                let v = self.b.ins().imul(x, y);
                self.mask(v, r.k)
            }
            Kind::Eq => self.flag(IntCC::Equal, x, y),
            Kind::Ne => self.flag(IntCC::NotEqual, x, y),
            Kind::LtU => self.flag(IntCC::UnsignedLessThan, x, y),
            Kind::LeU => self.flag(IntCC::UnsignedLessThanOrEqual, x, y),
            Kind::LtS | Kind::LeS => {
                let (x, y) = (self.shl(x, u64::from(r.c)), self.shl(y, u64::from(r.c)));
                let cc = if kind == Kind::LtS {
                    IntCC::SignedLessThan
                } else {
                    IntCC::SignedLessThanOrEqual
                };
                self.flag(cc, x, y)
            }
            Kind::Cat2 => {
                let x = self.shl(x, u64::from(r.c));
                let v = self.b.ins().bor(x, y);
                self.or_k(v, r.k)
            }
            Kind::ShlV | Kind::ShrV => {
                let s = self.b.ins().band_imm(y, 63);
                let shifted = if kind == Kind::ShlV {
                    let v = self.b.ins().ishl(x, s);
                    self.mask(v, r.k)
                } else {
                    self.b.ins().ushr(x, s)
                };
                let in_range = self
                    .b
                    .ins()
                    .icmp_imm(IntCC::UnsignedLessThan, y, i64::from(r.c));
                let zero = self.konst(0);
                self.b.ins().select(in_range, shifted, zero)
            }
            Kind::SraV => {
                let sh = u64::from(64 - r.c);
                let limit = self.konst(u64::from(r.c) - 1);
                let s = self.b.ins().umin(y, limit);
                let v = self.shl(x, sh);
                let v = match sh & 63 {
                    0 => v,
                    sh => self.b.ins().sshr_imm(v, sh as i64),
                };
                let v = self.b.ins().sshr(v, s);
                self.mask(v, r.k)
            }
            _ => unreachable!("{kind:?} is not binary"),
        }
    }

    fn ternary(&mut self, kind: Kind, x: Value, y: Value, z: Value, r: &Rec) -> Value {
        match kind {
            Kind::Cat3 => {
                let x = self.shl(x, r.k2 & 63);
                let y = self.shl(y, (r.k2 >> 8) & 63);
                let v = self.b.ins().bor(x, y);
                let v = self.b.ins().bor(v, z);
                self.or_k(v, r.k)
            }
            _ => unreachable!("{kind:?} is not ternary"),
        }
    }

    /// Wide operation `index`: inline where [`inlines`](super::wide::inlines)
    /// has it, else through its callback.
    fn wide_op(&mut self, index: u32) {
        let code = self.code;
        let op = &code.wide[index as usize];
        if super::wide::inlines(op) {
            self.wide_inline(op);
        } else {
            let dst = op.dst();
            self.call(self.calls.wide, index, dst);
            self.wake_readers(dst.off..dst.off + dst.words);
        }
    }

    /// Calls `callback` for `index`; the words `dst` it writes are no longer in hand.
    fn call(&mut self, callback: FuncRef, index: u32, dst: Span) {
        let i = self.konst(u64::from(index));
        let args = [self.program, i, self.vals, self.len];
        self.b.ins().call(callback, &args);
        self.forget(dst);
    }

    /// Calls the loop of run call `call` (its address read from the call's entry
    /// in the table of run calls); the words `dst` it writes are no longer in hand.
    fn call_run(&mut self, call: u32, dst: Span) {
        let at = i64::from(call) * std::mem::size_of::<RunCall>() as i64;
        let entry = self.b.ins().iadd_imm(self.runs, at);
        let kernel = std::mem::offset_of!(RunCall, kernel) as i32;
        let kernel = self
            .b
            .ins()
            .load(I64, MemFlags::trusted().with_readonly(), entry, kernel);
        self.b
            .ins()
            .call_indirect(self.calls.run, kernel, &[self.vals, entry]);
        self.forget(dst);
    }

    /// The words `dst` are no longer in hand (a call, or code that does not keep
    /// values in hand, wrote them).
    pub(super) fn forget(&mut self, dst: Span) {
        for off in dst.off..dst.off + dst.words {
            self.known.remove(&off);
        }
    }
}
