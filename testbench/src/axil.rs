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
//! edges implements [`AxiLiteBus`] and calls [`AxiLiteMaster::write_on`] and
//! [`AxiLiteMaster::read_on`]. A response other than OKAY, or no response within
//! the bound, is an error.

use crate::dut::{Dut, DutError};

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

/// What an AXI-Lite master drives: a design's ports by name and the clock of
/// its AXI-Lite slave.
pub trait AxiLiteBus {
    /// Drives input `port`.
    fn set(&mut self, port: &str, value: u64) -> Result<(), DutError>;
    /// Reads `port` (settled, at most 64 bits).
    fn get(&mut self, port: &str) -> Result<u64, DutError>;
    /// Advances to the next rising edge of the AXI-Lite clock, doing on the way
    /// whatever else the bench does on other clocks' edges.
    fn axil_edge(&mut self) -> Result<(), DutError>;
}

/// A bare design as an [`AxiLiteBus`]: other clocks' edges pass untouched.
struct OnDut<'a> {
    dut: &'a mut dyn Dut,
    domain: usize,
}

impl AxiLiteBus for OnDut<'_> {
    fn set(&mut self, port: &str, value: u64) -> Result<(), DutError> {
        self.dut.set_u64(port, value)
    }
    fn get(&mut self, port: &str) -> Result<u64, DutError> {
        self.dut.get_u64(port)
    }
    fn axil_edge(&mut self) -> Result<(), DutError> {
        while !self.dut.step_edge().contains(&self.domain) {}
        Ok(())
    }
}

/// An AXI-Lite master bound to one slave interface of a design.
#[derive(Clone, Debug)]
pub struct AxiLiteMaster {
    prefix: String,
    lower_case: bool,
    domain: usize,
    bound: u64,
}

impl AxiLiteMaster {
    /// A master for the slave whose ports start with `prefix` (e.g. `"S_AXI_"`;
    /// the channel names may be upper or lower case), clocked by clock domain
    /// `domain` (a name from [`Dut::domains`]).
    pub fn new(dut: &dyn Dut, prefix: &str, domain: &str) -> Result<Self, DutError> {
        let domain = dut
            .domains()
            .iter()
            .position(|d| d == domain)
            .ok_or_else(|| DutError::UnknownDomain(domain.to_string()))?;
        let lower_case = dut.port(&format!("{prefix}AWADDR")).is_err()
            && dut.port(&format!("{prefix}awaddr")).is_ok();
        let master = AxiLiteMaster {
            prefix: prefix.to_string(),
            lower_case,
            domain,
            bound: 1_000,
        };
        for port in ["AWADDR", "WDATA", "BVALID", "ARADDR", "RDATA", "RVALID"] {
            dut.port(&master.name(port))?;
        }
        Ok(master)
    }

    /// The same master giving up after `cycles` AXI-Lite cycles per access.
    pub fn with_bound(mut self, cycles: u64) -> Self {
        self.bound = cycles;
        self
    }

    /// Writes `data` (all four byte lanes) to `addr`.
    pub fn write(&self, dut: &mut dyn Dut, addr: u32, data: u32) -> Result<(), AxiLiteError> {
        let mut bus = OnDut {
            dut,
            domain: self.domain,
        };
        self.write_on(&mut bus, addr, data)
    }

    /// Reads the 32-bit word at `addr`.
    pub fn read(&self, dut: &mut dyn Dut, addr: u32) -> Result<u32, AxiLiteError> {
        let mut bus = OnDut {
            dut,
            domain: self.domain,
        };
        self.read_on(&mut bus, addr)
    }

    /// [`AxiLiteMaster::write`] through a bench's [`AxiLiteBus`].
    pub fn write_on(
        &self,
        bus: &mut dyn AxiLiteBus,
        addr: u32,
        data: u32,
    ) -> Result<(), AxiLiteError> {
        self.set(bus, "AWADDR", u64::from(addr))?;
        self.set(bus, "AWVALID", 1)?;
        self.set(bus, "WDATA", u64::from(data))?;
        self.set(bus, "WSTRB", 0xF)?;
        self.set(bus, "WVALID", 1)?;
        self.set(bus, "BREADY", 1)?;
        let (mut aw, mut w) = (true, true);
        for _ in 0..self.bound {
            let aw_go = aw && self.get(bus, "AWREADY")? == 1;
            let w_go = w && self.get(bus, "WREADY")? == 1;
            let b_go = self.get(bus, "BVALID")? == 1;
            let resp = self.get(bus, "BRESP")?;
            bus.axil_edge()?;
            aw &= !aw_go;
            w &= !w_go;
            self.set(bus, "AWVALID", u64::from(aw))?;
            self.set(bus, "WVALID", u64::from(w))?;
            if b_go {
                self.set(bus, "BREADY", 0)?;
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

    /// [`AxiLiteMaster::read`] through a bench's [`AxiLiteBus`].
    pub fn read_on(&self, bus: &mut dyn AxiLiteBus, addr: u32) -> Result<u32, AxiLiteError> {
        self.set(bus, "ARADDR", u64::from(addr))?;
        self.set(bus, "ARVALID", 1)?;
        self.set(bus, "RREADY", 1)?;
        let mut ar = true;
        for _ in 0..self.bound {
            let ar_go = ar && self.get(bus, "ARREADY")? == 1;
            let r_go = self.get(bus, "RVALID")? == 1;
            let data = self.get(bus, "RDATA")?;
            let resp = self.get(bus, "RRESP")?;
            bus.axil_edge()?;
            ar &= !ar_go;
            self.set(bus, "ARVALID", u64::from(ar))?;
            if r_go {
                self.set(bus, "RREADY", 0)?;
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

    /// The full port name of AXI-Lite channel signal `port` (upper case given).
    fn name(&self, port: &str) -> String {
        if self.lower_case {
            format!("{}{}", self.prefix, port.to_ascii_lowercase())
        } else {
            format!("{}{port}", self.prefix)
        }
    }

    fn set(&self, bus: &mut dyn AxiLiteBus, port: &str, value: u64) -> Result<(), DutError> {
        bus.set(&self.name(port), value)
    }

    fn get(&self, bus: &mut dyn AxiLiteBus, port: &str) -> Result<u64, DutError> {
        bus.get(&self.name(port))
    }
}
