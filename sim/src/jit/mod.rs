//! The compiled engine: the levelized program turned into native code at load time
//! with Cranelift (or loaded from a [`CodeCache`] of earlier runs). Every record
//! becomes a few machine instructions in straight-line code (runs unrolled, each
//! segment of records behind one test of the dirty sources (the tests on the hot
//! path, the segments out of line, see [`emit`]), words already in hand
//! reused instead of reloaded, intermediates nothing else reads left unstored
//! ([`unstored`]), bit fields recomputed by the partitions that read them rather
//! than stored ([`remat`])), cut into functions of at most
//! [`plan::MAX_ITEMS_PER_FUNCTION`] records so compile time stays linear in the
//! design. Long runs of identical instances call the interpreter's vector loops
//! (directly, through a table of their calls);
//! wide data movement, bitwise logic and logical shifts are written inline word
//! by word ([`wide`]), other wide operations call back into the interpreter's
//! word-slice routines. Each
//! clock domain's clock edge is three more functions: its shadowed registers and
//! read ports sampling, its memory writes, and its register commits ([`edge`],
//! [`commit`]). A
//! step runs only when a word it reads changed since it last ran ([`activity`]).
//! Before a function is compiled, the instructions whose results nothing uses,
//! loads included, come out ([`dead_code`]). The interpreter
//! ([`exec`](crate::exec)) stays the reference.
//!
//! # Safety
//!
//! The only `unsafe` is placing the code in memory ([`image`]), calling it, and the
//! callbacks turning their raw arguments back into references. The argument:
//! - [`plan::plan`] checks, before anything is emitted, that every word a record
//!   reads or writes (operands, destinations, the upper word of a two-word slice,
//!   concatenation parts, every span of a wide operation) lies inside storage of
//!   `words` words, and that every wide operation index exists. A program that
//!   fails the check is a [`JitError`], never code.
//! - [`commit::check`] does the same for every word a register commit reads or
//!   writes (register, next value, enable, reset and reset value spans), and
//!   [`edge::check`] for every word a clock edge reads or writes: a shadowed
//!   register's and a memory port's storage spans, their shadow spans within the
//!   shadow buffer, and every word of every memory a port names within memory
//!   storage. A memory word is addressed only at an address the code compared with
//!   the memory's depth first.
//! - The flags are one dirty byte per partition of the program and per register
//!   copy, in the first `w` words of a buffer owned by [`Compiled`] (`w` =
//!   `flag_words(n)` for the flag count `n`: at least `n + 8` bytes); the code
//!   addresses them only as the byte at `flags + i` for the index `i < n` of a
//!   partition or copy of that program (its own, or a reader of a word, from
//!   [`activity::Readers`]), and as the 8 bytes at `flags + i` when `i` is the
//!   first of up to eight consecutive partitions, or copies of one domain,
//!   tested together (so `i ≤ n - 2`, within the first `n + 6` bytes). A
//!   profiling build's code also addresses the word at `flags + 8·(w + p)` for
//!   the flag `p` of a partition or copy: the run counts, which [`Compiled`]
//!   allocates after the flags for such a build (and [`Compiled::take_over`]
//!   copies only the flags).
//! - The emitted code addresses storage only as `base + 8·offset` for those checked
//!   offsets (an edge's [`commit::move_words`] moves only checked spans), or, for
//!   a shift by a net, as `base + 8·(offset + k)` with `k` computed at run time
//!   and masked or clamped below the length of the checked operand span before
//!   the load (see [`emit::Emitter::word_at_run_time`]); for a padded shift by a
//!   net, as `base ∓ 8·q + 8·(offset + j)`, with `j` a constant from −1 to the
//!   result's words and `q` an amount's word count below the result's words or
//!   the one taken for an amount that shifts everything out: the plan checks that
//!   the source's zero words (`layout::shift_pads`, whose bounds cover every
//!   such `q` and `j`) lie inside storage; and
//!   [`Compiled::run`], [`Compiled::edge`] and [`Compiled::one_clock_cycle`]
//!   (both in one call) call it only with `base` and `len`
//!   taken from a live `&mut [u64]` of exactly `words` words (checked), the shadow
//!   buffer and memory storage from live `&mut [u64]`s of the lengths the edge was
//!   checked against (checked), and the flags from `&mut self`, which they do not
//!   touch until the code returns — the code has the only access.
//! - The code is Cranelift's output for those functions, placed by
//!   [`image::Image::load`] in a fresh mapping made executable only after every
//!   callback address is written; the functions are called only through the
//!   entries Cranelift reported, and the mapping lives as long as [`Compiled`].
//! - Code from a [`CodeCache`] is the same bytes: its file is named by a SHA-256
//!   of everything the code depends on (this crate's sources, the host's target
//!   and flags, the program, the tuning), carries a checksum of its contents
//!   ([`cache::checksum`]), and is checked for entries and patches inside its
//!   code. It also carries the summary of the plans it was emitted from
//!   ([`summary`]), which a load takes instead of planning the program again: the
//!   plans' checks above passed when that code was built from this very program.
//!   The summary is checked to fit the program: the function counts of the code,
//!   a run loop for every step its run calls name, one list of flags per input
//!   and every flag below the flag count. The cache directory is trusted as
//!   Verilator's model cache is (whoever can write it can run code, as with any
//!   build directory).
//! - The program the callbacks read (wide operations) is a copy owned by
//!   [`Compiled`], boxed and never changed, so it outlives every call; a callback
//!   gets the index of a wide operation that the plan took from that program. The
//!   callbacks themselves are safe Rust over the storage slice (bounds-checked).
//! - A long run calls its loop ([`RunKernel`](crate::vector::RunKernel)) with the
//!   storage base and its entry in the table of run calls, owned by [`Compiled`],
//!   boxed and never changed; the code addresses the table only at the indices the
//!   plans numbered (fewer than its length), and reads the loop's address from
//!   the entry. Each entry holds the loop chosen for its step's kind and strides,
//!   and the step's count and template record. The loop's contract holds: the plan
//!   checked every word of every instance within storage, and rejects a run whose
//!   operands overlap its destination.
//! - In debug builds (every test) Cranelift's verifier checks every function
//!   before it is compiled; release builds skip it to start sooner.

mod activity;
mod cache;
mod commit;
mod cycle;
mod dead_code;
mod edge;
mod emit;
mod image;
mod partition;
mod perf_map;
mod plan;
mod remat;
mod summary;
mod tune;
mod unstored;
mod vector;
mod wide;

pub use cache::CodeCache;
pub(crate) use cache::{checksum, framed, unframed, Entry, ShaWriter};

pub use commit::MalformedCommit;
pub(crate) use cycle::OneClock;
pub(crate) use edge::Edge;
pub use edge::MalformedEdge;
pub use perf_map::{enable_perf_map, PerfMapError};
pub use plan::Malformed;
pub(crate) use tune::Tuning;
pub use tune::{TUNE_AFTER, UNTESTED_FROM};

use crate::clock::Fired;
use crate::demand::Part;
use crate::exec::Code;
use crate::instr::Span;
use crate::kernels;
use crate::state::{self, DomainState};
use crate::vector::RunCall;
use crate::wide_exec::run_wide;
use cranelift_codegen::control::ControlPlane;
use cranelift_codegen::ir::{
    types::I64, AbiParam, ExtFuncData, ExternalName, FuncRef, Function as ClifFunction,
    InstBuilder, Signature, UserFuncName,
};
use cranelift_codegen::isa::{CallConv, OwnedTargetIsa, TargetIsa};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use image::{Callback, Image};
use remat::Remat;
use std::time::{Duration, Instant};

/// Why the compiled engine could not be built.
#[derive(Clone, Debug, thiserror::Error)]
pub enum JitError {
    /// The host has no Cranelift back end.
    #[error("the compiled engine does not support this host: {0}")]
    Host(String),
    /// The program addresses storage or tables it does not have (a simulator bug).
    #[error("malformed program: {0}")]
    Malformed(#[from] Malformed),
    /// A register commit addresses storage it does not have (a simulator bug).
    #[error("malformed register commits: {0}")]
    MalformedCommit(#[from] MalformedCommit),
    /// A clock edge addresses storage, shadow or memory words it does not have (a
    /// simulator bug).
    #[error("malformed clock edge: {0}")]
    MalformedEdge(#[from] MalformedEdge),
    /// Cranelift rejected a function (a simulator bug).
    #[error("code generation failed: {0}")]
    Codegen(String),
    /// The operating system refused executable memory for the code.
    #[error("placing the compiled code in memory failed: {0}")]
    Memory(String),
    /// The perf map was enabled (see [`enable_perf_map`]) and could not be written.
    #[error(transparent)]
    PerfMap(#[from] PerfMapError),
    /// The design has more partitions and register copies than the code can
    /// address flags for (at most [`MAX_FLAGS`], with the profiling engine's run
    /// counts, one per flag); the interpreter runs it.
    #[error(
        "the design needs {0} activity flags and run counts; the compiled engine \
         addresses at most {MAX_FLAGS}"
    )]
    TooManyFlags(usize),
}

/// The most activity flags (partitions and register copies) an engine can have,
/// with the profiling engine's run counts (one per flag) after them: the
/// emitted code addresses a flag's dirty byte, or a 64-bit count, at a 32-bit
/// byte offset.
pub const MAX_FLAGS: usize = i32::MAX as usize / 8;

/// One emitted function: `(storage base, storage length, dirty sources, program,
/// flags, run calls)`.
type Function = unsafe extern "C" fn(*mut u64, u64, u64, *const Code, *mut u64, *const RunCall);

/// One emitted function of a clock edge (see [`edge`]): `(storage base, memory
/// base, shadow base, flags)`.
type EdgeFunction = unsafe extern "C" fn(*mut u64, *mut u64, *mut u64, *mut u64);

/// What the compiled engine is built from.
#[derive(Clone, Debug, Default, Hash)]
pub(crate) struct Source {
    /// The program.
    pub code: Code,
    /// Storage words.
    pub words: usize,
    /// What a clock edge does.
    pub edge: Edge,
    /// The words the test bench writes (ports, clocks, resets), by the index
    /// [`Compiled::input_changed`] takes.
    pub inputs: Vec<Span>,
    /// Words only the program itself reads: no port, no named net, nothing a
    /// clock edge samples. The emitted code may keep such a word in hand without
    /// storing it (see [`unstored`]); every other word is stored.
    pub hidden: Vec<Span>,
}

/// The callback the emitted code calls for wide operation `index` of `code`.
///
/// # Safety
/// `code` points to a live program with more than `index` wide operations, and
/// `vals` to `len` words that nothing else accesses during the call; every span of
/// the operation lies within them (see the module's safety argument).
unsafe extern "C" fn wide_callback(code: *const Code, index: u64, vals: *mut u64, len: u64) {
    // SAFETY: the caller's contract above, established by `plan::plan` and `run`.
    let (code, vals) = unsafe { (&*code, std::slice::from_raw_parts_mut(vals, len as usize)) };
    run_wide(&code.wide[index as usize], vals);
}

/// How long the compiled engine took to build, and how much it built.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompileStats {
    /// Records emitted as straight-line code (short runs unrolled).
    pub records: usize,
    /// Calls of the interpreter's vector loops (long runs).
    pub runs: usize,
    /// Short runs written inline as vector code, two instances an instruction.
    pub vector_runs: usize,
    /// Native functions.
    pub functions: usize,
    /// Wall time of planning, emitting and compiling (or of loading the code from
    /// a [`CodeCache`]).
    pub time: Duration,
    /// Whether the code came from a [`CodeCache`] instead of Cranelift.
    pub cached: bool,
    /// For an engine tuned from a profile (see [`TUNE_AFTER`]): the partitions
    /// it runs at every settle untested, and all its partitions; `None` for the
    /// first build, which tests every partition and counts their runs.
    pub tuned: Option<(usize, usize)>,
}

/// The program as native code.
pub(crate) struct Compiled {
    /// The code, in executable memory while this lives.
    executable: image::Executable,
    /// One dirty byte per partition and per register copy, in the first
    /// [`flag_words`](Self::flag_words) words: nonzero when a word it reads
    /// changed since it ran (see [`activity`]); while profiling, followed by one
    /// run count per partition and per copy (see [`tune`]).
    flags: Vec<u64>,
    /// The partitions and register copies: the flags.
    flag_count: usize,
    /// The words holding the dirty bytes (the rest of `flags` are run counts).
    flag_words: usize,
    /// The settles counted, while profiling.
    profile: Option<tune::Profile>,
    /// For a tuned engine: the stats of the first, profiling one.
    first: Option<CompileStats>,
    /// The flags each input sets when the test bench changes it.
    input_wake: activity::Fanout,
    /// The program the callbacks read (owned, so it outlives every call).
    code: Box<Code>,
    /// The run calls the emitted code makes, by index (see [`plan::Item::Run`]).
    runs: Box<[RunCall]>,
    words: usize,
    /// Words of the shadow buffer and of memory storage an edge needs.
    edge_words: (usize, usize),
    /// Per [`EdgeGroup`], the domains whose function of that group does anything
    /// (a domain without memories has nothing to write, one without shadowed
    /// state nothing to sample): the others are not called.
    edge_work: [Fired; image::EDGE_GROUPS],
    stats: CompileStats,
}

impl std::fmt::Debug for Compiled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compiled")
            .field("stats", &self.stats)
            .field("words", &self.words)
            .finish()
    }
}

/// A checked source with its plans and the readers of every word: what both a
/// build and a load of the compiled engine start from.
struct Prepared {
    source: Source,
    tuning: Tuning,
    plans: [plan::Plan; 2],
    readers: activity::Readers,
    unstored: unstored::Unstored,
    remat: Remat,
}

impl Prepared {
    /// Plans both parts of `source` (see [`demand`](crate::demand)) and checks its
    /// commits and its clock edge, for a build of `tuning`.
    fn new(source: Source, tuning: Tuning) -> Result<Prepared, JitError> {
        let outputs = plan::plan(&source.code, source.words, Part::Outputs, None)?;
        let rest = plan::plan(&source.code, source.words, Part::Rest, Some(&outputs))?;
        let plans = [outputs, rest];
        commit::check(&source.edge.domains, source.words)?;
        edge::check(&source.edge, source.words)?;
        check_flags(flag_space(
            activity::flags(&plans),
            &source.edge.domains,
            &tuning,
        ))?;
        // The program is checked: its words can be walked.
        let readers = |remat: &Remat| {
            activity::Readers::new(
                &source.code,
                &plans,
                &source.edge.domains,
                source.words,
                remat,
            )
        };
        let remat = Remat::new(&source, &plans, &readers(&Remat::default()));
        let readers = readers(&remat);
        let unstored = unstored::Unstored::new(&source, &plans, &readers, &remat);
        Ok(Prepared {
            source,
            tuning,
            plans,
            readers,
            unstored,
            remat,
        })
    }

    /// Emits and compiles every function for `isa`: each part's list, then one per
    /// clock domain for its direct register copies.
    fn image(&self, isa: &dyn TargetIsa) -> Result<Image, JitError> {
        let mut def = Definer::new(isa);
        let mut image = Image::default();
        let always = self.tuning.always();
        let activity = emit::Activity {
            always,
            counts: (self.tuning == Tuning::Profiling).then(|| {
                flag_words(flag_count(
                    activity::flags(&self.plans),
                    &self.source.edge.domains,
                )) as u32
            }),
        };
        for (group, plan) in self.plans.iter().enumerate() {
            let words = emit::Words {
                readers: &self.readers,
                unstored: &self.unstored,
                remat: &self.remat,
            };
            emit_all(
                &mut def,
                &mut image,
                (&self.source.code, (words, activity)),
                plan,
                group,
            )?;
        }
        let partitions = activity::flags(&self.plans);
        let wakes = (&self.readers, always, partitions);
        emit_edges(
            &mut def,
            &mut image,
            &self.source.edge,
            wakes,
            activity.counts,
        )?;
        image.summary =
            summary::Summary::of(&self.plans, &self.readers, always, &self.source.inputs);
        Ok(image)
    }
}

impl Compiled {
    /// The engine of `source` for `tuning` running `image`, which was built from
    /// that source for that tuning (just now, or stored in a [`CodeCache`] under
    /// their digest): its plans are the image's summary; `started` is when the
    /// build or load began.
    fn assemble(
        (source, tuning): (Source, Tuning),
        image: &Image,
        started: Instant,
        cached: bool,
    ) -> Result<Compiled, JitError> {
        let plans = &image.summary;
        let domains = source.edge.domains.len();
        let expected = [
            plans.parts[0].functions as usize,
            plans.parts[1].functions as usize,
            domains,
            domains,
            domains,
        ];
        let found: [usize; image::GROUPS] = std::array::from_fn(|g| image.functions(g));
        if found != expected {
            return Err(JitError::Codegen(format!(
                "the code has {found:?} functions per group where the program needs {expected:?}"
            )));
        }
        let partitions = plans.partitions();
        let flag_count = flag_count(partitions, &source.edge.domains);
        let space = flag_space(partitions, &source.edge.domains, &tuning);
        check_flags(space)?;
        let wake = &plans.input_wake;
        if wake.len() != source.inputs.len()
            || wake.max_flag().is_some_and(|f| f as usize >= flag_count)
        {
            return Err(JitError::Codegen(format!(
                "the inputs wake {} lists of flags up to {:?} where the program has {} inputs and {flag_count} flags",
                wake.len(),
                wake.max_flag(),
                source.inputs.len()
            )));
        }
        let runs = run_calls(&source.code, plans)?;
        let executable = image.load(tuning.name())?;
        let stats = CompileStats {
            records: plans.total(|p| p.unrolled as usize),
            runs: runs.len(),
            vector_runs: plans.total(|p| p.vector_runs as usize),
            functions: plans.total(|p| p.functions as usize),
            time: started.elapsed(),
            cached,
            tuned: match &tuning {
                Tuning::Profiling => None,
                Tuning::Tuned(always) => Some((always.below(partitions), partitions)),
            },
        };
        // Every flag starts set (the first settle runs everything), every count 0.
        let mut flags = vec![0; space];
        (0..flag_count).for_each(|f| set_flag(&mut flags, f));
        let flag_words = flag_words(flag_count);
        let outputs = plans.parts[0].partitions;
        Ok(Compiled {
            executable,
            flags,
            flag_count,
            flag_words,
            profile: (tuning == Tuning::Profiling)
                .then(|| tune::Profile::new((outputs, partitions as u32), &source.edge.domains)),
            first: None,
            input_wake: wake.clone(),
            code: Box::new(source.code),
            runs,
            words: source.words,
            edge_words: (source.edge.shadow_words, source.edge.mem_words),
            edge_work: edge_work(&source.edge),
            stats,
        })
    }
}

/// The run calls of `plans`, by their index: each step's loop for the compiled
/// engine, its instance count and template record.
fn run_calls(code: &Code, plans: &summary::Summary) -> Result<Box<[RunCall]>, JitError> {
    let steps = plans.parts.iter().flat_map(|p| &p.calls);
    steps
        .map(|&step| {
            let s = code.steps.get(step as usize).ok_or_else(|| {
                JitError::Codegen(format!("a run call names step {step}, past the program's"))
            })?;
            let kernel = kernels::run_kernel(s.kind, s.mode).ok_or_else(|| {
                JitError::Codegen(format!("step {step} ({:?}) has no run loop", s.kind))
            })?;
            Ok(RunCall {
                kernel,
                n: u64::from(s.n),
                rec: code.recs[s.start as usize],
            })
        })
        .collect()
}

impl Compiled {
    /// Compiles the program of `source` for `isa`: both parts (see
    /// [`demand`](crate::demand)), each its own list of functions, and one function
    /// per clock domain for its direct register copies. Keeps the program for the
    /// callbacks. Every step starts flagged, so the first settle runs them all.
    /// Returns the code as an image too (to store in a [`CodeCache`]); `started` is
    /// when obtaining the engine began.
    fn build(
        (source, tuning): (Source, Tuning),
        isa: &dyn TargetIsa,
        started: Instant,
    ) -> Result<(Compiled, Image), JitError> {
        let prepared = Prepared::new(source, tuning)?;
        let image = prepared.image(isa)?;
        let source = (prepared.source, prepared.tuning);
        Ok((Self::assemble(source, &image, started, false)?, image))
    }

    /// The engine of `source` built for `tuning`: from `cache` when it holds it,
    /// else built (and stored there). A store that fails leaves the cache as it
    /// was (the engine is built again next time); the simulation does not depend
    /// on it. Its [`CompileStats::time`] includes the cache's key and file.
    pub fn obtain(
        source: Source,
        tuning: Tuning,
        cache: Option<&CodeCache>,
    ) -> Result<Compiled, JitError> {
        let started = Instant::now();
        let isa = host_isa()?;
        let Some(cache) = cache else {
            let built = Self::build((source, tuning), &*isa, started);
            return built.map(|(compiled, _)| compiled);
        };
        let entry = cache.entry(&source, &tuning, &*isa);
        if let Some(image) = entry.load() {
            commit::check(&source.edge.domains, source.words)?;
            edge::check(&source.edge, source.words)?;
            return Self::assemble((source, tuning), &image, started, true);
        }
        let (compiled, image) = Self::build((source, tuning), &*isa, started)?;
        let _ = entry.store(&image);
        Ok(compiled)
    }

    /// What was compiled, and how long it took.
    pub fn stats(&self) -> CompileStats {
        self.stats
    }

    /// The [`stats`](Self::stats) of the first engine of the program: this one's,
    /// or for a tuned engine, the profiling one's it took over from.
    pub fn first_stats(&self) -> CompileStats {
        self.first.unwrap_or(self.stats)
    }

    /// One settle of `part` after the sources in `dirty` changed (see
    /// [`exec::run`](crate::exec::run)): the partitions whose flag is set run, in
    /// groups of one static mask skipped at once when no source of the mask is
    /// dirty.
    pub fn run(&mut self, vals: &mut [u64], dirty: u64, part: Part) {
        assert_eq!(vals.len(), self.words, "storage of the compiled program");
        if let Some(profile) = &mut self.profile {
            profile.settled(part);
        }
        self.settle(vals, dirty, part);
    }

    /// The clock edge of the domains `fired` (what [`state::edge`](crate::state::edge)
    /// does): every fired domain samples its shadowed registers and read ports,
    /// then applies its memory writes, then commits (the direct registers whose
    /// flag is set, then the shadow buffer), flagging the readers of every
    /// register and read port that changed.
    pub fn edge(&mut self, fired: Fired, vals: &mut [u64], mem: &mut [u64], shadow: &mut [u64]) {
        self.check_edge_storage(vals, mem, shadow);
        if let Some(profile) = &mut self.profile {
            profile.edged(fired);
        }
        for group in [EdgeGroup::Sample, EdgeGroup::Write, EdgeGroup::Commit] {
            for d in fired.intersection(self.edge_work[group as usize]).iter() {
                self.edge_function(group, d, vals, mem, shadow);
            }
        }
    }

    /// The functions of `part` on `vals` after the sources in `dirty` changed:
    /// [`run`](Self::run) once its caller checked `vals`' length.
    #[inline(always)]
    fn settle(&mut self, vals: &mut [u64], dirty: u64, part: Part) {
        let (base, len) = (vals.as_mut_ptr(), vals.len() as u64);
        let flags = self.flags.as_mut_ptr();
        for f in &self.executable.settle[part as usize] {
            // SAFETY: see the module's safety argument; `base` and `len` come from
            // `vals`, of the length the program was checked against (by the
            // caller), `flags` has a word for every step, and neither is used
            // until the calls return.
            unsafe { f(base, len, dirty, &*self.code, flags, self.runs.as_ptr()) };
        }
    }

    /// Asserts that storage, memory and the shadow buffer have the lengths the
    /// edge functions were checked against.
    #[inline(always)]
    fn check_edge_storage(&self, vals: &[u64], mem: &[u64], shadow: &[u64]) {
        assert_eq!(vals.len(), self.words, "storage of the compiled program");
        assert_eq!(
            (shadow.len(), mem.len()),
            self.edge_words,
            "shadow and memory words of the compiled program"
        );
    }

    /// Domain `d`'s edge function of `group`, once its caller made
    /// [`check_edge_storage`](Self::check_edge_storage).
    #[inline(always)]
    fn edge_function(
        &mut self,
        group: EdgeGroup,
        d: usize,
        vals: &mut [u64],
        mem: &mut [u64],
        shadow: &mut [u64],
    ) {
        let f = self.executable.edge[group as usize][d];
        // SAFETY: as for `run`; an edge function reads and writes only the
        // words `commit::check` and `edge::check` found within storage, the
        // shadow buffer and memory storage (a memory word only at an
        // address below the memory's depth, compared first), of the
        // lengths the caller asserted, and flags of copies and of readers.
        unsafe {
            f(
                vals.as_mut_ptr(),
                mem.as_mut_ptr(),
                shadow.as_mut_ptr(),
                self.flags.as_mut_ptr(),
            )
        };
    }

    /// Whether the engine counts its settles and partition runs for a profile.
    #[inline]
    pub fn profiling(&self) -> bool {
        self.profile.is_some()
    }

    /// After a settle at cycle `cycle` of a profiling engine: opens its profile's
    /// window after its first settle at or after cycle `after`, dropping the runs,
    /// settles and edges counted until then (see [`TUNE_AFTER`]), and says
    /// whether the window has since counted `after` settles of the rest of the
    /// design: the profile is complete. False for an engine that does not
    /// profile.
    pub fn profile_complete(&mut self, cycle: u64, after: u64) -> bool {
        let Some(profile) = &mut self.profile else {
            return false;
        };
        if profile.is_open() {
            return profile.rest_settles() >= after;
        }
        if cycle >= after {
            profile.open();
            self.flags[self.flag_words..].fill(0);
        }
        false
    }

    /// The tuning of a build from the profile so far (`None` if the engine does
    /// not profile); the engine then stops profiling (its code goes on counting,
    /// unread).
    pub fn take_profile(&mut self) -> Option<Tuning> {
        let profile = self.profile.take()?;
        Some(Tuning::Tuned(
            profile.always(&self.flags[self.flag_words..]),
        ))
    }

    /// Takes over from `running`, an engine of the same program running until now:
    /// its dirty bytes, which say what changed since each partition last ran
    /// (and the first engine's stats).
    pub fn take_over(&mut self, running: &Compiled) {
        assert_eq!(
            self.flag_count, running.flag_count,
            "engines of one program"
        );
        let n = self.flag_words;
        self.flags[..n].copy_from_slice(&running.flags[..n]);
        self.first = Some(running.first_stats());
    }

    /// Flags the readers of input `index` (see [`Source::inputs`]), whose value
    /// the test bench changed.
    #[inline]
    pub fn input_changed(&mut self, index: usize) {
        for &s in self.input_wake.get(index) {
            set_flag(&mut self.flags, s as usize);
        }
    }
}

#[cfg(test)]
impl Compiled {
    /// The engine of `source`, built (no cache), profiling.
    fn new(source: Source) -> Result<Compiled, JitError> {
        Self::obtain(source, Tuning::Profiling, None)
    }

    /// [`run`](Self::run) of both parts: a whole settle.
    fn run_all(&mut self, vals: &mut [u64], dirty: u64) {
        for part in Part::BOTH {
            self.run(vals, dirty, part);
        }
    }
}

/// The domains of `edge` whose function of each [`EdgeGroup`] has work to do.
fn edge_work(edge: &Edge) -> [Fired; image::EDGE_GROUPS] {
    let domains = |has: fn(&DomainState) -> bool| -> Fired {
        let with = edge.domains.iter().enumerate().filter(|(_, d)| has(d));
        with.map(|(i, _)| i).collect()
    };
    let mut work = [Fired::default(); image::EDGE_GROUPS];
    work[EdgeGroup::Sample as usize] = domains(samples);
    work[EdgeGroup::Write as usize] = domains(|d| !d.writes.is_empty());
    work[EdgeGroup::Commit as usize] = domains(|d| !d.copies.is_empty() || samples(d));
    work
}

/// Whether domain `d` samples anything into the shadow buffer at its edge
/// (shadowed registers, read ports), which its commit then takes.
fn samples(d: &DomainState) -> bool {
    !d.regs.is_empty() || !d.reads.is_empty()
}

/// The edge functions of a clock domain, by their group after the settle's (see
/// [`image::EDGE_GROUPS`]).
#[derive(Clone, Copy, Debug)]
enum EdgeGroup {
    /// Its direct register copies, then the commit of its shadow buffer.
    Commit,
    /// Its shadowed registers and read ports sampling.
    Sample,
    /// Its memory writes.
    Write,
}

/// An error unless the emitted code can address `flags` activity flags.
fn check_flags(flags: usize) -> Result<(), JitError> {
    if flags > MAX_FLAGS {
        return Err(JitError::TooManyFlags(flags));
    }
    Ok(())
}

/// The activity flags of `plans` and of the register copies of `domains`: one per
/// partition, then one per copy.
fn flag_count(partitions: usize, domains: &[DomainState]) -> usize {
    partitions + domains.iter().map(|d| d.copies.len()).sum::<usize>()
}

/// The words holding `flags` dirty bytes, one byte a flag, padded so that the
/// eight bytes a group test loads from any flag lie within them.
fn flag_words(flags: usize) -> usize {
    (flags + 8).div_ceil(8)
}

/// Sets flag `flag`'s dirty byte in `flags`: byte `flag` of the words in memory
/// order, as the emitted code addresses it, set by a shift and an OR on the
/// host's byte order (the test bench's every changed input comes here).
#[inline]
fn set_flag(flags: &mut [u64], flag: usize) {
    let byte = if cfg!(target_endian = "little") {
        flag % 8
    } else {
        7 - flag % 8
    };
    flags[flag / 8] |= 1 << (8 * byte);
}

/// The words the code addresses from the flags: the [`flag_words`] of the
/// [`flag_count`], and while profiling a run count per partition and per copy
/// after them.
fn flag_space(partitions: usize, domains: &[DomainState], tuning: &Tuning) -> usize {
    let flags = flag_count(partitions, domains);
    let counts = match tuning {
        Tuning::Profiling => flags,
        Tuning::Tuned(_) => 0,
    };
    flag_words(flags) + counts
}

/// The host's code generator, set up for the compiled engine: code that is not
/// position-independent (see [`image`]), unoptimized by Cranelift.
fn host_isa() -> Result<OwnedTargetIsa, JitError> {
    let mut flags = settings::builder();
    let set = |flags: &mut settings::Builder, k: &str, v: &str| {
        flags
            .set(k, v)
            .map_err(|e| JitError::Codegen(format!("setting {k}={v}: {e}")))
    };
    set(&mut flags, "use_colocated_libcalls", "false")?;
    set(&mut flags, "is_pic", "false")?;
    // The verifier in debug builds (every test); release builds skip it to start
    // sooner. Cranelift's own optimizer finds little in straight-line code whose
    // operands are already folded and shared: measured on PANAMA, "none" runs as
    // fast as "speed" and compiles in 17 instead of 28 ms.
    let verify = if cfg!(debug_assertions) {
        "true"
    } else {
        "false"
    };
    set(&mut flags, "enable_verifier", verify)?;
    set(&mut flags, "opt_level", "none")?;
    cranelift_native::builder()
        .map_err(|e| JitError::Host(e.to_string()))?
        .finish(settings::Flags::new(flags))
        .map_err(|e| JitError::Host(e.to_string()))
}

/// Emits and compiles the compiled engine's native functions into an [`Image`]:
/// a settle group's of the signature of [`Function`], an edge group's of that of
/// [`EdgeFunction`].
struct Definer<'a> {
    isa: &'a dyn TargetIsa,
    ctx: cranelift_codegen::Context,
    fctx: FunctionBuilderContext,
}

impl<'a> Definer<'a> {
    fn new(isa: &'a dyn TargetIsa) -> Definer<'a> {
        Definer {
            isa,
            ctx: cranelift_codegen::Context::new(),
            fctx: FunctionBuilderContext::new(),
        }
    }

    /// The signature of the functions of `group`: `PARAMS` or `EDGE_PARAMS` words.
    fn signature(&self, group: usize) -> Signature {
        let mut sig = Signature::new(self.isa.default_call_conv());
        let params = if group < image::PARTS {
            emit::PARAMS
        } else {
            edge::EDGE_PARAMS
        };
        sig.params
            .extend(std::iter::repeat_n(AbiParam::new(I64), params));
        sig
    }

    /// Compiles the function `name` (number `number` of `group`) into `image`;
    /// `emit` writes its body from its entry block (current, with the parameters)
    /// on, given the calling convention of callbacks.
    fn define(
        &mut self,
        image: &mut Image,
        name: &str,
        (group, number): (usize, u32),
        emit: impl FnOnce(&mut FunctionBuilder, CallConv),
    ) -> Result<(), JitError> {
        let sig = self.signature(group);
        let call_conv = sig.call_conv;
        self.ctx.func =
            ClifFunction::with_name_signature(UserFuncName::user(group as u32, number), sig);
        {
            let mut b = FunctionBuilder::new(&mut self.ctx.func, &mut self.fctx);
            let entry = b.create_block();
            b.append_block_params_for_function_params(entry);
            b.switch_to_block(entry);
            b.seal_block(entry);
            emit(&mut b, call_conv);
            b.finalize();
        }
        dead_code::drop_dead_code(&mut self.ctx.func);
        self.ctx
            .compile(self.isa, &mut ControlPlane::default())
            .map_err(|e| JitError::Codegen(format!("function {name}: {:?}", e.inner)))?;
        let compiled = self.ctx.compiled_code().expect("compiled just now");
        image.push(group, compiled, &self.ctx.func.params, name)?;
        self.ctx.clear();
        Ok(())
    }
}

/// A reference from the function `b` builds to `callback`, which takes `params`
/// words and returns `returns` in the calling convention `call_conv`.
fn import(
    b: &mut FunctionBuilder,
    call_conv: CallConv,
    callback: Callback,
    (params, returns): (usize, usize),
) -> FuncRef {
    let mut sig = Signature::new(call_conv);
    sig.params
        .extend(std::iter::repeat_n(AbiParam::new(I64), params));
    sig.returns
        .extend(std::iter::repeat_n(AbiParam::new(I64), returns));
    let signature = b.import_signature(sig);
    let name = b.func.declare_imported_user_function(callback.name());
    b.import_function(ExtFuncData {
        name: ExternalName::user(name),
        signature,
        colocated: false,
    })
}

/// The signature of a [`RunKernel`](crate::vector::RunKernel) in the calling
/// convention `call_conv`: `(storage base, run call)`.
fn run_signature(call_conv: CallConv) -> Signature {
    let mut sig = Signature::new(call_conv);
    sig.params.extend([AbiParam::new(I64); 2]);
    sig
}

/// Emits and compiles every function of `plan` over `code` (with what it knows
/// of each of its `words`) into `group` of `image`.
fn emit_all(
    def: &mut Definer,
    image: &mut Image,
    (code, words): (&Code, (emit::Words, emit::Activity)),
    plan: &plan::Plan,
    group: usize,
) -> Result<(), JitError> {
    for (k, segments) in plan.functions.iter().enumerate() {
        let name = format!("settle{group}_{k}");
        def.define(image, &name, (group, k as u32), |b, call_conv| {
            let calls = emit::Callbacks {
                wide: import(b, call_conv, Callback::Wide, (4, 0)),
                run: b.import_signature(run_signature(call_conv)),
            };
            emit::Emitter::new(b, code, calls, words).body(segments, &plan.items);
        })?;
    }
    Ok(())
}

/// Emits and compiles the edge functions of every domain of `edge` into `image`:
/// its commit (waking the `readers` of the registers it changes, but those that
/// run `always`; the copies' flags follow the `partitions`'; the copies that run
/// `always` untested, the others counting their runs from index `counts` while
/// profiling), its sample and its writes.
fn emit_edges(
    def: &mut Definer,
    image: &mut Image,
    edge: &Edge,
    (readers, always, partitions): (&activity::Readers, &tune::Always, usize),
    counts: Option<u32>,
) -> Result<(), JitError> {
    let group = |g: EdgeGroup| image::PARTS + g as usize;
    let mut first = 0;
    for (d, dom) in edge.domains.iter().enumerate() {
        let state = (dom, edge.mems.as_slice());
        let copied = dom.copies.iter().map(|c| Span {
            off: c.dst,
            words: c.len,
        });
        let wake = activity::Fanout::of_spans(readers, always, copied);
        let shadowed =
            state::shadow_entries(dom, &edge.mems).map(|(off, _, words)| Span { off, words });
        let shadow_wake = activity::Fanout::of_spans(readers, always, shadowed);
        let at = (group(EdgeGroup::Commit), d as u32);
        def.define(image, &format!("commit{d}"), at, |b, call_conv| {
            let entry = b.current_block().expect("the entry block is current");
            let params = b.block_params(entry).to_vec();
            let moves = import(b, call_conv, Callback::Move, (3, 1));
            let domain = commit::Copies {
                copies: &dom.copies,
                first_flag: (partitions + first) as u32,
                wake: &wake,
                always,
                counts,
            };
            commit::body(b, &domain, moves);
            edge::commit_shadow(b, state, &params, &shadow_wake);
            b.ins().return_(&[]);
        })?;
        let at = (group(EdgeGroup::Sample), d as u32);
        def.define(image, &format!("sample{d}"), at, |b, call_conv| {
            let moves = import(b, call_conv, Callback::Move, (3, 1));
            edge::sample_body(b, state, moves);
        })?;
        let at = (group(EdgeGroup::Write), d as u32);
        def.define(image, &format!("write{d}"), at, |b, call_conv| {
            let moves = import(b, call_conv, Callback::Move, (3, 1));
            edge::write_body(b, state, moves);
        })?;
        first += dom.copies.len();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::instr::{Kind, Mode, Rec, Step, Tag};
    use crate::state::{DirectCopy, DomainState};
    use rand::{Rng, SeedableRng};

    #[test]
    fn every_flag_up_to_the_bound_is_addressable_and_one_more_is_an_error() {
        assert!(check_flags(MAX_FLAGS).is_ok());
        // The last flag's byte offset fits the code's 32-bit displacement.
        assert!(emit::flag_at(u32::try_from(MAX_FLAGS - 1).unwrap()) > 0);
        let err = check_flags(MAX_FLAGS + 1).unwrap_err();
        assert!(matches!(err, JitError::TooManyFlags(n) if n == MAX_FLAGS + 1));
        assert!(err.to_string().contains(&(MAX_FLAGS + 1).to_string()));
    }

    /// Flag `f` is byte `f` of the flags' words, as the emitted code addresses it,
    /// and the words hold the eight bytes a group test loads from any flag.
    #[test]
    fn the_flags_are_bytes_padded_for_a_group_test_from_any_flag() {
        for n in 0..40 {
            let words = flag_words(n);
            assert!(words * 8 >= n + 8, "{n} flags in {words} words");
            let mut flags = vec![0u64; words];
            for f in 0..n {
                set_flag(&mut flags, f);
                let bytes: Vec<u8> = flags.iter().flat_map(|w| w.to_ne_bytes()).collect();
                let (set, clear) = bytes.split_at(f + 1);
                assert!(set.iter().all(|&b| b == 1), "flags up to {f} of {n}");
                assert!(clear.iter().all(|&b| b == 0), "flags past {f} of {n}");
            }
        }
    }

    /// Clock domains with the direct register `copies` (one list per domain) and
    /// no other state.
    fn edge_of(copies: &[Vec<DirectCopy>]) -> Edge {
        let domain = |c: &Vec<DirectCopy>| DomainState {
            copies: c.clone(),
            ..DomainState::default()
        };
        Edge {
            domains: copies.iter().map(domain).collect(),
            ..Edge::default()
        }
    }

    impl Compiled {
        /// The clock edge of domain `d` alone, which has no shadowed state.
        fn commit(&mut self, vals: &mut [u64], d: usize) {
            self.edge([d].into_iter().collect(), vals, &mut [], &mut []);
        }
    }

    /// The compiled engine of `code` and the direct register `copies` over `words`
    /// storage words, without input words.
    fn compile(code: Code, copies: &[Vec<DirectCopy>], words: usize) -> Result<Compiled, JitError> {
        Compiled::new(Source {
            code,
            words,
            edge: edge_of(copies),
            ..Source::default()
        })
    }

    /// A register copy `w[dst..dst + len] <= w[src..src + len]`, always enabled,
    /// without reset.
    pub(super) fn plain_copy(dst: u32, src: u32, len: u32) -> DirectCopy {
        DirectCopy {
            dst,
            src,
            len,
            broadcast: false,
            enable: crate::state::NONE,
            reset: crate::state::NONE,
            reset_level: 1,
            reset_value: crate::state::NONE,
        }
    }

    /// A program of one gathered `Or` step per `(d, a, b)` (`w[d] = w[a] | w[b]`),
    /// each of source mask `mask`.
    pub(super) fn ors(recs: &[(u32, u32, u32)], mask: u64) -> Code {
        let steps = (0..recs.len() as u32)
            .map(|start| Step {
                kind: Kind::Or,
                mode: Mode::Gather,
                start,
                n: 1,
                mask,
            })
            .collect();
        let tags = vec![
            Tag {
                kind: Kind::Or,
                mask
            };
            recs.len()
        ];
        let recs = recs
            .iter()
            .map(|&(d, a, b)| Rec {
                d,
                a,
                b,
                ..Rec::default()
            })
            .collect();
        Code::new((steps, recs, tags), Vec::new(), Vec::new())
    }

    /// A program of one step of `kind` over `recs` in `mode`.
    fn program(kind: Kind, mode: Mode, recs: Vec<Rec>, n: u32) -> Code {
        let tags = vec![Tag { kind, mask: 1 }; recs.len()];
        Code::new(
            (
                vec![Step {
                    kind,
                    mode,
                    start: 0,
                    n,
                    mask: 1,
                }],
                recs,
                tags,
            ),
            vec![(3, 0), (4, 17), (5, 40)],
            Vec::new(),
        )
    }

    /// Storage where operands respect the record's width contract.
    fn storage(kind: Kind, r: &Rec, rng: &mut impl Rng) -> Vec<u64> {
        let mut vals: Vec<u64> = (0..96)
            .map(|_| match rng.gen_range(0..4) {
                0 => rng.gen_range(0..70),
                _ => rng.gen(),
            })
            .collect();
        let width = match kind {
            Kind::LtS | Kind::LeS => Some(64 - r.c),
            Kind::Lz | Kind::SraV | Kind::RedAnd => Some(if kind == Kind::RedAnd {
                64 - r.k.leading_zeros()
            } else {
                r.c
            }),
            Kind::CatN => Some(17),
            _ => None,
        };
        if let Some(w) = width {
            let m = crate::wide::last_mask(w.max(1));
            vals.iter_mut().take(64).for_each(|v| *v &= m);
        }
        if kind == Kind::SraV {
            vals.iter_mut().take(64).for_each(|v| *v %= 80);
        }
        vals
    }

    /// Every narrow kind, as gathered records: the compiled engine computes what
    /// the interpreter computes.
    #[test]
    fn every_kind_matches_the_interpreter() {
        let kinds = Kind::NARROW;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        for kind in kinds {
            for trial in 0..200 {
                let n = rng.gen_range(1..8u32);
                // One set of parameters (one operand width) per trial; operands in
                // words 0..64, results from 64.
                let t = Rec::random_params(kind, &mut rng);
                let recs: Vec<Rec> = (0..n)
                    .map(|j| {
                        let mut r = Rec { d: 64 + j, ..t };
                        let offs = kind.offsets();
                        for (field, is_offset) in
                            [&mut r.a, &mut r.b, &mut r.c].into_iter().zip(offs)
                        {
                            if is_offset {
                                *field = rng.gen_range(0..63);
                            }
                        }
                        r
                    })
                    .collect();
                let code = program(kind, Mode::Gather, recs.clone(), n);
                let vals = storage(kind, &recs[0], &mut rng);
                let (mut want, mut got) = (vals.clone(), vals);
                crate::exec::run_all(&code, &mut want, 1);
                compile(code.clone(), &[], got.len())
                    .expect("compiles")
                    .run_all(&mut got, 1);
                assert_eq!(got, want, "{kind:?} trial {trial}: {recs:?}");
            }
        }
    }

    /// Every kind that runs, as long runs of every operand stride and of every
    /// length from 8 to 31 and one random length past [`vector::MAX_INLINE`]:
    /// up to that limit, vector code where the kind has a vector form (see
    /// [`vector`]; an odd length ends in a scalar record), past it a called loop
    /// (the explicit AVX2 loops take sixteen words per iteration, then eight and
    /// four, then a masked rest: the lengths from 17 to 31 take every way out).
    /// The compiled engine computes what the interpreter computes, and each run
    /// took the form it should.
    #[test]
    fn every_run_matches_the_interpreter() {
        let kinds = Kind::NARROW.into_iter().filter(|k| k.vectorizes());
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(13);
        let first = plan::MIN_RUN_CALL;
        let mut vector_cases = 0;
        for kind in kinds {
            let lengths = first..=4 * first;
            for (strides, n) in (0..8u8).flat_map(|s| lengths.clone().map(move |n| (s, n))) {
                let n = if n == 4 * first {
                    rng.gen_range(vector::MAX_INLINE + 1..64)
                } else {
                    n
                };
                // Operands from words 0, 100 and 200, results from 300.
                let t = kernels::test_run_template(kind, &mut rng);
                let code = program(kind, Mode::Run { strides }, vec![t], n);
                let vals = kernels::test_run_storage(kind, &t, &mut rng);
                let (mut want, mut got) = (vals.clone(), vals);
                crate::exec::run_all(&code, &mut want, 1);
                let inline = vector::inlines(&code.steps[0]);
                let mut compiled = compile(code, &[], got.len()).expect("compiles");
                let stats = compiled.stats();
                let (vector, called) = (usize::from(inline), usize::from(!inline));
                vector_cases += vector;
                assert_eq!(stats.vector_runs, vector, "{kind:?} n {n}: vector code");
                assert_eq!(stats.runs, called, "{kind:?} n {n}: a call");
                compiled.run_all(&mut got, 1);
                assert_eq!(got, want, "{kind:?} strides {strides:03b} n {n}: {t:?}");
            }
        }
        // 17 kinds at 8 strides and 9 lengths (8 to 16) are vector code.
        assert_eq!(vector_cases, 17 * 8 * 9);
    }

    /// An engine loaded from the code cache plans nothing: its plans are the
    /// summary stored with its code, and it is the engine that was built (the
    /// same counts, flags, input wakes and run calls, and the same results), for
    /// the profiling build and a tuned one.
    #[test]
    fn a_loaded_engine_is_the_one_built() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(21);
        let kind = Kind::Xor;
        let t = kernels::test_run_template(kind, &mut rng);
        let code = program(kind, Mode::Run { strides: 0b011 }, vec![t], 40);
        let vals = kernels::test_run_storage(kind, &t, &mut rng);
        let source = Source {
            code,
            words: vals.len(),
            edge: edge_of(&[vec![plain_copy(1, 300, 2)]]),
            inputs: vec![
                Span { off: 0, words: 4 },
                Span {
                    off: 100,
                    words: 40,
                },
            ],
            ..Source::default()
        };
        let dir = tempfile::tempdir().expect("a temporary directory");
        let cache = CodeCache::new(dir.path());
        let tunings = [
            Tuning::Profiling,
            Tuning::Tuned(tune::Always::from_flags(&[0])),
        ];
        for tuning in tunings {
            let built = Compiled::obtain(source.clone(), tuning.clone(), Some(&cache));
            let loaded = Compiled::obtain(source.clone(), tuning.clone(), Some(&cache));
            let (mut built, mut loaded) = (built.expect("built"), loaded.expect("loaded"));
            let (b, l) = (built.stats(), loaded.stats());
            assert!(!b.cached && l.cached, "{tuning:?}: built, then loaded");
            let timeless = |s: CompileStats| CompileStats {
                time: Duration::ZERO,
                cached: false,
                ..s
            };
            assert_eq!(timeless(b), timeless(l), "{tuning:?}");
            assert_eq!(b.runs, 1, "a called loop");
            assert_eq!(built.flags, loaded.flags, "{tuning:?}");
            assert_eq!(built.flag_count, loaded.flag_count, "{tuning:?}");
            assert_eq!(built.flag_words, loaded.flag_words, "{tuning:?}");
            assert_eq!(built.input_wake, loaded.input_wake, "{tuning:?}");
            assert_eq!(built.input_wake.len(), 2);
            let call = |c: &Compiled| (c.runs.len(), c.runs[0].n, c.runs[0].rec);
            assert_eq!(call(&built), call(&loaded), "{tuning:?}");
            let (mut want, mut got) = (vals.clone(), vals.clone());
            for round in 0..3 {
                want[100 + round] ^= 0x5a5a;
                got[100 + round] ^= 0x5a5a;
                built.input_changed(1);
                loaded.input_changed(1);
                built.run_all(&mut want, 1);
                loaded.run_all(&mut got, 1);
                built.commit(&mut want, 0);
                loaded.commit(&mut got, 0);
                assert_eq!(got, want, "{tuning:?}, round {round}");
            }
        }
    }

    /// A summary that does not fit its program (a run call past its steps, an
    /// input waking a flag past its flags, inputs it does not have) is an error
    /// when the engine is assembled, before its code runs.
    #[test]
    fn a_summary_that_does_not_fit_the_program_is_an_error() {
        let source = or_of_input(4, vec![plain_copy(2, 1, 1)]);
        let isa = host_isa().expect("a host ISA");
        let prepared = Prepared::new(source.clone(), Tuning::Profiling).expect("plans");
        let image = prepared.image(&*isa).expect("compiles");
        let assemble = |image: &Image| {
            Compiled::assemble(
                (source.clone(), Tuning::Profiling),
                image,
                Instant::now(),
                true,
            )
        };
        assert!(assemble(&image).is_ok());
        let broken = |change: &dyn Fn(&mut summary::Summary)| {
            let mut image = image.clone();
            change(&mut image.summary);
            assemble(&image).expect_err("refused").to_string()
        };
        let call = broken(&|s| s.parts[1].calls.push(7));
        assert!(call.contains("step 7"), "{call}");
        let wake = broken(&|s| {
            s.input_wake = activity::Fanout::from_parts(vec![0, 1], vec![99]).expect("fits")
        });
        assert!(wake.contains("up to Some(99)"), "{wake}");
        let inputs = broken(&|s| s.input_wake = activity::Fanout::default());
        assert!(inputs.contains("1 inputs"), "{inputs}");
        let functions = broken(&|s| s.parts[0].functions += 1);
        assert!(functions.contains("functions per group"), "{functions}");
    }

    /// A hidden field that another partition reads is recomputed there from its
    /// source, never stored, and its reader wakes when the source changes; a field
    /// that is not hidden is stored.
    #[test]
    fn fields_read_by_other_partitions_are_recomputed_there() {
        // w1 = (w0 >> 8) & 0xff (feeding an output: its own partition), then
        // w2 = w1 | w1; w0 is input 0.
        let field = Rec {
            d: 1,
            b: 8,
            k: 0xff,
            ..Rec::default()
        };
        let or = Rec {
            d: 2,
            a: 1,
            b: 1,
            ..Rec::default()
        };
        let step = |kind, start| Step {
            kind,
            mode: Mode::Gather,
            start,
            n: 1,
            mask: 1,
        };
        let tag = |kind| Tag { kind, mask: 1 };
        let code = || {
            let mut code = Code::new(
                (
                    vec![step(Kind::Field, 0), step(Kind::Or, 1)],
                    vec![field, or],
                    vec![tag(Kind::Field), tag(Kind::Or)],
                ),
                Vec::new(),
                Vec::new(),
            );
            code.outputs = vec![true, false];
            code
        };
        let engine = |hidden: Vec<Span>| {
            Compiled::new(Source {
                code: code(),
                words: 3,
                inputs: vec![Span { off: 0, words: 1 }],
                hidden,
                ..Source::default()
            })
            .expect("compiles")
        };
        let mut compiled = engine(vec![Span { off: 1, words: 1 }]);
        let mut vals = vec![0xab00, 0, 0];
        compiled.run_all(&mut vals, u64::MAX);
        assert_eq!(vals, [0xab00, 0, 0xab], "the reader computes the field");
        vals[0] = 0xcd00;
        compiled.input_changed(0);
        compiled.run_all(&mut vals, 1);
        assert_eq!(vals, [0xcd00, 0, 0xcd], "a change of its source wakes it");
        let mut stored = engine(Vec::new());
        let mut vals = vec![0xab00, 0, 0];
        stored.run_all(&mut vals, u64::MAX);
        assert_eq!(vals, [0xab00, 0xab, 0xab], "a field not hidden is stored");
    }

    /// A step runs at the first settle, then only when an input it reads changed
    /// or a step before it changed a word it reads.
    #[test]
    fn steps_run_when_what_they_read_changed() {
        // w2 = w0 | w1, then w3 = w2 | w2; w0 is input 0, of source bit 2 (the
        // steps depend on it and on source bit 0). The first step feeds an
        // output (so the two are partitions of different parts).
        let mut code = ors(&[(2, 0, 1), (3, 2, 2)], 0b101);
        code.outputs = vec![true, false];
        let mut compiled = Compiled::new(Source {
            code,
            words: 4,
            inputs: vec![Span { off: 0, words: 1 }],
            ..Source::default()
        })
        .expect("compiles");
        let mut vals = vec![1, 2, 0, 0];
        compiled.run_all(&mut vals, u64::MAX);
        assert_eq!(vals, [1, 2, 3, 3], "the first settle runs every step");
        vals[0] = 4;
        compiled.run_all(&mut vals, 0b1);
        assert_eq!(vals, [4, 2, 3, 3], "an unannounced input wakes nothing");
        compiled.input_changed(0);
        compiled.run_all(&mut vals, 0b100);
        assert_eq!(
            vals,
            [4, 2, 6, 6],
            "the input wakes its reader, which wakes the next"
        );
        vals[1] = 2;
        vals[3] = 0;
        compiled.input_changed(0);
        compiled.run_all(&mut vals, 0b100);
        assert_eq!(vals, [4, 2, 6, 0], "an unchanged result wakes nothing");
    }

    /// A hidden word that only later records of its own partition read stays in
    /// hand, unstored; one that another partition or a register copy reads, or
    /// that is not hidden, is stored.
    #[test]
    fn hidden_words_read_only_in_their_partition_stay_unstored() {
        // w2 = w0 | w1, then w3 = w2 | w0: one partition.
        let chain = || ors(&[(2, 0, 1), (3, 2, 0)], 1);
        let hidden = vec![Span { off: 2, words: 1 }];
        let settle = |source: Source| {
            let mut compiled = Compiled::new(source).expect("compiles");
            let mut vals = vec![1, 2, 0, 0, 0];
            compiled.run_all(&mut vals, u64::MAX);
            vals
        };
        let source = |code: Code, copies: Vec<Vec<DirectCopy>>, hidden: Vec<Span>| Source {
            code,
            words: 5,
            edge: edge_of(&copies),
            hidden,
            ..Source::default()
        };
        let mut vals = settle(source(chain(), Vec::new(), hidden.clone()));
        assert_eq!(vals[..4], [1, 2, 0, 3], "w3 from w2 in hand, w2 unstored");
        vals = settle(source(chain(), Vec::new(), Vec::new()));
        assert_eq!(vals[..4], [1, 2, 3, 3], "a word not hidden is stored");
        let mut split = chain();
        split.outputs = vec![true, false];
        vals = settle(source(split, Vec::new(), hidden.clone()));
        assert_eq!(vals[..4], [1, 2, 3, 3], "read by another partition");
        vals = settle(source(chain(), vec![vec![plain_copy(4, 2, 1)]], hidden));
        assert_eq!(vals[..4], [1, 2, 3, 3], "read by a register copy");
    }

    /// A random direct copy over storage of `words` words: any length (past the
    /// unrolling limit too), broadcast or not, with and without enable and reset,
    /// next values that may overlap the register's own words.
    fn random_copy(rng: &mut impl Rng, words: u32) -> DirectCopy {
        let len = [1, 2, 3, 8, 64, 65, 100][rng.gen_range(0..7)];
        let broadcast = len > 1 && rng.gen_bool(0.2);
        let dst = rng.gen_range(0..words - len);
        let src = match rng.gen_range(0..3) {
            0 => dst.saturating_sub(rng.gen_range(0..4)),
            1 => (dst + rng.gen_range(0..4)).min(words - len),
            _ => rng.gen_range(0..words - len),
        };
        let optional = |rng: &mut dyn rand::RngCore, span: u32| {
            if rng.gen_bool(0.5) {
                rng.gen_range(0..words - span)
            } else {
                crate::state::NONE
            }
        };
        let enable = optional(rng, 1);
        let reset = optional(rng, 1);
        DirectCopy {
            dst,
            src,
            len,
            broadcast,
            enable,
            reset,
            reset_level: rng.gen_range(0..2),
            reset_value: if reset == crate::state::NONE {
                crate::state::NONE
            } else {
                rng.gen_range(0..words - len)
            },
        }
    }

    /// `n` random words, each a single bit (an enable, a reset) with probability
    /// `bits`.
    fn random_storage(rng: &mut impl Rng, n: usize, bits: f64) -> Vec<u64> {
        (0..n)
            .map(|_| {
                if rng.gen_bool(bits) {
                    rng.gen_range(0..2)
                } else {
                    rng.gen()
                }
            })
            .collect()
    }

    /// One to five random direct copies over storage of `words` words.
    fn random_copies(rng: &mut impl Rng, words: u32) -> Vec<DirectCopy> {
        (0..rng.gen_range(1..6))
            .map(|_| random_copy(rng, words))
            .collect()
    }

    /// The compiled register commits do what the interpreter's do.
    #[test]
    fn commits_match_the_interpreter() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let words = 300;
        for trial in 0..300 {
            let copies = random_copies(&mut rng, words);
            let vals = random_storage(&mut rng, words as usize, 0.3);
            let mut want = vals.clone();
            crate::state::commit_copies(&copies, &mut want);
            let mut compiled = compile(Code::default(), &[Vec::new(), copies.clone()], vals.len())
                .expect("compiles");
            let mut got = vals;
            compiled.commit(&mut got, 1);
            assert_eq!(got, want, "trial {trial}: {copies:?}");
        }
    }

    /// The program `w1 = w0 | w0` (w0 is input 0) over `words` storage words,
    /// with one clock domain of the direct register `copies`.
    fn or_of_input(words: usize, copies: Vec<DirectCopy>) -> Source {
        let rec = Rec {
            d: 1,
            a: 0,
            b: 0,
            ..Rec::default()
        };
        Source {
            code: program(Kind::Or, Mode::Gather, vec![rec], 1),
            words,
            edge: edge_of(&[copies]),
            inputs: vec![Span { off: 0, words: 1 }],
            ..Source::default()
        }
    }

    /// A register copy runs at the first commit, then only when an input it reads
    /// changed or a step changed its next value.
    #[test]
    fn copies_run_when_what_they_read_changed() {
        // Registers w2 <= w1 and w3 <= w0.
        let copies = vec![plain_copy(2, 1, 1), plain_copy(3, 0, 1)];
        let mut compiled = Compiled::new(or_of_input(4, copies)).expect("compiles");
        let mut vals = vec![5, 0, 0, 0];
        compiled.run_all(&mut vals, u64::MAX);
        compiled.commit(&mut vals, 0);
        assert_eq!(vals, [5, 5, 5, 5], "the first commit runs every copy");
        vals[0] = 6;
        compiled.run_all(&mut vals, 1);
        compiled.commit(&mut vals, 0);
        assert_eq!(vals, [6, 5, 5, 5], "an unannounced change wakes nothing");
        compiled.input_changed(0);
        compiled.run_all(&mut vals, 1);
        assert_eq!(vals, [6, 6, 5, 5], "the input wakes the step");
        compiled.commit(&mut vals, 0);
        assert_eq!(
            vals,
            [6, 6, 6, 6],
            "the input wakes its register, the step's change the other"
        );
    }

    /// A copy that ran at most of its domain's edges while profiling runs untested
    /// in the tuned engine, one that never ran keeps its test, and the tuned
    /// engine commits what the profiling one does.
    #[test]
    fn copies_that_ran_at_most_edges_run_untested_after_tuning() {
        // Registers w2 <= w1 and w4 <= w3 (w3 is never written).
        let source = or_of_input(5, vec![plain_copy(2, 1, 1), plain_copy(4, 3, 1)]);
        let cycle = |c: &mut Compiled, vals: &mut Vec<u64>, input: u64| {
            if vals[0] != input {
                vals[0] = input;
                c.input_changed(0);
            }
            c.run_all(vals, 1);
            c.commit(vals, 0);
        };
        let mut profiling = Compiled::new(source.clone()).expect("compiles");
        let mut vals = vec![0, 0, 0, 7, 0];
        for i in 1..=10 {
            cycle(&mut profiling, &mut vals, i);
        }
        let Some(Tuning::Tuned(always)) = profiling.take_profile() else {
            panic!("a profiling engine gives a tuning");
        };
        let (changing, still) = (
            profiling.flag_count as u32 - 2,
            profiling.flag_count as u32 - 1,
        );
        assert!(always.has(changing), "w2's copy ran at every edge");
        assert!(!always.has(still), "w4's copy ran only at the first");
        let mut tuned = Compiled::obtain(source, Tuning::Tuned(always), None).expect("compiles");
        tuned.take_over(&profiling);
        let mut want = vals.clone();
        for (i, input) in [11, 11, 12, 12, 12, 13].into_iter().enumerate() {
            cycle(&mut profiling, &mut want, input);
            cycle(&mut tuned, &mut vals, input);
            assert_eq!(vals, want, "cycle {i} after tuning");
        }
        assert_eq!(vals, [13, 13, 13, 7, 7]);
    }

    /// A register commit wakes the readers of every register that changed, and
    /// none when no register changed or was reset (copies up to the unrolling
    /// limit).
    #[test]
    fn commits_wake_the_readers_of_changed_registers() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(6);
        let words = 300;
        for trial in 0..300 {
            let copies = random_copies(&mut rng, words);
            // One reader step per copy, of its first and last words, writing past
            // the registers' storage.
            let readers: Vec<(u32, u32, u32)> = copies
                .iter()
                .enumerate()
                .map(|(i, c)| (words + i as u32, c.dst, c.dst + c.len - 1))
                .collect();
            let code = ors(&readers, 1);
            let recs = code.recs.clone();
            let total = words as usize + recs.len();
            let mut vals = random_storage(&mut rng, total, 0.5);
            let mut compiled =
                compile(code, std::slice::from_ref(&copies), total).expect("compiles");
            compiled.run_all(&mut vals, u64::MAX);
            let before = vals.clone();
            compiled.commit(&mut vals, 0);
            // Mark every reader's result, then settle: a reader that runs
            // overwrites its mark.
            const MARK: u64 = 0xdead_beef;
            vals[words as usize..].fill(MARK);
            compiled.run_all(&mut vals, 1);
            let mut any_ran = false;
            for (s, r) in recs.iter().enumerate() {
                let got = vals[r.d as usize];
                let changed = [r.a, r.b]
                    .iter()
                    .any(|&w| vals[w as usize] != before[w as usize]);
                assert!(
                    got != MARK || !changed,
                    "trial {trial}: reader {s} missed a change: {copies:?}"
                );
                if got != MARK {
                    assert_eq!(
                        got,
                        vals[r.a as usize] | vals[r.b as usize],
                        "trial {trial}"
                    );
                    any_ran = true;
                }
            }
            // A commit that changes nothing and resets nothing wakes nothing
            // (overlapping registers may change and change back, and a moved
            // copy counts as changed: left out).
            let disjoint = copies.iter().enumerate().all(|(i, c)| {
                c.len <= commit::MAX_UNROLLED
                    && copies[i + 1..]
                        .iter()
                        .all(|o| o.dst + o.len <= c.dst || c.dst + c.len <= o.dst)
            });
            let reset = copies.iter().any(|c| {
                c.reset != crate::state::NONE && before[c.reset as usize] & 1 == c.reset_level
            });
            if disjoint && !reset && vals[..words as usize] == before[..words as usize] {
                assert!(!any_ran, "trial {trial}: a reader ran without a change");
            }
        }
    }

    /// Programs that address words they do not have are errors, never code.
    #[test]
    fn malformed_programs_are_errors() {
        let or = |d, a, b| Rec {
            d,
            a,
            b,
            ..Rec::default()
        };
        let bad = [
            (
                program(Kind::Or, Mode::Gather, vec![or(9, 0, 1)], 1),
                "destination word 9",
            ),
            (
                program(Kind::Or, Mode::Gather, vec![or(2, 0, 7)], 1),
                "operand word 7",
            ),
            (
                program(Kind::Or, Mode::Gather, vec![or(2, 0, 1)], 2),
                "records 0..2",
            ),
            (
                program(Kind::Or, Mode::Run { strides: 1 }, vec![or(1, 0, 0)], 3),
                "destination word 3",
            ),
            (
                program(Kind::Slice2, Mode::Gather, vec![or(0, 2, 1)], 1),
                "upper operand word 3",
            ),
            (
                program(Kind::Or, Mode::Run { strides: 1 }, vec![or(2, 0, 0)], 8),
                "destination word 3",
            ),
            (
                program(Kind::Wide, Mode::Gather, vec![or(0, 0, 0)], 1),
                "wide operation 0 of 0",
            ),
        ];
        for (code, what) in bad {
            let err = compile(code, &[], 3).expect_err("malformed").to_string();
            assert!(err.contains(what), "`{err}` should name {what}");
        }
        // A padded shift whose source has no room below it for its zero words.
        let mut shift = program(Kind::Wide, Mode::Gather, vec![or(0, 0, 0)], 1);
        let span = |off, words| Span { off, words };
        shift.wide.push(crate::instr::WideOp::Shift {
            op: hdl::ir::ShiftOp::Left,
            dst: span(5, 2),
            src: span(1, 2),
            width: 128,
            amount: crate::instr::Amount::Net(span(3, 1)),
            mask: u64::MAX,
            padded: true,
        });
        let err = compile(shift, &[], 8).expect_err("malformed").to_string();
        assert!(
            err.contains("zero words around padded shift source 1+2 are outside storage"),
            "{err}"
        );
        // A run whose loop would read words it writes (within storage).
        let overlapping = program(Kind::Or, Mode::Run { strides: 1 }, vec![or(4, 0, 0)], 8);
        let err = compile(overlapping, &[], 16)
            .expect_err("malformed")
            .to_string();
        assert!(
            err.contains("run operand 0 (words 0+8) overlaps its destination (words 4+8)"),
            "{err}"
        );
        let err = compile(Code::default(), &[vec![plain_copy(1, 0, 2)]], 2)
            .expect_err("malformed")
            .to_string();
        assert!(
            err.contains("commit 0 of domain 0 register words 1+2"),
            "{err}"
        );
        // A shadowed register past the shadow buffer, a write port past memory.
        let reg = crate::state::RegSample {
            q: 0,
            next: 1,
            enable: crate::state::NONE,
            reset: crate::state::NONE,
            reset_level: 1,
            reset_value: crate::state::NONE,
            shadow: 5,
            words: 1,
        };
        let mem = crate::state::MemLayout {
            name: "m".into(),
            base: 4,
            depth: 4,
            words: 1,
            width: 8,
        };
        let write = crate::state::WritePort {
            mem: 0,
            addr: 0,
            addr_words: 1,
            enable: 1,
            data: 2,
        };
        let bad_edges = [
            (
                DomainState {
                    regs: vec![reg],
                    ..DomainState::default()
                },
                "register 0 of domain 0 addresses shadow words 5+1, outside 2 words",
            ),
            (
                DomainState {
                    writes: vec![write],
                    ..DomainState::default()
                },
                "write port 0 of domain 0 names memory 0, whose words end at 8, outside 6 words",
            ),
        ];
        for (domain, what) in bad_edges {
            let err = Compiled::new(Source {
                words: 3,
                edge: Edge {
                    domains: vec![domain],
                    mems: vec![mem.clone()],
                    shadow_words: 2,
                    mem_words: 6,
                },
                ..Source::default()
            })
            .expect_err("malformed")
            .to_string();
            assert!(err.contains(what), "`{err}` should name {what}");
        }
    }
}
