//! Ctrl-C (SIGINT) handling: the handler only raises a flag; long commands check it
//! between steps (and `synth` kills its Yosys child), so that their temporary folders
//! are removed and no partial output is left before the process exits.

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
