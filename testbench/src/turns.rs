//! Engines taking turns: the end-to-end runs of several engines, each on its own
//! thread, hand a baton to each other every [`SLICE_CYCLES`] cycles, so that a
//! change in the machine's speed during a round (this project's VM moves by up to
//! a factor of two within seconds) falls on every engine alike instead of on
//! whichever ran then. A run's time is the sum of its turns; only one run works
//! at a time, so the runs do not compete for the cores either.

use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The cycles a run makes in one turn before it hands the baton on.
pub const SLICE_CYCLES: u64 = 8192;

/// Whose turn it is among the runs of one round.
#[derive(Debug)]
pub struct Baton {
    turn: Mutex<Turn>,
    changed: Condvar,
}

#[derive(Debug)]
struct Turn {
    /// The run whose turn it is.
    current: usize,
    /// Which runs have not finished.
    playing: Vec<bool>,
}

impl Turn {
    /// The next run after `me` (in order, wrapping) that has not finished; `me`
    /// when no other has not.
    fn next_after(&self, me: usize) -> usize {
        let n = self.playing.len();
        (1..=n)
            .map(|k| (me + k) % n)
            .find(|&r| self.playing[r])
            .unwrap_or(me)
    }
}

impl Baton {
    /// A baton for `runs` runs, run 0's turn first.
    pub fn new(runs: usize) -> Baton {
        Baton {
            turn: Mutex::new(Turn {
                current: 0,
                playing: vec![true; runs],
            }),
            changed: Condvar::new(),
        }
    }

    /// Run `me`'s place in the rotation, once it is its turn (it waits until then).
    pub fn join(&self, me: usize) -> Player<'_> {
        drop(self.wait_for(me));
        Player {
            baton: self,
            me,
            cycles: 0,
            since: Instant::now(),
            played: Duration::ZERO,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Turn> {
        // No critical section below can panic halfway, so a poisoned lock still
        // guards a whole state.
        self.turn.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until it is `me`'s turn.
    fn wait_for(&self, me: usize) -> MutexGuard<'_, Turn> {
        let mut turn = self.lock();
        while turn.current != me {
            turn = self.changed.wait(turn).unwrap_or_else(|e| e.into_inner());
        }
        turn
    }

    /// Hands the turn from `me` to the next run still playing (`me` again if none).
    fn pass(&self, me: usize) {
        let mut turn = self.lock();
        turn.current = turn.next_after(me);
        drop(turn);
        self.changed.notify_all();
    }

    /// Takes `me` out of the rotation and hands the turn on.
    fn leave(&self, me: usize) {
        let mut turn = self.lock();
        turn.playing[me] = false;
        if turn.current == me {
            turn.current = turn.next_after(me);
        }
        drop(turn);
        self.changed.notify_all();
    }
}

/// Runs `first` and `other(1)`, `other(2)`, … (`runs` runs in all, at least one)
/// taking turns on one baton: `first` on this thread (so that it may use what
/// cannot cross threads, a progress display), each other run on a thread of its
/// own, every one handed its [`Player`] once its first turn comes. Their results,
/// in order; a run's panic is resumed here once the others have finished.
pub fn take_turns<T: Send>(
    runs: usize,
    first: impl FnOnce(Player<'_>) -> T,
    other: impl Fn(usize, Player<'_>) -> T + Sync,
) -> Vec<T> {
    let baton = Baton::new(runs.max(1));
    std::thread::scope(|scope| {
        let others: Vec<_> = (1..runs)
            .map(|k| {
                let (baton, other) = (&baton, &other);
                scope.spawn(move || other(k, baton.join(k)))
            })
            .collect();
        let first = first(baton.join(0));
        std::iter::once(first)
            .chain(others.into_iter().map(|h| match h.join() {
                Ok(result) => result,
                Err(panic) => std::panic::resume_unwind(panic),
            }))
            .collect()
    })
}

/// One run's place in the rotation of a [`Baton`]: it counts the run's cycles,
/// hands the baton on at the end of every slice and times the run's turns. The
/// run leaves the rotation when its player is dropped (when it ends, with an
/// error or a panic too), so the others never wait on it.
#[derive(Debug)]
pub struct Player<'a> {
    baton: &'a Baton,
    me: usize,
    /// Cycles of the current turn.
    cycles: u64,
    /// When the current turn began.
    since: Instant,
    /// The time of the turns before it.
    played: Duration,
}

impl Player<'_> {
    /// Starts the timing afresh (the set-up before it, a model's build, is not the
    /// run's).
    pub fn restart_clock(&mut self) {
        self.since = Instant::now();
        self.played = Duration::ZERO;
    }

    /// Notes `cycles` more cycles; at the end of a slice, hands the baton on and
    /// waits for the run's next turn (that wait is not counted).
    pub fn ran(&mut self, cycles: u64) {
        self.cycles += cycles;
        if self.cycles < SLICE_CYCLES {
            return;
        }
        self.played += self.since.elapsed();
        self.cycles = 0;
        self.baton.pass(self.me);
        drop(self.baton.wait_for(self.me));
        self.since = Instant::now();
    }

    /// The time of the run's turns so far, the current one included.
    pub fn played(&self) -> Duration {
        self.played + self.since.elapsed()
    }
}

impl Drop for Player<'_> {
    fn drop(&mut self) {
        self.baton.leave(self.me);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three runs of different lengths on three threads: they work one at a time
    /// (a run's log entries come in whole slices), alternate slice by slice, and
    /// each ends with all its cycles run.
    #[test]
    fn runs_take_turns_slice_by_slice_and_all_finish() {
        let baton = Baton::new(3);
        let log = Mutex::new(Vec::new());
        let lengths = [5 * SLICE_CYCLES, 2 * SLICE_CYCLES + 1, 3 * SLICE_CYCLES];
        std::thread::scope(|s| {
            for (me, &length) in lengths.iter().enumerate() {
                let (baton, log) = (&baton, &log);
                s.spawn(move || {
                    let mut player = baton.join(me);
                    for _ in 0..length / 64 {
                        log.lock().unwrap().push(me);
                        player.ran(64);
                    }
                    player.ran(length % 64);
                });
            }
        });
        let log = log.into_inner().unwrap();
        // Collapse the log into turns: (run, cycles made in the turn).
        let mut turns: Vec<(usize, u64)> = Vec::new();
        for &me in &log {
            match turns.last_mut() {
                Some((r, n)) if *r == me => *n += 64,
                _ => turns.push((me, 64)),
            }
        }
        // A turn is a whole slice; only the longest run, alone at the end, has
        // turns in a row (collapsed into one here).
        for &(r, n) in &turns {
            match r {
                0 => assert_eq!(n % SLICE_CYCLES, 0, "run 0 ran {n} cycles in a turn"),
                _ => assert_eq!(n, SLICE_CYCLES, "run {r} ran {n} cycles in a turn"),
            }
        }
        for (me, &length) in lengths.iter().enumerate() {
            let made: u64 = turns.iter().filter(|t| t.0 == me).map(|t| t.1).sum();
            assert_eq!(made, length / 64 * 64, "run {me}");
        }
        // While all three play, the order is 0, 1, 2, 0, 1, 2.
        assert_eq!(
            turns.iter().take(6).map(|t| t.0).collect::<Vec<_>>(),
            [0, 1, 2, 0, 1, 2]
        );
    }

    /// `take_turns` gives every run its player and returns the results in order.
    #[test]
    fn take_turns_returns_each_run_s_result_in_order() {
        let got = take_turns(
            3,
            |mut p| {
                p.ran(2 * SLICE_CYCLES);
                0
            },
            |k, mut p| {
                p.ran(SLICE_CYCLES);
                k * 10
            },
        );
        assert_eq!(got, [0, 10, 20]);
    }

    /// A run that ends early (an error) leaves the rotation; the others go on.
    #[test]
    fn a_run_that_stops_early_does_not_hold_the_others() {
        let baton = Baton::new(2);
        std::thread::scope(|s| {
            s.spawn(|| {
                let mut player = baton.join(0);
                player.ran(SLICE_CYCLES);
                // Dropped here, after one turn.
            });
            s.spawn(|| {
                let mut player = baton.join(1);
                for _ in 0..10 {
                    player.ran(SLICE_CYCLES);
                }
                assert!(player.played() > Duration::ZERO);
            });
        });
    }
}
