//! Fields recomputed where they are read instead of stored. A bit-field move
//! ([`Kind::Field`]: a slice of one word, a copy, a shift by a constant) whose
//! result other partitions read costs its own instructions, a store, and a
//! comparison with the word's old value to wake those partitions; each reader
//! then loads it. When the result is hidden (no port, named net or clock edge
//! reads it) and every reader takes it in hand (code, not a callback or a run),
//! the readers compute it from its source word instead, in two to four
//! instructions, and the move itself is never emitted: Lightning's decoder, for
//! one, splits a register into eight lanes that eight partitions read.
//!
//! A reader of such a field reads its source word: it is woken when that word
//! changed (see [`activity`](super::activity)), and that word is stored for it
//! (see [`unstored`](super::unstored)). The value is the same: the source word is
//! written before the move in every settle (the program is levelized), so it
//! holds the value the move would have read whenever a reader runs. The field's
//! own word in storage goes stale, and nothing reads it.

use super::activity::Readers;
use super::plan::{Inst, Item, Plan};
use super::Source;
use crate::exec::Code;
use crate::fxhash::FxHashMap;
use crate::instr::Kind;

/// The fields the emitted code recomputes, by the word each writes.
#[derive(Debug, Default)]
pub(super) struct Remat(FxHashMap<u32, Inst>);

impl Remat {
    /// The fields of `source` (planned as `plans`, read as `readers` says, before
    /// any field is recomputed) worth recomputing: hidden words written by one
    /// field move, read by another partition, and read only by code that takes
    /// them in hand.
    pub fn new(source: &Source, plans: &[Plan], readers: &Readers) -> Remat {
        const NONE: u8 = 0;
        const ONE: u8 = 1;
        const OTHER: u8 = 2;
        let mut candidate = super::unstored::hidden(source);
        let mut writers = vec![NONE; source.words];
        // Every field move by the word it writes, with its partition's flag.
        let mut fields = FxHashMap::default();
        for plan in plans {
            for s in plan.segments() {
                for item in &plan.items[s.items.clone()] {
                    let in_hand = item.reads_in_hand(&source.code);
                    item.each_word(&source.code, |w, write| {
                        let w = w as usize;
                        if write {
                            writers[w] = if writers[w] == NONE { ONE } else { OTHER };
                        } else if !in_hand {
                            candidate[w] = false;
                        }
                    });
                    if let Some(i) = field(item).filter(|i| i.rec.a != i.rec.d) {
                        fields.insert(i.rec.d, (i, s.flag));
                    }
                }
            }
        }
        let partitions = super::activity::flags(plans) as u32;
        let recomputed = fields.into_iter().filter(|&(w, (_, home))| {
            let i = w as usize;
            let readers = readers.of(w);
            candidate[i]
                && writers[i] == ONE
                && readers.iter().all(|&f| f < partitions)
                && readers.iter().any(|&f| f != home)
        });
        Remat(recomputed.map(|(w, (i, _))| (w, i)).collect())
    }

    /// The field move that word `w` holds, if the code recomputes it.
    pub fn get(&self, w: u32) -> Option<&Inst> {
        self.0.get(&w)
    }

    /// Whether `item` is a field move the code recomputes where it is read (and
    /// therefore does not emit).
    pub fn skips(&self, item: &Item) -> bool {
        field(item).is_some_and(|i| self.0.contains_key(&i.rec.d))
    }

    /// The word a read of `w` reads in effect: `w`, or the source the code
    /// recomputes it from (followed through fields of fields).
    pub fn source(&self, mut w: u32) -> u32 {
        while let Some(i) = self.0.get(&w) {
            w = i.rec.a;
        }
        w
    }

    /// Calls `f(word)` for every word `item` of `code` reads in effect (see
    /// [`source`](Self::source)); a skipped move reads nothing.
    pub fn each_read(&self, code: &Code, item: &Item, mut f: impl FnMut(u32)) {
        if self.skips(item) {
            return;
        }
        item.each_word(code, |w, write| {
            if !write {
                f(self.source(w))
            }
        });
    }
}

/// The record of `item` if it is a field move.
fn field(item: &Item) -> Option<Inst> {
    match item {
        Item::Rec(inst) if inst.kind == Kind::Field => Some(*inst),
        _ => None,
    }
}
