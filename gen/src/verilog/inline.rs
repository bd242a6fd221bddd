//! Which nets are written inline, as expressions inside their consumer, rather than as
//! wires of their own.
//!
//! The module is emitted twice. The first pass writes every net by name and records,
//! per net, every reference to it ([`Recorder`]) and the shape of its own expression.
//! [`Plan::new`] then inlines a net when all of these hold:
//!
//! - a combinational operation (not leading zeros) drives it, and it has no name (named
//!   values, ports, registers, memory ports and instance outputs stay wires);
//! - it is read exactly once (a literal, a select of a name, `x[7:0]`, or small wiring
//!   of those, `{4'h0, x[3:0]}`, may be read any number of times), by another operation
//!   or by a plain assign, in a position that takes an expression: not sliced or indexed
//!   (a select of an expression is not Verilog), not a register or memory input, and
//!   not an instance input unless it is a literal (`.enable(1'h1)`: a shared constant
//!   is never named after one of the ports it feeds);
//! - its expression is unsigned (`$signed(x) >>> n` stays a wire: inside an unsigned
//!   expression Verilog would shift it logically);
//! - under `$signed(…)`, it is a self-determined atom (a concatenation or literal);
//! - the consumer's expression stays small: at most [`MAX_DEPTH`] operators deep and
//!   [`MAX_SIZE`] operators in all, where wiring (literals, selects, and
//!   concatenations of them and of names) counts as none (the largest inlined operands
//!   become wires first).
//!
//! An unnamed operation that nothing written reads is left out ([`Plan::dead`]).
//!
//! The second pass writes the inlined nets' expressions in place of their names.

use super::expr::Expr;
use hdl::ir::{comb_order, Driver, NetId, Op};
use hdl::Module;

/// Deepest nesting of inlined operators in one expression.
pub(crate) const MAX_DEPTH: u32 = 4;

/// Most operators inlined into one expression (wiring counts none).
pub(crate) const MAX_SIZE: u32 = 10;

/// How a net is referenced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Slot {
    /// By name only: sliced, indexed, or read by a register, memory, leading-zero
    /// tree or clock.
    Name,
    /// An instance's input: a literal is written there (`.enable(1'h1)`), anything
    /// else by name (a wire named after its role, `u_fifo_din`).
    Connection,
    /// As an operand that may be an expression (`atom_only`: only a self-determined
    /// atom, as under `$signed(…)`).
    Operand {
        /// Only an atom may stand here.
        atom_only: bool,
    },
}

/// One reference to a net.
#[derive(Clone, Copy, Debug)]
struct Reference {
    /// The net whose expression holds it, if any.
    consumer: Option<NetId>,
    /// How it is referenced.
    slot: Slot,
}

/// What the first pass learns: every reference to every net, and the shape of every
/// operation's expression.
#[derive(Debug)]
pub(crate) struct Recorder {
    refs: Vec<Vec<Reference>>,
    shapes: Vec<Option<Shape>>,
    consumer: Option<NetId>,
}

/// The parts of an expression that decide whether it can be inlined.
#[derive(Clone, Copy, Debug)]
struct Shape {
    atom: bool,
    signed: bool,
}

impl Recorder {
    /// Nothing recorded yet, for a module of `nets` nets.
    pub(crate) fn new(nets: usize) -> Self {
        Recorder {
            refs: vec![Vec::new(); nets],
            shapes: vec![None; nets],
            consumer: None,
        }
    }

    /// References recorded from now on are made by the expression of `net` (or by
    /// something that is not an expression, `None`).
    pub(crate) fn consumer(&mut self, net: Option<NetId>) {
        self.consumer = net;
    }

    /// Records a reference to `net`.
    pub(crate) fn reference(&mut self, net: NetId, slot: Slot) {
        if let Some(r) = self.refs.get_mut(net.0 as usize) {
            r.push(Reference {
                consumer: self.consumer,
                slot,
            });
        }
    }

    /// Records the expression written for `net`.
    pub(crate) fn expression(&mut self, net: NetId, e: &Expr) {
        if let Some(s) = self.shapes.get_mut(net.0 as usize) {
            *s = Some(Shape {
                atom: e.atom,
                signed: e.signed,
            });
        }
    }
}

/// The nets a module writes inline, and the nets it leaves out.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    inlined: Vec<bool>,
    dead: Vec<bool>,
}

impl Plan {
    /// No net inlined: every value a wire of its own.
    pub(crate) fn none(nets: usize) -> Self {
        Plan {
            inlined: vec![false; nets],
            dead: vec![false; nets],
        }
    }

    /// The plan for `m` from what the first pass recorded (see the module docs).
    pub(crate) fn new(m: &Module, rec: &Recorder) -> Self {
        let mut inlined: Vec<bool> = (0..m.nets.len())
            .map(|i| candidate(m, rec, NetId(i as u32)))
            .collect();
        let mut is_port = vec![false; m.nets.len()];
        for p in &m.ports {
            is_port[p.net.0 as usize] = true;
        }
        for (i, port) in is_port.iter().enumerate() {
            inlined[i] &= !port;
        }
        let mut plan = Plan {
            inlined,
            dead: vec![false; m.nets.len()],
        };
        plan.limit(m, rec);
        plan.find_dead(m, rec, &is_port);
        plan
    }

    /// True if `net` is written as its expression.
    pub(crate) fn inlined(&self, net: NetId) -> bool {
        self.inlined.get(net.0 as usize).copied().unwrap_or(false)
    }

    /// True if `net` is left out: nothing that is written reads it.
    pub(crate) fn dead(&self, net: NetId) -> bool {
        self.dead.get(net.0 as usize).copied().unwrap_or(false)
    }

    /// Marks the unnamed operations that nothing live reads (a helper's byte lane that
    /// a design replaced, say): every reference comes from a dead net's expression.
    /// Consumers before operands (reverse combinational order), so chains die whole.
    fn find_dead(&mut self, m: &Module, rec: &Recorder, is_port: &[bool]) {
        let Ok(order) = comb_order(m) else {
            return;
        };
        for net in order.into_iter().rev() {
            let i = net.0 as usize;
            let n = m.net(net);
            let removable = n.name.is_none()
                && !is_port[i]
                && matches!(&n.driver, Driver::Op(op) if !matches!(op, Op::LeadingZeros(_)));
            self.dead[i] = removable
                && rec.refs[i]
                    .iter()
                    .all(|r| r.consumer.is_some_and(|c| self.dead[c.0 as usize]));
        }
    }

    /// Turns inlined operands back into wires until every expression is within
    /// [`MAX_DEPTH`] and [`MAX_SIZE`]; operands before consumers (combinational order).
    fn limit(&mut self, m: &Module, rec: &Recorder) {
        let Ok(order) = comb_order(m) else {
            self.inlined.iter_mut().for_each(|x| *x = false);
            return;
        };
        // The inlined operands of each consumer.
        let mut children: Vec<Vec<NetId>> = vec![Vec::new(); m.nets.len()];
        for (i, refs) in rec.refs.iter().enumerate() {
            if self.inlined[i] {
                for r in refs {
                    if let Some(c) = r.consumer {
                        children[c.0 as usize].push(NetId(i as u32));
                    }
                }
            }
        }
        let mut depth = vec![0u32; m.nets.len()];
        let mut size = vec![0u32; m.nets.len()];
        for net in order {
            let own = u32::from(!self.wiring(m, net));
            let kids = &mut children[net.0 as usize];
            kids.retain(|k| self.inlined[k.0 as usize]);
            kids.sort_by_key(|k| (std::cmp::Reverse(size[k.0 as usize]), k.0));
            kids.dedup();
            loop {
                let d = own + kids.iter().map(|k| depth[k.0 as usize]).max().unwrap_or(0);
                let s = own + kids.iter().map(|k| size[k.0 as usize]).sum::<u32>();
                if (d <= MAX_DEPTH && s <= MAX_SIZE) || kids.is_empty() {
                    depth[net.0 as usize] = d;
                    size[net.0 as usize] = s;
                    break;
                }
                // The largest (then deepest) operand becomes a wire.
                let pick = if s > MAX_SIZE {
                    0
                } else {
                    let dmax = kids.iter().map(|k| depth[k.0 as usize]).max().unwrap_or(0);
                    kids.iter()
                        .position(|k| depth[k.0 as usize] == dmax)
                        .unwrap_or(0)
                };
                let k = kids.remove(pick);
                // An operand read elsewhere stays inlined there; a wire here means a
                // wire everywhere.
                self.inlined[k.0 as usize] = false;
            }
        }
    }

    /// True if `net` adds no operator to an expression: a plain assign (`assign y =
    /// …;`), a literal, a select of a name, or a concatenation or copy of names,
    /// literals and selects (wiring, as `{1'b0, x[7:0]}`).
    fn wiring(&self, m: &Module, net: NetId) -> bool {
        let leaf = |n: NetId| {
            !self.inlined(n)
                || matches!(m.net(n).driver, Driver::Op(Op::Const(_) | Op::Slice { .. }))
        };
        match &m.net(net).driver {
            Driver::Alias(_) | Driver::Op(Op::Const(_) | Op::Slice { .. }) => true,
            Driver::Op(Op::Concat(parts)) => parts.iter().all(|&p| leaf(p)),
            Driver::Op(Op::Replicate { src, .. }) => leaf(*src),
            _ => false,
        }
    }
}

/// Most parts of a concatenation inlined wherever it is read.
const SMALL_WIRING_PARTS: usize = 3;

/// True if `op` is a concatenation of at most [`SMALL_WIRING_PARTS`] parts, a copy or a
/// zero-extension, of names, literals and selects only (`{{5{1'b0}}, p[7:0]}`): text
/// as plain as a name, so it may be repeated wherever it is read.
fn small_wiring(m: &Module, op: &Op) -> bool {
    let plain = |n: NetId| {
        let net = m.net(n);
        net.name.is_some()
            || match &net.driver {
                Driver::Op(op) => matches!(op, Op::Const(_) | Op::Slice { .. }),
                _ => true,
            }
    };
    match op {
        Op::Concat(parts) => parts.len() <= SMALL_WIRING_PARTS && parts.iter().all(|&p| plain(p)),
        Op::Replicate { src, .. } | Op::Extend { src, signed: false } => plain(*src),
        _ => false,
    }
}

/// True if `net` may be inlined as far as its driver and references go.
fn candidate(m: &Module, rec: &Recorder, net: NetId) -> bool {
    let i = net.0 as usize;
    let n = m.net(net);
    let Driver::Op(op) = &n.driver else {
        return false;
    };
    if n.name.is_some() || matches!(op, Op::LeadingZeros(_)) {
        return false;
    }
    let Some(Some(shape)) = rec.shapes.get(i) else {
        return false;
    };
    if shape.signed {
        return false;
    }
    let refs = &rec.refs[i];
    // A literal, a select of a name or small wiring of those reads as well as a wire
    // would: inline everywhere.
    let leaf = matches!(op, Op::Const(_) | Op::Slice { .. }) || small_wiring(m, op);
    let count_ok = refs.len() == 1 || (leaf && !refs.is_empty());
    let literal = matches!(op, Op::Const(_));
    count_ok
        && refs.iter().all(|r| match r.slot {
            Slot::Name => false,
            Slot::Connection => literal,
            Slot::Operand { atom_only } => !atom_only || shape.atom,
        })
}
