//! The join: one *accept* strobe for all cores (each core's taken words wait in
//! a skew buffer when C > 1), the *accept* count-action unit, and per core the
//! accepted word with its sign bits, ready for decode.

use super::adc_window::{AdcWindows, Window};
use super::sequencer::Sequencer;
use super::weights::Weights;
use super::{count_unit, Common, SKEW_DEPTH};
use crate::dsl::{Domain, ModuleBuilder, Signal};
use crate::lightning::bus::{BUS_WIDTH, SAMPLES};

/// What the join is made from.
pub(super) struct JoinIn<'a> {
    /// What every stage shares.
    pub common: &'a Common<'a>,
    /// The sequencer.
    pub seq: &'a Sequencer,
    /// The cores' windows.
    pub adc: &'a AdcWindows,
    /// The weight source (sign memories, or signs in the window words).
    pub weights: &'a Weights,
}

/// The accepted words, one per core, for decode.
pub(super) struct Accepted {
    /// All cores' next words are accepted in this cycle.
    pub accept: Signal,
    /// The accepted words are on `buses`/`signs` (the cycle after `accept`).
    pub in_valid: Signal,
    /// Per core, the accepted word's 16 samples.
    pub buses: Vec<Signal>,
    /// Per core, the accepted word's 16 sign bits.
    pub signs: Vec<Signal>,
    /// A core's words ran `SKEW_DEPTH` words ahead (reported once every core
    /// has taken all its words); none with one core.
    pub skew_overflow: Option<Signal>,
}

/// Joins the windows, counts the accepted words and fetches their signs.
pub(super) fn join(m: &mut ModuleBuilder, input: &JoinIn) -> Accepted {
    let x = input.common;
    let (clk, seq) = (x.clk, input.seq);
    let accept_done = m.wire("accept_done", 1);
    let not_accept_done = m.not(accept_done);
    let joined = join_windows(
        m,
        &JoinWindowsIn {
            clk,
            windows: &input.adc.windows,
            go: seq.go,
            running: seq.running,
            not_accept_done,
            all_taken: input.adc.all_taken,
        },
    );
    let accept = m.named("accept", joined.accept);
    let beats = seq.constants.beats;
    let unit = &x.units.unit;
    let accept_u = count_unit(m, unit, "u_accept", clk, accept, seq.go, x.one, beats);
    let ad = m.instance_output(accept_u, "done");
    m.assign(accept_done, ad);
    // Memory weights: the sign memory is read at accept, in streaming order.
    let s_addr = if input.weights.sign_mems.is_empty() {
        None
    } else {
        let aw = input.weights.addr_width;
        let s_addr = m.reg(clk, "sign_addr_q", aw);
        let s_inc = m.add_const_wrap(s_addr, 1);
        let s_kept = m.mux(accept, s_inc, s_addr);
        let s_zero = m.zeros(aw);
        let s_next = m.mux(seq.start_ok, s_zero, s_kept);
        m.set_next(s_addr, s_next);
        Some(s_addr)
    };
    let in_valid = m.register(clk, "dec_valid_q", accept);
    let mut signs = Vec::new();
    let mut buses = Vec::new();
    for (c, &data) in joined.data.iter().enumerate() {
        match (s_addr, input.weights.sign_mems.get(c)) {
            (Some(addr), Some(&mem)) => {
                let name = format!("sign_word{c}");
                signs.push(m.mem_read(mem, clk, &name, addr, Some(accept)));
                buses.push(data);
            }
            _ => {
                signs.push(m.slice(data, BUS_WIDTH, SAMPLES));
                buses.push(m.truncate(data, BUS_WIDTH));
            }
        }
    }
    Accepted {
        accept,
        in_valid,
        buses,
        signs,
        skew_overflow: joined.overflow,
    }
}

/// What the windows' join is made from.
struct JoinWindowsIn<'a> {
    /// The datapath clock.
    clk: Domain,
    /// The cores' windows.
    windows: &'a [Window],
    /// First cycle of a layer: empties the buffers.
    go: Signal,
    /// Busy and not in a `go` cycle.
    running: Signal,
    /// The layer still owes accepts.
    not_accept_done: Signal,
    /// Every core has taken all of the layer's words.
    all_taken: Signal,
}

/// The cores' windows joined into one accept strobe.
struct Joined {
    /// All cores' next words are accepted in this cycle.
    accept: Signal,
    /// Per core, the accepted word, in the cycle after `accept`.
    data: Vec<Signal>,
    /// A core's words ran `SKEW_DEPTH` words ahead of another's (sticky per
    /// layer; reported once every core has taken all its words); none with one
    /// core.
    overflow: Option<Signal>,
}

/// Joins the cores' windows: with one core a word is accepted as it is taken;
/// with more, each core's words wait in a small buffer (`SKEW_DEPTH` words,
/// cleared by `go`) and all cores' heads are accepted together when every buffer
/// holds one.
fn join_windows(m: &mut ModuleBuilder, input: &JoinWindowsIn) -> Joined {
    let (clk, go) = (input.clk, input.go);
    if let [w] = input.windows {
        let data = m.reg_no_reset(clk, "dec_data_q", w.data.width());
        m.set_next(data, w.data);
        return Joined {
            accept: w.take,
            data: vec![data],
            overflow: None,
        };
    }
    let aw = SKEW_DEPTH.trailing_zeros();
    let rptr = m.reg(clk, "skew_rd_q", aw + 1);
    let mut avail = Vec::new();
    let mut overflows = Vec::new();
    let mut mems = Vec::new();
    for (c, w) in input.windows.iter().enumerate() {
        let wptr = m.reg(clk, &format!("skew_wr{c}_q"), aw + 1);
        let held = m.sub_wrap(wptr, rptr);
        let is_full = m.eq_const(held, u64::from(SKEW_DEPTH));
        let not_full = m.not(is_full);
        let push = m.and(w.take, not_full);
        let mem = m.memory(&format!("skew{c}"), w.data.width(), SKEW_DEPTH, None);
        let waddr = m.truncate(wptr, aw);
        m.mem_write(mem, clk, waddr, w.data, push);
        let w_inc = m.add_const_wrap(wptr, 1);
        let w_kept = m.mux(push, w_inc, wptr);
        let ptr_zero = m.zeros(aw + 1);
        let w_next = m.mux(go, ptr_zero, w_kept);
        m.set_next(wptr, w_next);
        avail.push(m.ne(wptr, rptr));
        overflows.push(m.and(w.take, is_full));
        mems.push(mem);
    }
    let ready = m.and_all(&avail);
    let accept = m.and_all(&[ready, input.running, input.not_accept_done]);
    let raddr = m.truncate(rptr, aw);
    let data = mems
        .iter()
        .enumerate()
        .map(|(c, &mem)| m.mem_read(mem, clk, &format!("skew_word{c}"), raddr, Some(accept)))
        .collect();
    let r_inc = m.add_const_wrap(rptr, 1);
    let r_kept = m.mux(accept, r_inc, rptr);
    let ptr_zero = m.zeros(aw + 1);
    let r_next = m.mux(go, ptr_zero, r_kept);
    m.set_next(rptr, r_next);
    // A dropped word is fatal, but only reported once every core has taken its
    // words: a core that never locks or stops is reason 1 or 2, not skew.
    let lost = m.reg(clk, "skew_lost_q", 1);
    let any = m.or_all(&overflows);
    let lost_or = m.or(lost, any);
    let not_go = m.not(go);
    let lost_next = m.and(lost_or, not_go);
    m.set_next(lost, lost_next);
    let overflow = m.and(lost, input.all_taken);
    Joined {
        accept,
        data,
        overflow: Some(overflow),
    }
}
