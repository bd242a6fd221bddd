//! The closed loop: a generated `lightning_datapath` on any engine, each core's
//! DAC pair (`dac{2c}`, `dac{2c+1}`) through its own [`PhotonicLink`] back into the
//! core's ADC input (`adc{c}`), every cycle.
//!
//! [`LoopDriver`] is one image's run as a state machine over [`Pins`] (its ports
//! resolved once, [`LoopPins`]), so the same code drives a single [`Dut`]
//! ([`run_image`]; [`ImageLoop`] for a sequence of images, the ports resolved
//! once for all of them) or both engines in lockstep through the differential
//! harness (its `Step` implements [`Pins`]).

use hdl::lightning::bus::activation_preamble;
use hdl::lightning::config::{Arith, DatapathConfig as HwConfig, WeightSource};
use hdl::lightning::weights::{LayerWeights, NetworkWeights};

use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::arith::{pack_bus, unpack_bus, AccWidth, Contract, OpticalLoss};
use super::golden::Network;
use super::link::{PhotonicLink, Word};
use super::loop_pins::LoopPins;
use super::photonic::PhotonicCore;
use crate::dut::{Dut, DutError};
use crate::pins::{Pin, Pins};

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
    /// Streamed weights, `(core, cycle)`: core's weight source offers no new word
    /// from `cycle` cycles after `start` on (a DMA that stops; 0: never armed).
    pub weight_stop: Vec<(usize, u64)>,
    /// Streamed weights: a source offers its next word no sooner than this many
    /// cycles after its last word was taken (a DMA that trickles; 0: at once).
    pub weight_gap: u64,
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
            weight_stop: Vec::new(),
            weight_gap: 0,
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
    /// Samples of lit DAC words, from the first cycle on, outside the bus
    /// format (`v << 7`: bit 15 and bits 6–0 clear), the activation preamble's
    /// `0xFFFF` samples excepted. A DAC drives such a sample as a wrong
    /// level; the photonic model ignores those bits, so only this count shows
    /// them.
    pub off_format_dac_samples: u64,
    /// Observed timeline: DAC valid, first/last beat and window per layer, done.
    pub timeline: Vec<Event>,
}

impl LoopRun {
    /// Where the datapath's `cycles`, `dac_start_cycle` and `window_open_cycle`
    /// counters differ from what the bench saw on the ports (the `done` cycle, the
    /// first cycle with `dac0_tvalid`, the first with `locked`; 0 for an event
    /// that never came), one line per counter: the counters' documented meaning
    /// checked against an independent observation.
    pub fn counters_unlike_ports(&self) -> Vec<String> {
        let first = |suffix: &str| {
            self.timeline
                .iter()
                .find(|e| e.what.ends_with(suffix))
                .map_or(0, |e| e.cycle)
        };
        [
            ("cycles", self.cycles, first("done")),
            (
                "dac_start_cycle",
                self.dac_start_cycle,
                first("DAC valid (preamble)"),
            ),
            (
                "window_open_cycle",
                self.window_open_cycle,
                first("ADC window open"),
            ),
        ]
        .into_iter()
        .filter(|(_, counter, seen)| counter != seen)
        .map(|(name, counter, seen)| format!("{name} {counter}, the ports showed {seen}"))
        .collect()
    }

    /// Where the busy counters of a finished run break the order of the stages
    /// they count, one line per broken rule (see the datapath's module docs):
    /// a beat is in flight for at least the cycle after it fired, so
    /// `busy_photonic_cycles` exceeds `busy_dac_cycles`; `compute_cycles`
    /// counts every cycle any stage works; and each layer's last word is still
    /// decoding once it has been taken, so in every layer that fired (per the
    /// bench's timeline) at least one cycle of `compute_cycles` has no word in
    /// flight.
    pub fn busy_counters_out_of_order(&self) -> Vec<String> {
        let layers = self
            .timeline
            .iter()
            .filter(|e| e.what.ends_with(FIRST_BEAT))
            .count() as u64;
        let mut broken = Vec::new();
        if self.busy_photonic_cycles <= self.busy_dac_cycles {
            broken.push(format!(
                "busy_photonic_cycles {} not above busy_dac_cycles {}",
                self.busy_photonic_cycles, self.busy_dac_cycles
            ));
        }
        let busiest = self
            .busy_dac_cycles
            .max(self.busy_photonic_cycles)
            .max(self.busy_decode_cycles);
        if self.compute_cycles < busiest {
            broken.push(format!(
                "compute_cycles {} below a stage's {busiest}",
                self.compute_cycles
            ));
        }
        if self.compute_cycles < self.busy_photonic_cycles + layers {
            broken.push(format!(
                "compute_cycles {} leave no decode tail beyond busy_photonic_cycles {} \
                 in each of {layers} layers",
                self.compute_cycles, self.busy_photonic_cycles
            ));
        }
        broken
    }
}

/// The timeline's event for a layer's first data beat (after `layer {l}: `).
const FIRST_BEAT: &str = "streamer fires the first data beat";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Load(usize),
    Start,
    Run(u64),
    Finished,
}

/// One image through the closed loop, one call per cycle: the image's words
/// over the load port, `start`, then the run; from `start` on, the load port
/// carries junk without `load_valid`.
pub struct LoopDriver<'a, C: PhotonicCore> {
    links: &'a mut [PhotonicLink<C>],
    image: &'a [u8],
    controls: &'a LoopControls,
    shape: PortShape,
    phase: Phase,
    run: LoopRun,
    layer: u64,
    dac_seen: bool,
    locked: bool,
    last_fire: Option<u64>,
    feed: Vec<Feed>,
    stall_rng: ChaCha8Rng,
    /// The ports, resolved at the first cycle unless given (see [`ImageLoop`]).
    pins: Option<LoopPins>,
    /// Whether the run-time controls have been driven (at the first cycle).
    controls_driven: bool,
    logit_data: Vec<u64>,
    logit_index: Vec<u64>,
}

/// One core's weight source: the next word and whether it is offered.
#[derive(Clone, Copy, Debug, Default)]
struct Feed {
    next: usize,
    offering: bool,
    /// The cycle its last word was taken.
    taken_at: Option<u64>,
}

impl<'a, C: PhotonicCore> LoopDriver<'a, C> {
    /// A driver for `image` (8-bit inputs) on a datapath of `shape`, core *c*'s
    /// light going through `links[c]` (one link per core).
    pub fn new(
        links: &'a mut [PhotonicLink<C>],
        image: &'a [u8],
        shape: PortShape,
        controls: &'a LoopControls,
    ) -> Self {
        LoopDriver {
            links,
            image,
            controls,
            phase: Phase::Load(0),
            run: LoopRun::default(),
            layer: 0,
            dac_seen: false,
            locked: false,
            last_fire: None,
            feed: vec![Feed::default(); shape.cores],
            stall_rng: ChaCha8Rng::seed_from_u64(controls.weight_stall_seed),
            shape,
            pins: None,
            controls_driven: false,
            logit_data: Vec::new(),
            logit_index: Vec::new(),
        }
    }

    /// The run and the ports it resolved (`None` if it never ran a cycle).
    fn into_parts(self) -> (LoopRun, Option<LoopPins>) {
        (self.run, self.pins)
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

    /// Observes the outputs of this cycle and sets the inputs for the next edge;
    /// a port the datapath lacks is an error at the first cycle.
    pub fn cycle(&mut self, pins: &mut (impl Pins + ?Sized)) -> Result<(), DutError> {
        let p = match self.pins.take() {
            Some(p) => p,
            None => LoopPins::resolve(pins.ports(), &self.shape)?,
        };
        if !self.controls_driven {
            // The controls hold for the whole run and inputs keep their values,
            // so they are driven once, on the first cycle.
            self.logit_data = vec![0; pins.words(p.status.logit_data)];
            self.logit_index = vec![0; pins.words(p.status.logit_index)];
            self.drive_controls(pins, &p)?;
            self.controls_driven = true;
        }
        let result = self.cycle_on(pins, &p);
        self.pins = Some(p);
        result
    }

    fn cycle_on(&mut self, pins: &mut (impl Pins + ?Sized), p: &LoopPins) -> Result<(), DutError> {
        self.play_links(pins, p)?;
        let ctl = &p.control;
        pins.set_u64(ctl.start, 0)?;
        pins.set_u64(ctl.load_valid, 0)?;
        if let Some(words) = self.shape.weight_stream.clone() {
            self.feed_weights(pins, p, &words, matches!(self.phase, Phase::Run(_)))?;
        }
        match self.phase {
            Phase::Load(i) => {
                let chunk = self.image.get(16 * i..).unwrap_or(&[]);
                let mut data = [0u64; 2];
                for (k, &b) in chunk.iter().take(16).enumerate() {
                    data[k / 8] |= u64::from(b) << (8 * (k % 8));
                }
                pins.set_u64(ctl.load_valid, 1)?;
                pins.set_u64(ctl.load_addr, i as u64)?;
                pins.set(ctl.load_data, &data)?;
                let words = self.image.len().div_ceil(16);
                self.phase = if i + 1 >= words {
                    Phase::Start
                } else {
                    Phase::Load(i + 1)
                };
            }
            Phase::Start => {
                pins.set_u64(ctl.start, 1)?;
                // Without `load_valid` the load port's address and data mean
                // nothing, so they carry junk until the next load: word 0,
                // every byte 255. A datapath that wrote the image bank without
                // `load_valid` would overwrite the image's first word.
                pins.set_u64(ctl.load_addr, 0)?;
                let junk = vec![u64::MAX; pins.words(ctl.load_data)];
                pins.set(ctl.load_data, &junk)?;
                self.phase = Phase::Run(1);
            }
            Phase::Run(t) => {
                self.observe(pins, p, t)?;
                self.phase = if self.run.done || t >= self.controls.max_cycles {
                    Phase::Finished
                } else {
                    Phase::Run(t + 1)
                };
            }
            Phase::Finished => {}
        }
        Ok(())
    }

    /// Drives the run-time controls: loss compensation, preamble, timeout and
    /// DAC alignment.
    fn drive_controls(
        &self,
        pins: &mut (impl Pins + ?Sized),
        p: &LoopPins,
    ) -> Result<(), DutError> {
        let c = &self.controls;
        for (core, cp) in p.cores.iter().enumerate() {
            let loss = c
                .optical_loss
                .get(core)
                .map_or(self.shape.unity_loss, |l| l.0);
            pins.set_u64(cp.optical_loss, u64::from(loss))?;
        }
        pins.set_u64(p.control.preamble_length, u64::from(c.preamble_length))?;
        pins.set_u64(p.control.timeout, u64::from(c.timeout))?;
        for (j, dac) in p.dacs.iter().enumerate() {
            let delay = c.dac_delay.get(j).copied().unwrap_or(0);
            let shift = c.dac_shift.get(j).copied().unwrap_or(0);
            pins.set_u64(dac.delay, u64::from(delay))?;
            pins.set_u64(dac.shift, u64::from(shift))?;
        }
        Ok(())
    }

    /// Each core's DAC pair through its link into its ADC input.
    fn play_links(
        &mut self,
        pins: &mut (impl Pins + ?Sized),
        p: &LoopPins,
    ) -> Result<(), DutError> {
        let now = match self.phase {
            Phase::Run(t) => t,
            _ => 0,
        };
        for (core, link) in self.links.iter_mut().enumerate() {
            let (da, dw) = (&p.dacs[2 * core], &p.dacs[2 * core + 1]);
            let a = read_word(pins, da.tdata)?;
            let w = read_word(pins, dw.tdata)?;
            let lit = pins.get_u64(da.tvalid)? != 0 || pins.get_u64(dw.tvalid)? != 0;
            if lit {
                self.run.off_format_dac_samples += off_format(&a, true) + off_format(&w, false);
            }
            let adc = link.step(&a, &w, lit);
            let stopped = self
                .controls
                .adc_stop
                .iter()
                .any(|&(stop_core, at)| stop_core == core && now >= at);
            let cp = &p.cores[core];
            pins.set_u64(cp.adc_tvalid, u64::from(!stopped))?;
            pins.set(cp.adc_tdata, &pack_bus(&adc))?;
        }
        Ok(())
    }

    /// The weight sources (AXI-Stream masters, one per core): a source offers
    /// its next word unless it stalls, holds it until `w{c}_tready` (which
    /// depends on no input), and advances on the handshake.
    fn feed_weights(
        &mut self,
        pins: &mut (impl Pins + ?Sized),
        p: &LoopPins,
        words: &[Vec<[u64; 3]>],
        running: bool,
    ) -> Result<(), DutError> {
        let stall = self.controls.weight_stall_percent;
        let now = match self.phase {
            Phase::Run(t) => t,
            _ => 0,
        };
        for (c, feed) in self.feed.iter_mut().enumerate() {
            let Some([tvalid, tdata, tready]) = p.cores.get(c).and_then(|cp| cp.weights) else {
                continue;
            };
            let core_words = words.get(c).map(Vec::as_slice).unwrap_or(&[]);
            // A stopped source offers no new word; one it offers stays offered
            // until taken, as AXI-Stream requires.
            let stopped = self
                .controls
                .weight_stop
                .iter()
                .any(|&(core, at)| core == c && now >= at);
            let rested = feed
                .taken_at
                .is_none_or(|t| now >= t + self.controls.weight_gap);
            if running && !stopped && rested && !feed.offering && feed.next < core_words.len() {
                feed.offering = self.stall_rng.gen_range(0..100) >= stall;
            }
            let data = core_words.get(feed.next).copied().unwrap_or([0; 3]);
            pins.set_u64(tvalid, u64::from(feed.offering))?;
            pins.set(tdata, &data)?;
            if feed.offering && pins.is_high(tready)? {
                feed.next += 1;
                feed.offering = false;
                feed.taken_at = Some(now);
            }
        }
        Ok(())
    }

    /// Records what the outputs show `t` cycles after the start cycle.
    fn observe(
        &mut self,
        pins: &mut (impl Pins + ?Sized),
        p: &LoopPins,
        t: u64,
    ) -> Result<(), DutError> {
        let s = &p.status;
        let layer = pins.get_u64(s.layer)?;
        if layer != self.layer {
            self.close_layer();
            self.layer = layer;
            self.dac_seen = false;
        }
        let l = self.layer;
        let dac0 = &p.dacs[0];
        let dac0_valid = pins.is_high(dac0.tvalid)?;
        if dac0_valid && read_word(pins, dac0.tdata)? != activation_preamble() {
            self.run.observed_dac_beats += 1;
        }
        if dac0_valid && !self.dac_seen {
            self.dac_seen = true;
            self.event(t, format!("layer {l}: DAC valid (preamble)"));
        }
        if pins.is_high(s.fire)? {
            if self.last_fire.is_none() {
                self.event(t, format!("layer {l}: {FIRST_BEAT}"));
            }
            self.last_fire = Some(t);
        }
        let locked = pins.is_high(s.locked)?;
        if locked && !self.locked {
            self.event(t, format!("layer {l}: ADC window open"));
        }
        self.locked = locked;
        let valid = pins.get_u64(s.logit_valid)?;
        if valid != 0 {
            self.take_logits(pins, s, valid)?;
        }
        if pins.is_high(s.done)? {
            self.close_layer();
            self.event(t, "done".into());
            self.run.timeline.sort_by_key(|e| e.cycle);
            self.run.done = true;
            self.run.failed = pins.is_high(s.failed)?;
            self.run.fail_reason = pins.get_u64(s.fail_reason)?;
            let mut counters = [0u64; 7];
            for (v, &pin) in counters.iter_mut().zip(&s.counters) {
                *v = pins.get_u64(pin)?;
            }
            let r = &mut self.run;
            [
                r.cycles,
                r.dac_start_cycle,
                r.window_open_cycle,
                r.busy_dac_cycles,
                r.busy_photonic_cycles,
                r.busy_decode_cycles,
                r.compute_cycles,
            ] = counters;
        }
        Ok(())
    }

    /// The logits of the cores whose bit of `valid` is set.
    fn take_logits(
        &mut self,
        pins: &mut (impl Pins + ?Sized),
        s: &super::loop_pins::StatusPins,
        valid: u64,
    ) -> Result<(), DutError> {
        pins.get_into(s.logit_data, &mut self.logit_data)?;
        pins.get_into(s.logit_index, &mut self.logit_index)?;
        let (aw, iw) = (self.shape.acc_width, self.shape.index_width);
        for c in 0..self.shape.cores {
            if valid >> c & 1 == 1 {
                let raw = field(&self.logit_data, c as u32 * aw, aw);
                let sh = 64 - aw;
                self.run.logits.push(((raw << sh) as i64) >> sh);
                self.run
                    .logit_indices
                    .push(field(&self.logit_index, c as u32 * iw, iw));
            }
        }
        Ok(())
    }

    fn close_layer(&mut self) {
        if let Some(f) = self.last_fire.take() {
            let l = self.layer;
            self.event(f, format!("layer {l}: streamer fires the last data beat"));
        }
    }
}

/// The samples of a DAC word that are neither `v << 7` nor, on an activation
/// DAC, the preamble's `0xFFFF` (which a DAC's sample shift mixes into the
/// words around it).
pub(super) fn off_format(word: &Word, activations: bool) -> u64 {
    const OUTSIDE_VALUE: u16 = 0x807F;
    // Every cycle of a run: one OR over the word decides for data words.
    if word.iter().fold(0, |any, &s| any | s) & OUTSIDE_VALUE == 0 {
        return 0;
    }
    let preamble = activation_preamble()[0];
    word.iter()
        .filter(|&&s| s & OUTSIDE_VALUE != 0 && !(activations && s == preamble))
        .count() as u64
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

/// The 256-bit sample bus on `pin` as samples.
fn read_word(pins: &mut (impl Pins + ?Sized), pin: Pin) -> Result<Word, DutError> {
    let mut words = [0u64; 4];
    pins.get_into(pin, &mut words)?;
    Ok(unpack_bus(&words))
}

/// Runs one image through the closed loop on `dut` (already reset), core *c*
/// through `links[c]`: an [`ImageLoop`] of one image.
pub fn run_image<C: PhotonicCore>(
    dut: &mut dyn Dut,
    links: &mut [PhotonicLink<C>],
    image: &[u8],
    shape: PortShape,
    controls: &LoopControls,
) -> Result<LoopRun, DutError> {
    ImageLoop::new(shape, controls).run(dut, links, image)
}

/// Images run one after another through the closed loop on one datapath: its
/// ports are looked up by name once, at the first image's first cycle, and the
/// handles serve every image after it. Every run must be on that `Dut` (or on one
/// of the same design: the handles are port indices).
pub struct ImageLoop<'c> {
    shape: PortShape,
    controls: &'c LoopControls,
    pins: Option<LoopPins>,
}

impl<'c> ImageLoop<'c> {
    /// Images on a datapath of `shape`, under `controls`.
    pub fn new(shape: PortShape, controls: &'c LoopControls) -> Self {
        ImageLoop {
            shape,
            controls,
            pins: None,
        }
    }

    /// Runs `image` on `dut` (reset before the first image; each image starts
    /// where the last left the datapath, idle), core *c* through `links[c]`.
    ///
    /// Kept out of line, so that the cycle loop's code does not grow with
    /// whatever its callers inline around it: inlined into `test_set::pass` by an
    /// unrelated change, it took the instruction cache misses of a Lightning cycle
    /// (cachegrind, `sim lightning`) from 389 to 547 on the compiled engine and
    /// from 24 to 122 on Verilator's.
    #[inline(never)]
    pub fn run<C: PhotonicCore>(
        &mut self,
        dut: &mut dyn Dut,
        links: &mut [PhotonicLink<C>],
        image: &[u8],
    ) -> Result<LoopRun, DutError> {
        let mut driver = LoopDriver::new(links, image, self.shape.clone(), self.controls);
        driver.pins = self.pins.take();
        loop {
            driver.cycle(&mut &mut *dut)?;
            if driver.finished() {
                let (run, pins) = driver.into_parts();
                self.pins = pins;
                return Ok(run);
            }
            dut.step();
        }
    }
}
