//! The Lightning top (`hdl::lightning::top`) on any [`Dut`], driven the way a host
//! drives the board: only through its AXI-Lite slave, with a [`PhotonicLink`]
//! between its DAC streams and its ADC stream.
//!
//! The bench follows every clock edge of the three domains (`dac`, `adc`,
//! `axil`). After a DAC edge it reads, per core *c*, the two DAC words
//! (`m_axis_dac{2c}`, `m_axis_dac{2c+1}`) of the new cycle and steps core *c*'s
//! link once (one ADC word per DAC cycle, as the photonic core sees it); the ADC
//! word is queued as one 16-sample beat or two 8-sample beats (samples 0–7
//! first). After an ADC edge it presents each core's next queued beat on
//! `s_axis_adc{c}` (a dark, all-zero beat if none is queued). With streamed
//! weights it plays a DMA engine: `s_axis_weights{c}` offers core *c*'s next
//! weight word whenever it has one, and [`TopBench::infer`] rewinds the streams
//! for every inference. With equal DAC and ADC clocks this is
//! exactly the closed loop of [`super::closed_loop`]; with an 8-sample ADC the
//! ADC clock must run at twice the DAC rate to keep up.
//!
//! AXI-Lite transactions go through [`crate::axil::AxiLiteMaster`], one at a
//! time, with the link and the ADC played on every edge while they wait. The
//! streams' ports are resolved once ([`TopPins`]); the bench is itself the
//! design's [`Pins`] for the master.

use std::collections::VecDeque;

use hdl::blocks::axil_regfile::RegisterMap;
use hdl::lightning::calibrate::{DIVIDE_CYCLES, REFERENCE_CYCLES};
use hdl::lightning::top_regs::status::BUSY as STATUS_BUSY;

use super::arith::unpack_bus;
use super::closed_loop::off_format;
use super::link::{PhotonicLink, Word};
use super::photonic::PhotonicCore;
use super::top_pins::TopPins;
use crate::axil::{AxiLiteError, AxiLiteMaster};
use crate::dut::{Dut, DutError, DutPort};
use crate::pins::{AxisDataPins, Pin, Pins};

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
    /// What was asked needs a bench configured otherwise.
    #[error("{0}")]
    Unsupported(&'static str),
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
    /// `busy_dac_cycles`, `busy_photonic_cycles`, `busy_decode_cycles`,
    /// `compute_cycles`.
    pub busy_cycles: [u32; 4],
    /// `class_index`.
    pub class: u32,
    /// `max_logit`, sign-extended.
    pub max_logit: i64,
    /// `lsm0..`: signed Q23.8 nats.
    pub lsm: Vec<i64>,
    /// The `m_axis_answer` beats of this run, in order, from the `start` write
    /// to the poll that saw `busy` fall (a later one is a stray beat, see
    /// [`TopBench::streams`]).
    pub answer_beats: Vec<AnswerBeat>,
}

/// The order in which [`TopBench::load_image_in`] commits an image's words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WordOrder {
    /// Word 0 first, as [`TopBench::load_image`] does.
    FirstToLast,
    /// The last word first.
    LastToFirst,
}

/// What [`TopBench::await_queued`] saw.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QueuedRuns {
    /// The answer beats cut after each `tlast`: one group per inference, in
    /// order (beats past the last `tlast` form one more group).
    pub answers: Vec<Vec<AnswerBeat>>,
    /// Inferences finished (`runs` counted up) from before the first write to
    /// right after the last one: 0 means the first run was still running after
    /// the last write, so every later command waited in the command queue.
    pub finished_after_writes: u32,
}

/// One `m_axis_answer` beat.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AnswerBeat {
    /// `tdata[31:0]`, sign-extended: the logit.
    pub logit: i64,
    /// `tdata[63:32]`, sign-extended: its log-softmax (Q23.8 nats).
    pub lsm: i64,
    /// `tuser[7:0]`: the logit's index.
    pub index: u32,
    /// `tuser[15:8]`: the class.
    pub class: u32,
    /// `tlast`.
    pub last: bool,
}

/// What the top's converter streams did that the hardware around it would not
/// take, counted by [`TopBench::streams`]; all 0 on a correct top.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConverterStreams {
    /// Samples the DACs drove with `tvalid` = 1 outside the bus format (`v << 7`:
    /// bit 15 and bits 6–0 clear), the activation preamble's `0xFFFF` excepted:
    /// a converter would play them as wrong levels, while the link model reads
    /// bits 14–7 only.
    pub off_format_dac_samples: u64,
    /// Non-zero samples the DACs drove with `tvalid` = 0. The RFSoC's RF-DAC
    /// does not gate its data with `tvalid` (PG269), so a converter would play
    /// them as light; the link model goes dark.
    pub unsuppressed_dac_samples: u64,
    /// `m_axis_answer` beats handed over outside the bench's inferences (after
    /// reset, while calibrating, after the poll that ended an inference): a
    /// host's DMA would take each as an answer.
    pub stray_answer_beats: u64,
}

impl ConverterStreams {
    /// True if every count is 0.
    pub fn clean(&self) -> bool {
        *self == ConverterStreams::default()
    }
}

impl std::fmt::Display for ConverterStreams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} lit DAC samples outside the bus format, {} non-zero DAC samples without tvalid, {} answer beats outside an inference",
            self.off_format_dac_samples, self.unsuppressed_dac_samples, self.stray_answer_beats
        )
    }
}

/// When one DAC stream shone: `tvalid` = 1 in the DAC cycles `from..until`,
/// numbered from the bench's start (the cycle after its first DAC edge is 1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Lit {
    /// The first cycle with `tvalid` = 1.
    pub from: u64,
    /// The first cycle after it with `tvalid` = 0.
    pub until: u64,
}

impl Lit {
    /// The cycles it shone.
    pub fn cycles(self) -> u64 {
        self.until - self.from
    }
}

/// Per DAC stream, the intervals it shone while the log was kept.
#[derive(Debug, Default)]
struct LightLog {
    since: Vec<Option<u64>>,
    lit: Vec<Vec<Lit>>,
}

impl LightLog {
    fn new(dacs: usize) -> LightLog {
        LightLog {
            since: vec![None; dacs],
            lit: vec![Vec::new(); dacs],
        }
    }

    /// DAC `j`'s `tvalid` in cycle `cycle`.
    fn note(&mut self, j: usize, valid: bool, cycle: u64) {
        match (self.since[j], valid) {
            (None, true) => self.since[j] = Some(cycle),
            (Some(from), false) => {
                self.lit[j].push(Lit { from, until: cycle });
                self.since[j] = None;
            }
            _ => {}
        }
    }
}

/// The top, one link per core, the weight streams and an AXI-Lite master.
pub struct TopBench<'a, C: PhotonicCore> {
    dut: &'a mut dyn Dut,
    pins: TopPins,
    links: Vec<PhotonicLink<C>>,
    map: RegisterMap,
    adc_samples: usize,
    domains: [usize; 3],
    beats: Vec<VecDeque<Vec<u16>>>,
    axil: AxiLiteMaster,
    /// When false the ADCs present `tvalid` = 0.
    pub adc_enabled: bool,
    /// Cores whose ADC presents `tvalid` = 0 whatever `adc_enabled` says (their
    /// beats are lost, as with `adc_enabled` false).
    pub adc_silent: Vec<usize>,
    /// Gaps in the ADC streams: (`period`, `length`) holds every ADC's beats for
    /// `length` of every `period` ADC cycles (`tvalid` 0 over all-ones data,
    /// nothing lost: the beats wait); `None`, no gaps.
    pub adc_gaps: Option<(u64, u64)>,
    adc_cycles: u64,
    axil_cycles: u64,
    weights: Option<WeightFeed>,
    /// `m_axis_answer_tready`; when false the top drops its answer beats.
    pub answer_ready: bool,
    answer_beats: Vec<AnswerBeat>,
    dac_cycles: u64,
    light: Option<LightLog>,
    off_format_dac_samples: u64,
    unsuppressed_dac_samples: u64,
    stray_answer_beats: u64,
}

/// The DMA engine the bench plays for streamed weights: per core its words
/// (`[u64; 3]`: magnitudes low, high, signs), the next one to offer and its
/// stream.
struct WeightFeed {
    words: Vec<Vec<[u64; 3]>>,
    next: Vec<usize>,
    pins: Vec<AxisDataPins>,
}

impl<'a, C: PhotonicCore> TopBench<'a, C> {
    /// A bench for a top (already reset) with `adc_samples` samples per ADC beat
    /// and one link per core (core *c* = `links[c]`).
    pub fn new(
        dut: &'a mut dyn Dut,
        links: Vec<PhotonicLink<C>>,
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
        let cores = links.len();
        let pins = TopPins::resolve(dut.ports(), cores)?;
        let mut bench = TopBench {
            axil,
            dut,
            pins,
            links,
            map: map.clone(),
            adc_samples,
            domains,
            beats: vec![VecDeque::new(); cores],
            adc_enabled: true,
            adc_silent: Vec::new(),
            adc_gaps: None,
            adc_cycles: 0,
            axil_cycles: 0,
            weights: None,
            answer_ready: true,
            answer_beats: Vec::new(),
            dac_cycles: 0,
            light: None,
            off_format_dac_samples: 0,
            unsuppressed_dac_samples: 0,
            stray_answer_beats: 0,
        };
        bench.set_dac_ready(true)?;
        bench.set_u64(bench.pins.answer.stream.tready, 1)?;
        bench.present_adc()?;
        Ok(bench)
    }

    /// Drives every `m_axis_dac{j}_tready` (1 from the start): the converters
    /// taking or refusing the DAC beats. The links play the beats either way,
    /// since the top never holds a beat.
    pub fn set_dac_ready(&mut self, ready: bool) -> Result<(), DutError> {
        for dac in self.pins.dacs.clone() {
            self.set_u64(dac.tready, u64::from(ready))?;
        }
        Ok(())
    }

    /// Drives `m_axis_dac{j}_tready` alone (see [`TopBench::set_dac_ready`]);
    /// `j` beyond the top's DACs is a bug in the caller.
    pub fn set_one_dac_ready(&mut self, j: usize, ready: bool) -> Result<(), DutError> {
        let dac = self.pins.dacs[j];
        self.set_u64(dac.tready, u64::from(ready))
    }

    /// Plays a DMA engine on `s_axis_weights{c}`: core *c*'s words in order
    /// (`[u64; 3]`: magnitude bits 0–63, 64–127, then the 16 sign bits), replayed
    /// from the first word at every [`TopBench::infer`].
    pub fn feed_weights(&mut self, words: Vec<Vec<[u64; 3]>>) -> Result<(), DutError> {
        let cores = words.len();
        let pins = TopPins::weights(self.dut.ports(), cores)?;
        self.weights = Some(WeightFeed {
            words,
            next: vec![0; cores],
            pins,
        });
        self.offer_weights()
    }

    /// Presents each core's next weight word (or `tvalid` = 0 when none is left).
    fn offer_weights(&mut self) -> Result<(), DutError> {
        let Some(feed) = &self.weights else {
            return Ok(());
        };
        for ((words, &next), pins) in feed.words.iter().zip(&feed.next).zip(&feed.pins) {
            let word = words.get(next).copied();
            let data = word.map_or([0; 4], |[lo, hi, signs]| [lo, hi, signs, 0]);
            self.dut.set(pins.tdata.0, &data)?;
            self.dut.set(pins.tvalid.0, &[u64::from(word.is_some())])?;
        }
        Ok(())
    }

    /// Advances the weight streams whose word the top took at this DAC edge
    /// (`tvalid` and `tready` were both 1 before the edge).
    fn take_weights(&mut self, taken: &[bool]) -> Result<(), DutError> {
        if let Some(feed) = &mut self.weights {
            for (c, &t) in taken.iter().enumerate() {
                feed.next[c] += usize::from(t);
            }
        }
        self.offer_weights()
    }

    /// Which weight streams hand over a word at the next DAC edge.
    fn weights_handshake(&mut self) -> Result<Vec<bool>, DutError> {
        let Some(feed) = &self.weights else {
            return Ok(Vec::new());
        };
        let mut dut = &mut *self.dut;
        let mut out = Vec::with_capacity(feed.pins.len());
        for p in &feed.pins {
            out.push(dut.is_high(p.tvalid)? && dut.is_high(p.tready)?);
        }
        Ok(out)
    }

    /// The `m_axis_answer` beat handed over at the next DAC edge, if any.
    fn answer_handshake(&mut self) -> Result<Option<AnswerBeat>, DutError> {
        let a = self.pins.answer;
        if !self.is_high(a.stream.tvalid)? || !self.is_high(a.stream.tready)? {
            return Ok(None);
        }
        let data = self.get_u64(a.stream.tdata)?;
        let user = self.get_u64(a.tuser)?;
        Ok(Some(AnswerBeat {
            logit: i64::from(data as u32 as i32),
            lsm: i64::from((data >> 32) as u32 as i32),
            index: (user & 0xFF) as u32,
            class: (user >> 8 & 0xFF) as u32,
            last: self.is_high(a.tlast)?,
        }))
    }

    /// The cores' links (e.g. to read their noise state).
    pub fn links(&self) -> &[PhotonicLink<C>] {
        &self.links
    }

    /// AXI-Lite cycles so far.
    pub fn axil_cycles(&self) -> u64 {
        self.axil_cycles
    }

    /// What the converter streams did that the RF Data Converter and a host's
    /// DMA would not take, since the bench's start (see [`ConverterStreams`]).
    pub fn streams(&self) -> ConverterStreams {
        ConverterStreams {
            off_format_dac_samples: self.off_format_dac_samples,
            unsuppressed_dac_samples: self.unsuppressed_dac_samples,
            stray_answer_beats: self.stray_answer_beats + self.answer_beats.len() as u64,
        }
    }

    fn present_adc(&mut self) -> Result<(), DutError> {
        let in_gap = self
            .adc_gaps
            .is_some_and(|(period, length)| self.adc_cycles % period.max(1) < length);
        self.adc_cycles += 1;
        if in_gap {
            let ones = vec![u64::MAX; self.adc_samples / 4];
            for c in 0..self.beats.len() {
                let adc = self.pins.adcs[c];
                self.dut.set(adc.tdata.0, &ones)?;
                self.dut.set(adc.tvalid.0, &[0])?;
            }
            return Ok(());
        }
        for c in 0..self.beats.len() {
            let valid = u64::from(self.adc_enabled && !self.adc_silent.contains(&c));
            let beat = self.beats[c]
                .pop_front()
                .unwrap_or_else(|| vec![0; self.adc_samples]);
            let mut words = vec![0u64; self.adc_samples / 4];
            for (i, s) in beat.iter().enumerate() {
                words[i / 4] |= u64::from(*s) << (16 * (i % 4));
            }
            let adc = self.pins.adcs[c];
            self.dut.set(adc.tdata.0, &words)?;
            self.dut.set(adc.tvalid.0, &[valid])?;
        }
        Ok(())
    }

    /// Advances to the next clock edge and plays the link; returns whether the
    /// AXI-Lite clock rose.
    fn edge(&mut self) -> Result<bool, DutError> {
        let [dac, adc, axil] = self.domains;
        let handshakes = self.weights_handshake()?;
        let answer = self.answer_handshake()?;
        let fired = self.dut.step_edge();
        if fired.contains(dac) {
            self.dac_cycles += 1;
            self.answer_beats.extend(answer);
            let ready = self.pins.answer.stream.tready;
            self.set_u64(ready, u64::from(self.answer_ready))?;
            self.take_weights(&handshakes)?;
            self.play_links()?;
        }
        if fired.contains(adc) {
            self.present_adc()?;
        }
        let axil_rose = fired.contains(axil);
        self.axil_cycles += u64::from(axil_rose);
        Ok(axil_rose)
    }

    /// Steps each core's link with the DAC words of the new cycle and queues
    /// its ADC word as beats.
    fn play_links(&mut self) -> Result<(), DutError> {
        for c in 0..self.links.len() {
            let (da, dw) = (self.pins.dacs[2 * c], self.pins.dacs[2 * c + 1]);
            let a = self.read_word(da.tdata)?;
            let w = self.read_word(dw.tdata)?;
            let (a_lit, w_lit) = (self.is_high(da.tvalid)?, self.is_high(dw.tvalid)?);
            if let Some(log) = &mut self.light {
                log.note(2 * c, a_lit, self.dac_cycles);
                log.note(2 * c + 1, w_lit, self.dac_cycles);
            }
            for (word, lit, activations) in [(&a, a_lit, true), (&w, w_lit, false)] {
                if lit {
                    self.off_format_dac_samples += off_format(word, activations);
                } else {
                    self.unsuppressed_dac_samples +=
                        word.iter().filter(|&&s| s != 0).count() as u64;
                }
            }
            let out = self.links[c].step(&a, &w, a_lit || w_lit);
            for chunk in out.chunks(self.adc_samples) {
                self.beats[c].push_back(chunk.to_vec());
            }
        }
        Ok(())
    }

    /// The 256-bit sample bus on `pin` as samples.
    fn read_word(&mut self, pin: Pin) -> Result<Word, DutError> {
        let mut words = [0u64; 4];
        self.get_into(pin, &mut words)?;
        Ok(unpack_bus(&words))
    }

    /// Advances to the next rising edge of the AXI-Lite clock, playing the
    /// link and the ADC on the way.
    fn axil_edge(&mut self) -> Result<(), DutError> {
        while !self.edge()? {}
        Ok(())
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
        match axil.write_on(self, &mut |b| b.axil_edge(), addr, data) {
            Ok(()) => Ok(OKAY),
            Err(AxiLiteError::Response { resp, .. }) => Ok(resp),
            Err(e) => Err(e.into()),
        }
    }

    /// One AXI-Lite read of byte address `addr`; returns (RDATA, RRESP), RDATA 0
    /// with an error response.
    pub fn read_addr(&mut self, addr: u32) -> Result<(u32, u64), BenchError> {
        let axil = self.axil.clone();
        match axil.read_on(self, &mut |b| b.axil_edge(), addr) {
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

    /// Loads `image` word by word, first word first: `image_addr`,
    /// `image_data0..3`, `image_commit`.
    pub fn load_image(&mut self, image: &[u8]) -> Result<(), BenchError> {
        self.load_image_in(image, WordOrder::FirstToLast)
    }

    /// Loads `image` word by word in `order` (the register map lets a host
    /// commit an image's 16-byte words at any index in any order).
    pub fn load_image_in(&mut self, image: &[u8], order: WordOrder) -> Result<(), BenchError> {
        let mut words: Vec<(usize, &[u8])> = image.chunks(16).enumerate().collect();
        if order == WordOrder::LastToFirst {
            words.reverse();
        }
        for (i, chunk) in words {
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
        if let Some(feed) = &mut self.weights {
            feed.next.iter_mut().for_each(|n| *n = 0);
        }
        self.offer_weights()?;
        self.answers_from_here();
        self.write("start", 1)?;
        let status_after_start = self.read("status")?;
        let mut status = status_after_start;
        let mut polls = 1;
        while status & STATUS_BUSY != 0 {
            if polls >= max_polls {
                return Err(BenchError::Timeout {
                    what: "inference (status.busy)".into(),
                    cycles: self.axil_cycles,
                });
            }
            status = self.read("status")?;
            polls += 1;
        }
        // `done` rises once the last beat has left: every beat is in by now.
        let mut run = TopRun {
            status,
            status_after_start,
            answer_beats: std::mem::take(&mut self.answer_beats),
            ..TopRun::default()
        };
        for i in 0..logits {
            let v = self.read(&format!("logit{i}"))?;
            run.logits.push(i64::from(v as i32));
            let v = self.read(&format!("lsm{i}"))?;
            run.lsm.push(i64::from(v as i32));
        }
        run.class = self.read("class_index")?;
        run.max_logit = i64::from(self.read("max_logit")? as i32);
        for (k, name) in [
            "busy_dac_cycles",
            "busy_photonic_cycles",
            "busy_decode_cycles",
            "compute_cycles",
        ]
        .into_iter()
        .enumerate()
        {
            run.busy_cycles[k] = self.read(name)?;
        }
        run.cycles = self.read("cycles")?;
        run.dac_start_cycle = self.read("dac_start_cycle")?;
        run.window_open_cycle = self.read("window_open_cycle")?;
        run.photonic_slack = self.read("photonic_slack")?;
        Ok(run)
    }

    /// Starts collecting a new inference's answer beats: those not collected
    /// yet arrived outside an inference and count as stray.
    fn answers_from_here(&mut self) {
        self.stray_answer_beats += self.answer_beats.len() as u64;
        self.answer_beats.clear();
    }

    /// Runs `images` back to back as a pipelining host does: every image's
    /// words (in `order`) and its `start` are written at once, without waiting
    /// for a run to end, so the top's command queue holds the next images while
    /// one runs (⌈bytes / 16⌉ + 1 commands an image; a full queue drops and
    /// counts the rest, `cmd_dropped`). Then [`TopBench::await_queued`], one
    /// inference per image. Memory weights only: [`TopBench::infer`] restarts a
    /// streamed weight feed for each inference.
    pub fn infer_queued(
        &mut self,
        images: &[&[u8]],
        order: WordOrder,
        max_cycles: u64,
    ) -> Result<QueuedRuns, BenchError> {
        let mark = self.begin_queue()?;
        for image in images {
            self.load_image_in(image, order)?;
            self.write("start", 1)?;
        }
        self.await_queued(mark, images.len(), max_cycles)
    }

    /// Begins a pipelined batch: answer beats are collected from here, for
    /// [`TopBench::await_queued`], while the host writes whatever commands it
    /// queues (image words, `start`s, control registers between them). Memory
    /// weights only.
    pub fn begin_queue(&mut self) -> Result<QueueMark, BenchError> {
        if self.weights.is_some() {
            return Err(BenchError::Unsupported(
                "queued inferences need weights in memory, not a streamed feed",
            ));
        }
        let runs_before = self.read("runs")?;
        self.answers_from_here();
        Ok(QueueMark { runs_before })
    }

    /// Ends the batch begun at `mark` once the host's writes are made: runs
    /// until the answer stream has carried `inferences` `tlast`s and
    /// `status.busy` has fallen, within `max_cycles` AXI-Lite cycles.
    pub fn await_queued(
        &mut self,
        mark: QueueMark,
        inferences: usize,
        max_cycles: u64,
    ) -> Result<QueuedRuns, BenchError> {
        let finished_after_writes = self.read("runs")?.wrapping_sub(mark.runs_before);
        let deadline = self.axil_cycles + max_cycles;
        loop {
            let answered = self.answer_beats.iter().filter(|b| b.last).count() >= inferences;
            if answered && self.read("status")? & STATUS_BUSY == 0 {
                break;
            }
            if self.axil_cycles >= deadline {
                return Err(BenchError::Timeout {
                    what: format!("{inferences} queued inferences (answers, status.busy)"),
                    cycles: max_cycles,
                });
            }
            if !answered {
                self.idle(1)?;
            }
        }
        let beats = std::mem::take(&mut self.answer_beats);
        Ok(QueuedRuns {
            answers: beats
                .split_inclusive(|b| b.last)
                .map(<[AnswerBeat]>::to_vec)
                .collect(),
            finished_after_writes,
        })
    }
}

/// Where a pipelined batch began ([`TopBench::begin_queue`]).
#[derive(Clone, Copy, Debug)]
pub struct QueueMark {
    /// `runs` before the batch's first write.
    runs_before: u32,
}

/// What a calibration left in the registers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CalibrationRun {
    /// `cal_status` after `busy` fell.
    pub status: u32,
    /// `cal_status` read right after the `calibrate` write.
    pub status_after_write: u32,
    /// Polls whose `cal_status` showed `busy` and `done` together, which the
    /// documented protocol never does (`done` is the last calibration's, cleared
    /// by the next `calibrate` write).
    pub busy_and_done: u32,
    /// `cal_cycles`.
    pub cycles: u32,
    /// Per DAC stream *j* (`m_axis_dac{j}`), when it shone from the `calibrate`
    /// write to the poll that saw the calibration end.
    pub dac_lit: Vec<Vec<Lit>>,
    /// Per core: the control registers after the run, `[optical_loss, act delay,
    /// act shift, weight delay, weight shift]`.
    pub settings: Vec<[u32; 5]>,
    /// Per core: (activation arrival, weight arrival) in samples.
    pub arrivals: Vec<(u32, u32)>,
    /// Per core: (level, gain).
    pub levels: Vec<(u32, u32)>,
}

impl CalibrationRun {
    /// The settings a correct calibration programs for a noise-free
    /// [`PhotonicLink`] whose weight modulator is `skew` samples late (negative:
    /// the activation modulator) and which lets `transmission` of the light
    /// through, in the order of [`CalibrationRun::settings`]: the earlier DAC
    /// waits |`skew`| samples (delay |skew| / 16, shift |skew| mod 16), and the
    /// Q8.8 gain is round(256 · full scale / level), the level being the link
    /// model's full-scale sample round(full scale · `transmission`) and full
    /// scale a lossless full-scale product, `((255 · 255) >> 8) << 7`. Computed
    /// from the documented procedure, not read from the calibrator.
    pub fn expected_settings(skew: i64, transmission: f64) -> [u32; 5] {
        let full_scale = f64::from(((255 * 255) >> 8) << 7);
        let level = (full_scale * transmission).round();
        let gain = (256.0 * full_scale / level).round() as u32;
        let m = skew.unsigned_abs() as u32;
        let (delay, shift) = (m / 16, m % 16);
        match skew >= 0 {
            true => [gain, delay, shift, 0, 0],
            false => [gain, 0, 0, delay, shift],
        }
    }

    /// True if the run finished without a failure.
    pub fn succeeded(&self) -> bool {
        use hdl::lightning::top_regs::cal_status::{DONE, FAILED};
        self.status & DONE != 0 && self.status & FAILED == 0
    }

    /// What `cal_cycles` must read after a successful calibration with
    /// `timeout`, from the DAC streams' timeline ([`CalibrationRun::dac_lit`])
    /// and the procedure `hdl::lightning::calibrate` documents. Per core, each
    /// phase's reference DAC shines [`REFERENCE_CYCLES`] before its probe and
    /// both go dark in the same cycle (phase 0: the weight DAC is the reference,
    /// phase 1: the activation DAC), and the dark wait between the phases is
    /// `timeout` + 1 cycles; the core is busy for the two dark waits, the cycles
    /// its references shine, and [`DIVIDE_CYCLES`]. `cal_cycles` counts the
    /// starting cycle and every cycle a core is busy. An error names the first
    /// way the timeline breaks the procedure.
    pub fn cycles_from_dac_ports(&self, timeout: u32) -> Result<u64, String> {
        let dark = u64::from(timeout) + 1;
        let reference = u64::from(REFERENCE_CYCLES);
        let mut longest = 0;
        for (c, pair) in self.dac_lit.chunks(2).enumerate() {
            let [act, weight] = pair else {
                return Err(format!("core {c}: one DAC stream's timeline"));
            };
            let ([a0, a1], [w0, w1]) = (act.as_slice(), weight.as_slice()) else {
                return Err(format!(
                    "core {c}: DACs shone {} and {} times, not twice each",
                    act.len(),
                    weight.len()
                ));
            };
            for (phase, probe, refr) in [(0, a0, w0), (1, w1, a1)] {
                if probe.from != refr.from + reference || probe.until != refr.until {
                    return Err(format!(
                        "core {c}, phase {phase}: reference {refr:?}, probe {probe:?}"
                    ));
                }
            }
            if a1.from != w0.until + dark {
                return Err(format!(
                    "core {c}: dark from cycle {} to {}, not timeout + 1 = {dark} cycles",
                    w0.until, a1.from
                ));
            }
            longest = longest.max(2 * dark + w0.cycles() + a1.cycles());
        }
        Ok(1 + longest + u64::from(DIVIDE_CYCLES))
    }
}

impl<C: PhotonicCore> TopBench<'_, C> {
    /// Writes `calibrate`, polls `cal_status` until not busy (at most
    /// `max_polls` reads) and reads the results of `cores` cores.
    pub fn calibrate(
        &mut self,
        cores: usize,
        max_polls: u64,
    ) -> Result<CalibrationRun, BenchError> {
        use hdl::lightning::top_regs::cal_status::{BUSY, DONE};
        self.light = Some(LightLog::new(self.pins.dacs.len()));
        self.write("calibrate", 1)?;
        let status_after_write = self.read("cal_status")?;
        let mut status = status_after_write;
        let mut polls = 1;
        let mut busy_and_done = 0;
        while status & BUSY != 0 {
            busy_and_done += u32::from(status & DONE != 0);
            if polls >= max_polls {
                self.light = None;
                return Err(BenchError::Timeout {
                    what: "calibration (cal_status.busy)".into(),
                    cycles: self.axil_cycles,
                });
            }
            status = self.read("cal_status")?;
            polls += 1;
        }
        let light = self.light.take().unwrap_or_default();
        Ok(CalibrationRun {
            status_after_write,
            busy_and_done,
            dac_lit: light.lit,
            ..self.calibration_results(status, cores)?
        })
    }

    /// Reads the results of the last calibration of `cores` cores, with
    /// `status` as the `cal_status` read that ended the poll.
    fn calibration_results(
        &mut self,
        status: u32,
        cores: usize,
    ) -> Result<CalibrationRun, BenchError> {
        let mut run = CalibrationRun {
            status,
            cycles: self.read("cal_cycles")?,
            ..CalibrationRun::default()
        };
        for c in 0..cores {
            let (ja, jw) = (2 * c, 2 * c + 1);
            run.settings.push([
                self.read(&format!("optical_loss{c}"))?,
                self.read(&format!("dac{ja}_delay"))?,
                self.read(&format!("dac{ja}_shift"))?,
                self.read(&format!("dac{jw}_delay"))?,
                self.read(&format!("dac{jw}_shift"))?,
            ]);
            let a = self.read(&format!("cal{c}_arrival"))?;
            run.arrivals.push((a & 0xFFFF, a >> 16));
            let l = self.read(&format!("cal{c}_level"))?;
            run.levels.push((l & 0xFFFF, l >> 16));
        }
        Ok(run)
    }
}

/// The design's ports, for the AXI-Lite master and the bench's own streams.
impl<C: PhotonicCore> Pins for TopBench<'_, C> {
    fn ports(&self) -> &[DutPort] {
        self.dut.ports()
    }
    fn set(&mut self, pin: Pin, words: &[u64]) -> Result<(), DutError> {
        self.dut.set(pin.0, words)
    }
    fn get_into(&mut self, pin: Pin, out: &mut [u64]) -> Result<(), DutError> {
        self.dut.get_into(pin.0, out)
    }
}
