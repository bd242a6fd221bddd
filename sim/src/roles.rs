//! Structural roles: a hash per net that is equal for the corresponding nets of
//! identical logic (the same adder in every lane, the same stage in every
//! instance). The layout orders each batch by role, so that the instructions of
//! identical instances sit side by side and read their operands from consecutive
//! words, which lets whole runs of them execute as one vector loop.
//!
//! A role is built from the net's driver, its operands' roles and its local name.
//! Generators name the nets of a lane or a port by its number (`lane3_rounded`,
//! `above_mean10`, `port2_header`), which gave every lane a role of its own: the
//! lanes of one instance then sat in the hashes' order, read their operands from
//! scattered words and never formed a run. A net whose role no other net has
//! therefore takes its *lane role* instead, when another net has that: the same
//! hash with every run of digits in the names read as one `#`. The lane role is
//! only the fallback: where identical instances already share roles, the names
//! of an instance's symmetric operands (`in0`, `in1`) keep telling them apart, as
//! their runs need (the lane role for every net left PANAMA SUME 50 of its 61
//! vector-loop calls).
//!
//! Roles only steer the layout; a collision or a miss costs speed, never
//! correctness.

use crate::flatten::FlatDesign;
use crate::fxhash::FxHashMap;
use crate::operands::each_operand;
use hdl::ir::{Driver, NetId, Op, ShiftAmount};

const K: u64 = 0x9e37_79b9_7f4a_7c15;

fn mix(h: u64, x: u64) -> u64 {
    (h.rotate_left(5) ^ x).wrapping_mul(K)
}

/// The hash of the bytes `s`, mixed eight at a time.
fn hash_bytes(s: &[u8]) -> u64 {
    let chunks = s.chunks_exact(8);
    let rest = chunks.remainder().iter().fold(0, |r, &b| r << 8 | b as u64);
    let h = chunks.fold(0, |h, c| {
        mix(h, u64::from_le_bytes(c.try_into().expect("eight bytes")))
    });
    mix(mix(h, rest), s.len() as u64)
}

/// `name` with every run of digits as one `#` (`lane12_sum3` → `lane#_sum#`).
fn without_numbers(name: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(name.len());
    for &b in name.as_bytes() {
        if !b.is_ascii_digit() {
            out.push(b);
        } else if out.last() != Some(&b'#') {
            out.push(b'#');
        }
    }
    out
}

/// The last part of a hierarchical name (`u_a.u_b.net` → `net`).
fn local_name(name: &str) -> &str {
    match name.as_bytes().iter().rposition(|&b| b == b'.') {
        Some(dot) => &name[dot + 1..],
        None => name,
    }
}

/// The parameters of `op` that make two operations differ (not its operands);
/// `wide_src` drops slice positions into wide buses (lane extraction).
fn op_params(op: &Op, wide_src: bool) -> u64 {
    let tag = match op {
        Op::Const(_) => 1,
        Op::Not(_) => 2,
        Op::Bit(..) => 3,
        Op::Arith(..) => 4,
        Op::Cmp(..) => 5,
        Op::Mux { .. } => 6,
        Op::Slice { .. } => 7,
        Op::Concat(_) => 8,
        Op::Replicate { .. } => 9,
        Op::Extend { .. } => 10,
        Op::Shift { .. } => 11,
        Op::Reduce(..) => 12,
        Op::LeadingZeros(_) => 13,
    };
    let mut h = mix(0, tag);
    match op {
        Op::Bit(o, ..) => h = mix(h, *o as u64),
        Op::Arith(o, ..) => h = mix(h, *o as u64),
        Op::Cmp(o, ..) => h = mix(h, *o as u64),
        Op::Reduce(o, _) => h = mix(h, *o as u64),
        Op::Slice { lo, .. } if !wide_src => h = mix(h, *lo as u64),
        Op::Replicate { count, .. } => h = mix(h, *count as u64),
        Op::Extend { signed, .. } => h = mix(h, *signed as u64),
        Op::Shift { op, amount, .. } => {
            h = mix(h, *op as u64);
            if let ShiftAmount::Const(k) = amount {
                h = mix(h, *k as u64 + 1);
            }
        }
        Op::Concat(parts) => h = mix(h, parts.len() as u64),
        _ => {}
    }
    h
}

/// The role of every net of the original (unsimplified) netlist, visiting `order`
/// (operands first): its structural hash, or its lane hash when no other net has
/// the structural one and another has the lane one (see the module's
/// documentation).
pub(crate) fn roles(flat: &FlatDesign, order: &[NetId]) -> Vec<u64> {
    let exact = hashes(flat, order, |name| hash_bytes(name.as_bytes()));
    let lane = hashes(flat, order, |name| hash_bytes(&without_numbers(name)));
    let (exact_count, lane_count) = (counts(&exact), counts(&lane));
    let shared = |counts: &FxHashMap<u64, u32>, h: u64| counts.get(&h).is_some_and(|&n| n > 1);
    (exact.iter().zip(&lane))
        .map(|(&e, &l)| {
            if !shared(&exact_count, e) && shared(&lane_count, l) {
                l
            } else {
                e
            }
        })
        .collect()
}

/// How many nets have each hash.
fn counts(hashes: &[u64]) -> FxHashMap<u64, u32> {
    let mut n = FxHashMap::default();
    hashes.iter().for_each(|&h| *n.entry(h).or_default() += 1);
    n
}

/// The structural hash of every net, visiting `order` (operands first): built
/// from the drivers, where operands still name the nets an instance sees (its
/// ports), and from local names, each hashed by `name`.
fn hashes(flat: &FlatDesign, order: &[NetId], name: impl Fn(&str) -> u64) -> Vec<u64> {
    let mut role = vec![0u64; flat.nets.len()];
    for &n in order {
        let i = n.0 as usize;
        let net = &flat.nets[i];
        let h = mix(1, net.width as u64);
        let mut h = match &net.driver {
            Driver::Alias(src) => mix(mix(h, 3), role[src.0 as usize]),
            Driver::Op(Op::Const(b)) => b.words().fold(mix(h, 2), mix),
            Driver::Op(op) => {
                let wide_src =
                    matches!(op, Op::Slice { src, .. } if flat.nets[src.0 as usize].width > 64);
                let mut h = mix(h, op_params(op, wide_src));
                each_operand(op, |o| h = mix(h, role[o.0 as usize]));
                h
            }
            // State: known by its local name (below).
            _ if net.name.is_some() => mix(h, 4),
            _ => mix(h, i as u64),
        };
        // A local name tells apart symmetric operands (an adder's `a` and `b` fed
        // from identical registers) and identifies state across instances.
        if let Some(local) = &net.name {
            h = mix(h, name(local_name(local)));
        }
        role[i] = h;
    }
    role
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::compile;
    use crate::flatten::flatten;
    use crate::instr::Mode;
    use crate::levelize::levelize;
    use hdl::{Module, ModuleBuilder};

    /// Sixteen 32-bit lanes of a 512-bit input, each `lane{i}_sum` = lane + 5,
    /// each sum named by its lane's number, all sums concatenated to the output.
    fn numbered_lanes() -> Module {
        let mut m = ModuleBuilder::new("numbered_lanes");
        let x = m.input("x", 512);
        let five = m.lit(5, 32);
        let sums: Vec<_> = (0..16)
            .map(|i| {
                let lane = m.slice(x, 32 * i, 32);
                let sum = m.add(lane, five);
                m.named(&format!("lane{i}_sum"), sum)
            })
            .collect();
        let all = m.concat(&sums);
        m.output("sums", all);
        m.finish().expect("a valid module")
    }

    /// Two instances of an adder of its inputs `in0` and `in1`, fed from fields of
    /// one 256-bit input (whose fields share a role whatever their position).
    fn two_adders() -> Module {
        let mut a = ModuleBuilder::new("adder");
        let (in0, in1) = (a.input("in0", 16), a.input("in1", 16));
        let sum = a.add(in0, in1);
        a.output("sum", sum);
        let adder = a.finish().expect("a valid module");
        let mut m = ModuleBuilder::new("two_adders");
        let x = m.input("x", 256);
        for k in 0..2 {
            let u = m.instance(&format!("u{k}"), &adder);
            for (j, port) in ["in0", "in1"].into_iter().enumerate() {
                let field = m.slice(x, 32 * (2 * k + j as u32), 16);
                m.connect(u, port, field);
            }
            let sum = m.instance_output(u, "sum");
            m.output(&format!("sum{k}"), sum);
        }
        m.finish().expect("a valid module")
    }

    /// The role of every net of `m` with a name, by name.
    fn named_roles(m: &Module) -> Vec<(String, u64)> {
        let flat = flatten(m).expect("flattens");
        let role = roles(&flat, &levelize(&flat).expect("levelizes"));
        (flat.nets.iter().zip(role))
            .filter_map(|(n, r)| Some((n.name.clone()?, r)))
            .collect()
    }

    #[test]
    fn lanes_named_by_number_share_a_role() {
        let roles = named_roles(&numbered_lanes());
        let sums: Vec<u64> = (roles.iter())
            .filter(|(name, _)| name.starts_with("lane") && name.ends_with("_sum"))
            .map(|&(_, r)| r)
            .collect();
        assert_eq!(sums.len(), 16);
        assert!(sums.iter().all(|&r| r == sums[0]), "{roles:?}");
    }

    #[test]
    fn numbered_lanes_run_as_one_vector_step() {
        let prog = compile(&flatten(&numbered_lanes()).expect("flattens")).expect("compiles");
        let run = |kind| {
            (prog.code.steps.iter())
                .any(|s| s.kind == kind && matches!(s.mode, Mode::Run { .. }) && s.n == 16)
        };
        assert!(run(crate::instr::Kind::Add), "{:?}", prog.code.steps);
    }

    #[test]
    fn symmetric_operands_of_identical_instances_keep_their_own_roles() {
        let roles = named_roles(&two_adders());
        let role = |name: &str| {
            let found = roles.iter().find(|(n, _)| n.ends_with(name));
            found
                .unwrap_or_else(|| panic!("no net {name} in {roles:?}"))
                .1
        };
        assert_eq!(role("u0.in0"), role("u1.in0"), "identical instances");
        assert_ne!(role("u0.in0"), role("u0.in1"), "symmetric operands");
    }
}
