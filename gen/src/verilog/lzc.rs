//! `LeadingZeros` as a balanced tree of plain assigns (Verilog has no operator for it).
//!
//! The input is padded to a power of two `P` with ones at the bottom (so padding never
//! counts). Level 0 holds single bits; a block of level `j` covers `2^j` bits and has an
//! all-zero flag `z` and a count `c` of `j` bits (its leading zeros, valid when `z` is 0):
//!
//! ```text
//! z = z_hi & z_lo
//! c = z_hi ? {1'b1, c_lo} : {1'b0, c_hi}
//! ```
//!
//! so the depth is `log2(P)` 2:1 muxes. The result is `c` of the top block, or `P` when
//! the whole (unpadded, `P` = width) input is zero; padding makes that case impossible
//! otherwise. Helper wires are named after the net: `<net>_lzp` (padded input),
//! `<net>_lzz<j>` and `<net>_lzc<j>` (flags and counts of level `j`, block 0 in the
//! least significant bits).

use super::expr::{literal, zext, Refs};
use super::module::Body;
use hdl::ir::NetId;
use hdl::Bits;

/// Emits `net = leading_zeros(src)`: helper declarations into `body.decls`, assigns into
/// `body.logic`.
pub(crate) fn emit(refs: &mut Refs<'_>, body: &mut Body, net: NetId, src: NetId) {
    let w = refs.width(src);
    let r = refs.width(net);
    let out = refs.names.net(net).to_string();
    let loc = refs.m.net(net).location;
    if w == 1 {
        let x = refs.all(src);
        body.assign(&out, &zext(&format!("~{x}"), 1, r));
        return;
    }
    let k = 32 - (w - 1).leading_zeros(); // ceil(log2(w)), at least 1
    let p = 1u32 << k;

    // Level-0 bits: the input itself, or the input padded with ones.
    let padded = if p == w {
        refs.all(src)
    } else {
        let name = refs.space.fresh(&format!("{out}_lzp"));
        let x = refs.all(src);
        body.decl_vector("wire", p, &name, &loc);
        body.assign(&name, &format!("{{{x}, {}}}", literal(&Bits::ones(p - w))));
        name
    };
    let bit = |i: u32| format!("{padded}[{i}]");

    let mut z_prev = String::new();
    let mut c_prev = String::new();
    for j in 1..=k {
        let blocks = p >> j;
        let z = refs.space.fresh(&format!("{out}_lzz{j}"));
        let c = refs.space.fresh(&format!("{out}_lzc{j}"));
        // The top flag is only needed when there is no padding (all-zero input possible).
        let need_z = j < k || p == w;
        if need_z {
            body.decl_vector("wire", blocks, &z, &loc);
        }
        body.decl_vector("wire", blocks * j, &c, &loc);
        for b in 0..blocks {
            let (hi, lo) = (2 * b + 1, 2 * b);
            if j == 1 {
                body.assign(
                    &format!("{z}[{b}]"),
                    &format!("~({} | {})", bit(hi), bit(lo)),
                );
                body.assign(&format!("{c}[{b}]"), &format!("~{}", bit(hi)));
                continue;
            }
            if need_z {
                body.assign(
                    &format!("{z}[{b}]"),
                    &format!("{z_prev}[{hi}] & {z_prev}[{lo}]"),
                );
            }
            let m = j - 1;
            let part = |blk: u32| {
                if m == 1 {
                    format!("{c_prev}[{blk}]")
                } else {
                    format!("{c_prev}[{}:{}]", blk * m + m - 1, blk * m)
                }
            };
            body.assign(
                &format!("{c}[{}:{}]", b * j + j - 1, b * j),
                &format!(
                    "{z_prev}[{hi}] ? {{1'b1, {}}} : {{1'b0, {}}}",
                    part(lo),
                    part(hi)
                ),
            );
        }
        if !need_z {
            // Block 0 always holds padding: its flag only fed the top flag, not needed.
            refs.usage.unread_helper(format!("{z_prev}[0]"));
        }
        z_prev = z;
        c_prev = c;
    }

    // The count: `k + 1` bits when the input can be all zero (p == w), else `k` bits.
    let (value, natural) = if p == w {
        let all_zero = format!("{}'h{p:x}", k + 1);
        (
            format!("{z_prev}[0] ? {all_zero} : {{1'b0, {c_prev}}}"),
            k + 1,
        )
    } else {
        (c_prev, k)
    };
    if r >= natural {
        let value = if natural == r {
            value
        } else {
            zext(&format!("({value})"), natural, r)
        };
        body.assign(&out, &value);
    } else {
        let full = refs.space.fresh(&format!("{out}_lzn"));
        body.decl_vector("wire", natural, &full, &loc);
        body.assign(&full, &value);
        body.assign(&out, &format!("{full}[{}:0]", r - 1));
        refs.usage
            .unread_helper(format!("{full}[{}:{}]", natural - 1, r));
    }
}
