//! The statistics counters: 32 bits each, wrapping, cleared by a pulse.

use crate::dsl::{Domain, ModuleBuilder, Signal};

/// The counter of cycles the output waited on `m_axis_tready`: not modelled by
/// the golden model (it depends on the downstream), checked against the bench's
/// own count.
pub const OUTPUT_HELD_CYCLES: &str = "output_held_cycles";

/// The counter of cycles the dispatcher waited on a full packet buffer (by
/// `full_wait`'s rule): not modelled by the golden model (it depends on timing).
pub const STALL_CYCLES: &str = "stall_cycles";

/// Counter width.
pub const COUNTER_WIDTH: u32 = 32;

/// Every counter of the spec, in register order, with its meaning.
pub const COUNTERS: [(&str, &str); 14] = [
    ("packets_in", "frames that entered (every class)"),
    (
        "bypassed",
        "frames sent out unchanged (unknown jobs included)",
    ),
    ("accepted", "aggregation packets stored in a packet buffer"),
    ("results_out", "result packets sent"),
    (
        "unknown_job",
        "aggregation packets of no enabled slot (bypassed)",
    ),
    ("malformed", "malformed aggregation packets (dropped)"),
    (
        "seq_mismatch",
        "buffered packets dropped for a seq older than another port's",
    ),
    (
        "other_mismatch",
        "buffered packets dropped for elem_count or format",
    ),
    (
        STALL_CYCLES,
        "cycles the input waited for room in a full packet buffer",
    ),
    (
        "oversize",
        "frames longer than max_frame_bytes, cut off as they arrived (dropped)",
    ),
    ("empty_frames", "frames without a byte (dropped)"),
    (
        "full_drops",
        "aggregation packets dropped after full_wait cycles on a full buffer, or at once on a wedged one",
    ),
    (
        "timeout_drops",
        "buffered packets flushed from a slot not ready for slot_timeout cycles",
    ),
    (
        OUTPUT_HELD_CYCLES,
        "cycles a beat waited on m_axis_tready low: downstream, not PANAMA, held the wire",
    ),
];

/// Builds counter `name` (output port `name`, clear input `name_clear`) that adds
/// `increment` (any width, zero-extended) every cycle.
pub(super) fn counter(m: &mut ModuleBuilder, clk: Domain, name: &str, increment: Signal) {
    let clear = m.input(&format!("{name}_clear"), 1);
    let value = m.reg(clk, &format!("{name}_q"), COUNTER_WIDTH);
    let inc = m.zext(increment, COUNTER_WIDTH);
    let sum = m.add_wrap(value, inc);
    let zero = m.zeros(COUNTER_WIDTH);
    let next = m.mux(clear, zero, sum);
    m.set_next(value, next);
    m.output(name, value);
}
