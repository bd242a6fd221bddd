//! The generated Verilog computes what the IR says: test benches drive the emitted
//! modules in Icarus Verilog and Verilator and compare every output with values
//! computed here in plain Rust (`u128` arithmetic, independent of the HDL).

mod verilog_common;

use hdl::{Bits, Module, ModuleBuilder, ResetPolarity, Signal};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::fmt::Write as _;
use verilog_common::*;

fn mask(w: u32) -> u128 {
    if w >= 128 {
        u128::MAX
    } else {
        (1u128 << w) - 1
    }
}

fn to_signed(v: u128, w: u32) -> i128 {
    if w < 128 && (v >> (w - 1)) & 1 == 1 {
        v as i128 - (1i128 << w)
    } else {
        v as i128
    }
}

fn leading_zeros(v: u128, w: u32) -> u128 {
    (v.leading_zeros() - (128 - w)) as u128
}

/// Checks `got` against `want` row by row, naming the output and the inputs on failure.
fn compare(names: &[String], inputs: &[Vec<u128>], want: &[Vec<u128>], got: &[Vec<u128>]) {
    assert_eq!(got.len(), want.len(), "number of rows");
    let mut errors = String::new();
    for (row, (w, g)) in want.iter().zip(got).enumerate() {
        for (i, name) in names.iter().enumerate() {
            if w[i] != g[i] && errors.len() < 4000 {
                let _ = writeln!(
                    errors,
                    "row {row} inputs {:x?}: {name} = {:#x}, expected {:#x}",
                    inputs[row], g[i], w[i]
                );
            }
        }
    }
    assert!(errors.is_empty(), "{errors}");
}

/// Leading-zero counts of 1, 8 and 12 bits (exhaustive) and 16, 64 and 100 bits (random,
/// every count).
fn lz_module() -> (Module, Vec<u32>) {
    let widths = vec![1, 8, 12, 16, 64, 100];
    let mut m = ModuleBuilder::new("lz_check");
    let ins: Vec<Signal> = widths
        .iter()
        .map(|w| m.input(&format!("x{w}"), *w))
        .collect();
    for (x, w) in ins.iter().zip(&widths) {
        let n = m.leading_zeros(*x);
        m.output(&format!("n{w}"), n);
    }
    (m.finish().expect("lz_check builds"), widths)
}

fn lz_vectors(widths: &[u32]) -> Vec<Vec<u128>> {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    (0..4096u128)
        .map(|i| {
            widths
                .iter()
                .map(|&w| match w {
                    1 => i & 1,
                    8 => i & 0xff,
                    12 => i,
                    _ => {
                        let v: u128 = rng.gen::<u128>() & mask(w);
                        let shift = rng.gen_range(0..=w);
                        if shift == w {
                            0
                        } else {
                            (v | (1u128 << (w - 1))) >> shift
                        }
                    }
                })
                .collect()
        })
        .collect()
}

fn check_leading_zeros(engine: Engine) {
    let (m, widths) = lz_module();
    let vectors = lz_vectors(&widths);
    let want: Vec<Vec<u128>> = vectors
        .iter()
        .map(|v| {
            v.iter()
                .zip(&widths)
                .map(|(x, w)| leading_zeros(*x, *w))
                .collect()
        })
        .collect();
    let got = run_comb(&m, &vectors, engine);
    let names: Vec<String> = widths.iter().map(|w| format!("n{w}")).collect();
    compare(&names, &vectors, &want, &got);
}

#[test]
fn leading_zeros_match_rust_in_icarus() {
    check_leading_zeros(Engine::Icarus);
}

#[test]
fn leading_zeros_match_rust_in_verilator() {
    check_leading_zeros(Engine::Verilator);
}

/// Inputs of the operations module, by name.
struct In {
    a: u128,
    b: u128,
    s: u128,
    amt: u128,
    c: u128,
    camt: u128,
}

type Expect = Box<dyn Fn(&In) -> u128>;

const C: u32 = 70; // a wide operand (more than 64 bits)

/// Operations whose Verilog is easy to get subtly wrong, with their expected values.
fn ops_module() -> (Module, Vec<(String, Expect)>) {
    let mut m = ModuleBuilder::new("ops_check");
    let a = m.input("a", 8);
    let b = m.input("b", 8);
    let s = m.input("s", 1);
    let amt = m.input("amt", 5);
    let c = m.input("c", C);
    let camt = m.input("camt", 8);
    let zero = m.zeros(8);
    let ones = m.ones(8);
    let mut outs: Vec<(String, Signal, Expect)> = Vec::new();
    macro_rules! out {
        ($name:expr, $sig:expr, $f:expr) => {{
            let sig = $sig;
            outs.push(($name.to_string(), sig, Box::new($f)));
        }};
    }
    let sra = |v: u128, n: u128, w: u32| -> u128 {
        let n = n.min(w as u128) as u32;
        let x = to_signed(v, w);
        let shifted = if n >= w {
            if x < 0 {
                -1
            } else {
                0
            }
        } else {
            x >> n
        };
        shifted as u128 & mask(w)
    };
    let shl = |v: u128, n: u128, w: u32| {
        if n >= w as u128 {
            0
        } else {
            (v << n) & mask(w)
        }
    };
    let shr = |v: u128, n: u128, w: u32| if n >= w as u128 { 0 } else { v >> n };

    out!("shl_by", m.shl_by(a, amt), move |i: &In| shl(i.a, i.amt, 8));
    out!("shr_by", m.shr_by(a, amt), move |i: &In| shr(i.a, i.amt, 8));
    out!("sra_by", m.sra_by(a, amt), move |i: &In| sra(i.a, i.amt, 8));
    out!("c_shl_by", m.shl_by(c, camt), move |i: &In| shl(
        i.c, i.camt, C
    ));
    out!("c_shr_by", m.shr_by(c, camt), move |i: &In| shr(
        i.c, i.camt, C
    ));
    out!("c_sra_by", m.sra_by(c, camt), move |i: &In| sra(
        i.c, i.camt, C
    ));
    for n in [0u32, 1, 7, 8, 11] {
        out!(format!("shl_{n}"), m.shl(a, n), move |i: &In| shl(
            i.a, n as u128, 8
        ));
        out!(format!("shr_{n}"), m.shr(a, n), move |i: &In| shr(
            i.a, n as u128, 8
        ));
        out!(format!("sra_{n}"), m.sra(a, n), move |i: &In| sra(
            i.a, n as u128, 8
        ));
    }
    for n in [1u32, 69, 70, 75] {
        out!(format!("c_sra_{n}"), m.sra(c, n), move |i: &In| sra(
            i.c, n as u128, C
        ));
    }
    out!("lt", m.lt(a, b), |i: &In| (i.a < i.b) as u128);
    out!("le", m.le(a, b), |i: &In| (i.a <= i.b) as u128);
    out!("gt", m.gt(a, b), |i: &In| (i.a > i.b) as u128);
    out!("ge", m.ge(a, b), |i: &In| (i.a >= i.b) as u128);
    out!("lt_zero", m.lt(a, zero), |_: &In| 0);
    out!("ge_zero", m.ge(a, zero), |_: &In| 1);
    out!("le_ones", m.le(a, ones), |_: &In| 1);
    out!("gt_ones", m.gt(a, ones), |_: &In| 0);
    out!(
        "lts",
        m.lt_signed(a, b),
        |i: &In| (to_signed(i.a, 8) < to_signed(i.b, 8)) as u128
    );
    out!(
        "les",
        m.le_signed(a, b),
        |i: &In| (to_signed(i.a, 8) <= to_signed(i.b, 8)) as u128
    );
    out!(
        "gts",
        m.gt_signed(a, b),
        |i: &In| (to_signed(i.a, 8) > to_signed(i.b, 8)) as u128
    );
    out!(
        "ges",
        m.ge_signed(a, b),
        |i: &In| (to_signed(i.a, 8) >= to_signed(i.b, 8)) as u128
    );
    out!("eq", m.eq(a, b), |i: &In| (i.a == i.b) as u128);
    out!("ne", m.ne(a, b), |i: &In| (i.a != i.b) as u128);
    out!("add", m.add(a, b), |i: &In| i.a + i.b);
    out!("add_wrap", m.add_wrap(a, b), |i: &In| (i.a + i.b) & 0xff);
    out!("sub", m.sub(a, b), |i: &In| i.a.wrapping_sub(i.b) & 0x1ff);
    out!("sub_wrap", m.sub_wrap(a, b), |i: &In| i.a.wrapping_sub(i.b)
        & 0xff);
    out!("mul", m.mul(a, b), |i: &In| i.a * i.b);
    let c_lo = m.slice(c, 3, 60);
    out!("mul_wide", m.mul(c_lo, a), |i: &In| ((i.c >> 3) & mask(60))
        * i.a);
    out!("sext", m.sext(a, 15), |i: &In| to_signed(i.a, 8) as u128
        & mask(15));
    out!("zext", m.zext(a, 15), |i: &In| i.a);
    out!("r_and", m.reduce_and(a), |i: &In| (i.a == 0xff) as u128);
    out!("r_or", m.reduce_or(c), |i: &In| (i.c != 0) as u128);
    out!("r_xor", m.reduce_xor(c), |i: &In| (i.c.count_ones() & 1)
        as u128);
    out!("mux", m.mux(s, a, b), |i: &In| if i.s == 1 {
        i.a
    } else {
        i.b
    });
    out!("pop", m.popcount(c), |i: &In| i.c.count_ones() as u128);
    out!("lz", m.leading_zeros(c), |i: &In| leading_zeros(i.c, C));
    out!("cat", m.concat(&[s, a, b]), |i: &In| (i.s << 16)
        | (i.a << 8)
        | i.b);
    let nib = m.slice(a, 2, 3);
    out!("rep", m.replicate(nib, 4), |i: &In| {
        let n = (i.a >> 2) & 7;
        n | n << 3 | n << 6 | n << 9
    });
    let sel = m.slice(amt, 0, 2);
    out!(
        "index",
        m.index(sel, &[a, b, zero]),
        |i: &In| match i.amt & 3 {
            0 => i.a,
            1 => i.b,
            _ => 0,
        }
    );
    out!("not", m.not(a), |i: &In| !i.a & 0xff);
    out!(
        "bits",
        {
            let x = m.and(a, b);
            let y = m.or(x, zero);
            m.xor(y, ones)
        },
        |i: &In| (i.a & i.b) ^ 0xff
    );

    let mut expects = Vec::new();
    for (name, sig, f) in outs {
        let name = format!("o_{name}");
        m.output(&name, sig);
        expects.push((name, f));
    }
    (m.finish().expect("ops_check builds"), expects)
}

fn ops_vectors() -> Vec<Vec<u128>> {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let edges = [0u128, 1, 0x7f, 0x80, 0xff];
    let mut v = Vec::new();
    for &a in &edges {
        for &b in &edges {
            v.push(vec![a, b, a & 1, (a ^ b) & 31, a << 62 | b, b]);
        }
    }
    for _ in 0..600 {
        let c: u128 = rng.gen::<u128>() & mask(C);
        let c = c >> rng.gen_range(0..C);
        v.push(vec![
            rng.gen_range(0..256),
            rng.gen_range(0..256),
            rng.gen_range(0..2),
            rng.gen_range(0..32),
            if rng.gen_bool(0.2) {
                c | 1 << (C - 1)
            } else {
                c
            },
            rng.gen_range(0..256),
        ]);
    }
    v
}

fn check_ops(engine: Engine) {
    let (m, expects) = ops_module();
    let vectors = ops_vectors();
    let want: Vec<Vec<u128>> = vectors
        .iter()
        .map(|v| {
            let i = In {
                a: v[0],
                b: v[1],
                s: v[2],
                amt: v[3],
                c: v[4],
                camt: v[5],
            };
            expects.iter().map(|(_, f)| f(&i)).collect()
        })
        .collect();
    let got = run_comb(&m, &vectors, engine);
    let names: Vec<String> = expects.iter().map(|(n, _)| n.clone()).collect();
    compare(&names, &vectors, &want, &got);
}

#[test]
fn operations_match_rust_in_icarus() {
    check_ops(Engine::Icarus);
}

#[test]
fn operations_match_rust_in_verilator() {
    check_ops(Engine::Verilator);
}

/// A memory of a non-power-of-two depth with initial contents (read enable, reads past
/// the end, read-first) and a register with active-low reset and enable.
fn seq_module() -> Module {
    let mut m = ModuleBuilder::new("seq_check");
    let d = m.domain("core", "clk", Some("rst_n"), ResetPolarity::ActiveLow);
    let wa = m.input("wa", 3);
    let wd = m.input("wd", 5);
    let we = m.input("we", 1);
    let ra = m.input("ra", 3);
    let re = m.input("re", 1);
    let en = m.input("en", 1);
    let init: Vec<Bits> = (0..6u64)
        .map(|i| Bits::from_u64(i * 3 + 1, 5).expect("fits"))
        .collect();
    let mem = m.memory("mem", 5, 6, Some(init));
    m.mem_write(mem, d, wa, wd, we);
    let q = m.mem_read(mem, d, "q", ra, Some(re));
    let r = m.reg_init(d, "r", 5, 21);
    m.set_next(r, wd);
    m.set_enable(r, en);
    m.output("q_out", q);
    m.output("r_out", r);
    m.finish().expect("seq_check builds")
}

/// The Rust model of `seq_module`, one row of outputs per rising edge.
fn seq_model(cycles: &[[u128; 7]]) -> Vec<Vec<u128>> {
    let mut mem: Vec<u128> = (0..6).map(|i| i * 3 + 1).collect();
    let (mut q, mut r) = (0u128, 0u128);
    let mut rows = Vec::new();
    for &[rst_n, wa, wd, we, ra, re, en] in cycles {
        if re == 1 {
            q = mem.get(ra as usize).copied().unwrap_or(0); // before this edge's write
        }
        if we == 1 && (wa as usize) < mem.len() {
            mem[wa as usize] = wd;
        }
        if rst_n == 0 {
            r = 21;
        } else if en == 1 {
            r = wd;
        }
        rows.push(vec![q, r]);
    }
    rows
}

#[test]
fn memories_and_registers_match_rust_in_icarus() {
    let m = seq_module();
    let (dir, design) = write_temp(&m);
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    // Registers start unknown in Verilog (the IR leaves power-up to the hardware), so the
    // first edge resets `r` (reset beats enable) and reads word 0.
    let mut cycles: Vec<[u128; 7]> = vec![[0, 0, 9, 0, 0, 1, 1]];
    // Read every address (including 6 and 7, past the end) before any write.
    for a in 0..8 {
        cycles.push([1, 0, 0, 0, a, 1, 0]);
    }
    for _ in 0..300 {
        cycles.push([
            (rng.gen_range(0..10) != 0) as u128,
            rng.gen_range(0..8),
            rng.gen_range(0..32),
            rng.gen_range(0..2),
            rng.gen_range(0..8),
            rng.gen_range(0..2),
            rng.gen_range(0..2),
        ]);
    }
    // Read and write the same address at one edge: the read sees the old word.
    cycles.push([1, 2, 30, 1, 2, 1, 0]);
    cycles.push([1, 2, 0, 0, 2, 1, 0]);

    let mut tb = String::from("module tb;\n    reg clk = 1'b0;\n");
    tb.push_str("    reg rst_n;\n    reg [2:0] wa;\n    reg [4:0] wd;\n    reg we;\n");
    tb.push_str("    reg [2:0] ra;\n    reg re;\n    reg en;\n");
    tb.push_str("    wire [4:0] q_out;\n    wire [4:0] r_out;\n");
    let _ = writeln!(
        tb,
        "    {} dut (.clk(clk), .rst_n(rst_n), .wa(wa), .wd(wd), .we(we), .ra(ra), .re(re), .en(en), .q_out(q_out), .r_out(r_out));",
        design.top
    );
    tb.push_str("    initial begin\n");
    for c in &cycles {
        let _ = writeln!(
            tb,
            "        rst_n = {}; wa = {}; wd = {}; we = {}; ra = {}; re = {}; en = {};",
            c[0], c[1], c[2], c[3], c[4], c[5], c[6]
        );
        tb.push_str("        #1 clk = 1'b1;\n        #1 $display(\"R %h %h\", q_out, r_out);\n        clk = 1'b0;\n        #1;\n");
    }
    tb.push_str("        $finish;\n    end\nendmodule\n");
    let tb_path = dir.path().join("tb.v");
    std::fs::write(&tb_path, tb).expect("write tb");
    let mut sources = files_in(dir.path(), &design);
    sources.push(tb_path);
    let out = gen::toolchain::iverilog_run(&sources, "tb").unwrap_or_else(|e| panic!("{e}"));
    let got = parse_rows(&out, 2);
    let want = seq_model(&cycles);
    let inputs: Vec<Vec<u128>> = cycles.iter().map(|c| c.to_vec()).collect();
    compare(&["q_out".into(), "r_out".into()], &inputs, &want, &got);
}
