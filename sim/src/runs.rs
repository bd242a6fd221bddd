//! Splitting batches into [`Step`]s: maximal runs of records that follow one
//! template (destinations consecutive, each operand consecutive or the same word,
//! parameters equal) become one vector step; the rest are gathered.

use crate::instr::{Batch, Kind, Mode, Rec, Step, Tag};

/// Shortest run worth a vector step.
const MIN_RUN: usize = 4;

/// Gathers smaller than this merge with their neighbours into mixed steps.
const MIN_GATHER: u32 = 4;

/// The fields `a`, `b`, `c` of `r`.
fn fields(r: &Rec) -> [u32; 3] {
    [r.a, r.b, r.c]
}

/// The parameters of `r` (everything that is not an offset) for `kind`.
pub(crate) fn params(kind: Kind, r: &Rec) -> [u64; 5] {
    let offs = kind.offsets();
    let f = fields(r);
    let p = |i: usize| if offs[i] { 0 } else { f[i] as u64 };
    [p(0), p(1), p(2), r.k, r.k2]
}

/// The words `[lo, hi)` that `n` instances read through an operand at `base` with
/// stride `s` (`Slice2` also reads the word after each operand).
fn read_range(kind: Kind, base: u32, s: u32, n: u32) -> (u64, u64) {
    let extra = (kind == Kind::Slice2) as u64;
    let last = base as u64 + (n as u64 - 1) * s as u64 + extra;
    (base as u64, last + 1)
}

/// The length and stride bits of the run starting at `r[0]` (length 1 if none).
fn run_at(kind: Kind, r: &[Rec]) -> (usize, u8) {
    if !kind.vectorizes() || r.len() < 2 {
        return (1, 0);
    }
    let offs = kind.offsets();
    let (t, s) = (&r[0], &r[1]);
    let (tf, sf) = (fields(t), fields(s));
    let mut strides = [0u32; 3];
    for i in 0..3 {
        if offs[i] {
            match sf[i].wrapping_sub(tf[i]) {
                d @ (0 | 1) => strides[i] = d,
                _ => return (1, 0),
            }
        }
    }
    let tp = params(kind, t);
    let mut n = 1;
    while n < r.len() {
        let x = &r[n];
        let xf = fields(x);
        let fits = x.d == t.d.wrapping_add(n as u32)
            && (0..3).all(|i| !offs[i] || xf[i] == tf[i].wrapping_add(n as u32 * strides[i]))
            && params(kind, x) == tp;
        if !fits {
            break;
        }
        n += 1;
    }
    // The destination words must not overlap any word the run reads.
    let (d0, d1) = (t.d as u64, t.d as u64 + n as u64);
    let disjoint = (0..3).all(|i| {
        !offs[i] || {
            let (lo, hi) = read_range(kind, tf[i], strides[i], n as u32);
            hi <= d0 || lo >= d1
        }
    });
    if !disjoint {
        return (1, 0);
    }
    let bits = strides[0] as u8 | (strides[1] as u8) << 1 | (strides[2] as u8) << 2;
    (n, bits)
}

/// The steps of `batches` (over `recs`, whose cone masks are `masks`), the
/// records they use and the kind and mask of each record. A step never holds
/// records of two batches of which one is in the output part and the other not
/// ([`Batch::output`]).
pub(crate) fn steps(
    batches: &[Batch],
    recs: &[Rec],
    masks: &[u64],
) -> (Vec<Step>, Vec<Rec>, Vec<Tag>) {
    let mut steps: Vec<Step> = Vec::new();
    // `output[i]`: steps[i] is in the output part.
    let mut output: Vec<bool> = Vec::new();
    let mut out: Vec<Rec> = Vec::with_capacity(recs.len());
    let mut kinds: Vec<Tag> = Vec::with_capacity(recs.len());
    for b in batches {
        let r = &recs[b.start as usize..b.end as usize];
        let m = &masks[b.start as usize..b.end as usize];
        let mut i = 0;
        while i < r.len() {
            let (mut n, strides) = run_at(b.kind, &r[i..]);
            n = m[i..i + n].iter().take_while(|x| **x == m[i]).count();
            if n >= MIN_RUN {
                output.push(b.output);
                steps.push(Step {
                    kind: b.kind,
                    mode: Mode::Run { strides },
                    start: out.len() as u32,
                    n: n as u32,
                    mask: nonzero(m[i]),
                });
                out.push(r[i]);
                kinds.push(Tag {
                    kind: b.kind,
                    mask: nonzero(m[i]),
                });
                i += n;
                continue;
            }
            match steps.last_mut() {
                Some(s)
                    if s.kind == b.kind
                        && s.mode == Mode::Gather
                        && s.mask == nonzero(m[i])
                        && s.start + s.n == out.len() as u32
                        && output.last() == Some(&b.output) =>
                {
                    s.n += 1
                }
                _ => {
                    output.push(b.output);
                    steps.push(Step {
                        kind: b.kind,
                        mode: Mode::Gather,
                        start: out.len() as u32,
                        n: 1,
                        mask: nonzero(m[i]),
                    })
                }
            }
            out.push(r[i]);
            kinds.push(Tag {
                kind: b.kind,
                mask: nonzero(m[i]),
            });
            i += 1;
        }
    }
    (mix_small_gathers(steps, &output), out, kinds)
}

/// A step mask: a step that depends on no source at all (it cannot exist after
/// constant folding) runs at every settle rather than never.
fn nonzero(mask: u64) -> u64 {
    if mask == 0 {
        u64::MAX
    } else {
        mask
    }
}

/// Merges consecutive small gathers (fewer than [`MIN_GATHER`] records) of one
/// part (`output[i]` for `steps[i]`) into [`Mode::Mixed`] steps; their records
/// stay in place.
fn mix_small_gathers(steps: Vec<Step>, output: &[bool]) -> Vec<Step> {
    let small = |s: &Step| s.mode == Mode::Gather && s.n < MIN_GATHER && s.kind != Kind::Wide;
    let mut out: Vec<Step> = Vec::with_capacity(steps.len());
    let mut last_output = None;
    for (s, &o) in steps.into_iter().zip(output) {
        let same_part = last_output.replace(o) == Some(o);
        if let Some(last) = out.last_mut().filter(|_| same_part && small(&s)) {
            if (last.mode == Mode::Mixed || small(last)) && last.start + last.n == s.start {
                last.mode = Mode::Mixed;
                last.n += s.n;
                last.mask |= s.mask;
                continue;
            }
        }
        out.push(s);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn and(d: u32, a: u32, b: u32) -> Rec {
        Rec {
            d,
            a,
            b,
            ..Rec::default()
        }
    }

    #[test]
    fn consecutive_records_become_a_run() {
        let recs: Vec<Rec> = (0..6).map(|j| and(100 + j, 10 + j, 50)).collect();
        let batch = Batch {
            kind: Kind::And,
            start: 0,
            end: 6,
            output: false,
        };
        let (steps, out, _) = steps(&[batch], &recs, &[1; 6]);
        assert_eq!(
            steps,
            vec![Step {
                kind: Kind::And,
                mode: Mode::Run { strides: 0b001 },
                start: 0,
                n: 6,
                mask: 1
            }]
        );
        assert_eq!(out, vec![recs[0]]);
    }

    #[test]
    fn overlapping_or_irregular_records_are_gathered() {
        // Reads its own destination range: never a run.
        let recs: Vec<Rec> = (0..5).map(|j| and(10 + j, 9 + j, 50)).collect();
        let batch = Batch {
            kind: Kind::And,
            start: 0,
            end: 5,
            output: false,
        };
        let (steps, _, _) = steps(&[batch], &recs, &[1; 5]);
        assert_eq!(steps.len(), 1);
        assert_eq!(steps[0].mode, Mode::Gather);
        assert_eq!(steps[0].n, 5);
    }

    #[test]
    fn small_gathers_mix_only_within_a_part() {
        // Four one-record batches of different kinds (never a run): the first two
        // in the output part, the last two not.
        let recs: Vec<Rec> = (0..4).map(|j| and(100 + 7 * j, 10 + 3 * j, 50)).collect();
        let kinds = [Kind::And, Kind::Or, Kind::And, Kind::Or];
        let batches: Vec<Batch> = (0..4)
            .map(|j| Batch {
                kind: kinds[j],
                start: j as u32,
                end: j as u32 + 1,
                output: j < 2,
            })
            .collect();
        let (steps, _, _) = steps(&batches, &recs, &[1; 4]);
        let spans: Vec<(Mode, u32, u32)> = steps.iter().map(|s| (s.mode, s.start, s.n)).collect();
        assert_eq!(spans, vec![(Mode::Mixed, 0, 2), (Mode::Mixed, 2, 2)]);
    }
}
