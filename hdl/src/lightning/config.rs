//! The generator parameters of a Lightning datapath: layer sizes, accumulator
//! width, per-layer normalization shifts, the quantized weights and the number of
//! photonic cores, validated with errors that name the parameter; and the shapes
//! derived from them (cycles per output neuron, rounds and DAC beats per layer,
//! each core's weight words).
//!
//! # Cores
//!
//! With `cores` = C, output neuron *o* of every layer belongs to core *o* mod C:
//! in *round* *r* core *c* computes neuron *r* · C + *c*, so one round produces C
//! consecutive neurons. All cores stream in lock-step (the same activation word,
//! each its own weight word), so a layer takes `rounds` = ⌈outputs / C⌉ rounds of
//! `cycles_per_output` beats. In the last round of a layer whose outputs are not a
//! multiple of C, the cores without a neuron stream zero weights and their result
//! is discarded.

use super::decode::{ACC_WIDTH_MAX, ACC_WIDTH_MIN};
use crate::bits::Bits;
use crate::ir::HdlError;

/// Module name used in parameter errors.
const NAME: &str = "lightning_datapath";
/// Largest normalization shift (5-bit field).
pub const SHIFT_MAX: u32 = 31;
/// Largest number of weight words (16 weights each) the on-chip memory may hold.
pub const MAX_WEIGHT_WORDS: usize = 1 << 20;
/// Largest magnitude of a quantized weight.
pub const WEIGHT_MAX: i32 = 255;
/// Largest number of photonic cores (16 DAC and 8 ADC streams).
pub const MAX_CORES: u32 = 8;

/// Where the weights come from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum WeightSource {
    /// On-chip memories initialised from the configuration's weights.
    #[default]
    Memory,
    /// One AXI-Stream slave port per core (`w{c}_tvalid`, `w{c}_tready`,
    /// `w{c}_tdata[144]`: bits `[127:0]` the 16 magnitudes, byte *i* = lane *i*;
    /// bits `[143:128]` the 16 sign bits), fed in the order of
    /// [`DatapathConfig::weight_words`].
    Stream,
}

/// The arithmetic contract of decode, preamble mean and normalization (spec:
/// "Calibration and arithmetic contracts"; `testbench::lightning::arith` is its
/// golden model).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Arith {
    /// wirespeed's: Q8.8 loss compensation of the 16-bit sample (rounded,
    /// saturating), sign bit 1 = subtract, a saturating `acc_width`-bit
    /// accumulator, ReLU and a fixed per-layer right shift (`shifts`), and an
    /// exact preamble mean.
    #[default]
    Wirespeed,
    /// The authors' released RTL (`lenet_single_core.v`): integer loss gain on
    /// the extracted 8-bit product, sign bit 1 = positive, a 16-bit wrapping
    /// accumulator with ReLU on bit 15, a data-dependent power-of-two
    /// normalization per layer (the largest value's top bit to bit 7, left
    /// shifts included; `shifts` unused), and a preamble mean that halves at
    /// each of four adder stages, truncating.
    ReleasedRtl,
}

impl Arith {
    /// Every contract, in the order of [`Arith::name`]s a user can give.
    pub const ALL: [Arith; 2] = [Arith::Wirespeed, Arith::ReleasedRtl];

    /// The contract's name on the command line: `wirespeed` or `released-rtl`.
    pub fn name(self) -> &'static str {
        match self {
            Arith::Wirespeed => "wirespeed",
            Arith::ReleasedRtl => "released-rtl",
        }
    }

    /// The accumulator width the contract fixes, if any (released RTL: 16).
    pub fn fixed_acc_width(self) -> Option<u32> {
        match self {
            Arith::Wirespeed => None,
            Arith::ReleasedRtl => Some(RELEASED_RTL_ACC_WIDTH),
        }
    }

    /// The `optical_loss` register value that leaves samples unchanged: 1.0 in
    /// Q8.8 (`0x0100`) for wirespeed, gain 1 for the released RTL.
    pub fn unity_loss(self) -> u16 {
        match self {
            Arith::Wirespeed => 0x0100,
            Arith::ReleasedRtl => 1,
        }
    }
}

/// The released RTL's accumulator width.
pub const RELEASED_RTL_ACC_WIDTH: u32 = 16;

/// A Lightning datapath: a fully connected network on `cores` photonic cores.
///
/// Weight layer `l` maps `layers[l]` inputs to `layers[l + 1]` outputs; its
/// weights are `weights[l][o * layers[l] + i]` (output `o`, input `i`) in
/// −255..=255, streamed as an 8-bit magnitude to DAC 1 and a sign bit applied after
/// the ADC. Hidden layers apply ReLU and `>> shifts[l]`, clamped to 8 bits; the
/// last layer's accumulators are the logits (its shift is unused).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DatapathConfig {
    /// Layer sizes, input first (e.g. 784, 300, 100, 10): at least two.
    pub layers: Vec<u32>,
    /// Accumulator width in bits (13..=48).
    pub acc_width: u32,
    /// Normalization shift per weight layer (0..=31), `layers.len() - 1` of them.
    pub shifts: Vec<u32>,
    /// Weights per weight layer, row-major `[output][input]`.
    pub weights: Vec<Vec<i32>>,
    /// Photonic cores (1..=8, at most the outputs of the smallest layer); see the
    /// module docs for how neurons are divided among them.
    pub cores: u32,
    /// The weight source: on-chip memory or a stream per core. With a stream the
    /// weights still size the network and the memory limit does not apply.
    pub weight_source: WeightSource,
    /// The arithmetic contract ([`Arith::ReleasedRtl`] needs `acc_width` 16).
    pub arith: Arith,
}

impl DatapathConfig {
    /// Checks every parameter; the error names the first bad one and why.
    pub fn validate(&self) -> Result<(), HdlError> {
        let err = |p: &str, why: String| Err(HdlError::parameter(NAME, p, why));
        if !(1..=MAX_CORES).contains(&self.cores) {
            return err("cores", format!("{} is not in 1..={MAX_CORES}", self.cores));
        }
        if self.layers.len() < 2 {
            return err(
                "layers",
                format!(
                    "{} sizes given: need the input size and at least one layer",
                    self.layers.len()
                ),
            );
        }
        if let Some(i) = self.layers.iter().position(|&n| n == 0) {
            return err(
                "layers",
                format!("size {i} is 0: every layer needs a neuron"),
            );
        }
        if !(ACC_WIDTH_MIN..=ACC_WIDTH_MAX).contains(&self.acc_width) {
            return err(
                "acc_width",
                format!(
                    "{} is not in {ACC_WIDTH_MIN}..={ACC_WIDTH_MAX} (a lane sum needs 13 bits)",
                    self.acc_width
                ),
            );
        }
        if let Some(w) = self
            .arith
            .fixed_acc_width()
            .filter(|&w| w != self.acc_width)
        {
            return err(
                "acc_width",
                format!(
                    "{} bits, but arith {} uses the released RTL's {w}-bit wrapping accumulator",
                    self.acc_width,
                    self.arith.name()
                ),
            );
        }
        if let Some((l, &o)) = self.layers[1..]
            .iter()
            .enumerate()
            .find(|(_, &o)| o < self.cores)
        {
            return err(
                "cores",
                format!(
                    "{} cores but layer {l} has only {o} outputs: every core needs a neuron in every layer",
                    self.cores
                ),
            );
        }
        let n = self.layers.len() - 1;
        if self.shifts.len() != n {
            return err(
                "shifts",
                format!("{} shifts given for {n} weight layers", self.shifts.len()),
            );
        }
        if let Some((l, s)) = self.shifts.iter().enumerate().find(|(_, &s)| s > SHIFT_MAX) {
            return err(
                "shifts",
                format!("layer {l}: shift {s} is not in 0..={SHIFT_MAX}"),
            );
        }
        if self.weights.len() != n {
            return err(
                "weights",
                format!("{} weight layers given for {n} layers", self.weights.len()),
            );
        }
        for (l, w) in self.weights.iter().enumerate() {
            let want = self.layers[l] as usize * self.layers[l + 1] as usize;
            if w.len() != want {
                return err(
                    "weights",
                    format!(
                        "layer {l} has {} weights, {} x {} needs {want}",
                        w.len(),
                        self.layers[l + 1],
                        self.layers[l]
                    ),
                );
            }
            if let Some(i) = w.iter().position(|v| v.abs() > WEIGHT_MAX) {
                return err(
                    "weights",
                    format!("layer {l} weight {i} is {}: not in -255..=255", w[i]),
                );
            }
        }
        let total: usize = (0..n).map(|l| self.beats(l) as usize).sum();
        if total > MAX_WEIGHT_WORDS && self.weight_source == WeightSource::Memory {
            return err(
                "weights",
                format!(
                    "{total} weight words per core exceed the on-chip limit of {MAX_WEIGHT_WORDS}"
                ),
            );
        }
        Ok(())
    }

    /// Number of weight layers.
    pub fn weight_layers(&self) -> usize {
        self.layers.len().saturating_sub(1)
    }

    /// Cycles per output neuron of weight layer `l`: `ceil(inputs / 16)`.
    pub fn cycles_per_output(&self, l: usize) -> u32 {
        self.layers[l].div_ceil(16)
    }

    /// Rounds of weight layer `l`: ⌈outputs / cores⌉ (one neuron per core each).
    pub fn rounds(&self, l: usize) -> u32 {
        self.layers[l + 1].div_ceil(self.cores.max(1))
    }

    /// DAC beats of weight layer `l` (every core streams the same number):
    /// rounds × cycles per output.
    pub fn beats(&self, l: usize) -> u32 {
        self.rounds(l) * self.cycles_per_output(l)
    }

    /// Core `core`'s weight words in streaming order (layer, round, cycle): 16
    /// magnitudes (byte *i* = lane *i*) and 16 sign bits of neuron
    /// round · cores + `core` in the contract's convention (wirespeed: 1 =
    /// negative; released RTL: 1 = positive, zero counted positive); padding
    /// lanes, and the words of a neuron past the layer's outputs, have
    /// magnitude 0 and sign bit 0.
    pub fn weight_words(&self, core: u32) -> (Vec<Bits>, Vec<Bits>) {
        let mut magnitudes = Vec::new();
        let mut signs = Vec::new();
        let cores = self.cores.max(1) as usize;
        for (l, w) in self.weights.iter().enumerate() {
            let inputs = self.layers[l] as usize;
            let outputs = self.layers[l + 1] as usize;
            for r in 0..self.rounds(l) as usize {
                let o = r * cores + core as usize;
                for c in 0..self.cycles_per_output(l) as usize {
                    let mut mag = 0u128;
                    let mut sign = 0u64;
                    for lane in 0..16 {
                        let i = c * 16 + lane;
                        if i < inputs && o < outputs {
                            let v = w[o * inputs + i];
                            mag |= u128::from(v.unsigned_abs() as u8) << (8 * lane);
                            let bit = match self.arith {
                                Arith::Wirespeed => v < 0,
                                Arith::ReleasedRtl => v >= 0,
                            };
                            sign |= u64::from(bit) << lane;
                        }
                    }
                    magnitudes.push(word128(mag));
                    signs.push(Bits::from_words(&[sign], 16));
                }
            }
        }
        (magnitudes, signs)
    }
}

/// A 128-bit `Bits` from a `u128`.
fn word128(v: u128) -> Bits {
    Bits::from_words(&[v as u64, (v >> 64) as u64], 128)
}
