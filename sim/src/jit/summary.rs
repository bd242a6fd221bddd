//! What a compiled engine needs of its program's plans once its code exists: per
//! part its functions, partitions, unrolled records, inline vector runs and the
//! steps its run calls name, and the flags each input wakes. A build takes it from
//! the plans and stores it in the [`Image`](super::image::Image) beside the code,
//! so that an engine loaded from the [`CodeCache`](super::CodeCache) does not plan
//! its program again: planning both parts of PANAMA SUME took about 0.9 ms of a
//! load's 1.4 ms, during which the interpreter (the first engine) or the profiling
//! engine (the tuned one) runs instead (see the performance log).

use super::activity::{self, Fanout, Readers};
use super::image::Reader;
use super::plan::{Item, Plan};
use super::tune::Always;
use crate::instr::Span;

/// One part's plan, as its engine uses it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct PartSummary {
    /// Its functions.
    pub functions: u32,
    /// Its partitions (flags), the part's flags counted from the output part's.
    pub partitions: u32,
    /// Records unrolled into straight-line code.
    pub unrolled: u32,
    /// Short runs written inline as vector code.
    pub vector_runs: u32,
    /// The steps of its run calls, in the order its code numbers them (the rest's
    /// after the output part's).
    pub calls: Vec<u32>,
}

/// Both parts' [`PartSummary`] and the flags each input wakes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Summary {
    /// The output part's, then the rest's.
    pub parts: [PartSummary; 2],
    /// Per input (see [`Source::inputs`](super::Source::inputs)), the flags its
    /// change sets: its readers, less those that run untested.
    pub input_wake: Fanout,
}

impl Summary {
    /// The summary of `plans`, with the inputs `inputs` waking their `readers`
    /// that `always` leaves tested.
    pub fn of(plans: &[Plan; 2], readers: &Readers, always: &Always, inputs: &[Span]) -> Summary {
        let part = |p: &Plan| PartSummary {
            functions: p.functions.len() as u32,
            partitions: p.flags(),
            unrolled: p.unrolled as u32,
            vector_runs: p
                .items
                .iter()
                .filter(|i| matches!(i, Item::Vector { .. }))
                .count() as u32,
            calls: p.calls.clone(),
        };
        Summary {
            parts: [part(&plans[0]), part(&plans[1])],
            input_wake: Fanout::of_spans(readers, always, inputs.iter().copied()),
        }
    }

    /// The partitions of both parts (their flags come first, the copies' after).
    pub fn partitions(&self) -> usize {
        self.total(|p| p.partitions as usize)
    }

    /// A total over both parts.
    pub fn total(&self, f: impl Fn(&PartSummary) -> usize) -> usize {
        self.parts.iter().map(f).sum()
    }

    /// Appends the summary to `out` as little-endian 32-bit words.
    pub fn write(&self, out: &mut Vec<u8>) {
        let mut put = |w: u32| out.extend_from_slice(&w.to_le_bytes());
        for p in &self.parts {
            [p.functions, p.partitions, p.unrolled, p.vector_runs]
                .into_iter()
                .for_each(&mut put);
            put(p.calls.len() as u32);
            p.calls.iter().for_each(|&c| put(c));
        }
        let (starts, flags) = self.input_wake.parts();
        for list in [starts, flags] {
            put(list.len() as u32);
            list.iter().for_each(|&w| put(w));
        }
    }

    /// The summary [`write`](Self::write) wrote at `r`; `None` when the bytes end
    /// first or the inputs' lists do not fit together.
    pub fn read(r: &mut Reader) -> Option<Summary> {
        let list = |r: &mut Reader| -> Option<Vec<u32>> {
            let n = r.word()? as usize;
            // Each word takes 4 bytes: a longer count cannot be whole.
            (n <= r.remaining() / 4).then_some(())?;
            (0..n).map(|_| r.word()).collect()
        };
        let part = |r: &mut Reader| -> Option<PartSummary> {
            Some(PartSummary {
                functions: r.word()?,
                partitions: r.word()?,
                unrolled: r.word()?,
                vector_runs: r.word()?,
                calls: list(r)?,
            })
        };
        let parts = [part(r)?, part(r)?];
        let (starts, flags) = (list(r)?, list(r)?);
        Some(Summary {
            parts,
            input_wake: activity::Fanout::from_parts(starts, flags)?,
        })
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A summary with something in every field.
    pub(in crate::jit) fn sample() -> Summary {
        let part = |k: u32| PartSummary {
            functions: k + 1,
            partitions: k + 2,
            unrolled: k + 3,
            vector_runs: k + 4,
            calls: vec![k, k + 7, k + 9],
        };
        Summary {
            parts: [part(10), part(20)],
            input_wake: Fanout::from_parts(vec![0, 2, 2, 3], vec![5, 9, 1]).expect("fits"),
        }
    }

    #[test]
    fn a_summary_reads_back_as_written() {
        let summary = sample();
        let mut bytes = Vec::new();
        summary.write(&mut bytes);
        let mut r = Reader(&bytes);
        assert_eq!(Summary::read(&mut r), Some(summary.clone()));
        assert_eq!(r.remaining(), 0, "every byte read");
        assert_eq!(summary.partitions(), 12 + 22);
        for cut in [0, 4, 20, bytes.len() - 1] {
            assert_eq!(
                Summary::read(&mut Reader(&bytes[..cut])),
                None,
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn input_lists_that_do_not_fit_together_are_refused() {
        for (starts, flags) in [
            (vec![], vec![]),
            (vec![1, 2], vec![7, 8]),
            (vec![0, 3], vec![7, 8]),
            (vec![0, 2, 1, 2], vec![7, 8]),
        ] {
            assert_eq!(
                Fanout::from_parts(starts.clone(), flags.clone()),
                None,
                "{starts:?} over {flags:?}"
            );
        }
        assert!(Fanout::from_parts(vec![0], vec![]).is_some(), "no input");
    }
}
