//! Which registers commit directly (no shadow buffer) and in which order.
//!
//! At an edge, the domains that fire commit one after another; within a domain,
//! the direct copies run first, then the shadow commits (registers and read data).
//! A register reads its next value, enable and reset at its own copy, so that copy
//! is exact when none of those words has changed yet:
//!
//! - logic, constants and inputs never change during the commit phase;
//! - a register or read port of *another* domain may already have committed, so a
//!   register reading one samples into the shadow instead;
//! - read data and shadow registers of its own domain commit after every copy;
//! - a direct register of its own domain must copy after every register reading
//!   it: copies run in that order (readers first), and registers on a cycle of
//!   such reads (a swap) use the shadow.

use crate::flatten::FlatDesign;
use crate::simplify::{Graph, Node};
use hdl::ir::{Driver, NetId};

/// The commit plan of every register.
pub(crate) struct Plan {
    /// Per domain: the directly committed registers (indices into `flat.regs`) in
    /// groups; a group copies after the groups before it, in any order within.
    pub direct: Vec<Vec<Vec<usize>>>,
    /// True for a register that samples into the shadow buffer.
    pub shadow: Vec<bool>,
}

/// What a word read at commit time is.
enum Read {
    /// Unchanged during the whole commit phase.
    Stable,
    /// The output of register `r` of the same domain.
    Reg(usize),
    /// Possibly already committed by another domain.
    Unsafe,
}

/// Plans the commits of `flat`'s registers; `owner[n]` is the net whose storage
/// net `n` lives in.
pub(crate) fn plan(flat: &FlatDesign, graph: &Graph, owner: &[(NetId, u32)]) -> Plan {
    let classify = |domain: u32, n: NetId| -> Read {
        let root = owner[n.0 as usize].0;
        match &graph.nodes[root.0 as usize] {
            Node::Op(_) | Node::Copy(_) | Node::Const(_) => return Read::Stable,
            Node::Source => {}
            _ => return Read::Unsafe,
        }
        match &flat.nets[root.0 as usize].driver {
            Driver::Input(_) => Read::Stable,
            Driver::Reg(r) => match flat.regs.get(r.0 as usize) {
                Some(reg) if reg.domain.0 == domain => Read::Reg(r.0 as usize),
                _ => Read::Unsafe,
            },
            Driver::MemRead { mem, port } => {
                let same = flat
                    .mems
                    .get(mem.0 as usize)
                    .and_then(|m| m.reads.get(*port as usize))
                    .is_some_and(|p| p.domain.0 == domain);
                if same {
                    Read::Stable
                } else {
                    Read::Unsafe
                }
            }
            _ => Read::Unsafe,
        }
    };

    let n = flat.regs.len();
    let mut shadow = vec![false; n];
    // reads[b] = registers whose output register b reads.
    let mut reads: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (b, r) in flat.regs.iter().enumerate() {
        let reset = match (&r.reset_value, r.reset) {
            (Some(_), Some(rst)) => Some(rst.net),
            _ => None,
        };
        for w in [Some(r.next), r.enable, reset].into_iter().flatten() {
            match classify(r.domain.0, w) {
                Read::Stable => {}
                Read::Reg(a) => reads[b].push(a),
                Read::Unsafe => shadow[b] = true,
            }
        }
    }

    // Readers first (Kahn's algorithm over "b reads a": b before a).
    let mut readers = vec![0u32; n];
    for (b, rs) in reads.iter().enumerate() {
        if !shadow[b] {
            for &a in rs {
                readers[a] += 1;
            }
        }
    }
    let mut direct = vec![Vec::new(); flat.domains.len()];
    let mut level: Vec<usize> = (0..n).filter(|&r| !shadow[r] && readers[r] == 0).collect();
    let mut placed = vec![false; n];
    while !level.is_empty() {
        let mut next = Vec::new();
        for &b in &level {
            placed[b] = true;
            for &a in &reads[b] {
                readers[a] -= 1;
                if readers[a] == 0 && !shadow[a] {
                    next.push(a);
                }
            }
        }
        let mut by_domain: Vec<Vec<usize>> = vec![Vec::new(); flat.domains.len()];
        for &r in &level {
            by_domain[flat.regs[r].domain.0 as usize].push(r);
        }
        for (d, regs) in by_domain.into_iter().enumerate() {
            if !regs.is_empty() {
                direct[d].push(regs);
            }
        }
        level = next;
    }
    for (r, s) in shadow.iter_mut().enumerate() {
        *s |= !placed[r];
    }
    Plan { direct, shadow }
}
