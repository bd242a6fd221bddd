//! The direct register commits of each clock domain as native code: one function
//! per domain that does what [`state::commit_copies`](crate::state::commit_copies)
//! does, without its loop or its data-dependent branches. A copy picks its source
//! with selects (the reset value in reset, the next value when enabled, else the
//! register itself; a one-word copy with an enable and no reset to test selects
//! the value instead) and moves its words with plain loads and stores, two words to
//! a 128-bit one as the clock edge's samples and shadow commits do
//! ([`copy_pairs`]), or with a call of [`move_words`] past [`MAX_UNROLLED`] words
//! or when the source partly overlaps the register; a broadcast run selects word
//! by word and branches on its reset.
//!
//! The reset most of a domain's copies share is tested once, before them all
//! ([`body`]): the copies are emitted twice, on a cold path taken in reset and,
//! without that reset's selects, on the path taken otherwise.
//!
//! A copy runs only when its flag is set (see [`activity`](super::activity)), or
//! at every edge in an engine tuned from a profile that found it running at most
//! edges (see [`tune`](super::tune));
//! eight consecutive flags are tested at once, their dirty bytes loaded as one
//! word, before their own tests, as the settle's are. When
//! steps or copies read the register, the copy notes whether any word changed (an
//! unrolled copy compares; a moved one counts as changed unless it was disabled; a
//! broadcast's reset always does) and then sets their flags.

use super::activity::Fanout;
use super::edge::EDGE_PARAMS;
use super::emit::{
    continue_if_any_flagged, count_run, enter_if_flagged, flag_byte, or_into_flag, FLAGS_PER_TEST,
};
use super::tune::Always;
use crate::state::{DirectCopy, DomainState, NONE};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I64, I64X2};
use cranelift_codegen::ir::{BlockArg, FuncRef, InstBuilder, MemFlags, Value};
use cranelift_frontend::FunctionBuilder;
use std::collections::BTreeMap;

/// Moves `n` words from `src` to `dst` (the spans may overlap, as for `memmove`)
/// and returns 1, or returns 0 at once when `src` is `dst` (a disabled register
/// copying onto itself). It does not compare: a long copy that runs is taken to
/// have changed its register (waking its readers is always safe, and comparing
/// cost more than it saved; see the README).
///
/// # Safety
/// `src` and `dst` point to `n` readable words, `dst` to `n` writable ones, and
/// nothing else accesses them during the call (see the engine's safety argument).
pub(super) unsafe extern "C" fn move_words(dst: *mut u64, src: *const u64, n: u64) -> u64 {
    if std::ptr::eq(dst, src) {
        return 0;
    }
    // SAFETY: the caller's contract; `copy` allows overlap.
    unsafe { std::ptr::copy(src, dst, n as usize) };
    1
}

/// Why a domain's commits cannot be compiled: a copy addresses a word outside
/// storage.
#[derive(Clone, Debug, thiserror::Error)]
#[error("commit {copy} of domain {domain} {what}")]
pub struct MalformedCommit {
    /// The domain.
    pub(crate) domain: usize,
    /// Position of the copy in the domain's list.
    pub(crate) copy: usize,
    /// What is out of range.
    pub(crate) what: String,
}

/// Copies of more words than this call [`move_words`] instead of being unrolled, so
/// that code size stays bounded.
pub(super) const MAX_UNROLLED: u32 = 8;

/// Checks that every word the copies of every domain read or write lies within
/// storage of `words` words.
pub(super) fn check(domains: &[DomainState], words: usize) -> Result<(), MalformedCommit> {
    for (domain, dom) in domains.iter().enumerate() {
        for (copy, c) in dom.copies.iter().enumerate() {
            check_copy(c, words).map_err(|what| MalformedCommit { domain, copy, what })?;
        }
    }
    Ok(())
}

fn check_copy(c: &DirectCopy, words: usize) -> Result<(), String> {
    let span = |off: u32, len: u32, role: &str| {
        if off as usize + len as usize <= words {
            Ok(())
        } else {
            Err(format!(
                "{role} words {off}+{len} are outside storage of {words} words"
            ))
        }
    };
    span(c.dst, c.len, "register")?;
    span(c.src, if c.broadcast { 1 } else { c.len }, "next-value")?;
    if c.enable != NONE {
        span(c.enable, 1, "enable")?;
    }
    if c.reset != NONE {
        span(c.reset, 1, "reset")?;
        span(c.reset_value, c.len, "reset-value")?;
    }
    Ok(())
}

/// Whether copy `c` compares its words as it copies them, so that its register's
/// readers wake only when a word changed: an unrolled copy that is no broadcast
/// (a broadcast's reset counts as a change; a copy moved by [`move_words`] counts
/// as changed whenever it runs). Only such a copy may run untested (see
/// [`tune`](super::tune)).
pub(super) fn compares(c: &DirectCopy) -> bool {
    !c.broadcast
        && c.len <= MAX_UNROLLED
        && !partly_overlaps(c, c.src)
        && (c.reset == NONE || !partly_overlaps(c, c.reset_value))
}

/// One domain's copies as the commit function sees them.
pub(super) struct Copies<'a> {
    /// The copies, in order.
    pub copies: &'a [DirectCopy],
    /// The flag of the first (the others follow).
    pub first_flag: u32,
    /// Per copy, the flags to set when its register changes.
    pub wake: &'a Fanout,
    /// The copies (by flag) that run untested.
    pub always: &'a Always,
    /// While profiling: the index of the first run count (see
    /// [`emit::Activity::counts`](super::emit::Activity::counts)).
    pub counts: Option<u32>,
}

/// Emits the copies of one domain's commit function into `b`, whose entry block is
/// current and has the edge function's parameters (the storage base and the flags
/// are used); `moves` is the imported [`move_words`]. The caller continues in the
/// current block and returns.
///
/// When at least [`MIN_HOISTED`] copies share a reset (see [`hoisted_reset`]), the
/// function tests it once: the copies are emitted twice, as they are on a cold path
/// taken while it is asserted, and without its test on the path taken otherwise.
pub(super) fn body(b: &mut FunctionBuilder, domain: &Copies, moves: FuncRef) {
    let entry = b.current_block().expect("the entry block is current");
    let params = b.block_params(entry);
    debug_assert_eq!(params.len(), EDGE_PARAMS);
    let (vals, flags) = (params[0], params[3]);
    let Some(reset) = hoisted_reset(domain.copies) else {
        return copies(b, domain, (vals, flags), moves, None);
    };
    let (on, off, done) = (b.create_block(), b.create_block(), b.create_block());
    let asserted = bit_is(b, vals, reset.0, reset.1);
    b.ins().brif(asserted, on, &[], off, &[]);
    b.set_cold_block(on);
    for (block, low) in [(off, Some(reset)), (on, None)] {
        b.switch_to_block(block);
        b.seal_block(block);
        copies(b, domain, (vals, flags), moves, low);
        b.ins().jump(done, &[]);
    }
    b.switch_to_block(done);
    b.seal_block(done);
}

/// Copies sharing a reset that their commit function tests once (see [`body`]):
/// fewer would not pay for the copies' code emitted twice.
const MIN_HOISTED: usize = 4;

/// The reset word and level most of `copies` share, if at least [`MIN_HOISTED`]
/// do and no copy writes that word (so that it reads the same at every copy, and
/// one test before them all is exact). Ties go to the lowest word.
fn hoisted_reset(copies: &[DirectCopy]) -> Option<(u32, u64)> {
    let mut users: BTreeMap<(u32, u64), usize> = BTreeMap::new();
    for c in copies.iter().filter(|c| c.reset != NONE) {
        *users.entry((c.reset, c.reset_level)).or_default() += 1;
    }
    let written = |w: u32| copies.iter().any(|c| c.dst <= w && w < c.dst + c.len);
    users
        .into_iter()
        .filter(|&((word, _), n)| n >= MIN_HOISTED && !written(word))
        .max_by_key(|&((word, _), n)| (n, std::cmp::Reverse(word)))
        .map(|(reset, _)| reset)
}

/// The copies of `domain` in order, each tested on its flag unless it runs
/// untested; `low` is a reset known not to be asserted (see [`body`]).
fn copies(
    b: &mut FunctionBuilder,
    domain: &Copies,
    (vals, flags): (Value, Value),
    moves: FuncRef,
    low: Option<(u32, u64)>,
) {
    let flag = |i: usize| domain.first_flag + i as u32;
    let always = |i: &usize| domain.always.has(flag(*i));
    let indices: Vec<usize> = (0..domain.copies.len()).collect();
    for run in indices.chunk_by(|i, j| always(i) == always(j)) {
        if always(&run[0]) {
            run.iter()
                .for_each(|&i| one(b, domain, i, (vals, flags), moves, low));
            continue;
        }
        for chunk in run.chunks(FLAGS_PER_TEST) {
            let after = b.create_block();
            if chunk.len() >= 2 {
                continue_if_any_flagged(b, flags, flag(chunk[0]), chunk.len(), after);
            }
            for &i in chunk {
                let next = enter_if_flagged(b, flags, flag(i));
                if let Some(counts) = domain.counts {
                    count_run(b, flags, counts, flag(i));
                }
                one(b, domain, i, (vals, flags), moves, low);
                b.ins().jump(next, &[]);
                b.switch_to_block(next);
                b.seal_block(next);
            }
            b.ins().jump(after, &[]);
            b.switch_to_block(after);
            b.seal_block(after);
        }
    }
}

/// Copy `i` of `domain`, waking its register's readers when it changed, in the
/// current block, which it leaves current (another after a branch on reset).
fn one(
    b: &mut FunctionBuilder,
    domain: &Copies,
    i: usize,
    (vals, flags): (Value, Value),
    moves: FuncRef,
    low: Option<(u32, u64)>,
) {
    let wake = domain.wake.get(i);
    let mut copy = Copy {
        b,
        vals,
        moves,
        track: !wake.is_empty(),
        low,
    };
    if let Some(changed) = copy.emit(&domain.copies[i]) {
        copy.wake(changed, flags, wake);
    }
}

/// The address of word `off` from `base`, with the byte offset a load or store
/// adds.
fn address(b: &mut FunctionBuilder, base: Value, off: u32) -> (Value, i32) {
    let bytes = u64::from(off) * 8;
    match i32::try_from(bytes) {
        Ok(at) => (base, at),
        Err(_) => (b.ins().iadd_imm(base, bytes as i64), 0),
    }
}

/// The address of word `off` from `base`, as a value.
pub(super) fn word_at(b: &mut FunctionBuilder, base: Value, off: u32) -> Value {
    b.ins().iadd_imm(base, i64::from(off) * 8)
}

/// A condition for a select or a branch: nonzero exactly when bit 0 of word `off`
/// from `vals` equals `level` (for level 1 the bit itself, which a select or a
/// branch tests without a comparison first).
pub(super) fn bit_is(b: &mut FunctionBuilder, vals: Value, off: u32, level: u64) -> Value {
    let w = load(b, vals, off);
    let bit = b.ins().band_imm(w, 1);
    if level == 1 {
        return bit;
    }
    b.ins().icmp_imm(IntCC::Equal, bit, level as i64)
}

/// `acc | (old ^ new)`, or `old ^ new` without `acc`: nonzero once a word changed.
pub(super) fn diff(b: &mut FunctionBuilder, acc: Option<Value>, old: Value, new: Value) -> Value {
    let d = b.ins().bxor(old, new);
    match acc {
        Some(a) => b.ins().bor(a, d),
        None => d,
    }
}

/// Loads word `off` from `base`.
pub(super) fn load(b: &mut FunctionBuilder, base: Value, off: u32) -> Value {
    let (base, at) = address(b, base, off);
    b.ins().load(I64, MemFlags::trusted(), base, at)
}

/// Stores `v` to word `off` from `base`.
pub(super) fn store(b: &mut FunctionBuilder, base: Value, off: u32, v: Value) {
    let (base, at) = address(b, base, off);
    b.ins().store(MemFlags::trusted(), v, base, at);
}

/// Copies `n` words from word `from.1` of the address `from.0` to word `to.1` of
/// `to.0` (spans that are the same or do not overlap), two words at a time as one
/// 128-bit load and store and an odd last word alone; when `track`, also returns a
/// value that is nonzero when a word at `to` changed. Every copy of the clock edge
/// (sample, shadow commit, register commit) pairs the same words, so a pair the
/// commit loads was stored as one pair by the sample before it, and the store
/// forwards to the load.
pub(super) fn copy_pairs(
    b: &mut FunctionBuilder,
    to: (Value, u32),
    from: (Value, u32),
    n: u32,
    track: bool,
) -> Option<Value> {
    // Words are 8-byte aligned, a pair not necessarily 16.
    let pair = MemFlags::new().with_notrap();
    let mut changed_pairs = None;
    for k in (0..n & !1).step_by(2) {
        let (base, at) = address(b, from.0, from.1 + k);
        let v = b.ins().load(I64X2, pair, base, at);
        let (base, at) = address(b, to.0, to.1 + k);
        if track {
            let old = b.ins().load(I64X2, pair, base, at);
            let d = b.ins().bxor(old, v);
            changed_pairs = Some(match changed_pairs {
                Some(a) => b.ins().bor(a, d),
                None => d,
            });
        }
        b.ins().store(pair, v, base, at);
    }
    let mut changed = changed_pairs.map(|d| {
        let any = b.ins().vany_true(d);
        b.ins().uextend(I64, any)
    });
    if n % 2 == 1 {
        let v = load(b, from.0, from.1 + n - 1);
        if track {
            let old = load(b, to.0, to.1 + n - 1);
            changed = Some(diff(b, changed, old, v));
        }
        store(b, to.0, to.1 + n - 1, v);
    }
    changed
}

/// Sets the flags `steps` (of the dirty bytes at `flags`) if `changed` is
/// nonzero: turns it into a [`flag_byte`] and ors that into each (no branch).
pub(super) fn wake(b: &mut FunctionBuilder, changed: Value, flags: Value, steps: &[u32]) {
    if steps.is_empty() {
        return;
    }
    let changed = flag_byte(b, changed);
    for &s in steps {
        or_into_flag(b, flags, s, changed);
    }
}

struct Copy<'a, 'b> {
    b: &'a mut FunctionBuilder<'b>,
    vals: Value,
    moves: FuncRef,
    /// Whether the copy reports a change (steps read the register).
    track: bool,
    /// A reset word and level known not to be asserted here (see [`body`]).
    low: Option<(u32, u64)>,
}

impl Copy<'_, '_> {
    fn load(&mut self, base: Value, off: u32) -> Value {
        load(self.b, base, off)
    }

    fn store(&mut self, base: Value, off: u32, v: Value) {
        store(self.b, base, off, v)
    }

    /// Bit 0 of word `off` equals `level`.
    fn bit_is(&mut self, off: u32, level: u64) -> Value {
        bit_is(self.b, self.vals, off, level)
    }

    /// The copy; when tracked, a value that is nonzero if a word changed.
    fn emit(&mut self, c: &DirectCopy) -> Option<Value> {
        let enabled = (c.enable != NONE).then(|| self.bit_is(c.enable, 1));
        if c.reset == NONE || self.low == Some((c.reset, c.reset_level)) {
            return self.load_next(c, enabled);
        }
        let reset = self.bit_is(c.reset, c.reset_level);
        if !c.broadcast && !partly_overlaps(c, c.reset_value) {
            // One path: the source is the reset value, the next value or the
            // register itself.
            let (next, own) = (self.address_of(c.src), self.address_of(c.dst));
            let kept = match enabled {
                Some(e) => self.b.ins().select(e, next, own),
                None => next,
            };
            let initial = self.address_of(c.reset_value);
            let from = self.b.ins().select(reset, initial, kept);
            return self.copy_words(c, from, c.src);
        }
        // A broadcast resets word by word: a branch on the reset, which is rare
        // and steady, so it predicts well.
        let (on, off, done) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        let changed = self.track.then(|| self.b.append_block_param(done, I64));
        self.b.ins().brif(reset, on, &[], off, &[]);
        for (block, resets) in [(on, true), (off, false)] {
            self.b.switch_to_block(block);
            self.b.seal_block(block);
            let c = if resets {
                let from = self.address_of(c.reset_value);
                let track = std::mem::replace(&mut self.track, false);
                self.copy_words(c, from, c.reset_value);
                self.track = track;
                track.then(|| self.b.ins().iconst(I64, 1))
            } else {
                self.load_next(c, enabled)
            };
            let args: Vec<BlockArg> = c.into_iter().map(BlockArg::Value).collect();
            self.b.ins().jump(done, &args);
        }
        self.b.switch_to_block(done);
        self.b.seal_block(done);
        changed
    }

    /// Sets the flags of `steps` if `changed` is nonzero.
    fn wake(&mut self, changed: Value, flags: Value, steps: &[u32]) {
        wake(self.b, changed, flags, steps)
    }

    /// `acc | (old ^ new)`, or `old ^ new` for the first word.
    fn diff(&mut self, acc: Option<Value>, old: Value, new: Value) -> Option<Value> {
        Some(diff(self.b, acc, old, new))
    }

    /// The address of word `off` as a value.
    fn address_of(&mut self, off: u32) -> Value {
        word_at(self.b, self.vals, off)
    }

    /// The register loads its next value if `enabled` (or always, without an
    /// enable) and keeps its own otherwise; when tracked, whether a word changed.
    /// A broadcast, and a one-word copy with an enable, select values word by
    /// word (a one-word copy loads its own word for the comparison anyway, so it
    /// selects the value, not its address).
    fn load_next(&mut self, c: &DirectCopy, enabled: Option<Value>) -> Option<Value> {
        if c.broadcast || (c.len == 1 && enabled.is_some()) {
            let next = self.load(self.vals, c.src);
            let mut changed = None;
            for k in 0..c.len {
                let own =
                    (enabled.is_some() || self.track).then(|| self.load(self.vals, c.dst + k));
                let v = match (enabled, own) {
                    (Some(e), Some(own)) => self.b.ins().select(e, next, own),
                    _ => next,
                };
                if let (true, Some(own)) = (self.track, own) {
                    changed = self.diff(changed, own, v);
                }
                self.store(self.vals, c.dst + k, v);
            }
            return changed;
        }
        if let (Some(e), 1) = (enabled, c.len) {
            // One word: select the value, not its address (the register's own
            // word is loaded for the comparison anyway).
            let next = self.load(self.vals, c.src);
            let own = self.load(self.vals, c.dst);
            let v = self.b.ins().select(e, next, own);
            self.store(self.vals, c.dst, v);
            return self.track.then(|| self.b.ins().bxor(own, v));
        }
        // A disabled register copies onto itself: no data-dependent branch.
        let from = match enabled {
            Some(e) => {
                let (next, own) = (self.address_of(c.src), self.address_of(c.dst));
                self.b.ins().select(e, next, own)
            }
            None => self.address_of(c.src),
        };
        self.copy_words(c, from, c.src)
    }

    /// Copies `c.len` words from address `from` (word `source`, the register
    /// itself or its reset value) onto the register; when tracked, whether a word
    /// changed.
    fn copy_words(&mut self, c: &DirectCopy, from: Value, source: u32) -> Option<Value> {
        if c.len > MAX_UNROLLED || partly_overlaps(c, source) {
            let dst = self.address_of(c.dst);
            let n = self.b.ins().iconst(I64, i64::from(c.len));
            let call = self.b.ins().call(self.moves, &[dst, from, n]);
            let changed = self.b.inst_results(call)[0];
            return self.track.then_some(changed);
        }
        copy_pairs(self.b, (self.vals, c.dst), (from, 0), c.len, self.track)
    }
}

/// Whether the `c.len` words at `source` overlap the register's without being
/// them: a copy from there needs `memmove`'s choice of direction (the compiler's
/// layouts never have one, but every checked program is exact).
fn partly_overlaps(c: &DirectCopy, source: u32) -> bool {
    source != c.dst && source < c.dst + c.len && c.dst < source + c.len
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-word register at `dst` reset by the bit at `reset` (high), or without
    /// a reset for `NONE`.
    fn copy(dst: u32, reset: u32) -> DirectCopy {
        DirectCopy {
            dst,
            src: 100 + dst,
            len: 1,
            broadcast: false,
            enable: NONE,
            reset,
            reset_level: 1,
            reset_value: if reset == NONE { NONE } else { 200 + dst },
        }
    }

    #[test]
    fn the_reset_most_copies_share_is_tested_once_unless_a_copy_writes_it() {
        let shared = |n: u32, reset: u32| (0..n).map(move |d| copy(d, reset));
        // Too few to pay for the copies emitted twice.
        let three: Vec<_> = shared(3, 50).collect();
        assert_eq!(hoisted_reset(&three), None);
        // Four share word 50, two word 40, one none.
        let mut many: Vec<_> = shared(4, 50).collect();
        many.extend([copy(10, 40), copy(11, 40), copy(12, NONE)]);
        assert_eq!(hoisted_reset(&many), Some((50, 1)));
        // A level is part of the reset: three high and three low are two resets
        // of three copies each.
        let mut split: Vec<_> = shared(3, 50).collect();
        split.extend((20..23).map(|d| DirectCopy {
            reset_level: 0,
            ..copy(d, 50)
        }));
        assert_eq!(hoisted_reset(&split), None);
        // Equal counts: the lower word.
        let mut tie: Vec<_> = shared(4, 60).collect();
        tie.extend((30..34).map(|d| copy(d, 55)));
        assert_eq!(hoisted_reset(&tie), Some((55, 1)));
        // A copy that writes the reset word (a register holding the reset) reads
        // differently before and after it: not hoisted.
        let mut written = many.clone();
        written.push(DirectCopy {
            len: 3,
            ..copy(49, NONE)
        });
        assert_eq!(hoisted_reset(&written), None);
    }
}
