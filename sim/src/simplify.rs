//! Compile-time simplification of the flat netlist before lowering: constant
//! folding and propagation, algebraic identities (`x & 0`, `x | 0`, muxes with a
//! constant select or equal arms, slices of slices, concatenations and extensions,
//! shifts by constants), common subexpression elimination, and dead-net
//! elimination.
//!
//! The result is one [`Node`] per flat net: where its value lives and how it is
//! computed. Every rewrite keeps the value of every net bit-exact. Nets that can be
//! observed by name (and the nets whose storage they originally shared) keep their
//! original storage identity, so that `peek`, the VCD variable codes and their
//! values are exactly those of the unsimplified design.

use crate::dead::eliminate_dead;
use crate::flatten::FlatDesign;
use crate::fxhash::{FxHashMap, FxHasher};
use crate::rewrite::Simplifier;
use crate::wide::words;
use hdl::ir::{Driver, NetId, Op};
use std::collections::hash_map::Entry;
use std::hash::{Hash, Hasher};

/// How one net gets its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Node {
    /// Written from outside the logic: an input, a register, a memory read port.
    Source,
    /// A constant (its words, high bits zero), in the initial storage image.
    Const(Vec<u64>),
    /// The words of `src` from word `word` on: an alias, a zero extension within the
    /// same words, or a slice at a word boundary ending at the source's top.
    Share {
        /// Net whose storage is shared.
        src: NetId,
        /// First shared word.
        word: u32,
    },
    /// Computed by an instruction.
    Op(Op),
    /// Computed as a copy of a net with the same number of words (a named net whose
    /// value equals another net's: it keeps storage of its own).
    Copy(NetId),
    /// Never read and never observed: no storage, no instruction.
    Dead,
}

/// The simplified netlist: one node per flat net.
pub(crate) struct Graph {
    /// Node of every net, by flat net id.
    pub nodes: Vec<Node>,
    /// Width of every net.
    pub widths: Vec<u32>,
}

impl Graph {
    /// The constant value of net `n` (its words), if it has one.
    pub fn konst(&self, mut n: NetId) -> Option<&[u64]> {
        for _ in 0..self.nodes.len() {
            match &self.nodes[n.0 as usize] {
                Node::Const(v) => return Some(v),
                Node::Share { src, word: 0 } | Node::Copy(src)
                    if words(self.widths[src.0 as usize]) == words(self.widths[n.0 as usize]) =>
                {
                    n = *src
                }
                _ => return None,
            }
        }
        None
    }
}

/// True if `driver` makes a net share its operand's words without an instruction.
fn shares_storage(flat: &FlatDesign, w: u32, driver: &Driver) -> Option<(NetId, u32)> {
    let width = |n: NetId| flat.nets[n.0 as usize].width;
    match driver {
        Driver::Alias(src) => Some((*src, 0)),
        Driver::Op(Op::Extend { src, signed }) => {
            let sw = width(*src);
            (sw == w || (!signed && words(sw) == words(w))).then_some((*src, 0))
        }
        Driver::Op(Op::Slice { src, lo }) => {
            let aligned = lo.is_multiple_of(64) && (w.is_multiple_of(64) || lo + w == width(*src));
            aligned.then_some((*src, lo / 64))
        }
        _ => None,
    }
}

/// Nets whose storage identity must not change: named nets and every net whose
/// words a named net shares in the original design.
fn observed(flat: &FlatDesign) -> Vec<bool> {
    let mut keep = vec![false; flat.nets.len()];
    for (i, net) in flat.nets.iter().enumerate() {
        if net.name.is_none() {
            continue;
        }
        let mut cur = i;
        for _ in 0..flat.nets.len() {
            if keep[cur] && cur != i {
                break;
            }
            keep[cur] = true;
            let n = &flat.nets[cur];
            match shares_storage(flat, n.width, &n.driver) {
                Some((src, _)) => cur = src.0 as usize,
                None => break,
            }
        }
    }
    keep
}

/// The key of `op` at width `w` in the table of common subexpressions: a hash of
/// both. The table maps it to the first net computing the operation, whose own
/// node holds the operation (checked on every hit), so operations are neither
/// cloned nor stored twice; two operations sharing a hash (not seen in practice)
/// only lose that one sharing.
fn op_key(op: &Op, w: u32) -> u64 {
    let mut h = FxHasher::default();
    op.hash(&mut h);
    h.write_u32(w);
    h.finish()
}

/// Simplifies `flat`, visiting nets in `order` (operands before users).
pub(crate) fn simplify(flat: &FlatDesign, order: &[NetId]) -> Graph {
    let keep = observed(flat);
    let widths: Vec<u32> = flat.nets.iter().map(|n| n.width).collect();
    let mut s = Simplifier {
        widths: &widths,
        nodes: std::iter::repeat_with(|| Node::Dead)
            .take(flat.nets.len())
            .collect(),
    };
    let ops = flat
        .nets
        .iter()
        .filter(|n| matches!(n.driver, Driver::Op(_)))
        .count();
    let mut seen_ops: FxHashMap<u64, NetId> =
        FxHashMap::with_capacity_and_hasher(ops, Default::default());
    let mut seen_consts: FxHashMap<(Vec<u64>, u32), NetId> = FxHashMap::default();
    for &id in order {
        let i = id.0 as usize;
        let net = &flat.nets[i];
        let w = net.width;
        let original = shares_storage(flat, w, &net.driver);
        let node = match &net.driver {
            Driver::Op(_) | Driver::Alias(_) if keep[i] && original.is_some() => {
                let (src, word) = original.expect("checked");
                Node::Share { src, word }
            }
            Driver::Alias(src) => Node::Share {
                src: s.same(*src),
                word: 0,
            },
            Driver::Op(op) => {
                let node = s.rewrite(w, op);
                match node {
                    Node::Share { src, word: 0 } if keep[i] => match s.konst(src) {
                        Some(v) => Node::Const(v.to_vec()),
                        None => Node::Copy(src),
                    },
                    Node::Share { src, word } if word != 0 && keep[i] => {
                        Node::Op(Op::Slice { src, lo: word * 64 })
                    }
                    Node::Op(op) if !keep[i] => match seen_ops.entry(op_key(&op, w)) {
                        Entry::Occupied(e) if s.computes(*e.get(), &op, w) => Node::Share {
                            src: *e.get(),
                            word: 0,
                        },
                        Entry::Occupied(_) => Node::Op(op),
                        Entry::Vacant(e) => {
                            e.insert(id);
                            Node::Op(op)
                        }
                    },
                    Node::Op(op) => {
                        seen_ops.entry(op_key(&op, w)).or_insert(id);
                        Node::Op(op)
                    }
                    Node::Const(v) if !keep[i] => match seen_consts.get(&(v.clone(), w)) {
                        Some(&prev) => Node::Share { src: prev, word: 0 },
                        None => {
                            seen_consts.insert((v.clone(), w), id);
                            Node::Const(v)
                        }
                    },
                    other => other,
                }
            }
            _ => Node::Source,
        };
        // Every net is visited once, over the `Dead` it started as, which owns
        // nothing: the write needs no drop of the old value.
        std::mem::forget(std::mem::replace(&mut s.nodes[i], node));
    }
    let mut nodes = s.nodes;
    eliminate_dead(flat, &keep, order, &mut nodes);
    Graph { nodes, widths }
}
