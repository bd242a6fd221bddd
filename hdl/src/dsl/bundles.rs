//! Bundles of ports that travel together: AXI-Stream and AXI-Lite interfaces.

use super::builder::{ModuleBuilder, Signal};
use crate::ir::{Direction, PortKind};

/// Shape of an AXI-Stream interface.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AxisConfig {
    /// `tdata` width in bits (a multiple of 8 when `tkeep` is present).
    pub data_width: u32,
    /// `tuser` width in bits; 0 for no `tuser`.
    pub user_width: u32,
    /// Whether the interface has `tkeep` (one bit per byte) and `tlast`.
    pub packets: bool,
}

impl AxisConfig {
    /// A packet stream: `tdata`, `tkeep`, `tuser` (if `user_width > 0`), `tlast`.
    pub fn packets(data_width: u32, user_width: u32) -> Self {
        AxisConfig {
            data_width,
            user_width,
            packets: true,
        }
    }

    /// A plain stream of words: `tdata`, `tvalid`, `tready` only.
    pub fn words(data_width: u32) -> Self {
        AxisConfig {
            data_width,
            user_width: 0,
            packets: false,
        }
    }
}

/// The payload of one AXI-Stream beat (everything but the handshake).
#[derive(Clone, Copy, Debug)]
pub struct AxisBeat {
    /// Data.
    pub tdata: Signal,
    /// Byte enables, if the stream carries packets.
    pub tkeep: Option<Signal>,
    /// Sideband, if any.
    pub tuser: Option<Signal>,
    /// End of packet, if the stream carries packets.
    pub tlast: Option<Signal>,
}

impl AxisBeat {
    /// The beat's fields as one vector, `tdata` in the low bits (for FIFOs and registers).
    pub fn pack(&self, m: &mut ModuleBuilder) -> Signal {
        let parts: Vec<Signal> = [self.tlast, self.tuser, self.tkeep, Some(self.tdata)]
            .into_iter()
            .flatten()
            .collect();
        m.concat(&parts)
    }

    /// Splits a vector made by [`pack`](Self::pack) with the same configuration.
    pub fn unpack(m: &mut ModuleBuilder, cfg: &AxisConfig, packed: Signal) -> AxisBeat {
        let mut lo = 0;
        let mut take = |m: &mut ModuleBuilder, w: u32| {
            let s = m.slice(packed, lo, w);
            lo += w;
            s
        };
        let tdata = take(m, cfg.data_width);
        let tkeep = cfg.packets.then(|| take(m, cfg.data_width / 8));
        let tuser = (cfg.user_width > 0).then(|| take(m, cfg.user_width));
        let tlast = cfg.packets.then(|| take(m, 1));
        AxisBeat {
            tdata,
            tkeep,
            tuser,
            tlast,
        }
    }

    /// Width of the packed vector for `cfg`.
    pub fn packed_width(cfg: &AxisConfig) -> u32 {
        cfg.data_width
            + cfg.user_width
            + if cfg.packets {
                cfg.data_width / 8 + 1
            } else {
                0
            }
    }
}

/// An AXI-Stream input of the module: the beat and `tvalid` are inputs, `tready` is an
/// output to drive with [`ModuleBuilder::assign`].
#[derive(Clone, Copy, Debug)]
pub struct AxisIn {
    /// The incoming beat.
    pub beat: AxisBeat,
    /// Input: the beat is valid.
    pub tvalid: Signal,
    /// Output (assign it): the module accepts the beat.
    pub tready: Signal,
}

/// An AXI-Stream output of the module: the beat and `tvalid` are outputs to drive,
/// `tready` is an input.
#[derive(Clone, Copy, Debug)]
pub struct AxisOut {
    /// Outputs (assign them): the outgoing beat.
    pub beat: AxisBeat,
    /// Output (assign it): the beat is valid.
    pub tvalid: Signal,
    /// Input: downstream accepts the beat.
    pub tready: Signal,
}

/// Shape and naming of an AXI-Lite slave interface (32-bit data).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AxiLiteConfig {
    /// Port name prefix, e.g. `S_AXI` (NetFPGA) or `s_axil`.
    pub prefix: String,
    /// Address width in bits (12 for a 4 KiB window).
    pub addr_width: u32,
    /// Upper-case signal names (`S_AXI_AWADDR`), as Xilinx/NetFPGA modules use.
    pub uppercase: bool,
}

/// The ports of an AXI-Lite slave: inputs as signals, outputs as wires to assign.
#[derive(Clone, Copy, Debug)]
#[allow(missing_docs)]
pub struct AxiLiteSlave {
    pub awaddr: Signal,
    pub awvalid: Signal,
    pub awready: Signal,
    pub wdata: Signal,
    pub wstrb: Signal,
    pub wvalid: Signal,
    pub wready: Signal,
    pub bresp: Signal,
    pub bvalid: Signal,
    pub bready: Signal,
    pub araddr: Signal,
    pub arvalid: Signal,
    pub arready: Signal,
    pub rdata: Signal,
    pub rresp: Signal,
    pub rvalid: Signal,
    pub rready: Signal,
}

impl ModuleBuilder {
    /// Declares an AXI-Stream input called `{prefix}_tdata`, `{prefix}_tvalid`, ….
    #[track_caller]
    pub fn axis_in(&mut self, prefix: &str, cfg: &AxisConfig) -> AxisIn {
        let tdata = self.input(&format!("{prefix}_tdata"), cfg.data_width);
        let tkeep = cfg
            .packets
            .then(|| self.input(&format!("{prefix}_tkeep"), (cfg.data_width / 8).max(1)));
        let tuser =
            (cfg.user_width > 0).then(|| self.input(&format!("{prefix}_tuser"), cfg.user_width));
        let tvalid = self.input(&format!("{prefix}_tvalid"), 1);
        let tready = self.output_wire(&format!("{prefix}_tready"), 1);
        let tlast = cfg
            .packets
            .then(|| self.input(&format!("{prefix}_tlast"), 1));
        AxisIn {
            beat: AxisBeat {
                tdata,
                tkeep,
                tuser,
                tlast,
            },
            tvalid,
            tready,
        }
    }

    /// Declares an AXI-Stream output called `{prefix}_tdata`, `{prefix}_tvalid`, ….
    #[track_caller]
    pub fn axis_out(&mut self, prefix: &str, cfg: &AxisConfig) -> AxisOut {
        let tdata = self.output_wire(&format!("{prefix}_tdata"), cfg.data_width);
        let tkeep = cfg
            .packets
            .then(|| self.output_wire(&format!("{prefix}_tkeep"), (cfg.data_width / 8).max(1)));
        let tuser = (cfg.user_width > 0)
            .then(|| self.output_wire(&format!("{prefix}_tuser"), cfg.user_width));
        let tvalid = self.output_wire(&format!("{prefix}_tvalid"), 1);
        let tready = self.input(&format!("{prefix}_tready"), 1);
        let tlast = cfg
            .packets
            .then(|| self.output_wire(&format!("{prefix}_tlast"), 1));
        AxisOut {
            beat: AxisBeat {
                tdata,
                tkeep,
                tuser,
                tlast,
            },
            tvalid,
            tready,
        }
    }

    /// Drives an AXI-Stream output's beat fields from `beat` (same configuration).
    #[track_caller]
    pub fn drive_beat(&mut self, out: &AxisBeat, beat: &AxisBeat) {
        self.assign(out.tdata, beat.tdata);
        for (o, b) in [
            (out.tkeep, beat.tkeep),
            (out.tuser, beat.tuser),
            (out.tlast, beat.tlast),
        ] {
            if let (Some(o), Some(b)) = (o, b) {
                self.assign(o, b);
            }
        }
    }

    /// Declares an AXI-Lite slave interface (32-bit data, no `*prot`).
    #[track_caller]
    pub fn axilite_slave(&mut self, cfg: &AxiLiteConfig) -> AxiLiteSlave {
        let name = |s: &str| {
            let n = format!("{}_{s}", cfg.prefix);
            if cfg.uppercase {
                n.to_uppercase()
            } else {
                n
            }
        };
        let port = |m: &mut Self, s: &str, w: u32, dir: Direction| {
            m.port(&name(s), w, dir, PortKind::Data)
        };
        use Direction::{Input as I, Output as O};
        let aw = cfg.addr_width;
        AxiLiteSlave {
            awaddr: port(self, "awaddr", aw, I),
            awvalid: port(self, "awvalid", 1, I),
            awready: port(self, "awready", 1, O),
            wdata: port(self, "wdata", 32, I),
            wstrb: port(self, "wstrb", 4, I),
            wvalid: port(self, "wvalid", 1, I),
            wready: port(self, "wready", 1, O),
            bresp: port(self, "bresp", 2, O),
            bvalid: port(self, "bvalid", 1, O),
            bready: port(self, "bready", 1, I),
            araddr: port(self, "araddr", aw, I),
            arvalid: port(self, "arvalid", 1, I),
            arready: port(self, "arready", 1, O),
            rdata: port(self, "rdata", 32, O),
            rresp: port(self, "rresp", 2, O),
            rvalid: port(self, "rvalid", 1, O),
            rready: port(self, "rready", 1, I),
        }
    }
}
