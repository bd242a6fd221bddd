//! The Lightning top for an RFSoC board: the [`datapath`]
//! on `cores` photonic cores with AXI-Stream ports for the RF Data Converter, a
//! [`calibrator`](super::calibrate::calibrator) per core, the
//! [`answer`](super::answer::answer) (class and log-softmax), an AXI-Lite
//! register file, and three clock domains.
//!
//! # Ports (C = `cores`)
//! - DAC clock `dac_aclk`, `dac_aresetn` (active low): the datapath runs here.
//!   Core *c* drives `m_axis_dac{2c}_{tdata[256],tvalid,tready}` (activations)
//!   and `m_axis_dac{2c+1}_*` (weights), AXI-Stream masters for the converter's
//!   DAC slaves (`s00_axis`, `s01_axis`, … of `usp_rf_data_converter`): 16
//!   samples × 16 bits per clock, sample *i* in `[16i+15:16i]`. The RF-DAC
//!   plays `tdata` whether or not `tvalid` is set (it does not gate its data
//!   with `tvalid`), so every cycle without `tvalid` carries zero samples: the
//!   modulators stay dark. The converter never stalls a running DAC tile; a
//!   beat offered while `tready` = 0 would break the photonic timing, so it
//!   sets the sticky `dac_stall` status bit (the beat is not held).
//! - With streamed weights (`weight_source = stream`), core *c* has an
//!   AXI-Stream slave `s_axis_weights{c}_{tdata[256],tvalid,tready}` on the DAC
//!   clock for a DMA engine: per word, bits `[127:0]` the 16 weight magnitudes
//!   (byte *i* = lane *i*), bits `[143:128]` the 16 sign bits (1 = subtract),
//!   bits `[255:144]` ignored; the words of
//!   [`DatapathConfig::weight_words`](super::config::DatapathConfig::weight_words)`(c)`
//!   in order, the whole stream again for every inference. `tready` is 0 unless
//!   an inference runs, so the DMA may be armed before or after `start`.
//! - On the DAC clock, `m_axis_answer_{tdata[64],tuser[16],tlast,tvalid,tready}`:
//!   after every successful inference one beat per logit in index order,
//!   `tdata` = {log-softmax (signed Q23.8 nats), logit (sign-extended)},
//!   `tuser` = {class, index} (8 bits each), `tlast` on the last logit. The
//!   answer cannot wait: a beat met by `tready` = 0 is dropped and counted
//!   (`answer_dropped`, status `answer_overflow`); the registers hold the same
//!   values. `done` rises once the last beat has left.
//! - ADC clock `adc_aclk`, `adc_aresetn`: core *c*'s `s_axis_adc{c}_{tdata,tvalid,tready}`
//!   is the AXI-Stream slave for a converter ADC master (`m00_axis`, …), 16 or 8
//!   samples × 16 bits per clock ([`TopConfig::adc_samples_per_clock`]);
//!   `tready` is always 1 (an ADC cannot wait). With 8 samples, a gearbox in the
//!   ADC domain pairs consecutive beats into one 16-sample word (first beat =
//!   samples 0–7); which beat starts a pair does not matter, the preamble
//!   detector finds any sample rotation. Words cross to the DAC clock through one
//!   `async_fifo` per core; a word a full FIFO cannot take is dropped and counted
//!   (`adc_dropped`, status `adc_overflow`). It cannot fill while the DAC clock
//!   reads faster than ADC words arrive.
//! - AXI-Lite clock `s_axi_aclk`, `s_axi_aresetn`: the slave `s_axi_*` (12-bit
//!   address, 32-bit data) of the register file ([`registers`]).
//!
//! Hold the three resets together (as one `proc_sys_reset` per clock from one
//! source does): the FIFOs reset both sides at once.
//!
//! # Crossings
//! - **Commands** (AXI-Lite → DAC): a `start`, `calibrate` or `image_commit`
//!   write queues one command in an asynchronous FIFO: an image word (address +
//!   16 bytes), or a start or calibration carrying a snapshot of every control
//!   register ([`Control`]), which the DAC domain latches as it takes the
//!   command. So a run always uses the values written before it, and commands
//!   reach the DAC domain in write order. Commands wait while an inference or a
//!   calibration runs; a write into a full queue is dropped and counted
//!   (`cmd_dropped`, status `cmd_overflow`).
//! - **Status** (DAC → AXI-Lite): every read-only value (status bits, counters,
//!   latency statistics, calibration results, logits) crosses as *one* word
//!   through `handshake_sync`, so the registers are a consistent snapshot a few
//!   cycles old: once `done` reads 1, the logits read are those of that run.
//!   `busy` also stays 1 from a `start` write until the datapath has taken it (a
//!   start counter is compared across the crossing), so polling `status` right
//!   after `start` never sees the previous run's `done`; `cal_status` likewise.
//! - **Calibrated settings** (DAC → AXI-Lite): a successful calibration's loss
//!   gains, delays and shifts arrive in the same snapshot as its `done`, and are
//!   loaded into the read-write control registers in the cycle the snapshot shows
//!   them, so the next `start` uses them and a host reads them back.
//! - `adc_dropped` crosses ADC → AXI-Lite through `handshake_sync`;
//!   `clear_stats` reaches the DAC and ADC domains through `pulse_sync`.
//!
//! # Host sequence
//! Once (or when the link drifts): write `calibrate`, poll `cal_status` until
//! `busy` = 0; `done` = 1, `failed` = 0 → the controls are programmed. Per
//! image: write `image_addr`, `image_data0..3`, `image_commit` per 16-input
//! word; write `start`; poll `status` until `busy` = 0; `done` = 1, `failed` = 0
//! → read `class_index`, `logit0..`, `lsm0..` (or take them from
//! `m_axis_answer`).

mod adc;
mod commands;
mod cores;
mod counters;
mod results;
mod status;

use super::config::DatapathConfig;
use super::datapath::datapath;
use super::top_regs::ADDR_WIDTH;
pub use super::top_regs::{registers, Control, TopConfig};
use crate::blocks::axil_regfile::{axil_regfile, RegFileSpec, RegisterMap};
use crate::blocks::cdc::cross_pulse;
use crate::dsl::{Domain, Instance, ModuleBuilder};
use crate::ir::{Direction, HdlError, Module, PortKind, ResetPolarity};
pub use cores::WEIGHT_PORT_WIDTH;

/// Name of the generated top module.
pub const TOP_NAME: &str = "lightning_top";

/// DAC channels a photonic core drives: activations and weights.
pub const DACS_PER_CORE: u32 = 2;

/// ADC channels a photonic core reads.
pub const ADCS_PER_CORE: u32 = 1;

/// Photonic cores a board bringing out `dacs` DAC and `adcs` ADC channels can
/// feed ([`DACS_PER_CORE`], [`ADCS_PER_CORE`]).
pub fn cores_for_channels(dacs: u32, adcs: u32) -> u32 {
    (dacs / DACS_PER_CORE).min(adcs / ADCS_PER_CORE)
}

/// The top's three clock domains.
pub(super) struct Domains {
    dac: Domain,
    adc: Domain,
    axil: Domain,
}

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
    let doms = Domains {
        dac: m.domain(
            "dac",
            "dac_aclk",
            Some("dac_aresetn"),
            ResetPolarity::ActiveLow,
        ),
        adc: m.domain(
            "adc",
            "adc_aclk",
            Some("adc_aresetn"),
            ResetPolarity::ActiveLow,
        ),
        axil: m.domain(
            "axil",
            "s_axi_aclk",
            Some("s_axi_aresetn"),
            ResetPolarity::ActiveLow,
        ),
    };
    let r = register_file(&mut m, &regs, doms.axil);
    let clear_axil = m.instance_output(r, "clear_stats_clear");
    let clear_dac = cross_pulse(&mut m, "u_clear_dac", doms.axil, doms.dac, clear_axil)?;
    let clear_adc = cross_pulse(&mut m, "u_clear_adc", doms.axil, doms.adc, clear_axil)?;

    let adc = adc::adc_side(
        &mut m,
        &doms,
        cfg.cores,
        top.adc_samples_per_clock,
        top.adc_fifo_depth,
        clear_adc,
    )?;
    let d = m.instance("u_datapath", &dp);
    m.bind_domain(d, "clk", doms.dac);
    // The DAC domain takes a command only while the datapath and every
    // calibrator are idle; `idle` is known once the calibrators exist.
    let idle = m.wire("dac_idle", 1);
    let cmds = commands::command_queue(
        &mut m,
        &doms,
        r,
        &commands::QueueShape {
            cores: cfg.cores,
            arith: cfg.arith,
            addr_width: addr_w,
            depth: top.command_fifo_depth,
        },
        idle,
        clear_axil,
    )?;
    let (cal, dac_stall) = cores::dac_domain(&mut m, &doms, d, cfg, &cmds, &adc.words, clear_dac)?;
    let res = results::results(&mut m, doms.dac, cfg, d, &cmds, clear_dac)?;
    let dp_busy = m.instance_output(d, "busy");
    let any_busy = m.or_all(&[dp_busy, cal.busy, res.answering]);
    let all_idle = m.not(any_busy);
    m.assign(idle, all_idle);

    status::status_and_results(
        &mut m,
        &doms,
        status::Sources {
            cfg,
            specs: &specs,
            regs: r,
            datapath: d,
            cmds: &cmds,
            cal: &cal,
            results: &res,
            dac_stall,
            adc_dropped: adc.dropped,
            clear_dac,
        },
    )?;
    let top_module = m.finish()?;
    Ok((top_module, map))
}

/// The register file on the AXI-Lite clock; its AXI ports become `s_axi_*`.
fn register_file(m: &mut ModuleBuilder, regs: &Module, axil: Domain) -> Instance {
    let r = m.instance("u_regs", regs);
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
    r
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
pub(super) fn missing(what: &str) -> HdlError {
    HdlError::parameter(TOP_NAME, "internal", format!("{what} is missing"))
}
