//! The [`Simulator`]: construction, time and clock control, reset and tracing.
//! Port and net access live in `ports.rs`.

use crate::built::{Built, Store};
use crate::clock::{Clocks, Fired};
use crate::compile::Program;
use crate::demand::Part;
use crate::design_key::design_digest;
use crate::error::SimError;
use crate::exec;
use crate::flatten::{flatten, FlatDesign};
use crate::fxhash::FxHashMap;
use crate::instr::Span;
use crate::jit::{CodeCache, CompileStats, Compiled, Edge, OneClock, Source, Tuning, TUNE_AFTER};
use crate::state;
use crate::tier::{Adopted, Jit};
use crate::trace::{TraceEntry, TraceSelection, Tracer};
use hdl::ir::{Direction, PortKind};
use hdl::Module;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

static NEXT_SIM: AtomicU64 = AtomicU64::new(1);

/// A top-level port as the simulator sees it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PortInfo {
    /// Port name.
    pub name: String,
    /// Width in bits.
    pub width: u32,
    /// Input or output.
    pub direction: Direction,
    /// Data, clock or reset.
    pub kind: PortKind,
    pub(crate) span: Span,
    /// The sources bit of the port (what setting it makes dirty).
    pub(crate) cone: u64,
    /// Whether a test bench may set it: an input other than a clock.
    pub(crate) settable: bool,
    /// The bits of its top storage word above its width (a value there does not fit).
    pub(crate) above: u64,
}

/// A named net (port, register, wire; of any instance) for `peek` and tracing.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct NamedNet {
    pub name: String,
    pub width: u32,
    pub span: Span,
}

/// A top-level clock domain.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct DomainInfo {
    pub name: String,
    /// Storage of the clock port (its level).
    pub clock: Span,
    /// Storage of the reset port and the value that asserts it.
    pub reset: Option<(u32, u64)>,
    /// What an edge of this clock makes dirty: the domain's state and its clock.
    pub cone: u64,
    /// What driving the reset makes dirty.
    pub reset_cone: u64,
}

/// A pre-resolved clock domain, from [`Simulator::domain_handle`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DomainHandle {
    pub(crate) sim: u64,
    pub(crate) index: u32,
}

impl DomainHandle {
    /// The domain's position in [`Simulator::domain_names`].
    pub fn index(&self) -> usize {
        self.index as usize
    }
}

impl Fired {
    /// True if domain `d` (of the simulator that stepped) rose.
    #[inline]
    pub fn has(self, d: DomainHandle) -> bool {
        self.contains(d.index())
    }
}

/// Something that names a top-level clock domain: its name (`&str`, `String`) or a
/// [`DomainHandle`].
pub trait DomainRef {
    /// The domain's index in `sim`, or an error naming it.
    fn domain_index(&self, sim: &Simulator) -> Result<usize, SimError>;
}

impl DomainRef for &str {
    fn domain_index(&self, sim: &Simulator) -> Result<usize, SimError> {
        sim.domains
            .iter()
            .position(|d| d.name == *self)
            .ok_or_else(|| SimError::UnknownDomain(self.to_string()))
    }
}

impl DomainRef for String {
    fn domain_index(&self, sim: &Simulator) -> Result<usize, SimError> {
        self.as_str().domain_index(sim)
    }
}

impl DomainRef for &String {
    fn domain_index(&self, sim: &Simulator) -> Result<usize, SimError> {
        self.as_str().domain_index(sim)
    }
}

impl DomainRef for DomainHandle {
    fn domain_index(&self, sim: &Simulator) -> Result<usize, SimError> {
        if self.sim != sim.id || self.index as usize >= sim.domains.len() {
            return Err(SimError::ForeignHandle);
        }
        Ok(self.index as usize)
    }
}

/// Which engine evaluates the combinational logic of a [`Simulator`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Backend {
    /// Native code compiled from the program at load time (Cranelift): the fast
    /// engine, where the host has a Cranelift back end (x86-64, AArch64, RISC-V 64,
    /// s390x). [`Simulator::new`] switches to it once its background build is done.
    #[default]
    Compiled,
    /// The interpreter: the reference engine, and the fallback on other hosts.
    Interpreted,
}

impl Backend {
    /// `"compiled"` or `"interpreted"`.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Compiled => "compiled",
            Backend::Interpreted => "interpreted",
        }
    }
}

/// When the compiled engines of a simulator made with a [`CodeCache`] take over
/// (see [`Simulator::with_cache_takeover`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Takeover {
    /// The interpreter runs at once; the compiled engine, and later the one tuned
    /// from its profile, take over at the first settle after their background
    /// builds (or loads from the cache) are done: the quickest start, with the
    /// cycle of each switch depending on the machine's load.
    #[default]
    Background,
    /// Each engine is built, or loaded from the cache, on the calling thread when
    /// it is due, the simulation waiting for it: the compiled engine before the
    /// first cycle, the tuned one at the settle that completes its profile. Every
    /// run of a design then runs each cycle on the same engine, which counted
    /// profiles and measurements of the steady state need.
    Waiting,
}

/// How a simulator's engine comes up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Start {
    /// The interpreter only.
    Interpreted,
    /// The compiled engine, built (or loaded from the cache) before the first
    /// cycle; the tuned one built when its profile is complete.
    Compiled,
    /// The interpreter at once, the compiled engine when its background build is done.
    Tiered,
}

impl Start {
    /// The start that runs `backend` from the first cycle on.
    fn of(backend: Backend) -> Start {
        match backend {
            Backend::Compiled => Start::Compiled,
            Backend::Interpreted => Start::Interpreted,
        }
    }
}

/// A compiled, running simulation of one top module (see the crate documentation
/// for the evaluation and clocking rules).
pub struct Simulator {
    pub(crate) id: u64,
    pub(crate) name: String,
    pub(crate) prog: Arc<Program>,
    /// The compiled engine of `prog.code`, as far as it has come.
    pub(crate) jit: Jit,
    pub(crate) vals: Vec<u64>,
    pub(crate) shadow: Vec<u64>,
    pub(crate) mem: Vec<u64>,
    /// The sources changed since the last settle of the rest (see `cones.rs` and
    /// `demand.rs`).
    pub(crate) dirty: u64,
    /// The sources changed since the last settle of the output part.
    pub(crate) dirty_out: u64,
    /// The sources the steps of each part depend on at all (by [`Part`]): a
    /// change of no other source can make a step of the part run.
    part_masks: [u64; 2],
    pub(crate) ports: Vec<PortInfo>,
    pub(crate) port_index: FxHashMap<String, u32>,
    pub(crate) named: Arc<[NamedNet]>,
    /// `named` by name, built at the first lookup (most simulations never make one).
    net_index: OnceLock<FxHashMap<String, u32>>,
    pub(crate) mem_index: FxHashMap<String, u32>,
    pub(crate) domains: Vec<DomainInfo>,
    pub(crate) clocks: Clocks,
    /// The domains that rose at the last edge.
    pub(crate) fired: Fired,
    pub(crate) steps: u64,
    /// [`cycles`](Self::cycles) when the compiled engine took over.
    compiled_from: Option<u64>,
    /// The program came from a code cache instead of a compile.
    program_cached: bool,
    /// [`cycles`](Self::cycles) when the tuned engine took over.
    tuned_from: Option<u64>,
    /// How the engine came up: a tiered start tunes it in the background too.
    start: Start,
    /// Where compiled engines are kept, if anywhere.
    cache: Option<CodeCache>,
    /// Settles of the rest of the design after which the compiled engine is
    /// tuned from its profile (see [`TUNE_AFTER`]); `u64::MAX`: never.
    tune_after: u64,
    pub(crate) tracer: Option<Tracer>,
    pub(crate) trace_error: Option<std::io::Error>,
}

impl std::fmt::Debug for Simulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulator")
            .field("module", &self.name)
            .field("time_ps", &self.clocks.now)
            .field("instructions", &self.prog.code.instructions())
            .field("steps", &self.prog.code.steps.len())
            .field("storage_words", &self.vals.len())
            .finish()
    }
}

/// What the compiled engine of `prog` is built from: its program and commits, and
/// the words the test bench writes: every port's (none for an output), then
/// every domain's clock and reset (see [`Simulator::changed`]).
fn jit_source(
    prog: &Program,
    ports: &[PortInfo],
    named: &[NamedNet],
    domains: &[DomainInfo],
) -> Source {
    let none = Span { off: 0, words: 0 };
    let mut inputs: Vec<Span> = ports
        .iter()
        .map(|p| match p.direction {
            Direction::Input => p.span,
            _ => none,
        })
        .collect();
    for d in domains {
        inputs.push(d.clock);
        inputs.push(d.reset.map_or(none, |(off, _)| Span { off, words: 1 }));
    }
    Source {
        code: prog.code.clone(),
        words: prog.init.len(),
        edge: Edge {
            domains: prog.domains.clone(),
            mems: prog.mems.clone(),
            shadow_words: prog.shadow_len,
            mem_words: prog.mem_init.len(),
        },
        inputs,
        hidden: hidden_words(prog, ports, named),
    }
}

/// The words of `prog` that only its combinational code reads (see
/// [`Source::hidden`]): every word but those of the ports, of the `named` nets
/// (which traces and peeks read) and those a clock edge reads.
fn hidden_words(prog: &Program, ports: &[PortInfo], named: &[NamedNet]) -> Vec<Span> {
    let mut seen = vec![false; prog.init.len()];
    let edges = (prog.domains.iter()).flat_map(|d| state::edge_reads(d, &prog.mems));
    let spans = (ports.iter().map(|p| p.span))
        .chain(named.iter().map(|n| n.span))
        .chain(edges);
    let len = seen.len();
    for s in spans {
        let start = (s.off as usize).min(len);
        let end = (s.off as usize).saturating_add(s.words as usize).min(len);
        seen[start..end].fill(true);
    }
    let mut hidden = Vec::new();
    let mut off = 0;
    for run in seen.chunk_by(|a, b| a == b) {
        if !run[0] {
            hidden.push(Span {
                off: off as u32,
                words: run.len() as u32,
            });
        }
        off += run.len();
    }
    hidden
}

impl Simulator {
    /// Flattens and compiles `module` for the default engine: the first cycles run on
    /// the interpreter while the compiled engine is built in the background, and the
    /// simulator switches to it as soon as it is ready (see
    /// [`finish_compile`](Self::finish_compile)); on a host the compiled engine does
    /// not support, the interpreter runs throughout. Registers and read data start
    /// at 0, memories at their initial contents, reset inputs at their inactive
    /// level, clocks low with a period of 1000 ps.
    pub fn new(module: &Module) -> Result<Simulator, SimError> {
        Self::build(flatten(module)?, Start::Tiered, None)
    }

    /// [`new`](Self::new) with a [`CodeCache`]: when the cache holds the compiled
    /// engine of this design for this host, the background thread loads it instead
    /// of building it (a load takes a fraction of a build, so the interpreter runs
    /// only the first few cycles); otherwise the engine is built as for
    /// [`new`](Self::new) and stored. A cache that cannot be read or written only
    /// makes every start a first one.
    ///
    /// The cache also keeps the compiled program of every design it has seen (see
    /// [`program_from_cache`](Self::program_from_cache)): a design simulated again
    /// starts without flattening or compiling, as a cached Verilator model starts
    /// without running Verilator. On a miss the program is serialized and written
    /// by the background thread before it builds the compiled engine (so it is in
    /// the cache once [`finish_compile`](Self::finish_compile) returns), not
    /// before the first cycle.
    pub fn with_cache(module: &Module, cache: &CodeCache) -> Result<Simulator, SimError> {
        Self::with_cache_takeover(module, cache, Takeover::Background)
    }

    /// [`with_cache`](Self::with_cache), the compiled engines taking over as
    /// `takeover` says: [`Takeover::Waiting`] builds or loads the compiled engine
    /// before this returns (on a host it does not support, an error) and the tuned
    /// one when its profile is complete.
    pub fn with_cache_takeover(
        module: &Module,
        cache: &CodeCache,
        takeover: Takeover,
    ) -> Result<Simulator, SimError> {
        let start = match takeover {
            Takeover::Background => Start::Tiered,
            Takeover::Waiting => Start::Compiled,
        };
        let entry = cache.program_entry(&design_digest(module));
        if let Some(built) = entry.read().and_then(|bytes| Built::from_bytes(&bytes)) {
            let mut sim = Self::from_built(built, start, Some(cache), None)?;
            sim.program_cached = true;
            return Ok(sim);
        }
        let built = Built::compile(flatten(module)?)?;
        let store = Store::new(entry, &built);
        Self::from_built(built, start, Some(cache), Some(store))
    }

    /// [`new`](Self::new) on the engine `backend` from the first cycle on (the
    /// compiled engine is built before this returns); the compiled engine on a host
    /// it does not support is an error.
    pub fn with_backend(module: &Module, backend: Backend) -> Result<Simulator, SimError> {
        Self::build(flatten(module)?, Start::of(backend), None)
    }

    /// Compiles an already flattened design (see [`flatten`](crate::flatten())) for
    /// the default engine (see [`new`](Self::new)).
    pub fn from_flat(flat: &FlatDesign) -> Result<Simulator, SimError> {
        Self::build(flat.clone(), Start::Tiered, None)
    }

    /// Compiles an already flattened design for the engine `backend` (see
    /// [`with_backend`](Self::with_backend)).
    pub fn from_flat_with(flat: &FlatDesign, backend: Backend) -> Result<Simulator, SimError> {
        Self::build(flat.clone(), Start::of(backend), None)
    }

    /// Compiles `flat`, whose net names move into the simulator; the compiled
    /// engine comes from `cache` when it holds it.
    fn build(
        flat: FlatDesign,
        start: Start,
        cache: Option<&CodeCache>,
    ) -> Result<Simulator, SimError> {
        Self::from_built(Built::compile(flat)?, start, cache, None)
    }

    /// The simulator of a compiled design (just compiled, or loaded from a code
    /// cache); the compiled engine comes from `cache` when it holds it. `store`,
    /// the program on its way into the cache, is written by the compiled engine's
    /// background thread (before the first cycle on any other start).
    fn from_built(
        built: Built,
        start: Start,
        cache: Option<&CodeCache>,
        store: Option<Store>,
    ) -> Result<Simulator, SimError> {
        let Built {
            name,
            prog,
            ports,
            named,
            domains,
        } = built;
        let port_index = ports
            .iter()
            .enumerate()
            .map(|(i, p)| (p.name.clone(), i as u32))
            .collect();
        let mem_index = prog
            .mems
            .iter()
            .enumerate()
            .map(|(i, m)| (m.name.clone(), i as u32))
            .collect();
        let source = || jit_source(&prog, &ports, &named, &domains);
        // Only a tiered start has a background thread to write the program.
        let store = match start {
            Start::Tiered => store,
            _ => {
                if let Some(store) = store {
                    store.write();
                }
                None
            }
        };
        let jit = match start {
            Start::Interpreted => Jit::off(),
            Start::Compiled => Jit::running(Compiled::obtain(source(), Tuning::Profiling, cache)?),
            Start::Tiered => Jit::start(source(), cache, store),
        };
        let compiled_from = jit.ready().map(|_| 0);
        let mut vals = prog.init.clone();
        for d in &domains {
            if let Some((off, level)) = d.reset {
                vals[off as usize] = 1 - level;
            }
        }
        Ok(Simulator {
            id: NEXT_SIM.fetch_add(1, Ordering::Relaxed),
            name,
            shadow: vec![0; prog.shadow_len],
            mem: prog.mem_init.clone(),
            jit,
            vals,
            dirty: u64::MAX,
            dirty_out: u64::MAX,
            part_masks: Part::BOTH.map(|part| part.mask(&prog.code)),
            ports,
            port_index,
            named,
            net_index: OnceLock::new(),
            mem_index,
            clocks: Clocks::new(domains.len()),
            fired: Fired::default(),
            domains,
            steps: 0,
            compiled_from,
            program_cached: false,
            tuned_from: None,
            start,
            cache: cache.cloned(),
            tune_after: TUNE_AFTER,
            tracer: None,
            trace_error: None,
            prog,
        })
    }

    /// The position in `named` of the net called `name`.
    pub(crate) fn named_index(&self, name: &str) -> Option<usize> {
        let index = self.net_index.get_or_init(|| {
            let mut index =
                FxHashMap::with_capacity_and_hasher(self.named.len(), Default::default());
            for (i, n) in self.named.iter().enumerate() {
                index.insert(n.name.clone(), i as u32);
            }
            index
        });
        index.get(name).map(|&i| i as usize)
    }

    /// Name of the simulated top module.
    pub fn module_name(&self) -> &str {
        &self.name
    }

    /// The engine evaluating the logic now (with the default engine: the
    /// interpreter until the compiled engine is ready).
    pub fn backend(&self) -> Backend {
        match self.jit.ready() {
            Some(_) => Backend::Compiled,
            None => Backend::Interpreted,
        }
    }

    /// What the first compiled engine built and how long it took (`None` while
    /// the interpreter runs).
    pub fn compile_stats(&self) -> Option<CompileStats> {
        self.jit.ready().map(Compiled::first_stats)
    }

    /// Once the compiled engine tuned from its profile runs (see
    /// [`set_tune_after`](Self::set_tune_after)): the [`cycles`](Self::cycles)
    /// from which it ran, and what it built ([`CompileStats::tuned`] says how many
    /// partitions it runs untested) and how long that took.
    pub fn tuned_stats(&self) -> Option<(u64, CompileStats)> {
        Some((self.tuned_from?, self.jit.ready()?.stats()))
    }

    /// Waits until the compiled engine being built in the background (see
    /// [`new`](Self::new)), or the one tuned from its profile (see
    /// [`set_tune_after`](Self::set_tune_after)), is ready and switches to it; at
    /// once if there is none.
    /// A failed build (a simulator bug, or a design past the compiled engine's
    /// limits, such as [`MAX_FLAGS`](crate::MAX_FLAGS)) is an error, and the
    /// interpreter goes on (after a failed tuned build: the first engine).
    pub fn finish_compile(&mut self) -> Result<(), SimError> {
        self.jit.wait()?;
        if self.jit.ready().is_some() {
            self.compiled_from.get_or_insert(self.cycles());
        }
        self.note_tuned();
        Ok(())
    }

    /// Notes the cycle from which the tuned engine runs, if it has just taken over.
    fn note_tuned(&mut self) {
        let tuned = self.jit.ready().is_some_and(|c| c.stats().tuned.is_some());
        if tuned && self.tuned_from.is_none() {
            self.tuned_from = Some(self.cycles());
        }
    }

    /// The [`cycles`](Self::cycles) the interpreter had run when the compiled engine
    /// took over (0: it ran from the first settle); `None` while the interpreter
    /// runs. With the build time in [`compile_stats`](Self::compile_stats), it tells
    /// how much of a short run the tiered start spent on the slower engine.
    pub fn compiled_from_cycle(&self) -> Option<u64> {
        self.compiled_from
    }

    /// True if the program came from the code cache given to
    /// [`with_cache`](Self::with_cache) (the design was neither flattened nor
    /// compiled), false if it was compiled here.
    pub fn program_from_cache(&self) -> bool {
        self.program_cached
    }

    /// The top module's ports.
    pub fn ports(&self) -> &[PortInfo] {
        &self.ports
    }

    /// Names of the top-level clock domains; the first is the primary domain.
    pub fn domain_names(&self) -> Vec<&str> {
        self.domains.iter().map(|d| d.name.as_str()).collect()
    }

    /// Settles the combinational logic if an input or a register changed since the
    /// last settle (reads do this by themselves).
    pub fn settle(&mut self) {
        self.settle_outputs();
        if self.dirty != 0 {
            self.settle_part(self.dirty, Part::Rest);
            self.dirty = 0;
        }
    }

    /// Settles the logic the output ports depend on (see `demand.rs`); the rest
    /// stays dirty until the next full settle.
    #[inline]
    pub(crate) fn settle_outputs(&mut self) {
        if self.dirty_out != 0 {
            self.settle_dirty_outputs();
        }
    }

    /// [`settle_outputs`](Self::settle_outputs) once some output is dirty, out of
    /// line, so that a port read whose outputs are settled (every read of a cycle
    /// after the first) runs no call and saves no registers.
    #[inline(never)]
    fn settle_dirty_outputs(&mut self) {
        self.settle_part(self.dirty_out, Part::Outputs);
        self.dirty_out = 0;
    }

    /// Settles `part` after the sources in `dirty` changed, unless none of its
    /// steps depends on them and leaving the settle out changes nothing else
    /// (see [`Jit::steady`]): the outputs of a design whose outputs depend on no
    /// input, say, after the test bench set its inputs.
    #[inline]
    fn settle_part(&mut self, dirty: u64, part: Part) {
        if dirty & self.part_masks[part as usize] != 0 || !self.jit.steady() {
            self.run_part(dirty, part);
        }
    }

    /// Marks the logic depending on the sources in `cone` dirty: the output part
    /// only for the sources it depends on, so that a port read after writes of
    /// inputs no output depends on (every flagship's outputs depend on registers
    /// alone) finds the outputs settled.
    #[inline]
    pub(crate) fn touch(&mut self, cone: u64) {
        self.dirty |= cone;
        self.dirty_out |= cone & self.part_masks[Part::Outputs as usize];
    }

    /// Tells the compiled engine that the test bench changed input `index`: port
    /// `index`, or past the ports, a domain's clock (`2d`) or reset (`2d + 1`).
    #[inline]
    pub(crate) fn changed(&mut self, index: usize) {
        if let Some(c) = self.jit.ready_mut() {
            c.input_changed(index);
        }
    }

    fn run_part(&mut self, dirty: u64, part: Part) {
        match self.jit.adopt() {
            Adopted::Nothing => {}
            Adopted::First => self.compiled_from = Some(self.cycles()),
            Adopted::Tuned => self.note_tuned(),
        }
        match self.jit.ready_mut() {
            Some(c) => {
                c.run(&mut self.vals, dirty, part);
                if c.profiling() {
                    self.profiled();
                }
            }
            None => exec::run(&self.prog.code, &mut self.vals, dirty, part),
        }
    }

    /// After a settle of the profiling engine: opens its profile's window at
    /// cycle [`tune_after`](Self::set_tune_after), and tunes once the window is
    /// complete.
    #[inline(never)]
    fn profiled(&mut self) {
        let cycle = self.cycles();
        if let Some(c) = self.jit.ready_mut() {
            if c.profile_complete(cycle, self.tune_after) {
                self.tune();
            }
        }
    }

    /// Test only: builds the compiled engine now; it takes over from the
    /// interpreter at the next settle, as a tiered start's does once its
    /// background build is done.
    #[cfg(test)]
    pub(crate) fn compile_now(&mut self) {
        let source = jit_source(&self.prog, &self.ports, &self.named, &self.domains);
        let compiled = Compiled::obtain(source, Tuning::Profiling, None).expect("compiles");
        self.jit = Jit::running(compiled);
        self.compiled_from = Some(self.cycles());
    }

    /// Builds the compiled engine again, tuned from its profile (see
    /// [`set_tune_after`](Self::set_tune_after)): in the background after a tiered
    /// start, at once after a compiled one.
    #[cold]
    fn tune(&mut self) {
        let source = jit_source(&self.prog, &self.ports, &self.named, &self.domains);
        let background = self.start == Start::Tiered;
        self.jit.tune(source, self.cache.as_ref(), background);
        self.note_tuned();
    }

    /// Tunes the compiled engine from a profile of `settles` settles of the logic
    /// (about as many cycles) from cycle `settles` on ([`TUNE_AFTER`] unless told
    /// otherwise), or never (`None`): the engine first built tests every
    /// partition of the design before running it and counts its runs in that
    /// window (from its first settle if it took over later), and is then built
    /// again with the partitions that ran in at least
    /// [`UNTESTED_FROM`](crate::UNTESTED_FROM) (58 %) of the settles (of the
    /// cycles, for logic the outputs depend on that settles more often) running
    /// at every settle, untested. The results are the same either way; the tuned engine is
    /// faster when much of the design changes in most cycles. Takes effect while
    /// the first engine profiles (a tuned engine stays as it is).
    pub fn set_tune_after(&mut self, settles: Option<u64>) {
        self.tune_after = settles.unwrap_or(u64::MAX);
    }

    /// Current simulated time in picoseconds (the time of the last processed edge).
    pub fn time_ps(&self) -> u64 {
        self.clocks.now
    }

    /// A pre-resolved handle to domain `name`.
    pub fn domain_handle(&self, name: &str) -> Result<DomainHandle, SimError> {
        let index = name.domain_index(self)?;
        Ok(DomainHandle {
            sim: self.id,
            index: index as u32,
        })
    }

    /// Rising edges domain `d` has had.
    pub fn cycle_count(&self, d: impl DomainRef) -> Result<u64, SimError> {
        let i = d.domain_index(self)?;
        Ok(self.clocks.clocks[i].cycles)
    }

    /// Rising edges of the primary domain; for a module without domains, the number
    /// of [`step`](Self::step) calls.
    pub fn cycles(&self) -> u64 {
        match self.clocks.clocks.first() {
            Some(c) => c.cycles,
            None => self.steps,
        }
    }

    /// Sets the clock period of domain `d` (at least 2 ps); it applies from the next
    /// edge of that clock, counted from its last rising edge.
    pub fn set_clock_period(&mut self, d: impl DomainRef, period_ps: u64) -> Result<(), SimError> {
        let i = d.domain_index(self)?;
        if period_ps < 2 {
            return Err(SimError::BadClockPeriod {
                domain: self.domains[i].name.clone(),
                period: period_ps,
            });
        }
        self.clocks.set_period(i, period_ps);
        Ok(())
    }

    /// Sets the phase offset of domain `d`'s clock: its rising edges come at
    /// `phase + k·period`, k ≥ 1. Only before the clock's first rising edge.
    pub fn set_clock_phase(&mut self, d: impl DomainRef, phase_ps: u64) -> Result<(), SimError> {
        let i = d.domain_index(self)?;
        if self.clocks.clocks[i].last_rise.is_some() {
            return Err(SimError::ClockRunning(self.domains[i].name.clone()));
        }
        self.clocks.set_phase(i, phase_ps);
        Ok(())
    }

    /// Clock period of domain `d` in picoseconds.
    pub fn clock_period(&self, d: impl DomainRef) -> Result<u64, SimError> {
        let i = d.domain_index(self)?;
        Ok(self.clocks.clocks[i].period)
    }

    /// Advances to the next rising edge of the primary domain (the top module's first),
    /// processing every other domain's edges on the way. Without domains: settles and
    /// counts a step.
    pub fn step(&mut self) {
        if self.one_clock() {
            // The only clock's rising edge is the whole step.
            self.advance_one_clock();
            return;
        }
        self.step_other();
    }

    /// [`step`](Self::step) of a design without a clock, with several, or with
    /// an open trace: out of line, so that a one-clock step saves no registers.
    #[inline(never)]
    fn step_other(&mut self) {
        if self.domains.is_empty() {
            self.settle();
            self.steps += 1;
            let now = self.clocks.now;
            self.trace(|t, vals| t.dump(vals, now));
            return;
        }
        self.step_index(0);
    }

    /// [`step`](Self::step) `n` times.
    pub fn step_n(&mut self, n: u64) {
        for _ in 0..n {
            self.step();
        }
    }

    /// Advances to the next rising edge of domain `d`, processing every other domain's
    /// edges on the way.
    pub fn step_domain(&mut self, d: impl DomainRef) -> Result<(), SimError> {
        let i = d.domain_index(self)?;
        self.step_index(i);
        Ok(())
    }

    /// Advances to the next rising edge of any clock and returns the domains that rose
    /// there (several when edges coincide), for test benches that act on every edge of
    /// several clocks; a domain's index is its [`DomainHandle::index`]. With no
    /// domains it behaves like [`step`](Self::step) and returns the empty set.
    pub fn step_edge(&mut self) -> Fired {
        if self.domains.is_empty() {
            self.step();
            return Fired::default();
        }
        self.advance();
        self.fired
    }

    fn step_index(&mut self, d: usize) {
        loop {
            self.advance();
            if self.fired.contains(d) {
                break;
            }
        }
    }

    /// Asserts every top-level domain's reset (respecting its polarity), steps until
    /// every domain has had at least `cycles` rising edges, then deasserts the resets.
    pub fn reset(&mut self, cycles: u64) {
        if self.domains.is_empty() {
            self.settle();
            return;
        }
        self.drive_resets(true);
        let start: Vec<u64> = self.clocks.clocks.iter().map(|c| c.cycles).collect();
        while self
            .clocks
            .clocks
            .iter()
            .zip(&start)
            .any(|(c, s)| c.cycles - s < cycles)
        {
            self.advance();
        }
        self.drive_resets(false);
    }

    fn drive_resets(&mut self, active: bool) {
        let mut cones = 0;
        for d in &self.domains {
            if let Some((off, level)) = d.reset {
                self.vals[off as usize] = if active { level } else { 1 - level };
                cones |= d.reset_cone;
            }
        }
        self.touch(cones);
        for d in 0..self.domains.len() {
            self.changed(self.ports.len() + 2 * d + 1);
        }
    }

    /// Processes the next rising edge of any clock: falling edges before it, then one
    /// atomic update of every domain rising at that instant.
    fn advance(&mut self) {
        if self.one_clock() {
            self.advance_one_clock();
            return;
        }
        let Some(t) = self.clocks.next_rise() else {
            return;
        };
        self.settle();
        let now = self.clocks.now;
        self.trace(|tr, vals| tr.dump(vals, now));
        // Falling edges up to t (those exactly at t are written with the rising edge).
        while let Some(tf) = self.clocks.next_fall_until(t) {
            let fell = self.clocks.fall(tf);
            self.drive_clocks(fell, 0);
            if tf < t {
                self.trace(|tr, vals| tr.dump_clocks(vals, tf));
            }
        }

        let fired = self.clocks.rise(t);
        self.edge(fired);
        self.drive_clocks(fired, 1);
        self.fired = fired;
        if self.tracer.is_some() {
            self.settle();
            self.trace(|tr, vals| tr.dump(vals, t));
        }
    }

    /// Whether the design has one clock domain and no trace is open: the case
    /// of [`advance_one_clock`](Self::advance_one_clock).
    #[inline]
    fn one_clock(&self) -> bool {
        self.domains.len() == 1 && self.tracer.is_none()
    }

    /// [`advance`](Self::advance) for a design with one clock and no open trace,
    /// the common case, in fewer steps. Its fall since its last rise and this rise
    /// lie between two settles, so the logic only ever sees it high (as
    /// `advance` leaves it after every rise): the fall is dropped (the rise
    /// schedules the next), and the rise wakes the clock's readers only when the
    /// clock was low (before the first rise). The schedule and the edge are
    /// `advance`'s. On a steady compiled engine (no build to adopt, no profile
    /// to count) the whole cycle is one call into the engine, which settles the
    /// outputs after the edge too (see [`Compiled::one_clock_cycle`]).
    #[inline(never)]
    fn advance_one_clock(&mut self) {
        let clock = self.the_clock();
        if let Some(c) = self.jit.steady_mut() {
            let dirty = [self.dirty_out, self.dirty];
            let edge_state = (self.mem.as_mut_slice(), self.shadow.as_mut_slice());
            self.dirty =
                c.one_clock_cycle(&mut self.vals, edge_state, dirty, self.part_masks, clock);
            self.dirty_out = 0;
            self.fired = self.clocks.rise_only_clock();
            return;
        }
        self.advance_one_clock_in_steps();
    }

    /// The clock of a design with one clock domain.
    #[inline]
    fn the_clock(&self) -> OneClock {
        OneClock {
            word: self.domains[0].clock.off as usize,
            input: self.ports.len(),
            cone: self.domains[0].cone,
        }
    }

    /// [`advance_one_clock`](Self::advance_one_clock) on the interpreter or on
    /// a compiled engine that is profiling or has a build to adopt: out of line,
    /// so that the one call of a steady engine's cycle saves fewer registers.
    #[inline(never)]
    fn advance_one_clock_in_steps(&mut self) {
        let clock = self.the_clock();
        self.settle();
        let fired = self.clocks.rise_only_clock();
        self.edge(fired);
        self.touch(clock.cone);
        if std::mem::replace(&mut self.vals[clock.word], 1) != 1 {
            self.changed(clock.input);
        }
        self.fired = fired;
    }

    /// The clock edge of the domains `fired` on the running engine: their
    /// registers and read ports sample, memories write, everything commits.
    #[inline(always)]
    fn edge(&mut self, fired: Fired) {
        let (vals, mem, shadow) = (&mut self.vals, &mut self.mem, &mut self.shadow);
        match self.jit.ready_mut() {
            Some(c) => c.edge(fired, vals, mem, shadow),
            None => {
                let state = (self.prog.domains.as_slice(), self.prog.mems.as_slice());
                state::edge(state, fired, vals, mem, shadow)
            }
        }
    }

    /// Sets the clock ports of `domains` to `level` and marks what reads them
    /// (after a rising edge: the domains' state, which the edge updated).
    #[inline(always)]
    fn drive_clocks(&mut self, domains: Fired, level: u64) {
        for d in domains.iter() {
            let (clock, cone) = (self.domains[d].clock.off, self.domains[d].cone);
            self.vals[clock as usize] = level;
            self.touch(cone);
            self.changed(self.ports.len() + 2 * d);
        }
    }

    /// Runs `f` on the open trace, if any; an I/O error closes the trace and is kept
    /// for [`finish_trace`](Self::finish_trace).
    fn trace(&mut self, f: impl FnOnce(&mut Tracer, &[u64]) -> std::io::Result<()>) {
        if let Some(t) = &mut self.tracer {
            if let Err(e) = f(t, &self.vals) {
                self.tracer = None;
                self.trace_error = Some(e);
            }
        }
    }

    /// Starts writing a VCD trace of `selection` (plus the top-level clocks) to `writer`,
    /// beginning with the current values at the current time. An open trace is finished
    /// first. Write errors during simulation close the trace and are reported by
    /// [`finish_trace`](Self::finish_trace).
    ///
    /// Values are written at every rising edge (after the commit), clocks also at their
    /// falling edges; inputs set between two edges appear at the time of the last edge.
    /// Nets sharing storage (aliases, instance ports) share one VCD code.
    pub fn trace_vcd<W: Write + Send + 'static>(
        &mut self,
        writer: W,
        selection: TraceSelection,
    ) -> Result<(), SimError> {
        self.finish_trace()?;
        let mut entries: Vec<TraceEntry> = self
            .ports
            .iter()
            .filter(|p| p.kind == PortKind::Clock)
            .map(|p| TraceEntry {
                name: p.name.clone(),
                span: p.span,
                width: p.width,
                clock: true,
            })
            .collect();
        let clock_names: Vec<String> = entries.iter().map(|e| e.name.clone()).collect();
        let chosen: Vec<&NamedNet> = match &selection {
            TraceSelection::All => self.named.iter().collect(),
            TraceSelection::Names(names) => {
                let mut v = Vec::with_capacity(names.len());
                for n in names {
                    let i = self
                        .named_index(n)
                        .ok_or_else(|| SimError::UnknownNet(n.clone()))?;
                    v.push(&self.named[i]);
                }
                v
            }
        };
        for n in chosen {
            if !clock_names.contains(&n.name) {
                entries.push(TraceEntry {
                    name: n.name.clone(),
                    span: n.span,
                    width: n.width,
                    clock: false,
                });
            }
        }
        self.settle();
        let tracer = Tracer::start(
            Box::new(writer),
            &self.name,
            &entries,
            &self.vals,
            self.clocks.now,
        )?;
        self.tracer = Some(tracer);
        Ok(())
    }

    /// Flushes and closes the VCD trace, if one is open; returns the first write error
    /// the trace met, if any.
    pub fn finish_trace(&mut self) -> Result<(), SimError> {
        let flushed = match self.tracer.take() {
            Some(mut t) => t.flush(),
            None => Ok(()),
        };
        if let Some(e) = self.trace_error.take() {
            return Err(e.into());
        }
        flushed.map_err(SimError::from)
    }
}
