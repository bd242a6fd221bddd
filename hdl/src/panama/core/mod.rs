//! The PANAMA accelerator core: everything between the NetFPGA AXI-Streams, with
//! its configuration as input ports and its counters as output ports (the top,
//! [`super::top`], adds the AXI-Lite register file).
//!
//! ```text
//! s_axis → parser → landing buffer → dispatcher ─┬→ bypass buffer ──────────────┐
//!                                                 └→ packet buffers (per port,    │
//!                                                    cells per slot)              │
//!            engine (ready → check → read heads) → adder tree → result buffer     │
//!                                       headers → result headers (per port)      │
//!                               result emitter (copy per port) → fair arbiter ←─┘ → m_axis
//! ```
//!
//! One clock domain `clk` (`axis_aclk`, `axis_resetn` active low).
//!
//! # Ports
//! - `s_axis_*`, `m_axis_*`: NetFPGA AXI-Stream, `tuser` 128 bits.
//! - `agg_udp_port[16]`, `bypass_dst{p}[8]`, `host_dst{k}[8]`, `full_wait[32]`,
//!   `slot_timeout[32]`, `slot{s}_enable`, `slot{s}_job_id[16]`,
//!   `slot{s}_tree_id[8]`, `slot{s}_ports[ports]`: the configuration registers.
//!   Change slot registers only while their slot holds no packets (a slot
//!   disabled with packets in it is flushed after `slot_timeout`).
//! - per counter of [`COUNTERS`]: output `<name>[32]`, input `<name>_clear`.

mod counters;
mod egress;
mod engine;
mod ingress;
mod logic;
mod queues;
mod result_header;
mod sum;

pub use counters::{COUNTERS, COUNTER_WIDTH};

use super::config::PanamaConfig;
use super::parser::USER_WIDTH;
use crate::dsl::{bits_for, AxisConfig, ModuleBuilder, Signal};
use crate::ir::{HdlError, Module, ResetPolarity};
use counters::counter;
use egress::{egress, EgressInputs};
use engine::{engine, EngineInputs};
use ingress::{ingress, IngressPorts, PacketMeta, SlotRegs};
use logic::index_width;
use queues::{pointer_width, queues, QueueUpdates};
use sum::{sum_stage, HEADER_BITS};

/// Generates the accelerator core for `cfg` (see the module docs).
pub fn panama_core(cfg: &PanamaConfig) -> Result<Module, HdlError> {
    cfg.validate()?;
    let ports = cfg.ports();
    let slots = cfg.slots;
    let mut m = ModuleBuilder::new(&format!("panama_core_{}", cfg.module_suffix()));
    let clk = m.domain(
        "clk",
        "axis_aclk",
        Some("axis_resetn"),
        ResetPolarity::ActiveLow,
    );
    let axis = AxisConfig::packets(cfg.data_width, USER_WIDTH);
    let s_axis = m.axis_in("s_axis", &axis);
    let m_axis = m.axis_out("m_axis", &axis);
    let agg_udp_port = m.input("agg_udp_port", 16);
    let bypass_dst: Vec<Signal> = (0..ports)
        .map(|p| m.input(&format!("bypass_dst{p}"), 8))
        .collect();
    let host_dst: Vec<(u8, Signal)> = cfg
        .host_routes
        .iter()
        .enumerate()
        .map(|(k, &(code, _))| (code, m.input(&format!("host_dst{k}"), 8)))
        .collect();
    let full_wait = m.input("full_wait", 32);
    let slot_timeout = m.input("slot_timeout", 32);
    let mut regs = SlotRegs {
        enable: vec![],
        job_id: vec![],
        tree_id: vec![],
        ports: vec![],
    };
    for s in 0..slots {
        regs.enable.push(m.input(&format!("slot{s}_enable"), 1));
        regs.job_id.push(m.input(&format!("slot{s}_job_id"), 16));
        regs.tree_id.push(m.input(&format!("slot{s}_tree_id"), 8));
        regs.ports.push(m.input(&format!("slot{s}_ports"), ports));
    }

    // Storage.
    let cells = 1u32 << (index_width(slots) + pointer_width(cfg.fifo_depth));
    let packet_mems: Vec<_> = (0..ports)
        .map(|p| {
            m.memory(
                &format!("packets{p}"),
                cfg.data_width,
                cells * cfg.cell_beats(),
                None,
            )
        })
        .collect();
    let meta_mems: Vec<_> = (0..ports)
        .map(|p| m.memory(&format!("records{p}"), PacketMeta::WIDTH, cells, None))
        .collect();
    let result_mem = m.memory(
        "results",
        cfg.data_width,
        cfg.result_banks * cfg.cell_beats(),
        None,
    );
    let header_mems: Vec<_> = (0..ports)
        .map(|p| m.memory(&format!("headers{p}"), HEADER_BITS, cfg.result_banks, None))
        .collect();

    // Signals that flow backwards, assigned below.
    let upd = QueueUpdates {
        commit: m.wire("q_commit", 1),
        commit_slot: m.wire("q_commit_slot", index_width(slots)),
        commit_port: m.wire("q_commit_port", index_width(ports)),
        pop_slot: m.wire("q_pop_slot", index_width(slots)),
        pop_ports: m.wire("q_pop_ports", ports),
        wedge: m.wire("q_wedge", 1),
    };
    let bypass_pop = m.wire("bypass_pop", 1);
    let bank_done = m.wire("bank_done", 1);
    let q = queues(&mut m, clk, slots, ports, cfg.fifo_depth, &upd);

    let ing = ingress(
        &mut m,
        cfg,
        &IngressPorts {
            clk,
            s_axis: &s_axis,
            agg_udp_port,
            bypass_dst: &bypass_dst,
            host_dst: &host_dst,
            full_wait,
            slots: &regs,
            queues: &q,
            packet_mems: &packet_mems,
            meta_mems: &meta_mems,
            bypass_pop,
        },
    )?;
    m.assign(upd.commit, ing.commit);
    m.assign(upd.commit_slot, ing.commit_slot);
    m.assign(upd.commit_port, ing.commit_port);
    m.assign(upd.wedge, ing.wedge);

    // Result banks in use: taken when a sum starts, freed when its copies are out.
    let banks_used = m.reg(clk, "banks_used", bits_for(cfg.result_banks));
    let limit = m.lit(u64::from(cfg.result_banks), banks_used.width());
    let bank_free = m.lt(banks_used, limit);
    let e = engine(
        &mut m,
        cfg,
        &EngineInputs {
            clk,
            slots: &regs,
            slot_timeout,
            queues: &q,
            packet_mems: &packet_mems,
            meta_mems: &meta_mems,
            bank_free,
        },
    );
    m.assign(upd.pop_slot, e.pop_slot);
    m.assign(upd.pop_ports, e.pop_ports);
    let taken = m.zext(e.sum_start, banks_used.width());
    let freed = m.zext(bank_done, banks_used.width());
    let plus = m.add_wrap(banks_used, taken);
    let used_next = m.sub_wrap(plus, freed);
    m.set_next(banks_used, used_next);

    // Per-bank frame length and ports, written when the bank's sum starts.
    let bank_sel: Vec<Signal> = (0..cfg.result_banks)
        .map(|b| {
            let here = m.eq_const(e.sum_bank, u64::from(b));
            m.and(e.sum_start, here)
        })
        .collect();
    let bank_len: Vec<Signal> = bank_sel
        .iter()
        .enumerate()
        .map(|(b, &we)| m.register_en(clk, &format!("bank{b}_len"), e.sum_len, we))
        .collect();
    let bank_ports: Vec<Signal> = bank_sel
        .iter()
        .enumerate()
        .map(|(b, &we)| m.register_en(clk, &format!("bank{b}_ports"), e.sum_ports, we))
        .collect();

    let sum = sum_stage(&mut m, cfg, clk, &e, result_mem, &header_mems)?;
    let eg = egress(
        &mut m,
        cfg,
        &EgressInputs {
            clk,
            bank_filled: sum.bank_filled,
            bank_len: &bank_len,
            bank_ports: &bank_ports,
            result_mem,
            header_mems: &header_mems,
            bypass_valid: ing.bypass_valid,
            bypass_beat: ing.bypass_beat,
            m_axis: &m_axis,
        },
    )?;
    m.assign(bypass_pop, eg.bypass_pop);
    m.assign(bank_done, eg.bank_done);

    let increments = [
        ing.frame_done,
        ing.bypassed,
        ing.accepted,
        eg.result_sent,
        ing.unknown_job,
        ing.malformed,
        e.seq_drops,
        e.other_drops,
        ing.stalled,
        ing.oversize,
        ing.empty,
        ing.full_drop,
        e.timeout_drops,
    ];
    for ((name, _), inc) in COUNTERS.iter().zip(increments) {
        counter(&mut m, clk, name, inc);
    }
    m.finish()
}
