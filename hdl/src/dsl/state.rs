//! State elements of the builder: registers (synchronous reset, enable, clock
//! domain) and block-RAM style memories.

use super::builder::{bits_or_error, Domain, ModuleBuilder, Signal};
use crate::bits::Bits;
use crate::ir::*;

/// A memory of the module being built (see [`ModuleBuilder::memory`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Memory {
    builder: u64,
    id: MemId,
    width: u32,
    addr_width: u32,
}

impl Memory {
    /// Word width in bits.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Address width in bits.
    pub fn addr_width(&self) -> u32 {
        self.addr_width
    }
}

/// What a new register samples.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Sampling {
    /// Values of its own domain.
    Own,
    /// A word of another domain that a handshake holds stable.
    Capture,
    /// A level of another domain: a synchronizer's first flop.
    Synchronizer,
}

impl ModuleBuilder {
    #[track_caller]
    fn new_reg(
        &mut self,
        domain: Domain,
        name: &str,
        width: u32,
        reset_value: Option<Bits>,
        sampling: Sampling,
    ) -> Signal {
        let name = &self.scoped(name);
        let width = self.check_width(name, width);
        self.owns_domain(domain);
        self.claim_name(name, "register");
        let id = RegId(self.data.regs.len() as u32);
        let q = self.new_net(Some(name.to_string()), width, Driver::Reg(id));
        self.data.regs.push(Register {
            q: q.net,
            domain: domain.id,
            next: q.net,
            enable: None,
            reset_value,
            crossing: sampling != Sampling::Own,
            async_reg: sampling == Sampling::Synchronizer,
        });
        self.reg_of.insert(q.net, id);
        q
    }

    /// A register of `width` bits in `domain`, reset to 0. Drive it with
    /// [`set_next`](Self::set_next); until then it holds its value.
    #[track_caller]
    pub fn reg(&mut self, domain: Domain, name: &str, width: u32) -> Signal {
        self.new_reg(
            domain,
            name,
            width,
            Some(Bits::zero(width.max(1))),
            Sampling::Own,
        )
    }

    /// A register reset to `reset_value` (an error if it does not fit `width`).
    #[track_caller]
    pub fn reg_init(&mut self, domain: Domain, name: &str, width: u32, reset_value: u64) -> Signal {
        match bits_or_error(reset_value, width) {
            Ok(b) => self.new_reg(domain, name, width, Some(b), Sampling::Own),
            Err(e) => {
                self.error(
                    Some(name),
                    HdlErrorKind::WidthMismatch {
                        op: "register reset value".into(),
                        detail: e,
                    },
                );
                self.new_reg(domain, name, width, None, Sampling::Own)
            }
        }
    }

    /// A register without reset (datapath pipelines: saves a reset net's fan-out).
    /// Its power-up value is undefined in hardware; both of wirespeed's simulation
    /// engines start it at 0 (Verilator is run with `--x-initial 0`).
    #[track_caller]
    pub fn reg_no_reset(&mut self, domain: Domain, name: &str, width: u32) -> Signal {
        self.new_reg(domain, name, width, None, Sampling::Own)
    }

    /// A register (reset to 0) that captures a word of another domain when a
    /// handshake has held it stable: it may sample a value of another domain. Only
    /// `hdl::blocks::cdc` uses it, where the protocol makes it safe.
    #[track_caller]
    pub(crate) fn crossing_reg(&mut self, domain: Domain, name: &str, width: u32) -> Signal {
        self.new_reg(
            domain,
            name,
            width,
            Some(Bits::zero(width.max(1))),
            Sampling::Capture,
        )
    }

    /// The first flop of a synchronizer (reset to 0): it samples a level of another
    /// domain, so it may go metastable, and the Verilog marks it `ASYNC_REG`. Follow
    /// it with [`sync_stage`](Self::sync_stage). Only `hdl::blocks::cdc` and the
    /// FIFOs use it.
    #[track_caller]
    pub(crate) fn sync_first(&mut self, domain: Domain, name: &str, width: u32) -> Signal {
        self.new_reg(
            domain,
            name,
            width,
            Some(Bits::zero(width.max(1))),
            Sampling::Synchronizer,
        )
    }

    /// A later flop of a synchronizer (reset to 0): `prev`, the chain's flop before
    /// it, one cycle later, marked `ASYNC_REG` like it.
    #[track_caller]
    pub(crate) fn sync_stage(&mut self, domain: Domain, name: &str, prev: Signal) -> Signal {
        let r = self.register(domain, name, prev);
        if let Some(&id) = self.reg_of.get(&r.net) {
            self.data.regs[id.0 as usize].async_reg = true;
        }
        r
    }

    #[track_caller]
    fn reg_id(&mut self, reg: Signal, what: &str) -> Option<RegId> {
        if !self.owns(reg) {
            return None;
        }
        match self.reg_of.get(&reg.net) {
            Some(id) => Some(*id),
            None => {
                let name = self.describe(reg);
                self.error(
                    Some(&name),
                    HdlErrorKind::IllegalUse(format!("{what}: `{name}` is not a register")),
                );
                None
            }
        }
    }

    /// Sets the value `reg` loads on each enabled clock edge (once per register).
    #[track_caller]
    pub fn set_next(&mut self, reg: Signal, next: Signal) {
        let Some(id) = self.reg_id(reg, "set_next") else {
            return;
        };
        if !self.owns(next) {
            return;
        }
        let name = self.describe(reg);
        if reg.width != next.width {
            let detail = format!(
                "register `{name}` is {} bits, next value `{}` is {} bits",
                reg.width,
                self.describe(next),
                next.width
            );
            self.error(
                Some(&name),
                HdlErrorKind::WidthMismatch {
                    op: "set_next".into(),
                    detail,
                },
            );
            return;
        }
        let r = &self.data.regs[id.0 as usize];
        if r.next != r.q {
            let prev = self.data.describe_net(r.next);
            self.error(
                Some(&name),
                HdlErrorKind::MultipleDrivers(format!("`{prev}`")),
            );
            return;
        }
        self.data.regs[id.0 as usize].next = next.net;
    }

    /// Makes `reg` load only when `enable` (1 bit) is 1; it holds otherwise.
    #[track_caller]
    pub fn set_enable(&mut self, reg: Signal, enable: Signal) {
        let Some(id) = self.reg_id(reg, "set_enable") else {
            return;
        };
        if !self.owns(enable) {
            return;
        }
        let name = self.describe(reg);
        if enable.width != 1 {
            let detail = format!("enable of `{name}` must be 1 bit, is {} bits", enable.width);
            self.error(
                Some(&name),
                HdlErrorKind::WidthMismatch {
                    op: "set_enable".into(),
                    detail,
                },
            );
            return;
        }
        let r = &mut self.data.regs[id.0 as usize];
        if r.enable.is_some() {
            self.error(
                Some(&name),
                HdlErrorKind::MultipleDrivers("an earlier enable".into()),
            );
            return;
        }
        r.enable = Some(enable.net);
    }

    /// A register named `name` in `domain`, reset to 0, that loads `next` every cycle.
    #[track_caller]
    pub fn register(&mut self, domain: Domain, name: &str, next: Signal) -> Signal {
        let r = self.reg(domain, name, next.width);
        self.set_next(r, next);
        r
    }

    /// A register (reset to 0) that loads `next` when `enable` is 1.
    #[track_caller]
    pub fn register_en(
        &mut self,
        domain: Domain,
        name: &str,
        next: Signal,
        enable: Signal,
    ) -> Signal {
        let r = self.register(domain, name, next);
        self.set_enable(r, enable);
        r
    }

    /// `value` delayed by `stages` clock cycles through unreset registers named
    /// `{name}_d1 … {name}_d{stages}` (0 stages returns `value`).
    #[track_caller]
    pub fn delay(&mut self, domain: Domain, name: &str, value: Signal, stages: u32) -> Signal {
        let mut v = value;
        for i in 1..=stages {
            let r = self.reg_no_reset(domain, &format!("{name}_d{i}"), value.width);
            self.set_next(r, v);
            v = r;
        }
        v
    }

    /// A simple-dual-port memory of `depth` words of `width` bits with optional initial
    /// contents (exactly `depth` words of `width` bits). Add one write port with
    /// [`mem_write`](Self::mem_write) (or none, for a ROM) and synchronous read ports with
    /// [`mem_read`](Self::mem_read): the shape Vivado and Yosys map to block RAM.
    #[track_caller]
    pub fn memory(
        &mut self,
        name: &str,
        width: u32,
        depth: u32,
        init: Option<Vec<Bits>>,
    ) -> Memory {
        let name = &self.scoped(name);
        let width = self.check_width(name, width);
        self.claim_name(name, "memory");
        if depth < 2 {
            self.error(
                Some(name),
                HdlErrorKind::Memory(format!("depth {depth}: a memory needs at least 2 words")),
            );
        }
        if let Some(words) = &init {
            if words.len() != depth as usize {
                self.error(
                    Some(name),
                    HdlErrorKind::Memory(format!(
                        "{} initial words given for a depth of {depth}",
                        words.len()
                    )),
                );
            } else if let Some((i, w)) = words.iter().enumerate().find(|(_, w)| w.width() != width)
            {
                self.error(
                    Some(name),
                    HdlErrorKind::Memory(format!(
                        "initial word {i} is {} bits, the memory is {width} bits wide",
                        w.width()
                    )),
                );
            }
        }
        let id = MemId(self.data.mems.len() as u32);
        self.data.mems.push(crate::ir::Memory {
            name: name.to_string(),
            width,
            depth: depth.max(2),
            init,
            write: None,
            reads: vec![],
            location: SourceLoc::caller(),
        });
        Memory {
            builder: self.id,
            id,
            width,
            addr_width: addr_width(depth.max(2)),
        }
    }

    #[track_caller]
    fn check_mem_operand(&mut self, mem: Memory, what: &str, s: Signal, width: u32) -> bool {
        if mem.builder != self.id {
            self.error(
                None,
                HdlErrorKind::IllegalUse("a memory of another module was used here".into()),
            );
            return false;
        }
        if !self.owns(s) {
            return false;
        }
        if s.width != width {
            let name = self.data.mems[mem.id.0 as usize].name.clone();
            let detail = format!(
                "{what} of memory `{name}` must be {width} bits, `{}` is {} bits",
                self.describe(s),
                s.width
            );
            self.error(
                Some(&name),
                HdlErrorKind::WidthMismatch {
                    op: "memory port".into(),
                    detail,
                },
            );
            return false;
        }
        true
    }

    /// The write port of `mem`: on a rising edge of `domain`, if `enable`, `mem[addr] <= data`.
    #[track_caller]
    pub fn mem_write(
        &mut self,
        mem: Memory,
        domain: Domain,
        addr: Signal,
        data: Signal,
        enable: Signal,
    ) {
        let ok = self.check_mem_operand(mem, "write address", addr, mem.addr_width)
            && self.check_mem_operand(mem, "write data", data, mem.width)
            && self.check_mem_operand(mem, "write enable", enable, 1)
            && self.owns_domain(domain);
        if !ok {
            return;
        }
        let m = &mut self.data.mems[mem.id.0 as usize];
        if m.write.is_some() {
            let name = m.name.clone();
            self.error(
                Some(&name),
                HdlErrorKind::Memory("a second write port (memories are simple dual-port)".into()),
            );
            return;
        }
        m.write = Some(MemWrite {
            domain: domain.id,
            addr: addr.net,
            data: data.net,
            enable: enable.net,
        });
    }

    /// A synchronous read port of `mem` in `domain`: on a rising edge, if `enable` (or
    /// always, if `None`), the returned signal loads `mem[addr]` as it was before any
    /// write at that edge (read-first). The memory must be written in the same domain.
    #[track_caller]
    pub fn mem_read(
        &mut self,
        mem: Memory,
        domain: Domain,
        name: &str,
        addr: Signal,
        enable: Option<Signal>,
    ) -> Signal {
        let ok = self.check_mem_operand(mem, "read address", addr, mem.addr_width)
            && enable.is_none_or(|e| self.check_mem_operand(mem, "read enable", e, 1))
            && self.owns_domain(domain);
        if !ok {
            return self.zeros(mem.width);
        }
        let name = &self.scoped(name);
        self.claim_name(name, "memory read data");
        let port = self.data.mems[mem.id.0 as usize].reads.len() as u32;
        let data = self.new_net(
            Some(name.to_string()),
            mem.width,
            Driver::MemRead { mem: mem.id, port },
        );
        self.data.mems[mem.id.0 as usize].reads.push(MemRead {
            domain: domain.id,
            addr: addr.net,
            enable: enable.map(|e| e.net),
            data: data.net,
        });
        data
    }

    /// Allows `mem` to be written and read in different clock domains: the storage
    /// of an asynchronous FIFO, whose Gray-coded pointers make that safe.
    pub(crate) fn allow_dual_clock(&mut self, mem: Memory) {
        self.dual_clock_mems.insert(mem.id);
    }
}
