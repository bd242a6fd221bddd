//! The evaluation loop: runs every step of the compiled program over the storage
//! words, each through its [`Kernel`] (one indirect call per step; the loops are
//! in [`kernels`](crate::kernels)). No allocation.

use crate::demand::Part;
use crate::gather::mixed;
use crate::instr::{Kind, Mode, Rec, Step, Tag, WideOp};
use crate::kernels::{kernel, Kernel};
use serde::{Deserialize, Serialize};

/// [`run`] of both parts: a whole settle.
#[cfg(test)]
pub(crate) fn run_all(code: &Code, vals: &mut [u64], dirty: u64) {
    for part in Part::BOTH {
        run(code, vals, dirty, part);
    }
}

/// The compiled combinational logic.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct Code {
    /// Steps in dependency order.
    pub steps: Vec<Step>,
    /// The loop of every step.
    #[serde(skip)]
    pub kernels: Vec<Kernel>,
    /// Records of all steps.
    pub recs: Vec<Rec>,
    /// The kind and cone of every record (for mixed steps).
    pub tags: Vec<Tag>,
    /// Parts of `CatN` records: `(offset, shift)`.
    pub parts: Vec<(u32, u32)>,
    /// Wide operations, referenced by `Wide` records.
    pub wide: Vec<WideOp>,
    /// For every step, whether an output port depends on it (see [`demand`](crate::demand);
    /// empty: none does, every step is in the rest).
    pub outputs: Vec<bool>,
}

/// Everything but the kernels, which follow from the steps (a kernel is a
/// function's address, which differs between processes).
impl std::hash::Hash for Code {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        let Code {
            steps,
            kernels: _,
            recs,
            tags,
            parts,
            wide,
            outputs,
        } = self;
        (steps, recs, tags, parts, wide, outputs).hash(h);
    }
}

impl Code {
    /// The code of `steps` over `recs`, with the side tables they refer to.
    pub fn new(
        (steps, recs, tags): (Vec<Step>, Vec<Rec>, Vec<Tag>),
        parts: Vec<(u32, u32)>,
        wide: Vec<WideOp>,
    ) -> Code {
        let mut code = Code {
            steps,
            kernels: Vec::new(),
            recs,
            tags,
            parts,
            wide,
            outputs: Vec::new(),
        };
        code.link_kernels();
        code
    }

    /// Sets the loop of every step: a kernel is a function's address in this
    /// process, which follows from its step (and is not part of a stored program).
    pub fn link_kernels(&mut self) {
        self.kernels = self.steps.iter().map(|s| kernel(s.kind, s.mode)).collect();
    }
}

/// Every record of step `s` with concrete offsets (run instances one by one), with
/// its kind and the sources it depends on. `s` must lie within `code`.
pub(crate) fn each_record(code: &Code, s: &Step, mut f: impl FnMut(Kind, Rec, u64)) {
    let range = s.start as usize..(s.start + s.n) as usize;
    match s.mode {
        Mode::Gather => code.recs[range].iter().for_each(|r| f(s.kind, *r, s.mask)),
        Mode::Mixed => code.recs[range.clone()]
            .iter()
            .zip(&code.tags[range])
            .for_each(|(r, t)| f(t.kind, *r, t.mask)),
        Mode::Run { strides } => {
            let first = code.recs[s.start as usize];
            (0..s.n).for_each(|j| f(s.kind, first.instance(s.kind, strides, j), s.mask));
        }
    }
}

impl Code {
    /// Number of instructions (run instances and records) of a full settle.
    pub fn instructions(&self) -> usize {
        self.steps.iter().map(|s| s.n as usize).sum()
    }
}

/// Evaluates, in order, every step of `part` that depends on a source in `dirty`
/// (one combinational settle of that part after those sources changed).
pub(crate) fn run(code: &Code, vals: &mut [u64], dirty: u64, part: Part) {
    for (i, (s, k)) in code.steps.iter().zip(&code.kernels).enumerate() {
        if s.mask & dirty != 0 && part.has(code, i) {
            // Mixed steps (the logic of small designs) by a direct call.
            if s.mode == Mode::Mixed {
                mixed(code, s, vals, dirty);
            } else {
                k(code, s, vals);
            }
        }
    }
}
