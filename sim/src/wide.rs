//! Arithmetic on packed little-endian `u64` word slices of any width: the general
//! path behind [`WideOp`](crate::instr::WideOp). Every result keeps the bits above its
//! width zero (`mask` is the mask of the result's top word).

use hdl::ir::{CmpOp, ReduceOp, ShiftOp};
use std::cmp::Ordering;

/// Number of words holding `width` bits.
pub(crate) fn words(width: u32) -> usize {
    (width as usize).div_ceil(64)
}

/// Mask of the valid bits of the top word of a `width`-bit value.
pub(crate) fn last_mask(width: u32) -> u64 {
    match width % 64 {
        0 => u64::MAX,
        r => (1u64 << r) - 1,
    }
}

/// Word `i` of `a`, zero past its end (zero extension).
#[inline]
fn at(a: &[u64], i: usize) -> u64 {
    a.get(i).copied().unwrap_or(0)
}

#[inline]
fn mask_top(dst: &mut [u64], mask: u64) {
    if let Some(top) = dst.last_mut() {
        *top &= mask;
    }
}

/// `dst = !a`.
pub(crate) fn not(dst: &mut [u64], a: &[u64], mask: u64) {
    for (i, d) in dst.iter_mut().enumerate() {
        *d = !at(a, i);
    }
    mask_top(dst, mask);
}

/// `dst = a op b` for `op` a bitwise word function.
pub(crate) fn bitwise(dst: &mut [u64], a: &[u64], b: &[u64], op: impl Fn(u64, u64) -> u64) {
    if a.len() == dst.len() && b.len() == dst.len() {
        for ((d, x), y) in dst.iter_mut().zip(a).zip(b) {
            *d = op(*x, *y);
        }
        return;
    }
    for (i, d) in dst.iter_mut().enumerate() {
        *d = op(at(a, i), at(b, i));
    }
}

/// `dst = (a + b) mod 2^width`, operands zero-extended.
pub(crate) fn add(dst: &mut [u64], a: &[u64], b: &[u64], mask: u64) {
    let step = |carry: &mut bool, x: u64, y: u64| {
        let (s1, c1) = x.overflowing_add(y);
        let (s2, c2) = s1.overflowing_add(*carry as u64);
        *carry = c1 || c2;
        s2
    };
    let mut carry = false;
    if a.len() == dst.len() && b.len() == dst.len() {
        for ((d, x), y) in dst.iter_mut().zip(a).zip(b) {
            *d = step(&mut carry, *x, *y);
        }
    } else {
        for (i, d) in dst.iter_mut().enumerate() {
            *d = step(&mut carry, at(a, i), at(b, i));
        }
    }
    mask_top(dst, mask);
}

/// `dst = (a - b) mod 2^width`, operands zero-extended.
pub(crate) fn sub(dst: &mut [u64], a: &[u64], b: &[u64], mask: u64) {
    let step = |borrow: &mut bool, x: u64, y: u64| {
        let (s1, b1) = x.overflowing_sub(y);
        let (s2, b2) = s1.overflowing_sub(*borrow as u64);
        *borrow = b1 || b2;
        s2
    };
    let mut borrow = false;
    if a.len() == dst.len() && b.len() == dst.len() {
        for ((d, x), y) in dst.iter_mut().zip(a).zip(b) {
            *d = step(&mut borrow, *x, *y);
        }
    } else {
        for (i, d) in dst.iter_mut().enumerate() {
            *d = step(&mut borrow, at(a, i), at(b, i));
        }
    }
    mask_top(dst, mask);
}

/// `dst = (a * b) mod 2^width`: schoolbook multiplication on words.
pub(crate) fn mul(dst: &mut [u64], a: &[u64], b: &[u64], mask: u64) {
    dst.fill(0);
    let n = dst.len();
    for (i, &x) in a.iter().enumerate().take(n) {
        if x == 0 {
            continue;
        }
        let mut carry = 0u64;
        let row = (n - i).min(b.len());
        for j in 0..row {
            let t = x as u128 * b[j] as u128 + dst[i + j] as u128 + carry as u128;
            dst[i + j] = t as u64;
            carry = (t >> 64) as u64;
        }
        let mut k = i + row;
        while carry != 0 && k < n {
            let (s, c) = dst[k].overflowing_add(carry);
            dst[k] = s;
            carry = c as u64;
            k += 1;
        }
    }
    mask_top(dst, mask);
}

/// Bit `width - 1` of `a`: the sign of a two's complement `width`-bit value.
pub(crate) fn is_negative(a: &[u64], width: u32) -> bool {
    if width == 0 {
        return false;
    }
    let bit = width - 1;
    (at(a, (bit / 64) as usize) >> (bit % 64)) & 1 == 1
}

fn cmp_unsigned(a: &[u64], b: &[u64]) -> Ordering {
    for i in (0..a.len().max(b.len())).rev() {
        match at(a, i).cmp(&at(b, i)) {
            Ordering::Equal => continue,
            other => return other,
        }
    }
    Ordering::Equal
}

/// The comparison `a op b` of two `width`-bit values.
pub(crate) fn compare(op: CmpOp, a: &[u64], b: &[u64], width: u32) -> bool {
    let ord = match op {
        CmpOp::LtS | CmpOp::LeS => match (is_negative(a, width), is_negative(b, width)) {
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            _ => cmp_unsigned(a, b),
        },
        _ => cmp_unsigned(a, b),
    };
    match op {
        CmpOp::Eq => ord == Ordering::Equal,
        CmpOp::Ne => ord != Ordering::Equal,
        CmpOp::LtU | CmpOp::LtS => ord == Ordering::Less,
        CmpOp::LeU | CmpOp::LeS => ord != Ordering::Greater,
    }
}

/// `dst = src[lo + width - 1 : lo]`.
pub(crate) fn extract(dst: &mut [u64], src: &[u64], lo: u32, mask: u64) {
    let q = (lo / 64) as usize;
    let s = lo % 64;
    for (k, d) in dst.iter_mut().enumerate() {
        let low = at(src, q + k);
        *d = if s == 0 {
            low
        } else {
            (low >> s) | (at(src, q + k + 1) << (64 - s))
        };
    }
    mask_top(dst, mask);
}

/// ORs `src` (whose bits above its width are zero) into `dst` at bit `pos`.
pub(crate) fn insert(dst: &mut [u64], src: &[u64], pos: u64) {
    let q = (pos / 64) as usize;
    let s = (pos % 64) as u32;
    for (j, &w) in src.iter().enumerate() {
        if w == 0 {
            continue;
        }
        if let Some(d) = dst.get_mut(q + j) {
            *d |= w << s;
        }
        if s != 0 {
            if let Some(d) = dst.get_mut(q + j + 1) {
                *d |= w >> (64 - s);
            }
        }
    }
}

/// `dst = count` copies of the `src_width`-bit `src`, copy 0 in the low bits.
pub(crate) fn replicate(dst: &mut [u64], src: &[u64], src_width: u32, count: u32, mask: u64) {
    if src_width == 1 {
        dst.fill(if at(src, 0) & 1 == 1 { u64::MAX } else { 0 });
    } else {
        dst.fill(0);
        for k in 0..count as u64 {
            insert(dst, src, k * src_width as u64);
        }
    }
    mask_top(dst, mask);
}

/// `dst = src` zero- or sign-extended from `src_width` bits.
pub(crate) fn extend(dst: &mut [u64], src: &[u64], src_width: u32, signed: bool, mask: u64) {
    for (i, d) in dst.iter_mut().enumerate() {
        *d = at(src, i);
    }
    if signed && is_negative(src, src_width) {
        let i = (src_width / 64) as usize;
        let s = src_width % 64;
        let from = if s == 0 {
            i
        } else {
            if let Some(d) = dst.get_mut(i) {
                *d |= u64::MAX << s;
            }
            i + 1
        };
        for d in dst.iter_mut().skip(from) {
            *d = u64::MAX;
        }
    }
    mask_top(dst, mask);
}

/// A shift amount held in `a`, saturated to `u64::MAX` if it has bits above bit 63.
pub(crate) fn read_amount(a: &[u64]) -> u64 {
    if a.iter().skip(1).any(|w| *w != 0) {
        u64::MAX
    } else {
        at(a, 0)
    }
}

/// `dst = src` shifted by `n` (`src` and `dst` both `width` bits).
pub(crate) fn shift(op: ShiftOp, dst: &mut [u64], src: &[u64], width: u32, n: u64, mask: u64) {
    let nw = dst.len();
    match op {
        ShiftOp::Left => {
            if n >= width as u64 {
                dst.fill(0);
                return;
            }
            let q = (n / 64) as usize;
            let s = (n % 64) as u32;
            for (i, d) in dst.iter_mut().enumerate() {
                let hi = if i >= q { at(src, i - q) } else { 0 };
                *d = if s == 0 {
                    hi
                } else {
                    let lo = if i > q { at(src, i - q - 1) } else { 0 };
                    (hi << s) | (lo >> (64 - s))
                };
            }
        }
        ShiftOp::RightLogical | ShiftOp::RightArithmetic => {
            let neg = op == ShiftOp::RightArithmetic && is_negative(src, width);
            let fill = if neg { u64::MAX } else { 0 };
            if n >= width as u64 {
                dst.fill(fill);
                mask_top(dst, mask);
                return;
            }
            // The source seen as sign-extended to infinity.
            let ext = |i: usize| -> u64 {
                if i + 1 < nw {
                    at(src, i)
                } else if i + 1 == nw {
                    at(src, i) | (fill & !mask)
                } else {
                    fill
                }
            };
            let q = (n / 64) as usize;
            let s = (n % 64) as u32;
            for (i, d) in dst.iter_mut().enumerate() {
                *d = if s == 0 {
                    ext(i + q)
                } else {
                    (ext(i + q) >> s) | (ext(i + q + 1) << (64 - s))
                };
            }
        }
    }
    mask_top(dst, mask);
}

/// The reduction of all `width` bits of `a`.
pub(crate) fn reduce(op: ReduceOp, a: &[u64], width: u32) -> bool {
    match op {
        ReduceOp::And => {
            let n = words(width);
            (0..n).all(|i| {
                let full = if i + 1 == n {
                    last_mask(width)
                } else {
                    u64::MAX
                };
                at(a, i) == full
            })
        }
        ReduceOp::Or => a.iter().any(|w| *w != 0),
        ReduceOp::Xor => a.iter().map(|w| w.count_ones()).sum::<u32>() & 1 == 1,
    }
}

/// Leading zeros of the `width`-bit value `a` (`width` if it is zero).
pub(crate) fn leading_zeros(a: &[u64], width: u32) -> u64 {
    let n = a.len() as u64;
    for (i, &w) in a.iter().enumerate().rev() {
        if w != 0 {
            let from_top = (n - 1 - i as u64) * 64 + w.leading_zeros() as u64;
            return from_top - (n * 64 - width as u64);
        }
    }
    width as u64
}

/// `dst = v` (truncated by `mask` if `dst` is narrower than 64 bits).
pub(crate) fn write_u64(dst: &mut [u64], v: u64, mask: u64) {
    dst.fill(0);
    if let Some(d) = dst.first_mut() {
        *d = v;
    }
    mask_top(dst, mask);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w2(v: u128) -> [u64; 2] {
        [v as u64, (v >> 64) as u64]
    }
    fn v(w: &[u64]) -> u128 {
        at(w, 0) as u128 | (at(w, 1) as u128) << 64
    }

    #[test]
    fn add_sub_mul_carry_across_words() {
        let mut d = [0u64; 2];
        add(&mut d, &w2(u64::MAX as u128), &[1], u64::MAX);
        assert_eq!(v(&d), 1u128 << 64);
        sub(&mut d, &[0], &[1], u64::MAX);
        assert_eq!(v(&d), u128::MAX);
        mul(&mut d, &[u64::MAX], &[u64::MAX], u64::MAX);
        assert_eq!(v(&d), (u64::MAX as u128) * (u64::MAX as u128));
        let mut d3 = [0u64; 3];
        mul(&mut d3, &w2(u128::MAX), &[2], last_mask(130));
        assert_eq!(d3, [u64::MAX - 1, u64::MAX, 1]);
    }

    #[test]
    fn shifts_and_extension() {
        let mut d = [0u64; 2];
        let x = 0x8000_0000_0000_0000_0000_0000_0000_1234u128 >> 2; // 126 bits, sign set
        shift(
            ShiftOp::RightArithmetic,
            &mut d,
            &w2(x),
            126,
            70,
            last_mask(126),
        );
        let expect = ((((x << 2) as i128) >> 72) as u128) & ((1u128 << 126) - 1);
        assert_eq!(v(&d), expect);
        shift(ShiftOp::Left, &mut d, &w2(x), 126, 65, last_mask(126));
        assert_eq!(v(&d), (x << 65) & ((1u128 << 126) - 1));
        extend(&mut d, &[0x80], 8, true, u64::MAX);
        assert_eq!(v(&d), u128::MAX - 0x7f);
        assert_eq!(leading_zeros(&[0, 1], 100), 100 - 65);
        assert_eq!(leading_zeros(&[0, 0], 100), 100);
    }
}
