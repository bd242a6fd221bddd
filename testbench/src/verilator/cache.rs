//! The build cache: content-hashed directories, a file lock per entry, atomic publication.
//!
//! An entry is a directory `<root>/<key>/` holding one artifact (e.g. `libdut.so`). The
//! artifact only ever appears by `rename` from a private temporary directory inside the
//! entry, so its existence means it is complete: readers need no lock. Builders take an
//! exclusive `flock` on `<key>/.lock` (separate open file descriptions exclude each other,
//! so this serialises threads of one process as well as processes), look again, and only
//! then build.

use std::fs::{self, File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};

use super::{BridgeError, BuildOptions};

/// The cache root: the option if given, else `<target dir>/verilator-cache` (see
/// [`target_dir`](crate::caches::target_dir)).
pub(super) fn root(options: &BuildOptions) -> PathBuf {
    if let Some(dir) = &options.cache_dir {
        return dir.clone();
    }
    crate::caches::target_dir().join("verilator-cache")
}

/// Builds a cache key from length-prefixed fields (so field boundaries cannot shift).
pub(super) struct KeyHasher(Sha256);

impl KeyHasher {
    /// A hasher for keys of kind `domain` (e.g. "model", "runtime").
    pub(super) fn new(domain: &str) -> Self {
        let mut h = Self(Sha256::new());
        h.field(domain.as_bytes());
        h
    }

    /// Adds one field.
    pub(super) fn field(&mut self, bytes: &[u8]) -> &mut Self {
        self.0.update((bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
        self
    }

    /// The key: the first 128 bits of the SHA-256, in hex.
    pub(super) fn finish(self) -> String {
        self.0.finalize()[..16]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

/// Result of [`get_or_build`].
pub(super) struct Artifact {
    /// Path of the published artifact.
    pub path: PathBuf,
    /// It was already there (built earlier, or by a concurrent builder we waited for).
    pub hit: bool,
}

/// Returns `<entry>/<name>`, building it with `build` if it is not there yet.
///
/// `build` gets a fresh private directory and returns the path of the artifact it made
/// inside it; that file is renamed into place and the directory removed (also on error).
pub(super) fn get_or_build(
    entry: &Path,
    name: &str,
    build: impl FnOnce(&Path) -> Result<PathBuf, BridgeError>,
) -> Result<Artifact, BridgeError> {
    let path = entry.join(name);
    if path.is_file() {
        return Ok(Artifact { path, hit: true });
    }
    fs::create_dir_all(entry)
        .map_err(|e| BridgeError::io(format!("creating cache directory {}", entry.display()), e))?;
    let _lock = lock(entry)?;
    if path.is_file() {
        return Ok(Artifact { path, hit: true });
    }
    remove_stale_temps(entry);
    let tmp = fresh_temp_dir(entry)?;
    let result = build(&tmp).and_then(|built| {
        fs::rename(&built, &path).map_err(|e| {
            BridgeError::io(
                format!("moving {} to {}", built.display(), path.display()),
                e,
            )
        })
    });
    // Best effort: a leftover is removed by the next builder of this entry.
    let _ = fs::remove_dir_all(&tmp);
    result.map(|()| Artifact { path, hit: false })
}

/// Takes the exclusive lock of `entry`; released when the returned file is dropped.
fn lock(entry: &Path) -> Result<File, BridgeError> {
    let lock_path = entry.join(".lock");
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| BridgeError::io(format!("opening lock file {}", lock_path.display()), e))?;
    file.lock()
        .map_err(|e| BridgeError::io(format!("locking {}", lock_path.display()), e))?;
    Ok(file)
}

/// Removes temporary directories of builders that died (we hold the lock, so no builder
/// is using them).
fn remove_stale_temps(entry: &Path) {
    let Ok(dir) = fs::read_dir(entry) else { return };
    for e in dir.flatten() {
        if e.file_name().to_string_lossy().starts_with("tmp-") {
            let _ = fs::remove_dir_all(e.path());
        }
    }
}

/// Creates `<entry>/tmp-<pid>-<n>`, unique within this process and across processes.
fn fresh_temp_dir(entry: &Path) -> Result<PathBuf, BridgeError> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let dir = entry.join(format!("tmp-{}-{n}", std::process::id()));
    fs::create_dir(&dir)
        .map_err(|e| BridgeError::io(format!("creating build directory {}", dir.display()), e))?;
    Ok(dir)
}
