//! Golden integer inference of a fully connected network on the Lightning
//! datapath, exactly per [`super::arith`], through a [`PhotonicCore`].
//!
//! With [`IdealCore`] (noise 0, no loss) and [`OpticalLoss::UNITY`] the result is
//! the bit-exact answer the hardware must give: every hidden activation and every
//! logit. With a [`super::photonic::NoisyCore`] it gives the statistics of a noisy
//! testbed; the core is called once per sample in the order layer, output neuron,
//! cycle, lane 0..16 (padding lanes included), so a seed fixes the outcome.

use rand::Rng;
use thiserror::Error;

use super::arith::released_rtl::{self, LossGain};
use super::arith::{
    self, check_shift, cycles_per_output, decode_adc, encode_sample, normalize, relu, AccWidth,
    ArithError, Contract, OpticalLoss, Weight, SAMPLES_PER_CYCLE,
};
use super::photonic::{IdealCore, PhotonicCore};

/// A network or input that does not fit the datapath.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum GoldenError {
    /// A parameter outside the arithmetic contract.
    #[error(transparent)]
    Arith(#[from] ArithError),
    /// A layer with no output neurons.
    #[error("layer has no output neurons")]
    NoOutputs,
    /// A weight row whose length differs from the first row's.
    #[error("weight row {row} has {len} weights, but row 0 has {expected}")]
    RaggedRow {
        /// Index of the offending output neuron.
        row: usize,
        /// Its number of weights.
        len: usize,
        /// Number of weights in row 0.
        expected: usize,
    },
    /// A network with no layers.
    #[error("network has no layers")]
    NoLayers,
    /// Consecutive layers whose sizes do not chain.
    #[error("layer {layer} has {inputs} inputs, but layer {} has {previous_outputs} outputs", layer - 1)]
    LayerMismatch {
        /// Index of the layer whose inputs do not match.
        layer: usize,
        /// Its number of inputs.
        inputs: usize,
        /// Outputs of the layer before it.
        previous_outputs: usize,
    },
    /// An input vector of the wrong length.
    #[error("input has {got} values, but the network takes {expected}")]
    InputLength {
        /// The network's number of inputs.
        expected: usize,
        /// The input's length.
        got: usize,
    },
    /// Images and labels of different counts.
    #[error("{images} images but {labels} labels")]
    LabelCount {
        /// Number of images.
        images: usize,
        /// Number of labels.
        labels: usize,
    },
}

/// How a layer maps onto 16-sample cycles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LayerShape {
    /// Inputs per output neuron.
    pub inputs: usize,
    /// Output neurons.
    pub outputs: usize,
    /// `ceil(inputs / 16)`: cycles to compute one output neuron.
    pub cycles_per_output: usize,
    /// Inputs after zero padding to a multiple of 16.
    pub padded_inputs: usize,
    /// `outputs × cycles_per_output`: DAC cycles of the whole layer on one core.
    pub compute_cycles: usize,
}

/// One fully connected layer: a weight per (output neuron, input) and the
/// normalization shift applied after ReLU (unused on the last layer, whose
/// accumulators are the logits).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layer {
    weights: Vec<Vec<Weight>>,
    shift: u32,
}

impl Layer {
    /// A layer from `weights[output][input]`; rows must have equal, non-zero length.
    pub fn new(weights: Vec<Vec<Weight>>, shift: u32) -> Result<Layer, GoldenError> {
        check_shift(shift)?;
        let expected = weights.first().ok_or(GoldenError::NoOutputs)?.len();
        cycles_per_output(expected)?;
        if let Some((row, r)) = weights
            .iter()
            .enumerate()
            .find(|(_, r)| r.len() != expected)
        {
            return Err(GoldenError::RaggedRow {
                row,
                len: r.len(),
                expected,
            });
        }
        Ok(Layer { weights, shift })
    }

    /// A layer from signed weights in −255..=255.
    pub fn from_signed(weights: &[Vec<i32>], shift: u32) -> Result<Layer, GoldenError> {
        let rows = weights
            .iter()
            .map(|row| row.iter().map(|&w| Weight::from_signed(w)).collect())
            .collect::<Result<Vec<Vec<Weight>>, ArithError>>()?;
        Layer::new(rows, shift)
    }

    /// `weights[output][input]`.
    pub fn weights(&self) -> &[Vec<Weight>] {
        &self.weights
    }

    /// Normalization shift `k` (activation = `clamp(relu(acc) >> k, 0, 255)`).
    pub fn shift(&self) -> u32 {
        self.shift
    }

    /// Number of inputs.
    pub fn inputs(&self) -> usize {
        self.weights[0].len()
    }

    /// Number of output neurons.
    pub fn outputs(&self) -> usize {
        self.weights.len()
    }

    /// The layer's timing shape.
    pub fn shape(&self) -> LayerShape {
        let inputs = self.inputs();
        let cycles = inputs.div_ceil(SAMPLES_PER_CYCLE);
        LayerShape {
            inputs,
            outputs: self.outputs(),
            cycles_per_output: cycles,
            padded_inputs: cycles * SAMPLES_PER_CYCLE,
            compute_cycles: cycles * self.outputs(),
        }
    }
}

/// A chain of fully connected layers: hidden layers with ReLU and normalization,
/// the last one emitting logits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Network {
    layers: Vec<Layer>,
}

impl Network {
    /// A network whose layer sizes chain (each layer's inputs = the previous outputs).
    pub fn new(layers: Vec<Layer>) -> Result<Network, GoldenError> {
        if layers.is_empty() {
            return Err(GoldenError::NoLayers);
        }
        for (i, pair) in layers.windows(2).enumerate() {
            if pair[1].inputs() != pair[0].outputs() {
                return Err(GoldenError::LayerMismatch {
                    layer: i + 1,
                    inputs: pair[1].inputs(),
                    previous_outputs: pair[0].outputs(),
                });
            }
        }
        Ok(Network { layers })
    }

    /// A network of the given sizes (e.g. `[784, 300, 100, 10]`) with weights
    /// drawn uniformly from −255..=255 and the given shifts (one per layer).
    pub fn random(
        sizes: &[usize],
        shifts: &[u32],
        rng: &mut impl Rng,
    ) -> Result<Network, GoldenError> {
        let layers = sizes
            .windows(2)
            .zip(shifts.iter().chain(std::iter::repeat(&0)))
            .map(|(pair, &shift)| {
                let rows = (0..pair[1])
                    .map(|_| (0..pair[0]).map(|_| rng.gen_range(-255..=255)).collect())
                    .collect::<Vec<Vec<i32>>>();
                Layer::from_signed(&rows, shift)
            })
            .collect::<Result<Vec<Layer>, GoldenError>>()?;
        Network::new(layers)
    }

    /// The layers, input side first.
    pub fn layers(&self) -> &[Layer] {
        &self.layers
    }

    /// Number of inputs of the first layer.
    pub fn inputs(&self) -> usize {
        self.layers[0].inputs()
    }

    /// Number of logits.
    pub fn outputs(&self) -> usize {
        self.layers[self.layers.len() - 1].outputs()
    }

    /// The timing shape of every layer.
    pub fn shapes(&self) -> Vec<LayerShape> {
        self.layers.iter().map(Layer::shape).collect()
    }
}

/// The digital datapath's run-time parameters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DatapathConfig {
    /// Accumulator width (generator parameter).
    pub acc_width: AccWidth,
    /// The `optical_loss` compensation register.
    pub optical_loss: OpticalLoss,
}

/// The outcome of one inference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inference {
    /// The 8-bit outputs of every hidden layer, in order (the next layer's inputs).
    pub activations: Vec<Vec<u8>>,
    /// The last layer's accumulators (signed, before any normalization).
    pub logits: Vec<i64>,
    /// Number of accumulation steps that saturated, over all layers (wirespeed).
    pub saturations: u64,
    /// Number of accumulation steps that wrapped, over all layers (released RTL).
    pub wraps: u64,
    /// Hidden layers normalized by a left shift (released RTL).
    pub left_shifts: u64,
}

impl Inference {
    /// The predicted class: the first index of the largest logit.
    pub fn prediction(&self) -> usize {
        arith::argmax(&self.logits).unwrap_or(0)
    }
}

/// The lane sums of one output neuron, one per cycle: per lane, the core's ADC
/// sample for (activation, weight magnitude), loss compensation, bits `[14:7]`,
/// sign; inputs zero-padded to a multiple of 16. `weights` and `activations` must
/// have the same length.
pub fn lane_sums(
    weights: &[Weight],
    activations: &[u8],
    loss: OpticalLoss,
    core: &mut impl PhotonicCore,
) -> Vec<i64> {
    let cycles = weights.len().div_ceil(SAMPLES_PER_CYCLE);
    (0..cycles)
        .map(|c| {
            (0..SAMPLES_PER_CYCLE)
                .map(|lane| {
                    let j = c * SAMPLES_PER_CYCLE + lane;
                    let a = activations.get(j).copied().unwrap_or(0);
                    let w = weights.get(j).copied().unwrap_or(Weight::ZERO);
                    let sample = core.transmit(encode_sample(a), encode_sample(w.magnitude));
                    arith::signed_term(decode_adc(sample, loss), w.negative)
                })
                .sum()
        })
        .collect()
}

/// Accumulates lane sums one cycle at a time into a saturating accumulator that
/// starts at 0; returns the final value and the number of saturated steps.
pub fn accumulate(lane_sums: &[i64], acc_width: AccWidth) -> (i64, u64) {
    lane_sums.iter().fold((0, 0), |(acc, sat), &x| {
        let (next, clamped) = acc_width.saturating_add(acc, x);
        (next, sat + u64::from(clamped))
    })
}

/// Noise-free, lossless inference: the bit-exact answer of the hardware.
pub fn infer(
    network: &Network,
    input: &[u8],
    config: &DatapathConfig,
) -> Result<Inference, GoldenError> {
    infer_with_core(network, input, config, &mut IdealCore)
}

/// Inference through a given photonic core (e.g. a seeded noisy one).
pub fn infer_with_core(
    network: &Network,
    input: &[u8],
    config: &DatapathConfig,
    core: &mut impl PhotonicCore,
) -> Result<Inference, GoldenError> {
    if input.len() != network.inputs() {
        return Err(GoldenError::InputLength {
            expected: network.inputs(),
            got: input.len(),
        });
    }
    let (last, hidden) = network.layers.split_last().ok_or(GoldenError::NoLayers)?;
    let mut saturations = 0;
    let mut layer_accs = |layer: &Layer, acts: &[u8]| -> Vec<i64> {
        layer
            .weights
            .iter()
            .map(|row| {
                let sums = lane_sums(row, acts, config.optical_loss, core);
                let (acc, sat) = accumulate(&sums, config.acc_width);
                saturations += sat;
                acc
            })
            .collect()
    };
    let mut activations: Vec<Vec<u8>> = Vec::with_capacity(hidden.len());
    for layer in hidden {
        let acts = activations.last().map_or(input, Vec::as_slice);
        let next = layer_accs(layer, acts)
            .into_iter()
            .map(|acc| normalize(relu(acc), layer.shift))
            .collect();
        activations.push(next);
    }
    let logits = layer_accs(last, activations.last().map_or(input, Vec::as_slice));
    Ok(Inference {
        activations,
        logits,
        saturations,
        wraps: 0,
        left_shifts: 0,
    })
}

/// An arithmetic contract with its run-time parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContractConfig {
    /// wirespeed's contract.
    Wirespeed(DatapathConfig),
    /// The released RTL's, with the `optical_loss` register as its integer gain.
    ReleasedRtl(LossGain),
}

impl ContractConfig {
    /// The contract's noise-free, lossless configuration (`acc_width` for
    /// wirespeed's; the released RTL's is 16 bits).
    pub fn exact(contract: Contract, acc_width: AccWidth) -> ContractConfig {
        match contract {
            Contract::Wirespeed => ContractConfig::Wirespeed(DatapathConfig {
                acc_width,
                optical_loss: OpticalLoss::UNITY,
            }),
            Contract::ReleasedRtl => ContractConfig::ReleasedRtl(LossGain::UNITY),
        }
    }
}

/// Noise-free inference under either contract: the bit-exact answer.
pub fn infer_as(
    network: &Network,
    input: &[u8],
    contract: &ContractConfig,
) -> Result<Inference, GoldenError> {
    match contract {
        ContractConfig::Wirespeed(cfg) => infer(network, input, cfg),
        ContractConfig::ReleasedRtl(gain) => {
            infer_released_rtl(network, input, *gain, &mut IdealCore)
        }
    }
}

/// Inference under the released RTL's contract ([`released_rtl`]) through a
/// photonic core, called in the same order as [`infer_with_core`].
pub fn infer_released_rtl(
    network: &Network,
    input: &[u8],
    gain: LossGain,
    core: &mut impl PhotonicCore,
) -> Result<Inference, GoldenError> {
    if input.len() != network.inputs() {
        return Err(GoldenError::InputLength {
            expected: network.inputs(),
            got: input.len(),
        });
    }
    let (last, hidden) = network.layers.split_last().ok_or(GoldenError::NoLayers)?;
    let mut wraps = 0;
    let mut layer_accs = |layer: &Layer, acts: &[u8]| -> Vec<u16> {
        layer
            .weights
            .iter()
            .map(|row| {
                let sums = released_lane_sums(row, acts, gain, core);
                let (acc, w) = released_rtl::accumulate(&sums);
                wraps += w;
                acc
            })
            .collect()
    };
    let mut activations: Vec<Vec<u8>> = Vec::with_capacity(hidden.len());
    let mut left_shifts = 0;
    for layer in hidden {
        let acts = activations.last().map_or(input, Vec::as_slice);
        let values: Vec<u16> = layer_accs(layer, acts)
            .into_iter()
            .map(released_rtl::relu)
            .collect();
        let (next, shift) = released_rtl::normalize_layer(&values);
        left_shifts += u64::from(matches!(shift, Some(released_rtl::Shift::Left(_))));
        activations.push(next);
    }
    let logits = layer_accs(last, activations.last().map_or(input, Vec::as_slice))
        .into_iter()
        .map(released_rtl::logit)
        .collect();
    Ok(Inference {
        activations,
        logits,
        saturations: 0,
        wraps,
        left_shifts,
    })
}

/// The released RTL's lane sums of one output neuron (modulo 2^16): per lane,
/// the core's ADC sample, bits `[14:7]`, times the integer gain, sign bit 1 =
/// positive (a weight ≥ 0).
pub fn released_lane_sums(
    weights: &[Weight],
    activations: &[u8],
    gain: LossGain,
    core: &mut impl PhotonicCore,
) -> Vec<u16> {
    let cycles = weights.len().div_ceil(SAMPLES_PER_CYCLE);
    (0..cycles)
        .map(|c| {
            let mut gained = [0u16; SAMPLES_PER_CYCLE];
            let mut sign_bits = [false; SAMPLES_PER_CYCLE];
            for lane in 0..SAMPLES_PER_CYCLE {
                let j = c * SAMPLES_PER_CYCLE + lane;
                let a = activations.get(j).copied().unwrap_or(0);
                let w = weights.get(j).copied().unwrap_or(Weight::ZERO);
                let sample = core.transmit(encode_sample(a), encode_sample(w.magnitude));
                gained[lane] = gain.apply(arith::decode_sample(sample));
                sign_bits[lane] = !w.negative;
            }
            released_rtl::lane_sum(&gained, &sign_bits)
        })
        .collect()
}

/// Accuracy of a network over a labelled set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Accuracy {
    /// Every image's predicted class.
    pub predictions: Vec<usize>,
    /// Number of correct predictions.
    pub correct: usize,
}

impl Accuracy {
    /// Fraction correct, 0.0..=1.0 (0 for an empty set).
    pub fn fraction(&self) -> f64 {
        if self.predictions.is_empty() {
            0.0
        } else {
            self.correct as f64 / self.predictions.len() as f64
        }
    }
}

/// Runs every image through `core` and compares the predictions with `labels`.
pub fn evaluate(
    network: &Network,
    images: &[Vec<u8>],
    labels: &[u8],
    config: &DatapathConfig,
    core: &mut impl PhotonicCore,
) -> Result<Accuracy, GoldenError> {
    if images.len() != labels.len() {
        return Err(GoldenError::LabelCount {
            images: images.len(),
            labels: labels.len(),
        });
    }
    let predictions = images
        .iter()
        .map(|img| infer_with_core(network, img, config, core).map(|r| r.prediction()))
        .collect::<Result<Vec<usize>, GoldenError>>()?;
    let correct = predictions
        .iter()
        .zip(labels)
        .filter(|(&p, &l)| p == usize::from(l))
        .count();
    Ok(Accuracy {
        predictions,
        correct,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ragged_and_mismatched_shapes_are_errors() {
        let ragged = Layer::from_signed(&[vec![1, 2], vec![3]], 0);
        assert_eq!(
            ragged,
            Err(GoldenError::RaggedRow {
                row: 1,
                len: 1,
                expected: 2
            })
        );
        let a = Layer::from_signed(&vec![vec![1, 2]; 3], 0).expect("valid layer");
        let b = Layer::from_signed(&vec![vec![1, 2]; 4], 0).expect("valid layer");
        let err = Network::new(vec![a, b]).expect_err("3 outputs feed 2 inputs");
        assert_eq!(
            err.to_string(),
            "layer 1 has 2 inputs, but layer 0 has 3 outputs"
        );
        assert!(Layer::from_signed(&[vec![256]], 0).is_err());
        assert!(Layer::from_signed(&[vec![1]], 32).is_err());
    }
}
