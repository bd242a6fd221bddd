//! The closed loop: a generated `lightning_datapath` on any engine, each core's
//! DAC pair (`dac{2c}`, `dac{2c+1}`) through its own [`PhotonicLink`] back into the
//! core's ADC input (`adc{c}`), every cycle.
//!
//! [`LoopDriver`] is one image's run as a state machine over named pins, so the
//! same code drives a single [`Dut`] ([`run_image`]) or both engines in lockstep
//! through the differential harness (its `Step` implements [`Pins`]).

use hdl::lightning::bus::activation_preamble;
use hdl::lightning::config::{Arith, DatapathConfig as HwConfig, WeightSource};
use hdl::lightning::weights::{LayerWeights, NetworkWeights};

use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::arith::{pack_bus, unpack_bus, AccWidth, Contract, OpticalLoss};
use super::golden::Network;
use super::link::{PhotonicLink, Word};
use super::photonic::PhotonicCore;
use crate::dut::{Dut, DutError};
use crate::harness::Step;

/// The generator configuration of `network` with an `acc_width`-bit accumulator
/// on `cores` photonic cores ([`NetworkWeights::datapath_config`], the generator's
/// own reading of a weights file).
pub fn hardware_config(network: &Network, acc_width: AccWidth, cores: u32) -> HwConfig {
    hardware_config_as(network, acc_width, cores, Contract::Wirespeed)
}

/// [`hardware_config`] under an arithmetic contract: the released RTL's uses
/// its 16-bit accumulator whatever `acc_width` says.
pub fn hardware_config_as(
    network: &Network,
    acc_width: AccWidth,
    cores: u32,
    contract: Contract,
) -> HwConfig {
    let (acc_width, arith) = match contract {
        Contract::Wirespeed => (acc_width, Arith::Wirespeed),
        Contract::ReleasedRtl => (AccWidth::RELEASED_RTL, Arith::ReleasedRtl),
    };
    HwConfig {
        arith,
        ..network_config(network, acc_width, cores)
    }
}

/// The generator's reading of `network` as a weights file.
fn network_config(network: &Network, acc_width: AccWidth, cores: u32) -> HwConfig {
    let weights = NetworkWeights {
        layers: network
            .layers()
            .iter()
            .map(|l| LayerWeights {
                inputs: l.inputs(),
                outputs: l.outputs(),
                shift: l.shift(),
                weights: l
                    .weights()
                    .iter()
                    .map(|row| row.iter().map(|w| w.signed()).collect())
                    .collect(),
            })
            .collect(),
        acc_width: acc_width.bits(),
    };
    weights.datapath_config(acc_width.bits(), cores)
}

/// What the driver needs to know of a generated datapath's ports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortShape {
    /// Photonic cores (DAC pairs, ADC streams, logit lanes).
    pub cores: usize,
    /// Accumulator (logit) width in bits.
    pub acc_width: u32,
    /// Width of one core's field of `logit_index`.
    pub index_width: u32,
    /// Streamed weights: per core, the `w{c}_tdata` words in order (3 × 64 bits:
    /// 128 magnitude bits, then 16 sign bits); `None` for memory weights.
    pub weight_stream: Option<Arc<Vec<Vec<[u64; 3]>>>>,
    /// The `optical_loss{c}` value that leaves samples unchanged under the
    /// design's contract (Q8.8 1.0, or the released RTL's gain 1).
    pub unity_loss: u16,
}

impl PortShape {
    /// The ports of `datapath(cfg)`.
    pub fn of(cfg: &HwConfig) -> PortShape {
        PortShape {
            cores: cfg.cores as usize,
            acc_width: cfg.acc_width,
            index_width: hdl::lightning::datapath::logit_index_width(cfg),
            unity_loss: cfg.arith.unity_loss(),
            weight_stream: (cfg.weight_source == WeightSource::Stream).then(|| {
                Arc::new(
                    (0..cfg.cores)
                        .map(|c| {
                            let (magnitudes, signs) = cfg.weight_words(c);
                            magnitudes
                                .iter()
                                .zip(&signs)
                                .map(|(mag, sign)| {
                                    let w = mag.to_words();
                                    let lo = w.first().copied().unwrap_or(0);
                                    let hi = w.get(1).copied().unwrap_or(0);
                                    let s = sign.to_words().first().copied().unwrap_or(0);
                                    [lo, hi, s]
                                })
                                .collect()
                        })
                        .collect(),
                )
            }),
        }
    }
}

/// Named access to a design's ports for one cycle.
pub trait Pins {
    /// The current value of port `name`.
    fn read(&mut self, name: &str) -> Vec<u64>;
    /// Drives input `name` from now on.
    fn write(&mut self, name: &str, words: &[u64]);
}

impl Pins for Step<'_> {
    fn read(&mut self, name: &str) -> Vec<u64> {
        self.get(name).to_vec()
    }

    fn write(&mut self, name: &str, words: &[u64]) {
        self.set(name, words);
    }
}

/// A single engine as [`Pins`]; the first error is kept for the caller.
struct DutPins<'a> {
    dut: &'a mut dyn Dut,
    error: Option<DutError>,
}

impl Pins for DutPins<'_> {
    fn read(&mut self, name: &str) -> Vec<u64> {
        match self.dut.port(name).and_then(|p| self.dut.get(p)) {
            Ok(v) => v,
            Err(e) => {
                self.error.get_or_insert(e);
                vec![0]
            }
        }
    }

    fn write(&mut self, name: &str, words: &[u64]) {
        if let Err(e) = self.dut.port(name).and_then(|p| self.dut.set(p, words)) {
            self.error.get_or_insert(e);
        }
    }
}

/// The run-time controls of one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopControls {
    /// Core *c*'s loss compensation register (`optical_loss{c}`, raw: Q8.8
    /// under wirespeed's contract, an integer gain under the released RTL's);
    /// missing entries leave samples unchanged ([`PortShape::unity_loss`]).
    pub optical_loss: Vec<OpticalLoss>,
    /// Preamble cycles per layer.
    pub preamble_length: u32,
    /// Detector timeout (cycles after a layer starts).
    pub timeout: u32,
    /// Whole-cycle delay of DAC *j* (`dac{j}_delay`); missing entries are 0.
    pub dac_delay: Vec<u32>,
    /// Intra-cycle shift of DAC *j* (`dac{j}_shift`); missing entries are 0.
    pub dac_shift: Vec<u32>,
    /// Give up after this many cycles from `start` (a hang is a test failure).
    pub max_cycles: u64,
    /// `(core, cycle)`: core's ADC stops delivering words (`adc{core}_tvalid` = 0)
    /// from `cycle` cycles after `start` on, e.g. light lost mid-layer.
    pub adc_stop: Vec<(usize, u64)>,
    /// Streamed weights: percent of cycles (0..=100) in which a core's weight
    /// source, not already offering a word, stalls (offers none).
    pub weight_stall_percent: u32,
    /// Seed of the weight sources' stalls.
    pub weight_stall_seed: u64,
}

impl Default for LoopControls {
    /// Lossless, 10-cycle preambles, a 2000-cycle timeout, no DAC alignment.
    fn default() -> Self {
        LoopControls {
            optical_loss: Vec::new(),
            preamble_length: 10,
            timeout: 2000,
            dac_delay: Vec::new(),
            dac_shift: Vec::new(),
            max_cycles: 1_000_000,
            adc_stop: Vec::new(),
            weight_stall_percent: 0,
            weight_stall_seed: 1,
        }
    }
}

/// A cycle-level event of a run, counted from the `start` cycle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// Cycles after `start`.
    pub cycle: u64,
    /// What happened.
    pub what: String,
}

/// What one image's run produced.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoopRun {
    /// Logits in the order they left (sign-extended from the accumulator width).
    pub logits: Vec<i64>,
    /// The `logit_index` of every logit, in the same order.
    pub logit_indices: Vec<u64>,
    /// `done` rose within `max_cycles`.
    pub done: bool,
    /// The datapath's `failed` status.
    pub failed: bool,
    /// The datapath's `fail_reason`.
    pub fail_reason: u64,
    /// The `cycles` counter (start to done).
    pub cycles: u64,
    /// The `dac_start_cycle` counter.
    pub dac_start_cycle: u64,
    /// The `window_open_cycle` counter.
    pub window_open_cycle: u64,
    /// The `busy_dac_cycles` counter.
    pub busy_dac_cycles: u64,
    /// The `busy_photonic_cycles` counter.
    pub busy_photonic_cycles: u64,
    /// The `busy_decode_cycles` counter.
    pub busy_decode_cycles: u64,
    /// The `compute_cycles` counter.
    pub compute_cycles: u64,
    /// Cycles in which the bench saw a data word on `dac0` (valid and not the
    /// all-`0xFFFF` activation preamble), from `start` to `done`.
    pub observed_dac_beats: u64,
    /// Observed timeline: DAC valid, first/last beat and window per layer, done.
    pub timeline: Vec<Event>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Load(usize),
    Start,
    Run(u64),
    Finished,
}

/// One image through the closed loop, one call per cycle.
pub struct LoopDriver<'a, C: PhotonicCore> {
    links: &'a mut [PhotonicLink<C>],
    image: Vec<u8>,
    controls: LoopControls,
    shape: PortShape,
    phase: Phase,
    run: LoopRun,
    layer: u64,
    dac_seen: bool,
    locked: bool,
    last_fire: Option<u64>,
    feed: Vec<Feed>,
    stall_rng: ChaCha8Rng,
}

/// One core's weight source: the next word and whether it is offered.
#[derive(Clone, Copy, Debug, Default)]
struct Feed {
    next: usize,
    offering: bool,
}

impl<'a, C: PhotonicCore> LoopDriver<'a, C> {
    /// A driver for `image` (8-bit inputs) on a datapath of `shape`, core *c*'s
    /// light going through `links[c]` (one link per core).
    pub fn new(
        links: &'a mut [PhotonicLink<C>],
        image: &[u8],
        shape: PortShape,
        controls: &LoopControls,
    ) -> Self {
        LoopDriver {
            links,
            image: image.to_vec(),
            controls: controls.clone(),
            shape: shape.clone(),
            phase: Phase::Load(0),
            run: LoopRun::default(),
            layer: 0,
            dac_seen: false,
            locked: false,
            last_fire: None,
            feed: vec![Feed::default(); shape.cores],
            stall_rng: ChaCha8Rng::seed_from_u64(controls.weight_stall_seed),
        }
    }

    /// The run so far.
    pub fn result(&self) -> &LoopRun {
        &self.run
    }

    /// True once the run is over (done, or `max_cycles` passed).
    pub fn finished(&self) -> bool {
        self.phase == Phase::Finished
    }

    fn event(&mut self, cycle: u64, what: String) {
        self.run.timeline.push(Event { cycle, what });
    }

    /// Observes the outputs of this cycle and sets the inputs for the next edge.
    pub fn cycle(&mut self, pins: &mut dyn Pins) {
        let c = &self.controls;
        for core in 0..self.shape.cores {
            let loss = c
                .optical_loss
                .get(core)
                .map_or(self.shape.unity_loss, |l| l.0);
            pins.write(&format!("optical_loss{core}"), &[u64::from(loss)]);
        }
        pins.write("preamble_length", &[u64::from(c.preamble_length)]);
        pins.write("timeout", &[u64::from(c.timeout)]);
        for j in 0..2 * self.shape.cores {
            let delay = c.dac_delay.get(j).copied().unwrap_or(0);
            let shift = c.dac_shift.get(j).copied().unwrap_or(0);
            pins.write(&format!("dac{j}_delay"), &[u64::from(delay)]);
            pins.write(&format!("dac{j}_shift"), &[u64::from(shift)]);
        }
        let now = match self.phase {
            Phase::Run(t) => t,
            _ => 0,
        };
        for (core, link) in self.links.iter_mut().enumerate() {
            let (ja, jw) = (2 * core, 2 * core + 1);
            let a = word(&pins.read(&format!("dac{ja}_tdata")));
            let w = word(&pins.read(&format!("dac{jw}_tdata")));
            let lit = pins.read(&format!("dac{ja}_tvalid")) != [0]
                || pins.read(&format!("dac{jw}_tvalid")) != [0];
            let adc = link.step(&a, &w, lit);
            let stopped = c
                .adc_stop
                .iter()
                .any(|&(stop_core, at)| stop_core == core && now >= at);
            pins.write(&format!("adc{core}_tvalid"), &[u64::from(!stopped)]);
            pins.write(&format!("adc{core}_tdata"), &pack_bus(&adc));
        }
        pins.write("start", &[0]);
        pins.write("load_valid", &[0]);
        if let Some(words) = self.shape.weight_stream.clone() {
            self.feed_weights(pins, &words, matches!(self.phase, Phase::Run(_)));
        }
        match self.phase {
            Phase::Load(i) => {
                let chunk = self.image.get(16 * i..).unwrap_or(&[]);
                let mut data = [0u64; 2];
                for (k, &b) in chunk.iter().take(16).enumerate() {
                    data[k / 8] |= u64::from(b) << (8 * (k % 8));
                }
                pins.write("load_valid", &[1]);
                pins.write("load_addr", &[i as u64]);
                pins.write("load_data", &data);
                let words = self.image.len().div_ceil(16);
                self.phase = if i + 1 >= words {
                    Phase::Start
                } else {
                    Phase::Load(i + 1)
                };
            }
            Phase::Start => {
                pins.write("start", &[1]);
                self.phase = Phase::Run(1);
            }
            Phase::Run(t) => {
                self.observe(pins, t);
                self.phase = if self.run.done || t >= self.controls.max_cycles {
                    Phase::Finished
                } else {
                    Phase::Run(t + 1)
                };
            }
            Phase::Finished => {}
        }
    }

    /// The weight sources (AXI-Stream masters, one per core): a source offers
    /// its next word unless it stalls, holds it until `w{c}_tready` (which
    /// depends on no input), and advances on the handshake.
    fn feed_weights(&mut self, pins: &mut dyn Pins, words: &[Vec<[u64; 3]>], running: bool) {
        let stall = self.controls.weight_stall_percent;
        for (c, feed) in self.feed.iter_mut().enumerate() {
            let core_words = words.get(c).map(Vec::as_slice).unwrap_or(&[]);
            if running && !feed.offering && feed.next < core_words.len() {
                feed.offering = self.stall_rng.gen_range(0..100) >= stall;
            }
            let data = core_words.get(feed.next).copied().unwrap_or([0; 3]);
            pins.write(&format!("w{c}_tvalid"), &[u64::from(feed.offering)]);
            pins.write(&format!("w{c}_tdata"), &data);
            let ready = pins.read(&format!("w{c}_tready")).first().copied() == Some(1);
            if feed.offering && ready {
                feed.next += 1;
                feed.offering = false;
            }
        }
    }

    /// Records what the outputs show `t` cycles after the start cycle.
    fn observe(&mut self, pins: &mut dyn Pins, t: u64) {
        let one = |pins: &mut dyn Pins, n: &str| pins.read(n).first().copied().unwrap_or(0);
        let layer = one(pins, "layer");
        if layer != self.layer {
            self.close_layer();
            self.layer = layer;
            self.dac_seen = false;
        }
        let l = self.layer;
        let dac0_valid = one(pins, "dac0_tvalid") == 1;
        if dac0_valid && word(&pins.read("dac0_tdata")) != activation_preamble() {
            self.run.observed_dac_beats += 1;
        }
        if dac0_valid && !self.dac_seen {
            self.dac_seen = true;
            self.event(t, format!("layer {l}: DAC valid (preamble)"));
        }
        if one(pins, "fire") == 1 {
            if self.last_fire.is_none() {
                self.event(t, format!("layer {l}: streamer fires the first data beat"));
            }
            self.last_fire = Some(t);
        }
        let locked = one(pins, "locked") == 1;
        if locked && !self.locked {
            self.event(t, format!("layer {l}: ADC window open"));
        }
        self.locked = locked;
        let valid = one(pins, "logit_valid");
        if valid != 0 {
            let data = pins.read("logit_data");
            let index = pins.read("logit_index");
            let (aw, iw) = (self.shape.acc_width, self.shape.index_width);
            for c in 0..self.shape.cores {
                if valid >> c & 1 == 1 {
                    let raw = field(&data, c as u32 * aw, aw);
                    let sh = 64 - aw;
                    self.run.logits.push(((raw << sh) as i64) >> sh);
                    self.run
                        .logit_indices
                        .push(field(&index, c as u32 * iw, iw));
                }
            }
        }
        if one(pins, "done") == 1 {
            self.close_layer();
            self.event(t, "done".into());
            self.run.timeline.sort_by_key(|e| e.cycle);
            self.run.done = true;
            self.run.failed = one(pins, "failed") == 1;
            self.run.fail_reason = one(pins, "fail_reason");
            self.run.cycles = one(pins, "cycles");
            self.run.dac_start_cycle = one(pins, "dac_start_cycle");
            self.run.window_open_cycle = one(pins, "window_open_cycle");
            self.run.busy_dac_cycles = one(pins, "busy_dac_cycles");
            self.run.busy_photonic_cycles = one(pins, "busy_photonic_cycles");
            self.run.busy_decode_cycles = one(pins, "busy_decode_cycles");
            self.run.compute_cycles = one(pins, "compute_cycles");
        }
    }

    fn close_layer(&mut self) {
        if let Some(f) = self.last_fire.take() {
            let l = self.layer;
            self.event(f, format!("layer {l}: streamer fires the last data beat"));
        }
    }
}

/// Bits `lo .. lo + width` (width ≤ 64) of a little-endian word vector.
fn field(words: &[u64], lo: u32, width: u32) -> u64 {
    let mut v = 0u64;
    for b in 0..width {
        let bit = lo + b;
        let w = words.get((bit / 64) as usize).copied().unwrap_or(0);
        v |= (w >> (bit % 64) & 1) << b;
    }
    v
}

fn word(words: &[u64]) -> Word {
    let mut a = [0u64; 4];
    for (dst, src) in a.iter_mut().zip(words) {
        *dst = *src;
    }
    unpack_bus(&a)
}

/// Runs one image through the closed loop on `dut` (already reset), core *c*
/// through `links[c]`.
pub fn run_image<C: PhotonicCore>(
    dut: &mut dyn Dut,
    links: &mut [PhotonicLink<C>],
    image: &[u8],
    shape: PortShape,
    controls: &LoopControls,
) -> Result<LoopRun, DutError> {
    let mut driver = LoopDriver::new(links, image, shape, controls);
    loop {
        let mut pins = DutPins { dut, error: None };
        driver.cycle(&mut pins);
        if let Some(e) = pins.error {
            return Err(e);
        }
        if driver.finished() {
            return Ok(driver.result().clone());
        }
        pins.dut.step();
    }
}
