//! Partitions: the items of one part grouped along their dependences, so that one
//! activity flag covers a piece of connected logic (a field extracted from a
//! register and the comparisons and multiplexers it feeds) rather than unrelated
//! records that happen to share a kind and a level. A word read only inside its
//! partition needs no change test, and a partition's records either all wait or
//! all run. On PANAMA (SUME) about four in five records write only words their
//! own partition reads.
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
            let at = writer.get(w as usize).copied().unwrap_or(NONE);
            if write {
                return;
            }
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
