//! The per-domain tables of the clock-edge phase: registers (direct copies in
//! commit order, or shadow samples, as [`regs::plan`](crate::regs::plan) decided)
//! and memory ports, plus the initial memory image.

use crate::flatten::{FlatDesign, FlatReg};
use crate::layout::Layout;
use crate::regs::Plan;
use crate::state::{
    merge_copies, DirectCopy, DomainState, MemLayout, ReadPort, RegSample, WritePort, NONE,
};
use crate::wide::{last_mask, words};
use hdl::ir::{NetId, ResetPolarity};
use hdl::Bits;

/// The state of every domain, the shadow buffer's size, the memory layouts and
/// the initial memory image.
pub(crate) struct Tables {
    pub domains: Vec<DomainState>,
    pub shadow_len: usize,
    pub mems: Vec<MemLayout>,
    pub mem_init: Vec<u64>,
}

/// The reset a register obeys: storage of its reset bit, the level asserting it,
/// and its reset value (stored in the initial image).
fn reset_of(lay: &mut Layout, flat: &FlatDesign, r: &FlatReg) -> (u32, u64, u32) {
    match (&r.reset_value, r.reset) {
        (Some(v), Some(rst)) => {
            let words = lay.spans[r.q.0 as usize].words as usize;
            let off = lay.alloc(words);
            let width = flat.nets[r.q.0 as usize].width;
            let mut value = v.to_words();
            value.resize(words, 0);
            if let Some(top) = value.last_mut() {
                *top &= last_mask(width);
            }
            lay.store(off, &value, words);
            let level = (rst.polarity == ResetPolarity::ActiveHigh) as u64;
            (lay.spans[rst.net.0 as usize].off, level, off)
        }
        _ => (NONE, 0, NONE),
    }
}

/// Registers (direct copies in commit order, or shadow samples) and memory ports
/// of every domain.
pub(crate) fn state_tables(flat: &FlatDesign, lay: &mut Layout, plan: &Plan) -> Tables {
    let mut domains = vec![DomainState::default(); flat.domains.len()];
    let mut shadow_len = 0usize;
    let mut shadow = |count: u32| {
        let off = shadow_len as u32;
        shadow_len += count as usize;
        off
    };
    for (d, groups) in plan.direct.iter().enumerate() {
        let mut copies = Vec::new();
        for group in groups {
            let mut group = group.clone();
            group.sort_by_key(|&r| lay.spans[flat.regs[r].q.0 as usize].off);
            for r in group {
                let r = &flat.regs[r];
                let span = lay.spans[r.q.0 as usize];
                let (reset, reset_level, reset_value) = reset_of(lay, flat, r);
                copies.push(DirectCopy {
                    dst: span.off,
                    src: lay.spans[r.next.0 as usize].off,
                    len: span.words,
                    broadcast: false,
                    enable: r.enable.map_or(NONE, |e| lay.spans[e.0 as usize].off),
                    reset,
                    reset_level,
                    reset_value,
                });
            }
        }
        domains[d].copies = merge_copies(&copies);
    }
    for (i, r) in flat.regs.iter().enumerate() {
        if !plan.shadow[i] {
            continue;
        }
        let span = lay.spans[r.q.0 as usize];
        let (reset, reset_level, reset_value) = reset_of(lay, flat, r);
        domains[r.domain.0 as usize].regs.push(RegSample {
            q: span.off,
            next: lay.spans[r.next.0 as usize].off,
            enable: r.enable.map_or(NONE, |e| lay.spans[e.0 as usize].off),
            reset,
            reset_level,
            reset_value,
            shadow: shadow(span.words),
            words: span.words,
        });
    }

    let off = |n: NetId| lay.spans[n.0 as usize].off;
    let mut mems = Vec::with_capacity(flat.mems.len());
    let mut mem_init = Vec::new();
    for (i, m) in flat.mems.iter().enumerate() {
        let n = words(m.width);
        let base = mem_init.len();
        mem_init.resize(base + n * m.depth as usize, 0);
        if let Some(init) = &m.init {
            for (k, word) in init.iter().take(m.depth as usize).enumerate() {
                store_word(
                    &mut mem_init[base + k * n..base + (k + 1) * n],
                    word,
                    m.width,
                );
            }
        }
        mems.push(MemLayout {
            name: m.name.clone(),
            base,
            depth: m.depth,
            words: n as u32,
            width: m.width,
        });
        if let Some(w) = &m.write {
            let addr = lay.spans[w.addr.0 as usize];
            domains[w.domain.0 as usize].writes.push(WritePort {
                mem: i as u32,
                addr: addr.off,
                addr_words: addr.words,
                enable: off(w.enable),
                data: off(w.data),
            });
        }
        for r in &m.reads {
            let addr = lay.spans[r.addr.0 as usize];
            let port = ReadPort {
                mem: i as u32,
                addr: addr.off,
                addr_words: addr.words,
                enable: r.enable.map_or(NONE, off),
                data: off(r.data),
                shadow: shadow(n as u32),
            };
            domains[r.domain.0 as usize].reads.push(port);
        }
    }
    Tables {
        domains,
        shadow_len,
        mems,
        mem_init,
    }
}

/// Stores `value` (truncated to `width` bits) into `dst`.
fn store_word(dst: &mut [u64], value: &Bits, width: u32) {
    let src = value.to_words();
    for (j, d) in dst.iter_mut().enumerate() {
        *d = src.get(j).copied().unwrap_or(0);
    }
    if let Some(top) = dst.last_mut() {
        *top &= last_mask(width);
    }
}
