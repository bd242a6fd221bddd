//! Seeded random numbers for tests: a fixed seed per test, printed, and overridable
//! with `WIRESPEED_SEED` so that any failure can be replayed.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The environment variable that overrides every test's seed.
pub const SEED_VAR: &str = "WIRESPEED_SEED";

/// A generator seeded with `default_seed`, or with `$WIRESPEED_SEED` if set; prints
/// the seed in use with the test's name (shown by `cargo test` on failure).
pub fn seeded(test: &str, default_seed: u64) -> ChaCha8Rng {
    let seed = std::env::var(SEED_VAR)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default_seed);
    println!("{test}: seed {seed} (replay with {SEED_VAR}={seed})");
    ChaCha8Rng::seed_from_u64(seed)
}

/// `width` random bits as little-endian 64-bit words (high bits of the last word 0).
pub fn random_words(rng: &mut impl rand::Rng, width: u32) -> Vec<u64> {
    let n = width.div_ceil(64) as usize;
    let mut words: Vec<u64> = (0..n).map(|_| rng.gen()).collect();
    if !width.is_multiple_of(64) {
        if let Some(last) = words.last_mut() {
            *last &= (1u64 << (width % 64)) - 1;
        }
    }
    words
}

/// A generator for the part `what` of a run seeded `seed`: the same (seed, what)
/// always gives the same numbers, different parts independent ones.
pub fn derived(seed: u64, what: impl std::hash::Hash) -> ChaCha8Rng {
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    (seed, what).hash(&mut h);
    ChaCha8Rng::seed_from_u64(h.finish())
}
