//! The Lightning top's board-level parameters and its AXI-Lite register map: the
//! register list in address order, the reset values (the working defaults of the
//! closed-loop tests) and the read-only words describing the generated network.
//!
//! Offsets are 4 × the position in [`registers`]; the fixed registers come first
//! (their offsets never move), then two per weight layer, then one per logit.

use super::answer::LSM_WIDTH;
use super::bus::{DEFAULT_PREAMBLE_LENGTH, DELAY_WIDTH, PREAMBLE_LENGTH_WIDTH, SHIFT_WIDTH};
use super::calibrate::{ARRIVAL_WIDTH, CAL_FAIL_WIDTH, GAIN_WIDTH};
use super::config::{Arith, DatapathConfig, WeightSource};
use super::datapath::{fail_reason_codes, COUNTER_WIDTH, FAIL_REASON_WIDTH};
use super::decode::LOSS_WIDTH;
use super::preamble_detector::TIMEOUT_WIDTH;
use crate::blocks::axil_regfile::{Access, RegisterSpec};
use crate::ir::HdlError;

/// Module name used in parameter errors.
const NAME: &str = "lightning_top";
/// Value of the read-only `id` register: "LGHT".
pub const ID: u32 = 0x4C47_4854;
/// AXI-Lite address width (a 4 KiB window).
pub const ADDR_WIDTH: u32 = 12;
/// Width of a logit register; the accumulator must fit it.
pub const LOGIT_REGISTER_WIDTH: u32 = 32;
/// Most logits the top exposes as registers.
pub const MAX_LOGITS: u32 = 64;
/// Width of the `scale_shift` control (log-softmax temperatures 0..=31).
pub const SCALE_SHIFT_WIDTH: u32 = 5;
/// Reset value of `timeout` (cycles after a layer starts without a preamble lock).
pub const DEFAULT_TIMEOUT: u32 = 2000;

/// Bits of the `status` register.
pub mod status {
    /// An inference runs, or a `start` write has not reached the datapath yet.
    pub const BUSY: u32 = 1 << 0;
    /// The last inference finished (cleared by the next `start` write).
    pub const DONE: u32 = 1 << 1;
    /// The last inference failed; the field at [`FAIL_REASON_SHIFT`] says why.
    pub const FAILED: u32 = 1 << 2;
    /// The ADC window is open (preamble locked).
    pub const LOCKED: u32 = 1 << 3;
    /// The ADC FIFO overflowed since the last `clear_stats` (`adc_dropped` > 0).
    pub const ADC_OVERFLOW: u32 = 1 << 4;
    /// A command was dropped, queue full, since the last `clear_stats`.
    pub const CMD_OVERFLOW: u32 = 1 << 5;
    /// A DAC beat met `tready` = 0 since the last `clear_stats`.
    pub const DAC_STALL: u32 = 1 << 6;
    /// An `m_axis_answer` beat met `tready` = 0 since the last `clear_stats`
    /// (`answer_dropped` > 0).
    pub const ANSWER_OVERFLOW: u32 = 1 << 7;
    /// Lowest bit of the current layer index (`[15:8]`).
    pub const LAYER_SHIFT: u32 = 8;
    /// Lowest bit of the datapath's `fail_reason` (`[18:16]`, the codes of
    /// [`FAIL_REASONS`](crate::lightning::datapath::FAIL_REASONS)).
    pub const FAIL_REASON_SHIFT: u32 = 16;
}

/// Board-facing parameters of the top (the datapath has its own).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopConfig {
    /// Samples per clock of the ADC AXI-Stream input: 16 (the datapath's bus) or 8
    /// (a gearbox in the ADC clock domain pairs beats into 16-sample words).
    pub adc_samples_per_clock: u32,
    /// Depth of the asynchronous FIFO carrying ADC words to the DAC clock (a power
    /// of two, 4..=1024).
    pub adc_fifo_depth: u32,
    /// Depth of the asynchronous command queue from the AXI-Lite clock to the DAC
    /// clock (image words and starts; a power of two, 4..=1024).
    pub command_fifo_depth: u32,
}

impl Default for TopConfig {
    /// 16 samples per ADC beat, 16-word FIFOs.
    fn default() -> Self {
        TopConfig {
            adc_samples_per_clock: 16,
            adc_fifo_depth: 16,
            command_fifo_depth: 16,
        }
    }
}

impl TopConfig {
    /// Checks the top's parameters and the datapath parameters the top depends on;
    /// the error names the parameter and why.
    pub fn validate(&self, cfg: &DatapathConfig) -> Result<(), HdlError> {
        let err = |p: &str, why: String| Err(HdlError::parameter(NAME, p, why));
        if ![8, 16].contains(&self.adc_samples_per_clock) {
            return err(
                "adc_samples_per_clock",
                format!(
                    "{}: the ADC stream must carry 8 or 16 samples per clock",
                    self.adc_samples_per_clock
                ),
            );
        }
        for (p, d) in [
            ("adc_fifo_depth", self.adc_fifo_depth),
            ("command_fifo_depth", self.command_fifo_depth),
        ] {
            if !d.is_power_of_two() || !(4..=1024).contains(&d) {
                return err(p, format!("{d} is not a power of two in 4..=1024"));
            }
        }
        cfg.validate()?;
        if cfg.acc_width > LOGIT_REGISTER_WIDTH {
            return err(
                "acc_width",
                format!(
                    "{} bits do not fit the top's {LOGIT_REGISTER_WIDTH}-bit logit registers",
                    cfg.acc_width
                ),
            );
        }
        let logits = cfg.layers.last().copied().unwrap_or(0);
        if logits > MAX_LOGITS {
            return err(
                "layers",
                format!("the last layer has {logits} outputs; the top exposes at most {MAX_LOGITS} logit registers"),
            );
        }
        if cfg.layers.len() > 256 {
            return err(
                "layers",
                format!(
                    "{} sizes: the register map holds at most 255 weight layers",
                    cfg.layers.len()
                ),
            );
        }
        Ok(())
    }
}

/// The `topology` register: `[7:0]` cores, `[8]` streamed weights.
pub fn topology_word(cfg: &DatapathConfig) -> u32 {
    (cfg.cores & 0xFF) | u32::from(cfg.weight_source == WeightSource::Stream) << 8
}

/// Bits of the `cal_status` register.
pub mod cal_status {
    /// A calibration runs, or a `calibrate` write has not reached the cores yet.
    pub const BUSY: u32 = 1 << 0;
    /// The last calibration finished (cleared by the next `calibrate` write).
    pub const DONE: u32 = 1 << 1;
    /// The last calibration failed on some core; nothing was loaded.
    pub const FAILED: u32 = 1 << 2;
    /// Lowest bit of core 0's 2-bit fail reason; core *c*'s is at
    /// `REASON_SHIFT + 2c` (0 none, 1 no light, 2 skew beyond reach).
    pub const REASON_SHIFT: u32 = 8;
}

/// The `cal_status` register of a top with `cores` cores.
fn cal_status_register(cores: u32) -> RegisterSpec {
    let bit = |mask: u32| mask.trailing_zeros();
    let mut r = RegisterSpec::new(
        "cal_status",
        Access::ReadOnly,
        cal_status::REASON_SHIFT + CAL_FAIL_WIDTH * cores,
    )
    .describe("[0] busy, [1] done, [2] failed, then per core c a 2-bit fail reason at [9+2c:8+2c] (0 none, 1 no light within timeout, 2 skew beyond 1023 samples)")
    .field("busy", bit(cal_status::BUSY), 1, "a calibration runs, or a calibrate write has not reached the cores yet")
    .field("done", bit(cal_status::DONE), 1, "the last calibration finished (cleared by the next calibrate write)")
    .field("failed", bit(cal_status::FAILED), 1, "the last calibration failed on some core; no register was loaded");
    for c in 0..cores {
        r = r.field(
            &format!("reason{c}"),
            cal_status::REASON_SHIFT + CAL_FAIL_WIDTH * c,
            CAL_FAIL_WIDTH,
            &format!("core {c}: 0 none, 1 no light within timeout, 2 skew beyond reach"),
        );
    }
    r
}

/// The `params` register: `[7:0]` weight layers, `[15:8]` accumulator width,
/// `[23:16]` ADC samples per clock, `[31:24]` logits.
pub fn params_word(cfg: &DatapathConfig, top: &TopConfig) -> u32 {
    let logits = cfg.layers.last().copied().unwrap_or(0);
    (cfg.weight_layers() as u32 & 0xFF)
        | (cfg.acc_width & 0xFF) << 8
        | (top.adc_samples_per_clock & 0xFF) << 16
        | (logits & 0xFF) << 24
}

/// One run-time control register: software writes it, a `start` or `calibrate`
/// command carries a snapshot of all of them to the DAC clock domain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    /// Preamble cycles per layer (all cores).
    PreambleLength,
    /// Cycles without a preamble lock (or, calibrating, without light) before a
    /// run fails (all cores).
    Timeout,
    /// Core *c*'s ADC loss compensation, Q8.8; calibration loads it.
    OpticalLoss(u32),
    /// DAC *j*'s whole-cycle delay; calibration loads it.
    Delay(u32),
    /// DAC *j*'s intra-cycle sample shift; calibration loads it.
    Shift(u32),
    /// The log-softmax temperature *s*: the softmax is taken over logit · 2⁻ˢ.
    ScaleShift,
}

impl Control {
    /// Every control of a top with `cores` cores, in register (and payload) order:
    /// the shared ones, then per core its loss and its two DACs' delay and shift.
    pub fn all(cores: u32) -> Vec<Control> {
        let mut v = vec![
            Control::PreambleLength,
            Control::Timeout,
            Control::ScaleShift,
        ];
        for c in 0..cores {
            v.push(Control::OpticalLoss(c));
            for j in [2 * c, 2 * c + 1] {
                v.push(Control::Delay(j));
                v.push(Control::Shift(j));
            }
        }
        v
    }

    /// The register's name, which is also the input port of the block it drives.
    pub fn name(self) -> String {
        match self {
            Control::ScaleShift => "scale_shift".into(),
            Control::PreambleLength => "preamble_length".into(),
            Control::Timeout => "timeout".into(),
            Control::OpticalLoss(c) => format!("optical_loss{c}"),
            Control::Delay(j) => format!("dac{j}_delay"),
            Control::Shift(j) => format!("dac{j}_shift"),
        }
    }

    /// Width in bits.
    pub fn width(self) -> u32 {
        match self {
            Control::PreambleLength => PREAMBLE_LENGTH_WIDTH,
            Control::Timeout => TIMEOUT_WIDTH,
            Control::OpticalLoss(_) => LOSS_WIDTH,
            Control::Delay(_) => DELAY_WIDTH,
            Control::Shift(_) => SHIFT_WIDTH,
            Control::ScaleShift => SCALE_SHIFT_WIDTH,
        }
    }

    /// Reset value under contract `arith`: the working defaults of the
    /// closed-loop tests, and no loss compensation ([`Arith::unity_loss`]).
    pub fn reset(self, arith: Arith) -> u32 {
        match self {
            Control::PreambleLength => DEFAULT_PREAMBLE_LENGTH,
            Control::Timeout => DEFAULT_TIMEOUT,
            Control::OpticalLoss(_) => u32::from(arith.unity_loss()),
            Control::Delay(_) | Control::Shift(_) | Control::ScaleShift => 0,
        }
    }

    /// Whether a calibration loads it.
    pub fn calibrated(self) -> bool {
        !matches!(
            self,
            Control::PreambleLength | Control::Timeout | Control::ScaleShift
        )
    }

    /// Whether it is an input of the datapath (otherwise of the answer block).
    pub fn drives_datapath(self) -> bool {
        self != Control::ScaleShift
    }

    /// One line for the register map under contract `arith`.
    pub fn description(self, arith: Arith) -> String {
        let role = |j: u32| {
            if j.is_multiple_of(2) {
                "activations"
            } else {
                "weights"
            }
        };
        let what = match self {
            Control::PreambleLength => "preamble cycles per layer".to_string(),
            Control::Timeout => "cycles after a layer starts without a preamble lock (calibrating: without light), or without an ADC word (weight word) while one is owed, before the run fails; 0 counts as 1".to_string(),
            Control::OpticalLoss(c) => match arith {
                Arith::Wirespeed => format!("core {c}: ADC loss compensation, Q8.8 (0x0100 = 1.0); loaded by a successful calibrate"),
                Arith::ReleasedRtl => format!("core {c}: integer gain on the extracted 8-bit product (1 = none); loaded by a successful calibrate"),
            },
            Control::Delay(j) => format!("whole-cycle delay of DAC {j} (core {}, {}), 0..=63; loaded by a successful calibrate", j / 2, role(j)),
            Control::Shift(j) => format!("intra-cycle sample shift of DAC {j} (core {}, {}), 0..=15; loaded by a successful calibrate", j / 2, role(j)),
            Control::ScaleShift => "log-softmax temperature s, 0..=31: lsm<i> is the log-softmax of logit<i> * 2^-s".to_string(),
        };
        format!("{what}; takes effect at the next start")
    }
}

/// `latency_min` while no successful inference has been counted (after reset
/// and after `clear_stats`).
pub const LATENCY_MIN_NONE: u32 = u32::MAX;

/// Read-only values measured in the DAC clock domain, each 32 bits:
/// `(register, description, value after reset)`, in register order.
pub const MEASUREMENTS: [(&str, &str, u32); 12] = [
    ("cycles", "cycles from start to done of the last inference", 0),
    ("dac_start_cycle", "cycles from start to the first DAC beat of the last inference", 0),
    ("window_open_cycle", "cycles from start to the first ADC preamble lock of the last inference", 0),
    ("photonic_slack", "window_open_cycle - dac_start_cycle: DAC-to-ADC round trip through the photonic core plus preamble lock (cycles)", 0),
    ("runs", "inferences finished since clear_stats (failed ones included)", 0),
    ("failures", "inferences that failed (any fail_reason) since clear_stats", 0),
    ("latency_min", "smallest `cycles` of a successful inference since clear_stats (0xFFFFFFFF: none)", LATENCY_MIN_NONE),
    ("latency_max", "largest `cycles` of a successful inference since clear_stats", 0),
    ("busy_dac_cycles", "cycles of the last inference in which a data beat fired on the DACs", 0),
    ("busy_photonic_cycles", "cycles of the last inference in which some core had words in flight between DAC and ADC window", 0),
    ("busy_decode_cycles", "cycles of the last inference in which the decoders held an accumulating neuron", 0),
    ("compute_cycles", "cycles of the last inference in which any of the three stages worked (cycles - compute_cycles: control overhead)", 0),
];

/// The `status` register with its fields (bit positions from [`status`]).
fn status_register() -> RegisterSpec {
    let bit = |mask: u32| mask.trailing_zeros();
    RegisterSpec::new("status", Access::ReadOnly, status::FAIL_REASON_SHIFT + FAIL_REASON_WIDTH)
        .describe(&format!(
            "[0] busy (running or start queued), [1] done, [2] failed, [3] locked, [4] adc_overflow, [5] cmd_overflow, [6] dac_stall, [7] answer_overflow, [15:8] layer, [18:16] fail_reason ({})",
            fail_reason_codes()
        ))
        .field("busy", bit(status::BUSY), 1, "an inference (with its answer) runs, or a start write has not reached the datapath yet")
        .field("done", bit(status::DONE), 1, "the last inference finished, its answer included (cleared by the next start write)")
        .field("failed", bit(status::FAILED), 1, "the last inference failed; fail_reason says why")
        .field("locked", bit(status::LOCKED), 1, "the ADC window is open (preamble locked)")
        .field("adc_overflow", bit(status::ADC_OVERFLOW), 1, "sticky: the ADC FIFO overflowed since clear_stats (adc_dropped > 0)")
        .field("cmd_overflow", bit(status::CMD_OVERFLOW), 1, "sticky: a command was dropped, queue full, since clear_stats")
        .field("dac_stall", bit(status::DAC_STALL), 1, "sticky: a DAC beat met tready = 0 since clear_stats")
        .field("answer_overflow", bit(status::ANSWER_OVERFLOW), 1, "sticky: an m_axis_answer beat met tready = 0 since clear_stats (answer_dropped > 0)")
        .field("layer", status::LAYER_SHIFT, 8, "weight layer the datapath is on")
        .field("fail_reason", status::FAIL_REASON_SHIFT, FAIL_REASON_WIDTH, &format!("why the last inference failed: {}", fail_reason_codes()))
}

/// The register file's registers, in address order (offsets 0, 4, 8, …).
/// `image_addr_width` is the datapath's `load_addr` width.
pub fn registers(
    cfg: &DatapathConfig,
    top: &TopConfig,
    image_addr_width: u32,
) -> Vec<RegisterSpec> {
    let ro = |name: &str, value: u32, what: &str| {
        RegisterSpec::new(name, Access::ReadOnly, 32)
            .with_reset(value)
            .describe(what)
    };
    let mut r = vec![
        ro("id", ID, "0x4C474854 (\"LGHT\"): identifies the Lightning top"),
        ro("params", params_word(cfg, top), "[7:0] weight layers, [15:8] acc_width, [23:16] ADC samples per clock, [31:24] logits")
            .field("weight_layers", 0, 8, "number of weight layers")
            .field("acc_width", 8, 8, "accumulator width (bits)")
            .field("adc_samples_per_clock", 16, 8, "samples per ADC AXI-Stream beat (8 or 16)")
            .field("logits", 24, 8, "number of logits (outputs of the last layer)"),
        ro("inputs", cfg.layers[0], "input size (8-bit activations per image)"),
        RegisterSpec::new("start", Access::ClearOnWrite, 32).as_command().describe(
            "write any value: queue an inference of the loaded image (which stays loaded until words are written over it) with the current control registers (latched when it starts); reads the number of starts queued",
        ),
        RegisterSpec::new("clear_stats", Access::ClearOnWrite, 1).as_command().describe(
            "write any value: clear runs, failures, latency_min/max, adc_dropped, cmd_dropped and the sticky status bits; reads 0",
        ),
        status_register(),
        ro("topology", topology_word(cfg), "[7:0] photonic cores, [8] weights streamed on s_axis_weights<c> (0: on-chip memory)")
            .field("cores", 0, 8, "photonic cores (DAC pairs and ADC streams)")
            .field("weight_stream", 8, 1, "1: weights arrive on the s_axis_weights<c> streams; 0: on-chip memory"),
        RegisterSpec::new("calibrate", Access::ClearOnWrite, 32).as_command().describe(
            "write any value: queue a calibration of every core (uses timeout); on success it loads optical_loss<c> and dac<j>_delay/_shift; reads the number of calibrations queued",
        ),
        cal_status_register(cfg.cores),
        RegisterSpec::new("cal_cycles", Access::ReadOnly, COUNTER_WIDTH)
            .describe("DAC cycles the last calibration took: the cycle that starts it and every cycle a core is busy; held until the next calibrate"),
    ];
    for control in Control::all(cfg.cores) {
        let spec = RegisterSpec::new(&control.name(), Access::ReadWrite, control.width())
            .with_reset(control.reset(cfg.arith))
            .describe(&control.description(cfg.arith));
        r.push(if control.calibrated() {
            spec.loadable()
        } else {
            spec
        });
    }
    r.push(
        RegisterSpec::new("image_addr", Access::ReadWrite, image_addr_width)
            .describe("activation word index (16 inputs per word) for image_commit"),
    );
    for i in 0..4 {
        r.push(
            RegisterSpec::new(&format!("image_data{i}"), Access::ReadWrite, 32).describe(&format!(
                "activation bytes {}..{} of the word (byte k = input 16*image_addr + {}+k)",
                4 * i,
                4 * i + 3,
                4 * i
            )),
        );
    }
    r.push(RegisterSpec::new("image_commit", Access::ClearOnWrite, 32).as_command().describe(
        "write any value: queue image_data0..3 as word image_addr (written while no inference runs); reads the number of words queued",
    ));
    for (name, what, reset) in MEASUREMENTS {
        r.push(
            RegisterSpec::new(name, Access::ReadOnly, COUNTER_WIDTH)
                .with_reset(reset)
                .describe(what),
        );
    }
    r.push(
        RegisterSpec::new("adc_dropped", Access::ReadOnly, 32).describe(
            "ADC words dropped because the ADC-to-DAC clock FIFO was full, since clear_stats",
        ),
    );
    r.push(RegisterSpec::new("cmd_dropped", Access::ReadOnly, 32).describe(
        "start/image_commit writes dropped because the command queue was full, since clear_stats",
    ));
    for l in 0..cfg.weight_layers() {
        r.push(ro(
            &format!("layer{l}_outputs"),
            cfg.layers[l + 1],
            &format!("weight layer {l}: neurons (target of its neuron count-action unit)"),
        ));
        r.push(ro(
            &format!("layer{l}_cycles_per_output"),
            cfg.cycles_per_output(l),
            &format!("weight layer {l}: DAC cycles per neuron (target of its integration count-action unit)"),
        ));
    }
    for c in 0..cfg.cores {
        r.push(
            RegisterSpec::new(&format!("cal{c}_arrival"), Access::ReadOnly, 2 * ARRIVAL_WIDTH)
                .describe(&format!("core {c}, last calibration: ADC samples from each modulator's first lit DAC word to its light (ADC path latency included)"))
                .field("act", 0, ARRIVAL_WIDTH, "activation modulator (DAC 2c)")
                .field("weight", ARRIVAL_WIDTH, ARRIVAL_WIDTH, "weight modulator (DAC 2c+1)"),
        );
        r.push(
            RegisterSpec::new(&format!("cal{c}_level"), Access::ReadOnly, 2 * GAIN_WIDTH)
                .describe(&format!("core {c}, last calibration: mean full-scale ADC sample and the loss gain derived from it"))
                .field("level", 0, GAIN_WIDTH, "mean ADC sample of a full-scale product (32512 = lossless)")
                .field("gain", GAIN_WIDTH, GAIN_WIDTH, match cfg.arith {
                    Arith::Wirespeed => "round(256 * 32512 / level), Q8.8: the optical_loss it loads",
                    Arith::ReleasedRtl => "the integer nearest to 32512 / level: the optical_loss it loads",
                }),
        );
    }
    r.extend(answer_registers(cfg));
    r
}

/// The answer: drop count, class, largest logit, and per logit its value and
/// log-softmax.
fn answer_registers(cfg: &DatapathConfig) -> Vec<RegisterSpec> {
    let mut r = vec![
        RegisterSpec::new("answer_dropped", Access::ReadOnly, COUNTER_WIDTH).describe(
            "m_axis_answer beats dropped because tready was 0, since clear_stats",
        ),
        RegisterSpec::new("class_index", Access::ReadOnly, LOGIT_REGISTER_WIDTH).describe(
            "index of the largest logit of the last inference (ties: the smallest index; valid when done and not failed)",
        ),
        RegisterSpec::new("max_logit", Access::ReadOnly, LOGIT_REGISTER_WIDTH)
            .describe("the largest logit of the last inference, sign-extended"),
    ];
    let logits = cfg.layers.last().copied().unwrap_or(0);
    for i in 0..logits {
        r.push(
            RegisterSpec::new(&format!("logit{i}"), Access::ReadOnly, LOGIT_REGISTER_WIDTH)
                .describe(&format!(
                "logit {i} of the last inference, sign-extended (valid when done and not failed)"
            )),
        );
    }
    for i in 0..logits {
        r.push(
            RegisterSpec::new(&format!("lsm{i}"), Access::ReadOnly, LSM_WIDTH).describe(&format!(
                "log-softmax of logit {i} * 2^-scale_shift, signed Q23.8 nats (value / 256; within 1/32 nat)"
            )),
        );
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lightning::datapath::{
        fail_reason_text, FAIL_LOST_LIGHT, FAIL_NONE, FAIL_NO_LOCK, FAIL_ROUND_TRIP, FAIL_SKEW,
        FAIL_WEIGHTS,
    };

    /// The `status` register documents every code the datapath can report.
    #[test]
    fn the_status_register_names_every_fail_reason_code() {
        let status = status_register();
        let field = status
            .fields
            .iter()
            .find(|f| f.name == "fail_reason")
            .expect("a fail_reason field");
        for code in [
            FAIL_NONE,
            FAIL_NO_LOCK,
            FAIL_LOST_LIGHT,
            FAIL_SKEW,
            FAIL_ROUND_TRIP,
            FAIL_WEIGHTS,
        ] {
            assert_ne!(fail_reason_text(code), "unknown fail_reason code", "{code}");
            for text in [&field.description, &status.description] {
                assert!(text.contains(&format!("{code} ")), "code {code}: {text}");
            }
        }
    }
}
