//! Hierarchy: instantiating a finished module inside the one being built.

use super::builder::{Domain, ModuleBuilder, Signal};
use crate::ir::*;

/// An instance of another module inside the module being built.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Instance {
    builder: u64,
    id: InstId,
}

impl ModuleBuilder {
    /// Instantiates `module` as `name`. Connect its inputs with [`connect`](Self::connect),
    /// bind its clock domains with [`bind_domain`](Self::bind_domain) and read its outputs
    /// with [`instance_output`](Self::instance_output). Output nets are created here,
    /// named `{name}_{port}`.
    #[track_caller]
    pub fn instance(&mut self, name: &str, module: &Module) -> Instance {
        let name = &self.scoped(name);
        self.claim_name(name, "instance");
        let id = InstId(self.data.instances.len() as u32);
        let mut connections = vec![None; module.ports.len()];
        for (pi, port) in module.ports.iter().enumerate() {
            if port.direction == Direction::Output {
                let width = module.net(port.net).width;
                let net_name = format!("{name}_{}", port.name);
                self.claim_name(&net_name, "instance output");
                let s = self.new_net(
                    Some(net_name),
                    width,
                    Driver::InstanceOutput {
                        inst: id,
                        port: PortId(pi as u32),
                    },
                );
                connections[pi] = Some(s.net);
            }
        }
        self.data.instances.push(crate::ir::Instance {
            name: name.to_string(),
            module: module.clone(),
            connections,
            location: SourceLoc::caller(),
        });
        Instance {
            builder: self.id,
            id,
        }
    }

    #[track_caller]
    fn owns_instance(&mut self, inst: Instance) -> bool {
        if inst.builder != self.id {
            self.error(
                None,
                HdlErrorKind::IllegalUse("an instance of another module was used here".into()),
            );
            return false;
        }
        true
    }

    #[track_caller]
    fn connection_error(&mut self, inst: Instance, what: String) {
        let name = self.data.instances[inst.id.0 as usize].name.clone();
        self.error(Some(&name), HdlErrorKind::Connection(what));
    }

    /// Drives data input `port` of `inst` with `value` (widths must match).
    #[track_caller]
    pub fn connect(&mut self, inst: Instance, port: &str, value: Signal) {
        if !self.owns_instance(inst) || !self.owns(value) {
            return;
        }
        let i = &self.data.instances[inst.id.0 as usize];
        let Some((pid, p)) = i.module.port(port) else {
            let what = format!("module `{}` has no port `{port}`", i.module.name);
            self.connection_error(inst, what);
            return;
        };
        if p.direction != Direction::Input || p.kind != PortKind::Data {
            let what = format!("`{port}` is not a data input (bind clocks with bind_domain)");
            self.connection_error(inst, what);
            return;
        }
        let width = i.module.net(p.net).width;
        if width != value.width {
            let detail = format!(
                "port `{port}` of instance `{}` is {width} bits, `{}` is {} bits",
                i.name,
                self.describe(value),
                value.width
            );
            let name = i.name.clone();
            self.error(
                Some(&name),
                HdlErrorKind::WidthMismatch {
                    op: "connect".into(),
                    detail,
                },
            );
            return;
        }
        let slot = &mut self.data.instances[inst.id.0 as usize].connections[pid.0 as usize];
        if slot.is_some() {
            self.connection_error(inst, format!("input `{port}` is connected twice"));
            return;
        }
        *slot = Some(value.net);
    }

    /// Clocks (and resets) `inst`'s domain `child_domain` from this module's `domain`.
    /// Reset polarities are matched automatically.
    #[track_caller]
    pub fn bind_domain(&mut self, inst: Instance, child_domain: &str, domain: Domain) {
        if !self.owns_instance(inst) || !self.owns_domain(domain) {
            return;
        }
        let child = self.data.instances[inst.id.0 as usize].module.clone();
        let Some((_, cd)) = child.domain(child_domain) else {
            let what = format!(
                "module `{}` has no clock domain `{child_domain}`",
                child.name
            );
            self.connection_error(inst, what);
            return;
        };
        let parent = self.data.domains[domain.id.0 as usize].clone();
        let clock_port = child
            .ports
            .iter()
            .position(|p| p.net == cd.clock)
            .expect("a domain's clock is a port");
        let mut links = vec![(clock_port, parent.clock)];
        if let Some(child_reset) = cd.reset {
            let reset_port = child
                .ports
                .iter()
                .position(|p| p.net == child_reset)
                .expect("a domain's reset is a port");
            let Some(parent_reset) = parent.reset else {
                let what = format!(
                    "domain `{child_domain}` needs a reset but domain `{}` has none",
                    parent.name
                );
                self.connection_error(inst, what);
                return;
            };
            let net = if cd.polarity == parent.polarity {
                parent_reset
            } else if let Some(inverted) = self.inverted_resets.get(&parent_reset) {
                *inverted
            } else {
                let r = Signal {
                    builder: self.id,
                    net: parent_reset,
                    width: 1,
                };
                let inverted = self.not(r).net;
                self.inverted_resets.insert(parent_reset, inverted);
                inverted
            };
            links.push((reset_port, net));
        }
        for (port, net) in links {
            let slot = &mut self.data.instances[inst.id.0 as usize].connections[port];
            if slot.is_some() {
                let what = format!("domain `{child_domain}` is bound twice");
                self.connection_error(inst, what);
                return;
            }
            *slot = Some(net);
        }
    }

    /// The value of output `port` of `inst`.
    #[track_caller]
    pub fn instance_output(&mut self, inst: Instance, port: &str) -> Signal {
        if !self.owns_instance(inst) {
            return self.zeros(1);
        }
        let i = &self.data.instances[inst.id.0 as usize];
        match i.module.port(port) {
            Some((pid, p)) if p.direction == Direction::Output => {
                let net =
                    i.connections[pid.0 as usize].expect("outputs are created with the instance");
                Signal {
                    builder: self.id,
                    net,
                    width: self.data.net(net).width,
                }
            }
            _ => {
                let what = format!("module `{}` has no output `{port}`", i.module.name);
                self.connection_error(inst, what);
                self.zeros(1)
            }
        }
    }
}
