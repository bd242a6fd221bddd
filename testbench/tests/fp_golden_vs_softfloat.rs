//! The golden floating-point adder against Berkeley SoftFloat (`softfloat-wrapper`):
//! fp32 and fp16 directly; bf16 through SoftFloat's binary32 addition (exact for
//! bf16 operands' conversion) rounded once more to bf16 with ties to even — double
//! rounding through 24 ≥ 2·8 + 2 bits is innocuous for addition (Figueroa 1995).
//! Every special-class pair and 1,000,000 random pairs per format, with and
//! without flush-to-zero.

use hdl::blocks::fp::FpFormat;
use softfloat_wrapper::{Float, RoundingMode, F16, F32};
use testbench::golden::fp::{add, flush, is_nan};
use testbench::golden::fp_cases::{random_pair, special_values};
use testbench::rng::seeded;

const RANDOM_PAIRS: usize = 1_000_000;

/// f32 → bf16 by round to nearest, ties to even, on the bit pattern (bf16 is the top
/// half of binary32; NaNs are not passed here).
fn f32_bits_to_bf16_rne(x: u32) -> u64 {
    let lower = x & 0xffff;
    let upper = x >> 16;
    let round_up = lower > 0x8000 || (lower == 0x8000 && upper & 1 == 1);
    (upper + round_up as u32) as u64
}

fn softfloat_add(format: FpFormat, ftz: bool, a: u64, b: u64) -> u64 {
    let (a, b) = if ftz {
        (flush(format, a), flush(format, b))
    } else {
        (a, b)
    };
    let rne = RoundingMode::TiesToEven;
    let raw = match format {
        FpFormat::Fp32 => F32::from_bits(a as u32)
            .add(F32::from_bits(b as u32), rne)
            .to_bits() as u64,
        FpFormat::Fp16 => F16::from_bits(a as u16)
            .add(F16::from_bits(b as u16), rne)
            .to_bits() as u64,
        FpFormat::Bf16 => {
            let s = F32::from_bits((a as u32) << 16).add(F32::from_bits((b as u32) << 16), rne);
            if s.is_nan() {
                return format.canonical_nan();
            }
            f32_bits_to_bf16_rne(s.to_bits())
        }
    };
    let raw = if is_nan(format, raw) {
        format.canonical_nan()
    } else {
        raw
    };
    if ftz {
        flush(format, raw)
    } else {
        raw
    }
}

fn check(format: FpFormat, ftz: bool, a: u64, b: u64) {
    let golden = add(format, ftz, a, b);
    let reference = softfloat_add(format, ftz, a, b);
    assert_eq!(
        golden, reference,
        "{format} ftz={ftz}: {a:#x} + {b:#x}: golden {golden:#x}, SoftFloat {reference:#x}"
    );
}

#[test]
fn golden_matches_softfloat_on_every_special_pair() {
    for format in FpFormat::ALL {
        let values = special_values(format);
        for ftz in [false, true] {
            for &a in &values {
                for &b in &values {
                    check(format, ftz, a, b);
                }
            }
        }
    }
}

#[test]
fn golden_matches_softfloat_on_random_pairs() {
    for (k, format) in FpFormat::ALL.into_iter().enumerate() {
        let mut rng = seeded(&format!("golden vs softfloat {format}"), 100 + k as u64);
        for _ in 0..RANDOM_PAIRS {
            let (a, b) = random_pair(format, &mut rng);
            check(format, false, a, b);
            check(format, true, a, b);
        }
    }
}

#[test]
fn bf16_reference_rounding_is_ties_to_even() {
    assert_eq!(f32_bits_to_bf16_rne(0x3f80_8000), 0x3f80);
    assert_eq!(f32_bits_to_bf16_rne(0x3f81_8000), 0x3f82);
    assert_eq!(f32_bits_to_bf16_rne(0x3f80_8001), 0x3f81);
    assert_eq!(f32_bits_to_bf16_rne(0x7f7f_ffff), 0x7f80);
}
