//! Tiered start: a simulator made with the default engine runs its first cycles on
//! the interpreter, which is ready as soon as the program is, while the compiled
//! engine is built on a background thread; at the first settle after the build
//! finishes, the simulator switches to it. Both engines evaluate the same program
//! over the same storage with bit-identical results (every differential test runs
//! them in lockstep), so the switch changes the speed and nothing else: the time to
//! the first cycle is the front end's, not the front end's plus Cranelift's.
//!
//! With a [`CodeCache`] that holds the engine of the same program, the background
//! thread loads it instead of building it: the first cycle still does not wait, and
//! the interpreter runs only until the load is done (well under a millisecond).
//!
//! That first engine profiles (see [`TUNE_AFTER`](crate::TUNE_AFTER)); once its
//! profile is complete, the engine tuned from it is built on a background thread
//! the same way (or loaded from the cache), while the first engine goes on, and
//! takes over at the first settle after it is ready, with the first engine's
//! activity flags.

use crate::built::Store;
use crate::jit::{CodeCache, Compiled, JitError, Source, Tuning};
use std::thread::JoinHandle;

/// Which engine [`Jit::adopt`] switched to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Adopted {
    /// None: nothing finished.
    Nothing,
    /// The first compiled engine, from the interpreter.
    First,
    /// The tuned engine, from the first.
    Tuned,
}

/// A build of the compiled engine, on a background thread or done.
enum Build {
    Background(JoinHandle<Result<Compiled, JitError>>),
    Done(Box<Result<Compiled, JitError>>),
}

/// The compiled engine of one simulator, as far as it has come: the engine
/// running (none: the interpreter runs), the build in the background (the first
/// engine's while none runs, else the tuned one's), and the error of a failed
/// build. Each settle asks the first two, so each is one pointer test.
pub(crate) struct Jit {
    /// The compiled engine that runs every settle.
    running: Option<Box<Compiled>>,
    /// The build on a background thread: the first engine's (while the
    /// interpreter runs) or the one tuned from the running engine's profile.
    building: Option<JoinHandle<Result<Compiled, JitError>>>,
    /// Why a build failed (a simulator bug, or a design past the compiled
    /// engine's limits): if the first, the interpreter runs; if the tuned one,
    /// the first engine runs on. [`Jit::wait`] reports it.
    failed: Option<JitError>,
}

impl Jit {
    /// No compiled engine: the interpreter runs (chosen, or the host has no
    /// Cranelift back end).
    pub fn off() -> Jit {
        Jit {
            running: None,
            building: None,
            failed: None,
        }
    }

    /// `compiled` runs from the first settle.
    pub fn running(compiled: Compiled) -> Jit {
        Jit {
            running: Some(Box::new(compiled)),
            ..Jit::off()
        }
    }

    /// Starts obtaining the compiled engine of `source` on a background thread (on
    /// this thread if none can be started): loaded from `cache` when it holds it,
    /// else built (and stored there). The thread first writes `store`, the
    /// program on its way into the cache, if there is one.
    pub fn start(source: Source, cache: Option<&CodeCache>, store: Option<Store>) -> Jit {
        let mut jit = Jit::off();
        match Self::build(source, Tuning::Profiling, cache, store) {
            Build::Background(handle) => jit.building = Some(handle),
            Build::Done(built) => _ = jit.first_done(*built),
        }
        jit
    }

    /// Starts obtaining the engine of `source` for `tuning` on a background thread
    /// (which writes `store` first), or does both on this one if no thread can be
    /// started.
    fn build(
        source: Source,
        tuning: Tuning,
        cache: Option<&CodeCache>,
        store: Option<Store>,
    ) -> Build {
        // The source goes to the thread once it has started, so that it is still
        // here to build on this thread if the thread cannot be started.
        let (give, take) = std::sync::mpsc::channel::<(Source, Tuning, Option<Store>)>();
        let thread_cache = cache.cloned();
        let spawned = std::thread::Builder::new()
            .name("wirespeed-jit".into())
            .spawn(move || {
                // Give the core back at once: when the scheduler runs a new thread
                // first, on the starting thread's core, the simulation's first
                // cycles would otherwise wait for it (measured on a 2-core VM: the
                // first `NativeDut::new` of a process took over 0.3 ms in 18–19 of 60
                // runs without this, 9 of 60 with it; median 80 µs either way).
                std::thread::yield_now();
                let (source, tuning, store) =
                    take.recv().map_err(|e| JitError::Codegen(e.to_string()))?;
                if let Some(store) = store {
                    store.write();
                }
                Compiled::obtain(source, tuning, thread_cache.as_ref())
            });
        match spawned {
            Ok(handle) => {
                // Fails only if the thread is gone already, which its join reports.
                let _ = give.send((source, tuning, store));
                Build::Background(handle)
            }
            Err(_) => {
                if let Some(store) = store {
                    store.write();
                }
                Build::Done(Box::new(Compiled::obtain(source, tuning, cache)))
            }
        }
    }

    /// Tunes the running engine from its profile (see [`Compiled::profile_complete`]):
    /// builds the tuned engine of `source` (the running one's) in the background
    /// if `background`, else at once, and adopts it when it is ready. Nothing
    /// happens unless a profiling engine runs and nothing else is being built.
    pub fn tune(&mut self, source: Source, cache: Option<&CodeCache>, background: bool) {
        if self.building.is_some() {
            return;
        }
        let Some(tuning) = self.running.as_mut().and_then(|r| r.take_profile()) else {
            return;
        };
        if background {
            match Self::build(source, tuning, cache, None) {
                Build::Background(handle) => self.building = Some(handle),
                Build::Done(built) => _ = self.tuned_done(*built),
            }
        } else {
            self.tuned_done(Compiled::obtain(source, tuning, cache));
        }
    }

    /// Takes in the first engine's build result (an unsupported host leaves the
    /// interpreter running without error); whether the engine took over.
    fn first_done(&mut self, built: Result<Compiled, JitError>) -> Adopted {
        match built {
            Ok(c) => {
                self.running = Some(Box::new(c));
                return Adopted::First;
            }
            Err(JitError::Host(_)) => {}
            Err(e) => self.failed = Some(e),
        }
        Adopted::Nothing
    }

    /// Takes in the tuned engine's build result: the tuned engine takes over
    /// with the running one's flags, or if the build failed (a simulator bug),
    /// the running engine goes on and the error is kept for [`Jit::wait`].
    fn tuned_done(&mut self, built: Result<Compiled, JitError>) -> Adopted {
        match (built, self.running.as_mut()) {
            (Ok(mut tuned), Some(running)) => {
                tuned.take_over(running);
                **running = tuned;
                Adopted::Tuned
            }
            (Ok(_), None) => unreachable!("a tuned build starts from a running engine"),
            (Err(e), _) => {
                self.failed = Some(e);
                Adopted::Nothing
            }
        }
    }

    /// Adopts a background build that has finished (cheap when there is none: a
    /// pointer test; when one has not finished: one atomic load); says which
    /// engine took over just now, if one did.
    #[inline]
    pub fn adopt(&mut self) -> Adopted {
        match &self.building {
            Some(h) if h.is_finished() => self.join(),
            _ => Adopted::Nothing,
        }
    }

    /// Whether a settle may be left out when none of its steps can run: no build
    /// is waiting to be adopted at a settle, and no running engine counts its
    /// settles for a profile. (The settle would then change neither storage nor
    /// the engines.)
    #[inline]
    pub fn steady(&self) -> bool {
        self.building.is_none() && self.running.as_deref().is_none_or(|c| !c.profiling())
    }

    /// The running compiled engine when the simulator is [`steady`](Self::steady):
    /// nothing to adopt at a settle, no profile to count.
    #[inline]
    pub fn steady_mut(&mut self) -> Option<&mut Compiled> {
        match self.building {
            None => self.running.as_deref_mut().filter(|c| !c.profiling()),
            Some(_) => None,
        }
    }

    /// The compiled engine if it is running (no adoption).
    #[inline]
    pub fn ready(&self) -> Option<&Compiled> {
        self.running.as_deref()
    }

    /// [`ready`](Self::ready), to run it.
    #[inline]
    pub fn ready_mut(&mut self) -> Option<&mut Compiled> {
        self.running.as_deref_mut()
    }

    /// Waits for a background build (the first engine's or a tuned one's) and
    /// adopts it; the error of a failed build.
    pub fn wait(&mut self) -> Result<(), JitError> {
        self.join();
        match &self.failed {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// Waits for the background build, if any, and takes its result in; which
    /// engine took over.
    #[cold]
    fn join(&mut self) -> Adopted {
        let Some(handle) = self.building.take() else {
            return Adopted::Nothing;
        };
        let built = handle
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        match self.running {
            None => self.first_done(built),
            Some(_) => self.tuned_done(built),
        }
    }
}
