//! Lightning: the count-action datapath of a photonic-electronic SmartNIC (DAC
//! streamers, photonic multiply timing, ADC decode), built from `hdl::blocks` blocks.
//! Spec: `shared/docs/LIGHTNING.md`.
//!
//! - [`bus`]: the 16 × 16-bit sample bus and the preamble patterns;
//! - [`align`]: per-stream operand alignment (whole-cycle delay, sample shift);
//! - [`streamer`]: the synchronized DAC streamer with preamble insertion, built on
//!   two count-action units and one aligner per stream;
//! - [`preamble_detector`]: the ADC-side preamble lock, rotation and window, with a
//!   count-action run counter and a count-action timeout;
//! - [`decode`]: ADC decode and integration (loss compensation, sign, lane adder
//!   tree, saturating accumulator, count-action integration window, ReLU and
//!   normalization);
//! - [`config`]: the datapath's generator parameters, validated;
//! - [`datapath`]: the whole datapath on 1–8 photonic cores (memories, streamer,
//!   per-core detector and decode, the cores' join, count-action control plane,
//!   counters, failure reasons);
//! - [`weights`]: the weights file (`weights.json`) the generator reads, and the
//!   datapath configuration it makes;
//! - [`answer`]: the answer a host wants from the logits: the class (argmax)
//!   and a fixed-point log-softmax with a run-time temperature;
//! - [`top`]: the board top: RF Data Converter AXI-Stream ports, DAC/ADC/AXI-Lite
//!   clock domains, and the AXI-Lite register map ([`top_regs`]).

pub mod align;
pub mod answer;
pub mod bus;
pub mod calibrate;
pub mod config;
pub mod datapath;
pub mod decode;
pub mod preamble_detector;
pub mod streamer;
pub mod top;
pub mod top_regs;
pub mod weights;
