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

pub use counters::{COUNTERS, COUNTER_WIDTH, OUTPUT_HELD_CYCLES, STALL_CYCLES};

use super::config::PanamaConfig;
use super::parser::USER_WIDTH;
use crate::dsl::{bits_for, AxisConfig, AxisIn, AxisOut, Domain, Memory, ModuleBuilder, Signal};
use crate::ir::{HdlError, Module, ResetPolarity};
use counters::counter;
use egress::{egress, EgressInputs};
use engine::{engine, Engine, EngineInputs};
use ingress::{ingress, IngressPorts, PacketMeta, SlotRegs};
use logic::index_width;
use queues::{pointer_width, queues, QueueUpdates};
use sum::{sum_stage, HEADER_BITS};

/// Generates the accelerator core for `cfg` (see the module docs).
pub fn panama_core(cfg: &PanamaConfig) -> Result<Module, HdlError> {
    cfg.validate()?;
    let mut m = ModuleBuilder::new(&format!("panama_core_{}", cfg.module_suffix()));
    let clk = m.domain(
        "clk",
        "axis_aclk",
        Some("axis_resetn"),
        ResetPolarity::ActiveLow,
    );
    let io = CoreIo::declare(&mut m, cfg);
    let store = Storage::declare(&mut m, cfg);

    // Signals that flow backwards, assigned below.
    let slots = cfg.slots;
    let ports = cfg.ports();
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
            s_axis: &io.s_axis,
            agg_udp_port: io.agg_udp_port,
            bypass_dst: &io.bypass_dst,
            host_dst: &io.host_dst,
            full_wait: io.full_wait,
            slots: &io.regs,
            queues: &q,
            packet_mems: &store.packet_mems,
            meta_mems: &store.meta_mems,
            bypass_pop,
        },
    )?;
    m.assign(upd.commit, ing.commit);
    m.assign(upd.commit_slot, ing.commit_slot);
    m.assign(upd.commit_port, ing.commit_port);
    m.assign(upd.wedge, ing.wedge);

    let banks = BankCount::declare(&mut m, cfg, clk);
    let e = engine(
        &mut m,
        cfg,
        &EngineInputs {
            clk,
            slots: &io.regs,
            slot_timeout: io.slot_timeout,
            queues: &q,
            packet_mems: &store.packet_mems,
            meta_mems: &store.meta_mems,
            bank_free: banks.free,
        },
    );
    m.assign(upd.pop_slot, e.pop_slot);
    m.assign(upd.pop_ports, e.pop_ports);
    banks.update(&mut m, e.sum_start, bank_done);
    let records = BankRecords::declare(&mut m, cfg, clk, &e);

    let sum = sum_stage(&mut m, cfg, clk, &e, store.result_mem, &store.header_mems)?;
    let eg = egress(
        &mut m,
        cfg,
        &EgressInputs {
            clk,
            bank_filled: sum.bank_filled,
            bank_len: &records.len,
            bank_ports: &records.ports,
            result_mem: store.result_mem,
            header_mems: &store.header_mems,
            bypass_valid: ing.bypass_valid,
            bypass_beat: ing.bypass_beat,
            m_axis: &io.m_axis,
        },
    )?;
    m.assign(bypass_pop, eg.bypass_pop);
    m.assign(bank_done, eg.bank_done);
    let refused = m.not(io.m_axis.tready);
    let output_held = m.and(io.m_axis.tvalid, refused);

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
        output_held,
    ];
    for ((name, _), inc) in COUNTERS.iter().zip(increments) {
        counter(&mut m, clk, name, inc);
    }
    m.finish()
}

/// The core's streams and configuration inputs (see the module docs' ports).
struct CoreIo {
    /// The AXI-Stream input.
    s_axis: AxisIn,
    /// The AXI-Stream output.
    m_axis: AxisOut,
    /// `agg_udp_port` (16 bits).
    agg_udp_port: Signal,
    /// `bypass_dst{p}` per port index (8 bits each).
    bypass_dst: Vec<Signal>,
    /// Per host route: its source code and `host_dst{k}` (8 bits).
    host_dst: Vec<(u8, Signal)>,
    /// `full_wait` (32 bits).
    full_wait: Signal,
    /// `slot_timeout` (32 bits).
    slot_timeout: Signal,
    /// The job-slot registers.
    regs: SlotRegs,
}

impl CoreIo {
    /// Declares the ports of `cfg`'s core on `m`.
    fn declare(m: &mut ModuleBuilder, cfg: &PanamaConfig) -> CoreIo {
        let ports = cfg.ports();
        let axis = AxisConfig::packets(cfg.data_width, USER_WIDTH);
        let s_axis = m.axis_in("s_axis", &axis);
        let m_axis = m.axis_out("m_axis", &axis);
        let agg_udp_port = m.input("agg_udp_port", 16);
        let bypass_dst = (0..ports)
            .map(|p| m.input(&format!("bypass_dst{p}"), 8))
            .collect();
        let host_dst = (cfg.host_routes.iter().enumerate())
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
        for s in 0..cfg.slots {
            regs.enable.push(m.input(&format!("slot{s}_enable"), 1));
            regs.job_id.push(m.input(&format!("slot{s}_job_id"), 16));
            regs.tree_id.push(m.input(&format!("slot{s}_tree_id"), 8));
            regs.ports.push(m.input(&format!("slot{s}_ports"), ports));
        }
        CoreIo {
            s_axis,
            m_axis,
            agg_udp_port,
            bypass_dst,
            host_dst,
            full_wait,
            slot_timeout,
            regs,
        }
    }
}

/// The core's memories.
struct Storage {
    /// Per port, its packet buffer: a cell of `cell_beats` beats per (slot, queue
    /// position).
    packet_mems: Vec<Memory>,
    /// Per port, the records of its buffered packets.
    meta_mems: Vec<Memory>,
    /// The result buffer (bank·cell_beats + beat).
    result_mem: Memory,
    /// Per port, the result headers (address: bank).
    header_mems: Vec<Memory>,
}

impl Storage {
    /// Declares the memories of `cfg`'s core on `m`.
    fn declare(m: &mut ModuleBuilder, cfg: &PanamaConfig) -> Storage {
        let ports = cfg.ports();
        let cells = 1u32 << (index_width(cfg.slots) + pointer_width(cfg.fifo_depth));
        let packet_mems = (0..ports)
            .map(|p| {
                m.memory(
                    &format!("packets{p}"),
                    cfg.data_width,
                    cells * cfg.cell_beats(),
                    None,
                )
            })
            .collect();
        let meta_mems = (0..ports)
            .map(|p| m.memory(&format!("records{p}"), PacketMeta::WIDTH, cells, None))
            .collect();
        let result_mem = m.memory(
            "results",
            cfg.data_width,
            cfg.result_banks * cfg.cell_beats(),
            None,
        );
        let header_mems = (0..ports)
            .map(|p| m.memory(&format!("headers{p}"), HEADER_BITS, cfg.result_banks, None))
            .collect();
        Storage {
            packet_mems,
            meta_mems,
            result_mem,
            header_mems,
        }
    }
}

/// The count of result banks in use: taken when a sum starts, freed when its
/// copies are out.
struct BankCount {
    /// The count (`banks_used`).
    used: Signal,
    /// A bank is free.
    free: Signal,
}

impl BankCount {
    /// Declares the count and whether a bank is free.
    fn declare(m: &mut ModuleBuilder, cfg: &PanamaConfig, clk: Domain) -> BankCount {
        let used = m.reg(clk, "banks_used", bits_for(cfg.result_banks));
        let limit = m.lit(u64::from(cfg.result_banks), used.width());
        let free = m.lt(used, limit);
        BankCount { used, free }
    }

    /// Counts a bank taken when `taken` and one freed when `freed`.
    fn update(&self, m: &mut ModuleBuilder, taken: Signal, freed: Signal) {
        let taken = m.zext(taken, self.used.width());
        let freed = m.zext(freed, self.used.width());
        let plus = m.add_wrap(self.used, taken);
        let next = m.sub_wrap(plus, freed);
        m.set_next(self.used, next);
    }
}

/// Per result bank, its frame length and participating ports, written when the
/// bank's sum starts.
struct BankRecords {
    /// `bank{b}_len`.
    len: Vec<Signal>,
    /// `bank{b}_ports`.
    ports: Vec<Signal>,
}

impl BankRecords {
    /// Declares the records, written from the engine's sum start.
    fn declare(m: &mut ModuleBuilder, cfg: &PanamaConfig, clk: Domain, e: &Engine) -> BankRecords {
        let bank_sel: Vec<Signal> = (0..cfg.result_banks)
            .map(|b| {
                let here = m.eq_const(e.sum_bank, u64::from(b));
                m.and(e.sum_start, here)
            })
            .collect();
        let len = (bank_sel.iter().enumerate())
            .map(|(b, &we)| m.register_en(clk, &format!("bank{b}_len"), e.sum_len, we))
            .collect();
        let ports = (bank_sel.iter().enumerate())
            .map(|(b, &we)| m.register_en(clk, &format!("bank{b}_ports"), e.sum_ports, we))
            .collect();
        BankRecords { len, ports }
    }
}
