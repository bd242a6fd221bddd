//! Tuning from a profile: the first build of the compiled engine tests every
//! partition's flag (see [`activity`](super::activity)) and counts how often each
//! partition runs. After [`TUNE_AFTER`] settles of the rest of the design (a
//! simulator's default, see
//! [`Simulator::set_tune_after`](crate::Simulator::set_tune_after)), the engine
//! is built again with the partitions that ran in at least half of their
//! part's settles marked [`Always`]: they run at every settle, inline, without a
//! test, a flag to clear, or a wake or change comparison from their writers. The
//! others keep their tests.
//!
//! Running a partition whose inputs did not change computes the values it last
//! computed, so the tuned engine is exact whatever the profile: the profile only
//! moves cost. Activity pays for a partition that sleeps in most cycles (341 of
//! PANAMA SUME's 460 run in under a tenth of them); for one that runs in most
//! cycles, the test, the out-of-line jump and its readers' change comparisons cost
//! more code than the runs it skips, and the code a cycle fetches is what the
//! engine waits for (Lightning with one core). Counted there, a threshold of ½
//! beat ⅖ and ⅗.

use super::plan::Plan;
use crate::demand::Part;

/// Settles of the rest of the design the first build counts before the engine is
/// built again, tuned, unless a simulator is told otherwise: about as many
/// cycles.
pub const TUNE_AFTER: u64 = 4096;

/// The partitions (by flag) that run at every settle without a test; every flag
/// past the set's length, a copy's included, is tested as usual.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct Always(Vec<bool>);

impl Always {
    /// Whether partition `flag` runs untested.
    #[inline]
    pub fn has(&self, flag: u32) -> bool {
        self.0.get(flag as usize).copied().unwrap_or(false)
    }

    /// Whether a change of a word partition or copy `flag` reads must set its
    /// flag: it is tested.
    #[inline]
    pub fn wakes(&self, flag: u32) -> bool {
        !self.has(flag)
    }

    /// The set of the partitions `flags`.
    #[cfg(test)]
    pub fn from_flags(flags: &[u32]) -> Always {
        let len = flags.iter().map(|&f| f as usize + 1).max().unwrap_or(0);
        let mut set = vec![false; len];
        flags.iter().for_each(|&f| set[f as usize] = true);
        Always(set)
    }

    /// The number of partitions that run untested.
    pub fn len(&self) -> usize {
        self.0.iter().filter(|&&a| a).count()
    }
}

/// How a build of the compiled engine treats its partitions.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Tuning {
    /// Every partition tested, and every run counted for a tuned build.
    Profiling,
    /// The partitions of the set run untested; nothing is counted.
    Tuned(Always),
}

impl Tuning {
    /// The partitions that run untested (none while profiling).
    pub fn always(&self) -> &Always {
        static NONE: Always = Always(Vec::new());
        match self {
            Tuning::Profiling => &NONE,
            Tuning::Tuned(a) => a,
        }
    }
}

/// What a profiling engine has counted: its settles per part. The runs of each
/// partition are counted by the emitted code, in the words after the flags.
#[derive(Clone, Debug)]
pub(super) struct Profile {
    /// Settles per [`Part`].
    settles: [u64; 2],
    /// The flags of the output part's partitions: `0..outputs` (the rest's follow).
    outputs: u32,
}

impl Profile {
    /// Nothing counted yet, for the partitions of `plans` (the output part's, then
    /// the rest's).
    pub fn new(plans: &[Plan; 2]) -> Profile {
        Profile {
            settles: [0; 2],
            outputs: plans[0].flags(),
        }
    }

    /// Counts a settle of `part`.
    #[inline]
    pub fn settled(&mut self, part: Part) {
        self.settles[part as usize] += 1;
    }

    /// Settles of the rest of the design counted.
    #[inline]
    pub fn rest_settles(&self) -> u64 {
        self.settles[Part::Rest as usize]
    }

    /// The partitions that ran in at least half of their part's settles, given
    /// each partition's runs (by flag).
    pub fn always(&self, runs: &[u64]) -> Always {
        Always(
            runs.iter()
                .enumerate()
                .map(|(flag, &n)| {
                    let part = if (flag as u32) < self.outputs {
                        Part::Outputs
                    } else {
                        Part::Rest
                    };
                    let settles = self.settles[part as usize];
                    settles > 0 && 2 * n >= settles
                })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partition_is_always_run_when_it_ran_in_half_of_its_parts_settles() {
        let profile = Profile {
            settles: [10, 4],
            outputs: 3,
        };
        // Output partitions 0..3 against 10 settles, the rest against 4.
        let always = profile.always(&[5, 4, 10, 2, 1, 0, 4]);
        let got: Vec<bool> = (0..8).map(|f| always.has(f)).collect();
        assert_eq!(
            got,
            [true, false, true, true, false, false, true, false],
            "5/10, 4/10, 10/10 | 2/4, 1/4, 0/4, 4/4 | a flag past the profile"
        );
        assert_eq!(always.len(), 4);
        assert!(always.wakes(1) && !always.wakes(0) && always.wakes(99));
        let none = Profile {
            settles: [0, 0],
            outputs: 1,
        };
        assert_eq!(
            none.always(&[0, 0]).len(),
            0,
            "nothing settled, nothing hot"
        );
    }
}
