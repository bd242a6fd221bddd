//! Activity: the compiled engine runs a partition (see
//! [`partition`](super::partition)) only when a word it reads changed since it
//! last ran, as ESSENT does. Every partition has a flag: a *dirty byte*, set
//! while it is nonzero. A partition that runs clears its own flag; a word it
//! writes that differs from the word's old value sets the flags of the
//! partitions that read it (later ones: they run in dependency order): the
//! differences (old XOR new, nonzero exactly when the word changed) of the words
//! with the same readers are or-ed together, turned into one byte, 1 if any
//! changed, and or-ed into their dirty bytes. A register commit that changes a
//! register sets the flags of its readers the same way, and a test bench's write
//! that changes an input (a port, a clock, a reset) sets its readers' to 1. A
//! byte a flag rather than a word keeps the flags of a design in a few cache
//! lines (PANAMA SUME's 729 in 744 bytes rather than 5,832) and tests eight
//! of them with one load (see the performance log).
//!
//! A partition that a profile found running in most settles runs at every settle
//! instead ([`Always`], see [`tune`](super::tune)): its flag is never tested or
//! cleared, so no change sets it, and its writers compare a word with its old
//! value only when some other reader is tested.
//!
//! Direct register copies have flags too, after the partitions' (flag
//! `partitions + k` for copy `k`, counting through the domains in order): a copy
//! whose next value, enable and reset are unchanged since it last ran would leave
//! its register as it is, so the commit skips it. (Its reset value is a constant;
//! the register itself changes only by its own commit.) A copy that a profile
//! found running at most edges runs at every edge instead, as such a partition
//! does.

use super::plan::Plan;
use super::remat::Remat;
use super::tune::Always;
use crate::exec::Code;
use crate::instr::Span;
use crate::state::{DomainState, NONE};

/// For every storage word, the partitions and register copies that read it (as
/// flag indices: sorted, each once): a [`Fanout`] with one entry per word.
#[derive(Debug, Default)]
pub(super) struct Readers(Fanout);

impl Readers {
    /// The readers of every word of the `plans` of `code` and of `copies` (every
    /// domain's, in order, their flags after the plans') over `words` storage
    /// words (words outside storage, which the plan and the commit check reject,
    /// are left out).
    pub fn new(
        code: &Code,
        plans: &[Plan],
        domains: &[DomainState],
        words: usize,
        remat: &Remat,
    ) -> Readers {
        let mut last = vec![u32::MAX; words];
        let mut count = vec![0u32; words + 1];
        let visit = |f: &mut dyn FnMut(u32, u32)| {
            each_read(code, plans, remat, &mut *f);
            each_copy_read(flags(plans), domains, f);
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
        let mut flags = vec![0; count[words] as usize];
        last.fill(u32::MAX);
        visit(&mut |s, w| {
            if let Some(l) = last.get_mut(w as usize).filter(|l| **l != s) {
                *l = s;
                flags[next[w as usize] as usize] = s;
                next[w as usize] += 1;
            }
        });
        Readers(Fanout {
            starts: count,
            flags,
        })
    }

    /// The flags of the partitions and copies that read word `w`.
    pub fn of(&self, w: u32) -> &[u32] {
        self.0.get(w as usize)
    }

    /// The flags that read a word of `span`, sorted, each once.
    pub fn of_span(&self, span: Span) -> Vec<u32> {
        let mut out: Vec<u32> = (span.off..span.off.saturating_add(span.words))
            .flat_map(|w| self.of(w).iter().copied())
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// The number of flags of the partitions of `plans`.
pub(super) fn flags(plans: &[Plan]) -> usize {
    plans.iter().map(|p| p.flags() as usize).sum()
}

/// Calls `f(flag, word)` for every word every partition of `plans` reads (a field
/// the code recomputes as its source word, see [`Remat`]).
fn each_read(code: &Code, plans: &[Plan], remat: &Remat, f: &mut dyn FnMut(u32, u32)) {
    for plan in plans {
        for s in plan.segments() {
            for item in &plan.items[s.items.clone()] {
                remat.each_read(code, item, |w| f(s.flag, w));
            }
        }
    }
}

/// Calls `f(flag, word)` for every word a copy of the `domains` reads (next
/// value, enable, reset), its flag counted from `first`.
fn each_copy_read(first: usize, domains: &[DomainState], mut f: impl FnMut(u32, u32)) {
    let copies = domains.iter().flat_map(|d| &d.copies);
    for (k, c) in copies.enumerate() {
        let flag = (first + k) as u32;
        let next = if c.broadcast { 1 } else { c.len };
        (c.src..c.src.saturating_add(next)).for_each(|w| f(flag, w));
        [c.enable, c.reset]
            .into_iter()
            .filter(|&w| w != NONE)
            .for_each(|w| f(flag, w));
    }
}

/// Lists of flags to set, one per entry (a register commit, a shadowed register,
/// an input, a word).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Fanout {
    /// `flags[starts[i]..starts[i + 1]]` are entry `i`'s.
    starts: Vec<u32>,
    flags: Vec<u32>,
}

impl Fanout {
    /// The readers of each of `spans` that a change wakes (all but the
    /// partitions that run untested, see [`Always`]), in order.
    pub fn of_spans(
        readers: &Readers,
        always: &Always,
        spans: impl IntoIterator<Item = Span>,
    ) -> Fanout {
        let mut f = Fanout {
            starts: vec![0],
            flags: Vec::new(),
        };
        for s in spans {
            let woken = readers.of_span(s).into_iter().filter(|&r| always.wakes(r));
            f.flags.extend(woken);
            f.starts.push(f.flags.len() as u32);
        }
        f
    }

    /// The fanout of the entries' lists `flags[starts[i]..starts[i + 1]]`, or
    /// `None` unless `starts` begins at 0, never decreases and ends at the length
    /// of `flags`.
    pub fn from_parts(starts: Vec<u32>, flags: Vec<u32>) -> Option<Fanout> {
        let fits = starts.first() == Some(&0)
            && starts.windows(2).all(|w| w[0] <= w[1])
            && starts.last().map(|&e| e as usize) == Some(flags.len());
        fits.then_some(Fanout { starts, flags })
    }

    /// Where each entry's list starts (one more, its end), and the lists.
    pub fn parts(&self) -> (&[u32], &[u32]) {
        (&self.starts, &self.flags)
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    /// The largest flag any entry sets.
    pub fn max_flag(&self) -> Option<u32> {
        self.flags.iter().copied().max()
    }

    /// The flags entry `i` sets.
    #[inline]
    pub fn get(&self, i: usize) -> &[u32] {
        match self.starts.get(i..i + 2) {
            Some(&[a, b]) => &self.flags[a as usize..b as usize],
            _ => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demand::Part;

    /// Two steps: `w2 = w0 | w1`, then `w3 = w2 | w0`.
    fn chain() -> Code {
        super::super::tests::ors(&[(2, 0, 1), (3, 2, 0)], 1)
    }

    #[test]
    fn readers_are_partitions_and_copies() {
        let code = chain();
        let plans = [super::super::plan::plan(&code, 5, Part::Rest, None).expect("plans")];
        assert_eq!(flags(&plans), 1, "the chain is one partition");
        // A register copy `w4 <= w3`.
        let copy = super::super::tests::plain_copy(4, 3, 1);
        let domain = DomainState {
            copies: vec![copy],
            ..DomainState::default()
        };
        let r = Readers::new(&code, &plans, &[domain], 5, &Remat::default());
        assert_eq!((r.of(0), r.of(1), r.of(2)), (&[0][..], &[0][..], &[0][..]));
        assert_eq!(r.of(3), [1], "the copy's flag follows the partitions'");
        assert!(r.of(4).is_empty() && r.of(99).is_empty());
        assert_eq!(r.of_span(Span { off: 0, words: 4 }), [0, 1]);
        let f = Fanout::of_spans(
            &r,
            &Always::default(),
            [Span { off: 2, words: 2 }, Span { off: 4, words: 1 }],
        );
        assert_eq!(
            (f.get(0), f.get(1), f.get(2)),
            (&[0, 1][..], &[][..], &[][..])
        );
        let untested = Always::from_flags(&[0]);
        let f = Fanout::of_spans(&r, &untested, [Span { off: 2, words: 2 }]);
        assert_eq!(f.get(0), [1], "a partition that always runs is not woken");
    }
}
