//! The results of an inference in the DAC domain: one register per logit, the
//! [`answer`](super::super::answer::answer) block (class and log-softmax of the
//! last layer) fed by the datapath's logit stream, and the `m_axis_answer`
//! stream that carries every logit with its log-softmax and the class.

use super::super::answer::{answer, AnswerConfig, LSM_WIDTH};
use super::super::datapath::logit_index_width;
use super::super::top_regs::{Control, LOGIT_REGISTER_WIDTH, SCALE_SHIFT_WIDTH};
use super::commands::Commands;
use super::counters::{saturating_counter, sticky};
use super::missing;
use crate::dsl::{Domain, Instance, ModuleBuilder, Signal};
use crate::ir::HdlError;
use crate::lightning::config::DatapathConfig;

/// Width of `m_axis_answer_tdata`: `[31:0]` the logit (sign-extended), `[63:32]`
/// its log-softmax (signed Q23.8 nats).
pub const ANSWER_DATA_WIDTH: u32 = LOGIT_REGISTER_WIDTH + LSM_WIDTH;
/// Width of `m_axis_answer_tuser`: `[7:0]` the logit's index, `[15:8]` the class.
pub const ANSWER_USER_WIDTH: u32 = 16;

/// What the results stage hands to the status logic (DAC domain).
pub(super) struct Results {
    /// The datapath's `done` rose in this cycle (the run finished, failed or not).
    pub finished: Signal,
    /// The run succeeded and its answer is not complete yet: the host must not
    /// see `done`, and no command may start (a `start` would abandon it).
    pub answering: Signal,
    /// `logit{i}` registers, sign-extended to 32 bits.
    pub logits: Vec<Signal>,
    /// The class (index of the largest logit, ties: the smallest), 32 bits.
    pub class: Signal,
    /// The largest logit, sign-extended to 32 bits.
    pub max_logit: Signal,
    /// `lsm{i}` registers: log-softmax of logit *i*, signed Q23.8 nats.
    pub lsm: Vec<Signal>,
    /// Answer beats dropped because `m_axis_answer_tready` was 0, since
    /// `clear_stats` (saturating).
    pub dropped: Signal,
    /// Sticky: a beat was dropped since `clear_stats`.
    pub overflow: Signal,
}

/// Builds the logit registers, the answer block and the answer stream from
/// datapath instance `d`; a `start` command clears the answer, the datapath's
/// successful `done` starts it with the `scale_shift` of the run's snapshot.
pub(super) fn results(
    m: &mut ModuleBuilder,
    dac: Domain,
    cfg: &DatapathConfig,
    d: Instance,
    cmds: &Commands,
    clear_dac: Signal,
) -> Result<Results, HdlError> {
    let logit_valid = m.instance_output(d, "logit_valid");
    let logit_index = m.instance_output(d, "logit_index");
    let logit_data = m.instance_output(d, "logit_data");
    let done = m.instance_output(d, "done");
    let failed = m.instance_output(d, "failed");
    let done_prev = m.register(dac, "done_prev_q", done);
    let not_prev = m.not(done_prev);
    let finished = m.and(done, not_prev);
    let not_failed = m.not(failed);
    let finished_ok = m.and(finished, not_failed);
    let logits = logit_registers(m, dac, cfg, logit_valid, logit_index, logit_data);

    let scale = cmds
        .controls
        .iter()
        .find(|(c, _)| *c == Control::ScaleShift)
        .map(|(_, q)| *q)
        .ok_or_else(|| missing("the scale_shift control"))?;
    let shape = AnswerConfig {
        cores: cfg.cores,
        acc_width: cfg.acc_width,
        logits: logit_count(cfg),
        index_width: logit_index_width(cfg),
        scale_width: SCALE_SHIFT_WIDTH,
    };
    let a = m.instance("u_answer", &answer(&shape)?);
    m.bind_domain(a, "clk", dac);
    m.connect(a, "clear", cmds.start);
    m.connect(a, "logit_valid", logit_valid);
    m.connect(a, "logit_index", logit_index);
    m.connect(a, "logit_data", logit_data);
    m.connect(a, "last", finished_ok);
    m.connect(a, "scale_shift", scale);
    let busy = m.instance_output(a, "busy");
    let answer_done = m.instance_output(a, "done");
    let not_answer_done = m.not(answer_done);
    let succeeded = m.and(done, not_failed);
    let waiting = m.and(succeeded, not_answer_done);
    let answering = m.or(busy, waiting);
    let class_index = m.instance_output(a, "class_index");
    let class = m.zext(class_index, LOGIT_REGISTER_WIDTH);
    let max = m.instance_output(a, "max_logit");
    let max_logit = m.sext(max, LOGIT_REGISTER_WIDTH);

    let beat = Beat {
        valid: m.instance_output(a, "lsm_valid"),
        index: m.instance_output(a, "lsm_index"),
        lsm: m.instance_output(a, "lsm_data"),
        class: class_index,
    };
    let lsm = lsm_registers(m, dac, logit_count(cfg), &beat);
    let (dropped, overflow) = answer_stream(m, dac, cfg, &beat, &logits, clear_dac);
    Ok(Results {
        finished,
        answering,
        logits,
        class,
        max_logit,
        lsm,
        dropped,
        overflow,
    })
}

/// Number of logits (outputs of the last layer).
pub(super) fn logit_count(cfg: &DatapathConfig) -> u32 {
    cfg.layers.last().copied().unwrap_or(0)
}

/// One register per logit, written when the datapath emits it: the C lanes of
/// `logit_valid`/`logit_index`/`logit_data` (one per core).
fn logit_registers(
    m: &mut ModuleBuilder,
    dac: Domain,
    cfg: &DatapathConfig,
    valid: Signal,
    index: Signal,
    data: Signal,
) -> Vec<Signal> {
    let cores = cfg.cores;
    let valids = m.split_lanes(valid, 1);
    let indices = m.split_lanes(index, index.width() / cores);
    let values: Vec<Signal> = m
        .split_lanes(data, data.width() / cores)
        .into_iter()
        .map(|v| m.sext(v, LOGIT_REGISTER_WIDTH))
        .collect();
    let mut regs = Vec::new();
    for i in 0..logit_count(cfg) {
        // Neuron i belongs to core i mod C.
        let c = (i % cores) as usize;
        let hit = m.eq_const(indices[c], u64::from(i));
        let en = m.and(valids[c], hit);
        let q = m.reg(dac, &format!("logit{i}_q"), LOGIT_REGISTER_WIDTH);
        m.set_next(q, values[c]);
        m.set_enable(q, en);
        regs.push(q);
    }
    regs
}

/// One beat of the answer block's log-softmax stream.
struct Beat {
    valid: Signal,
    index: Signal,
    lsm: Signal,
    class: Signal,
}

/// One register per log-softmax value, written as its beat passes.
fn lsm_registers(m: &mut ModuleBuilder, dac: Domain, logits: u32, beat: &Beat) -> Vec<Signal> {
    (0..logits)
        .map(|i| {
            let hit = m.eq_const(beat.index, u64::from(i));
            let en = m.and(beat.valid, hit);
            let q = m.reg(dac, &format!("lsm{i}_q"), LSM_WIDTH);
            m.set_next(q, beat.lsm);
            m.set_enable(q, en);
            q
        })
        .collect()
}

/// `m_axis_answer_*`: per logit, in index order, one registered beat with the
/// logit and its log-softmax (`tdata`), the index and the class (`tuser`), and
/// `tlast` on the last logit. The answer cannot wait: a beat offered while
/// `tready` = 0 is dropped and counted. Returns the drop count and its sticky bit.
fn answer_stream(
    m: &mut ModuleBuilder,
    dac: Domain,
    cfg: &DatapathConfig,
    beat: &Beat,
    logits: &[Signal],
    clear: Signal,
) -> (Signal, Signal) {
    let logit = m.index(beat.index, logits);
    let data = m.concat(&[beat.lsm, logit]);
    let byte = |m: &mut ModuleBuilder, s: Signal| {
        let wide = m.zext(s, 32);
        m.truncate(wide, 8)
    };
    let index8 = byte(m, beat.index);
    let class8 = byte(m, beat.class);
    let user = m.concat(&[class8, index8]);
    let last_index = u64::from(logit_count(cfg).saturating_sub(1));
    let is_last = m.eq_const(beat.index, last_index);
    let last = m.and(beat.valid, is_last);
    let valid_q = m.register(dac, "answer_tvalid_q", beat.valid);
    let data_q = m.reg_no_reset(dac, "answer_tdata_q", ANSWER_DATA_WIDTH);
    m.set_next(data_q, data);
    let user_q = m.reg_no_reset(dac, "answer_tuser_q", ANSWER_USER_WIDTH);
    m.set_next(user_q, user);
    let last_q = m.register(dac, "answer_tlast_q", last);
    m.output("m_axis_answer_tvalid", valid_q);
    m.output("m_axis_answer_tdata", data_q);
    m.output("m_axis_answer_tuser", user_q);
    m.output("m_axis_answer_tlast", last_q);
    let ready = m.input("m_axis_answer_tready", 1);
    let refused = m.not(ready);
    let drop = m.and(valid_q, refused);
    let dropped = saturating_counter(m, dac, "answer_dropped_q", drop, clear);
    let overflow = sticky(m, dac, "answer_overflow_q", drop, clear);
    (dropped, overflow)
}
