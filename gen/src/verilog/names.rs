//! Verilog identifiers of one module: builder names are kept, an unnamed net that
//! feeds a register, memory or instance is named after that role (`count_next`,
//! `ram_waddr`, `u_fifo_din`), an unnamed value an output port carries may take the
//! port's name (`assign full = …;`, read inside as `full`), other unnamed nets become
//! `_n<id>`, and every helper name the emitter invents is made unique.

use crate::GenError;
use hdl::ir::{is_legal_identifier, Direction, Driver, NetId, Op};
use hdl::Module;
use std::collections::HashSet;

/// Words Verilator reserves for its C++ output (its `V3LanguageWords`): a top-level port
/// with one of these names draws a SYMRSVDWORD warning, because top-level ports become
/// members of the generated C++ class. Verilog keywords are already excluded by the
/// builder; this is the rest.
#[rustfmt::skip]
const VERILATOR_CPP_WORDS: &[&str] = &[
    "NULL", "abort", "alignas", "alignof", "and_eq", "asm", "atomic_cancel", "atomic_commit",
    "atomic_noexcept", "auto", "bit_vector", "bitand", "bitor", "bool", "case", "catch",
    "cdecl", "char", "char16_t", "char32_t", "compl", "complex", "concept", "const_cast",
    "const_iterator", "constexpr", "decltype", "delete", "deque", "double", "dynamic_cast",
    "explicit", "false", "far", "float", "friend", "goto", "huge", "inline", "interrupt",
    "iterator", "list", "long", "map", "mutable", "namespace", "near", "noexcept", "not_eq",
    "nullptr", "operator", "or_eq", "override", "pascal", "private", "public", "queue",
    "reference", "register", "requires", "restrict", "set", "short", "sizeof", "stack",
    "static_assert", "static_cast", "switch", "synchronized", "template", "thread_local",
    "throw", "transaction_safe", "transaction_safe_dynamic", "true", "try", "type_info",
    "typeid", "typename", "uint16_t", "uint32_t", "uint8_t", "using", "vector", "wchar_t",
    "xor_eq", "sc_clock", "sc_in", "sc_inout", "sc_out", "sc_signal", "sensitive",
    "sensitive_neg", "sensitive_pos",
];

/// True if Verilator reserves `name` for its C++ output (see `VERILATOR_CPP_WORDS`).
pub(crate) fn is_verilator_cpp_word(name: &str) -> bool {
    VERILATOR_CPP_WORDS.contains(&name)
}

/// The identifiers taken in one Verilog module scope.
#[derive(Clone, Debug, Default)]
pub(crate) struct Namespace {
    taken: HashSet<String>,
}

impl Namespace {
    /// Takes `name`; false if it was already taken.
    pub(crate) fn reserve(&mut self, name: &str) -> bool {
        self.taken.insert(name.to_string())
    }

    /// A name not yet taken: `base`, else `base_1`, `base_2`, … (first free), now taken.
    pub(crate) fn fresh(&mut self, base: &str) -> String {
        if self.reserve(base) {
            return base.to_string();
        }
        let mut i = 1u64;
        loop {
            let candidate = format!("{base}_{i}");
            if self.reserve(&candidate) {
                return candidate;
            }
            i += 1;
        }
    }
}

/// The Verilog name of every net of a module, plus the namespace holding them.
#[derive(Debug)]
pub(crate) struct ModuleNames {
    /// Name of net `i`.
    nets: Vec<String>,
    /// Name of memory `i`.
    pub(crate) mems: Vec<String>,
    /// Name of instance `i`.
    pub(crate) instances: Vec<String>,
    /// Net `i` is an unnamed value written under the name of the output port that
    /// carries it.
    port_valued: Vec<bool>,
}

impl ModuleNames {
    /// Names for everything in `m`, and the namespace holding them (helpers draw fresh
    /// names from it). Port names are the interface and must be legal and unique; other
    /// builder names are kept when legal and unique, otherwise made unique. With
    /// `by_port`, an unnamed value an output port carries takes the port's name (the
    /// first such port's).
    pub(crate) fn new(m: &Module, by_port: bool) -> Result<(Self, Namespace), GenError> {
        let mut space = Namespace::default();
        let mut nets: Vec<Option<String>> = vec![None; m.nets.len()];
        let bad = |what: &'static str, name: &str, reason: &str| GenError::BadName {
            module: m.name.clone(),
            what,
            name: name.to_string(),
            reason: reason.to_string(),
        };
        for port in &m.ports {
            if !is_legal_identifier(&port.name) {
                return Err(bad("port", &port.name, "not a legal identifier"));
            }
            if !space.reserve(&port.name) {
                return Err(bad("port", &port.name, "two ports share the name"));
            }
            let slot = nets
                .get_mut(port.net.0 as usize)
                .ok_or_else(|| bad("port", &port.name, "its net does not exist"))?;
            *slot = Some(port.name.clone());
        }
        for p in &m.parameters {
            if !is_legal_identifier(&p.name) {
                return Err(bad("parameter", &p.name, "not a legal identifier"));
            }
            if !space.reserve(&p.name) || !space.reserve(&format!("check_{}", p.name)) {
                return Err(bad("parameter", &p.name, "its name is taken"));
            }
        }
        let roles = role_names(m);
        let mut port_valued = vec![false; m.nets.len()];
        if by_port {
            for (x, port) in m.ports.iter().filter_map(|p| carried_value(m, p)) {
                let i = x.0 as usize;
                if nets[i].is_none() && roles[i].is_none() {
                    nets[i] = Some(port.clone());
                    port_valued[i] = true;
                }
            }
        }
        // Unnamed nets first: `_n<id>` can never clash with a legal builder name.
        for (i, net) in m.nets.iter().enumerate() {
            if nets[i].is_none() && net.name.is_none() && roles[i].is_none() {
                let name = format!("_n{i}");
                space.reserve(&name);
                nets[i] = Some(name);
            }
        }
        let mut claim = |name: &str| {
            if is_legal_identifier(name) {
                space.fresh(name)
            } else {
                space.fresh("_renamed")
            }
        };
        let named: Vec<String> = m
            .nets
            .iter()
            .zip(nets)
            .zip(&roles)
            .map(|((net, pre), role)| match (pre, &net.name, role) {
                (Some(n), _, _) => n,
                (None, Some(name), _) => claim(name),
                (None, None, Some(role)) => claim(role),
                (None, None, None) => claim("_renamed"),
            })
            .collect();
        let mems = m.mems.iter().map(|mem| claim(&mem.name)).collect();
        let instances = m.instances.iter().map(|inst| claim(&inst.name)).collect();
        let names = ModuleNames {
            nets: named,
            mems,
            instances,
            port_valued,
        };
        Ok((names, space))
    }

    /// The Verilog name of `net`.
    pub(crate) fn net(&self, net: NetId) -> &str {
        &self.nets[net.0 as usize]
    }

    /// True if `net` is written under the name of an output port that carries it.
    pub(crate) fn is_port_valued(&self, net: NetId) -> bool {
        self.port_valued[net.0 as usize]
    }
}

/// The unnamed operation an output port carries (its net a plain copy of it), with
/// the port's name.
fn carried_value<'m>(m: &'m Module, port: &'m hdl::ir::Port) -> Option<(NetId, &'m String)> {
    if port.direction != Direction::Output {
        return None;
    }
    let Driver::Alias(x) = m.net(port.net).driver else {
        return None;
    };
    let value = m.net(x);
    let op = matches!(&value.driver, Driver::Op(op) if !matches!(op, Op::LeadingZeros(_)));
    (op && value.name.is_none()).then_some((x, &port.name))
}

/// For every unnamed net that feeds a register, a memory port or an instance input, a
/// name after its first such role (registers, then memories, then instances, each in
/// build order): `{reg}_next`, `{reg}_en`, `{mem}_waddr`, `{mem}_wdata`, `{mem}_we`,
/// `{mem}_raddr` (`{mem}_raddr{k}` for read port k > 0), `{mem}_re`, `{inst}_{port}`.
fn role_names(m: &Module) -> Vec<Option<String>> {
    let mut roles: Vec<Option<String>> = vec![None; m.nets.len()];
    let mut give = |net: NetId, name: String| {
        let i = net.0 as usize;
        if m.nets.get(i).is_some_and(|n| n.name.is_none()) && roles[i].is_none() {
            roles[i] = Some(name);
        }
    };
    let port_name = |net: NetId| m.ports.iter().find(|p| p.net == net).map(|p| &p.name);
    for reg in &m.regs {
        let Some(r) = m.net(reg.q).name.as_ref().or_else(|| port_name(reg.q)) else {
            continue;
        };
        give(reg.next, format!("{r}_next"));
        if let Some(en) = reg.enable {
            give(en, format!("{r}_en"));
        }
    }
    for mem in &m.mems {
        let name = &mem.name;
        if let Some(w) = &mem.write {
            give(w.addr, format!("{name}_waddr"));
            give(w.data, format!("{name}_wdata"));
            give(w.enable, format!("{name}_we"));
        }
        for (k, r) in mem.reads.iter().enumerate() {
            let k = if k == 0 { String::new() } else { k.to_string() };
            give(r.addr, format!("{name}_raddr{k}"));
            if let Some(en) = r.enable {
                give(en, format!("{name}_re{k}"));
            }
        }
    }
    for inst in &m.instances {
        for (port, conn) in inst.module.ports.iter().zip(&inst.connections) {
            if let (hdl::ir::Direction::Input, Some(net)) = (port.direction, conn) {
                give(*net, format!("{}_{}", inst.name, port.name));
            }
        }
    }
    roles
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_names_skip_taken_ones() {
        let mut s = Namespace::default();
        assert!(s.reserve("a"));
        assert!(s.reserve("a_1"));
        assert!(!s.reserve("a"));
        assert_eq!(s.fresh("a"), "a_2");
        assert_eq!(s.fresh("b"), "b");
        assert_eq!(s.fresh("b"), "b_1");
    }
}
