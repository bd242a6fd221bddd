//! `sim`: wirespeed's native cycle-accurate simulator of the HDL IR.
//!
//! ```
//! use hdl::{ModuleBuilder, ResetPolarity};
//! use sim::Simulator;
//!
//! let mut m = ModuleBuilder::new("counter");
//! let clk = m.domain("clk", "clk", Some("rst"), ResetPolarity::ActiveHigh);
//! let count = m.reg(clk, "count", 8);
//! let next = m.add_const_wrap(count, 1);
//! m.set_next(count, next);
//! m.output("q", count);
//! let module = m.finish().unwrap();
//!
//! let mut s = Simulator::new(&module).unwrap();
//! s.reset(1);
//! s.step_n(5);
//! assert_eq!(s.get_u64("q").unwrap(), 5);
//! assert_eq!(s.time_ps(), 6000); // 1 reset edge + 5 edges of 1000 ps
//! ```
//!
//! # How it works
//!
//! 1. **Flatten** ([`flatten()`]): instances are expanded into one netlist whose nets
//!    have hierarchical names (`u_fifo.count`); instance ports become aliases; every
//!    instance domain is mapped to a top-level domain through its clock connection; every
//!    register keeps its own domain's reset net and polarity.
//! 2. **Compile**: the combinational nets are levelized (a loop is a
//!    [`SimError::CombLoop`]) and simplified — constants folded and propagated,
//!    algebraic identities applied (`x & 0`, muxes with a constant select, slices of
//!    slices, concatenations and extensions, …), common subexpressions merged, nets
//!    nothing observable depends on dropped; named nets stay peekable with their
//!    values and VCD codes. The remaining operations are grouped into *batches* of
//!    independent instructions of one kind (identical logic of every lane and
//!    instance together), laid out in packed `u64` storage (`ceil(width / 64)` words
//!    per net, high bits kept zero, aliases sharing words) so that the instructions
//!    of identical instances write consecutive words and read consecutive operands,
//!    and lowered: single-word instructions for values ≤ 64 bits — runs of identical
//!    instances as vector loops (AVX2 when the CPU has it) —, word-slice routines for
//!    wider ones (any width; schoolbook multiplication).
//! 3. **Evaluate** in two phases: settle the combinational nets in order; at a clock
//!    edge, every register of the domains rising at that instant samples
//!    `reset ? reset_value : enable ? next : q` (registers without a reset value ignore
//!    reset), every read port of those domains samples `mem[addr]` (if enabled; 0 for an
//!    address ≥ depth) *before* the writes of that edge are applied (read-first), the
//!    writes are applied (if enabled and the address < depth), the registers and read
//!    data commit, and the logic settles again (lazily, on the next read or edge).
//!    A settle only recomputes the logic that depends on what changed since the last
//!    one (inputs set, domains clocked), and most registers commit by direct copies
//!    ordered so that every register still sees the values from before the edge.
//!
//! Registers and read data start at 0 — not at their reset value: reset is an explicit
//! action ([`Simulator::reset`]). Memories start at their initial contents or zeros.
//! Reset inputs start at their inactive level. Everything is deterministic.
//!
//! # Clocks and time
//!
//! Each top-level domain has a clock of period `P` (1000 ps unless set with
//! [`Simulator::set_clock_period`]) and phase `φ` (0 unless set with
//! [`Simulator::set_clock_phase`]). Time starts at 0 with every clock low; clock `d`
//! rises at `φ + k·P` for `k = 1, 2, …` and falls `P / 2` later. Time advances from one
//! rising edge (of any clock) to the next, so logic reading a clock sees it low only
//! before its first rise and when another domain's edge comes between its fall and
//! its next rise; a VCD trace shows every fall. (With one clock and no trace a step
//! therefore does not drive the fall at all.)
//!
//! **Coincident edges are atomic.** When the rising edges of several domains fall on
//! the same picosecond, they are processed as *one* update: every register and read port
//! of all those domains samples, then the memory writes of all of them are applied, then
//! all of them commit — exactly like Verilog non-blocking assignments in one time step.
//! No domain ever sees another domain's values from the same instant.
//!
//! [`Simulator::step`] advances to the next rising edge of the primary domain (the top
//! module's first domain), processing other domains' edges on the way;
//! [`Simulator::step_domain`] does the same for any domain.
//!
//! # Ports, nets and traces
//!
//! Inputs are set by name or through [`PortHandle`]s (values that do not fit are a
//! [`SimError::ValueTooWide`] naming the port); clocks are driven by the simulator;
//! any named net can be read with [`Simulator::peek`]. [`Simulator::trace_vcd`] writes a
//! VCD file with one scope per instance.

#![warn(missing_docs)]

mod built;
pub mod clock;
mod compile;
mod cones;
mod dead;
mod demand;
mod design_key;
mod error;
mod exec;
pub mod flatten;
mod fold;
mod fxhash;
mod gather;
mod instr;
mod jit;
mod kernels;
#[cfg(target_arch = "x86_64")]
mod lanes;
#[cfg(target_arch = "x86_64")]
mod lanes512;
mod layout;
mod levelize;
mod lower;
mod operands;
mod ops;
mod ports;
#[cfg(test)]
mod reference;
mod regs;
mod rewrite;
mod roles;
mod run_forms;
mod runs;
mod schedule;
mod sim;
mod simplify;
mod state;
mod tables;
mod tier;
mod trace;
mod vector;
mod wide;
mod wide_exec;

pub use clock::{Fired, DEFAULT_PERIOD_PS, MAX_DOMAINS};
pub use error::SimError;
pub use flatten::{flatten, FlatDesign};
pub use jit::{
    enable_perf_map, CodeCache, CompileStats, JitError, Malformed, MalformedCommit, PerfMapError,
    MAX_FLAGS, TUNE_AFTER, UNTESTED_FROM,
};
pub use levelize::levelize;
pub use ports::PortHandle;
pub use run_forms::{vector_loops, VectorLoops};
pub use sim::{Backend, DomainHandle, DomainRef, PortInfo, Simulator, Takeover};
pub use trace::TraceSelection;
