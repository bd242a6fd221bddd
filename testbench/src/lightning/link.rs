//! The photonic core as a cycle-level peripheral: it takes the two DAC words of a
//! fabric cycle and returns the ADC word of that cycle, after a whole-cycle
//! latency and an intra-cycle sample shift. The per-sample math (product, noise,
//! loss) is a [`PhotonicCore`]; this file adds only the timing, so that every
//! engine driving a `Dut` shares one model.
//!
//! # Timing
//! On the continuous sample sequences (sample *i* of cycle *t* is number
//! `16t + i`), ADC sample `n` is the core's output for DAC samples
//! `n − (16 · latency + shift)`; samples before the first DAC cycle are 0. With
//! latency 0 and shift 0 the ADC word of cycle *t* is made of the DAC words of
//! cycle *t*.
//!
//! # Dark cycles
//! In a cycle where neither DAC drives a valid word the modulators are dark and
//! the core is not called: its 16 ADC samples are 0 and no noise is drawn. (A
//! noisy dark stream would make the ADC's mean-threshold mask random next to the
//! preamble, which the preamble detector does not tolerate.)

use super::arith::SAMPLES_PER_CYCLE;
use super::photonic::PhotonicCore;

/// The longest photonic latency a link models, in whole fabric cycles: the link
/// holds every sample in flight (16 a cycle), so a latency past this would ask for
/// more memory than a run should take (a million cycles are 32 MB a core), and it
/// is already far past any detector timeout, past which a run fails with no lock.
pub const MAX_LATENCY_CYCLES: usize = 1_000_000;

/// One bus word: 16 samples, sample 0 first.
pub type Word = [u16; SAMPLES_PER_CYCLE];

/// A photonic core between DAC 0 (activations), DAC 1 (weights) and the ADC.
pub struct PhotonicLink<C: PhotonicCore> {
    core: C,
    /// ADC samples on their way from the core to the ADC.
    line: Delay<u16>,
    /// Samples (value, lit) on their way to the activation modulator.
    act_line: Delay<(u16, bool)>,
    /// Samples (value, lit) on their way to the weight modulator.
    weight_line: Delay<(u16, bool)>,
}

impl<C: PhotonicCore> PhotonicLink<C> {
    /// A link with `latency` whole cycles (at most [`MAX_LATENCY_CYCLES`]) and
    /// `shift` samples (any `shift`; 16 or more samples add whole cycles).
    pub fn new(core: C, latency: usize, shift: usize) -> Self {
        Self::with_skew(core, latency, shift, 0)
    }

    /// A link whose weight modulator sees its DAC's samples `skew` samples later
    /// than the activation modulator sees its DAC's (negative: earlier): the
    /// modulators' path mismatch a calibration measures. A sample of the two
    /// modulators is lit (and the core called) if either DAC sample was lit.
    ///
    /// # Panics
    /// If `latency` exceeds [`MAX_LATENCY_CYCLES`] (callers check a user's value).
    pub fn with_skew(core: C, latency: usize, shift: usize, skew: i64) -> Self {
        assert!(
            latency <= MAX_LATENCY_CYCLES,
            "a photonic latency of {latency} cycles exceeds MAX_LATENCY_CYCLES"
        );
        let dark = |n: i64| Delay::new(n.max(0) as usize, (0, false));
        PhotonicLink {
            core,
            line: Delay::new(SAMPLES_PER_CYCLE * latency + shift, 0),
            act_line: dark(-skew),
            weight_line: dark(skew),
        }
    }

    /// Total delay in samples: `16 · latency + shift`.
    pub fn delay_samples(&self) -> usize {
        self.line.len()
    }

    /// One fabric cycle: the DAC words in (`lit` = either DAC word is valid),
    /// the ADC word out.
    pub fn step(&mut self, activations: &Word, weights: &Word, lit: bool) -> Word {
        let products = if self.act_line.len() == 0 && self.weight_line.len() == 0 {
            // No skew: both modulators see this cycle's samples, all lit or all dark.
            match lit {
                true => std::array::from_fn(|i| self.core.transmit(activations[i], weights[i])),
                false => [0; SAMPLES_PER_CYCLE],
            }
        } else {
            self.skewed_products(activations, weights, lit)
        };
        self.line.push_all(products)
    }

    /// The core's outputs for the samples each modulator sees through its skew
    /// line, each lit if either sample was.
    fn skewed_products(&mut self, activations: &Word, weights: &Word, lit: bool) -> Word {
        let activations = self.act_line.push_all(activations.map(|a| (a, lit)));
        let weights = self.weight_line.push_all(weights.map(|w| (w, lit)));
        std::array::from_fn(|i| {
            let ((a, a_lit), (w, w_lit)) = (activations[i], weights[i]);
            if a_lit || w_lit {
                self.core.transmit(a, w)
            } else {
                0
            }
        })
    }

    /// The core (e.g. to read its noise parameters).
    pub fn core(&self) -> &C {
        &self.core
    }
}

/// A fixed delay line: what goes in comes out `len` pushes later (at once when
/// `len` is 0); it starts full of a fill value.
struct Delay<T: Copy> {
    ring: Box<[T]>,
    /// The oldest entry: the next one out.
    head: usize,
}

impl<T: Copy> Delay<T> {
    /// A line of `len` samples, all `fill`.
    fn new(len: usize, fill: T) -> Self {
        Delay {
            ring: vec![fill; len].into_boxed_slice(),
            head: 0,
        }
    }

    /// The delay in pushes.
    fn len(&self) -> usize {
        self.ring.len()
    }

    /// Puts each of `xs` in, in order, and takes out for each the entry pushed
    /// `len` pushes before it (an entry of `xs` itself when `len` is below `N`):
    /// a bus word's samples moved as slices, not one at a time.
    fn push_all<const N: usize>(&mut self, xs: [T; N]) -> [T; N] {
        let len = self.ring.len();
        let mut out = xs;
        if len >= N {
            // The oldest N entries, from `head` on (wrapping), swap with `xs`.
            let first = (len - self.head).min(N);
            match <&mut [T; N]>::try_from(&mut self.ring[self.head..self.head + first]) {
                Ok(oldest) => std::mem::swap(oldest, &mut out),
                Err(_) => {
                    out[..first].swap_with_slice(&mut self.ring[self.head..self.head + first]);
                    out[first..].swap_with_slice(&mut self.ring[..N - first]);
                }
            }
            self.head += N;
            if self.head >= len {
                self.head -= len;
            }
        } else {
            // Every entry in the line comes out, oldest first, then the first
            // `N - len` of `xs`; the last `len` of `xs` stay in the line.
            let oldest = len - self.head;
            out[..oldest].copy_from_slice(&self.ring[self.head..]);
            out[oldest..len].copy_from_slice(&self.ring[..self.head]);
            out[len..].copy_from_slice(&xs[..N - len]);
            self.ring.copy_from_slice(&xs[N - len..]);
            self.head = 0;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// A core whose output tells its inputs apart, and is never 0 (so a lit
    /// sample differs from a dark one).
    struct Tagging;

    impl PhotonicCore for Tagging {
        fn transmit(&mut self, activation: u16, weight: u16) -> u16 {
            activation.wrapping_mul(31) ^ weight | 1
        }
    }

    /// Blocks of 1, 3 and 16 pushes in any order, against a queue that starts
    /// with `len` fill values and gives one out for each one put in.
    #[test]
    fn a_delay_line_is_a_queue_of_its_length() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        for len in 0..40 {
            let mut line = Delay::new(len, 0u16);
            let mut queue: std::collections::VecDeque<u16> = vec![0; len].into();
            for block in 0..60 {
                let n = [1, 3, 16][rng.gen_range(0..3)];
                let xs: Vec<u16> = (0..n).map(|_| rng.gen()).collect();
                let got = match n {
                    1 => line.push_all([xs[0]]).to_vec(),
                    3 => line.push_all([xs[0], xs[1], xs[2]]).to_vec(),
                    _ => line
                        .push_all::<16>(xs.clone().try_into().expect("16"))
                        .to_vec(),
                };
                let want: Vec<u16> = (xs.iter())
                    .map(|&x| {
                        queue.push_back(x);
                        queue.pop_front().expect("one in, one out")
                    })
                    .collect();
                assert_eq!(got, want, "length {len}, block {block} of {n}");
            }
        }
    }

    /// Against the whole streams indexed directly: ADC sample `n` is the core's
    /// output for activation sample `n − D − A` and weight sample `n − D − W`
    /// (`D` = 16·latency + shift, `A`/`W` the modulators' skew delays), lit when
    /// either was lit, and 0 before the streams begin or when dark.
    #[test]
    fn a_link_delays_each_stream_by_its_samples() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        for trial in 0..40 {
            let (latency, shift) = (rng.gen_range(0..4), rng.gen_range(0..40));
            let skew: i64 = match trial % 4 {
                0 => 0,
                _ => rng.gen_range(-40..40),
            };
            let mut link = PhotonicLink::with_skew(Tagging, latency, shift, skew);
            let cycles = 30;
            let words: Vec<(Word, Word, bool)> = (0..cycles)
                .map(|_| (rng.gen(), rng.gen(), rng.gen_bool(0.7)))
                .collect();
            let out: Vec<u16> = words
                .iter()
                .flat_map(|(a, w, lit)| link.step(a, w, *lit))
                .collect();
            let sample = |n: i64, weight: bool| -> (u16, bool) {
                if n < 0 {
                    return (0, false);
                }
                let (a, w, lit) = &words[n as usize / SAMPLES_PER_CYCLE];
                let i = n as usize % SAMPLES_PER_CYCLE;
                (if weight { w[i] } else { a[i] }, *lit)
            };
            let d = (SAMPLES_PER_CYCLE * latency + shift) as i64;
            for (n, &got) in out.iter().enumerate() {
                let m = n as i64 - d;
                let (a, a_lit) = sample(m - (-skew).max(0), false);
                let (w, w_lit) = sample(m - skew.max(0), true);
                let want = if m >= 0 && (a_lit || w_lit) {
                    Tagging.transmit(a, w)
                } else {
                    0
                };
                assert_eq!(
                    got, want,
                    "trial {trial}: sample {n} (latency {latency}, shift {shift}, skew {skew})"
                );
            }
            assert_eq!(link.delay_samples() as i64, d);
        }
    }
}
