//! The ports of a generated `lightning_datapath` that the closed loop drives
//! and reads, resolved once per run into [`Pin`]s.

use super::closed_loop::PortShape;
use crate::dut::{DutError, DutPort};
use crate::pins::Pin;

/// DAC *j*'s alignment inputs and its output stream.
#[derive(Clone, Debug)]
pub struct DacPins {
    /// `dac{j}_delay`.
    pub delay: Pin,
    /// `dac{j}_shift`.
    pub shift: Pin,
    /// `dac{j}_tdata`.
    pub tdata: Pin,
    /// `dac{j}_tvalid`.
    pub tvalid: Pin,
}

/// Core *c*'s inputs: loss compensation, its ADC stream and, with streamed
/// weights, its weight stream.
#[derive(Clone, Debug)]
pub struct CorePins {
    /// `optical_loss{c}`.
    pub optical_loss: Pin,
    /// `adc{c}_tdata`.
    pub adc_tdata: Pin,
    /// `adc{c}_tvalid`.
    pub adc_tvalid: Pin,
    /// `w{c}_tvalid`, `w{c}_tdata`, `w{c}_tready` (streamed weights only).
    pub weights: Option<[Pin; 3]>,
}

/// The image load and run controls.
#[derive(Clone, Debug)]
pub struct ControlPins {
    /// `preamble_length`.
    pub preamble_length: Pin,
    /// `timeout`.
    pub timeout: Pin,
    /// `start`.
    pub start: Pin,
    /// `load_valid`.
    pub load_valid: Pin,
    /// `load_addr`.
    pub load_addr: Pin,
    /// `load_data`.
    pub load_data: Pin,
}

/// What the loop observes: progress, logits and the counters read at `done`.
#[derive(Clone, Debug)]
pub struct StatusPins {
    /// `layer`.
    pub layer: Pin,
    /// `fire`.
    pub fire: Pin,
    /// `locked`.
    pub locked: Pin,
    /// `logit_valid`.
    pub logit_valid: Pin,
    /// `logit_data`.
    pub logit_data: Pin,
    /// `logit_index`.
    pub logit_index: Pin,
    /// `done`.
    pub done: Pin,
    /// `failed`.
    pub failed: Pin,
    /// `fail_reason`.
    pub fail_reason: Pin,
    /// `cycles`, `dac_start_cycle`, `window_open_cycle`, `busy_dac_cycles`,
    /// `busy_photonic_cycles`, `busy_decode_cycles`, `compute_cycles`.
    pub counters: [Pin; 7],
}

/// Every port the closed loop touches.
#[derive(Clone, Debug)]
pub struct LoopPins {
    /// Per DAC *j* (two per core).
    pub dacs: Vec<DacPins>,
    /// Per core.
    pub cores: Vec<CorePins>,
    /// Load and run controls.
    pub control: ControlPins,
    /// Observed outputs.
    pub status: StatusPins,
}

impl LoopPins {
    /// The ports of a datapath of `shape` among `ports`; an error names the
    /// first one missing.
    pub fn resolve(ports: &[DutPort], shape: &PortShape) -> Result<Self, DutError> {
        let pin = |name: &str| Pin::resolve(ports, name);
        let dacs = (0..2 * shape.cores)
            .map(|j| {
                Ok(DacPins {
                    delay: pin(&format!("dac{j}_delay"))?,
                    shift: pin(&format!("dac{j}_shift"))?,
                    tdata: pin(&format!("dac{j}_tdata"))?,
                    tvalid: pin(&format!("dac{j}_tvalid"))?,
                })
            })
            .collect::<Result<_, DutError>>()?;
        let streamed = shape.weight_stream.is_some();
        let cores = (0..shape.cores)
            .map(|c| {
                let weights = if streamed {
                    Some([
                        pin(&format!("w{c}_tvalid"))?,
                        pin(&format!("w{c}_tdata"))?,
                        pin(&format!("w{c}_tready"))?,
                    ])
                } else {
                    None
                };
                Ok(CorePins {
                    optical_loss: pin(&format!("optical_loss{c}"))?,
                    adc_tdata: pin(&format!("adc{c}_tdata"))?,
                    adc_tvalid: pin(&format!("adc{c}_tvalid"))?,
                    weights,
                })
            })
            .collect::<Result<_, DutError>>()?;
        Ok(LoopPins {
            dacs,
            cores,
            control: ControlPins {
                preamble_length: pin("preamble_length")?,
                timeout: pin("timeout")?,
                start: pin("start")?,
                load_valid: pin("load_valid")?,
                load_addr: pin("load_addr")?,
                load_data: pin("load_data")?,
            },
            status: StatusPins::resolve(ports)?,
        })
    }
}

impl StatusPins {
    fn resolve(ports: &[DutPort]) -> Result<Self, DutError> {
        let pin = |name: &str| Pin::resolve(ports, name);
        Ok(StatusPins {
            layer: pin("layer")?,
            fire: pin("fire")?,
            locked: pin("locked")?,
            logit_valid: pin("logit_valid")?,
            logit_data: pin("logit_data")?,
            logit_index: pin("logit_index")?,
            done: pin("done")?,
            failed: pin("failed")?,
            fail_reason: pin("fail_reason")?,
            counters: [
                pin("cycles")?,
                pin("dac_start_cycle")?,
                pin("window_open_cycle")?,
                pin("busy_dac_cycles")?,
                pin("busy_photonic_cycles")?,
                pin("busy_decode_cycles")?,
                pin("compute_cycles")?,
            ],
        })
    }
}
