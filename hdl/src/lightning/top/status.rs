//! What the host reads: measurements and logits in the DAC domain, crossed as one
//! snapshot to the AXI-Lite domain; the `status` and `cal_status` words; the
//! read-only register inputs; and the loading of calibrated settings into the
//! control registers.

use std::collections::HashMap;

use super::super::config::DatapathConfig;
use super::super::datapath::COUNTER_WIDTH;
use super::super::top_regs::{Control, MEASUREMENTS};
use super::commands::Commands;
use super::cores::Calibration;
use super::counters::{latency_range, saturating_counter, wrapping_counter};
use super::results::{logit_count, Results};
use super::{missing, Domains};
use crate::blocks::axil_regfile::{Access, RegisterSpec};
use crate::blocks::cdc::cross_word;
use crate::dsl::{Domain, Instance, ModuleBuilder, Signal};
use crate::ir::HdlError;

/// Everything the status logic reads.
pub(super) struct Sources<'a> {
    pub cfg: &'a DatapathConfig,
    pub specs: &'a [RegisterSpec],
    pub regs: Instance,
    pub datapath: Instance,
    pub cmds: &'a Commands,
    pub cal: &'a Calibration,
    pub results: &'a Results,
    pub dac_stall: Signal,
    pub adc_dropped: Signal,
    pub clear_dac: Signal,
}

/// Builds the DAC-domain measurements, the snapshot crossing, the status words,
/// the read-only register inputs and the calibrated loads.
pub(super) fn status_and_results(
    m: &mut ModuleBuilder,
    d: &Domains,
    s: Sources,
) -> Result<(), HdlError> {
    let mut snap = inference_fields(m, d.dac, &s)?;
    snap.extend(calibration_fields(m, d.dac, &s));
    let snapshot = cross_snapshot(m, d.dac, d.axil, &snap)?;
    let get = |name: &str| {
        snapshot
            .get(name)
            .copied()
            .ok_or_else(|| missing(&format!("snapshot field `{name}`")))
    };

    let zero = m.lit(0, 1);
    let answer_overflow = get("answer_overflow")?;
    let pending = m.ne(s.cmds.starts_queued, get("starts_seen")?);
    let not_pending = m.not(pending);
    let busy = m.or(get("busy")?, pending);
    let done = m.and(get("done")?, not_pending);
    let failed = m.and(get("failed")?, not_pending);
    let adc_overflow = m.reduce_or(s.adc_dropped);
    let cmd_overflow = m.reduce_or(s.cmds.dropped);
    let status = m.concat(&[
        get("fail_reason")?,
        get("layer")?,
        answer_overflow,
        get("dac_stall")?,
        cmd_overflow,
        adc_overflow,
        get("locked")?,
        failed,
        done,
        busy,
    ]);
    let cal_pending = m.ne(s.cmds.cals_queued, get("cals_seen")?);
    let cal_not_pending = m.not(cal_pending);
    let cal_busy = m.or(get("cal_busy")?, cal_pending);
    let cal_done = m.and(get("cal_done")?, cal_not_pending);
    let cal_failed = m.and(get("cal_failed")?, cal_not_pending);
    let five = m.zeros(5);
    let cal_status = m.concat(&[get("cal_reasons")?, five, cal_failed, cal_done, cal_busy]);

    let mut read_only: HashMap<String, Signal> = HashMap::new();
    read_only.insert("status".into(), status);
    read_only.insert("cal_status".into(), cal_status);
    read_only.insert("start".into(), s.cmds.starts_queued);
    read_only.insert("calibrate".into(), s.cmds.cals_queued);
    read_only.insert("image_commit".into(), s.cmds.words_queued);
    read_only.insert("clear_stats".into(), zero);
    read_only.insert("adc_dropped".into(), s.adc_dropped);
    read_only.insert("cmd_dropped".into(), s.cmds.dropped);
    let mut crossed: Vec<String> = MEASUREMENTS.iter().map(|(n, _, _)| n.to_string()).collect();
    crossed.extend(["cal_cycles", "answer_dropped", "class_index", "max_logit"].map(String::from));
    for c in 0..s.cfg.cores {
        crossed.push(format!("cal{c}_arrival"));
        crossed.push(format!("cal{c}_level"));
    }
    for i in 0..logit_count(s.cfg) {
        crossed.push(format!("logit{i}"));
        crossed.push(format!("lsm{i}"));
    }
    for name in crossed {
        let v = get(&name)?;
        read_only.insert(name, v);
    }
    for spec in s.specs {
        if spec.access == Access::ReadWrite {
            continue;
        }
        let v = match read_only.get(&spec.name) {
            Some(v) => *v,
            None => m.lit(u64::from(spec.reset), spec.width),
        };
        m.connect(s.regs, &spec.name, v);
    }
    calibrated_loads(m, d.axil, &s, &snapshot)
}

/// The inference's status, measurements, logits and answer (DAC domain). The
/// run is busy, and not yet done, until its answer is complete.
fn inference_fields(
    m: &mut ModuleBuilder,
    dac: Domain,
    s: &Sources,
) -> Result<Vec<(String, Signal)>, HdlError> {
    let dp = s.datapath;
    let res = s.results;
    let mut out = |n: &str| m.instance_output(dp, n);
    let dp_busy = out("busy");
    let dp_done = out("done");
    let failed = out("failed");
    let fail_reason = out("fail_reason");
    let cycles = out("cycles");
    let dac_start = out("dac_start_cycle");
    let locked_raw = out("locked");
    let window_open = out("window_open_cycle");
    let layer = out("layer");
    let busy = m.or(dp_busy, res.answering);
    let not_answering = m.not(res.answering);
    let done = m.and(dp_done, not_answering);
    let finished = res.finished;
    let finished_fail = m.and(finished, failed);
    let not_failed = m.not(failed);
    let finished_ok = m.and(finished, not_failed);
    let mut measured: HashMap<&str, Signal> = HashMap::new();
    measured.insert("cycles", cycles);
    measured.insert("dac_start_cycle", dac_start);
    measured.insert("window_open_cycle", window_open);
    let slack = m.sub_wrap(window_open, dac_start);
    measured.insert("photonic_slack", slack);
    let runs = saturating_counter(m, dac, "runs_q", finished, s.clear_dac);
    measured.insert("runs", runs);
    let failures = saturating_counter(m, dac, "failures_q", finished_fail, s.clear_dac);
    measured.insert("failures", failures);
    let (lat_min, lat_max) = latency_range(m, dac, finished_ok, cycles, s.clear_dac);
    measured.insert("latency_min", lat_min);
    measured.insert("latency_max", lat_max);
    for name in [
        "busy_dac_cycles",
        "busy_photonic_cycles",
        "busy_decode_cycles",
        "compute_cycles",
    ] {
        let v = m.instance_output(dp, name);
        measured.insert(name, v);
    }
    let starts_seen = wrapping_counter(m, dac, "starts_seen_q", s.cmds.start);
    let locked = m.and(locked_raw, busy);
    let layer8 = m.zext(layer, 8);
    let mut snap: Vec<(String, Signal)> = vec![
        ("busy".into(), busy),
        ("done".into(), done),
        ("failed".into(), failed),
        ("fail_reason".into(), fail_reason),
        ("locked".into(), locked),
        ("dac_stall".into(), s.dac_stall),
        ("layer".into(), layer8),
        ("starts_seen".into(), starts_seen),
    ];
    for (name, _, _) in MEASUREMENTS {
        let v = measured
            .get(name)
            .copied()
            .ok_or_else(|| missing(&format!("measurement `{name}`")))?;
        snap.push((name.to_string(), v));
    }
    snap.push(("answer_overflow".into(), res.overflow));
    snap.push(("answer_dropped".into(), res.dropped));
    snap.push(("class_index".into(), res.class));
    snap.push(("max_logit".into(), res.max_logit));
    for (i, (logit, lsm)) in res.logits.iter().zip(&res.lsm).enumerate() {
        snap.push((format!("logit{i}"), *logit));
        snap.push((format!("lsm{i}"), *lsm));
    }
    Ok(snap)
}

/// The calibration's state and results (DAC domain): busy/done/failed, per core
/// the reasons, arrivals, level and gain, the settings a success loads, and the
/// count of successful calibrations that triggers the loads.
fn calibration_fields(m: &mut ModuleBuilder, dac: Domain, s: &Sources) -> Vec<(String, Signal)> {
    let cal = s.cal;
    let busy_prev = m.register(dac, "cal_busy_prev_q", cal.busy);
    let not_busy = m.not(cal.busy);
    let finished = m.and(busy_prev, not_busy);
    let reasons: Vec<Signal> = cal.cores.iter().map(|c| c.fail_reason).collect();
    let reasons = m.join_lanes(&reasons);
    let any_failed = m.reduce_or(reasons);
    let done = m.reg(dac, "cal_done_q", 1);
    let failed = m.reg(dac, "cal_failed_q", 1);
    let begin = s.cmds.calibrate;
    let not_begin = m.not(begin);
    let done_or = m.or(done, finished);
    let done_next = m.and(done_or, not_begin);
    m.set_next(done, done_next);
    let fail_now = m.and(finished, any_failed);
    let failed_or = m.or(failed, fail_now);
    let failed_next = m.and(failed_or, not_begin);
    m.set_next(failed, failed_next);
    let not_any_failed = m.not(any_failed);
    let success = m.and(finished, not_any_failed);
    let successes = wrapping_counter(m, dac, "cal_successes_q", success);
    let cals_seen = wrapping_counter(m, dac, "cals_seen_q", begin);
    let cycles = m.reg(dac, "cal_cycles_q", COUNTER_WIDTH);
    let c_inc = m.add_const_wrap(cycles, 1);
    let c_kept = m.mux(cal.busy, c_inc, cycles);
    let c_one = m.lit(1, COUNTER_WIDTH);
    let c_next = m.mux(begin, c_one, c_kept);
    m.set_next(cycles, c_next);
    // Busy until the edge that sets `done`/`failed` and counts the success, so
    // no snapshot shows the calibration neither busy nor done.
    let busy = m.or(cal.busy, busy_prev);
    let mut snap: Vec<(String, Signal)> = vec![
        ("cal_busy".into(), busy),
        ("cal_done".into(), done),
        ("cal_failed".into(), failed),
        ("cal_reasons".into(), reasons),
        ("cals_seen".into(), cals_seen),
        ("cal_successes".into(), successes),
        ("cal_cycles".into(), cycles),
    ];
    for (c, core) in cal.cores.iter().enumerate() {
        snap.push((format!("cal{c}_arrival"), core.arrival));
        snap.push((format!("cal{c}_level"), core.level));
        for (control, v) in &core.settings {
            snap.push((format!("set_{}", control.name()), *v));
        }
    }
    snap
}

/// Loads the calibrated settings into the control registers in the cycle the
/// snapshot shows a new successful calibration (AXI-Lite domain).
fn calibrated_loads(
    m: &mut ModuleBuilder,
    axil: Domain,
    s: &Sources,
    snapshot: &HashMap<String, Signal>,
) -> Result<(), HdlError> {
    let get = |name: &str| {
        snapshot
            .get(name)
            .copied()
            .ok_or_else(|| missing(&format!("snapshot field `{name}`")))
    };
    let successes = get("cal_successes")?;
    let seen = m.reg(axil, "cal_loaded_q", COUNTER_WIDTH);
    m.set_next(seen, successes);
    let load = m.ne(successes, seen);
    for control in Control::all(s.cfg.cores) {
        if !control.calibrated() {
            continue;
        }
        let name = control.name();
        let value = get(&format!("set_{name}"))?;
        m.connect(s.regs, &format!("{name}_load"), load);
        m.connect(s.regs, &format!("{name}_load_value"), value);
    }
    Ok(())
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
