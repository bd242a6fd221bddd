//! Small pieces of control logic the accelerator's stages share: priority
//! encoders, a one-hot decoder, a set-bit counter, a modulo counter step and a
//! memory cell's first address.

use crate::dsl::{bits_for, ModuleBuilder, Signal};

/// The lowest set bit of `flags`: (any set, its index in `index_width` bits).
pub(super) fn lowest_set(
    m: &mut ModuleBuilder,
    flags: &[Signal],
    index_width: u32,
) -> (Signal, Signal) {
    lowest_set_from(m, flags, 0, index_width)
}

/// The lowest set bit of `flags`, whose bit `i` stands for index `first + i`:
/// (any set, that index in `index_width` bits; 0 if none is).
pub(super) fn lowest_set_from(
    m: &mut ModuleBuilder,
    flags: &[Signal],
    first: u32,
    index_width: u32,
) -> (Signal, Signal) {
    // The chain ends at index 0, so a lone flag of index 0 (one job slot) needs
    // no case: it would choose 0 either way.
    let lone_zero = first == 0 && flags.len() == 1;
    let cases: Vec<(Signal, Signal)> = (flags.iter().zip(first..))
        .filter(|_| !lone_zero)
        .map(|(&f, i)| (f, m.lit(u64::from(i), index_width)))
        .collect();
    let zero = m.zeros(index_width);
    let index = m.select(&cases, zero);
    let any = m.or_all(flags);
    (any, index)
}

/// The first address of cell `index` in a memory of `addr_width` bits whose cells
/// are `cell_beats` words each: `index * cell_beats`, or the index itself when a
/// cell is one word (a 64-byte payload on a 1024-bit bus). The operations carry
/// the caller's line.
#[track_caller]
pub(super) fn cell_base(
    m: &mut ModuleBuilder,
    index: Signal,
    cell_beats: u32,
    addr_width: u32,
) -> Signal {
    let wide = m.zext(index, addr_width);
    if cell_beats == 1 {
        return wide;
    }
    let stride = m.lit(u64::from(cell_beats), addr_width);
    let base = m.mul(wide, stride);
    m.truncate(base, addr_width)
}

/// `index` decoded to `count` one-hot flags, named `{name}_is{i}`.
pub(super) fn decode(m: &mut ModuleBuilder, name: &str, index: Signal, count: u32) -> Vec<Signal> {
    (0..count)
        .map(|i| {
            let is = m.eq_const(index, u64::from(i));
            m.named(&format!("{name}_is{i}"), is)
        })
        .collect()
}

/// The flags of a vector signal, bit 0 first.
pub(super) fn bits(m: &mut ModuleBuilder, v: Signal) -> Vec<Signal> {
    (0..v.width()).map(|i| m.bit(v, i)).collect()
}

/// `value + 1` modulo `modulus` (`value` < `modulus`, at least 1).
pub(super) fn step_mod(m: &mut ModuleBuilder, value: Signal, modulus: u32) -> Signal {
    if modulus <= 1 {
        return m.zeros(value.width());
    }
    let next = m.add_const_wrap(value, 1);
    if modulus.is_power_of_two() && 1u64 << value.width() == u64::from(modulus) {
        return next;
    }
    let at_end = m.eq_const(value, u64::from(modulus - 1));
    let zero = m.zeros(value.width());
    m.mux(at_end, zero, next)
}

/// Width of an index into `count` things (at least 1 bit).
pub(super) fn index_width(count: u32) -> u32 {
    bits_for(count.saturating_sub(1))
}

/// `fields` side by side, the first in the lowest bits (any widths).
pub(super) fn pack_fields(m: &mut ModuleBuilder, fields: &[Signal]) -> Signal {
    let msb_first: Vec<Signal> = fields.iter().rev().copied().collect();
    m.concat(&msb_first)
}

/// The largest of `values` (unsigned, equal widths; at least one value).
pub(super) fn max_of(m: &mut ModuleBuilder, values: &[Signal]) -> Signal {
    let mut level = values.to_vec();
    while level.len() > 1 {
        level = level
            .chunks(2)
            .map(|pair| match pair {
                [a, b] => {
                    let a_wins = m.ge(*a, *b);
                    m.mux(a_wins, *a, *b)
                }
                [a] => *a,
                _ => unreachable!("chunks(2) yields one or two values"),
            })
            .collect();
    }
    level[0]
}
