//! IEEE-754 binary interchange formats the floating-point blocks support.

use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// A binary floating-point format: sign, `exp_bits` of biased exponent and
/// `frac_bits` of stored fraction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FpFormat {
    /// IEEE-754 binary32.
    Fp32,
    /// Brain floating point: binary32's exponent, 7 fraction bits.
    Bf16,
    /// IEEE-754 binary16.
    Fp16,
}

impl FpFormat {
    /// All supported formats.
    pub const ALL: [FpFormat; 3] = [FpFormat::Fp32, FpFormat::Bf16, FpFormat::Fp16];

    /// Exponent field width.
    pub fn exp_bits(self) -> u32 {
        match self {
            FpFormat::Fp32 | FpFormat::Bf16 => 8,
            FpFormat::Fp16 => 5,
        }
    }

    /// Fraction field width (significand bits without the hidden bit).
    pub fn frac_bits(self) -> u32 {
        match self {
            FpFormat::Fp32 => 23,
            FpFormat::Bf16 => 7,
            FpFormat::Fp16 => 10,
        }
    }

    /// Total width in bits.
    pub fn width(self) -> u32 {
        1 + self.exp_bits() + self.frac_bits()
    }

    /// The canonical quiet NaN every NaN-producing addition returns.
    pub fn canonical_nan(self) -> u64 {
        let exp_all_ones = ((1u64 << self.exp_bits()) - 1) << self.frac_bits();
        exp_all_ones | (1u64 << (self.frac_bits() - 1))
    }

    /// The format's code in PANAMA's header (0 fp32, 1 bf16, 2 fp16).
    pub fn code(self) -> u8 {
        match self {
            FpFormat::Fp32 => 0,
            FpFormat::Bf16 => 1,
            FpFormat::Fp16 => 2,
        }
    }

    /// Lowercase name, as used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            FpFormat::Fp32 => "fp32",
            FpFormat::Bf16 => "bf16",
            FpFormat::Fp16 => "fp16",
        }
    }
}

impl fmt::Display for FpFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for FpFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "fp32" => Ok(FpFormat::Fp32),
            "bf16" => Ok(FpFormat::Bf16),
            "fp16" => Ok(FpFormat::Fp16),
            other => Err(format!("`{other}` is not fp32, bf16 or fp16")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_nans_are_the_documented_patterns() {
        assert_eq!(FpFormat::Fp32.canonical_nan(), 0x7FC0_0000);
        assert_eq!(FpFormat::Bf16.canonical_nan(), 0x7FC0);
        assert_eq!(FpFormat::Fp16.canonical_nan(), 0x7E00);
    }
}
