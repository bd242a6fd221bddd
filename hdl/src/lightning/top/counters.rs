//! Small stateful helpers of the top: counters, sticky bits, min/max capture.

use super::super::datapath::COUNTER_WIDTH;
use super::super::top_regs::LATENCY_MIN_NONE;
use crate::dsl::{Domain, ModuleBuilder, Signal};

/// What a 32-bit counter does at all ones.
#[derive(Clone, Copy, PartialEq, Eq)]
enum AtMax {
    /// Stays there.
    Saturate,
    /// Goes on from 0.
    Wrap,
}

/// A 32-bit counter of `inc`, saturating at all ones, cleared by `clear`.
pub(super) fn saturating_counter(
    m: &mut ModuleBuilder,
    dom: Domain,
    name: &str,
    inc: Signal,
    clear: Signal,
) -> Signal {
    counter(m, dom, name, inc, Some(clear), AtMax::Saturate)
}

/// A 32-bit counter of `inc`, wrapping, never cleared: a running count the host
/// takes differences of.
pub(super) fn wrapping_counter(
    m: &mut ModuleBuilder,
    dom: Domain,
    name: &str,
    inc: Signal,
) -> Signal {
    counter(m, dom, name, inc, None, AtMax::Wrap)
}

/// A 32-bit counter of `inc`, cleared by `clear` if it has one, doing `at_max` at
/// all ones.
fn counter(
    m: &mut ModuleBuilder,
    dom: Domain,
    name: &str,
    inc: Signal,
    clear: Option<Signal>,
    at_max: AtMax,
) -> Signal {
    let q = m.reg(dom, name, COUNTER_WIDTH);
    let step = match at_max {
        AtMax::Wrap => inc,
        AtMax::Saturate => {
            let full = m.reduce_and(q);
            let room = m.not(full);
            m.and(inc, room)
        }
    };
    let next = m.add_const_wrap(q, 1);
    let kept = m.mux(step, next, q);
    let kept = m.named(&format!("{name}_counted"), kept);
    let next = match clear {
        Some(clear) => {
            let zero = m.zeros(COUNTER_WIDTH);
            m.mux(clear, zero, kept)
        }
        None => kept,
    };
    m.set_next(q, next);
    q
}

/// A bit set by `set` and held until `clear`.
pub(super) fn sticky(
    m: &mut ModuleBuilder,
    dom: Domain,
    name: &str,
    set: Signal,
    clear: Signal,
) -> Signal {
    let q = m.reg(dom, name, 1);
    let held = m.or(q, set);
    let not_clear = m.not(clear);
    let next = m.and(held, not_clear);
    m.set_next(q, next);
    q
}

/// Smallest and largest `cycles` over the `sample` strobes since `clear`
/// (min resets to [`LATENCY_MIN_NONE`], max to 0).
pub(super) fn latency_range(
    m: &mut ModuleBuilder,
    dom: Domain,
    sample: Signal,
    cycles: Signal,
    clear: Signal,
) -> (Signal, Signal) {
    let none = u64::from(LATENCY_MIN_NONE);
    let lo = m.reg_init(dom, "latency_min_q", COUNTER_WIDTH, none);
    let hi = m.reg(dom, "latency_max_q", COUNTER_WIDTH);
    let below = m.lt(cycles, lo);
    let above = m.gt(cycles, hi);
    let take_lo = m.and(sample, below);
    let take_hi = m.and(sample, above);
    let lo_kept = m.mux(take_lo, cycles, lo);
    let hi_kept = m.mux(take_hi, cycles, hi);
    let none = m.lit(none, COUNTER_WIDTH);
    let zero = m.zeros(COUNTER_WIDTH);
    let lo_next = m.mux(clear, none, lo_kept);
    let hi_next = m.mux(clear, zero, hi_kept);
    m.set_next(lo, lo_next);
    m.set_next(hi, hi_next);
    (lo, hi)
}
