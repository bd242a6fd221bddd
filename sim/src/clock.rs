//! Clock generators: one per top-level domain, with a period and a phase in
//! picoseconds. Rising edges of a clock with period `P` and phase `φ` are at
//! `φ + k·P` for `k = 1, 2, …`; it falls `P / 2` (rounded down) after each rise.
//!
//! Public so that other engines (the Verilator test bench) drive their clocks by the
//! very same schedule as the native simulator.

/// Default clock period: 1 ns.
pub const DEFAULT_PERIOD_PS: u64 = 1000;

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
    /// `count` clocks with the default period and no phase.
    pub fn new(count: usize) -> Self {
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

    /// Advances to time `t`, a rising edge: pushes every domain rising at `t` into `fired`,
    /// counts its cycle and schedules its fall and next rise.
    pub fn rise(&mut self, t: u64, fired: &mut Vec<usize>) {
        fired.clear();
        self.now = t;
        for (d, c) in self.clocks.iter_mut().enumerate() {
            if c.next_rise == t {
                fired.push(d);
                c.cycles += 1;
                c.last_rise = Some(t);
                c.next_fall = Some(t.saturating_add(c.period / 2));
                c.next_rise = t.saturating_add(c.period);
            }
        }
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
        let mut fired = Vec::new();
        let mut log = Vec::new();
        while let Some(t) = c.next_rise() {
            if t > 20000 {
                break;
            }
            c.rise(t, &mut fired);
            log.push((t, fired.clone()));
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
    fn phase_and_period_change_reschedule() {
        let mut c = Clocks::new(1);
        c.set_phase(0, 250);
        assert_eq!(c.next_rise(), Some(1250));
        let mut fired = Vec::new();
        c.rise(1250, &mut fired);
        c.set_period(0, 400);
        assert_eq!(c.next_rise(), Some(1650));
    }
}
