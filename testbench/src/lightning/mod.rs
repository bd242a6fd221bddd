//! Golden model of the Lightning photonic-SmartNIC datapath (spec:
//! `shared/docs/LIGHTNING.md`): the integer arithmetic the hardware must match
//! bit for bit, and a real workload to run through it.
//!
//! - [`arith`]: the arithmetic contract — sample format, loss compensation,
//!   sign, lane sums, saturating accumulation, ReLU, normalization, timing shape.
//! - [`answer`]: the class and the fixed-point log-softmax of the logits, bit
//!   for bit as `hdl::lightning::answer` computes them.
//! - [`photonic`]: the photonic core as data — product, noise and loss — shared
//!   with the `sim` peripheral; [`noise`]: its noise drawn as an integer offset
//!   from one random word.
//! - [`golden`]: integer inference of a network, exact or through a noisy core,
//!   and accuracy over a labelled set.
//! - [`model_files`]: loading the shipped digits MLP and its test subset
//!   (`testbench/data/lightning/`, made by `scripts/train_lightning_mlp.py`);
//! - [`link`]: the photonic core as a cycle-level peripheral (latency, sample
//!   shift) between the DAC outputs and the ADC input;
//! - [`closed_loop`]: a generated datapath on any engine in a closed loop with
//!   a [`link::PhotonicLink`], one image at a time;
//! - [`test_set`]: a workload's test images through the closed loop on one
//!   engine or both, with and without noise, checked against the golden model;
//! - [`top_bench`]: the board top (`hdl::lightning::top`) driven only through
//!   AXI-Lite, with the link between its DAC and ADC streams;
//! - [`impaired`]: a workload's test images through the board top over links
//!   with modulator skew and optical loss, with or without the top's
//!   self-calibration, checked against the golden model.
//! - [`mutants`], [`top_mutants`]: the checks a mutated datapath and a mutated
//!   board top face in a mutation campaign ([`crate::mutation`]).

pub mod answer;
pub mod arith;
pub mod closed_loop;
pub mod golden;
pub mod impaired;
pub mod link;
pub mod loop_pins;
pub mod model_files;
pub mod mutants;
pub mod noise;
pub mod photonic;
pub mod test_set;
pub mod top_bench;
pub mod top_mutants;
pub mod top_pins;
