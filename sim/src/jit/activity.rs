//! Activity: the compiled engine runs a step only when a word it reads changed
//! since the step last ran (in the spirit of ESSENT's partitions with dirty flags).
//! Every step has a flag byte. A step that runs clears its own flag; a word it
//! writes that differs from the word's old value sets the flags of the steps that
//! read it (later steps: the program is in dependency order). A register commit
//! that changes a register sets the flags of its readers, and an input word (a
//! port, a clock, a reset) wakes its readers through the dirty sources of the
//! settle, as before. On PANAMA at line rate this leaves about a third of the
//! records to run per cycle (measured: 1,208 of 4,096 records lie in steps with a
//! changed operand).
//!
//! Direct register copies have flags too, after the steps' (flag `steps + k` for
//! copy `k`, counting through the domains in order): a copy whose next value,
//! enable and reset are unchanged since it last ran would leave its register as
//! it is, so the commit skips it. (Its reset value is a constant; the register
//! itself changes only by its own commit.)

use crate::demand::each_word;
use crate::exec::{each_record, Code};
use crate::instr::{Kind, Rec, Span};
use crate::state::{DirectCopy, NONE};

/// For every storage word, the steps and register copies that read it (as flag
/// indices: sorted, each once).
#[derive(Debug, Default)]
pub(super) struct Readers {
    /// `steps[starts[w]..starts[w + 1]]` read word `w`.
    starts: Vec<u32>,
    steps: Vec<u32>,
}

impl Readers {
    /// The readers of every word of `code` and `copies` (every domain's, in order)
    /// over `words` storage words (words outside storage, which the plan and the
    /// commit check reject, are left out).
    pub fn new(code: &Code, copies: &[Vec<DirectCopy>], words: usize) -> Readers {
        let mut last = vec![u32::MAX; words];
        let mut count = vec![0u32; words + 1];
        let visit = |f: &mut dyn FnMut(u32, u32)| {
            each_read(code, &mut *f);
            each_copy_read(code.steps.len(), copies, f);
        };
        visit(&mut |s, w| {
            if let Some(l) = last.get_mut(w as usize).filter(|l| **l != s) {
                *l = s;
                count[w as usize + 1] += 1;
            }
        });
        for w in 0..words {
            count[w + 1] += count[w];
        }
        let mut next = count.clone();
        let mut steps = vec![0; count[words] as usize];
        last.fill(u32::MAX);
        visit(&mut |s, w| {
            if let Some(l) = last.get_mut(w as usize).filter(|l| **l != s) {
                *l = s;
                steps[next[w as usize] as usize] = s;
                next[w as usize] += 1;
            }
        });
        Readers {
            starts: count,
            steps,
        }
    }

    /// The steps that read word `w`.
    pub fn of(&self, w: u32) -> &[u32] {
        let w = w as usize;
        match (self.starts.get(w), self.starts.get(w + 1)) {
            (Some(&a), Some(&b)) => &self.steps[a as usize..b as usize],
            _ => &[],
        }
    }

    /// The steps other than `except` that read a word of `span`, sorted, each once.
    pub fn of_span(&self, span: Span, except: Option<u32>) -> Vec<u32> {
        let mut out: Vec<u32> = (span.off..span.off.saturating_add(span.words))
            .flat_map(|w| self.of(w).iter().copied())
            .filter(|&s| Some(s) != except)
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// Calls `f(step, word)` for every word every step of `code` reads.
fn each_read(code: &Code, f: &mut dyn FnMut(u32, u32)) {
    for (i, s) in code.steps.iter().enumerate() {
        each_record(code, s, |kind, r, _| {
            each_word(code, kind, &r, |w, write| {
                if !write {
                    f(i as u32, w)
                }
            })
        });
    }
}

/// Calls `f(flag, word)` for every word a copy of `copies` reads (next value,
/// enable, reset), its flag counted from `steps`.
fn each_copy_read(steps: usize, copies: &[Vec<DirectCopy>], mut f: impl FnMut(u32, u32)) {
    for (k, c) in copies.iter().flatten().enumerate() {
        let flag = (steps + k) as u32;
        let next = if c.broadcast { 1 } else { c.len };
        (c.src..c.src.saturating_add(next)).for_each(|w| f(flag, w));
        [c.enable, c.reset]
            .into_iter()
            .filter(|&w| w != NONE)
            .for_each(|w| f(flag, w));
    }
}

/// The words record `r` of `kind` writes.
pub(super) fn writes(code: &Code, kind: Kind, r: &Rec, mut f: impl FnMut(u32)) {
    each_word(code, kind, r, |w, write| {
        if write {
            f(w)
        }
    });
}

/// For every step of `code` and then every copy of `copies`, the dirty sources
/// that wake it directly: the bits of the input words (`inputs`: spans and the
/// sources their changes set) it reads. Everything else it reads wakes it through
/// its flag.
pub(super) fn direct_sources(
    code: &Code,
    copies: &[Vec<DirectCopy>],
    words: usize,
    inputs: &[(Span, u64)],
) -> Vec<u64> {
    let mut bits = vec![0u64; words];
    for &(span, b) in inputs {
        for w in span.off..span.off.saturating_add(span.words) {
            if let Some(x) = bits.get_mut(w as usize) {
                *x |= b;
            }
        }
    }
    let copies_count: usize = copies.iter().map(Vec::len).sum();
    let mut direct = vec![0u64; code.steps.len() + copies_count];
    let mut wake =
        |s: u32, w: u32| direct[s as usize] |= bits.get(w as usize).copied().unwrap_or(0);
    each_read(code, &mut wake);
    each_copy_read(code.steps.len(), copies, wake);
    direct
}

/// Lists of steps to wake, one per entry (a register commit, a shadowed register).
#[derive(Debug, Default)]
pub(super) struct Fanout {
    starts: Vec<u32>,
    steps: Vec<u32>,
}

impl Fanout {
    /// The readers of each of `spans`, in order.
    pub fn of_spans(readers: &Readers, spans: impl IntoIterator<Item = Span>) -> Fanout {
        let mut f = Fanout {
            starts: vec![0],
            steps: Vec::new(),
        };
        for s in spans {
            f.steps.extend(readers.of_span(s, None));
            f.starts.push(f.steps.len() as u32);
        }
        f
    }

    /// The steps entry `i` wakes.
    pub fn get(&self, i: usize) -> &[u32] {
        match (self.starts.get(i), self.starts.get(i + 1)) {
            (Some(&a), Some(&b)) => &self.steps[a as usize..b as usize],
            _ => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::instr::{Mode, Step, Tag};

    /// Two steps: `w2 = w0 | w1`, then `w3 = w2 | w0`.
    fn chain() -> Code {
        let or = |d, a, b| Rec {
            d,
            a,
            b,
            ..Rec::default()
        };
        let step = |start| Step {
            kind: Kind::Or,
            mode: Mode::Gather,
            start,
            n: 1,
            mask: 1,
        };
        Code::new(
            (
                vec![step(0), step(1)],
                vec![or(2, 0, 1), or(3, 2, 0)],
                vec![
                    Tag {
                        kind: Kind::Or,
                        mask: 1
                    };
                    2
                ],
            ),
            Vec::new(),
            Vec::new(),
        )
    }

    #[test]
    fn readers_list_each_reading_step_once() {
        let r = Readers::new(&chain(), &[], 4);
        assert_eq!(r.of(0), [0, 1]);
        assert_eq!(r.of(1), [0]);
        assert_eq!(r.of(2), [1]);
        assert!(r.of(3).is_empty());
        assert!(r.of(99).is_empty());
        assert_eq!(r.of_span(Span { off: 0, words: 3 }, Some(1)), [0]);
        let f = Fanout::of_spans(&r, [Span { off: 2, words: 1 }, Span { off: 3, words: 1 }]);
        assert_eq!((f.get(0), f.get(1), f.get(2)), (&[1][..], &[][..], &[][..]));
    }

    #[test]
    fn only_input_words_wake_steps_directly() {
        let inputs = [(Span { off: 1, words: 1 }, 0b100)];
        assert_eq!(direct_sources(&chain(), &[], 4, &inputs), [0b100, 0]);
    }
}
