//! Dead code, loads included, taken out of a function before it is compiled.
//!
//! Cranelift drops an unused pure instruction when it lowers a function, but it
//! keeps every load (a load may trap, so lowering treats it as a side effect), and
//! at the optimization level the engine uses (see `host_isa`) nothing else
//! removes one. The emitter computes some multi-word results whole although only
//! some of their words are read (a shift by a net of which a slice keeps the low
//! words, say): the words nobody reads vanish in lowering, but their loads, and
//! the address arithmetic those loads keep alive, would stay, each an instruction
//! per run. Every load the engine emits reads its own storage, flags or stack
//! through an address in bounds by the plan's checks (`MemFlags::trusted`), so
//! leaving out one whose value nothing needs changes nothing but the time taken.

use cranelift_codegen::entity::EntityRef;
use cranelift_codegen::ir::{Function, Inst, Opcode};

/// Removes from `func`'s layout every instruction that has no effect but its
/// results (a pure one or a load) and whose results nothing that stays uses;
/// returns how many it removed.
pub(super) fn drop_dead_code(func: &mut Function) -> usize {
    let live = live_values(func);
    let dead: Vec<Inst> = func
        .layout
        .blocks()
        .flat_map(|block| func.layout.block_insts(block))
        .filter(|&inst| removable(func, inst) && !needed(func, inst, &live))
        .collect();
    dead.iter().for_each(|&inst| func.layout.remove_inst(inst));
    dead.len()
}

/// Per value, whether an instruction that stays uses it: from the instructions
/// with an effect backwards, to a fixed point (a loop's block arguments may be
/// used before they are defined in layout order).
fn live_values(func: &Function) -> Vec<bool> {
    let mut live = vec![false; func.dfg.num_values()];
    let blocks: Vec<_> = func.layout.blocks().collect();
    let mut changed = true;
    while changed {
        changed = false;
        for &block in blocks.iter().rev() {
            for inst in func.layout.block_insts(block).rev() {
                if removable(func, inst) && !needed(func, inst, &live) {
                    continue;
                }
                for v in func.dfg.inst_values(inst) {
                    let v = func.dfg.resolve_aliases(v).index();
                    changed |= !live[v];
                    live[v] = true;
                }
            }
        }
    }
    live
}

/// Whether `inst` does nothing but compute its results: a load, or an
/// instruction that neither reads nor writes memory, calls, branches or traps.
fn removable(func: &Function, inst: Inst) -> bool {
    let op = func.dfg.insts[inst].opcode();
    op == Opcode::Load
        || !(op.is_call()
            || op.is_branch()
            || op.is_terminator()
            || op.is_return()
            || op.can_trap()
            || op.other_side_effects()
            || op.can_store()
            || op.can_load())
}

/// Whether one of `inst`'s results is `live`.
fn needed(func: &Function, inst: Inst, live: &[bool]) -> bool {
    func.dfg.inst_results(inst).iter().any(|v| live[v.index()])
}
