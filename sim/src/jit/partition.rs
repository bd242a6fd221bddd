//! Partitions: the items of one part grouped along their dependences, so that one
//! activity flag covers a piece of connected logic (a field extracted from a
//! register and the comparisons and multiplexers it feeds) rather than unrelated
//! records that happen to share a kind and a level. A word read only inside its
//! partition needs no change test, and a partition's records either all wait or
//! all run. PANAMA's core (SUME) has 438 partitions; 1,001 of its 1,701
//! straight-line records write only words their own partition reads (with one
//! flag per step instead, 243 of 4,096 records did).
//!
//! Items are taken in dependency order. An item joins the latest partition that
//! writes a word it reads, unless that partition is full; an item that reads
//! no word of the part joins the open partition of the first word it reads.
//! Every partition thus reads only words of earlier partitions or of its own
//! earlier items, and running the partitions in the order they were opened is a
//! valid order.
//!
//! A partition that reads the words of one earlier partition (or of partitions
//! already joined to it), besides its own, and otherwise only words that
//! partition reads too then joins it ([`join_pure_readers`]): a full partition's
//! overflow, say, or a comparison fed by one field and a register the field's
//! partition reads. Its flag could be set only by what sets that partition's, so
//! it runs in most of that partition's runs anyway, and joined it needs no flag
//! test, no wake and no change comparison of the words it reads. Counted per
//! cycle of the tuned engine, joining the partitions that read nothing else took
//! Lightning's executed code from 3,397 to 3,341 instructions with one core and
//! from 9,005 to 8,850 with four, and the AU250's from 7,861 to 7,479; also
//! joining those that read some of the first partition's other words took four
//! cores to 8,514; SUME's moved by 10 (see the performance log).

use super::plan::Item;
use crate::exec::Code;
use crate::fxhash::FxHashMap;

/// At most this many items go into one partition as it is opened: larger ones
/// wake more logic than changed; smaller ones test more flags and words.
pub(super) const MAX_ITEMS: usize = 32;

/// At most this many items in a partition that others joined (see
/// [`join_pure_readers`]).
pub(super) const MAX_JOINED: usize = 4 * MAX_ITEMS;

/// No partition writes the word.
const NONE: u32 = u32::MAX;

/// The items of `items` (in dependency order, over `words` storage words) grouped
/// into partitions: each a list of item indices in order, the partitions in an
/// order that is valid to run.
pub(super) fn partitions(code: &Code, items: &[Item], words: usize) -> Vec<Vec<usize>> {
    let (parts, writer) = opened(code, items, words);
    join_pure_readers(code, items, parts, &writer)
}

/// The partitions as they are opened, taking the items in order (see the
/// module's documentation), and the partition that writes each word ([`NONE`]
/// for a word none writes).
fn opened(code: &Code, items: &[Item], words: usize) -> (Vec<Vec<usize>>, Vec<u32>) {
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
    (parts, writer)
}

/// `parts` (in a valid order) with every partition joined to an earlier group
/// (a partition and those joined to it) when its items read words of that group
/// and no other partition's, and read no word that no partition writes (a
/// register, an input, a constant, the other part's) unless the group's first
/// partition reads it too, up to [`MAX_JOINED`] items (`writer`: the partition of
/// `parts` that writes each word). Whatever would set the joined partition's flag
/// then sets the group's. Its items follow the group's: they read only the
/// group's words of this part, and no partition between reads theirs, so the
/// order stays valid.
fn join_pure_readers(
    code: &Code,
    items: &[Item],
    parts: Vec<Vec<usize>>,
    writer: &[u32],
) -> Vec<Vec<usize>> {
    let mut group_of = vec![0; parts.len()];
    let mut groups: Vec<Group> = Vec::with_capacity(parts.len());
    for (p, members) in parts.into_iter().enumerate() {
        let (mut read, mut pure) = (None::<usize>, true);
        let mut sources = Vec::new();
        for &i in &members {
            items[i].each_word(code, |w, write| {
                let at = writer.get(w as usize).copied().unwrap_or(NONE);
                if write || at == p as u32 {
                    return;
                }
                if at == NONE {
                    sources.push(w);
                    return;
                }
                let group = group_of[at as usize];
                match read {
                    None => read = Some(group),
                    Some(g) if g == group => {}
                    Some(_) => pure = false,
                }
            });
        }
        sources.sort_unstable();
        sources.dedup();
        let joins = read.filter(|&g| {
            let group = &groups[g];
            pure && group.items.len() + members.len() <= MAX_JOINED
                && sources
                    .iter()
                    .all(|w| group.sources.binary_search(w).is_ok())
        });
        match joins {
            Some(g) => {
                group_of[p] = g;
                groups[g].items.extend(members);
            }
            None => {
                group_of[p] = groups.len();
                groups.push(Group {
                    items: members,
                    sources,
                });
            }
        }
    }
    groups.into_iter().map(|g| g.items).collect()
}

/// A partition and those joined to it (see [`join_pure_readers`]).
struct Group {
    /// The items, in order.
    items: Vec<usize>,
    /// The words its first partition reads that no partition writes, sorted.
    sources: Vec<u32>,
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

    /// `n` items from word `from` on, each or-ing the word before it with
    /// itself: the first reads `from`, item `k` writes `to + k`.
    fn chain(from: u32, to: u32, n: u32) -> Vec<Item> {
        (0..n)
            .map(|k| {
                let src = if k == 0 { from } else { to + k - 1 };
                or(to + k, src, src)
            })
            .collect()
    }

    #[test]
    fn an_overflow_that_reads_only_the_full_partition_joins_it() {
        let code = Code::default();
        // w100.. = a chain of MAX_ITEMS + 1 from source w0: the first MAX_ITEMS
        // fill a partition, the last opens one that reads only theirs.
        let n = MAX_ITEMS as u32 + 1;
        let items = chain(0, 100, n);
        assert_eq!(
            opened(&code, &items, 200).0.len(),
            2,
            "the overflow opens one"
        );
        assert_eq!(
            partitions(&code, &items, 200),
            [(0..n as usize).collect::<Vec<_>>()]
        );
    }

    #[test]
    fn an_overflow_that_also_reads_a_source_of_the_full_partition_joins_it() {
        let code = Code::default();
        let m = MAX_ITEMS as u32;
        // The last item reads the full partition's last word and its source w0.
        let mut items = chain(0, 100, m);
        items.push(or(100 + m, 100 + m - 1, 0));
        let all: Vec<usize> = (0..=MAX_ITEMS).collect();
        assert_eq!(partitions(&code, &items, 200), [all]);
    }

    #[test]
    fn an_overflow_that_also_reads_a_source_stays_apart() {
        let code = Code::default();
        let m = MAX_ITEMS as u32;
        // The last item reads the full partition's last word and source w1,
        // which the full partition does not read.
        let mut items = chain(0, 100, m);
        items.push(or(100 + m, 100 + m - 1, 1));
        let full: Vec<usize> = (0..MAX_ITEMS).collect();
        assert_eq!(partitions(&code, &items, 200), [full, vec![MAX_ITEMS]]);
    }

    #[test]
    fn a_partition_that_reads_two_partitions_stays_apart() {
        let code = Code::default();
        let m = MAX_ITEMS as u32;
        // Two full chains, from sources w0 and w1, and an item or-ing their ends.
        let mut items = chain(0, 100, m);
        items.extend(chain(1, 200, m));
        items.push(or(300, 100 + m - 1, 200 + m - 1));
        let parts = partitions(&code, &items, 400);
        assert_eq!(parts.len(), 3, "{parts:?}");
        assert_eq!(parts[2], [2 * MAX_ITEMS]);
    }

    /// On random programs every item lands in exactly one partition of at most
    /// [`MAX_JOINED`], after every item it reads from.
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
                assert!(members.len() <= MAX_JOINED, "trial {trial}");
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
