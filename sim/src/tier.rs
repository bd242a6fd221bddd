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

/// The compiled engine of one simulator, as far as it has come.
pub(crate) enum Jit {
    /// None: the interpreter runs (chosen, or the host has no Cranelift back end).
    Off,
    /// Being built in the background; the interpreter runs meanwhile.
    Building(JoinHandle<Result<Compiled, JitError>>),
    /// Built: it runs every settle.
    Ready(Box<Compiled>),
    /// Built and running, while the engine tuned from its profile is built in the
    /// background.
    Tuning(Box<Compiled>, JoinHandle<Result<Compiled, JitError>>),
    /// The background build failed (a simulator bug, or a design past the compiled
    /// engine's limits): the interpreter runs, and [`Jit::wait`] reports the error.
    Failed(JitError),
    /// The tuned build failed (a simulator bug): the first engine runs on, and
    /// [`Jit::wait`] reports the error.
    Untuned(Box<Compiled>, JitError),
}

impl Jit {
    /// Starts obtaining the compiled engine of `source` on a background thread (on
    /// this thread if none can be started): loaded from `cache` when it holds it,
    /// else built (and stored there).
    pub fn start(source: Source, cache: Option<&CodeCache>) -> Jit {
        match Self::build(source, Tuning::Profiling, cache) {
            Build::Background(handle) => Jit::Building(handle),
            Build::Done(built) => Jit::done(*built),
        }
    }

    /// Starts obtaining the engine of `source` for `tuning` on a background thread,
    /// or obtains it on this one if no thread can be started.
    fn build(source: Source, tuning: Tuning, cache: Option<&CodeCache>) -> Build {
        // The source goes to the thread once it has started, so that it is still
        // here to build on this thread if the thread cannot be started.
        let (give, take) = std::sync::mpsc::channel::<(Source, Tuning)>();
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
                let (source, tuning) = take.recv().map_err(|e| JitError::Codegen(e.to_string()))?;
                Compiled::obtain(source, tuning, thread_cache.as_ref())
            });
        match spawned {
            Ok(handle) => {
                // Fails only if the thread is gone already, which its join reports.
                let _ = give.send((source, tuning));
                Build::Background(handle)
            }
            Err(_) => Build::Done(Box::new(Compiled::obtain(source, tuning, cache))),
        }
    }

    /// Tunes the running engine from its profile (see [`Compiled::tunable`]):
    /// builds the tuned engine of `source` (the running one's) in the background
    /// if `background`, else at once, and adopts it when it is ready. Nothing
    /// happens unless a profiling engine runs.
    pub fn tune(&mut self, source: Source, cache: Option<&CodeCache>, background: bool) {
        let Jit::Ready(running) = self else { return };
        let Some(tuning) = running.take_profile() else {
            return;
        };
        let build = if background {
            Self::build(source, tuning, cache)
        } else {
            Build::Done(Box::new(Compiled::obtain(source, tuning, cache)))
        };
        let Jit::Ready(running) = std::mem::replace(self, Jit::Off) else {
            unreachable!("matched above");
        };
        *self = match build {
            Build::Background(handle) => Jit::Tuning(running, handle),
            Build::Done(built) => Self::tuned(running, *built),
        };
    }

    /// The state after the tuned build that returned `built` for the `running`
    /// engine: the tuned engine with the running one's flags, or if the build
    /// failed (a simulator bug), the running engine, and the error for
    /// [`Jit::wait`].
    fn tuned(running: Box<Compiled>, built: Result<Compiled, JitError>) -> Jit {
        match built {
            Ok(mut tuned) => {
                tuned.take_over(&running);
                Jit::Ready(Box::new(tuned))
            }
            Err(e) => Jit::Untuned(running, e),
        }
    }

    /// The state after a build that returned `built`: an unsupported host leaves
    /// the interpreter running without error.
    fn done(built: Result<Compiled, JitError>) -> Jit {
        match built {
            Ok(c) => Jit::Ready(Box::new(c)),
            Err(JitError::Host(_)) => Jit::Off,
            Err(e) => Jit::Failed(e),
        }
    }

    /// Adopts a background build that has finished (cheap when it has not: one
    /// atomic load); says which engine took over just now, if one did.
    #[inline]
    pub fn adopt(&mut self) -> Adopted {
        match self {
            Jit::Building(h) if h.is_finished() => {
                self.join();
                match self.ready() {
                    Some(_) => Adopted::First,
                    None => Adopted::Nothing,
                }
            }
            Jit::Tuning(_, h) if h.is_finished() => {
                self.join();
                match self {
                    Jit::Ready(_) => Adopted::Tuned,
                    _ => Adopted::Nothing,
                }
            }
            _ => Adopted::Nothing,
        }
    }

    /// The compiled engine if it is running (no adoption).
    pub fn ready(&self) -> Option<&Compiled> {
        match self {
            Jit::Ready(c) | Jit::Tuning(c, _) | Jit::Untuned(c, _) => Some(c),
            _ => None,
        }
    }

    /// [`ready`](Self::ready), to run it.
    pub fn ready_mut(&mut self) -> Option<&mut Compiled> {
        match self {
            Jit::Ready(c) | Jit::Tuning(c, _) | Jit::Untuned(c, _) => Some(c),
            _ => None,
        }
    }

    /// Waits for a background build (the first engine's or a tuned one's) and
    /// adopts it; the error of a failed build.
    pub fn wait(&mut self) -> Result<(), JitError> {
        self.join();
        match self {
            Jit::Failed(e) | Jit::Untuned(_, e) => Err(e.clone()),
            _ => Ok(()),
        }
    }

    fn join(&mut self) {
        let unwind = |panic| std::panic::resume_unwind(panic);
        *self = match std::mem::replace(self, Jit::Off) {
            Jit::Building(handle) => Jit::done(handle.join().unwrap_or_else(unwind)),
            Jit::Tuning(running, handle) => {
                Self::tuned(running, handle.join().unwrap_or_else(unwind))
            }
            other => other,
        };
    }
}
