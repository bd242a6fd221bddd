//! One `Dut` trait for every engine: the native simulator and the Verilator model of
//! the emitted Verilog are driven through the same calls, with the same clock
//! schedule (`sim::clock`), so a test runs on either or on both in lockstep.

mod lockstep;
mod native;
mod replay;
mod verilated;

pub use lockstep::Lockstep;
pub use native::NativeDut;
pub use replay::{Recorder, Replay, Replayed, Script};
pub use verilated::VerilatorDut;

use crate::engine::Engine;
use hdl::ir::{Direction, PortKind};
use sim::Fired;
use std::path::Path;

/// A port of the design under test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DutPort {
    /// Port name.
    pub name: String,
    /// Width in bits.
    pub width: u32,
    /// Input or output.
    pub direction: Direction,
    /// Data, clock or reset.
    pub kind: PortKind,
}

/// Why a `Dut` call failed.
#[derive(Debug, thiserror::Error)]
pub enum DutError {
    /// No port of that name.
    #[error("the design has no port `{0}`")]
    UnknownPort(String),
    /// No clock domain of that name.
    #[error("the design has no clock domain `{0}`")]
    UnknownDomain(String),
    /// A value does not fit the port, or the port cannot be driven.
    #[error("port `{port}`: {reason}")]
    BadValue {
        /// The port.
        port: String,
        /// Why.
        reason: String,
    },
    /// Two engines in [`Lockstep`] read different values.
    #[error("engines diverge on port `{port}` at {time_ps} ps: {} {} vs {} {}", .engines.0, .values.0, .engines.1, .values.1)]
    Diverged {
        /// The port.
        port: String,
        /// When.
        time_ps: u64,
        /// The two engines.
        engines: (Engine, Engine),
        /// Their values, hex.
        values: (String, String),
    },
    /// The native simulator refused.
    #[error(transparent)]
    Sim(#[from] sim::SimError),
    /// The Verilator bridge failed (build, load, call).
    #[error(transparent)]
    Verilator(#[from] crate::verilator::BridgeError),
    /// Verilog generation failed.
    #[error(transparent)]
    Gen(#[from] gen::GenError),
    /// A trace file could not be written.
    #[error("trace `{path}`: {source}")]
    Trace {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A write into an open trace failed (a full disk, a file size limit): the
    /// simulation went on, the trace did not.
    #[error(
        "trace `{path}`: {source}; {}",
        if *.removed { "the incomplete file was removed" } else { "the trace is incomplete" }
    )]
    TraceWrite {
        /// The file.
        path: String,
        /// The first write error.
        source: std::io::Error,
        /// Whether the incomplete file was removed (it is, when it is a regular file).
        removed: bool,
    },
}

/// When the native simulator's compiled engine took over from the interpreter that
/// runs while it is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompiledStart {
    /// The cycle (of the primary clock, reset included) from which it ran; 0 when
    /// it ran from the first.
    pub cycle: u64,
    /// How long it took to build (alongside the interpreter, unless `cycle` is 0),
    /// or to load from the code cache.
    pub build: std::time::Duration,
    /// Whether it came from the code cache.
    pub cached: bool,
    /// Whether the program (what the interpreter runs and the compiled engine is
    /// built from) came from the code cache rather than a compile before the
    /// first cycle (see `sim::Simulator::program_from_cache`).
    pub program_cached: bool,
    /// When the engine tuned from its profile took over, if it has.
    pub tuned: Option<TunedStart>,
    /// What the compiled engine is made of (see [`CodeShape`]).
    pub shape: CodeShape,
}

/// What a compiled engine is made of: how much of the design runs as straight-line
/// records and how much as vector code (identical lanes or instances side by
/// side; see the README's "Identical logic side by side").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CodeShape {
    /// Records emitted as straight-line code.
    pub records: usize,
    /// Short runs of identical records written inline as vector code.
    pub vector_runs: usize,
    /// Longer runs, each a call of a vector loop.
    pub run_calls: usize,
    /// The instruction set of the vector loops (chosen once per process, see
    /// `sim::vector_loops`).
    pub loops: sim::VectorLoops,
}

/// When the native simulator's compiled engine tuned from its profile took over
/// (see `sim::Simulator::set_tune_after`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TunedStart {
    /// The cycle (as for [`CompiledStart::cycle`]) from which it ran.
    pub cycle: u64,
    /// How long it took to build (alongside the first compiled engine), or to
    /// load from the code cache.
    pub build: std::time::Duration,
    /// Whether it came from the code cache.
    pub cached: bool,
    /// Its partitions that run at every settle, untested.
    pub untested: usize,
    /// All its partitions.
    pub partitions: usize,
}

/// A design under test: set inputs, advance clocks, read outputs.
///
/// Clocks follow `sim::clock`: clock `d` rises at `φ + k·P` (k ≥ 1) and falls `P/2`
/// later; rising edges at the same instant are one atomic update. Inputs set between
/// two edges are sampled at the next edge; outputs read between edges are settled.
pub trait Dut {
    /// Which engine this is (a pair in lockstep answers for its first).
    fn engine(&self) -> Engine;
    /// The top module's ports, in declaration order (the order of port indices).
    fn ports(&self) -> &[DutPort];
    /// The top module's clock domains, in declaration order.
    fn domains(&self) -> &[String];
    /// Sets the clock period of `domain` (before the first edge, normally).
    fn set_clock_period(&mut self, domain: &str, period_ps: u64) -> Result<(), DutError>;
    /// Drives input `port` with little-endian 64-bit words.
    fn set(&mut self, port: usize, words: &[u64]) -> Result<(), DutError>;
    /// Reads any port (settled) as little-endian 64-bit words.
    fn get(&mut self, port: usize) -> Result<Vec<u64>, DutError>;
    /// Reads any port (settled) into `out[..n]`, `n = ceil(width / 64)`, without
    /// allocating (engines override the default, which goes through [`get`](Self::get));
    /// `out` may be longer (the rest is left alone). A shorter `out` is an error.
    fn get_into(&mut self, port: usize, out: &mut [u64]) -> Result<(), DutError> {
        let words = self.get(port)?;
        copy_words(self.ports(), port, &words, out)
    }
    /// Advances to the next rising edge of any clock; returns the indices (into
    /// [`domains`](Self::domains)) of the domains that rose.
    fn step_edge(&mut self) -> Fired;
    /// Current time in picoseconds.
    fn time_ps(&self) -> u64;
    /// Asserts every domain's reset for `cycles` rising edges of each domain.
    fn reset(&mut self, cycles: u64);
    /// Starts writing a VCD of every port to `path`.
    fn trace_open(&mut self, path: &Path) -> Result<(), DutError>;
    /// Finishes the VCD.
    fn trace_close(&mut self) -> Result<(), DutError>;
    /// When the native simulator's compiled engine took over from the interpreter
    /// (see `sim::Simulator::compiled_from_cycle`); `None` for other engines, or while
    /// the interpreter runs.
    fn compiled_start(&self) -> Option<CompiledStart> {
        None
    }

    /// The index of port `name`.
    fn port(&self, name: &str) -> Result<usize, DutError> {
        self.ports()
            .iter()
            .position(|p| p.name == name)
            .ok_or_else(|| DutError::UnknownPort(name.to_string()))
    }

    /// Advances to the next rising edge of the first domain (one cycle of a
    /// single-clock design), processing other domains' edges on the way.
    fn step(&mut self) {
        if self.domains().is_empty() {
            self.step_edge();
            return;
        }
        while !self.step_edge().contains(0) {}
    }

    /// `n` cycles of [`step`](Self::step) with the inputs left as they are (engines may
    /// run them without returning to the caller between cycles).
    fn step_cycles(&mut self, n: u64) {
        for _ in 0..n {
            self.step();
        }
    }

    /// Sets input `name` to `value`.
    fn set_u64(&mut self, name: &str, value: u64) -> Result<(), DutError> {
        let p = self.port(name)?;
        self.set(p, &[value])
    }

    /// Reads port `name` (at most 64 bits wide).
    fn get_u64(&mut self, name: &str) -> Result<u64, DutError> {
        let p = self.port(name)?;
        if self.ports()[p].width <= 64 {
            let mut word = [0u64; 1];
            self.get_into(p, &mut word)?;
            return Ok(word[0]);
        }
        let words = self.get(p)?;
        if words.iter().skip(1).any(|w| *w != 0) {
            return Err(DutError::BadValue {
                port: name.to_string(),
                reason: "value does not fit in 64 bits".into(),
            });
        }
        Ok(words.first().copied().unwrap_or(0))
    }
}

/// The error of trace `path` whose write failed with `source`, after removing the
/// incomplete file when it is a regular one (not a device such as `/dev/full`, nor
/// a pipe), so that a failed run leaves no partial trace behind.
pub(crate) fn trace_write_failed(path: &Path, source: std::io::Error) -> DutError {
    DutError::TraceWrite {
        path: path.display().to_string(),
        source,
        removed: crate::files::remove_incomplete(path),
    }
}

/// Copies the value `words` of port `port` into `out` (for [`Dut::get_into`]); a
/// shorter `out` is an error naming the port.
#[inline]
pub(crate) fn copy_words(
    ports: &[DutPort],
    port: usize,
    words: &[u64],
    out: &mut [u64],
) -> Result<(), DutError> {
    match out.get_mut(..words.len()) {
        Some(dst) => {
            copy_short(dst, words);
            Ok(())
        }
        None => Err(short_buffer(ports, port, out.len(), words.len())),
    }
}

/// `dst.copy_from_slice(src)` (slices of one length) with plain loads and stores
/// for the one to four words of most ports, instead of a call of `memcpy` (with
/// the call, each of the ten port reads of a Lightning cycle saved and restored
/// six registers).
#[inline]
pub(crate) fn copy_short(dst: &mut [u64], src: &[u64]) {
    match (dst, src) {
        ([d], [s]) => *d = *s,
        ([d0, d1], [s0, s1]) => (*d0, *d1) = (*s0, *s1),
        ([d0, d1, d2], [s0, s1, s2]) => (*d0, *d1, *d2) = (*s0, *s1, *s2),
        ([d0, d1, d2, d3], [s0, s1, s2, s3]) => (*d0, *d1, *d2, *d3) = (*s0, *s1, *s2, *s3),
        (dst, src) => dst.copy_from_slice(src),
    }
}

/// The error of a buffer of `len` words given for a port of `words` words (out
/// of line, so that reads stay short).
#[cold]
#[inline(never)]
fn short_buffer(ports: &[DutPort], port: usize, len: usize, words: usize) -> DutError {
    let name = ports
        .get(port)
        .map_or_else(|| format!("#{port}"), |p| p.name.clone());
    DutError::BadValue {
        port: name,
        reason: format!("a buffer of {len} words is too short for {words} words"),
    }
}

/// The ports of `module` as a `Dut` sees them.
pub fn ports_of(module: &hdl::Module) -> Vec<DutPort> {
    module
        .ports
        .iter()
        .map(|p| DutPort {
            name: p.name.clone(),
            width: module.net(p.net).width,
            direction: p.direction,
            kind: p.kind,
        })
        .collect()
}
