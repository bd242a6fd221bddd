//! The AXI-Stream skid buffer: breaks the `tready` combinational path with full
//! throughput.

use crate::dsl::{AxisBeat, AxisConfig, ModuleBuilder};
use crate::ir::{HdlError, Module, ResetPolarity};

/// `axis_skid_w{data}_u{user}` (or `…_words` for plain word streams): a two-entry
/// AXI-Stream register slice. `s_axis_tready` comes straight from a register (no
/// combinational path from `m_axis_tready`), `m_axis_*` come from registers, and one
/// beat per cycle passes when the output is not stalled.
///
/// Behaviour (cycle-exact): it holds up to two beats in order; `m_axis_tvalid` is 1
/// whenever it holds a beat (the oldest is on `m_axis_*`); `s_axis_tready` is 1
/// whenever it holds fewer than two. Beats are never dropped, duplicated or altered.
///
/// Ports: `clk`, `rst` (active high), `s_axis_*`, `m_axis_*` per `cfg`.
pub fn axis_skid(cfg: &AxisConfig) -> Result<Module, HdlError> {
    if cfg.data_width == 0 || (cfg.packets && !cfg.data_width.is_multiple_of(8)) {
        return Err(HdlError::parameter(
            "axis_skid",
            "data_width",
            format!(
                "{} must be positive and a multiple of 8 for a packet stream",
                cfg.data_width
            ),
        ));
    }
    let name = if cfg.packets {
        format!("axis_skid_w{}_u{}", cfg.data_width, cfg.user_width)
    } else {
        format!("axis_skid_w{}_words", cfg.data_width)
    };
    let mut m = ModuleBuilder::new(&name);
    let clk = m.domain("clk", "clk", Some("rst"), ResetPolarity::ActiveHigh);
    let s = m.axis_in("s_axis", cfg);
    let o = m.axis_out("m_axis", cfg);
    let width = AxisBeat::packed_width(cfg);
    let in_beat = s.beat.pack(&mut m);

    let main_valid = m.reg(clk, "main_valid", 1);
    let main_data = m.reg_no_reset(clk, "main_data", width);
    let skid_valid = m.reg(clk, "skid_valid", 1);
    let skid_data = m.reg_no_reset(clk, "skid_data", width);

    let ready = m.not(skid_valid);
    let accept = m.and(s.tvalid, ready);
    let consume = m.and(main_valid, o.tready);
    let main_empty = m.not(main_valid);
    let main_free = m.or(main_empty, consume);

    // Main register: refills from the skid register first, else from the input.
    let main_in = m.mux(skid_valid, skid_data, in_beat);
    let main_next_valid = m.or(skid_valid, accept);
    m.set_next(main_data, main_in);
    m.set_enable(main_data, main_free);
    m.set_next(main_valid, main_next_valid);
    m.set_enable(main_valid, main_free);

    // Skid register: catches a beat accepted while the main register is stalled.
    let stalled = m.not(main_free);
    let catch = m.and(accept, stalled);
    m.set_next(skid_data, in_beat);
    m.set_enable(skid_data, catch);
    let skid_next = m.and(skid_valid, stalled);
    let skid_next = m.or(skid_next, catch);
    m.set_next(skid_valid, skid_next);

    m.assign(s.tready, ready);
    m.assign(o.tvalid, main_valid);
    let out_beat = AxisBeat::unpack(&mut m, cfg, main_data);
    m.drive_beat(&o.beat, &out_beat);
    m.finish()
}
