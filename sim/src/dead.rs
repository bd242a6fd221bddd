//! Dead-net elimination: nets that nothing observable depends on (no named net,
//! port, register, memory port or clock domain, directly or through logic) get
//! no storage and no instruction.

use crate::flatten::FlatDesign;
use crate::operands::each_node_operand;
use crate::simplify::Node;
use hdl::ir::NetId;

/// Marks every net that no observed net, port, register or memory port depends on
/// as [`Node::Dead`].
pub(crate) fn eliminate_dead(
    flat: &FlatDesign,
    keep: &[bool],
    order: &[NetId],
    nodes: &mut [Node],
) {
    let mut live = keep.to_vec();
    let mut mark = |n: NetId| live[n.0 as usize] = true;
    for p in &flat.ports {
        mark(p.net);
    }
    for d in &flat.domains {
        mark(d.clock);
        if let Some(r) = d.reset {
            mark(r);
        }
    }
    for r in &flat.regs {
        mark(r.q);
        mark(r.next);
        if let Some(e) = r.enable {
            mark(e);
        }
        if let Some(rst) = r.reset {
            mark(rst.net);
        }
    }
    for m in &flat.mems {
        if let Some(w) = &m.write {
            mark(w.addr);
            mark(w.data);
            mark(w.enable);
        }
        for r in &m.reads {
            mark(r.addr);
            mark(r.data);
            if let Some(e) = r.enable {
                mark(e);
            }
        }
    }
    for &id in order.iter().rev() {
        if live[id.0 as usize] {
            each_node_operand(&nodes[id.0 as usize], |o| live[o.0 as usize] = true);
        }
    }
    for (node, l) in nodes.iter_mut().zip(&live) {
        if !l && !matches!(node, Node::Source) {
            *node = Node::Dead;
        }
    }
}
