//! A running accelerator core fed batch after batch of frames, each batch
//! followed by a drain (the input stops until every slot has been served or
//! flushed and the output has been quiet) and checked by the timing-independent
//! [`invariants`]. The chaos run and the fault tests drive the
//! accelerator through it.

use super::config::GoldenConfig;
use super::counters::Counters;
use super::golden::{GoldenError, InFrame};
use super::invariants::{self, Report, RunRecord};
use super::system::{configure, CounterPins, Observed, Shape, StreamDriver};
use crate::dut::{Dut, DutError};
use crate::rng::derived;
use hdl::panama::config::PanamaConfig;
use rand_chacha::ChaCha8Rng;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::ops::Range;

/// Cycles of output silence that end a drain once no packet waits.
const QUIET_CYCLES: u64 = 256;

/// A frame to send and how its beats are laid out.
pub type Sent = (InFrame, Shape);

/// What one batch of a [`Session`] produced.
pub struct Batch {
    /// The frames as the accelerator saw them.
    pub wire: Vec<InFrame>,
    /// The frames that came out while the batch ran and drained.
    pub observed: Vec<Observed>,
    /// The counters' increments over the batch.
    pub counters: Counters,
    /// The drain finished: every slot served or flushed, the output quiet.
    pub drained: bool,
    /// The invariants' tallies.
    pub report: Report,
    /// Indices into `wire` of the bypass frames that came out, in output order.
    pub bypassed: Vec<usize>,
}

/// Why a batch could not be run or checked.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// Driving or reading the core failed.
    #[error(transparent)]
    Dut(#[from] DutError),
    /// The golden model refused the batch.
    #[error(transparent)]
    Golden(#[from] GoldenError),
}

/// A running accelerator core fed batch after batch of frames, each followed by a
/// drain and checked by the invariants ([`Session::run_batch`]).
pub struct Session<'a> {
    dut: &'a mut dyn Dut,
    counter_pins: CounterPins,
    driver: StreamDriver,
    golden: GoldenConfig,
    rng: ChaCha8Rng,
    load: f64,
    p_ready: f64,
    stall_bound: u64,
    drain_bound: u64,
    before: Counters,
    /// The `output_held_cycles` counter and the bench's count at the batch's start.
    held_before: (u64, u64),
    cycle: u64,
    digest: DefaultHasher,
}

impl<'a> Session<'a> {
    /// Configures `dut` (an accelerator core of `cfg`) from `golden`, resets it,
    /// and prepares to offer beats with probability `load` and take output beats
    /// with probability `1 − back_pressure`, drawn from `seed`. A port the core
    /// lacks is an error.
    pub fn new(
        mut dut: &'a mut dyn Dut,
        cfg: &PanamaConfig,
        golden: GoldenConfig,
        (load, back_pressure): (f64, f64),
        seed: u64,
    ) -> Result<Self, DutError> {
        let stall_bound = cfg.input_stall_bound(golden.full_wait);
        let drain_bound = u64::from(golden.slot_timeout) * (u64::from(cfg.fifo_depth) + 2)
            + u64::from(golden.full_wait)
            + 4 * u64::from(cfg.frame_buffer_beats())
            + 10_000;
        configure(&mut dut, &golden)?;
        let counter_pins = CounterPins::resolve(&dut)?;
        dut.reset(4);
        let mut rng = derived(seed, "traffic");
        let mut driver = StreamDriver::streaming(cfg.data_width);
        driver.step(&mut dut, 0, false, &mut rng, load, 1.0)?;
        Ok(Session {
            dut,
            counter_pins,
            driver,
            golden,
            rng,
            load,
            p_ready: 1.0 - back_pressure,
            stall_bound,
            drain_bound,
            before: Counters::default(),
            held_before: (0, 0),
            cycle: 0,
            digest: DefaultHasher::new(),
        })
    }

    /// Cycles simulated so far.
    pub fn cycles(&self) -> u64 {
        self.cycle
    }

    /// Input beats taken so far.
    pub fn beats_in(&self) -> u64 {
        self.driver.accepted_beats() as u64
    }

    /// A digest of every output frame and the cycle it started.
    pub fn digest(&self) -> u64 {
        self.digest.finish()
    }

    /// The counters read now.
    fn counters(&mut self) -> Result<Counters, DutError> {
        let named = self.counter_pins.read(&mut self.dut)?;
        Ok(Counters::from_named(&named))
    }

    /// The `output_held_cycles` counter's and the bench's counts since the last
    /// call (the counter modulo its 32 bits).
    fn output_held(&mut self) -> Result<(u64, u64), DutError> {
        let counted = self.counter_pins.output_held(&mut self.dut)?;
        let now = (counted, self.driver.output_held);
        let (c0, r0) = std::mem::replace(&mut self.held_before, now);
        Ok((counted.wrapping_sub(c0) & 0xFFFF_FFFF, now.1 - r0))
    }

    /// The `stall_cycles` counter now (since reset; the cycles the dispatcher
    /// waited on full packet buffers).
    pub fn stall_cycles(&mut self) -> Result<u64, DutError> {
        self.counter_pins.stall_cycles(&mut self.dut)
    }

    /// Sends `frames`, drains, and checks the batch.
    pub fn run_batch(&mut self, frames: &[Sent]) -> Result<Batch, SessionError> {
        for (f, shape) in frames {
            self.driver.push_frame(f, *shape);
        }
        let wire = wire_frames(frames);
        self.driver.longest_stall = 0;
        let drained = self.drain(wire.len() as u64)?;
        let now = self.counters()?;
        let counters = now.since(&self.before);
        self.before = now;
        let output_held = self.output_held()?;
        let observed = std::mem::take(&mut self.driver.outputs);
        for o in &observed {
            o.bytes.hash(&mut self.digest);
            o.first_cycle.hash(&mut self.digest);
        }
        let (report, bypassed) = invariants::check(
            &self.golden,
            &RunRecord {
                wire: &wire,
                observed: &observed,
                counters,
                drained,
                longest_stall: self.driver.longest_stall,
                stall_bound: self.stall_bound,
                output_held,
            },
        )?;
        Ok(Batch {
            wire,
            observed,
            counters,
            drained,
            report,
            bypassed,
        })
    }

    /// Runs until the input is taken, no packet waits (by the counters) and the
    /// output has been quiet; false if that takes longer than the drain bound.
    fn drain(&mut self, frames: u64) -> Result<bool, DutError> {
        let start = self.cycle;
        let mut quiet_since = self.cycle;
        let mut moved = self.driver.output_beats;
        let patience = 400 * self.driver.queued_beats() as u64 + self.drain_bound;
        loop {
            self.cycle += 1;
            self.dut.step();
            let (load, p_ready) = (self.load, self.p_ready);
            self.driver.step(
                &mut self.dut,
                self.cycle,
                true,
                &mut self.rng,
                load,
                p_ready,
            )?;
            if self.driver.output_beats != moved {
                moved = self.driver.output_beats;
                quiet_since = self.cycle;
            }
            let quiet = self.cycle - quiet_since;
            if self.driver.input_done() && quiet >= QUIET_CYCLES && self.cycle.is_multiple_of(64) {
                let c = self.counters()?.since(&self.before);
                let consumed = c.results_out + c.seq_mismatch + c.other_mismatch + c.timeout_drops;
                if c.accepted == consumed && c.packets_in == frames {
                    return Ok(true);
                }
            }
            if (self.driver.input_done() && quiet > self.drain_bound)
                || self.cycle - start > patience
            {
                return Ok(false);
            }
        }
    }
}

/// Which of the sent frames make up each frame on the wire, given each sent
/// frame's shape: an unterminated frame and those after it, up to one that ends,
/// are one frame.
pub fn wire_spans(shapes: impl IntoIterator<Item = Shape>) -> Vec<Range<usize>> {
    let mut spans: Vec<Range<usize>> = vec![];
    let mut open = false;
    for (i, shape) in shapes.into_iter().enumerate() {
        match spans.last_mut() {
            Some(span) if open => span.end = i + 1,
            _ => spans.push(i..i + 1),
        }
        open = shape == Shape::Unterminated;
    }
    spans
}

/// The frames as the accelerator sees them ([`wire_spans`]): each with the source
/// of its first sent frame and the bytes of all of them.
pub fn wire_frames(frames: &[Sent]) -> Vec<InFrame> {
    wire_spans(frames.iter().map(|(_, shape)| *shape))
        .into_iter()
        .map(|span| InFrame {
            src: frames[span.start].0.src,
            bytes: frames[span]
                .iter()
                .flat_map(|(f, _)| f.bytes.clone())
                .collect(),
        })
        .collect()
}
