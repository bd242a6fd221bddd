//! Cycle-exact model of `hdl::blocks::skid::axis_skid`'s documented behaviour.

use std::collections::VecDeque;

/// A two-entry in-order buffer: ready while it holds fewer than two beats, valid
/// while it holds any; a beat accepted at an edge is on the output after it.
#[derive(Default)]
pub struct SkidModel {
    beats: VecDeque<Vec<u64>>,
}

impl SkidModel {
    /// An empty buffer.
    pub fn new() -> Self {
        Self::default()
    }

    /// `s_axis_tready` in the current cycle.
    pub fn ready(&self) -> bool {
        self.beats.len() < 2
    }

    /// The beat on `m_axis` (`tvalid` is `is_some()`).
    pub fn head(&self) -> Option<&Vec<u64>> {
        self.beats.front()
    }

    /// Applies one clock edge; returns (accepted, consumed).
    pub fn step(&mut self, s_valid: bool, beat: &[u64], m_ready: bool) -> (bool, bool) {
        let accept = s_valid && self.ready();
        let consume = m_ready && !self.beats.is_empty();
        if consume {
            self.beats.pop_front();
        }
        if accept {
            self.beats.push_back(beat.to_vec());
        }
        (accept, consume)
    }
}
