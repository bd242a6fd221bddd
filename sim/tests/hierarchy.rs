//! Hierarchy: a module instantiated twice, domains bound through instances, reset
//! polarity inversion (parent active-low, child active-high), hierarchical names.

mod common;

use hdl::{Module, ModuleBuilder, ResetPolarity};
use sim::Simulator;

/// Active-low parent with two counters.
fn pair() -> Module {
    let child = common::enabled_counter();
    let mut m = ModuleBuilder::new("pair");
    let sys = m.domain("sys", "aclk", Some("aresetn"), ResetPolarity::ActiveLow);
    let en0 = m.input("en0", 1);
    let en1 = m.input("en1", 1);
    let inc = m.input("inc", 8);
    let mut outs = Vec::new();
    for (name, en) in [("u0", en0), ("u1", en1)] {
        let u = m.instance(name, &child);
        m.bind_domain(u, "clk", sys);
        m.connect(u, "en", en);
        m.connect(u, "inc", inc);
        outs.push(m.instance_output(u, "count"));
    }
    let total = m.add(outs[0], outs[1]);
    m.output("c0", outs[0]);
    m.output("c1", outs[1]);
    m.output("total", total);
    let u0 = m.named("u0_ahead_copy", outs[0]);
    m.output("c0_again", u0);
    m.finish().unwrap()
}

#[test]
fn two_instances_count_independently_with_hierarchical_names() {
    let mut s = Simulator::new(&pair()).unwrap();
    assert_eq!(
        s.get_u64("aresetn").unwrap(),
        1,
        "active-low reset starts inactive"
    );
    s.set_u64("en0", 1).unwrap();
    s.set_u64("en1", 0).unwrap();
    s.set_u64("inc", 3).unwrap();
    s.step_n(4);
    assert_eq!(s.get_u64("c0").unwrap(), 12);
    assert_eq!(s.get_u64("c1").unwrap(), 0);
    assert_eq!(s.peek_u64("u0.value").unwrap(), 12);
    assert_eq!(s.peek_u64("u1.value").unwrap(), 0);
    assert_eq!(s.peek_u64("u0.count").unwrap(), 12, "child output port net");
    assert_eq!(
        s.peek_u64("u0.ahead").unwrap(),
        15,
        "combinational output of an instance"
    );
    assert_eq!(
        s.peek_u64("u0.value").unwrap(),
        12,
        "instance output net in the parent"
    );
    assert_eq!(
        s.peek_u64("u0.inc").unwrap(),
        3,
        "instance input aliases the parent net"
    );
    assert_eq!(s.get_u64("total").unwrap(), 12);
    s.set_u64("en1", 1).unwrap();
    s.step_n(2);
    assert_eq!(s.get_u64("c0").unwrap(), 18);
    assert_eq!(s.get_u64("c1").unwrap(), 6);
    assert_eq!(s.get_u64("total").unwrap(), 24);
    assert_eq!(s.get_u64("c0_again").unwrap(), 18);
}

#[test]
fn inverted_reset_reaches_active_high_children() {
    let mut s = Simulator::new(&pair()).unwrap();
    s.set_u64("en0", 1).unwrap();
    s.set_u64("en1", 1).unwrap();
    s.set_u64("inc", 5).unwrap();
    s.step_n(3);
    assert_eq!(s.get_u64("c0").unwrap(), 15);
    // The helper drives the parent's active-low reset low.
    s.reset(2);
    assert_eq!(s.get_u64("c0").unwrap(), 0);
    assert_eq!(s.get_u64("c1").unwrap(), 0);
    assert_eq!(s.get_u64("aresetn").unwrap(), 1);
    assert_eq!(
        s.peek_u64("u0.rst").unwrap(),
        0,
        "child's active-high reset is the inverse"
    );
    s.step();
    assert_eq!(s.get_u64("c0").unwrap(), 5);
    // Driving the reset port directly works too.
    s.set_u64("aresetn", 0).unwrap();
    assert_eq!(s.peek_u64("u1.rst").unwrap(), 1);
    s.step();
    assert_eq!(s.get_u64("c0").unwrap(), 0);
    s.set_u64("aresetn", 1).unwrap();
    s.step_n(2);
    assert_eq!(s.get_u64("c1").unwrap(), 10);
}

#[test]
fn three_levels_flatten_with_dotted_paths() {
    let inner = pair();
    let mut m = ModuleBuilder::new("outer");
    let clk = m.domain("main", "clk", Some("rst"), ResetPolarity::ActiveHigh);
    let en = m.input("en", 1);
    let inc = m.input("inc", 8);
    let mut totals = Vec::new();
    for name in ["v", "w"] {
        let u = m.instance(name, &inner);
        m.bind_domain(u, "sys", clk);
        m.connect(u, "en0", en);
        m.connect(u, "en1", en);
        m.connect(u, "inc", inc);
        totals.push(m.instance_output(u, "total"));
    }
    m.output("tv", totals[0]);
    m.output("tw", totals[1]);
    let module = m.finish().unwrap();
    let mut s = Simulator::new(&module).unwrap();
    assert_eq!(s.domain_names(), vec!["main"]);
    s.set_u64("en", 1).unwrap();
    s.set_u64("inc", 1).unwrap();
    s.step_n(7);
    assert_eq!(s.get_u64("tv").unwrap(), 14);
    assert_eq!(s.peek_u64("w.u1.value").unwrap(), 7);
    assert_eq!(
        s.peek_u64("v.aresetn").unwrap(),
        1,
        "active-high rst 0 inverted for pair"
    );
    s.set_u64("rst", 1).unwrap();
    assert_eq!(s.peek_u64("v.u0.rst").unwrap(), 1, "inverted twice");
    s.step();
    assert_eq!(s.peek_u64("w.u0.value").unwrap(), 0);
    assert_eq!(s.get_u64("tw").unwrap(), 0);
}
