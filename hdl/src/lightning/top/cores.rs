//! The DAC clock domain of the top: the datapath, one calibrator per core, the
//! DAC streams (the datapath's, or a calibrator's while it runs) and the weight
//! streams.

use super::super::calibrate::calibrator;
use super::super::config::{Arith, DatapathConfig, WeightSource};
use super::super::datapath::WEIGHT_STREAM_WIDTH;
use super::super::top_regs::Control;
use super::adc::AdcWords;
use super::commands::Commands;
use super::counters::sticky;
use super::Domains;
use crate::dsl::{Instance, ModuleBuilder, Signal};
use crate::ir::HdlError;

/// Width of a weight stream's `tdata` at the top: 256 bits, a width DMA engines
/// offer (bits `[143:0]` are the datapath's word, the rest is ignored).
pub const WEIGHT_PORT_WIDTH: u32 = 256;

/// Per core, what its calibrator reports (DAC domain).
pub(super) struct CoreCalibration {
    /// The calibrator's 2-bit fail reason.
    pub fail_reason: Signal,
    /// `{weight arrival, act arrival}`.
    pub arrival: Signal,
    /// `{gain, level}`.
    pub level: Signal,
    /// The settings a success loads, per calibrated control.
    pub settings: Vec<(Control, Signal)>,
}

/// The DAC domain's calibration state.
pub(super) struct Calibration {
    /// Some core's calibrator runs.
    pub busy: Signal,
    /// Per core.
    pub cores: Vec<CoreCalibration>,
}

/// Wires the datapath `dp` (instance `d`) and the calibrators: controls from
/// the command queue, ADC words in, DAC streams and weight streams out.
pub(super) fn dac_domain(
    m: &mut ModuleBuilder,
    doms: &Domains,
    d: Instance,
    cfg: &DatapathConfig,
    cmds: &Commands,
    adc: &[AdcWords],
    clear_dac: Signal,
) -> Result<(Calibration, Signal), HdlError> {
    for (c, q) in cmds.controls.iter().filter(|(c, _)| c.drives_datapath()) {
        m.connect(d, &c.name(), *q);
    }
    m.connect(d, "start", cmds.start);
    m.connect(d, "load_valid", cmds.load);
    m.connect(d, "load_addr", cmds.load_addr);
    m.connect(d, "load_data", cmds.load_data);
    let dp_busy = m.instance_output(d, "busy");
    if cfg.weight_source == WeightSource::Stream {
        weight_streams(m, d, cfg.cores, dp_busy);
    }
    let timeout = cmds
        .controls
        .iter()
        .find(|(c, _)| *c == Control::Timeout)
        .map(|(_, q)| *q)
        .ok_or_else(|| super::missing("the timeout control"))?;
    let cal_m = calibrator()?;
    let mut cals = Vec::new();
    let mut busy = Vec::new();
    for (c, words) in adc.iter().enumerate() {
        m.connect(d, &format!("adc{c}_tvalid"), words.valid);
        m.connect(d, &format!("adc{c}_tdata"), words.data);
        let k = m.instance(&format!("u_calibrator{c}"), &cal_m);
        m.bind_domain(k, "clk", doms.dac);
        m.connect(k, "start", cmds.calibrate);
        m.connect(k, "timeout", timeout);
        m.connect(k, "adc_tvalid", words.valid);
        m.connect(k, "adc_tdata", words.data);
        busy.push(m.instance_output(k, "busy"));
        cals.push((k, core_calibration(m, k, c as u32, cfg.arith)));
    }
    let cal_busy = m.or_all(&busy);
    let mut stalls = Vec::new();
    for (c, (k, _)) in cals.iter().enumerate() {
        for (j, side) in [(2 * c, "act"), (2 * c + 1, "weight")] {
            let dp_valid = m.instance_output(d, &format!("dac{j}_tvalid"));
            let dp_data = m.instance_output(d, &format!("dac{j}_tdata"));
            let k_valid = m.instance_output(*k, &format!("{side}_tvalid"));
            let k_data = m.instance_output(*k, &format!("{side}_tdata"));
            let valid = m.mux(cal_busy, k_valid, dp_valid);
            let data = m.mux(cal_busy, k_data, dp_data);
            m.output(&format!("m_axis_dac{j}_tdata"), data);
            m.output(&format!("m_axis_dac{j}_tvalid"), valid);
            let ready = m.input(&format!("m_axis_dac{j}_tready"), 1);
            let refused = m.not(ready);
            stalls.push(m.and(valid, refused));
        }
    }
    let stalled = m.or_all(&stalls);
    let dac_stall = sticky(m, doms.dac, "dac_stall_q", stalled, clear_dac);
    let calibration = Calibration {
        busy: cal_busy,
        cores: cals.into_iter().map(|(_, c)| c).collect(),
    };
    Ok((calibration, dac_stall))
}

/// Core `c`'s calibrator outputs, grouped; the gain is in the `optical_loss`
/// format of contract `arith`.
fn core_calibration(m: &mut ModuleBuilder, k: Instance, c: u32, arith: Arith) -> CoreCalibration {
    let fail_reason = m.instance_output(k, "fail_reason");
    let act = m.instance_output(k, "act_arrival");
    let weight = m.instance_output(k, "weight_arrival");
    let level = m.instance_output(k, "level");
    let q8_8 = m.instance_output(k, "gain");
    let gain = match arith {
        Arith::Wirespeed => q8_8,
        Arith::ReleasedRtl => integer_gain(m, q8_8),
    };
    let mut out = |n: &str| m.instance_output(k, n);
    let settings = vec![
        (Control::OpticalLoss(c), gain),
        (Control::Delay(2 * c), out("act_delay")),
        (Control::Shift(2 * c), out("act_shift")),
        (Control::Delay(2 * c + 1), out("weight_delay")),
        (Control::Shift(2 * c + 1), out("weight_shift")),
    ];
    CoreCalibration {
        fail_reason,
        arrival: m.concat(&[weight, act]),
        level: m.concat(&[gain, level]),
        settings,
    }
}

/// The released RTL's integer gain nearest to Q8.8 gain `q8_8`:
/// `(q8_8 + 128) >> 8`, in the same width. It is at least 1, since a level
/// never exceeds 32767 and the Q8.8 gain is then at least 254.
fn integer_gain(m: &mut ModuleBuilder, q8_8: Signal) -> Signal {
    let w = q8_8.width();
    let half = m.lit(128, w);
    let rounded = m.add(q8_8, half);
    let integer = m.slice(rounded, 8, w - 7);
    m.zext(integer, w)
}

/// `s_axis_weights{c}_*`: open only while an inference runs, so a DMA engine may
/// be armed at any time and no word is taken before the `start` empties the
/// datapath's buffers.
fn weight_streams(m: &mut ModuleBuilder, d: Instance, cores: u32, running: Signal) {
    for c in 0..cores {
        let data = m.input(&format!("s_axis_weights{c}_tdata"), WEIGHT_PORT_WIDTH);
        let valid = m.input(&format!("s_axis_weights{c}_tvalid"), 1);
        let word = m.truncate(data, WEIGHT_STREAM_WIDTH);
        let gated = m.and(valid, running);
        m.connect(d, &format!("w{c}_tvalid"), gated);
        m.connect(d, &format!("w{c}_tdata"), word);
        let ready = m.instance_output(d, &format!("w{c}_tready"));
        let open = m.and(ready, running);
        m.output(&format!("s_axis_weights{c}_tready"), open);
    }
}
