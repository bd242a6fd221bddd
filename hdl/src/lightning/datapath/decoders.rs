//! Decode: one [`decode`](crate::lightning::decode::decode) instance per core on
//! its accepted words, all in lock-step, each with its own loss compensation
//! input `optical_loss{c}`.

use super::join::Accepted;
use super::sequencer::Sequencer;
use super::Common;
use crate::dsl::{ModuleBuilder, Signal};
use crate::lightning::config::Arith;
use crate::lightning::decode::LOSS_WIDTH;

/// What the decoders are made from.
pub(super) struct DecodersIn<'a> {
    /// What every stage shares.
    pub common: &'a Common<'a>,
    /// The sequencer.
    pub seq: &'a Sequencer,
    /// The accepted words.
    pub accepted: &'a Accepted,
}

/// The cores' emitted neurons.
pub(super) struct Decoded {
    /// Every core emits a neuron in this cycle (core 0's strobe: all decoders
    /// run in lock-step).
    pub out_valid: Signal,
    /// Per core, the neuron's signed accumulator (a logit).
    pub accs: Vec<Signal>,
    /// Per core, the neuron's activation (hidden layers): 8 bits (wirespeed) or
    /// the 16-bit ReLU output (released RTL).
    pub acts: Vec<Signal>,
}

/// One decoder per core, cleared at every layer's `go`.
pub(super) fn decoders(m: &mut ModuleBuilder, input: &DecodersIn) -> Decoded {
    let x = input.common;
    let (clk, seq, acc) = (x.clk, input.seq, input.accepted);
    let mut valids = Vec::new();
    let mut accs = Vec::new();
    let mut acts = Vec::new();
    for (c, (&sign_word, &data)) in acc.signs.iter().zip(&acc.buses).enumerate() {
        let loss = m.input(&format!("optical_loss{c}"), LOSS_WIDTH);
        let dec = m.instance(&format!("u_decode{c}"), &x.units.decode);
        m.bind_domain(dec, "clk", clk);
        m.connect(dec, "in_valid", acc.in_valid);
        m.connect(dec, "in_data", data);
        m.connect(dec, "signs", sign_word);
        m.connect(dec, "optical_loss", loss);
        m.connect(dec, "cycles_per_output", seq.constants.cpo);
        if x.cfg.arith == Arith::Wirespeed {
            m.connect(dec, "shift", seq.constants.shift);
        }
        m.connect(dec, "clear", seq.go);
        valids.push(m.instance_output(dec, "out_valid"));
        accs.push(m.instance_output(dec, "out_acc"));
        acts.push(m.instance_output(dec, "out_act"));
    }
    Decoded {
        out_valid: valids[0],
        accs,
        acts,
    }
}
