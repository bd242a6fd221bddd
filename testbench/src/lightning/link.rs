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

use std::collections::VecDeque;

use super::arith::SAMPLES_PER_CYCLE;
use super::photonic::PhotonicCore;

/// One bus word: 16 samples, sample 0 first.
pub type Word = [u16; SAMPLES_PER_CYCLE];

/// A photonic core between DAC 0 (activations), DAC 1 (weights) and the ADC.
pub struct PhotonicLink<C: PhotonicCore> {
    core: C,
    line: VecDeque<u16>,
    /// Samples (value, lit) on their way to the activation modulator.
    act_line: VecDeque<(u16, bool)>,
    /// Samples (value, lit) on their way to the weight modulator.
    weight_line: VecDeque<(u16, bool)>,
}

impl<C: PhotonicCore> PhotonicLink<C> {
    /// A link with `latency` whole cycles and `shift` samples (any `shift`; 16 or
    /// more samples add whole cycles).
    pub fn new(core: C, latency: usize, shift: usize) -> Self {
        Self::with_skew(core, latency, shift, 0)
    }

    /// A link whose weight modulator sees its DAC's samples `skew` samples later
    /// than the activation modulator sees its DAC's (negative: earlier): the
    /// modulators' path mismatch a calibration measures. A sample of the two
    /// modulators is lit (and the core called) if either DAC sample was lit.
    pub fn with_skew(core: C, latency: usize, shift: usize, skew: i64) -> Self {
        let dark = |n: i64| VecDeque::from(vec![(0, false); n.max(0) as usize]);
        PhotonicLink {
            core,
            line: VecDeque::from(vec![0; SAMPLES_PER_CYCLE * latency + shift]),
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
        for (a, w) in activations.iter().zip(weights) {
            self.act_line.push_back((*a, lit));
            self.weight_line.push_back((*w, lit));
            let (a, a_lit) = self.act_line.pop_front().unwrap_or((0, false));
            let (w, w_lit) = self.weight_line.pop_front().unwrap_or((0, false));
            let s = if a_lit || w_lit {
                self.core.transmit(a, w)
            } else {
                0
            };
            self.line.push_back(s);
        }
        std::array::from_fn(|_| self.line.pop_front().unwrap_or(0))
    }

    /// The core (e.g. to read its noise parameters).
    pub fn core(&self) -> &C {
        &self.core
    }
}
