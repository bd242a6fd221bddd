//! Storage layout: `ceil(width / 64)` words per net, aliases and other shared
//! nets in their owner's words, and an order chosen for speed:
//!
//! 1. registers whose next value is computed, side by side, and (after all other
//!    state) room for the mirror image of their next values, filled in batch
//!    order — a clock edge then commits runs of them with one copy each;
//! 2. the other state (inputs, registers, read data) ordered by role;
//! 3. constants;
//! 4. computed nets batch by batch, each batch ordered by (role, operand words,
//!    parameters), so that the instructions of identical instances write
//!    consecutive words and read consecutive operands (vector runs).

use crate::flatten::FlatDesign;
use crate::instr::{Kind, Span};
use crate::operands::each_node_operand;
use crate::simplify::{Graph, Node};
use crate::state::NONE;
use crate::wide::words;
use hdl::ir::{NetId, Op};

/// Where every net lives, and the initial storage image.
pub(crate) struct Layout {
    /// Span of every net (`off == NONE` if it has no storage).
    pub spans: Vec<Span>,
    /// Initial storage: constants and reset values; everything else zero.
    pub init: Vec<u64>,
}

impl Layout {
    /// Gives net `n` `count` fresh zeroed words.
    fn place(&mut self, n: NetId, count: usize) {
        let off = self.alloc(count);
        self.spans[n.0 as usize] = Span {
            off,
            words: count as u32,
        };
    }

    /// Reserves `count` zeroed words; returns the first one's offset.
    pub fn alloc(&mut self, count: usize) -> u32 {
        let off = self.init.len();
        self.init.resize(off + count, 0);
        off as u32
    }

    fn is_placed(&self, n: NetId) -> bool {
        self.spans[n.0 as usize].off != NONE
    }

    /// Stores `value` at `off` in the initial image (truncated to `count` words).
    pub fn store(&mut self, off: u32, value: &[u64], count: usize) {
        let dst = &mut self.init[off as usize..off as usize + count];
        for (i, d) in dst.iter_mut().enumerate() {
            *d = value.get(i).copied().unwrap_or(0);
        }
    }
}

/// What the layout is computed from.
pub(crate) struct Inputs<'a> {
    pub flat: &'a FlatDesign,
    pub graph: &'a Graph,
    /// The net owning each net's words, and the first of them it shares.
    pub owner: &'a [(NetId, u32)],
    /// Structural role of every net.
    pub role: &'a [u64],
    /// Topological order of all nets.
    pub order: &'a [NetId],
}

/// Sort key of an instruction in its batch: role, operand words, parameters.
type Key = (u64, [u32; 3], [u64; 5]);

/// Lays out storage for `batches` (their members computed nets, each with its
/// parameters from `params`); returns the layout and the members of every batch
/// in storage order.
pub(crate) fn lay_out(
    inp: &Inputs<'_>,
    batches: &[(Kind, Vec<NetId>)],
    params: impl Fn(NetId) -> [u64; 5],
) -> (Layout, Vec<(Kind, Vec<NetId>)>) {
    let (flat, graph, owner, role) = (inp.flat, inp.graph, inp.owner, inp.role);
    let count = |n: NetId| words(flat.nets[n.0 as usize].width);
    let computes = |n: NetId| matches!(graph.nodes[n.0 as usize], Node::Op(_) | Node::Copy(_));
    let mut lay = Layout {
        spans: vec![
            Span {
                off: NONE,
                words: 0
            };
            flat.nets.len()
        ],
        init: Vec::new(),
    };

    // Registers with computed next values, and their mirror images.
    let mut claimed = vec![false; flat.nets.len()];
    let mut mirrored: Vec<usize> = Vec::new();
    for (ri, r) in flat.regs.iter().enumerate() {
        let (root, word) = owner[r.next.0 as usize];
        if word == 0 && computes(root) && count(root) == count(r.q) && !claimed[root.0 as usize] {
            claimed[root.0 as usize] = true;
            mirrored.push(ri);
        }
    }
    mirrored.sort_by_key(|&ri| (flat.regs[ri].domain.0, role[flat.regs[ri].q.0 as usize], ri));
    for &ri in &mirrored {
        lay.place(flat.regs[ri].q, count(flat.regs[ri].q));
    }
    let mut sources: Vec<NetId> = (0..flat.nets.len() as u32)
        .map(NetId)
        .filter(|n| matches!(graph.nodes[n.0 as usize], Node::Source) && !lay.is_placed(*n))
        .collect();
    sources.sort_by_key(|n| (role[n.0 as usize], n.0));
    for n in sources {
        lay.place(n, count(n));
    }
    // The mirror images are filled in batch order, for the runs' sake.
    let mut next_slot = lay.alloc(mirrored.iter().map(|&ri| count(flat.regs[ri].q)).sum());
    for (i, node) in graph.nodes.iter().enumerate() {
        if let Node::Const(v) = node {
            let n = NetId(i as u32);
            lay.place(n, count(n));
            lay.store(lay.spans[i].off, v, count(n));
        }
    }

    // Computed nets, batch by batch.
    let resolve = |lay: &Layout, n: NetId| {
        let (root, word) = owner[n.0 as usize];
        lay.spans[root.0 as usize].off.wrapping_add(word)
    };
    let mut ordered = Vec::with_capacity(batches.len());
    for (kind, members) in batches {
        let mut keyed: Vec<(Key, NetId)> = members
            .iter()
            .map(|&n| {
                let mut offs = [0u32; 3];
                let mut k = 0;
                let node = &graph.nodes[n.0 as usize];
                each_node_operand(node, |o| {
                    if k < 3 {
                        offs[k] = resolve(&lay, o);
                        k += 1;
                    }
                });
                // A slice reads the word its bits start in.
                if let Node::Op(Op::Slice { lo, .. }) = node {
                    offs[0] = offs[0].wrapping_add(lo / 64);
                }
                ((role[n.0 as usize], offs, params(n)), n)
            })
            .collect();
        keyed.sort_unstable();
        for (_, n) in &keyed {
            let words = count(*n);
            if claimed[n.0 as usize] {
                lay.spans[n.0 as usize] = Span {
                    off: next_slot,
                    words: words as u32,
                };
                next_slot += words as u32;
            } else {
                lay.place(*n, words);
            }
        }
        ordered.push((*kind, keyed.into_iter().map(|(_, n)| n).collect()));
    }

    // Shared nets.
    for &n in inp.order {
        if let Node::Share { .. } = graph.nodes[n.0 as usize] {
            lay.spans[n.0 as usize] = Span {
                off: resolve(&lay, n),
                words: count(n) as u32,
            };
        }
    }
    (lay, ordered)
}
