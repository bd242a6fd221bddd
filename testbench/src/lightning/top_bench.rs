//! The Lightning top (`hdl::lightning::top`) on any [`Dut`], driven the way a host
//! drives the board: only through its AXI-Lite slave, with a [`PhotonicLink`]
//! between its DAC streams and its ADC stream.
//!
//! The bench follows every clock edge of the three domains (`dac`, `adc`,
//! `axil`). After a DAC edge it reads the two DAC words of the new cycle and
//! steps the link once (one ADC word per DAC cycle, as the photonic core sees
//! it); the ADC word is queued as one 16-sample beat or two 8-sample beats
//! (samples 0–7 first). After an ADC edge it presents the next queued beat (a
//! dark, all-zero beat if none is queued). With equal DAC and ADC clocks this is
//! exactly the closed loop of [`super::closed_loop`]; with an 8-sample ADC the
//! ADC clock must run at twice the DAC rate to keep up.
//!
//! AXI-Lite transactions go through [`crate::axil::AxiLiteMaster`], one at a
//! time, with the link and the ADC played on every edge while they wait.

use std::collections::VecDeque;

use hdl::blocks::axil_regfile::RegisterMap;

use super::arith::unpack_bus;
use super::link::{PhotonicLink, Word};
use super::photonic::PhotonicCore;
use crate::axil::{AxiLiteBus, AxiLiteError, AxiLiteMaster};
use crate::dut::{Dut, DutError};

/// AXI-Lite response OKAY.
pub const OKAY: u64 = 0;

/// Why a bench operation failed.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// The engine refused a call.
    #[error(transparent)]
    Dut(#[from] DutError),
    /// An AXI-Lite transaction got no response in time.
    #[error(transparent)]
    Bus(#[from] AxiLiteError),
    /// A register name the map does not have.
    #[error("the register map has no register `{0}`")]
    UnknownRegister(String),
    /// A transaction or a poll did not finish in time.
    #[error("{what} did not finish within {cycles} AXI-Lite cycles")]
    Timeout {
        /// What was waited for.
        what: String,
        /// The limit.
        cycles: u64,
    },
    /// A transaction answered with an error response.
    #[error("{what}: response {resp:#b}")]
    Response {
        /// The transaction.
        what: String,
        /// BRESP or RRESP.
        resp: u64,
    },
    /// The design lacks a clock domain the bench needs.
    #[error("the design has no clock domain `{0}`")]
    Domain(String),
}

/// What one inference left in the registers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TopRun {
    /// `status` after `busy` fell.
    pub status: u32,
    /// `logit0..`, sign-extended.
    pub logits: Vec<i64>,
    /// `cycles`.
    pub cycles: u32,
    /// `dac_start_cycle`.
    pub dac_start_cycle: u32,
    /// `window_open_cycle`.
    pub window_open_cycle: u32,
    /// `photonic_slack`.
    pub photonic_slack: u32,
    /// `status` read right after the `start` write.
    pub status_after_start: u32,
}

/// The top, its link and an AXI-Lite master.
pub struct TopBench<'a, C: PhotonicCore> {
    dut: &'a mut dyn Dut,
    link: PhotonicLink<C>,
    map: RegisterMap,
    adc_samples: usize,
    domains: [usize; 3],
    beats: VecDeque<Vec<u16>>,
    axil: AxiLiteMaster,
    /// When false the ADC presents `tvalid` = 0.
    pub adc_enabled: bool,
    axil_cycles: u64,
}

impl<'a, C: PhotonicCore> TopBench<'a, C> {
    /// A bench for a top (already reset) with `adc_samples` samples per ADC beat.
    pub fn new(
        dut: &'a mut dyn Dut,
        link: PhotonicLink<C>,
        map: &RegisterMap,
        adc_samples: usize,
    ) -> Result<Self, BenchError> {
        let find = |dut: &dyn Dut, name: &str| {
            dut.domains()
                .iter()
                .position(|d| d == name)
                .ok_or_else(|| BenchError::Domain(name.into()))
        };
        let domains = [find(dut, "dac")?, find(dut, "adc")?, find(dut, "axil")?];
        let axil = AxiLiteMaster::new(dut, "s_axi_", "axil")?;
        let mut bench = TopBench {
            axil,
            dut,
            link,
            map: map.clone(),
            adc_samples,
            domains,
            beats: VecDeque::new(),
            adc_enabled: true,
            axil_cycles: 0,
        };
        for i in 0..2 {
            bench.set(&format!("m_axis_dac{i}_tready"), 1)?;
        }
        bench.present_adc()?;
        Ok(bench)
    }

    /// AXI-Lite cycles so far.
    pub fn axil_cycles(&self) -> u64 {
        self.axil_cycles
    }

    fn set(&mut self, name: &str, value: u64) -> Result<(), DutError> {
        let p = self.dut.port(name)?;
        self.dut.set(p, &[value])
    }

    fn get(&mut self, name: &str) -> Result<Vec<u64>, DutError> {
        let p = self.dut.port(name)?;
        self.dut.get(p)
    }

    fn get1(&mut self, name: &str) -> Result<u64, DutError> {
        Ok(self.get(name)?.first().copied().unwrap_or(0))
    }

    fn present_adc(&mut self) -> Result<(), DutError> {
        let beat = self
            .beats
            .pop_front()
            .unwrap_or_else(|| vec![0; self.adc_samples]);
        let mut words = vec![0u64; self.adc_samples / 4];
        for (i, s) in beat.iter().enumerate() {
            words[i / 4] |= u64::from(*s) << (16 * (i % 4));
        }
        let valid = u64::from(self.adc_enabled);
        let p = self.dut.port("s_axis_adc_tdata")?;
        self.dut.set(p, &words)?;
        self.set("s_axis_adc_tvalid", valid)
    }

    /// Advances to the next clock edge and plays the link; returns whether the
    /// AXI-Lite clock rose.
    fn edge(&mut self) -> Result<bool, DutError> {
        let fired = self.dut.step_edge();
        let [dac, adc, axil] = self.domains;
        if fired.contains(&dac) {
            let a = word(&self.get("m_axis_dac0_tdata")?);
            let w = word(&self.get("m_axis_dac1_tdata")?);
            let lit =
                self.get1("m_axis_dac0_tvalid")? == 1 || self.get1("m_axis_dac1_tvalid")? == 1;
            let out = self.link.step(&a, &w, lit);
            for chunk in out.chunks(self.adc_samples) {
                self.beats.push_back(chunk.to_vec());
            }
        }
        if fired.contains(&adc) {
            self.present_adc()?;
        }
        let axil_rose = fired.contains(&axil);
        self.axil_cycles += u64::from(axil_rose);
        Ok(axil_rose)
    }

    /// Runs until the AXI-Lite clock has risen `n` times.
    pub fn idle(&mut self, n: u64) -> Result<(), DutError> {
        let mut seen = 0;
        while seen < n {
            seen += u64::from(self.edge()?);
        }
        Ok(())
    }

    /// The byte offset of register `name`.
    pub fn offset(&self, name: &str) -> Result<u32, BenchError> {
        self.map
            .registers
            .iter()
            .find(|r| r.name == name)
            .map(|r| r.offset)
            .ok_or_else(|| BenchError::UnknownRegister(name.into()))
    }

    /// One AXI-Lite write to byte address `addr`; returns BRESP.
    pub fn write_addr(&mut self, addr: u32, data: u32) -> Result<u64, BenchError> {
        let axil = self.axil.clone();
        match axil.write_on(self, addr, data) {
            Ok(()) => Ok(OKAY),
            Err(AxiLiteError::Response { resp, .. }) => Ok(resp),
            Err(e) => Err(e.into()),
        }
    }

    /// One AXI-Lite read of byte address `addr`; returns (RDATA, RRESP), RDATA 0
    /// with an error response.
    pub fn read_addr(&mut self, addr: u32) -> Result<(u32, u64), BenchError> {
        let axil = self.axil.clone();
        match axil.read_on(self, addr) {
            Ok(v) => Ok((v, OKAY)),
            Err(AxiLiteError::Response { resp, .. }) => Ok((0, resp)),
            Err(e) => Err(e.into()),
        }
    }

    /// Writes register `name`; an error response is an error.
    pub fn write(&mut self, name: &str, data: u32) -> Result<(), BenchError> {
        let addr = self.offset(name)?;
        match self.write_addr(addr, data)? {
            OKAY => Ok(()),
            resp => Err(BenchError::Response {
                what: format!("write {name}"),
                resp,
            }),
        }
    }

    /// Reads register `name`; an error response is an error.
    pub fn read(&mut self, name: &str) -> Result<u32, BenchError> {
        let addr = self.offset(name)?;
        match self.read_addr(addr)? {
            (v, OKAY) => Ok(v),
            (_, resp) => Err(BenchError::Response {
                what: format!("read {name}"),
                resp,
            }),
        }
    }

    /// Loads `image` word by word: `image_addr`, `image_data0..3`, `image_commit`.
    pub fn load_image(&mut self, image: &[u8]) -> Result<(), BenchError> {
        for (i, chunk) in image.chunks(16).enumerate() {
            self.write("image_addr", i as u32)?;
            for k in 0..4 {
                let mut v = 0u32;
                for (b, byte) in chunk.iter().skip(4 * k).take(4).enumerate() {
                    v |= u32::from(*byte) << (8 * b);
                }
                self.write(&format!("image_data{k}"), v)?;
            }
            self.write("image_commit", 1)?;
        }
        Ok(())
    }

    /// Loads `image`, starts, polls `status` until not busy (at most
    /// `max_polls` reads) and reads the results; `logits` logit registers.
    pub fn infer(
        &mut self,
        image: &[u8],
        logits: usize,
        max_polls: u64,
    ) -> Result<TopRun, BenchError> {
        self.load_image(image)?;
        self.write("start", 1)?;
        let status_after_start = self.read("status")?;
        let mut status = status_after_start;
        let mut polls = 1;
        while status & 1 == 1 {
            if polls >= max_polls {
                return Err(BenchError::Timeout {
                    what: "inference (status.busy)".into(),
                    cycles: self.axil_cycles,
                });
            }
            status = self.read("status")?;
            polls += 1;
        }
        let mut run = TopRun {
            status,
            status_after_start,
            ..TopRun::default()
        };
        for i in 0..logits {
            let v = self.read(&format!("logit{i}"))?;
            run.logits.push(i64::from(v as i32));
        }
        run.cycles = self.read("cycles")?;
        run.dac_start_cycle = self.read("dac_start_cycle")?;
        run.window_open_cycle = self.read("window_open_cycle")?;
        run.photonic_slack = self.read("photonic_slack")?;
        Ok(run)
    }
}

fn word(words: &[u64]) -> Word {
    let mut a = [0u64; 4];
    for (dst, src) in a.iter_mut().zip(words) {
        *dst = *src;
    }
    unpack_bus(&a)
}

impl<C: PhotonicCore> AxiLiteBus for TopBench<'_, C> {
    fn set(&mut self, port: &str, value: u64) -> Result<(), DutError> {
        TopBench::set(self, port, value)
    }
    fn get(&mut self, port: &str) -> Result<u64, DutError> {
        self.get1(port)
    }
    fn axil_edge(&mut self) -> Result<(), DutError> {
        while !self.edge()? {}
        Ok(())
    }
}
