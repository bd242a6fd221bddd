//! `Bits`: a fixed-width bit vector, the value type of constants, reset values,
//! memory contents and simulator port values at the API.

use bitvec::prelude::*;
use std::fmt;

/// A value of an exact width (1 … any bits), bit 0 the least significant.
///
/// A thin wrapper over `bitvec`'s `BitVec<u64, Lsb0>` so that every value carries
/// its width and no operation silently truncates.
#[derive(PartialEq, Eq)]
pub struct Bits(BitVec<u64, Lsb0>);

impl std::hash::Hash for Bits {
    /// The width and the words (`bitvec`'s own hash goes bit by bit); equal
    /// values have equal widths and words.
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_usize(self.0.len());
        self.words().for_each(|w| state.write_u64(w));
    }
}

impl Clone for Bits {
    /// A copy of the storage words (`bitvec`'s own clone goes through its
    /// general bit-slice copy, several times slower for the constants and reset
    /// values every flattening and simulator build clones).
    fn clone(&self) -> Self {
        let mut v = BitVec::from_vec(self.0.as_raw_slice().to_vec());
        v.truncate(self.0.len());
        Bits(v)
    }
}

/// Why a `Bits` value could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BitsError {
    /// The value needs more bits than the requested width.
    #[error("value {value} does not fit in {width} bits")]
    TooWide {
        /// The value, as text.
        value: String,
        /// The requested width.
        width: u32,
    },
    /// A hexadecimal string held something other than hex digits and `_`.
    #[error("`{0}` is not a hexadecimal number")]
    NotHex(String),
}

impl Bits {
    /// All-zero value of `width` bits.
    pub fn zero(width: u32) -> Self {
        Bits(bitvec![u64, Lsb0; 0; width as usize])
    }

    /// All-ones value of `width` bits.
    pub fn ones(width: u32) -> Self {
        Bits(bitvec![u64, Lsb0; 1; width as usize])
    }

    /// `value` as `width` bits; an error if it does not fit.
    pub fn from_u64(value: u64, width: u32) -> Result<Self, BitsError> {
        Self::from_u128(value as u128, width)
    }

    /// `value` as `width` bits; an error if it does not fit.
    pub fn from_u128(value: u128, width: u32) -> Result<Self, BitsError> {
        let needed = 128 - value.leading_zeros();
        if needed > width {
            return Err(BitsError::TooWide {
                value: value.to_string(),
                width,
            });
        }
        let mut b = Self::zero(width);
        for i in 0..needed {
            b.0.set(i as usize, (value >> i) & 1 == 1);
        }
        Ok(b)
    }

    /// The low `width` bits of little-endian 64-bit `words` (missing words are 0,
    /// bits above `width` are ignored): the simulator's packed representation.
    pub fn from_words(words: &[u64], width: u32) -> Self {
        let n = (width as usize).div_ceil(64);
        let mut raw: Vec<u64> = words.iter().copied().take(n).collect();
        raw.resize(n, 0);
        let mut v = BitVec::<u64, Lsb0>::from_vec(raw);
        v.truncate(width as usize);
        Bits(v)
    }

    /// Parses hexadecimal digits (optional `0x`, `_` separators) into `width` bits.
    pub fn from_hex(text: &str, width: u32) -> Result<Self, BitsError> {
        let digits: String = text
            .trim_start_matches("0x")
            .chars()
            .filter(|c| *c != '_')
            .collect();
        if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(BitsError::NotHex(text.to_string()));
        }
        let mut b = Self::zero(width);
        for (pos, c) in digits.chars().rev().enumerate() {
            let nibble = c.to_digit(16).expect("checked hex digit");
            for k in 0..4 {
                if (nibble >> k) & 1 == 1 {
                    let i = pos * 4 + k;
                    if i >= width as usize {
                        return Err(BitsError::TooWide {
                            value: format!("0x{digits}"),
                            width,
                        });
                    }
                    b.0.set(i, true);
                }
            }
        }
        Ok(b)
    }

    /// Width in bits.
    pub fn width(&self) -> u32 {
        self.0.len() as u32
    }

    /// Bit `i` (0 = least significant). Panics if `i` is out of range (a caller bug).
    pub fn bit(&self, i: u32) -> bool {
        self.0[i as usize]
    }

    /// Sets bit `i`. Panics if `i` is out of range (a caller bug).
    pub fn set_bit(&mut self, i: u32, value: bool) {
        self.0.set(i as usize, value);
    }

    /// The value as `u64`, or `None` if a bit above 63 is set.
    pub fn to_u64(&self) -> Option<u64> {
        let words = self.to_words();
        if words.iter().skip(1).any(|w| *w != 0) {
            return None;
        }
        Some(words.first().copied().unwrap_or(0))
    }

    /// Little-endian 64-bit words, `ceil(width / 64)` of them, unused high bits 0,
    /// without allocating (what [`to_words`](Self::to_words) collects).
    pub fn words(&self) -> impl ExactSizeIterator<Item = u64> + '_ {
        let raw = self.0.as_raw_slice();
        let (last, top) = (raw.len().wrapping_sub(1), self.0.len() % 64);
        raw.iter().enumerate().map(move |(i, &w)| {
            if i == last && top != 0 {
                w & ((1u64 << top) - 1)
            } else {
                w
            }
        })
    }

    /// Little-endian 64-bit words, `ceil(width / 64)` of them, unused high bits 0.
    pub fn to_words(&self) -> Vec<u64> {
        let mut words = self.0.as_raw_slice().to_vec();
        if !self.0.len().is_multiple_of(64) {
            if let Some(last) = words.last_mut() {
                *last &= (1u64 << (self.0.len() % 64)) - 1;
            }
        }
        words
    }

    /// True if every bit is 0.
    pub fn is_zero(&self) -> bool {
        self.0.not_any()
    }

    /// True if every bit is 1.
    pub fn is_ones(&self) -> bool {
        self.0.all()
    }

    /// Lowercase hexadecimal, exactly `ceil(width / 4)` digits, no prefix.
    pub fn to_hex(&self) -> String {
        let digits = (self.0.len()).div_ceil(4);
        let words = self.to_words();
        (0..digits)
            .rev()
            .map(|d| {
                let bit = d * 4;
                let nibble = (words[bit / 64] >> (bit % 64)) & 0xf;
                char::from_digit(nibble as u32, 16).expect("nibble < 16")
            })
            .collect()
    }

    /// The underlying bit slice, for callers that work with `bitvec` directly.
    pub fn as_bitslice(&self) -> &BitSlice<u64, Lsb0> {
        &self.0
    }
}

impl From<BitVec<u64, Lsb0>> for Bits {
    fn from(v: BitVec<u64, Lsb0>) -> Self {
        Bits(v)
    }
}

impl fmt::Debug for Bits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}'h{}", self.width(), self.to_hex())
    }
}

impl fmt::Display for Bits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}'h{}", self.width(), self.to_hex())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_words_and_hex_at_wide_widths() {
        let words = [0x0123_4567_89ab_cdef, 0xfedc_ba98_7654_3210, 0x5];
        let b = Bits::from_words(&words, 131);
        assert_eq!(b.to_words(), vec![words[0], words[1], 0x5 & 0x7]);
        assert_eq!(b.to_hex(), "5fedcba98765432100123456789abcdef");
        assert_eq!(Bits::from_hex(&b.to_hex(), 131).unwrap(), b);
        assert_eq!(Bits::ones(4096).to_words().len(), 64);
        for b in [
            b,
            Bits::ones(131),
            Bits::ones(64),
            Bits::zero(1),
            Bits::ones(5),
        ] {
            assert_eq!(b.words().collect::<Vec<_>>(), b.to_words(), "{b:?}");
        }
        assert_eq!(Bits::ones(131).words().last(), Some(0x7));
    }

    #[test]
    fn rejects_values_that_do_not_fit() {
        assert!(Bits::from_u64(256, 8).is_err());
        assert_eq!(Bits::from_u64(255, 8).unwrap().to_u64(), Some(255));
        assert!(Bits::from_hex("1ff", 8).is_err());
        assert!(Bits::from_hex("xyz", 8).is_err());
    }
}
