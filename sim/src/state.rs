//! The clock-edge half of the two-phase evaluation: registers and memory ports of
//! the domains that have a rising edge sample their inputs into a shadow buffer,
//! memory writes are applied (after every read port of the edge has sampled:
//! read-first), then the shadow values are committed.
//!
//! Most registers skip the shadow: when every word a register reads (next value,
//! enable, reset) is unchanged by the commits that precede its own, it commits by
//! copying directly (see `regs.rs` for the order that makes this exact), and the
//! compiler lays such registers and their next values out side by side so that
//! this is a few `memcpy`s of whole runs of registers.

use crate::clock::Fired;
use crate::instr::Span;
use serde::{Deserialize, Serialize};

/// What [`commit_shadow`] commits for `dom`, in order: every shadowed register,
/// then every read port's data, each as (storage offset, shadow offset, words).
pub(crate) fn shadow_entries<'a>(
    dom: &'a DomainState,
    mems: &'a [MemLayout],
) -> impl Iterator<Item = (u32, u32, u32)> + 'a {
    let regs = dom.regs.iter().map(|r| (r.q, r.shadow, r.words));
    let reads = (dom.reads.iter()).map(|p| (p.data, p.shadow, mems[p.mem as usize].words));
    regs.chain(reads)
}

/// "No net" marker for optional storage offsets.
pub(crate) const NONE: u32 = u32::MAX;

/// One register, compiled: `shadow <= reset ? reset_value : enable ? next : q`.
#[derive(Clone, Debug, Hash, Serialize, Deserialize)]
pub(crate) struct RegSample {
    /// Storage of the register's output.
    pub q: u32,
    /// Storage of its next value.
    pub next: u32,
    /// Storage of the enable bit, or `NONE`.
    pub enable: u32,
    /// Storage of the reset bit, or `NONE` (no reset value, or no reset).
    pub reset: u32,
    /// Reset bit value that asserts reset (1 active-high, 0 active-low).
    pub reset_level: u64,
    /// Storage of the reset value (a hidden constant).
    pub reset_value: u32,
    /// Offset in the shadow buffer.
    pub shadow: u32,
    /// Width in words.
    pub words: u32,
}

/// Where a memory's words live in memory storage.
#[derive(Clone, Debug, Hash, Serialize, Deserialize)]
pub(crate) struct MemLayout {
    /// Hierarchical name.
    pub name: String,
    /// First storage word of word 0.
    pub base: usize,
    /// Number of memory words.
    pub depth: u32,
    /// Storage words per memory word.
    pub words: u32,
    /// Bits per memory word.
    pub width: u32,
}

/// A synchronous read port, compiled.
#[derive(Clone, Debug, Hash, Serialize, Deserialize)]
pub(crate) struct ReadPort {
    /// Index into the memory layouts.
    pub mem: u32,
    /// Storage of the address.
    pub addr: u32,
    /// Words of the address.
    pub addr_words: u32,
    /// Storage of the read enable, or `NONE`.
    pub enable: u32,
    /// Storage of the read data (the port's output net).
    pub data: u32,
    /// Offset in the shadow buffer.
    pub shadow: u32,
}

/// A write port, compiled.
#[derive(Clone, Debug, Hash, Serialize, Deserialize)]
pub(crate) struct WritePort {
    /// Index into the memory layouts.
    pub mem: u32,
    /// Storage of the address.
    pub addr: u32,
    /// Words of the address.
    pub addr_words: u32,
    /// Storage of the write enable.
    pub enable: u32,
    /// Storage of the data.
    pub data: u32,
}

/// A run of registers committed by a copy, without the shadow buffer:
/// `vals[dst..dst + len] = reset ? vals[reset_value..] : enable ? next : q`, where
/// `next` is `vals[src..]`, or `vals[src]` for every register of a broadcast run
/// (single-word registers loading the same word). Every word it reads is
/// unchanged by the commits that precede it at an edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub(crate) struct DirectCopy {
    /// First register word.
    pub dst: u32,
    /// First next-value word.
    pub src: u32,
    /// Number of words.
    pub len: u32,
    /// True if every register loads the one word at `src`.
    pub broadcast: bool,
    /// Storage of the shared enable bit, or `NONE`.
    pub enable: u32,
    /// Storage of the shared reset bit, or `NONE`.
    pub reset: u32,
    /// Reset bit value that asserts reset.
    pub reset_level: u64,
    /// First word of the reset values (`NONE` without reset).
    pub reset_value: u32,
}

impl DirectCopy {
    /// True if `next` continues `self` (same conditions, every span consecutive,
    /// or the same source word for single-word registers).
    fn continued_by(&self, next: &DirectCopy) -> bool {
        let same_conditions = self.dst + self.len == next.dst
            && self.enable == next.enable
            && self.reset == next.reset
            && self.reset_level == next.reset_level
            && (self.reset == NONE || self.reset_value + self.len == next.reset_value);
        let consecutive = !self.broadcast && !next.broadcast && self.src + self.len == next.src;
        let same_word = (self.broadcast || self.len == 1)
            && next.len == 1
            && !next.broadcast
            && self.src == next.src;
        same_conditions && (consecutive || same_word)
    }
}

/// Merges consecutive copies that continue one another into single runs.
pub(crate) fn merge_copies(copies: &[DirectCopy]) -> Vec<DirectCopy> {
    let mut out: Vec<DirectCopy> = Vec::with_capacity(copies.len());
    for c in copies {
        match out.last_mut() {
            Some(last) if last.continued_by(c) => {
                if last.src == c.src {
                    last.broadcast = true;
                }
                last.len += c.len;
            }
            _ => out.push(*c),
        }
    }
    out
}

/// The state elements clocked by one top-level domain.
#[derive(Clone, Debug, Default, Hash, Serialize, Deserialize)]
pub(crate) struct DomainState {
    /// Registers sampled into the shadow buffer.
    pub regs: Vec<RegSample>,
    /// Registers committed directly from their next values, in order.
    pub copies: Vec<DirectCopy>,
    /// Synchronous read ports.
    pub reads: Vec<ReadPort>,
    /// Write ports.
    pub writes: Vec<WritePort>,
}

/// The clock edge of the domains `fired` on the interpreter: every register and
/// read port of theirs samples, then their memory writes apply, then everything
/// commits (see the module docs). The compiled engine has this as native code.
pub(crate) fn edge(
    (domains, mems): (&[DomainState], &[MemLayout]),
    fired: Fired,
    vals: &mut [u64],
    mem: &mut [u64],
    shadow: &mut [u64],
) {
    for d in fired.iter() {
        sample_regs(&domains[d], vals, shadow);
    }
    for d in fired.iter() {
        sample_reads(&domains[d], mems, vals, mem, shadow);
    }
    for d in fired.iter() {
        apply_writes(&domains[d], mems, vals, mem);
    }
    for d in fired.iter() {
        commit_copies(&domains[d].copies, vals);
        commit_shadow(&domains[d], mems, shadow, vals);
    }
}

/// An address held at `off`, saturated to `u64::MAX` if wider than 64 bits.
#[inline]
fn address(vals: &[u64], off: u32, words: u32) -> u64 {
    let w = &vals[off as usize..(off + words) as usize];
    crate::wide::read_amount(w)
}

#[inline]
fn copy(dst: &mut [u64], d: u32, src: &[u64], s: u32, words: u32) {
    let (d, s, n) = (d as usize, s as usize, words as usize);
    if n == 1 {
        dst[d] = src[s];
    } else {
        dst[d..d + n].copy_from_slice(&src[s..s + n]);
    }
}

/// Every word a clock edge of `dom` reads from storage: each register's output,
/// next value, enable, reset and reset value (shadowed or copied directly), and
/// each memory port's address, enable and data.
pub(crate) fn edge_reads(dom: &DomainState, mems: &[MemLayout]) -> Vec<Span> {
    let one = |off: u32| Span { off, words: 1 };
    let mut out = Vec::new();
    for r in &dom.regs {
        for off in [r.q, r.next, r.reset_value] {
            out.push(Span {
                off,
                words: r.words,
            });
        }
        out.extend([one(r.enable), one(r.reset)]);
    }
    for c in &dom.copies {
        let next = if c.broadcast { 1 } else { c.len };
        out.push(Span {
            off: c.src,
            words: next,
        });
        for off in [c.dst, c.reset_value] {
            out.push(Span { off, words: c.len });
        }
        out.extend([one(c.enable), one(c.reset)]);
    }
    let reads = (dom.reads.iter()).map(|p| (p.mem, p.addr, p.addr_words, p.enable, p.data));
    let writes = (dom.writes.iter()).map(|p| (p.mem, p.addr, p.addr_words, p.enable, p.data));
    for (mem, addr, addr_words, enable, data) in reads.chain(writes) {
        let data_words = mems[mem as usize].words;
        out.extend([
            Span {
                off: addr,
                words: addr_words,
            },
            one(enable),
            Span {
                off: data,
                words: data_words,
            },
        ]);
    }
    out.retain(|s| s.off != NONE);
    out
}

/// First phase for registers: every register of `dom` computes its next value.
#[inline]
pub(crate) fn sample_regs(dom: &DomainState, vals: &[u64], shadow: &mut [u64]) {
    for r in &dom.regs {
        let src = if r.reset != NONE && vals[r.reset as usize] & 1 == r.reset_level {
            r.reset_value
        } else if r.enable == NONE || vals[r.enable as usize] & 1 == 1 {
            r.next
        } else {
            r.q
        };
        copy(shadow, r.shadow, vals, src, r.words);
    }
}

/// First phase for read ports: every enabled port of `dom` reads `mem[addr]`
/// (0 past the depth); a disabled port keeps its data.
#[inline]
pub(crate) fn sample_reads(
    dom: &DomainState,
    mems: &[MemLayout],
    vals: &[u64],
    mem: &[u64],
    shadow: &mut [u64],
) {
    for p in &dom.reads {
        let m = &mems[p.mem as usize];
        let n = m.words as usize;
        let dst = p.shadow as usize;
        if p.enable != NONE && vals[p.enable as usize] & 1 == 0 {
            copy(shadow, p.shadow, vals, p.data, m.words);
            continue;
        }
        let addr = address(vals, p.addr, p.addr_words);
        if addr < m.depth as u64 {
            let at = m.base + addr as usize * n;
            shadow[dst..dst + n].copy_from_slice(&mem[at..at + n]);
        } else {
            shadow[dst..dst + n].fill(0);
        }
    }
}

/// Applies the enabled writes of `dom` (addresses past the depth are ignored).
#[inline]
pub(crate) fn apply_writes(dom: &DomainState, mems: &[MemLayout], vals: &[u64], mem: &mut [u64]) {
    for w in &dom.writes {
        if vals[w.enable as usize] & 1 == 0 {
            continue;
        }
        let m = &mems[w.mem as usize];
        let addr = address(vals, w.addr, w.addr_words);
        if addr < m.depth as u64 {
            let n = m.words as usize;
            let at = m.base + addr as usize * n;
            let d = w.data as usize;
            mem[at..at + n].copy_from_slice(&vals[d..d + n]);
        }
    }
}

/// Second phase, first half: the registers of `dom` that commit directly copy
/// their next values (the compiled engine has this as native code).
#[inline]
pub(crate) fn commit_copies(copies: &[DirectCopy], vals: &mut [u64]) {
    for c in copies {
        let enabled = c.enable == NONE || vals[c.enable as usize] & 1 == 1;
        let reset = c.reset != NONE && vals[c.reset as usize] & 1 == c.reset_level;
        let (dst, n) = (c.dst as usize, c.len as usize);
        if c.broadcast && !reset {
            if enabled {
                let v = vals[c.src as usize];
                vals[dst..dst + n].fill(v);
            }
            continue;
        }
        // A disabled register copies onto itself (no data-dependent branch).
        let from = if reset {
            c.reset_value
        } else if enabled {
            c.src
        } else {
            c.dst
        } as usize;
        if n == 1 {
            vals[dst] = vals[from];
        } else {
            vals.copy_within(from..from + n, dst);
        }
    }
}

/// Second phase, second half (after [`commit_copies`]): the sampled values
/// become the shadowed registers' and read ports' outputs.
#[inline]
pub(crate) fn commit_shadow(
    dom: &DomainState,
    mems: &[MemLayout],
    shadow: &[u64],
    vals: &mut [u64],
) {
    for (dst, src, words) in shadow_entries(dom, mems) {
        let (d, s, n) = (dst as usize, src as usize, words as usize);
        vals[d..d + n].copy_from_slice(&shadow[s..s + n]);
    }
}
