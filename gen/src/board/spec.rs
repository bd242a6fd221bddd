//! What a board description says: part, clocks by role, datapath width, port numbering,
//! tuser layout and data converters. Parsed with serde from `constraints/boards/*.json`.

use crate::GenError;
use serde::{Deserialize, Serialize};

/// Datapath clock (MHz) up to which a floating-point adder needs 5 register
/// stages; faster clocks need 7 (see [`fp_adder_stages`]).
pub const FP_ADDER_5_STAGES_MAX_MHZ: f64 = 250.0;

/// Register stages (`stages` of `hdl::blocks::fp::FpAddConfig`) an fp adder
/// needs at a datapath clock of `mhz`: 5 up to [`FP_ADDER_5_STAGES_MAX_MHZ`]
/// (4.0 ns: at most 7 LUT levels in fp32, with routing margin), else 7 (5 LUT
/// levels; 340 MHz is 2.94 ns). The README's "Recommended depth" gives the
/// Yosys LUT levels per depth this rule comes from.
pub fn fp_adder_stages(mhz: f64) -> u32 {
    if mhz <= FP_ADDER_5_STAGES_MAX_MHZ {
        5
    } else {
        7
    }
}

/// The kind of board, which decides what a design for it looks like.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// A NetFPGA board (SUME, PLUS): AXI-Stream packet datapath with one-hot ports.
    Netfpga,
    /// A Xilinx RFSoC board: DAC/ADC sample streams.
    Rfsoc,
}

impl Family {
    /// The family's name in prose (`NetFPGA`, `RFSoC`).
    pub fn title(self) -> &'static str {
        match self {
            Family::Netfpga => "NetFPGA",
            Family::Rfsoc => "RFSoC",
        }
    }
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
    /// Converter channels the board brings out, each its own AXI-Stream (tiles ×
    /// converters the board's connectors expose).
    pub channels: u32,
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

    /// The board's converter of `kind` (DAC or ADC streams), if it has one.
    pub fn converter(&self, kind: ConverterKind) -> Option<&Converter> {
        self.converters.iter().find(|c| c.kind == kind)
    }

    /// The clock of role `role`, if the board has one.
    pub fn clock(&self, role: &str) -> Option<&BoardClock> {
        self.clocks.iter().find(|c| c.role == role)
    }

    /// One-hot codes of the board's ports of `kind`, in file order (NetFPGA:
    /// the 8-bit codes tuser carries; checked to fit when the file is read).
    pub fn codes_of(&self, kind: PortKind) -> Vec<u8> {
        self.ports
            .iter()
            .filter(|p| p.kind == kind)
            .filter_map(|p| u8::try_from(p.one_hot).ok())
            .collect()
    }

    /// One-hot codes of the Ethernet ports, in file order (SUME: 0x01, 0x04, 0x10,
    /// 0x40; PLUS: 0x01, 0x04).
    pub fn ethernet_codes(&self) -> Vec<u8> {
        self.codes_of(PortKind::Ethernet)
    }

    /// One-hot codes of the host DMA queues, in file order (SUME: 0x02, 0x08,
    /// 0x20, 0x80; PLUS: 0x02, 0x08).
    pub fn dma_codes(&self) -> Vec<u8> {
        self.codes_of(PortKind::Dma)
    }

    /// Every port code, the Ethernet ports first, then the DMA queues: the order
    /// a design numbers its ports in.
    pub fn port_codes(&self) -> Vec<u8> {
        let mut codes = self.ethernet_codes();
        codes.extend(self.dma_codes());
        codes
    }

    /// Register stages per fp adder at this board's `datapath` clock
    /// ([`fp_adder_stages`]); `None` if the board has no datapath clock.
    pub fn fp_adder_stages(&self) -> Option<u32> {
        self.clock("datapath").map(|c| fp_adder_stages(c.mhz))
    }

    /// `Ok` if the board is of `family`; else an error naming `design`, the board
    /// and the boards of that family.
    pub fn require_family(&self, family: Family, design: &str) -> Result<(), GenError> {
        if self.family == family {
            return Ok(());
        }
        let boards = super::boards()?
            .into_iter()
            .filter(|b| b.family == family)
            .map(|b| b.name)
            .collect::<Vec<_>>()
            .join(", ");
        Err(GenError::WrongFamily {
            design: design.to_string(),
            family: family.title().to_string(),
            boards,
            board: self.name.clone(),
        })
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
            if !p.one_hot.is_power_of_two() || p.one_hot > 0x80 {
                return Some(format!(
                    "port `{}` code {:#x} is not one-hot (one bit of 8)",
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
            if c.channels == 0 {
                return Some(format!("a {:?} converter has 0 channels", c.kind));
            }
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
