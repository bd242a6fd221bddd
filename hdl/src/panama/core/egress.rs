//! The egress: the result emitter, which sends one copy of a bank's sum per
//! participating port (in port order) with that worker's result header, and the
//! fair output arbiter between the bypass buffer and the results.
//!
//! The emitter is a cursor (bank, port, beat) feeding a one-stage read pipeline
//! (the result and header memories) into a skid buffer; it moves to the next
//! copy, and to the next bank, without a gap. The arbiter grants whole frames,
//! alternating between the two sources when both wait; a frame, once started,
//! keeps the output until its last beat.

use super::ingress::USER_BITS;
use super::logic::{bits, cell_base, index_width, lowest_set, step_mod};
use super::sum::HEADER_BITS;
use crate::blocks::skid::axis_skid;
use crate::dsl::{
    bits_for, AxisBeat, AxisConfig, AxisOut, Domain, Instance, Memory, ModuleBuilder, Signal,
};
use crate::ir::HdlError;
use crate::panama::config::PanamaConfig;
use crate::panama::parser::USER_WIDTH;

/// What the egress drives.
pub(super) struct Egress {
    /// The emitter finished a bank this cycle (the bank is free again).
    pub bank_done: Signal,
    /// A result frame was issued this cycle (counts `results_out`).
    pub result_sent: Signal,
    /// Pop of the bypass buffer's head beat.
    pub bypass_pop: Signal,
}

/// Everything the egress reads.
pub(super) struct EgressInputs<'a> {
    /// The accelerator's clock domain.
    pub clk: Domain,
    /// A bank was filled this cycle.
    pub bank_filled: Signal,
    /// Frame length of each bank's results.
    pub bank_len: &'a [Signal],
    /// Participating ports of each bank.
    pub bank_ports: &'a [Signal],
    /// The result memory (bank·cell_beats + beat).
    pub result_mem: Memory,
    /// The result headers, one memory per port (address: bank).
    pub header_mems: &'a [Memory],
    /// The bypass buffer has a beat.
    pub bypass_valid: Signal,
    /// Its head beat, packed with a 32-bit `tuser`.
    pub bypass_beat: Signal,
    /// The accelerator's output.
    pub m_axis: &'a AxisOut,
}

/// Builds the emitter and the arbiter of `cfg`.
pub(super) fn egress(
    m: &mut ModuleBuilder,
    cfg: &PanamaConfig,
    io: &EgressInputs,
) -> Result<Egress, HdlError> {
    let clk = io.clk;
    let ports = cfg.ports();
    let pw = index_width(ports);
    let bw = index_width(cfg.result_banks);
    let beat_w = bits_for(cfg.cell_beats());
    let inner = AxisConfig::packets(cfg.data_width, USER_BITS);
    let bytes = cfg.beat_bytes();

    // Cursor.
    let active = m.reg(clk, "x_active", 1);
    let bank = m.reg(clk, "x_bank", bw);
    let port = m.reg(clk, "x_port", pw);
    let remaining = m.reg(clk, "x_remaining", ports);
    let beat = m.reg(clk, "x_beat", beat_w);
    let full_banks = m.reg(clk, "x_full_banks", bits_for(cfg.result_banks));

    let len = m.index(bank, io.bank_len);
    let len_minus_1 = m.sub_const_wrap(len, 1);
    let last_index = m.shr(len_minus_1, bytes.trailing_zeros());
    let last_index = m.truncate(last_index, beat_w);
    let frame_last = m.eq(beat, last_index);
    let port_flags: Vec<Signal> = (0..ports).map(|i| m.eq_const(port, u64::from(i))).collect();
    let this_port = m.join_lanes(&port_flags);
    let others = m.not(this_port);
    let rest = m.and(remaining, others);
    let rest_flags = bits(m, rest);
    let (more_ports, next_port) = lowest_set(m, &rest_flags, pw);

    let e2_valid = m.reg(clk, "e2_valid", 1);
    let skid = m.instance("u_results", &axis_skid(&inner)?);
    m.bind_domain(skid, "clk", clk);
    let skid_ready = m.instance_output(skid, "s_axis_tready");
    let e2_idle = m.not(e2_valid);
    let advance = m.or(e2_idle, skid_ready);
    let advance = m.named("x_advance", advance);
    let emit = m.and(active, advance);
    let copy_done = m.and(emit, frame_last);
    let no_more = m.not(more_ports);
    let bank_done = m.and(copy_done, no_more);
    let bank_done = m.named("x_bank_done", bank_done);

    let one = m.lit(1, full_banks.width());
    let two = m.lit(2, full_banks.width());
    let has_one = m.ge(full_banks, one);
    let has_two = m.ge(full_banks, two);
    let idle = m.not(active);
    let start_idle = m.and(idle, has_one);
    let start_next = m.and(bank_done, has_two);
    let load = m.or(start_idle, start_next);
    let bank_after = step_mod(m, bank, cfg.result_banks);
    let load_bank = m.mux(active, bank_after, bank);
    let load_ports = m.index(load_bank, io.bank_ports);
    let load_flags = bits(m, load_ports);
    let (_, load_port) = lowest_set(m, &load_flags, pw);

    let no_load = m.not(load);
    let stop = m.and(bank_done, no_load);
    let on = m.ones(1);
    let off = m.zeros(1);
    let active_next = m.select(&[(load, on), (stop, off)], active);
    m.set_next(active, active_next);
    m.set_next(bank, bank_after);
    m.set_enable(bank, bank_done);
    let next_copy = m.and(copy_done, more_ports);
    let port_next = m.select(&[(load, load_port), (next_copy, next_port)], port);
    m.set_next(port, port_next);
    let remaining_next = m.select(&[(load, load_ports), (next_copy, rest)], remaining);
    m.set_next(remaining, remaining_next);
    let beat_up = m.add_const_wrap(beat, 1);
    let zero_beat = m.zeros(beat_w);
    let restart = m.or(load, copy_done);
    let beat_next = m.select(&[(restart, zero_beat), (emit, beat_up)], beat);
    m.set_next(beat, beat_next);
    let filled = m.zext(io.bank_filled, full_banks.width());
    let freed = m.zext(bank_done, full_banks.width());
    let plus = m.add_wrap(full_banks, filled);
    let full_next = m.sub_wrap(plus, freed);
    m.set_next(full_banks, full_next);

    // Read stage: result beat and headers, held while the skid is full.
    let raw = io.result_mem.addr_width();
    let base = cell_base(m, bank, cfg.cell_beats(), raw);
    let beat_wide = m.zext(beat, raw);
    let addr = m.add_wrap(base, beat_wide);
    let sum_beat = m.mem_read(io.result_mem, clk, "e2_sum", addr, Some(advance));
    let headers: Vec<Signal> = io
        .header_mems
        .iter()
        .enumerate()
        .map(|(p, &mem)| {
            let a = m.zext(bank, mem.addr_width());
            m.mem_read(mem, clk, &format!("e2_header{p}"), a, Some(advance))
        })
        .collect();
    m.set_next(e2_valid, emit);
    m.set_enable(e2_valid, advance);
    let e2_port = m.register_en(clk, "e2_port", port, advance);
    let e2_beat = m.register_en(clk, "e2_beat", beat, advance);
    let e2_last = m.register_en(clk, "e2_last", frame_last, advance);
    let e2_len = m.register_en(clk, "e2_len", len, advance);

    let e2 = [e2_valid, e2_port, e2_beat, e2_last, e2_len];
    result_beat(m, cfg, skid, (&headers, sum_beat), e2);
    let take_bypass = arbiter(m, cfg, io, skid)?;

    Ok(Egress {
        bank_done,
        result_sent: copy_done,
        bypass_pop: take_bypass,
    })
}

/// The result beat into the skid buffer `skid`: header bytes from this worker's result
/// header (`headers`, one per port) over the summed beat `sum_beat`, `tkeep` from the
/// frame's length, `tuser` = {destination, source 0, length}. `e2` is the read stage's
/// [valid, port, beat, last, length].
fn result_beat(
    m: &mut ModuleBuilder,
    cfg: &PanamaConfig,
    skid: Instance,
    (headers, sum_beat): (&[Signal], Signal),
    [e2_valid, e2_port, e2_beat, e2_last, e2_len]: [Signal; 5],
) {
    let bytes = cfg.beat_bytes();
    let header = m.index(e2_port, headers);
    let data = match cfg.header_beats() {
        2 => {
            let half = cfg.data_width;
            let lo = m.slice(header, 0, half);
            let hi = m.slice(header, half, half);
            let first = m.eq_const(e2_beat, 0);
            let second = m.eq_const(e2_beat, 1);
            m.select(&[(first, lo), (second, hi)], sum_beat)
        }
        _ => {
            let first = m.eq_const(e2_beat, 0);
            let merged = if cfg.data_width > HEADER_BITS {
                let payload = m.slice(sum_beat, HEADER_BITS, cfg.data_width - HEADER_BITS);
                m.concat(&[payload, header])
            } else {
                header
            };
            m.mux(first, merged, sum_beat)
        }
    };
    let tail = m.slice(e2_len, 0, bytes.trailing_zeros());
    let whole = m.eq_const(tail, 0);
    let not_last = m.not(e2_last);
    let full_beat = m.or(not_last, whole);
    let full_beat = m.named("full_beat", full_beat);
    // A last beat of `tail` bytes keeps bytes 0 .. tail: the bits below `tail`.
    let all = m.ones(bytes);
    let from_tail = m.shl_by(all, tail);
    let below_tail = m.not(from_tail);
    let keep = m.mux(full_beat, all, below_tail);
    let keep = m.named("keep", keep);
    let codes: Vec<Signal> = cfg
        .port_codes
        .iter()
        .map(|&c| m.lit(u64::from(c), 8))
        .collect();
    let dst = m.index(e2_port, &codes);
    let src = m.zeros(8);
    let user = m.concat(&[dst, src, e2_len]);
    m.connect(skid, "s_axis_tdata", data);
    m.connect(skid, "s_axis_tkeep", keep);
    m.connect(skid, "s_axis_tuser", user);
    m.connect(skid, "s_axis_tlast", e2_last);
    m.connect(skid, "s_axis_tvalid", e2_valid);
}

/// The arbiter between the results in `skid` and the bypass, frame by frame, turns
/// alternating when both wait, into the output skid buffer and `m_axis`. Returns the
/// bypass pop.
fn arbiter(
    m: &mut ModuleBuilder,
    cfg: &PanamaConfig,
    io: &EgressInputs,
    skid: Instance,
) -> Result<Signal, HdlError> {
    let clk = io.clk;
    let inner = AxisConfig::packets(cfg.data_width, USER_BITS);
    let r_valid = m.instance_output(skid, "m_axis_tvalid");
    let r_beat = AxisBeat {
        tdata: m.instance_output(skid, "m_axis_tdata"),
        tkeep: Some(m.instance_output(skid, "m_axis_tkeep")),
        tuser: Some(m.instance_output(skid, "m_axis_tuser")),
        tlast: Some(m.instance_output(skid, "m_axis_tlast")),
    };
    let r_packed = r_beat.pack(m);
    let lock = m.reg(clk, "a_lock", 1);
    let owner = m.reg(clk, "a_owner", 1);
    let prefer = m.reg(clk, "a_prefer", 1);
    let both = m.and(io.bypass_valid, r_valid);
    let free_choice = m.mux(both, prefer, r_valid);
    let pick = m.mux(lock, owner, free_choice);
    let pick = m.named("a_results", pick);
    let valid = m.mux(pick, r_valid, io.bypass_valid);
    let packed = m.mux(pick, r_packed, io.bypass_beat);
    let out = m.instance(
        "u_out",
        &axis_skid(&AxisConfig::packets(cfg.data_width, USER_WIDTH))?,
    );
    m.bind_domain(out, "clk", clk);
    let out_ready = m.instance_output(out, "s_axis_tready");
    let moved = m.and(valid, out_ready);
    let beat_out = AxisBeat::unpack(m, &inner, packed);
    let last = beat_out.tlast.unwrap_or_else(|| m.ones(1));
    let not_picked = m.not(pick);
    let end = m.and(moved, last);
    let still = m.not(last);
    let mid = m.and(moved, still);
    m.set_next(lock, still);
    m.set_enable(lock, moved);
    m.set_next(owner, pick);
    m.set_enable(owner, mid);
    m.set_next(prefer, not_picked);
    m.set_enable(prefer, end);
    let take_result = m.and(moved, pick);
    let take_bypass = m.and(moved, not_picked);
    m.connect(skid, "m_axis_tready", take_result);

    let user32 = beat_out.tuser.unwrap_or_else(|| m.zeros(USER_BITS));
    let user128 = m.zext(user32, USER_WIDTH);
    m.connect(out, "s_axis_tdata", beat_out.tdata);
    if let Some(k) = beat_out.tkeep {
        m.connect(out, "s_axis_tkeep", k);
    }
    m.connect(out, "s_axis_tuser", user128);
    m.connect(out, "s_axis_tlast", last);
    m.connect(out, "s_axis_tvalid", valid);
    m.connect(out, "m_axis_tready", io.m_axis.tready);
    let out_valid = m.instance_output(out, "m_axis_tvalid");
    m.assign(io.m_axis.tvalid, out_valid);
    let o = AxisBeat {
        tdata: m.instance_output(out, "m_axis_tdata"),
        tkeep: Some(m.instance_output(out, "m_axis_tkeep")),
        tuser: Some(m.instance_output(out, "m_axis_tuser")),
        tlast: Some(m.instance_output(out, "m_axis_tlast")),
    };
    m.drive_beat(&io.m_axis.beat, &o);
    Ok(take_bypass)
}
