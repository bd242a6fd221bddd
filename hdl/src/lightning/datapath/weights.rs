//! The weight side of the DAC streams: initialised on-chip memories read at
//! issue, or one AXI-Stream slave per core into a one-word buffer.

use super::{to_samples, Shape, BYTE_WORD_WIDTH, WEIGHT_STREAM_WIDTH};
use crate::bits::Bits;
use crate::dsl::{bits_for, Domain, Memory, ModuleBuilder, Signal};
use crate::lightning::bus::SAMPLES;
use crate::lightning::config::DatapathConfig;

/// What a weight source is made from.
pub(super) struct WeightsIn<'a> {
    /// The validated configuration.
    pub cfg: &'a DatapathConfig,
    /// Its derived widths.
    pub sh: &'a Shape,
    /// The datapath clock.
    pub clk: Domain,
    /// A beat is issued: every core's next weight word is taken.
    pub issue: Signal,
    /// `start` accepted: the address restarts, the buffers empty.
    pub start_ok: Signal,
}

/// The weight side of the DAC streams.
pub(super) struct Weights {
    /// Every core has a word for the next beat.
    pub ready: Signal,
    /// Per core, the weight beat (16 samples), registered at `issue`.
    pub buses: Vec<Signal>,
    /// Per core, the beat's 16 sign bits (streamed weights).
    pub signs: Vec<Signal>,
    /// Per core, the sign memory (memory weights).
    pub sign_mems: Vec<Memory>,
    /// Width of the weight/sign memory address.
    pub addr_width: u32,
}

/// Weights from initialised on-chip memories: one read per `issue`.
pub(super) fn weight_memories(m: &mut ModuleBuilder, input: &WeightsIn) -> Weights {
    let (cfg, sh, clk, issue) = (input.cfg, input.sh, input.clk, input.issue);
    let addr_width = bits_for(sh.weight_depth - 1);
    let w_addr = m.reg(clk, "weight_addr_q", addr_width);
    let w_inc = m.add_const_wrap(w_addr, 1);
    let w_kept = m.mux(issue, w_inc, w_addr);
    let w_zero = m.zeros(addr_width);
    let w_next = m.mux(input.start_ok, w_zero, w_kept);
    m.set_next(w_addr, w_next);
    let mut sign_mems = Vec::new();
    let mut buses = Vec::new();
    for c in 0..cfg.cores {
        let (magnitudes, signs) = cfg.weight_words(c);
        let (magnitudes, signs) = pad_depth(magnitudes, signs, sh.weight_depth);
        let w_mem = m.memory(
            &format!("weights{c}"),
            BYTE_WORD_WIDTH,
            sh.weight_depth,
            Some(magnitudes),
        );
        sign_mems.push(m.memory(&format!("signs{c}"), SAMPLES, sh.weight_depth, Some(signs)));
        let word = m.mem_read(w_mem, clk, &format!("weight_word{c}"), w_addr, Some(issue));
        buses.push(to_samples(m, word));
    }
    Weights {
        ready: m.lit(1, 1),
        buses,
        signs: Vec::new(),
        sign_mems,
        addr_width,
    }
}

/// Weights from one AXI-Stream slave per core, each into a one-word buffer.
/// `w{c}_tready` = buffer empty or being issued (registered state only, so it
/// never depends on `tvalid`); `issue` takes every core's buffered word at once;
/// an accepted `start` empties the buffers.
pub(super) fn weight_streams(m: &mut ModuleBuilder, input: &WeightsIn) -> Weights {
    let (clk, issue) = (input.clk, input.issue);
    let mut held_all = Vec::new();
    let mut buses = Vec::new();
    let mut signs = Vec::new();
    for c in 0..input.cfg.cores {
        let valid = m.input(&format!("w{c}_tvalid"), 1);
        let data = m.input(&format!("w{c}_tdata"), WEIGHT_STREAM_WIDTH);
        let held = m.reg(clk, &format!("w{c}_held_q"), 1);
        let word = m.reg_no_reset(clk, &format!("w{c}_word_q"), WEIGHT_STREAM_WIDTH);
        let not_held = m.not(held);
        let ready = m.or(not_held, issue);
        let taken = m.and(valid, ready);
        let not_issue = m.not(issue);
        let stays = m.and(held, not_issue);
        let held_or = m.or(taken, stays);
        let not_start = m.not(input.start_ok);
        let held_next = m.and(held_or, not_start);
        m.set_next(held, held_next);
        let word_next = m.mux(taken, data, word);
        m.set_next(word, word_next);
        m.output(&format!("w{c}_tready"), ready);
        held_all.push(held);
        let magnitudes = m.truncate(word, BYTE_WORD_WIDTH);
        let beat = m.register_en(clk, &format!("weight_word{c}"), magnitudes, issue);
        buses.push(to_samples(m, beat));
        let sign = m.slice(word, BYTE_WORD_WIDTH, SAMPLES);
        signs.push(m.register_en(clk, &format!("beat_signs{c}"), sign, issue));
    }
    Weights {
        ready: m.and_all(&held_all),
        buses,
        signs,
        sign_mems: Vec::new(),
        addr_width: 1,
    }
}

/// The memory images padded with zero words to `depth`.
fn pad_depth(
    mut magnitudes: Vec<Bits>,
    mut signs: Vec<Bits>,
    depth: u32,
) -> (Vec<Bits>, Vec<Bits>) {
    magnitudes.resize(depth as usize, Bits::zero(BYTE_WORD_WIDTH));
    signs.resize(depth as usize, Bits::zero(SAMPLES));
    (magnitudes, signs)
}
