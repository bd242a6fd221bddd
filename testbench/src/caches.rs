//! Where the test bench keeps what it builds once and reuses: Verilator's models
//! and the native simulator's compiled engines, both under the target directory.

use std::path::{Path, PathBuf};

/// `$CARGO_TARGET_DIR` (relative paths taken from the current directory) if set,
/// else `target/` of the workspace this crate belongs to.
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => {
            let dir = PathBuf::from(dir);
            match std::env::current_dir() {
                Ok(cwd) if dir.is_relative() => cwd.join(dir),
                _ => dir,
            }
        }
        _ => Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join("target"),
    }
}

/// The native simulator's cache of compiled programs and engines:
/// `<target dir>/compiled-engine-cache`.
pub fn code_cache() -> sim::CodeCache {
    sim::CodeCache::new(target_dir().join("compiled-engine-cache"))
}
