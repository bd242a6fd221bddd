//! An AXI-Stream interface's ports as one bundle of [`Pin`]s.

use super::Pin;
use crate::dut::{DutError, DutPort};

/// The ports of an AXI-Stream interface with `tuser` (`<prefix>tdata`,
/// `tkeep`, `tuser`, `tvalid`, `tlast`, `tready`), resolved once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AxisPins {
    /// `<prefix>tdata`.
    pub tdata: Pin,
    /// `<prefix>tkeep`.
    pub tkeep: Pin,
    /// `<prefix>tuser`.
    pub tuser: Pin,
    /// `<prefix>tvalid`.
    pub tvalid: Pin,
    /// `<prefix>tlast`.
    pub tlast: Pin,
    /// `<prefix>tready`.
    pub tready: Pin,
}

impl AxisPins {
    /// The interface whose ports start with `prefix` (e.g. `"s_axis_"`); an
    /// error names the first port missing.
    pub fn resolve(ports: &[DutPort], prefix: &str) -> Result<Self, DutError> {
        let pin = |signal: &str| Pin::resolve(ports, &format!("{prefix}{signal}"));
        Ok(AxisPins {
            tdata: pin("tdata")?,
            tkeep: pin("tkeep")?,
            tuser: pin("tuser")?,
            tvalid: pin("tvalid")?,
            tlast: pin("tlast")?,
            tready: pin("tready")?,
        })
    }
}

/// The three ports every AXI-Stream interface has (`<prefix>tdata`, `tvalid`,
/// `tready`), resolved once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AxisDataPins {
    /// `<prefix>tdata`.
    pub tdata: Pin,
    /// `<prefix>tvalid`.
    pub tvalid: Pin,
    /// `<prefix>tready`.
    pub tready: Pin,
}

impl AxisDataPins {
    /// The interface whose ports start with `prefix`; an error names the first
    /// port missing.
    pub fn resolve(ports: &[DutPort], prefix: &str) -> Result<Self, DutError> {
        let pin = |signal: &str| Pin::resolve(ports, &format!("{prefix}{signal}"));
        Ok(AxisDataPins {
            tdata: pin("tdata")?,
            tvalid: pin("tvalid")?,
            tready: pin("tready")?,
        })
    }
}
