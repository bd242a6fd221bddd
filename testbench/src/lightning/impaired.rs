//! A workload's test images through the Lightning board top
//! (`hdl::lightning::top`) over impaired photonic links, optionally after the
//! top's self-calibration (`wirespeed sim lightning --skew --loss --calibrate`).
//!
//! Every photonic core gets the same noise-free [`PhotonicLink`] with two
//! impairments a real link has and the closed loop of [`super::test_set`] leaves
//! out:
//! - **skew** ([`Skew`]): the two modulators' paths differ in length, so one
//!   operand reaches the multiply later than the other. Positive: the weight
//!   modulator (DAC 2*c*+1) sees its samples late; negative: the activation
//!   modulator (DAC 2*c*) does ([`PhotonicLink::with_skew`]).
//! - **loss** ([`Transmission`]): only a fraction of the light reaches the
//!   photodetector; every ADC sample is scaled by it
//!   ([`NoisyCore`] with σ = 0).
//!
//! The top is driven only as a host drives the board ([`TopBench`]): optionally
//! `calibrate` (the calibrator measures the skew and the level and programs the
//! DAC delays, shifts and the loss compensation itself), then per image the
//! image words, `start`, a poll of `status` and the logit registers. Each
//! image's logits are compared with the golden model's on a perfect link
//! ([`infer_as`] with the contract's unity loss): a correct calibration makes
//! them equal; without it the impaired link garbles them.

use std::fmt;
use std::str::FromStr;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use gen::board::{Board, ConverterKind};
use hdl::lightning::datapath::fail_reason_text;
use hdl::lightning::top::{cores_for_channels, lightning_top, TopConfig};
use hdl::lightning::top_regs::{cal_status, status};
use thiserror::Error;

use super::arith::{argmax, Contract, SAMPLES_PER_CYCLE};
use super::closed_loop::hardware_config_as;
use super::golden::{infer_as, ContractConfig};
use super::link::PhotonicLink;
use super::model_files::Workload;
use super::photonic::NoisyCore;
use super::top_bench::{CalibrationRun, ConverterStreams, TopBench, TopRun};
use crate::dut::Dut;
use crate::engine::{board_clocks, DomainClock, Engine, EngineTime};

/// The largest whole-cycle part of a [`Skew`] (in either direction).
pub const MAX_SKEW_CYCLES: u32 = 255;

/// The largest skew the calibrator can compensate, in samples (`delay` 0–63
/// cycles, `shift` 0–15 samples); beyond it calibration fails with reason 2.
pub const CALIBRATION_REACH: u32 = 1023;

/// `status` polls allowed per inference. A run ends (done or failed) within a
/// few `timeout`s of DAC cycles (default 2000); a poll takes at least one
/// AXI-Lite cycle, about 2.5 DAC cycles on the ZCU111, so this bound only
/// trips on a hang.
pub const INFER_MAX_POLLS: u64 = 10_000;

/// `cal_status` polls allowed per calibration: a calibration takes at most
/// `hdl::lightning::calibrate::max_run_cycles(timeout)` DAC cycles (12,191
/// with the default `timeout` 2000), and a poll takes several AXI-Lite cycles
/// of about 2.5 DAC cycles each, so this bound only trips on a hang.
pub const CAL_MAX_POLLS: u64 = 10_000;

/// A skew or loss value that is not one.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum ImpairmentError {
    /// Not of the form `CYCLES,SAMPLES`.
    #[error("`{0}`: expected CYCLES,SAMPLES, e.g. 3,5 (weight modulator 3 cycles and 5 samples late) or -3,5 (activation modulator late)")]
    SkewFormat(String),
    /// CYCLES is not an integer in range.
    #[error("CYCLES `{0}` is not an integer in -{MAX_SKEW_CYCLES}..={MAX_SKEW_CYCLES}")]
    SkewCycles(String),
    /// SAMPLES is not 0..=15.
    #[error(
        "SAMPLES `{0}` is not in 0..=15 (16 samples are one fabric cycle: add 1 to CYCLES instead)"
    )]
    SkewSamples(String),
    /// A transmission outside (0, 1].
    #[error("`{0}` is not a number in (0, 1]: the fraction of the light that reaches the ADC, 1 = lossless")]
    Transmission(String),
}

/// How much later one modulator sees its DAC's samples than the other, in
/// samples: positive, the weight modulator is late; negative, the activation
/// modulator is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Skew(i64);

impl Skew {
    /// No skew: both modulators see their samples at the same time.
    pub const NONE: Skew = Skew(0);

    /// `cycles` fabric cycles and `samples` (0..=15) samples, the weight
    /// modulator late if `weight_late`, else the activation modulator.
    pub fn new(weight_late: bool, cycles: u32, samples: u32) -> Result<Skew, ImpairmentError> {
        if cycles > MAX_SKEW_CYCLES {
            return Err(ImpairmentError::SkewCycles(cycles.to_string()));
        }
        if samples as usize >= SAMPLES_PER_CYCLE {
            return Err(ImpairmentError::SkewSamples(samples.to_string()));
        }
        let magnitude = i64::from(cycles) * SAMPLES_PER_CYCLE as i64 + i64::from(samples);
        Ok(Skew(if weight_late { magnitude } else { -magnitude }))
    }

    /// Weight arrival − activation arrival, in samples (the value
    /// [`PhotonicLink::with_skew`] takes and the calibrator measures).
    pub fn samples(self) -> i64 {
        self.0
    }

    /// The magnitude as (whole cycles, samples 0..=15).
    pub fn cycles_and_samples(self) -> (u64, u64) {
        let m = self.0.unsigned_abs();
        (m / SAMPLES_PER_CYCLE as u64, m % SAMPLES_PER_CYCLE as u64)
    }
}

impl FromStr for Skew {
    type Err = ImpairmentError;

    /// `CYCLES,SAMPLES`: `3,5` = the weight modulator 3 · 16 + 5 = 53 samples
    /// late; `-3,5` = the activation modulator 53 samples late; `-0,5` = the
    /// activation modulator 5 samples late.
    fn from_str(s: &str) -> Result<Skew, ImpairmentError> {
        let Some((cycles, samples)) = s.split_once(',').filter(|(_, rest)| !rest.contains(','))
        else {
            return Err(ImpairmentError::SkewFormat(s.into()));
        };
        let cycles = cycles.trim();
        let (weight_late, magnitude) = match cycles.strip_prefix('-') {
            Some(rest) => (false, rest),
            None => (true, cycles.strip_prefix('+').unwrap_or(cycles)),
        };
        let cycles_value = magnitude
            .parse::<u32>()
            .map_err(|_| ImpairmentError::SkewCycles(cycles.into()))?;
        let samples = samples.trim();
        let samples_value = samples
            .parse::<u32>()
            .map_err(|_| ImpairmentError::SkewSamples(samples.into()))?;
        Skew::new(weight_late, cycles_value, samples_value)
    }
}

impl fmt::Display for Skew {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (cycles, samples) = self.cycles_and_samples();
        let late = match self.0 {
            0 => return write!(f, "none"),
            s if s > 0 => "weight",
            _ => "activation",
        };
        let count = |n: u64, noun: &str| match n {
            1 => format!("1 {noun}"),
            n => format!("{n} {noun}s"),
        };
        let late_by = count(self.0.unsigned_abs(), "sample");
        match (cycles, samples) {
            (0, _) => write!(f, "{late} modulator {late_by} late"),
            (c, 0) => write!(f, "{late} modulator {late_by} late ({})", count(c, "cycle")),
            (c, s) => write!(
                f,
                "{late} modulator {late_by} late ({} + {})",
                count(c, "cycle"),
                count(s, "sample")
            ),
        }
    }
}

/// The fraction of the light that reaches the photodetector, in (0, 1].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transmission(f64);

impl Transmission {
    /// A lossless link.
    pub const LOSSLESS: Transmission = Transmission(1.0);

    /// `factor` if it is in (0, 1].
    pub fn new(factor: f64) -> Result<Transmission, ImpairmentError> {
        if factor > 0.0 && factor <= 1.0 {
            Ok(Transmission(factor))
        } else {
            Err(ImpairmentError::Transmission(factor.to_string()))
        }
    }

    /// The factor (1.0 = lossless).
    pub fn factor(self) -> f64 {
        self.0
    }
}

impl Default for Transmission {
    fn default() -> Self {
        Transmission::LOSSLESS
    }
}

impl FromStr for Transmission {
    type Err = ImpairmentError;

    /// A decimal number in (0, 1], e.g. `0.6`.
    fn from_str(s: &str) -> Result<Transmission, ImpairmentError> {
        let factor = s
            .trim()
            .parse::<f64>()
            .map_err(|_| ImpairmentError::Transmission(s.into()))?;
        Transmission::new(factor).map_err(|_| ImpairmentError::Transmission(s.into()))
    }
}

/// How the impaired run is set up.
#[derive(Clone, Debug)]
pub struct ImpairedOptions {
    /// Photonic cores (each with its own link, all impaired alike).
    pub cores: u32,
    /// Photonic latency in whole fabric cycles.
    pub latency: usize,
    /// Photonic intra-cycle sample shift (0–15).
    pub shift: usize,
    /// The modulators' skew.
    pub skew: Skew,
    /// The optical transmission.
    pub transmission: Transmission,
    /// The arithmetic contract of the top and the golden model.
    pub arith: Contract,
    /// Calibrate the top before the first image.
    pub calibrate: bool,
    /// The engine(s) to run (with several, their results must agree).
    pub engine: Engine,
}

/// One core's calibration result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoreCalibration {
    /// When the activation modulator's probe arrived (16 · ADC word + lane).
    pub activation_arrival: u32,
    /// When the weight modulator's probe arrived.
    pub weight_arrival: u32,
    /// The full-scale level measured.
    pub level: u32,
    /// The loss gain computed from it (Q8.8 under wirespeed's contract, an
    /// integer under the released RTL's).
    pub gain: u32,
    /// The control registers after the run: `[optical_loss, activation delay,
    /// activation shift, weight delay, weight shift]`.
    pub settings: [u32; 5],
    /// The core's 2-bit fail reason (0 none, 1 no light, 2 skew beyond reach).
    pub fail_reason: u32,
}

impl CoreCalibration {
    /// The measured skew: weight arrival − activation arrival, in samples.
    pub fn measured_skew(&self) -> i64 {
        i64::from(self.weight_arrival) - i64::from(self.activation_arrival)
    }
}

/// What a calibration did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CalibrationReport {
    /// `cal_status` after `busy` fell.
    pub status: u32,
    /// `cal_cycles`: the calibration's duration in DAC cycles.
    pub cycles: u32,
    /// Per core.
    pub cores: Vec<CoreCalibration>,
}

impl CalibrationReport {
    fn from_run(run: &CalibrationRun) -> CalibrationReport {
        let cores = (0..run.settings.len())
            .map(|c| {
                let (activation_arrival, weight_arrival) = run.arrivals[c];
                let (level, gain) = run.levels[c];
                let shift = cal_status::REASON_SHIFT + 2 * c as u32;
                CoreCalibration {
                    activation_arrival,
                    weight_arrival,
                    level,
                    gain,
                    settings: run.settings[c],
                    fail_reason: run.status.checked_shr(shift).unwrap_or(0) & 3,
                }
            })
            .collect();
        CalibrationReport {
            status: run.status,
            cycles: run.cycles,
            cores,
        }
    }

    /// True if the calibration finished without a failure (and loaded its
    /// settings).
    pub fn succeeded(&self) -> bool {
        self.status & cal_status::DONE != 0 && self.status & cal_status::FAILED == 0
    }
}

/// What a calibration fail reason means.
pub fn calibration_fail_text(reason: u32) -> &'static str {
    match reason {
        0 => "none",
        1 => "no light within `timeout` cycles",
        2 => "skew beyond the calibrator's reach (1023 samples)",
        _ => "unknown reason",
    }
}

/// One image through the top.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageOutcome {
    /// What the top left in its registers.
    pub run: TopRun,
    /// The golden model's logits on a perfect link.
    pub golden: Vec<i64>,
    /// The image's label.
    pub label: u8,
}

impl ImageOutcome {
    /// The inference finished without a failure.
    pub fn finished(&self) -> bool {
        self.run.status & (status::DONE | status::FAILED) == status::DONE
    }

    /// The top's fail reason (`status[18:16]`; 0 if it did not fail).
    pub fn fail_reason(&self) -> u32 {
        (self.run.status >> status::FAIL_REASON_SHIFT) & 7
    }

    /// Finished with logits equal to the golden model's.
    pub fn exact(&self) -> bool {
        self.finished() && self.run.logits == self.golden
    }

    /// Finished and the largest logit is the label.
    pub fn correct(&self) -> bool {
        self.finished() && argmax(&self.run.logits) == Some(usize::from(self.label))
    }

    /// The golden model's largest logit is the label.
    pub fn golden_correct(&self) -> bool {
        argmax(&self.golden) == Some(usize::from(self.label))
    }
}

/// The outcome of an impaired run (every engine's results are the same; see
/// [`run_impaired`]).
#[derive(Clone, Debug, PartialEq)]
pub struct ImpairedReport {
    /// The engines that ran, native first (their wall time covers calibration and
    /// every image, building excluded).
    pub engines: Vec<EngineTime>,
    /// The calibration, if one ran.
    pub calibration: Option<CalibrationReport>,
    /// Every image, in test-set order.
    pub images: Vec<ImageOutcome>,
    /// What the converter streams did that the RF Data Converter or a host
    /// would not take (all 0 on a correct top).
    pub streams: ConverterStreams,
}

impl ImpairedReport {
    /// Images whose logits equal the golden model's.
    pub fn exact(&self) -> usize {
        self.images.iter().filter(|i| i.exact()).count()
    }

    /// Images the top classified correctly.
    pub fn correct(&self) -> usize {
        self.images.iter().filter(|i| i.correct()).count()
    }

    /// Images the golden model classifies correctly.
    pub fn golden_correct(&self) -> usize {
        self.images.iter().filter(|i| i.golden_correct()).count()
    }

    /// Images whose inference failed (status `failed`, e.g. no preamble lock).
    pub fn failed(&self) -> usize {
        self.images.iter().filter(|i| !i.finished()).count()
    }

    /// The smallest and largest `cycles` of the finished images.
    pub fn cycles_range(&self) -> Option<(u32, u32)> {
        let cycles = self.images.iter().filter(|i| i.finished());
        let min = cycles.clone().map(|i| i.run.cycles).min()?;
        let max = cycles.map(|i| i.run.cycles).max()?;
        Some((min, max))
    }

    /// A line per distinct fail reason of the failed images: (reason, count, text).
    pub fn failures(&self) -> Vec<(u32, usize, &'static str)> {
        let mut out: Vec<(u32, usize, &'static str)> = Vec::new();
        for image in self.images.iter().filter(|i| !i.finished()) {
            let reason = image.fail_reason();
            match out.iter_mut().find(|(r, _, _)| *r == reason) {
                Some(entry) => entry.1 += 1,
                None => out.push((reason, 1, fail_reason_text(u64::from(reason)))),
            }
        }
        out
    }
}

/// Photonic cores `board` can feed: two DACs and one ADC per core.
pub fn board_cores(board: &Board) -> u32 {
    let channels = |kind| board.converter(kind).map_or(0, |c| c.channels);
    cores_for_channels(channels(ConverterKind::Dac), channels(ConverterKind::Adc))
}

/// The top's clock domains on `board`, after checking that it can carry
/// `cores` cores and that its ADC delivers one 16-sample word per DAC cycle
/// (what the link model produces).
fn board_setup(board: &Board, cores: u32) -> Result<Vec<DomainClock>> {
    let limit = board_cores(board);
    if cores == 0 || cores > limit {
        bail!(
            "cores = {cores}: board {} brings out converter channels for 1..={limit} photonic cores (a core needs two DACs and one ADC)",
            board.name
        );
    }
    let mhz = |role| board.clock(role).map(|c| c.mhz);
    let adc_samples = board
        .converter(ConverterKind::Adc)
        .map_or(0, |c| c.samples_per_clock);
    if adc_samples as usize != SAMPLES_PER_CYCLE || mhz("adc") != mhz("dac") {
        bail!(
            "board {}: an impaired run needs an ADC that delivers one {SAMPLES_PER_CYCLE}-sample word per DAC cycle (its ADC: {adc_samples} samples at {:?} MHz, its DAC clock {:?} MHz)",
            board.name,
            mhz("adc"),
            mhz("dac")
        );
    }
    board_clocks(board, &[("dac", "dac"), ("adc", "adc"), ("axil", "axil")])
}

/// One impaired link per core, as `options` says.
fn links(options: &ImpairedOptions) -> Vec<PhotonicLink<NoisyCore>> {
    (0..u64::from(options.cores))
        .map(|c| {
            let core = NoisyCore::new(0.0, options.transmission.factor(), c);
            PhotonicLink::with_skew(core, options.latency, options.shift, options.skew.samples())
        })
        .collect()
}

/// What one engine's top did: the calibration (if any), every image's run and
/// the converter streams' counts.
type EngineResult = (Option<CalibrationRun>, Vec<TopRun>, ConverterStreams);

/// Calibrates (if asked) and runs `images` through a reset top on `dut`.
fn run_on(
    dut: &mut dyn Dut,
    map: &hdl::blocks::axil_regfile::RegisterMap,
    logits: usize,
    images: &[Vec<u8>],
    options: &ImpairedOptions,
) -> Result<EngineResult> {
    let mut bench = TopBench::new(dut, links(options), map, SAMPLES_PER_CYCLE)?;
    let calibration = if options.calibrate {
        Some(bench.calibrate(options.cores as usize, CAL_MAX_POLLS)?)
    } else {
        None
    };
    let mut runs = Vec::with_capacity(images.len());
    for (i, image) in images.iter().enumerate() {
        let run = bench
            .infer(image, logits, INFER_MAX_POLLS)
            .with_context(|| format!("image {i}"))?;
        runs.push(run);
    }
    Ok((calibration, runs, bench.streams()))
}

/// Runs the first `n` test images of `workload` through the Lightning top
/// (`lightning_top` with [`TopConfig::default`]) of `board` over impaired links,
/// calibrating first if `options.calibrate`, on every engine of
/// `options.engine`, and compares each image's logits with the golden model's.
///
/// Errors: `n` outside 1..=the test set's size; `cores` more than the board's
/// converters feed or the generator accepts (the message names `cores`); a
/// board whose ADC does not deliver one 16-sample word per DAC cycle; an
/// engine that fails to build; a calibration or inference that never ends;
/// with several engines, engines that disagree. Failed inferences and a failed
/// calibration are not errors: they are in the report.
pub fn run_impaired(
    workload: &Workload,
    n: usize,
    options: &ImpairedOptions,
    board: &Board,
) -> Result<ImpairedReport> {
    let available = workload.test.images.len();
    if n == 0 || n > available {
        bail!("{n} images asked for; the test set has {available} (give 1..={available})");
    }
    if options.shift >= SAMPLES_PER_CYCLE {
        bail!("shift {}: must be 0..=15 samples", options.shift);
    }
    let clocks = board_setup(board, options.cores)?;
    let net = &workload.model.network;
    let acc = workload.model.acc_width;
    let hw = hardware_config_as(net, acc, options.cores, options.arith);
    let (module, map) = lightning_top(&hw, &TopConfig::default())
        .with_context(|| format!("the Lightning top on {} cores", options.cores))?;
    let images = &workload.test.images[..n];
    let golden_cfg = ContractConfig::exact(options.arith, acc);
    let golden = images
        .iter()
        .map(|image| Ok(infer_as(net, image, &golden_cfg)?.logits))
        .collect::<Result<Vec<_>>>()?;

    let mut engines = Vec::new();
    let mut results: Vec<EngineResult> = Vec::new();
    for &engine in options.engine.engines() {
        let (mut dut, build) = engine.build(&module, false, &clocks)?;
        dut.reset(4);
        let started = Instant::now();
        let result = run_on(dut.as_mut(), &map, net.outputs(), images, options)
            .with_context(|| format!("the {engine} engine"))?;
        engines.push(EngineTime {
            engine,
            build,
            wall: started.elapsed(),
            compiled: dut.compiled_start(),
        });
        results.push(result);
    }
    if let [first, others @ ..] = &results[..] {
        for (other, time) in others.iter().zip(&engines[1..]) {
            let (a, b) = (time.engine.name(), engines[0].engine.name());
            if other.0 != first.0 {
                bail!("the {a} engine's calibration results differ from the {b} engine's");
            }
            if let Some(i) = (0..n).find(|&i| other.1[i] != first.1[i]) {
                bail!("image {i}: the {a} engine's registers (status, logits or counters) differ from the {b} engine's");
            }
            if other.2 != first.2 {
                bail!(
                    "the {a} engine's converter streams ({}) differ from the {b} engine's ({})",
                    other.2,
                    first.2
                );
            }
        }
    }
    let Some((calibration, runs, streams)) = results.into_iter().next() else {
        bail!("no engine ran");
    };
    let labels = &workload.test.labels[..n];
    let images = runs
        .into_iter()
        .zip(golden)
        .zip(labels)
        .map(|((run, golden), &label)| ImageOutcome { run, golden, label })
        .collect();
    Ok(ImpairedReport {
        engines,
        calibration: calibration.as_ref().map(CalibrationReport::from_run),
        images,
        streams,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skews_read_as_a_user_writes_them() {
        let text = |s: &str| s.parse::<Skew>().expect(s).to_string();
        assert_eq!(text("0,0"), "none");
        assert_eq!(
            text("3,5"),
            "weight modulator 53 samples late (3 cycles + 5 samples)"
        );
        assert_eq!(
            text("-1,0"),
            "activation modulator 16 samples late (1 cycle)"
        );
        assert_eq!(text("0,1"), "weight modulator 1 sample late");
        assert_eq!(
            text("20,0"),
            "weight modulator 320 samples late (20 cycles)"
        );
    }

    #[test]
    fn skews_parse_with_their_sign() {
        assert_eq!("3,5".parse::<Skew>().map(Skew::samples), Ok(53));
        assert_eq!("-3,5".parse::<Skew>().map(Skew::samples), Ok(-53));
        assert_eq!("-0,5".parse::<Skew>().map(Skew::samples), Ok(-5));
        assert_eq!("+1,0".parse::<Skew>().map(Skew::samples), Ok(16));
        assert_eq!("0,0".parse::<Skew>(), Ok(Skew::NONE));
        assert_eq!(
            "3".parse::<Skew>(),
            Err(ImpairmentError::SkewFormat("3".into()))
        );
        assert_eq!(
            "3,5,7".parse::<Skew>(),
            Err(ImpairmentError::SkewFormat("3,5,7".into()))
        );
        assert_eq!(
            "3,16".parse::<Skew>(),
            Err(ImpairmentError::SkewSamples("16".into()))
        );
        assert_eq!(
            "3,-1".parse::<Skew>(),
            Err(ImpairmentError::SkewSamples("-1".into()))
        );
        assert_eq!(
            "x,1".parse::<Skew>(),
            Err(ImpairmentError::SkewCycles("x".into()))
        );
        assert_eq!(
            "256,0".parse::<Skew>(),
            Err(ImpairmentError::SkewCycles("256".into()))
        );
        assert_eq!(
            "-3,5".parse::<Skew>().map(|s| s.to_string()),
            Ok("activation modulator 53 samples late (3 cycles + 5 samples)".into())
        );
    }

    #[test]
    fn transmissions_are_in_zero_to_one() {
        assert_eq!(
            "0.6".parse::<Transmission>().map(Transmission::factor),
            Ok(0.6)
        );
        assert_eq!("1".parse::<Transmission>(), Ok(Transmission::LOSSLESS));
        for bad in ["0", "-0.5", "1.5", "nan", "inf", "", "x"] {
            assert_eq!(
                bad.parse::<Transmission>(),
                Err(ImpairmentError::Transmission(bad.into())),
                "{bad}"
            );
        }
    }
}
