//! An AXI4-Lite master for test benches: single writes and reads through a
//! design's AXI-Lite slave (`<prefix>AWADDR`, `AWVALID`, `AWREADY`, `WDATA`,
//! `WSTRB`, `WVALID`, `WREADY`, `BRESP`, `BVALID`, `BREADY`, `ARADDR`, `ARVALID`,
//! `ARREADY`, `RDATA`, `RRESP`, `RVALID`, `RREADY`), on either engine.
//!
//! Each call drives the channels, advances the design edge by edge and returns
//! when the response has been taken on a rising edge of the AXI-Lite clock.
//! Handshakes follow the AXI rule: a transfer happens at a rising edge where
//! `VALID` and `READY` were both 1 just before it. Other domains' edges are
//! processed on the way, with their inputs left as they were (drive them idle
//! before a call). A response other than OKAY, or no response within the bound,
//! is an error.

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

/// An AXI-Lite master bound to one slave interface of a design.
#[derive(Clone, Debug)]
pub struct AxiLiteMaster {
    prefix: String,
    domain: usize,
    bound: u64,
}

impl AxiLiteMaster {
    /// A master for the slave whose ports start with `prefix` (e.g. `"S_AXI_"`),
    /// clocked by clock domain `domain` (a name from [`Dut::domains`]).
    pub fn new(dut: &dyn Dut, prefix: &str, domain: &str) -> Result<Self, DutError> {
        let domain = dut
            .domains()
            .iter()
            .position(|d| d == domain)
            .ok_or_else(|| DutError::UnknownDomain(domain.to_string()))?;
        for port in ["AWADDR", "WDATA", "BVALID", "ARADDR", "RDATA", "RVALID"] {
            dut.port(&format!("{prefix}{port}"))?;
        }
        Ok(AxiLiteMaster {
            prefix: prefix.to_string(),
            domain,
            bound: 1_000,
        })
    }

    /// The same master giving up after `cycles` AXI-Lite cycles per access.
    pub fn with_bound(mut self, cycles: u64) -> Self {
        self.bound = cycles;
        self
    }

    /// Writes `data` (all four byte lanes) to `addr`.
    pub fn write(&self, dut: &mut dyn Dut, addr: u32, data: u32) -> Result<(), AxiLiteError> {
        self.set(dut, "AWADDR", u64::from(addr))?;
        self.set(dut, "AWVALID", 1)?;
        self.set(dut, "WDATA", u64::from(data))?;
        self.set(dut, "WSTRB", 0xF)?;
        self.set(dut, "WVALID", 1)?;
        self.set(dut, "BREADY", 1)?;
        let (mut aw, mut w) = (true, true);
        for _ in 0..self.bound {
            let aw_go = aw && self.get(dut, "AWREADY")? == 1;
            let w_go = w && self.get(dut, "WREADY")? == 1;
            let b_go = self.get(dut, "BVALID")? == 1;
            let resp = self.get(dut, "BRESP")?;
            self.edge(dut);
            aw &= !aw_go;
            w &= !w_go;
            self.set(dut, "AWVALID", u64::from(aw))?;
            self.set(dut, "WVALID", u64::from(w))?;
            if b_go {
                self.set(dut, "BREADY", 0)?;
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

    /// Reads the 32-bit word at `addr`.
    pub fn read(&self, dut: &mut dyn Dut, addr: u32) -> Result<u32, AxiLiteError> {
        self.set(dut, "ARADDR", u64::from(addr))?;
        self.set(dut, "ARVALID", 1)?;
        self.set(dut, "RREADY", 1)?;
        let mut ar = true;
        for _ in 0..self.bound {
            let ar_go = ar && self.get(dut, "ARREADY")? == 1;
            let r_go = self.get(dut, "RVALID")? == 1;
            let data = self.get(dut, "RDATA")?;
            let resp = self.get(dut, "RRESP")?;
            self.edge(dut);
            ar &= !ar_go;
            self.set(dut, "ARVALID", u64::from(ar))?;
            if r_go {
                self.set(dut, "RREADY", 0)?;
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

    /// Advances to the next rising edge of the AXI-Lite clock.
    fn edge(&self, dut: &mut dyn Dut) {
        while !dut.step_edge().contains(&self.domain) {}
    }

    fn set(&self, dut: &mut dyn Dut, port: &str, value: u64) -> Result<(), DutError> {
        dut.set_u64(&format!("{}{port}", self.prefix), value)
    }

    fn get(&self, dut: &mut dyn Dut, port: &str) -> Result<u64, DutError> {
        dut.get_u64(&format!("{}{port}", self.prefix))
    }
}
