//! Flattening: recursive expansion of a module's instances into one flat netlist
//! whose nets have hierarchical names (`u_fifo.count`).
//!
//! - An instance's input port nets become aliases of the parent nets connected to them;
//!   the parent's instance-output nets become aliases of the child's output port nets.
//! - Every clock domain of every instance is mapped to a top-level domain by following
//!   the aliases of its clock net up to a top-level clock port.
//! - A register keeps its own domain's reset net and polarity ([`FlatReset`]): an instance
//!   whose reset port is driven by an inverted parent reset simply sees another net.

use crate::error::SimError;
use hdl::ir::{
    ClockDomain, DomainId, Driver, MemId, MemRead, MemWrite, Memory, Module, Net, NetId, Op, Port,
    PortId, RegId, ResetPolarity, ShiftAmount,
};
use hdl::Bits;

/// A design with all instances expanded: the input of compilation.
///
/// Net ids index [`nets`](Self::nets); `Driver::Input` names a top-level port,
/// `Driver::Reg` an index into [`regs`](Self::regs) and `Driver::MemRead` an index into
/// [`mems`](Self::mems). No net is `Undriven` or an `InstanceOutput`.
#[derive(Clone, Debug)]
pub struct FlatDesign {
    /// Name of the top module.
    pub name: String,
    /// All nets; top-level nets keep their names, instance nets are prefixed with the
    /// instance path (`u_a.u_b.net`).
    pub nets: Vec<Net>,
    /// The top module's ports (their nets are flat ids).
    pub ports: Vec<Port>,
    /// The top module's clock domains; every register and memory port refers to one.
    pub domains: Vec<ClockDomain>,
    /// All registers of the hierarchy.
    pub regs: Vec<FlatReg>,
    /// All memories of the hierarchy, with hierarchical names and top-level domains.
    pub mems: Vec<Memory>,
}

/// A register of the flat design.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlatReg {
    /// The net carrying the register's output.
    pub q: NetId,
    /// Next value.
    pub next: NetId,
    /// Load enable, if any.
    pub enable: Option<NetId>,
    /// Value loaded while its reset is asserted; `None`: the register ignores reset.
    pub reset_value: Option<Bits>,
    /// The top-level domain whose rising edges clock it.
    pub domain: DomainId,
    /// The reset net of its own (possibly instance-level) domain, with that domain's polarity.
    pub reset: Option<FlatReset>,
}

/// A reset as one register sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlatReset {
    /// The reset net (flat id).
    pub net: NetId,
    /// Level that asserts it.
    pub polarity: ResetPolarity,
}

/// Flattens `top` into a [`FlatDesign`].
pub fn flatten(top: &Module) -> Result<FlatDesign, SimError> {
    let size = Size::of(top);
    let mut flat = FlatDesign {
        name: top.name.clone(),
        nets: Vec::with_capacity(size.nets),
        ports: top.ports.clone(),
        domains: top.domains.clone(),
        regs: Vec::with_capacity(size.regs),
        mems: Vec::with_capacity(size.mems),
    };
    expand(&mut flat, top, "", None)?;
    Ok(flat)
}

/// How many nets, registers and memories a module has with every instance
/// expanded (so that the flat tables are allocated once).
struct Size {
    nets: usize,
    regs: usize,
    mems: usize,
}

impl Size {
    fn of(m: &Module) -> Size {
        let mut size = Size {
            nets: m.nets.len(),
            regs: m.regs.len(),
            mems: m.mems.len(),
        };
        for inst in &m.instances {
            let child = Size::of(&inst.module);
            size.nets += child.nets;
            size.regs += child.regs;
            size.mems += child.mems;
        }
        size
    }
}

/// A module's domain as seen from the flat design.
struct Binding {
    top: DomainId,
    reset: Option<FlatReset>,
}

fn flatten_error(prefix: &str, module: &Module, reason: String) -> SimError {
    let path = prefix.trim_end_matches('.');
    let module = if path.is_empty() {
        module.name.clone()
    } else {
        format!("{path} ({})", module.name)
    };
    SimError::Flatten { module, reason }
}

/// `name` under the hierarchical `prefix` (empty, or ending in `.`): a
/// concatenation, without the formatting machinery, for every named net.
fn prefixed(prefix: &str, name: &str) -> String {
    let mut s = String::with_capacity(prefix.len() + name.len() + 1);
    s.push_str(prefix);
    s.push_str(name);
    s
}

/// Expands `m` with net names prefixed by `prefix`; `inputs` are the flat parent nets
/// connected to `m`'s ports (`None` for the top module). Returns the flat id of `m`'s net 0.
fn expand(
    flat: &mut FlatDesign,
    m: &Module,
    prefix: &str,
    inputs: Option<&[Option<NetId>]>,
) -> Result<u32, SimError> {
    let scope = Scope {
        m,
        prefix,
        base: flat.nets.len() as u32,
        reg_base: flat.regs.len() as u32,
        mem_base: flat.mems.len() as u32,
    };
    scope.nets(flat, inputs)?;
    let bindings = scope.bindings(flat)?;
    scope.regs(flat, &bindings)?;
    scope.mems(flat, &bindings)?;
    scope.instances(flat)?;
    scope.check_driven(flat)?;
    Ok(scope.base)
}

/// One module instance being expanded: the module, its hierarchical prefix and
/// where its nets, registers and memories start in the flat design.
struct Scope<'a> {
    m: &'a Module,
    prefix: &'a str,
    base: u32,
    reg_base: u32,
    mem_base: u32,
}

impl Scope<'_> {
    /// The flat id of the module's net `n`.
    fn id(&self, n: NetId) -> NetId {
        NetId(n.0 + self.base)
    }

    /// An error naming this instance.
    fn error(&self, reason: String) -> SimError {
        flatten_error(self.prefix, self.m, reason)
    }

    /// Appends the module's nets, their drivers moved into the flat design; an
    /// input's becomes an alias of the parent net connected to it.
    fn nets(
        &self,
        flat: &mut FlatDesign,
        inputs: Option<&[Option<NetId>]>,
    ) -> Result<(), SimError> {
        for (i, net) in self.m.nets.iter().enumerate() {
            let driver = match &net.driver {
                Driver::Input(p) => self.input(*p, inputs)?,
                Driver::Op(op) => Driver::Op(remap_op(op, self.base)),
                Driver::Alias(n) => Driver::Alias(self.id(*n)),
                Driver::Reg(r) => Driver::Reg(RegId(r.0 + self.reg_base)),
                Driver::MemRead { mem, port } => Driver::MemRead {
                    mem: MemId(mem.0 + self.mem_base),
                    port: *port,
                },
                // Set once the instance is expanded.
                Driver::InstanceOutput { .. } => Driver::Undriven,
                Driver::Undriven => {
                    let net = self.m.describe_net(NetId(i as u32));
                    return Err(self.error(format!("net `{net}` is undriven")));
                }
            };
            flat.nets.push(Net {
                name: net.name.as_deref().map(|n| prefixed(self.prefix, n)),
                width: net.width,
                driver,
                location: net.location,
            });
        }
        Ok(())
    }

    /// The flat driver of input port `p`: a top-level input, or an alias of the
    /// parent net connected to it.
    fn input(&self, p: PortId, inputs: Option<&[Option<NetId>]>) -> Result<Driver, SimError> {
        let Some(conns) = inputs else {
            return Ok(Driver::Input(p));
        };
        match conns.get(p.0 as usize).copied().flatten() {
            Some(parent) => Ok(Driver::Alias(parent)),
            None => {
                let name = self
                    .m
                    .ports
                    .get(p.0 as usize)
                    .map_or("?", |p| p.name.as_str());
                Err(self.error(format!("input `{name}` is not connected")))
            }
        }
    }

    /// Each of the module's domains as the top-level domain its clock comes from,
    /// with its reset net in the flat design.
    fn bindings(&self, flat: &FlatDesign) -> Result<Vec<Binding>, SimError> {
        let mut bindings = Vec::with_capacity(self.m.domains.len());
        for d in &self.m.domains {
            let root = resolve_alias(&flat.nets, self.id(d.clock));
            let Some(top) = flat.domains.iter().position(|td| td.clock == root) else {
                return Err(self.error(format!(
                    "the clock of domain `{}` does not come from a top-level clock",
                    d.name
                )));
            };
            bindings.push(Binding {
                top: DomainId(top as u32),
                reset: d.reset.map(|r| FlatReset {
                    net: self.id(r),
                    polarity: d.polarity,
                }),
            });
        }
        Ok(bindings)
    }

    /// The binding of the module's domain `d`.
    fn binding<'b>(&self, bindings: &'b [Binding], d: DomainId) -> Result<&'b Binding, SimError> {
        bindings
            .get(d.0 as usize)
            .ok_or_else(|| self.error(format!("domain #{} does not exist", d.0)))
    }

    /// Appends the module's registers, each in its top-level domain.
    fn regs(&self, flat: &mut FlatDesign, bindings: &[Binding]) -> Result<(), SimError> {
        for r in &self.m.regs {
            let b = self.binding(bindings, r.domain)?;
            flat.regs.push(FlatReg {
                q: self.id(r.q),
                next: self.id(r.next),
                enable: r.enable.map(|n| self.id(n)),
                reset_value: r.reset_value.clone(),
                domain: b.top,
                reset: b.reset,
            });
        }
        Ok(())
    }

    /// Appends the module's memories, named under the prefix, their ports in
    /// their top-level domains.
    fn mems(&self, flat: &mut FlatDesign, bindings: &[Binding]) -> Result<(), SimError> {
        for mem in &self.m.mems {
            let write = match &mem.write {
                Some(w) => Some(MemWrite {
                    domain: self.binding(bindings, w.domain)?.top,
                    addr: self.id(w.addr),
                    data: self.id(w.data),
                    enable: self.id(w.enable),
                }),
                None => None,
            };
            let mut reads = Vec::with_capacity(mem.reads.len());
            for r in &mem.reads {
                reads.push(MemRead {
                    domain: self.binding(bindings, r.domain)?.top,
                    addr: self.id(r.addr),
                    enable: r.enable.map(|n| self.id(n)),
                    data: self.id(r.data),
                });
            }
            flat.mems.push(Memory {
                name: prefixed(self.prefix, &mem.name),
                width: mem.width,
                depth: mem.depth,
                init: mem.init.clone(),
                write,
                reads,
                location: mem.location,
            });
        }
        Ok(())
    }

    /// Expands each instance under its own prefix, and makes every parent net
    /// connected to one of its outputs an alias of that output.
    fn instances(&self, flat: &mut FlatDesign) -> Result<(), SimError> {
        for inst in &self.m.instances {
            let conns: Vec<Option<NetId>> = inst
                .connections
                .iter()
                .map(|c| c.map(|n| self.id(n)))
                .collect();
            let mut child_prefix = prefixed(self.prefix, &inst.name);
            child_prefix.push('.');
            let child_base = expand(flat, &inst.module, &child_prefix, Some(&conns))?;
            for (pi, port) in inst.module.ports.iter().enumerate() {
                if port.direction != hdl::ir::Direction::Output {
                    continue;
                }
                if let Some(Some(parent)) = conns.get(pi) {
                    flat.nets[parent.0 as usize].driver =
                        Driver::Alias(NetId(port.net.0 + child_base));
                }
            }
        }
        Ok(())
    }

    /// An error if one of the module's nets is still undriven: an instance output
    /// connected to nothing of the instance's.
    fn check_driven(&self, flat: &FlatDesign) -> Result<(), SimError> {
        let base = self.base as usize;
        let undriven = (base..flat.nets.len())
            .take(self.m.nets.len())
            .find(|&i| flat.nets[i].driver == Driver::Undriven);
        match undriven {
            Some(i) => {
                let net = self.m.describe_net(NetId((i - base) as u32));
                Err(self.error(format!("net `{net}` is not driven by its instance")))
            }
            None => Ok(()),
        }
    }
}

/// Follows `Alias` drivers from `net` to the net that really drives it
/// (stops after as many hops as there are nets, so a cycle cannot hang it).
pub(crate) fn resolve_alias(nets: &[Net], mut net: NetId) -> NetId {
    for _ in 0..nets.len() {
        match nets.get(net.0 as usize).map(|n| &n.driver) {
            Some(Driver::Alias(src)) => net = *src,
            _ => break,
        }
    }
    net
}

/// `op` with every operand net id moved by `base`.
fn remap_op(op: &Op, base: u32) -> Op {
    let m = |n: &NetId| NetId(n.0 + base);
    match op {
        Op::Const(b) => Op::Const(b.clone()),
        Op::Not(a) => Op::Not(m(a)),
        Op::Bit(o, a, b) => Op::Bit(*o, m(a), m(b)),
        Op::Arith(o, a, b) => Op::Arith(*o, m(a), m(b)),
        Op::Cmp(o, a, b) => Op::Cmp(*o, m(a), m(b)),
        Op::Mux {
            sel,
            if_true,
            if_false,
        } => Op::Mux {
            sel: m(sel),
            if_true: m(if_true),
            if_false: m(if_false),
        },
        Op::Slice { src, lo } => Op::Slice {
            src: m(src),
            lo: *lo,
        },
        Op::Concat(parts) => Op::Concat(parts.iter().map(m).collect()),
        Op::Replicate { src, count } => Op::Replicate {
            src: m(src),
            count: *count,
        },
        Op::Extend { src, signed } => Op::Extend {
            src: m(src),
            signed: *signed,
        },
        Op::Shift { op, src, amount } => Op::Shift {
            op: *op,
            src: m(src),
            amount: match amount {
                ShiftAmount::Const(n) => ShiftAmount::Const(*n),
                ShiftAmount::Net(n) => ShiftAmount::Net(m(n)),
            },
        },
        Op::Reduce(o, a) => Op::Reduce(*o, m(a)),
        Op::LeadingZeros(a) => Op::LeadingZeros(m(a)),
    }
}
