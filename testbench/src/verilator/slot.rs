//! Where a port's value lives inside one Verilated model, read and written in place.
//!
//! Verilator gives a port of `w` bits a `CData` (`w` ≤ 8), `SData` (≤ 16), `IData`
//! (≤ 32), `QData` (≤ 64) or, wider, `VlWide<⌈w / 32⌉>`: 32-bit words, least
//! significant first. [`Layout::of`] derives that layout from the width (the shim's
//! `static_assert`s hold the Verilated types to it); the loaded library's `sizeof` of
//! every member is checked against [`Layout::bytes`] before any address is used. Values
//! cross as little-endian `u64` words, as everywhere in the bridge: written masked to
//! the width, missing words zero; read masked to the width.

use std::ptr::NonNull;

/// The C++ representation of a port of a given width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Layout {
    /// One unsigned integer of `bytes` bytes (1, 2, 4 or 8) whose bits in `mask` hold
    /// the value.
    Narrow { bytes: u8, mask: u64 },
    /// `words` 32-bit words, the last of which holds the value's bits in `top`.
    Wide { words: usize, top: u32 },
}

impl Layout {
    /// The layout Verilator gives a port of `width` bits (at least 1).
    pub(super) fn of(width: u32) -> Layout {
        let low = |bits: u32| {
            if bits >= 64 {
                u64::MAX
            } else {
                (1 << bits) - 1
            }
        };
        let narrow = |bytes: u8| Layout::Narrow {
            bytes,
            mask: low(width),
        };
        match width {
            0..=8 => narrow(1),
            9..=16 => narrow(2),
            17..=32 => narrow(4),
            33..=64 => narrow(8),
            _ => {
                let words = width.div_ceil(32);
                Layout::Wide {
                    words: words as usize,
                    top: low(width - 32 * (words - 1)) as u32,
                }
            }
        }
    }

    /// The size of the C++ member, as `sizeof` gives it.
    pub(super) fn bytes(self) -> usize {
        match self {
            Layout::Narrow { bytes, .. } => usize::from(bytes),
            Layout::Wide { words, .. } => 4 * words,
        }
    }

    /// How many `u64` words the value takes.
    #[inline]
    pub(super) fn words64(self) -> usize {
        match self {
            Layout::Narrow { .. } => 1,
            Layout::Wide { words, .. } => words.div_ceil(2),
        }
    }
}

/// One port's value in one model: its address, its layout, and whether the test bench
/// writes it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Slot {
    addr: NonNull<u8>,
    layout: Layout,
    input: bool,
}

impl Slot {
    /// The slot at `addr` of a port with `layout`, an input if `input`.
    ///
    /// # Safety
    /// `addr` points to [`Layout::bytes`] bytes of a member with `layout` that stay
    /// valid, and that nothing else accesses while a [`write`](Self::write) or
    /// [`read`](Self::read) runs, for as long as the slot is used.
    pub(super) unsafe fn new(addr: NonNull<u8>, layout: Layout, input: bool) -> Slot {
        Slot {
            addr,
            layout,
            input,
        }
    }

    /// How many `u64` words the value takes.
    #[inline]
    pub(super) fn words64(&self) -> usize {
        self.layout.words64()
    }

    /// Whether the port is an input, which the test bench writes.
    #[inline]
    pub(super) fn input(&self) -> bool {
        self.input
    }

    /// Writes `value` (at most [`Layout::words64`] words; missing ones are 0), masked
    /// to the port's width.
    #[inline]
    pub(super) fn write(&self, value: &[u64]) {
        let p = self.addr.as_ptr();
        let Layout::Narrow { bytes, mask } = self.layout else {
            return self.write_wide(value);
        };
        let v = value.first().copied().unwrap_or(0) & mask;
        // SAFETY: `new`'s contract; the access lies within the member's `bytes` bytes,
        // unaligned, assuming nothing of its alignment.
        unsafe {
            match bytes {
                1 => p.write(v as u8),
                2 => p.cast::<u16>().write_unaligned(v as u16),
                4 => p.cast::<u32>().write_unaligned(v as u32),
                _ => p.cast::<u64>().write_unaligned(v),
            }
        }
    }

    /// [`write`](Self::write) of a wide port, out of line so that a narrow write needs
    /// few registers: a `u64` word to each pair of 32-bit words, then the top word
    /// masked.
    #[inline(never)]
    fn write_wide(&self, value: &[u64]) {
        let Layout::Wide { words, top } = self.layout else {
            unreachable!("write_wide of a narrow port");
        };
        let d = self.addr.as_ptr().cast::<u32>();
        // SAFETY (every access): as for `write`; every index is below `words`, within
        // the member's `4 * words` bytes.
        let put = |i: usize, w: u32| unsafe { d.add(i).write_unaligned(w) };
        for j in 0..words / 2 {
            let v = value.get(j).copied().unwrap_or(0);
            put(2 * j, v as u32);
            put(2 * j + 1, (v >> 32) as u32);
        }
        if words % 2 == 1 {
            put(words - 1, value.get(words / 2).map_or(0, |&v| v as u32));
        }
        // SAFETY: as above.
        let last = unsafe { d.add(words - 1).read_unaligned() };
        put(words - 1, last & top);
    }

    /// Reads the value, masked to the port's width, into `out` (of
    /// [`Layout::words64`] words).
    #[inline]
    pub(super) fn read(&self, out: &mut [u64]) {
        let p = self.addr.as_ptr().cast_const();
        let Layout::Narrow { bytes, mask } = self.layout else {
            return self.read_wide(out);
        };
        // SAFETY: as for `write`.
        let v = unsafe {
            match bytes {
                1 => u64::from(p.read()),
                2 => u64::from(p.cast::<u16>().read_unaligned()),
                4 => u64::from(p.cast::<u32>().read_unaligned()),
                _ => p.cast::<u64>().read_unaligned(),
            }
        };
        out[0] = v & mask;
    }

    /// [`read`](Self::read) of a wide port, out of line as [`write_wide`](Self::write_wide) is:
    /// each pair of 32-bit words to a `u64` word, then the top word's bits above the
    /// width cleared.
    #[inline(never)]
    fn read_wide(&self, out: &mut [u64]) {
        let Layout::Wide { words, top } = self.layout else {
            unreachable!("read_wide of a narrow port");
        };
        let s = self.addr.as_ptr().cast_const().cast::<u32>();
        // SAFETY (every access): as for `write`; every index is below `words`.
        let get = |i: usize| u64::from(unsafe { s.add(i).read_unaligned() });
        for (j, o) in out.iter_mut().take(words / 2).enumerate() {
            *o = get(2 * j) | (get(2 * j + 1) << 32);
        }
        if words % 2 == 1 {
            out[words / 2] = get(words - 1);
        }
        let above = u64::from(!top) << (32 * ((words - 1) % 2));
        out[(words - 1) / 2] &= !above;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value of `width` bits as `u64` words, from a `u128` (widths up to 128).
    fn words(v: u128, width: u32) -> Vec<u64> {
        let n = Layout::of(width).words64();
        (0..n).map(|i| (v >> (64 * i)) as u64).collect()
    }

    #[test]
    fn layouts_follow_verilators_types() {
        let cases = [
            (1, 1, 1),
            (8, 1, 1),
            (9, 2, 1),
            (16, 2, 1),
            (17, 4, 1),
            (32, 4, 1),
            (33, 8, 1),
            (64, 8, 1),
            (65, 12, 2),
            (96, 12, 2),
            (97, 16, 2),
            (128, 16, 2),
            (129, 20, 3),
            (1024, 128, 16),
        ];
        for (width, bytes, words64) in cases {
            let l = Layout::of(width);
            assert_eq!((l.bytes(), l.words64()), (bytes, words64), "width {width}");
        }
    }

    #[test]
    fn a_written_value_reads_back_masked_to_the_width_in_verilators_word_order() {
        for width in [
            1, 7, 8, 13, 16, 31, 32, 40, 63, 64, 65, 95, 96, 100, 127, 128,
        ] {
            let layout = Layout::of(width);
            let mut member = [0xA5u8; 32];
            // Every access below goes through `base`.
            let base = member.as_mut_ptr();
            // SAFETY: `member` outlives the slot and has at least `layout.bytes()` bytes.
            let slot = unsafe { Slot::new(NonNull::new(base).unwrap(), layout, true) };
            let all = 0x0123_4567_89AB_CDEF_FEDC_BA98_7654_3210u128;
            let given = words(all, width.max(65));
            slot.write(&given[..layout.words64()]);
            let mask = if width == 128 {
                u128::MAX
            } else {
                (1u128 << width) - 1
            };
            let expected = all & mask;
            // SAFETY: `base` points to `member`'s 32 bytes.
            let seen = unsafe { std::slice::from_raw_parts(base.cast_const(), 32) };
            // On a little-endian host, the member holds the value's bytes, least
            // significant first.
            if cfg!(target_endian = "little") {
                let bytes = expected.to_le_bytes();
                assert_eq!(
                    seen[..layout.bytes()],
                    bytes[..layout.bytes()],
                    "width {width}"
                );
            }
            assert!(
                seen[layout.bytes()..].iter().all(|&b| b == 0xA5),
                "width {width}"
            );
            let mut out = vec![0; layout.words64()];
            slot.read(&mut out);
            assert_eq!(out, words(expected, width), "width {width}");
        }
    }

    #[test]
    fn missing_words_are_written_as_zero_and_reads_mask_stray_bits() {
        let layout = Layout::of(100);
        let mut member = [u32::MAX; 4];
        // Every access below goes through `base`.
        let base = member.as_mut_ptr();
        // SAFETY: `member` outlives the slot and has `layout.bytes()` bytes.
        let slot = unsafe { Slot::new(NonNull::new(base).unwrap().cast(), layout, true) };
        slot.write(&[7]);
        // SAFETY: `base` points to `member`'s four words.
        assert_eq!(unsafe { base.cast::<[u32; 4]>().read() }, [7, 0, 0, 0]);
        // SAFETY: as above.
        unsafe { base.add(3).write(u32::MAX) };
        let mut out = [0; 2];
        slot.read(&mut out);
        assert_eq!(out, [7, 0xF << 32]);
    }
}
