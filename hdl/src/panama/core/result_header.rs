//! The header of a result packet, made from the worker's own 64 header bytes
//! (PANAMA.md, "Results"): Ethernet, IPv4 and UDP source and destination swapped,
//! IPv4 ECN = the OR over the summed packets, IPv4 header checksum recomputed
//! (RFC 1071, over the modified header), UDP checksum 0, PANAMA `flags.result`
//! set, `bitmap` = the contributing ports. Every other byte is the worker's.

use crate::dsl::{ModuleBuilder, Signal};

/// Byte offsets in the 64-byte header block.
mod at {
    pub const MAC_DST: usize = 0;
    pub const MAC_SRC: usize = 6;
    pub const IPV4: usize = 14;
    pub const IPV4_TOS: usize = IPV4 + 1;
    pub const IPV4_CHECKSUM: usize = IPV4 + 10;
    pub const IPV4_SRC: usize = IPV4 + 12;
    pub const IPV4_DST: usize = IPV4 + 16;
    pub const IPV4_END: usize = IPV4 + 20;
    pub const UDP_SRC: usize = 34;
    pub const UDP_DST: usize = 36;
    pub const UDP_CHECKSUM: usize = 40;
    pub const PANAMA_FLAGS: usize = 43;
    pub const PANAMA_BITMAP: usize = 56;
}

/// `header` (512 bits, byte *i* in bits `[8i+7:8i]`) turned into the result
/// header, with `ecn` (2 bits) and `bitmap` (up to 32 bits, bit *i* = port *i*).
pub(super) fn result_header(
    m: &mut ModuleBuilder,
    header: Signal,
    ecn: Signal,
    bitmap: Signal,
) -> Signal {
    let mut b: Vec<Signal> = m.split_lanes(header, 8);
    let swap = |b: &mut Vec<Signal>, x: usize, y: usize, n: usize| {
        for i in 0..n {
            b.swap(x + i, y + i);
        }
    };
    swap(&mut b, at::MAC_DST, at::MAC_SRC, 6);
    swap(&mut b, at::IPV4_SRC, at::IPV4_DST, 4);
    swap(&mut b, at::UDP_SRC, at::UDP_DST, 2);
    let dscp = m.slice(b[at::IPV4_TOS], 2, 6);
    b[at::IPV4_TOS] = m.concat(&[dscp, ecn]);

    // One's-complement sum of the header's ten 16-bit words but the checksum.
    let mut sum = m.zeros(20);
    for word in (at::IPV4..at::IPV4_END).step_by(2) {
        if word == at::IPV4_CHECKSUM {
            continue;
        }
        let w = m.concat(&[b[word], b[word + 1]]);
        let w = m.zext(w, 20);
        sum = m.add_wrap(sum, w);
    }
    let folded = fold(m, sum);
    let folded = fold(m, folded);
    let low = m.slice(folded, 0, 16);
    let checksum = m.not(low);
    b[at::IPV4_CHECKSUM] = m.slice(checksum, 8, 8);
    b[at::IPV4_CHECKSUM + 1] = m.slice(checksum, 0, 8);

    let zero = m.zeros(8);
    b[at::UDP_CHECKSUM] = zero;
    b[at::UDP_CHECKSUM + 1] = zero;
    let result_flag = m.lit(1, 8);
    b[at::PANAMA_FLAGS] = m.or(b[at::PANAMA_FLAGS], result_flag);
    let bitmap = m.zext(bitmap, 32);
    for i in 0..4 {
        b[at::PANAMA_BITMAP + i] = m.slice(bitmap, 24 - 8 * i as u32, 8);
    }
    m.join_lanes(&b)
}

/// `(x & 0xFFFF) + (x >> 16)`, as wide as `x`.
fn fold(m: &mut ModuleBuilder, x: Signal) -> Signal {
    let w = x.width();
    let low = m.slice(x, 0, 16);
    let low = m.zext(low, w);
    let high = m.shr(x, 16);
    m.add_wrap(low, high)
}
