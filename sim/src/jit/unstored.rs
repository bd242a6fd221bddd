//! Words the emitted code keeps in hand without storing them. A result that only
//! later records of its own partition read, through code that takes the value in
//! hand rather than a callback or a load at a run-time index,
//! and that nothing outside the settle code looks at (no port, no named net,
//! nothing a clock edge samples: the simulator lists the other words as
//! [`Source::hidden`](super::Source::hidden)) is read only by records that run in
//! the same pass of its segment, after it, and take the value already in hand.
//! Its store would be read by nobody, so it is left out: one instruction and
//! seven or eight bytes of code fewer per such record.
//!
//! Storage then holds a stale value for such a word. Nothing reads it: the
//! readers take the value in hand, a settle of the segment always runs the
//! writer before them, and the interpreter, which would read storage, never runs
//! after the compiled engine took over.

use super::activity::Readers;
use super::plan::Plan;
use super::remat::Remat;
use super::Source;

/// For every storage word, whether the emitted code may leave it unstored.
#[derive(Debug, Default)]
pub(super) struct Unstored(Vec<bool>);

impl Unstored {
    /// The words of `source` (planned as `plans`, read as `readers` says) that
    /// are hidden, written by code (not a callback) in one partition and read
    /// only there, by code that takes them in hand (a field the code recomputes,
    /// see [`Remat`], counts as a read of its source).
    pub fn new(source: &Source, plans: &[Plan], readers: &Readers, remat: &Remat) -> Unstored {
        const NONE: u32 = u32::MAX;
        const MANY: u32 = u32::MAX - 1;
        let mut candidate = hidden(source);
        let mut writer = vec![NONE; source.words];
        for plan in plans {
            for s in plan.segments() {
                for item in &plan.items[s.items.clone()] {
                    if remat.skips(item) {
                        continue;
                    }
                    let inline = item.inline(&source.code);
                    let in_hand = item.reads_in_hand(&source.code);
                    item.each_word(&source.code, |w, write| {
                        let w = w as usize;
                        if write {
                            writer[w] = match writer[w] {
                                NONE if inline => s.flag,
                                _ => MANY,
                            };
                        } else if !in_hand {
                            candidate[w] = false;
                        }
                    });
                }
            }
        }
        let unstored = (candidate.iter().zip(&writer).enumerate())
            .map(|(w, (&c, &by))| c && by < MANY && readers.of(w as u32).iter().all(|&f| f == by))
            .collect();
        Unstored(unstored)
    }

    /// Whether word `w` may stay unstored.
    pub fn has(&self, w: u32) -> bool {
        self.0.get(w as usize).copied().unwrap_or(false)
    }
}

/// For every storage word of `source`, whether it is [`Source::hidden`].
pub(super) fn hidden(source: &Source) -> Vec<bool> {
    let mut hidden = vec![false; source.words];
    for s in &source.hidden {
        let words = s.off as usize..s.off.saturating_add(s.words) as usize;
        (hidden.get_mut(words).into_iter().flatten()).for_each(|c| *c = true);
    }
    hidden
}
