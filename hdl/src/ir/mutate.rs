//! Mutation of a finished design, for measuring test strength: the one-line
//! mistakes a generator can make (a comparison's boundary, a mux's arms, an
//! enable left out …) applied to the IR one at a time, so that a test bench can
//! count which of them its checks catch. Each mutant keeps every width, every
//! operand and every combinational path of the original, so the simulator and
//! the Verilog back end take it as they take the original.
//!
//! A site is a generator line, not one operation: everything the line built is
//! mutated together, in every module and every instance of it, as a slip in
//! that line would be.

use super::{ArithOp, BitOp, CmpOp, Driver, Module, NetId, Op, RegId, SourceLoc};
use std::collections::BTreeMap;

/// The kind of one-line mistake a [`Site`] makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MutationKind {
    /// A mux's arms swapped (its select inverted).
    MuxArms,
    /// `==` and `!=` exchanged.
    Equality,
    /// A comparison's boundary moved: `<` and `<=` exchanged (either signedness).
    Boundary,
    /// `&` and `|` exchanged, or `^` made `|`.
    Logic,
    /// `+` and `-` exchanged.
    Arithmetic,
    /// A constant's lowest bit flipped (an off-by-one of a limit or a code).
    Constant,
    /// A register's load enable left out (it loads every cycle).
    Enable,
    /// A register's reset value's lowest bit flipped.
    ResetValue,
}

impl MutationKind {
    /// A short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            MutationKind::MuxArms => "mux arms swapped",
            MutationKind::Equality => "== and != exchanged",
            MutationKind::Boundary => "< and <= exchanged",
            MutationKind::Logic => "and, or, xor exchanged",
            MutationKind::Arithmetic => "+ and - exchanged",
            MutationKind::Constant => "constant's bit 0 flipped",
            MutationKind::Enable => "register enable left out",
            MutationKind::ResetValue => "reset value's bit 0 flipped",
        }
    }
}

/// Where a mutation applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Target {
    /// The operation driving a net.
    Net(NetId),
    /// A register.
    Reg(RegId),
}

/// One mutation of a design: a kind of mistake made at one generator line, so
/// at every operation or register that line built, in every module (and every
/// instance of it), as a slip in that line would make it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Site {
    /// The mistake.
    pub kind: MutationKind,
    /// The generator line that built what is mutated.
    pub location: SourceLoc,
    /// Every place the mutation applies: (module name, net or register).
    pub targets: Vec<(String, Target)>,
}

impl Site {
    /// `kind at file:line (n places)` for reports.
    pub fn describe(&self) -> String {
        let at = self.location.relative().unwrap_or_else(|| "?".into());
        let places = match self.targets.len() {
            1 => format!("in {}", self.targets[0].0),
            n => format!("{n} places"),
        };
        format!("{} at {at} ({places})", self.kind.name())
    }
}

/// Every site of `top` and of the distinct modules below it (by name): one per
/// (kind, generator line), in the order first met (modules depth first, then
/// nets, then registers). Operations and registers whose line is unknown are
/// sites of their own.
pub fn sites(top: &Module) -> Vec<Site> {
    let mut out: Vec<Site> = vec![];
    let mut index: BTreeMap<(MutationKind, String), usize> = BTreeMap::new();
    for m in top.distinct_modules() {
        for (target, kind, location) in module_sites(&m) {
            let place = (m.name.clone(), target);
            let key = location.relative().map(|at| (kind, at));
            match key.as_ref().and_then(|k| index.get(k)) {
                Some(&i) => out[i].targets.push(place),
                None => {
                    if let Some(k) = key {
                        index.insert(k, out.len());
                    }
                    out.push(Site {
                        kind,
                        location,
                        targets: vec![place],
                    });
                }
            }
        }
    }
    out
}

/// The mutable places of `m` alone: (target, kind, generator line).
fn module_sites(m: &Module) -> Vec<(Target, MutationKind, SourceLoc)> {
    let mut out = vec![];
    for (i, net) in m.nets.iter().enumerate() {
        let Driver::Op(op) = &net.driver else {
            continue;
        };
        let kind = match op {
            Op::Mux { .. } => MutationKind::MuxArms,
            Op::Cmp(CmpOp::Eq | CmpOp::Ne, ..) => MutationKind::Equality,
            Op::Cmp(..) => MutationKind::Boundary,
            Op::Bit(..) => MutationKind::Logic,
            Op::Arith(ArithOp::Add | ArithOp::Sub, ..) => MutationKind::Arithmetic,
            Op::Const(_) => MutationKind::Constant,
            _ => continue,
        };
        out.push((Target::Net(NetId(i as u32)), kind, net.location));
    }
    for (i, reg) in m.regs.iter().enumerate() {
        let location = m.net(reg.q).location;
        let target = Target::Reg(RegId(i as u32));
        if reg.enable.is_some() {
            out.push((target, MutationKind::Enable, location));
        }
        if reg.reset_value.is_some() {
            out.push((target, MutationKind::ResetValue, location));
        }
    }
    out
}

/// `top` with `site` applied at every one of its places (every instance of each
/// module); `None` if `top` lacks one of the site's modules or a place does not
/// fit (another design's site).
pub fn apply(top: &Module, site: &Site) -> Option<Module> {
    let mut memo: BTreeMap<String, Module> = BTreeMap::new();
    for (name, _) in &site.targets {
        if !memo.contains_key(name) {
            memo.insert(name.clone(), find(top, name)?);
        }
    }
    for (name, target) in &site.targets {
        let m = memo.get_mut(name)?;
        *m = mutated(m, *target, site.kind)?;
    }
    Some(rebuild(top, &memo, &mut BTreeMap::new()))
}

/// `m` with `kind` applied at `target`, if it fits.
fn mutated(m: &Module, target: Target, kind: MutationKind) -> Option<Module> {
    let mut data = (**m).clone();
    match target {
        Target::Net(id) => {
            let net = data.nets.get_mut(id.0 as usize)?;
            let Driver::Op(op) = &mut net.driver else {
                return None;
            };
            mutate_op(op, kind)?;
        }
        Target::Reg(id) => {
            let reg = data.regs.get_mut(id.0 as usize)?;
            match kind {
                MutationKind::Enable => {
                    reg.enable.take()?;
                }
                MutationKind::ResetValue => {
                    let value = reg.reset_value.as_mut()?;
                    value.set_bit(0, !value.bit(0));
                }
                _ => return None,
            }
        }
    }
    Some(Module::from_data(data))
}

/// Applies `kind` to `op`; `None` if it does not fit.
fn mutate_op(op: &mut Op, kind: MutationKind) -> Option<()> {
    match (op, kind) {
        (
            Op::Mux {
                if_true, if_false, ..
            },
            MutationKind::MuxArms,
        ) => std::mem::swap(if_true, if_false),
        (Op::Cmp(cmp, ..), MutationKind::Equality | MutationKind::Boundary) => {
            *cmp = match cmp {
                CmpOp::Eq => CmpOp::Ne,
                CmpOp::Ne => CmpOp::Eq,
                CmpOp::LtU => CmpOp::LeU,
                CmpOp::LeU => CmpOp::LtU,
                CmpOp::LtS => CmpOp::LeS,
                CmpOp::LeS => CmpOp::LtS,
            }
        }
        (Op::Bit(bit, ..), MutationKind::Logic) => {
            *bit = match bit {
                BitOp::And => BitOp::Or,
                BitOp::Or => BitOp::And,
                BitOp::Xor => BitOp::Or,
            }
        }
        (Op::Arith(arith @ (ArithOp::Add | ArithOp::Sub), ..), MutationKind::Arithmetic) => {
            *arith = match arith {
                ArithOp::Add => ArithOp::Sub,
                _ => ArithOp::Add,
            }
        }
        (Op::Const(value), MutationKind::Constant) => value.set_bit(0, !value.bit(0)),
        _ => return None,
    }
    Some(())
}

/// The module called `name` at or below `m`.
fn find(m: &Module, name: &str) -> Option<Module> {
    if m.name == name {
        return Some(m.clone());
    }
    m.instances.iter().find_map(|i| find(&i.module, name))
}

/// `m` with the modules in `mutated` (by name) replaced by their mutants, at
/// any depth, the mutants' own instances included; modules that contain no
/// mutant are kept as they are. `done` memoizes by name.
fn rebuild(
    m: &Module,
    mutated: &BTreeMap<String, Module>,
    done: &mut BTreeMap<String, Module>,
) -> Module {
    if let Some(out) = done.get(&m.name) {
        return out.clone();
    }
    let base = mutated.get(&m.name).unwrap_or(m);
    let children: Vec<Module> = (base.instances.iter())
        .map(|i| rebuild(&i.module, mutated, done))
        .collect();
    let changed = (children.iter().zip(&base.instances)).any(|(c, i)| !c.ptr_eq(&i.module));
    let out = if changed {
        let mut data = (**base).clone();
        for (inst, child) in data.instances.iter_mut().zip(children) {
            inst.module = child;
        }
        Module::from_data(data)
    } else {
        base.clone()
    };
    done.insert(m.name.clone(), out.clone());
    out
}
