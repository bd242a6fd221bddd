//! Unit tests of the Verilog back end (text-level; the tool checks live in
//! `testbench/tests/verilog_tools.rs`).

use super::*;
use hdl::{Bits, ModuleBuilder, ResetPolarity};

/// The default emission without source locators: these tests match exact lines.
fn emit(m: &Module) -> Result<Design, GenError> {
    let options = EmitOptions {
        locators: false,
        ..EmitOptions::default()
    };
    emit_with(m, &options)
}

fn text_of<'a>(d: &'a Design, module: &str) -> &'a str {
    d.file(&format!("{module}.v"))
        .unwrap_or_else(|| panic!("no file for {module} in {:?}", d.module_names()))
}

fn adder(name: &str, w: u32) -> Module {
    let mut m = ModuleBuilder::new(name);
    let a = m.input("a", w);
    let b = m.input("b", w);
    let s = m.add(a, b);
    m.output("y", s);
    m.finish().unwrap()
}

fn inverter(name: &str) -> Module {
    let mut m = ModuleBuilder::new(name);
    let a = m.input("a", 4);
    let n = m.not(a);
    m.output("y", n);
    m.finish().unwrap()
}

#[test]
fn emits_one_file_per_unique_module_top_last() {
    let child = adder("add8", 8);
    let twin = adder("add8", 8); // built separately, equal as IR
    let mut m = ModuleBuilder::new("top");
    let x = m.input("x", 8);
    let u0 = m.instance("u0", &child);
    let u1 = m.instance("u1", &twin);
    for u in [u0, u1] {
        m.connect(u, "a", x);
        m.connect(u, "b", x);
    }
    let y0 = m.instance_output(u0, "y");
    let y1 = m.instance_output(u1, "y");
    let y = m.xor(y0, y1);
    m.output("y", y);
    let d = emit(&m.finish().unwrap()).unwrap();
    assert_eq!(d.module_names(), vec!["add8", "top"]);
    assert_eq!(d.top, "top");
    let top = text_of(&d, "top");
    assert!(top.contains("    add8 u0 (\n        .a(x),\n        .b(x),\n        .y(u0_y)\n    );"));
    assert!(top.contains("    add8 u1 ("));
}

#[test]
fn a_literal_feeding_instances_is_written_in_their_connections_not_named_after_one() {
    let child = adder("add8", 8);
    let mut m = ModuleBuilder::new("top");
    let x = m.input("x", 8);
    let k = m.lit(0x2a, 8);
    let sum = m.add_wrap(x, x);
    let u0 = m.instance("u0", &child);
    let u1 = m.instance("u1", &child);
    m.connect(u0, "a", x);
    m.connect(u0, "b", k);
    m.connect(u1, "a", k);
    m.connect(u1, "b", sum);
    let y0 = m.instance_output(u0, "y");
    let y1 = m.instance_output(u1, "y");
    let y = m.xor(y0, y1);
    let z = m.xor(x, k);
    m.output("y", y);
    m.output("z", z);
    let d = emit(&m.finish().unwrap()).unwrap();
    let top = text_of(&d, "top");
    assert!(
        top.contains("    add8 u0 (\n        .a(x),\n        .b(8'h2a),"),
        "{top}"
    );
    assert!(
        top.contains("    add8 u1 (\n        .a(8'h2a),\n        .b(u1_b),"),
        "{top}"
    );
    assert!(top.contains("wire [7:0] u1_b = x + x;"), "{top}");
    assert!(top.contains("assign z = x ^ 8'h2a;"), "{top}");
    assert!(!top.contains("u0_b") && !top.contains("u1_a"), "{top}");
}

#[test]
fn different_modules_with_one_name_are_uniquified_in_first_seen_order() {
    let first = adder("stage", 4);
    let second = inverter("stage");
    let squatter = inverter("stage_1"); // already has the name the second would get
    let mut mid = ModuleBuilder::new("mid");
    let a = mid.input("a", 4);
    let u = mid.instance("u_second", &second);
    mid.connect(u, "a", a);
    let y = mid.instance_output(u, "y");
    let v = mid.instance("u_squat", &squatter);
    mid.connect(v, "a", y);
    let z = mid.instance_output(v, "y");
    mid.output("y", z);
    let mid = mid.finish().unwrap();

    let mut m = ModuleBuilder::new("top");
    let a = m.input("a", 4);
    let u = m.instance("u_first", &first);
    m.connect(u, "a", a);
    m.connect(u, "b", a);
    let s = m.instance_output(u, "y");
    let t = m.instance("u_mid", &mid);
    m.connect(t, "a", a);
    let r = m.instance_output(t, "y");
    m.output("s", s);
    m.output("r", r);
    let d = emit(&m.finish().unwrap()).unwrap();
    let mut names = d.module_names();
    names.sort();
    assert_eq!(names, vec!["mid", "stage", "stage_1", "stage_2", "top"]);
    // `stage` (the adder) was seen first; the inverter called `stage` became `stage_2`.
    assert!(text_of(&d, "stage").contains("+"));
    let renamed = text_of(&d, "stage_2");
    assert!(renamed.contains("module stage_2 ("));
    assert!(renamed.contains("another module of the design is also called `stage`"));
    assert!(text_of(&d, "mid").contains("    stage_2 u_second ("));
    assert!(text_of(&d, "mid").contains("    stage_1 u_squat ("));
    assert!(text_of(&d, "top").contains("    stage u_first ("));
}

#[test]
fn output_is_deterministic_across_builds() {
    let build = || {
        let mut m = ModuleBuilder::new("det");
        let clk = m.domain("d", "clk", Some("rst"), ResetPolarity::ActiveHigh);
        let a = m.input("a", 16);
        let lz = m.leading_zeros(a);
        let r = m.register(clk, "r", lz);
        let c = m.instance("c", &adder("add5", 5));
        m.connect(c, "a", r);
        m.connect(c, "b", r);
        let y = m.instance_output(c, "y");
        m.output("y", y);
        m.finish().unwrap()
    };
    let (m1, m2) = (build(), build());
    let d1 = emit(&m1).unwrap();
    assert_eq!(d1, emit(&m1).unwrap());
    assert_eq!(d1, emit(&m2).unwrap());
    for (_, text) in &d1.files {
        assert!(text.starts_with("// Generated by wirespeed"));
        assert!(text.ends_with("`default_nettype wire\n`ifndef YOSYS\n`end_keywords\n`endif\n"));
        assert!(text.contains("`begin_keywords \"1364-2005\""));
    }
}

#[test]
fn names_come_from_the_builder_and_unnamed_nets_get_n_ids() {
    let mut m = ModuleBuilder::new("names");
    let a = m.input("a", 8);
    let b = m.input("b", 8);
    let x = m.and(a, b);
    let x = m.named("masked", x);
    let y = m.or(x, a);
    m.output("y", y);
    // Read twice: a wire of its own, named after its id.
    let z = m.xor(a, b);
    let z2 = m.concat(&[z, z]);
    m.output("z", z2);
    let d = emit(&m.finish().unwrap()).unwrap();
    let t = text_of(&d, "names");
    assert!(t.contains("    wire [7:0] masked = a & b;\n"), "{t}");
    // Read once and unnamed: written where it is read.
    assert!(t.contains("    assign y = masked | a;\n"), "{t}");
    assert!(!t.contains(&format!("_n{}", y.net().0)), "{t}");
    let zn = format!("_n{}", z.net().0);
    assert!(
        t.contains(&format!("    wire [7:0] {zn} = a ^ b;\n")),
        "{t}"
    );
    assert!(
        t.contains(&format!("    assign z = {{{zn}, {zn}}};\n")),
        "{t}"
    );
    assert!(t.contains("    input  wire [7:0]  a,\n"), "{t}");
    assert!(t.contains("    output wire [7:0]  y,\n"), "{t}");
    assert!(!t.contains("_unused_ok"), "every bit is read: {t}");
}

/// One queue of a repeated structure: a register and named values, built by the same
/// helper for every queue. Returns the queue's `at_max` flag.
fn counter_queue(m: &mut ModuleBuilder, clk: hdl::Domain, bump: hdl::Signal) -> hdl::Signal {
    let count = m.reg(clk, "count", 4);
    let up = m.add_const_wrap(count, 1);
    let up = m.named("up", up);
    let next = m.mux(bump, up, count);
    m.set_next(count, next);
    let at_max = m.eq_const(count, 15);
    m.named("at_max", at_max)
}

/// A helper that names a value without a scope of its own: `x ^ 3` read twice.
fn named_twice_read(m: &mut ModuleBuilder, x: hdl::Signal) -> hdl::Signal {
    let three = m.lit(3, x.width());
    let v = m.xor(x, three);
    let v = m.named("flipped", v);
    m.and(v, v)
}

#[test]
fn scopes_prefix_names_and_repeated_names_get_deterministic_suffixes() {
    let build = || {
        let mut m = ModuleBuilder::new("scoped");
        let clk = m.domain("sys", "clk", Some("rst"), ResetPolarity::ActiveHigh);
        let bump = m.input("bump", 1);
        let x = m.input("x", 4);
        let mut flags: Vec<_> = (0..2)
            .map(|q| m.scope(&format!("q{q}"), |m| counter_queue(m, clk, bump)))
            .collect();
        flags.push(m.scope("outer", |m| {
            m.scope("inner", |m| counter_queue(m, clk, bump))
        }));
        let any = m.or_all(&flags);
        m.output("any_max", any);
        let a = named_twice_read(&mut m, x);
        let b = named_twice_read(&mut m, a);
        m.output("y", b);
        emit(&m.finish().unwrap()).unwrap()
    };
    let d = build();
    let t = text_of(&d, "scoped");
    for q in ["q0", "q1", "outer_inner"] {
        assert!(t.contains(&format!("reg [3:0] {q}_count")), "{q}: {t}");
        assert!(
            t.contains(&format!("wire [3:0] {q}_up = {q}_count + 4'h1;")),
            "{t}"
        );
        assert!(
            t.contains(&format!("wire {q}_at_max = {q}_count == 4'hf;")),
            "{t}"
        );
    }
    assert!(t.contains("wire [3:0] flipped = x ^ 4'h3;"), "{t}");
    assert!(
        t.contains("wire [3:0] flipped_1 = (flipped & flipped) ^ 4'h3;"),
        "{t}"
    );
    assert!(
        t.contains("input  wire       bump,"),
        "ports are not scoped: {t}"
    );
    let again = build();
    assert_eq!(t, text_of(&again, "scoped"), "deterministic");
}

#[test]
fn a_keyword_value_name_is_escaped_and_a_junk_one_refused() {
    let mut m = ModuleBuilder::new("keywords");
    let a = m.input("a", 4);
    let x = m.not(a);
    let x = m.named("class", x);
    let y = m.xor(x, a);
    let y = m.named("dist", y);
    let z = m.and(x, y);
    let z = m.named("class", z);
    m.output("y", z);
    let d = emit(&m.finish().unwrap()).unwrap();
    let t = text_of(&d, "keywords");
    assert!(t.contains("wire [3:0] class_ = ~a;"), "{t}");
    assert!(t.contains("wire [3:0] dist_ = class_ ^ a;"), "{t}");
    assert!(t.contains("wire [3:0] class__1 = class_ & dist_;"), "{t}");

    let mut m = ModuleBuilder::new("junk");
    let a = m.input("a", 1);
    let x = m.not(a);
    let x = m.named("two words", x);
    m.output("y", x);
    let e = m.finish().expect_err("junk name").to_string();
    assert!(e.contains("`two words` is not a legal identifier"), "{e}");
}

#[test]
fn an_illegal_scope_is_a_name_error() {
    let mut m = ModuleBuilder::new("bad_scope");
    let a = m.input("a", 1);
    let y = m.scope("9lives", |m| m.not(a));
    m.output("y", y);
    let e = m.finish().expect_err("illegal scope").to_string();
    assert!(
        e.contains("scope `9lives` is not a legal identifier"),
        "{e}"
    );
}

#[test]
fn helper_names_never_clash_with_builder_names() {
    let mut m = ModuleBuilder::new("clash");
    let a = m.input("a", 5);
    let lz = m.leading_zeros(a);
    let lz = m.named("cnt", lz);
    let w = m.wire("cnt_lzz1", 2); // the name the helper would like
    let s = m.slice(a, 0, 2);
    m.assign(w, s);
    let u = m.input("_unused_ok", 2);
    let x = m.xor(w, u);
    m.output("x", x);
    m.output("y", lz);
    let d = emit(&m.finish().unwrap()).unwrap();
    let t = text_of(&d, "clash");
    assert!(t.contains("wire [3:0] cnt_lzz1_1;"), "{t}");
    assert!(t.contains("wire [7:0] cnt_lzp;"), "{t}");
    assert!(t.contains("wire _unused_ok_1 = &{1'b0, "), "{t}");
}

#[test]
fn unused_bits_are_collected_precisely() {
    let mut m = ModuleBuilder::new("unused");
    let clk = m.domain("d", "clk", Some("rst"), ResetPolarity::ActiveHigh);
    let _idle = m.domain(
        "idle",
        "idle_clk",
        Some("idle_rst"),
        ResetPolarity::ActiveLow,
    );
    let a = m.input("a", 32);
    let lo = m.slice(a, 4, 8); // reads a[11:4]
    let hi = m.bit(a, 31);
    let sh = m.shl(a, 30); // reads a[1:0]
    let r = m.reg_no_reset(clk, "r", 8);
    m.set_next(r, lo);
    m.output("r_q", r);
    m.output("hi", hi);
    m.output("sh", sh);
    let d = emit(&m.finish().unwrap()).unwrap();
    let t = text_of(&d, "unused");
    // `rst` is not used: the only register has no reset.
    assert!(
        t.contains("wire _unused_ok = &{1'b0, rst, idle_clk, idle_rst, a[30:12], a[3:2], 1'b0};"),
        "{t}"
    );
    assert!(t.contains("{a[1:0], 30'h0}"), "{t}");
}

#[test]
fn registers_use_the_domain_reset_polarity_and_enable() {
    let mut m = ModuleBuilder::new("regs");
    let core = m.domain("core", "clk", Some("rst"), ResetPolarity::ActiveHigh);
    let axi = m.domain("axi", "aclk", Some("aresetn"), ResetPolarity::ActiveLow);
    let x = m.input("x", 4);
    let en = m.input("en", 1);
    let a = m.reg_init(core, "a", 4, 9);
    m.set_next(a, x);
    m.set_enable(a, en);
    let b = m.reg_no_reset(core, "b", 4);
    m.set_next(b, x);
    let y = m.input("y", 4);
    let c = m.register(axi, "c", y);
    m.output("a_q", a);
    m.output("b_q", b);
    m.output("c_q", c);
    let d = emit(&m.finish().unwrap()).unwrap();
    let t = text_of(&d, "regs");
    assert!(t.contains("    always @(posedge clk) begin\n        if (rst) a <= 4'h9;\n        else if (en) a <= x;\n    end\n"), "{t}");
    assert!(t.contains("    always @(posedge clk) b <= x;\n"), "{t}");
    assert!(t.contains("    always @(posedge aclk) begin\n        if (!aresetn) c <= 4'h0;\n        else c <= y;\n    end\n"), "{t}");
    assert!(t.contains("    reg [3:0] a;\n"), "{t}");
}

#[test]
fn synchronizer_flops_and_only_those_are_marked_async_reg_for_vivado() {
    let fifo = hdl::blocks::fifo::async_fifo(8, 16).unwrap();
    let d = emit(&fifo).unwrap();
    let t = text_of(&d, &fifo.name);
    for name in [
        "rd_gray_sync_0",
        "rd_gray_sync_1",
        "wr_gray_sync_0",
        "wr_gray_sync_1",
    ] {
        let decl = format!("    (* ASYNC_REG = \"TRUE\" *) reg [4:0] {name};\n");
        assert!(t.contains(&decl), "{name}: {t}");
    }
    assert_eq!(t.matches("ASYNC_REG").count(), 4, "{t}");
    // The handshake's captured word samples another domain but is no synchronizer.
    let hs = hdl::blocks::cdc::handshake_sync(8).unwrap();
    let d = emit(&hs).unwrap();
    let t = text_of(&d, &hs.name);
    assert!(t.contains("    reg [7:0] dst_word;\n"), "{t}");
    assert_eq!(t.matches("ASYNC_REG").count(), 4, "{t}");
}

#[test]
fn a_zero_wider_than_64_bits_is_written_short_and_every_other_literal_in_full() {
    let mut m = ModuleBuilder::new("lits");
    let clk = m.domain("d", "clk", Some("rst"), ResetPolarity::ActiveHigh);
    let sel = m.input("sel", 1);
    let wide = m.input("wide", 65);
    let narrow = m.input("narrow", 64);
    let wide_zero = m.zeros(65);
    let narrow_zero = m.zeros(64);
    let wide_one = m.lit(1, 65);
    let w = m.mux(sel, wide_zero, wide);
    let n = m.mux(sel, narrow_zero, narrow);
    let o = m.mux(sel, wide_one, wide);
    let q = m.register(clk, "q", w);
    m.output("w", q);
    m.output("n", n);
    m.output("o", o);
    let d = emit(&m.finish().unwrap()).unwrap();
    let t = text_of(&d, "lits");
    assert!(t.contains("sel ? 65'h0 : wide"), "{t}");
    assert!(t.contains("if (rst) q <= 65'h0;"), "{t}");
    assert!(
        t.contains(&format!("sel ? 64'h{} : narrow", "0".repeat(16))),
        "{t}"
    );
    assert!(
        t.contains(&format!("sel ? 65'h{}1 : wide", "0".repeat(16))),
        "{t}"
    );
}

#[test]
fn nested_zero_extensions_are_written_as_one() {
    let mut m = ModuleBuilder::new("ext");
    let t = m.input("t", 8);
    let u = m.input("u", 10);
    let s = m.input("s", 4);
    let t9 = m.zext(t, 9);
    let t10 = m.zext(t9, 10);
    let sum = m.add_wrap(t10, u);
    m.output("sum", sum);
    let s6 = m.zext(s, 6);
    let wide = m.zext(s6, 12);
    m.output("wide", wide);
    let u11 = m.zext(u, 11);
    let shared = m.named("shared", u11);
    let twice = m.zext(shared, 13);
    m.output("twice", twice);
    let d = emit(&m.finish().unwrap()).unwrap();
    let text = text_of(&d, "ext");
    assert!(text.contains("assign sum = {{2{1'b0}}, t} + u;"), "{text}");
    assert!(text.contains("assign wide = {{8{1'b0}}, s};"), "{text}");
    assert!(text.contains("wire [10:0] shared = {1'b0, u};"), "{text}");
    assert!(
        text.contains("assign twice = {{2{1'b0}}, shared};"),
        "{text}"
    );
}

#[test]
fn zero_extended_literals_are_written_at_the_wider_width() {
    let mut m = ModuleBuilder::new("ext");
    let a = m.input("a", 8);
    let four = m.lit(4, 8);
    let product = m.mul(a, four);
    m.output("product", product);
    let k = m.lit(0x10, 5);
    let k = m.zext(k, 7);
    let s = m.input("s", 7);
    let lt = m.lt(k, s);
    m.output("lt", lt);
    let named = m.lit(3, 4);
    let named = m.named("three", named);
    let wide = m.zext(named, 6);
    m.output("wide", wide);
    let d = emit(&m.finish().unwrap()).unwrap();
    let text = text_of(&d, "ext");
    assert!(
        text.contains("assign product = {{8{1'b0}}, a} * 16'h0004;"),
        "{text}"
    );
    assert!(
        text.contains("assign lt = $signed(8'h10) < $signed({1'b0, s});"),
        "{text}"
    );
    assert!(text.contains("assign wide = {{2{1'b0}}, three};"), "{text}");
}

#[test]
fn an_unnamed_value_an_output_carries_is_written_as_the_port() {
    let mut m = ModuleBuilder::new("ports");
    let a = m.input("a", 4);
    let b = m.input("b", 4);
    let full = m.eq(a, b);
    m.output("full", full);
    m.output("busy", full);
    let push = m.not(full);
    let push = m.named("push", push);
    m.output("push_out", push);
    let d = emit(&m.finish().unwrap()).unwrap();
    let text = text_of(&d, "ports");
    assert!(text.contains("assign full = a == b;"), "{text}");
    assert!(text.contains("wire push = ~full;"), "{text}");
    assert!(text.contains("assign busy = full;"), "{text}");
    assert!(text.contains("assign push_out = push;"), "{text}");
    assert!(!text.contains("wire _n"), "{text}");
}

#[test]
fn memories_guard_reads_past_a_non_power_of_two_depth() {
    let mut m = ModuleBuilder::new("mems");
    let clk = m.domain("d", "clk", None, ResetPolarity::ActiveHigh);
    let init: Vec<Bits> = (0..6).map(|i| Bits::from_u64(i * 3, 5).unwrap()).collect();
    let odd = m.memory("odd", 5, 6, Some(init));
    let even = m.memory("even", 5, 8, None);
    let wa = m.input("wa", 3);
    let wd = m.input("wd", 5);
    let we = m.input("we", 1);
    let ra = m.input("ra", 3);
    let re = m.input("re", 1);
    m.mem_write(odd, clk, wa, wd, we);
    m.mem_write(even, clk, wa, wd, we);
    let q0 = m.mem_read(odd, clk, "q_odd", ra, Some(re));
    let q1 = m.mem_read(even, clk, "q_even", ra, None);
    m.output("q0", q0);
    m.output("q1", q1);
    let d = emit(&m.finish().unwrap()).unwrap();
    let t = text_of(&d, "mems");
    assert!(t.contains("    reg [4:0] odd [0:5];\n"), "{t}");
    assert!(
        t.contains("if (re) q_odd <= (ra < 3'd6) ? odd[ra] : 5'h0;"),
        "{t}"
    );
    assert!(t.contains("q_even <= even[ra];"), "{t}");
    assert!(t.contains("        odd[5] = 5'h0f;\n"), "{t}");
    assert!(
        !t.contains("odd[0] = 5'h00"),
        "zero words come from the fill loop: {t}"
    );
    assert!(t.contains("if (we) odd[wa] <= wd;"), "{t}");
    assert!(t.contains("    integer odd_init_i;\n"), "{t}");
    assert!(t.contains("    integer even_init_i;\n"), "{t}");
}

/// A read address Verilator can fold to a constant past the end (all ones, here
/// through a slice of a constant, and through a slice of the literal bits of a value
/// an input is part of) is not guarded by `addr < depth`, which Verilator would
/// report as a constant compare (CMPCONST, fatal: the model would not build).
#[test]
fn memory_reads_at_a_foldable_address_guard_with_a_signed_compare() {
    let mut m = ModuleBuilder::new("memk");
    let clk = m.domain("d", "clk", None, ResetPolarity::ActiveHigh);
    let mem = m.memory("three", 6, 3, None);
    let wa = m.input("wa", 2);
    let wd = m.input("wd", 6);
    let we = m.input("we", 1);
    m.mem_write(mem, clk, wa, wd, we);
    let k = m.ones(4);
    let ka = m.slice(k, 2, 2);
    let q = m.mem_read(mem, clk, "q", ka, None);
    let qv = m.mem_read(mem, clk, "qv", wa, None);
    let three = m.lit(3, 2);
    let wa_three = m.concat(&[wa, three]);
    let kb = m.slice(wa_three, 0, 2);
    let kb = m.named("kb", kb);
    let qb = m.mem_read(mem, clk, "qb", kb, None);
    m.output("q_k", q);
    m.output("q_v", qv);
    m.output("q_b", qb);
    let d = emit(&m.finish().unwrap()).unwrap();
    let t = text_of(&d, "memk");
    assert!(
        t.contains("qb <= ($signed({1'b0, kb}) < $signed(3'd3)) ? three[kb] : 6'h0;"),
        "{t}"
    );
    assert!(
        t.contains(
            "q <= ($signed({1'b0, three_raddr}) < $signed(3'd3)) ? three[three_raddr] : 6'h0;"
        ),
        "{t}"
    );
    assert!(t.contains("qv <= (wa < 2'd3) ? three[wa] : 6'h0;"), "{t}");
}

#[test]
fn leading_zeros_is_a_tree_of_assigns() {
    for w in [1u32, 2, 5, 8, 12, 64] {
        let mut m = ModuleBuilder::new("lz");
        let a = m.input("a", w);
        let n = m.leading_zeros(a);
        m.output("n", n);
        let d = emit(&m.finish().unwrap()).unwrap();
        let t = text_of(&d, "lz");
        let levels = 32 - (w - 1).leading_zeros();
        for j in 1..=levels {
            assert!(t.contains(&format!("_lzc{j};")), "w={w}: {t}");
        }
        assert!(!t.contains(&format!("_lzc{};", levels + 1)), "w={w}: {t}");
    }
}

#[test]
fn unsigned_compares_are_written_so_lint_never_sees_a_constant_compare() {
    let mut m = ModuleBuilder::new("cmp");
    let a = m.input("a", 4);
    let z = m.zeros(4);
    let lt = m.lt(a, z);
    let ge = m.ge(a, z);
    let slt = m.lt_signed(a, z);
    m.output("lt", lt);
    m.output("ge", ge);
    m.output("slt", slt);
    let d = emit(&m.finish().unwrap()).unwrap();
    let t = text_of(&d, "cmp");
    assert!(t.contains("= $signed({1'b0, a}) < $signed(5'h00)"), "{t}");
    assert!(t.contains("= $signed(a) < $signed(4'h0)"), "{t}");
}

#[test]
fn top_ports_verilator_reserves_are_refused_but_inner_ones_are_fine() {
    let inner = {
        let mut m = ModuleBuilder::new("inner");
        let a = m.input("switch", 1);
        let n = m.not(a);
        m.output("delete", n);
        m.finish().unwrap()
    };
    let err = emit(&inner).unwrap_err();
    assert!(err.to_string().contains("`switch`"), "{err}");
    let mut m = ModuleBuilder::new("outer");
    let a = m.input("a", 1);
    let u = m.instance("u", &inner);
    m.connect(u, "switch", a);
    let y = m.instance_output(u, "delete");
    m.output("y", y);
    assert!(emit(&m.finish().unwrap()).is_ok());
}

#[test]
fn parameters_are_declared_with_their_values_and_checked() {
    use hdl::ir::Parameter;
    let mut m = ModuleBuilder::new("opl");
    m.parameter(Parameter::integer("C_M_AXIS_DATA_WIDTH", 256));
    m.parameter(Parameter::base_address("C_BASEADDR", 32, 0x4402_0000, 12));
    m.parameter(Parameter::base_address("C_ANY", 8, 0x12, 0));
    let a = m.input("a", 4);
    m.output("y", a);
    let d = emit(&m.finish().unwrap()).unwrap();
    let text = text_of(&d, "opl");
    assert!(text.contains(
        "module opl #(\n    parameter integer C_M_AXIS_DATA_WIDTH = 256,\n    parameter [31:0]  C_BASEADDR          = 32'h44020000,\n    parameter [7:0]   C_ANY               = 8'h12\n) (\n"
    ), "{text}");
    assert!(text.contains(
        "if (C_M_AXIS_DATA_WIDTH != 256) begin : check_C_M_AXIS_DATA_WIDTH\n            C_M_AXIS_DATA_WIDTH_must_be_256 parameter_check_failed ();"
    ), "{text}");
    assert!(text.contains(
        "if (C_BASEADDR[11:0] != 12'h0) begin : check_C_BASEADDR\n            C_BASEADDR_must_be_aligned_to_4096_bytes parameter_check_failed ();"
    ), "{text}");
    assert!(
        !text.contains("check_C_ANY"),
        "an unconstrained parameter needs no check"
    );
}

#[test]
fn modules_without_parameters_keep_their_plain_header() {
    let d = emit(&inverter("inv")).unwrap();
    let text = text_of(&d, "inv");
    assert!(text.contains("module inv (\n"), "{text}");
    assert!(!text.contains("generate"), "{text}");
}

#[test]
fn bad_parameters_are_builder_errors_naming_them() {
    use hdl::ir::{Parameter, ParameterAccepts, ParameterKind};
    let cases = [
        (Parameter::integer("module", 1), "not a legal identifier"),
        (
            Parameter::base_address("C_BASE", 8, 0x100, 4),
            "does not fit 8 bits",
        ),
        (
            Parameter::base_address("C_BASE", 32, 0x10, 12),
            "outside the values it accepts",
        ),
        (
            Parameter::base_address("C_BASE", 8, 0, 12),
            "alignment wider than its 8 bits",
        ),
        (
            Parameter {
                name: "C_W".into(),
                value: 1,
                kind: ParameterKind::Bits(0),
                accepts: ParameterAccepts::Exactly,
            },
            "0 bits is not 1..=64",
        ),
        (
            Parameter::integer("C_BIG", 1 << 40),
            "does not fit a Verilog integer",
        ),
    ];
    for (p, why) in cases {
        let name = p.name.clone();
        let mut m = ModuleBuilder::new("m");
        m.parameter(p);
        let e = m.finish().expect_err(&name).to_string();
        assert!(e.contains(&name) && e.contains(why), "{name}: {e}");
    }
    let mut m = ModuleBuilder::new("m");
    m.input("C_W", 1);
    m.parameter(Parameter::integer("C_W", 1));
    let e = m.finish().expect_err("clash").to_string();
    assert!(e.contains("clashes with a port"), "{e}");
}

#[test]
fn a_renamed_top_keeps_everything_but_its_name() {
    let m = adder("add8", 8);
    let r = m.renamed("output_port_lookup").unwrap();
    assert_eq!(r.name, "output_port_lookup");
    assert_eq!(r.ports, m.ports);
    let d = emit(&r).unwrap();
    assert_eq!(d.top, "output_port_lookup");
    assert!(m.renamed("wire").is_err());
}

/// A shift amount wider than 32 bits that Verilator may fold to a constant (here a
/// literal of 2^32 and the `xor` of a value with itself) is clamped to 32 bits, as
/// Verilator refuses a constant amount of 2^32 or more; one that cannot fold (an
/// input) is written as it is.
#[test]
fn wide_shift_amounts_that_may_fold_are_clamped_to_32_bits() {
    let mut m = ModuleBuilder::new("wide_shift");
    let x = m.input("x", 8);
    let n = m.input("n", 40);
    let big = m.constant(&Bits::from_words(&[1 << 32], 40));
    let big = m.named("big", big);
    let none = m.xor(n, n);
    let none = m.named("none", none);
    let out_big = m.shr_by(x, big);
    let out_none = m.sra_by(x, none);
    let out_n = m.shl_by(x, n);
    m.output("y_big", out_big);
    m.output("y_none", out_none);
    m.output("y_n", out_n);
    let d = emit(&m.finish().unwrap()).unwrap();
    let t = text_of(&d, "wide_shift");
    assert!(
        t.contains("x >> ((|big[39:32]) ? 32'hffffffff : big[31:0])"),
        "{t}"
    );
    assert!(
        t.contains("$signed(x) >>> ((|none[39:32]) ? 32'hffffffff : none[31:0])"),
        "{t}"
    );
    assert!(t.contains("x << n"), "{t}");
}
