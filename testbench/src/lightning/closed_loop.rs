//! The closed loop: a generated `lightning_datapath` on any engine, its DAC
//! outputs through a [`PhotonicLink`] back into its ADC input, every cycle.
//!
//! [`LoopDriver`] is one image's run as a state machine over named pins, so the
//! same code drives a single [`Dut`] ([`run_image`]) or both engines in lockstep
//! through the differential harness (its `Step` implements [`Pins`]).

use hdl::lightning::config::DatapathConfig as HwConfig;

use super::arith::{pack_bus, unpack_bus, AccWidth, OpticalLoss};
use super::golden::Network;
use super::link::{PhotonicLink, Word};
use super::photonic::PhotonicCore;
use crate::dut::{Dut, DutError};
use crate::harness::Step;

/// The generator configuration of `network` with an `acc_width`-bit accumulator.
pub fn hardware_config(network: &Network, acc_width: AccWidth) -> HwConfig {
    let mut layers = vec![network.inputs() as u32];
    layers.extend(network.layers().iter().map(|l| l.outputs() as u32));
    HwConfig {
        layers,
        acc_width: acc_width.bits(),
        shifts: network.layers().iter().map(|l| l.shift()).collect(),
        weights: network
            .layers()
            .iter()
            .map(|l| {
                l.weights()
                    .iter()
                    .flat_map(|row| row.iter().map(|w| w.signed()))
                    .collect()
            })
            .collect(),
        cores: 1,
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
    /// The `optical_loss` register.
    pub optical_loss: OpticalLoss,
    /// Preamble cycles per layer.
    pub preamble_length: u32,
    /// Detector timeout (cycles after a layer starts).
    pub timeout: u32,
    /// Whole-cycle delay of DAC 0 and DAC 1.
    pub dac_delay: [u32; 2],
    /// Intra-cycle shift of DAC 0 and DAC 1.
    pub dac_shift: [u32; 2],
    /// Give up after this many cycles from `start` (a hang is a test failure).
    pub max_cycles: u64,
}

impl Default for LoopControls {
    /// Lossless, 10-cycle preambles, a 2000-cycle timeout, no DAC alignment.
    fn default() -> Self {
        LoopControls {
            optical_loss: OpticalLoss::UNITY,
            preamble_length: 10,
            timeout: 2000,
            dac_delay: [0; 2],
            dac_shift: [0; 2],
            max_cycles: 1_000_000,
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
    /// Logits in neuron order (sign-extended from the accumulator width).
    pub logits: Vec<i64>,
    /// `done` rose within `max_cycles`.
    pub done: bool,
    /// The datapath's `failed` status.
    pub failed: bool,
    /// The `cycles` counter (start to done).
    pub cycles: u64,
    /// The `dac_start_cycle` counter.
    pub dac_start_cycle: u64,
    /// The `window_open_cycle` counter.
    pub window_open_cycle: u64,
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
    link: &'a mut PhotonicLink<C>,
    image: Vec<u8>,
    controls: LoopControls,
    acc_width: u32,
    phase: Phase,
    run: LoopRun,
    layer: u64,
    dac_seen: bool,
    locked: bool,
    last_fire: Option<u64>,
}

impl<'a, C: PhotonicCore> LoopDriver<'a, C> {
    /// A driver for `image` (8-bit inputs) on a datapath with `acc_width`.
    pub fn new(
        link: &'a mut PhotonicLink<C>,
        image: &[u8],
        acc_width: u32,
        controls: &LoopControls,
    ) -> Self {
        LoopDriver {
            link,
            image: image.to_vec(),
            controls: controls.clone(),
            acc_width,
            phase: Phase::Load(0),
            run: LoopRun::default(),
            layer: 0,
            dac_seen: false,
            locked: false,
            last_fire: None,
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
        pins.write("optical_loss", &[u64::from(c.optical_loss.0)]);
        pins.write("preamble_length", &[u64::from(c.preamble_length)]);
        pins.write("timeout", &[u64::from(c.timeout)]);
        for i in 0..2 {
            pins.write(&format!("dac{i}_delay"), &[u64::from(c.dac_delay[i])]);
            pins.write(&format!("dac{i}_shift"), &[u64::from(c.dac_shift[i])]);
        }
        let a = word(&pins.read("dac0_tdata"));
        let w = word(&pins.read("dac1_tdata"));
        let lit = pins.read("dac0_tvalid") != [0] || pins.read("dac1_tvalid") != [0];
        let adc = self.link.step(&a, &w, lit);
        pins.write("adc_tvalid", &[1]);
        pins.write("adc_tdata", &pack_bus(&adc));
        pins.write("start", &[0]);
        pins.write("load_valid", &[0]);
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
        if one(pins, "dac0_tvalid") == 1 && !self.dac_seen {
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
        if one(pins, "logit_valid") == 1 {
            let raw = one(pins, "logit_data");
            let sh = 64 - self.acc_width;
            self.run.logits.push(((raw << sh) as i64) >> sh);
        }
        if one(pins, "done") == 1 {
            self.close_layer();
            self.event(t, "done".into());
            self.run.timeline.sort_by_key(|e| e.cycle);
            self.run.done = true;
            self.run.failed = one(pins, "failed") == 1;
            self.run.cycles = one(pins, "cycles");
            self.run.dac_start_cycle = one(pins, "dac_start_cycle");
            self.run.window_open_cycle = one(pins, "window_open_cycle");
        }
    }

    fn close_layer(&mut self) {
        if let Some(f) = self.last_fire.take() {
            let l = self.layer;
            self.event(f, format!("layer {l}: streamer fires the last data beat"));
        }
    }
}

fn word(words: &[u64]) -> Word {
    let mut a = [0u64; 4];
    for (dst, src) in a.iter_mut().zip(words) {
        *dst = *src;
    }
    unpack_bus(&a)
}

/// Runs one image through the closed loop on `dut` (already reset).
pub fn run_image<C: PhotonicCore>(
    dut: &mut dyn Dut,
    link: &mut PhotonicLink<C>,
    image: &[u8],
    acc_width: u32,
    controls: &LoopControls,
) -> Result<LoopRun, DutError> {
    let mut driver = LoopDriver::new(link, image, acc_width, controls);
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
