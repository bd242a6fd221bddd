//! The aggregation engine's control: finds a ready slot (round-robin), checks
//! its head packets, and streams them out of the packet memories in lockstep,
//! one beat per cycle, towards the adder tree.
//!
//! States, one cycle each except `SUM`:
//! - `SCAN`: a slot is ready when it is enabled, has a participating port, every
//!   participating port's queue holds a packet, and a result bank is free. The
//!   first ready slot after the one served last is taken. A *stale* slot is
//!   flushed first (see below), one slot per cycle, staying in `SCAN`.
//! - `META`: the head records are read (synchronous read).
//! - `CHECK`: if the heads' `seq` differ, the heads older than the newest are
//!   popped (`seq_mismatch`); else if their `elem_count` or `format` differ, or the
//!   format is not the instance's, all heads are popped (`other_mismatch`); both
//!   go back to `SCAN`, where readiness is evaluated again. Else the sum starts.
//! - `SUM`: beat *b* of every head is read in cycle *b*; after the last read the
//!   heads are popped and the engine returns to `SCAN`.
//!
//! **Stale slots.** Each slot has an age: the cycles it has held a packet in any
//! of its queues while not having a head at every participating port (enabled or
//! not, whatever the result banks). Any pop of the slot, or holding nothing,
//! resets it. A slot whose age reaches the `slot_timeout` register is stale: in
//! `SCAN` the head of every non-empty queue of the slot is popped and counted
//! (`timeout_drops`). A dead worker's partners thus lose one packet per
//! `slot_timeout` + 1 cycles (the pop's cycle, then the age's count), the wedge
//! on their buffers is lifted, and a worker that restarts with a newer `seq` is
//! joined by the `seq` check.

use super::ingress::{PacketMeta, SlotRegs};
use super::logic::{bits, cell_base, index_width, lowest_set, lowest_set_from, max_of, step_mod};
use super::queues::Queues;
use crate::dsl::{bits_for, Domain, Memory, ModuleBuilder, Signal};
use crate::panama::config::PanamaConfig;

const SCAN: u64 = 0;
const META: u64 = 1;
const CHECK: u64 = 2;
const SUM: u64 = 3;

/// What the engine drives.
pub(super) struct Engine {
    /// Slot whose heads are popped.
    pub pop_slot: Signal,
    /// Ports whose heads are popped this cycle.
    pub pop_ports: Signal,
    /// Heads dropped for an old `seq` this cycle (a count).
    pub seq_drops: Signal,
    /// Heads dropped for an `elem_count`/`format` mismatch this cycle (a count).
    pub other_drops: Signal,
    /// Heads dropped from a stale slot this cycle (a count).
    pub timeout_drops: Signal,
    /// A sum starts this cycle: bank `sum_bank` is taken for `sum_len`, `sum_ports`.
    pub sum_start: Signal,
    /// The bank the current (or next) sum is written to.
    pub sum_bank: Signal,
    /// Frame length of the sum that starts.
    pub sum_len: Signal,
    /// Participating ports of the sum that starts.
    pub sum_ports: Signal,
    /// Stage 1 (one cycle after the read): a beat of every head is on `data`.
    pub s1_valid: Signal,
    /// Beat index.
    pub s1_beat: Signal,
    /// Last beat of the frame.
    pub s1_last: Signal,
    /// Result bank.
    pub s1_bank: Signal,
    /// OR of the heads' ECN.
    pub s1_ecn: Signal,
    /// Participating ports.
    pub s1_ports: Signal,
    /// The beat read from each port's packet memory.
    pub s1_data: Vec<Signal>,
}

/// What the engine reads.
pub(super) struct EngineInputs<'a> {
    /// The accelerator's clock domain.
    pub clk: Domain,
    /// Job-slot registers.
    pub slots: &'a SlotRegs,
    /// The `slot_timeout` register (32 bits).
    pub slot_timeout: Signal,
    /// Queue state.
    pub queues: &'a Queues,
    /// One packet memory per port.
    pub packet_mems: &'a [Memory],
    /// One packet-record memory per port.
    pub meta_mems: &'a [Memory],
    /// A result bank is free.
    pub bank_free: Signal,
}

/// Per slot: a head at every participating port of an enabled slot with at least
/// one participating port (ready but for a result bank).
fn heads_ready(
    m: &mut ModuleBuilder,
    ports: usize,
    slots: &SlotRegs,
    queues: &Queues,
) -> Vec<Signal> {
    (0..slots.enable.len())
        .map(|s| {
            let mut terms = vec![slots.enable[s]];
            let any = m.reduce_or(slots.ports[s]);
            terms.push(any);
            for p in 0..ports {
                let takes_part = m.bit(slots.ports[s], p as u32);
                let absent = m.not(takes_part);
                terms.push(m.or(absent, queues.nonempty[s][p]));
            }
            let ready = m.and_all(&terms);
            m.named(&format!("slot{s}_heads_ready"), ready)
        })
        .collect()
}

/// The stale-slot flush (see the module docs): (flush now, the slot, the ports
/// whose heads to pop). `popped` is the engine's pop of this cycle, (slot, ports),
/// which resets the slot's age.
fn stale_flush(
    m: &mut ModuleBuilder,
    io: &EngineInputs,
    heads: &[Signal],
    scan: Signal,
    popped: (Signal, Signal),
) -> (Signal, Signal, Signal) {
    let sw = index_width(heads.len() as u32);
    let (pop_slot, pop_ports) = popped;
    let any_pop = m.reduce_or(pop_ports);
    let mut stale = vec![];
    let mut holding_masks = vec![];
    for (s, &ready) in heads.iter().enumerate() {
        let holding = m.join_lanes(&io.queues.nonempty[s]);
        let holding = m.named(&format!("t{s}_holding"), holding);
        let holds = m.reduce_or(holding);
        let holds = m.named(&format!("t{s}_holds"), holds);
        let here = m.eq_const(pop_slot, s as u64);
        let served = m.and(here, any_pop);
        let waiting = m.not(ready);
        let not_served = m.not(served);
        let ages = m.and_all(&[holds, waiting, not_served]);
        let age = m.reg(io.clk, &format!("t{s}_age"), 32);
        let at_max = m.eq_const(age, u64::from(u32::MAX));
        let older = m.add_const_wrap(age, 1);
        let kept = m.mux(at_max, age, older);
        let zero = m.zeros(32);
        let next = m.mux(ages, kept, zero);
        m.set_next(age, next);
        let timed_out = m.ge(age, io.slot_timeout);
        let is_stale = m.and_all(&[holds, waiting, timed_out]);
        stale.push(m.named(&format!("t{s}_stale"), is_stale));
        holding_masks.push(holding);
    }
    let (any_stale, stale_slot) = lowest_set(m, &stale, sw);
    let flush = m.and(scan, any_stale);
    let flush = m.named("e_flush", flush);
    let mask = m.index(stale_slot, &holding_masks);
    (flush, stale_slot, mask)
}

/// SCAN's round-robin choice among the slots whose heads are ready (`heads`) when
/// a result bank is free: (a slot is ready, the first ready slot after
/// `last_served`, or else the first ready slot).
fn round_robin(
    m: &mut ModuleBuilder,
    heads: &[Signal],
    bank_free: Signal,
    last_served: Signal,
) -> (Signal, Signal) {
    let sw = last_served.width();
    let ready: Vec<Signal> = heads
        .iter()
        .enumerate()
        .map(|(s, &h)| {
            let ready = m.and(h, bank_free);
            m.named(&format!("slot{s}_ready"), ready)
        })
        .collect();
    // Slot 0 is never after the last served slot; slot s > 0 is when s is greater.
    let after: Vec<Signal> = (ready.iter().enumerate().skip(1))
        .map(|(s, &r)| {
            let k = m.lit(s as u64, sw);
            let later = m.gt(k, last_served);
            let after = m.and(r, later);
            m.named(&format!("slot{s}_ready_next"), after)
        })
        .collect();
    let (any_ready, first_ready) = lowest_set(m, &ready, sw);
    if after.is_empty() {
        return (any_ready, first_ready);
    }
    let (any_after, first_after) = lowest_set_from(m, &after, 1, sw);
    let chosen = m.mux(any_after, first_after, first_ready);
    (any_ready, chosen)
}

/// META's reads of `slot`'s heads, per port: the head record (a synchronous read
/// of the record memory) and the packet-memory address register, loaded with the
/// head's base address in META and advanced by one beat in SUM (`[meta, sum]`).
fn head_reads(
    m: &mut ModuleBuilder,
    cfg: &PanamaConfig,
    io: &EngineInputs,
    slot: Signal,
    [meta, sum]: [Signal; 2],
) -> (Vec<Signal>, Vec<Signal>) {
    let (clk, packet_mems, meta_mems) = (io.clk, io.packet_mems, io.meta_mems);
    let aw = packet_mems[0].addr_width();
    let mut records = vec![];
    let mut read_addr = vec![];
    for p in 0..cfg.ports() as usize {
        let heads: Vec<Signal> = io.queues.head.iter().map(|row| row[p]).collect();
        let head = m.index(slot, &heads);
        let head = m.named(&format!("e_head{p}"), head);
        let cell = m.concat(&[slot, head]);
        let cell_addr = m.zext(cell, meta_mems[p].addr_width());
        records.push(m.mem_read(meta_mems[p], clk, &format!("e_record{p}"), cell_addr, None));
        let base = cell_base(m, cell, cfg.cell_beats(), aw);
        let addr = m.reg(clk, &format!("e_addr{p}"), aw);
        let advance = m.add_const_wrap(addr, 1);
        let next = m.mux(meta, base, advance);
        let load = m.or(meta, sum);
        m.set_next(addr, next);
        m.set_enable(addr, load);
        read_addr.push(addr);
    }
    (records, read_addr)
}

/// Builds the engine (see the module docs).
pub(super) fn engine(m: &mut ModuleBuilder, cfg: &PanamaConfig, io: &EngineInputs) -> Engine {
    let (clk, slots, queues) = (io.clk, io.slots, io.queues);
    let packet_mems = io.packet_mems;
    let ports = cfg.ports() as usize;
    let sw = index_width(cfg.slots);
    let state = m.reg(clk, "e_state", 2);
    let slot = m.reg(clk, "e_slot", sw);
    let last_served = m.reg(clk, "e_last_served", sw);
    let in_state = |m: &mut ModuleBuilder, s: u64| m.eq_const(state, s);
    let scan = in_state(m, SCAN);
    let meta = in_state(m, META);
    let check = in_state(m, CHECK);
    let sum = in_state(m, SUM);

    // SCAN: readiness and round-robin choice, after any stale-slot flush.
    let heads = heads_ready(m, ports, slots, queues);
    let pop_slot = m.wire("e_pop_slot", sw);
    let pop_ports_w = m.wire("e_pop_ports", ports as u32);
    let (flush, stale_slot, stale_mask) = stale_flush(m, io, &heads, scan, (pop_slot, pop_ports_w));
    let no_flush = m.not(flush);
    let (any_ready, chosen) = round_robin(m, &heads, io.bank_free, last_served);
    let take = m.and_all(&[scan, any_ready, no_flush]);
    m.set_next(slot, chosen);
    m.set_enable(slot, take);
    m.set_next(last_served, chosen);
    m.set_enable(last_served, take);

    // META: head records and the heads' base addresses.
    let part = m.index(slot, &slots.ports);
    let part_bits = bits(m, part);
    let (records, read_addr) = head_reads(m, cfg, io, slot, [meta, sum]);

    // CHECK: the heads' fields.
    let Checked {
        older_mask,
        drop_old,
        drop_all,
        start,
        ref_len,
        ecn,
    } = check_heads(m, cfg, (&records, &part_bits), check);

    // SUM: beat counter and bookkeeping.
    let Summing {
        beat,
        sum_last,
        sum_ports,
        sum_ecn,
        sum_bank,
    } = summing(m, cfg, clk, [sum, start], (ref_len, part, ecn));

    // Next state.
    let to_scan = m.or_all(&[drop_old, drop_all, sum_last]);
    let lit = |m: &mut ModuleBuilder, v: u64| m.lit(v, 2);
    let (s_scan, s_meta, s_check, s_sum) = (lit(m, SCAN), lit(m, META), lit(m, CHECK), lit(m, SUM));
    let next_state = m.select(
        &[
            (take, s_meta),
            (meta, s_check),
            (start, s_sum),
            (to_scan, s_scan),
        ],
        state,
    );
    m.set_next(state, next_state);

    // Pops and drop counts.
    let no_ports = m.zeros(ports as u32);
    let pop_ports = m.select(
        &[
            (flush, stale_mask),
            (drop_old, older_mask),
            (drop_all, part),
            (sum_last, sum_ports),
        ],
        no_ports,
    );
    let popped_slot = m.mux(flush, stale_slot, slot);
    m.assign(pop_slot, popped_slot);
    m.assign(pop_ports_w, pop_ports);
    let seq_count = m.popcount(older_mask);
    let zero_count = m.zeros(seq_count.width());
    let seq_drops = m.mux(drop_old, seq_count, zero_count);
    let part_count = m.popcount(part);
    let other_drops = m.mux(drop_all, part_count, zero_count);
    let stale_count = m.popcount(stale_mask);
    let timeout_drops = m.mux(flush, stale_count, zero_count);

    // The read: stage 1 holds the beat.
    let s1_data = packet_mems
        .iter()
        .zip(&read_addr)
        .enumerate()
        .map(|(p, (&mem, &addr))| m.mem_read(mem, clk, &format!("s1_data{p}"), addr, Some(sum)))
        .collect();
    Engine {
        pop_slot,
        pop_ports: pop_ports_w,
        seq_drops,
        other_drops,
        timeout_drops,
        sum_start: start,
        sum_bank,
        sum_len: ref_len,
        sum_ports: part,
        s1_valid: m.register(clk, "s1_valid", sum),
        s1_beat: m.register(clk, "s1_beat", beat),
        s1_last: m.register(clk, "s1_last", sum_last),
        s1_bank: m.register(clk, "s1_bank", sum_bank),
        s1_ecn: m.register(clk, "s1_ecn", sum_ecn),
        s1_ports: m.register(clk, "s1_ports", sum_ports),
        s1_data,
    }
}

/// What CHECK decides about the heads.
struct Checked {
    /// The participating ports whose head is older than the newest: dropped.
    older_mask: Signal,
    /// Drop the older heads this cycle.
    drop_old: Signal,
    /// Drop every head this cycle (their element counts or formats disagree, or the
    /// format is not this instance's).
    drop_all: Signal,
    /// Start summing this cycle.
    start: Signal,
    /// The first participating head's frame length.
    ref_len: Signal,
    /// The OR of the participating heads' ECN fields.
    ecn: Signal,
}

/// CHECK: the heads' records (`records`, one per port; `part_bits` the participating
/// ports) agree in sequence number, element count and format; `check` is the state.
fn check_heads(
    m: &mut ModuleBuilder,
    cfg: &PanamaConfig,
    (records, part_bits): (&[Signal], &[Signal]),
    check: Signal,
) -> Checked {
    let f = |m: &mut ModuleBuilder, r: Signal, (lo, w): (u32, u32)| m.slice(r, lo, w);
    let seqs: Vec<Signal> = records.iter().map(|&r| f(m, r, PacketMeta::SEQ)).collect();
    let masked: Vec<Signal> = seqs
        .iter()
        .zip(part_bits)
        .map(|(&s, &b)| {
            let z = m.zeros(32);
            m.mux(b, s, z)
        })
        .collect();
    let newest = max_of(m, &masked);
    let newest = m.named("e_newest_seq", newest);
    let older: Vec<Signal> = seqs
        .iter()
        .zip(part_bits)
        .map(|(&s, &b)| {
            let lt = m.lt(s, newest);
            m.and(b, lt)
        })
        .collect();
    let older_mask = m.join_lanes(&older);
    let any_older = m.reduce_or(older_mask);
    let first = |m: &mut ModuleBuilder, field: (u32, u32)| {
        let cases: Vec<(Signal, Signal)> = records
            .iter()
            .zip(part_bits)
            .map(|(&r, &b)| (b, f(m, r, field)))
            .collect();
        let zero = m.zeros(field.1);
        m.select(&cases, zero)
    };
    let ref_count = first(m, PacketMeta::ELEM_COUNT);
    let ref_count = m.named("e_ref_count", ref_count);
    let ref_format = first(m, PacketMeta::FORMAT);
    let ref_format = m.named("e_ref_format", ref_format);
    let ref_len = first(m, PacketMeta::LEN);
    let ref_len = m.named("e_ref_len", ref_len);
    let mut mismatches = vec![];
    let mut ecns = vec![];
    for (&r, &b) in records.iter().zip(part_bits) {
        let count = f(m, r, PacketMeta::ELEM_COUNT);
        let format = f(m, r, PacketMeta::FORMAT);
        let c_bad = m.ne(count, ref_count);
        let f_bad = m.ne(format, ref_format);
        let bad = m.or(c_bad, f_bad);
        let bad = m.and(b, bad);
        mismatches.push(m.named(&format!("e_mismatch{}", mismatches.len()), bad));
        let ecn = f(m, r, PacketMeta::ECN);
        let z = m.zeros(2);
        ecns.push(m.mux(b, ecn, z));
    }
    let instance_format = m.lit(u64::from(cfg.format.code()), 2);
    let foreign = m.ne(ref_format, instance_format);
    mismatches.push(foreign);
    let mismatch = m.or_all(&mismatches);
    let mismatch = m.named("e_mismatch", mismatch);
    let ecn = m.or_all(&ecns);
    let consistent = m.not(mismatch);
    let in_order = m.not(any_older);
    let drop_old = m.and(check, any_older);
    let drop_all = m.and_all(&[check, in_order, mismatch]);
    let start = m.and_all(&[check, in_order, consistent]);
    let start = m.named("e_sum_start", start);
    Checked {
        older_mask,
        drop_old,
        drop_all,
        start,
        ref_len,
        ecn,
    }
}

/// The SUM state's registers.
struct Summing {
    /// Beat of the frames being summed.
    beat: Signal,
    /// The last beat is summed this cycle.
    sum_last: Signal,
    /// The participating ports, held for the pops.
    sum_ports: Signal,
    /// The ORed ECN, held for the result.
    sum_ecn: Signal,
    /// The result bank written.
    sum_bank: Signal,
}

/// SUM: the beat counter (to the last beat of a `ref_len`-byte frame) and the held
/// ports, ECN and result bank; `[sum, start]` are the state and the start from CHECK.
fn summing(
    m: &mut ModuleBuilder,
    cfg: &PanamaConfig,
    clk: Domain,
    [sum, start]: [Signal; 2],
    (ref_len, part, ecn): (Signal, Signal, Signal),
) -> Summing {
    let ports = cfg.ports();
    let bw = index_width(cfg.result_banks);
    let beat_w = bits_for(cfg.cell_beats());
    let beat = m.reg(clk, "e_beat", beat_w);
    let last_beat = m.reg(clk, "e_last_beat", beat_w);
    let len_minus_1 = m.sub_const_wrap(ref_len, 1);
    let shift = cfg.beat_bytes().trailing_zeros();
    let frame_last = m.shr(len_minus_1, shift);
    let frame_last = m.truncate(frame_last, beat_w);
    m.set_next(last_beat, frame_last);
    m.set_enable(last_beat, start);
    let at_last = m.eq(beat, last_beat);
    let sum_last = m.and(sum, at_last);
    let beat_up = m.add_const_wrap(beat, 1);
    let zero_beat = m.zeros(beat_w);
    let beat_next = m.mux(sum, beat_up, zero_beat);
    m.set_next(beat, beat_next);
    let sum_ports = m.reg(clk, "e_ports", ports);
    m.set_next(sum_ports, part);
    m.set_enable(sum_ports, start);
    let sum_ecn = m.reg(clk, "e_ecn", 2);
    m.set_next(sum_ecn, ecn);
    m.set_enable(sum_ecn, start);
    let sum_bank = m.reg(clk, "e_bank", bw);
    let bank_next = step_mod(m, sum_bank, cfg.result_banks);
    m.set_next(sum_bank, bank_next);
    m.set_enable(sum_bank, sum_last);
    Summing {
        beat,
        sum_last,
        sum_ports,
        sum_ecn,
        sum_bank,
    }
}
