//! The sequencer: the layer index and its per-layer constants, the busy/go/done
//! state, and its transitions (next layer, done, a failure ends the inference).

use super::{Common, FAIL_REASON_WIDTH};
use crate::dsl::{ModuleBuilder, Signal};
use crate::lightning::decode::NORM_SHIFT_WIDTH;

/// What the sequencer's state is made from.
pub(super) struct SequencerIn<'a> {
    /// What every stage shares.
    pub common: &'a Common<'a>,
    /// The `start` input.
    pub start: Signal,
}

/// Generator constants of the current layer, selected by the layer index.
pub(super) struct LayerConstants {
    /// Cycles (beats) per output neuron.
    pub cpo: Signal,
    /// DAC beats of the layer.
    pub beats: Signal,
    /// Rounds of the layer.
    pub rounds: Signal,
    /// Output neurons of the layer.
    pub outputs: Signal,
    /// Normalization shift of the layer.
    pub shift: Signal,
    /// The layer is the last one.
    pub is_last: Signal,
    /// The activation bank the layer reads ([`bank_read_by`]).
    pub read_bank: Signal,
    /// The activation bank a hidden layer writes: the one the next layer reads.
    pub write_bank: Signal,
}

/// The activation bank weight layer `layer` reads: the image in bank 0 for
/// layer 0, then banks 1 and 2 in turn (with a single hidden layer, bank 1
/// only). Bank 0 is written only by image loads.
pub(super) fn bank_read_by(layer: usize) -> u64 {
    match layer {
        0 => 0,
        l => 1 + (l as u64 - 1) % 2,
    }
}

/// The sequencer's registers and the strobes derived from them.
pub(super) struct Sequencer {
    /// The layer index register.
    pub layer: Signal,
    /// The current layer's constants.
    pub constants: LayerConstants,
    /// An inference runs.
    pub busy: Signal,
    /// First cycle of a layer.
    pub go: Signal,
    /// The `done` status register.
    pub done: Signal,
    /// The `failed` status register.
    pub failed: Signal,
    /// The `fail_reason` register.
    pub fail_reason: Signal,
    /// Not `busy`.
    pub not_busy: Signal,
    /// `start` accepted (while idle).
    pub start_ok: Signal,
    /// Not `go`.
    pub not_go: Signal,
    /// Busy and not in a `go` cycle.
    pub running: Signal,
}

/// The layer index, its constants and the sequencer state registers.
pub(super) fn sequencer(m: &mut ModuleBuilder, input: &SequencerIn) -> Sequencer {
    let x = input.common;
    let (cfg, sh, clk) = (x.cfg, x.sh, x.clk);
    let n = cfg.weight_layers();
    let layer = m.reg(clk, "layer_q", sh.layer);
    // Each constant is a wire named for what it is (`layer_beats`), not after
    // the first instance port it feeds.
    let per_layer = |m: &mut ModuleBuilder, name: &str, width: u32, f: &dyn Fn(usize) -> u64| {
        let values: Vec<Signal> = (0..n).map(|l| m.lit(f(l), width)).collect();
        let value = m.index(layer, &values);
        m.named(name, value)
    };
    let (read_bank, write_bank) = if sh.banks == 2 {
        // At most two layers: bank_read_by(l) = l, so the bank is the index
        // itself (and reads so in the Verilog), the next layer's its complement.
        let parity = m.bit(layer, 0);
        (parity, m.not(parity))
    } else {
        // The last layer writes no activations: its entry is any valid bank.
        (
            per_layer(m, "read_bank", sh.bank_select, &bank_read_by),
            per_layer(m, "write_bank", sh.bank_select, &|l| {
                bank_read_by((l + 1).min(n - 1))
            }),
        )
    };
    let constants = LayerConstants {
        cpo: per_layer(m, "layer_cpo", sh.count, &|l| {
            u64::from(cfg.cycles_per_output(l))
        }),
        beats: per_layer(m, "layer_beats", sh.count, &|l| u64::from(cfg.beats(l))),
        rounds: per_layer(m, "layer_rounds", sh.count, &|l| u64::from(cfg.rounds(l))),
        outputs: per_layer(m, "layer_outputs", sh.count, &|l| {
            u64::from(cfg.layers[l + 1])
        }),
        shift: per_layer(m, "layer_shift", NORM_SHIFT_WIDTH, &|l| {
            u64::from(cfg.shifts[l])
        }),
        is_last: per_layer(m, "last_layer", 1, &|l| u64::from(l + 1 == n)),
        read_bank,
        write_bank,
    };
    let busy = m.reg(clk, "busy_q", 1);
    let go = m.reg(clk, "go_q", 1);
    let done = m.reg(clk, "done_q", 1);
    let failed = m.reg(clk, "failed_q", 1);
    let fail_reason = m.reg(clk, "fail_reason_q", FAIL_REASON_WIDTH);
    let not_busy = m.not(busy);
    let start_ok = m.and(input.start, not_busy);
    let start_ok = m.named("start_ok", start_ok);
    let not_go = m.not(go);
    let running = m.and(busy, not_go);
    let running = m.named("running", running);
    Sequencer {
        layer,
        constants,
        busy,
        go,
        done,
        failed,
        fail_reason,
        not_busy,
        start_ok,
        not_go,
        running,
    }
}

/// What moves the sequencer on.
pub(super) struct AdvanceIn<'a> {
    /// The sequencer.
    pub seq: &'a Sequencer,
    /// The last layer's last round was written back.
    pub finish: Signal,
    /// A failure ends the inference now.
    pub abort: Signal,
    /// A layer's last round was written back.
    pub layer_end: Signal,
    /// The current layer is a hidden one.
    pub hidden: Signal,
}

/// The transitions: a new inference on `start`, the next layer after a hidden
/// layer's end, `done` after the last layer or a failure.
pub(super) fn advance(m: &mut ModuleBuilder, input: &AdvanceIn) {
    let s = input.seq;
    let ends = m.or(input.finish, input.abort);
    let not_ends = m.not(ends);
    let stays = m.and(s.busy, not_ends);
    let busy_next = m.or(s.start_ok, stays);
    m.set_next(s.busy, busy_next);
    let more = m.and_all(&[input.layer_end, input.hidden, s.busy]);
    let go_next = m.or(s.start_ok, more);
    m.set_next(s.go, go_next);
    let l_inc = m.add_const_wrap(s.layer, 1);
    let l_kept = m.mux(more, l_inc, s.layer);
    let l_zero = m.zeros(s.layer.width());
    let l_next = m.mux(s.start_ok, l_zero, l_kept);
    m.set_next(s.layer, l_next);
    let done_or = m.or(s.done, ends);
    let not_start = m.not(s.start_ok);
    let done_next = m.and(not_start, done_or);
    m.set_next(s.done, done_next);
    let failed_or = m.or(s.failed, input.abort);
    let failed_next = m.and(not_start, failed_or);
    m.set_next(s.failed, failed_next);
}
