//! The check a Lightning datapath's mutants face ([`crate::mutation`]): the
//! kinds of thing `lightning_datapath`'s tests check, on one small
//! datapath ([`Subject`], three cores), in runs short enough to repeat for hundreds of
//! mutants. Every run is bounded by [`MAX_CYCLES`] (the weight trickle by its
//! own bound), so a mutant that never finishes is killed, not waited for.
//!
//! Every run, whatever its end: the `cycles`, `dac_start_cycle` and
//! `window_open_cycle` counters equal what the bench saw on the ports
//! ([`LoopRun::counters_unlike_ports`]). Every exact run: logits and their
//! indices equal to the golden model's, every DAC sample in the bus format
//! ([`LoopRun::off_format_dac_samples`]), and the busy counters in their
//! stages' order ([`LoopRun::busy_counters_out_of_order`]). Every exact run
//! with no DAC shifted and each core's two DACs delayed alike (all but check
//! 3's and the one after the dark core): every core's activation modulator
//! lit with exactly the golden activations, in order, from the load before
//! the run to its `done` (each layer's inputs once per round; an activation
//! the logits round away, or a beat a failed run left behind, still reaches
//! the light).
//!
//! 1. **Exact, saturating.** The image of all 255s, whose accumulators saturate
//!    both ways (the subject's network has a row of +255 and one of −255
//!    weights in each layer), through cores with their own latency and sample
//!    shift, a DAC delay, a short preamble and a loss register of 1.5 that
//!    clamps products (and, with streamed weights, a stalling weight DMA):
//!    `busy_dac_cycles` and the DAC words the bench saw equal to the beats the
//!    network's shape asks for.
//! 2. **Timing.** A random image at photonic latency 10 on every core, then
//!    17 on every core, then 10, 13 and 17: the datapath waits for its slowest
//!    core, so 7 cycles more latency cost exactly 7 cycles per layer in
//!    `cycles`, `compute_cycles` and `busy_photonic_cycles`, nothing in the DAC
//!    and decode counts; `busy_decode_cycles` is the beats plus
//!    [`DECODE_LATENCY`] per layer. A DAC delay of 4 costs 4 cycles in
//!    `dac_start_cycle` and 4 per layer in `cycles`. In every run the window
//!    opens where the detector's documented latency puts it: at
//!    `dac_start_cycle` plus the slowest core's latency, the lock length
//!    (`preamble_length` − 1, at least 1) and 3, with preambles of 1, 2 and 10
//!    cycles.
//! 3. **Operand skew.** Each core's weight modulator lags its activations by
//!    its own number of samples (19, 5 and 33), evened out by the activation DAC's
//!    delay and shift registers: exact.
//! 4. **Failures, each followed by an exact run on the same datapath.** Light
//!    lost mid-layer on one core and on all: [`FAIL_LOST_LIGHT`] `timeout` to
//!    `timeout` + 3 cycles after the cut. A dark core: [`FAIL_NO_LOCK`] within
//!    `timeout` + 10 cycles (`timeout` 100 here, so that a streamed layer's
//!    sign FIFO is not full yet), no logits; it and the exact run after it
//!    with every DAC delayed by 20 cycles and shifted by 5 samples, so that
//!    the failed run's beats are still in the aligners' history when the next
//!    starts. Paths [`SKEW_DEPTH`] − 2 cycles apart: exact; [`SKEW_DEPTH`] − 1 apart (the join accepts the cycle after
//!    every buffer holds a word, so the faster core's buffer reaches the
//!    difference + 1 words):
//!    [`FAIL_SKEW`]; the same skew compensated by DAC delays: exact.
//! 5. **Streamed weights only.** A DMA that stops mid-layer: [`FAIL_WEIGHTS`]
//!    `timeout` to `timeout` + 2 cycles after it stops; one that trickles a word
//!    every `timeout` − 5 cycles: exact; every `timeout` + 5: [`FAIL_WEIGHTS`].
//!    The round trip at its bound: 7 + `dac_delay` + latency =
//!    [`SIGN_FIFO_DEPTH`] − 1 cycles exact, one more [`FAIL_ROUND_TRIP`].

use super::arith::{encode_sample, AccWidth, OpticalLoss, ACC_WIDTH_MIN, SAMPLES_PER_CYCLE};
use super::closed_loop::{hardware_config, run_image, LoopControls, LoopRun, PortShape};
use super::golden::{infer, DatapathConfig, Inference, Layer, Network};
use super::link::PhotonicLink;
use super::photonic::{IdealCore, PhotonicCore};
use crate::dut::{Dut, NativeDut};
use crate::rng::derived;
use hdl::lightning::bus::activation_preamble;
use hdl::lightning::config::{DatapathConfig as HwConfig, WeightSource};
use hdl::lightning::datapath::{
    datapath, FAIL_LOST_LIGHT, FAIL_NONE, FAIL_NO_LOCK, FAIL_ROUND_TRIP, FAIL_SKEW, FAIL_WEIGHTS,
    SIGN_FIFO_DEPTH, SKEW_DEPTH,
};
use hdl::lightning::decode::DECODE_LATENCY;
use hdl::Module;
use rand::Rng;
use sim::Backend;
use std::collections::VecDeque;
use std::ops::RangeInclusive;

/// The cycle bound of every run but the weight trickle's.
pub const MAX_CYCLES: u64 = 20_000;

/// The detector and watchdog timeout of most runs.
const TIMEOUT: u32 = 200;

/// The detector timeout of the dark-core run: below the beats a streamed
/// layer fires before the sign FIFO is full, so that the detector, not the
/// FIFO, gives up first.
const DARK_TIMEOUT: u32 = 100;

/// The DAC delay of the dark-core run and the exact run after it, which
/// starts (after the image's 6-cycle load) well within that many cycles of the
/// failure: an aligner that served words from before its flush would light the
/// new run's first cycles with the failed run's beats.
const DARK_DAC_DELAY: u32 = 20;

/// The DAC shift of the same runs: a shifted word carries samples of the word
/// before it, so the aligners' second tap reads into the history too.
const DARK_DAC_SHIFT: u32 = 5;

/// Photonic cores of the subject: three, so that a layer's rounds do not
/// divide the 16 lanes of an activation word.
const CORES: usize = 3;

/// Layer sizes of the subject's network. Layer 0 streams 24 rounds of 6 beats
/// per core, more than both [`SKEW_DEPTH`] and [`SIGN_FIFO_DEPTH`] hold; its
/// last round (neurons 69 and 70) is partial, so a padding lane (input 71 of
/// layer 1) is written back and streamed; layer 1's last round (neurons 30–32)
/// spills past an activation word's 16 lanes; three weight layers, so that the
/// layer counter counts past 1 and both activation banks hold a hidden layer.
const SIZES: [usize; 4] = [96, 71, 33, 5];

// A partial last round in the first hidden layer, whose padding lane falls
// inside the words the next layer streams.
const _: () =
    assert!(!SIZES[1].is_multiple_of(CORES) && !SIZES[1].is_multiple_of(SAMPLES_PER_CYCLE));

/// The subject's normalization shifts: small, so that hidden neurons clamp at
/// 255 and the last layer's sums saturate.
const SHIFTS: [u32; 3] = [2, 0, 0];

/// The subject's accumulator width: the narrowest, so that sums saturate.
const ACC_BITS: u32 = ACC_WIDTH_MIN;

/// The cycles the round trip takes beyond the DAC delay and the photonic
/// latency (streamer, DAC pipeline, detector), per the datapath's docs.
const ROUND_TRIP_OVERHEAD: usize = 7;

/// The datapath the mutants are made from, and what the check needs to know
/// of it: a network of layers 96–71–33–5 on three photonic cores with a 13-bit
/// accumulator, random weights but for rows 1 (all +255) and 2 (all −255) of
/// each layer; row 0 is random, so that neuron 0, the first lane of each
/// hidden layer's first word, is not pinned at 255.
pub struct Subject {
    /// The network the datapath computes.
    pub network: Network,
    /// Its accumulator width.
    pub acc: AccWidth,
    /// The unmutated datapath.
    pub module: Module,
    /// Its ports' shape.
    pub shape: PortShape,
    /// The images the runs use: all 255s (saturating), then a random one.
    images: [Vec<u8>; 2],
}

impl Subject {
    /// The subject with its weights in on-chip memory or streamed by a DMA; an
    /// error if its images do not exercise what the check relies on.
    pub fn new(weights: WeightSource) -> Result<Subject, String> {
        // Seed 14 is the first whose all-255 image drives the logits to both
        // accumulator bounds (`Subject::exercises` checks it).
        let mut rng = derived(14, "lightning mutants");
        let layers = SIZES
            .windows(2)
            .zip(SHIFTS)
            .map(|(pair, shift)| {
                let mut rows: Vec<Vec<i32>> = (0..pair[1])
                    .map(|_| (0..pair[0]).map(|_| rng.gen_range(-255..=255)).collect())
                    .collect();
                rows[1] = vec![255; pair[0]];
                rows[2] = vec![-255; pair[0]];
                Layer::from_signed(&rows, shift)
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;
        let network = Network::new(layers).map_err(|e| e.to_string())?;
        let acc = AccWidth::new(ACC_BITS).map_err(|e| e.to_string())?;
        let config = HwConfig {
            weight_source: weights,
            ..hardware_config(&network, acc, CORES as u32)
        };
        let module = datapath(&config).map_err(|e| e.to_string())?;
        let random = (0..SIZES[0]).map(|_| rng.gen()).collect();
        let subject = Subject {
            network,
            acc,
            module,
            shape: PortShape::of(&config),
            images: [vec![u8::MAX; SIZES[0]], random],
        };
        subject.exercises()?;
        Ok(subject)
    }

    /// Whether the images exercise what the check relies on, under the golden
    /// model: image 0 saturates accumulators, clamps and zeroes hidden
    /// neurons, and drives the logits to both bounds; and some image leaves
    /// bit 0 of a hidden layer's neuron 0 clear (a collector that starts a
    /// layer with stray bits shows there).
    fn exercises(&self) -> Result<(), String> {
        let cfg = DatapathConfig {
            acc_width: self.acc,
            optical_loss: OpticalLoss::UNITY,
        };
        let goldens = self
            .images
            .iter()
            .map(|image| infer(&self.network, image, &cfg).map_err(|e| e.to_string()))
            .collect::<Result<Vec<_>, _>>()?;
        let g = &goldens[0];
        let hidden = &g.activations[0];
        let top = (1i64 << (ACC_BITS - 1)) - 1;
        let reached = [
            g.saturations > 0,
            hidden.contains(&u8::MAX),
            hidden.contains(&0),
            g.logits.contains(&top),
            g.logits.contains(&(-top - 1)),
        ];
        if !reached.iter().all(|&r| r) {
            return Err(format!(
                "degenerate subject: image 0 reaches [saturation, 255, 0, max, min] {reached:?}"
            ));
        }
        let even_neuron_0 = goldens
            .iter()
            .flat_map(|g| &g.activations)
            .any(|layer| layer[0].is_multiple_of(2));
        match even_neuron_0 {
            true => Ok(()),
            false => Err("degenerate subject: every hidden layer's neuron 0 is odd".into()),
        }
    }

    /// Whether the weights are streamed.
    fn streamed(&self) -> bool {
        self.shape.weight_stream.is_some()
    }

    /// The golden inference of image `i` with every core's loss register at
    /// `loss`.
    fn golden(&self, i: usize, loss: OpticalLoss) -> Result<Inference, String> {
        let cfg = DatapathConfig {
            acc_width: self.acc,
            optical_loss: loss,
        };
        let golden = infer(&self.network, &self.images[i], &cfg).map_err(|e| e.to_string())?;
        if golden.logits.iter().all(|&v| v == 0) {
            return Err(format!("degenerate subject: image {i}'s logits are all 0"));
        }
        Ok(golden)
    }

    /// The activation samples every core's modulator is lit with in a run of
    /// image `i` whose `golden` inference this is, the preamble's aside: in
    /// each layer, once per round of [`CORES`] neurons, the layer's inputs (the
    /// image, then the previous layer's outputs) zero-padded to whole 16-sample
    /// words, each sample `v << 7`.
    fn activation_stream(&self, i: usize, golden: &Inference) -> Vec<u16> {
        let inputs = std::iter::once(&self.images[i]).chain(&golden.activations);
        let mut stream = Vec::new();
        for (layer, x) in self.network.layers().iter().zip(inputs) {
            let padded = x.len().next_multiple_of(SAMPLES_PER_CYCLE);
            for _ in 0..layer.outputs().div_ceil(CORES) {
                let samples = x.iter().copied().chain(std::iter::repeat(0));
                stream.extend(samples.take(padded).map(encode_sample));
            }
        }
        stream
    }

    /// The DAC data beats per core the network's shape asks for: ⌈outputs /
    /// cores⌉ rounds of ⌈inputs / 16⌉ beats per layer.
    fn beats(&self) -> u64 {
        SIZES
            .windows(2)
            .map(|p| (p[1].div_ceil(CORES) * p[0].div_ceil(16)) as u64)
            .sum()
    }
}

/// Runs the checks on `mutant`, a (mutated) copy of `subject.module`; the error
/// says what the first failing one saw.
pub fn check(subject: &Subject, mutant: &Module) -> Result<(), String> {
    let mut dut = NativeDut::with_backend(mutant, Backend::Compiled).map_err(|e| e.to_string())?;
    dut.reset(2);
    let mut bench = Bench {
        subject,
        dut: &mut dut,
        lit: Vec::new(),
    };
    bench.exact_saturating()?;
    bench.timing()?;
    bench.operand_skew()?;
    bench.lost_light()?;
    bench.dark_core()?;
    bench.cores_apart()?;
    if subject.streamed() {
        bench.weight_failures()?;
        bench.round_trip()?;
    }
    Ok(())
}

/// What a photonic core of the check does with its light.
#[derive(Clone)]
enum Behaviour {
    /// Works.
    Ideal,
    /// Returns no light.
    Dark,
    /// Its weight modulator sees its samples late (by the samples its delay
    /// line holds).
    Skewed(VecDeque<u16>),
}

/// A photonic core of the check, which records the activation samples its
/// modulator was lit with, in order.
#[derive(Clone)]
struct Core {
    behaviour: Behaviour,
    activations: Vec<u16>,
}

impl Core {
    /// A core that works.
    const IDEAL: Core = Core::new(Behaviour::Ideal);

    /// A core that behaves so, with nothing recorded yet.
    const fn new(behaviour: Behaviour) -> Core {
        Core {
            behaviour,
            activations: Vec::new(),
        }
    }

    /// A core whose weights lag its activations by `skew` samples.
    fn skewed(skew: usize) -> Core {
        Core::new(Behaviour::Skewed(std::iter::repeat_n(0, skew).collect()))
    }
}

impl PhotonicCore for Core {
    fn transmit(&mut self, activation: u16, weight: u16) -> u16 {
        self.activations.push(activation);
        match &mut self.behaviour {
            Behaviour::Ideal => IdealCore.transmit(activation, weight),
            Behaviour::Dark => 0,
            Behaviour::Skewed(line) => {
                line.push_back(weight);
                let late = line.pop_front().unwrap_or(0);
                IdealCore.transmit(activation, late)
            }
        }
    }
}

/// The subject's runs on one mutant.
struct Bench<'a> {
    subject: &'a Subject,
    dut: &'a mut NativeDut,
    /// The activation samples each core's modulator was lit with in the last
    /// run, the preamble's aside.
    lit: Vec<Vec<u16>>,
}

impl Bench<'_> {
    /// Image `i` through one link per core, core *c* = `cores[c]` at
    /// `paths[c]` = (latency, shift); the counters checked against the ports.
    fn run(
        &mut self,
        i: usize,
        paths: &[(usize, usize)],
        cores: Vec<Core>,
        controls: &LoopControls,
    ) -> Result<LoopRun, String> {
        let mut links: Vec<_> = paths
            .iter()
            .zip(cores)
            .map(|(&(latency, shift), core)| PhotonicLink::new(core, latency, shift))
            .collect();
        let image = &self.subject.images[i];
        let run = run_image(
            self.dut,
            &mut links,
            image,
            self.subject.shape.clone(),
            controls,
        )
        .map_err(|e| e.to_string())?;
        let preamble = activation_preamble()[0];
        self.lit = links
            .iter()
            .map(|l| {
                let samples = l.core().activations.iter().copied();
                samples.filter(|&a| a != preamble).collect()
            })
            .collect();
        if let Some(wrong) = run.counters_unlike_ports().first() {
            return Err(format!("image {i} at {paths:?}: {wrong}"));
        }
        Ok(run)
    }

    /// `run`, the last run, of image `i` under `controls`: exact under
    /// `loss` ([`exact`]), and, if no DAC is shifted and each core's two DACs
    /// are delayed alike (so that every lit activation sample is one of the
    /// stream's, in place), every core's modulator lit with the golden
    /// activations in order ([`Subject::activation_stream`]): a wrong
    /// activation that the logits round away still reaches the light.
    fn exact_run(
        &self,
        run: &LoopRun,
        i: usize,
        loss: OpticalLoss,
        controls: &LoopControls,
        what: &str,
    ) -> Result<(), String> {
        let golden = self.subject.golden(i, loss)?;
        exact(run, &golden.logits, what)?;
        let delay = |j: usize| controls.dac_delay.get(j).copied().unwrap_or(0);
        let unshifted = controls.dac_shift.iter().all(|&s| s == 0);
        if !unshifted || (0..CORES).any(|c| delay(2 * c) != delay(2 * c + 1)) {
            return Ok(());
        }
        let expected = self.subject.activation_stream(i, &golden);
        for (c, lit) in self.lit.iter().enumerate() {
            if let Some(k) =
                (0..expected.len().max(lit.len())).find(|&k| lit.get(k) != expected.get(k))
            {
                return Err(format!(
                    "{what}: core {c}'s activation sample {k} (of {}) is {:?}, golden {:?}",
                    expected.len(),
                    lit.get(k).map(|&a| a >> 7),
                    expected.get(k).map(|&a| a >> 7),
                ));
            }
        }
        Ok(())
    }

    /// Image `i` on ideal cores.
    fn ideal(
        &mut self,
        i: usize,
        paths: &[(usize, usize)],
        controls: &LoopControls,
    ) -> Result<LoopRun, String> {
        self.run(i, paths, vec![Core::IDEAL; CORES], controls)
    }

    /// Image `i` on ideal cores at `paths`, which must be exact and open its
    /// window where the detector's latency puts it (see the module docs).
    fn timed(
        &mut self,
        i: usize,
        paths: &[(usize, usize)],
        controls: &LoopControls,
        what: &str,
    ) -> Result<LoopRun, String> {
        let run = self.ideal(i, paths, controls)?;
        self.exact_run(&run, i, OpticalLoss::UNITY, controls, what)?;
        let slowest = paths.iter().map(|&(latency, _)| latency).max().unwrap_or(0);
        let lock = u64::from(controls.preamble_length.saturating_sub(1).max(1));
        let opens = run.dac_start_cycle + slowest as u64 + lock + 3;
        if run.window_open_cycle != opens {
            return Err(format!(
                "{what}: window open at {}, {opens} expected",
                run.window_open_cycle
            ));
        }
        Ok(run)
    }

    /// Check 1 (see the module docs).
    fn exact_saturating(&mut self) -> Result<(), String> {
        let loss = OpticalLoss(0x0180);
        let controls = LoopControls {
            optical_loss: vec![loss; CORES],
            preamble_length: 7,
            timeout: TIMEOUT,
            dac_delay: vec![5; 2 * CORES],
            max_cycles: MAX_CYCLES,
            weight_stall_percent: 30,
            weight_stall_seed: 5,
            ..LoopControls::default()
        };
        let run = self.ideal(0, &[(8, 3), (13, 11), (11, 6)], &controls)?;
        self.exact_run(&run, 0, loss, &controls, "saturating, loss 1.5")?;
        let beats = self.subject.beats();
        if (run.busy_dac_cycles, run.observed_dac_beats) != (beats, beats) {
            return Err(format!(
                "saturating: busy_dac_cycles {}, DAC words seen {}, {beats} beats expected",
                run.busy_dac_cycles, run.observed_dac_beats
            ));
        }
        Ok(())
    }

    /// Check 2 (see the module docs).
    fn timing(&mut self) -> Result<(), String> {
        let controls = bounded(TIMEOUT);
        let layers = (SIZES.len() - 1) as u64;
        let mut runs = vec![];
        for paths in [
            [(10, 3); CORES],
            [(17, 3); CORES],
            [(10, 3), (13, 3), (17, 3)],
        ] {
            let what = format!("paths {paths:?}");
            let run = self.timed(1, &paths, &controls, &what)?;
            let decode = self.subject.beats() + layers * u64::from(DECODE_LATENCY);
            if run.busy_decode_cycles != decode {
                return Err(format!(
                    "{what}: busy_decode_cycles {}, {decode} expected",
                    run.busy_decode_cycles
                ));
            }
            runs.push(run);
        }
        for z in &runs[1..] {
            later_by(&runs[0], z, 7 * layers, "7 cycles more latency")?;
        }
        let delayed = LoopControls {
            dac_delay: vec![4; 2 * CORES],
            ..controls.clone()
        };
        let run = self.timed(1, &[(10, 3); CORES], &delayed, "DAC delay 4")?;
        let a = &runs[0];
        if (run.dac_start_cycle, run.cycles) != (a.dac_start_cycle + 4, a.cycles + 4 * layers) {
            return Err(format!(
                "DAC delay 4: dac_start_cycle {} and cycles {}, against {} and {} without",
                run.dac_start_cycle, run.cycles, a.dac_start_cycle, a.cycles
            ));
        }
        for preamble_length in [1, 2] {
            let short = LoopControls {
                preamble_length,
                ..controls.clone()
            };
            let what = format!("preamble of {preamble_length}");
            self.timed(1, &[(10, 3), (12, 9), (11, 0)], &short, &what)?;
        }
        Ok(())
    }

    /// Check 3 (see the module docs).
    fn operand_skew(&mut self) -> Result<(), String> {
        let skews = [19usize, 5, 33];
        let mut controls = LoopControls {
            dac_delay: vec![0; 2 * CORES],
            dac_shift: vec![0; 2 * CORES],
            ..bounded(TIMEOUT)
        };
        for (c, &s) in skews.iter().enumerate() {
            controls.dac_delay[2 * c] = (s / 16) as u32;
            controls.dac_shift[2 * c] = (s % 16) as u32;
        }
        let cores = skews.iter().map(|&s| Core::skewed(s)).collect();
        let run = self.run(1, &[(4, 1), (6, 14), (5, 7)], cores, &controls)?;
        let what = format!("operand skews {skews:?} evened out");
        self.exact_run(&run, 1, OpticalLoss::UNITY, &controls, &what)
    }

    /// An exact run under `controls` after a failure: the datapath recovers
    /// by itself.
    fn recovers(&mut self, after: &str, controls: &LoopControls) -> Result<(), String> {
        let what = format!("after {after}");
        self.timed(1, &[(8, 3), (9, 3), (8, 12)], controls, &what)
            .map(|_| ())
    }

    /// The cycles, in a reference run at `paths`, of the timeline events whose
    /// text ends in `event`, layer by layer.
    fn reference(&mut self, paths: &[(usize, usize)], event: &str) -> Result<Vec<u64>, String> {
        let run = self.timed(1, paths, &bounded(TIMEOUT), "reference run")?;
        Ok(run
            .timeline
            .iter()
            .filter(|e| e.what.ends_with(event))
            .map(|e| e.cycle)
            .collect())
    }

    /// Check 4, light lost mid-layer (see the module docs).
    fn lost_light(&mut self) -> Result<(), String> {
        let paths = [(8, 3), (9, 3), (8, 12)];
        let opens = self.reference(&paths, "ADC window open")?;
        let (Some(&layer0), Some(&layer1)) = (opens.first(), opens.get(1)) else {
            return Err(format!("reference run: ADC windows opened at {opens:?}"));
        };
        for (what, at, cores) in [
            ("core 1's light lost in layer 0", layer0 + 20, vec![1]),
            (
                "every core's light lost in layer 1",
                layer1 + 1,
                vec![0, 1, 2],
            ),
        ] {
            let controls = LoopControls {
                adc_stop: cores.iter().map(|&c| (c, at)).collect(),
                ..bounded(TIMEOUT)
            };
            let run = self.ideal(1, &paths, &controls)?;
            let t = u64::from(TIMEOUT);
            fails(&run, FAIL_LOST_LIGHT, at + t..=at + t + 3, what)?;
            self.recovers(what, &bounded(TIMEOUT))?;
        }
        Ok(())
    }

    /// Check 4, a dark core (see the module docs).
    fn dark_core(&mut self) -> Result<(), String> {
        let what = "core 1 dark";
        let cores = vec![Core::IDEAL, Core::new(Behaviour::Dark), Core::IDEAL];
        let paths = [(3, 5), (4, 5), (3, 0)];
        let delayed = |timeout| LoopControls {
            dac_delay: vec![DARK_DAC_DELAY; 2 * CORES],
            dac_shift: vec![DARK_DAC_SHIFT; 2 * CORES],
            ..bounded(timeout)
        };
        let run = self.run(1, &paths, cores, &delayed(DARK_TIMEOUT))?;
        fails(&run, FAIL_NO_LOCK, 0..=u64::from(DARK_TIMEOUT) + 10, what)?;
        self.recovers(what, &delayed(TIMEOUT))
    }

    /// Check 4, cores too far apart (see the module docs).
    fn cores_apart(&mut self) -> Result<(), String> {
        let within = SKEW_DEPTH as usize - 2;
        let what = "skew within the bound";
        self.timed(1, &[(0, 0), (within, 0), (9, 5)], &bounded(TIMEOUT), what)?;
        let apart = within + 1;
        let paths = [(0, 0), (apart, 0), (apart, 5)];
        let run = self.ideal(1, &paths, &bounded(TIMEOUT))?;
        fails(&run, FAIL_SKEW, 0..=MAX_CYCLES, "cores too far apart")?;
        let compensated = LoopControls {
            dac_delay: (0..2 * CORES)
                .map(|j| if j < 2 { apart as u32 } else { 0 })
                .collect(),
            ..bounded(TIMEOUT)
        };
        let run = self.ideal(1, &paths, &compensated)?;
        let what = "skew compensated by DAC delays";
        self.exact_run(&run, 1, OpticalLoss::UNITY, &compensated, what)
    }

    /// Check 5, a stopped and a trickling weight DMA (see the module docs).
    fn weight_failures(&mut self) -> Result<(), String> {
        let paths = [(6, 2), (7, 2), (6, 9)];
        let first_beats = self.reference(&paths, "streamer fires the first data beat")?;
        let Some(&first) = first_beats.first() else {
            return Err("reference run: no first data beat".into());
        };
        let at = first + 5;
        let stopped = LoopControls {
            weight_stop: vec![(1, at)],
            ..bounded(TIMEOUT)
        };
        let run = self.ideal(1, &paths, &stopped)?;
        let t = u64::from(TIMEOUT);
        let what = "core 1's weights stopped in layer 0";
        fails(&run, FAIL_WEIGHTS, at + t..=at + t + 2, what)?;
        self.recovers(what, &bounded(TIMEOUT))?;
        let words = self
            .subject
            .shape
            .weight_stream
            .as_ref()
            .map_or(0, |s| s.iter().map(Vec::len).max().unwrap_or(0)) as u64;
        for gap in [t - 5, t + 5] {
            let controls = LoopControls {
                weight_gap: gap,
                max_cycles: MAX_CYCLES + (gap + 1) * words,
                ..bounded(TIMEOUT)
            };
            let run = self.ideal(1, &paths, &controls)?;
            let what = format!("a weight word every {gap} cycles");
            match gap < t {
                true => self.exact_run(&run, 1, OpticalLoss::UNITY, &controls, &what)?,
                false => fails(&run, FAIL_WEIGHTS, 0..=controls.max_cycles, &what)?,
            }
        }
        Ok(())
    }

    /// Check 5, the round trip against the sign FIFO (see the module docs).
    fn round_trip(&mut self) -> Result<(), String> {
        let delay = 5;
        let controls = LoopControls {
            dac_delay: vec![delay as u32; 2 * CORES],
            ..bounded(TIMEOUT)
        };
        let longest = SIGN_FIFO_DEPTH as usize - 1 - ROUND_TRIP_OVERHEAD - delay;
        let what = "the longest round trip the sign FIFO holds";
        self.timed(
            1,
            &[(longest, 0), (longest, 9), (longest, 4)],
            &controls,
            what,
        )?;
        let run = self.ideal(1, &[(longest + 1, 0); CORES], &controls)?;
        let what = "a round trip one cycle past the sign FIFO";
        fails(&run, FAIL_ROUND_TRIP, 0..=MAX_CYCLES, what)
    }
}

/// `z`, a run on longer photonic paths than `a`'s, is `by` cycles later in
/// `cycles`, `compute_cycles` and `busy_photonic_cycles`, and equal in the DAC
/// and decode counts.
fn later_by(a: &LoopRun, z: &LoopRun, by: u64, what: &str) -> Result<(), String> {
    let pairs = [
        ("cycles", a.cycles, z.cycles),
        ("compute_cycles", a.compute_cycles, z.compute_cycles),
        (
            "busy_photonic_cycles",
            a.busy_photonic_cycles,
            z.busy_photonic_cycles,
        ),
    ];
    for (name, before, after) in pairs {
        if after != before + by {
            return Err(format!("{what}: {name} {after}, {before} + {by} expected"));
        }
    }
    if (z.busy_dac_cycles, z.busy_decode_cycles) != (a.busy_dac_cycles, a.busy_decode_cycles) {
        return Err(format!("{what}: the DAC or decode counts moved"));
    }
    Ok(())
}

/// The default controls with the detector and watchdogs at `timeout` and every
/// run bounded by [`MAX_CYCLES`].
fn bounded(timeout: u32) -> LoopControls {
    LoopControls {
        timeout,
        max_cycles: MAX_CYCLES,
        ..LoopControls::default()
    }
}

/// `run` finished without failing, with `expected` for logits, in index order.
fn exact(run: &LoopRun, expected: &[i64], what: &str) -> Result<(), String> {
    if !run.done {
        return Err(format!("{what}: not done after {} cycles", run.cycles));
    }
    if run.failed || run.fail_reason != FAIL_NONE {
        return Err(format!(
            "{what}: failed {} with reason {}",
            run.failed, run.fail_reason
        ));
    }
    if run.logits != expected {
        return Err(format!(
            "{what}: logits {:?}, golden {expected:?}",
            run.logits
        ));
    }
    if run.off_format_dac_samples != 0 {
        return Err(format!(
            "{what}: {} DAC samples outside the bus format",
            run.off_format_dac_samples
        ));
    }
    if let Some(broken) = run.busy_counters_out_of_order().first() {
        return Err(format!("{what}: {broken}"));
    }
    if !run
        .logit_indices
        .iter()
        .copied()
        .eq(0..expected.len() as u64)
    {
        return Err(format!("{what}: logit indices {:?}", run.logit_indices));
    }
    Ok(())
}

/// `run` ended failed with `reason`, no logits, at a cycle within `when`.
fn fails(run: &LoopRun, reason: u64, when: RangeInclusive<u64>, what: &str) -> Result<(), String> {
    if !run.done {
        return Err(format!("{what}: hung ({} cycles)", run.cycles));
    }
    if !run.failed || run.fail_reason != reason {
        return Err(format!(
            "{what}: failed {} with reason {}, reason {reason} expected",
            run.failed, run.fail_reason
        ));
    }
    if !run.logits.is_empty() {
        return Err(format!("{what}: logits {:?} after a failure", run.logits));
    }
    if !when.contains(&run.cycles) {
        return Err(format!(
            "{what}: failed at cycle {}, {when:?} expected",
            run.cycles
        ));
    }
    Ok(())
}
