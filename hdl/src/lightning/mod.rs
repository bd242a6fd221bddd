//! Lightning: the count-action datapath of a photonic-electronic SmartNIC (DAC
//! streamers, photonic multiply timing, ADC decode), built from `hdl::std` blocks.
//! Spec: `shared/docs/LIGHTNING.md`.
