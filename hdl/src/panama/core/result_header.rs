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
    let header = m.named("header", header);
    let mut b: Vec<Signal> = m.split_lanes(header, 8);
    let swap = |b: &mut Vec<Signal>, x: usize, y: usize, n: usize| {
        for i in 0..n {
            b.swap(x + i, y + i);
        }
    };
    swap(&mut b, at::MAC_DST, at::MAC_SRC, 6);
    swap(&mut b, at::IPV4_SRC, at::IPV4_DST, 4);
    swap(&mut b, at::UDP_SRC, at::UDP_DST, 2);
    let dscp = m.slice(header, 8 * at::IPV4_TOS as u32 + 2, 6);
    let tos = m.concat(&[dscp, ecn]);
    b[at::IPV4_TOS] = m.named("tos", tos);

    let checksum = ipv4_checksum(m, header, b[at::IPV4_TOS]);
    b[at::IPV4_CHECKSUM] = m.slice(checksum, 8, 8);
    b[at::IPV4_CHECKSUM + 1] = m.slice(checksum, 0, 8);

    let zero = m.zeros(8);
    b[at::UDP_CHECKSUM] = zero;
    b[at::UDP_CHECKSUM + 1] = zero;
    let result_flag = m.lit(1, 8);
    b[at::PANAMA_FLAGS] = m.or(b[at::PANAMA_FLAGS], result_flag);
    let bitmap = m.zext(bitmap, 32);
    let bitmap = m.named("bitmap", bitmap);
    for i in 0..4 {
        b[at::PANAMA_BITMAP + i] = m.slice(bitmap, 24 - 8 * i as u32, 8);
    }
    let result = m.join_lanes(&b);
    m.named("result_header", result)
}

/// The IPv4 header checksum of `header` with its ToS byte replaced by `tos`: the one's
/// complement of the one's-complement sum of the header's ten 16-bit big-endian words
/// but the checksum. Swapping the source and destination addresses leaves it unchanged.
fn ipv4_checksum(m: &mut ModuleBuilder, header: Signal, tos: Signal) -> Signal {
    let byte = |m: &mut ModuleBuilder, at: usize| m.slice(header, 8 * at as u32, 8);
    let words: Vec<usize> = (at::IPV4..at::IPV4_END)
        .step_by(2)
        .filter(|&word| word != at::IPV4_CHECKSUM)
        .collect();
    let mut sum = None;
    for (k, &word) in words.iter().enumerate() {
        let high = byte(m, word);
        let low = if word + 1 == at::IPV4_TOS {
            tos
        } else {
            byte(m, word + 1)
        };
        let w = m.concat(&[high, low]);
        let w = m.zext(w, 20);
        let total = match sum {
            None => w,
            Some(s) => m.add_wrap(s, w),
        };
        // A name every second word keeps each line a sum of two more words.
        sum = Some(if k + 1 == words.len() {
            m.named("ipv4_sum", total)
        } else if k % 2 == 1 {
            m.named(&format!("ipv4_sum{}", k + 1), total)
        } else {
            total
        });
    }
    let sum = sum.expect("an IPv4 header has words besides its checksum");
    let folded = fold(m, sum);
    let folded = m.named("ipv4_folded", folded);
    let folded = fold(m, folded);
    let folded = m.named("ipv4_refolded", folded);
    let low = m.slice(folded, 0, 16);
    let checksum = m.not(low);
    m.named("ipv4_checksum", checksum)
}

/// `(x & 0xFFFF) + (x >> 16)`, as wide as `x`.
fn fold(m: &mut ModuleBuilder, x: Signal) -> Signal {
    let w = x.width();
    let low = m.slice(x, 0, 16);
    let low = m.zext(low, w);
    let high = m.shr(x, 16);
    m.add_wrap(low, high)
}
