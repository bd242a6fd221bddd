//! Clock-domain crossings: the only legal way for a value to pass from one clock
//! domain to another. Each block marks its first destination flop as a crossing
//! register, which the validator accepts; everything else is ordinary logic.

use crate::dsl::{Domain, ModuleBuilder, Signal};
use crate::ir::{HdlError, Module, ResetPolarity};

/// `sync_bits_w{width}_s{stages}`: a multi-flop synchronizer for level signals that
/// change slowly (quasi-static configuration bits) or one bit at a time (Gray codes).
/// `q` follows `d` after `stages` rising edges of `clk`. Each bit is synchronized
/// independently: a multi-bit value that changes in several bits at once may be seen
/// torn for one cycle — use [`handshake_sync`] for such buses.
///
/// Ports: `clk`, `rst` (active high), `d[width]` (from any domain), `q[width]`.
pub fn sync_bits(width: u32, stages: u32) -> Result<Module, HdlError> {
    const NAME: &str = "sync_bits";
    if width == 0 {
        return Err(HdlError::parameter(NAME, "width", "must be at least 1"));
    }
    if !(2..=8).contains(&stages) {
        return Err(HdlError::parameter(
            NAME,
            "stages",
            format!("{stages} is not in 2..=8"),
        ));
    }
    let mut m = ModuleBuilder::new(&format!("sync_bits_w{width}_s{stages}"));
    let clk = m.domain("clk", "clk", Some("rst"), ResetPolarity::ActiveHigh);
    let d = m.input("d", width);
    let first = m.sync_first(clk, "sync_0", width);
    m.set_next(first, d);
    let mut q = first;
    for i in 1..stages {
        q = m.sync_stage(clk, &format!("sync_{i}"), q);
    }
    m.output("q", q);
    m.finish()
}

/// `pulse_sync`: carries single-cycle pulses from domain `src` to domain `dst` by
/// toggling a level in `src` and detecting its edges after a two-flop synchronizer.
/// Each `src_pulse` yields exactly one `dst_pulse` 2–3 `dst` cycles later, provided
/// pulses are at least 3 `dst` cycles + 1 `src` cycle apart (closer pulses may merge).
///
/// Ports: `src_clk`, `src_rst`, `src_pulse`; `dst_clk`, `dst_rst`, `dst_pulse`
/// (resets active high).
pub fn pulse_sync() -> Result<Module, HdlError> {
    let mut m = ModuleBuilder::new("pulse_sync");
    let src = m.domain("src", "src_clk", Some("src_rst"), ResetPolarity::ActiveHigh);
    let dst = m.domain("dst", "dst_clk", Some("dst_rst"), ResetPolarity::ActiveHigh);
    let pulse = m.input("src_pulse", 1);
    let toggle = m.reg(src, "src_toggle", 1);
    let flipped = m.not(toggle);
    m.set_next(toggle, flipped);
    m.set_enable(toggle, pulse);
    let s0 = m.sync_first(dst, "dst_sync_0", 1);
    m.set_next(s0, toggle);
    let s1 = m.sync_stage(dst, "dst_sync_1", s0);
    let prev = m.register(dst, "dst_prev", s1);
    let edge = m.xor(s1, prev);
    m.output("dst_pulse", edge);
    m.finish()
}

/// `handshake_sync_w{width}`: carries words of `width` bits from domain `src` to
/// domain `dst` with a two-phase (toggle) handshake (request and acknowledge
/// toggles, each through a two-flop synchronizer). The word is held stable in `src`
/// while it crosses, so the destination never sees a torn value.
///
/// Source side: offer `src_data` with `src_valid`; it is taken in a cycle where
/// `src_ready` is 1. Destination side: `dst_valid` pulses for one cycle with the word
/// on `dst_data` (which holds it until the next word). One word per round trip
/// (about 3 `dst` + 3 `src` cycles).
///
/// Ports: `src_clk`, `src_rst`, `src_valid`, `src_data[width]`, `src_ready`;
/// `dst_clk`, `dst_rst`, `dst_valid`, `dst_data[width]` (resets active high).
pub fn handshake_sync(width: u32) -> Result<Module, HdlError> {
    if width == 0 {
        return Err(HdlError::parameter(
            "handshake_sync",
            "width",
            "must be at least 1",
        ));
    }
    let mut m = ModuleBuilder::new(&format!("handshake_sync_w{width}"));
    let src = m.domain("src", "src_clk", Some("src_rst"), ResetPolarity::ActiveHigh);
    let dst = m.domain("dst", "dst_clk", Some("dst_rst"), ResetPolarity::ActiveHigh);
    let src_valid = m.input("src_valid", 1);
    let src_data = m.input("src_data", width);

    // Source: hold the word and flip `req` when a word is taken; busy until `ack`
    // (synchronized back) equals `req`.
    let req = m.reg(src, "src_req", 1);
    let ack_s0 = m.sync_first(src, "src_ack_sync_0", 1);
    let ack_s1 = m.sync_stage(src, "src_ack_sync_1", ack_s0);
    let busy = m.xor(req, ack_s1);
    let ready = m.not(busy);
    let take = m.and(src_valid, ready);
    let req_flipped = m.not(req);
    m.set_next(req, req_flipped);
    m.set_enable(req, take);
    let hold = m.reg(src, "src_hold", width);
    m.set_next(hold, src_data);
    m.set_enable(hold, take);
    m.output("src_ready", ready);

    // Destination: synchronize `req`, capture the (stable) word on its edge, and
    // return the synchronized level as `ack`.
    let req_s0 = m.sync_first(dst, "dst_req_sync_0", 1);
    m.set_next(req_s0, req);
    let req_s1 = m.sync_stage(dst, "dst_req_sync_1", req_s0);
    let ack = m.register(dst, "dst_ack", req_s1);
    m.set_next(ack_s0, ack);
    let new_word = m.xor(req_s1, ack);
    let captured = m.crossing_reg(dst, "dst_word", width);
    m.set_next(captured, hold);
    m.set_enable(captured, new_word);
    let valid = m.register(dst, "dst_valid_q", new_word);
    m.output("dst_valid", valid);
    m.output("dst_data", captured);
    m.finish()
}

/// Instantiates [`pulse_sync`] as `name` in `m`, carrying the one-cycle `pulse`
/// of domain `src` to a one-cycle pulse in domain `dst`.
pub fn cross_pulse(
    m: &mut ModuleBuilder,
    name: &str,
    src: Domain,
    dst: Domain,
    pulse: Signal,
) -> Result<Signal, HdlError> {
    let ps = m.instance(name, &pulse_sync()?);
    m.bind_domain(ps, "src", src);
    m.bind_domain(ps, "dst", dst);
    m.connect(ps, "src_pulse", pulse);
    Ok(m.instance_output(ps, "dst_pulse"))
}

/// Instantiates [`handshake_sync`] as `name` in `m`, re-sending `value` of
/// domain `src` continuously: the result in `dst` is never torn and a few `dst`
/// cycles old.
pub fn cross_word(
    m: &mut ModuleBuilder,
    name: &str,
    src: Domain,
    dst: Domain,
    value: Signal,
) -> Result<Signal, HdlError> {
    let hs = m.instance(name, &handshake_sync(value.width())?);
    m.bind_domain(hs, "src", src);
    m.bind_domain(hs, "dst", dst);
    let one = m.lit(1, 1);
    m.connect(hs, "src_valid", one);
    m.connect(hs, "src_data", value);
    Ok(m.instance_output(hs, "dst_data"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::HdlErrorKind;
    use crate::Module;

    /// The registers of `m` marked as synchronizer flops, and those that sample
    /// another domain without being one, by name.
    fn flops(m: &Module) -> (Vec<String>, Vec<String>) {
        let named = |keep: &dyn Fn(&crate::ir::Register) -> bool| {
            (m.regs.iter().filter(|r| keep(r)))
                .map(|r| m.describe_net(r.q))
                .collect::<Vec<_>>()
        };
        (
            named(&|r| r.async_reg),
            named(&|r| r.crossing && !r.async_reg),
        )
    }

    #[test]
    fn every_synchronizer_flop_and_only_those_are_marked() {
        let cases: [(Module, &[&str], &[&str]); 4] = [
            (
                sync_bits(3, 4).unwrap(),
                &["sync_0", "sync_1", "sync_2", "sync_3"],
                &[],
            ),
            (pulse_sync().unwrap(), &["dst_sync_0", "dst_sync_1"], &[]),
            (
                handshake_sync(8).unwrap(),
                &[
                    "src_ack_sync_0",
                    "src_ack_sync_1",
                    "dst_req_sync_0",
                    "dst_req_sync_1",
                ],
                // The word is captured once the handshake holds it stable.
                &["dst_word"],
            ),
            (
                crate::blocks::fifo::async_fifo(8, 16).unwrap(),
                &[
                    "rd_gray_sync_0",
                    "rd_gray_sync_1",
                    "wr_gray_sync_0",
                    "wr_gray_sync_1",
                ],
                &[],
            ),
        ];
        for (m, synchronizer, captures) in cases {
            let (marked, crossing) = flops(&m);
            assert_eq!(marked, synchronizer, "{}", m.name);
            assert_eq!(crossing, captures, "{}", m.name);
        }
    }

    #[test]
    fn a_register_marked_as_a_synchronizer_flop_must_be_one() {
        let illegal = |e: HdlError, why: &str| {
            assert!(
                matches!(&e.kind, HdlErrorKind::IllegalUse(s)
                    if s.contains("marked as a synchronizer flop") && s.contains(why)),
                "{e}"
            );
        };
        // A stage after a register that is no synchronizer flop.
        let mut m = ModuleBuilder::new("not_a_chain");
        let clk = m.domain("clk", "clk", Some("rst"), ResetPolarity::ActiveHigh);
        let d = m.input("d", 1);
        let plain = m.register(clk, "plain", d);
        let stage = m.sync_stage(clk, "stage", plain);
        m.output("q", stage);
        illegal(m.finish().unwrap_err(), "nor copies a synchronizer flop");

        // A first flop with an enable (it would hold a metastable value).
        let mut m = ModuleBuilder::new("enabled");
        let clk = m.domain("clk", "clk", Some("rst"), ResetPolarity::ActiveHigh);
        let d = m.input("d", 1);
        let en = m.input("en", 1);
        let first = m.sync_first(clk, "first", 1);
        m.set_next(first, d);
        m.set_enable(first, en);
        m.output("q", first);
        illegal(m.finish().unwrap_err(), "it has an enable");
    }
}
