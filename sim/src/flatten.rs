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
    RegId, ResetPolarity, ShiftAmount,
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
    let base = flat.nets.len() as u32;
    let reg_base = flat.regs.len() as u32;
    let mem_base = flat.mems.len() as u32;
    let id = |n: NetId| NetId(n.0 + base);

    for (i, net) in m.nets.iter().enumerate() {
        let driver = match &net.driver {
            Driver::Input(p) => match inputs {
                None => Driver::Input(*p),
                Some(conns) => match conns.get(p.0 as usize).copied().flatten() {
                    Some(parent) => Driver::Alias(parent),
                    None => {
                        let name = m.ports.get(p.0 as usize).map_or("?", |p| p.name.as_str());
                        return Err(flatten_error(
                            prefix,
                            m,
                            format!("input `{name}` is not connected"),
                        ));
                    }
                },
            },
            Driver::Op(op) => Driver::Op(remap_op(op, base)),
            Driver::Alias(n) => Driver::Alias(id(*n)),
            Driver::Reg(r) => Driver::Reg(RegId(r.0 + reg_base)),
            Driver::MemRead { mem, port } => Driver::MemRead {
                mem: MemId(mem.0 + mem_base),
                port: *port,
            },
            // Set once the instance is expanded.
            Driver::InstanceOutput { .. } => Driver::Undriven,
            Driver::Undriven => {
                return Err(flatten_error(
                    prefix,
                    m,
                    format!("net `{}` is undriven", m.describe_net(NetId(i as u32))),
                ))
            }
        };
        flat.nets.push(Net {
            name: net.name.as_deref().map(|n| prefixed(prefix, n)),
            width: net.width,
            driver,
            location: net.location,
        });
    }

    let mut bindings = Vec::with_capacity(m.domains.len());
    for d in &m.domains {
        let root = resolve_alias(&flat.nets, id(d.clock));
        let Some(top) = flat.domains.iter().position(|td| td.clock == root) else {
            return Err(flatten_error(
                prefix,
                m,
                format!(
                    "the clock of domain `{}` does not come from a top-level clock",
                    d.name
                ),
            ));
        };
        bindings.push(Binding {
            top: DomainId(top as u32),
            reset: d.reset.map(|r| FlatReset {
                net: id(r),
                polarity: d.polarity,
            }),
        });
    }
    let binding = |d: DomainId| -> Result<&Binding, SimError> {
        bindings
            .get(d.0 as usize)
            .ok_or_else(|| flatten_error(prefix, m, format!("domain #{} does not exist", d.0)))
    };

    for r in &m.regs {
        let b = binding(r.domain)?;
        flat.regs.push(FlatReg {
            q: id(r.q),
            next: id(r.next),
            enable: r.enable.map(id),
            reset_value: r.reset_value.clone(),
            domain: b.top,
            reset: b.reset,
        });
    }
    for mem in &m.mems {
        let write = match &mem.write {
            Some(w) => Some(MemWrite {
                domain: binding(w.domain)?.top,
                addr: id(w.addr),
                data: id(w.data),
                enable: id(w.enable),
            }),
            None => None,
        };
        let mut reads = Vec::with_capacity(mem.reads.len());
        for r in &mem.reads {
            reads.push(MemRead {
                domain: binding(r.domain)?.top,
                addr: id(r.addr),
                enable: r.enable.map(id),
                data: id(r.data),
            });
        }
        flat.mems.push(Memory {
            name: prefixed(prefix, &mem.name),
            width: mem.width,
            depth: mem.depth,
            init: mem.init.clone(),
            write,
            reads,
            location: mem.location,
        });
    }

    for inst in &m.instances {
        let conns: Vec<Option<NetId>> = inst.connections.iter().map(|c| c.map(id)).collect();
        let mut child_prefix = prefixed(prefix, &inst.name);
        child_prefix.push('.');
        let child_base = expand(flat, &inst.module, &child_prefix, Some(&conns))?;
        for (pi, port) in inst.module.ports.iter().enumerate() {
            if port.direction != hdl::ir::Direction::Output {
                continue;
            }
            if let Some(Some(parent)) = conns.get(pi) {
                flat.nets[parent.0 as usize].driver = Driver::Alias(NetId(port.net.0 + child_base));
            }
        }
    }
    if let Some(i) = (base as usize..flat.nets.len())
        .take(m.nets.len())
        .find(|&i| flat.nets[i].driver == Driver::Undriven)
    {
        let local = NetId(i as u32 - base);
        return Err(flatten_error(
            prefix,
            m,
            format!(
                "net `{}` is not driven by its instance",
                m.describe_net(local)
            ),
        ));
    }
    Ok(base)
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
