//! The engine alone: a [`Recorder`] notes every call a test bench makes on a `Dut`
//! (the values it sets, the ports it reads, its steps and resets) into a [`Script`],
//! and [`Script::replay`] makes the same calls on another model with nothing in
//! between. Timing the replay on each engine measures the engines on a real run's
//! stimulus without the test bench's own work (traffic, drivers, golden models):
//! the engine-only ratio beside the end-to-end one.
//!
//! A replay checks that it read what the recorded run read (a digest over every
//! word of every read, in order), so an engine that behaves differently from the
//! recorded one is an error, not a number.

use super::{CompiledStart, Dut, DutError, DutPort};
use crate::engine::Engine;
use sim::Fired;
use std::path::Path;
use std::time::{Duration, Instant};

/// One recorded call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    /// `set(port, …)` with the next words of [`Script::words`] (as many as the
    /// port has).
    Set(u32),
    /// `get_into(port, …)` (and `get`).
    Read(u32),
    /// `step_edge()`.
    Edge,
    /// `step()`.
    Step,
    /// `step_cycles(n)`.
    Cycles(u32),
    /// `reset(cycles)`.
    Reset(u32),
}

/// The calls of a recorded run, in order.
#[derive(Clone, Debug, Default)]
pub struct Script {
    ops: Vec<Op>,
    /// The values set, one after the other.
    words: Vec<u64>,
    /// The digest of every word read.
    digest: u64,
    /// The recorded design's port widths, in words.
    widths: Vec<usize>,
}

/// The width in words of every port of `dut`.
fn word_widths(dut: &dyn Dut) -> Vec<usize> {
    (dut.ports().iter())
        .map(|p| p.width.div_ceil(64) as usize)
        .collect()
}

/// Folds `words` into `digest` (order-sensitive; FxHash's multiplier).
fn fold(digest: u64, words: &[u64]) -> u64 {
    words.iter().fold(digest, |h, &w| {
        (h.rotate_left(5) ^ w).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95)
    })
}

/// What a replay measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Replayed {
    /// The engine that replayed.
    pub engine: Engine,
    /// Wall time of the calls.
    pub wall: Duration,
}

impl Script {
    /// The calls recorded.
    pub fn calls(&self) -> usize {
        self.ops.len()
    }

    /// Makes every recorded call on `dut` (a fresh model of the recorded design,
    /// its clocks set) and times them; an error if its ports are not the recorded
    /// design's, or if it read other values than the recorded run.
    pub fn replay(&self, dut: &mut dyn Dut) -> Result<Replayed, DutError> {
        let mut replay = self.start(dut)?;
        replay.advance(dut, self.calls())?;
        replay.finish(dut.engine())
    }

    /// A replay of this script on `dut` that makes its calls when told to (see
    /// [`Replay::advance`]), so that several models can take turns; an error if
    /// `dut`'s ports are not the recorded design's.
    pub fn start(&self, dut: &dyn Dut) -> Result<Replay<'_>, DutError> {
        if self.widths != word_widths(dut) {
            return Err(DutError::BadValue {
                port: "*".into(),
                reason: "the design replayed has other ports than the one recorded".into(),
            });
        }
        Ok(Replay {
            script: self,
            scratch: vec![0; self.widths.iter().copied().max().unwrap_or(1)],
            at: 0,
            next: 0,
            digest: 0,
            wall: Duration::ZERO,
        })
    }
}

/// A replay under way on one model (see [`Script::start`]): the calls made so far,
/// the digest of what they read and how long they took.
pub struct Replay<'s> {
    script: &'s Script,
    scratch: Vec<u64>,
    /// The next call.
    at: usize,
    /// The next word of [`Script::words`].
    next: usize,
    digest: u64,
    wall: Duration,
}

impl Replay<'_> {
    /// Makes the next `calls` recorded calls on `dut` (the model the replay was
    /// started on; fewer at the script's end) and adds their time to the replay's.
    pub fn advance(&mut self, dut: &mut dyn Dut, calls: usize) -> Result<(), DutError> {
        let script = self.script;
        let widths = &script.widths;
        let end = self.at.saturating_add(calls).min(script.ops.len());
        let started = Instant::now();
        for &op in &script.ops[self.at..end] {
            match op {
                Op::Set(port) => {
                    let n = widths[port as usize];
                    dut.set(port as usize, &script.words[self.next..self.next + n])?;
                    self.next += n;
                }
                Op::Read(port) => {
                    let out = &mut self.scratch[..widths[port as usize]];
                    dut.get_into(port as usize, out)?;
                    self.digest = fold(self.digest, out);
                }
                Op::Edge => {
                    dut.step_edge();
                }
                Op::Step => dut.step(),
                Op::Cycles(n) => dut.step_cycles(u64::from(n)),
                Op::Reset(n) => dut.reset(u64::from(n)),
            }
        }
        self.wall += started.elapsed();
        self.at = end;
        Ok(())
    }

    /// Whether every recorded call has been made.
    pub fn done(&self) -> bool {
        self.at == self.script.ops.len()
    }

    /// What the replay on `engine` measured, once every call has been made; an
    /// error if calls remain or if it read other values than the recorded run.
    pub fn finish(self, engine: Engine) -> Result<Replayed, DutError> {
        let wrong = |reason: String| DutError::BadValue {
            port: "*".into(),
            reason,
        };
        if !self.done() {
            return Err(wrong(format!(
                "the replay on the {engine} engine stopped after {} of {} calls",
                self.at,
                self.script.ops.len()
            )));
        }
        if self.digest != self.script.digest {
            return Err(wrong(format!(
                "the {engine} engine read other values replaying the recorded run"
            )));
        }
        Ok(Replayed {
            engine,
            wall: self.wall,
        })
    }
}

/// A `Dut` that passes every call on to `dut` and records it (see the module).
/// Clock periods and traces pass through unrecorded: a replay's model is built
/// with its clocks, and runs without a trace.
pub struct Recorder<'a> {
    dut: &'a mut dyn Dut,
    script: Script,
}

impl<'a> Recorder<'a> {
    /// Records the calls made on `dut` from now on.
    pub fn new(dut: &'a mut dyn Dut) -> Recorder<'a> {
        let script = Script {
            widths: word_widths(dut),
            ..Script::default()
        };
        Recorder { dut, script }
    }

    /// The calls recorded.
    pub fn finish(self) -> Script {
        self.script
    }

    /// The index of `port` as an operand, or an error naming it if it does not fit.
    fn index(&self, port: usize) -> Result<u32, DutError> {
        match u32::try_from(port) {
            Ok(p) if port < self.script.widths.len() => Ok(p),
            _ => Err(DutError::UnknownPort(format!("#{port}"))),
        }
    }

    /// A count as an operand (saturated; no test bench steps or resets 2³² cycles
    /// in one call).
    fn count(n: u64) -> u32 {
        u32::try_from(n).unwrap_or(u32::MAX)
    }
}

impl Dut for Recorder<'_> {
    fn engine(&self) -> Engine {
        self.dut.engine()
    }

    fn ports(&self) -> &[DutPort] {
        self.dut.ports()
    }

    fn domains(&self) -> &[String] {
        self.dut.domains()
    }

    fn set_clock_period(&mut self, domain: &str, period_ps: u64) -> Result<(), DutError> {
        self.dut.set_clock_period(domain, period_ps)
    }

    fn set(&mut self, port: usize, words: &[u64]) -> Result<(), DutError> {
        let index = self.index(port)?;
        self.dut.set(port, words)?;
        let s = &mut self.script;
        let n = s.widths[port];
        s.ops.push(Op::Set(index));
        s.words
            .extend(words.iter().copied().chain(std::iter::repeat(0)).take(n));
        Ok(())
    }

    fn get(&mut self, port: usize) -> Result<Vec<u64>, DutError> {
        let mut out = vec![0; self.script.widths.get(port).copied().unwrap_or(1)];
        self.get_into(port, &mut out)?;
        Ok(out)
    }

    fn get_into(&mut self, port: usize, out: &mut [u64]) -> Result<(), DutError> {
        let index = self.index(port)?;
        self.dut.get_into(port, out)?;
        let s = &mut self.script;
        s.ops.push(Op::Read(index));
        s.digest = fold(s.digest, &out[..s.widths[port]]);
        Ok(())
    }

    fn step_edge(&mut self) -> Fired {
        self.script.ops.push(Op::Edge);
        self.dut.step_edge()
    }

    fn step(&mut self) {
        self.script.ops.push(Op::Step);
        self.dut.step();
    }

    fn step_cycles(&mut self, n: u64) {
        self.script.ops.push(Op::Cycles(Self::count(n)));
        self.dut.step_cycles(u64::from(Self::count(n)));
    }

    fn time_ps(&self) -> u64 {
        self.dut.time_ps()
    }

    fn reset(&mut self, cycles: u64) {
        self.script.ops.push(Op::Reset(Self::count(cycles)));
        self.dut.reset(u64::from(Self::count(cycles)));
    }

    fn trace_open(&mut self, path: &Path) -> Result<(), DutError> {
        self.dut.trace_open(path)
    }

    fn trace_close(&mut self) -> Result<(), DutError> {
        self.dut.trace_close()
    }

    fn compiled_start(&self) -> Option<CompiledStart> {
        self.dut.compiled_start()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dut::NativeDut;
    use sim::Backend;

    /// Records a run of an 8-bit counter on the interpreter: `en` on for 5 cycles,
    /// a load of 200, then 60 enabled cycles (wrapping past 255), `count` read
    /// after every cycle and checked against the counter's own arithmetic.
    fn record() -> Script {
        let m = hdl::blocks::counter::up_counter(8).unwrap();
        let mut dut = NativeDut::with_backend(&m, Backend::Interpreted).unwrap();
        let mut rec = Recorder::new(&mut dut);
        rec.reset(2);
        let [en, load, value, count] =
            ["en", "load", "load_value", "count"].map(|p| rec.port(p).unwrap());
        let mut expected = 0u64;
        rec.set(en, &[1]).unwrap();
        for cycle in 0..66 {
            let loading = cycle == 5;
            rec.set(load, &[u64::from(loading)]).unwrap();
            rec.set(value, &[200]).unwrap();
            rec.step();
            expected = if loading { 200 } else { (expected + 1) % 256 };
            let mut out = [0];
            rec.get_into(count, &mut out).unwrap();
            assert_eq!(out[0], expected, "cycle {cycle}");
        }
        rec.step_cycles(3);
        assert_eq!(rec.get(count).unwrap(), vec![(expected + 3) % 256]);
        rec.finish()
    }

    #[test]
    fn a_recorded_run_replays_on_every_native_engine() {
        let script = record();
        // reset, en; per cycle two sets, a step and a read; three cycles; a read.
        assert_eq!(script.calls(), 2 + 66 * 4 + 2);
        let m = hdl::blocks::counter::up_counter(8).unwrap();
        for backend in [Backend::Interpreted, Backend::Compiled] {
            let mut dut = NativeDut::with_backend(&m, backend).unwrap();
            let replayed = script.replay(&mut dut).unwrap();
            assert_eq!(replayed.engine, dut.engine());
        }
    }

    #[test]
    fn replays_taking_turns_in_slices_read_what_the_run_read() {
        let script = record();
        let m = hdl::blocks::counter::up_counter(8).unwrap();
        let mut duts = [Backend::Interpreted, Backend::Compiled]
            .map(|backend| NativeDut::with_backend(&m, backend).unwrap());
        let [a, b] = &mut duts;
        let (mut ra, mut rb) = (script.start(a).unwrap(), script.start(b).unwrap());
        // Slices of 7 calls cut the script's cycles (four calls each) anywhere.
        while !(ra.done() && rb.done()) {
            ra.advance(a, 7).unwrap();
            rb.advance(b, 7).unwrap();
        }
        assert_eq!(ra.finish(a.engine()).unwrap().engine, a.engine());
        rb.finish(b.engine()).unwrap();
        // A replay finished before its last call is an error, not a time.
        let mut early = script.start(a).unwrap();
        early.advance(a, script.calls() - 1).unwrap();
        let err = early.finish(a.engine()).unwrap_err().to_string();
        assert!(err.contains("stopped after"), "{err}");
    }

    #[test]
    fn a_replay_that_reads_other_values_is_an_error() {
        let mut script = record();
        // The words set: `en`, then `load` and `load_value` per cycle. Cycle 5
        // loads 201 instead of 200.
        assert_eq!(script.words[1 + 5 * 2..1 + 5 * 2 + 2], [1, 200]);
        script.words[1 + 5 * 2 + 1] = 201;
        let m = hdl::blocks::counter::up_counter(8).unwrap();
        let mut dut = NativeDut::with_backend(&m, Backend::Compiled).unwrap();
        let err = script.replay(&mut dut).unwrap_err().to_string();
        assert!(err.contains("read other values"), "{err}");
        // A FIFO has other ports than the recorded counter.
        let fifo = hdl::blocks::fifo::sync_fifo(8, 4).unwrap();
        let mut dut = NativeDut::with_backend(&fifo, Backend::Compiled).unwrap();
        let err = record().replay(&mut dut).unwrap_err().to_string();
        assert!(err.contains("other ports"), "{err}");
    }
}
