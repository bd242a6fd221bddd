//! Failure conditions and `fail_reason` (see the module docs of
//! [`datapath`](super::datapath) for the priorities).

use super::adc_window::AdcWindows;
use super::join::Accepted;
use super::sequencer::Sequencer;
use super::{
    FAIL_LOST_LIGHT, FAIL_NO_LOCK, FAIL_REASON_WIDTH, FAIL_ROUND_TRIP, FAIL_SKEW, FAIL_WEIGHTS,
};
use crate::dsl::{ModuleBuilder, Signal};

/// What can fail.
pub(super) struct FailuresIn<'a> {
    /// The sequencer.
    pub seq: &'a Sequencer,
    /// The ADC windows (detector timeouts, watchdogs, sign FIFO overflows).
    pub adc: &'a AdcWindows,
    /// The join (skew buffer overflow).
    pub accepted: &'a Accepted,
    /// The weight watchdog fired (streamed weights only).
    pub weights_stalled: Option<Signal>,
}

/// The failures of this cycle (`go` cycles excluded: the detectors still show
/// the previous search).
pub(super) struct Failures {
    /// The failures this datapath can have, each with its reason code, highest
    /// priority first: [`FAIL_NO_LOCK`], [`FAIL_LOST_LIGHT`], then, where the
    /// configuration has them, [`FAIL_ROUND_TRIP`] and [`FAIL_WEIGHTS`]
    /// (streamed weights) and [`FAIL_SKEW`] (two or more cores). One that
    /// cannot happen is left out, not built as a constant 0.
    pub causes: Vec<(Signal, u64)>,
    /// Any failure: the inference ends.
    pub abort: Signal,
}

/// The failure conditions.
pub(super) fn failures(m: &mut ModuleBuilder, input: &FailuresIn) -> Failures {
    let (running, adc) = (input.seq.running, input.adc);
    let trip_any =
        (!adc.round_trip_overflows.is_empty()).then(|| m.or_all(&adc.round_trip_overflows));
    let sources = [
        (Some(adc.det_failed), FAIL_NO_LOCK),
        (Some(adc.light_lost), FAIL_LOST_LIGHT),
        (trip_any, FAIL_ROUND_TRIP),
        (input.weights_stalled, FAIL_WEIGHTS),
        (input.accepted.skew_overflow, FAIL_SKEW),
    ];
    let causes: Vec<(Signal, u64)> = sources
        .into_iter()
        .filter_map(|(source, code)| source.map(|s| (m.and(running, s), code)))
        .collect();
    let conditions: Vec<Signal> = causes.iter().map(|&(c, _)| c).collect();
    let abort = m.or_all(&conditions);
    Failures { causes, abort }
}

/// `fail_reason`: the first failure's code, by priority, until the next `start`.
pub(super) fn record_reason(m: &mut ModuleBuilder, seq: &Sequencer, f: &Failures) {
    let reason_none = m.zeros(FAIL_REASON_WIDTH);
    let codes: Vec<(Signal, Signal)> = f
        .causes
        .iter()
        .map(|&(c, code)| (c, m.lit(code, FAIL_REASON_WIDTH)))
        .collect();
    // With `abort` up some cause holds: when no higher one does, the lowest
    // does, so it needs no test.
    let (&(_, lowest), higher) = codes
        .split_last()
        .expect("no lock and lost light are always causes");
    let new_reason = m.select(higher, lowest);
    let not_failed = m.not(seq.failed);
    let first_abort = m.and(f.abort, not_failed);
    let reason_kept = m.mux(first_abort, new_reason, seq.fail_reason);
    let reason_next = m.mux(seq.start_ok, reason_none, reason_kept);
    m.set_next(seq.fail_reason, reason_next);
}
