//! Tuning from a profile: the first build of the compiled engine tests every
//! partition's flag and every register copy's (see [`activity`](super::activity))
//! and counts how often each runs. Its profile is a window of [`TUNE_AFTER`]
//! settles of the rest of the design (a simulator's default, see
//! [`Simulator::set_tune_after`](crate::Simulator::set_tune_after)) that opens at
//! cycle `TUNE_AFTER`, or at the engine's first settle if it took over later; what
//! it counted before is dropped. A window at a fixed cycle counts the same
//! settles in every run of the same stimulus, whenever the engine took over (its
//! build or load runs beside the interpreter, for a time the machine decides), so
//! every such run chooses the same tuning and finds it in the code cache: with
//! the window starting where the engine took over, Lightning with one core chose
//! 64 to 67 partitions untested from run to run, each new choice a tuned build
//! that took over thousands of cycles late. Then the engine is built again with
//! the partitions that ran in at least [`UNTESTED_FROM`]
//! (58 %) of their part's settles or of the cycles, whichever are fewer, and
//! the copies that ran in at least that share of their domain's clock edges,
//! marked [`Always`]: they run every time, inline, without a test, a flag to
//! clear, or a wake or change comparison from their writers. The others keep
//! their tests.
//!
//! Running a partition whose inputs did not change computes the values it last
//! computed, and a copy whose next value, enable and reset did not change leaves
//! its register as it is, so the tuned engine is exact whatever the profile: the
//! profile only moves cost. Activity pays for a partition that sleeps in most
//! cycles (327 of PANAMA SUME's 438 run in under a tenth of them); for one that
//! runs in most cycles, the test, the out-of-line jump and its readers' change
//! comparisons cost more code than the runs it skips, and the code a cycle fetches
//! is what the engine waits for (Lightning with one core). Counted there, a
//! threshold of ½ beat ⅖ and ⅗. The threshold now sits above one half, not
//! at it: 23 of the AU250's partitions run in half of the cycles, and a
//! profile's window, depending on the cycle it started at, counted them a few
//! runs over or under one half, so that the tuning changed from run to run;
//! untested, they made its engine about a quarter slower. Its next shares lie
//! between 0.53 and 0.55 (about five in nine, measured over windows of 1,024
//! and 4,096 settles) and from 0.59 up; 58 % keeps clear of both, and 55 %
//! and 60 % ran as fast on the flagships (see the performance log). The
//! output part (the logic the output ports depend on) can settle more often
//! than once a cycle: for the test bench's reads and again after its writes of
//! inputs the outputs depend on, the second settle running only what those
//! writes changed (Lightning's did, about 1.7 times a cycle, until its output
//! part shrank to what its outputs need, see [`demand`](crate::demand)).
//! Against its own settles, a partition of it that runs in most cycles counted
//! under half and kept a test that cost more than it saved; against the cycles
//! (the settles of the rest, once a cycle) it runs untested, and Lightning's
//! executed code a cycle shrank by 3 % with one core and 1.5 % with four
//! (PANAMA's choice was unchanged; see the performance log). Only a copy that
//! compares its words before waking its register's readers may run untested (see
//! [`commit::compares`](super::commit::compares)): one moved by a call counts as
//! changed whenever it runs, and would wake them at every edge.

use super::commit;
use crate::clock::Fired;
use crate::demand::Part;
use crate::state::DomainState;

/// The profile's window, unless a simulator is told otherwise: it opens at this
/// cycle and counts this many settles of the rest of the design, about as many
/// cycles, before the engine is built again, tuned. The flagship runs' tunings
/// from 1,024 settles are as fast as from 4,096 (see the performance log).
pub const TUNE_AFTER: u64 = 1024;

/// The share of its chances (for a partition, its part's settles or the cycles,
/// whichever are fewer; for a register copy, its domain's clock edges) in which a
/// partition or copy must have run during the profile to run untested in the
/// tuned engine: 58 in 100, numerator and denominator.
pub const UNTESTED_FROM: (u64, u64) = (58, 100);

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

    /// The number of partitions and copies that run untested.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.0.iter().filter(|&&a| a).count()
    }

    /// The number of flags below `n` (the partitions', for the count of
    /// partitions) that run untested.
    pub fn below(&self, n: usize) -> usize {
        self.0.iter().take(n).filter(|&&a| a).count()
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

    /// The engine's name in profiles (see [`perf_map`](super::perf_map)).
    pub fn name(&self) -> &'static str {
        match self {
            Tuning::Profiling => "profiling",
            Tuning::Tuned(_) => "tuned",
        }
    }
}

/// What a profiling engine has counted: its settles per part and its clock
/// edges per domain. The runs of each partition and copy are counted by the
/// emitted code, in the words after the flags.
#[derive(Clone, Debug)]
pub(super) struct Profile {
    /// Whether the profile's window is open (see [`open`](Self::open)): the
    /// counts before it are dropped when it opens.
    open: bool,
    /// Settles per [`Part`].
    settles: [u64; 2],
    /// The flags of the output part's partitions: `0..outputs` (the rest's follow).
    outputs: u32,
    /// The flags of all partitions: `0..partitions` (the copies' follow).
    partitions: u32,
    /// Clock edges per domain.
    edges: Vec<u64>,
    /// Per copy (its flag past the partitions'), its domain, or `None` for a copy
    /// that may not run untested.
    copies: Vec<Option<usize>>,
}

impl Profile {
    /// Nothing counted yet, for `partitions` partitions (the first `outputs` of
    /// them the output part's) and the copies of `domains`.
    pub fn new((outputs, partitions): (u32, u32), domains: &[DomainState]) -> Profile {
        let copies = domains
            .iter()
            .enumerate()
            .flat_map(|(d, dom)| {
                dom.copies
                    .iter()
                    .map(move |c| commit::compares(c).then_some(d))
            })
            .collect();
        Profile {
            open: false,
            settles: [0; 2],
            outputs,
            partitions,
            edges: vec![0; domains.len()],
            copies,
        }
    }

    /// Opens the profile's window: drops the settles and edges counted so far
    /// (the caller drops the runs). Counting from a fixed cycle rather than
    /// from the one the engine took over at makes the profile, and so the
    /// tuning, the same in every run of the same stimulus.
    pub fn open(&mut self) {
        self.open = true;
        self.settles = [0; 2];
        self.edges.fill(0);
    }

    /// Whether the window is open.
    #[inline]
    pub fn is_open(&self) -> bool {
        self.open
    }

    /// Counts a settle of `part`.
    #[inline]
    pub fn settled(&mut self, part: Part) {
        self.settles[part as usize] += 1;
    }

    /// Counts a clock edge of the domains `fired`.
    #[inline]
    pub fn edged(&mut self, fired: Fired) {
        for d in fired.iter() {
            if let Some(n) = self.edges.get_mut(d) {
                *n += 1;
            }
        }
    }

    /// Settles of the rest of the design counted.
    #[inline]
    pub fn rest_settles(&self) -> u64 {
        self.settles[Part::Rest as usize]
    }

    /// The partitions that ran in at least [`UNTESTED_FROM`] of their part's
    /// settles or of the cycles (the rest's settles), whichever are fewer, and the
    /// copies that ran in at least that share of their domain's edges, given each
    /// one's runs (by flag).
    pub fn always(&self, runs: &[u64]) -> Always {
        let (num, den) = UNTESTED_FROM;
        Always(
            runs.iter()
                .enumerate()
                .map(|(flag, &n)| {
                    let times = self.chances(flag as u32);
                    times > 0
                        && u128::from(n) * u128::from(den) >= u128::from(times) * u128::from(num)
                })
                .collect(),
        )
    }

    /// How often flag `flag` is judged against: for a partition, its part's
    /// settles or the cycles (the rest's settles, once a cycle), whichever are
    /// fewer, so that the output part's extra settles in a cycle do not count;
    /// its domain's edges for a copy (0 for one that may not run untested).
    fn chances(&self, flag: u32) -> u64 {
        let rest = self.settles[Part::Rest as usize];
        if flag < self.outputs {
            return self.settles[Part::Outputs as usize].min(rest);
        }
        if flag < self.partitions {
            return rest;
        }
        match self.copies.get((flag - self.partitions) as usize) {
            Some(&Some(d)) => self.edges[d],
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A profile of `settles` per part, `outputs` output partitions of
    /// `partitions`, `edges` per domain and `copies` (domain, or `None`).
    fn profile_of(
        settles: [u64; 2],
        (outputs, partitions): (u32, u32),
        edges: Vec<u64>,
        copies: Vec<Option<usize>>,
    ) -> Profile {
        Profile {
            open: true,
            settles,
            outputs,
            partitions,
            edges,
            copies,
        }
    }

    #[test]
    fn a_partition_is_always_run_when_it_ran_in_58_percent_of_its_parts_settles() {
        // The output part settles less often than the rest: its 50 settles count.
        let profile = profile_of([50, 100], (3, 7), Vec::new(), Vec::new());
        // Output partitions 0..3 against 50 settles, the rest against 100.
        let always = profile.always(&[25, 29, 50, 50, 57, 58, 100]);
        let got: Vec<bool> = (0..8).map(|f| always.has(f)).collect();
        assert_eq!(
            got,
            [false, true, true, false, false, true, true, false],
            "25/50, 29/50, 50/50 | 50/100, 57/100, 58/100, 100/100 | a flag past the profile"
        );
        assert_eq!(always.len(), 4);
        assert_eq!(always.below(3), 2);
        assert!(always.wakes(0) && !always.wakes(1) && always.wakes(99));
        let none = profile_of([0, 0], (1, 2), Vec::new(), Vec::new());
        assert_eq!(
            none.always(&[0, 0]).len(),
            0,
            "nothing settled, nothing hot"
        );
    }

    #[test]
    fn half_and_five_ninths_stay_tested_wherever_the_window_starts() {
        // Logic that runs in every other cycle, or in five of every nine,
        // profiled over 1,024 or 4,096 cycles, with a few runs more or fewer as
        // the window catches its pattern: the same choice every time.
        for window in [1024u64, 4096] {
            for (num, den) in [(1, 2), (5, 9)] {
                let share = window * num / den;
                for runs in share - 10..=share + 10 {
                    let profile = profile_of([window, window], (0, 1), Vec::new(), Vec::new());
                    let always = profile.always(&[runs]);
                    assert!(!always.has(0), "{runs} of {window} runs");
                }
            }
        }
    }

    #[test]
    fn an_output_partition_that_settles_more_than_once_a_cycle_is_judged_by_the_cycles() {
        // 120 settles of the output part in 50 cycles (50 settles of the rest): an
        // output partition that ran in 29 of them ran in 29 of 50 cycles.
        let profile = profile_of([120, 50], (3, 5), Vec::new(), Vec::new());
        let always = profile.always(&[28, 29, 120, 28, 29]);
        let got: Vec<bool> = (0..5).map(|f| always.has(f)).collect();
        assert_eq!(
            got,
            [false, true, true, false, true],
            "28, 29 and 120 runs in 50 cycles | 28/50, 29/50"
        );
    }

    #[test]
    fn a_copy_is_always_run_when_it_ran_in_58_percent_of_its_domains_edges() {
        // Two partitions; copies 2 and 3 in domain 0, 4 in domain 1, 5 in domain
        // 0 but moved by a call. Domain 0 fires 50 times, domain 1 twice.
        let copies = vec![Some(0), Some(0), Some(1), None];
        let mut profile = profile_of([4, 4], (1, 2), vec![0, 0], copies);
        (0..2).for_each(|_| profile.edged([0, 1].into_iter().collect()));
        (0..48).for_each(|_| profile.edged([0].into_iter().collect()));
        let always = profile.always(&[0, 0, 29, 28, 2, 50]);
        let got: Vec<bool> = (2..6).map(|f| always.has(f)).collect();
        assert_eq!(
            got,
            [true, false, true, false],
            "29/50, 28/50 | 2/2 | a moved copy, whatever its runs"
        );
        assert_eq!(always.below(2), 0, "no partition ran");
    }
}
