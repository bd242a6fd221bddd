//! The mutation pass (`hdl::ir::mutate`): which sites a design has (one per
//! kind and generator line), and that applying one changes exactly what that
//! line built, in every instance of its module, and nothing else.

use hdl::ir::mutate::{apply, sites, MutationKind, Target};
use hdl::ir::{ArithOp, BitOp, CmpOp, Driver, Module, Op};
use hdl::{ModuleBuilder, ResetPolarity};

/// `y = sel ? a : b`, `same = a == b`, `acc` loading `a + b` when `sel`, reset
/// to 5, and `x0`, `x1` = `a ^ b` and `a ^ y` built by one line.
fn leaf() -> Module {
    let mut m = ModuleBuilder::new("leaf");
    let clk = m.domain("clk", "clk", Some("rst"), ResetPolarity::ActiveHigh);
    let a = m.input("a", 8);
    let b = m.input("b", 8);
    let sel = m.input("sel", 1);
    let y = m.mux(sel, a, b);
    m.output("y", y);
    let same = m.eq(a, b);
    m.output("same", same);
    let acc = m.reg_init(clk, "acc", 8, 5);
    let sum = m.add_wrap(a, b);
    m.set_next(acc, sum);
    m.set_enable(acc, sel);
    m.output("acc_q", acc);
    for (k, other) in [b, y].into_iter().enumerate() {
        let x = m.xor(a, other);
        m.output(&format!("x{k}"), x);
    }
    m.finish().expect("leaf is valid")
}

/// Two instances of [`leaf`] side by side.
fn top() -> Module {
    let leaf = leaf();
    let mut m = ModuleBuilder::new("top");
    let clk = m.domain("clk", "clk", Some("rst"), ResetPolarity::ActiveHigh);
    let a = m.input("a", 8);
    let b = m.input("b", 8);
    let sel = m.input("sel", 1);
    for i in 0..2 {
        let u = m.instance(&format!("u{i}"), &leaf);
        m.bind_domain(u, "clk", clk);
        m.connect(u, "a", a);
        m.connect(u, "b", b);
        m.connect(u, "sel", sel);
        let y = m.instance_output(u, "y");
        m.output(&format!("y{i}"), y);
    }
    m.finish().expect("top is valid")
}

fn op_of(m: &Module, target: Target) -> Op {
    let Target::Net(n) = target else {
        panic!("not a net")
    };
    match &m.net(n).driver {
        Driver::Op(op) => op.clone(),
        d => panic!("not an operation: {d:?}"),
    }
}

#[test]
fn a_design_lists_one_site_per_operation_and_register_property_of_each_module_once() {
    let all = sites(&top());
    let kinds: Vec<(MutationKind, usize)> = all.iter().map(|s| (s.kind, s.targets.len())).collect();
    // `top` has no logic of its own; `leaf` appears once though instantiated
    // twice; the two xors of one line are one site.
    assert_eq!(
        kinds,
        [
            (MutationKind::MuxArms, 1),
            (MutationKind::Equality, 1),
            (MutationKind::Arithmetic, 1),
            (MutationKind::Logic, 2),
            (MutationKind::Enable, 1),
            (MutationKind::ResetValue, 1),
        ]
    );
    assert!(all
        .iter()
        .all(|s| s.targets.iter().all(|(m, _)| m == "leaf")));
    for s in &all {
        let at = s.location.relative().expect("a builder line");
        assert!(at.starts_with("hdl/tests/mutate.rs:"), "{at}");
    }
}

#[test]
fn a_mutant_changes_its_site_in_every_instance_and_nothing_else() {
    let top = top();
    let original = leaf();
    for site in sites(&top) {
        let mutant = apply(&top, &site).expect("the site applies");
        assert_ne!(mutant, top, "{}", site.describe());
        let copies: Vec<&Module> = mutant.instances.iter().map(|i| &i.module).collect();
        assert!(
            copies.iter().all(|c| **c == *copies[0]),
            "both instances mutated alike"
        );
        let m = copies[0];
        for &(_, target) in &site.targets {
            match (site.kind, target) {
                (MutationKind::MuxArms, t) => {
                    let (
                        Op::Mux {
                            if_true: a,
                            if_false: b,
                            ..
                        },
                        Op::Mux {
                            if_true: c,
                            if_false: d,
                            ..
                        },
                    ) = (op_of(&original, t), op_of(m, t))
                    else {
                        panic!("not a mux")
                    };
                    assert_eq!((a, b), (d, c));
                }
                (MutationKind::Equality, t) => {
                    assert!(matches!(op_of(m, t), Op::Cmp(CmpOp::Ne, ..)));
                }
                (MutationKind::Arithmetic, t) => {
                    assert!(matches!(op_of(m, t), Op::Arith(ArithOp::Sub, ..)));
                }
                (MutationKind::Enable, Target::Reg(r)) => {
                    assert!(original.regs[r.0 as usize].enable.is_some());
                    assert_eq!(m.regs[r.0 as usize].enable, None);
                }
                (MutationKind::ResetValue, Target::Reg(r)) => {
                    let value = m.regs[r.0 as usize].reset_value.as_ref().expect("reset");
                    assert_eq!(value.to_u64(), Some(4), "5 with bit 0 flipped");
                }
                (MutationKind::Logic, t) => {
                    assert!(matches!(op_of(m, t), Op::Bit(BitOp::Or, ..)));
                }
                (kind, target) => panic!("unexpected site {kind:?} at {target:?}"),
            }
        }
        // Everything but the site is as it was.
        let mut restored = (**m).clone();
        restored.nets = original.nets.clone();
        restored.regs = original.regs.clone();
        assert_eq!(restored, *original, "{}", site.describe());
    }
}

#[test]
fn a_site_of_another_design_does_not_apply() {
    let site = sites(&top()).remove(0);
    let mut m = ModuleBuilder::new("other");
    let a = m.input("a", 1);
    m.output("y", a);
    let other = m.finish().expect("valid");
    assert_eq!(apply(&other, &site), None);
}

/// `a & b`, built on this one line for every caller.
fn both(m: &mut ModuleBuilder, a: hdl::Signal, b: hdl::Signal) -> hdl::Signal {
    m.and(a, b)
}

#[test]
fn a_line_shared_by_a_module_and_one_inside_it_is_mutated_in_both() {
    let mut inner = ModuleBuilder::new("inner");
    let a = inner.input("a", 4);
    let b = inner.input("b", 4);
    let y = both(&mut inner, a, b);
    inner.output("y", y);
    let inner = inner.finish().expect("valid");
    let mut outer = ModuleBuilder::new("outer");
    let a = outer.input("a", 4);
    let b = outer.input("b", 4);
    let u = outer.instance("u", &inner);
    outer.connect(u, "a", a);
    outer.connect(u, "b", b);
    let from_inner = outer.instance_output(u, "y");
    let y = both(&mut outer, from_inner, b);
    outer.output("y", y);
    let outer = outer.finish().expect("valid");

    let all = sites(&outer);
    assert_eq!(all.len(), 1, "one line, one site");
    let places: Vec<&str> = all[0].targets.iter().map(|(m, _)| m.as_str()).collect();
    assert_eq!(places, ["outer", "inner"]);
    let mutant = apply(&outer, &all[0]).expect("applies");
    for (module, target) in &all[0].targets {
        let m = if module == "outer" {
            &mutant
        } else {
            &mutant.instances[0].module
        };
        assert!(
            matches!(op_of(m, *target), Op::Bit(BitOp::Or, ..)),
            "{module}"
        );
    }
}
