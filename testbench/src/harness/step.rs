//! The stimulus's view of the lockstep pair between two edges: the agreed
//! outputs, and the inputs it sets for the next edge, through [`Pins`] with
//! [`Pin`]s the stimulus resolved once before the run (there is no by-name
//! access: nothing looks a port up per cycle).

use crate::dut::{copy_words, DutError, DutPort};
use crate::pins::{Pin, Pins};
use sim::Fired;
use std::ops::Range;

/// What a stimulus sees and does between two clock edges. It is the lockstep
/// pair's [`Pins`]: inputs set through it go to both engines before the next
/// edge; reads see the outputs both engines agree on.
pub struct Step<'a> {
    /// Domains (indices into
    /// [`Differential::domains`](super::Differential::domains)) that rose at
    /// the last edge; empty right after reset.
    pub fired: Fired,
    /// Rising edges so far per domain (after reset).
    pub cycles: &'a [u64],
    /// Current output values (both engines agree on them), by port index.
    pub outputs: &'a [Vec<u64>],
    pub(super) sets: &'a mut Sets,
    pub(super) ports: &'a [DutPort],
}

/// Inputs a stimulus set in one interval: port and word range into `words`,
/// buffers kept from interval to interval.
#[derive(Default)]
pub(super) struct Sets {
    pub(super) ports: Vec<(usize, Range<usize>)>,
    pub(super) words: Vec<u64>,
}

impl Sets {
    fn push(&mut self, port: usize, words: &[u64]) {
        let at = self.words.len();
        self.words.extend_from_slice(words);
        self.ports.push((port, at..self.words.len()));
    }

    pub(super) fn clear(&mut self) {
        self.ports.clear();
        self.words.clear();
    }
}

impl Step<'_> {
    /// True if domain `index` rose at the last edge.
    pub fn fired(&self, index: usize) -> bool {
        self.fired.contains(index)
    }
}

impl Pins for Step<'_> {
    fn ports(&self) -> &[DutPort] {
        self.ports
    }

    fn set(&mut self, pin: Pin, words: &[u64]) -> Result<(), DutError> {
        if pin.0 >= self.ports.len() {
            return Err(DutError::UnknownPort(format!("#{}", pin.0)));
        }
        self.sets.push(pin.0, words);
        Ok(())
    }

    fn get_into(&mut self, pin: Pin, out: &mut [u64]) -> Result<(), DutError> {
        let words = self
            .outputs
            .get(pin.0)
            .ok_or_else(|| DutError::UnknownPort(format!("#{}", pin.0)))?;
        copy_words(self.ports, pin.0, words, out)
    }
}
