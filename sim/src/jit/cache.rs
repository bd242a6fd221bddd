//! Compiled engines kept on disk, as Verilator's models are: a design simulated
//! again loads its code (in well under a millisecond) instead of compiling it.
//!
//! An entry is one file, `<dir>/<key>.wsimage`, holding an [`Image`]. The key is a
//! SHA-256 of everything the code depends on: the emitter (a fingerprint of this
//! crate's sources, see `build.rs`), the host (target and every code-generation
//! flag, CPU features included) and the [`Source`] (program, commits, inputs). A
//! file appears only by `rename` from a private temporary file, so readers see
//! whole entries or none; a file that is not a whole image (see
//! [`Image::from_bytes`]) is a miss and is replaced at the next store.

use super::image::Image;
use super::Source;
use cranelift_codegen::isa::TargetIsa;
use sha2::{Digest, Sha256};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A directory of compiled engines, keyed by what each was built from (see
/// [`Simulator::with_cache`](crate::Simulator::with_cache)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeCache {
    dir: PathBuf,
}

impl CodeCache {
    /// The cache in `dir`, created at the first store.
    pub fn new(dir: impl Into<PathBuf>) -> CodeCache {
        CodeCache { dir: dir.into() }
    }

    /// The directory of the entries.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The entry of the compiled engine of `source` for `isa` (the host's).
    pub(crate) fn entry(&self, source: &Source, isa: &dyn TargetIsa) -> Entry {
        let mut key = ShaWriter(Sha256::new());
        key.field(b"wirespeed compiled engine");
        key.field(env!("WS_SIM_SOURCE").as_bytes());
        key.field(isa.triple().to_string().as_bytes());
        key.field(isa.flags().to_string().as_bytes());
        for flag in isa.isa_flags() {
            key.field(flag.to_string().as_bytes());
        }
        source.hash(&mut key);
        let digest = key.0.finalize();
        let name: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
        Entry {
            path: self.dir.join(format!("{name}.wsimage")),
        }
    }
}

/// Feeds a [`Hash`] into a SHA-256.
struct ShaWriter(Sha256);

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
}

impl Entry {
    /// The stored image, if there is a whole one.
    pub fn load(&self) -> Option<Image> {
        Image::from_bytes(&std::fs::read(&self.path).ok()?)
    }

    /// Stores `image`, replacing what was there.
    pub fn store(&self, image: &Image) -> std::io::Result<()> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let tmp = self.path.with_extension(format!(
            "tmp-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let stored =
            std::fs::write(&tmp, image.to_bytes()).and_then(|()| std::fs::rename(&tmp, &self.path));
        if stored.is_err() {
            // A full disk leaves no partial file behind.
            let _ = std::fs::remove_file(&tmp);
        }
        stored
    }
}
