//! The sum stage: the heads' beats go through the adder tree into the result
//! buffer, and each head's header beats become that worker's result header.
//!
//! The tree sums whole beats lane by lane, header lanes included: the payload
//! starts at byte 64 for every bus width, so lane *j* of every beat holds the same
//! element position in every head. The header lanes of the sum are meaningless;
//! the egress replaces bytes 0–63 of each result copy with that worker's result
//! header, kept here per (bank, port).

use super::engine::Engine;
use super::logic::cell_base;
use super::result_header::result_header;
use crate::blocks::fp::fp_add_tree;
use crate::dsl::{Domain, Memory, ModuleBuilder, Signal};
use crate::ir::HdlError;
use crate::panama::config::{PanamaConfig, HEADERS_BYTES};

/// Header block width in bits (64 bytes).
pub(super) const HEADER_BITS: u32 = HEADERS_BYTES * 8;

/// What the sum stage drives.
pub(super) struct SumStage {
    /// The last beat of a sum was written to its bank this cycle.
    pub bank_filled: Signal,
}

/// Builds the tree and the writes into `result_mem` (address bank·cell_beats +
/// beat) and `header_mems` (one per port, address bank).
pub(super) fn sum_stage(
    m: &mut ModuleBuilder,
    cfg: &PanamaConfig,
    clk: Domain,
    e: &Engine,
    result_mem: Memory,
    header_mems: &[Memory],
) -> Result<SumStage, HdlError> {
    let tree_cfg = cfg.tree();
    let tree = m.instance("u_tree", &fp_add_tree(&tree_cfg)?);
    if tree_cfg.adder.stages > 0 {
        m.bind_domain(tree, "clk", clk);
    }
    let operands = m.join_lanes(&e.s1_data);
    m.connect(tree, "in_data", operands);
    m.connect(tree, "in_present", e.s1_ports);
    m.connect(tree, "in_valid", e.s1_valid);
    let out_valid = m.instance_output(tree, "out_valid");
    let out_data = m.instance_output(tree, "out_data");
    let latency = tree_cfg.latency();
    let w_beat = m.delay(clk, "t_beat", e.s1_beat, latency);
    let w_bank = m.delay(clk, "t_bank", e.s1_bank, latency);
    let w_last = m.delay(clk, "t_last", e.s1_last, latency);

    let aw = result_mem.addr_width();
    let base = cell_base(m, w_bank, cfg.cell_beats(), aw);
    let beat = m.zext(w_beat, aw);
    let addr = m.add_wrap(base, beat);
    m.mem_write(result_mem, clk, addr, out_data, out_valid);
    let bank_filled = m.and(out_valid, w_last);

    // Headers: the last header beat completes them.
    let header_beats = cfg.header_beats();
    let at_last_header = m.eq_const(e.s1_beat, u64::from(header_beats - 1));
    let complete = m.and(e.s1_valid, at_last_header);
    let first_beat = m.eq_const(e.s1_beat, 0);
    let capture_first = m.and(e.s1_valid, first_beat);
    for (p, (&data, &mem)) in e.s1_data.iter().zip(header_mems).enumerate() {
        let header = if header_beats == 2 {
            let lo = m.reg_no_reset(clk, &format!("h_first{p}"), cfg.data_width);
            m.set_next(lo, data);
            m.set_enable(lo, capture_first);
            m.concat(&[data, lo])
        } else {
            m.slice(data, 0, HEADER_BITS)
        };
        let result = m.scope(&format!("port{p}"), |m| {
            result_header(m, header, e.s1_ecn, e.s1_ports)
        });
        let addr = m.zext(e.s1_bank, mem.addr_width());
        m.mem_write(mem, clk, addr, result, complete);
    }
    Ok(SumStage { bank_filled })
}
