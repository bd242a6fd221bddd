//! The build cache: content-hashed directories, a file lock per entry, atomic publication.
//!
//! An entry is a directory `<root>/<key>/` holding one artifact (e.g. `libdut.so`). The
//! artifact only ever appears by `rename` from a private temporary directory inside the
//! entry, so its existence means it is complete: readers need no lock. Builders take an
//! exclusive `flock` on `<key>/.lock` (separate open file descriptions exclude each other,
//! so this serialises threads of one process as well as processes), look again, and only
//! then build.
//!
//! The cache is bounded: after each build the entries used longest ago (by the time of
//! their newest file; a hit renews its artifact's) are removed until the rest take at
//! most the budget ([`BuildOptions::cache_budget`](super::BuildOptions::cache_budget)).
//! An entry is removed only under its lock, so never while it is being built, and the
//! entry just built is kept whatever the budget; a directory without a lock file is not
//! an entry and is left. A model already loaded from a removed entry keeps running (its
//! file is unlinked, not unmapped).

use std::fs::{self, File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

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
/// After a build, the cache (the entry's parent) is pruned to `budget` bytes.
pub(super) fn get_or_build(
    entry: &Path,
    name: &str,
    budget: u64,
    build: impl FnOnce(&Path) -> Result<PathBuf, BridgeError>,
) -> Result<Artifact, BridgeError> {
    let path = entry.join(name);
    if path.is_file() {
        return Ok(hit(path));
    }
    let create = || {
        fs::create_dir_all(entry).map_err(|e| {
            BridgeError::io(format!("creating cache directory {}", entry.display()), e)
        })
    };
    create()?;
    let _lock = lock(entry)?;
    if path.is_file() {
        return Ok(hit(path));
    }
    // A pruner may have removed the entry while this builder waited for its lock.
    create()?;
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
    result?;
    if let Some(root) = entry.parent() {
        prune(root, budget, entry);
    }
    Ok(Artifact { path, hit: false })
}

/// A hit on the artifact at `path`, whose time is renewed so pruning keeps it longest.
fn hit(path: PathBuf) -> Artifact {
    if let Ok(file) = OpenOptions::new().write(true).open(&path) {
        let _ = file.set_modified(SystemTime::now());
    }
    Artifact { path, hit: true }
}

/// The bytes of the files under `dir` and the time of the newest one (the lock file
/// aside: it is touched by every builder, hit or not).
fn usage(dir: &Path) -> (u64, SystemTime) {
    let (mut bytes, mut used) = (0, SystemTime::UNIX_EPOCH);
    for e in fs::read_dir(dir).into_iter().flatten().flatten() {
        let Ok(meta) = e.metadata() else { continue };
        if meta.is_dir() {
            let (b, u) = usage(&e.path());
            bytes += b;
            used = used.max(u);
        } else if e.file_name() != ".lock" {
            bytes += meta.len();
            used = used.max(meta.modified().unwrap_or(used));
        }
    }
    (bytes, used)
}

/// Removes the entries of `root` used longest ago until they take at most `budget`
/// bytes, never `keep` and never an entry another builder holds locked. Best effort:
/// an entry that cannot be locked or removed is left.
fn prune(root: &Path, budget: u64, keep: &Path) {
    let mut entries: Vec<(SystemTime, u64, PathBuf)> = fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| {
            let (bytes, used) = usage(&e.path());
            (used, bytes, e.path())
        })
        .collect();
    let mut total: u64 = entries.iter().map(|(_, bytes, _)| bytes).sum();
    entries.sort();
    for (_, bytes, path) in entries {
        if total <= budget {
            break;
        }
        if path == keep {
            continue;
        }
        let Ok(file) = OpenOptions::new().write(true).open(path.join(".lock")) else {
            continue;
        };
        if file.try_lock().is_ok() && fs::remove_dir_all(&path).is_ok() {
            total -= bytes;
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// An entry `name` of `root` holding an artifact of `bytes` bytes last used
    /// `age_s` seconds ago, and its lock file.
    fn entry(root: &Path, name: &str, bytes: usize, age_s: u64) -> PathBuf {
        let dir = root.join(name);
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join(".lock"), b"").unwrap();
        let artifact = dir.join("libdut.so");
        fs::write(&artifact, vec![0u8; bytes]).unwrap();
        let when = SystemTime::now() - Duration::from_secs(age_s);
        File::options()
            .write(true)
            .open(&artifact)
            .unwrap()
            .set_modified(when)
            .unwrap();
        dir
    }

    /// The names in `root`, sorted.
    fn entries(root: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(root)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn pruning_drops_the_entries_used_longest_ago_but_not_a_locked_one() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path();
        let oldest = entry(root, "a-oldest", 100, 4000);
        entry(root, "b-old", 100, 3000);
        entry(root, "c-recent", 100, 100);
        let newest = entry(root, "d-newest", 100, 0);
        // Another builder holds the oldest entry's lock: it stays.
        let held = File::options()
            .write(true)
            .open(oldest.join(".lock"))
            .unwrap();
        held.lock().unwrap();
        prune(root, 300, &newest);
        assert_eq!(entries(root), ["a-oldest", "c-recent", "d-newest"]);
        drop(held);
        // A hit renews an entry: the oldest now outlives the recent one.
        hit(oldest.join("libdut.so"));
        prune(root, 200, &newest);
        assert_eq!(entries(root), ["a-oldest", "d-newest"]);
        // The entry just built stays even when it alone is over budget.
        prune(root, 0, &newest);
        assert_eq!(entries(root), ["d-newest"]);
    }

    #[test]
    fn a_build_prunes_its_cache_to_the_budget() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path();
        entry(root, "old", 1000, 3600);
        let built = get_or_build(&root.join("new"), "libdut.so", 1500, |tmp| {
            let artifact = tmp.join("libdut.so");
            fs::write(&artifact, vec![1u8; 1000]).unwrap();
            Ok(artifact)
        })
        .unwrap();
        assert!(!built.hit);
        assert_eq!(entries(root), ["new"]);
        let again = get_or_build(&root.join("new"), "libdut.so", 1500, |_| {
            unreachable!("a hit does not build")
        })
        .unwrap();
        assert!(again.hit && again.path == built.path);
    }
}
