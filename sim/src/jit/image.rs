//! The compiled engine's machine code as data, and its placement in executable
//! memory.
//!
//! Cranelift compiles each function into bytes and relocations. An [`Image`] holds
//! every function's bytes in one buffer, where each function begins, and the places
//! that receive the address of one of the engine's [`Callback`]s: the only
//! relocation the emitted code has (an absolute 64-bit address, as Cranelift loads
//! the address of a function that is not colocated in code that is not
//! position-independent). A build and a [cache](super::cache) hit both go through
//! [`Image::load`], so every test of the compiled engine runs the loader a cached
//! engine runs.

use super::cache::{checksum, framed, unframed};
use super::summary::Summary;
use super::{EdgeFunction, Function, JitError};
use cranelift_codegen::binemit::Reloc;
use cranelift_codegen::ir::function::FunctionParameters;
use cranelift_codegen::ir::{ExternalName, UserExternalName};
use cranelift_codegen::{CompiledCode, FinalizedRelocTarget};

/// A Rust function the emitted code calls, by the index its call names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Callback {
    /// [`wide_callback`](super::wide_callback).
    Wide,
    /// [`commit::move_words`](super::commit::move_words).
    Move,
}

/// The namespace of the callbacks' names in emitted functions (the functions
/// themselves are named in the namespace of their group, below [`GROUPS`]).
pub(super) const CALLBACKS: u32 = GROUPS as u32;

impl Callback {
    /// The callback of index `index`.
    fn of(index: u32) -> Option<Callback> {
        [Callback::Wide, Callback::Move]
            .get(index as usize)
            .copied()
    }

    /// The name an emitted call of this callback uses.
    pub fn name(self) -> UserExternalName {
        UserExternalName::new(CALLBACKS, self as u32)
    }

    /// Where the callback is in this process.
    fn address(self) -> usize {
        match self {
            Callback::Wide => super::wide_callback as *const () as usize,
            Callback::Move => super::commit::move_words as *const () as usize,
        }
    }
}

/// One place in the code that receives a callback's address plus an addend.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Patch {
    at: u32,
    callback: Callback,
    addend: i64,
}

/// The settle's groups of functions of an image: the output part's, the rest's
/// (each a list of [`Function`]s).
pub(super) const PARTS: usize = 2;

/// The clock edge's groups of functions of an image, after the settle's: the
/// commits, the samples and the memory writes, each one [`EdgeFunction`] per
/// clock domain (see [`edge`](super::edge)).
pub(super) const EDGE_GROUPS: usize = 3;

/// Every group of functions of an image.
pub(super) const GROUPS: usize = PARTS + EDGE_GROUPS;

/// Machine code of the compiled engine, not yet in executable memory, with the
/// summary of the plans it was emitted from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Image {
    code: Vec<u8>,
    /// Per group, where each function begins in `code`.
    entries: [Vec<u32>; GROUPS],
    patches: Vec<Patch>,
    /// What the engine needs of the plans (see [`summary`](super::summary)).
    pub(super) summary: Summary,
}

/// Functions are placed at multiples of this many bytes (what Cranelift prefers
/// on every host it supports).
const ALIGN: usize = 64;

/// The first bytes of a stored image.
const MAGIC: &[u8; 8] = b"WSIMAGE4";

impl Image {
    /// Appends the function `name`, compiled into `compiled` from a function with
    /// the parameters `params`, to `group`.
    pub(super) fn push(
        &mut self,
        group: usize,
        compiled: &CompiledCode,
        params: &FunctionParameters,
        name: &str,
    ) -> Result<(), JitError> {
        self.code.resize(self.code.len().next_multiple_of(ALIGN), 0);
        let start = self.code.len();
        let offset = |n: usize| {
            u32::try_from(n).map_err(|_| JitError::Codegen("code larger than 4 GiB".into()))
        };
        self.entries[group].push(offset(start)?);
        self.code.extend_from_slice(compiled.code_buffer());
        for reloc in compiled.buffer.relocs() {
            let callback = match (&reloc.kind, &reloc.target) {
                (Reloc::Abs8, FinalizedRelocTarget::ExternalName(ExternalName::User(r))) => {
                    let UserExternalName { namespace, index } = params.user_named_funcs()[*r];
                    Some(index).filter(|_| namespace == CALLBACKS)
                }
                _ => None,
            }
            .and_then(Callback::of)
            .ok_or_else(|| {
                JitError::Codegen(format!(
                    "function {name}: unsupported relocation {:?} to {:?}",
                    reloc.kind, reloc.target
                ))
            })?;
            self.patches.push(Patch {
                at: offset(start + reloc.offset as usize)?,
                callback,
                addend: reloc.addend,
            });
        }
        Ok(())
    }

    /// How many functions `group` has.
    pub(super) fn functions(&self, group: usize) -> usize {
        self.entries[group].len()
    }

    /// The image in executable memory of this process, with every callback's
    /// address in place; its functions go into the perf map, if enabled, as the
    /// engine called `engine` (see [`perf_map`](super::perf_map)).
    pub(super) fn load(&self, engine: &str) -> Result<Executable, JitError> {
        let memory = |e: region::Error| JitError::Memory(e.to_string());
        let len = self.code.len();
        let mut alloc =
            region::alloc(len.max(1), region::Protection::READ_WRITE).map_err(memory)?;
        let base = alloc.as_mut_ptr::<u8>();
        // SAFETY: `alloc` is a fresh writable mapping of at least `len` bytes that
        // nothing else refers to; every patch lies within the code (checked when it
        // was pushed or read, see `parse`).
        unsafe {
            std::ptr::copy_nonoverlapping(self.code.as_ptr(), base, len);
            for p in &self.patches {
                let address = (p.callback.address() as i64).wrapping_add(p.addend) as u64;
                std::ptr::write_unaligned(base.add(p.at as usize).cast::<u64>(), address);
            }
            region::protect(base, len.max(1), region::Protection::READ_EXECUTE).map_err(memory)?;
            wasmtime_internal_jit_icache_coherence::clear_cache(base.cast(), len)
                .map_err(|e| JitError::Memory(e.to_string()))?;
        }
        wasmtime_internal_jit_icache_coherence::pipeline_flush_mt()
            .map_err(|e| JitError::Memory(e.to_string()))?;
        super::perf_map::record(|| {
            super::perf_map::symbols(base as usize, len, &self.entries, engine)
        })?;
        let address = |at: u32| {
            // SAFETY: `at` is where a function begins in the code just placed at
            // `base` (see `push` and `parse`).
            unsafe { base.add(at as usize) }
        };
        let settle = std::array::from_fn(|g| {
            (self.entries[g].iter())
                .map(|&at| {
                    // SAFETY: a function of a settle group has the signature of
                    // `Function` (see `Definer`).
                    unsafe { std::mem::transmute::<*const u8, Function>(address(at)) }
                })
                .collect()
        });
        let edge = std::array::from_fn(|g| {
            (self.entries[PARTS + g].iter())
                .map(|&at| {
                    // SAFETY: a function of an edge group has the signature of
                    // `EdgeFunction` (see `Definer`).
                    unsafe { std::mem::transmute::<*const u8, EdgeFunction>(address(at)) }
                })
                .collect()
        });
        Ok(Executable {
            _memory: Memory { _mapping: alloc },
            settle,
            edge,
        })
    }

    /// The image as bytes: a magic number, the payload's length and checksum, and
    /// the payload (code length, entries, patches, summary, code; little-endian).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut payload = Vec::with_capacity(self.code.len() + 16 * self.patches.len() + 64);
        let put = |payload: &mut Vec<u8>, bytes: &[u8]| payload.extend_from_slice(bytes);
        put(&mut payload, &(self.code.len() as u32).to_le_bytes());
        for entries in &self.entries {
            put(&mut payload, &(entries.len() as u32).to_le_bytes());
            entries
                .iter()
                .for_each(|e| put(&mut payload, &e.to_le_bytes()));
        }
        put(&mut payload, &(self.patches.len() as u32).to_le_bytes());
        for p in &self.patches {
            put(&mut payload, &p.at.to_le_bytes());
            put(&mut payload, &(p.callback as u32).to_le_bytes());
            put(&mut payload, &p.addend.to_le_bytes());
        }
        self.summary.write(&mut payload);
        payload.extend_from_slice(&self.code);
        framed(MAGIC, &checksum(&payload).to_le_bytes(), &payload)
    }

    /// The image stored as [`to_bytes`](Self::to_bytes) wrote it; `None` when the
    /// bytes are not such an image (truncated, changed, or of another format), or
    /// when an entry or patch lies outside its code.
    pub fn from_bytes(bytes: &[u8]) -> Option<Image> {
        let (sum, payload) = unframed::<8>(bytes, MAGIC)?;
        if checksum(payload) != u64::from_le_bytes(sum) {
            return None;
        }
        parse(payload)
    }
}

/// Reads a payload of [`Image::to_bytes`], checking every offset against the code.
fn parse(payload: &[u8]) -> Option<Image> {
    let mut r = Reader(payload);
    let code_len = r.word()? as usize;
    let mut entries: [Vec<u32>; GROUPS] = Default::default();
    for group in &mut entries {
        let n = r.word()?;
        *group = (0..n).map(|_| r.word()).collect::<Option<_>>()?;
    }
    let n = r.word()? as usize;
    let mut patches = Vec::with_capacity(n.min(payload.len() / 16));
    for _ in 0..n {
        patches.push(Patch {
            at: r.word()?,
            callback: Callback::of(r.word()?)?,
            addend: i64::from_le_bytes(r.take(8)?.try_into().ok()?),
        });
    }
    let summary = Summary::read(&mut r)?;
    let code = r.take(code_len)?.to_vec();
    let inside = entries.iter().flatten().all(|&e| (e as usize) < code_len)
        && patches.iter().all(|p| p.at as usize + 8 <= code_len);
    (r.0.is_empty() && inside).then_some(Image {
        code,
        entries,
        patches,
        summary,
    })
}

/// The bytes of a payload not read yet.
pub(super) struct Reader<'a>(pub &'a [u8]);

impl<'a> Reader<'a> {
    /// How many bytes are left.
    pub fn remaining(&self) -> usize {
        self.0.len()
    }

    /// The next `n` bytes.
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, tail) = self.0.split_at_checked(n)?;
        self.0 = tail;
        Some(head)
    }

    /// The next little-endian 32-bit word.
    pub fn word(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
}

/// An [`Image`] in executable memory: its functions by group, valid while this
/// lives.
pub(super) struct Executable {
    /// The mapping the functions are in, unmapped on drop.
    _memory: Memory,
    /// Per settle part, its functions.
    pub settle: [Vec<Function>; PARTS],
    /// Per edge group, one function per clock domain.
    pub edge: [Vec<EdgeFunction>; EDGE_GROUPS],
}

/// A mapping of code, unmapped on drop.
struct Memory {
    _mapping: region::Allocation,
}

// SAFETY: the mapping is an address range owned by this value alone; nothing about
// it is tied to the thread that made it, and it is only unmapped (on drop).
unsafe impl Send for Memory {}

#[cfg(test)]
mod tests {
    use super::*;

    /// An image of 100 bytes of code: a function at 0 and one at 64, one patch,
    /// a summary with something in every field.
    fn sample() -> Image {
        Image {
            code: (0..100).collect(),
            entries: [vec![0], vec![64], vec![], vec![], vec![]],
            patches: vec![Patch {
                at: 10,
                callback: Callback::Move,
                addend: -3,
            }],
            summary: super::super::summary::tests::sample(),
        }
    }

    #[test]
    fn stored_images_read_back_whole_or_not_at_all() {
        let image = sample();
        let bytes = image.to_bytes();
        assert_eq!(Image::from_bytes(&bytes), Some(image.clone()));
        for cut in [0, 8, 16, 48, bytes.len() - 1] {
            assert_eq!(Image::from_bytes(&bytes[..cut]), None, "cut at {cut}");
        }
        for at in [0, 20, 48, 60, bytes.len() - 1] {
            let mut changed = bytes.clone();
            changed[at] ^= 0x10;
            assert_eq!(Image::from_bytes(&changed), None, "byte {at} changed");
        }
        let longer = [bytes.as_slice(), &[0]].concat();
        assert_eq!(Image::from_bytes(&longer), None);
    }

    #[test]
    fn offsets_outside_the_code_are_refused() {
        let mut entry = sample();
        entry.entries[2].push(100);
        let mut patch = sample();
        patch.patches[0].at = 93;
        for image in [entry, patch] {
            assert_eq!(Image::from_bytes(&image.to_bytes()), None, "{image:?}");
        }
        let mut last = sample();
        last.patches[0].at = 92;
        assert!(Image::from_bytes(&last.to_bytes()).is_some());
    }
}
