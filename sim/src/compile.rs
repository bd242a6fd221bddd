//! Compilation of a [`FlatDesign`] into a [`Program`]:
//!
//! 1. levelize (a combinational loop is an error) and [`simplify`];
//! 2. pick an instruction kind for every computed net and [`schedule`] them into
//!    batches of independent instructions of one kind, cone and part (the output
//!    ports' or the rest, see [`demand`](crate::demand));
//! 3. [`lay_out`] storage;
//! 4. lower every instruction, split batches into run, gather and mixed steps;
//! 5. plan the register commits and build the per-domain tables.

use crate::cones::cones;
use crate::demand::output_instrs;
use crate::error::SimError;
use crate::exec::Code;
use crate::flatten::FlatDesign;
use crate::instr::{Batch, Kind, Rec, Span};
use crate::layout::{lay_out, Inputs};
use crate::levelize::levelize;
use crate::lower::Lowerer;
use crate::operands::each_node_operand;
use crate::regs;
use crate::roles::roles;
use crate::runs::{params, steps};
use crate::schedule::{schedule, Key, Preds};
use crate::simplify::{simplify, Graph, Node};
use crate::state::{DomainState, MemLayout, NONE};
use crate::tables::{state_tables, Tables};
use crate::wide::words;
use hdl::ir::{Direction, NetId};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Everything the simulator executes.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Program {
    /// The combinational logic.
    pub code: Code,
    /// Initial storage: constants, reset values; everything else zero.
    pub init: Vec<u64>,
    /// Storage span of every flat net (`off == NONE` for nets eliminated as dead).
    pub nets: Vec<Span>,
    /// The cone mask of every flat net (the sources its value depends on).
    pub cones: Vec<u64>,
    /// State elements by top-level domain.
    pub domains: Vec<DomainState>,
    /// Memory layouts.
    pub mems: Vec<MemLayout>,
    /// Initial memory storage.
    pub mem_init: Vec<u64>,
    /// Size of the shadow buffer.
    pub shadow_len: usize,
}

/// The net owning the words of each net, and the first of them it shares.
fn owners(graph: &Graph, order: &[NetId]) -> Vec<(NetId, u32)> {
    let mut owner: Vec<(NetId, u32)> = (0..graph.nodes.len())
        .map(|i| (NetId(i as u32), 0))
        .collect();
    for &n in order {
        if let Node::Share { src, word } = graph.nodes[n.0 as usize] {
            let (root, w0) = owner[src.0 as usize];
            owner[n.0 as usize] = (root, w0 + word);
        }
    }
    owner
}

/// The kind and parameters of every instruction (lowered once over placeholder
/// storage: neither depends on where operands live).
fn probe(graph: &Graph, instrs: &[NetId]) -> Vec<(Kind, [u64; 5])> {
    let shapes: Vec<Span> = graph
        .widths
        .iter()
        .map(|w| Span {
            off: 0,
            words: words(*w) as u32,
        })
        .collect();
    let no_pads = HashMap::new();
    let mut probe = Lowerer {
        graph,
        spans: &shapes,
        pads: &no_pads,
        parts: Vec::new(),
        wide: Vec::new(),
    };
    instrs
        .iter()
        .map(|n| {
            let (kind, rec) = probe.lower(*n);
            (kind, params(kind, &rec))
        })
        .collect()
}

/// The instruction computing the words of each net (through the net owning
/// them), `u32::MAX` for a net no instruction computes (a source, a constant).
fn instruction_of(graph: &Graph, instrs: &[NetId], owner: &[(NetId, u32)]) -> Vec<u32> {
    let mut index = vec![u32::MAX; graph.nodes.len()];
    for (i, n) in instrs.iter().enumerate() {
        index[n.0 as usize] = i as u32;
    }
    (0..graph.nodes.len())
        .map(|n| index[owner[n].0 .0 as usize])
        .collect()
}

/// For every instruction, the instructions it reads (sorted, without repeats);
/// `index` from [`instruction_of`].
fn predecessors(graph: &Graph, instrs: &[NetId], index: &[u32]) -> Preds {
    let mut preds = Preds::default();
    let mut row = Vec::new();
    for n in instrs {
        row.clear();
        each_node_operand(&graph.nodes[n.0 as usize], |o| {
            let i = index[o.0 as usize];
            if i != u32::MAX {
                row.push(i);
            }
        });
        row.sort_unstable();
        row.dedup();
        preds.push_row(row.iter().copied());
    }
    preds
}

/// Compiles `flat`: levelizes it (failing on a combinational loop), simplifies,
/// schedules, lays out storage and lowers every operation.
pub(crate) fn compile(flat: &FlatDesign) -> Result<Program, SimError> {
    let order = levelize(flat)?;
    let graph = simplify(flat, &order);
    let owner = owners(&graph, &order);
    let role = roles(flat, &order);
    let cone = cones(flat, &graph, &order);

    // Instructions in topological order, batched.
    let instrs: Vec<NetId> = order
        .iter()
        .copied()
        .filter(|n| matches!(graph.nodes[n.0 as usize], Node::Op(_) | Node::Copy(_)))
        .collect();
    let probed = probe(&graph, &instrs);
    let index = instruction_of(&graph, &instrs, &owner);
    let preds = predecessors(&graph, &instrs, &index);
    let output = {
        let roots = (flat.ports.iter())
            .filter(|p| p.direction == Direction::Output)
            .map(|p| index[p.net.0 as usize])
            .filter(|&i| i != u32::MAX);
        output_instrs(&preds, instrs.len(), roots)
    };
    let batches = {
        let keys: Vec<Key> = (probed.iter().zip(&instrs).zip(&output))
            .map(|(((kind, _), n), &output)| Key {
                kind: *kind,
                cone: cone[n.0 as usize],
                output,
            })
            .collect();
        schedule(&keys, &preds)
    };

    // Storage. `slot[n]`: the position of net `n` among the instructions.
    let mut slot = vec![u32::MAX; flat.nets.len()];
    for (i, n) in instrs.iter().enumerate() {
        slot[n.0 as usize] = i as u32;
    }
    let param = |n: NetId| match slot[n.0 as usize] {
        u32::MAX => [0; 5],
        i => probed[i as usize].1,
    };
    // `lay_out` keeps the batches' order: the part of `ordered[i]` is `parts[i]`.
    let parts: Vec<bool> = batches.iter().map(|(k, _)| k.output).collect();
    let batches: Vec<(Kind, Vec<NetId>)> = batches
        .into_iter()
        .map(|(k, m)| (k.kind, m.iter().map(|i| instrs[*i as usize]).collect()))
        .collect();
    let inputs = Inputs {
        flat,
        graph: &graph,
        owner: &owner,
        role: &role,
        order: &order,
    };
    let (mut lay, ordered) = lay_out(&inputs, &batches, param);
    drop((batches, slot, probed, preds, output));
    // Instructions.
    let mut lower = Lowerer {
        graph: &graph,
        spans: &lay.spans,
        pads: &lay.pads,
        parts: Vec::new(),
        wide: Vec::new(),
    };
    let mut recs: Vec<Rec> = Vec::with_capacity(instrs.len());
    let mut rec_cones: Vec<u64> = Vec::with_capacity(instrs.len());
    let mut code_batches: Vec<Batch> = Vec::with_capacity(ordered.len());
    for ((_, members), &output) in ordered.iter().zip(&parts) {
        // Members are independent: a kind the probe did not predict just splits
        // the batch.
        let mut cur: Option<Batch> = None;
        for &n in members {
            let (kind, rec) = lower.lower(n);
            let at = recs.len() as u32;
            recs.push(rec);
            rec_cones.push(cone[n.0 as usize]);
            match &mut cur {
                Some(b) if b.kind == kind => b.end = at + 1,
                _ => {
                    code_batches.extend(cur.take());
                    cur = Some(Batch {
                        kind,
                        start: at,
                        end: at + 1,
                        output,
                    });
                }
            }
        }
        code_batches.extend(cur);
    }
    let code = Code::new(
        steps(&code_batches, &recs, &rec_cones),
        lower.parts,
        lower.wide,
    );

    let plan = regs::plan(flat, &graph, &owner);
    let Tables {
        domains,
        shadow_len,
        mems,
        mem_init,
    } = state_tables(flat, &mut lay, &plan);
    if lay.init.len() >= NONE as usize {
        return Err(SimError::TooLarge(lay.init.len()));
    }
    Ok(Program {
        code,
        init: lay.init,
        nets: lay.spans,
        cones: cone,
        domains,
        mems,
        mem_init,
        shadow_len,
    })
}
