//! The direct register commits of each clock domain as native code: one function
//! per domain that does what [`state::commit_copies`](crate::state::commit_copies)
//! does, without its loop or its data-dependent branches. A copy tests its reset
//! (rare and steady, so the branch predicts well), picks its source with a select
//! (the next value, or the register itself when disabled) and moves its words with
//! plain loads and stores (`memmove` past [`MAX_UNROLLED`] words or when the source
//! partly overlaps the register); a broadcast run selects word by word.

use super::emit::PARAMS;
use crate::state::{DirectCopy, NONE};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types::I64, InstBuilder, MemFlags, Value};
use cranelift_codegen::isa::TargetFrontendConfig;
use cranelift_frontend::FunctionBuilder;

/// Why a domain's commits cannot be compiled: a copy addresses a word outside
/// storage.
#[derive(Clone, Debug, thiserror::Error)]
#[error("commit {copy} of domain {domain} {what}")]
pub struct MalformedCommit {
    /// The domain.
    pub(crate) domain: usize,
    /// Position of the copy in the domain's list.
    pub(crate) copy: usize,
    /// What is out of range.
    pub(crate) what: String,
}

/// Copies of more words than this call `memmove` instead of being unrolled, so
/// that code size stays bounded.
const MAX_UNROLLED: u32 = 8;

/// Checks that every word the copies of every domain read or write lies within
/// storage of `words` words.
pub(super) fn check(commits: &[Vec<DirectCopy>], words: usize) -> Result<(), MalformedCommit> {
    for (domain, copies) in commits.iter().enumerate() {
        for (copy, c) in copies.iter().enumerate() {
            check_copy(c, words).map_err(|what| MalformedCommit { domain, copy, what })?;
        }
    }
    Ok(())
}

fn check_copy(c: &DirectCopy, words: usize) -> Result<(), String> {
    let span = |off: u32, len: u32, role: &str| {
        if off as usize + len as usize <= words {
            Ok(())
        } else {
            Err(format!(
                "{role} words {off}+{len} are outside storage of {words} words"
            ))
        }
    };
    span(c.dst, c.len, "register")?;
    span(c.src, if c.broadcast { 1 } else { c.len }, "next-value")?;
    if c.enable != NONE {
        span(c.enable, 1, "enable")?;
    }
    if c.reset != NONE {
        span(c.reset, 1, "reset")?;
        span(c.reset_value, c.len, "reset-value")?;
    }
    Ok(())
}

/// Emits the body of one domain's commit function into `b`, whose entry block is
/// current and has the function's parameters (only the storage base is used).
pub(super) fn body(b: &mut FunctionBuilder, target: TargetFrontendConfig, copies: &[DirectCopy]) {
    let entry = b.current_block().expect("the entry block is current");
    let params = b.block_params(entry);
    debug_assert_eq!(params.len(), PARAMS);
    let vals = params[0];
    for c in copies {
        Copy {
            b: &mut *b,
            vals,
            target,
        }
        .emit(c);
    }
    b.ins().return_(&[]);
}

struct Copy<'a, 'b> {
    b: &'a mut FunctionBuilder<'b>,
    vals: Value,
    target: TargetFrontendConfig,
}

impl Copy<'_, '_> {
    /// The address of word `off` from `base`, with the byte offset the load or
    /// store adds.
    fn address(&mut self, base: Value, off: u32) -> (Value, i32) {
        let bytes = u64::from(off) * 8;
        match i32::try_from(bytes) {
            Ok(at) => (base, at),
            Err(_) => (self.b.ins().iadd_imm(base, bytes as i64), 0),
        }
    }

    fn load(&mut self, base: Value, off: u32) -> Value {
        let (base, at) = self.address(base, off);
        self.b.ins().load(I64, MemFlags::trusted(), base, at)
    }

    fn store(&mut self, base: Value, off: u32, v: Value) {
        let (base, at) = self.address(base, off);
        self.b.ins().store(MemFlags::trusted(), v, base, at);
    }

    /// Bit 0 of word `off` equals `level`.
    fn bit_is(&mut self, off: u32, level: u64) -> Value {
        let w = self.load(self.vals, off);
        let bit = self.b.ins().band_imm(w, 1);
        self.b.ins().icmp_imm(IntCC::Equal, bit, level as i64)
    }

    fn emit(&mut self, c: &DirectCopy) {
        let enabled = (c.enable != NONE).then(|| self.bit_is(c.enable, 1));
        if c.reset == NONE {
            return self.load_next(c, enabled);
        }
        // Reset is rare and steady, so a branch on it predicts well.
        let reset = self.bit_is(c.reset, c.reset_level);
        let (on, off, done) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        self.b.ins().brif(reset, on, &[], off, &[]);
        for (block, resets) in [(on, true), (off, false)] {
            self.b.switch_to_block(block);
            self.b.seal_block(block);
            if resets {
                let from = self.address_of(c.reset_value);
                self.copy_words(c, from, c.reset_value);
            } else {
                self.load_next(c, enabled);
            }
            self.b.ins().jump(done, &[]);
        }
        self.b.switch_to_block(done);
        self.b.seal_block(done);
    }

    /// The address of word `off` as a value.
    fn address_of(&mut self, off: u32) -> Value {
        self.b.ins().iadd_imm(self.vals, i64::from(off) * 8)
    }

    /// The register loads its next value if `enabled` (or always, without an
    /// enable) and keeps its own otherwise.
    fn load_next(&mut self, c: &DirectCopy, enabled: Option<Value>) {
        if c.broadcast {
            let next = self.load(self.vals, c.src);
            for k in 0..c.len {
                let v = match enabled {
                    Some(e) => {
                        let own = self.load(self.vals, c.dst + k);
                        self.b.ins().select(e, next, own)
                    }
                    None => next,
                };
                self.store(self.vals, c.dst + k, v);
            }
            return;
        }
        // A disabled register copies onto itself: no data-dependent branch.
        let from = match enabled {
            Some(e) => {
                let (next, own) = (self.address_of(c.src), self.address_of(c.dst));
                self.b.ins().select(e, next, own)
            }
            None => self.address_of(c.src),
        };
        self.copy_words(c, from, c.src);
    }

    /// Copies `c.len` words from address `from` (word `source`, or the register
    /// itself) onto the register.
    fn copy_words(&mut self, c: &DirectCopy, from: Value, source: u32) {
        // A source partly overlapping the register's own words needs `memmove`'s
        // choice of direction (the compiler's layouts never have one, but every
        // checked program is exact).
        let overlaps = source != c.dst && source < c.dst + c.len && c.dst < source + c.len;
        if c.len > MAX_UNROLLED || overlaps {
            let dst = self.address_of(c.dst);
            let bytes = self.b.ins().iconst(I64, i64::from(c.len) * 8);
            self.b.call_memmove(self.target, dst, from, bytes);
            return;
        }
        for k in 0..c.len {
            let v = self.load(from, k);
            self.store(self.vals, c.dst + k, v);
        }
    }
}
