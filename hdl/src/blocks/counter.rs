//! An up-counter with synchronous load and count enable.

use crate::dsl::ModuleBuilder;
use crate::ir::{HdlError, Module, ResetPolarity};

/// `up_counter_w{width}`: on each rising edge of `clk`, `count` becomes 0 while `rst`,
/// else `load_value` if `load`, else `count + 1` (wrapping) if `en`, else holds.
///
/// Ports: `clk`, `rst` (active high), `en`, `load`, `load_value[width]`, `count[width]`.
pub fn up_counter(width: u32) -> Result<Module, HdlError> {
    const NAME: &str = "up_counter";
    if !(1..=64).contains(&width) {
        return Err(HdlError::parameter(
            NAME,
            "width",
            format!("{width} is not in 1..=64"),
        ));
    }
    let mut m = ModuleBuilder::new(&format!("up_counter_w{width}"));
    let clk = m.domain("clk", "clk", Some("rst"), ResetPolarity::ActiveHigh);
    let en = m.input("en", 1);
    let load = m.input("load", 1);
    let load_value = m.input("load_value", width);
    let count = m.reg(clk, "count_q", width);
    let inc = m.add_const_wrap(count, 1);
    let next = m.mux(load, load_value, inc);
    let update = m.or(load, en);
    m.set_next(count, next);
    m.set_enable(count, update);
    m.output("count", count);
    m.finish()
}
