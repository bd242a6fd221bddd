//! Compiled engines kept on disk, as Verilator's models are: a design simulated
//! again loads its code (in well under a millisecond) instead of compiling it.
//!
//! An entry is one file, `<dir>/<key>.wsimage`, holding an [`Image`]. The key is a
//! SHA-256 of everything the code depends on: the emitter (a fingerprint of this
//! crate's sources, see `build.rs`), the host (target and every code-generation
//! flag, CPU features included), the [`Source`] (program, commits, inputs) and the
//! [`Tuning`] (a profiling build, or the partitions a tuned one runs untested). A
//! file appears only by `rename` from a private temporary file, so readers see
//! whole entries or none; a file that is not a whole image (see
//! [`Image::from_bytes`]) is a miss and is replaced at the next store.
//!
//! The same directory keeps compiled programs (`<dir>/<key>.wsprog`, see
//! [`Built`](crate::built::Built)): what the flattener and the compiler make of a
//! design, keyed by the design's contents and the compiler's sources, so that a
//! design simulated again starts its interpreter without compiling, as a cached
//! Verilator model starts without running Verilator.
//!
//! The cache is bounded: after every store, the least recently used entries (by
//! file time, which a load renews) are removed until the entries take at most the
//! cache's [`budget`](CodeCache::budget) of bytes, and temporary files older than
//! [`STALE_TEMP`] (left by a process killed mid-store) go too. The entry just
//! stored is never removed, whatever the budget.

use super::image::Image;
use super::{Source, Tuning};
use crate::fxhash::FxHasher;
use cranelift_codegen::isa::TargetIsa;
use sha2::{Digest, Sha256};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

/// A directory of compiled engines, keyed by what each was built from (see
/// [`Simulator::with_cache`](crate::Simulator::with_cache)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeCache {
    dir: PathBuf,
    budget: u64,
}

impl CodeCache {
    /// The bytes of entries a cache keeps unless told otherwise: 64 MiB, about a
    /// thousand engines of PANAMA's size.
    pub const DEFAULT_BUDGET: u64 = 64 << 20;

    /// The cache in `dir`, created at the first store, bounded by
    /// [`DEFAULT_BUDGET`](Self::DEFAULT_BUDGET).
    pub fn new(dir: impl Into<PathBuf>) -> CodeCache {
        Self::with_budget(dir, Self::DEFAULT_BUDGET)
    }

    /// The cache in `dir`, keeping at most `budget` bytes of entries (least
    /// recently used removed first; the newest entry is kept even when it alone
    /// exceeds the budget).
    pub fn with_budget(dir: impl Into<PathBuf>, budget: u64) -> CodeCache {
        CodeCache {
            dir: dir.into(),
            budget,
        }
    }

    /// The directory of the entries.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The bytes of entries the cache keeps.
    pub fn budget(&self) -> u64 {
        self.budget
    }

    /// The entry of the compiled engine of `source` built for `tuning` and `isa`
    /// (the host's).
    pub(crate) fn entry(&self, source: &Source, tuning: &Tuning, isa: &dyn TargetIsa) -> Entry {
        let mut key = ShaWriter(Sha256::new());
        key.field(b"wirespeed compiled engine");
        key.field(env!("WS_SIM_SOURCE").as_bytes());
        key.field(isa.triple().to_string().as_bytes());
        key.field(isa.flags().to_string().as_bytes());
        for flag in isa.isa_flags() {
            key.field(flag.to_string().as_bytes());
        }
        source.hash(&mut key);
        tuning.hash(&mut key);
        self.file(&key.0.finalize(), EXTENSION)
    }

    /// The entry of the compiled program of the design whose digest is `design`
    /// (see [`design_digest`](crate::design_key::design_digest)), for this version
    /// of the compiler.
    pub(crate) fn program_entry(&self, design: &[u8; 32]) -> Entry {
        let mut key = ShaWriter(Sha256::new());
        key.field(b"wirespeed compiled program");
        key.field(env!("WS_SIM_SOURCE").as_bytes());
        key.field(design);
        self.file(&key.0.finalize(), PROGRAM_EXTENSION)
    }

    /// The entry whose file is named after the first half of `digest`.
    fn file(&self, digest: &[u8], extension: &str) -> Entry {
        let name: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
        Entry {
            path: self.dir.join(format!("{name}.{extension}")),
            budget: self.budget,
        }
    }
}

/// The extension of a compiled engine's file.
const EXTENSION: &str = "wsimage";

/// The extension of a compiled program's file.
const PROGRAM_EXTENSION: &str = "wsprog";

/// The age past which a temporary file is taken to be left by a process that
/// died while storing, and removed: an hour (a store takes milliseconds).
const STALE_TEMP: Duration = Duration::from_secs(3600);

/// Removes the least recently used entries of `dir` until they take at most
/// `budget` bytes (never `keep`), and stale temporary files. Best effort: a file
/// that cannot be read or removed is left, and another process pruning at the same
/// time only removes what this one would have.
fn prune(dir: &Path, budget: u64, keep: &Path) {
    let Ok(listing) = std::fs::read_dir(dir) else {
        return;
    };
    let now = SystemTime::now();
    let mut entries = Vec::new();
    for file in listing.flatten() {
        let path = file.path();
        let Ok(meta) = file.metadata() else { continue };
        let used = meta.modified().unwrap_or(now);
        let is_temp = path
            .extension()
            .is_some_and(|e| e.to_string_lossy().starts_with("tmp-"));
        if is_temp {
            if now.duration_since(used).is_ok_and(|age| age > STALE_TEMP) {
                let _ = std::fs::remove_file(&path);
            }
        } else if path
            .extension()
            .is_some_and(|e| e == EXTENSION || e == PROGRAM_EXTENSION)
        {
            entries.push((used, meta.len(), path));
        }
    }
    let mut total: u64 = entries.iter().map(|(_, len, _)| len).sum();
    entries.sort();
    for (_, len, path) in entries {
        if total <= budget {
            break;
        }
        if path != keep && std::fs::remove_file(&path).is_ok() {
            total -= len;
        }
    }
}

/// An entry's bytes: `magic`, the payload's length, `sum` (the payload's
/// checksum, of the entry kind's choosing) and the payload.
pub(crate) fn framed(magic: &[u8; 8], sum: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(magic.len() + 8 + sum.len() + payload.len());
    bytes.extend_from_slice(magic);
    bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    bytes.extend_from_slice(sum);
    bytes.extend_from_slice(payload);
    bytes
}

/// The checksum and the payload of entry bytes [`framed`] with `magic` and an
/// `N`-byte checksum; `None` when they begin otherwise or the payload's length is
/// not the one stored (the caller checks the checksum).
pub(crate) fn unframed<'a, const N: usize>(
    bytes: &'a [u8],
    magic: &[u8; 8],
) -> Option<([u8; N], &'a [u8])> {
    let rest = bytes.strip_prefix(magic)?;
    let (len, rest) = rest.split_first_chunk::<8>()?;
    let (sum, payload) = rest.split_first_chunk::<N>()?;
    (u64::from_le_bytes(*len) == payload.len() as u64).then_some((*sum, payload))
}

/// The checksum of a stored payload: a 64-bit rotate-multiply hash of its words,
/// not a SHA-256. It is taken at every load, over payloads of hundreds of
/// kilobytes, where a SHA-256 cost about as much as the rest of an engine's load.
/// It changes whenever one word of the payload does (each step of the hash is a
/// bijection of its state), and guards against damage, not against a hostile
/// writer: the cache's entries are trusted to be what this crate wrote (see the
/// engine's safety argument).
pub(crate) fn checksum(payload: &[u8]) -> u64 {
    let mut h = FxHasher::default();
    h.write(payload);
    h.finish()
}

/// Feeds a [`Hash`] into a SHA-256.
pub(crate) struct ShaWriter(pub Sha256);

impl ShaWriter {
    /// Adds one length-prefixed field (so field boundaries cannot shift).
    fn field(&mut self, bytes: &[u8]) {
        self.0.update((bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
    }
}

impl Hasher for ShaWriter {
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// Unused: the key is the whole digest.
    fn finish(&self) -> u64 {
        0
    }
}

/// One compiled engine's place in a [`CodeCache`].
#[derive(Debug)]
pub(crate) struct Entry {
    path: PathBuf,
    budget: u64,
}

impl Entry {
    /// The stored image, if there is a whole one.
    pub fn load(&self) -> Option<Image> {
        Image::from_bytes(&self.read()?)
    }

    /// Stores `image`, replacing what was there, then prunes the cache to its
    /// budget.
    pub fn store(&self, image: &Image) -> std::io::Result<()> {
        self.write(&image.to_bytes())
    }

    /// The entry's bytes, if its file can be read; a read renews the file's time,
    /// so pruning takes the entries used longest ago first.
    pub fn read(&self) -> Option<Vec<u8>> {
        let bytes = std::fs::read(&self.path).ok()?;
        if let Ok(file) = std::fs::File::options().write(true).open(&self.path) {
            let _ = file.set_modified(SystemTime::now());
        }
        Some(bytes)
    }

    /// Stores `bytes` as the entry, replacing what was there (readers see the old
    /// file or the new one, never part of one), then prunes the cache to its
    /// budget.
    pub fn write(&self, bytes: &[u8]) -> std::io::Result<()> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let tmp = self.path.with_extension(format!(
            "tmp-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let stored = std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, &self.path));
        if stored.is_err() {
            // A full disk leaves no partial file behind.
            let _ = std::fs::remove_file(&tmp);
        } else {
            prune(dir, self.budget, &self.path);
        }
        stored
    }
}
