//! Model of `hdl::blocks::count_action`'s documented semantics.

/// Inputs of one cycle.
#[derive(Clone, Copy, Debug, Default)]
pub struct CountActionInputs {
    /// Number of event bits set this cycle.
    pub events: u64,
    /// Counting enabled.
    pub enable: bool,
    /// Synchronous clear.
    pub clear: bool,
    /// One-shot policy.
    pub one_shot: bool,
    /// Target (0 disables the action).
    pub target: u64,
}

/// A count-action unit with a `width`-bit count.
pub struct CountActionModel {
    width: u32,
    count: u64,
    done: bool,
}

impl CountActionModel {
    /// A unit after reset.
    pub fn new(width: u32) -> Self {
        CountActionModel {
            width,
            count: 0,
            done: false,
        }
    }

    /// Registered count.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// One-shot completed.
    pub fn done(&self) -> bool {
        self.done
    }

    /// Whether the unit fires this cycle with these inputs.
    pub fn fires(&self, i: &CountActionInputs) -> bool {
        let inc = if i.enable && !self.done { i.events } else { 0 };
        !i.clear && i.target != 0 && self.count + inc >= i.target
    }

    /// Applies a clock edge; returns whether it fired in the cycle.
    pub fn step(&mut self, i: &CountActionInputs) -> bool {
        let fire = self.fires(i);
        let inc = if i.enable && !self.done { i.events } else { 0 };
        let sum = self.count + inc;
        let after = if fire { sum - i.target } else { sum };
        let max = (1u64 << self.width) - 1;
        if i.clear {
            self.count = 0;
            self.done = false;
        } else {
            self.count = after.min(max);
            self.done |= fire && i.one_shot;
        }
        fire
    }
}
