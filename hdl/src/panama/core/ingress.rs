//! The ingress: header parser, the store-and-forward landing buffer and the
//! dispatcher that sends each whole frame to the bypass buffer, to its
//! (slot, port) packet buffer, or drops it.
//!
//! Frames are stored whole before they are dispatched because a malformed
//! aggregation frame is only known at its last beat and must never leave the
//! accelerator. The landing buffer holds the beats; a record per frame (the
//! parser's metadata, pushed with the last beat) says what the frame is, so when
//! the dispatcher starts a frame it knows its route. It moves one beat per cycle
//! with no gap between frames.
//!
//! # Bounds
//!
//! - **MTU.** The landing writer counts the beats of each frame. A frame that has
//!   not ended after [`PanamaConfig::max_frame_beats`] beats is cut there: that
//!   beat is stored as the frame's last with an `oversize` record, and the rest of
//!   the frame, up to its `tlast` however far away, is taken at line rate and
//!   discarded. A frame that ends in time but is longer than `max_frame_bytes` is
//!   marked `oversize` too. Oversize frames are dropped by the dispatcher. So no
//!   frame occupies more than half the landing buffer, and a full landing buffer
//!   always holds a complete frame the dispatcher can move.
//! - **Empty frames** (no `tkeep` byte in any beat) are dropped and counted
//!   (`empty_frames`); runts and every other short frame are bypassed unaltered.
//! - **Full packet buffer.** An aggregation packet whose (slot, port) buffer is
//!   full waits at most `full_wait` cycles (the register), counted in
//!   `stall_cycles`; then it is dropped (`full_drops`) and the buffer is marked
//!   *wedged*: later packets for it are dropped at once until the engine pops it.
//!   A stuck buffer therefore costs the input one `full_wait` per time it fills.
//! - **Host ports.** Frames from a host (DMA) source code go to its `host_dst`
//!   route; frames from a code that is neither keep their `tuser` destination.

use super::logic::{cell_base, index_width, lowest_set, pack_fields};
use super::queues::{pointer_width, Queues};
use crate::blocks::fifo::sync_fifo;
use crate::dsl::{
    bits_for, AxisBeat, AxisConfig, AxisIn, Domain, Instance, Memory, ModuleBuilder, Signal,
};
use crate::ir::HdlError;
use crate::panama::config::PanamaConfig;
use crate::panama::parser::{parser, FrameClass};

/// The internal stream format: `tuser[31:0]` (the upper 96 bits are 0 on NetFPGA).
pub(super) const USER_BITS: u32 = 32;

/// The job-slot registers, one entry per slot.
pub(super) struct SlotRegs {
    /// Slot enabled.
    pub enable: Vec<Signal>,
    /// `job_id` to match (16 bits).
    pub job_id: Vec<Signal>,
    /// `tree_id` to match (8 bits).
    pub tree_id: Vec<Signal>,
    /// Participating ports, one bit per port index (`ports` bits).
    pub ports: Vec<Signal>,
}

/// The per-packet fields the engine keeps for each buffered packet.
pub(super) struct PacketMeta;

impl PacketMeta {
    /// Width of a stored record: `{len[16], ecn[2], format[2], elem_count[16], seq[32]}`.
    pub const WIDTH: u32 = 68;
    /// (lo, width) of `seq`.
    pub const SEQ: (u32, u32) = (0, 32);
    /// (lo, width) of `elem_count`.
    pub const ELEM_COUNT: (u32, u32) = (32, 16);
    /// (lo, width) of `format`.
    pub const FORMAT: (u32, u32) = (48, 2);
    /// (lo, width) of ECN.
    pub const ECN: (u32, u32) = (50, 2);
    /// (lo, width) of the frame length in bytes.
    pub const LEN: (u32, u32) = (52, 16);
}

/// Outputs of the ingress.
pub(super) struct Ingress {
    /// The bypass buffer has a beat (`tdata`, `tkeep`, 32-bit `tuser`, `tlast`).
    pub bypass_valid: Signal,
    /// The bypass buffer's head beat, packed ([`AxisBeat::pack`]).
    pub bypass_beat: Signal,
    /// Commit of a complete aggregation packet to (`slot`, `port`) this cycle.
    pub commit: Signal,
    /// Slot of the commit.
    pub commit_slot: Signal,
    /// Port index of the commit.
    pub commit_port: Signal,
    /// A frame finished dispatching this cycle (counts `packets_in`).
    pub frame_done: Signal,
    /// ... and it was bypassed.
    pub bypassed: Signal,
    /// ... and it was an aggregation packet of no enabled slot (bypassed too).
    pub unknown_job: Signal,
    /// ... and it was accepted into a packet buffer.
    pub accepted: Signal,
    /// ... and it was a malformed aggregation packet (dropped).
    pub malformed: Signal,
    /// ... and it was cut off or longer than `max_frame_bytes` (dropped).
    pub oversize: Signal,
    /// ... and it carried no byte (dropped).
    pub empty: Signal,
    /// ... and it was an aggregation packet dropped on a full packet buffer.
    pub full_drop: Signal,
    /// The packet buffer of the dispatch (`commit_slot`, `commit_port`) is marked
    /// wedged this cycle (its packet is dropped on a full buffer).
    pub wedge: Signal,
    /// The dispatcher waits for room in a full packet buffer this cycle.
    pub stalled: Signal,
}

/// Everything the ingress connects to.
pub(super) struct IngressPorts<'a> {
    /// The accelerator's clock domain.
    pub clk: Domain,
    /// The AXI-Stream input.
    pub s_axis: &'a AxisIn,
    /// The `agg_udp_port` register.
    pub agg_udp_port: Signal,
    /// Bypass destination per source port index (8 bits each).
    pub bypass_dst: &'a [Signal],
    /// Host (DMA) source codes and their route registers (8 bits each).
    pub host_dst: &'a [(u8, Signal)],
    /// The `full_wait` register (32 bits).
    pub full_wait: Signal,
    /// Job-slot registers.
    pub slots: &'a SlotRegs,
    /// Queue state.
    pub queues: &'a Queues,
    /// One packet memory per port (written here).
    pub packet_mems: &'a [Memory],
    /// One packet-record memory per port (written here).
    pub meta_mems: &'a [Memory],
    /// `tready` of the bypass buffer's reader: pops the head beat.
    pub bypass_pop: Signal,
}

const CLASS: (u32, u32) = (0, 2);
const SRC: (u32, u32) = (2, 8);
const ECN: (u32, u32) = (10, 2);
const JOB: (u32, u32) = (12, 16);
const TREE: (u32, u32) = (28, 8);
const FORMAT: (u32, u32) = (36, 2);
const SEQ: (u32, u32) = (38, 32);
const ELEMS: (u32, u32) = (70, 16);
const LEN: (u32, u32) = (86, 16);
const RECORD_WIDTH: u32 = 102;
/// The landing record's class of a frame cut off at the MTU (the parser's
/// [`FrameClass`] codes are 0 to 2).
const OVERSIZE: u64 = 3;

fn field(m: &mut ModuleBuilder, record: Signal, (lo, w): (u32, u32)) -> Signal {
    m.slice(record, lo, w)
}

/// The parser's output stream and metadata, as the landing writer takes them.
struct Parsed {
    /// The parser instance (its `m_axis_tready` is driven by the landing writer).
    instance: Instance,
    /// `m_axis_tvalid`.
    valid: Signal,
    /// `m_axis_tlast`.
    last: Signal,
    /// The output beat with the internal 32-bit `tuser`.
    beat: AxisBeat,
    /// The metadata fields of the landing record, in [`RECORD_WIDTH`] order.
    record: [Signal; 9],
}

/// The header parser on the accelerator's input.
fn parser_stage(
    m: &mut ModuleBuilder,
    cfg: &PanamaConfig,
    io: &IngressPorts,
) -> Result<Parsed, HdlError> {
    let p = m.instance("u_parser", &parser(&cfg.parser())?);
    m.bind_domain(p, "clk", io.clk);
    let s = io.s_axis;
    m.connect(p, "s_axis_tdata", s.beat.tdata);
    for (port, sig) in [
        ("s_axis_tkeep", s.beat.tkeep),
        ("s_axis_tuser", s.beat.tuser),
        ("s_axis_tlast", s.beat.tlast),
    ] {
        let sig = sig.ok_or_else(|| HdlError::parameter(m.name(), port, "missing"))?;
        m.connect(p, port, sig);
    }
    m.connect(p, "s_axis_tvalid", s.tvalid);
    m.connect(p, "agg_udp_port", io.agg_udp_port);
    let parser_ready = m.instance_output(p, "s_axis_tready");
    m.assign(s.tready, parser_ready);
    let valid = m.instance_output(p, "m_axis_tvalid");
    let last = m.instance_output(p, "m_axis_tlast");
    let puser = m.instance_output(p, "m_axis_tuser");
    let puser = m.slice(puser, 0, USER_BITS);
    let beat = AxisBeat {
        tdata: m.instance_output(p, "m_axis_tdata"),
        tkeep: Some(m.instance_output(p, "m_axis_tkeep")),
        tuser: Some(puser),
        tlast: Some(last),
    };
    let record = [
        "m_meta_class",
        "m_meta_src_port",
        "m_meta_ecn",
        "m_meta_job_id",
        "m_meta_tree_id",
        "m_meta_format",
        "m_meta_seq",
        "m_meta_elem_count",
        "m_meta_len",
    ]
    .map(|port| m.instance_output(p, port));
    Ok(Parsed {
        instance: p,
        valid,
        last,
        beat,
        record,
    })
}

/// The landing buffer (beats, and one record per frame) and its writer with the
/// MTU cut (see the module docs): the (beats, records) FIFO instances.
fn landing(
    m: &mut ModuleBuilder,
    cfg: &PanamaConfig,
    clk: Domain,
    parsed: &Parsed,
) -> Result<(Instance, Instance), HdlError> {
    let inner = AxisConfig::packets(cfg.data_width, USER_BITS);
    let depth = cfg.frame_buffer_beats();
    let beats = m.instance(
        "u_landing",
        &sync_fifo(AxisBeat::packed_width(&inner), depth)?,
    );
    let records = m.instance("u_records", &sync_fifo(RECORD_WIDTH, depth)?);
    m.bind_domain(beats, "clk", clk);
    m.bind_domain(records, "clk", clk);
    let beats_full = m.instance_output(beats, "full");
    let records_full = m.instance_output(records, "full");
    let room = m.or(beats_full, records_full);
    let room = m.not(room);

    let (p, pv, plast) = (parsed.instance, parsed.valid, parsed.last);
    let cut_beats = cfg.max_frame_beats();
    let l_beat = m.reg(clk, "l_beat", bits_for(cut_beats));
    let discard = m.reg(clk, "l_discard", 1);
    let take = m.or(discard, room);
    m.connect(p, "m_axis_tready", take);
    let moved = m.and(pv, take);
    let keeping = m.not(discard);
    let land = m.and(moved, keeping);
    let land = m.named("l_land", land);
    let at_cut = m.eq_const(l_beat, u64::from(cut_beats - 1));
    let ends = m.or(plast, at_cut);
    let not_last = m.not(plast);
    let cut = m.and_all(&[land, at_cut, not_last]);
    let cut = m.named("l_cut", cut);
    let land_last = m.and(land, ends);
    let beat_up = m.add_const_wrap(l_beat, 1);
    let beat_zero = m.zeros(l_beat.width());
    let beat_next = m.mux(ends, beat_zero, beat_up);
    m.set_next(l_beat, beat_next);
    m.set_enable(l_beat, land);
    let discard_next = m.mux(discard, not_last, cut);
    m.set_next(discard, discard_next);
    m.set_enable(discard, moved);
    let plen = m.instance_output(p, "m_meta_len");
    let max_len = m.lit(u64::from(cfg.max_frame_bytes), plen.width());
    let too_long = m.gt(plen, max_len);
    let oversize = m.or(cut, too_long);
    let oversize_code = m.lit(OVERSIZE, CLASS.1);
    let class = m.mux(oversize, oversize_code, parsed.record[0]);
    let mut fields = parsed.record;
    fields[0] = class;
    let record = pack_fields(m, &fields);
    debug_assert_eq!(record.width(), RECORD_WIDTH);
    let landed = AxisBeat {
        tlast: Some(ends),
        ..parsed.beat
    };
    let landed = landed.pack(m);
    m.connect(beats, "wr_en", land);
    m.connect(beats, "wr_data", landed);
    m.connect(records, "wr_en", land_last);
    m.connect(records, "wr_data", record);
    Ok((beats, records))
}

/// Builds the ingress of `cfg` (see the module docs).
pub(super) fn ingress(
    m: &mut ModuleBuilder,
    cfg: &PanamaConfig,
    io: &IngressPorts,
) -> Result<Ingress, HdlError> {
    let clk = io.clk;
    let inner = AxisConfig::packets(cfg.data_width, USER_BITS);
    let beat_width = AxisBeat::packed_width(&inner);
    let depth = cfg.frame_buffer_beats();

    let parsed = parser_stage(m, cfg, io)?;
    let (beats, records) = landing(m, cfg, clk, &parsed)?;

    // Dispatcher.
    let beat_empty = m.instance_output(beats, "empty");
    let record_empty = m.instance_output(records, "empty");
    let head = m.instance_output(beats, "rd_data");
    let rec = m.instance_output(records, "rd_data");
    let head = AxisBeat::unpack(m, &inner, head);
    let last = head.tlast.unwrap_or_else(|| m.ones(1));
    let user = head.tuser.unwrap_or_else(|| m.zeros(USER_BITS));

    let route = classify(m, cfg, io, rec);
    let Route {
        src,
        is_agg,
        is_bad,
        is_over,
        is_empty,
        known_port,
        port,
        slot,
        candidate,
        to_bypass,
    } = route;

    // A full packet buffer: wait at most `full_wait` cycles, at once if wedged.
    let busy = m.reg(clk, "d_busy", 1);
    let idle = m.not(busy);
    let at_port = |m: &mut ModuleBuilder, name: &str, rows: &[Vec<Signal>]| {
        let per_slot: Vec<Signal> = rows
            .iter()
            .enumerate()
            .map(|(k, row)| {
                let at = m.index(port, row);
                m.named(&format!("{name}_slot{k}"), at)
            })
            .collect();
        let at = m.index(slot, &per_slot);
        m.named(name, at)
    };
    let full = at_port(m, "d_queue_full", &io.queues.full);
    let wedged = at_port(m, "d_queue_wedged", &io.queues.wedged);
    let waited = m.reg(clk, "d_waited", 32);
    let expired = m.ge(waited, io.full_wait);
    let give_up = m.or(wedged, expired);
    let full_drop_now = m.and_all(&[candidate, full, give_up]);
    let fdrop_q = m.reg(clk, "d_full_drop", 1);
    let fdrop = m.mux(busy, fdrop_q, full_drop_now);
    let fdrop = m.named("d_full_drop_route", fdrop);
    let not_fdrop = m.not(fdrop);
    let to_buffer = m.and(candidate, not_fdrop);
    let to_buffer = m.named("d_to_buffer", to_buffer);
    let still_waiting = m.not(give_up);
    let blocked = m.and_all(&[idle, candidate, full, still_waiting]);
    let have_beat = m.not(beat_empty);
    let have_record = m.not(record_empty);
    let bypass_in = m.instance("u_bypass", &sync_fifo(beat_width, depth)?);
    m.bind_domain(bypass_in, "clk", clk);
    let bypass_full = m.instance_output(bypass_in, "full");
    let bypass_blocked = m.and(to_bypass, bypass_full);
    let ready = m.or(blocked, bypass_blocked);
    let ready = m.not(ready);
    let go = m.and_all(&[have_beat, have_record, ready]);
    let go = m.named("d_move", go);
    let stalled = m.and_all(&[have_beat, have_record, blocked]);
    let stalled = m.named("d_stalled", stalled);
    let waited_up = m.add_const_wrap(waited, 1);
    let waited_zero = m.zeros(32);
    let waited_next = m.mux(stalled, waited_up, waited_zero);
    m.set_next(waited, waited_next);
    let starts = m.and(go, idle);
    m.set_next(fdrop_q, full_drop_now);
    m.set_enable(fdrop_q, starts);
    let wedge = m.and(starts, full_drop_now);
    let done = m.and(go, last);
    m.connect(beats, "rd_en", go);
    m.connect(records, "rd_en", done);
    let not_last = m.not(last);
    let busy_next = m.mux(go, not_last, busy);
    m.set_next(busy, busy_next);

    // Bypass: the destination from the source port's register, or the host
    // port's route, or the frame's own.
    let dst_default = m.slice(user, 24, 8);
    let dst_known = m.index(port, io.bypass_dst);
    let host_cases: Vec<(Signal, Signal)> = io
        .host_dst
        .iter()
        .map(|&(code, reg)| (m.eq_const(src, u64::from(code)), reg))
        .collect();
    let dst_other = m.select(&host_cases, dst_default);
    let dst = m.mux(known_port, dst_known, dst_other);
    let user_low = m.slice(user, 0, 24);
    let user_out = m.concat(&[dst, user_low]);
    let out_beat = AxisBeat {
        tuser: Some(user_out),
        ..head
    };
    let out_beat = out_beat.pack(m);
    let push_bypass = m.and(go, to_bypass);
    m.connect(bypass_in, "wr_en", push_bypass);
    m.connect(bypass_in, "wr_data", out_beat);
    m.connect(bypass_in, "rd_en", io.bypass_pop);
    let bypass_empty = m.instance_output(bypass_in, "empty");
    let bypass_valid = m.not(bypass_empty);
    let bypass_beat = m.instance_output(bypass_in, "rd_data");

    let flow = [busy, go, to_buffer, last];
    let commit = buffer_packets(m, cfg, io, (port, slot), flow, (rec, head.tdata));

    let is_unknown_job = m.and(is_agg, to_bypass);
    let full_drop = m.and(candidate, fdrop);
    Ok(Ingress {
        bypass_valid,
        bypass_beat,
        commit,
        commit_slot: slot,
        commit_port: port,
        frame_done: done,
        bypassed: m.and(done, to_bypass),
        unknown_job: m.and(done, is_unknown_job),
        accepted: m.and(done, to_buffer),
        malformed: m.and(done, is_bad),
        oversize: m.and(done, is_over),
        empty: m.and(done, is_empty),
        full_drop: m.and(done, full_drop),
        wedge,
        stalled,
    })
}

/// Where the dispatcher sends the frame at the head of the landing FIFOs.
struct Route {
    /// The frame's source port code.
    src: Signal,
    is_agg: Signal,
    is_bad: Signal,
    is_over: Signal,
    /// A bypass frame of no bytes.
    is_empty: Signal,
    /// The source is one of the accelerator's ports, index `port`.
    known_port: Signal,
    port: Signal,
    /// The first enabled slot of the frame's job, tree and port.
    slot: Signal,
    /// An aggregation packet with a slot: to a packet buffer unless dropped.
    candidate: Signal,
    /// Neither buffered nor dropped by the parser: to the bypass.
    to_bypass: Signal,
}

/// Classifies the head frame from its record `rec`: its port, its slot, and where it goes.
fn classify(m: &mut ModuleBuilder, cfg: &PanamaConfig, io: &IngressPorts, rec: Signal) -> Route {
    let (ports, slots) = (cfg.ports(), cfg.slots);
    let class = field(m, rec, CLASS);
    let src = field(m, rec, SRC);
    let job = field(m, rec, JOB);
    let tree = field(m, rec, TREE);
    let frame_len = field(m, rec, LEN);
    let is_agg = m.eq_const(class, FrameClass::Aggregation.code());
    let is_bad = m.eq_const(class, FrameClass::Malformed.code());
    let is_over = m.eq_const(class, OVERSIZE);
    let is_plain = m.eq_const(class, FrameClass::Bypass.code());
    let no_bytes = m.eq_const(frame_len, 0);
    let is_empty = m.and(is_plain, no_bytes);
    let pw = index_width(ports);
    let sw = index_width(slots);
    let from: Vec<Signal> = cfg
        .port_codes
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            let is = m.eq_const(src, u64::from(c));
            m.named(&format!("d_from_port{i}"), is)
        })
        .collect();
    let (known_port, port) = lowest_set(m, &from, pw);
    let port = m.named("d_port", port);
    let from_bits = m.join_lanes(&from);
    let hits: Vec<Signal> = (0..slots as usize)
        .map(|k| {
            let sl = io.slots;
            let same_job = m.eq(sl.job_id[k], job);
            let same_tree = m.eq(sl.tree_id[k], tree);
            let member = m.and(sl.ports[k], from_bits);
            let member = m.reduce_or(member);
            let hit = m.and_all(&[sl.enable[k], same_job, same_tree, member]);
            m.named(&format!("d_hits_slot{k}"), hit)
        })
        .collect();
    let (hit, slot) = lowest_set(m, &hits, sw);
    let slot = m.named("d_slot", slot);
    let candidate = m.and_all(&[is_agg, known_port, hit]);
    let candidate = m.named("d_for_buffer", candidate);
    let parse_drop = m.or_all(&[is_bad, is_over, is_empty]);
    let parse_drop = m.named("d_drop", parse_drop);
    let keep = m.or(candidate, parse_drop);
    let to_bypass = m.not(keep);
    Route {
        src,
        is_agg,
        is_bad,
        is_over,
        is_empty,
        known_port,
        port,
        slot,
        candidate,
        to_bypass,
    }
}

/// Aggregation packets: written beat by beat into port `port`'s packet memory at the
/// tail cell of queue (`slot`, `port`), committed (and their record `rec` stored) with
/// the last beat. `flow` is the dispatcher's [busy (mid-frame), go (a beat moves),
/// to_buffer, last beat]; returns the commit.
fn buffer_packets(
    m: &mut ModuleBuilder,
    cfg: &PanamaConfig,
    io: &IngressPorts,
    (port, slot): (Signal, Signal),
    [busy, go, to_buffer, last]: [Signal; 4],
    (rec, tdata): (Signal, Signal),
) -> Signal {
    let clk = io.clk;
    let ptr_w = pointer_width(cfg.fifo_depth);
    let tails: Vec<Signal> = io
        .queues
        .tail
        .iter()
        .map(|row| m.index(port, row))
        .collect();
    let tail = m.index(slot, &tails);
    let tail = m.named("d_queue_tail", tail);
    let cell = m.concat(&[slot, tail]);
    let cell = m.named("d_cell", cell);
    debug_assert_eq!(cell.width(), index_width(cfg.slots) + ptr_w);
    let aw = io.packet_mems[0].addr_width();
    let base = cell_base(m, cell, cfg.cell_beats(), aw);
    let next_addr = m.reg(clk, "d_addr", aw);
    let addr = m.mux(busy, next_addr, base);
    let addr_after = m.add_const_wrap(addr, 1);
    m.set_next(next_addr, addr_after);
    m.set_enable(next_addr, go);
    let write = m.and(go, to_buffer);
    let commit = m.and(write, last);
    let commit = m.named("d_commit", commit);
    let meta = [
        field(m, rec, SEQ),
        field(m, rec, ELEMS),
        field(m, rec, FORMAT),
        field(m, rec, ECN),
        field(m, rec, LEN),
    ];
    let meta = pack_fields(m, &meta);
    debug_assert_eq!(meta.width(), PacketMeta::WIDTH);
    for (i, (&mem, &rmem)) in io.packet_mems.iter().zip(io.meta_mems).enumerate() {
        let here = m.eq_const(port, i as u64);
        let here = m.named(&format!("d_to_port{i}"), here);
        let we = m.and(write, here);
        m.mem_write(mem, clk, addr, tdata, we);
        let ce = m.and(commit, here);
        let cell_addr = m.zext(cell, rmem.addr_width());
        m.mem_write(rmem, clk, cell_addr, meta, ce);
    }
    commit
}
