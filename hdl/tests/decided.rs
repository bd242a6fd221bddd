//! The analysis of decided operations (`hdl::ir::decided`): each kind it names
//! is found, in a module below the top too, and logic nothing decides (a constant
//! written by its parts, an operation on inputs, a literal that is neither the
//! identity, absorbing nor an end of an order's range, a comparison whose sides'
//! values overlap, a sum that can wrap) is left alone.

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

/// A module whose output is `op(a, k)` for the 8-bit literal `k`, zero-extended
/// to 8 bits when narrower (a comparison's one bit).
fn against(op: fn(&mut ModuleBuilder, Signal, Signal) -> Signal, k: u64) -> Build {
    ranged(|_, a| a, op, k)
}

/// `a * b` kept to 8 bits.
fn product(m: &mut ModuleBuilder, a: Signal, b: Signal) -> Signal {
    let p = m.mul(a, b);
    m.truncate(p, 8)
}

/// Asserts that the analysis finds exactly `want` in each case's module.
fn assert_found(cases: Vec<(&str, DecidedBy, Build)>) {
    for (what, want, build) in cases {
        assert_eq!(verdict(build), vec![want], "{what}");
    }
}

#[test]
fn operations_of_literals_and_muxes_that_cannot_choose_are_found() {
    use DecidedBy::*;
    assert_found(vec![
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
                let always = m.lit(1, 1);
                let always = m.named("always", always);
                m.mux(always, a, b)
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
    ]);
}

#[test]
fn absorbing_and_identity_literals_are_found() {
    use DecidedBy::*;
    assert_found(vec![
        ("a & 0", Absorbing, against(|m, a, k| m.and(a, k), 0)),
        ("~0 | a", Absorbing, against(|m, a, k| m.or(k, a), 0xff)),
        ("a * 0", Absorbing, against(product, 0)),
        ("a & ~0", Identity, against(|m, a, k| m.and(a, k), 0xff)),
        ("a ^ 0", Identity, against(|m, a, k| m.xor(a, k), 0)),
        ("0 + a", Identity, against(|m, a, k| m.add_wrap(k, a), 0)),
        ("a - 0", Identity, against(|m, a, k| m.sub_wrap(a, k), 0)),
        ("1 * a", Identity, against(|m, a, k| product(m, k, a), 1)),
        ("a << 0", Identity, Box::new(|m, a, _, _| m.shl(a, 0))),
        (
            "a >> a literal zero",
            Identity,
            Box::new(|m, a, _, _| {
                let z = m.zeros(3);
                m.shr_by(a, z)
            }),
        ),
    ]);
}

#[test]
fn orders_with_an_end_of_their_range_are_found() {
    use DecidedBy::Absorbing;
    assert_found(vec![
        ("a < 0", Absorbing, against(|m, a, k| m.lt(a, k), 0)),
        (
            "a >= 0 (0 <= a)",
            Absorbing,
            against(|m, a, k| m.ge(a, k), 0),
        ),
        (
            "~0 < a (a > ~0)",
            Absorbing,
            against(|m, a, k| m.gt(a, k), 0xff),
        ),
        ("a <= ~0", Absorbing, against(|m, a, k| m.le(a, k), 0xff)),
        (
            "signed a < -128",
            Absorbing,
            against(|m, a, k| m.lt_signed(a, k), 0x80),
        ),
        (
            "signed a <= 127",
            Absorbing,
            against(|m, a, k| m.le_signed(a, k), 0x7f),
        ),
        (
            "signed 127 < a",
            Absorbing,
            against(|m, a, k| m.gt_signed(a, k), 0x7f),
        ),
        (
            "signed -128 <= a",
            Absorbing,
            against(|m, a, k| m.ge_signed(a, k), 0x80),
        ),
    ]);
}

#[test]
fn repeated_operands_are_found() {
    use DecidedBy::SameOperands;
    assert_found(vec![
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
    ]);
}

/// A module whose output is `cmp(x, k)` for `x` made from the input `a` and the
/// literal `k` of `x`'s width, zero-extended to 8 bits when narrower.
fn ranged(
    x: fn(&mut ModuleBuilder, Signal) -> Signal,
    cmp: fn(&mut ModuleBuilder, Signal, Signal) -> Signal,
    k: u64,
) -> Build {
    Box::new(move |m, a, _, _| {
        let x = x(m, a);
        let k = m.lit(k, x.width());
        let y = cmp(m, x, k);
        m.zext(y, 8)
    })
}

/// `{1'b0, a[3:0]} + 5'h01`: 1 to 16 (the Lightning collector's last lane, plus
/// one core).
fn nibble_plus_one(m: &mut ModuleBuilder, a: Signal) -> Signal {
    let low = m.truncate(a, 4);
    let low = m.zext(low, 5);
    m.add_const_wrap(low, 1)
}

/// `a[3:0]` zero-extended to 8 bits: 0 to 15.
fn low_nibble(m: &mut ModuleBuilder, a: Signal) -> Signal {
    let low = m.truncate(a, 4);
    m.zext(low, 8)
}

/// `a[3:0] | 8'h10`: 16 to 31.
fn nibble_or_16(m: &mut ModuleBuilder, a: Signal) -> Signal {
    let low = low_nibble(m, a);
    let bit4 = m.lit(0x10, 8);
    m.or(low, bit4)
}

#[test]
fn comparisons_their_operands_ranges_decide_are_found() {
    use DecidedBy::Ranges;
    assert_found(vec![
        (
            "{0, a[3:0]} + 1 > 16",
            Ranges,
            ranged(nibble_plus_one, |m, x, k| m.gt(x, k), 16),
        ),
        (
            "{0, a[3:0]} + 1 >= 1",
            Ranges,
            ranged(nibble_plus_one, |m, x, k| m.ge(x, k), 1),
        ),
        (
            "a[3:0] == 16",
            Ranges,
            ranged(low_nibble, |m, x, k| m.eq(x, k), 16),
        ),
        (
            "a >> 4 < 16",
            Ranges,
            ranged(|m, a| m.shr(a, 4), |m, x, k| m.lt(x, k), 16),
        ),
        (
            "(a & 8'h0f) <= 15",
            Ranges,
            ranged(
                |m, a| {
                    let mask = m.lit(0x0f, 8);
                    m.and(a, mask)
                },
                |m, x, k| m.le(x, k),
                15,
            ),
        ),
        (
            "{a[1:0], 2'b11} != 2",
            Ranges,
            ranged(
                |m, a| {
                    let low = m.truncate(a, 2);
                    let ones = m.lit(3, 2);
                    m.concat(&[low, ones])
                },
                |m, x, k| m.ne(x, k),
                2,
            ),
        ),
        (
            "(a[3:0] | 8'h10) < 16",
            Ranges,
            ranged(nibble_or_16, |m, x, k| m.lt(x, k), 16),
        ),
        (
            "(s ? 3 : 5) < 6",
            Ranges,
            Box::new(|m, _, _, s| {
                let (three, five, six) = (m.lit(3, 8), m.lit(5, 8), m.lit(6, 8));
                let x = m.mux(s, three, five);
                let y = m.lt(x, six);
                m.zext(y, 8)
            }),
        ),
        (
            "{4'h0, 4'h6} == 6 (a constant by its parts, equal to a literal)",
            Ranges,
            ranged(
                |m, _| {
                    let (zero, six) = (m.lit(0, 4), m.lit(6, 4));
                    m.concat(&[zero, six])
                },
                |m, x, k| m.eq(x, k),
                6,
            ),
        ),
        (
            "~a[3:0] (8 bits) >= 240",
            Ranges,
            ranged(
                |m, a| {
                    let low = low_nibble(m, a);
                    m.not(low)
                },
                |m, x, k| m.ge(x, k),
                0xf0,
            ),
        ),
    ]);
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
        ("a mux on an input", Box::new(|m, a, b, s| m.mux(s, a, b))),
        ("0 - a", against(|m, a, k| m.sub_wrap(k, a), 0)),
        ("a + 1", against(|m, a, k| m.add_wrap(a, k), 1)),
        ("a & a mask", against(|m, a, k| m.and(a, k), 0x0f)),
        (
            "a ^ ~0 (a complement)",
            against(|m, a, k| m.xor(a, k), 0xff),
        ),
        ("a * 2", against(product, 2)),
        ("a << 1", Box::new(|m, a, _, _| m.shl(a, 1))),
        ("a + a (twice a)", Box::new(|m, a, _, _| m.add_wrap(a, a))),
        ("a * a", Box::new(|m, a, _, _| product(m, a, a))),
        ("a < 1", against(|m, a, k| m.lt(a, k), 1)),
        ("0 < a", against(|m, a, k| m.gt(a, k), 0)),
        ("a < ~0", against(|m, a, k| m.lt(a, k), 0xff)),
        ("signed a < 0", against(|m, a, k| m.lt_signed(a, k), 0)),
        (
            "signed a <= ~0 (-1)",
            against(|m, a, k| m.le_signed(a, k), 0xff),
        ),
        (
            "signed -128 < a",
            against(|m, a, k| m.gt_signed(a, k), 0x80),
        ),
        (
            "a == b",
            Box::new(|m, a, b, _| {
                let e = m.eq(a, b);
                m.zext(e, 8)
            }),
        ),
        (
            "{0, a[3:0]} + 1 > 15 (16 is above)",
            ranged(nibble_plus_one, |m, x, k| m.gt(x, k), 15),
        ),
        (
            "a + 1 > 0 (255 + 1 wraps to 0)",
            ranged(|m, a| m.add_const_wrap(a, 1), |m, x, k| m.gt(x, k), 0),
        ),
        (
            "a - 1 < 255 (0 - 1 wraps to 255)",
            ranged(|m, a| m.sub_const_wrap(a, 1), |m, x, k| m.lt(x, k), 0xff),
        ),
        (
            "a[3:0] << 4 == 240 (a 4-bit field's top value, shifted)",
            ranged(
                |m, a| {
                    let low = low_nibble(m, a);
                    m.shl(low, 4)
                },
                |m, x, k| m.eq(x, k),
                0xf0,
            ),
        ),
        (
            "(a[3:0] | 8'h10) == 31 (both ends reached)",
            ranged(nibble_or_16, |m, x, k| m.eq(x, k), 31),
        ),
        (
            "a >> 4 == 15",
            ranged(|m, a| m.shr(a, 4), |m, x, k| m.eq(x, k), 15),
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
    let text = found[0].describe();
    assert!(
        text.starts_with("hdl/tests/decided.rs:")
            && text.ends_with("or in leaf: a literal leaves the other operand unchanged"),
        "{text}"
    );
}
