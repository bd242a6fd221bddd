//! The Lightning top's board-level parameters and its AXI-Lite register map: the
//! register list in address order, the reset values (the working defaults of the
//! closed-loop tests) and the read-only words describing the generated network.
//!
//! Offsets are 4 × the position in [`registers`]; the fixed registers come first
//! (their offsets never move), then two per weight layer, then one per logit.

use super::bus::DEFAULT_PREAMBLE_LENGTH;
use super::config::DatapathConfig;
use super::datapath::COUNTER_WIDTH;
use crate::ir::HdlError;
use crate::std::axil_regfile::{Access, RegisterSpec};

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
/// Reset value of `optical_loss`: 1.0 in Q8.8 (no compensation).
pub const DEFAULT_OPTICAL_LOSS: u32 = 0x0100;
/// Reset value of `timeout` (cycles after a layer starts without a preamble lock).
pub const DEFAULT_TIMEOUT: u32 = 2000;

/// Bits of the `status` register.
pub mod status {
    /// An inference runs, or a `start` write has not reached the datapath yet.
    pub const BUSY: u32 = 1 << 0;
    /// The last inference finished (cleared by the next `start` write).
    pub const DONE: u32 = 1 << 1;
    /// The last inference failed (preamble detector timeout).
    pub const FAILED: u32 = 1 << 2;
    /// The ADC window is open (preamble locked).
    pub const LOCKED: u32 = 1 << 3;
    /// The ADC FIFO overflowed since the last `clear_stats` (`adc_dropped` > 0).
    pub const ADC_OVERFLOW: u32 = 1 << 4;
    /// A command was dropped, queue full, since the last `clear_stats`.
    pub const CMD_OVERFLOW: u32 = 1 << 5;
    /// A DAC beat met `tready` = 0 since the last `clear_stats`.
    pub const DAC_STALL: u32 = 1 << 6;
    /// Lowest bit of the current layer index (`[15:8]`).
    pub const LAYER_SHIFT: u32 = 8;
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

/// The `params` register: `[7:0]` weight layers, `[15:8]` accumulator width,
/// `[23:16]` ADC samples per clock, `[31:24]` logits.
pub fn params_word(cfg: &DatapathConfig, top: &TopConfig) -> u32 {
    let logits = cfg.layers.last().copied().unwrap_or(0);
    (cfg.weight_layers() as u32 & 0xFF)
        | (cfg.acc_width & 0xFF) << 8
        | (top.adc_samples_per_clock & 0xFF) << 16
        | (logits & 0xFF) << 24
}

/// Fields of a `start` command's payload: the run-time controls as latched in the
/// DAC clock domain when the command is taken, `(register, lsb, width)`.
pub const START_FIELDS: [(&str, u32, u32); 7] = [
    ("optical_loss", 0, 16),
    ("preamble_length", 16, 8),
    ("timeout", 24, 16),
    ("dac0_delay", 40, 6),
    ("dac0_shift", 46, 4),
    ("dac1_delay", 50, 6),
    ("dac1_shift", 56, 4),
];

/// Reset value of each run-time control register (`START_FIELDS` order).
pub fn control_reset(name: &str) -> u32 {
    match name {
        "optical_loss" => DEFAULT_OPTICAL_LOSS,
        "preamble_length" => DEFAULT_PREAMBLE_LENGTH,
        "timeout" => DEFAULT_TIMEOUT,
        _ => 0,
    }
}

/// Read-only values measured in the DAC clock domain, each 32 bits:
/// `(register, description)`, in register order.
pub const MEASUREMENTS: [(&str, &str); 8] = [
    ("cycles", "cycles from start to done of the last inference"),
    ("dac_start_cycle", "cycles from start to the first DAC beat of the last inference"),
    ("window_open_cycle", "cycles from start to the first ADC preamble lock of the last inference"),
    ("photonic_slack", "window_open_cycle - dac_start_cycle: DAC-to-ADC round trip through the photonic core plus preamble lock (cycles)"),
    ("runs", "inferences finished since clear_stats (failed ones included)"),
    ("failures", "inferences that failed (detector timeout) since clear_stats"),
    ("latency_min", "smallest `cycles` of a successful inference since clear_stats (0xFFFFFFFF: none)"),
    ("latency_max", "largest `cycles` of a successful inference since clear_stats"),
];

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
        ro("params", params_word(cfg, top), "[7:0] weight layers, [15:8] acc_width, [23:16] ADC samples per clock, [31:24] logits"),
        ro("inputs", cfg.layers[0], "input size (8-bit activations per image)"),
        RegisterSpec::new("start", Access::ClearOnWrite, 32).describe(
            "write any value: queue an inference with the current control registers (latched when it starts); reads the number of starts queued",
        ),
        RegisterSpec::new("clear_stats", Access::ClearOnWrite, 1).describe(
            "write any value: clear runs, failures, latency_min/max, adc_dropped, cmd_dropped and the sticky status bits; reads 0",
        ),
        RegisterSpec::new("status", Access::ReadOnly, 16).describe(
            "[0] busy (running or start queued), [1] done, [2] failed, [3] locked, [4] adc_overflow, [5] cmd_overflow, [6] dac_stall, [15:8] layer",
        ),
    ];
    for (name, _, width) in START_FIELDS {
        let what = match name {
            "optical_loss" => "ADC loss compensation, Q8.8 (0x0100 = 1.0)",
            "preamble_length" => "preamble cycles per layer",
            "timeout" => {
                "cycles after a layer starts without a preamble lock before the inference fails"
            }
            "dac0_delay" => "whole-cycle delay of DAC 0 (activations), 0..=63",
            "dac0_shift" => "intra-cycle sample shift of DAC 0, 0..=15",
            "dac1_delay" => "whole-cycle delay of DAC 1 (weights), 0..=63",
            _ => "intra-cycle sample shift of DAC 1, 0..=15",
        };
        r.push(
            RegisterSpec::new(name, Access::ReadWrite, width)
                .with_reset(control_reset(name))
                .describe(&format!("{what}; takes effect at the next start")),
        );
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
    r.push(RegisterSpec::new("image_commit", Access::ClearOnWrite, 32).describe(
        "write any value: queue image_data0..3 as word image_addr (written while no inference runs); reads the number of words queued",
    ));
    for (name, what) in MEASUREMENTS {
        r.push(RegisterSpec::new(name, Access::ReadOnly, COUNTER_WIDTH).describe(what));
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
    let logits = cfg.layers.last().copied().unwrap_or(0);
    for i in 0..logits {
        r.push(
            RegisterSpec::new(&format!("logit{i}"), Access::ReadOnly, LOGIT_REGISTER_WIDTH)
                .describe(&format!(
                "logit {i} of the last inference, sign-extended (valid when done and not failed)"
            )),
        );
    }
    r
}
