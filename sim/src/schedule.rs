//! Batching: an order of the instructions as batches of one kind, each batch made
//! of instructions that do not depend on one another, and as few batches as the
//! dependencies allow (greedily).
//!
//! List scheduling by kind: among the instructions whose operands are all computed,
//! take every one of the key (kind, dependency cone and part) with the most of them
//! as the next batch; repeat.
//! Identical logic in many instances (lanes, pipeline stages, parallel adders) then
//! runs as one batch per operation instead of one dispatch per instruction.

use crate::instr::Kind;
use std::collections::BTreeMap;

/// What the instructions of one batch share.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Key {
    /// The instruction kind.
    pub kind: Kind,
    /// The sources the instructions depend on (see [`cones`](crate::cones)).
    pub cone: u64,
    /// Whether an output port depends on the instructions (see
    /// [`demand`](crate::demand)): a batch never mixes the output part with the
    /// rest, so that the part is no larger than the output ports need.
    pub output: bool,
}

/// For every instruction, the instructions it reads (compressed rows).
#[derive(Default)]
pub(crate) struct Preds {
    /// Row `i` is `list[start[i]..start[i + 1]]`.
    start: Vec<u32>,
    list: Vec<u32>,
}

impl Preds {
    /// Appends the row of the next instruction.
    pub fn push_row(&mut self, row: impl IntoIterator<Item = u32>) {
        if self.start.is_empty() {
            self.start.push(0);
        }
        self.list.extend(row);
        self.start.push(self.list.len() as u32);
    }

    /// The instructions instruction `i` reads.
    pub fn row(&self, i: usize) -> &[u32] {
        &self.list[self.start[i] as usize..self.start[i + 1] as usize]
    }
}

/// Batches of instruction indices with their key; `keys[i]` is instruction `i`'s
/// (a batch has one key) and `preds` the instructions each reads (each before it
/// in the result).
pub(crate) fn schedule(keys: &[Key], preds: &Preds) -> Vec<(Key, Vec<u32>)> {
    let n = keys.len();
    let mut pending: Vec<u32> = (0..n).map(|i| preds.row(i).len() as u32).collect();
    let mut start = vec![0u32; n + 1];
    for &q in &preds.list {
        start[q as usize + 1] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut users = vec![0u32; start[n] as usize];
    for i in 0..n {
        for &q in preds.row(i) {
            users[fill[q as usize] as usize] = i as u32;
            fill[q as usize] += 1;
        }
    }

    let mut ready: BTreeMap<Key, Vec<u32>> = BTreeMap::new();
    for (i, &p) in pending.iter().enumerate() {
        if p == 0 {
            ready.entry(keys[i]).or_default().push(i as u32);
        }
    }
    let mut out = Vec::new();
    while let Some(best) = ready
        .iter()
        .max_by_key(|(k, v)| (v.len(), std::cmp::Reverse(**k)))
        .map(|(k, _)| *k)
    {
        let batch = ready.remove(&best).unwrap_or_default();
        for &i in &batch {
            for &u in &users[start[i as usize] as usize..start[i as usize + 1] as usize] {
                let p = &mut pending[u as usize];
                *p -= 1;
                if *p == 0 {
                    ready.entry(keys[u as usize]).or_default().push(u);
                }
            }
        }
        out.push((best, batch));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn independent_instructions_of_a_kind_share_a_batch() {
        // 0: And, 1: And, 2: Or(0), 3: Or(1), 4: And(2, 3)
        let keys = [Kind::And, Kind::And, Kind::Or, Kind::Or, Kind::And].map(|kind| Key {
            kind,
            cone: 1,
            output: false,
        });
        let mut preds = Preds::default();
        for row in [vec![], vec![], vec![0], vec![1], vec![2, 3]] {
            preds.push_row(row);
        }
        let b = schedule(&keys, &preds);
        let kinds: Vec<(Kind, Vec<u32>)> = b.into_iter().map(|(k, m)| (k.kind, m)).collect();
        assert_eq!(
            kinds,
            vec![
                (Kind::And, vec![0, 1]),
                (Kind::Or, vec![2, 3]),
                (Kind::And, vec![4])
            ]
        );
    }

    #[test]
    fn the_output_part_and_the_rest_never_share_a_batch() {
        // 0 and 1 alike but for the part; 2 reads both.
        let key = |output| Key {
            kind: Kind::And,
            cone: 1,
            output,
        };
        let keys = [key(true), key(false), key(false)];
        let mut preds = Preds::default();
        for row in [vec![], vec![], vec![0, 1]] {
            preds.push_row(row);
        }
        let b = schedule(&keys, &preds);
        assert_eq!(b.len(), 3, "{b:?}");
        assert!(b
            .iter()
            .all(|(k, m)| m.iter().all(|&i| keys[i as usize] == *k)));
    }
}
