//! Structural validation of a module and computation of its `PortSummary`:
//! undriven nets, synchronizer chains, instance connections, combinational loops and
//! clock-domain crossings.

use super::error::{HdlError, HdlErrorKind};
use super::netlist::*;
use std::collections::{BTreeMap, BTreeSet};

/// Validates `data` and fills in its port summary.
pub fn validate(data: &mut ModuleData) -> Result<(), HdlError> {
    check_drivers(data)?;
    check_synchronizers(data)?;
    let domain_maps = check_instances(data)?;
    check_comb_loops(data)?;
    data.summary = check_domains(data, &domain_maps)?;
    Ok(())
}

fn err(data: &ModuleData, signal: &str, kind: HdlErrorKind) -> HdlError {
    HdlError::new(&data.name, Some(signal), kind)
}

fn check_drivers(data: &ModuleData) -> Result<(), HdlError> {
    for (i, net) in data.nets.iter().enumerate() {
        if net.driver == Driver::Undriven {
            let what = if data
                .ports
                .iter()
                .any(|p| p.net.0 as usize == i && p.direction == Direction::Output)
            {
                "output"
            } else {
                "wire"
            };
            let name = data.describe_net(NetId(i as u32));
            return Err(err(
                data,
                &name,
                HdlErrorKind::Undriven(format!("{what} `{name}`")),
            ));
        }
    }
    Ok(())
}

/// Every register marked as a synchronizer flop (`async_reg`) is one: loaded at
/// every edge, it is its chain's first (it samples another domain) or copies a
/// synchronizer flop of its own domain.
fn check_synchronizers(data: &ModuleData) -> Result<(), HdlError> {
    for r in data.regs.iter().filter(|r| r.async_reg) {
        let copies_a_flop = match data.net(r.next).driver {
            Driver::Reg(p) => {
                let prev = &data.regs[p.0 as usize];
                prev.async_reg && prev.domain == r.domain
            }
            _ => false,
        };
        if r.enable.is_some() || !(r.crossing || copies_a_flop) {
            let name = data.describe_net(r.q);
            return Err(err(
                data,
                &name,
                HdlErrorKind::IllegalUse(format!(
                    "register `{name}` is marked as a synchronizer flop, but {}",
                    if r.enable.is_some() {
                        "it has an enable"
                    } else {
                        "it neither samples another domain nor copies a synchronizer flop"
                    }
                )),
            ));
        }
    }
    Ok(())
}

/// For each instance: child domain index → parent domain.
type DomainMap = Vec<BTreeMap<DomainId, DomainId>>;

fn check_instances(data: &ModuleData) -> Result<DomainMap, HdlError> {
    let clock_domain: BTreeMap<NetId, DomainId> = data
        .domains
        .iter()
        .enumerate()
        .map(|(i, d)| (d.clock, DomainId(i as u32)))
        .collect();
    let mut maps = Vec::new();
    for inst in &data.instances {
        let child = &inst.module;
        let mut map = BTreeMap::new();
        for (pi, port) in child.ports.iter().enumerate() {
            let conn = inst.connections[pi];
            if port.direction == Direction::Input && conn.is_none() {
                let what = match port.kind {
                    PortKind::Data => format!("input `{}` is not connected", port.name),
                    _ => format!(
                        "{} `{}` is not bound to a clock domain",
                        if port.kind == PortKind::Clock {
                            "clock"
                        } else {
                            "reset"
                        },
                        port.name
                    ),
                };
                return Err(err(data, &inst.name, HdlErrorKind::Connection(what)));
            }
        }
        for (ci, cd) in child.domains.iter().enumerate() {
            let (pi, _) = child
                .ports
                .iter()
                .enumerate()
                .find(|(_, p)| p.net == cd.clock)
                .expect("a domain's clock is a port");
            let parent_net = inst.connections[pi].expect("checked above");
            match clock_domain.get(&parent_net) {
                Some(pd) => {
                    map.insert(DomainId(ci as u32), *pd);
                }
                None => {
                    return Err(err(
                        data,
                        &inst.name,
                        HdlErrorKind::Connection(format!(
                            "clock of domain `{}` is driven by `{}`, which is not a clock of this module",
                            cd.name,
                            data.describe_net(parent_net)
                        )),
                    ))
                }
            }
        }
        maps.push(map);
    }
    Ok(maps)
}

/// The nets a net depends on combinationally (within this module).
fn comb_deps(data: &ModuleData, net: NetId) -> Vec<NetId> {
    match &data.net(net).driver {
        Driver::Op(op) => op.operands(),
        Driver::Alias(src) => vec![*src],
        Driver::InstanceOutput { inst, port } => {
            let inst = &data.instances[inst.0 as usize];
            inst.module.summary.comb_inputs[port.0 as usize]
                .iter()
                .filter_map(|p| inst.connections[p.0 as usize])
                .collect()
        }
        Driver::Input(_) | Driver::Reg(_) | Driver::MemRead { .. } | Driver::Undriven => vec![],
    }
}

/// Nets in an order where every net comes after its combinational dependencies.
/// Fails with the loop if there is one.
pub fn comb_order(data: &ModuleData) -> Result<Vec<NetId>, HdlError> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Active,
        Done,
    }
    let n = data.nets.len();
    let mut mark = vec![Mark::New; n];
    let mut order = Vec::with_capacity(n);
    for root in 0..n {
        if mark[root] != Mark::New {
            continue;
        }
        let mut stack: Vec<(NetId, Vec<NetId>)> =
            vec![(NetId(root as u32), comb_deps(data, NetId(root as u32)))];
        mark[root] = Mark::Active;
        while let Some((net, deps)) = stack.last_mut() {
            if let Some(dep) = deps.pop() {
                match mark[dep.0 as usize] {
                    Mark::Done => {}
                    Mark::New => {
                        mark[dep.0 as usize] = Mark::Active;
                        let d = comb_deps(data, dep);
                        stack.push((dep, d));
                    }
                    Mark::Active => {
                        let start = stack
                            .iter()
                            .position(|(s, _)| *s == dep)
                            .expect("active nets are on the stack");
                        let mut path: Vec<String> = stack[start..]
                            .iter()
                            .map(|(s, _)| data.describe_net(*s))
                            .collect();
                        path.reverse();
                        path.push(path[0].clone());
                        return Err(err(
                            data,
                            &data.describe_net(dep),
                            HdlErrorKind::CombinationalLoop(path),
                        ));
                    }
                }
            } else {
                let net = *net;
                mark[net.0 as usize] = Mark::Done;
                order.push(net);
                stack.pop();
            }
        }
    }
    Ok(order)
}

fn check_comb_loops(data: &ModuleData) -> Result<(), HdlError> {
    comb_order(data).map(|_| ())
}

/// Per net: the clock domains and the input ports its value is computed from.
#[derive(Clone, Default)]
struct Origin {
    domains: BTreeSet<DomainId>,
    inputs: BTreeSet<PortId>,
}

/// Checks that no logic combines values of two clock domains and that every
/// sampled value comes from the sampling domain; returns which domains each port
/// feeds or comes from, and which inputs each output follows combinationally.
fn check_domains(data: &ModuleData, maps: &DomainMap) -> Result<PortSummary, HdlError> {
    let origin = origins(data, maps)?;
    let input_sinks = check_sinks(data, &origin, &sinks(data, maps))?;
    port_summary(data, &origin, &input_sinks)
}

/// Every net's [`Origin`], in combinational order; an error where logic uses a
/// clock as data or combines values of two domains.
fn origins(data: &ModuleData, maps: &DomainMap) -> Result<Vec<Origin>, HdlError> {
    let order = comb_order(data)?;
    let is_clock: BTreeSet<NetId> = data.domains.iter().map(|d| d.clock).collect();
    let reset_domain: BTreeMap<NetId, DomainId> = data
        .domains
        .iter()
        .enumerate()
        .filter_map(|(i, d)| d.reset.map(|r| (r, DomainId(i as u32))))
        .collect();
    let mut origin = vec![Origin::default(); data.nets.len()];
    for &net in &order {
        let mut o = own_origin(data, maps, &reset_domain, net);
        for dep in comb_deps(data, net) {
            if is_clock.contains(&dep) {
                return Err(err(
                    data,
                    &data.describe_net(net),
                    HdlErrorKind::IllegalUse(format!(
                        "clock `{}` used as data",
                        data.describe_net(dep)
                    )),
                ));
            }
            let d = origin[dep.0 as usize].clone();
            o.domains.extend(d.domains);
            o.inputs.extend(d.inputs);
        }
        if o.domains.len() > 1 {
            return Err(err(
                data,
                &data.describe_net(net),
                HdlErrorKind::CrossDomain(format!(
                    "combines values of domains {}",
                    domain_list(data, &o.domains)
                )),
            ));
        }
        origin[net.0 as usize] = o;
    }
    Ok(origin)
}

/// The origin `net`'s driver gives it by itself, before its operands': a data
/// input, a reset's or a register's domain, a memory read port's, or the domains
/// an instance's output comes from.
fn own_origin(
    data: &ModuleData,
    maps: &DomainMap,
    reset_domain: &BTreeMap<NetId, DomainId>,
    net: NetId,
) -> Origin {
    let mut o = Origin::default();
    match &data.net(net).driver {
        Driver::Input(p) => match data.ports[p.0 as usize].kind {
            PortKind::Data => {
                o.inputs.insert(*p);
            }
            // A reset belongs to its domain: logic of another domain may not use it.
            PortKind::Reset => o.domains.extend(reset_domain.get(&net)),
            PortKind::Clock => {}
        },
        Driver::Reg(r) => {
            o.domains.insert(data.regs[r.0 as usize].domain);
        }
        Driver::MemRead { mem, port } => {
            o.domains
                .insert(data.mems[mem.0 as usize].reads[*port as usize].domain);
        }
        Driver::InstanceOutput { inst, port } => {
            let summary = &data.instances[inst.0 as usize].module.summary;
            for d in &summary.domains[port.0 as usize] {
                o.domains.insert(maps[inst.0 as usize][d]);
            }
        }
        Driver::Op(_) | Driver::Alias(_) | Driver::Undriven => {}
    }
    o
}

/// A place where a clock domain samples a net: what samples it (for errors), the
/// domain and the net.
type Sink = (String, DomainId, NetId);

/// Every place a value is sampled by a clock domain: registers and their
/// enables, memory ports, and the data inputs of instances.
fn sinks(data: &ModuleData, maps: &DomainMap) -> Vec<Sink> {
    let mut sinks = Vec::new();
    for r in &data.regs {
        let name = data.describe_net(r.q);
        if !r.crossing {
            sinks.push((format!("register `{name}`"), r.domain, r.next));
        }
        if let Some(en) = r.enable {
            sinks.push((format!("enable of register `{name}`"), r.domain, en));
        }
    }
    for m in &data.mems {
        if let Some(w) = &m.write {
            for net in [w.addr, w.data, w.enable] {
                sinks.push((format!("write port of memory `{}`", m.name), w.domain, net));
            }
        }
        for r in &m.reads {
            for net in std::iter::once(r.addr).chain(r.enable) {
                sinks.push((format!("read port of memory `{}`", m.name), r.domain, net));
            }
        }
    }
    for (ii, inst) in data.instances.iter().enumerate() {
        for (pi, port) in inst.module.ports.iter().enumerate() {
            if port.direction != Direction::Input || port.kind != PortKind::Data {
                continue;
            }
            let net = inst.connections[pi].expect("checked by check_instances");
            for d in &inst.module.summary.domains[pi] {
                sinks.push((
                    format!("input `{}` of instance `{}`", port.name, inst.name),
                    maps[ii][d],
                    net,
                ));
            }
        }
    }
    sinks
}

/// Checks that every sink samples only values of its own domain; returns, per
/// data input, the domains that sample values computed from it.
fn check_sinks(
    data: &ModuleData,
    origin: &[Origin],
    sinks: &[Sink],
) -> Result<BTreeMap<PortId, BTreeSet<DomainId>>, HdlError> {
    let mut input_sinks: BTreeMap<PortId, BTreeSet<DomainId>> = BTreeMap::new();
    for (what, domain, net) in sinks {
        let o = &origin[net.0 as usize];
        if let Some(other) = o.domains.iter().find(|d| *d != domain) {
            return Err(err(
                data,
                &data.describe_net(*net),
                HdlErrorKind::CrossDomain(format!(
                    "{what} in domain `{}` samples a value of domain `{}`; use a synchronizer from hdl::blocks::cdc",
                    data.domains[domain.0 as usize].name,
                    data.domains[other.0 as usize].name
                )),
            ));
        }
        for p in &o.inputs {
            input_sinks.entry(*p).or_default().insert(*domain);
        }
    }
    Ok(input_sinks)
}

/// Per port, the domains it feeds (an input, at most one) or comes from (an
/// output), and the inputs an output follows combinationally.
fn port_summary(
    data: &ModuleData,
    origin: &[Origin],
    input_sinks: &BTreeMap<PortId, BTreeSet<DomainId>>,
) -> Result<PortSummary, HdlError> {
    let mut summary = PortSummary::default();
    for (pi, port) in data.ports.iter().enumerate() {
        let pid = PortId(pi as u32);
        let (domains, comb) = match port.direction {
            Direction::Input => (
                input_sinks.get(&pid).cloned().unwrap_or_default(),
                BTreeSet::new(),
            ),
            Direction::Output => {
                let o = &origin[port.net.0 as usize];
                (o.domains.clone(), o.inputs.clone())
            }
        };
        if domains.len() > 1 {
            return Err(err(
                data,
                &port.name,
                HdlErrorKind::CrossDomain(format!(
                    "input feeds logic in domains {}",
                    domain_list(data, &domains)
                )),
            ));
        }
        summary.domains.push(domains);
        summary.comb_inputs.push(comb);
    }
    Ok(summary)
}

fn domain_list(data: &ModuleData, domains: &BTreeSet<DomainId>) -> String {
    domains
        .iter()
        .map(|d| format!("`{}`", data.domains[d.0 as usize].name))
        .collect::<Vec<_>>()
        .join(" and ")
}
