//! Compilation of a [`FlatDesign`] into a [`Program`]: storage layout (one offset and
//! `ceil(width / 64)` words per net, aliases sharing their source's words), the
//! levelized instruction list, and the per-domain tables of registers and memory ports.

use crate::error::SimError;
use crate::flatten::FlatDesign;
use crate::instr::{Instr, Span};
use crate::levelize::levelize;
use crate::lower::lower;
use crate::state::{DomainState, MemLayout, ReadPort, RegSample, WritePort, NONE};
use crate::wide::{last_mask, words};
use hdl::ir::{Driver, NetId, Op, ResetPolarity};
use hdl::Bits;

/// Everything the simulator executes.
#[derive(Clone, Debug)]
pub(crate) struct Program {
    /// Combinational instructions in dependency order.
    pub instrs: Vec<Instr>,
    /// Parts of narrow concatenations: `(offset, shift)`.
    pub parts: Vec<(u32, u32)>,
    /// Initial storage: constants, reset values; everything else zero.
    pub init: Vec<u64>,
    /// Storage span of every flat net.
    pub nets: Vec<Span>,
    /// State elements by top-level domain.
    pub domains: Vec<DomainState>,
    /// Memory layouts.
    pub mems: Vec<MemLayout>,
    /// Initial memory storage.
    pub mem_init: Vec<u64>,
    /// Size of the shadow buffer.
    pub shadow_len: usize,
}

/// Storage allocation and the instruction list being built.
pub(crate) struct Builder<'a> {
    pub flat: &'a FlatDesign,
    pub nets: Vec<Span>,
    pub init: Vec<u64>,
    pub instrs: Vec<Instr>,
    pub parts: Vec<(u32, u32)>,
}

impl Builder<'_> {
    /// Width of net `n`.
    pub fn width(&self, n: NetId) -> u32 {
        self.flat.nets[n.0 as usize].width
    }

    /// Storage of net `n`.
    pub fn span(&self, n: NetId) -> Span {
        self.nets[n.0 as usize]
    }

    /// Storage offset of net `n`.
    pub fn off(&self, n: NetId) -> u32 {
        self.nets[n.0 as usize].off
    }

    /// Reserves `count` zeroed words; returns the first one's offset.
    pub fn alloc(&mut self, count: usize) -> u32 {
        let off = self.init.len();
        self.init.resize(off + count, 0);
        off as u32
    }

    /// Stores `value` (truncated to `width` bits) at `off` in the initial image.
    pub fn store_const(&mut self, off: u32, value: &Bits, width: u32) {
        let n = words(width);
        let src = value.to_words();
        let dst = &mut self.init[off as usize..off as usize + n];
        for (i, d) in dst.iter_mut().enumerate() {
            *d = src.get(i).copied().unwrap_or(0);
        }
        if let Some(top) = dst.last_mut() {
            *top &= last_mask(width);
        }
    }

    /// Storage for net `n`: shared with its source for aliases and for operations
    /// whose words equal their operand's, fresh words otherwise.
    fn place(&mut self, n: NetId) {
        let net = &self.flat.nets[n.0 as usize];
        let w = net.width;
        let shared = match &net.driver {
            Driver::Alias(src) => Some(self.span(*src)),
            Driver::Op(Op::Extend { src, signed }) => {
                let sw = self.width(*src);
                (sw == w || (!signed && words(sw) == words(w))).then(|| self.span(*src))
            }
            Driver::Op(Op::Slice { src, lo }) => {
                let aligned =
                    lo.is_multiple_of(64) && (w.is_multiple_of(64) || lo + w == self.width(*src));
                aligned.then(|| Span {
                    off: self.off(*src) + lo / 64,
                    words: words(w) as u32,
                })
            }
            _ => None,
        };
        self.nets[n.0 as usize] = match shared {
            Some(s) => Span {
                off: s.off,
                words: words(w) as u32,
            },
            None => {
                let count = words(w);
                Span {
                    off: self.alloc(count),
                    words: count as u32,
                }
            }
        };
    }

    /// True if net `n` has words of its own that an instruction must compute.
    fn computes(&self, n: NetId) -> bool {
        let net = &self.flat.nets[n.0 as usize];
        match &net.driver {
            Driver::Op(Op::Extend { src, .. }) | Driver::Op(Op::Slice { src, .. }) => {
                let s = self.span(*src);
                let d = self.span(n);
                !(d.off >= s.off && d.off < s.off + s.words)
            }
            Driver::Op(_) => true,
            _ => false,
        }
    }
}

/// Compiles `flat`: levelizes it (failing on a combinational loop), lays out storage
/// and lowers every operation.
pub(crate) fn compile(flat: &FlatDesign) -> Result<Program, SimError> {
    let order = levelize(flat)?;
    let unset = Span {
        off: NONE,
        words: 0,
    };
    let mut b = Builder {
        flat,
        nets: vec![unset; flat.nets.len()],
        init: Vec::new(),
        instrs: Vec::with_capacity(flat.nets.len()),
        parts: Vec::new(),
    };
    for &n in &order {
        b.place(n);
    }
    for &n in &order {
        if let Driver::Op(op) = &flat.nets[n.0 as usize].driver {
            if b.computes(n) {
                lower(&mut b, n, op);
            }
        }
    }

    let mut domains = vec![DomainState::default(); flat.domains.len()];
    let mut shadow_len = 0usize;
    let mut shadow = |count: u32| {
        let off = shadow_len as u32;
        shadow_len += count as usize;
        off
    };
    for r in &flat.regs {
        let span = b.span(r.q);
        let (reset, reset_level, reset_value) = match (&r.reset_value, r.reset) {
            (Some(v), Some(rst)) => {
                let off = b.alloc(span.words as usize);
                b.store_const(off, v, b.width(r.q));
                let level = (rst.polarity == ResetPolarity::ActiveHigh) as u64;
                (b.off(rst.net), level, off)
            }
            _ => (NONE, 0, NONE),
        };
        let sample = RegSample {
            q: span.off,
            next: b.off(r.next),
            enable: r.enable.map_or(NONE, |e| b.off(e)),
            reset,
            reset_level,
            reset_value,
            shadow: shadow(span.words),
            words: span.words,
        };
        domains[r.domain.0 as usize].regs.push(sample);
    }

    let mut mems = Vec::with_capacity(flat.mems.len());
    let mut mem_init = Vec::new();
    for (i, m) in flat.mems.iter().enumerate() {
        let n = words(m.width);
        let base = mem_init.len();
        mem_init.resize(base + n * m.depth as usize, 0);
        if let Some(init) = &m.init {
            for (k, word) in init.iter().take(m.depth as usize).enumerate() {
                let src = word.to_words();
                let dst = &mut mem_init[base + k * n..base + (k + 1) * n];
                for (j, d) in dst.iter_mut().enumerate() {
                    *d = src.get(j).copied().unwrap_or(0);
                }
                if let Some(top) = dst.last_mut() {
                    *top &= last_mask(m.width);
                }
            }
        }
        mems.push(MemLayout {
            name: m.name.clone(),
            base,
            depth: m.depth,
            words: n as u32,
            width: m.width,
        });
        if let Some(w) = &m.write {
            let addr = b.span(w.addr);
            domains[w.domain.0 as usize].writes.push(WritePort {
                mem: i as u32,
                addr: addr.off,
                addr_words: addr.words,
                enable: b.off(w.enable),
                data: b.off(w.data),
            });
        }
        for r in &m.reads {
            let addr = b.span(r.addr);
            let port = ReadPort {
                mem: i as u32,
                addr: addr.off,
                addr_words: addr.words,
                enable: r.enable.map_or(NONE, |e| b.off(e)),
                data: b.off(r.data),
                shadow: shadow(n as u32),
            };
            domains[r.domain.0 as usize].reads.push(port);
        }
    }

    if b.init.len() >= NONE as usize {
        return Err(SimError::TooLarge(b.init.len()));
    }
    Ok(Program {
        instrs: b.instrs,
        parts: b.parts,
        init: b.init,
        nets: b.nets,
        domains,
        mems,
        mem_init,
        shadow_len,
    })
}
