//! Dependency cones for partial settles: every net gets a 64-bit mask of the
//! sources its value depends on — bit `p % 32` for input port `p`, bit
//! `32 + d % 32` for the registers and read ports of domain `d`. A settle runs
//! only the steps whose mask meets the sources changed since the last settle
//! (inputs set, domains clocked), so logic fed only by inputs is not recomputed
//! after an edge, and logic fed only by registers is not recomputed after inputs
//! are set. Shared bits only make a settle do more than it must, never less.

use crate::flatten::FlatDesign;
use crate::operands::each_node_operand;
use crate::simplify::{Graph, Node};
use hdl::ir::{Driver, NetId};

/// The bit of input port `p`.
pub(crate) fn port_bit(p: u32) -> u64 {
    1 << (p % 32)
}

/// The bit of the state (registers, read data) of domain `d`.
pub(crate) fn domain_bit(d: u32) -> u64 {
    1 << (32 + d % 32)
}

/// The mask of every net, visiting `order` (operands first).
pub(crate) fn cones(flat: &FlatDesign, graph: &Graph, order: &[NetId]) -> Vec<u64> {
    let mut mask = vec![0u64; flat.nets.len()];
    for &n in order {
        let i = n.0 as usize;
        mask[i] = match &graph.nodes[i] {
            Node::Dead | Node::Const(_) => 0,
            Node::Source => match &flat.nets[i].driver {
                Driver::Input(p) => port_bit(p.0),
                Driver::Reg(r) => flat
                    .regs
                    .get(r.0 as usize)
                    .map_or(u64::MAX, |r| domain_bit(r.domain.0)),
                Driver::MemRead { mem, port } => flat
                    .mems
                    .get(mem.0 as usize)
                    .and_then(|m| m.reads.get(*port as usize))
                    .map_or(u64::MAX, |p| domain_bit(p.domain.0)),
                _ => u64::MAX,
            },
            node => {
                let mut m = 0;
                each_node_operand(node, |o| m |= mask[o.0 as usize]);
                m
            }
        };
    }
    mask
}
