//! What a board description says: part, clocks by role, datapath width, port numbering,
//! tuser layout and data converters. Parsed with serde from `constraints/boards/*.json`.

use serde::{Deserialize, Serialize};

/// The kind of board, which decides what a design for it looks like.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// A NetFPGA board (SUME, PLUS): AXI-Stream packet datapath with one-hot ports.
    Netfpga,
    /// A Xilinx RFSoC board: DAC/ADC sample streams.
    Rfsoc,
}

/// One clock of a board, named by the role it plays for a design.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoardClock {
    /// Role (`datapath`, `axil`, `dac`, `adc`).
    pub role: String,
    /// Frequency in MHz.
    pub mhz: f64,
    /// Where the clock comes from on the board.
    pub source: String,
}

impl BoardClock {
    /// The clock period in nanoseconds.
    pub fn period_ns(&self) -> f64 {
        1000.0 / self.mhz
    }
}

/// What a NetFPGA port number stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PortKind {
    /// An Ethernet interface.
    Ethernet,
    /// A host DMA queue.
    Dma,
}

/// One port of a NetFPGA board's one-hot port numbering (as carried in tuser).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoardPort {
    /// Name (`nf0`, `cmac0`, `dma0`, …).
    pub name: String,
    /// Ethernet interface or DMA queue.
    pub kind: PortKind,
    /// The port's one-hot code.
    pub one_hot: u32,
}

/// One field of the AXI-Stream tuser sideband.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TuserField {
    /// Field name (`length`, `src_port`, `dst_port`).
    pub name: String,
    /// Lowest bit.
    pub lsb: u32,
    /// Width in bits.
    pub width: u32,
}

/// The layout of a NetFPGA board's tuser sideband.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TuserLayout {
    /// Total width in bits.
    pub width: u32,
    /// The defined fields (the other bits are reserved).
    pub fields: Vec<TuserField>,
}

/// Whether a data converter turns samples into an analog signal or back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConverterKind {
    /// Digital-to-analog converter.
    Dac,
    /// Analog-to-digital converter.
    Adc,
}

/// The AXI-Stream side of an RFSoC board's data converter.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Converter {
    /// DAC or ADC.
    pub kind: ConverterKind,
    /// Role of the fabric clock the stream runs on.
    pub clock: String,
    /// Samples per fabric clock cycle.
    pub samples_per_clock: u32,
    /// Bits per sample on the stream.
    pub sample_width: u32,
}

impl Converter {
    /// Width of the converter's AXI-Stream tdata in bits.
    pub fn stream_width(&self) -> u32 {
        self.samples_per_clock * self.sample_width
    }
}

/// True if `name` is a plain identifier (letters, digits, `_`, not starting with a
/// digit): safe to write unquoted in XDC and TCL.
pub(crate) fn is_plain_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A board description (one file in `constraints/boards/`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Board {
    /// Short name, as given to [`Board::named`] (`netfpga-sume`, `zcu111`, …).
    pub name: String,
    /// Human-readable name.
    pub title: String,
    /// NetFPGA or RFSoC.
    pub family: Family,
    /// Xilinx part number, as Vivado's `-part` takes it.
    pub part: String,
    /// Datapath width in bits (packet bus on NetFPGA, DAC sample stream on RFSoC).
    pub data_width: u32,
    /// Clocks by role.
    pub clocks: Vec<BoardClock>,
    /// One-hot port numbering (NetFPGA boards; empty otherwise).
    #[serde(default)]
    pub ports: Vec<BoardPort>,
    /// tuser sideband layout (NetFPGA boards).
    #[serde(default)]
    pub tuser: Option<TuserLayout>,
    /// Data converters' AXI-Stream sides (RFSoC boards; empty otherwise).
    #[serde(default)]
    pub converters: Vec<Converter>,
    /// Remarks for the user.
    #[serde(default)]
    pub notes: Vec<String>,
}

impl Board {
    /// Yosys' `synth_xilinx -family` for the board's part: `xc7` for 7-series
    /// parts (`xc7…`), `xcup` for the UltraScale+ parts of every other board here.
    pub fn yosys_family(&self) -> &'static str {
        if self.part.starts_with("xc7") {
            "xc7"
        } else {
            "xcup"
        }
    }

    /// The clock with role `role`, if the board has one.
    pub fn clock(&self, role: &str) -> Option<&BoardClock> {
        self.clocks.iter().find(|c| c.role == role)
    }

    /// The board's clock roles, in file order.
    pub fn roles(&self) -> Vec<&str> {
        self.clocks.iter().map(|c| c.role.as_str()).collect()
    }

    /// Why the description is inconsistent, if it is: repeated or invalid clock roles,
    /// non-positive frequencies, ports that are not one-hot or repeat, tuser fields
    /// outside tuser, converters on clocks the board lacks.
    pub(crate) fn inconsistency(&self) -> Option<String> {
        for (i, c) in self.clocks.iter().enumerate() {
            if !is_plain_identifier(&c.role) {
                return Some(format!("clock role `{}` is not a plain identifier", c.role));
            }
            if self.clocks[..i].iter().any(|o| o.role == c.role) {
                return Some(format!("clock role `{}` appears twice", c.role));
            }
            if !(c.mhz.is_finite() && c.mhz > 0.0) {
                return Some(format!("clock `{}` has frequency {} MHz", c.role, c.mhz));
            }
        }
        if self.data_width == 0 {
            return Some("data_width is 0".into());
        }
        for (i, p) in self.ports.iter().enumerate() {
            if !p.one_hot.is_power_of_two() {
                return Some(format!(
                    "port `{}` code {:#x} is not one-hot",
                    p.name, p.one_hot
                ));
            }
            if self.ports[..i]
                .iter()
                .any(|o| o.one_hot == p.one_hot || o.name == p.name)
            {
                return Some(format!(
                    "port `{}` (code {:#x}) repeats another",
                    p.name, p.one_hot
                ));
            }
        }
        if let Some(t) = &self.tuser {
            for f in &t.fields {
                if f.width == 0 || u64::from(f.lsb) + u64::from(f.width) > u64::from(t.width) {
                    return Some(format!(
                        "tuser field `{}` [{}+:{}] does not fit {} bits",
                        f.name, f.lsb, f.width, t.width
                    ));
                }
            }
        }
        for c in &self.converters {
            if self.clock(&c.clock).is_none() {
                return Some(format!(
                    "a {:?} converter runs on clock `{}`, which the board lacks",
                    c.kind, c.clock
                ));
            }
        }
        None
    }
}
