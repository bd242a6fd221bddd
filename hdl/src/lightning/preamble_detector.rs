//! The ADC-side preamble detector (spec step 5): finds the preamble in the
//! continuous ADC stream, learns the intra-cycle rotation the photonic path added,
//! then opens the window and realigns the stream.
//!
//! # Semantics (cycle-exact)
//!
//! **Per cycle.** For every valid ADC word (`adc_tvalid` = 1; invalid cycles are
//! skipped as if absent, except by the timeout) the detector computes the sum of
//! its 16 samples (an adder tree) and the mask: bit *i* = 1 when sample *i* is
//! above the mean, i.e. `16 · sample_i > sum` (exactly "sample > mean", with no
//! rounding of the mean).
//!
//! **Matching a rotation.** Rotation *k* (0–15) matches word *c* when the 16
//! samples starting at sample *k* of the previous valid word *c*′ — samples *k*…15
//! of *c*′ then samples 0…*k*−1 of *c* — are 8 above-mean samples followed by 8
//! below-mean ones, each judged against the mean of its own word: bits *k*…15 of
//! mask(*c*′) and bits 0…*k*−1 of mask(*c*) equal `0x00FF` rotated left by *k*.
//! (Taking the low *k* bits one word later makes a preamble of P DAC cycles,
//! shifted by *k* samples, give exactly P matching words at every rotation.) The
//! word's rotation is the lowest matching *k*.
//!
//! **Search.** `arm` = 1 in cycle *a* starts a search (and closes a window or
//! clears a failure): cycles *a*+1, *a*+2, … are *search cycles* until it locks or
//! fails. A *run* is a sequence of consecutive valid words judged in search cycles
//! that all match with the same rotation. A count-action unit counts each word that
//! continues the run (target `preamble_length` − 1; a word that does not continue
//! it clears the unit), so the detector **locks** on the word that makes the run
//! `preamble_length` long (0 and 1 both mean one word). Then `locked` = 1 and
//! `rotation` = *k* from the next cycle on.
//!
//! **Timeout.** A second count-action unit counts search cycles (valid or not)
//! with target `timeout` (0 counts as 1). If the search has not locked in its
//! `timeout`-th search cycle, `failed` = 1 from the next cycle and the search
//! stops: the detector never hangs. A lock in that same cycle wins.
//!
//! **Window.** While `locked` = 1, each valid ADC word *c* yields one output word
//! on `m_tdata` with `m_tvalid` = 1: the 16 samples starting at sample *k* of the
//! previous valid word (samples *k*…15 of *c*′, then 0…*k*−1 of *c*). The first
//! output word is the 16 samples that follow the last preamble cycle. `m_tdata`
//! holds its last word while `m_tvalid` = 0.
//!
//! **Latency.** An ADC word presented in cycle *c* is judged in cycle *c* + 2 (two
//! pipeline registers: sum, then mask); the lock or failure it causes shows on
//! `locked`/`failed`/`searching`/`rotation` in cycle *c* + 3, and the output word it
//! completes appears in cycle *c* + 3. A search armed in cycle *a* judges words
//! presented from cycle *a* − 1 on; with no lock, `failed` rises in cycle
//! *a* + `timeout` + 1.
//!
//! After reset the detector is idle: `searching`, `locked` and `failed` are 0.
//!
//! **The released RTL's mean** ([`PreambleMean::Halving`], module
//! `lightning_preamble_detector_halving_t{timeout_width}`): the mean is the
//! released RTL's `averager_tree`: four adder stages, each adding pairs at full
//! precision and halving with truncation (`((s0 + s1) >> 1) + ((s2 + s3) >> 1)`,
//! halved again, and so on), which can lie up to 15/16 below the exact mean;
//! bit *i* of the mask = `sample_i > mean`. (The RTL's `preamble_detect` sets a
//! bit when the sample is *not below* the mean; this detector keeps "above":
//! with "not below", an all-dark word's mask is all ones and, judged across two
//! words, can extend a preamble run by a word.) Everything else is as above.

use super::bus::{
    sample_window, BUS_WIDTH, PREAMBLE_LENGTH_WIDTH, PREAMBLE_MASK, SAMPLES, SAMPLE_WIDTH,
};
use crate::blocks::count_action::{count_action, CountActionConfig};
use crate::dsl::{Domain, ModuleBuilder, Signal};
use crate::ir::{HdlError, Module, ResetPolarity};

/// Width of the run-time `timeout` input (cycles, 0..=65535).
pub const TIMEOUT_WIDTH: u32 = 16;
/// Width of the sum of one word's 16 samples.
const SUM_WIDTH: u32 = SAMPLE_WIDTH + 4;

/// How a word's mean is computed for its mask.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PreambleMean {
    /// The exact mean (`16 · sample > sum`), wirespeed's contract.
    #[default]
    Exact,
    /// The released RTL's four halving, truncating adder stages.
    Halving,
}

/// Shape of a preamble detector.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PreambleDetectorConfig {
    /// Width of the `timeout` input and of the timeout counter (1..=32 bits).
    pub timeout_width: u32,
    /// The mean the mask compares with.
    pub mean: PreambleMean,
}

impl Default for PreambleDetectorConfig {
    /// A 16-bit timeout (up to 65535 cycles), the exact mean.
    fn default() -> Self {
        PreambleDetectorConfig {
            timeout_width: TIMEOUT_WIDTH,
            mean: PreambleMean::Exact,
        }
    }
}

/// Generates `lightning_preamble_detector_t{timeout_width}` (exact mean) or
/// `lightning_preamble_detector_halving_t{timeout_width}` (the released RTL's).
///
/// Ports: `clk`, `rst` (active high); inputs `adc_tvalid`, `adc_tdata[256]`,
/// `arm`, `preamble_length[8]`, `timeout[timeout_width]`; registered outputs
/// `m_tvalid`, `m_tdata[256]` (the realigned window), `searching`, `locked`,
/// `failed`, `rotation[4]`. See the module docs for the cycle-level contract.
pub fn preamble_detector(cfg: &PreambleDetectorConfig) -> Result<Module, HdlError> {
    let tw = cfg.timeout_width;
    if !(1..=32).contains(&tw) {
        return Err(HdlError::parameter(
            "lightning_preamble_detector",
            "timeout_width",
            format!("{tw} is not in 1..=32"),
        ));
    }
    let run_unit = count_action(&CountActionConfig {
        events: 1,
        count_width: PREAMBLE_LENGTH_WIDTH,
    })?;
    let timeout_unit = count_action(&CountActionConfig {
        events: 1,
        count_width: tw,
    })?;

    let name = match cfg.mean {
        PreambleMean::Exact => format!("lightning_preamble_detector_t{tw}"),
        PreambleMean::Halving => format!("lightning_preamble_detector_halving_t{tw}"),
    };
    let mut m = ModuleBuilder::new(&name);
    let clk = m.domain("clk", "clk", Some("rst"), ResetPolarity::ActiveHigh);
    let adc_valid = m.input("adc_tvalid", 1);
    let adc_data = m.input("adc_tdata", BUS_WIDTH);
    let arm = m.input("arm", 1);
    let preamble_length = m.input("preamble_length", PREAMBLE_LENGTH_WIDTH);
    let timeout = m.input("timeout", tw);
    let zero = m.lit(0, 1);
    let one = m.lit(1, 1);

    let (v1, word1, mask) = above_mean(&mut m, cfg.mean, clk, adc_valid, adc_data);
    let v2 = m.register(clk, "s2_valid", v1);
    let word2 = m.reg_no_reset(clk, "s2_word", BUS_WIDTH);
    m.set_next(word2, word1);
    let mask2 = m.register(clk, "s2_mask", mask);

    // Stage 3: rotation match against the previous valid word.
    let prev_mask = m.register_en(clk, "prev_mask", mask2, v2);
    let prev_word = m.reg_no_reset(clk, "prev_word", BUS_WIDTH);
    m.set_next(prev_word, word2);
    m.set_enable(prev_word, v2);
    let (any, k) = rotation_match(&mut m, mask2, prev_mask);

    // State.
    let searching = m.reg(clk, "searching_q", 1);
    let locked = m.reg(clk, "locked_q", 1);
    let failed = m.reg(clk, "failed_q", 1);
    let prev_any = m.reg(clk, "prev_any_q", 1);
    let prev_k = m.reg(clk, "prev_k_q", 4);
    let same_k = m.eq(k, prev_k);
    let same = m.and_all(&[any, prev_any, same_k]);
    let judged = m.and(searching, v2);
    let not_arm = m.not(arm);
    let any_kept = m.mux(v2, any, prev_any);
    let prev_any_next = m.mux(arm, zero, any_kept);
    m.set_next(prev_any, prev_any_next);
    m.set_next(prev_k, k);
    m.set_enable(prev_k, v2);

    // Run of matching words: count continuations up to preamble_length - 1.
    let two = m.lit(2, PREAMBLE_LENGTH_WIDTH);
    let short = m.lt(preamble_length, two);
    let len_minus_one = m.sub_const_wrap(preamble_length, 1);
    // Target 0 (never fires) outside judged cycles, so the unit fires only on a
    // word that completes the run and the count is never cut by a stray firing.
    let no_target = m.zeros(PREAMBLE_LENGTH_WIDTH);
    let not_judged = m.not(judged);
    let no_run_target = m.or(short, not_judged);
    let run_target = m.mux(no_run_target, no_target, len_minus_one);
    let not_same = m.not(same);
    let breaks = m.and(judged, not_same);
    let run_clear = m.or(arm, breaks);
    let run = m.instance("u_run", &run_unit);
    m.bind_domain(run, "clk", clk);
    m.connect(run, "events", same);
    m.connect(run, "enable", judged);
    m.connect(run, "clear", run_clear);
    m.connect(run, "one_shot", zero);
    m.connect(run, "target", run_target);
    let run_full = m.instance_output(run, "action");
    let enough = m.or(short, run_full);
    let lock = m.and_all(&[judged, not_arm, any, enough]);
    let lock = m.named("lock", lock);

    // Timeout: count search cycles.
    let timeout_zero = m.eq_const(timeout, 0);
    let one_t = m.lit(1, tw);
    let timeout_target = m.mux(timeout_zero, one_t, timeout);
    let tmo = m.instance("u_timeout", &timeout_unit);
    m.bind_domain(tmo, "clk", clk);
    m.connect(tmo, "events", searching);
    m.connect(tmo, "enable", one);
    m.connect(tmo, "clear", arm);
    m.connect(tmo, "one_shot", zero);
    m.connect(tmo, "target", timeout_target);
    let expired = m.instance_output(tmo, "action");
    let not_lock = m.not(lock);
    let fail = m.and_all(&[searching, not_arm, expired, not_lock]);
    let fail = m.named("fail", fail);

    let ends = m.or(lock, fail);
    let not_ends = m.not(ends);
    let goes_on = m.and(searching, not_ends);
    let searching_next = m.or(arm, goes_on);
    m.set_next(searching, searching_next);
    let locked_or = m.or(locked, lock);
    let locked_next = m.and(not_arm, locked_or);
    m.set_next(locked, locked_next);
    let failed_or = m.or(failed, fail);
    let failed_next = m.and(not_arm, failed_or);
    m.set_next(failed, failed_next);
    let rotation = m.register_en(clk, "rotation_q", k, lock);

    // Window: realigned output while locked.
    let out = sample_window(&mut m, prev_word, word2, rotation);
    let out_valid = m.and(locked, v2);
    let m_valid = m.register(clk, "m_tvalid_q", out_valid);
    let m_data = m.register_en(clk, "m_tdata_q", out, out_valid);

    m.output("m_tvalid", m_valid);
    m.output("m_tdata", m_data);
    m.output("searching", searching);
    m.output("locked", locked);
    m.output("failed", failed);
    m.output("rotation", rotation);
    m.finish()
}

/// Stages 1 and 2: the valid bit and the word one cycle late, and the mask of the
/// samples above the word's mean (exact: 16 × sample > sum; halving: sample above
/// the released RTL's truncated mean), registered in between.
fn above_mean(
    m: &mut ModuleBuilder,
    mean: PreambleMean,
    clk: Domain,
    adc_valid: Signal,
    adc_data: Signal,
) -> (Signal, Signal, Signal) {
    let samples = m.split_lanes(adc_data, SAMPLE_WIDTH);
    match mean {
        PreambleMean::Exact => {
            let sum = adder_tree(m, &samples);
            let v1 = m.register(clk, "s1_valid", adc_valid);
            let word1 = m.reg_no_reset(clk, "s1_word", BUS_WIDTH);
            m.set_next(word1, adc_data);
            let sum1 = m.reg_no_reset(clk, "s1_sum", SUM_WIDTH);
            m.set_next(sum1, sum);
            let four = m.zeros(4);
            let mut bits = Vec::new();
            for (i, s) in m.split_lanes(word1, SAMPLE_WIDTH).into_iter().enumerate() {
                let times16 = m.concat(&[s, four]);
                let above = m.gt(times16, sum1);
                bits.push(m.named(&format!("above_mean{i}"), above));
            }
            (v1, word1, m.join_lanes(&bits))
        }
        PreambleMean::Halving => {
            let mean = halving_tree(m, &samples);
            let v1 = m.register(clk, "s1_valid", adc_valid);
            let word1 = m.reg_no_reset(clk, "s1_word", BUS_WIDTH);
            m.set_next(word1, adc_data);
            let mean1 = m.reg_no_reset(clk, "s1_mean", SAMPLE_WIDTH);
            m.set_next(mean1, mean);
            let bits: Vec<Signal> = m
                .split_lanes(word1, SAMPLE_WIDTH)
                .into_iter()
                .map(|s| m.gt(s, mean1))
                .collect();
            (v1, word1, m.join_lanes(&bits))
        }
    }
}

/// Stage 3: the preamble pattern searched at every rotation `k` of the current
/// mask after the previous one; whether any rotation matches, and the first that
/// does (0 if none).
fn rotation_match(m: &mut ModuleBuilder, mask2: Signal, prev_mask: Signal) -> (Signal, Signal) {
    let pair = m.concat(&[mask2, prev_mask]);
    let mut hits = Vec::new();
    for k in 0..SAMPLES {
        let window = m.slice(pair, k, SAMPLES);
        let hit = m.eq_const(window, u64::from(PREAMBLE_MASK));
        hits.push(m.named(&format!("preamble_at{k}"), hit));
    }
    let hit_bits = m.join_lanes(&hits);
    let any = m.reduce_or(hit_bits);
    let cases: Vec<(Signal, Signal)> = hits
        .iter()
        .enumerate()
        .map(|(k, &h)| (h, m.lit(k as u64, 4)))
        .collect();
    let none = m.lit(0, 4);
    (any, m.select(&cases, none))
}

/// The released RTL's averager: pairs (0,1), (2,3), … added at full precision
/// and halved (truncating) at each of the four levels; `SAMPLE_WIDTH` bits.
fn halving_tree(m: &mut ModuleBuilder, values: &[Signal]) -> Signal {
    let mut level: Vec<Signal> = values.to_vec();
    while level.len() > 1 {
        level = level
            .chunks(2)
            .map(|pair| match pair {
                [a, b] => {
                    let sum = m.add(*a, *b);
                    m.slice(sum, 1, SAMPLE_WIDTH)
                }
                [a] => *a,
                _ => m.zeros(SAMPLE_WIDTH),
            })
            .collect();
    }
    level
        .first()
        .copied()
        .unwrap_or_else(|| m.zeros(SAMPLE_WIDTH))
}

/// A balanced tree of widening adders: pairs (0,1), (2,3), … per level; the
/// result is `SUM_WIDTH` bits (16 samples of 16 bits).
fn adder_tree(m: &mut ModuleBuilder, values: &[Signal]) -> Signal {
    let mut level: Vec<Signal> = values.to_vec();
    while level.len() > 1 {
        level = level
            .chunks(2)
            .map(|pair| match pair {
                [a, b] => m.add(*a, *b),
                [a] => {
                    let w = a.width() + 1;
                    m.zext(*a, w)
                }
                _ => m.zeros(1),
            })
            .collect();
    }
    match level.first() {
        Some(&s) => m.zext(s, SUM_WIDTH),
        None => m.zeros(SUM_WIDTH),
    }
}
