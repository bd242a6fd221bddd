//! First-word-fall-through FIFOs in block RAM: a synchronous one and an
//! asynchronous one (Gray-coded pointers) for crossing clock domains.
//!
//! Both share the read side: the RAM's own registered read data is the output
//! word, and a RAM read is issued whenever the RAM holds a word and the output is
//! free or being popped, so one word per cycle flows at full rate.

use crate::dsl::{bits_for, Domain, Memory, ModuleBuilder, Signal};
use crate::ir::{HdlError, Module, ResetPolarity};

/// Largest FIFO depth accepted (words).
pub const MAX_DEPTH: u32 = 1 << 20;

fn check_width_depth(name: &str, width: u32, depth: u32) -> Result<(), HdlError> {
    if width == 0 || width > 4096 {
        return Err(HdlError::parameter(
            name,
            "width",
            format!("{width} is not in 1..=4096"),
        ));
    }
    if !(2..=MAX_DEPTH).contains(&depth) {
        return Err(HdlError::parameter(
            name,
            "depth",
            format!("{depth} is not in 2..={MAX_DEPTH}"),
        ));
    }
    Ok(())
}

/// The FWFT read side shared by both FIFOs: given whether the RAM holds a word
/// (`ram_has_word`), returns (`read`, `out_valid`, `pop`): `read` advances the read
/// pointer, `out_valid` says `rd_data` holds the head word.
fn fwft_read_side(
    m: &mut ModuleBuilder,
    rd: Domain,
    mem: Memory,
    rd_addr: Signal,
    ram_has_word: Signal,
    rd_en: Signal,
) -> (Signal, Signal, Signal) {
    let out_valid = m.reg(rd, "out_valid", 1);
    let pop = m.and(rd_en, out_valid);
    let out_free = m.not(out_valid);
    let out_free_or_pop = m.or(out_free, pop);
    let read = m.and(ram_has_word, out_free_or_pop);
    let read = m.named("ram_read", read);
    let data = m.mem_read(mem, rd, "rd_data_q", rd_addr, Some(read));
    // Output stays valid if a word is read; otherwise it empties on a pop.
    let stays = m.not(pop);
    let still_valid = m.and(out_valid, stays);
    let next_valid = m.or(read, still_valid);
    m.set_next(out_valid, next_valid);
    m.output("rd_data", data);
    let empty = m.not(out_valid);
    m.output("empty", empty);
    (read, out_valid, pop)
}

/// `fifo_w{width}_d{depth}`: a synchronous first-word-fall-through FIFO of `depth`
/// words of `width` bits in block RAM.
///
/// Ports: `clk`, `rst` (active high); `wr_en`, `wr_data[width]`, `full`; `rd_en`,
/// `rd_data[width]`, `empty`; `count[bits_for(depth)]`.
///
/// Behaviour (cycle-exact): a write (`wr_en` while not `full`) in cycle *c* is counted
/// from cycle *c+1*; `rd_data` is valid whenever `empty` is 0, and `rd_en` in such a
/// cycle pops it. A word written in cycle *c* reaches the output no earlier than cycle
/// *c+2*, and as soon as the words before it have been popped. `count` is the number
/// of words held (including the one on the output); `full` is `count == depth`.
/// `wr_en` while full and `rd_en` while empty are ignored.
pub fn sync_fifo(width: u32, depth: u32) -> Result<Module, HdlError> {
    check_width_depth("fifo", width, depth)?;
    let ram_depth = depth.next_power_of_two().max(2);
    let aw = ram_depth.trailing_zeros();
    let cw = bits_for(depth);
    let mut m = ModuleBuilder::new(&format!("fifo_w{width}_d{depth}"));
    let clk = m.domain("clk", "clk", Some("rst"), ResetPolarity::ActiveHigh);
    let wr_en = m.input("wr_en", 1);
    let wr_data = m.input("wr_data", width);
    let rd_en = m.input("rd_en", 1);

    let count = m.reg(clk, "count_q", cw);
    let full = m.eq_const(count, depth as u64);
    let not_full = m.not(full);
    let push = m.and(wr_en, not_full);
    let push = m.named("push", push);

    // Pointers carry one extra bit so that equal pointers mean an empty RAM.
    let wptr = m.reg(clk, "wr_ptr", aw + 1);
    let rptr = m.reg(clk, "rd_ptr", aw + 1);
    let mem = m.memory("ram", width, ram_depth, None);
    let waddr = m.truncate(wptr, aw);
    m.mem_write(mem, clk, waddr, wr_data, push);
    let wnext = m.add_const_wrap(wptr, 1);
    m.set_next(wptr, wnext);
    m.set_enable(wptr, push);

    let ram_has_word = m.ne(wptr, rptr);
    let raddr = m.truncate(rptr, aw);
    let (read, _, pop) = fwft_read_side(&mut m, clk, mem, raddr, ram_has_word, rd_en);
    let rnext = m.add_const_wrap(rptr, 1);
    m.set_next(rptr, rnext);
    m.set_enable(rptr, read);

    // count + push - pop
    let up = m.add_const_wrap(count, 1);
    let one = m.lit(1, cw);
    let down = m.sub_wrap(count, one);
    let changes = m.xor(push, pop);
    let next_count = m.mux(push, up, down);
    m.set_next(count, next_count);
    m.set_enable(count, changes);

    m.output("full", full);
    m.output("count", count);
    m.finish()
}

/// Binary to Gray code.
fn to_gray(m: &mut ModuleBuilder, bin: Signal) -> Signal {
    let shifted = m.shr(bin, 1);
    m.xor(bin, shifted)
}

/// `async_fifo_w{width}_d{depth}`: an asynchronous first-word-fall-through FIFO for
/// crossing from domain `wr` to domain `rd`: `depth` words (a power of two) of block
/// RAM plus the word on the output, so it holds up to `depth + 1` words.
/// Pointers cross as Gray codes through two-flop synchronizers, so `full` and `empty`
/// are conservative: `full` may stay set, and `empty` may stay set, a few cycles
/// after the other side has moved on; no word is ever lost, duplicated or reordered.
///
/// Ports: `wr_clk`, `wr_rst`, `wr_en`, `wr_data[width]`, `full`, `wr_count`
/// (words in the RAM as the write side sees them, at most `depth`); `rd_clk`, `rd_rst`, `rd_en`,
/// `rd_data[width]`, `empty` (resets active high; reset both sides together).
pub fn async_fifo(width: u32, depth: u32) -> Result<Module, HdlError> {
    check_width_depth("async_fifo", width, depth)?;
    if !depth.is_power_of_two() || depth < 4 {
        return Err(HdlError::parameter(
            "async_fifo",
            "depth",
            format!("{depth} must be a power of two, at least 4 (Gray-coded pointers)"),
        ));
    }
    let aw = depth.trailing_zeros();
    let mut m = ModuleBuilder::new(&format!("async_fifo_w{width}_d{depth}"));
    let wr = m.domain("wr", "wr_clk", Some("wr_rst"), ResetPolarity::ActiveHigh);
    let rd = m.domain("rd", "rd_clk", Some("rd_rst"), ResetPolarity::ActiveHigh);
    let wr_en = m.input("wr_en", 1);
    let wr_data = m.input("wr_data", width);
    let rd_en = m.input("rd_en", 1);
    let mem = m.memory("ram", width, depth, None);
    m.allow_dual_clock(mem);

    // Write side.
    let wbin = m.reg(wr, "wr_bin", aw + 1);
    let wgray = m.reg(wr, "wr_gray", aw + 1);
    let rgray_w0 = m.sync_first(wr, "rd_gray_sync_0", aw + 1);
    let rgray_w = m.sync_stage(wr, "rd_gray_sync_1", rgray_w0);
    // Full: the write pointer is one lap ahead: Gray codes differ in the top two bits only.
    let top2 = m.slice(rgray_w, aw - 1, 2);
    let top2_inv = m.not(top2);
    let rest = m.truncate(rgray_w, aw - 1);
    let lap_ahead = m.concat(&[top2_inv, rest]);
    let full = m.eq(wgray, lap_ahead);
    let not_full = m.not(full);
    let push = m.and(wr_en, not_full);
    let push = m.named("push", push);
    let waddr = m.truncate(wbin, aw);
    m.mem_write(mem, wr, waddr, wr_data, push);
    let wbin_next = m.add_const_wrap(wbin, 1);
    let wgray_next = to_gray(&mut m, wbin_next);
    m.set_next(wbin, wbin_next);
    m.set_enable(wbin, push);
    m.set_next(wgray, wgray_next);
    m.set_enable(wgray, push);
    m.output("full", full);
    // Words in flight as seen from the write side: wbin - bin(rgray_w).
    let rbin_w = gray_to_bin(&mut m, rgray_w);
    let level = m.sub_wrap(wbin, rbin_w);
    m.output("wr_count", level);

    // Read side.
    let rbin = m.reg(rd, "rd_bin", aw + 1);
    let rgray = m.reg(rd, "rd_gray", aw + 1);
    let wgray_r0 = m.sync_first(rd, "wr_gray_sync_0", aw + 1);
    m.set_next(wgray_r0, wgray);
    let wgray_r = m.sync_stage(rd, "wr_gray_sync_1", wgray_r0);
    m.set_next(rgray_w0, rgray);
    let ram_has_word = m.ne(rgray, wgray_r);
    let raddr = m.truncate(rbin, aw);
    let (read, _, _) = fwft_read_side(&mut m, rd, mem, raddr, ram_has_word, rd_en);
    let rbin_next = m.add_const_wrap(rbin, 1);
    let rgray_next = to_gray(&mut m, rbin_next);
    m.set_next(rbin, rbin_next);
    m.set_enable(rbin, read);
    m.set_next(rgray, rgray_next);
    m.set_enable(rgray, read);
    m.finish()
}

/// Gray code to binary: bit i is the xor of Gray bits i and above.
fn gray_to_bin(m: &mut ModuleBuilder, gray: Signal) -> Signal {
    let w = gray.width();
    let bits: Vec<Signal> = (0..w)
        .map(|i| {
            let upper = m.slice(gray, i, w - i);
            m.reduce_xor(upper)
        })
        .collect();
    m.join_lanes(&bits)
}
