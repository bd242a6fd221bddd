//! The answer a host wants from the last layer, bit for bit as
//! `hdl::lightning::answer` computes it: the class (the first largest logit, as
//! [`argmax`]) and a fixed-point log-softmax over the logits scaled by 2⁻ˢ.
//!
//! # Arithmetic (the contract)
//!
//! With `max` the largest logit and *s* the scale shift:
//! - t = ⌊(x − max) · 2⁸ / 2ˢ⌋ (Q.8 nats, ≤ 0);
//! - if −t ≥ 2¹² the term is 0, else u = ⌊−t · 94548 / 2¹⁶⌋ (Q.8 log₂ units) and
//!   term = ⌊E[u mod 256] / 2^⌊u / 256⌋⌋ with E\[f\] = round(2¹⁶ · 2^(−f/256));
//! - S = Σ terms; p = the position of S's leading one, k = p − 16, j = the 8 bits
//!   below it; L = ⌊(k · 45426 + Λ\[j\] + 128) / 256⌋ with
//!   Λ\[j\] = round(2¹⁶ · ln(1 + (j + ½)/256)) (ln S in Q.8);
//! - log-softmax = clamp(t − L, −2³¹, 2³¹ − 1): signed Q23.8 nats.
//!
//! The result is within [`ACCURACY_NATS`] of the real log-softmax (clamped at
//! −2²³ nats) for up to [`MAX_LOGITS`] logits.

use super::arith::argmax;
use thiserror::Error;

/// Fractional bits of a log-softmax value (Q23.8).
pub const LSM_FRAC: u32 = 8;
/// Most logits the hardware takes (the sum's width is sized for them).
pub const MAX_LOGITS: usize = 64;
/// Largest scale shift (a 6-bit `scale_shift`).
pub const MAX_SCALE_SHIFT: u32 = 63;
/// The documented accuracy: |error| ≤ 1/32 nat.
pub const ACCURACY_NATS: f64 = 1.0 / 32.0;
/// Smallest log-softmax value (saturation), in nats: −2²³.
pub const LSM_MIN_NATS: f64 = -8_388_608.0;
/// log₂ e in Q.16.
const LOG2E_Q16: i64 = 94548;
/// ln 2 in Q.16.
const LN2_Q16: i64 = 45426;
/// A scaled difference of 2¹² Q.8 nats (16 nats) or more adds nothing.
const CUTOFF: i64 = 1 << 12;

/// Why the model refuses a logit vector.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AnswerError {
    /// No logits.
    #[error("logits: the vector is empty")]
    Empty,
    /// More logits than the hardware's sum is sized for.
    #[error("logits: {0} logits, at most {MAX_LOGITS}")]
    TooMany(usize),
    /// A scale shift past the widest input.
    #[error("scale_shift: {0} is not in 0..={MAX_SCALE_SHIFT}")]
    Scale(u32),
    /// A logit outside ±2⁴⁸ (the widest accumulator).
    #[error("logits: value {value} at index {index} does not fit 48 bits signed")]
    Range {
        /// Where.
        index: usize,
        /// The value.
        value: i64,
    },
}

/// What the block reports for one logit vector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    /// The index of the first largest logit.
    pub class: usize,
    /// The largest logit.
    pub max: i64,
    /// ln Σ exp, Q.8 nats (L).
    pub log_sum: i64,
    /// Per logit its log-softmax, signed Q23.8 nats (the `lsm_data` words).
    pub log_softmax: Vec<i64>,
}

/// Word `f` of the 2^(−f/256) table, Q.16.
pub fn exp2_word(f: u32) -> i64 {
    (65536.0 * (-(f64::from(f)) / 256.0).exp2()).round() as i64
}

/// Word `j` of the ln(1 + (j + ½)/256) table, Q.16.
pub fn ln_word(j: u32) -> i64 {
    (65536.0 * (1.0 + (f64::from(j) + 0.5) / 256.0).ln()).round() as i64
}

/// A Q23.8 log-softmax word in nats.
pub fn nats(word: i64) -> f64 {
    word as f64 / f64::from(1u32 << LSM_FRAC)
}

/// The block's answer for `logits` at scale shift `scale_shift`.
pub fn answer(logits: &[i64], scale_shift: u32) -> Result<Answer, AnswerError> {
    if logits.is_empty() {
        return Err(AnswerError::Empty);
    }
    if logits.len() > MAX_LOGITS {
        return Err(AnswerError::TooMany(logits.len()));
    }
    if scale_shift > MAX_SCALE_SHIFT {
        return Err(AnswerError::Scale(scale_shift));
    }
    let limit = 1i64 << 47;
    if let Some((index, &value)) = logits
        .iter()
        .enumerate()
        .find(|(_, &v)| !(-limit..limit).contains(&v))
    {
        return Err(AnswerError::Range { index, value });
    }
    let class = argmax(logits).ok_or(AnswerError::Empty)?;
    let max = logits[class];
    let scaled: Vec<i64> = logits
        .iter()
        .map(|&x| ((x - max) << LSM_FRAC) >> scale_shift)
        .collect();
    let sum: i64 = scaled.iter().map(|&t| exp_term(t)).sum();
    let log_sum = ln_q8(sum);
    let log_softmax = scaled
        .iter()
        .map(|&t| (t - log_sum).clamp(i64::from(i32::MIN), i64::from(i32::MAX)))
        .collect();
    Ok(Answer {
        class,
        max,
        log_sum,
        log_softmax,
    })
}

/// exp(t / 256) in Q.16 for a Q.8 difference t ≤ 0, by the table and a shift.
fn exp_term(t: i64) -> i64 {
    let neg = -t;
    if neg >= CUTOFF {
        return 0;
    }
    let u = (neg * LOG2E_Q16) >> 16;
    exp2_word((u & 0xFF) as u32) >> (u >> 8)
}

/// ln(sum / 2¹⁶) in Q.8 for 2¹⁶ ≤ sum < 2²³.
fn ln_q8(sum: i64) -> i64 {
    let p = 63 - i64::from(sum.leading_zeros());
    let k = p - 16;
    let j = ((sum >> (p - 8)) & 0xFF) as u32;
    (k * LN2_Q16 + ln_word(j) + 128) >> 8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_logits_share_the_probability() {
        // Four equal logits: log(1/4) = −1.386 nats ≈ −355/256.
        let a = answer(&[7, 7, 7, 7], 0).unwrap();
        assert_eq!(a.class, 0);
        assert_eq!(a.max, 7);
        for &l in &a.log_softmax {
            assert!((nats(l) + 4f64.ln()).abs() <= ACCURACY_NATS, "{l}");
        }
    }

    #[test]
    fn bad_vectors_are_refused_by_name() {
        assert_eq!(answer(&[], 0), Err(AnswerError::Empty));
        assert_eq!(answer(&[0; 65], 0), Err(AnswerError::TooMany(65)));
        assert_eq!(answer(&[0], 64), Err(AnswerError::Scale(64)));
        assert!(answer(&[1 << 47], 0)
            .unwrap_err()
            .to_string()
            .contains("index 0"));
    }
}
