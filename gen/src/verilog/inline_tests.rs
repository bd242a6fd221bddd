//! Text-level tests of inlining (which values become expressions, and the parentheses
//! precedence needs), source locators and the opening comment. That the inlined text
//! behaves like the netlist is checked by Verilator and Icarus against the native
//! simulator in `testbench/tests/verilog_inline.rs`.

use super::*;
use hdl::{ModuleBuilder, ResetPolarity, Signal};

/// Emits without locators, so that tests can match whole lines.
fn plain(m: &Module) -> String {
    let options = EmitOptions {
        locators: false,
        ..EmitOptions::default()
    };
    let d = emit_with(m, &options).unwrap();
    d.files.last().map(|(_, t)| t.clone()).unwrap()
}

/// A module with 8-bit inputs `a`, `b`, `c`, 3-bit `n`, 1-bit `s`, and output `y` =
/// what `f` builds from them.
fn one(f: impl FnOnce(&mut ModuleBuilder, [Signal; 5]) -> Signal) -> String {
    let mut m = ModuleBuilder::new("t");
    let a = m.input("a", 8);
    let b = m.input("b", 8);
    let c = m.input("c", 8);
    let n = m.input("n", 3);
    let s = m.input("s", 1);
    let y = f(&mut m, [a, b, c, n, s]);
    m.output("y", y);
    plain(&m.finish().unwrap())
}

/// Asserts the text assigns `y` exactly `rhs`.
fn assigns(text: &str, rhs: &str) {
    assert!(
        text.contains(&format!("    assign y = {rhs};\n")),
        "expected `assign y = {rhs};` in\n{text}"
    );
}

#[test]
fn subtraction_keeps_its_grouping_on_both_sides() {
    assigns(
        &one(|m, [a, b, c, ..]| {
            let r = m.sub_wrap(b, c);
            m.sub_wrap(a, r)
        }),
        "a - (b - c)",
    );
    assigns(
        &one(|m, [a, b, c, ..]| {
            let l = m.sub_wrap(a, b);
            m.sub_wrap(l, c)
        }),
        "(a - b) - c",
    );
}

#[test]
fn arithmetic_inside_multiplication_and_shifts_is_parenthesized() {
    assigns(
        &one(|m, [a, b, c, ..]| {
            let s = m.add_wrap(a, b);
            let x = m.and(s, c); // keeps `*`'s operand an expression of another kind
            m.xor(x, a)
        }),
        "((a + b) & c) ^ a",
    );
    assigns(
        &one(|m, [a, _, _, n, _]| {
            let one = m.lit(1, 3);
            let amt = m.add_wrap(n, one);
            m.shl_by(a, amt)
        }),
        "a << (n + 3'h1)",
    );
    assigns(
        &one(|m, [a, b, c, ..]| {
            let lo_a = m.slice(a, 0, 4);
            let lo_b = m.slice(b, 0, 4);
            let p = m.mul(lo_a, lo_b);
            m.add_wrap(p, c)
        }),
        "({{4{1'b0}}, a[3:0]} * {{4{1'b0}}, b[3:0]}) + c",
    );
}

#[test]
fn bitwise_operators_are_never_mixed_without_parentheses() {
    assigns(
        &one(|m, [a, b, c, ..]| {
            let o = m.or(a, b);
            m.and(o, c)
        }),
        "(a | b) & c",
    );
    assigns(
        &one(|m, [a, b, c, ..]| {
            let x = m.xor(b, c);
            m.or(a, x)
        }),
        "a | (b ^ c)",
    );
}

#[test]
fn unary_operators_take_only_atoms_so_no_reduction_token_forms() {
    // `~&a` would be the reduction nand of `a`: the reduction is parenthesized.
    assigns(
        &one(|m, [a, ..]| {
            let r = m.reduce_and(a);
            let n = m.not(r);
            m.replicate(n, 8)
        }),
        "{8{~(&a)}}",
    );
    assigns(
        &one(|m, [a, b, ..]| {
            let x = m.and(a, b);
            let r = m.reduce_or(x);
            m.zext(r, 8)
        }),
        "{{7{1'b0}}, |(a & b)}",
    );
    assigns(
        &one(|m, [a, b, ..]| {
            let x = m.not(a);
            m.and(x, b)
        }),
        "~a & b",
    );
}

#[test]
fn mux_conditions_and_nested_muxes_are_parenthesized() {
    assigns(
        &one(|m, [a, b, c, _, s]| {
            let e = m.eq(a, b);
            let sum = m.add_wrap(a, b);
            let inner = m.mux(s, b, c);
            let t = m.mux(e, sum, inner);
            m.not(t)
        }),
        "~((a == b) ? a + b : (s ? b : c))",
    );
}

#[test]
fn compares_inline_into_and_out_of_concatenations() {
    assigns(
        &one(|m, [a, b, c, ..]| {
            let x = m.xor(a, b);
            let lt = m.lt(x, c);
            let ne = m.ne(a, c);
            let lo = m.slice(c, 0, 6);
            m.concat(&[lt, ne, lo])
        }),
        "{(a ^ b) < c, a != c, c[5:0]}",
    );
}

#[test]
fn what_must_stay_a_wire_stays_one() {
    // A sliced sum (a select of an expression is not Verilog).
    let t = one(|m, [a, b, ..]| {
        let s = m.add(a, b);
        m.truncate(s, 8)
    });
    assert!(t.contains("    wire [8:0] _n"), "{t}");
    // A signed compare takes only atoms: a sum under `$signed` stays a wire.
    let t = one(|m, [a, b, c, ..]| {
        let s = m.add_wrap(a, b);
        let lt = m.lt_signed(s, c);
        m.zext(lt, 8)
    });
    assert!(t.contains("= a + b;\n"), "{t}");
    assert!(t.contains("$signed(c)"), "{t}");
    // An arithmetic shift is signed: inside `&` it would shift logically.
    let t = one(|m, [a, b, _, n, _]| {
        let r = m.sra_by(a, n);
        m.and(r, b)
    });
    assert!(t.contains(" = $signed(a) >>> n;\n"), "{t}");
    assert!(!t.contains("assign y = $signed"), "{t}");
    // A value read twice.
    let t = one(|m, [a, b, ..]| {
        let x = m.xor(a, b);
        m.and(x, x)
    });
    assert!(t.contains(" = a ^ b;\n"), "{t}");
    // A named value.
    let t = one(|m, [a, b, ..]| {
        let x = m.xor(a, b);
        let x = m.named("mixed", x);
        m.not(x)
    });
    assert!(t.contains("    wire [7:0] mixed = a ^ b;\n"), "{t}");
    assigns(&t, "~mixed");
}

#[test]
fn register_memory_and_instance_inputs_stay_wires_named_after_their_role() {
    let child = {
        let mut m = ModuleBuilder::new("child");
        let x = m.input("x", 8);
        m.output("y", x);
        m.finish().unwrap()
    };
    let mut m = ModuleBuilder::new("t");
    let d = m.domain("d", "clk", None, ResetPolarity::ActiveHigh);
    let a = m.input("a", 8);
    let b = m.input("b", 8);
    let sum = m.add_wrap(a, b);
    let q = m.reg(d, "q", 8);
    m.set_next(q, sum);
    let load = m.ne(a, b);
    m.set_enable(q, load);
    let diff = m.sub_wrap(a, b);
    let u = m.instance("u", &child);
    m.connect(u, "x", diff);
    let y = m.instance_output(u, "y");
    let store = m.memory("store", 8, 4, None);
    let wa = m.slice(a, 0, 2);
    let ra = m.slice(b, 0, 2);
    let wd = m.xor(a, b);
    let we = m.bit(a, 7);
    m.mem_write(store, d, wa, wd, we);
    let rd = m.mem_read(store, d, "rd", ra, None);
    // A register's next value that already has a name keeps it.
    let kept = m.or(a, b);
    let kept = m.named("either", kept);
    let p = m.register(d, "p", kept);
    m.output("q_out", q);
    m.output("p_out", p);
    m.output("y", y);
    m.output("rd_out", rd);
    let t = plain(&m.finish().unwrap());
    for line in [
        "    wire [7:0] q_next = a + b;\n",
        "    wire q_en = a != b;\n",
        "    wire [7:0] u_x = a - b;\n",
        "    wire [1:0] store_waddr = a[1:0];\n",
        "    wire [7:0] store_wdata = a ^ b;\n",
        "    wire store_we = a[7];\n",
        "    wire [1:0] store_raddr = b[1:0];\n",
        "    wire [7:0] either = a | b;\n",
        ".x(u_x)",
        "p <= either;",
    ] {
        assert!(t.contains(line), "{line}: {t}");
    }
    let unnamed = t
        .match_indices("_n")
        .any(|(i, _)| t[i + 2..].starts_with(|c: char| c.is_ascii_digit()));
    assert!(!unnamed, "every value has a name: {t}");
}

#[test]
fn constants_are_inlined_wherever_an_expression_may_stand() {
    let t = one(|m, [a, b, c, ..]| {
        let k = m.lit(0x5a, 8);
        let x = m.and(a, k);
        let z = m.or(b, k);
        let w = m.xor(x, z);
        m.add_wrap(w, c)
    });
    assigns(&t, "((a & 8'h5a) ^ (b | 8'h5a)) + c");
    assert!(!t.contains("    wire ["), "{t}");
}

#[test]
fn long_chains_are_cut_into_wires_of_bounded_depth_and_size() {
    let t = one(|m, [a, b, c, ..]| {
        let mut x = a;
        for i in 0..24 {
            x = m.xor(x, if i % 2 == 0 { b } else { c });
        }
        x
    });
    for line in t.lines().filter(|l| l.contains("assign")) {
        let ops = line.matches(" ^ ").count() as u32;
        let depth = line.matches('(').count() as u32;
        assert!(ops <= inline::MAX_SIZE, "{line}");
        assert!(depth < inline::MAX_DEPTH, "{line}");
    }
    assert!(
        t.matches("    wire ").count() >= 24 / inline::MAX_SIZE as usize,
        "{t}"
    );
}

#[test]
fn inlining_can_be_turned_off() {
    let mut m = ModuleBuilder::new("t");
    let a = m.input("a", 8);
    let b = m.input("b", 8);
    let x = m.xor(a, b);
    let y = m.not(x);
    m.output("y", y);
    let m = m.finish().unwrap();
    let options = EmitOptions {
        inline: false,
        locators: false,
        top_note: None,
    };
    let t = emit_with(&m, &options).unwrap().files[0].1.clone();
    assert!(
        t.contains(&format!("wire [7:0] _n{} = a ^ b;", x.net().0)),
        "{t}"
    );
    assert!(t.contains("assign y = _n"), "{t}");
}

// ---- source locators and the opening comment ----

/// A module whose logic is built on known lines; returns it and those lines.
fn located() -> (Module, u32, u32, u32) {
    let child = {
        let mut m = ModuleBuilder::new("leaf");
        let x = m.input("x", 4);
        m.output("y", x);
        m.finish().unwrap()
    };
    let mut m = ModuleBuilder::new("located");
    let d = m.domain("d", "clk", None, ResetPolarity::ActiveHigh);
    let a = m.input("a", 4);
    let b = m.input("b", 4);
    let x = m.xor(a, b);
    let xor_line = line!() - 1;
    let x2 = m.concat(&[x, x]);
    let q = m.register(d, "q", x2);
    let reg_line = line!() - 1;
    let u = m.instance("u", &child);
    let inst_line = line!() - 1;
    m.connect(u, "x", a);
    let y = m.instance_output(u, "y");
    m.output("q_out", q);
    m.output("y", y);
    (m.finish().unwrap(), xor_line, reg_line, inst_line)
}

#[test]
fn output_ports_carry_the_locator_of_their_value() {
    let mut m = ModuleBuilder::new("out_located");
    let a = m.input("a", 4);
    let b = m.input("b", 4);
    let x = m.and(a, b);
    m.output("y", x);
    let out_line = line!() - 1;
    let d = emit(&m.finish().unwrap()).unwrap();
    let t = d.file("out_located.v").unwrap();
    let want = format!("    assign y = a & b; // @[gen/src/verilog/inline_tests.rs:{out_line}]\n");
    assert!(t.contains(&want), "{want}{t}");
}

#[test]
fn locators_name_the_generator_line_relative_to_the_workspace() {
    let (m, xor_line, reg_line, inst_line) = located();
    let d = emit(&m).unwrap();
    let t = d.file("located.v").unwrap();
    let here = "gen/src/verilog/inline_tests.rs";
    // Read twice, the xor is a wire of its own.
    assert!(
        t.lines().any(|l| l.starts_with("    wire [3:0] _n")
            && l.ends_with(&format!("; // @[{here}:{xor_line}]"))),
        "{t}"
    );
    assert!(
        t.contains(&format!("    reg [7:0] q; // @[{here}:{reg_line}]\n")),
        "{t}"
    );
    assert!(
        t.contains(&format!("    leaf u ( // @[{here}:{inst_line}]\n")),
        "{t}"
    );
    assert!(
        t.contains("// Built by the generator at @[gen/src/verilog/inline_tests.rs:"),
        "{t}"
    );
    for line in t.lines().filter(|l| l.contains("@[")) {
        let at = &line[line.find("@[").unwrap() + 2..];
        assert!(!at.starts_with('/'), "absolute path: {line}");
        assert!(
            at.starts_with("gen/src/") || at.starts_with("hdl/src/"),
            "{line}"
        );
    }
}

#[test]
fn locators_can_be_turned_off_and_output_is_deterministic_either_way() {
    let (m, ..) = located();
    let (m2, ..) = located();
    let off = EmitOptions {
        locators: false,
        ..EmitOptions::default()
    };
    let with = emit(&m).unwrap();
    let without = emit_with(&m, &off).unwrap();
    assert_eq!(with, emit(&m2).unwrap());
    assert_eq!(without, emit_with(&m2, &off).unwrap());
    for (_, t) in &without.files {
        assert!(!t.contains("@["), "{t}");
        assert!(!t.contains("// @"), "{t}");
    }
    // Only comments differ.
    let strip = |d: &Design| -> Vec<String> {
        d.files
            .iter()
            .flat_map(|(_, t)| {
                t.lines()
                    .map(|l| l.split(" // @[").next().unwrap_or(l).to_string())
            })
            .filter(|l| !l.starts_with("// "))
            .collect()
    };
    assert_eq!(strip(&with), strip(&without));
}

#[test]
fn the_opening_comment_says_what_generated_the_module() {
    let (m, ..) = located();
    let options = EmitOptions {
        top_note: Some("Block `located`: width=4\nsecond line".into()),
        ..EmitOptions::default()
    };
    let d = emit_with(&m, &options).unwrap();
    let version = env!("CARGO_PKG_VERSION");
    let top = d.file("located.v").unwrap();
    assert!(top.starts_with(&format!(
        "// Generated by wirespeed {version} from HDL module `located`. Do not edit.\n"
    )));
    assert!(
        top.contains("\n// Block `located`: width=4\n// second line\n"),
        "{top}"
    );
    let leaf = d.file("leaf.v").unwrap();
    assert!(!leaf.contains("Block `located`"), "{leaf}");
}

#[test]
fn memories_and_leading_zero_helpers_carry_locators_too() {
    let mut m = ModuleBuilder::new("memlz");
    let d = m.domain("d", "clk", None, ResetPolarity::ActiveHigh);
    let addr = m.input("addr", 3);
    let x = m.input("x", 12);
    let mem = m.memory("lut", 8, 8, None);
    let mem_line = line!() - 1;
    let word = m.mem_read(mem, d, "word", addr, None);
    let lz = m.leading_zeros(x);
    let lz_line = line!() - 1;
    m.output("word_out", word);
    m.output("lz", lz);
    let d = emit(&m.finish().unwrap()).unwrap();
    let t = d.file("memlz.v").unwrap();
    let here = "gen/src/verilog/inline_tests.rs";
    assert!(
        t.contains(&format!(
            "    reg [7:0] lut [0:7]; // @[{here}:{mem_line}]\n"
        )),
        "{t}"
    );
    let helpers: Vec<&str> = t.lines().filter(|l| l.contains("_lz")).collect();
    assert!(!helpers.is_empty(), "{t}");
    for l in helpers.iter().filter(|l| l.starts_with("    wire [")) {
        assert!(l.ends_with(&format!("; // @[{here}:{lz_line}]")), "{l}");
    }
}

#[test]
fn values_nothing_reads_are_left_out_and_their_sources_marked_unused() {
    let t = one(|m, [a, b, ..]| {
        // Lanes 0 and 1 of `a` are replaced; the chain that only fed lane 1 dies too.
        let mut lanes = m.split_lanes(a, 2);
        let inverted = m.not(lanes[1]);
        let _never_read = m.xor(inverted, lanes[0]);
        let b_low = m.slice(b, 0, 2);
        lanes[0] = b_low;
        lanes[1] = b_low;
        m.join_lanes(&lanes)
    });
    assigns(&t, "{a[7:6], a[5:4], b[1:0], b[1:0]}");
    assert!(
        !t.contains('^') && !t.contains('~'),
        "dead logic written: {t}"
    );
    let unused = t
        .lines()
        .find(|l| l.contains("wire _unused_ok"))
        .expect("the unread lanes are marked");
    assert!(unused.contains("a[3:0]"), "{t}");
    assert!(
        !unused.contains("_n"),
        "a value left out is not declared: {t}"
    );
}

#[test]
fn unsigned_order_is_plain_unless_a_side_may_fold_to_a_deciding_constant() {
    type Build = fn(&mut ModuleBuilder, Signal, Signal) -> Signal;
    let cases: [(&str, Build); 11] = [
        ("a < b", |m, a, b| m.lt(a, b)),
        ("a < 8'h05", |m, a, _| {
            let k = m.lit(5, 8);
            m.lt(a, k)
        }),
        ("8'h00 < a", |m, a, _| {
            let k = m.lit(0, 8);
            m.lt(k, a)
        }),
        ("$signed(9'h000) <= $signed({1'b0, a})", |m, a, _| {
            let k = m.lit(0, 8);
            m.le(k, a)
        }),
        ("$signed({1'b0, a}) < $signed(9'h000)", |m, a, _| {
            let k = m.lit(0, 8);
            m.lt(a, k)
        }),
        ("$signed({1'b0, a}) <= $signed(9'h0ff)", |m, a, _| {
            let k = m.lit(0xff, 8);
            m.le(a, k)
        }),
        ("(a & b) < b", |m, a, b| {
            let x = m.and(a, b);
            m.lt(x, b)
        }),
        ("{a[3:0], 4'h0} <= b", |m, a, b| {
            let lo = m.slice(a, 0, 4);
            let z = m.lit(0, 4);
            let x = m.concat(&[lo, z]);
            m.le(x, b)
        }),
        ("{1'b0, a} < {1'b0, b} + 9'h001", |m, a, b| {
            let one = m.lit(1, 8);
            let x = m.add(b, one);
            let wide = m.zext(a, 9);
            m.lt(wide, x)
        }),
        (
            "$signed({1'b0, {a[3:0], 4'h0} & 8'h0f}) < $signed({1'b0, b})",
            |m, a, b| {
                let lo = m.slice(a, 0, 4);
                let z = m.lit(0, 4);
                let x = m.concat(&[lo, z]);
                let mask = m.lit(0x0f, 8);
                let masked = m.and(x, mask);
                m.lt(masked, b)
            },
        ),
        ("$signed({1'b0, a}) < $signed({1'b0, a ^ a})", |m, a, _| {
            let x = m.xor(a, a);
            m.lt(a, x)
        }),
    ];
    for (want, build) in cases {
        let t = one(|m, [a, b, ..]| {
            let c = build(m, a, b);
            m.zext(c, 8)
        });
        assert!(t.contains(want), "{want}: {t}");
    }
}
