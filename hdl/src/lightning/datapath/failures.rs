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
    /// The weight watchdog fired (streamed weights).
    pub weights_stalled: Signal,
}

/// The failures of this cycle (`go` cycles excluded: the detectors still show
/// the previous search).
pub(super) struct Failures {
    /// [`FAIL_NO_LOCK`].
    pub no_lock: Signal,
    /// [`FAIL_LOST_LIGHT`].
    pub no_light: Signal,
    /// [`FAIL_ROUND_TRIP`].
    pub too_long: Signal,
    /// [`FAIL_WEIGHTS`].
    pub starved: Signal,
    /// Any failure: the inference ends.
    pub abort: Signal,
}

/// The failure conditions.
pub(super) fn failures(m: &mut ModuleBuilder, input: &FailuresIn) -> Failures {
    let (running, adc) = (input.seq.running, input.adc);
    let no_lock = m.and(running, adc.det_failed);
    let no_light = m.and(running, adc.light_lost);
    let skewed = m.and(running, input.accepted.skew_overflow);
    let trip_any = if adc.round_trip_overflows.is_empty() {
        m.zeros(1)
    } else {
        m.or_all(&adc.round_trip_overflows)
    };
    let too_long = m.and(running, trip_any);
    let starved = m.and(running, input.weights_stalled);
    let abort = m.or_all(&[no_lock, no_light, too_long, starved, skewed]);
    Failures {
        no_lock,
        no_light,
        too_long,
        starved,
        abort,
    }
}

/// `fail_reason`: the first failure's code, by priority, until the next `start`.
pub(super) fn record_reason(m: &mut ModuleBuilder, seq: &Sequencer, f: &Failures) {
    let reason_no_lock = m.lit(FAIL_NO_LOCK, FAIL_REASON_WIDTH);
    let reason_skew = m.lit(FAIL_SKEW, FAIL_REASON_WIDTH);
    let reason_none = m.zeros(FAIL_REASON_WIDTH);
    let reason_lost = m.lit(FAIL_LOST_LIGHT, FAIL_REASON_WIDTH);
    let reason_trip = m.lit(FAIL_ROUND_TRIP, FAIL_REASON_WIDTH);
    let reason_weights = m.lit(FAIL_WEIGHTS, FAIL_REASON_WIDTH);
    let new_reason = m.mux(f.starved, reason_weights, reason_skew);
    let new_reason = m.mux(f.too_long, reason_trip, new_reason);
    let new_reason = m.mux(f.no_light, reason_lost, new_reason);
    let new_reason = m.mux(f.no_lock, reason_no_lock, new_reason);
    let not_failed = m.not(seq.failed);
    let first_abort = m.and(f.abort, not_failed);
    let reason_kept = m.mux(first_abort, new_reason, seq.fail_reason);
    let reason_next = m.mux(seq.start_ok, reason_none, reason_kept);
    m.set_next(seq.fail_reason, reason_next);
}
