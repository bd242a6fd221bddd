//! The DAC side: the *issue* and *activation* count-action units, the activation
//! buffer's read, the weight source, and the synchronized streamer that fires all
//! DACs together (with the `dac{j}_delay`/`dac{j}_shift` inputs and the
//! `dac{j}_tvalid`/`dac{j}_tdata` outputs).

use super::normalize::{normalize_word, shift_registers, NormShift};
use super::sequencer::Sequencer;
use super::weights::{weight_memories, weight_streams, Weights, WeightsIn};
use super::{count_unit, fit, to_samples, Common};
use crate::dsl::{Instance, Memory, ModuleBuilder, Signal};
use crate::lightning::bus::{DELAY_WIDTH, SHIFT_WIDTH};
use crate::lightning::config::{Arith, WeightSource};

/// What the DAC side is made from.
pub(super) struct DacSideIn<'a> {
    /// What every stage shares.
    pub common: &'a Common<'a>,
    /// The sequencer.
    pub seq: &'a Sequencer,
    /// The `preamble_length` input.
    pub preamble_length: Signal,
    /// The watchdogs' target: `timeout`, at least 1.
    pub watchdog_target: Signal,
}

/// The DAC side's signals the later stages use.
pub(super) struct DacSide {
    /// The streamer fired a data beat on every DAC.
    pub fire: Signal,
    /// `dac0_tvalid` (preamble or data).
    pub dac0_valid: Signal,
    /// The streamer instance (its `preamble_active` output).
    pub streamer: Instance,
    /// The activation buffer (two banks).
    pub act_mem: Memory,
    /// The weight source.
    pub weights: Weights,
    /// Released RTL: the shift that normalizes the words as they are read.
    pub norm_shift: Option<NormShift>,
    /// Streamed weights: the weight watchdog fired (a beat owed and the streams
    /// short of a word for `timeout` cycles); none with memory weights.
    pub weights_stalled: Option<Signal>,
    /// The streamer's `flush` (a wire the datapath assigns): while idle and in
    /// the cycle a failure ends the inference, so that no beat still in the
    /// aligners lights a DAC once `done` is up.
    pub flush: Signal,
}

/// Issues one beat per cycle while the layer owes beats and every source has a
/// word; reads the activation and weight words; streams them.
pub(super) fn dac_side(m: &mut ModuleBuilder, input: &DacSideIn) -> DacSide {
    let x = input.common;
    let (cfg, sh, units, clk, seq) = (x.cfg, x.sh, x.units, x.clk, input.seq);
    let k = &seq.constants;
    let fire = m.wire("sync_fire", 1);
    let beat_valid = m.reg(clk, "beat_valid_q", 1);
    let issue_done = m.wire("issue_done", 1);
    let not_issue_done = m.not(issue_done);
    let not_beat = m.not(beat_valid);
    let room = m.or(not_beat, fire);
    // Streamed weights: every core's one-word buffer must hold a word.
    let weights_ready = m.wire("weights_ready", 1);
    let issue = m.and_all(&[seq.running, not_issue_done, room, weights_ready]);
    let issue = m.named("issue", issue);
    let issue_u = count_unit(
        m,
        &units.unit,
        "u_issue",
        clk,
        issue,
        seq.go,
        x.one,
        k.beats,
    );
    let d = m.instance_output(issue_u, "done");
    m.assign(issue_done, d);
    let act_u = count_unit(m, &units.unit, "u_act", clk, issue, seq.go, x.zero, k.cpo);
    let act_index = m.instance_output(act_u, "count");
    let act_index = fit(m, act_index, sh.bank);
    let not_fire = m.not(fire);
    let held = m.and(beat_valid, not_fire);
    let pending = m.or(issue, held);
    let beat_next = m.and(seq.busy, pending);
    m.set_next(beat_valid, beat_next);

    let w_in = WeightsIn {
        cfg,
        sh,
        clk,
        issue,
        start_ok: seq.start_ok,
    };
    let weights = match cfg.weight_source {
        WeightSource::Stream => weight_streams(m, &w_in),
        WeightSource::Memory => weight_memories(m, &w_in),
    };
    m.assign(weights_ready, weights.ready);
    let weights_stalled = match cfg.weight_source {
        WeightSource::Stream => {
            let blocked = [seq.running, not_issue_done, room];
            Some(weight_watchdog(
                m,
                x,
                &blocked,
                weights_ready,
                issue,
                seq.go,
                input.watchdog_target,
            ))
        }
        WeightSource::Memory => None,
    };

    let act_mem = m.memory("activations", x.word_width(), sh.banks << sh.bank, None);
    let act_addr = m.concat(&[k.read_bank, act_index]);
    let act_word = m.mem_read(act_mem, clk, "act_word", act_addr, Some(issue));
    let (act_bus, norm_shift) = match cfg.arith {
        Arith::Wirespeed => (to_samples(m, act_word), None),
        Arith::ReleasedRtl => {
            let shift = shift_registers(m, x);
            let bytes = normalize_word(m, act_word, shift);
            (to_samples(m, bytes), Some(shift))
        }
    };

    let st = m.instance("u_streamer", &units.streamer);
    m.bind_domain(st, "clk", clk);
    m.connect(st, "start", seq.go);
    m.connect(st, "preamble_length", input.preamble_length);
    let flush = m.wire("dac_flush", 1);
    m.connect(st, "flush", flush);
    for j in 0..2 * cfg.cores {
        let data = if j % 2 == 0 {
            act_bus
        } else {
            weights.buses[(j / 2) as usize]
        };
        m.connect(st, &format!("s{j}_tvalid"), beat_valid);
        m.connect(st, &format!("s{j}_tdata"), data);
        let delay = m.input(&format!("dac{j}_delay"), DELAY_WIDTH);
        let shift_in = m.input(&format!("dac{j}_shift"), SHIFT_WIDTH);
        m.connect(st, &format!("dac{j}_delay"), delay);
        m.connect(st, &format!("dac{j}_shift"), shift_in);
    }
    let st_fire = m.instance_output(st, "fire");
    m.assign(fire, st_fire);
    let dac0_valid = m.instance_output(st, "dac0_tvalid");
    for j in 0..2 * cfg.cores {
        let v = m.instance_output(st, &format!("dac{j}_tvalid"));
        let data = m.instance_output(st, &format!("dac{j}_tdata"));
        m.output(&format!("dac{j}_tvalid"), v);
        m.output(&format!("dac{j}_tdata"), data);
    }
    DacSide {
        fire,
        dac0_valid,
        streamer: st,
        act_mem,
        weights,
        norm_shift,
        weights_stalled,
        flush,
    }
}

/// The weight watchdog of streamed weights: a one-shot count-action unit
/// (target `target`, cleared by `go` and by every issued beat) that counts the
/// cycles in which a beat could be issued but for a core's empty weight buffer
/// (`wanting`: running, beats owed, room in the streamer; `weights_ready` low).
/// Its action is the failure [`FAIL_WEIGHTS`](super::FAIL_WEIGHTS): a weight
/// stream that stops (a DMA never armed, or stopped mid-layer) ends the
/// inference instead of holding the datapath busy.
fn weight_watchdog(
    m: &mut ModuleBuilder,
    x: &Common,
    wanting: &[Signal],
    weights_ready: Signal,
    issue: Signal,
    go: Signal,
    target: Signal,
) -> Signal {
    let short = m.not(weights_ready);
    let mut starved = wanting.to_vec();
    starved.push(short);
    let starved = m.and_all(&starved);
    let starved = m.named("weights_starved", starved);
    let clear = m.or(go, issue);
    let wd = m.instance("u_weight_watchdog", &x.units.watchdog);
    m.bind_domain(wd, "clk", x.clk);
    m.connect(wd, "events", starved);
    m.connect(wd, "enable", x.one);
    m.connect(wd, "clear", clear);
    m.connect(wd, "one_shot", x.one);
    m.connect(wd, "target", target);
    m.instance_output(wd, "action")
}
