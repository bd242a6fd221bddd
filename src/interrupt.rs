//! Signals. Ctrl-C (SIGINT): the handler only raises a flag; long commands check it
//! between steps (and `synth` kills its Yosys child), so that their temporary folders
//! are removed and no partial output is left before the process exits. A closed output
//! pipe (SIGPIPE) ends the process quietly, as it ends any Unix filter.

use anyhow::{bail, Context, Result};
use std::sync::atomic::{AtomicBool, Ordering};

/// Raised by the SIGINT handler.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Installs the SIGINT handler (once per process) and hands the flag to the tool
/// runner (`gen::toolchain`), which kills a running tool when it is raised.
pub fn install() -> Result<()> {
    ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::SeqCst))
        .context("installing the Ctrl-C handler")?;
    gen::toolchain::set_cancel_flag(&INTERRUPTED);
    Ok(())
}

/// The flag the handler raises.
pub fn flag() -> &'static AtomicBool {
    &INTERRUPTED
}

/// Whether Ctrl-C was pressed.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// An error if Ctrl-C was pressed (to be called between steps).
pub fn check() -> Result<()> {
    if interrupted() {
        bail!("interrupted; no output was written");
    }
    Ok(())
}

/// Lets a closed output pipe end the process quietly, as it ends `cat` or `grep`
/// (`wirespeed list | head -3`). Rust starts programs with SIGPIPE ignored, so every
/// later `println!` would panic on the broken pipe instead.
pub fn default_sigpipe() {
    #[cfg(unix)]
    // SAFETY: `signal` with `SIG_DFL` installs no handler code and touches no Rust
    // state; it is called first thing in `main`, before any thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
