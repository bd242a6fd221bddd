//! The Lightning top for an RFSoC board: the single-core
//! [`datapath`](super::datapath::datapath) with AXI-Stream ports for the RF Data
//! Converter, an AXI-Lite register file, and three clock domains.
//!
//! # Ports
//! - DAC clock `dac_aclk`, `dac_aresetn` (active low): the datapath runs here.
//!   `m_axis_dac0_{tdata[256],tvalid,tready}` (activations) and
//!   `m_axis_dac1_*` (weights) are AXI-Stream masters for the converter's DAC
//!   slaves (`s00_axis`, `s01_axis` of `usp_rf_data_converter`): 16 samples × 16
//!   bits per clock, sample *i* in `[16i+15:16i]`. The converter never stalls a
//!   running DAC tile; a beat offered while `tready` = 0 would break the photonic
//!   timing, so it sets the sticky `dac_stall` status bit (the beat is not held).
//! - ADC clock `adc_aclk`, `adc_aresetn`: `s_axis_adc_{tdata,tvalid,tready}` is
//!   the AXI-Stream slave for the converter's ADC master (`m00_axis`), 16 or 8
//!   samples × 16 bits per clock ([`TopConfig::adc_samples_per_clock`]); `tready`
//!   is always 1 (an ADC cannot wait). With 8 samples, a gearbox in the ADC domain
//!   pairs consecutive beats into one 16-sample word (first beat = samples 0–7);
//!   which beat starts a pair does not matter, the preamble detector finds any
//!   sample rotation. Words cross to the DAC clock through `async_fifo`; if it is
//!   full the word is dropped and counted (`adc_dropped`, status `adc_overflow`).
//!   It cannot fill while the DAC clock reads faster than ADC words arrive.
//! - AXI-Lite clock `s_axi_aclk`, `s_axi_aresetn`: the slave `s_axi_*` (12-bit
//!   address, 32-bit data) of the register file ([`registers`]).
//!
//! Hold the three resets together (as one `proc_sys_reset` per clock from one
//! source does): the FIFOs reset both sides at once.
//!
//! # Crossings
//! - **Commands** (AXI-Lite → DAC): a `start` or `image_commit` write queues one
//!   command in an asynchronous FIFO: an image word (address + 16 bytes) or a start
//!   carrying a snapshot of the control registers (loss, preamble length, timeout,
//!   delays, shifts), which the DAC domain latches as it starts the datapath. So a
//!   run always uses the values written before its `start`, and image words and
//!   starts reach the datapath in write order. Commands wait while an inference
//!   runs; a write into a full queue is dropped and counted (`cmd_dropped`, status
//!   `cmd_overflow`).
//! - **Status** (DAC → AXI-Lite): every read-only value (status bits, counters,
//!   latency statistics, logits) crosses as *one* word through `handshake_sync`,
//!   so the registers are a consistent snapshot a few cycles old: once `done`
//!   reads 1, the logits read are those of that run. `busy` also stays 1 from a
//!   `start` write until the datapath has taken it (a start counter is compared
//!   across the crossing), so polling `status` right after `start` never sees the
//!   previous run's `done`.
//! - `adc_dropped` crosses ADC → AXI-Lite through `handshake_sync`;
//!   `clear_stats` reaches the DAC and ADC domains through `pulse_sync`.
//!
//! # Host sequence
//! Write `image_addr`, `image_data0..3`, `image_commit` per 16-input word; write
//! `start`; poll `status` until `busy` = 0; `done` = 1, `failed` = 0 → read
//! `logit0..`. There is no calibration command: the datapath has no calibration
//! mode. Software calibrates by running an inference and reading
//! `photonic_slack`, `dac_start_cycle` and `window_open_cycle`, then adjusting
//! `dac{0,1}_delay`/`_shift`.

use std::collections::HashMap;

use super::bus::BUS_WIDTH;
use super::config::DatapathConfig;
use super::datapath::{datapath, BYTE_WORD_WIDTH, COUNTER_WIDTH};
use super::top_regs::{control_reset, ADDR_WIDTH, LOGIT_REGISTER_WIDTH, START_FIELDS};
pub use super::top_regs::{registers, TopConfig};
use crate::blocks::axil_regfile::{axil_regfile, Access, RegFileSpec, RegisterMap};
use crate::blocks::cdc::{cross_pulse, cross_word};
use crate::blocks::fifo::async_fifo;
use crate::dsl::{Domain, ModuleBuilder, Signal};
use crate::ir::{Direction, HdlError, Module, PortKind, ResetPolarity};

/// Name of the generated top module.
pub const TOP_NAME: &str = "lightning_top";
/// Width of a command's payload: one activation word.
const PAYLOAD_WIDTH: u32 = BYTE_WORD_WIDTH;

/// Generates `lightning_top` and its register map for the network `cfg` and the
/// board-facing parameters `top` (both validated first).
pub fn lightning_top(
    cfg: &DatapathConfig,
    top: &TopConfig,
) -> Result<(Module, RegisterMap), HdlError> {
    top.validate(cfg)?;
    let dp = datapath(cfg)?;
    let addr_w = port_width(&dp, "load_addr")?;
    let specs = registers(cfg, top, addr_w);
    let (regs, map) = axil_regfile(&RegFileSpec {
        name: "lightning_regs".into(),
        registers: specs.clone(),
        addr_width: ADDR_WIDTH,
        separate_clock: false,
    })?;

    let mut m = ModuleBuilder::new(TOP_NAME);
    let dac = m.domain(
        "dac",
        "dac_aclk",
        Some("dac_aresetn"),
        ResetPolarity::ActiveLow,
    );
    let adc = m.domain(
        "adc",
        "adc_aclk",
        Some("adc_aresetn"),
        ResetPolarity::ActiveLow,
    );
    let axil = m.domain(
        "axil",
        "s_axi_aclk",
        Some("s_axi_aresetn"),
        ResetPolarity::ActiveLow,
    );
    let one = m.lit(1, 1);

    // Register file on the AXI-Lite clock; its AXI ports become `s_axi_*`.
    let r = m.instance("u_regs", &regs);
    m.bind_domain(r, "axil", axil);
    for port in regs.ports.iter().filter(|p| p.kind == PortKind::Data) {
        if !port.name.starts_with("S_AXI_") {
            continue;
        }
        let width = regs.nets[port.net.0 as usize].width;
        let top_name = port.name.to_lowercase();
        match port.direction {
            Direction::Input => {
                let x = m.input(&top_name, width);
                m.connect(r, &port.name, x);
            }
            Direction::Output => {
                let x = m.instance_output(r, &port.name);
                m.output(&top_name, x);
            }
        }
    }
    let clear_axil = m.instance_output(r, "clear_stats_clear");
    let clear_dac = cross_pulse(&mut m, "u_clear_dac", axil, dac, clear_axil)?;
    let clear_adc = cross_pulse(&mut m, "u_clear_adc", axil, adc, clear_axil)?;

    // ADC domain: optional gearbox, then the ADC-to-DAC FIFO; drops are counted.
    let samples = top.adc_samples_per_clock;
    let adc_data = m.input("s_axis_adc_tdata", 16 * samples);
    let adc_valid = m.input("s_axis_adc_tvalid", 1);
    m.output("s_axis_adc_tready", one);
    let (word, push) = if samples * 16 == BUS_WIDTH {
        (adc_data, adc_valid)
    } else {
        let half = m.reg(adc, "adc_half_q", 16 * samples);
        m.set_next(half, adc_data);
        m.set_enable(half, adc_valid);
        let phase = m.reg(adc, "adc_phase_q", 1);
        let flipped = m.not(phase);
        m.set_next(phase, flipped);
        m.set_enable(phase, adc_valid);
        let word = m.concat(&[adc_data, half]);
        let push = m.and(adc_valid, phase);
        (word, push)
    };
    let adc_fifo = async_fifo(BUS_WIDTH, top.adc_fifo_depth)?;
    let af = m.instance("u_adc_fifo", &adc_fifo);
    m.bind_domain(af, "wr", adc);
    m.bind_domain(af, "rd", dac);
    m.connect(af, "wr_en", push);
    m.connect(af, "wr_data", word);
    m.connect(af, "rd_en", one);
    let adc_full = m.instance_output(af, "full");
    let adc_drop = m.and(push, adc_full);
    let adc_dropped = saturating_counter(&mut m, adc, "adc_dropped_q", adc_drop, clear_adc);
    let adc_dropped_axil = cross_word(&mut m, "u_adc_dropped_sync", adc, axil, adc_dropped)?;

    // Command queue: AXI-Lite writes to the DAC domain.
    let start_w = m.instance_output(r, "start_clear");
    let commit_w = m.instance_output(r, "image_commit_clear");
    let mut fields = Vec::new();
    for (name, _, _) in START_FIELDS.iter().rev() {
        fields.push(m.instance_output(r, name));
    }
    let controls = m.concat(&fields);
    let start_payload = m.zext(controls, PAYLOAD_WIDTH);
    let image_addr = m.instance_output(r, "image_addr");
    let mut data = Vec::new();
    for i in (0..4).rev() {
        data.push(m.instance_output(r, &format!("image_data{i}")));
    }
    let load_payload = m.concat(&data);
    let payload = m.mux(start_w, start_payload, load_payload);
    let cmd_word = m.concat(&[start_w, image_addr, payload]);
    let cmd_width = cmd_word.width();
    let cmd_fifo = async_fifo(cmd_width, top.command_fifo_depth)?;
    let cf = m.instance("u_cmd_fifo", &cmd_fifo);
    m.bind_domain(cf, "wr", axil);
    m.bind_domain(cf, "rd", dac);
    let cmd_push = m.or(start_w, commit_w);
    m.connect(cf, "wr_en", cmd_push);
    m.connect(cf, "wr_data", cmd_word);
    let cmd_full = m.instance_output(cf, "full");
    let cmd_ok = m.not(cmd_full);
    let cmd_drop = m.and(cmd_push, cmd_full);
    let cmd_dropped = saturating_counter(&mut m, axil, "cmd_dropped_q", cmd_drop, clear_axil);
    let start_ok = m.and(start_w, cmd_ok);
    let commit_ok = m.and(commit_w, cmd_ok);
    let never = m.lit(0, 1);
    let starts_queued = wrapping_counter(&mut m, axil, "starts_queued_q", start_ok, never);
    let words_queued = wrapping_counter(&mut m, axil, "words_queued_q", commit_ok, never);

    // DAC domain: take commands while idle, drive the datapath.
    let d = m.instance("u_datapath", &dp);
    m.bind_domain(d, "clk", dac);
    let adc_empty = m.instance_output(af, "empty");
    let adc_word_valid = m.not(adc_empty);
    let adc_word = m.instance_output(af, "rd_data");
    m.connect(d, "adc0_tvalid", adc_word_valid);
    m.connect(d, "adc0_tdata", adc_word);

    let cmd = m.instance_output(cf, "rd_data");
    let cmd_empty = m.instance_output(cf, "empty");
    let dp_busy = m.instance_output(d, "busy");
    let start_q = m.reg(dac, "start_q", 1);
    let has_cmd = m.not(cmd_empty);
    let idle = m.not(dp_busy);
    let not_starting = m.not(start_q);
    let take = m.and_all(&[has_cmd, idle, not_starting]);
    m.connect(cf, "rd_en", take);
    let is_start_cmd = m.bit(cmd, cmd_width - 1);
    let is_load_cmd = m.not(is_start_cmd);
    let take_start = m.and(take, is_start_cmd);
    let take_load = m.and(take, is_load_cmd);
    m.set_next(start_q, take_start);
    let cmd_payload = m.truncate(cmd, PAYLOAD_WIDTH);
    let cmd_addr = m.slice(cmd, PAYLOAD_WIDTH, addr_w);
    for (name, lsb, width) in START_FIELDS {
        let q = m.reg_init(
            dac,
            &format!("{name}_q"),
            width,
            u64::from(control_reset(name)),
        );
        let v = m.slice(cmd_payload, lsb, width);
        m.set_next(q, v);
        m.set_enable(q, take_start);
        // The datapath's loss input is per core; this top has one core.
        let port = if name == "optical_loss" {
            "optical_loss0"
        } else {
            name
        };
        m.connect(d, port, q);
    }
    m.connect(d, "start", start_q);
    m.connect(d, "load_valid", take_load);
    m.connect(d, "load_addr", cmd_addr);
    m.connect(d, "load_data", cmd_payload);

    // DAC streams out; a beat refused by the converter is recorded.
    let mut stalls = Vec::new();
    for i in 0..2 {
        let valid = m.instance_output(d, &format!("dac{i}_tvalid"));
        let tdata = m.instance_output(d, &format!("dac{i}_tdata"));
        m.output(&format!("m_axis_dac{i}_tdata"), tdata);
        m.output(&format!("m_axis_dac{i}_tvalid"), valid);
        let ready = m.input(&format!("m_axis_dac{i}_tready"), 1);
        let refused = m.not(ready);
        stalls.push(m.and(valid, refused));
    }
    let stalled = m.or_all(&stalls);
    let dac_stall = sticky(&mut m, dac, "dac_stall_q", stalled, clear_dac);

    // Measurements in the DAC domain.
    let out = |m: &mut ModuleBuilder, n: &str| m.instance_output(d, n);
    let done = out(&mut m, "done");
    let failed = out(&mut m, "failed");
    let fail_reason = out(&mut m, "fail_reason");
    let cycles = out(&mut m, "cycles");
    let dac_start = out(&mut m, "dac_start_cycle");
    let done_prev = m.register(dac, "done_prev_q", done);
    let not_prev = m.not(done_prev);
    let finished = m.and(done, not_prev);
    let finished_fail = m.and(finished, failed);
    let not_failed = m.not(failed);
    let finished_ok = m.and(finished, not_failed);
    let mut measured: HashMap<&str, Signal> = HashMap::new();
    measured.insert("cycles", cycles);
    measured.insert("dac_start_cycle", dac_start);
    let locked_raw = out(&mut m, "locked");
    let window_open = out(&mut m, "window_open_cycle");
    measured.insert("window_open_cycle", window_open);
    let slack = m.sub_wrap(window_open, dac_start);
    measured.insert("photonic_slack", slack);
    let runs = saturating_counter(&mut m, dac, "runs_q", finished, clear_dac);
    measured.insert("runs", runs);
    let failures = saturating_counter(&mut m, dac, "failures_q", finished_fail, clear_dac);
    measured.insert("failures", failures);
    let (lat_min, lat_max) = latency_range(&mut m, dac, finished_ok, cycles, clear_dac);
    measured.insert("latency_min", lat_min);
    measured.insert("latency_max", lat_max);
    let starts_seen = wrapping_counter(&mut m, dac, "starts_seen_q", start_q, never);

    let logit_valid = out(&mut m, "logit_valid");
    let logit_index = out(&mut m, "logit_index");
    let logit_data = out(&mut m, "logit_data");
    let logit_wide = m.sext(logit_data, LOGIT_REGISTER_WIDTH);
    let logits = cfg.layers.last().copied().unwrap_or(0);
    let mut logit_regs = Vec::new();
    for i in 0..logits {
        let hit = m.eq_const(logit_index, u64::from(i));
        let en = m.and(logit_valid, hit);
        let q = m.reg(dac, &format!("logit{i}_q"), LOGIT_REGISTER_WIDTH);
        m.set_next(q, logit_wide);
        m.set_enable(q, en);
        logit_regs.push((format!("logit{i}"), q));
    }

    // One consistent snapshot of every DAC-domain value to the AXI-Lite domain.
    let busy_bit = dp_busy;
    let locked = m.and(locked_raw, dp_busy);
    let layer = out(&mut m, "layer");
    let layer8 = m.zext(layer, 8);
    let mut snap: Vec<(String, Signal)> = vec![
        ("busy".into(), busy_bit),
        ("done".into(), done),
        ("failed".into(), failed),
        ("fail_reason".into(), fail_reason),
        ("locked".into(), locked),
        ("dac_stall".into(), dac_stall),
        ("layer".into(), layer8),
        ("starts_seen".into(), starts_seen),
    ];
    for (name, _) in super::top_regs::MEASUREMENTS {
        let v = measured
            .get(name)
            .copied()
            .ok_or_else(|| missing(&format!("measurement `{name}`")))?;
        snap.push((name.to_string(), v));
    }
    snap.extend(logit_regs);
    let snapshot = cross_snapshot(&mut m, dac, axil, &snap)?;
    let get = |name: &str| {
        snapshot
            .get(name)
            .copied()
            .ok_or_else(|| missing(&format!("snapshot field `{name}`")))
    };

    // Status in the AXI-Lite domain.
    let pending = m.ne(starts_queued, get("starts_seen")?);
    let not_pending = m.not(pending);
    let busy_s = m.or(get("busy")?, pending);
    let done_s = m.and(get("done")?, not_pending);
    let failed_s = m.and(get("failed")?, not_pending);
    let adc_overflow = m.reduce_or(adc_dropped_axil);
    let cmd_overflow = m.reduce_or(cmd_dropped);
    let zero = m.lit(0, 1);
    let status = m.concat(&[
        get("fail_reason")?,
        get("layer")?,
        zero,
        get("dac_stall")?,
        cmd_overflow,
        adc_overflow,
        get("locked")?,
        failed_s,
        done_s,
        busy_s,
    ]);

    let mut read_only: HashMap<String, Signal> = HashMap::new();
    read_only.insert("status".into(), status);
    read_only.insert("start".into(), starts_queued);
    read_only.insert("image_commit".into(), words_queued);
    read_only.insert("clear_stats".into(), zero);
    read_only.insert("adc_dropped".into(), adc_dropped_axil);
    read_only.insert("cmd_dropped".into(), cmd_dropped);
    for (name, _) in super::top_regs::MEASUREMENTS {
        read_only.insert(name.into(), get(name)?);
    }
    for i in 0..logits {
        let name = format!("logit{i}");
        let v = get(&name)?;
        read_only.insert(name, v);
    }
    for spec in &specs {
        if spec.access == Access::ReadWrite {
            continue;
        }
        let v = match read_only.get(&spec.name) {
            Some(v) => *v,
            None => m.lit(u64::from(spec.reset), spec.width),
        };
        m.connect(r, &spec.name, v);
    }
    let top_module = m.finish()?;
    Ok((top_module, map))
}

/// Width of port `name` of `module`.
fn port_width(module: &Module, name: &str) -> Result<u32, HdlError> {
    module
        .ports
        .iter()
        .find(|p| p.name == name)
        .map(|p| module.net(p.net).width)
        .ok_or_else(|| missing(&format!("datapath port `{name}`")))
}

/// An internal inconsistency of the generator (not reachable from parameters).
fn missing(what: &str) -> HdlError {
    HdlError::parameter(TOP_NAME, "internal", format!("{what} is missing"))
}

/// A 32-bit counter of `inc`, saturating at all ones, cleared by `clear`.
fn saturating_counter(
    m: &mut ModuleBuilder,
    dom: Domain,
    name: &str,
    inc: Signal,
    clear: Signal,
) -> Signal {
    let q = m.reg(dom, name, COUNTER_WIDTH);
    let full = m.reduce_and(q);
    let room = m.not(full);
    let step = m.and(inc, room);
    let next = m.add_const_wrap(q, 1);
    let kept = m.mux(step, next, q);
    let zero = m.zeros(COUNTER_WIDTH);
    let next = m.mux(clear, zero, kept);
    m.set_next(q, next);
    q
}

/// A 32-bit counter of `inc`, wrapping, cleared by `clear`.
fn wrapping_counter(
    m: &mut ModuleBuilder,
    dom: Domain,
    name: &str,
    inc: Signal,
    clear: Signal,
) -> Signal {
    let q = m.reg(dom, name, COUNTER_WIDTH);
    let next = m.add_const_wrap(q, 1);
    let kept = m.mux(inc, next, q);
    let zero = m.zeros(COUNTER_WIDTH);
    let next = m.mux(clear, zero, kept);
    m.set_next(q, next);
    q
}

/// A bit set by `set` and held until `clear`.
fn sticky(m: &mut ModuleBuilder, dom: Domain, name: &str, set: Signal, clear: Signal) -> Signal {
    let q = m.reg(dom, name, 1);
    let held = m.or(q, set);
    let not_clear = m.not(clear);
    let next = m.and(held, not_clear);
    m.set_next(q, next);
    q
}

/// Smallest and largest `cycles` over the `sample` strobes since `clear`
/// (min resets to all ones, max to 0).
fn latency_range(
    m: &mut ModuleBuilder,
    dom: Domain,
    sample: Signal,
    cycles: Signal,
    clear: Signal,
) -> (Signal, Signal) {
    let ones = u64::from(u32::MAX);
    let lo = m.reg_init(dom, "latency_min_q", COUNTER_WIDTH, ones);
    let hi = m.reg(dom, "latency_max_q", COUNTER_WIDTH);
    let below = m.lt(cycles, lo);
    let above = m.gt(cycles, hi);
    let take_lo = m.and(sample, below);
    let take_hi = m.and(sample, above);
    let lo_kept = m.mux(take_lo, cycles, lo);
    let hi_kept = m.mux(take_hi, cycles, hi);
    let all_ones = m.ones(COUNTER_WIDTH);
    let zero = m.zeros(COUNTER_WIDTH);
    let lo_next = m.mux(clear, all_ones, lo_kept);
    let hi_next = m.mux(clear, zero, hi_kept);
    m.set_next(lo, lo_next);
    m.set_next(hi, hi_next);
    (lo, hi)
}

/// Named values crossed together as one word; returns them by name in `dst`.
fn cross_snapshot(
    m: &mut ModuleBuilder,
    src: Domain,
    dst: Domain,
    fields: &[(String, Signal)],
) -> Result<HashMap<String, Signal>, HdlError> {
    let parts: Vec<Signal> = fields.iter().rev().map(|(_, s)| *s).collect();
    let word = m.concat(&parts);
    let crossed = cross_word(m, "u_status_sync", src, dst, word)?;
    let mut out = HashMap::new();
    let mut lsb = 0;
    for (name, s) in fields {
        let v = m.slice(crossed, lsb, s.width());
        lsb += s.width();
        out.insert(name.clone(), v);
    }
    Ok(out)
}
