//! The analysis of decided operations (`hdl::ir::decided`): each kind it names
//! is found, in a module below the top too, and logic nothing decides (a constant
//! written by its parts, an operation on inputs, a literal that is neither the
//! identity, absorbing nor an end of an order's range) is left alone.

use hdl::ir::decided::{decided_operations, DecidedBy};
use hdl::{ModuleBuilder, Signal};

/// Builds a module's one output from two 8-bit inputs `a`, `b` and a 1-bit `s`.
type Build = Box<dyn FnOnce(&mut ModuleBuilder, Signal, Signal, Signal) -> Signal>;

/// What the analysis says of the module `build` makes.
fn verdict(build: Build) -> Vec<DecidedBy> {
    let mut m = ModuleBuilder::new("subject");
    let a = m.input("a", 8);
    let b = m.input("b", 8);
    let s = m.input("s", 1);
    let y = build(&mut m, a, b, s);
    m.output("y", y);
    let module = m.finish().expect("the subject is valid");
    decided_operations(&module).iter().map(|d| d.by).collect()
}

/// A module whose output is `compare(a, k)` for the 8-bit literal `k`, widened.
fn order(compare: fn(&mut ModuleBuilder, Signal, Signal) -> Signal, k: u64) -> Build {
    Box::new(move |m, a, _, _| {
        let k = m.lit(k, 8);
        let c = compare(m, a, k);
        m.zext(c, 8)
    })
}

#[test]
fn each_kind_of_decided_operation_is_found() {
    use DecidedBy::*;
    let cases: Vec<(&str, DecidedBy, Build)> = vec![
        (
            "literal + literal",
            AllLiterals,
            Box::new(|m, _, _, _| {
                let (x, y) = (m.lit(3, 8), m.lit(4, 8));
                m.add_wrap(x, y)
            }),
        ),
        (
            "literal < literal",
            AllLiterals,
            Box::new(|m, _, _, _| {
                let (x, y) = (m.lit(3, 8), m.lit(4, 8));
                let lt = m.lt(x, y);
                m.zext(lt, 8)
            }),
        ),
        (
            "a literal select",
            LiteralSelect,
            Box::new(|m, a, b, _| {
                let never = m.lit(0, 1);
                m.mux(never, a, b)
            }),
        ),
        (
            "a literal select through a named wire",
            LiteralSelect,
            Box::new(|m, a, b, _| {
                let never = m.lit(1, 1);
                let never = m.named("never", never);
                m.mux(never, a, b)
            }),
        ),
        (
            "the same arm twice",
            EqualArms,
            Box::new(|m, a, _, s| m.mux(s, a, a)),
        ),
        (
            "equal literal arms",
            EqualArms,
            Box::new(|m, _, _, s| {
                let (x, y) = (m.lit(9, 8), m.lit(9, 8));
                m.mux(s, x, y)
            }),
        ),
        (
            "a & 0",
            Absorbing,
            Box::new(|m, a, _, _| {
                let z = m.zeros(8);
                m.and(a, z)
            }),
        ),
        (
            "~0 | a",
            Absorbing,
            Box::new(|m, a, _, _| {
                let o = m.ones(8);
                m.or(o, a)
            }),
        ),
        (
            "a * 0",
            Absorbing,
            Box::new(|m, a, _, _| {
                let z = m.zeros(8);
                let p = m.mul(a, z);
                m.truncate(p, 8)
            }),
        ),
        (
            "a & ~0",
            Identity,
            Box::new(|m, a, _, _| {
                let o = m.ones(8);
                m.and(a, o)
            }),
        ),
        (
            "a ^ 0",
            Identity,
            Box::new(|m, a, _, _| {
                let z = m.zeros(8);
                m.xor(a, z)
            }),
        ),
        (
            "0 + a",
            Identity,
            Box::new(|m, a, _, _| {
                let z = m.zeros(8);
                m.add_wrap(z, a)
            }),
        ),
        (
            "a - 0",
            Identity,
            Box::new(|m, a, _, _| {
                let z = m.zeros(8);
                m.sub_wrap(a, z)
            }),
        ),
        (
            "1 * a",
            Identity,
            Box::new(|m, a, _, _| {
                let one = m.lit(1, 8);
                let p = m.mul(one, a);
                m.truncate(p, 8)
            }),
        ),
        ("a << 0", Identity, Box::new(|m, a, _, _| m.shl(a, 0))),
        ("a | a", SameOperands, Box::new(|m, a, _, _| m.or(a, a))),
        (
            "a ^ a through a named wire",
            SameOperands,
            Box::new(|m, a, _, _| {
                let same = m.named("same", a);
                m.xor(a, same)
            }),
        ),
        (
            "a - a",
            SameOperands,
            Box::new(|m, a, _, _| m.sub_wrap(a, a)),
        ),
        (
            "a < a",
            SameOperands,
            Box::new(|m, a, _, _| {
                let lt = m.lt(a, a);
                m.zext(lt, 8)
            }),
        ),
        ("a < 0", Absorbing, order(|m, a, k| m.lt(a, k), 0)),
        ("a >= 0 (0 <= a)", Absorbing, order(|m, a, k| m.ge(a, k), 0)),
        (
            "~0 < a (a > ~0)",
            Absorbing,
            order(|m, a, k| m.gt(a, k), 0xff),
        ),
        ("a <= ~0", Absorbing, order(|m, a, k| m.le(a, k), 0xff)),
        (
            "signed a < -128",
            Absorbing,
            order(|m, a, k| m.lt_signed(a, k), 0x80),
        ),
        (
            "signed a <= 127",
            Absorbing,
            order(|m, a, k| m.le_signed(a, k), 0x7f),
        ),
        (
            "signed 127 < a",
            Absorbing,
            order(|m, a, k| m.gt_signed(a, k), 0x7f),
        ),
        (
            "signed -128 <= a",
            Absorbing,
            order(|m, a, k| m.ge_signed(a, k), 0x80),
        ),
        (
            "a >> a literal zero",
            Identity,
            Box::new(|m, a, _, _| {
                let z = m.zeros(3);
                m.shr_by(a, z)
            }),
        ),
    ];
    for (what, want, build) in cases {
        assert_eq!(verdict(build), vec![want], "{what}");
    }
}

#[test]
fn logic_no_literal_decides_is_left_alone() {
    let cases: Vec<(&str, Build)> = vec![
        (
            "a constant by its parts",
            Box::new(|m, _, _, _| {
                let k = m.lit(0x7, 4);
                let k = m.replicate(k, 2);
                let z = m.lit(0, 1);
                let k = m.truncate(k, 7);
                m.concat(&[z, k])
            }),
        ),
        (
            "a literal select between inputs' logic",
            Box::new(|m, a, b, s| m.mux(s, a, b)),
        ),
        (
            "a - 0 the other way round",
            Box::new(|m, a, _, _| {
                let z = m.zeros(8);
                m.sub_wrap(z, a)
            }),
        ),
        ("a + 1", Box::new(|m, a, _, _| m.add_const_wrap(a, 1))),
        (
            "a & a mask",
            Box::new(|m, a, _, _| {
                let k = m.lit(0x0f, 8);
                m.and(a, k)
            }),
        ),
        (
            "a ^ ~0 (a complement)",
            Box::new(|m, a, _, _| {
                let o = m.ones(8);
                m.xor(a, o)
            }),
        ),
        (
            "a * 2",
            Box::new(|m, a, _, _| {
                let two = m.lit(2, 8);
                let p = m.mul(a, two);
                m.truncate(p, 8)
            }),
        ),
        ("a << 1", Box::new(|m, a, _, _| m.shl(a, 1))),
        ("a + a (twice a)", Box::new(|m, a, _, _| m.add_wrap(a, a))),
        (
            "a * a",
            Box::new(|m, a, _, _| {
                let p = m.mul(a, a);
                m.truncate(p, 8)
            }),
        ),
        ("a < 1", order(|m, a, k| m.lt(a, k), 1)),
        ("0 < a", order(|m, a, k| m.gt(a, k), 0)),
        ("a < ~0", order(|m, a, k| m.lt(a, k), 0xff)),
        ("signed a < 0", order(|m, a, k| m.lt_signed(a, k), 0)),
        (
            "signed a <= ~0 (-1)",
            order(|m, a, k| m.le_signed(a, k), 0xff),
        ),
        ("signed -128 < a", order(|m, a, k| m.gt_signed(a, k), 0x80)),
        (
            "a == b",
            Box::new(|m, a, b, _| {
                let e = m.eq(a, b);
                m.zext(e, 8)
            }),
        ),
    ];
    for (what, build) in cases {
        assert_eq!(verdict(build), vec![], "{what}");
    }
}

#[test]
fn modules_below_the_top_are_searched_once_each() {
    let mut leaf = ModuleBuilder::new("leaf");
    let a = leaf.input("a", 8);
    let z = leaf.zeros(8);
    let y = leaf.or(a, z);
    leaf.output("y", y);
    let leaf = leaf.finish().expect("leaf is valid");
    let mut top = ModuleBuilder::new("top");
    let a = top.input("a", 8);
    for i in 0..2 {
        let u = top.instance(&format!("u{i}"), &leaf);
        top.connect(u, "a", a);
        let y = top.instance_output(u, "y");
        top.output(&format!("y{i}"), y);
    }
    let top = top.finish().expect("top is valid");
    let found = decided_operations(&top);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].module, "leaf");
    assert_eq!(found[0].by, DecidedBy::Identity);
    let text = found[0].describe(&top);
    assert!(
        text.starts_with("hdl/tests/decided.rs:")
            && text.ends_with("or in leaf: a literal leaves the other operand unchanged"),
        "{text}"
    );
}
