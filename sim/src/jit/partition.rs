//! Partitions: the items of one part grouped along their dependences, so that one
//! activity flag covers a piece of connected logic (a field extracted from a
//! register and the comparisons and multiplexers it feeds) rather than unrelated
//! records that happen to share a kind and a level. A word read only inside its
//! partition needs no change test, and a partition's records either all wait or
//! all run. PANAMA's core (SUME) has 460 partitions; 685 of its 1,704
//! straight-line records write only words their own partition reads (with one
//! flag per step instead, 243 of 4,096 records did).
//!
//! Items are taken in dependency order. An item joins the latest partition that
//! writes a word it reads, unless that partition is full; an item that reads
//! no word of the part joins the open partition of the first word it reads.
//! Every partition thus reads only words of earlier partitions or of its own
//! earlier items, and running the partitions in the order they were opened is a
//! valid order.

use super::plan::Item;
use crate::exec::Code;
use crate::fxhash::FxHashMap;

/// At most this many items go into one partition: larger ones wake more logic
/// than changed; smaller ones test more flags and words.
pub(super) const MAX_ITEMS: usize = 32;

/// The items of `items` (in dependency order, over `words` storage words) grouped
/// into partitions: each a list of item indices in order, the partitions in an
/// order that is valid to run.
pub(super) fn partitions(code: &Code, items: &[Item], words: usize) -> Vec<Vec<usize>> {
    const NONE: u32 = u32::MAX;
    let mut writer = vec![NONE; words];
    let mut parts: Vec<Vec<usize>> = Vec::new();
    let mut home: FxHashMap<u32, usize> = FxHashMap::default();
    for (i, item) in items.iter().enumerate() {
        let (mut latest, mut first_source) = (None::<usize>, None::<u32>);
        item.each_word(code, |w, write| {
            if write {
                return;
            }
            let at = writer.get(w as usize).copied().unwrap_or(NONE);
            if at != NONE {
                latest = latest.max(Some(at as usize));
            } else if first_source.is_none() {
                first_source = Some(w);
            }
        });
        let open = |p: &usize| parts[*p].len() < MAX_ITEMS;
        let joins = match (latest, first_source) {
            (Some(p), _) => Some(p).filter(open),
            (None, Some(w)) => home.get(&w).copied().filter(open),
            (None, None) => parts.len().checked_sub(1).filter(open),
        };
        let p = joins.unwrap_or_else(|| {
            parts.push(Vec::new());
            parts.len() - 1
        });
        if let (None, Some(w)) = (latest, first_source) {
            home.insert(w, p);
        }
        parts[p].push(i);
        item.each_word(code, |w, write| {
            if let Some(at) = writer.get_mut(w as usize).filter(|_| write) {
                *at = p as u32;
            }
        });
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::instr::{Kind, Rec};
    use crate::jit::plan::Inst;
    use rand::{Rng, SeedableRng};

    fn or(d: u32, a: u32, b: u32) -> Item {
        Item::Rec(Inst {
            kind: Kind::Or,
            rec: Rec {
                d,
                a,
                b,
                ..Rec::default()
            },
        })
    }

    #[test]
    fn chains_join_and_unrelated_roots_do_not() {
        let code = Code::default();
        // w10 = w0|w1, w11 = w10|w2 (a chain); w12 = w5|w5 (another source);
        // w13 = w0|w3 (the first chain's first source).
        let items = [or(10, 0, 1), or(11, 10, 2), or(12, 5, 5), or(13, 0, 3)];
        assert_eq!(partitions(&code, &items, 16), [vec![0, 1, 3], vec![2]]);
    }

    /// On random programs every item lands in exactly one partition of at most
    /// [`MAX_ITEMS`], after every item it reads from.
    #[test]
    fn partitions_are_bounded_and_in_dependency_order() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let code = Code::default();
        for trial in 0..50 {
            let sources = rng.gen_range(1..20u32);
            let n = rng.gen_range(1..400u32);
            let items: Vec<Item> = (0..n)
                .map(|i| {
                    let d = sources + i;
                    or(d, rng.gen_range(0..d), rng.gen_range(0..d))
                })
                .collect();
            let words = (sources + n) as usize;
            let parts = partitions(&code, &items, words);
            let mut at = vec![None; items.len()];
            for (p, members) in parts.iter().enumerate() {
                assert!(members.len() <= MAX_ITEMS, "trial {trial}");
                for (k, &i) in members.iter().enumerate() {
                    assert!(
                        at[i].replace((p, k)).is_none(),
                        "trial {trial}: item {i} twice"
                    );
                }
            }
            for (i, item) in items.iter().enumerate() {
                let me = at[i].expect("every item is placed");
                item.each_word(&code, |w, write| {
                    if !write && w >= sources {
                        let producer = at[(w - sources) as usize].expect("placed");
                        assert!(
                            producer < me,
                            "trial {trial}: item {i} runs before its operand"
                        );
                    }
                });
            }
        }
    }
}
