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

use crate::jit::{CodeCache, Compiled, JitError, Source};
use std::thread::JoinHandle;

/// The compiled engine of one simulator, as far as it has come.
pub(crate) enum Jit {
    /// None: the interpreter runs (chosen, or the host has no Cranelift back end).
    Off,
    /// Being built in the background; the interpreter runs meanwhile.
    Building(JoinHandle<Result<Compiled, JitError>>),
    /// Built: it runs every settle.
    Ready(Box<Compiled>),
    /// The background build failed (a simulator bug, or a design past the compiled
    /// engine's limits): the interpreter runs, and [`Jit::wait`] reports the error.
    Failed(JitError),
}

impl Jit {
    /// Starts obtaining the compiled engine of `source` on a background thread (on
    /// this thread if none can be started): loaded from `cache` when it holds it,
    /// else built (and stored there).
    pub fn start(source: Source, cache: Option<&CodeCache>) -> Jit {
        // The source goes to the thread once it has started, so that it is still
        // here to build on this thread if the thread cannot be started.
        let (give, take) = std::sync::mpsc::channel::<Source>();
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
                let source = take.recv().map_err(|e| JitError::Codegen(e.to_string()))?;
                Compiled::obtain(source, thread_cache.as_ref())
            });
        match spawned {
            Ok(handle) => {
                // Fails only if the thread is gone already, which its join reports.
                let _ = give.send(source);
                Jit::Building(handle)
            }
            Err(_) => Jit::done(Compiled::obtain(source, cache)),
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
    /// atomic load); true if the compiled engine became ready just now.
    #[inline]
    pub fn adopt(&mut self) -> bool {
        if matches!(self, Jit::Building(h) if h.is_finished()) {
            self.join();
            return self.ready().is_some();
        }
        false
    }

    /// The compiled engine if it is running (no adoption).
    pub fn ready(&self) -> Option<&Compiled> {
        match self {
            Jit::Ready(c) => Some(c),
            _ => None,
        }
    }

    /// [`ready`](Self::ready), to run it.
    pub fn ready_mut(&mut self) -> Option<&mut Compiled> {
        match self {
            Jit::Ready(c) => Some(c),
            _ => None,
        }
    }

    /// Waits for a background build and adopts it; the error of a failed build.
    pub fn wait(&mut self) -> Result<(), JitError> {
        self.join();
        match self {
            Jit::Failed(e) => Err(e.clone()),
            _ => Ok(()),
        }
    }

    fn join(&mut self) {
        if let Jit::Building(_) = self {
            let Jit::Building(handle) = std::mem::replace(self, Jit::Off) else {
                unreachable!("matched above");
            };
            *self = match handle.join() {
                Ok(built) => Jit::done(built),
                Err(panic) => std::panic::resume_unwind(panic),
            };
        }
    }
}
