//! Golden floating-point addition for binary32, bfloat16 and binary16: plain Rust,
//! bit-exact with the hardware's contract (round to nearest even, canonical NaN,
//! optional flush-to-zero), and the tree sum in PANAMA's pairing order.
//!
//! Method: both operands are converted exactly to `f64`, added in `f64`, and the
//! sum is rounded once to the target format. The `f64` sum is itself rounded (to 53
//! bits), but double rounding through a precision p' ≥ 2p + 2 is innocuous for
//! addition (Figueroa, "When is double rounding innocuous?", 1995): 53 ≥ 2·24 + 2,
//! so the result equals a single correct rounding for all three formats, including
//! subnormal results and overflow to infinity.

use half::{bf16, f16};
use hdl::blocks::fp::FpFormat;

/// True if `bits` is a NaN in `format`.
pub fn is_nan(format: FpFormat, bits: u64) -> bool {
    let (e, m) = (format.exp_bits(), format.frac_bits());
    let exp = (bits >> m) & ((1 << e) - 1);
    exp == (1 << e) - 1 && bits & ((1 << m) - 1) != 0
}

/// True if `bits` is a subnormal (not zero) in `format`.
pub fn is_subnormal(format: FpFormat, bits: u64) -> bool {
    let (e, m) = (format.exp_bits(), format.frac_bits());
    (bits >> m) & ((1 << e) - 1) == 0 && bits & ((1 << m) - 1) != 0
}

/// A subnormal flushed to zero of the same sign; anything else unchanged.
pub fn flush(format: FpFormat, bits: u64) -> u64 {
    if is_subnormal(format, bits) {
        bits & (1 << (format.width() - 1))
    } else {
        bits
    }
}

/// The exact value of `bits` as `f64`.
pub fn to_f64(format: FpFormat, bits: u64) -> f64 {
    match format {
        FpFormat::Fp32 => f32::from_bits(bits as u32) as f64,
        FpFormat::Bf16 => bf16::from_bits(bits as u16).to_f64(),
        FpFormat::Fp16 => f16::from_bits(bits as u16).to_f64(),
    }
}

/// `x` rounded to nearest even in `format`.
pub fn from_f64(format: FpFormat, x: f64) -> u64 {
    match format {
        FpFormat::Fp32 => (x as f32).to_bits() as u64,
        FpFormat::Bf16 => bf16::from_f64(x).to_bits() as u64,
        FpFormat::Fp16 => f16::from_f64(x).to_bits() as u64,
    }
}

/// `a + b` in `format` as the hardware must compute it.
pub fn add(format: FpFormat, ftz: bool, a: u64, b: u64) -> u64 {
    if is_nan(format, a) || is_nan(format, b) {
        return format.canonical_nan();
    }
    let (a, b) = if ftz {
        (flush(format, a), flush(format, b))
    } else {
        (a, b)
    };
    let sum = to_f64(format, a) + to_f64(format, b);
    if sum.is_nan() {
        return format.canonical_nan();
    }
    let bits = from_f64(format, sum);
    if ftz {
        flush(format, bits)
    } else {
        bits
    }
}

/// −0.0 in `format`: what an absent tree input contributes.
pub fn negative_zero(format: FpFormat) -> u64 {
    1 << (format.width() - 1)
}

/// The sum of `operands` (absent ones as −0.0) in PANAMA's tree order: each level
/// adds pairs (0,1), (2,3), …, and an odd last operand moves up unchanged.
pub fn tree_sum(format: FpFormat, ftz: bool, operands: &[Option<u64>]) -> u64 {
    /// Operands summed in a buffer on the stack (PANAMA has at most 16 ports);
    /// more go through a vector.
    const ON_STACK: usize = 32;
    let value = |o: &Option<u64>| o.unwrap_or(negative_zero(format));
    if operands.len() <= ON_STACK {
        let mut level = [0u64; ON_STACK];
        let level = &mut level[..operands.len()];
        for (l, o) in level.iter_mut().zip(operands) {
            *l = value(o);
        }
        reduce_in_place(format, ftz, level)
    } else {
        reduce_in_place(
            format,
            ftz,
            &mut operands.iter().map(value).collect::<Vec<_>>(),
        )
    }
}

/// The tree order's sum of `level` (−0.0 when empty), computed in place: each
/// level's pair `i` (words 2i and 2i + 1, an odd last word carried) becomes word
/// `i`, which no later pair of the level reads.
fn reduce_in_place(format: FpFormat, ftz: bool, level: &mut [u64]) -> u64 {
    let mut len = level.len();
    if len == 0 {
        return negative_zero(format);
    }
    while len > 1 {
        for i in 0..len / 2 {
            level[i] = add(format, ftz, level[2 * i], level[2 * i + 1]);
        }
        if len % 2 == 1 {
            level[len / 2] = level[len - 1];
        }
        len = len.div_ceil(2);
    }
    level[0]
}

/// Packs `ops[i][j]` (operand `i`, lane `j`) as the adder tree's `in_data`:
/// operand `i`, lane `j` at bits `[(i·lanes + j)·w +: w]`.
pub fn pack_tree_operands(format: FpFormat, ops: &[Vec<u64>]) -> hdl::Bits {
    let w = format.width();
    let lanes = ops.first().map_or(0, Vec::len) as u32;
    let mut bits = hdl::Bits::zero((ops.len() as u32 * lanes * w).max(1));
    for (i, lane_values) in ops.iter().enumerate() {
        for (j, x) in lane_values.iter().enumerate() {
            for b in 0..w {
                bits.set_bit((i as u32 * lanes + j as u32) * w + b, x >> b & 1 == 1);
            }
        }
    }
    bits
}

/// Lane `j` of a `lanes × w` bus.
pub fn lane(format: FpFormat, bus: &hdl::Bits, j: u32) -> u64 {
    let w = format.width();
    (0..w).map(|b| (bus.bit(j * w + b) as u64) << b).sum()
}

/// Per lane, the tree sum of `ops[i][j]` over the operands present in `flags`
/// (bit `i` set: operand `i` present).
pub fn tree_lane_sums(format: FpFormat, ftz: bool, ops: &[Vec<u64>], flags: u64) -> Vec<u64> {
    let lanes = ops.first().map_or(0, Vec::len);
    (0..lanes)
        .map(|j| {
            let operands: Vec<Option<u64>> = ops
                .iter()
                .enumerate()
                .map(|(i, o)| (flags >> i & 1 == 1).then_some(o[j]))
                .collect();
            tree_sum(format, ftz, &operands)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_sums_of_many_operands_are_exact_small_integers() {
        // Integers up to 2^24 add exactly in fp32, so any order gives n(n+1)/2;
        // 33 and more operands take the vector path, 32 and fewer the stack's.
        let f = FpFormat::Fp32;
        for n in [1u64, 2, 3, 31, 32, 33, 40, 64] {
            let ops: Vec<Option<u64>> = (1..=n).map(|i| Some(from_f64(f, i as f64))).collect();
            assert_eq!(
                to_f64(f, tree_sum(f, false, &ops)),
                (n * (n + 1) / 2) as f64
            );
        }
        assert_eq!(tree_sum(f, false, &[]), negative_zero(f));
    }

    #[test]
    fn specials_follow_the_contract() {
        let f = FpFormat::Fp32;
        let inf = 0x7F80_0000;
        let ninf = 0xFF80_0000;
        assert_eq!(add(f, false, inf, ninf), 0x7FC0_0000);
        assert_eq!(add(f, false, 0x7F80_0001, 0), 0x7FC0_0000);
        assert_eq!(add(f, false, 0x8000_0000, 0x8000_0000), 0x8000_0000);
        assert_eq!(add(f, false, 0x3F80_0000, 0xBF80_0000), 0);
        assert_eq!(add(f, false, 0x7F7F_FFFF, 0x7F7F_FFFF), inf);
        // Two smallest subnormals sum exactly; with ftz they vanish.
        assert_eq!(add(f, false, 1, 1), 2);
        assert_eq!(add(f, true, 1, 1), 0);
        assert_eq!(add(FpFormat::Fp16, false, 0x7BFF, 0x7BFF), 0x7C00);
        assert_eq!(add(FpFormat::Bf16, false, 0xFF80, 0x7F80), 0x7FC0);
    }

    #[test]
    fn tree_pairs_in_order_and_absent_inputs_are_identity() {
        let f = FpFormat::Fp32;
        let one = 1.0f32.to_bits() as u64;
        let big = 16_777_216.0f32.to_bits() as u64; // 2^24: 2^24 + 1 rounds to 2^24
                                                    // ((big + 1) + (1 + 1)) = big + 2 exactly, unlike ((big + 1) + 1) + 1.
        let s = tree_sum(f, false, &[Some(big), Some(one), Some(one), Some(one)]);
        assert_eq!(f32::from_bits(s as u32), 16_777_218.0);
        let s = tree_sum(f, false, &[None, Some(0x8000_0000), None]);
        assert_eq!(s, 0x8000_0000);
    }
}
