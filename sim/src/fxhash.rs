//! A fast non-cryptographic hasher for the compiler's internal maps (keys are
//! netlist operations and constants, never attacker-chosen).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// The rotate-multiply hash of rustc's `FxHasher`.
#[derive(Clone, Copy, Default)]
pub(crate) struct FxHasher(u64);

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    #[inline]
    fn add(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        for b in chunks.remainder() {
            self.add(*b as u64);
        }
    }

    #[inline]
    fn write_u8(&mut self, x: u8) {
        self.add(x as u64)
    }

    #[inline]
    fn write_u32(&mut self, x: u32) {
        self.add(x as u64)
    }

    #[inline]
    fn write_u64(&mut self, x: u64) {
        self.add(x)
    }

    #[inline]
    fn write_usize(&mut self, x: usize) {
        self.add(x as u64)
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// A `HashMap` with [`FxHasher`].
pub(crate) type FxHashMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;
