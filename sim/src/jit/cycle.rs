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
        self.check_edge_storage(vals, mem, shadow);
        assert!(
            self.profile.is_none(),
            "a one-call cycle on a profiling engine"
        );
        for part in Part::BOTH {
            if dirty[part as usize] & masks[part as usize] != 0 {
                self.settle(vals, dirty[part as usize], part);
            }
        }
        for group in [EdgeGroup::Sample, EdgeGroup::Write, EdgeGroup::Commit] {
            if self.edge_work[group as usize].contains(0) {
                self.edge_function(group, 0, vals, mem, shadow);
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
}
