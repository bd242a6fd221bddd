//! Operand sets for floating-point tests: every special class of a format, and
//! random pairs biased towards the hard cases (close exponents, cancellation).

use hdl::blocks::fp::FpFormat;
use rand::Rng;

/// The special values of `format`, both signs: zeros, smallest and largest
/// subnormals and normals, one and its neighbours, halfway and near-halfway
/// addends of one (round-to-even ties), addends far below one ulp (exponent gaps
/// beyond the significand), values near overflow, infinities, quiet and signalling
/// NaNs.
pub fn special_values(format: FpFormat) -> Vec<u64> {
    let (e, m) = (format.exp_bits() as u64, format.frac_bits() as u64);
    let bias = (1u64 << (e - 1)) - 1;
    let exp_max = (1u64 << e) - 1;
    // 2^k as a normal number; out of the normal range it clamps to the smallest or
    // largest normal exponent (still a useful operand).
    let pow2 = |k: i64| -> u64 { ((bias as i64 + k).clamp(1, exp_max as i64 - 1) as u64) << m };
    let mut v = vec![
        0,
        1,
        2,
        (1 << m) - 1,
        1 << m,
        (1 << m) | 1,
        ((exp_max - 1) << m) | ((1 << m) - 1),
        ((exp_max - 1) << m),
        pow2(0),
        pow2(0) | 1,
        pow2(0) | (1 << (m - 1)),
        pow2(1) - 1,
        pow2(-(m as i64) - 1),
        pow2(-(m as i64) - 1) | 1,
        pow2(-(m as i64) - 2),
        pow2(-(m as i64) - 2) | ((1 << m) - 1),
        pow2(-(m as i64) - 3),
        pow2(-(m as i64) - 5),
        pow2(-2 * m as i64 - 4),
        pow2(bias as i64 - 1),
        exp_max << m,
        format.canonical_nan(),
        (exp_max << m) | ((1 << (m - 1)) | 5),
        (exp_max << m) | 1,
        (exp_max << m) | ((1 << m) - 1),
    ];
    let sign = 1u64 << (e + m);
    let negatives: Vec<u64> = v.iter().map(|x| x | sign).collect();
    v.extend(negatives);
    v
}

/// A random operand pair: half uniformly random bit patterns, half pairs with
/// exponents within a few steps of each other and random signs, where alignment,
/// cancellation and rounding are hardest. A quarter of the second half puts the
/// first operand's exponent at the bottom of the range (0 to 3: subnormals and
/// the smallest normals), where sums and cancellations fall below the normal
/// range and flush-to-zero and the normalizing shift's limit act; uniform
/// exponents reach it once in 64 pairs for fp32 and bf16.
pub fn random_pair(format: FpFormat, rng: &mut impl Rng) -> (u64, u64) {
    let w = format.width();
    let mask = (1u64 << w) - 1;
    let a = rng.gen::<u64>() & mask;
    if rng.gen_bool(0.5) {
        return (a, rng.gen::<u64>() & mask);
    }
    let m = format.frac_bits();
    let exp_mask = (1u64 << format.exp_bits()) - 1;
    let (a, ea) = if rng.gen_bool(0.25) {
        let ea = rng.gen_range(0..=3);
        ((a & !(exp_mask << m)) | (ea << m), ea)
    } else {
        (a, (a >> m) & exp_mask)
    };
    let delta: i64 = rng.gen_range(-(m as i64 + 4)..=(m as i64 + 4));
    let eb = (ea as i64 + delta).clamp(0, exp_mask as i64 - 1) as u64;
    let frac = rng.gen::<u64>() & ((1 << m) - 1);
    let sign = (rng.gen::<u64>() & 1) << (w - 1);
    (a, sign | (eb << m) | frac)
}
