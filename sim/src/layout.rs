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
//!
//! A net of several words that a logical shift by a net reads (one that owns its
//! words and is placed outside the mirror images) gets the zero words
//! [`shift_pads`] asks for around it, which nothing ever writes: the compiled
//! engine then loads whichever of its words the amount selects without a bounds
//! check. One-word shifts are single records (vector runs of them read operands
//! side by side), so their sources get none.

use crate::flatten::FlatDesign;
use crate::instr::{Kind, Span};
use crate::operands::each_node_operand;
use crate::simplify::{Graph, Node};
use crate::state::NONE;
use crate::wide::words;
use hdl::ir::{NetId, Op, ShiftAmount, ShiftOp};
use std::collections::HashMap;

/// The zero words (below, above) a logical shift by a net needs around its
/// `src_words`-word source for a `dst_words`-word result, so that every source
/// word the compiled engine can select lies in storage and reads as the shift
/// reads it (0 past the source). An amount below the result's width selects,
/// for result word `i`, word `i - q` and the one below it (left) or `i + q` and
/// the one above it (right), with `q` below `dst_words`; an amount that shifts
/// everything out is taken as `q = dst_words` (left) or `src_words` (right),
/// which selects only zero words. `None` for a right shift of a source wider
/// than its result, which reads only the source's low words.
pub(crate) fn shift_pads(op: ShiftOp, dst_words: u32, src_words: u32) -> Option<(u32, u32)> {
    match op {
        ShiftOp::Left => Some((
            dst_words.saturating_add(1),
            dst_words.saturating_sub(src_words),
        )),
        ShiftOp::RightLogical if src_words <= dst_words => Some((
            0,
            dst_words
                .saturating_add(1)
                .max(dst_words.saturating_mul(2) - src_words),
        )),
        _ => None,
    }
}

/// Where every net lives, and the initial storage image.
pub(crate) struct Layout {
    /// Span of every net (`off == NONE` if it has no storage).
    pub spans: Vec<Span>,
    /// Initial storage: constants and reset values; everything else zero.
    pub init: Vec<u64>,
    /// The nets placed with zero words around them (see [`shift_pads`]), by
    /// offset: their words, and the zero words below and above.
    pub pads: HashMap<u32, (u32, u32, u32)>,
}

impl Layout {
    /// Gives net `n` `count` fresh zeroed words, with `below` and `above` zero
    /// words around them.
    fn place(&mut self, n: NetId, count: usize, (below, above): (u32, u32)) {
        self.alloc(below as usize);
        let off = self.alloc(count);
        self.alloc(above as usize);
        if below + above > 0 {
            self.pads.insert(off, (count as u32, below, above));
        }
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

/// The zero words (below, above) every net is to be placed with: for each source
/// of several words of a logical shift by a net that owns its words (not a
/// constant), the most any such shift asks for (see [`shift_pads`]); none for the
/// others.
fn shift_sources(inp: &Inputs<'_>) -> Vec<(u32, u32)> {
    let (graph, owner) = (inp.graph, inp.owner);
    let count = |n: NetId| words(inp.flat.nets[n.0 as usize].width) as u32;
    let mut wanted = vec![(0, 0); graph.nodes.len()];
    for (i, node) in graph.nodes.iter().enumerate() {
        let Node::Op(Op::Shift {
            op,
            src,
            amount: ShiftAmount::Net(_),
        }) = node
        else {
            continue;
        };
        let owns = count(*src) > 1
            && owner[src.0 as usize] == (*src, 0)
            && matches!(
                graph.nodes[src.0 as usize],
                Node::Source | Node::Op(_) | Node::Copy(_)
            );
        if let Some((below, above)) =
            shift_pads(*op, count(NetId(i as u32)), count(*src)).filter(|_| owns)
        {
            let w = &mut wanted[src.0 as usize];
            *w = (w.0.max(below), w.1.max(above));
        }
    }
    wanted
}

/// Sort key of an instruction in its batch: role, operand words, parameters.
type Key = (u64, [u32; 3], [u64; 5]);

/// Lays out storage for `batches` (their members computed nets, each with its
/// parameters from `params`); returns the layout and, in the order of `batches`
/// (callers pair the two by index), the members of every batch in storage order.
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
        pads: HashMap::new(),
    };
    let wanted = shift_sources(inp);

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
        // Side by side, for the commit's runs: no room between them.
        lay.place(flat.regs[ri].q, count(flat.regs[ri].q), (0, 0));
    }
    let mut sources: Vec<NetId> = (0..flat.nets.len() as u32)
        .map(NetId)
        .filter(|n| matches!(graph.nodes[n.0 as usize], Node::Source) && !lay.is_placed(*n))
        .collect();
    sources.sort_by_key(|n| (role[n.0 as usize], n.0));
    for n in sources {
        lay.place(n, count(n), wanted[n.0 as usize]);
    }
    // The mirror images are filled in batch order, for the runs' sake.
    let mut next_slot = lay.alloc(mirrored.iter().map(|&ri| count(flat.regs[ri].q)).sum());
    for (i, node) in graph.nodes.iter().enumerate() {
        if let Node::Const(v) = node {
            let n = NetId(i as u32);
            lay.place(n, count(n), (0, 0));
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
                lay.place(*n, words, wanted[n.0 as usize]);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::compile;
    use crate::flatten::flatten;
    use crate::instr::WideOp;
    use hdl::ModuleBuilder;

    /// Shifts of a 200-bit input and of a 200-bit sum by an 8-bit input, both ways.
    fn shifts() -> hdl::Module {
        let mut m = ModuleBuilder::new("shifts");
        let a = m.input("a", 200);
        let b = m.input("b", 200);
        let n = m.input("n", 8);
        let sum = m.add(a, b);
        for (name, src) in [("a", a), ("sum", sum)] {
            let l = m.shl_by(src, n);
            let r = m.shr_by(src, n);
            m.output(&format!("{name}_l"), l);
            m.output(&format!("{name}_r"), r);
        }
        m.finish().expect("a valid module")
    }

    #[test]
    fn shift_sources_lie_between_zero_words_nothing_else_holds() {
        let prog = compile(&flatten(&shifts()).expect("flattens")).expect("compiles");
        let mut checked = 0;
        for op in &prog.code.wide {
            let WideOp::Shift {
                op,
                dst,
                src,
                padded,
                ..
            } = *op
            else {
                continue;
            };
            assert!(padded, "a shift of an input or a sum by a net is padded");
            let (below, above) = shift_pads(op, dst.words, src.words).expect("pads");
            let pad =
                (src.off - below..src.off).chain(src.off + src.words..src.off + src.words + above);
            for w in pad {
                assert_eq!(prog.init[w as usize], 0, "word {w} starts zero");
                let held = prog
                    .nets
                    .iter()
                    .any(|s| s.off != NONE && (s.off..s.off + s.words).contains(&w));
                assert!(
                    !held,
                    "word {w} next to the source of {op:?} belongs to no net"
                );
            }
            checked += 1;
        }
        assert_eq!(checked, 4, "four shifts by a net");
    }

    #[test]
    fn pads_cover_every_word_a_shift_selects() {
        for (dst, src) in [(1, 1), (4, 4), (8, 8), (4, 8), (8, 4), (2, 7)] {
            for op in [ShiftOp::Left, ShiftOp::RightLogical] {
                let Some((below, above)) = shift_pads(op, dst, src) else {
                    assert!(op == ShiftOp::RightLogical && src > dst);
                    continue;
                };
                let (below, above) = (i64::from(below), i64::from(above));
                let (dst, src) = (i64::from(dst), i64::from(src));
                // Every `q` an amount below the width gives, and the one taken for
                // an amount that shifts everything out.
                let out = if op == ShiftOp::Left { dst } else { src };
                for q in (0..dst).chain([out]) {
                    for i in 0..dst {
                        let (near, far) = match op {
                            ShiftOp::Left => (i - q, i - q - 1),
                            _ => (i + q, i + q + 1),
                        };
                        for k in [near, far] {
                            assert!(
                                (-below..src + above).contains(&k),
                                "{op:?} {dst}/{src} q {q}: word {k}"
                            );
                            if q == out {
                                assert!(
                                    !(0..src).contains(&k),
                                    "shifted out, {op:?} reads source word {k}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}
