//! Structural roles: a hash per net that is equal for the corresponding nets of
//! identical logic (the same adder in every lane, the same stage in every
//! instance). The layout orders each batch by role, so that the instructions of
//! identical instances sit side by side and read their operands from consecutive
//! words, which lets whole runs of them execute as one vector loop.
//!
//! Roles only steer the layout; a collision or a miss costs speed, never
//! correctness.

use crate::flatten::FlatDesign;
use crate::operands::each_operand;
use hdl::ir::{Driver, NetId, Op, ShiftAmount};

const K: u64 = 0x9e37_79b9_7f4a_7c15;

fn mix(h: u64, x: u64) -> u64 {
    (h.rotate_left(5) ^ x).wrapping_mul(K)
}

/// Mixes the bytes of `s` into `h`, eight at a time.
fn mix_str(h: u64, s: &str) -> u64 {
    let chunks = s.as_bytes().chunks_exact(8);
    let rest = chunks.remainder().iter().fold(0, |r, &b| r << 8 | b as u64);
    let h = chunks.fold(h, |h, c| {
        mix(h, u64::from_le_bytes(c.try_into().expect("eight bytes")))
    });
    mix(mix(h, rest), s.len() as u64)
}

/// The last part of a hierarchical name (`u_a.u_b.net` → `net`).
fn local_name(name: &str) -> &str {
    match name.as_bytes().iter().rposition(|&b| b == b'.') {
        Some(dot) => &name[dot + 1..],
        None => name,
    }
}

/// The parameters of `op` that make two operations differ (not its operands);
/// `wide_src` drops slice positions into wide buses (lane extraction).
fn op_params(op: &Op, wide_src: bool) -> u64 {
    let tag = match op {
        Op::Const(_) => 1,
        Op::Not(_) => 2,
        Op::Bit(..) => 3,
        Op::Arith(..) => 4,
        Op::Cmp(..) => 5,
        Op::Mux { .. } => 6,
        Op::Slice { .. } => 7,
        Op::Concat(_) => 8,
        Op::Replicate { .. } => 9,
        Op::Extend { .. } => 10,
        Op::Shift { .. } => 11,
        Op::Reduce(..) => 12,
        Op::LeadingZeros(_) => 13,
    };
    let mut h = mix(0, tag);
    match op {
        Op::Bit(o, ..) => h = mix(h, *o as u64),
        Op::Arith(o, ..) => h = mix(h, *o as u64),
        Op::Cmp(o, ..) => h = mix(h, *o as u64),
        Op::Reduce(o, _) => h = mix(h, *o as u64),
        Op::Slice { lo, .. } if !wide_src => h = mix(h, *lo as u64),
        Op::Replicate { count, .. } => h = mix(h, *count as u64),
        Op::Extend { signed, .. } => h = mix(h, *signed as u64),
        Op::Shift { op, amount, .. } => {
            h = mix(h, *op as u64);
            if let ShiftAmount::Const(k) = amount {
                h = mix(h, *k as u64 + 1);
            }
        }
        Op::Concat(parts) => h = mix(h, parts.len() as u64),
        _ => {}
    }
    h
}

/// The role of every net of the original (unsimplified) netlist, visiting `order`
/// (operands first): built from the drivers, where operands still name the nets
/// an instance sees (its ports), and from local names.
pub(crate) fn roles(flat: &FlatDesign, order: &[NetId]) -> Vec<u64> {
    let mut role = vec![0u64; flat.nets.len()];
    for &n in order {
        let i = n.0 as usize;
        let net = &flat.nets[i];
        let h = mix(1, net.width as u64);
        let mut h = match &net.driver {
            Driver::Alias(src) => mix(mix(h, 3), role[src.0 as usize]),
            Driver::Op(Op::Const(b)) => b.words().fold(mix(h, 2), mix),
            Driver::Op(op) => {
                let wide_src =
                    matches!(op, Op::Slice { src, .. } if flat.nets[src.0 as usize].width > 64);
                let mut h = mix(h, op_params(op, wide_src));
                each_operand(op, |o| h = mix(h, role[o.0 as usize]));
                h
            }
            // State: known by its local name (below).
            _ if net.name.is_some() => mix(h, 4),
            _ => mix(h, i as u64),
        };
        // A local name tells apart symmetric operands (an adder's `a` and `b` fed
        // from identical registers) and identifies state across instances.
        if let Some(name) = &net.name {
            h = mix_str(h, local_name(name));
        }
        role[i] = h;
    }
    role
}
