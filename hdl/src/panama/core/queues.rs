//! The bookkeeping of the per-(slot, port) packet buffers: for each pair, the
//! head and tail cell of a ring of `fifo_depth` cells and the number of packets
//! held. The dispatcher commits a packet at the tail; the aggregation engine pops
//! heads. Both may touch the same queue in one cycle. A queue is *wedged* from
//! the dispatcher dropping a packet on it for being full until its next pop.

use super::logic::{decode, step_mod};
use crate::dsl::{bits_for, Domain, ModuleBuilder, Signal};

/// Ring-pointer width: log2(`fifo_depth`), at least 1.
pub(super) fn pointer_width(fifo_depth: u32) -> u32 {
    fifo_depth.trailing_zeros().max(1)
}

/// The state of every queue, indexed `[slot][port]`.
pub(super) struct Queues {
    /// Cell index of the oldest packet.
    pub head: Vec<Vec<Signal>>,
    /// Cell index the next packet is written to.
    pub tail: Vec<Vec<Signal>>,
    /// At least one complete packet is held.
    pub nonempty: Vec<Vec<Signal>>,
    /// `fifo_depth` packets are held.
    pub full: Vec<Vec<Signal>>,
    /// A packet was dropped here for a full buffer and nothing was popped since.
    pub wedged: Vec<Vec<Signal>>,
}

/// What changes the queues in a cycle.
pub(super) struct QueueUpdates {
    /// The dispatcher commits a packet to (`commit_slot`, `commit_port`).
    pub commit: Signal,
    /// Slot of the commit.
    pub commit_slot: Signal,
    /// Port of the commit.
    pub commit_port: Signal,
    /// The dispatcher drops a packet on the full queue (`commit_slot`,
    /// `commit_port`): the queue is wedged.
    pub wedge: Signal,
    /// The engine pops the heads of slot `pop_slot` at the ports set in `pop_ports`.
    pub pop_slot: Signal,
    /// One bit per port.
    pub pop_ports: Signal,
}

/// Builds the queue registers of `slots` × `ports` queues of `fifo_depth` packets.
/// The update signals are wires assigned later (see [`QueueUpdates`]).
pub(super) fn queues(
    m: &mut ModuleBuilder,
    clk: Domain,
    slots: u32,
    ports: u32,
    fifo_depth: u32,
    upd: &QueueUpdates,
) -> Queues {
    let commit_slot = slot_flags(m, "commit_slot", upd.commit_slot, slots);
    let commit_port = decode(m, "commit_port", upd.commit_port, ports);
    let pop_slot = slot_flags(m, "pop_slot", upd.pop_slot, slots);
    let mut q = Queues {
        head: vec![],
        tail: vec![],
        nonempty: vec![],
        full: vec![],
        wedged: vec![],
    };
    for s in 0..slots {
        let (mut head, mut tail, mut nonempty, mut full) = (vec![], vec![], vec![], vec![]);
        let mut wedged = vec![];
        let slot_flag = |flags: &Option<Vec<Signal>>| flags.as_ref().map(|f| f[s as usize]);
        for p in 0..ports {
            let here = and_flag(m, slot_flag(&commit_slot), commit_port[p as usize]);
            let pop_here = m.bit(upd.pop_ports, p);
            let queue = m.scope(&format!("q{s}_{p}"), |m| {
                queue(
                    m,
                    clk,
                    fifo_depth,
                    upd,
                    here,
                    slot_flag(&pop_slot),
                    pop_here,
                )
            });
            nonempty.push(queue.nonempty);
            full.push(queue.full);
            wedged.push(queue.wedged);
            head.push(queue.head);
            tail.push(queue.tail);
        }
        q.head.push(head);
        q.tail.push(tail);
        q.nonempty.push(nonempty);
        q.full.push(full);
        q.wedged.push(wedged);
    }
    q
}

/// `index` decoded to one flag per slot, or `None` with one slot, whose index
/// is always 0.
fn slot_flags(m: &mut ModuleBuilder, name: &str, index: Signal, slots: u32) -> Option<Vec<Signal>> {
    (slots > 1).then(|| decode(m, name, index, slots))
}

/// `flag & other`, or `other` alone where the flag always holds (`None`: one
/// slot). The `and` carries the caller's line.
#[track_caller]
fn and_flag(m: &mut ModuleBuilder, flag: Option<Signal>, other: Signal) -> Signal {
    match flag {
        Some(flag) => m.and(flag, other),
        None => other,
    }
}

/// The state of one queue.
struct Queue {
    head: Signal,
    tail: Signal,
    nonempty: Signal,
    full: Signal,
    wedged: Signal,
}

/// One queue's registers (`head`, `tail`, `count`, `wedged`): `here` the dispatcher's
/// commit or wedge targets it; `pop_slot` (`None` with one slot: always) and
/// `pop_here` the engine pops its slot and port.
fn queue(
    m: &mut ModuleBuilder,
    clk: Domain,
    fifo_depth: u32,
    upd: &QueueUpdates,
    here: Signal,
    pop_slot: Option<Signal>,
    pop_here: Signal,
) -> Queue {
    let cw = bits_for(fifo_depth);
    let pw = pointer_width(fifo_depth);
    let head = m.reg(clk, "head", pw);
    let tail = m.reg(clk, "tail", pw);
    let count = m.reg(clk, "count", cw);
    let here = m.named("targeted", here);
    let inc = m.and(upd.commit, here);
    let inc = m.named("push", inc);
    let dec = and_flag(m, pop_slot, pop_here);
    let dec = m.named("pop", dec);
    let t_next = step_mod(m, tail, fifo_depth);
    m.set_next(tail, t_next);
    m.set_enable(tail, inc);
    let h_next = step_mod(m, head, fifo_depth);
    m.set_next(head, h_next);
    m.set_enable(head, dec);
    let up = m.add_const_wrap(count, 1);
    let one = m.lit(1, cw);
    let down = m.sub_wrap(count, one);
    let c_next = m.mux(inc, up, down);
    let changes = m.xor(inc, dec);
    m.set_next(count, c_next);
    m.set_enable(count, changes);
    let empty = m.eq_const(count, 0);
    let nonempty = m.not(empty);
    let full = m.eq_const(count, u64::from(fifo_depth));
    let wedged = m.reg(clk, "wedged", 1);
    let set = m.and(upd.wedge, here);
    let on = m.ones(1);
    let off = m.zeros(1);
    let w_next = m.select(&[(dec, off), (set, on)], wedged);
    m.set_next(wedged, w_next);
    Queue {
        head,
        tail,
        nonempty: m.named("nonempty", nonempty),
        full: m.named("full", full),
        wedged,
    }
}
