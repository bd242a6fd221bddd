//! Every class of bad design is rejected with its own error, naming the module and
//! the signal, and pointing at the builder call that made the mistake.

use hdl::ir::HdlErrorKind;
use hdl::{HdlError, ModuleBuilder, ResetPolarity};

fn clocked(name: &str) -> (ModuleBuilder, hdl::Domain) {
    let mut m = ModuleBuilder::new(name);
    let d = m.domain("clk", "clk", Some("rst"), ResetPolarity::ActiveHigh);
    (m, d)
}

fn expect_err(result: Result<hdl::Module, HdlError>) -> HdlError {
    match result {
        Ok(m) => panic!("module `{}` was accepted but is invalid", m.name),
        Err(e) => e,
    }
}

#[test]
fn width_mismatch_names_both_operands_and_the_call_site() {
    let mut m = ModuleBuilder::new("bad_width");
    let a = m.input("a", 8);
    let b = m.input("b", 9);
    let y = m.and(a, b);
    m.output("y", y);
    let e = expect_err(m.finish());
    assert!(
        matches!(e.kind, HdlErrorKind::WidthMismatch { ref op, .. } if op == "and"),
        "{e}"
    );
    assert_eq!(e.module, "bad_width");
    let text = e.to_string();
    assert!(
        text.contains("`a` is 8 bits") && text.contains("`b` is 9 bits"),
        "{text}"
    );
    assert!(
        e.location
            .as_deref()
            .unwrap_or("")
            .contains("design_errors.rs"),
        "{text}"
    );
}

#[test]
fn assigning_a_value_of_another_width_is_a_width_mismatch() {
    let mut m = ModuleBuilder::new("bad_assign");
    let a = m.input("a", 8);
    let y = m.output_wire("y", 4);
    m.assign(y, a);
    let e = expect_err(m.finish());
    assert!(matches!(e.kind, HdlErrorKind::WidthMismatch { .. }), "{e}");
    assert_eq!(e.signal.as_deref(), Some("y"));
}

#[test]
fn zero_width_is_rejected() {
    let mut m = ModuleBuilder::new("zero");
    let a = m.input("a", 0);
    m.output("y", a);
    let e = expect_err(m.finish());
    assert!(matches!(e.kind, HdlErrorKind::InvalidWidth(_)), "{e}");
    assert_eq!(e.signal.as_deref(), Some("a"));
}

#[test]
fn slice_out_of_range_is_rejected() {
    let mut m = ModuleBuilder::new("bad_slice");
    let a = m.input("a", 8);
    let y = m.slice(a, 4, 8);
    m.output("y", y);
    let e = expect_err(m.finish());
    assert!(
        e.to_string()
            .contains("bits [11:4] of `a`, which has 8 bits"),
        "{e}"
    );
}

#[test]
fn literal_that_does_not_fit_is_rejected() {
    let mut m = ModuleBuilder::new("bad_lit");
    let y = m.lit(256, 8);
    m.output("y", y);
    let e = expect_err(m.finish());
    assert!(e.to_string().contains("does not fit in 8 bits"), "{e}");
}

#[test]
fn undriven_output_is_rejected() {
    let mut m = ModuleBuilder::new("no_drive");
    let _y = m.output_wire("y", 4);
    let line = line!() - 1;
    let e = expect_err(m.finish());
    assert!(
        matches!(e.kind, HdlErrorKind::Undriven(ref s) if s.contains("output `y`")),
        "{e}"
    );
    // The error points at the generator line that declared the output.
    let at = format!("design_errors.rs:{line}");
    assert!(e.to_string().contains(&at), "{e} does not name {at}");
}

#[test]
fn undriven_wire_is_rejected() {
    let mut m = ModuleBuilder::new("no_drive_wire");
    let w = m.wire("floating", 4);
    let line = line!() - 1;
    m.output("y", w);
    let e = expect_err(m.finish());
    assert!(
        matches!(e.kind, HdlErrorKind::Undriven(ref s) if s.contains("wire `floating`")),
        "{e}"
    );
    let at = format!("design_errors.rs:{line}");
    assert!(e.to_string().contains(&at), "{e} does not name {at}");
}

#[test]
fn second_driver_is_rejected() {
    let mut m = ModuleBuilder::new("two_drivers");
    let a = m.input("a", 4);
    let b = m.input("b", 4);
    let w = m.wire("w", 4);
    m.assign(w, a);
    m.assign(w, b);
    m.output("y", w);
    let e = expect_err(m.finish());
    assert!(
        matches!(e.kind, HdlErrorKind::MultipleDrivers(ref s) if s.contains("`a`")),
        "{e}"
    );
    assert_eq!(e.signal.as_deref(), Some("w"));
}

#[test]
fn second_next_value_of_a_register_is_rejected() {
    let (mut m, clk) = clocked("two_nexts");
    let a = m.input("a", 4);
    let r = m.reg(clk, "r", 4);
    m.set_next(r, a);
    let na = m.not(a);
    m.set_next(r, na);
    m.output("y", r);
    let e = expect_err(m.finish());
    assert!(matches!(e.kind, HdlErrorKind::MultipleDrivers(_)), "{e}");
    assert_eq!(e.signal.as_deref(), Some("r"));
}

#[test]
fn combinational_loop_is_rejected_with_its_path() {
    let mut m = ModuleBuilder::new("loop");
    let a = m.input("a", 1);
    let w = m.wire("w", 1);
    let x = m.xor(a, w);
    let x = m.named("x", x);
    m.assign(w, x);
    m.output("y", w);
    let e = expect_err(m.finish());
    match &e.kind {
        HdlErrorKind::CombinationalLoop(path) => {
            assert!(
                path.contains(&"w".to_string()) && path.contains(&"x".to_string()),
                "{e}"
            );
            assert_eq!(path.first(), path.last(), "the path closes: {e}");
        }
        _ => panic!("expected a loop: {e}"),
    }
}

#[test]
fn combinational_loop_through_an_instance_is_rejected() {
    let mut child = ModuleBuilder::new("passthru");
    let i = child.input("i", 1);
    let o = child.not(i);
    child.output("o", o);
    let child = child.finish().unwrap();
    let mut m = ModuleBuilder::new("loop_parent");
    let u = m.instance("u", &child);
    let o = m.instance_output(u, "o");
    m.connect(u, "i", o);
    m.output("y", o);
    let e = expect_err(m.finish());
    assert!(matches!(e.kind, HdlErrorKind::CombinationalLoop(_)), "{e}");
}

#[test]
fn register_sampling_another_domain_is_rejected() {
    let mut m = ModuleBuilder::new("cdc_bad");
    let a = m.domain("fast", "clk_a", Some("rst_a"), ResetPolarity::ActiveHigh);
    let b = m.domain("slow", "clk_b", Some("rst_b"), ResetPolarity::ActiveLow);
    let x = m.input("x", 8);
    let ra = m.register(a, "ra", x);
    let rb = m.register(b, "rb", ra);
    m.output("y", rb);
    let e = expect_err(m.finish());
    match &e.kind {
        HdlErrorKind::CrossDomain(s) => {
            assert!(
                s.contains("register `rb`") && s.contains("`slow`") && s.contains("`fast`"),
                "{e}"
            )
        }
        _ => panic!("expected a crossing error: {e}"),
    }
}

#[test]
fn logic_mixing_two_domains_is_rejected() {
    let mut m = ModuleBuilder::new("cdc_mix");
    let a = m.domain("a", "clk_a", None, ResetPolarity::ActiveHigh);
    let b = m.domain("b", "clk_b", None, ResetPolarity::ActiveHigh);
    let x = m.input("x", 1);
    let ra = m.register(a, "ra", x);
    let rb = m.register(b, "rb", x);
    let both = m.and(ra, rb);
    m.output("y", both);
    let e = expect_err(m.finish());
    assert!(
        matches!(e.kind, HdlErrorKind::CrossDomain(ref s) if s.contains("combines")),
        "{e}"
    );
}

#[test]
fn input_feeding_two_domains_is_rejected() {
    let mut m = ModuleBuilder::new("cdc_fanout");
    let a = m.domain("a", "clk_a", None, ResetPolarity::ActiveHigh);
    let b = m.domain("b", "clk_b", None, ResetPolarity::ActiveHigh);
    let x = m.input("x", 1);
    let ra = m.register(a, "ra", x);
    let rb = m.register(b, "rb", x);
    m.output("ya", ra);
    m.output("yb", rb);
    let e = expect_err(m.finish());
    assert!(
        matches!(e.kind, HdlErrorKind::CrossDomain(ref s) if s.contains("input feeds")),
        "{e}"
    );
    assert_eq!(e.signal.as_deref(), Some("x"));
}

#[test]
fn crossing_through_an_instance_boundary_is_rejected() {
    let (mut child, clk) = clocked("child_reg");
    let d = child.input("d", 4);
    let q = child.register(clk, "q", d);
    child.output("q_out", q);
    let child = child.finish().unwrap();

    let mut m = ModuleBuilder::new("cdc_hier");
    let a = m.domain("a", "clk_a", Some("rst_a"), ResetPolarity::ActiveHigh);
    let b = m.domain("b", "clk_b", Some("rst_b"), ResetPolarity::ActiveHigh);
    let x = m.input("x", 4);
    let ra = m.register(a, "ra", x);
    let u = m.instance("u", &child);
    m.bind_domain(u, "clk", b);
    m.connect(u, "d", ra);
    let y = m.instance_output(u, "q_out");
    m.output("y", y);
    let e = expect_err(m.finish());
    assert!(
        matches!(e.kind, HdlErrorKind::CrossDomain(ref s) if s.contains("instance `u`")),
        "{e}"
    );
}

#[test]
fn synchronizer_from_std_makes_the_crossing_legal() {
    let sync = hdl::blocks::cdc::sync_bits(1, 2).unwrap();
    let mut m = ModuleBuilder::new("cdc_good");
    let a = m.domain("a", "clk_a", Some("rst_a"), ResetPolarity::ActiveHigh);
    let b = m.domain("b", "clk_b", Some("rst_b"), ResetPolarity::ActiveLow);
    let x = m.input("x", 1);
    let ra = m.register(a, "ra", x);
    let u = m.instance("u_sync", &sync);
    m.bind_domain(u, "clk", b);
    m.connect(u, "d", ra);
    let q = m.instance_output(u, "q");
    let rb = m.register(b, "rb", q);
    m.output("y", rb);
    assert!(m.finish().is_ok());
}

#[test]
fn memory_written_and_read_in_different_domains_is_rejected() {
    let mut m = ModuleBuilder::new("mem_cdc");
    let a = m.domain("a", "clk_a", None, ResetPolarity::ActiveHigh);
    let b = m.domain("b", "clk_b", None, ResetPolarity::ActiveHigh);
    let mem = m.memory("ram", 8, 16, None);
    let wa = m.input("wa", 4);
    let wd = m.input("wd", 8);
    let we = m.input("we", 1);
    let ra = m.input("ra", 4);
    m.mem_write(mem, a, wa, wd, we);
    let q = m.mem_read(mem, b, "q", ra, None);
    m.output("y", q);
    let e = expect_err(m.finish());
    assert!(
        matches!(e.kind, HdlErrorKind::CrossDomain(ref s) if s.contains("async_fifo")),
        "{e}"
    );
}

#[test]
fn duplicate_and_illegal_names_are_rejected() {
    let mut m = ModuleBuilder::new("names");
    let a = m.input("a", 1);
    let _ = m.input("a", 1);
    m.output("y", a);
    let e = expect_err(m.finish());
    assert!(
        matches!(e.kind, HdlErrorKind::BadName(ref s) if s.contains("clashes")),
        "{e}"
    );

    let mut m = ModuleBuilder::new("keyword");
    let a = m.input("module", 1);
    m.output("y", a);
    let e = expect_err(m.finish());
    assert!(
        matches!(e.kind, HdlErrorKind::BadName(ref s) if s.contains("not a legal identifier")),
        "{e}"
    );
}

#[test]
fn instance_mistakes_are_connection_errors() {
    let (mut child, clk) = clocked("leaf");
    let d = child.input("d", 4);
    let q = child.register(clk, "q_reg", d);
    child.output("q", q);
    let child = child.finish().unwrap();

    let (mut m, clk) = clocked("unconnected");
    let u = m.instance("u_leaf", &child);
    m.bind_domain(u, "clk", clk);
    let q = m.instance_output(u, "q");
    m.output("y", q);
    let e = expect_err(m.finish());
    assert!(
        matches!(e.kind, HdlErrorKind::Connection(ref s) if s.contains("input `d` is not connected")),
        "{e}"
    );
    assert_eq!(e.signal.as_deref(), Some("u_leaf"));

    let (mut m, _) = clocked("unbound");
    let u = m.instance("u_leaf", &child);
    let x = m.input("x", 4);
    m.connect(u, "d", x);
    let q = m.instance_output(u, "q");
    m.output("y", q);
    let e = expect_err(m.finish());
    assert!(
        matches!(e.kind, HdlErrorKind::Connection(ref s) if s.contains("not bound")),
        "{e}"
    );

    let (mut m, clk) = clocked("unknown_port");
    let u = m.instance("u_leaf", &child);
    m.bind_domain(u, "clk", clk);
    let x = m.input("x", 4);
    m.connect(u, "dd", x);
    let e = expect_err(m.finish());
    assert!(
        matches!(e.kind, HdlErrorKind::Connection(ref s) if s.contains("no port `dd`")),
        "{e}"
    );
}

#[test]
fn signal_of_another_builder_is_rejected() {
    let mut other = ModuleBuilder::new("other");
    let foreign = other.input("a", 1);
    let mut m = ModuleBuilder::new("mine");
    let a = m.input("a", 1);
    let y = m.and(a, foreign);
    m.output("y", y);
    let e = expect_err(m.finish());
    assert!(
        matches!(e.kind, HdlErrorKind::IllegalUse(ref s) if s.contains("another module")),
        "{e}"
    );
}

#[test]
fn memory_with_wrong_initial_contents_is_rejected() {
    let mut m = ModuleBuilder::new("rom");
    let words = vec![hdl::Bits::zero(8); 3];
    let _ = m.memory("weights", 8, 4, Some(words));
    let e = expect_err(m.finish());
    assert!(
        matches!(e.kind, HdlErrorKind::Memory(ref s) if s.contains("3 initial words")),
        "{e}"
    );
    assert_eq!(e.signal.as_deref(), Some("weights"));
}

#[test]
fn block_parameters_out_of_range_are_rejected_by_name() {
    let e = hdl::blocks::fifo::sync_fifo(8, 1).unwrap_err();
    assert_eq!(e.signal.as_deref(), Some("depth"));
    let e = hdl::blocks::fifo::async_fifo(8, 12).unwrap_err();
    assert!(e.to_string().contains("power of two"), "{e}");
    let e = hdl::blocks::cdc::sync_bits(4, 1).unwrap_err();
    assert_eq!(e.signal.as_deref(), Some("stages"));
    let e = hdl::blocks::counter::up_counter(0).unwrap_err();
    assert_eq!(e.signal.as_deref(), Some("width"));
}

#[test]
fn bad_register_fields_and_commands_are_rejected_by_register_and_field() {
    use hdl::blocks::axil_regfile::{axil_regfile, Access, RegFileSpec, RegisterSpec};
    let build = |r: RegisterSpec| {
        axil_regfile(&RegFileSpec {
            name: "regs".into(),
            registers: vec![r],
            addr_width: 4,
            separate_clock: false,
        })
        .map(|_| ())
        .unwrap_err()
    };
    let ctrl = || RegisterSpec::new("ctrl", Access::ReadWrite, 8);
    for (r, words) in [
        (
            ctrl().field("mode", 6, 3, ""),
            &["`mode`", "[8:6]", "8 bits"][..],
        ),
        (ctrl().field("go", 0, 0, ""), &["`go`", "width 0"][..]),
        (
            ctrl().field("a", 0, 4, "").field("b", 3, 2, ""),
            &["`a`", "`b`", "overlap"][..],
        ),
        (
            ctrl().field("a", 0, 1, "").field("a", 1, 1, ""),
            &["two fields", "`a`"][..],
        ),
        (ctrl().field("", 0, 1, ""), &["field 0", "no name"][..]),
        (ctrl().as_command(), &["clear-on-write", "command"][..]),
    ] {
        let e = build(r);
        assert_eq!(e.module, "regs");
        assert_eq!(e.signal.as_deref(), Some("ctrl"));
        let text = e.to_string();
        for w in words {
            assert!(text.contains(w), "{text} lacks {w}");
        }
    }
    // A full-width field and a command on a clear-on-write register are fine.
    let ok = RegFileSpec {
        name: "regs".into(),
        registers: vec![
            RegisterSpec::new("word", Access::ReadOnly, 32).field("all", 0, 32, ""),
            RegisterSpec::new("go", Access::ClearOnWrite, 1).as_command(),
        ],
        addr_width: 4,
        separate_clock: false,
    };
    let (_, map) = axil_regfile(&ok).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(map.registers[0].fields[0].mask(), u32::MAX);
    assert!(map.registers[1].command);
    // A name given to two registers is the list's mistake, named as such (it was
    // a clash of two generated ports, reported with a generator line).
    let twice = RegFileSpec {
        registers: vec![
            RegisterSpec::new("a", Access::ReadWrite, 8),
            RegisterSpec::new("b", Access::ReadOnly, 8),
            RegisterSpec::new("a", Access::ReadOnly, 32),
        ],
        ..ok
    };
    let e = axil_regfile(&twice).map(|_| ()).unwrap_err();
    assert_eq!(e.signal.as_deref(), Some("a"));
    assert!(
        e.to_string()
            .contains("a second register of this name (registers 0 and 2)"),
        "{e}"
    );
}

#[test]
fn reset_of_one_domain_used_by_another_is_rejected() {
    let mut m = ModuleBuilder::new("cdc_reset");
    let a = m.domain("a", "clk_a", Some("rst_a"), ResetPolarity::ActiveHigh);
    let b = m.domain("b", "clk_b", Some("rst_b"), ResetPolarity::ActiveHigh);
    let rst_a = m.reset_active(a);
    let rb = m.register(b, "rb", rst_a);
    m.output("y", rb);
    let e = expect_err(m.finish());
    assert!(
        matches!(e.kind, HdlErrorKind::CrossDomain(ref s) if s.contains("register `rb`")),
        "{e}"
    );
}
