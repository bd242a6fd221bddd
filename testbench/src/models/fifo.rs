//! Cycle-exact model of `hdl::blocks::fifo::sync_fifo`'s documented behaviour.

use std::collections::VecDeque;

/// What the FIFO shows in one cycle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FifoOutputs {
    /// No word on the output.
    pub empty: bool,
    /// `count == depth`.
    pub full: bool,
    /// Words held.
    pub count: u64,
    /// The head word, when not empty.
    pub rd_data: Option<Vec<u64>>,
}

/// A first-word-fall-through FIFO of `depth` words: a word written in cycle `c` is
/// counted from `c + 1` and can be on the output from `c + 2`, once it is the head.
pub struct SyncFifoModel {
    depth: usize,
    cycle: u64,
    words: VecDeque<(Vec<u64>, u64)>,
}

impl SyncFifoModel {
    /// An empty FIFO of `depth` words.
    pub fn new(depth: usize) -> Self {
        SyncFifoModel {
            depth,
            cycle: 0,
            words: VecDeque::new(),
        }
    }

    /// The outputs in the current cycle.
    pub fn outputs(&self) -> FifoOutputs {
        let head = self
            .words
            .front()
            .filter(|(_, written)| written + 2 <= self.cycle);
        FifoOutputs {
            empty: head.is_none(),
            full: self.words.len() == self.depth,
            count: self.words.len() as u64,
            rd_data: head.map(|(w, _)| w.clone()),
        }
    }

    /// Applies one clock edge with these inputs; returns (pushed, popped).
    pub fn step(&mut self, wr_en: bool, wr_data: &[u64], rd_en: bool) -> (bool, bool) {
        let out = self.outputs();
        let push = wr_en && !out.full;
        let pop = rd_en && !out.empty;
        if pop {
            self.words.pop_front();
        }
        if push {
            self.words.push_back((wr_data.to_vec(), self.cycle));
        }
        self.cycle += 1;
        (push, pop)
    }
}
