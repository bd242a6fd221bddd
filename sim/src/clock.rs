//! Clock generators: one per top-level domain, with a period and a phase in
//! picoseconds. Rising edges of a clock with period `P` and phase `φ` are at
//! `φ + k·P` for `k = 1, 2, …`; it falls `P / 2` (rounded down) after each rise.
//!
//! Public so that other engines (the Verilator test bench) drive their clocks by the
//! very same schedule as the native simulator.

/// Default clock period: 1 ns.
pub const DEFAULT_PERIOD_PS: u64 = 1000;

/// The most top-level clock domains a design may have (one bit each in [`Fired`]).
pub const MAX_DOMAINS: usize = 64;

/// The domains (indices in declaration order) whose clocks rose at one edge: a set
/// of at most [`MAX_DOMAINS`], copied by value, so that stepping allocates nothing.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub struct Fired(u64);

impl std::fmt::Debug for Fired {
    /// The domain indices, as a set: `{0, 2}`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl Fired {
    /// True if domain `d` rose.
    #[inline]
    pub fn contains(self, d: usize) -> bool {
        d < MAX_DOMAINS && self.0 >> d & 1 == 1
    }

    /// True if no domain rose.
    #[inline]
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// How many domains rose.
    #[inline]
    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// The domains that rose, in increasing order.
    pub fn iter(self) -> impl Iterator<Item = usize> {
        let mut rest = self.0;
        std::iter::from_fn(move || {
            let d = rest.trailing_zeros() as usize;
            (rest != 0).then(|| {
                rest &= rest - 1;
                d
            })
        })
    }

    /// The domains in both sets.
    #[inline]
    pub fn intersection(self, other: Fired) -> Fired {
        Fired(self.0 & other.0)
    }

    /// The set with domain `d` added (`d < MAX_DOMAINS`).
    #[inline]
    fn with(self, d: usize) -> Fired {
        debug_assert!(d < MAX_DOMAINS, "at most {MAX_DOMAINS} domains");
        Fired(self.0 | 1 << d)
    }
}

impl FromIterator<usize> for Fired {
    /// The set of the domains `iter` yields (each < [`MAX_DOMAINS`]).
    fn from_iter<I: IntoIterator<Item = usize>>(iter: I) -> Fired {
        iter.into_iter().fold(Fired::default(), Fired::with)
    }
}

/// One domain's clock.
#[derive(Clone, Debug)]
pub struct Clock {
    /// Period in ps (at least 2).
    pub period: u64,
    /// Phase offset in ps.
    pub phase: u64,
    /// Time of the next rising edge.
    pub next_rise: u64,
    /// Time of the pending falling edge, if the clock is high.
    pub next_fall: Option<u64>,
    /// Time of the last rising edge, if there was one.
    pub last_rise: Option<u64>,
    /// Rising edges so far.
    pub cycles: u64,
}

impl Clock {
    fn new() -> Self {
        Clock {
            period: DEFAULT_PERIOD_PS,
            phase: 0,
            next_rise: DEFAULT_PERIOD_PS,
            next_fall: None,
            last_rise: None,
            cycles: 0,
        }
    }

    /// Recomputes the next rise after a change of period or phase: the first
    /// `anchor + k·period` (k ≥ 1) later than `now`, anchored at the last rise or the phase.
    fn reschedule(&mut self, now: u64) {
        let anchor = self.last_rise.unwrap_or(self.phase);
        let mut t = anchor.saturating_add(self.period);
        if t <= now {
            let k = (now - anchor) / self.period + 1;
            t = anchor.saturating_add(k.saturating_mul(self.period));
        }
        self.next_rise = t;
    }

    /// Rises at its next rising edge: counts the cycle and schedules its fall and
    /// its next rise.
    #[inline]
    fn rise(&mut self) {
        let t = self.next_rise;
        self.cycles += 1;
        self.last_rise = Some(t);
        self.next_fall = Some(t.saturating_add(self.period / 2));
        self.next_rise = t.saturating_add(self.period);
    }
}

/// All clocks and the current time.
#[derive(Clone, Debug)]
pub struct Clocks {
    /// One clock per top-level domain, in domain order.
    pub clocks: Vec<Clock>,
    /// Current time in ps (the time of the last processed edge, 0 at the start).
    pub now: u64,
}

impl Clocks {
    /// `count` clocks (at most [`MAX_DOMAINS`]) with the default period and no phase.
    pub fn new(count: usize) -> Self {
        assert!(
            count <= MAX_DOMAINS,
            "{count} clocks: at most {MAX_DOMAINS} (callers check the design first)"
        );
        Clocks {
            clocks: (0..count).map(|_| Clock::new()).collect(),
            now: 0,
        }
    }

    /// Sets a clock's period (≥ 2 ps, checked by the caller); takes effect from its next edge.
    pub fn set_period(&mut self, d: usize, period: u64) {
        let now = self.now;
        let c = &mut self.clocks[d];
        c.period = period;
        c.reschedule(now);
    }

    /// Sets a clock's phase; only before its first rising edge (checked by the caller).
    pub fn set_phase(&mut self, d: usize, phase: u64) {
        let now = self.now;
        let c = &mut self.clocks[d];
        c.phase = phase;
        c.reschedule(now);
    }

    /// Time of the next rising edge of any clock.
    pub fn next_rise(&self) -> Option<u64> {
        self.clocks.iter().map(|c| c.next_rise).min()
    }

    /// The earliest pending falling edge at or before `t`.
    pub fn next_fall_until(&self, t: u64) -> Option<u64> {
        self.clocks
            .iter()
            .filter_map(|c| c.next_fall)
            .filter(|f| *f <= t)
            .min()
    }

    /// The falling edge at `tf` (from [`next_fall_until`](Self::next_fall_until)):
    /// returns every domain whose clock falls then, and marks its clock low.
    pub fn fall(&mut self, tf: u64) -> Fired {
        let mut fell = Fired::default();
        for (d, c) in self.clocks.iter_mut().enumerate() {
            if c.next_fall == Some(tf) {
                c.next_fall = None;
                fell = fell.with(d);
            }
        }
        fell
    }

    /// Advances to time `t`, a rising edge: returns every domain rising at `t`, counts
    /// its cycle and schedules its fall and next rise.
    pub fn rise(&mut self, t: u64) -> Fired {
        let mut fired = Fired::default();
        self.now = t;
        for (d, c) in self.clocks.iter_mut().enumerate() {
            if c.next_rise == t {
                fired = fired.with(d);
                c.rise();
            }
        }
        fired
    }

    /// [`rise`](Self::rise) at clock 0's next rising edge, for a schedule whose
    /// only clock it is (a design with one domain): no search for the clocks
    /// that rise there. Returns the domains that rose, clock 0's.
    #[inline]
    pub(crate) fn rise_only_clock(&mut self) -> Fired {
        debug_assert_eq!(self.clocks.len(), 1, "a schedule of one clock");
        let c = &mut self.clocks[0];
        self.now = c.next_rise;
        c.rise();
        Fired::default().with(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coincident_edges_fire_together() {
        let mut c = Clocks::new(2);
        c.set_period(0, 5000);
        c.set_period(1, 10000);
        let mut log = Vec::new();
        while let Some(t) = c.next_rise() {
            if t > 20000 {
                break;
            }
            let fired = c.rise(t);
            log.push((t, fired.iter().collect::<Vec<_>>()));
        }
        assert_eq!(
            log,
            vec![
                (5000, vec![0]),
                (10000, vec![0, 1]),
                (15000, vec![0]),
                (20000, vec![0, 1])
            ]
        );
    }

    #[test]
    fn fired_sets_hold_every_domain_index() {
        let all: Fired = (0..MAX_DOMAINS).collect();
        assert_eq!(all.len(), MAX_DOMAINS);
        assert_eq!(
            all.iter().collect::<Vec<_>>(),
            (0..MAX_DOMAINS).collect::<Vec<_>>()
        );
        let some: Fired = [3, 0, 63].into_iter().collect();
        assert_eq!(some.iter().collect::<Vec<_>>(), vec![0, 3, 63]);
        assert!(some.contains(63) && !some.contains(1) && !some.contains(64));
        assert!(Fired::default().is_empty() && !some.is_empty());
        assert_eq!(format!("{some:?}"), "{0, 3, 63}");
    }

    #[test]
    fn falling_edges_come_half_a_period_after_each_rise() {
        let mut c = Clocks::new(3);
        c.set_period(0, 4000);
        c.set_period(1, 3000);
        c.set_period(2, 4000);
        assert_eq!(c.rise(3000), [1].into_iter().collect());
        assert_eq!(c.rise(4000), [0, 2].into_iter().collect());
        // Falls due: clock 1 at 4500, clocks 0 and 2 at 6000; the next rise is 6000.
        assert_eq!(c.next_fall_until(6000), Some(4500));
        assert_eq!(c.fall(4500), [1].into_iter().collect());
        assert_eq!(c.next_fall_until(6000), Some(6000));
        assert_eq!(c.fall(6000), [0, 2].into_iter().collect());
        assert_eq!(c.next_fall_until(6000), None);
        assert!(c.fall(6000).is_empty(), "a clock falls once per rise");
        let both: Fired = [0, 2].into_iter().collect();
        let one: Fired = [2, 5].into_iter().collect();
        assert_eq!(both.intersection(one), [2].into_iter().collect());
    }

    #[test]
    fn phase_and_period_change_reschedule() {
        let mut c = Clocks::new(1);
        c.set_phase(0, 250);
        assert_eq!(c.next_rise(), Some(1250));
        assert_eq!(c.rise(1250), [0].into_iter().collect());
        c.set_period(0, 400);
        assert_eq!(c.next_rise(), Some(1650));
    }
}
