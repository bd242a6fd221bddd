//! The fold classes of small values, each against what it is: a value taken to vary
//! takes more than one value whatever its leaves hold; a constant, a value one of
//! Verilator's folds reduces to a constant (`x & 0`, `x ^ x`, a select of zero bits),
//! or one whose variation the rules do not prove (a mask over an operand with
//! constant bits) is not taken to vary.

use super::fold::{Fold, Folds};
use hdl::{Bits, ModuleBuilder, Signal};

/// The class of each value `f` builds from two free 8-bit inputs `x`, `y` and a free
/// 1-bit input `s`, with its label.
fn classes(
    f: impl FnOnce(&mut ModuleBuilder, Signal, Signal, Signal) -> Vec<(&'static str, Signal)>,
) -> Vec<(&'static str, Fold)> {
    let mut m = ModuleBuilder::new("t");
    let x = m.input("x", 8);
    let y = m.input("y", 8);
    let s = m.input("s", 1);
    let values = f(&mut m, x, y, s);
    for (i, (_, v)) in values.iter().enumerate() {
        m.output(&format!("o{i}"), *v);
    }
    let module = m.finish().expect("builds");
    let order = hdl::ir::comb_order(&module).expect("no loop");
    let folds = Folds::new(&module, &order);
    values
        .into_iter()
        .map(|(label, v)| (label, folds.value(v.net())))
        .collect()
}

/// `{x[3:0], 4'h0}`: a value whose low bits are literal zeros.
fn padded(m: &mut ModuleBuilder, x: Signal) -> Signal {
    let lo = m.slice(x, 0, 4);
    let z = m.zeros(4);
    m.concat(&[lo, z])
}

/// Asserts every value has the class it is listed with.
fn check(want: Fold, got: Vec<(&'static str, Fold)>) {
    for (label, class) in got {
        assert_eq!(class, want, "{label}");
    }
}

#[test]
fn leaves_and_their_wiring_are_free() {
    check(
        Fold::Free,
        classes(|m, x, y, _| {
            let nx = m.not(x);
            let lo = m.slice(x, 0, 4);
            let hi = m.slice(y, 4, 4);
            let cat = m.concat(&[lo, hi]);
            let k = m.lit(0x5a, 8);
            let flipped = m.xor(x, k);
            let sra = m.sra(x, 3);
            vec![
                ("x", x),
                ("~x", nx),
                ("{x[3:0], y[7:4]}", cat),
                ("x ^ 8'h5a", flipped),
                ("x >>> 3", sra),
            ]
        }),
    );
}

#[test]
fn values_no_fold_can_make_constant_vary() {
    check(
        Fold::Varies,
        classes(|m, x, y, s| {
            let padded = padded(m, x);
            let wide = m.zext(x, 12);
            let mask = m.lit(0x0f, 8);
            let masked = m.and(x, mask);
            let one = m.lit(1, 8);
            let inc = m.add_wrap(x, one);
            let sum = m.add_wrap(padded, y);
            let three = m.lit(3, 8);
            let triple = m.mul(x, three);
            let two = m.lit(2, 8);
            let double = m.mul(x, two);
            let sixteen = m.lit(0x10, 8);
            let low_product = m.mul(x, sixteen);
            let low_product = m.slice(low_product, 0, 8);
            let xy = m.and(x, y);
            let shr = m.shr(x, 3);
            let by = m.shr_by(x, y);
            let (a, b) = (m.lit(1, 8), m.lit(2, 8));
            let pick = m.mux(s, a, b);
            let arm = m.mux(s, padded, a);
            let five = m.lit(5, 8);
            let eq = m.eq(x, five);
            let lt = m.lt(x, five);
            let le = m.le(x, y);
            let any = m.reduce_or(x);
            let q = m.eq(x, one);
            let r = m.eq(y, one);
            let both = m.and(q, r);
            vec![
                ("{x[3:0], 4'h0}", padded),
                ("zext x", wide),
                ("x & 8'h0f", masked),
                ("x + 1", inc),
                ("{x[3:0], 4'h0} + y", sum),
                ("x * 3", triple),
                ("x * 2", double),
                ("(x * 8'h10)[7:0]", low_product),
                ("x & y", xy),
                ("x >> 3", shr),
                ("x >> y", by),
                ("s ? 1 : 2", pick),
                ("s ? {x[3:0], 4'h0} : 1", arm),
                ("x == 5", eq),
                ("x < 5", lt),
                ("x <= y", le),
                ("|x", any),
                ("(x == 1) & (y == 1)", both),
            ]
        }),
    );
}

#[test]
fn constants_and_values_not_proven_to_vary_may_fold() {
    check(
        Fold::Foldable,
        classes(|m, x, y, s| {
            let padded = padded(m, x);
            let low_zeros = m.slice(padded, 0, 4);
            let zero = m.zeros(8);
            let ones = m.ones(8);
            let k = m.constant(&Bits::from_words(&[0xf0], 8));
            let high_mask = m.lit(0x0f, 8);
            let none = m.and(x, zero);
            let all = m.or(x, ones);
            let masked_out = m.and(padded, high_mask);
            let same = m.xor(x, x);
            let diff = m.sub_wrap(x, x);
            let nx = m.not(x);
            let plus_not = m.add_wrap(x, nx);
            let and_not = m.and(x, nx);
            let sixteen = m.lit(0x10, 8);
            let shifted_out = m.mul(padded, sixteen);
            let shifted_out = m.slice(shifted_out, 0, 8);
            let out = m.shl(x, 8);
            let lit_sel = m.lit(1, 1);
            let by_lit = m.mux(lit_sel, x, y);
            let z1 = m.zeros(8);
            let z2 = m.zeros(8);
            let equal_arms = m.mux(s, z1, z2);
            let one_bit = m.lit(1, 1);
            let tied = m.mux(s, s, one_bit);
            let below_zero = m.lt(x, zero);
            let up_to_max = m.le(x, ones);
            let any_padded = m.reduce_or(padded);
            let padded_y = m.and(padded, y);
            vec![
                ("8'hf0", k),
                ("{x[3:0], 4'h0}[3:0]", low_zeros),
                ("x & 0", none),
                ("x | 8'hff", all),
                ("{x[3:0], 4'h0} & 8'h0f", masked_out),
                ("x ^ x", same),
                ("x - x", diff),
                ("x + ~x", plus_not),
                ("x & ~x", and_not),
                ("({x[3:0], 4'h0} * 8'h10)[7:0]", shifted_out),
                ("x << 8", out),
                ("1 ? x : y", by_lit),
                ("s ? 0 : 0", equal_arms),
                ("s ? s : 1", tied),
                ("x < 0", below_zero),
                ("x <= 8'hff", up_to_max),
                ("|{x[3:0], 4'h0}", any_padded),
                ("{x[3:0], 4'h0} & y", padded_y),
            ]
        }),
    );
}
