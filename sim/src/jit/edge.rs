//! The clock edge as native code: per clock domain, one function that samples its
//! shadowed registers and read ports into the shadow buffer, one that applies its
//! memory writes, and (appended to its register commit, see [`commit`](super::commit))
//! the commit of the shadow buffer, which wakes the readers of every value that
//! changed. The simulator calls them in the order
//! [`state::edge`](crate::state::edge) keeps: every fired domain samples, then
//! writes, then commits. They do what the interpreter's loops do, without the
//! loops, the bounds checks or the lookups of each port's memory.
//!
//! A memory address is read at run time (saturated like
//! [`wide::read_amount`](crate::wide::read_amount) when it is wider than a word)
//! and compared with the memory's depth before any access; every other offset is
//! a constant that [`check`] found within its buffer.

use super::activity::Fanout;
use super::commit::{self, MAX_UNROLLED};
use crate::state::{shadow_entries, DomainState, MemLayout, ReadPort, RegSample, WritePort, NONE};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types::I64, Block, FuncRef, InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;

/// The parameters of an edge function, in order: storage base, memory base, shadow
/// base, activity flags.
pub(super) const EDGE_PARAMS: usize = 4;

/// What a clock edge does: every domain's state elements and the memories' layout.
#[derive(Clone, Debug, Default, Hash)]
pub(crate) struct Edge {
    /// Per top-level clock domain, its registers and memory ports.
    pub domains: Vec<DomainState>,
    /// Where each memory's words are in memory storage.
    pub mems: Vec<MemLayout>,
    /// Words of the shadow buffer.
    pub shadow_words: usize,
    /// Words of memory storage.
    pub mem_words: usize,
}

/// Why the clock edge cannot be compiled: a state element addresses a word
/// outside its buffer.
#[derive(Clone, Debug, thiserror::Error)]
#[error("{element} of domain {domain} {what}")]
pub struct MalformedEdge {
    /// The domain.
    pub(crate) domain: usize,
    /// The register, port or memory.
    pub(crate) element: String,
    /// What is out of range.
    pub(crate) what: String,
}

/// Checks that every word the edge of every domain reads or writes lies within
/// its buffer: storage of `words` words, the shadow buffer, and memory storage
/// (every word of every memory a port names).
pub(super) fn check(edge: &Edge, words: usize) -> Result<(), MalformedEdge> {
    for (domain, dom) in edge.domains.iter().enumerate() {
        let fail = |element: String| {
            move |what| MalformedEdge {
                domain,
                element,
                what,
            }
        };
        for (i, r) in dom.regs.iter().enumerate() {
            check_reg(r, words, edge.shadow_words).map_err(fail(format!("register {i}")))?;
        }
        for (i, p) in dom.reads.iter().enumerate() {
            let read = (p.addr, p.addr_words, p.enable, p.data, p.mem);
            check_port(edge, read, words).map_err(fail(format!("read port {i}")))?;
            let m = &edge.mems[p.mem as usize];
            within(p.shadow, m.words, edge.shadow_words, "shadow")
                .map_err(fail(format!("read port {i}")))?;
        }
        for (i, p) in dom.writes.iter().enumerate() {
            if p.enable == NONE {
                return Err(fail(format!("write port {i}"))("has no enable".into()));
            }
            let write = (p.addr, p.addr_words, p.enable, p.data, p.mem);
            check_port(edge, write, words).map_err(fail(format!("write port {i}")))?;
        }
    }
    Ok(())
}

/// An error unless `off..off + len` lies within a buffer of `size` words.
fn within(off: u32, len: u32, size: usize, buffer: &str) -> Result<(), String> {
    if off as usize + len as usize <= size {
        Ok(())
    } else {
        Err(format!(
            "addresses {buffer} words {off}+{len}, outside {size} words"
        ))
    }
}

fn check_reg(r: &RegSample, words: usize, shadow: usize) -> Result<(), String> {
    for off in [r.q, r.next] {
        within(off, r.words, words, "storage")?;
    }
    if r.reset != NONE {
        within(r.reset, 1, words, "storage")?;
        within(r.reset_value, r.words, words, "storage")?;
    }
    if r.enable != NONE {
        within(r.enable, 1, words, "storage")?;
    }
    within(r.shadow, r.words, shadow, "shadow")
}

/// Checks a memory port `(address, address words, enable, data, memory)`.
fn check_port(
    edge: &Edge,
    (addr, addr_words, enable, data, mem): (u32, u32, u32, u32, u32),
    words: usize,
) -> Result<(), String> {
    let m = edge
        .mems
        .get(mem as usize)
        .ok_or_else(|| format!("names memory {mem} of {}", edge.mems.len()))?;
    let end = m.base as u64 + u64::from(m.depth) * u64::from(m.words);
    if end > edge.mem_words as u64 {
        return Err(format!(
            "names memory {mem}, whose words end at {end}, outside {} words",
            edge.mem_words
        ));
    }
    within(addr, addr_words, words, "storage")?;
    within(data, m.words, words, "storage")?;
    if enable != NONE {
        within(enable, 1, words, "storage")?;
    }
    Ok(())
}

/// Emits code over the edge function's parameters.
struct Emitter<'a, 'b> {
    b: &'a mut FunctionBuilder<'b>,
    vals: Value,
    mem: Value,
    shadow: Value,
    moves: FuncRef,
}

impl<'a, 'b> Emitter<'a, 'b> {
    /// An emitter into `b`, whose entry block is current and has the edge
    /// function's parameters; `moves` is the imported
    /// [`move_words`](super::commit::move_words).
    fn new(b: &'a mut FunctionBuilder<'b>, moves: FuncRef) -> Self {
        let entry = b.current_block().expect("the entry block is current");
        let p = b.block_params(entry).to_vec();
        debug_assert_eq!(p.len(), EDGE_PARAMS);
        Emitter {
            b,
            vals: p[0],
            mem: p[1],
            shadow: p[2],
            moves,
        }
    }

    /// The address of word `off` from `base`.
    fn at(&mut self, base: Value, off: u32) -> Value {
        commit::word_at(self.b, base, off)
    }

    /// Bit 0 of storage word `off` equals `level`.
    fn bit_is(&mut self, off: u32, level: u64) -> Value {
        commit::bit_is(self.b, self.vals, off, level)
    }

    /// Copies `n` words from address `from` to address `to` (different buffers).
    fn copy(&mut self, to: Value, from: Value, n: u32) {
        if n > MAX_UNROLLED {
            let count = self.b.ins().iconst(I64, i64::from(n));
            self.b.ins().call(self.moves, &[to, from, count]);
            return;
        }
        commit::copy_pairs(self.b, (to, 0), (from, 0), n, false);
    }

    /// A memory address held in storage at `off` (`words` words): saturated to
    /// all ones when an upper word is set.
    fn address(&mut self, off: u32, words: u32) -> Value {
        if words == 0 {
            return self.b.ins().iconst(I64, 0);
        }
        let low = commit::load(self.b, self.vals, off);
        let mut upper = None;
        for k in 1..words {
            let w = commit::load(self.b, self.vals, off + k);
            upper = Some(match upper {
                Some(u) => self.b.ins().bor(u, w),
                None => w,
            });
        }
        match upper {
            Some(u) => {
                let ones = self.b.ins().iconst(I64, -1);
                self.b.ins().select(u, ones, low)
            }
            None => low,
        }
    }

    /// The address of word `addr` of memory `m` when `addr` is below its depth;
    /// returns it and the block to continue in otherwise.
    fn memory_word(&mut self, m: &MemLayout, addr: Value) -> (Value, Block) {
        let (inside, outside) = (self.b.create_block(), self.b.create_block());
        let fits = self
            .b
            .ins()
            .icmp_imm(IntCC::UnsignedLessThan, addr, i64::from(m.depth));
        self.b.ins().brif(fits, inside, &[], outside, &[]);
        self.b.switch_to_block(inside);
        self.b.seal_block(inside);
        let bytes = self.b.ins().imul_imm(addr, i64::from(m.words) * 8);
        let word = self.b.ins().iadd(self.mem, bytes);
        (self.b.ins().iadd_imm(word, m.base as i64 * 8), outside)
    }

    /// Continues in `next` (sealed here) after jumping there from the current
    /// block.
    fn join(&mut self, next: Block) {
        self.b.ins().jump(next, &[]);
        self.b.switch_to_block(next);
        self.b.seal_block(next);
    }

    /// `shadow <= reset ? reset value : enable ? next : q` (no branch: the source
    /// address is selected).
    fn sample_reg(&mut self, r: &RegSample) {
        let mut from = self.at(self.vals, r.next);
        if r.enable != NONE {
            let enabled = self.bit_is(r.enable, 1);
            let own = self.at(self.vals, r.q);
            from = self.b.ins().select(enabled, from, own);
        }
        if r.reset != NONE {
            let reset = self.bit_is(r.reset, r.reset_level);
            let initial = self.at(self.vals, r.reset_value);
            from = self.b.ins().select(reset, initial, from);
        }
        let to = self.at(self.shadow, r.shadow);
        self.copy(to, from, r.words);
    }

    /// An enabled read port samples `mem[addr]` (zeros past the depth); a
    /// disabled one keeps its data.
    fn sample_read(&mut self, p: &ReadPort, m: &MemLayout) {
        let to = self.at(self.shadow, p.shadow);
        let done = self.b.create_block();
        if p.enable != NONE {
            let (read, hold) = (self.b.create_block(), self.b.create_block());
            let enabled = self.bit_is(p.enable, 1);
            self.b.ins().brif(enabled, read, &[], hold, &[]);
            self.b.switch_to_block(hold);
            self.b.seal_block(hold);
            let data = self.at(self.vals, p.data);
            self.copy(to, data, m.words);
            self.b.ins().jump(done, &[]);
            self.b.switch_to_block(read);
            self.b.seal_block(read);
        }
        let addr = self.address(p.addr, p.addr_words);
        let (word, outside) = self.memory_word(m, addr);
        self.copy(to, word, m.words);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(outside);
        self.b.seal_block(outside);
        let zero = self.b.ins().iconst(I64, 0);
        for k in 0..m.words {
            commit::store(self.b, to, k, zero);
        }
        self.join(done);
    }

    /// An enabled write port stores its data at `mem[addr]` (nothing past the
    /// depth).
    fn write(&mut self, p: &WritePort, m: &MemLayout) {
        let (write, done) = (self.b.create_block(), self.b.create_block());
        let enabled = self.bit_is(p.enable, 1);
        self.b.ins().brif(enabled, write, &[], done, &[]);
        self.b.switch_to_block(write);
        self.b.seal_block(write);
        let addr = self.address(p.addr, p.addr_words);
        let (word, outside) = self.memory_word(m, addr);
        let data = self.at(self.vals, p.data);
        self.copy(word, data, m.words);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(outside);
        self.b.seal_block(outside);
        self.join(done);
    }
}

/// Emits the body of `dom`'s sample function (every shadowed register, then
/// every read port) into `b`, whose entry block is current and has the edge
/// function's parameters; `moves` is the imported `move_words`.
pub(super) fn sample_body(
    b: &mut FunctionBuilder,
    (dom, mems): (&DomainState, &[MemLayout]),
    moves: FuncRef,
) {
    let mut e = Emitter::new(b, moves);
    for r in &dom.regs {
        e.sample_reg(r);
    }
    for p in &dom.reads {
        e.sample_read(p, &mems[p.mem as usize]);
    }
    e.b.ins().return_(&[]);
}

/// Emits the body of `dom`'s write function (every write port, in order), as
/// [`sample_body`] does.
pub(super) fn write_body(
    b: &mut FunctionBuilder,
    (dom, mems): (&DomainState, &[MemLayout]),
    moves: FuncRef,
) {
    let mut e = Emitter::new(b, moves);
    for p in &dom.writes {
        e.write(p, &mems[p.mem as usize]);
    }
    e.b.ins().return_(&[]);
}

/// Emits the commit of `dom`'s shadow buffer into `b` (at the end of its commit
/// function, of the edge function's parameters `params`): every shadowed
/// register and read port takes its sampled value; the readers `wake` lists for
/// an entry (in the order of [`shadow_entries`]) are flagged when it changed.
pub(super) fn commit_shadow(
    b: &mut FunctionBuilder,
    (dom, mems): (&DomainState, &[MemLayout]),
    params: &[Value],
    wake: &Fanout,
) {
    debug_assert_eq!(params.len(), EDGE_PARAMS);
    let (vals, shadow, flags) = (params[0], params[2], params[3]);
    for (i, (dst, src, words)) in shadow_entries(dom, mems).enumerate() {
        let readers = wake.get(i);
        let track = !readers.is_empty();
        if let Some(changed) = commit::copy_pairs(b, (vals, dst), (shadow, src), words, track) {
            commit::wake(b, changed, flags, readers);
        }
    }
}
