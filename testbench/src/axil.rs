//! An AXI4-Lite master for test benches: single writes and reads through a
//! design's AXI-Lite slave (`<prefix>AWADDR`, `AWVALID`, `AWREADY`, `WDATA`,
//! `WSTRB`, `WVALID`, `WREADY`, `BRESP`, `BVALID`, `BREADY`, `ARADDR`, `ARVALID`,
//! `ARREADY`, `RDATA`, `RRESP`, `RVALID`, `RREADY`, upper or lower case), on
//! either engine.
//!
//! Each call drives the channels, advances the design edge by edge and returns
//! when the response has been taken on a rising edge of the AXI-Lite clock.
//! Handshakes follow the AXI rule: a transfer happens at a rising edge where
//! `VALID` and `READY` were both 1 just before it. On a bare [`Dut`] other
//! domains' edges are processed on the way with their inputs left as they were
//! (drive them idle before a call); a bench that models peripherals on those
//! edges calls [`AxiLiteMaster::write_on`] and [`AxiLiteMaster::read_on`] with
//! its own [`Pins`] and its own step to the next AXI-Lite edge. The channel
//! ports are resolved once, when the master is made ([`AxiLitePins`]). A
//! response other than OKAY, or no response within the bound, is an error.

use crate::dut::{Dut, DutError, DutPort};
use crate::pins::{Pin, Pins};

/// Why an AXI-Lite access failed.
#[derive(Debug, thiserror::Error)]
pub enum AxiLiteError {
    /// A port or the clock domain is missing, or a value does not fit.
    #[error(transparent)]
    Dut(#[from] DutError),
    /// The slave answered SLVERR or DECERR.
    #[error("{op} of {addr:#06x}: response {resp:#04b} (not OKAY)")]
    Response {
        /// `"write"` or `"read"`.
        op: &'static str,
        /// The address.
        addr: u32,
        /// `BRESP` or `RRESP`.
        resp: u64,
    },
    /// No response within the bound.
    #[error("{op} of {addr:#06x}: no response within {cycles} AXI-Lite cycles")]
    Timeout {
        /// `"write"` or `"read"`.
        op: &'static str,
        /// The address.
        addr: u32,
        /// The bound.
        cycles: u64,
    },
}

/// The channel ports of an AXI-Lite slave, resolved once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AxiLitePins {
    /// `AWADDR`, `AWVALID`, `AWREADY`.
    pub aw: [Pin; 3],
    /// `WDATA`, `WSTRB`, `WVALID`, `WREADY`.
    pub w: [Pin; 4],
    /// `BRESP`, `BVALID`, `BREADY`.
    pub b: [Pin; 3],
    /// `ARADDR`, `ARVALID`, `ARREADY`.
    pub ar: [Pin; 3],
    /// `RDATA`, `RRESP`, `RVALID`, `RREADY`.
    pub r: [Pin; 4],
}

impl AxiLitePins {
    /// The slave whose ports start with `prefix` (the channel names upper or
    /// lower case) among `ports`; an error names the first port missing.
    pub fn resolve(ports: &[DutPort], prefix: &str) -> Result<Self, DutError> {
        let lower = Pin::resolve(ports, &format!("{prefix}AWADDR")).is_err()
            && Pin::resolve(ports, &format!("{prefix}awaddr")).is_ok();
        let pin = |signal: &str| {
            let signal = if lower {
                signal.to_ascii_lowercase()
            } else {
                signal.to_string()
            };
            Pin::resolve(ports, &format!("{prefix}{signal}"))
        };
        Ok(AxiLitePins {
            aw: [pin("AWADDR")?, pin("AWVALID")?, pin("AWREADY")?],
            w: [pin("WDATA")?, pin("WSTRB")?, pin("WVALID")?, pin("WREADY")?],
            b: [pin("BRESP")?, pin("BVALID")?, pin("BREADY")?],
            ar: [pin("ARADDR")?, pin("ARVALID")?, pin("ARREADY")?],
            r: [pin("RDATA")?, pin("RRESP")?, pin("RVALID")?, pin("RREADY")?],
        })
    }
}

/// Steps `dut` to the next rising edge of clock domain `domain`.
fn edge_of(dut: &mut dyn Dut, domain: usize) {
    while !dut.step_edge().contains(domain) {}
}

/// An AXI-Lite master bound to one slave interface of a design.
#[derive(Clone, Debug)]
pub struct AxiLiteMaster {
    pins: AxiLitePins,
    domain: usize,
    bound: u64,
}

impl AxiLiteMaster {
    /// A master for the slave whose ports start with `prefix` (e.g. `"S_AXI_"`;
    /// the channel names may be upper or lower case), clocked by clock domain
    /// `domain` (a name from [`Dut::domains`]). A missing port or domain is an
    /// error naming it.
    pub fn new(dut: &dyn Dut, prefix: &str, domain: &str) -> Result<Self, DutError> {
        let domain = dut
            .domains()
            .iter()
            .position(|d| d == domain)
            .ok_or_else(|| DutError::UnknownDomain(domain.to_string()))?;
        Ok(AxiLiteMaster {
            pins: AxiLitePins::resolve(dut.ports(), prefix)?,
            domain,
            bound: 1_000,
        })
    }

    /// The same master giving up after `cycles` AXI-Lite cycles per access.
    pub fn with_bound(mut self, cycles: u64) -> Self {
        self.bound = cycles;
        self
    }

    /// The slave's channel ports.
    pub fn pins(&self) -> &AxiLitePins {
        &self.pins
    }

    /// Writes `data` (all four byte lanes) to `addr`.
    pub fn write(&self, mut dut: &mut dyn Dut, addr: u32, data: u32) -> Result<(), AxiLiteError> {
        let domain = self.domain;
        self.write_on(
            &mut dut,
            &mut |d| {
                edge_of(&mut **d, domain);
                Ok(())
            },
            addr,
            data,
        )
    }

    /// Reads the 32-bit word at `addr`.
    pub fn read(&self, mut dut: &mut dyn Dut, addr: u32) -> Result<u32, AxiLiteError> {
        let domain = self.domain;
        self.read_on(
            &mut dut,
            &mut |d| {
                edge_of(&mut **d, domain);
                Ok(())
            },
            addr,
        )
    }

    /// [`AxiLiteMaster::write`] through a bench's `bus`, which `edge` advances to
    /// the next rising edge of the AXI-Lite clock (doing on the way whatever the
    /// bench does on other clocks' edges).
    pub fn write_on<B: Pins + ?Sized>(
        &self,
        bus: &mut B,
        edge: &mut dyn FnMut(&mut B) -> Result<(), DutError>,
        addr: u32,
        data: u32,
    ) -> Result<(), AxiLiteError> {
        let AxiLitePins {
            aw: [awaddr, awvalid, awready],
            w: [wdata, wstrb, wvalid, wready],
            b: [bresp, bvalid, bready],
            ..
        } = self.pins;
        bus.set_u64(awaddr, u64::from(addr))?;
        bus.set_u64(awvalid, 1)?;
        bus.set_u64(wdata, u64::from(data))?;
        bus.set_u64(wstrb, 0xF)?;
        bus.set_u64(wvalid, 1)?;
        bus.set_u64(bready, 1)?;
        let (mut aw, mut w) = (true, true);
        for _ in 0..self.bound {
            let aw_go = aw && bus.is_high(awready)?;
            let w_go = w && bus.is_high(wready)?;
            let b_go = bus.is_high(bvalid)?;
            let resp = bus.get_u64(bresp)?;
            edge(bus)?;
            aw &= !aw_go;
            w &= !w_go;
            bus.set_u64(awvalid, u64::from(aw))?;
            bus.set_u64(wvalid, u64::from(w))?;
            if b_go {
                bus.set_u64(bready, 0)?;
                return match resp {
                    0 => Ok(()),
                    resp => Err(AxiLiteError::Response {
                        op: "write",
                        addr,
                        resp,
                    }),
                };
            }
        }
        Err(AxiLiteError::Timeout {
            op: "write",
            addr,
            cycles: self.bound,
        })
    }

    /// [`AxiLiteMaster::read`] through a bench's `bus` and its `edge` (as in
    /// [`AxiLiteMaster::write_on`]).
    pub fn read_on<B: Pins + ?Sized>(
        &self,
        bus: &mut B,
        edge: &mut dyn FnMut(&mut B) -> Result<(), DutError>,
        addr: u32,
    ) -> Result<u32, AxiLiteError> {
        let AxiLitePins {
            ar: [araddr, arvalid, arready],
            r: [rdata, rresp, rvalid, rready],
            ..
        } = self.pins;
        bus.set_u64(araddr, u64::from(addr))?;
        bus.set_u64(arvalid, 1)?;
        bus.set_u64(rready, 1)?;
        let mut ar = true;
        for _ in 0..self.bound {
            let ar_go = ar && bus.is_high(arready)?;
            let r_go = bus.is_high(rvalid)?;
            let data = bus.get_u64(rdata)?;
            let resp = bus.get_u64(rresp)?;
            edge(bus)?;
            ar &= !ar_go;
            bus.set_u64(arvalid, u64::from(ar))?;
            if r_go {
                bus.set_u64(rready, 0)?;
                return match resp {
                    0 => Ok(data as u32),
                    resp => Err(AxiLiteError::Response {
                        op: "read",
                        addr,
                        resp,
                    }),
                };
            }
        }
        Err(AxiLiteError::Timeout {
            op: "read",
            addr,
            cycles: self.bound,
        })
    }
}
