//! Inlined expressions behave like the netlist they replace: every operator under every
//! operator (in each operand position), plus random deeper trees, run on the native
//! simulator and on Verilator (the emitted, inlined Verilog) in lockstep, every output
//! compared after every input change; and on Icarus against the native simulator's
//! values. The text of the cases (parentheses, what stays a wire) is tested in
//! `gen/src/verilog/inline_tests.rs`.

mod verilog_common;

use hdl::{Module, ModuleBuilder, ResetPolarity, Signal};
use rand::Rng;
use testbench::dut::{ports_of, Dut, NativeDut};
use testbench::harness::{DiffConfig, Differential};
use testbench::pins::{Pin, Pins};
use testbench::rng::seeded;
use verilog_common::{run_comb, Engine};

/// Operand width of every case.
const W: u32 = 8;

/// Every way the cases combine values: each takes three `W`-bit operands and gives `W`
/// bits, through one IR operation of interest (and what adapts its widths).
const KINDS: &[&str] = &[
    "and",
    "or",
    "xor",
    "not",
    "add_wrap",
    "sub_wrap",
    "add_trunc",
    "mul",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "lts",
    "les",
    "gts",
    "ges",
    "mux",
    "mux_bit",
    "concat",
    "concat_ops",
    "replicate",
    "zext",
    "sext",
    "shl_by",
    "shr_by",
    "shr_by_expr",
    "sra_by",
    "shl",
    "shr",
    "sra",
    "r_and",
    "r_or",
    "r_xor",
    "not_reduce",
    "lz",
    "const",
];

/// The case `kind` on operands `x`, `y`, `z`.
fn apply(m: &mut ModuleBuilder, kind: &str, x: Signal, y: Signal, z: Signal) -> Signal {
    match kind {
        "and" => m.and(x, y),
        "or" => m.or(x, y),
        "xor" => m.xor(x, y),
        "not" => m.not(x),
        "add_wrap" => m.add_wrap(x, y),
        "sub_wrap" => m.sub_wrap(x, y),
        "add_trunc" => {
            let s = m.add(x, y);
            m.truncate(s, W)
        }
        "mul" => {
            let (a, b) = (m.truncate(x, W / 2), m.truncate(y, W / 2));
            m.mul(a, b)
        }
        "eq" | "ne" | "lt" | "le" | "gt" | "ge" | "lts" | "les" | "gts" | "ges" => {
            let c = match kind {
                "eq" => m.eq(x, y),
                "ne" => m.ne(x, y),
                "lt" => m.lt(x, y),
                "le" => m.le(x, y),
                "gt" => m.gt(x, y),
                "ge" => m.ge(x, y),
                "lts" => m.lt_signed(x, y),
                "les" => m.le_signed(x, y),
                "gts" => m.gt_signed(x, y),
                _ => m.ge_signed(x, y),
            };
            // Alternate the ways a 1-bit result is used: select, extension, copies.
            match kind.len() % 3 {
                0 => m.mux(c, z, x),
                1 => m.zext(c, W),
                _ => m.replicate(c, W),
            }
        }
        "mux" => {
            let s = m.reduce_xor(z);
            m.mux(s, x, y)
        }
        "mux_bit" => {
            let s = m.bit(z, 3);
            m.mux(s, x, y)
        }
        "concat" => {
            let (a, b) = (m.slice(x, 0, W / 2), m.slice(y, W / 2, W / 2));
            m.concat(&[a, b])
        }
        "concat_ops" => {
            let a = m.reduce_and(x);
            let b = m.eq(y, z);
            let c = m.slice(z, 0, W - 2);
            m.concat(&[a, b, c])
        }
        "replicate" => {
            let a = m.slice(x, 0, 2);
            m.replicate(a, W / 2)
        }
        "zext" => {
            let a = m.truncate(x, 5);
            m.zext(a, W)
        }
        "sext" => {
            let a = m.truncate(x, 5);
            m.sext(a, W)
        }
        "shl_by" => {
            let n = m.truncate(y, 3);
            m.shl_by(x, n)
        }
        "shr_by" => {
            let n = m.truncate(y, 4);
            m.shr_by(x, n)
        }
        "shr_by_expr" => {
            let (a, b) = (m.truncate(y, 3), m.truncate(z, 3));
            let n = m.xor(a, b);
            m.shr_by(x, n)
        }
        "sra_by" => {
            let n = m.truncate(y, 3);
            m.sra_by(x, n)
        }
        "shl" => m.shl(x, 3),
        "shr" => m.shr(x, 2),
        "sra" => m.sra(x, 5),
        "r_and" | "r_or" | "r_xor" => {
            let r = match kind {
                "r_and" => m.reduce_and(x),
                "r_or" => m.reduce_or(x),
                _ => m.reduce_xor(x),
            };
            let n = m.not(y);
            let r = m.replicate(r, W);
            m.xor(r, n)
        }
        "not_reduce" => {
            let r = m.reduce_and(x);
            let n = m.not(r);
            m.replicate(n, W)
        }
        "lz" => {
            let l = m.leading_zeros(x);
            m.zext(l, W)
        }
        _ => {
            let k = m.lit(0xa5, W);
            m.sub_wrap(k, x)
        }
    }
}

/// A random tree of cases `depth` deep over `leaves`.
fn tree(m: &mut ModuleBuilder, rng: &mut impl Rng, depth: u32, leaves: &[Signal]) -> Signal {
    if depth == 0 {
        return leaves[rng.gen_range(0..leaves.len())];
    }
    let kind = KINDS[rng.gen_range(0..KINDS.len())];
    let x = tree(m, rng, depth - 1, leaves);
    let dy = rng.gen_range(0..depth);
    let y = tree(m, rng, dy, leaves);
    let dz = rng.gen_range(0..depth);
    let z = tree(m, rng, dz, leaves);
    apply(m, kind, x, y, z)
}

/// Every case under every case (in each of its three operand positions), then
/// `trees` random trees; outputs gathered 16 to a port. With `clock`, a register too.
fn cases(trees: usize, rng: &mut impl Rng, clock: bool) -> Module {
    let mut m = ModuleBuilder::new("inline_cases");
    let a = m.input("a", W);
    let b = m.input("b", W);
    let c = m.input("c", W);
    let mut outs = Vec::new();
    for outer in KINDS {
        for inner in KINDS {
            let x = apply(&mut m, inner, a, b, c);
            let y = apply(&mut m, inner, b, c, a);
            let z = apply(&mut m, inner, c, a, b);
            outs.push(apply(&mut m, outer, x, y, z));
        }
    }
    for _ in 0..trees {
        let depth = rng.gen_range(2..6);
        outs.push(tree(&mut m, rng, depth, &[a, b, c]));
    }
    for (i, group) in outs.chunks(16).enumerate() {
        let y = m.concat(group);
        m.output(&format!("y{i}"), y);
    }
    if clock {
        let d = m.domain("d", "clk", Some("rst"), ResetPolarity::ActiveHigh);
        let folded = m.xor(outs[0], outs[outs.len() - 1]);
        let q = m.register(d, "q", folded);
        m.output("q_out", q);
    }
    m.finish().expect("inline_cases builds")
}

/// Input values: every edge value combination of a few, then random ones.
fn vectors(rng: &mut impl Rng, random: usize) -> Vec<[u64; 3]> {
    let edges = [0u64, 1, 0x7f, 0x80, 0xff, 0x55];
    let mut v = Vec::new();
    for &a in &edges {
        for &b in &edges {
            v.push([a, b, a ^ b]);
        }
    }
    for _ in 0..random {
        v.push([
            rng.gen_range(0..256),
            rng.gen_range(0..256),
            rng.gen_range(0..256),
        ]);
    }
    v
}

#[test]
fn every_operator_inlined_under_every_other_agrees_between_native_and_verilator() {
    let mut rng = seeded("inline cases verilator", 14);
    let m = cases(120, &mut rng, true);
    let design = gen::emit(&m).expect("emits");
    let text = &design.files[0].1;
    // The cases are written as expressions, not a wire per operation.
    let assigns = text.matches("    assign ").count();
    let ops = m
        .nets
        .iter()
        .filter(|n| matches!(n.driver, hdl::ir::Driver::Op(_)))
        .count();
    assert!(
        assigns * 5 < ops * 3,
        "{assigns} assigns for {ops} operations"
    );
    assert!(
        text.contains(") & (") || text.contains(") | ("),
        "no nesting?"
    );
    let inputs = vectors(&mut rng, 400);
    let mut i = 0usize;
    let pins =
        Pin::resolve_all(&ports_of(&m), ["rst", "a", "b", "c"]).unwrap_or_else(|e| panic!("{e}"));
    let report = Differential::new(&m)
        .try_run(&DiffConfig::cycles(inputs.len() as u64), |s| {
            let [a, b, c] = inputs[i.min(inputs.len() - 1)];
            i += 1;
            for (pin, value) in pins.into_iter().zip([0, a, b, c]) {
                s.set_u64(pin, value)?;
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(report.comparisons > 0);
}

#[test]
fn every_operator_inlined_under_every_other_agrees_between_native_and_icarus() {
    let mut rng = seeded("inline cases icarus", 15);
    let m = cases(60, &mut rng, false);
    let inputs = vectors(&mut rng, 200);
    let mut native = NativeDut::new(&m).expect("native model");
    let abc = Pin::resolve_all(native.ports(), ["a", "b", "c"]).unwrap_or_else(|e| panic!("{e}"));
    let outs: Vec<(Pin, String)> = native
        .ports()
        .iter()
        .enumerate()
        .filter(|(_, p)| p.direction == hdl::ir::Direction::Output && p.name.starts_with('y'))
        .map(|(i, p)| (Pin(i), p.name.clone()))
        .collect();
    // A `&mut &mut NativeDut`, so that `set_u64` and `get_into` are the `Pins` ones.
    let pins = &mut &mut native;
    let mut want: Vec<Vec<u128>> = Vec::new();
    for v in &inputs {
        for (pin, value) in abc.into_iter().zip(v) {
            pins.set_u64(pin, *value).expect("set");
        }
        let mut row = Vec::new();
        for (pin, _) in &outs {
            // Up to 128 bits per output (16 cases of 8 bits).
            let mut words = [0u64; 2];
            pins.get_into(*pin, &mut words).expect("get");
            let lo = words[0] as u128;
            let hi = words[1] as u128;
            row.push(lo | hi << 64);
        }
        want.push(row);
    }
    let rows: Vec<Vec<u128>> = inputs
        .iter()
        .map(|v| v.iter().map(|x| *x as u128).collect())
        .collect();
    let got = run_comb(&m, &rows, Engine::Icarus);
    for (r, (w, g)) in want.iter().zip(&got).enumerate() {
        for (k, (_, name)) in outs.iter().enumerate() {
            assert_eq!(
                w[k], g[k],
                "vector {r} {:?}: output {name}: native {:#x}, Icarus {:#x}",
                inputs[r], w[k], g[k]
            );
        }
    }
}

#[test]
fn every_operator_inlined_under_every_other_is_lint_clean() {
    let mut rng = seeded("inline cases lint", 16);
    let m = cases(60, &mut rng, true);
    // Verilator -Wall (no warning at all) and Icarus -g2005; Yosys runs on the
    // flagship designs (`wirespeed synth`), this many cases would take it minutes.
    verilog_common::check_tools(&m, false);
}
