//! Shared helpers of the integration tests: a seeded RNG (`WIRESPEED_SEED` overrides
//! the fixed seed) and an independent bit-by-bit reference model (`Bv`, LSB first).

#![allow(dead_code)]

use hdl::Bits;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The seed of this run: `WIRESPEED_SEED` if set, else a fixed default. Printed.
pub fn seed() -> u64 {
    let seed = std::env::var("WIRESPEED_SEED")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0x5eed_2024);
    println!("seed = {seed} (set WIRESPEED_SEED to reproduce or vary)");
    seed
}

/// A deterministic RNG for test `name`, derived from [`seed`].
pub fn rng(name: &str) -> ChaCha8Rng {
    let salt = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    });
    ChaCha8Rng::seed_from_u64(seed() ^ salt)
}

/// A bit vector, bit 0 first: the reference model's value type.
pub type Bv = Vec<bool>;

/// Random `w` bits, biased towards corner cases (zero, all ones, sign bit, one bit).
pub fn random_bv(rng: &mut impl Rng, w: usize) -> Bv {
    match rng.gen_range(0..10) {
        0 => vec![false; w],
        1 => vec![true; w],
        2 => (0..w).map(|i| i + 1 == w).collect(),
        3 => {
            let k = rng.gen_range(0..w);
            (0..w).map(|i| i == k).collect()
        }
        4 => (0..w).map(|i| i + 1 == w || rng.gen()).collect(),
        _ => (0..w).map(|_| rng.gen()).collect(),
    }
}

pub fn to_bits(v: &Bv) -> Bits {
    let mut b = Bits::zero(v.len() as u32);
    for (i, bit) in v.iter().enumerate() {
        if *bit {
            b.set_bit(i as u32, true);
        }
    }
    b
}

pub fn from_bits(b: &Bits) -> Bv {
    (0..b.width()).map(|i| b.bit(i)).collect()
}

pub fn from_u128(v: u128, w: usize) -> Bv {
    (0..w).map(|i| i < 128 && (v >> i) & 1 == 1).collect()
}

/// The value of `v` as u128, saturated to `u128::MAX` if it has bits above 127.
pub fn to_u128_sat(v: &Bv) -> u128 {
    if v.iter().skip(128).any(|b| *b) {
        return u128::MAX;
    }
    v.iter()
        .take(128)
        .enumerate()
        .fold(0, |acc, (i, b)| acc | ((*b as u128) << i))
}

pub fn hex(v: &Bv) -> String {
    to_bits(v).to_hex()
}

/// Zero- or sign-extension (or truncation) to `w` bits.
pub fn resize(a: &Bv, w: usize, signed: bool) -> Bv {
    let fill = signed && a.last().copied().unwrap_or(false);
    (0..w).map(|i| a.get(i).copied().unwrap_or(fill)).collect()
}

pub fn add(a: &Bv, b: &Bv, w: usize) -> Bv {
    let (a, b) = (resize(a, w, false), resize(b, w, false));
    let mut carry = false;
    let mut out = vec![false; w];
    for i in 0..w {
        let s = a[i] as u8 + b[i] as u8 + carry as u8;
        out[i] = s & 1 == 1;
        carry = s >= 2;
    }
    out
}

pub fn sub(a: &Bv, b: &Bv, w: usize) -> Bv {
    let (a, b) = (resize(a, w, false), resize(b, w, false));
    let mut borrow = false;
    let mut out = vec![false; w];
    for i in 0..w {
        let d = a[i] as i8 - b[i] as i8 - borrow as i8;
        out[i] = d & 1 != 0;
        borrow = d < 0;
    }
    out
}

/// Shift-and-add product modulo 2^w.
pub fn mul(a: &Bv, b: &Bv, w: usize) -> Bv {
    let a = resize(a, w, false);
    let mut acc = vec![false; w];
    for (k, bit) in b.iter().enumerate().take(w) {
        if *bit {
            let shifted = shl(&a, k);
            acc = add(&acc, &shifted, w);
        }
    }
    acc
}

/// Unsigned comparison of equal-width values.
pub fn cmp_u(a: &Bv, b: &Bv) -> std::cmp::Ordering {
    let n = a.len().max(b.len());
    for i in (0..n).rev() {
        let (x, y) = (
            a.get(i).copied().unwrap_or(false),
            b.get(i).copied().unwrap_or(false),
        );
        if x != y {
            return x.cmp(&y);
        }
    }
    std::cmp::Ordering::Equal
}

/// Two's complement comparison of equal-width values.
pub fn cmp_s(a: &Bv, b: &Bv) -> std::cmp::Ordering {
    let (na, nb) = (*a.last().unwrap_or(&false), *b.last().unwrap_or(&false));
    match (na, nb) {
        (true, false) => std::cmp::Ordering::Less,
        (false, true) => std::cmp::Ordering::Greater,
        _ => cmp_u(a, b),
    }
}

pub fn shl(a: &Bv, n: usize) -> Bv {
    (0..a.len()).map(|i| i >= n && a[i - n]).collect()
}

pub fn shr(a: &Bv, n: usize, arith: bool) -> Bv {
    let fill = arith && a.last().copied().unwrap_or(false);
    (0..a.len())
        .map(|i| {
            i.checked_add(n)
                .and_then(|j| a.get(j).copied())
                .unwrap_or(fill)
        })
        .collect()
}

pub fn slice(a: &Bv, lo: usize, w: usize) -> Bv {
    a[lo..lo + w].to_vec()
}

/// Concatenation, most significant part first.
pub fn concat(parts: &[&Bv]) -> Bv {
    parts.iter().rev().flat_map(|p| p.iter().copied()).collect()
}

pub fn leading_zeros(a: &Bv) -> usize {
    a.iter().rev().take_while(|b| !**b).count()
}

pub fn bits_for(n: usize) -> usize {
    (usize::BITS - n.leading_zeros()).max(1) as usize
}

/// Active-high counter: `count += inc` when `en`; `ahead` = `count + inc` (combinational).
pub fn enabled_counter() -> hdl::Module {
    let mut m = hdl::ModuleBuilder::new("counter");
    let clk = m.domain("clk", "clk", Some("rst"), hdl::ResetPolarity::ActiveHigh);
    let en = m.input("en", 1);
    let inc = m.input("inc", 8);
    let count = m.reg(clk, "value", 8);
    let next = m.add_wrap(count, inc);
    m.set_next(count, next);
    m.set_enable(count, en);
    m.output("count", count);
    let ahead = m.add_wrap(count, inc);
    m.output("ahead", ahead);
    m.finish().unwrap()
}
