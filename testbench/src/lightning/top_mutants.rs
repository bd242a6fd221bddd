//! The check a Lightning board top's mutants face ([`crate::mutation`]): the
//! kinds of thing `lightning_top` and `lightning_impaired` check, on one small
//! two-core top ([`TopSubject`]), driven only through AXI-Lite as software
//! would drive it ([`TopBench`]). Every poll is bounded, so a mutant that never
//! finishes is killed, not waited for. The datapath inside has its own check
//! ([`super::mutants`]); this one is for the top's own logic: the register
//! map, the status protocol, the run statistics, the answer stream and the
//! calibrator.
//!
//! 1. **Reset.** The registers read back the documented defaults: `id`
//!    "LGHT", the network's shape in `inputs`, `params` and the per-layer
//!    registers, unity loss, a 10-cycle preamble, a 2,000-cycle timeout, no
//!    DAC alignment, `status` 0, no runs, `latency_min` all ones; and every
//!    register reads the register map's reset column.
//! 2. **Two inferences** on ideal links: `status` busy right after `start` and
//!    done after, with no other flag; logits equal to the golden model's,
//!    `class_index` and `max_logit` those of the logits, `photonic_slack` =
//!    `window_open_cycle` − `dac_start_cycle`, the counters in order, one
//!    answer beat per logit in index order with `tlast` on the last, and the
//!    `lsm` registers the log-softmax values the beats carried.
//! 3. **Failures, the statistics and refused streams.** A 5-cycle timeout:
//!    done and failed with reason 1 (no lock); the timeout restored, the next
//!    run exact; a dark ADC fails with reason 1 after the 2,000-cycle timeout,
//!    longer than any successful run; `runs`, `failures`, `latency_min` and
//!    `latency_max` (successful runs only) counted over the five runs;
//!    `clear_stats` clears them (`latency_min` all ones). Then a run whose DACs
//!    and answer stream refuse every beat: still exact, `dac_stall` and
//!    `answer_overflow` set, every answer beat counted in `answer_dropped`;
//!    `clear_stats` clears those, and the next run is exact.
//! 4. **Queued commands.** Without waiting for a run to end, the host queues
//!    image 1, `scale_shift` 3 and a start, `scale_shift` 7 and a start (the
//!    same image again), then image 0, `scale_shift` 0 and a start: three
//!    answer streams, each the golden logits of its image with the
//!    log-softmax of the scale written before its own start
//!    ([`super::answer::answer`]), and no command dropped.
//! 5. **Calibration**, each on a fresh top with a `timeout` of 300. On links
//!    whose weight modulators lag by 53 and 36 samples and whose transmission
//!    is 0.6, `calibrate` succeeds and programs each core's loss register to
//!    round(256 · full scale / level) and its activation DAC's delay and shift
//!    to the lag (3 cycles and 5 samples, 2 and 4); with the activation
//!    modulators 21 and 38 samples late and transmission 0.8, the weight DACs'
//!    (1 and 5, 2 and 6); with the weight modulators 1,023 samples late (the
//!    registers' reach) and 1,006, lossless, 63 and 15, 62 and 14. Each time
//!    `cal_status` shows busy, not done, from the `calibrate` write until it
//!    ends; the DACs' timeline follows the documented procedure and
//!    `cal_cycles` is the count it gives
//!    ([`super::top_bench::CalibrationRun::cycles_from_dac_ports`]), still 100
//!    cycles later; the next inference is exact.
//!    A skew of 1,024 samples (one past the registers' reach) fails with reason
//!    2 on every core, a dark link with reason 1; either way no register
//!    changes.
//! 6. **Overflows**, on a fresh top. ADC words at twice the DAC rate: a
//!    non-zero `adc_dropped` and `adc_overflow`; then, during a run that waits
//!    out its timeout on a dark ADC, `image_commit` written 24 times into the
//!    16-entry command queue: a non-zero `cmd_dropped`, `cmd_overflow`, and
//!    every write either queued or dropped; `clear_stats` clears both counts
//!    and bits.
//!
//! In checks 2–5 every lit DAC sample is in the bus format (`v << 7`, or the
//! preamble's `0xFFFF`), every sample without `tvalid` is zero, and no answer
//! beat leaves outside an inference (after reset, say).

use super::answer::answer;
use super::arith::{argmax, AccWidth, OpticalLoss};
use super::closed_loop::hardware_config;
use super::golden::{infer, DatapathConfig, Network};
use super::link::PhotonicLink;
use super::photonic::{IdealCore, NoisyCore, PhotonicCore};
use super::top_bench::{CalibrationRun, TopBench, TopRun};
use crate::dut::{Dut, NativeDut};
use crate::rng::derived;
use hdl::blocks::axil_regfile::RegisterMap;
use hdl::lightning::top::{lightning_top, TopConfig};
use hdl::Module;
use rand::Rng;
use sim::Backend;

/// Photonic cores of the subject.
const CORES: usize = 2;

/// Layer sizes of the subject's network.
const SIZES: [usize; 3] = [48, 12, 5];

/// Samples per ADC beat (the top's default, the link model's word).
const ADC_SAMPLES: usize = 16;

/// The clock periods (ps) of the DAC, ADC and AXI-Lite domains, as the
/// `lightning_top` tests run them.
const DAC_PS: u64 = 1000;
const ADC_PS: u64 = 1000;
const AXIL_PS: u64 = 2531;

/// Status polls an inference or a calibration may take.
const MAX_POLLS: u64 = 2_000;

/// AXI-Lite cycles the queued commands' three runs may take (check 4), from
/// the last write: [`MAX_POLLS`] for each.
const QUEUED_CYCLES: u64 = 3 * MAX_POLLS;

/// `timeout`'s documented reset value.
const DEFAULT_TIMEOUT: u32 = 2000;

/// The `timeout` the calibrations run with: dark waits of 301 cycles, far
/// longer than the links' round trips, and a quicker check than the default.
const CAL_TIMEOUT: u32 = 300;

/// Core *c*'s link lags `c` · this many samples more than core 0's in the
/// successful calibrations, so the cores finish at different cycles.
const CORE_SKEW_STEP: i64 = -17;

/// `status` bits and the reason field, from the documented register map.
const BUSY: u32 = 1;
const DONE: u32 = 2;
const FAILED: u32 = 4;
const LOCKED: u32 = 8;
const ADC_OVERFLOW: u32 = 16;
const CMD_OVERFLOW: u32 = 32;
const DAC_STALL: u32 = 64;
const ANSWER_OVERFLOW: u32 = 128;
const FAIL_REASON_SHIFT: u32 = 16;
const NO_LOCK: u32 = 1;

/// Every `status` bit below the layer field.
const STATUS_FLAGS: u32 =
    BUSY | DONE | FAILED | LOCKED | ADC_OVERFLOW | CMD_OVERFLOW | DAC_STALL | ANSWER_OVERFLOW;

/// `cal_status` bits and the per-core reason fields, from the documented map.
const CAL_BUSY: u32 = 1;
const CAL_DONE: u32 = 2;
const CAL_FAILED: u32 = 4;
const CAL_REASON_SHIFT: u32 = 8;
const CAL_NO_LIGHT: u32 = 1;
const CAL_SKEW_BEYOND_REACH: u32 = 2;

/// The DAC delay and shift registers' reach: 63 cycles and 15 samples.
const REACH: i64 = 63 * 16 + 15;

/// A skew one sample past the reach.
const BEYOND_REACH: i64 = REACH + 1;

/// The board top the mutants are made from, and what the check needs to know
/// of it: a random network of layers 48–12–5 on two photonic cores, a 16-bit
/// accumulator, weights in memory, the default top configuration.
pub struct TopSubject {
    /// The network the top computes.
    pub network: Network,
    /// Its accumulator width.
    pub acc: AccWidth,
    /// The unmutated top.
    pub module: Module,
    /// Its register map.
    pub map: RegisterMap,
    /// The images the runs use.
    images: [Vec<u8>; 2],
}

impl TopSubject {
    /// The subject; an error if its images' golden logits are degenerate.
    pub fn new() -> Result<TopSubject, String> {
        let mut rng = derived(3, "lightning top mutants");
        let shifts: Vec<u32> = (1..SIZES.len()).map(|_| rng.gen_range(2..=4)).collect();
        let network = Network::random(&SIZES, &shifts, &mut rng).map_err(|e| e.to_string())?;
        let acc = AccWidth::new(16).map_err(|e| e.to_string())?;
        let hw = hardware_config(&network, acc, CORES as u32);
        let (module, map) = lightning_top(&hw, &TopConfig::default()).map_err(|e| e.to_string())?;
        let images = [0, 1].map(|_| (0..SIZES[0]).map(|_| rng.gen()).collect());
        let subject = TopSubject {
            network,
            acc,
            module,
            map,
            images,
        };
        for i in 0..2 {
            let logits = subject.golden(i)?;
            if logits.iter().all(|&v| v == logits[0]) {
                return Err(format!(
                    "degenerate subject: image {i}'s logits are all equal"
                ));
            }
        }
        Ok(subject)
    }

    /// The golden logits of image `i`.
    fn golden(&self, i: usize) -> Result<Vec<i64>, String> {
        let cfg = DatapathConfig {
            acc_width: self.acc,
            optical_loss: OpticalLoss::UNITY,
        };
        infer(&self.network, &self.images[i], &cfg)
            .map(|g| g.logits)
            .map_err(|e| e.to_string())
    }
}

/// Runs the checks on `mutant`, a (mutated) copy of `subject.module`; the error
/// says what the first failing one saw.
pub fn check_top(subject: &TopSubject, mutant: &Module) -> Result<(), String> {
    let mut dut = fresh(mutant)?;
    let links = vec![
        PhotonicLink::new(IdealCore, 8, 3),
        PhotonicLink::new(IdealCore, 11, 7),
    ];
    let mut bench = TopBench::new(&mut dut, links, &subject.map, ADC_SAMPLES).map_err(text)?;
    bench.idle(20).map_err(text)?;
    reset_values(subject, &mut bench)?;
    let mut cycles = vec![];
    for i in [0, 1] {
        let run = bench
            .infer(&subject.images[i], SIZES[2], MAX_POLLS)
            .map_err(text)?;
        exact(&run, &subject.golden(i)?, &format!("image {i}"))?;
        cycles.push(run.cycles);
    }
    failure_and_statistics(subject, &mut bench, &mut cycles)?;
    refused_streams(subject, &mut bench)?;
    queued(subject, &mut bench)?;
    streams_clean(&bench, "the inferences")?;
    for (skew, transmission) in [(53, 0.6), (-21, 0.8), (REACH, 1.0)] {
        calibrated(subject, mutant, skew, transmission)?;
    }
    for (skew, transmission, reason) in [
        (BEYOND_REACH, 0.8, CAL_SKEW_BEYOND_REACH),
        (0, 0.0, CAL_NO_LIGHT),
    ] {
        calibration_fails(subject, mutant, (skew, transmission), reason)?;
    }
    overflows(subject, mutant)
}

/// A reset top on the native simulator, its three clocks at the test bench's
/// periods.
fn fresh(module: &Module) -> Result<NativeDut, String> {
    fresh_with_adc(module, ADC_PS)
}

/// [`fresh`] with the ADC clock's period `adc_ps`.
fn fresh_with_adc(module: &Module, adc_ps: u64) -> Result<NativeDut, String> {
    let mut dut = NativeDut::with_backend(module, Backend::Compiled).map_err(text)?;
    for (domain, ps) in [("dac", DAC_PS), ("adc", adc_ps), ("axil", AXIL_PS)] {
        dut.set_clock_period(domain, ps).map_err(text)?;
    }
    dut.reset(4);
    Ok(dut)
}

/// An error's text.
fn text(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// Check 1 (see the module docs).
fn reset_values<C: PhotonicCore>(
    s: &TopSubject,
    bench: &mut TopBench<'_, C>,
) -> Result<(), String> {
    let layers = s.network.layers();
    let mut expected: Vec<(String, u32)> = vec![
        ("id".into(), u32::from_be_bytes(*b"LGHT")),
        ("inputs".into(), SIZES[0] as u32),
        ("preamble_length".into(), 10),
        ("timeout".into(), DEFAULT_TIMEOUT),
        ("status".into(), 0),
        ("runs".into(), 0),
        ("failures".into(), 0),
        ("latency_min".into(), u32::MAX),
        (
            "params".into(),
            layers.len() as u32 | 16 << 8 | 16 << 16 | (SIZES[2] as u32) << 24,
        ),
    ];
    for c in 0..CORES {
        expected.push((format!("optical_loss{c}"), 0x0100));
    }
    for j in 0..2 * CORES {
        expected.push((format!("dac{j}_delay"), 0));
        expected.push((format!("dac{j}_shift"), 0));
    }
    for (l, layer) in layers.iter().enumerate() {
        expected.push((format!("layer{l}_outputs"), layer.outputs() as u32));
        let cycles = layer.inputs().div_ceil(16) as u32;
        expected.push((format!("layer{l}_cycles_per_output"), cycles));
    }
    for (name, value) in &expected {
        let got = bench.read(name).map_err(text)?;
        if got != *value {
            return Err(format!("reset: {name} reads {got:#x}, {value:#x} expected"));
        }
    }
    for r in &s.map.registers {
        let got = bench.read(&r.name).map_err(text)?;
        if got != r.reset {
            return Err(format!(
                "reset: {} reads {got:#x}, the map's reset column {:#x}",
                r.name, r.reset
            ));
        }
    }
    Ok(())
}

/// A successful inference's registers and answer beats against `expected`
/// (check 2).
fn exact(run: &TopRun, expected: &[i64], what: &str) -> Result<(), String> {
    if run.status_after_start & (BUSY | DONE) != BUSY {
        return Err(format!(
            "{what}: status {:#x} right after start",
            run.status_after_start
        ));
    }
    if run.status & STATUS_FLAGS != DONE || run.status >> FAIL_REASON_SHIFT & 7 != 0 {
        return Err(format!("{what}: status {:#x}", run.status));
    }
    if run.logits != expected {
        return Err(format!(
            "{what}: logits {:?}, golden {expected:?}",
            run.logits
        ));
    }
    let class = argmax(expected).unwrap_or(0);
    if (run.class as usize, run.max_logit) != (class, expected[class]) {
        return Err(format!(
            "{what}: class {} max {}, golden {class} {}",
            run.class, run.max_logit, expected[class]
        ));
    }
    let ordered = 0 < run.dac_start_cycle
        && run.dac_start_cycle < run.window_open_cycle
        && run.window_open_cycle < run.cycles;
    if !ordered || run.photonic_slack != run.window_open_cycle - run.dac_start_cycle {
        return Err(format!(
            "{what}: dac_start {} window {} cycles {} slack {}",
            run.dac_start_cycle, run.window_open_cycle, run.cycles, run.photonic_slack
        ));
    }
    let beats: Vec<(i64, u32, bool)> = run
        .answer_beats
        .iter()
        .map(|b| (b.logit, b.index, b.last))
        .collect();
    let want: Vec<(i64, u32, bool)> = expected
        .iter()
        .enumerate()
        .map(|(i, &l)| (l, i as u32, i + 1 == expected.len()))
        .collect();
    if beats != want {
        return Err(format!("{what}: answer beats {beats:?}, {want:?} expected"));
    }
    let beat_lsm: Vec<i64> = run.answer_beats.iter().map(|b| b.lsm).collect();
    if run.lsm != beat_lsm {
        return Err(format!(
            "{what}: lsm registers {:?}, the answer beats carried {beat_lsm:?}",
            run.lsm
        ));
    }
    Ok(())
}

/// Check 3 (see the module docs); `cycles` holds the successful runs' so far.
fn failure_and_statistics<C: PhotonicCore>(
    s: &TopSubject,
    bench: &mut TopBench<'_, C>,
    cycles: &mut Vec<u32>,
) -> Result<(), String> {
    bench.write("timeout", 5).map_err(text)?;
    let run = bench
        .infer(&s.images[0], SIZES[2], MAX_POLLS)
        .map_err(text)?;
    let reason = run.status >> FAIL_REASON_SHIFT & 7;
    if run.status & (BUSY | DONE | FAILED) != DONE | FAILED || reason != NO_LOCK {
        return Err(format!("timeout 5: status {:#x}", run.status));
    }
    bench.write("timeout", DEFAULT_TIMEOUT).map_err(text)?;
    let run = bench
        .infer(&s.images[1], SIZES[2], MAX_POLLS)
        .map_err(text)?;
    exact(&run, &s.golden(1)?, "after a failure")?;
    cycles.push(run.cycles);
    // A dark ADC fails the run with no lock after `timeout` cycles, longer
    // than the successful runs: it counts as a run and a failure only.
    bench.adc_enabled = false;
    let run = bench
        .infer(&s.images[0], SIZES[2], MAX_POLLS)
        .map_err(text)?;
    bench.adc_enabled = true;
    let reason = run.status >> FAIL_REASON_SHIFT & 7;
    if run.status & STATUS_FLAGS != DONE | FAILED || reason != NO_LOCK {
        return Err(format!("dark ADC: status {:#x}", run.status));
    }
    let stats = |bench: &mut TopBench<'_, C>| -> Result<[u32; 4], String> {
        let mut v = [0; 4];
        for (k, name) in ["runs", "failures", "latency_min", "latency_max"]
            .into_iter()
            .enumerate()
        {
            v[k] = bench.read(name).map_err(text)?;
        }
        Ok(v)
    };
    let (lo, hi) = (
        cycles.iter().copied().min().unwrap_or(u32::MAX),
        cycles.iter().copied().max().unwrap_or(0),
    );
    let got = stats(bench)?;
    if got != [5, 2, lo, hi] {
        return Err(format!(
            "statistics [runs, failures, latency_min, latency_max] {got:?}, {:?} expected",
            [5, 2, lo, hi]
        ));
    }
    bench.write("clear_stats", 1).map_err(text)?;
    bench.idle(20).map_err(text)?;
    let got = stats(bench)?;
    if got != [0, 0, u32::MAX, 0] {
        return Err(format!("after clear_stats: {got:?}"));
    }
    Ok(())
}

/// Check 3's refused streams (see the module docs).
fn refused_streams<C: PhotonicCore>(
    s: &TopSubject,
    bench: &mut TopBench<'_, C>,
) -> Result<(), String> {
    bench.set_dac_ready(false).map_err(text)?;
    bench.answer_ready = false;
    let run = bench
        .infer(&s.images[0], SIZES[2], MAX_POLLS)
        .map_err(text)?;
    bench.set_dac_ready(true).map_err(text)?;
    bench.answer_ready = true;
    let flags = DONE | DAC_STALL | ANSWER_OVERFLOW;
    let dropped = bench.read("answer_dropped").map_err(text)?;
    let golden = s.golden(0)?;
    let fine = run.status & STATUS_FLAGS == flags && run.answer_beats.is_empty();
    if !fine || run.logits != golden || dropped != SIZES[2] as u32 {
        return Err(format!(
            "refused streams: status {:#x}, logits {:?} (golden {golden:?}), {} beats taken, answer_dropped {dropped}",
            run.status,
            run.logits,
            run.answer_beats.len()
        ));
    }
    bench.write("clear_stats", 1).map_err(text)?;
    bench.idle(20).map_err(text)?;
    let status = bench.read("status").map_err(text)?;
    let dropped = bench.read("answer_dropped").map_err(text)?;
    if status & STATUS_FLAGS != DONE || dropped != 0 {
        return Err(format!(
            "after clear_stats: status {status:#x}, answer_dropped {dropped}"
        ));
    }
    let run = bench
        .infer(&s.images[1], SIZES[2], MAX_POLLS)
        .map_err(text)?;
    exact(&run, &s.golden(1)?, "after refused streams")
}

/// Check 4 (see the module docs).
fn queued<C: PhotonicCore>(s: &TopSubject, bench: &mut TopBench<'_, C>) -> Result<(), String> {
    let plan = [(1, 3), (1, 7), (0, 0)];
    let mark = bench.begin_queue().map_err(text)?;
    let mut loaded = None;
    for &(image, scale) in &plan {
        if loaded != Some(image) {
            bench.load_image(&s.images[image]).map_err(text)?;
            loaded = Some(image);
        }
        bench.write("scale_shift", scale).map_err(text)?;
        bench.write("start", 1).map_err(text)?;
    }
    let runs = bench
        .await_queued(mark, plan.len(), QUEUED_CYCLES)
        .map_err(text)?;
    if runs.answers.len() != plan.len() {
        return Err(format!(
            "queued: {} answer streams for {} starts",
            runs.answers.len(),
            plan.len()
        ));
    }
    for (k, (beats, &(image, scale))) in runs.answers.iter().zip(&plan).enumerate() {
        let golden = s.golden(image)?;
        let lsm = answer(&golden, scale).map_err(text)?.log_softmax;
        let got: Vec<(i64, i64, u32, bool)> = beats
            .iter()
            .map(|b| (b.logit, b.lsm, b.index, b.last))
            .collect();
        let want: Vec<(i64, i64, u32, bool)> = golden
            .iter()
            .zip(&lsm)
            .enumerate()
            .map(|(i, (&l, &v))| (l, v, i as u32, i + 1 == golden.len()))
            .collect();
        if got != want {
            return Err(format!(
                "queued start {k} (image {image}, scale_shift {scale}): answer beats {got:?}, {want:?} expected"
            ));
        }
    }
    let dropped = bench.read("cmd_dropped").map_err(text)?;
    if dropped != 0 {
        return Err(format!("queued: cmd_dropped {dropped}"));
    }
    bench.write("scale_shift", 0).map_err(text)
}

/// A bench on a fresh top whose core *c*'s link delays the weight modulator by
/// `skews[c]` samples (negative: the activation modulator) and lets
/// `transmission` of the light through; `timeout` is [`CAL_TIMEOUT`].
fn impaired_bench<'d>(
    s: &TopSubject,
    dut: &'d mut NativeDut,
    skews: [i64; CORES],
    transmission: f64,
) -> Result<TopBench<'d, NoisyCore>, String> {
    let links = skews
        .iter()
        .enumerate()
        .map(|(c, &skew)| {
            let core = NoisyCore::new(0.0, transmission, c as u64);
            PhotonicLink::with_skew(core, 9, 4, skew)
        })
        .collect();
    let mut bench = TopBench::new(dut, links, &s.map, ADC_SAMPLES).map_err(text)?;
    bench.write("timeout", CAL_TIMEOUT).map_err(text)?;
    Ok(bench)
}

/// Check 5's successful calibrations (see the module docs).
fn calibrated(s: &TopSubject, mutant: &Module, skew: i64, transmission: f64) -> Result<(), String> {
    let mut dut = fresh(mutant)?;
    let skews: [i64; CORES] = std::array::from_fn(|c| skew + CORE_SKEW_STEP * c as i64);
    let mut bench = impaired_bench(s, &mut dut, skews, transmission)?;
    let cal = bench.calibrate(CORES, MAX_POLLS).map_err(text)?;
    let what = format!("calibration at skews {skews:?}, transmission {transmission}");
    if cal.status_after_write & (CAL_BUSY | CAL_DONE) != CAL_BUSY || cal.busy_and_done != 0 {
        return Err(format!(
            "{what}: cal_status {:#x} right after the calibrate write, {} polls busy and done",
            cal.status_after_write, cal.busy_and_done
        ));
    }
    if cal.status & (CAL_DONE | CAL_FAILED) != CAL_DONE {
        return Err(format!("{what}: cal_status {:#x}", cal.status));
    }
    let want = cal
        .cycles_from_dac_ports(CAL_TIMEOUT)
        .map_err(|e| format!("{what}: {e}"))?;
    bench.idle(100).map_err(text)?;
    let later = bench.read("cal_cycles").map_err(text)?;
    if u64::from(cal.cycles) != want || later != cal.cycles {
        return Err(format!(
            "{what}: cal_cycles {}, {want} from the DAC ports, {later} 100 cycles later",
            cal.cycles
        ));
    }
    for (c, (settings, &skew)) in cal.settings.iter().zip(&skews).enumerate() {
        let want = CalibrationRun::expected_settings(skew, transmission);
        if *settings != want {
            return Err(format!(
                "{what}: core {c} programmed {settings:?}, {want:?} expected"
            ));
        }
    }
    let run = bench
        .infer(&s.images[0], SIZES[2], MAX_POLLS)
        .map_err(text)?;
    // The calibrated loss register undoes the transmission: the golden
    // model's lossless logits.
    exact(&run, &s.golden(0)?, &format!("after {what}"))?;
    streams_clean(&bench, &what)
}

/// Every lit DAC sample the bench saw was in the bus format, every dark one
/// zero, and no answer beat came outside an inference.
fn streams_clean<C: PhotonicCore>(bench: &TopBench<'_, C>, what: &str) -> Result<(), String> {
    let streams = bench.streams();
    match streams.clean() {
        true => Ok(()),
        false => Err(format!("{what}: {streams}")),
    }
}

/// Check 5's failed calibrations (see the module docs): `link` = (skew,
/// transmission), every core failing with `reason`.
fn calibration_fails(
    s: &TopSubject,
    mutant: &Module,
    link: (i64, f64),
    reason: u32,
) -> Result<(), String> {
    let mut dut = fresh(mutant)?;
    let mut bench = impaired_bench(s, &mut dut, [link.0; CORES], link.1)?;
    let cal = bench.calibrate(CORES, MAX_POLLS).map_err(text)?;
    let what = format!("calibration at skew {}, transmission {}", link.0, link.1);
    let reasons: Vec<u32> = (0..CORES as u32)
        .map(|c| cal.status >> (CAL_REASON_SHIFT + 2 * c) & 3)
        .collect();
    let finished = cal.status & (CAL_DONE | CAL_FAILED) == CAL_DONE | CAL_FAILED;
    if !finished || reasons != [reason; CORES] {
        return Err(format!("{what}: cal_status {:#x}", cal.status));
    }
    let untouched = [0x0100, 0, 0, 0, 0];
    for (c, settings) in cal.settings.iter().enumerate() {
        if *settings != untouched {
            return Err(format!("{what}: core {c}'s registers became {settings:?}"));
        }
    }
    streams_clean(&bench, &what)
}

/// Check 6 (see the module docs).
fn overflows(s: &TopSubject, mutant: &Module) -> Result<(), String> {
    let mut dut = fresh_with_adc(mutant, ADC_PS / 2)?;
    let links = vec![
        PhotonicLink::new(IdealCore, 8, 3),
        PhotonicLink::new(IdealCore, 8, 3),
    ];
    let mut bench = TopBench::new(&mut dut, links, &s.map, ADC_SAMPLES).map_err(text)?;
    bench.idle(100).map_err(text)?;
    let adc_dropped = bench.read("adc_dropped").map_err(text)?;
    let status = bench.read("status").map_err(text)?;
    if adc_dropped == 0 || status & ADC_OVERFLOW == 0 {
        return Err(format!(
            "ADC at twice the DAC rate: adc_dropped {adc_dropped}, status {status:#x}"
        ));
    }
    bench.adc_enabled = false;
    bench.idle(20).map_err(text)?;
    // A dark ADC keeps the run going for `timeout` cycles: commands queue.
    bench.load_image(&s.images[0]).map_err(text)?;
    bench.write("start", 1).map_err(text)?;
    // Eight more than the subject's queue holds.
    let extra = TopConfig::default().command_fifo_depth + 8;
    for _ in 0..extra {
        bench.write("image_commit", 1).map_err(text)?;
    }
    let queued = bench.read("image_commit").map_err(text)?;
    let cmd_dropped = bench.read("cmd_dropped").map_err(text)?;
    let status = bench.read("status").map_err(text)?;
    let written = s.images[0].len().div_ceil(16) as u32 + extra;
    if cmd_dropped == 0 || status & CMD_OVERFLOW == 0 || queued + cmd_dropped != written {
        return Err(format!(
            "{extra} commits during a run: image_commit {queued}, cmd_dropped {cmd_dropped} ({written} written), status {status:#x}"
        ));
    }
    bench.write("clear_stats", 1).map_err(text)?;
    bench.idle(20).map_err(text)?;
    let counts = [
        bench.read("adc_dropped").map_err(text)?,
        bench.read("cmd_dropped").map_err(text)?,
    ];
    let status = bench.read("status").map_err(text)?;
    if counts != [0, 0] || status & (ADC_OVERFLOW | CMD_OVERFLOW) != 0 {
        return Err(format!(
            "after clear_stats: adc_dropped, cmd_dropped {counts:?}, status {status:#x}"
        ));
    }
    Ok(())
}
