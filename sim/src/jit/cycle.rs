//! One cycle of a design with one clock domain in one call on the engine: the
//! settle before the edge, the edge, the clock's rise and the settle of the
//! outputs after it, which the simulator otherwise makes in five calls each with
//! its own checks, and the test bench's first port read of the cycle in a sixth.
//! Small designs spend much of a cycle in those calls.

use super::{Compiled, EdgeGroup};
use crate::demand::Part;

/// The clock of a design with one clock domain, as its cycle needs it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct OneClock {
    /// The clock port's storage word.
    pub word: usize,
    /// The clock's index among the engine's inputs (see [`Compiled::input_changed`]).
    pub input: usize,
    /// The sources the edge changes: the domain's registers and clock.
    pub cone: u64,
}

impl Compiled {
    /// One cycle of a design with one clock domain, on an engine that does not
    /// profile. Settles each part `p` some of whose sources changed (`dirty[p]`
    /// meets `masks[p]`, the sources its steps read), as
    /// [`run`](Self::run) would; runs domain 0's edge, as [`edge`](Self::edge)
    /// would; raises the clock (waking its readers when it was low, before the
    /// first rise); then settles the outputs again if the edge changed a source
    /// of theirs, so that the test bench's reads after the step find them settled,
    /// as Verilator's evaluation after an edge leaves its model. The outputs are
    /// settled once a cycle either way (here, or at the first read or the next
    /// step's settle); only a test bench that sets an input they depend on after
    /// a step, and reads none before the next, has them settle twice (the second
    /// time their partitions whose words changed, and the untested ones).
    ///
    /// Returns the sources still dirty: the edge's, for the rest of the design.
    #[inline]
    pub fn one_clock_cycle(
        &mut self,
        vals: &mut [u64],
        (mem, shadow): (&mut [u64], &mut [u64]),
        dirty: [u64; 2],
        masks: [u64; 2],
        clock: OneClock,
    ) -> u64 {
        assert_eq!(vals.len(), self.words, "storage of the compiled program");
        assert_eq!(
            (shadow.len(), mem.len()),
            self.edge_words,
            "shadow and memory words of the compiled program"
        );
        assert!(
            self.profile.is_none(),
            "a one-call cycle on a profiling engine"
        );
        for part in Part::BOTH {
            if dirty[part as usize] & masks[part as usize] != 0 {
                self.settle(vals, dirty[part as usize], part);
            }
        }
        let args = (vals.as_mut_ptr(), mem.as_mut_ptr(), shadow.as_mut_ptr());
        for group in [EdgeGroup::Sample, EdgeGroup::Write, EdgeGroup::Commit] {
            if self.edge_work[group as usize].contains(0) {
                let f = self.executable.edge[group as usize][0];
                // SAFETY: as for `edge`: storage, memory and shadow buffer from
                // live slices of the lengths asserted above, the flags from
                // `&mut self`, untouched until the call returns.
                unsafe { f(args.0, args.1, args.2, self.flags.as_mut_ptr()) };
            }
        }
        if std::mem::replace(&mut vals[clock.word], 1) != 1 {
            self.input_changed(clock.input);
        }
        if clock.cone & masks[Part::Outputs as usize] != 0 {
            self.settle(vals, clock.cone, Part::Outputs);
        }
        clock.cone
    }

    /// The functions of `part` on `vals` after the sources in `dirty` changed:
    /// [`run`](Self::run) without its checks, which its callers made.
    #[inline(always)]
    fn settle(&mut self, vals: &mut [u64], dirty: u64, part: Part) {
        let (base, len) = (vals.as_mut_ptr(), vals.len() as u64);
        for f in &self.executable.settle[part as usize] {
            // SAFETY: as for `run`: `base` and `len` from `vals`, whose length
            // the caller checked against the program's, the flags from `&mut
            // self`, untouched until the call returns.
            unsafe {
                f(
                    base,
                    len,
                    dirty,
                    &*self.code,
                    self.flags.as_mut_ptr(),
                    self.runs.as_ptr(),
                )
            };
        }
    }
}
