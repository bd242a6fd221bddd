//! The command queue from the AXI-Lite clock to the DAC clock: image words,
//! starts and calibrations in write order; a start or a calibration carries a
//! snapshot of every control register, which the DAC domain latches as it takes
//! the command.

use super::super::config::Arith;
use super::super::datapath::BYTE_WORD_WIDTH;
use super::super::top_regs::Control;
use super::counters::{saturating_counter, wrapping_counter};
use super::Domains;
use crate::blocks::fifo::async_fifo;
use crate::dsl::{Instance, ModuleBuilder, Signal};
use crate::ir::HdlError;

/// What a queued command asks for (the 2-bit kind field).
#[derive(Clone, Copy)]
enum Kind {
    Load = 0,
    Start = 1,
    Calibrate = 2,
}

/// Width of the kind field.
const KIND_WIDTH: u32 = 2;

/// The queue's two ends.
pub(super) struct Commands {
    /// AXI-Lite: starts queued (wrapping; read back by `start`).
    pub starts_queued: Signal,
    /// AXI-Lite: calibrations queued (wrapping; read back by `calibrate`).
    pub cals_queued: Signal,
    /// AXI-Lite: image words queued (wrapping; read back by `image_commit`).
    pub words_queued: Signal,
    /// AXI-Lite: commands dropped, queue full (saturating).
    pub dropped: Signal,
    /// DAC: a start is taken in this cycle (registered: one cycle after the read).
    pub start: Signal,
    /// DAC: a calibration is taken in this cycle (registered likewise).
    pub calibrate: Signal,
    /// DAC: an image word is written in this cycle.
    pub load: Signal,
    /// DAC: the image word's index.
    pub load_addr: Signal,
    /// DAC: the image word.
    pub load_data: Signal,
    /// DAC: the latched control registers, in [`Control::all`] order.
    pub controls: Vec<(Control, Signal)>,
}

/// The queue's shape.
#[derive(Clone, Copy)]
pub(super) struct QueueShape {
    /// Photonic cores (how many controls a snapshot holds).
    pub cores: u32,
    /// The arithmetic contract (the controls' reset values).
    pub arith: Arith,
    /// Width of an image word's index.
    pub addr_width: u32,
    /// Entries of the asynchronous FIFO.
    pub depth: u32,
}

/// Builds the queue between register file `regs` and a DAC domain that takes a
/// command while `idle`; `clear_axil` clears the drop counter.
pub(super) fn command_queue(
    m: &mut ModuleBuilder,
    d: &Domains,
    regs: Instance,
    shape: &QueueShape,
    idle: Signal,
    clear_axil: Signal,
) -> Result<Commands, HdlError> {
    let QueueShape {
        cores,
        arith,
        addr_width,
        depth,
    } = *shape;
    let controls = Control::all(cores);
    let start_w = m.instance_output(regs, "start_clear");
    let cal_w = m.instance_output(regs, "calibrate_clear");
    let commit_w = m.instance_output(regs, "image_commit_clear");
    let fields: Vec<Signal> = controls
        .iter()
        .rev()
        .map(|c| m.instance_output(regs, &c.name()))
        .collect();
    let snapshot = m.concat(&fields);
    let payload_width = snapshot.width().max(BYTE_WORD_WIDTH);
    let snapshot = m.zext(snapshot, payload_width);
    let image_addr = m.instance_output(regs, "image_addr");
    let data: Vec<Signal> = (0..4)
        .rev()
        .map(|i| m.instance_output(regs, &format!("image_data{i}")))
        .collect();
    let image_word = m.concat(&data);
    let image_word = m.zext(image_word, payload_width);
    let control_cmd = m.or(start_w, cal_w);
    let payload = m.mux(control_cmd, snapshot, image_word);
    let k_start = m.lit(Kind::Start as u64, KIND_WIDTH);
    let k_cal = m.lit(Kind::Calibrate as u64, KIND_WIDTH);
    let k_load = m.lit(Kind::Load as u64, KIND_WIDTH);
    let kind = m.select(&[(start_w, k_start), (cal_w, k_cal)], k_load);
    let word = m.concat(&[kind, image_addr, payload]);
    let fifo = async_fifo(word.width(), depth)?;
    let f = m.instance("u_cmd_fifo", &fifo);
    m.bind_domain(f, "wr", d.axil);
    m.bind_domain(f, "rd", d.dac);
    let push = m.or_all(&[start_w, cal_w, commit_w]);
    m.connect(f, "wr_en", push);
    m.connect(f, "wr_data", word);
    let full = m.instance_output(f, "full");
    let room = m.not(full);
    let drop = m.and(push, full);
    let dropped = saturating_counter(m, d.axil, "cmd_dropped_q", drop, clear_axil);
    let start_ok = m.and(start_w, room);
    let cal_ok = m.and(cal_w, room);
    let commit_ok = m.and(commit_w, room);
    let starts_queued = wrapping_counter(m, d.axil, "starts_queued_q", start_ok);
    let cals_queued = wrapping_counter(m, d.axil, "cals_queued_q", cal_ok);
    let words_queued = wrapping_counter(m, d.axil, "words_queued_q", commit_ok);

    // DAC side: take one command per idle cycle; a start or calibration waits
    // one cycle in a register, during which nothing else is taken.
    let cmd = m.instance_output(f, "rd_data");
    let empty = m.instance_output(f, "empty");
    let has = m.not(empty);
    let start_q = m.reg(d.dac, "start_q", 1);
    let cal_q = m.reg(d.dac, "calibrate_q", 1);
    let pending = m.or(start_q, cal_q);
    let not_pending = m.not(pending);
    let take = m.and_all(&[has, idle, not_pending]);
    m.connect(f, "rd_en", take);
    let width = cmd.width();
    let kind = m.slice(cmd, width - KIND_WIDTH, KIND_WIDTH);
    let is_start = m.eq_const(kind, Kind::Start as u64);
    let is_cal = m.eq_const(kind, Kind::Calibrate as u64);
    let is_load = m.eq_const(kind, Kind::Load as u64);
    let take_start = m.and(take, is_start);
    let take_cal = m.and(take, is_cal);
    let take_load = m.and(take, is_load);
    m.set_next(start_q, take_start);
    m.set_next(cal_q, take_cal);
    let payload = m.truncate(cmd, payload_width);
    let latch = m.or(take_start, take_cal);
    let mut lsb = 0;
    let mut latched = Vec::new();
    for c in controls {
        let q = m.reg_init(
            d.dac,
            &format!("{}_q", c.name()),
            c.width(),
            u64::from(c.reset(arith)),
        );
        let v = m.slice(payload, lsb, c.width());
        lsb += c.width();
        m.set_next(q, v);
        m.set_enable(q, latch);
        latched.push((c, q));
    }
    Ok(Commands {
        starts_queued,
        cals_queued,
        words_queued,
        dropped,
        start: start_q,
        calibrate: cal_q,
        load: take_load,
        load_addr: m.slice(cmd, payload_width, addr_width),
        load_data: m.truncate(payload, BYTE_WORD_WIDTH),
        controls: latched,
    })
}
