//! The count-action unit: Lightning's abstraction for starting photonic operations
//! at exactly the right cycle without a processor in the loop. It counts events,
//! compares the count with a run-time target and fires an action strobe when the
//! count reaches it.
//!
//! # Semantics (cycle-exact)
//!
//! In every cycle the unit computes `inc` = the number of 1 bits of `events` (0 when
//! `enable` is 0, or while a one-shot unit is `done`) and `sum = count + inc`.
//! - It **fires** (`action` = 1, combinationally, in this cycle) when
//!   `target != 0 && sum >= target`.
//! - On the next edge `count` becomes `sum - target` if it fired (**the excess carries
//!   over**: no event is lost), else `sum`. The count saturates at its maximum rather
//!   than wrapping.
//! - **Jumping past the target** (`inc` large, or the target lowered below the count):
//!   it fires once in that cycle; if the carried count is still ≥ target it fires again
//!   in the next cycle (even with no events), until the backlog is worked off.
//! - **Changing the target mid-count** takes effect at once: the comparison always uses
//!   the current `target`.
//! - **Target 0** disables the unit's action: it never fires; counting goes on.
//! - **Policies**: with `one_shot` = 0 the unit reloads and fires at every multiple of
//!   the target; with `one_shot` = 1 it fires once, then sets `done` and ignores events
//!   until `clear`. A *stopped* unit is one with `enable` = 0: it holds its count.
//! - `clear` (synchronous, priority over everything but reset) zeroes the count and
//!   `done`; the unit does not fire in a cycle where `clear` is 1.
//! - Reset: count 0, `done` 0.
//!
//! Chaining: a unit's `action` is a valid `events` input of another (a one-bit
//! count source), e.g. count output neurons after counting cycles per neuron.

use crate::dsl::{bits_for, ModuleBuilder};
use crate::ir::{HdlError, Module, ResetPolarity};

/// Shape of a count-action unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CountActionConfig {
    /// Width of the event vector counted each cycle (1 = a single strobe).
    pub events: u32,
    /// Width of the count and the target (1..=48).
    pub count_width: u32,
}

impl Default for CountActionConfig {
    /// 16 event strobes per cycle, a 16-bit count.
    fn default() -> Self {
        CountActionConfig {
            events: 16,
            count_width: 16,
        }
    }
}

/// Generates `count_action_e{events}_w{count_width}`.
///
/// Ports: `clk`, `rst` (active high); inputs `events[events]`, `enable`, `clear`,
/// `one_shot`, `target[count_width]`; outputs `action` (combinational strobe),
/// `count[count_width]` (registered), `done` (one-shot completed).
pub fn count_action(cfg: &CountActionConfig) -> Result<Module, HdlError> {
    const NAME: &str = "count_action";
    if !(1..=1024).contains(&cfg.events) {
        return Err(HdlError::parameter(
            NAME,
            "events",
            format!("{} is not in 1..=1024", cfg.events),
        ));
    }
    let w = cfg.count_width;
    if !(1..=48).contains(&w) {
        return Err(HdlError::parameter(
            NAME,
            "count_width",
            format!("{w} is not in 1..=48"),
        ));
    }
    if bits_for(cfg.events) > w {
        return Err(HdlError::parameter(
            NAME,
            "count_width",
            format!("{w} bits cannot hold {} events of one cycle", cfg.events),
        ));
    }
    let mut m = ModuleBuilder::new(&format!("count_action_e{}_w{w}", cfg.events));
    let clk = m.domain("clk", "clk", Some("rst"), ResetPolarity::ActiveHigh);
    let events = m.input("events", cfg.events);
    let enable = m.input("enable", 1);
    let clear = m.input("clear", 1);
    let one_shot = m.input("one_shot", 1);
    let target = m.input("target", w);

    let count = m.reg(clk, "count_q", w);
    let done = m.reg(clk, "done_q", 1);

    let not_done = m.not(done);
    let live = m.and(enable, not_done);
    let pop = m.popcount(events);
    let pop = m.zext(pop, w);
    let zero = m.zeros(w);
    let inc = m.mux(live, pop, zero);
    let sum = m.add(count, inc); // w + 1 bits: never overflows
    let target_x = m.zext(target, w + 1);
    let reached = m.ge(sum, target_x);
    let armed = m.reduce_or(target);
    let no_clear = m.not(clear);
    let fire = m.and_all(&[armed, reached, no_clear]);
    let fire = m.named("fire", fire);

    let excess = m.sub_wrap(sum, target_x);
    let after = m.mux(fire, excess, sum);
    // Saturate instead of wrapping when the count outgrows its width.
    let top = m.msb(after);
    let low = m.truncate(after, w);
    let max = m.ones(w);
    let saturated = m.mux(top, max, low);
    let next_count = m.mux(clear, zero, saturated);
    m.set_next(count, next_count);

    let finished = m.and(fire, one_shot);
    let stays = m.or(done, finished);
    let done_next = m.and(stays, no_clear);
    m.set_next(done, done_next);

    m.output("action", fire);
    m.output("count", count);
    m.output("done", done);
    m.finish()
}
