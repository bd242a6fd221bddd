//! Write-back: the *round* unit and the neuron indices of a round, and for hidden
//! layers the 16-byte collector with its *lane* unit that writes the next
//! layer's activation words; also the image-load port of the activation buffer.

use super::decoders::Decoded;
use super::sequencer::Sequencer;
use super::{count_unit, Common, BYTE_WORD_WIDTH};
use crate::dsl::{bits_for, Memory, ModuleBuilder, Signal};
use crate::lightning::bus::SAMPLES;

/// What the round bookkeeping is made from.
pub(super) struct RoundsIn<'a> {
    /// What every stage shares.
    pub common: &'a Common<'a>,
    /// The sequencer.
    pub seq: &'a Sequencer,
    /// The emitted neurons.
    pub decoded: &'a Decoded,
}

/// The rounds of a layer.
pub(super) struct Rounds {
    /// The layer's last round is emitted in this cycle.
    pub last_round: Signal,
    /// The cycle after the last round (registered).
    pub layer_end: Signal,
    /// Per core, the index of its neuron in the current round.
    pub indices: Vec<Signal>,
    /// Per core, that neuron exists (is below the layer's outputs).
    pub exists: Vec<Signal>,
}

/// Counts rounds and names each core's neuron of the round.
pub(super) fn rounds(m: &mut ModuleBuilder, input: &RoundsIn) -> Rounds {
    let x = input.common;
    let (sh, clk, seq, cores) = (x.sh, x.clk, input.seq, x.cfg.cores);
    let k = &seq.constants;
    let out_valid = input.decoded.out_valid;
    let unit = &x.units.unit;
    let round_u = count_unit(m, unit, "u_round", clk, out_valid, seq.go, x.one, k.rounds);
    let last_round = m.instance_output(round_u, "action");
    let round = m.instance_output(round_u, "count");
    let layer_end = m.register(clk, "layer_end_q", last_round);

    // Neuron round * cores + c of core c exists if it is below the outputs (with
    // one core, the round itself; core 0's neuron is the base).
    let index_w = sh.count + bits_for(cores);
    let round_x = m.zext(round, index_w);
    let base = if cores == 1 {
        round_x
    } else {
        let cores_lit = m.lit(u64::from(cores), index_w);
        let base = m.mul(round_x, cores_lit);
        m.truncate(base, index_w)
    };
    let outputs_x = m.zext(k.outputs, index_w);
    let mut indices = Vec::new();
    let mut exists = Vec::new();
    for c in 0..cores {
        let idx = match c {
            0 => base,
            _ => m.add_const_wrap(base, u64::from(c)),
        };
        exists.push(m.lt(idx, outputs_x));
        indices.push(m.truncate(idx, sh.count));
    }
    Rounds {
        last_round,
        layer_end,
        indices,
        exists,
    }
}

/// What the hidden layers' write-back is made from.
pub(super) struct CollectorIn<'a> {
    /// What every stage shares.
    pub common: &'a Common<'a>,
    /// The sequencer.
    pub seq: &'a Sequencer,
    /// The emitted neurons.
    pub decoded: &'a Decoded,
    /// The round bookkeeping.
    pub rounds: &'a Rounds,
    /// The activation buffer.
    pub act_mem: Memory,
}

/// The write-back's signals the sequencer and the normalization use.
pub(super) struct WriteBack {
    /// The current layer is a hidden one.
    pub hidden: Signal,
    /// A hidden layer's round is emitted.
    pub write_event: Signal,
    /// Per core, the round's value (0 for a neuron past the outputs).
    pub values: Vec<Signal>,
}

/// Hidden neurons: C bytes per round into a 16-byte collector; a lane unit
/// (count-action, C events per round, target 16) tracks the byte position and
/// fires when a word is full, the excess carrying over into the next word (only
/// with a core count that does not divide 16 does a round straddle two words). The
/// activation buffer's write port takes these words while busy and the image
/// load (`load_valid`, `load_addr`, `load_data`) while idle.
pub(super) fn collector(m: &mut ModuleBuilder, input: &CollectorIn) -> WriteBack {
    let x = input.common;
    let (sh, clk, seq, cores) = (x.sh, x.clk, input.seq, x.cfg.cores);
    let k = &seq.constants;
    let out_valid = input.decoded.out_valid;
    let hidden = m.not(k.is_last);
    let wr_ev = m.and(out_valid, hidden);
    let sixteen = m.lit(u64::from(SAMPLES), sh.count);
    let lane_events = m.replicate(wr_ev, cores);
    let lane_unit = &x.units.lane_unit;
    let lane_u = count_unit(
        m,
        lane_unit,
        "u_lane",
        clk,
        lane_events,
        seq.go,
        x.zero,
        sixteen,
    );
    let lane = m.instance_output(lane_u, "count");
    let full = m.instance_output(lane_u, "action");
    let lane = m.truncate(lane, 4);
    let (vw, word_w) = (x.value_width(), x.word_width());
    let zero_byte = m.zeros(vw);
    let bytes: Vec<Signal> = input
        .decoded
        .acts
        .iter()
        .zip(&input.rounds.exists)
        .map(|(&act, &e)| m.mux(e, act, zero_byte))
        .collect();
    let round_bytes = m.join_lanes(&bytes);
    let three = m.zeros(vw.trailing_zeros());
    let bit_pos = m.concat(&[lane, three]);
    let collector = m.reg(clk, "collector_q", word_w);
    let flush = m.or(full, input.rounds.last_round);
    let write_round = m.and(wr_ev, flush);
    let empty = m.zeros(word_w);
    // With a core count that divides a word's 16 bytes, the lane is always a
    // multiple of it and a round's bytes end at or before the word's end; with
    // any other count a round can straddle two words.
    let (merged, after_write, tail) = if SAMPLES.is_multiple_of(cores) {
        let placed = m.zext(round_bytes, word_w);
        let placed = m.shl_by(placed, bit_pos);
        (m.or(collector, placed), empty, None)
    } else {
        let round_wide = m.zext(round_bytes, 2 * word_w);
        let placed = m.shl_by(round_wide, bit_pos);
        let placed_low = m.truncate(placed, word_w);
        let placed_high = m.slice(placed, word_w, word_w);
        // A last round that spills past a word boundary writes its tail next cycle.
        let lane5 = m.zext(lane, 5);
        let end_lane = m.add_const_wrap(lane5, u64::from(cores));
        let word_end = m.lit(u64::from(SAMPLES), 5);
        let spills = m.gt(end_lane, word_end);
        let tail = m.reg(clk, "tail_q", 1);
        let tail_next = m.and_all(&[wr_ev, input.rounds.last_round, spills]);
        m.set_next(tail, tail_next);
        let after_write = m.mux(full, placed_high, empty);
        (m.or(collector, placed_low), after_write, Some(tail))
    };
    let write = match tail {
        Some(tail) => m.or(write_round, tail),
        None => write_round,
    };
    let kept = m.mux(wr_ev, merged, collector);
    let kept = m.mux(write_round, after_write, kept);
    let coll_next = m.mux(seq.go, empty, kept);
    m.set_next(collector, coll_next);
    let word_index = m.reg(clk, "write_index_q", sh.bank);
    let wi_inc = m.add_const_wrap(word_index, 1);
    let wi_kept = m.mux(write, wi_inc, word_index);
    let wi_zero = m.zeros(sh.bank);
    let wi_next = m.mux(seq.go, wi_zero, wi_kept);
    m.set_next(word_index, wi_next);
    let hidden_addr = m.concat(&[k.write_bank, word_index]);
    let hidden_data = match tail {
        Some(tail) => m.mux(tail, collector, merged),
        None => merged,
    };

    let load_valid = m.input("load_valid", 1);
    let load_addr = m.input("load_addr", sh.bank);
    let load_data = m.input("load_data", BYTE_WORD_WIDTH);
    // Released RTL: the image's bytes as 16-bit buffer values.
    let load_data = if vw == 8 {
        load_data
    } else {
        let lanes: Vec<Signal> = m
            .split_lanes(load_data, 8)
            .into_iter()
            .map(|b| m.zext(b, vw))
            .collect();
        m.join_lanes(&lanes)
    };
    let image_bank = m.zeros(sh.bank_select);
    let load_full_addr = m.concat(&[image_bank, load_addr]);
    let load_en = m.and(load_valid, seq.not_busy);
    let wa = m.mux(seq.busy, hidden_addr, load_full_addr);
    let wd = m.mux(seq.busy, hidden_data, load_data);
    let we = m.mux(seq.busy, write, load_en);
    m.mem_write(input.act_mem, clk, wa, wd, we);
    WriteBack {
        hidden,
        write_event: wr_ev,
        values: bytes,
    }
}
