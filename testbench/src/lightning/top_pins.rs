//! The streams of the Lightning top (`hdl::lightning::top`) that the bench
//! plays on every edge, resolved once into [`Pin`]s.

use crate::dut::{DutError, DutPort};
use crate::pins::{AxisDataPins, Pin};

/// `m_axis_answer_*`: the answer stream with its `tuser` and `tlast`.
#[derive(Clone, Copy, Debug)]
pub struct AnswerPins {
    /// `tdata`, `tvalid`, `tready`.
    pub stream: AxisDataPins,
    /// `m_axis_answer_tuser`.
    pub tuser: Pin,
    /// `m_axis_answer_tlast`.
    pub tlast: Pin,
}

/// The top's DAC, ADC and answer streams.
#[derive(Clone, Debug)]
pub struct TopPins {
    /// `m_axis_dac{j}_*`, two per core.
    pub dacs: Vec<AxisDataPins>,
    /// `s_axis_adc{c}_*`, one per core.
    pub adcs: Vec<AxisDataPins>,
    /// `m_axis_answer_*`.
    pub answer: AnswerPins,
}

impl TopPins {
    /// The streams of a top with `cores` cores among `ports`; an error names the
    /// first port missing.
    pub fn resolve(ports: &[DutPort], cores: usize) -> Result<Self, DutError> {
        let stream = |prefix: String| AxisDataPins::resolve(ports, &prefix);
        Ok(TopPins {
            dacs: (0..2 * cores)
                .map(|j| stream(format!("m_axis_dac{j}_")))
                .collect::<Result<_, _>>()?,
            adcs: (0..cores)
                .map(|c| stream(format!("s_axis_adc{c}_")))
                .collect::<Result<_, _>>()?,
            answer: AnswerPins {
                stream: stream("m_axis_answer_".into())?,
                tuser: Pin::resolve(ports, "m_axis_answer_tuser")?,
                tlast: Pin::resolve(ports, "m_axis_answer_tlast")?,
            },
        })
    }

    /// Core *c*'s weight streams `s_axis_weights{c}_*` (a top with streamed
    /// weights), `cores` of them.
    pub fn weights(ports: &[DutPort], cores: usize) -> Result<Vec<AxisDataPins>, DutError> {
        (0..cores)
            .map(|c| AxisDataPins::resolve(ports, &format!("s_axis_weights{c}_")))
            .collect()
    }
}
